import codecs

import numpy as np
import pytest
from hypothesis import given, strategies as st

from pagetwin.html.parse import Decoded, _cjk_reading, decode_html, detect_charset, limit_depth, looks_like_html, parse_html


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
    from pagetwin.html.parse import _depth_bound

    body = b"".join(parts)
    decoded = decode_html(body, "utf-8")
    assert decoded.charset == "utf-8" and decoded.utf8 is body  # the bound will read the bytes
    assert _depth_bound(decoded) == _depth_bound(decoded.text)
    assert limit_depth(decoded, 3) == limit_depth(decoded.text, 3)


def test_parse_limited_parses_a_valid_utf8_body_as_is_and_flags_flattening():
    from selectolax.lexbor import LexborHTMLParser

    from pagetwin.html.parse import parse_limited

    body = "<html><body><p>Grüße, 中文 😀</p><div><b>x</b></div></body></html>".encode("utf-8")
    decoded = decode_html(body)
    assert decoded.strict and decoded.utf8 is body
    tree, flattened = parse_limited(decoded, 64)
    assert tree.html == LexborHTMLParser(decoded.text).html == parse_limited(decoded.text, 64)[0].html
    assert not flattened
    # Invalid bytes: the text (with U+FFFD) is what gets parsed.
    decoded = decode_html(body + b"<p>\xff</p>", "utf-8")
    assert not decoded.strict and decoded.replaced == 1
    assert parse_limited(decoded, 64)[0].html == LexborHTMLParser(decoded.text).html
    deep = decode_html(("<div>" * 200 + "bottom").encode("utf-8"))
    tree, flattened = parse_limited(deep, 64)
    assert flattened and "bottom" in tree.body.text()
    assert tree.html == parse_limited(deep.text, 64)[0].html


def test_decode_html_is_a_record_that_unpacks_as_before():
    decoded = decode_html("<p>café</p>".encode("cp1252"), "latin-1")
    text, charset, replaced = decoded[:3]
    assert (text, charset, replaced) == ("<p>café</p>", "cp1252", 0)
    assert decoded.utf8 is None and not decoded.strict and decoded.refused_charsets == 0
    # Two decodings keep nothing of each other (no state between calls).
    first, second = decode_html(b"<p>one</p>"), decode_html(b"<p>two</p>")
    assert first.utf8 == b"<p>one</p>" and second.utf8 == b"<p>two</p>"


_PAGE = "<html><head>%s</head><body><p>Grüße aus Köln, naïve café</p></body></html>"
# Labels Python's codecs know that are no text encoding of an HTML page (they raise on the
# bytes, re-interpret the markup, or are bytes-to-bytes transforms), and junk.
_BAD_LABELS = ["idna", "punycode", "utf-7", "unicode_escape", "raw_unicode_escape", "undefined", "rot13",
               "base64", "zlib", "hex", "uu", "bz2", "quopri", "utf-8\x00", "\x00", "utf-8; x", "x" * 200,
               "no-such-charset"]  # fmt: skip


def test_a_charset_that_is_no_html_encoding_never_loses_the_page():
    for label in _BAD_LABELS:
        body = (_PAGE % "").encode("utf-8")
        decoded = decode_html(body, label)  # in the HTTP header
        assert "Grüße aus Köln" in decoded.text and decoded.charset == "utf-8", label
        assert decoded.refused_charsets == 1 and decoded.replaced == 0, label
        meta = "".join(c for c in label if c.isalnum() or c in "-_:.")
        if meta != label:
            continue  # (what a meta tag cannot hold)
        body = (_PAGE % f'<meta charset="{meta}">').encode("utf-8")
        decoded = decode_html(body)  # in a meta tag
        assert "Grüße aus Köln" in decoded.text and decoded.charset == "utf-8", label
        assert decoded.refused_charsets == 1, label
        # Both refused, then detection: a cp1252 page is still read as cp1252.
        body = (_PAGE % f'<meta charset="{meta}">').encode("cp1252")
        decoded = decode_html(body, label)
        assert "Grüße aus Köln" in decoded.text and decoded.refused_charsets == 2, label


def test_a_refused_http_charset_falls_back_to_the_meta_tag():
    body = (_PAGE % '<meta charset="windows-1252">').encode("cp1252")
    decoded = decode_html(body, "idna")
    assert decoded.charset == "cp1252" and "Grüße aus Köln" in decoded.text and decoded.refused_charsets == 1
    assert decode_html(body, "windows-1252").refused_charsets == 0


@given(st.text(max_size=30), st.binary(max_size=300))
def test_decode_html_never_raises_whatever_the_label(label, body):
    decoded = decode_html(body + (_PAGE % "").encode("utf-8"), label)
    assert isinstance(decoded.text, str) and decoded.replaced >= 0 and decoded.refused_charsets in (0, 1, 2)


def test_a_page_with_a_charset_that_raised_is_analysed_not_dropped():
    # Before: charset=idna / punycode / a NUL raised inside decoding, and pass 2 dropped the page
    # as "extract-error"; now it is read (the label ignored, and counted with the page).
    from pagetwin.config import Settings
    from pagetwin.model import Page
    from pagetwin.pipeline import Worker

    worker = Worker(Settings())
    article = "<p>" + "Grüße aus Köln, eine lange Geschichte über den Fluss und die Brücke. " * 8 + "</p>"
    for label in ("idna", "punycode", "utf-8\x00"):
        page = Page(id="p", url="http://example.org/a", body=f"<html><body>{article}</body></html>".encode(), http_charset=label)
        result = worker.fingerprint(page)
        assert result.error == "" and "Brücke" in result.doc.text, label
        assert worker.parse(page).refused_charsets == 1


def test_limit_depth_is_linear_on_a_tail_of_unclosed_tags():
    """'<a<a<a...' after the last '>' made every '<a' scan to the end of the text (found by
    bench/fuzz.py: 64 KB took 2 s). Time as a ratio against a clean text of the same size."""
    import time

    from pagetwin.html.parse import limit_depth

    deep = "<div>" * 600 + "deep"
    hostile = deep + "<a" * 40_000
    clean = deep + "</div>" * 600 + "x " * ((len(hostile) - len(deep) - 3600) // 2)

    def best(text):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            limited, cut = limit_depth(text, 512)
            times.append(time.perf_counter() - t)
        assert cut
        return min(times), limited

    hostile_time, limited = best(hostile)
    clean_time, _ = best(clean)
    assert limited.endswith("<a" * 40_000)  # the text after the last tag is kept as it was
    assert hostile_time < 20 * clean_time + 0.02


# -- CJK pages without a label, with a broken character pair (chinese_wce 6dc2d508) ----------

_HANZI = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经"
_KANA = "のはをにがでとしたてるいうかもなこれそあまりすおよ日本語文章東京会社時間"
_CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЭЮЯ"


def _cjk_page(chars: str, codec: str, seed: int = 1) -> bytes:
    """An unlabelled page of CJK text in ``codec`` with one lead byte cut off its pair halfway
    through (a truncated character, as in crawled GBK pages), so that no CJK codec decodes it
    strictly."""
    import random

    rng = random.Random(seed)
    text = "".join(rng.choice(chars) + ("，" if rng.random() < 0.1 else "") + ("。" if rng.random() < 0.05 else "") for _ in range(2000))
    half = len(text) // 2
    head, tail = f"<html><head><title>t</title></head><body><p>{text[:half]}", f"{text[half:]}</p></body></html>"
    return head.encode(codec) + b"\xeb/" + tail.encode(codec)


def test_an_unlabelled_cjk_page_with_a_broken_pair_is_read_as_cjk():
    for chars, codec, want in ((_HANZI, "gbk", "gb18030"), (_KANA, "cp932", "cp932"), (_HANZI, "utf-8", "utf-8"), (_KANA, "utf-8", "utf-8")):
        body = _cjk_page(chars, codec)
        for strict in ("utf-8", "gb18030", "big5hkscs", "cp932", "euc_jp"):
            try:
                body.decode(strict)
                raise AssertionError(f"{strict} decodes the planted page strictly")
            except UnicodeDecodeError:
                pass
        got = decode_html(body)
        assert got.charset == want, (codec, got.charset)
        assert got.replaced <= 2 and got.text == body.decode(want, errors="replace")
        assert sum(c in chars for c in got.text) >= 1900  # the text, not a code page's letters


@given(st.lists(st.text(alphabet=_CYRILLIC, min_size=1, max_size=12), min_size=200, max_size=600),
       st.sampled_from(["cp1251", "koi8_r", "iso8859_5"]))  # fmt: skip
def test_cyrillic_text_is_never_read_as_cjk(words, codec):
    # (What charset_normalizer itself makes of degenerate text, "А А А", is its own affair:
    # the CJK reading must never be what turns a Cyrillic page into CJK.)
    assert _cjk_reading(f"<html><body><p>{' '.join(words)}</p></body></html>".encode(codec)) is None


def test_single_byte_pages_are_not_read_as_cjk():
    import random

    rng = random.Random(3)
    samples = {
        "cp1253": "ξεσκεπάζω την ψυχοφθόρα βδελυγμία και η αλεπού πήδηξε πάνω από το σκυλί",
        "cp1252": "élan café déjà où être à côté français garçon leçon noël naïve très époque le la de et",
        "cp1251": "съешь же ещё этих мягких французских булок да выпей чаю",
    }
    for codec, words in samples.items():
        text = " ".join(rng.choice(words.split()) for _ in range(3000))
        got = decode_html(f"<html><body><p>{text}</p></body></html>".encode(codec))
        assert got.charset not in ("gb18030", "big5hkscs", "cp932", "euc_jp"), (codec, got.charset)


@given(st.binary(max_size=3000))
def test_property_binary_control_bytes_counted_by_deletion_as_by_the_pattern(data):
    """looks_like_html counts a head's control bytes by deleting them: as many as the pattern finds."""
    from pagetwin.html.parse import _BINARY_CTRL, _BINARY_CTRL_BYTES

    assert len(data) - len(data.translate(None, _BINARY_CTRL_BYTES)) == len(_BINARY_CTRL.findall(data))


# -- strict UTF-8 checked without decoding (html/_walk.pyx's utf8_valid), the text made when read

# Pieces that put every kind of sequence (ASCII, 2-4 bytes, overlong, surrogate, past U+10FFFF,
# cut, stray continuation) at every offset of the native check's 8- and 32-byte ASCII steps.
_UTF8_PIECES = [b"a", b"<p>", b"x" * 7, b"y" * 31, "é".encode(), "中".encode(), "😀".encode(), b"\xc3", b"\xe2\x82",
                b"\xf0\x9f\x98", b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\x9f\xbf",
                b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf4\x8f\xbf\xbf",
                b"\xf5\x80\x80\x80", b"\xff", b"\xfe", b"\xee\x80\x80", b"\xef\xbf\xbf", b"\x00"]  # fmt: skip


@given(st.lists(st.sampled_from(_UTF8_PIECES), max_size=60).map(b"".join) | st.binary(max_size=200))
def test_property_native_utf8_check_is_the_decoder(body):
    import pytest

    from pagetwin.html import parse

    if parse._native_utf8_valid is None:
        pytest.skip("native kernels not built")
    assert parse._native_utf8_valid(body) == parse._utf8_valid_reference(body)


def test_native_utf8_check_on_every_two_and_three_byte_sequence():
    import pytest

    from pagetwin.html import parse

    if parse._native_utf8_valid is None:
        pytest.skip("native kernels not built")
    pad = b"a" * 30  # the sequence astride the 32-byte step
    for lead in range(0x80, 0x100):
        for second in range(0x70, 0x100):
            for tail in (b"", b"\x80", b"\xbf\x80", b"\x80\x80\x80", b"a"):
                body = pad + bytes([lead, second]) + tail
                assert parse._native_utf8_valid(body) == parse._utf8_valid_reference(body), body


@given(st.lists(st.sampled_from(_UTF8_PIECES + [b"<meta charset='utf-8'>", b"<div>" * 3]), max_size=60).map(b"".join),
       st.sampled_from([None, "utf-8", "utf-16", "latin-1", "bogus"]))  # fmt: skip
def test_property_decode_html_with_the_text_made_when_read_is_the_eager_decoding(body, label):
    from pagetwin.html import parse

    native = parse._native_utf8_valid
    try:
        parse._native_utf8_valid = None  # the decoder itself says whether the body is UTF-8
        eager = decode_html(body, label)
        eager_tree = parse.parse_limited(eager, 4)[0].html
    finally:
        parse._native_utf8_valid = native
    lazy = decode_html(body, label)
    assert parse.parse_limited(lazy, 4)[0].html == eager_tree  # (before the text is read)
    fields = ("text", "charset", "replaced", "refused_charsets", "utf8", "strict")
    assert [getattr(lazy, f) for f in fields] == [getattr(eager, f) for f in fields]
    assert lazy == eager == tuple(eager) and tuple(lazy) == (eager.text, eager.charset, eager.replaced)
    assert lazy[0] == eager.text and lazy[:2] == eager[:2] and len(lazy) == 3 and hash(lazy) == hash(eager)


def test_a_strict_utf8_body_is_parsed_without_its_text_being_made():
    from pagetwin.html import parse

    decoded = decode_html("<html><body><p>Grüße</p></body></html>".encode())
    assert decoded.strict and decoded._text is None
    parse.parse_limited(decoded, 64)
    assert decoded._text is None and decoded.text == "<html><body><p>Grüße</p></body></html>"


def test_each_one_byte_codec_reads_one_character_a_byte_ascii_kept():
    from pagetwin.html.parse import _ONE_BYTE_CODECS

    every_byte = bytes(range(256))
    mixed = bytes((i * 37 + 11) % 256 for i in range(4096))
    for name in _ONE_BYTE_CODECS:
        assert codecs.lookup(name).name == name  # (decode_html's charsets are Python's own names)
        text = every_byte.decode(name, errors="replace")
        assert len(text) == 256 and text[:128] == every_byte[:128].decode("ascii"), name
        assert all(ord(c) >= 0x80 for c in text[128:]), name
        # stateless: a run of bytes reads as its bytes one by one
        assert mixed.decode(name, errors="replace") == "".join(text[b] for b in mixed), name


_ONE_BYTE_FRAGMENTS = [b"<div>", b"</div>", b"<span>", b"</x>", b"<a href='\xe9'>", b"</a>", b"<p>", b"<", b"</",
                       b"<!-- c -->", b" ", b"x", b"<di\xff>", b"<\xe9a>", b"</\xc0>", b"<b\xe9\xe9>", b"</b>"]  # fmt: skip


@given(st.lists(st.sampled_from(_ONE_BYTE_FRAGMENTS), max_size=200),
       st.sampled_from(["cp1252", "cp1250", "iso8859-1", "cp1251", "koi8-r", "mac-roman", "cp874", "ascii"]))  # fmt: skip
def test_depth_guard_from_a_one_byte_body_equals_the_guard_from_the_text(parts, charset):
    from pagetwin.html.parse import _ONE_BYTE_CODECS, _code_units, _depth_bound

    body = b"".join(parts)
    decoded = decode_html(body, charset)
    assert decoded.charset in _ONE_BYTE_CODECS and decoded.one_byte_body is body  # the guard will read the bytes
    assert _code_units(decoded).dtype == np.uint8
    assert _depth_bound(decoded) == _depth_bound(decoded.text)
    for depth in (1, 3, 8):
        assert limit_depth(decoded, depth) == limit_depth(decoded.text, depth)


def test_only_a_one_byte_code_page_keeps_its_body_for_the_depth_guard():
    page = "<p>Grüße</p>".encode("cp1252")
    assert decode_html(page, "windows-1252").one_byte_body is page
    assert decode_html(page, "utf-8").one_byte_body is None  # (UTF-8 with errors: utf8 is the body)
    assert decode_html("<p>中文</p>".encode("gb18030"), "gb18030").one_byte_body is None
    assert decode_html(page, "windows-1252")._replace(text="<p>x</p>").one_byte_body is None
    with pytest.raises(ValueError):
        Decoded("<p>x</p>", "gb18030", 0, one_byte_body=b"<p>x</p>")
