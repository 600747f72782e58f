"""Speed of the per-page kernels of pass 1, and their outputs against an earlier revision.

Stages, per page: ``decode_html`` (bytes to text), ``limit_depth`` (the deep-DOM guard),
``parse_html`` (the guard, then lexbor), the block walk (``html.blocks._walk``), and all of
them in a row as pass 1 runs them ("pass 1"). Each is timed with time.process_time (CPU time,
so the other load of a shared machine counts little), best of 3 runs per page, and averaged
over the pages of each set: the three extraction sets of ../shared/data and, with --warc, the
HTML pages of its WARC/ARC files.

With ``--native``: the native block walk (html/_walk.pyx, ``BlockWalker().walk``) against the
Python one (``BlockWalker(native=False)``, the reference), alternately on the same parsed page,
the walk alone and with decode and parse ("pass 1"), and their blocks compared on every page at
max depths 512 and 12.

With ``--baseline REV`` (a git revision), src/pagetwin/html/parse.py and blocks.py as they
were at REV are loaded beside the current ones; each stage runs old and new alternately on
the same page (so drift in the machine's load hits both), and every output is compared:
decode_html's (text, charset, replaced), limit_depth's at max depths 512 and 12, the tree
parse_html builds (serialised), and every list of the Blocks (tag, parent, sig, hash, text,
link, size, content, in_article, hint, images).

    .venv/bin/python bench/walk_speed.py [--native | --baseline REV] [--warc] [--limit N] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path("/work/main")
DATA = ROOT.parent / "shared" / "data"
SETS = ("cleanportaleval", "scrapinghub", "chinese_wce")
STAGES = ("decode", "limit_depth", "parse_html", "walk", "pass 1")


def load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def baseline_modules(rev: str, tmp: Path):
    """(parse, blocks) as they were at git revision ``rev``."""
    loaded = []
    for name in ("parse", "blocks"):
        source = subprocess.run(
            ["git", "show", f"{rev}:src/pagetwin/html/{name}.py"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        path = tmp / f"baseline_{name}.py"
        path.write_bytes(source)
        loaded.append(load_module(f"baseline_{name}", path))
    return tuple(loaded)


def extraction_pages(name: str, limit: int | None) -> list[tuple[str, bytes, str | None]]:
    sys.path.insert(0, str(ROOT / "bench"))
    from extraction import load_set

    return [(p["id"], p["body"], None) for p in load_set(name, DATA, limit)]


def warc_pages(limit: int | None) -> list[tuple[str, bytes, str | None]]:
    from pagetwin.config import InputSettings
    from pagetwin.html.parse import looks_like_html
    from pagetwin.model import Page
    from pagetwin.sources.base import SourceStats
    from pagetwin.sources.warc import iter_arc, iter_warc

    pages = []
    for path in sorted((DATA / "warc").rglob("*.*rc.gz")):
        read = iter_arc if path.name.endswith(".arc.gz") else iter_warc
        for i, record in enumerate(read(str(path), InputSettings(), SourceStats())):
            if isinstance(record, Page) and record.body and looks_like_html(record.body):
                pages.append((f"{path.name}/{i}", record.body, record.http_charset))
    return pages[:limit] if limit else pages


def blocks_fields(blocks) -> tuple:
    return tuple(getattr(blocks, f.name) for f in dataclasses.fields(blocks))


def decoded_input(parse, body, charset):
    """What limit_depth and parse_html get in a run: decode_html's record (a revision with
    parse.Decoded), else its text (an older one recognises its last text by identity)."""
    d = parse.decode_html(body, charset)
    return d if hasattr(parse, "Decoded") else d[0]


_WALKERS: dict = {}


def walker_of(blocks):
    """The walk as a run calls it: one BlockWalker per process when the revision has it."""
    if not hasattr(blocks, "BlockWalker"):
        return blocks._walk
    if id(blocks) not in _WALKERS:
        _WALKERS[id(blocks)] = blocks.BlockWalker().walk
    return _WALKERS[id(blocks)]


def pass1(parse, blocks, body: bytes, charset: str | None):
    tree = parse.parse_html(decoded_input(parse, body, charset), 512)
    return walker_of(blocks)(tree, 512)


def best_of(runs: int, *calls) -> list[float]:
    """Best CPU seconds of each (function, args) call, the calls alternating."""
    best = [float("inf")] * len(calls)
    for _ in range(runs):
        for i, (fn, args) in enumerate(calls):
            t0 = time.process_time()
            fn(*args)
            best[i] = min(best[i], time.process_time() - t0)
    return best


def differences(old, new, body: bytes, charset: str | None) -> list[str]:
    """The outputs of ``old`` and ``new`` (each a (parse, blocks) pair) that differ on a page."""
    (old_parse, old_blocks), (new_parse, new_blocks) = old, new
    diff = []
    old_decoded = old_parse.decode_html(body, charset)
    new_decoded = new_parse.decode_html(body, charset)  # (the new one last: its caches hold)
    if old_decoded != new_decoded:
        return ["decode_html"]
    old_text = old_decoded[0]
    new_text = new_decoded if hasattr(new_parse, "Decoded") else new_decoded[0]
    for depth in (512, 12):
        if old_parse.limit_depth(old_text, depth) != new_parse.limit_depth(new_text, depth):
            diff.append(f"limit_depth {depth}")
    old_tree, new_tree = old_parse.parse_html(old_text, 512), new_parse.parse_html(new_text, 512)
    if old_tree.html != new_tree.html:
        diff.append("parse_html")
    if blocks_fields(walker_of(old_blocks)(old_tree, 512)) != blocks_fields(walker_of(new_blocks)(new_tree, 512)):
        diff.append("blocks")
    return diff


def measure(pages, versions: dict) -> dict:
    """Mean ms per page of each stage for each version ({label: (parse, blocks)}). The text each
    version's limit_depth and parse_html get is the one its own decode_html made last, as in a
    run (the current decode_html keeps the page's UTF-8 bytes for them)."""
    labels = list(versions)
    total = {label: dict.fromkeys(STAGES, 0.0) for label in labels}
    for _, body, charset in pages:
        for stage in STAGES:
            calls = []
            for label in labels:
                parse, blocks = versions[label]
                text = decoded_input(parse, body, charset)
                if stage == "decode":
                    calls.append((parse.decode_html, (body, charset)))
                elif stage == "limit_depth":
                    calls.append((parse.limit_depth, (text, 512)))
                elif stage == "parse_html":
                    calls.append((parse.parse_html, (text, 512)))
                elif stage == "walk":
                    calls.append((walker_of(blocks), (parse.parse_html(text, 512), 512)))
                else:
                    calls.append((pass1, (parse, blocks, body, charset)))
            for label, seconds in zip(labels, best_of(3, *calls)):
                total[label][stage] += seconds
    return {label: {stage: 1000 * s / len(pages) for stage, s in stages.items()} for label, stages in total.items()}


def measure_native(pages) -> dict:
    """ms per page of the Python and the native walk, alone and in pass 1, and the pages on
    which their blocks differ (at max depths 512 and 12)."""
    from pagetwin.html import blocks, parse

    status = blocks.native_status()
    if status is not None:
        raise SystemExit(f"the native walk is off: {status}")
    walkers = {"python": blocks.BlockWalker(native=False).walk, "native": blocks.BlockWalker().walk}
    total = {label: {"walk": 0.0, "pass 1": 0.0} for label in walkers}
    differing = {}
    for page_id, body, charset in pages:
        decoded = parse.decode_html(body, charset)
        for depth in (512, 12):
            tree = parse.parse_html(decoded, depth)
            python, native = walkers["python"](tree, depth), walkers["native"](tree, depth)
            if python != native:
                differing[page_id] = [f.name for f in dataclasses.fields(python) if getattr(python, f.name) != getattr(native, f.name)]
        tree = parse.parse_html(decoded, 512)
        seconds = best_of(3, *[(walk, (tree, 512)) for walk in walkers.values()])
        for label, s in zip(walkers, seconds):
            total[label]["walk"] += s

        def pass1(walk):
            walk(parse.parse_html(parse.decode_html(body, charset), 512), 512)

        seconds = best_of(3, *[(pass1, (walk,)) for walk in walkers.values()])
        for label, s in zip(walkers, seconds):
            total[label]["pass 1"] += s
    ms = {label: {stage: 1000 * s / len(pages) for stage, s in stages.items()} for label, stages in total.items()}
    return {"pages": len(pages), "identical": len(pages) - len(differing), "differing": differing, "ms_per_page": ms}


def print_native(name: str, entry: dict) -> None:
    ms = entry["ms_per_page"]
    print(f"{name} ({entry['pages']} pages; identical blocks on {entry['identical']})")
    for stage in ("walk", "pass 1"):
        python, native = ms["python"][stage], ms["native"][stage]
        print(f"  {stage:8s} python {python:7.3f}  native {native:7.3f} ms/page  x{python / native:.2f}")
    for page_id, diff in list(entry["differing"].items())[:10]:
        print(f"  DIFFERS {page_id}: {', '.join(diff)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="git revision to compare with (outputs and speed)")
    ap.add_argument("--native", action="store_true", help="the native block walk against the Python one")
    ap.add_argument("--warc", action="store_true", help="also the HTML pages of ../shared/data/warc")
    ap.add_argument("--limit", type=int, help="pages per set")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    if not DATA.exists():
        print(f"no data at {DATA}", file=sys.stderr)
        return 1
    from pagetwin.html import blocks, parse

    sets = {name: extraction_pages(name, args.limit) for name in SETS}
    if args.warc:
        sets["warc"] = warc_pages(args.limit)
    report: dict = {}
    if args.native:
        for name, pages in sets.items():
            report[name] = measure_native(pages)
            print_native(name, report[name])
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1))
        return 1 if any(entry["differing"] for entry in report.values()) else 0
    with tempfile.TemporaryDirectory() as tmp:
        versions = {"new": (parse, blocks)}
        if args.baseline:
            versions = {"old": baseline_modules(args.baseline, Path(tmp)), "new": (parse, blocks)}
        for name, pages in sets.items():
            entry: dict = {"pages": len(pages)}
            if args.baseline:
                differing = {}
                for page_id, body, charset in pages:
                    diff = differences(versions["old"], versions["new"], body, charset)
                    if diff:
                        differing[page_id] = diff
                entry["identical"] = len(pages) - len(differing)
                entry["differing"] = differing
            entry["ms_per_page"] = measure(pages, versions)
            report[name] = entry
            print_entry(name, entry)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


def print_entry(name: str, entry: dict) -> None:
    ms = entry["ms_per_page"]
    line = f"{name} ({entry['pages']} pages"
    if "identical" in entry:
        line += f"; identical outputs on {entry['identical']}"
    print(line + ")")
    for stage in STAGES:
        if "old" in ms:
            old, new = ms["old"][stage], ms["new"][stage]
            print(f"  {stage:12s} old {old:7.3f}  new {new:7.3f} ms/page  x{old / new:.2f}")
        else:
            print(f"  {stage:12s} {ms['new'][stage]:7.3f} ms/page")
    for page_id, diff in list(entry.get("differing", {}).items())[:10]:
        print(f"  DIFFERS {page_id}: {', '.join(diff)}")


if __name__ == "__main__":
    sys.exit(main())
