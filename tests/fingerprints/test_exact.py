"""fingerprints.exact: equal normalized main texts or equal payloads make exact duplicates."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from pagetwin.config import ExactSettings
from pagetwin.fingerprints.exact import Exact
from pagetwin.model import Doc
from pagetwin.text.normalize import text_digest


def doc(text: str, payload: str | None = None, page_id: str = "p") -> Doc:
    return Doc(page_id, "http://x/", "x", None, text, text_digest=text_digest(text), payload_digest=payload)


def keys(algo: Exact, d: Doc) -> set[int]:
    features = algo.features(d)
    return set(algo.keys(features)) if features is not None else set()


def upper(word: str) -> str:
    """Upper case where case folding maps it back (not "ı" -> "I" -> "i", another letter)."""
    return "".join(c.upper() if c.upper().casefold() == c.casefold() else c for c in word)


# Latin, Greek and Cyrillic letters (accented too) and digits: the scripts with case.
words = st.lists(st.text(st.characters(categories=["L", "Nd"], max_codepoint=0x4FF), min_size=1, max_size=6), min_size=1, max_size=8)


@given(words, st.data())
def test_texts_differing_only_by_normalisation_are_exact_duplicates(ws, data):
    """Case, NFKC forms and whitespace runs do not matter; the words do."""
    algo = Exact(ExactSettings(use_payload_digest=False))
    a_text = " ".join(ws)
    seps = data.draw(st.lists(st.sampled_from([" ", "  ", "\n", "\t ", "\u00a0"]), min_size=len(ws), max_size=len(ws)))
    b_text = " \n" + "".join(seps[i] + unicodedata.normalize("NFKD", upper(w)) for i, w in enumerate(ws)) + "\t"
    a, b = doc(a_text), doc(b_text, page_id="q")
    assert keys(algo, a) == keys(algo, b) != set()
    assert algo.verify(algo.features(a), algo.features(b)).passed


def test_other_words_are_not_duplicates():
    algo = Exact(ExactSettings(use_payload_digest=False))
    a, b = doc("the cat sat"), doc("the cat sat down")
    assert not keys(algo, a) & keys(algo, b)
    assert not algo.verify(algo.features(a), algo.features(b)).passed


def test_payload_digest_links_pages_and_is_optional():
    a, b = doc("one text", "sha1:AAAA"), doc("another text", "sha1:AAAA")
    with_payload = Exact(ExactSettings(use_payload_digest=True))
    ev = with_payload.verify(with_payload.features(a), with_payload.features(b))
    assert ev.passed and ev.detail == {"same_text": False, "same_payload": True}
    without = Exact(ExactSettings(use_payload_digest=False))
    assert not keys(without, a) & keys(without, b)


def test_empty_pages_are_keyed_by_payload_only():
    """Pages without main text must not all fall into one cluster."""
    algo = Exact(ExactSettings(use_payload_digest=True))
    assert algo.features(doc("  \n")) is None
    a, b = doc("", "sha1:A"), doc("", "sha1:B")
    assert not keys(algo, a) & keys(algo, b)
    assert not algo.verify(algo.features(a), algo.features(b)).passed
