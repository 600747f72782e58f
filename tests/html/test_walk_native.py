"""The native block walk (pagetwin/html/_walk.pyx) gives exactly the blocks of the Python walk
(BlockWalker.walk_reference): every list of Blocks, on generated pages (nesting, links, hidden
and chrome boxes, noscripts and comment boxes held back, images, tables, scripts of many kinds,
bytes that are not UTF-8, DOMs deeper than max_depth, custom tags), on the fuzz seeds and their
mutations, and on the real pages of the extraction sets; its XXH64 is xxhash's; and without it
(not built, another selectolax) the Python walk runs, with one warning."""

from __future__ import annotations

import dataclasses
import logging
import random
import sys
from pathlib import Path

import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from pagetwin.html import blocks
from pagetwin.html.parse import decode_html, parse_html

_walk = pytest.importorskip("pagetwin.html._walk", reason="native walk not built (pip install -e .)")

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data"
FAST = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def walkers():
    if blocks.native_status() is not None:
        pytest.skip(f"native walk off: {blocks.native_status()}")
    return blocks.BlockWalker(), blocks.BlockWalker(native=False)


def differences(native, reference, tree, max_depth: int = 512) -> list[str]:
    """The fields of Blocks in which the two walks differ on a tree."""
    assert native.native is not None and reference.native is None
    a, b = native.walk(tree, max_depth), reference.walk(tree, max_depth)
    return [f.name for f in dataclasses.fields(a) if getattr(a, f.name) != getattr(b, f.name)]


# -- generated pages ---------------------------------------------------------------------------

WORDS = [
    "word", "Don't", "2024", "1,000", "３月", "١٢٣", "४५६", "๑๒๓", "߁߂", "𝟘𝟙", "中文的文本", "これはテスト", "한국어",
    "кошка", "ß", "İstanbul", "🎉", "👩\u200d💻", "e\u0301", "\u00a0", "\u3000", "\u2028", "\x1c", "\u200b", " ",
    "\n\t", "&amp;", "&nbsp;", "&#0;", "&#xD800;", "&lt;b&gt;", "\ufeff", "\U00020000", "x\u0300", "٫", "Ⅻ",
]
CLASSES = [
    "", "post", "menu", "nav-bar", "sidebar", "comments", "comment-list", "content-sidebar-wrap",
    "share", "entry-content", "article-body", "footer", "cookie-consent", "post-123", "Ad", "wrap ads",
    "disqus", "commentlist", "widget", "x_y-1", "ĸlass", "main", "related posts",
    "wp-caption-text", "newsCaption", "hst-resgallery", "slideshow", "image-credit", "accreditation", "d-none", "d-none d-lg-block", "sr-only", "x:flex visually-hidden", "tab-pane", "accordion-panel menu", "faq answer",
    "elementor-widget elementor-widget-heading", "elementor-widget-nav-menu", "widget-span widget-type-cell",
    "rollover-people-block", "tooltip", "group/tooltip", "popover-trigger",
]
TAGS = [
    "div", "p", "span", "a", "li", "ul", "ol", "section", "article", "main", "header", "footer", "nav",
    "aside", "h1", "h2", "b", "i", "em", "font", "label", "small", "td", "th", "table", "tr", "blockquote",
    "pre", "figure", "figcaption", "noscript", "form", "button", "script", "style", "template", "svg",
    "my-widget", "o:p", "x-", "center", "details", "summary", "code", "dl", "dt", "dd", "address",
] + ["div", "p", "a", "a", "span", "li"] * 4  # (the common ones more often)
words = st.lists(st.sampled_from(WORDS) | st.text(max_size=4), min_size=1, max_size=6).map(" ".join)


@st.composite
def attributes(draw) -> str:
    out = []
    for name, values in (
        ("class", CLASSES), ("id", ["", "main", "comments", "nav", "story-body", "sidebar-2"]),
        ("itemprop", ["articleBody", "headline", "text", "name", "articlebody"]),
        ("itemscope", [""]), ("itemtype", ["https://schema.org/Comment", "https://schema.org/Answer", "http://schema.org/Question/"]),
        ("style", ["display:none", "DISPLAY : None", "visibility: hidden", "color: red", "display:\u00a0none", "ſ"]),
        ("aria-hidden", ["true", "false"]), ("role", ["tabpanel", "region", "dialog"]), ("type", ["hidden", "text"]), ("hidden", [""]), ("data-x", ["1"]),
    ):  # fmt: skip
        if draw(st.integers(0, 5)) == 0:
            value = draw(st.sampled_from(values))
            out.append(f' {name}="{value}"' if value else f" {name}")
    return "".join(out)


@st.composite
def image(draw) -> str:
    attrs = []
    for name in ("src", "data-src", "srcset", "data-srcset", "data-original", "alt", "width", "style"):
        if draw(st.booleans()):
            attrs.append(f' {name}="{draw(st.sampled_from(["/a.png", "", "b.jpg 2x", "x"]))}"')
    tag = draw(st.sampled_from(["img", "source", "picture-source", "br", "hr"]))
    if tag == "picture-source":
        return f"<picture><source{''.join(attrs)}><img{''.join(attrs)}></picture>"
    return f"<{tag}{''.join(attrs)}>"


def element(children):
    return st.builds(
        lambda tag, attrs, kids: f"<{tag}{attrs}>{''.join(kids)}</{tag}>",
        st.sampled_from(TAGS), attributes(), st.lists(children, min_size=1, max_size=5),
    )  # fmt: skip


# A paragraph of content (blocks.PARAGRAPH_CHARS and more), so that chrome-named boxes that hold
# several of them are put to blocks._holds_the_page's wrapper test, linked words and all.
long_paragraph = st.sampled_from(["", "<a href='/x'>", "<b>"]).map(
    lambda lead: f"<p>{lead}" + "plain prose of a paragraph that says a little. " * 4 + "</p>"
)
html_bodies = st.recursive(words | image() | long_paragraph, element, max_leaves=40)


@settings(max_examples=400, **FAST)
@given(body=st.lists(html_bodies, min_size=1, max_size=4).map("".join), max_depth=st.sampled_from([512, 3, 1, 0]))
def test_native_walk_is_the_python_walk_on_generated_pages(walkers, body, max_depth):
    tree = LexborHTMLParser(f"<html><head><title>t</title></head><body>{body}</body></html>")
    assert differences(*walkers, tree, max_depth) == []


@settings(max_examples=150, **FAST)
@given(body=html_bodies, junk=st.lists(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc3", b"\xe2\x82", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x00"]), max_size=6), seed=st.integers(0, 1000))
def test_native_walk_is_the_python_walk_on_bytes_that_are_not_utf8(walkers, body, junk, seed):
    data = bytearray(f"<html><body><p class='x'>{body}</p></body></html>".encode())
    rng = random.Random(seed)
    for piece in junk:
        at = rng.randrange(len(data))
        data[at:at] = piece
    tree = LexborHTMLParser(bytes(data))
    assert differences(*walkers, tree) == []


def test_held_back_comments_and_noscripts_and_deep_doms(walkers):
    thread = "".join(f"<div class='comment'><p>Reply number {i} with several words of its own</p></div>" for i in range(9))
    long = "<p>" + "plain prose of a paragraph that says a little. " * 4 + "</p>"
    pages = [
        f"<body><div class='comments'>{thread}</div><p>short</p></body>",  # a forum thread: the comments are the page
        "<body><noscript><div><p>" + "crawler copy words " * 30 + "</p></div></noscript><p>Enable JS</p></body>",
        "<body><article><p>" + "own post words " * 40 + f"</p></article><div id='comments'>{thread}</div></body>",
        "<body>" + "<div>" * 3000 + "deep <a href='x'>link</a>" + "</div>" * 3000 + "</body>",
        "<body>" + "<span><b>" * 2000 + "inline deep" + "</b></span>" * 2000 + "</body>",
        "<frameset><frame src='a'></frameset>",
        "",
        "<p>no body tag " + "<my-widget>w</my-widget>" * 5,
        # chrome-named boxes that hold the page (blocks._holds_the_page), and ones that do not
        "<body><div class='widget-span'>" + long * 4 + "</div><div class='sidebar'><p>side</p></div></body>",
        "<body><div class='nav'><div class='widget'>" + long * 3 + "</div></div><p>rest</p></body>",
        "<body><div class='widget'>" + long * 3 + "</div><article>" + long * 9 + "</article></body>",
        "<body><div id='cookie-banner'>" + long * 5 + "</div><p>rest</p></body>",
        "<body><div class='comments'>" + long * 5 + "</div><p>short</p></body>",
        "<body><div class='widget-span'><h1>T</h1><div class='widget'><p>in</p><div class='nav widget'>n</div></div></div><div class='widget'>out</div></body>",
        "<body><div class='banner'><script>" + "var x = 1; " * 400 + "</script>" + long * 3 + "</div>" + long * 2 + "</body>",
        # comments on a question (blocks._qa_comment): their itemprop=text does not make their box a wrapper
        "<body><div itemscope itemtype='https://schema.org/Question'>" + long + "<ul class='comments'><li itemscope"
        " itemtype='https://schema.org/Comment'><span itemprop='text'>a comment</span></li></ul></div></body>",
        "<body><p>t</p><div class='comments'><div itemscope itemtype='http://schema.org/Comment'><div itemprop='text'>"
        + long + "</div></div></div></body>",
        "<body><div class='social-media-embed'><blockquote class='twitter-tweet'><p>a tweet</p>&mdash; X</blockquote></div>"
        "<div class='social'><p>Follow</p></div></body>",
        "<body><p>a <span class='rollover'><a href='/p'>b</a><span class='rollover-block'><a href='/q'>c</a></span></span> d</p>"
        "<div><small class='tooltip'><a href='/r'>e</a></small></div><p><span class='tooltip'>f</span></p></body>",
        "<body><p>Shop</p><div style='display:none'><ul><li>" + "w " * 130 + "</li></ul></div><div hidden class='menu'><p>"
        + "m " * 300 + "</p></div><div aria-hidden='true'><p>tiny</p></div></body>",
        "<body><div class='skip'><a href='#m'>Skip</a></div><div class='skip-item'><h2>T</h2><p>p</p></div></body>",
        "<body>" + long + "<div><button aria-controls='c1'>Q</button></div><div id='c1' style='display:none'><p>a</p></div>"
        "<div id='c2' hidden><p>b</p></div><button aria-controls='c3'>D</button><div id='c3' role='dialog' hidden>d</div>"
        "<details><summary>S</summary><div aria-hidden='true'><p>e</p></div></details><h3><a aria-expanded='false'>T</a></h3>"
        "<div style='display:none'><p>f</p></div><ul><li class='s a'>" + long + "</li><li class='s' aria-hidden='true'>" + long
        + "</li><li class='s' aria-hidden='true'><p>g</p></li></ul></body>",
        # sections named like chrome (blocks._a_section): banners, widgets, a forum's replies as <article>s
        "<body><main><div class='banner'><h2>S</h2>" + long + "<div class='banner'><p>in</p></div></div><div class='banner'>"
        + long + "</div><div class='so-panel widget'>" + long + "</div><div class='review-widget'>" + long + "</div></main>"
        "<div class='banner'><h2>out</h2>" + long + "</div></body>",
        "<body><h1>Q</h1><article class='comment'>" + long + "<div class='comment'><p>c</p></div></article>"
        "<article><p>a</p><article class='comment'>" + long + "</article></article></body>",
        "<head><script type='application/ld+json'>{\"@type\": \"DiscussionForumPosting\"}</script></head><body>" + long
        + f"<div class='comments'>{thread}</div><noscript><div><p>copy</p></div></noscript></body>",
        "<body><aside><main><h1>T</h1><p>p</p><aside><p>in</p></aside></main></aside><aside><h1>A</h1></aside>"
        "<nav itemprop='articleBody'><p>n</p></nav></body>",
        # inline caption spans (blocks._span_captions): a photo box's, a card's credit beside its text
        "<body><div class='photo'><p><img src='/a.jpg'></p><span class='newsCaption'>c <span class='caption'>(AP)</span></span></div>"
        "<li><img src='/b.jpg'><h3>t</h3><span class='credit'>AP</span></li><p><span class='caption' hidden>x</span>y</p></body>",
    ]
    for html in pages:
        for depth in (512, 12, 2):
            assert differences(*walkers, LexborHTMLParser(html), depth) == [], html[:80]


def test_fuzz_seeds_and_their_mutations(walkers):
    sys.path.insert(0, str(ROOT))
    from bench.fuzz import mutate, seed_corpus

    for name, (kind, content) in seed_corpus().items():
        if kind != "html":
            continue
        for seed in range(25):
            data = content if seed == 0 else mutate(kind, content, random.Random(seed))
            tree = parse_html(decode_html(data, None), 512)
            assert differences(*walkers, tree) == [], (name, seed)


def _without_image_attrs(walked):
    """A walk's blocks as a walk not asked for images' attributes gives them (None for each)."""
    return dataclasses.replace(walked, images=[(b, None) for b, _ in walked.images])


@settings(max_examples=300, **FAST)
@given(body=st.lists(html_bodies, min_size=1, max_size=4).map("".join), junk=st.sampled_from(["", "\udcff", "\ufffd"]))
def test_a_walk_without_image_attributes_is_the_same_walk_with_none_for_them(walkers, body, junk):
    # BlockWalker(images=False) (the pipeline's when no algorithm reads images): the same blocks,
    # hashes (image sources included) and captions, natively and in Python, each image's
    # attributes None; ParsedPage.extracted then lists no images.
    tree = LexborHTMLParser(f"<html><body>{body}<img src='/{junk}x.png'></body></html>")
    full = walkers[1].walk(tree)
    for walker in (blocks.BlockWalker(images=False), blocks.BlockWalker(native=False, images=False)):
        assert walker.walk(tree) == _without_image_attrs(full)


# -- real pages --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cleanportaleval", "scrapinghub", "chinese_wce"])
def test_native_walk_is_the_python_walk_on_real_pages(walkers, name):
    if not (SHARED / "extraction").exists():
        pytest.skip(f"no extraction sets at {SHARED / 'extraction'}")
    sys.path.insert(0, str(ROOT / "bench"))
    from extraction import load_set

    pages = load_set(name, SHARED, 120)
    assert pages
    lean, lean_reference = blocks.BlockWalker(images=False), blocks.BlockWalker(native=False, images=False)
    for page in pages:
        decoded = decode_html(page["body"], None)
        for depth in (512, 12):
            assert differences(*walkers, parse_html(decoded, depth), depth) == [], (page["id"], depth)
        tree = parse_html(decoded, 512)
        assert lean.walk(tree) == lean_reference.walk(tree) == _without_image_attrs(walkers[1].walk(tree)), page["id"]


# -- the parts ---------------------------------------------------------------------------------

TAG_PIECES = ["<", "</", ">", "/>", "div", "DIV", "a", "p", "x1", ":", "-", "<!--", " ", "é", "中", "<b", "</b", "/", "<1", "\x00"]


@settings(max_examples=500, **FAST)
@given(text=st.lists(st.sampled_from(TAG_PIECES) | st.text(max_size=3), max_size=60).map("".join))
def test_native_depth_bound_is_the_numpy_one(text):
    import numpy as np

    from pagetwin.html import parse

    for data in (
        np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8),
        np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16),
    ):
        assert _walk.depth_bound(data) == parse._depth_bound_of_reference(data) == parse._depth_bound_of(data)


def _depth_test_pages() -> list[bytes]:
    """Fixture pages, real pages when the extraction sets are there, and a page nested deep."""
    pages = [p.read_bytes() for p in sorted((ROOT / "tests" / "fixtures").glob("**/*.html"))[:20]]
    if (SHARED / "extraction").exists():
        sys.path.insert(0, str(ROOT / "bench"))
        from extraction import load_set

        pages += [p["body"] for p in load_set("scrapinghub", SHARED, 60)]
    pages.append(b"<html><body>" + b"<div><span>" * 3000 + b"</span></div>" * 10 + b"<p>x</p></x></y>" * 50)
    return pages


def test_native_depth_bound_on_real_pages():
    import numpy as np

    from pagetwin.html import parse

    for body in _depth_test_pages():
        data = np.frombuffer(body, dtype=np.uint8)
        assert _walk.depth_bound(data) == parse._depth_bound_of_reference(data)


CUT_PIECES = TAG_PIECES + ["<br>", "<P>", "</p>", "<img/>", "<li>", "</li>", "<x-y-z-long-name-here>", "</X-Y-Z-LONG-NAME-HERE>",
                           "<abcdefghijklm>", "</abcdefghijklm>", "<abcdefghijkl>", "</abcdefghijklz>", "<div/>", "</div>", "😀"]


@settings(max_examples=1000, **FAST)
@given(text=st.lists(st.sampled_from(CUT_PIECES) | st.text(max_size=3), max_size=80).map("".join), max_depth=st.integers(0, 6))
def test_native_depth_cuts_is_the_python_scan(text, max_depth):
    import numpy as np

    from pagetwin.html import parse

    cut = parse._scan_depth(text, max_depth)[1]
    for data in (
        np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8),
        np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16),
    ):
        assert _walk.depth_cuts(data, max_depth, parse._FLAT) == cut


def test_native_depth_cuts_on_real_pages():
    import numpy as np

    from pagetwin.html import parse

    for body in _depth_test_pages():
        text = body.decode("utf-8", "replace")
        data = np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
        for max_depth in (8, 64, 512):
            assert _walk.depth_cuts(data, max_depth, parse._FLAT) == parse._scan_depth(text, max_depth)[1]


# Class and id names with and without what _class_facts looks for: chrome and popup words
# (whole and inside others), body hints split by "-" and "_", caption names, hiding classes,
# upper case, digits, str.strip's ASCII whitespace (\x1c-\x1f too) and non-ASCII characters.
_NAMING_PIECES = st.sampled_from(
    ["nav", "navy", "menu", "Sidebar", "comments", "tooltip", "rollover", "wrap", "entry-content", "bo", "dy", "-", "_", " ",
     "Body", "text", "caption", "Gallery", "accredit", "d-none", "sr-only", "d-lg-block", "12", "x", "flex", "mb-2", "\t",
     "\x1c", "\x0b", "é", "\u212a", "#", ".", "elementor-widget", "widget-type-", "Widget", "widgets", "comment", "commentlist",
     "container", "articleBody", "post_content", "StoryBody", "maincontent", "credit", "ac", "slideshow", "ad", "ads", "share",
     "social", "popup", "main", "widget-area", "a"]
)  # fmt: skip
_NAMING = st.lists(st.one_of(_NAMING_PIECES, st.text(st.characters(max_codepoint=127), max_size=4)), max_size=8).map("".join)


@settings(max_examples=1000, **FAST)
@given(tag=st.sampled_from(["div", "span", "h1", "my-box"]), cls=_NAMING, ident=_NAMING,
       itemprop=st.sampled_from(["", "articleBody", "headline", "name", "é"]))  # fmt: skip
def test_native_plain_facts_are_class_facts(walkers, tag, cls, ident, itemprop):
    chrome, hint, part, caption, hidden, popup = blocks._class_facts(tag, cls, ident, itemprop)
    assert blocks._class_facts_reference(tag, cls, ident, itemprop) == (chrome, hint, part, caption, hidden, popup)
    for made in (walkers[0].native.plain_facts, walkers[0].native.ascii_facts):
        facts = made(*(s.encode("utf-8") for s in (tag, cls, ident, itemprop)))
        if facts is not None:
            assert facts == (chrome, hint, part.encode("utf-8"), caption, hidden, popup)
            assert (cls + ident + itemprop).isascii()


def test_native_plain_facts_of_names_that_name_nothing(walkers):
    plain = walkers[0].native.plain_facts
    assert plain(b"div", b" mb-2 flex12 ", b"x1", b"") == (0, False, b"div.mb- flex#x", False, False, False)
    assert plain(b"p", b"", b"", b"") == (0, False, b"p", False, False, False)
    for named in (b"nav-bar", b"post_Body", b"wp-caption", b"d-none", b"my-tooltip"):
        assert plain(b"div", named, b"", b"") is None


def test_native_ascii_facts_of_names_that_name_something(walkers):
    # Names of chrome, comments, a body or a caption: made natively (on a miss of the memo), as
    # _class_facts makes them; a hiding class, a popup, a name not ASCII: by _class_facts.
    plain = walkers[0].native.ascii_facts
    assert plain(b"div", b" mb-2 flex12 ", b"x1", b"") == (0, False, b"div.mb- flex#x", False, False, False)
    assert plain(b"div", b"nav-bar", b"", b"") == (1, False, b"div.nav-bar#", False, False, False)
    assert plain(b"div", b"comment-list", b"c", b"") == (2, False, b"div.comment-list#c", False, False, False)
    assert plain(b"div", b"elementor-widget widget", b"", b"") == (0, False, b"div.elementor-widget widget#", False, False, False)
    assert plain(b"div", b"nav wrapper", b"", b"") == (0, False, b"div.nav wrapper#", False, False, False)
    assert plain(b"div", b"post_Body", b"", b"") == (0, True, b"div.post_Body#", False, False, False)
    assert plain(b"div", b"wp-caption", b"accredited", b"") == (0, False, b"div.wp-caption#accredited", True, False, False)
    assert plain(b"div", b"x", b"accredited", b"")[3] is False and plain(b"div", b"x", b"credit", b"")[3] is True
    for named in (b"d-none", b"my-tooltip", b"caf\xc3\xa9"):  # (a hiding class, a popup, not ASCII: _class_facts)
        assert plain(b"div", named, b"", b"") is None


@settings(max_examples=300, **FAST)
@given(data=st.binary(max_size=200))
def test_xxh64_is_xxhash(data):
    assert _walk.xxh64_intdigest(data) == xxhash.xxh64_intdigest(data)


def test_python_walk_runs_with_one_warning_when_the_native_walk_does_not_fit(monkeypatch, caplog):
    import selectolax

    tree = LexborHTMLParser("<body><div class='post'><p>Some text 12</p><img src='/a.png'></div></body>")
    expected = blocks.BlockWalker(native=False).walk(tree)
    monkeypatch.setattr(selectolax, "__version__", "0.0.1")
    blocks.native_status.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="pagetwin.html.blocks"):
            first, second = blocks.BlockWalker(), blocks.BlockWalker()
        assert first.native is None and second.native is None
        assert first.walk(tree) == expected
        warnings = [r for r in caplog.records if "native block walk is off" in r.getMessage()]
        assert len(warnings) == 1 and "selectolax 0.0.1 is installed" in warnings[0].getMessage()
    finally:
        monkeypatch.undo()
        blocks.native_status.cache_clear()
    assert blocks.native_status() is None and blocks.BlockWalker().native is not None


def test_native_walk_declines_what_it_does_not_take(walkers):
    native, _ = walkers
    with pytest.raises(_walk.Unsupported):
        native.native.walk("not a node", 512, False, blocks.Blocks(), [], [], frozenset())


# -- the native first (blocks._FIRST_SELECTORS) ----------------------------------------------------

FIRST_PIECES = [
    "<P>x</P>", "<p itemprop='text'>y</p>", "<H1>t</H1>", "<main>m</main>", "<div ITEMPROP>z</div>", "<div itemprop=''></div>",
    "<svg><p>s</p><main>n</main><g itemprop='x'/></svg>", "<math><mi itemprop=v>v</mi></math>", "<template><p>t</p><h1>h</h1></template>",
    "<table><tr><td><p>c</p></td></tr></table>", "<noscript><div>d</div></noscript>", "<x-p itemprop2='a'>e</x-p>", "<o:p>o</o:p>",
    "<blockquote><pre>q</pre></blockquote>", "<section data-itemprop='1'><article>a</article></section>", "<ul><li>l</li></ul>",
    "<div itemprop='articleBody'>b</div>", "<div itemprop='ARTICLEBODY'>B</div>", "<p itemprop='articlebody'>c</p>",
    "<div itemprop='articleBody x'>d</div>", "<nav><main>m</main></nav>", "<aside itemprop=articleBody>a</aside>",
]  # fmt: skip
first_bodies = st.recursive(st.sampled_from(FIRST_PIECES) | words, element, max_leaves=20)


def _same_firsts(native, tree) -> list:
    """(node, selector) pairs where the native first differs from css_first, over every element."""
    out = []
    for node in tree.root.traverse(include_text=False):
        for selector in blocks._FIRST_SELECTORS:
            a, b = native.first(node, selector), node.css_first(selector)
            if (a.mem_id if a is not None else None) != (b.mem_id if b is not None else None):
                out.append((node.tag, selector))
    return out


@settings(max_examples=300, **FAST)
@given(body=st.lists(first_bodies, min_size=1, max_size=4).map("".join))
def test_native_first_is_css_first_on_generated_pages(walkers, body):
    tree = LexborHTMLParser(f"<html><head><title>t</title></head><body>{body}</body></html>")
    assert _same_firsts(walkers[0].native, tree) == []


def _real_trees(name: str, count: int):
    """(id, parsed tree) of the first ``count`` pages of an extraction set; skips without the shared data."""
    if not (SHARED / "extraction").exists():
        pytest.skip(f"no extraction sets at {SHARED / 'extraction'}")
    sys.path.insert(0, str(ROOT / "bench"))
    from extraction import load_set

    for page in load_set(name, SHARED, count):
        yield page["id"], parse_html(decode_html(page["body"], None))


@pytest.mark.parametrize("name", ["cleanportaleval", "scrapinghub", "chinese_wce"])
def test_native_first_is_css_first_on_real_pages(walkers, name):
    for page_id, tree in _real_trees(name, 25):
        assert _same_firsts(walkers[0].native, tree) == [], page_id


@pytest.mark.parametrize("name", ["cleanportaleval", "scrapinghub", "chinese_wce"])
def test_parsed_page_bytes_of_real_pages_are_the_references_and_read_back(walkers, name):
    # Pass 1's bytes of a real page (blocks.ParsedPage.to_bytes): the native packer's are the
    # reference's, both readers read them alike, and they give the page back exactly.
    from pagetwin.html.noise import parse_page

    for page_id, tree in _real_trees(name, 25):
        page = parse_page(tree, walker=walkers[0])
        b = page.blocks
        parts = ((page.title, page.description, page.replaced, page.flattened, page.refused_charsets),
                 (b.tag, b.parent, b.sig, b.hash, b.text, b.link, b.size, b.content, b.in_article, b.hint, b.caption,
                  *page.page_level()), b.images)  # fmt: skip
        data = page.to_bytes()
        assert data[0] == blocks._PACKED_PAGE and data == blocks._packed_page_reference(*parts), page_id
        assert _walk.unpacked_page(data) == blocks._unpacked_page_reference(data) == parts, page_id
        assert blocks.ParsedPage.from_bytes(data) == page, page_id


def test_native_first_answers_only_its_selectors(walkers):
    node = LexborHTMLParser("<p>x</p>").css_first("p")
    with pytest.raises(KeyError):
        walkers[0].native.first(node, "p.x")
    with pytest.raises(ValueError):
        blocks._simple_selector("p.x, h1")


def _same_counts(native, tree) -> list:
    """The elements where the native ink, visible ink or paragraph count differ from blocks.py's
    Python ones (a native answer of -1 or None: a text that is not UTF-8, left to Python)."""
    out = []
    for node in tree.root.traverse(include_text=False):
        ink = native.ink(node)
        if ink != -1 and ink != blocks._ink(node.text(deep=True)):
            out.append((node.tag, "ink"))
        visible = native.visible_ink(node, blocks._CODE_TAG_IDS)
        if visible != -1 and visible != blocks._visible_ink(node):
            out.append((node.tag, "visible ink"))
        for many, least in ((1, blocks.PARAGRAPH_CHARS), (3, blocks.PARAGRAPH_CHARS), (1, blocks.SECTION_CHARS), (2, 20)):
            found = native.paragraphs(node, many, least, blocks._P_ID, blocks._A_ID)
            if found is not None and found != blocks._paragraphs(node, many, least):
                out.append((node.tag, "paragraphs", many, least))
    return out


@settings(max_examples=300, **FAST)
@given(body=st.lists(html_bodies, min_size=1, max_size=4).map("".join))
def test_native_ink_and_paragraphs_are_python_ones_on_generated_pages(walkers, body):
    tree = LexborHTMLParser(f"<html><head><title>t</title><script>var x = 1;</script></head><body>{body}</body></html>")
    assert _same_counts(walkers[0].native, tree) == []
    for node in tree.root.traverse(include_text=False):  # (text of str pages is UTF-8: always counted in C)
        assert native_ink_known(walkers[0].native, node)


def native_ink_known(native, node) -> bool:
    return native.ink(node) >= 0 and native.paragraphs(node, 1, 1, blocks._P_ID, blocks._A_ID) is not None


@settings(max_examples=150, **FAST)
@given(body=html_bodies, junk=st.lists(st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\xc3", b"\xe2\x82", b"\xf4\x90\x80\x80", b"\x00"]), max_size=6), seed=st.integers(0, 1000))
def test_native_ink_and_paragraphs_on_bytes_that_are_not_utf8(walkers, body, junk, seed):
    data = bytearray(f"<html><body>{body}</body></html>".encode())
    rng = random.Random(seed)
    for piece in junk:
        at = rng.randrange(len(data) + 1)
        data[at:at] = piece
    tree = LexborHTMLParser(bytes(data))
    assert _same_counts(walkers[0].native, tree) == []


@pytest.mark.parametrize("name", ["cleanportaleval", "scrapinghub", "chinese_wce"])
def test_native_ink_and_paragraphs_on_real_pages(walkers, name):
    for page_id, tree in _real_trees(name, 10):
        assert _same_counts(walkers[0].native, tree) == [], page_id
