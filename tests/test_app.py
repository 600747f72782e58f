"""pagetwin.app: the application core's four entry points validate their settings first, take
what they learn as a parameter (never by editing the settings), and dedup refuses an index whose
learned model was made with other settings."""

from __future__ import annotations

import json

import pytest

from pagetwin import app
from pagetwin.config import ConfigError, Settings
from pagetwin.index.sqlite import IndexError_
from pagetwin.learned import Learning
from tests.fixtures.sites import site_pages


def _site(tmp_path, n=8, seed=3):
    path = tmp_path / f"site{seed}.jsonl"
    with path.open("w") as fh:
        for url, html, _ in site_pages(n, seed=seed, templates="ab"):
            fh.write(json.dumps({"url": url, "html": html}) + "\n")
    return str(path)


@pytest.fixture
def settings():
    s = Settings()
    s.run.workers = 1
    s.run.progress = False
    return s


@pytest.fixture
def learned_what(monkeypatch):
    """What each learn step was asked to learn."""
    from pagetwin.runners.local import LocalEngine

    asked: list[Learning] = []
    real = LocalEngine.learn

    def recording(self, inputs, settings, learning, *args, **kwargs):
        asked.append(learning)
        return real(self, inputs, settings, learning, *args, **kwargs)

    monkeypatch.setattr(LocalEngine, "learn", recording)
    return asked


def test_each_entry_point_validates_before_any_work(tmp_path, settings):
    site = _site(tmp_path)
    settings.minhash.threshold = 1.5
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="minhash.threshold"):
        app.dedup([site], out, settings)
    assert not out.exists()
    for call in (
        lambda: app.iter_texts([site], settings),  # raised at the call, not at the first row
        lambda: app.iter_keywords([site], settings),
        lambda: app.learn_templates([site], settings),
    ):
        with pytest.raises(ConfigError, match="minhash.threshold"):
            call()


def test_keywords_take_top_and_weighting_as_parameters(tmp_path, settings, learned_what):
    site = _site(tmp_path)
    before = settings.to_dict()
    rows = list(app.iter_keywords([site], settings, top=3, weighting="tfidf"))
    assert len(rows) == 8 and all(1 <= len(r["keywords"]) <= 3 for r in rows)
    assert learned_what[-1] == Learning(templates=True, doc_freq=True)
    density = list(app.iter_keywords([site], settings, top=3, weighting="density"))
    assert learned_what[-1] == Learning(templates=True)  # no document frequencies for density
    assert [r["keywords"] for r in density] != [r["keywords"] for r in rows]
    assert settings.to_dict() == before
    assert [len(r["keywords"]) for r in app.iter_keywords([site], settings)] == [10] * 8  # the default top
    with pytest.raises(ConfigError, match="weighting"):
        app.iter_keywords([site], settings, weighting="bm25")
    with pytest.raises(ConfigError, match="at least 1"):
        app.iter_keywords([site], settings, top=0)


def test_text_learns_templates_only(tmp_path, settings, learned_what):
    settings.match.algorithms = ["exact", "con", "images"]  # what dedup would learn for does not matter
    settings.keywords.weighting = "tfidf"
    texts = list(app.iter_texts([_site(tmp_path)], settings))
    assert len(texts) == 8 and all(t["text"] for t in texts)
    assert learned_what == [Learning(templates=True)]
    settings.extract.templates = False
    assert len(list(app.iter_texts([_site(tmp_path)], settings))) == 8
    assert len(learned_what) == 1  # nothing to learn: no pass 1


def test_templates_are_learned_whatever_the_settings_say_and_the_settings_stay(tmp_path, settings, learned_what):
    settings.extract.templates = False
    settings.keywords.weighting = "tfidf"
    settings.match.algorithms = ["exact", "con"]
    before = settings.to_dict()
    templates = app.learn_templates([_site(tmp_path)], settings)
    assert sum(c.pages for c in templates.sites_.values()) == 8
    assert learned_what == [Learning(templates=True)]
    assert settings.to_dict() == before


def test_an_index_learned_with_other_settings_is_refused_naming_the_setting(tmp_path, settings):
    out = tmp_path / "out"
    app.dedup([_site(tmp_path)], out, settings)
    settings.input.max_dom_depth = 64
    with pytest.raises(IndexError_, match="input.max_dom_depth = 512, not 64"):
        app.dedup([_site(tmp_path, seed=4)], out, settings, mode="add")
    settings.input.max_dom_depth = 512
    summary = app.dedup([_site(tmp_path, seed=4)], out, settings, mode="add")
    assert summary["pages"]["read"] == 8 and summary["pages"]["in_output"] == 16


def test_the_summary_has_every_step(tmp_path, settings):
    summary = app.dedup([_site(tmp_path)], tmp_path / "out", settings)
    assert list(summary["seconds"]) == ["learn", "fingerprint", "match", "cluster", "write", "total"]
    assert summary["pages"]["read"] == summary["pages"]["in_output"] == 8
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["clusters"] == summary["clusters"]


def test_the_package_exports_the_core():
    import pagetwin

    for name in ("dedup", "iter_texts", "iter_keywords", "learn_templates"):
        assert getattr(pagetwin, name) is getattr(app, name) and name in pagetwin.__all__


def test_text_rows_carry_the_inputs_metadata(tmp_path):
    """pagetwin text keeps a JSONL line's metadata (issue 13, item 1); pages without any get none."""
    import json as _json

    from pagetwin.app import iter_texts
    from pagetwin.config import Settings

    body = "<html><body><article><p>" + "Rivers and their bridges, told at length. " * 12 + "</p></article></body></html>"
    path = tmp_path / "docs.jsonl"
    path.write_text(
        _json.dumps({"id": "a", "url": "https://x.example/a", "html": body, "metadata": {"dump": "cc-2024"}}) + "\n"
        + _json.dumps({"id": "b", "url": "https://x.example/b", "html": body}) + "\n"
    )
    settings = Settings()
    settings.run.workers = 1
    rows = {row["id"]: row for row in iter_texts([str(path)], settings)}
    assert rows["a"]["metadata"] == {"dump": "cc-2024"}
    assert "Rivers and their bridges" in rows["a"]["text"]
    assert "metadata" not in rows["b"]


def test_the_link_step_gives_the_collector_back_as_it_found_it():
    """app._collector_paused: off inside, then as it was (on or off), after an error too."""
    import gc

    from pagetwin.app import _collector_paused

    was = gc.isenabled()
    try:
        for before in (True, False):
            gc.enable() if before else gc.disable()
            with _collector_paused():
                assert not gc.isenabled()
            assert gc.isenabled() is before
            with pytest.raises(KeyError), _collector_paused():
                raise KeyError("x")
            assert gc.isenabled() is before
    finally:
        gc.enable() if was else gc.disable()
