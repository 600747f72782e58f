# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Pass 1's per-page statistics (``html.templates.blocks_stats_reference``) in C.

The reference counts a page's blocks into Python dicts and sorts their keys with numpy; here the
columns are read once into C arrays and the sums are made by sorting (key, value) pairs, so
the same keys come out sorted with the same integer sums. The shares are divided as Python
divides two ints (both exact in a double, one correctly rounded division) and cast to float32
as numpy casts a Python float. The sample texts are Python strings, set in the reference's
order. Blocks whose hashes or signatures are no uint64, or whose sizes are negative or past
2**40, raise ``OverflowError`` / ``ValueError``: the caller then runs the reference.
"""

cimport cython
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLong, PyLong_AsUnsignedLongLong
from cpython.object cimport PyObject_IsTrue
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport free, malloc, qsort

import numpy as np

cdef struct Pair:
    uint64_t key
    int64_t total
    int64_t kept


cdef int _by_key(const void *a, const void *b) noexcept nogil:
    cdef uint64_t x = (<const Pair *>a).key
    cdef uint64_t y = (<const Pair *>b).key
    return (x > y) - (x < y)


cdef int _by_value(const void *a, const void *b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t *>a)[0]
    cdef uint64_t y = (<const uint64_t *>b)[0]
    return (x > y) - (x < y)


cdef Py_ssize_t _fold(Pair *pairs, Py_ssize_t n) noexcept nogil:
    """Sort pairs by key and sum the values of equal keys in place; the count of keys left."""
    cdef Py_ssize_t i, m = 0
    if n == 0:
        return 0
    qsort(pairs, n, sizeof(Pair), _by_key)
    for i in range(1, n):
        if pairs[i].key == pairs[m].key:
            pairs[m].total += pairs[i].total
            pairs[m].kept += pairs[i].kept
        else:
            m += 1
            pairs[m] = pairs[i]
    return m + 1


cdef int64_t _size(object value) except? -1:
    cdef long long v = PyLong_AsLongLong(value)
    if v < 0 or v > (<long long>1 << 40):  # (sums stay exact in a double and in int64)
        raise ValueError("block size out of range")
    return v


def page_stats(list hashes, list sigs, list sizes, list content, list keep, list texts, list parent, Py_ssize_t cap):
    """(unique hashes of blocks with content, slots, their kept shares, snippets, content
    hashes, their sizes) of one page: ``blocks_stats_reference``'s PageStats fields."""
    cdef Py_ssize_t n = PyList_GET_SIZE(hashes), i, b, p, m, nh = 0, ns = 0, nc = 0
    if not (PyList_GET_SIZE(sigs) == PyList_GET_SIZE(sizes) == PyList_GET_SIZE(content) == PyList_GET_SIZE(texts)
            == PyList_GET_SIZE(parent) == n and PyList_GET_SIZE(keep) >= n):
        raise ValueError("the block columns differ in length")
    cdef uint64_t *hash_keys = <uint64_t *>malloc((n + 1) * sizeof(uint64_t))
    cdef Pair *slots = <Pair *>malloc((n + 1) * sizeof(Pair))
    cdef Pair *held = <Pair *>malloc((n + 1) * sizeof(Pair))
    cdef Py_ssize_t *source = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef uint64_t h, s
    cdef int64_t size
    cdef bint kept, has_text
    cdef object text
    cdef dict snippets = {}
    if hash_keys == NULL or slots == NULL or held == NULL or source == NULL:
        free(hash_keys); free(slots); free(held); free(source)
        raise MemoryError()
    try:
        for i in range(n):
            h = PyLong_AsUnsignedLongLong(<object>PyList_GET_ITEM(hashes, i))
            s = PyLong_AsUnsignedLongLong(<object>PyList_GET_ITEM(sigs, i))
            size = _size(<object>PyList_GET_ITEM(sizes, i))
            kept = PyObject_IsTrue(<object>PyList_GET_ITEM(keep, i))
            has_text = PyObject_IsTrue(<object>PyList_GET_ITEM(texts, i))
            source[i] = i if has_text else -1
            if PyObject_IsTrue(<object>PyList_GET_ITEM(content, i)):
                hash_keys[nh] = h
                nh += 1
            if size:
                slots[ns].key, slots[ns].total, slots[ns].kept = s, size, size if kept else 0
                ns += 1
                if kept and has_text:
                    held[nc].key, held[nc].total, held[nc].kept = h, size, 0
                    nc += 1
        # Sample text of each block: its own, else that of its first descendant with text (a
        # parent takes the snippet of its earliest child: the pass from the last block back).
        for b in range(n - 1, 0, -1):
            p = PyLong_AsLongLong(<object>PyList_GET_ITEM(parent, b))
            if p >= n:
                raise IndexError("list index out of range")
            if p >= 0 and source[p] != p and source[b] >= 0:  # (source[p] == p: p has text of its own)
                source[p] = source[b]
        for b in range(n):
            if len(snippets) >= cap:
                break
            if source[b] >= 0:
                text = (<object>PyList_GET_ITEM(texts, source[b]))[:80]
                snippets.setdefault(<object>PyList_GET_ITEM(hashes, b), text)
                snippets.setdefault(<object>PyList_GET_ITEM(sigs, b), text)
        unique = _unique(hash_keys, nh)
        ns = _fold(slots, ns)
        slot_keys = np.empty(ns, dtype=np.uint64)
        shares = np.empty(ns, dtype=np.float64)
        _columns(slots, ns, slot_keys, shares, True)
        nc = _fold(held, nc)
        content_keys = np.empty(nc, dtype=np.uint64)
        content_sizes = np.empty(nc, dtype=np.float64)
        _columns(held, nc, content_keys, content_sizes, False)
    finally:
        free(hash_keys); free(slots); free(held); free(source)
    return unique, slot_keys, shares.astype(np.float32), snippets, content_keys, content_sizes.astype(np.float32)


cdef object _unique(uint64_t *keys, Py_ssize_t n):
    cdef Py_ssize_t i, m = 0
    if n:
        qsort(keys, n, sizeof(uint64_t), _by_value)
        for i in range(1, n):
            if keys[i] != keys[m]:
                m += 1
                keys[m] = keys[i]
        m += 1
    out = np.empty(m, dtype=np.uint64)
    cdef uint64_t[::1] view = out
    for i in range(m):
        view[i] = keys[i]
    return out


cdef void _columns(Pair *pairs, Py_ssize_t n, uint64_t[::1] keys, double[::1] values, bint share):
    cdef Py_ssize_t i
    for i in range(n):
        keys[i] = pairs[i].key
        values[i] = (<double>pairs[i].kept) / (<double>pairs[i].total) if share else <double>pairs[i].total
