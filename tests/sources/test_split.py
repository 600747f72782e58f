"""sources.split: the byte ranges of a WARC file together read every record exactly once, as
one read of the file does, whatever the split points."""

from __future__ import annotations

import glob
import gzip
import hashlib
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.config import InputSettings
from pagetwin.outputs.warc import WarcWriter
from pagetwin.sources import SourceStats, iter_pages
from pagetwin.sources.split import archive_format, boundary, file_ranges, range_pages, ranges
from tests.fixtures.records import arc_file, arc_record, html_page, http

SHARED_WARC = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "warc"


def _key(page):
    return (page.id, page.url, page.meta.get("warc_offset"), page.kind, page.payload_digest, hashlib.sha1(page.body).hexdigest())


def _whole(path):
    stats = SourceStats()
    pages = [_key(p) for p in iter_pages([str(path)], InputSettings(), stats)]
    return pages, stats


def _split(path, split_bytes):
    stats = SourceStats()
    pages = []
    for start, end in ranges(Path(path).stat().st_size, split_bytes):
        pages.extend(_key(p) for p in range_pages(str(path), start, end, InputSettings(), stats))
    return pages, stats


def _same_as_whole(path, split_bytes):
    (whole, ws), (parts, ps) = _whole(path), _split(path, split_bytes)
    assert parts == whole, f"{path} split every {split_bytes} bytes"
    assert ps.records_total == ws.records_total and ps.skipped == ws.skipped and ps.pages_read == ws.pages_read
    assert ps.errors == ws.errors
    return whole


def _crawl(path: Path, gzip: bool, seed: int = 7, n: int = 40) -> Path:
    """A WARC of ``n`` responses of random sizes (a few far larger than the others, so that
    members straddle split points), with a request and a metadata record between some."""
    rnd = random.Random(seed)
    with WarcWriter(str(path), gzip=gzip) as w:
        for i in range(n):
            words = rnd.choice([5, 40, 300, 1500]) if i % 7 else 6000
            w.write_response(f"http://site{i % 5}.example/p{i}", html_page(f"Page{i}", words))
            if i % 9 == 0:
                w.write_resource(f"http://site{i % 5}.example/n{i}.txt", b"a note: WARC/1.0\r\nWARC-Type: x\r\n\r\n", "text/plain")
    return path


@pytest.mark.parametrize("gzip", [True, False], ids=["warc.gz", "warc"])
@pytest.mark.parametrize("split_bytes", [700, 4096, 65536, 10**9])
def test_the_ranges_of_a_generated_warc_read_what_one_read_does(tmp_path, gzip, split_bytes):
    path = _crawl(tmp_path / ("c.warc.gz" if gzip else "c.warc"), gzip)
    pages = _same_as_whole(path, split_bytes)
    assert len(pages) >= 40


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(split_bytes=st.integers(min_value=2000, max_value=100_000), gzip=st.booleans(), seed=st.integers(0, 3))
def test_any_split_size_reads_every_record_once(tmp_path_factory, split_bytes, gzip, seed):
    folder = tmp_path_factory.mktemp("split")
    path = _crawl(folder / ("c.warc.gz" if gzip else "c.warc"), gzip, seed, n=15)
    _same_as_whole(path, split_bytes)


def test_a_range_inside_one_large_member_reads_nothing_and_its_first_range_reads_it(tmp_path):
    path = _crawl(tmp_path / "c.warc.gz", True, n=3)
    size = path.stat().st_size
    with open(path, "rb") as fh:
        starts = [0]
        while True:
            nxt = boundary(fh, starts[-1] + 1, size, "gzip")
            if nxt is None:
                break
            starts.append(nxt)
    assert len(starts) >= 3  # one member a record (the writer's), none found inside them
    first, second = starts[0], starts[1]
    assert [p for p in range_pages(str(path), first + 1, second - 1, InputSettings(), SourceStats())] == []
    one = list(range_pages(str(path), first, second, InputSettings(), SourceStats()))
    assert len(one) == 1 and one[0].meta["warc_offset"] == 0


def test_damage_between_members_is_counted_once_by_the_range_it_starts_in(tmp_path):
    good = _crawl(tmp_path / "good.warc.gz", True, n=10).read_bytes()
    with open(tmp_path / "good.warc.gz", "rb") as fh:
        middle = boundary(fh, len(good) // 2, len(good), "gzip")
    path = tmp_path / "bad.warc.gz"
    path.write_bytes(good[:middle] + b"junk that is no gzip member, \x1f\x8b\x08 nor this\n" * 40 + good[middle:])
    whole, stats = _whole(path)
    assert stats.skipped.get("corrupt-gzip", 0) >= 1  # the junk, and each gzip magic in it
    for split_bytes in (500, 1500, middle + 10, middle + 700):
        assert _same_as_whole(path, split_bytes) == whole
    junk_start = tmp_path / "junk.warc.gz"
    junk_start.write_bytes(b"junk\n" + good)  # no longer a gzip file: read whole, by its first range
    assert archive_format(str(junk_start)) is None
    _same_as_whole(junk_start, 1500)


def test_only_warcs_are_split(tmp_path):
    path = _crawl(tmp_path / "c.warc.gz", True, n=20)
    assert archive_format(str(path)) == "gzip" and len(file_ranges(str(path), 4096)) > 1
    plain = _crawl(tmp_path / "c.warc", False, n=20)
    assert archive_format(str(plain)) == "plain" and len(file_ranges(str(plain), 4096)) > 1
    other = tmp_path / "pages.jsonl"
    other.write_bytes(b'{"url": "http://a.example/", "html": "<p>x</p>"}\n' * 2000)
    assert archive_format(str(other)) is None and file_ranges(str(other), 4096) == [(0, other.stat().st_size)]
    assert file_ranges(str(path), 0) == [(0, path.stat().st_size)]


def test_a_gzipped_arc_file_is_not_split(tmp_path):
    """A gzipped ARC starts with a gzip member as a gzipped WARC does; read as WARC ranges its
    records were all damage (a real crawl's 300 records lost with spark.tasks_per_core)."""
    records = [arc_record(f"http://old.example/{i}", http(html_page(f"Page{i}", 400))) for i in range(30)]
    path = tmp_path / "old.arc.gz"  # one gzip member a record, as ARC writers do
    path.write_bytes(gzip.compress(arc_file([])) + b"".join(gzip.compress(r) for r in records))
    assert path.stat().st_size > 4096
    assert archive_format(str(path)) is None and file_ranges(str(path), 4096) == [(0, path.stat().st_size)]


def test_ranges_cover_the_file():
    assert ranges(10, 0) == [(0, 10)] and ranges(10, 10) == [(0, 10)]
    assert ranges(10, 4) == [(0, 4), (4, 8), (8, 10)]


def _shared_warcs():
    if not SHARED_WARC.is_dir():
        return []
    return sorted(glob.glob(str(SHARED_WARC / "*.warc.gz"))) + sorted(glob.glob(str(SHARED_WARC / "*" / "*.warc.gz")))


@pytest.mark.parametrize("split_bytes", [50_000, 333_333])
def test_the_ranges_of_the_shared_crawls_read_what_one_read_does(split_bytes):
    paths = _shared_warcs()
    if not paths:
        pytest.skip(f"{SHARED_WARC} is missing (the shared data set)")
    split_some = 0
    for path in paths:
        _same_as_whole(path, split_bytes)
        split_some += len(file_ranges(path, split_bytes)) > 1
    assert split_some >= 3
