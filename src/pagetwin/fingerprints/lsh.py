"""Kernels shared by SimHash and MinHash: shingle and multiset hashing (on the shared hashing
of ``fingerprints.hashing``), the LSH S-curve and the choice of bands and rows, and SimHash's
block tables. Pure functions, numpy-vectorised.

Every hash here is deterministic across processes and machines (xxh3 of UTF-8 bytes and fixed
64-bit mixing), never Python's hash().
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np

from pagetwin.fingerprints.hashing import GOLDEN as _GOLDEN, mix64, window_hashes


def shingle_hashes(tok_hashes: np.ndarray, size: int) -> np.ndarray:
    """Hashes of the word `size`-grams (all windows, in order, repeats kept) from token hashes.

    A text shorter than one shingle gives one shingle of all its words (so short pages still
    have a feature); an empty text gives none. Order inside the window matters: "a b" != "b a".
    """
    n = len(tok_hashes)
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    return window_hashes(tok_hashes, min(max(1, int(size)), n), mix_each_step=True)


def multiset_hashes(hashes: np.ndarray) -> np.ndarray:
    """Turn a multiset into a set: the i-th repeat (i >= 1) of a hash becomes a new element
    mix64(h ^ i * golden). The Jaccard similarity of the resulting sets is the weighted
    (multiset) Jaccard sum(min(count)) / sum(max(count)) of the originals. First occurrences
    keep their hash, so a text without repeats gives the same set. Order is not kept."""
    h = np.sort(np.asarray(hashes, dtype=np.uint64))
    if len(h) < 2:
        return h
    idx = np.arange(len(h))
    starts = np.concatenate(([True], h[1:] != h[:-1]))
    occurrence = idx - np.maximum.accumulate(np.where(starts, idx, 0))
    repeat = occurrence > 0
    with np.errstate(over="ignore"):
        h[repeat] = mix64(h[repeat] ^ (occurrence[repeat].astype(np.uint64) * _GOLDEN))
    return h


# --- MinHash LSH: the S-curve and the choice of bands x rows -------------------------------


def candidate_probability(s: np.ndarray | float, bands: int, rows: int, min_bands: int = 1) -> np.ndarray:
    """P(two sets of Jaccard s share at least ``min_bands`` of the bands): 1 - (1 - s^rows)^bands
    for one band, else the binomial tail P(Bin(bands, s^rows) >= min_bands)."""
    s = np.asarray(s, dtype=float)
    if min_bands <= 1:
        return 1.0 - (1.0 - s**rows) ** bands
    p = s**rows
    below = sum(comb(bands, k) * p**k * (1.0 - p) ** (bands - k) for k in range(min(min_bands, bands + 1)))
    return np.clip(1.0 - below, 0.0, 1.0)


def _integrate(f: np.ndarray, x: np.ndarray) -> float:
    """Trapezoid rule (written out: numpy renamed trapz to trapezoid between versions)."""
    if len(x) < 2:
        return 0.0
    return float(np.sum((f[1:] + f[:-1]) * np.diff(x)) / 2.0)


def lsh_errors(threshold: float, bands: int, rows: int, steps: int = 512, min_bands: int = 1) -> tuple[float, float]:
    """(false-positive area, false-negative area) of the S-curve around the threshold:
    FP = integral over [0, t] of P(s); FN = integral over [t, 1] of 1 - P(s)."""
    lo = np.linspace(0.0, threshold, steps)
    hi = np.linspace(threshold, 1.0, steps)
    fp = _integrate(candidate_probability(lo, bands, rows, min_bands), lo)
    fn = _integrate(1.0 - candidate_probability(hi, bands, rows, min_bands), hi)
    return fp, fn


@lru_cache(maxsize=256)
def lsh_params(
    threshold: float, num_perm: int, fp_weight: float = 0.5, fn_weight: float = 0.5, min_bands: int = 1
) -> tuple[int, int]:
    """(bands, rows) with bands * rows <= num_perm minimising
    fp_weight * FP + fn_weight * FN (see lsh_errors) for pairs that must share ``min_bands``
    bands. Ties go to fewer bands (fewer keys)."""
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    if num_perm < 1:
        raise ValueError("num_perm must be positive")
    if not 1 <= min_bands <= num_perm:
        raise ValueError(f"min_bands must be in [1, num_perm], got {min_bands}")
    best: tuple[float, int, int] | None = None
    for bands in range(1, num_perm + 1):
        if bands < min_bands:
            continue
        for rows in range(1, num_perm // bands + 1):
            fp, fn = lsh_errors(threshold, bands, rows, steps=128, min_bands=min_bands)
            cost = fp_weight * fp + fn_weight * fn
            if best is None or cost < best[0] - 1e-12:
                best = (cost, bands, rows)
    assert best is not None
    return best[1], best[2]


# --- SimHash: block tables (Manku, Jain and Das Sarma 2007) --------------------------------


def block_sizes(bits: int, blocks: int) -> list[int]:
    """Split `bits` into `blocks` contiguous blocks as evenly as possible (larger ones first)."""
    base, extra = divmod(bits, blocks)
    return [base + (1 if i < extra else 0) for i in range(blocks)]


def auto_blocks(k: int, bits: int = 64, min_key_bits: int = 16, max_tables: int = 2048) -> int:
    """The fewest blocks n (> k) whose tables have keys of at least `min_key_bits` bits: the
    key of a table is n - k of the n blocks, so more blocks mean longer keys (smaller buckets)
    but C(n, k) tables. Stops growing n before the table count passes max_tables."""
    if k < 0 or k >= bits:
        raise ValueError(f"k must be in [0, {bits}), got {k}")
    n = k + 1
    while n < bits:
        sizes = sorted(block_sizes(bits, n))
        if sum(sizes[: n - k]) >= min_key_bits:
            break
        if comb(n + 1, k) > max_tables:
            break
        n += 1
    return n


@lru_cache(maxsize=64)
def block_table_masks(k: int, bits: int = 64, blocks: int = 0, min_key_bits: int = 16) -> np.ndarray:
    """The masks of the block tables for Hamming distance <= k, one uint64 mask per table.

    Scheme: cut the fingerprint into n > k blocks; one table per choice of n - k blocks, its key
    being those blocks' bits. Two fingerprints at distance d <= k differ in at most d blocks, so
    at least n - k blocks are equal, and the table of (any n - k of) those blocks gives them the
    same key: every pair within distance k shares at least one key (pigeonhole). Manku et al.
    sort permuted copies of the fingerprints so that the chosen blocks lead; hashing the masked
    value into a bucket is the same table without the permutation.
    ``blocks`` = 0 chooses n with auto_blocks.
    """
    if bits != 64:
        raise ValueError("only 64-bit fingerprints are supported")
    n = blocks if blocks > 0 else auto_blocks(k, bits, min_key_bits)
    if n <= k:
        raise ValueError(f"need more blocks than k ({n} <= {k})")
    sizes = block_sizes(bits, n)
    block_masks = []
    start = 0
    for size in sizes:
        block_masks.append(((1 << size) - 1) << start)
        start += size
    masks = [sum(block_masks[i] for i in chosen) for chosen in combinations(range(n), n - k)]
    return np.array(masks, dtype=np.uint64)


def popcount64(x: np.ndarray) -> np.ndarray:
    """Number of set bits of each uint64."""
    x = np.ascontiguousarray(x, dtype=np.uint64)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
