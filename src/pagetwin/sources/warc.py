"""WARC and ARC readers.

Each reader yields, for every record it sees, either a Page or a Skip (with the reason), so
the caller can account for every record. Bad data never raises: a record that cannot be read
is skipped with a reason, and reading resumes at the next record that can be found (the next
gzip member, or the next "WARC/" header; for ARC, the next valid ARC record line, or the next
gzip member after a corrupt one).

WARC records are framed here: the header is parsed, and the block ends where Content-Length
says when the "\\r\\n\\r\\n" that ends a record follows there; otherwise the length is wrong
and the block ends at the next record found after the header (a length that runs past the
end of the file with no record after it is a clipped record). A gzip member is decompressed
whole when small (the usual one record per member, or a small file gzipped as one stream)
and framed the same way; a larger member is streamed through fastwarc. Reading is linear in
the input whatever it holds: record starts are looked for by one forward scan of the file
(``_Starts``), a header that fails is looked past from the line where it failed, and a block
is read once.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import BinaryIO

from fastwarc.warc import ArchiveIterator

try:  # ISA-L's inflate: twice zlib's speed on the gzip members of a WARC (see _Member)
    from isal.isal_zlib import decompressobj as _isal_decompressobj
    from isal.isal_zlib import error as _IsalError
except ImportError:  # not installed: zlib reads every member
    _isal_decompressobj, _IsalError = None, zlib.error

try:  # the usual record's head in one native call (see _quick_record)
    from pagetwin.sources._warc import HTTP_READ
    from pagetwin.sources._warc import record_at as _record_at
except ImportError:  # not built: the Python path reads every record
    _record_at, HTTP_READ = None, 1

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import Skip, SourceStats
from pagetwin.sources.payload import (
    HttpMessage,
    StatusFilter,
    b32_digest,
    iso_date,
    normalize_digest,
    parse_http_head,
    prepare_body,
    revisit_may_be_page,
    split_content_type,
    status_filter,
    wants_body,
)

HEAD_BYTES = 1 << 16  # bytes read first: the HTTP head must fit in them
READ_STEP = 1 << 20
SCAN_STEP = 1 << 20
WINDOW = 1 << 20  # bytes of a plain WARC buffered at a time (headers, peeks, blocks)
MAX_WARC_HEAD = 32 << 10  # a longer WARC header is not one (fastwarc's limit too)
MEMBER_IN_MEMORY = 1 << 24  # a gzip member up to this size (decompressed) is framed in memory
MAX_FILE_ERRORS = 5  # messages kept per file (then a count)
_NOT_PAGES = {"warcinfo", "request", "metadata", "conversion", "continuation"}
_RECORD_START = re.compile(rb"WARC/[0-2]\.")
_GZIP_START = re.compile(rb"\x1f\x8b\x08")
_VERSION_LINE = re.compile(rb"WARC/[0-2]\.\d{1,4}\r?\n")
_BLANK = b"\r\n\t \x00"  # between records: line ends, padding
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


class _StreamBroken(Exception):
    """Reading a record's bytes failed (corrupt compressed data)."""


class _FileNotes:
    """Error messages about one file, a few kept, the rest counted."""

    def __init__(self, path: str, stats: SourceStats):
        self.path, self.stats, self.count = path, stats, 0

    def __call__(self, message: str) -> None:
        self.count += 1
        if self.count <= MAX_FILE_ERRORS:
            self.stats.error(f"{self.path}: {message}")

    def close(self) -> None:
        if self.count > MAX_FILE_ERRORS:
            self.stats.error(f"{self.path}: {self.count} damaged places in all")


# -- WARC ---------------------------------------------------------------------------------


@dataclass
class _Ctx:
    """One WARC file being read."""

    path: str
    name: str
    settings: InputSettings
    want_images: bool
    note: _FileNotes
    records: int = 0
    misframed: int = 0
    member: _Member | None = None  # the gzip member being read (tells why a record is clipped)
    accept: StatusFilter | None = None  # input.statuses, parsed once


def iter_warc(path: str, settings: InputSettings, stats: SourceStats, want_images: bool = False) -> Iterator[Page | Skip]:
    """Every record of the WARC file ``path`` as a Page or a Skip. Raises ConfigError at once
    (not when iterated) when ``settings.statuses`` is not valid."""
    status_filter(settings.statuses)
    return _iter_warc(path, settings, stats, want_images)


def iter_warc_span(
    path: str, start: int, stop: int, settings: InputSettings, stats: SourceStats, want_images: bool = False,
    report_empty: bool = True, opener: Callable[[], BinaryIO] | None = None, size: int | None = None,
) -> Iterator[Page | Skip]:  # fmt: skip
    """The records of the WARC file ``path`` (gzip or plain) that start in [start, stop):
    ``start`` must be where a gzip member or a record starts (sources.split finds them; 0 is
    read as the whole file's reader reads it), the last record read is the last that starts
    before ``stop``. ``report_empty``: say when no record could be read. ``opener`` and
    ``size``: the file's bytes when they are not ``path`` on the local disk (sources.split)."""
    status_filter(settings.statuses)
    return _iter_warc(path, settings, stats, want_images, (start, stop), report_empty, opener, size)


def _iter_warc(
    path: str, settings: InputSettings, stats: SourceStats, want_images: bool, span: tuple[int, int] | None = None,
    report_empty: bool = True, opener: Callable[[], BinaryIO] | None = None, size: int | None = None,
) -> Iterator[Page | Skip]:  # fmt: skip
    ctx = _Ctx(path, os.path.basename(path), settings, want_images, _FileNotes(path, stats), accept=status_filter(settings.statuses))
    size = os.path.getsize(path) if size is None else size
    start, stop = span if span is not None else (0, size)
    opener = opener or partial(open, path, "rb")
    with opener() as fh:
        magic = fh.read(4)
        fh.seek(0)
        if magic[:2] == b"\x1f\x8b":
            with opener() as scan_fh:
                yield from _gzip_warc(fh, _Starts(scan_fh, size, _GZIP_START), size, ctx, start, stop)
        elif magic == _ZSTD_MAGIC or (magic[1:] == b"\x2a\x4d\x18" and magic[0] & 0xF0 == 0x50):
            yield from _zstd_warc(fh, ctx)  # a zstd frame, or the skippable frame of a dictionary (never split)
        else:
            yield from _plain_warc(_Source(fh, size), ctx, None, start, stop)
    ctx.note.close()
    if ctx.misframed:
        stats.error(f"{path}: {ctx.misframed} records whose Content-Length is wrong, read up to the next record")
    if ctx.records == 0 and report_empty:
        stats.error(f"{path}: no WARC record could be read (not a WARC file?)")


class _Starts:
    """The offsets where a record may start (``pattern``: a "WARC/" version prefix, a gzip
    member header), found by reading the file forward once: asking again from an offset
    already scanned costs nothing, so a resynchronisation never rescans what it has passed.
    Offsets asked for must not go back past a start already given."""

    def __init__(self, fh, size: int, pattern: re.Pattern):
        self.fh, self.size, self.pattern = fh, size, pattern
        self.hits: deque[int] = deque()
        self.scanned = 0  # every start before this is in hits (or was passed)

    def first_from(self, offset: int) -> int | None:
        """The first start at or after ``offset``; None when there is none."""
        while True:
            while self.hits and self.hits[0] < offset:
                self.hits.popleft()
            if self.hits:
                return self.hits[0]
            lo = max(self.scanned, offset)
            if lo >= self.size:
                return None
            self.fh.seek(lo)
            data = self.fh.read(SCAN_STEP)
            if not data:
                return None
            # a match near the end may be cut: those bytes are scanned again with the next chunk
            done = lo + len(data) if lo + len(data) >= self.size else lo + len(data) - 8
            self.hits.extend(lo + m.start() for m in self.pattern.finditer(data) if lo + m.start() < done)
            self.scanned = done


class _Source:
    """Random access to the bytes of a plain WARC (a file, or a gzip member decompressed in
    memory) through one buffered window; ``base`` is added to the offsets it reports (a
    member's records are named by the member's offset)."""

    def __init__(self, fh, size: int, data: bytes = b""):
        self.fh, self.size = fh, size
        # ``data``: the source's bytes when they are in memory (a gzip member): the window
        # is all of them, and no record is copied out of ``fh`` first
        self.buf, self.buf_at = data, 0
        self.starts = _Starts(fh, size, _RECORD_START)

    def view(self, at: int, n: int) -> tuple[bytes, int]:
        """A buffer holding bytes [at, at + n) of the file (fewer at its end), and the index
        of ``at`` in it."""
        end = min(at + n, self.size)
        if not (self.buf_at <= at and end <= self.buf_at + len(self.buf)):
            self.fh.seek(at)
            self.buf, self.buf_at = self.fh.read(max(n, WINDOW)), at
        return self.buf, at - self.buf_at

    def peek(self, at: int, n: int) -> bytes:
        buf, i = self.view(at, n)
        return buf[i : i + n]

    def skip_blank(self, at: int) -> int:
        """The offset of the first byte from ``at`` on that is not a line end or padding."""
        if at < self.size:
            buf, i = self.view(at, 1)
            if buf[i] not in _BLANK:  # the usual case: a record starts right here
                return at
        while at < self.size:
            chunk = self.peek(at, 1 << 12)
            rest = chunk.lstrip(_BLANK)
            if rest:
                return at + len(chunk) - len(rest)
            at += len(chunk)
        return self.size


class _Fields(dict):
    """WARC header fields by lower-cased name; of a repeated name the first is kept (as
    fastwarc does)."""

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return dict.get(self, key.lower(), default)


@dataclass(slots=True)
class _Head:
    start: int
    end: int  # offset of the block (after the blank line); the file's end for a cut header
    fields: _Fields = field(default_factory=_Fields)
    cut: bool = False  # the file ends inside the header


def _parse_head(src: _Source, at: int) -> _Head | int:
    """The WARC header that starts at ``at``, or, when none does, the offset to look on
    from: the line that is no header line. (A record start found before it, inside a header
    line, would fail at the same line; a version line is no header line.)"""
    buf, i = src.view(at, MAX_WARC_HEAD)
    lim = min(len(buf), i + MAX_WARC_HEAD)
    m = _VERSION_LINE.match(buf, i, lim)
    if m is None:
        return at + 1
    head = _Head(at, at)
    pos = m.end()
    if _plain_head(buf, pos, lim, head):
        head.end = src.buf_at + head.end
        return head
    name, parts = "", []
    while True:
        nl = buf.find(b"\n", pos, lim)
        if nl < 0:
            if src.buf_at + lim < src.size:
                return src.buf_at + pos  # too long to be a header
            _put(head.fields, name, parts)
            head.end, head.cut = src.size, True
            return head
        line = buf[pos : nl - 1] if buf[nl - 1 : nl] == b"\r" and nl > pos else buf[pos:nl]
        if not line:
            _put(head.fields, name, parts)
            head.end = src.buf_at + nl + 1
            return head
        if line[:1] in (b" ", b"\t"):
            if not name:
                return src.buf_at + pos
            parts.append(line.strip())
        else:
            colon = line.find(b":")
            if colon <= 0:
                return src.buf_at + pos
            _put(head.fields, name, parts)
            name, parts = line[:colon].strip().decode("latin-1").lower(), [line[colon + 1 :].strip()]
        pos = nl + 1


# The usual header after its version line: lines "name: value" (a name that starts with no
# blank, a colon), each ended by CRLF, then a blank CRLF line. The match stops at the first
# line that is not such a line, where _parse_head's loop stops too (never reading further).
_PLAIN_HEAD = re.compile(rb"(?:[^ \t:\r\n][^:\n]*:[^\n]*\r\n)*\r\n")


def _plain_head(buf: bytes, pos: int, lim: int, head: _Head) -> bool:
    """The header's fields as ``_parse_head``'s loop reads them, for the usual header
    (_PLAIN_HEAD, up to ``lim``). Fills ``head`` (its ``end`` relative to ``buf``) and says
    True; False, touching nothing, for any other header (the loop reads it)."""
    m = _PLAIN_HEAD.match(buf, pos, lim)
    if m is None:
        return False
    end = m.end()
    fields = head.fields
    if end - pos > 2:
        lines = buf[pos : end - 4]
        if lines.isascii():
            # (the usual header) decoded once: latin-1 and UTF-8 read ASCII alike, and the
            # strips take the blanks bytes.strip() takes (str.strip() would take \x1c-\x1f too)
            for line in lines.decode("ascii").split("\r\n"):
                name, _, value = line.partition(":")
                name = name.strip(_ASCII_BLANKS).lower()
                if name and name not in fields:
                    fields[name] = value.strip(_ASCII_BLANKS)
        else:
            for line in lines.split(b"\r\n"):
                colon = line.find(b":")
                name = line[:colon].strip().decode("latin-1").lower()
                if name and name not in fields:
                    fields[name] = line[colon + 1 :].strip().decode("utf-8", "replace")
    head.end = end
    return True


_ASCII_BLANKS = " \t\n\r\x0b\x0c"  # what bytes.strip() strips


def _put(fields: _Fields, name: str, parts: list[bytes]) -> None:
    if name and name not in fields:
        fields[name] = b" ".join(p for p in parts if p).decode("utf-8", "replace")


def _find_head(src: _Source, offset: int) -> _Head | None:
    """The first WARC header at or after ``offset``."""
    while True:
        at = src.starts.first_from(offset)
        if at is None:
            return None
        head = _parse_head(src, at)
        if isinstance(head, _Head):
            return head
        offset = max(at + 1, head)


def _plain_warc(src: _Source, ctx: _Ctx, base: int | None = None, at: int = 0, stop: int | None = None) -> Iterator[Page | Skip]:
    """The records of an uncompressed WARC; ``base``: the offset of the gzip member they
    are in (their offsets in ``src`` are then offsets in the member). Those that start in
    [at, stop) only (iter_warc_span)."""
    stop = src.size if stop is None else min(stop, src.size)
    while True:
        if _record_at is not None:
            quick = _quick_record(src, at, stop, ctx, base)
            if quick is not None:
                if not quick:
                    return
                ctx.records += 1
                outcome, at = quick
                yield outcome
                continue
        at = src.skip_blank(at)
        if at >= stop:
            return
        head = _parse_head(src, at)
        if not isinstance(head, _Head):
            found = _find_head(src, max(at + 1, head))
            to = f"to the record at {_where(found.start, base)}" if found else "to the end of the file"
            yield Skip("malformed-record", f"{ctx.name} at {_where(at, base)}: no WARC record here")
            ctx.note(f"no WARC record at {_where(at, base)}; skipped {(found.start if found else src.size) - at} bytes {to}")
            if found is None or found.start >= stop:
                return
            head = found
        ctx.records += 1
        outcome, at = _framed_record(src, head, ctx, base)
        yield outcome


def _quick_record(src: _Source, at: int, stop: int, ctx: _Ctx, base: int | None) -> tuple[Page | Skip, int] | tuple[()] | None:
    """What the loop of _plain_warc reads at ``at`` when it is the usual record, framed by its
    Content-Length, all in the source's window: (its Page or Skip, where the next may start),
    the header and HTTP head read by one native call (_warc.record_at); () when only blanks
    are left before ``stop``. None for anything else: the Python path reads it (the
    reference; tests/sources/test_warc_quick.py)."""
    buf, shift = src.buf, src.buf_at
    if not 0 <= at - shift < len(buf):
        return None
    found = _record_at(buf, at - shift, src.size - shift, stop - shift)
    if not found:
        return found
    start, head_end, end, fields, http = found
    h = _Fields(fields)
    if http[0] != HTTP_READ or (h.get("WARC-Type") or "").strip().lower() != "response":
        # (a header read as _parse_head reads it: the record as the Python path reads it)
        return _framed_record(src, _Head(shift + start, shift + head_end, h), ctx, base)
    return _quick_response(buf, start, head_end, end, h, http, ctx, base, shift), shift + end


def _quick_response(
    buf: bytes, start: int, head_end: int, end: int, h: _Fields, http: tuple, ctx: _Ctx, base: int | None, shift: int
) -> Page | Skip:  # fmt: skip
    """_warc_record, _seen and _response for a response record with an HTTP head whose block
    is buf[head_end:end] (record_at's answer), in the same steps, without their records,
    readers and HttpMessage."""
    _, status, content_type, transfer_encoding, content_encoding, body_offset = http
    settings = ctx.settings
    url = (h.get("WARC-Target-URI") or "").strip().strip("<>")
    media, charset = split_content_type(content_type)
    pos, inner = (shift + start, 0) if base is None else (base, shift + start)
    meta: dict = {"warc_offset": pos} if not inner else {"warc_member_offset": pos, "warc_offset_in_member": inner}
    meta["warc_type"] = "response"
    if status is not None:
        meta["http_status"] = status
    if media:
        meta["content_type"] = media
    length = end - head_end
    payload_at = head_end + body_offset
    if not wants_body(media, ctx.want_images, settings.sniff_html):
        if not buf[payload_at : head_end + min(length, HEAD_BYTES)].strip():
            return Skip("empty-body", f"{ctx.name}: {url}")
        return Skip("not-html", media or (h.get("Content-Type") or "").strip() or "no content type")
    limit = settings.max_page_bytes
    digest = normalize_digest(h.get("WARC-Payload-Digest"))
    raw = buf[payload_at : head_end + min(length, body_offset + limit + 1)]  # one byte over: it was longer
    if digest is None:
        digest = b32_digest(hashlib.sha1(memoryview(buf)[payload_at:end]).digest())
    result = prepare_body(
        raw[:limit], media=media, transfer_encoding=transfer_encoding, content_encoding=content_encoding,
        limit=limit, sniff=settings.sniff_html, want_images=ctx.want_images, raw_cut=len(raw) > limit,
    )  # fmt: skip
    if result.kind == "skip":
        return Skip(result.reason, f"{ctx.name}: {url} {result.detail}".strip())
    accept = ctx.accept
    if not accept.accepts(status):
        return Skip(accept.reason(status), f"{ctx.name}: {url}")
    return _response_page(h, ctx, url, charset, meta, result, limit, digest)


def _where(at: int, base: int | None) -> str:
    return f"byte {at}" if base is None else f"byte {base}" + (f" (+{at} in its gzip member)" if at else "")


def _framed_record(src: _Source, head: _Head, ctx: _Ctx, base: int | None) -> tuple[Page | Skip, int]:
    """The record whose header is ``head`` -> (its Page or Skip, where the next may start)."""
    where = _where(head.start, base)
    if head.cut:
        return _clipped(ctx, where, src.size - head.start, None), src.size
    length_field = (head.fields.get("Content-Length") or "").strip()
    if not (length_field.isascii() and length_field.isdigit()):  # not "²00"
        nxt = _find_head(src, head.end)
        return Skip("malformed-header", f"{ctx.name} at {where}: Content-Length {length_field!r}"), nxt.start if nxt else src.size
    length = int(length_field)
    end = head.end + length
    tail = src.peek(end, 8) if end <= src.size else b""
    after = tail.lstrip(b"\r\n")
    framed = end <= src.size and (
        tail.startswith(b"\r\n\r\n") or (len(tail) - len(after) <= 4 and (after.startswith(b"WARC/") or end + len(tail) == src.size))
    )
    if framed:
        block_end = nxt_at = end
    else:
        nxt = _find_head(src, head.end)
        # the end of a complete gzip member ends its record whatever the length says; so does
        # the "\r\n\r\n" that ends a record at the end of the file (a cut seldom falls there)
        ends_it = (base is not None and ctx.member is not None and ctx.member.state == "end") or (
            src.size - 4 >= head.end and src.peek(src.size - 4, 4) == b"\r\n\r\n"
        )
        if nxt is None and end > src.size and not ends_it:
            return _clipped(ctx, where, src.size - head.end, length), src.size
        nxt_at = nxt.start if nxt is not None else src.size
        block_end = nxt_at - 4 if nxt_at - 4 >= head.end and src.peek(nxt_at - 4, 4) == b"\r\n\r\n" else nxt_at
        ctx.misframed += 1
        ctx.note(f"record at {where} declares {length} bytes and holds {block_end - head.end} (wrong Content-Length)")
    rec = _Record(head.fields, _Block(src, head.end, block_end))
    pos, inner = (head.start, 0) if base is None else (base, head.start)
    return _warc_record(rec, pos, inner, ctx, block_end - head.end)[0], nxt_at


def _clipped(ctx: _Ctx, where: str, total: int, length: int | None) -> Skip:
    """A record the end of the data cuts off (``total`` of its ``length`` bytes there; None:
    inside its header): a clipped file, or a damaged gzip member."""
    member = ctx.member
    has = f"record of {length} bytes has {total}" if length is not None else f"the data ends inside its header, after {total} bytes"
    if member is not None and member.state in ("cut", "corrupt"):
        member.reported = True
        if member.state == "cut":
            ctx.note(f"truncated gzip member at byte {member.start} ({has})")
            return Skip("truncated-gzip", f"{ctx.name} at {where}")
        ctx.note(f"corrupt gzip member at byte {member.start} ({member.error}; {has})")
        return Skip("corrupt-gzip", f"{ctx.name} at {where}: {member.error}")
    if length is None:
        ctx.note(f"record at {where} is clipped ({has})")
    else:
        ctx.note(f"record at {where} is clipped ({total} of {length} bytes)")
    return Skip("truncated-record", f"{ctx.name} at {where}")


@dataclass(slots=True)
class _Record:
    headers: _Fields
    reader: _Block


class _Block:
    """Reads of the bytes [start, end) of a source: a record's block."""

    def __init__(self, src: _Source, start: int, end: int):
        self.src, self.start, self.pos, self.end = src, start, start, end

    def in_memory(self) -> tuple[bytes, int] | None:
        """(a buffer holding the whole block, the index of its start) when the source's
        window already holds it (a gzip member read whole, most records of a plain WARC)."""
        src = self.src
        if src.buf_at <= self.start and self.end <= src.buf_at + len(src.buf):
            return src.buf, self.start - src.buf_at
        return None

    def read(self, n: int = -1) -> bytes:
        n = self.end - self.pos if n is None or n < 0 else min(n, self.end - self.pos)
        if n <= 0:
            return b""
        buf, i = self.src.view(self.pos, min(n, WINDOW))
        data = buf[i : i + min(n, WINDOW)]
        self.pos += len(data)
        return data

    def consume(self) -> int:
        n, self.pos = self.end - self.pos, self.end
        return n


# gzip --------------------------------------------------------------------------------


class _Member:
    """The decompressed bytes of the gzip member at file offset ``start``, read to its end
    and no further. ``state`` once read to its end: "end" (complete; ``next_at`` is where the
    next member may start), "cut" (the file ends inside it) or "corrupt" (``error``).

    ``fast``: inflate with ISA-L instead of zlib. Only a member ISA-L reads to its end is
    taken from it: ISA-L then has checked the member's CRC-32 and length, and the inflated
    bytes of valid deflate data are the same whichever library inflates them. A damaged or
    cut member is read again with zlib (_gzip_warc), whose messages and partial output the
    reader reports, as are members too large to be read in memory."""

    def __init__(self, fh, start: int, fast: bool = False):
        self.fh, self.start = fh, start
        fh.seek(start)
        self.d = _isal_decompressobj(16 + zlib.MAX_WBITS) if fast else zlib.decompressobj(16 + zlib.MAX_WBITS)
        self.pending = b""
        self.raw_at = start  # file offset of pending[0]
        self.out = 0  # decompressed bytes given
        self.state: str | None = None
        self.error = ""
        self.next_at = start
        self.reported = False  # its damage is counted by a record it clipped
        # raw bytes read at a time, doubling: members are mostly small, some large. What a
        # zlib call inflated before an error is lost, so a corrupt member's partial output
        # depends on these reads: zlib's stay as they were; ISA-L's output is taken only whole,
        # and its first read holds most members (tens of KB) at once.
        self.step = 1 << 16 if fast else 1 << 14

    def read(self, n: int = -1) -> bytes:
        n = READ_STEP if n is None or n < 0 else n
        while self.state is None:
            if not self.pending:
                self.pending = self.fh.read(self.step)
                self.step = min(2 * self.step, READ_STEP)
                if not self.pending:
                    self.state = "cut"
                    break
            try:
                out = self.d.decompress(self.pending, n)
            except (zlib.error, _IsalError) as exc:
                self.state, self.error = "corrupt", str(exc)
                break
            rest = self.d.unused_data if self.d.eof else self.d.unconsumed_tail
            self.raw_at += len(self.pending) - len(rest)
            self.pending = rest
            if self.d.eof:
                self.state, self.next_at = "end", self.raw_at
            if out:
                self.out += len(out)
                return out
        return b""

    def tell(self) -> int:
        return self.out

    def drain(self) -> None:
        while self.read(READ_STEP):
            pass


def _gzip_warc(fh, starts: _Starts, size: int, ctx: _Ctx, at: int = 0, stop: int | None = None) -> Iterator[Page | Skip]:
    """The records of a gzipped WARC, member after member (those that start in [at, stop))."""
    stop = size if stop is None else min(stop, size)
    while at < stop:
        fh.seek(at)
        magic = fh.read(4)
        if magic[:3] != b"\x1f\x8b\x08":
            nxt = starts.first_from(at + 1)
            if not _only_padding(fh, at, nxt if nxt is not None else size):
                to = f"to the gzip member at byte {nxt}" if nxt is not None else "to the end of the file"
                yield Skip("corrupt-gzip", f"{ctx.name} at byte {at}: no gzip member here")
                ctx.note(f"no gzip member at byte {at}; skipped {(nxt if nxt is not None else size) - at} bytes {to}")
            if nxt is None:
                return
            at = nxt
            continue
        fast = _isal_may_read(magic)
        member = ctx.member = _Member(fh, at, fast)
        before = ctx.records
        data = _read_member(member)
        if fast and member.state != "end" and data is not None:
            member = ctx.member = _Member(fh, at)  # damaged or cut: zlib says how (see _Member)
            data = _read_member(member)
        if data is not None:
            yield from _plain_warc(_Source(io.BytesIO(data), len(data), data), ctx, base=at)
        else:
            yield from _streamed_member(_Member(fh, at), ctx)
            member = ctx.member
        if member.state in ("cut", "corrupt") and not member.reported:
            reason = "truncated-gzip" if member.state == "cut" else "corrupt-gzip"
            detail = "the file ends inside it" if member.state == "cut" else member.error
            if ctx.records == before:  # it held no record that could be read: count it as one
                ctx.records += 1
                yield Skip(reason, f"{ctx.name} at byte {at}: {detail}")
            ctx.note(f"{reason} at byte {at} ({detail}); skipped to the next gzip member")
        if member.state == "end":
            at = member.next_at
        elif member.state == "cut":
            return
        else:
            nxt = starts.first_from(at + 1)
            if nxt is None:
                return
            at = nxt
    ctx.member = None


def _isal_may_read(header: bytes) -> bool:
    """Whether ISA-L may inflate the gzip member whose first bytes are ``header``: it is
    installed, and the flags byte has none of the reserved bits, which zlib refuses and ISA-L
    does not look at."""
    return _isal_decompressobj is not None and len(header) >= 4 and not header[3] & 0xE0


def _only_padding(fh, start: int, end: int) -> bool:
    """Whether the bytes [start, end) are all line ends or zero padding."""
    fh.seek(start)
    while start < end:
        chunk = fh.read(min(READ_STEP, end - start))
        if not chunk:
            return True
        if chunk.strip(_BLANK):
            return False
        start += len(chunk)
    return True


def _read_member(member: _Member) -> bytes | None:
    """The member's decompressed bytes, read to its end or its damage; None when it holds
    more than MEMBER_IN_MEMORY bytes."""
    first = member.read(MEMBER_IN_MEMORY + 1)
    if len(first) > MEMBER_IN_MEMORY:
        return None
    if member.state is not None:  # the usual small member, in one read (and no copy)
        return first
    parts, total = [first], len(first)  # joined once at the end (a growing buffer copies as it grows)
    while member.state is None:
        chunk = member.read(MEMBER_IN_MEMORY + 1 - total)
        parts.append(chunk)
        total += len(chunk)
        if total > MEMBER_IN_MEMORY:
            return None
    return b"".join(parts)


def _streamed_member(member: _Member, ctx: _Ctx) -> Iterator[Page | Skip]:
    """The records of a large gzip member, parsed by fastwarc as they are decompressed. A
    record cut short ends the member (it may have swallowed the records after it)."""
    ctx.member = member
    failure = None
    try:
        for rec in ArchiveIterator(member, parse_http=False, stream_detect=False):
            ctx.records += 1
            outcome, short = _warc_record(rec, member.start, rec.stream_pos, ctx, None)
            yield outcome
            if short:
                break
    except _StreamBroken as exc:
        failure = str(exc) or "corrupt data"
    except Exception as exc:  # noqa: BLE001 - fastwarc raises OSError (and others) on bad data
        failure = str(exc) or type(exc).__name__
    member.drain()
    if failure is not None and member.state == "end":
        ctx.note(f"unreadable data in the gzip member at byte {member.start} ({failure}); skipped to the next member")


def _zstd_warc(fh, ctx: _Ctx) -> Iterator[Page | Skip]:
    """The records of a zstd-compressed WARC (.warc.zst), decompressed and parsed by fastwarc.
    Bad data ends the file: the rest is counted as one unreadable region."""
    failure = None
    before = ctx.records
    try:
        for rec in ArchiveIterator(fh, parse_http=False):
            ctx.records += 1
            outcome, short = _warc_record(rec, rec.stream_pos, 0, ctx, None)
            yield outcome
            if short:
                return
    except Exception as exc:  # noqa: BLE001 - fastwarc raises OSError (and others) on bad data
        failure = str(exc) or type(exc).__name__
    if failure is not None:
        if ctx.records == before:
            ctx.records += 1
            yield Skip("malformed-record", f"{ctx.name}: {failure}")
        ctx.note(f"unreadable zstd data after {ctx.records - before} records ({failure}); the rest of the file is skipped")


def _read(reader, n: int) -> bytes:
    """Up to ``n`` bytes: fewer only at the end of the record."""
    try:
        data = reader.read(n)
        while 0 < len(data) < n:
            more = reader.read(n - len(data))
            if not more:
                break
            data += more
        return data
    except Exception as exc:  # noqa: BLE001 - corrupt compressed data inside a record
        raise _StreamBroken(str(exc)) from exc


def _read_rest(reader, kept: bytearray, keep: int, hasher) -> int:
    """Read the rest of a record block: append to ``kept`` up to ``keep`` bytes, feed
    ``hasher`` (when given) with everything. Returns the number of bytes read."""
    total = 0
    while True:
        if hasher is None and len(kept) >= keep:
            try:
                return total + reader.consume()
            except Exception as exc:  # noqa: BLE001
                raise _StreamBroken(str(exc)) from exc
        chunk = _read(reader, READ_STEP)
        if not chunk:
            return total
        total += len(chunk)
        if hasher is not None:
            hasher.update(chunk)
        if len(kept) < keep:
            kept += chunk[: keep - len(kept)]


# records -------------------------------------------------------------------------------


@dataclass(slots=True)
class _Seen:
    """What a record's WARC header and first bytes say."""

    where: str
    wtype: str
    length: int
    first: bytes
    url: str
    http: HttpMessage | None
    is_http: bool
    media: str
    charset: str | None
    meta: dict


def _warc_record(rec, pos: int, inner: int, ctx: _Ctx, length: int | None) -> tuple[Page | Skip, bool]:
    """One record -> (Page or Skip, whether it was shorter than its length). ``pos``: its
    offset (its gzip member's); ``inner``: its offset in the member when not the first;
    ``length``: its block's length as framed (None: the Content-Length, for fastwarc)."""
    h = rec.headers
    where = _where(inner, pos) if inner else f"byte {pos}"
    wtype = (h.get("WARC-Type") or "").strip().lower()
    if length is None:
        length_field = (h.get("Content-Length") or "").strip()
        if not (length_field.isascii() and length_field.isdigit()):  # not "²00"
            total = _read_rest(rec.reader, bytearray(), 0, None)
            if ctx.member is not None and ctx.member.state in ("cut", "corrupt"):  # a header the damage cut
                return _clipped(ctx, where, total, None), True
            return Skip("malformed-header", f"{ctx.name} at {where}: Content-Length {length_field!r}"), False
        length = int(length_field)
    first = _read(rec.reader, min(length, HEAD_BYTES)) if length else b""
    if wtype not in ("response", "resource", "revisit"):
        total = len(first) + _read_rest(rec.reader, bytearray(), 0, None)
        if total < length:
            return _clipped(ctx, where, total, length), True
        return Skip(wtype if wtype in _NOT_PAGES else "unknown-record-type", f"{ctx.name}: {wtype!r}"), False
    seen = _seen(h, where, wtype, length, first, pos, inner)
    if seen.is_http and first.startswith(b"HTTP/") and seen.http is None:
        total = len(first) + _read_rest(rec.reader, bytearray(), 0, None)
        if total < length:
            return _clipped(ctx, where, total, length), True
        return Skip("malformed-http", f"{ctx.name} at {where}"), False
    if wtype == "revisit":
        return _revisit(rec, seen, ctx)
    return _response(rec, seen, ctx)


def _seen(h, where: str, wtype: str, length: int, first: bytes, pos: int, inner: int) -> _Seen:
    url = (h.get("WARC-Target-URI") or "").strip().strip("<>")
    warc_ct = (h.get("Content-Type") or "").strip()
    is_http = "application/http" in warc_ct.lower() or first.startswith(b"HTTP/")
    http = parse_http_head(first) if is_http and first.startswith(b"HTTP/") else None
    if http is not None:
        media, charset = split_content_type(http.get("Content-Type"))
    elif is_http:  # labelled application/http but no HTTP head: a bare payload
        media, charset = "", None
    else:
        media, charset = split_content_type(warc_ct)
    # a record inside a gzip member holding several has no offset a reader can seek to
    meta: dict = {"warc_offset": pos} if not inner else {"warc_member_offset": pos, "warc_offset_in_member": inner}
    meta["warc_type"] = wtype
    if http is not None and http.status is not None:
        meta["http_status"] = http.status
    if media:
        meta["content_type"] = media
    return _Seen(where, wtype, length, first, url, http, is_http, media or "", charset, meta)


def _record_id(h, ctx: _Ctx, meta: dict) -> str:
    rid = (h.get("WARC-Record-ID") or "").strip()
    if rid:
        return rid
    if "warc_offset" in meta:
        return f"{ctx.name}:{meta['warc_offset']}"
    return f"{ctx.name}:{meta['warc_member_offset']}+{meta['warc_offset_in_member']}"


def _revisit(rec, seen: _Seen, ctx: _Ctx) -> tuple[Page | Skip, bool]:
    h = rec.headers
    total = len(seen.first) + _read_rest(rec.reader, bytearray(), 0, None)
    if total < seen.length:
        return _clipped(ctx, seen.where, total, seen.length), True
    if not revisit_may_be_page(seen.media):
        return Skip("not-html", f"{ctx.name}: revisit of {seen.media}"), False
    # A revisit stands for its original: judged by the status it recorded, if any (304,
    # "not modified", says the original's status holds).
    status = seen.http.status if seen.http is not None else None
    accept = ctx.accept
    if status not in (None, 304) and not accept.accepts(status):
        return Skip(accept.reason(status), f"{ctx.name}: revisit {seen.url}"), False
    meta = seen.meta
    meta["profile"] = (h.get("WARC-Profile") or "").strip()
    if h.get("WARC-Refers-To-Date"):
        meta["refers_to_date"] = iso_date(h.get("WARC-Refers-To-Date"))
    if h.get("WARC-Refers-To"):
        meta["refers_to"] = h.get("WARC-Refers-To").strip()
    digest = normalize_digest(h.get("WARC-Payload-Digest"))
    page = Page(
        id=_record_id(h, ctx, seen.meta), url=seen.url, body=b"", http_charset=seen.charset,
        crawl_date=iso_date(h.get("WARC-Date")) or iso_date(h.get("Memento-Datetime")), payload_digest=digest,
        source=ctx.path, kind="revisit", refers_to_digest=digest,
        refers_to_uri=(h.get("WARC-Refers-To-Target-URI") or "").strip().strip("<>") or seen.url, meta=meta,
    )
    return page, False


def _response(rec, seen: _Seen, ctx: _Ctx) -> tuple[Page | Skip, bool]:
    h, settings, first = rec.headers, ctx.settings, seen.first
    body_offset = seen.http.body_offset if seen.http else 0
    if not wants_body(seen.media, ctx.want_images, settings.sniff_html):
        total = len(first) + _read_rest(rec.reader, bytearray(), 0, None)
        if total < seen.length:
            return _clipped(ctx, seen.where, total, seen.length), True
        if not first[body_offset:].strip():
            return Skip("empty-body", f"{ctx.name}: {seen.url}"), False
        return Skip("not-html", seen.media or (h.get("Content-Type") or "").strip() or "no content type"), False
    limit = settings.max_page_bytes
    keep = body_offset + limit + 1  # one byte over the limit tells that the payload was longer
    digest = normalize_digest(h.get("WARC-Payload-Digest"))
    whole = rec.reader.in_memory() if type(rec.reader) is _Block else None
    if whole is not None:
        # the whole block is in memory (``first`` is its start): the payload is sliced out of
        # it once, and hashed in place, instead of read through (the bytearray, its slice and
        # bytes() below copy it three times)
        buf, i = whole
        raw = buf[i + body_offset : i + min(seen.length, keep)]
        if digest is None:
            digest = b32_digest(hashlib.sha1(memoryview(buf)[i + body_offset : i + seen.length]).digest())
    else:
        kept = bytearray(first[:keep])
        hasher = None
        if digest is None:
            hasher = hashlib.sha1()
            hasher.update(first[body_offset:])
        total = len(first) + _read_rest(rec.reader, kept, keep, hasher)
        if total < seen.length:
            return _clipped(ctx, seen.where, total, seen.length), True
        if digest is None and hasher is not None:
            digest = b32_digest(hasher.digest())
        raw = bytes(kept[body_offset:])
    result = _payload(raw, seen.media, seen.http, limit, settings, ctx.want_images)
    if result.kind == "skip":
        return Skip(result.reason, f"{ctx.name}: {seen.url} {result.detail}".strip()), False
    refused = _refused_status(seen.wtype == "response" and seen.is_http, seen.http, ctx.accept)
    if refused:
        return Skip(refused, f"{ctx.name}: {seen.url}"), False
    return _response_page(h, ctx, seen.url, seen.charset, seen.meta, result, limit, digest), False


def _response_page(h, ctx: _Ctx, url: str, charset: str | None, meta: dict, result, limit: int, digest) -> Page:
    """The Page of a response whose body was taken (_response's and _quick_response's)."""
    _note_body(meta, result, limit)
    truncated_by_crawler = (h.get("WARC-Truncated") or "").strip()
    if truncated_by_crawler:
        meta["warc_truncated"] = truncated_by_crawler
    return Page(
        id=_record_id(h, ctx, meta), url=url, body=result.body, http_charset=charset,
        crawl_date=iso_date(h.get("WARC-Date")) or iso_date(h.get("Memento-Datetime")), payload_digest=digest,
        source=ctx.path, kind="image" if result.kind == "image" else "response",
        truncated=result.cut or bool(truncated_by_crawler), meta=meta,
    )  # fmt: skip


def _refused_status(judged: bool, http: HttpMessage | None, accept: StatusFilter) -> str | None:
    """The skip reason of an HTTP response whose status ``input.statuses`` does not take
    ("http-status-404"; "http-status-none" without a parsable status line); None when it is
    taken or not ``judged`` (a record that is no HTTP message: a resource, a bare payload)."""
    if not judged:
        return None
    status = http.status if http is not None else None
    return None if accept.accepts(status) else accept.reason(status)


def _note_body(meta: dict, result, limit: int) -> None:
    if result.cut:
        meta["cut_at"] = limit
    if result.sniffed:
        meta["sniffed"] = True
    if result.partial:
        meta["content_decoding"] = "partial"




# -- ARC ----------------------------------------------------------------------------------
#
# ARC framing is done here, not by warcio's iterator: warcio takes any first line it cannot
# place for a header-less WARC record and lets it swallow the rest of the file. Here a record
# starts only at a valid ARC record line; anything else is skipped, counted, up to the next
# one. warcio still parses each record found (its header line and HTTP head).

MAX_ARC_LINE = 1 << 16  # longer lines are not ARC record lines
KEEP_BYTES = 1 << 24  # a record up to this size stays buffered, so a rewind into it is cheap
_SCHEME = rb"[A-Za-z][A-Za-z0-9+.\-]*:"
# v1: URL IP-address Archive-date Content-type Archive-length (the URL may hold spaces)
_ARC_V1_LINE = re.compile(rb"(" + _SCHEME + rb"\S.*?) (\S*) (\d{14}) (\S*) (\d+)")
# v2: URL IP Date Content-type Result-code Checksum Location Offset Filename Archive-length
_ARC_V2_LINE = re.compile(rb"(" + _SCHEME + rb"\S*) (\S*) (\d{14}) (\S*) (\d{3}|-) (\S+) (\S+) (\d+|-) (\S+) (\d+)")
_IP_AND_DATE = re.compile(rb" \S* \d{14} ")  # what follows the URL of a record line
_SCHEME_IN_WORD = re.compile(rb"[A-Za-z][A-Za-z0-9+.\-]{0,31}:")
# junk glued in front of one of these is cut off ("xhttp:" is more likely junk + "http:")
_COMMON_SCHEMES = (b"https:", b"http:", b"ftp:", b"dns:", b"filedesc:", b"whois:", b"rtsp:", b"mms:")


@dataclass(slots=True)
class ArcHead:
    """The fields of an ARC record line that the reader uses."""

    url: str
    ip: str
    date: str
    mime: str
    length: int


def parse_arc_line(line: bytes) -> ArcHead | None:
    """The fields of an ARC v1 or v2 record line; None when ``line`` is not one."""
    text = line.rstrip()
    if len(text) > MAX_ARC_LINE:
        return None
    match = _ARC_V2_LINE.fullmatch(text) or _ARC_V1_LINE.fullmatch(text)
    if match is None:
        return None
    fields = [f.decode("utf-8", "replace") for f in match.groups()]
    return ArcHead(url=fields[0], ip=fields[1], date=fields[2], mime=fields[3], length=int(fields[-1]))


def _find_arc_line(data: bytes) -> int | None:
    """The offset in ``data`` of the first line (start of data or after a newline) that is an
    ARC record line, or None."""
    at = 0
    while at < len(data):
        end = data.find(b"\n", at)
        if end < 0:
            end = len(data)
        if parse_arc_line(data[at:end]) is not None:
            return at
        at = end + 1
    return None


def sniff_archive(path: str) -> str | None:
    """"warc", "arc" or None, from the first bytes of the file (decompressed if gzip).
    A damaged start is looked past: whichever record line comes first decides."""
    with open(path, "rb") as fh:
        raw = fh.read(65536)
    head = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, 65536)
        except zlib.error:
            return None
    head = head.lstrip(b"\r\n \t")
    if head.startswith(b"WARC/"):
        return "warc"
    if head.startswith(b"filedesc://"):
        return "arc"
    warc_at = next((i + 1 for i in (head.find(b"\nWARC/" + v) for v in (b"1.", b"0.", b"2.")) if i >= 0), None)
    arc_at = _find_arc_line(head if warc_at is None else head[:warc_at])
    if arc_at is not None:
        return "arc"
    return "warc" if warc_at is not None else None


def _next_gzip_start(path: str, offset: int) -> int | None:
    """The offset of the first gzip member header at or after ``offset``; the file is read
    from there in growing chunks, so a near one costs little."""
    step, keep = 1 << 16, 2
    with open(path, "rb") as fh:
        fh.seek(offset)
        prev, base = b"", offset
        while True:
            chunk = fh.read(step)
            if not chunk:
                return None
            data = prev + chunk
            hit = _GZIP_START.search(data)
            if hit is not None:
                return base - len(prev) + hit.start()
            prev, base, step = data[-keep:], base + len(chunk), min(step * 2, SCAN_STEP)


class _PlainBytes:
    """The bytes of an uncompressed file, in chunks."""

    damage: tuple[str, int, str] | None = None

    def __init__(self, fh):
        self.fh = fh
        self.known_end = os.fstat(fh.fileno()).st_size

    def next_chunk(self) -> bytes:
        return self.fh.read(READ_STEP)

    def restart_at(self, offset: int) -> int:
        self.fh.seek(offset)
        return offset

    def resume(self) -> bool:
        return False

    def forget_before(self, offset: int) -> None:
        pass


class _GzipBytes:
    """The decompressed bytes of a gzip file, member after member, in chunks. A corrupt or
    cut-off member ends the chunks and sets ``damage`` (reason, byte offset in the file,
    message); ``resume()`` goes on at the next gzip member header. Offsets are those of the
    decompressed bytes, which run on across a damaged member."""

    def __init__(self, fh, path: str):
        self.fh = fh
        self.path = path
        self.size = os.path.getsize(path)
        self.damage: tuple[str, int, str] | None = None
        self._restart(0, 0)
        self.members: list[tuple[int, int]] = []  # (decompressed offset, file offset) of member starts

    def _restart(self, raw_pos: int, out_pos: int) -> None:
        self.fh.seek(raw_pos)
        self.raw_pos = raw_pos  # file offset of the first byte of self.pending
        self.pending = b""
        self.out_pos = out_pos  # decompressed offset of the next chunk
        self.member_at = raw_pos
        self.d = None

    def next_chunk(self) -> bytes:
        while self.damage is None:
            if not self.pending:
                self.pending = self.fh.read(READ_STEP)
                if not self.pending:
                    if self.d is not None:
                        self.damage = ("truncated-gzip", self.member_at, "the file ends inside a gzip member")
                    return b""
            if self.d is None:  # a member must start here
                if len(self.pending) < 3:
                    self.pending += self.fh.read(READ_STEP)
                if not self.pending.startswith(b"\x1f\x8b"):
                    if not self.pending.strip(b"\x00"):  # zero padding after the last member
                        self.pending = b""
                        continue
                    self.damage = ("corrupt-gzip", self.raw_pos, "no gzip member header where one should start")
                    return b""
                self.d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self.member_at = self.raw_pos
                self.members.append((self.out_pos, self.raw_pos))
            before = len(self.pending)
            try:
                out = self.d.decompress(self.pending, READ_STEP)
            except zlib.error as exc:
                self.damage = ("corrupt-gzip", self.member_at, str(exc))
                return b""
            rest = self.d.unused_data if self.d.eof else self.d.unconsumed_tail
            self.raw_pos += before - len(rest)
            self.pending = rest
            if self.d.eof:
                self.d = None
            if out:
                self.out_pos += len(out)
                return out
        return b""

    def resume(self) -> bool:
        """Go on at the next gzip member header after the damage; False when there is none."""
        if self.damage is None:
            return False
        nxt = _next_gzip_start(self.path, self.damage[1] + 1)
        self.damage = None
        if nxt is None:
            self._restart(self.size, self.out_pos)
            return False
        self._restart(nxt, self.out_pos)
        return True

    def restart_at(self, offset: int) -> int:
        """Decompress again from the start of the member holding ``offset``; the decompressed
        offset it restarts at."""
        out_at, raw_at = max((m for m in self.members if m[0] <= offset), default=(0, 0))
        self.members = [m for m in self.members if m[0] < out_at]
        self.damage = None
        self._restart(raw_at, out_at)
        return out_at

    def forget_before(self, offset: int) -> None:
        """Member starts before ``offset`` are no longer needed for rewinds (keep the one
        holding it)."""
        keep = 0
        for i, (out_at, _) in enumerate(self.members):
            if out_at <= offset:
                keep = i
        del self.members[:keep]


class _ArcStream:
    """Buffered line and block reads over the (decompressed) bytes of an ARC file, with the
    offset of every byte and rewinds; what warcio's record parser reads from."""

    def __init__(self, source):
        self.src = source
        self.buf = b""
        self.i = 0
        self.base = 0  # offset of buf[0]
        self.mark: int | None = None  # bytes from here on stay buffered (up to KEEP_BYTES) for rewinds
        self.eof_at: int | None = getattr(source, "known_end", None)  # where the bytes end, once known

    def mark_record(self, offset: int) -> None:
        """A record starts at ``offset``: rewinds go no further back."""
        self.mark = offset
        self.src.forget_before(offset)

    @property
    def damage(self) -> tuple[str, int, str] | None:
        return self.src.damage

    def tell(self) -> int:
        return self.base + self.i

    def _fill(self) -> bool:
        chunk = self.src.next_chunk()
        if not chunk:
            if self.src.damage is None:
                self.eof_at = self.base + len(self.buf)
            return False
        drop = self.i
        if self.mark is not None and self.base <= self.mark < self.base + self.i:
            drop = self.mark - self.base
            if len(self.buf) - drop > KEEP_BYTES:
                drop, self.mark = self.i, None
        self.base += drop
        self.buf = self.buf[drop:] + chunk
        self.i -= drop
        return True

    def readline(self, limit: int | None = None) -> bytes:
        limit = MAX_ARC_LINE + 2 if limit is None or limit < 0 else min(limit, READ_STEP)
        scanned = self.tell()  # bytes before this have no newline
        while True:
            end = self.buf.find(b"\n", scanned - self.base, self.i + limit)
            if end >= 0:
                line = self.buf[self.i : end + 1]
                self.i = end + 1
                return line
            scanned = self.base + len(self.buf)
            if len(self.buf) - self.i >= limit or not self._fill():
                line = self.buf[self.i : self.i + limit]
                self.i += len(line)
                return line

    def read(self, n: int | None = None) -> bytes:
        n = READ_STEP if n is None or n < 0 else n
        if self.i >= len(self.buf) and not self._fill():
            return b""
        data = self.buf[self.i : self.i + n]
        self.i += len(data)
        return data

    def skip_to(self, offset: int) -> int:
        """Read forward to ``offset`` (or the end); the offset reached."""
        while self.tell() < offset:
            if not self.read(min(READ_STEP, offset - self.tell())):
                break
        return self.tell()

    def seek(self, offset: int) -> None:
        if self.base <= offset <= self.base + len(self.buf):
            self.i = offset - self.base
            return
        self.base = self.src.restart_at(offset)
        self.buf, self.i = b"", 0
        self.skip_to(offset)

    def resume(self) -> bool:
        self.base += len(self.buf)
        self.buf, self.i = b"", 0
        return self.src.resume()


def _next_line(stream: _ArcStream) -> tuple[int, bytes]:
    """(offset, line) of the next line that is not blank; (offset, b"") at the end."""
    while True:
        at = stream.tell()
        line = stream.readline()
        if not line or line.strip():
            return at, line


def _arc_line_within(line: bytes, at_line_start: bool) -> tuple[int, ArcHead] | None:
    """(offset, fields) of an ARC record line that is ``line`` or ends it (junk glued in front
    of a record line, e.g. where the newline ending the record before was overwritten)."""
    if at_line_start:
        head = parse_arc_line(line)
        if head is not None:
            return 0, head
    # Each " IP DATE " field pair: the URL is the word before it, from its scheme on.
    for match in _IP_AND_DATE.finditer(line, 0, MAX_ARC_LINE):
        word_at = line.rfind(b" ", 0, match.start()) + 1
        scheme = _SCHEME_IN_WORD.search(line, word_at, match.start())
        if scheme is None:
            continue
        start = scheme.start()
        name = scheme.group().lower()
        common = next((known for known in _COMMON_SCHEMES if name.endswith(known)), None)
        if common is not None:
            start = scheme.end() - len(common)
        if start == 0 and at_line_start:
            continue
        head = parse_arc_line(line[start:])
        if head is not None:
            return start, head
    return None


def _scan_to_arc_line(stream, at: int, line: bytes, at_line_start: bool) -> tuple[int, bytes, ArcHead | None]:
    """From ``line`` (at offset ``at``) on, the next ARC record line: (its offset, the line,
    its fields), or (end offset, b"", None) when there is none."""
    while line:
        found = _arc_line_within(line, at_line_start)
        if found is not None:
            return at + found[0], line[found[0] :], found[1]
        at_line_start = line.endswith(b"\n")
        at = stream.tell()
        line = stream.readline()
    return at, b"", None


def iter_arc(path: str, settings: InputSettings, stats: SourceStats, want_images: bool = False) -> Iterator[Page | Skip]:
    """Every record of the ARC file ``path`` (plain or gzip, ARC v1 or v2) as a Page or a
    Skip. Bytes that are not a record (a damaged start, junk between records, the rest of a
    record whose length field is wrong) are skipped to the next ARC record line and counted
    as one "malformed-record" each; a corrupt gzip member is skipped to the next member.
    Raises ConfigError at once (not when iterated) when ``settings.statuses`` is not valid."""
    status_filter(settings.statuses)
    return _iter_arc(path, settings, stats, want_images)


def _iter_arc(path: str, settings: InputSettings, stats: SourceStats, want_images: bool) -> Iterator[Page | Skip]:
    from warcio.recordloader import ArcWarcRecordLoader

    loader = ArcWarcRecordLoader(verify_http=False, arc2warc=False)
    accept = status_filter(settings.statuses)
    name = os.path.basename(path)
    note = _FileNotes(path, stats)
    gz = is_gzip(path)
    where = "decompressed byte" if gz else "byte"
    n_records = 0
    n_misaligned = 0
    with open(path, "rb") as fh:
        stream = _ArcStream(_GzipBytes(fh, path) if gz else _PlainBytes(fh))
        at, line = _next_line(stream)
        while True:
            head = parse_arc_line(line) if line else None
            if head is None:
                if line:  # not a record line: skip to the next one
                    bad_at, bad_line = at, line
                    at, line, head = _scan_to_arc_line(stream, at, line, False)
                    if head is not None or stream.damage is None:
                        to = f"to the record at {where} {at}" if head is not None else "to the end of the file"
                        yield Skip("malformed-record", f"{name} at {where} {bad_at}: {bad_line[:40]!r}")
                        note(f"no ARC record line at {where} {bad_at}; skipped {at - bad_at} bytes {to}")
                        continue
                if stream.damage is None:
                    break
                # the stream stopped at a corrupt or cut-off gzip member: count it, go on after it
                reason, raw_at, msg = stream.damage
                yield Skip(reason, f"{name} at byte {raw_at}: {msg}")
                note(f"{reason} at byte {raw_at} ({msg}); skipped to the next gzip member")
                if not stream.resume():
                    break
                at, line = _next_line(stream)
                continue
            n_records += 1
            stream.mark_record(at)
            outcome, misaligned, (at, line) = _arc_framed_record(stream, loader, head, at, path, name, settings, want_images, note, where, accept)
            n_misaligned += misaligned
            if outcome is not None:
                yield outcome
    if n_misaligned:
        stats.error(f"{path}: {n_misaligned} ARC records with a wrong length field, read up to the next record")
    if n_records == 0:
        stats.error(f"{path}: no ARC record could be read")
    note.close()


def _arc_framed_record(
    stream: _ArcStream, loader, head: ArcHead, at: int, path: str, name: str,
    settings: InputSettings, want_images: bool, note, where: str, accept: StatusFilter,
) -> tuple[Page | Skip | None, bool, tuple[int, bytes]]:
    """Read the record whose line ``head`` starts at ``at``: (its Page or Skip, or None when
    the stream stopped at damaged gzip data inside it, which the caller counts; whether its
    length field was wrong; the next (offset, line)). A record ends where its length field
    says when a newline follows there; else the field is wrong and it ends
    at the next record line after its own (found by reading on from its payload once)."""
    payload_at = stream.tell()
    length, nxt = head.length, None
    if not _arc_framed(stream, payload_at + length):
        found_at, found_line, found = _scan_to_arc_line(stream, payload_at, stream.readline(), True)
        if found is not None:
            stream.seek(found_at - 1)
            length = found_at - payload_at - (1 if found_at > payload_at and stream.read(1) == b"\n" else 0)
            nxt = (found_at, found_line)
            note(f"record at {where} {at} ({head.url}) claims {head.length} bytes and holds {length}: read up to the record at {where} {found_at}")
        elif stream.eof_at is not None and payload_at + length > stream.eof_at and stream.damage is None:
            note(f"record at {where} {at} is clipped (file ends inside it)")
            return Skip("truncated-record", f"{name} at {where} {at}"), False, (stream.eof_at, b"")
        stream.seek(payload_at)
    if head.url.startswith("filedesc://"):
        outcome: Page | Skip = Skip("arc-header", name)
    else:
        # a clean v1 line for warcio (it cannot split v2 lines), after the line read here
        line = f"{head.url} {head.ip} {head.date} {head.mime} {length}"
        try:
            rec = loader.parse_record_stream(stream, statusline=line, known_format="arc")
            outcome = _arc_record(rec, head, at, path, name, settings, want_images, accept)
        except Exception as exc:  # noqa: BLE001 - warcio raises many kinds of errors on bad data
            outcome = Skip("malformed-http", f"{name} at {where} {at}: {' '.join(str(exc).split())[:120]}")
    payload_end = payload_at + length
    end = stream.skip_to(payload_end)
    if end < payload_end:
        if stream.damage is not None:
            return None, False, (end, b"")
        note(f"record at {where} {at} is clipped (file ends inside it)")
        return Skip("truncated-record", f"{name} at {where} {at}"), False, (end, b"")
    if nxt is not None:
        stream.seek(nxt[0])
        stream.readline()
        return outcome, True, nxt
    nxt_at, line = _next_line(stream)
    found_in = _arc_line_within(line, False) if line and parse_arc_line(line) is None else None
    if found_in is not None and found_in[0] > 0:  # a record line right after, behind junk
        return outcome, True, (nxt_at + found_in[0], line[found_in[0] :])
    return outcome, False, (nxt_at, line)


def _arc_framed(stream: _ArcStream, payload_end: int) -> bool:
    """Whether the record whose payload ends at ``payload_end`` (by its length field) is
    followed there by a newline or the end of the file. The stream is left
    where it was (the record is buffered from its start, so going back is cheap)."""
    if stream.eof_at is not None and payload_end > stream.eof_at:
        return False
    here = stream.tell()
    if stream.skip_to(payload_end) < payload_end:
        framed = False
    else:
        line = stream.readline()
        framed = not line.strip()
    stream.seek(here)
    return framed


def _arc_record(
    rec, head: ArcHead, pos: int, path: str, name: str, settings: InputSettings, want_images: bool, accept: StatusFilter
) -> Page | Skip:
    """One ARC record parsed by warcio -> Page or Skip (the stream is read to the record's end
    by the caller)."""
    limit = settings.max_page_bytes
    url = head.url
    date = iso_date(head.date)
    http = None
    if rec.http_headers is not None and rec.http_headers.statusline:
        status_text = rec.http_headers.statusline.split(" ", 1)[0]
        http = HttpMessage(int(status_text) if status_text.isascii() and status_text.isdigit() else None, list(rec.http_headers.headers))
    if http is not None:
        media, charset = split_content_type(http.get("Content-Type"))
    else:
        media, charset = split_content_type(head.mime)
    meta: dict = {"arc_offset": pos}
    if http is not None and http.status is not None:
        meta["http_status"] = http.status
    if media:
        meta["content_type"] = media
    if not wants_body(media, want_images, settings.sniff_html):
        return Skip("not-html", media or "no content type")
    kept = bytearray()
    hasher = hashlib.sha1()
    while True:
        chunk = rec.raw_stream.read(READ_STEP)
        if not chunk:
            break
        hasher.update(chunk)
        if len(kept) <= limit:
            kept += chunk[: limit + 1 - len(kept)]
    result = _payload(bytes(kept), media, http, limit, settings, want_images)
    if result.kind == "skip":
        return Skip(result.reason, f"{name}: {url} {result.detail}".strip())
    refused = _refused_status(rec.http_headers is not None, http, accept)  # an HTTP head, if any
    if refused:
        return Skip(refused, f"{name}: {url}")
    _note_body(meta, result, limit)
    return Page(
        id=f"{name}:{pos}", url=url, body=result.body, http_charset=charset, crawl_date=date,
        payload_digest=b32_digest(hasher.digest()), source=path,
        kind="image" if result.kind == "image" else "response", truncated=result.cut, meta=meta,
    )


def _payload(raw: bytes, media: str, http, limit: int, settings: InputSettings, want_images: bool):
    """The page body from a record's raw payload (kept up to one byte over ``limit``, which
    tells that it was longer): transfer and content encodings undone, cut and sniffed."""
    return prepare_body(
        raw[:limit],
        media=media,
        transfer_encoding=http.get("Transfer-Encoding") if http else "",
        content_encoding=http.get("Content-Encoding") if http else "",
        limit=limit,
        sniff=settings.sniff_html,
        want_images=want_images,
        raw_cut=len(raw) > limit,
    )
