import random
import time

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from pagetwin.config import ExtractSettings
from pagetwin.html.blocks import text_size, walk
from pagetwin.html.noise import DATELINE_SIZE, ParsedPage, extract, extract_parsed, parse_page
from pagetwin.html.parse import parse_html
from pagetwin.html.templates import SiteTemplates, page_stats
from tests.fixtures.sites import paragraph

S = ExtractSettings()

ARTICLE = [
    "The river council approved the new harbour budget on Tuesday after a long meeting with residents and engineers from the northern villages.",
    "Officials said the railway bridge would be repaired before the summer festival, when visitors from the coastal towns usually arrive by train.",
    "Teachers and students of the local college questioned the plan, which delays the library project by two years and moves money to traffic.",
]


def page(extra_body: str = "", head: str = "", article_extra: str = "") -> str:
    paras = "".join(f"<p>{p}</p>" for p in ARTICLE)
    return (
        f"<html><head><title>Harbour budget approved</title>{head}</head><body>"
        f"<div id='wrap'><div class='story'><h1>Harbour budget approved</h1>{paras}{article_extra}</div>"
        f"{extra_body}</div></body></html>"
    )


def text(html: str, site=None) -> str:
    return extract(parse_html(html), site, S).text


def test_article_kept_chrome_dropped():
    chrome = (
        "<script>var secret = 'script text';</script><style>.x{color:red}</style>"
        "<noscript>Enable javascript to see noscript text</noscript><template><p>template text</p></template>"
        "<svg><text>svg text</text></svg><iframe src='x'>iframe text</iframe>"
        "<nav><ul><li><a href='/'>Home</a></li><li><a href='/n'>News</a></li></ul></nav>"
        "<header><p>Site header text that is long enough to be content if it were not a header.</p></header>"
        "<footer><p>Footer text that is long enough to be content if it were not in a footer.</p></footer>"
        "<aside><p>Aside text that is long enough to be content if it were not in an aside box.</p></aside>"
        "<form><label>Search</label><input value='input text'><select><option>option text</option></select>"
        "<button>button text</button><textarea>textarea text</textarea></form>"
        "<div hidden><p>Hidden attribute text that is long enough to be a paragraph of the page.</p></div>"
        "<div aria-hidden='true'><p>Aria hidden text that is long enough to be a paragraph of the page.</p></div>"
        "<div style='display: none'><p>Display none text that is long enough to be a paragraph of the page.</p></div>"
        "<div class='share-buttons'><p>Share this story with your friends on every network you use daily.</p></div>"
    )
    out = text(page(extra_body=chrome))
    for p in ARTICLE:
        assert p in out
    assert out.splitlines()[0] == "Harbour budget approved"
    for gone in ("script text", "color:red", "noscript", "template text", "svg text", "iframe", "Home",
                 "Site header", "Footer text", "Aside text", "input text", "option text", "button text",
                 "textarea text", "Hidden attribute", "Aria hidden", "Display none", "Share this story"):  # fmt: skip
        assert gone not in out, gone


def test_link_dense_block_dropped_lists_and_tables_kept():
    links = "<div class='more'>" + " | ".join(f"<a href='/s/{i}'>Another story number {i} about the harbour</a>" for i in range(4)) + "</div>"
    content = (
        "<h2>What changes</h2><ul><li>The bridge is repaired before the festival in July this year.</li>"
        "<li>The library project waits two more years for its funding to be approved.</li></ul>"
        "<table><tr><th>Item</th><th>Cost</th></tr><tr><td>Bridge repairs</td><td>4.2 million</td></tr></table>"
    )
    out = text(page(article_extra=content + links))
    assert "Another story number" not in out
    assert "What changes" in out
    assert "The bridge is repaired before the festival in July this year." in out
    assert "Bridge repairs 4.2 million" in out  # a table row reads as one line


def test_header_inside_article_keeps_title_but_page_header_goes():
    html = (
        "<html><body><header><p>The Valley Gazette, your daily newspaper for the whole valley region.</p></header>"
        "<article><header><h1>Budget approved</h1></header>" + "".join(f"<p>{p}</p>" for p in ARTICLE) + "</article></body></html>"
    )
    out = text(html)
    assert out.startswith("Budget approved") and "daily newspaper" not in out


def test_chrome_named_wrapper_around_the_whole_page_is_kept():
    # A class word like "sidebar" or "advertisement" on a wrapper of the whole page must not
    # remove the article (real pages do this: "content-sidebar-wrap", "ad-off-canvas-pusher").
    html = page().replace("<div id='wrap'>", "<div class='advertisement-off-canvas-pusher'>")
    out = text(html)
    assert all(p in out for p in ARTICLE)


def test_title_and_description():
    html = page(head="<meta name='description' content='The council approved the budget.'>")
    ex = extract(parse_html(html), None, S)
    assert ex.title == "Harbour budget approved" and ex.description == "The council approved the budget."
    ex = extract(parse_html(page(head="<meta property='og:description' content='OG text'>")), None, S)
    assert ex.description == "OG text"
    assert extract(parse_html(page()), None, S).description == ""


def test_main_content_images_kept_template_images_dropped():
    logo = "<div class='brand'><img src='/logo.png' alt='Gazette' width='120' height='40'></div>"
    pages = []
    for i in range(6):
        figure = f"<figure><img src='/photos/{i}.jpg' data-src='/photos/{i}-large.jpg' alt='Photo {i}' width='800'><figcaption>The harbour in spring, photographed for story {i}.</figcaption></figure>"
        own = f"<p>{paragraph(random.Random(i))}</p>"  # each page its own article, not a copy
        pages.append(page(article_extra=figure + own).replace("<div id='wrap'>", "<div id='wrap'>" + logo))
    # Page level: the logo is outside the article region, the photo inside.
    imgs = extract(parse_html(pages[0]), None, S).images
    assert [im["src"] for im in imgs] == ["/photos/0.jpg"]
    assert imgs[0]["data-src"] == "/photos/0-large.jpg" and imgs[0]["alt"] == "Photo 0" and imgs[0]["width"] == "800"
    # Site level: a logo inside the article container is on every page -> template.
    pages = [p.replace("<h1>", logo + "<h1>") for p in pages]
    model = SiteTemplates(S)
    for p in pages:
        model.fit("gazette.example", page_stats(parse_page(parse_html(p)), S))
    site = model.for_site("gazette.example")
    assert "/logo.png" in [im["src"] for im in extract(parse_html(pages[1]), None, S).images]
    assert [im["src"] for im in extract(parse_html(pages[1]), site, S).images] == ["/photos/1.jpg"]


def test_picture_sources_are_images():
    pic = "<picture><source srcset='/a.webp 1x, /a@2x.webp 2x'><img src='/a.jpg' alt='A'></picture>"
    imgs = extract(parse_html(page(article_extra=pic)), None, S).images
    assert {"srcset": "/a.webp 1x, /a@2x.webp 2x"} in imgs and any(im.get("src") == "/a.jpg" for im in imgs)


def test_deep_dom_does_not_crash_or_hang():
    depth = 100_000
    html = "<html><body>" + "<div>" * depth + "<p>" + ARTICLE[0] + "</p>" + "</div>" * depth + "<p>" + ARTICLE[1] + "</p></body></html>"
    t0 = time.perf_counter()
    tree = parse_html(html)
    out = extract(tree, None, S).text
    stats = page_stats(parse_page(parse_html(html)), S)
    assert time.perf_counter() - t0 < 15
    assert ARTICLE[0] in out and ARTICLE[1] in out
    assert len(stats.hashes) > 0
    blocks = walk(parse_html("<div>" * 2000 + "deep text" + "</div>" * 2000), max_depth=100)
    assert len(blocks) <= 102 and any("deep text" in t for t in blocks.text)


def test_deep_inline_nesting():
    html = "<p>" + "<span>" * 50_000 + ARTICLE[2] + "</span>" * 50_000 + "</p>"
    assert ARTICLE[2] in text(html)


def test_huge_page():
    para = "<p>" + ARTICLE[0] + " {}</p>"  # numbered: paragraphs, not one said again
    html = page(article_extra="".join(para.format(i) for i in range(10_000_000 // len(para))))
    assert len(html) > 10_000_000
    t0 = time.perf_counter()
    out = text(html)
    assert time.perf_counter() - t0 < 30
    assert out.count(ARTICLE[0]) > 1000


def test_empty_and_odd_input():
    for html in ("", "   ", "<html></html>", "plain text only", "<p>", "<!-- only a comment -->", "\x00\x01<p>x", "<frameset></frameset>"):
        ex = extract(parse_html(html), None, S)
        assert isinstance(ex.text, str)
        page_stats(parse_page(parse_html(html)), S)


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["<div>", "</div>", "<p>", "</p>", "<a href=x>", "</a>", "<li>", "<table>", "<td>",
                                 "<nav>", "<script>", "</script>", "<img src=i.png>", "<h1>", "text ", "more words here ",
                                 "<br>", "<span class='menu'>", "</span>", "&amp;", "\u4e2d\u6587", "<div hidden>", "<!--"]),
                max_size=80))  # fmt: skip
def test_any_markup_is_handled(parts):
    html = "".join(parts)
    ex = extract(parse_html(html), None, S)
    assert "\n\n" not in ex.text
    stats = page_stats(parse_page(parse_html(html)), S)
    assert len(stats.slots) == len(stats.slot_kept)
    assert all(0.0 <= k <= 1.0 for k in stats.slot_kept.tolist())


def test_page_without_text_keeps_its_images():
    # A caption-less gallery: no content text, so no text region; its images are the content.
    figures = "".join(f"<figure><img src='/g/{i}.jpg' data-original='/g/{i}-full.jpg' width='800'></figure>" for i in range(4))
    html = f"<html><body><nav><a href='/'>Home</a></nav><div class='gallery'>{figures}</div></body></html>"
    imgs = extract(parse_html(html), None, S).images
    assert [im["src"] for im in imgs] == [f"/g/{i}.jpg" for i in range(4)]
    assert imgs[0]["data-original"] == "/g/0-full.jpg"  # lazy-loading attributes are kept


@hsettings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["<div class='a1'>", "</div>", "<p>", "</p>", "<a href=x>", "</a>", "<li>", "<img src=i.png alt=x>",
                                 "<h1>", "text 2024 ", "more words here ", "\u4e2d\u6587", "\ud800", "<title>t</title>",
                                 "<meta name=description content='d e'>"]),
                max_size=60))  # fmt: skip
def test_parsed_page_round_trips_and_decides_the_same(parts):
    # Pass 2 decides on pass 1's serialised blocks: they must come back equal (lone surrogates,
    # CJK and image attributes included) and give the same text as parsing again.
    html = "".join(parts)
    parsed = parse_page(parse_html(html), replaced=3, flattened=True)
    back = ParsedPage.from_bytes(parsed.to_bytes())
    assert back == parsed
    assert extract_parsed(back, None, S) == extract(parse_html(html), None, S)


def test_parsed_page_of_another_format_is_refused():
    import marshal

    import pytest
    import zstandard

    data = bytes([99]) + marshal.dumps(("", "", 0, False, None))
    with pytest.raises(ValueError, match="format 99"):
        ParsedPage.from_bytes(data)
    # the zstd frames of marshalled records that pass 1 wrote until session 18 (format 5) are not
    # read: they never outlive the run that wrote them
    with pytest.raises(ValueError, match="format 40"):
        ParsedPage.from_bytes(zstandard.ZstdCompressor().compress(marshal.dumps((5, "", "", 0, False, None))))


HEADLINES = [
    "Council approves the harbour budget after a long night",
    "Railway bridge to be repaired before the summer festival",
    "College students question the delayed library project",
    "Coastal towns expect record numbers of visitors by train",
    "Northern villages vote on a new water supply for farms",
    "Engineers test the flood barrier ahead of the autumn storms",
]


def _cards(headlines):
    return "".join(
        f"<div class='card'><a href='/story/{i}'><h3>{h}</h3><p>{h.split()[0]} and more, read the full story here</p></a></div>"
        for i, h in enumerate(headlines)
    )


def test_a_page_of_linked_cards_reads_as_a_list_and_keeps_its_items():
    html = (
        "<html><body><div class='top'><a href='/'>Home</a> <a href='/news'>News</a> <a href='/sport'>Sport</a></div>"
        f"<h1>Local news</h1><div class='grid'>{_cards(HEADLINES)}</div>"
        "<div class='foot'><a href='/about'>About us</a> <a href='/jobs'>Jobs</a></div></body></html>"
    )
    text = extract(parse_html(html)).text
    for h in HEADLINES:
        assert h in text
    assert "About us" not in text and "Home" not in text


def test_an_article_with_a_box_of_linked_headlines_keeps_the_article_only():
    # More teaser text than article text, but the article reading finds an article: it stands.
    box = f"<div class='more'><h4>More news</h4>{_cards(HEADLINES * 3)}</div>"
    longer = "".join(f"<p>{p} {p}</p>" for p in ARTICLE)
    text = extract(parse_html(page(extra_body=box, article_extra=longer))).text
    assert all(p in text for p in ARTICLE)
    assert not any(h in text for h in HEADLINES)


def test_a_product_description_only_in_json_ld_is_added_to_the_text():
    ld = ('<script type="application/ld+json">{"@context": "https://schema.org", "@graph": [{"@type": "Product", '
          '"name": "Trail pack", "description": "<p>A light pack with &amp; deep pockets for long day hikes</p>"}]}</script>')
    shop = f"<html><head>{ld}</head><body><h1>Trail pack</h1><div class='buy'>Add to cart</div></body></html>"
    text = extract(parse_html(shop)).text
    assert text.splitlines()[-1] == "A light pack with & deep pockets for long day hikes"
    # Shown on the page already: not added twice. Broken JSON-LD: ignored.
    body = "<p>A light pack with & deep pockets for long day hikes, and much more text about it here.</p>"
    text = extract(parse_html(f"<html><head>{ld}</head><body><h1>Trail pack</h1>{body}</body></html>")).text
    assert text.count("deep pockets") == 1
    broken = '<script type="application/ld+json">{"@type": "Product", "description": </script>'
    assert "Add to cart" not in extract(parse_html(shop.replace(ld, broken))).text


def test_the_json_ld_block_survives_serialisation():
    ld = '<script type="application/ld+json">{"@type": ["Product"], "description": "Warm socks for winter"}</script>'
    parsed = parse_page(parse_html(f"<html><head>{ld}</head><body><p>Socks</p></body></html>"))
    again = ParsedPage.from_bytes(parsed.to_bytes())
    assert extract_parsed(again).text == extract_parsed(parsed).text and "Warm socks for winter" in extract_parsed(again).text


CAPTION = "The mayor and two engineers walk along the old harbour wall on Monday morning."


def _figure(caption: str, inner: str = "<img src='/photo.jpg' alt='harbour'>") -> str:
    return f"<figure>{inner}<figcaption>{caption}</figcaption></figure>"


def _article_with(figures: str) -> str:
    longer = "".join(f"<p>{p} {p}</p>" for p in ARTICLE)
    return page(article_extra=figures + longer)


def test_a_photo_caption_inside_an_article_is_dropped():
    out = text(_article_with(_figure(CAPTION)))
    assert all(p in out for p in ARTICLE)
    assert CAPTION not in out


def test_captions_that_are_content_stay():
    # A gallery (the captions are its only text), a numbered figure the text refers to, the
    # caption of a code listing or a quote, a short label, a page with code, a figure without
    # an image.
    gallery = "<html><body><h1>Harbour in pictures</h1>" + _figure(CAPTION) * 2 + "</body></html>"
    assert CAPTION in text(gallery)
    numbered = "Figure 2. Water levels at the harbour wall, measured every hour since 1990."
    assert numbered in text(_article_with(_figure(numbered)))
    for inner in ("<pre>make harbour --wall</pre>", "<blockquote>We will rebuild the wall, said the mayor at the meeting.</blockquote>", ""):
        assert CAPTION in text(_article_with(_figure(CAPTION, inner))), inner
    assert "Expires 01/01/26" in text(_article_with(_figure("Expires 01/01/26")))
    coded = _article_with(_figure(CAPTION)).replace("</body>", "<pre>harbour = 1</pre></body>")
    assert CAPTION in text(coded)


PRODUCTS = ["Trail pack", "Rain shell", "Camp stove", "Wool socks", "Head lamp", "Dry bag", "Tent pegs", "Map case",
            "Sun hat", "Fleece top", "Water filter", "Trek poles", "Bivvy bag", "Gaiters", "Spork", "First aid kit"]


def _product_cards(names):
    return "".join(
        f"<li class='product'><div class='name'><a href='/p/{i}'>{n}</a></div><div class='price'>${20 + i}.00, in stock</div></li>"
        for i, n in enumerate(names)
    )


def test_a_grid_of_product_cards_with_short_names_is_the_content():
    # Names of one or two words are not teasers; the repeated card with a name and a price is.
    intro = "<p>Everything you need for a weekend in the hills, from packs to stoves, chosen by our staff.</p>"
    menu = "<ul class='cats'>" + "".join(f"<li class='cat'><a href='/c/{i}'>Cat {i}</a></li>" for i in range(8)) + "</ul>"
    # A longer list of filters, one part each (and no links): not cards.
    facets = "<ul class='filters'>" + "".join(f"<li class='facet'>Size {i} to {i + 2} ({i + 3})</li>" for i in range(40)) + "</ul>"
    html = f"<html><body>{menu}{facets}<h1>Hiking gear</h1>{intro}<ul class='grid'>{_product_cards(PRODUCTS)}</ul></body></html>"
    out = text(html)
    assert "Everything you need" in out
    for i, name in enumerate(PRODUCTS):
        assert name in out and f"${20 + i}.00" in out
    assert "Cat 3" not in out and "Size 3 to 5" not in out


def _linked_tiles(names):
    # A shop's tile: one <a> around the name, the material and the price (all of it link text).
    return "".join(
        f"<li class='tile'><a href='/p/{i}'><div class='name'>{n}</div><div class='metal'>Sterling silver</div>"
        f"<div class='price'>${100 + i}.00</div></a></li>"
        for i, n in enumerate(names)
    )


def test_a_grid_of_tiles_that_are_links_through_and_through_is_the_content():
    intro = ("<p>The luminous allure of sterling silver is timeless: sophisticated studs, hoops and drops for every "
             "day and every evening, designed in our studio and made to be worn for years.</p>")
    html = f"<html><body><h1>Silver earrings</h1>{intro}<ul class='grid'>{_linked_tiles(PRODUCTS)}</ul></body></html>"
    out = text(html)
    assert "luminous allure" in out
    for i, name in enumerate(PRODUCTS):
        assert name in out and f"${100 + i}.00" in out
    # Beside an article body the page marks as one, linked tiles are a rail of other pages.
    story = f"<html><body><h1>Silver prices</h1><div itemprop='articleBody'>{intro}</div><ul class='grid'>{_linked_tiles(PRODUCTS)}</ul></body></html>"
    out = text(story)
    assert "luminous allure" in out and not any(name in out for name in PRODUCTS)


def test_an_article_keeps_no_grid_lighter_than_four_times_its_text():
    longer = "".join(f"<p>{p} {p}</p>" for p in ARTICLE)
    out = text(page(extra_body=f"<ul class='grid'>{_product_cards(PRODUCTS)}</ul>", article_extra=longer))
    assert all(p in out for p in ARTICLE)
    assert not any(name in out for name in PRODUCTS)


def test_layout_boxes_of_one_signature_are_not_a_grid():
    # Four boxes of one class beside the post, one holding most of their text: a page's layout
    # (a column of short notes), not cards.
    side = "".join(f"<div class='box'><div>Box {i}</div><div>Note {i}</div></div>" for i in range(3))
    big = "<div class='box'>" + "".join(f"<div>Short note {i:02d}</div>" for i in range(80)) + "</div>"
    html = f"<html><body><h1>Thread</h1><div class='post'><p>{' '.join(ARTICLE)}</p></div>{side}{big}</body></html>"
    out = text(html)
    assert ARTICLE[0] in out and "Short note 03" not in out


def test_a_box_the_page_renders_twice_is_kept_once():
    box = f"<div class='head'><h2>Harbour tour</h2><p>{ARTICLE[0]}</p><p>Tickets from the kiosk by the pier.</p></div>"
    html = page(article_extra=box + box)
    out = text(html)
    # The box's short lines once (the box rule); its paragraph, said in the story already, once.
    assert out.count("Harbour tour") == 1 and out.count("Tickets from the kiosk by the pier.") == 1
    assert out.count(ARTICLE[0]) == 1
    # A line repeated on its own (the same terms on every card) is not a box said twice.
    terms = "<p>Not valid with other offers, some restrictions may apply.</p>"
    out = text(page(article_extra=terms * 3))
    assert out.count("Not valid with other offers") == 3


REVIEWS = [
    "Great pack, I carried it on three long hikes this summer and the straps never hurt my shoulders once.",
    "The side pockets are too small for my bottle, otherwise a fine bag for day trips with the children.",
    "Bought it for my daughter, who loves the colour and says the hip belt is the best she has ever had.",
]
_PRODUCT_LD = '<script type="application/ld+json">{"@type": "Product", "name": "Trail pack"}</script>'


def _shop(head: str, section_title: str) -> str:
    reviews = "".join(f"<div class='item'><p>{r} {r}</p><p>5 stars</p></div>" for r in REVIEWS)
    paras = "".join(f"<p>{p}</p>" for p in ARTICLE)
    return (f"<html><head>{head}</head><body><div id='page'><h1>Trail pack</h1>{paras}"
            f"<div class='box'><h2>{section_title}</h2><div class='list'>{reviews}</div></div></div></body></html>")  # fmt: skip


def test_the_reviews_of_a_product_page_are_dropped():
    out = text(_shop(_PRODUCT_LD, "Customer Reviews (3)"))
    assert all(p in out for p in ARTICLE)
    assert not any(r in out for r in REVIEWS) and "Customer Reviews" not in out
    # A page that is not a product's (a review article, a forum) keeps them; so does a
    # product page's FAQ (the shop's own answers).
    assert all(r in text(_shop("", "Customer Reviews (3)")) for r in REVIEWS)
    assert all(r in text(_shop(_PRODUCT_LD, "Frequently asked questions")) for r in REVIEWS)


def _laureates(header: str, times: int = 1) -> str:
    rows = "".join(
        f"<tr><td>{1901 + i}</td><td><a href='/a{i}'>Wilhelm Conrad Roentgen</a></td>"
        f"<td><a href='/b{i}'>Jacobus van t Hoff</a></td><td><a href='/c{i}'>Emil von Behring</a></td></tr>"
        for i in range(8)
    )
    paras = "".join(f"<p>{' '.join([p] * times)}</p>" for p in ARTICLE)
    return f"<html><body><div id='content'><h1>List of laureates</h1>{paras}<table>{header}<tbody>{rows}</tbody></table></div></body></html>"


def test_a_data_table_with_linked_cells_is_content():
    header = "<thead><tr><th>Year</th><th>Physics</th><th>Chemistry</th><th>Medicine</th></tr></thead>"
    for times in (1, 2):  # beside a short introduction (read as a list) and beside an article
        out = text(_laureates(header, times))
        assert all(p in out for p in ARTICLE)
        assert "1901 Wilhelm Conrad Roentgen Jacobus van t Hoff Emil von Behring" in out and "1908 Wilhelm" in out
    # Without a header row it may be a layout of links: beside an article its rows stay links.
    assert "1901 Wilhelm" not in text(_laureates("", 2))


def _services(title: str) -> str:
    names = ["Plumbing", "Heating", "Roofing", "Electrics"]
    items = "".join(
        f"<div class='svc'><h3><a href='/{n.lower()}'>{n}</a></h3><p>We repair {n.lower()} in homes and shops across the town, fast.</p></div>"
        for n in names
    )
    return f"<html><body><div id='page'><h1>{title}</h1><div class='grid'>{items}</div></div></body></html>"


def test_linked_headings_name_items_and_sections():
    out = text(_services("Our services"))
    assert all(n in out.splitlines() for n in ("Plumbing", "Heating", "Roofing", "Electrics"))
    # Beside an article, short linked headings are links to other pages.
    box = "<div class='more'>" + "".join(f"<h4><a href='/s{i}'>Bridge works</a></h4>" for i in range(4)) + "</div>"
    longer = "".join(f"<p>{p} {p}</p>" for p in ARTICLE)
    assert "Bridge works" not in text(page(article_extra=longer + box))
    # One that heads a paragraph of the article (a linked section title, a listing's story
    # with its summary) is its title.
    section = f"<h3><a href='/plan'>The bridge repair plan explained</a></h3><p>{ARTICLE[1]}</p>"
    assert "The bridge repair plan explained" in text(page(article_extra=longer + section)).splitlines()


def test_the_linked_part_of_repeated_items_is_kept_between_their_text():
    items = "".join(
        f"<dt><a href='/abs/{i}'>[{i}] arXiv:2603.0{i}</a></dt><dd>"
        f"<div class='title'>Title: Harbour wall models number {i} for the northern villages and their engineers</div>"
        f"<div class='authors'><a href='/a'>Ada Lovelace</a>, <a href='/b'>Alan Turing</a>, <a href='/c'>Grace Hopper</a></div>"
        f"<div class='subjects'>Subjects: Artificial Intelligence (cs.AI); Computation and Language</div></dd>"
        for i in range(8)
    )
    out = text(f"<html><body><div id='list'><h1>Recent submissions</h1><dl>{items}</dl></div></body></html>")
    assert out.count("Ada Lovelace, Alan Turing, Grace Hopper") == 8
    # A link between two paragraphs of an article (a slot its paragraphs share) stays a link.
    more = "<p><a href='/x'>Read more about the new harbour budget plans</a></p>"
    longer = "".join(f"<p>{p} {p}</p>{more}" for p in ARTICLE)
    assert "Read more" not in text(page(article_extra=longer))


def test_a_paragraph_said_again_is_kept_once():
    post = ARTICLE[0]
    thread = (f"<html><body><div id='thread'><h1>Harbour budget</h1><div class='post'><p>{post}</p></div>"
              f"<div class='post'><blockquote><p>{post}</p></blockquote><p>{ARTICLE[1]}</p></div>"
              f"<div class='post'><p>{ARTICLE[2]}</p><p>Agreed.</p></div></div></body></html>")  # fmt: skip
    out = text(thread)
    assert out.count(post) == 1 and ARTICLE[1] in out and ARTICLE[2] in out


NAMES = ["Ada", "ALGOL 60", "APL", "Basic", "BCPL", "C++", "COBOL", "Clojure", "Dart", "Eiffel", "Elixir", "Erlang", "Forth", "Fortran", "F#"]


def index_page(sections: int) -> str:
    """A list page: an intro, ``sections`` lists of linked names, each under its own heading, and
    a closing note (the region is the box around them all)."""
    groups = [NAMES[k * 5 : (k + 1) * 5] for k in range(sections)]
    body = "".join(
        f"<h2>{g[0][0]}</h2><ul>" + "".join(f"<li><a href='/wiki/{n}'>{n}</a></li>" for n in g) + "</ul>" for g in groups
    )
    return (
        "<html><body><nav><ul>" + "".join(f"<li><a href='/{n}'>{n} page</a></li>" for n in NAMES) + "</ul></nav>"
        f"<main><h1>List of programming languages</h1><p>{ARTICLE[0]} {ARTICLE[1]}</p>{body}<p>{ARTICLE[2]} {ARTICLE[0]}</p></main></body></html>"
    )


def test_an_index_of_linked_names_under_headings_is_the_pages_content():
    out = text(index_page(3)).split("\n")
    assert set(NAMES) <= set(out)
    assert "Ada page" not in out  # (the menu is outside the region)
    # Two lists are a "see also" box and a menu, not an index.
    out = text(index_page(2)).split("\n")
    assert not set(NAMES[:10]) & set(out)


SPECS = ["Volume: 25 litres", "Weight: 1.2 kg", "Main fabric: 210D nylon", "Frame: aluminium stay"]


def _spec_page(head: str, specs: list[str]) -> str:
    """A shop's page: the description in its column, the specifications in a sidebar box among
    links (outside the main region)."""
    paras = "".join(f"<p>{p}</p>" for p in ARTICLE)
    links = "".join(f"<li><a href='/c{i}'>More trail packs in size {i}</a></li>" for i in range(8))
    spec = "".join(f"<li>{s}</li>" for s in specs)
    return (f"<html><head>{head}</head><body><div id='page'><div class='col'><h1>Trail pack</h1>{paras}</div>"
            f"<div class='side'><ul>{links}</ul><h3>Specifications</h3><ul class='specs'>{spec}</ul></div></div></body></html>")  # fmt: skip


def test_the_specifications_of_a_product_page_are_kept():
    out = text(_spec_page(_PRODUCT_LD, SPECS)).split("\n")
    assert set(ARTICLE) <= set(out) and set(SPECS) <= set(out) and "Specifications" in out
    assert not any("More trail packs" in x for x in out)
    # Not a product's page: the box beside the region stays out.
    assert not set(SPECS) & set(text(_spec_page("", SPECS)).split("\n"))
    # A menu of currencies ("GBP: $50.42") is not a specification.
    prices = ["GBP: $50.42", "USD: $68.07", "AUD: $105.81", "CAD: $94.05"]
    assert not set(prices) & set(text(_spec_page(_PRODUCT_LD, prices)).split("\n"))


def test_one_word_said_over_and_over_is_filler_not_content():
    # A script's font probe at the end of a list page: "word word word ..." outweighs the headlines.
    heads = "".join(f"<h3><a href='/s{i}'>The river council approved the harbour budget number {i}</a></h3>" for i in range(8))
    html = f"<html><body><main><h1>Latest</h1>{heads}</main><div>{'word ' * 60}</div></body></html>"
    out = text(html)
    assert "word word" not in out and "harbour budget number 3" in out
    # A long paragraph of real words, and a CJK paragraph (no spaces to count words by), are content.
    assert "石油" in text(f"<html><body><p>{'石油价格上涨影响了全国的运输行业和居民生活。' * 8}</p></body></html>")


def test_a_long_text_that_links_a_third_of_it_is_prose():
    # A category page's SEO text: 900+ characters, a third of them links to subcategories.
    sentence = "Refresh every room in your home for less with <a href='/c/sofas'>sofas and sectionals that are on trend</a> and affordable too. "
    seo = sentence * 10
    html = f"<html><body><nav><a href='/a'>Home</a> <a href='/b'>Deals</a></nav><h1>Furniture</h1><p>{seo}</p></body></html>"
    out = text(html)
    assert "Refresh every room in your home" in out
    # Shorter, the same share of links is a link box's (in a list item: not the article's own slot).
    short = "<ul><li>" + sentence * 2 + "</li></ul>"
    assert "Refresh every room" not in text(f"<html><body><h1>Furniture</h1><p>{ARTICLE[0]} {ARTICLE[1]}</p><p>{ARTICLE[2]} {ARTICLE[0]}</p>{short}</body></html>")


# page_meta and product_facts find their elements in one pass over the DOM each; these are the
# functions as they were (one css query per selector), kept as their reference.


def _page_meta_reference(tree) -> tuple[str, str]:
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


def _product_facts_reference(tree) -> tuple[bool, str]:
    from pagetwin.html.noise import _PRODUCT_MICRODATA, _product_ld

    text, found = _product_ld(tree)
    return found or tree.css_first(_PRODUCT_MICRODATA) is not None, text


_META_PIECES = st.sampled_from([
    "<title>{w}</title>", "<title></title>", "<title>  {w}\n {w} </title>", "<svg><title>{w}</title></svg>",
    '<meta name="description" content="{w}">', '<meta name="description" content="">', '<meta name="description">',
    '<meta name="Description" content="{w} {w}">', '<meta name="DESCRIPTION" content="{w}">',
    '<meta NAME="description" content="{w}">', '<meta name="description " content="{w}">',
    '<meta property="og:description" content="{w}">', '<meta property="og:title" content="{w}">',
    '<meta property="OG:title" content="{w}">', '<meta property="og:title" name="description" content="{w}">',
    '<meta name="x" name="description" content="{w}">', '<svg><meta name="description" content="{w}"></svg>',
    '<script type="application/ld+json">{{"@type": "Product", "description": "<b>{w}</b> &amp; {w}"}}</script>',
    '<script type="Application/LD+JSON">{{"@type": "Product", "description": "{w}"}}</script>',
    '<script type="application/ld+json">{{"@type": "Organization", "name": "{w}"}}</script>',
    '<script type="application/ld+json">{{"@type": "Product", broken</script>',
    '<script type="application/ld+json" itemtype="http://schema.org/Product">{{}}</script>',
    '<div itemtype="http://schema.org/Product">{w}</div>', '<div itemtype="https://SCHEMA.org/Product">{w}</div>',
    '<div itemscope itemtype="https://schema.org/ProductGroup"><p>{w}</p></div>',
    "<p>{w}</p>", "<div><p>{w}</p></div>", "</head><body>", "<script>var a = '<title>{w}</title>';</script>",
    # (for the native head_candidates: names and values in other cases, other namespaces, templates)
    '<script TYPE="application/ld+json">{{"@type": "Product", "description": "{w}"}}</script>',
    '<meta PROPERTY="og:description" content="{w}">', '<meta data-x="1" Property="og:Title" content="{w}">',
    '<div data-a="b" ItemType="http://schema.org/product/x">{w}</div>', '<math><title>{w}</title></math>',
    '<template><meta name="description" content="{w}"><title>{w}</title></template>',
    '<svg><script type="application/ld+json">{{"@type": "Product", "description": "{w}"}}</script></svg>',
    '<span itemtype="schema.org/Product"><meta name="description" itemtype="schema.org/Product" content="{w}"></span>',
])  # fmt: skip


@hsettings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.tuples(_META_PIECES, st.sampled_from(["Shop", "Ünïcode", "a  b", "x"])), max_size=12))
def test_property_page_meta_and_product_facts_as_one_query_per_selector(pieces):
    html = "<html><head>" + "".join(piece.format(w=word) for piece, word in pieces) + "</body></html>"
    tree = parse_html(html)
    from pagetwin.html.noise import page_meta, product_facts

    assert page_meta(tree) == _page_meta_reference(tree)
    assert product_facts(tree) == _product_facts_reference(tree)


@hsettings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.tuples(_META_PIECES, st.sampled_from(["Shop", "x"])), max_size=12))
def test_property_head_candidates_sure_of_a_candidate_only_when_the_selectors_match_it(pieces):
    # noise._head_nodes does not ask lexbor about a candidate the C pass is sure of.
    from pagetwin.html import noise
    from pagetwin.html.blocks import BlockWalker

    native = BlockWalker().native
    if native is None:
        pytest.skip("native walk off")
    tree = parse_html("<html><head>" + "".join(piece.format(w=word) for piece, word in pieces) + "</body></html>")
    sure = []
    nodes = native.head_candidates(tree.root, noise._TITLE_ID, noise._META_ID, noise._SCRIPT_ID, sure)
    assert len(sure) == len(nodes)
    for node, certain in zip(nodes, sure):
        first = node.css_first(noise._HEAD_TAGS)
        assert not certain or (first is not None and first.mem_id == node.mem_id), node.html


def test_page_meta_takes_the_first_of_each_kind_in_page_order():
    from pagetwin.html.noise import page_meta, product_facts

    tree = parse_html(
        '<html><head><meta property="og:title" content="OG"><meta name="Description" content="Second">'
        '<meta name="description" content=""><meta name="description" content="Later"></head>'
        '<body><svg><title>Icon</title></svg><div itemtype="http://schema.org/Product"></div></body></html>'
    )
    # The first name="description" is empty: the next selector's (name="Description") is taken.
    assert page_meta(tree) == ("Icon", "Second")
    assert product_facts(tree) == (True, "")


def _video_story(player: str) -> str:
    paras = "".join(f"<p>{p}</p>" for p in ARTICLE)
    return (
        "<html><body><div id='wrap'><h1>Harbour budget approved</h1>"
        "<div class='byline'>By the harbour desk, 10:04 AM</div>"
        f"<div class='video-wrap'>{player}</div><div class='entry-content'>{paras}</div></div></body></html>"
    )


_DESCRIPTION = ("The council explains in this video why the harbour budget moves money from the library "
                "to the railway bridge, and what the northern villages asked of the engineers.")  # fmt: skip


def test_a_video_description_in_a_flash_players_fallback_is_kept_with_the_story():
    # What an <object> holds is what a browser shows without the plugin: the video's poster,
    # a player message, and its description, between the title and the story.
    player = (
        "<object data='/player.swf' type='application/x-shockwave-flash'><param name='movie' value='/player.swf'>"
        "<div class='player'><img src='/poster.jpg'><p class='status'>This video is unavailable on your device.</p>"
        f"<div class='video-caption-box'><p class='video-caption'>{_DESCRIPTION}</p></div></div></object>"
    )
    out = text(_video_story(player)).splitlines()
    assert out[:2] == ["Harbour budget approved", _DESCRIPTION] and out[2:] == ARTICLE
    # The same text as a photo's caption in the same place stays out: the golds leave those out.
    photo = f"<figure><img src='/photo.jpg'><figcaption>{_DESCRIPTION}</figcaption></figure>"
    assert text(_video_story(photo)).splitlines() == ["Harbour budget approved", *ARTICLE]


_CN_STORY = [
    "二〇二二年春天，河谷里的十七家工厂完成了节能改造，园区的用电量比去年同期下降了三成，附近村庄的空气也明显变好了。",
    "负责改造的工程师说，新的生产线把余热送回车间和宿舍，冬天不再需要烧煤取暖，工人们每个月能省下一笔不小的开支。",
    "当地政府表示，明年还将为另外二十家企业提供低息贷款，帮助它们更换老旧设备，并在河边修建一条新的步行道。",
]


def test_a_chinese_dateline_and_the_sites_legal_line_are_dropped():
    story = "".join(f"<p>{p}</p>" for p in _CN_STORY)
    html = (
        "<html><body><div class='article'><h1>十七家工厂完成节能改造</h1>"
        "<p>发布时间：2022-02-13 04:22:18 来源：云南日报</p>" + story
        + "<p>云南日报网 滇ICP备11000491号-1 云南日报报业集团 版权所有，未经许可不得转载</p>"
        + "<p>经营许可证编号：滇B-2-4-20030004 互联网新闻信息服务许可证编号：53120170001 滇ICP备11000491号-1"
        + " 云南省互联网违法和不良信息举报电话：0871-64166935；举报邮箱：jubao@yunnan.cn 未经书面许可不得转载本网站的任何内容，违者必究；本网站所刊登的新闻、信息和各种专题专栏资料均为本网站版权所有</p>"
        + "</div></body></html>"
    )
    assert text_size(html.split("<p>")[-1]) > DATELINE_SIZE  # a licence line of any length goes
    assert text(html).splitlines() == ["十七家工厂完成节能改造", *_CN_STORY]
    # A paragraph of the story that names a date and a source is not a dateline.
    said = "记者在2022年2月13日的发布会上了解到，来源于园区的数据显示，" + _CN_STORY[0] + _CN_STORY[1]
    assert said in text(html.replace("<p>" + _CN_STORY[0], "<p>" + said + "</p><p>" + _CN_STORY[0]))


OTHER_STORIES = [
    "The fishing cooperative elected a new board at its yearly meeting, where members argued about the quotas set for the next two seasons.",
    "A choir from the northern villages won the regional contest with a programme of old sea songs arranged by their young conductor.",
    "Roadworks on the coastal highway will close two lanes for a month while engineers replace the drainage under the old stone bridge.",
]


def _other_stories(heading: str) -> str:
    cards = "".join(
        f"<div class='card'><h3><a href='/s/{i}'>Story {i} of the valley</a></h3><div class='by'><a href='/a'>Webmaster</a></div>"
        f"<div class='excerpt'><p>{s}</p></div></div>"
        for i, s in enumerate(OTHER_STORIES)
    )
    return f"<div class='also'><h2>{heading}</h2>{cards}</div>"


def test_a_box_of_other_stories_named_by_its_heading_is_dropped_from_the_story():
    # The teasers' excerpts are paragraphs of their own: only the heading says what they are.
    for heading in ("Also in the news", "Similar threads", "RELATED ARTICLES:"):
        out = text(page(article_extra=_other_stories(heading) + "".join(f"<p>{p}</p>" for p in ARTICLE[:1]).replace("The river", "The lake")))
        assert all(p in out for p in ARTICLE)
        for gone in OTHER_STORIES + [heading, "Webmaster"]:
            assert gone not in out, gone


def test_a_heading_naming_other_pages_keeps_what_is_the_story_or_not_a_box_of_pages():
    # The story goes on below the box in its own paragraphs' slot: nothing after the heading goes.
    after = "".join(f"<p>{p.replace('The', 'Later, the', 1)}</p>" for p in ARTICLE)
    out = text(page(article_extra=f"<h2>Related</h2>{after}"))
    assert "Related" in out and all(p.replace("The", "Later, the", 1) in out for p in ARTICLE)
    # "See also" is a reference's own links.
    out = text(page(article_extra=_other_stories("See also")))
    assert all(s in out for s in OTHER_STORIES)


SERVICES = [
    "We repair roofs and gutters across the valley, in every season.",
    "Our engineers inspect chimneys and insulation within a week of your call.",
]


def _service_page(wrap: str = "{}") -> str:
    first = "".join(f"<p>{p}</p>" for p in ARTICLE[:2])
    rest = "".join(f"<section><h2>Service {i}</h2><p>{p}</p></section>" for i, p in enumerate(SERVICES))
    partners = "".join(f"<a href='/p{i}'>Partner company number {i}</a> " for i in range(4))
    return (
        "<html><body><nav><a href='/'>Home</a></nav><main>"
        + wrap.format(f"<section><h2>What we do</h2>{first}</section>")
        + f"{rest}<div class='partners'>{partners}</div></main></body></html>"
    )


def test_a_main_of_several_sections_is_the_region_unless_the_region_is_a_story():
    out = text(_service_page())
    assert all(p in out for p in ARTICLE[:2] + SERVICES)
    assert "Partner company" not in out
    # The same sections beside an <article>: the article is the region, as it was.
    out = text(_service_page("<article>{}</article>"))
    assert all(p in out for p in ARTICLE[:2]) and not any(p in out for p in SERVICES)


def _firsts(nodes) -> list[int]:
    """The nodes in document order, each once (lexbor lists a node once per selector it matches)."""
    seen: dict[int, None] = {}
    for node in nodes:
        seen.setdefault(node.mem_id, None)
    return list(seen)


@hsettings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.tuples(_META_PIECES, st.sampled_from(["Shop", "Ünïcode", "a  b", "x"])), max_size=12),
       both=st.sampled_from(["", ' itemtype="http://schema.org/Product"', ' ITEMTYPE="schema.org/Other"']))
def test_property_one_query_finds_the_nodes_of_page_meta_and_product_facts(pieces, both):
    from pagetwin.html import noise
    from pagetwin.html.blocks import BlockWalker

    # (Tags that are both kinds: a <meta> or <title> with an itemtype; the root element too.)
    extra = [f'<meta name="description" content="d"{both}>', f"<title{both}>t</title>", f'<meta name="x"{both}>']
    html = f"<html{both if len(pieces) % 3 == 1 else ''}><head>" + "".join(piece.format(w=word) for piece, word in pieces)
    tree = parse_html(html + "".join(extra[: len(pieces) % 4]) + "</body></html>")
    native, python = BlockWalker(), BlockWalker(native=False)
    assert native.native is not None  # (the native walk is built here: tests/html/test_blocks.py)
    found = [noise._head_nodes(tree, native), noise._head_nodes(tree, python), noise._head_nodes(tree), noise._head_nodes_reference(tree)]
    reference = found[-1]
    for meta, products in found:
        # (A Product's element that holds a title or a description is a page_meta node too, as it
        # always was: css_matches asks the element and what it holds; the reader skips it.)
        assert set(_firsts(tree.css(noise._META_TAGS))) <= set(_firsts(meta))
        assert _firsts(products) == _firsts(tree.css(noise._LD_JSON + ", " + noise._PRODUCT_MICRODATA))
        assert (_firsts(meta), _firsts(products)) == (_firsts(reference[0]), _firsts(reference[1]))
        assert noise._page_meta_of(meta) == noise.page_meta(tree) == _page_meta_reference(tree)
        assert noise._product_facts_of(tree, products) == noise.product_facts(tree) == _product_facts_reference(tree)
    # The native candidates list each node once; without the native walk, the reference runs.
    assert [n.mem_id for n in found[0][0]] == _firsts(found[0][0])
    assert [n.mem_id for n in found[0][1]] == _firsts(found[0][1])
    assert [[n.mem_id for n in nodes] for nodes in found[1]] == [[n.mem_id for n in nodes] for nodes in reference]


# Pieces of nested tables (some with a header cell, in foreign content or a template too).
_TABLE_PIECES = st.sampled_from([
    "<table>", "</table>", "<tr>", "</tr>", "<th>h</th>", "<td>c</td>", "<td>", "</td>", "<div>", "</div>",
    "<svg><table><th>x</th></table></svg>", "<template><table><th>t</th></table></template>", "<p>p</p>", "<th>",
])  # fmt: skip


@hsettings(max_examples=300, deadline=None)
@given(pieces=st.lists(_TABLE_PIECES, max_size=30), rows=st.integers(0, 7))
def test_property_native_tables_holding_a_header_cell_are_the_css_ones(pieces, rows):
    from pagetwin.html import noise
    from pagetwin.html.blocks import BlockWalker

    body = "".join(pieces) + "<table><tr><th>Year</th><th>Name</th><th>Score</th></tr>"
    body += "".join(f"<tr><td>{1990 + i}</td><td>Name {i}</td><td>{i * 7}</td></tr>" for i in range(rows)) + "</table>"
    tree = parse_html(f"<html><body>{body}</body></html>")
    walker = BlockWalker()
    tables = [t.mem_id for t in tree.css("table") if t.css_first("th") is not None]
    assert [t.mem_id for t in walker.native.tables_holding(tree.root, noise._TABLE_ID, noise._TH_ID)] == tables
    assert noise.data_table_rows(tree, walker) == noise.data_table_rows(tree)
    assert len(noise.data_table_rows(tree)) >= (rows + 1 if rows + 1 >= noise.TABLE_ROWS else 0)
