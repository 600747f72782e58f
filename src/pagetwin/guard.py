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

import math
from collections.abc import Callable, Iterable
from itertools import groupby
from operator import itemgetter
from dataclasses import dataclass, field
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
    return _parts(_split(members, edges, similar, keep, rule, core_size, trace=False))


def _split(members: list[int], edges: Iterable, similar: Callable, keep: Callable | None, rule: str, core_size: int, trace: bool) -> list[Round]:
    member_set = set(members)
    adj = _adjacency(member_set, edges)
    # Its neighbours are all members: a member's count of them is its adjacency's size.
    degree = {m: len(near) for m, near in adj.items()}
    return _rounds(member_set, adj, _Linked(adj, similar), keep, rule, max(1, int(core_size)), trace, degree)


def _parts(rounds: list[Round]) -> list[list[int]]:
    """The parts of rounds (flat, or top rounds with their children): each sorted, ordered by
    smallest member."""
    return sorted((sorted(p) for r in rounds for p in r.parts()), key=lambda p: p[0])


@dataclass(eq=False)
class Round:
    """One round of the guard on one connected component of the pages left (``members``):
    its center and the second page of its core (None: two members or fewer, one part), the
    part it took, its members' counts of neighbours among ``members``, and the rounds on the
    components of what was left."""

    members: set[int]
    center: int | None = None
    second: int | None = None
    part: set[int] = field(default_factory=set)
    degree: dict[int, int] = field(default_factory=dict)
    children: list[Round] = field(default_factory=list)

    def parts(self) -> list[set[int]]:
        out, stack = [], [self]
        while stack:
            r = stack.pop()
            out.append(r.part)
            stack.extend(r.children)
        return out


def _adjacency(member_set: set[int], edges: Iterable[tuple[int, int, float]]) -> dict[int, dict[int, float]]:
    adj: dict[int, dict[int, float]] = {m: {} for m in member_set}
    for a, b, score in edges:
        if a != b and a in member_set and b in member_set:
            near = adj[a]
            held = near.get(b, score)
            best = held if held > score else score  # max(score, held): the first of equals, as max()
            near[b] = best
            adj[b][a] = best
    return adj


class _Linked:
    """linked(x, y): an edge joins them, or ``similar`` says so (each pair asked once)."""

    def __init__(self, adj: dict[int, dict[int, float]], similar: Callable[[int, int], bool]) -> None:
        self.adj, self.similar, self.asked = adj, similar, {}

    def __call__(self, x: int, y: int) -> bool:
        if y in self.adj[x]:
            return True
        pair = (x, y) if x < y else (y, x)
        if pair not in self.asked:
            self.asked[pair] = bool(self.similar(*pair))
        return self.asked[pair]


def _rounds(
    member_set: set[int], adj: dict, linked: Callable, keep: Callable | None, rule: str, core_size: int, trace: bool,
    degree: dict[int, int] | None = None,
) -> list[Round]:
    """The guard's rounds over ``member_set``: the top-level ones (one per component) with
    their children when ``trace``, else every round, flat (only their parts are wanted).
    ``degree``: each member's count of neighbours among ``member_set``, when the caller has it."""
    # The components are split one at a time (a part taken from one cannot change another:
    # no edge joins them), and a member's count of neighbours still unassigned is kept up to
    # date rather than counted again each round: the same parts as counting afresh.
    if degree is None:
        degree = {m: sum(1 for n in adj[m] if n in member_set) for m in member_set}
    remaining = set(member_set)
    top: list[Round] = []
    todo: list[tuple[set[int], Round | None]] = [(c, None) for c in induced_components(remaining, adj)]
    while todo:
        comp, parent = todo.pop()
        r = Round(comp, degree={m: degree[m] for m in comp} if trace else {})
        (parent.children if parent is not None and trace else top).append(r)
        if len(comp) <= 2:
            r.part = set(comp)
            remaining.difference_update(comp)
            continue
        r.center = _center(comp, adj, degree, remaining) if rule == "center" else keep(sorted(comp))
        # The core: the center and its closest neighbours that all resemble each other.
        core = [r.center]
        for n in sorted((n for n in adj[r.center] if n in remaining), key=lambda n, c=r.center: (-adj[c][n], n)):
            if len(core) >= core_size:
                break
            if all(linked(n, c) for c in core):
                core.append(n)
        r.second = core[1] if len(core) == 2 else None
        r.part = _members(core, adj, remaining, linked)
        remaining.difference_update(r.part)
        for m in r.part:
            for n in adj[m]:
                if n in remaining:
                    degree[n] -= 1
        todo.extend((c, r) for c in induced_components(comp - r.part, adj))
    return top


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


def induced_components(nodes: set[int], adj: dict[int, dict[int, float]]) -> list[set[int]]:
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

    def rank(m: int) -> tuple[float, int]:  # fsum: exact, whatever order the edges came in
        return (-math.fsum(s for n, s in adj[m].items() if n in remaining), m)

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
    traced: Callable[[Round], None] | None = None,
    traced_from: int = 0,
) -> Callable[[list[int]], list[list[int]]]:
    """The guard as cluster.clusters' ``split`` callable, over an index.

    index: pagetwin.index.sqlite.Index (features are read from it to verify pairs without an
    edge); algorithms: the configured Algorithm objects; edges: the verified edges as
    match.Link rows (a, b, kind, score);
    policy: settings.cluster.keep (used by rule "keep"). ``similar(a, b)`` passes when any
    algorithm that has features for both pages finds them related: ``Algorithm.related`` at
    ``related_share`` of its threshold (1.0: the pair must verify; 0.5: half the similarity an
    edge needs is enough to stay with the core). ``traced(top)``: given the top rounds (with
    their children: what ``IncrementalGuard`` holds) of each component of ``traced_from``
    members or more that it splits (rule "center", core of two only).
    """
    from pagetwin.cluster import ClusterPage, as_cluster_page, keep_key

    by_page = EdgesByPage([(a, b, score) for a, b, kind, score in edges if kind in kinds])
    similar = similar_over(index, algorithms, related_share)
    order = keep_key(policy)
    info: dict[int, ClusterPage] = {}

    def keep(pages: list[int]) -> int:
        if not info:
            info.update({p.pid: p for p in map(as_cluster_page, index.pages_for_clustering())})
        return min(pages, key=lambda pid: order(info[pid]))

    def split(members: list[int]) -> list[list[int]]:
        component_edges = by_page.of(members)
        if traced is None or len(members) < traced_from or (rule, core_size) != ("center", DEFAULT_CORE):
            return split_component(members, component_edges, similar, keep, rule, core_size)
        tops = _split(members, component_edges, similar, keep, rule, core_size, trace=True)
        for top in tops:
            traced(top)
        return _parts(tops)

    return split


class EdgesByPage:
    """The guard's edges (a, b, score), a < b, by page, for ``_adjacency`` (``of``): listed
    under their first page, and under both pages only when members not in ascending order
    ask for it (cluster.clusters sorts them: never, in a run)."""

    def __init__(self, edges: list[tuple[int, int, float]]) -> None:
        self.edges = edges
        self.by_first: dict[int, list[tuple[int, int, float]]] = {}
        # A run of edges of one first page at a time (a run's edges come in (a, b) order: one
        # run a page, not a dict call an edge)
        for first, run in groupby(edges, itemgetter(0)):
            listed = self.by_first.get(first)
            if listed is None:
                self.by_first[first] = list(run)
            else:
                listed.extend(run)
        self._by_page: dict[int, list[tuple[int, int, float]]] | None = None

    def of(self, members: list[int]) -> list[tuple[int, int, float]]:
        """The edges of these pages, each listed under both its pages in the edges' order
        (``both``) or, members ascending, under its first page only: ``_adjacency`` sees the
        same edges first, in the same order (a member meets each edge a < b at ``a`` first),
        and the second listing only set a score to itself again (half the guard's edges:
        ~0.1-0.2 of corpus-5000's 1 CPU-s of clustering)."""
        if all(x < y for x, y in zip(members, members[1:])):
            by_first = self.by_first
            return [e for m in members for e in by_first.get(m, ())]
        return self.both(members)

    def both(self, members: list[int]) -> list[tuple[int, int, float]]:
        """The edges of these pages, each listed under both its pages, in the edges' order."""
        if self._by_page is None:
            self._by_page = {}
            for e in self.edges:
                self._by_page.setdefault(e[0], []).append(e)
                self._by_page.setdefault(e[1], []).append(e)
        by_page = self._by_page
        return [e for m in members for e in by_page.get(m, ())]


def similar_over(index: Any, algorithms: list, related_share: float = 1.0, cache_size: int | None = None) -> Callable[[int, int], bool]:
    """``similar(a, b)`` over an index: any algorithm with features for both pages finds
    them related (``Algorithm.related`` at ``related_share`` of its threshold)."""
    from pagetwin.match import FeatureCache

    caches = [(alg, FeatureCache(index, alg) if cache_size is None else FeatureCache(index, alg, cache_size)) for alg in algorithms]

    def similar(a: int, b: int) -> bool:
        for alg, cache in caches:
            fa, fb = cache[a], cache[b]
            if fa is not None and fb is not None and alg.related(fa, fb, related_share):
                return True
        return False

    return similar


class IncrementalGuard:
    """The guard's rounds over components kept in memory, so that a page added to one is
    placed by replaying only the rounds it changes, with the parts a fresh split of the whole
    component would give (rule "center", core of two: the defaults app uses).

    A page p joining a component X (its neighbours there N) changes the counts of N and
    adds p's own, so the round's center can only move to a page of N or to p: if it stays,
    and the core's second page stays (the center's closest neighbour, unless p is closer),
    the round takes the same part, or that part and p when p resembles both core pages, is
    next to the part, and no neighbour of p outside the part resembles both (it would be
    reached through p). Then nothing left after the round changed, or only the one
    component of it that p joins, where the same is asked again. Whatever else happens (a
    center or core that moves, a neighbour reached through p, p joining two components of
    what was left), that round is split afresh from its members: the fallback is exact too.
    Cost of a page: its edges times the rounds on its way, unless a round falls back."""

    def __init__(self, similar: Callable[[int, int], bool], edges_of: Callable[[list[int]], dict[int, dict[int, float]]] | None = None) -> None:
        """``edges_of(pids)``: {pid: its edges (page -> score)} of pages of a component
        ``restore``d, read when a round first asks for them (the rounds of a component kept
        on disk are replayed without reading every edge of it)."""
        self.adj: dict[int, dict[int, float]] = _Edges(self, edges_of)
        self.linked = _Linked(self.adj, similar)
        self.root_of: dict[int, Round] = {}  # every page held -> its component's top round
        self.fallbacks = 0  # rounds split afresh by ``add``

    def load(self, members: Iterable[int], edges: Iterable[tuple[int, int, float]]) -> list[Round]:
        """Split the components of ``members`` (over their ``edges``) and keep them."""
        member_set = set(members)
        for m in member_set:
            self.forget(m)
        for m, near in _adjacency(member_set, edges).items():
            self.adj[m] = near
        tops = _rounds(member_set, self.adj, self.linked, None, "center", DEFAULT_CORE, trace=True)
        for top in tops:
            for m in top.members:
                self.root_of[m] = top
        return tops

    def dump(self, top: Round) -> list:
        """A held component's rounds as JSON-able lists (``restore`` reads them back)."""
        return dump(top)

    def restore(self, tree: list) -> Round:
        """Hold a component from ``dump``'s lists, its edges read as they are asked for
        (``edges_of``); its top round."""
        top = _undump(tree)
        for m in top.members:
            self.root_of[m] = top
        return top

    def forget(self, pid: int) -> None:
        """Drop the component holding ``pid`` (its edges changed in a way add cannot follow)."""
        top = self.root_of.get(pid)
        for m in top.members if top is not None else ():
            self.root_of.pop(m, None)
            self.adj.pop(m, None)

    def add(self, pid: int, near: dict[int, float]) -> Round:
        """Add page ``pid`` with its edges (``near``: page -> score) to pages held, all of one
        component (ValueError otherwise); its component's top round, updated."""
        tops = {id(self.root_of[n]): self.root_of[n] for n in near if n in self.root_of}
        if len(tops) != 1 or any(n not in self.root_of for n in near) or pid in self.adj:
            raise ValueError("add takes a new page whose edges all go to one component held")
        (top,) = tops.values()
        self.adj[pid] = dict(near)
        for n, score in near.items():
            if n in self.adj:  # a page not read yet (restored) has the edge in what edges_of reads
                self.adj[n][pid] = score
        self._step(top, pid)
        self.root_of[pid] = top
        return top

    def change(self, top: Round, changed: dict[tuple[int, int], float | None]) -> bool:
        """Follow edges of one held component that changed (evidence retracted from them):
        ``changed`` (a, b) -> the edge's score now, None when it is gone. Each round holding
        both pages is kept when its center, core and part stay what a fresh split gives, and
        split afresh from its members otherwise; False (nothing to hold: the caller splits
        the component again) when the change cuts the component in two."""
        for (a, b), score in changed.items():
            for x, y in ((a, b), (b, a)):
                if dict.__contains__(self.adj, x):  # a page not read yet is read as the index is now
                    if score is None:
                        self.adj[x].pop(y, None)
                    else:
                        self.adj[x][y] = score
        return self._recheck(top, changed)

    def _recheck(self, r: Round, changed: dict[tuple[int, int], float | None]) -> bool:
        """``change`` for round ``r`` (whose members were connected): whether they still are,
        ``r`` updated."""
        inside = {e: s for e, s in changed.items() if e[0] in r.members and e[1] in r.members}
        if not inside:
            return True
        gone = [e for e, s in inside.items() if s is None]
        for a, b in gone:
            r.degree[a] -= 1
            r.degree[b] -= 1
        if r.center is None:  # two pages or fewer: one part
            return self._resplit(r) if gone else True
        adj, c = self.adj, r.center
        if _center(r.members, adj, r.degree, r.members) != c:
            return self._resplit(r)
        ranked = sorted((n for n in adj[c] if n in r.members), key=lambda n: (-adj[c][n], n))
        if (ranked[0] if ranked else None) != r.second:  # a neighbour is linked: the core is the closest
            return self._resplit(r)
        if gone:
            core = [c] if r.second is None else [c, r.second]
            if _members(core, adj, r.members, self.linked) != r.part:
                return self._resplit(r)
        cut = {x for e in gone for x in e if x not in r.part}
        children, unsure = [], []
        for ch in r.children:
            if self._recheck(ch, inside):
                children.append(ch)
                if cut & ch.members:
                    unsure.append(ch)
                continue
            self.adj.prefetch(ch.members)
            for piece in induced_components(ch.members, adj):  # the rest's components now
                (fresh,) = _rounds(piece, adj, self.linked, None, "center", DEFAULT_CORE, trace=True)
                children.append(fresh)
                unsure.append(fresh)
        # The members stay connected while every child of the part is still next to it.
        if any(not any(n in r.part for m in ch.members for n in adj[m]) for ch in unsure):
            return False
        r.children = children
        return True

    def _resplit(self, r: Round) -> bool:
        """Split the round's members afresh; False when they are no longer connected."""
        self.adj.prefetch(r.members)
        fresh = _rounds(set(r.members), self.adj, self.linked, None, "center", DEFAULT_CORE, trace=True)
        if len(fresh) != 1:
            return False
        self.fallbacks += 1
        (f,) = fresh
        r.center, r.second, r.part, r.degree, r.children = f.center, f.second, f.part, f.degree, f.children
        return True

    def _step(self, r: Round, p: int) -> None:
        near = [n for n in self.adj[p] if n in r.members]
        r.members.add(p)
        for n in near:
            r.degree[n] += 1
        r.degree[p] = len(near)
        if r.center is None or not self._same_core(r, p, near):
            return self._afresh(r)
        c, second = r.center, r.second
        if any(n in r.part for n in near) and self.linked(p, c) and self.linked(p, second):
            if any(n not in r.part and self.linked(n, c) and self.linked(n, second) for n in near):
                return self._afresh(r)  # reached through p: the part grows beyond p
            r.part.add(p)
            return None
        # p is left for the next rounds: it joins the components of the rest it touches.
        touched = [ch for ch in r.children if any(n in ch.members for n in near)]
        if len(touched) == 1:
            return self._step(touched[0], p)
        if not touched:
            r.children.append(Round({p}, part={p}, degree={p: 0}))
            return None
        merged = Round(set().union(*(ch.members for ch in touched)) | {p})
        r.children = [ch for ch in r.children if ch not in touched] + [merged]
        return self._afresh(merged)

    def _same_core(self, r: Round, p: int, near: list[int]) -> bool:
        """Whether the round's center and second core page stay what they were with p added."""
        adj, c, degree = self.adj, r.center, r.degree
        most = max(degree[m] for m in (c, p, *near))
        if degree[c] < most:
            return False
        tied = [m for m in (c, p, *near) if degree[m] == most]
        if len(tied) > 1 and _center(set(tied), adj, degree, r.members) != c:
            return False
        return p not in adj[c] or (-adj[c][p], p) > (-adj[c][r.second], r.second)

    def _afresh(self, r: Round) -> None:
        """Split the round's members again from scratch (its children replaced)."""
        self.fallbacks += 1
        self.adj.prefetch(r.members)  # a restored component's edges: in a few queries, not one a page
        (fresh,) = _rounds(set(r.members), self.adj, self.linked, None, "center", DEFAULT_CORE, trace=True)
        r.center, r.second, r.part, r.degree, r.children = fresh.center, fresh.second, fresh.part, fresh.degree, fresh.children


def dump(top: Round) -> list:
    """Rounds (a top round and its children, as traced) as JSON-able lists (``_undump``)."""
    members = sorted(top.members)
    return [top.center, top.second, members, [top.degree[m] for m in members], sorted(top.part), [dump(c) for c in top.children]]


def _undump(tree: list) -> Round:
    center, second, members, degrees, part, children = tree
    return Round(set(members), center, second, set(part), dict(zip(members, degrees)), [_undump(c) for c in children])


class _Edges(dict):
    """IncrementalGuard's adjacency: a page of a restored component missing from it has its
    edges read (``edges_of``) when first asked for; any other missing page is a KeyError."""

    def __init__(self, guard: IncrementalGuard, edges_of: Callable[[list[int]], dict[int, dict[int, float]]] | None) -> None:
        super().__init__()
        self.guard, self.edges_of = guard, edges_of

    def __missing__(self, pid: int) -> dict[int, float]:
        if self.edges_of is None or pid not in self.guard.root_of:
            raise KeyError(pid)
        self[pid] = self.edges_of([pid])[pid]
        return self[pid]

    def prefetch(self, pids: Iterable[int]) -> None:
        """Read the edges of those of ``pids`` that ``__missing__`` would read, at once."""
        missing = sorted(p for p in pids if p not in self and p in self.guard.root_of)
        if missing and self.edges_of is not None:
            self.update(self.edges_of(missing))
