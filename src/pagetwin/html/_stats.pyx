# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The site templates' kernels (``html.templates``) in C, each beside its Python reference:

- ``page_stats``: pass 1's statistics of one page (``blocks_stats_reference``);
- ``fold_runs``: pages' keys folded into a site's counts (``fold_runs_reference``), in
  ``SiteTemplates.fit`` and ``merge``;
- ``keys_on_pages``: the snippet keys on two pages or more, worth a sample text
  (``_keys_on_pages_reference``);
- ``lookup_columns``, ``template_flags``, ``slot_decisions``: pass 2's look-ups in a site's
  counts and its decisions (``SiteModel._lookup_columns_reference``,
  ``_template_flags_reference``, ``SiteModel._with_slot_priors_reference``);
- ``in_set``: which keys a set holds (``_in_set_reference``).

page_stats: the reference counts a page's blocks into Python dicts and sorts their keys with
numpy; here the columns are read once into C arrays and the sums are made by sorting (key,
value) pairs, so the same keys come out sorted with the same integer sums. The shares are
divided as Python divides two ints (both exact in a double, one correctly rounded division) and
cast to float32 as numpy casts a Python float. The sample texts are Python strings, set in the
reference's order. Throughout, columns the kernels do not take (hashes or signatures that are
no uint64, sizes negative or past 2**40, arrays of other dtypes) raise ``OverflowError`` /
``TypeError`` / ``ValueError``: the caller then runs the reference.
"""

cimport cython
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.long cimport PyLong_AsLongLong, PyLong_AsUnsignedLongLong
from cpython.long cimport PyLong_CheckExact
from cpython.object cimport PyObject_IsTrue
from cpython.unicode cimport PyUnicode_CheckExact, PyUnicode_GET_LENGTH
from cpython.set cimport PySet_Contains
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

import numpy as np

cdef inline uint64_t _key(object value) except? 0xFFFFFFFFFFFFFFFF:
    """An int as uint64 (OverflowError past it, TypeError for no int: PyLong_AsUnsignedLongLong's).
    An int proper goes through Cython's conversion, which reads its digits (3.11's
    PyLong_AsUnsignedLongLong goes through _PyLong_AsByteArray: a sixth of page_stats' time)."""
    if PyLong_CheckExact(value):
        return <uint64_t>value
    return PyLong_AsUnsignedLongLong(value)


cdef inline bint _truth(object value) except -1:
    """bool(value), without a call for the bools and strings of the block columns."""
    if value is True:
        return True
    if value is False or value is None:
        return False
    if PyUnicode_CheckExact(value):
        return PyUnicode_GET_LENGTH(value) != 0
    return PyObject_IsTrue(value)


cdef struct Pair:
    uint64_t key
    int64_t total
    int64_t kept


cdef struct Entry:
    uint64_t key
    Py_ssize_t at  # place in the input: equal keys are summed in input order
    int64_t pages
    double weight


ctypedef fused Sortable:
    uint64_t
    Pair
    Entry


cdef inline bint _before(const Sortable *a, const Sortable *b) noexcept nogil:
    if Sortable is uint64_t:
        return a[0] < b[0]
    elif Sortable is Pair:
        return a.key < b.key
    else:  # Entry: by key, then place
        return a.key < b.key or (a.key == b.key and a.at < b.at)


cdef inline void _merge_two(const Sortable *src, Sortable *dst, Py_ssize_t start, Py_ssize_t mid, Py_ssize_t end) noexcept nogil:
    """Merge the sorted runs src[start:mid] and src[mid:end] into dst[start:end], the left
    run's item first on equal ones (a stable merge)."""
    cdef Py_ssize_t a = start, b = mid, k = start
    while a < mid and b < end:
        if _before(&src[b], &src[a]):
            dst[k] = src[b]
            b += 1
        else:
            dst[k] = src[a]
            a += 1
        k += 1
    if a < mid:
        memcpy(&dst[k], &src[a], (mid - a) * sizeof(Sortable))
    elif b < end:
        memcpy(&dst[k], &src[b], (end - b) * sizeof(Sortable))


cdef int _sort(Sortable *items, Py_ssize_t n) except -1:
    """Sort in place: runs of 16 by insertion, then merged (bottom up). The comparisons are
    inlined, which qsort's calls through a pointer are not (a third of page_stats' time)."""
    cdef Py_ssize_t i, j, start, width, mid, end
    cdef Sortable item
    cdef Sortable *src
    cdef Sortable *dst
    cdef Sortable *spare
    for start in range(0, n, 16):
        end = start + 16 if start + 16 < n else n
        for i in range(start + 1, end):
            item = items[i]
            j = i
            while j > start and _before(&item, &items[j - 1]):
                items[j] = items[j - 1]
                j -= 1
            items[j] = item
    if n <= 16:
        return 0
    spare = <Sortable *>malloc(n * sizeof(Sortable))
    if spare == NULL:
        raise MemoryError()
    src, dst, width = items, spare, 16
    while width < n:
        for start in range(0, n, 2 * width):
            mid = start + width if start + width < n else n
            end = start + 2 * width if start + 2 * width < n else n
            _merge_two(src, dst, start, mid, end)
        src, dst = dst, src
        width *= 2
    if src != items:
        memcpy(items, src, n * sizeof(Sortable))
    free(spare)
    return 0


cdef int _merge_runs(Entry *items, Py_ssize_t n, Py_ssize_t *bounds, Py_ssize_t runs) except -1:
    """Sort ``items`` whose ``runs`` runs (``items[bounds[r]:bounds[r + 1]]``) are each sorted
    already: adjacent runs merged in pairs, log2(runs) passes (a fold's runs are the pages'
    sorted keys: _sort's runs of 16 and merges from there took twice as long). A merge takes
    the left run's item on equal ones: the order _sort gives (by key, then place)."""
    cdef Py_ssize_t r, out, start, mid, end
    cdef Entry *src
    cdef Entry *dst
    if runs <= 1:
        return 0
    cdef Entry *spare = <Entry *>malloc(n * sizeof(Entry))
    if spare == NULL:
        raise MemoryError()
    src, dst = items, spare
    while runs > 1:
        out = 0
        for r in range(0, runs, 2):
            start = bounds[r]
            mid = bounds[r + 1]
            end = bounds[r + 2] if r + 1 < runs else mid
            _merge_two(src, dst, start, mid, end)
            bounds[out] = start
            out += 1
        bounds[out] = n
        runs = out
        src, dst = dst, src
    if src != items:
        memcpy(items, src, n * sizeof(Entry))
    free(spare)
    return 0


cdef Py_ssize_t _fold(Pair *pairs, Py_ssize_t n) except -1:
    """Sort pairs by key and sum the values of equal keys in place; the count of keys left."""
    cdef Py_ssize_t i, m = 0
    if n == 0:
        return 0
    _sort(pairs, n)
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


cdef struct KeySet:
    uint64_t *table  # open addressing; 0 marks a free place (the key 0 is has_zero)
    Py_ssize_t mask
    bint has_zero
    Py_ssize_t count


cdef inline Py_ssize_t _slot(uint64_t key, Py_ssize_t mask) noexcept nogil:
    """Where a KeySet's probe for ``key`` starts."""
    return <Py_ssize_t>(((key * <uint64_t>0x9E3779B97F4A7C15) >> 32) & <uint64_t>mask)


cdef inline bint _added(KeySet *keys, uint64_t key) noexcept nogil:
    """Add ``key`` to the set; whether it was not there. (The table has room: the caller stops
    adding at half its size.)"""
    cdef Py_ssize_t at
    if key == 0:
        if keys.has_zero:
            return False
        keys.has_zero = True
        keys.count += 1
        return True
    at = _slot(key, keys.mask)
    while keys.table[at] != 0:
        if keys.table[at] == key:
            return False
        at = (at + 1) & keys.mask
    keys.table[at] = key
    keys.count += 1
    return True


cdef inline bint _holds(const KeySet *keys, uint64_t key) noexcept nogil:
    """Whether ``key`` is in the set."""
    cdef Py_ssize_t at
    if key == 0:
        return keys.has_zero
    at = _slot(key, keys.mask)
    while keys.table[at] != 0:
        if keys.table[at] == key:
            return True
        at = (at + 1) & keys.mask
    return False


def page_stats(list hashes, list sigs, list sizes, list content, list keep, list texts, list parent, Py_ssize_t cap):
    """(unique hashes of blocks with content, slots, their kept shares, snippets, content
    hashes, their sizes) of one page: ``blocks_stats_reference``'s PageStats fields."""
    cdef Py_ssize_t n = PyList_GET_SIZE(hashes), i, b, p, m, nh = 0, ns = 0, nc = 0, room
    if not (PyList_GET_SIZE(sigs) == PyList_GET_SIZE(sizes) == PyList_GET_SIZE(content) == PyList_GET_SIZE(texts)
            == PyList_GET_SIZE(parent) == n and PyList_GET_SIZE(keep) >= n):
        raise ValueError("the block columns differ in length")
    # The snippets' keys: at most cap + 1 (a block adds two, and the loop stops at cap), and 2n.
    room = 16
    while room < 2 * (min(2 * n, max(cap, 0) + 1) + 1):
        room *= 2
    cdef uint64_t *hash_keys = <uint64_t *>malloc((n + 1) * sizeof(uint64_t))
    cdef uint64_t *block_keys = <uint64_t *>malloc((2 * n + 1) * sizeof(uint64_t))  # each block's hash and sig
    cdef Pair *slots = <Pair *>malloc((n + 1) * sizeof(Pair))
    cdef Pair *held = <Pair *>malloc((n + 1) * sizeof(Pair))
    cdef Py_ssize_t *source = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
    cdef KeySet snippet_keys
    snippet_keys.table = <uint64_t *>calloc(room, sizeof(uint64_t))
    snippet_keys.mask, snippet_keys.has_zero, snippet_keys.count = room - 1, False, 0
    cdef uint64_t h, s
    cdef int64_t size
    cdef bint kept, has_text, new_hash, new_sig
    cdef object text
    cdef dict snippets = {}
    try:
        if hash_keys == NULL or block_keys == NULL or slots == NULL or held == NULL or source == NULL or snippet_keys.table == NULL:
            raise MemoryError()
        for i in range(n):
            h = _key(<object>PyList_GET_ITEM(hashes, i))
            s = _key(<object>PyList_GET_ITEM(sigs, i))
            block_keys[2 * i], block_keys[2 * i + 1] = h, s
            size = _size(<object>PyList_GET_ITEM(sizes, i))
            kept = _truth(<object>PyList_GET_ITEM(keep, i))
            has_text = _truth(<object>PyList_GET_ITEM(texts, i))
            source[i] = i if has_text else -1
            if _truth(<object>PyList_GET_ITEM(content, i)):
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
        # The first snippet of each hash and sig, blocks in order, until there are cap: the keys
        # seen are told in C, and only a new key's text is cut (most sigs are seen already).
        for b in range(n):
            if snippet_keys.count >= cap:
                break
            if source[b] >= 0:
                new_hash = _added(&snippet_keys, block_keys[2 * b])
                new_sig = _added(&snippet_keys, block_keys[2 * b + 1])
                if new_hash or new_sig:
                    text = (<object>PyList_GET_ITEM(texts, source[b]))[:80]
                    if new_hash:
                        snippets[<object>PyList_GET_ITEM(hashes, b)] = text
                    if new_sig:
                        snippets[<object>PyList_GET_ITEM(sigs, b)] = text
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
        free(hash_keys); free(block_keys); free(slots); free(held); free(source); free(snippet_keys.table)
    return unique, slot_keys, shares.astype(np.float32), snippets, content_keys, content_sizes.astype(np.float32)


cdef object _unique(uint64_t *keys, Py_ssize_t n):
    cdef Py_ssize_t i, m = 0
    if n:
        _sort(keys, n)
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


# -- pass 1's counts, folded (templates.fold_runs_reference) ----------------------------------

def fold_runs(const uint64_t[::1] keys, const int32_t[::1] pages, const float[::1] weights, list runs):
    """``templates.fold_runs_reference``: the counts (``keys`` sorted and unique, their pages and
    weights) with the runs (key array, pages each key adds: an int or an int32 array, float32
    weights or None for zeros) added, by a merge: the counts are not sorted again, and the runs
    are merged when they come sorted (else sorted). Each key's weights are
    summed in input order from 0.0 in a double, as ``np.bincount`` sums them, then rounded to
    float32; pages in int64 (exact, as the reference's float64 sums of small integers). Keys
    that are not sorted and unique, or pages past int32, raise ``ValueError`` / ``OverflowError``
    (the caller then runs the reference)."""
    cdef Py_ssize_t m = keys.shape[0], n = 0, i, at, u, length, nruns
    cdef const uint64_t[::1] run_keys
    cdef const float[::1] run_weights
    cdef const int32_t[::1] run_pages
    cdef int64_t inc = 0
    cdef bint weighted, ordered, per_key
    cdef Entry *entries
    cdef Py_ssize_t *bounds
    if pages.shape[0] != m or weights.shape[0] != m:
        raise ValueError("the count columns differ in length")
    for run in runs:
        n += len(run[0])
    entries = <Entry *>malloc((n + 1) * sizeof(Entry))
    bounds = <Py_ssize_t *>malloc((len(runs) + 2) * sizeof(Py_ssize_t))  # where each run with keys starts
    if entries == NULL or bounds == NULL:
        free(entries); free(bounds)
        raise MemoryError()
    try:
        at, nruns, ordered = 0, 0, True
        for run_key_array, increment, weight_array in runs:
            run_keys = run_key_array
            length = run_keys.shape[0]
            per_key = not isinstance(increment, int)
            if per_key:  # (another model's counts: SiteTemplates.merge)
                run_pages = increment
                if run_pages.shape[0] != length:
                    raise ValueError("a run's pages differ in length from its keys")
            else:
                inc = increment
            weighted = weight_array is not None
            if weighted:
                run_weights = weight_array
                if run_weights.shape[0] != length:
                    raise ValueError("a run's weights differ in length from its keys")
            if at + length > n:
                raise ValueError("a run changed length")
            if length:
                bounds[nruns] = at
                nruns += 1
            for i in range(length):
                entries[at].key = run_keys[i]
                entries[at].at = at
                entries[at].pages = run_pages[i] if per_key else inc
                entries[at].weight = run_weights[i] if weighted else 0.0
                if i and run_keys[i] < run_keys[i - 1]:
                    ordered = False
                at += 1
        n = at
        bounds[nruns] = n
        if ordered:
            _merge_runs(entries, n, bounds, nruns)
        else:
            _sort(entries, n)
        # The union, merged into columns of room for every key (one pass over the counts, not
        # three: their check, the union's size, the merge), then cut to its size in place.
        out_keys = np.empty(m + n, dtype=np.uint64)
        out_pages = np.empty(m + n, dtype=np.int32)
        out_weights = np.empty(m + n, dtype=np.float32)
        u = _merge(keys, pages, weights, entries, n, out_keys, out_pages, out_weights)
    finally:
        free(entries); free(bounds)
    for column in (out_keys, out_pages, out_weights):
        column.resize(u, refcheck=False)  # (realloc: no copy)
    return out_keys, out_pages, out_weights


cdef Py_ssize_t _merge(const uint64_t[::1] keys, const int32_t[::1] pages, const float[::1] weights, Entry *entries,
                       Py_ssize_t n, uint64_t[::1] out_keys, int32_t[::1] out_pages, float[::1] out_weights) except -1:
    """The counts and the sorted entries merged into the out columns; the number of keys.
    ValueError when the counts' keys are not sorted and unique."""
    cdef Py_ssize_t m = keys.shape[0], i = 0, j = 0, u = 0
    cdef uint64_t key
    cdef int64_t total
    cdef double acc
    while i < m or j < n:
        total, acc = 0, 0.0
        if j == n or (i < m and keys[i] < entries[j].key):
            key = keys[i]
        else:
            key = entries[j].key
        if i < m and keys[i] == key:
            if i and keys[i - 1] >= key:
                raise ValueError("the counts' keys are not sorted and unique")
            total += pages[i]
            acc += <double>weights[i]
            i += 1
        while j < n and entries[j].key == key:
            total += entries[j].pages
            acc += entries[j].weight
            j += 1
        if total > 2147483647 or total < -2147483648:
            raise OverflowError("pages past int32")
        out_keys[u], out_pages[u], out_weights[u] = key, <int32_t>total, <float>acc
        u += 1
    return u


# -- pass 2's look-ups in a site's counts (templates.SiteModel) ---------------------------------

cdef inline Py_ssize_t _find(const uint64_t *keys, Py_ssize_t m, uint64_t key) noexcept nogil:
    """The place of ``key`` in the sorted ``keys`` (the first, as searchsorted's), -1 when absent.
    The keys are hashes, spread evenly over uint64: a first guess in proportion to the key's
    value lands near its place, and the search narrows from there (galloping) in a few cache
    lines instead of ~18 misses over a large site's counts; any spread gives the same place."""
    cdef Py_ssize_t lo = 0, hi = m, mid, step, guess
    if m > 64:
        guess = <Py_ssize_t>((<double>key) * (<double>m) * 5.421010862427522e-20)  # key / 2**64 * m
        if guess >= m:
            guess = m - 1
        if keys[guess] < key:  # the place is after guess: gallop up
            lo, step = guess + 1, 1
            while lo + step < m and keys[lo + step] < key:
                lo += step + 1
                step <<= 1
            hi = lo + step if lo + step < m else m
        else:  # at guess or before: gallop down
            hi, step = guess, 1
            while hi - step >= 0 and keys[hi - step] >= key:
                hi -= step
                step <<= 1
            lo = hi - step + 1 if hi - step >= 0 else 0
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < m and keys[lo] == key else -1


cdef Py_ssize_t *_places(const uint64_t[::1] keys, object query, Py_ssize_t *count) except NULL:
    """The place of each key of ``query`` (a list of ints or a uint64 array) in ``keys``: a
    malloc'd array the caller frees."""
    cdef Py_ssize_t n, i, m = keys.shape[0]
    cdef const uint64_t[::1] array
    cdef Py_ssize_t *places
    cdef const uint64_t *base = &keys[0] if m else NULL
    if isinstance(query, list):
        n = PyList_GET_SIZE(query)
        places = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
        if places == NULL:
            raise MemoryError()
        try:
            for i in range(n):
                places[i] = _find(base, m, _key(<object>PyList_GET_ITEM(query, i)))
        except BaseException:
            free(places)
            raise
    else:
        array = query
        n = array.shape[0]
        places = <Py_ssize_t *>malloc((n + 1) * sizeof(Py_ssize_t))
        if places == NULL:
            raise MemoryError()
        for i in range(n):
            places[i] = _find(base, m, array[i])
    count[0] = n
    return places


def lookup_columns(const uint64_t[::1] keys, object query, const int32_t[::1] pages, object shares=None):
    """``SiteModel._lookup_columns`` of an int32 column and an optional float32 one: the value
    of each key of ``query`` (a list of ints or a uint64 array) in the sorted ``keys``, 0 for a
    key not there. Keys past uint64 raise ``OverflowError``, as numpy's conversion does."""
    cdef Py_ssize_t n, i, m = keys.shape[0]
    cdef const float[::1] share_column
    cdef float[::1] share_view
    cdef int32_t[::1] page_view
    if pages.shape[0] != m:
        raise ValueError("the columns differ in length from the keys")
    if shares is not None:
        share_column = shares
        if share_column.shape[0] != m:
            raise ValueError("the columns differ in length from the keys")
    cdef Py_ssize_t *places = _places(keys, query, &n)
    try:
        out_pages = np.empty(n, dtype=np.int32)
        page_view = out_pages
        for i in range(n):
            page_view[i] = pages[places[i]] if places[i] >= 0 else 0
        if shares is None:
            return [out_pages]
        out_shares = np.empty(n, dtype=np.float32)
        share_view = out_shares
        for i in range(n):
            share_view[i] = share_column[places[i]] if places[i] >= 0 else 0
        return [out_pages, out_shares]
    finally:
        free(places)


def keys_on_pages(const uint64_t[::1] hash_keys, const int32_t[::1] hash_pages, const uint64_t[::1] slot_keys,
                  const int32_t[::1] slot_pages, list keys, int32_t at_least):
    """``templates._keys_on_pages_reference``: the keys (ints, in order) on ``at_least`` pages
    as a subtree hash or as a slot."""
    cdef Py_ssize_t n = PyList_GET_SIZE(keys), i, mh = hash_keys.shape[0], ms = slot_keys.shape[0], at
    cdef uint64_t key
    cdef bint enough
    if hash_pages.shape[0] != mh or slot_pages.shape[0] != ms:
        raise ValueError("the columns differ in length from the keys")
    cdef const uint64_t *hashes = &hash_keys[0] if mh else NULL
    cdef const uint64_t *slots = &slot_keys[0] if ms else NULL
    cdef list out = []
    for i in range(n):
        key = _key(<object>PyList_GET_ITEM(keys, i))
        at = _find(hashes, mh, key)
        enough = (hash_pages[at] if at >= 0 else 0) >= at_least  # (a key not there is on 0 pages)
        if not enough:
            at = _find(slots, ms, key)
            enough = (slot_pages[at] if at >= 0 else 0) >= at_least
        if enough:
            out.append(<object>PyList_GET_ITEM(keys, i))
    return out


def slot_decisions(const uint64_t[::1] slot_keys, const int32_t[::1] slot_pages, const float[::1] slot_kept,
                   Py_ssize_t site_pages, double min_share, double page_weight, double prior_weight,
                   list sigs, list keep, list inside, list template, list texts):
    """``SiteModel._with_slot_priors_reference``: (keep, images allowed) of each block, the slot
    prior (its kept text over its pages; 0 for a slot not counted) combined with the page-level
    decision where the slot is on ``min_share`` of the site's pages and the block has text. The
    same double arithmetic, in the same order (built without fused multiply-add)."""
    cdef Py_ssize_t n = PyList_GET_SIZE(sigs), i, m = slot_keys.shape[0], at
    cdef double pages, kept, prior, share, page
    cdef bint final
    if slot_pages.shape[0] != m or slot_kept.shape[0] != m:
        raise ValueError("the columns differ in length from the keys")
    if not (PyList_GET_SIZE(keep) >= n and PyList_GET_SIZE(inside) >= n and PyList_GET_SIZE(template) >= n
            and PyList_GET_SIZE(texts) >= n):
        raise ValueError("the block columns differ in length")
    cdef const uint64_t *base = &slot_keys[0] if m else NULL
    cdef list finals = [False] * n, images = [False] * n
    for i in range(n):
        if _truth(<object>PyList_GET_ITEM(template, i)):
            continue
        at = _find(base, m, _key(<object>PyList_GET_ITEM(sigs, i)))
        pages = <double>slot_pages[at] if at >= 0 else 0.0
        kept = <double>slot_kept[at] if at >= 0 else 0.0
        prior = kept / pages if pages > 0 else 0.0
        share = pages / <double>site_pages
        page = 1.0 if _truth(<object>PyList_GET_ITEM(keep, i)) else 0.0
        if share >= min_share and _truth(<object>PyList_GET_ITEM(texts, i)):
            final = page_weight * page + prior_weight * prior >= 0.5
        else:
            final = page != 0.0
        finals[i] = final
        images[i] = final or _truth(<object>PyList_GET_ITEM(inside, i))
    return finals, images


def template_flags(const unsigned char[::1] over, list hashes, list parent, Py_ssize_t first, Py_ssize_t item_repeats):
    """``SiteModel._template_flags_reference``: whether each block is template, from ``first``
    on (the first block over the share): over the share and its hash said fewer than
    ``item_repeats`` times on the page, or its parent template (a parent before its child: the
    flag of a parent after it is still False). The hashes of the blocks over the share are
    counted on the page by a search in their sorted list, not a dict of every hash."""
    cdef Py_ssize_t n = PyList_GET_SIZE(hashes), b, p, k = 0, at
    if over.shape[0] != n or PyList_GET_SIZE(parent) < n:
        raise ValueError("the block columns differ in length")
    cdef list template = [False] * n
    if first >= n:
        return template
    if first < 0:
        raise ValueError("no first block")
    cdef uint64_t *keys = <uint64_t *>malloc((n + 1) * sizeof(uint64_t))
    cdef uint64_t *wanted = <uint64_t *>malloc((n + 1) * sizeof(uint64_t))  # hashes over the share, sorted, unique
    cdef Py_ssize_t *said = <Py_ssize_t *>calloc(n + 1, sizeof(Py_ssize_t))  # how often each is on the page
    cdef unsigned char *flags = <unsigned char *>calloc(n + 1, 1)
    try:
        if keys == NULL or wanted == NULL or said == NULL or flags == NULL:
            raise MemoryError()
        for b in range(n):
            keys[b] = _key(<object>PyList_GET_ITEM(hashes, b))
        for b in range(first, n):
            if over[b]:
                wanted[k] = keys[b]
                k += 1
        if k:
            _sort(wanted, k)
            at = 0
            for b in range(1, k):
                if wanted[b] != wanted[at]:
                    at += 1
                    wanted[at] = wanted[b]
            k = at + 1
            for b in range(n):
                at = _find(wanted, k, keys[b])
                if at >= 0:
                    said[at] += 1
        for b in range(first, n):
            p = PyLong_AsLongLong(<object>PyList_GET_ITEM(parent, b))
            if over[b] and said[_find(wanted, k, keys[b])] < item_repeats:
                flags[b] = 1
            elif p >= 0:
                if p >= n:
                    raise IndexError("list index out of range")
                flags[b] = flags[p]
            if flags[b]:
                template[b] = True
    finally:
        free(keys); free(wanted); free(said); free(flags)
    return template


def in_set(const uint64_t[::1] keys, set members):
    """``templates._in_set_reference``: whether each key is in ``members`` (a bool array)."""
    cdef Py_ssize_t n = keys.shape[0], i
    out = np.empty(n, dtype=np.uint8)
    cdef unsigned char[::1] view = out
    for i in range(n):
        view[i] = PySet_Contains(members, keys[i])
    return out.view(bool)


# -- pass 1's copy test (templates.SiteTemplates._is_copy_reference) ------------------------------

cdef class HashSet:
    """A set of uint64 keys in C (a KeySet, grown to stay at most half full): the pending
    pages' subtree hashes of a site (``_SiteCounts.pending_hashes``), which every page fitted
    adds to and every page's copy test asks (a Python set of them took a Python int a hash a
    page: 0.15 CPU-s of corpus-10000-shared's fit). Pickles as its sorted keys."""

    cdef KeySet members

    def __cinit__(self, keys=None):
        self.members.table = <uint64_t *>calloc(16, sizeof(uint64_t))
        if self.members.table == NULL:
            raise MemoryError()
        self.members.mask, self.members.has_zero, self.members.count = 15, False, 0

    def __init__(self, keys=None):
        if keys is not None:
            self.add_keys(np.ascontiguousarray(keys, dtype=np.uint64))

    def __dealloc__(self):
        free(self.members.table)

    cdef int _grow(self) except -1:
        cdef Py_ssize_t i
        cdef KeySet grown
        grown.table = <uint64_t *>calloc(2 * (self.members.mask + 1), sizeof(uint64_t))
        if grown.table == NULL:
            raise MemoryError()
        grown.mask = 2 * self.members.mask + 1
        grown.has_zero, grown.count = self.members.has_zero, 1 if self.members.has_zero else 0
        for i in range(self.members.mask + 1):
            if self.members.table[i] != 0:
                _added(&grown, self.members.table[i])
        free(self.members.table)
        self.members = grown
        return 0

    def add_keys(self, const uint64_t[::1] keys):
        """Add every key of a uint64 array."""
        cdef Py_ssize_t i
        for i in range(keys.shape[0]):
            if 2 * (self.members.count + 1) > self.members.mask + 1:
                self._grow()
            _added(&self.members, keys[i])

    def holds(self, const uint64_t[::1] keys):
        """Whether each key of a uint64 array is in the set (a bool array)."""
        cdef Py_ssize_t n = keys.shape[0], i
        out = np.empty(n, dtype=np.uint8)
        cdef unsigned char[::1] view = out
        for i in range(n):
            view[i] = _holds(&self.members, keys[i])
        return out.view(bool)

    def keys(self):
        """The keys, sorted (a uint64 array)."""
        out = np.empty(self.members.count, dtype=np.uint64)
        cdef uint64_t[::1] view = out
        cdef Py_ssize_t i, k = 0
        if self.members.has_zero:
            view[0] = 0
            k = 1
        for i in range(self.members.mask + 1):
            if self.members.table[i] != 0:
                view[k] = self.members.table[i]
                k += 1
        out.sort()
        return out

    def __contains__(self, key):
        return _holds(&self.members, _key(key))

    def __len__(self):
        return self.members.count

    def __eq__(self, other):
        if isinstance(other, HashSet):
            return len(self) == len(other) and bool((self.keys() == other.keys()).all())
        if isinstance(other, (set, frozenset)):
            return set(self.keys().tolist()) == other
        return NotImplemented

    __hash__ = None

    def __repr__(self):
        return f"HashSet({self.keys().tolist()!r})"

    def __reduce__(self):
        return (HashSet, (self.keys(),))


def copied(const uint64_t[::1] content, const float[::1] sizes, const uint64_t[::1] hash_keys,
           const int32_t[::1] hash_pages, object pending, double share):
    """``templates._is_copy_reference`` past its first tests: whether the content blocks
    (``content``, their sizes ``sizes``) on the site's counted pages (in the counts on one page
    or more, or among the pending pages' hashes ``pending``: a HashSet or a set of ints) make
    ``share`` of the content text or more. One pass, no numpy array a page. The reference sums
    the float32 sizes in float32 (numpy's pairwise order); here they are summed in a double,
    which is the same sum when every size is a whole number and the total is under 2**24 (each
    partial sum of either order is then exact): other sizes raise ``ValueError`` (the caller
    then runs the reference)."""
    cdef Py_ssize_t n = content.shape[0], m = hash_keys.shape[0], i, at
    cdef double total = 0.0, seen = 0.0, size
    cdef HashSet native_pending = None
    cdef set python_pending = None
    if isinstance(pending, HashSet):
        native_pending = pending
        if native_pending.members.count == 0:
            native_pending = None
    elif isinstance(pending, set):
        python_pending = pending if len(pending) else None
    else:
        raise TypeError("pending hashes of another type")
    if sizes.shape[0] != n or hash_pages.shape[0] != m:
        raise ValueError("the columns differ in length")
    for i in range(n):
        size = sizes[i]
        if not (size >= 0.0 and size < 16777216.0 and size == <double>(<int64_t>size)):
            raise ValueError("a size that is no small whole number")
        total += size
    if total >= 16777216.0:
        raise ValueError("sizes past float32's whole numbers")
    if total <= 0.0:
        return False
    cdef const uint64_t *base = &hash_keys[0] if m else NULL
    for i in range(n):
        at = _find(base, m, content[i])
        if at >= 0 and hash_pages[at] > 0:
            seen += sizes[i]
        elif native_pending is not None:
            if _holds(&native_pending.members, content[i]):
                seen += sizes[i]
        elif python_pending is not None and PySet_Contains(python_pending, content[i]):
            seen += sizes[i]
    return seen >= share * total
