"""bench/extraction.py on WCXB (wcxb-dev): the bag-of-words scorer on hand-written texts, and
the loader and scorer on the real split (skipped when ../shared/data is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.extraction import WCXB_TYPES, bow_prf, load_set, score

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "extraction" / "wcxb-dev").is_dir(), reason=f"WCXB data not found at {DATA}/extraction/wcxb-dev (../shared/data)"
)


def test_bow_counts_words_as_multisets():
    # extracted: the x2, cat, sat, on, mat (6 words); gold: the x2, cat, dog (4 words)
    # common = min(2, 2) + min(1, 1) = 3, P = 3/6, R = 3/4, F1 = 0.6
    p, r, f = bow_prf("The cat sat on the mat.", "the CAT, the dog")
    assert (p, r) == (0.5, 0.75)
    assert f == pytest.approx(0.6)
    # a repeated word counts only as often as the gold has it
    assert bow_prf("news news news", "news") == pytest.approx((1 / 3, 1.0, 0.5))
    assert bow_prf("x y", "y x") == (1.0, 1.0, 1.0)  # order does not matter


def test_bow_empty_texts():
    assert bow_prf("", "some gold text") == (0.0, 0.0, 0.0)
    assert bow_prf("  ...  ", "some gold text") == (0.0, 0.0, 0.0)  # no \w+ words
    assert bow_prf("", "") == (1.0, 1.0, 1.0)
    assert bow_prf("boilerplate", "") == (0.0, 0.0, 0.0)


def test_score_averages_per_page_f_overall_and_per_type():
    pages = [
        {"id": "1", "gold": "a b c d", "type": "article"},
        {"id": "2", "gold": "a b", "type": "article"},
        {"id": "3", "gold": "buy now", "type": "product"},
    ]
    texts = ["a b c d", "a b x y", ""]  # F1 1.0, 2/3, 0 (missing extraction)
    s = score("wcxb-dev", texts, pages)
    assert s["per_page"] == [1.0, round(2 / 3, 4), 0.0]
    assert s["F"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert s["P"] == pytest.approx((1 + 0.5 + 0) / 3) and s["R"] == pytest.approx((1 + 1 + 0) / 3)
    assert list(s["by_type"]) == ["article", "product", "all"]
    assert s["by_type"]["article"] == pytest.approx({"pages": 2, "P": 0.75, "R": 1.0, "F": (1 + 2 / 3) / 2})
    assert s["by_type"]["product"]["F"] == 0.0
    assert s["by_type"]["all"]["F"] == s["F"] and s["by_type"]["all"]["pages"] == 3
    # the split: even ids (page 2) and odd ids (pages 1 and 3), per type
    assert s["by_half"]["even"]["all"] == pytest.approx({"pages": 1, "P": 0.5, "R": 1.0, "F": 2 / 3})
    assert s["by_half"]["odd"]["all"]["F"] == pytest.approx(0.5) and s["by_half"]["odd"]["product"]["F"] == 0.0
    assert "product" not in s["by_half"]["even"]


@needs_data
def test_wcxb_loader_and_scorer_on_the_dev_split():
    pages = load_set("wcxb-dev", DATA, None)
    assert len(pages) == 1497
    assert len({p["id"] for p in pages}) == 1497
    assert {p["type"] for p in pages} == set(WCXB_TYPES)
    assert sum(p["type"] == "article" for p in pages) == 793
    for p in pages:
        assert isinstance(p["body"], bytes) and p["body"].lstrip()[:1] == b"<", p["id"]
        assert isinstance(p["gold"], str)
        assert p["url"].startswith(("http://", "https://")), p["id"]
    # Sites are hosts, as in a crawl: some hosts have several pages; pages without a URL are their own site.
    first = next(p for p in pages if p["id"] == "0001")
    assert first["url"].startswith("https://scratchculinary.com/")
    assert first["gold"].startswith("Fall isn't just pumpkin spice season")
    # The gold text itself scores 1 on every page; empty extractions score 1 only where the gold is empty.
    s = score("wcxb-dev", [p["gold"] for p in pages], pages)
    assert s["F"] == 1.0 and all(v["F"] == 1.0 for v in s["by_type"].values())
    assert set(s["by_type"]) == set(WCXB_TYPES) | {"all"}
    assert score("wcxb-dev", [""] * len(pages), pages)["F"] == pytest.approx(sum(not p["gold"].split() for p in pages) / len(pages))
    assert len(load_set("wcxb-dev", DATA, 10)) == 10
