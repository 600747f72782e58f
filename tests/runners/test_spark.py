"""The Spark runner (runners/spark.py): same clusters as the local runner, through the CLI, on a
WARC and a folder the tests write; the units of work keep the local runner's page ids and
accounting; a clear usage error without pyspark or Java."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from pagetwin.cli import main
from pagetwin.config import ConfigError, Settings
from pagetwin.outputs.warc import WarcWriter
from pagetwin.runners import spark
from pagetwin.sources import SourceStats, iter_pages
from tests.fixtures.news import article, news_crawl, page


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _png(seed: int) -> bytes:
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    pixels = (rng.random((48, 64, 3)) * 255).astype("uint8")
    buf = io.BytesIO()
    Image.fromarray(pixels).resize((256, 192)).save(buf, "PNG")
    return buf.getvalue()


def _inputs(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A WARC (an article under two URLs, a revisit of it, an edited copy, unrelated stories,
    images, records that are not pages) and a folder (two
    sites in subfolders with copies inside each and of a WARC article, unreadable and
    non-HTML files). Returns (warc, folder, names -> ids)."""
    warc = tmp_path / "crawl.warc.gz"
    with WarcWriter(warc) as w:
        ids, story = news_crawl(w, others=8, images=[_png(i) for i in range(4)])
    folder = tmp_path / "site"
    for sub, seed, n in (("blog", 200, 7), ("docs/guide", 300, 6)):
        d = folder / sub
        d.mkdir(parents=True)
        for i in range(n):
            (d / f"p{i:02d}.html").write_text(page(f"{sub} {i}", article(seed + i), site=sub.title()))
        ids[f"{sub}/copy"] = f"{sub}/p00 copy.html"
        shutil.copy(d / "p00.html", d / "p00 copy.html")  # sorted next to p00: same partition
    ids["folder-bridge"] = "blog/bridge.htm"
    (folder / "blog" / "bridge.htm").write_text(page("Harbour bridge reopens", story, site="Blog"))
    (folder / "empty.html").write_text("  \n")
    (folder / "notes.txt").write_text("not a page")
    return warc, folder, ids


def _need_spark() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pagetwin[spark]')")
    if spark._java() is None:
        pytest.skip("Java is not installed (Spark needs Java 17)")


def test_spark_runner_matches_local_runner(tmp_path, monkeypatch):
    _need_spark()
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    warc, folder, ids = _inputs(tmp_path)
    # Several partitions per folder: 3 files each.
    monkeypatch.setattr(spark.SparkEngine, "files_per_task", 3)
    args = [str(warc), str(folder), "--algorithms", "exact,simhash,minhash,con,images"]
    assert main(["dedup", *args, "--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    # Pass 2 fingerprints the pages pass 1 kept (run.reuse_parse, the default): the inputs are
    # moved away between the passes and the output is still the local runner's.
    real_learn = spark.SparkEngine.learn
    moved = [(warc, tmp_path / "moved.warc.gz"), (folder, tmp_path / "moved-site")]

    def learn_then_move_inputs(self, *a, **kw):
        learned = real_learn(self, *a, **kw)
        for path, away in moved:
            path.rename(away)
        return learned

    started = time.monotonic()
    with monkeypatch.context() as m:
        m.setattr(spark.SparkEngine, "learn", learn_then_move_inputs)
        code = main(["dedup", *args, "--out", str(tmp_path / "spark"), "--runner", "spark", "--spark-master", "local[2]"])
    spark_seconds = time.monotonic() - started
    for path, away in moved:
        away.rename(path)
    assert code == 0
    # Reading and parsing again in pass 2 gives the same bytes.
    assert main(["dedup", *args, "--out", str(tmp_path / "reparsed"), "--runner", "spark", "--spark-master", "local[2]",
                 "--set", "run.reuse_parse=false"]) == 0
    for name in ("clusters.jsonl", "pairs.jsonl"):
        expected = (tmp_path / "local" / name).read_bytes()
        assert (tmp_path / "spark" / name).read_bytes() == expected, name
        assert (tmp_path / "reparsed" / name).read_bytes() == expected, name
    local_rows = _lines(tmp_path / "local" / "clusters.jsonl")
    spark_rows = _lines(tmp_path / "spark" / "clusters.jsonl")
    assert spark_rows == local_rows, "the Spark runner must give the local runner's ids, clusters and keep flags"

    # The planted duplicates are found (so equality above is not two empty results).
    by_id = {r["id"]: r for r in spark_rows}
    assert set(ids.values()) <= set(by_id)
    cluster = {name: by_id[i]["cluster"] for name, i in ids.items()}
    assert cluster["a"] == cluster["a2"] == cluster["near"] == cluster["revisit"] == cluster["folder-bridge"]
    assert cluster["blog/copy"] == by_id["blog/p00.html"]["cluster"] != cluster["docs/guide/copy"]
    assert cluster["docs/guide/copy"] == by_id["docs/guide/p00.html"]["cluster"]
    assert len({cluster["other0"], cluster["other1"], cluster["a"], cluster["blog/copy"]}) == 4
    keeps: dict[str, int] = {}
    for r in spark_rows:
        keeps[r["cluster"]] = keeps.get(r["cluster"], 0) + r["keep"]
    assert set(keeps.values()) == {1}

    local = json.loads((tmp_path / "local" / "summary.json").read_text())
    summary = json.loads((tmp_path / "spark" / "summary.json").read_text())
    rec = summary["records"]
    assert rec == local["records"] == json.loads((tmp_path / "reparsed" / "summary.json").read_text())["records"]
    assert rec["records_total"] == rec["pages_read"] + rec["images"] + sum(rec["skipped"].values())
    assert rec["images"] == 4 and rec["skipped"]["empty-body"] == 1 and rec["skipped"]["request"] == 1
    assert summary["pages"]["in_output"] == summary["pages"]["read"] == len(spark_rows)
    assert summary["clusters"] == local["clusters"] and summary["pairs"] == local["pairs"]
    assert _lines(tmp_path / "spark" / "pairs.jsonl") == _lines(tmp_path / "local" / "pairs.jsonl")

    # Again on the same index: every page is known (dropped on the driver), nothing changes.
    out = tmp_path / "again"
    index = tmp_path / "spark" / "index.sqlite"
    assert main(["dedup", *args, "--out", str(out), "--index", str(index), "--runner", "spark", "--spark-master", "local[2]"]) == 0
    again = json.loads((out / "summary.json").read_text())
    assert again["pages"]["already_indexed"] == again["pages"]["read"] == summary["pages"]["read"]
    assert _lines(out / "clusters.jsonl") == local_rows

    # Pass 1 alone: the partitions' models merged equal the local runner's model.
    from pagetwin.learned import Learned, Learning
    from pagetwin.runners.local import LocalEngine

    settings = Settings()
    settings.match.algorithms = ["exact", "simhash", "minhash", "con", "images"]
    settings.keywords.weighting = "tfidf"  # so pass 1 learns document frequencies too
    inputs = [str(warc), str(folder)]
    engine = spark.SparkEngine(master="local[2]")
    try:
        learning = Learning.for_dedup(settings)
        merged = engine.learn(inputs, settings, learning)
        jsc = engine._session.sparkContext._jsc
        # The pages pass 1 kept wait for pass 2, held by Spark: one persisted RDD.
        assert engine._kept is not None and jsc.getPersistentRDDs().size() == 1
        engine.close()
        assert engine._kept is None
        # A pass 1 that fails lets go of what it kept.
        def failing_merge(*_):
            raise RuntimeError("planted")

        with monkeypatch.context() as m:
            m.setattr(Learned, "merge", failing_merge)
            with pytest.raises(RuntimeError, match="planted"):
                engine.learn(inputs, settings, learning)
        jsc = engine._session.sparkContext._jsc
        assert engine._kept is None and jsc.getPersistentRDDs().isEmpty()
    finally:
        engine.close()
    single = LocalEngine().learn(inputs, settings, learning)
    # Documents: the WARC's 10 distinct responses (a2 is a byte-identical a), the folder's 8 + 6
    # distinct pages (each copy sits in its original's partition, so it is counted once).
    assert merged.doc_freq == single.doc_freq and merged.doc_freq.n_docs_ == 10 + 8 + 6
    assert merged.image_hashes == single.image_hashes and len(merged.image_hashes) == 4
    assert sorted(merged.templates.sites_) == sorted(single.templates.sites_)
    for site, counts in single.templates.compact().sites_.items():
        other = merged.templates.sites_[site]
        assert other.pages == counts.pages
        assert dict(zip(other.hash_keys.tolist(), other.hash_pages.tolist())) == dict(
            zip(counts.hash_keys.tolist(), counts.hash_pages.tolist())
        )
    print(f"spark dedup of {rec['pages_read']} pages: {spark_seconds:.1f} s (session start included)")


# -- units of work: the local runner's ids and accounting, without Spark ------------------


def _units_pages(inputs: list[str], per_task: int) -> tuple[list[tuple[str, str, str]], SourceStats]:
    engine = object.__new__(spark.SparkEngine)  # no session (nor pyspark) needed for the units
    engine.files_per_task = per_task
    stats = SourceStats()
    settings = Settings()
    pages = [
        (p.id, p.url, p.payload_digest)
        for unit in engine.units(inputs, stats)
        for p in spark.unit_pages(unit, settings, stats, want_images=False)
    ]
    return pages, stats


@pytest.mark.parametrize("per_task", [1, 2, 256])
def test_units_read_what_the_local_runner_reads(tmp_path, per_task):
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    warc, folder, _ = _inputs(tmp_path)
    (folder / "docs" / "link").symlink_to(folder / "blog")  # not followed, as iter_folder does
    (folder / "bad.html").write_bytes(b"\x00\x01\x02" * 100)  # binary: skipped with a reason
    inputs = [str(folder), str(warc), str(folder / "blog" / "p01.html")]
    expected_stats = SourceStats()
    expected = [(p.id, p.url, p.payload_digest) for p in iter_pages(inputs, Settings().input, expected_stats)]
    got, stats = _units_pages(inputs, per_task)
    assert got == expected
    assert stats.to_dict() == expected_stats.to_dict() and stats.consistent()
    assert "blog/p00 copy.html" in [i for i, _, _ in got] and "p01.html" in [i for i, _, _ in got]


@hsettings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "a", "a/b", "B", "a/c d"]), st.sampled_from(
    ["x.html", "Y.HTM", "z.htm", "_1.html", "a.html", "b.txt", "a"])), max_size=12))
def test_folder_files_in_iter_folder_order(layout):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        for sub, name in layout:
            d = root / sub
            if any(p.exists() and not p.is_dir() for p in (d, *d.parents)):
                continue  # a file already stands where this folder would go
            d.mkdir(parents=True, exist_ok=True)
            target = d / name
            if not target.exists():
                target.write_text(f"<html><body><p>{sub}/{name}</p></body></html>")
        expected = [p.id for p in iter_pages([str(root)], Settings().input, SourceStats())]
        got = [rel for _, rel in spark.folder_files(str(root), SourceStats())]
        # Files that read as pages keep their order; folder_files lists every HTML file.
        assert [rel for rel in got if rel in expected] == expected


# -- usage errors -------------------------------------------------------------------------


def test_without_pyspark_a_one_line_usage_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    with pytest.raises(ConfigError, match=r"pip install 'pagetwin\[spark\]'.*Java 17"):
        spark.SparkEngine()
    html = tmp_path / "a.html"
    html.write_text(page("One", article(1)))
    assert main(["dedup", str(html), "--out", str(tmp_path / "out"), "--runner", "spark"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "pyspark" in err and "pip install 'pagetwin[spark]'" in err
    assert not (tmp_path / "out" / "clusters.jsonl").exists()


def test_without_java_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark", types.ModuleType("pyspark"))  # installed or not
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match=r"needs Java.*Java 17"):
        spark.SparkEngine()
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    assert spark._java() == str(java) and os.access(spark._java(), os.X_OK)


# -- pass 2 on pass 1's parsed pages (run.reuse_parse), the executors' code without Spark ------


def _passes(units: list, settings: Settings, reuse: bool, token: str) -> tuple[list, list, SourceStats]:
    """Both passes as the executors run them, one partition per unit, in this process: (pass 1's
    model as bytes, pass-2 results, the counts pass 2 reports)."""
    from pagetwin.learned import Learning
    from pagetwin.runners.spark_learn import fold_in_process

    learning = Learning.for_dedup(settings)
    pass1 = types.SimpleNamespace(value=(f"{token}-1", settings, learning, None))  # what a broadcast offers
    if reuse:
        kept = [list(spark._learn_partition_keeping(pass1, i, [unit])) for i, unit in enumerate(units)]
        items = [[value for tag, value in part if tag == spark._LEARNED] for part in kept]
    else:
        items = [list(spark._learn_partition(pass1, i, [unit])) for i, unit in enumerate(units)]
    learned = fold_in_process(items, settings, learning)
    pass2 = types.SimpleNamespace(value=(f"{token}-2", settings, learned))
    if reuse:
        out = [pair for part in kept for pair in spark._fingerprint_kept(pass2, part)]
    else:
        out = [pair for unit in units for pair in spark._fingerprint_partition(pass2, [unit])]
    results, stats = [], SourceStats()
    for part_stats, result in out:
        if part_stats is not None:
            stats.merge(part_stats)
        else:
            results.append(result)
    return learned.to_bytes(), results, stats


@pytest.mark.parametrize("spill_fails", [False, True])
def test_executors_parse_each_page_once_with_reuse(tmp_path, monkeypatch, spill_fails):
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    import pagetwin.pipeline as pipeline
    from pagetwin.runners.spill import ParsedSpill

    warc, folder, _ = _inputs(tmp_path)
    engine = object.__new__(spark.SparkEngine)
    engine.files_per_task = 4
    units = engine.units([str(warc), str(folder)], SourceStats())
    settings = Settings()
    settings.match.algorithms = ["exact", "simhash", "minhash", "images"]
    parses: list[int] = []
    real = pipeline.parse_limited

    def counting(html, max_depth):
        parses.append(len(html))
        return real(html, max_depth)

    monkeypatch.setattr(pipeline, "parse_limited", counting)
    if spill_fails:  # a full disk: the partition's pages are read again and parsed in pass 2
        def full(spill):
            spill._give_up(OSError(28, "No space left on device"))

        monkeypatch.setattr(ParsedSpill, "finish", full)
    model, results, stats = _passes(units, settings, reuse=True, token=f"reuse-{spill_fails}")
    reused_parses = len(parses)
    parses.clear()
    expect_model, expect, expect_stats = _passes(units, settings, reuse=False, token=f"again-{spill_fails}")

    responses = [r for r in expect if r.page.kind == "response"]
    assert len(responses) > 20 and len(parses) == 2 * len(responses)  # twice without reuse
    assert reused_parses == (len(parses) if spill_fails else len(responses))
    assert model == expect_model
    fields = lambda r: (r.page, r.doc, r.features, r.keys, r.error, r.replaced_chars, r.flattened)  # noqa: E731
    assert [fields(r) for r in results] == [fields(r) for r in expect]
    assert all(not r.page.body and not r.page.parsed for r in results)
    if spill_fails:
        assert len(stats.errors) == len(units) and "No space left" in stats.errors[0]
        stats.errors = []
    assert stats.to_dict() == expect_stats.to_dict()


@pytest.mark.parametrize(
    "path, uri",
    [("file:///tmp/a.warc.gz", True), ("file:/tmp/a.warc.gz", True), ("hdfs://nn/crawl/", True),
     ("s3a://bucket/*.warc.gz", True), ("/tmp/a.warc.gz", False), ("crawl/a.warc.gz", False),
     (r"C:\crawl\a.warc.gz", False), ("a:b.warc", False)],
)  # fmt: skip
def test_uri_inputs_are_told_from_local_paths(path, uri):
    """URIs go to Spark's Hadoop file systems (runners.spark.uri_inputs), each file one unit; a
    local path, even one with a drive letter, to the local runner's expansion."""
    from pagetwin.sources import is_uri

    assert is_uri(path) is uri
    assert spark.SparkEngine.units(types.SimpleNamespace(files_per_task=2), [path], SourceStats()) == [(path, None)]


def test_a_uri_units_bytes_are_read_as_the_file_and_named_by_it():
    """A URI's file comes to its task as bytes (binaryFiles): the same pages as the local file,
    named by the URI, and a damaged file's messages name the URI, not the temporary copy."""
    example = Path(__file__).resolve().parents[2] / "examples" / "debian-docs.warc.gz"
    data = example.read_bytes()
    uri = "hdfs://nn/crawl/debian-docs.warc.gz"
    local = list(iter_pages([str(example)], Settings().input, SourceStats()))
    stats = SourceStats()
    ours = list(spark.unit_pages((uri, data), Settings(), stats, False))
    assert [p.id for p in ours] == [p.id for p in local] and len(ours) > 50
    assert {p.source for p in ours} == {uri} and stats.pages_read == len(local)
    stats = SourceStats()
    cut = list(spark.unit_pages(("s3a://b/cut.warc.gz", data[: len(data) // 2]), Settings(), stats, False))
    assert 0 < len(cut) < len(ours) and stats.errors
    assert all("s3a://b/cut.warc.gz" in e for e in stats.errors) and "pagetwin-" not in " ".join(stats.errors)


def test_a_local_session_runs_the_client_compiler_and_the_serial_collector(tmp_path):
    # Its own process: a JVM already started by another test keeps the options it started with.
    _need_spark()
    import subprocess
    import sys

    probe = (
        "from pagetwin.config import Settings\n"
        "from pagetwin.runners.spark import SparkEngine\n"
        "engine = SparkEngine(master='local[1]')\n"
        "sc = engine._context(Settings())\n"
        "mf = sc._jvm.java.lang.management.ManagementFactory\n"
        "print(sorted(b.getName() for b in mf.getGarbageCollectorMXBeans()))\n"
        "print(list(mf.getRuntimeMXBean().getInputArguments()))\n"
        "engine.close()\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    collectors, arguments = out.stdout.strip().splitlines()[-2:]
    assert "MarkSweepCompact" in collectors  # the serial collector's old generation, not G1's
    assert "-XX:TieredStopAtLevel=1" in arguments and "log4j2.configurationFile" in arguments
    assert spark._local_jvm_options("spark://cluster:7077") == []
