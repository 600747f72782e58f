"""Why were two pages called duplicates (or not)? ``pagetwin explain DIR A B``.

``explain(index_path, a, b)`` reads an index that ``pagetwin dedup`` wrote (DIR/index.sqlite,
or the file itself) without changing it, and returns, for two pages given by id or URL:

- both pages' main text, and its passages marked: the sentences the pages share, and those
  only one of them has (difflib on sentences, compared case- and space-insensitively);
- for each algorithm the index was built with: the similarity and whether it passes, recomputed
  by the algorithm's own ``verify`` from the stored features, and the candidate keys the two
  pages share (the keys that made them a candidate pair; none = never compared by it);
- the stored edge between them (its evidence, as in pairs.jsonl) and their clusters.

``format_explain(d)`` renders that dict for a terminal.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_SPACE = re.compile(r"\s+")


class ExplainError(Exception):
    """The index or one of the pages cannot be found."""


def index_file(path: str | Path) -> Path:
    """DIR/index.sqlite for an output folder, or the path itself when it is a file."""
    p = Path(path)
    if p.is_dir():
        p = p / "index.sqlite"
    if not p.is_file():
        raise ExplainError(f"no index at {p} (run pagetwin dedup first, or give the index file)")
    return p


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


def _page_info(index, pid: int) -> dict[str, Any]:
    from pagetwin.pipeline import decompress_text

    row = index.page(pid) or {}
    cluster = index.db.execute("SELECT cluster, keep FROM clusters WHERE pid=?", (pid,)).fetchone()
    return {
        "pid": pid,
        "id": row.get("id"),
        "url": row.get("url"),
        "title": row.get("title") or "",
        "lang": row.get("lang"),
        "error": row.get("error"),
        "text": decompress_text(row.get("text")),
        "cluster": cluster[0] if cluster else None,
        "keep": bool(cluster[1]) if cluster else None,
    }


def explain(index_path: str | Path, a: str, b: str) -> dict[str, Any]:
    """Everything known about pages ``a`` and ``b`` (ids or URLs) in the index; see the module
    docstring. Raises ExplainError when the index or a page is missing."""
    from pagetwin.fingerprints import build_algorithms

    index = open_index(index_path)
    try:
        pids = []
        for ref in (a, b):
            pid = index.find_page(ref)
            if pid is None:
                raise ExplainError(f"no page with id or URL {ref!r} in {index.path}")
            pids.append(pid)
        pa, pb = (_page_info(index, p) for p in pids)
        settings = _settings(index)
        results = []
        for algo in build_algorithms(settings):
            da, db = index.features(algo.name, pids[0]), index.features(algo.name, pids[1])
            shared = index.shared_keys(algo.name, pids[0], pids[1])
            entry: dict[str, Any] = {"algorithm": algo.name, "shared_keys": len(shared),
                                     "keys": [f"{k & (2**64 - 1):016x}" for k in shared[:8]]}
            if da is None or db is None:
                missing = [r for r, d in ((a, da), (b, db)) if d is None]
                entry.update(score=None, passed=False, detail={"no_features": missing})
            else:
                ev = algo.verify(algo.decode(da), algo.decode(db))
                entry.update(score=ev.score, passed=ev.passed, detail=ev.detail)
            results.append(entry)
        lo, hi = sorted(pids)
        row = index.db.execute("SELECT kind, evidence FROM edges WHERE a=? AND b=?", (lo, hi)).fetchone()
        edge = {"kind": row[0], "evidence": json.loads(row[1])} if row else None
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
    finally:
        index.db.close()


def format_explain(d: dict[str, Any], width: int = 100) -> str:
    """A terminal rendering: header, algorithm table, passages ("=" both, "-" only A, "+" only B)."""
    lines = []
    for tag in ("a", "b"):
        p = d[tag]
        keep = " (kept)" if p.get("keep") else ""
        lines.append(f"{tag.upper()}: {p['id']}  {p['url']}")
        lines.append(f"   title: {p['title'][:width]!s}  cluster: {p['cluster']}{keep}  words: {len(p['text'].split())}")
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
    return "\n".join(lines) + "\n"
