"""bench/serve_load.py and bench/add_cost.py on a tiny index: they run and report what they say."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.news import article, page


def _jsonl(path, n, offset=0):
    rows = [{"id": f"p{i}", "url": f"https://news.example/{i}", "html": page(f"Story {i}", article(i))} for i in range(offset, offset + n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_serve_load_reports_both_phases_and_memory(tmp_path, capsys):
    pytest.importorskip("uvicorn")
    from bench import serve_load
    from pagetwin.api import Index

    with Index.open(tmp_path / "index.sqlite") as index:
        index.add([{"url": f"https://a.example/{i}", "html": page(f"A {i}", article(500 + i))} for i in range(5)])
    assert serve_load.main(["--index", str(tmp_path / "index.sqlite"), "--pages-from", _jsonl(tmp_path / "q.jsonl", 6),
                            "--clients", "2", "--queries", "6", "--adds", "4", "--seconds", "60"]) == 0  # fmt: skip
    result = json.loads(capsys.readouterr().out)
    assert result["pages_in_index"] == 5
    assert result["query"]["requests"] == 6 and result["add"]["requests"] == 4
    assert result["query"]["errors"] == result["add"]["errors"] == 0
    assert result["memory_after_adds"]["peak_rss_mb"] > 0
    with Index.open(tmp_path / "index.sqlite", readonly=True) as index:
        assert len(index) == 5  # a copy was served


def test_add_cost_measures_each_size(tmp_path, capsys):
    from bench import add_cost

    corpus = _jsonl(tmp_path / "corpus.jsonl", 30)
    new = _jsonl(tmp_path / "new.jsonl", 4, offset=1000)
    assert add_cost.main([corpus, "--new-from", new, "--sizes", "10", "25", "--new", "3", "--work", str(tmp_path / "w")]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["size"] for r in rows] == [10, 25] and [r["pages"] for r in rows] == [10, 25]
    assert all(r["batch_s"] > 0 and r["single_p50_ms"] > 0 and r["match_all_s"] >= 0 for r in rows)


def test_add_cost_made_pages_are_near_copies_of_indexed_pages_and_new_pages(tmp_path, capsys):
    """--made: half seeded near copies of the corpus's first pages (each found by a query, as
    a duplicate of its source), half new pages of the same site (found by none)."""
    from bench import add_cost
    from pagetwin.api import Index

    corpus = _jsonl(tmp_path / "corpus.jsonl", 30)
    made = add_cost.made_pages(corpus, 12, 4)
    assert len({p.id for p in made}) == 4 and len({p.url for p in made}) == 4
    sources = add_cost._pages(corpus, 12)
    with Index.memory() as index:
        index.add(sources)
        found = [[m.url for m in index.query(p)] for p in made]
    assert [len(f) for f in found[1::2]] == [0, 0]
    assert all(f and f[0] == sources[3 * n].url for n, f in zip((0, 2), found[::2]))
    assert add_cost.main([corpus, "--made", "--sizes", "12", "25", "--new", "4", "--modes", "batch", "--skip-full", "--work", str(tmp_path / "w")]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["size"] for r in rows] == [12, 25] and all(r["new_edges"] >= 2 for r in rows)
