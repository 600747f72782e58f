"""The anti-chaining guard: chains of verified edges do not join unrelated pages."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.guard import split_component


def sets_similar(sets: dict[int, set[int]], threshold: float = 0.5):
    def similar(a: int, b: int) -> bool:
        return len(sets[a] & sets[b]) / len(sets[a] | sets[b]) >= threshold

    return similar


def verified_edges(sets, similar, pairs):
    return [(a, b, 1.0) for a, b in pairs if similar(a, b)]


@pytest.mark.parametrize("rule", ["center", "keep"])
def test_chain_does_not_merge_unrelated_ends(rule):
    # A = {0..9}, B = {5..14}, C = {10..19}: A~B and B~C (Jaccard 1/3 >= 0.3), A and C disjoint.
    sets = {1: set(range(0, 10)), 2: set(range(5, 15)), 3: set(range(10, 20))}
    similar = sets_similar(sets, 0.3)
    edges = verified_edges(sets, similar, [(1, 2), (2, 3), (1, 3)])
    assert (1, 3, 1.0) not in edges and len(edges) == 2
    parts = split_component([1, 2, 3], edges, similar, keep=lambda p: min(p), rule=rule)
    assert sorted(x for p in parts for x in p) == [1, 2, 3]
    assert not any(1 in p and 3 in p for p in parts)


def test_clique_stays_one_cluster():
    sets = {i: set(range(0, 20)) | {100 + i} for i in range(6)}
    similar = sets_similar(sets, 0.8)
    edges = [(a, b, 0.9) for a in range(6) for b in range(a + 1, 6)]
    assert split_component(list(range(6)), edges, similar) == [list(range(6))]


def test_missing_edges_are_verified_once_each():
    # centre 1 has edges to all; the pairs without an edge are verified, each at most once
    asked = []

    def similar(a, b):
        asked.append((a, b))
        return True

    edges = [(0, 1, 1.0), (1, 2, 1.0), (0, 3, 1.0), (1, 3, 1.0)]
    parts = split_component([0, 1, 2, 3], edges, similar, core_size=4)
    assert parts == [[0, 1, 2, 3]]
    assert sorted(asked) == [(0, 2), (2, 3)]


def test_core_size_one_is_a_star_around_the_center():
    # a chain: with core_size=1 the center takes both ends; with 2 it does not
    edges = [(1, 2, 0.9), (2, 3, 0.8)]
    never = lambda a, b: False  # noqa: E731
    assert split_component([1, 2, 3], edges, never, core_size=1) == [[1, 2, 3]]
    assert split_component([1, 2, 3], edges, never, core_size=2) == [[1, 2], [3]]


def test_long_path_is_cut_into_short_pieces():
    n = 30
    edges = [(i, i + 1, 1.0) for i in range(n - 1)]
    parts = split_component(list(range(n)), edges, lambda a, b: abs(a - b) <= 1)
    assert sorted(x for p in parts for x in p) == list(range(n))
    assert all(max(p) - min(p) <= 2 for p in parts)


def test_keep_rule_centres_on_kept_page():
    edges = [(0, 1, 1.0), (1, 2, 1.0), (0, 2, 1.0), (2, 3, 1.0)]
    parts = split_component([0, 1, 2, 3], edges, lambda a, b: False, keep=lambda p: max(p), rule="keep")
    assert [2, 3] in parts and [0, 1] in parts


def test_unknown_rule_is_rejected():
    with pytest.raises(ValueError):
        split_component([1, 2, 3], [], lambda a, b: True, rule="nope")


@given(st.integers(3, 25), st.integers(0, 2**32), st.sampled_from(["center", "keep"]))
@settings(max_examples=60, deadline=None)
def test_every_member_is_verified_similar_to_its_center(n, seed, rule):
    rng = random.Random(seed)
    sets = {i: {rng.randrange(40) for _ in range(12)} for i in range(n)}
    similar = sets_similar(sets, 0.25)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 0.7]
    edges = verified_edges(sets, similar, pairs)
    parts = split_component(list(range(n)), edges, similar, keep=min, rule=rule, core_size=2)
    assert sorted(x for p in parts for x in p) == list(range(n))  # a partition
    edge_set = {(a, b) for a, b, _ in edges} | {(b, a) for a, b, _ in edges}
    for part in parts:
        if len(part) <= 2:
            assert len(part) == 1 or (part[0], part[1]) in edge_set
            continue
        # a core of two pages (center and its closest match) resembles every member
        edge_or_similar = lambda a, b: (a, b) in edge_set or similar(a, b)  # noqa: E731
        assert any(
            all(m in (c1, c2) or (edge_or_similar(c1, m) and edge_or_similar(c2, m)) for m in part)
            for c1 in part
            for c2 in part
            if c1 != c2 and edge_or_similar(c1, c2)
        )


def test_members_reached_through_members_join_when_they_resemble_the_core():
    # Reposts: pages 0-4 resemble each other but only some pairs have an edge. The core is
    # {2, 1} (2 has the most edges); 4 is two edges away from it and joins only because the
    # cluster grows breadth first. 5 hangs off 4 and resembles none of them.
    edges = [(0, 1, 0.9), (1, 2, 0.6), (2, 3, 0.5), (3, 4, 0.5), (4, 5, 0.4), (0, 2, 0.5)]

    def similar(a, b):
        return a < 5 and b < 5

    parts = split_component(list(range(6)), edges, similar)
    assert [0, 1, 2, 3, 4] in parts and [5] in parts


def test_minhash_related_is_a_share_of_the_threshold():
    from pagetwin.config import MinHashSettings
    from pagetwin.fingerprints.minhash import MinHash
    from pagetwin.model import Doc

    algo = MinHash(MinHashSettings(threshold=0.6, shingle=1, multiset=False))
    words = [f"w{i}" for i in range(200)]
    a = algo.features(Doc("a", "", "", None, "", tokens=words[:100]))
    b = algo.features(Doc("b", "", "", None, "", tokens=words[50:150]))  # Jaccard 1/3
    assert not algo.verify(a, b).passed
    assert algo.related(a, b, 0.5) and not algo.related(a, b, 1.0)


def _reference_split(members, edges, similar, keep, rule, core_size):
    """The guard as first written (every component and every degree counted afresh each
    round, neighbours visited in score order): split_component must give its parts."""
    member_set = set(members)
    adj = {m: {} for m in member_set}
    for a, b, score in edges:
        if a != b and a in member_set and b in member_set:
            adj[a][b] = max(score, adj[a].get(b, score))
            adj[b][a] = adj[a][b]

    def linked(x, y):
        return y in adj[x] or similar(min(x, y), max(x, y))

    def components(nodes):
        seen, out = set(), []
        for start in sorted(nodes):
            if start not in seen:
                comp, stack = {start}, [start]
                seen.add(start)
                while stack:
                    for y in adj[stack.pop()]:
                        if y in nodes and y not in seen:
                            seen.add(y), comp.add(y), stack.append(y)
                out.append(comp)
        return out

    def rank(m, remaining):
        near = [s for n, s in adj[m].items() if n in remaining]
        return (-len(near), -math.fsum(near), m)

    remaining, parts = set(member_set), []
    while remaining:
        for comp in components(remaining):
            if len(comp) <= 2:
                parts.append(sorted(comp))
                remaining -= comp
                continue
            center = min(comp, key=lambda m: rank(m, remaining)) if rule == "center" else keep(sorted(comp))
            core = [center]
            for n in sorted((n for n in adj[center] if n in remaining), key=lambda n: (-adj[center][n], n)):
                if len(core) < core_size and all(linked(n, c) for c in core):
                    core.append(n)
            part, frontier = set(core), list(core)
            while frontier:
                nxt = []
                for c in frontier:
                    for m in sorted(adj[c], key=lambda n, c=c: (-adj[c][n], n)):
                        if m in remaining and m not in part and all(linked(m, x) for x in core):
                            part.add(m)
                            nxt.append(m)
                frontier = nxt
            parts.append(sorted(part))
            remaining -= part
    return sorted(parts, key=lambda p: p[0])


@given(st.integers(3, 40), st.integers(0, 2**32), st.sampled_from(["center", "keep"]), st.integers(1, 4), st.booleans())
@settings(max_examples=150, deadline=None)
def test_the_parts_are_those_of_the_guard_counted_afresh_each_round(n, seed, rule, core_size, ties):
    # Sparse and dense graphs, scores with ties (the summed score decides) or without.
    rng = random.Random(seed)
    sets = {i: {rng.randrange(30) for _ in range(8)} for i in range(n)}
    similar = sets_similar(sets, rng.choice([0.2, 0.35, 0.5]))
    density = rng.choice([0.1, 0.3, 0.8])
    edges = [(a, b, rng.choice([0.5, 0.75, 1.0]) if ties else rng.random())
             for a in range(n) for b in range(a + 1, n) if rng.random() < density]  # fmt: skip
    keep = max if seed % 2 else min
    got = split_component(list(range(n)), edges, similar, keep=keep, rule=rule, core_size=core_size)
    assert got == _reference_split(list(range(n)), edges, similar, keep, rule, core_size)


@given(st.integers(3, 45), st.integers(0, 2**32), st.booleans())
@settings(max_examples=120, deadline=None)
def test_pages_added_one_at_a_time_are_split_as_a_fresh_split_of_all(n, seed, ties):
    """IncrementalGuard: after every page added, the parts of what it holds are those of
    split_component over all the pages so far (the app adds a page to the one component its
    edges reach; a page reaching none or several is loaded afresh with them)."""
    from pagetwin.guard import IncrementalGuard

    rng = random.Random(seed)
    sets = {i: {rng.randrange(25) for _ in range(8)} for i in range(n)}
    similar = sets_similar(sets, rng.choice([0.2, 0.35, 0.5]))
    density = rng.choice([0.15, 0.4, 0.9])
    scores = {(a, b): (rng.choice([0.5, 1.0]) if ties else rng.random())
              for a in range(n) for b in range(a + 1, n) if rng.random() < density}  # fmt: skip
    guard = IncrementalGuard(similar)
    held: list[int] = []
    for p in rng.sample(range(n), n):
        near = {q: s for (a, b), s in scores.items() for q in (a, b) if p in (a, b) and q != p and q in held}
        tops = {id(guard.root_of[q]) for q in near}
        if len(tops) == 1:
            guard.add(p, near)
        else:  # none or several components: loaded afresh with their pages
            members = {p} | {m for q in near for m in guard.root_of[q].members}
            guard.load(members, [(a, b, s) for (a, b), s in scores.items() if a in members and b in members])
        held.append(p)
        got = sorted(sorted(part) for top in {id(t): t for t in guard.root_of.values()}.values() for part in top.parts())
        edges = [(a, b, s) for (a, b), s in scores.items() if a in held and b in held]
        assert got == split_component(sorted(held), edges, similar)


def test_a_page_reached_through_the_added_one_joins_the_part_too():
    """Center 0, core {0, 1}: page 3 resembles both but hangs off 4 (which does not), so it
    was left out; page 5, next to the part and to 3, brings 3 in: a fresh split's result."""
    from pagetwin.guard import IncrementalGuard

    alike = {0, 1, 2, 3, 5, 6, 7}

    def similar(a, b):
        return a in alike and b in alike

    edges = [(0, 1, 1.0), (0, 2, 0.9), (0, 6, 0.9), (0, 7, 0.9), (1, 2, 0.8), (2, 4, 0.5), (4, 3, 0.5)]
    guard = IncrementalGuard(similar)
    (top,) = guard.load([0, 1, 2, 3, 4, 6, 7], edges)
    assert sorted(map(sorted, top.parts())) == [[0, 1, 2, 6, 7], [3, 4]]
    guard.add(5, {2: 0.5, 3: 0.5})
    expected = split_component([0, 1, 2, 3, 4, 5, 6, 7], edges + [(2, 5, 0.5), (3, 5, 0.5)], similar)
    assert sorted(map(sorted, top.parts())) == expected == [[0, 1, 2, 3, 5, 6, 7], [4]]


@given(
    st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.sampled_from([0.5, 0.75, 1.0])), max_size=40),
    st.sets(st.integers(0, 12), min_size=1),
    st.booleans(),
)
def test_component_edges_give_the_adjacency_of_every_listing(pairs, members, ascending):
    """Each edge taken once from its first page (members ascending) builds the adjacency,
    neighbours in the same order, that listing it under both pages builds; unsorted members
    take both listings."""
    from pagetwin.guard import EdgesByPage, _adjacency

    edges = [(min(a, b), max(a, b), s) for a, b, s in pairs]
    by_page: dict = {}
    for e in edges:
        by_page.setdefault(e[0], []).append(e)
        by_page.setdefault(e[1], []).append(e)
    order = sorted(members) if ascending else sorted(members, reverse=True)
    both = [e for m in order for e in by_page.get(m, ())]
    listed = EdgesByPage(edges)
    assert listed.both(order) == both
    got = _adjacency(set(order), listed.of(order))
    want = _adjacency(set(order), both)
    assert [(m, list(n.items())) for m, n in got.items()] == [(m, list(n.items())) for m, n in want.items()]


def _adjacency_reference(member_set, edges):
    """guard._adjacency as first written (max() of the scores of an edge listed twice)."""
    adj = {m: {} for m in member_set}
    for a, b, score in edges:
        if a != b and a in member_set and b in member_set:
            adj[a][b] = max(score, adj[a].get(b, score))
            adj[b][a] = adj[a][b]
    return adj


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8), st.sampled_from([0.5, 1.0, 0.0, -0.0, float("nan"), 1, 0.75]))),
       st.sets(st.integers(0, 8)))
def test_adjacency_is_the_reference_adjacency(edges, members):
    """The same neighbours in the same order with the same scores, of the same class and sign
    (ties, zeros of both signs, NaN: max()'s choice of the first of equals)."""
    from pagetwin.guard import _adjacency

    def shown(adj):
        return [(m, [(n, repr(s)) for n, s in near.items()]) for m, near in adj.items()]

    assert shown(_adjacency(members, edges)) == shown(_adjacency_reference(members, edges))
