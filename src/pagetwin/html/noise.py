"""Main content of a page: page-level noise removal, and site-template removal when a site
model is given.

The page (``html.blocks.walk``) is a tree of text blocks; chrome that is never content is
already gone (scripts, styles, hidden elements, nav/aside, menus by class). Then one keep-or-drop
decision per block:

1. **Page-level class** of each block with text, from its own evidence: link density (share of
   its characters inside ``<a>``), size (characters; a CJK character counts 3), block tag.
   ``good`` (long, few links), ``near`` (medium, few links), ``short`` (under 30), ``bad``
   (link-dense, or a bare URL), ``heading``.
2. **Main region**: every block's subtree gets a score from its good text G (good blocks in
   full, near blocks at half) and its link-dense text B: ``G * G / (G + 2 B)`` (much content,
   little chrome); the highest-scoring block (the deepest on ties) is the page's main region,
   unless the page marks its article body (``itemprop=articleBody``, ``entry-content``, ...)
   and that block scores at least half as much. Text blocks outside the region are dropped,
   except the h1/h2 right before it (the article title).
3. **Page-level keep** inside the region: good, near and headings; short blocks without links
   when the nearest non-short block before or after them is good or near (context, as jusText
   does); link-dense blocks never.
4. **Site evidence** (``site`` given, learned in pass 1 by ``templates.SiteTemplates``):
   a block whose subtree (exact hash, or the hash of one of its ancestors) is on more than
   ``template_share`` of the site's pages is template and is dropped, whatever step 3 said.
   Then the structural slot of the block (its tag path with class and id), when the slot is on
   at least ``min_slot_share`` of the site's pages: the share of text at that slot that step 3
   kept on the site's other pages is a prior; the decision is
   ``0.4 * page_keep + 0.6 * prior >= 0.5``, so a slot that is content on the site's pages
   keeps its short paragraphs and a slot that is chrome everywhere ("latest news" boxes whose
   text changes on every page) goes even when its text looks like content on this page.
5. **Copies are not templates**: when template removal would leave less than 10 % of the
   page-level text, the page is a copy of other pages of its site (a soft 404) or a page type
   the slot priors misjudge; then the page-level text minus the exact template blocks stands,
   or, if that is also (nearly) nothing, the page-level text (so that copies still look alike).

The lines kept are always a subsequence of the page's block texts; as long as step 5 does not
apply, a lower ``template_share`` never keeps a block a higher one drops.
"""

from __future__ import annotations

import marshal
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import zstandard

from pagetwin.config import ExtractSettings
from pagetwin.html.blocks import HEADING_TAGS, Blocks, walk

if TYPE_CHECKING:
    from pagetwin.html.templates import SiteModel

GOOD, NEAR, SHORT, BAD, HEADING, EMPTY = range(6)
_ZSTD_COMPRESS = zstandard.ZstdCompressor(level=1).compress
_ZSTD_DECOMPRESS = zstandard.ZstdDecompressor().decompress

GOOD_SIZE = 150  # characters (Latin equivalents) for a block to be content on its own
SHORT_SIZE = 30  # under this a block needs context
MAX_LINK_DENSITY = 0.3  # more text in links than this: not a paragraph of content
BAD_LINK_DENSITY = 0.5
NEAR_WEIGHT = 0.5
BAD_WEIGHT = 2.0
HINT_SHARE = 0.5  # a marked article body needs this share of the best region's balance
MIN_KEPT_SHARE = 0.1  # slot priors leaving less of the page-level text than this are overruled
PAGE_WEIGHT = 0.4  # weight of the page-level decision against the site prior of the slot


@dataclass
class Extracted:
    text: str  # main text, "\n" between blocks
    title: str = ""
    description: str = ""  # meta description or og:description, "" if none
    images: list[dict] = field(default_factory=list)  # raw attributes of kept <img>/<source>


def classify(blocks: Blocks) -> list[int]:
    """Page-level class of every block (EMPTY for blocks without own text)."""
    out = []
    for tag, text, size, link in zip(blocks.tag, blocks.text, blocks.size, blocks.link):
        if not text:
            out.append(EMPTY)
            continue
        density = link / len(text)
        if density > BAD_LINK_DENSITY or (text.startswith(("http://", "https://", "www.")) and " " not in text):
            out.append(BAD)
        elif tag in HEADING_TAGS:
            out.append(HEADING)
        elif density > MAX_LINK_DENSITY:
            out.append(BAD)
        elif size >= GOOD_SIZE:
            out.append(GOOD)
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
            best = top
    inside = [False] * n
    for b in range(best, n):
        p = parent[b]
        if b == best or (p >= best and inside[p]):
            inside[b] = True
        elif b > best and p < best:
            break
    return inside


def page_keep(blocks: Blocks, classes: list[int] | None = None) -> tuple[list[bool], list[bool]]:
    """Page-level keep decision for every block, and the main-region mask."""
    if classes is None:
        classes = classify(blocks)
    inside = main_region(blocks, classes)
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
        if c in (GOOD, NEAR, HEADING):
            keep[b] = True
        elif c == SHORT:
            keep[b] = before[i] in (GOOD, NEAR) or after[i] in (GOOD, NEAR)
    # The title right before the region (an h1/h2 outside the article container).
    first = next((i for i, b in enumerate(text_blocks) if inside[b]), None)
    if first is not None:
        for b in reversed(text_blocks[max(0, first - 6) : first]):
            if classes[b] == HEADING and blocks.tag[b] in ("h1", "h2"):
                keep[b] = True
                break
    return keep, inside


def decide(
    blocks: Blocks,
    site: SiteModel | None,
    settings: ExtractSettings,
    page_level: tuple[list[bool], list[bool]] | None = None,
) -> tuple[list[bool], list[bool]]:
    """Keep-or-drop for every block, and which blocks may carry main-content images.
    ``page_level``: ``page_keep(blocks)`` when already computed."""
    keep, inside = page_level or page_keep(blocks)
    if site is None or len(blocks) == 0:
        return keep, inside
    share = site.hash_share(blocks.hash)
    prior, slot_share = site.slot_prior(blocks.sig)
    # Template means repeated: a block must also be on at least two pages of the site.
    threshold = max(settings.template_share, 1.5 / site.pages_)
    parent = blocks.parent
    n = len(blocks)
    template = [False] * n
    # A slot is site evidence when it is one of the site's own: on at least min_slot_share of its
    # pages (and on two at least). A rarer slot is a generic path (div > p) in a folder of pages
    # from many sites, or a page type of its own, where the page's own evidence is better.
    min_pages = max(2 / site.pages_, settings.min_slot_share)
    for b in range(n):
        p = parent[b]
        template[b] = share[b] > threshold or (p >= 0 and template[p])
    final = [False] * n
    images_ok = [False] * n
    for b in range(n):
        if template[b]:
            continue
        page = 1.0 if keep[b] else 0.0
        if slot_share[b] >= min_pages and blocks.text[b]:
            final[b] = PAGE_WEIGHT * page + (1 - PAGE_WEIGHT) * prior[b] >= 0.5
        else:
            final[b] = keep[b]
        images_ok[b] = inside[b] or final[b]
    # Overruling, when template removal would leave less than MIN_KEPT_SHARE of the page-level
    # text: (1) if the exact template blocks alone leave more, the slot priors misjudged a page
    # type of its own (a forum post on a site of catalogue pages with one table layout): the
    # page-level decision minus the exact template blocks stands; (2) if even they do not, the
    # page is a copy of other pages of its site (a soft 404, "item not found"): what repeats is
    # the page itself, and its page-level text stays, so that copies still look alike.
    page_size = sum(size for size, k in zip(blocks.size, keep) if k)
    if page_size and sum(size for size, k in zip(blocks.size, final) if k) < MIN_KEPT_SHARE * page_size:
        exact = [k and not t for k, t in zip(keep, template)]
        if sum(size for size, k in zip(blocks.size, exact) if k) >= MIN_KEPT_SHARE * page_size:
            return exact, [ok and not t for ok, t in zip(inside, template)]
        return keep, inside
    return final, images_ok


def page_meta(tree) -> tuple[str, str]:
    """(title, description) of a page: <title> (or og:title), meta description (or og:description)."""
    title = ""
    node = tree.css_first("title")
    if node is not None:
        title = " ".join(node.text().split())
    description = ""
    for selector in ('meta[name="description"]', 'meta[name="Description"]', 'meta[property="og:description"]'):
        node = tree.css_first(selector)
        if node is not None:
            description = " ".join((node.attributes.get("content") or "").split())
            if description:
                break
    if not title:
        node = tree.css_first('meta[property="og:title"]')
        if node is not None:
            title = " ".join((node.attributes.get("content") or "").split())
    return title, description


@dataclass
class ParsedPage:
    """What both passes need of a page's DOM: its blocks, title and description, and how its
    bytes decoded. Pass 1 builds it once; serialised (``to_bytes``), it lets pass 2 decide
    without parsing and walking the page again."""

    blocks: Blocks
    title: str = ""
    description: str = ""
    replaced: int = 0  # characters that could not be decoded
    flattened: bool = False  # nesting deeper than input.max_dom_depth was flattened
    page_level_: tuple[list[bool], list[bool]] | None = None  # page_keep(blocks), once computed

    _FIELDS = ("tag", "parent", "sig", "hash", "text", "link", "size", "content", "in_article", "hint", "images")
    _FORMAT = 2  # bumped when the layout below changes

    def page_level(self) -> tuple[list[bool], list[bool]]:
        """The page-level decision, ``page_keep(blocks)``: computed once, for both passes."""
        if self.page_level_ is None:
            self.page_level_ = page_keep(self.blocks)
        return self.page_level_

    def to_bytes(self) -> bytes:
        """marshal (built-in types only: fast, and nothing but this module reads it back),
        zstd level 1 (2.5x smaller; zlib level 1 is as small and 2.4x slower)."""
        b = self.blocks
        record = (self._FORMAT, self.title, self.description, self.replaced, self.flattened, self.page_level_,
                  *(getattr(b, name) for name in self._FIELDS))  # fmt: skip
        return _ZSTD_COMPRESS(marshal.dumps(record))

    @classmethod
    def from_bytes(cls, data: bytes) -> ParsedPage:
        record = marshal.loads(_ZSTD_DECOMPRESS(data))
        if record[0] != cls._FORMAT:
            raise ValueError(f"parsed page format {record[0]}, expected {cls._FORMAT}")
        blocks = Blocks(**dict(zip(cls._FIELDS, record[6:])))
        return cls(blocks, *record[1:6])


def parse_page(tree, max_depth: int = 512, replaced: int = 0, flattened: bool = False) -> ParsedPage:
    """The blocks, title and description of a parsed page (``html.parse.parse_html``)."""
    title, description = page_meta(tree)
    return ParsedPage(walk(tree, max_depth), title, description, replaced, flattened)


def extract_parsed(page: ParsedPage, site: SiteModel | None, settings: ExtractSettings) -> Extracted:
    """Main content of a page: the blocks kept by ``decide``, one line each, and the images of
    the blocks that may carry main-content images."""
    blocks = page.blocks
    keep, images_ok = decide(blocks, site, settings, page.page_level())
    text = "\n".join(t for t, k in zip(blocks.text, keep) if k and t)
    images = [raw for b, raw in blocks.images if images_ok[b]]
    return Extracted(text=text, title=page.title, description=page.description, images=images)


def extract(tree, site: SiteModel | None, settings: ExtractSettings, max_depth: int = 512) -> Extracted:
    """Main content of a parsed page (``html.parse.parse_html``). ``site`` is the learned model
    of the page's site (``SiteTemplates.for_site``), or None for page-level removal only."""
    return extract_parsed(parse_page(tree, max_depth), site, settings)
