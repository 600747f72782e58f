# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Native kernels of the text fingerprints (Cython); their numpy references in hashing.py and
minhash.py give the same values (tests/fingerprints/test_sketch.py holds them to it).

* ``token_hashes``: ``TokenHasher``'s lookups, one loop over the page's tokens into a uint64
  array, each token object looked up once (a token missing from the cache is hashed by the
  caller's xxh3 function and kept).
* ``window_hashes``: the fold of every k-word window (``hashing.window_hashes``), one pass.
* ``minhash_features``: the signature, the minimum of ``a_i x + b_i`` (mod 2^64) over the
  distinct shingles for every permutation i, its high 32 bits, then the number of distinct
  shingles (``MinHash.features``); the shingles made distinct by a hash set, not a sort.

All arithmetic is on uint64 and wraps, as numpy's does.
"""

import numpy as np

from cpython.list cimport PyList_GET_ITEM
from cpython.object cimport PyObject
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

cdef extern from *:
    """
    #include <stdint.h>
    #include <stddef.h>
    /* The minima of a_i x + b_i: four permutations at a time kept in registers, the x inner.
       GCC vectorizes that loop, and with target_clones builds it also for AVX2 and AVX-512
       (64-bit multiply and unsigned min in one instruction each), one picked at load for the
       CPU (an ifunc: glibc, x86-64): 4.5 / 2.6 / 8 times faster than the scalar loop on
       900 shingles. The arithmetic is the same wrapping uint64 in every copy. */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    #define PT_CLONES __attribute__((target_clones("default", "avx2", "arch=x86-64-v4")))
    #else
    #define PT_CLONES
    #endif
    #define PT_MIN(m, v) ((v) < (m) ? (v) : (m))
    PT_CLONES static void pt_minhash_minima(const uint64_t* x, ptrdiff_t n, const uint64_t* a,
                                            const uint64_t* b, ptrdiff_t m, uint64_t* best) {
        ptrdiff_t i = 0, s;
        for (; i + 4 <= m; i += 4) {
            uint64_t a0 = a[i], a1 = a[i + 1], a2 = a[i + 2], a3 = a[i + 3];
            uint64_t b0 = b[i], b1 = b[i + 1], b2 = b[i + 2], b3 = b[i + 3];
            uint64_t m0 = UINT64_MAX, m1 = UINT64_MAX, m2 = UINT64_MAX, m3 = UINT64_MAX;
            for (s = 0; s < n; s++) {
                uint64_t v = x[s];
                m0 = PT_MIN(m0, a0 * v + b0);
                m1 = PT_MIN(m1, a1 * v + b1);
                m2 = PT_MIN(m2, a2 * v + b2);
                m3 = PT_MIN(m3, a3 * v + b3);
            }
            best[i] = m0; best[i + 1] = m1; best[i + 2] = m2; best[i + 3] = m3;
        }
        for (; i < m; i++) {
            uint64_t m0 = UINT64_MAX;
            for (s = 0; s < n; s++)
                m0 = PT_MIN(m0, a[i] * x[s] + b[i]);
            best[i] = m0;
        }
    }
    """
    void pt_minhash_minima(const uint64_t* x, Py_ssize_t n, const uint64_t* a, const uint64_t* b,
                           Py_ssize_t m, uint64_t* best) nogil

# splitmix64 finaliser and the window fold's multiplier (the values of hashing.py).
cdef uint64_t M1 = 0xBF58476D1CE4E5B9ULL
cdef uint64_t M2 = 0x94D049BB133111EBULL
cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL


cdef inline uint64_t _mix64(uint64_t x) nogil:
    x = (x ^ (x >> 30)) * M1
    x = (x ^ (x >> 27)) * M2
    return x ^ (x >> 31)


cdef struct TokenSlot:
    PyObject* token  # NULL: an empty slot; else borrowed from the caller's list
    uint64_t value


def token_hashes(object token_list, dict cache, Py_ssize_t max_tokens, object hash_token):
    """uint64 hash of each token, in order, from ``cache`` (token -> int); a missing token gets
    ``hash_token(token)`` and is kept, the cache being emptied first when it holds max_tokens.
    Each token object is looked up in ``cache`` once (a pointer table in C: the word scan hands
    out one object for every sight of a known word, ~430 objects for ~1,120 tokens a page),
    the cache's dict walk being mostly cache misses. ``token_list``: a list (or a subclass,
    text.analyze.TokenList)."""
    if not isinstance(token_list, list):
        raise TypeError(f"tokens must be a list, not {type(token_list).__name__}")
    cdef list tokens = <list>token_list
    cdef Py_ssize_t i, k, n = len(tokens), mask = 63
    cdef PyObject* token
    cdef TokenSlot* table
    while mask + 1 < 2 * n:  # at most half full
        mask = 2 * mask + 1
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    table = <TokenSlot*>calloc(mask + 1, sizeof(TokenSlot))
    if table == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            token = PyList_GET_ITEM(tokens, i)
            k = <Py_ssize_t>(((<uint64_t><size_t>token >> 4) * GOLDEN) >> 32) & mask
            while table[k].token != NULL and table[k].token != token:
                k = (k + 1) & mask
            if table[k].token == NULL:
                tok = <object>token
                h = cache.get(tok)
                if h is None:
                    if len(cache) >= max_tokens:
                        cache.clear()
                    h = cache[tok] = hash_token(tok)
                table[k].token = token
                table[k].value = h
            view[i] = table[k].value
    finally:
        free(table)
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


cdef Py_ssize_t _distinct(const uint64_t[::1] values, uint64_t* out) except -1:
    """Write the different values of ``values`` to ``out`` (room for all), in order of first
    sight, and return how many: an open-addressing hash set of twice the values' number of
    slots at least (0 marks an empty slot, so the value 0 is kept apart)."""
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
                if not zero:
                    zero = True
                    out[count] = 0
                    count += 1
                continue
            slot = _mix64(v) & mask  # the values may be anything, not only hashes: mix them
            while table[slot] != 0 and table[slot] != v:
                slot = (slot + 1) & mask
            if table[slot] == 0:
                table[slot] = v
                out[count] = v
                count += 1
    free(table)
    return count


def minhash_features(const uint64_t[::1] shingles, const uint64_t[::1] a, const uint64_t[::1] b):
    """uint32 signature (len(a)), then the number of distinct shingles (at most 2^32 - 1):
    MinHash's features (minhash.minhash_features). Signature: per permutation i, the high half
    of min over the shingles' high halves x of (a_i x + b_i) mod 2^64. Repeats cannot change a
    minimum, so only the distinct shingles' x are hashed."""
    cdef Py_ssize_t m = a.shape[0], n = shingles.shape[0], i, distinct
    if b.shape[0] != m:
        raise ValueError("a and b must have the same length")
    out = np.empty(m + 1, dtype=np.uint32)
    cdef uint32_t[::1] view = out
    cdef uint64_t* x = <uint64_t*>malloc(max(n, 1) * sizeof(uint64_t))
    cdef uint64_t* best = <uint64_t*>malloc(max(m, 1) * sizeof(uint64_t))
    if x == NULL or best == NULL:
        free(x)
        free(best)
        raise MemoryError()
    try:
        distinct = _distinct(shingles, x)
        with nogil:
            for i in range(distinct):
                x[i] >>= 32
            pt_minhash_minima(x, distinct, &a[0] if m else NULL, &b[0] if m else NULL, m, best)
            for i in range(m):
                view[i] = <uint32_t>(best[i] >> 32)
    finally:
        free(x)
        free(best)
    view[m] = <uint32_t>min(distinct, 0xFFFFFFFF)
    return out
