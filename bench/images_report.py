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


def pairwise_verdicts(out: Path) -> dict:
    """Every pair of image-dominant pages (features stored by the ``with`` run) verified by the
    images algorithm: how many pass, how many the text vetoes, how many stay under threshold.
    Shows what the algorithm would say beyond the candidate pairs its keys proposed."""
    from pagetwin.config import ImageSettings
    from pagetwin.fingerprints.images import Images

    algo = Images(ImageSettings())
    db = sqlite3.connect(out / "index.sqlite")
    rows = [(url, json.loads(data)) for url, data in db.execute(
        "SELECT p.url, f.data FROM features f JOIN pages p ON p.pid = f.pid WHERE f.algo = 'images'")]  # fmt: skip
    db.close()
    verdicts: Counter = Counter()
    examples: dict[str, list] = defaultdict(list)
    for i, (url_a, fa) in enumerate(rows):
        for url_b, fb in rows[i + 1 :]:
            ev = algo.verify(fa, fb)
            if ev.passed:
                kind = "passed"
            elif "vetoed" in ev.detail:
                kind = "vetoed: " + ev.detail["vetoed"]
            elif ev.score > 0:
                kind = "some shared, under threshold"
            else:
                kind = "nothing shared"
            verdicts[kind] += 1
            if kind != "nothing shared" and len(examples[kind]) < 3:
                examples[kind].append({"url_a": url_a, "url_b": url_b, "score": round(ev.score, 3),
                                       "n_shared": ev.detail["n_shared"], "text_jaccard": ev.detail.get("text_jaccard")})  # fmt: skip
    return {"pages": len(rows), "pairs": sum(verdicts.values()), "verdicts": dict(verdicts), "examples": dict(examples)}


def raw_census(files: list[Path]) -> dict:
    """Per input file: pages that would be image-dominant if every image of the page counted
    (all <img> outside scripts/hidden chrome, link blocks included), with the same main-text
    word count: shows how much the extraction's main-region choice decides."""
    from pagetwin.config import ImageSettings, Settings
    from pagetwin.fingerprints.images import is_image_dominant
    from pagetwin.html.blocks import walk
    from pagetwin.html.images import image_refs
    from pagetwin.html.noise import extract
    from pagetwin.html.parse import decode_html, parse_html
    from pagetwin.sources import SourceStats, iter_pages
    from pagetwin.text.analyze import TextAnalyzer

    settings = Settings()
    analyzer = TextAnalyzer(settings.text)
    out: dict[str, Counter] = defaultdict(Counter)
    for f in files:
        for page in iter_pages([str(f)], settings.input, SourceStats()):
            if page.kind != "response":
                continue
            html, _, _ = decode_html(page.body, page.http_charset)
            blocks = walk(parse_html(html))
            refs = image_refs([raw for _, raw in blocks.images], page.url)
            words = len(analyzer.analyze(extract(parse_html(html), None, settings.extract).text).tokens)
            c = out[f.name]
            c["pages"] += 1
            c["all_images"] += len(refs)
            if is_image_dominant(len(refs), words, ImageSettings()):
                c["dominant_if_all_images"] += 1
    return {k: dict(v) for k, v in sorted(out.items())}


def phash_on_crawl_images(files: list[Path], k: int) -> dict:
    """The perceptual hash on the real image records of the crawls: robustness (each image of at
    least 64 px a side resized to 50 % and re-encoded as JPEG quality 60, and as PNG at 75 %:
    Hamming distance to the original's hash) and distinctness (pairs of different images - different bytes - whose
    hashes are within k bits)."""
    import io
    from itertools import combinations

    import xxhash
    from PIL import Image

    from pagetwin.config import InputSettings
    from pagetwin.html.images import hamming, image_phash
    from pagetwin.sources import SourceStats, iter_pages

    originals: dict[str, tuple[str, int, bytes]] = {}  # body digest -> (url, phash, body)
    records = 0
    for f in files:
        for page in iter_pages([str(f)], InputSettings(), SourceStats(), want_images=True):
            if page.kind != "image":
                continue
            records += 1
            ph = image_phash(page.body)
            if ph is not None:
                originals.setdefault(xxhash.xxh3_64_hexdigest(page.body), (page.url, ph, page.body))
    distances: Counter = Counter()
    for url, ph, body in originals.values():
        try:
            with Image.open(io.BytesIO(body)) as im:
                if min(im.size) < 64:  # icons and thumbnails: halving them leaves too little
                    continue
                # flatten transparency onto white, as image_phash does, before dropping alpha
                rgba = im.convert("RGBA")
                im = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                im.alpha_composite(rgba)
                im = im.convert("RGB")
                variants = []
                for scale, fmt, kw in ((0.5, "JPEG", {"quality": 60}), (0.75, "PNG", {})):
                    small = im.resize((max(16, int(im.width * scale)), max(16, int(im.height * scale))), Image.Resampling.BILINEAR)
                    buf = io.BytesIO()
                    small.save(buf, fmt, **kw)
                    variants.append(buf.getvalue())
        except Exception:  # noqa: BLE001 - an image Pillow hashed but cannot re-encode: skip it
            continue
        for v in variants:
            h = image_phash(v)
            distances["none" if h is None else min(hamming(ph, h), 9)] += 1
    items = list(originals.values())
    close = []
    for (ua, ha, _), (ub, hb, _) in combinations(items, 2):
        if hamming(ha, hb) <= k:
            close.append((hamming(ha, hb), ua, ub))
    close.sort()
    n_pairs = len(items) * (len(items) - 1) // 2
    return {
        "image_records": records,
        "hashed_distinct": len(items),
        "variant_distance": {str(d): n for d, n in sorted(distances.items(), key=lambda x: str(x[0]))},
        "distinct_pairs": n_pairs,
        "distinct_pairs_within_k": len(close),
        "close_examples": [{"d": d, "a": a, "b": b} for d, a, b in close[:6]],
    }


_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title} | Crawl Shop</title></head>
<body><header><a href="/"><img src="/static/logo.png" alt="Crawl Shop" width="160" height="48"></a>
<nav><a href="/">Home</a> <a href="/new">New</a> <a href="/sale">Sale</a> <a href="/help">Help</a></nav></header>
<main><h1>{title}</h1><div class="gallery">{figures}</div></main>
<footer><p>Copyright 2024 Crawl Shop. All rights reserved. Prices include taxes.</p></footer></body></html>"""


def crawl_image_pool(files: list[Path], min_side: int = 64) -> list[tuple[str, bytes]]:
    """Distinct decodable images of at least min_side px a side from the crawls' image records."""
    import io

    import xxhash
    from PIL import Image

    from pagetwin.config import InputSettings
    from pagetwin.html.images import image_phash
    from pagetwin.sources import SourceStats, iter_pages

    seen, pool = set(), []
    for f in files:
        for page in iter_pages([str(f)], InputSettings(), SourceStats(), want_images=True):
            if page.kind != "image" or image_phash(page.body) is None:
                continue
            digest = xxhash.xxh3_64_hexdigest(page.body)
            if digest in seen:
                continue
            try:
                with Image.open(io.BytesIO(page.body)) as im:
                    if min(im.size) < min_side:
                        continue
            except Exception:  # noqa: BLE001
                continue
            seen.add(digest)
            pool.append((page.url, page.body))
    return pool


def planted_galleries(pool: list[tuple[str, bytes]], workers: int, galleries: int = 30, per_page: int = 6,
                      copies: int = 15, seed: int = 7, unique_bytes: bool = False) -> dict:
    """Gallery pages built from the crawls' real images (one site, shared template, captions of
    random words), and for `copies` of them a copy under another URL whose images are other
    URLs holding re-encoded renditions (60 % size, JPEG quality 70; with ``unique_bytes`` quality
    60 + gallery number, so no two image records are byte-identical) and whose captions are other
    words. The other galleries are siblings of the copied ones: half of their images are the same
    photographs (image Jaccard 1/3), the rest other ones. Deduplicated with `exact,images`, with and without the image records in the WARC.
    Recall = copies clustered with their original; false merges = clusters holding two
    different originals."""
    import io
    import random
    import tempfile

    from PIL import Image
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(seed)
    words = ("red blue green small large cotton leather wooden steel classic modern travel kitchen garden "
             "summer winter gift set pack new sale light dark soft warm").split()  # fmt: skip

    def caption() -> str:
        return " ".join(rng.choice(words) for _ in range(8)).capitalize()

    def reencode(body: bytes, quality: int) -> bytes:
        with Image.open(io.BytesIO(body)) as im:
            rgba = im.convert("RGBA")
            flat = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
            flat.alpha_composite(rgba)
            im2 = flat.convert("RGB")
            im2 = im2.resize((max(16, int(im2.width * 0.6)), max(16, int(im2.height * 0.6))), Image.Resampling.BILINEAR)
            buf = io.BytesIO()
            im2.save(buf, "JPEG", quality=quality)
            return buf.getvalue()

    site = "http://shop.test"
    pages: dict[str, str] = {}
    images: dict[str, bytes] = {}
    truth: list[tuple[str, str]] = []
    originals: list[str] = []
    chosen_by_g: list[list[int]] = []
    for g in range(galleries):
        chosen = rng.sample(range(len(pool)), per_page)
        if g >= copies:  # a sibling of gallery g - copies: half its images are the same photographs
            half = per_page // 2
            older = chosen_by_g[g - copies]
            chosen = older[:half] + [i for i in chosen if i not in older][: per_page - half]
        chosen_by_g.append(chosen)
        figs = []
        for i in chosen:
            url = f"/img/{i}.jpg"
            images[site + url] = pool[i][1]
            figs.append(f'<figure><img src="{url}" alt=""><figcaption>{caption()}</figcaption></figure>')
        url = f"{site}/gallery/{g}"
        pages[url] = _PAGE.format(title=f"Collection {g}", figures="".join(figs))
        originals.append(url)
        if g < copies:
            figs = []
            for i in chosen:
                curl = f"/cdn/{g}/{i}-v2.jpg"
                images[site + curl] = reencode(pool[i][1], 60 + g if unique_bytes else 70)
                figs.append(f'<figure><img src="{curl}" alt=""><figcaption>{caption()}</figcaption></figure>')
            copy_url = f"{site}/collections?id={g}&view=grid"
            pages[copy_url] = _PAGE.format(title=f"Collection {g}", figures="".join(figs))
            truth.append((url, copy_url))

    def write(path: Path, with_images: bool) -> None:
        with open(path, "wb") as fh:
            w = WARCWriter(fh, gzip=True)
            recs = [(u, h.encode(), "text/html; charset=utf-8") for u, h in pages.items()]
            if with_images:
                recs += [(u, b, "image/jpeg") for u, b in images.items()]
            for u, body, ctype in recs:
                hdrs = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
                w.write_record(w.create_warc_record(u, "response", payload=io.BytesIO(body), http_headers=hdrs))

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, with_images, algos in (("exact only", True, "exact"), ("exact,images with image records", True, "exact,images"),
                                          ("exact,images without image records", False, "exact,images")):  # fmt: skip
            warc = Path(tmp) / f"{label.replace(' ', '_').replace(',', '_')}.warc.gz"
            write(warc, with_images)
            out = Path(tmp) / (warc.stem + "_out")
            cmd = [sys.executable, "-m", "pagetwin.cli", "dedup", str(warc), "--out", str(out), "--algorithms", algos, "--workers", str(workers)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"planted galleries: dedup failed:\n{proc.stderr[-3000:]}")
            cl = {r["url"]: r["cluster"] for r in read_clusters(out).values()}
            found = sum(1 for a, b in truth if cl[a] == cl[b])
            by_cluster: dict[str, int] = Counter(cl[u] for u in originals)
            results[label] = {"copies_found": found, "copies": len(truth),
                              "false_merges": sum(n - 1 for n in by_cluster.values() if n > 1)}  # fmt: skip
    return {"pool": len(pool), "galleries": galleries, "per_page": per_page, "results": results}


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
        "Measured with `.venv/bin/python -m bench.images_report --workers 1` (bench/images_report.py) on "
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
    pw = report["pairwise"]
    lines += ["", f"All {pw['pairs']} pairs of the {pw['pages']} image-dominant pages verified by `images` "
              f"(not only the pairs its keys proposed): {pw['verdicts']}."]
    for kind, exs in pw["examples"].items():
        for e in exs[:2]:
            lines.append(f"- {kind}: {e['url_a']} ~ {e['url_b']} (image Jaccard {e['score']}, shared {e['n_shared']}"
                         + (f", text Jaccard {e['text_jaccard']}" if e["text_jaccard"] is not None else "") + ")")
    rc = report["raw_census"]
    lines += ["", "If every image of the page counted (link blocks and regions outside the main content "
              "included; same main-text word count), image-dominant pages per file: "
              + ", ".join(f"{k} {v.get('dominant_if_all_images', 0)}/{v.get('pages', 0)} ({v.get('all_images', 0)} images)" for k, v in rc.items())
              + "."]
    ph = report["phash_crawl"]
    lines += ["", f"Perceptual hash on the crawls' own image records (servo/ and ukwa/: {ph['image_records']} image "
              f"records, {ph['hashed_distinct']} distinct hashable images; the rest are pixels, icons under 16 px, "
              f"flat images, SVG or undecodable). Each of at least 64 px a side resized to 50 % as JPEG q60 and to 75 % as PNG, Hamming distance "
              f"to the original's hash (9 = 9 or more): {ph['variant_distance']}. Pairs of different images "
              f"within phash_k = 6 bits: {ph['distinct_pairs_within_k']} of {ph['distinct_pairs']}"
              + (": " + "; ".join(f"{e['d']} bits: {e['a']} ~ {e['b']}" for e in ph["close_examples"][:4]) if ph["close_examples"] else "")
              + "."]
    pl = report["planted"]
    lines += ["", f"Planted galleries of real crawl images ({pl['pool']} distinct images of at least 64 px from servo/ "
              f"and ukwa/ image records): {pl['galleries']} gallery pages of {pl['per_page']} images on one site, "
              f"15 of them copied under another URL with every image re-encoded (60 % size, JPEG q70) under "
              f"another URL and other captions, the other 15 siblings sharing half of their photographs with one "
              f"copied gallery (must stay apart); `pagetwin dedup`:", "",
              "| run | copies found | false merges of different galleries |", "|---|---:|---:|"]
    for label, r in pl["results"].items():
        lines.append(f"| {label} | {r['copies_found']}/{r['copies']} | {r['false_merges']} |")
    for label, r in report["planted_unique_bytes"]["results"].items():
        if "images" in label:
            lines.append(f"| {label}, every re-encoded record byte-unique | {r['copies_found']}/{r['copies']} | {r['false_merges']} |")
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
    pool = crawl_image_pool(sorted((WARC_DIR / "servo").glob("*.warc.gz")) + sorted((WARC_DIR / "ukwa").glob("*.warc.gz")))
    report = {
        "pairwise": pairwise_verdicts(with_out),
        "planted": planted_galleries(pool, args.workers),
        "planted_unique_bytes": planted_galleries(pool, args.workers, unique_bytes=True),
        "phash_crawl": phash_on_crawl_images(
            sorted((WARC_DIR / "servo").glob("*.warc.gz")) + sorted((WARC_DIR / "ukwa").glob("*.warc.gz")), 6
        ),
        "raw_census": raw_census(files),
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
