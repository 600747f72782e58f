"""Union-find over verified edges, and the choice of the page to keep in each cluster."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

import xxhash

KEEP_POLICIES = ("longest", "earliest", "first")


class UnionFind:
    """Disjoint sets over integer ids, with path halving and union by size."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}
        self.size: dict[int, int] = {}

    def add(self, x: int) -> None:
        if x not in self.parent:
            self.parent[x] = x
            self.size[x] = 1

    def find(self, x: int) -> int:
        self.add(x)
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: int, b: int) -> int:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return ra

    def groups(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for x in self.parent:
            out.setdefault(self.find(x), []).append(x)
        return out


def _union_all(uf: UnionFind, edges: Iterable[tuple[int, int]]) -> None:
    """``uf.union(a, b)`` of each edge whose pages ``uf`` holds (others are left out), with
    find written out: the same sets (which root names a set changes no group nor its order,
    UnionFind.groups), without three calls an edge (corpus-5000: 150,000 edges)."""
    parent, size = uf.parent, uf.size
    for a, b in edges:
        if a not in parent or b not in parent:
            continue
        while parent[a] != a:
            parent[a] = a = parent[parent[a]]
        while parent[b] != b:
            parent[b] = b = parent[parent[b]]
        if a == b:
            continue
        if size[a] < size[b]:
            a, b = b, a
        parent[b] = a
        size[a] += size[b]


class ClusterPage(NamedTuple):
    """What the choice of the page to keep reads of a page (Index.pages_for_clustering rows)."""

    pid: int  # the order pages were read in
    id: str
    text_len: int
    crawl_date: str | None


class ClusterRow(NamedTuple):
    """A page's cluster: what Index.replace_clusters stores."""

    pid: int
    cluster: str
    keep: int  # 1 for the one page kept in the cluster, else 0


def as_cluster_page(row: tuple[int, str, int, str | None]) -> ClusterPage:
    return row if isinstance(row, ClusterPage) else ClusterPage._make(row)


def keep_key(policy: str) -> Callable[[ClusterPage], tuple]:
    """Sort key over a ClusterPage: the smallest key is kept.

    longest: the most main text, then the earliest crawl date, then the smallest id;
    earliest: the earliest crawl date, then the most text, then the smallest id;
    first: the page read first.
    """
    undated = "~"  # sorts after every ISO date: an undated page is never the earliest
    if policy == "longest":
        return lambda p: (-p.text_len, p.crawl_date or undated, p.id)
    if policy == "earliest":
        return lambda p: (p.crawl_date or undated, -p.text_len, p.id)
    if policy == "first":
        return lambda p: (p.pid,)
    raise ValueError(f"unknown keep policy {policy!r} (choose from {', '.join(KEEP_POLICIES)})")


def cluster_id(keep_page_id: str) -> str:
    """A stable cluster name derived from the kept page's id."""
    return "c" + xxhash.xxh3_64_hexdigest(keep_page_id.encode("utf-8"))


def clusters(
    pages: Iterable[tuple[int, str, int, str | None]],
    edges: Iterable[tuple[int, int]],
    policy: str = "longest",
    split: Callable[[list[int]], list[list[int]]] | None = None,
    attach: Iterable[tuple[int, int]] = (),
) -> list[ClusterRow]:
    """A ClusterRow for every page (``pages``: ClusterPage, or tuples in its field order): a
    partition of the pages with exactly one
    kept page per cluster. ``split`` may break a connected component into several clusters
    (the anti-chaining guard). ``attach`` lists (page, follower) pairs where the follower joins
    its page's cluster whatever the split says and is never kept: a revisit record has no body
    to compare, only the payload digest that names its original."""
    order = keep_key(policy)
    info = {p.pid: p for p in map(as_cluster_page, pages)}
    leader = {follower: page for page, follower in attach if page in info and follower in info}
    uf = UnionFind()
    for pid in info:
        if pid not in leader:
            uf.add(pid)
    _union_all(uf, edges)
    rows: list[ClusterRow] = []
    name_of: dict[int, str] = {}
    for members in uf.groups().values():
        parts = split(sorted(members)) if split and len(members) > 2 else [members]
        for part in parts:
            keep = min(part, key=lambda pid: order(info[pid]))
            name = cluster_id(info[keep].id)
            for pid in part:
                name_of[pid] = name
                rows.append(ClusterRow(pid, name, int(pid == keep)))
    for follower, page in leader.items():
        while page in leader:  # a revisit of a revisit
            page = leader[page]
        rows.append(ClusterRow(follower, name_of[page], 0))
    rows.sort()
    return rows
