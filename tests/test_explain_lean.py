"""explain on a lean index (index.store_text = false): each page's text is read back from its
source record and extracted again with the index's model, so explain says what it says on a
full index; a run's results do not change; a moved or changed source is said so."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from pagetwin.cli import main
from pagetwin.explain import explain, format_explain
from pagetwin.outputs.warc import WarcWriter
from tests.fixtures.news import news_crawl
from tests.test_e2e_neardup import make_corpus

ALGORITHMS = "exact,con-w,simhash,minhash"


def _dedup(inputs, out, *extra):
    assert main(["dedup", *map(str, inputs), "--out", str(out), "--workers", "1", "--algorithms", ALGORITHMS, *extra]) == 0


def _without_text_source(d):
    for tag in ("a", "b"):
        d[tag] = {k: v for k, v in d[tag].items() if k != "text_from"}
    return d


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same inputs (a folder of two sites' templates, a WARC) into a full and a lean index."""
    root = tmp_path_factory.mktemp("lean")
    make_corpus(root / "in")
    with WarcWriter(root / "crawl.warc.gz") as w:
        ids, _ = news_crawl(w, others=4)
    inputs = [root / "in", root / "crawl.warc.gz"]
    _dedup(inputs, root / "full")
    _dedup(inputs, root / "lean", "--set", "index.store_text=false")
    return root, ids


@pytest.mark.parametrize("pair", [("courier/story.html", "post/story.html"), ("courier/story.html", "courier/other0.html"),
                                  ("a", "near"), ("a", "other1")])  # fmt: skip
def test_explain_on_a_lean_index_says_what_it_says_on_a_full_one(runs, pair):
    root, ids = runs
    a, b = (ids.get(x, x) for x in pair)
    full, lean = explain(root / "full", a, b), explain(root / "lean", a, b)
    assert full["a"]["text_from"] == full["b"]["text_from"] == "index"
    assert lean["a"]["text_from"] == lean["b"]["text_from"] == "source"
    assert lean["a"]["text"] and lean["a"]["text_problem"] is None
    assert _without_text_source(lean) == _without_text_source(full)
    assert format_explain(lean) == format_explain(full)


def test_a_lean_index_holds_no_text_and_the_run_the_same_results(runs):
    root, _ = runs
    for name in ("clusters.jsonl", "pairs.jsonl"):
        assert (root / "lean" / name).read_bytes() == (root / "full" / name).read_bytes(), name
    full, lean = (json.loads((root / d / "summary.json").read_text()) for d in ("full", "lean"))
    assert lean["cluster_kinds"] == full["cluster_kinds"]
    db = sqlite3.connect(root / "lean" / "index.sqlite")
    stored, pages = db.execute("SELECT COUNT(text), COUNT(*) FROM pages WHERE text_len > 0").fetchone()
    assert pages > 10 and stored == 0
    full_bytes = sqlite3.connect(root / "full" / "index.sqlite").execute("SELECT SUM(LENGTH(text)) FROM pages").fetchone()[0]
    assert full_bytes > 1000


def test_an_error_page_keeps_its_text_so_the_summary_kinds_are_the_same(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "missing.html").write_text("<html><head><title>Oops</title></head><body><p>Sorry, the page you "
                                         "requested was not found on this server.</p></body></html>")  # fmt: skip
    (folder / "article.html").write_text("<html><head><title>News</title></head><body><article>"
                                         + "<p>A long story about the harbour bridge and the people who use it.</p>" * 30
                                         + "</article></body></html>")  # fmt: skip
    _dedup([folder], tmp_path / "full")
    _dedup([folder], tmp_path / "lean", "--set", "index.store_text=false")
    full, lean = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("full", "lean"))
    assert full["cluster_kinds"]["clusters_by_kind"].get("soft-404") == 1
    assert lean["cluster_kinds"] == full["cluster_kinds"]
    rows = dict(sqlite3.connect(tmp_path / "lean" / "index.sqlite").execute("SELECT id, text IS NOT NULL FROM pages"))
    assert rows == {"missing.html": 1, "article.html": 0}


def test_a_moved_or_changed_source_is_said_so(runs, tmp_path, capsys):
    root, ids = runs
    lean = tmp_path / "lean"
    shutil.copytree(root / "lean", lean)
    story = root / "in" / "courier" / "story.html"
    kept = story.read_bytes()
    try:
        story.write_bytes(kept.replace(b"River", b"Lake"))
        d = explain(lean, "courier/story.html", "post/story.html")
        assert d["a"]["text"] == "" and "changed" in d["a"]["text_problem"] and d["b"]["text_problem"] is None
        story.unlink()
        d = explain(lean, "courier/story.html", "post/story.html")
        assert "is gone: moved or deleted" in d["a"]["text_problem"]
        assert main(["explain", str(lean), "courier/story.html", "post/story.html"]) == 0
        assert "text: none shown, its text is not in the index and its source" in capsys.readouterr().out
    finally:
        story.write_bytes(kept)


def test_the_documents_output_needs_the_text(tmp_path, capsys):
    make_corpus(tmp_path / "in")
    code = main(["dedup", str(tmp_path / "in"), "--out", str(tmp_path / "o"), "--documents", str(tmp_path / "d.jsonl"),
                 "--set", "index.store_text=false"])  # fmt: skip
    assert code == 2
    assert "documents output needs the pages' text" in capsys.readouterr().err


def test_documents_are_refused_on_an_index_holding_lean_pages(tmp_path, capsys):
    make_corpus(tmp_path / "in")
    assert main(["dedup", str(tmp_path / "in"), "--out", str(tmp_path / "o"), "--set", "index.store_text=false"]) == 0
    code = main(["dedup", str(tmp_path / "in"), "--out", str(tmp_path / "o"), "--add", "--documents", str(tmp_path / "d.jsonl")])
    assert code == 2
    assert "stored without it" in capsys.readouterr().err
    assert not (tmp_path / "d.jsonl").exists()
    # --replace starts a new index: its pages have their text
    assert main(["dedup", str(tmp_path / "in"), "--out", str(tmp_path / "o"), "--replace", "--documents", str(tmp_path / "d.jsonl")]) == 0
    assert (tmp_path / "d.jsonl").read_text().strip()


def test_jsonl_lines_and_plain_warc_records_are_read_back(tmp_path):
    from tests.fixtures.news import article, page

    story = article(7)
    lines = [{"url": f"https://j{i}.example/s", "html": page("Harbour story", story if i < 2 else article(20 + i))} for i in range(4)]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    with WarcWriter(tmp_path / "plain.warc", gzip=False) as w:
        ids, _ = news_crawl(w, others=3)
    inputs = [tmp_path / "docs.jsonl", tmp_path / "plain.warc"]
    _dedup(inputs, tmp_path / "full")
    _dedup(inputs, tmp_path / "lean", "--set", "index.store_text=false")
    rows = [json.loads(x) for x in (tmp_path / "full" / "clusters.jsonl").read_text().splitlines()]
    jsonl_ids = [r["id"] for r in rows if r["url"].startswith("https://j")]
    for a, b in ((jsonl_ids[0], jsonl_ids[1]), (jsonl_ids[0], jsonl_ids[3]), (ids["a"], ids["near"])):
        full, lean = explain(tmp_path / "full", a, b), explain(tmp_path / "lean", a, b)
        assert lean["a"]["text_from"] == lean["b"]["text_from"] == "source"
        assert _without_text_source(lean) == _without_text_source(full)
