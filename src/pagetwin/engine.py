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
