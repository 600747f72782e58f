"""The output folder of ``pagetwin dedup``: checks made before any work (the folder, the index,
--survivors, --parquet's pyarrow), the earlier run's files (refused unless added to or
replaced), and atomic writes (a temporary file in the same folder renamed into place, so an
interrupted run leaves the old file or none, never a part of one)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from pagetwin.config import ConfigError

MODES = ("new", "add", "replace")
# What a run writes into --out (index.sqlite: the default --index).
OUTPUT_NAMES = ("clusters.jsonl", "pairs.jsonl", "summary.json", "clusters.parquet", "pairs.parquet", "index.sqlite")
_INDEX_SIDE_FILES = ("-journal", "-wal", "-shm")
_TMP_PREFIX = ".pagetwin-"


class OutputError(ConfigError):
    """An output target that cannot be used (bad usage: the CLI exits 2). One line."""


def default_index(out_dir: str | Path) -> Path:
    return Path(out_dir) / "index.sqlite"


def index_in_out(out_dir: str | Path, index_path: str | Path | None) -> bool:
    """Whether the index is --out's own (the default, or given as DIR/index.sqlite)."""
    if index_path is None:
        return True
    return os.path.abspath(index_path) == os.path.abspath(default_index(out_dir))


def earlier_outputs(out_dir: str | Path) -> list[str]:
    """The names of an earlier run's files in ``out_dir``."""
    out = Path(out_dir)
    return [name for name in OUTPUT_NAMES if (out / name).exists()] if out.is_dir() else []


def _unfinished_run(index_file: Path) -> int | None:
    """The pages an interrupted run stored in the index at ``index_file`` (its checkpoint), or
    None when there is none or it cannot be read (the refusal then names the outputs only)."""
    if not index_file.is_file():
        return None
    import sqlite3

    from pagetwin.index.sqlite import Index, IndexError_

    # A refused run must leave --out as it was: without a WAL file (the last writer closed the
    # index) the file is read as immutable, so SQLite creates no -wal/-shm beside it.
    has_wal = index_file.with_name(index_file.name + "-wal").exists()
    try:
        index = Index.open_readonly(index_file, immutable=not has_wal)
        checkpoint = index.checkpoint()
    except (IndexError_, sqlite3.DatabaseError):
        return None
    try:
        return checkpoint.pages if checkpoint is not None else None
    finally:
        index.db.close()


def _writable_folder(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried: os.access says yes to root)."""
    try:
        fd, name = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=".check", dir=folder)
    except OSError:
        return False
    os.close(fd)
    os.unlink(name)
    return True


def _check_creatable_folder(folder: Path, what: str) -> None:
    """``folder`` is, or can be created as, a writable folder."""
    if folder.exists():
        if not folder.is_dir():
            raise OutputError(f"{what} {folder} is a file, not a folder")
        if not _writable_folder(folder):
            raise OutputError(f"{what} {folder} is not writable")
        return
    parent = folder.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{what} {folder} cannot be created: {parent} is a file, not a folder")
    if not _writable_folder(parent):
        raise OutputError(f"{what} {folder} cannot be created: {parent} is not writable")


def _check_file_target(path: Path, what: str, create_folder: bool) -> None:
    if path.is_dir():
        raise OutputError(f"{what} {path} is a folder, not a file")
    folder = path.parent
    if not create_folder and not folder.is_dir():
        raise OutputError(f"{what} {path}: folder {folder} does not exist")
    if folder.is_dir() and not _writable_folder(folder):
        raise OutputError(f"{what} {path}: folder {folder} is not writable")
    if not folder.exists():
        _check_creatable_folder(folder, what + " folder")


def check_outputs(
    out_dir: str | Path,
    index_path: str | Path | None = None,
    survivors: str | Path | None = None,
    parquet: bool = False,
    mode: str = "new",
    dedup_warc: str | Path | None = None,
    documents: str | Path | None = None,
) -> None:
    """Every output target and optional dependency of a dedup run, before any work.
    Raises OutputError (one line) for the first that cannot be used. ``dedup_warc``: the
    dedup'd WARC's path (outputs.dedupwarc); ``documents``: the kept documents' path
    (outputs.dataset; a ``.parquet`` name needs pyarrow)."""
    if mode not in MODES:
        raise OutputError(f"unknown output mode {mode!r} (choose from {', '.join(MODES)})")
    out = Path(out_dir)
    _check_creatable_folder(out, "--out")
    found = earlier_outputs(out)
    if found and mode == "new":
        unfinished = _unfinished_run(out / "index.sqlite")
        if unfinished is not None:
            raise OutputError(
                f"--out {out} holds an unfinished run ({unfinished} pages stored): pass --add to resume it "
                "(same inputs and settings) or --replace to start again"
            )
        raise OutputError(
            f"--out {out} holds the outputs of an earlier run ({', '.join(found)}): pass --add to add "
            "this run to its index, or --replace to delete them first"
        )
    if index_path is not None and not index_in_out(out, index_path):
        _check_file_target(Path(index_path), "--index", create_folder=True)
    if survivors:
        _check_file_target(Path(survivors), "--survivors", create_folder=False)
    named = [(what, os.path.abspath(p)) for what, p in (("--survivors", survivors), ("--dedup-warc", dedup_warc), ("--documents", documents)) if p]
    for i, (what, path) in enumerate(named):
        for other, other_path in named[i + 1 :]:
            if path == other_path:
                raise OutputError(f"{what} and {other} name the same file {path}: give each its own")
    if dedup_warc:
        _check_file_target(Path(dedup_warc), "--dedup-warc", create_folder=False)
    if documents:
        from pagetwin.outputs.dataset import check_documents_target

        check_documents_target(documents)
    if parquet:
        try:
            import pyarrow  # noqa: F401
            import pyarrow.parquet  # noqa: F401
        except ImportError:
            raise OutputError("--parquet needs pyarrow, which is not installed: pip install 'pagetwin[parquet]'") from None


def clear_outputs(out_dir: str | Path, index_path: str | Path | None = None) -> list[str]:
    """Delete an earlier run's files in ``out_dir`` (its index too when it is --out's own;
    an index elsewhere is left alone). Returns the names deleted."""
    out = Path(out_dir)
    removed = []
    own_index = index_in_out(out, index_path)
    for name in earlier_outputs(out):
        if name == "index.sqlite" and not own_index:
            continue
        (out / name).unlink()
        removed.append(name)
    if own_index:
        for suffix in _INDEX_SIDE_FILES:
            side = out / f"index.sqlite{suffix}"
            if side.exists():
                side.unlink()
    return removed


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path in ``path``'s folder to write; renamed to ``path`` when the block ends
    without an exception, deleted otherwise."""
    path = Path(path)
    fd, name = tempfile.mkstemp(prefix=f"{_TMP_PREFIX}{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; an output file gets the usual mode
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """``open(path, mode)``, written to a temporary file in the same folder and renamed into
    place (os.replace) once complete and flushed to disk: ``path`` is the old file or the
    whole new one, never a part."""
    with atomic_path(path) as tmp:
        with open(tmp, mode, encoding=None if "b" in mode else encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
