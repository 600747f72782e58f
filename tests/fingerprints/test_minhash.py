"""MinHash: the Jaccard estimate and the LSH S-curve of its keys (bands x rows: test_lsh.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import MinHashSettings
from pagetwin.fingerprints.lsh import candidate_probability
from pagetwin.fingerprints.minhash import MinHash
from pagetwin.model import Doc


def doc(words: list[str]) -> Doc:
    return Doc("p", "http://x/", "x", None, " ".join(words), tokens=list(words))


def pair_with_jaccard(rng: random.Random, union: int, s: float) -> tuple[list[str], list[str]]:
    """Two word sets (as texts, shingle size 1) whose Jaccard similarity is exactly
    common / union; common rounded so that both sides get the same number of own words."""
    common = round(s * union)
    if (union - common) % 2:
        common += 1
    own = (union - common) // 2
    words = [f"t{rng.getrandbits(48):x}" for _ in range(union)]
    a = words[:common] + words[common : common + own]
    b = words[:common] + words[common + own :]
    rng.shuffle(a)
    rng.shuffle(b)
    return a, b


def jaccard(a, b) -> float:
    a, b = set(a), set(b)
    return len(a & b) / len(a | b)


# Tolerance of the estimate: with 256 permutations the estimate is a binomial share with
# standard deviation sqrt(J (1 - J) / 256) <= 0.031; 0.125 is four standard deviations.
TOLERANCE_256 = 0.125


@given(
    st.integers(min_value=20, max_value=300),
    st.floats(min_value=0.0, max_value=1.0),
    st.integers(min_value=0, max_value=2**32),
)
@settings(max_examples=80, deadline=None)
def test_estimate_is_within_tolerance_of_true_jaccard(union, s, seed):
    a, b = pair_with_jaccard(random.Random(seed), union, s)
    algo = MinHash(MinHashSettings(num_perm=256, shingle=1, min_tokens=1, seed=seed % 1000))
    est = algo.verify(algo.features(doc(a)), algo.features(doc(b))).score
    assert abs(est - jaccard(a, b)) <= TOLERANCE_256


def test_estimate_is_unbiased_over_many_pairs():
    rng = random.Random(11)
    algo = MinHash(MinHashSettings(num_perm=128, shingle=1, min_tokens=1))
    errors = []
    for _ in range(200):
        a, b = pair_with_jaccard(rng, 150, rng.random())
        errors.append(algo.verify(algo.features(doc(a)), algo.features(doc(b))).score - jaccard(a, b))
    assert abs(np.mean(errors)) < 0.01
    assert np.std(errors) < 0.05  # binomial sd at J = 0.5 is 0.044


def test_identical_and_disjoint_sets():
    algo = MinHash(MinHashSettings(shingle=3, min_tokens=1))
    words = [f"w{i}" for i in range(100)]
    other = [f"v{i}" for i in range(100)]
    fa, fb = algo.features(doc(words)), algo.features(doc(other))
    assert algo.verify(fa, algo.features(doc(list(words)))).score == 1.0
    assert algo.verify(fa, fb).score < 0.05
    assert set(algo.keys(fa)) == set(algo.keys(algo.features(doc(words))))
    assert not set(algo.keys(fa)) & set(algo.keys(fb))


@pytest.mark.parametrize("s", [0.3, 0.5, 0.6, 0.7, 0.9])
def test_candidate_probability_follows_the_s_curve(s):
    algo = MinHash(MinHashSettings(num_perm=64, threshold=0.6, shingle=1, min_tokens=1, seed=3))
    rng = random.Random(int(s * 100))
    trials = 300
    hits = 0
    for _ in range(trials):
        a, b = pair_with_jaccard(rng, 100, s)
        hits += bool(set(algo.keys(algo.features(doc(a)))) & set(algo.keys(algo.features(doc(b)))))
    expected = float(candidate_probability(s, algo.bands, algo.rows))
    sd = (expected * (1 - expected) / trials) ** 0.5
    assert abs(hits / trials - expected) <= max(4 * sd, 0.03)


def test_short_pages_get_no_signature_and_round_trip():
    algo = MinHash(MinHashSettings(min_tokens=10))
    assert algo.features(doc(["a"] * 9)) is None
    sig = algo.features(doc([f"w{i}" for i in range(50)]))
    data = algo.encode(sig)
    assert len(data) == 4 * (algo.settings.num_perm + 1)  # the signature, then the shingle count
    assert np.array_equal(algo.decode(data), sig)
    keys = list(algo.keys(sig))
    assert len(keys) == algo.bands and all(-(1 << 63) <= k < (1 << 63) for k in keys)


def test_multiset_estimates_weighted_jaccard():
    from collections import Counter

    rng = random.Random(4)
    algo = MinHash(MinHashSettings(num_perm=256, shingle=1, min_tokens=1, multiset=True))
    errors = []
    for _ in range(40):
        vocab = [f"w{rng.getrandbits(40):x}" for _ in range(30)]  # fresh words: independent errors
        a = [rng.choice(vocab) for _ in range(120)]
        b = a[:60] + [rng.choice(vocab) for _ in range(60)]
        ca, cb = Counter(a), Counter(b)
        truth = sum((ca & cb).values()) / sum((ca | cb).values())
        errors.append(algo.verify(algo.features(doc(a)), algo.features(doc(b))).score - truth)
    assert abs(np.mean(errors)) < 0.02 and max(map(abs, errors)) <= TOLERANCE_256
    # without repeats the multiset is the set: same signature
    words = [f"u{i}" for i in range(50)]
    plain = MinHash(MinHashSettings(num_perm=256, shingle=1, min_tokens=1))
    assert np.array_equal(plain.features(doc(words)), algo.features(doc(words)))


def test_containment_makes_a_partial_edge_below_the_threshold():
    from pagetwin.config import MinHashSettings
    from pagetwin.fingerprints.minhash import MinHash

    algo = MinHash(MinHashSettings(threshold=0.5, shingle=1, multiset=False, num_perm=256))
    words = [f"w{i}" for i in range(300)]
    teaser, article = doc(words[:100]), doc(words)  # the teaser is all in the article: J = 1/3
    ev = algo.verify(algo.features(article), algo.features(teaser))
    assert ev.passed and ev.detail["kind"] == "partial" and ev.detail["container"] == "a"
    assert ev.detail["containment"] >= 0.8
    off = MinHash(MinHashSettings(threshold=0.5, shingle=1, multiset=False, num_perm=256, containment=0))
    assert not off.verify(off.features(article), off.features(teaser)).passed
    # Overlapping halves are not a containment.
    assert not algo.verify(algo.features(doc(words[:200])), algo.features(doc(words[100:]))).passed


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 24),  # num_perm
    st.sampled_from([0.5, 0.75, 0.8, 0.9]),  # threshold
    st.sampled_from([0.0, 0.5, 0.8, 1.0]),  # containment
    st.data(),
    st.integers(1, 3),  # min_bands (at most num_perm)
)
def test_passing_all_pairs_at_once_is_verify_pair_by_pair(num_perm, threshold, containment, data, min_bands):
    """MinHash.passing (numpy, then _verdict on the pairs that may pass) gives the pairs and
    the evidence of Algorithm.passing (one verify a pair), field for field; mixed lengths
    and features without their shingle count take the reference's way."""
    from pagetwin.fingerprints.base import Algorithm

    settings = MinHashSettings(num_perm=num_perm, threshold=threshold, containment=containment, min_bands=min(min_bands, num_perm))
    algo = MinHash(settings)
    pages = data.draw(st.integers(1, 12))
    width = num_perm + data.draw(st.sampled_from([1, 1, 1, 0]))  # 0: no count (short features)
    values = st.integers(0, 3)  # few values: many rows agree, all shares near the thresholds
    features = [
        np.array(data.draw(st.lists(values, min_size=width, max_size=width)) + [], dtype=np.uint32) for _ in range(pages)
    ]
    if width > num_perm:  # shingle counts, 0 included (no containment then)
        for f in features:
            f[num_perm] = data.draw(st.integers(0, 40))
    if data.draw(st.booleans()) and pages > 1:
        features[0] = np.append(features[0], np.uint32(7))  # one of another length
    n_pairs = data.draw(st.integers(0, 30))
    first = np.array([data.draw(st.integers(0, pages - 1)) for _ in range(n_pairs)], dtype=np.intp)
    second = np.array([data.draw(st.integers(0, pages - 1)) for _ in range(n_pairs)], dtype=np.intp)
    try:
        expected = Algorithm.passing(algo, features, first.tolist(), second.tolist())
    except (IndexError, ValueError) as exc:  # short or mismatched features: verify raises too
        with pytest.raises(type(exc)):
            algo.passing(features, first, second)
        return
    got = algo.passing(features, first, second)
    assert [(i, e.algorithm, e.score, e.passed, e.detail) for i, e in got] == [
        (i, e.algorithm, e.score, e.passed, e.detail) for i, e in expected
    ]
    assert all(type(e.score) is float for _, e in got)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=32, max_size=32), st.lists(st.integers(0, 2), min_size=32, max_size=32))
def test_min_bands_fails_the_pairs_sharing_fewer_bands_than_keys_ask(a, b):
    """shared_bands counts the equal keys of two signatures, and with min_bands 2 a pair with
    one shared band fails whatever its Jaccard (it would not be a candidate)."""
    one = MinHash(MinHashSettings(num_perm=32, threshold=0.3, containment=0.0))
    two = MinHash(MinHashSettings(num_perm=32, threshold=0.3, containment=0.0, min_bands=2))
    fa, fb = np.array(a + [9], dtype=np.uint32), np.array(b + [9], dtype=np.uint32)
    assert two.shared_bands(fa, fb) == len(set(two.keys(fa)) & set(two.keys(fb)))
    verdict = two.verify(fa, fb)
    assert verdict.detail["bands_shared"] == two.shared_bands(fa, fb)
    assert verdict.passed == (two.shared_bands(fa, fb) >= 2 and verdict.score >= 0.3)
    assert "bands_shared" not in one.verify(fa, fb).detail


def test_a_pair_sharing_one_band_fails_at_min_bands_two():
    two = MinHash(MinHashSettings(num_perm=32, threshold=0.3, containment=0.0, min_bands=2))
    width = two.bands * two.rows
    fa = np.arange(33, dtype=np.uint32)
    fb = fa.copy()
    fb[two.rows : width : two.rows] += 100  # every band but the first differs in one row
    fb[32] = 9
    assert two.shared_bands(fa, fb) == 1 and two.verify(fa, fb).score >= 0.3
    assert not two.verify(fa, fb).passed
    assert MinHash(MinHashSettings(num_perm=32, threshold=0.3, containment=0.0)).verify(fa, fb).passed


def _keys_reference(algo: MinHash, features: np.ndarray) -> list[int]:
    """MinHash.keys as first written: each band's rows sliced as an array, then to bytes."""
    import xxhash

    sig = np.ascontiguousarray(features, dtype=np.uint32)
    out = []
    for band in range(algo.bands):
        v = xxhash.xxh3_64_intdigest(sig[band * algo.rows : (band + 1) * algo.rows].tobytes(), seed=band)
        out.append(v - (1 << 64) if v >= (1 << 63) else v)
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, (1 << 32) - 1), min_size=0, max_size=140), st.sampled_from([0.5, 0.8, 0.9]), st.sampled_from([1, 2]))
def test_keys_are_the_bands_hashed_as_first_written(values, threshold, min_bands):
    """The bands cut from the signature's bytes give the keys the array slices gave (a
    signature shorter than the bands too)."""
    algo = MinHash(MinHashSettings(threshold=threshold, min_bands=min_bands))
    features = np.array(values, dtype=np.uint32)
    assert list(algo.keys(features)) == _keys_reference(algo, features)
