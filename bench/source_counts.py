"""Per-file accounting of the source readers over real crawls: records seen, pages, revisits,
images, skipped by reason, cut pages, file errors, and read time.

    .venv/bin/python bench/source_counts.py [ROOT]   # default ../shared/data/warc

Prints a Markdown table (the "Sources" section of bench/RESULTS.md) and checks the accounting
invariant records = pages + images + skipped for every file.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pagetwin.config import InputSettings
from pagetwin.sources import SourceStats, iter_pages


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "warc")
    files = sorted(p for p in root.glob("**/*") if p.name.endswith((".warc.gz", ".arc.gz", ".warc", ".arc")))
    if not files:
        print(f"no WARC/ARC files under {root}", file=sys.stderr)
        return 1
    total = SourceStats()
    rows = []
    started = time.perf_counter()
    for path in files:
        stats = SourceStats()
        t = time.perf_counter()
        for _ in iter_pages([str(path)], InputSettings(), stats, want_images=True):
            pass
        seconds = time.perf_counter() - t
        assert stats.consistent(), (path, stats.to_dict())
        total.merge(stats)
        rows.append((str(path.relative_to(root)), stats, seconds))
    elapsed = time.perf_counter() - started
    print("| file | records | pages | of which revisits | images | skipped (by reason) | cut | sniffed | file errors | ms |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for name, s, seconds in rows + [("**all**", total, elapsed)]:
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(s.skipped.items(), key=lambda kv: -kv[1]))
        print(
            f"| {name} | {s.records_total} | {s.pages_read} | {s.revisits} | {s.images} | {reasons} | {s.cut} | "
            f"{s.sniffed} | {len(s.errors)} | {seconds * 1000:.0f} |"
        )
    print()
    print(f"invariant records = pages + images + skipped holds for all {len(files)} files")
    for err in total.errors:
        print(f"- {err}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
