"""explain with a URL several pages share (issue 13, item 8): it names the candidates instead
of picking one. The crawl is written by the test."""

from __future__ import annotations

import pytest

from pagetwin.cli import main
from pagetwin.explain import AmbiguousPage, ExplainError, explain
from tests.fixtures.records import html_page
from tests.sources.test_source_statuses import _http, _record

URL = "https://example.org/news"


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("ambiguous")
    crawl = root / "crawl.warc.gz"
    crawl.write_bytes(
        _record("response", URL, _http("200 OK", html_page("Monday", 80)), 1)
        + _record("response", URL, _http("200 OK", html_page("Tuesday", 80)), 2)
        + _record("response", "https://example.org/about", _http("200 OK", html_page("About", 80)), 3)
    )
    assert main(["dedup", str(crawl), "--out", str(root / "out"), "--workers", "1"]) == 0
    return root / "out"


ID1 = "<urn:uuid:00000000-0000-0000-0000-000000000001>"
ID2 = "<urn:uuid:00000000-0000-0000-0000-000000000002>"


def test_a_shared_url_raises_ambiguous_page_listing_both(out_dir):
    with pytest.raises(AmbiguousPage) as caught:
        explain(out_dir, URL, "https://example.org/about")
    exc = caught.value
    assert isinstance(exc, ExplainError) and exc.ref == URL
    assert [c["id"] for c in exc.candidates] == [ID1, ID2]
    assert all(c["url"] == URL and c["crawl_date"] and c["cluster"] for c in exc.candidates)
    message = str(exc)
    assert "2 pages" in message and ID1 in message and ID2 in message
    for c in exc.candidates:
        assert c["cluster"] in message and c["crawl_date"] in message
    with pytest.raises(AmbiguousPage):  # as B too
        explain(out_dir, "https://example.org/about", URL)


def test_ids_and_unique_urls_still_work(out_dir):
    d = explain(out_dir, ID1, ID2)
    assert d["a"]["id"] == ID1 and d["b"]["id"] == ID2 and d["a"]["url"] == d["b"]["url"] == URL
    d = explain(out_dir, "https://example.org/about", ID2)
    assert d["a"]["url"] == "https://example.org/about"
    with pytest.raises(ExplainError) as caught:
        explain(out_dir, "https://example.org/nowhere", ID1)
    assert not isinstance(caught.value, AmbiguousPage)


def test_cli_lists_the_candidates_on_stderr(out_dir, capsys):
    status = main(["explain", str(out_dir), URL, "https://example.org/about"])
    assert status == 2  # ambiguous: a usage error
    captured = capsys.readouterr()
    assert captured.out == ""
    assert ID1 in captured.err and ID2 in captured.err and URL in captured.err
