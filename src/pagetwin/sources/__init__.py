"""Sources: turn inputs (WARC/ARC files, folders, HTML files, JSON Lines, Parquet) into Pages.

``readable_inputs`` expands the inputs as given: a glob pattern that is not an existing path
becomes the sorted paths it matches, a manifest (``*.paths``, ``*.paths.gz``, ``*.txt``, as
Common Crawl's ``warc.paths.gz``) the paths it lists. A folder is walked recursively and each
WARC, ARC, JSONL, Parquet and HTML file in it (HTML also gzipped, ``*.html.gz``) is read by its
reader (sources.files.walk_inputs).

``iter_pages`` streams the pages of all inputs and accounts for every record it sees in a
SourceStats: each record is either yielded (a page, a revisit or, when wanted, an image) or
skipped with a reason, so ``records_total == pages_read + images + sum(skipped.values())``.
Bad data never raises out of ``iter_pages``; problems with whole files go to ``stats.errors``.
``check_inputs`` is the pre-check for paths that do not exist or cannot be read.
"""

from __future__ import annotations

import glob
import gzip
import os
import re
import zlib
from collections.abc import Iterator

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import InputError, Skip, SourceStats

__all__ = [
    "InputError", "SourceStats", "Skip", "check_inputs", "expand_inputs", "input_kind", "is_uri", "iter_pages",
    "no_pages_message", "readable_inputs"
]  # fmt: skip

# The names of input files, by kind: the one list, for files given directly (input_kind) and
# for the files found in a folder (files.folder_kind).
WARC_SUFFIXES = (".warc", ".warc.gz", ".warc.zst")
ARC_SUFFIXES = (".arc", ".arc.gz")
ARCHIVE_SUFFIXES = WARC_SUFFIXES + ARC_SUFFIXES  # (in a folder the content tells them apart)
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")
# Saved pages are often gzipped one by one (extraction datasets, `wget --compression`): read as HTML.
HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".html.gz", ".htm.gz", ".xhtml.gz")
PARQUET_SUFFIXES = (".parquet",)
_MANIFEST_NAMES = (".paths", ".paths.gz", ".txt")
_GLOB_CHARS = re.compile(r"[*?\[]")
_REMOTE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
# An input given as a URI (file:, hdfs:, s3a:, ...), which the Spark runner reads through
# Spark's Hadoop file systems (runners.spark.uri_inputs). Two letters at least before the
# colon: a drive letter (C:) starts a Windows path.
_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+:")


def is_uri(path: str) -> bool:
    return bool(_URI.match(path))


def input_files(path: str) -> Iterator[str]:
    """The files of one input as given: the path itself, or a folder's files (walked with its
    sub-folders and names sorted). What a run's inputs weigh and whether they changed, not what
    is read (folder_records decides that)."""
    if os.path.isdir(path):
        for root, dirs, names in os.walk(path):
            dirs.sort()
            yield from (os.path.join(root, n) for n in sorted(names))
    else:
        yield path


def is_manifest(path: str) -> bool:
    """Whether a file given directly is a list of paths: named ``*.paths``, ``*.paths.gz`` or
    ``*.txt`` (a ``.txt`` that is a WARC or ARC by its content is read as one)."""
    if not path.lower().endswith(_MANIFEST_NAMES) or not os.path.isfile(path):
        return False
    if path.lower().endswith(".txt"):
        from pagetwin.sources.warc import sniff_archive

        try:
            return sniff_archive(path) is None
        except OSError:
            return False
    return True


def _manifest_paths(manifest: str) -> tuple[list[tuple[str, str]], list[str]]:
    """([(path, where it is listed), ...], problems) of a manifest: one path a line, gzipped or
    not; relative paths are relative to the manifest's folder; blank lines and ``#`` comments
    are skipped; remote paths (``s3://``, ``http://``) are problems, not paths."""
    base = os.path.dirname(manifest)
    paths, problems = [], []
    try:
        with open(manifest, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        with gzip.open(manifest, "rb") if gz else open(manifest, "rb") as fh:
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except (OSError, EOFError, zlib.error) as exc:
        return [], [f"{manifest}: cannot be read as a list of paths ({getattr(exc, 'strerror', None) or exc})"]
    for lineno, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{manifest}:{lineno}"
        if _REMOTE.match(line):
            problems.append(f"{line}: remote paths are not supported by the local runner (listed in {where})")
            continue
        paths.append((line if os.path.isabs(line) else os.path.join(base, line), f"listed in {where}"))
    if not paths and not problems:
        problems.append(f"{manifest}: lists no paths")
    return paths, problems


def expand_inputs(inputs: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """([(path, "listed in MANIFEST:LINE" or ""), ...], problems): glob patterns
    that are not existing paths expanded (recursive ``**``, sorted), manifests replaced by the
    paths they list. A pattern matching nothing is a problem, as a missing file is."""
    out: list[tuple[str, str]] = []
    problems: list[str] = []
    for path in inputs:
        if not os.path.lexists(path) and _GLOB_CHARS.search(path):
            matches = sorted(glob.glob(path, recursive=True))
            if not matches:
                problems.append(f"{path}: no such file or directory (no path matches the pattern)")
        else:
            matches = [path]
        for one in matches:
            if is_manifest(one):
                listed, trouble = _manifest_paths(one)
                out.extend(listed)
                problems.extend(trouble)
            else:
                out.append((one, ""))
    return out, problems


def check_inputs(inputs: list[str]) -> list[str]:
    """One-line messages for inputs that are missing or unreadable (empty when all are fine).
    Each message starts with the path as given."""
    problems = []
    for path in inputs:
        if not os.path.exists(path):
            problems.append(f"{path}: no such file or directory")
        elif os.path.isdir(path):
            if not os.access(path, os.R_OK | os.X_OK):
                problems.append(f"{path}: directory cannot be read (permission denied)")
        elif not os.path.isfile(path):
            problems.append(f"{path}: not a regular file")
        elif not os.access(path, os.R_OK):
            problems.append(f"{path}: cannot be read (permission denied)")
        else:
            try:
                with open(path, "rb") as fh:
                    fh.read(1)
            except OSError as exc:
                problems.append(f"{path}: cannot be read ({exc.strerror or exc})")
    return problems


def readable_inputs(inputs: list[str]) -> tuple[list[str], list[str]]:
    """(the inputs that can be read, globs and manifests expanded (expand_inputs); one-line
    messages for those that cannot). Raises InputError, naming every problem, when none can be
    read."""
    expanded, problems = expand_inputs(inputs)
    readable = []
    for path, origin in expanded:
        found = check_inputs([path])
        problems.extend(f"{p} ({origin})" if origin else p for p in found)
        if not found:
            readable.append(path)
    if not readable:
        raise InputError("; ".join(problems) or "no input given", problems)
    return readable, problems


def input_kind(path: str) -> str | None:
    """"folder", "html", "jsonl", "parquet", "warc", "arc", or None when the format is not
    recognised. WARC and ARC are told apart by content; the name decides only for the other
    kinds (Parquet: also by its magic bytes)."""
    from pagetwin.sources.parquet import has_parquet_magic
    from pagetwin.sources.warc import sniff_archive

    if os.path.isdir(path):
        return "folder"
    low = path.lower()
    if low.endswith(PARQUET_SUFFIXES) or has_parquet_magic(path):
        return "parquet"
    if low.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if low.endswith(HTML_SUFFIXES):
        return "html"
    sniffed = sniff_archive(path)
    if sniffed:
        return sniffed
    if low.endswith(WARC_SUFFIXES):
        return "warc"  # damaged start: the WARC reader looks for the first readable record
    if low.endswith(ARC_SUFFIXES):
        return "arc"
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"{"):
        return "jsonl"
    from pagetwin.html.parse import looks_like_html

    if looks_like_html(head):
        return "html"
    return None


def _records(path: str, settings: InputSettings, stats: SourceStats, want_images: bool) -> Iterator[Page | Skip]:
    """The records of one input file (not a folder), by its kind."""
    from pagetwin.sources import files, jsonl, parquet, warc

    kind = input_kind(path)
    if kind == "html":
        return files.iter_html_file(path, settings, stats)
    if kind == "jsonl":
        return jsonl.iter_jsonl(path, settings, stats)
    if kind == "warc":
        return warc.iter_warc(path, settings, stats, want_images)
    if kind == "arc":
        return warc.iter_arc(path, settings, stats, want_images)
    if kind == "parquet":
        return parquet.iter_parquet(path, settings, stats)
    stats.error(f"{path}: not a WARC, ARC, JSONL, Parquet or HTML file")
    return iter(())


def _counted(
    path: str, records: Iterator[Page | Skip], stats: SourceStats, want_images: bool
) -> Iterator[Page]:
    """The pages of ``records`` (one file's), every record counted in ``stats``; an exception
    stops this file only."""
    try:
        for item in records:
            if isinstance(item, Skip):
                stats.skip(item.reason, "", item.detail)
            elif item.kind == "image" and not want_images:
                stats.skip("not-html", "", f"{item.url} image")
            else:
                stats.count_page(item)
                yield item
    except Exception as exc:  # noqa: BLE001 - the last guard: bad data must not stop the run
        msg = " ".join(str(exc).split())[:200]
        stats.error(f"{path}: reading stopped ({type(exc).__name__}: {msg})")


def folder_records(
    folder: str, settings: InputSettings, stats: SourceStats, want_images: bool
) -> Iterator[tuple[str, Iterator[Page | Skip]]]:
    """(file path, its records) for every input file of ``folder``, in walk order
    (files.walk_inputs). HTML files: id relative to the folder, the folder as their site
    without host evidence; the other files are read as if given directly."""
    from pagetwin.sources import files

    site = files.folder_site(folder)
    for path, rel, kind in files.walk_inputs(folder, stats):
        if kind == "html":
            yield path, files.iter_folder_html(path, rel, settings, stats, site)
        else:
            yield path, _lazy_records(path, settings, stats, want_images)


def _lazy_records(path: str, settings: InputSettings, stats: SourceStats, want_images: bool) -> Iterator[Page | Skip]:
    """_records, opened only when iterated (so an error opening it is caught by _counted)."""
    yield from _records(path, settings, stats, want_images)


def iter_pages(
    inputs: list[str], settings: InputSettings, stats: SourceStats, want_images: bool = False
) -> Iterator[Page]:
    """The pages of all ``inputs`` (paths: readable_inputs expands globs and manifests), in
    order, streamed. Folders are walked (folder_records). Every record seen is counted in
    ``stats``; images are yielded (kind "image") only when ``want_images``."""
    for path in inputs:
        if not os.path.exists(path):
            stats.error(f"{path}: no such file or directory")
            continue
        if os.path.isdir(path):
            for file_path, records in folder_records(path, settings, stats, want_images):
                yield from _counted(file_path, records, stats, want_images)
        else:
            yield from _counted(path, _lazy_records(path, settings, stats, want_images), stats, want_images)


def no_pages_message(stats: SourceStats) -> str:
    """What a run that found no pages tells the user; when folders held files of no input kind,
    how many, a few of their names, and the names that are read."""
    if not stats.files_ignored:
        return "no pages in the inputs"
    names = ", ".join(list(stats.ignored_examples)[:3])
    read = " ".join(HTML_SUFFIXES + ARCHIVE_SUFFIXES + JSONL_SUFFIXES + PARQUET_SUFFIXES)
    return f"no pages in the inputs: {stats.files_ignored} files in the folders given are not inputs (e.g. {names}); the files read are {read}"
