"""SimHash: order invariance, Hamming verification, and the block-table guarantee."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import SimHashSettings
from pagetwin.fingerprints.simhash import SimHash, hamming
from pagetwin.model import Doc


def doc(words: list[str]) -> Doc:
    return Doc("p", "http://x/", "x", None, " ".join(words), tokens=list(words))


WORDS = [f"w{i}" for i in range(400)]


def article(rng: random.Random, n: int = 300) -> list[str]:
    return [rng.choice(WORDS) for _ in range(n)]


@given(st.lists(st.sampled_from(WORDS), min_size=25, max_size=200), st.randoms())
@settings(max_examples=60, deadline=None)
def test_reordering_identical_features_keeps_the_fingerprint(words, rnd):
    algo = SimHash(SimHashSettings(shingle=1))
    shuffled = list(words)
    rnd.shuffle(shuffled)
    assert algo.features(doc(words)) == algo.features(doc(shuffled))


def test_word_order_matters_with_shingles():
    rng = random.Random(3)
    words = article(rng)
    shuffled = list(words)
    rng.shuffle(shuffled)
    algo = SimHash(SimHashSettings(shingle=2))
    assert algo.features(doc(words)) != algo.features(doc(shuffled))


def test_small_edit_is_close_and_other_text_is_far():
    rng = random.Random(7)
    words = article(rng, 400)
    edited = list(words)
    edited[10:14] = ["changed", "date", "and", "ad"]
    other = article(random.Random(8), 400)
    algo = SimHash(SimHashSettings(k=6))
    a, b, c = (algo.features(doc(w)) for w in (words, edited, other))
    assert hamming(a, b) <= 6
    assert hamming(a, c) > 12
    ev = algo.verify(a, b)
    assert ev.passed and ev.detail["hamming"] == hamming(a, b)
    assert ev.score == pytest.approx(1 - hamming(a, b) / 64)
    assert not algo.verify(a, c).passed


def test_too_short_pages_get_no_fingerprint():
    algo = SimHash(SimHashSettings(min_tokens=20))
    assert algo.features(doc(WORDS[:19])) is None
    assert algo.features(doc([])) is None


def test_encode_decode_round_trip_is_eight_bytes():
    algo = SimHash()
    fp = algo.features(doc(article(random.Random(1))))
    data = algo.encode(fp)
    assert len(data) == 8 and algo.decode(data) == fp


@given(
    st.integers(0, (1 << 64) - 1),
    st.integers(0, 10),
    st.data(),
)
@settings(max_examples=300, deadline=None)
def test_pairs_within_k_always_share_a_key(fp, k, data):
    algo = SimHash(SimHashSettings(k=k))
    flips = data.draw(st.lists(st.integers(0, 63), max_size=k, unique=True))
    other = fp
    for bit in flips:
        other ^= 1 << bit
    assert hamming(fp, other) == len(flips) <= k
    assert set(algo.keys(fp)) & set(algo.keys(other))
    assert algo.verify(fp, other).passed


def test_keys_are_stable_signed_64_bit_ints():
    algo = SimHash(SimHashSettings(k=3))
    keys = list(algo.keys(0xDEADBEEF12345678))
    assert keys == list(SimHash(SimHashSettings(k=3)).keys(0xDEADBEEF12345678))
    assert len(keys) == algo.table_count() == len(set(keys))
    assert all(isinstance(x, int) and -(1 << 63) <= x < (1 << 63) for x in keys)


def test_far_pairs_rarely_share_keys():
    rng = random.Random(5)
    algo = SimHash(SimHashSettings(k=3))
    shared = 0
    for _ in range(300):
        a, b = rng.getrandbits(64), rng.getrandbits(64)
        shared += bool(set(algo.keys(a)) & set(algo.keys(b)))
    assert shared <= 2  # 4 tables x 2^-16 per table


def test_block_vote_equals_one_matrix_vote_on_a_large_page():
    import numpy as np

    from pagetwin.fingerprints.simhash import simhash64

    rng = np.random.default_rng(0)
    hashes = rng.integers(0, 2**63, size=20_000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    weights = rng.random(20_000)
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    votes = weights @ (bits * 2.0 - 1.0)
    expected = int.from_bytes(np.packbits(votes > 0, bitorder="little").tobytes(), "little")
    assert simhash64(hashes, weights) == expected
