"""The protocol between the application core (``pagetwin.app``) and the engines that run the
per-page passes: ``runners.local.LocalEngine`` (a process pool on this machine) and
``runners.spark.SparkEngine`` (Apache Spark). Engines are equal implementations of ``learn``
(pass 1) and ``fingerprint`` (pass 2), take the same arguments, own iteration and partitioning,
and never import each other; the core alone writes the index, matches and clusters.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pagetwin.config import Settings
    from pagetwin.learned import Learned, Learning
    from pagetwin.model import Page
    from pagetwin.pipeline import PageResult
    from pagetwin.sources import SourceStats


class StoredPages(Protocol):
    """What an index already holds, so that pass 1 learns from each page once: a page it
    stores (its id and source) is neither parsed nor learned from again, a page whose payload
    digest it stores is parsed (for pass 2) but not learned from."""

    def stored(self, page: Page) -> bool: ...

    def counted(self, payload_digest: str) -> bool: ...


@dataclass(frozen=True)
class StoredSnapshot:
    """A picklable StoredPages (what an engine ships to other machines): the (id, absolute
    source path) of every stored page and every stored payload digest."""

    pages: frozenset[tuple[str, str]]
    digests: frozenset[str]

    def stored(self, page: Page) -> bool:
        return (page.id, source_path(page.source)) in self.pages

    def counted(self, payload_digest: str) -> bool:
        return payload_digest in self.digests


class Engine(Protocol):
    """Runs the two per-page passes over the inputs, pages in input order."""

    def learn(
        self,
        inputs: list[str],
        settings: Settings,
        learning: Learning,
        previous: Learned | None = None,
        stored: StoredPages | None = None,
    ) -> Learned:
        """Pass 1: what ``learning`` asks for, learned from the pages ``stored`` does not
        claim, merged with ``previous`` (``previous.merge`` contract, pagetwin.learned)."""
        ...

    def fingerprint(
        self,
        inputs: list[str],
        settings: Settings,
        learned: Learned | None,
        stats: SourceStats,
        known: Callable[[Page], bool],
    ) -> Iterator[PageResult]:
        """Pass 2 over the response pages ``known`` does not claim (``known`` runs in this
        process, once per page, in input order); ``stats`` counts the records read."""
        ...

    def close(self) -> None:
        """Let go of what pass 1 kept for pass 2 (and of the engine's workers)."""
        ...


def source_path(source: str) -> str:
    """Input files are told apart by absolute path, so a rerun with another cwd still matches."""
    return os.path.abspath(source) if source else ""


def worker_count(settings: Settings) -> int:
    """Worker processes (or Spark local cores) to use: run.workers, all cores when 0."""
    return settings.run.workers if settings.run.workers > 0 else (os.cpu_count() or 1)


class Progress:
    """A progress line on stderr when it is a terminal (tqdm); silent otherwise.

    Given the inputs, it measures the bytes of the inputs read so far against their total size
    (the files before the page's whole, and the offset of the page's record in its own file), so
    the line shows the total and the time left, as wget, curl or pv do, with the pages counted
    beside it. Pages without a record offset (HTML files, JSONL lines) move it a file at a time;
    without inputs (or when they have no size) it counts pages."""

    def __init__(self, settings: Settings, desc: str, inputs: list[str] | None = None) -> None:
        self.bar = None
        self.pages = 0
        self.starts: dict[str, tuple[int, int]] = {}
        if not (settings.run.progress and sys.stderr.isatty()):
            return
        from tqdm import tqdm

        total = 0
        if inputs:
            self.starts, total = input_layout(inputs)
        if total:
            self.bar = tqdm(desc=desc, total=total, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr, dynamic_ncols=True)
        else:
            self.starts = {}
            self.bar = tqdm(desc=desc, unit=" pages", file=sys.stderr, dynamic_ncols=True)

    def update(self, n: int = 1, page: Page | None = None) -> None:
        """``n`` more pages done; ``page`` (the last of them) says how far the inputs are read."""
        if self.bar is None:
            return
        self.pages += n
        if not self.starts:
            self.bar.update(n)
            return
        at = self.position(page) if page is not None else None
        self.bar.set_postfix_str(f"{self.pages:,} pages", refresh=False)
        self.bar.update(at - self.bar.n if at is not None and at > self.bar.n else 0)

    def position(self, page: Page) -> int | None:
        """Bytes of the inputs before ``page``'s record (None: a file not among the inputs)."""
        where = self.starts.get(source_path(page.source))
        if where is None:
            return None
        start, size = where
        offset = page.meta.get("warc_offset", page.meta.get("warc_member_offset"))
        return start + min(int(offset), size) if isinstance(offset, int) else start

    def close(self) -> None:
        if self.bar is not None:
            if self.starts:
                self.bar.update(self.bar.total - self.bar.n)  # all read: the last records' bytes too
            self.bar.close()


def input_layout(inputs: list[str]) -> tuple[dict[str, tuple[int, int]], int]:
    """{absolute file path: (bytes of the files before it, its size)} of the inputs' files in
    order (a folder's walked sorted), and their total size; a file that cannot be read counts 0."""
    from pagetwin.sources import input_files

    starts: dict[str, tuple[int, int]] = {}
    total = 0

    for path in inputs:
        for name in input_files(path):
            try:
                size = os.path.getsize(name)
            except OSError:
                size = 0
            key = os.path.abspath(name)
            if key not in starts:
                starts[key] = (total, size)
                total += size
    return starts, total
