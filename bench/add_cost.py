"""Cost of adding pages to indexes of growing size (issue 17, item 4): it should stay flat.

Indexes of the first 2,000 / 10,000 / 20,000 pages of a corpus WARC are built through
``pagetwin.Index`` (batches of 500; no site templates learned, as an index created by the API
has none), snapshotted — or, with ``--from-index``, cut from one index ``pagetwin dedup`` built
(its first N pages, matched and clustered again) —, and the same ``--new`` pages (the last pages of another WARC) added to a
copy of each: once as one batch, once one page per ``add``, and (``reopen``) one page per writer
opened and closed, as a one-shot ``pagetwin add`` per page or a server restarted between adds
would (each writer starts from the clusters the last one stored, ``pagetwin.held``). For each: the add's wall time, and,
on the index after the add, the time of verifying the new pages' pairs only
(``match.find_new_edges``) against matching the whole index again (``match.find_edges``, what
every add cost before), measured in the same run (``--skip-full``: not). Each time is given as
wall seconds and as the process's CPU seconds (``cpu_``: what the machine's other load does not
change much; the process runs one thread).

    nice -n 10 .venv/bin/python -m bench.add_cost bench/data/corpus-20000.warc.gz \
        --new-from bench/data/corpus-5000.warc.gz --sizes 2000 10000 20000 --new 100 \
        [--from-index out/index.sqlite]

``--made`` (instead of ``--new-from``): the new pages are made from the corpus's first pages,
half near copies of indexed pages, half new pages (``made_pages``); with a ``--copies K``
corpus (``bench.corpus``), whose duplicate sets do not grow with it, the cost of an add should
not either.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path


def _pages(path: str, limit: int | None = None, skip: int = 0):
    from pagetwin.config import Settings
    from pagetwin.sources import SourceStats, iter_pages

    pages = iter_pages([path], Settings().input, SourceStats())
    return list(islice((p for p in pages if p.kind == "response"), skip, None if limit is None else skip + limit))


def made_pages(corpus: str, among: int, count: int, seed: int = 17) -> list:
    """``count`` new pages made from the corpus's first ``among`` pages (held by every index
    measured): every other one a near copy of an indexed page (``bench.corpus.edit_page``'s
    seeded edits, under a mirror URL), the others new pages of the same sites
    (``bench.corpus.fresh_page``: every word of the text swapped, the template kept). On a
    ``--copies K`` corpus the near copies join sets of K indexed pages, whatever the index's
    size, and the new pages join none."""
    import dataclasses

    from bench.corpus import WordPool, edit_page, fresh_page, mirror_url
    from bench.warcout import payload_digest

    pages = _pages(corpus, among)
    pool = WordPool(seed)
    for page in pages:
        pool.learn(page.body)
    step = max(1, len(pages) // count)
    out = []
    for n, page in enumerate(pages[::step][:count]):
        if n % 2 == 0:
            body, _ = edit_page(page.body, page.url, 9, seed)
            url = mirror_url(page.url, 9)
        else:
            body = fresh_page(page.body, pool, page.url, 99, seed)
            url = page.url + ("&" if "?" in page.url else "?") + "add-cost=new"
        out.append(dataclasses.replace(page, id=f"add-cost-{n}", url=url, body=body, payload_digest=payload_digest(body)))
    return out


def build(corpus: str, sizes: list[int], work: Path) -> dict[int, Path]:
    """Snapshots of one index grown through the API to each size."""
    from pagetwin.api import Index
    from pagetwin.config import Settings
    from pagetwin.sources import SourceStats, iter_pages

    snaps: dict[int, Path] = {}
    settings = Settings()
    wanted = sorted(sizes)
    stream = (p for p in iter_pages([corpus], settings.input, SourceStats()) if p.kind == "response")
    t = time.monotonic()
    with Index.open(work / "grow.sqlite", settings) as index:
        while wanted:
            batch = list(islice(stream, min(500, wanted[0] - len(index))))
            if not batch:
                break
            index.add(batch)
            if len(index) >= wanted[0]:
                size = wanted.pop(0)
                snaps[size] = work / f"index-{size}.sqlite"
                src, dst = sqlite3.connect(work / "grow.sqlite"), sqlite3.connect(snaps[size])
                src.backup(dst)
                src.close(), dst.close()
                print(f"built {size} pages ({time.monotonic() - t:.0f} s)", file=sys.stderr, flush=True)
    return snaps


def truncated(source: Path, sizes: list[int], work: Path) -> dict[int, Path]:
    """Indexes of the first N pages of an index ``pagetwin dedup`` built (its learned model
    kept): the later pages, their keys, features and edges deleted, then every bucket matched
    and every cluster made again over what is left, as one run over those pages does."""
    from pagetwin.api import Index
    from pagetwin.app import link_index

    snaps: dict[int, Path] = {}
    for size in sorted(sizes):
        snaps[size] = work / f"index-{size}.sqlite"
        src, dst = sqlite3.connect(source), sqlite3.connect(snaps[size])
        src.backup(dst)
        src.close()
        last = dst.execute("SELECT pid FROM pages ORDER BY pid LIMIT 1 OFFSET ?", (size - 1,)).fetchone()
        if last is None or dst.execute("SELECT COUNT(*) FROM pages WHERE pid>?", last).fetchone()[0] == 0:
            dst.close()  # every page: the index as the run left it
            print(f"index of {size} pages: the whole index", file=sys.stderr, flush=True)
            continue
        for sql in ("DELETE FROM pages WHERE pid>?", "DELETE FROM keys WHERE pid>?", "DELETE FROM features WHERE pid>?",
                    "DELETE FROM edges WHERE b>?", "DELETE FROM clusters WHERE pid>?"):  # fmt: skip
            dst.execute(sql, last)
        dst.commit()
        dst.close()
        t = time.monotonic()
        with Index.open(snaps[size]) as index:
            index._store.begin()
            link_index(index._store, index._worker.algorithms, index.settings)
            index._store.commit()
        print(f"index of {size} pages ready ({time.monotonic() - t:.0f} s)", file=sys.stderr, flush=True)
    return snaps


def _reopened(path: Path, new_pages: list) -> dict:
    """One writer per page: opened, the page added, closed (its held clusters stored)."""
    from pagetwin.api import Index

    with Index.open(path) as index:
        index.query(new_pages[0])  # warm-up, not counted: models load once a process
    each, each_cpu, restored, placed = [], [], 0, 0
    for page in new_pages:
        t, c = time.monotonic(), time.process_time()
        with Index.open(path) as index:
            index.add(page)
            held = index._held
        each.append(time.monotonic() - t)
        each_cpu.append(time.process_time() - c)
        restored += getattr(held, "restored", 0)
        placed += held.placed if held is not None else 0
    return {
        "reopen_total_s": round(sum(each), 3), "reopen_p50_ms": round(1000 * statistics.median(each), 1),
        "cpu_reopen_total_s": round(sum(each_cpu), 3), "cpu_reopen_p50_ms": round(1000 * statistics.median(each_cpu), 1),
        "cpu_reopen_slowest": [round(x, 2) for x in sorted(each_cpu, reverse=True)[:5]],
        "reopen_restored": restored, "reopen_placed": placed,
    }  # fmt: skip


def _timed_commits(store) -> list[float]:
    """The seconds of each commit of ``store`` from now on (its WAL written and, with
    synchronous=FULL, synced)."""
    times: list[float] = []
    commit = store.commit

    def timed() -> None:
        t = time.monotonic()
        commit()
        times.append(time.monotonic() - t)

    store.commit = timed
    return times


def measure(
    snapshot: Path, new_pages: list, work: Path, modes: tuple[str, ...] = ("batch", "single"), skip_full: bool = False,
    synchronous: str | None = None,
) -> dict:  # fmt: skip
    from pagetwin.api import Index
    from pagetwin.match import MatchStats, find_edges, find_new_edges

    out: dict = {}
    for mode in modes:
        copy = work / f"m-{mode}.sqlite"
        shutil.copy(snapshot, copy)
        if mode == "reopen":
            out.update(_reopened(copy, new_pages))
            copy.unlink()
            continue
        with Index.open(copy) as index:
            if synchronous is not None:
                index._store.db.execute(f"PRAGMA synchronous={synchronous}")
            commits = _timed_commits(index._store)
            index.query(new_pages[0])  # warm-up, not counted: models (language, morphology) load on first use
            before = len(index)
            first_new = index._store.max_pid()
            t, cpu = time.monotonic(), time.process_time()
            if mode == "batch":
                index.add(new_pages)
                out["batch_s"] = round(time.monotonic() - t, 3)
                out["cpu_batch_s"] = round(time.process_time() - cpu, 3)
            else:
                each, each_cpu = [], []
                for page in new_pages:
                    s, c = time.monotonic(), time.process_time()
                    index.add(page)
                    each.append(time.monotonic() - s)
                    each_cpu.append(time.process_time() - c)
                out["single_total_s"] = round(sum(each), 3)
                out["cpu_single_total_s"] = round(sum(each_cpu), 3)
                out["cpu_single_p50_ms"] = round(1000 * statistics.median(each_cpu), 1)
                out["cpu_single_slowest"] = [round(x, 2) for x in sorted(each_cpu, reverse=True)[:5]]
                out["single_commit_p50_ms"] = round(1000 * statistics.median(commits), 2)  # the commit alone (its WAL sync)
                out["synchronous"] = index._store.db.execute("PRAGMA synchronous").fetchone()[0]  # 1 NORMAL, 2 FULL
                out["single_p50_ms"] = round(1000 * statistics.median(each), 1)
                out["single_p99_ms"] = round(1000 * sorted(each)[int(0.99 * (len(each) - 1))], 1)
                out["single_max_ms"] = round(1000 * max(each), 1)
                # Pages placed from the clusters the writer holds (held.Held), not walked again.
                out["single_placed"] = index._held.placed if index._held is not None else 0
                out["single_slowest"] = [round(x, 2) for x in sorted(each, reverse=True)[:5]]
                continue
            out["pages"] = before
            algorithms, max_bucket = index._worker.algorithms, index.settings.match.max_bucket
            store = index._store
            t = time.monotonic()
            new = find_new_edges(store, algorithms, max_bucket, MatchStats(), first_new, list(store.revisit_pairs()))
            out["match_new_s"] = round(time.monotonic() - t, 3)
            out["new_edges"], out["retracted"] = len(new.edges), len(new.retracted)
            if skip_full:
                continue
            t = time.monotonic()
            full = find_edges(store, algorithms, max_bucket, MatchStats(), list(store.revisit_pairs()))
            out["match_all_s"] = round(time.monotonic() - t, 3)
            out["edges"] = len(full)
        copy.unlink()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus")
    parser.add_argument("--new-from", default=None, help="WARC whose last --new pages are added")
    parser.add_argument("--made", action="store_true",
                        help="add --new pages made from the corpus's first min(--sizes) pages instead: half seeded near copies of indexed pages, half new pages (made_pages)")  # fmt: skip
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 20000])
    parser.add_argument("--new", type=int, default=100)
    parser.add_argument("--modes", nargs="+", choices=("batch", "single", "reopen"), default=["batch", "single"],
                        help="one add of the batch, one add per page, one writer per page")  # fmt: skip
    parser.add_argument("--synchronous", choices=("normal", "full"), default=None,
                        help="SQLite's synchronous for the adds (default: the API's, full: each answered add synced to disk)")  # fmt: skip
    parser.add_argument("--skip-full", action="store_true", help="do not time matching every bucket again (slow on big indexes)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the indexes (default: a temporary one)")
    parser.add_argument("--from-index", type=Path, default=None,
                        help="take the first N pages of this dedup-built index instead of building through the API")  # fmt: skip
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="pagetwin-add-cost-"))
    work.mkdir(parents=True, exist_ok=True)
    snaps = {s: work / f"index-{s}.sqlite" for s in args.sizes}
    if args.from_index is not None:
        snaps = truncated(args.from_index, args.sizes, work)
    elif not all(p.exists() for p in snaps.values()):
        snaps = build(args.corpus, args.sizes, work)
    if args.made:
        new_pages = made_pages(args.corpus, min(args.sizes), args.new)
    elif args.new_from is not None:
        new_pages = _pages(args.new_from)[-args.new :]
    else:
        parser.error("give --new-from WARC or --made")
    rows = []
    for size in sorted(snaps):
        row = {"size": size, **measure(snaps[size], new_pages, work, tuple(args.modes), args.skip_full, args.synchronous)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
