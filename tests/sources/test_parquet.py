"""Parquet inputs: datatrove-style {id, text, metadata} rows as text-only documents, HTML rows
as pages, metadata carried; a clear input error without pyarrow or on a damaged file."""

from __future__ import annotations

import builtins
import json

import pytest

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import SourceStats
from pagetwin.sources.parquet import NO_PYARROW, has_parquet_magic, iter_parquet

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _read(path, settings=None):
    stats = SourceStats()
    items = list(iter_parquet(str(path), settings or InputSettings(), stats))
    return [i for i in items if isinstance(i, Page)], [i for i in items if not isinstance(i, Page)], stats


def test_rows_are_documents_with_their_metadata(tmp_path):
    path = tmp_path / "docs.parquet"
    table = pa.table({
        "id": ["d1", "d2", None, "d4"],
        "text": ["Erster Text.", "", "Third text without id.", None],
        "html": [None, "<html><body><p>HTML row</p></body></html>", None, None],
        "url": [None, "https://b.example/", None, None],
        "metadata": [{"url": "https://a.example/1", "dump": "CC-2024"}, {"url": None, "dump": "CC-2023"}, None, None],
        "score": [0.5, 0.7, 0.1, 0.0],
    })
    pq.write_table(table, path, row_group_size=2)
    assert has_parquet_magic(str(path))
    pages, skips, stats = _read(path)
    assert [p.id for p in pages] == ["d1", "d2", "docs.parquet:2"]
    one, two, three = pages
    assert one.meta["text_only"] and one.body == "Erster Text.".encode() and one.url == "https://a.example/1"
    assert one.meta["metadata"] == {"url": "https://a.example/1", "dump": "CC-2024", "score": 0.5}
    assert not two.meta.get("text_only") and two.body.startswith(b"<html>") and two.url == "https://b.example/"
    assert three.meta["text_only"] and three.meta["metadata"] == {"score": 0.1}
    assert [s.reason for s in skips] == ["missing-html-or-text-field"] and not stats.errors


def test_metadata_as_a_json_string_column(tmp_path):
    path = tmp_path / "j.parquet"
    pq.write_table(pa.table({"id": ["x"], "text": ["Some text."], "metadata": [json.dumps({"lang": "en", "n": 3})]}), path)
    pages, _skips, _stats = _read(path)
    assert pages[0].meta["metadata"] == {"lang": "en", "n": 3}


def test_column_names_are_settings(tmp_path):
    from dataclasses import dataclass

    @dataclass
    class Named(InputSettings):
        jsonl_text_field: str = "content"
        jsonl_id_field: str = "uid"

    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"uid": [42], "content": ["Named columns."]}), path)
    pages, _skips, _stats = _read(path, Named())
    assert pages[0].id == "42" and pages[0].body == b"Named columns."


def test_a_damaged_file_is_an_input_error(tmp_path):
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1 this is no parquet at all PAR1")
    pages, skips, stats = _read(path)
    assert pages == [] and [s.reason for s in skips] == ["bad-parquet"]
    assert len(stats.errors) == 1 and "not a readable Parquet file" in stats.errors[0]
    assert not has_parquet_magic(str(tmp_path / "missing.parquet"))


def test_without_pyarrow_one_clear_error(tmp_path, monkeypatch):
    path = tmp_path / "docs.parquet"
    pq.write_table(pa.table({"id": ["d1"], "text": ["x"]}), path)
    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    pages, skips, stats = _read(path)
    assert pages == [] and skips == []
    assert stats.errors == [f"{path}: {NO_PYARROW}"]
