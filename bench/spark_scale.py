"""The link step on Spark's executors at growing sizes (issue 18): a synthetic crawl made from
real pages with seeded edits and known clusters (bench/corpus.py), deduplicated with
``--runner spark --set spark.link=executors`` on ``local[2]`` and with the local runner.

For each size: pages per second, the driver's peak memory (the Python driver process alone,
sampled every 0.2 s; its JVM is reported apart: in local mode it also runs the executors' side
of Spark), the Python workers' peak (summed), shuffle bytes written (Spark's event log), output
bytes per page and the lean index's bytes per page, pairwise precision / recall of the clusters
against the seeded ones (a page's true cluster: the source page it was made from), and whether
the executors' clusters and kept pages are the local runner's, row for row.

Also: CPU seconds of each run's whole process tree (driver, JVM, Python workers) and, for the
Spark run, the task time of its stages grouped by call site (where the time goes).

Usage: nice -n 10 python -m bench.spark_scale --pages 5000 20000 [--master local[2]] [--no-local | --no-spark]
       [--sources N: the crawl made from N source pages only, pages/N seeded copies of each]
       [--copies K: the crawl of fixed duplicate sets of K pages, bench/corpus.py --copies K]
       [--crawls DIR: where the --copies crawls are kept (default bench/data)]
       [--conf spark.KEY=VALUE ...: Spark configuration for the Spark run]
       [--set spark.split_bytes=4194304 ...: settings for both runs, spark.* for Spark's only]
       [--corpus 'DIR/part-*.warc.gz': an existing crawl, or the shards of one (bench/corpus.py --first-set)]
Each run is a child process (``--child``) so that its memory is its own. The two halves of one
size can run side by side (``--no-local`` and ``--no-spark``, one --work; their CPU seconds stay
comparable, their wall times do not), then ``--compare WORK/spark-N WORK/local-N``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import SHARED_DATA, build_corpus, corpus_path, ensure_corpus, source_pages  # noqa: E402
from bench.reposts import pair_scores  # noqa: E402


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[tuple[int, str]]:
    """(pid, command name) of ``pid``'s descendants."""
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        try:
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        for c in map(int, children):
            try:
                name = Path(f"/proc/{c}/comm").read_text().strip()
            except OSError:
                continue
            out.append((c, name))
            stack.append(c)
    return out


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds ``pid`` has used itself (/proc/PID/stat), 0 when gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measured(cmd: list[str]) -> dict:
    """Run ``cmd``; its wall time, peak memory (the process itself, its JVM, its Python
    workers) and CPU seconds of its whole process tree (each process's last sample, by the same
    three parts; a process that ends between two samples loses at most 0.2 s)."""
    started = time.monotonic()
    errors = tempfile.TemporaryFile("w+")  # the child's stderr, shown if it fails
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors, text=True)
    peak = {"driver": 0, "jvm": 0, "workers": 0}
    cpu: dict[int, tuple[str, float]] = {}
    while proc.poll() is None:
        peak["driver"] = max(peak["driver"], _rss(proc.pid))
        tree = _tree(proc.pid)
        peak["jvm"] = max(peak["jvm"], sum(_rss(p) for p, n in tree if n == "java"))
        peak["workers"] = max(peak["workers"], sum(_rss(p) for p, n in tree if n != "java"))
        for p, part in [(proc.pid, "driver"), *((p, "jvm" if n == "java" else "workers") for p, n in tree)]:
            cpu[p] = (part, max(_cpu_seconds(p), cpu.get(p, ("", 0.0))[1]))
        time.sleep(0.2)
    out = proc.stdout.read()
    if proc.returncode != 0:
        errors.seek(0)
        tail = "".join(errors.readlines()[-30:])
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}); its stderr ends:\n{tail}")
    errors.close()
    by_part = {part: round(sum(s for q, s in cpu.values() if q == part), 1) for part in ("driver", "jvm", "workers")}
    return {"seconds": time.monotonic() - started, "peak_bytes": peak, "child": json.loads(out.splitlines()[-1]),
            "cpu_seconds": {"total": round(sum(by_part.values()), 1), **by_part}}  # fmt: skip


def _child(kind: str, corpus: str, out: str, master: str, events: str, sets: str = "{}", spark_conf: str = "{}") -> None:
    """One dedup run (this process is measured by the parent); prints its summary's counts.
    ``sets``: settings as JSON {"section.name": value} (spark.* ones for the Spark run only);
    ``spark_conf``: Spark configuration as JSON {"spark.key": "value"} for the Spark run."""
    from pagetwin.app import dedup
    from pagetwin.config import Settings

    settings = Settings()
    settings.set("run.workers", 2)
    settings.set("run.progress", False)
    for key, value in json.loads(sets).items():
        if kind == "spark" or not key.startswith("spark."):
            settings.set(key, value)
    engine = None
    if kind == "spark":
        from pagetwin.runners.spark import SparkEngine

        settings.set("spark.link", "executors")
        conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": Path(events).resolve().as_uri(),
                "spark.eventLog.compress": "false", "spark.driver.memory": "2g", **json.loads(spark_conf)}  # fmt: skip
        engine = SparkEngine(master=master, conf=conf)
    summary = dedup([corpus], out, settings.validate(), engine=engine)
    keep = ("clusters", "duplicates", "pairs", "lean_index_bytes_per_page", "components_rounds")
    print(json.dumps({"pages": summary["pages"]["read"], **{k: summary.get(k) for k in keep}}))


def _shuffle_bytes(events: str) -> int:
    """Shuffle bytes written by every task of the event logs under ``events`` (uncompressed
    logs: Spark 4 writes a folder of rolled files per application)."""
    total = 0
    for line in _event_lines(events):
        if '"SparkListenerTaskEnd"' in line:
            metrics = json.loads(line).get("Task Metrics") or {}
            total += (metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
    return total


def _event_lines(events: str):
    """Every line of the uncompressed event logs under ``events``."""
    for path in glob.glob(os.path.join(events, "**", "*"), recursive=True):
        if not os.path.isfile(path) or os.path.basename(path).startswith((".", "appstatus")):
            continue
        with open(path, errors="replace") as fh:
            yield from fh


def stage_seconds(events: str, top: int = 12) -> list[dict]:
    """Where the Spark run's task time went: executor run time (wall, Python included) and
    JVM CPU time summed over each stage's tasks, stages grouped by their call site (the
    RDD action and its line), the ``top`` largest, from the uncompressed event logs."""
    names: dict[int, str] = {}
    run: dict[int, list[float]] = {}
    for line in _event_lines(events):
        if '"SparkListenerStageCompleted"' in line:
            info = json.loads(line)["Stage Info"]
            names[info["Stage ID"]] = info["Stage Name"]
        elif '"SparkListenerTaskEnd"' in line:
            event = json.loads(line)
            metrics = event.get("Task Metrics") or {}
            got = run.setdefault(event["Stage ID"], [0.0, 0.0, 0])
            got[0] += metrics.get("Executor Run Time", 0) / 1000
            got[1] += metrics.get("Executor CPU Time", 0) / 1e9
            got[2] += 1
    by_name: dict[str, list[float]] = {}
    for stage, (wall, jvm_cpu, tasks) in run.items():
        got = by_name.setdefault(names.get(stage, "?"), [0.0, 0.0, 0, 0])
        got[0] += wall
        got[1] += jvm_cpu
        got[2] += tasks
        got[3] += 1
    ranked = sorted(by_name.items(), key=lambda kv: -kv[1][0])
    return [{"stage": name, "task_seconds": round(w, 1), "jvm_cpu_seconds": round(c, 1), "tasks": t, "stages": n}
            for name, (w, c, t, n) in ranked[:top]]  # fmt: skip


def _rows(out: Path, spark: bool) -> list[dict]:
    files = sorted((out / "clusters.jsonl").glob("part-*")) if spark else [out / "clusters.jsonl"]
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def compare_rows(spark_out: Path, local_out: Path) -> dict:
    """Whether a Spark executors' output and a local one have the same clusters and kept pages,
    row for row (id, cluster, keep of clusters.jsonl, both in id order)."""
    core = [(r["id"], r["cluster"], r["keep"]) for r in _rows(spark_out, True)]
    local_core = [(r["id"], r["cluster"], r["keep"]) for r in _rows(local_out, False)]
    return {"same_clusters_and_kept_pages": core == local_core,
            "rows_differing": sum(a != b for a, b in zip(core, local_core)) + abs(len(core) - len(local_core))}  # fmt: skip


def _bytes_under(path: Path, names: tuple[str, ...]) -> int:
    return sum(f.stat().st_size for n in names for f in (path / n).rglob("*") if f.is_file()) + sum(
        (path / n).stat().st_size for n in names if (path / n).is_file()
    )


def parquet_column_bytes(folder: Path) -> dict[str, int]:
    """Compressed bytes of each column (its leaf paths summed: a map's keys and values) over
    every part file of a Parquet folder, from the files' own metadata."""
    import pyarrow.parquet as pq

    out: dict[str, int] = {}
    for part in sorted(Path(folder).glob("*.parquet")):
        meta = pq.ParquetFile(part).metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                col = group.column(c)
                name = col.path_in_schema.split(".")[0]
                out[name] = out.get(name, 0) + col.total_compressed_size
    return out


def sqlite_bytes(path: Path) -> dict[str, int]:
    """Bytes of each table and index of a SQLite file (its pages, from dbstat), and of the
    pages table's text column alone (``pages.text``: the compressed texts' lengths)."""
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = dict(db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY name"))
        out["pages.text"] = db.execute("SELECT COALESCE(SUM(LENGTH(text)), 0) FROM pages").fetchone()[0]
        out["file"] = Path(path).stat().st_size
        return out
    finally:
        db.close()


def lean_report(out: Path) -> dict:
    """Bytes a page of an output folder's lean index: pages.parquet's columns (spark.link =
    executors) or index.sqlite's tables (the local runner, spark.link = driver)."""
    if (out / "pages.parquet").is_dir():
        import pyarrow.parquet as pq

        pages = sum(pq.read_metadata(f).num_rows for f in (out / "pages.parquet").glob("*.parquet"))
        cols = parquet_column_bytes(out / "pages.parquet")
        models = _bytes_under(out, ("models.parquet",))  # pass 1's models (runners.spark_output), not the index
    else:
        import sqlite3

        db = sqlite3.connect(f"file:{out / 'index.sqlite'}?mode=ro", uri=True)
        pages = db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        db.close()
        cols = sqlite_bytes(out / "index.sqlite")
        models = cols.get("models", 0)
    per_page = {k: round(v / max(1, pages), 1) for k, v in sorted(cols.items(), key=lambda kv: -kv[1])}
    total = sum(v for k, v in cols.items() if k not in ("file", "pages.text"))
    return {"pages": pages, "bytes_per_page": round(total / max(1, pages), 1), "by_part": per_page,
            "models_bytes": models, "models_bytes_per_page": round(models / max(1, pages), 1)}  # fmt: skip


def explain_report(spark_out: Path, local_out: Path, pairs: int = 5, seed: int = 7) -> dict:
    """``pagetwin explain`` on a Spark executors' output against the local runner's output of
    the same crawl: ``pairs`` verified pairs and ``pairs`` random ones (seeded), each explained
    on both, interleaved; CPU seconds a pair of each (this process: the model loaded and
    the two records read back per explain, as the CLI does) and how many explanations are
    equal (``text_from`` aside: a full local index shows its own text)."""
    import random

    from pagetwin.explain import explain

    rng = random.Random(seed)
    verified = [json.loads(line) for line in (local_out / "pairs.jsonl").read_text().splitlines()]
    ids = [json.loads(line)["id"] for line in (local_out / "clusters.jsonl").read_text().splitlines()]
    todo = [(p["a"], p["b"]) for p in rng.sample(verified, min(pairs, len(verified)))]
    todo += [tuple(rng.sample(ids, 2)) for _ in range(pairs)]
    cpu = {"spark": 0.0, "local": 0.0}
    equal, problems = 0, 0
    for a, b in todo:
        got = {}
        for name, out in (("spark", spark_out), ("local", local_out)):
            start = time.process_time()
            got[name] = explain(out, a, b)
            cpu[name] += time.process_time() - start
        for d in got.values():
            for side in ("a", "b"):
                problems += bool(d[side]["text_problem"])
                d[side].pop("text_from")
        equal += got["spark"] == got["local"]
    return {"pairs": len(todo), "equal": equal, "text_problems": problems,
            "cpu_ms_a_pair": {k: round(1000 * v / max(1, len(todo)), 1) for k, v in cpu.items()}}  # fmt: skip


def _corpus(pages: int, sources: int, work: Path, copies: int | None = None, crawls: Path | None = None) -> Path:
    """bench/corpus.py's crawl of ``pages`` pages; with ``copies`` (not with ``sources``), its fixed duplicate sets of
    that many pages each (``--copies``: every known cluster has ``copies`` pages whatever the size,
    so precision and recall mean the same at every size); with ``sources``, made from the first
    ``sources`` source pages only (so that small crawls hold seeded edits: pages/sources copies
    of each), written under ``work``. ``crawls``: the folder of the ``--copies`` crawls
    (default bench/data), each built there on first use."""
    if copies:
        if crawls is None:
            return ensure_corpus(pages, copies=copies)
        out = crawls / corpus_path(pages, copies=copies).name
        if not out.is_file():
            build_corpus(pages, out, copies=copies)
        return out
    if not sources:
        return ensure_corpus(pages)
    import itertools

    out = work / f"corpus-{pages}-src{sources}.warc.gz"
    if not out.is_file():
        build_corpus(pages, out, sources=lambda: itertools.islice(source_pages(SHARED_DATA), sources))
    return out


def crawl_files(corpus: Path | str) -> list[str]:
    """The crawl files ``corpus`` names: one WARC, or a glob of the shards of one crawl
    (``bench/corpus.py --first-set``), each beside its .truth.jsonl. The glob itself is what the
    runs are given, as a user gives one."""
    if not glob.has_magic(str(corpus)):
        return [str(corpus)]
    found = sorted(glob.glob(str(corpus)))
    if not found:
        raise SystemExit(f"--corpus {corpus}: no file matches")
    return found


def run_size(
    pages: int, master: str, with_local: bool, work: Path, sources: int = 0, sets: dict | None = None,
    copies: int | None = None, crawls: Path | None = None, spark_conf: dict | None = None,
    corpus: Path | None = None, with_spark: bool = True,
) -> dict:
    """One size's runs: Spark's, then the local runner's (``with_local``), compared row for row
    when both ran. ``with_spark`` False runs the local one alone (its half can then run beside a
    ``--no-local`` one, and ``--compare`` compares their outputs)."""
    corpus = corpus or _corpus(pages, sources, work, copies, crawls)
    truth = {}
    for crawl in crawl_files(corpus):
        with open(f"{crawl}.truth.jsonl") as fh:
            for line in fh:
                t = json.loads(line)
                truth[t["url"]] = t["source"]
    me = [sys.executable, "-m", "bench.spark_scale", "--child"]
    events = work / f"events-{pages}"
    result: dict = {"pages": pages}
    sets_json = json.dumps(sets or {})
    if with_spark:
        events.mkdir(parents=True)  # a fresh one: the shuffle bytes are summed over every log in it
        sp = _measured([*me, "spark", str(corpus), str(work / f"spark-{pages}"), master, str(events), sets_json,
                        json.dumps(spark_conf or {})])
        rows = _rows(work / f"spark-{pages}", True)
        names = ("clusters.jsonl", "pairs.jsonl", "clusters.parquet", "pairs.parquet", "pages.parquet")
        result["spark"] = {
            "pages_per_second": round(sp["child"]["pages"] / sp["seconds"], 1),
            "seconds": round(sp["seconds"], 1),
            "cpu_seconds": sp["cpu_seconds"],
            "peak_mb": {k: round(v / 2**20) for k, v in sp["peak_bytes"].items()},
            "stages": stage_seconds(str(events)),
            "shuffle_mb": round(_shuffle_bytes(str(events)) / 2**20, 1),
            "output_bytes_per_page": round(_bytes_under(work / f"spark-{pages}", names) / max(1, len(rows)), 1),
            "lean_index": lean_report(work / f"spark-{pages}"),
            **sp["child"],
            "scores": pair_scores({r["url"]: r["cluster"] for r in rows}, truth),
        }
    if with_local:
        lo = _measured([*me, "local", str(corpus), str(work / f"local-{pages}"), master, str(events), sets_json])
        local_rows = _rows(work / f"local-{pages}", False)
        result["local"] = {
            "pages_per_second": round(lo["child"]["pages"] / lo["seconds"], 1),
            "seconds": round(lo["seconds"], 1),
            "cpu_seconds": lo["cpu_seconds"],
            "peak_mb": {k: round(v / 2**20) for k, v in lo["peak_bytes"].items()},
            **lo["child"],
            "scores": pair_scores({r["url"]: r["cluster"] for r in local_rows}, truth),
        }
        if with_spark:
            result.update(compare_rows(work / f"spark-{pages}", work / f"local-{pages}"))
    return result


def main(argv: list[str] | None = None) -> int:
    if argv is None and len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(*sys.argv[2:9])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--no-local", action="store_true", help="skip the local runner's run")
    parser.add_argument("--no-spark", action="store_true",
                        help="the local runner's run only (beside a --no-local one; then --compare their outputs)")
    parser.add_argument("--sources", type=int, default=0, help="make the crawl from this many source pages only")
    parser.add_argument("--copies", type=int, default=None, metavar="K",
                        help="the crawl of fixed duplicate sets of K pages (bench/corpus.py --copies K)")
    parser.add_argument("--crawls", type=Path, default=None, metavar="DIR",
                        help="where the --copies crawls are kept and built when missing (default bench/data)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.NAME=VALUE",
                        help="a setting for both runs (spark.* for the Spark run only), value as JSON or a string")
    parser.add_argument("--conf", action="append", default=[], metavar="spark.KEY=VALUE",
                        help="Spark configuration for the Spark run (e.g. spark.driver.extraJavaOptions=...)")
    parser.add_argument("--work", type=Path, default=None, help="where the runs' outputs go (default: a temporary folder)")
    parser.add_argument("--lean-report", type=Path, nargs="+", metavar="OUT",
                        help="only print the lean index's bytes a page, by column or table, of these output folders")
    parser.add_argument("--corpus", type=Path, default=None, metavar="WARC",
                        help="an existing crawl (with its .truth.jsonl) instead of one made for --pages (one size); "
                             "a quoted glob for a crawl built in shards, each with its .truth.jsonl")
    parser.add_argument("--explain-report", type=Path, nargs=2, metavar=("SPARK_OUT", "LOCAL_OUT"),
                        help="only compare pagetwin explain on a Spark executors' output and a local one of the same crawl")
    parser.add_argument("--explain-pairs", type=int, default=5, metavar="N",
                        help="with --explain-report: N verified and N random pairs")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("SPARK_OUT", "LOCAL_OUT"),
                        help="only compare a Spark executors' output and a local one's clusters and kept pages, row for row")
    args = parser.parse_args(argv)
    if args.explain_report:
        print(json.dumps(explain_report(*args.explain_report, args.explain_pairs)), flush=True)
        return 0
    if args.compare:
        print(json.dumps(compare_rows(*args.compare)), flush=True)
        return 0
    if args.no_local and args.no_spark:
        parser.error("--no-local and --no-spark leave no run")
    if args.corpus and len(args.pages) != 1:
        parser.error("--corpus is one crawl: give one --pages (its size, which names the outputs)")
    if args.copies and args.sources:
        parser.error("--copies and --sources are two layouts of the crawl: give one")
    if args.lean_report:
        for out in args.lean_report:
            print(json.dumps({"out": str(out), **lean_report(out)}), flush=True)
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="pagetwin-spark-scale-"))
    sets = {}
    for item in args.set:
        key, _, value = item.partition("=")
        try:
            sets[key] = json.loads(value)
        except ValueError:
            sets[key] = value
    for pages in args.pages:
        result = run_size(pages, args.master, not args.no_local, work, args.sources, sets, args.copies,
                          args.crawls, dict(c.split("=", 1) for c in args.conf), args.corpus, not args.no_spark)
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
