# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The block walk (``html.blocks.BlockWalker.walk_reference``) in C, over lexbor's node structs.

The walk reads lexbor's DOM where selectolax keeps it: a node's children, siblings, tag id and
type, a text node's UTF-8 data, an element's attribute list. It makes Python objects only for
what a page's ``Blocks`` hold (one text, hash, signature... per block), and goes back to
selectolax's Python API (a ``LexborNode`` made by selectolax's own ``LexborNode.new``) only on
rare paths: the CSS checks of chrome boxes and noscripts, the flat text past ``max_depth``, the
first sight of each tag id.

selectolax's wheel ships no lexbor headers, so the layouts it reads are declared here, as
selectolax 1.0.2 (lexbor 3.1) builds them; ``probe`` checks them against selectolax's Python
API before a walker is used, and html/blocks.py falls back to the Python walk (with a warning)
when the installed selectolax is another version or a check fails. Two lexbor functions are
called by address (exported by selectolax's module): the qualified names of an attribute and
of a custom element. Text rules are Python's own: ``str.split`` whitespace is
``Py_UNICODE_ISSPACE``, the ``\\d`` of ``re`` is ``Py_UNICODE_ISDECIMAL``, and undecodable bytes
are replaced as selectolax replaces them (bytes that are not valid UTF-8 are decoded by Python).
"""

cimport cython
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_AsUTF8AndSize
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from libc.limits cimport INT_MAX, INT_MIN
from libc.stdint cimport INT64_MAX, int64_t, uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, memmove, memset

import marshal

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)
    void *PyUnicode_DATA(object text)
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch) nogil

cdef extern from *:
    """
    #include <stdint.h>
    /* lexbor's DOM structs, as selectolax 1.0.2 builds them (lexbor 3.1): probe() checks them. */
    typedef struct pt_str { unsigned char *data; size_t length; } pt_str;
    typedef struct pt_node pt_node;
    struct pt_node {
        void *events;
        uintptr_t local_name, prefix, ns;
        void *owner_document;
        pt_node *next, *prev, *parent, *first_child, *last_child;
        void *user;
        int type;
    };
    typedef struct { pt_node node; pt_str data; } pt_chardata;
    typedef struct pt_attr pt_attr;
    struct pt_attr {
        pt_node node;
        uintptr_t upper_name, qualified_name;
        pt_str *value;
        void *owner;
        pt_attr *next, *prev;
    };
    typedef struct {
        pt_node node;
        uintptr_t upper_name, qualified_name;
        pt_str *is_value;
        pt_attr *first_attr, *last_attr, *attr_id, *attr_class;
        int custom_state;
    } pt_element;
    /* selectolax's LexborNode object, and the first entry of its vtable (LexborNode.new). */
    typedef struct {
        PyObject_HEAD
        void *vtab;
        pt_node *node;
        PyObject *parser;
        int is_fragment_root;
        int is_template_content;
    } pt_lexbor_node;
    typedef PyObject *(*pt_node_new_f)(pt_node *, PyObject *);
    typedef const unsigned char *(*pt_name_f)(void *, size_t *);
    static PyObject *pt_call_new(void *vtab, pt_node *node, PyObject *parser) {
        return (*(pt_node_new_f *)vtab)(node, parser);
    }
    static const unsigned char *pt_call_name(void *fn, void *object, size_t *len) {
        return ((pt_name_f)fn)(object, len);
    }
    """
    ctypedef struct pt_str:
        unsigned char *data
        size_t length
    ctypedef struct pt_node:
        uintptr_t local_name
        pt_node *next
        pt_node *prev
        pt_node *parent
        pt_node *first_child
        pt_node *last_child
        int type
    ctypedef struct pt_chardata:
        pt_str data
    ctypedef struct pt_attr:
        pt_node node
        uintptr_t qualified_name
        pt_str *value
        pt_attr *next
    ctypedef struct pt_element:
        pt_attr *first_attr
    ctypedef struct pt_lexbor_node:
        void *vtab
        pt_node *node
        PyObject *parser
    object pt_call_new(void *vtab, pt_node *node, PyObject *parser)
    const unsigned char *pt_call_name(void *fn, void *object, size_t *len)


DEF ELEMENT = 1
DEF TEXT = 3
DEF KINDS = 4096  # tag and attribute ids below this are lexbor's static ones (others: pointers)
DEF STATIC_TAGS = 65536  # blocks.py's _STATIC_TAG_IDS

# The walk's node kinds (blocks.py's _TEXT ... _NOSCRIPT; checked in probe()).
DEF K_TEXT = 0
DEF K_SKIP = 1
DEF K_INLINE = 2
DEF K_BLOCK = 3
DEF K_A = 4
DEF K_SPAN = 5
DEF K_CELL = 6
DEF K_BR = 7
DEF K_IMG = 8
DEF K_SOURCE = 9
DEF K_NOSCRIPT = 10

SELECTOLAX = "1.0.2"  # the selectolax whose structs are declared above
# The attributes an image's source is read from, the first it has that is not empty (blocks.SOURCE_ATTRS).
SOURCE_ATTRS = ("src", "data-src", "srcset", "data-srcset", "data-original")
CODES = (K_TEXT, K_SKIP, K_INLINE, K_BLOCK, K_A, K_SPAN, K_CELL, K_BR, K_IMG, K_SOURCE, K_NOSCRIPT, 2)  # (2: _COMMENTS)

# Attributes the walk reads (codes), then the image attributes (IMAGE + their index).
DEF A_NONE = -1
DEF A_CLASS = 0
DEF A_ID = 1
DEF A_ITEMPROP = 2
DEF A_HIDDEN = 3
DEF A_ARIA = 4
DEF A_TYPE = 5
DEF A_STYLE = 6
DEF IMAGE = 7
DEF MAX_IMAGE_ATTRS = 40
DEF MAX_FIRST_TAGS = 16  # tags of a selector ``first`` answers
# Attributes that may make a hidden box a disclosure widget's panel (blocks._disclosed_box), as bits.
DEF P_ROLE = 1
DEF P_EXPANDED = 2
DEF P_CONTROLS = 4
# What a word of a class or id names (blocks.py's word sets), as bits of ``word_buckets``.
DEF W_CHROME = 1
DEF W_WRAPPER = 2
DEF W_COMMENT = 4
DEF W_POPUP = 8
DEF W_WIDGET = 16

# Stack entries that are not nodes (node pointers are aligned, so never 1 or 2).
DEF LINK_END = 1
DEF BLOCK_END = 2

cdef uint64_t P1 = 11400714785074694791ULL
cdef uint64_t P2 = 14029467366897019727ULL
cdef uint64_t P3 = 1609587929392839161ULL
cdef uint64_t P4 = 9650029242287828579ULL
cdef uint64_t P5 = 2870177450012600261ULL


cdef inline uint64_t _rotl(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _read64(const unsigned char *p) noexcept nogil:
    cdef uint64_t v
    memcpy(&v, p, 8)  # (x86-64 and aarch64 are little-endian, as XXH64 reads)
    return v


cdef inline uint64_t _round(uint64_t acc, uint64_t value) noexcept nogil:
    acc += value * P2
    return _rotl(acc, 31) * P1


cdef inline uint64_t _merge(uint64_t h, uint64_t v) noexcept nogil:
    h ^= _round(0, v)
    return h * P1 + P4


cdef uint64_t xxh64(const unsigned char *p, size_t n) noexcept nogil:
    """XXH64 with seed 0 (the xxhash package's xxh64_intdigest; tests compare them)."""
    cdef const unsigned char *end = p + n
    cdef uint64_t h, v1, v2, v3, v4
    cdef unsigned int w32
    if n >= 32:
        v1 = P1 + P2
        v2 = P2
        v3 = 0
        v4 = 0 - P1
        while p + 32 <= end:
            v1 = _round(v1, _read64(p))
            v2 = _round(v2, _read64(p + 8))
            v3 = _round(v3, _read64(p + 16))
            v4 = _round(v4, _read64(p + 24))
            p += 32
        h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        h = _merge(h, v1)
        h = _merge(h, v2)
        h = _merge(h, v3)
        h = _merge(h, v4)
    else:
        h = P5
    h += n
    while p + 8 <= end:
        h ^= _round(0, _read64(p))
        h = _rotl(h, 27) * P1 + P4
        p += 8
    if p + 4 <= end:
        memcpy(&w32, p, 4)
        h ^= <uint64_t>w32 * P1
        h = _rotl(h, 23) * P2 + P3
        p += 4
    while p < end:
        h ^= p[0] * P5
        h = _rotl(h, 11) * P1
        p += 1
    h ^= h >> 33
    h *= P2
    h ^= h >> 29
    h *= P3
    h ^= h >> 32
    return h


def xxh64_intdigest(bytes data):
    """The native XXH64 (for the tests)."""
    return xxh64(<const unsigned char *>data, len(data))


cdef const char *DIGIT_PAIRS = b"00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"


cdef inline int _utoa(uint64_t v, char *out) noexcept nogil:
    """The decimal digits of v (Python's "%d"), into out (20 bytes); their count. (Two digits
    a division: a signature's 20 digits were a tenth of the walk's instructions.)"""
    cdef char tmp[20]
    cdef int at = 20
    cdef unsigned int r
    while v >= 100:
        r = <unsigned int>(v % 100)
        v //= 100
        at -= 2
        tmp[at] = DIGIT_PAIRS[2 * r]
        tmp[at + 1] = DIGIT_PAIRS[2 * r + 1]
    if v >= 10:
        at -= 2
        tmp[at] = DIGIT_PAIRS[2 * v]
        tmp[at + 1] = DIGIT_PAIRS[2 * v + 1]
    else:
        at -= 1
        tmp[at] = <char>(48 + v)
    memcpy(out, tmp + at, 20 - at)
    return 20 - at


cdef inline bint _ieq(const unsigned char *s, size_t n, const char *lit, size_t m) noexcept nogil:
    """Whether s equals the lower-case ASCII ``lit``, ASCII case ignored."""
    cdef size_t i
    if n != m:
        return False
    for i in range(n):
        if (s[i] | 0x20 if 65 <= s[i] <= 90 else s[i]) != <unsigned char>lit[i]:
            return False
    return True


cdef inline bint _icontains(const unsigned char *s, size_t n, const char *lit, size_t m) noexcept nogil:
    """Whether s holds the lower-case ASCII ``lit``, ASCII case ignored."""
    cdef size_t i
    if m > n:
        return False
    for i in range(n - m + 1):
        if _ieq(s + i, m, lit, m):
            return True
    return False


cdef inline bint _eq(const unsigned char *s, size_t n, const char *lit, size_t m) noexcept nogil:
    return n == m and memcmp(s, lit, n) == 0


cdef inline bint _contains(const unsigned char *s, size_t n, const char *lit, size_t m) noexcept nogil:
    cdef size_t i
    if m > n:
        return False
    for i in range(n - m + 1):
        if memcmp(s + i, lit, m) == 0:
            return True
    return False


cdef inline pt_node *_preorder_next(pt_node *node, pt_node *top) noexcept nogil:
    """The node after ``node`` in document order (pre-order) in ``top``'s subtree; NULL past its end."""
    if node.first_child != NULL:
        return node.first_child
    while node != top and node.next == NULL:
        node = node.parent
    return NULL if node == top else node.next


# The attributes head_candidates reads (codes of NativeWalk.head_attrs).
DEF H_OTHER = 0
DEF H_NAME = 1
DEF H_PROPERTY = 2
DEF H_TYPE = 3
DEF H_ITEMTYPE = 4

# A code of an attribute's name (NativeWalk._name_code keeps it by attribute id); 0: none of them.
ctypedef int (*name_code_of)(const unsigned char *name, size_t n) noexcept


cdef int _head_code(const unsigned char *name, size_t n) noexcept:
    """H_* code of an attribute's name for head_candidates, ASCII case ignored."""
    if _ieq(name, n, b"name", 4):
        return H_NAME
    if _ieq(name, n, b"property", 8):
        return H_PROPERTY
    if _ieq(name, n, b"type", 4):
        return H_TYPE
    if _ieq(name, n, b"itemtype", 8):
        return H_ITEMTYPE
    return H_OTHER


cdef int _panel_code(const unsigned char *name, size_t n) noexcept:
    """P_* bit of an attribute's name as written (role, aria-expanded, aria-controls), else 0."""
    if _eq(name, n, b"role", 4):
        return P_ROLE
    if _eq(name, n, b"aria-expanded", 13):
        return P_EXPANDED
    if _eq(name, n, b"aria-controls", 13):
        return P_CONTROLS
    return 0


cdef inline Py_ssize_t _utf8_valid(const unsigned char *s, size_t n) noexcept nogil:
    """Whether s is UTF-8 as Python's strict decoder takes it: 1 if so, else 0."""
    cdef size_t i = 0
    cdef unsigned char c, d
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        if c < 0xC2 or c > 0xF4:
            return 0
        if c < 0xE0:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return 0
            i += 2
            continue
        if c < 0xF0:
            if i + 2 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return 0
            d = s[i + 1]
            if (c == 0xE0 and d < 0xA0) or (c == 0xED and d > 0x9F):
                return 0
            i += 3
            continue
        if i + 3 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
            return 0
        d = s[i + 1]
        if (c == 0xF0 and d < 0x90) or (c == 0xF4 and d > 0x8F):
            return 0
        i += 4
    return 1


# What _close does with an ASCII byte: TEXT_OTHER (kept as it is), TEXT_SPACE (str.split's
# whitespace, Py_UNICODE_ISSPACE), TEXT_DIGIT (0-9, folded); TEXT_WIDE: a byte of a multi-byte
# character. Filled at import from Python's own whitespace test.
DEF TEXT_OTHER = 0
DEF TEXT_SPACE = 1
DEF TEXT_DIGIT = 2
DEF TEXT_WIDE = 3
cdef unsigned char TEXT_CLASS[256]


cdef void _fill_text_class() noexcept:
    cdef int c
    for c in range(256):
        if c >= 0x80:
            TEXT_CLASS[c] = TEXT_WIDE
        elif Py_UNICODE_ISSPACE(c):
            TEXT_CLASS[c] = TEXT_SPACE
        elif 48 <= c <= 57:
            TEXT_CLASS[c] = TEXT_DIGIT
        else:
            TEXT_CLASS[c] = TEXT_OTHER


_fill_text_class()


cdef inline Py_UCS4 _next_cp(const unsigned char *s, size_t *i) noexcept nogil:
    """The code point at s[i[0]] of valid UTF-8; advances i."""
    cdef unsigned char c = s[i[0]]
    cdef Py_UCS4 cp
    if c < 0x80:
        i[0] += 1
        return c
    if c < 0xE0:
        cp = ((c & 0x1F) << 6) | (s[i[0] + 1] & 0x3F)
        i[0] += 2
        return cp
    if c < 0xF0:
        cp = ((c & 0x0F) << 12) | ((s[i[0] + 1] & 0x3F) << 6) | (s[i[0] + 2] & 0x3F)
        i[0] += 3
        return cp
    cp = ((c & 0x07) << 18) | ((s[i[0] + 1] & 0x3F) << 12) | ((s[i[0] + 2] & 0x3F) << 6) | (s[i[0] + 3] & 0x3F)
    i[0] += 4
    return cp


cdef inline bint _is_cjk(Py_UCS4 cp) noexcept nogil:
    """blocks.py's _CJK ranges."""
    return (0x2E80 <= cp <= 0x9FFF) or (0xAC00 <= cp <= 0xD7AF) or (0xF900 <= cp <= 0xFAFF) or (
        0x3000 <= cp <= 0x303F) or (0xFF00 <= cp <= 0xFFEF)


cdef Py_ssize_t _stripped_len(const unsigned char *s, size_t n) noexcept nogil:
    """len(s.strip()) of valid UTF-8, in code points."""
    cdef size_t i = 0, start = 0, end = n
    cdef Py_ssize_t count = 0, first = -1, last = -1
    cdef uint64_t word
    cdef Py_UCS4 cp
    # ASCII whitespace off both ends; when an ASCII character that is not whitespace ends
    # both sides, the rest is counted by its lead bytes (no code point decoded)
    while start < end and TEXT_CLASS[s[start]] == TEXT_SPACE:
        start += 1
    while end > start and TEXT_CLASS[s[end - 1]] == TEXT_SPACE:
        end -= 1
    if start == end:
        return 0
    if s[start] < 0x80 and s[end - 1] < 0x80:
        i = start
        while i + 8 <= end:  # (eight ASCII bytes are eight code points)
            memcpy(&word, s + i, 8)
            if word & 0x8080808080808080ULL:
                break
            count += 8
            i += 8
        while i < end:
            count += (s[i] & 0xC0) != 0x80
            i += 1
        return count
    while i < n:
        cp = s[i]
        if cp < 0x80:
            i += 1
        else:
            cp = _next_cp(s, &i)
        if not Py_UNICODE_ISSPACE(cp):
            if first < 0:
                first = count
            last = count
        count += 1
    return 0 if first < 0 else last - first + 1


cdef struct Buf:
    unsigned char *data
    size_t length
    size_t size


cdef int _reserve(Buf *b, size_t extra) except -1:
    cdef size_t size
    cdef unsigned char *data
    if b.length + extra <= b.size:
        return 0
    size = b.size * 2 if b.size else 256
    while size < b.length + extra:
        size *= 2
    data = <unsigned char *>realloc(b.data, size)
    if data == NULL:
        raise MemoryError()
    b.data = data
    b.size = size
    return 0


cdef inline int _append(Buf *b, const unsigned char *s, size_t n) except -1:
    if n == 0:
        return 0
    if b.length + n > b.size:
        _reserve(b, n)
    memcpy(b.data + b.length, s, n)
    b.length += n
    return 0


cdef inline void _put(Buf *b, const unsigned char *s, size_t n) noexcept:
    """_append into room already reserved (no check: the caller reserved it)."""
    memcpy(b.data + b.length, s, n)
    b.length += n


cdef struct Frame:  # the enclosing block's state while a child block is open (blocks.py's tuple)
    Py_ssize_t block
    Py_ssize_t depth
    uint64_t sig
    Py_ssize_t link_chars
    uint64_t acc
    bint has
    bint in_link
    bint article
    Py_ssize_t tag  # the tag id of the block this frame closes


cdef struct Column:  # a block's numbers, made Python objects once the walk is done
    Py_ssize_t parent
    uint64_t sig
    uint64_t hash
    Py_ssize_t link
    Py_ssize_t size
    bint content
    bint in_article
    bint hint
    bint caption


cdef struct Attrs:  # what the walk reads of an element's attributes (the last of a name wins)
    bint any
    bint hiding  # one of hidden, aria-hidden, type, style
    bint hidden
    bint aria_true
    bint type_hidden
    pt_str *style
    pt_str *cls
    pt_str *ident
    pt_str *itemprop
    int images
    pt_str *image[MAX_IMAGE_ATTRS]
    bint image_set[MAX_IMAGE_ATTRS]


cdef pt_str EMPTY


cdef struct Facts:  # blocks.py's _class_facts of a (tag, class, id, itemprop)
    int chrome
    bint hint
    bint caption
    bint hidden
    bint popup
    PyObject *part  # bytes; borrowed from the memo: held until the next _facts


cdef struct FactsSlot:  # an entry of NativeWalk's memo of class facts
    uint64_t hash
    size_t key_at  # where its key is in the memo's key bytes
    size_t key_length
    Facts facts  # (facts.part NULL: a free slot; else a reference the memo owns)


class Unsupported(Exception):
    """A page this walk does not take (html/blocks.py walks it in Python)."""


def probe_layout(tree, LexborNode_type, text_id, attr_name_address, element_name_address):
    """Check the struct layouts above, LexborNode.new and the two name functions against
    selectolax's Python API on one parsed page (``tree``: it must hold an element with
    attributes, a custom element and a text node). Raises an AssertionError naming the first
    mismatch."""
    cdef void *vtab = PyCapsule_GetPointer(LexborNode_type.__dict__["__pyx_vtable__"], NULL)
    cdef void *attr_name = <void *><uintptr_t>attr_name_address
    cdef void *element_name = <void *><uintptr_t>element_name_address
    cdef const unsigned char *name
    cdef pt_node *node
    cdef pt_attr *attr
    cdef pt_chardata *text
    cdef size_t n = 0
    assert type(tree.body) is LexborNode_type, "LexborNode type"
    assert LexborNode_type.__basicsize__ == sizeof(pt_lexbor_node), "LexborNode object size"
    seen = 0
    stack = [tree.root]
    while stack:
        py = stack.pop()
        node = (<pt_lexbor_node *><PyObject *>py).node
        assert <uintptr_t>node == py.mem_id, "LexborNode.node"
        made = pt_call_new(vtab, node, (<pt_lexbor_node *><PyObject *>py).parser)
        assert type(made) is LexborNode_type and made.mem_id == py.mem_id and made.parser is py.parser, "LexborNode.new"
        if node.type == ELEMENT and node.local_name >= STATIC_TAGS:
            name = pt_call_name(element_name, node, &n)
            assert PyUnicode_DecodeUTF8(<char *>name, n, "replace") == py.tag, "element name"
            seen |= 4
        assert node.local_name == py.tag_id, "node tag id"
        for field, ptr in (("first_child", <uintptr_t>node.first_child), ("last_child", <uintptr_t>node.last_child),
                           ("next", <uintptr_t>node.next), ("prev", <uintptr_t>node.prev)):
            other = getattr(py, field)
            assert ptr == (other.mem_id if other is not None else 0), "node." + field
        assert (node.type == TEXT) == py.is_text_node and (node.type == ELEMENT) == py.is_element_node, "node type"
        if node.type == TEXT:
            text = <pt_chardata *>node
            assert node.local_name == text_id, "text tag id"
            assert PyUnicode_DecodeUTF8(<char *>text.data.data, text.data.length, "replace") == py.text_content, "text data"
            seen |= 1
        if node.type == ELEMENT and py.attributes:
            names, values = [], []
            attr = (<pt_element *>node).first_attr
            while attr != NULL:
                name = pt_call_name(attr_name, attr, &n)
                names.append(PyUnicode_DecodeUTF8(<char *>name, n, "replace"))
                values.append(None if attr.value == NULL or attr.value.data == NULL else
                              PyUnicode_DecodeUTF8(<char *>attr.value.data, attr.value.length, "replace"))
                attr = attr.next
            assert list(zip(names, values)) == list(py.attributes.items()), "attributes"
            seen |= 2
        child = py.last_child
        while child is not None:
            stack.append(child)
            child = child.prev
    assert seen == 7, "probe page without attributes, a custom element or text"


@cython.final
cdef class NativeWalk:
    """One process's native walk: the kinds of tag ids seen, the names of block tags, the
    attribute codes of static attribute ids, the memo of class facts (blocks.py's
    ``_class_facts`` by the raw bytes of tag, class, id and itemprop: a C hash table, so a
    hit makes no Python object). Build it with the
    constants and functions of html/blocks.py (``blocks._native_walk``)."""

    cdef void *vtab
    cdef void *attr_name
    cdef void *element_name
    cdef uintptr_t text_id, picture_id
    cdef signed char kinds[KINDS]
    cdef unsigned char flags[KINDS]  # 1: header/footer, 2: article/main, 4: html/body/main, 8: span, 16: nav/aside
    cdef object names  # tag id -> its name (list, for KINDS ids), for block tags
    cdef const char *name_ptr[KINDS]
    cdef Py_ssize_t name_len[KINDS]
    cdef signed char attr_codes[KINDS]
    cdef signed char head_attrs[KINDS]  # H_* code of each static attribute id (-1: not known yet)
    cdef signed char panel_attrs[KINDS]  # P_* bit of each static attribute id (0: none; -1: not known yet)
    cdef list attr_names  # bytes, by code
    cdef const char *attr_ptr[IMAGE + MAX_IMAGE_ATTRS]
    cdef size_t attr_len[IMAGE + MAX_IMAGE_ATTRS]
    cdef int attr_count
    cdef int image_of[IMAGE]  # the image attribute index of each of the walk's attributes (-1)
    cdef object node_type
    cdef int image_count
    cdef tuple image_keys  # IMAGE_ATTRS (str)
    cdef int src_of[5]  # (SOURCE_ATTRS) the image attribute index of each attribute an image's source is read from, in order (-1)
    cdef FactsSlot *facts_slots  # open addressing, by xxh64 of the key
    cdef size_t facts_mask
    cdef readonly Py_ssize_t facts_memo_entries
    cdef Py_ssize_t class_memo_size  # entries kept before the memo is emptied
    cdef Buf facts_keys  # the keys of the memo's entries, one after another
    cdef Buf key  # the key of the facts asked for
    cdef tuple naming_words, hint_parts, caption_parts, hiding_classes  # blocks._NAMING_PARTS, as bytes
    cdef Py_ssize_t longest_naming  # (naming_words[n]: the words of n letters)
    cdef tuple word_buckets  # [length * 26 + first letter - "a"]: ((word, W_* bits), ...) of blocks' word sets
    cdef tuple body_hints, builder_widgets, caption_names  # the literals of blocks._BODY_HINT, _BUILDER_WIDGET, _CAPTION_NAMES's first names
    cdef Py_ssize_t longest_word  # of word_buckets
    cdef object kind_of, class_facts, hidden_style, page_chrome, content_root, own_roots
    cdef object noscript_content, holds_the_page, disclosed, hover_card, chrome_tags
    cdef tuple wraps_the_page  # the selector spec of what makes a nav or an aside wrap the page
    cdef dict selectors  # selector -> (tag ids, [itemprop] in it): the ones ``first`` answers
    cdef tuple may_hold  # the spec of blocks._MAY_HOLD_CONTENT_OR_P, _holds_the_page's first test
    cdef uintptr_t summary_id
    cdef Buf *own  # per depth: the open block's own text
    cdef Buf *imgs  # per depth: the open block's image sources, joined by " "
    cdef Py_ssize_t *img_count
    cdef Py_ssize_t levels
    cdef uintptr_t *stack
    cdef Py_ssize_t stack_size
    cdef Frame *frames
    cdef Py_ssize_t frames_size
    cdef Column *columns  # per block of the page walked
    cdef Py_ssize_t columns_size
    cdef Buf scratch
    cdef Buf fold

    def __cinit__(self):
        cdef Py_ssize_t i
        for i in range(KINDS):
            self.kinds[i] = -1
            self.attr_codes[i] = -2
            self.head_attrs[i] = -1
            self.panel_attrs[i] = -1
            self.flags[i] = 0
            self.name_ptr[i] = NULL
            self.name_len[i] = 0

    def __init__(self, lexbor_node_type, attr_name_address, element_name_address, text_id, picture_id,
                 kind_of, class_facts, hidden_style, image_attrs, page_chrome, content_root,
                 noscript_content, holds_the_page, disclosed, hover_card, chrome_tags, wraps_the_page, class_memo_size,
                 selectors, naming_parts, may_hold, summary_id, class_words):
        self.vtab = PyCapsule_GetPointer(lexbor_node_type.__dict__["__pyx_vtable__"], NULL)
        self.attr_name = <void *><uintptr_t>attr_name_address
        self.element_name = <void *><uintptr_t>element_name_address
        self.text_id, self.picture_id = text_id, picture_id
        self.kind_of, self.class_facts, self.hidden_style = kind_of, class_facts, hidden_style
        self.page_chrome, self.content_root = page_chrome, content_root
        self.own_roots = frozenset(["html", "body", "main"])
        self.noscript_content, self.holds_the_page = noscript_content, holds_the_page
        self.disclosed = disclosed
        self.hover_card = hover_card
        self.chrome_tags = chrome_tags
        if len(image_attrs) > MAX_IMAGE_ATTRS:
            raise ValueError("too many image attributes")
        self.image_keys = tuple(image_attrs)
        self.image_count = len(image_attrs)
        self.attr_names = [b"class", b"id", b"itemprop", b"hidden", b"aria-hidden", b"type", b"style"]
        self.attr_names += [name.encode() for name in image_attrs]
        self.attr_count = len(self.attr_names)
        for i, name in enumerate(self.attr_names):
            self.attr_ptr[i] = <const char *><bytes>name
            self.attr_len[i] = len(<bytes>name)
        for i in range(IMAGE):
            self.image_of[i] = image_attrs.index(self.attr_names[i].decode()) if self.attr_names[i].decode() in image_attrs else -1
        for i, name in enumerate(SOURCE_ATTRS):
            self.src_of[i] = image_attrs.index(name) if name in image_attrs else -1
        self.node_type = lexbor_node_type
        self.names = [None] * KINDS
        self.class_memo_size = class_memo_size
        slots = 64
        while slots < 2 * (class_memo_size + 1):
            slots *= 2
        self.facts_slots = <FactsSlot *>calloc(slots, sizeof(FactsSlot))
        if self.facts_slots == NULL:
            raise MemoryError()
        self.facts_mask = slots - 1
        for ids, _, _ in selectors.values():
            if len(ids) > MAX_FIRST_TAGS or any(tid >= KINDS for tid in ids):
                raise ValueError("a selector of too many tags, or of tags that are not static")
        self.selectors = dict(selectors)
        if noscript_content not in self.selectors or wraps_the_page not in self.selectors:
            raise ValueError("the noscript content or the page wrapper selector is not one of the selectors")
        self.wraps_the_page = self.selectors[wraps_the_page]
        if may_hold not in self.selectors:
            raise ValueError("the selector of _holds_the_page's first test is not one of the selectors")
        self.may_hold = self.selectors[may_hold]
        self.summary_id = summary_id
        words, hint_parts, caption_parts, hiding_classes = [sorted(name.encode("ascii") for name in names) for names in naming_parts]
        self.longest_naming = max(len(word) for word in words)
        self.naming_words = tuple(tuple(word for word in words if len(word) == n) for n in range(self.longest_naming + 1))
        self.hint_parts, self.caption_parts, self.hiding_classes = tuple(hint_parts), tuple(caption_parts), tuple(hiding_classes)
        words, self.body_hints, self.builder_widgets, self.caption_names = class_words
        if not all(word and all(97 <= c <= 122 for c in word) for word in words):
            raise ValueError("a class word that is not lowercase ASCII letters")
        self.longest_word = max(len(word) for word in words)
        # (by length and first letter: most words of a class name meet an empty bucket, no bytes made)
        self.word_buckets = tuple(tuple((word, bits) for word, bits in sorted(words.items()) if len(word) * 26 + word[0] - 97 == i)
                                  for i in range((self.longest_word + 1) * 26))

    def __dealloc__(self):
        cdef Py_ssize_t i
        for i in range(self.levels):
            free(self.own[i].data)
            free(self.imgs[i].data)
        free(self.own)
        free(self.imgs)
        free(self.img_count)
        free(self.stack)
        free(self.frames)
        free(self.columns)
        free(self.scratch.data)
        free(self.fold.data)
        if self.facts_slots != NULL:
            self._clear_facts()
            free(self.facts_slots)
        free(self.facts_keys.data)
        free(self.key.data)

    cdef void _clear_facts(self) noexcept:
        """Empty the memo of class facts."""
        cdef size_t i
        for i in range(self.facts_mask + 1):
            if self.facts_slots[i].facts.part != NULL:
                Py_DECREF(<object>self.facts_slots[i].facts.part)
                self.facts_slots[i].facts.part = NULL
        self.facts_memo_entries = 0
        self.facts_keys.length = 0

    cdef object _node(self, pt_node *node, object parser):
        """selectolax's LexborNode of a node (LexborNode.new)."""
        return pt_call_new(self.vtab, node, <PyObject *>parser)

    cdef int _levels(self, Py_ssize_t depth) except -1:
        """Text buffers for blocks down to ``depth``."""
        cdef Py_ssize_t n = self.levels, i
        if depth < n:
            return 0
        while n <= depth:
            n = n * 2 if n else 64
        self.own = <Buf *>realloc(self.own, n * sizeof(Buf))
        self.imgs = <Buf *>realloc(self.imgs, n * sizeof(Buf))
        self.img_count = <Py_ssize_t *>realloc(self.img_count, n * sizeof(Py_ssize_t))
        if self.own == NULL or self.imgs == NULL or self.img_count == NULL:
            raise MemoryError()
        for i in range(self.levels, n):
            self.own[i].data = NULL
            self.own[i].length = self.own[i].size = 0
            self.imgs[i].data = NULL
            self.imgs[i].length = self.imgs[i].size = 0
            self.img_count[i] = 0
        self.levels = n
        return 0

    cdef int _kind(self, pt_node *node, object parser) except -2:
        """The walk's rule for a node (blocks.py's _kind_of of its tag, memoised by tag id)."""
        cdef uintptr_t tid = node.local_name
        cdef size_t n = 0
        cdef const unsigned char *name
        cdef int kind
        if tid < KINDS:
            kind = self.kinds[tid]
            if kind >= 0:
                return kind
            tag = self._node(node, parser).tag
            kind = self.kind_of(tag)
            self.kinds[tid] = kind
            if kind == K_BLOCK or kind == K_SPAN:  # (a span's name keys its class facts too)
                encoded = tag.encode("utf-8", "surrogatepass")
                self.names[tid] = (tag, encoded)
                self.name_ptr[tid] = encoded
                self.name_len[tid] = len(encoded)
                self.flags[tid] = (1 if tag in self.page_chrome else 0) | (2 if tag in self.content_root else 0) | (
                    4 if tag in self.own_roots else 0) | (8 if tag == "span" else 0) | (16 if tag in self.chrome_tags else 0)
            return kind
        if tid < STATIC_TAGS:  # (lexbor 3.1 has no static ids this high)
            raise Unsupported(f"tag id {tid}")
        if node.type != ELEMENT:
            return K_SKIP  # (blocks.py: a tag of None)
        # A custom element (<my-widget>, <o:p>): its name is none of the walk's (probe checks).
        name = pt_call_name(self.element_name, node, &n)
        if name == NULL or (n and name[0] == 45):
            return K_SKIP  # (None, or a "-..." name)
        return K_INLINE

    cdef int _attr_code(self, pt_attr *attr) except -2:
        cdef uintptr_t aid = attr.node.local_name
        cdef int code, i
        cdef size_t n = 0
        cdef const unsigned char *name
        cdef bint static = attr.qualified_name == 0 and aid < KINDS
        if static and self.attr_codes[aid] != -2:
            return self.attr_codes[aid]
        name = pt_call_name(self.attr_name, attr, &n)
        code = A_NONE
        if name != NULL:
            for i in range(self.attr_count):
                if self.attr_len[i] == n and memcmp(self.attr_ptr[i], name, n) == 0:
                    code = i
                    break
        if static:
            self.attr_codes[aid] = code
        return code

    cdef pt_node *_document(self, root) except NULL:
        """The document node of ``root`` (a LexborNode): where tree.css searches from."""
        cdef pt_node *top
        if type(root) is not self.node_type:
            raise Unsupported("not a LexborNode")
        top = (<pt_lexbor_node *><PyObject *>root).node
        while top.parent != NULL:
            top = top.parent
        return top

    cdef int _name_code(self, pt_attr *attr, signed char *memo, name_code_of code_of) noexcept:
        """``code_of`` the attribute's name (0 when it has none), kept in ``memo`` (-1: not
        known yet) by static attribute id: most attributes are static, so their names are
        compared once a walker."""
        cdef uintptr_t aid = attr.node.local_name
        cdef bint static = attr.qualified_name == 0 and aid < KINDS
        cdef size_t n = 0
        cdef const unsigned char *name
        cdef int code = 0
        if static and memo[aid] >= 0:
            return memo[aid]
        name = pt_call_name(self.attr_name, attr, &n)
        if name != NULL:
            code = code_of(name, n)
        if static:
            memo[aid] = code
        return code

    cdef int _head_attr(self, pt_attr *attr) noexcept:
        """H_* code of an attribute's name (ASCII case ignored: a superset of lexbor's match)."""
        return self._name_code(attr, self.head_attrs, _head_code)

    def head_candidates(self, root, uintptr_t title_id, uintptr_t meta_id, uintptr_t script_id, list sure=None):
        """The elements of ``root``'s document (``root``: a LexborNode), in document order, that
        noise._HEAD_TAGS may match: every <title>; a <meta> whose name or property is
        description / og:description / og:title; a <script> of type application/ld+json;
        any element whose itemtype holds schema.org/product (values and names with ASCII
        case ignored: more than the selectors' own matches, which noise._head_nodes then
        asks each candidate). One pass of C over the DOM instead of lexbor's CSS engine.
        ``sure``: a list given gets, for each candidate, whether _HEAD_TAGS matches it for
        certain (a title; a value with the selectors' own case: noise._head_nodes then need not
        ask; a value that matches only with case ignored is left to lexbor's matching rules)."""
        cdef pt_node *top
        cdef pt_node *node
        cdef pt_attr *attr
        cdef pt_str *v
        cdef uintptr_t tid, aid
        cdef bint take, certain
        cdef int code
        cdef list out = []
        top = self._document(root)
        parser = <object>(<pt_lexbor_node *><PyObject *>root).parser
        node = top
        while node != NULL:
            if node.type == ELEMENT:
                tid = node.local_name
                take = certain = tid == title_id
                attr = (<pt_element *>node).first_attr
                while attr != NULL and not take:
                    aid = attr.node.local_name  # (the name first: most attributes end there)
                    if attr.qualified_name == 0 and aid < KINDS and self.head_attrs[aid] == H_OTHER:
                        attr = attr.next
                        continue
                    code = self._head_attr(attr)
                    v = attr.value
                    if code != H_OTHER and v != NULL and v.data != NULL:
                        if code == H_ITEMTYPE:
                            take = _icontains(v.data, v.length, b"schema.org/product", 18)
                            certain = take and _contains(v.data, v.length, b"schema.org/Product", 18)
                        elif tid == meta_id and (code == H_NAME or code == H_PROPERTY):
                            take = (_ieq(v.data, v.length, b"description", 11) or _ieq(v.data, v.length, b"og:description", 14)
                                    or _ieq(v.data, v.length, b"og:title", 8))
                            if take and code == H_NAME:
                                certain = _eq(v.data, v.length, b"description", 11) or _eq(v.data, v.length, b"Description", 11)
                            elif take:
                                certain = _eq(v.data, v.length, b"og:description", 14) or _eq(v.data, v.length, b"og:title", 8)
                        elif tid == script_id and code == H_TYPE:
                            take = _ieq(v.data, v.length, b"application/ld+json", 19)
                            certain = take and _eq(v.data, v.length, b"application/ld+json", 19)
                    attr = attr.next
                if take:
                    out.append(self._node(node, parser))
                    if sure is not None:
                        sure.append(certain)
            node = _preorder_next(node, top)
        return out

    def first(self, node, str selector):
        """``node.css_first(selector)`` (the first element of ``node``'s subtree, ``node``
        included, in document order, that ``selector`` matches) for the selectors given at init,
        without lexbor parsing the selector at each call (~7 us): a list of tag names and
        ``[itemprop]`` or ``[itemprop=value]``, which blocks._simple_selector compiles to (tag
        ids, itemprop, its value or None)."""
        if type(node) is not self.node_type:
            raise Unsupported("not a LexborNode")
        return self._first((<pt_lexbor_node *><PyObject *>node).node, <object>(<pt_lexbor_node *><PyObject *>node).parser,
                           self.selectors[selector])

    cdef object _first(self, pt_node *top, object parser, tuple spec):
        cdef uintptr_t ids[MAX_FIRST_TAGS]
        cdef tuple tags = spec[0]
        cdef bint itemprop = spec[1]
        cdef bytes value = spec[2]  # (None: any value)
        cdef pt_str *v
        cdef Py_ssize_t n = len(tags), i
        cdef pt_node *node = top
        cdef pt_attr *attr
        for i in range(n):
            ids[i] = tags[i]
        while node != NULL:
            if node.type == ELEMENT:
                for i in range(n):
                    if node.local_name == ids[i]:
                        return self._node(node, parser)
                if itemprop:
                    attr = (<pt_element *>node).first_attr
                    while attr != NULL:
                        if self._attr_code(attr) == A_ITEMPROP:
                            if value is None:
                                return self._node(node, parser)
                            v = attr.value  # (compared as written: lexbor's [itemprop=x] minds case)
                            if (v != NULL and v.data != NULL and v.length == <size_t>len(value)
                                    and memcmp(v.data, <const char *>value, v.length) == 0):
                                return self._node(node, parser)
                        attr = attr.next
            node = _preorder_next(node, top)
        return None

    def tables_holding(self, root, uintptr_t table_id, uintptr_t cell_id):
        """The elements of ``root``'s document (``root``: a LexborNode) whose tag id is
        ``table_id`` and that hold an element whose tag id is ``cell_id``, in document order
        (what ``[t for t in tree.css("table") if t.css_first("th")]`` lists, in one pass: the
        tables open around a cell are marked, innermost first, down to the first one already
        marked, which has all those around it marked too)."""
        cdef pt_node *top
        cdef pt_node *node
        cdef Py_ssize_t i
        cdef uintptr_t inner = 0  # the innermost open table (0: none)
        cdef list tables = [], stack = []
        cdef bytearray marked = bytearray()
        top = self._document(root)
        parser = <object>(<pt_lexbor_node *><PyObject *>root).parser
        node = top
        while node != NULL:
            if node.type == ELEMENT:
                if node.local_name == table_id:
                    stack.append(len(tables))
                    tables.append(<uintptr_t>node)
                    marked.append(0)
                    inner = <uintptr_t>node
                elif node.local_name == cell_id:
                    for i in reversed(stack):
                        if marked[i]:
                            break
                        marked[i] = 1
            if node.first_child != NULL:
                node = node.first_child
                continue
            while True:  # leave the node, and each parent whose last child it was
                if <uintptr_t>node == inner:
                    stack.pop()
                    inner = tables[stack[len(stack) - 1]] if stack else 0
                if node == top:
                    node = NULL
                    break
                if node.next != NULL:
                    node = node.next
                    break
                node = node.parent
        return [self._node(<pt_node *><uintptr_t>tables[i], parser) for i in range(len(tables)) if marked[i]]

    cdef Py_ssize_t _ink(self, pt_node *top) noexcept:
        """blocks._ink of an element's text as selectolax's ``text(deep=True)`` gives it (its
        descendant text nodes, joined): its code points but spaces, newlines, tabs and carriage
        returns. -1 when a text is not UTF-8 (selectolax replaces its bytes: blocks.py counts)."""
        cdef pt_node *node = top.first_child
        cdef pt_chardata *t
        cdef const unsigned char *s
        cdef Py_ssize_t ink = 0
        cdef size_t i
        cdef unsigned char c
        while node != NULL:
            if node.local_name == self.text_id:
                t = <pt_chardata *>node
                s = t.data.data
                if s != NULL:
                    if not _utf8_body_valid(s, t.data.length):
                        return -1
                    for i in range(t.data.length):
                        c = s[i]
                        if (c & 0xC0) != 0x80 and c != 32 and c != 10 and c != 9 and c != 13:
                            ink += 1
            node = _preorder_next(node, top)
        return ink

    cdef pt_node *_element(self, node) except NULL:
        if type(node) is not self.node_type:
            raise Unsupported("not a LexborNode")
        return (<pt_lexbor_node *><PyObject *>node).node

    def ink(self, node):
        """_ink of a LexborNode's ``text(deep=True)``; -1 when a text is not UTF-8."""
        return self._ink(self._element(node))

    def visible_ink(self, node, tuple code_ids):
        """blocks._visible_ink of a LexborNode: its ink, less that of each element of its subtree
        (itself included, as ``css`` finds them) whose tag id is one of ``code_ids``; -1 when a
        text is not UTF-8."""
        cdef pt_node *top = self._element(node)
        cdef pt_node *e = top
        cdef Py_ssize_t ink = self._ink(top), inside
        cdef uintptr_t ids[8]
        cdef Py_ssize_t n = len(code_ids), i
        if n > 8:
            raise ValueError("more than 8 tag ids")
        for i in range(n):
            ids[i] = code_ids[i]
        if ink < 0:
            return -1
        while e != NULL:
            if e.type == ELEMENT:
                for i in range(n):
                    if e.local_name == ids[i]:
                        inside = self._ink(e)
                        if inside < 0:
                            return -1
                        ink -= inside
                        break
            e = _preorder_next(e, top)
        return ink

    def paragraphs(self, node, Py_ssize_t many, Py_ssize_t least, uintptr_t p_id, uintptr_t a_id):
        """blocks._paragraphs of a LexborNode: whether ``many`` of the elements of its subtree
        (itself included) whose tag id is ``p_id`` have ``least`` ink and, in the elements
        inside them whose tag id is ``a_id``, no more than 0.3 of it. None when a text is not
        UTF-8 (blocks.py counts)."""
        cdef pt_node *top = self._element(node)
        cdef pt_node *p = top
        cdef pt_node *a
        cdef Py_ssize_t good = 0, chars, links, inside
        while p != NULL:
            if p.type == ELEMENT and p.local_name == p_id:
                chars = self._ink(p)
                if chars < 0:
                    return None
                if chars >= least:
                    links = 0
                    a = p
                    while a != NULL:
                        if a.type == ELEMENT and a.local_name == a_id:
                            inside = self._ink(a)
                            if inside < 0:
                                return None
                            links += inside
                        a = _preorder_next(a, p)
                    if <double>links <= 0.3 * <double>chars:
                        good += 1
                        if good >= many:
                            return True
            p = _preorder_next(p, top)
        return False

    cdef int _attrs(self, pt_node *node, Attrs *a, bint images) except -1:
        """Read an element's attributes into ``a``; ``images``: the image attributes too."""
        cdef pt_attr *attr = (<pt_element *>node).first_attr
        cdef pt_str *value
        cdef int code, i
        a.any = attr != NULL
        a.hiding = a.hidden = a.aria_true = a.type_hidden = False
        a.style = a.cls = a.ident = a.itemprop = NULL
        if images:
            for i in range(self.image_count):
                a.image_set[i] = False
        while attr != NULL:
            code = self._attr_code(attr)
            if code >= 0:
                value = attr.value
                if value != NULL and value.data == NULL:
                    value = NULL
                if code == A_CLASS:
                    a.cls = value
                elif code == A_ID:
                    a.ident = value
                elif code == A_ITEMPROP:
                    a.itemprop = value
                elif code == A_HIDDEN:
                    a.hiding = a.hidden = True
                elif code == A_ARIA:
                    a.hiding = True
                    a.aria_true = value != NULL and value.length == 4 and memcmp(value.data, b"true", 4) == 0
                elif code == A_TYPE:
                    a.hiding = True
                    a.type_hidden = value != NULL and value.length == 6 and memcmp(value.data, b"hidden", 6) == 0
                elif code == A_STYLE:
                    a.hiding = True
                    a.style = value
                if images:
                    i = code - IMAGE if code >= IMAGE else self.image_of[code]  # (style is both)
                    if i >= 0:
                        a.image_set[i] = True
                        a.image[i] = value
            attr = attr.next
        return 0

    cdef bint _hidden(self, Attrs *a) except -1:
        """blocks.is_hidden of the attributes (the style by blocks.py's regex)."""
        cdef size_t i
        cdef const unsigned char *s
        if a.hidden or a.aria_true or a.type_hidden:
            return True
        if a.style == NULL or a.style.length == 0:
            return False
        s = a.style.data
        for i in range(a.style.length):
            if s[i] >= 0x80:
                break
        else:  # ASCII: the regex needs "display" or "visibility", in any case
            if not _contains_ci(s, a.style.length, b"display", 7) and not _contains_ci(s, a.style.length, b"visibility", 10):
                return False
        return bool(self.hidden_style(_str(a.style)))

    cdef int _piece(self, Buf *own, const unsigned char *s, size_t n, Py_ssize_t *link_chars, bint in_link) except -1:
        """Add a text node's data to the open block's own text (blocks.py's own.append(s))."""
        if _utf8_body_valid(s, n):
            _append(own, s, n)
            if in_link:
                link_chars[0] += _stripped_len(s, n)
            return 0
        text = PyUnicode_DecodeUTF8(<char *>s, n, "replace")  # as selectolax decodes it
        encoded = text.encode("utf-8")
        _append(own, encoded, len(encoded))
        if in_link:
            link_chars[0] += len(text.strip())
        return 0

    cdef int _str_piece(self, Buf *own, str text) except -1:
        cdef Py_ssize_t n = 0
        cdef const char *s = PyUnicode_AsUTF8AndSize(text, &n)
        _append(own, <const unsigned char *>s, n)
        return 0

    cdef inline int _push(self, Py_ssize_t *top, uintptr_t entry) except -1:
        cdef Py_ssize_t size
        if top[0] == self.stack_size:
            size = self.stack_size * 2 if self.stack_size else 4096
            self.stack = <uintptr_t *>realloc(self.stack, size * sizeof(uintptr_t))
            if self.stack == NULL:
                raise MemoryError()
            self.stack_size = size
        self.stack[top[0]] = entry
        top[0] += 1
        return 0

    cdef int _push_children(self, pt_node *node, Py_ssize_t *top) except -1:
        cdef pt_node *child = node.last_child
        while child != NULL:
            self._push(top, <uintptr_t>child)
            child = child.prev
        return 0

    def walk(self, root, Py_ssize_t max_depth, bint noscript, out, list spans, list hidden, frozenset shown,
             bint image_attrs=True):
        """Fill ``out`` (a blocks.Blocks) with the blocks under ``root`` (a LexborNode), as
        ``BlockWalker.walk_reference`` does (``image_attrs``: an image's raw attributes, else
        None beside its block); the noscripts and comment boxes held back (unless
        ``noscript``) are returned as LexborNodes, the spans named as captions are added to
        ``spans`` as (block, LexborNode) (for blocks._span_captions), and the hidden blocks not
        entered to ``hidden`` (for blocks._hidden_pages); the hidden blocks whose node
        addresses (mem_id) are in ``shown`` are entered."""
        cdef object parser
        cdef pt_node *node
        cdef pt_node *child
        cdef uintptr_t entry, tid
        cdef Py_ssize_t top = 0, nframes = 0, b, n
        cdef Py_ssize_t block = -1, depth = -1, link_chars = 0, link, size
        cdef uint64_t sig = 0, acc = 0, h, child_sig
        cdef bint has = False, in_link = False, article = False, content, is_hint, is_caption
        cdef int kind, chrome
        cdef Attrs a
        cdef Facts facts
        cdef Frame *f
        cdef pt_chardata *t
        cdef Buf *own = NULL
        cdef list tags = [], texts = [], images = [], copies = []
        cdef Column *col
        cdef list page_chars = []  # the page's text length, once a chrome box asks
        if type(root) is not self.node_type or max_depth < 0:
            raise Unsupported("not a LexborNode, or a negative max_depth")
        parser = <object>(<pt_lexbor_node *><PyObject *>root).parser
        self._push(&top, <uintptr_t>(<pt_lexbor_node *><PyObject *>root).node)
        while top:
            top -= 1
            entry = self.stack[top]
            if entry == LINK_END:
                in_link = False
                continue
            if entry == BLOCK_END:
                nframes -= 1
                f = &self.frames[nframes]
                b = block
                h = self._close(b, f.tag, own, depth, acc, has, link_chars, texts, &self.columns[b])
                self.columns[b].hash = h
                content = self.columns[b].content
                block, depth, sig, link_chars, acc = f.block, f.depth, f.sig, f.link_chars, f.acc
                has, in_link, article = f.has, f.in_link, f.article
                own = &self.own[depth] if depth >= 0 else NULL
                if block >= 0 and content:
                    acc = acc * 1000003ULL + h
                    has = True
                continue
            node = <pt_node *>entry
            tid = node.local_name
            if tid == self.text_id:
                if block >= 0:
                    t = <pt_chardata *>node
                    if t.data.data != NULL and t.data.length:
                        self._piece(own, t.data.data, t.data.length, &link_chars, in_link)
                continue
            kind = self._kind(node, parser)
            if kind == K_SKIP:
                continue
            if kind == K_INLINE:
                pass
            elif kind == K_NOSCRIPT:
                if self._first(node, parser, self.selectors[self.noscript_content]) is None:
                    continue
                py = self._node(node, parser)
                if not noscript:
                    copies.append(py)
                    continue
            elif kind == K_BLOCK:
                if not article and self.flags[tid] & 1:
                    continue
                if self.flags[tid] & 16 and self._first(node, parser, self.wraps_the_page) is None:
                    continue  # nav, aside: chrome by their tag, unless they wrap the page (blocks._chrome_tag_wraps)
                self._attrs(node, &a, False)
                if a.any:
                    if a.hiding and self._hidden(&a):
                        py = self._node(node, parser)
                        if (self._not_disclosed(node, &a) or not self.disclosed(py)) and not (shown and <uintptr_t>node in shown):
                            hidden.append(py)  # (a hidden tab panel is walked: blocks._disclosed_box)
                            continue
                    self._facts(tid, &a, &facts)
                    if facts.hidden and not self.flags[tid] & 4:
                        continue  # hidden by its class (blocks._class_hidden)
                    chrome = facts.chrome
                    is_hint = facts.hint
                    part = <object>facts.part  # (a reference of its own: the memo may empty)
                    is_caption = facts.caption
                    if chrome and not self.flags[tid] & 4:
                        # blocks._holds_the_page; its first test made here while no wrapper is
                        # noted (page_chars[1]): a box holding no h1, main, itemprop or p is not one
                        if (len(page_chars) < 2 and self._first(node, parser, self.may_hold) is None) or not self.holds_the_page(
                                self._node(node, parser), root, page_chars, chrome, self.first, self):
                            if chrome != 2:  # blocks.py's _COMMENTS
                                continue
                            if not noscript:
                                copies.append(self._node(node, parser))
                                continue
                else:
                    is_hint = is_caption = False
                    part = None
                if depth >= max_depth:  # too deep: the rest is flat text of the current block
                    s = self._node(node, parser).text(deep=True, separator=" ")
                    if s:
                        self._str_piece(own, " " + s + " ")
                    continue
                if nframes == self.frames_size:
                    self.frames_size = self.frames_size * 2 if self.frames_size else 256
                    self.frames = <Frame *>realloc(self.frames, self.frames_size * sizeof(Frame))
                    if self.frames == NULL:
                        raise MemoryError()
                f = &self.frames[nframes]
                nframes += 1
                f.block, f.depth, f.sig, f.link_chars, f.acc = block, depth, sig, link_chars, acc
                f.has, f.in_link, f.article, f.tag = has, in_link, article, tid
                self._push(&top, BLOCK_END)
                child_sig = self._sig(sig, tid, part)
                article = article or (self.flags[tid] & 2) != 0
                n = len(tags)
                if n == self.columns_size:
                    size = self.columns_size * 2 if self.columns_size else 1024
                    col = <Column *>realloc(self.columns, size * sizeof(Column))
                    if col == NULL:
                        raise MemoryError()
                    self.columns, self.columns_size = col, size
                col = &self.columns[n]
                col.parent, col.sig, col.in_article, col.hint, col.caption = block, child_sig, article, is_hint, is_caption
                tags.append(self.names[tid][0])
                texts.append(None)
                block = n
                depth += 1
                sig = child_sig
                link_chars = 0
                acc = 0
                has = False
                self._levels(depth)
                own = &self.own[depth]
                own.length = 0
                self.imgs[depth].length = 0
                self.img_count[depth] = 0
            elif kind == K_A:
                if not in_link:
                    child = node.last_child
                    if child != NULL and child.prev == NULL and child.type == TEXT:
                        # The common <a>words</a>: read its text here, no context to push.
                        if block >= 0:
                            t = <pt_chardata *>child
                            if t.data.data != NULL and t.data.length:
                                self._piece(own, t.data.data, t.data.length, &link_chars, True)
                        continue
                    self._push(&top, LINK_END)
                    in_link = True
                    self._push_children(node, &top)
                    continue
            elif kind == K_SPAN:
                self._attrs(node, &a, False)
                if a.any:
                    if a.hiding and self._hidden(&a):
                        continue
                    if block >= 0 and (a.cls != NULL or a.ident != NULL):
                        self._facts(tid, &a, &facts)
                        if facts.popup and tags[block] == "p" and self.hover_card(self._node(node, parser)):
                            continue  # a card shown on hover (blocks._hover_card)
                        if facts.caption and self.flags[tid] & 8:  # a span named as a caption (blocks._span_captions)
                            spans.append((block, self._node(node, parser)))
            elif kind == K_CELL:
                if block >= 0:  # cells are inline: a table row reads as one line
                    _append(own, b" ", 1)
            elif kind == K_BR:
                if block >= 0:
                    _append(own, b" ", 1)
                continue
            elif kind == K_IMG or (node.parent != NULL and node.parent.type == ELEMENT
                                   and node.parent.local_name == self.picture_id):  # K_SOURCE
                if block >= 0:
                    if self._image(node, &a, block, depth, images, image_attrs):
                        has = True
                continue
            # Children in reverse, so they come off the stack in document order; a lone text
            # child (<p>words</p>, <b>words</b>) is read here instead.
            child = node.last_child
            if child == NULL:
                continue
            if child.prev == NULL and child.local_name == self.text_id:
                if block >= 0:
                    t = <pt_chardata *>child
                    if t.data.data != NULL and t.data.length:
                        self._piece(own, t.data.data, t.data.length, &link_chars, in_link)
                continue
            self._push_children(node, &top)
        n = len(tags)
        col = self.columns
        out.tag, out.text = tags, texts
        out.parent = [col[b].parent for b in range(n)]
        out.sig = [col[b].sig for b in range(n)]
        out.hash = [col[b].hash for b in range(n)]
        out.link = [col[b].link for b in range(n)]
        out.size = [col[b].size for b in range(n)]
        out.content = [col[b].content for b in range(n)]
        out.in_article = [col[b].in_article for b in range(n)]
        out.hint = [col[b].hint for b in range(n)]
        out.caption = [col[b].caption for b in range(n)]
        out.images = images
        return copies

    cdef int _panel_attr(self, pt_attr *attr) noexcept:
        """P_* bit of an attribute's name (as written: blocks.py reads them from the attribute
        dict), 0 for the others."""
        return self._name_code(attr, self.panel_attrs, _panel_code)

    cdef int _panel_attrs(self, pt_node *node) noexcept:
        """The P_* bits of an element's attributes."""
        cdef pt_attr *attr = (<pt_element *>node).first_attr
        cdef int bits = 0
        while attr != NULL:
            bits |= self._panel_attr(attr)
            attr = attr.next
        return bits

    cdef int _toggle_attrs(self, pt_node *node) noexcept:
        """The P_* bits of an element and of its element children and theirs: of all the boxes
        blocks._toggle_boxes may give (it stops at TOGGLE_BOXES of them)."""
        cdef int bits = self._panel_attrs(node)
        cdef pt_node *child = node.first_child
        cdef pt_node *grandchild
        while child != NULL:
            if child.type == ELEMENT:
                bits |= self._panel_attrs(child)
                grandchild = child.first_child
                while grandchild != NULL:
                    if grandchild.type == ELEMENT:
                        bits |= self._panel_attrs(grandchild)
                    grandchild = grandchild.next
            child = child.next
        return bits

    cdef bint _not_disclosed(self, pt_node *node, Attrs *a) noexcept:
        """Whether blocks._disclosed_box surely says a hidden box is not walked, read in C: it has
        no role (_DISCLOSURE_ROLES, a dialog), no aria-hidden="true" (_slide), no id a streamed
        segment's, an ASCII class and id without the letters of a _DISCLOSURE_WORDS word, and the
        element before it is no <summary> and holds no toggle (aria-expanded; with an id,
        aria-controls, there or in the element before its parent). False: blocks.py decides."""
        cdef pt_str *ident = a.ident if a.ident != NULL and a.ident.length else NULL
        cdef pt_node *sibling
        cdef int toggles = P_EXPANDED | (P_CONTROLS if ident != NULL else 0)
        if a.aria_true or self._panel_attrs(node) & P_ROLE:
            return False
        if ident != NULL:
            if ident.length >= 2 and (ident.data[0] == 83 or ident.data[0] == 80) and ident.data[1] == 58:  # "S:", "P:"
                return False
            if not _ascii(ident.data, ident.length) or _disclosure_letters(ident.data, ident.length):
                return False
        if a.cls != NULL and (not _ascii(a.cls.data, a.cls.length) or _disclosure_letters(a.cls.data, a.cls.length)):
            return False
        sibling = _element_before(node)
        if sibling != NULL and (sibling.local_name == self.summary_id or self._toggle_attrs(sibling) & toggles):
            return False
        if ident != NULL and node.parent != NULL:
            sibling = _element_before(node.parent)
            if sibling != NULL and self._toggle_attrs(sibling) & P_CONTROLS:
                return False
        return True

    def not_disclosed(self, node):
        """_not_disclosed of a LexborNode (for the tests: blocks._disclosed_box is its reference)."""
        cdef Attrs a
        cdef pt_node *n
        if type(node) is not self.node_type:
            raise Unsupported("not a LexborNode")
        n = (<pt_lexbor_node *><PyObject *>node).node
        if n.type != ELEMENT:
            raise Unsupported("not an element")
        self._attrs(n, &a, False)
        return self._not_disclosed(n, &a)

    cdef int _facts(self, uintptr_t tid, Attrs *a, Facts *out) except -1:
        """blocks.py's _class_facts(tag, class, id, itemprop) into ``out``, memoised by their
        bytes (tag id, the three lengths, the three values): a hit reads a C table, no Python
        object made. A miss is made by _plain_facts (names that name nothing, most of them),
        else _ascii_facts, else by a Python call."""
        cdef Buf *k = &self.key
        cdef unsigned int lengths[4]
        cdef pt_str *parts[4]
        cdef int i
        cdef uint64_t h
        cdef size_t at
        cdef FactsSlot *slot
        parts[0], parts[1], parts[2], parts[3] = &EMPTY, a.cls, a.ident, a.itemprop
        for i in range(1, 4):
            if parts[i] == NULL:
                parts[i] = &EMPTY
        k.length = 0
        lengths[0] = <unsigned int>tid
        for i in range(1, 4):
            lengths[i] = parts[i].length
        _append(k, <const unsigned char *>lengths, sizeof(lengths))
        for i in range(1, 4):
            _append(k, parts[i].data, parts[i].length)
        h = xxh64(k.data, k.length)
        at = h & self.facts_mask
        while True:
            slot = &self.facts_slots[at]
            if slot.facts.part == NULL:
                break
            if (slot.hash == h and slot.key_length == k.length
                    and memcmp(self.facts_keys.data + slot.key_at, k.data, k.length) == 0):
                out[0] = slot.facts
                return 0
            at = (at + 1) & self.facts_mask
        facts = self._plain_facts(self.name_ptr[tid], self.name_len[tid], parts[1], parts[2], parts[3])
        if facts is None:
            facts = self._ascii_facts(self.name_ptr[tid], self.name_len[tid], parts[1], parts[2], parts[3])
        if facts is None:  # (not ASCII, a popup or a hiding class: blocks.py decides)
            chrome, hint, part, caption, hidden, popup = self.class_facts(self.names[tid][0], _str(a.cls), _str(a.ident), _str(a.itemprop))
            facts = (chrome, hint, part.encode("utf-8", "surrogatepass"), caption, hidden, popup)
        if self.facts_memo_entries >= self.class_memo_size:
            self._clear_facts()
            at = h & self.facts_mask
            while self.facts_slots[at].facts.part != NULL:
                at = (at + 1) & self.facts_mask
        slot = &self.facts_slots[at]
        part = (<tuple>facts)[2]
        if type(part) is not bytes:
            raise TypeError("a part that is not bytes")
        slot.facts.chrome = (<tuple>facts)[0]
        slot.facts.hint = (<tuple>facts)[1]
        slot.facts.caption = (<tuple>facts)[3]
        slot.facts.hidden = (<tuple>facts)[4]
        slot.facts.popup = (<tuple>facts)[5]
        slot.hash = h
        slot.key_at = self.facts_keys.length
        slot.key_length = k.length
        _append(&self.facts_keys, k.data, k.length)
        Py_INCREF(part)
        slot.facts.part = <PyObject *>part
        self.facts_memo_entries += 1
        out[0] = slot.facts
        return 0

    cdef int _lowered(self, pt_str *cls, pt_str *ident) except -1:
        """The scratch buffer := _class_facts's "lowered": the class and id, lowered, joined by a space."""
        cdef Buf *k = &self.scratch
        cdef Py_ssize_t i
        k.length = 0
        _append(k, cls.data, cls.length)
        _append(k, b" ", 1)
        _append(k, ident.data, ident.length)
        for i in range(<Py_ssize_t>k.length):
            if 65 <= k.data[i] <= 90:
                k.data[i] += 32
        return 0

    cdef int _marker(self, pt_str *cls, pt_str *ident, pt_str *itemprop) except -1:
        """The scratch buffer := _class_facts's marker: the itemprop, class or id (the first
        given), lowered, without "-" and "_"."""
        cdef Buf *k = &self.scratch
        cdef pt_str *source = itemprop if itemprop.length else (cls if cls.length else ident)
        cdef Py_ssize_t i
        cdef unsigned char c
        k.length = 0
        for i in range(<Py_ssize_t>source.length):
            c = source.data[i]
            if c != 45 and c != 95:
                c = c + 32 if 65 <= c <= 90 else c
                _append(k, &c, 1)
        return 0

    cdef bytes _part(self, const char *name, size_t name_len, pt_str *cls, pt_str *ident):
        """_class_facts's part of an ASCII tag, class and id: the tag, then ".class#id" with the
        class and id stripped of whitespace, then of digits, when either is given."""
        cdef Buf *k = &self.scratch
        if cls.length == 0 and ident.length == 0:
            return PyBytes_FromStringAndSize(name, name_len)
        k.length = 0
        _append(k, <const unsigned char *>name, name_len)
        _append(k, b".", 1)
        _append_name(k, cls)
        _append(k, b"#", 1)
        _append_name(k, ident)
        return PyBytes_FromStringAndSize(<char *>k.data, k.length)

    cdef object _plain_facts(self, const char *name, size_t name_len, pt_str *cls, pt_str *ident, pt_str *itemprop):
        """_class_facts of an ASCII (tag, class, id, itemprop) that names nothing: none of
        blocks._NAMING_PARTS is in it, so its facts are (0, False, part, False, False, False),
        its part made here as _class_facts makes it (the class and id stripped of whitespace,
        then of digits). None when one may be there, or it is not ASCII: _class_facts decides."""
        cdef Buf *k = &self.scratch
        cdef Py_ssize_t i, j
        if not _names_ascii(name, name_len, cls, ident, itemprop):
            return None
        # the class and id lowered, as _class_facts's "lowered": its words, then its caption parts
        self._lowered(cls, ident)
        i = 0
        while i < <Py_ssize_t>k.length:
            if not 97 <= k.data[i] <= 122:
                i += 1
                continue
            j = i
            while j < <Py_ssize_t>k.length and 97 <= k.data[j] <= 122:
                j += 1
            if j - i <= self.longest_naming:
                for word in <tuple>self.naming_words[j - i]:
                    if memcmp(<const char *><bytes>word, k.data + i, j - i) == 0:
                        return None
            i = j
        if _holds_any(k.data, k.length, self.caption_parts) or _holds_any(cls.data, cls.length, self.hiding_classes):
            return None
        # the marker: the itemprop, class or id (the first given) lowered, without "-" and "_"
        self._marker(cls, ident, itemprop)
        if _holds_any(k.data, k.length, self.hint_parts):
            return None
        part = self._part(name, name_len, cls, ident)
        return (0, False, part, False, False, False)

    cdef object _ascii_facts(self, const char *name, size_t name_len, pt_str *cls, pt_str *ident, pt_str *itemprop):
        """_class_facts of an ASCII (tag, class, id, itemprop) whose class and id name no popup
        (_POPUP_WORDS) and hold no hiding class (_HIDING_CLASSES): made here as _class_facts makes
        them (its regexes are literals: _BODY_HINT's names, _BUILDER_WIDGET's, _CAPTION_NAMES's
        and "credit" not after "ac"), its part as it makes it (the class and id stripped of
        whitespace, then of digits). None for the others, or when not ASCII: _class_facts decides."""
        cdef Buf *k = &self.scratch
        cdef Py_ssize_t i, j
        cdef int bits, chrome = 0
        cdef bint wrapper = False, builder
        cdef Py_ssize_t named_other = 0, named_comment = 0, named_widget = 0
        cdef bint hint, caption = False
        if not _names_ascii(name, name_len, cls, ident, itemprop):
            return None
        if _holds_any(cls.data, cls.length, self.hiding_classes):
            return None  # (_class_hidden: blocks.py decides)
        # the class and id lowered, as _class_facts's "lowered": its words, then its caption names
        self._lowered(cls, ident)
        i = 0
        while i < <Py_ssize_t>k.length:
            if not 97 <= k.data[i] <= 122:
                i += 1
                continue
            j = i
            while j < <Py_ssize_t>k.length and 97 <= k.data[j] <= 122:
                j += 1
            bits = 0
            if j - i <= self.longest_word:
                for entry in <tuple>self.word_buckets[(j - i) * 26 + k.data[i] - 97]:
                    if memcmp(<const char *><bytes>(<tuple>entry)[0], k.data + i, j - i) == 0:
                        bits = (<tuple>entry)[1]
                        break
            if bits & W_POPUP:
                return None  # (_named_popup: blocks.py decides)
            if bits & W_WRAPPER:
                wrapper = True
            if bits & W_CHROME:
                if bits & W_WIDGET:
                    named_widget += 1
                elif bits & W_COMMENT:
                    named_comment += 1
                else:
                    named_other += 1
            i = j
        # chrome: its chrome words (a page builder's unit: not "widget"), none of a wrapper
        builder = _holds_any(cls.data, cls.length, self.builder_widgets)
        if named_other + named_comment + (0 if builder else named_widget) and not wrapper:
            chrome = 2 if named_other == 0 and (builder or named_widget == 0) else 1  # _COMMENTS, _CHROME
        caption = _holds_any(k.data, k.length, self.caption_names)
        i = 0
        while not caption and i + 6 <= <Py_ssize_t>k.length:
            if memcmp(k.data + i, b"credit", 6) == 0 and not (i >= 2 and k.data[i - 2] == 97 and k.data[i - 1] == 99):
                caption = True
            i += 1
        # the marker: the itemprop, class or id (the first given) lowered, without "-" and "_"
        self._marker(cls, ident, itemprop)
        hint = _holds_any(k.data, k.length, self.body_hints)
        part = self._part(name, name_len, cls, ident)
        return (chrome, hint, part, caption, False, False)

    def plain_facts(self, bytes tag, bytes cls, bytes ident, bytes itemprop):
        """_plain_facts of these (for the tests: _class_facts is its reference)."""
        cdef pt_str c, i, p
        c.data, c.length = <unsigned char *><const char *>cls, len(cls)
        i.data, i.length = <unsigned char *><const char *>ident, len(ident)
        p.data, p.length = <unsigned char *><const char *>itemprop, len(itemprop)
        return self._plain_facts(<const char *>tag, len(tag), &c, &i, &p)

    def ascii_facts(self, bytes tag, bytes cls, bytes ident, bytes itemprop):
        """_ascii_facts of these (for the tests: _class_facts is its reference)."""
        cdef pt_str c, i, p
        c.data, c.length = <unsigned char *><const char *>cls, len(cls)
        i.data, i.length = <unsigned char *><const char *>ident, len(ident)
        p.data, p.length = <unsigned char *><const char *>itemprop, len(itemprop)
        return self._ascii_facts(<const char *>tag, len(tag), &c, &i, &p)

    cdef uint64_t _sig(self, uint64_t sig, uintptr_t tid, object part) except? 0:
        """xxh64 of f"{sig}/{part}" (blocks.py's signature of a block's path)."""
        cdef Buf *k = &self.scratch
        cdef char digits[24]
        cdef int n = _utoa(sig, digits)
        k.length = 0
        _append(k, <const unsigned char *>digits, n)
        _append(k, b"/", 1)
        if part is None:
            _append(k, <const unsigned char *>self.name_ptr[tid], self.name_len[tid])
        else:
            _append(k, <const unsigned char *><bytes>part, len(<bytes>part))
        return xxh64(k.data, k.length)

    cdef bint _image(self, pt_node *node, Attrs *a, Py_ssize_t block, Py_ssize_t depth, list images,
                     bint image_attrs) except -1:
        """An <img> (or a <picture>'s <source>): its raw attributes (``image_attrs``, else
        None), and its source into the block's hash. Whether it had a source."""
        cdef int i, k
        cdef pt_str *value
        cdef Buf *keys = &self.imgs[depth]
        self._attrs(node, a, True)
        if not image_attrs:  # the source only (blocks.SOURCE_ATTRS), without a dict of them all
            for k in range(5):  # (SOURCE_ATTRS)
                i = self.src_of[k]
                if i >= 0 and a.image_set[i] and a.image[i] != NULL and a.image[i].length:
                    value = a.image[i]
                    images.append((block, None))
                    if self.img_count[depth]:
                        _append(keys, b" ", 1)
                    if _utf8_valid(value.data, value.length):  # (as decoded and encoded again)
                        _append(keys, value.data, value.length)
                    else:
                        self._str_piece(keys, _str(value))
                    self.img_count[depth] += 1
                    return True
            return False
        raw = {}
        for i in range(self.image_count):
            if a.image_set[i] and a.image[i] != NULL and a.image[i].length:
                raw[self.image_keys[i]] = _str(a.image[i])
        src = raw.get("src") or raw.get("data-src") or raw.get("srcset") or raw.get("data-srcset") or raw.get("data-original")
        if not src:
            return False
        images.append((block, raw))
        if self.img_count[depth]:
            _append(keys, b" ", 1)
        self._str_piece(keys, src)
        self.img_count[depth] += 1
        return True

    cdef uint64_t _close(self, Py_ssize_t b, uintptr_t tid, Buf *own, Py_ssize_t depth, uint64_t acc, bint has,
                         Py_ssize_t link_chars, list texts, Column *col) except? 0:
        """Finish block ``b``: its text (whitespace collapsed), and in ``col`` its link chars,
        size and content; its hash (xxh64 of tag, digits-folded text, image sources and child hashes)."""
        cdef Buf *text = &self.scratch
        cdef Buf *k = &self.fold
        cdef size_t i = 0, start
        cdef Py_UCS4 cp = 0
        cdef Py_ssize_t chars = 0, cjk = 0
        cdef bint space = False, digit = False
        cdef char digits[24]
        cdef int n
        cdef unsigned char kind
        cdef const unsigned char *data = own.data
        cdef size_t length = own.length
        cdef bint wide = False
        text.length = 0
        k.length = 0
        _append(k, <const unsigned char *>self.name_ptr[tid], self.name_len[tid])
        _append(k, b"\x00", 1)
        _reserve(text, own.length)
        _reserve(k, own.length)
        # (ASCII by runs of one TEXT_CLASS: markup's indentation and words are most of a text)
        while i < length:
            start = i
            kind = TEXT_CLASS[data[i]]
            if kind == TEXT_SPACE:
                i += 1
                while i < length and TEXT_CLASS[data[i]] == TEXT_SPACE:
                    i += 1
                space = text.length > 0
                continue
            if kind == TEXT_WIDE:
                cp = _next_cp(data, &i)
                if Py_UNICODE_ISSPACE(cp):
                    space = text.length > 0
                    continue
            if space:
                text.data[text.length] = 32
                text.length += 1
                k.data[k.length] = 32
                k.length += 1
                chars += 1
                space = digit = False
            if kind == TEXT_OTHER:
                i += 1
                while i < length and TEXT_CLASS[data[i]] == TEXT_OTHER:
                    i += 1
                _put(text, data + start, i - start)
                _put(k, data + start, i - start)
                chars += i - start
                digit = False
                continue
            if kind == TEXT_DIGIT:
                i += 1
                while i < length and TEXT_CLASS[data[i]] == TEXT_DIGIT:
                    i += 1
                _put(text, data + start, i - start)
                chars += i - start
                if not digit:
                    k.data[k.length] = 48
                    k.length += 1
                    digit = True
                continue
            wide = True
            _put(text, data + start, i - start)
            chars += 1
            if cp >= 0x2E80 and _is_cjk(cp):
                cjk += 1
            if Py_UNICODE_ISDECIMAL(cp):
                if not digit:
                    k.data[k.length] = 48
                    k.length += 1
                    digit = True
            else:
                digit = False
                _put(k, data + start, i - start)
        if text.length:
            if wide:
                texts[b] = PyUnicode_DecodeUTF8(<char *>text.data, text.length, NULL)
            else:  # (ASCII: copied, not decoded)
                made = PyUnicode_New(text.length, 127)
                memcpy(PyUnicode_DATA(made), text.data, text.length)
                texts[b] = made
            col.link = link_chars if link_chars < chars else chars
            col.size = chars + 2 * cjk
            col.content = True
        else:  # no text: no link chars either (they count stripped text)
            texts[b] = ""
            col.link = 0
            col.size = 0
            k.length = self.name_len[tid] + 1
            col.content = has
        _append(k, b"\x00", 1)
        if self.img_count[depth]:
            _append(k, self.imgs[depth].data, self.imgs[depth].length)
        _append(k, b"\x00", 1)
        n = _utoa(acc, digits)
        _append(k, <const unsigned char *>digits, n)
        return xxh64(k.data, k.length)


cdef inline bint _contains_ci(const unsigned char *s, size_t n, const char *word, size_t w) noexcept:
    """Whether ASCII ``s`` holds the lowercase ASCII ``word`` in any case."""
    cdef size_t i, j
    if n < w:
        return False
    for i in range(n - w + 1):
        for j in range(w):
            if (s[i + j] | 0x20) != word[j]:
                break
        else:
            return True
    return False


cdef inline pt_node *_element_before(pt_node *node) noexcept:
    """blocks._element_before: the element sibling before a node, NULL when none."""
    cdef pt_node *sibling = node.prev
    while sibling != NULL and sibling.type != ELEMENT:
        sibling = sibling.prev
    return sibling


cdef inline bint _disclosure_letters(const unsigned char *s, size_t n) noexcept:
    """Whether ASCII ``s`` may hold a word of blocks._DISCLOSURE_WORDS (tab, tabs, tabpanel,
    pane, panel, accordion, faq, faqs, answer), in any case: each holds one of these."""
    return (_contains_ci(s, n, b"tab", 3) or _contains_ci(s, n, b"pane", 4) or _contains_ci(s, n, b"accordion", 9)
            or _contains_ci(s, n, b"faq", 3) or _contains_ci(s, n, b"answer", 6))


cdef inline bint _ascii(const unsigned char *s, size_t n) noexcept:
    cdef size_t i
    for i in range(n):
        if s[i] >= 128:
            return False
    return True


cdef inline bint _names_ascii(const char *name, size_t name_len, pt_str *cls, pt_str *ident, pt_str *itemprop) noexcept:
    """Whether a tag name, class, id and itemprop are all ASCII (the native class facts' domain)."""
    return (_ascii(<const unsigned char *>name, name_len) and _ascii(cls.data, cls.length)
            and _ascii(ident.data, ident.length) and _ascii(itemprop.data, itemprop.length))


cdef bint _holds_any(const unsigned char *s, size_t n, tuple parts):
    """Whether any of ``parts`` (bytes) is in s[:n]."""
    cdef size_t i, m
    for part in parts:
        m = len(<bytes>part)
        if m <= n:
            for i in range(n - m + 1):
                if s[i] == (<const unsigned char *><bytes>part)[0] and memcmp(s + i, <const char *><bytes>part, m) == 0:
                    return True
    return False


cdef int _append_name(Buf *k, pt_str *value) except -1:
    """An ASCII class or id as _class_facts puts it in a part: stripped of whitespace
    (str.strip's), then of digits."""
    cdef size_t start = 0, end = value.length, i
    while start < end and Py_UNICODE_ISSPACE(value.data[start]):
        start += 1
    while end > start and Py_UNICODE_ISSPACE(value.data[end - 1]):
        end -= 1
    for i in range(start, end):
        if not 48 <= value.data[i] <= 57:
            _append(k, value.data + i, 1)
    return 0


cdef inline str _str(pt_str *value):
    """An attribute value as selectolax decodes it ("" for none)."""
    if value == NULL or value.data == NULL:
        return ""
    return PyUnicode_DecodeUTF8(<char *>value.data, value.length, "replace")


# -- html/parse.py's depth bound ---------------------------------------------------------------

ctypedef fused code_unit:
    unsigned char
    unsigned short


cdef inline int _name_class(unsigned int c) noexcept nogil:
    """parse.py's _NAME_CLASS: 1-26 a letter (either case), 27-36 a digit, 37 ':', 38 '-'."""
    if 97 <= c <= 122:
        return c - 96
    if 65 <= c <= 90:
        return c - 64
    if 48 <= c <= 57:
        return c - 21
    if c == 58:
        return 37
    return 38 if c == 45 else 0


cdef Py_ssize_t _depth_bound(const code_unit[::1] data, int *counts) noexcept nogil:
    cdef Py_ssize_t n = data.shape[0], i = -1, first, depth = 0, best = 0
    cdef unsigned int after, c0, c1, c2, code
    cdef bint is_open, is_close
    cdef const unsigned char *lt
    while True:
        # the next '<': bytes are searched by memchr (a '<' is every ~40 bytes of a page, and
        # memchr passes the bytes between them many at a time: 26 -> 20 us a page of 46 KB)
        if code_unit is cython.uchar:
            if i + 1 >= n:
                break
            lt = <const unsigned char *>memchr(&data[i + 1], 60, n - i - 1)
            if lt == NULL:
                break
            i = lt - &data[0]
        else:
            i += 1
            if i >= n:
                break
            if data[i] != 60:  # '<'
                continue
        after = data[i + 1] if i + 1 < n else 0  # (past the end reads as NUL, as parse.py pads)
        c0 = _name_class(after)
        is_open = 1 <= c0 <= 26
        is_close = after == 47 and i + 2 < n and 1 <= _name_class(data[i + 2]) <= 26
        if not is_open and not is_close:
            continue  # (neither: a step of 0 changes no count)
        first = i + 1 + is_close
        c0 = _name_class(data[first]) if first < n else 0
        c1 = _name_class(data[first + 1]) if first + 1 < n else 0
        c2 = _name_class(data[first + 2]) if first + 2 < n and c1 > 0 else 0
        code = (c0 * 39 + c1) * 39 + c2
        if is_open:
            counts[code] += 1
            depth += 1
            if depth > best:
                best = depth
        else:
            counts[code] -= 1
            if counts[code] >= 0:  # more of its name opened than closed before it: it closes one
                depth -= 1
    return best


def depth_bound(data):
    """parse.py's _depth_bound_of (its numpy version is the reference) in one pass: an upper
    bound of a page's nesting depth from its code units (a uint8 or uint16 numpy array)."""
    cdef int *counts = <int *>calloc(39 * 39 * 39, sizeof(int))
    cdef Py_ssize_t best
    if counts == NULL:
        raise MemoryError()
    try:
        if data.dtype.itemsize == 1:
            best = _depth_bound[cython.uchar](data, counts)
        else:
            best = _depth_bound[cython.ushort](data, counts)
    finally:
        free(counts)
    return best


# -- html/parse.py's depth guard: its tag-by-tag scan, for whether it cuts anything ---------------

cdef struct NameCount:
    Py_ssize_t start  # where the name is in the page (-1: a free slot)
    Py_ssize_t length
    uint64_t hash
    Py_ssize_t open  # elements of this name opened and not yet closed


cdef struct Names:
    NameCount *slots
    Py_ssize_t mask, used


cdef int _grow(Names *names) noexcept nogil:
    """Doubles the open-addressing table (starting at 64 slots); -1 when out of memory."""
    cdef Py_ssize_t size = 64 if names.slots == NULL else 2 * (names.mask + 1), i, j
    cdef NameCount *slots = <NameCount *>calloc(size, sizeof(NameCount))
    if slots == NULL:
        return -1
    for i in range(size):
        slots[i].start = -1
    if names.slots != NULL:
        for i in range(names.mask + 1):
            if names.slots[i].start >= 0:
                j = names.slots[i].hash & (size - 1)
                while slots[j].start >= 0:
                    j = (j + 1) & (size - 1)
                slots[j] = names.slots[i]
        free(names.slots)
    names.slots, names.mask = slots, size - 1
    return 0


cdef NameCount *_name_slot(Names *names, const code_unit[::1] data, Py_ssize_t start, Py_ssize_t length, uint64_t h) noexcept nogil:
    """The slot of a tag name (case-insensitive, as parse.py lowers names), made on first sight;
    NULL when out of memory."""
    cdef Py_ssize_t j, k
    cdef NameCount *slot
    if names.slots == NULL or 2 * (names.used + 1) > names.mask + 1:
        if _grow(names) < 0:
            return NULL
    j = h & names.mask
    while True:
        slot = &names.slots[j]
        if slot.start < 0:
            slot.start, slot.length, slot.hash, slot.open = start, length, h, 0
            names.used += 1
            return slot
        if slot.hash == h and slot.length == length:
            k = 0
            while k < length and _name_class(data[slot.start + k]) == _name_class(data[start + k]):
                k += 1
            if k == length:
                return slot
        j = (j + 1) & names.mask


cdef int _cuts(const code_unit[::1] data, Py_ssize_t max_depth, const uint64_t *flat, Py_ssize_t n_flat) noexcept nogil:
    """parse.py's _scan_depth, deciding only: 1 when a tag is nested deeper than max_depth,
    0 when none is, -1 when out of memory. Its regex _TAG, by hand: a '<', an optional '/'
    before a letter, the name (name characters, _name_class), and what follows up to the first
    '>' (only up to the page's last '>': a tag must end)."""
    cdef Py_ssize_t end = data.shape[0], i, j, k, f, gt, depth = 0, level
    cdef uint64_t h, code
    cdef bint close, is_flat
    cdef int result = 0
    cdef const unsigned char *found
    cdef Names names
    cdef NameCount *slot
    names.slots, names.mask, names.used = NULL, 0, 0
    while end > 0 and data[end - 1] != 62:  # '>'
        end -= 1
    i = 0
    while i < end:
        if code_unit is cython.uchar:
            found = <const unsigned char *>memchr(&data[i], 60, end - i)
            if found == NULL:
                break
            i = found - &data[0]
        elif data[i] != 60:  # '<'
            i += 1
            continue
        j = i + 1
        close = j + 1 < end and data[j] == 47 and 1 <= _name_class(data[j + 1]) <= 26
        j += close
        if j >= end or not 1 <= _name_class(data[j]) <= 26:
            i += 1  # no tag starts here
            continue
        # the name, its hash and (up to 12 characters: 39 ** 12 < 2 ** 64) its code in base 39
        h, code, k = 0, 0, j
        while _name_class(data[k]) > 0:  # (data[end - 1] is '>': no read past end)
            h = h * 131 + _name_class(data[k])
            if k - j < 12:
                code = code * 39 + _name_class(data[k])
            k += 1
        gt = k
        while data[gt] != 62:
            gt += 1
        i = gt + 1
        if data[gt - 1] == 47:
            continue  # self-closing
        is_flat = False
        if k - j <= 12:
            for f in range(n_flat):
                if flat[f] == code:
                    is_flat = True
                    break
        if is_flat:
            continue
        slot = _name_slot(&names, data, j, k - j, h)
        if slot == NULL:
            result = -1
            break
        if close:
            if slot.open == 0:
                continue  # a stray end tag
            slot.open -= 1
            level = depth
            depth -= 1
        else:
            slot.open += 1
            depth += 1
            level = depth
        if level > max_depth:
            result = 1
            break
    free(names.slots)
    return result


def depth_cuts(data, Py_ssize_t max_depth, flat_names):
    """Whether parse.py's _scan_depth cuts any tag of a page given as its code units (a uint8 or
    uint16 numpy array, as depth_bound reads them) at ``max_depth``. ``flat_names``: its _FLAT,
    lowercase ASCII names of at most 12 characters."""
    cdef uint64_t flat[64]
    cdef Py_ssize_t n_flat = 0
    cdef int result
    for name in flat_names:
        if n_flat == 64 or len(name) > 12:
            raise ValueError("flat names: at most 64, of at most 12 characters")
        flat[n_flat] = 0
        for c in name.encode("ascii"):
            flat[n_flat] = flat[n_flat] * 39 + _name_class(c)
        n_flat += 1
    if data.dtype.itemsize == 1:
        result = _cuts[cython.uchar](data, max_depth, flat, n_flat)
    else:
        result = _cuts[cython.ushort](data, max_depth, flat, n_flat)
    if result < 0:
        raise MemoryError()
    return result == 1


# -- html/parse.py's UTF-8 check: whether a body decodes strictly, without making its text ---------

cdef bint _utf8_body_valid(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """_utf8_valid (the walk's, for short attribute values) with ASCII skipped eight bytes at a
    time, for whole pages: the well-formed sequences of the Unicode standard (its table 3-7),
    those Python's strict UTF-8 decoder takes (no surrogate, overlong form, or past U+10FFFF)."""
    cdef Py_ssize_t i = 0
    cdef uint64_t word, w1, w2, w3
    cdef unsigned int c, c1
    while i < n:
        # ASCII 32 bytes at a time, then 8 (most of a page's bytes are markup)
        if i + 32 <= n:
            memcpy(&word, p + i, 8)
            memcpy(&w1, p + i + 8, 8)
            memcpy(&w2, p + i + 16, 8)
            memcpy(&w3, p + i + 24, 8)
            if (word | w1 | w2 | w3) & 0x8080808080808080ULL == 0:
                i += 32
                continue
        if i + 8 <= n:
            memcpy(&word, p + i, 8)
            if word & 0x8080808080808080ULL == 0:
                i += 8
                continue
        c = p[i]
        if c < 0x80:
            i += 1
        elif c < 0xC2:  # a continuation byte, or the lead of an overlong 2-byte form
            return False
        elif c < 0xE0:
            if i + 1 >= n or p[i + 1] & 0xC0 != 0x80:
                return False
            i += 2
        elif c < 0xF0:
            if i + 2 >= n:
                return False
            c1 = p[i + 1]
            if c == 0xE0:
                if c1 < 0xA0 or c1 > 0xBF:  # overlong
                    return False
            elif c == 0xED:
                if c1 < 0x80 or c1 > 0x9F:  # a surrogate
                    return False
            elif c1 & 0xC0 != 0x80:
                return False
            if p[i + 2] & 0xC0 != 0x80:
                return False
            i += 3
        elif c < 0xF5:
            if i + 3 >= n:
                return False
            c1 = p[i + 1]
            if c == 0xF0:
                if c1 < 0x90 or c1 > 0xBF:  # overlong
                    return False
            elif c == 0xF4:
                if c1 < 0x80 or c1 > 0x8F:  # past U+10FFFF
                    return False
            elif c1 & 0xC0 != 0x80:
                return False
            if p[i + 2] & 0xC0 != 0x80 or p[i + 3] & 0xC0 != 0x80:
                return False
            i += 4
        else:
            return False
    return True


def utf8_valid(const unsigned char[::1] data):
    """parse.py's _utf8_valid_reference: whether ``data`` (bytes) decodes as strict UTF-8, read
    in one pass with no text made (a 170 KB page: 75 us decoded, ~10 us checked)."""
    cdef Py_ssize_t n = data.shape[0]
    cdef bint ok
    if n == 0:
        return True
    with nogil:
        ok = _utf8_body_valid(&data[0], n)
    return ok


# -- ParsedPage's bytes (blocks.ParsedPage.to_bytes: the layout is _packed_page_reference's) ---

cdef extern from "Python.h":
    bint _is_int "PyLong_CheckExact"(PyObject *value)
    bint _is_str "PyUnicode_CheckExact"(PyObject *value)
    bint _is_list "PyList_CheckExact"(PyObject *value)
    Py_ssize_t _list_size "PyList_GET_SIZE"(PyObject *value)
    PyObject *_list_item "PyList_GET_ITEM"(PyObject *value, Py_ssize_t i)
    void _list_set "PyList_SET_ITEM"(object values, Py_ssize_t i, PyObject *item)  # (takes the reference)
    PyObject *_tuple_item "PyTuple_GET_ITEM"(object values, Py_ssize_t i)
    object PyList_New(Py_ssize_t size)
    object PyLong_FromLongLong(long long value)
    object PyLong_FromUnsignedLongLong(unsigned long long value)
    void PyUnicode_InternInPlace(PyObject **text)
    bint _is_tuple "PyTuple_CheckExact"(PyObject *value)
    Py_ssize_t _tuple_size "PyTuple_GET_SIZE"(PyObject *value)
    void _tuple_set "PyTuple_SET_ITEM"(object values, Py_ssize_t i, PyObject *item)  # (takes the reference)
    object PyTuple_New(Py_ssize_t size)
    PyObject *Py_True
    PyObject *Py_False
    PyObject *Py_None

cdef enum:
    PAGE_COLUMNS = 13  # tag parent sig hash text link size content in_article hint caption keep inside
    PAGE_FLAGS = 7  # the first of the columns packed as a block's bits (content ... inside)
    SEEN_TAGS = 32  # tag name objects told by their address before the names' dict is asked
    IMAGE_BLOCKS = 0  # blocks._IMAGE_BLOCKS
    IMAGE_RECORDS = 1  # blocks._IMAGE_RECORDS
cdef unsigned char PACKED_PAGE = 6  # blocks._PACKED_PAGE


cdef inline uint64_t _zigzag(int64_t value) noexcept nogil:
    return (<uint64_t>value << 1) ^ <uint64_t>(value >> 63)


cdef inline int64_t _unzigzag(uint64_t value) noexcept nogil:
    return <int64_t>((value >> 1) ^ (0 - (value & 1)))


cdef inline void _put_varint(Buf *b, uint64_t value) noexcept:
    """A varint into room already reserved (at most 10 bytes)."""
    while value > 0x7F:
        b.data[b.length] = <unsigned char>(value & 0x7F | 0x80)
        b.length += 1
        value >>= 7
    b.data[b.length] = <unsigned char>value
    b.length += 1


cdef inline void _put_le64(unsigned char *at, uint64_t value) noexcept:
    cdef int k
    for k in range(8):  # (one store on a little-endian host)
        at[k] = <unsigned char>(value >> (8 * k))


cdef int _put_text(Buf *b, PyObject *text) except -2:
    """A str as its UTF-8 length and bytes; 0, or -1 when it is no exact str or has no UTF-8
    (a lone surrogate)."""
    cdef Py_ssize_t n
    cdef const char *data
    if not _is_str(text):
        return -1
    try:
        data = PyUnicode_AsUTF8AndSize(<object>text, &n)
    except UnicodeEncodeError:
        return -1
    _reserve(b, 10 + <size_t>n)
    _put_varint(b, <uint64_t>n)
    _put(b, <const unsigned char *>data, <size_t>n)
    return 0


cdef int _put_ints(Buf *b, PyObject *column, Py_ssize_t n, bint as_parents) except -2:
    """A column of ints as zigzag varints (parents as the distance back to them); -1 when an
    item is not an exact int of int64 (or its distance does not fit)."""
    cdef Py_ssize_t i
    cdef int64_t value
    cdef PyObject *item
    _reserve(b, 10 * <size_t>n)
    try:
        for i in range(n):
            item = _list_item(column, i)
            if not _is_int(item):
                return -1
            value = <int64_t><object>item  # (Cython's conversion reads a small int's digits inline)
            if as_parents:
                if value < 0 and i > INT64_MAX + value:
                    return -1
                value = i - value
            _put_varint(b, _zigzag(value))
    except OverflowError:
        return -1
    return 0


cdef int _put_table(Buf *b, PyObject *column, Py_ssize_t n, uint64_t *keys, Py_ssize_t *slots, size_t mask) except -2:
    """A column of 64-bit ints as its distinct values (first seen first: a count, then each
    little-endian) and each item's place among them (a varint), found in an open-addressing
    table (``keys``, ``slots``: a place + 1, 0 for empty; ``mask + 1`` entries, at least 2n,
    zeroed); -1 when an item is not an exact int from 0 to 2**64 - 1."""
    cdef Py_ssize_t i, count = 0
    cdef size_t slot, start
    cdef uint64_t value
    cdef PyObject *item
    _reserve(b, 10 + 18 * <size_t>n)
    start = b.length
    b.length += 10 + 8 * <size_t>n  # the distinct values go here, moved back once counted
    try:
        for i in range(n):
            item = _list_item(column, i)
            if not _is_int(item):
                return -1
            value = <uint64_t><object>item
            slot = <size_t>((value * 0x9E3779B97F4A7C15ULL) >> 40) & mask
            while slots[slot] != 0 and keys[slot] != value:
                slot = (slot + 1) & mask
            if slots[slot] == 0:
                keys[slot] = value
                count += 1
                slots[slot] = count
                _put_le64(b.data + start + 2 + 8 * count, value)
            _put_varint(b, <uint64_t>(slots[slot] - 1))
    except OverflowError:
        return -1
    # the count, then the values, then the places: close the gaps left for the most there could be
    cdef size_t places = start + 10 + 8 * <size_t>n, places_length = b.length - places
    b.length = start
    _put_varint(b, <uint64_t>count)
    memmove(b.data + b.length, b.data + start + 10, 8 * <size_t>count)
    b.length += 8 * <size_t>count
    memmove(b.data + b.length, b.data + places, places_length)
    b.length += places_length
    return 0


cdef int _put_images(Buf *b, object images) except -2:
    """A page's images: IMAGE_BLOCKS and the block of each when every image is a (block, None)
    tuple (the walk not asked for their attributes), else IMAGE_RECORDS and the list marshalled;
    -1 when ``images`` is no list."""
    cdef Py_ssize_t n, i
    cdef PyObject *item
    cdef PyObject *block
    cdef int64_t value
    cdef size_t start = b.length
    cdef bytes record
    if not _is_list(<PyObject *>images):
        return -1
    n = _list_size(<PyObject *>images)
    _reserve(b, 11 + 10 * <size_t>n)
    b.data[b.length] = IMAGE_BLOCKS
    b.length += 1
    _put_varint(b, <uint64_t>n)
    try:
        for i in range(n):
            item = _list_item(<PyObject *>images, i)
            if not _is_tuple(item) or _tuple_size(item) != 2 or _tuple_item(<object>item, 1) != Py_None:
                break
            block = _tuple_item(<object>item, 0)
            if not _is_int(block):
                break
            value = <int64_t><object>block
            _put_varint(b, _zigzag(value))
        else:
            return 0
    except OverflowError:
        pass
    b.length = start
    record = marshal.dumps(images)
    _reserve(b, 1)
    b.data[b.length] = IMAGE_RECORDS
    b.length += 1
    _append(b, <const unsigned char *>(<char *>record), len(record))
    return 0


def packed_page(tuple head not None, tuple columns not None, images):
    """blocks._packed_page_reference in one pass over the page's lists: the same bytes, or None
    when the page does not fit the layout (the caller marshals it then)."""
    cdef Buf b
    cdef PyObject *cols[PAGE_COLUMNS]
    cdef PyObject *seen[SEEN_TAGS]
    cdef Py_ssize_t seen_place[SEEN_TAGS]
    cdef PyObject *item
    cdef Py_ssize_t n, i, j, k, place, seen_count = 0
    cdef size_t size = 16
    cdef int64_t value
    cdef unsigned char bits
    cdef uint64_t *keys = NULL
    cdef Py_ssize_t *slots = NULL
    cdef dict tag_places
    if len(head) != 5 or len(columns) != PAGE_COLUMNS:
        return None
    for j in range(PAGE_COLUMNS):
        cols[j] = _tuple_item(columns, j)
        if not _is_list(cols[j]):
            return None
    n = _list_size(cols[0])
    for j in range(PAGE_COLUMNS):
        if _list_size(cols[j]) != n:
            return None
    while size < <size_t>(2 * n):
        size *= 2
    b.data = NULL
    b.length = b.size = 0
    try:
        keys = <uint64_t *>malloc(size * sizeof(uint64_t))
        slots = <Py_ssize_t *>malloc(size * sizeof(Py_ssize_t))
        if keys == NULL or slots == NULL:
            raise MemoryError()
        _reserve(&b, 64 + 16 * <size_t>n)
        _put(&b, &PACKED_PAGE, 1)
        _put_varint(&b, <uint64_t>n)
        try:
            if not _is_int(_tuple_item(head, 2)) or not _is_int(_tuple_item(head, 4)):
                return None
            _put_varint(&b, _zigzag(<int64_t><object>_tuple_item(head, 2)))
            item = _tuple_item(head, 3)
            if item != Py_True and item != Py_False:
                return None
            b.data[b.length] = item == Py_True
            b.length += 1
            _put_varint(&b, _zigzag(<int64_t><object>_tuple_item(head, 4)))
        except OverflowError:
            return None
        if _put_text(&b, _tuple_item(head, 0)) < 0 or _put_text(&b, _tuple_item(head, 1)) < 0:
            return None
        # tags: the distinct names (first seen first), then each block's place among them (kept
        # in ``slots`` meanwhile); a walk's names are a few shared objects, told apart by their
        # address before the dict is asked
        tag_places = {}
        for i in range(n):
            item = _list_item(cols[0], i)
            place = -1
            for k in range(seen_count):
                if seen[k] == item:
                    place = seen_place[k]
                    break
            if place < 0:
                if not _is_str(item):
                    return None
                place = tag_places.setdefault(<object>item, len(tag_places))
                if seen_count < SEEN_TAGS:
                    seen[seen_count] = item
                    seen_place[seen_count] = place
                    seen_count += 1
            slots[i] = place
        _reserve(&b, 10)
        _put_varint(&b, <uint64_t>len(tag_places))
        for tag in tag_places:
            if _put_text(&b, <PyObject *>tag) < 0:
                return None
        _reserve(&b, 10 * <size_t>n)
        for i in range(n):
            _put_varint(&b, <uint64_t>slots[i])
        if _put_ints(&b, cols[1], n, True) < 0:
            return None
        for j in range(2, 4):  # sig, hash
            memset(slots, 0, size * sizeof(Py_ssize_t))
            if _put_table(&b, cols[j], n, keys, slots, size - 1) < 0:
                return None
        if _put_ints(&b, cols[5], n, False) < 0 or _put_ints(&b, cols[6], n, False) < 0:  # link, size
            return None
        _reserve(&b, <size_t>n)
        for i in range(n):  # content, in_article, hint, caption, keep, inside: a bit each
            bits = 0
            for j in range(PAGE_FLAGS, PAGE_COLUMNS):
                item = _list_item(cols[j], i)
                if item == Py_True:
                    bits |= 1 << (j - PAGE_FLAGS)
                elif item != Py_False:
                    return None
            b.data[b.length] = bits
            b.length += 1
        for i in range(n):
            if _put_text(&b, _list_item(cols[4], i)) < 0:
                return None
        if _put_images(&b, images) < 0:
            return None
        return PyBytes_FromStringAndSize(<char *>b.data, b.length)
    finally:
        free(b.data)
        free(keys)
        free(slots)


cdef struct Reader:
    const unsigned char *data
    size_t at
    size_t length


cdef uint64_t _varint(Reader *r) except? 0xFFFFFFFFFFFFFFFF:
    cdef uint64_t value = 0
    cdef int shift = 0
    cdef unsigned char c
    while True:
        if r.at >= r.length or shift > 63:
            raise ValueError("parsed page bytes cut short or damaged")
        c = r.data[r.at]
        r.at += 1
        value |= <uint64_t>(c & 0x7F) << shift
        if c < 0x80:
            return value
        shift += 7


cdef inline size_t _count(Reader *r, size_t item_bytes) except? 0xFFFFFFFFFFFFFFFF:
    """A count of items of at least ``item_bytes`` each that the rest of the bytes can hold."""
    cdef uint64_t n = _varint(r)
    if n > (r.length - r.at) // item_bytes:
        raise ValueError("parsed page bytes cut short or damaged")
    return <size_t>n


cdef object _text(Reader *r):
    cdef size_t n = _count(r, 1)
    if n == 0:
        return ""
    r.at += n
    return PyUnicode_DecodeUTF8(<const char *>(r.data + r.at - n), n, NULL)


cdef object _table_column(Reader *r, Py_ssize_t n):
    """_put_table's column: a list of ``n`` ints made once per distinct value."""
    cdef size_t count = _count(r, 8), i, k, place
    cdef uint64_t value
    cdef object values = PyList_New(count), out = PyList_New(n), number
    cdef PyObject *item
    for i in range(count):
        value = 0
        for k in range(8):
            value |= <uint64_t>r.data[r.at + k] << (8 * k)
        r.at += 8
        number = PyLong_FromUnsignedLongLong(value)
        Py_INCREF(number)
        _list_set(values, i, <PyObject *>number)
    for i in range(<size_t>n):
        place = <size_t>_varint(r)
        if place >= count:
            raise ValueError("parsed page bytes cut short or damaged")
        item = _list_item(<PyObject *>values, <Py_ssize_t>place)
        Py_INCREF(<object>item)
        _list_set(out, i, item)
    return out


def unpacked_page(bytes data not None):
    """blocks._unpacked_page_reference: (title, description, replaced, flattened,
    refused_charsets), the 13 columns of packed_page, and the images."""
    cdef Reader r
    cdef Py_ssize_t n, i, j
    cdef size_t count
    cdef unsigned char bits
    cdef PyObject *item
    cdef PyObject *name
    cdef object replaced, flattened, refused, title, description, tags, column, value
    cdef list columns = []
    r.data = <const unsigned char *>(<char *>data)
    r.length = len(data)
    r.at = 1
    if r.length == 0 or r.data[0] != PACKED_PAGE:
        raise ValueError("not a packed parsed page")
    n = <Py_ssize_t>_count(&r, 1)  # (every block takes a byte at least)
    replaced = PyLong_FromLongLong(_unzigzag(_varint(&r)))
    if r.at >= r.length:
        raise ValueError("parsed page bytes cut short or damaged")
    flattened = r.data[r.at] != 0
    r.at += 1
    refused = PyLong_FromLongLong(_unzigzag(_varint(&r)))
    title = _text(&r)
    description = _text(&r)
    count = _count(&r, 1)
    tags = PyList_New(count)
    for i in range(<Py_ssize_t>count):
        value = _text(&r)
        name = <PyObject *>value
        Py_INCREF(value)  # (the reference the list takes; interning may swap it for the interned name's)
        PyUnicode_InternInPlace(&name)  # (the walk's tag names are interned: compared by identity first)
        _list_set(tags, i, name)
    column = PyList_New(n)
    for i in range(n):
        count = <size_t>_varint(&r)
        if count >= <size_t>len(tags):
            raise ValueError("parsed page bytes cut short or damaged")
        item = _list_item(<PyObject *>tags, count)
        Py_INCREF(<object>item)
        _list_set(column, i, item)
    columns.append(column)
    column = PyList_New(n)
    for i in range(n):  # parents, from the distance back to them
        value = PyLong_FromLongLong(<int64_t>(<uint64_t>i - <uint64_t>_unzigzag(_varint(&r))))
        Py_INCREF(value)
        _list_set(column, i, <PyObject *>value)
    columns.append(column)
    columns.append(_table_column(&r, n))
    columns.append(_table_column(&r, n))
    columns.append(None)  # (texts, read last)
    for j in range(2):  # link, size
        column = PyList_New(n)
        for i in range(n):
            value = PyLong_FromLongLong(_unzigzag(_varint(&r)))
            Py_INCREF(value)
            _list_set(column, i, <PyObject *>value)
        columns.append(column)
    if <size_t>n > r.length - r.at:
        raise ValueError("parsed page bytes cut short or damaged")
    for j in range(PAGE_FLAGS, PAGE_COLUMNS):
        column = PyList_New(n)
        for i in range(n):
            item = Py_True if r.data[r.at + i] >> (j - PAGE_FLAGS) & 1 else Py_False
            Py_INCREF(<object>item)
            _list_set(column, i, item)
        columns.append(column)
    r.at += n
    column = PyList_New(n)
    for i in range(n):
        value = _text(&r)
        Py_INCREF(value)
        _list_set(column, i, <PyObject *>value)
    columns[4] = column
    return (title, description, replaced, flattened, refused), tuple(columns), _images(&r)


cdef object _images(Reader *r):
    """_put_images' list read back (all of the rest of the bytes)."""
    cdef size_t count, i
    cdef object images, pair, block
    if r.at >= r.length:
        raise ValueError("parsed page bytes cut short or damaged")
    r.at += 1
    if r.data[r.at - 1] == IMAGE_RECORDS:
        try:
            images = marshal.loads(PyBytes_FromStringAndSize(<const char *>(r.data + r.at), r.length - r.at))
        except (EOFError, TypeError, ValueError):
            images = None
        if type(images) is not list:
            raise ValueError("parsed page bytes cut short or damaged")
        r.at = r.length
        return images
    if r.data[r.at - 1] != IMAGE_BLOCKS:
        raise ValueError("parsed page bytes cut short or damaged")
    count = _count(r, 1)
    images = PyList_New(count)
    for i in range(count):
        block = PyLong_FromLongLong(_unzigzag(_varint(r)))
        pair = PyTuple_New(2)
        Py_INCREF(block)
        _tuple_set(pair, 0, <PyObject *>block)
        Py_INCREF(<object>Py_None)
        _tuple_set(pair, 1, Py_None)
        Py_INCREF(pair)
        _list_set(images, i, <PyObject *>pair)
    if r.at != r.length:
        raise ValueError("parsed page bytes cut short or damaged")
    return images
