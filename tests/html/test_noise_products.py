"""Product pages (``html.noise``'s product rules): the boxes of other items a shop shows beside
the item, and the item's own block when such a box was all the page-level rules found."""

from pagetwin.html.noise import extract
from pagetwin.html.parse import parse_html
from tests.fixtures.sites import paragraph

import random

_PRODUCT_LD = '<script type="application/ld+json">{"@type": "Product", "name": "Trail pack 25"}</script>'
ITEM = ["Trail pack 25 litres, forest green", "EUR 63.12", "Condition: new with tags", "Delivery: Varies"]
# The facts of an item's block, each too short to be content on its own for the page-level rules.
FACTS = ["EUR 63.12", "New with tags", "Free delivery", "Ships from Hamburg", "Returns within 30 days",
         "Seller rated 99.8 % positive", "Only 3 left in stock", "Expected in 2 to 4 weeks", "Gift wrapping available"]  # fmt: skip


def _card_texts(seed: int = 5, n: int = 8) -> list[str]:
    rng = random.Random(seed)
    return [paragraph(rng) for _ in range(n)]


def _shop(head: str, heading: str, cards: list[str], item_lines: list[str] = ITEM[1:]) -> str:
    item = "".join(f"<div class='line'>{t}</div>" for t in item_lines)
    box = "".join(f"<div class='card'><div class='card-text'>{c}</div><span>EUR {i}.99</span></div>" for i, c in enumerate(cards))
    return (f"<html><head>{head}</head><body><div id='page'>"
            f"<div class='item'><div class='title'><h1>{ITEM[0]}</h1></div><div class='facts'>{item}</div></div>"
            f"<div class='carousel'><h2>{heading}</h2><div class='cards'>{box}</div></div>"
            f"</div></body></html>")  # fmt: skip


def text(html: str) -> str:
    return extract(parse_html(html)).text


def test_a_carousel_of_similar_items_is_not_the_item():
    cards = _card_texts()
    # The page-level rules alone take the carousel: its cards hold the most text.
    assert all(c in text(_shop("", "Similar items", cards)) for c in cards)
    out = text(_shop(_PRODUCT_LD, "Similar items", cards))
    assert not any(c in out for c in cards) and "Similar items" not in out
    assert all(t in out for t in ITEM)  # the item's own block: its title, price, condition


def test_a_box_not_of_other_items_stays():
    cards = _card_texts()
    # A product page whose long text sits under another heading keeps it.
    out = text(_shop(_PRODUCT_LD, "Product details", cards))
    assert all(c in out for c in cards)


COOKIES = [
    "Cookies are small data files that allow a website to collect and store data on your computer or phone, "
    "and they help us provide important features and functionality on our websites and apps.",
    "Essential technologies are strictly necessary to provide you with the services of our websites, such as "
    "form submissions and media playback; to disable all of them please use the settings of your browser.",
    "Performance technologies collect information about how you use a website, such as which pages you visited "
    "and which links you clicked on, and their sole purpose is to improve the website for everyone.",
]


def _shop_with_dialog(head: str, item_lines: list[str]) -> str:
    dialog = "".join(f"<p>{c}</p>" for c in COOKIES)
    item = "".join(f"<div class='line'>{t}</div>" for t in item_lines)
    return (f"<html><head>{head}</head><body><div id='page'><div class='item'><div class='title'><h1>{ITEM[0]}</h1></div>"
            f"<div class='facts'>{item}</div></div></div><div class='panel'>{dialog}</div></body></html>")  # fmt: skip


def test_a_region_that_does_not_name_the_item_gives_way_to_the_item():
    # The page-level rules take the cookie dialog (the most prose); it says nothing of the item.
    assert all(c in text(_shop_with_dialog("", FACTS)) for c in COOKIES)
    out = text(_shop_with_dialog(_PRODUCT_LD, FACTS))
    assert not any(c in out for c in COOKIES) and all(t in out for t in [ITEM[0]] + FACTS)
    # A title with little under it (a listing's heading and its count) is no item's block:
    # under GOOD_SIZE of facts, the region stays.
    out = text(_shop_with_dialog(_PRODUCT_LD, FACTS[:6]))
    assert all(c in out for c in COOKIES) and ITEM[0] not in out


REVIEWS = [
    "I liked this bag a lot and used it on multiple short day hikes without a single complaint about it.",
    "The straps are a game changer, so comfortable on long climbs, and the pockets hold everything I need.",
    "Took this pack out for the first time last weekend and loved it, there is a lot of room for the food.",
]
DESCRIPTION = [
    "Keep the gear of your day within easy reach in the trail pack, designed to fit a wide range of bodies.",
    "Ripstop nylon main body fabric has a durable water repellent finish that helps moisture bead up on it.",
    "A U-shaped panel with two zipper sliders offers quick access to gear and total access when fully open.",
]


def _reviewed(head: str) -> str:
    desc = "".join(f"<p>{p}</p>" for p in DESCRIPTION)
    reviews = "".join(f"<div class='review'><p>{r} {r}</p></div>" for r in REVIEWS)
    summary = "<div class='summary'><div>Reviews</div><div>159 reviews with an average rating of 4.4 out of 5 stars</div></div>"
    return (f"<html><head>{head}</head><body><div id='page'><h1>Trail pack 25</h1>{desc}"
            f"<div class='reviews'><h2>{summary}</h2><div class='list'>{reviews}</div></div></div></body></html>")  # fmt: skip


def test_a_reviews_heading_that_holds_its_rating_summary_is_still_the_reviews_heading():
    assert all(r in text(_reviewed("")) for r in REVIEWS)  # not a product page: kept
    out = text(_reviewed(_PRODUCT_LD))
    assert all(p in out for p in DESCRIPTION) and not any(r in out for r in REVIEWS)
