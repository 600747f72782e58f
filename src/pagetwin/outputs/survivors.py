"""Write the pages kept in each cluster back out as WARC response records (survivors), and
clusters / pairs as Parquet tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_survivors(inputs: list[str], settings: Any, kept: set[tuple[str, str]], path: Path) -> int:
    """Read the inputs once more and write every kept page (its (id, absolute source) in
    ``kept``) as a WARC response record with its decoded payload. Revisits are never kept.
    Returns the number of records written."""
    import os

    from pagetwin.outputs.warc import WarcWriter
    from pagetwin.sources import SourceStats, iter_pages

    written = 0
    with WarcWriter(path) as out:
        for page in iter_pages(inputs, settings.input, SourceStats()):
            if page.kind != "response" or (page.id, os.path.abspath(page.source)) not in kept:
                continue
            content_type = page.meta.get("content_type") or "text/html"
            if page.http_charset:
                content_type += f"; charset={page.http_charset}"
            record_id = page.id if page.id.startswith("<urn:") else None
            out.write_response(
                page.url,
                page.body,
                date=page.crawl_date,
                record_id=record_id,
                content_type=content_type,
                headers=[("WARC-Source-Id", page.id)] if record_id is None else None,
            )
            written += 1
    return written


def write_parquet(index: Any, out_dir: Path) -> None:
    """DIR/clusters.parquet and DIR/pairs.parquet, the same rows as the JSONL files."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # the `parquet` extra
        raise RuntimeError("Parquet output needs pyarrow: pip install 'pagetwin[parquet]'") from exc
    from pagetwin.outputs.files import atomic_path
    from pagetwin.outputs.jsonl import index_clusters

    rows = list(index_clusters(index))
    table = pa.table(
        {
            "id": [r[0] for r in rows],
            "url": [r[1] for r in rows],
            "cluster": [r[2] for r in rows],
            "keep": [bool(r[3]) for r in rows],
        }
    )
    with atomic_path(out_dir / "clusters.parquet") as tmp:
        pq.write_table(table, tmp)
    pairs = [json.loads(line) for line in (out_dir / "pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    pairs_table = pa.table(
        {
            "a": [p["a"] for p in pairs],
            "b": [p["b"] for p in pairs],
            "url_a": [p["url_a"] for p in pairs],
            "url_b": [p["url_b"] for p in pairs],
            "kind": [p["kind"] for p in pairs],
            "evidence": [json.dumps(p["evidence"], ensure_ascii=False) for p in pairs],
        }
    )
    with atomic_path(out_dir / "pairs.parquet") as tmp:
        pq.write_table(pairs_table, tmp)
