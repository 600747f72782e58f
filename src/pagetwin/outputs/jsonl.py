"""clusters.jsonl, pairs.jsonl and summary.json, streamed from the index; each written to a
temporary file and renamed into place (outputs.files.atomic_open)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from json.encoder import encode_basestring
from operator import itemgetter
from pathlib import Path
from typing import Any

from pagetwin.index.sqlite import pid_chunks
from pagetwin.outputs.files import atomic_open

try:
    from pagetwin import _edges  # pairs.jsonl's lines' native kernel (pair_text; pair_text_reference is its reference)
except ImportError:  # not compiled (a source checkout without `pip install -e .`)
    _edges = None


def index_clusters(index: Any):
    """(id, url, cluster, keep, cluster size, kept page's id) of every page in the index, in the
    order they were added: the same pages pairs.jsonl describes (an index added to holds earlier
    runs' pages too)."""
    return index.db.execute(
        "SELECT p.id, p.url, c.cluster, c.keep, s.size, k.id FROM pages p JOIN clusters c USING (pid)"
        " JOIN (SELECT cluster, COUNT(*) AS size, MAX(CASE WHEN keep=1 THEN pid END) AS kept"
        "       FROM clusters GROUP BY cluster) s USING (cluster)"
        " LEFT JOIN pages k ON k.pid = s.kept ORDER BY p.pid"
    )


def write_clusters(index: Any, path: Path) -> tuple[int, int, int]:
    """One line per page of the index: {"id", "url", "cluster", "keep", "cluster_size",
    "kept_id"} (the kept page's id: the page itself when "keep"). Returns (lines, clusters,
    duplicates = pages not kept)."""
    lines = 0
    clusters: set[str] = set()
    with atomic_open(path) as out:
        for page_id, url, cluster, keep, size, kept_id in index_clusters(index):
            out.write(cluster_line(page_id, url, cluster, keep, size, kept_id))
            out.write("\n")
            lines += 1
            clusters.add(cluster)
    return lines, len(clusters), lines - len(clusters)


MAX_HOSTS = 1000  # hosts listed one by one in the summary (most pages first); the rest summed


def size_bucket(size: int) -> str:
    """The histogram bucket of a cluster size: "1", "2", "3-4", "5-8", ... (powers of two)."""
    if size <= 2:
        return str(size)
    high = 1 << (size - 1).bit_length()
    return f"{high // 2 + 1}-{high}"


def cluster_stats(index: Any, max_hosts: int = MAX_HOSTS) -> dict[str, Any]:
    """What the summary says of the clusters and hosts: "cluster_sizes" {bucket: clusters}
    (size_bucket, smallest first), "largest_cluster", and "hosts": {"count", "listed": [{"host",
    "pages", "duplicates"}] for the ``max_hosts`` hosts with most pages, "others": the pages and
    duplicates of the hosts not listed}."""
    buckets: dict[str, int] = {}
    largest = 0
    sizes = "SELECT size, COUNT(*) FROM (SELECT COUNT(*) AS size FROM clusters GROUP BY cluster) GROUP BY size ORDER BY size"
    for size, n in index.db.execute(sizes):
        buckets[size_bucket(size)] = buckets.get(size_bucket(size), 0) + n
        largest = size
    hosts = index.db.execute(
        "SELECT p.host, COUNT(*) AS n, SUM(c.keep = 0) FROM pages p JOIN clusters c USING (pid)"
        " GROUP BY p.host ORDER BY n DESC, p.host"
    ).fetchall()
    listed = [{"host": h, "pages": n, "duplicates": d} for h, n, d in hosts[:max_hosts]]
    rest = hosts[max_hosts:]
    others = {"hosts": len(rest), "pages": sum(r[1] for r in rest), "duplicates": sum(r[2] for r in rest)}
    return {"cluster_sizes": buckets, "largest_cluster": largest, "hosts": {"count": len(hosts), "listed": listed, "others": others}}


_PAIRS_CHUNK = 8192  # edges read and written at a time
_QUOTED_PAGES = 1 << 16  # pages whose quoted id and url pair_texts keeps (then starts again)


def pair_texts(index: Any, edges: Any = None) -> Iterator[tuple[str, int]]:
    """pairs.jsonl's lines (``pair_line`` of each verified edge, by (a, b)), a chunk of lines
    at a time as one text, with how many. The edges are read without their pages (a join read
    both pages of every edge, 269,616 edges twice each at corpus-10000-shared); each page's
    id and url are read once per chunk that lacks them and quoted once (``_quoted``), kept
    for up to _QUOTED_PAGES pages: an edge's line is then its pieces joined. An edge whose page
    is not stored has no line (as the join had none). ``edges``: every stored edge as columns
    in (a, b) order (``firsts``, ``seconds``, ``kinds``, ``texts``: match.EdgeColumns, what
    the link step stored), taken from them rather than read back from the index."""
    quoted: dict[int, tuple[str, str]] = {}
    kinds: dict[Any, str] = {}
    for chunk in _edge_chunks(index, edges):
        wanted = set(map(itemgetter(0), chunk))
        wanted.update(map(itemgetter(1), chunk))
        wanted.difference_update(quoted)
        if len(quoted) + len(wanted) > _QUOTED_PAGES:
            quoted.clear()
            wanted = set(map(itemgetter(0), chunk)) | set(map(itemgetter(1), chunk))
        for part, marks in pid_chunks(sorted(wanted)):
            rows = index.db.execute(f"SELECT pid, id, url FROM pages WHERE pid IN ({marks})", part)
            quoted.update((pid, (_quoted(page_id), _quoted(url))) for pid, page_id, url in rows)
        yield pair_text(chunk, quoted, kinds)


def _edge_chunks(index: Any, edges: Any) -> Iterator[list[tuple]]:
    """The edges (a, b, kind, evidence) by (a, b), _PAIRS_CHUNK at a time: from ``edges``'
    columns when given (reading the evidence back cost a third of pairs.jsonl's time), else
    from the index."""
    if edges is None:
        rows = index.db.execute("SELECT a, b, kind, evidence FROM edges ORDER BY a, b")
        while chunk := rows.fetchmany(_PAIRS_CHUNK):
            yield chunk
        return
    firsts, seconds, kinds, texts = edges.firsts, edges.seconds, edges.kinds, edges.texts
    for start in range(0, len(firsts), _PAIRS_CHUNK):
        end = start + _PAIRS_CHUNK
        yield list(zip(firsts[start:end], seconds[start:end], kinds[start:end], texts[start:end]))


def pair_text(chunk: list[tuple], quoted: dict[int, tuple[str, str]], kinds: dict[Any, str]) -> tuple[str, int]:
    """The lines of a chunk of edges (a, b, kind, evidence) whose pages ``quoted`` holds
    ((quoted id, quoted url) of a pid; an edge with a page it lacks has none) as one text, each
    line ended, with how many; each kind quoted once in ``kinds`` (filled as they come).
    Natively when built (_edges.pair_text: the text joined once from its pieces, not a string
    a line joined again, 4x faster), else ``pair_text_reference``."""
    if _edges is not None:
        return _edges.pair_text(chunk, quoted, kinds, _quoted)
    return pair_text_reference(chunk, quoted, kinds)


def pair_text_reference(chunk: list[tuple], quoted: dict[int, tuple[str, str]], kinds: dict[Any, str]) -> tuple[str, int]:
    """``pair_text`` in Python."""
    lines = []
    for a, b, kind, evidence in chunk:
        page_a, page_b = quoted.get(a), quoted.get(b)
        if page_a is None or page_b is None:
            continue
        kind_text = kinds.get(kind)
        if kind_text is None:
            kind_text = kinds[kind] = _quoted(kind)
        lines.append(_quoted_line(page_a[0], page_b[0], page_a[1], page_b[1], kind_text, evidence))  # its pieces quoted once
    return "\n".join(lines) + "\n" if lines else "", len(lines)


def _quoted(value: Any) -> str:
    """A value's text in a json.dumps(..., ensure_ascii=False) object (pair_line's pieces)."""
    return encode_basestring(value) if type(value) is str else json.dumps(value, ensure_ascii=False)


def write_pairs(index: Any, path: Path, edges: Any = None) -> int:
    """One line per verified edge: both pages, the edge kind and every algorithm's evidence
    (``edges``: every stored edge as columns, as ``pair_texts`` takes them).

    The evidence goes out as the index stores it: match.evidence_json wrote it with
    ``json.dumps(..., ensure_ascii=False)``, which gives back the same text from what
    ``json.loads`` reads of it, so parsing and writing it again (most of this step's time)
    would change nothing."""
    n = 0
    with atomic_open(path) as out:
        for text, lines in pair_texts(index, edges):
            out.write(text)
            n += lines
    return n


def cluster_line(page_id: str, url: str, cluster: str, keep: Any, size: int, kept_id: str) -> str:
    """clusters.jsonl's line for one page (without its newline): both runners write it."""
    if type(page_id) is str and type(url) is str and type(cluster) is str and type(size) is int and type(kept_id) is str:
        q = encode_basestring  # as pair_line: json.dumps's text for these types
        return (
            f'{{"id": {q(page_id)}, "url": {q(url)}, "cluster": {q(cluster)}, "keep": {"true" if keep else "false"},'
            f' "cluster_size": {int.__repr__(size)}, "kept_id": {q(kept_id)}}}'
        )
    return cluster_line_reference(page_id, url, cluster, keep, size, kept_id)


def cluster_line_reference(page_id: Any, url: Any, cluster: Any, keep: Any, size: Any, kept_id: Any) -> str:
    """``cluster_line`` through json.dumps (values of any type)."""
    record = {"id": page_id, "url": url, "cluster": cluster, "keep": bool(keep), "cluster_size": size, "kept_id": kept_id}
    return json.dumps(record, ensure_ascii=False)


def pair_line(id_a: str, id_b: str, url_a: str, url_b: str, kind: str, evidence: str) -> str:
    """pairs.jsonl's line for one edge (without its newline), ``evidence`` being
    match.evidence_json's text, spliced in as it is (parsing it and writing it again would give
    the same text: it was written with ``ensure_ascii=False``)."""
    if type(id_a) is str and type(id_b) is str and type(url_a) is str and type(url_b) is str and type(kind) is str:
        # json.dumps(..., ensure_ascii=False) writes a str as encode_basestring does (its C
        # escaper): the same text without an encoder made per line (a third of this step)
        q = encode_basestring
        return _quoted_line(q(id_a), q(id_b), q(url_a), q(url_b), q(kind), evidence)
    return pair_line_reference(id_a, id_b, url_a, url_b, kind, evidence)


def _quoted_line(id_a: str, id_b: str, url_a: str, url_b: str, kind: str, evidence: str) -> str:
    """pair_line of pieces already quoted as JSON values (``_quoted``); _edges.pair_text
    writes the same format."""
    return f'{{"a": {id_a}, "b": {id_b}, "url_a": {url_a}, "url_b": {url_b}, "kind": {kind}, "evidence": {evidence}}}'


def pair_line_reference(id_a: Any, id_b: Any, url_a: Any, url_b: Any, kind: Any, evidence: str) -> str:
    """``pair_line`` through json.dumps (values of any type: a NULL url as null)."""
    head = json.dumps({"a": id_a, "b": id_b, "url_a": url_a, "url_b": url_b, "kind": kind}, ensure_ascii=False)
    return f'{head[:-1]}, "evidence": {evidence}}}'


def write_summary(summary: dict[str, Any], path: Path) -> None:
    with atomic_open(path) as out:
        json.dump(summary, out, indent=2, ensure_ascii=False, default=str)
        out.write("\n")
