"""The native pass-1 statistics (html/_stats.pyx) against their reference,
``templates.blocks_stats_reference``: the same PageStats on generated and real pages."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import ExtractSettings
from pagetwin.html import templates
from pagetwin.html.blocks import Blocks
from pagetwin.html.noise import parse_page
from pagetwin.html.parse import parse_html
from tests.fixtures.sites import paragraph

pytestmark = pytest.mark.skipif(templates._native_page_stats is None, reason="html._stats is not built")

_ARRAYS = ("hashes", "slots", "slot_kept", "content", "content_size")


def _same(a, b) -> None:
    for name in _ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert list(a.snippets.items()) == list(b.snippets.items())


@st.composite
def _blocks(draw):
    n = draw(st.integers(0, 40))
    keys = draw(st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=6))  # few: blocks share them
    key = st.sampled_from(keys)
    size = st.one_of(st.integers(0, 6), st.integers(0, 1 << 30))
    text = st.sampled_from(["", "", "a", "Menu", "x" * 100, "Ünïcode text of a block"])
    parent = [draw(st.integers(-1, b - 1)) if b else -1 for b in range(n)]
    blocks = Blocks(
        tag=["p"] * n, parent=parent, sig=draw(st.lists(key, min_size=n, max_size=n)),
        hash=draw(st.lists(key, min_size=n, max_size=n)), text=draw(st.lists(text, min_size=n, max_size=n)),
        link=[0] * n, size=draw(st.lists(size, min_size=n, max_size=n)),
        content=draw(st.lists(st.booleans(), min_size=n, max_size=n)),
    )  # fmt: skip
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return blocks, keep


@settings(max_examples=400, deadline=None)
@given(case=_blocks(), cap=st.sampled_from([0, 1, 3, 200]))
def test_property_native_stats_are_the_references(case, cap):
    blocks, keep = case
    settings_ = ExtractSettings()
    old = templates._SNIPPETS_PER_PAGE
    templates._SNIPPETS_PER_PAGE = cap
    try:
        _same(templates.blocks_stats(blocks, settings_, (keep, keep)), templates.blocks_stats_reference(blocks, settings_, (keep, keep)))
    finally:
        templates._SNIPPETS_PER_PAGE = old


def test_native_stats_of_real_pages_are_the_references():
    pages = [
        "<html><body><nav><a href=/>Home</a><a href=/n>News</a></nav><article><h1>T</h1>"
        + "".join(f"<p>{paragraph(random.Random(i))}</p>" for i in range(k))
        + "</article><footer><div><span></span><p>Contact us</p></div></footer></body></html>"
        for k in (0, 1, 5, 30)
    ]
    settings_ = ExtractSettings()
    for html in pages:
        parsed = parse_page(parse_html(html))
        _same(templates.blocks_stats(parsed.blocks, settings_, parsed.page_level()),
              templates.blocks_stats_reference(parsed.blocks, settings_, parsed.page_level()))  # fmt: skip


def test_columns_the_kernel_does_not_take_go_to_the_reference():
    settings_ = ExtractSettings()
    blocks = Blocks(tag=["p", "p"], parent=[-1, 0], sig=[1, 2], hash=[3, 1 << 64], text=["a", "b"], link=[0, 0], size=[1, 1],
                    content=[True, True])  # fmt: skip
    with pytest.raises(OverflowError):
        templates._native_page_stats(blocks.hash, blocks.sig, blocks.size, blocks.content, [True, True], blocks.text, blocks.parent, 200)
    with pytest.raises(OverflowError):  # as the reference does, which then decides
        templates.blocks_stats(blocks, settings_, ([True, True], [True, True]))
    short = Blocks(tag=["p"], parent=[-1], sig=[1], hash=[3], text=["a"], link=[0], size=[1], content=[True])
    with pytest.raises(ValueError):
        templates._native_page_stats(short.hash, short.sig, short.size, [], [True], short.text, short.parent, 200)
    _same(templates.blocks_stats(short, settings_, ([True], [True])), templates.blocks_stats_reference(short, settings_, ([True], [True])))
