"""Soft errors: 200 pages that say "not found" (several languages), other error wording, and
the kind of a cluster."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index
from pagetwin.pipeline import compress_text
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
