"""The WARC writer: records other readers accept, with correct digests."""

from __future__ import annotations

import gzip
import io

import pytest
from fastwarc.warc import ArchiveIterator
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from pagetwin.outputs.warc import WarcWriter
from pagetwin.sources.payload import sha1_digest

HTML = b"<!DOCTYPE html><html><body><p>Hello, archive.</p></body></html>"


def _write(target, gz):
    with WarcWriter(target, gzip=gz) as w:
        ids = {
            "info": w.write_warcinfo("t.warc", {"software": "pagetwin"}),
            "resp": w.write_response("https://example.org/", HTML, date="2024-05-01T10:00:00Z", record_id="<urn:uuid:00000000-0000-0000-0000-000000000001>"),
            "req": w.write_request("https://example.org/?q=1"),
            "res": w.write_resource("https://example.org/r", HTML, "text/html"),
            "rev": w.write_revisit("https://example.org/", sha1_digest(HTML), "https://example.org/", "2024-05-01T10:00:00Z", date="2024-05-02T10:00:00Z"),
        }
        assert w.records_written == 5
    return ids


@pytest.mark.parametrize("gz", [True, False])
def test_records_read_back_with_valid_digests(tmp_path, gz):
    path = tmp_path / ("t.warc.gz" if gz else "t.warc")
    ids = _write(path, gz)
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b" if gz else raw.startswith(b"WARC/1.1\r\n")
    recs = list(ArchiveIterator(str(path), parse_http=False, verify_digests=False))
    assert [str(r.record_type) for r in recs] == ["warcinfo", "response", "request", "resource", "revisit"]
    assert [r.headers.get("WARC-Record-ID") for r in recs] == list(ids.values())
    resp = recs[1]
    assert resp.headers.get("WARC-Date") == "2024-05-01T10:00:00Z"
    assert resp.headers.get("WARC-Payload-Digest") == sha1_digest(HTML)
    # an independent reader checks block and payload digests
    with open(path, "rb") as fh:
        for rec in WarcioIterator(fh, check_digests="raise"):
            rec.content_stream().read()
    rev = recs[4]
    assert rev.headers.get("WARC-Profile").endswith("identical-payload-digest")
    assert rev.headers.get("WARC-Refers-To-Target-URI") == "https://example.org/"


def test_file_object_stays_open_and_each_record_is_a_gzip_member():
    buf = io.BytesIO()
    _write(buf, True)
    assert not buf.closed
    data = buf.getvalue()
    members = 0
    import zlib

    while data:
        d = zlib.decompressobj(31)
        d.decompress(data)
        assert d.eof
        data = d.unused_data
        members += 1
    assert members == 5


def test_raw_records_and_copies(tmp_path):
    src = tmp_path / "src.warc.gz"
    with WarcWriter(src) as w:
        w.write_response("https://example.org/a", HTML.replace(b"Hello", b"One"))
        w.write_response("https://example.org/b", HTML.replace(b"Hello", b"Two"))
    offsets = [r.stream_pos for r in ArchiveIterator(str(src))]
    dst = tmp_path / "dst.warc.gz"
    with WarcWriter(dst) as w:
        rid = w.copy_record(str(src), offsets[1])
        w.write_raw_record(b"WARC/1.1\r\nWARC-Type: metadata\r\nContent-Length: 0\r\n\r\n\r\n\r\n")
        assert w.copy_record(str(src), 5) is None  # no record starts there
    recs = [(r.headers.get("WARC-Record-ID"), str(r.record_type), r.reader.read()) for r in ArchiveIterator(str(dst), parse_http=False)]
    assert recs[0][0] == rid and b"Two" in recs[0][2]
    assert recs[1][1] == "metadata"
    with open(dst, "rb") as fh:  # the copy keeps valid digests
        for rec in WarcioIterator(fh, check_digests="raise"):
            rec.content_stream().read()
    assert gzip.decompress(dst.read_bytes()).count(b"WARC/1.1") == 2


def test_http_headers_are_written_as_given(tmp_path):
    path = tmp_path / "h.warc"
    body = gzip.compress(HTML)
    with WarcWriter(path, gzip=False) as w:
        w.write_response("https://example.org/", body, http_headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")], status="404 Not Found")
    raw = path.read_bytes()
    assert b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n" in raw
    assert raw.count(body) == 1


def test_same_inputs_give_identical_bytes(tmp_path):
    def build(path):
        with WarcWriter(path) as w:
            w.write_warcinfo("x.warc.gz", {"software": "pagetwin"}, date="2024-01-01T00:00:00Z", record_id="<urn:uuid:1>")
            w.write_response("https://example.org/", HTML, date="2024-01-01T00:00:00Z", record_id="<urn:uuid:2>")
            w.write_revisit("https://example.org/", sha1_digest(HTML), "https://example.org/", "2024-01-01T00:00:00Z",
                            date="2024-01-02T00:00:00Z", record_id="<urn:uuid:3>")
        return path.read_bytes()

    assert build(tmp_path / "a.warc.gz") == build(tmp_path / "b.warc.gz")


def test_write_page_copies_warc_records_and_writes_other_pages(tmp_path):
    from pagetwin.config import InputSettings
    from pagetwin.sources import SourceStats, iter_pages

    src = tmp_path / "src.warc.gz"
    with WarcWriter(src) as w:
        w.write_request("https://example.org/a")
        rid = w.write_response("https://example.org/a", HTML, date="2024-05-01T10:00:00Z")
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "p.html").write_bytes(HTML.replace(b"Hello", b"Folder"))
    pages = list(iter_pages([str(src), str(folder)], InputSettings(), SourceStats()))
    out = tmp_path / "out.warc.gz"
    with WarcWriter(out) as w:
        written = [w.write_page(p) for p in pages]
    assert written[0] == rid
    again = list(iter_pages([str(out)], InputSettings(), SourceStats()))
    assert [p.body for p in again] == [p.body for p in pages]
    assert again[0].id == rid and again[0].crawl_date == "2024-05-01T10:00:00Z"
    assert again[1].url == pages[1].url and again[1].payload_digest == pages[1].payload_digest


@pytest.mark.parametrize("gz", [True, False])
def test_raw_records_at_give_the_offsets_the_reader_gives(tmp_path, gz):
    from pagetwin.config import Settings
    from pagetwin.outputs.warc import iter_raw_records, iter_raw_records_at, read_raw_record
    from pagetwin.sources import SourceStats, iter_pages

    path = tmp_path / ("t.warc.gz" if gz else "t.warc")
    _write(path, gz)
    found = list(iter_raw_records_at(str(path)))
    assert [(rid, raw) for _off, rid, raw in found] == list(iter_raw_records(str(path)))
    for off, rid, raw in found:
        assert read_raw_record(str(path), off) == (rid, raw)
    offsets = {rid: off for off, rid, _raw in found}
    pages = list(iter_pages([str(path)], Settings().input, SourceStats()))
    assert pages and all(offsets[p.id] == p.meta["warc_offset"] for p in pages)


def test_raw_records_in_one_gzip_member_have_no_offset(tmp_path):
    from pagetwin.outputs.warc import iter_raw_records_at

    plain = tmp_path / "t.warc"
    _write(plain, False)
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    found = list(iter_raw_records_at(str(whole)))
    assert len(found) == 5 and found[0][0] == 0 and all(off is None for off, _r, _b in found[1:])
