"""JSON Lines inputs."""

from __future__ import annotations

import gzip
import json

from pagetwin.config import InputSettings
from tests.fixtures.records import html_page, read_all


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
        assert [p.id for p in pages] == [f"{path.name}:1", "custom-7", f"{path.name}:5", f"{path.name}:8"]
        a, b, c, e = pages
        assert a.url == "https://a.org/" and a.body == html_page("A")
        assert a.meta == {"lang": "en", "crawl_date": "2024-02-01T00:00:00Z", "metadata": {"lang": "en", "crawl_date": "2024-02-01T00:00:00Z"}}
        assert a.crawl_date == "2024-02-01T00:00:00Z" and not a.meta.get("text_only")
        # a line with text and no HTML is a text-only document
        assert c.meta["text_only"] is True and c.body == b"no html here" and c.url == "https://c.org/"
        assert b.body.decode("utf-8") == "<html><body>Привет</body></html>"
        assert e.http_charset == "utf-8"  # the JSON string is Unicode, whatever the meta tag says
        assert a.payload_digest and a.payload_digest.startswith("sha1:")
        assert stats.skipped == {"bad-json": 2, "missing-html-or-text-field": 1}
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


def test_datatrove_documents_are_text_only_pages_with_their_metadata(tmp_path):
    """{"id", "text", "metadata"} lines (datatrove, NeMo Curator): documents, not skips; the URL
    and date from the metadata; the metadata carried in meta["metadata"]."""
    rows = [
        {"id": "doc-1", "text": "Erster Absatz.\nZweiter Absatz.", "metadata": {"url": "https://a.de/1", "date": "2024-03-01T00:00:00Z", "dump": "CC-MAIN-2024-10"}},
        {"id": "doc-2", "text": "Second <b>not a tag</b> & co.", "metadata": {"language_score": 0.93}, "source": "fineweb"},
        {"id": "doc-3", "text": "   ", "metadata": {}},
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    pages, stats = read_all([path])
    assert [p.id for p in pages] == ["doc-1", "doc-2"]
    one, two = pages
    assert one.meta["text_only"] and one.body.decode("utf-8") == rows[0]["text"] and one.http_charset == "utf-8"
    assert one.url == "https://a.de/1" and one.crawl_date == "2024-03-01T00:00:00Z"
    assert one.meta["metadata"] == rows[0]["metadata"]
    assert two.meta["metadata"] == {"language_score": 0.93, "source": "fineweb"} and two.url == ""
    assert two.body == rows[1]["text"].encode()  # the text as given: no HTML parsing
    assert stats.skipped == {"missing-html-or-text-field": 1}


def test_field_names_are_settings(tmp_path):
    from dataclasses import dataclass

    @dataclass
    class Named(InputSettings):
        jsonl_text_field: str = "content"
        jsonl_id_field: str = "doc_id"
        jsonl_metadata_field: str = "meta"

    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"doc_id": 7, "content": "Hello there.", "meta": {"k": 1}, "text": "ignored"}) + "\n")
    pages, _stats = read_all([path], Named())
    assert pages[0].id == "7" and pages[0].body == b"Hello there." and pages[0].meta["metadata"] == {"k": 1, "text": "ignored"}


def test_a_field_named_like_a_reader_key_is_metadata_only(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"url": "https://a.org/", "html": "<p>x</p>", "warc_offset": 5, "text_only": True}) + "\n")
    pages, _stats = read_all([path])
    assert "warc_offset" not in pages[0].meta and "text_only" not in pages[0].meta
    assert pages[0].meta["metadata"] == {"warc_offset": 5, "text_only": True}


def test_text_only_document_cut_on_a_character_boundary(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"text": "é" * 100}) + "\n", encoding="utf-8")
    pages, stats = read_all([path], InputSettings(max_page_bytes=51))
    assert pages[0].body == "é".encode() * 25 and pages[0].truncated and pages[0].meta["cut_at"] == 51
