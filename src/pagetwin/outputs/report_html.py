"""The report's sections as HTML (outputs.report gathers what they show). Every value is put
in through ``e`` (html.escape), markup from a crawl never reaches the page as markup; the only
attributes written are classes, ids, links to the page's own anchors and SVG geometry (no
style attribute: the Content-Security-Policy allows the report's own stylesheet only)."""

from __future__ import annotations

import math
from typing import Any

from pagetwin.outputs.report import e

SECTIONS = (("overview", "Run"), ("clusters", "Clusters"), ("sites", "Sites"), ("pairs", "Pairs"), ("templates", "Templates"))


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else e(value)


def _pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "–"


def _card(value: Any, label: str) -> str:
    return f'<div class="card"><b>{_n(value)}</b><span>{e(label)}</span></div>'


def _table(head: list[str], rows: list[str], numeric: set[int] = frozenset(), page_size: int | None = None) -> str:
    cells = "".join(f'<th{" class=n" if i in numeric else ""}>{e(h)}</th>' for i, h in enumerate(head))
    paged = f' data-page-size="{page_size}"' if page_size else ""
    return f'<div class="scroll"><table{paged}><thead><tr>{cells}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _kv(d: dict[str, Any]) -> str:
    return ", ".join(f"{e(k)} {_n(v)}" for k, v in d.items()) or "none"


def overview(o: dict[str, Any]) -> str:
    """The run at a glance: pages, skips by reason, clusters, duplicates, time per phase."""
    skipped = sum(o["skipped"].values())
    cards = [_card(o["pages_read"], "pages read"), _card(o["records_total"], "records in the inputs"),
             _card(skipped, "records skipped"), _card(o["clusters"], "clusters"),
             _card(o["duplicates"], "duplicates (pages not kept)"), _card(o["pairs"], "verified pairs")]  # fmt: skip
    if o.get("largest_cluster"):
        cards.append(_card(o["largest_cluster"], "pages in the largest cluster"))
    skips = [f'<tr><td>{e(k)}</td><td class="n">{_n(v)}</td></tr>' for k, v in sorted(o["skipped"].items(), key=lambda kv: -kv[1])]
    phases = [(k, v) for k, v in o["seconds"].items() if k != "total"]
    total = o["seconds"].get("total") or sum(v for _, v in phases) or 0
    times = [f'<tr><td>{e(k)}</td><td class="n">{v:.2f} s</td><td class="n">{_pct(v, total)}</td></tr>' for k, v in phases]
    status = "" if o["input_status"] == "ok" else f'<p class="note">inputs: {e(o["input_status"])}, {_n(o["input_errors"])} input errors (summary.json input_errors)</p>'
    return (
        f'<section id="overview"><h2>The run at a glance</h2><div class="cards">{"".join(cards)}</div>{status}'
        f"<h3>Records skipped, by reason</h3>{_table(['reason', 'records'], skips, {1}) if skips else '<p class=muted>none</p>'}"
        f"<p class=muted>pages without analysis: {_kv(o['without_analysis'])}; pairs by kind: {_kv(o['edges_by_kind'])}</p>"
        f"<h3>Time per phase</h3>{_table(['phase', 'time', 'share'], times, {1, 2})}"
        f"<p class=muted>total {total:.2f} s</p></section>"
    )


def histogram(sizes: dict[str, int]) -> str:
    """Clusters per size bucket as bars (height: log scale, the count written above each)."""
    if not sizes:
        return "<p class=muted>no clusters</p>"
    w, h, pad, top = 56, 150, 28, 18
    peak = math.log10(max(sizes.values()) + 1)
    bars = []
    for i, (bucket, n) in enumerate(sizes.items()):
        bh = (h - top) * math.log10(n + 1) / peak if peak else 0
        x, y = i * w + 8, top + (h - top) - bh
        bars.append(f'<rect x="{x}" y="{y:.1f}" width="{w - 16}" height="{bh:.1f}"><title>{e(bucket)} pages: {n:,} clusters</title></rect>'
                    f'<text x="{x + (w - 16) / 2}" y="{y - 4:.1f}" text-anchor="middle">{n:,}</text>'
                    f'<text x="{x + (w - 16) / 2}" y="{h + 16}" text-anchor="middle">{e(bucket)}</text>')  # fmt: skip
    width = max(len(sizes) * w + 16, 360)
    return (f'<svg class="hist" width="{width}" height="{h + pad + 8}" viewBox="0 0 {width} {h + pad + 8}" role="img" aria-label="clusters per size">{"".join(bars)}'
            f'<text x="{width / 2}" y="{h + pad + 6}" text-anchor="middle">pages per cluster (clusters per bucket, log scale)</text></svg>')  # fmt: skip


def clusters(sizes: dict[str, int], c: dict[str, Any], pairs: dict[str, Any], limits: dict[str, Any]) -> str:
    """The size histogram, then the largest clusters: kept page, sample URLs, hosts, algorithms."""
    pair_of = {p["from_cluster"]: i for i, p in enumerate(pairs["listed"]) if p.get("from_cluster")}
    rows = []
    for cl in c["listed"]:
        kept = cl["kept"] or {}
        samples = "".join(f'<div class="url">{e(s["url"])}</div>' for s in cl["samples"])
        more = cl["size"] - 1 - len(cl["samples"])
        samples += f'<div class="muted">and {more:,} more</div>' if more > 0 else ""
        hosts = "".join(f'<span class="tag">{e(h["host"])} {h["pages"]:,}</span>' for h in cl["hosts"])
        if cl["host_count"] > len(cl["hosts"]):
            hosts += f'<span class="muted">+{cl["host_count"] - len(cl["hosts"]):,} hosts</span>'
        algos = "".join(f'<span class="tag">{e(a)} {n:,}</span>' for a, n in cl["algorithms"].items()) or _kv(cl["edge_kinds"])
        link = f' <a href="#pair-{pair_of[cl["cluster"]]}">a pair</a>' if cl["cluster"] in pair_of else ""
        rows.append(f'<tr><td class="n">{cl["size"]:,}</td><td class="url"><b>{e(kept.get("title") or "(no title)")}</b>'
                    f'<div class="url">{e(kept.get("url"))}</div><div class="muted">{e(cl["cluster"])}{link}</div></td>'
                    f"<td>{samples}</td><td>{hosts}</td><td>{algos}</td></tr>")  # fmt: skip
    rest = f"<p class=muted>and {c['more']:,} smaller clusters of two pages or more ({c['more_pages']:,} pages), not listed (limit {limits['clusters']})</p>" if c["more"] > 0 else ""
    table = _table(["pages", "kept page", "sample URLs", "hosts", "joined by (verified pairs)"], rows, {0}, limits["page_size"])
    return (f'<section id="clusters"><h2>Cluster sizes</h2>{histogram(sizes)}'
            f"<h2>Largest clusters</h2>{table if rows else '<p class=muted>no cluster has more than one page</p>'}{rest}</section>")  # fmt: skip


def _bar(share: float) -> str:
    return f'<svg class="share" viewBox="0 0 100 10" aria-hidden="true"><rect width="100" height="10" fill="#e6e9ef"/><rect width="{100 * share:.1f}" height="10" fill="#3b6fd8"/></svg>'


def sites(s: dict[str, Any], templates: dict[str, Any], limits: dict[str, Any]) -> str:
    """Per site: pages, share of duplicates, template and noise shares; pairs across hosts."""
    rows = []
    for site in s["listed"]:
        share = templates["shares"].get(site["host"])
        tpl = noise = "–"
        if share and share["chars"]:
            tpl, noise = _pct(share["template"], share["chars"]), _pct(share["noise"], share["chars"])
        dup = site["duplicates"] / site["pages"] if site["pages"] else 0
        rows.append(f'<tr><td class="url">{e(site["host"][: limits["chars"]] or "(no host)")}</td><td class="n">{site["pages"]:,}</td>'
                    f'<td class="n">{site["duplicates"]:,}</td><td class="n">{_bar(dup)} {_pct(site["duplicates"], site["pages"])}</td>'
                    f'<td class="n">{tpl}</td><td class="n">{noise}</td></tr>')  # fmt: skip
    more = s["more"]
    rest = f"<p class=muted>and {more['hosts']:,} more hosts ({more['pages']:,} pages, {more['duplicates']:,} duplicates), not listed (limit {limits['sites']})</p>" if more["hosts"] else ""
    head = ["host", "pages", "duplicates", "share of duplicates", "text removed as template", "page-level noise"]
    links = [f'<tr><td class="url">{e(x["a"])}</td><td class="url">{e(x["b"])}</td><td class="n">{x["pairs"]:,}</td><td>{_kv(x["kinds"])}</td>'
             f'<td class="n">{x["a_first"]:,} / {x["b_first"]:,}</td></tr>' for x in s["links"]]  # fmt: skip
    more_links = f"<p class=muted>and {s['more_links']:,} more host pairs</p>" if s["more_links"] else ""
    note = f"<p class=note>{e(templates['note'])}</p>" if templates.get("note") else ""
    return (
        f'<section id="sites"><h2>Sites ({s["count"]:,} hosts)</h2>{_table(head, rows, {1, 2, 3, 4, 5}, limits["page_size"])}{rest}'
        f"<p class=muted>template and noise shares: of the text of up to {limits['site_samples']} pages per site, read again from the inputs</p>{note}"
        "<h2>Which sites copy from which</h2><p class=muted>verified pairs whose two pages are on different hosts; crawled first: in how many the page on the first host, or on the second, was crawled earlier</p>"
        f"{_table(['host', 'host', 'pairs', 'by kind', 'crawled first (first / second host)'], links, {2, 4}, limits['page_size']) if links else '<p class=muted>no pair across hosts</p>'}{more_links}</section>"
    )


def _page_head(tag: str, p: dict[str, Any]) -> str:
    kept = " · kept" if p.get("keep") else ""
    return (f'<div class="head">{tag}: {e(p.get("title") or "(no title)")}<div class="url muted">{e(p.get("url"))}</div>'
            f'<div class="muted">{e(p.get("id"))} · cluster {e(p.get("cluster"))}{kept}</div></div>')  # fmt: skip


def pair(i: int, d: dict[str, Any]) -> str:
    """Two main texts side by side (shared passages in both columns), scores and shared keys."""
    algos = []
    for r in d["algorithms"]:
        score = "–" if r["score"] is None else f"{r['score']:.3f}"
        detail = ", ".join(f"{e(k)}={e(v)}" for k, v in (r.get("detail") or {}).items())
        keys = " ".join(e(k) for k in r.get("keys") or [])
        algos.append(f'<tr><td>{e(r["algorithm"])}</td><td class="n">{score}</td><td>{"yes" if r["passed"] else "no"}</td>'
                     f'<td class="n">{r["shared_keys"]:,}</td><td class="url">{keys}</td><td class="url">{detail}</td></tr>')  # fmt: skip
    cells = [_page_head("A", d["a"]), _page_head("B", d["b"])]
    for p in d["passages"]:
        text = e(p["text"])
        if p["op"] == "same":
            cells += [f'<div class="same">{text}</div>', f'<div class="same">{text}</div>']
        elif p["op"] == "a":
            cells += [f'<div class="a">{text}</div>', '<div class="b-empty"></div>']
        else:
            cells += ['<div class="a-empty"></div>', f'<div class="b">{text}</div>']
    more = f"<p class=muted>and {d['passages_more']:,} more passages (pagetwin explain shows them all)</p>" if d["passages_more"] else ""
    edge = d["edge"]["kind"] if d.get("edge") else "none"
    verdict = "same cluster" if d["same_cluster"] else "different clusters"
    return (f'<div class="pair" id="pair-{i}"><h3>Pair {i + 1}: {verdict}, edge {e(edge)}, shared text {100 * d["shared_share_of_a"]:.0f}% of A</h3>'
            f"{_table(['algorithm', 'score', 'passes', 'shared keys', 'keys (first 8)', 'detail'], algos, {1, 3})}"
            '<p class="legend"><span class="same">in both</span><span class="a">only in A</span><span class="b">only in B</span></p>'
            f'<div class="sides">{"".join(cells)}</div>{more}</div>')  # fmt: skip


def pairs(p: dict[str, Any]) -> str:
    shown = "".join(pair(i, d) for i, d in enumerate(p["listed"]))
    index = "".join(f'<li><a href="#pair-{i}">Pair {i + 1}</a>: <span class="url">{e(d["a"]["url"])}</span> · '
                    f'<span class="url">{e(d["b"]["url"])}</span></li>' for i, d in enumerate(p["listed"]))  # fmt: skip
    failed = f"<p class=muted>{p['not_shown']} pairs left out: an id two inputs share</p>" if p["not_shown"] else ""
    return (f'<section id="pairs"><h2>Pairs ({len(p["listed"])} of {p["total"]:,} verified pairs)</h2>'
            f"<p class=muted>a pair from each of the largest clusters, then pairs across clusters; "
            f"<code>pagetwin explain DIR A B</code> explains any other</p><ul class='pair-index'>{index}</ul>{failed}{shown}</section>")  # fmt: skip


def templates(t: dict[str, Any]) -> str:
    """For a few sites, one page with its template blocks struck through and its noise shaded."""
    out = []
    for v in t["views"]:
        state = "site template learned" if v["learned"] else "too few distinct pages: page-level rules only"
        sizes = v["sizes"]
        blocks = "".join(f'<p class="{b["class"]}">{e(b["text"])}</p>' for b in v["blocks"])
        more = f"<p class=muted>and {v['blocks_more']:,} more blocks</p>" if v["blocks_more"] else ""
        out.append(f'<div class="pair" id="template-{len(out)}"><h3>{e(v["host"] or v["site"])}: {e(v["title"] or "(no title)")}</h3>'
                   f'<p class="url muted">{e(v["url"])} · {state} · template {_pct(sizes["template"], sizes["chars"])}, '
                   f'noise {_pct(sizes["noise"], sizes["chars"])} of its text</p><div class="blocks">{blocks}</div>{more}</div>')  # fmt: skip
    note = f"<p class=note>{e(t['note'])}</p>" if t.get("note") else ""
    body = "".join(out) or "<p class=muted>no page could be read again from the inputs</p>"
    return ('<section id="templates"><h2>Site templates</h2><p class="legend"><span class="template">removed as the site\'s template</span>'
            f'<span class="noise">page-level noise (menus, boxes, scripts\' text)</span><span>kept: main text</span></p>{note}{body}</section>')  # fmt: skip
