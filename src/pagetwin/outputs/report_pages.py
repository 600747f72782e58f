"""Pages of a run read again from their inputs, for the report's template view: each page's
blocks as the run's learned site template (``SiteTemplates``, the model ``pagetwin templates``
reports) and the page-level noise rules (``ParsedPage.page_level``) decided them.

A block is "template" when the page-level rules kept it and the site's model dropped it, "noise"
when the page-level rules dropped it, else "kept". The index holds where each page came from
(its source file) but not its HTML, so the pages are found by reading a prefix of the inputs
again (``read_samples``)."""

from __future__ import annotations

import os
from typing import Any

from pagetwin.model import Page


def read_samples(
    sources: list[str], hosts: list[str], per_host: int, settings: Any, budget: int
) -> tuple[list[tuple[str, Page]], str]:
    """Up to ``per_host`` pages of each host in ``hosts``, as (host, page), from the first
    ``budget`` records of ``sources`` (in the order given: the run's input order), the reading
    ended as soon as every host has them; and a note saying what could not be read ("" if
    nothing). A bounded prefix, not a search: a host whose pages all come later has none."""
    from pagetwin.sources import SourceStats, iter_pages

    left = {h: per_host for h in hosts}
    found: list[tuple[str, Page]] = []
    missing, read = [], 0
    for source in sources:
        if not left or read >= budget:
            break
        if not source or not os.path.exists(source):
            missing.append(source or "(no source)")
            continue
        for page in iter_pages([source], settings.input, SourceStats()):
            read += 1
            host = page.host
            if page.kind == "response" and left.get(host, 0) > 0:
                found.append((host, page))
                left[host] -= 1
                if not left[host]:
                    del left[host]
            if not left or read >= budget:
                break
    notes = []
    if missing:
        notes.append(f"{len(missing)} input file(s) no longer there, e.g. {missing[0]}")
    if left and read >= budget:
        notes.append(f"sample pages are taken from the first {budget:,} records of the inputs: {len(left)} of the listed sites have fewer there")
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
