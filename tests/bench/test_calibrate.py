"""The calibration bench's metrics: ROC AUC, best F1, and the text-bearing LLVM subset."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.calibrate import PairSet, best_f1, prf, roc_auc, text_bearing
from pagetwin.model import Doc


@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=2, max_size=40))
@settings(max_examples=100, deadline=None)
def test_roc_auc_is_the_share_of_correctly_ordered_pairs(rows):
    scores = np.array([s for s, _ in rows], dtype=float)
    labels = np.array([y for _, y in rows])
    pos, neg = scores[labels], scores[~labels]
    if not len(pos) or not len(neg):
        assert np.isnan(roc_auc(scores, labels))
        return
    expected = np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])
    assert abs(roc_auc(scores, labels) - expected) < 1e-12


def test_best_f1_finds_the_separating_threshold():
    scores = np.array([0.1, 0.2, 0.3, 0.8, 0.9, 0.95])
    labels = np.array([False, False, False, True, True, True])
    f, t, p, r = best_f1(scores, labels)
    assert (f, p, r) == (1.0, 1.0, 1.0) and 0.3 < t <= 0.8
    assert np.allclose(prf(scores >= 0.2, labels), (0.6, 1.0, 0.75))


def test_text_bearing_keeps_long_pages_and_pairs_same_paths():
    def doc(version, n):
        return Doc(f"{version}/x", "", "", None, "", tokens=["w"] * n)

    docs = [doc(15, 80), doc(15, 80), doc(15, 5), doc(16, 80), doc(16, 80), doc(16, 5)]
    groups = ["a/p1.html", "a/p2.html", "a/tiny.html", "a/p1.html", "a/p2.html", "a/tiny.html"]
    sub = text_bearing(PairSet("t", docs, [], groups), min_words=50)
    positives = [(i, j) for i, j, y in sub.pairs if y]
    assert sorted(positives) == [(0, 3), (1, 4)]
    assert all(groups[i] != groups[j] for i, j, y in sub.pairs if not y)
    assert all(len(docs[i].tokens) >= 50 and len(docs[j].tokens) >= 50 for i, j, _ in sub.pairs)
