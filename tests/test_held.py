"""The clusters a writer holds (held.Held): pages added in batches, placed without reading
their components again where they can be, give the clusters of one run over all the pages."""

from __future__ import annotations

import random

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.app import link_index
from pagetwin.config import Settings
from pagetwin.held import Held
from pagetwin.index.sqlite import Index
from pagetwin.model import Evidence
from tests.fixtures.records import page_row


class _Pairs:
    """A stand-in algorithm: a page's feature is its number; a pair verifies (with its own
    score) when it is in ``scores``, and is related when both pages are in ``alike``."""

    name, keys_are_proof = "near", False

    def __init__(self, scores, alike):
        self.scores, self.alike = scores, alike

    def decode(self, data):
        return int.from_bytes(data, "big")

    def verify(self, a, b):
        score = self.scores.get((min(a, b), max(a, b)))
        return Evidence(self.name, score or 0.0, score is not None)

    def related(self, a, b, share):
        return a in self.alike and b in self.alike


def _add(index, first, last, keys):
    for n in range(first, last + 1):
        pid = index.add_page(page_row(n, text_len=n % 7))
        index.add_fingerprints(pid, {"near": n.to_bytes(2, "big")}, {"near": keys[n]})


def _clusters(index):
    groups: dict[str, set[int]] = {}
    for pid, cluster, _ in index.db.execute("SELECT pid, cluster, keep FROM clusters"):
        groups.setdefault(cluster, set()).add(pid)
    kept = {pid for (pid,) in index.db.execute("SELECT pid FROM clusters WHERE keep=1")}
    return sorted(sorted(g) for g in groups.values()), kept


def _random_graph(rng: random.Random, n: int, buckets: int, densities: list[float]) -> tuple[dict, list]:
    """Pages 1..n with candidate keys (one of ``buckets``, some also a shared key 9) and one
    algorithm whose verdicts are random scores over a random share of the pairs."""
    keys = {p: [rng.randrange(buckets)] + ([9] if rng.random() < 0.3 else []) for p in range(1, n + 1)}
    density = rng.choice(densities)
    scores = {(a, b): rng.choice([0.5, 0.8, 1.0]) for a in range(1, n + 1) for b in range(a + 1, n + 1) if rng.random() < density}
    return keys, [_Pairs(scores, {p for p in range(1, n + 1) if rng.random() < 0.6})]


def _one_run(d, n: int, keys: dict, algorithms: list, config: Settings) -> Index:
    """Every page added and linked at once: the clusters the incremental runs must give."""
    one = Index(d / "one.sqlite", config.to_dict())
    _add(one, 1, n, keys)
    link_index(one, algorithms, config)
    return one


def _linked_in_batches(d, n: int, keys: dict, algorithms: list, config: Settings, batches: list) -> Index:
    """Pages 1..n added and linked batch by batch (the rest in a last batch), each batch placed
    by the writer's held clusters: ("warm") the same writer goes on, ("saved") a new writer
    starts from what the last one saved, ("unsaved") from an older save (stale stamps),
    ("dedup") the batch linked by a dedup run (every cluster made again, the rounds of its
    larger components stored), then a new writer starts from them."""
    return _link_batches(Index(d / "inc.sqlite", config.to_dict()), n, keys, algorithms, config, batches)


def _link_batches(inc: Index, n: int, keys: dict, algorithms: list, config: Settings, batches: list, add=None, done: int = 0) -> Index:
    """_linked_in_batches' batches, from page ``done`` + 1 of ``inc`` on, each added by ``add``
    (``_add`` unless given)."""
    add = add or _add
    held = Held.over(inc, algorithms, config)
    for size, how in batches + [(n, "warm")]:
        if done >= n:
            break
        if how == "saved":
            held.save(inc)
        if how != "warm":
            held = Held.over(inc, algorithms, config)
        last = min(n, done + size)
        add(inc, done + 1, last, keys)
        if how == "dedup":
            link_index(inc, algorithms, config, done or None)
        else:
            link_index(inc, algorithms, config, done or None, recluster_all=False, held=held)
        done = last
    return inc


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.integers(4, 40), st.integers(0, 2**32), st.lists(st.integers(1, 6), min_size=1, max_size=12))
def test_batches_placed_by_what_is_held_give_one_runs_clusters(tmp_path_factory, n, seed, batches):
    keys, algorithms = _random_graph(random.Random(seed), n, 4, [0.3, 0.7, 1.0])
    config = Settings()
    d = tmp_path_factory.mktemp("held")
    one = _one_run(d, n, keys, algorithms, config)
    inc = _linked_in_batches(d, n, keys, algorithms, config, [(size, "warm") for size in batches])
    assert _clusters(inc) == _clusters(one)
    one.close(), inc.close()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.integers(4, 30), st.integers(0, 2**32), st.lists(st.tuples(st.integers(1, 5), st.sampled_from(["warm", "saved", "unsaved", "dedup"])), min_size=1, max_size=10))
def test_writers_reopened_between_batches_give_one_runs_clusters(tmp_path_factory, monkeypatch, n, seed, batches):
    """Between batches the writer goes on ("warm"), or a new one starts cold from what the last
    saved ("saved": the stored rounds of components still fresh), or from a save older than
    the last batch ("unsaved": not fresh), or from what a dedup run over the batch stored
    (its components of 3 pages or more here): whichever, the clusters are those of one run."""
    monkeypatch.setattr("pagetwin.held.STORED_FROM", 3)
    keys, algorithms = _random_graph(random.Random(seed), n, 3, [0.4, 0.8, 1.0])
    config = Settings()
    d = tmp_path_factory.mktemp("reopen")
    one = _one_run(d, n, keys, algorithms, config)
    inc = _linked_in_batches(d, n, keys, algorithms, config, batches)
    assert _clusters(inc) == _clusters(one)
    one.close(), inc.close()


def _near_copies(paragraphs: int, copies: int) -> list[dict]:
    """One story on ``copies`` sites, each copy with one of its paragraphs edited."""
    from tests.fixtures.news import article, page

    story = article(paragraphs)
    return [{"id": f"r{i}", "url": f"https://site{i}.example/story",
             "html": page("Harbour bridge reopens", [p.replace(".", f" ({i}).", 1) if j == i % len(story) else p
                                                      for j, p in enumerate(story)])} for i in range(copies)]  # fmt: skip


def clusters(index) -> dict:
    """An API index's clusters: member ids -> kept id."""
    return {frozenset(m.id for m in c.members): c.kept.id for c in index.clusters()}


def test_a_cold_writer_places_pages_from_the_stored_rounds(tmp_path):
    """Through pagetwin.Index on a file: near copies added one at a time (each add stores the
    rounds it changed), reopened: the next copies are placed from the stored rounds (the
    component neither read whole nor split again), with the clusters of one batch and of a
    writer that stayed open; a writer dropped without closing (a kill) loses none of them;
    rounds older than the last adds (put back by hand) are not fresh: the component is split
    again, and the clusters are still those of one batch."""
    import sqlite3

    from pagetwin.api import Index as Api

    pages = _near_copies(4, 10)

    with Api.memory() as one:
        one.add(pages)
        expected = clusters(one)
    with Api.memory() as one:
        one.add(pages[:8])
        expected_8 = clusters(one)
    with Api.memory() as warm:
        for p in pages:
            warm.add(p)
        assert clusters(warm) == expected
    with Api.open(tmp_path / "i.sqlite") as index:
        for p in pages[:6]:
            index.add(p)
    db = sqlite3.connect(tmp_path / "i.sqlite")
    older = db.execute("SELECT * FROM held").fetchall(), db.execute("SELECT * FROM held_pages").fetchall()
    with Api.open(tmp_path / "i.sqlite") as index:
        index.add(pages[6])
        assert index._held.restored == 1 and index._held.placed == 1
        index.add(pages[7])
        assert index._held.restored == 1 and index._held.placed == 2
        assert clusters(index) == expected_8
        index._held = None  # as if killed after the add returned: its rounds are stored with it
    with Api.open(tmp_path / "i.sqlite") as index:
        index.add(pages[8])
        assert index._held.restored == 1 and index._held.placed == 1
    for table, rows in zip(("held", "held_pages"), older):  # the rounds as they were before pages 6-8
        db.execute(f"DELETE FROM {table}")
        db.executemany(f"INSERT INTO {table} VALUES ({','.join('?' * len(rows[0]))})", rows)
    db.commit(), db.close()
    with Api.open(tmp_path / "i.sqlite") as index:
        index.add(pages[9])
        assert index._held.restored == 0 and index._held.placed == 0  # pages 6-8 joined it since
        assert clusters(index) == expected
    assert max(len(c) for c in expected) >= 7


def test_a_page_joining_a_held_cluster_is_placed_without_reading_it_again(tmp_path):
    """Ten pages all alike in one bucket, then one more: placed from what is held (the
    component is not walked in the index again), in the cluster one run makes."""
    n = 11
    scores = {(a, b): 1.0 for a in range(1, n + 1) for b in range(a + 1, n + 1)}
    algorithms = [_Pairs(scores, set(range(1, n + 1)))]
    config = Settings()
    keys = {p: [0] for p in range(1, n + 1)}
    inc = Index(tmp_path / "inc.sqlite", config.to_dict())
    held = Held.over(inc, algorithms, config)
    _add(inc, 1, 10, keys)
    link_index(inc, algorithms, config, None, recluster_all=False)
    _add(inc, 11, 11, keys)
    link_index(inc, algorithms, config, 10, recluster_all=False, held=held)  # not held yet: walked, then held
    assert held.placed == 0 and held.guard.root_of[1].members == set(range(1, 12))
    _add(inc, 12, 12, {12: [0]})
    algorithms[0].scores.update({(a, 12): 1.0 for a in range(1, 12)})
    algorithms[0].alike.add(12)
    walked = []
    scored_edges = inc.scored_edges
    inc.scored_edges = lambda pids, kinds: walked.append(sorted(pids)) or scored_edges(pids, kinds)
    link_index(inc, algorithms, config, 11, recluster_all=False, held=held)
    assert held.placed == 1 and walked == [[12]]  # the new page's edges only
    assert _clusters(inc)[0] == [list(range(1, 13))]


def test_an_open_index_places_near_copies_from_what_it_holds():
    """Through pagetwin.Index: reposts of one story added one at a time are placed from the
    held clusters after the first reaches them, with the clusters of one batch."""
    from pagetwin.api import Index
    from tests.fixtures.news import article, page

    pages = _near_copies(3, 8)
    pages += [{"id": f"o{i}", "url": f"https://other.example/{i}", "html": page(f"Story {i}", article(50 + i))} for i in range(3)]

    with Index.memory() as one:
        one.add(pages)
        expected = clusters(one)
    with Index.memory() as index:
        for p in pages:
            index.add(p)
        assert clusters(index) == expected
        assert max(len(c) for c in expected) >= 6 and index._held.placed >= 5


def test_a_retraction_drops_the_stored_rounds_of_the_pages_it_touches(tmp_path, monkeypatch):
    """A dedup run stores the rounds of the component {1, 2, 3, 16, 17, 18} (one bucket; the
    far pair (1, 18) joins the two triples); three pages more push the bucket past
    max_bucket, the edge (1, 18) is retracted: its stored rounds are dropped with it, and a
    new writer makes one run's clusters (two triples), not the stored ones."""
    from tests.test_app_incremental import _Allowed, _bucket_index

    monkeypatch.setattr("pagetwin.held.STORED_FROM", 3)
    config = Settings()
    config.match.max_bucket = 20
    algorithms = [_Allowed({(1, 2), (1, 3), (2, 3), (16, 17), (16, 18), (17, 18), (1, 18)})]
    inc = _bucket_index(tmp_path / "inc.sqlite", 18, config)
    link_index(inc, algorithms, config)
    assert set(inc.held_components([1, 18])) == {1}
    for n in range(19, 22):
        inc.add_page(page_row(n))
        inc.add_fingerprints(n, {"near": bytes([n])}, {"near": [0]})
    held = Held.over(inc, algorithms, config)
    link_index(inc, algorithms, config, first_new=18, recluster_all=False, held=held)
    assert inc.edge(1, 18) is None and inc.held_components([1, 18]) == {}
    assert [g for g in _clusters(inc)[0] if len(g) > 1] == [[1, 2, 3], [16, 17, 18]]


def test_a_writer_starts_from_the_rounds_a_run_over_every_page_stored(tmp_path, monkeypatch):
    """The first add to an empty index links every page as a dedup run does (every cluster
    made): it stores the rounds of its larger components (here of 3 pages or more), and the
    next writer places a new copy from them, with the clusters of one batch."""
    from pagetwin.api import Index as Api

    monkeypatch.setattr("pagetwin.held.STORED_FROM", 3)
    pages = _near_copies(4, 9)
    with Api.memory() as one:
        one.add(pages)
        expected = clusters(one)
    with Api.open(tmp_path / "i.sqlite") as index:
        index.add(pages[:8])
        assert index._held.restored == 0 and index._held.placed == 0
    with Api.open(tmp_path / "i.sqlite") as index:
        index.add(pages[8])
        assert index._held.restored == 1 and index._held.placed == 1
        assert clusters(index) == expected


def test_revisit_records_and_their_originals_are_placed_without_a_recluster():
    """WARC revisit records added one at a time, before their original (an orphan until it
    comes), after it, or in the same add: each add is placed from what the writer holds (no
    page left to recluster), and the clusters are those of one add of all the pages: a revisit
    follows its original."""
    from pagetwin.api import Index as Api
    from pagetwin.api import as_page
    from pagetwin.model import Page

    config = Settings()
    copies = [as_page(p, 0, config) for p in _near_copies(4, 6)]
    revisit = {i: Page(id=f"rv{i}", url=copies[i].url, kind="revisit", refers_to_digest=copies[i].payload_digest) for i in (0, 3, 5)}
    order = [revisit[3], copies[0], copies[1], revisit[0], copies[2], copies[3], copies[4], [copies[5], revisit[5]]]
    with Api.memory() as one:
        one.add([p for step in order for p in (step if isinstance(step, list) else [step])])
        expected = clusters(one)
    with Api.memory() as index:
        for n, step in enumerate(order):
            placed = index._held.placed if index._held is not None else 0
            index.add(step)
            if n:  # the first add links its page as a run over all does (nothing to place it in)
                assert index._held.placed - placed == (len(step) if isinstance(step, list) else 1), n
        assert clusters(index) == expected
    followed = {m: kept for m, kept in expected.items() if {"rv0", "rv3", "rv5"} & m}
    assert followed and all({"r0", "r3", "r5"} <= m for m in followed)


class _Scored:
    """A stand-in algorithm over its own feature: the pairs in ``scores`` verify with theirs."""

    keys_are_proof = False

    def __init__(self, name, scores):
        self.name, self.scores = name, scores

    def decode(self, data):
        return data[0]

    def verify(self, a, b):
        score = self.scores.get((min(a, b), max(a, b)))
        return Evidence(self.name, score or 0.0, score is not None)

    def related(self, a, b, share):
        return True


@pytest.mark.parametrize("other_score, kept", [(1.0, True), (0.8, False)])
def test_a_retraction_that_leaves_an_edges_score_reclusters_nothing(tmp_path, monkeypatch, other_score, kept):
    """As above, but a second algorithm verifies (1, 18) too, from a bucket of their own. The
    retraction takes the first one's evidence off the edge and the edge stays: with the same
    score (1.0) clustering cannot change, so the stored rounds are kept; with a lower one
    (0.8) the guard's ranking may, so the stored rounds are dropped, and the writer follows
    the change in the rounds it restored before (Held.change). Neither reads and splits the
    component again (no walk of it). Either way: one run's clusters and edges."""
    import pagetwin.app as app

    monkeypatch.setattr("pagetwin.held.STORED_FROM", 3)
    config = Settings()
    config.match.max_bucket = 20
    group = {(1, 2), (1, 3), (2, 3), (16, 17), (16, 18), (17, 18), (1, 18)}
    algorithms = [_Scored("near", dict.fromkeys(group, 1.0)), _Scored("pair", {(1, 18): other_score})]

    def build(path, pages):
        index = Index(path, config.to_dict())
        index.begin()
        for n in range(1, pages + 1):
            pid = index.add_page(page_row(n))
            # "near": one bucket of every page; "pair": 1 and 18 alone share a key.
            index.add_fingerprints(pid, {"near": bytes([n]), "pair": bytes([n])}, {"near": [0], "pair": [1 if n in (1, 18) else 100 + n]})
        return index

    inc = build(tmp_path / "inc.sqlite", 18)
    link_index(inc, algorithms, config)
    assert set(inc.held_components([1, 18])) == {1}
    for n in range(19, 22):
        inc.add_page(page_row(n))
        inc.add_fingerprints(n, {"near": bytes([n]), "pair": bytes([n])}, {"near": [0], "pair": [100 + n]})
    walked: list[int] = []
    components = app._components
    monkeypatch.setattr(app, "_components", lambda index, start, *a: walked.extend(start) or components(index, start, *a))
    held = Held.over(inc, algorithms, config)
    link_index(inc, algorithms, config, first_new=18, recluster_all=False, held=held)
    assert [e.algorithm for e in _evidence(inc, 1, 18)] == ["pair"]  # "near"'s retracted, "pair"'s left
    assert (set(inc.held_components([1, 18])) == {1}) == kept
    assert not walked and (kept or held.guard.root_of[1] is held.guard.root_of[18])

    one = build(tmp_path / "one.sqlite", 21)
    link_index(one, algorithms, config)
    assert _clusters(inc) == _clusters(one)
    assert [g for g in _clusters(one)[0] if len(g) > 1] == [[1, 2, 3, 16, 17, 18]]
    assert sorted(inc.db.execute("SELECT a, b, kind, evidence, score FROM edges")) == sorted(one.db.execute("SELECT a, b, kind, evidence, score FROM edges"))


def _evidence(index, a, b):
    from pagetwin.match import evidence_from_json

    return evidence_from_json(index.edge(a, b)[3])


def _add_two(index, first, last, keys):
    """Pages with the features and keys of two algorithms ("near", "pair": keys[name][n])."""
    for n in range(first, last + 1):
        pid = index.add_page(page_row(n, text_len=n % 7))
        index.add_fingerprints(pid, {"near": bytes([n]), "pair": bytes([n])}, {"near": keys["near"][n], "pair": keys["pair"][n]})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.integers(20, 44), st.integers(18, 24), st.integers(0, 2**32),
       st.lists(st.tuples(st.integers(1, 6), st.sampled_from(["warm", "warm", "saved", "unsaved"])), min_size=1, max_size=8))  # fmt: skip
def test_retractions_followed_in_held_rounds_give_one_runs_clusters(tmp_path_factory, monkeypatch, n, max_bucket, seed, batches):
    """Pages of one "near" bucket, added in batches after a first one of 18 or more: the
    batches push it past max_bucket, and the "near" evidence of its older pairs further apart
    than the window is retracted. A second algorithm ("pair", its own small buckets) verifies
    some of those pairs too, with scores of its own, so retracted edges are deleted, keep
    their score, or change it; the writer follows the changes in the rounds it holds or
    restores (Held.change), and splits again what a change cuts in two. Whatever the
    batches and writers: one run's clusters and kept pages."""
    monkeypatch.setattr("pagetwin.held.STORED_FROM", 3)
    rng = random.Random(seed)
    keys = {"near": {p: [0] for p in range(1, n + 1)}, "pair": {p: [rng.randrange(4)] for p in range(1, n + 1)}}
    # Pages near in crawl order pair often; far apart (the pairs a retraction takes), now and then.
    local, far = rng.choice([0.3, 0.6, 1.0]), rng.choice([0.03, 0.1, 0.3])
    near = {(a, b): rng.choice([0.5, 0.8, 1.0]) for a in range(1, n + 1) for b in range(a + 1, n + 1)
            if rng.random() < (local if b - a <= 2 else far)}  # fmt: skip
    pair = {e: rng.choice([0.5, 0.8, 1.0]) for e in near if rng.random() < 0.5}
    alike = {p for p in range(1, n + 1) if rng.random() < rng.choice([0.2, 0.7])}
    algorithms = [_Pairs(near, alike), _Pairs(pair, alike)]
    algorithms[1].name = "pair"
    config = Settings()
    config.match.max_bucket = max_bucket
    d = tmp_path_factory.mktemp("follow")
    one = Index(d / "one.sqlite", config.to_dict())
    _add_two(one, 1, n, keys)
    link_index(one, algorithms, config)
    inc = Index(d / "inc.sqlite", config.to_dict())
    first = rng.randint(18, min(max_bucket, n - 1))
    _add_two(inc, 1, first, keys)
    link_index(inc, algorithms, config)
    _link_batches(inc, n, keys, algorithms, config, batches, add=_add_two, done=first)
    assert _clusters(inc) == _clusters(one)
    assert sorted(inc.db.execute("SELECT a, b, kind, score FROM edges")) == sorted(one.db.execute("SELECT a, b, kind, score FROM edges"))
    one.close(), inc.close()
