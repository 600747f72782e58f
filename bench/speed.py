"""Speed and peak memory of `pagetwin dedup` against peer pipelines, on one corpus, in one run.

Runs, each as its own subprocess on the same corpus WARC (bench/corpus.py builds it):

- `pagetwin dedup CORPUS --out DIR` with default settings (all cores), and with `--workers 1`;
- peer (b) "resiliparse": fastwarc reads the WARC; resiliparse decodes the body and extracts
  the main content (`extract_plain_text(main_content=True)`); datasketch MinHash over word
  5-shingles (128 permutations) and MinHashLSH at threshold 0.8; candidates verified by the
  estimated Jaccard >= 0.8; union-find clusters;
- peer (c) "trafilatura": the same, with `trafilatura.extract` (default settings) as the
  extractor. trafilatura is slow: `--peer-sample N` runs it on N pages spread evenly over the
  corpus and extrapolates pages per second (said so in the table);
- the floor "parse": fastwarc reads the WARC and selectolax (lexbor) parses every HTML response,
  nothing more: no extraction, no fingerprint. Any pipeline that parses every page costs at
  least this; pagetwin's pages per CPU-second are reported as a share of it;
- with `--before CHECKOUT` (e.g. a `git worktree` of an earlier commit), `pagetwin dedup
  --workers 1` run from that checkout too (PYTHONPATH=CHECKOUT/src), for a before/after ratio
  in the same run;
- `pagetwin dedup` on the first 10,000 pages of the corpus (the corpus files are prefixes of
  each other), for peak memory at 10,000 vs N pages;
- with `--scale 10000,20000,40000`, `pagetwin dedup --workers 1` on corpora of those sizes: CPU
  milliseconds per page and peak memory at each size, against the smallest (cost per page as
  the corpus grows: it should stay flat).

Peak memory of each run: the sum of RSS and of PSS (proportional set size: shared pages split
between the processes that share them) over the process tree, sampled every 0.2 s with psutil,
and the largest single-process RSS from os.wait4 (exact, kernel-counted). Throughput: pages
read / wall-clock seconds of the whole subprocess (start-up included). Each checkout's sources
are compiled to bytecode first (``compile_sources``), as ``pip install`` compiles an installed
package's: the peers' packages are installed with theirs, and an editable checkout run with
PYTHONDONTWRITEBYTECODE set (this project's CI machines) would otherwise compile pagetwin's
modules again in every timed run (0.6 % of a one-worker run on corpus-10000-shared).

With ``--rounds N`` every timed run is made N times, in turn: each ratio is taken within a round
and reported as the median over the rounds (with each round's), and each run's row is its round
of median pages/s. A shared machine's speed drifts between 30-second runs by more than the
differences measured (five one-round runs of the same two checkouts: 1.00 to 1.22).

Usage: python -m bench.speed [--pages 20000] [--memory-pages 10000] [--peer-sample 2000] [--before DIR]
                             [--scale 10000,20000] [--rounds 3]
Writes bench/out/speed.json and prints a table.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus  # noqa: E402
from bench.debian import REPO_ROOT  # noqa: E402

OUT_DIR = REPO_ROOT / "bench" / "out"
PEER_PERMUTATIONS = 128
PEER_THRESHOLD = 0.8
PEER_SHINGLE = 5
_WORD = re.compile(r"\w+")


# ---------------------------------------------------------------- peer pipelines (run in a child)


def word_shingles(text: str, size: int = PEER_SHINGLE) -> set[str]:
    """Lowercased \\w+ word shingles; a text shorter than `size` words is one shingle."""
    tokens = _WORD.findall(text.lower())
    if not tokens:
        return set()
    if len(tokens) < size:
        return {" ".join(tokens)}
    return {" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


_CHARSET = re.compile(r"charset\s*=\s*[\"']?([\w.:-]+)", re.I)


def _resiliparse_text(body: bytes, content_type: str = "") -> str:
    """Charset from the HTTP header, else the meta tag, else uchardet; then main content."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import detect_encoding, map_encoding_to_html5
    from resiliparse.parse.html import HTMLTree

    declared = _CHARSET.search(content_type or "")
    encoding = map_encoding_to_html5(declared.group(1)) if declared else None
    tree = HTMLTree.parse_from_bytes(body, encoding or detect_encoding(body, from_html_meta=True))
    return extract_plain_text(tree, main_content=True)


def _trafilatura_text(body: bytes, content_type: str = "") -> str:
    """trafilatura decodes the bytes itself (its own charset detection is part of its cost)."""
    import trafilatura

    return trafilatura.extract(body) or ""


EXTRACTORS = {"resiliparse": _resiliparse_text, "trafilatura": _trafilatura_text}


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while x != root:  # path compression
            self.parent[x], x = root, self.parent.get(x, x)
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def run_peer(name: str, corpus: Path, sample_every: int = 1) -> dict:
    """The peer pipeline over the corpus (every `sample_every`-th HTML response only).

    Returns counts and timings; `busy_seconds` is the time spent on the processed pages (read,
    extract, MinHash, LSH query/insert, verify), which is what a sampled run extrapolates from.
    """
    from datasketch import MinHash, MinHashLSH
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    extract = EXTRACTORS[name]
    started = time.perf_counter()
    lsh = MinHashLSH(threshold=PEER_THRESHOLD, num_perm=PEER_PERMUTATIONS)
    signatures: dict[int, MinHash] = {}
    clusters = _UnionFind()
    seen = processed = empty = failed = candidates = edges = 0
    busy = busy_cpu = 0.0
    startup_cpu = time.process_time()  # interpreter and library imports
    with open(corpus, "rb") as stream:
        for record in ArchiveIterator(stream, record_types=WarcRecordType.response, parse_http=True):
            seen += 1
            if (seen - 1) % sample_every:
                continue
            t0, c0 = time.perf_counter(), time.process_time()
            body = record.reader.read()
            content_type = record.http_headers.get("Content-Type", "") if record.http_headers else ""
            page = processed
            processed += 1
            try:
                text = extract(body, content_type or "")
            except Exception:
                failed += 1
                text = ""
            shingles = word_shingles(text)
            if shingles:
                minhash = MinHash(num_perm=PEER_PERMUTATIONS)
                minhash.update_batch([s.encode("utf-8") for s in shingles])
                for other in lsh.query(minhash):
                    candidates += 1
                    if minhash.jaccard(signatures[other]) >= PEER_THRESHOLD:
                        edges += 1
                        clusters.union(page, other)
                lsh.insert(page, minhash)
                signatures[page] = minhash
            else:
                empty += 1
            busy += time.perf_counter() - t0
            busy_cpu += time.process_time() - c0
    roots = {clusters.find(i) for i in range(processed)}
    return {
        "records": seen,
        "pages": processed,
        "empty_text": empty,
        "extract_errors": failed,
        "candidates": candidates,
        "edges": edges,
        "clusters": len(roots),
        "duplicates": processed - len(roots),
        "busy_seconds": busy,
        "busy_cpu_seconds": busy_cpu,
        "startup_cpu_seconds": startup_cpu,
        "seconds": time.perf_counter() - started,
    }


def run_floor(corpus: Path) -> dict:
    """The parse floor: every HTML response read by fastwarc and parsed by lexbor, and nothing
    else (the parsed tree is dropped)."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType
    from selectolax.lexbor import LexborHTMLParser

    started = time.perf_counter()
    startup_cpu = time.process_time()
    pages = nodes = 0
    with open(corpus, "rb") as stream:
        for record in ArchiveIterator(stream, record_types=WarcRecordType.response, parse_http=True):
            tree = LexborHTMLParser(record.reader.read())
            nodes += tree.root is not None
            pages += 1
    return {"records": pages, "pages": pages, "parsed": nodes, "startup_cpu_seconds": startup_cpu,
            "seconds": time.perf_counter() - started}


# ---------------------------------------------------------------- measuring a subprocess


class TreeMemorySampler(threading.Thread):
    """Samples the summed RSS and PSS of a process and all its descendants."""

    def __init__(self, pid: int, interval: float = 0.2):
        super().__init__(daemon=True)
        self.pid, self.interval = pid, interval
        self.peak_rss = self.peak_pss = 0
        self.peak_processes = 0
        self._halt = threading.Event()

    def run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return
        while not self._halt.is_set():
            rss = pss = 0
            try:
                procs = [root] + root.children(recursive=True)
            except psutil.NoSuchProcess:
                break
            for proc in procs:
                try:
                    info = proc.memory_full_info()
                    rss += info.rss
                    pss += getattr(info, "pss", info.rss)
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    pass
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.peak_processes = max(self.peak_processes, len(procs))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def measure(cmd: list[str], label: str, env: dict | None = None) -> dict:
    """Run `cmd`; wall time, exit status, peak tree RSS/PSS (sampled), max process RSS (wait4)."""
    print(f"[speed] {label}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    stdout = tempfile.TemporaryFile()
    stderr = tempfile.TemporaryFile()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, cwd=REPO_ROOT, env=env)
    sampler = TreeMemorySampler(proc.pid)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    sampler.stop()
    stdout.seek(0)
    stderr.seek(0)
    out, err = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
    if proc.returncode != 0:
        print(f"[speed] {label} failed with exit {proc.returncode}:\n{err[-3000:]}", file=sys.stderr)
    return {
        "label": label,
        "command": cmd,
        "exit": proc.returncode,
        "seconds": seconds,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_tree_rss_mb": sampler.peak_rss / 2**20,
        "peak_tree_pss_mb": sampler.peak_pss / 2**20,
        "max_process_rss_mb": usage.ru_maxrss / 1024,  # kB on Linux
        "processes": sampler.peak_processes,
        "stdout": out[-2000:],
        "stderr_tail": err[-1000:],
    }


def compile_sources(checkout: Path) -> None:
    """Write the bytecode of a checkout's pagetwin modules (see the module's docstring)."""
    compileall.compile_dir(str(checkout / "src" / "pagetwin"), quiet=1)


def pagetwin_run(corpus: Path, workers: int | None, label: str, checkout: Path | None = None) -> dict:
    """`pagetwin dedup` on the corpus; from `checkout`'s sources when given."""
    compile_sources(checkout.resolve() if checkout else REPO_ROOT)
    out = Path(tempfile.mkdtemp(prefix="pagetwin-speed-"))
    cmd = [str(Path(sys.executable).with_name("pagetwin")), "dedup", str(corpus), "--out", str(out)]
    if not Path(cmd[0]).exists():
        cmd[0:1] = [sys.executable, "-m", "pagetwin.cli"]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve() / "src")} if checkout else None
    result = measure(cmd, label, env)
    summary_file = out / "summary.json"
    if summary_file.is_file():
        summary = json.loads(summary_file.read_text())
        result["summary"] = {k: summary.get(k) for k in ("pages", "records", "clusters", "duplicates",
                                                          "pairs", "matching", "seconds")
                             if k in summary}
        result["pages"] = _pages_from_summary(summary)
    index = out / "index.sqlite"
    result["index_mb"] = index.stat().st_size / 2**20 if index.is_file() else None
    shutil.rmtree(out, ignore_errors=True)
    return result


def _pages_from_summary(summary: dict) -> int | None:
    for key in ("pages", "pages_read", "read"):
        value = summary.get(key)
        if isinstance(value, int):
            return value
        if isinstance(value, dict):
            for sub in ("read", "pages", "total"):
                if isinstance(value.get(sub), int):
                    return value[sub]
    return None


def peer_run(name: str, corpus: Path, sample_every: int, label: str) -> dict:
    """A peer pipeline (or, name "floor", the parse floor) in a child process."""
    if name == "floor":
        cmd = [sys.executable, "-m", "bench.speed", "--run-floor", "--corpus", str(corpus)]
    else:
        cmd = [sys.executable, "-m", "bench.speed", "--run-peer", name, "--corpus", str(corpus),
               "--sample-every", str(sample_every)]
    result = measure(cmd, label)
    try:
        result["peer"] = json.loads(result["stdout"].strip().splitlines()[-1])
        result["pages"] = result["peer"]["pages"]
    except (IndexError, ValueError, KeyError):
        result["peer"] = None
    return result


# ---------------------------------------------------------------- the benchmark


def pages_per_second(run: dict, total_pages: int) -> tuple[float | None, float | None, bool]:
    """(pages per wall second, pages per CPU second, extrapolated?).

    A sampled peer run extrapolates from its time per processed page (wall and CPU), plus its
    start-up, to the whole corpus. CPU seconds (user + system of the whole process tree, from
    wait4) are the steadier figure on a shared machine; wall seconds show parallel speed-up.
    """
    peer = run.get("peer")
    if run["exit"] != 0 or run["seconds"] <= 0:
        return None, None, False
    if peer and peer["records"] != peer["pages"]:
        pages = max(peer["pages"], 1)
        startup = max(run["seconds"] - peer["seconds"], 0.0)
        wall = startup + peer["busy_seconds"] / pages * total_pages
        cpu = peer["startup_cpu_seconds"] + peer["busy_cpu_seconds"] / pages * total_pages
        return total_pages / wall, total_pages / cpu, True
    pages = run.get("pages") or total_pages
    return pages / run["seconds"], pages / max(run["cpu_seconds"], 1e-9), False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20000, help="corpus size (pages)")
    parser.add_argument("--mix", choices=("docs", "shared"), default="docs",
                        help="the corpus' sources (bench/corpus.py --mix): shared = every page of ../shared/data, "
                             "WCXB and SpotSigs included, as issue 16's kept-back corpus")
    parser.add_argument("--memory-pages", type=int, default=10000,
                        help="smaller corpus for the memory comparison (0 to skip)")
    parser.add_argument("--peer-sample", type=int, default=2000,
                        help="trafilatura runs on this many pages spread over the corpus (0 = all)")
    parser.add_argument("--resiliparse-sample", type=int, default=0,
                        help="same for resiliparse (0 = all pages, the default)")
    parser.add_argument("--skip", default="", help="comma list of runs to skip: "
                        "pagetwin,pagetwin1,resiliparse,trafilatura,floor,memory")
    parser.add_argument("--before", type=Path, help="also run `pagetwin dedup --workers 1` from this "
                        "checkout (a git worktree of an earlier commit), for a before/after ratio")
    parser.add_argument("--scale", default="", help="comma list of corpus sizes: `pagetwin dedup --workers 1` "
                        "on each, for the cost per page as the corpus grows")
    parser.add_argument("--rounds", type=int, default=1, help="time every run this many times, in turn; "
                        "ratios are taken within a round and reported as their median (a shared machine drifts)")
    parser.add_argument("--out", type=Path, default=OUT_DIR / "speed.json")
    # internal: run one peer pipeline in this process and print its JSON result
    parser.add_argument("--run-peer", choices=sorted(EXTRACTORS), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sample-every", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--run-floor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.run_peer:
        print(json.dumps(run_peer(args.run_peer, args.corpus, args.sample_every)))
        return 0
    if args.run_floor:
        print(json.dumps(run_floor(args.corpus)))
        return 0
    if args.before and not (args.before / "src" / "pagetwin").is_dir():
        parser.error(f"--before {args.before}: not a pagetwin checkout (no src/pagetwin there)")

    sizes = _sizes(args.scale, parser)
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    corpus = ensure_corpus(args.pages, mix=args.mix)
    # Rounds: every timed run again, in the same order, so that each ratio is taken within a
    # round (the runs of one round are minutes apart, not a whole bench) and reported as the
    # median over the rounds: a shared machine's speed drifts between 30-second runs by more
    # than the differences measured.
    rounds = [_round(args, skip, corpus) for _ in range(args.rounds)]
    for round_runs in rounds:
        for run in round_runs.values():
            run["pages_per_second"], run["pages_per_cpu_second"], run["extrapolated"] = pages_per_second(run, args.pages)
    runs = {name: _median_run([r[name] for r in rounds]) for name in rounds[0]}
    memory = None
    if args.memory_pages and args.memory_pages < args.pages and "memory" not in skip and "pagetwin" not in skip:
        small = ensure_corpus(args.memory_pages, mix=args.mix)
        runs["pagetwin_small"] = little = pagetwin_run(small, None, f"pagetwin dedup on {args.memory_pages} pages")
        little["pages_per_second"], little["pages_per_cpu_second"], little["extrapolated"] = (
            pages_per_second(little, args.memory_pages))
        big = runs["pagetwin"]
        memory = {
            "pages": [args.memory_pages, args.pages],
            "peak_tree_pss_mb": [little["peak_tree_pss_mb"], big["peak_tree_pss_mb"]],
            "peak_tree_rss_mb": [little["peak_tree_rss_mb"], big["peak_tree_rss_mb"]],
            "max_process_rss_mb": [little["max_process_rss_mb"], big["max_process_rss_mb"]],
            "index_mb": [little.get("index_mb"), big.get("index_mb")],
        }

    scale = scale_runs(sizes, args.mix)
    ratios = round_ratios(rounds)
    result = {
        "corpus": str(corpus.relative_to(REPO_ROOT)) if corpus.is_relative_to(REPO_ROOT) else str(corpus),
        "pages": args.pages,
        "cpu_count": os.cpu_count(),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_end": os.getloadavg(),
        "rounds": args.rounds,
        "runs": {k: {kk: vv for kk, vv in v.items() if kk != "stdout"} for k, v in runs.items()},
        "ratios": ratios,
        "memory_vs_pages": memory,
        "cost_vs_pages": scale,
        "command": " ".join([Path(sys.executable).name, "-m", "bench.speed"] + (argv or sys.argv[1:])),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(format_table(result))
    print(f"\nwritten: {args.out}")
    every_run = [*(run for r in rounds for run in r.values()), *runs.values(), *(scale or [])]
    return 0 if all(r["exit"] == 0 for r in every_run) else 1


def _round(args: argparse.Namespace, skip: set[str], corpus: Path) -> dict[str, dict]:
    """One round of the timed runs, by name."""
    runs: dict[str, dict] = {}
    if "pagetwin" not in skip:
        runs["pagetwin"] = pagetwin_run(corpus, None, f"pagetwin dedup (workers default = {os.cpu_count()})")
    if "pagetwin1" not in skip:
        runs["pagetwin_1worker"] = pagetwin_run(corpus, 1, "pagetwin dedup --workers 1")
    if args.before:
        runs["before_1worker"] = pagetwin_run(corpus, 1, f"pagetwin dedup --workers 1, from {args.before}", args.before)
    if "floor" not in skip:
        runs["floor"] = peer_run("floor", corpus, 1, "floor: fastwarc read + selectolax (lexbor) parse")
    if "resiliparse" not in skip:
        every = max(1, args.pages // args.resiliparse_sample) if args.resiliparse_sample else 1
        runs["resiliparse"] = peer_run("resiliparse", corpus, every, "resiliparse + datasketch MinHashLSH")
    if "trafilatura" not in skip:
        every = max(1, args.pages // args.peer_sample) if args.peer_sample else 1
        runs["trafilatura"] = peer_run("trafilatura", corpus, every, "trafilatura + datasketch MinHashLSH")
    return runs


# The ratios reported (A / B), each taken within a round.
RATIOS = (("pagetwin", "resiliparse"), ("pagetwin", "trafilatura"), ("pagetwin_1worker", "resiliparse"),
          ("pagetwin_1worker", "trafilatura"), ("before_1worker", "resiliparse"),
          ("pagetwin_1worker", "before_1worker"), ("pagetwin_1worker", "floor"), ("resiliparse", "floor"))


def round_ratios(rounds: list[dict[str, dict]]) -> dict[str, dict]:
    """Each ratio of RATIOS whose two runs succeeded in every round: the median over the rounds
    of the within-round ratios, and the ratios of pages/s of each round (``per_round``)."""
    ratios = {}
    for mine, peer in RATIOS:
        pairs = [(r[mine], r[peer]) for r in rounds if mine in r and peer in r]
        if not pairs or len(pairs) < len(rounds) or not all(a["pages_per_second"] and b["pages_per_second"] for a, b in pairs):
            continue
        speed = [a["pages_per_second"] / b["pages_per_second"] for a, b in pairs]
        ratios[f"{mine}/{peer}"] = {
            "speed": statistics.median(speed),
            "speed_cpu": statistics.median(a["pages_per_cpu_second"] / b["pages_per_cpu_second"] for a, b in pairs),
            "peak_pss": statistics.median(a["peak_tree_pss_mb"] / max(b["peak_tree_pss_mb"], 1e-9) for a, b in pairs),
            "per_round": [round(x, 3) for x in speed],
        }
    return ratios


def _median_run(runs: list[dict]) -> dict:
    """Of one run's rounds, the one of median pages/s (the lower middle of an even count), with
    how many rounds there were."""
    ranked = sorted(runs, key=lambda run: run["pages_per_second"] or 0.0)
    return {**ranked[(len(ranked) - 1) // 2], "rounds": len(runs)}


def _sizes(text: str, parser: argparse.ArgumentParser) -> list[int]:
    try:
        sizes = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        parser.error(f"--scale {text!r}: give corpus sizes as whole numbers, e.g. 10000,20000")
    if any(n <= 0 for n in sizes):
        parser.error(f"--scale {text!r}: corpus sizes must be positive")
    return sizes


def scale_runs(sizes: list[int], mix: str = "docs") -> list[dict] | None:
    """`pagetwin dedup --workers 1` on a corpus of each size: CPU ms per page and peak memory,
    each against the smallest size's (1.0 = flat)."""
    if not sizes:
        return None
    rows = []
    for n in sizes:
        run = pagetwin_run(ensure_corpus(n, mix=mix), 1, f"pagetwin dedup --workers 1 on {n} pages")
        pages = run.get("pages") or n
        rows.append({
            "pages": pages, "exit": run["exit"], "cpu_seconds": run["cpu_seconds"], "seconds": run["seconds"],
            "cpu_ms_per_page": 1000 * run["cpu_seconds"] / max(pages, 1),
            "peak_tree_pss_mb": run["peak_tree_pss_mb"], "max_process_rss_mb": run["max_process_rss_mb"],
            "index_mb": run.get("index_mb"),
        })  # fmt: skip
    first = rows[0]
    for row in rows:
        row["cost_vs_smallest"] = row["cpu_ms_per_page"] / max(first["cpu_ms_per_page"], 1e-9)
        row["memory_vs_smallest"] = row["peak_tree_pss_mb"] / max(first["peak_tree_pss_mb"], 1e-9)
    return rows


def _scale_table(rows: list[dict]) -> list[str]:
    lines = ["", "| pages (--workers 1) | CPU s | CPU ms/page | x smallest | peak tree PSS MB | x smallest | index MB |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['pages']} | {r['cpu_seconds']:.1f} | {r['cpu_ms_per_page']:.2f} | {r['cost_vs_smallest']:.2f} | "
                     f"{r['peak_tree_pss_mb']:.0f} | {r['memory_vs_smallest']:.2f} | {r['index_mb'] or 0:.0f} |")
    return lines


def format_table(result: dict) -> str:
    lines = [
        f"corpus: {result['corpus']} ({result['pages']} pages), {result['cpu_count']} cores",
        "",
        "| run | pages | wall s | pages/s | CPU s | pages/CPU s | peak tree PSS MB | peak tree RSS MB | max process RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in result["runs"].values():
        pps = run.get("pages_per_second")
        note = " (extrapolated from a sample)" if run.get("extrapolated") else ""
        lines.append(
            f"| {run['label']}{note} | {run.get('pages') or '?'} | {run['seconds']:.1f} | "
            f"{pps:.1f} |" if pps else f"| {run['label']} | ? | {run['seconds']:.1f} | failed |"
        )
        lines[-1] += f" {run['cpu_seconds']:.1f} | {run.get('pages_per_cpu_second') or 0:.1f} |"
        lines[-1] += (f" {run['peak_tree_pss_mb']:.0f} | {run['peak_tree_rss_mb']:.0f} | "
                      f"{run['max_process_rss_mb']:.0f} |")
    if result["ratios"]:
        rounds = result.get("rounds", 1)
        if rounds > 1:
            lines += ["", f"{rounds} rounds: each run above is its round of median pages/s; each ratio below is the "
                          "median of the ratios within a round (pages/s of every round last)"]
        lines += ["", "| ratio (A / B) | speed (pages/s) | speed (pages/CPU s) | peak memory (PSS) | per round |",
                  "|---|---:|---:|---:|---|"]
        for name, ratio in result["ratios"].items():
            per_round = ", ".join(f"{x:.2f}" for x in ratio.get("per_round", []))
            lines.append(f"| {name} | {ratio['speed']:.2f} | {ratio['speed_cpu']:.2f} | {ratio['peak_pss']:.2f} | {per_round} |")
    memory = result.get("memory_vs_pages")
    if memory:
        (a, b), pss = memory["pages"], memory["peak_tree_pss_mb"]
        index = memory["index_mb"]
        lines += ["", f"pagetwin peak tree PSS: {pss[0]:.0f} MB at {a} pages, {pss[1]:.0f} MB at {b} pages "
                  f"(x{pss[1] / max(pss[0], 1e-9):.2f} for x{b / a:.1f} pages); "
                  f"max process RSS {memory['max_process_rss_mb'][0]:.0f} -> {memory['max_process_rss_mb'][1]:.0f} MB; "
                  f"index {index[0] or 0:.0f} -> {index[1] or 0:.0f} MB"]
    if result.get("cost_vs_pages"):
        lines += _scale_table(result["cost_vs_pages"])
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
