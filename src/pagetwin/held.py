"""The clusters of an index held in memory by its one writer (``pagetwin.Index``), so that a
page added to a large component is placed without reading the component again.

Clustering a component after an add (``app.recluster``) reads every edge of it and splits it
with the guard: its cost grows with the component, and on a crawl whose near-copy clusters
grow with it (hundreds of versions of one documentation page) with the index. ``Held`` keeps,
for each component it has clustered, the guard's rounds (``guard.IncrementalGuard``) and what
the choice of the page to keep reads of its pages. A new page whose edges reach one held
component (or only other new pages) is placed by replaying the rounds it changes; a page
whose edges reach a component not held, or several, is left to ``recluster`` (which then
holds the result). The clusters are those one run over all the pages makes either way
(tests/test_held.py). Valid while the index is written by its holder only: ``pagetwin.Index``
holds the index's lock while open, and drops what it holds when an add is rolled back.

Kept on disk too (``save``, in the transaction of each add, and ``traced``, in a dedup run's
clustering, for its components of ``STORED_FROM`` pages or more): each component's rounds,
with a stamp (``Index.held_stamp``). A writer opened later that reaches a stored component
still fresh (``Index.held_fresh``: no edge replaced since, none from it to a page stored after
it) holds it from the stored rounds, each page's edges read only when a round asks for them,
instead of reading and splitting the whole component again. Evidence retracted from its
edges (a bucket the new pages pushed past ``match.max_bucket``) drops its stored rounds, but
the writer holds them first and follows the change (``change``: the rounds whose center, core
or part an edge's new score or loss moves are split again; a component cut in two goes to
``recluster``); a component not fresh (rounds older than an add that reached
it, left only by a caller of ``link_index`` that did not ``save``; or a run that matched every
pair again with the guard off) is left to ``recluster`` as before.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable
from typing import Any

from pagetwin.cluster import ClusterPage, as_cluster_page, cluster_id, keep_key
from pagetwin.guard import IncrementalGuard, Round, dump, induced_components

_FEATURES = 5_000  # decoded features kept per algorithm for the guard's checks
# A dedup run stores the rounds of its components of this many pages or more: a smaller one is
# split again in a few milliseconds when an add first reaches it.
STORED_FROM = 32


class Held:
    """What the writer holds of the index's clusters (see the module docstring)."""

    def __init__(self, similar: Callable[[int, int], bool], policy: str, merge_kinds: set[str], index: Any = None) -> None:
        self.guard = IncrementalGuard(similar, self._edges_of if index is not None else None)
        self.order = keep_key(policy)
        self.merge_kinds = merge_kinds
        self.index = index  # where restored components' edges are read from
        self.info: dict[int, ClusterPage] = {}
        self.placed = 0  # pages placed without reading their component again
        self.restored = 0  # components held from their stored rounds
        self.changed: dict[int, Round] = {}  # tops held or changed since the last save
        self._leader: dict[int, int] = {}  # revisit records of the add being placed (not linked through)

    @classmethod
    def over(cls, index: Any, algorithms: list, settings: Any) -> Held:
        from pagetwin.app import _merge_kinds
        from pagetwin.guard import similar_over

        similar = similar_over(index, algorithms, settings.match.guard_share, _FEATURES)
        return cls(similar, settings.cluster.keep, _merge_kinds(settings), index)

    def _edges_of(self, pids: list[int]) -> dict[int, dict[int, float]]:
        return _neighbours(self.index, pids, self.merge_kinds, self._leader)

    def save(self, index: Any) -> int:
        """Store the components held or changed since the last save (rounds and the stamp of
        their edges), in the caller's transaction; how many."""
        stamp = index.held_stamp()
        rows = []
        for top in self.changed.values():
            members = sorted(top.members)
            if self.guard.root_of.get(members[0]) is top:  # still held as it is
                rows.append((members[0], stamp, _packed(top), members))
        index.store_held(rows)
        self.changed.clear()
        return len(rows)

    def _restore(self, index: Any, pids: set[int], below: int) -> None:
        """Hold the stored components of these pages still fresh for the edges before the
        pages of the add (``below``)."""
        for stamp, data in index.held_components(pids).values():
            tree = json.loads(zlib.decompress(data))
            members = tree[2]
            if any(m in self.guard.root_of for m in members) or not index.held_fresh(stamp, members, self.merge_kinds, below):
                continue  # stale: recluster's
            self.guard.restore(tree)
            self.restored += 1

    def hold(self, members: set[int], links: Iterable, pages: Iterable[tuple]) -> Callable[[list[int]], list[list[int]]]:
        """Hold the components of ``members`` (``links``: match.Link rows between them;
        ``pages``: their Index.pages_for_clustering rows); the guard's split of them as
        cluster.clusters' ``split``."""
        self.info.update((p.pid, p) for p in map(as_cluster_page, pages))
        tops = self.guard.load(members, [(a, b, score) for a, b, kind, score in links if kind in self.merge_kinds])
        self.changed.update((id(top), top) for top in tops)

        def split(group: list[int]) -> list[list[int]]:
            return sorted((sorted(p) for p in self.guard.root_of[group[0]].parts()), key=lambda p: p[0])

        return split

    def change(self, index: Any, changed: dict[tuple[int, int], float | None], revisits: list[tuple[int, int]]) -> set[int]:
        """Follow stored edges between older pages that changed for the guard (evidence
        retracted: ``changed`` (a, b) -> its guard score now, None when it no longer merges),
        in the components held (``hold_changed`` first: the stored ones), their changed
        clusters' rows stored; the pages left to ``recluster`` (a component not held, or cut
        in two by the change)."""
        self._leader = {follower: original for original, follower in revisits}
        left: set[int] = set()
        tops: dict[int, tuple[Round, dict]] = {}
        for (a, b), score in changed.items():
            top = self.guard.root_of.get(a)
            if top is None or top is not self.guard.root_of.get(b):
                left |= {a, b}
                continue
            tops.setdefault(id(top), (top, {}))[1][(a, b)] = score
        parts: list[set[int]] = []
        for key, (top, edges) in tops.items():
            if left & top.members:
                left |= top.members
                continue
            before = {frozenset(p) for p in top.parts()}
            if not self.guard.change(top, edges):
                left |= top.members  # cut in two: recluster's
                continue
            self.changed[key] = top
            parts += [p for p in top.parts() if frozenset(p) not in before]
        self.forget(left)
        index.set_clusters(self._rows(index, parts, self._leader))
        return left

    def hold_changed(self, index: Any, pids: set[int], below: int) -> None:
        """Hold the stored components of these pages (still fresh: read before their edges
        change), so that ``change`` can follow the change in them."""
        if self.index is not None:
            self._restore(index, {p for p in pids if p not in self.guard.root_of}, below)

    def forget(self, pids: Iterable[int]) -> None:
        for pid in pids:
            self.guard.forget(pid)

    def place(self, index: Any, new: set[int], revisits: list[tuple[int, int]]) -> set[int]:
        """Place the new pages (pids of an add, stored with their edges) that it can, their
        clusters' rows stored; the pages left to ``recluster``."""
        from pagetwin.app import _original

        leader = {follower: original for original, follower in revisits}
        self._leader = leader
        # A revisit record follows its original's cluster and links nothing (it has no features:
        # its only edge is the "revisit" one to its original, not merged); an older one that a
        # new page is now the original of was a cluster of its own until now (_rows moves it).
        self.forget(f for o, f in revisits if o in new and f not in new)
        followers = {f for f in new if f in leader}
        near = _neighbours(index, new - followers, self.merge_kinds, leader)
        unknown = {q for p in near for q in near[p] if q not in near and q not in self.guard.root_of}
        if unknown and new and self.index is not None:
            self._restore(index, unknown, min(new))
        left: set[int] = set()
        before: dict[int, tuple[Round, set[frozenset[int]]]] = {}  # the tops changed: their parts before
        for group in _groups(near):
            old = {q for p in group for q in near[p] if q not in near}
            if not all(q in self.guard.root_of for q in old):
                left |= group  # a component not held: recluster's
                continue
            tops = {id(self.guard.root_of[q]): self.guard.root_of[q] for q in old}
            if len(tops) > 1:
                left |= group  # it joins several components: recluster's
                continue
            self.info.update((p.pid, p) for p in map(as_cluster_page, index.pages_for_clustering(sorted(group))))
            for top in tops.values():
                before.setdefault(id(top), (top, {frozenset(p) for p in top.parts()}))
            top = self._add(group, near, next(iter(tops.values()), None))
            before.setdefault(id(top), (top, set()))
        left |= {f for f in followers if _original(f, leader) in left}  # they follow a page recluster places
        self.changed.update((key, top) for key, (top, _) in before.items())
        changed = [p for top, parts in before.values() for p in top.parts() if frozenset(p) not in parts]
        rows = self._rows(index, changed, leader)
        index.set_clusters(rows)
        given = {pid for pid, _, _ in rows}
        # The other new revisit records follow their original's cluster, which this add left as it was.
        follow = [(f, index.cluster_of_pid(_original(f, leader))) for f in sorted(followers - left - given)]
        left |= {f for f, cluster in follow if cluster is None}
        index.set_clusters([(f, cluster, 0) for f, cluster in follow if cluster is not None])
        self.placed += len(new) - len(left)
        return left

    def _add(self, group: set[int], near: dict[int, dict[int, float]], top: Round | None) -> Round:
        """Add one group of new pages (joined to each other by new edges) to ``top``, the
        held component they reach (None: they reach none, a component of their own); the
        component's top round."""
        if top is None:
            (top,) = self.guard.load(group, [(a, b, s) for a in group for b, s in near[a].items() if a < b])
            return top
        todo = sorted(group)
        while todo:  # each page once one of its edges reaches a held page
            ready = [p for p in todo if any(q in self.guard.root_of for q in near[p])]
            for p in ready:
                self.guard.add(p, {q: s for q, s in near[p].items() if q in self.guard.root_of})
            todo = [p for p in todo if p not in ready]
        return top

    def _rows(self, index: Any, parts: list[set[int]], leader: dict[int, int]) -> list[tuple[int, str, int]]:
        """The cluster rows of these parts, and of the revisit records following their pages."""
        from pagetwin.app import _original

        missing = sorted(pid for part in parts for pid in part if pid not in self.info)  # of a restored component
        self.info.update((p.pid, p) for p in map(as_cluster_page, index.pages_for_clustering(missing)))

        followers: dict[int, list[int]] = {}
        for follower in leader:
            followers.setdefault(_original(follower, leader), []).append(follower)
        rows = []
        for part in parts:
            kept = min(part, key=lambda pid: self.order(self.info[pid]))
            name = cluster_id(self.info[kept].id)
            rows += [(pid, name, int(pid == kept)) for pid in part]
            rows += [(f, name, 0) for pid in part for f in followers.get(pid, ())]
        return rows


def traced(rows: list) -> Callable[[Round], None]:
    """guard.make_splitter's ``traced``: each component's rounds appended to ``rows`` as
    ``stored_rows`` takes them (packed at once: a run's components are not all kept)."""
    return lambda top: rows.append((min(top.members), _packed(top), sorted(top.members)))


def stored_rows(index: Any, rows: list) -> list[tuple[int, str, bytes, list[int]]]:
    """``traced``'s rows with the stamp of now, as Index.replace_held takes them."""
    stamp = index.held_stamp()
    return [(component, stamp, data, members) for component, data, members in rows]


def _packed(top: Round) -> bytes:
    return zlib.compress(json.dumps(dump(top), separators=(",", ":")).encode())


def _neighbours(index: Any, pids: Iterable[int], kinds: set[str], leader: dict[int, int]) -> dict[int, dict[int, float]]:
    """{pid: {neighbour: guard score}} over the stored edges of ``kinds`` of these pages,
    revisit records (``leader``'s keys) left out: they are not linked through."""
    near: dict[int, dict[int, float]] = {pid: {} for pid in sorted(pids)}
    from_a, from_b = index.scored_edges(near, kinds)
    for pid, other, score in [(a, b, s) for a, b, _, s in from_a] + [(b, a, s) for a, b, _, s in from_b]:
        if other not in leader:
            near[pid][other] = score
    return near


def _groups(near: dict[int, dict[int, float]]) -> list[set[int]]:
    """The new pages joined by edges between new pages (each group placed together)."""
    return induced_components(set(near), near)
