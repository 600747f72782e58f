"""The persistent, incremental index: one SQLite file, written only by the parent process.

It holds the pages, their fingerprint features and candidate keys, the verified edges, the
clusters, the learned models (site templates, document frequencies) and the settings it was
built with. Adding to an index built with incompatible settings is refused, naming the setting.
While a dedup run is unfinished it also holds that run's checkpoint (``Checkpoint``): enough to
resume the run or to undo it (``Index(..., inputs_key=...)``).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xxhash

SCHEMA_VERSION = 3
OPENS = ("2", "3")  # the schema versions it opens; a version-2 index is migrated when opened to write

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    pid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    url TEXT NOT NULL,
    host TEXT NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    crawl_date TEXT,
    text_len INTEGER NOT NULL DEFAULT 0,
    payload_digest TEXT,
    refers_to_digest TEXT,
    lang TEXT,
    title TEXT,
    text BLOB,
    error TEXT,
    seen_run INTEGER NOT NULL,
    warc_offset INTEGER,  -- the record's byte offset in its WARC file (Page.meta["warc_offset"])
    metadata TEXT,  -- JSON: the input's own metadata (a JSONL line's, a Parquet row's), else NULL
    http_status INTEGER,  -- the HTTP status it was served with (WARC/ARC), else NULL
    UNIQUE (id, source)  -- one record id may stand in two files (a record copied across WARCs)
);
CREATE INDEX IF NOT EXISTS pages_payload ON pages(payload_digest);
CREATE INDEX IF NOT EXISTS pages_url ON pages(url);
CREATE INDEX IF NOT EXISTS pages_kind ON pages(kind);  -- the few revisit records, without a scan
CREATE TABLE IF NOT EXISTS features (
    algo TEXT NOT NULL, pid INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (algo, pid)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keys (algo TEXT NOT NULL, key INTEGER NOT NULL, pid INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS keys_by_key ON keys(algo, key, pid);
CREATE INDEX IF NOT EXISTS keys_by_pid ON keys(pid, algo);  -- a page's keys (match: a bucket outgrew max_bucket)
CREATE TABLE IF NOT EXISTS edges (
    a INTEGER NOT NULL, b INTEGER NOT NULL, kind TEXT NOT NULL, evidence TEXT NOT NULL,
    PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS clusters (
    pid INTEGER PRIMARY KEY, cluster TEXT NOT NULL, keep INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS clusters_by_cluster ON clusters(cluster);
CREATE TABLE IF NOT EXISTS models (name TEXT PRIMARY KEY, data BLOB NOT NULL);
-- An unfinished dedup run (see Checkpoint): its record, the models as they were before it, and
-- the earlier runs' pages it marked seen with the run they had been seen in. Empty otherwise.
CREATE TABLE IF NOT EXISTS checkpoint (key TEXT PRIMARY KEY, value BLOB);
CREATE TABLE IF NOT EXISTS checkpoint_models (name TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoint_seen (pid INTEGER PRIMARY KEY, seen_run INTEGER NOT NULL);
"""

# Schema 3: each edge's guard score (match.guard_score of its evidence) beside the evidence, and
# indexes holding a page's edges with their scores (a WITHOUT ROWID table's index holds its
# primary key too): a walk over a component reads neither the evidence nor the table. A page's
# edges by b (edges_touching, the api's components) are found through edges_scored_b: the
# index on b alone that earlier versions made (edges_by_b) is dropped, one index fewer to build
# after replace_edges' rows (corpus-10000-shared: ~0.07 of its ~0.8 CPU-s).
_EDGE_SCORES = """
CREATE INDEX IF NOT EXISTS edges_scored_a ON edges(a, kind, score);
CREATE INDEX IF NOT EXISTS edges_scored_b ON edges(b, kind, score);
CREATE TABLE IF NOT EXISTS held (component INTEGER PRIMARY KEY, stamp TEXT NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS held_pages (pid INTEGER PRIMARY KEY, component INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS held_pages_by_component ON held_pages(component);
"""
# held / held_pages: the guard's rounds of the components a writer held or a dedup run split
# (pagetwin.held), each with a stamp (Index.held_stamp): a writer opened later holds a component
# still fresh (Index.held_fresh) without splitting it again (any other is split again, as if not
# stored). Stored in the transaction that changed the component, so a kill cannot leave them stale.

# Columns added to ``pages`` after schema version 2 was first written: an older index file gets
# them (ALTER TABLE ... ADD COLUMN, NULL for its pages) when it is opened for writing.
_ADDED_PAGE_COLUMNS = (("warc_offset", "INTEGER"), ("metadata", "TEXT"), ("http_status", "INTEGER"))

# Settings that change what is stored: an index built with other values cannot take new pages.
COMPATIBILITY = (
    "input.max_page_bytes",
    "extract.templates",
    "extract.site_key",
    "text.lang",
    "match.algorithms",  # older pages would lack the features of an added algorithm
)


class IndexError_(Exception):
    """The index cannot be used (incompatible settings, not an index, unreadable)."""


@dataclass(frozen=True)
class Checkpoint:
    """An unfinished dedup run, as its last checkpoint left it: run number, what identifies its
    inputs and settings (``inputs_key``), the pids it stored (those above ``first_pid``, ``pages``
    of them), its learned model (``learned``: Learned.to_bytes, or None when nothing was learned)
    and what the index meta said before it (``before_settings``, ``before_runs``)."""

    run: int
    inputs_key: str
    first_pid: int
    pages: int
    learned: bytes | None
    before_settings: str | None
    before_runs: int


# The page size of a new index file (SQLite's default is 4,096). Larger pages hold a page's
# compressed text (a few KB) without an overflow chain and an edge's evidence rows several to
# a page: fewer pages to write, to log in the WAL and to copy back at its checkpoints
# (corpus-10000-shared: pass 2's writes 1.25 -> 1.07 CPU-s, the 269,616 edges' rows and
# indexes 0.90 -> 0.75). Nothing else changes: the same rows, the same durability.
PAGE_SIZE = 16384

_CHUNK = 500  # pids per IN (...) list: well under SQLite's bound on parameters


def pid_chunks(pids: list[int]) -> Iterator[tuple[list[int], str]]:
    """``pids`` _CHUNK at a time, each with its ``?,?,...`` marks for an ``IN (...)`` list."""
    for i in range(0, len(pids), _CHUNK):
        chunk = pids[i : i + _CHUNK]
        yield chunk, ",".join("?" * len(chunk))


class Index:
    def __init__(self, path: str | Path, settings_dict: dict[str, Any], inputs_key: str | None = None) -> None:
        """Open (or create) the index and start a run. With ``inputs_key`` (what dedup's
        inputs and settings are, app._inputs_key) an unfinished run's checkpoint is acted on
        first: the same key resumes it (``self.resumed``: this run is that run, its number
        kept), another key undoes it (``self.undone``: the index as it was before it). Without
        ``inputs_key`` a checkpoint is left as it is."""
        self.path = Path(path)
        self.store_text = bool((settings_dict.get("index") or {}).get("store_text", True))  # index.store_text
        self.resumed: Checkpoint | None = None
        self.undone: Checkpoint | None = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(str(self.path), isolation_level=None)
            self.db.execute(f"PRAGMA page_size={PAGE_SIZE}")  # a new file's; an existing one keeps its own
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(_SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise IndexError_(f"{self.path} is not a pagetwin index: {exc}") from exc
        unfinished = self.checkpoint() if inputs_key is not None else None
        if unfinished is not None and unfinished.inputs_key != inputs_key:
            self.undone = self.undo_checkpoint()
        self._before = (self._meta("settings"), int(self._meta("runs") or 0))
        if unfinished is not None and self.undone is None:
            # The same run goes on: its pages keep their run number; the settings are the same.
            self.resumed = unfinished
            self._checkpointed = True
            self.run = unfinished.run
        else:
            self._checkpointed = False
            self.run = self._check_and_start_run(settings_dict)

    def _migrate(self) -> None:
        """Add the columns an index written by an older pagetwin lacks (its pages get NULL)."""
        have = self.page_columns()
        for name, sql_type in _ADDED_PAGE_COLUMNS:
            if name not in have:
                self.db.execute(f"ALTER TABLE pages ADD COLUMN {name} {sql_type}")
        self._migrate_edges()

    def _migrate_edges(self) -> None:
        """Schema 2 -> 3: the edges' guard scores (``_EDGE_SCORES``), computed once from the
        evidence of an older index's edges, in one transaction (a run killed during it leaves
        the index as it was)."""
        if self._meta("schema") not in (None, *OPENS):
            return  # refused by _check_and_start_run, untouched
        if "score" not in {row[1] for row in self.db.execute("PRAGMA table_info(edges)")}:
            from pagetwin.match import stored_guard_score

            count = self.db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]
            if count:
                print(f"pagetwin: index {self.path}: storing the guard scores of its {count:,} edges (schema 2 -> 3, once)", file=sys.stderr)
            self.db.create_function("pagetwin_guard_score", 1, stored_guard_score, deterministic=True)
            self.db.execute("BEGIN")
            self.db.execute("ALTER TABLE edges ADD COLUMN score REAL")
            self.db.execute("UPDATE edges SET score = pagetwin_guard_score(evidence)")
            self.db.execute("COMMIT")
        for statement in _EDGE_SCORES.strip().splitlines():
            self.db.execute(statement)
        self.db.execute("DROP INDEX IF EXISTS edges_by_b")  # edges_scored_b leads with b

    def page_columns(self) -> set[str]:
        """The columns of the pages table (an index opened read only may predate some)."""
        return {row[1] for row in self.db.execute("PRAGMA table_info(pages)")}

    @classmethod
    def open_readonly(cls, path: str | Path, immutable: bool = False) -> Index:
        """An existing index, read only: no run is recorded, nothing can be written.
        ``immutable``: the file is known not to change while read (no writer, no WAL file), so
        SQLite reads it without creating -wal/-shm files beside it. Usable from any thread,
        one at a time (the server's readers)."""
        self = cls.__new__(cls)
        self.path = Path(path)
        try:
            query = "mode=ro&immutable=1" if immutable else "mode=ro"
            self.db = sqlite3.connect(f"{self.path.resolve().as_uri()}?{query}", uri=True, check_same_thread=False)
            self.db.execute("SELECT 1 FROM pages LIMIT 1")
        except sqlite3.DatabaseError as exc:
            raise IndexError_(f"{self.path} is not a pagetwin index: {exc}") from exc
        self.run = int(self._meta("runs") or 0)  # the latest run's pages count as "this run"
        return self

    # -- settings and runs ----------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def _check_and_start_run(self, settings_dict: dict[str, Any]) -> int:
        schema = self._meta("schema")
        if schema is not None and schema not in OPENS:
            raise IndexError_(
                f"index {self.path} has schema version {schema}; this pagetwin writes version "
                f"{SCHEMA_VERSION} (start a new index)"
            )
        stored = self._meta("settings")
        if stored is not None:
            differing = incompatible_setting(settings_dict, json.loads(stored))
            if differing is not None:
                name, old_value, new_value = differing
                raise IndexError_(
                    f"index {self.path} was built with {name} = {old_value!r}; "
                    f"this run has {new_value!r} (use another --index, or the same setting)"
                )
        self._set_meta("schema", str(SCHEMA_VERSION))
        self._set_meta("settings", json.dumps(settings_dict, sort_keys=True))
        run = int(self._meta("runs") or 0) + 1
        self._set_meta("runs", str(run))
        return run

    # -- pages ----------------------------------------------------------------------------

    def known_pid(self, page_id: str, source: str | None = None) -> int | None:
        """The page with this id (from this source file, when given)."""
        if source is None:
            row = self.db.execute("SELECT pid FROM pages WHERE id=? ORDER BY pid LIMIT 1", (page_id,)).fetchone()
        else:
            row = self.db.execute("SELECT pid FROM pages WHERE id=? AND source=?", (page_id, source)).fetchone()
        return row[0] if row else None

    def has_payload(self, payload_digest: str) -> bool:
        """Whether a stored page has this payload digest (its run's model counted the payload)."""
        row = self.db.execute("SELECT 1 FROM pages WHERE payload_digest=? LIMIT 1", (payload_digest,)).fetchone()
        return row is not None

    def stored_pages(self) -> Iterator[tuple[str, str, str | None]]:
        """(id, source, payload digest) of every stored page (what an engine whose workers
        cannot ask the index is told it holds)."""
        yield from self.db.execute("SELECT id, source, payload_digest FROM pages")

    def mark_seen(self, pid: int) -> None:
        if self._checkpointed:  # the run it was seen in before, for undo_checkpoint
            self.db.execute(
                "INSERT OR IGNORE INTO checkpoint_seen SELECT pid, seen_run FROM pages WHERE pid=? AND seen_run!=?",
                (pid, self.run),
            )
        self.db.execute("UPDATE pages SET seen_run=? WHERE pid=?", (self.run, pid))

    def add_page(self, row: dict[str, Any]) -> int:
        """Store a page. ``row`` has the pages columns; ``warc_offset`` and ``http_status``
        (ints, or None) and ``metadata`` (a JSON-serialisable dict, or None; stored as JSON
        text) may be left out."""
        cur = self.db.execute(_INSERT_PAGE.format(pid="", pid_value=""), self._page_params(row))
        return int(cur.lastrowid)

    def _page_params(self, row: dict[str, Any]) -> dict[str, Any]:
        """The INSERT's parameters for one page row (add_page's)."""
        if not self.store_text and row.get("text") is not None and not text_decides_kind(row):
            row = {**row, "text": None}  # the lean index: explain reads it back from the record
        metadata = row.get("metadata")
        if metadata is not None and not isinstance(metadata, str):
            metadata = json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=str)
        offset, status = row.get("warc_offset"), row.get("http_status")
        return {
            **row,
            "seen_run": self.run,
            "warc_offset": offset if isinstance(offset, int) else None,
            "metadata": metadata,
            "http_status": status if isinstance(status, int) else None,
        }

    def add_fingerprints(self, pid: int, features: dict[str, bytes], keys: dict[str, list[int]]) -> None:
        self.db.executemany(_INSERT_FEATURE, [(algo, pid, data) for algo, data in features.items()])
        self.db.executemany(_INSERT_KEY, [(algo, key, pid) for algo, ks in keys.items() for key in ks])

    def page_batch(self) -> PageBatch:
        """A writer of pages that holds them until ``flush`` (dedup's pass 2)."""
        return PageBatch(self)

    def drop_deferred_indexes(self, which: tuple[str, ...] | None = None) -> list[str]:
        """Drop the secondary indexes a bulk insert pays for (DEFERRED_INDEXES, or ``which``),
        in the caller's transaction; their CREATE statements, for ``create_indexes`` after the
        insert. Opening the index creates any that are missing (the schema), so a run killed in
        between leaves an index that is whole again when next opened."""
        which = DEFERRED_INDEXES if which is None else which
        names = ",".join("?" * len(which))
        rows = self.db.execute(f"SELECT name, sql FROM sqlite_master WHERE type='index' AND name IN ({names})", which)
        created = []
        for name, sql in rows.fetchall():
            self.db.execute(f"DROP INDEX {name}")
            created.append(sql)
        return created

    def create_indexes(self, statements: list[str]) -> None:
        for sql in statements:
            self.db.execute(sql)

    def begin(self) -> None:
        self.db.execute("BEGIN")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        """Roll back an open transaction; the index stays open."""
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def abort(self) -> None:
        """Roll back an open transaction (what it wrote is lost) and close the index."""
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        except sqlite3.ProgrammingError:
            pass  # already closed
        finally:
            self.db.close()

    def page_ident(self, pid: int) -> tuple[str, str]:
        """(id, url) of a page: what the outputs name it by, without reading its text."""
        return self.db.execute("SELECT id, url FROM pages WHERE pid=?", (pid,)).fetchone()

    def page(self, pid: int) -> dict[str, Any] | None:
        cur = self.db.execute("SELECT * FROM pages WHERE pid=?", (pid,))
        row = cur.fetchone()
        return dict(zip([c[0] for c in cur.description], row)) if row else None

    def find_page(self, ref: str) -> int | None:
        """A page by id, else by URL (the first crawled)."""
        pid = self.known_pid(ref)
        if pid is not None:
            return pid
        row = self.db.execute("SELECT pid FROM pages WHERE url=? ORDER BY pid LIMIT 1", (ref,)).fetchone()
        return row[0] if row else None

    def pages_for_clustering(self, pids: Iterable[int] | None = None) -> Iterator[tuple[int, str, int, str | None]]:
        """(pid, id, text_len, crawl_date) of every page (or of ``pids``), in pid order."""
        if pids is None:
            yield from self.db.execute("SELECT pid, id, text_len, crawl_date FROM pages ORDER BY pid")
            return
        rows = [self.db.execute("SELECT pid, id, text_len, crawl_date FROM pages WHERE pid=?", (p,)).fetchone() for p in pids]
        yield from sorted(r for r in rows if r is not None)

    def page_count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]

    # -- fingerprints ---------------------------------------------------------------------

    def features_of(self, algo: str, pids: Iterable[int]) -> dict[int, bytes]:
        """{pid: features} of one algorithm for many pages (those that have them), read in
        a few queries rather than one per page."""
        pids, out = list(pids), {}
        for chunk, marks in pid_chunks(pids):
            out.update(self.db.execute(f"SELECT pid, data FROM features WHERE algo=? AND pid IN ({marks})", (algo, *chunk)))
        return out

    def idents(self, pids: Iterable[int]) -> dict[int, tuple[str, str, str | None]]:
        """{pid: (id, url, cluster)} of many pages, read in a few queries."""
        pids, out = list(pids), {}
        for chunk, marks in pid_chunks(pids):
            rows = self.db.execute(f"SELECT p.pid, p.id, p.url, c.cluster FROM pages p LEFT JOIN clusters c USING (pid) WHERE p.pid IN ({marks})", chunk)
            out.update((pid, (page_id, url, cluster)) for pid, page_id, url, cluster in rows)
        return out

    def features(self, algo: str, pid: int) -> bytes | None:
        row = self.db.execute("SELECT data FROM features WHERE algo=? AND pid=?", (algo, pid)).fetchone()
        return row[0] if row else None

    def buckets(self, algo: str) -> Iterator[list[int]]:
        """The pids sharing each candidate key of one algorithm (buckets of two or more)."""
        # Every key's rows, in the order of keys_by_key (which holds them all): _buckets leaves
        # out the keys of one page. Cheaper than SQLite finding the shared keys first (a
        # GROUP BY and a lookup a key): corpus-10000-shared's MinHash buckets 0.20 -> 0.11
        # CPU-s, corpus-5000's (most keys of one page) 0.055 -> 0.042.
        yield from _buckets(self.db.execute("SELECT key, pid FROM keys WHERE algo=? ORDER BY key, pid", (algo,)))

    def buckets_with_new(self, algo: str, first_new: int) -> Iterator[list[int]]:
        """The buckets (as ``buckets``: two or more pids, sorted) of the keys of one algorithm
        that a page above ``first_new`` holds: what adding those pages changed."""
        # A page's keys are stored with it and pages in pid order, so the keys rows of the new
        # pages are the last rowids: found by reading back from the end, not by a scan of all
        # (``+algo``: keeps SQLite on the rowid range rather than the algorithm's whole index;
        # ``+pid``: off keys_by_pid, whose range pid <= first_new is every older page's keys).
        edge = self.db.execute("SELECT rowid FROM keys WHERE +pid<=? ORDER BY rowid DESC LIMIT 1", (first_new,)).fetchone()
        new_keys = self.db.execute(
            "SELECT DISTINCT key FROM keys WHERE rowid>? AND +algo=? AND pid>? ORDER BY key", (edge[0] if edge else 0, algo, first_new)
        ).fetchall()
        for (key,) in new_keys:  # one index lookup per key (a join would walk all the algorithm's keys)
            pids = self.bucket(algo, key)
            if len(pids) > 1:
                yield pids

    def pids_after(self, pid: int) -> list[int]:
        """The pids above ``pid`` (the pages added after it), in order."""
        return [r[0] for r in self.db.execute("SELECT pid FROM pages WHERE pid>? ORDER BY pid", (pid,))]

    def max_pid(self) -> int:
        """The highest pid stored (0 for an empty index): pages added later have higher ones."""
        return self.db.execute("SELECT COALESCE(MAX(pid), 0) FROM pages").fetchone()[0]

    def pids_with_key(self, algo: str, key: int, limit: int) -> list[int]:
        """At most ``limit`` pages holding this candidate key, the latest stored first (a
        query bounds an oversized bucket without reading it whole)."""
        rows = self.db.execute(
            "SELECT DISTINCT pid FROM keys WHERE algo=? AND key=? ORDER BY pid DESC LIMIT ?", (algo, key, limit)
        )
        return [r[0] for r in rows]

    def pids_with_payload(self, payload_digest: str, limit: int, earliest: bool = False) -> list[int]:
        """At most ``limit`` response pages with this payload digest, the latest stored first
        (``earliest``: the first stored first)."""
        order = "ASC" if earliest else "DESC"
        rows = self.db.execute(
            # +kind: SQLite would otherwise walk pages_kind, every response of the index.
            f"SELECT pid FROM pages WHERE payload_digest=? AND +kind='response' ORDER BY pid {order} LIMIT ?",
            (payload_digest, limit),
        )
        return [r[0] for r in rows]

    def cluster_row(self, pid: int) -> tuple[str, bool, int, int | None] | None:
        """(cluster, keep, size, kept pid) of a page, or None when it is in no cluster."""
        row = self.db.execute(
            "SELECT c.cluster, c.keep, (SELECT COUNT(*) FROM clusters s WHERE s.cluster=c.cluster),"
            " (SELECT k.pid FROM clusters k WHERE k.cluster=c.cluster AND k.keep=1 ORDER BY k.pid LIMIT 1)"
            " FROM clusters c WHERE c.pid=?",
            (pid,),
        ).fetchone()
        return (row[0], bool(row[1]), row[2], row[3]) if row else None

    def cluster_members(self) -> Iterator[tuple[str, int, str, str, int]]:
        """(cluster, pid, id, url, keep) of every clustered page, by cluster then pid."""
        yield from self.db.execute(
            "SELECT c.cluster, p.pid, p.id, p.url, c.keep FROM clusters c JOIN pages p USING (pid) ORDER BY c.cluster, p.pid"
        )

    def counts(self) -> dict[str, int]:
        """Pages, clusters, edges and finished runs of the index."""
        one = lambda sql: self.db.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "pages": one("SELECT COUNT(*) FROM pages"),
            "clusters": one("SELECT COUNT(DISTINCT cluster) FROM clusters"),
            "edges": one("SELECT COUNT(*) FROM edges"),
            "runs": int(self._meta("runs") or 0),
        }

    def cluster_of_pid(self, pid: int) -> str | None:
        row = self.db.execute("SELECT cluster FROM clusters WHERE pid=?", (pid,)).fetchone()
        return row[0] if row else None

    def stored_settings(self) -> dict[str, Any] | None:
        """The settings the index was built with (Settings.to_dict), or None (no run yet)."""
        stored = self._meta("settings")
        return json.loads(stored) if stored is not None else None

    def shared_keys(self, algo: str, a: int, b: int) -> list[int]:
        # ``+algo``: SQLite would otherwise walk the algorithm's keys (keys_by_key) for a page's.
        rows = self.db.execute(
            "SELECT key FROM keys WHERE +algo=? AND pid=? INTERSECT SELECT key FROM keys WHERE +algo=? AND pid=?",
            (algo, a, algo, b),
        )
        return [r[0] for r in rows]

    def bucket(self, algo: str, key: int) -> list[int]:
        """The pids holding one candidate key of one algorithm, sorted."""
        return [r[0] for r in self.db.execute("SELECT DISTINCT pid FROM keys WHERE algo=? AND key=? ORDER BY pid", (algo, key))]

    def page_keys(self, algo: str, pid: int) -> list[int]:
        """One page's candidate keys of one algorithm (``+algo``: by keys_by_pid, not a walk
        of the algorithm's keys)."""
        return [r[0] for r in self.db.execute("SELECT DISTINCT key FROM keys WHERE +algo=? AND pid=?", (algo, pid))]

    def revisit_pairs(self) -> Iterator[tuple[int, int]]:
        """(original response pid, revisit pid) joined by payload digest."""
        yield from self.db.execute(
            "SELECT MIN(o.pid), r.pid FROM pages r JOIN pages o"
            " ON o.payload_digest = r.refers_to_digest AND o.kind = 'response'"
            " WHERE r.kind = 'revisit' GROUP BY r.pid"
        )

    def orphan_revisits(self) -> list[tuple[str, str]]:
        """Revisits of this run whose original response is not in the index: (id, url)."""
        return list(
            self.db.execute(
                "SELECT r.id, r.url FROM pages r WHERE r.kind='revisit' AND r.seen_run=? AND NOT EXISTS"
                " (SELECT 1 FROM pages o WHERE o.kind='response' AND o.payload_digest = r.refers_to_digest)",
                (self.run,),
            )
        )

    # -- edges and clusters ---------------------------------------------------------------

    def replace_edges(self, edges: Iterable[tuple], scored: bool = False) -> None:
        """Store these edges in place of all (rows as ``add_edges`` takes them)."""
        # Into the emptied table, its indexes built after the rows as pass 2 builds the keys'
        # (one sort each, not a B-tree kept in order through every insert): corpus-5000's
        # 150,303 edges 1.07-1.64 CPU-s -> 0.52-0.71. Dropped first, the delete has none to update.
        deferred = self.drop_deferred_indexes(EDGE_INDEXES)
        self.db.execute("DELETE FROM edges")
        self._set_meta("edges_replaced", str(int(self._meta("edges_replaced") or 0) + 1))  # the stored held rounds are stale
        self.add_edges(edges, scored)
        self.create_indexes(deferred)

    def add_edges(self, edges: Iterable[tuple], scored: bool = False) -> None:
        """Store new edges beside the others (incremental matching: pairs with a new page):
        (a, b, kind, evidence JSON, guard score), the score computed from the evidence when
        left out. ``scored``: every row has its score (given to SQLite as they are, no Python
        call a row)."""
        rows = edges if scored else _scored(edges)
        self.db.executemany("INSERT OR REPLACE INTO edges (a, b, kind, evidence, score) VALUES (?, ?, ?, ?, ?)", rows)

    def edge(self, a: int, b: int) -> tuple[int, int, str, str] | None:
        return self.db.execute("SELECT a, b, kind, evidence FROM edges WHERE a=? AND b=?", (a, b)).fetchone()

    def delete_edges(self, pairs: Iterable[tuple[int, int]]) -> None:
        self.db.executemany("DELETE FROM edges WHERE a=? AND b=?", pairs)

    def edges_touching(self, pid: int) -> list[tuple[int, int, str, str]]:
        """(a, b, kind, evidence) of the edges of one page, either end."""
        return self.db.execute(
            "SELECT a, b, kind, evidence FROM edges WHERE a=? UNION ALL SELECT a, b, kind, evidence FROM edges WHERE b=? AND a!=?",
            (pid, pid, pid),
        ).fetchall()

    def later_edges_with(self, algo: str, pids: Iterable[int]) -> list[tuple[int, int]]:
        """(a, b) of the edges from these pages (each the smaller pid, ``a``) whose evidence
        holds an item of ``algo``: found in SQLite by the head ``match.evidence_json`` writes
        for it, so no evidence reaches Python (a bucket that outgrew max_bucket asks this of
        its 200 older members, whose edges are near copies' hundreds each)."""
        head = '{"algorithm": ' + json.dumps(algo, ensure_ascii=False) + ", "
        out: list[tuple[int, int]] = []
        for chunk, marks in pid_chunks(sorted(set(pids))):
            out += self.db.execute(f"SELECT a, b FROM edges WHERE a IN ({marks}) AND instr(evidence, ?) > 0", (*chunk, head)).fetchall()
        return out

    def scored_edges(self, pids: Iterable[int], kinds: Iterable[str]) -> tuple[list[tuple[int, int, str, float]], list[tuple[int, int, str, float]]]:
        """(a, b, kind, guard score) of the edges of ``kinds`` of these pages: those where the
        page is ``a`` (the smaller pid), and those where it is ``b``; read from the score
        indexes (no evidence). Walking a component, each edge comes once as the first."""
        pids, kinds = sorted(set(pids)), sorted(set(kinds))
        sides: tuple[list, list] = ([], [])
        kind_marks = ",".join("?" * len(kinds))
        for chunk, marks in pid_chunks(pids):
            for side, rows in zip("ab", sides):
                sql = f"SELECT a, b, kind, score FROM edges WHERE {side} IN ({marks}) AND kind IN ({kind_marks})"
                rows += self.db.execute(sql, (*chunk, *kinds)).fetchall()
        return tuple([r if r[3] is not None else (*r[:3], self._score(r[0], r[1])) for r in rows] for rows in sides)  # type: ignore[return-value]

    def held_stamp(self) -> str:
        """What a held component stored now is valid for (``held_fresh``): how many times
        every edge was replaced, and the last pid stored (its rounds know every page up to it)."""
        return f"v2:{self._meta('edges_replaced') or 0}:{self.max_pid()}"

    def held_fresh(self, stamp: str, members: Iterable[int], kinds: Iterable[str], below: int) -> bool:
        """Whether a held component stored with ``stamp`` still has the edges it was stored
        with, those before pid ``below`` (the pages of the add being placed): no edge was
        replaced since, and no edge of ``kinds`` joins a member to a page stored after it
        (an add whose rounds were not stored with it: a dedup run's, or an older writer's).
        Edges between older pages change otherwise only when evidence is retracted, and that
        drops the components it touches (``drop_held``). Costs the edges of the pages stored
        since, not those of the component."""
        version, replaced, upto = (stamp.split(":") + ["", "", ""])[:3]
        if version != "v2" or replaced != str(self._meta("edges_replaced") or 0) or not upto.isdigit():
            return False  # an older stamp (schema 3's edge sums), or a dedup run matched everything again
        kinds = sorted(set(kinds))
        sql = f"SELECT DISTINCT a FROM edges WHERE b > ? AND b < ? AND kind IN ({','.join('?' * len(kinds))})"
        later = {a for (a,) in self.db.execute(sql, (int(upto), below, *kinds))}
        return not later or later.isdisjoint(members)

    def held_components(self, pids: Iterable[int]) -> dict[int, tuple[str, bytes]]:
        """{component: (stamp, data)} of the held components stored that hold these pages."""
        found = self._held_of(pids)
        rows = (self.db.execute("SELECT stamp, data FROM held WHERE component=?", (c,)).fetchone() for c in sorted(found))
        return {c: (row[0], row[1]) for c, row in zip(sorted(found), rows) if row is not None}

    def _held_of(self, pids: Iterable[int]) -> set[int]:
        """The stored held components holding any of these pages."""
        found: set[int] = set()
        for chunk, marks in pid_chunks(sorted(set(pids))):
            found.update(r[0] for r in self.db.execute(f"SELECT component FROM held_pages WHERE pid IN ({marks})", chunk))
        return found

    def store_held(self, rows: Iterable[tuple[int, str, bytes, list[int]]]) -> None:
        """Store held components (component, stamp, data, members), each in place of the
        stored ones that held any of its members. A component stored again with more members
        (an add) writes the rows of its new members only."""
        for component, stamp, data, members in rows:
            had = {r[0] for r in self.db.execute("SELECT pid FROM held_pages WHERE component=?", (component,))}
            new = set(members) - had
            self._drop_components(self._held_of(new) - {component})
            self.db.executemany("DELETE FROM held_pages WHERE pid=?", [(m,) for m in sorted(had - set(members))])
            self.db.execute("INSERT OR REPLACE INTO held VALUES (?, ?, ?)", (component, stamp, data))
            self.db.executemany("INSERT OR REPLACE INTO held_pages VALUES (?, ?)", [(m, component) for m in sorted(new)])

    def replace_held(self, rows: Iterable[tuple[int, str, bytes, list[int]]]) -> None:
        """Store these held components in place of every stored one (a run that clustered
        every page)."""
        self.db.execute("DELETE FROM held")
        self.db.execute("DELETE FROM held_pages")
        for component, stamp, data, members in rows:
            self.db.execute("INSERT INTO held VALUES (?, ?, ?)", (component, stamp, data))
            self.db.executemany("INSERT INTO held_pages VALUES (?, ?)", [(m, component) for m in members])

    def drop_held(self, pids: Iterable[int]) -> None:
        """Forget the stored held components holding these pages (their edges changed)."""
        self._drop_components(self._held_of(pids))

    def _drop_components(self, components: Iterable[int]) -> None:
        for c in sorted(components):
            self.db.execute("DELETE FROM held WHERE component=?", (c,))
            self.db.execute("DELETE FROM held_pages WHERE component=?", (c,))

    def _score(self, a: int, b: int) -> float:
        """The guard score of an edge stored without one (written by hand, not add_edges)."""
        from pagetwin.match import stored_guard_score

        return stored_guard_score(self.edge(a, b)[3])

    def set_clusters(self, rows: Iterable[tuple[int, str, int]]) -> None:
        """Replace the cluster rows of these pages only (the others' are kept); a row stored
        as it is already is not written again (an add to a large cluster changes a few)."""
        rows = list(rows)
        have: dict[int, tuple[str, int]] = {}
        for chunk, marks in pid_chunks([r[0] for r in rows]):
            have.update((pid, (c, k)) for pid, c, k in self.db.execute(f"SELECT pid, cluster, keep FROM clusters WHERE pid IN ({marks})", chunk))
        self.db.executemany("INSERT OR REPLACE INTO clusters VALUES (?, ?, ?)", [r for r in rows if have.get(r[0]) != (r[1], r[2])])

    def edges(self) -> Iterator[tuple[int, int, str, str]]:
        yield from self.db.execute("SELECT a, b, kind, evidence FROM edges ORDER BY a, b")

    def replace_clusters(self, rows: Iterable[tuple[int, str, int]]) -> None:
        self.db.execute("DELETE FROM clusters")
        self.db.executemany("INSERT INTO clusters VALUES (?, ?, ?)", rows)

    def run_clusters(self) -> Iterator[tuple[str, str, str, int]]:
        """(id, url, cluster, keep) for every page seen in this run, in input order."""
        yield from self.db.execute(
            "SELECT p.id, p.url, c.cluster, c.keep FROM pages p JOIN clusters c USING (pid)"
            " WHERE p.seen_run=? ORDER BY p.pid",
            (self.run,),
        )

    def kept_pages(self) -> set[tuple[str, str]]:
        """(id, source) of the pages of this run kept in their cluster."""
        return set(
            self.db.execute(
                "SELECT p.id, p.source FROM pages p JOIN clusters c USING (pid) WHERE p.seen_run=? AND c.keep=1",
                (self.run,),
            )
        )

    def cluster_sizes(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT cluster, COUNT(*) FROM clusters GROUP BY cluster"))

    def cluster_of(self, page_id: str, source: str) -> dict[str, Any] | None:
        """The cluster of the page (id, absolute source): {"cluster", "size", "keep",
        "same_text" (its main text is the kept page's: ``same_text``), "kept": {"id", "url",
        "source"}}, or None when the index does not hold it or it is in no cluster."""
        row = self.db.execute(
            "SELECT p.pid, c.cluster, c.keep, p.text FROM pages p JOIN clusters c USING (pid) WHERE p.id=? AND p.source=?",
            (page_id, source),
        ).fetchone()
        if row is None:
            return None
        pid, cluster, keep, text = row
        size = self.db.execute("SELECT COUNT(*) FROM clusters WHERE cluster=?", (cluster,)).fetchone()[0]
        kept = self.db.execute(
            "SELECT p.pid, p.id, p.url, p.source, p.text FROM clusters c JOIN pages p USING (pid) WHERE c.cluster=? AND c.keep=1"
            " ORDER BY p.pid LIMIT 1",
            (cluster,),
        ).fetchone()
        kept_pid, kept_id, kept_url, kept_source, kept_text = kept if kept else (pid, page_id, "", source, text)
        return {
            "pid": pid,
            "cluster": cluster,
            "size": size,
            "keep": bool(keep),
            "same_text": self.same_text((pid, text), (kept_pid, kept_text)),
            "kept": {"id": kept_id, "url": kept_url, "source": kept_source},
        }

    def same_text(self, one: tuple[int, bytes | None], other: tuple[int, bytes | None]) -> bool:
        """Whether two pages ((pid, stored text)) have the same main text: the exact
        algorithm's digests of their normalized texts (what its evidence calls same_text),
        stored for every page, a lean index's too; without them (exact not among
        match.algorithms) their stored texts (zlib of the same text at one level: the same
        bytes), which a lean page has not."""
        digests = {pid: json.loads(data).get("t") for pid, data in self.features_of("exact", [one[0], other[0]]).items()}
        if len(digests) == len({one[0], other[0]}):
            return bool(digests[one[0]]) and digests[one[0]] == digests[other[0]]
        return one[1] is not None and one[1] == other[1]

    def kept_with_payload(self, payload_digest: str) -> dict[str, Any] | None:
        """The first response page kept in its cluster whose payload digest is this one:
        {"id", "url", "source", "crawl_date"}, or None."""
        row = self.db.execute(
            "SELECT p.id, p.url, p.source, p.crawl_date FROM pages p JOIN clusters c USING (pid)"
            " WHERE p.payload_digest=? AND p.kind='response' AND c.keep=1 ORDER BY p.pid LIMIT 1",
            (payload_digest,),
        ).fetchone()
        return dict(zip(("id", "url", "source", "crawl_date"), row)) if row else None

    def kept_documents(self) -> Iterator[dict[str, Any]]:
        """The page kept in each cluster, in the order the pages were added: {"id", "url",
        "source", "warc_offset", "metadata" (dict or None), "cluster", "cluster_size",
        "crawl_date", "lang", "title", "text" (compressed, pipeline.decompress_text)}."""
        cols = self.page_columns()
        offset = "p.warc_offset" if "warc_offset" in cols else "NULL"
        metadata = "p.metadata" if "metadata" in cols else "NULL"
        cur = self.db.execute(
            f"SELECT p.id, p.url, p.source, {offset}, {metadata}, c.cluster, s.n, p.crawl_date, p.lang, p.title, p.text"
            " FROM pages p JOIN clusters c USING (pid)"
            " JOIN (SELECT cluster, COUNT(*) AS n FROM clusters GROUP BY cluster) s ON s.cluster = c.cluster"
            " WHERE c.keep=1 AND p.kind='response' ORDER BY p.pid"
        )
        names = ("id", "url", "source", "warc_offset", "metadata", "cluster", "cluster_size", "crawl_date", "lang", "title", "text")
        for row in cur:
            doc = dict(zip(names, row))
            if doc["metadata"] is not None:
                try:
                    doc["metadata"] = json.loads(doc["metadata"])
                except ValueError:
                    doc["metadata"] = None
            yield doc

    # -- checkpoints (an unfinished dedup run) ---------------------------------------------

    def checkpoint(self) -> Checkpoint | None:
        """The unfinished run's checkpoint, or None (every run finished)."""
        try:
            rec = dict(self.db.execute("SELECT key, value FROM checkpoint"))
        except sqlite3.OperationalError:  # an older index opened read only: no such table
            return None
        if "run" not in rec:
            return None
        first_pid = int(rec["first_pid"])
        pages = self.db.execute("SELECT COUNT(*) FROM pages WHERE pid>?", (first_pid,)).fetchone()[0]
        settings = rec.get("before_settings")
        return Checkpoint(
            run=int(rec["run"]),
            inputs_key=str(rec["inputs_key"]),
            first_pid=first_pid,
            pages=pages,
            learned=bytes(rec["learned"]) if rec.get("learned") is not None else None,
            before_settings=str(settings) if settings is not None else None,
            before_runs=int(rec["before_runs"]),
        )

    def start_checkpoint(self, inputs_key: str, learned: bytes | None) -> None:
        """Record this run as unfinished (in the caller's transaction): what undo_checkpoint
        needs to put the index back as it was (the models, the meta, the pids stored so far)
        and what a resumed run needs (the model learned, ``learned``)."""
        before_settings, before_runs = self._before
        first_pid = self.db.execute("SELECT COALESCE(MAX(pid), 0) FROM pages").fetchone()[0]
        self._clear_checkpoint_tables()
        record = {
            "run": self.run,
            "inputs_key": inputs_key,
            "first_pid": first_pid,
            "learned": learned,
            "before_settings": before_settings,
            "before_runs": before_runs,
            "state": "pass2",
        }
        self.db.executemany("INSERT INTO checkpoint VALUES (?, ?)", record.items())
        self.db.execute("INSERT INTO checkpoint_models SELECT name, data FROM models")
        self._checkpointed = True

    def clear_checkpoint(self) -> None:
        """The run is finished (in the caller's transaction, the one that stores its clusters)."""
        self._clear_checkpoint_tables()
        self._checkpointed = False

    def _clear_checkpoint_tables(self) -> None:
        for table in ("checkpoint", "checkpoint_models", "checkpoint_seen"):
            self.db.execute(f"DELETE FROM {table}")

    def undo_checkpoint(self) -> Checkpoint | None:
        """Put the index back as it was before the unfinished run, in one transaction: the
        pages it stored (pid above first_pid) with their features and keys deleted, the pages
        of earlier runs it marked seen given back their run, the models and the meta restored.
        Edges and clusters are as before it already (a run replaces them when it finishes).
        Returns the checkpoint undone (None when there was none)."""
        cp = self.checkpoint()
        if cp is None:
            return None
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.execute(
                "UPDATE pages SET seen_run=(SELECT s.seen_run FROM checkpoint_seen s WHERE s.pid=pages.pid)"
                " WHERE pid IN (SELECT pid FROM checkpoint_seen)"
            )
            for table in ("keys", "features", "pages"):
                self.db.execute(f"DELETE FROM {table} WHERE pid>?", (cp.first_pid,))
            self.db.execute("DELETE FROM models")
            self.db.execute("INSERT INTO models SELECT name, data FROM checkpoint_models")
            if cp.before_settings is None:
                self.db.execute("DELETE FROM meta WHERE key='settings'")
            else:
                self._set_meta("settings", cp.before_settings)
            self._set_meta("runs", str(cp.before_runs))
            for table in ("held", "held_pages"):  # rounds may name its pages, or know pids it frees for reuse
                self.db.execute(f"DELETE FROM {table}")
            self._clear_checkpoint_tables()
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return cp

    # -- models ---------------------------------------------------------------------------

    def save_model(self, name: str, data: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO models VALUES (?, ?)", (name, data))

    def load_model(self, name: str) -> bytes | None:
        row = self.db.execute("SELECT data FROM models WHERE name=?", (name,)).fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self.db.close()


_PAGE_COLUMNS = (
    "id", "url", "host", "source", "kind", "crawl_date", "text_len", "payload_digest", "refers_to_digest", "lang",
    "title", "text", "error", "seen_run", "warc_offset", "metadata", "http_status",
)  # fmt: skip
_INSERT_PAGE = (
    f"INSERT INTO pages ({{pid}}{', '.join(_PAGE_COLUMNS)}) VALUES ({{pid_value}}{', '.join(':' + c for c in _PAGE_COLUMNS)})"
)
_INSERT_FEATURE = "INSERT OR REPLACE INTO features VALUES (?, ?, ?)"
_INSERT_KEY = "INSERT INTO keys VALUES (?, ?, ?)"
# Indexes that a new index's pass 2 builds after its pages are in, not row by row: sorting the
# keys once is cheaper than keeping two B-trees of them in order through every insert. No
# query of pass 2 reads them (it asks for pages by (id, source) and by pid).
DEFERRED_INDEXES = ("keys_by_key", "keys_by_pid", "pages_payload", "pages_url", "pages_kind")
# The edges' secondary indexes, built after replace_edges' rows are in.
EDGE_INDEXES = ("edges_scored_a", "edges_scored_b")


class PageBatch:
    """Pages added as ``Index.add_page`` and ``add_fingerprints`` would add them, held and
    written with one ``executemany`` per table at ``flush`` (in the caller's transaction). The
    pids are the ones SQLite would give (one past the largest, in order), and ``known_pid``
    sees the pages held, so that the index, asked through the batch, answers as if each page
    had been written when added. On an index that held no page when the batch began (a new
    index's pass 2), the pages it wrote are its only ones: it marks each one's (id, source) in
    a bitmap of _WRITTEN_BITS bits (by a digest of it: 2 MB however many pages), and a page
    whose bit is not set is not stored, found without a query (corpus-10000-shared: 9,996
    lookups, ~0.19 CPU-s); a page whose bit is set (the page, or another of the same bit) is
    asked of the index."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._next = int(index.db.execute("SELECT COALESCE(MAX(pid), 0) + 1 FROM pages").fetchone()[0])
        self._pages: list[dict[str, Any]] = []
        self._held: dict[tuple[str, str], int] = {}
        self._written: bytearray | None = bytearray(_WRITTEN_BITS // 8) if self._next == 1 else None  # _ident_bit of the pages flushed, set
        self._features: list[tuple[str, int, bytes]] = []
        self._keys: list[tuple[str, int, int]] = []

    def __len__(self) -> int:
        return len(self._pages)

    def add_page(self, row: dict[str, Any]) -> int:
        ident = (row["id"], row["source"])
        if ident in self._held:  # what the INSERT of a second one would say
            raise sqlite3.IntegrityError("UNIQUE constraint failed: pages.id, pages.source")
        pid = self._next
        self._next += 1
        self._pages.append({**self.index._page_params(row), "pid": pid})
        self._held[ident] = pid
        return pid

    def add_fingerprints(self, pid: int, features: dict[str, bytes], keys: dict[str, list[int]]) -> None:
        self._features += [(algo, pid, data) for algo, data in features.items()]
        self._keys += [(algo, key, pid) for algo, ks in keys.items() for key in ks]

    def known_pid(self, page_id: str, source: str) -> int | None:
        held = self._held.get((page_id, source))
        if held is not None:
            return held
        if self._written is not None:
            bit = _ident_bit(page_id, source)
            if not self._written[bit >> 3] >> (bit & 7) & 1:
                return None
        return self.index.known_pid(page_id, source)

    def flush(self) -> None:
        """Write the pages held (pages, then features, then keys) and let them go."""
        db = self.index.db
        db.executemany(_INSERT_PAGE.format(pid="pid, ", pid_value=":pid, "), self._pages)
        db.executemany(_INSERT_FEATURE, self._features)
        db.executemany(_INSERT_KEY, self._keys)
        if self._written is not None:
            for page_id, source in self._held:
                bit = _ident_bit(page_id, source)
                self._written[bit >> 3] |= 1 << (bit & 7)
        self._pages, self._features, self._keys = [], [], []
        self._held.clear()


_WRITTEN_BITS = 1 << 24  # PageBatch's bitmap of the pages it wrote: 2 MB, 0.06% of its bits set at 10,000 pages


def _ident_bit(page_id: str, source: str) -> int:
    """The bit of a page's (id, source) in PageBatch's bitmap: of an xxh3 digest of them, so
    equal pairs get the same bit in any process; pairs of the same bit are told apart by the index."""
    return xxhash.xxh3_64_intdigest(f"{page_id}\0{source}".encode("utf-8", "surrogatepass")) & (_WRITTEN_BITS - 1)


def holds_pages_without_text(path: str | Path) -> bool:
    """Whether the index file at ``path`` holds pages stored without their main text (an
    earlier run with ``index.store_text = false``): outputs that need every kept page's text
    (``--documents``) cannot be written from it. False when there is no such file or it is no
    index (opening it says so)."""
    p = Path(path)
    if not p.is_file():
        return False
    db = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT 1 FROM pages WHERE text IS NULL AND text_len > 0 LIMIT 1").fetchone()
    except sqlite3.DatabaseError:
        return False
    finally:
        db.close()
    return row is not None


def text_decides_kind(row: dict[str, Any]) -> bool:
    """Whether the page's stored text (compressed, ``row["text"]``) changes what
    softerror.page_kind says of it (a short error page's text, a long page titled "not
    found"): a lean index keeps those few texts, so the summary's cluster kinds are the same."""
    from pagetwin.pipeline import decompress_text
    from pagetwin.softerror import page_kind

    title, status = row.get("title") or "", row.get("http_status")
    status = status if isinstance(status, int) else None
    return page_kind(title, decompress_text(row["text"]), status) != page_kind(title, "", status)


def _scored(edges: Iterable[tuple]) -> Iterator[tuple]:
    """Edge rows with their guard score (match.stored_guard_score of the evidence when left out)."""
    from pagetwin.match import stored_guard_score

    for row in edges:
        yield row if len(row) == 5 else (*row, stored_guard_score(row[3]))


def _buckets(rows: Iterable[tuple[int, int]]) -> Iterator[list[int]]:
    """(key, pid) rows sorted by key then pid, as buckets of two or more distinct pids."""
    current_key, bucket = None, []
    for key, pid in rows:
        if key != current_key:
            if len(bucket) > 1:
                yield bucket
            current_key, bucket = key, []
        if not bucket or bucket[-1] != pid:
            bucket.append(pid)
    if len(bucket) > 1:
        yield bucket


def _dotted(d: dict[str, Any], name: str) -> Any:
    for part in name.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


def incompatible_setting(new: dict[str, Any], old: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """(name, old value, new value) of the first setting that makes pages fingerprinted with
    ``new`` incomparable with an index built with ``old`` (COMPATIBILITY and the settings of
    every algorithm both use), or None."""
    for name in COMPATIBILITY + tuple(_algorithm_settings(new, old)):
        new_value, old_value = _dotted(new, name), _dotted(old, name)
        if new_value != old_value:
            return name, old_value, new_value
    return None


def index_file(path: str | Path) -> Path:
    """The index a reader is pointed at: DIR/index.sqlite for an output folder of dedup, or the
    path itself when it is a file (IndexError_ when there is none)."""
    p = Path(path)
    if p.is_dir():
        p = p / "index.sqlite"
    if not p.is_file():
        raise IndexError_(f"no index at {p} (run pagetwin dedup first, or give the index file)")
    return p


def _algorithm_settings(new: dict[str, Any], old: dict[str, Any]) -> list[str]:
    """Settings of every algorithm both runs use: their stored features must be comparable."""
    from pagetwin.fingerprints import MODULES

    both = set(_dotted(new, "match.algorithms") or []) & set(_dotted(old, "match.algorithms") or [])
    names = []
    for algo in sorted(both):
        section = MODULES.get(algo, (None, None))[1]
        for key in sorted((new.get(section) or {}).keys()):
            names.append(f"{section}.{key}")
    return names
