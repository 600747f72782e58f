"""MinHash candidates of a dedup run's index under other banding rules, from its stored signatures.

    python -m bench.lsh_candidates INDEX [--truth CRAWL.truth.jsonl] [--sizes 10000,20000]
                                   [--rules 28x2/1,47x2/2]

Reads the ``minhash`` features the index holds (the signature, then the shingle count) and
takes the first N pages in pid order (a ``--copies`` crawl's first N records are its N-page
crawl). For each rule ``BANDSxROWS/MIN_BANDS`` it pairs the pages of every band bucket as
``match.distinct_pair_arrays`` does (``match.max_bucket`` windowing, ``min_bands``), verifies
the pairs with ``MinHash.passing`` and prints one JSON line: the bucket pairs (before the
min_bands count), candidates, passing, failing (and a page), and with ``--truth`` the seeded
pairs found and the false passes (a seeded pair: two URLs of one ``source``). Only the banding
changes, so no page is read or analysed again; the rule's bands x rows must fit the run's
num_perm. The run's own rule (its settings) gives its summary's MinHash counts.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from pagetwin.config import Settings
from pagetwin.fingerprints.minhash import MinHash
from pagetwin.match import MatchStats, distinct_pair_arrays


def parse_rule(text: str) -> tuple[int, int, int]:
    """"47x2/2" -> (47, 2, 2); "28x2" -> (28, 2, 1)."""
    shape, _, shared = text.partition("/")
    bands, _, rows = shape.partition("x")
    return int(bands), int(rows), int(shared or 1)


def load(index: Path) -> tuple[Settings, list[int], list[str], dict[int, np.ndarray]]:
    """The run's settings, its pids and URLs in pid order, and the MinHash features by pid."""
    db = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        row = db.execute("select value from meta where key = 'settings'").fetchone()
        settings = Settings.from_dict(json.loads(row[0])) if row else Settings()
        pages = db.execute("select pid, url from pages order by pid").fetchall()
        feats = {pid: np.frombuffer(data, dtype=np.uint32) for pid, data in db.execute("select pid, data from features where algo = 'minhash'")}
    finally:
        db.close()
    return settings, [p for p, _ in pages], [u for _, u in pages], feats


class _AnyCount:
    """The algorithm's pairing without its min_bands count (the bucket pairs before it)."""

    def __init__(self, algorithm: MinHash) -> None:
        self.name, self.keys_are_proof, self.min_shared_keys = algorithm.name, False, 1


def count(settings: Settings, pids: list[int], urls: list[str], feats: dict, rule: tuple[int, int, int],
          truth: dict[str, str] | None) -> dict:
    """One JSON row: the rule's pairs over these pages (module docstring)."""
    bands, rows, shared = rule
    algorithm = MinHash(replace(settings.minhash, min_bands=shared))
    if bands * rows > algorithm.settings.num_perm or bands < shared:
        raise ValueError(f"rule {bands}x{rows}/{shared} does not fit num_perm {algorithm.settings.num_perm}")
    algorithm.bands, algorithm.rows = bands, rows
    listed = [feats.get(pid) for pid in pids]
    present = [f for f in listed if f is not None]
    if not present:
        raise ValueError("the index holds no MinHash features")
    blank = np.zeros_like(present[0])  # a page without features: no keys, so never in a pair
    listed = [blank if f is None else f for f in listed]
    buckets = defaultdict(list)
    for i, pid in enumerate(pids):
        if pid in feats:
            for key in algorithm.keys(feats[pid]):
                buckets[key].append(i)
    groups = [b for b in buckets.values() if len(b) > 1]
    max_bucket = settings.match.max_bucket
    raw = sum(len(a) for a, _ in distinct_pair_arrays(iter(groups), max_bucket, _AnyCount(algorithm), MatchStats()))
    stats = MatchStats()
    candidates = passed = known_found = 0
    for first, second in distinct_pair_arrays(iter(groups), max_bucket, algorithm, stats):
        candidates += len(first)
        ok = np.array([i for i, _ in algorithm.passing(listed, first, second)], dtype=np.int64)
        passed += len(ok)
        if truth is not None and len(ok):
            known_found += sum(
                1 for a, b in zip(first[ok].tolist(), second[ok].tolist()) if truth.get(urls[a]) is not None and truth.get(urls[a]) == truth.get(urls[b])
            )
    n = len(pids)
    row = {"pages": n, "rule": f"{bands}x{rows}/{shared}", "keys_per_page": bands, "bucket_pairs": raw, "candidates": candidates,
           "passed": passed, "failing": candidates - passed, "failing_per_page": round((candidates - passed) / max(n, 1), 4),
           "oversized_buckets": stats.oversized_buckets.get(algorithm.name, 0)}  # fmt: skip
    if truth is not None:
        sources = Counter(truth[u] for u in urls if u in truth)
        row.update(seeded_pairs=sum(c * (c - 1) // 2 for c in sources.values()), seeded_found=known_found,
                   false_passed=passed - known_found)  # fmt: skip
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("--truth", type=Path, default=None, help="the crawl's .truth.jsonl (url, source per line)")
    ap.add_argument("--sizes", default="", help="first N pages, comma-separated (default: all)")
    ap.add_argument("--rules", default="", help="BANDSxROWS/MIN_BANDS, comma-separated (default: the run's own)")
    args = ap.parse_args(argv)
    if not args.index.is_file():
        print(f"no index at {args.index}", file=sys.stderr)
        return 1
    settings, pids, urls, feats = load(args.index)
    truth = None
    if args.truth is not None:
        truth = {}
        with open(args.truth, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                truth[r["url"]] = r["source"]
    own = MinHash(settings.minhash)
    rules = [parse_rule(r) for r in args.rules.split(",") if r] or [(own.bands, own.rows, own.min_shared_keys)]
    sizes = [int(s) for s in args.sizes.split(",") if s] or [len(pids)]
    for n in sizes:
        for rule in rules:
            try:
                row = count(settings, pids[:n], urls[:n], feats, rule, truth)
            except ValueError as exc:
                print(f"lsh_candidates: {exc}", file=sys.stderr)
                return 1
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
