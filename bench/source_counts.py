"""Per-file accounting of the source readers over real crawls: records seen, pages, revisits,
images, skipped by reason, cut pages, file errors, and read time.

    .venv/bin/python bench/source_counts.py [ROOT]   # default ../shared/data/warc
    .venv/bin/python bench/source_counts.py --speed 20000 [ROOT]

Prints a Markdown table (the "Sources" section of bench/RESULTS.md) and checks the accounting
invariant records = pages + images + skipped for every file. ``--speed N`` instead writes a WARC
of N response records (the HTML bodies of ROOT/copycat_wayback_topic02.warc.gz, repeated, with
pagetwin's WarcWriter) into a temporary folder and measures how fast iter_pages reads it back.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pagetwin.config import InputSettings
from pagetwin.sources import SourceStats, iter_pages


def speed(root: Path, n: int) -> int:
    import resource
    import tempfile

    from pagetwin.outputs.warc import WarcWriter

    bodies = [(p.url, p.body) for p in iter_pages([str(root / "copycat_wayback_topic02.warc.gz")], InputSettings(), SourceStats())]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "speed.warc.gz"
        t = time.perf_counter()
        with WarcWriter(path) as w:
            for i in range(n):
                url, body = bodies[i % len(bodies)]
                w.write_response(f"{url}?copy={i}", body, date="2024-01-01T00:00:00Z", record_id=f"<urn:uuid:{i:032x}>")
        written = time.perf_counter() - t
        size = path.stat().st_size
        stats = SourceStats()
        t = time.perf_counter()
        html_bytes = 0
        for page in iter_pages([str(path)], InputSettings(), stats):
            html_bytes += len(page.body)
        read = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"wrote {n} records ({size / 1e6:.0f} MB gzip, {html_bytes / 1e6:.0f} MB HTML) in {written:.1f} s ({n / written:.0f} records/s)")
    print(f"read {stats.pages_read} pages in {read:.2f} s: {stats.pages_read / read:.0f} pages/s, {html_bytes / read / 1e6:.0f} MB/s of HTML")
    print(f"peak RSS of the process: {rss:.0f} MB")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--speed"]:
        n = int(argv[1])
        root = Path(argv[2] if len(argv) > 2 else Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "warc")
        return speed(root, n)
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
