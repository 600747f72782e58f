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
import math
import re
from array import array
from bisect import bisect_right
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import repeat
from operator import is_not
from typing import Any, NamedTuple

import numpy as np

from pagetwin.arrays import sorted_unique, sorted_unique_inverse
from pagetwin.fingerprints.base import Algorithm
from pagetwin.index.sqlite import Index
from pagetwin.model import Edge, Evidence

try:
    from pagetwin import _edges  # the edge rows' native kernel (edge_rows; EvidenceRows is its reference)
except ImportError:  # not compiled (a source checkout without `pip install -e .`)
    _edges = None

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
        return self._keep(pid, None if data is None else self.algorithm.decode(data))

    def prefetch(self, pids: Iterable[int]) -> None:
        """Read the features of the pages not held yet in one go (a query's candidates)."""
        missing = [pid for pid in pids if pid not in self._items]
        if missing:
            found = self.index.features_of(self.algorithm.name, missing)
            for pid in missing[-self.size :]:
                data = found.get(pid)
                self._keep(pid, None if data is None else self.algorithm.decode(data))

    def _keep(self, pid: int, value: Any) -> Any:
        self._items[pid] = value
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value


_PAIR_CHUNK = 1 << 20  # pairs gathered before they are merged into the distinct ones so far


def min_shared_keys(algorithm: Algorithm) -> int:
    """How many keys (buckets) two pages must share to be compared by ``algorithm``: its
    ``min_shared_keys`` (MinHash's min_bands), 1 when its keys are proof."""
    return 1 if algorithm.keys_are_proof else max(1, int(getattr(algorithm, "min_shared_keys", 1)))


def distinct_pairs(buckets: Iterable[list[int]], max_bucket: int, algorithm: Algorithm, stats: MatchStats) -> Iterator[tuple[int, int]]:
    """The distinct pairs of ``bucket_pairs`` over ``buckets`` (one algorithm's), sorted;
    oversized buckets counted in ``stats`` (``distinct_pair_arrays``, one pair at a time)."""
    for first, second in distinct_pair_arrays(buckets, max_bucket, algorithm, stats):
        yield from zip(first.tolist(), second.tolist())


def distinct_pair_arrays(
    buckets: Iterable[list[int]],
    max_bucket: int,
    algorithm: Algorithm,
    stats: MatchStats,
    size: int = 1 << 16,
    new_after: int | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The distinct pairs of ``bucket_pairs`` over ``buckets`` (one algorithm's), sorted, as
    int64 arrays (first pids, second pids) of up to ``size`` pairs; oversized buckets counted
    in ``stats``. Held as sorted uint64 ``a << 32 | b``, 8 bytes a pair: the pairs are
    matching's largest structure (936,000 at 20,000 pages), and a set of Python ints held
    about 60 bytes each. Pids past 32 bits are kept apart, and come last.

    An algorithm whose pairs must share ``min_shared_keys`` > 1 keys gets only the pairs whose
    pages share that many buckets (its verify() fails the others): the buckets that pair them,
    and the oversized buckets holding both (which may not pair them: a window).

    ``new_after``: only the pairs with a page above it (``new_pairs``: an incremental run's);
    ``buckets`` must then be every bucket holding such a page, so that the shared ones are counted."""
    chain = algorithm.keys_are_proof
    shared = min_shared_keys(algorithm)

    def pairs_of(bucket: list[int]) -> Iterator[tuple[int, int]]:
        if new_after is None:
            return bucket_pairs(bucket, max_bucket, chain)
        return new_pairs(bucket, bisect_right(bucket, new_after), max_bucket, chain)

    merged, counts = np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    chunk, wide = array("Q"), Counter()
    # Buckets compared all-pairs (most hold 2-4 pages), by size, until _all_pair_keys; their pairs
    alike, waiting = defaultdict(partial(array, "Q")), 0
    waiting_buckets: set[tuple[int, ...]] = set()  # ``alike``'s buckets (pairs counted once: min_shared_keys 1)
    # With shared > 1: pid -> its oversized buckets (numbered), and those buckets' pairs, kept
    # apart from the counted ones (their sharing is counted by membership instead).
    windowed: dict[int, set[int]] = {}
    outer, outer_wide = array("Q"), set()
    for bucket in buckets:
        oversized = len(bucket) > max_bucket and not chain
        if oversized:
            stats.oversized_buckets[algorithm.name] += 1
            if shared > 1:
                for pid in bucket:
                    windowed.setdefault(pid, set()).add(stats.oversized_buckets[algorithm.name])
        apart = oversized and shared > 1
        if bucket[-1] >> 32:  # sorted: its last pid is its largest
            (outer_wide if apart else wide).update(pairs_of(bucket))
            continue
        if apart:
            outer.extend(a << 32 | b for a, b in pairs_of(bucket))
            continue
        if new_after is None and not chain and len(bucket) <= max_bucket:
            # Near copies share many keys: a bucket of the same pages as one waiting adds no
            # pair (corpus-5000: 1.19 M pairs of its buckets, 0.72 M of those distinct)
            if shared <= 1 and _held_already(waiting_buckets, bucket):
                continue
            alike[len(bucket)].extend(bucket)
            waiting += len(bucket) * (len(bucket) - 1) // 2
        else:
            chunk.extend(a << 32 | b for a, b in pairs_of(bucket))
        if len(chunk) + waiting >= _PAIR_CHUNK:
            chunk.frombytes(_all_pair_keys(alike))
            alike.clear()
            waiting_buckets.clear()
            waiting = 0
            merged, counts = _merge_pairs(merged, counts, chunk, shared > 1)
            chunk = array("Q")
    chunk.frombytes(_all_pair_keys(alike))
    del alike
    merged, counts = _merge_pairs(merged, counts, chunk, shared > 1)
    del chunk
    if shared > 1:
        merged, counts = _with_shared_buckets(merged, counts, np.frombuffer(outer, dtype=np.uint64), windowed)
        merged = merged[counts >= shared]
    for start in range(0, len(merged), size):
        keys = merged[start : start + size]
        yield (keys >> np.uint64(32)).astype(np.int64), (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
    yield from _wide_pair_arrays(wide, outer_wide, windowed, shared, size)


def _wide_pair_arrays(
    wide: Counter, outer_wide: set[tuple[int, int]], windowed: dict[int, set[int]], shared: int, size: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """distinct_pair_arrays' pairs with a pid past 32 bits (``wide``: counted by the buckets
    that make them; ``outer_wide``: those of oversized buckets kept apart), sorted, as arrays."""
    none: set[int] = set()
    pairs = sorted(
        p for p in set(wide) | outer_wide
        if shared <= 1 or wide[p] + len(windowed.get(p[0], none) & windowed.get(p[1], none)) >= shared
    )  # fmt: skip
    for start in range(0, len(pairs), size):
        part = pairs[start : start + size]
        yield np.array([a for a, _ in part], dtype=np.int64), np.array([b for _, b in part], dtype=np.int64)


def _held_already(held: set[tuple[int, ...]], bucket: list[int]) -> bool:
    """Whether ``held`` holds a bucket of these pages; it does after the call."""
    members = tuple(bucket)
    if members in held:
        return True
    held.add(members)
    return False


def _with_shared_buckets(
    merged: np.ndarray, counts: np.ndarray, outer: np.ndarray, windowed: dict[int, set[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """The counted pairs (sorted keys, how many buckets of at most max_bucket pages made each)
    with the oversized buckets' pairs added, and each count raised by the oversized buckets
    holding both pages: how many buckets the two pages share."""
    extra = np.setdiff1d(outer, merged)  # sorted, distinct
    merged, counts = np.concatenate([merged, extra]), np.concatenate([counts, np.zeros(len(extra), dtype=np.int64)])
    order = np.argsort(merged, kind="stable")
    merged, counts = merged[order], counts[order]
    if windowed:
        pids = np.fromiter(windowed, dtype=np.uint64, count=len(windowed))
        first, second = merged >> np.uint64(32), merged & np.uint64(0xFFFFFFFF)
        for i in np.flatnonzero(np.isin(first, pids) & np.isin(second, pids)).tolist():
            counts[i] += len(windowed[int(first[i])] & windowed[int(second[i])])
    return merged, counts


def _merge_pairs(merged: np.ndarray, counts: np.ndarray, chunk: array, counting: bool) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct pair keys of ``merged`` and ``chunk``; with ``counting``, each with
    how many buckets made it (``counts`` for ``merged``'s), else ``counts`` as it was."""
    new = np.frombuffer(chunk, dtype=np.uint64)
    if not counting:  # np.union1d by a sort (pagetwin.arrays: numpy's own unique hashes first,
        # 0.67 CPU-s for corpus-5000's pairs against 0.12)
        return sorted_unique(np.concatenate((merged, new))), counts
    keys, times = np.unique(new, return_counts=True)
    union, where = sorted_unique_inverse(np.concatenate([merged, keys]))
    return union, np.bincount(where, weights=np.concatenate([counts, times]), minlength=len(union)).astype(np.int64)


def _all_pair_keys(alike: dict[int, array]) -> bytes:
    """``a << 32 | b`` of every pair of every bucket of 32-bit pids, the buckets given by size
    (size -> their members, one bucket after another): bucket_pairs' pairs of each, all-pairs,
    as uint64 bytes (in no order that matters: they are merged by a sort)."""
    parts = []
    for size, members in alike.items():
        buckets = np.frombuffer(members, dtype=np.uint64).reshape(-1, size)
        first, second = np.triu_indices(size, 1)
        parts.append(((buckets[:, first] << np.uint64(32)) | buckets[:, second]).ravel().tobytes())
    return b"".join(parts)


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
    retracted: list[tuple[int, int, str]] = []
    outgrown = _Outgrown(index, max_bucket)
    for algorithm in algorithms:
        cache = FeatureCache(index, algorithm)
        far: set[tuple[int, int]] = set()  # stored pairs of this algorithm a bucket no longer makes
        # The batch's pairs with a new page, each once, counted as the batch counts them (min_shared_keys)
        buckets = _scanned(index.buckets_with_new(algorithm.name, first_new), algorithm, first_new, outgrown, far)
        for first, second in distinct_pair_arrays(buckets, max_bucket, algorithm, stats, _VERIFY_CHUNK, first_new):
            if algorithm.keys_are_proof:
                for pair in zip(first.tolist(), second.tolist()):
                    _verify(algorithm, cache, pair, stats, evidence)
            else:
                _verify_pairs(algorithm, cache, first, second, stats, evidence)
        retracted += [(a, b, algorithm.name) for a, b in sorted(far) if not outgrown.paired(algorithm.name, a, b)]
    edges = [Edge(a, b, edge_kind(ev), tuple(ev)) for (a, b), ev in sorted(evidence.items())]
    return NewEdges(edges, sorted(retracted))


def _scanned(
    buckets: Iterable[list[int]], algorithm: Algorithm, first_new: int, outgrown: _Outgrown, far: set[tuple[int, int]]
) -> Iterator[list[int]]:
    """``buckets`` (of an incremental run: each holding a new page), adding to ``far`` the stored
    pairs of those the new pages pushed past max_bucket that their window no longer makes."""
    for bucket in buckets:
        old = bisect_right(bucket, first_new)
        if not algorithm.keys_are_proof and WINDOW + 1 < old <= outgrown.max_bucket < len(bucket):
            far.update(outgrown.far_pairs(algorithm.name, bucket[:old]))
        yield bucket


class _Outgrown:
    """The stored pairs of buckets the new pages pushed past ``max_bucket``: what was read of
    the index kept for all of them (the same pages' edges, keys and buckets come again, one
    bucket per key the near copies share)."""

    def __init__(self, index: Index, max_bucket: int) -> None:
        self.index, self.max_bucket = index, max_bucket
        self._edges: dict[tuple[str, int], set[int]] = {}  # (algo, pid) -> later pids of its edges with algo's evidence
        self._keys: dict[tuple[str, int], set[int]] = {}
        self._positions: dict[tuple[str, int], dict[int, int]] = {}

    def far_pairs(self, algo: str, older: list[int]) -> set[tuple[int, int]]:
        """(a, b) of the stored edges with ``algo``'s evidence between older members of a
        bucket that outgrew max_bucket (``older``: its members before, compared all-pairs
        then) further apart in it than ``WINDOW``: pairs it no longer makes."""
        position = {pid: i for i, pid in enumerate(older)}
        self._read_later_edges(algo, older)
        out = set()
        for a in older:
            for b in self._edges[(algo, a)]:
                if b in position and position[b] - position[a] > WINDOW:
                    out.add((a, b))
        return out

    def _read_later_edges(self, algo: str, pids: list[int]) -> None:
        """The later ends of these pages' edges with ``algo``'s evidence, read once per page
        (the evidence is matched in SQLite, not parsed: Index.later_edges_with)."""
        todo = [pid for pid in pids if (algo, pid) not in self._edges]
        for pid in todo:
            self._edges[(algo, pid)] = set()
        for a, b in self.index.later_edges_with(algo, todo):
            self._edges[(algo, a)].add(b)

    def paired(self, algo: str, a: int, b: int) -> bool:
        """Whether ``bucket_pairs`` of some bucket of ``algo`` (as stored now) holds a < b."""
        for key in self._page_keys(algo, a) & self._page_keys(algo, b):
            position = self._bucket(algo, key)
            if len(position) <= self.max_bucket or position[b] - position[a] <= WINDOW:
                return True
        return False

    def _page_keys(self, algo: str, pid: int) -> set[int]:
        if (algo, pid) not in self._keys:
            self._keys[(algo, pid)] = set(self.index.page_keys(algo, pid))
        return self._keys[(algo, pid)]

    def _bucket(self, algo: str, key: int) -> dict[int, int]:
        if (algo, key) not in self._positions:
            self._positions[(algo, key)] = {pid: i for i, pid in enumerate(self.index.bucket(algo, key))}
        return self._positions[(algo, key)]


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


def _verify_pairs(
    algorithm: Algorithm, cache: FeatureCache, first: np.ndarray, second: np.ndarray, stats: MatchStats, evidence: dict
) -> None:
    """``_verify`` of the pairs (first[i], second[i]) of an algorithm whose keys are not proof,
    all at once (``Algorithm.passing``): the same counts and evidence, added in the pairs' order."""
    a, b, passed = _passed_pairs(algorithm, cache, first, second, stats)
    for x, y, result in zip(a.tolist(), b.tolist(), passed):
        evidence.setdefault((x, y), []).append(result)


def _passed_pairs(
    algorithm: Algorithm, cache: FeatureCache, first: np.ndarray, second: np.ndarray, stats: MatchStats
) -> tuple[np.ndarray, np.ndarray, list[Evidence]]:
    """The pairs of ``_verify_pairs`` that pass, in the pairs' order: their first pids, their
    second pids, their evidence; counted in ``stats`` as ``_verify`` counts them."""
    if not len(first):
        return first, second, []
    stats.candidates[algorithm.name] += len(first)
    pids = sorted_unique(np.concatenate([first, second]))
    order = pids.tolist()
    cache.prefetch(order)  # the pages not held yet in a few queries, not one a page
    decoded = [cache[pid] for pid in order]
    present = np.fromiter(map(is_not, decoded, repeat(None)), dtype=bool, count=len(decoded))  # no Python frame a page
    at_first, at_second = np.searchsorted(pids, first), np.searchsorted(pids, second)
    if not present.all():  # a page without features: its pairs are counted, not verified
        keep = present[at_first] & present[at_second]
        first, second, at_first, at_second = first[keep], second[keep], at_first[keep], at_second[keep]
        held = np.flatnonzero(present)
        renumber = np.full(len(decoded), -1, dtype=np.intp)
        renumber[held] = np.arange(len(held))
        decoded = [decoded[i] for i in held.tolist()]
        at_first, at_second = renumber[at_first], renumber[at_second]
    # An object with the interface but not the class (a stand-in) verifies one pair at a time.
    passed = algorithm.passing(decoded, at_first, at_second) if hasattr(algorithm, "passing") else Algorithm.passing(algorithm, decoded, at_first, at_second)
    if not passed:
        return first[:0], second[:0], []
    stats.passed[algorithm.name] += len(passed)  # a counter of 0 would show in the summary as one, where _verify adds none
    at = np.fromiter((i for i, _ in passed), dtype=np.intp, count=len(passed))
    return first[at], second[at], [result for _, result in passed]


_VERIFY_CHUNK = 1 << 14  # pairs verified at once: their features' rows, a few MB at most


def find_edges(
    index: Index,
    algorithms: list[Algorithm],
    max_bucket: int,
    stats: MatchStats,
    revisits: list[tuple[int, int]] = (),
) -> list[Edge]:
    """All verified edges: ``revisits`` ((original, revisit) pages joined by payload digest,
    Index.revisit_pairs), then every algorithm's verified candidate pairs."""
    evidence = _edge_evidence(index, algorithms, max_bucket, stats, revisits)
    return [Edge(a, b, edge_kind(ev), tuple(ev)) for (a, b), ev in sorted(evidence.items())]


def find_edge_rows(
    index: Index,
    algorithms: list[Algorithm],
    max_bucket: int,
    stats: MatchStats,
    revisits: list[tuple[int, int]] = (),
) -> Iterator[tuple[int, int, str, str, float]]:
    """``find_edges``' edges as the index stores them, in the same order: (a, b, kind, evidence
    JSON, guard score) (``find_edge_columns``' rows)."""
    return find_edge_columns(index, algorithms, max_bucket, stats, revisits).rows()


def find_edge_columns(
    index: Index,
    algorithms: list[Algorithm],
    max_bucket: int,
    stats: MatchStats,
    revisits: list[tuple[int, int]] = (),
) -> EdgeColumns:
    """``find_edges``' edges as columns (EdgeColumns), made by EvidenceRows without an Edge a
    pair (corpus-5000: 150,303). Every pair is verified before it returns: the rows may go to
    the index as they come, with no read of it between its writes."""
    return _passed_items(index, algorithms, max_bucket, stats, revisits).columns()


class _PassedItems:
    """The passed evidence items of a run's pairs as they come (revisits, then algorithm after
    algorithm), a column a field (pids as int64 arrays): made into EdgeColumns by one stable
    sort, not a dict entry and a list a pair (corpus-10000-shared: 306,000 items)."""

    def __init__(self) -> None:
        self.firsts: list[np.ndarray] = []
        self.seconds: list[np.ndarray] = []
        self.items: list[Evidence] = []

    def add(self, first: np.ndarray, second: np.ndarray, items: list[Evidence]) -> None:
        """Items of the pairs (first[i], second[i]), in order."""
        self.firsts.append(np.asarray(first, dtype=np.int64))
        self.seconds.append(np.asarray(second, dtype=np.int64))
        self.items += items

    def add_pairs(self, evidence: dict[tuple[int, int], list[Evidence]]) -> None:
        """The items of ``evidence`` ((a, b) -> its items), each pair's in their order."""
        pairs = [(pair, e) for pair, items in evidence.items() for e in items]
        self.add(np.array([a for (a, _), _ in pairs], dtype=np.int64), np.array([b for (_, b), _ in pairs], dtype=np.int64), [e for _, e in pairs])

    def by_pair(self) -> dict[tuple[int, int], list[Evidence]]:
        """(a, b) -> its items, in the order they were added."""
        evidence: dict[tuple[int, int], list[Evidence]] = {}
        if self.items:
            for a, b, e in zip(np.concatenate(self.firsts).tolist(), np.concatenate(self.seconds).tolist(), self.items):
                evidence.setdefault((a, b), []).append(e)
        return evidence

    def columns(self) -> EdgeColumns:
        """``edge_columns(self.by_pair())``: the pairs sorted, each pair's items in the order
        they were added (a stable sort: revisit first, then the algorithms' in order)."""
        if not self.items:
            return EdgeColumns((), (), (), (), ())
        first, second = np.concatenate(self.firsts), np.concatenate(self.seconds)
        order = _pair_order(first, second)  # stable: equal pairs keep the order they came in
        first, second = first[order], second[order]
        starts = np.flatnonzero(np.concatenate(([True], (first[1:] != first[:-1]) | (second[1:] != second[:-1]))))
        kinds, texts, scores = edge_row_columns(self.items, order.tolist(), starts.tolist(), EvidenceRows())
        return EdgeColumns(tuple(first[starts].tolist()), tuple(second[starts].tolist()), tuple(kinds), tuple(texts), tuple(scores))


def _pair_order(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``np.lexsort((second, first))``: the pairs' order, equal pairs in the order they came.
    Pids of 32 bits are sorted as one key ``a << 32 | b`` by a stable sort, which finds the
    runs the items came in (each algorithm's pairs come sorted): 0.014 -> 0.001 CPU-s for
    corpus-10000-shared's 310,000 items."""
    if not len(first) or min(first.min(), second.min()) < 0 or max(first.max(), second.max()) >> 32:
        return np.lexsort((second, first))
    keys = (first.astype(np.uint64) << np.uint64(32)) | second.astype(np.uint64)
    return np.argsort(keys, kind="stable")


class EdgeColumns(NamedTuple):
    """Edges in (a, b) order, a column a field: what the index stores of each (``rows``) and
    what clustering reads (``links``), taken from the columns by zip (no Python call an edge:
    corpus-10000-shared has 269,616)."""

    firsts: tuple[int, ...]
    seconds: tuple[int, ...]
    kinds: tuple[str, ...]
    texts: tuple[str, ...]  # evidence JSON
    scores: tuple[float, ...]  # guard scores

    def rows(self) -> Iterator[tuple[int, int, str, str, float]]:
        """(a, b, kind, evidence JSON, guard score): Index.add_edges' rows."""
        return zip(self.firsts, self.seconds, self.kinds, self.texts, self.scores)

    def links(self) -> list[tuple[int, int, str, float]]:
        """(a, b, kind, guard score): each edge's Link fields (link_of), as plain tuples."""
        return list(zip(self.firsts, self.seconds, self.kinds, self.scores))


def edge_columns(evidence: dict[tuple[int, int], list[Evidence]]) -> EdgeColumns:
    """The edges of ``evidence`` ((a, b) -> its items) as EdgeColumns: each edge's kind and
    row as EvidenceRows.edge_row gives them, an edge of one item by its item's row alone."""
    pairs = sorted(evidence)
    if not pairs:
        return EdgeColumns((), (), (), (), ())
    made = EvidenceRows()
    lists = list(map(evidence.__getitem__, pairs))
    return EdgeColumns(*zip(*pairs), *zip(*edge_rows(lists, made)))


def edge_rows(lists: list[list[Evidence]], made: EvidenceRows) -> list[tuple[str, str, float]]:
    """``[made.edge_row(evidence) for evidence in lists]``: natively when built (_edges), an
    edge of one item kept by ``made`` found without a Python call."""
    if _edges is not None:
        return _edges.edge_rows(lists, made, _kind_of_items)
    return edge_rows_reference(lists, made)


def edge_row_columns(items: list[Evidence], order: list[int], starts: list[int], made: EvidenceRows) -> tuple[list, list, list]:
    """The kinds, texts and scores of ``edge_rows`` over the edges whose items are
    ``[items[i] for i in order[starts[g]:starts[g + 1]]]`` (the last one's up to the end of
    ``order``): natively when built (_edges.edge_columns, without a list an edge), else
    ``edge_row_columns_reference``."""
    if _edges is not None:
        return _edges.edge_columns(items, order, starts, made, _kind_of_items)
    return edge_row_columns_reference(items, order, starts, made)


def edge_row_columns_reference(items: list[Evidence], order: list[int], starts: list[int], made: EvidenceRows) -> tuple[list, list, list]:
    """``edge_row_columns`` in Python."""
    ends = [*starts[1:], len(order)]
    rows = edge_rows_reference([[items[i] for i in order[start:end]] for start, end in zip(starts, ends)], made)
    return [kind for kind, _, _ in rows], [text for _, text, _ in rows], [score for _, _, score in rows]


def edge_rows_reference(lists: list[list[Evidence]], made: EvidenceRows) -> list[tuple[str, str, float]]:
    """``edge_rows`` in Python."""
    single, edge_row = made.single_row, made.edge_row
    return [single(ev[0]) if len(ev) == 1 else edge_row(ev) for ev in lists]


def _edge_evidence(
    index: Index, algorithms: list[Algorithm], max_bucket: int, stats: MatchStats, revisits: list[tuple[int, int]]
) -> dict[tuple[int, int], list[Evidence]]:
    """(a, b) -> the passed evidence of every pair ``find_edges`` verifies."""
    return _passed_items(index, algorithms, max_bucket, stats, revisits).by_pair()


def _passed_items(
    index: Index, algorithms: list[Algorithm], max_bucket: int, stats: MatchStats, revisits: list[tuple[int, int]]
) -> _PassedItems:
    """The passed evidence of every pair ``find_edges`` verifies: ``revisits`` first, then
    each algorithm's."""
    passed = _PassedItems()
    revisit_evidence: dict[tuple[int, int], list[Evidence]] = {}
    for original, revisit in revisits:
        revisit_evidence.setdefault(tuple(sorted((original, revisit))), []).append(
            Evidence("revisit", 1.0, True, {"payload_digest": "equal"})
        )
        stats.revisit_edges += 1
    passed.add_pairs(revisit_evidence)  # one column for them all, not one a revisit
    for algorithm in algorithms:
        cache = FeatureCache(index, algorithm)
        # Each distinct pair once, in pid order (the order does not change the edges: each
        # pair is verified once per algorithm and the edges are sorted)
        buckets = index.buckets(algorithm.name)
        if algorithm.keys_are_proof:
            evidence: dict[tuple[int, int], list[Evidence]] = {}
            for pair in distinct_pairs(buckets, max_bucket, algorithm, stats):
                _verify(algorithm, cache, pair, stats, evidence)
            passed.add_pairs(evidence)
            continue
        for first, second in distinct_pair_arrays(buckets, max_bucket, algorithm, stats, _VERIFY_CHUNK):
            passed.add(*_passed_pairs(algorithm, cache, first, second, stats))
    return passed


def edge_kind(evidence: list[Evidence]) -> str:
    """"revisit" when a payload digest says so, "partial" when only containment says so."""
    return _kind_of_items({_item_kind(e) for e in evidence})


def _item_kind(e: Evidence) -> str:
    """What one evidence item says of its edge: its detail's "kind", else revisit or duplicate."""
    return e.detail.get("kind", "revisit" if e.algorithm == "revisit" else "duplicate")


def _kind_of_items(kinds: set[str]) -> str:
    """edge_kind from the kinds its items say (``_item_kind``)."""
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


# json.dumps(..., ensure_ascii=False, default=str) makes an encoder like this one at every call
# (its arguments are not the defaults): one made once writes the same text (a run writes an
# evidence list per edge, 22,000 at 2,000 pages). It holds no state between calls.
_EVIDENCE_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


def evidence_json(evidence: tuple[Evidence, ...]) -> str:
    return _EVIDENCE_ENCODER.encode(
        [{"algorithm": e.algorithm, "score": round(e.score, 6), "passed": e.passed, **e.detail} for e in evidence]
    )


def evidence_row(evidence: tuple[Evidence, ...]) -> tuple[str, float]:
    """(evidence_json(evidence), guard_score(evidence)), each score rounded once for both: what
    an edge's row stores."""
    items, best = [], None
    for e in evidence:
        score = round(e.score, 6)
        items.append({"algorithm": e.algorithm, "score": score, "passed": e.passed, **e.detail})
        if e.passed and (best is None or score > best):  # max(): the first of equals, NaN never above
            best = score
    return _EVIDENCE_ENCODER.encode(items), 1.0 if best is None else best


# The value types whose JSON text their class and value decide (with a float neither zero nor
# NaN: 0.0 == -0.0, and NaN equals nothing): EvidenceRows keeps the text of the items made of them.
_PLAIN = frozenset({str, int, bool, type(None), float})


class EvidenceRows:
    """An edge's kind and row (``edge_kind``, ``evidence_row``: the same values) for a run's
    edges, with each item's text made once for all the items equal to it (same algorithm,
    score, verdict and detail, each value of the same class): an edge's evidence is mostly
    one MinHash item whose score is an agreement count over num_perm, so corpus-2000's 22,295
    edges hold 445 distinct texts, and encoding each edge's list was most of the row's cost.
    An edge of one item (corpus-10000-shared: 232,977 of 269,616) takes the row kept with it.
    A float that is zero is written "0.0" or "-0.0" and the two are equal: an item holding one
    is kept under its key and the signs of its zeros (corpus-10000-shared's 37,085 con-w items,
    each with a distance of 0.0, hold 2,712 texts). An item with another value (a NaN float, a
    class outside _PLAIN, a key not a str, an unhashable value) is encoded each time, alone.
    Holds up to ``size`` items, then starts again (the items of containment verdicts carry the
    pair's digests: most are seen once)."""

    def __init__(self, size: int = 1 << 16) -> None:
        self.size = size
        # key -> the item's row (_item_row), or, for a key with zero floats, {their signs: row}
        self._items: dict[tuple, Any] = {}
        self._kept = 0  # rows held

    def edge_row(self, evidence: tuple[Evidence, ...] | list[Evidence]) -> tuple[str, str, float]:
        """(edge_kind(evidence), *evidence_row(evidence))."""
        if len(evidence) == 1:
            return self._item(evidence[0])[4]
        texts, best, kinds = [], None, set()
        for e in evidence:
            text, score, passed, kind, _ = self._item(e)
            texts.append(text)
            kinds.add(kind)
            if passed and (best is None or score > best):  # as evidence_row
                best = score
        # The encoder's own list: items joined by its item separator
        return _kind_of_items(kinds), "[" + ", ".join(texts) + "]", 1.0 if best is None else best

    def single_row(self, e: Evidence) -> tuple[str, str, float]:
        """``edge_row((e,))``: the row of an edge whose one item is ``e``."""
        return self._item(e)[4]

    def _item(self, e: Evidence) -> tuple[str, float, bool, Any, tuple[str, str, float]]:
        """``_item_row(e)``, kept for the items equal to it when its key decides its text."""
        detail = e.detail
        # The detail's keys, values and their classes laid flat (no (key, value) tuple each):
        # two keys of one length hold as many items, at the same places.
        key = (e.algorithm, e.score, e.score.__class__, e.passed, e.passed.__class__, *detail, *detail.values(), *map(type, detail.values()))
        try:
            item = self._items[key]
        except KeyError:
            return self._keep(e, key, _text_follows_from_key(e))
        except TypeError:  # an unhashable value
            return _item_row(e)
        if item.__class__ is dict:  # kept by the signs of its zeros
            item = item.get(_zero_signs(e))
            if item is None:
                return self._keep(e, key, _SIGNED)
        return item

    def _keep(self, e: Evidence, key: tuple, follows: bool | object) -> tuple[str, float, bool, Any, tuple[str, str, float]]:
        """``_item_row(e)``, kept under ``key`` (and its zeros' signs: ``follows`` _SIGNED)
        when ``follows`` says its text follows from them."""
        item = _item_row(e)
        if not follows:
            return item
        if self._kept >= self.size:
            self._items.clear()
            self._kept = 0
        if follows is _SIGNED:
            self._items.setdefault(key, {})[_zero_signs(e)] = item
        else:
            self._items[key] = item
        self._kept += 1
        return item


_SIGNED = object()  # _text_follows_from_key: the text follows from the key and the signs of its zeros


def _zero_signs(e: Evidence) -> tuple[bool, ...]:
    """Which of the item's float values that are zero are -0.0, in the key's order (its score,
    verdict, then the detail's values): what tells apart items whose keys are equal."""
    return tuple(math.copysign(1.0, v) < 0 for v in (e.score, e.passed, *e.detail.values()) if v.__class__ is float and v == 0)


def _item_row(e: Evidence) -> tuple[str, float, bool, Any, tuple[str, str, float]]:
    """(JSON text, rounded score, passed, kind) of one evidence item, as evidence_json writes
    it (the encoder writes a list as its items' texts joined) and edge_kind reads it, and the
    row of an edge of this item alone."""
    score = round(e.score, 6)
    text = _EVIDENCE_ENCODER.encode({"algorithm": e.algorithm, "score": score, "passed": e.passed, **e.detail})
    kind = _item_kind(e)
    return text, score, e.passed, kind, (_kind_of_items({kind}), "[" + text + "]", score if e.passed else 1.0)


def _text_follows_from_key(e: Evidence) -> bool | object:
    """Whether the key EvidenceRows looks ``e`` up by decides its text: str keys, values of
    _PLAIN classes, no float that is NaN; _SIGNED when some float is zero (0.0 == -0.0, written
    apart: the text follows from the key and their signs)."""
    values = (e.score, e.passed, *e.detail.values())
    if type(e.algorithm) is not str or not all(type(k) is str for k in e.detail) or not _PLAIN.issuperset(map(type, values)):
        return False
    if any(type(v) is float and v != v for v in values):
        return False
    return _SIGNED if any(type(v) is float and v == 0 for v in values) else True


class Link(NamedTuple):
    """What clustering reads of an edge: its pages, its kind, and the score the guard ranks
    it by (``guard_score``)."""

    a: int
    b: int
    kind: str
    score: float


def guard_score(evidence: tuple[Evidence, ...]) -> float:
    """The highest score of the passed evidence (1.0 with none), as stored: rounded to 6
    places, so an edge read back from the index ranks as it did in memory."""
    return max((round(e.score, 6) for e in evidence if e.passed), default=1.0)


def link_of(edge: Edge) -> Link:
    return Link(edge.a, edge.b, edge.kind, guard_score(edge.evidence))


# The head of each item evidence_json writes: its first three keys, in that order. A quote
# inside a JSON string is escaped, so the pattern cannot match inside a detail's text.
_HEAD = re.compile(r'\{"algorithm": "(?:[^"\\]|\\.)*", "score": ([^,}]+), "passed": (true|false)')


def stored_guard_score(text: str) -> float:
    """``guard_score`` of stored evidence JSON, read from the items' heads without parsing
    the rest (the guard reads every edge of a component; most of each item is its detail)."""
    scores = [float(score) for score, passed in _HEAD.findall(text) if passed == "true"]
    if not scores and text.strip() != "[]" and not _HEAD.search(text):
        return guard_score(evidence_from_json(text))  # not written by evidence_json
    return max(scores, default=1.0)
