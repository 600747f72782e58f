"""pagetwin.learned: one fold, one merge contract (in place), one serialisation, and no merging
of models learned with different settings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from pagetwin.config import Settings
from pagetwin.learned import (
    LEARNED_WITH,
    ImageHash,
    Learned,
    LearnedMismatch,
    Learning,
    LearnRecord,
    learned_with,
)
from pagetwin.model import Page
from pagetwin.pipeline import Worker
from tests.fixtures.sites import site_pages

ALL = Learning(templates=True, doc_freq=True, images=True)


def _records(n: int, seed: int, settings: Settings, copies: int = 0) -> list[tuple[Page, LearnRecord]]:
    """(page, Worker.learn(page)) for ``n`` pages of one site, the first repeated ``copies``
    times byte for byte (same payload digest) under other URLs."""
    worker = Worker(settings, learning=ALL)
    pages = [
        Page(id=f"{seed}-{i}", url=url, body=html.encode(), payload_digest=f"sha1:{seed}-{i}")
        for i, (url, html, _) in enumerate(site_pages(n, seed=seed, templates="a"))
    ]
    pages += [Page(id=f"{seed}-copy{k}", url=f"{pages[0].url}?{k}", body=pages[0].body,
                   payload_digest=pages[0].payload_digest) for k in range(copies)]  # fmt: skip
    return [(page, worker.learn(page)) for page in pages]


def _state(learned: Learned) -> tuple:
    """What a model holds, comparable (the templates by their serialisation)."""
    templates = learned.templates.to_bytes() if learned.templates is not None else None
    doc_freq = (learned.doc_freq.n_docs_, dict(learned.doc_freq.df_)) if learned.doc_freq is not None else None
    return templates, doc_freq, dict(learned.image_hashes), dict(learned.learned_with)


def test_learn_records_are_named():
    settings = Settings()
    (_, record), *_ = _records(1, seed=1, settings=settings)
    assert record.site and record.stats is not None and record.words and record.image is None
    assert record.parsed == b""  # not kept unless the engine asks (keep_parsed)
    image = Worker(settings, learning=Learning()).learn(Page(id="i", url="http://x/a.png", body=b"", kind="image"))
    assert image == LearnRecord()  # no hash asked for, none computed


def test_fit_counts_a_payload_once_and_every_image_url():
    settings = Settings()
    records = _records(6, seed=2, settings=settings, copies=3)
    records.append((Page(id="img", url="http://x/a.png", kind="image"), LearnRecord(image=ImageHash("x/a.png", 7))))
    learned = Learned.fit(records, settings, ALL)
    assert learned.doc_freq.n_docs_ == 6  # the 3 copies are the first page again
    assert sum(c.pages for c in learned.templates.sites_.values()) == 6
    assert learned.image_hashes == {"x/a.png": 7}
    assert learned.learned_with == learned_with(settings) and set(learned.learned_with) == set(LEARNED_WITH)


def test_fit_learns_only_what_it_is_asked_for():
    settings = Settings()
    records = _records(3, seed=3, settings=settings)
    only_templates = Learned.fit(records, settings, Learning(templates=True))
    assert only_templates.templates is not None and only_templates.doc_freq is None
    only_df = Learned.fit(records, settings, Learning(doc_freq=True))
    assert only_df.templates is None and only_df.doc_freq.n_docs_ == 3


def test_merge_adds_into_self_and_leaves_the_other_as_it_was():
    settings = Settings()
    a = Learned.fit(_records(4, seed=4, settings=settings), settings, ALL)
    b = Learned.fit(_records(5, seed=5, settings=settings), settings, ALL)
    a.image_hashes, b.image_hashes = {"u": 1, "v": 2}, {"u": 9, "w": 3}
    b_before = _state(b)
    merged = a.merge(b)
    assert merged is a
    assert _state(b) == b_before
    assert a.doc_freq.n_docs_ == 9 and sum(c.pages for c in a.templates.sites_.values()) == 9
    assert a.image_hashes == {"u": 1, "v": 2, "w": 3}  # this model's hashes win
    assert a.merge(None) is a


@given(st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=6), max_size=12), st.integers(0, 12))
@hsettings(max_examples=60, deadline=None)
def test_fitting_shards_then_merging_equals_fitting_the_union(docs, cut):
    settings = Settings()
    learning = Learning(doc_freq=True)
    records = [(Page(id=str(i), url=f"http://s/{i}"), LearnRecord(words=sorted(set(w)))) for i, w in enumerate(docs)]
    whole = Learned.fit(records, settings, learning)
    merged = Learned.fit(records[:cut], settings, learning).merge(Learned.fit(records[cut:], settings, learning))
    assert merged.doc_freq == whole.doc_freq


OTHER_COUNTS = [("input.max_dom_depth", 64), ("extract.site_key", "domain"), ("text.lang", "en")]


@pytest.mark.parametrize("name, value", OTHER_COUNTS)
def test_models_learned_with_other_settings_are_not_merged(name, value):
    settings, other = Settings(), Settings()
    other.set(name, value)
    a = Learned.empty(settings, ALL)
    b = Learned.empty(other, ALL)
    with pytest.raises(LearnedMismatch, match=f"{name} = {value!r}"):
        a.merge(b)
    # Thresholds read in pass 2 do not change what was counted.
    other = Settings()
    other.set("extract.template_share", 0.5)
    assert a.merge(Learned.empty(other, ALL)) is a


def test_the_blob_and_the_parts_give_the_model_back():
    settings = Settings()
    learned = Learned.fit(_records(5, seed=6, settings=settings), settings, ALL)
    learned.image_hashes = {"x/a.png": 11}
    assert _state(Learned.from_bytes(learned.to_bytes(), settings)) == _state(learned)
    parts = learned.to_parts()
    assert set(parts) == {"site_templates", "doc_freq", "image_hashes", "learned_with"}
    assert _state(Learned.from_parts(parts, settings)) == _state(learned)
    # An empty model stays a model (Spark partitions with no page), image hashes alone too.
    empty = Learned.empty(settings, ALL)
    assert _state(Learned.from_bytes(empty.to_bytes(), settings)) == _state(empty)
    images = Learned(None, None, {"a": 1}, learned_with(settings))
    assert _state(Learned.from_bytes(images.to_bytes(), settings)) == _state(images)
    with pytest.raises(ValueError, match="not a pagetwin learned model"):
        Learned.from_bytes(b"junk", settings)


def test_pass_two_leaves_the_model_as_it_was_serialised():
    """dedup serialises the model once, before pass 2, for its checkpoint and for the end
    (app._fingerprint_step): pass 2 must read the model and never change it."""
    settings = Settings()
    records = _records(6, seed=8, settings=settings) + _records(4, seed=9, settings=settings)
    learned = Learned.fit(records, settings, ALL)
    learned.image_hashes = {"x/a.png": 11}
    parts = learned.to_parts()
    assert Learned.blob(parts) == learned.to_bytes()
    worker = Worker(settings, learned)
    other = Page(id="new", url="https://elsewhere.example/a.html", body=records[0][0].body)  # a site it never saw
    results = [worker.fingerprint(page) for page, _ in records] + [worker.fingerprint(other)]
    assert all(not r.error and r.doc is not None and r.doc.text for r in results)
    assert learned.to_parts() == parts


def test_a_model_stored_before_its_settings_were_recorded_counts_as_this_runs():
    settings = Settings()
    parts = Learned.fit(_records(3, seed=7, settings=settings), settings, ALL).to_parts()
    del parts["learned_with"]
    assert Learned.from_parts(parts, settings).learned_with == learned_with(settings)
    assert Learned.from_parts({"image_hashes": b'{"a": 1}'}, settings) is None  # no templates nor df


def test_learning_for_dedup_follows_the_settings():
    settings = Settings()
    settings.match.algorithms = ["exact", "con", "images"]
    settings.keywords.weighting = "tfidf"
    assert Learning.for_dedup(settings) == Learning(templates=True, doc_freq=True, images=True)
    settings.extract.templates = False
    settings.keywords.weighting = "density"
    settings.match.algorithms = ["exact"]
    assert not Learning.for_dedup(settings).anything
