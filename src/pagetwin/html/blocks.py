"""One walk over a page's DOM that both passes share: the page as a tree of text blocks.

A *block* is a block-level element (div, p, li, td, h1, ...). Inline elements (a, span, b,
img, ...) do not make blocks: their text belongs to the nearest enclosing block. For every
block the walk records

- ``text``: its own inline text (whitespace collapsed; text of child blocks not included);
- ``link``: how many of those characters are inside ``<a>``;
- ``hash``: a bottom-up subtree hash (xxh64 of the tag, the own text with digits folded to
  ``0``, the sources of its images and the hashes of its child blocks, in order) - a Merkle
  hash, so equal hashes mean equal subtrees, and a footer whose year changes keeps its hash;
- ``sig``: a structural signature, the hash of the path of ``tag.class#id`` from ``<body>``
  (digits folded, text ignored), so the "same slot" of a template matches across pages even
  when its text differs;
- ``parent``: the enclosing block (blocks are numbered in document order, a parent before its
  children).
- ``caption``: its class or id names a caption, a photo credit or a gallery (``_CAPTION_NAMES``,
  parts of words: "wp-caption-text", "newsCaption", "image-credit"), or it is a photo's box whose
  text is mostly a ``<span>`` so named (``_span_captions``), for noise.page_keep's photo captions.

The walk does not enter elements that are never content (scripts, styles, form controls,
embedded frames, ``SKIP_TAGS``), hidden elements (``hidden``, ``aria-hidden="true"``,
``display: none`` / ``visibility: hidden`` inline styles; checked on block elements and on
span/font/label/small; block elements hidden by a utility class, "d-none", "sr-only",
``_class_hidden``; a hidden tab panel or accordion region is walked, and so is a disclosure
widget's panel its toggle or ``aria-controls`` names, or a carousel's slide, ``_disclosed_box``; a hover
card of links inside a paragraph, ``_hover_card``), or elements that are page chrome by their tag (nav, aside,
unless they hold the page's <main>, ``_chrome_tag_wraps``; header/footer outside an article) or by the words of their class/id (menu, sidebar, share,
cookie, ...; unless they wrap the page's h1 or marked article body, or are a section of the
page in a theme's markup: a banner or a widget with a paragraph inside the <main>, a forum
reply's own <article>, ``_a_section``). Boxes named as comments
and noscripts with block markup are held back: the walk enters them (walking again) only when
the rest of the page has no paragraph of content and fewer words than they hold (a forum thread,
a crawler copy of the page), or, for comments, when the page declares itself a forum thread
(``_forum_thread``). Likewise, on a page that shows next to nothing (SHOWN_WORDS), the
hidden boxes that hold the page (HIDDEN_PAGE_WORDS, not named as chrome: a shop's body hidden
until its scripts run) are walked, walking again (``_hidden_pages``). The walk is iterative (an
explicit stack), so a DOM 100,000 levels deep does not reach Python's recursion limit; blocks
nested deeper than ``max_depth`` are read as flat text of their ancestor. The tree is not
modified.

The walk runs natively (``pagetwin.html._walk``, built by ``pip install``: C over lexbor's node
structs, 4-6 times faster); ``BlockWalker.walk_reference`` is the same walk in Python, the
reference the native one is tested against, and what runs (with one warning) when the native
module is not built or does not fit the installed selectolax (``native_status``).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import marshal
import re
from dataclasses import dataclass, field

import numpy as np
import selectolax
import xxhash
from selectolax.lexbor import LexborHTMLParser, LexborNode

try:
    from pagetwin.html import _walk
except ImportError as exc:  # not compiled (a source checkout without `pip install -e .`)
    _walk = None
    _WALK_MISSING = str(exc)

log = logging.getLogger(__name__)

# Never visible content: the walk does not enter these (nor anything inside them). An <object>
# is entered: what it holds is the fallback a browser shows when the plugin is missing (an old
# Flash player's poster and the video's description), a block (noise._keep_lead).
SKIP_TAGS = frozenset(
    """script style noscript template svg math iframe frame frameset embed applet canvas
    audio video map head title meta link input select option optgroup textarea button datalist
    output dialog menu""".split()
)
# A <noscript> that holds block markup may be a server-rendered copy of the page for crawlers
# (Discourse forums put every post there): the walk enters such noscripts (and comments,
# COMMENT_WORDS) when they hold more text than the rest of the page (else they repeat it, or
# are an "enable JavaScript" line).
_NOSCRIPT_CONTENT = "div, p, article, main, section, table, ul, ol, h1, h2, h3, pre, blockquote"
# Inline style that hides an element.
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)

BLOCK_TAGS = frozenset(
    """address article aside blockquote body center dd details dir div dl dt fieldset figcaption
    figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol p pre section summary
    table tbody thead tfoot tr caption ul legend html object""".split()
)
HEADING_TAGS = frozenset("h1 h2 h3 h4 h5 h6".split())
# Chrome by tag. header/footer inside an <article> or <main> hold the article's own title and
# byline, so they are only chrome at the page level. (Figure captions stay here: on a gallery
# they are the only text; noise.page_keep drops a photo's caption inside an article.)
CHROME_TAGS = frozenset(["nav", "aside"])
PAGE_CHROME_TAGS = frozenset(["header", "footer"])
CONTENT_ROOT_TAGS = frozenset(["article", "main"])

# Words of a class or id that name page chrome. Matched against whole words of the attribute
# (split on non-letters), never substrings, so "navigation" matches and "canvas" does not.
CHROME_WORDS = frozenset(
    """nav navbar navigation menu menubar submenu topmenu mainmenu megamenu breadcrumb breadcrumbs
    footer sidebar sidebars sidenav share sharing sharebar social socialmedia related
    recommended recommendations promo promos advert adverts advertisement advertisements
    advertising ad ads adsense sponsored sponsor banner cookie cookies consent newsletter
    subscribe subscription signup popup modal skiplink skip toolbar pagination pager
    tagcloud comment comments commentlist disqus outbrain taboola widget widgets masthead""".split()
)
# Chrome words that name the comments under an article. On a forum thread the comments are the
# page: the walk enters them when they hold more text than the rest of the page (see walk).
COMMENT_WORDS = frozenset(["comment", "comments", "commentlist"])
_CHROME, _COMMENTS = 1, 2  # _class_facts' chrome verdicts (0: not chrome)
# Words that name a wrapper of the page's content ("content-sidebar-wrap", "post-share-wrapper"):
# a class with one of them is not chrome by its words alone.
WRAPPER_WORDS = frozenset(
    """content contents main article articles post posts entry story body text wrap wrapper
    container inner outer page layout column columns col row grid hentry blog""".split()
)
# A box named like chrome that holds one of these is a page-wide wrapper, not chrome
# ("m-advertisement-off-canvas--pusher" around the whole page); the text of a comment on a
# question or an answer does not count (_content_inside).
CONTENT_INSIDE = (
    "h1, main, [itemprop=articleBody], [itemprop=headline], [itemprop=text]"
)
# Matches whatever CONTENT_INSIDE matches, and is quicker to rule out (fewer selectors).
_MAY_HOLD_CONTENT = "h1, main, [itemprop]"
_MAY_HOLD_CONTENT_OR_P = "h1, main, [itemprop], p"
# The page marks its own article body (schema.org microdata, common CMS class names). Each
# alternative holds "body", "content" or "text" (_class_facts tests those first).
_BODY_HINT = re.compile(r"articlebody|entrycontent|storybody|postbody|postcontent|articlecontent|articletext|storytext|bodytext|maincontent")
_HINT_PARTS = ("body", "content", "text")  # every name of _BODY_HINT holds one
_WORDS = re.compile(r"[a-z]+")
# The class of a page builder's content unit, whatever it holds (Elementor, HubSpot).
_BUILDER_WIDGET = re.compile(r"elementor-widget|widget-type-")
# Class or id names of a photo's caption or credit, or of a gallery of photos, as parts of words
# ("wp-caption-text", "newsCaption", "hst-resgallery", "image-credit", "imageEmbedCredit"):
# noise.page_keep drops their text inside an article that has enough text without them.
_CAPTION_NAMES = re.compile(r"caption|gallery|slideshow|(?<!ac)credit")
_CAPTION_PARTS = ("caption", "gallery", "slideshow", "credit")  # every name of _CAPTION_NAMES holds one
_DIGITS = re.compile(r"\d+")
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\u3000-\u303f\uff00-\uffef]+")
# The same ranges as a table of the BMP, for counting CJK characters of many texts at once.
_IS_CJK = np.zeros(1 << 16, dtype=bool)
for _low, _high in ((0x2E80, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x3000, 0x303F), (0xFF00, 0xFFEF)):
    _IS_CJK[_low : _high + 1] = True

try:  # the attributes html.images.image_refs reads (lazy-loading variants included)
    from pagetwin.html.images import RAW_IMAGE_ATTRS as IMAGE_ATTRS
except ImportError:  # pragma: no cover
    IMAGE_ATTRS = ("src", "data-src", "srcset", "data-srcset", "alt", "title", "width", "height")
# An image's source (what its block's hash holds): the first of these it has that is not empty.
SOURCE_ATTRS = tuple(name for name in ("src", "data-src", "srcset", "data-srcset", "data-original") if name in IMAGE_ATTRS)


@dataclass
class Blocks:
    """The blocks of one page, as parallel lists indexed by block number (document order)."""

    tag: list[str] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    sig: list[int] = field(default_factory=list)
    hash: list[int] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    link: list[int] = field(default_factory=list)  # chars of own text inside <a>
    size: list[int] = field(default_factory=list)  # chars of own text (CJK chars count 3)
    content: list[bool] = field(default_factory=list)  # subtree has text or images
    in_article: list[bool] = field(default_factory=list)  # inside <article>/<main>
    hint: list[bool] = field(default_factory=list)  # marked as the article body by the page
    caption: list[bool] = field(default_factory=list)  # named as a caption, a credit or a gallery (_CAPTION_NAMES)
    # (block, raw attributes) of each image with a source; (block, None) when the walk was not
    # asked for their attributes (BlockWalker(images=False): no algorithm reads them)
    images: list[tuple[int, dict | None]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.tag)


@dataclass
class Extracted:
    """A page's main content: what noise and template removal kept of its blocks."""

    text: str  # main text, "\n" between blocks
    title: str = ""
    description: str = ""  # meta description or og:description, "" if none
    images: list[dict] = field(default_factory=list)  # raw attributes of kept <img>/<source>


@dataclass
class ParsedPage:
    """What both passes need of a page's DOM: its blocks, title and description, how its
    bytes decoded, and the page-level keep decision (``noise.page_keep``, which
    ``noise.parse_page`` makes with the blocks). Pass 1 builds it once; serialised
    (``to_bytes``), it lets pass 2 decide without parsing and walking the page again."""

    blocks: Blocks
    title: str = ""
    description: str = ""
    replaced: int = 0  # characters that could not be decoded
    flattened: bool = False  # nesting deeper than input.max_dom_depth was flattened
    page_level_: tuple[list[bool], list[bool]] | None = None  # (keep, main region) per block
    refused_charsets: int = 0  # declared charsets ignored in decoding (parse.Decoded)

    _FIELDS = ("tag", "parent", "sig", "hash", "text", "link", "size", "content", "in_article", "hint", "caption", "images")

    def page_level(self) -> tuple[list[bool], list[bool]]:
        """The page-level decision: (keep, inside the main region) of every block."""
        if self.page_level_ is None:
            raise ValueError("a ParsedPage without its page-level decision (make it with noise.parse_page)")
        return self.page_level_

    def extracted(self, keep: list[bool], images_ok: list[bool]) -> Extracted:
        """The main content when the blocks ``keep`` says are kept (one line each) and the
        images of the blocks ``images_ok`` says may carry main-content images."""
        blocks = self.blocks
        text = "\n".join(t for t, k in zip(blocks.text, keep) if k and t)
        images = [raw for b, raw in blocks.images if images_ok[b] and raw is not None]
        return Extracted(text=text, title=self.title, description=self.description, images=images)

    def to_bytes(self) -> bytes:
        """The page as bytes for pass 2 (only ``from_bytes`` reads them, in the same run:
        runners.spill's temporary file, a Spark stage's kept pages). A page the walk made is
        packed (_PACKED_PAGE: columns as varints, 64-bit tables and UTF-8, in one native call,
        ``_walk.packed_page``; _packed_page_reference is its reference); one that does not fit
        (made by hand: a float or a 70-bit int in a column, a lone surrogate) is marshalled."""
        b = self.blocks
        level = self.page_level()
        if type(level) is tuple and len(level) == 2:
            columns = (b.tag, b.parent, b.sig, b.hash, b.text, b.link, b.size, b.content, b.in_article, b.hint, b.caption, *level)
            head = (self.title, self.description, self.replaced, self.flattened, self.refused_charsets)
            packed = (_walk.packed_page if _walk is not None else _packed_page_reference)(head, columns, b.images)
            if packed is not None:
                return packed
        record = (self.title, self.description, self.replaced, self.flattened, level, self.refused_charsets,
                  *(getattr(b, name) for name in self._FIELDS))  # fmt: skip
        return bytes((_MARSHALLED_PAGE,)) + marshal.dumps(record)

    @classmethod
    def from_bytes(cls, data: bytes) -> ParsedPage:
        """The page ``to_bytes`` gave (ValueError for other bytes)."""
        kind = data[0] if data else -1
        if kind == _PACKED_PAGE:
            head, columns, images = (_walk.unpacked_page if _walk is not None else _unpacked_page_reference)(data)
            return cls(Blocks(*columns[:11], images), *head[:4], columns[11:], head[4])
        if kind == _MARSHALLED_PAGE:
            record = marshal.loads(memoryview(data)[1:])
            return cls(Blocks(*record[_HEAD:]), *record[:_HEAD])
        raise ValueError(f"parsed page format {kind}, expected {_PACKED_PAGE} or {_MARSHALLED_PAGE}")


# -- ParsedPage's bytes -------------------------------------------------------------------------
#
# Pass 1 writes every page's ParsedPage for pass 2 to read back, in the same run and build (they
# never outlive it: a layout may change freely). Until session 18 they were marshalled with the
# integer columns as arrays and zstd at level -1: 3.5 % of a run to write and 2.5 % to read. A
# page's first byte says how it is laid out:
# - _PACKED_PAGE: the columns a walk makes, as _packed_page_reference writes them: varints
#   (zigzag for signed ints, a parent as the distance back to it), the tag names once each and a
#   varint per block for its name, the signatures and hashes once per distinct value (8 bytes
#   little-endian; a page repeats its signatures 3 times, its empty blocks' hashes) and a varint
#   per block, the six flags of a block in one byte, the texts as UTF-8 (length first), then the
#   images: _IMAGE_BLOCKS and the block of each when the walk read none of their attributes (it
#   is not asked to unless an algorithm reads them), else _IMAGE_RECORDS and the list marshalled.
#   Not compressed: on 3,000 pages of corpus-10000-shared a page packs to 13.0 KB in ~28 us and
#   reads back in ~40; zstd -1 would make it 8.2 KB for ~42 us more (a temporary file's bytes).
# - _MARSHALLED_PAGE: every field marshalled, for a page whose columns do not fit the packed
#   layout (made by hand: a float, a 70-bit int, a str with a lone surrogate, a tuple for a list).
_PACKED_PAGE, _MARSHALLED_PAGE = 6, 8
_IMAGE_BLOCKS, _IMAGE_RECORDS = 0, 1
_HEAD = 6  # the marshalled record: title, description, replaced, flattened, page level, refused charsets, then the columns
_INT64 = range(-(2**63), 2**63)
_UINT64 = range(2**64)


def _packed_page_reference(head: tuple, columns: tuple, images: list) -> bytes | None:
    """A page as _PACKED_PAGE bytes: ``head`` (title, description, replaced, flattened,
    refused_charsets), ``columns`` (tag, parent, sig, hash, text, link, size, content,
    in_article, hint, caption, keep, inside: lists of one length) and its images; None when an
    item does not fit (the native packer, ``_walk.packed_page``, makes the same bytes)."""
    if len(head) != 5 or len(columns) != 13 or any(type(c) is not list for c in (*columns, images)):
        return None
    n = len(columns[0])
    if any(len(c) != n for c in columns):
        return None
    title, description, replaced, flattened, refused = head
    tag, parent, sig, hash_, text, link, size = columns[:7]
    flags = columns[7:]

    def ints(values: list, fit: range) -> bool:
        return all(type(v) is int and v in fit for v in values)

    def utf8(values: list) -> list[bytes] | None:
        if any(type(v) is not str for v in values):
            return None
        try:
            return [v.encode() for v in values]
        except UnicodeEncodeError:  # (a lone surrogate)
            return None

    texts = utf8([title, description, *text])
    names = list(dict.fromkeys(tag))
    encoded_names = utf8(names)
    if (texts is None or encoded_names is None or not ints([replaced, refused, *parent, *link, *size], _INT64)
            or not ints(sig + hash_, _UINT64) or any(i - p not in _INT64 for i, p in enumerate(parent))
            or type(flattened) is not bool or any(type(v) is not bool for column in flags for v in column)):  # fmt: skip
        return None
    out = bytearray([_PACKED_PAGE])
    _put_varint(out, n)
    _put_varint(out, _zigzag(replaced))
    out.append(flattened)
    _put_varint(out, _zigzag(refused))
    for data in texts[:2]:
        _put_varint(out, len(data))
        out += data
    _put_varint(out, len(names))
    for data in encoded_names:
        _put_varint(out, len(data))
        out += data
    place = {name: i for i, name in enumerate(names)}
    for name in tag:
        _put_varint(out, place[name])
    for i, p in enumerate(parent):
        _put_varint(out, _zigzag(i - p))
    for column in (sig, hash_):
        distinct = list(dict.fromkeys(column))
        _put_varint(out, len(distinct))
        for value in distinct:
            out += value.to_bytes(8, "little")
        place = {value: i for i, value in enumerate(distinct)}
        for value in column:
            _put_varint(out, place[value])
    for column in (link, size):
        for value in column:
            _put_varint(out, _zigzag(value))
    out += bytes(sum(bit << j for j, bit in enumerate(bits)) for bits in zip(*flags))
    for data in texts[2:]:
        _put_varint(out, len(data))
        out += data
    if all(type(image) is tuple and len(image) == 2 and image[1] is None and type(image[0]) is int and image[0] in _INT64
           for image in images):  # fmt: skip
        out.append(_IMAGE_BLOCKS)
        _put_varint(out, len(images))
        for block, _ in images:
            _put_varint(out, _zigzag(block))
    else:
        out.append(_IMAGE_RECORDS)
        out += marshal.dumps(images)
    return bytes(out)


def _unpacked_page_reference(data: bytes) -> tuple[tuple, tuple, list]:
    """_PACKED_PAGE bytes read back: (title, description, replaced, flattened,
    refused_charsets), the 13 columns and the images _packed_page_reference takes
    (``_walk.unpacked_page`` reads them natively)."""
    if not data or data[0] != _PACKED_PAGE:
        raise ValueError("not a packed parsed page")
    at = 1

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            if at >= len(data) or shift > 63:
                raise ValueError("parsed page bytes cut short or damaged")
            c = data[at]
            at += 1
            value |= (c & 0x7F) << shift
            if c < 0x80:
                return value & 0xFFFFFFFFFFFFFFFF
            shift += 7

    def count(item_bytes: int) -> int:
        n = varint()
        if n > (len(data) - at) // item_bytes:
            raise ValueError("parsed page bytes cut short or damaged")
        return n

    def text() -> str:
        nonlocal at
        n = count(1)
        at += n
        return data[at - n : at].decode()

    def checked(i: int, limit: int) -> int:
        if i >= limit:
            raise ValueError("parsed page bytes cut short or damaged")
        return i

    n = count(1)
    replaced = _unzigzag(varint())
    if at >= len(data):
        raise ValueError("parsed page bytes cut short or damaged")
    flattened = data[at] != 0
    at += 1
    refused = _unzigzag(varint())
    title, description = text(), text()
    names = [text() for _ in range(count(1))]
    tag = [names[checked(varint(), len(names))] for _ in range(n)]
    parent = [_int64(i - _unzigzag(varint())) for i in range(n)]
    tables = []
    for _ in range(2):
        k = count(8)
        distinct = [int.from_bytes(data[at + 8 * i : at + 8 * i + 8], "little") for i in range(k)]
        at += 8 * k
        tables.append([distinct[checked(varint(), k)] for _ in range(n)])
    link = [_unzigzag(varint()) for _ in range(n)]
    size = [_unzigzag(varint()) for _ in range(n)]
    if n > len(data) - at:
        raise ValueError("parsed page bytes cut short or damaged")
    flags = [[bool(byte >> j & 1) for byte in data[at : at + n]] for j in range(6)]
    at += n
    text_column = [text() for _ in range(n)]
    if at >= len(data) or data[at] not in (_IMAGE_BLOCKS, _IMAGE_RECORDS):
        raise ValueError("parsed page bytes cut short or damaged")
    at += 1
    if data[at - 1] == _IMAGE_RECORDS:
        try:
            images = marshal.loads(data[at:])
        except (EOFError, TypeError, ValueError):
            images = None
        if type(images) is not list:
            raise ValueError("parsed page bytes cut short or damaged")
    else:
        images = [(_unzigzag(varint()), None) for _ in range(count(1))]
        if at != len(data):
            raise ValueError("parsed page bytes cut short or damaged")
    return (title, description, replaced, flattened, refused), (tag, parent, *tables, text_column, link, size, *flags), images


def _put_varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def _zigzag(value: int) -> int:
    """An int64 as a uint64 that is small when the int is near 0."""
    return (value << 1) ^ (value >> 63)


def _unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _int64(value: int) -> int:
    """``value`` wrapped to int64 (as C's arithmetic does; only damaged bytes get there)."""
    return (value + 2**63) % 2**64 - 2**63


def text_size(text: str) -> int:
    """Length of a text in Latin-letter equivalents: a CJK character counts 3 (one CJK
    character carries about as much as a short word)."""
    if text.isascii():
        return len(text)
    return len(text) + 2 * sum(map(len, _CJK.findall(text)))  # runs of CJK characters


def _text_sizes(texts: list[str]) -> list[int]:
    """text_size of many non-empty texts in one numpy pass over their code points."""
    points = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    cjk = _IS_CJK[np.minimum(points, 0xFFFF)].view(np.uint8)  # (U+FFFF is not CJK)
    lengths = [len(t) for t in texts]
    starts = np.cumsum([0, *lengths[:-1]])
    counts = np.add.reduceat(cjk, starts, dtype=np.int64).tolist()
    return [length + 2 * n for length, n in zip(lengths, counts)]


def _class_facts(tag: str, cls: str, ident: str, itemprop: str) -> tuple[int, bool, str, bool, bool, bool]:
    """(chrome by its class/id words: 0, _CHROME or _COMMENTS when only comment words name it;
    marked as the article body; signature part; named as a caption or gallery; hidden by its
    class, _class_hidden) of a block element (the walk memoises them: a site repeats the same
    few class names on every page, but ids such as "post-123" miss: 20,000 calls a 2,000-page
    run; the native walk makes those of names that name nothing itself, _NAMING_PARTS, and
    memoises the others, made by it when they are ASCII and name no popup and no hiding class,
    _CLASS_WORDS). _class_facts_reference's results, each regex run only when a substring test says it
    may match, and ASCII digits dropped by bytes.translate (``\\d`` is ASCII-only on ASCII text)."""
    lowered = f"{cls} {ident}".lower()
    words = _WORDS.findall(lowered)
    chrome = 0
    if not CHROME_WORDS.isdisjoint(words):
        named = [w for w in words if w in CHROME_WORDS]
        if _BUILDER_WIDGET.search(cls) is not None:
            # A page builder's unit ("elementor-widget-heading", HubSpot's "widget-type-rich_text"):
            # "widget" names the unit, not a sidebar's; its other words still say what it is.
            named = [w for w in named if w not in ("widget", "widgets")]
        if named and WRAPPER_WORDS.isdisjoint(words):
            chrome = _COMMENTS if COMMENT_WORDS.issuperset(named) else _CHROME
    marker = (itemprop or cls or ident).lower().replace("-", "").replace("_", "")
    hint = any(part in marker for part in _HINT_PARTS) and _BODY_HINT.search(marker) is not None
    if not (cls or ident):
        part = tag
    elif cls.isascii() and ident.isascii():  # (bytes.translate deletes 3 times faster than str's)
        part = f"{tag}.{f'{cls.strip()}#{ident.strip()}'.encode().translate(None, _ASCII_DIGITS).decode()}"
    else:
        part = f"{tag}.{_DIGITS.sub('', cls.strip())}#{_DIGITS.sub('', ident.strip())}"
    caption = any(part in lowered for part in _CAPTION_PARTS) and _CAPTION_NAMES.search(lowered) is not None
    popup = not _POPUP_WORDS.isdisjoint(words) and _named_popup(lowered)
    return chrome, hint, part, caption, _class_hidden(cls), popup


_ASCII_DIGITS = b"0123456789"


def _class_facts_reference(tag: str, cls: str, ident: str, itemprop: str) -> tuple[int, bool, str, bool, bool, bool]:
    """_class_facts as first written, one regex a fact: the reference its tests compare with."""
    lowered = f"{cls} {ident}".lower()
    words = _WORDS.findall(lowered)
    named = [w for w in words if w in CHROME_WORDS]
    if named and _BUILDER_WIDGET.search(cls) is not None:
        named = [w for w in named if w not in ("widget", "widgets")]
    chrome = 0
    if named and not any(w in WRAPPER_WORDS for w in words):
        chrome = _COMMENTS if all(w in COMMENT_WORDS for w in named) else _CHROME
    marker = (itemprop or cls or ident).lower().replace("-", "").replace("_", "")
    hint = bool(marker) and _BODY_HINT.search(marker) is not None
    part = f"{tag}.{_DIGITS.sub('', cls.strip())}#{_DIGITS.sub('', ident.strip())}" if cls or ident else tag
    caption = _CAPTION_NAMES.search(lowered) is not None
    popup = not _POPUP_WORDS.isdisjoint(words) and _named_popup(lowered)
    return chrome, hint, part, caption, _class_hidden(cls), popup


def _named_popup(lowered: str) -> bool:
    """Whether lowered class/id names name a popup (_POPUP_WORDS) and no trigger of one, not
    counting Tailwind's group names, "group/tooltip" (the box that holds a tooltip and its
    trigger). Their words are some of _WORDS's: callers ask only when those name a popup."""
    named = _WORDS.findall(" ".join(t for t in lowered.split() if "/" not in t))
    return not _POPUP_WORDS.isdisjoint(named) and _POPUP_TRIGGERS.isdisjoint(named)


# Words of an inline box shown only while the pointer is over a word (a tooltip, a card of a
# person's stories: thehill's "rollover-people-block"); the word it explains is its "trigger".
# The walk leaves out such a box when it holds links (a card of other pages), not the label of
# an icon ("American made" under a badge), which is the only text the icon has.
_POPUP_WORDS = frozenset("tooltip tooltips popover rollover hovercard".split())
_POPUP_TRIGGERS = frozenset("trigger toggle link".split())


# Utility classes that hide a box: display none (Bootstrap's "d-none") or visually hidden, left
# to screen readers ("sr-only", "visually-hidden", WordPress's "screen-reader-text",
# StackExchange's "v-visible-sr"). Not "hidden" or "hide": scripts toggle those to show a box.
_HIDING_CLASSES = frozenset("d-none sr-only visually-hidden screen-reader-text v-visible-sr".split())
# A class that shows the box again at some screen width ("d-none d-lg-block", Tailwind's "md:flex").
_SHOWN_AGAIN = re.compile(r"(?:^|\s)(?:d-\w+-|\w+:)(?:block|flex|inline|inline-block|inline-flex|grid|table|contents)(?:\s|$)")

# What the native walk looks for in an ASCII (tag, class, id, itemprop) before it calls
# _class_facts: when none is there, it names nothing (no chrome, hint, caption, hiding class or
# popup) and the walk makes its part itself. Words of the class and id (_WORDS) that name chrome
# or a popup; parts of the marker (hint), of the class and id (caption), of the class (hiding).
_NAMING_PARTS = (CHROME_WORDS | _POPUP_WORDS, _HINT_PARTS, _CAPTION_PARTS, _HIDING_CLASSES)


def _literals(pattern: re.Pattern) -> tuple[bytes, ...]:
    """The names of a regex that is an alternation of lowercase letters and "-" (as bytes)."""
    names = tuple(name.encode("ascii") for name in pattern.pattern.split("|"))
    if not all(re.fullmatch(rb"[a-z-]+", name) for name in names):
        raise ValueError(f"not an alternation of literal names: {pattern.pattern}")
    return names


# What the native walk needs to make _class_facts of an ASCII (tag, class, id, itemprop) whose
# class and id name no popup and hold no hiding class itself, on a miss of its memo (the others
# cost a Python call): each word of the word sets with what it names (_walk's W_* bits), and
# the literal names of _BODY_HINT, _BUILDER_WIDGET and _CAPTION_NAMES (but its "credit", which
# it looks for itself, not after "ac").
_CLASS_WORDS = (
    {
        word.encode("ascii"): (word in CHROME_WORDS) | (word in WRAPPER_WORDS) << 1 | (word in COMMENT_WORDS) << 2
        | (word in _POPUP_WORDS) << 3 | (word in ("widget", "widgets")) << 4
        for word in CHROME_WORDS | WRAPPER_WORDS | COMMENT_WORDS | _POPUP_WORDS
    },
    _literals(_BODY_HINT),
    _literals(_BUILDER_WIDGET),
    _literals(re.compile(_CAPTION_NAMES.pattern.removesuffix("|(?<!ac)credit"))),
)


def _hover_card(node) -> bool:
    """Whether an inline box named as a popup (_POPUP_WORDS), inside a paragraph, is the card
    shown while the pointer is over the word before it: it comes after an element (its
    trigger: thehill's linked name, a glossary's <dfn>) and holds links (other pages)."""
    return _element_before(node) is not None and node.css_first("a") is not None


def _class_hidden(cls: str) -> bool:
    """Whether a class attribute hides its box at every screen width (_HIDING_CLASSES: each
    has a "-", a test cheaper than splitting the class)."""
    return "-" in cls and not _HIDING_CLASSES.isdisjoint(cls.split()) and _SHOWN_AGAIN.search(cls) is None


# A paragraph of content (noise.GOOD_SIZE characters, few links): a page with one outside its
# comments has a post of its own, and its comments are not its content (a blog's open thread).
PARAGRAPH_CHARS = 150


# A chrome-named box with this many paragraphs of content (PARAGRAPH_CHARS each), and more
# text than the rest of the page, wraps the page (HubSpot's "widget-span", a "share" box
# around a whole article).
WRAPPER_PARAGRAPHS = 3
_CODE_TAGS = "script, style, template"
# The tag ids the native walk's ink and paragraph counts read (lexbor's static ids).
_CODE_TAG_IDS = tuple(LexborHTMLParser("").create_node(tag).tag_id for tag in _CODE_TAGS.split(", "))
_P_ID, _A_ID = (LexborHTMLParser("").create_node(tag).tag_id for tag in ("p", "a"))
# Chrome words of the dialogs laid over a page: their text (a cookie policy) can outweigh a
# listing's short cards, and they never wrap the page.
_OVERLAY_WORDS = frozenset(["cookie", "cookies", "consent", "popup", "modal"])


# A box named only by these words that holds an embedded post (_EMBEDDED_POST) is the post.
_SOCIAL_WORDS = frozenset(["social", "socialmedia"])
_SKIP_WORDS = frozenset(["skip"])
# Boxes named only by these words can be sections of the page (_a_section).
_BANNER_WORDS = frozenset(["banner"])
_WIDGET_WORDS = frozenset(["widget", "widgets"])
_NOT_SECTION_WORDS = frozenset(["review", "reviews", "rating", "ratings", "cta"])
_HEADINGS = "h1, h2, h3, h4, h5, h6"
# A widget (a CMS's unit of a page) is a section with a paragraph this long (a banner needs
# PARAGRAPH_CHARS and a heading: shops' promo banners are a heading and a line or two), and so
# is a carousel's slide hidden from screen readers (_slide).
SECTION_CHARS = 100
# The markup of a post embedded from a social network (what its script turns into a card).
_EMBEDDED_POST = "blockquote.twitter-tweet, blockquote.instagram-media, blockquote.tiktok-embed, blockquote.threads-post"


def _ink(text: str) -> int:
    """Characters of a text that are not blanks (markup indentation is most of a menu's)."""
    return len(text) - text.count(" ") - text.count("\n") - text.count("\t") - text.count("\r")


def _visible_ink(node, native=None) -> int:
    """_ink of a subtree's text, without its scripts' and styles' (tracking code outweighs many pages).
    ``native``: a native walk, which counts it in C when the texts are UTF-8."""
    if native is not None:
        ink = native.visible_ink(node, _CODE_TAG_IDS)
        if ink >= 0:
            return ink
    return _ink(node.text(deep=True)) - sum(_ink(s.text(deep=True)) for s in node.css(_CODE_TAGS))


def _deep_ink(node, native=None) -> int:
    """_ink of a subtree's text (``native``: as _visible_ink)."""
    if native is not None:
        ink = native.ink(node)
        if ink >= 0:
            return ink
    return _ink(node.text(deep=True))


def _css_first(node, selector: str):
    return node.css_first(selector)


def _holds_the_page(node, root, page_chars: list, chrome: int, first=_css_first, native=None) -> bool:
    """Whether a box named like chrome (``chrome``: its _class_facts verdict) is a wrapper of the
    page's content, not chrome: it holds the h1 or a marked article body (CONTENT_INSIDE), it is
    named only as social and holds a post embedded from a social network (_EMBEDDED_POST), it is
    named only "skip" and holds a paragraph (a section a table of contents skips to), it is a
    section of the page in a theme's or a page builder's markup (_a_section), or,
    named as chrome and not as comments (those the walk holds back), WRAPPER_PARAGRAPHS
    paragraphs of content and more text than the rest of the page, unless it is a dialog laid
    over the page (_OVERLAY_WORDS). Both walks ask this of every chrome-named box they meet;
    ``page_chars`` caches the text of ``root`` for one walk ([] until measured). The cheap tests
    come first: most chrome boxes hold neither an h1 nor a paragraph (one look for both).
    ``first(node, selector)`` is ``node.css_first(selector)``: the native walk's ``first``
    answers _FIRST_SELECTORS without parsing them at each call; ``native`` (that walk) counts
    the paragraphs and the ink in C (_paragraphs, _deep_ink, _visible_ink)."""
    wrappers = page_chars[1] if len(page_chars) > 1 else None
    words = None
    if wrappers:
        words = _chrome_words(node)
        up = node.parent
        while up is not None:
            named = wrappers.get(up.mem_id)
            if named is not None and words <= named:
                return True
            up = up.parent
    found = first(node, _MAY_HOLD_CONTENT_OR_P)
    if found is None:  # (menus and link lists, most chrome: one look)
        return False
    if words is None:
        words = _chrome_words(node)
    if found.tag == "p" and _SOCIAL_WORDS.issuperset(words) and node.css_first(_EMBEDDED_POST) is not None:
        return True  # a post embedded in the story ("social-media-embed" around a tweet), quoted as its text
    if words == _SKIP_WORDS and (found.tag == "p" or first(node, "p") is not None):
        return True  # a section named "skip-item" (netgear's topics): a skip link holds no paragraph
    if first(node, _MAY_HOLD_CONTENT) is not None and _content_inside(node):
        return _wrapper(node, page_chars)
    if _a_section(node, words, chrome, native):
        return _wrapper(node, page_chars)
    if chrome != _CHROME or (found.tag != "p" and first(node, "p") is None):
        return False
    if _deep_ink(node, native) < WRAPPER_PARAGRAPHS * PARAGRAPH_CHARS:
        return False
    if not _OVERLAY_WORDS.isdisjoint(_class_words(node)):
        return False
    if not _paragraphs(node, WRAPPER_PARAGRAPHS, native=native):
        return False
    if not page_chars or page_chars[0] < 0:
        page_chars[:1] = [_visible_ink(root, native)]
    return 2 * _visible_ink(node, native) > page_chars[0] and _wrapper(node, page_chars)


_WRAPS_THE_PAGE = "main, [itemprop=articleBody]"


def _chrome_tag_wraps(node) -> bool:
    """Whether a <nav> or an <aside> wraps the page's content: it holds its <main> or its marked
    article body (fermyon's <aside class="announcement-banner"> around the whole page; an h1 is
    not enough: sidebars title their widgets with h1s). Else it is chrome. (The native walk
    asks its ``first`` the same, _FIRST_SELECTORS.)"""
    return node.css_first(_WRAPS_THE_PAGE) is not None


def _content_inside(node) -> bool:
    """Whether a box holds what marks the page's content (CONTENT_INSIDE), the text of the
    comments on a question or an answer not counted (_qa_comment: StackExchange's, each an
    ``itemprop=text``, are comments, not a wrapper of the page; a forum's replies, schema.org
    ``Comment`` items of the thread, still count)."""
    first = node.css_first(CONTENT_INSIDE)
    if first is None:
        return False
    if first.attributes.get("itemprop") != "text":
        return True
    return any(hit.attributes.get("itemprop") != "text" or not _qa_comment(hit) for hit in node.css(CONTENT_INSIDE))


_QA_TYPES = ("/Question", "/Answer")


def _qa_comment(node) -> bool:
    """Whether an ``itemprop`` belongs to a schema.org ``Comment`` (its nearest item) inside a
    ``Question`` or an ``Answer`` item."""
    up, comment = node.parent, False
    while up is not None:
        attrs = up.attributes
        if "itemscope" in attrs:
            kind = (attrs.get("itemtype") or "").rstrip("/")
            if not comment:
                if not kind.endswith("/Comment"):
                    return False
                comment = True
            elif kind.endswith(_QA_TYPES):
                return True
        up = up.parent
    return False


def _a_section(node, words: frozenset, chrome: int, native=None) -> bool:
    """Whether a box named like chrome (its chrome ``words``) is a section of the page, in the
    markup of a theme or a page builder: an ``<article>`` named only as a comment outside any
    ``<article>`` (a forum's reply: HTML nests a comment's ``<article>`` in the one it is about;
    a blog's comment list is held back as a whole before its items are met), or, inside the
    page's ``<main>``/``<article>`` (or ``role="main"`` box), a box named only "banner" that
    holds a heading and a paragraph of content (Flatsome's ``div.banner`` sections of a service
    page), or one named only "widget" that holds a paragraph of SECTION_CHARS (SiteOrigin's
    ``so-panel widget``, reviewed.com's ``c-product-widget`` write-ups, CivicPlus's ``widget
    editor``), unless its class names reviews or a call to action (_NOT_SECTION_WORDS: a
    shop's reviews widget, a donation appeal under a story). (``native``: as _holds_the_page.)"""
    if chrome == _COMMENTS:
        return node.tag == "article" and not _inside(node, ("article",))
    if words == _BANNER_WORDS:
        if node.css_first(_HEADINGS) is None:
            return False
        least = PARAGRAPH_CHARS
    elif not words <= _WIDGET_WORDS or not _NOT_SECTION_WORDS.isdisjoint(_WORDS.findall((node.attributes.get("class") or "").lower())):
        return False
    else:
        least = SECTION_CHARS
    return _inside(node, CONTENT_ROOT_TAGS, main_role=True) and _paragraphs(node, 1, least, native)


def _inside(node, tags, main_role: bool = False) -> bool:
    """Whether a node has an ancestor of one of ``tags`` (``main_role``: or ``role="main"``)."""
    up = node.parent
    while up is not None:
        if up.tag in tags or (main_role and up.attributes.get("role") == "main"):
            return True
        up = up.parent
    return False


def _paragraphs(node, many: int, least: int = PARAGRAPH_CHARS, native=None) -> bool:
    """Whether a box holds ``many`` paragraphs of content (``least`` characters, few links).
    ``native``: a native walk, which counts them in C when the texts are UTF-8."""
    if native is not None:
        found = native.paragraphs(node, many, least, _P_ID, _A_ID)
        if found is not None:
            return found
    good = 0
    for p in node.css("p"):
        chars = _ink(p.text(deep=True))
        if chars >= least and sum(_ink(a.text(deep=True)) for a in p.css("a")) <= 0.3 * chars:
            good += 1
            if good >= many:
                return True
    return False


def _class_words(node) -> list[str]:
    attrs = node.attributes
    return _WORDS.findall(f"{attrs.get('class') or ''} {attrs.get('id') or ''}".lower())


def _chrome_words(node) -> frozenset:
    return frozenset(w for w in _class_words(node) if w in CHROME_WORDS)


def _wrapper(node, page_chars: list) -> bool:
    """Note a box taken as a wrapper: boxes inside it named by its own chrome words are its
    sections (a page builder's nested "widget" boxes), not chrome."""
    if not page_chars:
        page_chars.append(-1)
    if len(page_chars) == 1:
        page_chars.append({})
    page_chars[1][node.mem_id] = _chrome_words(node)
    return True


def _span_captions(out: Blocks, spans: list) -> None:
    """Mark as a caption a block whose text is mostly (half or more) inside inline boxes named as
    captions (``spans``: (block, span) pairs, the spans' _class_facts name a caption) and whose
    child blocks hold no text: a photo box of an image and a ``<span class="newsCaption">``, not
    a card whose title and summary sit beside a photo's credit span."""
    chars: dict[int, int] = {}
    for b, node in spans:
        chars[b] = chars.get(b, 0) + _ink(node.text(deep=True))
    parent, text, caption, n = out.parent, out.text, out.caption, len(out.tag)
    pictured = {b for b, _ in out.images}
    for b, inside in chars.items():
        if caption[b] or not inside or 2 * inside < _ink(text[b]):
            continue
        end, photo = b + 1, b in pictured  # (its subtree: the blocks after it whose parent is it or after it)
        while end < n and parent[end] >= b and not text[end]:
            photo = photo or end in pictured
            end += 1
        if photo and (end == n or parent[end] < b):
            caption[b] = True


# A page whose walk gives fewer words than SHOWN_WORDS shows next to nothing: its hidden boxes
# of HIDDEN_PAGE_WORDS words or more are its content, hidden until a script shows them.
HIDDEN_PAGE_WORDS = 100
SHOWN_WORDS = 25


def _hidden_pages(out: Blocks, hidden: list) -> frozenset:
    """The hidden boxes that hold the page (their mem_ids), when the walk gave no paragraph of
    content and fewer than SHOWN_WORDS words: the boxes hidden until a script shows them (eBay's
    sections with display:none, a <main aria-hidden>) that hold HIDDEN_PAGE_WORDS words and
    twice the words of the rest, and are not named as chrome (a hidden footer). The words are
    counted first, up to SHOWN_WORDS (a few blocks on most pages, which have hidden boxes:
    1,649 of corpus-2000's 1,998): _hidden_pages_reference's answer, sooner."""
    rest = 0
    for text in out.text:
        rest += len(text.split())
        if rest >= SHOWN_WORDS:
            return frozenset()
    if any(size >= PARAGRAPH_CHARS and link <= 0.3 * len(text) for text, size, link in zip(out.text, out.size, out.link)):
        return frozenset()
    return _hidden_boxes(hidden, rest)


def _hidden_pages_reference(out: Blocks, hidden: list) -> frozenset:
    """_hidden_pages as first written (its tests' reference)."""
    if any(size >= PARAGRAPH_CHARS and link <= 0.3 * len(text) for text, size, link in zip(out.text, out.size, out.link)):
        return frozenset()
    rest = sum(len(t.split()) for t in out.text)
    if rest >= SHOWN_WORDS:
        return frozenset()
    return _hidden_boxes(hidden, rest)


def _hidden_boxes(hidden: list, rest: int) -> frozenset:
    """The mem_ids of the ``hidden`` boxes not named as chrome that hold HIDDEN_PAGE_WORDS words
    and twice ``rest``, the words of the rest of the page."""
    boxes = []
    for node in hidden:
        attrs = node.attributes
        if _class_facts(node.tag, attrs.get("class") or "", attrs.get("id") or "", attrs.get("itemprop") or "")[0]:
            continue
        words = len(node.text(deep=True, separator=" ").split())
        if words >= HIDDEN_PAGE_WORDS and words >= 2 * rest:
            boxes.append(node.mem_id)
    return frozenset(boxes)


def _disclosed_box(node) -> bool:
    """Whether a hidden box is walked all the same: a panel its names tell (_disclosed), or one
    of a disclosure widget they do not (_panel)."""
    attrs = node.attributes
    return _disclosed(attrs) or _panel(node, attrs)


def _panel(node, attrs: dict) -> bool:
    """Whether a hidden box is the panel of a disclosure widget the walk cannot tell by its
    names (_disclosed): a carousel's slide (_slide), a box right after its toggle (a
    ``<summary>``, or an element with or holding one with ``aria-expanded``: Chakra's
    ``chakra-accordion__button`` over its ``chakra-collapse``, a question's ``<h3><button
    aria-expanded>`` over its answer), or a box with an id that the element before it (or
    before its parent), or one inside that element, names in its ``aria-controls`` (an
    accordion's ``<button aria-controls="content-1">`` over ``<div id="content-1"
    style="display:none">``); not a dialog. The toggle is looked for in the element and in
    TOGGLE_BOXES of its children and theirs, not in a large subtree. (A panel named as chrome
    is still chrome: the walk reads its names next.)"""
    if attrs.get("role") == "dialog":
        return False
    if _slide(node):
        return True
    ident = attrs.get("id")
    sibling = _element_before(node)
    if sibling is not None:
        if sibling.tag == "summary":
            return True
        for box in _toggle_boxes(sibling):
            box_attrs = box.attributes
            if "aria-expanded" in box_attrs or (ident and ident in (box_attrs.get("aria-controls") or "").split()):
                return True
    if ident and node.parent is not None:
        sibling = _element_before(node.parent)
        if sibling is not None:
            return any(ident in (box.attributes.get("aria-controls") or "").split() for box in _toggle_boxes(sibling))
    return False


TOGGLE_BOXES = 12


def _slide(node) -> bool:
    """Whether a box hidden only by ``aria-hidden="true"`` is a slide of a carousel that shows
    one at a time: an element sibling before or after it has its tag and its first class (the
    other slides: redfin's ``li.bp-Carousel__cell``), and it holds a paragraph of
    SECTION_CHARS (a slide of content, not a tile or a price plan of a tab)."""
    attrs = node.attributes
    if attrs.get("aria-hidden") != "true" or "hidden" in attrs or (attrs.get("style") and _HIDDEN_STYLE.search(attrs.get("style"))):
        return False
    first = (attrs.get("class") or "").split()[:1]
    if not first:
        return False
    for sibling in (_element_before(node), _element_after(node)):
        if sibling is not None and sibling.tag == node.tag and (sibling.attributes.get("class") or "").split()[:1] == first:
            return _paragraphs(node, 1, SECTION_CHARS)
    return False


def _element_before(node):
    sibling = node.prev
    while sibling is not None and not sibling.is_element_node:
        sibling = sibling.prev
    return sibling


def _element_after(node):
    sibling = node.next
    while sibling is not None and not sibling.is_element_node:
        sibling = sibling.next
    return sibling


def _toggle_boxes(node):
    """An element, then its element children and theirs, TOGGLE_BOXES of them at most: where a
    toggle sits (a heading's button, a header's link)."""
    yield node
    left = TOGGLE_BOXES
    child = node.child
    while child is not None:
        if child.is_element_node:
            yield child
            left -= 1
            grandchild = child.child
            while grandchild is not None and left > 0:
                if grandchild.is_element_node:
                    yield grandchild
                    left -= 1
                grandchild = grandchild.next
            if left <= 0:
                return
        child = child.next


def _held_back_is_the_page(out: Blocks, held: list) -> bool:
    """Whether the noscripts and comment boxes the walk held back are the page's content: the
    page declares itself a forum thread (_forum_thread), or the rest of the page has no
    paragraph of content (PARAGRAPH_CHARS) and fewer words than they hold (a forum thread
    whose posts are all "comments", a crawler copy in a noscript)."""
    if _forum_thread(held):
        return True
    if any(size >= PARAGRAPH_CHARS and link <= 0.3 * len(text) for text, size, link in zip(out.text, out.size, out.link)):
        return False
    return sum(len(n.text(deep=True).split()) for n in held) > sum(len(t.split()) for t in out.text)


# A page that declares itself a forum thread (schema.org DiscussionForumPosting, in microdata or
# JSON-LD): its replies, in boxes named as comments, are its posts.
_FORUM_MARKS = '[itemtype*="DiscussionForumPosting"], script[type="application/ld+json"]'
_FORUM_POSTING = re.compile(r'"@type"\s*:\s*(?:\[[^\]]*)?"DiscussionForumPosting"')


def _forum_thread(held: list) -> bool:
    """Whether comment boxes the walk held back are on a page that declares itself a forum
    thread (_FORUM_MARKS): Vanilla's "DataBox-Comments", Invision's "cTopic" box with
    id="comments" hold the replies the thread is made of."""
    if all(node.tag == "noscript" for node in held):
        return False
    root = held[0]
    while root.parent is not None:
        root = root.parent
    for mark in root.css(_FORUM_MARKS):
        if mark.tag != "script" or _FORUM_POSTING.search(mark.text()) is not None:
            return True
    return False


def _disclosed(attrs: dict) -> bool:
    """Whether a hidden block is a panel of a disclosure widget, whose text is the page's even
    while another of its panels is shown: a tab panel, an accordion's region (``role``), a box
    named as a tab, a panel, an accordion or a FAQ's answer and as no chrome (a modal's panel),
    or a segment React's streaming renderer sends hidden and a script moves in place (``S:1f``)."""
    if attrs.get("role") in _DISCLOSURE_ROLES or _STREAMED_SEGMENT.match(attrs.get("id") or ""):
        return True
    words = _WORDS.findall(f"{attrs.get('class') or ''} {attrs.get('id') or ''}".lower())
    return not _DISCLOSURE_WORDS.isdisjoint(words) and CHROME_WORDS.isdisjoint(words) and attrs.get("role") != "dialog"


_DISCLOSURE_ROLES = frozenset(["tabpanel", "region"])
_STREAMED_SEGMENT = re.compile(r"[SP]:[0-9a-f]+\Z")  # React 18's <div hidden id="S:0">, placed by $RC("B:0", "S:0")
_DISCLOSURE_WORDS = frozenset("tab tabs tabpanel pane panel accordion faq faqs answer".split())


def is_hidden(attrs: dict) -> bool:
    """Hidden by the ``hidden`` attribute, ``aria-hidden="true"`` or an inline style."""
    if "hidden" in attrs or attrs.get("aria-hidden") == "true" or attrs.get("type") == "hidden":
        return True
    style = attrs.get("style")
    return bool(style) and _HIDDEN_STYLE.search(style) is not None


def walk(tree, max_depth: int = 512, walker: BlockWalker | None = None) -> Blocks:
    """The blocks of a parsed page (see the module docstring). Never recursive. ``walker``
    keeps the memos from page to page (one per process: ``pipeline.Worker`` owns one); without
    it a fresh one serves this page only. (The pipeline walks each page once: ``ParsedPage``
    carries the blocks to both passes.)"""
    return (walker or BlockWalker()).walk(tree, max_depth)


# What the walk does with a node, by its tag name (see BlockWalker.walk).
_TEXT, _SKIP, _INLINE, _BLOCK, _A, _SPAN, _CELL, _BR, _IMG, _SOURCE, _NOSCRIPT = range(11)
# Attributes that can hide an element (is_hidden reads only these).
_HIDING_ATTRS = frozenset(["hidden", "aria-hidden", "type", "style"])


def _kind_of(tag: str | None) -> int:
    """The walk's rule for a node of this tag name (``node.tag``: ``-text`` for text nodes,
    ``-comment``/``-doctype``, None for other non-elements)."""
    if tag == "-text":
        return _TEXT
    if tag == "noscript":
        return _NOSCRIPT
    if tag is None or tag[0] == "-" or tag in SKIP_TAGS:
        return _SKIP  # comments, doctype; scripts, styles, controls, frames
    if tag in BLOCK_TAGS:
        return _BLOCK  # (nav, aside: chrome by their tag, unless they hold the page, _chrome_tag_wraps)
    if tag == "img":
        return _IMG
    if tag == "source":
        return _SOURCE
    if tag == "td" or tag == "th":
        return _CELL
    if tag == "br":
        return _BR
    if tag == "span" or tag == "font" or tag == "label" or tag == "small":
        return _SPAN
    return _A if tag == "a" else _INLINE


# The walk dispatches on lexbor's integer tag id (``node.tag_id``, no string made) through a
# memo of _kind_of (BlockWalker.kinds), filled on first sight of each id. Only ids of lexbor's
# static tag table are memoised: it names the tags lexbor knows (div, a, ...) with small ids,
# the same in every document; other names (<my-widget>, <o:p>) get per-document ids, pointers
# into the document, so those are looked up by name each time.
_STATIC_TAG_IDS = 1 << 16
# A text node's tag id (its tag is "-text" exactly when its id is this one).
_TEXT_ID = LexborHTMLParser("<p>x</p>").css_first("p").first_child.tag_id
_CLASS_MEMO_SIZE = 50_000  # memo entries kept before a memo is emptied (a bound, not a tuning)
_SIG_MEMO_SIZE = 100_000


_LINK_END = ()  # on the stack after a link's children: leaving the link
_FOLD_DIGITS = bytes(48 if 48 <= c <= 57 else c for c in range(256))  # ASCII digits -> "0"
# In UTF-8, every character besides 0-9 that \d matches (str.isdecimal: Arabic-Indic,
# Devanagari, Thai, fullwidth digits...) starts with one of these bytes or is a fullwidth digit,
# and 4-byte characters (the astral planes) are not told apart. Text where neither search finds
# anything has only 0-9 for digits: its bytes are folded with _FOLD_DIGITS, not the regex.
# (tests/html/test_blocks.py checks this against every character.)
_OTHER_DIGIT_LEAD = re.compile(rb"[\xd9\xdb\xdf\xe0\xe1\xea\xf0-\xf4]").search
_FULLWIDTH_DIGIT = re.compile(rb"\xef\xbc[\x90-\x99]").search
# A CJK character (_CJK) in UTF-8 starts with a byte from E3 to EF, or with E2 BA-BF: text
# with neither has none (text_size is its length).
_MAYBE_CJK = re.compile(rb"[\xe3-\xef]").search
_MAYBE_CJK_E2 = re.compile(rb"\xe2[\xba-\xbf]").search
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _walk_root(tree):
    """Where a walk starts: the page's <body>, else its root (None for an empty document)."""
    body = tree.body
    return body if body is not None else tree.root


class BlockWalker:
    """The block walk and its memos, which only depend on names, never on a page: the rule of
    each lexbor tag id (``kinds``), the names of block tags (``block_names``), the facts of
    each (tag, class, id, itemprop) (``class_memo``) and the signature of each (parent
    signature, path part) (``sig_memo``). A site repeats the same few of them on every page, so
    one walker per process (``pipeline.Worker``) walks all its pages; the memos are emptied when
    they outgrow a bound, so memory stays flat. ``images``: each image's raw attributes go into
    ``Blocks.images``, else None beside its block (the pipeline's when no algorithm reads them:
    its dict of attributes is most of an image's cost in the walk and in ParsedPage's bytes)."""

    def __init__(self, native: bool = True, images: bool = True) -> None:
        self.images = images
        self.kinds: dict[int, int] = {}
        self.block_names: dict[int, str] = {}  # tag id -> name, for block tags (names are stored)
        self.class_memo: dict[tuple[str, str, str, str], tuple[int, bool, str, bool, bool, bool]] = {}
        self.sig_memo: dict[tuple[int, str], int] = {}  # (parent signature, path part) -> signature
        # The native walk (its own memos), unless not asked for or not usable (native_status).
        self.native = _native_walk() if native and native_status() is None else None

    def class_facts(self, key: tuple[str, str, str, str]) -> tuple[int, bool, str, bool, bool, bool]:
        """_class_facts of (tag, class, id, itemprop), memoised (emptied past _CLASS_MEMO_SIZE)."""
        memo = self.class_memo
        facts = memo.get(key)
        if facts is None:
            facts = _class_facts(*key)
            if len(memo) > _CLASS_MEMO_SIZE:
                memo.clear()
            memo[key] = facts
        return facts

    def walk(self, tree, max_depth: int = 512, noscript: bool = False, shown: frozenset = frozenset()) -> Blocks:
        """The blocks of a parsed page (``walk``): natively when it can, else walk_reference.
        ``noscript``: enter the noscripts and comment boxes the walk would hold back; ``shown``:
        the hidden boxes to enter (their mem_ids, _hidden_pages)."""
        native = self.native
        if native is None:
            return self.walk_reference(tree, max_depth, noscript, shown)
        out = Blocks()
        root = _walk_root(tree)
        if root is None:
            return out
        spans: list = []
        hidden: list = []
        try:
            held = native.walk(root, max_depth, noscript, out, spans, hidden, shown, self.images)
        except (_walk.Unsupported, UnicodeEncodeError):  # (no page seen yet: see _walk's raises)
            return self.walk_reference(tree, max_depth, noscript, shown)
        if spans:
            _span_captions(out, spans)
        if held and not noscript and _held_back_is_the_page(out, held):
            return self.walk(tree, max_depth, noscript=True, shown=shown)
        if hidden and not shown:
            boxes = _hidden_pages(out, hidden)
            if boxes:
                return self.walk(tree, max_depth, noscript, boxes)
        return out

    def walk_reference(self, tree, max_depth: int = 512, noscript: bool = False, shown: frozenset = frozenset()) -> Blocks:
        """The blocks of a parsed page, in Python: the reference of the native walk.

        It is one piece on purpose: it was the hottest loop of pass 1 (every node of every
        page), and splitting it into functions per node kind would cost a Python call per node
        and the reloading of the dozen locals it keeps its state in. Its benchmark is
        ``bench/walk_speed.py`` (CPU time per page against the native walk, ``--native``, or an
        earlier revision, outputs compared, on the extraction sets). ``noscript``: enter the noscripts that hold block
        markup and the boxes named as comments (the walk does so by itself, walking again, when
        they hold more text than the rest of the page: a crawler copy, a forum thread)."""
        out = Blocks()
        root = _walk_root(tree)
        if root is None:
            return out
        opened: list[tuple] = []  # per block, when opened: (tag, parent, sig, in_article, hint, caption)
        closed: list[tuple] = []  # per block, when closed: (block, hash, text, link, size, content)
        image_keys: dict[int, list[str]] = {}  # block -> its image sources (few blocks have any)
        wide: list[int] = []  # blocks whose text may hold CJK characters (sized at the end, at once)
        images, image_attrs = out.images, self.images
        xxh = xxhash.xxh64_intdigest
        digits = _DIGITS.sub
        kinds, block_names, sig_memo, class_memo = self.kinds, self.block_names, self.sig_memo, self.class_memo
        facts_of = self.class_facts
        hiding = _HIDING_ATTRS.isdisjoint
        text_id, other_digit_lead, fullwidth_digit = _TEXT_ID, _OTHER_DIGIT_LEAD, _FULLWIDTH_DIGIT
        maybe_cjk, maybe_cjk_e2 = _MAYBE_CJK, _MAYBE_CJK_E2
        copies: list = []  # noscripts with block markup, and comments, not entered
        hidden_held: list = []  # hidden blocks, not entered
        page_chars: list = []  # the page's text length, once a chrome box asks (_holds_the_page)
        spans: list = []  # (block, span) of the inline boxes named as captions (_span_captions)

        # The current block's state lives in locals: its number, nesting depth, signature, own
        # text pieces, chars inside links, folded child hashes (Merkle step) and whether its
        # subtree has content; plus whether the walk is inside a link or an <article>/<main>.
        # Entering a block pushes the enclosing block's state as one tuple, after the block's
        # children: popping it finishes the block (its hash needs all its children) and restores
        # the enclosing state. Links push _LINK_END, an empty tuple. Most nodes cost one pop.
        block, depth, sig, own, link_chars, acc, has = -1, -1, 0, None, 0, 0, False
        in_link = article = False
        stack: list = [root]
        pop, push = stack.pop, stack.append
        ctx_type = tuple
        while stack:
            node = pop()
            if type(node) is ctx_type:
                if not node:  # _LINK_END
                    in_link = False
                    continue
                b, tag = block, node[-1]
                text = " ".join("".join(own).split()) if own else ""
                if text:
                    if text.isascii():
                        size = len(text)
                        folded = text.encode("ascii").translate(_FOLD_DIGITS)
                        while b"00" in folded:  # runs of digits -> one "0"
                            folded = folded.replace(b"00", b"0")
                    else:
                        folded = text.encode("utf-8", "surrogatepass")
                        if maybe_cjk(folded) is None and maybe_cjk_e2(folded) is None:
                            size = len(text)
                        else:
                            size = 0
                            wide.append(b)  # sized at the end, all at once
                        # (mostly ASCII, like Latin text with a few curly quotes: bytes are faster)
                        if len(folded) < 2 * len(text) and other_digit_lead(folded) is None and fullwidth_digit(folded) is None:
                            folded = folded.translate(_FOLD_DIGITS)
                            while b"00" in folded:
                                folded = folded.replace(b"00", b"0")
                        else:
                            folded = digits("0", text).encode("utf-8", "surrogatepass")
                    link = min(link_chars, len(text))
                    content = True
                else:  # no text: no link chars either (they count stripped text)
                    size = link = 0
                    folded = b""
                    content = has
                imgs = image_keys.get(b)
                h = xxh(b"%s\x00%s\x00%s\x00%d" % (
                    tag.encode(), folded, " ".join(imgs).encode("utf-8", "surrogatepass") if imgs else b"", acc
                ))  # fmt: skip
                closed.append((b, h, text, link, size, content))
                block, depth, sig, own, link_chars, acc, has, in_link, article, _ = node
                if block >= 0 and content:
                    acc = (acc * 1_000_003 + h) & _MASK64
                    has = True
                continue
            tid = node.tag_id
            if tid == text_id:  # (_kind_of's _TEXT: a node's tag is "-text" for this id only)
                if block >= 0:
                    s = node.text_content
                    if s:
                        own.append(s)
                        if in_link:
                            link_chars += len(s.strip())
                continue
            kind = kinds.get(tid)
            if kind is None:
                tag = node.tag
                kind = _kind_of(tag)
                if tid < _STATIC_TAG_IDS:
                    kinds[tid] = kind
                    if kind == _BLOCK:
                        block_names[tid] = tag
            if kind == _SKIP:
                continue
            if kind == _INLINE:
                pass
            elif kind == _NOSCRIPT:
                if node.css_first(_NOSCRIPT_CONTENT) is None:
                    continue
                if not noscript:
                    copies.append(node)
                    continue
            elif kind == _BLOCK:
                tag = block_names.get(tid) or node.tag
                if not article and tag in PAGE_CHROME_TAGS:
                    continue
                if tag in CHROME_TAGS and not _chrome_tag_wraps(node):
                    continue
                attrs = node.attributes
                if attrs:
                    if not hiding(attrs) and is_hidden(attrs) and not _disclosed_box(node):
                        if node.mem_id not in shown:
                            hidden_held.append(node)
                            continue
                    key = (tag, attrs.get("class") or "", attrs.get("id") or "", attrs.get("itemprop") or "")
                    facts = class_memo.get(key) or facts_of(key)
                    chrome, is_hint, part, is_caption, class_hidden, _ = facts
                    if class_hidden and tag not in ("html", "body", "main"):
                        continue
                    if chrome and tag not in ("html", "body", "main") and not _holds_the_page(node, root, page_chars, chrome):
                        if chrome != _COMMENTS:
                            continue
                        if not noscript:
                            copies.append(node)
                            continue
                else:
                    is_hint, part, is_caption = False, tag, False
                if depth >= max_depth:
                    # Too deep: the rest of this subtree is flat text of the current block.
                    s = node.text(deep=True, separator=" ")
                    if s:
                        own.append(" " + s + " ")
                    continue
                push((block, depth, sig, own, link_chars, acc, has, in_link, article, tag))
                child_sig = sig_memo.get((sig, part))
                if child_sig is None:
                    child_sig = xxh(f"{sig}/{part}".encode("utf-8", "surrogatepass"))
                    if len(sig_memo) > _SIG_MEMO_SIZE:
                        sig_memo.clear()
                    sig_memo[sig, part] = child_sig
                article = article or tag in CONTENT_ROOT_TAGS
                opened.append((tag, block, child_sig, article, is_hint, is_caption))
                block, depth, sig, own, link_chars, acc, has = len(opened) - 1, depth + 1, child_sig, [], 0, 0, False
            elif kind == _A:
                if not in_link:
                    child = node.last_child
                    if child is not None and child.prev is None and child.is_text_node:
                        # The common <a>words</a>: read its text here, no context to push.
                        if block >= 0:
                            s = child.text_content
                            if s:
                                own.append(s)
                                link_chars += len(s.strip())
                        continue
                    push(_LINK_END)
                    in_link = True
                    while child is not None:
                        push(child)
                        child = child.prev
                    continue
            elif kind == _SPAN:
                attrs = node.attributes
                if attrs:
                    if not hiding(attrs) and is_hidden(attrs):
                        continue
                    if block >= 0 and ("class" in attrs or "id" in attrs):
                        key = (node.tag, attrs.get("class") or "", attrs.get("id") or "", attrs.get("itemprop") or "")
                        facts = class_memo.get(key) or facts_of(key)
                        if facts[5] and opened[block][0] == "p" and _hover_card(node):
                            continue  # a card shown on hover (_POPUP_WORDS)
                        if facts[3] and key[0] == "span":
                            spans.append((block, node))
            elif kind == _CELL:
                # Cells are inline: a table row reads as one line ("1 Kyle Busch 5040").
                if block >= 0:
                    own.append(" ")
            elif kind == _BR:
                if block >= 0:
                    own.append(" ")
                continue
            elif kind == _IMG or (node.parent is not None and node.parent.tag == "picture"):  # _SOURCE
                if block >= 0:
                    attrs = node.attributes
                    raw = {k: attrs[k] for k in IMAGE_ATTRS if attrs.get(k)} if image_attrs else None
                    src = next(filter(None, map(attrs.get, SOURCE_ATTRS)), None)
                    if src:
                        images.append((block, raw))
                        if block in image_keys:
                            image_keys[block].append(src)
                        else:
                            image_keys[block] = [src]
                        has = True
                continue
            # Children, pushed in reverse so they come off the stack in document order; a lone
            # text child (<p>words</p>, <b>words</b>) is read here instead.
            child = node.last_child
            if child is None:
                continue
            prev = child.prev
            if prev is None and child.tag_id == text_id:
                if block >= 0:
                    s = child.text_content
                    if s:
                        own.append(s)
                        if in_link:
                            link_chars += len(s.strip())
                continue
            push(child)
            while prev is not None:
                push(prev)
                prev = prev.prev
        if opened:
            out.tag, out.parent, out.sig, out.in_article, out.hint, out.caption = map(list, zip(*opened))
            closed.sort()  # post-order -> block order
            _, out.hash, out.text, out.link, out.size, out.content = map(list, zip(*closed))
            if wide:
                sizes = out.size
                for b, size in zip(wide, _text_sizes([out.text[b] for b in wide])):
                    sizes[b] = size
            if spans:
                _span_captions(out, spans)
        if copies and not noscript and _held_back_is_the_page(out, copies):
            return self.walk_reference(tree, max_depth, noscript=True, shown=shown)
        if hidden_held and not shown:
            boxes = _hidden_pages(out, hidden_held)
            if boxes:
                return self.walk_reference(tree, max_depth, noscript, boxes)
        return out


# A page with what the native walk reads (attributes, text, a custom element, links, images,
# digits, CJK, hidden and chrome boxes): native_status checks the struct layouts on it, and
# that both walks give the same blocks.
_PROBE_PAGE = """<html><head><title>t</title></head><body class="page"><div id="main-1" class="post"
itemprop="articleBody"><h1>Title 2024</h1><p>Some <a href="/x">linked</a> text, <b>bold</b>
<my-widget data-x="1">custom</my-widget> 中文 ١٢٣ <img src="/a.png" alt="a"></p>
<div hidden>gone</div><span style="display: none">gone</span><ul class="menu"><li>m</li></ul>
<table><tr><td>1</td><th>x</th></tr></table><picture><source srcset="/b.webp"></picture>
<div><img src="/c.png"><span class="newsCaption">a caption</span></div>
</div></body></html>"""


@functools.cache
def native_status() -> str | None:
    """None when the native walk can run in this process, else why not (said once, as a
    warning: the walk then runs in pure Python). It reads selectolax's private structs, so it
    runs only with the selectolax version it declares them for, after checking them."""
    reason = _native_problem()
    if reason is not None:
        log.warning(
            "pagetwin's native block walk is off (%s): the block walk runs in pure Python, 4-6 times "
            "slower; `pip install -e .` builds it (needs a C compiler)",
            reason,
        )
    return reason


def _native_problem() -> str | None:
    if _walk is None:
        return f"not built: {_WALK_MISSING}"
    if selectolax.__version__ != _walk.SELECTOLAX:
        return f"selectolax {selectolax.__version__} is installed, it reads the structs of selectolax {_walk.SELECTOLAX}"
    try:
        names = _lexbor_functions()
        tree = LexborHTMLParser(_PROBE_PAGE)
        _walk.probe_layout(tree, LexborNode, _TEXT_ID, *names)
        for tag in _WALK_NAMES:  # the names the walk has rules for are lexbor's static tags
            if tree.create_node(tag).tag_id >= _STATIC_TAG_IDS:
                return f"<{tag}> is not a static tag of lexbor"
        if _walk.SOURCE_ATTRS != ("src", "data-src", "srcset", "data-srcset", "data-original"):
            return "its attributes of an image's source are not this module's"
        if _walk.CODES != (_TEXT, _SKIP, _INLINE, _BLOCK, _A, _SPAN, _CELL, _BR, _IMG, _SOURCE, _NOSCRIPT, _COMMENTS):
            return "its codes of node kinds are not this module's"
        native, reference = BlockWalker(native=False), BlockWalker(native=False)
        native.native = _native_walk(names)
        for noscript in (False, True):
            if native.walk(tree, 512, noscript) != reference.walk_reference(tree, 512, noscript):
                return "the native walk's blocks differ from the Python walk's on a probe page"
    except (OSError, AttributeError, AssertionError, ValueError, TypeError) as exc:
        return f"it does not fit the installed selectolax: {type(exc).__name__}: {exc}"
    return None


_WALK_FUNCTIONS = ("lxb_dom_attr_qualified_name", "lxb_dom_element_qualified_name")
_WALK_NAMES = sorted(
    SKIP_TAGS | BLOCK_TAGS | {"noscript", "img", "source", "td", "th", "br", "span", "font", "label", "small", "a", "picture"}
)


def _lexbor_functions() -> list[int]:
    """The addresses of the lexbor functions the native walk calls (_WALK_FUNCTIONS), exported
    by selectolax's module."""
    lexbor = ctypes.CDLL(selectolax.lexbor.__file__)
    return [ctypes.cast(getattr(lexbor, f), ctypes.c_void_p).value for f in _WALK_FUNCTIONS]


def _simple_selector(selector: str) -> tuple[tuple[int, ...], bool, bytes | None]:
    """(The tag ids, whether ``[itemprop]`` or ``[itemprop=value]`` is one, that value or None)
    of a selector list of tag names and one of those (the native walk's ``first`` answers only
    those)."""
    ids, itemprop, value = [], False, None
    for part in selector.split(","):
        part = part.strip()
        valued = re.fullmatch(r"\[itemprop=([A-Za-z]+)\]", part)
        if (part == "[itemprop]" or valued) and itemprop:
            raise ValueError(f"a second [itemprop]: {part!r}")
        if part == "[itemprop]":
            itemprop = True
        elif valued:
            itemprop, value = True, valued.group(1).encode()
        elif re.fullmatch(r"[a-z][a-z0-9]*", part):
            ids.append(LexborHTMLParser("").create_node(part).tag_id)
        else:
            raise ValueError(f"not a tag name, [itemprop] or [itemprop=letters]: {part!r}")
    return tuple(ids), itemprop, value


# The selectors the native walk's ``first`` answers (_holds_the_page's, the noscript test and
# _chrome_tag_wraps').
_FIRST_SELECTORS = {s: _simple_selector(s) for s in (_MAY_HOLD_CONTENT_OR_P, _MAY_HOLD_CONTENT, "p", _NOSCRIPT_CONTENT, _WRAPS_THE_PAGE)}


def _native_walk(names: list[int] | None = None):
    """A native walk (``pagetwin.html._walk``) with this module's rules."""
    if names is None:
        names = _lexbor_functions()
    return _walk.NativeWalk(
        LexborNode, *names, _TEXT_ID, LexborHTMLParser("").create_node("picture").tag_id,
        _kind_of, _class_facts, lambda style: _HIDDEN_STYLE.search(style) is not None, IMAGE_ATTRS,
        PAGE_CHROME_TAGS, CONTENT_ROOT_TAGS, _NOSCRIPT_CONTENT, _holds_the_page, _disclosed_box, _hover_card, CHROME_TAGS,
        _WRAPS_THE_PAGE, _CLASS_MEMO_SIZE, _FIRST_SELECTORS, _NAMING_PARTS, _MAY_HOLD_CONTENT_OR_P,
        LexborHTMLParser("").create_node("summary").tag_id, _CLASS_WORDS,
    )  # fmt: skip
