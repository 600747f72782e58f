"""Sources: turn inputs (WARC/ARC files, folders of HTML, HTML files, JSON Lines) into Pages.

``iter_pages`` streams the pages of all inputs and accounts for every record it sees in a
SourceStats: each record is either yielded (a page, a revisit or, when wanted, an image) or
skipped with a reason, so ``records_total == pages_read + images + sum(skipped.values())``.
Bad data never raises out of ``iter_pages``; problems with whole files go to ``stats.errors``.
``check_inputs`` is the pre-check for paths that do not exist or cannot be read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import InputError, Skip, SourceStats

__all__ = ["InputError", "SourceStats", "Skip", "check_inputs", "input_kind", "iter_pages"]

_WARC_NAMES = (".warc", ".warc.gz", ".warc.zst")
_ARC_NAMES = (".arc", ".arc.gz")
_JSONL_NAMES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")
_HTML_NAMES = (".html", ".htm", ".xhtml")


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
    """(the inputs that can be read, one-line messages for those that cannot).
    Raises InputError, naming every problem, when none can be read."""
    readable, problems = [], []
    for path in inputs:
        found = check_inputs([path])
        problems.extend(found)
        if not found:
            readable.append(path)
    if not readable:
        raise InputError("; ".join(problems) or "no input given")
    return readable, problems


def input_kind(path: str) -> str | None:
    """"folder", "html", "jsonl", "warc", "arc", or None when the format is not recognised.
    WARC and ARC are told apart by content; the name decides only for the other kinds."""
    from pagetwin.sources.warc import sniff_archive

    if os.path.isdir(path):
        return "folder"
    low = path.lower()
    if low.endswith(_JSONL_NAMES):
        return "jsonl"
    if low.endswith(_HTML_NAMES):
        return "html"
    sniffed = sniff_archive(path)
    if sniffed:
        return sniffed
    if low.endswith(_WARC_NAMES):
        return "warc"  # damaged start: the WARC reader looks for the first readable record
    if low.endswith(_ARC_NAMES):
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
    from pagetwin.sources import files, jsonl, warc

    kind = input_kind(path)
    if kind == "folder":
        return files.iter_folder(path, settings, stats)
    if kind == "html":
        return files.iter_html_file(path, settings, stats)
    if kind == "jsonl":
        return jsonl.iter_jsonl(path, settings, stats)
    if kind == "warc":
        return warc.iter_warc(path, settings, stats, want_images)
    if kind == "arc":
        return warc.iter_arc(path, settings, stats, want_images)
    stats.error(f"{path}: not a WARC, ARC, JSONL or HTML file")
    return iter(())


def iter_pages(
    inputs: list[str], settings: InputSettings, stats: SourceStats, want_images: bool = False
) -> Iterator[Page]:
    """The pages of all ``inputs``, in order, streamed. Every record seen is counted in
    ``stats``; images are yielded (kind "image") only when ``want_images``."""
    for path in inputs:
        if not os.path.exists(path):
            stats.error(f"{path}: no such file or directory")
            continue
        try:
            for item in _records(path, settings, stats, want_images):
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
