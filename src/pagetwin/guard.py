"""The anti-chaining guard: split a connected component of verified edges so that no path of
edges joins pages that have nothing in common.

Union-find over verified edges is transitive: A~B and B~C put A and C in one cluster even when
A and C share nothing (a page quoting two articles, a template-heavy hub page, a run of
revisions that drifts). The guard splits each component into clusters around verified cores.

Rule: repeatedly, within what is left of the component, take a *center*: rule "center" (the
default) takes the member with the most verified edges to the others (ties: the higher summed
score, then the smaller page number); rule "keep" takes the page the cluster would keep
(``keep(members)``). Grow a *core* around it: the center's neighbours, closest first, each
added only if it is verified-similar to every page already in the core, up to ``core_size``
pages (default 2: the center and its closest match). The cluster is the core plus every
remaining neighbour of the core that is verified-similar to *every* core page (joined by a
verified edge, or passing ``similar(a, b)``, a fresh verification of the pair by the configured
algorithms). Recompute the connected components of the members left and repeat.

So a chain A~B~C with A and C unrelated never ends in one cluster once core_size >= 2:
whichever of A, B, C is the center, the core holds two of them that resemble each other and
the third must resemble both. With core_size = 1 the rule is a star around the center (every
member verified-similar to the center, members at most two steps apart).

Why this default (bench/calibrate.py --part guard; bench/RESULTS.md "Near duplicates:
calibration"): at the calibrated thresholds it cost no recall on the copycat judgements or the
LLVM 15/16 pages, and where looser thresholds let chains form it raised precision and cut the
largest cluster (copycat, MinHash at 0.5: largest cluster 12 -> 11, 0.6: precision 0.317 ->
0.327). Rule "keep" and core_size 4 cut a little deeper (higher all-pairs precision on LLVM)
but lost true pairs (recall -0.3 to -1.4 points).

Cost: a round asks at most core_size verifications per neighbour of the core, so a component
of n members with maximum degree d costs O(n d core_size) ``similar`` calls at worst, never the
O(n^2) of all pairs; components of at most two members are returned as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

RULES = ("center", "keep")
DEFAULT_CORE = 2


def split_component(
    members: list[int],
    edges: Iterable[tuple[int, int, float]],
    similar: Callable[[int, int], bool],
    keep: Callable[[list[int]], int] | None = None,
    rule: str = "center",
    core_size: int = DEFAULT_CORE,
) -> list[list[int]]:
    """Split one connected component into clusters around verified cores (see the module
    docstring for the rule).

    members: the component's page numbers. edges: its verified edges (a, b, score); edges to
    pages outside ``members`` are ignored. similar(a, b): verify a pair that has no edge (each
    pair is asked at most once). keep(pages) -> the page a cluster of those pages keeps (needed
    by rule "keep" only). core_size: at most this many pages in a core (1 = the center alone).
    Returns a partition of ``members``: each part sorted, parts ordered by smallest member.
    """
    if rule not in RULES:
        raise ValueError(f"unknown guard rule {rule!r} (choose from {', '.join(RULES)})")
    if rule == "keep" and keep is None:
        raise ValueError("guard rule 'keep' needs keep()")
    core_size = max(1, int(core_size))
    member_set = set(members)
    adj: dict[int, dict[int, float]] = {m: {} for m in member_set}
    for a, b, score in edges:
        if a != b and a in member_set and b in member_set:
            adj[a][b] = max(score, adj[a].get(b, score))
            adj[b][a] = adj[a][b]
    asked: dict[tuple[int, int], bool] = {}

    def linked(x: int, y: int) -> bool:
        if y in adj[x]:
            return True
        pair = (x, y) if x < y else (y, x)
        if pair not in asked:
            asked[pair] = bool(similar(*pair))
        return asked[pair]

    # The components are split one at a time (a part taken from one cannot change another:
    # no edge joins them), and a member's count of neighbours still unassigned is kept up to
    # date rather than counted again each round: the same parts as counting afresh.
    degree = {m: len(adj[m]) for m in member_set}
    remaining = set(member_set)
    parts: list[list[int]] = []
    todo = _components(remaining, adj)
    while todo:
        comp = todo.pop()
        if len(comp) <= 2:
            parts.append(sorted(comp))
            remaining.difference_update(comp)
            continue
        center = _center(comp, adj, degree, remaining) if rule == "center" else keep(sorted(comp))
        # The core: the center and its closest neighbours that all resemble each other.
        core = [center]
        for n in sorted((n for n in adj[center] if n in remaining), key=lambda n: (-adj[center][n], n)):
            if len(core) >= core_size:
                break
            if all(linked(n, c) for c in core):
                core.append(n)
        part = _members(core, adj, remaining, linked)
        parts.append(sorted(part))
        remaining.difference_update(part)
        for m in part:
            for n in adj[m]:
                if n in remaining:
                    degree[n] -= 1
        todo.extend(_components(comp - part, adj))
    parts.sort(key=lambda p: p[0])
    return parts


def _members(core: list[int], adj: dict[int, dict[int, float]], remaining: set[int], linked: Callable) -> set[int]:
    """The core and the pages reached by edges from it through pages that resemble every page
    of the core (breadth first; which pages are reached does not depend on the order)."""
    part = set(core)
    frontier = list(core)
    while frontier:
        nxt = []
        for c in frontier:
            for m in adj[c]:
                if m in remaining and m not in part and all(linked(m, x) for x in core):
                    part.add(m)
                    nxt.append(m)
        frontier = nxt
    return part


def _components(nodes: set[int], adj: dict[int, dict[int, float]]) -> list[set[int]]:
    """Connected components of the subgraph induced by ``nodes`` (iterative, no recursion)."""
    seen: set[int] = set()
    out = []
    for start in sorted(nodes):
        if start in seen:
            continue
        comp = {start}
        stack = [start]
        seen.add(start)
        while stack:
            x = stack.pop()
            for y in adj[x]:
                if y in nodes and y not in seen:
                    seen.add(y)
                    comp.add(y)
                    stack.append(y)
        out.append(comp)
    return out


def _center(comp: set[int], adj: dict[int, dict[int, float]], degree: dict[int, int], remaining: set[int]) -> int:
    """The member with the most neighbours left (``degree``), then the higher summed score
    (summed only for those tied on the count), then the smaller page number."""
    most = max(degree[m] for m in comp)

    def rank(m: int) -> tuple[float, int]:
        return (-sum([s for n, s in adj[m].items() if n in remaining]), m)

    return min((m for m in comp if degree[m] == most), key=rank)


def make_splitter(
    index: Any,
    algorithms: list,
    edges: list,
    policy: str = "longest",
    rule: str = "center",
    core_size: int = DEFAULT_CORE,
    kinds: tuple[str, ...] = ("duplicate", "revisit"),
    related_share: float = 1.0,
) -> Callable[[list[int]], list[list[int]]]:
    """The guard as cluster.clusters' ``split`` callable, over an index.

    index: pagetwin.index.sqlite.Index (features are read from it to verify pairs without an
    edge); algorithms: the configured Algorithm objects; edges: the verified edges as
    match.Link rows (a, b, kind, score);
    policy: settings.cluster.keep (used by rule "keep"). ``similar(a, b)`` passes when any
    algorithm that has features for both pages finds them related: ``Algorithm.related`` at
    ``related_share`` of its threshold (1.0: the pair must verify; 0.5: half the similarity an
    edge needs is enough to stay with the core).
    """
    from pagetwin.cluster import ClusterPage, as_cluster_page, keep_key
    from pagetwin.match import FeatureCache

    scored = [(a, b, score) for a, b, kind, score in edges if kind in kinds]
    by_page: dict[int, list[tuple[int, int, float]]] = {}
    for a, b, s in scored:
        by_page.setdefault(a, []).append((a, b, s))
        by_page.setdefault(b, []).append((a, b, s))
    caches = [(alg, FeatureCache(index, alg)) for alg in algorithms]
    order = keep_key(policy)
    info: dict[int, ClusterPage] = {}

    def similar(a: int, b: int) -> bool:
        for alg, cache in caches:
            fa, fb = cache[a], cache[b]
            if fa is not None and fb is not None and alg.related(fa, fb, related_share):
                return True
        return False

    def keep(pages: list[int]) -> int:
        if not info:
            info.update({p.pid: p for p in map(as_cluster_page, index.pages_for_clustering())})
        return min(pages, key=lambda pid: order(info[pid]))

    def split(members: list[int]) -> list[list[int]]:
        component_edges = [e for m in members for e in by_page.get(m, ())]
        return split_component(members, component_edges, similar, keep, rule, core_size)

    return split
