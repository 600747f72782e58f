"""``pagetwin report OUT_DIR``: one self-contained static HTML file about a dedup run.

``gather(out_dir)`` reads the run's summary.json and index.sqlite (read only) into a plain dict;
``render(data)`` makes the HTML; ``write_report`` does both. Sections: the run at a glance,
cluster sizes (a hand-built SVG histogram) and the largest clusters, per site (pages, duplicates,
template and noise shares, pairs across hosts), pairs side by side (``explain.explain``, the
same content as ``pagetwin explain``), and a site's template on one of its pages (the learned
``SiteTemplates`` of the index applied to the page read again from its input).

Safety: every string from a crawl is HTML-escaped (``html.escape``) and the page carries a
Content-Security-Policy that allows no network access and runs only the report's own script
and style (by their SHA-256), so a crawled ``<script>`` neither shows as markup nor runs.

Size bound: every list is cut at ``Limits`` (the largest clusters, the sites with most pages,
the host pairs with most pairs, a few pairs and template views, passages and blocks per page,
characters per passage), the rest summed in one line; so the file's size does not grow with
the run (see bench/report_size.py). Tables page through their rows in the browser.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pagetwin.explain import ExplainError


class ReportError(Exception):
    """The folder is not the output of a finished ``pagetwin dedup`` run."""


@dataclass(frozen=True)
class Limits:
    """What the report shows in full; the rest is summed (the module docstring's size bound)."""

    clusters: int = 100  # largest clusters listed
    samples: int = 5  # sample URLs (and hosts) per cluster
    sites: int = 100  # sites with most pages listed
    links: int = 50  # host pairs (pairs across hosts) listed
    pairs: int = 12  # pairs shown side by side
    templates: int = 5  # sites whose template is shown on one of their pages
    site_samples: int = 3  # pages read again per listed site, for its template and noise shares
    passages: int = 80  # passages per pair, blocks per template view
    chars: int = 400  # characters per passage, block, URL or title shown
    scan_records: int = 20_000  # the first records of the inputs, where the pages read again are taken from
    page_size: int = 20  # table rows per page in the browser


# -- gathering ----------------------------------------------------------------------------


def gather(out_dir: str | Path, limits: Limits = Limits(), asked: list[tuple[str, str]] = ()) -> dict[str, Any]:
    """Everything the report shows, as a JSON-able dict (ReportError: no finished run there, or
    a pair ``asked`` for, by ids or URLs, that ``explain`` cannot find); the ``asked`` pairs
    come first in the pairs section, beside the ones the report picks."""
    from pagetwin.explain import open_index

    out = Path(out_dir)
    summary = _load_summary(out)
    index_path = out / "index.sqlite"
    if not index_path.is_file() and summary.get("index"):
        index_path = Path(summary["index"])
    try:
        index = open_index(index_path)
    except ExplainError as exc:
        raise ReportError(str(exc)) from None
    try:
        settings = _settings(index)
        sites = _sites(index, summary, limits)
        clusters = _clusters(index, limits)
        pairs = _pairs(index, index_path, clusters["listed"], limits, asked)
        reread = _reread(index, settings, sites["listed"], limits)
    finally:
        index.db.close()
    return {
        "out_dir": str(out),
        "overview": _overview(summary),
        "sizes": summary.get("cluster_sizes") or clusters["sizes"],
        "clusters": clusters,
        "sites": sites,
        "pairs": pairs,
        "templates": reread,
        "limits": asdict(limits),
    }


def _load_summary(out: Path) -> dict[str, Any]:
    path = out / "summary.json"
    if not out.is_dir():
        raise ReportError(f"{out}: no such folder (give the --out folder of pagetwin dedup)")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{out}: no summary.json (not the --out folder of a finished pagetwin dedup run)") from None
    except (OSError, ValueError) as exc:
        raise ReportError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(summary, dict) or "pages" not in summary:
        raise ReportError(f"{path}: not a pagetwin dedup summary")
    return summary


def _settings(index: Any) -> Any:
    from pagetwin.config import ConfigError, Settings

    try:
        return Settings.from_dict(index.stored_settings() or {})
    except (ConfigError, ValueError, TypeError):
        return Settings()


def _overview(summary: dict[str, Any]) -> dict[str, Any]:
    records, pages = summary.get("records") or {}, summary.get("pages") or {}
    return {
        "pages_read": pages.get("read", 0),
        "pages_in_output": pages.get("in_output", 0),
        "records_total": records.get("records_total", 0),
        "skipped": records.get("skipped") or {},
        "without_analysis": pages.get("without_analysis") or {},
        "clusters": summary.get("clusters", 0),
        "duplicates": summary.get("duplicates", 0),
        "pairs": summary.get("pairs", 0),
        "edges_by_kind": summary.get("edges_by_kind") or {},
        "seconds": summary.get("seconds") or {},
        "input_status": summary.get("input_status", "ok"),
        "input_errors": len(summary.get("input_errors") or []),
        "inputs": summary.get("inputs") or [],
        "version": summary.get("version", ""),
        "largest_cluster": summary.get("largest_cluster"),
    }


def _clusters(index: Any, limits: Limits) -> dict[str, Any]:
    """The largest clusters (more than one page), each with its kept page, sample URLs, hosts
    and the algorithms whose verified edges joined it; the sizes of all (size_bucket)."""
    from pagetwin.outputs.jsonl import size_bucket

    db = index.db
    sizes: Counter = Counter()
    multi = multi_pages = 0
    for size, n in db.execute("SELECT size, COUNT(*) FROM (SELECT COUNT(*) AS size FROM clusters GROUP BY cluster) GROUP BY size"):
        sizes[size_bucket(size)] += n
        if size > 1:
            multi, multi_pages = multi + n, multi_pages + n * size
    top = db.execute(
        "SELECT cluster, COUNT(*) AS n FROM clusters GROUP BY cluster HAVING n > 1 ORDER BY n DESC, cluster LIMIT ?",
        (limits.clusters,),
    ).fetchall()
    listed = [_cluster(db, name, size, limits) for name, size in top]
    shown = sum(c["size"] for c in listed)
    order = sorted(sizes, key=lambda b: int(b.split("-")[0]))
    return {"sizes": {b: sizes[b] for b in order}, "listed": listed, "more": multi - len(listed), "more_pages": multi_pages - shown}


def _cluster(db: Any, name: str, size: int, limits: Limits) -> dict[str, Any]:
    members = db.execute(
        "SELECT p.pid, p.id, p.url, p.title, c.keep FROM clusters c JOIN pages p USING (pid) WHERE c.cluster=?"
        " ORDER BY c.keep DESC, p.pid LIMIT ?",
        (name, limits.samples + 1),
    ).fetchall()
    hosts = db.execute(
        "SELECT p.host, COUNT(*) AS n FROM clusters c JOIN pages p USING (pid) WHERE c.cluster=? GROUP BY p.host ORDER BY n DESC, p.host",
        (name,),
    ).fetchall()
    algorithms: Counter = Counter()
    kinds: Counter = Counter()
    edges = db.execute(
        "SELECT e.kind, e.evidence FROM clusters ca JOIN edges e ON e.a = ca.pid JOIN clusters cb ON cb.pid = e.b"
        " WHERE ca.cluster = ? AND cb.cluster = ? LIMIT 5000",
        (name, name),
    )
    for kind, evidence in edges:
        kinds[kind] += 1
        for item in _evidence(evidence):
            if item.get("passed"):
                algorithms[str(item.get("algorithm"))] += 1
    kept = members[0] if members and members[0][4] else None
    return {
        "cluster": name,
        "size": size,
        "kept": {"id": _cut(kept[1], limits.chars), "url": _cut(kept[2], limits.chars), "title": _cut(kept[3] or "", limits.chars)} if kept else None,
        "samples": [{"id": _cut(m[1], limits.chars), "url": _cut(m[2], limits.chars)} for m in members if not m[4]][: limits.samples],
        "hosts": [{"host": _cut(h, limits.chars), "pages": n} for h, n in hosts[: limits.samples]],
        "host_count": len(hosts),
        "algorithms": dict(algorithms.most_common()),
        "edge_kinds": dict(kinds.most_common()),
    }


def _evidence(raw: str) -> list[dict[str, Any]]:
    try:
        items = json.loads(raw)
    except ValueError:
        return []
    if isinstance(items, dict):  # an older layout: {algorithm: {...}}
        items = [{"algorithm": k, **v} for k, v in items.items() if isinstance(v, dict)]
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _sites(index: Any, summary: dict[str, Any], limits: Limits) -> dict[str, Any]:
    """Pages and duplicates per host (most pages first), and the host pairs with most pairs
    between them (pairs.jsonl's edges across hosts, by kind)."""
    db = index.db
    rows = db.execute(
        "SELECT p.host, COUNT(*) AS n, SUM(c.keep = 0) FROM pages p JOIN clusters c USING (pid) GROUP BY p.host ORDER BY n DESC, p.host"
    ).fetchall()
    listed = [{"host": h, "pages": n, "duplicates": d or 0} for h, n, d in rows[: limits.sites]]  # cut when shown
    rest = rows[limits.sites :]
    links: dict[tuple[str, str], Counter] = {}
    # Per host pair and kind: the pairs, and in how many the page on the first host was crawled
    # first (the other, later: a hint at who copies whom; undated pages count for neither).
    cross = db.execute(
        "SELECT pa.host, pb.host, e.kind, COUNT(*), SUM(pa.crawl_date < pb.crawl_date), SUM(pb.crawl_date < pa.crawl_date)"
        " FROM edges e JOIN pages pa ON pa.pid = e.a JOIN pages pb ON pb.pid = e.b"
        " WHERE pa.host != pb.host GROUP BY pa.host, pb.host, e.kind"
    )
    first: dict[tuple[str, str], Counter] = {}
    for ha, hb, kind, n, a_first, b_first in cross:
        key = tuple(sorted((ha, hb)))
        links.setdefault(key, Counter())[kind] += n
        earlier = first.setdefault(key, Counter())
        earlier[ha] += a_first or 0
        earlier[hb] += b_first or 0
    ranked = sorted(links.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    return {
        "listed": listed,
        "count": len(rows),
        "more": {"hosts": len(rest), "pages": sum(r[1] for r in rest), "duplicates": sum(r[2] or 0 for r in rest)},
        "links": [{"a": _cut(a, limits.chars), "b": _cut(b, limits.chars), "pairs": sum(k.values()), "kinds": dict(k.most_common()),
                   "a_first": first[(a, b)][a], "b_first": first[(a, b)][b]} for (a, b), k in ranked[: limits.links]],
        "more_links": max(0, len(ranked) - limits.links),
    }


def _pairs(
    index: Any, index_path: Path, clusters: list[dict[str, Any]], limits: Limits, asked: list[tuple[str, str]] = ()
) -> dict[str, Any]:
    """``explain`` of a few pairs: an edge inside each of the largest clusters (its kept page
    first), then edges across hosts, then edges that did not join their pages in one cluster
    (partial, related)."""
    from pagetwin.explain import explain

    shown, failed = [], 0
    for a, b in asked:
        try:
            shown.append(_cut_pair(explain(index_path, a, b), None, limits))
        except ExplainError as exc:  # the user's own pair: say why, as pagetwin explain would
            raise ReportError(f"--pair {a} {b}: {exc}") from None
    chosen = _chosen_pairs(index.db, clusters, limits.pairs)
    for a, b, cluster in chosen:
        (id_a, _), (id_b, _) = index.page_ident(a), index.page_ident(b)
        try:
            d = explain(index_path, id_a, id_b)
        except ExplainError:  # an id two sources share: explain cannot tell which is meant
            failed += 1
            continue
        shown.append(_cut_pair(d, cluster, limits))
    return {"listed": shown, "not_shown": failed, "total": index.db.execute("SELECT COUNT(*) FROM edges").fetchone()[0]}


def _chosen_pairs(db: Any, clusters: list[dict[str, Any]], n: int) -> list[tuple[int, int, str | None]]:
    """Up to ``n`` edges (a, b, the listed cluster they were picked for or None), each once."""
    inside = (
        "SELECT e.a, e.b FROM clusters ca JOIN edges e ON e.a = ca.pid JOIN clusters cb ON cb.pid = e.b"
        " WHERE ca.cluster = ? AND cb.cluster = ? ORDER BY ca.keep + cb.keep DESC, e.a, e.b LIMIT 1"
    )
    chosen: dict[tuple[int, int], str | None] = {}
    for c in clusters[: max(1, n * 2 // 3)]:
        for a, b in db.execute(inside, (c["cluster"], c["cluster"])):
            chosen.setdefault((a, b), c["cluster"])
    others = (
        "SELECT e.a, e.b FROM edges e JOIN pages pa ON pa.pid = e.a JOIN pages pb ON pb.pid = e.b"
        " WHERE pa.host != pb.host ORDER BY e.a, e.b LIMIT ?",
        "SELECT e.a, e.b FROM edges e JOIN clusters ca ON ca.pid = e.a JOIN clusters cb ON cb.pid = e.b"
        " WHERE ca.cluster != cb.cluster ORDER BY e.a, e.b LIMIT ?",
    )
    for query in others:
        for a, b in db.execute(query, (n,)):
            if len(chosen) >= n:
                break
            chosen.setdefault((a, b), None)
    return [(a, b, c) for (a, b), c in list(chosen.items())[:n]]


def _cut_pair(d: dict[str, Any], cluster: str | None, limits: Limits) -> dict[str, Any]:
    passages = d["passages"]
    for side in ("a", "b"):
        d[side].pop("text", None)
        for key in ("id", "url", "title"):
            d[side][key] = _cut(d[side][key] or "", limits.chars)
    d["passages"] = [{"op": p["op"], "text": _cut(p["text"], limits.chars)} for p in passages[: limits.passages]]
    d["passages_more"] = max(0, len(passages) - limits.passages)
    d["from_cluster"] = cluster
    return d


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def crawled_chars_bound(limits: Limits) -> int:
    """The most characters of crawled text the report can hold, whatever the run's size:
    each list is cut at its limit and each string at ``limits.chars``."""
    per_cluster = (3 + 2 * limits.samples) * limits.chars + limits.samples * limits.chars  # kept page, samples, hosts
    per_pair = (2 * 3 + 2 * limits.passages) * limits.chars  # two heads; a shared passage is shown twice
    per_view = (2 + limits.passages) * limits.chars
    return (limits.clusters * per_cluster + limits.sites * limits.chars + 2 * limits.links * limits.chars
            + limits.pairs * per_pair + limits.templates * per_view)  # fmt: skip


def _reread(index: Any, settings: Any, sites: list[dict[str, Any]], limits: Limits) -> dict[str, Any]:
    """Per listed site, a few of its pages read again from the inputs: how much of their text
    the site's template removed and how much was page-level noise; for the first
    ``limits.templates`` sites (most pages first), one page's blocks as decided
    (outputs.report_pages)."""
    from pagetwin.app import stored_model
    from pagetwin.outputs.report_pages import TemplateViews, read_samples

    try:
        learned = stored_model(index, settings)
    except Exception as exc:  # noqa: BLE001 - a model this version cannot read: no template view
        return {"note": f"the index's learned model cannot be read ({exc})", "shares": {}, "views": []}
    templates = learned.templates if learned is not None else None
    hosts = [s["host"] for s in sites]
    sources = [src for (src,) in index.db.execute("SELECT source FROM pages GROUP BY source ORDER BY MIN(pid)")]
    pages, note = read_samples(sources, hosts, limits.site_samples, settings, limits.scan_records)
    marker = TemplateViews(settings, templates)
    shares: dict[str, dict[str, float]] = {}
    first_view: dict[str, dict[str, Any]] = {}
    for host, page in pages:
        view = marker.view(page, limits.passages, limits.chars)
        if view is None:
            continue
        share = shares.setdefault(host, {"pages": 0, "chars": 0, "template": 0, "noise": 0})
        share["pages"] += 1
        for key in ("chars", "template", "noise"):
            share[key] += view["sizes"][key]
        first_view.setdefault(host, view)
    views = [{"host": h, **first_view[h]} for h in hosts if h in first_view][: limits.templates]
    if templates is None:
        note = (note + "; " if note else "") + "no site templates were learned in this run (extract.templates off)"
    return {"note": note, "shares": shares, "views": views}


# -- rendering ----------------------------------------------------------------------------


def write_report(
    out_dir: str | Path, to: str | Path | None = None, limits: Limits = Limits(), pairs: list[tuple[str, str]] = ()
) -> dict[str, Any]:
    """Write the report (default OUT_DIR/report.html), with the ``pairs`` asked for (ids or URLs)
    among its pairs; returns {"path", "bytes", "seconds"}."""
    from pagetwin.outputs.files import atomic_open

    started = time.monotonic()
    path = Path(to) if to is not None else Path(out_dir) / "report.html"
    if path.is_dir():
        raise ReportError(f"{path} is a folder: give a file name for the report (--to FILE)")
    data = gather(out_dir, limits, pairs)
    page = render(data)
    try:
        with atomic_open(path) as out:
            out.write(page)
    except OSError as exc:
        raise ReportError(f"{path}: cannot be written ({exc.strerror or exc})") from None
    return {"path": str(path), "bytes": len(page.encode("utf-8")), "seconds": round(time.monotonic() - started, 3)}


def _asset(name: str) -> str:
    return resources.files("pagetwin").joinpath("data", name).read_text("utf-8")


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def e(value: Any) -> str:
    """Any value as HTML text (quotes too: safe in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def render(data: dict[str, Any]) -> str:
    """The report as one HTML document: inline style, script and SVG, nothing fetched."""
    from pagetwin.outputs import report_html as view

    style, script = _asset("report.css"), _asset("report.js")
    # No network, no plugins, no forms; only this style and this script (by hash) may apply.
    csp = (
        f"default-src 'none'; style-src {_sha(style)}; script-src {_sha(script)}; img-src data:; "
        "base-uri 'none'; form-action 'none'; frame-src 'none'; object-src 'none'"
    )
    o = data["overview"]
    body = [view.overview(o), view.clusters(data["sizes"], data["clusters"], data["pairs"], data["limits"]),
            view.sites(data["sites"], data["templates"], data["limits"]), view.pairs(data["pairs"]),
            view.templates(data["templates"])]  # fmt: skip
    nav = "".join(f'<a href="#{k}">{t}</a>' for k, t in view.SECTIONS)
    inputs = ", ".join(o["inputs"][:3]) + (f" and {len(o['inputs']) - 3} more" if len(o["inputs"]) > 3 else "")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{e(csp)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>pagetwin report: {e(data['out_dir'])}</title><style>{style}</style></head><body>"
        f"<header><h1>pagetwin report</h1><p>{e(data['out_dir'])} · inputs: {e(inputs)} · pagetwin {e(o['version'])}</p></header>"
        f"<nav>{nav}</nav><main>{''.join(body)}</main><script>{script}</script></body></html>\n"
    )
