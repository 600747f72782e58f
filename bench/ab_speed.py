"""Speed of two checkouts of pagetwin on the same pages, interleaved in one run (A/B).

A refactoring must not make dedup slower. Timing one checkout now and the other later on a
shared, noisy machine says little; this runs ``pagetwin dedup --workers 1`` from checkout A and
from checkout B alternately, ``--rounds`` times each, on the same corpus, and reports each run's
pages per second, the medians and the ratio B / A.

    git worktree add /tmp/before <commit>
    python bench/ab_speed.py /tmp/before . --corpus bench/data/corpus-5000.warc.gz --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(checkout: Path, corpus: Path, workers: int) -> float:
    """Pages per second of one dedup run (wall clock of the whole process, start-up included)."""
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "pagetwin", "dedup", str(corpus), "--out", str(out), "--workers", str(workers)]
        started = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        seconds = time.monotonic() - started
        if proc.returncode not in (0, 3):
            raise SystemExit(f"{checkout}: dedup failed ({proc.returncode}): {proc.stderr[-500:]}")
        pages = json.loads((out / "summary.json").read_text())["pages"]["read"]
    return pages / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="checkout A (before)")
    parser.add_argument("b", type=Path, help="checkout B (after)")
    parser.add_argument("--corpus", type=Path, default=Path("bench/data/corpus-5000.warc.gz"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    speeds: dict[str, list[float]] = {"a": [], "b": []}
    for round_no in range(args.rounds):
        for name in ("a", "b") if round_no % 2 == 0 else ("b", "a"):
            speed = run_once(getattr(args, name).resolve(), args.corpus.resolve(), args.workers)
            speeds[name].append(speed)
            print(f"round {round_no + 1} {name}: {speed:.1f} pages/s", file=sys.stderr)
    med_a, med_b = statistics.median(speeds["a"]), statistics.median(speeds["b"])
    print(json.dumps({"a": str(args.a), "b": str(args.b), "pages_per_second": speeds,
                      "median_a": round(med_a, 1), "median_b": round(med_b, 1), "ratio_b_a": round(med_b / med_a, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
