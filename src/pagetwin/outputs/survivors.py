"""Write the pages kept in each cluster back out as a WARC file (survivors), and
clusters / pairs as Parquet tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_survivors(inputs: list[str], settings: Any, kept: set[tuple[str, str]], path: Path) -> int:
    """Read the inputs once more and write every kept page (its (id, absolute source) in
    ``kept``) to the WARC file ``path``: first a warcinfo record naming pagetwin, then, for a
    page read from a WARC file, its record exactly as read (WARC headers, HTTP head, payload:
    digests stay valid), found by its offset, else by its WARC-Record-ID in one scan of its
    file; for other pages (HTML files, JSONL, ARC) a new record (``WarcWriter.write_new_page``).
    A record is written once however often it is kept. Revisits are never kept. Returns the
    number of page records written (the warcinfo not counted)."""
    import os

    from pagetwin import __version__
    from pagetwin.outputs.files import atomic_path
    from pagetwin.outputs.warc import WarcWriter, iter_raw_records
    from pagetwin.sources import SourceStats, iter_pages

    path = Path(path)
    written = 0
    done: set[Any] = set()  # WARC-Record-IDs copied, and (id, source) of the pages written
    missing: dict[str, set[str]] = {}  # WARC file -> ids of kept records not found at their offset
    with atomic_path(path) as tmp, WarcWriter(tmp, gzip=path.name.endswith(".gz")) as out:
        out.write_warcinfo(
            path.name,
            {
                "software": f"pagetwin {__version__}",
                "format": "WARC File Format 1.1",
                "description": "pages kept by pagetwin dedup; records from WARC inputs copied byte for byte "
                "(each keeps its own WARC version)",
            },
        )
        for page in iter_pages(inputs, settings.input, SourceStats()):
            source = os.path.abspath(page.source)
            if page.kind != "response" or (page.id, source) not in kept or ("page", page.id, source) in done:
                continue
            done.add(("page", page.id, source))
            offset = page.meta.get("warc_offset") if page.meta else None
            if offset is not None:
                if page.id in done:
                    continue
                rid = out.copy_record(page.source, offset, record_id=page.id)
                if rid is None and page.id.endswith(f":{offset}"):  # a record without WARC-Record-ID
                    rid = out.copy_record(page.source, offset, record_id="")
                if rid is None:
                    missing.setdefault(page.source, set()).add(page.id)
                    continue
                done.add(page.id)
            else:
                out.write_new_page(page)
            written += 1
        for source, ids in missing.items():  # not where the offset said: one scan of the file
            for rid, raw in iter_raw_records(source):
                if rid in ids and rid not in done:
                    out.write_raw_record(raw)
                    done.add(rid)
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
