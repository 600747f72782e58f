"""Size and build time of ``pagetwin report`` on finished dedup runs, beside the run's own time.

    python -m bench.report_size OUT_DIR [OUT_DIR ...] [--rounds 3] [--screenshots DIR]

For each --out folder of ``pagetwin dedup``: the pages of the run, its dedup time (summary.json
seconds.total), the report's size in bytes and its build time (the median of ``--rounds``
builds, each written to a temporary file), and the share of the report taken by each section.
With ``--synthetic N --synthetic-dir DIR``, a run of N pages is first made up in DIR (an index
and summary.json written directly, no crawl: clusters of power-law sizes, hosts of power-law
sizes, a star of verified pairs per cluster, no stored text and no inputs to read again) to
measure the report's size and build time on a run larger than the machine can dedup in time.
With ``--screenshots DIR``, the first folder's report is also shot in headless Chromium (the
overview and the first pair, 1000 x 1300 pixels) into DIR/report-overview.png and
DIR/report-pair.png. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pagetwin.outputs.report import gather, render, write_report


def measure(out_dir: Path, rounds: int) -> dict:
    summary = json.loads((out_dir / "summary.json").read_text())
    times, size = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            written = write_report(out_dir, Path(tmp) / "report.html")
            times.append(written["seconds"])
            size = written["bytes"]
    page = render(gather(out_dir))
    sections = {m.group(1): len(m.group(0).encode()) for m in re.finditer(r'<section id="(\w+)".*?</section>', page, re.S)}
    return {
        "dir": str(out_dir),
        "pages": summary["pages"]["read"],
        "clusters": summary["clusters"],
        "dedup_s": summary["seconds"]["total"],
        "bytes": size,
        "report_s": statistics.median(times),
        "sections": sections,
    }


def synthetic_run(out_dir: Path, pages: int, seed: int = 0) -> Path:
    """A made-up finished run of ``pages`` pages in ``out_dir`` (see the module docstring)."""
    import random

    from pagetwin.cluster import cluster_id
    from pagetwin.config import Settings
    from pagetwin.index.sqlite import Index
    from pagetwin.outputs.jsonl import cluster_stats

    rng = random.Random(seed)
    out_dir.mkdir(parents=True, exist_ok=True)
    index = Index(out_dir / "index.sqlite", Settings().to_dict())
    evidence = json.dumps([{"algorithm": "minhash", "score": 0.9, "passed": True, "jaccard": 0.9}])
    rows, clusters, edges, pid = [], [], [], 0
    while pid < pages:
        size = 1 if rng.random() < 0.5 else min(int(rng.paretovariate(1.1)) + 1, 5000, pages - pid)
        host = f"site{int(rng.paretovariate(0.8)) % 50_000}.example"
        first = pid + 1
        for i in range(size):
            pid += 1
            url = f"https://{host if i == 0 or rng.random() < 0.7 else f'mirror{pid % 977}.example'}/page/{pid}"
            rows.append((pid, f"<urn:uuid:{pid:032x}>", url, url.split("/")[2], "/gone/crawl.warc.gz", "response",
                         f"2024-01-{1 + pid % 28:02d}", 1000, f"Page {pid} title", 1))  # fmt: skip
            clusters.append((pid, cluster_id(f"<urn:uuid:{first:032x}>"), int(i == 0)))
            if i:
                edges.append((first, pid, "duplicate", evidence))
    db = index.db
    db.execute("BEGIN")
    db.executemany("INSERT INTO pages (pid, id, url, host, source, kind, crawl_date, text_len, title, seen_run) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    db.executemany("INSERT INTO clusters VALUES (?, ?, ?)", clusters)
    db.executemany("INSERT INTO edges (a, b, kind, evidence, score) VALUES (?, ?, ?, ?, 0.9)", edges)
    db.execute("COMMIT")
    stats = cluster_stats(index)
    n_clusters = sum(stats["cluster_sizes"].values())
    summary = {"version": "synthetic", "inputs": ["(synthetic)"], "input_errors": [], "input_status": "ok",
               "records": {"records_total": pages, "skipped": {}}, "pages": {"read": pages, "in_output": pages},
               "clusters": n_clusters, "duplicates": pages - n_clusters, "pairs": len(edges),
               "edges_by_kind": {"duplicate": len(edges)}, "seconds": {"total": 0.0}, **stats}  # fmt: skip
    (out_dir / "summary.json").write_text(json.dumps(summary))
    index.db.close()
    return out_dir


def screenshots(report: Path, into: Path) -> list[Path]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium not installed (apt-get install chromium)")
    into.mkdir(parents=True, exist_ok=True)
    shots = []
    with tempfile.TemporaryDirectory() as profile:
        for anchor, name in (("overview", "report-overview.png"), ("pair-0", "report-pair.png")):
            shot = into / name
            cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={profile}",
                   "--window-size=1000,1300", f"--screenshot={shot}", f"{report.resolve().as_uri()}#{anchor}"]  # fmt: skip
            subprocess.run(cmd, check=True, capture_output=True, timeout=120)
            shots.append(shot)
    return shots


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path, metavar="OUT_DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--screenshots", type=Path, metavar="DIR")
    parser.add_argument("--synthetic", type=int, metavar="N", help="first make up a run of N pages in --synthetic-dir")
    parser.add_argument("--synthetic-dir", type=Path, metavar="DIR")
    args = parser.parse_args(argv)
    if args.synthetic:
        if args.synthetic_dir is None or (args.synthetic_dir / "index.sqlite").exists():
            parser.error("--synthetic N needs a new --synthetic-dir DIR")
        args.dirs.append(synthetic_run(args.synthetic_dir, args.synthetic))
    print("| run | pages | clusters | dedup (s) | report (bytes) | report build (s) | build / dedup | largest sections (bytes) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for out_dir in args.dirs:
        m = measure(out_dir, args.rounds)
        top = ", ".join(f"{k} {v:,}" for k, v in sorted(m["sections"].items(), key=lambda kv: -kv[1])[:3])
        ratio = m["report_s"] / m["dedup_s"] if m["dedup_s"] else float("nan")  # nan: a synthetic run
        print(f"| {m['dir']} | {m['pages']:,} | {m['clusters']:,} | {m['dedup_s']:.1f} | {m['bytes']:,} | {m['report_s']:.2f} | {ratio:.3f} | {top} |")
    if args.screenshots:
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(write_report(args.dirs[0], Path(tmp) / "report.html")["path"])
            for shot in screenshots(report, args.screenshots):
                print(f"screenshot: {shot} ({shot.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
