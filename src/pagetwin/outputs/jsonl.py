"""clusters.jsonl, pairs.jsonl and summary.json, streamed from the index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_clusters(index: Any, path: Path) -> tuple[int, int, int]:
    """One line per page of this run: {"id", "url", "cluster", "keep"}.
    Returns (lines, clusters, duplicates = pages not kept)."""
    lines = 0
    clusters: set[str] = set()
    with open(path, "w", encoding="utf-8") as out:
        for page_id, url, cluster, keep in index.run_clusters():
            out.write(json.dumps({"id": page_id, "url": url, "cluster": cluster, "keep": bool(keep)}, ensure_ascii=False))
            out.write("\n")
            lines += 1
            clusters.add(cluster)
    return lines, len(clusters), lines - len(clusters)


def write_pairs(index: Any, path: Path) -> int:
    """One line per verified edge: both pages, the edge kind and every algorithm's evidence."""
    n = 0
    ids: dict[int, tuple[str, str]] = {}

    def ident(pid: int) -> tuple[str, str]:
        if pid not in ids:
            if len(ids) > 100_000:
                ids.clear()
            ids[pid] = index.page_ident(pid)
        return ids[pid]

    with open(path, "w", encoding="utf-8") as out:
        for a, b, kind, evidence in index.edges():
            (id_a, url_a), (id_b, url_b) = ident(a), ident(b)
            record = {"a": id_a, "b": id_b, "url_a": url_a, "url_b": url_b, "kind": kind, "evidence": json.loads(evidence)}
            out.write(json.dumps(record, ensure_ascii=False))
            out.write("\n")
            n += 1
    return n


def write_summary(summary: dict[str, Any], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(summary, out, indent=2, ensure_ascii=False, default=str)
        out.write("\n")
