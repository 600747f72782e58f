"""Segment signatures: planted M / M-1 equal segments, robustness of the split, properties."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import SegmentSettings
from pagetwin.fingerprints.segments import Segments, segment_bounds, segment_signatures
from pagetwin.model import Doc


def words(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"w{rng.randrange(5000)}" for _ in range(n)]


def doc(tokens: list[str]) -> Doc:
    return Doc("p", "u", "h", None, " ".join(tokens), tokens=list(tokens), stop=[False] * len(tokens))


def joins(alg: Segments, a: Doc, b: Doc) -> bool:
    fa, fb = alg.features(a), alg.features(b)
    if fa is None or fb is None or not set(alg.keys(fa)) & set(alg.keys(fb)):
        return False
    return alg.verify(fa, fb).passed


def change_segments(tokens: list[str], n: int, which: list[int]) -> list[str]:
    """Replace the middle word of each segment in ``which`` (far from the anchor windows)."""
    out = list(tokens)
    bounds = segment_bounds(tokens, n) + [len(tokens)]
    for s in which:
        out[(bounds[s] + bounds[s + 1]) // 2] = "changed"
    assert segment_bounds(out, n) == bounds[:-1]  # precondition: the split did not move
    return out


def test_identical_pages_agree_on_all_segments():
    t = words(400, 1)
    alg = Segments()
    ev = alg.verify(alg.features(doc(t)), alg.features(doc(list(t))))
    assert ev.passed and ev.detail["equal"] == 8 and ev.score == 1.0


def test_m_equal_segments_join_and_m_minus_1_keep_apart():
    s = SegmentSettings(n=8, m=6)
    alg = Segments(s)
    t = words(400, 2)
    two_changed = change_segments(t, 8, [0, 5])  # 6 of 8 equal: M
    three_changed = change_segments(t, 8, [0, 3, 5])  # 5 of 8 equal: M - 1
    assert alg.verify(alg.features(doc(t)), alg.features(doc(two_changed))).detail["equal"] == 6
    assert joins(alg, doc(t), doc(two_changed))
    ev = alg.verify(alg.features(doc(t)), alg.features(doc(three_changed)))
    assert ev.detail["equal"] == 5 and not ev.passed
    assert not joins(alg, doc(t), doc(three_changed))
    # M is selectable: with M = 5 the same pair joins
    assert joins(Segments(SegmentSettings(n=8, m=5)), doc(t), doc(three_changed))


def test_pair_with_m_equal_segments_always_shares_a_key():
    # Only the first N - M + 1 positions are registered; the last segments alone must suffice.
    s = SegmentSettings(n=8, m=6)
    alg = Segments(s)
    t = words(400, 3)
    changed = change_segments(t, 8, [0, 1])  # the first two differ, the other six agree
    fa, fb = alg.features(doc(t)), alg.features(doc(changed))
    assert set(alg.keys(fa)) & set(alg.keys(fb))
    assert len(list(alg.keys(fa))) == 3


def test_a_few_inserted_words_keep_most_segments():
    t = words(800, 4)
    inserted = t[:100] + ["new", "words", "here"] + t[100:]
    alg = Segments()
    ev = alg.verify(alg.features(doc(t)), alg.features(doc(inserted)))
    # a naive equal-length split would change every segment after the insertion
    assert ev.detail["equal"] >= 6


def test_unrelated_pages_kept_apart():
    alg = Segments()
    assert not joins(alg, doc(words(400, 5)), doc(words(400, 6)))


def test_stop_words_do_not_count():
    t = words(400, 7)
    with_stops = []
    for i, w in enumerate(t):
        with_stops.append(w)
        if i % 7 == 0:
            with_stops.append("the")
    d = Doc("p", "u", "h", None, "", tokens=with_stops, stop=[w == "the" for w in with_stops])
    assert Segments().features(d) == Segments().features(doc(t))


def test_short_pages_have_no_segments():
    assert Segments().features(doc(words(39, 8))) is None
    assert Segments(SegmentSettings(min_tokens=10)).features(doc(words(39, 8))) is not None


def test_m_must_not_exceed_n():
    with pytest.raises(ValueError):
        Segments(SegmentSettings(n=4, m=5))


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=0, max_value=600), st.integers(min_value=1, max_value=20), st.integers(0, 10**6))
def test_bounds_partition_the_tokens(total, n, seed):
    t = words(total, seed)
    bounds = segment_bounds(t, n)
    if total < n or n == 1:
        assert bounds == [0]
        return
    assert len(bounds) == n and bounds[0] == 0
    assert all(x < y for x, y in zip(bounds, bounds[1:] + [total]))  # no empty segment
    assert len(segment_signatures(t, n)) == n


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), min_size=0, max_size=300))
def test_features_deterministic_and_round_trip(tokens):
    alg = Segments(SegmentSettings(min_tokens=10))
    f = alg.features(doc(tokens))
    assert f == Segments(SegmentSettings(min_tokens=10)).features(doc(list(tokens)))
    if f is not None:
        back = alg.decode(alg.encode(f))
        assert back == f and list(alg.keys(back)) == list(alg.keys(f))
