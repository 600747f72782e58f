"""Large WARC files split into byte ranges that separate tasks read, every record by exactly one.

A range [start, end) of a file is read from the first record boundary at or after ``start``
up to the last record that starts before the first boundary at or after ``end``: the next
range's first. Both ask the same question (``boundary``), so two neighbouring ranges meet at
one offset and a record straddling a split point is read whole by the range it starts in.
The first range starts at byte 0 whatever is there, as the whole file's reader does (damage
before the first record is counted once).

Boundaries:

- a gzipped WARC (.warc.gz, one gzip member per record as the standard recommends): a member
  header (1f 8b 08) whose data inflates to a WARC version line. A match inside a member's
  compressed bytes is not one: its bytes do not inflate, or not to "WARC/";
- a plain WARC: a "WARC/1.x" line that begins a header that parses, whose Content-Length ends
  at the "\\r\\n\\r\\n" that ends a record, followed by another record or the end of the file.
  A record quoting a WARC header in its payload fails that unless it quotes a whole record
  (a WARC file archived inside a WARC): such files are read whole (``split_bytes`` = 0).

zstd WARCs (one frame per file as written today) and ARC files are not split: one range.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from typing import BinaryIO

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import Skip, SourceStats

SPLIT_BYTES = 128 << 20  # a range's size by default (a Hadoop block's)
_GZIP_START = re.compile(rb"\x1f\x8b\x08")
_RECORD_START = re.compile(rb"WARC/[0-2]\.\d{1,4}\r?\n")
_SCAN = 1 << 20
_PROBE = 1 << 16  # compressed bytes inflated to tell a member header from a chance match


HEAD_BYTES = _PROBE  # what archive_format reads of a file: its first bytes


def archive_format(path: str, opener: Callable[[], BinaryIO] | None = None) -> str | None:
    """"gzip" or "plain" for a WARC file that can be split (by its first bytes), else None
    (a gzipped ARC file starts as a gzipped WARC does: its first member tells them apart).
    ``opener``: opens the file (default: ``path`` on the local disk)."""
    with (opener or partial(open, path, "rb"))() as fh:
        return head_format(fh.read(HEAD_BYTES))


def head_format(head: bytes) -> str | None:
    """archive_format from a file's first HEAD_BYTES bytes (all of it when shorter)."""
    if head[:3] == b"\x1f\x8b\x08":
        return "gzip" if _inflates_to_record(head) else None
    if _RECORD_START.match(head[:16].lstrip(b"\r\n")):
        return "plain"
    return None


def ranges(size: int, split_bytes: int) -> list[tuple[int, int]]:
    """[start, end) ranges of about ``split_bytes`` covering a file of ``size`` bytes (one
    range when ``split_bytes`` is 0 or the file is no larger)."""
    if split_bytes <= 0 or size <= split_bytes:
        return [(0, size)]
    return [(at, min(at + split_bytes, size)) for at in range(0, size, split_bytes)]


def file_ranges(path: str, split_bytes: int = SPLIT_BYTES) -> list[tuple[int, int]]:
    """The ranges of one input file: several for a large gzip or plain WARC, else one."""
    size = os.path.getsize(path)
    if split_bytes <= 0 or size <= split_bytes or archive_format(path) is None:
        return [(0, size)]
    return ranges(size, split_bytes)


def _is_member(fh, at: int) -> bool:
    fh.seek(at)
    return _inflates_to_record(fh.read(_PROBE))


def _inflates_to_record(raw: bytes) -> bool:
    """Whether gzip data (a member's first bytes) inflates to a WARC version line."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(raw, 64)
    except zlib.error:
        return False
    return _RECORD_START.match(out.lstrip(b"\r\n")) is not None


def _is_record(fh, at: int, size: int) -> bool:
    fh.seek(at)
    head = fh.read(32 << 10)
    end = head.find(b"\r\n\r\n")
    if not _RECORD_START.match(head) or end < 0:
        return False
    length = None
    for line in head[:end].split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        if not colon:
            return False
        if name.strip().lower() == b"content-length":
            value = value.strip()
            length = int(value) if value.isdigit() else None
    if length is None:
        return False
    block_end = at + end + 4 + length
    fh.seek(block_end)
    tail = fh.read(4 + 16)
    return tail[:4] == b"\r\n\r\n" and (block_end + 4 >= size or _RECORD_START.match(tail[4:].lstrip(b"\r\n")) is not None)


def boundary(fh, offset: int, size: int, kind: str) -> int | None:
    """The first record boundary at or after ``offset`` of an open WARC file (``kind``:
    "gzip" or "plain"); None when there is none before its end."""
    pattern = _GZIP_START if kind == "gzip" else _RECORD_START
    at, step = offset, _PROBE  # the steps grow to _SCAN: a near boundary (the usual) reads little
    while at < size:
        fh.seek(at)
        data = fh.read(step + 32)
        if not data:
            return None
        for m in pattern.finditer(data, 0, step):
            hit = at + m.start()
            if kind == "gzip" and _is_member(fh, hit) or kind == "plain" and _is_record(fh, hit, size):
                return hit
        at, step = at + step, min(2 * step, _SCAN)
    return None


def iter_range(
    path: str, start: int, end: int, settings: InputSettings, stats: SourceStats, want_images: bool = False,
    opener: Callable[[], BinaryIO] | None = None, size: int | None = None,
) -> Iterator[Page | Skip]:  # fmt: skip
    """The records of one range of a WARC file (module docstring): as Pages and Skips,
    what sources.warc.iter_warc yields for them. ``opener`` and ``size``: how to open the file
    and its length, when it is not ``path`` on the local disk (a URI's bytes streamed by
    Spark: runners.spark_ranges); the pages and messages name ``path``."""
    from pagetwin.sources.warc import iter_warc_span

    size = os.path.getsize(path) if size is None else size
    kind = archive_format(path, opener) if (start, end) != (0, size) else None
    if kind is None:  # the whole file, or one that is never split: read by its first range
        if start == 0:
            yield from iter_warc_span(path, 0, size, settings, stats, want_images, opener=opener, size=size)
        return
    with (opener or partial(open, path, "rb"))() as fh:
        first = 0 if start == 0 else boundary(fh, start, size, kind)
        stop = boundary(fh, end, size, kind) if end < size else size
    if first is None or stop is not None and first >= stop:
        return
    stop = size if stop is None else stop
    # Only the first range says a file holds no record at all, and only when none follows it.
    yield from iter_warc_span(path, first, stop, settings, stats, want_images, report_empty=start == 0 and stop == size,
                              opener=opener, size=size)  # fmt: skip


def range_pages(
    path: str, start: int, end: int, settings: InputSettings, stats: SourceStats, want_images: bool = False,
    opener: Callable[[], BinaryIO] | None = None, size: int | None = None,
) -> Iterator[Page]:  # fmt: skip
    """The pages of one range, every record counted in ``stats`` as sources.iter_pages counts
    a whole file's: the ranges of a file together count what one read of it counts."""
    from pagetwin.sources import _counted

    records = iter_range(path, start, end, settings, stats, want_images, opener, size)
    yield from _counted(path, records, stats, want_images)
