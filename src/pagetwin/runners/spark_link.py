"""dedup's link step on Spark's executors (``spark.link = "executors"``): candidates, verified
edges, the anti-chaining guard, connected components, the kept page of each cluster and the
outputs, all as Spark jobs; nothing proportional to the number of pages comes to the driver.

What each step computes is what the local link step (pagetwin.app._link_step over the SQLite
index) computes, step for step, so that the outputs are the same:

- page numbers: the pages in input order (pass 2's partitions are in input order) numbered
  from 1 (``zipWithIndex``), as a fresh index numbers them;
- candidates: every (algorithm, key, pid) sent to its bucket's task and sorted there (spilling
  to disk), each bucket's pairs chosen as its pids stream by, as ``match.bucket_pairs`` chooses
  them (an oversized bucket compared by window and counted; ``sorted_bucket_pairs``: no task
  holds a whole bucket), each pair verified once per algorithm, and only when its pages share
  the algorithm's ``min_shared_keys`` buckets (``_candidates``: counted by ``reduceByKey``);
- verification: each pair is joined with the two pages' features (two shuffles) and verified
  by the algorithm on the executor; revisits are joined to their original by payload digest
  (the smallest page number, as Index.revisit_pairs);
- clusters: connected components of the merged edges by large-star / small-star rounds
  (pagetwin.components), a revisit following its original as cluster.clusters does; each
  component of more than two pages is split by the guard (guard.split_component) on one
  executor, with its own members' features and edges: the guard's state is one component's,
  never the whole graph's (a component of a million pages would be one task's, not the
  driver's); the kept page per cluster by cluster.keep_key, named by cluster.cluster_id.

Outputs, written by the executors under an output URI through Spark's Hadoop file systems
(``file:``, ``hdfs:``, ``s3a:``): clusters.jsonl/ and pairs.jsonl/ (part files whose lines,
read in part order, are the local runner's clusters.jsonl and pairs.jsonl), clusters.parquet/,
pairs.parquet/, pages.parquet/ (the lean index) and models.parquet/ (pass 1's learned models, the
site templates a row per site, the image hashes a row per URL, and the settings,
runners.spark_output: what explain needs to fingerprint a record again). The
driver gets counts only (dicts of a few entries, one SourceStats per partition) and of pass 1's
models the document frequencies (bounded by the vocabulary): the site templates and image
hashes stay on the executors (runners.spark_learn.SiteModels), each pass-2 partition given
its own sites' and its own image URLs' (runners.spark ``pass2_rdd``), models.parquet written
from them.

The lean index (``spark.index = "lean"``, the default), a row per page by pid: where its record
is (source, warc_offset), what picks a cluster's kept page without reading it (crawl_date,
text_len; kind, http_status, error), and what finds its candidates: each algorithm's keys and
the payload digest shortened to their low 32 bits (``short_keys``). No text, no features, no
id or URL (clusters.parquet has pid, id and URL for every page). Every verdict of the run was
taken from the full keys and features before it is written, so nothing it decided changes. A
later use (explain, or an add) finds candidates by short key: a shorter key only adds
candidates, which verification then drops, verifying from features re-derived from each
candidate's record (read back at its offset, as explain reads a lean SQLite index's pages).
With ``spark.index = "features"`` pages.parquet holds each page's id, URL, digests and
features whole instead (``stored_keys`` gives its full keys back from the features).

This module imports no other runner: it is given the engine (runners.spark.SparkEngine)
whose ``pass2_rdd`` gives pass 2's results as an RDD.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NamedTuple

from pagetwin.components import directed, large_star, small_star
from pagetwin.match import guard_score, min_shared_keys

OUTPUTS = ("clusters.jsonl", "pairs.jsonl", "clusters.parquet", "pairs.parquet", "pages.parquet", "models.parquet")


class Lean(NamedTuple):
    """What the link step keeps of a page (no text, no HTML)."""

    id: str
    url: str
    host: str
    source: str
    kind: str
    crawl_date: str | None
    text_len: int
    payload_digest: str | None
    refers_to_digest: str | None
    warc_offset: int | None
    http_status: int | None
    error: str | None
    features: dict[str, bytes]
    keys: dict[str, list[int]]
    title: str | None
    page_kind: str | None  # softerror.page_kind: "soft-404", "soft-error", "http-error" or None


@dataclass
class Counts:
    """What the driver gets back: counts, never pages."""

    stats: Any = None  # SourceStats, merged over the partitions
    page_errors: Counter = field(default_factory=Counter)
    replaced_chars: int = 0
    refused_charsets: int = 0
    flattened: int = 0
    pages: int = 0
    candidates: Counter = field(default_factory=Counter)
    passed: Counter = field(default_factory=Counter)
    oversized_buckets: Counter = field(default_factory=Counter)
    revisit_edges: int = 0
    edges_by_kind: Counter = field(default_factory=Counter)
    clusters: int = 0
    cluster_stats: dict[str, Any] = field(default_factory=dict)  # outputs.jsonl.cluster_stats' keys
    cluster_kinds: dict[str, Any] = field(default_factory=dict)  # softerror.report's
    rounds: int = 0
    lean_bytes: int = 0
    outputs: dict[str, str] = field(default_factory=dict)

    def matching(self) -> dict[str, Any]:
        return {
            "candidates": dict(self.candidates),
            "passed": dict(self.passed),
            "oversized_buckets": dict(self.oversized_buckets),
            "revisit_edges": self.revisit_edges,
        }


# -- connected components ------------------------------------------------------------------


def connected_components(edges: Any, parts: int, max_rounds: int = 200) -> tuple[Any, int]:
    """(RDD of (node, smallest node of its component), rounds) for the nodes of the RDD
    ``edges`` of (a, b): pagetwin.components' rounds, each step one shuffle into ``parts``
    partitions. A round's edges
    are kept (memory, then disk) and cut from their lineage (``localCheckpoint``), so a long
    run of rounds does not grow the job's plan. RuntimeError past ``max_rounds``."""
    from pyspark import StorageLevel

    current = edges.filter(lambda e: e[0] != e[1]).map(directed).distinct(parts)
    current.persist(StorageLevel.MEMORY_AND_DISK)
    size = current.count()
    for rounds in range(1, max_rounds + 1):
        large = current.flatMap(lambda e: (e, (e[1], e[0]))).groupByKey(parts).flatMap(lambda kv: large_star(*kv))
        after = large.groupByKey(parts).flatMap(lambda kv: small_star(*kv)).distinct(parts)
        after.persist(StorageLevel.MEMORY_AND_DISK)
        after.localCheckpoint()
        after_size = after.count()
        same = after_size == size and after.subtract(current, parts).isEmpty()
        current.unpersist()
        current, size = after, after_size
        if same:
            centres = current.map(lambda e: (e[1], e[1])).distinct(parts)
            return current.union(centres).coalesce(parts), rounds
    raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")


# -- on the executors ----------------------------------------------------------------------

# The algorithms of this Python worker and the broadcast they were built for (executor side).
_current: tuple[str, list] | None = None


def _algorithms(token: str, settings: Any) -> list:
    global _current
    if _current is None or _current[0] != token:
        from pagetwin.fingerprints import build_algorithms

        _current = (token, build_algorithms(settings))
    return _current[1]


def _lean(items: Iterable[tuple[Any, Any]]) -> Iterator[tuple[int, Any]]:
    """Pass 2's items as (0, Lean) per page, then (1, Counts of the partition)."""
    from pagetwin.engine import source_path
    from pagetwin.softerror import page_kind
    from pagetwin.sources import is_uri

    counts = Counts()
    for part_stats, result in items:
        if part_stats is not None:
            if counts.stats is None:
                counts.stats = part_stats
            else:
                counts.stats.merge(part_stats)
            continue
        page, doc = result.page, result.doc
        if result.error:
            counts.page_errors[result.error] += 1
        counts.replaced_chars += result.replaced_chars
        counts.refused_charsets += result.refused_charsets
        counts.flattened += result.flattened
        offset, status = page.meta.get("warc_offset"), page.meta.get("http_status")
        status = status if isinstance(status, int) else None
        title = doc.title if doc else None
        yield 0, Lean(
            page.id, page.url, page.host, page.source if is_uri(page.source) else source_path(page.source), page.kind, page.crawl_date,
            len(doc.text) if doc else 0, page.payload_digest, page.refers_to_digest,
            offset if isinstance(offset, int) else None, status, result.error or None, result.features, result.keys,
            title, page_kind(title or "", doc.text if doc else "", status),
        )  # fmt: skip
    yield 1, counts


def _keys_of(names: list[str], item: tuple[int, Lean]) -> Iterator[tuple[tuple[int, int], int]]:
    pid, lean = item
    for i, name in enumerate(names):
        for key in lean.keys.get(name, ()):
            yield (i, key), pid


def sorted_bucket_pairs(
    items: Iterable[tuple[tuple[int, int, int], Any]], max_bucket: int, chain: list[bool], listed: list[bool] | None = None
) -> Iterator[tuple[int, tuple[int, int, int] | int]]:
    """match.bucket_pairs over candidate buckets streamed in (algorithm, key, pid) order: (0,
    (algorithm, a, b)) per pair of a bucket of at most ``max_bucket`` pages, (2, (algorithm, a,
    b)) per pair of an oversized bucket's window, (1, algorithm) per oversized bucket and, for
    the algorithms ``listed`` (those whose pairs must share keys: min_shared_keys > 1), (3,
    (algorithm, pid, key)) per member of an oversized bucket (its window may not pair two
    members, who share it all the same). A bucket is
    never held whole: at most ``max_bucket`` + 1 pids (its pairs are all pairs until it grows
    past that), then the last WINDOW (it is windowed: each pid paired with the WINDOW before it,
    as bucket_pairs pairs ranks i and i+1..i+WINDOW); a chained algorithm's bucket only the
    last pid. A pid listed twice in a bucket counts once (bucket_pairs' buckets are sets)."""
    from collections import deque

    from pagetwin.match import WINDOW

    bucket: tuple[int, int] | None = None
    members: list[int] = []  # the bucket so far, while it is not over max_bucket
    window: deque[int] = deque(maxlen=WINDOW)  # its last WINDOW pids, once it is
    last = -1

    def ended() -> Iterator[tuple[int, Any]]:
        alg = bucket[0]
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                yield 0, (alg, a, b)
        if window:
            yield 1, alg

    for (alg, key, pid), _ in items:
        if (alg, key) != bucket:
            if bucket is not None:
                yield from ended()
            bucket, last = (alg, key), -1
            members, window = [], deque(maxlen=WINDOW)
        if pid == last:
            continue
        if chain[alg]:
            if last >= 0:
                yield 0, (alg, last, pid)
        elif window:
            for a in window:
                yield 2, (alg, a, pid)
            window.append(pid)
            if listed and listed[alg]:
                yield 3, (alg, pid, key)
        else:
            members.append(pid)
            if len(members) > max_bucket:  # oversized: its pairs so far by window, then stream
                for i, a in enumerate(members):
                    for b in members[i + 1 : i + 1 + WINDOW]:
                        yield 2, (alg, a, b)
                if listed and listed[alg]:
                    for a in members:
                        yield 3, (alg, a, key)
                window.extend(members)
                members = []
        last = pid
    if bucket is not None:
        yield from ended()


def _candidates(streamed: Any, need: list[int], over: set[int], n: int) -> Any:
    """RDD of (algorithm, a, b), each pair to verify once: the streamed pairs (sorted_bucket_pairs)
    whose pages share ``need[algorithm]`` of its keys, as match.distinct_pair_arrays keeps them.
    Two pages share a key once per bucket of at most max_bucket pages that pairs them, and once
    per oversized bucket holding both (counted by membership, only for the algorithms ``over``
    that have one: a join of the pairs still short with each page's oversized buckets)."""
    from operator import add

    counted = streamed.filter(lambda t: t[0] in (0, 2)).map(lambda t: (t[1], int(t[0] == 0))).reduceByKey(add, n)
    enough = counted.filter(lambda pc: need[pc[0][0]] <= 1 or pc[1] >= need[pc[0][0]]).keys()  # a window's pairs count 0
    if not any(need[alg] > 1 for alg in over):
        return enough
    listed = streamed.filter(lambda t: t[0] == 3).map(lambda t: t[1])  # (algorithm, pid, key)
    members = listed.map(lambda t: (t[:2], t[2])).groupByKey(n).mapValues(frozenset)
    short = counted.filter(lambda pc: 1 < need[pc[0][0]] > pc[1] and pc[0][0] in over)
    # Only a pair of two members of oversized buckets can be raised: the others are dropped
    # before the joins shuffle them (a Bloom filter of the members: no member is ever dropped).
    bits = member_filter(listed.map(lambda t: (t[0], t[1])))
    short = short.filter(partial(_both_members, bits))
    raised = (
        short.map(lambda pc: (pc[0][:2], (pc[0][2], pc[1])))  # ((alg, a), (b, count))
        .join(members, n)
        .map(lambda kv: ((kv[0][0], kv[1][0][0]), (kv[0][1], kv[1][0][1], kv[1][1])))  # ((alg, b), (a, count, a's))
        .join(members, n)
        .filter(lambda kv: kv[1][0][1] + len(kv[1][0][2] & kv[1][1]) >= need[kv[0][0]])
        .map(lambda kv: (kv[0][0], kv[1][0][0], kv[0][1]))
    )
    return enough.union(raised)


# The members' Bloom filter: bits a member (at least 2**13, at most 2**23: 1 MB in each task's
# closure whatever the crawl; past 2**20 members more false positives pass, never a member less).
_BITS_A_MEMBER, _MIN_BITS, _MAX_BITS, _PROBES = 8, 1 << 13, 1 << 23, 3


def member_filter(members: Any) -> tuple[int, bytes]:
    """(bits, the Bloom filter) of an RDD of (algorithm, pid), built on the executors, the
    partitions' filters OR-ed in a tree: the driver gets one filter of at most _MAX_BITS bits."""
    import numpy as np

    count = members.count()
    bits = min(_MAX_BITS, max(_MIN_BITS, 1 << max(0, count * _BITS_A_MEMBER - 1).bit_length()))
    zero = np.zeros(bits // 8, dtype=np.uint8)
    built = members.mapPartitions(partial(_filter_of, bits)).treeReduce(np.bitwise_or) if count else zero
    return bits, built.tobytes()


def _probes(bits: int, alg: int, pid: int) -> list[int]:
    """The filter's bit numbers of (alg, pid): double hashing of one xxhash (never Python's hash())."""
    import xxhash

    h = xxhash.xxh64_intdigest(f"{alg}:{pid}".encode())
    step = (h >> 32) | 1
    return [(h + i * step) % bits for i in range(_PROBES)]


def _filter_of(bits: int, members: Iterable[tuple[int, int]]) -> Iterator[Any]:
    import numpy as np

    positions = np.fromiter((b for alg, pid in members for b in _probes(bits, alg, pid)), dtype=np.int64)
    filt = np.zeros(bits // 8, dtype=np.uint8)
    np.bitwise_or.at(filt, positions >> 3, (1 << (positions & 7)).astype(np.uint8))
    yield filt


def is_member(bloom: tuple[int, bytes], alg: int, pid: int) -> bool:
    """Whether ``member_filter``'s filter may hold (alg, pid) (False: it surely does not)."""
    bits, filt = bloom
    return all(filt[b >> 3] >> (b & 7) & 1 for b in _probes(bits, alg, pid))


def _both_members(bloom: tuple[int, bytes], pair_count: tuple[tuple[int, int, int], int]) -> bool:
    (alg, a, b), _ = pair_count
    return is_member(bloom, alg, a) and is_member(bloom, alg, b)


def _bucket_of(item: tuple[int, int, int]) -> int:
    """The shuffle partition of a (algorithm, key, pid) item: its bucket's, by xxhash (Spark
    takes it modulo the partitions)."""
    import xxhash

    alg, key, _ = item
    return xxhash.xxh64_intdigest(f"{alg}:{key}".encode())


def _verified(shared: Any, items: Iterable[Any]) -> Iterator[tuple[tuple[int, int], tuple[int, Any]]]:
    """((a, b), (algorithm number, Evidence)) for each joined pair ((b, alg), ((a, fa), fb))
    that passes its algorithm's verification."""
    token, settings = shared.value
    algorithms = _algorithms(token, settings)
    for (b, alg), ((a, fa), fb) in items:
        algorithm = algorithms[alg]
        result = algorithm.verify(algorithm.decode(fa), algorithm.decode(fb))
        if result.passed:
            yield (a, b), (alg, result)


def _edge(item: tuple[tuple[int, int], Iterable[tuple[int, Any]]]) -> tuple[tuple[int, int], str, tuple]:
    from pagetwin.match import edge_kind

    pair, found = item
    evidence = tuple(ev for _, ev in sorted(found, key=lambda x: x[0]))  # revisit (-1) first, then settings order
    return pair, edge_kind(list(evidence)), evidence


class Node(NamedTuple):
    """What a cluster's row needs of its page, carried through the clusters' one shuffle of the
    pages (``_clusters``); ``features`` only when its component has more than two members (the
    guard's), else {}."""

    id: str
    url: str
    host: str
    page_kind: str | None
    title: str | None
    text_len: int
    crawl_date: str | None
    features: dict[str, bytes]


class Row(NamedTuple):
    """A page's row of the clusters (``_clusters``): its cluster's name, whether it is the kept
    page, and what the outputs and the summary say of it (no join with the pages after)."""

    cluster: str
    keep: int
    id: str
    url: str
    host: str
    page_kind: str | None
    title: str | None


def _row(node: Node, cluster: str, keep: int) -> Row:
    return Row(cluster, keep, node.id, node.url, node.host, node.page_kind, node.title)


def _component_rows(shared: Any, item: tuple[int, tuple[Iterable, Iterable]]) -> Iterator[tuple[int, Row]]:
    """(pid, Row) for the members of one connected component, split by the guard (more than
    two members, match.guard) as app._guard splits it locally."""
    from pagetwin.cluster import ClusterPage, cluster_id, keep_key
    from pagetwin.guard import split_component

    token, settings = shared.value
    _, (members, edges) = item
    info: dict[int, ClusterPage] = {}
    nodes: dict[int, Node] = {}
    for pid, node in members:
        info[pid] = ClusterPage(pid, node.id, node.text_len, node.crawl_date)
        nodes[pid] = node
    order = keep_key(settings.cluster.keep)

    def keep(pages: list[int]) -> int:
        return min(pages, key=lambda pid: order(info[pid]))

    parts = [sorted(info)]
    if settings.match.guard and len(info) > 2:
        algorithms = _algorithms(token, settings)
        decoded: dict[tuple[int, int], Any] = {}

        def feature(i: int, pid: int) -> Any:
            if (i, pid) not in decoded:
                data = nodes[pid].features.get(algorithms[i].name)
                decoded[(i, pid)] = None if data is None else algorithms[i].decode(data)
            return decoded[(i, pid)]

        def similar(a: int, b: int) -> bool:
            share = settings.match.guard_share
            for i, alg in enumerate(algorithms):
                fa, fb = feature(i, a), feature(i, b)
                if fa is not None and fb is not None and alg.related(fa, fb, share):
                    return True
            return False

        parts = split_component(sorted(info), list(edges), similar, keep)
    for part in parts:
        kept = keep(part)
        name = cluster_id(info[kept].id)
        for pid in part:
            yield pid, _row(nodes[pid], name, int(pid == kept))


def _placed(item: tuple[int, Iterable[tuple[int, Any]]]) -> Iterator[tuple[int, Any]]:
    """A page (0, Node) met with its component's (1, (label, size)) and the original it follows
    (2, original pid; a revisit): (0, (pid, Row)) for a page alone, (1, (label, (pid, Node)))
    for a member of a component, its features kept only past two members (the guard's), (2,
    (original, (pid, Node))) for a revisit that follows an original."""
    from pagetwin.cluster import cluster_id

    pid, met = item
    node, label, original = None, None, None
    for tag, value in met:
        if tag == 0:
            node = value
        elif tag == 1:
            label = value
        else:
            original = value
    if node is None:
        return
    if original is not None:
        yield 2, (original, (pid, node._replace(features={})))
    elif label is not None:
        yield 1, (label[0], (pid, node if label[1] > 2 else node._replace(features={})))
    else:
        yield 0, (pid, _row(node, cluster_id(node.id), 1))


# -- on the driver: the plan ---------------------------------------------------------------


def link_on_executors(
    engine: Any, inputs: list[str], settings: Any, learned: Any, stats: Any, out_uri: str, overwrite: bool = False
) -> Counts:
    """Pass 2 and the link step on the executors, the outputs written under ``out_uri``
    (module docstring). ``stats`` (SourceStats) gets every partition's counts; the returned
    Counts hold the rest."""
    import uuid

    from pyspark import StorageLevel

    rdd, done = engine.pass2_rdd(inputs, settings, learned, stats)
    sc = engine.context(settings)
    shared = sc.broadcast((uuid.uuid4().hex, settings))
    counts = Counts()
    try:
        tagged = rdd.mapPartitions(_lean)
        tagged.persist(StorageLevel.MEMORY_AND_DISK)
        for part in tagged.filter(lambda t: t[0] == 1).map(lambda t: t[1]).collect():
            _add_partition(counts, part, stats)
        pages = tagged.filter(lambda t: t[0] == 0).map(lambda t: t[1]).zipWithIndex().map(lambda li: (li[1] + 1, li[0]))
        pages.persist(StorageLevel.MEMORY_AND_DISK)
        counts.pages = pages.count()
        n = max(1, sc.defaultParallelism)  # partitions of every shuffle
        tagged.unpersist()
        revisits = _revisits(pages, n)  # (original, revisit)
        edges = _edges(sc, shared, pages, revisits, settings, counts, n)
        rows = _clusters(shared, pages, edges, revisits, settings, counts, n)
        _write(sc, pages, edges, rows, out_uri, overwrite, counts, n, settings)
        # pass 1's models, for explain (and a later add) to fingerprint a record again (runners.spark_output)
        from pagetwin.runners.spark_output import MODELS, write_models

        counts.outputs[MODELS] = write_models(sc, learned, settings, out_uri, overwrite)
        return counts
    finally:
        shared.destroy()
        done()


def _add_partition(counts: Counts, part: Counts, stats: Any) -> None:
    if part.stats is not None:
        stats.merge(part.stats)
    counts.page_errors.update(part.page_errors)
    counts.replaced_chars += part.replaced_chars
    counts.refused_charsets += part.refused_charsets
    counts.flattened += part.flattened


def _revisits(pages: Any, n: int) -> Any:
    """(original, revisit) pids: a revisit record and the first response whose payload digest
    it names (Index.revisit_pairs)."""
    originals = (
        pages.filter(lambda p: p[1].kind == "response" and p[1].payload_digest is not None)
        .map(lambda p: (p[1].payload_digest, p[0]))
        .reduceByKey(min, n)
    )
    refs = pages.filter(lambda p: p[1].kind == "revisit" and p[1].refers_to_digest is not None)
    joined = refs.map(lambda p: (p[1].refers_to_digest, p[0])).join(originals, n)
    return joined.map(lambda kv: (kv[1][1], kv[1][0]))


def _edges(sc: Any, shared: Any, pages: Any, revisits: Any, settings: Any, counts: Counts, n: int) -> Any:
    """RDD of ((a, b), kind, evidence): match.find_edges on the executors; its counts in
    ``counts`` (candidates, passed, oversized buckets, revisit edges, edges by kind)."""
    from pyspark import StorageLevel

    from pagetwin.fingerprints import build_algorithms
    from pagetwin.model import Evidence

    algorithms = build_algorithms(settings)
    names = [a.name for a in algorithms]
    chain = [a.keys_are_proof for a in algorithms]
    need = [min_shared_keys(a) for a in algorithms]
    max_bucket = settings.match.max_bucket
    # Each bucket's pids reach one task in order (sorted on the way, spilling to disk), and are
    # paired as they stream by: no task holds a whole bucket (sorted_bucket_pairs).
    streamed = (
        pages.flatMap(partial(_keys_of, names))
        .map(lambda kp: ((*kp[0], kp[1]), None))
        .repartitionAndSortWithinPartitions(n, _bucket_of)
        .mapPartitions(partial(sorted_bucket_pairs, max_bucket=max_bucket, chain=chain, listed=[k > 1 for k in need]))
    )
    streamed.persist(StorageLevel.MEMORY_AND_DISK)
    over = streamed.filter(lambda t: t[0] == 1).map(lambda t: t[1]).countByValue()
    counts.oversized_buckets.update({names[i]: n for i, n in over.items()})
    candidates = _candidates(streamed, need, set(over), n)
    candidates.persist(StorageLevel.MEMORY_AND_DISK)
    counts.candidates.update({names[i]: n for i, n in candidates.map(lambda c: c[0]).countByValue().items()})
    streamed.unpersist()

    proof = candidates.filter(lambda c: chain[c[0]]).map(
        lambda c: ((c[1], c[2]), (c[0], Evidence(names[c[0]], 1.0, True, {"key": "equal"})))
    )
    feats = pages.flatMap(
        lambda p: (((p[0], i), p[1].features[n]) for i, n in enumerate(names) if not chain[i] and n in p[1].features)
    )
    first = candidates.filter(lambda c: not chain[c[0]]).map(lambda c: ((c[1], c[0]), c[2])).join(feats, n)
    second = first.map(lambda kv: ((kv[1][0], kv[0][1]), (kv[0][0], kv[1][1]))).join(feats, n)
    verified = second.mapPartitions(partial(_verified, shared))
    revisit = revisits.map(
        lambda ov: (tuple(sorted(ov)), (-1, Evidence("revisit", 1.0, True, {"payload_digest": "equal"})))
    )
    found = sc.union([revisit, proof, verified])
    found.persist(StorageLevel.MEMORY_AND_DISK)
    passed = found.map(lambda f: f[1][0]).countByValue()
    counts.revisit_edges = passed.pop(-1, 0)
    counts.passed.update({names[i]: n for i, n in passed.items()})
    edges = found.groupByKey(n).map(_edge)
    edges.persist(StorageLevel.MEMORY_AND_DISK)
    counts.edges_by_kind.update(edges.map(lambda e: e[1]).countByValue())
    found.unpersist()
    candidates.unpersist()
    return edges


def _clusters(shared: Any, pages: Any, edges: Any, revisits: Any, settings: Any, counts: Counts, n: int) -> Any:
    """RDD of (pid, Row) for every page: cluster.clusters with the guard."""
    from operator import add

    from pyspark import StorageLevel

    merged = {"duplicate", "partial"} if settings.match.merge_partial or settings.chunks.merge_partial else {"duplicate"}
    followers = revisits.map(lambda ov: (ov[1], ov[0]))  # revisit -> its original
    linked = edges.filter(lambda e: e[1] in merged).map(lambda e: (e[0][0], (e[0][1], guard_score(e[2]))))
    linked = linked.subtractByKey(followers, n).map(lambda kv: (kv[1][0], (kv[0], kv[1][1]))).subtractByKey(followers, n)
    linked = linked.map(lambda kv: (kv[1][0], kv[0], kv[1][1]))  # (a, b, score), neither a follower
    linked.persist(StorageLevel.MEMORY_AND_DISK)
    labels, counts.rounds = connected_components(linked.map(lambda e: (e[0], e[1])), n)
    labels.persist(StorageLevel.MEMORY_AND_DISK)
    # node -> (label, its component's size): only the guard's components (over two) need features
    sizes = labels.map(lambda nl: (nl[1], 1)).reduceByKey(add, n)
    labelled = labels.map(lambda nl: (nl[1], nl[0])).join(sizes, n).map(lambda kv: (kv[1][0], (kv[0], kv[1][1])))
    # The pages' one shuffle here: each meets its label and size, or the original it follows.
    nodes = pages.mapValues(lambda p: (0, Node(p.id, p.url, p.host, p.page_kind, p.title, p.text_len, p.crawl_date, p.features)))
    met = pages.context.union([nodes, labelled.mapValues(lambda v: (1, v)), followers.mapValues(lambda o: (2, o))])
    placed = met.groupByKey(n).flatMap(_placed)
    placed.persist(StorageLevel.MEMORY_AND_DISK)
    alone = placed.filter(lambda t: t[0] == 0).map(lambda t: t[1])
    members = placed.filter(lambda t: t[0] == 1).map(lambda t: t[1])  # label -> (pid, Node)
    by_label = linked.map(lambda e: (e[0], e[1:])).join(labels, n).map(lambda kv: (kv[1][1], (kv[0], *kv[1][0])))
    grouped = members.cogroup(by_label, n).flatMap(partial(_component_rows, shared))
    grouped.persist(StorageLevel.MEMORY_AND_DISK)
    # a revisit in its original's cluster, never kept
    names = grouped.union(alone).mapValues(lambda r: r.cluster)
    following = placed.filter(lambda t: t[0] == 2).map(lambda t: t[1]).join(names, n).map(
        lambda kv: (kv[1][0][0], _row(kv[1][0][1], kv[1][1], 0))
    )
    rows = alone.union(grouped).union(following).coalesce(n)
    rows.persist(StorageLevel.MEMORY_AND_DISK)
    counts.clusters = rows.filter(lambda r: r[1].keep == 1).count()
    for done in (linked, placed, grouped):  # (labels stays: its rounds were checkpointed locally)
        done.unpersist()
    return rows


# -- the outputs ---------------------------------------------------------------------------


def _cluster_line(item: tuple[int, tuple[str, int, str, str, int, str]]) -> tuple:
    """outputs.jsonl.write_clusters' line for one page, and its Parquet row before it."""
    from pagetwin.outputs.jsonl import cluster_line

    pid, (name, keep, page_id, url, size, kept_id) = item
    return pid, page_id, url, name, bool(keep), size, kept_id, cluster_line(page_id, url, name, keep, size, kept_id)


def _pair_line(item: Any) -> tuple[str, str, str, str, str, str, str]:
    from pagetwin.match import evidence_json
    from pagetwin.outputs.jsonl import pair_line

    _, ((kind, evidence, (id_a, url_a)), (id_b, url_b)) = item
    text = evidence_json(evidence)
    return id_a, id_b, url_a, url_b, kind, text, pair_line(id_a, id_b, url_a, url_b, kind, text)


def _page_row(item: tuple[int, Lean]) -> tuple:
    """A row of pages.parquet with ``spark.index = "features"``: the page's features whole."""
    pid, p = item
    return (pid, p.id, p.url, p.source, p.kind, p.crawl_date, p.text_len, p.payload_digest, p.refers_to_digest,
            p.warc_offset, p.http_status, p.error, dict(p.features))  # fmt: skip


def _lean_row(item: tuple[int, Lean]) -> tuple:
    """A row of pages.parquet with ``spark.index = "lean"`` (the default): what finds a page's
    candidates (its keys and payload digest, shortened) and where its record is."""
    pid, p = item
    return (pid, p.source, p.warc_offset, p.kind, p.crawl_date, p.text_len, p.http_status, p.error,
            lean_digest_key(p.payload_digest), p.refers_to_digest, short_keys(p.keys))  # fmt: skip


# -- the lean index's shortened keys ---------------------------------------------------------

KEY_BYTES = 4  # a stored key's bytes: its low 32 bits


def short_key(key: int) -> int:
    """A candidate key (signed 64 bits) shortened to its low 32 bits, as a signed int32 (Parquet's
    int). Two pages sharing a key share its short key: shortening only adds candidates."""
    low = key & 0xFFFFFFFF
    return low - (1 << 32) if low >= 1 << 31 else low


def short_keys(keys: dict[str, list[int]]) -> dict[str, bytes]:
    """Each algorithm's candidate keys shortened (``short_key``), packed as little-endian int32s
    in pass 2's order: 4 bytes a key instead of 8 (and no key names in a row)."""
    return {name: b"".join((k & 0xFFFFFFFF).to_bytes(KEY_BYTES, "little") for k in ks) for name, ks in keys.items() if ks}


def unpack_keys(data: bytes) -> list[int]:
    """The short keys ``short_keys`` packed, as ``short_key`` gives them."""
    return [int.from_bytes(data[i : i + KEY_BYTES], "little", signed=True) for i in range(0, len(data), KEY_BYTES)]


def lean_digest_key(digest: str | None) -> int | None:
    """pages.parquet's ``digest_key`` of a payload digest (None without one): ``_digest_key``
    shortened as the candidate keys are (``short_key``)."""
    return short_key(_digest_key(digest)) if digest else None


def _digest_key(digest: str) -> int:
    """A payload digest ("sha1:BASE32", any algorithm or spelling) as a 64-bit key (xxh3 of its
    text): a revisit's digest looked up in the lean index finds the pages that may be its
    original, each then read back from its record (which names its digest whole)."""
    import xxhash

    return xxhash.xxh3_64_intdigest(digest.encode("utf-8", "surrogatepass"))


def stored_keys(algorithms: list, features: dict[str, bytes]) -> dict[str, list[int]]:
    """A page's candidate keys from its stored features (pages.parquet's ``features``): what
    pass 2 gave (Worker.fingerprint), as each algorithm's keys are a function of its features."""
    out = {}
    for algorithm in algorithms:
        data = features.get(algorithm.name)
        if data is not None:
            out[algorithm.name] = list(dict.fromkeys(algorithm.keys(algorithm.decode(data))))
    return out


_CLUSTERS_SCHEMA = "pid long, id string, url string, cluster string, keep boolean, cluster_size long, kept_id string"
_PAIRS_SCHEMA = "a string, b string, url_a string, url_b string, kind string, evidence string"
_PAGES_SCHEMA = (
    "pid long, id string, url string, source string, kind string, crawl_date string, text_len long, "
    "payload_digest string, refers_to_digest string, warc_offset long, http_status int, error string, "
    "features map<string, binary>"
)
_LEAN_SCHEMA = (
    "pid long, source string, warc_offset long, kind string, crawl_date string, text_len long, http_status int, "
    "error string, digest_key int, refers_to_digest string, keys map<string, binary>"
)


def _pages_frame(spark: Any, pages: Any, index: str) -> Any:
    """pages.parquet's frame: the lean rows, or with ``spark.index = "features"`` the features."""
    if index == "features":
        return spark.createDataFrame(pages.map(_page_row), _PAGES_SCHEMA)
    return spark.createDataFrame(pages.map(_lean_row), _LEAN_SCHEMA)


def _write(
    sc: Any, pages: Any, edges: Any, rows: Any, out_uri: str, overwrite: bool, counts: Counts, n: int, settings: Any
) -> None:
    """clusters and pairs as JSONL part files and Parquet, the lean index as Parquet, under
    ``out_uri``, written by the executors in page order (pairs in (a, b) order)."""
    from pyspark import StorageLevel
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    # rows carry each page's id and URL: the pairs alone are joined with them (a, then b)
    ident = rows.mapValues(lambda r: (r.id, r.url))
    # name -> (size, kept page's id), then pid -> (name, keep, id, url, size, kept id)
    kept = rows.filter(lambda r: r[1].keep == 1).map(lambda r: (r[1].cluster, r[1].id))
    sizes = rows.map(lambda r: (r[1].cluster, 1)).reduceByKey(lambda a, b: a + b, n)
    sizes.persist(StorageLevel.MEMORY_AND_DISK)
    info = sizes.join(kept, n)
    full = rows.map(lambda r: (r[1].cluster, (r[0], r[1].keep, r[1].id, r[1].url))).join(info, n)
    full = full.map(lambda kv: (kv[1][0][0], (kv[0], *kv[1][0][1:], *kv[1][1])))
    clusters = full.sortByKey(True, n).map(_cluster_line)
    by_a = edges.map(lambda e: (e[0][0], (e[0][1], e[1], e[2]))).join(ident, n)
    by_b = by_a.map(lambda kv: (kv[1][0][0], (kv[0], kv[1][0][1], kv[1][0][2], kv[1][1]))).join(ident, n)
    pairs = by_b.map(lambda kv: ((kv[1][0][0], kv[0]), ((kv[1][0][1], kv[1][0][2], kv[1][0][3]), kv[1][1])))
    pairs = pairs.sortByKey(True, n).map(_pair_line)
    # Each is written twice (Parquet and JSONL): kept, so that the second writer does not run
    # the joins, the sort's sampling and the lines again.
    clusters.persist(StorageLevel.MEMORY_AND_DISK)
    pairs.persist(StorageLevel.MEMORY_AND_DISK)
    mode = "overwrite" if overwrite else "errorifexists"
    base = out_uri.rstrip("/")
    # The Parquet files' rows in the order explain looks them up by (id; a pair by its a): with
    # small row groups their statistics let a reader skip all but the one holding it.
    frames = {
        "clusters.parquet": spark.createDataFrame(clusters.map(lambda c: c[:7]), _CLUSTERS_SCHEMA).sortWithinPartitions("id"),
        "clusters.jsonl": spark.createDataFrame(clusters.map(lambda c: (c[7],)), "value string"),
        "pairs.parquet": spark.createDataFrame(pairs.map(lambda p: p[:6]), _PAIRS_SCHEMA).sortWithinPartitions("a"),
        "pairs.jsonl": spark.createDataFrame(pairs.map(lambda p: (p[6],)), "value string"),
        "pages.parquet": _pages_frame(spark, pages.sortByKey(True, n), settings.spark.index),
    }  # fmt: skip
    from pagetwin.runners.spark_output import ROW_GROUP_BYTES

    for name, frame in frames.items():
        target = f"{base}/{name}"
        writer = frame.write.mode(mode)
        try:
            writer.text(target) if name.endswith(".jsonl") else writer.option("parquet.block.size", ROW_GROUP_BYTES).parquet(target)
        except Exception as exc:  # noqa: BLE001 - pyspark's AnalysisException: the target is there
            if "already exists" not in str(exc):
                raise
            from pagetwin.outputs.files import OutputError

            raise OutputError(f"{target} already exists (an earlier run's output; use another --out or --replace)") from None
        counts.outputs[name] = target
    counts.lean_bytes = _size(sc, counts.outputs["pages.parquet"])
    counts.cluster_stats = _cluster_stats(rows, sizes, n)
    counts.cluster_kinds = _cluster_kinds(rows, sizes, n)
    for kept_rdd in (sizes, clusters, pairs):
        kept_rdd.unpersist()


# -- the summary's clusters and hosts, aggregated on the executors -------------------------


def _cluster_stats(rows: Any, sizes: Any, n: int, max_hosts: int | None = None) -> dict[str, Any]:
    """outputs.jsonl.cluster_stats, from the RDDs: the driver gets one count per distinct
    cluster size and the ``max_hosts`` hosts with most pages, never a row per page."""
    from pagetwin.outputs.jsonl import MAX_HOSTS, size_bucket

    max_hosts = MAX_HOSTS if max_hosts is None else max_hosts
    buckets: dict[str, int] = {}
    by_size = sizes.map(lambda kv: kv[1]).countByValue()
    for size in sorted(by_size):
        buckets[size_bucket(size)] = buckets.get(size_bucket(size), 0) + by_size[size]
    # host -> (pages, duplicates)
    hosts = rows.map(lambda r: (r[1].host, (1, 1 - r[1].keep)))
    hosts = hosts.reduceByKey(lambda a, b: (a[0] + b[0], a[1] + b[1]), n)
    hosts.persist()
    total = hosts.map(lambda h: (1, *h[1])).fold((0, 0, 0), lambda a, b: (a[0] + b[0], a[1] + b[1], a[2] + b[2]))
    top = hosts.takeOrdered(max_hosts, key=lambda h: (-h[1][0], h[0]))
    hosts.unpersist()
    listed = [{"host": h, "pages": p, "duplicates": d} for h, (p, d) in top]
    others = {"hosts": total[0] - len(top), "pages": total[1] - sum(p for _, (p, _) in top),
              "duplicates": total[2] - sum(d for _, (_, d) in top)}  # fmt: skip
    return {"cluster_sizes": buckets, "largest_cluster": max(by_size, default=0),
            "hosts": {"count": total[0], "listed": listed, "others": others}}  # fmt: skip


def _cluster_kinds(rows: Any, sizes: Any, n: int, limit: int = 100) -> dict[str, Any]:
    """softerror.report, from the RDDs: each cluster's kind (softerror.cluster_kind of its
    pages' kinds) on the executors; the driver gets a count per kind and the ``limit``
    largest clusters that are not content."""
    from pagetwin.softerror import cluster_kind

    # cluster name -> (its pages' kinds, the kept page's (id, url, title) or None)
    by_cluster = rows.map(lambda r: (r[1].cluster, (Counter([r[1].page_kind]), (r[1].id, r[1].url, r[1].title) if r[1].keep else None)))
    merged = by_cluster.reduceByKey(lambda a, b: (a[0] + b[0], a[1] or b[1]), n)  # kinds counted, not listed
    kinds = merged.mapValues(lambda v: (cluster_kind(v[0].elements()), v[1])).join(sizes, n)  # name -> ((kind, kept), size)
    kinds.persist()
    clusters_by_kind = kinds.map(lambda kv: kv[1][0][0]).countByValue()
    pages_by_kind = kinds.map(lambda kv: (kv[1][0][0], kv[1][1])).reduceByKey(lambda a, b: a + b).collectAsMap()
    flagged = kinds.filter(lambda kv: kv[1][0][0] != "content").takeOrdered(limit, key=lambda kv: (-kv[1][1], kv[0]))
    kinds.unpersist()
    listed = [
        {"cluster": name, "kind": kind, "size": size,
         "kept": {"id": kept[0], "url": kept[1], "title": kept[2]} if kept else None}
        for name, ((kind, kept), size) in flagged
    ]  # fmt: skip
    return {
        "clusters_by_kind": dict(sorted(clusters_by_kind.items())),
        "pages_by_kind": dict(sorted(pages_by_kind.items())),
        "not_content": listed,
    }


def _size(sc: Any, uri: str) -> int:
    """Bytes under ``uri``, asked of its Hadoop file system."""
    jvm = sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return int(path.getFileSystem(sc._jsc.hadoopConfiguration()).getContentSummary(path).getLength())
