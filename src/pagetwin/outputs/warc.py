"""A WARC writer (warcio underneath: correct WARC/1.1 records with block and payload digests).

Used by the tests and the example builder to write fixtures, and by ``pagetwin dedup
--survivors`` to write the pages kept (records of WARC inputs copied byte for byte:
``copy_record``, ``read_raw_record``, ``iter_raw_records``; new records for other inputs with
every value from the input made header-safe: ``write_new_page``, ``header_value``). Each
record is its own gzip member when ``gzip=True``, so the output can be read record by record
and its records copied.

    with WarcWriter("out.warc.gz") as w:
        rid = w.write_response("https://example.org/", b"<html>...</html>")
        w.write_revisit("https://example.org/", digest, "https://example.org/", "2024-01-01T00:00:00Z")
"""

from __future__ import annotations

import gzip as gzip_module
import io
import os
import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from http import HTTPStatus
from typing import IO, Any
from zlib import decompressobj as zlib_decompressobj
from zlib import error as zlib_error

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
HeaderList = Iterable[tuple[str, str]] | Mapping[str, str]


_WARC_DATE = re.compile(r"\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f-\x9f\u2028\u2029]")


def header_value(value: Any, url: bool = False) -> str:
    """``value`` safe as one WARC header value: control characters (and, in a URL, spaces)
    percent-encoded as their UTF-8 bytes, so that no CR or LF taken from an input can start a
    header line of its own."""
    pattern = _CONTROL_OR_SPACE if url else _CONTROL
    return pattern.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode("utf-8")), str(value or "")).strip()


def new_record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


def _warc_date(date: str | datetime | None) -> str:
    if date is None:
        date = datetime.now(timezone.utc)
    if isinstance(date, datetime):
        if date.tzinfo is not None:
            date = date.astimezone(timezone.utc)
        return date.strftime("%Y-%m-%dT%H:%M:%SZ")
    return date


def _pairs(headers: HeaderList | None) -> list[tuple[str, str]]:
    if headers is None:
        return []
    if isinstance(headers, Mapping):
        return [(str(k), str(v)) for k, v in headers.items()]
    return [(str(k), str(v)) for k, v in headers]


_MAX_HEAD = 1 << 20  # a WARC head longer than this is not one


def _read_one(stream: IO[bytes]) -> tuple[str, bytes] | None:
    """The next record of a (decompressed) WARC stream as (WARC-Record-ID, exact bytes:
    version line, headers, blank line, block, then the CRLF CRLF trailer), or None at the end
    or on bytes that are no whole record."""
    found = _read_record(stream, allow_partial=False)
    return None if found is None else (found[0], found[1])


def _read_record(stream: IO[bytes], allow_partial: bool) -> tuple[str, bytes, bool] | None:
    """(id, bytes, complete). With ``allow_partial``, a record whose block ends before its
    Content-Length (a clipped file) is returned with the bytes there are (no trailer) and
    complete = False; otherwise None."""
    line = stream.readline(_MAX_HEAD)
    while line in (b"\r\n", b"\n"):  # the previous record's trailer
        line = stream.readline(_MAX_HEAD)
    if not line.startswith(b"WARC/"):
        return None
    head = bytearray(line)
    length: int | None = None
    rid = ""
    while True:
        line = stream.readline(_MAX_HEAD)
        if not line or len(head) > _MAX_HEAD:
            return None
        head += line
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.partition(b":")
        key = name.strip().lower()
        if key == b"content-length":
            text = value.strip()
            if not text.isdigit():
                return None
            length = int(text)
        elif key == b"warc-record-id":
            rid = value.strip().decode("utf-8", "replace")
    if length is None:
        return None
    try:
        block = stream.read(length)
    except (OSError, EOFError, zlib_error):
        if not allow_partial:
            raise
        block = b""
    if len(block) < length:
        return (rid, bytes(head) + block, False) if allow_partial else None
    return rid, bytes(head) + block + b"\r\n\r\n", True


def _open_at(fh: IO[bytes], offset: int) -> IO[bytes]:
    fh.seek(offset)
    magic = fh.read(2)
    fh.seek(offset)
    if magic == b"\x1f\x8b":
        return gzip_module.GzipFile(fileobj=fh, mode="rb")  # reads on across gzip members
    return fh


def read_raw_record(path: str, offset: int) -> tuple[str, bytes] | None:
    """(WARC-Record-ID, the record's exact bytes) of the record at byte ``offset`` of the WARC
    file ``path`` (gzipped record by record, or not), or None when none can be read there."""
    try:
        with open(path, "rb") as fh:
            return _read_one(_open_at(fh, offset))
    except (OSError, EOFError, ValueError, zlib_error):
        return None


def iter_raw_records(path: str) -> Iterable[tuple[str, bytes]]:
    """Every whole record of the WARC file ``path``, in order, as (WARC-Record-ID, exact
    bytes); stops at the first bytes that are no record (a damaged file)."""
    try:
        with open(path, "rb") as fh:
            stream = _open_at(fh, 0)
            while True:
                found = _read_one(stream)
                if found is None:
                    return
                yield found
    except (OSError, EOFError, ValueError, zlib_error):
        return


class _MemberStream:
    """A WARC file's decompressed bytes (gzip members one after another, or a plain file)
    with readline/read/tell, and where each gzip member started: the byte offset a reader
    (sources.warc) gives a record is its member's, so a record found here can be named as
    it is there."""

    _CHUNK = 1 << 16

    def __init__(self, fh: IO[bytes]) -> None:
        self._fh = fh
        self.gz = fh.read(2) == b"\x1f\x8b"
        fh.seek(0)
        self._buf = bytearray()
        self._pos = 0  # decompressed offset of _buf[0]
        self._raw = 0  # raw bytes consumed
        self._inflate = zlib_decompressobj(31) if self.gz else None
        self._starts: dict[int, int] = {0: 0}  # decompressed offset -> raw offset of its member
        self._out = 0  # decompressed bytes produced so far
        self._eof = False

    def _fill(self) -> bool:
        if self._eof:
            return False
        data = self._fh.read(self._CHUNK)
        if not data:
            self._eof = True
            return False
        if self._inflate is None:
            self._buf += data
            self._raw += len(data)
            self._out += len(data)
            return True
        start_raw = self._raw
        self._raw += len(data)
        while data:
            out = self._inflate.decompress(data)
            self._buf += out
            self._out += len(out)
            if not self._inflate.eof:
                break
            data = self._inflate.unused_data
            consumed = self._raw - len(data) - start_raw
            if data:
                self._starts[self._out] = start_raw + consumed
            self._inflate = zlib_decompressobj(31)
        return True

    def tell(self) -> int:
        return self._pos

    def raw_offset(self, pos: int) -> int | None:
        """The raw offset of the gzip member that starts at decompressed ``pos`` (``pos``
        itself in a plain file), or None when no member starts there."""
        return self._starts.get(pos) if self.gz else pos

    def readline(self, limit: int = -1) -> bytes:
        while True:
            end = self._buf.find(b"\n")
            if end >= 0 or (0 <= limit <= len(self._buf)) or not self._fill():
                break
        end = self._buf.find(b"\n")
        n = len(self._buf) if end < 0 else end + 1
        if limit >= 0:
            n = min(n, limit)
        return self._take(n)

    def read(self, n: int) -> bytes:
        while len(self._buf) < n and self._fill():
            pass
        return self._take(min(n, len(self._buf)))

    def _take(self, n: int) -> bytes:
        out = bytes(self._buf[:n])
        del self._buf[:n]
        self._pos += n
        if len(self._starts) > 1024:  # offsets behind us are not asked for again
            self._starts = {k: v for k, v in self._starts.items() if k >= self._pos}
        return out


def member_offsets(path: str) -> dict[int, int]:
    """{raw offset of each gzip member: its decompressed offset} of a gzipped file (an empty
    dict for a plain file, whose offsets are the same both ways). Reads the whole file."""
    with open(path, "rb") as fh:
        stream = _MemberStream(fh)
        if not stream.gz:
            return {}
        try:
            while stream._fill():
                stream._buf.clear()  # only the member boundaries are wanted
        except (OSError, EOFError, zlib_error):
            pass
        return {raw: out for out, raw in stream._starts.items()}


def iter_raw_records_at(path: str, clipped: bool = False) -> Iterable[tuple[int | None, str, bytes]]:
    """Every whole record of the WARC file ``path``, in order, as (the byte offset a WARC
    reader gives it, or None inside a gzip member holding several records; WARC-Record-ID;
    exact bytes). Stops at the first bytes that are no record (a damaged file). With
    ``clipped``, a last record cut short by the end of the file (or of its readable gzip
    data) is yielded too, with the bytes there are and no trailer (``is_clipped`` tells)."""
    try:
        with open(path, "rb") as fh:
            stream = _MemberStream(fh)
            while True:
                line = stream.readline(_MAX_HEAD)
                while line in (b"\r\n", b"\n"):
                    line = stream.readline(_MAX_HEAD)
                if not line:
                    return
                start = stream.tell() - len(line)
                found = _read_record(_Pushback(line, stream), allow_partial=clipped)
                if found is None:
                    return
                yield stream.raw_offset(start), found[0], found[1]
                if not found[2]:
                    return
    except (OSError, EOFError, ValueError, zlib_error):
        return


def is_clipped(raw: bytes) -> bool:
    """Whether a record's bytes (from ``iter_raw_records_at(clipped=True)``) are cut short."""
    return len(split_record(raw)[2]) < _declared_length(raw)


def _declared_length(raw: bytes) -> int:
    _v, fields, _b = split_record(raw)
    value = field(fields, "Content-Length") or ""
    return int(value) if value.isdigit() else 0


class _Pushback:
    """A stream that gives ``line`` first, then reads on from ``stream``."""

    def __init__(self, line: bytes, stream: _MemberStream) -> None:
        self._line: bytes | None = line
        self._stream = stream

    def readline(self, limit: int = -1) -> bytes:
        if self._line is not None:
            line, self._line = self._line, None
            return line
        return self._stream.readline(limit)

    def read(self, n: int) -> bytes:
        return self._stream.read(n)


def split_record(raw: bytes) -> tuple[bytes, list[tuple[str, str]], bytes]:
    """(version line without its CRLF, [(name, value), ...] with folded lines joined, block)
    of one record's exact bytes (as ``read_raw_record`` gives them)."""
    head_end = raw.find(b"\r\n\r\n")
    sep = 4
    if head_end < 0 or (0 <= raw.find(b"\n\n") < head_end):
        head_end, sep = raw.find(b"\n\n"), 2
    head = raw[:head_end].decode("utf-8", "replace").replace("\r\n", "\n").split("\n")
    version, fields = head[0].strip().encode(), []
    for line in head[1:]:
        if line[:1] in (" ", "\t") and fields:
            name, value = fields[-1]
            fields[-1] = (name, f"{value} {line.strip()}")
            continue
        name, _, value = line.partition(":")
        fields.append((name.strip(), value.strip()))
    length = next((int(v) for k, v in fields if k.lower() == "content-length" and v.isdigit()), 0)
    start = head_end + sep
    return version, fields, raw[start : start + length]


def field(fields: list[tuple[str, str]], name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive) in ``fields``, or None."""
    low = name.lower()
    return next((v for k, v in fields if k.lower() == low), None)


def build_record(record_type: str, fields: list[tuple[str, str]], block: bytes, version: str = "WARC/1.1") -> bytes:
    """A whole record: ``version``, WARC-Type, every header of ``fields`` (values made
    header-safe with ``header_value``; Content-Length and WARC-Block-Digest computed here,
    so ``fields`` must not hold them), the block and the trailer."""
    import base64
    import hashlib

    digest = "sha1:" + base64.b32encode(hashlib.sha1(block).digest()).decode("ascii")
    lines = [version, f"WARC-Type: {record_type}"]
    for name, value in fields:
        safe_name = re.sub(r"[^!-9;-~]", "", name)  # a field name is a token: no colon, space or control
        if safe_name:
            lines.append(f"{safe_name}: {header_value(value)}")
    lines += [f"WARC-Block-Digest: {digest}", f"Content-Length: {len(block)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"


class WarcWriter:
    """Write WARC records to a path or a binary file object (``gzip``: one member per record)."""

    def __init__(
        self,
        path_or_fileobj: str | os.PathLike | IO[bytes],
        gzip: bool = True,
        warc_version: str = "1.1",
        compresslevel: int = 6,
    ):
        if isinstance(path_or_fileobj, (str, os.PathLike)):
            self._fh: IO[bytes] = open(path_or_fileobj, "wb")
            self._owns = True
        else:
            self._fh = path_or_fileobj
            self._owns = False
        self.gzip = gzip
        self.compresslevel = compresslevel
        # warcio builds each record into a buffer; we compress it as one gzip member (level 6
        # is about three times faster than warcio's level 9, and mtime 0 makes output
        # reproducible).
        self._buf = io.BytesIO()
        self._writer = WARCWriter(self._buf, gzip=False, warc_version=warc_version)
        self.records_written = 0

    def _flush_record(self) -> None:
        data = self._buf.getvalue()
        self._buf.seek(0)
        self._buf.truncate()
        self._emit(data)

    def _emit(self, record_bytes: bytes) -> None:
        if self.gzip:
            record_bytes = gzip_module.compress(record_bytes, compresslevel=self.compresslevel, mtime=0)
        self._fh.write(record_bytes)
        self.records_written += 1

    # -- records -----------------------------------------------------------------------

    def write_warcinfo(
        self, filename: str, info: Mapping[str, str], *, date: str | datetime | None = None, record_id: str | None = None
    ) -> str:
        """A warcinfo record (``date`` and ``record_id`` fixed for reproducible files)."""
        rec = self._writer.create_warcinfo_record(filename, dict(info))
        if date is not None:
            rec.rec_headers.replace_header("WARC-Date", _warc_date(date))
        if record_id is not None:
            rec.rec_headers.replace_header("WARC-Record-ID", record_id)
        self._writer.write_record(rec)
        self._flush_record()
        return rec.rec_headers.get_header("WARC-Record-ID")

    def write_response(
        self,
        url: str,
        html_bytes: bytes,
        *,
        headers: HeaderList | None = None,
        date: str | datetime | None = None,
        record_id: str | None = None,
        content_type: str | None = "text/html; charset=utf-8",
        http_headers: HeaderList | None = None,
        status: str = "200 OK",
    ) -> str:
        """An HTTP response record. ``html_bytes`` is the payload as sent (already encoded when
        ``http_headers`` name a Content-Encoding or chunked Transfer-Encoding). Without
        ``http_headers``, Content-Type (``content_type``; None for none) and Content-Length
        are written. ``headers`` are extra WARC headers. Returns the WARC-Record-ID."""
        if http_headers is None:
            pairs = [("Content-Type", content_type)] if content_type is not None else []
            pairs.append(("Content-Length", str(len(html_bytes))))
        else:
            pairs = _pairs(http_headers)
        http = StatusAndHeaders(status, pairs, protocol="HTTP/1.1")
        return self._write("response", url, html_bytes, http, headers, date, record_id)

    def write_resource(
        self,
        url: str,
        data: bytes,
        content_type: str = "text/html; charset=utf-8",
        *,
        headers: HeaderList | None = None,
        date: str | datetime | None = None,
        record_id: str | None = None,
    ) -> str:
        """A resource record: the block is ``data`` itself, typed by ``content_type``."""
        return self._write("resource", url, data, None, headers, date, record_id, content_type)

    def write_request(self, url: str, *, date: str | datetime | None = None, record_id: str | None = None) -> str:
        """A GET request record (the kind a crawler writes beside each response)."""
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        http = StatusAndHeaders(f"GET {path} HTTP/1.1", [("Host", parts.netloc)], is_http_request=True)
        return self._write("request", url, b"", http, None, date, record_id)

    def write_revisit(
        self,
        url: str,
        payload_digest: str,
        refers_to_uri: str,
        refers_to_date: str,
        date: str | datetime | None = None,
        *,
        record_id: str | None = None,
        refers_to: str | None = None,
        http_headers: HeaderList | None = None,
        profile: str = REVISIT_PROFILE,
    ) -> str:
        """A revisit record (identical-payload-digest profile by default) for a payload whose
        digest is ``payload_digest`` ("sha1:BASE32")."""
        rec = self._writer.create_revisit_record(
            url,
            payload_digest,
            refers_to_uri,
            refers_to_date,
            http_headers=StatusAndHeaders("200 OK", _pairs(http_headers) or [("Content-Type", "text/html")], protocol="HTTP/1.1"),
            warc_headers_dict={
                "WARC-Date": _warc_date(date),
                "WARC-Record-ID": record_id or new_record_id(),
                **({"WARC-Refers-To": refers_to} if refers_to else {}),
            },
        )
        rec.rec_headers.replace_header("WARC-Profile", profile)
        self._writer.write_record(rec)
        self._flush_record()
        return rec.rec_headers.get_header("WARC-Record-ID")

    def write_raw_record(self, record_bytes: bytes) -> None:
        """Write bytes as they are: one whole record (its own gzip member when gzip), or any
        bytes a test wants in the file (a malformed record, junk)."""
        self._emit(record_bytes)

    def copy_record(self, source_path: str, offset: int, record_id: str | None = None) -> str | None:
        """Copy, byte for byte, the record that starts at byte ``offset`` of the WARC file
        ``source_path`` (a Page's ``source`` and ``meta["warc_offset"]``): its WARC headers and
        block exactly as read (gzipped again as one member when this writer gzips). With
        ``record_id``, only a record with that WARC-Record-ID is copied. Returns its
        WARC-Record-ID, or None when no (such) record can be read there."""
        found = read_raw_record(source_path, offset)
        if found is None or (record_id is not None and found[0] != record_id):
            return None
        self.write_raw_record(found[1])
        return found[0]

    def write_page(self, page: Any) -> str | None:
        """Write a page (a ``pagetwin.model.Page``), e.g. one that dedup keeps: its original
        record, copied byte for byte, when it came from a WARC file; otherwise a response
        record with its HTML (marked ``WARC-Truncated: length`` when the body was cut).
        Returns the record id written, or None for a revisit that cannot be copied."""
        offset = page.meta.get("warc_offset") if page.meta else None
        if offset is not None and page.source:
            rid = self.copy_record(page.source, offset)
            if rid is not None:
                return rid
        if page.kind != "response":
            return None
        return self.write_new_page(page)

    def write_new_page(self, page: Any) -> str:
        """A new record for a page that has no WARC record to copy (an HTML file, a JSONL line,
        an ARC record): a ``response`` with the HTTP status the page was served with, when
        known (ARC), else a ``resource``; its payload is the page's body (decoded: Content-Type
        and Content-Length only), ``WARC-Truncated: length`` when the body was cut, and the
        page's id in ``WARC-Source-Id``. Values from the input go into headers only with
        control characters (CR, LF, ...) percent-encoded, so they cannot add header lines."""
        url = header_value(page.url, url=True) or "urn:pagetwin:" + header_value(page.id, url=True)
        extra = [("WARC-Source-Id", header_value(page.id))]
        if page.truncated:
            extra.append(("WARC-Truncated", "length"))
        media = header_value((page.meta or {}).get("content_type") or "text/html").replace(" ", "") or "text/html"
        charset = header_value(page.http_charset or "").replace(" ", "")
        content_type = f"{media}; charset={charset}" if charset else media
        date = page.crawl_date if isinstance(page.crawl_date, str) and _WARC_DATE.match(page.crawl_date) else None
        status = (page.meta or {}).get("http_status")
        if isinstance(status, int) and 100 <= status <= 999:
            try:
                phrase = HTTPStatus(status).phrase
            except ValueError:
                phrase = "Unknown"
            return self.write_response(url, page.body, headers=extra, date=date, content_type=content_type, status=f"{status} {phrase}")
        return self.write_resource(url, page.body, content_type, headers=extra, date=date)

    # -- plumbing ------------------------------------------------------------------------

    def _write(
        self,
        record_type: str,
        url: str,
        payload: bytes,
        http: StatusAndHeaders | None,
        headers: HeaderList | None,
        date: str | datetime | None,
        record_id: str | None,
        warc_content_type: str | None = None,
    ) -> str:
        warc_headers: dict[str, Any] = {"WARC-Date": _warc_date(date), "WARC-Record-ID": record_id or new_record_id()}
        warc_headers.update(dict(_pairs(headers)))
        rec = self._writer.create_warc_record(
            url,
            record_type,
            payload=io.BytesIO(payload),
            length=len(payload),
            warc_content_type=warc_content_type or "",
            warc_headers_dict=warc_headers,
            http_headers=http,
        )
        if warc_content_type == "":  # asked for a record without a Content-Type (a test of sniffing)
            rec.rec_headers.remove_header("Content-Type")
            rec.content_type = ""
        self._writer.write_record(rec)
        self._flush_record()
        return rec.rec_headers.get_header("WARC-Record-ID")

    def close(self) -> None:
        if self._owns:
            self._fh.close()
        else:
            self._fh.flush()

    def __enter__(self) -> WarcWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
