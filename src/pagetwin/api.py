"""The Python API over one index: pages given in memory, added and asked about one at a time
(``pagetwin.Index``; ``pagetwin query`` and ``pagetwin serve`` are layers over it).

    import pagetwin
    with pagetwin.Index.memory() as index:          # or pagetwin.Index.open("crawl.sqlite")
        index.add([{"url": "https://a.example/x", "html": html}])
        for match in index.query({"url": "https://b.example/y", "html": other}):
            print(match.id, match.kind, match.score)
        for cluster in index.clusters(min_size=2):
            print(cluster.kept.url, [m.url for m in cluster.members])

A page is a mapping with ``html`` (a str) or ``text`` (a str: a text-only document, as datatrove
writes them), and optional ``url``, ``id`` (default: the URL) and ``metadata``; or a
``(url, html)`` pair; or an object with ``id``, ``text`` and ``metadata`` attributes (a datatrove
Document). A page the index already holds (the same id, added through this API) is not added
again: adds can be retried.

Site templates and document frequencies are the index's: learned by the ``pagetwin dedup``
runs that built it, and not changed by ``add`` (a page added here is fingerprinted with the
model as it is, as ``pagetwin query`` fingerprints pages). An index created here (``memory``,
or ``open`` of a new file) has no model: pages lose page-level noise (navigation, footers,
link lists) but no site template, and keywords are weighted by density. Build the index with
``pagetwin dedup`` over a crawl first to have templates learned from it.

Each ``add`` is one transaction: the pages, the edges of the new pages (only the pairs with a
new page are verified, ``match.find_new_edges``) and the clusters of the components they
touch (``app.recluster``: as one run over all the pages would form them) are committed before
``add`` returns, so a page whose ``add`` returned survives a crash of the process (kill -9)
and of the machine (power loss): the writer's commits are SQLite WAL commits with
``synchronous=FULL`` (the WAL is fsync'd before the commit returns; a disk that acknowledges
writes it has not stored is beyond any of this). A writable index holds the clusters it has
made in memory (``pagetwin.held``): a later page joining one of them is placed without reading
its component again; each add stores the rounds of the clusters it changed with its pages (as
a dedup run stores those of its larger components), and the next writer starts from them,
after a kill -9 too (a component whose edges changed since is read again). A writable index
holds the index's lock (``index.lock``) while open: one writer at a time (a ``pagetwin dedup``
on it waits, then gives up with a message), any number of readers (``Index.open(path,
readonly=True)``, ``pagetwin query``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index as _Store
from pagetwin.index.sqlite import IndexError_, incompatible_setting
from pagetwin.model import Page

__all__ = ["Index", "Match", "QueryResult", "Added", "Cluster", "Member", "PageError", "IndexError_"]

_SOURCE = ""  # the source of a page added in memory (dedup's pages have their input file's path)


class PageError(ValueError):
    """A page given to ``add`` or ``query`` cannot be used (no HTML or text, a field of the
    wrong type); nothing of its batch was added."""


@dataclass(frozen=True)
class Match:
    """A stored page that a page matches: its kind ("exact": the same payload; "duplicate",
    "partial", "revisit"), its cluster, and each algorithm's evidence (score, passed, detail)."""

    id: str
    url: str
    cluster: str | None
    kind: str
    evidence: tuple[dict[str, Any], ...]

    @property
    def score(self) -> float:
        """The strongest evidence's score."""
        return max((e["score"] for e in self.evidence), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "url": self.url, "cluster": self.cluster, "kind": self.kind, "evidence": list(self.evidence)}


@dataclass(frozen=True)
class QueryResult:
    """What the index holds of one page: its matches, strongest first (iterate over it);
    ``error`` when the page could not be analysed (it then matches by payload only)."""

    id: str
    url: str
    matches: tuple[Match, ...]
    error: str | None = None

    def __iter__(self) -> Iterator[Match]:
        return iter(self.matches)

    def __len__(self) -> int:
        return len(self.matches)

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "url": self.url, "matches": [m.to_dict() for m in self.matches]}
        if self.error:
            row["error"] = self.error
        return row


@dataclass(frozen=True)
class Added:
    """One page of an ``add``: "added", or "known" (the index held its id already); its
    cluster after the add, whether it is the page kept, the kept page's id, the cluster's size."""

    id: str
    url: str
    status: str
    cluster: str | None
    keep: bool
    kept_id: str | None
    cluster_size: int
    error: str | None = None
    matches: tuple[Match, ...] = ()  # the stored pages it has a verified edge with, strongest first

    def to_dict(self) -> dict[str, Any]:
        row = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "matches"}
        return {**row, "matches": [m.to_dict() for m in self.matches]}


@dataclass(frozen=True)
class Member:
    id: str
    url: str
    keep: bool


@dataclass(frozen=True)
class Cluster:
    """Pages found to be copies of each other (a page with none is a cluster of one): the
    page kept, all members (kept one included) in the order they were added, and the
    cluster's kind ("content", or "soft-404", "soft-error", "http-error": see softerror)."""

    id: str
    kind: str
    kept: Member
    members: tuple[Member, ...] = field(default=())

    @property
    def size(self) -> int:
        return len(self.members)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "size": self.size, "kept": vars_of(self.kept),
            "members": [vars_of(m) for m in self.members],
        }  # fmt: skip


def vars_of(member: Member) -> dict[str, Any]:
    return {"id": member.id, "url": member.url, "keep": member.keep}


class Index:
    """An index of pages, asked about pages and added to one page or a batch at a time.

    ``Index.open(path)`` opens (or creates) an index file, ``pagetwin dedup``'s included;
    ``Index.open(path, readonly=True)`` reads one without writing a byte; ``Index.memory()``
    is an index in memory, for notebooks and tests. Use it as a context manager, or close it."""

    def __init__(self, store: _Store, settings: Settings, writable: bool, lock: Any = None) -> None:
        """Use ``open`` or ``memory``."""
        from pagetwin.app import stored_model
        from pagetwin.pipeline import Worker
        from pagetwin.query import Matcher

        self._store, self.settings, self.writable, self._lock = store, settings, writable, lock
        self._worker = Worker(settings, stored_model(store, settings))
        self._matcher = Matcher.over(store, settings, self._worker)
        self._held: Any = None  # held.Held: the clusters this writer holds, made on the first add
        self._reader: Any = None  # explain._Reader: a lean index's texts read back from their records
        if writable:  # an answered add survives power loss: SQLite syncs the WAL before each commit returns
            store.db.execute("PRAGMA synchronous=FULL")

    # -- opening --------------------------------------------------------------------------

    @classmethod
    def memory(cls, settings: Settings | None = None) -> Index:
        """A new, empty index in memory (gone when closed), built with ``settings``
        (default: Settings())."""
        settings = settings if settings is not None else Settings()
        settings.validate()
        return cls(_Store(":memory:", settings.to_dict()), settings, writable=True)

    @classmethod
    def open(cls, path: str | Path, settings: Settings | None = None, readonly: bool = False, live: bool = False) -> Index:
        """The index at ``path`` (a file, or a ``pagetwin dedup --out`` folder), created when
        missing (not with ``readonly``). An existing index keeps the settings it was built
        with: ``settings``, when given, must fingerprint pages as they do (IndexError_ naming
        the setting otherwise). Writable, it takes the index's lock (waiting up to
        ``run.lock_timeout`` seconds for a dedup run or another writer: IndexBusy).
        ``readonly`` with ``live``: a writer adds to the index while it is read (each query
        sees the adds committed before it); without, a cleanly closed index is read as a
        file that does not change. A read-only index may be used from any thread, one at a
        time."""
        if readonly:
            return cls._open_readonly(path, settings, live)
        from pagetwin.index.lock import IndexLock

        file = Path(path) / "index.sqlite" if Path(path).is_dir() else Path(path)
        stored = _peek(file) if file.exists() else None
        chosen = _chosen_settings(settings, stored, file)
        lock = IndexLock(file, chosen.run.lock_timeout, setting="run.lock_timeout").acquire()
        try:
            stored = _peek(file) if file.exists() else None  # again under the lock
            chosen = _chosen_settings(settings, stored, file)
            return cls(_Store(file, chosen.to_dict()), chosen, writable=True, lock=lock)
        except BaseException:
            lock.release()
            raise

    @classmethod
    def _open_readonly(cls, path: str | Path, settings: Settings | None, live: bool = False) -> Index:
        from pagetwin.index.sqlite import index_file
        from pagetwin.query import Matcher

        matcher = Matcher(index_file(path), settings, live=live)  # the checks of pagetwin query
        return cls(matcher.index, matcher.settings, writable=False)

    def close(self) -> None:
        """Close the index and release its lock; an ``add`` returned is already committed,
        with the clusters it changed (``pagetwin.held``: the next writer starts from them)."""
        try:
            self._held = None
            self._store.close()
        finally:
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- asking ---------------------------------------------------------------------------

    def query(self, page: Any) -> QueryResult:
        """The stored pages ``page`` matches (exact copies first, then the highest score),
        verified as ``pagetwin dedup`` verifies pairs; the index is not changed."""
        return _result(self._matcher.match(self._page(page, 0)))

    def query_many(self, pages: Iterable[Any]) -> Iterator[QueryResult]:
        """``query`` of each page, in order (every page checked before the first is asked)."""
        batch = [self._page(p, n) for n, p in enumerate(pages)]
        return (_result(self._matcher.match(page)) for page in batch)

    def query_inputs(self, inputs: list[str], stats: Any = None) -> Iterator[QueryResult]:
        """``query`` of every page of input files (WARC/ARC, HTML folders, JSONL: what
        ``pagetwin dedup`` reads), in input order; ``stats`` (sources.SourceStats) counts the
        records read (``pagetwin query``)."""
        from pagetwin.sources import SourceStats, iter_pages

        stats = stats if stats is not None else SourceStats()
        return (_result(self._matcher.match(page)) for page in iter_pages(list(inputs), self.settings.input, stats))

    def get(self, ref: str) -> dict[str, Any] | None:
        """A stored page by id (else by URL, the first stored): {"id", "url", "kind", "crawl_date",
        "lang", "title", "text", "metadata", "error", "cluster", "keep", "cluster_size",
        "kept_id"}, or None. A page of a lean index (``index.store_text = false``) has its
        text read back from its source record as ``pagetwin explain`` reads it (checked against
        what was fingerprinted); when it cannot be, "text" is "" and "text_problem" says why."""
        import json

        from pagetwin.pipeline import decompress_text

        pid = self._store.find_page(ref)
        if pid is None:
            return None
        row = self._store.page(pid)
        out = {k: row.get(k) for k in ("id", "url", "kind", "crawl_date", "lang", "title", "error")}
        out["text"] = decompress_text(row.get("text"))
        if row.get("text") is None and row.get("text_len"):
            if self._reader is None:
                from pagetwin.explain import _Reader

                self._reader = _Reader(self.settings)
            out["text"], problem = self._reader.text(self._store, pid, row)
            if problem:
                out["text_problem"] = problem
        out["metadata"] = json.loads(row["metadata"]) if row.get("metadata") else None
        return {**out, **self._cluster_fields(pid)}

    def clusters(self, min_size: int = 1) -> list[Cluster]:
        """Every cluster of at least ``min_size`` pages (2: the duplicates only), in the
        order of their first page."""
        from pagetwin.softerror import cluster_kinds

        kinds = cluster_kinds(self._store)
        groups: dict[str, list[tuple[int, Member]]] = {}
        for cluster, pid, page_id, url, keep in self._store.cluster_members():
            groups.setdefault(cluster, []).append((pid, Member(page_id, url, bool(keep))))
        out = []
        for cluster, rows in sorted(groups.items(), key=lambda item: item[1][0][0]):
            if len(rows) >= min_size:
                members = tuple(m for _, m in rows)
                kept = next((m for m in members if m.keep), members[0])
                out.append(Cluster(cluster, kinds.get(cluster, "content"), kept, members))
        return out

    def stats(self) -> dict[str, Any]:
        """Pages, clusters, duplicates (pages not kept), edges, runs, and the model it holds."""
        counts = self._store.counts()
        learned = self._worker.learned
        return {
            **counts,
            "duplicates": counts["pages"] - counts["clusters"],
            "writable": self.writable,
            "model": {"site_templates": learned.templates is not None, "doc_freq": learned.doc_freq is not None},
        }

    def __len__(self) -> int:
        return self._store.page_count()

    def __contains__(self, page_id: object) -> bool:
        return isinstance(page_id, str) and self._store.known_pid(page_id) is not None

    # -- adding ---------------------------------------------------------------------------

    def add(self, pages: Iterable[Any] | Any, on_error: str = "store") -> list[Added]:
        """Add pages (one page, or an iterable of them) and link them: their edges to the
        stored pages and to each other, then the clusters; committed before it returns.
        Every page is checked first (PageError: nothing added). ``on_error``: "store" keeps a
        page that cannot be analysed (it matches by payload only, as dedup stores it);
        "raise" refuses the batch with PageError instead, before anything is stored."""
        if not self.writable:
            raise IndexError_(f"index {self._store.path} is open read only")
        if on_error not in ("store", "raise"):
            raise ValueError(f"on_error {on_error!r}: 'store' or 'raise'")
        items = [pages] if _is_one_page(pages) else list(pages)
        batch = [self._page(p, n) for n, p in enumerate(items)]
        results = [self._worker.fingerprint(page) for page in batch]
        if on_error == "raise":
            for n, result in enumerate(results):
                if result.error:
                    raise PageError(f"page {n} ({batch[n].id}) could not be analysed: {result.error}")
        return self._store_and_link(results)

    def add_inputs(self, inputs: list[str], stats: Any = None, batch: int = 500) -> Iterator[Added]:
        """``add`` of every page of input files (WARC/ARC, HTML folders, JSONL: what
        ``pagetwin dedup`` reads), ``batch`` pages per ``add`` (each committed before its pages
        are yielded); ``stats`` (sources.SourceStats) counts the records read and skipped
        (``pagetwin add``)."""
        from itertools import islice

        from pagetwin.sources import SourceStats, iter_pages

        stats = stats if stats is not None else SourceStats()
        pages = iter_pages(list(inputs), self.settings.input, stats)
        while chunk := list(islice(pages, batch)):
            yield from self.add(chunk)

    def _store_and_link(self, results: list) -> list[Added]:
        """One transaction: the new pages, their edges, the clusters."""
        from pagetwin.app import link_index, store_page
        from pagetwin.engine import source_path

        store = self._store
        first_new = store.max_pid()
        store.begin()
        try:
            done: list[tuple[Any, int, str]] = []
            for result in results:
                pid = store.known_pid(result.page.id, source_path(result.page.source))
                status = "known" if pid is not None else "added"
                done.append((result, pid if pid is not None else store_page(store, result), status))
            if any(status == "added" for _, _, status in done):
                if self._held is None:
                    from pagetwin.held import Held

                    self._held = Held.over(store, self._worker.algorithms, self.settings)
                link_index(store, self._worker.algorithms, self.settings, first_new or None, recluster_all=False, held=self._held)
                self._held.save(store)  # with the pages: the next writer, even after a kill, starts from them
            store.commit()
        except BaseException:
            self._held = None  # it may hold what was rolled back
            store.rollback()
            raise
        return [self._added(result, pid, status) for result, pid, status in done]

    def _added(self, result: Any, pid: int, status: str) -> Added:
        fields = self._cluster_fields(pid)
        page = result.page
        return Added(page.id, page.url, status, error=result.error or None, matches=self._edges_of(pid), **fields)

    def _edges_of(self, pid: int) -> tuple[Match, ...]:
        """A stored page's verified edges as matches (ordered as ``query`` orders them)."""
        import json

        edges = self._store.edges_touching(pid)
        idents = self._store.idents(b if a == pid else a for a, b, _, _ in edges)
        found = []
        for a, b, kind, evidence in edges:
            other = b if a == pid else a
            page_id, url, cluster = idents[other]
            items = tuple(json.loads(evidence))
            rank = (kind != "revisit", -max((e["score"] for e in items), default=0.0), -len(items), other)
            found.append((rank, Match(page_id, url, cluster, kind, items)))
        return tuple(m for _, m in sorted(found, key=lambda x: x[0]))

    def _cluster_fields(self, pid: int) -> dict[str, Any]:
        row = self._store.cluster_row(pid)
        if row is None:
            return {"cluster": None, "keep": False, "kept_id": None, "cluster_size": 0}
        cluster, keep, size, kept = row
        return {"cluster": cluster, "keep": keep, "kept_id": self._store.page_ident(kept)[0] if kept else None, "cluster_size": size}

    def _page(self, obj: Any, n: int) -> Page:
        return as_page(obj, n, self.settings)


def as_page(obj: Any, n: int, settings: Settings) -> Page:
    """The Page of one page given in memory (see the module docstring); PageError naming
    page ``n`` and what is wrong."""
    from pagetwin.sources.base import Skip
    from pagetwin.sources.jsonl import FIELD_DEFAULTS, document_page

    if isinstance(obj, Page):
        return obj
    fields = _fields(obj, n)
    for name in ("url", "html", "text"):
        if fields.get(name) is not None and not isinstance(fields[name], str):
            raise PageError(f"page {n}: {name} must be a string, not {type(fields[name]).__name__}")
    if fields.get("metadata") is not None and not isinstance(fields["metadata"], Mapping):
        raise PageError(f"page {n}: metadata must be an object (a mapping)")
    page_id = fields.get("id")
    if page_id is None or page_id == "":
        page_id = fields.get("url")
    if not isinstance(page_id, (str, int)) or isinstance(page_id, bool) or page_id == "":
        raise PageError(f"page {n}: give it an id (a string) or a url")
    fields["id"] = str(page_id)
    page = document_page(fields, f"page {n}", _SOURCE, settings.input, dict(FIELD_DEFAULTS))
    if isinstance(page, Skip):
        raise PageError(f"page {n} ({fields['id']}): no html or text (a non-empty string)")
    return page


def _fields(obj: Any, n: int) -> dict[str, Any]:
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, (tuple, list)) and len(obj) == 2 and all(isinstance(x, str) for x in obj):
        return {"url": obj[0], "html": obj[1]}
    if hasattr(obj, "text") and hasattr(obj, "id"):  # a datatrove Document
        return {"id": obj.id, "text": obj.text, "metadata": getattr(obj, "metadata", None)}
    raise PageError(f"page {n}: a mapping with html or text, a (url, html) pair, or a document with id and text")


def _is_one_page(pages: Any) -> bool:
    """Whether ``add`` was given one page rather than an iterable of them."""
    if isinstance(pages, (Mapping, Page, str, bytes)):
        return True
    if isinstance(pages, tuple) and len(pages) == 2 and all(isinstance(x, str) for x in pages):
        return True
    return hasattr(pages, "text") and hasattr(pages, "id")


def _result(row: dict[str, Any]) -> QueryResult:
    matches = tuple(Match(m["id"], m["url"], m["cluster"], m["kind"], tuple(m["evidence"])) for m in row["matches"])
    return QueryResult(row["id"], row["url"], matches, row.get("error"))


def _peek(file: Path) -> dict[str, Any] | None:
    """The settings an existing index was built with (None: no run yet); IndexError_ when it
    is not an index or holds an unfinished dedup run (adding would mix into it)."""
    store = _Store.open_readonly(file)
    try:
        if store.checkpoint() is not None:
            raise IndexError_(f"index {file} holds an unfinished dedup run (resume it with pagetwin dedup --add first)")
        return store.stored_settings()
    finally:
        store.close()


def _chosen_settings(given: Settings | None, stored: dict[str, Any] | None, file: Path) -> Settings:
    """The stored settings of an existing index (``given`` checked against them), else
    ``given`` or the defaults."""
    if stored is None:
        chosen = given if given is not None else Settings()
    else:
        if given is not None:
            differing = incompatible_setting(given.to_dict(), stored)
            if differing is not None:
                name, old, new = differing
                raise IndexError_(f"index {file} was built with {name} = {old!r}; the settings given have {new!r}")
        chosen = Settings.from_dict(stored)
    chosen.validate()
    return chosen
