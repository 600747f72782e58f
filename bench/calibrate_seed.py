"""Calibrate and measure the seed algorithms (des, con, sort, con-w, sort-w, segments, chunks)
beside SimHash and MinHash, on the copycat human judgements and the LLVM 15/16 doc pairs.

    .venv/bin/python -m bench.calibrate_seed [--llvm-pairs N] [--out FILE]

A pair is predicted a duplicate when the two pages share a candidate key of the algorithm and
(for algorithms whose keys are not proof) its verify() passes with kind "duplicate" (a chunks
"partial" edge is counted apart: it is not a duplicate). Positives: copycat label 3 / same
LLVM page path; negatives: copycat labels 0.5 and 1 / different LLVM paths. Label 2 is unused.

Docs (``--analysis``): "project" (the default once pagetwin.text.analyze and
pagetwin.text.keywords exist) builds them as ``pagetwin dedup`` does: LLVM HTML through the
pipeline's pass 1 (site templates, document frequencies) and pass 2 (extraction, analysis,
``top_keywords``), one site per version; copycat texts (already extracted, lowercased) through
the text analyzer and ``top_keywords`` with document frequencies fitted on the copycat texts.
"local" is the stand-in used before those modules landed: copycat split on spaces, LLVM main
text = Sphinx's ``div[role=main]`` parsed with selectolax, words = ``\\w+`` lower-cased, a
small English stop list, and a local tf-idf (``local_keywords``).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Any

from pagetwin.config import ChunkSettings, KeywordSettings, SegmentSettings, Settings
from pagetwin.fingerprints.base import REGISTRY, Algorithm
from pagetwin.model import Doc

import pagetwin.fingerprints.chunks  # noqa: F401  (registers)
import pagetwin.fingerprints.keywords  # noqa: F401
import pagetwin.fingerprints.segments  # noqa: F401

_WORD = re.compile(r"\w+", re.UNICODE)
# A small English stop list for the bench's own docs (the text engineer's lists replace it
# once text analysis is wired); only content_tokens() of segments / chunks depend on it.
STOP = frozenset(
    "a an and are as at be but by for from has have he her his i if in into is it its of on or "
    "our she so that the their them then there these they this to was we were which who will "
    "with you your not can do does did all any also more most other such than too very".split()
)


# ---------------------------------------------------------------- docs
def local_keywords(tokens: list[str], stop: list[bool], df: Counter, n_docs: int, n: int):
    """tf-idf top-n (word, weight), highest first, ties by word; numbers and 1-letter words skipped."""
    tf = Counter(t for t, s in zip(tokens, stop) if not s and len(t) > 1 and not t.isdigit())
    if not tf:
        return []
    total = sum(tf.values())
    scored = [(w, (c / total) * math.log((n_docs + 1) / (df.get(w, 0) + 1)) + 1e-12) for w, c in tf.items()]
    scored.sort(key=lambda kv: (-kv[1], kv[0]))
    return scored[:n]


def _top_keywords_fn():
    try:
        from pagetwin.text import keywords as tk  # noqa: F401

        return getattr(tk, "top_keywords", None)
    except Exception:
        return None


def make_docs(items: list[tuple[str, str, str, str]], n_keywords: int) -> list[Doc]:
    """items: (id, text, description, tokenised-words-as-text). Keywords: local tf-idf with df
    over these items."""
    toks = [t.split() for _, _, _, t in items]
    df: Counter = Counter()
    for ts in toks:
        df.update(set(ts))
    docs = []
    for (pid, text, desc, _), ts in zip(items, toks):
        stop = [t in STOP for t in ts]
        kw = local_keywords(ts, stop, df, len(items), n_keywords)
        docs.append(Doc(pid, pid, "", None, text, description=desc, tokens=ts, stop=stop, keywords=kw))
    return docs


def project_analysis_available() -> bool:
    try:
        from pagetwin.text.analyze import TextAnalyzer  # noqa: F401
        from pagetwin.text.keywords import DocFreq, top_keywords  # noqa: F401
    except ImportError:
        return False
    return True


def project_text_docs(items: list[tuple[str, str, str, str]], n_keywords: int) -> list[Doc]:
    """Docs from plain texts through the project's text analysis (tokens, stop words, keywords
    with document frequencies fitted on these texts)."""
    from pagetwin.text.analyze import TextAnalyzer
    from pagetwin.text.keywords import DocFreq, top_keywords

    settings = Settings()
    analyzer = TextAnalyzer(settings.text)
    analyses = [analyzer.analyze(text) for _, text, _, _ in items]
    doc_freq = DocFreq()
    for an in analyses:
        doc_freq.fit(sorted(set(an.tokens)))
    docs = []
    for (pid, text, desc, _), an in zip(items, analyses):
        d = Doc(pid, pid, "", None, text, description=desc, lang=an.lang, tokens=an.tokens, stop=an.stop)
        d.keywords = top_keywords(an, n_keywords, ANALYSIS["weighting"], doc_freq)
        docs.append(d)
    return docs


def project_html_docs(pages: list[tuple[str, str, bytes]], n_keywords: int) -> list[Doc]:
    """Docs from HTML through the project's own pipeline: pass 1 (site templates, document
    frequencies), then extraction and analysis, as ``pagetwin dedup`` does."""
    from pagetwin.html.templates import SiteTemplates
    from pagetwin.learned import Learned
    from pagetwin.pipeline import Worker
    from pagetwin.text.keywords import DocFreq
    from pagetwin.model import Page

    settings = Settings()
    settings.keywords.n = n_keywords  # the pipeline gives Doc.keywords the keyword algorithms' N
    settings.keywords.weighting = ANALYSIS["weighting"]
    settings.match.algorithms = ["con"]  # the pipeline computes keywords only for keyword algorithms
    worker = Worker(settings)
    templates, doc_freq = SiteTemplates(settings.extract), DocFreq()
    page_objs = [Page(pid, url, body) for pid, url, body in pages]
    for page in page_objs:
        site, stats, words, _, _ = worker.learn(page)
        if stats is not None:
            templates.fit(site, stats)
        if words is not None:
            doc_freq.fit(words)
    worker = Worker(settings, Learned(templates, doc_freq))
    return [worker.analyse(page)[0] for page in page_objs]


ANALYSIS = {"mode": "local", "weighting": "tfidf"}  # "project" once pagetwin.text.analyze / keywords are importable


def copycat_docs(n_keywords: int):
    from bench.labelled import copycat_pairs

    pairs = [p for p in copycat_pairs() if p["positive"] or p["negative"]]
    items, index = [], {}
    for p in pairs:
        for key in ("first_text", "second_text"):
            text = p[key]
            if text not in index:
                index[text] = len(items)
                items.append((f"cc{len(items)}", text, "", text))
    if ANALYSIS["mode"] == "project":
        docs = project_text_docs(items, n_keywords)
    else:
        docs = make_docs(items, n_keywords)
    labelled = [(index[p["first_text"]], index[p["second_text"]], p["positive"]) for p in pairs]
    return docs, labelled


def html_item(path: Path) -> tuple[str, str, str, str]:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(path.read_bytes().decode("utf-8", errors="replace"))
    for sel in ("script", "style", "nav"):
        for node in tree.css(sel):
            node.decompose()
    main = tree.css_first("div[role=main]") or tree.css_first("div.body") or tree.body
    blocks = []
    if main is not None:
        for node in main.css("p, li, pre, h1, h2, h3, h4, dt, dd, td"):
            t = " ".join(node.text(deep=True).split())
            if t:
                blocks.append(t)
    text = "\n".join(blocks)
    meta = tree.css_first('meta[name="description"]')
    desc = (meta.attributes.get("content") or "") if meta is not None else ""
    words = " ".join(_WORD.findall(text.lower()))
    return (str(path), text, desc, words)


def llvm_docs(n_keywords: int, max_pairs: int | None):
    from bench.labelled import llvm_pairs

    pos, neg = llvm_pairs(max_pairs=max_pairs)
    files, index = [], {}
    for a, b in pos + neg:
        for p in (a, b):
            if p not in index:
                index[p] = len(files)
                files.append(p)
    if ANALYSIS["mode"] == "project":
        # one site per version (the path below .../html/ is the page's path on it)
        pages = []
        for p in files:
            version = "15" if "llvm-15-doc" in str(p) else "16"
            rel = str(p).split("/html/", 1)[-1]
            pages.append((str(p), f"http://llvm{version}.docs.example/{rel}", p.read_bytes()))
        docs = project_html_docs(pages, n_keywords)
    else:
        docs = make_docs([html_item(p) for p in files], n_keywords)
    labelled = [(index[a], index[b], True) for a, b in pos] + [(index[a], index[b], False) for a, b in neg]
    return docs, labelled


# ---------------------------------------------------------------- evaluation
def fingerprint_all(alg: Algorithm, docs: list[Doc], repeats: int = 2):
    """Features and keys of every doc, and pages per CPU second of features+keys (process
    time, best of ``repeats``: the machine is shared, so wall-clock rates vary with the load)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        feats, keys = [], []
        for d in docs:
            f = alg.features(d)
            feats.append(f)
            keys.append(set(alg.keys(f)) if f is not None else set())
        best = min(best, time.process_time() - t0)
    return feats, keys, len(docs) / best if best > 0 else float("inf")


def predict(alg: Algorithm, feats, keys, i: int, j: int) -> str:
    """'dup', 'partial' or 'no'."""
    if feats[i] is None or feats[j] is None or not (keys[i] & keys[j]):
        return "no"
    if alg.keys_are_proof:
        return "dup"
    ev = alg.verify(feats[i], feats[j])
    if not ev.passed:
        return "no"
    return "partial" if ev.detail.get("kind") == "partial" else "dup"


def prf(preds: list[bool], labelled) -> dict[str, float]:
    tp = sum(1 for p, (_, _, y) in zip(preds, labelled) if p and y)
    fp = sum(1 for p, (_, _, y) in zip(preds, labelled) if p and not y)
    fn = sum(1 for p, (_, _, y) in zip(preds, labelled) if not p and y)
    prec = tp / (tp + fp) if tp + fp else 1.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return {"P": round(prec, 3), "R": round(rec, 3), "F1": round(f1, 3), "tp": tp, "fp": fp, "fn": fn}


def evaluate(alg: Algorithm, docs, labelled, cache: dict | None = None):
    if cache is not None and id(docs) in cache:
        feats, keys, pps = cache[id(docs)]
    else:
        feats, keys, pps = fingerprint_all(alg, docs)
        if cache is not None:
            cache[id(docs)] = (feats, keys, pps)
    outcome = [predict(alg, feats, keys, i, j) for i, j, _ in labelled]
    res = prf([o == "dup" for o in outcome], labelled)
    res["partial"] = sum(1 for o in outcome if o == "partial")
    res["pages_s"] = round(min(pps, 1e9))
    return res, outcome


def near_dup_algorithms(settings: Settings) -> dict[str, Algorithm]:
    out = {}
    for name, section in (("exact", "exact"), ("simhash", "simhash"), ("minhash", "minhash")):
        try:
            __import__(f"pagetwin.fingerprints.{name}")
            alg = REGISTRY[name](getattr(settings, section))
            probe = Doc("probe", "u", "h", None, "a probe page " * 30, tokens="a probe page".split() * 30)
            probe.stop = [False] * len(probe.tokens)
            alg.features(probe)  # fails early when the module is mid-edit
            out[name] = alg
        except Exception as exc:  # not committed yet
            print(f"# {name} unavailable: {exc}", file=sys.stderr)
    return out


PARTS = ("keywords", "des", "a", "tie", "segments", "chunks", "defaults")


def run(sets: dict[str, tuple[list[Doc], list]], out, parts=PARTS) -> dict[str, Any]:
    settings = Settings()
    results: dict[str, Any] = {}

    def line(text: str) -> None:
        print(text, file=out, flush=True)

    def table(title: str, algs: dict[str, Algorithm]) -> dict[str, dict]:
        line(f"\n### {title}\n")
        line("| algorithm | " + " | ".join(f"{s} P / R / F1 | {s} pages/s" for s in sets) + " |")
        line("|---|" + "---|---|" * len(sets))
        rows = {}
        for label, alg in algs.items():
            cells, row, cache = [], {}, {}
            for sname, (docs, labelled) in sets.items():
                res, outcome = evaluate(alg, docs, labelled, cache)
                row[sname] = res
                row[sname + "_outcome"] = outcome
                extra = f" (+{res['partial']} partial)" if res["partial"] else ""
                cells.append(f"{res['P']:.3f} / {res['R']:.3f} / **{res['F1']:.3f}**{extra} | {res['pages_s']}")
            rows[label] = row
            line(f"| {label} | " + " | ".join(cells) + " |")
        return rows

    # Keyword algorithms: N = 5 / 10 / 20, a at its default.
    kw = {}
    for n in (5, 10, 20):
        ks = replace(settings.keywords, n=n, min_keywords=min(settings.keywords.min_keywords, n))
        for name in ("con", "sort", "con-w", "sort-w"):
            kw[f"{name} N={n}"] = REGISTRY[name](ks)
    if "keywords" in parts:
        results["keywords_n"] = table(f"Keyword algorithms, N = 5 / 10 / 20 (a = {settings.keywords.a})", kw)

    des = {f"des {m}": REGISTRY["des"](replace(settings.keywords, des_mode=m)) for m in ("auto", "text", "description")}
    if "des" in parts:
        results["des"] = table("des, by mode", des)

    a_sweep = {}
    for a in (0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.05):
        ks = replace(settings.keywords, a=a)
        a_sweep[f"con-w a={a}"] = REGISTRY["con-w"](ks)
        a_sweep[f"sort-w a={a}"] = REGISTRY["sort-w"](ks)
    if "a" in parts:
        results["a"] = table("con-w / sort-w, weight distance threshold a (N = 10)", a_sweep)

    tq = {}
    for q in (0.0, 0.001, 0.01, 0.03):
        tq[f"con tie_quantum={q}"] = REGISTRY["con"](replace(settings.keywords, tie_quantum=q))
    if "tie" in parts:
        results["tie"] = table("con, rank tie quantum (N = 10)", tq)

    seg = {}
    for n, m in ((4, 3), (6, 4), (8, 6), (8, 5), (8, 4), (10, 7), (10, 6), (16, 12)):
        seg[f"segments N={n} M={m}"] = REGISTRY["segments"](replace(settings.segments, n=n, m=m))
    if "segments" in parts:
        results["segments"] = table("segments, N and M", seg)

    ch = {}
    for th in (0.5, 0.7, 0.8, 0.85, 0.9, 0.95):
        ch[f"chunks threshold={th}"] = REGISTRY["chunks"](replace(settings.chunks, threshold=th))
    for k in (4, 12):
        ch[f"chunks k={k} threshold={settings.chunks.threshold}"] = REGISTRY["chunks"](replace(settings.chunks, chunk_words=k))
    if "chunks" in parts:
        results["chunks"] = table("chunks (k = 8 words, containment 0.8), similarity threshold", ch)

    if "defaults" not in parts:
        return results
    defaults = {name: REGISTRY[name](getattr(settings, sec)) for name, sec in (
        ("des", "keywords"), ("con", "keywords"), ("sort", "keywords"), ("con-w", "keywords"),
        ("sort-w", "keywords"), ("segments", "segments"), ("chunks", "chunks"))}
    defaults.update(near_dup_algorithms(settings))
    base = table("Every algorithm at its default settings", defaults)
    results["defaults"] = base

    # OR-combinations of algorithms at their defaults (an edge when any of them passes).
    line("\n### Combinations (edge when any member passes)\n")
    names = list(defaults)
    combos = [c for r in (1, 2, 3, 4) for c in combinations(names, r)]
    named = [
        ("exact", "simhash", "minhash"),  # the spine's default
        ("exact", "con", "minhash"),
        ("exact", "con", "simhash", "minhash"),
        ("exact", "sort", "minhash"),
        ("exact", "con", "sort-w", "minhash"),
        ("exact", "segments", "minhash"),
        ("exact", "chunks", "minhash"),
        ("exact", "con", "chunks", "minhash"),
        ("des", "con", "sort", "con-w", "sort-w", "segments", "chunks"),  # every seed algorithm
        ("con", "segments"),
        ("con", "chunks"),
    ]
    named = [c for c in named if all(n in defaults for n in c)]
    scored = []
    for combo in combos + named:
        cells, f1s = [], []
        for sname, (docs, labelled) in sets.items():
            outs = [base[n][sname + "_outcome"] for n in combo]
            preds = [any(o[i] == "dup" for o in outs) for i in range(len(labelled))]
            res = prf(preds, labelled)
            cells.append(f"{res['P']:.3f} / {res['R']:.3f} / **{res['F1']:.3f}**")
            f1s.append(res["F1"])
        # pages/s of computing all members' features+keys (copycat pages, the larger ones)
        first = next(iter(sets))
        rate = 1.0 / sum(1.0 / base[n][first]["pages_s"] for n in combo if base[n][first]["pages_s"])
        cells.append(f"{rate:.0f}")
        scored.append((sum(f1s) / len(f1s), combo, cells))
    chosen = scored[len(combos):]
    scored = sorted(scored[: len(combos)], key=lambda s: -s[0])
    line("Best 12 of all combinations of up to 4 algorithms, by mean F1 over the data sets:\n")
    line("| combination | " + " | ".join(f"{s} P / R / F1" for s in sets) + f" | {next(iter(sets))} pages/s |")
    line("|---|" + "---|" * (len(sets) + 1))
    for mean_f1, combo, cells in scored[:12]:
        line(f"| {' + '.join(combo)} | " + " | ".join(cells) + " |")
    line("\nNamed candidates for the default:\n")
    line("| combination | " + " | ".join(f"{s} P / R / F1" for s in sets) + f" | {next(iter(sets))} pages/s |")
    line("|---|" + "---|" * (len(sets) + 1))
    for mean_f1, combo, cells in chosen:
        line(f"| {' + '.join(combo)} | " + " | ".join(cells) + " |")
    results["combos"] = [(c, f) for f, c, _ in scored[:12] + chosen]
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llvm-pairs", type=int, default=None, help="sample of LLVM positive paths (default all)")
    ap.add_argument("--no-llvm", action="store_true")
    ap.add_argument("--out", default="-", help="markdown output file (default stdout)")
    ap.add_argument("--analysis", choices=("auto", "project", "local"), default="auto",
                    help="docs from the project's extraction and text analysis, or the bench's local stand-in")
    ap.add_argument("--weighting", choices=("tfidf", "density"), default="tfidf",
                    help="keyword weighting of the project analysis (keywords.weighting)")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"tables to make, of {','.join(PARTS)}")
    args = ap.parse_args(argv)
    ANALYSIS["weighting"] = args.weighting
    mode = args.analysis
    if mode == "auto":
        mode = "project" if project_analysis_available() else "local"
    ANALYSIS["mode"] = mode
    print(f"# analysis: {mode}", file=sys.stderr)
    n_keywords = 20
    sets = {}
    t0 = time.perf_counter()
    sets["copycat"] = copycat_docs(n_keywords)
    if not args.no_llvm:
        sets["llvm"] = llvm_docs(n_keywords, args.llvm_pairs)
    if "llvm" in sets:
        # the pairs whose two pages both keep at least 40 content words (many LLVM pages are
        # AMDGPU operand stubs of a dozen words, or lose all their text to template removal)
        docs, labelled = sets["llvm"]
        long_enough = [len(d.content_tokens()) >= 40 for d in docs]
        sets["llvm40"] = (docs, [(i, j, y) for i, j, y in labelled if long_enough[i] and long_enough[j]])
    for sname, (docs, labelled) in sets.items():
        npos = sum(1 for *_, y in labelled if y)
        print(f"# {sname}: {len(docs)} pages, {npos} positive and {len(labelled) - npos} negative pairs",
              file=sys.stderr)
    print(f"# docs built in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    try:
        run(sets, out, tuple(p.strip() for p in args.parts.split(",")))
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
