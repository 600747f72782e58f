"""Candidates -> verification -> edges.

Pages sharing a candidate key of an algorithm are candidate pairs; each pair is verified by that
algorithm from the two pages' stored features, and becomes an edge only if it passes. Buckets
larger than ``match.max_bucket`` are not compared all-pairs (quadratic): each member is compared
with its ``WINDOW`` neighbours in crawl order only, and the bucket is counted.

``find_new_edges`` is the incremental form: after pages were added (pids above ``first_new``;
pids only grow, so they sort last in every bucket), the pairs ``find_edges`` would verify that
involve a new page, and no other; the edges between older pages are those stored already.
"""

from __future__ import annotations

import json
from collections import Counter, OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pagetwin.fingerprints.base import Algorithm
from pagetwin.index.sqlite import Index
from pagetwin.model import Edge, Evidence

WINDOW = 16  # neighbours compared in an oversized bucket (query.py reads it too)
_CACHE = 50_000  # decoded features kept in memory per algorithm


@dataclass
class MatchStats:
    candidates: Counter = field(default_factory=Counter)  # algorithm -> candidate pairs verified
    passed: Counter = field(default_factory=Counter)  # algorithm -> pairs that passed
    oversized_buckets: Counter = field(default_factory=Counter)  # algorithm -> buckets over max_bucket
    revisit_edges: int = 0
    incremental: bool = False  # only the pairs with a new page were verified (find_new_edges)

    def to_dict(self) -> dict[str, Any]:
        return {
            "candidates": dict(self.candidates),
            "passed": dict(self.passed),
            "oversized_buckets": dict(self.oversized_buckets),
            "revisit_edges": self.revisit_edges,
            "incremental": self.incremental,
        }


class FeatureCache:
    """Decoded features of one algorithm, read from the index on demand (bounded LRU)."""

    def __init__(self, index: Index, algorithm: Algorithm, size: int = _CACHE) -> None:
        self.index, self.algorithm, self.size = index, algorithm, size
        self._items: OrderedDict[int, Any] = OrderedDict()

    def __getitem__(self, pid: int) -> Any:
        if pid in self._items:
            self._items.move_to_end(pid)
            return self._items[pid]
        data = self.index.features(self.algorithm.name, pid)
        value = None if data is None else self.algorithm.decode(data)
        self._items[pid] = value
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value


def bucket_pairs(bucket: list[int], max_bucket: int, chain: bool) -> Iterator[tuple[int, int]]:
    """The pairs of one bucket to verify. ``chain``: equal keys are proof, so linking each member
    to the next suffices to connect them."""
    if chain:
        yield from zip(bucket, bucket[1:])
        return
    if len(bucket) <= max_bucket:
        for i, a in enumerate(bucket):
            for b in bucket[i + 1 :]:
                yield a, b
        return
    for i, a in enumerate(bucket):
        for b in bucket[i + 1 : i + 1 + WINDOW]:
            yield a, b


def new_pairs(bucket: list[int], old: int, max_bucket: int, chain: bool) -> Iterator[tuple[int, int]]:
    """The pairs of ``bucket_pairs(bucket, ...)`` whose later page is one of the new ones, the
    members after the ``old`` first (older pages) of the sorted bucket; computed directly, not
    by filtering all pairs (a bucket of 200 would give 20,000)."""
    windowed = not chain and len(bucket) > max_bucket
    for j in range(max(old, 1), len(bucket)):
        if chain:
            yield bucket[j - 1], bucket[j]
        else:
            for a in bucket[max(0, j - WINDOW) if windowed else 0 : j]:
                yield a, bucket[j]


def find_new_edges(
    index: Index,
    algorithms: list[Algorithm],
    max_bucket: int,
    stats: MatchStats,
    first_new: int,
    revisits: list[tuple[int, int]] = (),
) -> list[Edge] | None:
    """The edges ``find_edges`` gives that involve a page whose pid is above ``first_new``
    (the pages added since the stored edges were made), verifying only the pairs with a new
    page: its cost follows the new pages' buckets, not the index. None when a bucket grew past
    ``max_bucket`` with the new pages and held more than ``WINDOW`` + 1 older ones (its older
    pairs, compared all-pairs before, would now be compared by window only: the caller
    matches the whole index again, find_edges)."""
    stats.incremental = True
    evidence: dict[tuple[int, int], list[Evidence]] = {}
    for original, revisit in revisits:
        if max(original, revisit) > first_new:
            evidence.setdefault(tuple(sorted((original, revisit))), []).append(
                Evidence("revisit", 1.0, True, {"payload_digest": "equal"})
            )
            stats.revisit_edges += 1
    for algorithm in algorithms:
        cache = FeatureCache(index, algorithm)
        checked: set[tuple[int, int]] = set()
        chain = algorithm.keys_are_proof
        for bucket in index.buckets_with_new(algorithm.name, first_new):
            old = sum(1 for pid in bucket if pid <= first_new)
            if not chain and WINDOW + 1 < old <= max_bucket < len(bucket):
                return None
            if len(bucket) > max_bucket and not chain:
                stats.oversized_buckets[algorithm.name] += 1
            for pair in new_pairs(bucket, old, max_bucket, chain):
                if pair in checked:
                    continue
                checked.add(pair)
                _verify(algorithm, cache, pair, stats, evidence)
    return [Edge(a, b, edge_kind(ev), tuple(ev)) for (a, b), ev in sorted(evidence.items())]


def _verify(
    algorithm: Algorithm, cache: FeatureCache, pair: tuple[int, int], stats: MatchStats, evidence: dict
) -> None:
    """Verify one candidate pair; its evidence is added to ``evidence`` when it passes."""
    stats.candidates[algorithm.name] += 1
    if algorithm.keys_are_proof:
        result = Evidence(algorithm.name, 1.0, True, {"key": "equal"})
    else:
        fa, fb = cache[pair[0]], cache[pair[1]]
        if fa is None or fb is None:
            return
        result = algorithm.verify(fa, fb)
    if result.passed:
        stats.passed[algorithm.name] += 1
        evidence.setdefault(pair, []).append(result)


def find_edges(
    index: Index,
    algorithms: list[Algorithm],
    max_bucket: int,
    stats: MatchStats,
    revisits: list[tuple[int, int]] = (),
) -> list[Edge]:
    """All verified edges: ``revisits`` ((original, revisit) pages joined by payload digest,
    Index.revisit_pairs), then every algorithm's verified candidate pairs."""
    evidence: dict[tuple[int, int], list[Evidence]] = {}
    for original, revisit in revisits:
        a, b = sorted((original, revisit))
        evidence.setdefault((a, b), []).append(
            Evidence("revisit", 1.0, True, {"payload_digest": "equal"})
        )
        stats.revisit_edges += 1
    for algorithm in algorithms:
        cache = FeatureCache(index, algorithm)
        checked: set[tuple[int, int]] = set()
        for bucket in index.buckets(algorithm.name):
            if len(bucket) > max_bucket and not algorithm.keys_are_proof:
                stats.oversized_buckets[algorithm.name] += 1
            for pair in bucket_pairs(bucket, max_bucket, algorithm.keys_are_proof):
                if pair in checked:
                    continue
                checked.add(pair)
                _verify(algorithm, cache, pair, stats, evidence)
    return [Edge(a, b, edge_kind(ev), tuple(ev)) for (a, b), ev in sorted(evidence.items())]


def edge_kind(evidence: list[Evidence]) -> str:
    """"revisit" when a payload digest says so, "partial" when only containment says so."""
    kinds = {e.detail.get("kind", "revisit" if e.algorithm == "revisit" else "duplicate") for e in evidence}
    if "revisit" in kinds:
        return "revisit"
    if kinds == {"partial"}:
        return "partial"
    return "duplicate"


def evidence_from_json(text: str) -> tuple[Evidence, ...]:
    """The evidence ``evidence_json`` stored (scores as stored: rounded to 6 places)."""
    out = []
    for item in json.loads(text):
        item = dict(item)
        out.append(Evidence(item.pop("algorithm"), float(item.pop("score")), bool(item.pop("passed")), item))
    return tuple(out)


def evidence_json(evidence: tuple[Evidence, ...]) -> str:
    return json.dumps(
        [{"algorithm": e.algorithm, "score": round(e.score, 6), "passed": e.passed, **e.detail} for e in evidence],
        ensure_ascii=False,
        default=str,
    )
