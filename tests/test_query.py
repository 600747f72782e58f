"""pagetwin query: an index asked about pages, read only (issue 17, items 1 and 2)."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagetwin.app import dedup
from pagetwin.cli import main
from pagetwin.config import Settings
from pagetwin.index.sqlite import IndexError_
from pagetwin.match import WINDOW
from pagetwin.query import Matcher, _bounded, query
from tests.fixtures.news import article, page


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def _state(folder):
    """The index folder's file names and every file's bytes (digests)."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in sorted(os.listdir(folder))}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """An index of a small crawl: an article, a near copy of it, unrelated stories; and the
    pages to ask about: an exact copy (another id and URL), a repost edited in other places
    under another site's template, an unrelated page."""
    d = tmp_path_factory.mktemp("query")
    story = article(1)
    near = list(story)
    near[2] = near[2].replace(".", ", officials said.", 1)
    stored = [
        {"id": "art", "url": "https://news.example/bridge", "html": page("Harbour bridge reopens", story)},
        {"id": "near", "url": "https://news.example/bridge-2", "html": page("Harbour bridge reopens", near, date="13 March 2024")},
    ] + [{"id": f"o{i}", "url": f"https://news.example/s{i}", "html": page(f"Story {i}", article(100 + i))} for i in range(6)]
    settings = Settings()
    settings.run.workers = 1
    dedup([_jsonl(d / "crawl.jsonl", stored)], str(d / "out"), settings)
    repost = list(story)
    repost[0] = repost[0].replace(".", ", the mayor said.", 1)
    repost[4] += " Traffic resumed on Monday."
    asked = [
        {"id": "copy", "url": "https://mirror.example/bridge", "html": stored[0]["html"]},
        {"id": "repost", "url": "https://repost.example/bridge",
         "html": page("Harbour bridge reopens", repost, site="Repost Daily", menu=["Front", "Local"], footer="Repost Daily")},
        {"id": "new", "url": "https://news.example/new", "html": page("Market opens", article(999))},
    ]  # fmt: skip
    clusters = {r["id"]: r["cluster"] for r in map(json.loads, (d / "out" / "clusters.jsonl").read_text().splitlines())}
    return d, _jsonl(d / "asked.jsonl", asked), clusters


def test_query_finds_exact_and_near_copies_and_nothing_for_a_new_page(built):
    d, asked, clusters = built
    before = _state(d / "out")
    rows = {r["id"]: r for r in query(d / "out" / "index.sqlite", [asked])}
    assert list(rows) == ["copy", "repost", "new"]  # input order, one row per page
    first = rows["copy"]["matches"][0]  # exact payload copies first
    assert (first["id"], first["kind"], first["cluster"]) == ("art", "exact", clusters["art"])
    assert any(e["algorithm"] == "payload" for e in first["evidence"])
    assert all(m["kind"] != "exact" for m in rows["copy"]["matches"][1:])  # the near copy: its payload differs
    repost = {m["id"]: m for m in rows["repost"]["matches"]}
    assert repost["art"]["kind"] == "duplicate" and repost["art"]["cluster"] == clusters["art"]
    assert repost["art"]["evidence"] and all(e["passed"] for e in repost["art"]["evidence"])
    assert not set(repost) & {f"o{i}" for i in range(6)}
    assert rows["new"]["matches"] == []
    assert _state(d / "out") == before  # not a byte written, no file created beside the index


def test_matches_are_ordered_by_strongest_evidence(built):
    d, asked, _ = built
    for row in query(d / "out", [asked]):  # the --out folder names its index
        ranks = [(m["kind"] != "exact", -max(e["score"] for e in m["evidence"])) for m in row["matches"]]
        assert ranks == sorted(ranks)


def test_settings_that_change_fingerprints_must_be_the_index(built):
    d, asked, _ = built
    other = Settings()
    other.text.lang = "de"
    with pytest.raises(IndexError_, match="text.lang"):
        Matcher(d / "out" / "index.sqlite", other)
    same = Settings()
    same.run.workers = 1
    assert [r["id"] for r in query(d / "out" / "index.sqlite", [asked], same)] == ["copy", "repost", "new"]


def test_no_index_or_not_an_index(tmp_path):
    with pytest.raises(IndexError_, match="no index"):
        Matcher(tmp_path / "missing.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(IndexError_, match="not a pagetwin index"):
        Matcher(junk)
    assert junk.read_bytes() == b"not a database at all" * 100


@given(st.lists(st.integers(0, 10_000), unique=True, max_size=80), st.integers(1, 40))
def test_oversized_buckets_are_bounded(pids, limit):
    latest_first = sorted(pids, reverse=True)
    chosen = _bounded(latest_first, limit)
    assert chosen == latest_first[: len(chosen)]  # the latest pages: the query page's neighbours
    assert len(chosen) == len(pids) if len(pids) <= limit else len(chosen) == min(len(pids), WINDOW)


def test_cli_query_end_to_end(built, capsys):
    d, asked, clusters = built
    before = _state(d / "out")
    assert main(["query", "--index", str(d / "out" / "index.sqlite"), asked, str(d / "missing.jsonl")]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == ["copy", "repost", "new"]
    assert rows[0]["matches"][0]["cluster"] == clusters["art"]
    assert "missing.jsonl" in err and "Traceback" not in err  # an unreadable input, as pagetwin text says it
    assert _state(d / "out") == before


@pytest.mark.parametrize("index", ["missing.sqlite", "junk.sqlite"])
def test_cli_query_refuses_a_missing_or_foreign_index(tmp_path, capsys, index):
    (tmp_path / "junk.sqlite").write_bytes(b"junk" * 1000)
    inputs = _jsonl(tmp_path / "a.jsonl", [{"id": "a", "url": "https://a.example/", "html": page("A", article(5))}])
    assert main(["query", "--index", str(tmp_path / index), inputs]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("pagetwin: ")


def test_cli_query_takes_no_settings_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["query", "--index", "x", "y", "--minhash-threshold", "0.5"])
    assert exc.value.code == 2 and "--minhash-threshold" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["query", "--help"])
    assert exc.value.code == 0
    help_text = capsys.readouterr().out
    assert "settings" in help_text and "stored in the index" in help_text
    assert "--workers" not in help_text and "--minhash-threshold" not in help_text


def test_an_oversized_bucket_is_compared_with_its_latest_pages_only(tmp_path):
    """30 copies of one article in an index built with match.max_bucket 4: a query compares the
    page with the WINDOW latest of them (its neighbours in crawl order, as dedup would), not 30."""
    html = page("Harbour bridge reopens", article(1))
    copies = [{"id": f"c{i:02d}", "url": f"https://copy{i}.example/", "html": html} for i in range(30)]
    settings = Settings()
    settings.run.workers = 1
    settings.match.max_bucket = 4
    dedup([_jsonl(tmp_path / "crawl.jsonl", copies)], str(tmp_path / "out"), settings)
    asked = _jsonl(tmp_path / "asked.jsonl", [{"id": "q", "url": "https://q.example/", "html": html}])
    (row,) = query(tmp_path / "out", [asked])
    found = sorted(m["id"] for m in row["matches"])
    assert found == [f"c{i:02d}" for i in range(30 - WINDOW, 30)]
    assert all(m["kind"] == "exact" for m in row["matches"])


def test_querying_the_indexed_crawl_gives_its_pairs(tmp_path):
    """Every page of an indexed crawl, asked about: itself as an exact copy, and exactly the
    pairs dedup verified (pairs.jsonl, revisits included), no other."""
    from pagetwin.outputs.warc import WarcWriter
    from tests.fixtures.news import news_crawl

    crawl = tmp_path / "crawl.warc.gz"
    with WarcWriter(crawl) as w:
        ids = news_crawl(w, others=4)[0]
    assert main(["dedup", str(crawl), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    pairs = {frozenset((p["a"], p["b"])): p["kind"] for p in map(json.loads, (tmp_path / "out" / "pairs.jsonl").open())}
    assert "revisit" in pairs.values() and "duplicate" in pairs.values()
    found = {}
    for row in query(tmp_path / "out", [str(crawl)]):
        if row["id"] != ids["revisit"]:  # a revisit record is matched to its original only
            assert any(m["id"] == row["id"] and m["kind"] == "exact" for m in row["matches"]), row["url"]
        for m in (m for m in row["matches"] if m["id"] != row["id"]):
            found[frozenset((row["id"], m["id"]))] = m["kind"]
    assert set(found) == set(pairs)
    assert all(kind == pairs[pair] or (kind == "exact" and pairs[pair] == "duplicate") for pair, kind in found.items())


def test_the_readme_query_example_runs(built, tmp_path, monkeypatch, capsys):
    """The README's "Query" Python example, run where its paths are: out/index.sqlite (the
    index of `built`) and new-pages.jsonl (the pages asked about)."""
    from tests.test_api import _section_blocks

    (block,) = _section_blocks("Query")
    d, asked, _ = built
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "index.sqlite").write_bytes((d / "out" / "index.sqlite").read_bytes())
    (tmp_path / "new-pages.jsonl").write_text(open(asked).read())
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md (Query)", "exec"), {})  # noqa: S102
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["https://mirror.example/bridge", "https://repost.example/bridge", "https://news.example/new"]
    assert "('https://news.example/bridge', 'exact')" in lines[0] and lines[2].endswith("[]")


@pytest.mark.parametrize("max_bucket", [200, 3])
def test_a_page_is_compared_with_the_pages_sharing_min_bands_of_its_bands(tmp_path, max_bucket):
    """MinHash's min_bands: an indexed page asked about is compared with the pages its batch
    pairs it with (find_edges' candidates, the local runner's: sharing two bands), not with every
    page of its buckets. With oversized buckets (max_bucket 3), with those of its buckets' pages
    (an oversized one's latest WINDOW) that share two of its keys, counted whole."""
    from pagetwin.index.sqlite import Index
    from pagetwin.match import MatchStats, bucket_pairs, distinct_pairs

    example = os.path.join(os.path.dirname(__file__), "..", "examples", "debian-docs.warc.gz")
    settings = Settings()
    settings.run.workers = 1
    settings.match.max_bucket = max_bucket
    settings.minhash.min_bands = 2
    dedup([example], str(tmp_path / "out"), settings)
    matcher = Matcher(tmp_path / "out")
    (minhash,) = [a for a in matcher.worker.algorithms if a.name == "minhash"]
    assert minhash.min_shared_keys == 2
    idx = matcher.index
    batch = list(distinct_pairs(idx.buckets("minhash"), max_bucket, minhash, MatchStats()))
    every = {p for b in idx.buckets("minhash") for p in bucket_pairs(b, max_bucket, False)}  # some share one band only
    assert batch and every - set(batch)
    partners: dict[int, set[int]] = {}
    for a, b in batch:
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    pids = sorted({p for b in idx.buckets("minhash") for p in b})
    compared = {pid: matcher.candidates(minhash, idx.page_keys("minhash", pid)) - {pid} for pid in pids}
    if max_bucket == 200:
        assert all(compared[pid] == partners.get(pid, set()) for pid in pids)
    else:
        for pid in pids:
            keys = set(idx.page_keys("minhash", pid))
            near = {p for key in keys for p in _bounded(idx.pids_with_key("minhash", key, max_bucket + WINDOW + 1), max_bucket)}
            assert compared[pid] == {p for p in near - {pid} if len(keys & set(idx.page_keys("minhash", p))) >= 2}, pid
        assert any(len(b) > max_bucket for b in idx.buckets("minhash"))
    matcher.close()
