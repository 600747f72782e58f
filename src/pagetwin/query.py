"""Ask an index about pages without changing it (``pagetwin query``).

Each input page is fingerprinted as the indexed pages were (the settings and learned model the
index holds), its candidate keys are looked up in the index, and every candidate is verified
against the stored features by the same algorithms ``dedup`` uses (``match``). The index is
opened read only; a cleanly closed index (no -wal file) as immutable, so SQLite creates no file
beside it either. A page with the payload digest of a stored response is an "exact" match; a
revisit record is matched to its original (the first response stored with its payload).

Like ``match.find_edges``, an oversized bucket (more than ``match.max_bucket`` pages) is not read
whole: the query page, the newest page, is compared with its ``match.WINDOW`` latest members.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index, IndexError_, incompatible_setting, index_file
from pagetwin.fingerprints.base import Algorithm
from pagetwin.match import WINDOW, FeatureCache, edge_kind, min_shared_keys
from pagetwin.model import Evidence, Page
from pagetwin.sources import SourceStats, iter_pages

_EXACT = Evidence("payload", 1.0, True, {"payload_digest": "equal"})


class Matcher:
    """A read-only view of one index that finds the stored pages matching a page."""

    def __init__(self, path: str | Path, settings: Settings | None = None, live: bool = False) -> None:
        """``settings``: None for the index's own; given, they must equal the index's on every
        setting that changes fingerprints (else IndexError_ naming it). ``live``: a writer may
        add to the index while it is read (never opened immutable)."""
        from pagetwin.app import stored_model
        from pagetwin.pipeline import Worker

        file = index_file(path)
        has_wal = file.with_name(file.name + "-wal").exists()
        self.index = Index.open_readonly(file, immutable=not (live or has_wal))
        try:
            stored = self.index.stored_settings()
            if stored is None:
                raise IndexError_(f"index {file} holds no finished dedup run")
            if self.index.checkpoint() is not None:
                # Its pages were fingerprinted with a model the index does not hold yet.
                raise IndexError_(f"index {file} holds an unfinished dedup run (resume it with pagetwin dedup --add)")
            self.settings = _checked(settings, stored, file) if settings is not None else Settings.from_dict(stored)
            self.settings.validate()
            self.worker = Worker(self.settings, stored_model(self.index, self.settings))
        except BaseException:
            self.index.close()
            raise
        self.caches = {a.name: FeatureCache(self.index, a) for a in self.worker.algorithms}

    @classmethod
    def over(cls, index: Index, settings: Settings, worker: Any) -> Matcher:
        """A Matcher over an index already open (pagetwin.api.Index, which may write it):
        ``worker`` (pipeline.Worker) fingerprints pages with the index's settings and model."""
        self = cls.__new__(cls)
        self.index, self.settings, self.worker = index, settings, worker
        self.caches = {a.name: FeatureCache(index, a) for a in worker.algorithms}
        return self

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> Matcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def query(self, inputs: list[str], stats: SourceStats | None = None) -> Iterator[dict[str, Any]]:
        """Matcher.match of every page of ``inputs`` (paths), in input order."""
        stats = stats if stats is not None else SourceStats()
        for page in iter_pages(list(inputs), self.settings.input, stats):
            yield self.match(page)

    def _bucket_reads(self) -> tuple[int, int]:
        """(max_bucket, how many pids to read of a bucket: enough to tell an oversized one and
        fill its window)."""
        limit = self.settings.match.max_bucket
        return limit, max(limit, WINDOW) + 1

    def candidates(self, algorithm: Algorithm, keys: list[int]) -> set[int]:
        """The stored pages a page with these candidate keys is compared with, as find_edges
        would pair it as the newest page: its buckets' pages (an oversized bucket's latest
        WINDOW), those sharing ``min_shared_keys`` of its keys (a bucket of at most max_bucket
        pages says whom it holds; an oversized one, read in part, is asked of the few pages
        the others leave short)."""
        limit, fetch = self._bucket_reads()
        need = min_shared_keys(algorithm)
        candidates: set[int] = set()
        shared: Counter[int] = Counter()
        oversized: set[int] = set()
        for key in keys:
            pids = self.index.pids_with_key(algorithm.name, key, fetch)
            candidates.update(_bounded(pids, limit))
            if len(pids) > limit:
                oversized.add(key)
            else:
                shared.update(pids)
        if need <= 1:
            return candidates
        if oversized:
            for pid in [p for p in candidates if shared[p] < need]:
                shared[pid] += len(oversized.intersection(self.index.page_keys(algorithm.name, pid)))
        return {pid for pid in candidates if shared[pid] >= need}

    def match(self, page: Page) -> dict[str, Any]:
        """{"id", "url", "matches": [{"id", "url", "cluster", "kind", "evidence"}]} of one page,
        strongest evidence first; "error" too when the page could not be analysed."""
        limit, fetch = self._bucket_reads()
        evidence: dict[int, list[Evidence]] = {}
        exact: set[int] = set()
        if page.kind == "response" and page.payload_digest:
            exact = set(_bounded(self.index.pids_with_payload(page.payload_digest, fetch), limit))
            for pid in exact:
                evidence[pid] = [_EXACT]
        elif page.kind == "revisit" and page.refers_to_digest:
            # Its original: the first response stored with that payload, as Index.revisit_pairs joins them.
            for pid in self.index.pids_with_payload(page.refers_to_digest, 1, earliest=True):
                evidence[pid] = [Evidence("revisit", 1.0, True, {"payload_digest": "equal"})]
        result = self.worker.fingerprint(page)
        for algorithm in self.worker.algorithms:
            data = result.features.get(algorithm.name)
            if data is None:
                continue
            mine = algorithm.decode(data)
            candidates = self.candidates(algorithm, result.keys.get(algorithm.name, []))
            if not algorithm.keys_are_proof:
                self.caches[algorithm.name].prefetch(candidates)
            for pid in sorted(candidates):
                if algorithm.keys_are_proof:
                    verdict = Evidence(algorithm.name, 1.0, True, {"key": "equal"})
                else:
                    stored = self.caches[algorithm.name][pid]
                    if stored is None:
                        continue
                    verdict = algorithm.verify(stored, mine)  # (older, newer), as find_edges orders pairs
                if verdict.passed:
                    evidence.setdefault(pid, []).append(verdict)
        matches = []
        idents = self.index.idents(evidence)
        for pid, found in evidence.items():
            page_id, url, cluster = idents[pid]
            matches.append(
                {
                    "id": page_id,
                    "url": url,
                    "cluster": cluster,
                    "kind": "exact" if pid in exact else edge_kind(found),
                    "evidence": [
                        {"algorithm": e.algorithm, "score": round(e.score, 6), "passed": e.passed, **e.detail} for e in found
                    ],
                    "_rank": (pid not in exact, -max(e.score for e in found), -len(found), pid),
                }
            )
        matches.sort(key=lambda m: m["_rank"])  # exact first, then the highest score, most algorithms
        for m in matches:
            del m["_rank"]
        row: dict[str, Any] = {"id": page.id, "url": page.url, "matches": matches}
        if result.error:
            row["error"] = result.error
        return row


def query(
    index_path: str | Path, inputs: list[str], settings: Settings | None = None, stats: SourceStats | None = None
) -> Iterator[dict[str, Any]]:
    """The matches in the index of every page of ``inputs`` (Matcher.match), one dict per page,
    in input order; nothing is written to the index. ``stats`` counts the records read."""
    with Matcher(index_path, settings) as matcher:
        yield from matcher.query(inputs, stats)


def _bounded(pids: list[int], limit: int) -> list[int]:
    """The pids of one bucket (latest first) to compare: all of them, or in an oversized bucket
    the ``WINDOW`` latest, the neighbours of the query page in crawl order."""
    return pids if len(pids) <= limit else pids[:WINDOW]


def _checked(settings: Settings, stored: dict[str, Any], file: Path) -> Settings:
    """``settings``, when they fingerprint pages as the index's did."""
    differing = incompatible_setting(settings.to_dict(), stored)
    if differing is not None:
        name, stored_value, given_value = differing
        raise IndexError_(f"index {file} was built with {name} = {stored_value!r}; the query has {given_value!r}")
    return settings
