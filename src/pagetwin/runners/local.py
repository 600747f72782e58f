"""The local runner: owns the loops. Streams pages from the sources through a process pool
(pass 1: learn site templates / document frequencies / image hashes; pass 2: extract, analyse,
fingerprint), writes the index from the parent process only, then matches, clusters and writes
the outputs. Memory stays bounded: pages stream, a fixed number of chunks is in flight.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import islice
from pathlib import Path
from typing import Any

from pagetwin.config import Settings
from pagetwin.fingerprints.base import key64
from pagetwin.model import Page
from pagetwin.pipeline import Learned, PageResult, Worker, compress_text, needs_doc_freq
from pagetwin.runners.spill import ParsedSpill
from pagetwin.sources import SourceStats, iter_pages, readable_inputs

# -- the process pool ---------------------------------------------------------------------

_worker: Worker | None = None


def _init_worker(settings: Settings, learned: Learned | None, keep_parsed: bool) -> None:
    global _worker
    _worker = Worker(settings, learned, keep_parsed)


def _run_chunk(method: str, pages: list[Page]) -> list[Any]:
    assert _worker is not None
    fn = getattr(_worker, method)
    return [fn(page) for page in pages]


def _chunks(items: Iterable[Page], size: int) -> Iterator[list[Page]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def worker_count(settings: Settings) -> int:
    return settings.run.workers if settings.run.workers > 0 else (os.cpu_count() or 1)


def map_pages(
    method: str,
    pages: Iterable[Page],
    settings: Settings,
    learned: Learned | None = None,
    keep_parsed: bool = False,
) -> Iterator[tuple[Page, Any]]:
    """Apply ``Worker.<method>`` to every page, in input order, yielding (page, result).

    With one worker it runs in this process. Otherwise a pool, with at most 4 chunks per worker
    in flight: the sources are read only as fast as the workers go (bounded memory).
    ``keep_parsed``: pass 1 returns the pages' parsed blocks too (see runners.spill)."""
    workers = worker_count(settings)
    if workers <= 1:
        worker = Worker(settings, learned, keep_parsed)
        fn = getattr(worker, method)
        for page in pages:
            yield page, fn(page)
        return
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(settings, learned, keep_parsed)) as pool:
        pending: deque[tuple[list[Page], Future]] = deque()
        for chunk in _chunks(pages, settings.run.chunk_pages):
            # Bodies are not needed back in the parent; keep only what the caller reads.
            pending.append((chunk, pool.submit(_run_chunk, method, chunk)))
            if len(pending) >= workers * 4:
                done_chunk, fut = pending.popleft()
                yield from zip(done_chunk, fut.result())
        while pending:
            done_chunk, fut = pending.popleft()
            yield from zip(done_chunk, fut.result())


class Progress:
    """A progress line on stderr when it is a terminal (tqdm); silent otherwise."""

    def __init__(self, settings: Settings, desc: str) -> None:
        self.bar = None
        if settings.run.progress and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(desc=desc, unit=" pages", file=sys.stderr, dynamic_ncols=True)

    def update(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# -- pass 1 -------------------------------------------------------------------------------


def needs_learning(settings: Settings) -> bool:
    return settings.extract.templates or needs_doc_freq(settings) or "images" in settings.match.algorithms


def learn(
    inputs: list[str],
    settings: Settings,
    previous: Learned | None = None,
    spill: ParsedSpill | None = None,
    known: Callable[[Page], bool] | None = None,
    counted: Callable[[str], bool] | None = None,
) -> Learned:
    """Pass 1 over the inputs: site templates, document frequencies, image hashes. ``previous``
    (from an index) is merged in, so an incremental run learns from all pages seen so far.
    With ``spill``, the pages and their parsed blocks are kept there for pass 2 to replay
    (``spill.replay``), and the records read are counted in ``spill.stats``.

    ``known`` (a page the index already stores) and ``counted`` (a payload digest of a stored
    page) say what ``previous`` already counted: a known page is neither parsed nor learned
    from (it goes to the spill without its body: pass 2 skips it too), a page whose payload is
    stored is parsed for pass 2 but not learned from (as a clean run counts a payload once)."""
    want_images = "images" in settings.match.algorithms
    progress = Progress(settings, "learning")
    pages = iter_pages(inputs, settings.input, spill.stats if spill else SourceStats(), want_images=want_images)
    if known is not None:
        pages = _unknown_pages(pages, known, spill, progress)
    results = map_pages("learn", pages, settings, keep_parsed=spill is not None)
    if spill is not None:
        results = _spilled(results, spill)
    if counted is not None:
        results = (
            (page, result)
            for page, result in results
            if page.kind == "image" or not page.payload_digest or not counted(page.payload_digest)
        )
    learned = fit_learned(results, settings, progress.update)
    if spill is not None:
        spill.finish()
    progress.close()
    return merge_learned(learned, previous)


def _unknown_pages(
    pages: Iterable[Page], known: Callable[[Page], bool], spill: ParsedSpill | None, progress: Progress
) -> Iterator[Page]:
    """The pages ``known`` does not claim; the known ones go to the spill without their body
    (pass 2 only marks them seen; their order there does not matter)."""
    from dataclasses import replace

    for page in pages:
        if page.kind != "image" and known(page):
            progress.update()
            if spill is not None:
                spill.add(replace(page, body=b""), b"")
            continue
        yield page


def _spilled(results: Iterable[tuple[Page, Any]], spill: ParsedSpill) -> Iterator[tuple[Page, Any]]:
    for page, result in results:
        spill.add(page, result[4])
        yield page, result


def new_spill(settings: Settings) -> ParsedSpill | None:
    """A spill for pass 1's parsed pages, or None when ``run.reuse_parse`` is off."""
    return ParsedSpill(settings.run.temp_dir) if settings.run.reuse_parse else None


def fit_learned(
    results: Iterable[tuple[Page, Any]], settings: Settings, on_page: Callable[[], None] = lambda: None
) -> Learned:
    """Fold pass-1 results, (page, Worker.learn(page)) in input order, into a Learned (shared
    by this runner and runners.spark, which folds each partition and merges them)."""
    from pagetwin.html.templates import SiteTemplates
    from pagetwin.text.keywords import DocFreq

    templates = SiteTemplates(settings.extract) if settings.extract.templates else None
    doc_freq = DocFreq() if needs_doc_freq(settings) else None
    image_hashes: dict[str, int] = {}
    # Byte-identical copies of a page are counted once: a site holding one article under three
    # URLs must not make that article look like its template.
    seen_payloads: set[int] = set()
    for page, (site, stats, words, image, _) in results:
        on_page()
        if image is not None:  # every URL of an image, byte-identical copies included
            image_hashes[image[0]] = image[1]
        if page.payload_digest:
            digest = key64(page.payload_digest)
            if digest in seen_payloads:
                continue
            seen_payloads.add(digest)
        if stats is not None and templates is not None:
            templates.fit(site, stats)
        if words is not None and doc_freq is not None:
            doc_freq.fit(words)
    return Learned(templates, doc_freq, image_hashes)


def merge_learned(learned: Learned, other: Learned | None) -> Learned:
    """``learned`` with ``other``'s counts added; ``learned``'s image hashes win."""
    if other is None:
        return learned
    templates, doc_freq = learned.templates, learned.doc_freq
    if templates is not None and other.templates is not None:
        templates = templates.merge(other.templates)
    if doc_freq is not None and other.doc_freq is not None:
        doc_freq = doc_freq.merge(other.doc_freq)
    return Learned(templates, doc_freq, {**other.image_hashes, **learned.image_hashes})


def _pass2_pages(
    inputs: list[str], settings: Settings, stats: SourceStats, spill: ParsedSpill | None, want_images: bool = False
) -> Iterator[Page]:
    """Pass 2's pages: replayed from pass 1's spill (pass 1's counts go to ``stats``), or read
    from the sources again."""
    if spill is None or spill.failed:
        if spill is not None:
            stats.error(f"{spill.failed}; pass 2 reads and parses the inputs again")
        yield from iter_pages(inputs, settings.input, stats, want_images=want_images)
        return
    stats.merge(spill.stats)
    yield from spill.replay()


# -- pagetwin text ------------------------------------------------------------------------


def iter_texts(inputs: list[str], settings: Settings, stats: SourceStats | None = None) -> Iterator[dict[str, str]]:
    """{"id", "url", "text"} of every page: main content after noise and template removal,
    the site templates learned from the same inputs."""
    stats = stats if stats is not None else SourceStats()
    for page, text in _learn_then_map("safe_extract", inputs, settings, stats, settings.extract.templates):
        yield {"id": page.id, "url": page.url, "text": text}


def _learn_then_map(
    method: str, inputs: list[str], settings: Settings, stats: SourceStats, learning: bool
) -> Iterator[tuple[Page, Any]]:
    """Pass 1 when ``learning`` (its parsed pages spilled for pass 2), then (page,
    ``Worker.<method>(page)``) for every response page, in input order."""
    spill = new_spill(settings) if learning else None
    try:
        learned = learn(inputs, settings, spill=spill) if learning else None
        for page, result in map_pages(method, _pass2_pages(inputs, settings, stats, spill), settings, learned):
            if page.kind == "response":
                yield page, result
    finally:
        if spill is not None:
            spill.close()


# -- pagetwin keywords --------------------------------------------------------------------


def iter_keywords(inputs: list[str], settings: Settings, stats: SourceStats | None = None) -> Iterator[dict[str, Any]]:
    """{"id", "url", "lang", "keywords": [[token, weight], ...]} of every page: the top
    settings.text.keywords keywords of its main text (text.keywords.top_keywords), with
    document frequencies (tf-idf) and site templates learned from the same inputs."""
    from dataclasses import replace

    stats = stats if stats is not None else SourceStats()
    # Keywords are what this command is for: learn what a keyword algorithm weighting its
    # keywords by text.weighting would make dedup learn (document frequencies for tf-idf).
    settings = replace(
        settings,
        keywords=replace(settings.keywords, weighting=settings.text.weighting),
        match=replace(settings.match, algorithms=[*settings.match.algorithms, "con"]),
    )
    learning = settings.extract.templates or needs_doc_freq(settings)
    for page, result in _learn_then_map("keywords", inputs, settings, stats, learning):
        yield {"id": page.id, "url": page.url, **result}


# -- pagetwin dedup -----------------------------------------------------------------------


def dedup(
    inputs: list[str],
    out_dir: str | Path,
    settings: Settings,
    index_path: str | Path | None = None,
    log: Callable[[str], None] = lambda msg: None,
    survivors: str | Path | None = None,
    parquet: bool = False,
    engine: Any = None,
    mode: str = "new",
) -> dict[str, Any]:
    """Read, fingerprint, index, match, cluster and write DIR/clusters.jsonl, pairs.jsonl and
    summary.json (and clusters/pairs.parquet with ``parquet``; the kept pages as a WARC file
    at ``survivors``). Returns the summary.

    Every output target (and pyarrow for ``parquet``) is checked first: OutputError (a
    ConfigError) when one cannot be used, before any work. ``mode`` says what to do with an
    earlier run's files in ``out_dir``: "new" refuses them, "add" adds this run to the index
    there (every output file then describes the whole index), "replace" deletes them (and
    ``out_dir``'s own index) first. An ``index_path`` outside ``out_dir`` is always added to.

    An input that cannot be read is reported through ``log`` (one line each, at most
    MAX_LOGGED_ERRORS) and in summary["input_errors"]; summary["input_status"] is "ok",
    "partial" (some inputs, or the rest of some file, could not be read) or "none" (no page
    was read and some input could not be). The summary is written in each case.

    ``engine`` runs the two passes over the pages (default LocalEngine, a process pool; see
    runners.spark.SparkEngine); this process alone writes the index, matches and clusters.

    A learned model is never counted twice for the same pages: pass 1 learns only from the
    pages the index does not store yet (a page it stores is neither parsed nor learned from; a
    page whose payload digest it stores is parsed but not learned from, as a clean run counts
    a payload once), merged with the stored model. Running the same inputs again with "add"
    learns nothing and writes the same clusters.jsonl; inputs A, then B, learn what A and B
    together do (near copies of a page across A and B aside, see SiteTemplates.merge). An
    engine without ``learns_new_pages_only`` (runners.spark) learns from every page.

    An interrupted run leaves the index as it was: pass 2's pages and the learned model are
    written in one transaction, committed at the end of pass 2 (an exception rolls it back; a
    killed process leaves it uncommitted, which SQLite discards). One transaction, not a commit
    every N pages: a model committed with the first checkpoint would count pages that are not
    stored, and pages committed before the model would be skipped by the re-run's pass 1 with
    their template statistics missing. Its cost, measured on bench/data/corpus-5000.warc.gz
    (4,998 pages, 2 workers, against a commit every 1,000 pages): the same time (pass 2 53 s
    vs 55 s, within the noise), peak memory 393 MB vs 377 MB (SQLite spills the transaction
    to the WAL file; its page cache stays bounded), the WAL file at most 21 MB vs 16 MB (it
    holds the run's new pages until the commit)."""
    from pagetwin.fingerprints import build_algorithms
    from pagetwin.index.sqlite import Index
    from pagetwin.outputs.files import check_outputs, clear_outputs

    started = time.monotonic()
    check_outputs(out_dir, index_path, survivors, parquet, mode)
    reporter = _ErrorReporter(log)
    readable, problems = _readable_inputs(inputs)
    reporter.report(problems)
    out_dir = Path(out_dir)
    if mode == "replace":
        removed = clear_outputs(out_dir, index_path)
        if removed:
            log(f"--replace: deleted {', '.join(removed)} in {out_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    algorithms = build_algorithms(settings)
    index = Index(index_path or out_dir / "index.sqlite", settings.to_dict())

    try:
        return _dedup(
            inputs, readable, problems, reporter, out_dir, settings, index, algorithms, log, survivors, parquet,
            engine or LocalEngine(), started,
        )  # fmt: skip
    except BaseException:
        index.abort()  # an open transaction (pass 2's) is rolled back: the index is as it was
        raise


def _dedup(
    inputs: list[str],
    readable: list[str],
    problems: list[str],
    reporter: _ErrorReporter,
    out_dir: Path,
    settings: Settings,
    index: Any,
    algorithms: list,
    log: Callable[[str], None],
    survivors: str | Path | None,
    parquet: bool,
    engine: Any,
    started: float,
) -> dict[str, Any]:
    from pagetwin import __version__
    from pagetwin.cluster import clusters
    from pagetwin.match import MatchStats, evidence_json, find_edges
    from pagetwin.outputs.jsonl import write_clusters, write_pairs, write_summary

    timings: dict[str, float] = {}

    # Pass 1: learn from the pages the index does not hold yet, merged with what it learned
    # from the others in earlier runs. Stored with pass 2's pages, in the same transaction.
    t = time.monotonic()
    learned = None
    if needs_learning(settings):
        previous = _stored_learned(index, settings)
        if getattr(engine, "learns_new_pages_only", False):
            learned = engine.learn(
                readable,
                settings,
                previous,
                known=lambda page: index.known_pid(page.id, _source_path(page.source)) is not None,
                counted=index.has_payload,
            )
        else:
            learned = engine.learn(readable, settings, previous)
    timings["learn"] = time.monotonic() - t

    # Pass 2: fingerprint and index.
    t = time.monotonic()
    stats = SourceStats()
    page_errors: Counter = Counter()
    replaced_chars = 0
    flattened = 0
    already_indexed = 0
    progress = Progress(settings, "fingerprinting")
    index.begin()  # one transaction for pass 2's pages and the learned model (see dedup)

    def known(page: Page) -> bool:
        """A page already in the index is marked seen in this run and not stored again."""
        nonlocal already_indexed
        pid = index.known_pid(page.id, _source_path(page.source))
        if pid is not None:
            index.mark_seen(pid)
            already_indexed += 1
        return pid is not None

    for result in engine.fingerprint(readable, settings, learned, stats, known):
        _store(index, result)
        if result.error:
            page_errors[result.error] += 1
        replaced_chars += result.replaced_chars
        flattened += result.flattened
        progress.update()
    if learned is not None:
        _store_learned(index, learned)
    index.commit()
    progress.close()
    timings["fingerprint"] = time.monotonic() - t
    input_errors = list(dict.fromkeys(problems + stats.errors))
    reporter.report(input_errors)
    if stats.pages_read == 0 and not stats.records_total and not input_errors:
        log("no pages in the inputs")

    # Match, verify, cluster.
    t = time.monotonic()
    match_stats = MatchStats()
    revisits = list(index.revisit_pairs())  # (original, revisit)
    edges = find_edges(index, algorithms, settings.match.max_bucket, match_stats, revisits)
    index.begin()
    index.replace_edges((e.a, e.b, e.kind, evidence_json(e.evidence)) for e in edges)
    index.commit()
    timings["match"] = time.monotonic() - t

    t = time.monotonic()
    # Revisits are attached to their original after the guard, not linked through it.
    merge_kinds = {"duplicate"} | ({"partial"} if _merges_partial(settings) else set())
    linked = [(e.a, e.b) for e in edges if e.kind in merge_kinds]
    split = _guard(index, algorithms, edges, settings) if settings.match.guard else None
    rows = clusters(index.pages_for_clustering(), linked, settings.cluster.keep, split, attach=revisits)
    index.begin()
    index.replace_clusters(rows)
    index.commit()
    timings["cluster"] = time.monotonic() - t

    t = time.monotonic()
    n_lines, n_clusters, n_dups = write_clusters(index, out_dir / "clusters.jsonl")
    n_pairs = write_pairs(index, out_dir / "pairs.jsonl")
    if parquet:
        from pagetwin.outputs.survivors import write_parquet

        write_parquet(index, out_dir)
    n_survivors = None
    if survivors:
        from pagetwin.outputs.survivors import write_survivors

        n_survivors = write_survivors(readable, settings, index.kept_pages(), Path(survivors))
    timings["write"] = time.monotonic() - t
    timings["total"] = time.monotonic() - started
    orphans = index.orphan_revisits()
    summary = {
        "version": __version__,
        "inputs": inputs,
        "input_errors": input_errors,
        "input_status": _input_status(input_errors, stats.pages_read),
        "records": stats.to_dict(),
        "pages": {
            "read": stats.pages_read,
            "in_output": n_lines,
            "already_indexed": already_indexed,
            "without_analysis": dict(page_errors),
            "replaced_characters": replaced_chars,
            "deep_dom_flattened": flattened,
        },
        "clusters": n_clusters,
        "duplicates": n_dups,
        "pairs": n_pairs,
        "survivors_written": n_survivors,
        "edges_by_kind": dict(Counter(e.kind for e in edges)),
        "revisits": {
            "matched": match_stats.revisit_edges,
            "without_original": len(orphans),
            "without_original_examples": [{"id": i, "url": u} for i, u in orphans[:20]],
        },
        "matching": match_stats.to_dict(),
        "seconds": {k: round(v, 3) for k, v in timings.items()},
        "pages_per_second": round(stats.pages_read / timings["total"], 1) if timings["total"] else None,
        "index": str(index.path),
        "versions": _versions(),
        "settings": settings.to_dict(),
    }
    write_summary(summary, out_dir / "summary.json")
    index.close()
    reporter.finish()
    return summary


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
# temporary file) failed and pass 2 read the inputs again, here or in runners.spark.
_NOT_INPUT_FAILURES = ("; pass 2 reads and parses the inputs again", "; pass 2 parses these pages again")


def _input_status(input_errors: list[str], pages_read: int) -> str:
    """"ok" (every input read), "partial" (some input, or the rest of some file, could not be
    read) or "none" (no page read, and some input could not be)."""
    failures = [e for e in input_errors if not e.endswith(_NOT_INPUT_FAILURES)]
    if not failures:
        return "ok"
    return "none" if pages_read == 0 else "partial"


def _readable_inputs(inputs: list[str]) -> tuple[list[str], list[str]]:
    """sources.readable_inputs, or, when no input can be read, ([], a message for each)."""
    from pagetwin.sources import InputError

    try:
        return readable_inputs(inputs)
    except InputError as exc:
        return [], exc.problems or ["no input given"]


class LocalEngine:
    """Runs both passes on this machine: a process pool, or this process with one worker.
    Pass 1's parsed pages are kept in a temporary file for pass 2 (``run.reuse_parse``)."""

    learns_new_pages_only = True  # learn() takes known / counted (see dedup)

    def __init__(self) -> None:
        self._spill: ParsedSpill | None = None

    def learn(
        self,
        inputs: list[str],
        settings: Settings,
        previous: Learned | None,
        known: Callable[[Page], bool] | None = None,
        counted: Callable[[str], bool] | None = None,
    ) -> Learned:
        """Pass 1 (``learn``): what ``previous`` counted (``known``, ``counted``) is not learned again."""
        self.close()
        self._spill = new_spill(settings)
        return learn(inputs, settings, previous, self._spill, known, counted)

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None

    def fingerprint(
        self,
        inputs: list[str],
        settings: Settings,
        learned: Learned | None,
        stats: SourceStats,
        known: Callable[[Page], bool],
    ) -> Iterator[PageResult]:
        """Pass 2 over the pages that ``known`` does not claim, in input order; image records
        (read for pass 1) are not pages. ``stats`` counts the records read."""
        pages = _pass2_pages(inputs, settings, stats, self._spill, "images" in settings.match.algorithms)
        pages = (page for page in pages if page.kind != "image" and not known(page))
        try:
            for _, result in map_pages("fingerprint", pages, settings, learned):
                yield result
        finally:
            self.close()


def _store(index: Any, result: PageResult) -> None:
    page, doc = result.page, result.doc
    text = doc.text if doc else ""
    pid = index.add_page(
        {
            "id": page.id,
            "url": page.url,
            "host": page.host,
            "source": _source_path(page.source),
            "kind": page.kind,
            "crawl_date": page.crawl_date,
            "text_len": len(text),
            "payload_digest": page.payload_digest,
            "refers_to_digest": page.refers_to_digest,
            "lang": doc.lang if doc else None,
            "title": doc.title if doc else None,
            "text": compress_text(text) if text else None,
            "error": result.error or None,
        }
    )
    index.add_fingerprints(pid, result.features, result.keys)


def _source_path(source: str) -> str:
    """Input files are told apart by absolute path, so a rerun with another cwd still matches."""
    return os.path.abspath(source) if source else ""


def _stored_learned(index: Any, settings: Settings) -> Learned | None:
    from pagetwin.html.templates import SiteTemplates
    from pagetwin.text.keywords import DocFreq

    templates = index.load_model("site_templates")
    doc_freq = index.load_model("doc_freq")
    if templates is None and doc_freq is None:
        return None
    import json

    images = index.load_model("image_hashes")
    return Learned(
        SiteTemplates.from_bytes(templates, settings.extract) if templates else None,
        DocFreq.from_bytes(doc_freq) if doc_freq else None,
        {k: int(v) for k, v in json.loads(images).items()} if images else {},
    )


def _store_learned(index: Any, learned: Learned) -> None:
    """Save the learned model, in the caller's transaction."""
    import json

    if learned.templates is not None:
        index.save_model("site_templates", learned.templates.to_bytes())
    if learned.doc_freq is not None:
        index.save_model("doc_freq", learned.doc_freq.to_bytes())
    if learned.image_hashes:
        index.save_model("image_hashes", json.dumps(learned.image_hashes).encode())


def _merges_partial(settings: Settings) -> bool:
    """Whether partial edges join clusters (match.merge_partial; chunks.merge_partial too)."""
    return settings.match.merge_partial or settings.chunks.merge_partial


def _guard(index: Any, algorithms: list, edges: list, settings: Settings) -> Callable[[list[int]], list[list[int]]]:
    """The anti-chaining guard as a component splitter (see pagetwin.guard)."""
    from pagetwin.guard import make_splitter

    # Merged partial edges are edges of the component the guard splits, like duplicates.
    kinds = ("duplicate", "revisit", "partial") if _merges_partial(settings) else ("duplicate", "revisit")
    return make_splitter(
        index, algorithms, edges, policy=settings.cluster.keep, kinds=kinds, related_share=settings.match.guard_share
    )


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for pkg in ("fastwarc", "warcio", "selectolax", "xxhash", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out
