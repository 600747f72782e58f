"""Parquet inputs: one document per row, the columns named as JSONL fields are (``id``,
``text``, ``metadata``, or ``html`` and ``url``; names from the same settings,
sources.jsonl.field_names), the way datatrove and NeMo Curator write them.

A row with HTML is a page; a row with text and no HTML is a text-only document
(``meta["text_only"]``, body = the UTF-8 text), as for JSONL (sources.jsonl.document_page). The
``metadata`` column (a struct, a map, or a JSON string) and the other columns are the row's
metadata, ``meta["metadata"]``. The id is the ``id`` column, else "<file name>:<row>"
(0-based, as pyarrow counts). Rows are read in batches, only the columns needed (no column is
left out: the others are metadata), so memory stays bounded by a batch.

pyarrow is an optional dependency (the ``parquet`` extra): without it the file is an input
error with one line saying so, and nothing is read. ``has_parquet_magic`` tells a Parquet file
by its first bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import Skip, SourceStats
from pagetwin.sources.jsonl import document_page, field_names

MAGIC = b"PAR1"
BATCH_ROWS = 1024
NO_PYARROW = "Parquet input needs pyarrow, which is not installed: pip install 'pagetwin[parquet]'"


def has_parquet_magic(path: str) -> bool:
    """Whether ``path`` starts (and ends) with Parquet's magic bytes."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            fh.seek(0, os.SEEK_END)
            if fh.tell() < 12:
                return False
            fh.seek(-4, os.SEEK_END)
            return head == MAGIC and fh.read(4) == MAGIC
    except OSError:
        return False


def pyarrow_available() -> bool:
    try:
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


def _metadata_value(value: Any) -> dict | None:
    """A metadata cell as a dict: a struct (dict), a map (list of pairs) or a JSON object string."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return {str(k): v for k, v in value}
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _plain(value: Any) -> Any:
    """A cell as JSON-serialisable Python (bytes as text, dates as ISO strings)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def iter_parquet(path: str, settings: InputSettings, stats: SourceStats) -> Iterator[Page | Skip]:
    """The documents of the Parquet file ``path``; a file pyarrow cannot read (or no pyarrow)
    is an input error (``stats.error``), the rows read before a damaged part stand."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        stats.error(f"{path}: {NO_PYARROW}")
        return
    name = os.path.basename(path)
    names = field_names(settings)
    row = 0
    try:
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=BATCH_ROWS):
            for obj in batch.to_pylist():
                where = f"{name}:{row}"
                row += 1
                obj = {str(k): _plain(v) for k, v in obj.items()}
                meta_col = names["metadata"]
                if meta_col in obj:
                    obj[meta_col] = _metadata_value(obj[meta_col]) if obj[meta_col] is not None else None
                yield document_page(obj, where, path, settings, names)
    except (OSError, ValueError, pa.ArrowException) as exc:
        msg = " ".join(str(exc).split())[:200]
        if row == 0:
            stats.error(f"{path}: not a readable Parquet file ({msg})")
        else:
            stats.error(f"{path}: unreadable after row {row - 1} ({msg})")
        yield Skip("bad-parquet", f"{name} after row {row}")
