"""clusters.jsonl, pairs.jsonl and summary.json, streamed from the index; each written to a
temporary file and renamed into place (outputs.files.atomic_open)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pagetwin.outputs.files import atomic_open


def index_clusters(index: Any):
    """(id, url, cluster, keep) of every page in the index, in the order they were added: the
    same pages pairs.jsonl describes (an index added to holds earlier runs' pages too)."""
    return index.db.execute(
        "SELECT p.id, p.url, c.cluster, c.keep FROM pages p JOIN clusters c USING (pid) ORDER BY p.pid"
    )


def write_clusters(index: Any, path: Path) -> tuple[int, int, int]:
    """One line per page of the index: {"id", "url", "cluster", "keep"}.
    Returns (lines, clusters, duplicates = pages not kept)."""
    lines = 0
    clusters: set[str] = set()
    with atomic_open(path) as out:
        for page_id, url, cluster, keep in index_clusters(index):
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

    with atomic_open(path) as out:
        for a, b, kind, evidence in index.edges():
            (id_a, url_a), (id_b, url_b) = ident(a), ident(b)
            record = {"a": id_a, "b": id_b, "url_a": url_a, "url_b": url_b, "kind": kind, "evidence": json.loads(evidence)}
            out.write(json.dumps(record, ensure_ascii=False))
            out.write("\n")
            n += 1
    return n


def write_summary(summary: dict[str, Any], path: Path) -> None:
    with atomic_open(path) as out:
        json.dump(summary, out, indent=2, ensure_ascii=False, default=str)
        out.write("\n")
