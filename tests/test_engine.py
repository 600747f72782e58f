"""pagetwin.engine: the two engines are equal implementations of one protocol (same methods, same
arguments), and what an index stores can be shipped to workers that cannot ask it."""

from __future__ import annotations

import inspect
import json
import pickle
import types

import pytest

from pagetwin.config import Settings
from pagetwin.engine import Engine, StoredSnapshot, source_path, worker_count
from pagetwin.learned import Learned, Learning
from pagetwin.model import Page
from pagetwin.runners import spark
from pagetwin.runners.local import LocalEngine
from pagetwin.sources import SourceStats
from tests.fixtures.sites import site_pages
from tests.fixtures.terminal import Terminal


@pytest.mark.parametrize("method", ["learn", "fingerprint", "close"])
def test_both_engines_take_the_protocols_arguments(method):
    expected = list(inspect.signature(getattr(Engine, method)).parameters)
    for engine in (LocalEngine, spark.SparkEngine):
        assert list(inspect.signature(getattr(engine, method)).parameters) == expected, engine.__name__


def test_a_snapshot_answers_as_the_index_would_and_pickles(tmp_path):
    page = Page(id="a", url="http://x/a", source=str(tmp_path / "crawl.warc.gz"), payload_digest="sha1:A")
    snapshot = StoredSnapshot(frozenset({("a", source_path(page.source))}), frozenset({"sha1:A"}))
    again = pickle.loads(pickle.dumps(snapshot))
    assert again.stored(page) and again.counted("sha1:A")
    assert not again.stored(Page(id="b", url="http://x/b", source=page.source)) and not again.counted("sha1:B")


def test_worker_count():
    settings = Settings()
    settings.run.workers = 3
    assert worker_count(settings) == 3
    settings.run.workers = 0
    assert worker_count(settings) >= 1


def _site(tmp_path, n, seed):
    path = tmp_path / f"s{seed}.jsonl"
    with path.open("w") as fh:
        for url, html, _ in site_pages(n, seed=seed, templates="a"):
            fh.write(json.dumps({"url": url, "html": html}) + "\n")
    return str(path)


@pytest.mark.parametrize("keep_pages", [False, True], ids=["reparse", "reuse_parse"])
def test_spark_executors_skip_the_pages_an_index_stores(tmp_path, keep_pages):
    """The executors' pass 1, without Spark: pages the snapshot stores are not learned from (nor
    parsed), pages whose payload it stores are parsed but not learned from, as LocalEngine."""
    settings = Settings()
    learning = Learning(templates=True, doc_freq=True)
    a, b = _site(tmp_path, 6, seed=1), _site(tmp_path, 4, seed=2)
    stats = SourceStats()
    from pagetwin.sources import iter_pages

    pages_a = list(iter_pages([a], settings.input, stats))
    stored = StoredSnapshot(
        frozenset((p.id, source_path(p.source)) for p in pages_a[:4]),  # 4 of a's pages stored
        frozenset({pages_a[4].payload_digest}),  # a 5th page's payload stored under another id
    )
    units = [(a, None), (b, None)]
    from pagetwin.runners.spark_learn import fold_in_process

    fn = spark._learn_partition_keeping if keep_pages else spark._learn_partition
    shared = types.SimpleNamespace(value=(f"skip-{keep_pages}", settings, learning, stored))
    parts = [list(fn(shared, i, [unit])) for i, unit in enumerate(units)]
    items = [item for part in parts for item in part]
    learned = fold_in_process(
        [[v for tag, v in part if tag == spark._LEARNED] if keep_pages else part for part in parts], settings, learning
    )
    local = LocalEngine()
    try:
        expected = local.learn([a, b], settings, learning, stored=stored)
    finally:
        local.close()
    assert learned.doc_freq.n_docs_ == expected.doc_freq.n_docs_ == 1 + 4
    assert learned.doc_freq == expected.doc_freq
    if keep_pages:  # the stored pages go to pass 2 as known, unparsed; the others parsed
        tags = [(tag, v.id) for tag, v in items if tag in (spark._PAGE, spark._KNOWN)]
        assert [t for t, _ in tags] == [spark._KNOWN] * 4 + [spark._PAGE] * 6
        pass2 = types.SimpleNamespace(value=(f"skip2-{keep_pages}", settings, learned))
        results = [r for _, r in spark._fingerprint_kept(pass2, items) if r is not None]
        assert [r.doc is None for r in results] == [True] * 4 + [False] * 6


def test_progress_shows_the_total_and_the_time_left_when_the_inputs_have_sizes(tmp_path, monkeypatch):
    from pagetwin.engine import Progress, input_layout

    a, folder = tmp_path / "a.warc.gz", tmp_path / "html"
    a.write_bytes(b"x" * 3000)
    folder.mkdir()
    (folder / "1.html").write_bytes(b"y" * 1000)
    starts, total = input_layout([str(a), str(folder)])
    assert total == 4000 and starts[str(folder / "1.html")] == (3000, 1000)
    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    progress = Progress(Settings(), "fingerprinting", [str(a), str(folder)])
    page = Page(id="p", url="http://x/", source=str(a), meta={"warc_offset": 1500})
    progress.update(page=page)
    assert progress.bar.n == 1500 and progress.bar.total == 4000
    progress.update(page=Page(id="q", url="http://x/q", source=str(folder / "1.html")))  # no offset: its file's start
    assert progress.bar.n == 3000
    progress.bar.refresh()
    assert "3.91k" in term.text and "<" in term.text and "2 pages" in term.text  # total in KiB, time left, pages
    progress.close()
    assert progress.bar.n == 4000


def test_progress_is_silent_off_a_terminal_and_counts_pages_without_sizes(tmp_path, monkeypatch):
    from pagetwin.engine import Progress

    assert Progress(Settings(), "x", [str(tmp_path)]).bar is None  # pytest's stderr is not a terminal
    monkeypatch.setattr("sys.stderr", Terminal())
    progress = Progress(Settings(), "x", [str(tmp_path / "empty")])
    progress.update(page=Page(id="p", url="u", source="elsewhere"))
    assert progress.bar.total is None and progress.bar.n == 1
    progress.close()
