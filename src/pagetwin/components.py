"""Connected components by large-star / small-star rounds (Kiveris et al., "Connected Components
in MapReduce and Beyond", SoCC 2014): the kernel of the distributed link step
(runners.spark_link), here without Spark so that it can be checked against union-find.

A graph is a set of edges between integer nodes. Each round is two steps, each a map over the
nodes' neighbour lists, so a cluster computes them with one shuffle each (group the edges by
node, apply the step to each group):

- large-star (over both directions of every edge): node u links each of its *larger*
  neighbours to m(u), the smallest of u and its neighbours;
- small-star (every edge directed from its larger end to its smaller one): node u links itself
  and each of its smaller neighbours to m(u), the smallest of them.

Both keep the components and make labels smaller; a round that changes no edge ends it. Then
each component is a star: every node but the smallest is linked to the smallest only, which
names the component. The number of rounds grows with the log of the number of nodes (a chain of
n nodes takes about log2(n) rounds), and no node's neighbour list outgrows its component.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Edge = tuple[int, int]


def large_star(u: int, neighbours: Iterable[int]) -> Iterator[Edge]:
    """Large-star at ``u``: (v, m) for every neighbour v > u, m the smallest of u and its
    neighbours (``neighbours`` from both directions of u's edges)."""
    near = set(neighbours)
    m = min(near | {u})
    for v in near:
        if v > u:
            yield v, m


def small_star(u: int, smaller: Iterable[int]) -> Iterator[Edge]:
    """Small-star at ``u``: (v, m) for u and every neighbour v < u (``smaller``, u's edges
    directed to their smaller end), m the smallest of them; no self loop."""
    near = set(smaller) | {u}
    m = min(near)
    for v in near:
        if v != m:
            yield v, m


def directed(edge: Edge) -> Edge:
    """The edge from its larger end to its smaller one (what small-star groups by)."""
    a, b = edge
    return (a, b) if a > b else (b, a)


def _grouped(edges: Iterable[Edge]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for a, b in edges:
        out.setdefault(a, []).append(b)
    return out


def large_star_round(edges: set[Edge]) -> set[Edge]:
    both = [e for a, b in edges for e in ((a, b), (b, a))]
    return {e for u, near in _grouped(both).items() for e in large_star(u, near)}


def small_star_round(edges: set[Edge]) -> set[Edge]:
    return {e for u, near in _grouped(map(directed, edges)).items() for e in small_star(u, near)}


def normalised(edges: Iterable[Edge]) -> set[Edge]:
    """The graph's edges, each from its larger end to its smaller one, self loops dropped."""
    return {directed((a, b)) for a, b in edges if a != b}


def star_labels(edges: set[Edge]) -> dict[int, int]:
    """node -> its component's label, from the converged stars (v, m): m labels itself."""
    labels = {v: m for v, m in edges}
    for m in set(labels.values()):
        labels[m] = m
    return labels


def components(edges: Iterable[Edge], max_rounds: int = 200) -> tuple[dict[int, int], int]:
    """(node -> the smallest node of its component, rounds run), for every node on an edge.
    A node on no edge is a component of its own (not listed). RuntimeError past ``max_rounds``
    (rounds grow with log n: more than 200 means a bug, not a big graph)."""
    current = normalised(edges)
    for rounds in range(1, max_rounds + 1):
        after = small_star_round(large_star_round(current))
        if after == current:
            return star_labels(current), rounds
        current = after
    raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
