"""Incremental runs equal one run over the same inputs (issue 14, item 4): files added to one
index one run at a time give the clusters, kept pages and stored texts of one run over all of
them in the same order. On the real crawls: bench/incremental.py (bench/RESULTS.md)."""

from __future__ import annotations

import json
import sqlite3

from pagetwin.app import dedup
from pagetwin.config import Settings
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
