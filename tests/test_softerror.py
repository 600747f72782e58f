"""Soft errors: 200 pages that say "not found" (several languages), other error wording, and
the kind of a cluster."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index
from pagetwin.pipeline import compress_text
from pagetwin import softerror
from pagetwin.softerror import MAX_TITLE_WORDS, cluster_kind, cluster_kinds, page_kind, report

IA_NAV = "Web | Moving Images | Texts | Audio | Software | Education | Patron Info | About IA " * 6


@pytest.mark.parametrize(
    "title, text, status, kind",
    [
        ("Internet Archive: Page Not Found", IA_NAV, 200, "soft-404"),  # the real crawls' 70 pages
        ("404 Not Found", "", 200, "soft-404"),
        ("Error 404 (Not Found)!!1", "", None, "soft-404"),
        ("404", "", 200, "soft-404"),
        ("Seite nicht gefunden", "Die Seite existiert nicht.", 200, "soft-404"),
        ("Page introuvable", "", 200, "soft-404"),
        ("Página no encontrada", "", 200, "soft-404"),
        ("Страница не найдена", "", 200, "soft-404"),
        ("首页", "找不到该页面，请返回首页", 200, "soft-404"),
        ("ページが見つかりません", "", 200, "soft-404"),
        ("News", "Sorry, the page you requested was not found. Go home.", 200, "soft-404"),
        ("501 Not Implemented", "", 200, "soft-error"),
        ("Internet Archive: Error", "The item is not available.", 200, "soft-error"),
        ("500 Internal Server Error", "", None, "soft-error"),
        ("Anything", "Whatever", 404, "http-error"),
        ("Anything", "Whatever", 501, "http-error"),
        # content
        ("Route 404", "A road in the hills. " * 20, 200, None),
        ("Forbidden City", "A palace in Beijing.", 200, None),
        ("Error handling in Python", "Exceptions are raised and caught. " * 10, 200, None),
        ("Notfound Records", "A record label.", 200, None),
        ("Lost and not found", "word " * (MAX_TITLE_WORDS + 1), 200, None),
        ("A story", "It begins. " * 40 + "The key was not found, she said.", 200, None),  # late, long text
    ],
)
def test_page_kind(title, text, status, kind):
    assert page_kind(title, text, status) == kind


@given(st.text(max_size=60), st.text(max_size=300), st.integers(100, 999).filter(lambda s: not 200 <= s <= 299))
def test_a_status_that_is_no_success_is_an_http_error(title, text, status):
    assert page_kind(title, text, status) == "http-error"


@given(st.text(max_size=60), st.sampled_from([None, 200, 204]))
def test_a_long_page_is_content(title, status):
    assert page_kind(title, "word " * (MAX_TITLE_WORDS + 1), status) is None


@given(st.sampled_from(["Page Not Found", "Seite nicht gefunden", "501 Not Implemented", "Route 404", "News"]),
       st.sampled_from([str.upper, str.lower, str.title, lambda s: "  " + s.replace(" ", "\u00a0 ") + "\n"]))
def test_case_and_spacing_do_not_matter(title, change):
    assert page_kind(change(title), "", 200) == page_kind(title, "", 200)


def _page_kind_reference(title, text, status=None):
    """page_kind as first written: the whole text normalised and its words counted."""
    if status is not None and not 200 <= status <= 299:
        return "http-error"
    t, body = softerror.normalize(title), softerror.normalize(text)
    words = len(softerror._WORD.findall(body))
    if words > MAX_TITLE_WORDS:
        return None
    head = body[: softerror._HEAD_CHARS] if words <= softerror.MAX_WORDS else ""
    if softerror._NOT_FOUND.search(t) or softerror._is_404_title(t) or softerror._NOT_FOUND.search(head):
        return "soft-404"
    if softerror._OTHER.search(t) or softerror._OTHER.search(head):
        return "soft-error"
    return None


# Words and separators that NFKC, case folding or the whitespace split change: combining marks
# after a space or a letter, compatibility characters, full-width and no-break spaces, ß, Σ.
_TRICKY_WORDS = st.sampled_from(["not", "found", "Seite", "nicht", "gefunden", "e\u0301", "\u0301", "ﬁle", "①", "Ⅻ",
                                  "ß", "ΣΑΣ", "页面不存在", "ｐａｇｅ", "404", "error", "x" * 40, "\u200b", "", "_"])
_SEPARATORS = st.sampled_from([" ", "  ", "\n", "\u00a0", "\u3000", " \u0308", "\t ", "-", " . "])


@given(st.lists(st.tuples(_TRICKY_WORDS, _SEPARATORS), max_size=700), st.sampled_from(["News", "Page not found", "Error"]),
       st.sampled_from([3, 50, 2000]))
def test_page_kind_normalises_a_piece_at_a_time_as_the_whole_text(words, title, piece):
    """The long-page shortcut (_short_body: normalised and counted a piece at a time, stopping
    past MAX_TITLE_WORDS words) gives the kind and the normalised text of the whole text."""
    from unittest import mock

    text = "".join(w + sep for w, sep in words)
    with mock.patch.object(softerror, "_PIECE", piece):
        assert page_kind(title, text, 200) == _page_kind_reference(title, text, 200)
        short = softerror._short_body(text)
        short_of_few = softerror._short_body(text, softerror.MAX_WORDS)  # a page whose title says no error
    body = softerror.normalize(text)
    words_in_body = len(softerror._WORD.findall(body))
    assert short == (None if words_in_body > MAX_TITLE_WORDS else (body, words_in_body))
    assert short_of_few == (None if words_in_body > softerror.MAX_WORDS else (body, words_in_body))


_ANY_WORDS = st.one_of(_TRICKY_WORDS, st.text(max_size=6), st.sampled_from(["a", "Z9", "_", "x\u0301", "<\u0338", "\x1c", "a,b"]))
_ANY_SEPARATORS = st.one_of(_SEPARATORS, st.text(st.characters(categories=["Zs", "Zl", "Zp", "Cc", "Mn", "Po"]), max_size=3))


@given(st.lists(st.tuples(_ANY_WORDS, _ANY_SEPARATORS), min_size=380, max_size=900))
def test_surely_long_is_a_lower_bound_of_the_words(words):
    """_surely_long (ASCII word tokens of a prefix, counted in bytes) says a text is long only
    when its normalised text has more than MAX_TITLE_WORDS words, and _short_body with it
    gives what normalising the whole text gives."""
    text = "".join(w + sep for w, sep in words)
    body = softerror.normalize(text)
    words_in_body = len(softerror._WORD.findall(body))
    if softerror._surely_long(text):
        assert words_in_body > MAX_TITLE_WORDS
    assert softerror._short_body(text) == (None if words_in_body > MAX_TITLE_WORDS else (body, words_in_body))


@given(st.lists(st.tuples(_ANY_WORDS, _ANY_SEPARATORS), max_size=900), st.sampled_from(["News", "Page not found", "Error", ""]),
       st.sampled_from([200, None, 404]), st.booleans())
def test_stored_page_kind_is_the_kind_of_the_decompressed_text(words, title, status, stored):
    """stored_page_kind (most pages told long from their UTF-8 bytes, not decoded) gives
    page_kind of the text decompressed, with or without a stored text."""
    from pagetwin.pipeline import decompress_text

    text = "".join(w + sep for w, sep in words)
    data = compress_text(text) if stored and text else None
    assert softerror.stored_page_kind(title, data, status) == page_kind(title, decompress_text(data), status)


def _compile_reference(patterns):
    """softerror._compile as first written: each pattern with its own bounds."""
    import re

    def bounded(p):
        if softerror._CJK.search(p):
            return p
        if p[0].isalnum():
            p = r"(?<!\w)" + p
        return p if p.endswith("$") else p + r"(?!\w)"

    return re.compile("|".join(f"(?:{bounded(p)})" for p in patterns))


_REFERENCE_PATTERNS = {"not found": _compile_reference(softerror.NOT_FOUND), "other": _compile_reference(softerror.OTHER_ERROR)}
_FRAGMENTS = st.sampled_from(["not found", "page not found", "nicht gefunden", "找不到", "页面", "error", "error 404",
                              "server error", ": error", "internal server error", "no encontrada", "x", "_", "1", " ",
                              "-", "é", "page does not exist", "non trovata", "не найдено", "не найден"])


@given(st.lists(_FRAGMENTS, max_size=12))
def test_the_shared_bounds_match_where_each_pattern_bounded_alone_does(fragments):
    """_compile puts the patterns bounded on both sides under one lookbehind and lookahead: a
    search finds a match in the same strings as with each pattern bounded by itself."""
    text = "".join(fragments)
    for name, compiled in (("not found", softerror._NOT_FOUND), ("other", softerror._OTHER)):
        assert bool(compiled.search(text)) == bool(_REFERENCE_PATTERNS[name].search(text)), (name, text)


def test_page_kind_of_real_texts_as_the_reference():
    """Texts of many languages and lengths around the word limits (the corpus's shapes)."""
    base = ["Страница не найдена. ", "页面不存在，请返回首页。", "Page not found ", "Die Seite existiert nicht. ",
            "A line of article text, with words. ", "e\u0301te\u0301 \u0301 ﬁ ", "ＡＢＣ ｐａｇｅ ｎｏｔ ｆｏｕｎｄ "]
    for chunk in base:
        for times in (1, 20, 60, 140, 151, 399, 401, 2000):
            text = chunk * times
            for title in ("Page Not Found", "News", "500 Internal Server Error", ""):
                assert page_kind(title, text) == _page_kind_reference(title, text), (chunk, times, title)


def test_cluster_kind_is_the_majority():
    assert cluster_kind(["soft-404", "soft-404", None]) == "soft-404"
    assert cluster_kind(["soft-404", None]) == "content"
    assert cluster_kind([None]) == "content" and cluster_kind([]) == "content"


def test_report_of_an_index(tmp_path):
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    pids = []
    for i in range(5):
        pids.append(idx.add_page({
            "id": f"nf{i}", "url": f"https://archive.example/{i}", "host": "h", "source": "s", "kind": "response",
            "crawl_date": None, "text_len": 1, "payload_digest": None, "refers_to_digest": None, "lang": "en",
            "title": "Internet Archive: Page Not Found", "text": compress_text(IA_NAV), "error": None, "http_status": 200,
        }))
    for i in range(2):
        pids.append(idx.add_page({
            "id": f"a{i}", "url": f"https://news.example/{i}", "host": "h", "source": "s", "kind": "response",
            "crawl_date": None, "text_len": 1, "payload_digest": None, "refers_to_digest": None, "lang": "en",
            "title": "An article", "text": compress_text("The article text. " * 50), "error": None,
        }))
    idx.replace_clusters([(p, "nf", int(p == pids[0])) for p in pids[:5]] + [(pids[5], "a", 1), (pids[6], "a", 0)])
    assert cluster_kinds(idx) == {"nf": "soft-404", "a": "content"}
    r = report(idx)
    assert r["clusters_by_kind"] == {"content": 1, "soft-404": 1}
    assert r["pages_by_kind"] == {"content": 2, "soft-404": 5}
    assert r["not_content"] == [{"cluster": "nf", "kind": "soft-404", "size": 5,
                                 "kept": {"id": "nf0", "url": "https://archive.example/0", "title": "Internet Archive: Page Not Found"}}]
