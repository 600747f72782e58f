from hypothesis import given, settings as hsettings, strategies as st

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
