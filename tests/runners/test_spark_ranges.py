"""runners/spark_ranges.py: a URI file's byte ranges, their bytes streamed in chunks (as the
executors' JVM streams them) and spooled by the Python task, read what the local file's ranges
read: the same pages, offsets, skips and messages (naming the URI), whatever the split and
chunk sizes, on clean and damaged WARC files; and through Spark, on ``file:`` URIs, a run's
outputs are the local runner's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.cli import main
from pagetwin.config import Settings
from pagetwin.runners import spark, spark_ranges
from pagetwin.sources import SourceStats
from pagetwin.sources.split import HEAD_BYTES, boundary, file_ranges, range_pages
from tests.runners.test_spark import _inputs, _need_spark
from tests.sources.test_split import _crawl, _key



def _uri(path: Path) -> str:
    return f"hdfs://namenode/crawl/{path.name}"  # the name tells the readers its kind, as a path's does


def _chunks(path: Path, start: int, step: int, pulled: list[int]):
    """The file's bytes from ``start`` on, ``step`` at a time, as (offset, bytes); ``pulled``
    gets the bytes handed out."""
    with open(path, "rb") as fh:
        fh.seek(start)
        at = start
        while data := fh.read(step):
            pulled.append(len(data))
            yield at, data
            at += len(data)


def _streamed(path: Path, split_bytes: int, step: int) -> tuple[list, SourceStats, int]:
    """The pages of every range of ``path`` as a URI's ranges are read on an executor."""
    size, head = path.stat().st_size, path.read_bytes()[:HEAD_BYTES]
    stats, pages, pulled = SourceStats(), [], []
    for start, end in file_ranges(str(path), split_bytes):
        rc = spark_ranges.RangeChunks(start, end, size, head, _chunks(path, start, step, pulled))
        pages.extend(_key(p) + (p.source,) for p in spark_ranges.range_pages(_uri(path), rc, Settings(), stats, False))
    return pages, stats, sum(pulled)


def _local(path: Path, split_bytes: int) -> tuple[list, SourceStats]:
    stats, pages = SourceStats(), []
    for start, end in file_ranges(str(path), split_bytes):
        pages.extend(_key(p) + (_uri(path),) for p in range_pages(str(path), start, end, Settings().input, stats))
    return pages, stats


def _same(path: Path, split_bytes: int, step: int) -> list:
    (ours, os_, pulled), (local, ls) = _streamed(path, split_bytes, step), _local(path, split_bytes)
    assert ours == local, f"split every {split_bytes}, chunks of {step}"
    assert {k: v for k, v in os_.to_dict().items() if k != "errors"} == {k: v for k, v in ls.to_dict().items() if k != "errors"}
    assert os_.errors == [e.replace(str(path), _uri(path)) for e in ls.errors]
    return ours


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(split_bytes=st.integers(1500, 60_000), step=st.integers(100, 70_000), gzip=st.booleans(), seed=st.integers(0, 3))
def test_streamed_ranges_read_what_local_ranges_read(tmp_path_factory, split_bytes, step, gzip, seed):
    path = _crawl(tmp_path_factory.mktemp("r") / ("c.warc.gz" if gzip else "c.warc"), gzip, seed, n=15)
    assert len(_same(path, split_bytes, step)) >= 15


def test_damage_is_counted_as_locally_and_named_by_the_uri(tmp_path):
    good = _crawl(tmp_path / "good.warc.gz", True, n=12).read_bytes()
    with open(tmp_path / "good.warc.gz", "rb") as fh:
        middle = boundary(fh, len(good) // 2, len(good), "gzip")
    path = tmp_path / "c.warc.gz"
    # junk between two members, and the last member cut short
    path.write_bytes(good[:middle] + b"junk, no gzip member \x1f\x8b\x08 here\n" * 30 + good[middle:-40])
    for split_bytes, step in ((700, 333), (middle + 50, 4096), (5000, 1 << 20)):
        _same(path, split_bytes, step)
    _, stats, _ = _streamed(path, 700, 333)
    assert stats.skipped.get("corrupt-gzip", 0) >= 1 and any(_uri(path) in e for e in stats.errors)


def test_a_range_pulls_its_own_bytes_not_the_files(tmp_path):
    """Each task stops pulling once its last record is read: the ranges together pull about
    the file once (each also pulls the record straddling its end, and a chunk ahead)."""
    path = _crawl(tmp_path / "c.warc.gz", True, n=600)
    size = path.stat().st_size
    _, _, pulled = _streamed(path, size // 8, 4096)
    # beyond its own bytes, a range reads at most: two probes (its first boundary's scan and
    # the next one's), a chunk ahead, and the record straddling its end (< 40 KB here)
    assert size > 1 << 20 and size <= pulled < size + 9 * (2 * HEAD_BYTES + 4096 + 40_000)


def _parts(folder: Path) -> bytes:
    """A folder of part files (the executors' JSONL), joined in part order."""
    return b"".join(f.read_bytes() for f in sorted(folder.glob("part-*")))


def _spark_run(args: list[str], out: Path, *extra: str) -> dict:
    assert main(["dedup", *args, "--out", str(out), "--runner", "spark", "--spark-master", "local[2]", *extra]) in (0, 3)
    return json.loads((out / "summary.json").read_text())


def test_file_uris_split_through_spark_give_the_local_runners_outputs(tmp_path):
    """A ``file:`` URI read by byte ranges through Spark (the JVM streams each range; 8 tasks
    for a 460 KB crawl): clusters.jsonl and pairs.jsonl byte-identical to the local runner's,
    and a damaged crawl's skips and messages the same (named by the URI)."""
    _need_spark()
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    warc, _, _ = _inputs(tmp_path)
    algos = ["--algorithms", "exact,simhash,minhash,con"]
    assert main(["dedup", str(warc), *algos, "--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    engine = spark.SparkEngine(master="local[2]")
    engine.context(Settings())
    units = engine.units([warc.as_uri()], SourceStats(), 60000)
    assert len(units) >= 6 and all(isinstance(u[1], tuple) and len(u[1]) == 4 for u in units), "not read by ranges"
    # ranges of 60 KB: 8 tasks (each task costs seconds of worker start-up: 23 tasks took 160 s,
    # 150 tasks of 3 KB 16 min on a loaded machine)
    split = ["--set", "spark.split_bytes=60000", "--set", "spark.link=executors"]  # URIs: the executors' link step
    _spark_run([warc.as_uri(), *algos], tmp_path / "spark", *split)
    for name in ("clusters.jsonl", "pairs.jsonl"):
        assert _parts(tmp_path / "spark" / name) == (tmp_path / "local" / name).read_bytes(), name
    # damaged: junk between two members, the last member cut short
    good = warc.read_bytes()
    with open(warc, "rb") as fh:
        middle = boundary(fh, len(good) // 2, len(good), "gzip")
    bad = tmp_path / "bad" / "bad.warc.gz"
    bad.parent.mkdir()
    bad.write_bytes(good[:middle] + b"junk, no gzip member \x1f\x8b\x08 here\n" * 30 + good[middle:-40])
    assert main(["dedup", str(bad), *algos, "--out", str(tmp_path / "bad-local"), "--workers", "1"]) in (0, 3)
    local = json.loads((tmp_path / "bad-local" / "summary.json").read_text())
    ours = _spark_run([bad.as_uri(), *algos], tmp_path / "bad-spark", *split)
    def counts(summary: dict) -> dict:
        return {k: v for k, v in summary["records"].items() if k != "errors"}

    assert counts(ours) == counts(local) and local["records"]["skipped"]
    # The messages are those of the local file's ranges (each range keeps its first few damage
    # messages and counts the rest, so a file whose damage spans ranges lists a line or two
    # more than one read of it does), named by the URI (as Hadoop's FileSystem names it).
    _, ranges_stats = _local(bad, 60000)
    uri = f"file:{bad}"
    assert ours["input_errors"] == [e.replace(str(bad), uri) for e in ranges_stats.errors] and ours["input_errors"]
    for name in ("clusters.jsonl", "pairs.jsonl"):
        assert _parts(tmp_path / "bad-spark" / name) == (tmp_path / "bad-local" / name).read_bytes(), name


def test_uri_files_read_whole_are_said_once(caplog):
    """A session without the byte-range reader (no javac, or spark-submit without --jars) reads
    each URI file whole: one warning says so, not one per file. (A stand-in session: its JVM
    cannot load the reader's class.)"""

    class NoJvm:
        _jvm = None  # classIsLoadable is not reachable: available() is False

    class Session:
        sparkContext = NoJvm()

    engine = spark.SparkEngine(master="local[1]")
    engine._session = Session()
    try:
        with caplog.at_level("WARNING", logger="pagetwin.runners.spark"):
            units = [u for uri in ("file:/a.warc.gz", "file:/b.warc.gz") for u in engine._uri_units(uri, 1 << 20)]
        assert units == [("file:/a.warc.gz", None), ("file:/b.warc.gz", None)]
        said = [r.getMessage() for r in caplog.records if "read whole" in r.getMessage()]
        assert len(said) == 1 and "javac" in said[0]
        # with splitting off (spark.split_bytes = 0) there is nothing to say
        engine._said_whole = False
        caplog.clear()
        engine._uri_units("file:/c.warc.gz", 0)
        assert not [r for r in caplog.records if "read whole" in r.getMessage()]
    finally:
        engine._session = None
