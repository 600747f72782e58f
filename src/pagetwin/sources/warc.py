"""WARC (fastwarc) and ARC (warcio) readers.

Each reader yields, for every record it sees, either a Page or a Skip (with the reason), so
the caller can account for every record. Bad data never raises: a record that cannot be read
is skipped with a reason, and reading resumes at the next record that can be found (the next
gzip member, or the next "WARC/" line of an uncompressed file).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from collections.abc import Iterator

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


def sniff_archive(path: str) -> str | None:
    """"warc", "arc" or None, from the first bytes of the file (decompressed if gzip)."""
    with open(path, "rb") as fh:
        raw = fh.read(65536)
    head = raw
    if raw[:2] == b"\x1f\x8b":
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, 4096)
        except zlib.error:
            return None
    head = head.lstrip(b"\r\n \t")
    if head.startswith(b"WARC/"):
        return "warc"
    if head.startswith(b"filedesc://"):
        return "arc"
    first = head.split(b"\n", 1)[0].split(b" ")
    # ARC v1 record line without a filedesc: URL IP DATE MIME LENGTH
    if len(first) == 5 and first[2].isdigit() and len(first[2]) == 14 and first[4].strip().isdigit():
        return "arc"
    return None


class _StreamBroken(Exception):
    """Reading a record's bytes failed (corrupt compressed data)."""


# -- WARC ---------------------------------------------------------------------------------


def iter_warc(path: str, settings: InputSettings, stats: SourceStats, want_images: bool = False) -> Iterator[Page | Skip]:
    """Every record of the WARC file ``path`` as a Page or a Skip."""
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
    kind = "image" if result.kind == "image" else "response"
    _note_body(meta, result, limit)
    if truncated_by_crawler:
        meta["warc_truncated"] = truncated_by_crawler
    page = Page(
        id=rid, url=url, body=result.body, http_charset=charset, crawl_date=date, payload_digest=digest,
        source=path, kind=kind, truncated=result.cut or bool(truncated_by_crawler), meta=meta,
    )
    return page, False


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


def iter_arc(path: str, settings: InputSettings, stats: SourceStats, want_images: bool = False) -> Iterator[Page | Skip]:
    """Every record of the ARC file ``path`` as a Page or a Skip (warcio reads ARC)."""
    from warcio.archiveiterator import ArchiveIterator as WarcioIterator

    name = os.path.basename(path)
    limit = settings.max_page_bytes
    n_records = 0
    it = None
    try:
        # Decompress here (warcio refuses a gzip ARC that is one member, not one per record).
        with (gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")) as fh:
            it = WarcioIterator(fh, arc2warc=False, ensure_http_headers=False)
            it.INC_RECORD = ""  # warcio prints this warning to stderr; we count it instead
            for rec in it:
                n_records += 1
                pos = it.offset
                try:
                    outcome = _arc_record(rec, pos, path, name, limit, settings, want_images)
                    if isinstance(outcome, Skip) and outcome.reason == "truncated-record":
                        stats.error(f"{path}: record at byte {pos} is clipped (file ends inside it)")
                    yield outcome
                except _StreamBroken as exc:
                    reason = "truncated-gzip" if isinstance(exc.__cause__, EOFError) else "corrupt-gzip"
                    yield Skip(reason, f"{name} at byte {pos}: {exc}")
                    stats.error(f"{path}: unreadable data at byte {pos} ({exc}); rest of the file skipped")
                    return
    except Exception as exc:  # noqa: BLE001 - warcio raises many kinds of errors on bad data
        msg = " ".join(str(exc).split())[:200] or type(exc).__name__
        if isinstance(exc, EOFError):
            reason = "truncated-gzip"
        elif isinstance(exc, (zlib.error, gzip.BadGzipFile)):
            reason = "corrupt-gzip"
        else:
            reason = "malformed-record"
        yield Skip(reason, f"{name}: {msg}")
        stats.error(f"{path}: unreadable ARC data after {n_records} records ({msg}); rest of the file skipped")
    misaligned = it.err_count if it is not None else 0
    if misaligned:
        stats.error(f"{path}: {misaligned} ARC records not followed by a newline (wrong length field?)")
    if n_records == 0:
        stats.error(f"{path}: no ARC record could be read")


def _arc_record(rec, pos: int, path: str, name: str, limit: int, settings: InputSettings, want_images: bool) -> Page | Skip:
    if rec.rec_type in ("arc_header", "warcinfo"):
        _drain(rec.raw_stream)
        return Skip("arc-header", name)
    hd = rec.rec_headers
    url = (hd.get_header("uri") or hd.get_header("WARC-Target-URI") or "").strip()
    date = iso_date(hd.get_header("archive-date") or hd.get_header("WARC-Date"))
    http = None
    if rec.http_headers is not None and rec.http_headers.statusline:
        status_text = rec.http_headers.statusline.split(" ", 1)[0]
        http = HttpMessage(int(status_text) if status_text.isdigit() else None, list(rec.http_headers.headers))
    if http is not None:
        media, charset = split_content_type(http.get("Content-Type"))
    else:
        media, charset = split_content_type(hd.get_header("content-type"))
    meta: dict = {"arc_offset": pos}
    if http is not None and http.status is not None:
        meta["http_status"] = http.status
    if media:
        meta["content_type"] = media
    if not wants_body(media, want_images, settings.sniff_html):
        _drain(rec.raw_stream)
        return Skip("not-html", media or "no content type")
    kept = bytearray()
    hasher = hashlib.sha1()
    try:
        while True:
            chunk = rec.raw_stream.read(READ_STEP)
            if not chunk:
                break
            hasher.update(chunk)
            if len(kept) <= limit:
                kept += chunk[: limit + 1 - len(kept)]
    except Exception as exc:  # noqa: BLE001
        raise _StreamBroken(str(exc)) from exc
    if getattr(rec.raw_stream, "limit", 0):
        return Skip("truncated-record", f"{name} at byte {pos}")
    result = _payload(bytes(kept), media, http, limit, settings, want_images)
    if result.kind == "skip":
        return Skip(result.reason, f"{name}: {url} {result.detail}".strip())
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


def _drain(stream) -> None:
    try:
        while stream.read(READ_STEP):
            pass
    except Exception as exc:  # noqa: BLE001
        raise _StreamBroken(str(exc)) from exc
