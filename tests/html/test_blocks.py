from hypothesis import given, settings as hsettings, strategies as st

from pagetwin.html import blocks
from pagetwin.html.blocks import text_size, walk
from pagetwin.html.parse import parse_html


def blocks_of(html):
    return walk(parse_html(html))


def by_text(blocks, needle):
    return next(b for b, t in enumerate(blocks.text) if needle in t)


def test_blocks_own_text_link_chars_and_parents():
    b = blocks_of("<div id='a'>Intro <a href='/x'>linked words</a><p>Para <b>bold</b> text</p> tail</div>")
    d, p = by_text(b, "Intro"), by_text(b, "Para")
    assert b.text[p] == "Para bold text"
    assert b.parent[p] == d and b.tag[d] == "div"
    assert b.link[d] == len("linked words") and b.link[p] == 0
    assert b.text[d] == "Intro linked words tail"


def test_equal_subtrees_hash_equal_and_digits_are_folded():
    b = blocks_of(
        "<div><ul class='m'><li>Home</li><li>News</li></ul></div>"
        "<section><ul class='other'><li>Home</li><li>News</li></ul></section>"
        "<p>Copyright 2019 Example</p><p>Copyright 2024 Example</p><p>Copyright Example</p>"
    )
    uls = [i for i, t in enumerate(b.tag) if t == "ul"]
    assert b.hash[uls[0]] == b.hash[uls[1]]  # class is structure, not content
    assert b.sig[uls[0]] != b.sig[uls[1]]  # ... but it is part of the structural signature
    c = [i for i, t in enumerate(b.text) if t.startswith("Copyright")]
    assert b.hash[c[0]] == b.hash[c[1]] != b.hash[c[2]]


def test_signature_ignores_text_and_digits_in_class_names():
    one = blocks_of("<div class='post-123'><p>first text</p></div>")
    two = blocks_of("<div class='post-456'><p>other words entirely</p></div>")
    assert one.sig[by_text(one, "first")] == two.sig[by_text(two, "other")]
    assert one.hash[by_text(one, "first")] != two.hash[by_text(two, "other")]


def test_a_change_deep_inside_changes_every_enclosing_hash():
    a = blocks_of("<div><div><p>same</p><p>one</p></div></div>")
    b = blocks_of("<div><div><p>same</p><p>two</p></div></div>")
    assert a.hash[by_text(a, "same")] == b.hash[by_text(b, "same")]
    for i in range(3):  # body, div, div
        assert a.tag[i] == b.tag[i] and a.hash[i] != b.hash[i]


def test_images_count_in_the_hash_and_are_listed():
    a = blocks_of("<div><img src='/logo.png' alt='Logo'></div>")
    b = blocks_of("<div><img src='/other.png' alt='Logo'></div>")
    assert a.hash[1] != b.hash[1] and a.content[1]
    assert a.images == [(1, {"src": "/logo.png", "alt": "Logo"})]


def test_walk_does_not_modify_the_tree():
    html = "<html><head><title>T</title></head><body><script>x()</script><div hidden>h</div><p>text</p></body></html>"
    tree = parse_html(html)
    before = tree.html
    walk(tree)
    assert tree.html == before


def test_text_size_counts_cjk_wider():
    assert text_size("abc") == 3
    assert text_size("中文") == 6
    assert text_size("é") == 1


@hsettings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["<div>", "</div>", "<p>", "<ul><li>", "</li></ul>", "<a href=x>", "</a>", "<b>", "</b>", "word ", "2024 ", "<br>", "<td>"]), max_size=60))
def test_walk_is_deterministic_and_parents_come_first(parts):
    html = "".join(parts)
    a, b = blocks_of(html), blocks_of(html)
    assert a.hash == b.hash and a.sig == b.sig and a.text == b.text
    assert all(p < i for i, p in enumerate(a.parent))
    assert all(0 <= link <= len(t) for link, t in zip(a.link, a.text))


def test_digits_fold_in_ascii_and_unicode_text():
    b = blocks_of(
        "<p>Page 1 of 22</p><p>Page 7 of 9</p><p>Page 7 of 9 2</p>"
        "<p>版权 ２０１９ 中文</p><p>版权 ２０２４ 中文</p><p>版权 中文</p>"
    )
    h = {t: b.hash[i] for i, t in enumerate(b.text) if t}
    assert h["Page 1 of 22"] == h["Page 7 of 9"] != h["Page 7 of 9 2"]
    assert h["版权 ２０１９ 中文"] == h["版权 ２０２４ 中文"] != h["版权 中文"]


@hsettings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab 1中文，😀\u3000é", max_size=12).filter(bool), min_size=1, max_size=8))
def test_text_sizes_of_many_texts_equal_text_size_of_each(texts):
    from pagetwin.html.blocks import _text_sizes

    assert _text_sizes(texts) == [text_size(t) for t in texts]


def test_custom_elements_are_inline_and_known_tags_keep_their_rules():
    from selectolax.lexbor import LexborHTMLParser

    from pagetwin.html.blocks import BLOCK_TAGS, SKIP_TAGS, _kind_of

    b = blocks_of("<p>one <my-widget>two</my-widget> <o:p>three</o:p></p><my-box><p>four</p></my-box>")
    assert b.text[by_text(b, "one")] == "one two three"
    assert by_text(b, "four") != by_text(b, "one")
    # The walk reads a node's rule through its tag id: the same rule as its name's.
    names = sorted(BLOCK_TAGS | SKIP_TAGS | {"a", "img", "span", "td", "br", "b", "picture"})
    tree = LexborHTMLParser("")
    for name in names:
        node = tree.create_node(name)
        assert node.tag == name and _kind_of(node.tag) == _kind_of(name)


def test_every_digit_besides_0_to_9_is_found_in_utf8_bytes():
    # The walk folds the digits of mostly-ASCII text in its UTF-8 bytes when these two searches
    # find nothing; they must find every other character \d matches.
    import re

    from pagetwin.html.blocks import _FULLWIDTH_DIGIT, _OTHER_DIGIT_LEAD

    digit = re.compile(r"\d")
    missed = [
        hex(code)
        for code in range(0x80, 0x110000)
        if not 0xD800 <= code <= 0xDFFF
        and digit.match(chr(code))
        and _OTHER_DIGIT_LEAD(chr(code).encode()) is None
        and _FULLWIDTH_DIGIT(chr(code).encode()) is None
    ]
    assert missed == []
    # ... and text sized without the CJK count must hold no CJK character.
    from pagetwin.html.blocks import _CJK, _MAYBE_CJK, _MAYBE_CJK_E2

    cjk = [chr(c).encode() for c in range(0x2E80, 0x10000) if not 0xD800 <= c <= 0xDFFF and _CJK.match(chr(c))]
    assert all(_MAYBE_CJK(e) or _MAYBE_CJK_E2(e) for e in cjk)
    b = blocks_of("<p>naïve ١٢ x</p><p>naïve ٣ x</p><p>naïve 12 x</p><p>naïve 3 x</p><p>naïve x</p>")
    h = {t: b.hash[i] for i, t in enumerate(b.text) if t}
    assert h["naïve ١٢ x"] == h["naïve ٣ x"] == h["naïve 12 x"] == h["naïve 3 x"] != h["naïve x"]


def test_chrome_named_boxes_are_kept_only_around_the_article():
    b = blocks_of(
        "<div class='sidebar'><p>side one</p></div>"
        "<div class='sidebar'><div itemprop='author'><p>side two</p></div></div>"  # itemprop, not the body
        "<div class='sidebar'><div itemprop='articleBody'><p>body text</p></div></div>"
        "<div class='share'><h1>The title</h1></div>"
    )
    texts = [t for t in b.text if t]
    assert "body text" in texts and "The title" in texts
    assert "side one" not in texts and "side two" not in texts


def _paragraphs(topic, n):
    return "".join(f"<p>{topic} paragraph {i}: " + "a sentence of plain prose that says something. " * 4 + "</p>" for i in range(n))


def test_a_chrome_named_box_that_holds_the_page_is_a_wrapper():
    # HubSpot's "widget-span" around the whole page body: three paragraphs of content or more
    # and more text than the rest of the page make it a wrapper; a sidebar with less text than
    # the rest, a cookie dialog (never a wrapper) and a box of short lines stay chrome.
    page = (
        "<div class='menu'><a href='/'>Home</a> <a href='/a'>About</a></div>"
        f"<div class='span12 widget-span widget-type-cell'><h2>Services</h2>{_paragraphs('Body', 4)}</div>"
        "<div class='sidebar'><p>side note</p></div>"
    )
    texts = [t for t in blocks_of(page).text if t]
    assert any(t.startswith("Body paragraph 3") for t in texts) and "side note" not in texts and "Home About" not in texts
    small = f"<div class='widget'>{_paragraphs('Side', 3)}</div><article>{_paragraphs('Post', 8)}</article>"
    assert not any(t.startswith("Side paragraph") for t in blocks_of(small).text)
    dialog = f"<div id='onetrust-consent-sdk' class='banner'>{_paragraphs('Cookie', 6)}</div><ul><li>Card one</li><li>Card two</li></ul>"
    assert not any(t.startswith("Cookie paragraph") for t in blocks_of(dialog).text)
    short = "<div class='widget'>" + "<p>a short line</p>" * 40 + "</div><p>rest</p>"
    assert "a short line" not in blocks_of(short).text


def test_boxes_inside_a_wrapper_named_by_its_own_chrome_words_are_its_sections():
    # A page builder's nested "widget" boxes: the outer one holds the h1 (a wrapper), the
    # sections inside it are named "widget" too; a "widget nav" inside it is still chrome, and so
    # is a "widget" box outside it.
    page = (
        "<div class='widget-span'><div class='widget-span hero'><h1>Title</h1></div>"
        "<div class='widget-span'><p>Section text of the page</p></div>"
        "<div class='widget nav'><a href='/'>Home</a></div></div>"
        "<div class='widget'><p>Outside box</p></div>"
    )
    texts = [t for t in blocks_of(page).text if t]
    assert "Title" in texts and "Section text of the page" in texts
    assert "Home" not in texts and "Outside box" not in texts


def test_one_walker_for_many_pages_walks_each_as_a_fresh_one_does():
    # The memos (tag rules, block names, class facts, signatures) depend on names only: a walker
    # that has seen other pages gives every page the blocks a new walker gives it.
    import random

    from pagetwin.html.blocks import BlockWalker
    from tests.fixtures.sites import site_pages

    walker, python = BlockWalker(), BlockWalker(native=False)  # (native when it is built)
    pages = [html for _, html, _ in site_pages(6, seed=3)]
    pages.append("<div class='x'><my-widget><p>Custom <o:p>tags</o:p></p></my-widget></div>" * 3)
    random.Random(1).shuffle(pages)
    for html in pages + pages:
        fresh = BlockWalker().walk(parse_html(html))
        assert walker.walk(parse_html(html)) == walk(parse_html(html)) == fresh == python.walk(parse_html(html))
    assert python.kinds and python.block_names and python.class_memo and python.sig_memo


def test_the_walker_memos_stay_bounded(monkeypatch):
    from pagetwin.html import blocks
    from pagetwin.html.blocks import BlockWalker

    walker = BlockWalker(native=False)
    html = "".join(f"<div class='nav c{i}' id='i{i}'><p>x</p></div>" for i in range(3000))
    for _ in range(3):
        walker.walk(parse_html(html))
    assert len(walker.class_memo) <= blocks._CLASS_MEMO_SIZE + 1
    assert len(walker.sig_memo) <= blocks._SIG_MEMO_SIZE + 1
    if blocks.native_status() is None:  # the native walk's memo of class facts, bounded at 100
        monkeypatch.setattr(blocks, "_CLASS_MEMO_SIZE", 100)
        native = BlockWalker()
        assert native.walk(parse_html(html)) == walker.walk(parse_html(html))
        assert 0 < native.native.facts_memo_entries <= 100


def test_the_html_modules_keep_no_mutable_state_between_calls():
    # Module-level caches coupled calls (issue 12): every module-level dict, list or set of the
    # html package is a constant table, never written after import.
    import importlib

    for name in ("blocks", "noise", "parse", "templates", "images"):
        module = importlib.import_module(f"pagetwin.html.{name}")
        mutable = [k for k, v in vars(module).items() if isinstance(v, (dict, list, set, bytearray)) and not k.startswith("__")]
        assert mutable == [] or all(k.isupper() or k.lstrip("_").isupper() for k in mutable), (name, mutable)
    # and a run of pages leaves them as they were
    from pagetwin.html import blocks, parse

    before = {k: repr(v) for m in (blocks, parse) for k, v in vars(m).items() if isinstance(v, (dict, list, set))}
    walk(parse_html(parse.decode_html(b"<div class='a'><p>one</p></div>")))
    after = {k: repr(v) for m in (blocks, parse) for k, v in vars(m).items() if isinstance(v, (dict, list, set))}
    assert before == after


def test_parsed_page_wire_format_round_trips_with_its_page_level_decision():
    import pytest

    from pagetwin.html.blocks import Blocks, ParsedPage
    from pagetwin.html.noise import page_keep, parse_page

    html = "<h1>Title</h1><article><p>" + "Words of the article. " * 20 + "</p><p>short</p></article>"
    parsed = parse_page(parse_html(html), replaced=2, flattened=True, refused_charsets=1)
    assert parsed.page_level() == page_keep(parsed.blocks)
    back = ParsedPage.from_bytes(parsed.to_bytes())
    assert back == parsed and back.page_level() == parsed.page_level() and back.refused_charsets == 1
    assert back.extracted(*back.page_level()) == parsed.extracted(*parsed.page_level())
    with pytest.raises(ValueError):
        ParsedPage(Blocks()).page_level()  # made by hand without its decision


def test_noscript_copy_of_the_page_is_read_only_when_it_holds_most_of_the_text():
    # A crawler copy (Discourse): the visible body is a splash, the posts are in <noscript>.
    splash = "<body><div id='splash'>Loading</div><noscript><div><p>First post of the thread here</p>" \
             "<p>A reply to it</p></div></noscript></body>"
    b = blocks_of(splash)
    assert "First post of the thread here" in b.text and "A reply to it" in b.text
    # A noscript repeating text the page shows anyway, or a fallback image, is not read.
    repeat = "<body><div><p>The article text, shown to everyone, is long enough</p></div>" \
             "<noscript><div><p>The article text</p></div></noscript><noscript><img src='a.png'></noscript></body>"
    b = blocks_of(repeat)
    assert b.text.count("The article text") == 0 and not b.images


def test_comments_are_the_page_only_when_the_page_has_no_post_of_its_own():
    post = "I moved my build to the new resolver and now the lookups of my containers fail at random times."
    forum = f"<body><h1>Resolver problem</h1><div id='comments'><article><p>{post}</p></article>" \
            "<article><p>Which version do you run?</p></article></div></body>"
    b = blocks_of(forum)
    assert post in b.text and "Which version do you run?" in b.text
    article = " ".join([post] * 3)
    blog = f"<body><h1>Open thread</h1><div class='entry'><p>{article}</p></div>" \
           f"<div class='comments'><p>{post} {post}</p><p>{post} {post}</p></div></body>"
    b = blocks_of(blog)
    assert article in b.text and f"{post} {post}" not in b.text


def test_boxes_named_as_captions_or_galleries_are_marked():
    b = blocks_of(
        "<div class='wp-caption'><p class='wp-caption-text'>a caption</p></div><div id='imageEmbedCaption'>two</div>"
        "<div class='hst-resgallery'><p>three</p></div><div class='captain'><p>not one</p></div>"
    )
    assert {t for t, c in zip(b.text, b.caption) if c and t} == {"a caption", "two"}
    # The box named, not its children (noise._named_captions reads a named box's subtree).
    gallery = by_text(b, "three")
    assert b.caption[b.parent[gallery]] and not b.caption[gallery]
    assert sum(b.caption) == 4 and not b.caption[by_text(b, "not one")]


# Five paragraphs the page-level rules keep as an article's body (the caption tests put a box beside them).
_STORY = "".join(
    f"<p>Paragraph {i} of the story, " + "long enough to be read as content on its own by the rules. " * 3 + "</p>" for i in range(5)
)


def test_photo_credits_are_marked_as_captions_are():
    # A credit under a photo ("Photo: AP", "(Image: GETTY)") is named like one ("image-credit",
    # CNBC's "InlineImage-imageEmbedCredit"): noise.page_keep drops it inside an article, as a
    # caption. An "accreditation" box is not a credit.
    b = blocks_of(
        "<div class='image-meta'><div class='image-credit'>Al Goldis, AP</div></div>"
        "<div class='InlineImage-imageEmbedCredit'>Natalie Naccache | Bloomberg</div><div class='credits'>A. Schwartz</div>"
        "<div class='content-header__accreditation'><p>The standfirst of the story</p></div>"
    )
    assert {t for t, c in zip(b.text, b.caption) if c and t} == {"Al Goldis, AP", "Natalie Naccache | Bloomberg", "A. Schwartz"}
    from pagetwin.html.noise import extract

    page = f"<body><article><h1>Title</h1><img src='/a.jpg'><div class='image-credit'>Photo: Jane Doe, AP</div>{_STORY}</article></body>"
    text = extract(parse_html(page)).text
    assert "Paragraph 4" in text and "Jane Doe" not in text


def test_a_photo_box_whose_text_is_an_inline_caption_span_is_a_caption():
    # express.co.uk: <div class="photo"><p><picture>...</p><span class="newsCaption">...</span></div>.
    # The box is marked when its text is mostly the span's, it holds an image and its child
    # blocks no text; a card with a credit span beside its title and summary is not.
    b = blocks_of(
        "<div class='photo'><p><img src='/a.jpg'></p><span class='newsCaption'>Protesters in the street "
        "<span class='caption'>(Image: GETTY)</span></span></div>"
        "<li class='card'><img src='/b.jpg'><h3>A question</h3><p>Its answer</p><span class='card__credit'>Photo: AP</span></li>"
        "<div class='rating'><span class='rating__caption'>Rated 5.0 out of 5 stars</span></div>"
        "<div class='figure'><img src='/c.jpg'>A long sentence that says what the photo shows <span class='credit'>AP</span></div>"
        "<figure><img src='/d.jpg'><small class='img-caption'>A studio</small></figure>"
    )
    marked = {t for t, c in zip(b.text, b.caption) if c and t}
    assert marked == {"Protesters in the street (Image: GETTY)"}
    from pagetwin.html.noise import extract

    page = (f"<body><article><h1>Title</h1>{_STORY}<div class='photo'><p><img src='/a.jpg'></p><span class='newsCaption'>"
            f"Police at the campus</span></div>{_STORY}</article></body>")
    text = extract(parse_html(page)).text
    assert "Paragraph 4" in text and "Police at the campus" not in text


def test_a_post_embedded_in_a_social_named_box_is_walked_the_box_of_share_buttons_is_not():
    # nj.com quotes tweets in <div class="social-media-embed"><blockquote class="twitter-tweet">:
    # the gold text keeps them. A "social" box of links, or one that is also a share box, stays chrome.
    b = blocks_of(
        "<div class='social-media-embed'><blockquote class='twitter-tweet'><p>the quoted tweet</p>"
        "&mdash; A Name (@name) <a href='/t'>November 18, 2019</a></blockquote></div>"
        "<div class='social'><p>Follow us</p><a href='/f'>Facebook</a></div>"
        "<div class='social share'><blockquote class='twitter-tweet'><p>a share box</p></blockquote></div>"
    )
    texts = [t for t in b.text if t]
    assert "the quoted tweet" in texts and any("@name" in t for t in texts)
    assert "Follow us" not in texts and "a share box" not in texts


def test_a_hover_card_of_links_inside_a_paragraph_is_left_out():
    # thehill: <span class="rollover-people"><a>Ilhan Omar</a><span class="rollover-people-block">
    # (a photo, the name again, three headlines)</span></span> inside the sentence, shown on hover.
    b = blocks_of(
        "<p>A man threatened Rep. <span class='rollover-people'><a href='/p'>Ilhan Omar</a><span class='rollover-people-block'>"
        "<a href='/p'>Ilhan Omar</a><a href='/s1'>Another story</a></span></span> (D-Minn.), prosecutors said.</p>"
        "<p>We beat the <span class='term'><dfn>competition</dfn><span class='term-tooltip'>Businesses know who "
        "their competitors are. <a href='/glossary'>More</a></span></span> with insights.</p>"
        # A tooltip that is an icon's only label, a popover's trigger, a Tailwind group around both,
        # one without links, one outside a paragraph: text.
        "<p><img src='/i.png'><span class='icon-tooltip-text'>American made</span></p>"
        "<p><b>x</b><span class='popover-trigger'><a href='/x'>Fire pits</a></span></p>"
        "<p><b>y</b><span class='group/tooltip'><a href='/w'>Web Application Firewall</a></span></p>"
        "<p><b>z</b><span class='tooltip'>a plain note</span></p>"
        "<div><b>Results</b><span class='tooltip'>Ads are <a href='/l'>ranked</a> by bid</span></div>"
    )
    texts = [t for t in b.text if t]
    assert texts == [
        "A man threatened Rep. Ilhan Omar (D-Minn.), prosecutors said.", "We beat the competition with insights.",
        "American made", "xFire pits", "yWeb Application Firewall", "za plain note", "ResultsAds are ranked by bid",
    ]


def test_a_page_that_shows_nothing_is_read_from_its_hidden_boxes_that_hold_it():
    # eBay hides its sections with display:none until its scripts run; a geeksforgeeks page has
    # its article in a hidden div. When the walk gives next to nothing (blocks.SHOWN_WORDS), the
    # hidden boxes of HIDDEN_PAGE_WORDS words and more are walked, not hidden chrome.
    words = " ".join(f"word{i}" for i in range(blocks.HIDDEN_PAGE_WORDS + 20))
    page = (f"<body><p>Shop</p><div style='display:none'><h2>Items</h2><ul><li>{words}</li></ul></div>"
            f"<div hidden class='footer'><p>{words} footer</p></div><div hidden><p>a small box</p></div></body>")
    texts = [t for t in blocks_of(page).text if t]
    assert texts == ["Shop", "Items", words]
    # A page that shows enough of its own keeps its hidden boxes hidden.
    shown = " ".join(f"seen{i}" for i in range(blocks.SHOWN_WORDS))
    texts = [t for t in blocks_of(page.replace("<p>Shop</p>", f"<p>{shown}</p>")).text if t]
    assert texts == [shown]


def test_a_section_named_skip_that_holds_paragraphs_is_content_a_skip_link_is_not():
    # netgear names each topic of its article "skip-item" (the target of its table of contents).
    b = blocks_of(
        "<div class='skip-link'><a href='#main'>Skip to content</a></div>"
        "<div class='skip-item' id='topic1'><h2>What is mesh WiFi?</h2><p>Mesh networks are a type of network.</p></div>"
    )
    texts = [t for t in b.text if t]
    assert texts == ["What is mesh WiFi?", "Mesh networks are a type of network."]


def test_banners_and_widgets_inside_the_main_that_hold_paragraphs_are_its_sections():
    # Flatsome builds a service page of <div class="banner"> sections, SiteOrigin of "so-panel
    # widget" boxes: inside the <main> a banner with a heading and a paragraph of content, and a
    # widget with a paragraph, are sections; a promo banner of short lines, a reviews widget, and
    # banners and widgets outside the <main> (a sidebar's) stay chrome.
    prose = "Rent commercial gym equipment for a film set or a convention booth, delivered and set up. " * 3
    page = (
        f"<main><div class='banner has-hover'><div class='banner-inner'><h2>Rentals</h2><p>{prose}</p></div></div>"
        "<div class='banner'><h3>Spring sale</h3><p>Use code SPRING.</p></div>"
        f"<div class='so-panel widget widget_sow-editor'><p>Panel {prose}</p></div>"
        f"<div class='jdgm-widget jdgm-review-widget'><p>Review {prose}</p></div></main>"
        f"<div class='widget'><p>Sidebar {prose}</p></div><div class='banner'><h2>Out</h2><p>Banner {prose}</p></div>"
    )
    texts = [t for t in blocks_of(page).text if t]
    assert texts == ["Rentals", prose.strip(), f"Panel {prose.strip()}"]
    # CivicPlus: a "widget editor" box with a shorter paragraph, in a role="main" box.
    line = "The building department promotes public safety by enforcing the building standards and codes adopted by the city council."
    civic = f"<div role='main'><div class='widget editor'><h2>Department</h2><p>{line}</p></div></div><div class='widget'><p>{line}</p></div>"
    assert [t for t in blocks_of(civic).text if t] == ["Department", line]


def test_a_comment_named_article_outside_any_article_is_a_post_a_comment_inside_one_is_held_back():
    # wallstreetoasis's forum thread: each reply is an <article class="js-comment"> of its own
    # (HTML nests a comment's <article> in the one it is about), with its text in a "comment" box.
    reply = "I went from banking to a consulting firm and the hours are better, the work is more varied."
    thread = (
        f"<h1>Is consulting worth it?</h1><p>{reply} My question.</p>"
        f"<article class='js-comment'><div class='comment'><p>{reply}</p></div></article>"
    )
    assert reply in blocks_of(thread).text
    post = f"<article><h1>A post</h1><p>{reply} {reply}</p><article class='comment'><p>A reply to the post.</p></article></article>"
    assert "A reply to the post." not in blocks_of(post).text


def test_the_replies_of_a_page_that_declares_itself_a_forum_thread_are_walked():
    # Vanilla and Invision forums keep their replies in boxes named as comments; the page
    # says what it is with schema.org's DiscussionForumPosting (microdata or JSON-LD). The
    # same page without it is a post with comments under it.
    post = "Higher Logic has ended the open source edition, and the community forum closes next month."
    reply = "Really sad, but I think we all saw it coming; thanks for the years of work on it."
    thread = f"<h1>Vanilla open source</h1><div class='post'><p>{post}</p></div><div class='DataBox-Comments'><p>{reply}</p></div>"
    assert reply not in blocks_of(f"<body>{thread}</body>").text
    for mark in (
        "<script type='application/ld+json'>{\"@context\": \"https://schema.org\", \"@type\": \"DiscussionForumPosting\"}</script>",
        "<script type='application/ld+json'>{\"@type\": [\"WebPage\", \"DiscussionForumPosting\"]}</script>",
    ):
        assert reply in blocks_of(f"<head>{mark}</head><body>{thread}</body>").text
    microdata = f"<body><div itemscope itemtype='https://schema.org/DiscussionForumPosting'>{thread}</div></body>"
    assert reply in blocks_of(microdata).text
    other = "<head><script type='application/ld+json'>{\"@type\": \"BlogPosting\"}</script></head>"
    assert reply not in blocks_of(f"{other}<body>{thread}</body>").text


def test_an_aside_that_holds_the_pages_main_wraps_the_page_other_asides_are_chrome():
    # fermyon puts its whole page in <aside class="announcement-banner">; sidebars title their
    # widgets with h1s, which does not make them the page.
    b = blocks_of(
        "<aside class='announcement-banner'><main><h1>Startup lessons</h1><p>The story.</p></main></aside>"
        "<aside class='sidebar'><h1>Archives</h1><p>November</p></aside><nav><p>Home</p></nav>"
    )
    assert [t for t in b.text if t] == ["Startup lessons", "The story."]


def test_hidden_panels_of_tabs_and_accordions_are_walked_other_hidden_boxes_are_not():
    b = blocks_of(
        "<div role='tablist'><a>Python</a><a>Node</a></div><div role='tabpanel'><p>python steps</p></div>"
        "<div role='tabpanel' hidden><p>node steps</p></div><div class='accordion-item__panel' aria-hidden='true'>"
        "<p>an answer</p></div><section class='faq-answer' style='display:none'><p>another answer</p></section>"
        "<div hidden><p>gone</p></div><div class='tab-pane menu' hidden><p>a menu</p></div>"
        "<div class='panel' role='dialog' hidden><p>a dialog</p></div><span class='tab' hidden>a span</span>"
    )
    texts = [t for t in b.text if t]
    assert texts == ["PythonNode", "python steps", "node steps", "an answer", "another answer"]


def test_hidden_panels_named_by_an_aria_controls_or_right_after_their_toggle_are_walked():
    # merrilledge's accordion: <button aria-controls="content-1"> over <div id="content-1"
    # style="display:none">, names that say nothing of a panel; a hidden box no control names,
    # a controlled dialog and a controlled box named as chrome stay out.
    answer = "There is no single retirement target that covers everyone; it depends on your spending needs."
    page = (
        f"<h1>Retirement calculator</h1><p>{answer} {answer}</p>"
        "<div class='acd'><h3><button aria-expanded='false' aria-controls='content-1'>How much do I need?</button></h3>"
        f"<div class='acd-a-content' id='content-1' style='display:none'><p>{answer}</p></div></div>"
        "<button aria-controls='nav-2 content-2'>More</button><div id='content-2' hidden><p>the second panel</p></div>"
        "<div id='content-3' hidden><p>no control names this</p></div>"
        "<button aria-controls='d'>Open</button><div id='d' role='dialog' hidden><p>a dialog</p></div>"
        "<button aria-controls='m'>Menu</button><div id='m' class='menu' hidden><p>a menu</p></div>"
        # a toggle right before its panel: a <summary>, an element with or holding aria-expanded
        "<details><summary>Is it fast?</summary><div aria-hidden='true'><p>yes, it is</p></div></details>"
        "<h3><button aria-expanded='false'>Is it safe?</button></h3><div hidden><p>it is safe</p></div>"
        "<button class='chakra-accordion__button' aria-expanded='false'>Specs</button><div style='display:none'><p>the specs</p></div>"
        "<p>an intro</p><div hidden><p>not after a toggle</p></div>"
    )
    texts = [t for t in blocks_of(page).text if t]
    assert texts == [
        "Retirement calculator", f"{answer} {answer}", answer, "the second panel",
        "Is it fast?", "yes, it is", "it is safe", "the specs", "an intro",
    ]  # (buttons are not walked)


def test_a_carousels_slides_hidden_from_screen_readers_are_walked_when_they_hold_a_paragraph():
    # redfin: <li class="bp-Carousel__cell" aria-hidden="true"> for every slide but the one
    # shown. A lone aria-hidden box, a slide without a paragraph (a tile) and a slide hidden by
    # display:none (not a carousel's) stay out.
    text = "A three-bedroom home near the river, with a new roof, a large fenced garden, a two-car garage and a view of the hills."
    shown = f"<li class='bp-Carousel__cell is-active'><p>Home 0: {text}</p></li>"
    slides = shown + "".join(f"<li class='bp-Carousel__cell' aria-hidden='true'><p>Home {i}: {text}</p></li>" for i in (1, 2))
    page = (
        f"<ul>{slides}<li class='bp-Carousel__cell' aria-hidden='true'><p>a tile</p></li>"
        f"<li class='bp-Carousel__cell' style='display:none'><p>Gone: {text}</p></li></ul>"
        f"<div class='note' aria-hidden='true'><p>Alone: {text}</p></div>"
    )
    texts = [t for t in blocks_of(page).text if t]
    assert texts == [f"Home {i}: {text}" for i in range(3)]


def test_segments_streamed_hidden_by_react_are_walked():
    # React 18's streaming renderer sends each Suspense boundary's content as <div hidden
    # id="S:n"> and a script moves it in place of its <template id="B:n">: it is the page's text.
    b = blocks_of(
        "<template id='B:0'></template><p>Loading</p><div hidden id='S:0'><p>the streamed story</p></div>"
        "<div hidden id='P:1f'><p>a postponed part</p></div><div hidden id='S:zz'><p>not a segment</p></div>"
        "<div hidden id='xS:0'><p>nor this</p></div>"
    )
    assert [t for t in b.text if t] == ["Loading", "the streamed story", "a postponed part"]


def test_a_page_builders_widget_is_named_by_its_other_words():
    b = blocks_of(
        "<div class='elementor-element elementor-widget elementor-widget-heading'><h2>A heading</h2></div>"
        "<div class='widget-span widget-type-cell'><p>a cell</p></div>"
        "<div class='elementor-widget elementor-widget-nav-menu'><p>a menu</p></div>"
        "<div class='widget widget_recent_entries'><p>a sidebar widget</p></div>"
    )
    assert [t for t in b.text if t] == ["A heading", "a cell"]


def test_comments_on_a_question_or_an_answer_do_not_make_their_box_a_wrapper():
    # StackExchange: each comment is a schema.org Comment with an itemprop=text, inside the
    # Question or Answer item; the text marks a comment, not the page's content (CONTENT_INSIDE),
    # so the box named as comments stays held back.
    question = "How do I move the keyboard focus to the files pane of the window without the mouse at all?"
    comment = "<li class='comment' itemscope itemtype='https://schema.org/Comment'><span itemprop='text'>{}</span></li>"
    qa = (
        "<body><div itemscope itemtype='https://schema.org/QAPage'><div itemprop='mainEntity' itemscope"
        f" itemtype='https://schema.org/Question'><h1>Focus</h1><div itemprop='text'><p>{question} {question}</p></div>"
        f"<ul class='comments-list'>{comment.format('A comment on the question')}</ul><div itemprop='suggestedAnswer'"
        f" itemscope itemtype='https://schema.org/Answer'><div itemprop='text'><p>Press space.</p></div>"
        f"<ul class='comments-list'>{comment.format('Works for me')}</ul></div></div></div></body>"
    )
    texts = blocks_of(qa).text
    assert f"{question} {question}" in texts and "Press space." in texts
    assert "A comment on the question" not in texts and "Works for me" not in texts
    # A forum's replies are Comment items of the thread (not of a Question): their box still
    # holds the page's content.
    reply = "<div class='comment' itemscope itemtype='http://schema.org/Comment'><div itemprop='text'><p>{}</p></div></div>"
    forum = (
        f"<body><div itemscope itemtype='https://schema.org/DiscussionForumPosting'><h2>Thread</h2><p>{question}</p>"
        f"<section id='comments'>{reply.format('First reply')}{reply.format('Second reply')}</section></div></body>"
    )
    texts = blocks_of(forum).text
    assert "First reply" in texts and "Second reply" in texts


def test_boxes_hidden_by_a_utility_class_are_not_walked():
    # "d-none" is display: none; "sr-only" / "visually-hidden" / "screen-reader-text" leave the
    # text to screen readers. A box shown again at some width ("d-none d-lg-block", "hidden
    # md:flex") is walked, and so is one named "hidden" (scripts toggle it), and the body.
    b = blocks_of(
        "<body class='sr-only'><div class='d-none'><p>gone one</p></div><div class='x sr-only'>gone two</div>"
        "<p class='screen-reader-text'>gone three</p><div class='visually-hidden'>gone four</div>"
        "<div class='d-none d-lg-block'><p>wide screens</p></div><div class='hidden md:flex'>tailwind</div>"
        "<div class='hidden'>toggled</div><p>kept</p></body>"
    )
    assert [t for t in b.text if t] == ["wide screens", "tailwind", "toggled", "kept"]


def _column_types(page):
    from dataclasses import fields

    return [[type(v) for v in getattr(page.blocks, f.name)] for f in fields(page.blocks)]


_ints = st.integers(min_value=-(2**70), max_value=2**70)
_texts = st.text(st.characters(codec="utf-8") | st.sampled_from("\x00é中😀"), max_size=12)


@st.composite
def _parsed_pages(draw):
    """ParsedPages of 0-8 blocks: ints from small to past 64 bits (negative hashes too), texts of
    any code point (lone surrogates, NUL, CJK, emoji), a float where an int is expected."""
    from pagetwin.html.blocks import Blocks, ParsedPage

    n = draw(st.integers(0, 8))
    ints = st.one_of(st.integers(-1, 40), st.integers(0, 2**64 - 1), _ints)

    def column(of):
        return draw(st.lists(of, min_size=n, max_size=n))

    b = Blocks(tag=column(st.sampled_from(["p", "div", "h1", "li"])), parent=column(ints), sig=column(ints),
               hash=column(ints), text=column(_texts | st.text(max_size=5)), link=column(ints), size=column(ints | st.floats(0, 9)),
               content=column(st.booleans()), in_article=column(st.booleans()), hint=column(st.booleans()),
               caption=column(st.booleans()),
               images=draw(st.lists(st.tuples(st.integers(0, 9), st.dictionaries(_texts, _texts, max_size=2)), max_size=3)))  # fmt: skip
    return ParsedPage(b, draw(_texts), draw(_texts), draw(st.integers(0, 2**40)), draw(st.booleans()),
                      (column(st.booleans()), column(st.booleans())), draw(st.integers(0, 3)))  # fmt: skip


@hsettings(max_examples=300, deadline=None)
@given(_parsed_pages())
def test_parsed_page_bytes_round_trip_every_field_exactly(page):
    # Format 5 packs the integer columns: every field comes back equal and of the same types,
    # and a column that does not fit its array (past 64 bits, a negative hash, a float) too.
    from pagetwin.html.blocks import ParsedPage

    back = ParsedPage.from_bytes(page.to_bytes())
    assert back == page and _column_types(back) == _column_types(page)
    assert back.page_level() == page.page_level() and type(back.replaced) is int


def test_parsed_page_bytes_pack_a_walked_page():
    # A walked page fits the packed layout (every column, 64-bit signatures and hashes, CJK and
    # accents included): its bytes are the reference packer's, and they read back to the page.
    from pagetwin.html.blocks import ParsedPage
    from pagetwin.html.noise import parse_page

    html = "<h1>Título</h1><article><p>" + "Palabras del artículo 記事. " * 20 + "</p><p>short</p><p>short</p></article>"
    for parsed in (parse_page(parse_html(html)), parse_page(parse_html(""))):
        data = parsed.to_bytes()
        assert data[0] == blocks._PACKED_PAGE and data == _reference_bytes(parsed)
        assert ParsedPage.from_bytes(data) == parsed


def _page_parts(page):
    """What to_bytes hands the packers: (head, columns, images)."""
    b = page.blocks
    head = (page.title, page.description, page.replaced, page.flattened, page.refused_charsets)
    columns = (b.tag, b.parent, b.sig, b.hash, b.text, b.link, b.size, b.content, b.in_article, b.hint, b.caption, *page.page_level())
    return head, columns, b.images


def _reference_bytes(page):
    return blocks._packed_page_reference(*_page_parts(page))


_INT64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def _fitting_pages(draw):
    """ParsedPages that fit the packed layout, as a walk makes them and past it: 0-40 blocks,
    parents anywhere in int64 that they are the distance back to fits too (the root's -1, a
    forward one), signatures and hashes from a few values (the tables' repeats) or anywhere in
    uint64, any tag names (non-ASCII, empty), texts of any code point UTF-8 has, images with and
    without attributes."""
    from pagetwin.html.blocks import Blocks, ParsedPage

    n = draw(st.integers(0, 40))
    small = st.integers(-1, 300)
    wide = st.one_of(st.integers(0, 3), st.sampled_from([0, 2**63, 2**64 - 1]), st.integers(0, 2**64 - 1))

    def column(of):
        return draw(st.lists(of, min_size=n, max_size=n))

    raw = st.one_of(st.none(), st.none(), st.dictionaries(_texts, _texts, max_size=2))
    b = Blocks(tag=column(st.sampled_from(["p", "div", "h1", "li", "tr"]) | _texts), parent=column(small | st.integers(40 - 2**63, 2**63 - 1)),
               sig=column(wide), hash=column(wide), text=column(st.sampled_from(["", "", "Menu"]) | _texts),
               link=column(small | _INT64), size=column(small | _INT64), content=column(st.booleans()),
               in_article=column(st.booleans()), hint=column(st.booleans()), caption=column(st.booleans()),
               images=draw(st.lists(st.tuples(st.integers(0, 40) | _ints, raw), max_size=4)))  # fmt: skip
    return ParsedPage(b, draw(_texts), draw(_texts), draw(st.integers(0, 3) | _INT64), draw(st.booleans()),
                      (column(st.booleans()), column(st.booleans())), draw(st.integers(0, 3) | _INT64))  # fmt: skip


@hsettings(max_examples=400, deadline=None)
@given(_fitting_pages())
def test_property_packed_page_is_its_reference_and_round_trips(page):
    # The native packer makes the reference's bytes; both readers read them back alike, to the
    # page itself (every field, and each item's type).
    from pagetwin.html.blocks import ParsedPage

    data = _reference_bytes(page)
    assert data is not None and data[0] == blocks._PACKED_PAGE
    assert blocks._unpacked_page_reference(data) == (_page_parts(page)[0], _page_parts(page)[1], page.blocks.images)
    if blocks._walk is not None:
        assert blocks._walk.packed_page(*_page_parts(page)) == data
        assert blocks._walk.unpacked_page(data) == blocks._unpacked_page_reference(data)
    back = ParsedPage.from_bytes(page.to_bytes())
    assert back == page and _column_types(back) == _column_types(page)
    assert [type(v) for v in (back.replaced, back.flattened, back.refused_charsets)] == [int, bool, int]


_MISFITS = {"parent": 2**63, "sig": -1, "hash": 2**64, "link": 1.0, "size": True, "text": "\ud800", "tag": 1,
            "content": 1, "keep": 0}  # fmt: skip


@hsettings(max_examples=200, deadline=None)
@given(_fitting_pages(), st.sampled_from(sorted(_MISFITS)), st.integers(0, 39))
def test_property_a_page_that_does_not_fit_is_marshalled(page, name, at):
    # An item the packed layout cannot hold (past int64 or uint64, a float or a bool for an int,
    # an int for a bool, a lone surrogate): neither packer packs the page, it is marshalled, and
    # it still reads back exactly.
    from pagetwin.html.blocks import ParsedPage

    if not page.blocks.tag:
        return
    at %= len(page.blocks.tag)
    column = page.page_level()[0] if name == "keep" else getattr(page.blocks, name)
    column[at] = _MISFITS[name]
    assert _reference_bytes(page) is None
    if blocks._walk is not None:
        assert blocks._walk.packed_page(*_page_parts(page)) is None
    data = page.to_bytes()
    assert data[0] == blocks._MARSHALLED_PAGE
    back = ParsedPage.from_bytes(data)
    assert back == page and _column_types(back) == _column_types(page)


@hsettings(max_examples=100, deadline=None)
@given(_fitting_pages(), st.data())
def test_property_damaged_packed_bytes_are_refused_alike(page, data):
    # Bytes cut short or changed are refused (ValueError, never a crash) or read alike by both
    # readers.
    packed = bytearray(_reference_bytes(page))
    if data.draw(st.booleans()):
        del packed[data.draw(st.integers(1, len(packed))) :]
    else:
        packed[data.draw(st.integers(1, len(packed) - 1))] = data.draw(st.integers(0, 255))
    packed = bytes(packed)

    def outcome(read):
        try:
            return read(packed)
        except ValueError as exc:  # (UnicodeDecodeError included)
            return type(exc)

    reference = outcome(blocks._unpacked_page_reference)
    if blocks._walk is not None:
        assert outcome(blocks._walk.unpacked_page) == reference


def test_parsed_page_of_unknown_bytes_is_refused():
    import pytest

    from pagetwin.html.blocks import ParsedPage

    for data in (b"", b"\x28\xb5\x2f\xfd", bytes([blocks._PACKED_PAGE])):
        with pytest.raises(ValueError):
            ParsedPage.from_bytes(data)


_CLASS_WORDS = st.sampled_from(
    ["tooltip", "popover", "rollover", "hovercard", "trigger", "toggle", "link", "group/tooltip", "nav", "widget",
     "elementor-widget", "comments", "wrap", "Caption", "d-none", "sr-only", "d-lg-block", "main-1", "x", "ToolTip", "a/b"]
)


@hsettings(max_examples=300, deadline=None)
@given(cls=st.lists(st.one_of(_CLASS_WORDS, st.text(max_size=8)), max_size=5).map(" ".join),
       ident=st.lists(st.one_of(_CLASS_WORDS, st.text(max_size=6)), max_size=2).map("-".join))
def test_property_class_facts_popup_as_the_words_of_the_tokens_without_a_slash(cls, ident):
    # The popup verdict, as first written: the words of the class and id tokens without a "/".
    words = blocks._WORDS.findall(" ".join(t for t in f"{cls} {ident}".lower().split() if "/" not in t))
    popup = not blocks._POPUP_WORDS.isdisjoint(words) and blocks._POPUP_TRIGGERS.isdisjoint(words)
    assert blocks._class_facts("div", cls, ident, "")[5] == popup


def test_parsed_page_bytes_from_many_threads_at_once():
    # The packers keep nothing between calls: eight threads round-trip pages together and get
    # each page back. (Each thread has its own zstd (de)compressor, pagetwin.compression:
    # python-zstandard's must not be shared by threads at once.)
    from concurrent.futures import ThreadPoolExecutor

    from pagetwin.compression import compressor, decompressor
    from pagetwin.html.blocks import ParsedPage
    from pagetwin.html.noise import parse_page

    pages = [parse_page(parse_html(f"<article><p>{'Words of page %d. ' % i * (20 + i)}</p></article>")) for i in range(16)]

    def round_trip(i: int) -> bool:
        return all(ParsedPage.from_bytes(pages[i].to_bytes()) == pages[i] for _ in range(50))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(round_trip, range(16)))
    # The calling thread's pair is made once and kept.
    assert compressor(1).__self__ is compressor(1).__self__ and decompressor().__self__ is decompressor().__self__


# Class and id names for _class_facts against its reference: chrome, wrapper, comment, body-hint,
# caption and popup words, split by "-" and "_" ("article-bo_dy" is a body hint), ASCII and other
# digits ("٣", "３", "𝟙": \d matches them), and letters that lower-case into ASCII (the Kelvin sign).
_FACT_PIECES = st.sampled_from(
    ["nav", "menu", "sidebar", "comments", "comment", "wrap", "content", "entry", "-", "_", " ", "article", "bo", "dy",
     "body", "Body", "text", "main", "story", "caption", "Gallery", "slide", "show", "accredit", "credit", "widget",
     "elementor-widget", "widget-type-", "tooltip", "trigger", "/", "d-none", "d-lg-block", "sr-only", "12", "٣", "３",
     "𝟙", "\u212a", "İ", "ß", "\t", "\u00a0", "x"]
)  # fmt: skip
_FACT_NAMES = st.lists(st.one_of(_FACT_PIECES, st.text(max_size=4)), max_size=8).map("".join)


@hsettings(max_examples=600, deadline=None)
@given(tag=st.sampled_from(["div", "span", "section"]), cls=_FACT_NAMES, ident=_FACT_NAMES,
       itemprop=st.sampled_from(["", "articleBody", "headline", "Article-Body", "text"]))  # fmt: skip
def test_property_class_facts_are_the_references(tag, cls, ident, itemprop):
    assert blocks._class_facts(tag, cls, ident, itemprop) == blocks._class_facts_reference(tag, cls, ident, itemprop)


def test_every_hiding_class_has_a_dash():
    # _class_hidden tests for a "-" before it splits the class.
    assert all("-" in name for name in blocks._HIDING_CLASSES)


def test_class_facts_are_the_references_on_real_pages():
    # Every (tag, class, id, itemprop) of the extraction sets' pages (read where they are).
    import sys
    from pathlib import Path

    import pytest

    root = Path(__file__).resolve().parents[2]
    shared = root.parent / "shared" / "data"
    if not (shared / "extraction").exists():
        pytest.skip(f"no extraction sets at {shared / 'extraction'}")
    sys.path.insert(0, str(root / "bench"))
    from extraction import load_set

    from pagetwin.html.parse import decode_html

    seen = set()
    for name in ("cleanportaleval", "scrapinghub", "chinese_wce"):
        for page in load_set(name, shared, 60):
            for node in parse_html(decode_html(page["body"], None)).css("[class], [id], [itemprop]"):
                attrs = node.attributes
                seen.add((node.tag, attrs.get("class") or "", attrs.get("id") or "", attrs.get("itemprop") or ""))
    assert len(seen) > 1000
    for key in seen:
        assert blocks._class_facts(*key) == blocks._class_facts_reference(*key), key


# Blocks of a page that shows little (texts of 0-12 words, sizes around PARAGRAPH_CHARS, linked
# or not) and hidden boxes of a few words to HIDDEN_PAGE_WORDS and more, named as chrome or not.
_SHOWN_BLOCK = st.tuples(st.sampled_from(["", "one", "two words", "one two three four five six seven", "extraordinarily " * 12]),
                         st.sampled_from([0, 20, 149, 150, 400]), st.sampled_from([0, 30, 60, 500]))  # fmt: skip
_HIDDEN_BOX = st.sampled_from(
    ["<div hidden>" + "hidden words " * 60 + "</div>", "<div hidden class='footer'>" + "x " * 120 + "</div>",
     "<section aria-hidden='true'>" + "y " * 30 + "</section>", "<div hidden><p>two words</p></div>"]
)  # fmt: skip


@hsettings(max_examples=400, deadline=None)
@given(shown=st.lists(_SHOWN_BLOCK, max_size=6), boxes=st.lists(_HIDDEN_BOX, max_size=4))
def test_property_hidden_pages_is_the_reference(shown, boxes):
    out = blocks.Blocks(text=[t for t, _, _ in shown], size=[s for _, s, _ in shown], link=[k for _, _, k in shown])
    hidden = parse_html("<html><body>" + "".join(boxes) + "</body></html>").css("body > *")
    assert blocks._hidden_pages(out, hidden) == blocks._hidden_pages_reference(out, hidden)
