"""Tests mirror src/ (issue 12, item 7): every module src/pagetwin/P/X.py has tests/P/test_X.py."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "pagetwin"
TESTS = ROOT / "tests"


def missing_test_modules(src: Path = SRC, tests: Path = TESTS) -> list[str]:
    """The source modules (relative paths) without a test module at the mirrored path."""
    missing = []
    for module in sorted(src.rglob("*.py")):
        if module.name in ("__init__.py", "__main__.py"):
            continue
        rel = module.relative_to(src)
        if not (tests / rel.parent / f"test_{rel.name}").is_file():
            missing.append(rel.as_posix())
    return missing


def test_every_source_module_has_a_mirrored_test_module():
    missing = missing_test_modules()
    assert missing == [], f"source modules without tests/<package>/test_<module>.py: {missing}"


def test_the_check_sees_a_missing_module(tmp_path):
    """The check itself can fail: a module without its test module is reported."""
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "tests" / "pkg").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py", "a.py", "b.py"):
        (tmp_path / "src" / "pkg" / name).write_text("")
    (tmp_path / "src" / "top.py").write_text("")
    (tmp_path / "tests" / "pkg" / "test_a.py").write_text("")
    (tmp_path / "tests" / "test_b.py").write_text("")  # not at the mirrored path
    assert missing_test_modules(tmp_path / "src", tmp_path / "tests") == ["pkg/b.py", "top.py"]
