"""outputs.report_pages: pages read again from their inputs, their blocks marked as the learned
site template and the page-level rules decide them."""

from __future__ import annotations

from pagetwin.app import learn_templates
from pagetwin.config import Settings
from pagetwin.engine import source_path
from pagetwin.outputs.report_pages import TemplateViews, read_pages
from pagetwin.outputs.warc import WarcWriter
from tests.fixtures.sites import site_pages


def _crawl(path, n=12):
    ids = []
    with WarcWriter(path) as w:
        for url, html, _ in site_pages(n):
            ids.append(w.write_response(url, html.encode()))
    return ids


def test_read_pages_finds_the_pages_named_and_stops_at_its_budget(tmp_path):
    crawl = tmp_path / "c.warc.gz"
    ids = _crawl(crawl)
    src = source_path(str(crawl))
    found, note = read_pages({(ids[1], src): "x", (ids[3], src): "x"}, Settings(), budget=100)
    assert set(found) == {(ids[1], src), (ids[3], src)} and note == ""
    found, note = read_pages({(ids[-1], src): "x"}, Settings(), budget=2)
    assert found == {} and "after 2 records" in note
    found, note = read_pages({(ids[0], str(tmp_path / "gone.warc.gz")): "x"}, Settings(), budget=100)
    assert found == {} and "no longer there" in note


def test_a_learned_template_is_marked_on_the_page(tmp_path):
    crawl = tmp_path / "c.warc.gz"
    ids = _crawl(crawl)
    settings = Settings()
    templates = learn_templates([str(crawl)], settings)
    found, _ = read_pages({(ids[0], source_path(str(crawl))): "x"}, settings, budget=100)
    view = TemplateViews(settings, templates).view(next(iter(found.values())), max_blocks=500, chars=1000)
    assert view["learned"]
    classes = {b["class"] for b in view["blocks"]}
    assert "template" in classes and "kept" in classes
    sizes = view["sizes"]
    assert 0 < sizes["template"] < sizes["chars"]
    # Without a model, nothing is template: only the page-level rules decide.
    bare = TemplateViews(settings, None).view(next(iter(found.values())), max_blocks=500, chars=1000)
    assert not bare["learned"] and all(b["class"] != "template" for b in bare["blocks"])
