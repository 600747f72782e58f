"""The native page-level rules (html/_page.pyx) against their pure-Python reference in
html/noise.py: each ported function gives what the reference gives on generated Blocks (trees
of every shape, sibling slots, marked bodies, links, CJK datelines, texts said twice), and
page_keep gives page_keep_reference's keep and region on every real page of the extraction sets
and the shared WARCs (and so does parse_page's one query for a page's title, description and
product facts); without the module (or built with other thresholds) the reference runs,
with one warning."""

from __future__ import annotations

import logging
import random
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.html import noise
from pagetwin.html.blocks import BlockWalker, Blocks, text_size, walk
from pagetwin.html.parse import decode_html, looks_like_html, parse_html
from tests.fixtures.sites import paragraph

_page = pytest.importorskip("pagetwin.html._page", reason="native page rules not built (pip install -e .)")

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
FAST = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_PROSE = [paragraph(random.Random(i)) for i in range(3)]
_TEXTS = [
    "", "", "", "Home", "News", "Read the whole story of the week", "https://example.org/a", "www.example.org",
    "word " * 30, "A short line", "Price: 20 EUR", "Figure 2. A chart", "2020-11-26 08:04 来源:中国新闻网",
    "版权所有 2021 某某网", "滇ICP备11000491号", "中文的一段话，没有日期。" * 4, "Related articles", "x" * 950,
    "Café de la gare, 2020-11-26", "“Quoted” 2020-11-26 08:04", "ICP 证 2020-11-26 更新", "ICP备 licence", "2020年11月26日 编辑",
    *_PROSE, _PROSE[0][:120],
]  # fmt: skip
_TAGS = ["div", "p", "p", "li", "li", "tr", "td", "dd", "dt", "h1", "h2", "h3", "h5", "span", "article", "main", "object",
         "figure", "figcaption", "pre", "section", "ul"]  # fmt: skip


@st.composite
def pages(draw):
    """Blocks as the walk makes them (parents before children) with few signatures (slots
    that repeat) and few texts (boxes said twice), and the data-table rows of the page."""
    n = draw(st.integers(0, 60))
    parent = [-1] * min(n, 1) + [draw(st.integers(max(-1, b - 8), b - 1) | st.integers(-1, b - 1)) for b in range(1, n)]
    text = draw(st.lists(st.sampled_from(_TEXTS), min_size=n, max_size=n))
    sigs = draw(st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=5))
    share = st.sampled_from([0.0, 0.0, 0.2, 0.4, 0.6, 1.0])
    link = [int(len(t) * draw(share)) for t in text]
    size = [text_size(t) if draw(st.integers(0, 9)) else draw(st.integers(0, 2000)) for t in text]
    blocks = Blocks(
        tag=draw(st.lists(st.sampled_from(_TAGS), min_size=n, max_size=n)), parent=parent,
        sig=draw(st.lists(st.sampled_from(sigs), min_size=n, max_size=n)), hash=[0] * n, text=text, link=link, size=size,
        content=[True] * n, in_article=[False] * n, hint=draw(st.lists(st.booleans() | st.just(False), min_size=n, max_size=n)),
        caption=draw(st.lists(st.sampled_from([False, False, False, True]), min_size=n, max_size=n)),
        images=[(b, {"src": "i.png"}) for b in draw(st.lists(st.integers(0, max(0, n - 1)), max_size=3)) if n],
    )  # fmt: skip
    rows = frozenset("".join(t.split()) for t in draw(st.lists(st.sampled_from(_TEXTS), max_size=3)))
    return blocks, rows


@st.composite
def composed_pages(draw):
    """Blocks in document order made of the boxes the rarer rules look for: boxes of prose
    (some marked as the body), lists of linked items under headings (an index), grids of
    cards, and boxes said again."""
    rows: list[tuple[str, int, int, str, int, bool]] = [("body", -1, 0, "", 0, False)]  # tag, parent, sig, text, link, hint
    path = [0]  # the open boxes: a new box goes into one of them (the walk's order)

    def add(tag, up, sig, text="", link=0, hint=False):
        rows.append((tag, up, sig, text, link, hint))
        return len(rows) - 1

    boxes: list[list[str]] = []
    for _ in range(draw(st.integers(1, 9))):
        up = path[draw(st.integers(0, len(path) - 1))]
        del path[path.index(up) + 1 :]
        kind = draw(st.sampled_from(["prose", "list", "list", "cards", "again", "box"]))
        if kind == "again" and not boxes:
            kind = "prose"
        if kind == "prose":
            box = add("div", up, draw(st.integers(1, 3)), hint=draw(st.booleans()))
            texts = draw(st.lists(st.sampled_from(_PROSE + _TEXTS[3:8]), min_size=1, max_size=4))
            for t in texts:
                add("p", box, 4, t, int(len(t) * draw(st.sampled_from([0, 0, 0.2, 0.6]))))
            boxes.append(texts)
            path.append(box)
        elif kind == "box":  # a <main>, an <article> or a figure to put other boxes in
            tag = draw(st.sampled_from(["main", "article", "article", "figure", "object"]))
            box = add(tag, up, 14 + len(tag))
            if tag == "figure":
                add("figcaption", box, 20, draw(st.sampled_from(["A photo of the bay at night", "Figure 3. Costs"])))
            elif draw(st.booleans()):
                add("h1", box, 21, "The title of the story")
            path.append(box)
        elif kind == "again":
            box = add("div", up, 5)
            for t in draw(st.sampled_from(boxes)):
                add("p", box, 4, t)
        elif kind == "list":
            add(draw(st.sampled_from(["h2", "h3", "p"])), up, 6, f"Section {len(rows)}")
            box = add("ul", up, 7)
            for i in range(draw(st.integers(3, 7))):
                name = draw(st.sampled_from(["Name", "A longer name of one item", "Item"]))
                add("li", box, 8, f"{name} {i}", len(name))
        else:
            box = add("div", up, 9)
            for i in range(draw(st.integers(2, 8))):
                card = add("div", box, 10)
                add("h3", card, 11, f"Blue shirt {i}", draw(st.sampled_from([0, 12])))
                add("span", card, 12, f"19.{i} EUR")
                if draw(st.booleans()):
                    add("p", card, 13, "Cotton, sizes S to XL")
    tag, parent, sig, text, link, hint = (list(c) for c in zip(*rows))
    n = len(tag)
    blocks = Blocks(tag=tag, parent=parent, sig=sig, hash=[0] * n, text=text, link=link, size=[text_size(t) for t in text],
                    content=[True] * n, in_article=[False] * n, hint=hint, caption=[False] * n)  # fmt: skip
    return blocks, frozenset()


@settings(max_examples=600, **FAST)
@given(page=pages() | composed_pages())
def test_property_page_keep_is_the_references(page):
    blocks, rows = page
    assert noise.page_keep(blocks, table_rows=rows) == noise.page_keep_reference(blocks, table_rows=rows)
    # (and not by falling back: the native rules take every page the walk can make)
    assert noise._page_keep(blocks, None, rows, noise.native_rules()) == noise.page_keep_reference(blocks, table_rows=rows)


@settings(max_examples=600, **FAST)
@given(page=pages() | composed_pages(), data=st.data())
def test_property_each_native_rule_is_its_reference(page, data):
    blocks, _ = page
    n = len(blocks)
    cols = _page.Columns(blocks)
    classes = noise.classify(blocks)
    assert _page.classify(cols) == classes
    # Any classes and regions, not only those the rules before would make.
    drawn = data.draw(st.lists(st.sampled_from(range(7)), min_size=n, max_size=n))
    inside = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keep = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    for cls in (classes, drawn):
        assert _page.main_region(cols, cls) == noise.main_region(blocks, cls)
        assert _page.article_or_list(cols, cls) == noise._article_or_list(blocks, cls)
        for region in (inside, noise.main_region(blocks, cls)):
            assert _page.card_grid(cols, cls, region) == noise._card_grid(blocks, cls, region)
            assert _page.linked_parts(cols, cls, region) == noise._linked_parts(blocks, cls, region)
            assert _page.prose_slots(cols, cls, region) == noise._prose_slots(blocks, cls, region)
            index = noise._index_lists(blocks, cls, region)
            assert _page.index_lists(cols, cls, region) == index
            parts, prose = noise._linked_parts(blocks, classes, region), noise._prose_slots(blocks, cls, region)
            assert _page.region_keep(cols, cls, classes, region, parts, prose, index) == noise._region_keep(
                blocks, cls, classes, region, parts, prose, index
            )
            a, b = list(keep), list(keep)
            _page.keep_title(cols, cls, region, a)
            noise._keep_title(blocks, cls, region, b)
            assert a == b
            assert _page.titled_article(cols, region) == noise._titled_article(blocks, region)
            assert _page.whole_main(cols, cls, region) == noise._whole_main(blocks, cls, region)
            if not _page.captions_apply(cols):  # (then _drop_captions has nothing to do)
                a = list(keep)
                noise._drop_captions(blocks, cls, region, a)
                assert a == keep
    rules = noise.native_rules()
    for native, reference in ((rules.drop_repeats, noise._drop_repeats), (rules.drop_said_again, noise._drop_said_again),
                              (rules.drop_datelines, noise._drop_datelines)):  # fmt: skip
        a, b = list(keep), list(keep)
        native(cols, a)
        reference(blocks, b)
        assert a == b, native


def test_a_box_said_twice_and_a_grid_of_cards_are_found_natively():
    """The rare paths (a box rendered twice, a card grid, an index of lists) on pages made to
    have them: the native rules take them as the reference does."""
    story = "".join(f"<p>{p}</p>" for p in _PROSE)
    twice = f"<html><body><div class=a><p>{_PROSE[0]}</p><p>{_PROSE[1]}</p></div><div class=b>{story}</div></body></html>"
    cards = "".join(f"<div class=card><h3><a href=/p{i}>Blue shirt {i}</a></h3><span>19.{i} EUR</span><p>Cotton, sizes S to XL</p></div>" for i in range(12))
    grid = f"<html><body><p>{_PROSE[0][:60]}</p><div class=grid>{cards}</div></body></html>"
    lists = "".join(f"<h2>{c}</h2><ul>" + "".join(f"<li><a href=/{c}{i}>{c} name {i}</a></li>" for i in range(6)) + "</ul>" for c in "ABCD")
    index = f"<html><body><main><h1>Index</h1><p>{_PROSE[2]}</p>{lists}</main></body></html>"
    for html in (twice, grid, index):
        blocks = walk(parse_html(html), 512)
        keep, inside = noise.page_keep(blocks)
        assert (keep, inside) == noise.page_keep_reference(blocks)
        assert any(keep)
    blocks = walk(parse_html(grid), 512)
    classes, cols = noise.classify(blocks), _page.Columns(blocks)
    assert _page.card_grid(cols, classes, [False] * len(cols)) == noise._card_grid(blocks, classes, [False] * len(cols)) != []


def test_columns_the_native_rules_do_not_take_go_to_the_reference():
    # A parent after its child: Python indexes it, C would read past its run.
    blocks = Blocks(tag=["div", "p", "p"], parent=[-1, 2, 0], sig=[1, 2, 2], hash=[0] * 3, text=["", _PROSE[0], "b"], link=[0] * 3,
                    size=[0, len(_PROSE[0]), 1], content=[True] * 3, in_article=[False] * 3, hint=[False] * 3, caption=[False] * 3)  # fmt: skip
    with pytest.raises(ValueError):
        _page.Columns(blocks)
    assert noise.page_keep(blocks) == noise.page_keep_reference(blocks)
    with pytest.raises(OverflowError):  # a signature past uint64
        _page.Columns(Blocks(tag=["p"], parent=[-1], sig=[1 << 64], hash=[0], text=["a"], link=[0], size=[1], hint=[False]))


def test_without_the_native_rules_the_reference_runs_with_one_warning(monkeypatch, caplog):
    blocks = walk(parse_html(f"<html><body><h1>T</h1><p>{_PROSE[0]}</p><a href=/>Home</a></body></html>"), 512)
    expected = noise.page_keep_reference(blocks)
    noise.native_rules.cache_clear()
    try:
        monkeypatch.setattr(noise, "_page", None)
        monkeypatch.setattr(noise, "_PAGE_MISSING", "No module named 'pagetwin.html._page'", raising=False)
        with caplog.at_level(logging.WARNING, logger="pagetwin.html.noise"):
            assert noise.page_keep(blocks) == expected
            assert noise.page_keep(blocks) == expected
        said = [r for r in caplog.records if "native page-level rules are off" in r.getMessage()]
        assert len(said) == 1 and "not built" in said[0].getMessage()
        assert noise.native_rules() is noise._REFERENCE
        # Built with other thresholds than noise.py's: the reference too.
        noise.native_rules.cache_clear()
        monkeypatch.setattr(noise, "_page", _page)
        monkeypatch.setattr(noise, "GOOD_SIZE", noise.GOOD_SIZE + 1)
        with caplog.at_level(logging.WARNING, logger="pagetwin.html.noise"):
            assert noise.native_rules() is noise._REFERENCE
        assert any("other thresholds" in r.getMessage() for r in caplog.records)
    finally:
        monkeypatch.undo()
        noise.native_rules.cache_clear()
    assert noise.native_rules() is not noise._REFERENCE


# -- real pages --------------------------------------------------------------------------------


def _same_on(bodies) -> int:
    count = 0
    walker = BlockWalker()
    for body, charset in bodies:
        tree = parse_html(decode_html(body, charset), 512)
        blocks = walk(tree, 512, walker)
        rows = noise.data_table_rows(tree) if blocks.tag.count("tr") >= noise.TABLE_ROWS else frozenset()
        assert noise._page_keep(blocks, None, rows, noise.native_rules()) == noise.page_keep_reference(blocks, table_rows=rows)
        # (and parse_page's head facts and data tables, found natively: the references' results)
        assert noise.data_table_rows(tree, walker) == noise.data_table_rows(tree)
        for meta, products in (noise._head_nodes(tree, walker), noise._head_nodes_reference(tree)):
            assert (noise._page_meta_of(meta), noise._product_facts_of(tree, products)) == (noise.page_meta(tree), noise.product_facts(tree))
        count += 1
    return count


@pytest.mark.parametrize("name", ["cleanportaleval", "scrapinghub", "chinese_wce", "wcxb-dev"])
def test_page_keep_is_the_references_on_every_page_of_the_extraction_sets(name):
    if not (SHARED / "extraction" / name).exists():
        pytest.skip(f"no extraction set at {SHARED / 'extraction' / name}")
    sys.path.insert(0, str(ROOT / "bench"))
    from extraction import load_set

    assert _same_on((p["body"], None) for p in load_set(name, SHARED, None)) > 0


def test_page_keep_is_the_references_on_every_page_of_the_shared_warcs():
    from pagetwin.config import InputSettings
    from pagetwin.model import Page
    from pagetwin.sources.base import SourceStats
    from pagetwin.sources.warc import iter_arc, iter_warc

    paths = sorted((SHARED / "warc").rglob("*.*rc.gz"))
    if not paths:
        pytest.skip(f"no WARC or ARC files under {SHARED / 'warc'}")

    def bodies():
        for path in paths:
            read = iter_arc if path.name.endswith(".arc.gz") else iter_warc
            for record in read(str(path), InputSettings(), SourceStats()):
                if isinstance(record, Page) and record.body and looks_like_html(record.body):
                    yield record.body, record.http_charset

    assert _same_on(bodies()) > 0


def test_dateline_words_start_with_an_ideograph():
    # _page.drop_datelines searches the legal line and dateline expressions only in texts with
    # an ideograph (U+4E00-U+9FFF), the licence only where "ICP" is: so must every word start.
    for pattern in (noise._CN_LEGAL, noise._CN_DATELINE):
        assert all("\u4e00" <= word[0] <= "\u9fff" for word in pattern.pattern.split("|")), pattern
    assert noise._CN_LICENCE.pattern.startswith("ICP") and not noise._CN_LICENCE.flags & 2  # (re.IGNORECASE)


# The caption rules as they read before they took the caption blocks by number (a flag list of
# the page read through at every step): the faster ones must decide the same.
def _photo_captions_before(blocks):
    n = len(blocks)
    parent = blocks.parent
    figure, caption = [-1] * n, [False] * n
    for b, tag in enumerate(blocks.tag):
        up = parent[b]
        figure[b] = b if tag == "figure" else (figure[up] if up >= 0 else -1)
        caption[b] = figure[b] >= 0 and (tag == "figcaption" or (up >= 0 and caption[up]))
    photo = [False] * n
    for b, _ in blocks.images:
        if 0 <= b < n and figure[b] >= 0:
            photo[figure[b]] = True
    for b, (tag, text) in enumerate(zip(blocks.tag, blocks.text)):
        if figure[b] >= 0 and (tag in noise._NOT_PHOTO or (caption[b] and noise._NUMBERED.match(text))):
            photo[figure[b]] = False
    said = [0] * n
    for b, (c, size) in enumerate(zip(caption, blocks.size)):
        if c:
            said[figure[b]] += size
    return [c and photo[figure[b]] and said[figure[b]] >= noise.SHORT_SIZE for b, c in enumerate(caption)]


def _drop_captions_before(blocks, classes, inside, keep):
    tags = blocks.tag
    figures, named = "figcaption" in tags, any(blocks.caption)
    if "pre" in tags or not (figures or named):
        return
    caption = _photo_captions_before(blocks) if figures else [False] * len(blocks)
    for b in noise._named_captions(blocks) if named else ():
        caption[b] = True
    if not any(c and k for c, k in zip(caption, keep)):
        return
    rest = [i and not c for i, c in zip(inside, caption)]
    if noise._good_text(blocks, classes, rest) >= noise.ARTICLE_SIZE:
        for b, c in enumerate(caption):
            if c:
                keep[b] = False


@st.composite
def figure_pages(draw):
    """Blocks where figures, their captions and nested boxes are most of the page."""
    n = draw(st.integers(1, 40))
    parent = [-1] + [draw(st.integers(max(-1, b - 4), b - 1)) for b in range(1, n)]
    text = draw(st.lists(st.sampled_from(["", "A photo of the bay at night, by the harbour", "Figure 3. Costs", _PROSE[0]]),
                         min_size=n, max_size=n))  # fmt: skip
    blocks = Blocks(tag=draw(st.lists(st.sampled_from(["figure", "figure", "figcaption", "figcaption", "div", "p", "span", "table"]),
                                      min_size=n, max_size=n)),
                    parent=parent, sig=[1] * n, hash=[0] * n, text=text, link=[0] * n, size=[text_size(t) for t in text],
                    content=[True] * n, in_article=[False] * n, hint=[False] * n,
                    caption=draw(st.lists(st.sampled_from([False, False, True]), min_size=n, max_size=n)),
                    images=[(b, None) for b in draw(st.lists(st.integers(0, n - 1), max_size=8))])  # fmt: skip
    return blocks, frozenset()


@settings(max_examples=600, **FAST)
@given(page=pages() | composed_pages() | figure_pages(), data=st.data())
def test_property_caption_rules_decide_as_before(page, data):
    blocks, _ = page
    n = len(blocks)
    if n and data.draw(st.booleans()):  # photos in the figures, captions long enough to be sentences
        blocks.images = [(b, None) for b in data.draw(st.lists(st.integers(-1, n), max_size=6))]
        blocks.size = [data.draw(st.sampled_from([0, 10, noise.SHORT_SIZE, 400])) for _ in range(n)]
    assert noise._photo_captions(blocks) == _photo_captions_before(blocks)
    classes = noise.classify(blocks)
    inside = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keep = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    fast, before = list(keep), list(keep)
    noise._drop_captions(blocks, classes, inside, fast)
    _drop_captions_before(blocks, classes, inside, before)
    assert fast == before
