"""pagetwin.Index, the Python API over one index (issue 17, item 1): pages in memory added and
asked about; clusters as objects; the README's examples run."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pagetwin
from pagetwin.api import Cluster, Index, PageError
from pagetwin.app import dedup
from pagetwin.config import Settings
from pagetwin.index.lock import IndexBusy
from pagetwin.index.sqlite import IndexError_
from tests.fixtures.news import article, page

README = Path(__file__).resolve().parent.parent / "README.md"


def _story():
    story = article(1)
    near = list(story)
    near[2] = near[2].replace(".", ", officials said.", 1)
    return page("Harbour bridge reopens", story), page("Harbour bridge reopens", near)


def _others(n=6):
    return [{"url": f"https://news.example/s{i}", "html": page(f"Story {i}", article(100 + i))} for i in range(n)]


def _files(folder):
    return {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in sorted(os.listdir(folder))}


def test_memory_index_adds_queries_and_clusters():
    html, near = _story()
    with Index.memory() as index:
        added = index.add([{"id": "art", "url": "https://news.example/bridge", "html": html}, *_others()])
        assert [a.status for a in added] == ["added"] * 7 and all(a.cluster_size == 1 for a in added)
        before = index.stats()
        result = index.query({"url": "https://mirror.example/bridge", "html": near})
        assert [(m.id, m.kind) for m in result] == [("art", "duplicate")]
        assert result.matches[0].score > 0.8 and all(e["passed"] for e in result.matches[0].evidence)
        assert index.stats() == before and len(index) == 7  # a query adds nothing
        assert len(index.query({"url": "https://x.example/new", "html": page("Market", article(999))})) == 0
        copy = index.add(("https://mirror.example/bridge", near))  # one page, as a (url, html) pair
        assert len(copy) == 1 and copy[0].cluster_size == 2 and copy[0].cluster == index.get("art")["cluster"]
        (cluster,) = index.clusters(min_size=2)
        assert isinstance(cluster, Cluster) and cluster.kind == "content"
        assert [m.id for m in cluster.members] == ["art", "https://mirror.example/bridge"]
        assert cluster.kept.keep and sum(m.keep for m in cluster.members) == 1
        assert len(index.clusters()) == 7  # every page is in a cluster, of one when it has no copy
        exact = index.query({"url": "https://other.example/same", "html": html}).matches[0]
        assert (exact.id, exact.kind) == ("art", "exact")


def test_a_retried_add_changes_nothing_and_ids_default_to_the_url():
    html, _ = _story()
    with Index.memory() as index:
        first = index.add({"url": "https://news.example/bridge", "html": html})
        again = index.add({"url": "https://news.example/bridge", "html": html})
        assert first[0].status == "added" and again[0].status == "known"
        assert first[0].id == "https://news.example/bridge" == again[0].id
        assert len(index) == 1 and "https://news.example/bridge" in index


def test_text_documents_and_datatrove_style_objects():
    text = "\n".join(article(5))
    with Index.memory() as index:
        index.add({"id": "d1", "text": text, "metadata": {"source": "cc"}})
        doc = SimpleNamespace(id="d2", text=text + "\nOne more line at the end of it.", metadata={})
        (added,) = index.add([doc])
        assert added.cluster_size == 2 and added.cluster == index.get("d1")["cluster"]
        assert index.get("d1")["metadata"] == {"source": "cc"} and index.get("d1")["text"].startswith(text[:40])


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"url": "https://x.example/"}, "no html or text"),
        ({"url": "https://x.example/", "html": "   "}, "no html or text"),
        ({"html": "<p>hello</p>"}, "an id"),
        ({"url": 5, "html": "<p>x</p>"}, "url must be a string"),
        ({"url": "https://x.example/", "html": b"<p>x</p>"}, "html must be a string"),
        ({"url": "https://x.example/", "html": "<p>x</p>", "metadata": [1]}, "metadata must be an object"),
        (42, "a mapping with html or text"),
    ],
)
def test_a_bad_page_is_refused_and_its_batch_adds_nothing(bad, message):
    html, _ = _story()
    with Index.memory() as index:
        with pytest.raises(PageError, match=message):
            index.add([{"url": "https://news.example/ok", "html": html}, bad])
        assert len(index) == 0
        with pytest.raises(PageError, match=message):
            index.query(bad)


def test_on_error_raise_refuses_a_page_that_cannot_be_analysed(monkeypatch):
    html, _ = _story()
    with Index.memory() as index:
        exact = index._worker.algorithms[0]
        features = exact.features

        def broken(doc):
            if doc.page_id == "b":
                raise ValueError("broken")
            return features(doc)

        monkeypatch.setattr(exact, "features", broken)  # what a failing analysis reports
        with pytest.raises(PageError, match=r"page 1 \(b\) could not be analysed: exact-error: ValueError"):
            index.add([{"id": "a", "text": "fine"}, {"id": "b", "url": "https://x.example/b", "html": html}], on_error="raise")
        assert len(index) == 0
        (stored,) = index.add({"id": "b", "url": "https://x.example/b", "html": html})  # by default stored, as dedup does
        assert stored.error == "exact-error: ValueError" and len(index) == 1


def test_adds_one_at_a_time_give_the_clusters_and_edges_of_one_batch():
    html, near = _story()
    pages = [{"id": "art", "url": "https://a.example/1", "html": html}, *_others(8)]
    pages += [{"id": "near", "url": "https://b.example/2", "html": near}, {"id": "copy", "url": "https://c.example/3", "html": html}]
    pages += [{"id": f"dup{i}", "url": f"https://d.example/{i}", "html": pages[1 + i]["html"]} for i in range(3)]

    def outcome(batches):
        with Index.memory() as index:
            for batch in batches:
                index.add(batch)
            edges = {(a, b, kind) for a, b, kind, _ in index._store.edges()}
            return {frozenset(m.id for m in c.members): c.kept.id for c in index.clusters()}, edges, index.stats()

    one = outcome([pages])
    assert outcome([[p] for p in pages]) == one
    assert outcome([pages[:5], pages[5:9], pages[9:]]) == one
    assert one[2]["duplicates"] == 5


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """An index built by pagetwin dedup (site templates learned from its crawl)."""
    d = tmp_path_factory.mktemp("api")
    html, _ = _story()
    rows = [{"id": "art", "url": "https://news.example/bridge", "html": html}, *_others()]
    (d / "crawl.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    settings = Settings()
    settings.run.workers = 1
    dedup([str(d / "crawl.jsonl")], str(d / "out"), settings)
    return d / "out"


def test_readonly_open_of_a_dedup_index_writes_nothing(built):
    before = _files(built)
    _, near = _story()
    with Index.open(built, readonly=True) as index:
        assert index.stats()["model"]["site_templates"] and not index.writable
        assert [m.id for m in index.query({"url": "https://m.example/b", "html": near})] == ["art"]
        with pytest.raises(IndexError_, match="read only"):
            index.add({"url": "https://m.example/b", "html": near})
    assert _files(built) == before


def test_adding_to_a_dedup_index_joins_its_clusters_and_holds_its_lock(tmp_path, built):
    import shutil

    out = tmp_path / "out"
    shutil.copytree(built, out)
    _, near = _story()
    with Index.open(out / "index.sqlite") as index:
        (added,) = index.add({"url": "https://m.example/b", "html": near})
        assert added.cluster_size == 2 and added.kept_id in ("art", "https://m.example/b")
        settings = Settings()
        settings.run.lock_timeout = 0
        with pytest.raises(IndexBusy, match="being written by another"):
            Index.open(out, settings)
        with pytest.raises(IndexBusy):
            dedup([str(built.parent / "crawl.jsonl")], str(out), settings, mode="add")
    with Index.open(out) as index:  # the lock was released; the add is there
        assert len(index) == 8 and index.get("https://m.example/b")["cluster_size"] == 2


def test_settings_that_fingerprint_otherwise_are_refused(built):
    settings = Settings()
    settings.match.algorithms = ["simhash"]
    with pytest.raises(IndexError_, match="match.algorithms"):
        Index.open(built, settings, readonly=True)


def test_top_level_names():
    assert pagetwin.Index is Index and pagetwin.PageError is PageError


def _section_blocks(title: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    section = text[start : end if end != -1 else len(text)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_readme_python_api_examples_run(tmp_path, monkeypatch):
    blocks = _section_blocks("Python API")
    assert blocks, "README: the Python API section has python examples"
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    for block in blocks:  # one after another, as a reader would run them
        exec(compile(block, "README.md (Python API)", "exec"), scope)  # noqa: S102


def _pool():
    """Pages whose clusters depend on each other: two stories with near copies and an exact
    copy, an unrelated page, and WARC revisit records of both stories."""
    from pagetwin.api import as_page
    from pagetwin.model import Page

    settings = Settings()
    html, near = _story()
    other = page("Market opens", article(7))
    other_near = page("Market opens", [p.replace(".", " today.", 1) for p in article(7)])
    raw = [("a", html), ("a-near", near), ("a-copy", html), ("b", other), ("b-near", other_near), ("u", page("Quiet", article(50)))]
    pages = [as_page({"id": i, "url": f"https://{i}.example/", "html": h}, 0, settings) for i, h in raw]
    digest = {p.id: p.payload_digest for p in pages}
    for target in ("a", "b"):
        pages.append(Page(id=f"r-{target}", url=f"https://{target}.example/", kind="revisit", refers_to_digest=digest[target]))
    return pages


POOL = _pool()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(range(len(POOL))), st.lists(st.integers(1, len(POOL) - 1), max_size=4))
def test_adds_in_any_batches_give_the_clusters_of_one_batch(order, cuts):
    """Incremental matching and clustering (only the new pages' components made again) give
    the clusters, kept pages and edges of one add of the same pages in the same order."""
    pages = [POOL[i] for i in order]
    bounds = [0, *sorted(set(cuts)), len(pages)]

    def outcome(batches):
        with Index.memory() as index:
            for batch in batches:
                index.add(batch)
            ids = dict(index._store.db.execute("SELECT pid, id FROM pages"))
            edges = {(frozenset((ids[a], ids[b])), kind) for a, b, kind, _ in index._store.edges()}
            return {(frozenset(m.id for m in c.members), c.kept.id) for c in index.clusters()}, edges

    one = outcome([pages])
    assert outcome([pages[a:b] for a, b in zip(bounds, bounds[1:]) if a < b]) == one
    clusters = {members for members, _ in one[0]}
    assert any({"a", "a-copy", "r-a"} <= m for m in clusters)  # a revisit follows its original


def test_a_file_that_is_not_an_index_is_one_clear_error(tmp_path):
    bogus = tmp_path / "notes.sqlite"
    bogus.write_text("not a database, just some words " * 100)
    for readonly in (False, True):
        with pytest.raises(IndexError_, match="not a pagetwin index"):
            Index.open(bogus, readonly=readonly)
    with pytest.raises(IndexError_, match="no index at"):
        Index.open(tmp_path / "missing.sqlite", readonly=True)


def test_adds_that_push_buckets_past_max_bucket_give_the_clusters_of_one_batch():
    """Twenty near copies of a story share candidate buckets (all-pairs under max_bucket = 20);
    ten more push them past it, so one run pairs the older copies by window only: the added
    run retracts the far pairs' evidence and re-forms the clusters of those pages alone."""
    story = article(3, paragraphs=8)
    pages = []
    for i in range(30):
        text = list(story)
        text[i % 8] = text[i % 8].replace(".", f", edition {i}.", 1)
        pages.append({"id": f"v{i}", "url": f"https://v{i}.example/story", "html": page("Tide tables", text)})
    pages += _others(3)
    settings = Settings()
    settings.match.max_bucket = 20

    def outcome(batches):
        with Index.memory(settings) as index:
            for batch in batches:
                index.add(batch)
            ids = dict(index._store.db.execute("SELECT pid, id FROM pages"))
            edges = {(ids[a], ids[b], kind, ev) for a, b, kind, ev in index._store.edges()}
            return {(frozenset(m.id for m in c.members), c.kept.id) for c in index.clusters()}, edges

    one = outcome([pages])
    first_twenty = outcome([pages[:20]])[1]
    assert {(a, b) for a, b, *_ in first_twenty} - {(a, b) for a, b, *_ in one[1]}  # pairs one run no longer makes
    assert outcome([pages[:20], pages[20:]]) == one
    assert outcome([pages[:19], pages[19:25], pages[25:]]) == one


def test_each_answered_add_syncs_the_wal_to_disk(tmp_path):
    """Power loss: a writer's commit fsyncs the WAL before ``add`` returns (synchronous=FULL),
    so each add is on disk when answered. strace counts the syncs of the -wal file: at least one
    more per add (with SQLite's NORMAL, none until a checkpoint)."""
    import shutil
    import subprocess
    import sys

    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed")
    root = Path(__file__).resolve().parent.parent

    def wal_syncs(adds: int) -> int:
        path, log = tmp_path / f"i{adds}.sqlite", tmp_path / f"strace{adds}.txt"
        Index.open(path).close()  # created, its first run written: only the adds are traced below
        code = (
            "import sys; from pagetwin.api import Index; from tests.fixtures.news import article, page\n"
            f"with Index.open({str(path)!r}) as index:\n"
            f"    for n in range({adds}): index.add({{'id': f'p{{n}}', 'html': page(f'S{{n}}', article(n))}})\n"
        )
        cmd = [strace, "-f", "-y", "-e", "trace=fsync,fdatasync", "-o", str(log), sys.executable, "-c", code]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, timeout=300)
        if done.returncode != 0 and ("ptrace" in done.stderr or "PTRACE" in done.stderr):
            pytest.skip(f"strace cannot trace here: {done.stderr.strip()[:200]}")
        assert done.returncode == 0, done.stderr
        return sum(f"{path.name}-wal>" in line for line in log.read_text().splitlines())

    assert wal_syncs(4) - wal_syncs(1) >= 3


def test_get_on_a_lean_index_reads_the_text_back_from_the_source_record(tmp_path):
    """index.store_text = false: Index.get (and so GET /pages/{id}) reads a page's text back from
    its WARC record as explain does, the text of a full index; a source gone is said so."""
    import shutil

    from pagetwin.cli import main
    from pagetwin.outputs.warc import WarcWriter
    from tests.fixtures.news import news_crawl

    warc = tmp_path / "crawl.warc.gz"
    with WarcWriter(warc) as w:
        news_crawl(w, others=3)
    for name, extra in (("full", []), ("lean", ["--set", "index.store_text=false"])):
        assert main(["dedup", str(warc), "--out", str(tmp_path / name), "--workers", "1", *extra]) == 0
    with Index.open(tmp_path / "full", readonly=True) as full, Index.open(tmp_path / "lean", readonly=True) as lean:
        ids = [c.kept.id for c in full.clusters()]
        assert len(ids) >= 3
        for page_id in ids:
            want, got = full.get(page_id), lean.get(page_id)
            assert want["text"] and got["text"] == want["text"] and "text_problem" not in got
    shutil.move(warc, tmp_path / "moved.warc.gz")
    with Index.open(tmp_path / "lean", readonly=True) as lean:
        gone = lean.get(ids[0])
        assert gone["text"] == "" and "moved or deleted" in gone["text_problem"]
