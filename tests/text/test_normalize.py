from hypothesis import example, given, settings, strategies as st

from pagetwin.text.normalize import normalize_text, text_digest, url_host, url_host_reference


@given(st.text())
def test_normalization_is_idempotent(text):
    once = normalize_text(text)
    assert normalize_text(once) == once


@given(st.text())
def test_digest_ignores_case_and_spacing(text):
    # casefold, not upper(): "ı".upper() is "I", which folds to "i", another letter
    assert text_digest(text) == text_digest("  " + text.casefold().replace(" ", "\n \t") + " ")


def test_normalization_folds_width_case_and_space():
    assert normalize_text("  Ｈｅｌｌｏ\u00a0 WORLD\n\nStraße ") == "hello world strasse"


def test_url_host():
    assert url_host("https://WWW.Example.org:8080/a?b") == "example.org"
    assert url_host("file:///tmp/x.html") == ""
    assert url_host("http://[::1") == ""


# URLs made of the pieces where url_host's regex and urlsplit decide: schemes, user info,
# ports, brackets, controls urlsplit removes, non-ASCII hosts, the path's delimiters.
_SCHEMES = st.sampled_from(["http", "HTTPS", "a+b.c-d", "1x", "x_y", "", " http", "\x00http", "h\ttp"])
_SEPARATORS = st.sampled_from(["://", ":", ":/", "//", ":///", "", ":\n//"])
_HOST_PIECES = st.sampled_from([
    "www.", "WWW.", "Example.COM", "a-b_c", ".", "..", ":80", ":", ":x", "@", "user:pw@", "[", "]", "[::1]",
    "%25", "\t", "\r", "\x00", " ", "\u00e9", "\uff0e", "\u2100", "ö.de", "xn--bcher-kva", "",
])  # fmt: skip
_TAILS = st.sampled_from(["", "/", "/a@b:c", "?q=1", "#f", "/x\ty", " ", "\n"])


@settings(max_examples=1000, deadline=None)
@given(st.tuples(_SCHEMES, _SEPARATORS, st.lists(_HOST_PIECES, max_size=6).map("".join), _TAILS).map("".join))
@example("http://@Example.COM/")
@example("HTTP://WWW.Example.com.:8080")
def test_url_host_equals_the_urlsplit_reference(url):
    assert url_host(url) == url_host_reference(url)


@given(st.sampled_from(["http://", "https://", "ftp://", ""]), st.text(max_size=30))
def test_url_host_equals_the_reference_on_any_text(scheme, rest):
    assert url_host(scheme + rest) == url_host_reference(scheme + rest)


def _normalize_by_definition(text: str) -> str:
    """NFKC and casefold repeated until stable, then every run of \\s one space, ends stripped."""
    import re
    import unicodedata

    prev, out = None, text
    while out != prev:
        prev, out = out, unicodedata.normalize("NFKC", out).casefold()
    return re.sub(r"\s+", " ", out).strip()


# Characters where the rules are decided: ASCII and Unicode spaces, separators, ligatures,
# characters whose casefold NFKC changes again, combining marks, fullwidth forms.
_PIECES = ["a", "B", " ", "\t", "\n", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "\u200b", "ﬁ", "ß", "ẞ", "İ",
           "ͅ", "ΐ", "ǰ", "\u0345", "e\u0301", "Ａ", "①", "㎒", "ﾊﾞ", "Ω", "K", "\U0001d400", "\ud800", ""]


@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=5)), max_size=30).map("".join))
def test_normalization_equals_its_definition(text):
    assert normalize_text(text) == _normalize_by_definition(text)


def test_normalization_of_every_character_equals_its_definition():
    import sys

    for start in range(0, sys.maxunicode + 1, 4096):
        chunk = "".join(map(chr, range(start, min(start + 4096, sys.maxunicode + 1))))
        for text in (chunk, " ".join(chunk)):
            assert normalize_text(text) == _normalize_by_definition(text), start


def test_casefold_is_idempotent_on_every_code_point():
    """normalize_text counts on it: a casefolded text is not casefolded again to check it."""
    import sys

    for start in range(0, sys.maxunicode + 1, 4096):
        chunk = "".join(map(chr, range(start, min(start + 4096, sys.maxunicode + 1))))
        folded = chunk.casefold()
        assert folded.casefold() == folded, start
        assert "".join(c.casefold() for c in chunk) == folded, start  # character by character


def _digest_by_definition(text: str) -> str:
    import xxhash

    return xxhash.xxh3_128_hexdigest(normalize_text(text).encode("utf-8"))


@given(st.lists(st.one_of(st.sampled_from(_PIECES[:-2] + ["", "\u2029", "\x0b"]), st.text(max_size=5)), max_size=30).map("".join))
def test_digest_is_the_hash_of_the_normalized_texts_utf8(text):
    assert text_digest(text) == _digest_by_definition(text)


def test_digest_without_the_native_kernels_is_the_same(monkeypatch):
    import pagetwin.text.normalize as normalize

    texts = ["", "  A b\tC ", "Ｈｅｌｌｏ\u00a0 WORLD\n\nStraße ", "中文\u3000的 文本 ", "ﬁ İ ß \U0001d400"]
    native = [text_digest(t) for t in texts]
    monkeypatch.setattr(normalize, "_fast", None)
    assert [text_digest(t) for t in texts] == native == [_digest_by_definition(t) for t in texts]


def test_digest_of_a_lone_surrogate_is_refused_as_before():
    import pytest

    with pytest.raises(UnicodeEncodeError):
        text_digest("a\ud800 b")


# Characters NFKC changes alone, next to what they may compose or reorder with.
_COMPAT = ["ﾊﾞ", "ｶ", "ﾞ", "ﾟ", "…", "\uff0c", "Ａ\u0301", "\u0301", "e\u0301", "\u2126", "\u1e9b\u0323", "\u0323",
           "½", "™", "\u3000", "\xa0", "ﬁ", "ǅ", "\u0344", "\u0f73", "\u1100\u1161", "\u1161", "ᄀ", "㈜", "\u0345"]


@given(st.lists(st.one_of(st.sampled_from(_COMPAT + _PIECES), st.text(max_size=4)), max_size=30).map("".join))
def test_substituting_nfkc_first_changes_no_text(text):
    """normalize._folded replaces what NFKC changes alone before NFKC: the same as without."""
    import unicodedata

    from pagetwin.text import normalize

    prev, expected = None, unicodedata.normalize("NFKC", text).casefold()
    while expected != prev and not unicodedata.is_normalized("NFKC", expected):
        prev, expected = expected, unicodedata.normalize("NFKC", expected).casefold()
    assert normalize._folded(text) == expected
    assert normalize_text(text) == _normalize_by_definition(text)


def test_folding_without_the_native_kernels_is_the_same(monkeypatch):
    from pagetwin.text import normalize

    texts = ["".join(_COMPAT), "中文，文本：（一）…", "Ｈｅｌｌｏ\u00a0WORLD", "ﾊﾞｶ ﾟ"]
    native = [normalize._folded(t) for t in texts]
    monkeypatch.setattr(normalize, "_fast", None)
    assert [normalize._folded(t) for t in texts] == native


def test_folding_a_character_at_a_time_equals_normalize_text_on_every_code_point():
    """``_fast.fold_collapse_utf8`` with ``fold_table``: the UTF-8 of normalize_text for texts of
    every character that has an entry (in order, spaced, reversed: neighbours that could
    compose or reorder), None as soon as one character has none."""
    import numpy as np
    import pytest

    from pagetwin.text import normalize

    _fast = pytest.importorskip("pagetwin.text._fast")
    index, pool = normalize.fold_table()
    entries = np.flatnonzero(index).tolist()
    assert len(entries) > 1_000_000  # nearly every character: the texts that need the whole fold are few
    for start in range(0, len(entries), 4096):
        text = "".join(map(chr, entries[start : start + 4096]))
        for variant in (text, " ".join(text), text[::-1], "e".join(text), "\u3000".join(text)):
            assert _fast.fold_collapse_utf8(variant, index, pool) == normalize_text(variant).encode("utf-8"), start
    missing = [c for c in np.flatnonzero(index == 0).tolist() if c >= 0x80]
    assert all(_fast.fold_collapse_utf8("a" + chr(c), index, pool) is None for c in missing)


def _entry_characters():
    import numpy as np

    from pagetwin.text import normalize

    index, _ = normalize.fold_table()
    # characters that fold to others, and a sample of those that stay: letters that begin
    # compositions, kana, Hangul syllables, spaces
    changed = np.flatnonzero(index > 1).tolist()
    return [chr(c) for c in changed] + list("eEaAoOuUiInNcCkK\u304b\u30ab\uac00\uac01\u00e9\u00c5 \u3000\u2002")


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_digest_by_the_fold_table_is_the_hash_of_the_normalized_texts_utf8(data):
    pieces = st.one_of(st.sampled_from(_entry_characters()), st.sampled_from(_COMPAT + _PIECES[:-2]), st.characters())
    text = data.draw(st.lists(pieces, max_size=40).map("".join))
    assert text_digest(text) == _digest_by_definition(text)
