"""The shape rules of issue 12, checked on the source tree so they stay true.

- no function over MAX_LINES lines, except a hot kernel whose docstring says why it is one piece
  (the phrase "one piece") and names its benchmark (``bench/``);
- no module of ``runners/`` imports another runner;
- no module-level mutable container (a cache or registry filled at run time) outside an object
  that owns it, except the few listed in ALLOWED_MODULE_STATE with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "pagetwin"
MAX_LINES = 80
ALLOWED_MODULE_STATE: dict[str, str] = {
    # "module.py:NAME": "why it cannot belong to an object",
}
MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "WeakValueDictionary"}


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "egg-info" not in p.parts)


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _functions(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def test_no_long_functions_without_a_reason():
    long = []
    for path in _modules():
        for fn in _functions(_tree(path)):
            lines = fn.end_lineno - fn.lineno + 1
            doc = ast.get_docstring(fn) or ""
            if lines > MAX_LINES and not ("one piece" in doc and "bench/" in doc):
                long.append(f"{path.relative_to(SRC)}:{fn.lineno} {fn.name} ({lines} lines)")
    assert not long, "functions over 80 lines (split them, or say in the docstring why a hot kernel is one piece, with its bench/ benchmark):\n" + "\n".join(long)


def _imported_modules(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_runner_imports_another():
    runners = {p.stem for p in (SRC / "runners").glob("*.py") if p.stem != "__init__"}
    # Helper files, not runners, and the runners that use them.
    helpers = {"spill": {"local", "spark"}, "spark_learn": {"spark"}, "spark_ranges": {"spark"}, "spark_output": {"spark_link"}}
    engines = runners - set(helpers)
    crossing = []
    for path in (SRC / "runners").glob("*.py"):
        imported = _imported_modules(_tree(path))
        for other in engines - {path.stem}:
            if f"pagetwin.runners.{other}" in imported:
                crossing.append(f"runners/{path.name} imports runners.{other}")
        for helper, users in helpers.items():
            if path.stem not in {helper, *users} and f"pagetwin.runners.{helper}" in imported:
                crossing.append(f"runners/{path.name} imports runners.{helper}, a helper of {sorted(users)}")
    assert not crossing, "\n".join(crossing)


def _is_mutable_container(value: ast.expr) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set)):
        # Empty containers at module level are caches or registries filled at run time.
        return not (value.elts if not isinstance(value, ast.Dict) else value.keys)
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in MUTABLE_CALLS
    return False


def test_no_hidden_module_state():
    found = []
    for path in _modules():
        for node in _tree(path).body:
            targets: list[ast.expr] = []
            value = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            if value is None or not _is_mutable_container(value):
                continue
            for target in targets:
                if isinstance(target, ast.Name):
                    key = f"{path.relative_to(SRC)}:{target.id}"
                    if key not in ALLOWED_MODULE_STATE:
                        found.append(key)
    assert not found, "module-level mutable state (give it an owner object):\n" + "\n".join(found)


@pytest.mark.parametrize("rule", [MAX_LINES])
def test_the_rules_can_fail(tmp_path, rule):
    """The checks above find what they look for (a check that cannot fail proves nothing)."""
    body = "\n".join(f"    x{i} = {i}" for i in range(rule + 1))
    tree = ast.parse(f"def f():\n{body}\n_CACHE = {{}}\n")
    fn = next(_functions(tree))
    assert fn.end_lineno - fn.lineno + 1 > rule
    assert _is_mutable_container(tree.body[-1].value)
    assert not _is_mutable_container(ast.parse("_T = {'a': 1}").body[0].value)
