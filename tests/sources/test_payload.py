"""Payload kernels: HTTP heads, chunked transfer coding, content codings, digests, dates."""

from __future__ import annotations

import gzip
import hashlib
import time
import zlib

import brotli
import pytest
from hypothesis import given, settings, strategies as st

from pagetwin.sources.payload import (
    DecodeError,
    decode_content,
    dechunk,
    image_type,
    is_binary,
    iso_date,
    normalize_digest,
    parse_http_head,
    prepare_body,
    sha1_digest,
    split_content_type,
)


def _chunked(data: bytes, sizes: list[int]) -> bytes:
    out, pos, i = b"", 0, 0
    while pos < len(data):
        n = min(max(1, sizes[i % len(sizes)]), len(data) - pos)
        out += b"%x;ext=1\r\n" % n if i % 3 == 2 else b"%X\r\n" % n
        out += data[pos : pos + n] + b"\r\n"
        pos += n
        i += 1
    return out + b"0\r\n\r\n"


@settings(max_examples=60, deadline=None)
@given(data=st.binary(min_size=1, max_size=3000), sizes=st.lists(st.integers(1, 500), min_size=1, max_size=5))
def test_dechunk_inverts_chunking(data, sizes):
    assert dechunk(_chunked(data, sizes)) == data


@settings(max_examples=40, deadline=None)
@given(data=st.binary(min_size=1, max_size=5000), codec=st.sampled_from(["gzip", "deflate", "br"]))
def test_decode_content_inverts_encoding(data, codec):
    enc = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress}[codec](data)
    assert decode_content(enc, [codec], limit=10_000) == (data, True)


def test_dechunk_refuses_unchunked_and_keeps_a_clipped_tail():
    assert dechunk(b"<html>not chunked</html>") is None
    assert dechunk(b"5\r\nhello\r\n6\r\n wor") == b"hello wor"


def test_decompression_is_bounded():
    bomb = gzip.compress(b"\0" * 50_000_000)
    t = time.monotonic()
    out, complete = decode_content(bomb, ["gzip"], limit=1_000_000)
    assert len(out) == 1_000_001 and time.monotonic() - t < 2
    page = prepare_body(gzip.compress(b"<html>" + b"a" * 2_000_000), media="text/html", content_encoding="gzip", limit=1000)
    assert page.kind == "page" and page.cut and len(page.body) == 1000


def test_concatenated_gzip_members_and_unknown_codings():
    assert decode_content(gzip.compress(b"ab") + gzip.compress(b"cd"), ["gzip"], 100) == (b"abcd", True)
    for bad in (["compress"], ["gzip"]):
        try:
            decode_content(b"plain", bad, 100)
        except DecodeError:
            pass
        else:
            raise AssertionError(bad)
    assert decode_content(b"plain", ["identity"], 100) == (b"plain", True)


def test_http_head_parsing():
    msg = parse_http_head(b"HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n  charset=utf-8\r\nX: 1\r\nbroken line\r\n\r\nBODY")
    assert msg.status == 200 and msg.get("content-type") == "text/html; charset=utf-8" and msg.get("x") == "1"
    assert msg.body_offset == msg.body_offset and b"HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n  charset=utf-8\r\nX: 1\r\nbroken line\r\n\r\nBODY"[msg.body_offset:] == b"BODY"
    lf = parse_http_head(b"HTTP/1.0 404 Not Found\nContent-Type: text/html\n\n<html>")
    assert lf.status == 404 and lf.body_offset == len(b"HTTP/1.0 404 Not Found\nContent-Type: text/html\n\n")
    assert parse_http_head(b"<html>no head</html>") is None
    assert parse_http_head(b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 20000) is None  # no end of head
    assert split_content_type('text/HTML; Charset="windows-1251"') == ("text/html", "windows-1251")
    assert split_content_type(None) == ("", None)


def test_digests_and_dates():
    data = b"payload"
    assert sha1_digest(data) == normalize_digest("sha1:" + sha1_digest(data)[5:].lower())
    assert normalize_digest("sha-1:" + hashlib.sha1(data).hexdigest()) == sha1_digest(data)
    assert normalize_digest(None) is None and normalize_digest("sha1:") is None
    assert normalize_digest("SHA256:abc") == "sha256:abc"
    assert iso_date("2024-01-02T03:04:05Z") == "2024-01-02T03:04:05Z"
    assert iso_date("20080430204825") == "2008-04-30T20:48:25Z"
    assert iso_date("Tue, 11 Jan 2011 14:58:35 GMT") == "2011-01-11T14:58:35Z"
    assert iso_date("null") is None and iso_date("") is None


def test_sniffing_helpers():
    assert image_type(b"\x89PNG\r\n\x1a\n....") == "image/png"
    assert image_type(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert image_type(b"BMW is a car") is None
    assert is_binary(bytes(range(256)))
    assert not is_binary("<p>текст</p>".encode("utf-16-le"))  # UTF-16 without a BOM is text
    assert not is_binary(b"\xef\xbb\xbf<html>")


def test_non_ascii_digits_are_no_numbers():
    # found by bench/fuzz.py: "²00" is digits to str.isdigit, int() raises on it
    from pagetwin.config import ConfigError
    from pagetwin.sources.payload import StatusFilter, iso_date, parse_http_head

    head = parse_http_head("HTTP/1.1 ²00 OK\r\nContent-Type: text/html\r\n\r\n<p>x</p>".encode())
    assert head is not None and head.status is None
    assert (iso_date("²0240101") or "").isascii()  # not taken for a compact date
    with pytest.raises(ConfigError):
        StatusFilter.parse("²00")


def test_fuzz_case_http_status_of_unicode_digits_reads_on(tmp_path):
    from pagetwin.outputs.warc import WarcWriter
    from tests.fixtures.records import read_all

    path = tmp_path / "status.warc"
    with WarcWriter(path, gzip=False) as w:
        w.write_response("https://e.org/1", b"<p>one</p>")
        w.write_response("https://e.org/2", b"<p>two</p>")
    data = path.read_bytes().replace(b"HTTP/1.1 200", "HTTP/1.1 ²00".encode(), 1)
    path.write_bytes(data)
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["https://e.org/2"] and stats.skipped == {"http-status-none": 1}
    assert not any("reading stopped" in e for e in stats.errors)
