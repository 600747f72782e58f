"""Main content of a page: the page-level noise rules, the kernel that site-template removal
(``html.templates``) builds on.

The page (``html.blocks.walk``) is a tree of text blocks; chrome that is never content is
already gone (scripts, styles, hidden elements, nav/aside, menus by class). Then one keep-or-drop
decision per block:

1. **Page-level class** of each block with text, from its own evidence: link density (share of
   its characters inside ``<a>``), size (characters; a CJK character counts 3), block tag.
   ``good`` (long, few links; or LONG_SIZE characters and more with up to half of them in links:
   a category page's SEO text), ``near`` (medium, few links), ``short`` (under 30), ``bad``
   (link-dense, a bare URL, or one word said over and over: a
   script's font probe), ``teaser`` (link-dense, but four words or more: a headline or
   summary on a card), ``heading`` (a short linked heading too: the name of a card or of a
   service, read as a link when the page holds an article). The rows of a **data table**
   (``data_table_rows``: a ``<th>`` header, five rows or more of three cells or more) are
   text however many of their cells are links (a list of laureates, a league table).
2. **Main region**: every block's subtree gets a score from its good text G (good blocks in
   full, near blocks at half) and its link-dense text B: ``G * G / (G + 2 B)`` (much content,
   little chrome); the highest-scoring block (the deepest on ties) is the page's main region,
   unless the page marks its article body (``itemprop=articleBody``, ``entry-content``, ...)
   and that block scores at least half as much (a body marked in several boxes, split by figures
   and videos with no heading or links between them, is read whole: ``_hinted_parts``; a marked
   box inside the marked one that holds most of it is the body: ``_inner_body``). Text blocks outside the region are dropped,
   except the h1/h2 right before it (the article title). A region that is one item of a list of
   summaries (each linking a third to a half of its text: a newsletter's "10 things") is the list
   (``_prose_list``); a region holding sibling ``<article>``s, one with the page's only ``<h1>``, is
   that article (``_titled_article``: the others are other posts). Teasers are link-dense text (as bad)
   unless the page reads as a list: when this article reading finds no article (under three
   good paragraphs) and the region found with teasers counted as near text holds twice as much
   teaser text as content, that region is the main region and its teasers are kept (listings,
   category and front pages: their items are their content). A **card grid** (``_card_grid``:
   four or more sibling blocks of one signature, each of several text blocks, a name and a
   price, a title and a date) outside the region joins it, its cards kept in full, when it
   holds twice the region's content (four times beside an article): product and category
   grids whose short names are neither teasers nor good text (and tiles that are one link
   each, name, price and all, unless the page marks an article body: there they are a rail).
3. **Page-level keep** inside the region: good, near and headings (and teasers of a list); short blocks without links
   when the nearest non-short block before or after them is good or near (context, as jusText
   does), and so linked headings (a section or a story and its summary) and teasers in a slot
   of repeated items that only teasers fill (``_linked_parts``: the authors of each paper of a
   listing, between its title and its subjects), and a paragraph that links up to half of what it
   says when it fills the slot (signature) of two good paragraphs of the region or more (not a
   list item or a table cell: those are a headline and its summary), and the linked items of an
   index (``_index_lists``: lists of one slot under three headings or more, a list of programming
   languages); other link-dense blocks never. On a product page (a schema.org ``Product``) the section its reviews or
   customers' questions open is dropped (``_drop_reviews``), and its specifications are kept
   wherever they are (``_keep_specs``: three or more sibling "label: value" lines and their heading). Photo captions (``<figcaption>`` of a ``<figure>`` with an
   image) are dropped when the region holds an article without them and the page has no code
   (numbered figures, listings, quotes, short labels and galleries keep theirs), and so is the
   text of small boxes named as captions or galleries ("wp-caption-text"). A box the
   page renders twice (the same kept texts, two blocks or more, in a later subtree) is kept once,
   and so is a paragraph said again (a post quoted under it, a feature in a slider and a list).
4. **Site evidence** (a site model learned in pass 1 by ``templates.SiteTemplates``) is applied
   on top of this page-level decision by ``templates.SiteModel.decide`` (``SiteTemplates.apply``
   for a page of a named site): template blocks dropped, the slot priors of the site combined
   with the page's own evidence. This module knows nothing of sites: it is the page-level
   kernel both passes (and the site model's statistics) build on.

The lines kept are always a subsequence of the page's block texts.

The rules of steps 1-3 run natively when ``pip install`` has built ``html._page`` (C over the
Blocks columns, 3-4 times faster: ``native_rules``); the functions of this module are their
reference (``page_keep_reference``), tested against them, and what runs (with one warning) when
the native module is missing.
"""

from __future__ import annotations

import functools
import html as htmllib
import json
import logging
import re
from bisect import bisect_left
from collections import Counter
from itertools import compress, islice
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np
import xxhash
from selectolax.lexbor import LexborHTMLParser

from pagetwin.config import ExtractSettings
# Extracted and ParsedPage live with the blocks they are made of (and are named here too).
from pagetwin.html.blocks import HEADING_TAGS, BlockWalker, Blocks, Extracted, ParsedPage, text_size, walk

if TYPE_CHECKING:
    from pagetwin.html.templates import SiteModel

try:  # page_keep's rules in C (html/_page.pyx); the functions of this module are their reference
    from pagetwin.html import _page
except ImportError as exc:  # not compiled (a source checkout without `pip install -e .`)
    _page = None
    _PAGE_MISSING = str(exc)

log = logging.getLogger(__name__)

__all__ = ["Extracted", "ParsedPage", "classify", "extract", "extract_parsed", "main_region", "page_keep", "page_meta", "parse_page"]

GOOD, NEAR, SHORT, BAD, HEADING, EMPTY, TEASER = range(7)

GOOD_SIZE = 150  # characters (Latin equivalents) for a block to be content on its own
SHORT_SIZE = 30  # under this a block needs context
MAX_LINK_DENSITY = 0.3  # more text in links than this: not a paragraph of content
BAD_LINK_DENSITY = 0.5
NEAR_WEIGHT = 0.5
BAD_WEIGHT = 2.0
HINT_SHARE = 0.5
HINT_CLEAN = 0.8  # balance over good text of a part of a marked body split in boxes
# A teaser: a link-dense block that reads like a headline or a summary (a card of a listing),
# not like a menu entry: at least TEASER_WORDS words and TEASER_SIZE characters.
TEASER_SIZE = 20
TEASER_WORDS = 4
TEASER_WEIGHT = 0.5  # of a teaser's text in the list reading's region score (as NEAR)
LIST_RATIO = 2.0  # teaser text over content text for a page to read as a list
# Blocks that make a <figure> a listing, a quote or a table rather than a photo.
_NOT_PHOTO = frozenset(["pre", "blockquote", "table"])
# A caption the text refers to by number ("Figure 2.", "Fig. 3:", "Listing 9-3") is content.
_NUMBERED = re.compile(r"(?:fig(?:ure)?|listing|table|chart|diagram|abb(?:ildung)?)\.?\s*\d", re.IGNORECASE)
# A card grid (_card_grid): this many sibling cards of one signature, with this many text
# blocks each on average, this share of their text outside links, and this much text at least.
GRID_CARDS = 4
GRID_BLOCKS = 2
GRID_OWN = 0.2
GRID_SIZE = 300
GRID_SHARE = 0.5  # no card of a grid holds more than this share of its text
CAPTION_SIZE = 2 * GOOD_SIZE  # text of a box named as a caption (more: not a caption)
LONG_SIZE = 6 * GOOD_SIZE  # a block this long that links at most half of it is prose (an SEO text, not a menu)
FILLER_WORDS = 2  # distinct words, at most, among the first FILLER_SAID or more of a filler block
FILLER_SAID = 20
ARTICLE_SIZE = 3 * GOOD_SIZE  # content (three good paragraphs) that makes an article reading stand  # a marked article body needs this share of the best region's balance


def classify(blocks: Blocks) -> list[int]:
    """Page-level class of every block (EMPTY for blocks without own text)."""
    out = []
    for tag, text, size, link in zip(blocks.tag, blocks.text, blocks.size, blocks.link):
        if not text:
            out.append(EMPTY)
            continue
        density = link / len(text)
        if text.startswith(("http://", "https://", "www.")) and " " not in text:
            out.append(BAD)
        elif density > BAD_LINK_DENSITY:
            if size >= TEASER_SIZE and text.count(" ") >= TEASER_WORDS - 1:
                out.append(TEASER)
            else:  # a short linked heading: a link, or the name of a card (_article_or_list)
                out.append(HEADING if tag in HEADING_TAGS else BAD)
        elif tag in HEADING_TAGS:
            out.append(HEADING)
        elif density > MAX_LINK_DENSITY and len(text) < LONG_SIZE:
            out.append(BAD)
        elif size >= GOOD_SIZE:
            # One word said over and over ("word word word ...": a script's font probe) is filler.
            words = text[:GOOD_SIZE].split()
            out.append(BAD if len(words) >= FILLER_SAID and len(set(words)) <= FILLER_WORDS else GOOD)
        elif size < SHORT_SIZE:
            out.append(SHORT if link == 0 else BAD)
        else:
            out.append(NEAR)
    return out


def main_region(blocks: Blocks, classes: list[int]) -> list[bool]:
    """Blocks inside the page's main region (see the module docstring)."""
    n = len(blocks)
    if n == 0:
        return []
    good = [0.0] * n
    bad = [0.0] * n
    for b, (c, size) in enumerate(zip(classes, blocks.size)):
        if c == GOOD:
            good[b] = size
        elif c == NEAR:
            good[b] = NEAR_WEIGHT * size
        elif c == TEASER:
            good[b] = TEASER_WEIGHT * size
        elif c == BAD:
            bad[b] = size
    parent = blocks.parent
    for b in range(n - 1, 0, -1):  # children come after their parents: sum bottom-up
        p = parent[b]
        if p >= 0:
            good[p] += good[b]
            bad[p] += bad[b]
    balance = [g * g / (g + BAD_WEIGHT * x) if g > 0 else -x for g, x in zip(good, bad)]
    best = 0
    for b in range(1, n):
        # On a tie the deeper block wins (a wrapper adding nothing is not the region).
        if balance[b] > balance[best] or (balance[b] == balance[best] and parent[b] >= best):
            best = b
    if balance[best] <= 0:
        # No content text anywhere (a caption-less gallery, an image page): the region is the
        # whole page, so that its images are not lost; its text blocks still need to be good.
        return [True] * n
    # A block the page itself marks as the article body wins when it holds a good part of it.
    hinted = [b for b in range(n) if blocks.hint[b] and balance[b] > 0]
    if hinted:
        top = max(hinted, key=balance.__getitem__)
        if balance[top] >= HINT_SHARE * balance[best]:
            parts = _hinted_parts(blocks, classes, hinted, top, good, balance)
            if len(parts) > 1:
                inside = [False] * n
                for part in parts:
                    for b in _subtree_parent(parent, part):
                        inside[b] = True
                return inside
            best = _inner_body(parent, hinted, top, good, balance)
    inside = [False] * n
    for b in range(best, n):
        p = parent[b]
        if b == best or (p >= best and inside[p]):
            inside[b] = True
        elif b > best and p < best:
            break
    return inside


def _inner_body(parent: list[int], hinted: list[int], top: int, good: list[float], balance: list[float]) -> int:
    """The marked box inside the marked box ``top`` that is its body: of the outermost marked
    boxes inside it, the only one scoring HINT_SHARE of ``top`` or more, when the others hold
    less than HINT_SHARE of its good text (the outer box is a column holding the article and
    something else: a ticker of other stories above it, a product's buy box beside its
    description tab). Else ``top`` (the boxes inside it are the parts of its text)."""
    end = _subtree_parent(parent, top).stop
    outer: list[int] = []
    inner_end = 0
    for b in hinted:  # (in document order: a box before the end of the last one is inside it)
        if top < b < end and b >= inner_end:
            outer.append(b)
            inner_end = _subtree_parent(parent, b).stop
    strong = [b for b in outer if balance[b] >= HINT_SHARE * balance[top]]
    if len(strong) != 1 or sum(good[b] for b in outer if b != strong[0]) > HINT_SHARE * good[strong[0]]:
        return top
    return strong[0]


def _hinted_parts(blocks: Blocks, classes: list[int], hinted: list[int], top: int, good: list[float], balance: list[float]) -> list[int]:
    """The parts of a marked article body split in several boxes (its text between figures,
    quotes and videos, each part in a box the page marks as the body), in document order:
    ``top`` (the best marked box) and the outermost marked boxes next to it that hold GOOD_SIZE
    of good text or more, at least HINT_CLEAN of it clean of links, with at most SHORT_SIZE of
    link-dense text and no heading between one part and the next (a card's linked title between
    two marked excerpts makes them teasers of other stories, a reply's heading another post)."""
    parent = blocks.parent
    marked = set(hinted)
    parts = []
    for b in hinted:
        up = parent[b]
        while up >= 0 and up not in marked:
            up = parent[up]
        if up < 0 and (b == top or (good[b] >= GOOD_SIZE and balance[b] >= HINT_CLEAN * good[b])):
            parts.append(b)
    if len(parts) < 2 or top not in parts:  # (top inside a marked box: that box is the body)
        return [top]
    ends = [_subtree_parent(parent, b).stop for b in parts]
    linked = [0] * (len(blocks) + 1)  # prefix sums of link-dense text
    for b, (c, size) in enumerate(zip(classes, blocks.size)):
        # (A heading between two parts opens another post: it counts as a link does.)
        linked[b + 1] = linked[b] + (size if c in (BAD, TEASER) else SHORT_SIZE + 1 if c == HEADING else 0)
    at = parts.index(top)
    lo = hi = at
    while lo > 0 and linked[parts[lo]] - linked[ends[lo - 1]] <= SHORT_SIZE:
        lo -= 1
    while hi + 1 < len(parts) and linked[parts[hi + 1]] - linked[ends[hi]] <= SHORT_SIZE:
        hi += 1
    return parts[lo : hi + 1]


def _region_root(inside: list[bool]) -> int:
    """The first block of the main region (the box that holds it), -1 when it is empty."""
    return inside.index(True) if True in inside else -1


def _good_text(blocks: Blocks, classes: list[int], inside: list[bool]) -> float:
    return sum(size if c == GOOD else NEAR_WEIGHT * size for c, size, i in zip(classes, blocks.size, inside) if i and c in (GOOD, NEAR))


def _article_or_list(blocks: Blocks, classes: list[int]) -> tuple[list[int], list[bool]]:
    """(classes, main region) of the page read as an article (teasers and linked headings are
    link-dense: BAD) or, when that reading finds no article (less than ARTICLE_SIZE of
    content), with its linked headings as headings (the names of its cards, of the services
    it lists) and, when the region that counts teasers holds LIST_RATIO times more teaser text
    than content, as a list of teasers (a listing, a category page, a front page)."""
    linked = [c == HEADING and link * 2 > len(text) for c, link, text in zip(classes, blocks.link, blocks.text)]
    if TEASER not in classes and not any(linked):
        return classes, main_region(blocks, classes)
    as_article = [BAD if c == TEASER or x else c for c, x in zip(classes, linked)]
    inside_a = main_region(blocks, as_article)
    if _good_text(blocks, as_article, inside_a) >= ARTICLE_SIZE:
        return as_article, inside_a
    if TEASER in classes:
        inside_t = main_region(blocks, classes)
        teaser = sum(size for c, size, i in zip(classes, blocks.size, inside_t) if i and c == TEASER)
        if teaser > LIST_RATIO * _good_text(blocks, classes, inside_t):
            return classes, inside_t
    if not any(linked):
        return as_article, inside_a
    no_article = [BAD if c == TEASER else c for c in classes]
    return no_article, main_region(blocks, no_article)


def page_keep(blocks: Blocks, classes: list[int] | None = None, table_rows: frozenset[str] = frozenset()) -> tuple[list[bool], list[bool]]:
    """Page-level keep decision for every block, and the main-region mask (``table_rows``:
    the page's ``data_table_rows``): with the native rules when they are built
    (``native_rules``), else with ``page_keep_reference``'s."""
    rules = native_rules()
    if rules is not _REFERENCE:
        try:
            return _page_keep(blocks, classes, table_rows, rules)
        except (OverflowError, TypeError, ValueError):
            pass  # columns the native rules do not take (of other lengths, hashes past uint64)
    return _page_keep(blocks, classes, table_rows, _REFERENCE)


def page_keep_reference(blocks: Blocks, classes: list[int] | None = None, table_rows: frozenset[str] = frozenset()) -> tuple[list[bool], list[bool]]:
    """page_keep with the pure-Python rules of this module (the reference of html/_page.pyx)."""
    return _page_keep(blocks, classes, table_rows, _REFERENCE)


def _page_keep(blocks: Blocks, classes: list[int] | None, table_rows: frozenset[str], rules: _Rules) -> tuple[list[bool], list[bool]]:
    cols = rules.columns(blocks)  # (the native rules read the columns once, in C arrays)
    if classes is None:
        classes = rules.classify(cols)
    classes = _data_tables(blocks, classes, table_rows)
    teasers = classes
    classes, inside = rules.article_or_list(cols, classes)
    classes, inside = _prose_list(blocks, classes, inside)
    inside = rules.titled_article(cols, inside)
    inside = rules.whole_main(cols, classes, inside)
    parts = rules.linked_parts(cols, teasers, inside)
    prose = rules.prose_slots(cols, classes, inside)
    index = rules.index_lists(cols, classes, inside)
    keep = rules.region_keep(cols, classes, teasers, inside, parts, prose, index)
    if rules.captions_apply(cols):
        _drop_captions(blocks, classes, inside, keep)
    for b in rules.card_grid(cols, classes, inside):  # a grid's cards are its items, in full
        inside[b] = True
        keep[b] = classes[b] != EMPTY
    rules.drop_repeats(cols, keep)
    rules.drop_said_again(cols, keep)
    rules.drop_datelines(cols, keep)
    rules.keep_title(cols, classes, inside, keep)
    return keep, inside


def _region_keep(blocks: Blocks, classes: list[int], teasers: list[int], inside: list[bool], parts: set[int], prose: set[int], index: set[int]) -> list[bool]:
    """Step 3 of the module docstring inside the region: which text blocks are kept (``parts``,
    ``prose``, ``index``: ``_linked_parts``, ``_prose_slots``, ``_index_lists``)."""
    n = len(blocks)
    keep = [False] * n
    text_blocks = [b for b in range(n) if classes[b] != EMPTY]
    # Context of short blocks: the class of the nearest text block before / after that is
    # not short itself.
    before, after = [BAD] * len(text_blocks), [BAD] * len(text_blocks)
    last = BAD
    for i, b in enumerate(text_blocks):
        before[i] = last
        if classes[b] != SHORT:
            last = classes[b]
    last = BAD
    for i in range(len(text_blocks) - 1, -1, -1):
        after[i] = last
        if classes[text_blocks[i]] != SHORT:
            last = classes[text_blocks[i]]
    for i, b in enumerate(text_blocks):
        c = classes[b]
        if not inside[b]:
            continue
        if c in (GOOD, NEAR, HEADING, TEASER):
            keep[b] = True
        elif c == SHORT:
            keep[b] = before[i] in (GOOD, NEAR) or after[i] in (GOOD, NEAR)
        elif blocks.tag[b] in HEADING_TAGS:
            # A linked heading an article reading counts as a link: kept when it heads text.
            keep[b] = after[i] in (GOOD, NEAR)
        elif teasers[b] == TEASER and blocks.sig[b] in parts:
            # A part of a repeated item (the authors of a paper between its title and its
            # subjects) between two parts of content, not a link box.
            keep[b] = before[i] in (GOOD, NEAR) and after[i] in (GOOD, NEAR)
        elif c == BAD and blocks.tag[b] not in ("li", "tr", "td", "dd", "dt") and blocks.sig[b] in prose and blocks.size[b] >= GOOD_SIZE and blocks.link[b] <= BAD_LINK_DENSITY * len(blocks.text[b]):
            # A paragraph of the article's own slot that links much of what it says (sources,
            # names): prose all the same, not a link box.
            keep[b] = True
        elif b in index:
            keep[b] = True
    return keep


def _keep_title(blocks: Blocks, classes: list[int], inside: list[bool], keep: list[bool]) -> None:
    """Keep the title right before the region (an h1/h2 outside the article container), and
    the lead between them (``_keep_lead``)."""
    text_blocks = [b for b in range(len(blocks)) if classes[b] != EMPTY]
    first = next((i for i, b in enumerate(text_blocks) if inside[b]), None)
    if first is not None:
        for i in range(first - 1, max(0, first - 6) - 1, -1):
            b = text_blocks[i]
            if classes[b] == HEADING and blocks.tag[b] in ("h1", "h2"):
                keep[b] = True
                _keep_lead(blocks, text_blocks[i + 1 : first], classes, keep)
                break


def _keep_lead(blocks: Blocks, between: list[int], classes: list[int], keep: list[bool]) -> None:
    """The description of the story's video between the article's title and its region: good
    text inside an <object> (a Flash player's fallback, which is what a browser shows today).
    Other good text there (photo captions, teasers, standfirsts) the golds keep or not page by
    page: it stays out."""
    for b in between:
        if classes[b] == GOOD and _inside_object(blocks, b):
            keep[b] = True


def _inside_object(blocks: Blocks, b: int) -> bool:
    parent, tag = blocks.parent, blocks.tag
    b = parent[b]
    while b >= 0:
        if tag[b] == "object":
            return True
        b = parent[b]
    return False


# A Chinese article's dateline: a date and "来源" (source), "发布时间" (published), "更新" (updated)
# or "编辑" (editor): "2020-11-26 08:04 来源:中国新闻网", "发布时间：2022-02-13 来源：云南日报 分享到".
# Like a byline, not the story (wcxb's and chinese_wce's golds leave them out).
_CN_DATE = re.compile(r"\d{4}\s*[-年/.]\s*\d{1,2}\s*[-月/.]\s*\d{1,2}")
_CN_DATELINE = re.compile(r"来源|來源|发布时间|發布時間|发布日期|更新|责任编辑|編輯|编辑")
# A site's legal line: "版权所有" (all rights reserved), or a Chinese ICP licence number
# ("滇ICP备11000491号"), which only a site's footer states, however long it is (LONG_SIZE).
_CN_LEGAL = re.compile(r"版权所有|版權所有")
_CN_LICENCE = re.compile(r"ICP\s*[备備证證]")
DATELINE_SIZE = 2 * GOOD_SIZE  # longer: a paragraph that names a date and a source


def _drop_datelines(blocks: Blocks, keep: list[bool]) -> None:
    """Drop the datelines and legal lines of Chinese pages (above) from what is kept."""
    text, size = blocks.text, blocks.size
    for b, k in enumerate(keep):
        if not k or size[b] >= LONG_SIZE:
            continue
        t = text[b]
        if t.isascii():  # every word the rules look for is Chinese (quick to rule out)
            continue
        if _CN_LICENCE.search(t) or (size[b] < DATELINE_SIZE and (_CN_LEGAL.search(t) or (_CN_DATE.search(t) and _CN_DATELINE.search(t)))):
            keep[b] = False


MAIN_GAIN = 1.1  # content of the page's <main> over the region's for the <main> to be the region
MAIN_BAD = 0.6  # link-dense text of that <main>, at most, over its content


def _whole_main(blocks: Blocks, classes: list[int], inside: list[bool]) -> list[bool]:
    """The page's ``<main>`` around the region is the region when it holds MAIN_GAIN times the
    region's content, link-dense text of at most MAIN_BAD of its content, and no story (no
    marked body or ``<article>`` in the region, no ``<article>`` between it and the ``<main>``):
    a service page says what it offers in several sections, of which the region is one."""
    parent = blocks.parent
    top = _region_root(inside)
    m = top
    while m >= 0 and blocks.tag[m] != "main":
        m = parent[m]
    # (A region the page marks as an article body, or with an <article>, is a story: kept as it is.)
    if m < 0 or m == top or any(i and (h or t == "article") for i, h, t in zip(inside, blocks.hint, blocks.tag)):
        return inside
    up = parent[top]
    while up > m and blocks.tag[up] != "article":
        up = parent[up]
    if up != m:
        return inside
    good = bad = 0.0
    span = _subtree_parent(parent, m)
    for b in span:
        c = classes[b]
        if c == GOOD:
            good += blocks.size[b]
        elif c == NEAR:
            good += NEAR_WEIGHT * blocks.size[b]
        elif c in (BAD, TEASER):
            bad += blocks.size[b]
    if good < MAIN_GAIN * _good_text(blocks, classes, inside) or bad > MAIN_BAD * good:
        return inside
    out = list(inside)
    for b in span:
        out[b] = True
    return out


TABLE_ROWS = 5  # rows of a data table, at least
TABLE_CELLS = 3  # cells of each of those rows, at least


def data_table_rows(tree, walker: BlockWalker | None = None) -> frozenset[str]:
    """The rows of the page's data tables, as their text without whitespace (the key a row's
    block is found by): a ``<table>`` with a header cell (``<th>``) and TABLE_ROWS rows or more
    of TABLE_CELLS cells (a year, a name, a figure; a layout table has one or two columns, a
    list of headlines one). With the native walk (``walker.native``), the tables holding a
    ``<th>`` are found in one C pass (two css searches a table took ~0.4 ms a page that has rows)."""
    native = walker.native if walker is not None else None
    root = tree.root
    if native is None or root is None:
        tables = [table for table in tree.css("table") if table.css_first("th") is not None]
    else:
        tables = native.tables_holding(root, _TABLE_ID, _TH_ID)
    out: set[str] = set()
    for table in tables:
        keys = []
        for row in table.css("tr"):
            cells = sum(1 for c in row.iter() if c.tag in ("td", "th"))
            key = "".join(row.text().split()) if cells >= TABLE_CELLS else ""
            if key:
                keys.append(key)
        if len(keys) >= TABLE_ROWS:
            out.update(keys)
    return frozenset(out)


def _data_tables(blocks: Blocks, classes: list[int], rows: frozenset[str]) -> list[int]:
    """Classes with the link-dense rows of data tables (``data_table_rows``) read as text: a
    row of a list of laureates or of a league table links its names, and is the page's data all
    the same. A row is a ``<tr>`` block holding no block of its own (cells of text), one of
    TABLE_ROWS such siblings of the table's rows."""
    if not rows:
        return classes
    n = len(blocks)
    children = [0] * n
    for p in blocks.parent:
        if p >= 0:
            children[p] += 1
    found: dict[int, list[int]] = {}
    for b, tag in enumerate(blocks.tag):
        if tag == "tr" and blocks.text[b] and not children[b] and "".join(blocks.text[b].split()) in rows:
            found.setdefault(blocks.parent[b], []).append(b)
    out = list(classes)
    for group in found.values():
        if len(group) >= TABLE_ROWS:
            for b in group:
                if out[b] in (BAD, TEASER):
                    out[b] = NEAR if blocks.size[b] >= SHORT_SIZE else SHORT
    return out


PROSE_ITEMS = 3  # sibling items of one signature that make a list of summaries
PROSE_LINKS = 0.7  # the most of an item's text in links (its summary's own links) in such a list


def _titled_article(blocks: Blocks, inside: list[bool]) -> list[bool]:
    """The region narrowed to the one ``<article>`` holding the page's ``<h1>`` when it holds
    that article and sibling ``<article>``s without one (other posts: "you may also like" under
    the story, the next stories of an endless scroll)."""
    root = _region_root(inside)
    if root < 0:
        return inside
    tags, parent = blocks.tag, blocks.parent
    end = _subtree_parent(parent, root).stop
    h1 = [b for b in range(root, end) if tags[b] == "h1" and blocks.text[b]]
    if len(h1) != 1:
        return inside
    arts = [b for b in range(root + 1, end) if tags[b] == "article"]
    if len(arts) < 2:
        return inside
    up = h1[0]
    while up > root and tags[up] != "article":
        up = parent[up]
    if up <= root or not any(parent[b] == parent[up] and b != up for b in arts):
        return inside
    out = [False] * len(blocks)
    for b in _subtree_parent(parent, up):
        out[b] = True
    return out


def _prose_list(blocks: Blocks, classes: list[int], inside: list[bool]) -> tuple[list[int], list[bool]]:
    """(classes, region) when the region is one item of a list of summaries: PROSE_ITEMS sibling
    blocks or more of its signature, GOOD_SIZE or more and at most BAD_LINK_DENSITY of their
    text in links at the median (each a sentence or two that links what it names: a
    newsletter's "10 things"). The list is the region then, its items with up to PROSE_LINKS
    of their text in links good text. (Otherwise unchanged: such lists beside an article, a
    ticker of headlines and their first lines, are not its text.)"""
    root = _region_root(inside)
    if root <= 0 or not blocks.text[root]:
        return classes, inside
    parent, sig = blocks.parent[root], blocks.sig[root]
    items = [b for b in _subtree_parent(blocks.parent, parent) if blocks.parent[b] == parent and blocks.sig[b] == sig and blocks.text[b]]
    if len(items) < PROSE_ITEMS:
        return classes, inside
    half = len(items) // 2
    if sorted(blocks.size[b] for b in items)[half] < GOOD_SIZE:
        return classes, inside
    if sorted(blocks.link[b] / len(blocks.text[b]) for b in items)[half] > BAD_LINK_DENSITY:
        return classes, inside
    classes = list(classes)
    for b in items:
        if classes[b] in (BAD, TEASER) and blocks.link[b] <= PROSE_LINKS * len(blocks.text[b]):
            classes[b] = GOOD
    inside = [False] * len(blocks)
    for b in _subtree_parent(blocks.parent, parent):
        inside[b] = True
    return classes, inside


def _linked_parts(blocks: Blocks, classes: list[int], inside: list[bool]) -> set[int]:
    """Signatures of the region's linked parts of items: a slot (``sig``) of GRID_CARDS text
    blocks or more in the region, all of them link-dense (TEASER or BAD), so not a slot the
    region's paragraphs share."""
    if TEASER not in classes:
        return set()
    seen: Counter = Counter()
    linked: Counter = Counter()
    for sig, c, i, t in zip(blocks.sig, classes, inside, blocks.text):
        if i and t:
            seen[sig] += 1
            linked[sig] += c in (TEASER, BAD)
    return {sig for sig, count in seen.items() if count >= GRID_CARDS and linked[sig] == count}


PROSE_SLOT = 2  # good paragraphs of one signature in the region that make it the article's slot


def _prose_slots(blocks: Blocks, classes: list[int], inside: list[bool]) -> set[int]:
    """Signatures of PROSE_SLOT good paragraphs or more in the region (the slot of the
    article's own paragraphs: a ``<p>`` of the body container)."""
    seen: Counter = Counter(sig for sig, c, i in zip(blocks.sig, classes, inside) if i and c == GOOD)
    return {sig for sig, count in seen.items() if count >= PROSE_SLOT}


INDEX_SECTIONS = 3  # lists of one slot, each under its own heading, that make an index
INDEX_ITEMS = 5  # linked items of each of those lists, at least


def _index_lists(blocks: Blocks, classes: list[int], inside: list[bool]) -> set[int]:
    """The items of the region's index lists (a list of programming languages, of a
    category's pages): lists of linked ``<li>`` items of one signature, INDEX_ITEMS or more
    each, in INDEX_SECTIONS lists or more that each follow a heading of their own (A, B, C...).
    A menu is one list, a "see also" box one or two."""
    lists: dict[int, dict[int, list[int]]] = {}
    for b, (c, tag, i) in enumerate(zip(classes, blocks.tag, inside)):
        if i and tag == "li" and c in (BAD, TEASER):
            lists.setdefault(blocks.sig[b], {}).setdefault(blocks.parent[b], []).append(b)
    out: set[int] = set()
    if not lists:
        return out
    heading_before: dict[int, bool] = {}
    last_heading = -1
    for b, tag in enumerate(blocks.tag):
        if tag in HEADING_TAGS and blocks.text[b]:
            last_heading = b
        heading_before[b] = last_heading
    for by_parent in lists.values():
        sections = [items for p, items in by_parent.items() if len(items) >= INDEX_ITEMS]
        heads = {heading_before[items[0]] for items in sections if heading_before[items[0]] >= 0}
        if len(sections) >= INDEX_SECTIONS and len(heads) >= INDEX_SECTIONS:
            for items in sections:
                out.update(items)
    return out


REPEAT_SIZE = 100  # characters of a paragraph kept once however often the page says it


def _drop_said_again(blocks: Blocks, keep: list[bool]) -> None:
    """Keep a paragraph (REPEAT_SIZE or more) once: the same text kept again later is the
    page's second rendering of it (a feature in a slider and in a list, a forum post quoted
    under it, an answer shown in a teaser and in full), not more of its content."""
    said: set[str] = set()
    for b, (text, size) in enumerate(zip(blocks.text, blocks.size)):
        if keep[b] and size >= REPEAT_SIZE:
            if text in said:
                keep[b] = False
            said.add(text)


def _drop_repeats(blocks: Blocks, keep: list[bool]) -> None:
    """Drop the kept text of a box the page already showed: a subtree whose kept texts (two
    blocks or more, GOOD_SIZE in all) are word for word those of an earlier, disjoint one (pages
    render some boxes twice, a product's header for phones and for desktops; said twice it is
    not twice the content). Single lines that repeat (a coupon's terms on every card) stay."""
    texts = [t for t, k in zip(blocks.text, keep) if k and t]
    if len(set(texts)) == len(texts):
        return  # no kept text said twice (most pages)
    times = Counter(texts)
    # Every text of a box said twice is said twice: without 2 x GOOD_SIZE of such text there
    # is nothing to do.
    if sum(len(t) * c for t, c in times.items() if c > 1) < 2 * GOOD_SIZE:
        return
    kept = [b for b, (t, k) in enumerate(zip(blocks.text, keep)) if k and t]  # in document order
    ids = {t: i for i, t in enumerate(times)}
    said = [ids[blocks.text[b]] for b in kept]
    once, size = [0], [0]  # prefix sums over `kept`: texts said once, text size
    for b in kept:
        once.append(once[-1] + (times[blocks.text[b]] == 1))
        size.append(size[-1] + blocks.size[b])
    end = _subtree_ends(blocks)
    first: dict[tuple[int, ...], int] = {}  # kept texts of a box -> where the first such box ends
    b = 0
    while b < len(blocks):
        lo, hi = bisect_left(kept, b), bisect_left(kept, end[b])  # the box's kept texts
        if hi - lo >= 2 and once[hi] == once[lo] and size[hi] - size[lo] >= GOOD_SIZE:
            key = tuple(said[lo:hi])
            # (A wrapper and its only child say the same: the first box must end before b.)
            if first.get(key, len(blocks)) <= b:
                for x in kept[lo:hi]:
                    keep[x] = False
                b = end[b]
                continue
            first.setdefault(key, end[b])
        b += 1


def _card_grid(blocks: Blocks, classes: list[int], inside: list[bool]) -> list[int]:
    """The blocks of the page's card grid, if it has one that outweighs its main region: the
    largest group of at least GRID_CARDS sibling blocks of one structural signature (the same
    tag path, class and id: the cards of a product grid, the rows of a listing) that hold none
    of the region's content, none holding more than GRID_SHARE of their text, whose median card
    has GRID_BLOCKS text blocks (a name and a price, a title and a date; a menu's entry has
    one), with GRID_OWN of their text outside
    links and LIST_RATIO times the content text of the main region (twice that beside an
    article: its rails of other stories are not its content). The share of text outside links
    is asked only of cards around the region's kept teasers (their dates and counts are not
    items) and on a page that marks its article body (its linked rails): a shop's tiles are
    often one ``<a>`` each, name, material and price. A short name or a price is never
    content on its own: the repetition of a card with several parts says they are the items."""
    n = len(blocks)
    content = _good_text(blocks, classes, inside)
    need = max(GRID_SIZE, (LIST_RATIO if content < ARTICLE_SIZE else 2 * LIST_RATIO) * content)
    # Cards hold none of the region's content: the rest of the text must come to `need` (on
    # most articles it does not).
    rest = sum(blocks.size) - sum(x for x, c, i in zip(blocks.size, classes, inside) if i and c in (GOOD, NEAR))
    if n < GRID_CARDS or rest < need:
        return []
    parent = blocks.parent
    size, link, texts, holds, teasers = _subtree_sums(blocks, classes, inside)
    groups: dict[tuple[int, int], list[int]] = {}
    for b in range(1, n):
        if size[b] and not holds[b]:
            groups.setdefault((parent[b], blocks.sig[b]), []).append(b)
    best, best_size = [], 0
    marked = any(blocks.hint)
    for cards in groups.values():
        total = sum(size[c] for c in cards) if len(cards) >= GRID_CARDS else 0
        if total <= best_size:
            continue
        # Cards that are links through and through (a product tile or a programme's card
        # wrapped in one <a>) are a grid all the same, except around the region's kept teasers
        # (their dates and counts would join the titles) or beside a marked article (a rail).
        linked = marked or any(teasers[c] for c in cards)
        if linked and total - sum(link[c] for c in cards) < GRID_OWN * total:
            continue
        if max(size[c] for c in cards) > GRID_SHARE * total:
            continue  # one card holding most of the text: boxes of a layout, not a grid
        if sorted(texts[c] for c in cards)[len(cards) // 2] >= GRID_BLOCKS:
            best, best_size = cards, total
    if best_size < need:
        return []
    out = []
    for card in best:
        out.extend(_subtree(blocks, card))
    return out


def _subtree_sums(blocks: Blocks, classes: list[int], inside: list[bool]) -> tuple[list[int], list[int], list[int], list[bool], list[bool]]:
    """Per block, over its subtree: text size, link characters, text blocks, whether it
    holds content of the main region (a card holding some is a column of the page's layout, or
    the post the region found, not a card beside the region), and whether it holds teasers of
    the region (a list reading's items). A subtree is a run of blocks in document order
    (``_subtree_ends``): each sum is a difference of two prefix sums."""
    start = np.arange(len(blocks))
    stop = np.asarray(_subtree_ends(blocks))

    def over(values) -> list:
        total = np.concatenate(([0], np.cumsum(values, dtype=np.int64)))
        return (total[stop] - total[start]).tolist()

    sizes = np.asarray(blocks.size, dtype=np.int64)
    links = np.minimum(np.asarray(blocks.link, dtype=np.int64), sizes)
    texts = np.asarray([1 if t else 0 for t in blocks.text])
    holds = np.asarray([i and c in (GOOD, NEAR) for i, c in zip(inside, classes)], dtype=np.int64)
    teasers = np.asarray([i and c == TEASER for i, c in zip(inside, classes)], dtype=np.int64)
    return over(sizes), over(links), over(texts), [h > 0 for h in over(holds)], [t > 0 for t in over(teasers)]


def _subtree_ends(blocks: Blocks) -> list[int]:
    """Where each block's subtree ends: the first block after it that is not its descendant."""
    parent = blocks.parent
    end = list(range(1, len(blocks) + 1))
    for b in range(len(blocks) - 1, 0, -1):  # children come after their parents
        p = parent[b]
        if p >= 0 and end[b] > end[p]:
            end[p] = end[b]
    return end


def _subtree_parent(parent: list[int], b: int) -> range:
    """A block and its descendants, from the parent list."""
    end = b + 1
    while end < len(parent) and parent[end] >= b:
        end += 1
    return range(b, end)


def _subtree(blocks: Blocks, b: int) -> range:
    """A block and its descendants: the blocks after it whose parent is it or after it."""
    return _subtree_parent(blocks.parent, b)


def _photo_captions(blocks: Blocks) -> list[bool]:
    """Blocks inside the ``<figcaption>`` of a photo: a ``<figure>`` that holds an image, no
    code, quote or table, and no caption numbered like a figure the text refers to (the caption
    of a code listing, a chart or the source of a quote is content)."""
    n = len(blocks)
    tags, parent = blocks.tag, blocks.parent
    # No block before the first <figure> is in one (its parent is before it, or not yet read
    # and so in none): the passes start there.
    try:
        start = tags.index("figure")
    except ValueError:
        return [False] * n
    figure = [-1] * n  # the nearest <figure> a block is in
    caption = [False] * n
    for b in range(start, n):  # parents come before their children
        tag, up = tags[b], parent[b]
        figure[b] = b if tag == "figure" else (figure[up] if up >= 0 else -1)
        caption[b] = figure[b] >= 0 and (tag == "figcaption" or (up >= 0 and caption[up]))
    photo = [False] * n
    for b, _ in blocks.images:
        if 0 <= b < n and figure[b] >= 0:
            photo[figure[b]] = True
    texts = blocks.text
    for b in range(start, n):
        if figure[b] >= 0 and (tags[b] in _NOT_PHOTO or (caption[b] and _NUMBERED.match(texts[b]))):
            photo[figure[b]] = False
    # A label under a photo (a name, a date: under SHORT_SIZE in all) is not a caption sentence.
    said = [0] * n
    sizes = blocks.size
    captioned = list(compress(range(n), caption))
    for b in captioned:
        said[figure[b]] += sizes[b]
    for b in captioned:
        caption[b] = photo[figure[b]] and said[figure[b]] >= SHORT_SIZE
    return caption


def _named_captions(blocks: Blocks) -> list[int]:
    """The blocks (headings aside) inside a box the page names as a caption or a gallery
    (``Blocks.caption``: "wp-caption-text", "newsCaption", a gallery's "caption-full") that
    holds at most CAPTION_SIZE of text (a photo's caption and credit; a box holding more is a
    layout's, whatever its name). Only the named boxes' subtrees are read (few, most small)."""
    parent, sizes, tags = blocks.parent, blocks.size, blocks.tag
    n = len(blocks)
    out: list[int] = []
    taken = 0  # where the last box taken ends: the boxes inside it are in it already
    for b in list(compress(range(len(blocks.caption)), blocks.caption)):
        if b < taken:
            continue
        end, total = b + 1, sizes[b]
        while end < n and parent[end] >= b and total <= CAPTION_SIZE:
            total += sizes[end]
            end += 1
        if total > CAPTION_SIZE:
            continue  # (a box inside it may still be a caption)
        out.extend(x for x in range(b, end) if tags[x] not in HEADING_TAGS)
        taken = end
    return out


def _drop_captions(blocks: Blocks, classes: list[int], inside: list[bool], keep: list[bool]) -> None:
    """Drop photo captions (``_photo_captions``, ``_named_captions``) when the region holds an
    article without them (at least ARTICLE_SIZE of other content) and no code: a photo's caption
    and credit are not the story. On a gallery the captions are the only text, and stay."""
    tags = blocks.tag
    figures, named = "figcaption" in tags, any(blocks.caption)
    if "pre" in tags or not (figures or named):
        # With code on the page (documentation, a tutorial) figures are diagrams the text
        # walks through: their captions stay.
        return
    # The caption blocks by number (a page has few): no list of flags a block to read through.
    marked = list(compress(range(len(blocks)), _photo_captions(blocks))) if figures else []
    if named:
        marked += _named_captions(blocks)
    if not any(keep[b] for b in marked):
        return
    rest = list(inside)
    for b in marked:
        rest[b] = False
    if _good_text(blocks, classes, rest) >= ARTICLE_SIZE:
        for b in marked:
            keep[b] = False


# page_meta's tags, found in one pass over the DOM (every css query walks all of it, found or
# not: 0.1-0.15 ms a page each, whatever the selectors), then told apart by the attribute that
# matched: name and property values are compared as written (no HTML attribute whose value a
# selector matches without case), in document order (lexbor lists a node once for each
# selector it matches: the first of each kind is kept). The keys: the selectors page_meta used
# one at a time, in their order.
_META_TAGS = 'title, meta[name="description"], meta[name="Description"], meta[property="og:description"], meta[property="og:title"]'
_DESCRIPTIONS = (("name", "description"), ("name", "Description"), ("property", "og:description"))


def page_meta(tree) -> tuple[str, str]:
    """(title, description) of a page: <title> (or og:title), meta description (or og:description):
    the first element of each kind in the page."""
    return _page_meta_of(tree.css(_META_TAGS))


def _page_meta_of(nodes) -> tuple[str, str]:
    """page_meta of the page's nodes that _META_TAGS matches, in document order."""
    first: dict = {}
    for node in nodes:
        if node.tag == "title":
            first.setdefault("title", node)
            continue
        attributes = node.attributes
        for key in _DESCRIPTIONS + (("property", "og:title"),):
            if attributes.get(key[0]) == key[1]:
                first.setdefault(key, node)
    title = ""
    node = first.get("title")
    if node is not None:
        title = " ".join(node.text().split())
    description = ""
    for key in _DESCRIPTIONS:
        node = first.get(key)
        if node is not None:
            description = " ".join((node.attributes.get("content") or "").split())
            if description:
                break
    if not title:
        node = first.get(("property", "og:title"))
        if node is not None:
            title = " ".join((node.attributes.get("content") or "").split())
    return title, description


def parse_page(
    tree,
    max_depth: int = 512,
    replaced: int = 0,
    flattened: bool = False,
    walker: BlockWalker | None = None,
    refused_charsets: int = 0,
) -> ParsedPage:
    """The blocks, title and description of a parsed page (``html.parse.parse_html``), and
    their page-level decision. ``walker``: the process's block walker (``blocks.walk``);
    ``replaced``, ``flattened``, ``refused_charsets``: how the page decoded and parsed, kept
    with it for the summary."""
    walker = walker or BlockWalker()
    meta, products = _head_nodes(tree, walker)
    title, description = _page_meta_of(meta)
    blocks = walk(tree, max_depth, walker)
    # (A page whose walk has fewer rows than a data table has is not searched for one.)
    rows = data_table_rows(tree, walker) if blocks.tag.count("tr") >= TABLE_ROWS else frozenset()
    keep, inside = page_keep(blocks, table_rows=rows)
    is_product, product = _product_facts_of(tree, products)
    if is_product:
        _drop_reviews(blocks, keep)
        _keep_specs(blocks, keep)
        _other_items(blocks, keep)
    _drop_other_pages(blocks, keep)
    if product and _uncovered(product, blocks, keep):
        _append_block(blocks, product, _PRODUCT_SLOT)
        keep.append(True)
        inside.append(True)
    return ParsedPage(blocks, title, description, replaced, flattened, (keep, inside), refused_charsets)


# A heading that names a box of other pages: "Related articles", "Also in the news", "You may
# also like", "Recommended posts", "Read next", a forum's "Similar threads", a shop's "Frequently
# bought together"... (not "See also": a reference's own links; not "Read more": a link's
# label, inside a story as often as below it; not "Recommended:" alone: a game's system
# requirements).
_OTHER_PAGES = re.compile(
    r"(?:also in the news|related(?: (?:posts?|articles?|stories|news|content|reading|resources|guides|topics))?"
    r"|more (?:news|stories|articles|posts|from .{1,40}|like this|to read|in .{1,30})"
    r"|you (?:may|might) (?:also )?(?:like|enjoy|be interested in)"
    r"|recommended (?:for you|reading|articles|posts|stories)|read (?:next|also)"
    r"|latest (?:news|posts|articles|stories)|popular (?:posts|articles|stories)|most (?:read|popular|viewed)"
    r"|trending(?: now| stories)?|what to read next|further reading|keep reading|similar (?:posts|articles)"
    r"|other (?:posts|articles|stories|news)|editor's picks|top stories"
    r"|(?:suggested|similar|related) (?:topics|threads|questions|discussions)"
    r"|frequently bought together|(?:customers|people) (?:also|who viewed this (?:item )?also) (?:viewed|bought))[:.!]?",
    re.IGNORECASE,
)
OTHER_PAGES_SHARE = 0.5  # of the kept text, at most, that such a box may hold to be dropped


def _drop_other_pages(blocks: Blocks, keep: list[bool]) -> None:
    """A kept heading that names a box of other pages (``_OTHER_PAGES``), after kept text, and
    what follows it in its box (the smallest box around it holding kept text after it; to the
    end of the page when there is none) are dropped when they hold less than OTHER_PAGES_SHARE
    of the kept text and none of it is in a slot of the kept text before the heading: the
    teasers a region took in below the story."""
    text = blocks.text
    # (The kept blocks after the first kept one: a C loop picks them, most blocks are not kept.)
    for h in islice(compress(range(len(keep)), keep), 1, None):
        if len(text[h]) <= 60 and _OTHER_PAGES.fullmatch(text[h].strip()):
            _drop_box_of_other_pages(blocks, keep, h)
            return


def _reference_drop_other_pages(blocks: Blocks, keep: list[bool]) -> None:
    """_drop_other_pages as first written, one block at a time (its tests' reference)."""
    text = blocks.text
    first = next((b for b, k in enumerate(keep) if k), len(keep))
    for h in range(first + 1, len(keep)):
        if not keep[h] or len(text[h]) > 60 or not _OTHER_PAGES.fullmatch(text[h].strip()):
            continue
        _drop_box_of_other_pages(blocks, keep, h)
        return


def _drop_box_of_other_pages(blocks: Blocks, keep: list[bool], h: int) -> None:
    """Drop the box of other pages kept heading ``h`` names, when _drop_other_pages says."""
    parent = blocks.parent
    kept = [b for b, k in enumerate(keep) if k]
    total = sum(blocks.size[b] for b in kept)
    end = len(keep)
    a = parent[h]
    while a >= 0:
        stop = _subtree_parent(parent, a).stop
        if any(keep[b] for b in range(h + 1, stop)):
            end = stop
            break
        a = parent[a]
    before = {blocks.sig[b] for b in kept if b < h}
    after = [b for b in range(h + 1, end) if keep[b]]
    # (Text of the story's own slots after it: the story goes on below a box of links.)
    if any(blocks.sig[b] in before for b in after):
        return
    if sum(blocks.size[b] for b in after) + blocks.size[h] < OTHER_PAGES_SHARE * total:
        for b in range(h, end):
            keep[b] = False


_LD_JSON = 'script[type="application/ld+json"]'
_TAGS = re.compile(r"<[^>]*>")
_PRODUCT_SLOT = xxhash.xxh64_intdigest(b"ld+json/Product/description")  # the block's signature
_PRODUCT_MICRODATA = '[itemtype*="schema.org/Product"]'
PRODUCT_COVERED = 0.5  # share of a product description's words the page's text must hold


def product_facts(tree) -> tuple[bool, str]:
    """Whether the page describes a product (a schema.org ``Product`` in its JSON-LD or its
    microdata), and the product's description from the JSON-LD (``_product_ld``). One pass
    over the DOM finds both kinds of element (most pages have neither: nothing more to do);
    the JSON-LD is read only when some is there."""
    return _product_facts_of(tree, tree.css(_LD_JSON + ", " + _PRODUCT_MICRODATA))


def _product_facts_of(tree, nodes) -> tuple[bool, str]:
    """product_facts of the page's nodes that its selectors match, in document order."""
    if not nodes:
        return False, ""
    # A script without an itemtype is among them by the JSON-LD selector alone (a script holds
    # no element): it matches _LD_JSON and not _PRODUCT_MICRODATA, without css_matches parsing
    # them. The page's JSON-LD scripts are the scripts among them that match _LD_JSON, in
    # document order (as the reference's tree.css(_LD_JSON), a second pass over the DOM).
    plain = [node.tag == "script" and not any(name.lower() == "itemtype" for name in node.attributes) for node in nodes]
    microdata = any(not p and node.css_matches(_PRODUCT_MICRODATA) for node, p in zip(nodes, plain))
    scripts = [node for node, p in zip(nodes, plain) if p or (node.tag == "script" and node.css_matches(_LD_JSON))]
    if not scripts:
        return microdata, ""
    text, found = _product_ld_of(scripts)
    return found or microdata, text


def _product_facts_of_reference(tree, nodes) -> tuple[bool, str]:
    """_product_facts_of asking css_matches of every node, and lexbor for the JSON-LD scripts."""
    if not nodes:
        return False, ""
    microdata = any(node.css_matches(_PRODUCT_MICRODATA) for node in nodes)
    if not any(node.css_matches(_LD_JSON) for node in nodes):
        return microdata, ""
    text, found = _product_ld(tree)
    return found or microdata, text


# page_meta's and product_facts' nodes, found in one pass over the DOM (_head_nodes).
_HEAD_TAGS = f"{_META_TAGS}, {_LD_JSON}, {_PRODUCT_MICRODATA}"


# The tag ids of the elements the native walk's head_candidates and tables_holding look for.
_TITLE_ID, _META_ID, _SCRIPT_ID, _TABLE_ID, _TH_ID = (
    LexborHTMLParser("").create_node(tag).tag_id for tag in ("title", "meta", "script", "table", "th")
)


def _head_nodes(tree, walker: BlockWalker | None = None) -> tuple[list, list]:
    """(page_meta's nodes, product_facts' nodes) of a page, as _head_nodes_reference finds
    them but each listed once. With the native walk (``walker.native``), one C pass over the
    DOM finds the few elements _HEAD_TAGS may match (``head_candidates``; lexbor's CSS engine
    takes ~0.1 ms a page for the same pass); each is kept when it matches itself (it is the
    first match of a search from it) and sorted as the reference sorts it (the reference
    lists a node once for each selector it matches: both readers take the first of each
    kind, so their results are the same); else _head_nodes_reference. A candidate the C pass
    is sure of (``sure``: a title, values in the selectors' own case) is not asked."""
    native = walker.native if walker is not None else None
    root = tree.root
    if native is None or root is None:
        return _head_nodes_reference(tree)
    meta, products, sure = [], [], []
    for node, certain in zip(native.head_candidates(root, _TITLE_ID, _META_ID, _SCRIPT_ID, sure), sure):
        if certain or ((first := node.css_first(_HEAD_TAGS)) is not None and first.mem_id == node.mem_id):
            _sort_head_node(node, meta, products)
    return meta, products


def _sort_head_node(node, meta: list, products: list) -> None:
    """Add a node that _HEAD_TAGS matches to page_meta's nodes or product_facts' nodes (or
    both), told apart exactly: a script is never matched by _META_TAGS, a node without an
    ``itemtype`` attribute never by _PRODUCT_MICRODATA; the few that have one are asked
    (css_matches: it or a node inside it, as the reference always asked)."""
    if node.tag == "script":
        products.append(node)
    elif any(name.lower() == "itemtype" for name in node.attributes):
        if node.css_matches(_PRODUCT_MICRODATA):
            products.append(node)
        if node.css_matches(_META_TAGS):
            meta.append(node)
    else:
        meta.append(node)


def _head_nodes_reference(tree) -> tuple[list, list]:
    """(page_meta's nodes, product_facts' nodes) of a page from one css query for both (each
    walks the whole DOM), told apart exactly: a script is never matched by _META_TAGS, a node
    without an ``itemtype`` attribute never by _PRODUCT_MICRODATA; the few that have one are
    asked which they match. (A node matching several selectors is listed once for each, as
    by the queries of one kind: both readers take the first of each kind.)"""
    meta, products = [], []
    for node in tree.css(_HEAD_TAGS):
        _sort_head_node(node, meta, products)
    return meta, products


def _product_ld(tree) -> tuple[str, bool]:
    """(The longest ``description`` of a schema.org ``Product`` (or ``ProductGroup``) in the
    page's JSON-LD as plain text or "", whether it has a Product at all). Shops often render the description with
    script only, or behind a tab the walk does not see: the JSON-LD is the page's own copy."""
    return _product_ld_of(tree.css(_LD_JSON))


def _product_ld_of(scripts) -> tuple[str, bool]:
    """_product_ld of the page's JSON-LD scripts, in document order."""
    best, found = "", False
    for node in scripts:
        raw = node.text()
        if "Product" not in raw:
            continue
        try:
            data = json.loads(raw)
        except ValueError:
            continue  # a broken block of JSON-LD is the page's mistake: no description from it
        for item in _products(data, 0):
            found = True
            text = item.get("description")
            if isinstance(text, str) and len(text) > len(best):
                best = text
    return " ".join(_TAGS.sub(" ", htmllib.unescape(best)).split()), found


def _products(data, depth: int):
    """The Product objects of a JSON-LD value (top level, lists, ``@graph``, ``mainEntity``)."""
    if depth > 4:
        return
    if isinstance(data, list):
        for item in data:
            yield from _products(item, depth + 1)
    elif isinstance(data, dict):
        kind = data.get("@type")
        kinds = kind if isinstance(kind, list) else [kind]
        if "Product" in kinds or "ProductGroup" in kinds:
            yield data
        for key in ("@graph", "mainEntity"):
            if key in data:
                yield from _products(data[key], depth + 1)


# A heading that opens a product page's reviews or its customers' questions.
# (Not a FAQ: the shop's own answers are part of what it says about the product.)
_REVIEWS = re.compile(r"\b(?:reviews?|ratings?|testimonials?|questions?\s*(?:&|and)\s*answers?|customer questions|q\s*&\s*a)\b", re.IGNORECASE)
REVIEW_HEADING = 60  # characters at most of such a heading (a sentence is not a heading)


def _drop_reviews(blocks: Blocks, keep: list[bool], heading: re.Pattern = _REVIEWS, by_rank: bool = False) -> None:
    """Drop the reviews and questions of a product page: the section a heading naming them
    opens ("Customer reviews", "Ratings & Reviews", "Questions & Answers"; ``heading``). Its
    extent is the largest container the heading opens (no text before it there) or, when the
    heading sits among the description's own blocks (or ``by_rank``: always), the blocks up to
    the next heading of its rank or higher. A shop's customers talk about the product; what
    they say is not its description."""
    n = len(blocks)
    end = _subtree_ends(blocks)
    parent = blocks.parent
    first_text = [n] * (n + 1)  # first block with text at or after b
    for b in range(n - 1, -1, -1):
        first_text[b] = b if blocks.text[b] else first_text[b + 1]
    b = 0
    while b < n:
        if blocks.tag[b] not in HEADING_TAGS:
            b += 1
            continue
        label = " ".join(blocks.text[x] for x in range(b, end[b]) if blocks.text[x])
        if len(label) > REVIEW_HEADING and first_text[b] < end[b]:
            # A heading that also holds the rating's summary (REI: "Reviews" and "159 reviews
            # with an average rating of 4.4 ..." in one <h2>): its first line names it.
            label = blocks.text[first_text[b]]
        if not label or len(label) > REVIEW_HEADING or not heading.search(label):
            b = end[b]
            continue
        top = b
        while parent[top] > 0 and first_text[parent[top]] >= b:
            top = parent[top]
        stop = end[top]
        if top == b or by_rank:
            rank = blocks.tag[b]
            after = next((x for x in range(end[b], n) if blocks.tag[x] in HEADING_TAGS and blocks.tag[x] <= rank), n)
            stop = min(stop, after) if top != b else min(after, end[parent[b]] if parent[b] >= 0 else n)
        for x in range(b, stop):
            keep[x] = False
        b = stop


_SPEC = re.compile(r"^[^:\n]{1,40}:\s*\S")  # "Processor: 2.0 GHz", "Weight: 523 g"
_PRICE = re.compile(r"^[A-Z]{3}:|[$€£¥₹]")  # "GBP: 50.42", "USD: $68.07": a currency menu, not a spec
SPEC_LINES = 3  # label: value lines of one list, at least


def _keep_specs(blocks: Blocks, keep: list[bool]) -> None:
    """Keep a product's specifications wherever they are: SPEC_LINES or more sibling blocks
    of one signature, each a short "label: value" line without links or prices (the processor,
    the weight, the fabric; not a menu of currencies), and the heading right before them ("System requirements",
    "Specifications"). The description the region found is only part of what a shop says
    about the product; its specifications are the rest."""
    groups: dict[tuple[int, int], list[int]] = {}
    for b, (text, size, link) in enumerate(zip(blocks.text, blocks.size, blocks.link)):
        if text and not link and size <= GOOD_SIZE and _SPEC.match(text) and not _PRICE.search(text):
            groups.setdefault((blocks.parent[b], blocks.sig[b]), []).append(b)
    for items in groups.values():
        if len(items) < SPEC_LINES:
            continue
        for b in items:
            keep[b] = True
        for b in range(items[0] - 1, max(-1, items[0] - 6), -1):
            if blocks.text[b]:
                if blocks.tag[b] in HEADING_TAGS and not blocks.link[b]:
                    keep[b] = True
                break


# A heading that opens a box of other items on a product page: eBay's "Similar items",
# "Sponsored items", "Related products", "Customers who viewed this item also viewed".
_OTHER_ITEMS = re.compile(
    r"^(?:similar|sponsored|related|recommended|more) (?:items|products)\b|^(?:customers|people) (?:who|also)\b"
    r"|^you (?:may|might) also like\b|^more from this seller\b|^explore (?:related|similar)\b",
    re.IGNORECASE,
)
TITLE_SECTION_LINKS = 0.5  # of its text, at most, that a block of the title's section may hold in links


def _other_items(blocks: Blocks, keep: list[bool]) -> None:
    """The item's own block on a product page whose region is about other things:

    - kept text that opens with a box of other items (an ``_OTHER_ITEMS`` heading: eBay's
      carousel of similar items) loses the boxes (with the extent of ``_drop_reviews``);
      when they were all it kept, the item's block is kept instead;
    - kept text that says next to nothing of the item (``_names_other``: a cookie dialog) is
      replaced by the item's block when that block says more than a title (GOOD_SIZE).

    The item's block: the largest container of the page's only ``<h1>`` (the item's title)
    holding none of the region, its text blocks that are not mostly links (the title, the
    price, the condition, the shipping). (A box of other items below the item's own text is
    left to ``_drop_other_pages``.)"""
    region = [b for b, k in enumerate(keep) if k and blocks.text[b]]
    if not region:
        return
    titles = [b for b, tag in enumerate(blocks.tag) if tag == "h1" and blocks.text[b]]
    carousel = blocks.tag[region[0]] in HEADING_TAGS and _OTHER_ITEMS.search(blocks.text[region[0]])
    if carousel:
        # (To the next heading of its rank: a shop's "Related products" box can open a
        # container that also holds the item's own sections.)
        _drop_reviews(blocks, keep, _OTHER_ITEMS, by_rank=True)
        if any(keep[b] for b in region):
            return
    if len(titles) != 1 or keep[titles[0]] or not (carousel or _names_other(blocks, keep, titles[0])):
        return
    parent, end = blocks.parent, _subtree_ends(blocks)

    def holds_region(a: int) -> bool:
        i = bisect_left(region, a)
        return i < len(region) and region[i] < end[a]

    top = titles[0]
    if holds_region(top):
        return
    while parent[top] >= 0 and not holds_region(parent[top]):
        top = parent[top]
    item = [b for b in range(top, end[top]) if blocks.text[b] and blocks.link[b] <= TITLE_SECTION_LINKS * len(blocks.text[b])]
    if not carousel and sum(blocks.size[b] for b in item if b != titles[0]) < GOOD_SIZE:
        return  # no more than a title and a count: a list's heading (a listing page's region stays)
    for b in region:
        keep[b] = False
    for b in item:
        keep[b] = True


_WORD4 = re.compile(r"\w{4,}")
ITEM_NAMED = 0.5  # of the title's words (4 letters or more), at least, the item's region says


def _names_other(blocks: Blocks, keep: list[bool], title: int) -> bool:
    """Whether the kept text says fewer than ITEM_NAMED of the words of the item's title: the
    region is about something else (a cookie dialog, a seller's other listings)."""
    words = set(_WORD4.findall(blocks.text[title].lower()))
    if not words:
        return False
    kept = set(_WORD4.findall(" ".join(t for t, k in zip(blocks.text, keep) if k).lower()))
    return len(words & kept) < ITEM_NAMED * len(words)


def _uncovered(text: str, blocks: Blocks, keep: list[bool]) -> bool:
    """Whether less than PRODUCT_COVERED of the words of ``text`` are among the kept text's."""
    words = text.lower().split()
    kept = set(" ".join(t for t, k in zip(blocks.text, keep) if k).lower().split())
    return sum(w in kept for w in words) < PRODUCT_COVERED * len(words)


def _append_block(blocks: Blocks, text: str, sig: int) -> None:
    """Add a paragraph of ``text`` as the page's last block, a child of its first block."""
    blocks.tag.append("p")
    blocks.parent.append(0 if len(blocks) else -1)
    blocks.sig.append(sig)
    blocks.hash.append(xxhash.xxh64_intdigest(b"p\x00" + re.sub(r"\d+", "0", text).encode("utf-8", "surrogatepass")))
    blocks.text.append(text)
    blocks.link.append(0)
    blocks.size.append(text_size(text))
    blocks.content.append(True)
    blocks.in_article.append(False)
    blocks.hint.append(False)
    blocks.caption.append(False)


def extract_parsed(page: ParsedPage, site: SiteModel | None = None, settings: ExtractSettings | None = None) -> Extracted:
    """Main content of a page: the blocks the page-level rules keep or, given the learned
    model of the page's site (``SiteTemplates.for_site``), the blocks its ``decide`` keeps
    (``settings``: the model's own when None)."""
    if site is None:
        return page.extracted(*page.page_level())
    return page.extracted(*site.decide(page.blocks, page.page_level(), settings))


def extract(tree, site: SiteModel | None = None, settings: ExtractSettings | None = None, max_depth: int = 512) -> Extracted:
    """Main content of a parsed page (``html.parse.parse_html``); ``site`` as in extract_parsed."""
    return extract_parsed(parse_page(tree, max_depth), site, settings)


class _Rules(NamedTuple):
    """The functions page_keep runs that html/_page.pyx has in C (same arguments, same results;
    the native ones take the page's blocks as ``_page.Columns``, made by ``columns``)."""

    columns: Callable
    classify: Callable
    article_or_list: Callable
    linked_parts: Callable
    prose_slots: Callable
    index_lists: Callable
    card_grid: Callable
    drop_repeats: Callable
    drop_said_again: Callable
    region_keep: Callable
    drop_datelines: Callable
    keep_title: Callable
    titled_article: Callable
    whole_main: Callable
    captions_apply: Callable


def _same(blocks: Blocks) -> Blocks:
    return blocks


def _captions_apply(blocks: Blocks) -> bool:
    return True  # (_drop_captions sees for itself whether it has work)


_REFERENCE = _Rules(_same, classify, _article_or_list, _linked_parts, _prose_slots, _index_lists, _card_grid, _drop_repeats, _drop_said_again,
                    _region_keep, _drop_datelines, _keep_title, _titled_article, _whole_main, _captions_apply)  # fmt: skip


def _constants() -> dict[str, float]:
    """The classes and thresholds the native rules were compiled with, as this module has them."""
    return {name: globals()[name] for name in _page.CONSTANTS}


@functools.cache
def native_rules() -> _Rules:
    """The native page-level rules (html/_page.pyx) when they are built with this module's
    classes and thresholds, else the pure-Python ones (said once, as a warning)."""
    if _page is None:
        reason = f"not built: {_PAGE_MISSING}"
    elif _page.CONSTANTS != _constants():
        reason = "built with other thresholds than html/noise.py's (rebuild with `make native`)"
    else:
        datelines = functools.partial(_page.drop_datelines, patterns=(_CN_LICENCE, _CN_LEGAL, _CN_DATE, _CN_DATELINE))
        return _Rules(_page.Columns, _page.classify, _page.article_or_list, _page.linked_parts, _page.prose_slots, _page.index_lists,
                      _page.card_grid, _page.drop_repeats, _page.drop_said_again, _page.region_keep, datelines,
                      _page.keep_title, _page.titled_article, _page.whole_main, _page.captions_apply)  # fmt: skip
    log.warning(
        "pagetwin's native page-level rules are off (%s): page_keep runs in pure Python, 3-4 times slower; "
        "`pip install -e .` builds them (needs a C compiler)",
        reason,
    )
    return _REFERENCE
