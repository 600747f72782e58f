"""Incremental runs against one run over the same inputs (issue 14, item 4).

One ``pagetwin dedup`` over all the crawl files, then the same files added one run at a time
to one index (``--add``, in the given order, or alternating between two halves with
``--alternate``), and the two final ``clusters.jsonl`` compared: the partitions (which pages
share a cluster, whatever the cluster ids), the kept page of each cluster, and each page's
stored text length.

    python bench/incremental.py ../shared/data/warc/*.warc.gz ../shared/data/warc/*.arc.gz
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path


def _dedup(inputs: list[str], out: Path, add: bool) -> None:
    cmd = [sys.executable, "-m", "pagetwin", "dedup", *inputs, "--out", str(out), "--workers", "2"]
    if add:
        cmd.append("--add")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    # 1: no page could be read from this input (a damaged file); the run is still counted.
    if proc.returncode not in (0, 1, 3) or not (out / "summary.json").exists():
        raise SystemExit(f"dedup failed ({proc.returncode}): {proc.stderr[-800:]}")


def _result(out: Path) -> dict:
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    members: dict[str, set] = {}
    for row in rows:
        members.setdefault(row["cluster"], set()).add(row["id"])
    partition = {frozenset(m) for m in members.values()}
    kept = {frozenset(members[r["cluster"]]): r["id"] for r in rows if r["keep"]}
    db = sqlite3.connect(out / "index.sqlite")
    lengths = dict(db.execute("SELECT id, text_len FROM pages"))
    return {"pages": len(rows), "partition": partition, "kept": kept, "lengths": lengths}


def compare(one: dict, inc: dict) -> dict:
    common = one["partition"] & inc["partition"]
    return {
        "pages": [one["pages"], inc["pages"]],
        "clusters": [len(one["partition"]), len(inc["partition"])],
        "clusters_differing": len(one["partition"] - inc["partition"]),
        "kept_differing": sum(1 for c in common if one["kept"].get(c) != inc["kept"].get(c)),
        "text_lengths_differing": sum(1 for k, v in one["lengths"].items() if inc["lengths"].get(k) != v),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--alternate", action="store_true", help="add the files alternating between two halves")
    args = parser.parse_args(argv)
    files = list(args.inputs)
    if args.alternate:
        half = (len(files) + 1) // 2
        files = [f for pair in zip(files[:half], files[half:] + [None] * half) for f in pair if f]
    with tempfile.TemporaryDirectory() as tmp:
        one, inc = Path(tmp) / "one", Path(tmp) / "inc"
        _dedup(files, one, add=False)
        for i, path in enumerate(files):
            _dedup([path], inc, add=i > 0)
        report = compare(_result(one), _result(inc))
    print(json.dumps({"files": len(files), **report}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
