"""Chunk-overlap copy detection: duplicates, partial copies with containment, properties."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import ChunkSettings
from pagetwin.fingerprints.chunks import ChunkFeatures, Chunks, chunk_hashes, compare, winnow
from pagetwin.model import Doc


def words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"w{rng.randrange(20000)}" for _ in range(n)]


def doc(tokens: list[str]) -> Doc:
    return Doc("p", "u", "h", None, " ".join(tokens), tokens=list(tokens), stop=[False] * len(tokens))


def check(alg: Chunks, a: Doc, b: Doc):
    """Matcher view: None when no shared key, else the Evidence."""
    fa, fb = alg.features(a), alg.features(b)
    if fa is None or fb is None or not set(alg.keys(fa)) & set(alg.keys(fb)):
        return None
    return alg.verify(fa, fb)


def test_identical_pages_are_duplicates():
    t = words(300, 1)
    ev = check(Chunks(), doc(t), doc(list(t)))
    assert ev.passed and ev.detail["kind"] == "duplicate"
    assert ev.score == 1.0 and ev.detail["contain_ab"] == 1.0 and ev.detail["contain_ba"] == 1.0


def test_small_edits_stay_duplicates():
    t = words(600, 2)
    edited = list(t)
    for i in (100, 300, 500):
        edited[i] = "edited"
    ev = check(Chunks(), doc(t), doc(edited))
    assert ev.passed and ev.detail["kind"] == "duplicate" and ev.score > 0.9


def test_page_quoting_half_of_another_is_a_partial_copy():
    source = words(600, 3)
    quote = source[:300] + words(30, 4)  # half of the source plus a short comment
    ev = check(Chunks(), doc(source), doc(quote))
    assert ev is not None and ev.passed
    assert ev.detail["kind"] == "partial"
    assert ev.detail["container"] == "a"  # the source contains (most of) the quoting page
    # 300 + 30 words -> 323 chunks of 8 words, 293 of them inside the quoted half
    assert ev.detail["contain_ab"] == pytest.approx(293 / 323, abs=0.01)  # the quote, found in the source
    assert ev.detail["contain_ba"] == pytest.approx(293 / 593, abs=0.01)  # half of the source, found in the quote
    assert ev.detail["merge"] is False
    ev2 = check(Chunks(ChunkSettings(merge_partial=True)), doc(quote), doc(source))
    assert ev2.detail["kind"] == "partial" and ev2.detail["container"] == "b" and ev2.detail["merge"] is True


def test_half_overlap_both_ways_is_neither():
    # each page has half of its text from the other: not a duplicate, not contained
    shared = words(200, 5)
    a = words(200, 6) + shared
    b = shared + words(200, 7)
    ev = check(Chunks(), doc(a), doc(b))
    assert ev is not None and not ev.passed
    assert 0.4 < ev.detail["contain_ab"] < 0.6 and 0.4 < ev.detail["contain_ba"] < 0.6


def test_unrelated_pages_share_no_key():
    assert check(Chunks(), doc(words(400, 8)), doc(words(400, 9))) is None


def test_relative_frequencies_matter():
    # same chunks, but one page repeats its text 4 times: frequencies are not close
    t = words(100, 10)
    ev = Chunks().verify(Chunks().features(doc(t)), Chunks().features(doc(t * 4)))
    assert ev.detail["similarity"] < 0.5
    assert ev.detail["contain_ab"] < 0.3 and ev.detail["contain_ba"] == 1.0
    assert ev.detail["kind"] == "partial"


def test_short_pages_have_no_features():
    assert Chunks().features(doc(words(39, 11))) is None
    assert Chunks(ChunkSettings(min_tokens=8)).features(doc(words(8, 11))) is not None


def test_key_count_is_bounded():
    f = Chunks(ChunkSettings(max_keys=50)).features(doc(words(5000, 12)))
    assert len(list(Chunks(ChunkSettings(max_keys=50)).keys(f))) == 50
    f = Chunks(ChunkSettings(max_keys=0)).features(doc(words(5000, 12)))
    n = len(f.sample)
    assert 0.15 * 5000 < n < 0.30 * 5000  # winnowing density about 2 / (w + 1) = 0.22


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 300), st.integers(0, 300), st.integers(4, 12))
def test_winnowing_guarantee(seed, pre_a, pre_b, window):
    # any shared passage of window + k - 1 words gives a common key (no max_keys cap)
    k = 8
    passage = words(window + k - 1, seed)
    a = words(pre_a, seed + 1) + passage + words(50, seed + 2)
    b = words(pre_b, seed + 3) + passage
    alg = Chunks(ChunkSettings(chunk_words=k, winnow=window, max_keys=0, min_tokens=1))
    assert set(alg.keys(alg.features(doc(a)))) & set(alg.keys(alg.features(doc(b))))


def test_winnow_small_inputs():
    h = np.array([5, 3, 9], dtype=np.uint64)
    assert winnow(h, 8).tolist() == [3]
    assert winnow(h, 1).tolist() == [3, 5, 9]
    assert winnow(np.zeros(0, dtype=np.uint64), 4).size == 0
    assert winnow(np.array([4, 1, 7, 7, 2, 8], dtype=np.uint64), 2).tolist() == [1, 2, 7]


def test_compare_empty():
    empty = ChunkFeatures(np.zeros(0, np.uint64), np.zeros(0, np.uint32), np.zeros(0, np.uint64))
    assert compare(empty, empty, 2.5) == (0.0, 0.0, 0.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=200), st.integers(1, 10))
def test_features_deterministic_and_round_trip(tokens, k):
    alg = Chunks(ChunkSettings(chunk_words=k, min_tokens=1))
    f = alg.features(doc(tokens))
    assert f == Chunks(ChunkSettings(chunk_words=k, min_tokens=1)).features(doc(list(tokens)))
    if f is None:
        assert len(tokens) < k
        return
    assert int(f.counts.sum()) == len(chunk_hashes(tokens, k)) == len(tokens) - k + 1
    back = alg.decode(alg.encode(f))
    assert back == f and list(alg.keys(back)) == list(alg.keys(f))
    ev = alg.verify(f, back)
    assert ev.passed and ev.score == pytest.approx(1.0)


def test_short_quote_inside_a_very_long_page_still_shares_a_key():
    # the long page keeps only its max_keys smallest winnowed hashes
    quoted = words(300, 20)
    long_page = words(10000, 21) + quoted + words(10000, 22)
    alg = Chunks()
    fa, fb = alg.features(doc(long_page)), alg.features(doc(quoted))
    assert len(fa.sample) == ChunkSettings().max_keys
    assert set(alg.keys(fa)) & set(alg.keys(fb))
    ev = alg.verify(fa, fb)
    assert ev.detail["kind"] == "partial" and ev.detail["contain_ab"] == 1.0
