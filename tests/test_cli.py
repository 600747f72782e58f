"""End-to-end tests through the command line, on WARC files, folders and JSONL the tests write."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

import pytest

from pagetwin.cli import main
from pagetwin.outputs.warc import WarcWriter
from tests.fixtures.news import article, news_crawl, page


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _crawl(path):
    """The tests' news crawl (tests.fixtures.news.news_crawl): names -> WARC-Record-IDs."""
    with WarcWriter(path) as w:
        return news_crawl(w)[0]


def test_dedup_warc_end_to_end(tmp_path):
    crawl = tmp_path / "crawl.warc.gz"
    ids = _crawl(crawl)
    out = tmp_path / "out"
    assert main(["dedup", str(crawl), "--out", str(out), "--workers", "1"]) == 0
    rows = _lines(out / "clusters.jsonl")
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == set(ids.values())  # one line per input page, ids are WARC-Record-IDs
    cluster = {k: by_id[v]["cluster"] for k, v in ids.items()}
    assert cluster["a"] == cluster["a2"] == cluster["revisit"] == cluster["near"]
    assert len({cluster["a"], cluster["other0"], cluster["other1"], cluster["other2"]}) == 4
    keeps: dict[str, int] = {}
    for r in rows:
        keeps[r["cluster"]] = keeps.get(r["cluster"], 0) + r["keep"]
    assert set(keeps.values()) == {1}
    assert not by_id[ids["revisit"]]["keep"]
    summary = json.loads((out / "summary.json").read_text())
    rec = summary["records"]
    assert rec["records_total"] == rec["pages_read"] + rec["images"] + sum(rec["skipped"].values())
    assert rec["skipped"].get("request") == 1 and rec["skipped"].get("warcinfo") == 1
    assert summary["revisits"]["matched"] == 1 and summary["revisits"]["without_original"] == 0
    assert summary["clusters"] == 13 and summary["duplicates"] == 3
    pairs = _lines(out / "pairs.jsonl")
    kinds = {p["kind"] for p in pairs}
    assert {"duplicate", "revisit"} <= kinds
    assert all(p["evidence"] and all(e["passed"] for e in p["evidence"]) for p in pairs)
    assert (out / "index.sqlite").exists()


def test_dedup_with_pool_matches_single_process(tmp_path):
    crawl = tmp_path / "crawl.warc.gz"
    _crawl(crawl)
    for workers in ("1", "2"):
        assert main(["dedup", str(crawl), "--out", str(tmp_path / workers), "--workers", workers]) == 0
    one = sorted((r["id"], r["cluster"], r["keep"]) for r in _lines(tmp_path / "1" / "clusters.jsonl"))
    two = sorted((r["id"], r["cluster"], r["keep"]) for r in _lines(tmp_path / "2" / "clusters.jsonl"))
    assert one == two


def test_folder_and_jsonl_inputs(tmp_path):
    site = tmp_path / "site"
    (site / "sub").mkdir(parents=True)
    (site / "a.html").write_text(page("A", article(5)))
    (site / "sub" / "copy.htm").write_text(page("A", article(5)))
    (site / "b.html").write_text(page("B", article(6)))
    (site / "notes.txt").write_text("not html")
    feed = tmp_path / "feed.jsonl"
    feed.write_text(
        json.dumps({"url": "https://x.example/c", "html": page("C", article(7)), "lang": "en"}) + "\n"
        + "{broken json\n"
        + json.dumps({"url": "https://x.example/c2", "html": page("C", article(7))}) + "\n"
    )
    out = tmp_path / "out"
    assert main(["dedup", str(site), str(feed), "--out", str(out), "--workers", "1"]) == 0
    rows = {r["id"]: r for r in _lines(out / "clusters.jsonl")}
    assert {"a.html", "sub/copy.htm", "b.html"} <= set(rows)
    assert rows["a.html"]["cluster"] == rows["sub/copy.htm"]["cluster"] != rows["b.html"]["cluster"]
    jsonl_ids = [i for i in rows if i.startswith("feed.jsonl")]
    assert len(jsonl_ids) == 2 and rows[jsonl_ids[0]]["cluster"] == rows[jsonl_ids[1]]["cluster"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["records"]["skipped"].get("bad-json") == 1


def test_incremental_index(tmp_path):
    first, second = tmp_path / "one.warc.gz", tmp_path / "two.warc.gz"
    with WarcWriter(first) as w:
        w.write_response("https://a.example/1", page("One", article(11)).encode())
        w.write_response("https://a.example/2", page("Two", article(12)).encode())
    with WarcWriter(second) as w:
        w.write_response("https://b.example/1-copy", page("One", article(11), site="Other").encode())
    index = tmp_path / "shared.sqlite"
    assert main(["dedup", str(first), "--out", str(tmp_path / "r1"), "--index", str(index), "--workers", "1"]) == 0
    assert main(["dedup", str(first), str(second), "--out", str(tmp_path / "r2"), "--index", str(index), "--workers", "1"]) == 0
    rows = _lines(tmp_path / "r2" / "clusters.jsonl")
    assert len(rows) == 3
    by_url = {r["url"]: r["cluster"] for r in rows}
    assert by_url["https://a.example/1"] == by_url["https://b.example/1-copy"] != by_url["https://a.example/2"]
    summary = json.loads((tmp_path / "r2" / "summary.json").read_text())
    assert summary["pages"]["already_indexed"] == 2


def test_incompatible_index_is_refused(tmp_path, capsys):
    crawl = tmp_path / "c.warc.gz"
    _crawl(crawl)
    index = tmp_path / "i.sqlite"
    assert main(["dedup", str(crawl), "--out", str(tmp_path / "a"), "--index", str(index), "--workers", "1"]) == 0
    code = main(["dedup", str(crawl), "--out", str(tmp_path / "b"), "--index", str(index), "--workers", "1",
                 "--minhash-shingle", "3"])
    assert code == 1
    assert "minhash.shingle" in capsys.readouterr().err


def test_text_command(tmp_path, capsys):
    crawl = tmp_path / "c.warc.gz"
    ids = _crawl(crawl)
    assert main(["text", str(crawl), "--workers", "1"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["id"] for r in rows} == {v for k, v in ids.items() if k != "revisit"}
    text = next(r["text"] for r in rows if r["id"] == ids["a"])
    assert article(1)[0][:40] in text
    assert "All rights reserved" not in text and "Privacy" not in text


def test_config_command_round_trips(capsys):
    assert main(["config", "--minhash-threshold", "0.6", "--algorithms", "exact,minhash"]) == 0
    data = tomllib.loads(capsys.readouterr().out)
    assert data["minhash"]["threshold"] == 0.6 and data["match"]["algorithms"] == ["exact", "minhash"]


def _run(*args):
    return subprocess.run([sys.executable, "-m", "pagetwin.cli", *args], capture_output=True, text=True, timeout=300)


def test_exit_codes_and_messages(tmp_path):
    missing = _run("dedup", str(tmp_path / "nope.warc.gz"), "--out", str(tmp_path / "o"))
    assert missing.returncode == 1
    assert "nope.warc.gz" in missing.stderr and "Traceback" not in missing.stderr
    lines = missing.stderr.strip().splitlines()  # the input's reason, then that nothing could be read
    assert len(lines) == 2 and "nope.warc.gz: no such file" in lines[0] and "no page could be read" in lines[1]
    assert (tmp_path / "o" / "summary.json").exists()
    usage = _run("dedup", str(tmp_path), "--out", str(tmp_path / "o"), "--algorithms", "exact,bogus")
    assert usage.returncode == 2 and "bogus" in usage.stderr and "Traceback" not in usage.stderr
    assert _run("frobnicate").returncode == 2


def test_a_folder_without_inputs_says_which_files_it_passed_over(tmp_path):
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "page.html.bz2").write_bytes(b"BZh9 not read")
    (folder / "notes.txt").write_text("x")
    for args in (["dedup", str(folder), "--out", str(tmp_path / "o")], ["text", str(folder)]):
        done = _run(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr
        assert "no pages in the inputs: 2 files in the folders given are not inputs" in done.stderr
        assert "page.html.bz2" in done.stderr and ".html.gz" in done.stderr


@pytest.mark.parametrize("body", [b"\x00\x01binary junk" * 100, b"<div>" * 50_000 + b"deep" + b"</div>" * 50_000])
def test_bad_pages_do_not_stop_the_run(tmp_path, body):
    crawl = tmp_path / "bad.warc.gz"
    with WarcWriter(crawl) as w:
        w.write_response("https://bad.example/x", body)
        w.write_response("https://bad.example/ok", page("Fine", article(3)).encode())
    out = tmp_path / "out"
    assert main(["dedup", str(crawl), "--out", str(out), "--workers", "1"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    rec = summary["records"]
    assert rec["records_total"] == rec["pages_read"] + rec["images"] + sum(rec["skipped"].values()) == 2
    assert any(r["url"] == "https://bad.example/ok" for r in _lines(out / "clusters.jsonl"))
    if body.startswith(b"<div>"):
        assert summary["pages"]["deep_dom_flattened"] == 1


def test_survivors_warc_and_parquet(tmp_path):
    from fastwarc.warc import ArchiveIterator, WarcRecordType
    import pyarrow.parquet as pq

    crawl = tmp_path / "crawl.warc.gz"
    _crawl(crawl)
    out = tmp_path / "out"
    kept_file = tmp_path / "kept.warc.gz"
    assert main(["dedup", str(crawl), "--out", str(out), "--workers", "1", "--survivors", str(kept_file), "--parquet"]) == 0
    rows = _lines(out / "clusters.jsonl")
    kept = {r["id"] for r in rows if r["keep"]}
    with open(kept_file, "rb") as fh:
        written = [(r.record_id, r.reader.read()) for r in ArchiveIterator(fh, record_types=WarcRecordType.response)]
    assert {rid for rid, _ in written} == kept
    assert all(b"<html" in body.lower() for _, body in written)
    table = pq.read_table(out / "clusters.parquet").to_pylist()
    assert sorted((r["id"], r["cluster"], r["keep"]) for r in table) == sorted((r["id"], r["cluster"], r["keep"]) for r in rows)
    assert pq.read_table(out / "pairs.parquet").num_rows == len(_lines(out / "pairs.jsonl"))
