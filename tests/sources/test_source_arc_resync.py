"""ARC reading resynchronises after bad bytes: a damaged start, junk between records or a
corrupt gzip member cost a counted skip each, never the good records; a record whose length
field is wrong ends at the next record line and keeps its page (the record count stays true)."""

from __future__ import annotations

import gzip
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.sources.warc import parse_arc_line, sniff_archive
from tests.fixtures.records import arc_file, arc_record, html_page, http, read_all

URLS = [f"http://example.org/{i}" for i in range(4)]


def _records() -> list[bytes]:
    return [arc_record(url, http(html_page(f"Page{i}"))) for i, url in enumerate(URLS)]


def _layout() -> tuple[bytes, list[tuple[int, int]]]:
    """The ARC bytes and the (start, end) of each page record in them."""
    records = _records()
    head = arc_file([])
    spans, at = [], len(head)
    for rec in records:
        spans.append((at, at + len(rec)))
        at += len(rec)
    return head + b"".join(records), spans


def test_damaged_start_recovers_the_records_after_it(tmp_path):
    # The fuzz case: the first 199 bytes gone, the file starts inside the first page record.
    data, spans = _layout()
    cut = spans[0][0] + 60
    path = tmp_path / "damaged.arc"
    path.write_bytes(data[cut:])
    pages, stats = read_all([path])
    assert [p.url for p in pages] == URLS[1:]
    assert stats.skipped == {"malformed-record": 1}
    assert stats.records_total == 4
    assert stats.errors == [f"{path}: no ARC record line at byte 0; skipped {spans[1][0] - cut} bytes to the record at byte {spans[1][0] - cut}"]
    # the first page after the damage has the offset it has in the damaged file
    assert pages[0].id == f"damaged.arc:{spans[1][0] - cut}"


@pytest.mark.parametrize("gz", [False, True])
def test_fuzz_case_record_without_url_is_not_a_page(tmp_path, gz):
    # Found by test_mutated_arc_never_crashes_and_accounts_for_every_record: the file starts
    # with the tail of a record ("\r\nContent-Type: ..."). warcio's iterator read it as one
    # URL-less record holding the three good records after it.
    from tests.sources.test_source_fuzz import ARC, _mutate

    data = _mutate(ARC, [("delete", 0, 199)])
    assert data.startswith(b"\r\nContent-Type: text/html")
    path = tmp_path / ("fuzz.arc.gz" if gz else "fuzz.arc")
    path.write_bytes(gzip.compress(data) if gz else data)
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["http://example.org/1", "http://example.org/2", "http://example.org/3"]
    assert stats.skipped == {"malformed-record": 1} and stats.records_total == 4
    assert len(stats.errors) == 1 and "no ARC record line at" in stats.errors[0] and "byte 2;" in stats.errors[0]


def test_junk_between_two_records(tmp_path):
    data, spans = _layout()
    junk = b"\x00\xffnot an arc line\r\nContent-Type: text/html\r\n\r\n<p>stray</p>\n\n"
    at = spans[1][1]  # after the second page record
    for gz in (False, True):
        path = tmp_path / ("junk.arc.gz" if gz else "junk.arc")
        mixed = data[:at] + junk + data[at:]
        path.write_bytes(gzip.compress(mixed) if gz else mixed)
        pages, stats = read_all([path])
        assert [p.url for p in pages] == URLS, gz
        assert stats.skipped == {"arc-header": 1, "malformed-record": 1}, gz
        assert any(f"byte {at}" in e for e in stats.errors), stats.errors


def _with_length(data: bytes, start: int, length: bytes | int) -> bytes:
    """``data`` with the length field of the record line at ``start`` replaced."""
    line_end = data.index(b"\n", start)
    line = data[start:line_end]
    if isinstance(length, int):
        length = str(int(line.rsplit(b" ", 1)[1]) + length).encode()
    return data[:start] + line.rsplit(b" ", 1)[0] + b" " + length + data[line_end:]


def _good_bodies() -> list[bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "good.arc")
        with open(path, "wb") as fh:
            fh.write(DATA)
        pages, _ = read_all([path])
    return [p.body for p in pages]


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("change", [300, -20, 7, -7, b"99999999"])
def test_wrong_length_field_keeps_the_page_and_the_count(tmp_path, change, gz):
    # too long (into the next records or past the end of the file) or too short: the record
    # ends at the next record line, its page is read whole, nothing else is lost or counted
    data = _with_length(DATA, SPANS[1][0], change)
    path = tmp_path / ("wrong.arc.gz" if gz else "wrong.arc")
    path.write_bytes(gzip.compress(data) if gz else data)
    pages, stats = read_all([path])
    assert [p.url for p in pages] == URLS
    assert [p.body for p in pages] == _good_bodies()
    assert stats.skipped == {"arc-header": 1} and stats.records_total == 5
    assert any("wrong length field" in e for e in stats.errors), stats.errors


def test_corrupt_gzip_member_is_skipped_to_the_next_member(tmp_path):
    members = [gzip.compress(r) for r in [arc_file([])] + _records()]
    bad = bytearray(members[2])
    bad[len(bad) // 2] ^= 0xFF  # inside the deflate data of the second page record
    bad[len(bad) // 2 + 1] ^= 0xFF
    path = tmp_path / "corrupt.arc.gz"
    path.write_bytes(b"".join(members[:2]) + bytes(bad) + b"".join(members[3:]))
    pages, stats = read_all([path])
    assert [p.url for p in pages] == [URLS[0], URLS[2], URLS[3]]
    assert set(stats.skipped) == {"arc-header", "corrupt-gzip"} and stats.skipped["corrupt-gzip"] == 1
    assert any(f"byte {sum(map(len, members[:2]))}" in e for e in stats.errors), stats.errors


def test_cut_off_gzip_is_counted(tmp_path):
    members = [gzip.compress(r) for r in [arc_file([])] + _records()]
    whole = b"".join(members)
    path = tmp_path / "cut.arc.gz"
    path.write_bytes(whole[: len(whole) - len(members[-1]) // 2])
    pages, stats = read_all([path])
    assert [p.url for p in pages] == URLS[:3]
    assert stats.skipped == {"arc-header": 1, "truncated-gzip": 1}


def test_arc_v2_record_lines(tmp_path):
    body = http(html_page("Vtwo"))
    v2 = f"http://example.org/v2 1.2.3.4 20080430204826 text/html 200 ABCDEF - 1234 IAH-1.arc {len(body)}\n".encode()
    info = b"2 0 pagetwin\nURL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length\n"
    head = f"filedesc://v2.arc 0.0.0.0 20080430204825 text/plain {len(info)}\n".encode() + info + b"\n"
    path = tmp_path / "v2.arc"
    path.write_bytes(head + b"junk line\n" + v2 + body + b"\n")
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["http://example.org/v2"]
    assert pages[0].crawl_date == "2008-04-30T20:48:26Z" and pages[0].body == html_page("Vtwo")
    assert stats.skipped == {"arc-header": 1, "malformed-record": 1}


def test_record_lines_are_told_from_other_lines():
    assert parse_arc_line(b"http://a.org/x y 1.2.3.4 20080430204826 text/html 87\n").url == "http://a.org/x y"
    assert parse_arc_line(b"dns:a.org 1.2.3.4 20080430204826 text/dns 56\r\n").length == 56
    assert parse_arc_line(b"http://a.org/ 1.2.3.4 20080430204826  87\n").mime == ""  # no content type
    v2 = parse_arc_line(b"http://a.org/ 1.2.3.4 20080430204826 text/html 200 - - 12 f.arc 99")
    assert (v2.url, v2.mime, v2.length) == ("http://a.org/", "text/html", 99)
    for line in (b"", b"\r\n", b"Content-Type: text/html\r\n", b"<html><body>arc page 0</body></html>\n",
                 b" 1.2.3.4 20080430204826 text/html 87", b"http://a.org/ 1.2.3.4 2008043020 text/html 87",
                 b"http://a.org/ 1.2.3.4 20080430204826 text/html",  b"noscheme 1.2.3.4 20080430204826 text/html 87"):
        assert parse_arc_line(line) is None, line


def test_sniff_looks_past_a_damaged_start(tmp_path):
    data, spans = _layout()
    path = tmp_path / "crawl.bin"
    path.write_bytes(data[spans[0][0] + 30 :])
    assert sniff_archive(str(path)) == "arc"
    path.write_bytes(gzip.compress(data[spans[0][0] + 30 :]))
    assert sniff_archive(str(path)) == "arc"
    path.write_bytes(b"just some text\nnothing here\n")
    assert sniff_archive(str(path)) is None


DATA, SPANS = _layout()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.integers(0, len(URLS) - 1),
    kind=st.sampled_from(["insert", "delete", "overwrite"]),
    where=st.floats(0, 1, exclude_max=True),
    junk=st.binary(min_size=1, max_size=80),
    gz=st.booleans(),
)
def test_damage_inside_one_record_loses_no_other_record(target, kind, where, junk, gz):
    """Whatever happens to the bytes of one page record, every other page is still read."""
    start, end = SPANS[target]
    at = start + int(where * (end - start))
    if kind == "insert":
        data = DATA[:at] + junk + DATA[at:]
    elif kind == "delete":
        data = DATA[:at] + DATA[min(at + len(junk), end) :]
    else:
        data = DATA[:at] + junk[: end - at] + DATA[at + len(junk[: end - at]) :]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "one.arc.gz" if gz else "one.arc")
        with open(path, "wb") as fh:
            fh.write(gzip.compress(data) if gz else data)
        pages, _ = read_all([path])
    urls = [p.url for p in pages]
    others = [u for i, u in enumerate(URLS) if i != target]
    assert [u for u in urls if u in others] == others
    # nothing made up: at most the damaged record itself, under a damaged URL
    made_up = [u for u in urls if u not in others]
    assert len(made_up) <= 1 and len(urls) == len(set(urls))


def test_clipped_last_record_is_still_a_truncated_record(tmp_path):
    data, spans = _layout()
    path = tmp_path / "clipped.arc"
    path.write_bytes(data[: spans[3][0] + 100])
    pages, stats = read_all([path])
    assert [p.url for p in pages] == URLS[:3]
    assert stats.skipped == {"arc-header": 1, "truncated-record": 1}
    assert any("clipped" in e for e in stats.errors)


MEMBERS = [gzip.compress(r) for r in [arc_file([])] + _records()]  # one gzip member per record


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.integers(1, len(URLS)),
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=4),
    cut=st.booleans(),
)
def test_damage_inside_one_gzip_member_loses_no_other_record(target, flips, cut):
    bad = bytearray(MEMBERS[target])
    for where, mask in flips:
        bad[int(where * len(bad))] ^= mask
    if cut:
        bad = bad[: int(flips[0][0] * len(bad))]
    data = b"".join(MEMBERS[:target]) + bytes(bad) + b"".join(MEMBERS[target + 1 :])
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "members.arc.gz")
        with open(path, "wb") as fh:
            fh.write(data)
        pages, stats = read_all([path])
    others = [u for i, u in enumerate(URLS) if i != target - 1]
    assert [p.url for p in pages if p.url in others] == others
    assert not any("reading stopped" in e for e in stats.errors)
