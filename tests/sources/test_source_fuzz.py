"""Mutated WARC bytes (bit flips, truncations, inserted junk, deleted spans) never crash the
reader, and every record seen is accounted for."""

from __future__ import annotations

import gzip
import io
import os
import tempfile

from hypothesis import HealthCheck, given, settings, strategies as st

from pagetwin.config import InputSettings
from pagetwin.outputs.warc import WarcWriter
from pagetwin.sources import SourceStats, iter_pages


def _base(gz: bool) -> bytes:
    buf = io.BytesIO()
    with WarcWriter(buf, gzip=gz) as w:
        w.write_warcinfo("fuzz.warc", {"software": "pagetwin"})
        w.write_request("https://example.org/")
        for i in range(4):
            body = f"<html><body><p>page {i} " .encode() + b"word " * 60 + b"</p></body></html>"
            if i == 1:
                w.write_response(f"https://example.org/{i}", gzip.compress(body),
                                 http_headers=[("Content-Type", "text/html"), ("Content-Encoding", "gzip")])
            else:
                w.write_response(f"https://example.org/{i}", body, date="2024-01-01T00:00:00Z")
        w.write_revisit("https://example.org/0", "sha1:ABCDEF", "https://example.org/0", "2024-01-01T00:00:00Z")
        w.write_response("https://example.org/x.png", b"\x89PNG\r\n\x1a\n" + bytes(200), content_type="image/png")
    return buf.getvalue()


BASES = {True: _base(True), False: _base(False)}

mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 7)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 200)),
    st.tuples(st.just("dup"), st.integers(0, 10**6), st.integers(1, 400)),
)


def _mutate(data: bytes, ops) -> bytes:
    buf = bytearray(data)
    for op, at, arg in ops:
        if not buf:
            break
        at %= len(buf)
        if op == "flip":
            buf[at] ^= 1 << arg
        elif op == "truncate":
            del buf[at:]
        elif op == "insert":
            buf[at:at] = arg
        elif op == "delete":
            del buf[at : at + arg]
        elif op == "dup":
            buf[at:at] = buf[at : at + arg]
    return bytes(buf)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gz=st.booleans(), ops=st.lists(mutation, min_size=1, max_size=4), want_images=st.booleans())
def test_mutated_warc_never_crashes_and_accounts_for_every_record(gz, ops, want_images):
    data = _mutate(BASES[gz], ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.warc.gz" if gz else "fuzz.warc")
        with open(path, "wb") as fh:
            fh.write(data)
        stats = SourceStats()
        pages = list(iter_pages([path], InputSettings(max_page_bytes=4096), stats, want_images=want_images))
    assert stats.records_total == stats.pages_read + stats.images + sum(stats.skipped.values())
    assert len(pages) == stats.pages_read + stats.images
    for page in pages:
        assert page.kind in ("response", "revisit", "image")
        assert len(page.body) <= 4096
        assert isinstance(page.id, str) and page.id
    assert not any("reading stopped" in e for e in stats.errors), stats.errors  # no exception reached the guard


def test_unmutated_bases_read_fully():
    for gz, data in BASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "base.warc")
            with open(path, "wb") as fh:
                fh.write(data)
            stats = SourceStats()
            pages = list(iter_pages([path], InputSettings(), stats, want_images=True))
        assert [p.kind for p in pages] == ["response"] * 4 + ["revisit", "image"], gz
        assert stats.skipped == {"warcinfo": 1, "request": 1}


def _arc_base() -> bytes:
    from tests.fixtures.records import arc_file, arc_record, http

    records = [
        arc_record(f"http://example.org/{i}", http(b"<html><body><p>arc page %d</p></body></html>" % i)) for i in range(4)
    ]
    return arc_file(records)


ARC = _arc_base()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gz=st.booleans(), ops=st.lists(mutation, min_size=1, max_size=3))
def test_mutated_arc_never_crashes_and_accounts_for_every_record(gz, ops):
    data = _mutate(ARC, ops)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fuzz.arc.gz" if gz else "fuzz.arc")
        with open(path, "wb") as fh:
            fh.write(gzip.compress(data) if gz else data)
        stats = SourceStats()
        pages = list(iter_pages([path], InputSettings(), stats))
    assert stats.records_total == stats.pages_read + stats.images + sum(stats.skipped.values())
    assert all(p.kind == "response" and p.url for p in pages)
    assert not any("reading stopped" in e for e in stats.errors), stats.errors
