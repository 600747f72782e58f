"""components.py: large-star / small-star rounds give union-find's components (Hypothesis, on
random graphs, giant components and long chains), each labelled by its smallest node."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from pagetwin.cluster import UnionFind
from pagetwin.components import components, large_star, small_star, star_labels


def _union_find(edges: list[tuple[int, int]]) -> dict[int, int]:
    """node -> the smallest node of its component, by union-find (cluster.UnionFind)."""
    uf = UnionFind()
    for a, b in edges:
        uf.union(a, b)
    return {x: min(group) for group in uf.groups().values() for x in group}


def _check(edges: list[tuple[int, int]]) -> int:
    labels, rounds = components(edges)
    expected = {k: v for k, v in _union_find(edges).items() if any(k in e and e[0] != e[1] for e in edges)}
    assert labels == expected
    return rounds


edge_lists = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=120)


@given(edge_lists)
@hsettings(max_examples=300, deadline=None)
def test_components_equal_union_find_on_random_graphs(edges):
    _check(edges)


@given(st.integers(2, 400), st.randoms(use_true_random=False))
@hsettings(max_examples=60, deadline=None)
def test_long_chains_in_any_order(n, rnd):
    """A path through n nodes, numbered at random and its edges given in random order: one
    component labelled by its smallest node, in a number of rounds that grows with log n."""
    nodes = list(range(1000, 1000 + n))
    rnd.shuffle(nodes)
    edges = list(zip(nodes, nodes[1:]))
    rnd.shuffle(edges)
    rounds = _check(edges)
    assert rounds <= 2 * math.ceil(math.log2(n)) + 3


@given(st.integers(50, 600), st.integers(0, 5), st.randoms(use_true_random=False))
@hsettings(max_examples=40, deadline=None)
def test_a_giant_component_among_small_ones(n, extra, rnd):
    """One component holding most nodes (a random tree plus random chords) beside pairs and
    isolated edges' worth of small components."""
    giant = list(range(n))
    rnd.shuffle(giant)
    edges = [(giant[i], giant[rnd.randrange(i)]) for i in range(1, n)]
    edges += [(rnd.choice(giant), rnd.choice(giant)) for _ in range(extra * 10)]
    edges += [(10_000 + 2 * i, 10_001 + 2 * i) for i in range(30)]
    rnd.shuffle(edges)
    labels, _ = components(edges)
    assert set(labels[x] for x in giant) == {0}
    _check(edges)


def test_star_steps_by_hand():
    assert sorted(large_star(5, [2, 7, 9])) == [(7, 2), (9, 2)]
    assert sorted(large_star(5, [7, 9])) == [(7, 5), (9, 5)]
    assert sorted(small_star(5, [3, 4])) == [(4, 3), (5, 3)]
    assert star_labels({(4, 1), (6, 1), (9, 8)}) == {4: 1, 6: 1, 1: 1, 9: 8, 8: 8}


def test_self_loops_and_duplicates_are_no_edges():
    labels, rounds = components([(3, 3), (1, 2), (2, 1), (1, 2)])
    assert labels == {1: 1, 2: 1} and rounds >= 1
    assert components([(7, 7)]) == ({}, 1)


def test_a_bound_on_rounds_is_an_error_not_a_wrong_answer():
    edges = [(i, i + 1) for i in range(300)]
    random.Random(1).shuffle(edges)
    with pytest.raises(RuntimeError, match="did not converge"):
        components(edges, max_rounds=1)
