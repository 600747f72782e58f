"""Charset decoding and DOM parsing (selectolax / lexbor)."""

from __future__ import annotations

import codecs
import re

import numpy as np

from selectolax.lexbor import LexborHTMLParser

try:  # the native kernels of html/ (html/_walk.pyx): here its one-pass _depth_bound_of and _scan_depth
    from pagetwin.html._walk import depth_bound as _native_depth_bound, depth_cuts as _native_depth_cuts
    from pagetwin.html._walk import utf8_valid as _native_utf8_valid
except ImportError:  # not compiled: the numpy and Python references (blocks.py says the walk is not built)
    _native_depth_bound = _native_depth_cuts = _native_utf8_valid = None

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.IGNORECASE
)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Labels browsers map to a superset encoding (WHATWG encoding standard).
_ALIASES = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "shift_jis": "cp932",
    "x-sjis": "cp932",
    "euc-kr": "cp949",
    "big5": "big5hkscs",
    "tis-620": "cp874",
    "iso-8859-11": "cp874",
    "iso-8859-9": "cp1254",
}


# Codecs Python knows that are no text encoding of an HTML page: they raise on ordinary bytes
# (idna, punycode, undefined), re-interpret the markup (utf-7, the escape codecs: "\\x3c" would
# become "<") or are bytes-to-bytes transforms (base64, zlib, rot13, hex, uu, bz2, quopri: their
# CodecInfo says so). A page naming one is decoded as if it named nothing (detection).
_NOT_HTML_CODECS = frozenset(
    ["idna", "punycode", "utf-7", "unicode-escape", "raw-unicode-escape", "undefined", "mbcs", "oem"]
)
# What a charset label may hold (the meta tag regex allows no more): a NUL or any other junk
# makes the label unusable, not the page.
_LABEL = re.compile(r"[a-z0-9_\-:. ]{1,64}")
# Single-byte code pages (Python's names) that read every byte below 0x80 as that ASCII character
# and every other byte as one non-ASCII character (or one U+FFFD): a page decoded with one has
# its '<' and tag names where its bytes have them, so the depth guard reads the body, not the
# text as UTF-16 (Decoded.one_byte_body; tests/html/test_parse.py checks each of them).
_ONE_BYTE_CODECS = frozenset(
    "ascii cp1006 cp1125 cp1250 cp1251 cp1252 cp1253 cp1254 cp1255 cp1256 cp1257 cp1258 cp437 cp720 cp737 cp775 "
    "cp850 cp852 cp855 cp856 cp857 cp858 cp860 cp861 cp862 cp863 cp865 cp866 cp869 cp874 hp-roman8 iso8859-1 "
    "iso8859-10 iso8859-11 iso8859-13 iso8859-14 iso8859-15 iso8859-16 iso8859-2 iso8859-3 iso8859-4 iso8859-5 "
    "iso8859-6 iso8859-7 iso8859-8 iso8859-9 koi8-r koi8-t koi8-u kz1048 mac-croatian mac-cyrillic mac-greek "
    "mac-iceland mac-latin2 mac-roman mac-romanian mac-turkish palmos ptcp154 tis-620".split()
)


def _codec(label: str | None) -> tuple[str | None, int]:
    """(Python codec name of a charset label or None, 1 when a label was given and refused:
    unknown, junk, or a codec that is no text encoding for HTML, else 0)."""
    if not label:
        return None, 0
    label = label.strip().strip("\"'").lower()
    label = _ALIASES.get(label, label)
    if not _LABEL.fullmatch(label):
        return None, 1
    try:
        info = codecs.lookup(label)
    except LookupError:
        return None, 1
    if info.name in _NOT_HTML_CODECS or not getattr(info, "_is_text_encoding", True):
        return None, 1
    return info.name, 0


class Decoded:
    """A page body decoded (``decode_html``). It reads as the 3-tuple (text, charset, replaced)
    it always was (``text, charset, replaced = decode_html(...)`` unpacks, ``[0]`` is the text,
    it compares equal to that tuple), with more as attributes:

    - ``refused_charsets``: declared charset labels (HTTP header, meta tag) that were ignored,
      being unknown, junk or no text encoding for HTML (0, 1 or 2);
    - ``utf8``: the body itself when it was decoded as UTF-8 (errors replaced or not). UTF-8
      keeps every ASCII byte as that character and makes every other byte part of a non-ASCII
      character, so where the '<' are and which ASCII letters follow them (all the depth guard
      reads) is the same in the bytes and in the text;
    - ``strict``: that body decoded without errors, so the text encodes back to exactly
      ``utf8``, which lexbor can then parse as is (``parse_limited`` takes this record for that).
    - ``one_byte_body``: the body itself when it was decoded with a code page of
      _ONE_BYTE_CODECS: one character a byte, the same ASCII, so the depth guard reads it as it
      reads ``utf8`` (no UTF-16 copy of the text).

    The text of a strict UTF-8 body is made when first read (``text``): pass 1 parses the
    body's bytes and seldom needs it (a 170 KB page: 75 us to decode, 10 us to check)."""

    __slots__ = ("_text", "charset", "replaced", "refused_charsets", "utf8", "strict", "one_byte_body")

    def __init__(
        self, text: str | None, charset: str, replaced: int, refused_charsets: int = 0, utf8: bytes | None = None,
        strict: bool = False, one_byte_body: bytes | None = None,
    ) -> None:  # fmt: skip
        if text is None and not (strict and utf8 is not None):
            raise ValueError("only a strict UTF-8 body's text may be made when read")
        if one_byte_body is not None and (charset not in _ONE_BYTE_CODECS or len(one_byte_body) != len(text)):
            raise ValueError("a body read one byte a character needs its one-byte code page")
        self._text, self.charset, self.replaced = text, charset, replaced
        self.refused_charsets, self.utf8, self.strict = refused_charsets, utf8, strict
        self.one_byte_body = one_byte_body

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self.utf8.decode("utf-8")  # (strict: it decodes)
        return self._text

    def _tuple(self) -> tuple[str, str, int]:
        return self.text, self.charset, self.replaced

    def __iter__(self):
        return iter(self._tuple())

    def __getitem__(self, index):
        return self._tuple()[index]

    def __len__(self) -> int:
        return 3

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Decoded):
            other = other._tuple()
        return self._tuple() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._tuple())

    def _replace(self, **changes) -> Decoded:
        fields = {"text": self.text, "charset": self.charset, "replaced": self.replaced,
                  "refused_charsets": self.refused_charsets, "utf8": self.utf8, "strict": self.strict,
                  # (a new text or code page is no longer the body's one byte a character)
                  "one_byte_body": None if {"text", "charset"} & changes.keys() else self.one_byte_body}  # fmt: skip
        return Decoded(**{**fields, **changes})

    def __repr__(self) -> str:
        return (f"Decoded(charset={self.charset!r}, replaced={self.replaced}, refused_charsets={self.refused_charsets}, "
                f"utf8={self.utf8 is not None}, strict={self.strict}, text={self.text[:40]!r}...)")  # fmt: skip


def detect_charset(body: bytes, http_charset: str | None = None) -> str:
    """The charset to decode ``body`` with: HTTP header, then BOM, then meta tag, then detection."""
    return _detect_charset(body, http_charset)[0]


def _detect_charset(body: bytes, http_charset: str | None) -> tuple[str, str | None, int, bool]:
    """(charset, the body decoded when detection had to decode it whole to decide, labels
    refused, whether detection found the body to be strict UTF-8 without decoding it)."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, None, 0, False
    head = body[:512]
    if len(head) >= 8 and head.count(b"\x00") * 4 >= len(head):
        # UTF-16 without a BOM: ASCII markup leaves every other byte NUL (valid UTF-8 otherwise).
        odd_nuls = head[1::2].count(b"\x00")
        return ("utf-16-le" if odd_nuls >= head[0::2].count(b"\x00") else "utf-16-be"), None, 0, False
    codec, refused = _codec(http_charset)
    if codec:
        return codec, None, 0, False
    m = _META_CHARSET.search(body[:4096])
    if m:
        codec, meta_refused = _codec(m.group(1).decode("ascii", "replace"))
        refused += meta_refused
        if codec:
            # A page declaring a UTF-16 charset in ASCII markup is lying: it is ASCII-compatible.
            return ("utf-8" if codec.startswith("utf-16") else codec), None, refused, False
    if _native_utf8_valid is not None and type(body) is bytes:
        if _native_utf8_valid(body):
            return "utf-8", None, refused, True
    else:
        try:
            return "utf-8", body.decode("utf-8"), refused, False
        except UnicodeDecodeError:
            pass
    sample = body[:65536]
    codec = _codec(_detected_encoding(sample))[0]
    if codec not in _CJK_CODECS:
        codec = _cjk_reading(sample) or codec
    return codec or "cp1252", None, refused, False


def _detected_encoding(sample: bytes) -> str | None:
    """charset_normalizer's best encoding of ``sample`` (``from_bytes(sample).best()``), without
    decoding the sample in the multi-byte code pages that provably fail on it.

    Most of detection's time on a page that is mostly ASCII goes into decoding the whole sample
    in each of its 24 CJK code pages, which fail on the first lone accented letter. A code page
    whose strict decode of the sample fails is dropped by from_bytes before it counts for
    anything (no result, no fallback, no "similar code page" skip, not in its ``tested`` set),
    so excluding it (``cp_exclusion``) gives the same best match; _undecodable_codecs names only
    such code pages, and never the one the sample declares (its "tested" state gates the early
    stop). ``preemptive_behaviour=False`` when the sample declares nothing is the same run too
    (from_bytes only looks for the declaration). A sample with a signature (BOM) takes the
    plain call. Checked against the plain call in tests/html/test_parse_charset.py."""
    from charset_normalizer import from_bytes
    from charset_normalizer.utils import any_specified_encoding, identify_sig_or_bom

    if identify_sig_or_bom(sample)[0] is not None:
        best = from_bytes(sample).best()
    else:
        declared = any_specified_encoding(sample)
        failing = [codec for codec in _undecodable_codecs(sample) if codec != declared]
        best = from_bytes(sample, cp_exclusion=failing or None, preemptive_behaviour=declared is not None).best()
    return best.encoding if best else None


# The ISO-2022 code pages read a byte >= 0x80 as an error in every state but one entered by an
# escape sequence (ESC), and HZ in every state but GB mode, entered by "~{" (CPython's
# _codecs_iso2022.c, _codecs_cn.c).
_ISO2022_CODECS = ("iso2022_jp", "iso2022_jp_1", "iso2022_jp_2", "iso2022_jp_2004", "iso2022_jp_3",
                   "iso2022_jp_ext", "iso2022_kr")  # fmt: skip
# The other CJK code pages detection tries are stateless and ASCII-compatible: a byte < 0x80 at a
# character boundary is that character alone, every longer character starts with a byte >= 0x80,
# none holds two bytes < 0x80 in a row (a pair holds one; EUC's 3- and 8-byte forms none,
# GB18030's 4-byte form two apart), and the decoder reads no byte past the character it decodes
# (CPython's cjkcodecs). So in a sample that decodes, every byte >= 0x80 preceded by bytes < 0x80
# back to a boundary starts a character, and a position after two bytes < 0x80 is a boundary:
# _HIGH_RUNS cuts windows that start and end on boundaries, and their concatenation decodes
# whenever the sample does.
_STATELESS_CJK_CODECS = ("big5", "big5hkscs", "cp932", "cp949", "cp950", "euc_jis_2004", "euc_jisx0213",
                         "euc_jp", "euc_kr", "gb18030", "gb2312", "gbk", "johab", "shift_jis",
                         "shift_jis_2004", "shift_jisx0213")  # fmt: skip
_HIGH_RUNS = re.compile(rb"[\x80-\xff](?:[\x00-\x7f]?[\x80-\xff])*[\x00-\x7f]{0,2}")
# How much of the windows is decoded: the first windows up to this many bytes (a Latin page
# fails nearly every pair-based code page at its first accented letter; a CJK page's text runs
# are cut by its markup, and decoding much of it would double from_bytes' work where it decodes).
_WINDOWS_TRIED, _WINDOW_BYTES = 16, 4096
_HIGH_AS_0X80 = bytes(range(128)) + b"\x80" * 128


def _undecodable_codecs(sample: bytes) -> list[str]:
    """Multi-byte code pages that charset_normalizer tries and that cannot decode ``sample``
    strictly, found without decoding it whole (see the two tables above); none for an ASCII
    sample. Some that fail may be missed, never one that decodes."""
    if sample.isascii():
        return []
    try:
        sample.decode("ascii")
    except UnicodeDecodeError as error:  # (ASCII decoding finds the first such byte at C speed)
        first_high = error.start
    failing = list(_ISO2022_CODECS) if b"\x1b" not in sample else []
    if b"~" not in sample or b"~{" not in sample:  # (memchr first: a 2-byte search is slow)
        failing.append("hz")
    # Where the bytes >= 0x80 are, all made 0x80 so that memchr finds the next one (a regex
    # searching for a byte class crawls through the ASCII between them).
    marked = sample[first_high:].translate(_HIGH_AS_0X80)
    windows, size, at = [], 0, 0
    while at >= 0 and size < _WINDOW_BYTES and len(windows) < _WINDOWS_TRIED:
        end = _HIGH_RUNS.match(marked, at).end()
        windows.append(sample[first_high + at : first_high + end])
        size += end - at
        at = marked.find(b"\x80", end)
    windows = b"".join(windows)
    for codec in _STATELESS_CJK_CODECS:
        try:
            windows.decode(codec)
        except UnicodeDecodeError:
            failing.append(codec)
    return failing


# The multi-byte CJK encodings detection may give (Python codec names), and those tried when it
# gives another (_cjk_reading), supersets first (WHATWG: GBK and GB2312 are read as GB18030).
# UTF-8 first: CJK text in UTF-8 with one broken sequence fails detection the same way.
_CJK_CODECS = frozenset(["utf-8", "gb18030", "gbk", "gb2312", "hz", "big5", "big5hkscs", "cp950", "cp932",
                         "shift_jis", "euc_jp", "iso2022_jp", "cp949", "euc_kr", "johab"])  # fmt: skip
_CJK_TRIED = ("utf-8", "gb18030", "big5hkscs", "cp932", "euc_jp")
_CJK_CHARS = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")  # kana, ideographs
_CJK_PUNCT = re.compile(r"[\u3000-\u303f\uff01-\uff60]")  # ideographic punctuation, full-width forms
# A CJK reading is taken when it leaves at most this share of its CJK characters undecodable ...
CJK_MAX_BAD = 0.01
# ... and the text it gives is punctuated as CJK text is (language evidence: "，", "。", "、").
CJK_MIN_PUNCT = 0.01
_HIGH_BYTES = bytes(range(0x80, 0x100))


def _cjk_reading(sample: bytes) -> str | None:
    """The CJK encoding that reads ``sample`` as CJK text, when detection gave another.

    charset_normalizer drops an encoding the bytes do not decode in strictly, so one broken
    character pair in a GBK page (a truncated lead byte) leaves only the single-byte code pages,
    which decode any bytes, and a Cyrillic one wins (chinese_wce 6dc2d508 read as ptcp154: F 0;
    a UTF-8 page with one broken sequence became cp1252 mojibake the same way). Here UTF-8 and
    each CJK encoding are tried with replacement: the reading with the fewest undecodable
    characters is taken when they are at most CJK_MAX_BAD of the CJK characters it gives and
    CJK punctuation makes at least CJK_MIN_PUNCT of them. A single-byte page read as a CJK
    encoding fails both: its letters fall apart into undecodable pairs wherever an odd-length
    word meets a space (Russian in cp1251 as GB18030: 37 % of the characters), and what pairs
    up is not punctuated (0 ideographic commas or full stops in 7,000 characters). Korean text
    (ASCII punctuation) gives no such evidence and is left to detection."""
    if len(sample) - len(sample.translate(None, _HIGH_BYTES)) < 64:
        return None  # next to no text outside ASCII: nothing to read as CJK
    best, best_bad = None, 1.0
    for codec in _CJK_TRIED:
        if sample[:8192].decode(codec, errors="replace").count("\ufffd") > 3:
            continue  # (most wrong readings fail at once: spare decoding the whole sample)
        text = sample.decode(codec, errors="replace")
        chars = len(_CJK_CHARS.findall(text))
        if chars < 32:
            continue
        bad = text.count("\ufffd") / chars
        if bad <= CJK_MAX_BAD and bad < best_bad and len(_CJK_PUNCT.findall(text)) >= CJK_MIN_PUNCT * chars:
            best, best_bad = codec, bad
    return best


def decode_html(body: bytes, http_charset: str | None = None) -> Decoded:
    """Decode a page body (see Decoded). Never raises, whatever the bytes or the charset
    labels: what cannot be decoded is replaced (U+FFFD) and counted; a label that names no
    usable text encoding is ignored (and counted) and the charset detected instead."""
    charset, text, refused, valid_utf8 = _detect_charset(body, http_charset)
    utf8 = body if charset == "utf-8" and type(body) is bytes else None
    if utf8 is not None and text is None and (valid_utf8 or (_native_utf8_valid is not None and _native_utf8_valid(body))):
        return Decoded(None, charset, 0, refused, utf8, True)  # (the text made when read)
    replaced, strict = 0, False
    try:
        if text is None:
            text = body.decode(charset)
        strict = True
    except UnicodeDecodeError:
        text = body.decode(charset, errors="replace")
        replaced = text.count("\ufffd")
    except (LookupError, UnicodeError, ValueError):  # a codec that fails in its own way
        text = body.decode("utf-8", errors="replace")
        charset, replaced, refused = "utf-8", text.count("\ufffd"), refused + 1
        utf8 = body if type(body) is bytes else None
    one_byte_body = body if charset in _ONE_BYTE_CODECS and type(body) is bytes else None
    return Decoded(text, charset, replaced, refused, utf8, strict and utf8 is not None, one_byte_body)


def _utf8_valid_reference(body: bytes) -> bool:
    """Whether ``body`` decodes as strict UTF-8 (html/_walk.pyx's utf8_valid, which makes no
    text, is checked against this)."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _text_of(html: str | Decoded) -> str:
    """The text of a text or of decode_html's record."""
    return html.text if isinstance(html, Decoded) else html


def _utf8_body(html: str | Decoded) -> bytes | None:
    """The UTF-8 body of decode_html's record (Decoded.utf8), None for a text."""
    return html.utf8 if isinstance(html, Decoded) else None


# A start or end tag and its name, up to the first '>' (a greedy [^>]* runs in one C loop).
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:-]*)[^>]*>")
# Elements that never hold children, or whose end tag is implied (a naive count would take
# every unclosed <p> or <li> for a level of nesting).
_FLAT = frozenset(
    "area base br col embed hr img input link meta param source track wbr "
    "p li dt dd tr td th option optgroup rb rt rp colgroup tbody thead tfoot caption".split()
)


# Classes of the characters of a tag name, by UTF-16 code unit: 0 none, 1-26 a letter (either
# case), 27-36 a digit, 37 ':', 38 '-'. The first three of a name, in base 39, make its group.
_NAME_CLASS = np.zeros(1 << 16, dtype=np.uint16)
for _i, _c in enumerate("abcdefghijklmnopqrstuvwxyz"):
    _NAME_CLASS[ord(_c)] = _NAME_CLASS[ord(_c.upper())] = _i + 1
for _i, _c in enumerate("0123456789:-"):
    _NAME_CLASS[ord(_c)] = 27 + _i
_IS_LETTER = (_NAME_CLASS >= 1) & (_NAME_CLASS <= 26)


def _depth_bound(html: str | Decoded) -> int:
    """An upper bound of the nesting depth, vectorised (no Python loop over tags).

    Every start tag opens an element (void and unclosed ones too: that only overestimates).
    An end tag closes one only while more elements of its name (its first three characters)
    have been opened than closed before it: a parser ignores stray end tags, so counting them
    would let ``<div></x>`` repeated 100,000 times pass as shallow.

    Tags are ASCII, so the page is read as its UTF-8 bytes when given decode_html's record of
    a UTF-8 body (``Decoded.utf8``), or as its body when that was decoded one byte a character
    (``Decoded.one_byte_body``), else as bytes when it is ASCII, else as UTF-16 code units (a
    near copy of the string, unlike UTF-8): a non-ASCII character, or byte, is never a name
    character."""
    return _depth_bound_of(_code_units(html))


def _code_units(html: str | Decoded) -> np.ndarray:
    """The code units _depth_bound reads a page as (see there)."""
    utf8 = _utf8_body(html)
    if utf8 is not None:
        return np.frombuffer(utf8, dtype=np.uint8)
    if isinstance(html, Decoded) and html.one_byte_body is not None:
        return np.frombuffer(html.one_byte_body, dtype=np.uint8)  # (the text's own code units, ASCII kept)
    html = _text_of(html)
    if html.isascii():
        return np.frombuffer(html.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(html.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)


def _depth_bound_of(data: np.ndarray) -> int:
    """_depth_bound of a page's code units (bytes of ASCII or UTF-8, or UTF-16 units): in one
    native pass when it is built (5 times faster), else _depth_bound_of_reference."""
    if _native_depth_bound is not None:
        return _native_depth_bound(data)
    return _depth_bound_of_reference(data)


def _depth_bound_of_reference(data: np.ndarray) -> int:
    """_depth_bound_of in numpy (the native one's reference)."""
    lt = np.flatnonzero(data == 60)
    if not len(lt):
        return 0
    if lt[-1] + 4 >= len(data):  # a '<' at the very end: what follows it reads as NULs
        return _depth_bound_of_reference(np.concatenate([data, np.zeros(4, dtype=data.dtype)]))
    after = data[lt + 1]
    is_open = _IS_LETTER[after]
    is_close = (after == 47) & _IS_LETTER[data[lt + 2]]
    # Other '<' (comments, "a < b") stay in the arrays as neither an open nor a close.
    first = lt + 1
    first += is_close
    name0, name1, name2 = (_NAME_CLASS[data[first + i]] for i in range(3))
    name2 *= name1 > 0
    code = (name0 * 39 + name1) * 39 + name2  # < 39**3: uint16, which numpy sorts by radix
    # Opens minus closes of the same name before each tag: group by name, in page order.
    order = np.argsort(code, kind="stable")
    step = is_open.astype(np.int8) - is_close
    sorted_code, sorted_step = code[order], step[order]
    group_start = np.empty(len(order), dtype=bool)
    group_start[0] = True
    np.not_equal(sorted_code[1:], sorted_code[:-1], out=group_start[1:])
    before = np.cumsum(sorted_step) - sorted_step
    before -= before[np.flatnonzero(group_start)][np.cumsum(group_start) - 1]
    valid = np.empty(len(order), dtype=np.int64)
    valid[order] = (sorted_step < 0) & (before > 0)
    # No floor needed: a close counts only after an open of its name, so depth never goes below 0.
    return int(np.cumsum(is_open - valid).max())


def limit_depth(html: str | Decoded, max_depth: int) -> tuple[str, bool]:
    """Drop the tags nested deeper than ``max_depth`` (their text stays), so a DOM nested
    100,000 deep parses in linear time: lexbor's tree builder checks the stack of open elements
    at each tag, which is quadratic in the depth. Returns (html, whether anything was cut).

    A vectorised upper bound (_depth_bound) passes most pages at once; the others are scanned
    tag by tag (_scan_depth). ``html``: a text, or decode_html's record of the page (then a
    UTF-8 body is read as bytes)."""
    if not _may_be_deep(html, max_depth):
        return _text_of(html), False
    return _scan_depth(_text_of(html), max_depth)


def _may_be_deep(html: str | Decoded, max_depth: int) -> bool:
    """Whether limit_depth has to scan the page tag by tag (_scan_depth): False when the quick
    tests show nothing nested deeper than ``max_depth``. A UTF-8 body is read as its bytes (its
    text is not made)."""
    # The depth is at most the number of '<': counting them is cheaper on a short page. (A
    # UTF-8 body holds as many '<' as its text; either test passing implies the bound's.)
    utf8 = _utf8_body(html)
    if utf8 is not None:
        if len(utf8) < 64 * max_depth and utf8.count(b"<") < max_depth:
            return False
    else:
        text = _text_of(html)
        if len(text) < 64 * max_depth and text.count("<") < max_depth:
            return False
    data = _code_units(html)
    if _depth_bound_of(data) <= max_depth:
        return False
    # Pages past the bound are seldom cut (207 of 10,000 modern pages, none cut): the native
    # scan says whether the Python one would cut anything, 20 times faster.
    return _native_depth_cuts is None or bool(_native_depth_cuts(data, max_depth, _FLAT))


def _scan_depth(html: str, max_depth: int) -> tuple[str, bool]:
    """limit_depth tag by tag: void and optional-end elements not counted, an end tag closing
    only an open element of its name (stray end tags are ignored, as a parser ignores them)."""
    out: list[str] = []
    last = depth = 0
    open_by_name: dict[str, int] = {}
    cut = False
    # No tag ends after the last '>': searching past it, every '<x' would scan to the end of the
    # text and fail (quadratic on a tail of '<a<a<a...', found by bench/fuzz.py).
    for m in _TAG.finditer(html, 0, html.rfind(">") + 1):
        end = m.end()
        if html[end - 2] == "/":
            continue  # self-closing (the '/' before '>' always follows the name)
        name = m.group(2).lower()
        if name in _FLAT:
            continue
        if m.group(1):
            if not open_by_name.get(name):
                continue  # a stray end tag: the parser ignores it
            open_by_name[name] -= 1
            level, depth = depth, depth - 1
        else:
            open_by_name[name] = open_by_name.get(name, 0) + 1
            depth += 1
            level = depth
        if level > max_depth:
            out.append(html[last : m.start()])
            last = end
            cut = True
    if not cut:
        return html, False
    out.append(html[last:])
    return "".join(out), True


def parse_html(html: str | Decoded, max_depth: int = 512) -> LexborHTMLParser:
    """Parse HTML into a lexbor DOM, nesting beyond ``max_depth`` flattened (see limit_depth)."""
    return parse_limited(html, max_depth)[0]


def parse_limited(html: str | Decoded, max_depth: int = 512) -> tuple[LexborHTMLParser, bool]:
    """parse_html, and whether deep nesting was flattened (limit_depth's flag).

    lexbor parses UTF-8: given a text, selectolax encodes it first. Given decode_html's record
    of a valid UTF-8 body, the text is that body exactly, so the body is parsed as is (same
    tree, no encoding)."""
    if _may_be_deep(html, max_depth):
        limited, cut = _scan_depth(_text_of(html), max_depth)
        if cut:
            return LexborHTMLParser(limited), True
    if isinstance(html, Decoded) and html.strict:
        return LexborHTMLParser(html.utf8), False
    return LexborHTMLParser(_text_of(html)), False


_BINARY_CTRL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
# its bytes: how many a head holds is counted by deleting them (no list of matches)
_BINARY_CTRL_BYTES = bytes(b for b in range(256) if _BINARY_CTRL.fullmatch(bytes([b])))


def looks_like_html(body: bytes, strict: bool = False) -> bool:
    """Sniff a body: True when it looks like HTML text rather than binary or another format.

    ``strict`` (for bodies labelled as another text type, e.g. text/plain) asks for a document
    that starts like HTML, not just for a tag somewhere near the start.
    """
    # Skip leading whitespace and BOM so that a page padded with blank lines is still seen.
    head = body[:8192].lstrip(b"\xef\xbb\xbf \t\r\n\x0c")[:2048]
    if not head.strip():
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True  # UTF-16 text
    if b"\x00" in head[:512]:
        # UTF-16 without a BOM (NULs on every other byte): look at it as text.
        even = head[: len(head) // 2 * 2]
        for codec, high in (("utf-16-le", even[1::2]), ("utf-16-be", even[0::2])):
            if high and high.count(0) >= len(high) * 0.3:
                text = even.decode(codec, errors="replace")
                if text.count("\ufffd") <= len(text) // 100:
                    head = text.encode("utf-8", "replace")
                    break
        else:
            return False
    # Binary: many control bytes or NULs (images, archives, PDFs labelled text/html).
    if head.count(b"\x00") > 0 or len(head) - len(head.translate(None, _BINARY_CTRL_BYTES)) > len(head) // 50:
        return False
    low = head.lower()
    if low.startswith((b"%pdf", b"\x89png", b"gif8", b"pk\x03\x04", b"{", b"[")):
        return False
    if strict:
        if low.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta")):
            return True
        return low.startswith((b"<?xml", b"<!--")) and b"<html" in low
    markers = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<div", b"<p", b"<meta", b"<table", b"<a ", b"<br", b"<script", b"<!--")
    return any(m in low for m in markers)
