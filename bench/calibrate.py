"""Calibrate the near-duplicate algorithms on real labelled data and measure the anti-chaining guard.

    .venv/bin/python -m bench.calibrate [--part copycat,llvm,guard,speed] [--llvm-pairs N]
                                       [--algorithms simhash,minhash] [--out FILE]

Data (bench/labelled.py): the copycat human judgements (label 3 = near duplicate, labels 0.5
and 1 = not; label 2 unused) and the LLVM 15/16 documentation (same page path = positive,
different paths = negatives, half of them from the same section).

An algorithm is a name in ALGORITHMS (a name of the fingerprint registry) with a list of
settings VARIANTS (overrides of its settings section) to try; its similarity is what its own
verify() says on the two pages' features (Evidence.score), and the product's decision for a
pair is "shares a candidate key and verify() passes". Add an algorithm by adding its name to
ALGORITHMS and, optionally, variants to VARIANTS. REFERENCES are exact set similarities on the
same tokens (no sketching), to tell what the sketches lose and which set to sketch.

Reported per similarity: ROC AUC (threshold-free), the best F1 over thresholds and its
threshold, and precision / recall at the configured default. For LLVM, precision and recall of
SimHash as k varies and of MinHash-LSH as the threshold varies (with the bands and rows the
threshold gives). Guard: all pages of a data set are matched as the product does (candidate
keys -> verify -> union-find), then clustered with and without the guard; pairwise precision
and recall of the clusters against the labels.

Docs: pages are analysed with pagetwin.text.analyze.TextAnalyzer when it is importable, else
with whitespace tokens (copycat: already tokenised) / lower-cased \\w+ tokens (LLVM); LLVM HTML
goes through pagetwin.html.noise.extract (with a per-version site-template model learned by
html.templates when importable), else selectolax body text. The report says which was used.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from pagetwin.config import ExtractSettings, Settings
from pagetwin.model import Doc

ALGORITHMS = ["simhash", "minhash"]

# Settings overrides tried per algorithm ({} = the configured defaults). Each must make sense
# for the algorithm's settings section (see pagetwin.config).
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "simhash": [
        {},
        {"shingle": 1, "weighting": "tf", "content_only": True, "k": 3},  # the field's usual
        {"shingle": 1, "weighting": "logtf", "content_only": True},
        {"shingle": 1, "weighting": "binary", "content_only": True},
        {"shingle": 1, "weighting": "tf", "content_only": False},
        {"shingle": 2, "weighting": "tf", "content_only": False},
        {"shingle": 3, "weighting": "tf", "content_only": False},
    ],
    "minhash": [
        {},
        # the field's usual: word 5-shingle sets, J 0.8, balanced S-curve (datasketch's choice)
        {"shingle": 5, "multiset": False, "threshold": 0.8, "fp_weight": 0.5, "fn_weight": 0.5},
        *({"shingle": s, "multiset": False} for s in (1, 2, 3, 4, 5, 8)),
        *({"shingle": s, "multiset": False, "content_only": True} for s in (1, 2, 3)),
        *({"shingle": s, "multiset": True} for s in (2, 3)),
        {"shingle": 1, "multiset": True, "content_only": True},
        *({"shingle": 1, "multiset": True, "num_perm": n} for n in (64, 256)),
        # the LSH's weight on false negatives: edges are verified, so a false positive costs
        # only a verification, a false negative a lost pair
        *({"shingle": 1, "multiset": True, "threshold": 0.9, "fp_weight": round(1 - w, 2), "fn_weight": w}
          for w in (0.5, 0.8, 0.9)),
        # chance candidates of long pages (issue 18): two shared bands, or more rows a band
        {"min_bands": 2},
        {"min_bands": 2, "fp_weight": 0.2, "fn_weight": 0.8},
        {"fp_weight": 0.5, "fn_weight": 0.5},
    ],
}

# Settings whose precision / recall is swept (SimHash over k, MinHash-LSH over the threshold).
SWEEPS: dict[str, list[dict[str, Any]]] = {
    "simhash": [{}, {"shingle": 1, "content_only": True}],
    "minhash": [{}, {"shingle": 5, "multiset": False, "fp_weight": 0.5, "fn_weight": 0.5},
                {"shingle": 3, "multiset": False}],
}


# --- reference similarities (exact, on token lists) --------------------------------------


def ngrams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    if len(tokens) < n:
        return [tuple(tokens)] if tokens else []
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def containment(a: set, b: set) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def weighted_jaccard(a: list, b: list) -> float:
    from collections import Counter

    ca, cb = Counter(a), Counter(b)
    inter = sum((ca & cb).values())
    union = sum((ca | cb).values())
    return inter / union if union else 0.0


def cosine_tf(a: list, b: list) -> float:
    from collections import Counter

    ca, cb = Counter(a), Counter(b)
    dot = sum(v * cb.get(k, 0) for k, v in ca.items())
    na = sum(v * v for v in ca.values()) ** 0.5
    nb = sum(v * v for v in cb.values()) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def _set_ref(fn: Callable, n: int, content: bool) -> Callable[[Doc, Doc], float]:
    def score(x: Doc, y: Doc) -> float:
        tx = x.content_tokens() if content else x.tokens
        ty = y.content_tokens() if content else y.tokens
        return fn(set(ngrams(tx, n)), set(ngrams(ty, n)))

    return score


def _bag_ref(fn: Callable, n: int) -> Callable[[Doc, Doc], float]:
    return lambda x, y: fn(ngrams(x.tokens, n), ngrams(y.tokens, n))


REFERENCES: dict[str, Callable[[Doc, Doc], float]] = {
    **{f"jaccard_w{n}": _set_ref(jaccard, n, False) for n in (1, 2, 3, 4, 5, 8)},
    **{f"containment_w{n}": _set_ref(containment, n, False) for n in (1, 3, 5)},
    "jaccard_content_w1": _set_ref(jaccard, 1, True),
    "jaccard_content_w3": _set_ref(jaccard, 3, True),
    "weighted_jaccard_w1": _bag_ref(weighted_jaccard, 1),
    "weighted_jaccard_w3": _bag_ref(weighted_jaccard, 3),
    "cosine_tf_w1": _bag_ref(cosine_tf, 1),
}


# --- metrics ------------------------------------------------------------------------------


def roc_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(score of a random positive > score of a random negative), ties counted half
    (the Mann-Whitney U statistic, from average ranks)."""
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels, dtype=bool)
    n_pos, n_neg = int(labels.sum()), int((~labels).sum())
    if not n_pos or not n_neg:
        return float("nan")
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def prf(pred: np.ndarray, labels: np.ndarray) -> tuple[float, float, float]:
    pred = np.asarray(pred, dtype=bool)
    labels = np.asarray(labels, dtype=bool)
    tp = int((pred & labels).sum())
    p = tp / int(pred.sum()) if pred.any() else 0.0
    r = tp / int(labels.sum()) if labels.any() else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def best_f1(scores: np.ndarray, labels: np.ndarray) -> tuple[float, float, float, float]:
    """(F1, threshold, precision, recall) of the best rule "score >= threshold"."""
    best = (0.0, float("nan"), 0.0, 0.0)
    for t in np.unique(scores):
        p, r, f = prf(scores >= t, labels)
        if f > best[0]:
            best = (f, float(t), p, r)
    return best


# --- documents ----------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


class DocMaker:
    """Text -> Doc with the project's analyser when it exists (else whitespace / \\w+ tokens)."""

    def __init__(self) -> None:
        self.how = "whitespace/\\w+ tokens (no analyser)"
        self.analyzer = None
        try:
            from pagetwin.config import TextSettings
            from pagetwin.text.analyze import TextAnalyzer

            self.analyzer = TextAnalyzer(TextSettings())
            self.how = "pagetwin.text.analyze.TextAnalyzer"
        except Exception:  # noqa: BLE001 - not written yet, or broken: fall back and say so
            self.analyzer = None

    def __call__(self, page_id: str, text: str, pretokenised: bool = False) -> Doc:
        if self.analyzer is not None:
            a = self.analyzer.analyze(text)
            return Doc(page_id, page_id, "", None, text, lang=a.lang, tokens=list(a.tokens), stop=list(a.stop))
        tokens = text.split() if pretokenised else _WORD.findall(text.lower())
        return Doc(page_id, page_id, "", None, text, tokens=tokens)


class HtmlText:
    """HTML file -> main text, as the product extracts it when it can."""

    def __init__(self, site_pages: dict[str, list[Path]] | None = None) -> None:
        self.settings = ExtractSettings()
        self.models: dict[str, Any] = {}
        try:
            from pagetwin.html.noise import extract  # noqa: F401

            self.how = "pagetwin.html.noise.extract (page level)"
            self.ok = True
        except Exception:  # noqa: BLE001
            self.how = "selectolax body text"
            self.ok = False
        if self.ok and site_pages:
            try:
                from pagetwin.html.noise import parse_page
                from pagetwin.html.parse import decode_html, parse_html
                from pagetwin.html.templates import SiteTemplates, page_stats

                templates = SiteTemplates(self.settings)
                for site, files in site_pages.items():
                    for f in files:
                        html, _, _ = decode_html(f.read_bytes(), None)
                        templates.fit(site, page_stats(parse_page(parse_html(html)), self.settings))
                self.models = {site: templates.for_site(site) for site in site_pages}
                self.how = "pagetwin.html.noise.extract with html.templates site models"
            except Exception as exc:  # noqa: BLE001
                self.how += f" (site templates failed: {type(exc).__name__})"

    def __call__(self, path: Path, site: str = "") -> str:
        data = path.read_bytes()
        if self.ok:
            from pagetwin.html.noise import extract
            from pagetwin.html.parse import decode_html, parse_html

            html, _, _ = decode_html(data, None)
            return extract(parse_html(html), self.models.get(site), self.settings).text
        from selectolax.lexbor import LexborHTMLParser

        tree = LexborHTMLParser(data.decode("utf-8", "replace"))
        for node in tree.css("script, style"):
            node.decompose()
        body = tree.body
        return body.text(separator="\n") if body is not None else ""


# --- data sets -----------------------------------------------------------------------------


class PairSet:
    """Labelled pairs over a list of docs: (i, j, positive)."""

    def __init__(self, name: str, docs: list[Doc], pairs: list[tuple[int, int, bool]], groups: list[Any] | None = None):
        self.name, self.docs, self.pairs = name, docs, pairs
        self.groups = groups  # per doc, a truth group id (same group = duplicates), when known

    @property
    def labels(self) -> np.ndarray:
        return np.array([p for _, _, p in self.pairs], dtype=bool)


def copycat_set(make: DocMaker) -> PairSet:
    from bench.labelled import copycat_pairs

    docs: list[Doc] = []
    where: dict[str, int] = {}
    pairs = []

    def doc_of(url: str, text: str) -> int:
        key = f"{url}\n{len(text)}"
        if key not in where:
            where[key] = len(docs)
            docs.append(make(url or f"doc{len(docs)}", text, pretokenised=True))
        return where[key]

    for row in copycat_pairs():
        if not (row["positive"] or row["negative"]):
            continue
        a = doc_of(row["first_url"], row["first_text"])
        b = doc_of(row["second_url"], row["second_text"])
        pairs.append((a, b, bool(row["positive"])))
    return PairSet("copycat", docs, pairs)


def llvm_set(make: DocMaker, max_pairs: int | None) -> tuple[PairSet, str]:
    from bench.labelled import llvm_doc_pages, llvm_pairs

    pages = {v: llvm_doc_pages(v) for v in (15, 16)}
    html = HtmlText({f"llvm{v}": list(p.values()) for v, p in pages.items()})
    docs: list[Doc] = []
    groups: list[str] = []
    where: dict[Path, int] = {}
    for v, rels in pages.items():
        for rel, path in rels.items():
            where[path] = len(docs)
            docs.append(make(f"{v}/{rel}", html(path, f"llvm{v}")))
            groups.append(rel)
    positives, negatives = llvm_pairs(max_pairs=max_pairs)
    pairs = [(where[a], where[b], True) for a, b in positives] + [(where[a], where[b], False) for a, b in negatives]
    return PairSet("llvm", docs, pairs, groups), html.how


def text_bearing(ps: PairSet, min_words: int = 50, seed: int = 0) -> PairSet:
    """The LLVM pairs among pages with at least ``min_words`` words of main text on both sides.

    Most LLVM doc pages (the ~800 AMDGPU operand pages) carry a handful of generated words:
    below every text algorithm's min_tokens, and near-identical across different paths. Here the
    positives are all same-path pairs of text-bearing pages, and for each one negative from the
    same section (folder) and one from anywhere, text-bearing too, seeded."""
    import random

    rng = random.Random(seed)
    ok = [i for i, d in enumerate(ps.docs) if len(d.tokens) >= min_words]
    by_version: dict[str, dict[str, int]] = defaultdict(dict)
    for i in ok:
        version = ps.docs[i].page_id.split("/", 1)[0]
        by_version[version][ps.groups[i]] = i
    va, vb = sorted(by_version)[:2]
    a_pages, b_pages = by_version[va], by_version[vb]
    shared = sorted(set(a_pages) & set(b_pages))
    section = lambda rel: rel.rsplit("/", 1)[0] if "/" in rel else ""  # noqa: E731
    b_by_section: dict[str, list[str]] = defaultdict(list)
    for rel in sorted(b_pages):
        b_by_section[section(rel)].append(rel)
    all_b = sorted(b_pages)
    pairs = [(a_pages[r], b_pages[r], True) for r in shared]
    for r in shared:
        siblings = [x for x in b_by_section[section(r)] if x != r]
        if siblings:
            pairs.append((a_pages[r], b_pages[rng.choice(siblings)], False))
        other = rng.choice(all_b)
        if other != r:
            pairs.append((a_pages[r], b_pages[other], False))
    return PairSet(f"{ps.name}_text{min_words}", ps.docs, pairs, ps.groups)


# --- algorithms ----------------------------------------------------------------------------


def build(name: str, overrides: dict[str, Any]):
    """The registry's algorithm `name` with its settings section overridden."""
    import importlib

    from pagetwin.fingerprints import MODULES
    from pagetwin.fingerprints.base import REGISTRY

    module, section = MODULES[name]
    importlib.import_module(module)
    base = getattr(Settings(), section)
    return REGISTRY[name](replace(base, **overrides))


def label_of(overrides: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in overrides.items()) or "defaults"


def featurize(algo, docs: list[Doc]) -> list[Any]:
    return [algo.features(d) for d in docs]


def pair_scores(algo, feats: list[Any], pairs, duplicates_only: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score, passed, shares a candidate key) per pair; pages without features score 0.
    ``duplicates_only``: a pair that passes as a ``partial`` copy (containment) does not count as
    passed (clusters are made of duplicate edges; partial ones are reported apart)."""
    keys = {}
    scores, passed, cand = [], [], []
    for i, j, _ in pairs:
        fa, fb = feats[i], feats[j]
        if fa is None or fb is None:
            scores.append(0.0)
            passed.append(False)
            cand.append(False)
            continue
        ev = algo.verify(fa, fb)
        scores.append(ev.score)
        passed.append(ev.passed and not (duplicates_only and ev.detail.get("kind") == "partial"))
        for x in (i, j):
            if x not in keys:
                keys[x] = set(algo.keys(feats[x]))
        cand.append(len(keys[i] & keys[j]) >= getattr(algo, "min_shared_keys", 1))  # a candidate pair (min_bands)
    return np.array(scores), np.array(passed), np.array(cand)


SCORES: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = defaultdict(dict)


def joint_choice(set_names: list[str], out: dict) -> None:
    """One threshold per similarity for all data sets: the one maximising the mean F1."""
    rows = []
    for sim, by_set in SCORES.items():
        if not all(n in by_set for n in set_names):
            continue
        candidates = np.unique(np.concatenate([by_set[n][0] for n in set_names]))
        best = None
        for t in candidates:
            f1s = [prf(by_set[n][0] >= t, by_set[n][1])[2] for n in set_names]
            if best is None or np.mean(f1s) > best[0]:
                best = (float(np.mean(f1s)), float(t), f1s)
        rows.append({"similarity": sim, "threshold": best[1], "mean_f1": best[0],
                     **{f"f1_{n}": f for n, f in zip(set_names, best[2])}})
    rows.sort(key=lambda r: -r["mean_f1"])
    out["joint"] = {"sets": set_names, "rows": rows}
    print(f"\n### one threshold for {' + '.join(set_names)} (maximising mean F1)\n")
    print("| similarity | threshold | " + " | ".join(f"F1 {n}" for n in set_names) + " | mean F1 |")
    print("|---|---|" + "---|" * len(set_names) + "---|")
    for r in rows:
        print(f"| {r['similarity']} | {r['threshold']:.3f} | "
              + " | ".join(f"{r['f1_' + n]:.3f}" for n in set_names) + f" | {r['mean_f1']:.3f} |")


def threshold_grid(set_names: list[str], out: dict, top: int = 5) -> None:
    """P / R / F1 per data set at a grid of thresholds, for the best similarities of the joint
    table and the configured defaults: where the F1 optimum is flat, the lower threshold keeps
    more true pairs for the same F1."""
    joint = out.get("joint", {}).get("rows", [])
    names = [r["similarity"] for r in joint if "[" in r["similarity"]][:top]
    names += [n for n in SCORES if n.endswith("[defaults]") and n not in names]
    grid = {}
    for name in names:
        by_set = SCORES[name]
        if not all(n in by_set for n in set_names):
            continue
        kind = name.split("[", 1)[0]
        thresholds = [1 - k / 64 for k in range(0, 11)] if kind == "simhash" else [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
        print(f"\n#### {name}: P / R / F1 by threshold\n")
        print("| threshold | " + " | ".join(set_names) + " | mean F1 |")
        print("|---|" + "---|" * len(set_names) + "---|")
        rows = []
        for t in thresholds:
            cells, f1s = [], []
            for n in set_names:
                p, r, f = prf(by_set[n][0] >= t - 1e-9, by_set[n][1])
                cells.append(f"{p:.3f} / {r:.3f} / {f:.3f}")
                f1s.append(f)
            rows.append({"threshold": t, "f1": f1s})
            label = f"{t:.3f} (k={round((1 - t) * 64)})" if kind == "simhash" else f"{t:.2f}"
            print(f"| {label} | " + " | ".join(cells) + f" | {np.mean(f1s):.3f} |")
        grid[name] = rows
    out["threshold_grid"] = grid


def evaluate_similarities(ps: PairSet, algorithms: list[str], out: dict) -> None:
    labels = ps.labels
    rows = []
    for name, fn in REFERENCES.items():
        s = np.array([fn(ps.docs[i], ps.docs[j]) for i, j, _ in ps.pairs])
        SCORES[name][ps.name] = (s, labels)
        f, t, p, r = best_f1(s, labels)
        rows.append({"similarity": name, "kind": "reference", "auc": roc_auc(s, labels), "best_f1": f,
                     "at": t, "p": p, "r": r})
    for name in algorithms:
        for ov in VARIANTS.get(name, [{}]):
            algo = build(name, ov)
            t0 = time.perf_counter()
            feats = featurize(algo, ps.docs)
            ms = 1000 * (time.perf_counter() - t0) / max(1, len(ps.docs))
            s, passed, cand = pair_scores(algo, feats, ps.pairs)
            f, t, p, r = best_f1(s, labels)
            SCORES[f"{name}[{label_of(ov)}]"][ps.name] = (s, labels)
            dp, dr, df = prf(passed & cand, labels)
            rows.append({"similarity": f"{name}[{label_of(ov)}]", "kind": name, "auc": roc_auc(s, labels),
                         "best_f1": f, "at": t, "p": p, "r": r, "default_p": dp, "default_r": dr,
                         "default_f1": df, "ms_per_doc": ms, "no_features": sum(x is None for x in feats)})
    out[ps.name] = {"pairs": len(ps.pairs), "positives": int(labels.sum()), "rows": rows}
    print(f"\n### {ps.name}: {len(ps.pairs)} pairs, {int(labels.sum())} positive\n")
    print("| similarity | AUC | best F1 | at | P | R | product P / R / F1 (defaults of that row) |")
    print("|---|---|---|---|---|---|---|")
    for row in sorted(rows, key=lambda r: -r["best_f1"]):
        prod = (f"{row['default_p']:.3f} / {row['default_r']:.3f} / {row['default_f1']:.3f}"
                if "default_p" in row else "")
        print(f"| {row['similarity']} | {row['auc']:.3f} | {row['best_f1']:.3f} | {row['at']:.3f} | "
              f"{row['p']:.3f} | {row['r']:.3f} | {prod} |")


def sweep_simhash(ps: PairSet, overrides: dict[str, Any], out: dict) -> None:
    """P / R of SimHash (Hamming <= k; the block tables find every such pair) as k varies."""
    from pagetwin.fingerprints.simhash import hamming

    algo = build("simhash", overrides)
    feats = featurize(algo, ps.docs)
    labels = ps.labels
    d = np.array([hamming(feats[i], feats[j]) if feats[i] is not None and feats[j] is not None else 64
                  for i, j, _ in ps.pairs])
    rows = []
    print(f"\n#### {ps.name}: SimHash[{label_of(overrides)}] as k varies\n")
    print("| k | tables | P | R | F1 |")
    print("|---|---|---|---|---|")
    for k in range(0, 21):
        p, r, f = prf(d <= k, labels)
        tables = build("simhash", {**overrides, "k": k}).table_count() if k <= 16 else None
        rows.append({"k": k, "p": p, "r": r, "f1": f, "tables": tables})
        print(f"| {k} | {tables} | {p:.3f} | {r:.3f} | {f:.3f} |")
    out.setdefault("sweeps", {})[f"{ps.name}/simhash[{label_of(overrides)}]"] = rows


def sweep_minhash(ps: PairSet, overrides: dict[str, Any], out: dict) -> None:
    """P / R of MinHash-LSH (shares a band and estimate >= t) as the threshold t varies."""
    labels = ps.labels
    rows = []
    print(f"\n#### {ps.name}: MinHash-LSH[{label_of(overrides)}] as the threshold varies\n")
    print("| threshold | bands x rows | candidate recall | P | R | F1 |")
    print("|---|---|---|---|---|---|")
    for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        algo = build("minhash", {**overrides, "threshold": t})
        feats = featurize(algo, ps.docs) if not rows else feats_cache
        feats_cache = feats
        s, passed, cand = pair_scores(algo, feats, ps.pairs)
        p, r, f = prf(passed & cand, labels)
        cr = float((cand & labels).sum() / max(1, labels.sum()))
        rows.append({"threshold": t, "bands": algo.bands, "rows": algo.rows, "candidate_recall": cr,
                     "p": p, "r": r, "f1": f})
        print(f"| {t} | {algo.bands} x {algo.rows} | {cr:.3f} | {p:.3f} | {r:.3f} | {f:.3f} |")
    out.setdefault("sweeps", {})[f"{ps.name}/minhash[{label_of(overrides)}]"] = rows


def run_sweeps(ps: PairSet, algorithms: list[str], out: dict) -> None:
    for overrides in SWEEPS["simhash"] if "simhash" in algorithms else []:
        sweep_simhash(ps, overrides, out)
    for overrides in SWEEPS["minhash"] if "minhash" in algorithms else []:
        sweep_minhash(ps, overrides, out)


# --- clusters and the guard ------------------------------------------------------------------


def match_edges(algos: list, feats: dict[str, list[Any]], n: int, max_bucket: int) -> tuple[list[tuple[int, int, float]], Callable]:
    """Verified edges as the product finds them (candidate keys -> verify), and similar()."""
    from pagetwin.match import bucket_pairs

    edges: dict[tuple[int, int], float] = {}
    for algo in algos:
        f = feats[algo.name]
        buckets: dict[int, list[int]] = defaultdict(list)
        for i in range(n):
            if f[i] is not None:
                for key in set(algo.keys(f[i])):
                    buckets[key].append(i)
        for bucket in buckets.values():
            if len(bucket) < 2:
                continue
            for a, b in bucket_pairs(bucket, max_bucket, False):
                ev = algo.verify(f[a], f[b])
                if ev.passed:
                    edges[(a, b)] = max(edges.get((a, b), 0.0), ev.score)

    def similar(a: int, b: int) -> bool:
        return any(
            feats[al.name][a] is not None and feats[al.name][b] is not None
            and al.verify(feats[al.name][a], feats[al.name][b]).passed
            for al in algos
        )

    return [(a, b, s) for (a, b), s in edges.items()], similar


def components(n: int, edges) -> list[list[int]]:
    from pagetwin.cluster import UnionFind

    uf = UnionFind()
    for i in range(n):
        uf.add(i)
    for a, b, _ in edges:
        uf.union(a, b)
    return [sorted(m) for m in uf.groups().values()]


def cluster_pairs_quality(clusters: list[list[int]], ps: PairSet) -> dict[str, float]:
    """Pairwise quality of a clustering: over labelled pairs (P, R), and, when every doc has a
    truth group, over all pairs of docs (all_P, all_R)."""
    where = {}
    for c, members in enumerate(clusters):
        for m in members:
            where[m] = c
    same = np.array([where[i] == where[j] for i, j, _ in ps.pairs])
    p, r, f = prf(same, ps.labels)
    res = {"P": p, "R": r, "F1": f, "largest": max(len(c) for c in clusters)}
    if ps.groups is not None:
        from collections import Counter

        tp = pred = 0
        for members in clusters:
            pred += len(members) * (len(members) - 1) // 2
            tp += sum(v * (v - 1) // 2 for v in Counter(ps.groups[m] for m in members).values())
        truth = sum(v * (v - 1) // 2 for v in Counter(ps.groups).values())
        res["all_P"] = tp / pred if pred else 0.0
        res["all_R"] = tp / truth if truth else 0.0
        res["all_F1"] = 2 * res["all_P"] * res["all_R"] / (res["all_P"] + res["all_R"]) if tp else 0.0
    return res


def doc_subset(ps: PairSet, min_words: int) -> PairSet:
    """The pages with at least min_words tokens, renumbered, with the labelled pairs among them."""
    keep = [i for i, d in enumerate(ps.docs) if len(d.tokens) >= min_words]
    new = {old: n for n, old in enumerate(keep)}
    pairs = [(new[i], new[j], y) for i, j, y in ps.pairs if i in new and j in new]
    groups = [ps.groups[i] for i in keep] if ps.groups is not None else None
    return PairSet(f"{ps.name}_docs{min_words}", [ps.docs[i] for i in keep], pairs, groups)


# Settings under which the guard is measured: the defaults, and looser ones where chains form.
GUARD_SETTINGS: list[tuple[list[str], dict[str, dict]]] = [
    (["simhash", "minhash"], {}),
    (["simhash", "minhash"], {"minhash": {"min_bands": 2}}),
    (["minhash"], {"minhash": {"threshold": 0.8}}),
    (["minhash"], {"minhash": {"threshold": 0.7}}),
    (["minhash"], {"minhash": {"threshold": 0.6}}),
    (["minhash"], {"minhash": {"threshold": 0.5}}),
    (["simhash"], {"simhash": {"k": 8}}),
]


def evaluate_guard(ps: PairSet, algorithms: list[str], out: dict, overrides: dict[str, dict] | None = None) -> None:
    from pagetwin.guard import split_component

    settings = Settings()
    algos = [build(name, (overrides or {}).get(name, {})) for name in algorithms]
    feats = {a.name: featurize(a, ps.docs) for a in algos}
    edges, similar = match_edges(algos, feats, len(ps.docs), settings.match.max_bucket)
    comps = components(len(ps.docs), edges)
    by_member: dict[int, list] = defaultdict(list)
    for e in edges:
        by_member[e[0]].append(e)
    length = [len(d.text) for d in ps.docs]

    def keep(members: list[int]) -> int:
        return min(members, key=lambda m: (-length[m], m))

    variants = [("none", None, 0)] + [("center", "center", k) for k in (1, 2, 4, 8)] + [("keep", "keep", k) for k in (1, 4)]
    rows = []
    label = "+".join(f"{a.name}[{label_of((overrides or {}).get(a.name, {}))}]" for a in algos)
    print(f"\n#### {ps.name}: clusters from {label}, {len(edges)} verified edges\n")
    print("| guard | core | labelled P | labelled R | labelled F1 | all-pairs P | all-pairs R | largest cluster | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, rule, core in variants:
        t0 = time.perf_counter()
        if rule is None:
            clusters = comps
        else:
            clusters = []
            for members in comps:
                if len(members) <= 2:
                    clusters.append(members)
                    continue
                ms = set(members)
                comp_edges = [e for m in members for e in by_member[m] if e[1] in ms]
                clusters.extend(split_component(members, comp_edges, similar, keep, rule, core))
        secs = time.perf_counter() - t0
        q = cluster_pairs_quality(clusters, ps)
        rows.append({"guard": name, "core": core, **q, "seconds": secs})
        print(f"| {name} | {core or ''} | {q['P']:.3f} | {q['R']:.3f} | {q['F1']:.3f} | "
              f"{q.get('all_P', float('nan')):.3f} | {q.get('all_R', float('nan')):.3f} | {q['largest']} | {secs:.2f} |")
    out.setdefault("guard", {})[f"{ps.name}/{label}"] = rows


# --- speed ------------------------------------------------------------------------------------


def measure_speed(ps: PairSet, out: dict) -> None:
    """Features per page: our SimHash and MinHash vs datasketch MinHash on the same tokens."""
    from pagetwin.fingerprints.minhash import MinHash

    docs = ps.docs
    rows = {}
    for name in ALGORITHMS:
        algo = build(name, {})
        t0 = time.perf_counter()
        featurize(algo, docs)
        rows[name] = 1000 * (time.perf_counter() - t0) / len(docs)
    for w in (1, 5):
        mh = MinHash(replace(Settings().minhash, shingle=w, multiset=False))
        t0 = time.perf_counter()
        featurize(mh, docs)
        rows[f"minhash, {w}-word shingles as a set"] = 1000 * (time.perf_counter() - t0) / len(docs)
        try:
            from datasketch import MinHash as DSMinHash
        except ImportError:
            continue
        t0 = time.perf_counter()
        for d in docs:
            toks = d.tokens
            sh = {" ".join(toks[i : i + w]).encode() for i in range(max(1, len(toks) - w + 1))}
            m = DSMinHash(num_perm=mh.settings.num_perm)
            m.update_batch(list(sh))
        rows[f"datasketch MinHash {mh.settings.num_perm} perm, {w}-word shingles (sha1 each)"] = (
            1000 * (time.perf_counter() - t0) / len(docs))
    out["speed_ms_per_doc"] = rows
    print(f"\n#### feature time per page ({ps.name}, {len(docs)} pages, mean {np.mean([len(d.tokens) for d in docs]):.0f} tokens)\n")
    for k, v in rows.items():
        print(f"- {k}: {v:.3f} ms")


# --- main -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", default="copycat,llvm,guard,speed")
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS))
    ap.add_argument("--llvm-pairs", type=int, default=None, help="sample this many LLVM positive paths")
    ap.add_argument("--out", default="bench/data/calibrate.json")
    args = ap.parse_args(argv)
    parts = set(args.part.split(","))
    algorithms = [a for a in args.algorithms.split(",") if a]
    from bench.labelled import DataMissing

    out: dict[str, Any] = {"algorithms": algorithms}
    make = DocMaker()
    print(f"docs: {make.how}")
    t0 = time.perf_counter()
    try:
        cc = copycat_set(make)
        if "copycat" in parts:
            evaluate_similarities(cc, algorithms, out)
        if "guard" in parts:
            for algos, ov in GUARD_SETTINGS:
                evaluate_guard(cc, [a for a in algos if a in algorithms], out, ov)
        if "speed" in parts:
            measure_speed(cc, out)
    except DataMissing as exc:
        print(f"copycat skipped: {exc}", file=sys.stderr)
    if parts & {"llvm", "guard"}:
        try:
            ll, how = llvm_set(make, args.llvm_pairs)
            print(f"\nLLVM html -> text: {how}; {len(ll.docs)} pages")
            out["llvm_text"] = how
            if "llvm" in parts:
                lt = text_bearing(ll)
                for subset in (ll, lt):
                    evaluate_similarities(subset, algorithms, out)
                    run_sweeps(subset, algorithms, out)
            if "guard" in parts:
                lt_docs = doc_subset(ll, 50)
                for algos, ov in GUARD_SETTINGS:
                    evaluate_guard(lt_docs, [a for a in algos if a in algorithms], out, ov)
        except DataMissing as exc:
            print(f"llvm skipped: {exc}", file=sys.stderr)
    if "copycat" in parts and "copycat" in out:
        run_sweeps(cc, algorithms, out)
    evaluated = [n for n in ("copycat", "llvm_text50") if n in out]
    if len(evaluated) == 2:
        joint_choice(evaluated, out)
        threshold_grid(evaluated, out)
    out["docs"] = make.how
    out["seconds"] = time.perf_counter() - t0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, default=float))
    print(f"\n({out['seconds']:.0f} s; full results in {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
