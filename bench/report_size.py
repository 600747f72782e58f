"""Size and build time of ``pagetwin report`` on finished dedup runs, beside the run's own time.

    python -m bench.report_size OUT_DIR [OUT_DIR ...] [--rounds 3] [--screenshots DIR]

For each --out folder of ``pagetwin dedup``: the pages of the run, its dedup time (summary.json
seconds.total), the report's size in bytes and its build time (the median of ``--rounds``
builds, each written to a temporary file), and the share of the report taken by each section.
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
    parser.add_argument("dirs", nargs="+", type=Path, metavar="OUT_DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--screenshots", type=Path, metavar="DIR")
    args = parser.parse_args(argv)
    print("| run | pages | clusters | dedup (s) | report (bytes) | report build (s) | build / dedup | largest sections (bytes) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for out_dir in args.dirs:
        m = measure(out_dir, args.rounds)
        top = ", ".join(f"{k} {v:,}" for k, v in sorted(m["sections"].items(), key=lambda kv: -kv[1])[:3])
        ratio = m["report_s"] / m["dedup_s"] if m["dedup_s"] else float("nan")
        print(f"| {m['dir']} | {m['pages']:,} | {m['clusters']:,} | {m['dedup_s']:.1f} | {m['bytes']:,} | {m['report_s']:.2f} | {ratio:.3f} | {top} |")
    if args.screenshots:
        with tempfile.TemporaryDirectory() as tmp:
            report = Path(write_report(args.dirs[0], Path(tmp) / "report.html")["path"])
            for shot in screenshots(report, args.screenshots):
                print(f"screenshot: {shot} ({shot.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
