"""Main-content extraction: pagetwin (site templates, two passes) against trafilatura,
resiliparse and jusText, scored against ground truth in the same run, on the same pages.

    .venv/bin/python bench/extraction.py [--sets cleanportaleval,scrapinghub,chinese_wce]
        [--tools pagetwin,pagetwin-page,trafilatura,resiliparse,justext] [--limit N] [--repeat N]
        [--data ../shared/data] [--json OUT]
    .venv/bin/python bench/extraction.py --sets cleanportaleval,scrapinghub,chinese_wce,wcxb-dev
    .venv/bin/python bench/extraction.py --memory CRAWL...   # peak memory of pass 1

The default ``--sets`` leaves out ``wcxb-dev`` (1,497 pages, minutes per tool); name it, alone
(``--sets wcxb-dev``) or beside the others, to run it.

``--memory``: each crawl (e.g. the corpora of ``bench/corpus.py``) goes through pass 1 alone
(``LocalEngine.learn``, one worker) in a fresh process; the table gives the model's entries,
its serialised size, and the process's peak RSS (``ru_maxrss``) beside its RSS after imports.

Data (read-only, ``../shared/data/extraction``; see its README):

- ``cleanportaleval``: 71 pages of 4 portals with CleanEval gold text. The site of a page is the
  host of the URL on the gold file's first line (``URL: ...``), so pagetwin learns each portal's
  template from its 12-30 pages.
- ``scrapinghub``: 181 article pages of 126 hosts, gold ``articleBody``; the URL from
  ``ground-truth.json``. Sites have 1-2 pages: page-level removal only.
- ``chinese_wce``: 69 Chinese pages of 57 hosts, gold ``cleaned/<id>.txt``. The set has no URLs:
  each page is its own site (page level only).
- ``wcxb-dev``: the WCXB development split, 1,497 pages of 7 page types from 1,296 hosts,
  ``html/<id>.html.gz``; gold ``ground_truth.main_content`` of ``ground-truth/<id>.json`` (an
  empty or null ``main_content`` is an empty gold text: 21 pages), page type
  ``_internal.page_type.primary`` (``category`` read as ``collection``, as WCXB's
  ``evaluate.py`` does). The site of a page is the host of the file's ``url``, as in a crawl:
  the hosts with ``extract.min_site_pages`` (2) pages or more (rei.com and
  store.steampowered.com 12, developer.mozilla.org 9, ... and 112 hosts of 2+ pages in all) get
  site templates, the rest page-level removal only; the 5 pages without a URL are each their own
  site.

How pagetwin is run (``run_pagetwin``), twice per set: (1) through ``pagetwin text``'s own
function, ``pagetwin.app.iter_texts`` (one worker), over a temporary JSONL file of
``{"url", "html"}`` lines; its texts are the ones scored; (2) the runner's per-page kernels on
the in-memory page bytes, the footing the peers get: pass 1 decodes, parses and takes
``templates.page_stats`` of every page, ``SiteTemplates.fit(site, stats)``; pass 2 decodes,
parses and runs ``noise.extract`` with the site's learned model. Both must give the same texts
(a warning says otherwise). The speed column is (2); (1), which also reads and JSON-decodes
the input file in both passes, is its own column. Settings are the defaults except
``keywords.weighting = "density"``, so that pass 1 does not also compute document frequencies, which
text extraction does not use. Peers get the decoded HTML string and their default settings:
``trafilatura.extract(html)``, ``resiliparse extract_plain_text(html, main_content=True)``,
``justext.justext(html, stoplist)`` keeping the non-boilerplate paragraphs (English stop list;
for Chinese, which jusText has no stop list for, an empty stop list with both stop-word
thresholds at 0).

Metrics (``cleaneval_prf``, ``shingle_pr``, ``bow_prf``):

- **CleanEval word level** (cleanportaleval): the gold file without its URL line and with its
  ``<p>``/``<h>``/``<l>`` markers removed and HTML entities decoded; gold and extracted text
  tokenised to lower-cased ``\\w+`` words; the two word sequences aligned with a diff
  (``difflib.SequenceMatcher``, no junk heuristic); precision = aligned words / extracted words,
  recall = aligned words / gold words, F = their harmonic mean, per page; P, R and F are
  macro-averaged over pages (an empty extraction has P = R = F = 0).
- **Shingles** (scrapinghub: word 4-grams of lower-cased ``\\w+`` tokens; chinese_wce: 4-grams
  of characters, whitespace removed): per page, precision = |common| / |extracted| and recall =
  |common| / |gold|, counting shingles as multisets; a text shorter than 4 tokens is one
  shingle. P and R are averaged over pages and F1 is the harmonic mean of the two averages
  (the article-extraction-benchmark convention). An empty extraction has P = 0 (R = 0).
- **Bag of words** (wcxb-dev, WCXB's own metric, as its ``evaluate.py``): extracted text and
  ``main_content`` tokenised to lower-cased ``\\w+`` words, counted as multisets; common =
  the sum over words of the smaller of the two counts; per page precision = common / extracted
  words, recall = common / gold words, F1 their harmonic mean. P, R and F are each averaged over
  all pages (F is the mean of the per-page F1s, not the harmonic mean of the averages), and again
  over the pages of each type (article, service, product, collection, listing, forum,
  documentation), and over each half of the split: pages with even ids (where the extraction
  rules were tuned) and odd ids (held out), per type. An empty extraction scores 0; an empty gold text scores 1 if the extraction
  is empty too, else 0.
- **Speed**: pages per CPU second of each tool on the set, one process (``time.process_time``
  over all pages, so that other load on a shared machine does not skew the comparison; pagetwin:
  both passes, decoding and parsing twice included; peers: one call per page on the decoded
  HTML). Every tool first runs on two pages untimed, so imports and model loading are not
  counted; with ``--repeat N`` the fastest of N timings is kept.

Tool ``pagetwin-page`` is pagetwin with ``extract.templates = false`` (page-level noise removal
only, one pass): the ablation that shows what the site templates add.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import html as htmllib
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"
_WORD = re.compile(r"\w+")
_MARKER = re.compile(r"^\s*<(p|h|l)>", re.MULTILINE | re.IGNORECASE)


# -- metrics ------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def cleaneval_gold(raw: str) -> tuple[str, str]:
    """(url, text) of a CleanEval gold file."""
    lines = raw.splitlines()
    url = ""
    for i, line in enumerate(lines):
        if line.strip():
            if line.strip().startswith("URL:"):
                url = line.split(":", 1)[1].strip()
                lines = lines[i + 1 :]
            break
    return url, htmllib.unescape(_MARKER.sub(" ", "\n".join(lines)))


def cleaneval_prf(extracted: str, gold: str) -> tuple[float, float, float]:
    """CleanEval word-level precision, recall, F of one page (see the module docstring)."""
    a, b = words(extracted), words(gold)
    if not a or not b:
        return (1.0, 1.0, 1.0) if not a and not b else (0.0, 0.0, 0.0)
    matched = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    p, r = matched / len(a), matched / len(b)
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def bow_prf(extracted: str, gold: str) -> tuple[float, float, float]:
    """Bag-of-words precision, recall, F1 of one page (WCXB's metric; multiset counts)."""
    a, b = Counter(words(extracted)), Counter(words(gold))
    if not b:
        return (1.0, 1.0, 1.0) if not a else (0.0, 0.0, 0.0)
    if not a:
        return (0.0, 0.0, 0.0)
    common = sum((a & b).values())
    p, r = common / sum(a.values()), common / sum(b.values())
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def shingles(text: str, unit: str, n: int = 4) -> Counter:
    toks = words(text) if unit == "word" else [c for c in text if not c.isspace()]
    if not toks:
        return Counter()
    if len(toks) < n:
        return Counter([tuple(toks)])
    return Counter(tuple(toks[i : i + n]) for i in range(len(toks) - n + 1))


def shingle_pr(extracted: str, gold: str, unit: str) -> tuple[float, float]:
    """Shingle precision and recall of one page (multiset counts)."""
    a, b = shingles(extracted, unit), shingles(gold, unit)
    if not a or not b:
        return (1.0, 1.0) if not a and not b else (0.0, 0.0)
    common = sum((a & b).values())
    return common / sum(a.values()), common / sum(b.values())


# -- data ---------------------------------------------------------------------------------


def load_set(name: str, data: Path, limit: int | None) -> list[dict]:
    """Pages of one set: {"id", "url", "body" (bytes), "gold"}."""
    base = data / "extraction" / name
    pages = []
    if name == "cleanportaleval":
        for gold_path in sorted((base / "GoldStandard").glob("*.txt")):
            html_path = base / "input" / (gold_path.stem + ".html")
            if not html_path.exists():
                continue
            url, gold = cleaneval_gold(gold_path.read_text(encoding="utf-8", errors="replace"))
            pages.append({"id": gold_path.stem, "url": url, "body": html_path.read_bytes(), "gold": gold})
    elif name == "scrapinghub":
        truth = json.loads((base / "ground-truth.json").read_text(encoding="utf-8"))
        for pid in sorted(truth):
            path = base / "html" / f"{pid}.html.gz"
            if path.exists():
                body = gzip.decompress(path.read_bytes())
                pages.append({"id": pid, "url": truth[pid].get("url", ""), "body": body, "gold": truth[pid]["articleBody"]})
    elif name == "chinese_wce":
        for path in sorted((base / "original").glob("*.html")):
            gold = base / "cleaned" / (path.stem + ".txt")
            if gold.exists():
                # No URLs in this set: every page is its own site.
                pages.append({"id": path.stem, "url": f"http://{path.stem}.invalid/", "body": path.read_bytes(),
                              "gold": gold.read_text(encoding="utf-8", errors="replace")})  # fmt: skip
    elif name == "wcxb-dev":
        for gold_path in sorted((base / "ground-truth").glob("*.json")):
            path = base / "html" / (gold_path.stem + ".html.gz")
            if not path.exists():
                continue
            doc = json.loads(gold_path.read_text(encoding="utf-8"))
            kind = ((doc.get("_internal") or {}).get("page_type") or {}).get("primary") or "article"
            # A page without a URL is its own site.
            url = doc.get("url") or f"http://wcxb-{gold_path.stem}.invalid/"
            pages.append({"id": gold_path.stem, "url": url, "body": gzip.decompress(path.read_bytes()),
                          "gold": (doc.get("ground_truth") or {}).get("main_content") or "",
                          "type": "collection" if kind == "category" else kind})  # fmt: skip
    else:
        raise SystemExit(f"unknown set {name!r}")
    return pages[:limit] if limit else pages


# -- tools --------------------------------------------------------------------------------


def run_pagetwin(pages: list[dict], settings=None) -> tuple[list[str], float, float | None]:
    """pagetwin on the pages, both passes, twice: (texts, kernel CPU seconds, CLI CPU seconds).

    The kernel run calls, on the same in-memory bytes the peers get decoded, what the runner's
    workers call per page (``_run_pagetwin_kernels``). The CLI run is ``pagetwin text``'s
    own function, ``pagetwin.app.iter_texts`` over a JSONL file of {"url", "html"} (one worker;
    reading the JSONL twice included, writing it not). Both must give the same texts."""
    import tempfile

    if settings is None:
        settings = default_settings()
    settings.run.workers = 1
    settings.run.progress = False
    texts, kernel_seconds = _run_pagetwin_kernels(pages, settings)
    try:
        from pagetwin.app import iter_texts
    except ImportError:
        return texts, kernel_seconds, None
    from pagetwin.html.parse import decode_html

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pages.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for p in pages:
                fh.write(json.dumps({"url": p["url"], "html": decode_html(p["body"])[0]}) + "\n")
        t0 = time.process_time()
        rows = list(iter_texts([str(path)], settings))
        cli_seconds = time.process_time() - t0
    cli_texts = [r["text"] for r in rows]
    if cli_texts != texts:
        differ = sum(a != b for a, b in zip(cli_texts, texts)) + abs(len(cli_texts) - len(texts))
        print(f"warning: pagetwin text differs from the kernel run on {differ} pages; scoring pagetwin text", file=sys.stderr)
        texts = cli_texts
    return texts, kernel_seconds, cli_seconds


def default_settings():
    from pagetwin.config import Settings

    settings = Settings()
    settings.keywords.weighting = "density"
    return settings


def page_level_settings():
    """pagetwin without site templates (page-level noise removal only), for the ablation row."""
    settings = default_settings()
    settings.extract.templates = False
    return settings


def _run_pagetwin_kernels(pages, settings) -> tuple[list[str], float]:
    """What the runner does per page, in this process, on the in-memory bytes: pass 1
    ``Worker.learn`` (decode, depth guard, parse, walk, page statistics, and the parsed blocks
    as bytes) folded by ``Learned.fit``; pass 2 ``Worker.extract`` of each page carrying its
    pass-1 blocks (``run.reuse_parse``; parsing again when it is off)."""
    from dataclasses import replace

    from pagetwin.learned import Learned, Learning
    from pagetwin.model import Page
    from pagetwin.pipeline import Worker

    records = [Page(id=str(p.get("id", i)), url=p["url"], body=p["body"]) for i, p in enumerate(pages)]
    worker = Worker(settings, keep_parsed=settings.run.reuse_parse)
    t0 = time.process_time()
    if settings.extract.templates:
        results = [(page, worker.learn(page)) for page in records]
        worker.learned.templates = Learned.fit(results, settings, Learning(templates=True)).templates
        records = [replace(page, body=b"", parsed=r.parsed) if r.parsed else page for page, r in results]
    out = [worker.extract(page)[0].text for page in records]
    return out, time.process_time() - t0


def run_trafilatura(htmls: list[str], lang: str) -> list[str]:
    import trafilatura

    return [trafilatura.extract(h) or "" for h in htmls]


def run_resiliparse(htmls: list[str], lang: str) -> list[str]:
    from resiliparse.extract.html2text import extract_plain_text

    return [extract_plain_text(h, main_content=True) or "" for h in htmls]


def run_justext(htmls: list[str], lang: str) -> list[str]:
    import justext

    out = []
    for h in htmls:
        try:
            if lang == "zh":
                paras = justext.justext(h, frozenset(), stopwords_low=0, stopwords_high=0)
            else:
                paras = justext.justext(h, justext.get_stoplist("English"))
            out.append("\n".join(p.text for p in paras if not p.is_boilerplate))
        except Exception:  # noqa: BLE001 - a peer failing on a page scores an empty text
            out.append("")
    return out


PEERS = {"trafilatura": run_trafilatura, "resiliparse": run_resiliparse, "justext": run_justext}


def run_tool(tool: str, pages: list[dict], htmls: list[str], lang: str) -> tuple[list[str], float, float | None]:
    """(texts, CPU seconds on the in-memory pages, CPU seconds as `pagetwin text` or None)."""
    if tool == "pagetwin":
        return run_pagetwin(pages)
    if tool == "pagetwin-page":
        return run_pagetwin(pages, page_level_settings())
    t0 = time.process_time()
    texts = PEERS[tool](htmls, lang)
    return texts, time.process_time() - t0, None


WCXB_TYPES = ("article", "service", "product", "collection", "listing", "forum", "documentation")


def _macro(prf: list[tuple[float, float, float]]) -> dict:
    n = len(prf) or 1
    return {"pages": len(prf), "P": sum(x[0] for x in prf) / n, "R": sum(x[1] for x in prf) / n, "F": sum(x[2] for x in prf) / n}


def _id_parity(page_id: str) -> int:
    """0 for an even page id (the tuning half of wcxb-dev), 1 for an odd one; ids that are not
    numbers go by the xxhash of the id."""
    if page_id.isdigit():
        return int(page_id) % 2
    import xxhash

    return xxhash.xxh64_intdigest(page_id.encode()) % 2


def score(set_name: str, texts: list[str], pages: list[dict]) -> dict:
    """P, R, F of a set, "per_page" F; for wcxb-dev also "by_type": {type or "all": P, R, F} and
    "by_half": the same for the pages of even ids (the half rules were tuned on) and odd ids."""
    if set_name == "wcxb-dev":
        prf = [bow_prf(t, p["gold"]) for t, p in zip(texts, pages)]
        kinds = [p.get("type", "article") for p in pages]
        order = list(WCXB_TYPES) + sorted(set(kinds) - set(WCXB_TYPES))
        by_type = {k: _macro([x for x, kind in zip(prf, kinds) if kind == k]) for k in order if k in kinds}
        by_type["all"] = _macro(prf)
        by_half = {}  # the split of tuning (even ids) and held-out scoring (odd ids)
        for half, rest in (("even", 0), ("odd", 1)):
            mine = [(x, kind) for x, kind, p in zip(prf, kinds, pages) if _id_parity(p["id"]) == rest]
            present = {kind for _, kind in mine}
            by_half[half] = {k: _macro([x for x, kind in mine if kind == k]) for k in order if k in present}
            by_half[half]["all"] = _macro([x for x, _ in mine])
        return {"P": by_type["all"]["P"], "R": by_type["all"]["R"], "F": by_type["all"]["F"],
                "per_page": [round(x[2], 4) for x in prf], "by_type": by_type, "by_half": by_half}  # fmt: skip
    if set_name == "cleanportaleval":
        prf = [cleaneval_prf(t, p["gold"]) for t, p in zip(texts, pages)]
        n = len(prf)
        return {"P": sum(x[0] for x in prf) / n, "R": sum(x[1] for x in prf) / n, "F": sum(x[2] for x in prf) / n,
                "per_page": [round(x[2], 4) for x in prf]}  # fmt: skip
    unit = "char" if set_name == "chinese_wce" else "word"
    pr = [shingle_pr(t, p["gold"], unit) for t, p in zip(texts, pages)]
    p = sum(x[0] for x in pr) / len(pr)
    r = sum(x[1] for x in pr) / len(pr)
    return {"P": p, "R": r, "F": 2 * p * r / (p + r) if p + r else 0.0, "per_page": [round(2 * a * b / (a + b) if a + b else 0, 4) for a, b in pr]}


def learn_memory(corpus: str) -> dict:
    """Pass 1 of `pagetwin text` / `dedup` (``LocalEngine.learn``, one worker) over one crawl:
    the site-template model's size and the process's peak memory. Run in a fresh process."""
    import resource

    from pagetwin.html import noise, templates  # noqa: F401 - imported before the baseline
    from pagetwin.learned import Learning
    from pagetwin.runners.local import LocalEngine

    settings = default_settings()
    settings.run.workers = 1
    settings.run.progress = False
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.process_time()
    learned = LocalEngine().learn([corpus], settings, Learning.for_dedup(settings))
    seconds = time.process_time() - t0
    model = learned.templates.compact()
    sites = model.sites_
    return {
        "corpus": corpus,
        "pages": sum(c.pages for c in sites.values()),
        "sites": len(sites),
        "sites_with_model": sum(c.pages >= settings.extract.min_site_pages for c in sites.values()),
        "hash_entries": int(sum(len(c.hash_keys) for c in sites.values())),
        "slot_entries": int(sum(len(c.slot_keys) for c in sites.values())),
        "largest_site_entries": int(max((len(c.hash_keys) for c in sites.values()), default=0)),
        "model_bytes": len(model.to_bytes()),
        "rss_after_imports_mb": before / 1024,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "pass1_pages_per_cpu_s": sum(c.pages for c in sites.values()) / seconds if seconds else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="cleanportaleval,scrapinghub,chinese_wce")
    ap.add_argument("--tools", default="pagetwin,pagetwin-page,trafilatura,resiliparse,justext")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", type=Path, default=None, help="write all scores (and per-page F) here")
    ap.add_argument("--repeat", type=int, default=1, help="time each tool this many times, keep the fastest")
    ap.add_argument("--memory", nargs="+", metavar="CRAWL", help="instead: peak memory of pass 1 (site templates) over each crawl, each in a fresh process")
    ap.add_argument("--memory-child", metavar="CRAWL", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.memory_child:
        print(json.dumps(learn_memory(args.memory_child)))
        return 0
    if args.memory:
        import subprocess

        print("| crawl | pages | sites | sites with a model | hash entries | largest site | model bytes | RSS after imports MB | peak RSS MB | pass-1 pages / CPU s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for crawl in args.memory:
            out = subprocess.run([sys.executable, __file__, "--memory-child", crawl], capture_output=True, text=True, check=True)
            m = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {Path(crawl).name} | {m['pages']} | {m['sites']} | {m['sites_with_model']} | {m['hash_entries']} | {m['largest_site_entries']} | "
                  f"{m['model_bytes']:,} | {m['rss_after_imports_mb']:.0f} | {m['peak_rss_mb']:.0f} | {m['pass1_pages_per_cpu_s']:.0f} |", flush=True)  # fmt: skip
        return 0
    if not (args.data / "extraction").exists():
        print(f"no data at {args.data}/extraction", file=sys.stderr)
        return 1
    from pagetwin.html.parse import decode_html

    results = {}
    rows = []
    for set_name in args.sets.split(","):
        pages = load_set(set_name, args.data, args.limit)
        htmls = [decode_html(p["body"])[0] for p in pages]
        lang = "zh" if set_name == "chinese_wce" else "en"
        for tool in args.tools.split(","):
            # Warm-up on two pages, untimed: imports and model loading are not per-page costs.
            run_tool(tool, pages[:2], htmls[:2], lang)
            best = cli_best = None
            for _ in range(args.repeat):
                texts, seconds, cli_seconds = run_tool(tool, pages, htmls, lang)
                best = seconds if best is None else min(best, seconds)
                if cli_seconds is not None:
                    cli_best = cli_seconds if cli_best is None else min(cli_best, cli_seconds)
            s = score(set_name, texts, pages)
            s["pages_per_s"] = len(pages) / best if best else float("inf")
            s["cli_pages_per_s"] = len(pages) / cli_best if cli_best else None
            s["pages"] = len(pages)
            s["ids"] = [p["id"] for p in pages]  # the pages of "per_page", in order
            results.setdefault(set_name, {})[tool] = s
            rows.append((set_name, tool, len(pages), s["P"], s["R"], s["F"], s["pages_per_s"], s["cli_pages_per_s"]))
            cli = f" ({s['cli_pages_per_s']:.0f} as pagetwin text)" if s["cli_pages_per_s"] else ""
            print(f"{set_name:16} {tool:13} pages={len(pages):4d} P={s['P']:.3f} R={s['R']:.3f} F={s['F']:.3f} {s['pages_per_s']:7.1f} pages/s{cli}", flush=True)
    print()
    print("| set | tool | pages | P | R | F | pages / CPU s | x trafilatura | `pagetwin text` pages / CPU s |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for set_name, tool, n, p, r, f, pps, cli in rows:
        traf = results[set_name].get("trafilatura", {}).get("pages_per_s")
        ratio = f"{pps / traf:.1f}" if traf else ""
        print(f"| {set_name} | {tool} | {n} | {p:.3f} | {r:.3f} | {f:.3f} | {pps:.0f} | {ratio} | {f'{cli:.0f}' if cli else ''} |")
    typed = [(set_name, tool, s["by_type"]) for set_name, tools in results.items() for tool, s in tools.items() if "by_type" in s]
    if typed:
        kinds = list(dict.fromkeys(k for _, _, by in typed for k in by if k != "all")) + ["all"]
        print()
        print("F per page type (P / R in the JSON):")
        print()
        counts = typed[0][2]
        print("| set | tool | " + " | ".join(f"{k} ({counts[k]['pages']})" if k in counts else k for k in kinds) + " |")
        print("|---|---|" + "---:|" * len(kinds))
        for set_name, tool, by in typed:
            print(f"| {set_name} | {tool} | " + " | ".join(f"{by[k]['F']:.3f}" if k in by else "" for k in kinds) + " |")
        print()
        print("F per page type on each half: even ids (where the rules were tuned) / odd ids (held out):")
        print()
        print("| set | tool | " + " | ".join(kinds) + " |")
        print("|---|---|" + "---:|" * len(kinds))
        for set_name, tool, _ in typed:
            halves = results[set_name][tool]["by_half"]
            cells = [" / ".join(f"{halves[h][k]['F']:.3f}" if k in halves[h] else "-" for h in ("even", "odd")) for k in kinds]
            print(f"| {set_name} | {tool} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
