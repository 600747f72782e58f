"""Site templates, learned in two passes: what each site repeats on its pages.

Pass 1 (``page_stats``, one page at a time, in workers): the page's blocks (``html.blocks``),
their bottom-up subtree hashes and structural signatures (tag path with class and id), and the
page-level keep decision (``html.noise``'s rules, carried by the ``ParsedPage``) at each
structural slot. The parent feeds them to
``SiteTemplates.fit(site, stats)``, which counts per site

- in how many pages each subtree hash occurs (exact template blocks: menus, footers, boxes);
- per structural slot: on how many pages it occurs and the mean share of its text the
  page-level rules kept there (the slot's *prior*: near 1 for the article body's paragraph
  slot, near 0 for a "latest news" box whose text changes on every page).

**Copies are evidence of nothing.** A block is template when it repeats on pages that are
otherwise different; a block that repeats because the pages are copies of one another (one
article under several URLs of a site, print views, a folder of reposts of one story) is the
signal dedup looks for, and must not be learned as template. So ``fit`` counts a site's
*distinct* pages only: a page is a *copy* when at least ``COPY_SHARE`` (0.8) of its content
text (the blocks the page-level rules keep, by subtree hash, weighted by their size:
``PageStats.content``) is already on pages counted for its site. A copy is counted in
``copies`` and adds nothing to the statistics, neither to the pages nor to the blocks, so an
article stays on one counted page however many copies of it follow. A site of copies has few
distinct pages; in a site of distinct pages the copies of one article count once. Template
text shared by distinct pages counts towards the share too, so a page whose own text is less
than a fifth of what the page-level rules keep (its template is larger) is taken for a copy
of the first page with that template and is not counted: such a site learns from fewer pages.
Limits (bench/RESULTS.md, "Reposts"): a paragraph whose markup differs between two copies
(links, emphasis) has another subtree hash and is not recognised; a "site" made of nothing but
reposts of one story, each with its own edits, still counts the reposts that are less than
0.8 copied, so the story's paragraphs can reach the template share there. Byte-identical
payloads are dropped before (``runners.local``).

**Nor are near copies.** A page that copies less than ``COPY_SHARE`` is counted, so an article
and its edited or extended copy (B holds A's paragraphs and more) both count, and on a small site
(two or three pages) or a site where near copies are more than ``template_share`` of its pages,
their shared paragraphs pass the share and would be removed from both: the edge dedup looks for
would go. So ``fit`` also sums per subtree hash the share of its page's kept text the block made
(``hash_content``), and pass 2 spares text (``SiteModel._spared``) that near copies share: kept
blocks on the same number of pages that make, on average, half or more of those pages' kept
text (or of the page's own), and that sit at slots where the page keeps text of its own (the shared paragraphs sit in
the body beside the edited ones; a large boilerplate box under every article is a slot of its
own). A footer paragraph is a small share of pages whose articles differ: it stays template.

Pass 2 (``SiteTemplates.apply(site, parsed_page)``, the one place template removal happens:
``SiteModel.decide``) drops blocks whose hash is on more than ``template_share`` of the site's
pages and combines the slot prior with the page's own evidence. A site with fewer than
``min_site_pages`` pages gets no model (page level only).

Counts live in sorted numpy arrays (16 bytes per hash); ``fit`` buffers a few pages and folds
them in (``fold_runs``: the buffered pages' keys sorted and merged into the counts). Memory per
site is bounded by ``max_hashes_per_site``: above it the rarest hashes are pruned (lossy
counting: a hash seen on few pages when the site already has many cannot reach the share
threshold any more, and one that was pruned early is undercounted by at most the pruning level).
``merge`` adds two models' counts (learn per shard, combine).
"""

from __future__ import annotations

import io
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass, field
from itertools import compress
from urllib.parse import unquote, urlsplit

import numpy as np

from pagetwin.arrays import sorted_unique_inverse
from pagetwin.compression import compressor, decompressor
from pagetwin.config import ExtractSettings
from pagetwin.html.blocks import Blocks, Extracted, ParsedPage
from pagetwin.text.normalize import url_host

try:  # pass 1's statistics and folds, pass 2's look-ups in C (html/_stats.pyx); the references without it
    from pagetwin.html._stats import HashSet as _NativeHashSet
    from pagetwin.html._stats import copied as _native_copied
    from pagetwin.html._stats import fold_runs as _native_fold_runs
    from pagetwin.html._stats import in_set as _native_in_set
    from pagetwin.html._stats import keys_on_pages as _native_keys_on_pages
    from pagetwin.html._stats import lookup_columns as _native_lookup_columns
    from pagetwin.html._stats import page_stats as _native_page_stats
    from pagetwin.html._stats import slot_decisions as _native_slot_decisions
    from pagetwin.html._stats import template_flags as _native_template_flags
except ImportError:
    _native_page_stats = _native_fold_runs = _native_in_set = _native_lookup_columns = _native_keys_on_pages = None
    _native_slot_decisions = _native_template_flags = _native_copied = _NativeHashSet = None

_PENDING_PAGES = 32  # pages buffered per site before their counts are folded in
_PENDING_TOTAL = 1000  # pages buffered over all sites: above it every site is folded in
_SNIPPETS_PER_PAGE = 200
_SAMPLES_PER_SITE = 1000  # sample texts kept per site, for keys on two pages or more
# A page is a copy when this share of its content text is on pages already counted (docstring).
COPY_SHARE = 0.8
MIN_KEPT_SHARE = 0.1  # slot priors leaving less of the page-level text than this are overruled
ITEM_REPEATS = 3  # a block's subtree hash this often on its own page: an item's field (_template)
PAGE_WEIGHT = 0.4  # weight of the page-level decision against the site prior of the slot
# Kept text on the same pages that makes this share of their content, on average, is what near
# copies share, not template (SiteModel._spared).
NEAR_COPY_SHARE = 0.5


def site_key(url: str, settings: ExtractSettings) -> str:
    """The site a page belongs to: its host (without "www."), or with ``site_key = "domain"`` its
    registered domain (``news.bbc.co.uk`` -> ``bbc.co.uk``). A ``file://`` URL's site is its
    parent directory, so a folder of pages forms a site."""
    url = url or ""
    if url.startswith("file:"):
        path = unquote(urlsplit(url).path)
        return "file:" + path.rsplit("/", 1)[0]
    host = url_host(url)
    if settings.site_key == "domain" and host:
        return registered_domain(host)
    return host


def page_site(page, settings: ExtractSettings) -> str:
    """The site of a ``model.Page``: the one its source gave (``Page.site``: an HTML file
    without host evidence belongs to the folder it was given in), else ``site_key`` of its URL."""
    return page.site or site_key(page.url, settings)


def registered_domain(host: str) -> str:
    """The registered domain of a host (public suffix list via ``tld``; last two labels without it)."""
    try:
        from tld import get_fld

        return get_fld(host, fix_protocol=True, fail_silently=True) or host
    except ImportError:  # pragma: no cover - tld is a dependency of the bench extra only
        parts = host.split(".")
        return ".".join(parts[-2:]) if len(parts) > 1 else host


@dataclass
class PageStats:
    """Pass-1 statistics of one page: small and picklable."""

    hashes: np.ndarray  # uint64, unique subtree hashes of blocks with content
    slots: np.ndarray  # uint64, unique structural signatures of blocks with text
    slot_kept: np.ndarray  # float32, share of the slot's text the page-level rules kept
    snippets: dict[int, str] = field(default_factory=dict)  # hash or slot -> sample text
    # The blocks the page-level rules keep (unique subtree hashes, sorted) and their text sizes.
    content: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    content_size: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))


def page_stats(page: ParsedPage, settings: ExtractSettings) -> PageStats:
    """Pass 1 for one page (``noise.parse_page``; see the module docstring)."""
    return blocks_stats(page.blocks, settings, page.page_level())


def blocks_stats(blocks: Blocks, settings: ExtractSettings, page_level: tuple[list[bool], list[bool]]) -> PageStats:
    """Pass 1 for the blocks of one page (``html.blocks.walk``) and their page-level decision
    (``ParsedPage.page_level()``): natively when the kernel is built (``html._stats``, the
    same PageStats; 0.13 -> 0.03 ms a page), else ``blocks_stats_reference``."""
    if _native_page_stats is not None:
        keep = page_level[0]
        try:
            return PageStats(*_native_page_stats(
                blocks.hash, blocks.sig, blocks.size, blocks.content, keep, blocks.text, blocks.parent, _SNIPPETS_PER_PAGE
            ))  # fmt: skip
        except (OverflowError, TypeError, ValueError):
            pass  # columns the kernel does not take (no uint64 hash, lists of other lengths)
    return blocks_stats_reference(blocks, settings, page_level)


def blocks_stats_reference(blocks: Blocks, settings: ExtractSettings, page_level: tuple[list[bool], list[bool]]) -> PageStats:
    """blocks_stats in Python and numpy (the reference of the native kernel)."""
    keep, _ = page_level
    hashes = [h for h, c in zip(blocks.hash, blocks.content) if c]
    slot_total: dict[int, int] = {}
    slot_kept: dict[int, int] = {}
    snippets: dict[int, str] = {}
    for b, (sig, size) in enumerate(zip(blocks.sig, blocks.size)):
        if size:
            slot_total[sig] = slot_total.get(sig, 0) + size
            if keep[b]:
                slot_kept[sig] = slot_kept.get(sig, 0) + size
    # Sample text of each block: its own text, else that of its first descendant with text
    # (one pass from the last block back: a parent takes the snippet of its earliest child).
    snip = [t[:80] for t in blocks.text]
    parent = blocks.parent
    for b in range(len(blocks) - 1, 0, -1):
        p = parent[b]
        if p >= 0 and not blocks.text[p] and snip[b]:
            snip[p] = snip[b]
    for b in range(len(blocks)):
        if len(snippets) >= _SNIPPETS_PER_PAGE:
            break
        if snip[b]:
            snippets.setdefault(blocks.hash[b], snip[b])
            snippets.setdefault(blocks.sig[b], snip[b])
    slots = np.fromiter(slot_total.keys(), dtype=np.uint64, count=len(slot_total))
    kept = np.array([slot_kept.get(s, 0) / t for s, t in slot_total.items()], dtype=np.float32)
    order = np.argsort(slots)
    content: dict[int, int] = {}
    for h, k, t, size in zip(blocks.hash, keep, blocks.text, blocks.size):
        if k and t and size:
            content[h] = content.get(h, 0) + size
    chash = np.fromiter(content.keys(), dtype=np.uint64, count=len(content))
    csize = np.fromiter(content.values(), dtype=np.float32, count=len(content))
    corder = np.argsort(chash)
    return PageStats(
        np.unique(np.array(hashes, dtype=np.uint64)), slots[order], kept[order], snippets, chash[corder], csize[corder]
    )


def _key_set() -> set[int]:
    """An empty set of uint64 keys (``_SiteCounts.pending_hashes``): a ``html._stats.HashSet``
    when the kernels are built (keys added and asked in C), else a set of ints."""
    return set() if _NativeHashSet is None else _NativeHashSet()


def _add_keys(members: set[int], keys: np.ndarray) -> None:
    """Add the keys of a uint64 array to a ``_key_set``."""
    if isinstance(members, set):
        members.update(keys.tolist())
    else:
        members.add_keys(np.ascontiguousarray(keys, dtype=np.uint64))


def _in_set(keys: np.ndarray, members: set[int]) -> np.ndarray:
    """Whether each key of a uint64 array is in ``members`` (a ``_key_set``; a bool array):
    natively when the kernel is built (``html._stats.in_set``, ``HashSet.holds``), else
    ``_in_set_reference``."""
    if _NativeHashSet is not None and isinstance(members, _NativeHashSet):
        return members.holds(np.ascontiguousarray(keys, dtype=np.uint64))
    if _native_in_set is not None:
        try:
            return _native_in_set(keys, members)
        except (TypeError, ValueError):
            pass  # an array of another dtype
    return _in_set_reference(keys, members)


def _in_set_reference(keys: np.ndarray, members: set[int]) -> np.ndarray:
    """_in_set in Python (the reference of the native kernel)."""
    return np.fromiter((k in members for k in keys.tolist()), bool, len(keys))


def _template_flags(over: np.ndarray, blocks: Blocks, first: int) -> list[bool]:
    """Whether each block is template (``SiteModel._template``): its subtree hash ``over`` the
    share and not an item's field, or its parent template; ``first``: the first block over
    the share. Natively when the kernel is built (``html._stats.template_flags``: no dict of
    the page's hashes, no Python step a block), else ``_template_flags_reference``."""
    if _native_template_flags is not None:
        try:
            return _native_template_flags(over.view(np.uint8), blocks.hash, blocks.parent, first, ITEM_REPEATS)
        except (OverflowError, TypeError, ValueError):
            pass  # columns the kernel does not take (no uint64 hash, no int parent)
    return _template_flags_reference(over, blocks, first)


def _template_flags_reference(over: np.ndarray, blocks: Blocks, first: int) -> list[bool]:
    """_template_flags in Python (the reference of the native kernel)."""
    template = [False] * len(blocks)
    # A subtree hash said ITEM_REPEATS times on the page itself is a field of the page's
    # items (the price or the rating line of every card, digits folded), not the site's
    # template: it is on the site's other pages because they list items too.
    on_page = Counter(blocks.hash)
    hashes, parent, over = blocks.hash, blocks.parent, over.tolist()
    # A parent comes before its children: no block before the first candidate is template.
    for b in range(first, len(blocks)):
        p = parent[b]
        template[b] = (over[b] and on_page[hashes[b]] < ITEM_REPEATS) or (p >= 0 and template[p])
    return template


def _keys_on_pages(counts: _SiteCounts, keys: list[int], at_least: int) -> list[int]:
    """The ``keys`` on ``at_least`` of the site's pages, as a subtree hash or as a slot (the
    keys worth a sample text): natively when the kernel is built (``html._stats.keys_on_pages``:
    one call, not two look-ups and three numpy steps a page), else ``_keys_on_pages_reference``."""
    if _native_keys_on_pages is not None:
        try:
            return _native_keys_on_pages(counts.hash_keys, counts.hash_pages, counts.slot_keys, counts.slot_pages, keys, at_least)
        except (OverflowError, TypeError, ValueError):
            pass  # columns of other dtypes; keys past uint64 (the reference says so too)
    return _keys_on_pages_reference(counts, keys, at_least)


def _keys_on_pages_reference(counts: _SiteCounts, keys: list[int], at_least: int) -> list[int]:
    """_keys_on_pages in numpy (the reference of the native kernel)."""
    seen = np.maximum(
        SiteModel._lookup(counts.hash_keys, counts.hash_pages, keys),
        SiteModel._lookup(counts.slot_keys, counts.slot_pages, keys),
    )
    return list(compress(keys, (seen >= at_least).tolist()))


def _content_column(counts: _SiteCounts, dtype=np.float64) -> np.ndarray:
    """counts.hash_content as ``dtype``, zeros for a model stored without it (before session 8)."""
    if len(counts.hash_content) == len(counts.hash_keys):
        return counts.hash_content.astype(dtype, copy=False)
    return np.zeros(len(counts.hash_keys), dtype)


def _fold(keys: np.ndarray, values: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Unique keys with their value columns summed."""
    uniq, inverse = sorted_unique_inverse(keys)  # np.unique's, by a sort (pagetwin.arrays)
    return uniq, [np.bincount(inverse, weights=v, minlength=len(uniq)) for v in values]


def kth_smallest(values: np.ndarray, k: int) -> int:
    """``np.partition(values, k)[k]`` of an int array: by counting the values when they are
    small and not negative (page counts: a large site's 200,000 counts, most of them 1, took
    np.partition 20-30 ms, and a pruned site is pruned again at every fold)."""
    if len(values) and 0 <= int(values.min()) and int(values.max()) <= 4 * len(values):
        at_most = np.cumsum(np.bincount(values))  # at_most[v]: how many values are v or less
        return int(np.searchsorted(at_most, k, side="right"))
    return int(np.partition(values, k)[k])


# A run of keys to add to a site's counts: (key array, pages each key adds: an int, or an int32
# array of the keys' pages, float32 weights or None for zeros).
_Run = tuple[np.ndarray, "int | np.ndarray", "np.ndarray | None"]


def fold_runs(keys: np.ndarray, pages: np.ndarray, weights: np.ndarray, runs: list[_Run]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A site's counts (``keys`` sorted and unique, their pages int32 and weights float32) with
    ``runs`` added: natively by a merge when the kernel is built (``html._stats.fold_runs``: the
    counts are not sorted again at every fold, only the runs; corpus-10000-shared's 5,480 folds:
    1.5 -> 0.3 CPU-s), else ``fold_runs_reference``."""
    if _native_fold_runs is not None:
        try:
            return _native_fold_runs(keys, pages, weights, runs)
        except (OverflowError, TypeError, ValueError):
            pass  # columns the kernel does not take (other dtypes, keys not sorted)
    return fold_runs_reference(keys, pages, weights, runs)


def fold_runs_reference(keys: np.ndarray, pages: np.ndarray, weights: np.ndarray, runs: list[_Run]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """fold_runs in numpy: the keys and the runs' keys concatenated and ``_fold``ed, pages and
    weights summed in float64 (in input order: np.bincount's), cast back to int32 and float32."""
    all_keys = np.concatenate([keys] + [k for k, _, _ in runs])
    all_pages = np.concatenate(
        [pages.astype(np.float64)] + [n.astype(np.float64) if isinstance(n, np.ndarray) else np.full(len(k), float(n)) for k, n, _ in runs]
    )
    all_weights = np.concatenate(
        [weights.astype(np.float64)] + [np.zeros(len(k)) if w is None else w.astype(np.float64) for k, _, w in runs]
    )
    uniq, (summed_pages, summed_weights) = _fold(all_keys, [all_pages, all_weights])
    return uniq, summed_pages.astype(np.int32), summed_weights.astype(np.float32)


@dataclass
class _SiteCounts:
    pages: int = 0
    hash_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    hash_pages: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    slot_keys: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    slot_pages: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    slot_kept: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    pending: list[PageStats] = field(default_factory=list)
    samples: dict[int, list[str]] = field(default_factory=dict)
    pruned_below: int = 0  # lossy counting: hashes with fewer pages than this were dropped
    copies: int = 0  # pages not counted: copies of what was counted (module docstring)
    # The subtree hashes of the pending pages, one set: _is_copy asks it of every page, once.
    pending_hashes: set[int] = field(default_factory=_key_set)
    # Per hash (aligned with hash_keys): the shares of their page's content text the block made,
    # summed over the pages it is on (0 where the page-level rules did not keep it); with
    # hash_pages, the mean share: what tells text shared by near copies from a template (_spared).
    hash_content: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))


class SiteModel:
    """The learned statistics of one site, and the template removal they make (``decide``)."""

    def __init__(self, counts: _SiteCounts, settings: ExtractSettings) -> None:
        self.pages_ = counts.pages
        self.hash_keys_ = counts.hash_keys
        self.hash_pages_ = counts.hash_pages
        self.hash_content_ = counts.hash_content if len(counts.hash_content) == len(counts.hash_keys) else None
        self.slot_keys_ = counts.slot_keys
        self.slot_pages_ = counts.slot_pages
        self.slot_kept_ = counts.slot_kept
        self.template_share_ = settings.template_share
        self.settings = settings

    def decide(
        self, blocks: Blocks, page_level: tuple[list[bool], list[bool]], settings: ExtractSettings | None = None
    ) -> tuple[list[bool], list[bool]]:
        """Keep-or-drop for every block of a page of this site, and which blocks may carry
        main-content images, from the page-level decision (``ParsedPage.page_level()``: keep,
        main region) and the site's evidence (``settings``: the model's own when None):

        1. a block whose subtree (exact hash, or the hash of one of its ancestors) is on more
           than ``template_share`` of the site's pages is template and is dropped, whatever the
           page-level rules said, unless its hash is said ``ITEM_REPEATS`` times on the page
           itself (a field of every card: a price, a rating line, digits folded);
        2. the structural slot of a block (its tag path with class and id), when the slot is on
           at least ``min_slot_share`` of the site's pages: the share of text at that slot the
           page-level rules kept on the site's pages is a prior, and the decision is
           ``0.4 * page_keep + 0.6 * prior >= 0.5``, so a slot that is content on the site's
           pages keeps its short paragraphs and a slot that is chrome everywhere ("latest news"
           boxes whose text changes on every page) goes even when its text looks like content;
        3. copies are not templates: when this would leave less than 10 % of the page-level text,
           the page is a copy of other pages of its site (a soft 404) or a page type the slot
           priors misjudge; then the page-level text minus the exact template blocks stands, or,
           if that is also (nearly) nothing, the page-level text (so that copies still look alike).

        As long as step 3 does not apply, a lower ``template_share`` never keeps a block a higher
        one drops."""
        settings = settings or self.settings
        keep, inside = page_level
        if len(blocks) == 0:
            return keep, inside
        template = self._template(blocks, settings, keep)
        final, images_ok = self._with_slot_priors(blocks, keep, inside, template, settings)
        # Overruling (step 3): (a) if the exact template blocks alone leave more, the slot priors
        # misjudged a page type of its own (a forum post on a site of catalogue pages with one
        # table layout): the page-level decision minus the exact template blocks stands; (b) if
        # even they do not, what repeats is the page itself, and its page-level text stays.
        page_size = sum(compress(blocks.size, keep))
        if page_size and sum(compress(blocks.size, final)) < MIN_KEPT_SHARE * page_size:
            exact = [k and not t for k, t in zip(keep, template)]
            if sum(compress(blocks.size, exact)) >= MIN_KEPT_SHARE * page_size:
                return exact, [ok and not t for ok, t in zip(inside, template)]
            return keep, inside
        return final, images_ok

    def _template(self, blocks: Blocks, settings: ExtractSettings, keep: list[bool] | None = None) -> list[bool]:
        """Blocks that are template: their subtree, or an ancestor's, on more than the share,
        unless the page-level rules keep it and it is text that near copies share (_spared)."""
        # Template means repeated: a block must also be on at least two pages of the site.
        threshold = max(settings.template_share, 1.5 / self.pages_)
        q = blocks.hash
        if self.hash_content_ is None or keep is None:
            on_pages = self._lookup(self.hash_keys_, self.hash_pages_, q)
        else:
            on_pages, content = self._lookup_columns(self.hash_keys_, q, self.hash_pages_, self.hash_content_)
        over = on_pages / self.pages_ > threshold
        candidates = np.flatnonzero(over)
        if not len(candidates):
            return [False] * len(blocks)
        if self.hash_content_ is not None and keep is not None:
            over = self._spared(blocks, keep, candidates, on_pages, content, over)
        return _template_flags(over, blocks, int(candidates[0]))

    @staticmethod
    def _spared(blocks: Blocks, keep: list[bool], candidates: np.ndarray, on_pages: np.ndarray,
                content: np.ndarray, over: np.ndarray) -> np.ndarray:
        """``over`` without the kept text that near copies share. The candidates the page-level
        rules keep are grouped by the number of pages they are on (blocks shared by the same
        pages are on as many). A group is what near copies share, not template, when both
        (1) its blocks make at least NEAR_COPY_SHARE of the content text of the pages they are
        on, on average, or of this page's (a footer paragraph is a small share of pages whose
        articles differ; a trimmed repost shares fewer paragraphs, but they are most of it),
        and (2) most of its text on this page sits at structural slots where the page also
        keeps text of its own (not over the share): the shared paragraphs of an article
        and its near copy are in the body beside the edited or added ones, while a large
        "about us" box repeated under every article is a slot of its own. Then the group's
        kept text is not template, nor are the candidates that hold it (the wrapper of the
        shared text is alike on the copies); other candidates (a logo beside it) still are.
        A page that is nothing but the shared text keeps it by ``decide``'s step 3."""
        candidates = candidates.tolist()
        kept = [b for b in candidates if keep[b] and blocks.size[b]]
        if not kept:
            return over
        # Each hash once: a block said twice on the page is one block of the pages it is on.
        groups: dict[int, dict[int, tuple[float, int]]] = {}
        hashes, sig, size = blocks.hash, blocks.sig, blocks.size
        for b in kept:
            groups.setdefault(int(on_pages[b]), {})[hashes[b]] = (float(content[b]) / float(on_pages[b]), size[b])
        # The share of the pages' kept text, or of this page's (a trimmed copy shares fewer of
        # the story's paragraphs with the others, but they are still most of its own text).
        page_total = max(1, sum(compress(size, keep)))
        near = {
            n for n, shares in groups.items()
            if max(sum(v[0] for v in shares.values()), sum(v[1] for v in shares.values()) / page_total) >= NEAR_COPY_SHARE
        }  # fmt: skip
        if not near:
            return over
        own = {sig[b] for b in range(len(blocks)) if keep[b] and size[b] and not over[b]}
        beside, total = Counter(), Counter()
        for b in kept:
            n = int(on_pages[b])
            if n in near:
                total[n] += size[b]
                if sig[b] in own:
                    beside[n] += size[b]
        near = {n for n in near if 2 * beside[n] >= total[n]}
        if not near:
            return over
        over = over.copy()
        parent = blocks.parent
        for b in kept:
            if int(on_pages[b]) in near:
                over[b] = False
                p = parent[b]
                while p >= 0 and over[p]:  # (a parent comes before its children)
                    over[p] = False
                    p = parent[p]
        return over

    def _with_slot_priors(
        self, blocks: Blocks, keep: list[bool], inside: list[bool], template: list[bool], settings: ExtractSettings
    ) -> tuple[list[bool], list[bool]]:
        """(keep, images allowed) of the blocks that are not template, the slot priors combined
        with the page-level decision: natively when the kernel is built (``html._stats``, the
        same lists; corpus-10000-shared's 7,684 pages: 0.42 -> 0.15 CPU-s), else
        ``_with_slot_priors_reference``."""
        if _native_slot_decisions is not None:
            try:
                return _native_slot_decisions(
                    self.slot_keys_, self.slot_pages_, self.slot_kept_, self.pages_, self._min_slot_share(settings),
                    PAGE_WEIGHT, 1 - PAGE_WEIGHT, blocks.sig, keep, inside, template, blocks.text,
                )  # fmt: skip
            except (OverflowError, TypeError, ValueError):
                pass  # columns the kernel does not take (other dtypes, no uint64 signature)
        return self._with_slot_priors_reference(blocks, keep, inside, template, settings)

    def _min_slot_share(self, settings: ExtractSettings) -> float:
        """The share of the site's pages a slot must be on to be site evidence: min_slot_share,
        and two pages at least. A rarer slot is a generic path (div > p) in a folder of pages from
        many sites, or a page type of its own, where the page's own evidence is better."""
        return max(2 / self.pages_, settings.min_slot_share)

    def _with_slot_priors_reference(
        self, blocks: Blocks, keep: list[bool], inside: list[bool], template: list[bool], settings: ExtractSettings
    ) -> tuple[list[bool], list[bool]]:
        """_with_slot_priors in Python (the reference of the native kernel)."""
        prior, slot_share = self.slot_prior(blocks.sig)
        min_pages = self._min_slot_share(settings)
        n = len(blocks)
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
        return final, images_ok

    @staticmethod
    def _lookup(keys: np.ndarray, values: np.ndarray, query: np.ndarray) -> np.ndarray:
        """The value of each key of ``query`` in the sorted ``keys`` (0 for a key not there)."""
        return SiteModel._lookup_columns(keys, query, values)[0]

    @staticmethod
    def _lookup_columns(keys: np.ndarray, query, *columns: np.ndarray) -> list[np.ndarray]:
        """_lookup of several value columns of the same keys, with one search (``query``: a list
        of ints or a uint64 array): natively for an int32 column and a float32 one when the kernel
        is built (``html._stats.lookup_columns``: no array made of a list, no numpy call per
        step), else ``_lookup_columns_reference``."""
        if _native_lookup_columns is not None and 1 <= len(columns) <= 2:
            try:
                return _native_lookup_columns(keys, query, *columns)
            except (OverflowError, TypeError, ValueError):
                pass  # columns of other dtypes; keys past uint64 (the reference says so too)
        return SiteModel._lookup_columns_reference(keys, query, *columns)

    @staticmethod
    def _lookup_columns_reference(keys: np.ndarray, query, *columns: np.ndarray) -> list[np.ndarray]:
        """_lookup_columns in numpy (the reference of the native kernel)."""
        query = np.asarray(query, dtype=np.uint64)
        if len(keys) == 0:
            return [np.zeros(len(query), dtype=c.dtype) for c in columns]
        pos = keys.searchsorted(query)
        np.minimum(pos, len(keys) - 1, out=pos)  # (a key past the last is not there either)
        missing = keys[pos] != query
        out = []
        for column in columns:  # (a gather and a masked store: np.where took 1.6x as long, 2-4 calls a page)
            values = column[pos]
            values[missing] = 0
            out.append(values)
        return out

    def hash_share(self, hashes) -> list[float]:
        """Share of the site's pages each subtree hash is on."""
        q = np.asarray(hashes, dtype=np.uint64)
        return (self._lookup(self.hash_keys_, self.hash_pages_, q) / self.pages_).tolist()

    def slot_prior(self, sigs) -> tuple[list[float], list[float]]:
        """(prior, share of pages) of each structural slot: the mean share of its text the
        page-level rules kept on the site's pages, and on how many of them the slot occurs."""
        q = np.asarray(sigs, dtype=np.uint64)
        pages, kept = (v.astype(np.float64) for v in self._lookup_columns(self.slot_keys_, q, self.slot_pages_, self.slot_kept_))
        prior = np.divide(kept, pages, out=np.zeros_like(kept), where=pages > 0)
        return prior.tolist(), (pages / self.pages_).tolist()


class SiteTemplates:
    """Per-site template statistics: ``fit`` page by page, ``merge`` shards, ``apply`` (or
    ``for_site``) in pass 2."""

    def __init__(self, settings: ExtractSettings) -> None:
        self.settings = settings
        self.sites_: _Sites = _Sites()
        self._pending_total = 0

    # -- learning --------------------------------------------------------------------------

    def fit(self, site: str, stats: PageStats) -> SiteTemplates:
        """Count one page of ``site``, unless it is a copy of a page already counted there."""
        counts = self.sites_.get(site)
        if counts is None:
            counts = self.sites_[site] = _SiteCounts()
        if self._is_copy(counts, stats):
            counts.copies += 1
            return self
        counts.pending.append(stats)
        _add_keys(counts.pending_hashes, stats.hashes)
        counts.pages += 1
        self._pending_total = getattr(self, "_pending_total", 0) + 1
        if len(counts.pending) >= _PENDING_PAGES:
            self._compact(counts)
        elif self._pending_total >= _PENDING_TOTAL:
            self.compact()  # many small sites: bound what waits
        return self

    @staticmethod
    def _is_copy(counts: _SiteCounts, stats: PageStats) -> bool:
        """Whether most of the page's content is on pages already counted (module docstring):
        natively when the kernel is built (``html._stats.copied``: one pass, no numpy step a
        page), else ``_is_copy_reference``."""
        if not counts.pages or not len(stats.content):
            return False
        if _native_copied is not None:
            try:
                return _native_copied(stats.content, stats.content_size, counts.hash_keys, counts.hash_pages,
                                      counts.pending_hashes, COPY_SHARE)  # fmt: skip
            except (OverflowError, TypeError, ValueError):
                pass  # columns the kernel does not take (other dtypes, sizes no small whole numbers)
        return SiteTemplates._is_copy_reference(counts, stats)

    @staticmethod
    def _is_copy_reference(counts: _SiteCounts, stats: PageStats) -> bool:
        """_is_copy in numpy (the reference of the native kernel)."""
        if not counts.pages or not len(stats.content):
            return False
        seen = SiteModel._lookup(counts.hash_keys, counts.hash_pages, stats.content) > 0
        pending = counts.pending_hashes
        if pending:
            seen |= _in_set(stats.content, pending)
        total = float(stats.content_size.sum())
        return total > 0 and float(stats.content_size[seen].sum()) >= COPY_SHARE * total

    def _compact(self, counts: _SiteCounts) -> None:
        pending, counts.pending = counts.pending, []
        counts.pending_hashes = _key_set()
        self._pending_total = max(0, getattr(self, "_pending_total", 0) - len(pending))
        if pending:
            # The kept blocks (p.content) are blocks with content (p.hashes): their share of
            # the page's kept text joins the same keys, with no page of their own.
            hash_runs: list[_Run] = [(p.hashes, 1, None) for p in pending]
            hash_runs += [(p.content, 0, p.content_size / max(float(p.content_size.sum()), 1.0)) for p in pending]
            counts.hash_keys, counts.hash_pages, counts.hash_content = fold_runs(
                counts.hash_keys, counts.hash_pages, _content_column(counts, np.float32), hash_runs
            )
            counts.slot_keys, counts.slot_pages, counts.slot_kept = fold_runs(
                counts.slot_keys, counts.slot_pages, counts.slot_kept, [(p.slots, 1, p.slot_kept) for p in pending]
            )
            # Sample texts only of what is on two pages or more (what can be template); a
            # page's snippets are dropped once its counts are folded in.
            for p in pending:
                if len(counts.samples) >= _SAMPLES_PER_SITE:
                    break
                for key in _keys_on_pages(counts, list(p.snippets), 2):
                    snip = p.snippets[key]
                    have = counts.samples.get(key)
                    if have is None:
                        if len(counts.samples) < _SAMPLES_PER_SITE:
                            counts.samples[key] = [snip]
                    elif len(have) < 3 and snip not in have:
                        have.append(snip)
        self._prune(counts)

    def _prune(self, counts: _SiteCounts) -> None:
        cap = max(1000, self.settings.max_hashes_per_site)
        for kind in ("hash", "slot"):
            keys = getattr(counts, f"{kind}_keys")
            if len(keys) <= cap:
                continue
            pages = getattr(counts, f"{kind}_pages")
            # Keep the `cap // 2` most frequent; the rest are the rarest, the least able to
            # reach the share threshold.
            level = kth_smallest(pages, len(pages) - cap // 2)
            mask = pages > level if (pages > level).sum() > 0 else pages >= level
            counts.pruned_below = max(counts.pruned_below, int(level) + 1)
            setattr(counts, f"{kind}_keys", keys[mask])
            setattr(counts, f"{kind}_pages", pages[mask])
            if kind == "slot":
                counts.slot_kept = counts.slot_kept[mask]
            elif len(counts.hash_content) == len(mask):
                counts.hash_content = counts.hash_content[mask]
        if len(counts.samples) >= _SAMPLES_PER_SITE:
            # Make room: keep the samples of the keys still counted on two pages or more.
            keys = np.fromiter(counts.samples.keys(), dtype=np.uint64, count=len(counts.samples))
            seen = np.maximum(
                SiteModel._lookup(counts.hash_keys, counts.hash_pages, keys),
                SiteModel._lookup(counts.slot_keys, counts.slot_pages, keys),
            )
            order = np.argsort(-seen, kind="stable")[: _SAMPLES_PER_SITE // 2]
            kept = keys[order].tolist()
            counts.samples = {k: counts.samples[k] for k in kept}

    def compact(self) -> SiteTemplates:
        """Fold every buffered page into the counts (done before pickling and serialising;
        only a site read from the stored model can have none, so those are not read)."""
        for counts in self.sites_.read():
            if counts.pending:
                self._compact(counts)
        return self

    def merge(self, other: SiteTemplates) -> SiteTemplates:
        """A new model with the counts of both (the pages of each site added up)."""
        out = SiteTemplates(self.settings)
        for src in (self, other):
            src.compact()
        for site in set(self.sites_) | set(other.sites_):
            a, b = self.sites_.get(site), other.sites_.get(site)
            if a is None or b is None:
                src = a if a is not None else b
                out.sites_[site] = _SiteCounts(
                    src.pages, src.hash_keys, src.hash_pages, src.slot_keys, src.slot_pages,
                    src.slot_kept, [], dict(src.samples), src.pruned_below, src.copies, hash_content=src.hash_content,
                )  # fmt: skip
                continue
            # A page copied in both shards was counted once in each (copies are told apart
            # within a shard); later pages are checked against the merged counts.
            c = _SiteCounts(
                pages=a.pages + b.pages, pruned_below=max(a.pruned_below, b.pruned_below), copies=a.copies + b.copies
            )
            c.hash_keys, c.hash_pages, c.hash_content = fold_runs(
                a.hash_keys, a.hash_pages, _content_column(a, np.float32), [(b.hash_keys, b.hash_pages, _content_column(b, np.float32))]
            )
            c.slot_keys, c.slot_pages, c.slot_kept = fold_runs(
                a.slot_keys, a.slot_pages, a.slot_kept, [(b.slot_keys, b.slot_pages, b.slot_kept)]
            )
            c.samples = {k: list(v) for k, v in a.samples.items()}
            for k, v in b.samples.items():
                have = c.samples.setdefault(k, [])
                have.extend(s for s in v if s not in have and len(have) < 3)
            out._prune(c)
            out.sites_[site] = c
        return out

    # -- applying --------------------------------------------------------------------------

    def apply(self, site: str, page: ParsedPage) -> Extracted:
        """Main content of a page of ``site``: its blocks as the site's model decides
        (``SiteModel.decide``), or as the page-level rules do when the site has no model."""
        model = self.for_site(site)
        if model is None:
            return page.extracted(*page.page_level())
        return page.extracted(*model.decide(page.blocks, page.page_level()))

    def for_site(self, site: str) -> SiteModel | None:
        """The model of one site, or None when it has fewer than ``min_site_pages`` pages."""
        counts = self.sites_.get(site)
        if counts is None or counts.pages < max(2, self.settings.min_site_pages):
            return None
        if counts.pending:
            self._compact(counts)
        return SiteModel(counts, self.settings)

    def report(self, site: str | None = None, samples: int = 3) -> list[dict]:
        """What was learned, per site (most pages first): the template blocks removed (subtree
        hashes on more than ``template_share`` of the pages) and the template slots (structural
        signatures whose text the page-level rules dropped on most pages), each with the share of
        pages it is on and sample text."""
        self.compact()
        out = []
        sites = [site] if site is not None else sorted(self.sites_, key=lambda s: (-self.sites_[s].pages, s))
        for name in sites:
            counts = self.sites_.get(name)
            if counts is None:
                continue
            entry: dict = {"site": name, "pages": counts.pages, "copies": counts.copies,
                           "learned": counts.pages >= self.settings.min_site_pages}  # fmt: skip
            n = max(1, counts.pages)
            share = counts.hash_pages / n
            blocks = []
            seen_text: set[str] = set()
            for i in np.argsort(-share, kind="stable"):
                if share[i] <= self.settings.template_share:
                    break
                texts = counts.samples.get(int(counts.hash_keys[i]), [])
                key = texts[0] if texts else ""
                if key in seen_text:
                    continue  # an enclosing block with the same sample text
                seen_text.add(key)
                blocks.append({"kind": "block", "share": round(float(share[i]), 3), "pages": int(counts.hash_pages[i]), "text": texts[:samples]})
            slot_share = counts.slot_pages / n
            prior = np.divide(counts.slot_kept, np.maximum(counts.slot_pages, 1))
            slots = []
            for i in np.argsort(-slot_share, kind="stable"):
                if slot_share[i] <= self.settings.template_share:
                    break
                if prior[i] >= 0.2:
                    continue
                texts = counts.samples.get(int(counts.slot_keys[i]), [])
                slots.append({"kind": "slot", "share": round(float(slot_share[i]), 3), "pages": int(counts.slot_pages[i]), "kept_share": round(float(prior[i]), 3), "text": texts[:samples]})
            entry["blocks"] = blocks
            entry["slots"] = slots
            out.append(entry)
        return out

    # -- serialising -----------------------------------------------------------------------

    def __getstate__(self) -> dict:
        self.compact()
        return self.__dict__

    def to_bytes(self) -> bytes:
        """A compact, pickle-free serialisation (``_MODEL_MAGIC``: one zstd frame of a JSON
        header of the sites, their page counts, sample texts and array lengths, then each count
        column of every site, one after the other; a site's arrays are cut from the frame when
        it is asked for: ``from_bytes``). Until session 15 a numpy .npz with a zip entry per
        array (``_NpzModel`` still reads it): 15,019 entries for corpus-10000-shared's 2,503
        sites, 0.9 s to write against 0.1 s now, and 11.2 MB against 7.1."""
        self.compact()
        sites = sorted(self.sites_.items())
        entries = [
            {"site": site, "pages": c.pages, "pruned_below": c.pruned_below, "copies": c.copies,
             "samples": [[str(k), v] for k, v in c.samples.items()],
             "lengths": [len(getattr(c, name)) for name, _ in _SITE_ARRAYS]}
            for site, c in sites
        ]  # fmt: skip
        meta = {"settings": {"template_share": self.settings.template_share}, "sites": entries}
        head = json.dumps(meta).encode("utf-8")
        columns = [
            np.concatenate([np.asarray(getattr(c, name), dtype=dtype) for _, c in sites]).tobytes() if sites else b""
            for name, dtype in _SITE_ARRAYS
        ]
        return _MODEL_MAGIC + compressor(3)(b"".join([len(head).to_bytes(4, "big"), head, *columns]))

    @classmethod
    def from_bytes(cls, data: bytes, settings: ExtractSettings | None = None) -> SiteTemplates:
        """The model ``to_bytes`` gave, or one stored before session 15 (a numpy .npz); a site's
        counts are read from ``data`` when it is first asked for (opening an index reads the
        header: a crawl's model holds hundreds of sites, a page asks for one)."""
        stored = _ColumnModel(data) if data.startswith(_MODEL_MAGIC) else _NpzModel(data)
        out = cls(settings or ExtractSettings(**stored.meta.get("settings", {})))
        out.sites_ = _Sites(stored=stored)
        return out

    # -- a site at a time (a Spark run's models.parquet keeps a row per site) ---------------

    def site_blobs(self, sites: Iterable[str] | None = None) -> Iterator[tuple[str, bytes]]:
        """(site, ``site_blob`` of its counts) for ``sites`` (default: every site, in order):
        the model cut into a blob per site, so that no one cell or task carries a crawl's every
        site, and a reader loads only the sites it asks for (``from_site_blobs``)."""
        self.compact()
        for site in sorted(self.sites_) if sites is None else sites:
            yield site, site_blob(self.sites_[site])

    @classmethod
    def from_site_blobs(
        cls, fetch: Callable[[str], bytes | None], names: Callable[[], Iterable[str]], settings: ExtractSettings
    ) -> SiteTemplates:
        """The model whose sites ``fetch(site)`` gives as ``site_blob`` bytes (None: no such
        site), each fetched when first asked for; ``names()`` lists them all (iterating the
        model, or pickling it, fetches every site)."""
        out = cls(settings)
        out.sites_ = _Sites(fetch=(fetch, names))
        return out


# A whole model (SiteTemplates.to_bytes): magic, then zstd of a 4-byte header length, a JSON
# header (settings; per site, in name order, its scalars, samples and _SITE_ARRAYS' lengths) and
# the _SITE_ARRAYS columns, little-endian: every site's hash_keys, then every site's hash_pages...
_MODEL_MAGIC = b"PTSITES2"
# A site's counts on their own (site_blob): magic, then zstd of a 4-byte header length, a JSON
# header (scalars, samples, the arrays' lengths) and the arrays' bytes, little-endian, in this order.
_SITE_MAGIC = b"PTSITE1"
_SITE_ARRAYS = (("hash_keys", "<u8"), ("hash_pages", "<i4"), ("hash_content", "<f4"),
                ("slot_keys", "<u8"), ("slot_pages", "<i4"), ("slot_kept", "<f4"))  # fmt: skip


def site_blob(counts: _SiteCounts) -> bytes:
    """One site's counts as bytes (``read_site_blob`` reads them back). Smaller than the site's
    share of the npz ``SiteTemplates.to_bytes`` wrote before session 15 for a small site (no
    zip entry per array)."""
    arrays = [np.ascontiguousarray(getattr(counts, name), dtype=dtype) for name, dtype in _SITE_ARRAYS]
    head = json.dumps({"pages": counts.pages, "pruned_below": counts.pruned_below, "copies": counts.copies,
                       "samples": [[str(k), v] for k, v in counts.samples.items()],
                       "lengths": [len(a) for a in arrays]}).encode("utf-8")  # fmt: skip
    raw = b"".join([len(head).to_bytes(4, "big"), head, *(a.tobytes() for a in arrays)])
    return _SITE_MAGIC + compressor(3)(raw)


def read_site_blob(data: bytes) -> _SiteCounts:
    """The counts ``site_blob`` wrote (ValueError for bytes that are not one)."""
    if not data.startswith(_SITE_MAGIC):
        raise ValueError("not a pagetwin site model")
    raw = decompressor()(data[len(_SITE_MAGIC) :])
    size = int.from_bytes(raw[:4], "big")
    head = json.loads(raw[4 : 4 + size])
    at, arrays = 4 + size, {}
    for (name, dtype), length in zip(_SITE_ARRAYS, head["lengths"]):
        width = np.dtype(dtype).itemsize * length
        arrays[name] = np.frombuffer(raw, dtype=dtype, count=length, offset=at).astype(dtype[1:])
        at += width
    return _SiteCounts(pages=head["pages"], samples={int(k): v for k, v in head["samples"]},
                       pruned_below=head["pruned_below"], copies=head["copies"], **arrays)  # fmt: skip


class _ColumnModel:
    """A model ``SiteTemplates.to_bytes`` wrote, decompressed: its header (``meta``) and each
    site's counts cut from the columns (``site``)."""

    def __init__(self, data: bytes) -> None:
        raw = decompressor()(data[len(_MODEL_MAGIC) :])
        size = int.from_bytes(raw[:4], "big")
        self.meta = json.loads(raw[4 : 4 + size])
        self.entries = self.meta["sites"]
        lengths = np.array([e["lengths"] for e in self.entries], dtype=np.int64).reshape(-1, len(_SITE_ARRAYS))
        # Where each site's array starts in the frame: the columns one after the other, and in
        # each the sites in order.
        widths = np.array([np.dtype(dtype).itemsize for _, dtype in _SITE_ARRAYS], dtype=np.int64)
        column_bytes = lengths.sum(axis=0) * widths
        column_start = 4 + size + np.concatenate([[0], np.cumsum(column_bytes)[:-1]])
        self._starts = (column_start + (np.cumsum(lengths, axis=0) - lengths) * widths).tolist()
        self._raw = raw

    def site(self, i: int) -> _SiteCounts:
        """The counts of the ``i``-th site of the header (arrays of their own, not views)."""
        entry, arrays = self.entries[i], {}
        for (name, dtype), length, at in zip(_SITE_ARRAYS, entry["lengths"], self._starts[i]):
            arrays[name] = np.frombuffer(self._raw, dtype=dtype, count=length, offset=at).astype(dtype[1:])
        return _SiteCounts(pages=entry["pages"], samples={int(k): v for k, v in entry["samples"]},
                           pruned_below=entry["pruned_below"], copies=entry["copies"], **arrays)  # fmt: skip

    def close(self) -> None:
        self._raw = b""


class _NpzModel:
    """A model written before session 15: a numpy .npz of a JSON header (``meta``) and each
    site's arrays ``h<i>`` ... ``sk<i>`` and ``hc<i>``, each read from the zip when asked for
    (``site``)."""

    def __init__(self, data: bytes) -> None:
        self._npz = np.load(io.BytesIO(data), allow_pickle=False)
        self.meta = json.loads(self._npz["meta"].tobytes().decode("utf-8"))
        self.entries = self.meta["sites"]
        self._files = set(self._npz.files)

    def site(self, i: int) -> _SiteCounts:
        s, npz = self.entries[i], self._npz
        return _SiteCounts(
            pages=s["pages"], hash_keys=npz[f"h{i}"], hash_pages=npz[f"hp{i}"],
            slot_keys=npz[f"s{i}"], slot_pages=npz[f"sp{i}"], slot_kept=npz[f"sk{i}"],
            # A model written before session 8 has no hc<i>: no text is spared as near copies'.
            hash_content=npz[f"hc{i}"] if f"hc{i}" in self._files else np.zeros(0, np.float32),
            samples={int(k): v for k, v in s["samples"]}, pruned_below=s.get("pruned_below", 0),
            copies=s.get("copies", 0),
        )  # fmt: skip

    def close(self) -> None:
        self._npz.close()


class _Sites(MutableMapping):
    """``SiteTemplates.sites_``: site -> _SiteCounts, whose sites stored in a serialised model
    (``stored``: a _ColumnModel or an _NpzModel) are read on first use, each alone: opening an
    index reads a header, not every site's arrays. Or stored a blob per site
    (``fetch``: (site -> site_blob bytes or None, () -> every site's name)), each fetched on
    first use. ``read()``: the sites read or made so far."""

    def __init__(self, items=(), stored: _ColumnModel | _NpzModel | None = None, fetch=None) -> None:
        self._sites: dict[str, _SiteCounts] = dict(items)
        self._fetch = fetch
        self._absent: set[str] = set()  # sites fetch said it does not have
        self._model, self._stored = stored, {}
        if stored is not None:
            self._stored = {entry["site"]: i for i, entry in enumerate(stored.entries)}

    def _load(self, site: str) -> None:
        self._sites[site] = self._model.site(self._stored.pop(site))
        if not self._stored:
            self._model.close()
            self._model = None

    def read(self) -> list[_SiteCounts]:
        """The counts of the sites read or made so far (a stored site has no pending pages)."""
        return list(self._sites.values())

    def _fetched(self, site: str) -> bool:
        """Whether ``site`` is fetched now (a blob per site), fetching it if need be."""
        if self._fetch is None or site in self._sites or site in self._absent:
            return site in self._sites
        blob = self._fetch[0](site)
        if blob is None:
            self._absent.add(site)
            return False
        self._sites[site] = read_site_blob(blob)
        return True

    def __getitem__(self, site: str) -> _SiteCounts:
        if site in self._stored:
            self._load(site)
        elif site not in self._sites:
            self._fetched(site)
        return self._sites[site]

    def __setitem__(self, site: str, counts: _SiteCounts) -> None:
        self._stored.pop(site, None)
        self._absent.discard(site)
        self._sites[site] = counts

    def __delitem__(self, site: str) -> None:
        if self._stored.pop(site, None) is None:
            self._fetched(site)
            del self._sites[site]
            self._absent.add(site)

    def __contains__(self, site: object) -> bool:
        return site in self._stored or site in self._sites or (isinstance(site, str) and self._fetched(site))

    def _fetch_all(self) -> None:
        if self._fetch is not None:
            for site in self._fetch[1]():
                if site not in self._absent:
                    self._fetched(site)
            self._fetch = None  # every site is here now

    def __iter__(self):
        self._fetch_all()
        for site in list(self._stored):
            self._load(site)
        return iter(self._sites)

    def __len__(self) -> int:
        self._fetch_all()
        return len(self._sites) + len(self._stored)

    def __repr__(self) -> str:
        return f"_Sites({dict(self.items())!r})"

    def __reduce__(self):
        return (_Sites, (list(self.items()),))  # every site read: a pickle holds no stored model


def normalize_site(name: str, settings: ExtractSettings) -> str:
    """The site key of a name a user typed (``www.BBC.co.uk``, a URL, or a ``file:`` key)."""
    name = name.strip()
    if name.startswith("file:") and "://" not in name:
        return name
    return site_key(name if "://" in name else "http://" + name, settings)


def format_report(rows: list[dict]) -> str:
    """``SiteTemplates.report`` as text for people."""
    lines = []
    for row in rows:
        state = "template learned" if row["learned"] else "too few distinct pages: page-level removal only"
        copies = f", and {row['copies']} copies of them not counted" if row.get("copies") else ""
        lines.append(f"{row['site'] or '(no host)'}: {row['pages']} pages{copies} ({state})")
        if not row["learned"]:
            continue
        if row["blocks"]:
            lines.append("  blocks removed (share of pages, pages, sample text):")
            for b in row["blocks"]:
                sample = " | ".join(repr(t) for t in b["text"]) or "(no text: images only)"
                lines.append(f"    {b['share']:6.1%} {b['pages']:6d}  {sample}")
        if row["slots"]:
            lines.append("  template slots (text dropped on most pages; share of pages, pages, sample text):")
            for s in row["slots"]:
                sample = " | ".join(repr(t) for t in s["text"])
                lines.append(f"    {s['share']:6.1%} {s['pages']:6d}  {sample}")
        if not row["blocks"] and not row["slots"]:
            lines.append("  nothing repeated on enough pages beyond what page-level rules remove")
    return "\n".join(lines) + ("\n" if lines else "")
