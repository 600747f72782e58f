"""WARC (fastwarc) and ARC (warcio) readers.

Each reader yields, for every record it sees, either a Page or a Skip (with the reason), so
the caller can account for every record. Bad data never raises: a record that cannot be read
is skipped with a reason, and reading resumes at the next record that can be found (the next
gzip member, or the next "WARC/" line of an uncompressed file; for ARC, the next valid ARC
record line, or the next gzip member after a corrupt one).
"""

from __future__ import annotations

import hashlib
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from fastwarc.warc import ArchiveIterator

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import Skip, SourceStats
from pagetwin.sources.payload import (
    HttpMessage,
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
MAX_FILE_ERRORS = 5  # resynchronisation messages kept per file (then a count)
_NOT_PAGES = {"warcinfo", "request", "metadata", "conversion", "continuation"}


def is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


class _StreamBroken(Exception):
    """Reading a record's bytes failed (corrupt compressed data)."""


# -- WARC ---------------------------------------------------------------------------------


def iter_warc(path: str, settings: InputSettings, stats: SourceStats, want_images: bool = False) -> Iterator[Page | Skip]:
    """Every record of the WARC file ``path`` as a Page or a Skip. Raises ConfigError at once
    (not when iterated) when ``settings.statuses`` is not valid."""
    status_filter(settings.statuses)
    return _iter_warc(path, settings, stats, want_images)


def _iter_warc(path: str, settings: InputSettings, stats: SourceStats, want_images: bool) -> Iterator[Page | Skip]:
    size = os.path.getsize(path)
    gz = is_gzip(path)
    name = os.path.basename(path)
    start = 0
    in_bad_region = False  # skipping over unreadable bytes: count the region once
    n_records = 0
    n_failures = 0
    while True:
        last: int | None = None
        failure: str | None = None
        short_at: int | None = None
        try:
            with open(path, "rb") as fh:
                fh.seek(start)
                for rec in ArchiveIterator(fh, parse_http=False):
                    pos = rec.stream_pos if rec.stream_pos >= start else start + rec.stream_pos
                    if last is not None and pos <= last:
                        failure = "record offsets went backwards"
                        break
                    last = pos
                    n_records += 1
                    try:
                        outcome, short = _warc_record(rec, pos, path, name, gz, settings, want_images, stats)
                    except _StreamBroken as exc:
                        failure = str(exc) or "corrupt data"
                        break
                    # A clipped record or a broken header leaves the stream misaligned: the
                    # failure that usually follows belongs to the same bad spot.
                    in_bad_region = short or (isinstance(outcome, Skip) and outcome.reason == "malformed-header")
                    yield outcome
                    if short:  # a clipped record may have swallowed the records after it
                        short_at = pos
                        break
        except Exception as exc:  # noqa: BLE001 - fastwarc raises OSError (and others) on bad data
            failure = str(exc) or type(exc).__name__
        if failure is None and short_at is None:
            break
        if failure is not None:
            at = last if last is not None else start
            if not in_bad_region:
                n_failures += 1
                reason = "corrupt-gzip" if "zip" in failure.lower() or "decompress" in failure.lower() else "malformed-record"
                yield Skip(reason, f"{name} near byte {at}: {failure}")
                if n_failures <= MAX_FILE_ERRORS:
                    stats.error(f"{path}: unreadable data after byte {at} ({failure}); skipped to the next record")
            in_bad_region = True
        resume_after = short_at if short_at is not None else (last if last is not None else start)
        nxt = _next_candidate(path, resume_after + 1, gz, size)
        if nxt is None:
            break
        start = nxt
    if n_failures > MAX_FILE_ERRORS:
        stats.error(f"{path}: {n_failures} unreadable regions in all")
    if n_records == 0:
        stats.error(f"{path}: no WARC record could be read (not a WARC file?)")


def _next_candidate(path: str, offset: int, gz: bool, size: int) -> int | None:
    """The offset of the next place a record may start: a gzip member header in a gzip file,
    a "WARC/" line in a plain one."""
    needles = (b"\x1f\x8b\x08",) if gz else (b"WARC/1.", b"WARC/0.", b"WARC/2.")
    keep = 8
    with open(path, "rb") as fh:
        fh.seek(offset)
        base = offset
        prev = b""
        while base < size:
            chunk = fh.read(SCAN_STEP)
            if not chunk:
                return None
            data = prev + chunk
            data_start = base - len(prev)
            # Any hit will do: whether a record really starts there is for the parser to say.
            hits = [data_start + i for i in (data.find(n) for n in needles) if i >= 0]
            hits = [h for h in hits if h >= offset]
            if hits:
                return min(hits)
            prev = data[-keep:]
            base += len(chunk)
    return None


def _gzip_member_complete(path: str, offset: int) -> bool:
    """Whether the gzip member starting at ``offset`` ends properly (not cut off)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            while not d.eof:
                chunk = fh.read(SCAN_STEP)
                if not chunk:
                    return False
                d.decompress(chunk, 1 << 16)
                while d.unconsumed_tail and not d.eof:
                    d.decompress(d.unconsumed_tail, 1 << 16)
    except zlib.error:
        return False
    return True


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


def _warc_record(
    rec, pos: int, path: str, name: str, gz: bool, settings: InputSettings, want_images: bool, stats: SourceStats
) -> tuple[Page | Skip, bool]:
    """One record -> (Page or Skip, whether the record was shorter than its Content-Length)."""
    h = rec.headers
    wtype = (h.get("WARC-Type") or "").strip().lower()
    length_field = (h.get("Content-Length") or "").strip()
    if not length_field.isdigit():
        _read_rest(rec.reader, bytearray(), 0, None)
        return Skip("malformed-header", f"{name} at byte {pos}: Content-Length {length_field!r}"), False
    length = int(length_field)
    limit = settings.max_page_bytes

    first = _read(rec.reader, min(length, HEAD_BYTES)) if length else b""
    if wtype in _NOT_PAGES or wtype not in ("response", "resource", "revisit"):
        total = len(first) + _read_rest(rec.reader, bytearray(), 0, None)
        short = _short(total, length, path, pos, gz, stats)
        if short:
            return short, True
        return Skip(wtype if wtype in _NOT_PAGES else "unknown-record-type", f"{name}: {wtype!r}"), False

    rid = (h.get("WARC-Record-ID") or "").strip() or f"{name}:{pos}"
    url = (h.get("WARC-Target-URI") or "").strip().strip("<>")
    date = iso_date(h.get("WARC-Date")) or iso_date(h.get("Memento-Datetime"))
    digest = normalize_digest(h.get("WARC-Payload-Digest"))
    warc_ct = (h.get("Content-Type") or "").strip()
    is_http = "application/http" in warc_ct.lower() or first.startswith(b"HTTP/")
    http: HttpMessage | None = None
    if is_http and first.startswith(b"HTTP/"):
        http = parse_http_head(first)
        if http is None:
            total = len(first) + _read_rest(rec.reader, bytearray(), 0, None)
            return _short(total, length, path, pos, gz, stats) or Skip("malformed-http", f"{name} at byte {pos}"), total < length
    body_offset = http.body_offset if http else 0
    if http is not None:
        media, charset = split_content_type(http.get("Content-Type"))
    elif is_http:  # labelled application/http but no HTTP head: a bare payload
        media, charset = "", None
    else:
        media, charset = split_content_type(warc_ct)
    meta: dict = {"warc_offset": pos, "warc_type": wtype}
    if http is not None and http.status is not None:
        meta["http_status"] = http.status
    if media:
        meta["content_type"] = media
    truncated_by_crawler = (h.get("WARC-Truncated") or "").strip()

    if wtype == "revisit":
        total = len(first) + _read_rest(rec.reader, bytearray(), 0, None)
        short = _short(total, length, path, pos, gz, stats)
        if short:
            return short, True
        if not revisit_may_be_page(media):
            return Skip("not-html", f"{name}: revisit of {media}"), False
        # A revisit stands for its original: judged by the status it recorded, if any (304,
        # "not modified", says the original's status holds).
        status = http.status if http is not None else None
        accept = status_filter(settings.statuses)
        if status not in (None, 304) and not accept.accepts(status):
            return Skip(accept.reason(status), f"{name}: revisit {url}"), False
        profile = (h.get("WARC-Profile") or "").strip()
        meta["profile"] = profile
        if h.get("WARC-Refers-To-Date"):
            meta["refers_to_date"] = iso_date(h.get("WARC-Refers-To-Date"))
        if h.get("WARC-Refers-To"):
            meta["refers_to"] = h.get("WARC-Refers-To").strip()
        page = Page(
            id=rid, url=url, body=b"", http_charset=charset, crawl_date=date, payload_digest=digest,
            source=path, kind="revisit", refers_to_digest=digest,
            refers_to_uri=(h.get("WARC-Refers-To-Target-URI") or "").strip().strip("<>") or url, meta=meta,
        )
        return page, False

    if not wants_body(media, want_images, settings.sniff_html):
        total = len(first) + _read_rest(rec.reader, bytearray(), 0, None)
        short = _short(total, length, path, pos, gz, stats)
        if short:
            return short, True
        if not first[body_offset:].strip():
            return Skip("empty-body", f"{name}: {url}"), False
        return Skip("not-html", media or warc_ct or "no content type"), False

    keep = body_offset + limit + 1  # one byte over the limit tells that the payload was longer
    kept = bytearray(first[:keep])
    hasher = None
    if digest is None:
        hasher = hashlib.sha1()
        hasher.update(first[body_offset:])
    total = len(first) + _read_rest(rec.reader, kept, keep, hasher)
    short = _short(total, length, path, pos, gz, stats)
    if short:
        return short, True
    if digest is None and hasher is not None:
        digest = b32_digest(hasher.digest())
    result = _payload(bytes(kept[body_offset:]), media, http, limit, settings, want_images)
    if result.kind == "skip":
        return Skip(result.reason, f"{name}: {url} {result.detail}".strip()), False
    refused = _refused_status(wtype == "response" and is_http, http, settings)
    if refused:
        return Skip(refused, f"{name}: {url}"), False
    kind = "image" if result.kind == "image" else "response"
    _note_body(meta, result, limit)
    if truncated_by_crawler:
        meta["warc_truncated"] = truncated_by_crawler
    page = Page(
        id=rid, url=url, body=result.body, http_charset=charset, crawl_date=date, payload_digest=digest,
        source=path, kind=kind, truncated=result.cut or bool(truncated_by_crawler), meta=meta,
    )
    return page, False


def _refused_status(judged: bool, http: HttpMessage | None, settings: InputSettings) -> str | None:
    """The skip reason of an HTTP response whose status ``input.statuses`` does not take
    ("http-status-404"; "http-status-none" without a parsable status line); None when it is
    taken or not ``judged`` (a record that is no HTTP message: a resource, a bare payload)."""
    if not judged:
        return None
    accept = status_filter(settings.statuses)
    status = http.status if http is not None else None
    return None if accept.accepts(status) else accept.reason(status)


def _note_body(meta: dict, result, limit: int) -> None:
    if result.cut:
        meta["cut_at"] = limit
    if result.sniffed:
        meta["sniffed"] = True
    if result.partial:
        meta["content_decoding"] = "partial"


def _short(total: int, length: int, path: str, pos: int, gz: bool, stats: SourceStats) -> Skip | None:
    """A Skip when the record block is shorter than its Content-Length (clipped file)."""
    if total >= length:
        return None
    if gz and not _gzip_member_complete(path, pos):
        stats.error(f"{path}: truncated gzip member at byte {pos} (record of {length} bytes has {total})")
        return Skip("truncated-gzip", f"{os.path.basename(path)} at byte {pos}")
    stats.error(f"{path}: record at byte {pos} is clipped ({total} of {length} bytes)")
    return Skip("truncated-record", f"{os.path.basename(path)} at byte {pos}")


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


class _PlainBytes:
    """The bytes of an uncompressed file, in chunks."""

    damage: tuple[str, int, str] | None = None

    def __init__(self, fh):
        self.fh = fh

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
        nxt = _next_candidate(self.path, self.damage[1] + 1, True, self.size)
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
            outcome, misaligned, (at, line) = _arc_framed_record(stream, loader, head, at, path, name, settings, want_images, note, where)
            n_misaligned += misaligned
            if outcome is not None:
                yield outcome
    if n_misaligned:
        stats.error(f"{path}: {n_misaligned} ARC records not followed by a newline (wrong length field?)")
    if n_records == 0:
        stats.error(f"{path}: no ARC record could be read")
    note.close()


def _arc_framed_record(
    stream: _ArcStream, loader, head: ArcHead, at: int, path: str, name: str,
    settings: InputSettings, want_images: bool, note, where: str,
) -> tuple[Page | Skip | None, bool, tuple[int, bytes]]:
    """Read the record whose line ``head`` starts at ``at``: (its Page or Skip, or None when
    the stream stopped at damaged gzip data inside it, which the caller counts; whether its
    end was misaligned; the next (offset, line))."""
    payload_at = stream.tell()
    payload_end = payload_at + head.length
    if head.url.startswith("filedesc://"):
        outcome: Page | Skip = Skip("arc-header", name)
    else:
        # a clean v1 line for warcio (it cannot split v2 lines), after the line read here
        line = f"{head.url} {head.ip} {head.date} {head.mime} {head.length}"
        try:
            rec = loader.parse_record_stream(stream, statusline=line, known_format="arc")
            outcome = _arc_record(rec, head, at, path, name, settings, want_images)
        except Exception as exc:  # noqa: BLE001 - warcio raises many kinds of errors on bad data
            outcome = Skip("malformed-http", f"{name} at {where} {at}: {' '.join(str(exc).split())[:120]}")
    end = stream.skip_to(payload_end)
    if end < payload_end and stream.damage is not None:
        return None, False, (end, b"")
    if end == payload_end:
        nxt_at, nxt = _next_line(stream)
        separated = nxt_at > payload_end  # a newline ends a record (some writers leave it out)
        if not nxt or (separated and parse_arc_line(nxt) is not None):
            return outcome, False, (nxt_at, nxt)
    # Not followed by a newline and a record line, or cut off by the end of the file: the
    # length field may be too large, and the record have swallowed the records after it. Go
    # on at the first one it holds.
    stream.seek(payload_at)
    bounded = _Bounded(stream, end)
    inner_at, _, inner = _scan_to_arc_line(bounded, payload_at, bounded.readline(), True)
    if inner is not None and inner_at < end:
        stream.seek(inner_at)
        note(f"record at {where} {at} ({head.url}) claims {head.length} bytes and runs into the record at {where} {inner_at}")
        skip = Skip("malformed-record", f"{name} at {where} {at}: length field runs into the next record")
        return skip, True, _next_line(stream)
    if end < payload_end:
        note(f"record at {where} {at} is clipped (file ends inside it)")
        return Skip("truncated-record", f"{name} at {where} {at}"), False, (end, b"")
    stream.seek(nxt_at)
    stream.readline()
    found = _arc_line_within(nxt, False)  # a record line right after, maybe behind junk
    if found is None:
        return outcome, True, (nxt_at, nxt)
    return outcome, found[0] > 0, (nxt_at + found[0], nxt[found[0] :])


class _Bounded:
    """Line reads of a stream up to an end offset."""

    def __init__(self, stream: _ArcStream, end: int):
        self.stream, self.end = stream, end

    def tell(self) -> int:
        return self.stream.tell()

    def readline(self) -> bytes:
        """The next line if it starts before the end."""
        return self.stream.readline() if self.stream.tell() < self.end else b""


def _arc_record(rec, head: ArcHead, pos: int, path: str, name: str, settings: InputSettings, want_images: bool) -> Page | Skip:
    """One ARC record parsed by warcio -> Page or Skip (the stream is read to the record's end
    by the caller)."""
    limit = settings.max_page_bytes
    url = head.url
    date = iso_date(head.date)
    http = None
    if rec.http_headers is not None and rec.http_headers.statusline:
        status_text = rec.http_headers.statusline.split(" ", 1)[0]
        http = HttpMessage(int(status_text) if status_text.isdigit() else None, list(rec.http_headers.headers))
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
    refused = _refused_status(rec.http_headers is not None, http, settings)  # an HTTP head, if any
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
