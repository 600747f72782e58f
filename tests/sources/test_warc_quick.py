"""The WARC reader's quick path (the native _warc.record_at and warc._quick_record) yields
exactly what its Python path yields: the same Pages and Skips, in order, and the same
accounting and messages, on generated records (damaged ones too) and on the real WARCs."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pagetwin.config import InputSettings
from pagetwin.sources import warc
from pagetwin.sources.base import SourceStats

pytestmark = pytest.mark.skipif(warc._record_at is None, reason="the native module _warc is not built")

SHARED_WARCS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "warc"


def _read(path, quick: bool, monkeypatch, settings_: InputSettings | None = None, span=None):
    """(records, the stats' errors and skips) of reading ``path`` with or without the quick path."""
    with monkeypatch.context() as m:
        if not quick:
            m.setattr(warc, "_record_at", None)
        stats = SourceStats()
        s = settings_ or InputSettings()
        if span is None:
            records = list(warc.iter_warc(str(path), s, stats))
        else:
            records = list(warc.iter_warc_span(str(path), span[0], span[1], s, stats))
    return records, stats.errors


def _same_both_ways(path, monkeypatch, settings_=None, span=None):
    quick, quick_errors = _read(path, True, monkeypatch, settings_, span)
    plain, plain_errors = _read(path, False, monkeypatch, settings_, span)
    assert len(quick) == len(plain)
    for a, b in zip(quick, plain):
        assert a == b
        if hasattr(a, "meta"):
            assert list(a.meta.items()) == list(b.meta.items())  # (in the same order: it is written out)
    assert quick_errors == plain_errors
    return quick


# -- generated records -------------------------------------------------------------------------

_HTML = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>Some words here.</p></body></html>"


def _mostly(common, *odd):
    """``common`` most of the time, else one of ``odd``: the usual record, often."""
    return st.sampled_from([common] * (8 * len(odd)) + list(odd))


_bodies = _mostly(_HTML, b"", b"   \r\n", b"\x89PNG\r\n\x1a\n" + bytes(40), b'{"a": 1}', b"just text", _HTML * 3,
                  gzip.compress(_HTML), b"5\r\n<html\r\n0\r\n\r\n", "<html><body>é ü</body></html>".encode("utf-8"))  # fmt: skip
_http_field = st.tuples(
    _mostly("Content-Type", "content-type", "CONTENT-TYPE ", "Transfer-Encoding", "Content-Encoding", "Server", "X-A",
            " Folded", "\tTab", "", "Naïve"),
    _mostly("text/html; charset=utf-8", "text/html", "image/png", "text/plain", "", " ", "gzip", "chunked",
            "application/octet-stream", " text/html ", "a:b", "\x7f", "x\x0by", "TEXT/HTML;CHARSET=latin-1"),
)  # fmt: skip
_status_lines = _mostly(
    "HTTP/1.1 200 OK", "HTTP/1.0 404 Not Found", "HTTP/1.1 200", "HTTP/1.1", "HTTP/1.1  301  Moved",
    "HTTP/1.1 0200 OK", "HTTP/1.1 2x0 Bad", "HTTP/1.1\t200\tOK", "HTTP/2 503 ", "HTTP/1.1 1234567890 Long",
)  # fmt: skip


@st.composite
def _http_block(draw) -> bytes:
    if draw(st.integers(0, 9)) == 0:
        return draw(_bodies)  # a bare payload
    eol = draw(_mostly("\r\n", "\n"))
    lines = [draw(_status_lines)] + [f"{k}: {v}" if k != "" else v for k, v in draw(st.lists(_http_field, max_size=4))]
    head = eol.join(lines).encode("utf-8") + draw(_mostly(b"\r\n\r\n", b"\n\n", b"\r\n\n", b"\r\n"))
    return head + draw(_bodies)


_warc_types = _mostly("response", "Response ", "resource", "revisit", "request", "warcinfo", "")
_warc_extra = st.lists(
    st.sampled_from([
        ("WARC-Payload-Digest", "sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), ("WARC-Payload-Digest", ""),
        ("WARC-Record-ID", "<urn:uuid:1>"), ("WARC-Date", "2024-01-01T00:00:00Z"), ("WARC-Date", "not a date"),
        ("Memento-Datetime", "Mon, 01 Jan 2024 00:00:00 GMT"), ("WARC-Truncated", "length"),
        ("warc-target-uri", "<https://example.org/second>"), ("X-Odd", "é"), ("X-Empty", ""),
        ("Content-Length", "7"), ("WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"),
        ("WARC-Refers-To-Target-URI", "https://example.org/0"), ("WARC-Type", "request"),
    ]),
    max_size=3,
)  # fmt: skip


@st.composite
def _record(draw) -> bytes:
    block = draw(_http_block())
    fields = [("WARC-Type", draw(_warc_types)), ("WARC-Target-URI", draw(_mostly("https://example.org/a", "<https://e.org/b>", "")))]
    if draw(st.booleans()):
        fields.append(("Content-Type", draw(_mostly("application/http; msgtype=response", "text/html", ""))))
    length = len(block) + draw(_mostly(0, 1, -1, 5, -5))
    length_text = draw(_mostly(str(max(length, 0)), f" {length}", "0" + str(length), "x", "", "\x1c12", "1" * 20))
    fields.append((draw(_mostly("Content-Length", "content-length", "Content-Length ")), length_text))
    fields += draw(_warc_extra)
    draw(st.randoms()).shuffle(fields)
    eol = draw(_mostly("\r\n", "\n"))
    version = draw(_mostly("WARC/1.0", "WARC/1.1", "WARC/0.17", "WARC/1.12345", "WARC/3.0", "WARC/1.0 "))
    head = (version + eol + "".join(f"{k}: {v}{eol}" for k, v in fields) + eol).encode("utf-8")
    if draw(st.integers(0, 9)) == 0:  # a continuation line
        head = head.replace(b"\r\nWARC-Type", b"\r\n folded\r\nWARC-Type", 1)
    return head + block + draw(_mostly(b"\r\n\r\n", b"\r\n", b"", b"\r\n\r\n\r\n", b"\x00\x00\r\n\r\n", b"\n\n"))


_damage = st.lists(st.tuples(st.sampled_from(["flip", "cut", "junk"]), st.integers(0, 10**5), st.integers(0, 255)), max_size=2)


def _damaged(data: bytes, ops) -> bytes:
    buf = bytearray(data)
    for op, at, arg in ops:
        if not buf:
            break
        at %= len(buf)
        if op == "flip":
            buf[at] ^= arg or 1
        elif op == "cut":
            del buf[at:]
        else:
            buf[at:at] = b"junk\r\n"
    return bytes(buf)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(records=st.lists(_record(), min_size=1, max_size=5), damage=_damage, gz=st.sampled_from(["plain", "members", "one"]),
       limit=st.sampled_from([5_000_000, 40]), statuses=st.sampled_from(["2xx", "any", "404"]))  # fmt: skip
def test_property_quick_path_reads_as_the_python_path(tmp_path, monkeypatch, records, damage, gz, limit, statuses):
    if gz == "plain":
        data = _damaged(b"".join(records), damage)
    elif gz == "members":  # one record per gzip member, as crawlers write them
        data = _damaged(b"".join(gzip.compress(r) for r in records), damage)
    else:
        data = _damaged(gzip.compress(b"".join(records)), damage)
    path = tmp_path / "gen.warc.gz"
    path.write_bytes(data)
    _same_both_ways(path, monkeypatch, InputSettings(max_page_bytes=limit, statuses=statuses))


def test_quick_path_reads_the_usual_record(tmp_path, monkeypatch):
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nServer: x\r\n\r\n" + _HTML
    head = f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://example.org/\r\nContent-Length: {len(block)}\r\n\r\n"
    record = head.encode() + block + b"\r\n\r\n"
    found = warc._record_at(record, 0, len(record), len(record))
    assert found is not None
    start, head_end, end, fields, http = found
    assert (start, head_end, end) == (0, len(head), len(head) + len(block))
    assert fields == {"warc-type": "response", "warc-target-uri": "https://example.org/", "content-length": str(len(block))}
    assert http == (warc.HTTP_READ, 200, "text/html; charset=utf-8", "", "", block.index(b"<!DOCTYPE"))
    path = tmp_path / "one.warc.gz"
    path.write_bytes(gzip.compress(record) + gzip.compress(record))
    pages = _same_both_ways(path, monkeypatch)
    assert [p.body for p in pages] == [_HTML, _HTML]
    assert warc._record_at(b"\r\n\r\n", 0, 4, 4) == ()  # only blanks left: the loop ends
    assert warc._record_at(record, 0, len(record), 0) == ()  # starts at or after stop
    assert warc._record_at(b"\r\n\r\n", 0, 9, 9) is None  # blanks to the end of a window: the Python path looks on
    # a wrong length is framed by the Python path
    assert warc._record_at(record.replace(b"Length: ", b"Length: 1"), 0, len(record) + 1, len(record) + 1) is None


# -- the real WARCs ------------------------------------------------------------------------------


def _real_warcs() -> list[Path]:
    return sorted(p for p in SHARED_WARCS.rglob("*") if p.name.endswith((".warc.gz", ".warc")))


@pytest.mark.skipif(not SHARED_WARCS.is_dir(), reason="shared data not linked")
@pytest.mark.parametrize("path", _real_warcs(), ids=lambda p: p.name)
def test_real_warcs_read_the_same_both_ways(path, monkeypatch, tmp_path):
    _same_both_ways(path, monkeypatch, InputSettings(statuses="any"))
    _same_both_ways(path, monkeypatch)
    # decompressed: a plain WARC, read through a window of the file
    plain = tmp_path / "plain.warc"
    try:
        plain.write_bytes(gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes())
    except (OSError, EOFError, zlib.error):
        return  # a damaged file: its gzip reading is compared above
    _same_both_ways(plain, monkeypatch)
    _same_both_ways(plain, monkeypatch, span=(0, plain.stat().st_size // 2))  # the records that start in its first half
