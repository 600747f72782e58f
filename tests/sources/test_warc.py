"""WARC reading end to end, on files the tests write with pagetwin's own WarcWriter."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest

from pagetwin.config import InputSettings
from pagetwin.outputs.warc import WarcWriter
from pagetwin.sources.payload import sha1_digest
from tests.fixtures.records import html_page, read_all

DATE = "2024-03-01T12:00:00Z"


def test_responses_revisits_and_other_records(tmp_path):
    path = tmp_path / "crawl.warc.gz"
    a, b = html_page("Alpha"), html_page("Beta")
    with WarcWriter(path) as w:
        w.write_warcinfo("crawl.warc.gz", {"software": "pagetwin-tests"})
        w.write_request("https://example.org/a")
        id_a = w.write_response("https://example.org/a", a, date=DATE)
        id_b = w.write_response("https://example.org/b", b, date=DATE, content_type="text/html; charset=ISO-8859-1")
        w.write_response("https://example.org/style.css", b"body{color:red}", content_type="text/css")
        id_r = w.write_revisit("https://example.org/a", sha1_digest(a), "https://example.org/a", DATE, date="2024-03-02T12:00:00Z")
    pages, stats = read_all([path])
    assert [p.kind for p in pages] == ["response", "response", "revisit"]
    pa, pb, rv = pages
    assert (pa.id, pa.url, pa.body, pa.crawl_date) == (id_a, "https://example.org/a", a, DATE)
    assert pa.payload_digest == sha1_digest(a)
    assert pa.source == str(path)
    assert pb.id == id_b and pb.http_charset == "ISO-8859-1"
    assert rv.id == id_r and rv.body == b"" and rv.refers_to_digest == pa.payload_digest
    assert rv.refers_to_uri == "https://example.org/a"
    assert "identical-payload-digest" in rv.meta["profile"]
    assert stats.records_total == 6
    assert stats.pages_read == 3 and stats.revisits == 1
    assert stats.skipped == {"warcinfo": 1, "request": 1, "not-html": 1}


def test_uncompressed_warc_and_sniffing_warc_by_content(tmp_path):
    path = tmp_path / "crawl.dat"  # no telling extension: the content decides
    with WarcWriter(path, gzip=False) as w:
        w.write_response("https://example.org/", html_page("Plain"), date=DATE)
    pages, stats = read_all([path])
    assert len(pages) == 1 and pages[0].body == html_page("Plain")


def _deflate_raw(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def _chunk(data: bytes, size: int = 7) -> bytes:
    out = b"".join(b"%x\r\n%s\r\n" % (len(data[i : i + size]), data[i : i + size]) for i in range(0, len(data), size))
    return out + b"0\r\n\r\n"


@pytest.mark.parametrize(
    "encoded, headers",
    [
        (lambda b: gzip.compress(b), [("Content-Encoding", "gzip")]),
        (lambda b: gzip.compress(b), [("Content-Encoding", "x-gzip")]),
        (lambda b: zlib.compress(b), [("Content-Encoding", "deflate")]),
        (_deflate_raw, [("Content-Encoding", "deflate")]),  # raw deflate, as IIS sends it
        (lambda b: brotli.compress(b), [("Content-Encoding", "br")]),
        (lambda b: brotli.compress(gzip.compress(b)), [("Content-Encoding", "gzip, br")]),
        (lambda b: _chunk(gzip.compress(b)), [("Content-Encoding", "gzip"), ("Transfer-Encoding", "chunked")]),
        (_chunk, [("Transfer-Encoding", "chunked")]),
        (lambda b: b, [("Transfer-Encoding", "chunked")]),  # stored de-chunked, header kept
        (lambda b: b, [("Content-Encoding", "gzip")]),  # labelled gzip, sent plain
    ],
)
def test_transfer_and_content_encodings_are_undone(tmp_path, encoded, headers):
    body = html_page("Encoded", words=300)
    path = tmp_path / "enc.warc.gz"
    with WarcWriter(path) as w:
        w.write_response("https://example.org/", encoded(body), http_headers=[("Content-Type", "text/html"), *headers])
    pages, stats = read_all([path])
    assert [p.body for p in pages] == [body]


def test_undecodable_body_is_skipped_with_reason(tmp_path):
    path = tmp_path / "bad.warc.gz"
    with WarcWriter(path) as w:
        w.write_response("https://example.org/", b"\x1f\x8b\x08\x00garbage-not-deflate" * 5,
                         http_headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")])
        w.write_response("https://example.org/2", b"xx" * 40, http_headers=[("Content-Type", "text/html"), ("Content-Encoding", "compress")])
    pages, stats = read_all([path])
    assert pages == []
    assert stats.skipped == {"decode-error": 2}


def test_corrupt_gzip_tail_keeps_what_decoded(tmp_path):
    body = html_page("Partial", words=3000)
    packed = gzip.compress(body)
    path = tmp_path / "partial.warc.gz"
    with WarcWriter(path) as w:
        w.write_response("https://example.org/", packed[: len(packed) // 2],
                         http_headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")])
    pages, stats = read_all([path])
    assert len(pages) == 1
    assert body.startswith(pages[0].body) and 0 < len(pages[0].body) < len(body)
    assert pages[0].meta["content_decoding"] == "partial" and stats.partial_decodes == 1


def test_missing_or_wrong_content_type_is_sniffed(tmp_path):
    path = tmp_path / "sniff.warc.gz"
    page = html_page("Sniffed")
    with WarcWriter(path) as w:
        w.write_response("https://example.org/none", page, content_type=None)
        w.write_response("https://example.org/empty", page, content_type="")
        w.write_response("https://example.org/octet", page, content_type="application/octet-stream")
        w.write_response("https://example.org/robots.txt", b"User-agent: *\nDisallow: /\n", content_type="text/plain")
        w.write_response("https://example.org/faq.txt", b"Use <b> for bold text.\n", content_type="text/plain")
        w.write_response("https://example.org/blob", bytes(range(256)) * 4, content_type=None)
        w.write_resource("https://example.org/res", page, content_type="")
    pages, stats = read_all([path])
    assert [p.url.rsplit("/", 1)[1] for p in pages] == ["none", "empty", "octet", "res"]
    assert all(p.meta.get("sniffed") for p in pages) and stats.sniffed == 4
    assert stats.skipped == {"not-html": 3}
    no_sniff, stats2 = read_all([path], InputSettings(sniff_html=False))
    assert no_sniff == [] and stats2.skipped == {"not-html": 7}


def test_non_html_and_binary_junk_labelled_html(tmp_path):
    path = tmp_path / "junk.warc.gz"
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    with WarcWriter(path) as w:
        w.write_response("https://example.org/logo.png", png, content_type="image/png")
        w.write_response("https://example.org/app.js", b"var x = 1;", content_type="application/javascript")
        w.write_response("https://example.org/fake.html", png, content_type="text/html")
        w.write_response("https://example.org/noise.html", bytes(range(1, 32)) * 100, content_type="text/html")
        w.write_response("https://example.org/api", b'jsonp1({"a": 1})', content_type="text/html")
        w.write_response("https://example.org/empty", b"", content_type="text/html")
        w.write_response("https://example.org/ok", html_page("Fine"), content_type="text/html")
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["https://example.org/ok"]
    assert stats.skipped == {"not-html": 3, "binary-body": 2, "empty-body": 1}
    with_images, stats2 = read_all([path], want_images=True)
    assert [p.kind for p in with_images] == ["image", "response"]
    assert with_images[0].body == png and stats2.images == 1


def test_huge_page_is_cut_and_counted(tmp_path):
    body = html_page("Huge", words=20000)
    path = tmp_path / "huge.warc.gz"
    with WarcWriter(path) as w:
        w.write_response("https://example.org/huge", body)
        w.write_response("https://example.org/huge-gz", gzip.compress(body), http_headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")])
        w.write_response("https://example.org/small", html_page("Small"))
    pages, stats = read_all([path], InputSettings(max_page_bytes=10_000))
    assert [len(p.body) for p in pages[:2]] == [10_000, 10_000]
    assert all(p.truncated for p in pages[:2]) and not pages[2].truncated
    assert pages[0].body == body[:10_000] == pages[1].body
    assert pages[0].payload_digest == sha1_digest(body)  # digest of the whole payload
    assert stats.cut == 2 and stats.pages_read == 3


def test_revisit_without_digest_and_not_modified_profile(tmp_path):
    path = tmp_path / "rev.warc.gz"
    with WarcWriter(path) as w:
        w.write_revisit("https://example.org/", "sha1:ABC", "https://example.org/", DATE,
                        profile="http://netpreserve.org/warc/1.1/revisit/server-not-modified")
    pages, _ = read_all([path])
    assert pages[0].kind == "revisit" and pages[0].refers_to_digest == "sha1:ABC"
    assert pages[0].meta["profile"].endswith("server-not-modified")


def test_digest_forms_are_normalised(tmp_path):
    body = html_page("Hex")
    import hashlib

    hexdigest = hashlib.sha1(body).hexdigest()
    path = tmp_path / "hex.warc.gz"
    with WarcWriter(path) as w:
        w.write_revisit("https://example.org/", f"SHA-1:{hexdigest}", "https://example.org/", DATE)
    pages, _ = read_all([path])
    assert pages[0].refers_to_digest == sha1_digest(body)


def test_many_inputs_keep_order_and_merge_counts(tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / f"part{i}.warc.gz"
        with WarcWriter(p) as w:
            w.write_response(f"https://example.org/{i}", html_page(f"P{i}"))
            w.write_request(f"https://example.org/{i}")
        paths.append(p)
    pages, stats = read_all(paths)
    assert [p.url for p in pages] == [f"https://example.org/{i}" for i in range(3)]
    assert stats.records_total == 6 and stats.skipped == {"request": 3}


def test_revisits_of_non_html_are_not_pages(tmp_path):
    path = tmp_path / "rev.warc.gz"
    with WarcWriter(path) as w:
        w.write_revisit("https://example.org/s.css", "sha1:CSS", "https://example.org/s.css", DATE, http_headers=[("Content-Type", "text/css")])
        w.write_revisit("https://example.org/", "sha1:HTML", "https://example.org/", DATE, http_headers=[("Content-Type", "text/html; charset=utf-8")])
        w.write_revisit("https://example.org/x", "sha1:NONE", "https://example.org/x", DATE, http_headers=[("Server", "x")])
    pages, stats = read_all([path])
    assert [p.refers_to_digest for p in pages] == ["sha1:HTML", "sha1:NONE"]
    assert pages[0].http_charset == "utf-8"
    assert stats.skipped == {"not-html": 1}


# _parse_head reads the usual header (CRLF lines "name: value" up to a blank line) in one
# split (warc._plain_head); every other header goes through its line loop. Both must give the
# same head, or the same offset to look on from, for any bytes.

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_HEAD_LINES = st.sampled_from([
    b"WARC-Type: response", b"WARC-Type:response", b"warc-type: request", b"Content-Length: 12", b"Content-Length:  7 ",
    b"WARC-Target-URI: http://a.example/\xc3\xa9", b"X: \xff\xfe", b"X:", b": no name", b"\x0b: space name", b"no colon",
    b" continued", b"\tcontinued", b" folded: value", b"A: b\rc", b"WARC-Date: 2020-01-01T00:00:00Z",
    b"\x1cA\x0c: \x1fv\x1d", b"B\x0b:\x0b",  # blanks str.strip() takes and bytes.strip() does not, and both take
])  # fmt: skip
_ENDS = st.sampled_from([b"\r\n", b"\r\n", b"\r\n", b"\n", b"\r"])


@settings(max_examples=500, deadline=None)
@given(version=st.sampled_from([b"WARC/1.0\r\n", b"WARC/1.1\n"]), lines=st.lists(st.tuples(_HEAD_LINES, _ENDS), max_size=8),
       last=st.sampled_from([b"\r\n", b"\n", b"", b"\r\n\r\n"]), body=st.sampled_from([b"", b"payload", b"\r\n\r\nmore"]))  # fmt: skip
def test_property_plain_header_reads_as_the_line_loop_does(version, lines, last, body):
    import io

    from pagetwin.sources import warc

    data = version + b"".join(line + end for line, end in lines) + last + body
    fast = warc._parse_head(warc._Source(io.BytesIO(data), len(data)), 0)
    plain = warc._plain_head
    warc._plain_head = lambda *args: False
    try:
        loop = warc._parse_head(warc._Source(io.BytesIO(data), len(data)), 0)
    finally:
        warc._plain_head = plain
    if isinstance(loop, warc._Head):
        assert isinstance(fast, warc._Head)
        assert (fast.start, fast.end, fast.cut, list(fast.fields.items())) == (loop.start, loop.end, loop.cut, list(loop.fields.items()))
    else:
        assert fast == loop


def _response_record(url: str, payload: bytes, digest: str | None) -> bytes:
    import hashlib

    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + payload
    head = (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nWARC-Date: {DATE}\r\n"
        f"WARC-Record-ID: <urn:uuid:{hashlib.md5(url.encode()).hexdigest()}>\r\nContent-Type: application/http; msgtype=response\r\n"
        + (f"WARC-Payload-Digest: {digest}\r\n" if digest else "")
        + f"Content-Length: {len(block)}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


@pytest.mark.parametrize("gzipped", [True, False])
def test_a_block_read_whole_in_its_first_bytes_or_not_gives_the_same_page(tmp_path, gzipped):
    """Blocks up to HEAD_BYTES are sliced from the bytes read first, longer ones read on: on
    either side of that size, with and without a payload digest, cut or not, the body is the
    payload (up to max_page_bytes) and the digest that of the whole payload."""
    from pagetwin.sources.warc import HEAD_BYTES

    head = len(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n")
    payloads, records = [], []
    for size in (HEAD_BYTES - head - 1, HEAD_BYTES - head, HEAD_BYTES - head + 1, 3 * HEAD_BYTES):
        for given in (True, False):
            # (ending in a line end: the empty-body test must not take it for blank)
            body = html_page(f"Page {size} {given}", words=size // 5)[: size - 1].ljust(size - 1, b" ") + b"\n"
            payloads.append(body)
            url = f"https://example.org/{size}/{given}"
            records.append(_response_record(url, body, sha1_digest(body) if given else None))
    path = tmp_path / ("sizes.warc.gz" if gzipped else "sizes.warc")
    path.write_bytes(b"".join(gzip.compress(r) for r in records) if gzipped else b"".join(records))
    for limit in (HEAD_BYTES // 2, 10 * HEAD_BYTES):
        pages, stats = read_all([path], InputSettings(max_page_bytes=limit))
        assert stats.pages_read == len(payloads)
        for page, body in zip(pages, payloads):
            assert page.body == body[:limit] and page.truncated == (len(body) > limit)
            assert page.payload_digest == sha1_digest(body)
