"""The local engine (``engine.Engine``): both passes on this machine, a process pool or this
process with one worker. Pages stream from the sources through the pool in input order, a fixed
number of chunks in flight (bounded memory); pass 1's parsed pages wait in a temporary file for
pass 2 (``runners.spill``). The application core (``pagetwin.app``) writes the index, matches,
clusters and writes the outputs.

Workers die with their parent: on Linux each asks the kernel for SIGKILL when its parent ends
(``prctl(PR_SET_PDEATHSIG)``), whatever ends it (``kill -9`` included), and checks it has not
been orphaned already; the parent ends its workers on every exit path (an exception, a
generator closed early) instead of waiting for the chunks in flight.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple

from pagetwin.config import Settings
from pagetwin.engine import Progress, StoredPages, worker_count
from pagetwin.learned import Learned, Learning
from pagetwin.model import Page
from pagetwin.pipeline import PageResult, Worker, load_shared_models, needs_images
from pagetwin.runners.spill import ParsedSpill
from pagetwin.sources import SourceStats, iter_pages

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor


class Task(NamedTuple):
    """``Worker.<method>(page, *args)`` for every page (picklable, sent to the workers)."""

    method: str
    args: tuple = ()


# -- the process pool ---------------------------------------------------------------------

# The Worker of a pool's worker process, built once by the pool's initializer: the only place a
# ProcessPoolExecutor process keeps state between tasks. Never set in the parent.
_worker: Worker | None = None

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent_pid: int) -> None:
    """Ask the kernel to kill this process when its parent ends (Linux), then make sure the
    parent has not ended already (it would never be told)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl in this libc: the getppid check remains
            pass
    if os.getppid() != parent_pid:
        os._exit(1)


def _init_worker(
    settings: Settings, learned: Learned | None, keep_parsed: bool, learning: Learning | None, parent_pid: int
) -> None:
    global _worker
    _die_with_parent(parent_pid)
    _worker = Worker(settings, learned, keep_parsed, learning)


def _run_chunk(task: Task, pages: list[Page]) -> list[Any]:
    assert _worker is not None
    fn = getattr(_worker, task.method)
    return [fn(page, *task.args) for page in pages]


def _chunks(items: Iterable[Page], size: int) -> Iterator[list[Page]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def map_pages(
    task: Task,
    pages: Iterable[Page],
    settings: Settings,
    learned: Learned | None = None,
    keep_parsed: bool = False,
    learning: Learning | None = None,
) -> Iterator[tuple[Page, Any]]:
    """Apply ``task`` to every page, in input order, yielding (page, result).

    With one worker it runs in this process. Otherwise a pool, with at most 4 chunks per worker
    in flight: the sources are read only as fast as the workers go (bounded memory).
    ``keep_parsed``: pass 1 returns the pages' parsed blocks too (see runners.spill);
    ``learning``: what pass 1 learns (default: what dedup needs, Learning.for_dedup)."""
    workers = worker_count(settings)
    if workers <= 1:
        worker = Worker(settings, learned, keep_parsed, learning)
        fn = getattr(worker, task.method)
        for page in pages:
            yield page, fn(page, *task.args)
        return
    # Imported for a pool only: one worker (the default on one core) does without (~30 ms).
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    initargs = (settings, learned, keep_parsed, learning, os.getpid())
    if multiprocessing.get_start_method() == "fork":  # (a spawned worker would load them again)
        load_shared_models(settings)
    pool = ProcessPoolExecutor(workers, initializer=_init_worker, initargs=initargs)
    try:
        pending: deque[tuple[list[Page], Future]] = deque()
        for chunk in _chunks(pages, settings.run.chunk_pages):
            pending.append((chunk, pool.submit(_run_chunk, task, chunk)))
            if len(pending) >= workers * 4:
                done_chunk, fut = pending.popleft()
                yield from zip(done_chunk, fut.result())
        while pending:
            done_chunk, fut = pending.popleft()
            yield from zip(done_chunk, fut.result())
    except BaseException:  # an error, Ctrl-C, the caller closing this generator early
        _end_workers(pool)
        raise
    pool.shutdown(wait=True)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool now: pending chunks cancelled, the workers killed (not waited for)."""
    # ProcessPoolExecutor has no public way to stop busy workers before Python 3.14
    # (kill_workers); its process table is the documented-in-source fallback.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.kill()
    for process in processes:
        process.join(timeout=5)


# -- the engine ---------------------------------------------------------------------------


class LocalEngine:
    """Runs both passes on this machine (``engine.Engine``): a process pool, or this process
    with one worker. Pass 1's parsed pages are kept in a temporary file for pass 2
    (``run.reuse_parse``); ``map`` runs any Worker method over the pages the same way (the
    ``text`` and ``keywords`` commands)."""

    def __init__(self) -> None:
        self._spill: ParsedSpill | None = None

    def learn(
        self,
        inputs: list[str],
        settings: Settings,
        learning: Learning,
        previous: Learned | None = None,
        stored: StoredPages | None = None,
    ) -> Learned:
        """Pass 1 over the inputs: what ``learning`` asks for, merged with ``previous`` (from an
        index, so an incremental run learns from all pages seen so far). The pages and their
        parsed blocks are kept for pass 2 (``run.reuse_parse``).

        ``stored`` says what ``previous`` already counted: a page the index stores is neither
        parsed nor learned from (it goes to the spill without its body: pass 2 skips it too),
        a page whose payload is stored is parsed for pass 2 but not learned from (as a clean run
        counts a payload once)."""
        self.close()
        spill = self._spill = new_spill(settings)
        progress = Progress(settings, "learning", inputs)  # bytes of the inputs read, of their total
        stats = spill.stats if spill is not None else SourceStats()
        pages = iter_pages(inputs, settings.input, stats, want_images=learning.images)
        if stored is not None:
            pages = _unstored_pages(pages, stored, spill, progress)
        records = map_pages(Task("learn"), pages, settings, keep_parsed=spill is not None, learning=learning)
        if spill is not None:
            records = _spilled(records, spill)
        if stored is not None:
            records = ((page, r) for page, r in records if page.kind == "image" or not _counted(page, stored))
        learned = Learned.fit(_progressed(records, progress), settings, learning)
        if spill is not None:
            spill.finish()
        progress.close()
        return learned.merge(previous)

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
        pages = _pass2_pages(inputs, settings, stats, self._spill, needs_images(settings))
        pages = (page for page in pages if page.kind != "image" and not known(page))
        try:
            for _, result in map_pages(Task("fingerprint"), pages, settings, learned):
                yield result
        finally:
            self.close()

    def map(
        self, task: Task, inputs: list[str], settings: Settings, learned: Learned | None, stats: SourceStats
    ) -> Iterator[tuple[Page, Any]]:
        """(page, ``task`` on the page) for every response page, in input order: pass 1's kept
        pages when ``learn`` ran, else read from the inputs (counted in ``stats``)."""
        try:
            for page, result in map_pages(task, _pass2_pages(inputs, settings, stats, self._spill), settings, learned):
                if page.kind == "response":
                    yield page, result
        finally:
            self.close()

    def close(self) -> None:
        if self._spill is not None:
            self._spill.close()
            self._spill = None


def new_spill(settings: Settings) -> ParsedSpill | None:
    """A spill for pass 1's parsed pages, or None when ``run.reuse_parse`` is off."""
    return ParsedSpill(settings.run.temp_dir) if settings.run.reuse_parse else None


def _counted(page: Page, stored: StoredPages) -> bool:
    return bool(page.payload_digest) and stored.counted(page.payload_digest)


def _unstored_pages(
    pages: Iterable[Page], stored: StoredPages, spill: ParsedSpill | None, progress: Progress
) -> Iterator[Page]:
    """The pages ``stored`` does not claim; the stored ones go to the spill without their body
    (pass 2 only marks them seen; their order there does not matter)."""
    for page in pages:
        if page.kind != "image" and stored.stored(page):
            progress.update(1, page)
            if spill is not None:
                spill.add(page, b"", keep_body=False)
            continue
        yield page


def _progressed(records: Iterable[tuple[Page, Any]], progress: Progress) -> Iterator[tuple[Page, Any]]:
    for page, record in records:
        progress.update(1, page)
        yield page, record


def _spilled(records: Iterable[tuple[Page, Any]], spill: ParsedSpill) -> Iterator[tuple[Page, Any]]:
    for page, record in records:
        spill.add(page, record.parsed)
        yield page, record


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
