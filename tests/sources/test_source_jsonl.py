"""JSON Lines inputs."""

from __future__ import annotations

import gzip
import json

from pagetwin.config import InputSettings
from tests.sources.source_helpers import html_page, read_all


def _lines(tmp_path, name="pages.jsonl", compress=False):
    rows = [
        json.dumps({"url": "https://a.org/", "html": html_page("A").decode(), "lang": "en", "crawl_date": "2024-02-01T00:00:00Z"}),
        json.dumps({"id": "custom-7", "url": "https://b.org/", "html": "<html><body>Привет</body></html>"}),
        "",
        "{not json",
        json.dumps({"url": "https://c.org/", "text": "no html here"}),
        json.dumps(["a", "list"]),
        json.dumps({"url": "https://d.org/", "html": ""}),
        json.dumps({"url": "https://e.org/", "html": '<meta charset="gbk"><p>utf-8 in json</p>'}),
    ]
    data = ("\n".join(rows) + "\n").encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def test_jsonl_pages_ids_meta_and_reasons(tmp_path):
    for compress in (False, True):
        path = _lines(tmp_path, "pages.jsonl.gz" if compress else "pages.jsonl", compress)
        pages, stats = read_all([path])
        assert [p.id for p in pages] == [f"{path.name}:1", "custom-7", f"{path.name}:8"]
        a, b, e = pages
        assert a.url == "https://a.org/" and a.body == html_page("A")
        assert a.meta == {"lang": "en", "crawl_date": "2024-02-01T00:00:00Z"} and a.crawl_date == "2024-02-01T00:00:00Z"
        assert b.body.decode("utf-8") == "<html><body>Привет</body></html>"
        assert e.http_charset == "utf-8"  # the JSON string is Unicode, whatever the meta tag says
        assert a.payload_digest and a.payload_digest.startswith("sha1:")
        assert stats.skipped == {"bad-json": 2, "missing-html-field": 2}
        assert stats.records_total == 7  # the blank line is not a record


def test_jsonl_invalid_utf8_line_keeps_the_page(tmp_path):
    path = tmp_path / "bad-utf8.jsonl"
    path.write_bytes(b'{"url": "https://x.org/", "html": "<p>caf\xe9</p>"}\n')
    pages, stats = read_all([path])
    assert len(pages) == 1 and "\ufffd".encode() in pages[0].body


def test_jsonl_huge_page_cut(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"url": "https://x.org/", "html": "<p>" + "word " * 5000 + "</p>"}) + "\n")
    pages, stats = read_all([path], InputSettings(max_page_bytes=100))
    assert len(pages[0].body) == 100 and pages[0].truncated and stats.cut == 1


def test_truncated_jsonl_gz(tmp_path):
    data = gzip.compress(b"".join(json.dumps({"url": f"https://x.org/{i}", "html": f"<p>{i} " + "x" * 500 + "</p>"}).encode() + b"\n" for i in range(50)))
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    pages, stats = read_all([path])
    assert 0 < len(pages) < 50
    assert stats.skipped.get("truncated-gzip") == 1 and stats.errors
