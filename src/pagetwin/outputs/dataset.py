"""The kept documents for dataset builders (issue 13, item 7): one document per cluster, its
kept page's main text (after noise and template removal), as JSON Lines or Parquet.

JSONL, one line per document, the shape datatrove's JsonlReader and NeMo Curator read::

    {"id": ..., "text": ..., "metadata": {"url", "cluster", "cluster_size", "source_file",
     "source_offset", "crawl_date", "lang", "title", ...the input's own metadata}}

The input's metadata (a JSONL or Parquet document's ``metadata``) comes first; pagetwin's keys
are set over it, and an input value that a pagetwin key would hide is kept as ``input_<key>``.

Parquet (pyarrow, the ``parquet`` extra): columns ``id``, ``text`` and ``metadata``, a struct
of pagetwin's keys and ``input`` (the input's metadata as a JSON string, null without any):
one schema whatever the inputs' metadata holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pagetwin.outputs.files import atomic_path

FORMATS = ("jsonl", "parquet")
# pagetwin's metadata keys, in the order they are written.
KEYS = ("url", "cluster", "cluster_size", "source_file", "source_offset", "crawl_date", "lang", "title")


def documents(index: Any) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any] | None]]:
    """(id, text, pagetwin's metadata, the input's metadata or None) of each kept page, in the
    order the pages were added to the index. Pages without main text are left out: a dataset
    document is its text."""
    from pagetwin.pipeline import decompress_text

    for doc in index.kept_documents():
        text = decompress_text(doc["text"])
        if not text:
            continue
        own = {
            "url": doc["url"],
            "cluster": doc["cluster"],
            "cluster_size": doc["cluster_size"],
            "source_file": doc["source"],
            "source_offset": doc["warc_offset"],
            "crawl_date": doc["crawl_date"],
            "lang": doc["lang"],
            "title": doc["title"],
        }
        yield doc["id"], text, own, doc["metadata"] if isinstance(doc["metadata"], dict) else None


def merged_metadata(own: dict[str, Any], given: dict[str, Any] | None) -> dict[str, Any]:
    """The input's metadata with pagetwin's keys set over it; an input value a key would hide
    is kept as ``input_<key>``."""
    out = dict(given or {})
    for key, value in own.items():
        if key in out and out[key] != value:
            out[f"input_{key}"] = out[key]
        out[key] = value
    return out


def write_documents_jsonl(index: Any, path: str | Path) -> int:
    """``path`` (written atomically; gzipped when it ends in ``.gz``): one JSON line per kept
    document. Returns the count."""
    import gzip
    import os

    n = 0
    with atomic_path(path) as tmp:
        opener = gzip.open(tmp, "wt", encoding="utf-8") if str(path).endswith(".gz") else open(tmp, "w", encoding="utf-8")
        with opener as out:
            for doc_id, text, own, given in documents(index):
                line = {"id": doc_id, "text": text, "metadata": merged_metadata(own, given)}
                out.write(json.dumps(line, ensure_ascii=False, default=str))
                out.write("\n")
                n += 1
        with open(tmp, "rb+") as fh:  # on disk before the rename
            os.fsync(fh.fileno())
    return n


def _pyarrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise RuntimeError("Parquet documents need pyarrow, which is not installed: pip install 'pagetwin[parquet]'") from None
    return pa, pq


def write_documents_parquet(index: Any, path: str | Path, batch_rows: int = 10_000) -> int:
    """``path`` (written atomically) as a Parquet file, written in row groups of
    ``batch_rows`` so memory stays bounded. Returns the count. RuntimeError without pyarrow
    (check_outputs refuses the run before any work; see ``check_documents_target``)."""
    pa, pq = _pyarrow()
    meta_type = pa.struct(
        [
            ("url", pa.string()),
            ("cluster", pa.string()),
            ("cluster_size", pa.int64()),
            ("source_file", pa.string()),
            ("source_offset", pa.int64()),
            ("crawl_date", pa.string()),
            ("lang", pa.string()),
            ("title", pa.string()),
            ("input", pa.string()),
        ]
    )
    schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("metadata", meta_type)])
    n = 0
    with atomic_path(path) as tmp:
        writer = pq.ParquetWriter(str(tmp), schema)
        try:
            rows: list[dict[str, Any]] = []
            for doc_id, text, own, given in documents(index):
                own = {**own, "input": json.dumps(given, ensure_ascii=False, sort_keys=True, default=str) if given else None}
                rows.append({"id": doc_id, "text": text, "metadata": own})
                if len(rows) >= batch_rows:
                    writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                    n += len(rows)
                    rows = []
            if rows or n == 0:
                writer.write_table(pa.Table.from_pylist(rows, schema=schema))
                n += len(rows)
        finally:
            writer.close()
    return n


def write_documents(index: Any, path: str | Path, fmt: str | None = None) -> int:
    """The kept documents at ``path``: Parquet when ``fmt`` is "parquet" or the name ends in
    ``.parquet``, else JSONL. Returns the number of documents."""
    fmt = fmt or document_format(path)
    if fmt == "parquet":
        return write_documents_parquet(index, path)
    return write_documents_jsonl(index, path)


def document_format(path: str | Path) -> str:
    return "parquet" if str(path).lower().endswith(".parquet") else "jsonl"


def check_documents_target(path: str | Path) -> None:
    """Before any work: OutputError (one line, exit 2) when ``path`` cannot be written or
    Parquet is asked for without pyarrow."""
    from pagetwin.outputs.files import OutputError, _check_file_target

    _check_file_target(Path(path), "--documents", create_folder=False)
    if document_format(path) == "parquet":
        try:
            _pyarrow()
        except RuntimeError as exc:
            raise OutputError(f"--documents {path}: {exc}") from None
