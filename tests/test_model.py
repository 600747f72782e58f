"""The records that flow through pagetwin (model.py): small, picklable, engine-free."""

import pickle

from hypothesis import given, strategies as st

from pagetwin.model import Doc, Edge, Evidence, ImageRef, Page


def test_records_survive_pickling_across_processes():
    page = Page(id="r1", url="http://www.Example.org/a", body=b"<p>x</p>", http_charset="utf-8", meta={"k": 1})
    doc = Doc(page_id="r1", url=page.url, host=page.host, crawl_date=None, text="a b", tokens=["a", "b"],
              stop=[False, True], images=[ImageRef("https://example.org/i.jpg", phash=7)])  # fmt: skip
    edge = Edge(0, 1, "duplicate", (Evidence("exact", 1.0, True, {"x": 1}),))
    for record in (page, doc, edge):
        assert pickle.loads(pickle.dumps(record)) == record


def test_page_host_is_the_url_host():
    assert Page(id="x", url="http://www.Example.org:80/a?b").host == "example.org"
    assert Page(id="x", url="").host == ""


@given(st.lists(st.tuples(st.sampled_from(["a", "the", "b", "of"]), st.booleans()), max_size=20))
def test_content_tokens_are_the_tokens_that_are_not_stop_words(pairs):
    tokens = [t for t, _ in pairs]
    stop = [s for _, s in pairs]
    doc = Doc(page_id="p", url="", host="", crawl_date=None, text="", tokens=tokens, stop=stop)
    assert doc.content_tokens() == [t for t, s in pairs if not s]
    assert Doc(page_id="p", url="", host="", crawl_date=None, text="", tokens=tokens).content_tokens() == tokens
