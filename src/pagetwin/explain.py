"""Why were two pages called duplicates (or not)? ``pagetwin explain DIR A B``.

``explain(index_path, a, b)`` reads an index that ``pagetwin dedup`` wrote (DIR/index.sqlite,
or the file itself) without changing it, and returns, for two pages given by id or URL:

- both pages' main text, and its passages marked: the sentences the pages share, and those
  only one of them has (difflib on sentences, compared case- and space-insensitively);
- for each algorithm the index was built with: the similarity and whether it passes, recomputed
  by the algorithm's own ``verify`` from the stored features, and the candidate keys the two
  pages share (the keys that made them a candidate pair; none = never compared by it);
- the stored edge between them (its evidence, as in pairs.jsonl) and their clusters.

A lean index (``index.store_text = false``) holds no text for most pages: each is read back
from its source record (the file it was read from; a WARC record at its stored offset) and
extracted again with the index's settings and learned model, the same text that was
fingerprinted. The text read back is checked against what the index holds (payload digest,
text length, every algorithm's features); when the file is gone or the record there changed
(or a later run learned another model) the page says so (``text_problem``) instead of showing
another text.

A run with ``spark.link = executors`` has no index: ``explain`` on its ``--out`` folder (or its
``spark.output`` folder, a local path or ``file:`` URI) reads its Parquet outputs instead
(``explain_spark``, runners.spark_output): the pages by id or URL in clusters.parquet, each
record read back at pages.parquet's locator and fingerprinted again with the run's settings
and learned models (models.parquet), checked against what pages.parquet keeps of it, the edge
from pairs.parquet. The same dict, the same verdicts and scores as the local runner's index.

``format_explain(d)`` renders that dict for a terminal.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_SPACE = re.compile(r"\s+")
# What a terminal would act on rather than show: C0 controls but the tab (a line end too: the
# fields shown are one line each), DEL, C1 controls (0x9b is a one-byte CSI), the ESC that
# starts every escape sequence, and the Unicode controls that reorder or break lines.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would act on (an escape sequence that sets
    the window title or clears the screen, a carriage return that overwrites the line, a bidi
    override) written as a visible escape: ``\\x1b``, ``\\r``, ``\\u202e``. The rest of the
    sequence is then harmless text."""
    return _UNSAFE.sub(_escaped, text)


def _escaped(m: re.Match) -> str:
    ch = m.group()
    named = {"\n": "\\n", "\r": "\\r"}.get(ch)
    if named:
        return named
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


class ExplainError(Exception):
    """The index or one of the pages cannot be found."""


MAX_LISTED = 50  # candidates of an ambiguous URL named in the message (all are in .candidates)


class AmbiguousPage(ExplainError):
    """A URL (or id) that several pages share: which one is meant cannot be told.
    ``candidates`` holds each page's id, url, crawl_date, cluster and source; the message lists
    them."""

    def __init__(self, ref: str, candidates: list[dict[str, Any]], field: str = "url"):
        self.ref, self.candidates = ref, candidates
        name, instead = ("URL", "give one of their ids instead") if field == "url" else ("id", "explain cannot tell them apart")
        lines = [f"{len(candidates)} pages have the {name} {ref!r} (A and B must each name one page); {instead}:"]
        for c in candidates[:MAX_LISTED]:
            lines.append(f"  {c['id']}  crawled {c['crawl_date'] or '-'}  cluster {c['cluster'] or '-'}  {c['url']}  ({c.get('source') or '-'})")
        if len(candidates) > MAX_LISTED:
            lines.append(f"  ... and {len(candidates) - MAX_LISTED} more")
        super().__init__("\n".join(terminal_safe(line) for line in lines))  # printed on a terminal


def index_file(path: str | Path) -> Path:
    """DIR/index.sqlite for an output folder, or the path itself when it is a file
    (index.sqlite.index_file; ExplainError when there is none)."""
    from pagetwin.index.sqlite import IndexError_
    from pagetwin.index.sqlite import index_file as resolve

    try:
        return resolve(path)
    except IndexError_ as exc:
        raise ExplainError(str(exc)) from None


def open_index(path: str | Path):
    """A read-only Index over an existing file (no new run is recorded, nothing is written)."""
    from pagetwin.index.sqlite import Index, IndexError_

    try:
        return Index.open_readonly(index_file(path))
    except IndexError_ as exc:
        raise ExplainError(str(exc)) from exc


def _settings(index) -> Any:
    from pagetwin.config import ConfigError, Settings

    raw = index._meta("settings")
    if raw is None:
        return Settings()
    try:
        return Settings.from_dict(json.loads(raw))
    except (ConfigError, ValueError):
        return Settings()


def split_passages(text: str) -> list[str]:
    """Lines (the extractor's paragraphs), then sentences within them; empty ones dropped."""
    out = []
    for line in text.split("\n"):
        for sentence in _SENTENCE_END.split(line.strip()):
            sentence = sentence.strip()
            if sentence:
                out.append(sentence)
    return out


def _norm(passage: str) -> str:
    return _SPACE.sub(" ", passage).strip().casefold()


def mark_passages(text_a: str, text_b: str) -> list[dict[str, str]]:
    """The two texts as a sequence of passages: op "same" (in both), "a" (only in A), "b"
    (only in B), in reading order of A with B's own passages where they occur."""
    pa, pb = split_passages(text_a), split_passages(text_b)
    matcher = difflib.SequenceMatcher(None, [_norm(p) for p in pa], [_norm(p) for p in pb], autojunk=False)
    out: list[dict[str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.extend({"op": "same", "text": p} for p in pa[i1:i2])
            continue
        out.extend({"op": "a", "text": p} for p in pa[i1:i2])
        out.extend({"op": "b", "text": p} for p in pb[j1:j2])
    return out


def _page_info(index, pid: int, reader: _Reader) -> dict[str, Any]:
    from pagetwin.pipeline import decompress_text

    row = index.page(pid) or {}
    cluster = index.db.execute("SELECT cluster, keep FROM clusters WHERE pid=?", (pid,)).fetchone()
    text, text_from, problem = decompress_text(row.get("text")), "index", None
    if row.get("text") is None:
        text_from = None
        if row.get("text_len"):
            text, problem = reader.text(index, pid, row)
            text_from = "source" if problem is None else None
    return {
        "pid": pid,
        "id": row.get("id"),
        "url": row.get("url"),
        "title": row.get("title") or "",
        "lang": row.get("lang"),
        "error": row.get("error"),
        "text": text,
        "text_from": text_from,  # "index", "source" (read back from its record), None (no text)
        "text_problem": problem,  # why a lean index's text could not be read back
        "cluster": cluster[0] if cluster else None,
        "keep": bool(cluster[1]) if cluster else None,
    }


class _Reader:
    """Reads pages' texts back from their source records (a lean index), with the index's
    settings and learned model (built on first use)."""

    def __init__(self, settings: Any) -> None:
        self.settings, self.worker = settings, None

    def text(self, index: Any, pid: int, row: dict[str, Any]) -> tuple[str, str | None]:
        """(main text, None), or ("", why it cannot be read back)."""
        source = row.get("source") or ""
        where = f"{source} at byte {row['warc_offset']}" if isinstance(row.get("warc_offset"), int) else source
        if not source or not os.path.isfile(source):
            return "", f"its text is not in the index and its source {source or '(none)'} is gone: moved or deleted"
        try:
            page = source_page(row, self.settings)
        except OSError as exc:
            return "", f"its text is not in the index and its source {source} cannot be read ({exc.strerror or exc})"
        if page is None:
            return "", f"its text is not in the index and its record {row.get('id')} is no longer in {where}"
        if row.get("payload_digest") and page.payload_digest != row["payload_digest"]:
            return "", f"its text is not in the index and its record in {where} changed (another payload digest)"
        if self.worker is None:
            from pagetwin.app import stored_model
            from pagetwin.pipeline import Worker

            self.worker = Worker(self.settings, stored_model(index, self.settings))
        result = self.worker.fingerprint(page)
        text = result.doc.text if result.doc else ""
        stored = {name: index.features(name, pid) for name in result.features}
        if len(text) != row.get("text_len") or any(stored[name] != data for name, data in result.features.items()):
            return "", (f"its text is not in the index and the text read back from {where} is not the one fingerprinted "
                        "(the file changed, or a later run learned another template model)")  # fmt: skip
        return text, None


def source_page(row: dict[str, Any], settings: Any) -> Any:
    """The Page a stored page row (id, source, warc_offset) was read from, read again from its
    source file as dedup read it; None when no such record is there. A WARC record at its
    offset is read alone (sources.split); an HTML file of a folder with the site dedup gave
    it (the folder: its path less its id); other files are read until the page is found."""
    from pagetwin.sources import Skip, SourceStats, input_kind, iter_pages

    source, page_id, offset = row["source"], row["id"], row.get("warc_offset")
    stats = SourceStats()
    if isinstance(offset, int):
        from pagetwin.sources.split import range_pages

        for page in range_pages(source, offset, offset + 1, settings.input, stats):
            if page.id == page_id:
                return page
    if input_kind(source) == "html":
        from pagetwin.sources.files import folder_site, read_html_file

        folder = source[: -len(page_id)].rstrip("/") if source.endswith("/" + page_id) else os.path.dirname(source)
        site = folder_site(folder) if source.endswith("/" + page_id) else ""
        page = read_html_file(source, page_id, settings.input, site)
        return None if isinstance(page, Skip) else page
    return next((p for p in iter_pages([source], settings.input, stats) if p.id == page_id), None)


def _resolve(index, ref: str) -> int:
    """The pid of the page ``ref`` names: its id, else its URL, when one page has it. Raises
    ExplainError when none has it, AmbiguousPage when several share it."""
    query = (
        "SELECT p.pid, p.id, p.url, p.crawl_date, c.cluster, p.source FROM pages p LEFT JOIN clusters c ON c.pid = p.pid"
        " WHERE p.{} = ? ORDER BY p.crawl_date, p.pid"
    )
    for column in ("id", "url"):
        rows = index.db.execute(query.format(column), (ref,)).fetchall()
        if len(rows) == 1:
            return rows[0][0]
        if rows:
            raise AmbiguousPage(ref, [{"id": r[1], "url": r[2], "crawl_date": r[3], "cluster": r[4], "source": r[5]} for r in rows], column)
    raise ExplainError(f"no page with id or URL {ref!r} in {index.path}")


def explain(index_path: str | Path, a: str, b: str) -> dict[str, Any]:
    """Everything known about pages ``a`` and ``b`` (ids or URLs) in the index; see the module
    docstring. ``index_path`` may also be a Spark executors' run's output (``explain_spark``).
    Raises ExplainError when the index or a page is missing, AmbiguousPage (an ExplainError)
    when a URL given is shared by several pages."""
    from pagetwin.runners.spark_output import OutputNotReadable, output_folder

    try:
        folder = output_folder(index_path)
    except OutputNotReadable as exc:
        raise ExplainError(str(exc)) from None
    if folder is not None:
        return explain_spark(folder, a, b)
    index = open_index(index_path)
    try:
        pids = [_resolve(index, ref) for ref in (a, b)]
        settings = _settings(index)
        reader = _Reader(settings)
        pa, pb = (_page_info(index, p, reader) for p in pids)
        results = _algorithms(
            settings, (a, b), lambda name, i: index.features(name, pids[i]), lambda name: index.shared_keys(name, *pids)
        )
        lo, hi = sorted(pids)
        row = index.db.execute("SELECT kind, evidence FROM edges WHERE a=? AND b=?", (lo, hi)).fetchone()
        edge = {"kind": row[0], "evidence": json.loads(row[1])} if row else None
        return _explained(pa, pb, edge, results)
    finally:
        index.db.close()


def _algorithms(settings: Any, refs: tuple[str, str], features: Any, shared_keys: Any) -> list[dict[str, Any]]:
    """Each algorithm's entry: shared keys (``shared_keys(name)``, sorted), and its verdict
    recomputed from the two pages' features (``features(name, 0 or 1)``; None: the page has
    none, named in ``detail``)."""
    from pagetwin.fingerprints import build_algorithms

    results = []
    for algo in build_algorithms(settings):
        da, db = features(algo.name, 0), features(algo.name, 1)
        shared = shared_keys(algo.name)
        entry: dict[str, Any] = {"algorithm": algo.name, "shared_keys": len(shared),
                                 "keys": [f"{k & (2**64 - 1):016x}" for k in shared[:8]]}
        if da is None or db is None:
            missing = [r for r, d in zip(refs, (da, db)) if d is None]
            entry.update(score=None, passed=False, detail={"no_features": missing})
        else:
            ev = algo.verify(algo.decode(da), algo.decode(db))
            entry.update(score=ev.score, passed=ev.passed, detail=ev.detail)
        results.append(entry)
    return results


def _explained(pa: dict[str, Any], pb: dict[str, Any], edge: dict[str, Any] | None, results: list) -> dict[str, Any]:
    passages = mark_passages(pa["text"], pb["text"])
    same_chars = sum(len(p["text"]) for p in passages if p["op"] == "same")
    total = sum(len(p["text"]) for p in passages if p["op"] in ("same", "a"))
    return {
        "a": pa,
        "b": pb,
        "same_cluster": pa["cluster"] is not None and pa["cluster"] == pb["cluster"],
        "edge": edge,
        "algorithms": results,
        "passages": passages,
        "shared_share_of_a": round(same_chars / total, 4) if total else 0.0,
    }


# -- a Spark executors' run's output (spark.link = executors) ---------------------------------


def explain_spark(folder: str, a: str, b: str) -> dict[str, Any]:
    """``explain`` on the outputs of a run with ``spark.link = executors`` (a local folder: see
    runners.spark_output): the pages found by id or URL in clusters.parquet, their records read
    back at pages.parquet's locators and fingerprinted again with the run's stored settings and
    learned models (models.parquet), each checked against what pages.parquet holds (text
    length, shortened candidate keys and payload digest); the edge from pairs.parquet. A page
    whose record cannot be read back, or is not the one fingerprinted, says why
    (``text_problem``) and has no features."""
    from pagetwin.runners.spark_output import OutputNotReadable, SparkOutput

    try:
        out = SparkOutput(folder)
        crows = _resolve_spark(out, [a, b])
        pids = [r["pid"] for r in crows]
        prows = out.pages(pids)
        settings = out.settings()
        read = _SparkReader(settings, out).read([(r, prows.get(r["pid"])) for r in crows])
        pair = out.pair(crows[0]["id"], crows[1]["id"])
    except OutputNotReadable as exc:
        raise ExplainError(str(exc)) from None
    pa, pb = (info for info, _ in read)
    results = _algorithms(
        settings, (a, b), lambda name, i: (read[i][1] or {}).get("features", {}).get(name),
        lambda name: sorted(set(_keys(read[0][1], name)) & set(_keys(read[1][1], name))),
    )  # fmt: skip
    edge = {"kind": pair["kind"], "evidence": json.loads(pair["evidence"])} if pair else None
    return _explained(pa, pb, edge, results)


def _keys(derived: dict[str, Any] | None, name: str) -> list[int]:
    return (derived or {}).get("keys", {}).get(name, [])


def _resolve_spark(out: Any, refs: list[str]) -> list[dict[str, Any]]:
    """clusters.parquet's row of the page each ref names (its id, else its URL), as
    ``_resolve`` (the first ref's error first); one scan for the ids, one for the URLs left."""
    by_id = out.find("id", refs)
    left = [ref for ref in refs if not by_id[ref]]
    by_url = out.find("url", left) if left else {}
    found = []
    for ref in refs:
        column, rows = ("id", by_id[ref]) if by_id[ref] else ("url", by_url[ref])
        if len(rows) > 1:
            raise AmbiguousPage(ref, rows, column)
        if not rows:
            raise ExplainError(f"no page with id or URL {ref!r} in {out.folder}")
        found.append(rows[0])
    return found


class _SparkReader:
    """Reads a Spark output's pages back from their records and fingerprints them again with
    the run's settings and learned models. The records are read first: of models.parquet's
    image hashes (a row per image of the crawl) only the rows their pages may look up are read."""

    def __init__(self, settings: Any, out: Any) -> None:
        self.settings, self.out = settings, out

    def read(self, rows: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """For each (clusters.parquet row, pages.parquet row or None): (the page's explain
        entry, {"features", "keys"} derived again or None when its record could not be read
        back as it was fingerprinted)."""
        from pagetwin.pipeline import Worker
        from pagetwin.runners.spark import page_image_urls

        records = [self._record(crow, prow) for crow, prow in rows]
        pages = [page for _, page in records if page is not None]
        if not pages:
            return [(info, None) for info, _ in records]
        worker = Worker(self.settings)  # parsing needs no model; the model is set once the URLs are known
        worker.learned = self.out.learned(self.settings, set().union(*(page_image_urls(worker, page) for page in pages)))
        return [(info, None if page is None else self._derived(worker, info, prow, page))
                for (info, page), (_, prow) in zip(records, rows)]  # fmt: skip

    def _record(self, crow: dict[str, Any], prow: dict[str, Any] | None) -> tuple[dict[str, Any], Any]:
        """(the page's explain entry, its record read back as a Page), or the entry saying
        why it cannot be read back (``text_problem``) and None."""
        from pagetwin.runners.spark_output import local_path

        info = {"pid": crow["pid"], "id": crow["id"], "url": crow["url"], "title": "", "lang": None,
                "error": (prow or {}).get("error"), "text": "", "text_from": None, "text_problem": None,
                "cluster": crow["cluster"], "keep": crow["keep"]}  # fmt: skip
        source = (prow or {}).get("source") or ""
        offset = (prow or {}).get("warc_offset")
        path = local_path(source) if source else None
        problem = None
        if prow is None:
            problem = "pages.parquet has no row for it"
        elif path is None:
            problem = f"its record is in {source}: explain reads records from local files and file: URIs only"
        elif not os.path.isfile(path):
            problem = f"its source {path or '(none)'} is gone: moved or deleted"
        if problem is not None:
            info["text_problem"] = problem
            return info, None
        try:
            page = source_page({"source": path, "id": crow["id"], "warc_offset": offset}, self.settings)
        except OSError as exc:
            info["text_problem"] = f"its source {path} cannot be read ({exc.strerror or exc})"
            return info, None
        except Exception as exc:  # noqa: BLE001 - a damaged file: said, not a traceback
            info["text_problem"] = f"its record in {_where(prow)} cannot be read ({type(exc).__name__}: {' '.join(str(exc).split())[:160]})"
            return info, None
        if page is None:
            info["text_problem"] = f"its record {crow['id']} is no longer in {_where(prow)}"
            return info, None
        if not _same_digest(prow, page.payload_digest):
            info["text_problem"] = f"its record in {_where(prow)} changed (another payload digest)"
            return info, None
        return info, page

    def _derived(self, worker: Any, info: dict[str, Any], prow: dict[str, Any], page: Any) -> dict[str, Any] | None:
        """The page fingerprinted again: {"features", "keys"}, its text and title in ``info``;
        None (and why in ``info``) when that is not what pages.parquet keeps of it."""
        result = worker.fingerprint(page)
        text = result.doc.text if result.doc else ""
        if len(text) != prow.get("text_len") or not _same_fingerprints(prow, result):
            info["text_problem"] = (f"the text read back from {_where(prow)} is not the one fingerprinted "
                                    "(the file changed since the run)")  # fmt: skip
            return None
        doc = result.doc
        info.update(title=(doc.title if doc else None) or "", lang=doc.lang if doc else None)
        if text:
            info.update(text=text, text_from="source")
        return {"features": result.features, "keys": result.keys}


def _where(prow: dict[str, Any]) -> str:
    """A pages.parquet row's record, for messages: its source, and its offset when it has one."""
    offset = prow.get("warc_offset")
    return f"{prow.get('source')} at byte {offset}" if isinstance(offset, int) else str(prow.get("source"))


def _same_digest(prow: dict[str, Any], digest: str | None) -> bool:
    """Whether a record read back has the payload digest pages.parquet keeps of it: whole
    (``spark.index = features``) or shortened (``digest_key``, the lean index)."""
    from pagetwin.runners.spark_link import lean_digest_key

    if "payload_digest" in prow:
        return digest == prow["payload_digest"]
    return lean_digest_key(digest) == prow.get("digest_key")


def _same_fingerprints(prow: dict[str, Any], result: Any) -> bool:
    """Whether a record fingerprinted again gives what pages.parquet keeps of it: the features
    whole (``spark.index = features``), or each algorithm's keys shortened (the lean index)."""
    from pagetwin.runners.spark_link import short_keys

    if "features" in prow:
        return {name: bytes(data) for name, data in (prow["features"] or ())} == result.features
    return {name: bytes(data) for name, data in (prow.get("keys") or ())} == short_keys(result.keys)


def format_explain(d: dict[str, Any], width: int = 100) -> str:
    """A terminal rendering: header, algorithm table, passages ("=" both, "-" only A, "+" only B).
    What comes from crawled pages (ids, URLs, titles, text) is made terminal_safe."""
    lines = []
    for tag in ("a", "b"):
        p = d[tag]
        keep = " (kept)" if p.get("keep") else ""
        lines.append(f"{tag.upper()}: {p['id']}  {p['url']}")
        lines.append(f"   title: {p['title'][:width]!s}  cluster: {p['cluster']}{keep}  words: {len(p['text'].split())}")
        if p.get("text_problem"):
            lines.append(f"   text: none shown, {p['text_problem']}")
    verdict = "same cluster" if d["same_cluster"] else "different clusters"
    edge = d["edge"]
    lines.append(f"{verdict}; edge: {edge['kind'] if edge else 'none'}; "
                 f"shared text: {100 * d['shared_share_of_a']:.0f}% of A")
    lines.append("")
    lines.append(f"{'algorithm':<12} {'score':>7}  {'pass':<5} {'shared keys':>11}  detail")
    for r in d["algorithms"]:
        score = "-" if r["score"] is None else f"{r['score']:.3f}"
        detail = ", ".join(f"{k}={v}" for k, v in (r.get("detail") or {}).items())
        lines.append(f"{r['algorithm']:<12} {score:>7}  {'yes' if r['passed'] else 'no':<5} {r['shared_keys']:>11}  {detail}")
    lines.append("")
    lines.append("passages: '=' in both, '-' only in A, '+' only in B")
    mark = {"same": "=", "a": "-", "b": "+"}
    for p in d["passages"]:
        text = p["text"]
        if len(text) > width:
            text = text[: width - 3] + "..."
        lines.append(f"{mark[p['op']]} {text}")
    return "\n".join(terminal_safe(line) for line in lines) + "\n"
