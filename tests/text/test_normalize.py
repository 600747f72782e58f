from hypothesis import given, strategies as st

from pagetwin.text.normalize import normalize_text, text_digest, url_host


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
