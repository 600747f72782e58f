"""The native fingerprint kernels (pagetwin/fingerprints/_sketch.pyx) give exactly what their
numpy references give: token hashes through the shared cache, window hashes, MinHash
signatures with their distinct counts, on generated values and on the pages of a real crawl."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.fingerprints import hashing
from pagetwin.fingerprints.hashing import TokenHasher, token_hashes, window_hashes, window_hashes_reference
from pagetwin.fingerprints.minhash import MinHash, minhash_features, minhash_features_reference, permutations

pytest.importorskip("pagetwin.fingerprints._sketch", reason="native kernels not built (pip install -e .)")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "debian-docs.warc.gz"
U64 = st.integers(0, (1 << 64) - 1)
# Few distinct values too, so that repeats (and ties of the minimum) occur.
HASHES = st.one_of(st.lists(U64, max_size=300), st.lists(st.sampled_from([0, 1, 7, (1 << 64) - 1, 1 << 32, 3 << 40]), max_size=50))
TOKENS = st.lists(st.one_of(st.sampled_from(["a", "b", "dé", "中", "x y", "", "\ud800", "🎉"]), st.text(max_size=4)), max_size=60)


def _array(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


@settings(max_examples=300, deadline=None)
@given(HASHES, st.integers(0, 8), st.booleans())
def test_window_hashes_equal_the_reference(values, k, mixed):
    words = _array(values)
    native = window_hashes(words, k, mixed)
    assert native.dtype == np.uint64
    assert native.tolist() == window_hashes_reference(words, k, mixed).tolist()


@settings(max_examples=300, deadline=None)
@given(HASHES, st.integers(1, 200), st.integers(0, 3))
def test_minhash_features_equal_the_reference(values, num_perm, seed):
    # num_perm not a multiple of 4 too: the native loop takes permutations four at a time
    a, b = permutations(num_perm, seed)
    shingles = _array(values)
    native = minhash_features(shingles, a, b)
    assert native.dtype == np.uint32 and native.shape == (num_perm + 1,)
    assert native.tolist() == minhash_features_reference(shingles, a, b).tolist()
    assert native[-1] == len(np.unique(shingles))


def test_features_of_no_shingles_are_all_ones_and_no_count_as_the_reference():
    a, b = permutations(16, 1)
    empty = np.zeros(0, dtype=np.uint64)
    assert minhash_features(empty, a, b).tolist() == minhash_features_reference(empty, a, b).tolist() == [0xFFFFFFFF] * 16 + [0]


@settings(max_examples=200, deadline=None)
@given(st.lists(TOKENS, min_size=1, max_size=6), st.integers(1, 12))
def test_token_hasher_gives_the_reference_values_page_after_page(pages, max_tokens):
    native, reference = TokenHasher(max_tokens), TokenHasher(max_tokens)
    for tokens in pages:
        got = native(tokens)
        assert got.dtype == np.uint64
        assert got.tolist() == reference.reference(tokens).tolist() == token_hashes(tokens).tolist()
        assert len(native._cache) <= max_tokens  # the cache stays bounded


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=80), st.integers(1, 4))
def test_token_hasher_by_object_gives_each_sight_its_hash(picks, max_tokens):
    # the word scan hands out one object for many sights of a word, and equal tokens as other
    # objects too: each object is looked up once, each position still gets its token's hash
    words = ["alpha", "beta", "gamma"]
    copies = ["".join(w) for w in words]  # equal strings, other objects
    tokens = [(words + copies)[p] for p in picks]
    assert TokenHasher(max_tokens)(tokens).tolist() == token_hashes(tokens).tolist()


def test_token_hasher_keeps_hashes_between_pages():
    hasher = TokenHasher()
    hasher(["alpha", "beta", "alpha"])
    assert set(hasher._cache) == {"alpha", "beta"}
    assert hasher(("beta",)).tolist() == token_hashes(["beta"]).tolist()  # any sequence of tokens


def _real_docs(limit: int = 200):
    from pagetwin.config import Settings
    from pagetwin.model import Doc
    from pagetwin.pipeline import Worker
    from pagetwin.sources import SourceStats, iter_pages

    settings_ = Settings()
    worker = Worker(settings_)
    docs = []
    for page in iter_pages([str(EXAMPLE)], settings_.input, SourceStats()):
        text = worker.safe_extract(page)
        if text:
            analysis = worker.analyzer.analyze(text)
            docs.append(Doc(page_id=page.id, url=page.url, host=page.host, crawl_date="", text=text,
                            lang=analysis.lang, tokens=analysis.tokens, stop=analysis.stop))  # fmt: skip
        if len(docs) >= limit:
            break
    return docs


@pytest.mark.parametrize("options", [{}, {"multiset": True}, {"shingle": 4, "content_only": True}, {"shingle": 1}])
def test_minhash_features_are_the_same_without_the_native_module(monkeypatch, options):
    from pagetwin.config import MinHashSettings

    docs = _real_docs()
    assert docs, "no text extracted from the example crawl"
    native = MinHash(MinHashSettings(**options))
    got = [native.features(d) for d in docs]
    monkeypatch.setattr(hashing, "_sketch", None)
    reference = MinHash(MinHashSettings(**options))
    want = [reference.features(d) for d in docs]
    assert [None if f is None else f.tolist() for f in got] == [None if f is None else f.tolist() for f in want]
    assert sum(f is not None for f in got) > 10


def test_without_the_native_module_one_warning_and_the_same_values(monkeypatch, caplog):
    words = token_hashes(["a", "b", "c", "a"])
    expected = window_hashes(words, 2, True).tolist()
    monkeypatch.setattr(hashing, "_sketch", None)
    monkeypatch.setattr(hashing, "_SKETCH_MISSING", "No module named 'pagetwin.fingerprints._sketch'", raising=False)
    hashing._warn_reference.cache_clear()
    with caplog.at_level(logging.WARNING, logger="pagetwin.fingerprints.hashing"):
        assert window_hashes(words, 2, True).tolist() == expected
        assert TokenHasher()(["a", "b"]).tolist() == token_hashes(["a", "b"]).tolist()
    warnings = [r for r in caplog.records if "native fingerprint kernels are not built" in r.message]
    assert len(warnings) == 1 and "pip install -e ." in warnings[0].message
    hashing._warn_reference.cache_clear()
