"""fingerprints.lsh: the choice of bands x rows for MinHash LSH, SimHash's block tables, the
shingle/multiset kernels' small helpers."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pagetwin.fingerprints.lsh import (
    block_table_masks,
    candidate_probability,
    lsh_errors,
    lsh_params,
    multiset_hashes,
    popcount64,
)


def test_bands_and_rows_minimise_the_weighted_error():
    for threshold in (0.3, 0.5, 0.8):
        b, r = lsh_params(threshold, 128)
        assert b * r <= 128
        fp, fn = lsh_errors(threshold, b, r)
        for b2, r2 in [(1, 128), (128, 1), (16, 8), (32, 4), (8, 16)]:
            fp2, fn2 = lsh_errors(threshold, b2, r2)
            assert fp + fn <= fp2 + fn2 + 1e-3
        # the S-curve's steepest point sits near the threshold
        assert abs((1 / b) ** (1 / r) - threshold) < 0.15


def test_fn_weight_moves_the_curve_to_more_candidates():
    b1, r1 = lsh_params(0.6, 128, 0.5, 0.5)
    b2, r2 = lsh_params(0.6, 128, 0.1, 0.9)
    assert candidate_probability(0.55, b2, r2) > candidate_probability(0.55, b1, r1)


def test_lsh_params_rejects_bad_thresholds():
    with pytest.raises(ValueError):
        lsh_params(1.0, 128)
    with pytest.raises(ValueError):
        lsh_params(0.5, 0)


@pytest.mark.parametrize("k,blocks", [(0, 0), (3, 0), (3, 6), (6, 0), (8, 10)])
def test_block_tables_are_all_choices_of_n_minus_k_blocks(k, blocks):
    from math import comb

    masks = block_table_masks(k, 64, blocks, 16).tolist()
    assert len(set(masks)) == len(masks)
    n = blocks or next(n for n in range(k + 1, 65) if len(masks) == comb(n, k))
    assert len(masks) == comb(n, k)
    union = 0
    for m in masks:
        union |= m
        if blocks == 0:
            assert m.bit_count() >= 16  # auto blocks give keys of at least min_key_bits
    assert union == (1 << 64) - 1


@given(
    st.floats(0.05, 0.95),
    st.integers(1, 24),
    st.floats(0.05, 0.95),
)
@settings(max_examples=40, deadline=None)
def test_lsh_params_is_the_brute_force_minimum(threshold, num_perm, fn_share):
    """Against every (b, r) with b * r <= num_perm, scored the way lsh_params scores them."""
    fp_w, fn_w = 1.0 - fn_share, fn_share
    b, r = lsh_params(threshold, num_perm, fp_w, fn_w)
    assert b >= 1 and r >= 1 and b * r <= num_perm

    def cost(bands, rows):
        fp, fn = lsh_errors(threshold, bands, rows, steps=128)
        return fp_w * fp + fn_w * fn

    best = min(cost(bb, rr) for bb in range(1, num_perm + 1) for rr in range(1, num_perm // bb + 1))
    assert cost(b, r) <= best + 1e-12


@given(st.floats(0.0, 1.0), st.integers(1, 32), st.integers(1, 8))
def test_candidate_probability_is_monotone_and_bounded(s, bands, rows):
    p = float(candidate_probability(s, bands, rows))
    assert -1e-12 <= p <= 1.0 + 1e-12
    assert float(candidate_probability(min(1.0, s + 0.05), bands, rows)) >= p - 1e-12


@given(
    st.integers(0, (1 << 64) - 1),
    st.integers(0, 8),
    st.sampled_from([0, 9, 12]),
    st.data(),
)
@settings(max_examples=300, deadline=None)
def test_every_pair_within_k_bits_shares_a_block_table_key(fp, k, blocks, data):
    """Pigeonhole: d <= k flipped bits leave n - k blocks equal, so some table's masked
    value (the key) is the same for both."""
    if blocks and blocks <= k:
        blocks = k + 1
    masks = [int(m) for m in block_table_masks(k, 64, blocks, 16)]
    flips = data.draw(st.lists(st.integers(0, 63), max_size=k, unique=True))
    other = fp
    for bit in flips:
        other ^= 1 << bit
    assert any(fp & m == other & m for m in masks)


def test_block_tables_need_more_blocks_than_k():
    with pytest.raises(ValueError):
        block_table_masks(4, 64, 4, 16)
    with pytest.raises(ValueError):
        block_table_masks(3, 32, 0, 16)


@given(st.lists(st.integers(0, (1 << 64) - 1), max_size=50))
def test_popcount64_counts_set_bits(values):
    counts = popcount64(np.array(values, dtype=np.uint64)).tolist()
    assert counts == [v.bit_count() for v in values]


@given(
    st.lists(st.integers(0, 30), max_size=40),
    st.lists(st.integers(0, 30), max_size=40),
)
def test_multiset_jaccard_is_the_weighted_jaccard(a, b):
    """|A' & B'| / |A' | B'| of the expanded sets = sum(min) / sum(max) of the multisets."""
    from collections import Counter

    ca, cb = Counter(a), Counter(b)
    keys = set(ca) | set(cb)
    expected_num = sum(min(ca[k], cb[k]) for k in keys)
    expected_den = sum(max(ca[k], cb[k]) for k in keys)
    sa = multiset_hashes(np.array(a, dtype=np.uint64)).tolist()
    sb = multiset_hashes(np.array(b, dtype=np.uint64)).tolist()
    assert len(set(sa)) == len(sa) and len(set(sb)) == len(sb)  # a set: no repeats left
    assert len(set(sa) & set(sb)) == expected_num
    assert len(set(sa) | set(sb)) == expected_den


def test_multiset_hashes_keep_a_set_unchanged():
    values = random.Random(5).sample(range(1 << 40), 30)
    assert multiset_hashes(np.array(values, dtype=np.uint64)).tolist() == sorted(values)


@given(st.floats(0.0, 1.0), st.integers(1, 40), st.integers(1, 4), st.integers(1, 5))
@settings(max_examples=200, deadline=None)
def test_candidate_probability_with_min_bands_is_the_binomial_tail(s, bands, rows, min_bands):
    """P(at least min_bands of the bands agree), summed from the top (the function sums the
    bottom); one band is the S-curve; more required bands never make a pair likelier."""
    from math import comb

    p = s**rows
    tail = sum(comb(bands, k) * p**k * (1 - p) ** (bands - k) for k in range(min_bands, bands + 1))
    got = float(candidate_probability(s, bands, rows, min_bands))
    assert abs(got - tail) <= 1e-9
    assert float(candidate_probability(s, bands, rows, 1)) == pytest.approx(1 - (1 - p) ** bands, abs=1e-12)
    assert float(candidate_probability(s, bands, rows, min_bands + 1)) <= got + 1e-12


@given(st.floats(0.1, 0.9), st.integers(2, 20), st.floats(0.05, 0.95), st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_lsh_params_with_min_bands_is_the_brute_force_minimum(threshold, num_perm, fn_share, min_bands):
    assume(min_bands <= num_perm)  # more is refused (test_two_shared_bands_cut_chance_candidates_...)
    fp_w, fn_w = 1.0 - fn_share, fn_share
    b, r = lsh_params(threshold, num_perm, fp_w, fn_w, min_bands)
    assert min_bands <= b and b * r <= num_perm

    def cost(bands, rows):
        fp, fn = lsh_errors(threshold, bands, rows, steps=128, min_bands=min_bands)
        return fp_w * fp + fn_w * fn

    best = min(cost(bb, rr) for bb in range(min_bands, num_perm + 1) for rr in range(1, num_perm // bb + 1))
    assert cost(b, r) <= best + 1e-12


def test_two_shared_bands_cut_chance_candidates_and_keep_the_threshold():
    """The defaults' threshold (0.25) with min_bands 2 (bench/RESULTS.md, issue 18): against 28 x 2
    a pair at J 0.02 (what unrelated long pages share) is a candidate >= 50 times less often, and
    a pair at J >= 0.3 at most 0.01 less often."""
    one = lsh_params(0.25, 128, 0.3, 0.7)
    two = lsh_params(0.25, 128, 0.3, 0.7, 2)
    assert one == (28, 2)
    assert float(candidate_probability(0.02, *one)) >= 50 * float(candidate_probability(0.02, *two, 2))
    for s in (0.3, 0.4, 0.5):
        assert float(candidate_probability(s, *two, 2)) >= float(candidate_probability(s, *one)) - 0.01
    with pytest.raises(ValueError):
        lsh_params(0.25, 8, 0.3, 0.7, 9)
