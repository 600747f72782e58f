"""Product pages (``html.noise``'s product rules): the boxes of other items a shop shows beside
the item, and the item's own block when such a box was all the page-level rules found."""

from pagetwin.html.noise import extract
from pagetwin.html.parse import parse_html
from tests.fixtures.sites import paragraph

import random

_PRODUCT_LD = '<script type="application/ld+json">{"@type": "Product", "name": "Trail pack 25"}</script>'
ITEM = ["Trail pack 25 litres, forest green", "EUR 63.12", "Condition: new with tags", "Delivery: Varies"]


def _card_texts(seed: int = 5, n: int = 8) -> list[str]:
    rng = random.Random(seed)
    return [paragraph(rng) for _ in range(n)]


def _shop(head: str, heading: str, cards: list[str]) -> str:
    item = "".join(f"<div class='line'>{t}</div>" for t in ITEM[1:])
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
