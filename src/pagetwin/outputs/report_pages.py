"""Pages of a run read again from their inputs, for the report's template view: each page's
blocks as the run's learned site template (``SiteTemplates``, the model ``pagetwin templates``
reports) and the page-level noise rules (``ParsedPage.page_level``) decided them.

A block is "template" when the page-level rules kept it and the site's model dropped it, "noise"
when the page-level rules dropped it, else "kept". The index holds where each page came from
(its source file) but not its HTML, so the pages are found by reading their inputs again, up
to a budget of records (``read_pages``)."""

from __future__ import annotations

import os
from typing import Any

from pagetwin.model import Page


def read_pages(wanted: dict[tuple[str, str], Any], settings: Any, budget: int) -> tuple[dict[tuple[str, str], Page], str]:
    """The pages named by (id, absolute source path) in ``wanted``, read from their sources,
    at most ``budget`` records in all; and a note saying what could not be read ("" if all)."""
    from pagetwin.engine import source_path
    from pagetwin.sources import SourceStats, iter_pages

    by_source: dict[str, set[str]] = {}
    for page_id, source in wanted:
        by_source.setdefault(source, set()).add(page_id)
    found: dict[tuple[str, str], Page] = {}
    missing, read = [], 0
    for source, ids in by_source.items():
        if not source or not os.path.exists(source):
            missing.append(source or "(no source)")
            continue
        stats = SourceStats()
        for page in iter_pages([source], settings.input, stats):
            read += 1
            key = (page.id, source_path(page.source))
            if key[0] in ids and key[1] == source:
                found[key] = page
                ids.discard(key[0])
            if not ids or read >= budget:
                break
        if read >= budget:
            break
    notes = []
    if missing:
        notes.append(f"{len(missing)} input file(s) no longer there, e.g. {missing[0]}")
    if len(found) < len(wanted) and read >= budget:
        notes.append(f"stopped reading the inputs after {budget} records ({len(wanted) - len(found)} sample pages not found)")
    return found, "; ".join(notes)


class TemplateViews:
    """Parses pages (one ``pipeline.Worker`` for all) and marks their blocks."""

    def __init__(self, settings: Any, templates: Any) -> None:
        from pagetwin.pipeline import Worker

        self.settings = settings
        self.templates = templates
        self.worker = Worker(settings)

    def view(self, page: Page, max_blocks: int, chars: int) -> dict[str, Any] | None:
        """{"id", "url", "title", "site", "learned", "blocks": [{"class", "text"}], "blocks_more",
        "sizes": {"chars", "template", "noise"}} of an HTML page; None for a page without markup
        or one that cannot be parsed."""
        from pagetwin.html.templates import page_site
        from pagetwin.pipeline import is_text_only

        if page.kind != "response" or is_text_only(page):
            return None
        try:
            parsed = self.worker.parse(page)
        except Exception:  # noqa: BLE001 - bad data: the page is left out of the view
            return None
        site = page_site(page, self.settings.extract)
        model = self.templates.for_site(site) if self.templates is not None else None
        keep, inside = parsed.page_level()
        final = model.decide(parsed.blocks, (keep, inside))[0] if model is not None else keep
        blocks, sizes = [], {"chars": 0, "template": 0, "noise": 0}
        for text, size, k, f in zip(parsed.blocks.text, parsed.blocks.size, keep, final):
            if not text.strip():
                continue
            kind = "kept" if f else ("template" if k else "noise")
            sizes["chars"] += size
            if kind != "kept":
                sizes[kind] += size
            blocks.append({"class": kind, "text": _cut(text, chars)})
        return {"id": _cut(page.id, chars), "url": _cut(page.url, chars), "title": _cut(parsed.title, chars), "site": _cut(site, chars), "learned": model is not None,
                "blocks": blocks[:max_blocks], "blocks_more": max(0, len(blocks) - max_blocks), "sizes": sizes}  # fmt: skip


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
