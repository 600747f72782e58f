# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Native kernels of the text path (Cython); pure-Python references in tokenize.py, analyze.py
and lang.py give the same output (tests/text/test_fast.py checks it, property by property).

* ``analyze_words``: the word scan of ``tokenize._TOKEN`` over a whole text, each word's normal
  form and stop flag looked up in the language's cache (computed by Python on a miss), the four
  output lists filled in one loop: no Segment record and no Python call per known word.
  Character classes come from a table built with the ``regex`` module's own Unicode properties
  (``tokenize.char_classes``), so the scan classifies every code point as the regex does.
* ``WordTable``: the word cache of ``analyze_words`` for the words its scan finds, looked up
  by their characters in the text (in front of the language's dict, holding what it holds).
* ``DfaCounter``: py3langid's byte DFA walk (``visit_counts``) over its own model, giving the
  same feature counts in the same order, so the same scores.
* ``keyword_counts``: the counts of a page's keyword candidates (``keywords.top_keywords``),
  counted by token object in C, merged by equality once a distinct object.
* ``top_weights``: a page's n highest keyword weights (density or tf-idf) picked from its
  counts in one pass (``keywords.top_keywords``), the weights computed as Python computes them.
* ``compat_substitute``: a text's characters that NFKC changes alone (fullwidth punctuation,
  the ellipsis, no-break spaces) replaced by their NFKC, which leaves the text's NFKC as it was
  and lets unicodedata's quick check pass it (``normalize._folded``).
* ``collapse_utf8``: ``" ".join(text.split()).encode("utf-8")`` (ASCII letters lowered on
  request) in one pass, no list of words made (``normalize.text_digest``).
* ``gather_rows``: the rows of py3langid's float16 table for a page's features, as float32
  (exact: by bit arithmetic for normal halves, else by a table of the 65,536 half-precision
  values): the matrix numpy would cast before the same product, made without numpy's
  per-element half conversion.
* ``sum_rows`` and ``settled_class``: the same rows' weighted sums in double, and the language
  class they settle when a bound proves py3langid's float32 product would pick it
  (``lang._Scorer.settled``; ``settled_reference`` its numpy form).
* ``flagged_counts``: ``keyword_counts`` of tokens whose keyword flags the word scan gave.
* ``fold_collapse_utf8``: ``collapse_utf8`` of a text folded by ``normalize.fold_table``.
"""

import numpy as np

from cpython.object cimport PyObject
from cpython.list cimport PyList_GET_ITEM
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.math cimport INFINITY, fabs, log
from libc.string cimport memcmp, memcpy, memset

cdef extern from "stdlib.h":
    int posix_memalign(void** memptr, size_t alignment, size_t size)

cdef extern from "Python.h":
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index)
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)  # the test str.split() splits at
    int PyUnicode_Compare(object a, object b) except? -1
    bytes PyBytes_FromStringAndSize(const char* v, Py_ssize_t n)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    dict _PyDict_NewPresized(Py_ssize_t minused)
    double PyLong_AsDouble(object o) except? -1.0
    PyObject* PyDict_SetDefault(object d, object key, object default) except NULL  # borrowed

# Character class bits (tokenize.char_classes builds the table with these values).
cdef enum:
    WORD = 1  # [\p{L}\p{M}\p{N}] minus Han, kana and the South-East Asian scripts
    DIGIT = 2  # \p{Nd}
    CJK = 4  # Han, kana and the marks used inside Japanese words
    SEA = 8  # Thai, Lao, Khmer, Myanmar
    KANA = 16  # Hiragana, Katakana

# The language identifier's DFA walk: at most this many pieces at once, each this long at least.
cdef enum:
    MAX_LANES = 8
    MIN_PIECE = 256

# float32's and float64's unit roundoff (settled_class's bound; lang._U32 and _U64)
cdef double _U32 = 2.0 ** -24
cdef double _U64 = 2.0 ** -53

# gather_rows asks for the rows this far ahead of the one it converts.
cdef enum:
    PREFETCH_ROWS = 8

# The word scan asks for a word's table slot this many words ahead, and for its token's
# object this many (the slot has then arrived and says which token).
cdef enum:
    SLOT_AHEAD = 16
    TOKEN_AHEAD = 6

cdef extern from *:
    """
    /* Ask for the cache line at p (a hint: no fault, whatever p is). */
    static inline void pt_prefetch_line(const void* p) {
    #if defined(__GNUC__)
        __builtin_prefetch(p);
    #endif
    }
    """
    void pt_prefetch_line(const void* p) noexcept nogil

# Span kinds handed to the segmenters of runs.
cdef enum:
    K_WORD = 0
    K_CJK = 1
    K_SEA = 2


cdef inline unsigned char _cls(const unsigned char* tab, int kind, void* data, Py_ssize_t i):
    return tab[PyUnicode_READ(kind, data, i)]


cdef Py_ssize_t _run(const unsigned char* tab, int kind, void* data, Py_ssize_t i, Py_ssize_t n, unsigned char bit):
    while i < n and _cls(tab, kind, data, i) & bit:
        i += 1
    return i


cdef Py_ssize_t _number_end(const unsigned char* tab, int kind, void* data, Py_ssize_t i, Py_ssize_t n):
    """End of ``\\p{Nd}+(?:[.,]\\p{Nd}+)+(?!WORD)`` matched at i, or -1, found in the regex's
    backtracking order: the groups are taken greedily; while a word character follows, the last
    group gives back digits (a digit that is not a word character, Thai say, may then follow),
    and at last the whole group (its separator then follows, not a word character)."""
    cdef Py_ssize_t j = _run(tab, kind, data, i, n, DIGIT)
    cdef Py_ssize_t before_last = -1, last_start = -1, p
    cdef int groups = 0
    cdef Py_UCS4 c
    while j + 1 < n:
        c = PyUnicode_READ(kind, data, j)
        if (c != 0x2E and c != 0x2C) or not (_cls(tab, kind, data, j + 1) & DIGIT):
            break
        before_last = j
        last_start = j + 1
        j = _run(tab, kind, data, j + 1, n, DIGIT)
        groups += 1
    if groups == 0:
        return -1
    if j >= n:
        return j
    p = j
    while p > last_start:
        if not (_cls(tab, kind, data, p) & WORD):
            return p
        p -= 1
    return before_last if groups >= 2 else -1


cdef Py_ssize_t _word_end(const unsigned char* tab, int kind, void* data, Py_ssize_t i, Py_ssize_t n):
    """End of ``WORD+(?:['\u2019-]WORD+)*`` matched at i."""
    cdef Py_ssize_t j = _run(tab, kind, data, i, n, WORD)
    cdef Py_UCS4 c
    while j + 1 < n:
        c = PyUnicode_READ(kind, data, j)
        if (c != 0x27 and c != 0x2019 and c != 0x2D) or not (_cls(tab, kind, data, j + 1) & WORD):
            break
        j = _run(tab, kind, data, j + 1, n, WORD)
    return j


cdef inline int _append(object token, object surface, Py_ssize_t start, object stop,
                        list tokens, list surfaces, list starts, list stops) except -1:
    """Append one word to the outputs (its surface and start only when ``surfaces`` is a list)."""
    if token:
        tokens.append(token)
        if surfaces is not None:
            surfaces.append(surface)
            starts.append(start)
        stops.append(stop)
    return 0


cdef int _emit(str surface, object norm, Py_ssize_t start, dict cache, object compute,
               list tokens, list surfaces, list starts, list stops) except -1:
    """Append one word's normal form and stop flag (cached by surface, or (surface, norm))."""
    key = surface if norm is None else (surface, norm)
    hit = cache.get(key)
    if hit is None:
        hit = compute(surface, norm)  # also stores it in the cache
    return _append((<tuple>hit)[0], surface, start, (<tuple>hit)[1], tokens, surfaces, starts, stops)


cdef enum:
    KEYWORD_UNKNOWN = 0
    NOT_KEYWORD = 1
    KEYWORD = 2

cdef enum:
    KEY_BYTES = 28  # a word's characters held in its slot, at most (WordSlot: 64 bytes, one cache line)
    SLOT_ALIGN = 64


cdef struct WordSlot:
    PyObject* surface  # NULL: an empty slot
    PyObject* token
    uint64_t token_hash  # token_hash(token), when hashed
    uint32_t hash  # the low bits of _span_hash
    uint32_t length  # the surface's code points
    uint8_t stop  # 1 when the word is a stop word
    uint8_t hashed  # token_hash holds the token's hash
    uint8_t keyword  # KEYWORD_UNKNOWN, NOT_KEYWORD or KEYWORD (no stop word, and is_candidate)
    uint8_t key_kind  # the surface's characters are in key, of this width (1, 2, 4); 0: too long
    uint8_t key[KEY_BYTES]


cdef inline uint64_t _span_hash(int kind, void* data, Py_ssize_t i, Py_ssize_t j) noexcept:
    """FNV-1a over the code points of data[i:j] (the same for a word in any string kind)."""
    cdef uint64_t h = 0xCBF29CE484222325ULL
    cdef Py_ssize_t k
    for k in range(i, j):
        h = (h ^ <uint32_t>PyUnicode_READ(kind, data, k)) * 0x100000001B3ULL
    return h ^ (h >> 29)


cdef inline bint _same_chars(int wkind, const void* wdata, int kind, void* data, Py_ssize_t i, Py_ssize_t n) noexcept:
    """The n code points at wdata (of width wkind) are those of data[i:i + n] (width kind)."""
    cdef Py_ssize_t k
    if wkind == kind:
        return memcmp(wdata, <char*>data + i * kind, n * kind) == 0
    for k in range(n):
        if <uint32_t>PyUnicode_READ(wkind, <void*>wdata, k) != <uint32_t>PyUnicode_READ(kind, data, i + k):
            return False
    return True


cdef inline bint _same_span(WordSlot* slot, int kind, void* data, Py_ssize_t i, Py_ssize_t j):
    """The slot's word is data[i:j]: compared with the characters in the slot when they are
    there (no read of the string object, which is mostly not cached), else with the string."""
    cdef Py_ssize_t n = j - i
    if slot.length != n:
        return False
    if slot.key_kind:
        return _same_chars(slot.key_kind, slot.key, kind, data, i, n)
    word = <object>slot.surface
    return _same_chars(PyUnicode_KIND(word), PyUnicode_DATA(word), kind, data, i, n)


cdef class WordTable:
    """The word cache of ``analyze_words`` for words found in the text (not those a segmenter
    gives), looked up by the words' characters where they stand in the text: a known word
    costs no new string, no SipHash and no walk through the dict's entries, key and value
    tuple (most of a word's time was the cache misses of that walk). Each slot (one cache
    line) holds the surface, normal form and stop flag the language's dict holds for the word
    (its ``compute`` is a function of the surface, so both give the same), the surface's
    characters when they fit (the comparison then reads no string object) and the normal
    form's ``token_hash`` once asked for; at most ``limit`` words, then it starts again, as the
    dict does."""

    cdef WordSlot* slots
    cdef Py_ssize_t mask  # capacity - 1 (a power of two)
    cdef Py_ssize_t count
    cdef readonly Py_ssize_t limit

    def __cinit__(self, Py_ssize_t limit):
        self.limit = max(limit, 1)
        self.count = 0
        self.mask = 1023
        self.slots = _new_slots(self.mask + 1)

    def __dealloc__(self):
        if self.slots != NULL:
            self._release()
            free(self.slots)

    def __len__(self):
        return self.count

    cdef void _release(self):
        cdef Py_ssize_t k
        for k in range(self.mask + 1):
            if self.slots[k].surface != NULL:
                Py_DECREF(<object>self.slots[k].surface)
                Py_DECREF(<object>self.slots[k].token)
                self.slots[k].surface = NULL
        self.count = 0

    def clear(self):
        self._release()

    cdef WordSlot* _find(self, uint64_t h, int kind, void* data, Py_ssize_t i, Py_ssize_t j):
        """The slot of data[i:j], or the empty slot where it would go."""
        cdef Py_ssize_t k = <Py_ssize_t>(h & <uint64_t>self.mask)
        cdef uint32_t h32 = <uint32_t>h
        cdef WordSlot* slot
        while True:
            slot = &self.slots[k]
            if slot.surface == NULL or (slot.hash == h32 and _same_span(slot, kind, data, i, j)):
                return slot
            k = (k + 1) & self.mask

    cdef int _grow(self) except -1:
        cdef Py_ssize_t old_mask = self.mask, k, m
        cdef WordSlot* old = self.slots
        cdef WordSlot* new = _new_slots(2 * (old_mask + 1))
        self.slots = new
        self.mask = 2 * (old_mask + 1) - 1
        for k in range(old_mask + 1):
            if old[k].surface != NULL:
                # the low 32 bits of the hash place the word (capacity stays below 2**32)
                m = <Py_ssize_t>(old[k].hash & <uint32_t>self.mask)
                while new[m].surface != NULL:
                    m = (m + 1) & self.mask
                new[m] = old[k]
        free(old)
        return 0

    cdef WordSlot* _put(self, uint64_t h, str surface, object token, object stop, int kind, void* data,
                        Py_ssize_t i, Py_ssize_t j) except? NULL:
        """The slot the word now has; NULL when it is kept in the dict only."""
        cdef WordSlot* slot
        cdef Py_ssize_t n = j - i
        cdef int skind
        if stop is not True and stop is not False:
            return NULL  # kept in the dict only
        if PyUnicode_GET_LENGTH(token) == 0:
            return NULL  # no token (rare): kept in the dict only, so a slot's token is never empty
        if n > 0xFFFFFFFF:
            return NULL
        if self.count >= self.limit:
            self._release()
        if 4 * (self.count + 1) > 3 * (self.mask + 1) and self.mask < 0x7FFFFFFF:
            self._grow()
        slot = self._find(h, kind, data, i, j)
        if slot.surface != NULL:
            return slot
        Py_INCREF(surface)
        Py_INCREF(token)
        slot.surface = <PyObject*>surface
        slot.token = <PyObject*>token
        slot.hash = <uint32_t>h
        slot.length = <uint32_t>n
        slot.stop = 1 if stop is True else 0
        slot.hashed = 0
        slot.keyword = KEYWORD_UNKNOWN
        skind = PyUnicode_KIND(surface)
        if n * skind <= KEY_BYTES:
            memcpy(slot.key, PyUnicode_DATA(surface), n * skind)
            slot.key_kind = <uint8_t>skind
        else:
            slot.key_kind = 0
        self.count += 1
        return slot


cdef WordSlot* _new_slots(Py_ssize_t capacity) except NULL:
    """``capacity`` empty slots, each on a cache line of its own."""
    cdef void* memory = NULL
    if posix_memalign(&memory, SLOT_ALIGN, capacity * sizeof(WordSlot)) != 0:
        raise MemoryError()
    memset(memory, 0, capacity * sizeof(WordSlot))
    return <WordSlot*>memory


cdef void* _resized(void* items, size_t size) except NULL:
    """``realloc(items, size)``, or MemoryError with ``items`` left as it was (its owner frees it)."""
    cdef void* grown = realloc(items, size)
    if grown == NULL:
        raise MemoryError()
    return grown


cdef struct TokenFacts:
    # Each token's hash and keyword flag, for the tokens appended so far, while every token has
    # come from the table (``valid``).
    uint64_t* hashes
    uint8_t* keywords
    Py_ssize_t n
    Py_ssize_t capacity
    bint valid


cdef int _push_facts(TokenFacts* out, uint64_t token_hash, uint8_t keyword) except -1:
    if out.n == out.capacity:
        out.capacity = max(256, 2 * out.capacity)
        out.hashes = <uint64_t*>_resized(out.hashes, out.capacity * sizeof(uint64_t))
        out.keywords = <uint8_t*>_resized(out.keywords, out.capacity)
    out.hashes[out.n] = token_hash
    out.keywords[out.n] = keyword
    out.n += 1
    return 0


cdef int _emit_word(WordTable table, str text, int kind, void* data, Py_ssize_t i, Py_ssize_t j,
                    uint64_t h, dict cache, object compute, list tokens, list surfaces, list starts, list stops,
                    object token_hash, object is_candidate, TokenFacts* facts) except -1:
    """``_emit(text[i:j], None, i, ...)``, the word looked up in ``table`` first; the token's
    hash (``token_hash``) and keyword flag (not a stop word, and ``is_candidate``), each kept
    in its slot once asked for, pushed to ``facts`` while it is valid; ``h``: the span's
    ``_span_hash``."""
    cdef WordSlot* slot = table._find(h, kind, data, i, j)
    if slot.surface == NULL:
        surface = text[i:j]
        hit = cache.get(surface)
        if hit is None:
            hit = compute(surface, None)  # also stores it in the cache
        token = (<tuple>hit)[0]
        stop = (<tuple>hit)[1]
        if len(cache) < table.count:  # the dict started again: so does the table
            table._release()
        slot = table._put(h, surface, token, stop, kind, data, i, j) if type(token) is str else NULL
        if slot == NULL:  # not kept in the table: as _emit does
            if token and facts.valid:
                facts.valid = False
            return _append(token, surface, i, stop, tokens, surfaces, starts, stops)
    # The slot's string objects are touched only when asked for: the token (appended; never
    # empty in a slot, so not read first), the surface only with the words as written (mostly
    # not cached, they cost a miss each).
    tokens.append(<object>slot.token)
    if surfaces is not None:
        surfaces.append(<object>slot.surface)
        starts.append(i)
    stops.append(True if slot.stop else False)
    if facts.valid:
        if token_hash is not None and not slot.hashed:
            slot.token_hash = token_hash(<object>slot.token)
            slot.hashed = 1
        if is_candidate is not None and slot.keyword == KEYWORD_UNKNOWN:
            slot.keyword = KEYWORD if not slot.stop and is_candidate(<object>slot.token) else NOT_KEYWORD
        _push_facts(facts, slot.token_hash, slot.keyword == KEYWORD)
    return 0


def analyze_words(str text, const unsigned char[::1] table, bint bigram_kana, bint bigram_all,
                  dict cache, object compute, object han, object sea, object bigrams,
                  object tokens, list surfaces, list starts, list stops, WordTable words=None,
                  object token_hash=None, object is_candidate=None, dict han_cuts=None, Py_ssize_t han_cut_limit=0):
    """Fill tokens, surfaces, starts and stops with the words of ``text`` (analyze._Language.words);
    with ``surfaces`` and ``starts`` None, only tokens and stops (what the fingerprints read).

    ``cache`` maps a surface (or (surface, norm)) to (token, is_stop); ``compute(surface, norm)``
    gives and caches a missing one. Han/kana runs go to ``bigrams(run, offset)`` when
    ``bigram_all`` (Japanese without its dictionary) or, with ``bigram_kana``, when the run has
    kana; else to ``han(run)``, which gives the run's words as strings, end to end.
    Thai/Lao/Khmer/Myanmar runs go to ``sea(run, offset)``. With ``words`` (the language's
    WordTable in front of ``cache``), a word of the text's own scan is looked up there first,
    and so is a word of ``han``'s when its words are the run's characters end to end.
    ``han_cuts``: a memo of ``han``'s cuts (run -> the words' lengths, or the words when they
    are not the run's characters end to end), at most ``han_cut_limit`` runs, then it starts
    again; ``han`` is a function of the run, so the memo changes no output (most runs of a
    page recur on other pages: menus, headings).

    Returns (hashes, keywords), with ``words``: the uint64 array of ``token_hash`` of every
    token appended (with ``token_hash``, a function of a token), and the bytes of their keyword
    flags, 1 for a token that is no stop word and ``is_candidate`` (with ``is_candidate``);
    each word's hash and flag kept in its slot (asked once a word, not once a page). Each is
    None when not asked for, or when a token came from elsewhere than the table (a
    segmenter's word, a word the table does not keep).
    """
    cdef TokenFacts facts
    if not isinstance(tokens, list):  # a list, or text.analyze.TokenList
        raise TypeError(f"tokens must be a list, not {type(tokens).__name__}")
    facts.hashes = NULL
    facts.keywords = NULL
    facts.n = 0
    facts.capacity = 0
    facts.valid = words is not None and (token_hash is not None or is_candidate is not None)
    try:
        _scan(text, table, bigram_kana, bigram_all, cache, compute, han, sea, bigrams,
              <list>tokens, surfaces, starts, stops, words, token_hash, is_candidate, han_cuts, han_cut_limit, &facts)
        if not facts.valid or facts.n != len(tokens):
            return None, None
        hashes = None
        if token_hash is not None:
            hashes = np.empty(facts.n, dtype=np.uint64)
            if facts.n:
                memcpy(<void*><size_t>hashes.ctypes.data, facts.hashes, facts.n * sizeof(uint64_t))
        keywords = PyBytes_FromStringAndSize(<char*>facts.keywords, facts.n) if is_candidate is not None else None
        return hashes, keywords
    finally:
        free(facts.hashes)
        free(facts.keywords)


cdef int _emit_han(str run, str text, int kind, void* data, Py_ssize_t i, dict cache, object compute,
                   object han, dict han_cuts, Py_ssize_t han_cut_limit, list tokens, list surfaces,
                   list starts, list stops, WordTable words, object token_hash, object is_candidate,
                   TokenFacts* facts) except -1:
    """Emit the words ``han`` cuts the Han run ``run`` (at ``i`` in the text) into, end to end;
    each a span of the text when they are its characters (looked up in ``words`` like the
    scan's own words), else as the strings ``han`` gave (tokenize.han_words in the reference)."""
    cdef Py_ssize_t k = i, length
    cut = han_cuts.get(run) if han_cuts is not None else None
    if cut is None:
        pieces = han(run)
        cut = tuple([len(<str>word) for word in pieces]) if "".join(pieces) == run else pieces
        if han_cuts is not None:
            if len(han_cuts) >= han_cut_limit:
                han_cuts.clear()
            han_cuts[run] = cut
    if type(cut) is tuple:
        for piece in <tuple>cut:
            length = <Py_ssize_t>piece
            if words is not None:
                _emit_word(words, text, kind, data, k, k + length, _span_hash(kind, data, k, k + length), cache,
                           compute, tokens, surfaces, starts, stops, token_hash, is_candidate, facts)
            else:
                _emit(text[k:k + length], None, k, cache, compute, tokens, surfaces, starts, stops)
            k += length
        return 0
    facts.valid = False  # words not from the table
    for word in cut:
        _emit(word, None, k, cache, compute, tokens, surfaces, starts, stops)
        k += len(<str>word)
    return 0


cdef struct Span:
    Py_ssize_t start
    Py_ssize_t end
    uint64_t hash  # _span_hash of a word's characters (K_WORD with a WordTable), else 0
    int kind  # K_WORD, K_CJK or K_SEA


cdef struct Spans:
    Span* items
    Py_ssize_t n
    Py_ssize_t capacity


cdef int _push_span(Spans* out, Py_ssize_t start, Py_ssize_t end, uint64_t h, int kind) except -1:
    if out.n == out.capacity:
        out.capacity = max(256, 2 * out.capacity)
        out.items = <Span*>_resized(out.items, out.capacity * sizeof(Span))
    out.items[out.n].start = start
    out.items[out.n].end = end
    out.items[out.n].hash = h
    out.items[out.n].kind = kind
    out.n += 1
    return 0


cdef int _find_spans(const unsigned char* tab, int kind, void* data, Py_ssize_t n, bint hashed, Spans* out) except -1:
    """The spans of ``_TOKEN``'s matches in the text, in order: words (hashed for the word
    table when ``hashed``), Han/kana runs and South-East Asian runs."""
    cdef Py_ssize_t i = 0, j
    cdef unsigned char f
    cdef int span
    while i < n:
        f = _cls(tab, kind, data, i)
        j = -1
        if f & CJK:
            j = _run(tab, kind, data, i, n, CJK)
            span = K_CJK
        elif f & SEA:
            j = _run(tab, kind, data, i, n, SEA)
            span = K_SEA
        else:
            if f & DIGIT:
                j = _number_end(tab, kind, data, i, n)
            if j < 0 and f & WORD:
                j = _word_end(tab, kind, data, i, n)
            span = K_WORD
        if j < 0:
            i += 1
            continue
        _push_span(out, i, j, _span_hash(kind, data, i, j) if hashed and span == K_WORD else 0, span)
        i = j
    return 0


cdef inline void _prefetch_word(WordTable words, Span* span, bint token_too) noexcept:
    """Ask for the cache line of a word's home slot, and (``token_too``, for a word nearer, whose
    slot has had time to arrive) for its token's object when the home slot holds the word's
    hash: the two misses of a known word (_emit_word), taken some words ahead so that they
    overlap. Hints only: the table may change before the word is reached."""
    cdef WordSlot* slot = &words.slots[<Py_ssize_t>(span.hash & <uint64_t>words.mask)]
    if not token_too:
        pt_prefetch_line(slot)
    elif slot.surface != NULL and slot.hash == <uint32_t>span.hash:
        pt_prefetch_line(slot.token)


cdef int _scan(str text, const unsigned char[::1] table, bint bigram_kana, bint bigram_all,
               dict cache, object compute, object han, object sea, object bigrams,
               list tokens, list surfaces, list starts, list stops, WordTable words,
               object token_hash, object is_candidate, dict han_cuts, Py_ssize_t han_cut_limit,
               TokenFacts* facts) except -1:
    """``analyze_words``' loop: the spans found first (a pass over the characters), then each
    emitted in order, the word table's lines asked for ``SLOT_AHEAD`` words ahead and the
    tokens' objects ``TOKEN_AHEAD`` ahead (each known word otherwise waits on both misses)."""
    cdef const unsigned char* tab = &table[0]
    cdef Py_ssize_t n = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, j, k, s
    cdef bint kana
    cdef Spans spans
    cdef Span* span
    if table.shape[0] < 0x110000:
        raise ValueError("character class table must cover every code point")
    spans.items = NULL
    spans.n = 0
    spans.capacity = 0
    try:
        _find_spans(tab, kind, data, n, words is not None, &spans)
        if words is not None:
            for s in range(min(spans.n, SLOT_AHEAD)):
                if spans.items[s].kind == K_WORD:
                    _prefetch_word(words, &spans.items[s], False)
        for s in range(spans.n):
            span = &spans.items[s]
            i = span.start
            j = span.end
            if span.kind == K_WORD:
                if words is not None:
                    if s + SLOT_AHEAD < spans.n and spans.items[s + SLOT_AHEAD].kind == K_WORD:
                        _prefetch_word(words, &spans.items[s + SLOT_AHEAD], False)
                    if s + TOKEN_AHEAD < spans.n and spans.items[s + TOKEN_AHEAD].kind == K_WORD:
                        _prefetch_word(words, &spans.items[s + TOKEN_AHEAD], True)
                    _emit_word(words, text, kind, data, i, j, span.hash, cache, compute, tokens, surfaces, starts,
                               stops, token_hash, is_candidate, facts)
                else:
                    _emit(text[i:j], None, i, cache, compute, tokens, surfaces, starts, stops)
                continue
            run = text[i:j]
            if span.kind == K_SEA:
                pieces = sea(run, i)
            else:
                kana = False
                if bigram_kana and not bigram_all:
                    for k in range(i, j):
                        if _cls(tab, kind, data, k) & KANA:
                            kana = True
                            break
                if not (bigram_all or kana):
                    _emit_han(run, text, kind, data, i, cache, compute, han, han_cuts, han_cut_limit,
                              tokens, surfaces, starts, stops, words, token_hash, is_candidate, facts)
                    continue
                pieces = bigrams(run, i)
            facts.valid = False  # a segmenter's words are not in the table
            for piece in pieces:
                _emit(piece[0], piece[2], piece[1], cache, compute, tokens, surfaces, starts, stops)
    finally:
        free(spans.items)
    return 0


cdef struct TokenCount:
    PyObject* token  # borrowed from the caller's list
    Py_ssize_t count


def keyword_counts(object token_list, list stop, object is_candidate, dict known):
    """{token: count} of the tokens whose stop flag is false and ``is_candidate(token)`` true,
    in order of first sight (``keywords.keyword_counts_reference``). The tokens are counted by
    object (a pointer hash in C: the word scan hands out the same token object for each sight
    of a known word, so a page of ~770 tokens has ~200 objects), then the objects, in order of
    first sight, are merged into the dict by equality: one dict lookup a distinct object, not a
    token, and a token's first object is its first sight. ``known`` holds is_candidate's
    answers (asked once a token, then kept there: the caller's memo, from page to page).
    ``token_list``: a list (or a subclass, analyze.TokenList)."""
    if not isinstance(token_list, list):
        raise TypeError(f"tokens must be a list, not {type(token_list).__name__}")
    if len(stop) != len(token_list):
        raise ValueError(f"{len(token_list)} tokens but {len(stop)} stop flags")
    return _object_counts(<list>token_list, stop, NULL, is_candidate, known)


def flagged_counts(object token_list, const unsigned char[::1] flags):
    """``keyword_counts`` of tokens whose keyword flags the word scan gave (``analyze_words``:
    no stop word and a keyword candidate, a byte a token): the flagged tokens counted, no flag
    asked of a memo."""
    if not isinstance(token_list, list):
        raise TypeError(f"tokens must be a list, not {type(token_list).__name__}")
    if flags.shape[0] != len(token_list):
        raise ValueError(f"{len(token_list)} tokens but {flags.shape[0]} keyword flags")
    return _object_counts(<list>token_list, None, &flags[0] if flags.shape[0] else NULL, None, None)


cdef int _index_counts(TokenCount* counts, Py_ssize_t distinct, Py_ssize_t mask, Py_ssize_t* index) noexcept:
    """Fill ``index`` (mask + 1 slots, -1 for empty) with the positions of counts[:distinct],
    each at its token's slot (the one ``_object_counts`` probes)."""
    cdef Py_ssize_t i, k
    memset(index, 0xFF, (mask + 1) * sizeof(Py_ssize_t))
    for i in range(distinct):
        k = <Py_ssize_t>(((<uint64_t><size_t>counts[i].token >> 4) * 0x9E3779B97F4A7C15ULL) >> 32) & mask
        while index[k] >= 0:
            k = (k + 1) & mask
        index[k] = i
    return 0


cdef dict _object_counts(list tokens, list stop, const unsigned char* flags, object is_candidate, dict known):
    """The counts of ``keyword_counts`` (with ``stop``, ``is_candidate`` and ``known``) or of
    ``flagged_counts`` (``flags``, the tokens counted; the others None)."""
    cdef Py_ssize_t i, k, n = len(tokens), distinct = 0, mask = 255, size, count
    cdef PyObject* token
    cdef PyObject* flag
    cdef TokenCount* counts  # each object's count, in order of first sight
    cdef Py_ssize_t* index  # an open-addressing table of positions in counts, at most half full
    cdef Py_ssize_t* grown
    cdef dict out
    # sized by the distinct objects as they come (a page has ~200 for ~1,100 tokens), not by
    # the tokens: a few KB to clear and keep in cache a page, not 64
    counts = <TokenCount*>malloc(max(n, 1) * sizeof(TokenCount))
    index = <Py_ssize_t*>malloc((mask + 1) * sizeof(Py_ssize_t))
    if counts == NULL or index == NULL:
        free(counts)
        free(index)
        raise MemoryError()
    try:
        memset(index, 0xFF, (mask + 1) * sizeof(Py_ssize_t))
        for i in range(n):
            if stop is not None:
                flag = PyList_GET_ITEM(stop, i)
                if flag == <PyObject*>True or (flag != <PyObject*>False and <object>flag):
                    continue
            elif not flags[i]:
                continue
            token = PyList_GET_ITEM(tokens, i)
            k = <Py_ssize_t>(((<uint64_t><size_t>token >> 4) * 0x9E3779B97F4A7C15ULL) >> 32) & mask
            while index[k] >= 0 and counts[index[k]].token != token:
                k = (k + 1) & mask
            if index[k] >= 0:
                counts[index[k]].count += 1
                continue
            counts[distinct].token = token
            counts[distinct].count = 1
            index[k] = distinct
            distinct += 1
            if 2 * distinct > mask + 1:  # more than half full: twice the slots
                mask = 2 * mask + 1
                grown = <Py_ssize_t*>realloc(index, (mask + 1) * sizeof(Py_ssize_t))
                if grown == NULL:
                    raise MemoryError()
                index = grown
                _index_counts(counts, distinct, mask, index)
        out = _PyDict_NewPresized(distinct)  # no resize as it fills
        # The tokens' objects (their hash, refcount) are read below: asked for some ahead, so
        # that their misses overlap (scattered objects, most not cached).
        for i in range(min(distinct, TOKEN_AHEAD)):
            pt_prefetch_line(counts[i].token)
        for i in range(distinct):
            if i + TOKEN_AHEAD < distinct:
                pt_prefetch_line(counts[i + TOKEN_AHEAD].token)
            word = <object>counts[i].token
            if is_candidate is not None:
                candidate = known.get(word)
                if candidate is None:
                    candidate = known[word] = bool(is_candidate(word))
                if not candidate:
                    continue
            size = len(out)
            count = counts[i].count
            seen = <object>PyDict_SetDefault(out, word, count)  # one lookup: most tokens are one object
            if len(out) == size:  # a later object of a token already counted
                out[word] = seen + count
        return out
    finally:
        free(counts)
        free(index)


cdef struct DfaState:
    uint32_t base  # the state's row in nextmove, times 256
    int feature  # the feature the state counts, or -1


cdef struct FeatureVisits:
    int count
    int first  # position of the feature's first visit (valid while count > 0)


cdef class DfaCounter:
    """py3langid's feature counts of a byte string: its DFA (nextmove, row bases, outputs)
    walked in C; ``visits(data)`` is ``visit_counts``'s Counter as a dict in the same order.

    ``visit_arrays(data)`` gives the same counts as two arrays, walked in ``lanes`` pieces of
    the text at once: each step of the walk waits for a read of the 39 MB transition table
    (a cache miss), and independent walks overlap those waits. A piece after the first starts
    ``warmup`` bytes early from state 0 without counting; it is kept only if the state it has
    reached where it starts is the state the piece before it ends in (then every byte was
    walked from its true state), else the text is walked again in one piece: the counts and
    their order are those of one walk, whatever the model. A state's row base and feature sit
    side by side (``DfaState``, 0.8 MB), as do a feature's count and first visit: in a run
    these small tables are evicted too, and each step then misses once, not twice."""

    cdef const unsigned int[::1] nextmove
    cdef DfaState* states  # each state's row base and feature side by side: one cache miss a step, not two
    cdef FeatureVisits* counts  # each feature's count and first visit, side by side likewise
    cdef int* seen  # the features counted so far, n_seen of them
    cdef Py_ssize_t n_seen
    cdef Py_ssize_t n_features
    cdef readonly Py_ssize_t warmup

    def __cinit__(self, nextmove, rowbase, output, Py_ssize_t n_features, Py_ssize_t warmup=0):
        cdef const long long[::1] bases = rowbase
        cdef const int[::1] features = output
        cdef Py_ssize_t s, n_states = bases.shape[0]
        self.nextmove = nextmove
        self.n_features = n_features
        self.warmup = warmup
        if features.shape[0] != n_states:
            raise ValueError(f"{n_states} row bases but {features.shape[0]} outputs")
        self.states = <DfaState*>malloc(max(n_states, 1) * sizeof(DfaState))
        self.counts = <FeatureVisits*>calloc(n_features + 1, sizeof(FeatureVisits))
        self.seen = <int*>calloc(n_features + 1, sizeof(int))
        self.n_seen = 0
        if self.states == NULL or self.counts == NULL or self.seen == NULL:
            raise MemoryError()
        for s in range(n_states):
            if bases[s] < 0 or bases[s] > 0xFFFFFF00 or bases[s] + 256 > nextmove.shape[0] or features[s] >= n_features:
                raise ValueError(f"state {s}: row base {bases[s]} or feature {features[s]} outside the tables")
            self.states[s].base = <uint32_t>bases[s]
            self.states[s].feature = features[s]

    def __dealloc__(self):
        free(self.states)
        free(self.counts)
        free(self.seen)

    def visits(self, const unsigned char[::1] data):
        cdef Py_ssize_t i, n = data.shape[0], m = 0
        cdef long long state = 0
        cdef int feature
        cdef list order = []
        cdef dict out = {}
        for i in range(n):
            state = self.nextmove[self.states[state].base + data[i]]
            feature = self.states[state].feature
            if feature >= 0:
                if self.counts[feature].count == 0:
                    order.append(feature)
                self.counts[feature].count += 1
        for feature in order:
            out[feature] = self.counts[feature].count
            self.counts[feature].count = 0
        return out

    cdef inline void _count(self, long long state, Py_ssize_t i) noexcept nogil:
        cdef int feature = self.states[state].feature
        cdef FeatureVisits* f
        if feature >= 0:
            f = &self.counts[feature]
            if f.count == 0:
                f.first = <int>i
                self.seen[self.n_seen] = feature
                self.n_seen += 1
            elif i < f.first:
                f.first = <int>i
            f.count += 1

    cdef bint _walk_lanes(self, const unsigned char* data, Py_ssize_t n, Py_ssize_t lanes) noexcept nogil:
        """Count every byte's visit, ``lanes`` pieces at once; False when a piece's warm-up
        did not reach the state the piece before it ends in (the counts are then not those
        of one walk)."""
        cdef Py_ssize_t piece = n // lanes, k, i, step
        cdef long long state[MAX_LANES]
        cdef long long entry[MAX_LANES]
        for k in range(lanes):
            state[k] = 0
            if k > 0:
                for i in range(max(0, k * piece - self.warmup), k * piece):
                    state[k] = self.nextmove[self.states[state[k]].base + data[i]]
            entry[k] = state[k]
        for step in range(piece):
            for k in range(lanes):
                i = k * piece + step
                state[k] = self.nextmove[self.states[state[k]].base + data[i]]
                self._count(state[k], i)
        for i in range(lanes * piece, n):  # the last piece's tail
            state[lanes - 1] = self.nextmove[self.states[state[lanes - 1]].base + data[i]]
            self._count(state[lanes - 1], i)
        for k in range(1, lanes):
            if state[k - 1] != entry[k]:
                return False
        return True

    cdef void _walk(self, const unsigned char* data, Py_ssize_t n, Py_ssize_t lanes) noexcept nogil:
        cdef Py_ssize_t i
        cdef long long state = 0
        self.n_seen = 0
        if lanes > 1 and self._walk_lanes(data, n, lanes):
            return
        for i in range(self.n_seen):  # forget what the lanes counted
            self.counts[self.seen[i]].count = 0
        self.n_seen = 0
        for i in range(n):
            state = self.nextmove[self.states[state].base + data[i]]
            self._count(state, i)

    def visit_arrays(self, const unsigned char[::1] data, Py_ssize_t lanes=8):
        """(features, counts): ``visits(data)``'s keys as intp and its values as float32, in
        the same order (of first visit), walked in ``lanes`` pieces when the text is long."""
        cdef Py_ssize_t n = data.shape[0], i, m = 0, f
        cdef const unsigned char* text = &data[0] if n > 0 else NULL
        if n > 0x7FFFFFFF:
            raise ValueError(f"{n} bytes: at most 2**31 - 1 (positions are kept as int)")
        lanes = max(1, min(lanes, MAX_LANES, n // MIN_PIECE))
        # The GIL stays held: the counts are this object's, and threads (the server's readers
        # and its writer) share one identifier.
        self._walk(text, n, lanes)
        features = np.empty(self.n_seen, dtype=np.intp)
        counts = np.empty(self.n_seen, dtype=np.float32)
        cdef Py_ssize_t[::1] fv = features
        cdef float[::1] cv = counts
        # In order of first visit: one feature at most is visited per byte, so the first
        # positions are distinct and a table by position sorts them.
        cdef Py_ssize_t* slot = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
        if slot == NULL:
            raise MemoryError()
        for i in range(n):
            slot[i] = -1
        for i in range(self.n_seen):
            slot[self.counts[self.seen[i]].first] = self.seen[i]
        for i in range(n):
            f = slot[i]
            if f >= 0:
                fv[m] = f
                cv[m] = self.counts[f].count
                self.counts[f].count = 0
                m += 1
        self.n_seen = 0
        free(slot)
        return features, counts


cdef extern from *:
    """
    #include <stdint.h>
    /* dst[c] = the float32 bits of the half src[c], exact for a normal half (exponent field
       1-30: the exponent rebiased from 15 to 127, the 10 mantissa bits shifted up); 0 when a
       half of the row is zero, subnormal, infinite or NaN (the caller then converts the row
       through the table). Integer arithmetic only, so that the loop is vectorised (GCC's -O2
       cost model would not: the attribute asks for it). */
    #if defined(__GNUC__) && !defined(__clang__)
    __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
    #endif
    static int pt_normal_halves(const uint16_t* src, uint32_t* dst, Py_ssize_t m) {
        uint32_t bad = 0;
        for (Py_ssize_t c = 0; c < m; c++) {
            uint32_t h = src[c];
            /* exponent field 0x0400..0x7800 (normal) -> 0..0x7400; 0 and 0x7C00 fall outside */
            bad |= ((h & 0x7C00u) - 0x0400u) > 0x7400u;
            dst[c] = ((h & 0x8000u) << 16) | (((h & 0x7FFFu) << 13) + 0x38000000u);
        }
        return bad == 0;
    }
    /* Ask for the cache lines of bytes [p, p + size) (size > 0): the rows of a gather are known
       ahead, and misses asked for together overlap instead of waiting one after another. */
    static inline void pt_prefetch(const void* p, Py_ssize_t size) {
    #if defined(__GNUC__)
        const char* c = (const char*)p;
        for (Py_ssize_t o = 0; o < size; o += 64)
            __builtin_prefetch(c + o);
        __builtin_prefetch(c + size - 1);
    #endif
    }
    """
    bint pt_normal_halves(const uint16_t* src, uint32_t* dst, Py_ssize_t m) noexcept nogil
    void pt_prefetch(const void* p, Py_ssize_t size) noexcept nogil


def gather_rows(const uint16_t[:, ::1] table, const Py_ssize_t[::1] rows, const float[::1] half_to_float):
    """float32 array (len(rows), table columns): row rows[r] of ``table`` (float16 values given
    by their bits) converted exactly: by bit arithmetic when every half of the row is normal
    (all of py3langid's table), else through ``half_to_float`` (the float32 of each of the
    65,536 bit patterns). A table lookup per value was most of the scoring's time. The rows
    are asked for ``PREFETCH_ROWS`` ahead: they are scattered over 28 MB, mostly not cached."""
    cdef Py_ssize_t n = rows.shape[0], m = table.shape[1], r, c, row
    if half_to_float.shape[0] != 65536:
        raise ValueError("half_to_float must give the float32 of all 65,536 half bit patterns")
    for r in range(n):
        if rows[r] < 0 or rows[r] >= table.shape[0]:
            raise IndexError(f"row {rows[r]} outside the table ({table.shape[0]} rows)")
    out = np.empty((n, m), dtype=np.uint32)
    cdef uint32_t[:, ::1] view = out
    with nogil:
        for r in range(min(n, PREFETCH_ROWS)):
            if m:
                pt_prefetch(&table[rows[r], 0], 2 * m)
        for r in range(n):
            row = rows[r]
            if m and r + PREFETCH_ROWS < n:
                pt_prefetch(&table[rows[r + PREFETCH_ROWS], 0], 2 * m)
            if m and not pt_normal_halves(&table[row, 0], &view[r, 0], m):
                for c in range(m):
                    memcpy(&view[r, c], &half_to_float[table[row, c]], 4)
    return out.view(np.float32)


cdef extern from *:
    """
    /* sums[c] += x[r] * row[c] over the rows of a page's features, in double (each product
       of a float by a half is exact: 24 by 11 significant bits, so a fused multiply-add gives
       what a multiply and an add give), every half made float exactly. The rows are asked
       for PT_AHEAD rows ahead (scattered over 28 MB). With AVX2 and F16C (an instruction
       converts 8 halves) when the CPU has them, else through the table of the 65,536 halves'
       floats. */
    #define PT_AHEAD 8
    static void pt_sum_rows_plain(const uint16_t* table, Py_ssize_t width, const Py_ssize_t* rows,
                                  Py_ssize_t n, const float* x, const float* half_to_float, double* sums) {
        for (Py_ssize_t r = 0; r < n; r++) {
            const uint16_t* row = table + rows[r] * width;
            if (r + PT_AHEAD < n)
                pt_prefetch(table + rows[r + PT_AHEAD] * width, 2 * width);
            double weight = x[r];
            for (Py_ssize_t c = 0; c < width; c++)
                sums[c] += weight * (double)half_to_float[row[c]];
        }
    }
    #if defined(__GNUC__) && defined(__x86_64__)
    #include <immintrin.h>
    #define PT_HAS_F16C_COPY 1
    __attribute__((target("avx2,fma,f16c")))
    static void pt_sum_rows_f16c(const uint16_t* table, Py_ssize_t width, const Py_ssize_t* rows,
                                 Py_ssize_t n, const float* x, const float* half_to_float, double* sums) {
        for (Py_ssize_t r = 0; r < n; r++) {
            const uint16_t* row = table + rows[r] * width;
            if (r + PT_AHEAD < n)
                pt_prefetch(table + rows[r + PT_AHEAD] * width, 2 * width);
            double weight = x[r];
            __m256d w = _mm256_set1_pd(weight);
            Py_ssize_t c = 0;
            for (; c + 8 <= width; c += 8) {
                __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(row + c)));
                __m256d low = _mm256_cvtps_pd(_mm256_castps256_ps128(f));
                __m256d high = _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1));
                _mm256_storeu_pd(sums + c, _mm256_fmadd_pd(w, low, _mm256_loadu_pd(sums + c)));
                _mm256_storeu_pd(sums + c + 4, _mm256_fmadd_pd(w, high, _mm256_loadu_pd(sums + c + 4)));
            }
            for (; c < width; c++)
                sums[c] += weight * (double)half_to_float[row[c]];
        }
    }
    #endif
    static void pt_sum_rows(const uint16_t* table, Py_ssize_t width, const Py_ssize_t* rows, Py_ssize_t n,
                            const float* x, const float* half_to_float, double* sums) {
        for (Py_ssize_t r = 0; r < (n < PT_AHEAD ? n : PT_AHEAD); r++)
            pt_prefetch(table + rows[r] * width, 2 * width);
    #ifdef PT_HAS_F16C_COPY
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
            pt_sum_rows_f16c(table, width, rows, n, x, half_to_float, sums);
            return;
        }
    #endif
        pt_sum_rows_plain(table, width, rows, n, x, half_to_float, sums);
    }
    """
    void pt_sum_rows(const uint16_t* table, Py_ssize_t width, const Py_ssize_t* rows, Py_ssize_t n,
                     const float* x, const float* half_to_float, double* sums) noexcept nogil


def sum_rows(const uint16_t[:, ::1] table, const Py_ssize_t[::1] rows, const float[::1] x, const float[::1] half_to_float):
    """float64 array of the table's columns: sum over r of x[r] * table[rows[r]] (float16 rows
    given by their bits, made float32 exactly as ``gather_rows`` does), each product exact and
    summed in double: the scores of py3langid's product ``x @ gather_rows(...)`` to within a
    bound of float32 rounding (``lang._Scorer.settled``), without the matrix."""
    cdef Py_ssize_t n = rows.shape[0], m = table.shape[1], r
    if half_to_float.shape[0] != 65536:
        raise ValueError("half_to_float must give the float32 of all 65,536 half bit patterns")
    if x.shape[0] != n:
        raise ValueError(f"{n} rows but {x.shape[0]} weights")
    for r in range(n):
        if rows[r] < 0 or rows[r] >= table.shape[0]:
            raise IndexError(f"row {rows[r]} outside the table ({table.shape[0]} rows)")
    out = np.zeros(m, dtype=np.float64)
    if n == 0 or m == 0:
        return out
    cdef double[::1] sums = out
    with nogil:
        pt_sum_rows(&table[0, 0], m, &rows[0], n, &x[0], &half_to_float[0], &sums[0])
    return out


def settled_class(const uint16_t[:, ::1] table, const Py_ssize_t[::1] rows, const float[::1] x,
                  const float[::1] half_to_float, const double[::1] prior, const Py_ssize_t[:, ::1] alias_pairs,
                  double floor):
    """``lang._Scorer.settled_reference`` in one pass, no numpy array a step: the class whose
    lowest possible score beats every other class's highest (scores of ``sum_rows`` plus the
    prior, the bound of float32 rounding around each, aliases folded as py3langid's _decide
    folds them), or -1 when the bound cannot tell. The same double operations in the same
    order as the reference, so the same answer."""
    cdef Py_ssize_t n = rows.shape[0], m = table.shape[1], r, c, i, j, best
    cdef double g32, g64, v, e, lowest, highest
    cdef double* sums
    cdef double* values
    cdef double* low
    cdef double* high
    if half_to_float.shape[0] != 65536:
        raise ValueError("half_to_float must give the float32 of all 65,536 half bit patterns")
    if x.shape[0] != n or prior.shape[0] != m:
        raise ValueError(f"{n} rows, {x.shape[0]} weights, {m} columns and {prior.shape[0]} priors")
    if alias_pairs.shape[1] != 2:
        raise ValueError("alias pairs must be (i, j) rows")
    for r in range(n):
        if rows[r] < 0 or rows[r] >= table.shape[0]:
            raise IndexError(f"row {rows[r]} outside the table ({table.shape[0]} rows)")
    for r in range(alias_pairs.shape[0]):
        if not (0 <= alias_pairs[r, 0] < m and 0 <= alias_pairs[r, 1] < m):
            raise IndexError(f"alias pair {r} outside the {m} classes")
    if n == 0 or m == 0:
        return -1
    sums = <double*>calloc(4 * m, sizeof(double))
    if sums == NULL:
        raise MemoryError()
    values = sums + m
    low = sums + 2 * m
    high = sums + 3 * m
    try:
        with nogil:
            pt_sum_rows(&table[0, 0], m, &rows[0], n, &x[0], &half_to_float[0], sums)
            g32 = (n + 1) * _U32 / (1 - (n + 1) * _U32)
            g64 = n * _U64 / (1 - n * _U64)
            for c in range(m):
                v = sums[c] + prior[c]
                e = (g32 + g64) * -sums[c]
                e = 2.0 * (e + _U32 * (fabs(v) + e)) + 1e-30
                values[c] = v
                low[c] = v - e
                high[c] = v + e
            for r in range(alias_pairs.shape[0]):
                i = alias_pairs[r, 0]
                j = alias_pairs[r, 1]
                values[i] = _first_max(values[i], values[j])
                low[i] = _first_max(low[i], low[j])
                high[i] = _first_max(high[i], high[j])
                values[j] = low[j] = high[j] = floor
            best = 0
            for c in range(1, m):
                if values[c] > values[best]:
                    best = c
            lowest = low[best]
            high[best] = -INFINITY
            highest = high[0]
            for c in range(1, m):
                if high[c] > highest:
                    highest = high[c]
        return best if lowest > highest else -1
    finally:
        free(sums)


cdef inline double _first_max(double a, double b) noexcept nogil:
    """Python's ``max(a, b)``: b only when it is greater."""
    return b if b > a else a


def collapse_utf8(str text, bint lower_ascii=False):
    """``" ".join(text.split()).encode("utf-8")`` in one pass (``normalize.text_digest``: the
    exact digest's bytes without a list of a page's words and the string joined from it), with
    A-Z lowered when ``lower_ascii``; None when the text holds a surrogate (which UTF-8 cannot
    encode: the caller's own ``encode`` then says so)."""
    cdef Py_ssize_t n = len(text), i, m = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef uint32_t c  # a code point (Cython's Py_UCS4 would add as a character)
    cdef bint gap = False  # whitespace seen since the last word
    cdef unsigned char* out = <unsigned char*>malloc(max(4 * n, 1))
    if out == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            c = PyUnicode_READ(kind, data, i)
            if Py_UNICODE_ISSPACE(<Py_UCS4>c):
                gap = m > 0  # leading whitespace writes nothing
                continue
            if gap:
                out[m] = 0x20
                m += 1
                gap = False
            if c < 0x80:
                if lower_ascii and 0x41 <= c <= 0x5A:
                    c += 0x20
                out[m] = <unsigned char>c
                m += 1
            elif c < 0x800:
                out[m] = <unsigned char>(0xC0 | (c >> 6))
                out[m + 1] = <unsigned char>(0x80 | (c & 0x3F))
                m += 2
            elif c < 0x10000:
                if 0xD800 <= c <= 0xDFFF:
                    return None
                out[m] = <unsigned char>(0xE0 | (c >> 12))
                out[m + 1] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
                out[m + 2] = <unsigned char>(0x80 | (c & 0x3F))
                m += 3
            else:
                out[m] = <unsigned char>(0xF0 | (c >> 18))
                out[m + 1] = <unsigned char>(0x80 | ((c >> 12) & 0x3F))
                out[m + 2] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
                out[m + 3] = <unsigned char>(0x80 | (c & 0x3F))
                m += 4
        return PyBytes_FromStringAndSize(<char*>out, m)
    finally:
        free(out)


cdef inline Py_ssize_t _put_utf8(unsigned char* out, Py_ssize_t m, uint32_t c) noexcept:
    """Write code point c (no surrogate) as UTF-8 at out[m]; the new end."""
    if c < 0x80:
        out[m] = <unsigned char>c
        return m + 1
    if c < 0x800:
        out[m] = <unsigned char>(0xC0 | (c >> 6))
        out[m + 1] = <unsigned char>(0x80 | (c & 0x3F))
        return m + 2
    if c < 0x10000:
        out[m] = <unsigned char>(0xE0 | (c >> 12))
        out[m + 1] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
        out[m + 2] = <unsigned char>(0x80 | (c & 0x3F))
        return m + 3
    out[m] = <unsigned char>(0xF0 | (c >> 18))
    out[m + 1] = <unsigned char>(0x80 | ((c >> 12) & 0x3F))
    out[m + 2] = <unsigned char>(0x80 | ((c >> 6) & 0x3F))
    out[m + 3] = <unsigned char>(0x80 | (c & 0x3F))
    return m + 4


def fold_collapse_utf8(str text, const uint32_t[::1] index, const uint32_t[::1] pool):
    """``" ".join(normalize._folded(text).split()).encode("utf-8")`` (for an ASCII text, of its
    lower case) in one pass, each character replaced by its entry in ``normalize.fold_table``
    (index: 0 none, 1 itself, else (offset << 5) | length in pool); None when a character has
    no entry (the caller then folds the whole text). No string is made but the bytes."""
    cdef Py_ssize_t n = len(text), i, m = 0, capacity, k, end
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef uint32_t c, entry, limit = <uint32_t>index.shape[0]
    cdef bint gap = False  # whitespace seen since the last word
    cdef unsigned char* out
    # each character gives at most 31 code points of 4 bytes each, and a space before them
    cdef Py_ssize_t most = 4 * 31 + 1
    capacity = 4 * n + most
    out = <unsigned char*>malloc(capacity)
    if out == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            c = PyUnicode_READ(kind, data, i)
            if c < 0x80:  # ASCII: folds to its lower case
                if Py_UNICODE_ISSPACE(<Py_UCS4>c):
                    gap = m > 0  # leading whitespace writes nothing
                    continue
                if m + 2 > capacity:
                    capacity = 2 * capacity
                    out = <unsigned char*>_resized(out, capacity)
                if gap:
                    out[m] = 0x20
                    m += 1
                    gap = False
                if 0x41 <= c <= 0x5A:
                    c += 0x20
                out[m] = <unsigned char>c
                m += 1
                continue
            entry = index[c] if c < limit else 0
            if entry == 0:
                return None
            if m + most > capacity:
                capacity = 2 * capacity
                out = <unsigned char*>_resized(out, capacity)
            if entry == 1:
                k = 0
                end = 0
            else:
                k = entry >> 5
                end = k + (entry & 31)
                if end > pool.shape[0]:
                    raise ValueError(f"fold table entry of U+{c:04X} outside its pool")
                c = pool[k]
            while True:
                if Py_UNICODE_ISSPACE(<Py_UCS4>c):
                    gap = m > 0
                else:
                    if gap:
                        out[m] = 0x20
                        m += 1
                        gap = False
                    m = _put_utf8(out, m, c)
                k += 1
                if k >= end:
                    break
                c = pool[k]
        return PyBytes_FromStringAndSize(<char*>out, m)
    finally:
        free(out)


cdef inline bint _before(double w, object t, double w2, object t2) except -1:
    """(w, t) < (w2, t2) as Python compares the tuples (tokens distinct: a tie goes to the str)."""
    return w < w2 or (w == w2 and PyUnicode_Compare(t, t2) < 0)


def top_weights(dict counts, Py_ssize_t total, dict doc_freq, object docs, Py_ssize_t n):
    """``heapq.nsmallest(n, [(-(c / total) * idf(t), t) for t, c in counts.items()])``, idf(t)
    = ln(docs / (1 + doc_freq.get(t, 0))) + 1 (``DocFreq.idf``, ``docs`` its 1 + N), or the
    density -(c / total) when ``doc_freq`` is None: the same floats (each operation the one
    Python does, in its order, on the same doubles; libm's log is math.log's) in the same
    order, without a Python call or tuple a token (``keywords.top_weights_reference``)."""
    cdef Py_ssize_t size = min(max(n, 0), len(counts)), filled = 0, k
    cdef double w, x, dtotal = <double>total, ddocs = <double>docs if doc_freq is not None else 1.0
    cdef list out = []
    if size == 0:
        return out
    if total <= 0:
        raise ValueError(f"total {total} must be positive")
    cdef double* ws = <double*>malloc(size * sizeof(double))
    cdef PyObject** ts = <PyObject**>malloc(size * sizeof(PyObject*))  # borrowed from counts
    if ws == NULL or ts == NULL:
        free(ws)
        free(ts)
        raise MemoryError()
    try:
        for t, c in counts.items():
            if type(t) is not str:
                raise TypeError(f"token {t!r} is not a str")
            # an int count read as int (PyFloat_AsDouble would make a float object of it first,
            # most of the loop's time): the same double, PyLong_AsDouble being what int's
            # __float__ calls
            w = -((PyLong_AsDouble(c) if type(c) is int else <double>c) / dtotal)  # int / int below 2**53: the correctly rounded quotient
            if doc_freq is not None:
                d = doc_freq.get(t)
                x = 0.0 if d is None else <double>d
                w = w * (log(ddocs / (1.0 + x)) + 1.0)
            if filled == size:
                if not _before(w, t, ws[size - 1], <object>ts[size - 1]):
                    continue
                k = size - 1
            else:
                k = filled
                filled += 1
            while k > 0 and _before(w, t, ws[k - 1], <object>ts[k - 1]):
                ws[k] = ws[k - 1]
                ts[k] = ts[k - 1]
                k -= 1
            ws[k] = w
            ts[k] = <PyObject*>t
        for k in range(filled):
            out.append((ws[k], <object>ts[k]))
        return out
    finally:
        free(ws)
        free(ts)


def compat_substitute(str text, const unsigned char[::1] changed, dict replacement):
    """``text`` with each character c whose ``changed[c]`` is set (c below len(changed))
    replaced by ``replacement[c]``; ``text`` itself when there is none. Meant for NFKC(c) as
    the replacement: NFKD(NFKC(c)) is NFKD(c), so the text's NFKD, hence its NFKC, stays the
    same (``normalize._folded``)."""
    cdef Py_ssize_t n = len(text), i, last = 0, limit = changed.shape[0]
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef uint32_t c
    cdef list pieces = None
    if kind == 1 and limit <= 0x80:
        return text
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c < limit and changed[c]:
            if pieces is None:
                pieces = []
            if i > last:
                pieces.append(text[last:i])
            pieces.append(replacement[c])
            last = i + 1
    if pieces is None:
        return text
    if last < n:
        pieces.append(text[last:n])
    return "".join(pieces)
