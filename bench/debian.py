"""Debian documentation packages as real multi-page websites.

`ensure_debian_docs(["llvm-15-doc", "llvm-16-doc"])` downloads each package with
`apt-get download` and unpacks it with `dpkg -x` into bench/data/debs/<pkg>/ on first use,
then returns the package's HTML root (the `usr/share/doc/*/html` folder inside it).
Nothing here is copied into the repository: bench/data/ is gitignored.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DEBS_DIR = REPO_ROOT / "bench" / "data" / "debs"


class DataMissing(RuntimeError):
    """Benchmark data is not available here (no shared data folder, no apt-get, no network)."""


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    except FileNotFoundError as exc:
        raise DataMissing(f"{cmd[0]} is not installed: cannot fetch Debian packages") from exc
    except subprocess.TimeoutExpired as exc:
        raise DataMissing(f"{' '.join(cmd)} timed out") from exc


def _download(pkg: str, workdir: Path) -> Path:
    result = _run(["apt-get", "download", pkg], workdir)
    if result.returncode != 0:
        # Package lists may be missing or stale on a fresh machine: refresh once and retry.
        _run(["apt-get", "update"], workdir)
        result = _run(["apt-get", "download", pkg], workdir)
    debs = sorted(workdir.glob(f"{pkg}_*.deb"))
    if result.returncode != 0 or not debs:
        message = (result.stderr or result.stdout).strip().splitlines()
        raise DataMissing(f"apt-get download {pkg} failed: {message[-1] if message else 'no .deb'}")
    return debs[-1]


def _html_root(unpacked: Path) -> Path:
    """The documentation's HTML folder: descend from the package root while a single
    subfolder holds every .html/.htm file (usr/share/doc/<name>/html, usr/share/gimp/.../en)."""
    def holds_html(folder: Path) -> bool:
        return any(p.suffix.lower() in (".html", ".htm") for p in folder.rglob("*"))

    current = unpacked
    if not holds_html(current):
        raise DataMissing(f"no HTML files in {unpacked}")
    while not any(p.suffix.lower() in (".html", ".htm") for p in current.iterdir() if p.is_file()):
        children = [c for c in current.iterdir() if c.is_dir() and not c.is_symlink() and holds_html(c)]
        if len(children) != 1:
            break
        current = children[0]
    return current


def ensure_debian_docs(packages: list[str] | tuple[str, ...]) -> dict[str, Path]:
    """Return {package: its HTML root folder}, downloading and unpacking what is missing.

    Safe to call from several processes at once (a lock file serialises the unpacking; each
    package is unpacked into a temporary folder and renamed into place when complete).
    """
    DEBS_DIR.mkdir(parents=True, exist_ok=True)
    roots: dict[str, Path] = {}
    for pkg in packages:
        target = DEBS_DIR / pkg
        if not target.is_dir():
            with open(DEBS_DIR / f".{pkg}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not target.is_dir():
                    with tempfile.TemporaryDirectory(dir=DEBS_DIR, prefix=f".{pkg}-") as tmp:
                        tmp_path = Path(tmp)
                        deb = _download(pkg, tmp_path)
                        unpacked = tmp_path / "root"
                        result = _run(["dpkg", "-x", str(deb), str(unpacked)], tmp_path)
                        if result.returncode != 0:
                            raise DataMissing(f"dpkg -x {deb.name} failed: {result.stderr.strip()}")
                        shutil.move(str(unpacked), str(target))
        roots[pkg] = _html_root(target)
    return roots


def html_files(root: Path) -> dict[str, Path]:
    """{relative path: file} for every .html/.htm file under root, sorted by relative path.

    Symlinks to files inside the tree are kept (Debian links shared pages); broken ones are not.
    """
    found = {}
    for path in root.rglob("*"):
        if path.suffix.lower() in (".html", ".htm") and path.is_file():
            found[path.relative_to(root).as_posix()] = path
    return dict(sorted(found.items()))
