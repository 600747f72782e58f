"""bench.spark_scale: its measurements read what they say (shuffle bytes from an event log, the
outputs' bytes, a process tree's memory), on files and processes the test makes."""

from __future__ import annotations

import json
import os
import sys

from bench.spark_scale import _bytes_under, _measured, _rows, _shuffle_bytes


def test_shuffle_bytes_are_summed_over_the_task_ends_of_every_log(tmp_path):
    end = {"Event": "SparkListenerTaskEnd", "Task Metrics": {"Shuffle Write Metrics": {"Shuffle Bytes Written": 700}}}
    other = {"Event": "SparkListenerTaskStart"}
    (tmp_path / "app-1").write_text("\n".join(json.dumps(e) for e in (other, end, end)) + "\n")
    (tmp_path / "eventlog_v2_app-2").mkdir()  # Spark 4: a folder of rolled files per application
    (tmp_path / "eventlog_v2_app-2" / "events_1_app-2").write_text(json.dumps(end) + "\n")
    (tmp_path / "eventlog_v2_app-2" / "appstatus_app-2").write_text("")
    (tmp_path / "app-3").write_text(json.dumps({**end, "Task Metrics": {}}) + "\n")
    assert _shuffle_bytes(str(tmp_path)) == 2100


def test_outputs_bytes_count_part_folders_and_files(tmp_path):
    (tmp_path / "clusters.jsonl").mkdir()
    (tmp_path / "clusters.jsonl" / "part-00000.txt").write_text('{"id": "a", "cluster": "c1", "keep": true}\n')
    (tmp_path / "clusters.jsonl" / "part-00001.txt").write_text('{"id": "b", "cluster": "c1", "keep": false}\n')
    (tmp_path / "pairs.jsonl").write_text("x" * 10)
    assert _bytes_under(tmp_path, ("clusters.jsonl", "pairs.jsonl", "absent")) == os.path.getsize(
        tmp_path / "clusters.jsonl" / "part-00000.txt"
    ) * 2 + 1 + 10
    assert [r["id"] for r in _rows(tmp_path, spark=True)] == ["a", "b"]


def test_measured_sees_the_process_and_its_children():
    code = "import json, subprocess, sys; b = bytearray(60 << 20); subprocess.run([sys.executable, '-c', 'x = bytearray(40 << 20); import time; time.sleep(1)']); print(json.dumps({'ok': 1}))"
    m = _measured([sys.executable, "-c", code])
    assert m["child"] == {"ok": 1} and m["seconds"] > 0.5
    assert m["peak_bytes"]["driver"] >= 60 << 20 and m["peak_bytes"]["workers"] >= 40 << 20


def test_explain_report_and_the_models_bytes_of_a_local_index(tmp_path):
    """--explain-report on two outputs of the same crawl (here a full and a lean local index:
    explain reads a Spark output the same way) finds them equal pair for pair; --lean-report
    gives the index's stored models' bytes."""
    from pathlib import Path

    from bench.spark_scale import explain_report, lean_report
    from pagetwin.cli import main

    example = Path(__file__).resolve().parents[2] / "examples" / "debian-docs.warc.gz"
    assert main(["dedup", str(example), "--out", str(tmp_path / "full"), "--workers", "1"]) == 0
    assert main(["dedup", str(example), "--out", str(tmp_path / "lean"), "--workers", "1", "--set", "index.store_text=false"]) == 0
    got = explain_report(tmp_path / "lean", tmp_path / "full", pairs=3)
    assert got["pairs"] == 6 and got["equal"] == 6 and got["text_problems"] == 0
    assert set(got["cpu_ms_a_pair"]) == {"spark", "local"} and all(v > 0 for v in got["cpu_ms_a_pair"].values())
    report = lean_report(tmp_path / "lean")
    assert report["models_bytes"] > 10_000 and report["models_bytes_per_page"] == round(report["models_bytes"] / report["pages"], 1)


def test_compare_counts_the_rows_that_differ_and_the_halves_run_alone(tmp_path, capsys):
    """--compare reads a Spark output's part files and a local clusters.jsonl: equal rows are
    the same, a moved kept page and a missing row count; --no-local with --no-spark is refused."""
    import pytest

    from bench.spark_scale import compare_rows, main

    rows = [{"id": "a", "cluster": "c1", "keep": True}, {"id": "b", "cluster": "c1", "keep": False},
            {"id": "c", "cluster": "c3", "keep": True}]  # fmt: skip
    spark, local = tmp_path / "spark", tmp_path / "local"
    (spark / "clusters.jsonl").mkdir(parents=True)
    (spark / "clusters.jsonl" / "part-00000.txt").write_text("".join(json.dumps(r) + "\n" for r in rows[:2]))
    (spark / "clusters.jsonl" / "part-00001.txt").write_text(json.dumps(rows[2]) + "\n")
    local.mkdir()
    (local / "clusters.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert compare_rows(spark, local) == {"same_clusters_and_kept_pages": True, "rows_differing": 0}
    moved = [{**rows[0], "keep": False}, {**rows[1], "keep": True}]
    (local / "clusters.jsonl").write_text("".join(json.dumps(r) + "\n" for r in moved))
    assert main(["--compare", str(spark), str(local)]) == 0
    assert json.loads(capsys.readouterr().out) == {"same_clusters_and_kept_pages": False, "rows_differing": 3}
    with pytest.raises(SystemExit) as refused:
        main(["--no-local", "--no-spark", "--pages", "10"])
    assert refused.value.code == 2


def test_a_corpus_glob_names_the_shards_of_one_crawl_in_order(tmp_path):
    import pytest

    from bench.spark_scale import crawl_files

    for name in ("part-1.warc.gz", "part-0.warc.gz", "part-0.warc.gz.truth.jsonl", "other.warc.gz"):
        (tmp_path / name).write_bytes(b"")
    assert crawl_files(tmp_path / "part-*.warc.gz") == [str(tmp_path / "part-0.warc.gz"), str(tmp_path / "part-1.warc.gz")]
    assert crawl_files(tmp_path / "other.warc.gz") == [str(tmp_path / "other.warc.gz")]
    with pytest.raises(SystemExit, match="no file matches"):
        crawl_files(tmp_path / "none-*.warc.gz")
