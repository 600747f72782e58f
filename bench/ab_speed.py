"""Speed of two checkouts of pagetwin on the same pages, interleaved in one run (A/B).

A refactoring must not make dedup slower. Timing one checkout now and the other later on a
shared, noisy machine says little; this runs ``pagetwin dedup --workers 1`` from checkout A and
from checkout B alternately, ``--rounds`` times each, on the same corpus, and reports each run's
pages per second and pages per CPU second (user + system time: what the load of other
processes changes least), the medians and the ratios B / A.

    git worktree add /tmp/before <commit>
    python bench/ab_speed.py /tmp/before . --corpus bench/data/corpus-5000.warc.gz --rounds 3

``--set SECTION.NAME=VALUE`` (repeatable) is passed to both runs.
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


def run_once(checkout: Path, corpus: Path, workers: int, settings: list[str] | tuple[str, ...] = ()) -> tuple[float, float]:
    """(pages per second, pages per CPU second) of one dedup run: wall clock of the whole
    process, start-up included, and its user + system CPU time (os.wait4, the process and the
    workers it waited for), the steadier figure on a shared machine."""
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as err:
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "pagetwin", "dedup", str(corpus), "--out", str(out), "--workers", str(workers)]
        cmd += [arg for setting in settings for arg in ("--set", setting)]
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.monotonic() - started
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 3):
            err.seek(0)
            raise SystemExit(f"{checkout}: dedup failed ({code}): {err.read().decode(errors='replace')[-500:]}")
        pages = json.loads((out / "summary.json").read_text())["pages"]["read"]
    return pages / seconds, pages / max(usage.ru_utime + usage.ru_stime, 1e-9)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="checkout A (before)")
    parser.add_argument("b", type=Path, help="checkout B (after)")
    parser.add_argument("--corpus", type=Path, default=Path("bench/data/corpus-5000.warc.gz"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.NAME=VALUE",
                        help="a setting of both runs (e.g. match.algorithms=exact,con-w,minhash,images)")  # fmt: skip
    args = parser.parse_args(argv)
    speeds: dict[str, list[float]] = {"a": [], "b": []}
    cpu: dict[str, list[float]] = {"a": [], "b": []}
    for round_no in range(args.rounds):
        for name in ("a", "b") if round_no % 2 == 0 else ("b", "a"):
            speed, per_cpu = run_once(getattr(args, name).resolve(), args.corpus.resolve(), args.workers, args.set)
            speeds[name].append(speed)
            cpu[name].append(per_cpu)
            print(f"round {round_no + 1} {name}: {speed:.1f} pages/s, {per_cpu:.1f} pages/CPU-s", file=sys.stderr)
    med_a, med_b = statistics.median(speeds["a"]), statistics.median(speeds["b"])
    cpu_a, cpu_b = statistics.median(cpu["a"]), statistics.median(cpu["b"])
    print(json.dumps({"a": str(args.a), "b": str(args.b), "pages_per_second": speeds, "pages_per_cpu_second": cpu,
                      "median_a": round(med_a, 1), "median_b": round(med_b, 1), "ratio_b_a": round(med_b / med_a, 3),
                      "median_cpu_a": round(cpu_a, 1), "median_cpu_b": round(cpu_b, 1),
                      "ratio_cpu_b_a": round(cpu_b / cpu_a, 3)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
