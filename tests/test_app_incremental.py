"""Incremental runs equal one run over the same inputs (issue 14, item 4): files added to one
index one run at a time give the clusters, kept pages and stored texts of one run over all of
them in the same order. On the real crawls: bench/incremental.py (bench/RESULTS.md)."""

from __future__ import annotations

import json
import sqlite3

from pagetwin.app import dedup
from pagetwin.config import Settings
from tests.fixtures.records import page_row
from tests.fixtures.sites import site_pages


def _write(path, pages):
    with path.open("w") as fh:
        for url, html in pages:
            fh.write(json.dumps({"url": url, "html": html}) + "\n")
    return str(path)


def _inputs(tmp_path):
    """Four files of one site (its template learned over all of them), with copies and an
    edited repost of a page of the first file in the later ones (evidence that reaches back
    to pages stored by an earlier run)."""
    pages = [(url, html) for url, html, _ in site_pages(24, seed=7, templates="ab")]
    first = pages[0][1]
    files = []
    for n in range(4):
        chunk = pages[n * 6 : (n + 1) * 6]
        if n:
            chunk.append((f"https://mirror{n}.example/copy.html", first))
            chunk.append((f"https://repost{n}.example/story.html", first.replace("</p>", f" Updated {n}.</p>", 1)))
        files.append(_write(tmp_path / f"f{n}.jsonl", chunk))
    return files


def _result(out):
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    members = {}
    for row in rows:
        members.setdefault(row["cluster"], set()).add(row["url"])
    kept = {frozenset(members[r["cluster"]]): r["url"] for r in rows if r["keep"]}
    db = sqlite3.connect(out / "index.sqlite")
    try:
        lengths = dict(db.execute("SELECT url, text_len FROM pages"))
    finally:
        db.close()
    return kept, lengths


def test_files_added_one_run_at_a_time_give_one_runs_result(tmp_path):
    settings = Settings()
    settings.run.workers = 1
    settings.run.progress = False
    files = _inputs(tmp_path)
    dedup(files, tmp_path / "one", settings)
    for i, path in enumerate(files):
        dedup([path], tmp_path / "inc", settings, mode="add" if i else "new")
    one_kept, one_lengths = _result(tmp_path / "one")
    inc_kept, inc_lengths = _result(tmp_path / "inc")
    assert inc_kept == one_kept  # same clusters, same kept page in each
    assert inc_lengths == one_lengths  # same main texts (the template learned over all files)
    # The copies in later files joined the cluster of the page stored by the first run.
    story = next(c for c in one_kept if any("mirror1" in url for url in c))
    assert len(story) >= 4


def test_an_added_run_matches_only_its_pages_and_stores_one_runs_edges(tmp_path):
    """Issue 17, item 4: runs after the first verify only the pairs with a new page
    (summary matching.incremental), and the index holds the edges of one run over all."""
    settings = Settings()
    settings.run.workers = 1
    settings.run.progress = False
    files = _inputs(tmp_path)
    dedup(files, tmp_path / "one", settings)
    summaries = [dedup([path], tmp_path / "inc", settings, mode="add" if i else "new") for i, path in enumerate(files)]
    assert [s["matching"]["incremental"] for s in summaries] == [False, True, True, True]
    # Fewer comparisons than the one run made: the earlier runs' pairs are not verified again.
    assert sum(summaries[-1]["matching"]["candidates"].values()) < sum(
        json.loads((tmp_path / "one" / "summary.json").read_text())["matching"]["candidates"].values()
    )

    def pairs(out):
        db = sqlite3.connect(out / "index.sqlite")
        try:
            urls = dict(db.execute("SELECT pid, url FROM pages"))
            return {(urls[a], urls[b], kind) for a, b, kind in db.execute("SELECT a, b, kind FROM edges")}
        finally:
            db.close()

    assert pairs(tmp_path / "inc") == pairs(tmp_path / "one")


class _Allowed:
    """A stand-in algorithm: a page's feature is its number; a pair verifies when it is in
    ``pairs``; every pair is related (the guard keeps whatever the edges connect)."""

    name, keys_are_proof = "near", False

    def __init__(self, pairs):
        self.pairs = pairs

    def decode(self, data):
        return data[0]

    def verify(self, a, b):
        from pagetwin.model import Evidence

        ok = (min(a, b), max(a, b)) in self.pairs
        return Evidence(self.name, 1.0 if ok else 0.0, ok)

    def related(self, a, b, share):
        return True


def _bucket_index(path, pages, settings):
    from pagetwin.index.sqlite import Index

    index = Index(path, settings.to_dict())
    index.begin()
    for n in range(1, pages + 1):
        pid = index.add_page(page_row(n))
        index.add_fingerprints(pid, {"near": bytes([n])}, {"near": [0]})  # one bucket: key 0
    return index


def test_a_retraction_that_splits_a_component_gives_one_runs_clusters(tmp_path):
    """Pages 1-18 share one bucket (max_bucket 20: all pairs compared); only the pairs of
    {1, 2, 3} and of {16, 17, 18} and the far pair (1, 18) verify, so the six are one
    component, one cluster. Three pages more push the bucket past 20: compared by window
    (16 neighbours), 1 and 18 are no longer a pair; their edge had no other evidence, so it
    is retracted and the component falls in two, as one run over the 21 pages finds."""
    from pagetwin.app import link_index

    settings = Settings()
    settings.match.max_bucket = 20
    group = [(1, 2), (1, 3), (2, 3), (16, 17), (16, 18), (17, 18)]
    algorithms = [_Allowed(set(group) | {(1, 18)})]

    def clusters(index):
        groups: dict[str, set[str]] = {}
        for pid, cluster, _ in index.db.execute("SELECT pid, cluster, keep FROM clusters"):
            groups.setdefault(cluster, set()).add(pid)
        return sorted(sorted(g) for g in groups.values() if len(g) > 1), set(index.db.execute("SELECT pid FROM clusters WHERE keep=1"))

    inc = _bucket_index(tmp_path / "inc.sqlite", 18, settings)
    link_index(inc, algorithms, settings)
    assert clusters(inc)[0] == [[1, 2, 3, 16, 17, 18]]
    for n in range(19, 22):
        inc.add_page(page_row(n))
        inc.add_fingerprints(n, {"near": bytes([n])}, {"near": [0]})
    links = link_index(inc, algorithms, settings, first_new=18, recluster_all=False)
    inc.commit()
    assert not links.edges_by_kind  # no pair with a new page verifies
    assert inc.edge(1, 18) is None  # retracted: its only evidence came from the outgrown bucket

    one = _bucket_index(tmp_path / "one.sqlite", 21, settings)
    link_index(one, algorithms, settings)
    one.commit()
    assert clusters(inc) == clusters(one)
    assert clusters(one)[0] == [[1, 2, 3], [16, 17, 18]]
    assert sorted(inc.db.execute("SELECT a, b, kind FROM edges")) == sorted(one.db.execute("SELECT a, b, kind FROM edges"))
