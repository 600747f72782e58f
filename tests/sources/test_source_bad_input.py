"""Bad input is normal input: each case is skipped with a counted reason and reading goes on."""

from __future__ import annotations

import gzip
import io
import os

import pytest

from pagetwin.config import InputSettings
from pagetwin.html.parse import decode_html
from pagetwin.outputs.warc import WarcWriter
from pagetwin.sources import SourceStats, check_inputs, iter_pages
from tests.fixtures.records import html_page, read_all


def _warc_bytes(n: int, gz: bool = True, start: int = 0) -> bytes:
    buf = io.BytesIO()
    with WarcWriter(buf, gzip=gz) as w:
        for i in range(start, start + n):
            w.write_response(f"https://example.org/{i}", html_page(f"Page{i}", words=200), date="2024-01-01T00:00:00Z")
    return buf.getvalue()


def _urls(pages):
    return [p.url.rsplit("/", 1)[1] for p in pages]


def test_truncated_gzip_member_at_end(tmp_path):
    data = _warc_bytes(3)
    path = tmp_path / "clipped.warc.gz"
    path.write_bytes(data[:-150])  # cut inside the last gzip member
    pages, stats = read_all([path])
    assert _urls(pages) == ["0", "1"]
    assert stats.skipped == {"truncated-gzip": 1}
    assert any("truncated gzip member" in e for e in stats.errors)


def test_clipped_record_in_plain_warc(tmp_path):
    data = _warc_bytes(3, gz=False)
    path = tmp_path / "clipped.warc"
    path.write_bytes(data[:-300])
    pages, stats = read_all([path])
    assert _urls(pages) == ["0", "1"]
    assert stats.skipped == {"truncated-record": 1}
    assert any("clipped" in e for e in stats.errors)


def test_content_length_too_long_swallows_nothing_after_resync(tmp_path):
    data = _warc_bytes(3, gz=False)
    second = data.index(b"WARC/1.1", 10)
    length_at = data.index(b"Content-Length:", second)
    line_end = data.index(b"\r\n", length_at)
    bad = data[:length_at] + b"Content-Length: 999999" + data[line_end:]
    path = tmp_path / "lie.warc"
    path.write_bytes(bad)
    pages, stats = read_all([path])
    # record 1 claims to run past the end of the file, but record 2 follows it: the length
    # is wrong, record 1 ends where record 2 starts and keeps its page
    assert _urls(pages) == ["0", "1", "2"]
    good, _ = read_all([_write(tmp_path / "good.warc", data)])
    assert [p.body for p in pages] == [p.body for p in good]
    assert stats.skipped == {} and stats.records_total == 3
    assert any("wrong Content-Length" in e for e in stats.errors)


def test_content_length_too_long_at_the_end(tmp_path):
    data = _warc_bytes(3, gz=False)
    last = data.rindex(b"WARC/1.1")
    length_at = data.index(b"Content-Length:", last)
    bad = data[:length_at] + b"Content-Length: 999999" + data[data.index(b"\r\n", length_at):]
    # the file ends with the "\r\n\r\n" that ends a record: the record is whole, its length wrong
    pages, stats = read_all([_write(tmp_path / "lie.warc", bad)])
    assert _urls(pages) == ["0", "1", "2"] and stats.skipped == {}
    # cut inside the record: clipped
    pages, stats = read_all([_write(tmp_path / "cut.warc", bad[:-100])])
    assert _urls(pages) == ["0", "1"] and stats.skipped == {"truncated-record": 1}


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("gz", [True, False])
def test_malformed_content_length_header(tmp_path, gz):
    plain = _warc_bytes(3, gz=False)
    second = plain.index(b"WARC/1.1", 10)
    third = plain.index(b"WARC/1.1", second + 10)
    record = plain[second:third]
    at = record.index(b"Content-Length:")
    broken = record[:at] + b"Content-Length: lots" + record[record.index(b"\r\n", at):]
    if gz:
        data = _warc_bytes(1) + gzip.compress(broken) + _warc_bytes(1, start=2)
    else:
        data = plain[:second] + broken + plain[third:]
    path = tmp_path / ("bad.warc.gz" if gz else "bad.warc")
    path.write_bytes(data)
    pages, stats = read_all([path])
    assert _urls(pages) == ["0", "2"]
    assert sum(stats.skipped.values()) == 1
    assert set(stats.skipped) <= {"malformed-header", "malformed-record"}


@pytest.mark.parametrize("gz", [True, False])
def test_junk_between_records(tmp_path, gz):
    first, rest = _warc_bytes(1, gz=gz), _warc_bytes(2, gz=gz, start=1)
    junk = b"this is not a record\r\n\r\n" + bytes(range(256)) * 3
    path = tmp_path / ("junk.warc.gz" if gz else "junk.warc")
    path.write_bytes(first + junk + rest)
    pages, stats = read_all([path])
    assert _urls(pages) == ["0", "1", "2"]
    assert sum(stats.skipped.values()) == 1  # the junk region, counted once


def test_corrupt_gzip_member_in_the_middle(tmp_path):
    members = [_warc_bytes(1, start=i) for i in range(4)]
    bad = bytearray(members[1])
    for i in range(30, len(bad) - 20, 7):
        bad[i] ^= 0x5A
    path = tmp_path / "corrupt.warc.gz"
    path.write_bytes(members[0] + bytes(bad) + members[2] + members[3])
    pages, stats = read_all([path])
    assert _urls(pages) == ["0", "2", "3"]
    assert sum(stats.skipped.values()) == 1
    assert stats.errors


@pytest.mark.parametrize("content", [b"", b"<html><body>not a warc</body></html>", bytes(range(256)) * 40, gzip.compress(b"just text\n" * 100)])
def test_a_warc_that_is_not_a_warc(tmp_path, content):
    path = tmp_path / "fake.warc.gz"
    path.write_bytes(content)
    good = tmp_path / "good.warc.gz"
    good.write_bytes(_warc_bytes(1))
    pages, stats = read_all([path, good])
    assert _urls(pages) == ["0"]  # the next input is still read
    assert any(str(path) in e for e in stats.errors)


def test_missing_file_is_a_one_line_problem_and_reading_goes_on(tmp_path):
    good = tmp_path / "good.warc.gz"
    good.write_bytes(_warc_bytes(2))
    missing = tmp_path / "nope.warc.gz"
    problems = check_inputs([str(missing), str(good), str(tmp_path / "no-dir")])
    assert len(problems) == 2 and all("\n" not in p for p in problems)
    assert problems[0].startswith(str(missing)) and "no such file" in problems[0]
    pages, stats = read_all([missing, good])
    assert _urls(pages) == ["0", "1"]
    assert stats.errors == [f"{missing}: no such file or directory"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path):
    path = tmp_path / "locked.warc.gz"
    path.write_bytes(_warc_bytes(1))
    path.chmod(0)
    assert check_inputs([str(path)]) and "permission" in check_inputs([str(path)])[0]


def test_wrong_charset_label_never_loses_the_page(tmp_path):
    russian = "<html><body><p>Привет, мир! Это страница на русском языке.</p></body></html>".encode("cp1251")
    path = tmp_path / "charset.warc.gz"
    with WarcWriter(path) as w:
        w.write_response("https://example.ru/", russian, content_type="text/html; charset=utf-8")
        w.write_response("https://example.ru/2", russian, content_type="text/html; charset=x-no-such-charset")
    pages, stats = read_all([path])
    assert len(pages) == 2 and pages[0].http_charset == "utf-8" and pages[0].body == russian
    text, _, replaced = decode_html(pages[0].body, pages[0].http_charset)
    assert "<p>" in text and replaced > 0  # decoded with replacements, counted
    text2, charset2, _ = decode_html(pages[1].body, pages[1].http_charset)
    assert "Привет" in text2  # an unknown label falls through to detection


def test_truncated_and_corrupt_real_world_like_mix_keeps_accounting(tmp_path):
    data = _warc_bytes(5)
    path = tmp_path / "mix.warc.gz"
    cut = data[: len(data) // 2] + b"\x00" * 100 + data[len(data) // 2 :][:-40]
    path.write_bytes(cut)
    stats = SourceStats()
    pages = list(iter_pages([str(path)], InputSettings(), stats))
    assert stats.consistent()
    assert 2 <= len(pages) <= 4


@pytest.mark.parametrize("gz", [True, False])
def test_a_content_length_of_unicode_digits_is_malformed(tmp_path, gz):
    # found by bench/fuzz.py: "²00" is digits to str.isdigit, not to int()
    plain = _warc_bytes(3, gz=False)
    second = plain.index(b"WARC/1.1", 10)
    at = plain.index(b"Content-Length:", second)
    bad = plain[:at] + "Content-Length: ²00".encode() + plain[plain.index(b"\r\n", at):]
    path = tmp_path / ("sup.warc.gz" if gz else "sup.warc")
    path.write_bytes(gzip.compress(bad) if gz else bad)
    pages, stats = read_all([path])
    assert _urls(pages) == ["0", "2"] and stats.skipped == {"malformed-header": 1}
    assert not any("reading stopped" in e for e in stats.errors)
