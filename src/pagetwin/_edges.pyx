# cython: language_level=3, boundscheck=False, wraparound=False
"""Native kernel of the link step's edge rows (Cython); its reference is match.EvidenceRows,
and tests/test_match.py holds the two to the same rows.

* ``edge_rows``: ``[rows.edge_row(evidence) for evidence in lists]``. An item whose row
  ``rows`` keeps (EvidenceRows._item's key, built here in C, found in its dict) takes that
  row without a Python call (an item kept by the signs of its zeros too); every other item
  (not kept yet, a detail not a dict, a value that cannot be hashed) is asked of
  ``rows._item``, which keeps what it makes; an edge of several items joins its items' rows
  as EvidenceRows.edge_row does. Most items are the first kind (corpus-10000-shared: 232,977
  of its 269,616 edges are one MinHash item). An item object met again in the same call
  (MinHash.passing gives one Evidence to all its pairs of equal counts) takes the row found
  for it the first time, by identity: ``lists`` holds every item until the call returns, so
  no two of them share an id.
* ``edge_columns``: the same rows as three columns (kinds, texts, scores), for edges whose
  items are runs of a list taken in a given order (match._PassedItems.columns: the items of
  a run's pairs sorted by pair); its reference is match.edge_row_columns_reference.
* ``pair_text``: pairs.jsonl's lines of a chunk of edges as one text (its reference is
  outputs.jsonl.pair_text_reference, and tests/outputs/test_jsonl.py holds the two to the
  same text), in the format of outputs.jsonl._quoted_line: the pieces of every line gathered
  and joined once (joining a string a line again cost as much as making them).
"""

from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.math cimport signbit


cdef inline void _put(tuple key, Py_ssize_t i, object value):
    Py_INCREF(value)  # PyTuple_SET_ITEM takes the reference
    PyTuple_SET_ITEM(key, i, value)


cdef tuple _item_key(object e):
    """EvidenceRows._item's key of one item: (algorithm, score, its class, passed, its class,
    the detail's keys, its values, their classes)."""
    cdef dict detail = e.detail
    cdef Py_ssize_t n = len(detail), pos = 0, i = 0
    cdef PyObject* k
    cdef PyObject* v
    score, passed = e.score, e.passed
    cdef tuple key = PyTuple_New(5 + 3 * n)
    _put(key, 0, e.algorithm)
    _put(key, 1, score)
    _put(key, 2, score.__class__)
    _put(key, 3, passed)
    _put(key, 4, passed.__class__)
    while PyDict_Next(detail, &pos, &k, &v):
        _put(key, 5 + i, <object>k)
        _put(key, 5 + n + i, <object>v)
        _put(key, 5 + 2 * n + i, type(<object>v))
        i += 1
    return key


cdef tuple _zero_signs(tuple key):
    """match._zero_signs of the item whose key this is: whether each of its float values
    that is zero (its score, verdict, then the detail's values) is -0.0."""
    cdef Py_ssize_t n = (len(key) - 5) // 3, i
    cdef list signs = []
    for i in (1, 3, *range(5 + n, 5 + 2 * n)):
        value = key[i]
        if type(value) is float and <double>value == 0.0:
            signs.append(signbit(<double>value) != 0)
    return tuple(signs)


cdef object _kept_item(dict kept, object e):
    """The row ``kept`` holds for item ``e`` under its key (EvidenceRows._item's), and the
    signs of its zeros when it is kept by them; None when it is not kept (or its detail is
    not a dict, or a value cannot be hashed)."""
    if type(e.detail) is not dict:
        return None
    key = _item_key(e)
    try:
        hit = kept.get(key)
    except TypeError:  # an unhashable value
        return None
    if type(hit) is dict:
        hit = (<dict>hit).get(_zero_signs(key))
    return hit if type(hit) is tuple else None


cdef object _row_of(dict seen, dict kept, object e, object slow):
    """The row of item ``e``: the one found for this object earlier in the call, else the
    one ``kept`` holds, else ``slow``'s (EvidenceRows._item)."""
    cdef object ident = id(e)
    hit = seen.get(ident)
    if hit is None:
        hit = _kept_item(kept, e)
        if hit is None:
            hit = slow(e)
        seen[ident] = hit
    return hit


def edge_rows(list lists, object rows, object kind_of_items):
    """``[rows.edge_row(evidence) for evidence in lists]`` (see the module's doc);
    ``kind_of_items``: match._kind_of_items, an edge's kind from its items' kinds."""
    cdef dict kept = rows._items  # cleared in place when full, never replaced
    cdef list out = []
    cdef object evidence
    cdef dict seen = {}  # id of an item met in this call -> its row
    slow = rows._item  # an item not found here: EvidenceRows makes (and keeps) its row
    for evidence in lists:
        if len(evidence) == 1:
            out.append((<tuple>_row_of(seen, kept, evidence[0], slow))[4])
        else:
            out.append(_joined_row(seen, kept, evidence, slow, kind_of_items))
    return out


cdef tuple _joined_row(dict seen, dict kept, object evidence, object slow, object kind_of_items):
    """EvidenceRows.edge_row of an edge of several items: its items' rows joined."""
    cdef list texts = []
    cdef set kinds = set()
    cdef tuple item
    cdef object e, best = None, score
    for e in evidence:
        item = _row_of(seen, kept, e, slow)
        texts.append(item[0])
        kinds.add(item[3])
        score = item[1]
        if item[2] and (best is None or score > best):
            best = score
    return (kind_of_items(kinds), "[" + ", ".join(texts) + "]", 1.0 if best is None else best)


def edge_columns(list items, list order, list starts, object rows, object kind_of_items):
    """The kinds, texts and scores (three lists) of ``edge_rows(lists, rows, kind_of_items)``
    over the edges whose items are ``[items[i] for i in order[starts[g]:starts[g + 1]]]`` (the
    last edge's up to the end of ``order``), without making those lists nor a row for each edge:
    most edges are one item, whose row is the one kept for it."""
    cdef dict kept = rows._items
    cdef list kinds = [], texts = [], scores = []
    cdef tuple row
    cdef dict seen = {}
    cdef Py_ssize_t g, j, start, end, edges = len(starts), count = len(order)
    slow = rows._item
    for g in range(edges):
        start = starts[g]
        end = starts[g + 1] if g + 1 < edges else count
        if end - start == 1:
            row = (<tuple>_row_of(seen, kept, items[<Py_ssize_t>order[start]], slow))[4]
        else:
            row = _joined_row(seen, kept, [items[<Py_ssize_t>order[j]] for j in range(start, end)], slow, kind_of_items)
        kinds.append(row[0])
        texts.append(row[1])
        scores.append(row[2])
    return kinds, texts, scores


cdef inline object _formatted(object value):
    """``value`` as an f-string writes it: a str as it is, anything else by format(value, "")."""
    return value if type(value) is str else format(value, "")


def pair_text(list chunk, dict quoted, dict kinds, object quote):
    """outputs.jsonl.pair_text_reference: (the lines of the edges (a, b, kind, evidence) of
    ``chunk`` whose two pages ``quoted`` holds ((quoted id, quoted url)), each ended, as one
    text; how many), the kind's text from ``kinds`` (``quote(kind)`` kept there when it
    lacks it), each line in _quoted_line's format."""
    cdef list pieces = []
    cdef Py_ssize_t lines = 0
    cdef object row, a, b, kind, evidence, page_a, page_b, kind_text
    for row in chunk:
        a, b, kind, evidence = row
        page_a = quoted.get(a)
        page_b = quoted.get(b)
        if page_a is None or page_b is None:
            continue
        kind_text = kinds.get(kind)
        if kind_text is None:
            kind_text = quote(kind)
            kinds[kind] = kind_text
        pieces += [
            '{"a": ', _formatted(page_a[0]), ', "b": ', _formatted(page_b[0]), ', "url_a": ', _formatted(page_a[1]),
            ', "url_b": ', _formatted(page_b[1]), ', "kind": ', _formatted(kind_text), ', "evidence": ', _formatted(evidence), "}\n",
        ]
        lines += 1
    return "".join(pieces), lines
