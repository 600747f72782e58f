"""The application core: one run of ``pagetwin dedup``, ``text``, ``keywords`` or ``templates``,
as named steps over an engine (``engine.Engine``: runners.local, runners.spark).

``dedup``: learn (pass 1: site templates, document frequencies, image hashes, what
``learned.Learning`` asks for) -> fingerprint and store (pass 2, into the index) -> link (match
and verify, the anti-chaining guard, clusters) -> write (clusters.jsonl, pairs.jsonl, Parquet,
survivors) -> summary. The engine runs the per-page passes; this process alone writes the index,
matches and clusters. ``iter_texts``, ``iter_keywords`` and ``learn_templates`` run the same
learn step (with what they need learned, as a parameter) and map one Worker method over the
pages. Each of the four validates its settings first (``Settings.validate``, ConfigError).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pagetwin.config import ConfigError, Settings
from pagetwin.engine import Engine, Progress, StoredSnapshot, source_path
from pagetwin.learned import PART_NAMES, Learned, Learning, LearnedMismatch, learned_with
from pagetwin.model import Page
from pagetwin.pipeline import PageResult, compress_text
from pagetwin.sources import SourceStats, no_pages_message

if TYPE_CHECKING:
    from pagetwin.html.templates import SiteTemplates
    from pagetwin.index.sqlite import Index, PageBatch

KEYWORD_WEIGHTINGS = ("tfidf", "density")

# -- pagetwin text, keywords, templates ---------------------------------------------------


def iter_texts(inputs: list[str], settings: Settings, stats: SourceStats | None = None) -> Iterator[dict[str, str]]:
    """{"id", "url", "text"} of every page: main content after noise and template removal,
    the site templates learned from the same inputs; and "metadata" when the input gave the
    page some (a JSONL line's or Parquet row's metadata and other fields). ``stats`` counts the
    records read."""
    settings.validate()
    learning = Learning(templates=settings.extract.templates)
    rows = _learn_then_map(_task("safe_extract"), inputs, settings, stats, learning)
    return (_text_row(page, text) for page, text in rows)


def _text_row(page: Page, text: str) -> dict[str, Any]:
    row: dict[str, Any] = {"id": page.id, "url": page.url, "text": text}
    if page.meta.get("metadata"):
        row["metadata"] = page.meta["metadata"]
    return row


def iter_keywords(
    inputs: list[str], settings: Settings, stats: SourceStats | None = None, top: int = 10, weighting: str = "tfidf"
) -> Iterator[dict[str, Any]]:
    """{"id", "url", "lang", "keywords": [[token, weight], ...]} of every page: the ``top``
    keywords of its main text weighted by ``weighting`` ("tfidf": document frequencies learned
    from the same inputs; "density"), after noise and template removal."""
    settings.validate()
    if weighting not in KEYWORD_WEIGHTINGS:
        raise ConfigError(f"keyword weighting {weighting!r}: choose from {', '.join(KEYWORD_WEIGHTINGS)}")
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ConfigError(f"keywords per page {top!r}: a whole number, at least 1")
    learning = Learning(templates=settings.extract.templates, doc_freq=weighting == "tfidf")
    rows = _learn_then_map(_task("keywords", top, weighting), inputs, settings, stats, learning)
    return ({"id": page.id, "url": page.url, **result} for page, result in rows)


def learn_templates(inputs: list[str], settings: Settings) -> SiteTemplates:
    """The site templates learned from ``inputs`` (``pagetwin templates``), whatever
    ``extract.templates`` says; nothing else is learned."""
    from pagetwin.runners.local import LocalEngine

    settings.validate()
    engine = LocalEngine()
    try:
        return engine.learn(inputs, settings, Learning(templates=True)).templates
    finally:
        engine.close()


def _task(method: str, *args: Any) -> Any:
    from pagetwin.runners.local import Task

    return Task(method, args)


def _learn_then_map(
    task: Any, inputs: list[str], settings: Settings, stats: SourceStats | None, learning: Learning
) -> Iterator[tuple[Page, Any]]:
    """The learn step when ``learning`` asks for anything (its parsed pages kept for the map),
    then (page, ``task`` on it) for every response page, in input order (local engine)."""
    from pagetwin.runners.local import LocalEngine

    stats = stats if stats is not None else SourceStats()
    engine = LocalEngine()
    try:
        learned = engine.learn(inputs, settings, learning) if learning.anything else None
        yield from engine.map(task, inputs, settings, learned, stats)
    finally:
        engine.close()


# -- pagetwin dedup -----------------------------------------------------------------------


def dedup(
    inputs: list[str],
    out_dir: str | Path,
    settings: Settings,
    index_path: str | Path | None = None,
    log: Callable[[str], None] = lambda m: None,
    survivors: str | Path | None = None,
    parquet: bool = False,
    engine: Engine | None = None,
    mode: str = "new",
    dedup_warc: str | Path | None = None,
    documents: str | Path | None = None,
) -> dict[str, Any]:
    """Read, fingerprint, index, match, cluster and write DIR/clusters.jsonl, pairs.jsonl and
    summary.json (and clusters/pairs.parquet with ``parquet``; the kept pages as a WARC file
    at ``survivors``; every input record, exact copies as revisits, as a WARC file at
    ``dedup_warc`` (outputs.dedupwarc); the kept documents as JSONL or Parquet at
    ``documents`` (outputs.dataset)). Returns the summary.

    Every output target (and pyarrow for ``parquet``) is checked first: OutputError (a
    ConfigError) when one cannot be used, before any work. ``mode`` says what to do with an
    earlier run's files in ``out_dir``: "new" refuses them, "add" adds this run to the index
    there (every output file then describes the whole index), "replace" deletes them (and
    ``out_dir``'s own index) first. An ``index_path`` outside ``out_dir`` is always added to.

    An input that cannot be read is reported through ``log`` (one line each, at most
    MAX_LOGGED_ERRORS) and in summary["input_errors"]; summary["input_status"] is "ok",
    "partial" (some inputs, or the rest of some file, could not be read) or "none" (no page
    was read and some input could not be). The summary is written in each case.

    ``engine`` runs the two passes over the pages (default runners.local.LocalEngine, a
    process pool; runners.spark.SparkEngine); this process alone writes the index, matches and
    clusters.

    A learned model is never counted twice for the same pages: pass 1 learns only from the
    pages the index does not store yet (a page it stores is neither parsed nor learned from; a
    page whose payload digest it stores is parsed but not learned from, as a clean run counts
    a payload once), merged with the stored model. Running the same inputs again with "add"
    learns nothing and writes the same clusters.jsonl; inputs A, then B, learn what A and B
    together do (near copies of a page across A and B aside, see SiteTemplates.merge). A
    stored model learned with other ``learned.LEARNED_WITH`` settings is refused (IndexError_).

    An interrupted run leaves the index at its last checkpoint (``run.checkpoint_pages``; as it
    was before the run with 0), and the next run on that index resumes it when its inputs and
    settings are the same (pass 1 skipped, pass 2 going on after the pages stored; the outputs
    those of a clean run), or else undoes it first, saying so through ``log``; summary
    ["resumed_from_checkpoint"] and ["undone_checkpoint"] say which (see _fingerprint_step)."""
    from pagetwin.outputs.files import check_outputs

    settings.validate()
    started = time.monotonic()
    targets = _Targets(survivors, parquet, dedup_warc, documents)
    if settings.spark.link == "executors":  # the link step on Spark's executors (no index)
        return _dedup_on_executors(inputs, Path(out_dir), settings, index_path, log, engine, mode, targets, started)
    if documents:
        _check_texts_for_documents(Path(out_dir), index_path, settings, mode)
    check_outputs(out_dir, index_path, survivors, parquet, mode, dedup_warc=dedup_warc, documents=documents)
    if engine is None:
        from pagetwin.runners.local import LocalEngine

        engine = LocalEngine()
    try:
        # One writer per index: a second run waits (run.lock_timeout), then gives up (IndexBusy).
        with _index_lock(Path(out_dir), index_path, settings), _young_collections_rarer():
            # Again under the lock: a run that ended while this one waited left its outputs there.
            check_outputs(out_dir, index_path, survivors, parquet, mode, dedup_warc=dedup_warc, documents=documents)
            return _locked_dedup(inputs, Path(out_dir), settings, index_path, log, engine, mode, targets, started)
    finally:
        engine.close()


def _check_texts_for_documents(out_dir: Path, index_path: str | Path | None, settings: Settings, mode: str) -> None:
    """The documents output is every kept page's text: refused (OutputError, before any work)
    when this run stores no text, or adds to an index holding pages an earlier run stored
    without theirs (``index.store_text = false``)."""
    from pagetwin.outputs.files import OutputError, default_index

    if not settings.index.store_text:
        raise OutputError("the documents output needs the pages' text: leave index.store_text = true for it")
    if mode != "replace" or index_path is not None:  # an index added to
        from pagetwin.index.sqlite import holds_pages_without_text

        existing = Path(index_path) if index_path is not None else default_index(out_dir)
        if holds_pages_without_text(existing):
            raise OutputError(
                f"the documents output needs the pages' text, and {existing} holds pages an earlier run"
                " stored without it (index.store_text = false): write the documents to a new index"
            )


def _index_lock(out_dir: Path, index_path: str | Path | None, settings: Settings) -> Any:
    """The lock of the run's index (index.lock.IndexLock), not yet taken."""
    from pagetwin.index.lock import IndexLock
    from pagetwin.outputs.files import default_index

    index_file = Path(index_path) if index_path is not None else default_index(out_dir)
    index_file.parent.mkdir(parents=True, exist_ok=True)
    return IndexLock(index_file, settings.run.lock_timeout, setting="run.lock_timeout")


def _locked_dedup(
    inputs: list[str],
    out_dir: Path,
    settings: Settings,
    index_path: str | Path | None,
    log: Callable[[str], None],
    engine: Engine,
    mode: str,
    targets: _Targets,
    started: float,
) -> dict[str, Any]:
    """dedup's steps, with the index's lock held."""
    from pagetwin.fingerprints import build_algorithms
    from pagetwin.index.sqlite import Index

    reporter = _ErrorReporter(log)
    readable, problems = _readable_inputs(inputs)
    reporter.report(problems)
    out_dir = _prepare_out_dir(out_dir, index_path, mode, log)
    algorithms = build_algorithms(settings)
    inputs_key = _inputs_key(readable, settings)
    index = Index(index_path or out_dir / "index.sqlite", settings.to_dict(), inputs_key=inputs_key)
    if index.undone is not None:
        log(
            f"index {index.path}: undid the unfinished run {index.undone.run} ({index.undone.pages} pages stored; "
            "these inputs or settings are not the ones it was run with)"
        )
    run = _Run(inputs, readable, problems, reporter, out_dir, settings, index, algorithms, log, engine, started, inputs_key)
    try:
        learned = _learn_step(run)
        passed = _fingerprint_step(run, learned)
        links = _link_step(run)
        written = _write_step(run, links, targets)
        summary = _summary(run, passed, links, written)
        _write_summary(run, summary)
        return summary
    except BaseException:
        index.abort()  # an open transaction (pass 2's) is rolled back: the index is as it was
        raise


@dataclass
class _Run:
    """One dedup run: what its steps share."""

    inputs: list[str]
    readable: list[str]
    problems: list[str]
    reporter: _ErrorReporter
    out_dir: Path
    settings: Settings
    index: Index
    algorithms: list
    log: Callable[[str], None]
    engine: Engine
    started: float
    inputs_key: str  # what a run resuming this one must share with it (_inputs_key)
    timings: dict[str, float] = field(default_factory=dict)

    def timed(self, step: str, since: float) -> None:
        self.timings[step] = time.monotonic() - since


def _inputs_key(readable: list[str], settings: Settings) -> str:
    """What a resumed run must share with the run it resumes: each input file (absolute path,
    size, mtime; a folder's files, walked in order), in the order given (it decides the pages'
    order, hence the outputs), and every setting but ``run.*`` (workers, checkpoints, temporary
    files: none changes the outputs). Wider than learned_with and the algorithms on purpose:
    any setting read in pass 2 (a threshold, the text settings) changes the stored pages, and
    pages stored with two settings would give outputs no clean run gives."""
    import hashlib
    import json
    import os

    from pagetwin.sources import input_files

    described = []
    for path in readable:
        for name in input_files(path):
            try:
                st = os.stat(name)
                described.append([os.path.abspath(name), st.st_size, st.st_mtime_ns])
            except OSError:
                described.append([os.path.abspath(name), None, None])
    wanted = {k: v for k, v in settings.to_dict().items() if k != "run"}
    blob = json.dumps({"inputs": described, "settings": wanted}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _prepare_out_dir(out_dir: Path, index_path: str | Path | None, mode: str, log: Callable[[str], None]) -> Path:
    from pagetwin.outputs.files import clear_outputs

    if mode == "replace":
        removed = clear_outputs(out_dir, index_path)
        if removed:
            log(f"--replace: deleted {', '.join(removed)} in {out_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    return out_dir


# -- step 1: learn ------------------------------------------------------------------------


class _IndexPages:
    """engine.StoredPages over the index: what its earlier runs stored."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def stored(self, page: Page) -> bool:
        return self.index.known_pid(page.id, source_path(page.source)) is not None

    def counted(self, payload_digest: str) -> bool:
        return self.index.has_payload(payload_digest)

    def snapshot(self) -> StoredSnapshot:
        """All of it at once, picklable, for an engine whose workers cannot ask the index."""
        rows = list(self.index.stored_pages())
        return StoredSnapshot(frozenset((i, s) for i, s, _ in rows), frozenset(d for _, _, d in rows if d))


def _learn_step(run: _Run) -> Learned | None:
    """Pass 1: learn from the pages the index does not hold yet, merged with what it learned
    from the others in earlier runs (stored with pass 2's pages, in the same transaction).
    A resumed run does not: its checkpoint holds the model its pass 1 learned."""
    t = time.monotonic()
    learned = None
    learning = Learning.for_dedup(run.settings)
    resumed = run.index.resumed
    if resumed is not None:
        if resumed.learned is not None:
            learned = Learned.from_bytes(resumed.learned, run.settings)
    elif learning.anything:
        previous = stored_model(run.index, run.settings)
        if previous is not None:
            _check_stored_model(run.index, previous, run.settings)
        # An index without pages stores none of them and none of their payloads: pass 1 then
        # asks it nothing (two queries a page, 0.03 CPU-s on corpus-2000)
        stored = _IndexPages(run.index) if run.index.max_pid() > 0 else None
        learned = run.engine.learn(run.readable, run.settings, learning, previous, stored)
    run.timed("learn", t)
    return learned


def _check_stored_model(index: Index, previous: Learned, settings: Settings) -> None:
    """IndexError_ when the index's model was learned with other settings than this run's."""
    from pagetwin.index.sqlite import IndexError_

    try:
        Learned(learned_with=learned_with(settings)).check_mergeable(previous)
    except LearnedMismatch as exc:
        raise IndexError_(f"index {index.path}: {exc} (use another --index, or the same settings)") from None


def stored_model(index: Index, settings: Settings) -> Learned | None:
    """The learned model an index holds (None when it holds none)."""
    return Learned.from_parts({name: index.load_model(name) for name in PART_NAMES}, settings)


def store_model(index: Index, learned: Learned, parts: dict[str, bytes] | None = None) -> None:
    """Save the learned model (``parts``: its to_parts() when the caller has them), in the
    caller's transaction."""
    for name, data in (learned.to_parts() if parts is None else parts).items():
        index.save_model(name, data)


# -- step 2: fingerprint and store --------------------------------------------------------


@dataclass
class _Pass2:
    """What pass 2 counted."""

    stats: SourceStats = field(default_factory=SourceStats)
    page_errors: Counter = field(default_factory=Counter)
    replaced_chars: int = 0
    refused_charsets: int = 0
    flattened: int = 0
    already_indexed: int = 0
    resumed: int = 0  # pages the interrupted run this one resumes had stored
    input_errors: list[str] = field(default_factory=list)


def _fingerprint_step(run: _Run, learned: Learned | None) -> _Pass2:
    """Pass 2: fingerprint the pages the index does not hold and store them, with a commit
    every ``run.checkpoint_pages`` pages (0: one at the end), the learned model with the last.

    Checkpoints that keep the guarantees of one transaction: before the first page, the run is
    recorded as unfinished (Index.start_checkpoint) with its learned model and what the index
    held before it (models, meta, the highest pid), in a commit of its own; the model is not
    written to the index's models before the end (counts of pages not stored yet), and the
    record is cleared only with the clusters (_link_step). A killed run thus leaves a
    checkpoint, and the next run on the index either resumes it (same inputs and settings,
    _inputs_key: pass 1 skipped, its model taken from the checkpoint, the pages stored skipped
    by ``known``, the pids going on where they stopped, so the outputs are a clean run's) or
    undoes it (Index.undo_checkpoint, at opening). Resuming needs no option: with the same
    inputs and settings it gives what starting again gives, sooner.

    The commits cost nothing measurable, on bench/data/corpus-5000.warc.gz (4,998 pages, 2
    workers, a shared machine), a commit every 1,000 pages against one: pass 2 41 s vs 46 s and
    90 s vs 70 s in two rounds (noise larger than any difference), peak RSS 392 MB vs 393 MB,
    the WAL file at most 18 MB vs 23 MB (it holds the pages not yet checkpointed)."""
    t = time.monotonic()
    out = _Pass2()
    index = run.index
    resumed = index.resumed
    first_pid = resumed.first_pid if resumed is not None else None
    every = run.settings.run.checkpoint_pages
    progress = Progress(run.settings, "fingerprinting", run.readable)  # bytes of the inputs read, of their total
    # Serialised once, for the checkpoint and for the end: pass 2 reads the model and never
    # changes it (tests/test_learned.py), and a corpus-2000 model took 0.085 CPU-s each time.
    parts = learned.to_parts() if learned is not None else None
    if resumed is None:
        index.begin()
        index.start_checkpoint(run.inputs_key, Learned.blob(parts) if parts is not None else None)
        index.commit()
    index.begin()
    # A new index builds its key indexes once its pages are in (Index.drop_deferred_indexes).
    deferred = index.drop_deferred_indexes() if resumed is None and index.page_count() == 0 else []
    batch = index.page_batch()  # the pages, written a batch at a time (STORE_BATCH)

    def known(page: Page) -> bool:
        """A page already in the index is marked seen in this run and not stored again."""
        pid = batch.known_pid(page.id, source_path(page.source))
        if pid is not None:
            index.mark_seen(pid)
            if first_pid is not None and pid > first_pid:
                out.resumed += 1  # stored by the run this one resumes: no earlier run's page
            else:
                out.already_indexed += 1
        return pid is not None

    stored = 0
    for result in run.engine.fingerprint(run.readable, run.settings, learned, out.stats, known):
        _store(batch, result)
        stored += 1
        if every and stored % every == 0:  # a checkpoint: the pages so far, with their run's record
            batch.flush()
            index.commit()
            index.begin()
        elif len(batch) >= STORE_BATCH:
            batch.flush()
        if result.error:
            out.page_errors[result.error] += 1
        out.replaced_chars += result.replaced_chars
        out.refused_charsets += result.refused_charsets
        out.flattened += result.flattened
        progress.update(page=result.page)
    batch.flush()
    index.create_indexes(deferred)
    if learned is not None:
        store_model(index, learned, parts)
    index.commit()
    progress.close()
    run.timed("fingerprint", t)
    out.input_errors = list(dict.fromkeys(run.problems + out.stats.errors))
    run.reporter.report(out.input_errors)
    if out.stats.pages_read == 0 and not out.stats.records_total and not out.input_errors:
        run.log(no_pages_message(out.stats))
    return out


# Pages pass 2 holds between writes to the index (one executemany per table), when no
# checkpoint comes first: a few MB of texts and keys.
STORE_BATCH = 500


def store_page(index: Index | PageBatch, result: PageResult) -> int:
    """Store one fingerprinted page (pass 2's, held in a PageBatch, or one added through
    pagetwin.api); its pid."""
    page, doc = result.page, result.doc
    text = doc.text if doc else ""
    pid = index.add_page(
        {
            "id": page.id,
            "url": page.url,
            "host": page.host,
            "source": source_path(page.source),
            "kind": page.kind,
            "crawl_date": page.crawl_date,
            "text_len": len(text),
            "payload_digest": page.payload_digest,
            "refers_to_digest": page.refers_to_digest,
            "lang": doc.lang if doc else None,
            "title": doc.title if doc else None,
            "text": compress_text(text) if text else None,
            "error": result.error or None,
            # Where the record is (outputs.dataset, outputs.dedupwarc), what it said it was.
            "warc_offset": page.meta.get("warc_offset"),
            "http_status": page.meta.get("http_status"),
            "metadata": page.meta.get("metadata"),
        }
    )
    index.add_fingerprints(pid, result.features, result.keys)
    return pid


_store = store_page  # the name pass 2 calls it by, looked up at each call (tests replace it to stop a run)


# -- step 3: link (match, guard, cluster) -------------------------------------------------


@dataclass
class _Links:
    edges_by_kind: Counter
    match_stats: Any
    # Every stored edge as columns (match.EdgeColumns) when the step matched them all, for
    # pairs.jsonl (read back from the index otherwise): their texts are mostly shared (one
    # per distinct evidence), a few pointers an edge beside the clusters' links.
    stored: Any = None


def _link_step(run: _Run) -> _Links:
    """Candidates verified into edges, then clusters (link_index), with the end of the run's
    checkpoint in the same commit. Only the new pages are matched when the index's edges were
    made for its older pages with the same ``match.max_bucket`` (incremental_from)."""
    index = run.index
    first_new = incremental_from(index.checkpoint(), run.settings)
    # Edges, clusters and the end of the run's checkpoint in one commit: a run killed before it
    # leaves the earlier run's edges, which undoing the checkpoint keeps.
    index.begin()
    with _collector_paused():
        links = link_index(index, run.algorithms, run.settings, first_new, run.timed)
    index.clear_checkpoint()
    index.commit()
    return links


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, on again after it if it was on.
    The link step makes a few objects a candidate pair and an edge (evidence, Link rows) and
    frees them by reference count (no cycles); meanwhile each full collection walked every
    object the run holds: 0.19-0.22 of the step's 0.8 CPU-s on corpus-2000, more as the run
    grows. What the block leaves in cycles is collected after it."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# Container allocations (net of frees) between two of the cyclic collector's young collections
# during a dedup run; Python's default is 700.
YOUNG_COLLECTION_ALLOCATIONS = 50_000


@contextmanager
def _young_collections_rarer() -> Iterator[None]:
    """The collector's first threshold at YOUNG_COLLECTION_ALLOCATIONS for the block, as it was
    after it (the older generations' thresholds kept). A page makes thousands of short-lived
    lists, dicts and tuples that reference counting frees; at 700, ~1,100 young collections on
    corpus-10000-shared walked the survivors of the moment each time (0.38 CPU-s in all, 0.8 %
    of the run); at 50,000, 0.16 CPU-s. Cycles are still collected, 50,000 allocations later
    at most (a few pages' worth), so memory stays flat. A forked worker inherits it."""
    import gc

    was = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_ALLOCATIONS, *was[1:])
    try:
        yield
    finally:
        gc.set_threshold(*was)


def incremental_from(checkpoint: Any, settings: Settings) -> int | None:
    """The pid after which the run's pages are new, when only they need matching: the index
    held pages before the run (its checkpoint's ``first_pid``), matched with the same
    ``match.max_bucket`` (which decides the pairs of a bucket). None: match everything."""
    import json

    if checkpoint is None or checkpoint.first_pid <= 0 or checkpoint.before_settings is None:
        return None
    before = json.loads(checkpoint.before_settings).get("match", {})
    return checkpoint.first_pid if before.get("max_bucket") == settings.match.max_bucket else None


def link_index(
    index: Index,
    algorithms: list,
    settings: Settings,
    first_new: int | None = None,
    timed: Callable[[str, float], None] = lambda step, since: None,
    recluster_all: bool = True,
    held: Any = None,
) -> _Links:
    """Match, guard and cluster the index's pages, in the caller's transaction (it commits).
    ``first_new``: the stored edges are those of the pages up to that pid, and only the pairs
    with a later page are verified (match.find_new_edges; the evidence of the buckets the new
    pages pushed past max_bucket retracted from older edges); None verifies every bucket
    (match.find_edges). Either way the edges are those of one run over all the pages, and the
    clusters those of all of them: made again for the whole index (``recluster_all``), or,
    when only the new pages were matched, for the components of the new pages and of the
    retracted edges' pages alone (``recluster``; no other edge changed). ``held``
    (held.Held: the clusters the index's writer holds) places the new pages it can."""
    from pagetwin.match import EvidenceRows, MatchStats, find_edge_columns, find_new_edges, link_of

    t = time.monotonic()
    match_stats = MatchStats()
    revisits = list(index.revisit_pairs())  # (original, revisit)
    max_bucket = settings.match.max_bucket
    new = None if first_new is None else find_new_edges(index, algorithms, max_bucket, match_stats, first_new, revisits)
    stored = None  # every stored edge's columns, when all were matched here
    if new is None:
        # Each edge's (a, b, kind, score) (its match.Link's fields, link_of): a tuple, not a
        # Link, zipped from the columns the rows are (no Python call an edge)
        columns = find_edge_columns(index, algorithms, max_bucket, match_stats, revisits)  # all verified first
        index.replace_edges(columns.rows(), scored=True)
        links: list[tuple] = columns.links()
        kinds = Counter(columns.kinds)
        stored = columns
    else:
        following = held is not None and settings.match.guard and not recluster_all
        plan = _retraction(index, new.retracted, _merge_kinds(settings))
        if following and plan.touched:
            held.hold_changed(index, {p for pair in plan.changed for p in pair}, first_new + 1)  # as stored, before the change
        touched = _retract(index, plan)
        edge_row = EvidenceRows().edge_row
        index.add_edges((e.a, e.b, e.kind, *edge_row(e.evidence)[1:]) for e in new.edges)
    timed("match", t)

    t = time.monotonic()
    if new is not None and not recluster_all:
        pages = set(index.pids_after(first_new))
        if held is not None and settings.match.guard:
            touched = held.change(index, plan.changed, revisits) if plan.touched else set()
            held.forget(touched)  # their components' edges changed
            pages = held.place(index, pages - touched, revisits) | (pages & touched)
        recluster(index, algorithms, settings, revisits, pages | touched, held=held)
        timed("cluster", t)
        return _Links(Counter(e.kind for e in new.edges), match_stats)  # the new edges' kinds
    if new is not None:
        from pagetwin.match import evidence_from_json
        from pagetwin.model import Edge

        edges = [Edge(a, b, kind, evidence_from_json(ev)) for a, b, kind, ev in index.edges()]
        links = [link_of(e) for e in edges]
        kinds = Counter(e.kind for e in edges)
        # The guard reads only the links: the edges with their evidence (most of a run's peak
        # memory, ~460 B an edge) are let go before it runs.
        del edges
    del new
    recluster(index, algorithms, settings, revisits, None, links)
    timed("cluster", t)
    return _Links(kinds, match_stats, stored)


@dataclass
class _Retraction:
    """What retracting evidence changes in the stored edges (``_retraction``): the edges
    deleted (no evidence left), the rows of those kept (their evidence, kind and score now),
    and, for the guard (``changed``), each edge whose kind or score changed: (a, b) -> its
    guard score now, None when it no longer merges (``merge_kinds``)."""

    gone: list[tuple[int, int]]
    kept: list[tuple]
    changed: dict[tuple[int, int], float | None]
    touched: set[int]  # the pages of every edge whose kind or score changed


def _retraction(index: Index, retracted: list[tuple[int, int, str]], merge_kinds: set[str]) -> _Retraction:
    """The edges without the retracted evidence. Clustering reads an edge's pages, kind and
    score only (match.Link), so an edge that keeps its kind and score (another passed item
    scores as high: near copies pass several algorithms) changes no cluster and no held
    round."""
    from pagetwin.match import evidence_from_json, evidence_json, guard_score, retract
    from pagetwin.model import Edge

    by_pair: dict[tuple[int, int], set[str]] = {}
    for a, b, algo in retracted:
        by_pair.setdefault((a, b), set()).add(algo)
    plan = _Retraction([], [], {}, set())
    for (a, b), algos in sorted(by_pair.items()):
        _, _, kind, ev = index.edge(a, b)
        evidence = evidence_from_json(ev)
        left = retract(Edge(a, b, kind, evidence), algos)
        if left is None:
            plan.gone.append((a, b))
            now: float | None = None
        else:
            now = guard_score(left.evidence)
            plan.kept.append((a, b, left.kind, evidence_json(left.evidence), now))
            if (left.kind, now) == (kind, guard_score(evidence)):
                continue
            now = now if left.kind in merge_kinds else None
        plan.touched |= {a, b}
        if kind in merge_kinds:  # an edge that did not merge cannot start to (its kinds only shrink)
            plan.changed[(a, b)] = now
    return plan


def _retract(index: Index, plan: _Retraction) -> set[int]:
    """Store the edges as ``plan`` says (``_retraction``); the pages of the edges whose kind
    or score changed."""
    index.delete_edges(plan.gone)
    index.add_edges(plan.kept)
    index.drop_held({pid for pair in plan.changed for pid in pair})  # their stored rounds knew the edges before
    return plan.touched


def _merge_kinds(settings: Settings) -> set[str]:
    return {"duplicate"} | ({"partial"} if merges_partial(settings) else set())


def recluster(
    index: Index,
    algorithms: list,
    settings: Settings,
    revisits: list[tuple[int, int]],
    pages: set[int] | None,
    links: list | None = None,
    held: Any = None,
) -> None:
    """Make the clusters of ``pages`` and of every page their edges connect them to (the
    union of merged edges, the guard and the choice of the page to keep, per component),
    stored over those pages' rows, the other clusters kept; ``pages`` None: of every page,
    from ``links`` (match.Link rows of all the edges). Whichever pages, the clusters are those
    one run over all would make, as long as no edge changed outside those components (the new
    pages' components and those of the pages of changed edges: every part of a component
    split by a lost edge holds one of them). A revisit record follows its original
    (cluster.clusters' ``attach``). ``held`` (held.Held), with ``pages``: the components are
    split by it, and it holds them."""
    from pagetwin.cluster import clusters

    merge_kinds = _merge_kinds(settings)
    if pages is None:
        members, attach = None, revisits
        merged = [(a, b) for a, b, kind, _ in links if kind in merge_kinds]
    else:
        leader = {follower: original for original, follower in revisits}
        start = {p for p in pages if p not in leader}  # a revisit record follows its original
        component, links, merged = _components(index, sorted(start), leader, merge_kinds)
        attach = [(o, f) for o, f in revisits if f in leader and _original(f, leader) in component]
        members = sorted(component | {f for _, f in attach})
    rows = list(index.pages_for_clustering(members))
    split, traced = None, []
    if settings.match.guard:
        split = held.hold(component, links, rows) if held is not None and pages is not None else _guard(index, algorithms, links, settings, traced if pages is None else None)
    out = clusters(rows, merged, settings.cluster.keep, split, attach=attach)
    if pages is None:
        from pagetwin.held import stored_rows

        index.replace_clusters(out)
        index.replace_held(stored_rows(index, traced))  # a later add starts from these rounds
        return
    # Revisits of a page outside the components, new or given their original now.
    for original, follower in revisits:
        if follower not in members and (original in pages or follower in pages):
            cluster = index.cluster_of_pid(_original(follower, leader))
            if cluster is not None:
                out.append((follower, cluster, 0))
    index.set_clusters(out)


def _original(pid: int, leader: dict[int, int]) -> int:
    """The page a revisit record (or a revisit of one) stands for."""
    while pid in leader:
        pid = leader[pid]
    return pid


def _components(index: Index, start: list[int], leader: dict[int, int], kinds: set[str]) -> tuple[set[int], list, list]:
    """The pages linked to ``start`` by edges of ``kinds`` (revisit records, ``leader``'s
    keys, are not linked through); the edges of ``kinds`` between them ((a, b, kind, score)
    rows, as match.Link); and the edges of a spanning tree of each component (enough for the
    union). Walked a frontier at a time, the edges read with their stored scores
    (Index.scored_edges)."""
    seen: set[int] = set()
    links, tree = [], []
    for root in start:
        if root in seen:
            continue
        seen.add(root)
        frontier = [root]
        while frontier:
            from_a, from_b = index.scored_edges(frontier, kinds)
            links += [e for e in from_a if e[1] not in leader] if leader else from_a  # each edge once: from its a
            nxt = []
            for pid, other in [(a, b) for a, b, _, _ in from_a] + [(b, a) for a, b, _, _ in from_b]:
                if other not in seen and other not in leader:
                    seen.add(other)
                    nxt.append(other)
                    tree.append((pid, other))
            frontier = nxt
    return seen, links, tree


def merges_partial(settings: Settings) -> bool:
    """Whether partial edges join clusters (match.merge_partial; chunks.merge_partial too)."""
    return settings.match.merge_partial or settings.chunks.merge_partial


def _guard(index: Index, algorithms: list, edges: list, settings: Settings, stored: list | None = None) -> Callable[[list[int]], list[list[int]]]:
    """The anti-chaining guard as a component splitter (see pagetwin.guard); ``stored``: the
    rounds of its larger components are appended to it (held.traced)."""
    from pagetwin.guard import make_splitter
    from pagetwin.held import STORED_FROM, traced

    # Merged partial edges are edges of the component the guard splits, like duplicates.
    kinds = ("duplicate", "revisit", "partial") if merges_partial(settings) else ("duplicate", "revisit")
    return make_splitter(
        index, algorithms, edges, policy=settings.cluster.keep, kinds=kinds, related_share=settings.match.guard_share,
        traced=traced(stored) if stored is not None else None, traced_from=STORED_FROM,
    )  # fmt: skip


# -- step 4: write ------------------------------------------------------------------------


@dataclass
class _Targets:
    """The optional outputs a run was asked for (checked by outputs.files.check_outputs)."""

    survivors: str | Path | None = None
    parquet: bool = False
    dedup_warc: str | Path | None = None
    documents: str | Path | None = None


@dataclass
class _Written:
    lines: int
    clusters: int
    duplicates: int
    pairs: int
    survivors: int | None = None
    dedup_warc: dict[str, Any] | None = None
    documents: int | None = None
    cluster_kinds: dict[str, Any] = field(default_factory=dict)
    cluster_stats: dict[str, Any] = field(default_factory=dict)  # outputs.jsonl.cluster_stats


def _write_step(run: _Run, links: _Links, targets: _Targets) -> _Written:
    from pagetwin import softerror
    from pagetwin.outputs.jsonl import cluster_stats, write_clusters, write_pairs

    t = time.monotonic()
    index = run.index
    written = _Written(*write_clusters(index, run.out_dir / "clusters.jsonl"), write_pairs(index, run.out_dir / "pairs.jsonl", links.stored))
    links.stored = None  # written: let go
    if targets.parquet:
        from pagetwin.outputs.survivors import write_parquet

        write_parquet(index, run.out_dir)
    if targets.survivors:
        from pagetwin.outputs.survivors import write_survivors

        written.survivors = write_survivors(run.readable, run.settings, index.kept_pages(), Path(targets.survivors))
    if targets.dedup_warc:
        from pagetwin.outputs.dedupwarc import write_dedup_warc

        written.dedup_warc = write_dedup_warc(run.readable, run.settings, index, Path(targets.dedup_warc)).to_dict()
    if targets.documents:
        from pagetwin.outputs.dataset import write_documents

        written.documents = write_documents(index, Path(targets.documents))
    # Error pages served as successes ("soft 404s") are clusters of their own kind.
    written.cluster_kinds = softerror.report(index)
    written.cluster_stats = cluster_stats(index)
    run.timed("write", t)
    run.timings["total"] = time.monotonic() - run.started
    return written


# -- step 5: summary ----------------------------------------------------------------------


def _summary(run: _Run, passed: _Pass2, links: _Links, written: _Written) -> dict[str, Any]:
    from pagetwin import __version__

    stats, timings = passed.stats, run.timings
    orphans = run.index.orphan_revisits()
    return {
        "version": __version__,
        "inputs": run.inputs,
        "input_errors": passed.input_errors,
        "input_status": _input_status(passed.input_errors, stats.pages_read),
        "records": stats.to_dict(),
        "pages": {
            "read": stats.pages_read,
            "in_output": written.lines,
            "already_indexed": passed.already_indexed,
            "without_analysis": dict(passed.page_errors),
            "replaced_characters": passed.replaced_chars,
            # Charset labels ignored (unknown, or no text encoding: idna, base64...): detected instead.
            "refused_charsets": passed.refused_charsets,
            "deep_dom_flattened": passed.flattened,
        },
        # Pages an interrupted run had stored, that this one resumed from (pass 1 then skipped).
        "resumed_from_checkpoint": passed.resumed if run.index.resumed is not None else None,
        "undone_checkpoint": _undone(run.index),
        "clusters": written.clusters,
        "duplicates": written.duplicates,
        "pairs": written.pairs,
        "survivors_written": written.survivors,
        "dedup_warc": written.dedup_warc,
        "documents_written": written.documents,
        "cluster_kinds": written.cluster_kinds,
        # Clusters by size (size_bucket: "1", "2", "3-4", ...), the largest, pages per host.
        **written.cluster_stats,
        "edges_by_kind": dict(links.edges_by_kind),
        "revisits": {
            "matched": links.match_stats.revisit_edges,
            "without_original": len(orphans),
            "without_original_examples": [{"id": i, "url": u} for i, u in orphans[:20]],
        },
        "matching": links.match_stats.to_dict(),
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "pages_per_second": round(stats.pages_read / timings["total"], 1) if timings["total"] else None,
        "index": str(run.index.path),
        "versions": _versions(),
        "settings": run.settings.to_dict(),
    }


def _undone(index: Index) -> dict[str, int] | None:
    """The unfinished run this one undid first (other inputs or settings), or None."""
    cp = index.undone
    return {"run": cp.run, "pages": cp.pages} if cp is not None else None


def _write_summary(run: _Run, summary: dict[str, Any]) -> None:
    from pagetwin.outputs.jsonl import write_summary

    write_summary(summary, run.out_dir / "summary.json")
    run.index.close()
    run.reporter.finish()


MAX_LOGGED_ERRORS = 20  # input errors logged one a line; the rest are counted (all are in the summary)


class _ErrorReporter:
    """Logs each input error once, at most MAX_LOGGED_ERRORS of them, then how many more."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self.log = log
        self.seen: set[str] = set()
        self.logged = 0

    def report(self, messages: Iterable[str]) -> None:
        for message in messages:
            if message in self.seen:
                continue
            self.seen.add(message)
            if self.logged < MAX_LOGGED_ERRORS:
                self.log(message)
                self.logged += 1

    def finish(self) -> None:
        more = len(self.seen) - self.logged
        if more > 0:
            self.log(f"... and {more} more (summary.json input_errors)")


# Notes in SourceStats.errors that are not about reading an input: pass 1's spill (a
# temporary file) failed and pass 2 read the inputs again, in runners.local or runners.spark.
_NOT_INPUT_FAILURES = ("; pass 2 reads and parses the inputs again", "; pass 2 parses these pages again")


def _input_status(input_errors: list[str], pages_read: int) -> str:
    """"ok" (every input read), "partial" (some input, or the rest of some file, could not be
    read) or "none" (no page read, and some input could not be)."""
    failures = [e for e in input_errors if not e.endswith(_NOT_INPUT_FAILURES)]
    if not failures:
        return "ok"
    return "none" if pages_read == 0 else "partial"


def _readable_inputs(inputs: list[str], expand: Callable | None = None) -> tuple[list[str], list[str]]:
    """sources.readable_inputs (or ``expand``, an engine's: the Spark runner's also reads URIs),
    or, when no input can be read, ([], a message for each)."""
    from pagetwin.sources import InputError, readable_inputs

    try:
        return (expand or readable_inputs)(inputs)
    except InputError as exc:
        return [], exc.problems or ["no input given"]


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for pkg in ("fastwarc", "warcio", "selectolax", "xxhash", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


# -- dedup with the link step on Spark's executors (spark.link = "executors") ---------------


def _dedup_on_executors(
    inputs: list[str],
    out_dir: Path,
    settings: Settings,
    index_path: str | Path | None,
    log: Callable[[str], None],
    engine: Engine | None,
    mode: str,
    targets: _Targets,
    started: float,
) -> dict[str, Any]:
    """dedup with ``spark.link = "executors"``: pass 1 as usual, then pass 2, matching,
    clustering and the outputs on Spark's executors (runners.spark_link), written under
    ``spark.output`` (default: ``out_dir``); no SQLite index. summary.json goes to ``out_dir``
    on this machine. A new run (mode "new", or "replace": the outputs are overwritten)."""
    from pagetwin.outputs.files import OutputError, earlier_outputs
    from pagetwin.outputs.jsonl import write_summary

    if engine is None or not hasattr(engine, "pass2_rdd"):
        raise ConfigError("setting spark.link = executors needs --runner spark")
    asked = [n for n, v in (("--index", index_path), ("--survivors", targets.survivors), ("--dedup-warc",
             targets.dedup_warc), ("--documents", targets.documents)) if v]  # fmt: skip
    if mode == "add":  # an add needs the stored pages' full keys, features and guard rounds (RESULTS, issue 18)
        raise ConfigError("--add with spark.link = executors is not supported: that run keeps no index to add to "
                          "(pages.parquet holds record locators and shortened keys, not the features and guard rounds "
                          "an add places new pages by); use spark.link = driver (the default) for incremental runs, "
                          "or run all inputs again with --replace")  # fmt: skip
    if asked:
        raise ConfigError(f"setting spark.link = executors writes clusters and pairs only: {', '.join(asked)} needs spark.link = driver")
    if mode == "new" and earlier_outputs(out_dir):
        raise OutputError(f"{out_dir} holds an earlier run's {', '.join(earlier_outputs(out_dir))}: use --replace or another --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        from pagetwin.runners.spark_link import link_on_executors

        reporter = _ErrorReporter(log)
        readable, problems = _readable_inputs(inputs, lambda given: engine.readable_inputs(given, settings))
        reporter.report(problems)
        learning = Learning.for_dedup(settings)
        # The site templates stay on the executors (runners.spark: learn_apart).
        learned = engine.learn_apart(readable, settings, learning) if learning.anything else None
        stats = SourceStats()
        uri = settings.spark.output or out_dir.resolve().as_uri()
        counts = link_on_executors(engine, readable, settings, learned, stats, uri, overwrite=mode == "replace")
    finally:
        engine.close()
    errors = list(dict.fromkeys(problems + stats.errors))
    reporter.report(errors)
    total = time.monotonic() - started
    summary = {
        "link": "executors",
        "inputs": inputs,
        "input_errors": errors,
        "input_status": _input_status(errors, stats.pages_read),
        "records": stats.to_dict(),
        "pages": {"read": stats.pages_read, "in_output": counts.pages, "without_analysis": dict(counts.page_errors),
                  "replaced_characters": counts.replaced_chars, "refused_charsets": counts.refused_charsets,
                  "deep_dom_flattened": counts.flattened},  # fmt: skip
        "clusters": counts.clusters,
        "duplicates": counts.pages - counts.clusters,
        "pairs": sum(counts.edges_by_kind.values()),
        "cluster_kinds": counts.cluster_kinds,
        **counts.cluster_stats,  # cluster_sizes, largest_cluster, hosts: as the local runner's
        "edges_by_kind": dict(counts.edges_by_kind),
        "revisits": {"matched": counts.revisit_edges},
        "matching": counts.matching(),
        "components_rounds": counts.rounds,
        "outputs": counts.outputs,
        "lean_index_bytes_per_page": round(counts.lean_bytes / counts.pages, 1) if counts.pages else None,
        "seconds": {"total": round(total, 3)},
        "pages_per_second": round(stats.pages_read / total, 1) if total else None,
        "settings": settings.to_dict(),
    }
    write_summary(summary, out_dir / "summary.json")
    reporter.finish()
    return summary
