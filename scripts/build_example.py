#!/usr/bin/env python3
"""Rebuild examples/debian-docs.warc.gz, the example crawl that `make demo` deduplicates.

Two "crawls" of the LLVM documentation site, made from real pages of Debian's llvm-15-doc and
llvm-16-doc packages (fetched with `apt-get download`, unpacked with `dpkg -x`):

- crawl 1 (2023-03-14): the 15.0.6 docs under https://releases.llvm.org/15.0.6/docs/...
- crawl 2 (2023-10-20): the 16.0.6 docs under https://releases.llvm.org/16.0.6/docs/...,
  some of them also under the https://llvm.org/docs/... alias (byte-identical: exact copies),
  and a few 15.0.6 pages fetched again with an unchanged body, stored as `revisit` records
  (identical-payload-digest profile) that refer to crawl 1's responses.

The same page in the two versions is usually a near duplicate (edited text) or has the same main
text with a different "Last updated" footer; pages found in one version only stand alone; one
stylesheet response shows a non-HTML record being skipped. The output is deterministic: the same
packages give a byte-identical file.

Usage: python scripts/build_example.py [--out examples/debian-docs.warc.gz] [--pairs 75]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.debian import DataMissing, ensure_debian_docs, html_files  # noqa: E402
from bench.warcout import CrawlWriter  # noqa: E402

OLD, NEW = "llvm-15-doc", "llvm-16-doc"
OLD_BASE = "https://releases.llvm.org/15.0.6/docs/"
NEW_BASE = "https://releases.llvm.org/16.0.6/docs/"
ALIAS_BASE = "https://llvm.org/docs/"
CRAWL1 = datetime(2023, 3, 14, 10, 0, 0, tzinfo=timezone.utc)
CRAWL2 = datetime(2023, 10, 20, 9, 0, 0, tzinfo=timezone.utc)
MAX_PAGE_BYTES = 60_000  # keeps the example small (the file stays well under 2 MB)
SKIP = {"genindex.html", "search.html"}  # generated index pages, not documents


def warc_date(start: datetime, seconds: int) -> str:
    return (start + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def eligible(pages: dict[str, Path]) -> dict[str, Path]:
    """Top-level and CommandGuide pages of modest size (the AMDGPU folder is ~800 stub pages)."""
    return {
        rel: path
        for rel, path in pages.items()
        if (rel.count("/") == 0 or rel.startswith("CommandGuide/"))
        and rel not in SKIP
        and path.stat().st_size <= MAX_PAGE_BYTES
    }


def spread(items: list[str], count: int) -> list[str]:
    """`count` items evenly spread over a sorted list (deterministic)."""
    if count >= len(items):
        return list(items)
    step = len(items) / count
    return [items[int(i * step)] for i in range(count)]


def build(out: Path, pairs: int, exact_copies: int, revisits: int, singles: int) -> dict:
    roots = ensure_debian_docs([OLD, NEW])
    old_pages = eligible(html_files(roots[OLD]))
    new_pages = eligible(html_files(roots[NEW]))
    shared = spread(sorted(set(old_pages) & set(new_pages)), pairs)
    old_only = spread(sorted(set(old_pages) - set(new_pages)), singles)
    new_only = spread(sorted(set(new_pages) - set(old_pages)), singles)
    aliased = set(spread(shared, exact_copies))
    revisited = spread([p for p in shared if p not in aliased][1:], revisits)

    counts = {"responses": 0, "revisits": 0, "html_pages": 0, "exact_copies": 0}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as stream:
        writer = CrawlWriter(stream)
        # Crawl 1: the 15.0.6 documentation.
        first_fetch: dict[str, tuple[str, str, str]] = {}  # rel -> (url, date, digest)
        second = 0
        for rel in sorted(set(shared) | set(old_only)):
            url, date = OLD_BASE + rel, warc_date(CRAWL1, second)
            digest = writer.response(url, date, old_pages[rel].read_bytes())
            first_fetch[rel] = (url, date, digest)
            counts["responses"] += 1
            counts["html_pages"] += 1
            second += 7
        # A stylesheet: a real non-HTML response that must be skipped, not made a page.
        css = roots[OLD] / "_static" / "llvm-theme.css"
        if css.is_file():
            writer.response(OLD_BASE + "_static/llvm-theme.css", warc_date(CRAWL1, second),
                            css.read_bytes(), content_type="text/css")
            counts["responses"] += 1

        # Crawl 2: the 16.0.6 documentation, the llvm.org/docs alias, and revisits.
        second = 0
        for rel in sorted(set(shared) | set(new_only)):
            body = new_pages[rel].read_bytes()
            writer.response(NEW_BASE + rel, warc_date(CRAWL2, second), body)
            counts["responses"] += 1
            counts["html_pages"] += 1
            second += 7
            if rel in aliased:
                writer.response(ALIAS_BASE + rel, warc_date(CRAWL2, second), body)
                counts["responses"] += 1
                counts["html_pages"] += 1
                counts["exact_copies"] += 1
                second += 7
        for rel in revisited:
            url, date, digest = first_fetch[rel]
            writer.revisit(url, warc_date(CRAWL2, second), digest, url, date)
            counts["revisits"] += 1
            second += 7
    tmp.replace(out)
    counts["version_pairs"] = len(shared)
    counts["single_version_pages"] = len(old_only) + len(new_only)
    counts["bytes"] = out.stat().st_size
    return counts


def copy_licence_files(dest: Path) -> None:
    """The package's copyright notice and the Apache-2.0 text it points to go beside the WARC."""
    roots = ensure_debian_docs([NEW])
    copyright_file = roots[NEW].parent / "copyright"
    if copyright_file.is_file():
        shutil.copyfile(copyright_file, dest / "LLVM-DEBIAN-COPYRIGHT.txt")
    apache = Path("/usr/share/common-licenses/Apache-2.0")
    if apache.is_file():
        shutil.copyfile(apache, dest / "LICENSE-Apache-2.0.txt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "examples" / "debian-docs.warc.gz")
    parser.add_argument("--pairs", type=int, default=75, help="page paths taken in both versions")
    parser.add_argument("--exact-copies", type=int, default=6, help="pages also under llvm.org/docs/")
    parser.add_argument("--revisits", type=int, default=5, help="unchanged re-fetches of crawl 1 pages")
    parser.add_argument("--singles", type=int, default=4, help="pages of one version only, per version")
    args = parser.parse_args(argv)
    try:
        counts = build(args.out, args.pairs, args.exact_copies, args.revisits, args.singles)
        copy_licence_files(args.out.parent)
    except DataMissing as exc:
        print(f"build_example: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
