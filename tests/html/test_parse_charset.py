"""Charset detection's shortcut (html/parse.py: _detected_encoding, _undecodable_codecs): the
code pages it excludes from charset_normalizer's run cannot decode the sample, and the encoding
detected is the one the plain ``from_bytes(sample).best()`` gives."""

import random

from charset_normalizer import from_bytes
from hypothesis import given, settings, strategies as st

from pagetwin.html.parse import (
    _ISO2022_CODECS,
    _STATELESS_CJK_CODECS,
    _detected_encoding,
    _undecodable_codecs,
)

# Text in the languages whose code pages detection weighs (written for this test).
_TEXTS = {
    "cp1252": "Le café où l'on déjeune est à côté de la gare; très élégant, naïve façade, garçons pressés.",
    "cp1250": "Příliš žluťoučký kůň úpěl ďábelské ódy. Zażółć gęślą jaźń, łódź płynie po rzece.",
    "cp1251": "Съешь же ещё этих мягких французских булок, да выпей чаю. Широкая электрификация.",
    "koi8_r": "В чащах юга жил бы цитрус? Да, но фальшивый экземпляр! Экспорт зерна вырос.",
    "cp1253": "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία. Η αλεπού πήδηξε πάνω από το σκυλί.",
    "gbk": "我们今天去公园散步，天气很好。这个城市的历史非常悠久，人们都很友好。",
    "gb18030": "中华人民共和国成立于一九四九年。经济发展迅速，科技不断进步。",
    "big5": "臺灣的夜市非常熱鬧，小吃種類繁多。我們明天一起去看電影吧。",
    "cp932": "今日は良い天気ですね。東京の桜はとても綺麗でした。カタカナも使います。",
    "euc_jp": "日本語の文章を書いています。ひらがなとカタカナと漢字が混ざります。",
    "cp949": "오늘은 날씨가 정말 좋네요. 서울의 가을은 아름답습니다. 한국어 문장입니다.",
    "euc_kr": "대한민국의 수도는 서울입니다. 우리는 내일 도서관에 갈 것입니다.",
}


def _page(text: str, codec: str, rng: random.Random, size: int) -> bytes:
    """An HTML-like page: ASCII markup around runs of ``text`` encoded in ``codec``."""
    parts = [b"<html><head><title>t</title><script>var x = 1;</script></head><body>"]
    words = text.split(" ") if " " in text else [text[i : i + rng.randint(1, 12)] for i in range(0, len(text), 6)]
    while sum(map(len, parts)) < size:
        parts.append(rng.choice([b"<p>", b"</p>", b" ", b"<a href='/x'>", b"</a>", b"\n", b"<div class=\"c\">"]))
        parts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))).encode(codec, "replace"))
    return b"".join(parts)


def _mutated(data: bytes, rng: random.Random, edits: int) -> bytes:
    """``data`` with a few bytes replaced, inserted or deleted (broken pairs, stray bytes)."""
    data = bytearray(data)
    for _ in range(edits):
        if not data:
            break
        at = rng.randrange(len(data))
        kind = rng.random()
        if kind < 0.4:
            data[at] = rng.randrange(256)
        elif kind < 0.7:
            data.insert(at, rng.choice([rng.randrange(0x80, 0x100), 0x1B, ord("~"), ord("{"), rng.randrange(0x80)]))
        else:
            del data[at]
    return bytes(data)


def _ascii_with_high_bytes(rng: random.Random, size: int, density: float) -> bytes:
    ascii_part = b"abcdefghijklmnopqrstuvwxyz ABCDEFG <p>.,;:'\"/=0123456789\n"
    return bytes(rng.randrange(0x80, 0x100) if rng.random() < density else rng.choice(ascii_part) for _ in range(size))


def _sample(seed: int) -> bytes:
    rng = random.Random(seed)
    kind = rng.randrange(5)
    size = rng.choice([40, 300, 2000, 2600, 6000, 20000])
    if kind == 0:
        return _ascii_with_high_bytes(rng, size, rng.choice([0.001, 0.01, 0.05, 0.3]))
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.choice([8, 64, 700])))
    codec = rng.choice(sorted(_TEXTS))
    page = _page(_TEXTS[codec], codec, rng, size)
    if kind == 2:
        return page
    if kind == 3:
        return _mutated(page, rng, rng.randint(1, 4))
    # text of two code pages (a page quoting another), or cut anywhere (a sample cut mid-pair)
    other = rng.choice(sorted(_TEXTS))
    mixed = page + _page(_TEXTS[other], other, rng, size // 2)
    return mixed[: rng.randrange(1, len(mixed) + 1)]


def _best(sample: bytes) -> str | None:
    best = from_bytes(sample).best()
    return best.encoding if best else None


def test_the_excluded_names_are_code_pages_detection_tries_under_those_names():
    from charset_normalizer.constant import IANA_SUPPORTED
    from charset_normalizer.utils import iana_name

    for codec in _ISO2022_CODECS + _STATELESS_CJK_CODECS + ("hz",):
        assert codec in IANA_SUPPORTED and iana_name(codec, False) == codec


def _decoded_by_an_excluded_codec(sample: bytes) -> str | None:
    """An excluded code page that decodes ``sample`` strictly after all (None: the exclusion holds)."""
    for codec in _undecodable_codecs(sample):
        try:
            sample.decode(codec)
        except UnicodeDecodeError:
            continue
        return codec
    return None


@settings(max_examples=400)
@given(st.integers(0, 2**32))
def test_property_an_excluded_code_page_cannot_decode_the_sample(seed):
    sample = _sample(seed)
    assert _decoded_by_an_excluded_codec(sample) is None


@given(st.binary(max_size=400))
def test_property_an_excluded_code_page_cannot_decode_random_bytes(sample):
    assert _decoded_by_an_excluded_codec(sample) is None


@given(st.lists(st.sampled_from([b"a", b"ab", b" ", b"<p>", b"\x1b$B", b"~{", b"~}", b"~", b"\x0e", b"\x0f",
                                 b"\x81", b"\x8e", b"\x8f", b"\xa1", b"\xa4\xd4", b"\xb0\xa1", b"\x81\x30",
                                 b"\x81\x30\x81\x30", b"\xe9", b"\xfe", b"\xff", b"0", b"@"]), max_size=40))  # fmt: skip
def test_property_an_excluded_code_page_cannot_decode_pieces_of_every_structure(pieces):
    """Escape sequences, shifts, HZ modes, leads of 2-, 3-, 4- and 8-byte forms, cut anywhere."""
    sample = b"".join(pieces)
    assert _decoded_by_an_excluded_codec(sample) is None, sample


@settings(max_examples=150)
@given(st.integers(0, 2**32))
def test_property_the_shortcut_detects_what_from_bytes_detects(seed):
    sample = _sample(seed)
    assert _detected_encoding(sample) == _best(sample)


@settings(max_examples=60)
@given(st.binary(max_size=3000))
def test_property_the_shortcut_detects_what_from_bytes_detects_on_random_bytes(sample):
    assert _detected_encoding(sample) == _best(sample)


def test_the_shortcut_on_declared_signed_and_ascii_samples():
    body = _page(_TEXTS["cp1251"], "cp1251", random.Random(1), 5000)
    samples = [
        b"",
        b"<html><body>plain ascii</body></html>" * 50,
        b'<meta charset="gbk">' + body,  # a declaration charset_normalizer reads (never excluded)
        b'<meta charset="shift_jis">' + body,
        b"\x84\x31\x95\x33" + body,  # GB18030's signature: the plain call
        b"+/v8" + body,  # UTF-7's
        body,
    ]
    for sample in samples:
        assert _detected_encoding(sample) == _best(sample)
