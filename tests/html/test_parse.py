import codecs

from hypothesis import given, strategies as st

from pagetwin.html.parse import decode_html, detect_charset, limit_depth, looks_like_html, parse_html


def test_http_header_wins_over_meta():
    body = '<meta charset="utf-8"><p>Привет</p>'.encode("cp1251")
    text, charset, replaced = decode_html(body, "windows-1251")
    assert "Привет" in text and charset == "cp1251" and replaced == 0


def test_bom_then_meta_then_detection():
    assert detect_charset(codecs.BOM_UTF8 + b"<p>x</p>", "latin-1") == "utf-8"
    gbk = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312"></head><body>中文网页内容</body></html>'.encode("gbk")
    text, charset, _ = decode_html(gbk)
    assert charset == "gb18030" and "中文网页内容" in text
    # No declaration at all: detected.
    text, _, _ = decode_html(("<p>" + "Съешь же ещё этих мягких французских булок. " * 20 + "</p>").encode("cp1251"))
    assert "французских" in text


def test_wrong_label_never_loses_the_page():
    body = "<p>naïve café</p>".encode("utf-8") + b"\xff\xfe\x80"
    text, _, replaced = decode_html(body, "utf-8")
    assert "café" in text and replaced >= 1


def test_unknown_label_falls_back():
    text, charset, _ = decode_html(b"<p>plain</p>", "x-no-such-charset")
    assert "plain" in text


@given(st.binary(max_size=512), st.sampled_from([None, "utf-8", "gbk", "bogus", "utf-16"]))
def test_decode_never_raises(body, label):
    text, charset, replaced = decode_html(body, label)
    assert isinstance(text, str) and replaced >= 0


def test_sniffing():
    assert looks_like_html(b"<!DOCTYPE html><html><body>x</body></html>")
    assert looks_like_html(b"\n\n  <div class=a>hello</div>")
    assert not looks_like_html(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert not looks_like_html(b"GIF89a\x01\x00\x01\x00\x00\x00\x00")
    assert not looks_like_html(b'{"json": true}')
    assert not looks_like_html(b"")


def test_deep_dom_parses_in_linear_time_and_keeps_its_text():
    import time

    start = time.process_time()
    tree = parse_html("<p>top</p>" + "<div><span>" * 50_000 + "deep" + "</span></div>" * 50_000, max_depth=64)
    assert time.process_time() - start < 5  # unguarded, lexbor takes about a minute here
    assert "deep" in tree.body.text() and "top" in tree.body.text()
    depth, node = 0, tree.body
    while node.child is not None:
        node, depth = node.child, depth + 1
    assert depth <= 70


def test_limit_depth_leaves_ordinary_pages_alone():
    html = "<html><body>" + "<ul>" + "<li>item" * 600 + "</ul><p>a<p>b</body></html>"
    assert limit_depth(html, 64) == (html, False)


def test_utf16_without_bom():
    for enc in ("utf-16-le", "utf-16-be"):
        text, charset, _ = decode_html("<html><body><p>Grüße</p></body></html>".encode(enc), "utf-8")
        assert charset == enc and "Grüße" in text


@given(st.lists(st.sampled_from(["<div>", "</div>", "<span>", "</span>", "<br>", "<p>", "text", "</x>", "<!-- c -->", "<b>", "</b>"]), max_size=300))
def test_depth_bound_never_underestimates(parts):
    from pagetwin.html.parse import _depth_bound

    html = "".join(parts)
    depth = deepest = 0
    stack: list[str] = []
    for part in parts:  # a parser's stack: an end tag pops to its element, a stray one is ignored
        if part in ("<div>", "<span>", "<b>"):
            stack.append(part[1:-1])
            deepest = max(deepest, len(stack))
        elif part.startswith("</") and part[2:-1] in stack:
            while stack.pop() != part[2:-1]:
                pass
    assert _depth_bound(html) >= deepest


def test_stray_end_tags_do_not_hide_deep_nesting():
    import time

    html = "<div></x>" * 50_000 + "bottom"
    start = time.process_time()
    tree = parse_html(html, max_depth=64)
    assert time.process_time() - start < 5
    assert "bottom" in tree.body.text()


_FRAGMENTS = ["<div>", "</div>", "<span>", "</x>", "<a href='é'>", "</a>", "<p>", "é", "中文", "😀", "<", "</", "<!-- c -->", " ", "x"]
_BAD_BYTES = [b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"<\xc3\xa9", b"</\xe2\x82", b"<di\xff"]


@given(st.lists(st.one_of(st.sampled_from(_FRAGMENTS).map(lambda f: f.encode("utf-8")), st.sampled_from(_BAD_BYTES)), max_size=200))
def test_depth_bound_from_the_utf8_body_equals_the_bound_from_the_text(parts):
    from pagetwin.html.parse import _depth_bound, _last_utf8

    body = b"".join(parts)
    text, charset, _ = decode_html(body, "utf-8")
    assert charset == "utf-8" and _last_utf8(text) is not None  # the bound will read the bytes
    copy = (text + "x")[:-1]  # an equal text that decode_html did not make: read as text
    assert len(text) < 2 or _last_utf8(copy) is None  # (short strings are shared singletons)
    assert _depth_bound(text) == _depth_bound(copy)
    assert limit_depth(text, 3) == limit_depth(copy, 3)


def test_parse_limited_parses_a_valid_utf8_body_as_is_and_flags_flattening():
    from selectolax.lexbor import LexborHTMLParser

    from pagetwin.html.parse import parse_limited

    body = "<html><body><p>Grüße, 中文 😀</p><div><b>x</b></div></body></html>".encode("utf-8")
    text = decode_html(body)[0]
    tree, flattened = parse_limited(text, 64)
    assert tree.html == LexborHTMLParser(text).html and not flattened
    # Invalid bytes: the text (with U+FFFD) is what gets parsed.
    text = decode_html(body + b"<p>\xff</p>")[0]
    assert parse_limited(text, 64)[0].html == LexborHTMLParser(text).html
    deep = decode_html(("<div>" * 200 + "bottom").encode("utf-8"))[0]
    tree, flattened = parse_limited(deep, 64)
    assert flattened and "bottom" in tree.body.text()
