"""dedup (issue 13): a learned model is never counted twice for the same pages, and a run
interrupted during pass 2 leaves the index as it was."""

from __future__ import annotations

import json

import pytest

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index
from pagetwin.app import dedup, stored_model
from pagetwin.runners.local import LocalEngine
from tests.fixtures.sites import site_pages


def _write(path, pages):
    with path.open("w") as fh:
        for url, html in pages:
            fh.write(json.dumps({"url": url, "html": html}) + "\n")
    return str(path)


def _pages(n, seed):
    """``n`` pages of one site (fewer than min_site_pages each: counted twice, they would cross
    it), and a copy of the first under another URL (a duplicate to cluster)."""
    pages = [(url, html) for url, html, _ in site_pages(n, seed=seed, templates="a")]
    return pages + [(pages[0][0].replace(".html", "-copy.html"), pages[0][1])]


@pytest.fixture(params=["templates", "templates and tf-idf"])
def settings(request):
    s = Settings()
    s.run.workers = 1
    s.run.progress = False
    s.extract.min_site_pages = 5  # each input's 3 pages are under it; counted twice they would cross it
    if request.param == "templates and tf-idf":  # document frequencies are learned too
        s.keywords.weighting = "tfidf"
        s.match.algorithms = [*s.match.algorithms, "con"]
    return s


@pytest.fixture
def inputs(tmp_path):
    return _write(tmp_path / "a.jsonl", _pages(3, seed=1)), _write(tmp_path / "b.jsonl", _pages(3, seed=2))


def _model(out, settings):
    """(pages per site, documents of the document frequencies) of the model stored in out."""
    index = Index.open_readonly(out / "index.sqlite")
    try:
        learned = stored_model(index, settings)
        if learned is None:
            return None
        sites = {site: counts.pages for site, counts in learned.templates.sites_.items()}
        return sites, learned.doc_freq.n_docs_ if learned.doc_freq is not None else None
    finally:
        index.db.close()


def _stored_pages(out):
    index = Index.open_readonly(out / "index.sqlite")
    try:
        return index.page_count()
    finally:
        index.db.close()


def test_the_same_inputs_again_learn_nothing_and_give_the_same_clusters(tmp_path, inputs, settings):
    a, _ = inputs
    out = tmp_path / "out"
    dedup([a], out, settings)
    model = _model(out, settings)
    clusters = (out / "clusters.jsonl").read_bytes()
    assert model is not None and sum(model[0].values()) == 3  # the copy is counted once
    summary = dedup([a], out, settings, mode="add")
    assert summary["pages"]["already_indexed"] == 4
    assert _model(out, settings) == model
    assert (out / "clusters.jsonl").read_bytes() == clusters
    assert _stored_pages(out) == 4


def test_inputs_one_after_the_other_learn_what_they_learn_together(tmp_path, inputs, settings):
    a, b = inputs
    dedup([a], tmp_path / "seq", settings)
    dedup([b], tmp_path / "seq", settings, mode="add")
    dedup([a, b], tmp_path / "both", settings)
    seq, both = _model(tmp_path / "seq", settings), _model(tmp_path / "both", settings)
    assert seq == both and sum(both[0].values()) == 6
    # Adding A again changes nothing either.
    dedup([a], tmp_path / "seq", settings, mode="add")
    assert _model(tmp_path / "seq", settings) == both


def test_a_copy_of_a_stored_page_is_not_learned_again(tmp_path, inputs, settings):
    a, _ = inputs
    pages = _pages(3, seed=1)
    copy = _write(tmp_path / "copy.jsonl", [(url.replace(".html", "-again.html"), html) for url, html in pages])
    dedup([a], tmp_path / "seq", settings)
    dedup([copy], tmp_path / "seq", settings, mode="add")
    dedup([a, copy], tmp_path / "both", settings)
    assert _model(tmp_path / "seq", settings) == _model(tmp_path / "both", settings)


class _Crash(Exception):
    pass


class _CrashingEngine(LocalEngine):
    """Pass 2 fails after ``after`` pages."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after

    def fingerprint(self, *args, **kwargs):
        for n, result in enumerate(super().fingerprint(*args, **kwargs)):
            if n == self.after:
                raise _Crash()
            yield result


@pytest.mark.parametrize("first", ["crash", "run then crash"])
def test_a_run_interrupted_in_pass_2_leaves_the_index_as_it_was(tmp_path, inputs, settings, first):
    a, b = inputs
    clean = tmp_path / "clean"
    dedup([a, b], clean, settings)
    out = tmp_path / "out"
    if first == "run then crash":
        dedup([a], out, settings)
        before = (_model(out, settings), _stored_pages(out))
        with pytest.raises(_Crash):
            dedup([b], out, settings, mode="add", engine=_CrashingEngine(after=2))
        assert (_model(out, settings), _stored_pages(out)) == before
        dedup([b], out, settings, mode="add")
    else:
        with pytest.raises(_Crash):
            dedup([a, b], out, settings, engine=_CrashingEngine(after=5))
        assert _model(out, settings) is None and _stored_pages(out) == 0
        dedup([a, b], out, settings, mode="add")
    assert _model(out, settings) == _model(clean, settings)
    assert (out / "clusters.jsonl").read_bytes() == (clean / "clusters.jsonl").read_bytes()


def test_pass_1_does_not_parse_the_pages_the_index_holds(tmp_path, inputs, settings, monkeypatch):
    import pagetwin.pipeline as pipeline

    a, b = inputs
    out = tmp_path / "out"
    dedup([a], out, settings)
    calls = []
    real = pipeline.parse_limited

    def counting(html, max_depth):
        calls.append(1)
        return real(html, max_depth)

    monkeypatch.setattr(pipeline, "parse_limited", counting)
    dedup([a, b], out, settings, mode="add")
    assert len(calls) == 4  # b's pages, once (pass 2 replays pass 1's parse)


def test_cli_add_with_a_process_pool(tmp_path, inputs):
    from pagetwin.cli import main

    a, b = inputs
    out = tmp_path / "out"
    args = ["dedup", a, b, "--out", str(out), "--workers", "2"]
    assert main(args) == 0
    clusters = (out / "clusters.jsonl").read_bytes()
    model = _model(out, Settings())
    assert main([*args, "--add"]) == 0
    assert (out / "clusters.jsonl").read_bytes() == clusters and _model(out, Settings()) == model
    assert json.loads((out / "summary.json").read_text())["pages"]["already_indexed"] == 8
