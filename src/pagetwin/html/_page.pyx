# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Pass 1's page-level rules (``html.noise``) in C: the same functions, the same results.

Each function here takes what its pure-Python reference in noise.py takes (the classes, the
region), the page's blocks as ``Columns`` (their columns read once into C arrays: page_keep
makes one per page), and returns what the reference returns; ``noise.page_keep`` runs these
when the module is built. The block texts stay Python strings (their length, prefixes and
hashes are the str methods the reference calls). The region's scores are doubles summed in the reference's order; every addend is a
multiple of 0.5 far below 2**53, so each sum is exact whatever the order, and each balance is
the one correctly rounded division the reference makes. Columns of other lengths than the tag
column, or parents outside the page, raise ValueError (the reference would index past them).
"""

cimport cython
from cpython cimport array
ctypedef long long int64_t
ctypedef unsigned long long uint64_t
from libc.stdlib cimport qsort
from libc.string cimport memset
from cpython.unicode cimport Py_UNICODE_ISSPACE


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    unsigned int PyUnicode_KIND(object o)
    void *PyUnicode_DATA(object o)
    Py_UCS4 PyUnicode_READ(unsigned int kind, void *data, Py_ssize_t index) nogil

import array as _array

# The classes (noise.GOOD ... noise.TEASER) and the thresholds, as noise.py sets them (the
# module checks them against its own when it imports this one: CONSTANTS).
cdef enum:
    GOOD = 0
    NEAR = 1
    SHORT = 2
    BAD = 3
    HEADING = 4
    EMPTY = 5
    TEASER = 6

cdef double GOOD_SIZE = 150, SHORT_SIZE = 30, MAX_LINK_DENSITY = 0.3, BAD_LINK_DENSITY = 0.5
cdef double NEAR_WEIGHT = 0.5, BAD_WEIGHT = 2.0, HINT_SHARE = 0.5, HINT_CLEAN = 0.8
cdef double TEASER_SIZE = 20, TEASER_WEIGHT = 0.5, LIST_RATIO = 2.0, LONG_SIZE = 900
cdef double ARTICLE_SIZE = 450, GRID_OWN = 0.2, GRID_SIZE = 300, GRID_SHARE = 0.5
cdef Py_ssize_t TEASER_WORDS = 4, FILLER_WORDS = 2, FILLER_SAID = 20, GRID_CARDS = 4, GRID_BLOCKS = 2
cdef Py_ssize_t PROSE_SLOT = 2, REPEAT_SIZE = 100, INDEX_SECTIONS = 3, INDEX_ITEMS = 5
cdef double DATELINE_SIZE = 300, MAIN_GAIN = 1.1, MAIN_BAD = 0.6

CONSTANTS = {
    "GOOD": GOOD, "NEAR": NEAR, "SHORT": SHORT, "BAD": BAD, "HEADING": HEADING, "EMPTY": EMPTY, "TEASER": TEASER,
    "GOOD_SIZE": GOOD_SIZE, "SHORT_SIZE": SHORT_SIZE, "MAX_LINK_DENSITY": MAX_LINK_DENSITY,
    "BAD_LINK_DENSITY": BAD_LINK_DENSITY, "NEAR_WEIGHT": NEAR_WEIGHT, "BAD_WEIGHT": BAD_WEIGHT,
    "HINT_SHARE": HINT_SHARE, "HINT_CLEAN": HINT_CLEAN, "TEASER_SIZE": TEASER_SIZE, "TEASER_WORDS": TEASER_WORDS,
    "TEASER_WEIGHT": TEASER_WEIGHT, "LIST_RATIO": LIST_RATIO, "LONG_SIZE": LONG_SIZE, "ARTICLE_SIZE": ARTICLE_SIZE,
    "FILLER_WORDS": FILLER_WORDS, "FILLER_SAID": FILLER_SAID, "GRID_CARDS": GRID_CARDS, "GRID_BLOCKS": GRID_BLOCKS,
    "GRID_OWN": GRID_OWN, "GRID_SIZE": GRID_SIZE, "GRID_SHARE": GRID_SHARE, "PROSE_SLOT": PROSE_SLOT,
    "REPEAT_SIZE": REPEAT_SIZE, "INDEX_SECTIONS": INDEX_SECTIONS, "INDEX_ITEMS": INDEX_ITEMS,
    "DATELINE_SIZE": DATELINE_SIZE, "MAIN_GAIN": MAIN_GAIN, "MAIN_BAD": MAIN_BAD,
}  # fmt: skip

_URL_STARTS = ("http://", "https://", "www.")

cdef array.array _I64 = _array.array("q")
cdef array.array _F64 = _array.array("d")
cdef array.array _U64 = _array.array("Q")
cdef array.array _I8 = _array.array("b")


cdef inline array.array _zeros(array.array kind, Py_ssize_t n):
    return array.clone(kind, n, True)


cdef array.array _ints(list column, Py_ssize_t n):
    """A column of ints as int64 (ValueError when it is not n long)."""
    if len(column) != n:
        raise ValueError("a Blocks column of another length")
    cdef array.array out = array.clone(_I64, n, False)
    cdef int64_t *p = out.data.as_longlongs
    cdef Py_ssize_t i
    for i in range(n):
        p[i] = column[i]
    return out


cdef array.array _small(list column, Py_ssize_t n, bint classes):
    """A column as int8: truth values (0 or 1), or page-level classes (checked: 0 to 6)."""
    if len(column) != n:
        raise ValueError("a column of another length than the blocks")
    cdef array.array out = array.clone(_I8, n, False)
    cdef signed char *p = out.data.as_schars
    cdef Py_ssize_t i
    cdef long c
    for i in range(n):
        x = column[i]
        if classes:
            c = x
            if c < 0 or c > 6:
                raise ValueError("not a page-level class")
            p[i] = <signed char>c
        else:
            p[i] = 1 if x is True else 0 if x is False else 1 if x else 0
    return out


cdef inline array.array _flags(list column, Py_ssize_t n):
    return _small(column, n, False)


cdef inline array.array _classes(list classes, Py_ssize_t n):
    return _small(classes, n, True)


# Tag codes (Columns.tag): the tags the rules ask about.
cdef enum:
    T_OTHER = 0
    T_H1 = 1
    T_H2 = 2
    T_H = 3  # h3-h6
    T_LI = 4
    T_ITEM = 5  # tr, td, dd, dt (with li: a list item or a table cell)
    T_OBJECT = 6
    T_ARTICLE = 7
    T_MAIN = 8
    T_PRE = 9
    T_FIGCAPTION = 10

cdef dict _TAG_CODES = {"h1": T_H1, "h2": T_H2, "h3": T_H, "h4": T_H, "h5": T_H, "h6": T_H, "li": T_LI,
                        "tr": T_ITEM, "td": T_ITEM, "dd": T_ITEM, "dt": T_ITEM, "object": T_OBJECT, "article": T_ARTICLE,
                        "main": T_MAIN, "pre": T_PRE, "figcaption": T_FIGCAPTION}  # fmt: skip


cdef inline bint _heading(signed char tag) noexcept nogil:
    return T_H1 <= tag <= T_H


cdef class Columns:
    """The columns of one page's Blocks in C arrays (texts and signatures also as the lists
    they are), read once for all the native rules page_keep runs on the page. Columns of other
    lengths, parents that are not blocks before their child, or values out of range raise
    ValueError / OverflowError / TypeError (page_keep then runs the reference)."""

    cdef readonly Py_ssize_t n
    cdef array.array _parent, _size, _link, _length, _sig, _hint, _tag
    cdef int64_t *parent
    cdef int64_t *size
    cdef int64_t *link
    cdef int64_t *length
    cdef uint64_t *sig
    cdef signed char *hint
    cdef signed char *tag
    cdef bint marked  # some block is marked as the article body
    cdef bint captions  # noise._drop_captions has work: figure captions or named captions, and no <pre>
    cdef list texts, sigs, sizes

    def __init__(self, blocks):
        cdef list tags = blocks.tag
        cdef Py_ssize_t n = len(tags), b
        self.n = n
        self.texts, self.sigs, self.sizes = blocks.text, blocks.sig, blocks.size
        self._parent, self._size, self._link = _ints(blocks.parent, n), _ints(self.sizes, n), _ints(blocks.link, n)
        self._hint = _flags(blocks.hint, n)
        self.parent, self.size, self.link = self._parent.data.as_longlongs, self._size.data.as_longlongs, self._link.data.as_longlongs
        self.hint = self._hint.data.as_schars
        for b in range(n):
            if self.parent[b] < -1 or self.parent[b] >= b:
                raise ValueError("a parent that is not a block before its child")
            if self.hint[b]:
                self.marked = True
        if len(self.texts) != n or len(self.sigs) != n:
            raise ValueError("a Blocks column of another length")
        self._length, self._sig, self._tag = array.clone(_I64, n, False), array.clone(_U64, n, False), array.clone(_I8, n, False)
        self.length, self.sig, self.tag = self._length.data.as_longlongs, self._sig.data.as_ulonglongs, self._tag.data.as_schars
        cdef str text
        for b in range(n):
            text = self.texts[b]
            self.length[b] = len(text)
            self.sig[b] = self.sigs[b]
            code = _TAG_CODES.get(tags[b])
            self.tag[b] = T_OTHER if code is None else <signed char>(<long>code)
        cdef bint pre = False, figures = False, named = False
        for b in range(n):
            pre = pre or self.tag[b] == T_PRE
            figures = figures or self.tag[b] == T_FIGCAPTION
        for x in blocks.caption:
            if x:
                named = True
                break
        self.captions = not pre and (figures or named)

    def __len__(self):
        return self.n


cdef inline Py_ssize_t _end(const int64_t *parent, Py_ssize_t n, Py_ssize_t b) noexcept nogil:
    """Where the subtree of b ends (noise._subtree_parent)."""
    cdef Py_ssize_t end = b + 1
    while end < n and parent[end] >= b:
        end += 1
    return end


cdef bint _filler(str text):
    """Whether ``text[:GOOD_SIZE].split()`` has FILLER_SAID words or more and FILLER_WORDS
    distinct ones at most (noise.classify): the words are read in place (split's whitespace is
    Py_UNICODE_ISSPACE), and a prose text stops at its third distinct word."""
    cdef Py_ssize_t end = min(len(text), <Py_ssize_t>GOOD_SIZE), i = 0, start, words = 0, distinct = 0, w, x, length
    cdef Py_ssize_t at[8]
    cdef Py_ssize_t size[8]
    cdef unsigned int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef bint same
    while True:
        while i < end and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        if i >= end:
            break
        start = i
        while i < end and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        words += 1
        length = i - start
        same = False
        for w in range(distinct):
            if size[w] == length:
                same = True
                for x in range(length):
                    if PyUnicode_READ(kind, data, at[w] + x) != PyUnicode_READ(kind, data, start + x):
                        same = False
                        break
                if same:
                    break
        if not same:
            if distinct == FILLER_WORDS:
                return False  # one distinct word more than filler has
            at[distinct], size[distinct] = start, length
            distinct += 1
    return words >= FILLER_SAID


cdef uint64_t _text_key(str text, Py_ssize_t length):
    """A key equal texts share (their length and three of their characters): texts whose keys
    all differ are all different, without hashing them."""
    cdef unsigned int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    return ((<uint64_t>length) << 32) ^ ((<uint64_t>PyUnicode_READ(kind, data, 0)) << 11) ^ (
        (<uint64_t>PyUnicode_READ(kind, data, length // 2)) << 43) ^ <uint64_t>PyUnicode_READ(kind, data, length - 1)


cdef bint _all_differ(uint64_t *keys, Py_ssize_t k) noexcept nogil:
    cdef Py_ssize_t i
    qsort(keys, k, sizeof(uint64_t), _by_key)
    for i in range(1, k):
        if keys[i] == keys[i - 1]:
            return False
    return True


cdef int _by_key(const void *a, const void *b) noexcept nogil:
    """qsort's order of items by their first 8 bytes as a uint64: keys, Slots by signature,
    counts (never negative)."""
    cdef uint64_t x = (<const uint64_t *>a)[0]
    cdef uint64_t y = (<const uint64_t *>b)[0]
    return (x > y) - (x < y)


def classify(Columns cols):
    """noise.classify."""
    cdef Py_ssize_t n = cols.n, b, length
    cdef list out = [EMPTY] * n, texts = cols.texts
    cdef str text
    cdef int64_t size, link
    cdef double density
    cdef int c
    cdef Py_UCS4 first
    for b in range(n):
        length = cols.length[b]
        if length == 0:
            continue
        text = texts[b]
        size = cols.size[b]
        link = cols.link[b]
        density = <double>link / <double>length
        first = text[0]
        if (first == "h" or first == "w") and text.startswith(_URL_STARTS) and " " not in text:
            c = BAD
        elif density > BAD_LINK_DENSITY:
            if size >= TEASER_SIZE and text.count(" ") >= TEASER_WORDS - 1:
                c = TEASER
            else:
                c = HEADING if _heading(cols.tag[b]) else BAD
        elif _heading(cols.tag[b]):
            c = HEADING
        elif density > MAX_LINK_DENSITY and length < LONG_SIZE:
            c = BAD
        elif size >= GOOD_SIZE:
            c = BAD if _filler(text) else GOOD
        elif size < SHORT_SIZE:
            c = SHORT if link == 0 else BAD
        else:
            c = NEAR
        out[b] = c
    return out


cdef class _Region:
    """main_region's sums for one page and one reading (classes)."""

    cdef Py_ssize_t n
    cdef Columns cols
    cdef array.array cls_a, good_a, balance_a
    cdef int64_t *parent
    cdef int64_t *size
    cdef signed char *hint
    cdef signed char *cls
    cdef double *good
    cdef double *balance

    def __cinit__(self, Columns cols, array.array cls):
        cdef Py_ssize_t n = cols.n
        self.n = n
        self.cols, self.cls_a = cols, cls
        self.parent, self.size, self.hint, self.cls = cols.parent, cols.size, cols.hint, cls.data.as_schars
        self.good_a, self.balance_a = _zeros(_F64, n), _zeros(_F64, n)
        self.good, self.balance = self.good_a.data.as_doubles, self.balance_a.data.as_doubles


cdef list _main_region(_Region r):
    """noise.main_region over the columns of r."""
    cdef Py_ssize_t n = r.n, b, best, top, i, e
    cdef int64_t *parent = r.parent
    cdef double *good = r.good
    cdef double *balance = r.balance
    cdef array.array bad_a = _zeros(_F64, n)
    cdef double *bad = bad_a.data.as_doubles
    cdef int c
    cdef int64_t p
    cdef double g, x
    if n == 0:
        return []
    for b in range(n):
        c = r.cls[b]
        if c == GOOD:
            good[b] = <double>r.size[b]
        elif c == NEAR:
            good[b] = NEAR_WEIGHT * <double>r.size[b]
        elif c == TEASER:
            good[b] = TEASER_WEIGHT * <double>r.size[b]
        elif c == BAD:
            bad[b] = <double>r.size[b]
    for b in range(n - 1, 0, -1):
        p = parent[b]
        if p >= 0:
            good[p] += good[b]
            bad[p] += bad[b]
    for b in range(n):
        g, x = good[b], bad[b]
        balance[b] = g * g / (g + BAD_WEIGHT * x) if g > 0 else -x
    best = 0
    for b in range(1, n):
        if balance[b] > balance[best] or (balance[b] == balance[best] and parent[b] >= best):
            best = b
    if balance[best] <= 0:
        return [True] * n
    cdef list hinted = [b for b in range(n) if r.hint[b] and balance[b] > 0]
    cdef list inside
    if hinted:
        top = hinted[0]
        for i in hinted:
            if balance[i] > balance[top]:
                top = i
        if balance[top] >= HINT_SHARE * balance[best]:
            parts = _hinted_parts(r, hinted, top)
            if len(parts) > 1:
                inside = [False] * n
                for i in parts:
                    e = _end(parent, n, i)
                    for b in range(i, e):
                        inside[b] = True
                return inside
            best = _inner_body(r, hinted, top)
    cdef array.array ins_a = _zeros(_I8, n)
    cdef signed char *ins = ins_a.data.as_schars
    inside = [False] * n
    for b in range(best, n):
        p = parent[b]
        if b == best or (p >= best and ins[p]):
            ins[b] = 1
            inside[b] = True
        elif b > best and p < best:
            break
    return inside


cdef Py_ssize_t _inner_body(_Region r, list hinted, Py_ssize_t top):
    """noise._inner_body."""
    cdef Py_ssize_t n = r.n, end = _end(r.parent, r.n, top), inner_end = 0, b, strong = -1, count = 0
    cdef list outer = []
    for b in hinted:
        if top < b < end and b >= inner_end:
            outer.append(b)
            inner_end = _end(r.parent, n, b)
    for b in outer:
        if r.balance[b] >= HINT_SHARE * r.balance[top]:
            strong = b
            count += 1
    if count != 1:
        return top
    cdef double others = 0
    for b in outer:
        if b != strong:
            others += r.good[b]
    if others > HINT_SHARE * r.good[strong]:
        return top
    return strong


cdef list _hinted_parts(_Region r, list hinted, Py_ssize_t top):
    """noise._hinted_parts."""
    cdef Py_ssize_t n = r.n, b, at, lo, hi, k
    cdef int64_t up
    cdef array.array marked_a = _zeros(_I8, n)
    cdef signed char *marked = marked_a.data.as_schars
    for b in hinted:
        marked[b] = 1
    cdef list parts = []
    for b in hinted:
        up = r.parent[b]
        while up >= 0 and not marked[up]:
            up = r.parent[up]
        if up < 0 and (b == top or (r.good[b] >= GOOD_SIZE and r.balance[b] >= HINT_CLEAN * r.good[b])):
            parts.append(b)
    if len(parts) < 2 or top not in parts:
        return [top]
    k = len(parts)
    cdef array.array ends_a = _zeros(_I64, k)
    cdef int64_t *ends = ends_a.data.as_longlongs
    for at in range(k):
        ends[at] = _end(r.parent, n, parts[at])
    cdef array.array linked_a = _zeros(_I64, n + 1)
    cdef int64_t *linked = linked_a.data.as_longlongs
    cdef int c
    for b in range(n):
        c = r.cls[b]
        linked[b + 1] = linked[b] + (r.size[b] if c == BAD or c == TEASER else <int64_t>SHORT_SIZE + 1 if c == HEADING else 0)
    at = parts.index(top)
    lo = hi = at
    while lo > 0 and linked[<Py_ssize_t>parts[lo]] - linked[ends[lo - 1]] <= SHORT_SIZE:
        lo -= 1
    while hi + 1 < k and linked[<Py_ssize_t>parts[hi + 1]] - linked[ends[hi]] <= SHORT_SIZE:
        hi += 1
    return parts[lo : hi + 1]


cdef double _good_text(Py_ssize_t n, const int64_t *size, const signed char *cls, list inside):
    """noise._good_text."""
    cdef double total = 0
    cdef Py_ssize_t b
    cdef int c
    for b in range(n):
        c = cls[b]
        if (c == GOOD or c == NEAR) and inside[b]:
            total += <double>size[b] if c == GOOD else NEAR_WEIGHT * <double>size[b]
    return total


def main_region(Columns cols, list classes):
    """noise.main_region."""
    return _main_region(_Region(cols, _classes(classes, cols.n)))


def article_or_list(Columns cols, list classes):
    """noise._article_or_list."""
    cdef Py_ssize_t n = cols.n, b
    cdef array.array cls_a = _classes(classes, n)
    cdef signed char *cls = cls_a.data.as_schars
    cdef int64_t *sz = cols.size
    cdef array.array linked_a = _zeros(_I8, n)
    cdef signed char *linked = linked_a.data.as_schars
    cdef bint any_linked = False, any_teaser = False
    for b in range(n):
        if cls[b] == HEADING and cols.link[b] * 2 > cols.length[b]:
            linked[b] = 1
            any_linked = True
        if cls[b] == TEASER:
            any_teaser = True
    if not any_teaser and not any_linked:
        return classes, _main_region(_Region(cols, cls_a))
    cdef array.array art_a = array.copy(cls_a)
    cdef signed char *art = art_a.data.as_schars
    for b in range(n):
        if art[b] == TEASER or linked[b]:
            art[b] = BAD
    as_article = [art[b] for b in range(n)]
    inside_a = _main_region(_Region(cols, art_a))
    if _good_text(n, sz, art, inside_a) >= ARTICLE_SIZE:
        return as_article, inside_a
    cdef double teaser
    if any_teaser:
        inside_t = _main_region(_Region(cols, cls_a))
        teaser = 0
        for b in range(n):
            if cls[b] == TEASER and inside_t[b]:
                teaser += sz[b]
        if teaser > LIST_RATIO * _good_text(n, sz, cls, inside_t):
            return classes, inside_t
    if not any_linked:
        return as_article, inside_a
    cdef array.array none_a = array.copy(cls_a)
    cdef signed char *none = none_a.data.as_schars
    for b in range(n):
        if none[b] == TEASER:
            none[b] = BAD
    return [none[b] for b in range(n)], _main_region(_Region(cols, none_a))


cdef struct Card:
    int64_t parent
    uint64_t sig
    int64_t block


def card_grid(Columns cols, list classes, list inside):
    """noise._card_grid: the groups of sibling cards (parent, signature) are found by sorting
    (signature, parent, block); the largest valid group wins, the first in document order
    on a tie (the reference visits the groups in the order of their first card, and takes a
    group only when it is larger than the best so far)."""
    cdef Py_ssize_t n = cols.n, b, i, j, k, g, best_first = -1, best_lo = 0, best_hi = 0
    cdef array.array cls_a = _classes(classes, n), ins_a = _flags(inside, n)
    cdef int64_t *parent = cols.parent
    cdef int64_t *size = cols.size
    cdef int64_t *link = cols.link
    cdef int64_t *length = cols.length
    cdef signed char *cls = cls_a.data.as_schars
    cdef signed char *ins = ins_a.data.as_schars
    cdef double content = _good_text(n, size, cls, inside)
    cdef double need = (LIST_RATIO if content < ARTICLE_SIZE else 2 * LIST_RATIO) * content
    if need < GRID_SIZE:
        need = GRID_SIZE
    cdef double rest = 0
    cdef int64_t all_size = 0, held = 0
    for b in range(n):
        all_size += size[b]
        if ins[b] and (cls[b] == GOOD or cls[b] == NEAR):
            held += size[b]
    rest = <double>(all_size - held)
    if n < GRID_CARDS or rest < need:
        return []
    # Subtree sums (noise._subtree_sums): prefix sums over document order, a subtree a run.
    cdef array.array end_a = _zeros(_I64, n), sums_a = _zeros(_I64, 5 * (n + 1))
    cdef int64_t *end = end_a.data.as_longlongs
    cdef int64_t *tot = sums_a.data.as_longlongs
    cdef int64_t *s_size = tot
    cdef int64_t *s_link = tot + (n + 1)
    cdef int64_t *s_text = tot + 2 * (n + 1)
    cdef int64_t *s_hold = tot + 3 * (n + 1)
    cdef int64_t *s_teas = tot + 4 * (n + 1)
    for b in range(n):
        end[b] = b + 1
    for b in range(n - 1, 0, -1):
        if parent[b] >= 0 and end[b] > end[parent[b]]:
            end[parent[b]] = end[b]
    for b in range(n):
        s_size[b + 1] = s_size[b] + size[b]
        s_link[b + 1] = s_link[b] + (link[b] if link[b] < size[b] else size[b])
        s_text[b + 1] = s_text[b] + (1 if length[b] else 0)
        s_hold[b + 1] = s_hold[b] + (1 if ins[b] and (cls[b] == GOOD or cls[b] == NEAR) else 0)
        s_teas[b + 1] = s_teas[b] + (1 if ins[b] and cls[b] == TEASER else 0)
    cdef uint64_t *sig = cols.sig
    cdef array.array cards_a = _zeros(_I64, 3 * n)  # (Card is three 8-byte fields)
    cdef Card *cards = <Card *>cards_a.data.as_longlongs
    k = 0
    for b in range(1, n):
        if s_size[end[b]] - s_size[b] and not (s_hold[end[b]] - s_hold[b]):
            cards[k].parent, cards[k].sig, cards[k].block = parent[b], sig[b], b
            k += 1
    qsort(cards, k, sizeof(Card), _by_slot_list)
    cdef bint marked = cols.marked
    cdef array.array texts_a = _zeros(_I64, n)
    cdef int64_t *texts = texts_a.data.as_longlongs
    cdef int64_t total, best_size = 0, own, biggest, s, c
    cdef bint linked
    i = 0
    while i < k:
        j = i + 1
        while j < k and cards[j].parent == cards[i].parent and cards[j].sig == cards[i].sig:
            j += 1
        if j - i >= GRID_CARDS:
            total = own = biggest = 0
            linked = marked
            for g in range(i, j):
                c = cards[g].block
                s = s_size[end[c]] - s_size[c]
                total += s
                own += s_link[end[c]] - s_link[c]
                if s > biggest:
                    biggest = s
                if s_teas[end[c]] - s_teas[c]:
                    linked = True
                texts[g - i] = s_text[end[c]] - s_text[c]
            # The reference takes a group larger than the best so far, in the order of first cards.
            if total > best_size or (total == best_size and best_first >= 0 and cards[i].block < best_first):
                if not (linked and <double>(total - own) < GRID_OWN * <double>total) and not (<double>biggest > GRID_SHARE * <double>total):
                    qsort(texts, j - i, sizeof(int64_t), _by_key)
                    if texts[(j - i) // 2] >= GRID_BLOCKS:
                        best_size, best_first, best_lo, best_hi = total, cards[i].block, i, j
        i = j
    if best_first < 0 or <double>best_size < need:
        return []
    cdef list out = []
    for g in range(best_lo, best_hi):
        c = cards[g].block
        out.extend(range(c, _end(parent, n, c)))
    return out


cdef struct Slot:
    uint64_t sig
    int64_t flag


cdef set _slots(Slot *slots, Py_ssize_t k, Py_ssize_t least, bint all_flagged):
    """The signatures of at least ``least`` slots (all of them flagged, if asked)."""
    cdef set out = set()
    cdef Py_ssize_t i = 0, j
    cdef int64_t flagged
    qsort(slots, k, sizeof(Slot), _by_key)
    while i < k:
        j, flagged = i, 0
        while j < k and slots[j].sig == slots[i].sig:
            flagged += slots[j].flag
            j += 1
        if j - i >= least and (not all_flagged or flagged == j - i):
            out.add(slots[i].sig)
        i = j
    return out


def linked_parts(Columns cols, list classes, list inside):
    """noise._linked_parts."""
    cdef Py_ssize_t n = cols.n, b, k = 0
    cdef array.array cls_a = _classes(classes, n), ins_a = _flags(inside, n)
    cdef signed char *cls = cls_a.data.as_schars
    cdef bint teasers = False
    for b in range(n):
        if cls[b] == TEASER:
            teasers = True
            break
    if not teasers:
        return set()
    cdef array.array slots_a = _zeros(_I64, 2 * n)
    cdef Slot *slots = <Slot *>slots_a.data.as_longlongs
    for b in range(n):
        if ins_a.data.as_schars[b] and cols.length[b]:
            slots[k].sig, slots[k].flag = cols.sig[b], 1 if cls[b] == TEASER or cls[b] == BAD else 0
            k += 1
    return _slots(slots, k, GRID_CARDS, True)


def prose_slots(Columns cols, list classes, list inside):
    """noise._prose_slots."""
    cdef Py_ssize_t n = cols.n, b, k = 0
    cdef array.array cls_a = _classes(classes, n), ins_a = _flags(inside, n)
    cdef array.array slots_a = _zeros(_I64, 2 * n)
    cdef Slot *slots = <Slot *>slots_a.data.as_longlongs
    for b in range(n):
        if ins_a.data.as_schars[b] and cls_a.data.as_schars[b] == GOOD:
            slots[k].sig, slots[k].flag = cols.sig[b], 0
            k += 1
    return _slots(slots, k, PROSE_SLOT, False)


cdef int _by_slot_list(const void *a, const void *b) noexcept nogil:
    """Cards by (signature, parent, block): the lists of one slot, list by list (the card
    grid's groups and the index lists)."""
    cdef const Card *x = <const Card *>a
    cdef const Card *y = <const Card *>b
    if x.sig != y.sig:
        return -1 if x.sig < y.sig else 1
    if x.parent != y.parent:
        return -1 if x.parent < y.parent else 1
    return (x.block > y.block) - (x.block < y.block)


def index_lists(Columns cols, list classes, list inside):
    """noise._index_lists."""
    cdef Py_ssize_t n = cols.n, b, k = 0, i, j, e, sections, last
    cdef array.array cls_a = _classes(classes, n), ins_a = _flags(inside, n)
    cdef signed char *cls = cls_a.data.as_schars
    cdef array.array cards_a = _zeros(_I64, 3 * n)
    cdef Card *cards = <Card *>cards_a.data.as_longlongs
    for b in range(n):
        if ins_a.data.as_schars[b] and (cls[b] == BAD or cls[b] == TEASER) and cols.tag[b] == T_LI:
            cards[k].parent, cards[k].sig, cards[k].block = cols.parent[b], cols.sig[b], b
            k += 1
    cdef set out = set()
    if k == 0:
        return out
    cdef array.array before_a = _zeros(_I64, n)
    cdef int64_t *before = before_a.data.as_longlongs
    last = -1
    for b in range(n):
        if _heading(cols.tag[b]) and cols.length[b]:
            last = b
        before[b] = last
    qsort(cards, k, sizeof(Card), _by_slot_list)
    i = 0
    while i < k:  # one signature's lists
        e = i
        while e < k and cards[e].sig == cards[i].sig:
            e += 1
        sections = 0
        heads = set()
        j = i
        while j < e:  # one list (one parent)
            b = j
            while b < e and cards[b].parent == cards[j].parent:
                b += 1
            if b - j >= INDEX_ITEMS:
                sections += 1
                if before[cards[j].block] >= 0:
                    heads.add(before[cards[j].block])
            j = b
        if sections >= INDEX_SECTIONS and len(heads) >= INDEX_SECTIONS:
            j = i
            while j < e:
                b = j
                while b < e and cards[b].parent == cards[j].parent:
                    b += 1
                if b - j >= INDEX_ITEMS:
                    for g in range(j, b):
                        out.add(cards[g].block)
                j = b
        i = e
    return out


def drop_said_again(Columns cols, list keep):
    """noise._drop_said_again."""
    cdef Py_ssize_t n = len(keep), b
    if n > cols.n:
        raise ValueError("keep longer than the blocks")
    cdef array.array keys_a = _zeros(_U64, n)
    cdef uint64_t *keys = keys_a.data.as_ulonglongs
    cdef Py_ssize_t k = 0
    for b in range(n):
        if keep[b] and cols.size[b] >= REPEAT_SIZE:
            keys[k] = _text_key(cols.texts[b], cols.length[b]) if cols.length[b] else 0
            k += 1
    if _all_differ(keys, k):
        return  # no paragraph said twice (most pages): nothing to hash
    cdef set said = set()
    for b in range(n):
        if keep[b] and cols.size[b] >= REPEAT_SIZE:
            text = cols.texts[b]
            if text in said:
                keep[b] = False
            said.add(text)


cdef Py_ssize_t _bisect(const int64_t *a, Py_ssize_t k, int64_t x) noexcept nogil:
    """bisect_left over a sorted run of k values."""
    cdef Py_ssize_t lo = 0, hi = k, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def drop_repeats(Columns cols, list keep):
    """noise._drop_repeats."""
    cdef Py_ssize_t n = cols.n, b, k = 0, lo, hi, x
    if len(keep) != n:
        raise ValueError("keep of another length than the blocks")
    cdef list texts = cols.texts
    cdef array.array kept_a = _zeros(_I64, n)
    cdef int64_t *kept = kept_a.data.as_longlongs
    # Texts said twice have equal keys: without 2 x GOOD_SIZE of text in keys said twice, no
    # text is said twice either, or too little of it (most pages): nothing to hash.
    cdef array.array keys_a = _zeros(_I64, 2 * n)
    cdef Slot *keys = <Slot *>keys_a.data.as_longlongs
    cdef int64_t bound = 0
    for b in range(n):
        if keep[b] and cols.length[b]:
            keys[k].sig, keys[k].flag = _text_key(texts[b], cols.length[b]), cols.length[b]
            k += 1
    qsort(keys, k, sizeof(Slot), _by_key)
    for x in range(k):
        if (x > 0 and keys[x].sig == keys[x - 1].sig) or (x + 1 < k and keys[x].sig == keys[x + 1].sig):
            bound += keys[x].flag
    if bound < 2 * GOOD_SIZE:
        return
    k = 0
    cdef dict times = {}
    cdef Py_ssize_t twice = 0
    for b in range(n):
        if keep[b]:
            t = texts[b]
            if t:
                kept[k] = b
                k += 1
                c = times.get(t)
                if c is None:
                    times[t] = 1
                else:
                    times[t] = c + 1
                    twice += 1
    if twice == 0:
        return  # no kept text said twice (most pages)
    cdef double repeated = 0
    for t, c in times.items():
        if c > 1:
            repeated += len(t) * c
    if repeated < 2 * GOOD_SIZE:
        return
    cdef dict ids = {}
    for t in times:
        ids[t] = len(ids)
    cdef array.array said_a = _zeros(_I64, k), once_a = _zeros(_I64, k + 1), size_a = _zeros(_I64, k + 1)
    cdef int64_t *said = said_a.data.as_longlongs
    cdef int64_t *once = once_a.data.as_longlongs
    cdef int64_t *size = size_a.data.as_longlongs
    cdef int64_t *parent = cols.parent
    for x in range(k):
        t = texts[kept[x]]
        said[x] = ids[t]
        once[x + 1] = once[x] + (1 if times[t] == 1 else 0)
        size[x + 1] = size[x] + cols.size[kept[x]]
    cdef array.array end_a = _zeros(_I64, n)
    cdef int64_t *end = end_a.data.as_longlongs
    for b in range(n):
        end[b] = b + 1
    for b in range(n - 1, 0, -1):
        if parent[b] >= 0 and end[b] > end[parent[b]]:
            end[parent[b]] = end[b]
    cdef dict first = {}
    b = 0
    while b < n:
        lo, hi = _bisect(kept, k, b), _bisect(kept, k, end[b])
        if hi - lo >= 2 and once[hi] == once[lo] and size[hi] - size[lo] >= GOOD_SIZE:
            key = tuple([said[x] for x in range(lo, hi)])
            if first.get(key, n) <= b:
                for x in range(lo, hi):
                    keep[kept[x]] = False
                b = end[b]
                continue
            first.setdefault(key, end[b])
        b += 1


cdef inline bint _content(int c) noexcept nogil:
    return c == GOOD or c == NEAR


def region_keep(Columns cols, list classes, list teasers, list inside, set parts, set prose, set index):
    """noise._region_keep: the context of a text block (the class of the nearest text block
    before / after it that is not short) is read from two arrays indexed by block."""
    cdef Py_ssize_t n = cols.n, b
    cdef array.array cls_a = _classes(classes, n), teas_a = _classes(teasers, n), ins_a = _flags(inside, n)
    cdef signed char *cls = cls_a.data.as_schars
    cdef signed char *teas = teas_a.data.as_schars
    cdef signed char *ins = ins_a.data.as_schars
    cdef array.array before_a = _zeros(_I8, n), after_a = _zeros(_I8, n)
    cdef signed char *before = before_a.data.as_schars
    cdef signed char *after = after_a.data.as_schars
    cdef signed char last = BAD
    cdef int c
    for b in range(n):
        if cls[b] != EMPTY:
            before[b] = last
            if cls[b] != SHORT:
                last = cls[b]
    last = BAD
    for b in range(n - 1, -1, -1):
        if cls[b] != EMPTY:
            after[b] = last
            if cls[b] != SHORT:
                last = cls[b]
    cdef list sigs = cols.sigs
    cdef list keep = [False] * n
    for b in range(n):
        c = cls[b]
        if c == EMPTY or not ins[b]:
            continue
        if c == GOOD or c == NEAR or c == HEADING or c == TEASER:
            keep[b] = True
        elif c == SHORT:
            keep[b] = _content(before[b]) or _content(after[b])
        elif _heading(cols.tag[b]):
            keep[b] = _content(after[b])
        elif teas[b] == TEASER and sigs[b] in parts:
            keep[b] = _content(before[b]) and _content(after[b])
        elif (c == BAD and cols.tag[b] != T_LI and cols.tag[b] != T_ITEM and sigs[b] in prose and cols.size[b] >= GOOD_SIZE
              and <double>cols.link[b] <= BAD_LINK_DENSITY * <double>cols.length[b]):
            keep[b] = True
        elif b in index:
            keep[b] = True
    return keep


def keep_title(Columns cols, list classes, list inside, list keep):
    """noise._keep_title."""
    cdef Py_ssize_t n = cols.n, b, first = -1, seen = 0, head = -1, x
    cdef array.array cls_a = _classes(classes, n), ins_a = _flags(inside, n)
    cdef signed char *cls = cls_a.data.as_schars
    if len(keep) != n:
        raise ValueError("keep of another length than the blocks")
    for b in range(n):
        if cls[b] != EMPTY and ins_a.data.as_schars[b]:
            first = b
            break
    if first < 0:
        return
    b = first - 1
    while b >= 0 and seen < 6:  # the six text blocks before the region's first, nearest first
        if cls[b] != EMPTY:
            seen += 1
            if cls[b] == HEADING and (cols.tag[b] == T_H1 or cols.tag[b] == T_H2):
                head = b
                break
        b -= 1
    if head < 0:
        return
    keep[head] = True
    cdef int64_t *parent = cols.parent
    cdef int64_t up
    for b in range(head + 1, first):  # noise._keep_lead: good text inside an <object>
        if cls[b] == GOOD:
            up = parent[b]
            while up >= 0:
                if cols.tag[up] == T_OBJECT:
                    keep[b] = True
                    break
                up = parent[up]


cdef bint _has_ideograph(str text):
    """Whether a text holds a CJK unified ideograph (U+4E00-U+9FFF): the first character of
    every word of noise's legal lines and datelines is one (tests/html/test_page_native.py
    checks its expressions), so a text without one is neither."""
    cdef unsigned int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = len(text)
    cdef Py_UCS4 c
    if kind == 1:  # (Latin-1 only)
        return False
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if 0x4E00 <= c <= 0x9FFF:
            return True
    return False


def drop_datelines(Columns cols, list keep, patterns):
    """noise._drop_datelines (``patterns``: its four expressions, licence, legal line, date and
    dateline word), each searched only where it may match: the licence where "ICP" is, the others
    in a text with an ideograph (_has_ideograph; a page in a European language has many
    non-ASCII texts, a regex search each took 24 us a page on corpus-10000-shared)."""
    licence, legal, date, dateline = patterns
    cdef Py_ssize_t n = len(keep), b
    if n > cols.n:
        raise ValueError("keep longer than the blocks")
    cdef int64_t size
    cdef str t
    for b in range(n):
        if not keep[b]:
            continue
        size = cols.size[b]
        if size >= LONG_SIZE:
            continue
        t = cols.texts[b]
        if PyUnicode_IS_ASCII(t):
            continue
        if ("ICP" in t and licence.search(t)) or (
                size < DATELINE_SIZE and _has_ideograph(t) and (legal.search(t) or (date.search(t) and dateline.search(t)))):
            keep[b] = False


def captions_apply(Columns cols):
    """Whether noise._drop_captions has anything to do on the page (it returns at once
    otherwise): a <figcaption> or a named caption, and no <pre>."""
    return cols.captions


cdef Py_ssize_t _root(list inside):
    """noise._region_root."""
    cdef Py_ssize_t b
    for b in range(len(inside)):
        if inside[b]:
            return b
    return -1


def titled_article(Columns cols, list inside):
    """noise._titled_article."""
    cdef Py_ssize_t n = cols.n, root = _root(inside), end, b, h1 = -1, count = 0, arts = 0
    cdef int64_t up
    if root < 0:
        return inside
    if len(inside) != n:
        raise ValueError("a region of another length than the blocks")
    end = _end(cols.parent, n, root)
    for b in range(root, end):
        if cols.tag[b] == T_H1 and cols.length[b]:
            h1 = b
            count += 1
    if count != 1:
        return inside
    for b in range(root + 1, end):
        arts += cols.tag[b] == T_ARTICLE
    if arts < 2:
        return inside
    up = h1
    while up > root and cols.tag[up] != T_ARTICLE:
        up = cols.parent[up]
    if up <= root:
        return inside
    cdef bint sibling = False
    for b in range(root + 1, end):
        if cols.tag[b] == T_ARTICLE and b != up and cols.parent[b] == cols.parent[up]:
            sibling = True
            break
    if not sibling:
        return inside
    cdef list out = [False] * n
    for b in range(up, _end(cols.parent, n, up)):
        out[b] = True
    return out


def whole_main(Columns cols, list classes, list inside):
    """noise._whole_main."""
    cdef Py_ssize_t n = cols.n, top = _root(inside), b, end
    cdef int64_t m = top, up
    if len(inside) != n:
        raise ValueError("a region of another length than the blocks")
    while m >= 0 and cols.tag[m] != T_MAIN:
        m = cols.parent[m]
    if m < 0 or m == top:
        return inside
    for b in range(n):
        if inside[b] and (cols.hint[b] or cols.tag[b] == T_ARTICLE):
            return inside
    up = cols.parent[top]
    while up > m and cols.tag[up] != T_ARTICLE:
        up = cols.parent[up]
    if up != m:
        return inside
    cdef array.array cls_a = _classes(classes, n)
    cdef signed char *cls = cls_a.data.as_schars
    cdef double good = 0, bad = 0
    end = _end(cols.parent, n, m)
    for b in range(m, end):
        if cls[b] == GOOD:
            good += <double>cols.size[b]
        elif cls[b] == NEAR:
            good += NEAR_WEIGHT * <double>cols.size[b]
        elif cls[b] == BAD or cls[b] == TEASER:
            bad += <double>cols.size[b]
    if good < MAIN_GAIN * _good_text(n, cols.size, cls, inside) or bad > MAIN_BAD * good:
        return inside
    cdef list out = list(inside)
    for b in range(m, end):
        out[b] = True
    return out
