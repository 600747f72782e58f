"""sources.base: the record accounting every reader shares (SourceStats, Skip, InputError)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pagetwin.model import Page
from pagetwin.sources.base import MAX_EXAMPLES, InputError, SourceStats

# One record: ("page", kind) or ("skip", reason)
RECORDS = st.lists(
    st.one_of(
        st.tuples(st.just("page"), st.sampled_from(["response", "revisit", "image"])),
        st.tuples(st.just("skip"), st.sampled_from(["not-html", "http-status-404", "request"])),
    ),
    max_size=40,
)


def _count(records) -> SourceStats:
    stats = SourceStats()
    for what, value in records:
        if what == "page":
            stats.count_page(Page("id", "https://x.example/", kind=value))
        else:
            stats.skip(value, "file.warc.gz", "https://x.example/")
    return stats


@given(RECORDS)
def test_every_record_is_a_page_an_image_or_a_skip(records):
    stats = _count(records)
    assert stats.consistent()
    assert stats.records_total == len(records)
    assert stats.revisits == sum(1 for r in records if r == ("page", "revisit"))


@given(RECORDS, RECORDS)
def test_merging_two_shards_counts_what_one_pass_counts(a, b):
    """Spark and the spill merge per-shard stats: the sum of the shards is the whole."""
    merged = _count(a)
    merged.merge(_count(b))
    whole = _count(a + b)
    assert merged.to_dict() == whole.to_dict()


def test_examples_per_reason_are_bounded_counts_are_not():
    stats = SourceStats()
    for i in range(50):
        stats.skip("not-html", "f.warc", f"https://x.example/{i}")
    assert stats.skipped["not-html"] == 50
    assert len(stats.examples["not-html"]) == MAX_EXAMPLES


def test_ignored_files_are_not_records():
    stats = SourceStats()
    stats.ignore_file("crawl/index.cdx")
    assert stats.files_ignored == 1 and stats.records_total == 0 and stats.consistent()


def test_file_errors_are_one_line():
    stats = SourceStats()
    stats.error("a.warc.gz: truncated\ngzip member\r\n at byte 12")
    assert stats.errors == ["a.warc.gz: truncated gzip member at byte 12"]


def test_an_input_error_lists_its_problems():
    assert InputError("no such file: a").problems == ["no such file: a"]
    assert InputError("2 inputs", ["a: missing", "b: missing"]).problems == ["a: missing", "b: missing"]
