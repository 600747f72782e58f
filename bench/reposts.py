"""Reposts: the same story on different sites (SpotSigs Gold Set, development half).

    .venv/bin/python -m bench.reposts [--layouts folder,flat,warc] [--algorithms LIST]
                                      [--profile NAME] [--set KEY=VALUE ...] [--folds]
                                      [--json FILE]

Each folder of ``../shared/data/neardup/spotsigs-dev/GoldSetOfDuplicates`` is one gold cluster.
``pagetwin dedup`` runs on the pages in three layouts that must give nearly the same clusters:

- ``folder``: the set as it is (one sub-folder per story), given as one input folder;
- ``folders``: each story folder given as an input of its own (so each is a site of copies);
- ``flat``: every page in one flat folder (copies named ``story__file.htm``);
- ``warc``: one WARC file in which every page is a response of its own host.

Scored pairwise over all unordered pairs of pages: a pair is positive when both pages are in
the same story folder; precision, recall and F1 of the pairs inside predicted clusters. The
agreement of two layouts is the same pairwise F1 with one run's clusters taken as the truth.

``--folds``: the 2-fold split by story used to check tuned settings: the stories sorted by name,
alternately given to fold 0 and fold 1, each fold scored on its own pages.

``--grid``: the 2-fold check of the MinHash defaults: every combination of ``GRID`` (word
shingle, Jaccard threshold, guard share) runs once (layout ``folder``) and is scored on each
fold; the combination best on one fold is reported with its score on the other fold.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.labelled import DataMissing, shared_data_dir
from pagetwin.config import Settings

GOLD = Path("neardup") / "spotsigs-dev" / "GoldSetOfDuplicates"


def gold_pages(root: Path | None = None) -> dict[str, str]:
    """{"story/file.htm": story} of every page of the set."""
    root = root or shared_data_dir() / GOLD
    if not root.is_dir():
        raise DataMissing(f"SpotSigs development set not found at {root}")
    out = {}
    for story in sorted(p for p in root.iterdir() if p.is_dir()):
        for f in sorted(story.iterdir()):
            if f.suffix.lower() in (".htm", ".html"):
                out[f"{story.name}/{f.name}"] = story.name
    return out


def folds(pages: dict[str, str]) -> list[set[str]]:
    """The two story folds: stories sorted by name, alternately to fold 0 and 1."""
    stories = sorted(set(pages.values()))
    return [set(stories[0::2]), set(stories[1::2])]


def pair_scores(predicted: dict[str, str], truth: dict[str, str]) -> dict[str, float]:
    """Pairwise precision / recall / F1 of ``predicted`` clusters (page -> cluster) against
    ``truth`` (page -> gold cluster), over the pages of ``truth``."""

    def pairs(groups: Counter) -> int:
        return sum(n * (n - 1) // 2 for n in groups.values())

    keys = [k for k in truth if k in predicted]
    pred = pairs(Counter(predicted[k] for k in keys))
    gold = pairs(Counter(truth[k] for k in keys))
    tp = pairs(Counter((predicted[k], truth[k]) for k in keys))
    p = tp / pred if pred else 1.0
    r = tp / gold if gold else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"P": round(p, 4), "R": round(r, 4), "F1": round(f, 4), "pred_pairs": pred, "tp": tp,
            "clusters": len(set(predicted[k] for k in keys))}  # fmt: skip


def _flat(pages: dict[str, str], root: Path, tmp: Path) -> tuple[Path, dict[str, str]]:
    flat = tmp / "flat"
    flat.mkdir()
    ids = {}
    for rel in pages:
        name = rel.replace("/", "__")
        shutil.copyfile(root / rel, flat / name)  # a copy: a link resolves to the story folder
        ids[name] = rel
    return flat, ids


def _warc(pages: dict[str, str], root: Path, tmp: Path) -> tuple[Path, dict[str, str]]:
    """Every page a response of its own host (the host names tell nothing of the story)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp / "spotsigs.warc.gz"
    ids = {}
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for rel in pages:
            host = "h" + hashlib.sha1(rel.encode()).hexdigest()[:12] + ".example.com"
            url = f"http://{host}/article.htm"
            body = (root / rel).read_bytes()
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)
            writer.write_record(record)
            ids[record.rec_headers.get_header("WARC-Record-ID")] = rel
    return path, ids


def run_layout(layout: str, pages: dict[str, str], settings: Settings, tmp: Path) -> tuple[dict[str, str], dict]:
    """{page: cluster} of one dedup run over the pages in ``layout``, and the run's summary."""
    from pagetwin.app import dedup

    root = shared_data_dir() / GOLD
    work = Path(tempfile.mkdtemp(dir=tmp))
    if layout == "folder":
        inputs, ids = [str(root)], {rel: rel for rel in pages}
    elif layout == "folders":
        stories = sorted({rel.split("/", 1)[0] for rel in pages})
        inputs = [str(root / story) for story in stories]
        # A file's id is its path in its folder, which repeats across folders: told apart by URL.
        ids = {(root / rel).resolve().as_uri(): rel for rel in pages}
    elif layout == "flat":
        flat, ids = _flat(pages, root, work)
        inputs = [str(flat)]
    elif layout == "warc":
        warc, ids = _warc(pages, root, work)
        inputs = [str(warc)]
    else:
        raise ValueError(f"unknown layout {layout!r}")
    out = work / "out"
    summary = dedup(inputs, out, settings)
    predicted = {}
    with open(out / "clusters.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            key = row["url"] if layout == "folders" else row["id"]
            if key in ids:
                predicted[ids[key]] = row["cluster"]
    return predicted, summary


GRID = {
    "minhash.shingle": [1, 2, 3, 5],
    "minhash.threshold": [0.2, 0.25, 0.3, 0.35, 0.4, 0.5],
    "match.guard_share": [0.33, 0.5, 0.7, 1.0],
}


def grid(pages: dict[str, str], base: list[str], tmp: Path) -> dict:
    """Tune-on-one-fold, score-on-the-other over ``GRID`` (see the module docstring)."""
    import itertools

    names = list(GRID)
    halves = folds(pages)
    rows = []
    for values in itertools.product(*GRID.values()):
        sets = [f"{n}={v}" for n, v in zip(names, values)]
        predicted, _ = run_layout("folder", pages, make_settings(sets=base + sets + ["minhash.multiset=false"]), tmp)
        row = {"set": dict(zip(names, values)), "all": pair_scores(predicted, pages)}
        for i, stories in enumerate(halves):
            row[f"fold{i}"] = pair_scores(predicted, {k: v for k, v in pages.items() if v in stories})
        rows.append(row)
        print(json.dumps({**row["set"], **{k: row[k]["F1"] for k in ("all", "fold0", "fold1")}}), flush=True)
    out = {"rows": rows}
    for tune, test in ((0, 1), (1, 0)):
        best = max(rows, key=lambda r: (r[f"fold{tune}"]["F1"], r[f"fold{tune}"]["P"]))
        out[f"tuned_on_fold{tune}"] = {"set": best["set"], f"fold{tune}": best[f"fold{tune}"], f"fold{test}": best[f"fold{test}"]}
    return out


def make_settings(profile: str = "", algorithms: str = "", sets: list[str] | None = None) -> Settings:
    settings = Settings.with_profile(profile) if profile else Settings()
    if algorithms:
        settings.set("match.algorithms", algorithms)
    for item in sets or []:
        key, _, value = item.partition("=")
        settings.set(key, value)
    settings.set("run.progress", False)
    return settings


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layouts", default="folder,folders,flat,warc")
    ap.add_argument("--algorithms", default="")
    ap.add_argument("--profile", default="")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--folds", action="store_true", help="also score the two story folds apart")
    ap.add_argument("--grid", action="store_true", help="the 2-fold check of the MinHash defaults over GRID")
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    try:
        pages = gold_pages()
    except DataMissing as exc:
        print(exc, file=sys.stderr)
        return 1
    if args.grid:
        with tempfile.TemporaryDirectory() as tmp:
            out = grid(pages, args.set, Path(tmp))
        for key in ("tuned_on_fold0", "tuned_on_fold1"):
            print(json.dumps({key: out[key]}))
        if args.json:
            Path(args.json).write_text(json.dumps(out, indent=1))
        return 0
    settings = make_settings(args.profile, args.algorithms, args.set)
    report: dict = {"settings": {"profile": args.profile, "algorithms": settings.match.algorithms, "set": args.set}}
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for layout in args.layouts.split(","):
            t = time.monotonic()
            predicted, summary = run_layout(layout, pages, settings, Path(tmp))
            seconds = time.monotonic() - t
            runs[layout] = predicted
            row = {"layout": layout, **pair_scores(predicted, pages), "seconds": round(seconds, 1),
                   "edges": summary.get("edges_by_kind", {})}  # fmt: skip
            if args.folds:
                for i, stories in enumerate(folds(pages)):
                    sub = {k: v for k, v in pages.items() if v in stories}
                    row[f"fold{i}"] = pair_scores(predicted, sub)
            report[layout] = row
            print(json.dumps(row), flush=True)
    names = list(runs)
    agree = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            agree[f"{a}~{b}"] = pair_scores(runs[a], runs[b])["F1"]
    if agree:
        report["agreement"] = agree
        print(json.dumps({"agreement": agree}))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
