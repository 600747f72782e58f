"""The gzip members of a WARC are inflated by ISA-L when it is installed (python-isal), by zlib
otherwise, and the reader gives the same pages, skips and messages either way: ISA-L's bytes are
taken only for a member it reads to its end (its CRC-32 and length checked), and a damaged or
cut member is read again by zlib (sources.warc._Member)."""

from __future__ import annotations

import gzip
import io
import os
import random
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pagetwin.config import InputSettings
from pagetwin.sources import SourceStats, iter_pages, warc
from tests.sources.test_source_fuzz import BASES, _mutate, mutation

pytestmark = pytest.mark.skipif(warc._isal_decompressobj is None, reason="isal is not installed: zlib reads every member")


def _member_bytes(data: bytes, fast: bool) -> tuple[bytes | None, str | None, int, str]:
    """(bytes, state, next_at, error) of reading the member at the start of ``data``."""
    member = warc._Member(io.BytesIO(data), 0, fast)
    out = warc._read_member(member)
    return out, member.state, member.next_at, member.error


def _payload(seed: int, size: int) -> bytes:
    """Text that compresses well, with incompressible stretches (so members of many sizes and
    deflate block kinds: stored, fixed and dynamic Huffman)."""
    rng = random.Random(seed)
    words = [b"page", b"twin", b"<div>", b"</div>", b"\r\n", b"duplicate", b"near", b"\xc3\xa9t\xc3\xa9"]
    out = bytearray()
    while len(out) < size:
        out += rng.randbytes(rng.randrange(1, 300)) if rng.random() < 0.1 else rng.choice(words) + b" "
    return bytes(out[:size])


_DAMAGE = st.one_of(
    st.just(("none", 0, 0)),
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 7)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("flags"), st.integers(0, 7), st.just(0)),  # a header flag set, reserved ones too
    st.tuples(st.just("trailing"), st.integers(0, 3), st.just(0)),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), size=st.sampled_from([0, 1, 100, 5000, 40_000, 200_000]), level=st.integers(0, 9),
       damage=_DAMAGE)  # fmt: skip
def test_property_isal_member_is_taken_only_when_zlib_reads_the_same(seed, size, level, damage):
    """Whenever ISA-L reads a member to its end, zlib reads it to its end too, to the same bytes
    and the same next member; on intact members ISA-L always does (so it is used)."""
    member = gzip.compress(_payload(seed, size), compresslevel=level, mtime=0)
    op, at, arg = damage
    data = bytearray(member + gzip.compress(b"next member", mtime=0))
    if op == "flip":
        data[at % len(member)] ^= 1 << arg
    elif op == "truncate":
        del data[at % len(member) :]
    elif op == "flags":
        data[3] |= 1 << at
    elif op == "trailing":
        data = bytearray(member) + [b"", b"\r\n", b"\x00" * 7, b"junk after it"][at]
    fast, plain = _member_bytes(bytes(data), warc._isal_may_read(bytes(data))), _member_bytes(bytes(data), False)
    if fast[1] == "end":
        assert plain[:3] == fast[:3]
    if op in ("none", "trailing"):
        assert fast[1] == plain[1] == "end"


def test_a_member_read_in_many_raw_steps_ends_where_zlib_says():
    """A member larger than the first raw reads (16 KB, doubling), and members of a few bytes
    after it: ISA-L's unused input and so the next member's offset are zlib's."""
    rng = random.Random(7)
    members = [gzip.compress(rng.randbytes(300_000), mtime=0)] + [gzip.compress(b"x" * n, mtime=0) for n in (0, 1, 50)]
    data = b"".join(members)
    at, offsets = 0, []
    while at < len(data):
        fast, plain = _member_bytes(data[at:], True), _member_bytes(data[at:], False)
        assert fast == plain and fast[1] == "end"
        offsets.append(at)
        at += fast[2]
    assert offsets == [sum(len(m) for m in members[:i]) for i in range(len(members))]


def _read_both(path: str, monkeypatch) -> tuple:
    """(pages, stats) of reading ``path`` with ISA-L and with zlib only."""
    out = []
    for fast in (True, False):
        with monkeypatch.context() as patch:
            if not fast:
                patch.setattr(warc, "_isal_decompressobj", None)
            stats = SourceStats()
            pages = list(iter_pages([path], InputSettings(max_page_bytes=4096), stats, want_images=True))
            out.append(([(p.id, p.url, p.body, p.payload_digest, p.truncated, p.meta) for p in pages], stats.to_dict()))
    return out[0], out[1]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ops=st.lists(mutation, min_size=1, max_size=4))
def test_property_a_damaged_gzip_warc_reads_the_same_with_isal_or_zlib(ops, monkeypatch):
    """Mutated gzip WARCs (bit flips, truncations, junk, deleted and repeated spans): the same
    pages, skips and messages with ISA-L as with zlib."""
    data = _mutate(BASES[True], ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.warc.gz")
        with open(path, "wb") as fh:
            fh.write(data)
        fast, plain = _read_both(path, monkeypatch)
    assert fast == plain


def test_reserved_header_flags_and_bad_checks_are_reported_as_zlib_reports_them(tmp_path, monkeypatch):
    """ISA-L takes a member with a reserved header flag and words its errors otherwise: zlib's
    message stands in the summary either way."""
    good = BASES[True]
    first_end = good.index(b"\x1f\x8b\x08", 3)
    reserved = bytearray(good)
    reserved[3] |= 0x20
    bad_crc = bytearray(good)
    bad_crc[first_end - 8] ^= 1
    for name, data in (("reserved", reserved), ("crc", bad_crc)):
        path = tmp_path / f"{name}.warc.gz"
        path.write_bytes(bytes(data))
        fast, plain = _read_both(str(path), monkeypatch)
        assert fast == plain
        assert any(("unknown header flags" if name == "reserved" else "incorrect data check") in e for e in fast[1]["errors"])


def test_a_zlib_only_run_reads_the_example_crawl_as_an_isal_run(monkeypatch):
    path = "/work/shared/data/warc/dolma_warc_sample-0000.warc.gz"
    if not os.path.exists(path):
        pytest.skip("shared data not here")
    fast, plain = _read_both(path, monkeypatch)
    assert fast == plain and fast[0]


def test_blocks_read_through_or_sliced_in_memory_give_the_same_pages(tmp_path, monkeypatch):
    """A block the reader's window holds is sliced out of it; one that it does not (a plain
    WARC's record past the window) is read through: the same pages either way."""
    from tests.fixtures.records import html_page
    from tests.sources.test_warc import _response_record
    from pagetwin.sources.payload import sha1_digest

    rng = random.Random(3)
    records = []
    for i, size in enumerate((10, 5000, 70_000, 300_000)):
        body = html_page(f"Page {i} {rng.random()}", words=size // 5)
        records.append(_response_record(f"https://example.org/{i}", body, sha1_digest(body) if i % 2 else None))
    path = tmp_path / "plain.warc"
    path.write_bytes(b"".join(records))
    seen = []
    for window in (warc.WINDOW, 4096):
        monkeypatch.setattr(warc, "WINDOW", window)
        for limit in (1000, 100_000, 10**7):
            stats = SourceStats()
            pages = list(iter_pages([str(path)], InputSettings(max_page_bytes=limit), stats))
            seen.append((limit, [(p.id, p.body, p.payload_digest, p.truncated, p.meta) for p in pages], stats.to_dict()))
    assert seen[:3] == seen[3:]
    assert [p[1] for p in seen[-1][1]] == [r[r.index(b"\r\n\r\n", r.index(b"HTTP/")) + 4 : -4] for r in records]
