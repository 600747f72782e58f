"""--survivors: kept WARC records copied byte for byte, new records for other inputs with no
header injection, a warcinfo record first, truncation marked."""

from __future__ import annotations

import gzip
import json

import pytest
from fastwarc.warc import ArchiveIterator
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from pagetwin import __version__
from pagetwin.cli import main
from pagetwin.outputs import warc as warc_module
from pagetwin.outputs.warc import WarcWriter, iter_raw_records
from tests.fixtures.news import article, page
from tests.fixtures.records import arc_file, arc_record, http


def _html(title, seed):
    return page(title, article(seed)).encode()


def _http_headers(body, server="nginx/1.2"):
    return [
        ("Content-Type", "text/html; charset=utf-8"),
        ("Server", server),
        ("Date", "Wed, 01 May 2024 10:00:00 GMT"),
        ("Content-Length", str(len(body))),
    ]


def _crawl(path, gz=True):
    """200, 404 and 501 responses (Server, Date headers), a request, a copy of the 200 page, a
    hand-made record with odd spacing, and one record twice."""
    ids = {}
    with WarcWriter(path, gzip=gz) as w:
        w.write_warcinfo(path.name, {"software": "test crawler"})
        one = _html("One", 1)
        w.write_request("https://a.example/1")
        ids["ok"] = w.write_response("https://a.example/1", one, http_headers=_http_headers(one), date="2024-05-01T10:00:00Z")
        ids["copy"] = w.write_response("https://b.example/1-copy", one, http_headers=_http_headers(one, "apache"), date="2024-05-02T10:00:00Z")
        gone = _html("Gone", 2)
        ids["404"] = w.write_response("https://a.example/gone", gone, http_headers=_http_headers(gone), status="404 Not Found")
        broken = _html("Broken", 3)
        ids["501"] = w.write_response("https://a.example/broken", broken, http_headers=_http_headers(broken), status="501 Not Implemented")
        odd = _html("Odd", 4)
        block = b"HTTP/1.0 200  Fine\r\nServer:   x\r\ncontent-type: text/html\r\n\r\n" + odd
        ids["odd"] = "<urn:uuid:0dd00000-0000-0000-0000-000000000001>"
        raw = (
            b"WARC/1.0\r\nWARC-Type:  response\r\nWARC-Record-ID: " + ids["odd"].encode()
            + b"\r\nWARC-Target-URI: https://a.example/odd\r\nWARC-Date: 2024-05-03T10:00:00Z\r\n"
            + b"Content-Type: application/http; msgtype=response\r\n"
            + f"Content-Length: {len(block)}\r\n\r\n".encode() + block + b"\r\n\r\n"
        )
        twice = _html("Twice", 5)
        w.write_raw_record(raw)
        ids["twice"] = w.write_response("https://a.example/twice", twice, record_id="<urn:uuid:7e1ce000-0000-0000-0000-000000000001>")
        w.write_response("https://a.example/twice", twice, record_id="<urn:uuid:7e1ce000-0000-0000-0000-000000000001>")
    return ids


def _dedup(tmp_path, *inputs, extra=()):
    out = tmp_path / "out"
    kept_file = tmp_path / "kept.warc.gz"
    args = ["dedup", *map(str, inputs), "--out", str(out), "--workers", "1", "--survivors", str(kept_file), *extra]
    assert main(args) == 0
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().split("\n") if line]
    summary = json.loads((out / "summary.json").read_text())
    return kept_file, rows, summary


def _check_digests(path):
    """Every record of ``path`` read with warcio (digests checked) and fastwarc (verified);
    returns the fastwarc record types in order."""
    with open(path, "rb") as fh:
        for rec in WarcioIterator(fh, check_digests="raise"):
            rec.content_stream().read()
    types = []
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh, parse_http=False):
            if rec.headers.get("WARC-Block-Digest"):
                assert rec.verify_block_digest(), rec.record_id
            types.append(rec.headers.get("WARC-Type"))
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh):  # HTTP heads parsed: the payload is the block after them
            if rec.headers.get("WARC-Type") != "response":  # fastwarc verifies HTTP payloads only
                assert rec.headers.get("WARC-Payload-Digest") in (None, rec.headers.get("WARC-Block-Digest"))
            elif rec.headers.get("WARC-Payload-Digest"):
                assert rec.verify_payload_digest(), rec.record_id
    return types


@pytest.mark.parametrize("layout", ["gz", "plain", "found-by-scan"])
def test_kept_warc_records_are_copied_byte_for_byte(tmp_path, layout, monkeypatch):
    crawl = tmp_path / ("crawl.warc" if layout == "plain" else "crawl.warc.gz")
    ids = _crawl(crawl, gz=layout != "plain")
    if layout == "found-by-scan":  # no record where the offset says: found by id in one scan
        monkeypatch.setattr(warc_module, "read_raw_record", lambda path, offset: None)
    kept_file, rows, summary = _dedup(tmp_path, crawl, extra=["--set", "input.statuses=any"])
    kept = {r["id"] for r in rows if r["keep"]}
    assert ids["404"] in kept and ids["501"] in kept and ids["odd"] in kept and ids["twice"] in kept
    assert len({ids["ok"], ids["copy"]} & kept) == 1  # one of the two copies
    assert summary["survivors_written"] == len(kept)

    originals = dict(iter_raw_records(str(crawl)))
    copies = list(iter_raw_records(str(kept_file)))
    info_id, info = copies[0]
    assert b"WARC-Type: warcinfo" in info and f"software: pagetwin {__version__}".encode() in info
    assert sorted(rid for rid, _ in copies[1:]) == sorted(kept)  # each once, the twice-read one too
    for rid, raw in copies[1:]:
        assert raw == originals[rid]
    assert b"HTTP/1.1 501 Not Implemented\r\n" in dict(copies)[ids["501"]]
    assert b"Server: nginx/1.2\r\n" in dict(copies)[ids["404"]]
    assert b"WARC-Type:  response\r\n" in dict(copies)[ids["odd"]]  # not even re-spaced
    assert _check_digests(kept_file) == ["warcinfo"] + ["response"] * len(kept)


def test_default_statuses_keep_only_2xx(tmp_path):
    crawl = tmp_path / "crawl.warc.gz"
    ids = _crawl(crawl)
    kept_file, rows, _ = _dedup(tmp_path, crawl)
    written = {rid for rid, _ in list(iter_raw_records(str(kept_file)))[1:]}
    assert ids["404"] not in written and ids["501"] not in written and ids["odd"] in written


def test_values_from_the_input_cannot_inject_headers(tmp_path):
    feed = tmp_path / "feed.jsonl"
    lines = [
        {"id": "a\r\nWARC-Type: revisit", "url": "https://x.example/a", "html": _html("Alpha", 11).decode()},
        {"id": "b", "url": "https://x.example/b\r\nContent-Length: 5", "html": _html("Beta", 12).decode()},
        {"id": "c\nWARC-Record-ID: <urn:uuid:1>\x00", "url": "https://x.example/c\u2028x y", "html": _html("Gamma", 13).decode()},
    ]
    feed.write_text("".join(json.dumps(line) + "\n" for line in lines))
    kept_file, rows, summary = _dedup(tmp_path, feed)
    assert summary["survivors_written"] == sum(r["keep"] for r in rows) == 3
    assert _check_digests(kept_file) == ["warcinfo", "resource", "resource", "resource"]
    with open(kept_file, "rb") as fh:
        recs = [r for r in WarcioIterator(fh) if r.rec_type == "resource"]
        heads = [(r.rec_headers.get_header("WARC-Source-Id"), r.rec_headers.get_header("WARC-Target-URI")) for r in recs]
        lengths = [int(r.rec_headers.get_header("Content-Length")) for r in recs]
    assert ("a%0D%0AWARC-Type: revisit", "https://x.example/a") in heads
    assert ("b", "https://x.example/b%0D%0AContent-Length:%205") in heads
    assert ("c%0AWARC-Record-ID: <urn:uuid:1>%00", "https://x.example/c%E2%80%A8x%20y") in heads
    assert all(n > 1000 for n in lengths)
    raw = gzip.decompress(kept_file.read_bytes())
    assert raw.count(b"\r\nWARC-Type: ") == 4 and raw.count(b"\r\nWARC-Record-ID: ") == 4


def test_new_records_for_arc_and_html_and_truncation(tmp_path):
    arc = tmp_path / "crawl.arc"
    arc.write_bytes(arc_file([arc_record("https://arc.example/p", http(_html("Arc page", 21), extra=[("Server", "old")]))]))
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "long.html").write_bytes(_html("Long page", 22) * 3)
    kept_file, rows, summary = _dedup(tmp_path, arc, tmp_path / "pages", extra=["--set", "input.max_page_bytes=4000"])
    assert summary["survivors_written"] == 2
    assert _check_digests(kept_file) == ["warcinfo", "response", "resource"]
    with open(kept_file, "rb") as fh:
        recs = list(WarcioIterator(fh))
    assert recs[0].rec_headers.get_header("software") is None  # warcinfo fields are in the block
    assert recs[1].http_headers.statusline == "200 OK" and recs[1].rec_headers.get_header("WARC-Target-URI") == "https://arc.example/p"
    assert recs[2].rec_headers.get_header("WARC-Truncated") == "length"
    assert recs[2].rec_headers.get_header("WARC-Source-Id") == "long.html"
    assert recs[1].rec_headers.get_header("WARC-Truncated") is None
