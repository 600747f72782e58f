"""The kept documents as JSONL and Parquet: id, text, metadata (url, cluster, cluster size,
source file and offset, the input's own metadata)."""

from __future__ import annotations

import json

import pytest

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index
from pagetwin.outputs.dataset import merged_metadata, write_documents
from pagetwin.outputs.files import OutputError, check_outputs
from pagetwin.pipeline import compress_text


def _index(tmp_path):
    idx = Index(tmp_path / "index.sqlite", Settings().to_dict())
    rows = [
        ("<urn:uuid:1>", "https://a.example/", "Main text of A.", 120, None),
        ("<urn:uuid:2>", "https://b.example/", "Main text of A.", 4567, None),
        ("doc-7", "", "Ein Dokument.", None, {"url": "https://src.example/7", "dump": "CC-2024-10", "score": 0.9}),
        ("empty", "https://e.example/", "", 10, None),
    ]
    pids = []
    for page_id, url, text, offset, meta in rows:
        pids.append(idx.add_page({
            "id": page_id, "url": url, "host": "h", "source": "/data/crawl.warc.gz", "kind": "response",
            "crawl_date": "2024-05-01T00:00:00Z", "text_len": len(text), "payload_digest": None,
            "refers_to_digest": None, "lang": "en", "title": "T", "text": compress_text(text) if text else None,
            "error": None, "warc_offset": offset, "metadata": meta,
        }))
    idx.replace_clusters([(pids[0], "c1", 1), (pids[1], "c1", 0), (pids[2], "c2", 1), (pids[3], "c3", 1)])
    return idx


def test_jsonl_documents(tmp_path):
    idx = _index(tmp_path)
    out = tmp_path / "docs.jsonl"
    assert write_documents(idx, out) == 2
    docs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [d["id"] for d in docs] == ["<urn:uuid:1>", "doc-7"]
    assert set(docs[0]) == {"id", "text", "metadata"}
    assert docs[0]["text"] == "Main text of A."
    m = docs[0]["metadata"]
    assert (m["url"], m["cluster"], m["cluster_size"], m["source_file"], m["source_offset"]) == (
        "https://a.example/", "c1", 2, "/data/crawl.warc.gz", 120)
    m7 = docs[1]["metadata"]
    # the input's metadata is kept; the URL pagetwin has none for does not hide it
    assert m7["dump"] == "CC-2024-10" and m7["score"] == 0.9 and m7["url"] == "" and m7["input_url"] == "https://src.example/7"


def test_jsonl_documents_gzipped(tmp_path):
    import gzip

    idx = _index(tmp_path)
    out = tmp_path / "docs.jsonl.gz"
    assert write_documents(idx, out) == 2
    lines = gzip.decompress(out.read_bytes()).decode("utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["<urn:uuid:1>", "doc-7"]


def test_parquet_documents(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    idx = _index(tmp_path)
    out = tmp_path / "docs.parquet"
    assert write_documents(idx, out) == 2
    rows = pq.read_table(out).to_pylist()
    assert [r["id"] for r in rows] == ["<urn:uuid:1>", "doc-7"]
    assert rows[0]["metadata"]["source_offset"] == 120 and rows[0]["metadata"]["cluster_size"] == 2
    assert rows[0]["metadata"]["input"] is None
    assert json.loads(rows[1]["metadata"]["input"])["dump"] == "CC-2024-10"


def test_parquet_documents_in_row_groups(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    from pagetwin.outputs.dataset import write_documents_parquet

    idx = _index(tmp_path)
    out = tmp_path / "d.parquet"
    assert write_documents_parquet(idx, out, batch_rows=1) == 2
    assert pq.ParquetFile(out).num_row_groups == 2


def test_no_kept_document_writes_empty_files(tmp_path):
    idx = Index(tmp_path / "index.sqlite", Settings().to_dict())
    assert write_documents(idx, tmp_path / "d.jsonl") == 0 and (tmp_path / "d.jsonl").read_text() == ""
    pq = pytest.importorskip("pyarrow.parquet")
    assert write_documents(idx, tmp_path / "d.parquet") == 0 and pq.read_table(tmp_path / "d.parquet").num_rows == 0


def test_merged_metadata_keeps_what_it_would_hide():
    assert merged_metadata({"url": "u", "cluster": "c"}, {"url": "v", "x": 1}) == {"url": "u", "input_url": "v", "x": 1, "cluster": "c"}
    assert merged_metadata({"url": "u"}, None) == {"url": "u"}
    assert merged_metadata({"url": "u"}, {"url": "u"}) == {"url": "u"}


def test_targets_checked_before_any_work(tmp_path, monkeypatch):
    with pytest.raises(OutputError, match="--documents"):
        check_outputs(tmp_path / "out", documents=tmp_path / "no-such-folder" / "d.jsonl")
    with pytest.raises(OutputError, match="--dedup-warc"):
        check_outputs(tmp_path / "out", dedup_warc=tmp_path)  # a folder
    with pytest.raises(OutputError, match="--survivors and --dedup-warc name the same file"):
        check_outputs(tmp_path / "out", survivors=tmp_path / "a.warc.gz", dedup_warc=tmp_path / "a.warc.gz")
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(OutputError, match="pyarrow"):
        check_outputs(tmp_path / "out", documents=tmp_path / "d.parquet")
    check_outputs(tmp_path / "out", documents=tmp_path / "d.jsonl")  # JSONL needs no pyarrow
