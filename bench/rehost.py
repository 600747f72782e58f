"""A crawl of many hosts from a bench crawl: every record of a WARC written again under a URL
of one of ``--hosts`` hosts (``https://h<i>.example/<original host><path>``, i by xxhash of
the original URL: seeded, uniform, a page's copies on other hosts; each host its own registered
domain, so its own site for ``extract.site_key``), payloads unchanged, and
its ``.truth.jsonl`` with the URLs rewritten the same way (the known clusters unchanged).

What it is for: pass 1's site templates grow with sites x ``extract.max_hashes_per_site``, so a
crawl of a few real sites (bench.corpus: LLVM, Python, PostgreSQL docs...) does not show what a
Common Crawl style crawl of millions of hosts does to the Spark driver (issue 18,
bench/spark_scale.py --corpus on the output).

Usage: python -m bench.rehost IN.warc.gz OUT.warc.gz --hosts 5000 [--seed 0]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from urllib.parse import urlsplit

import xxhash


def rehosted(url: str, hosts: int, seed: int = 0) -> str:
    """``url`` under one of ``hosts`` hosts (the module docstring)."""
    parts = urlsplit(url)
    i = xxhash.xxh64_intdigest(url.encode("utf-8", "surrogatepass"), seed=seed) % hosts
    rest = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"https://h{i}.example/{parts.netloc or 'local'}{rest}"  # not h<i>.x.example: one registered domain


def rehost(src: Path, out: Path, hosts: int, seed: int = 0) -> dict[str, int]:
    """Write ``out`` (and its truth, when ``src`` has one); counts of records and hosts."""
    from warcio.archiveiterator import ArchiveIterator
    from warcio.warcwriter import WARCWriter

    used: set[str] = set()
    records = 0
    with open(src, "rb") as fh, open(out, "wb") as dest:
        writer = WARCWriter(dest, gzip=True)
        for record in ArchiveIterator(fh):
            for name in ("WARC-Target-URI", "WARC-Refers-To-Target-URI"):
                url = record.rec_headers.get_header(name)
                if url:
                    new = rehosted(url, hosts, seed)
                    record.rec_headers.replace_header(name, new)
                    if name == "WARC-Target-URI":
                        used.add(urlsplit(new).netloc)
            writer.write_record(record)
            records += 1
    truth = Path(f"{src}.truth.jsonl")
    if truth.exists():
        with open(truth) as fh, open(f"{out}.truth.jsonl", "w") as dest:
            for line in fh:
                row = json.loads(line)
                row["url"] = rehosted(row["url"], hosts, seed)
                dest.write(json.dumps(row) + "\n")
    return {"records": records, "hosts": len(used)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.hosts < 1:
        parser.error("--hosts must be at least 1")
    print(json.dumps(rehost(args.src, args.out, args.hosts, args.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
