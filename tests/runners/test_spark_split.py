"""Large WARC files read by several Spark tasks (spark.split_bytes, sources.split): the
ranges' pages are the file's, in order, and a run's outputs are the local runner's."""

from __future__ import annotations

import pytest

from pagetwin.cli import main
from pagetwin.config import Settings
from pagetwin.runners import spark
from pagetwin.sources import SourceStats, iter_pages
from tests.runners.test_spark import _inputs, _need_spark


def _pages(units, stats):
    settings = Settings()
    return [(p.id, p.url, p.payload_digest, p.meta.get("warc_offset"))
            for unit in units for p in spark.unit_pages(unit, settings, stats, want_images=False)]  # fmt: skip


@pytest.mark.parametrize("split_bytes", [1000, 20_000, 0])
def test_a_split_warc_gives_its_pages_in_order_each_once(tmp_path, split_bytes):
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    warc, folder, _ = _inputs(tmp_path)
    inputs = [str(folder), str(warc)]
    expected_stats = SourceStats()
    expected = [(p.id, p.url, p.payload_digest, p.meta.get("warc_offset")) for p in iter_pages(inputs, Settings().input, expected_stats)]
    stats = SourceStats()
    units = spark.SparkEngine().units(inputs, stats, split_bytes)
    ranges = [u for u in units if isinstance(u[1], tuple)]
    assert (len(ranges) > 2) == (split_bytes > 0) and all(u[0] == str(warc) for u in ranges)
    assert _pages(units, stats) == expected
    assert stats.to_dict() == expected_stats.to_dict() and stats.consistent()


def test_spark_with_split_warcs_gives_the_local_runners_outputs(tmp_path):
    _need_spark()
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    warc, folder, _ = _inputs(tmp_path)
    args = [str(warc), str(folder), "--algorithms", "exact,simhash,minhash,con"]
    assert main(["dedup", *args, "--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    assert main(["dedup", *args, "--out", str(tmp_path / "spark"), "--runner", "spark", "--spark-master", "local[2]",
                 "--set", "spark.split_bytes=3000"]) == 0  # fmt: skip
    for name in ("clusters.jsonl", "pairs.jsonl"):
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name


def test_small_crawls_are_split_to_occupy_every_core(tmp_path, monkeypatch):
    """spark.tasks_per_core: the ranges shrink (not under MIN_SPLIT) until the local WARC files
    given make that many tasks a core; spark.split_bytes stays the largest range; 0 turns either off."""
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    warc, folder, _ = _inputs(tmp_path)
    size = warc.stat().st_size
    engine = spark.SparkEngine()
    monkeypatch.setattr(engine, "_context", lambda settings: type("Context", (), {"defaultParallelism": 2})())
    monkeypatch.setattr(spark, "MIN_SPLIT", 1000)
    settings = Settings()
    assert engine.split_size([str(warc)], settings) == settings.spark.split_bytes  # off by default
    settings.set("spark.tasks_per_core", 4)
    assert engine.split_size([str(warc), str(folder)], settings) == max(1000, -(-size // 8))  # 4 tasks x 2 cores
    units = engine.units([str(warc)], SourceStats(), engine.split_size([str(warc)], settings))
    assert 4 <= len(units) <= 8 and all(isinstance(u[1], tuple) for u in units)
    settings.set("spark.split_bytes", 2000)
    assert engine.split_size([str(warc)], settings) == 2000  # never larger than spark.split_bytes
    settings.set("spark.tasks_per_core", 0)
    assert engine.split_size([str(warc)], settings) == 2000
    settings.set("spark.split_bytes", 0)
    settings.set("spark.tasks_per_core", 4)
    assert engine.split_size([str(warc)], settings) == 0
    monkeypatch.setattr(spark, "MIN_SPLIT", 1 << 20)
    settings.set("spark.split_bytes", 128 << 20)
    assert engine.split_size([str(warc)], settings) == 1 << 20  # a small crawl is not cut into tiny tasks
