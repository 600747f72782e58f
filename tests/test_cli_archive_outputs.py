"""End to end through the CLI: --dedup-warc and --documents (issue 13, items 6 and 7), and the
soft-404 cluster kind in summary.json (item 5)."""

from __future__ import annotations

import gzip
import json

from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from pagetwin.cli import main
from pagetwin.outputs.warc import REVISIT_PROFILE, WarcWriter

ARTICLE = " ".join(f"Paragraph {i} of the article tells about river number {i * 7} and its bridges." for i in range(40))
PAGE = f"<html><head><title>Rivers</title></head><body><article><p>{ARTICLE}</p></article></body></html>".encode()
OTHER = b"<html><head><title>Other</title></head><body><p>" + b"A different page about mountains. " * 30 + b"</p></body></html>"
MISSING = b"<html><head><title>Page Not Found</title></head><body><p>Sorry, this page was not found.</p></body></html>"


def _http(body):
    return [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))]


def _crawl(path):
    with WarcWriter(path) as w:
        w.write_warcinfo(path.name, {"software": "test crawler"})
        w.write_request("https://a.example/rivers")
        w.write_response("https://a.example/rivers", PAGE, http_headers=_http(PAGE), date="2024-05-01T10:00:00Z")
        w.write_response("https://b.example/copy", PAGE, http_headers=_http(PAGE), date="2024-05-02T10:00:00Z")
        w.write_response("https://c.example/other", OTHER, http_headers=_http(OTHER), date="2024-05-03T10:00:00Z")
        for i in range(3):
            w.write_response(f"https://d.example/gone{i}", MISSING, http_headers=_http(MISSING))


def test_dedup_warc_and_documents(tmp_path, capsys):
    crawl = tmp_path / "crawl.warc.gz"
    _crawl(crawl)
    out, warc, docs = tmp_path / "out", tmp_path / "dedup.warc.gz", tmp_path / "docs.jsonl.gz"
    code = main(["dedup", str(crawl), "--out", str(out), "--dedup-warc", str(warc), "--documents", str(docs)])
    assert code == 0, capsys.readouterr().err

    types, revisits = [], []
    with open(warc, "rb") as fh:
        for rec in WarcioIterator(fh, check_digests="raise"):
            rec.raw_stream.read()
            types.append(rec.rec_type)
            if rec.rec_type == "revisit":
                revisits.append(rec.rec_headers)
    assert types[0] == "warcinfo"
    assert types.count("request") == 1  # every input record is written, not only pages
    assert len(revisits) == 3  # the copy of the article, and two of the three identical error pages
    for headers in revisits:
        assert headers.get_header("WARC-Profile") == REVISIT_PROFILE
        assert headers.get_header("WARC-Refers-To-Target-URI")
    assert {h.get_header("WARC-Target-URI") for h in revisits} >= {"https://b.example/copy"}

    with gzip.open(docs, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    summary = json.loads((out / "summary.json").read_text())
    assert len(rows) == summary["clusters"] == summary["documents_written"]
    article = next(r for r in rows if r["metadata"]["url"] in ("https://a.example/rivers", "https://b.example/copy"))
    assert "river number 7" in article["text"]
    meta = article["metadata"]
    assert meta["cluster_size"] == 2
    assert meta["source_file"].endswith("crawl.warc.gz") and isinstance(meta["source_offset"], int)
    assert summary["dedup_warc"]["revisits_made"] == 3
    assert sum(summary["dedup_warc"]["records_out"].values()) == sum(summary["dedup_warc"]["records_in"].values()) + 1
    kinds = summary["cluster_kinds"]
    assert kinds["clusters_by_kind"].get("soft-404") == 1
    assert any(c["kind"] == "soft-404" and c["size"] == 3 for c in kinds["not_content"])


def test_an_unwritable_documents_target_is_refused_before_any_work(tmp_path, capsys):
    crawl = tmp_path / "crawl.warc.gz"
    _crawl(crawl)
    code = main(["dedup", str(crawl), "--out", str(tmp_path / "out"), "--documents", str(tmp_path / "no" / "d.jsonl")])
    assert code == 2
    assert not (tmp_path / "out" / "summary.json").exists()
    assert capsys.readouterr().err.count("\n") == 1


def test_text_documents_in_jsonl_and_parquet_are_deduplicated_with_their_metadata(tmp_path, capsys):
    """datatrove-style documents (issue 13, item 1): {id, text, metadata} lines and rows are
    pages, not skips; a copy across the two files is found; metadata reaches --documents."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    story = "\n".join(f"Line {i}: the council voted on bridge number {i * 3} after a long debate." for i in range(30))
    other = "\n".join(f"Recipe step {i}: add {i} spoons of sugar and stir the pot slowly." for i in range(30))
    (tmp_path / "docs.jsonl").write_text(
        json.dumps({"id": "j1", "text": story, "metadata": {"dump": "A", "url": "https://a.example/story"}}) + "\n"
        + json.dumps({"id": "j2", "text": other, "metadata": {"dump": "A"}}) + "\n"
    )
    table = pa.table({"id": ["p1"], "text": [story + "\nUpdated at noon."], "metadata": [json.dumps({"dump": "B"})]})
    pq.write_table(table, tmp_path / "docs.parquet")
    out, docs = tmp_path / "out", tmp_path / "kept.jsonl"
    code = main(["dedup", str(tmp_path / "docs.jsonl"), str(tmp_path / "docs.parquet"), "--out", str(out),
                 "--documents", str(docs)])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pages"]["read"] == 3 and summary["records"]["skipped"] == {}
    clusters = {row["id"]: row["cluster"] for row in map(json.loads, (out / "clusters.jsonl").read_text().splitlines())}
    assert clusters["j1"] == clusters["p1"] != clusters["j2"]
    kept = [json.loads(line) for line in docs.read_text().splitlines()]
    assert len(kept) == 2
    story_doc = next(d for d in kept if d["id"] in ("j1", "p1"))
    assert story_doc["metadata"]["cluster_size"] == 2
    assert story_doc["metadata"]["dump"] in ("A", "B")
    assert "bridge number 3 " in story_doc["text"]
