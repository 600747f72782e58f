"""runners.local: pass 2 decides on pass 1's parsed pages instead of parsing again."""

from __future__ import annotations

import json

import pytest

import pagetwin.pipeline as pipeline
from pagetwin.cli import main
from pagetwin.config import Settings
from pagetwin.runners.local import iter_texts
from tests.html.sites import site_pages


def _site(tmp_path, n=8):
    path = tmp_path / "site.jsonl"
    with path.open("w") as fh:
        for url, html, _ in site_pages(n, seed=3, templates="ab"):
            fh.write(json.dumps({"url": url, "html": html}) + "\n")
    return path


@pytest.fixture
def parse_count(monkeypatch):
    calls = []
    real = pipeline.parse_limited

    def counting(html, max_depth):
        calls.append(len(html))
        return real(html, max_depth)

    monkeypatch.setattr(pipeline, "parse_limited", counting)
    return calls


@pytest.mark.parametrize("reuse", [True, False])
def test_each_page_is_parsed_once_when_pass_2_reuses_pass_1(tmp_path, parse_count, reuse):
    settings = Settings()
    settings.run.workers = 1
    settings.run.reuse_parse = reuse
    texts = [r["text"] for r in iter_texts([str(_site(tmp_path))], settings)]
    assert len(texts) == 8 and all(texts)
    assert len(parse_count) == (8 if reuse else 16)


def test_reused_parse_gives_the_same_texts_and_dedup_output(tmp_path):
    site = _site(tmp_path, n=10)
    settings = Settings()
    settings.run.workers = 1
    texts = [r["text"] for r in iter_texts([str(site)], settings)]
    settings.run.reuse_parse = False
    assert texts == [r["text"] for r in iter_texts([str(site)], settings)]
    outs = {}
    for flag in ("true", "false"):
        out = tmp_path / flag
        assert main(["dedup", str(site), "--out", str(out), "--workers", "2", "--set", f"run.reuse_parse={flag}"]) == 0
        summary = json.loads((out / "summary.json").read_text())
        outs[flag] = ((out / "clusters.jsonl").read_text(), summary["records"], summary["pages"])
    assert outs["true"] == outs["false"]
