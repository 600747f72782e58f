"""Pass 1's page rules made cheaper (issue 16) against their references: each fast version
must give what its reference gives, on made-up blocks and on real pages."""

from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from pagetwin.html.blocks import Blocks
from pagetwin.html.noise import _drop_other_pages, _reference_drop_other_pages

_TEXTS = ["Related articles", " Related posts: ", "More from Bob Smith", "You may also like", "Story text " * 3,
          "Top stories", "related", "", "x" * 70, "Read next!", "trending now", "Weiter lesen"]  # fmt: skip


@st.composite
def blocks_and_keep(draw):
    n = draw(st.integers(0, 30))
    parent = [draw(st.integers(-1, b - 1)) for b in range(n)]
    blocks = Blocks(
        tag=["div"] * n,
        parent=parent,
        sig=[draw(st.integers(0, 4)) for _ in range(n)],
        hash=[0] * n,
        text=[draw(st.sampled_from(_TEXTS)) for _ in range(n)],
        link=[0] * n,
        size=[draw(st.integers(0, 300)) for _ in range(n)],
    )
    keep = [draw(st.booleans()) for _ in range(n)]
    return blocks, keep


@hsettings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks_and_keep())
def test_drop_other_pages_is_its_reference(case):
    blocks, keep = case
    fast, reference = list(keep), list(keep)
    _drop_other_pages(blocks, fast)
    _reference_drop_other_pages(blocks, reference)
    assert fast == reference


# -- the native walk's own test of a hidden box (_walk.NativeWalk.not_disclosed) ---------------

_HIDDEN_PIECES = [
    "<div hidden>", "<div style='display:none'>", "<section aria-hidden='true' class='slide x'>",
    "<div hidden id='content-1'>", "<div hidden id='S:1f'>", "<div hidden role='tabpanel'>", "<div hidden role='dialog'>",
    "<div hidden class='Tab-Pane'>", "<div hidden class='faq answer'>", "<div hidden class='menu panel'>",
    "<div hidden class='ünï'>", "<div hidden id='P:'>", "<div class='slide x'>", "<summary>Q</summary>",
    "<button aria-expanded='false'>+</button>", "<h3><button aria-controls='content-1'>Open</button></h3>",
    "<div><span><a aria-controls='x content-1'>o</a></span></div>", "<p>" + "Words of a paragraph here. " * 6 + "</p>",
    "</div>", "</section>", "text ", "<!-- c -->",
]  # fmt: skip


@hsettings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_HIDDEN_PIECES), max_size=30))
def test_not_disclosed_is_never_wrong(parts):
    # When the native walk says a hidden box is surely not walked, _disclosed_box says so too.
    import pytest

    from pagetwin.html import blocks
    from pagetwin.html.parse import parse_html

    if blocks.native_status() is not None:
        pytest.skip(f"native walk off: {blocks.native_status()}")
    native = blocks.BlockWalker().native
    tree = parse_html("<html><body>" + "".join(parts) + "</body></html>")
    for node in tree.root.traverse():
        if node.is_element_node and native.not_disclosed(node):
            assert not blocks._disclosed_box(node), node.html


# -- product facts from the head nodes ----------------------------------------------------------


@hsettings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.tuples(st.sampled_from([
    '<script type="application/ld+json">{{"@type": "Product", "description": "{w} long"}}</script>',
    '<script type="application/ld+json" itemtype="schema.org/Product">{{"@type": "Product", "description": "{w}"}}</script>',
    '<script itemtype="schema.org/Product">{w}</script>', '<script type="application/LD+json">{{"@type": "Product"}}</script>',
    '<div itemtype="http://schema.org/Product"><script type="application/ld+json">{{"@type": "Product", "description": "{w}"}}</script></div>',
    '<svg><script type="application/ld+json">{{"@type": "Product", "description": "{w}!"}}</script></svg>',
    '<template><script type="application/ld+json">{{"@type": "Product", "description": "{w}?"}}</script></template>',
    '<div ItemType="schema.org/Product">{w}</div>', "<p>{w}</p>", '<meta name="description" content="{w}">',
    '<script type="application/ld+json">{{"@type": "Thing"}}</script>', '<script type="application/ld+json">{{broken</script>',
]), st.sampled_from(["Shop", "Ünïcode", "a  b"])), max_size=10))  # fmt: skip
def test_product_facts_of_is_its_reference(pieces):
    from pagetwin.html import noise
    from pagetwin.html.blocks import BlockWalker
    from pagetwin.html.parse import parse_html

    tree = parse_html("<html><head>" + "".join(piece.format(w=word) for piece, word in pieces) + "</head><body></body></html>")
    for _, products in (noise._head_nodes(tree, BlockWalker()), noise._head_nodes_reference(tree)):
        assert noise._product_facts_of(tree, products) == noise._product_facts_of_reference(tree, products)
    assert noise.product_facts(tree) == noise._product_facts_of_reference(tree, tree.css(noise._LD_JSON + ", " + noise._PRODUCT_MICRODATA))
