"""HTTP payload handling shared by the readers: split an HTTP message, undo transfer and content
encodings, decide whether a payload is an HTML page, an image or something else.

Pure functions over bytes; nothing here reads files or knows about the engine.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import zlib
from dataclasses import dataclass, field
from datetime import timezone
from email.utils import parsedate_to_datetime

from pagetwin.html.parse import looks_like_html

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Labels that say nothing about the body: sniff it. "text/plain" and friends are sniffed
# strictly (the body must start like an HTML document), empty labels leniently.
_UNKNOWN_TYPES = frozenset(
    {"", "null", "none", "unknown", "unknown/unknown", "application/unknown", "*/*", "text", "html",
     "application/x-unknown", "text/x-unknown", "application/x-unknown-content-type", "no-type",
     "text/unknown", "content/unknown", "application/warc-record"}
)
_WRONG_TYPES = frozenset(
    {"application/octet-stream", "binary/octet-stream", "text/plain", "application/html",
     "application/x-html", "text/x-html", "text/htm", "text/xhtml", "application/xhtml",
     "application/xml", "text/xml", "application/x-httpd-php", "text/php"}
)
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"BM", "image/bmp"),
)
# Magic numbers of common binary formats a server may label text/html.
_BINARY_MAGIC = (
    b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"%PDF", b"PK\x03\x04", b"\x1f\x8b", b"RIFF", b"\x00\x00\x01\x00",
    b"OggS", b"ID3", b"\x7fELF", b"MZ", b"fLaC", b"wOFF", b"wOF2", b"\xca\xfe\xba\xbe", b"7z\xbc\xaf",
    b"Rar!", b"BZh", b"\xfd7zXZ", b"(\xb5/\xfd", b"FWS", b"CWS", b"\x00\x00\x00",
)
_CTRL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_ANY_TAG = re.compile(rb"<[A-Za-z!/?]")
_HEX = re.compile(rb"[0-9A-Fa-f]+")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$")


@dataclass(slots=True)
class HttpMessage:
    """An HTTP response split into status, headers and the still-encoded payload."""

    status: int | None
    headers: list[tuple[str, str]] = field(default_factory=list)
    body_offset: int = 0  # where the payload starts in the block

    def get(self, name: str, default: str = "") -> str:
        """The first non-empty value of header ``name`` (case-insensitive)."""
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name and value.strip():
                return value
        return default


def parse_http_head(block: bytes, max_head: int = 65536) -> HttpMessage | None:
    """Split an HTTP response head off ``block``. None when ``block`` does not start with a
    status line or no end of headers is found within ``max_head`` bytes."""
    if not block.startswith(b"HTTP/"):
        return None
    head_end, sep = -1, 0
    crlf = block.find(b"\r\n\r\n", 0, max_head)
    # only a "\n\n" before the "\r\n\r\n" matters: not searched for past it (through the payload)
    lf = block.find(b"\n\n", 0, crlf + 1 if crlf >= 0 else max_head)
    if crlf >= 0 and (lf < 0 or crlf <= lf):
        head_end, sep = crlf, 4
    elif lf >= 0:
        head_end, sep = lf, 2
    if head_end < 0:
        # Headers without a blank line: acceptable only when the block ends there.
        if len(block) < max_head and block.endswith((b"\n", b"\r")):
            head_end, sep = len(block.rstrip(b"\r\n")), len(block) - len(block.rstrip(b"\r\n"))
        else:
            return None
    lines = block[:head_end].decode("latin-1").replace("\r\n", "\n").split("\n")
    parts = lines[0].split(None, 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isascii() and parts[1].isdigit() else None  # not "²00"
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and headers:  # obsolete folded continuation line
            key, value = headers[-1]
            headers[-1] = (key, value + " " + line.strip())
            continue
        key, colon, value = line.partition(":")
        if colon and key.strip():
            headers.append((key.strip(), value.strip()))
    return HttpMessage(status, headers, head_end + sep)


class StatusFilter:
    """Which HTTP statuses make pages (``input.statuses``): a comma list of codes ("404"),
    classes ("2xx") and "any" (every response, also one without a parsable status line).
    ``StatusFilter.parse`` raises ConfigError on anything else."""

    __slots__ = ("any", "codes", "classes", "spec")

    def __init__(self, spec: str, any_: bool, codes: frozenset[int], classes: frozenset[int]):
        self.spec, self.any, self.codes, self.classes = spec, any_, codes, classes

    @classmethod
    def parse(cls, spec: str) -> StatusFilter:
        from pagetwin.config import ConfigError

        if not isinstance(spec, str):
            raise ConfigError(f"input.statuses must be a string such as '2xx,404' or 'any', got {spec!r}")
        any_, codes, classes = False, set(), set()
        items = [item.strip().lower() for item in spec.split(",") if item.strip()]
        if not items:
            raise ConfigError("input.statuses is empty (give codes and classes such as '2xx,404', or 'any')")
        for item in items:
            if item in ("any", "all", "*"):
                any_ = True
            elif len(item) == 3 and item[0] in "12345" and item[1:] == "xx":
                classes.add(int(item[0]))
            elif len(item) == 3 and item.isascii() and item.isdigit() and 100 <= int(item) <= 599:
                codes.add(int(item))
            else:
                raise ConfigError(
                    f"input.statuses: {item!r} is not an HTTP status (100-599), a class (1xx-5xx) or 'any'"
                    f" (got {spec!r})"
                )
        return cls(spec, any_, frozenset(codes), frozenset(classes))

    def accepts(self, status: int | None) -> bool:
        if self.any:
            return True
        if status is None:
            return False
        return status in self.codes or status // 100 in self.classes

    @staticmethod
    def reason(status: int | None) -> str:
        """The skip reason of a response refused for its status: "http-status-404", or
        "http-status-none" when it has no parsable status line."""
        return f"http-status-{status if status is not None else 'none'}"


def status_filter(spec: str) -> StatusFilter:
    """``StatusFilter.parse(spec)`` (ConfigError on a bad value). The readers parse it once
    per file."""
    return StatusFilter.parse(spec)


def split_content_type(value: str | None) -> tuple[str, str | None]:
    """"text/html; charset=UTF-8" -> ("text/html", "UTF-8"). Media type lower-cased."""
    if not value:
        return "", None
    media, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, eq, val = param.partition("=")
        if eq and key.strip().lower() == "charset":
            charset = val.strip().strip("\"'").strip() or None
    # "text/html, text/html" (a header sent twice and joined): the first one counts
    return media.split(",")[0].strip().lower(), charset


def dechunk(data: bytes) -> bytes | None:
    """Undo HTTP chunked transfer coding. None when ``data`` is not chunked at all; a body cut
    inside a chunk gives what was there."""
    out = bytearray()
    pos = 0
    n = len(data)
    first = True
    while pos < n:
        line_end = data.find(b"\n", pos, pos + 1024)
        if line_end < 0:
            if first:
                return None
            break
        size_field = data[pos:line_end].split(b";", 1)[0].strip()
        if not _HEX.fullmatch(size_field or b"-"):
            if first:
                return None
            break  # junk after the chunks: keep what was decoded
        first = False
        size = int(size_field, 16)
        pos = line_end + 1
        if size == 0:
            break
        out += data[pos : pos + size]
        pos += size
        # CRLF after the chunk data
        if data[pos : pos + 2] == b"\r\n":
            pos += 2
        elif data[pos : pos + 1] == b"\n":
            pos += 1
    return bytes(out)


class DecodeError(Exception):
    """A content encoding that could not be undone."""


def _inflate(data: bytes, wbits: int, limit: int) -> tuple[bytes, bool]:
    """zlib-inflate ``data`` (gzip members are concatenated). Returns (output, complete).
    Output stops at ``limit + 1`` bytes. Feeds the input piecewise so that a corrupt tail
    still leaves the output decoded before it."""
    out = bytearray()
    d = zlib.decompressobj(wbits)
    step = 1 << 16
    pos = 0
    while pos < len(data) and len(out) <= limit:
        piece = data[pos : pos + step]
        pos += len(piece)
        try:
            out += d.decompress(piece, limit + 1 - len(out))
            while d.unconsumed_tail and len(out) <= limit:
                out += d.decompress(d.unconsumed_tail, limit + 1 - len(out))
        except zlib.error as exc:
            if out:
                return bytes(out), False
            raise DecodeError(str(exc)) from exc
        if d.eof:
            rest = d.unused_data + data[pos:]
            if wbits > 16 + 8 and rest.startswith(b"\x1f\x8b"):  # another gzip member
                d = zlib.decompressobj(wbits)
                data, pos = rest, 0
                continue
            return bytes(out), True
    return bytes(out), d.eof or len(out) > limit


def _unbrotli(data: bytes, limit: int) -> tuple[bytes, bool]:
    import brotli

    d = brotli.Decompressor()
    out = bytearray()
    try:
        out += d.process(data, output_buffer_limit=limit + 1)
        while len(out) <= limit and not d.is_finished() and not d.can_accept_more_data():
            more = d.process(b"", output_buffer_limit=limit + 1 - len(out))
            if not more:
                break
            out += more
    except brotli.error as exc:
        if out:
            return bytes(out), False
        raise DecodeError(f"brotli: {exc}") from exc
    return bytes(out), d.is_finished() or len(out) > limit


def _unzstd(data: bytes, limit: int) -> tuple[bytes, bool]:
    import io

    from fastwarc.stream_io import ZstdReader

    try:
        out = ZstdReader(io.BytesIO(data)).read(limit + 1)
    except Exception as exc:  # noqa: BLE001 - any codec failure is a decode error
        raise DecodeError(f"zstd: {exc}") from exc
    return out, True


def decode_content(data: bytes, encodings: list[str], limit: int) -> tuple[bytes, bool]:
    """Undo the content codings listed (in the order the server applied them).

    Returns (body, complete). ``complete`` is False when a coding stopped early (corrupt or
    truncated stream); the body then holds what could be decoded. Raises DecodeError when
    nothing could be decoded.
    """
    complete = True
    for enc in reversed(encodings):
        enc = enc.strip().lower()
        if enc in ("", "identity", "none", "null", "binary", "utf-8", "utf8", "8bit", "7bit", "text", "plain"):
            continue
        if enc in ("gzip", "x-gzip", "gz"):
            if data.startswith(b"\x1f\x8b"):
                data, ok = _inflate(data, 16 + zlib.MAX_WBITS, limit)
            elif data[:1] == b"\x78":  # zlib stream mislabelled gzip
                data, ok = _inflate(data, zlib.MAX_WBITS, limit)
            else:
                raise DecodeError("not gzip data")
        elif enc in ("deflate", "x-deflate"):
            try:
                data, ok = _inflate(data, zlib.MAX_WBITS, limit)  # zlib-wrapped, as the RFC says
            except DecodeError:
                data, ok = _inflate(data, -zlib.MAX_WBITS, limit)  # raw deflate, as IIS sends
        elif enc in ("br", "brotli", "x-br"):
            data, ok = _unbrotli(data, limit)
        elif enc in ("zstd", "x-zstd"):
            data, ok = _unzstd(data, limit)
        else:
            raise DecodeError(f"unknown content encoding {enc!r}")
        complete = complete and ok
    return data, complete


def encoding_list(value: str) -> list[str]:
    return [v.strip().lower() for v in value.split(",") if v.strip()]


def image_type(body: bytes) -> str | None:
    """The image media type the magic bytes of ``body`` announce, if any."""
    for magic, media in _IMAGE_MAGIC:
        if body.startswith(magic):
            if media == "image/bmp" and body[6:10] != b"\x00\x00\x00\x00":
                continue  # "BM" alone is too weak: check the reserved zero bytes as well
            return media
    if body[:4] == b"RIFF" and body[8:12] == b"WEBP":
        return "image/webp"
    if body[4:12] in (b"ftypavif", b"ftypheic", b"ftypmif1"):
        return "image/avif"
    return None


def is_binary(body: bytes) -> bool:
    """True when ``body`` is not text: a known binary magic number, NUL bytes or many control
    characters at its start. UTF-16 text (a BOM) counts as text."""
    head = body[:4096]
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        return False
    if head.startswith(_BINARY_MAGIC):
        return True
    if b"\x00" in head:
        return utf16_text(head) is None
    return len(_CTRL.findall(head)) > max(2, len(head) // 100)


def utf16_text(head: bytes) -> str | None:
    """``head`` decoded when it is UTF-16 text without a BOM (many NULs on one byte parity,
    decodes cleanly, few control characters); None otherwise."""
    head = head[: len(head) // 2 * 2]
    for codec, high_bytes in (("utf-16-le", head[1::2]), ("utf-16-be", head[0::2])):
        if not high_bytes or high_bytes.count(0) < len(high_bytes) * 0.3:
            continue
        try:
            text = head.decode(codec)
        except UnicodeDecodeError:
            continue
        controls = sum(1 for c in text if c < " " and c not in "\r\n\t\x0c")
        if controls <= len(text) // 100 + 1:
            return text
    return None


def looks_like_json(body: bytes) -> bool:
    head = body[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head[:1] in (b"{", b"[") and not head[:2] == b"[i"  # "[if IE]" comments aside


def sha1_digest(data: bytes) -> str:
    """WARC-style payload digest: "sha1:" + base32 of the SHA-1 (algorithm-mandated SHA-1)."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def b32_digest(raw_digest: bytes, algorithm: str = "sha1") -> str:
    """"sha1:" + base32 of a finished hash digest."""
    return f"{algorithm}:" + base64.b32encode(raw_digest).decode("ascii")


def normalize_digest(value: str | None) -> str | None:
    """"SHA1:abc..", "sha-1:<hex>" -> "sha1:BASE32". Other algorithms keep their value."""
    if not value:
        return None
    value = value.strip()
    algo, colon, digest = value.partition(":")
    if not colon:
        algo, digest = "sha1", value
    algo = algo.strip().lower().replace("-", "")
    digest = digest.strip()
    if not digest:
        return None
    if algo == "sha1":
        if len(digest) == 40 and all(c in "0123456789abcdefABCDEF" for c in digest):
            try:
                digest = base64.b32encode(binascii.unhexlify(digest)).decode("ascii")
            except (binascii.Error, ValueError):
                pass
        else:
            digest = digest.upper()
    return f"{algo}:{digest}"


def iso_date(value: str | None) -> str | None:
    """An ISO 8601 date from a WARC-Date, a 14-digit ARC date or an HTTP date; None if none."""
    if not value:
        return None
    value = value.strip()
    if _ISO_DATE.match(value):
        return value
    if value.isascii() and value.isdigit() and len(value) >= 8:
        v = value.ljust(14, "0")[:14]
        return f"{v[0:4]}-{v[4:6]}-{v[6:8]}T{v[8:10]}:{v[10:12]}:{v[12:14]}Z"
    try:
        dt = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if dt is None:
        return None
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class Body:
    """What a payload turned out to be: a page, an image, or a reason to skip it."""

    kind: str  # "page", "image" or "skip"
    body: bytes = b""
    reason: str = ""  # why it is skipped
    detail: str = ""
    cut: bool = False  # cut at the byte limit
    sniffed: bool = False  # HTML by its body, not its label
    partial: bool = False  # a content encoding stopped early; body holds what was decoded


def _skip(reason: str, detail: str = "") -> Body:
    return Body("skip", reason=reason, detail=detail)


def wants_body(media: str, want_images: bool, sniff: bool) -> bool:
    """Whether a payload with this media type can become a page (or a wanted image): the
    others are skipped without reading their bytes."""
    if media in HTML_TYPES:
        return True
    if media.startswith("image/") and media != "image/svg+xml":
        return want_images
    if sniff and (media in _UNKNOWN_TYPES or media in _WRONG_TYPES or "/" not in media):
        return True
    return False


def revisit_may_be_page(media: str) -> bool:
    """A revisit has no body to sniff: it stands for a page when the type it recorded is HTML
    or says nothing (a revisit of a style sheet, script or image is not a page)."""
    return media in HTML_TYPES or media in _UNKNOWN_TYPES


def prepare_body(
    raw: bytes,
    *,
    media: str,
    transfer_encoding: str = "",
    content_encoding: str = "",
    limit: int,
    sniff: bool = True,
    want_images: bool = False,
    raw_cut: bool = False,
) -> Body:
    """Decode a raw HTTP payload and decide what it is.

    ``media`` is the lower-cased media type of the label ("" when there is none); ``limit`` the
    byte cap on a page body (longer ones are cut); ``raw_cut`` says the raw payload was already
    cut by the reader (the page is then marked cut as well).
    """
    partial = False
    if "chunked" in transfer_encoding.lower():
        dechunked = dechunk(raw)
        if dechunked is not None:  # many crawlers store the body de-chunked but keep the header
            raw = dechunked
    body = raw
    encodings = encoding_list(content_encoding)
    if encodings:
        try:
            body, complete = decode_content(raw, encodings, limit)
            partial = not complete and not raw_cut
        except DecodeError as exc:
            if looks_like_html(raw) and not is_binary(raw):
                body = raw  # labelled compressed, sent plain
            else:
                return _skip("decode-error", str(exc))
    if not body or body.isspace():  # (not body.strip(), which copies a body that ends in a line end)
        return _skip("empty-body")
    sniffed = False
    if media in HTML_TYPES:
        if not looks_like_html(body):
            if image_type(body) or is_binary(body):
                return _skip("binary-body", f"labelled {media}")
            if looks_like_json(body) or not _ANY_TAG.search(body, 0, 8192):
                # JSON(P) or script answers of APIs, labelled text/html: no page to speak of
                return _skip("not-html", f"no HTML markup, labelled {media}")
        kind = "page"
    elif media.startswith("image/") and media != "image/svg+xml":
        if not want_images or not (image_type(body) or is_binary(body)):
            return _skip("not-html", media)
        kind = "image"
    elif sniff and (media in _UNKNOWN_TYPES or "/" not in media):
        if looks_like_html(body):
            kind, sniffed = "page", True
        elif want_images and image_type(body):
            kind = "image"
        else:
            return _skip("not-html", media or "no content type")
    elif sniff and media in _WRONG_TYPES:
        if looks_like_html(body, strict=True):
            kind, sniffed = "page", True
        elif want_images and image_type(body):
            kind = "image"
        else:
            return _skip("not-html", media)
    else:
        return _skip("not-html", media)
    if kind == "image":
        if len(body) > limit or raw_cut:
            return _skip("image-too-large")
        return Body("image", body)
    cut = raw_cut or len(body) > limit
    return Body("page", body[:limit], cut=cut, sniffed=sniffed, partial=partial)
