"""ARC files (read with warcio), written by hand byte by byte."""

from __future__ import annotations

import gzip

from pagetwin.sources import input_kind
from pagetwin.sources.payload import sha1_digest
from tests.fixtures.records import arc_file, arc_record, html_page, http, read_all


def _records():
    page1, page2 = html_page("One"), html_page("Two")
    return page1, page2, [
        arc_record("dns:example.org", b"20080430204826\nexample.org. 300 IN A 1.2.3.4\n", mime="text/dns"),
        arc_record("http://example.org/", http(page1, "text/html; charset=utf-8")),
        arc_record("http://example.org/logo.gif", http(b"GIF89a" + bytes(100), "image/gif"), mime="image/gif"),
        arc_record("http://example.org/two", http(gzip.compress(page2), "text/html", [("Content-Encoding", "gzip")]), date="20080501000000"),
    ]


def test_arc_plain_and_gzipped(tmp_path):
    page1, page2, records = _records()
    plain = tmp_path / "crawl.arc"
    plain.write_bytes(arc_file(records))
    packed = tmp_path / "crawl.arc.gz"
    # one gzip member per record, as ARC writers do
    packed.write_bytes(b"".join(gzip.compress(r) for r in [arc_file([])] + records))
    for path in (plain, packed):
        pages, stats = read_all([path])
        assert [p.url for p in pages] == ["http://example.org/", "http://example.org/two"]
        assert pages[0].body == page1 and pages[1].body == page2
        assert pages[0].http_charset == "utf-8"
        assert pages[0].crawl_date == "2008-04-30T20:48:26Z" and pages[1].crawl_date == "2008-05-01T00:00:00Z"
        # the digest is computed over the payload as stored, like WARC-Payload-Digest
        assert pages[0].payload_digest == sha1_digest(page1)
        assert pages[0].id.startswith(path.name + ":")
        assert stats.records_total == 5 and stats.skipped == {"arc-header": 1, "not-html": 2}


def test_arc_is_told_from_warc_by_content(tmp_path):
    _, _, records = _records()
    disguised = tmp_path / "crawl.warc.gz"  # an ARC under a WARC name
    disguised.write_bytes(gzip.compress(arc_file(records)))
    assert input_kind(str(disguised)) == "arc"
    pages, _ = read_all([disguised])
    assert len(pages) == 2


def test_arc_images_when_wanted(tmp_path):
    _, _, records = _records()
    path = tmp_path / "crawl.arc"
    path.write_bytes(arc_file(records))
    pages, stats = read_all([path], want_images=True)
    assert [p.kind for p in pages] == ["response", "image", "response"]
    assert stats.images == 1


def test_clipped_arc_is_counted_and_survived(tmp_path):
    _, _, records = _records()
    path = tmp_path / "clipped.arc"
    data = arc_file(records)
    path.write_bytes(data[:-200])
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["http://example.org/"]
    assert sum(stats.skipped.values()) == stats.records_total - 1
    assert set(stats.skipped) - {"arc-header", "not-html"}  # the clipped record has its own reason
