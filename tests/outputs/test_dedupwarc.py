"""The dedup'd WARC: every input record once, in order, exact payload duplicates as
identical-payload-digest revisits, near duplicates beside a metadata record; re-read by
warcio and fastwarc with every digest checked, and compared record by record with the input."""

from __future__ import annotations

import io
import json
import os

from fastwarc.warc import ArchiveIterator
from hypothesis import HealthCheck, given, settings as hsettings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from bench.warcout import compare_with_inputs
from pagetwin import __version__
from pagetwin.config import Settings
from pagetwin.index.sqlite import Index
from pagetwin.outputs.dedupwarc import write_dedup_warc
from pagetwin.outputs.warc import REVISIT_PROFILE, WarcWriter, iter_raw_records, split_record
from pagetwin.sources.payload import sha1_digest

PAGE_A = b"<html><head><title>A</title></head><body><p>" + b"The same article. " * 40 + b"</p></body></html>"
PAGE_C = PAGE_A.replace(b"</p>", b" One more line.</p>")  # a near duplicate of A
PAGE_D = b"<html><body><p>Something else entirely.</p></body></html>"


def _http(body, server="nginx"):
    return [("Content-Type", "text/html; charset=utf-8"), ("Server", server), ("Content-Length", str(len(body)))]


def _crawl(path):
    ids = {}
    with WarcWriter(path) as w:
        ids["info"] = w.write_warcinfo(path.name, {"software": "test crawler"})
        ids["req_a"] = w.write_request("https://a.example/1")
        ids["a"] = w.write_response("https://a.example/1", PAGE_A, http_headers=_http(PAGE_A), date="2024-05-01T10:00:00Z")
        ids["req_b"] = w.write_request("https://b.example/copy")
        ids["b"] = w.write_response("https://b.example/copy", PAGE_A, http_headers=_http(PAGE_A, "apache"), date="2024-05-02T10:00:00Z")
        ids["c"] = w.write_response("https://c.example/near", PAGE_C, http_headers=_http(PAGE_C), date="2024-05-03T10:00:00Z")
        ids["d"] = w.write_response("https://d.example/", PAGE_D, http_headers=_http(PAGE_D), date="2024-05-04T10:00:00Z")
        ids["cut"] = w.write_response(
            "https://e.example/cut", PAGE_A, http_headers=_http(PAGE_A), headers=[("WARC-Truncated", "length")]
        )
        ids["res"] = w.write_resource("https://f.example/r", b"plain", "text/plain")
        buf = io.BytesIO()
        ids["twice"] = WarcWriter(buf, gzip=False).write_response("https://g.example/t", PAGE_D + b"!")
        w.write_raw_record(buf.getvalue())
        w.write_raw_record(buf.getvalue())  # the same record twice in the file
    return ids


def _raw_offsets(path):
    from pagetwin.outputs.warc import iter_raw_records_at

    return {rid: off for off, rid, _raw in iter_raw_records_at(str(path))}


def _index(tmp_path, crawl, ids, kept="a"):
    """An index as dedup leaves it: A, B (same payload), C (near) in one cluster, D alone."""
    index = Index(tmp_path / "index.sqlite", {})
    source = os.path.abspath(crawl)
    pids = {}
    for key, url, body in (("a", "https://a.example/1", PAGE_A), ("b", "https://b.example/copy", PAGE_A),
                           ("c", "https://c.example/near", PAGE_C), ("d", "https://d.example/", PAGE_D)):
        pids[key] = index.add_page({
            "id": ids[key], "url": url, "host": url.split("/")[2], "source": source, "kind": "response",
            "crawl_date": None, "text_len": len(body), "payload_digest": sha1_digest(body), "refers_to_digest": None,
            "lang": "en", "title": key, "text": body, "error": None,
        })
    index.replace_clusters([(pids["a"], "c1", int(kept == "a")), (pids["b"], "c1", int(kept == "b")),
                            (pids["c"], "c1", 0), (pids["d"], "c2", 1)])
    return index


class _Rec:
    """What a test reads of a record (fastwarc records live only while iterated)."""

    def __init__(self, rec):
        self.type = rec.headers.get("WARC-Type").lower()
        self.headers = {k: v for k, v in reversed(list(rec.headers))}  # the first of a repeated name
        self.digest_ok = rec.verify_block_digest() if rec.headers.get("WARC-Block-Digest") else None
        self.block = rec.reader.read()


def _records(path):
    with open(path, "rb") as fh:
        return [_Rec(r) for r in ArchiveIterator(fh, parse_http=False)]


def _assert_valid(path):
    """warcio reads every record with digest checks raising; fastwarc: every block digest valid."""
    n = 0
    with open(path, "rb") as fh:
        for rec in WarcioIterator(fh, check_digests="raise"):
            (rec.content_stream() if rec.rec_type == "response" else rec.raw_stream).read()
            n += 1
    recs = _records(path)
    assert len(recs) == n
    for rec in recs:
        assert rec.digest_ok in (None, True), rec.headers.get("WARC-Record-ID")
    return recs


def test_every_record_once_exact_copies_as_revisits_near_copies_with_metadata(tmp_path):
    crawl = tmp_path / "crawl.warc.gz"
    ids = _crawl(crawl)
    index = _index(tmp_path, crawl, ids)
    out = tmp_path / "dedup.warc.gz"
    stats = write_dedup_warc([str(crawl)], Settings(), index, out)

    recs = _assert_valid(out)
    types = [r.type for r in recs]
    # the output's warcinfo, then the input's records in order; B as a revisit, C then its metadata;
    # the repeated record once
    assert types == ["warcinfo", "warcinfo", "request", "response", "request", "revisit", "response", "metadata",
                     "response", "response", "resource", "response"]
    assert recs[0].headers.get("WARC-Type") == "warcinfo"
    assert f"pagetwin {__version__}".encode() in recs[0].block
    rids = [r.headers.get("WARC-Record-ID") for r in recs]
    assert len(set(rids)) == len(rids)

    revisit = recs[5]
    assert revisit.headers.get("WARC-Record-ID") == ids["b"]
    assert revisit.headers.get("WARC-Profile") == REVISIT_PROFILE
    assert revisit.headers.get("WARC-Refers-To") == ids["a"]
    assert revisit.headers.get("WARC-Refers-To-Target-URI") == "https://a.example/1"
    assert revisit.headers.get("WARC-Refers-To-Date") == "2024-05-01T10:00:00Z"
    assert revisit.headers.get("WARC-Payload-Digest") == sha1_digest(PAGE_A)
    assert revisit.headers.get("WARC-Date") == "2024-05-02T10:00:00Z"
    block = revisit.block
    assert block.startswith(b"HTTP/1.1 200 OK\r\n") and b"Server: apache\r\n" in block and block.endswith(b"\r\n\r\n")
    assert PAGE_A not in block and int(revisit.headers.get("Content-Length")) == len(block)

    meta = recs[7]
    assert meta.headers.get("WARC-Concurrent-To") == ids["c"]
    assert meta.headers.get("WARC-Target-URI") == "https://c.example/near"
    body = json.loads(meta.block)
    assert body["cluster"] == "c1" and body["cluster_size"] == 3 and body["relation"] == "near-duplicate"
    assert body["kept"] == {"id": ids["a"], "url": "https://a.example/1"}
    # the truncated copy of A is not a revisit: its digest describes no whole payload
    assert recs[9].headers.get("WARC-Record-ID") == ids["cut"] and recs[9].headers.get("WARC-Truncated") == "length"

    assert stats.revisits_made == 1 and stats.metadata_made == 1 and stats.repeated_dropped == 1
    assert stats.records_in["response"] == 7 and stats.records_out["response"] == 5
    check = compare_with_inputs([str(crawl)], str(out))
    assert check["problems"] == []
    assert check["counts"]["repeat_dropped"] == 1 and check["counts"]["revisit_made"] == 1
    assert check["counts"]["revisit_refers_to_output_record"] == 1 and check["counts"]["ids_written_twice"] == 0


def test_the_index_kept_page_stays_whole_even_when_a_copy_comes_first(tmp_path):
    crawl = tmp_path / "crawl.warc.gz"
    ids = _crawl(crawl)
    index = _index(tmp_path, crawl, ids, kept="b")
    out = tmp_path / "dedup.warc"
    write_dedup_warc([str(crawl)], Settings(), index, out)
    recs = _assert_valid(out)
    by_id = {r.headers.get("WARC-Record-ID"): r for r in recs}
    assert by_id[ids["a"]].headers.get("WARC-Type") == "revisit"
    assert by_id[ids["a"]].headers.get("WARC-Refers-To") == ids["b"]
    assert by_id[ids["b"]].headers.get("WARC-Type") == "response"
    check = compare_with_inputs([str(crawl)], str(out))
    assert check["problems"] == []


def test_a_reused_id_with_other_bytes_gets_a_new_id(tmp_path):
    crawl = tmp_path / "crawl.warc"
    rid = "<urn:uuid:00000000-0000-0000-0000-00000000000a>"
    with WarcWriter(crawl, gzip=False) as w:
        w.write_response("https://a.example/", PAGE_D, record_id=rid)
        w.write_response("https://a.example/", PAGE_C, record_id=rid)
    out = tmp_path / "o.warc"
    stats = write_dedup_warc([str(crawl)], Settings(), None, out)
    recs = _assert_valid(out)
    assert stats.renamed == 1
    rids = [r.headers.get("WARC-Record-ID") for r in recs]
    assert rids[1] == rid and rids[2] != rid and len(set(rids)) == 3


def test_values_from_the_input_cannot_add_header_lines(tmp_path):
    """A bare CR inside the original's URI (a header line is split on LF) is percent-encoded in
    the revisit's WARC-Refers-To-Target-URI."""
    crawl = tmp_path / "crawl.warc"
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"
    block = http + PAGE_D
    first = (
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-0000000000b1>\r\n"
        b"WARC-Target-URI: https://a.example/x\rWARC-Type: conversion\r\nWARC-Date: 2024-05-01T10:00:00Z\r\n"
        b"Content-Type: application/http; msgtype=response\r\n" + f"Content-Length: {len(block)}\r\n\r\n".encode() + block + b"\r\n\r\n"
    )
    with WarcWriter(crawl, gzip=False) as w:
        w.write_raw_record(first)
        w.write_response("https://b.example/", PAGE_D, record_id="<urn:uuid:00000000-0000-0000-0000-0000000000b2>")
    out = tmp_path / "o.warc"
    write_dedup_warc([str(crawl)], Settings(), None, out)
    recs = _assert_valid(out)
    revisit = recs[2]
    assert revisit.headers.get("WARC-Type") == "revisit"
    assert revisit.headers.get("WARC-Refers-To-Target-URI") == "https://a.example/x%0DWARC-Type:%20conversion"
    raw = [r for _rid, r in iter_raw_records(str(out))][2]
    _v, fields, _b = split_record(raw)
    assert [k for k, _ in fields].count("WARC-Type") == 1


def test_folder_of_inputs_and_other_formats(tmp_path):
    """A folder is walked; a JSONL page has no record to copy: a new record, and its exact copy
    in another file a revisit of it."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps({"id": "j1", "url": "https://j.example/", "html": PAGE_D.decode()}) + "\n")
    with WarcWriter(folder / "b.warc.gz") as w:
        w.write_resource("https://k.example/", PAGE_D, "text/html; charset=utf-8")
    out = tmp_path / "o.warc.gz"
    stats = write_dedup_warc([str(folder)], Settings(), None, out)
    recs = _assert_valid(out)
    assert [r.type for r in recs] == ["warcinfo", "resource", "resource"]
    assert stats.files == 2 and stats.revisits_made == 0  # only responses become revisits in a WARC
    # the same page twice in JSONL: the second is a revisit of the first's new record
    (folder / "a.jsonl").write_text("\n".join(json.dumps({"id": f"j{i}", "url": f"https://j.example/{i}", "html": PAGE_D.decode()}) for i in (1, 2)) + "\n")
    write_dedup_warc([str(folder / "a.jsonl")], Settings(), None, out)
    recs = _assert_valid(out)
    assert [r.type for r in recs] == ["warcinfo", "resource", "revisit"]
    assert recs[2].headers.get("WARC-Refers-To") == recs[1].headers.get("WARC-Record-ID")
    assert recs[2].headers.get("WARC-Payload-Digest") == sha1_digest(PAGE_D)


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["response", "request", "resource", "metadata"]), st.integers(0, 3)), min_size=1, max_size=12))
def test_any_crawl_compares_record_by_record(tmp_path_factory, spec):
    """Whatever the records: output = input with each later response of a payload a revisit of
    the first, ids unique, digests valid, and the record-by-record comparison finds nothing."""
    tmp = tmp_path_factory.mktemp("prop")
    crawl = tmp / "c.warc.gz"
    bodies = [b"<html><p>%d</p></html>" % i for i in range(4)]
    with WarcWriter(crawl) as w:
        for kind, n in spec:
            url = f"https://x.example/{n}"
            if kind == "response":
                w.write_response(url, bodies[n])
            elif kind == "request":
                w.write_request(url)
            elif kind == "resource":
                w.write_resource(url, bodies[n])
            else:
                w._write("metadata", url, bodies[n], None, None, None, None, "application/json")
    out = tmp / "o.warc.gz"
    stats = write_dedup_warc([str(crawl)], Settings(), None, out)
    recs = _assert_valid(out)
    responses = [n for kind, n in spec if kind == "response"]
    assert stats.revisits_made == len(responses) - len(set(responses))
    assert len(recs) == len(spec) + 1
    check = compare_with_inputs([str(crawl)], str(out))
    assert check["problems"] == [] and check["counts"]["ids_written_twice"] == 0
    for rec in recs:
        if rec.headers.get("WARC-Type") == "revisit":
            assert rec.headers.get("WARC-Refers-To") is not None


def test_arc_records_all_written_as_warc_records(tmp_path):
    """Every ARC record is in the output (the filedesc as warcinfo), its block as read; an exact
    copy a revisit of the first; the index's page ids (file:offset) name the records, so a near
    duplicate gets its metadata record."""
    import gzip

    from pagetwin.sources import SourceStats, iter_pages
    from tests.fixtures.records import arc_file, arc_record, http

    one, near = PAGE_A, PAGE_C
    records = [arc_record("https://a.example/1", http(one)), arc_record("https://b.example/copy", http(one)),
               arc_record("https://c.example/near", http(near)), arc_record("https://a.example/logo.png", http(b"\x89PNG", "image/png"))]
    data = arc_file(records, "t.arc")
    path = tmp_path / "t.arc.gz"
    # one gzip member per record, as crawlers write them
    chunks, rest = [], data
    first_end = data.index(b"\n\n") + 2
    chunks.append(data[:first_end])
    rest = data[first_end:]
    for rec in records:
        chunks.append(rest[: len(rec)])
        rest = rest[len(rec):]
    path.write_bytes(b"".join(gzip.compress(c) for c in chunks))
    pages = list(iter_pages([str(path)], Settings().input, SourceStats()))
    assert len(pages) == 3
    index = Index(tmp_path / "index.sqlite", {})
    pids = [index.add_page({"id": p.id, "url": p.url, "host": "h", "source": os.path.abspath(p.source), "kind": "response",
                            "crawl_date": None, "text_len": 1, "payload_digest": p.payload_digest, "refers_to_digest": None,
                            "lang": "en", "title": "", "text": None, "error": None}) for p in pages]
    index.replace_clusters([(pids[0], "c", 1), (pids[1], "c", 0), (pids[2], "c", 0)])
    out = tmp_path / "o.warc.gz"
    stats = write_dedup_warc([str(path)], Settings(), index, out)
    recs = _assert_valid(out)
    assert [r.type for r in recs] == ["warcinfo", "warcinfo", "response", "revisit", "response", "metadata", "response"]
    assert recs[2].block == http(one) and recs[4].block == http(near) and recs[6].block == http(b"\x89PNG", "image/png")
    assert recs[3].headers["WARC-Refers-To"] == recs[2].headers["WARC-Record-ID"]
    assert recs[3].headers["WARC-Source-Id"] == pages[1].id and recs[3].block == http(one)[: -len(one)]
    assert json.loads(recs[5].block)["kept"]["id"] == pages[0].id
    assert stats.records_in["response"] == 4 and stats.revisits_made == 1


def test_a_record_clipped_by_the_end_of_the_file_is_marked_truncated(tmp_path):
    crawl = tmp_path / "clipped.warc"
    with WarcWriter(crawl, gzip=False) as w:
        w.write_response("https://a.example/", PAGE_D)
        w.write_response("https://b.example/", PAGE_A, record_id="<urn:uuid:00000000-0000-0000-0000-0000000000c1>")
    data = crawl.read_bytes()
    crawl.write_bytes(data[: len(data) - 200])  # the second record loses its last 200 bytes
    out = tmp_path / "o.warc"
    stats = write_dedup_warc([str(crawl)], Settings(), None, out)
    recs = _assert_valid(out)
    assert stats.clipped_marked == 1 and [r.type for r in recs] == ["warcinfo", "response", "response"]
    cut = recs[2]
    assert cut.headers["WARC-Truncated"] == "length" and "WARC-Payload-Digest" not in cut.headers
    assert cut.headers["WARC-Record-ID"] == "<urn:uuid:00000000-0000-0000-0000-0000000000c1>"
    assert PAGE_A.startswith(cut.block.split(b"\r\n\r\n", 1)[1]) and int(cut.headers["Content-Length"]) == len(cut.block)
    assert compare_with_inputs([str(crawl)], str(out))["problems"] == []


DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "warc")


def test_real_crawls_compare_record_by_record(tmp_path):
    """Every crawl of ../shared/data/warc, by payload digest alone (no index): warcio and
    fastwarc re-read every record with valid digests, and the comparison finds nothing."""
    import pytest

    if not os.path.isdir(DATA):
        pytest.skip(f"{DATA} is missing: the shared crawls are not on this machine")
    from bench.warcout import _digest_checks
    from pagetwin.outputs.dedupwarc import input_files

    out = tmp_path / "all.warc.gz"
    stats = write_dedup_warc([DATA], Settings(), None, out)
    checked = _digest_checks(str(out))
    assert checked["warcio_errors"] == [] and checked["fastwarc_errors"] == []
    assert checked["block_digests"]["declared"] == checked["block_digests"]["valid"] > 0
    assert checked["payload_digests"]["declared"] == checked["payload_digests"]["valid"]
    assert stats.revisits_made > 0 and stats.unreadable == []
    warcs = [p for p, kind in input_files([DATA]) if kind == "warc"]
    result = compare_with_inputs(warcs, str(out))
    assert result["problems"] == [] and result["counts"]["ids_written_twice"] == 0
    assert result["counts"]["revisit_refers_to_output_record"] == stats.revisits_made
