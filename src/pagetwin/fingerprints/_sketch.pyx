# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Native kernels of the text fingerprints (Cython); their numpy references in hashing.py and
minhash.py give the same values (tests/fingerprints/test_sketch.py holds them to it).

* ``token_hashes``: ``TokenHasher``'s lookups, one loop over the page's tokens into a uint64
  array (a token missing from the cache is hashed by the caller's xxh3 function and kept).
* ``window_hashes``: the fold of every k-word window (``hashing.window_hashes``), one pass.
* ``minhash_signature``: the minimum of ``a_i x + b_i`` (mod 2^64) over the shingles for every
  permutation i, its high 32 bits; repeats of a shingle cannot change a minimum, so no unique.
* ``distinct_count``: how many different values an array holds (``len(np.unique(x))``), by a
  hash set rather than a sort.

All arithmetic is on uint64 and wraps, as numpy's does.
"""

import numpy as np

from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

# splitmix64 finaliser and the window fold's multiplier (the values of hashing.py).
cdef uint64_t M1 = 0xBF58476D1CE4E5B9ULL
cdef uint64_t M2 = 0x94D049BB133111EBULL
cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL


cdef inline uint64_t _mix64(uint64_t x) nogil:
    x = (x ^ (x >> 30)) * M1
    x = (x ^ (x >> 27)) * M2
    return x ^ (x >> 31)


def token_hashes(list tokens, dict cache, Py_ssize_t max_tokens, object hash_token):
    """uint64 hash of each token, in order, from ``cache`` (token -> int); a missing token gets
    ``hash_token(token)`` and is kept, the cache being emptied first when it holds max_tokens."""
    cdef Py_ssize_t i, n = len(tokens)
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    for i in range(n):
        tok = tokens[i]
        h = cache.get(tok)
        if h is None:
            if len(cache) >= max_tokens:
                cache.clear()
            h = cache[tok] = hash_token(tok)
        view[i] = h
    return out


def window_hashes(const uint64_t[::1] words, Py_ssize_t k, bint mix_each_step):
    """``hashing.window_hashes``: each k-word window folded as acc * GOLDEN + next, mixed after
    every step or once at the end; empty when there is no whole window."""
    cdef Py_ssize_t n = words.shape[0] - k + 1, i, j
    cdef uint64_t acc
    if n <= 0 or k <= 0:
        return np.zeros(0, dtype=np.uint64)
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    with nogil:
        for i in range(n):
            acc = words[i]
            for j in range(1, k):
                acc = acc * GOLDEN + words[i + j]
                if mix_each_step:
                    acc = _mix64(acc)
            view[i] = acc if mix_each_step else _mix64(acc)
    return out


def minhash_signature(const uint64_t[::1] shingles, const uint64_t[::1] a, const uint64_t[::1] b):
    """uint32 signature (len(a)): per permutation i, the high half of min over the shingles'
    high halves x of (a_i x + b_i) mod 2^64 (minhash.minhash_signature)."""
    cdef Py_ssize_t m = a.shape[0], n = shingles.shape[0], i, s
    cdef uint64_t x, v
    if b.shape[0] != m:
        raise ValueError("a and b must have the same length")
    cdef uint64_t* best = <uint64_t*>malloc(max(m, 1) * sizeof(uint64_t))
    if best == NULL:
        raise MemoryError()
    out = np.empty(m, dtype=np.uint32)
    cdef uint32_t[::1] view = out
    with nogil:
        for i in range(m):
            best[i] = 0xFFFFFFFFFFFFFFFFULL
        for s in range(n):
            x = shingles[s] >> 32
            for i in range(m):
                v = a[i] * x + b[i]
                if v < best[i]:
                    best[i] = v
        for i in range(m):
            view[i] = <uint32_t>(best[i] >> 32)
    free(best)
    return out


def distinct_count(const uint64_t[::1] values):
    """The number of different values (len(np.unique(values))): an open-addressing hash set
    of twice the values' number of slots at least (0 marks an empty slot, so the value 0 is
    counted apart)."""
    cdef Py_ssize_t n = values.shape[0], i, count = 0, size = 2
    cdef uint64_t v, mask, slot
    cdef bint zero = False
    if n == 0:
        return 0
    while size < 2 * n:
        size *= 2
    mask = <uint64_t>(size - 1)
    cdef uint64_t* table = <uint64_t*>calloc(size, sizeof(uint64_t))
    if table == NULL:
        raise MemoryError()
    with nogil:
        for i in range(n):
            v = values[i]
            if v == 0:
                zero = True
                continue
            slot = _mix64(v) & mask  # the values may be anything, not only hashes: mix them
            while table[slot] != 0 and table[slot] != v:
                slot = (slot + 1) & mask
            if table[slot] == 0:
                table[slot] = v
                count += 1
    free(table)
    return count + zero
