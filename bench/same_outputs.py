"""Fingerprint a run's outputs so that a refactoring can show it changed nothing.

For each crawl (the example crawl and every WARC/ARC in ``../shared/data/warc``) and each
engine, run ``pagetwin dedup`` into a fresh folder and record the SHA-256 of
``clusters.jsonl`` and ``pairs.jsonl`` and the summary's counts (timings, paths and the
settings' echo left out).  ``--save F`` writes the figures; ``--against F`` compares and
exits 1 on any difference.

    python bench/same_outputs.py --save /tmp/before.json
    python bench/same_outputs.py --against /tmp/before.json --runners local,spark
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "warc"
EXAMPLE = ROOT / "examples" / "debian-docs.warc.gz"
# Summary keys that depend on the machine or the run, not on the result.
VOLATILE = {"timings", "seconds", "settings", "out", "index", "inputs", "version", "versions", "pages_per_second"}


def crawls() -> list[Path]:
    found = [EXAMPLE]
    if DATA.is_dir():
        found += sorted(p for p in DATA.iterdir() if p.is_file() and (".warc" in p.name or ".arc" in p.name))
        found.append(DATA)  # every crawl in one run, sub-folders included
    return found


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def _counts(summary: dict) -> dict:
    counts = {k: v for k, v in sorted(summary.items()) if k not in VOLATILE and "time" not in k}
    # Paths in messages name the checkout and the data folder: compare them relative to those.
    text = json.dumps(counts).replace(str(DATA), "<data>").replace(str(ROOT), "<root>")
    return json.loads(text)


def _restricted(after: object, before: object) -> object:
    """``after`` with only the dict keys ``before`` has, at every depth."""
    if isinstance(after, dict) and isinstance(before, dict):
        return {k: _restricted(v, before[k]) for k, v in after.items() if k in before}
    return after


def run_one(crawl: Path, runner: str, python: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        cmd = [python, "-m", "pagetwin", "dedup", str(crawl), "--out", str(out), "--runner", runner]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
        summary_path = out / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        return {
            "exit": proc.returncode,
            "clusters": _sha(out / "clusters.jsonl"),
            "pairs": _sha(out / "pairs.jsonl"),
            "counts": _counts(summary),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runners", default="local", help="comma-separated: local,spark")
    parser.add_argument("--save", type=Path, help="write the figures to this JSON file")
    parser.add_argument("--against", type=Path, help="compare with figures saved earlier")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--new-keys-ok", action="store_true",
                        help="summary keys the saved figures lack (a summary that gained a count) are not differences")
    args = parser.parse_args(argv)
    results = {}
    for runner in args.runners.split(","):
        for crawl in crawls():
            key = f"{runner}:{crawl.name if crawl.is_file() else crawl.name + '/'}"
            results[key] = run_one(crawl, runner, args.python)
            print(key, results[key]["exit"], results[key]["clusters"][:12], results[key]["pairs"][:12], file=sys.stderr)
    if args.save:
        args.save.write_text(json.dumps(results, indent=1, sort_keys=True))
    if args.against:
        before = json.loads(args.against.read_text())
        if args.new_keys_ok:
            for key in results:
                if key in before:
                    results[key]["counts"] = _restricted(results[key]["counts"], before[key]["counts"])
        differ = [k for k in results if k in before and before[k] != results[k]]
        for key in differ:
            print(f"DIFFERENT {key}:\n  before {before[key]}\n  after  {results[key]}")
        print(f"{len(results) - len(differ)} of {len(results)} runs unchanged")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
