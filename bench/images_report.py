"""What the `images` algorithm does on the image-rich real crawls.

Inputs: ../shared/data/warc/servo/*.warc.gz (portal home pages with their images) and
../shared/data/warc/copycat_wayback_topic02.warc.gz (Wayback captures of hotel pages).

Three `pagetwin dedup` runs over all inputs together, each a subprocess:

- ``base``: ``--algorithms exact,simhash,minhash`` (the default set);
- ``with``: ``--algorithms exact,simhash,minhash,images``;
- ``census``: ``--algorithms images --images-min-images 1 --images-max-words-per-image 1e12``, so
  every page with at least one main-content image stores its image features; from them the
  report counts, per input file, the pages with images, the pages image-dominant under the
  default rule (ImageSettings: at least min_images images and fewer than max_words_per_image
  main words per image), and how many of their images have a perceptual hash (the crawl held
  the bytes).

The cluster diff: every cluster of ``with`` that is not inside one cluster of ``base`` is a merge
the images algorithm made (adding an algorithm only adds edges); clusters of ``base`` split in
``with`` would show the anti-chaining guard reacting. Examples come from ``with``'s pairs.jsonl:
edges carrying images evidence, with the shared and differing images.

Usage: python -m bench.images_report [--workers 2] [--examples 8]
Writes bench/out/images/report.json and prints a Markdown section for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
WARC_DIR = REPO_ROOT.parent / "shared" / "data" / "warc"
OUT_DIR = REPO_ROOT / "bench" / "out" / "images"
BASE = "exact,simhash,minhash"


def inputs() -> list[Path]:
    files = sorted((WARC_DIR / "servo").glob("*.warc.gz")) + [WARC_DIR / "copycat_wayback_topic02.warc.gz"]
    return [f for f in files if f.exists()]


def run_dedup(name: str, files: list[Path], algorithms: str, workers: int, extra: list[str] | None = None) -> tuple[Path, float]:
    out = OUT_DIR / name
    if out.exists():
        for p in out.iterdir():
            p.unlink()
    cmd = [sys.executable, "-m", "pagetwin.cli", "dedup", *map(str, files), "--out", str(out),
           "--algorithms", algorithms, "--workers", str(workers), *(extra or [])]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{name}: pagetwin dedup failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return out, elapsed


def read_clusters(out: Path) -> dict[str, dict]:
    rows = {}
    for line in (out / "clusters.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rows[r["id"]] = r
    return rows


def census(out: Path) -> dict:
    """Per input file: pages, pages with images, image-dominant pages (default rule), phash coverage."""
    from pagetwin.config import ImageSettings
    from pagetwin.fingerprints.images import is_image_dominant

    default = ImageSettings()
    db = sqlite3.connect(out / "index.sqlite")
    per_source: dict[str, Counter] = defaultdict(Counter)
    dominant_examples = []
    for source, kind, error in db.execute("SELECT source, kind, error FROM pages"):
        if kind == "response" and not error:
            per_source[Path(source).name]["pages"] += 1
    rows = db.execute(
        "SELECT p.source, p.url, f.data FROM features f JOIN pages p ON p.pid = f.pid WHERE f.algo = 'images'"
    )
    for source, url, data in rows:
        feats = json.loads(data)
        c = per_source[Path(source).name]
        n_img, words = feats["n_img"], feats["words"]
        hashed = sum(1 for _u, ph in feats["img"] if ph is not None)
        c["with_images"] += 1
        c["images"] += n_img
        c["images_hashed"] += hashed
        if is_image_dominant(n_img, words, default):
            c["image_dominant"] += 1
            c["dominant_images"] += n_img
            c["dominant_images_hashed"] += hashed
            dominant_examples.append({"source": Path(source).name, "url": url, "images": n_img, "words": words, "hashed": hashed})
    hashes = db.execute("SELECT data FROM models WHERE name = 'image_hashes'").fetchone()
    db.close()
    return {
        "per_source": {k: dict(v) for k, v in sorted(per_source.items())},
        "image_hashes": len(json.loads(hashes[0])) if hashes else 0,
        "dominant": dominant_examples,
    }


def diff_clusters(base: dict[str, dict], with_: dict[str, dict]) -> dict:
    def groups(rows: dict[str, dict]) -> dict[str, set[str]]:
        g: dict[str, set[str]] = defaultdict(set)
        for pid, r in rows.items():
            g[r["cluster"]].add(pid)
        return g

    gb, gw = groups(base), groups(with_)
    base_of = {pid: r["cluster"] for pid, r in base.items()}
    with_of = {pid: r["cluster"] for pid, r in with_.items()}
    merges = []
    for cid, members in gw.items():
        origins = {base_of.get(p) for p in members}
        if len(origins) > 1:
            merges.append({"members": sorted(with_[p]["url"] for p in members), "from_base_clusters": len(origins)})
    splits = []
    for cid, members in gb.items():
        if len({with_of.get(p) for p in members}) > 1:
            splits.append(sorted(base[p]["url"] for p in members))
    moved = sum(1 for pid in with_ if len(gw[with_of[pid]]) != len(gb[base_of.get(pid)]) if pid in base_of)
    return {
        "pages": len(with_),
        "clusters_base": len(gb),
        "clusters_with": len(gw),
        "merges": merges,
        "splits": splits,
        "pages_in_changed_clusters": moved,
    }


def image_edges(out: Path, limit: int) -> tuple[list[dict], Counter]:
    examples, counts = [], Counter()
    for line in (out / "pairs.jsonl").read_text(encoding="utf-8").splitlines():
        pair = json.loads(line)
        algos = {e["algorithm"] for e in pair["evidence"]}
        if "images" not in algos:
            continue
        only = algos == {"images"}
        counts["images_only" if only else "images_and_text"] += 1
        ev = next(e for e in pair["evidence"] if e["algorithm"] == "images")
        if len(examples) < limit:
            examples.append({
                "url_a": pair["url_a"], "url_b": pair["url_b"], "only_images": only, "score": ev["score"],
                "n_shared": ev.get("n_shared"), "n_only_a": ev.get("n_only_a"), "n_only_b": ev.get("n_only_b"),
                "phash_matches": ev.get("phash_matches"), "shared": ev.get("shared", [])[:3],
                "only_a": ev.get("only_a", [])[:2], "only_b": ev.get("only_b", [])[:2], "text_jaccard": ev.get("text_jaccard"),
            })  # fmt: skip
    return examples, counts


def markdown(report: dict) -> str:
    c = report["census"]
    lines = ["## Images", ""]
    lines.append(
        "Measured with `python -m bench.images_report` (bench/images_report.py) on "
        "`../shared/data/warc/servo/*.warc.gz` and `copycat_wayback_topic02.warc.gz`, all files in one run. "
        "Image-dominant rule (defaults): at least 3 main-content images (after template removal, "
        "tracking pixels / spacers / icons skipped) and fewer than 30 main words per image."
    )
    lines += ["", "| file | HTML pages | with main-content images | image-dominant | their images | with phash |", "|---|---:|---:|---:|---:|---:|"]
    tot = Counter()
    for src, v in c["per_source"].items():
        row = [v.get("pages", 0), v.get("with_images", 0), v.get("image_dominant", 0), v.get("dominant_images", 0), v.get("dominant_images_hashed", 0)]
        tot.update(dict(zip(["a", "b", "c", "d", "e"], row)))
        lines.append(f"| {src} | " + " | ".join(map(str, row)) + " |")
    lines.append(f"| **total** | {tot['a']} | {tot['b']} | {tot['c']} | {tot['d']} | {tot['e']} |")
    lines += ["", f"Image records hashed in pass 1 (normalised URL -> 64-bit DCT pHash): {c['image_hashes']}."]
    d = report["diff"]
    lines += [
        "",
        f"Clusters without images (`--algorithms {BASE}`): {d['clusters_base']} for {d['pages']} pages; "
        f"with `{BASE},images`: {d['clusters_with']}. Merges made by images: {len(d['merges'])}; "
        f"base clusters split: {len(d['splits'])}. Image edges: {dict(report['edge_counts'])}. "
        f"Run times: {', '.join(f'{k} {v:.1f} s' for k, v in report['seconds'].items())}.",
    ]
    if d["merges"]:
        lines += ["", "Merges (members of each new cluster):", ""]
        for m in d["merges"][:10]:
            lines.append("- " + " <-> ".join(m["members"][:4]) + (" ..." if len(m["members"]) > 4 else ""))
    if report["examples"]:
        lines += ["", "Image evidence of edges (with run):", ""]
        for e in report["examples"]:
            lines.append(
                f"- {e['url_a']} ~ {e['url_b']}: score {e['score']:.2f}, shared {e['n_shared']} "
                f"({e['phash_matches']} by phash), only_a {e['n_only_a']}, only_b {e['n_only_b']}"
                + (", images alone" if e["only_images"] else ", text agrees too")
                + (f"; e.g. shared {e['shared'][0]}" if e["shared"] else "")
            )
    dom = report["census"]["dominant"]
    if dom:
        lines += ["", "Image-dominant pages (examples):", ""]
        for x in dom[:8]:
            lines.append(f"- {x['source']}: {x['url']} - {x['images']} images ({x['hashed']} hashed), {x['words']} words")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--examples", type=int, default=8)
    args = ap.parse_args(argv)
    files = inputs()
    if not files:
        print(f"no input: {WARC_DIR} is missing", file=sys.stderr)
        return 1
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    seconds = {}
    base_out, seconds["base"] = run_dedup("base", files, BASE, args.workers)
    with_out, seconds["with"] = run_dedup("with", files, BASE + ",images", args.workers)
    census_out, seconds["census"] = run_dedup(
        "census", files, "images", args.workers, ["--images-min-images", "1", "--images-max-words-per-image", "1e12"]
    )
    examples, counts = image_edges(with_out, args.examples)
    report = {
        "inputs": [f.name for f in files],
        "seconds": seconds,
        "census": census(census_out),
        "diff": diff_clusters(read_clusters(base_out), read_clusters(with_out)),
        "edge_counts": counts,
        "examples": examples,
    }
    (OUT_DIR / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
