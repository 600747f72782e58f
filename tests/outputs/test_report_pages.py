"""outputs.report_pages: pages read again from their inputs, their blocks marked as the learned
site template and the page-level rules decide them."""

from __future__ import annotations

from pagetwin.app import learn_templates
from pagetwin.config import Settings
from pagetwin.engine import source_path
from pagetwin.outputs.report_pages import TemplateViews, read_samples
from pagetwin.outputs.warc import WarcWriter
from tests.fixtures.sites import site_pages


def _crawl(path, n=12):
    ids = []
    with WarcWriter(path) as w:
        for url, html, _ in site_pages(n):
            ids.append(w.write_response(url, html.encode()))
    return ids


def test_read_samples_takes_a_few_pages_per_host_from_a_prefix(tmp_path):
    crawl = tmp_path / "c.warc.gz"
    _crawl(crawl)
    src = source_path(str(crawl))
    found, note = read_samples([src], ["gazette.example"], 2, Settings(), budget=100)
    assert [h for h, _ in found] == ["gazette.example"] * 2 and note == ""
    assert [p.url for _, p in found] == [u for u, _, _ in site_pages(12)[:2]]  # the first ones, in input order
    found, note = read_samples([src], ["gazette.example", "elsewhere.example"], 2, Settings(), budget=3)
    assert len(found) == 2 and "first 3 records" in note and "1 of the listed sites" in note
    found, note = read_samples([str(tmp_path / "gone.warc.gz"), src], ["gazette.example"], 1, Settings(), budget=100)
    assert len(found) == 1 and "no longer there" in note


def test_a_learned_template_is_marked_on_the_page(tmp_path):
    crawl = tmp_path / "c.warc.gz"
    ids = _crawl(crawl)
    settings = Settings()
    templates = learn_templates([str(crawl)], settings)
    found, _ = read_samples([source_path(str(crawl))], ["gazette.example"], 1, settings, budget=100)
    page = found[0][1]
    view = TemplateViews(settings, templates).view(page, max_blocks=500, chars=1000)
    assert view["learned"]
    classes = {b["class"] for b in view["blocks"]}
    assert "template" in classes and "kept" in classes
    sizes = view["sizes"]
    assert 0 < sizes["template"] < sizes["chars"]
    # Without a model, nothing is template: only the page-level rules decide.
    bare = TemplateViews(settings, None).view(page, max_blocks=500, chars=1000)
    assert not bare["learned"] and all(b["class"] != "template" for b in bare["blocks"])
