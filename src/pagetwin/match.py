"""Candidates -> verification -> edges.

Pages sharing a candidate key of an algorithm are candidate pairs; each pair is verified by that
algorithm from the two pages' stored features, and becomes an edge only if it passes. Buckets
larger than ``match.max_bucket`` are not compared all-pairs (quadratic): each member is compared
with its ``WINDOW`` neighbours in crawl order only, and the bucket is counted.

``find_new_edges`` is the incremental form: after pages were added (pids above ``first_new``;
pids only grow, so they sort last in every bucket), the pairs ``find_edges`` would verify that
involve a new page, and no other; the edges between older pages are those stored already, but
for a bucket the new pages pushed past ``max_bucket``: its older pairs further apart than
``WINDOW`` are no longer its pairs, and their evidence of that algorithm is retracted unless
another bucket of it still pairs them.
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


@dataclass
class NewEdges:
    """What adding pages changes in the stored edges: ``edges``, the edges with a new page;
    ``retracted``, (a, b, algorithm) for stored edges between older pages whose evidence of
    that algorithm one run over all the pages no longer gives (see ``retract``)."""

    edges: list[Edge]
    retracted: list[tuple[int, int, str]]


def find_new_edges(
    index: Index,
    algorithms: list[Algorithm],
    max_bucket: int,
    stats: MatchStats,
    first_new: int,
    revisits: list[tuple[int, int]] = (),
) -> NewEdges:
    """The edges ``find_edges`` gives that involve a page whose pid is above ``first_new``
    (the pages added since the stored edges were made), verifying only the pairs with a new
    page, and the stored evidence it no longer gives (a bucket the new pages pushed past
    ``max_bucket`` compares its older pages by window only): its cost follows the new pages'
    buckets, not the index."""
    stats.incremental = True
    evidence: dict[tuple[int, int], list[Evidence]] = {}
    for original, revisit in revisits:
        if max(original, revisit) > first_new:
            evidence.setdefault(tuple(sorted((original, revisit))), []).append(
                Evidence("revisit", 1.0, True, {"payload_digest": "equal"})
            )
            stats.revisit_edges += 1
    retracted: set[tuple[int, int, str]] = set()
    for algorithm in algorithms:
        cache = FeatureCache(index, algorithm)
        checked: set[tuple[int, int]] = set()
        chain = algorithm.keys_are_proof
        for bucket in index.buckets_with_new(algorithm.name, first_new):
            old = sum(1 for pid in bucket if pid <= first_new)
            if not chain and WINDOW + 1 < old <= max_bucket < len(bucket):
                retracted |= _outgrown(index, algorithm.name, bucket[:old], max_bucket)
            if len(bucket) > max_bucket and not chain:
                stats.oversized_buckets[algorithm.name] += 1
            for pair in new_pairs(bucket, old, max_bucket, chain):
                if pair in checked:
                    continue
                checked.add(pair)
                _verify(algorithm, cache, pair, stats, evidence)
    edges = [Edge(a, b, edge_kind(ev), tuple(ev)) for (a, b), ev in sorted(evidence.items())]
    return NewEdges(edges, sorted(retracted))


def _outgrown(index: Index, algo: str, older: list[int], max_bucket: int) -> set[tuple[int, int, str]]:
    """(a, b, algo) for the stored edges with ``algo``'s evidence between older members of a
    bucket that outgrew ``max_bucket`` (``older``: its members before, all-pairs compared then)
    further apart than ``WINDOW`` in it, that no bucket of ``algo`` pairs any more."""
    position = {pid: i for i, pid in enumerate(older)}
    out = set()
    for pid in older:
        for a, b, _, ev in index.edges_touching(pid):
            if a != pid or b not in position or position[b] - position[a] <= WINDOW:
                continue  # each pair once (from its lower end); in-window pairs stay pairs
            if any(e.algorithm == algo for e in evidence_from_json(ev)) and not _paired(index, algo, a, b, max_bucket):
                out.add((a, b, algo))
    return out


def _paired(index: Index, algo: str, a: int, b: int, max_bucket: int) -> bool:
    """Whether ``bucket_pairs`` of some bucket of ``algo`` (as stored now) holds the pair a < b."""
    for key in index.shared_keys(algo, a, b):
        if index.bucket_size(algo, key, max_bucket + 1) <= max_bucket:
            return True
        if index.pids_between(algo, key, a, b) < WINDOW:
            return True
    return False


def retract(edge: Edge, algorithms: set[str]) -> Edge | None:
    """The edge without these algorithms' evidence (its kind as the rest says), or None when
    no evidence is left."""
    rest = [e for e in edge.evidence if e.algorithm not in algorithms]
    return Edge(edge.a, edge.b, edge_kind(rest), tuple(rest)) if rest else None


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
