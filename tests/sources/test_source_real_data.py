"""The readers on the real crawls in ../shared/data/warc (skipped when the data is absent)."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from pagetwin.config import InputSettings
from pagetwin.html.parse import looks_like_html
from pagetwin.outputs.warc import WarcWriter
from pagetwin.sources import SourceStats, iter_pages
from tests.fixtures.records import read_all

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "warc"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data/warc is missing (real crawls not available)")

FILES = sorted(DATA.glob("**/*.warc.gz")) + sorted(DATA.glob("**/*.arc.gz")) if DATA.is_dir() else []


def _warcio_count(path: Path) -> int | None:
    """Records in ``path`` by an independent reader (warcio); None when it cannot finish."""
    from warcio.archiveiterator import ArchiveIterator

    try:
        with gzip.open(path, "rb") as fh:
            return sum(1 for _ in ArchiveIterator(fh))
    except Exception:  # noqa: BLE001 - damaged files: no independent count
        return None


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_every_record_is_accounted_for(path):
    pages, stats = read_all([path], want_images=True)
    expected = _warcio_count(path)
    if expected is not None:
        assert stats.records_total == expected
    assert stats.pages_read + stats.images == len(pages)
    for page in pages:
        assert page.id and page.source == str(path)
        if page.kind == "response":
            assert page.body and page.payload_digest and page.payload_digest.startswith("sha1:")


def test_ukwa_second_crawl_revisits():
    first = next(DATA.glob("ukwa/BL-20140325121225068-*.warc.gz"))
    second = next(DATA.glob("ukwa/BL-20140325122341434-*.warc.gz"))
    every_status = InputSettings(statuses="any")  # revisits of 302 and 404 responses too
    pages1, _ = read_all([first], every_status)
    pages2, stats2 = read_all([second], every_status)
    revisits = [p for p in pages2 if p.kind == "revisit"]
    # 55 revisit records: those of HTML responses are pages, the others (style sheets,
    # scripts, images, robots.txt) are counted as not-html.
    from fastwarc.warc import ArchiveIterator

    kinds = Counter()
    for rec in ArchiveIterator(str(second), parse_http=True):
        if str(rec.record_type) == "revisit":
            kinds["html" if "text/html" in (rec.http_headers.get("Content-Type") or "") else "other"] += 1
    assert kinds["html"] + kinds["other"] == 55
    assert len(revisits) == stats2.revisits == kinds["html"] > 20
    assert stats2.skipped["not-html"] >= kinds["other"]
    assert all(r.refers_to_digest and r.body == b"" and "identical-payload-digest" in r.meta["profile"] for r in revisits)
    originals = {p.payload_digest: p for p in pages1 if p.kind == "response"}
    matched = [r for r in revisits if r.refers_to_digest in originals]
    assert matched, "some revisits repeat an HTML response of the first crawl"
    assert all(originals[r.refers_to_digest].url == r.url for r in matched)


def test_servo_encoded_pages_decode_to_html():
    seen = Counter()
    for path in sorted(DATA.glob("servo/*.warc.gz")):
        # independent look at the raw records: which HTML responses were content-encoded
        from fastwarc.warc import ArchiveIterator

        encoded = set()
        for rec in ArchiveIterator(str(path), parse_http=True, auto_decode="none"):
            hdrs = rec.http_headers
            if hdrs is not None and (hdrs.get("Content-Encoding") or "").lower() in ("gzip", "br", "deflate"):
                if "text/html" in (hdrs.get("Content-Type") or ""):
                    encoded.add(rec.headers.get("WARC-Record-ID"))
        pages, _ = read_all([path])
        for page in pages:
            if page.id in encoded:
                seen["encoded"] += 1
                assert looks_like_html(page.body), (path.name, page.url)
    assert seen["encoded"] >= 20


def test_copycat_pages_read_and_sniffed_without_content_type(tmp_path):
    path = DATA / "copycat_wayback_topic02.warc.gz"
    pages, stats = read_all([path])
    assert len(pages) == 128 and stats.skipped == {"warcinfo": 1}
    assert all(p.crawl_date for p in pages)  # WARC-Date is "null": the Memento-Datetime stands in
    # The same bodies with the Content-Type taken away are still found to be HTML.
    bare = tmp_path / "bare.warc.gz"
    with WarcWriter(bare) as w:
        for p in pages:
            w.write_response(p.url, p.body, content_type=None, record_id=p.id)
    again, stats2 = read_all([bare])
    assert [p.id for p in again] == [p.id for p in pages]
    assert stats2.sniffed == 128


def test_aut_arc_and_warc_agree():
    every_status = InputSettings(statuses="any")  # the 404 pages agree as well
    arc, _ = read_all([DATA / "aut_example.arc.gz"], every_status)
    warc, _ = read_all([DATA / "aut_example.warc.gz"], every_status)
    key = lambda p: (p.url, p.crawl_date)  # noqa: E731
    by_key = {key(p): p for p in warc}
    assert len(arc) == len(warc) > 100
    for page in arc:
        twin = by_key[key(page)]
        assert page.body == twin.body
        assert page.payload_digest == twin.payload_digest  # computed for ARC, read from WARC


def test_clipped_and_truncated_real_files():
    pages, stats = read_all([DATA / "resiliparse_clipped.warc.gz"])
    assert pages == [] and stats.skipped == {"truncated-gzip": 1}
    assert len(stats.errors) == 1 and "truncated" in stats.errors[0]
    all_stats = SourceStats()
    n = sum(1 for _ in iter_pages([str(p) for p in FILES], InputSettings(), all_stats))
    assert n == all_stats.pages_read and all_stats.consistent()


def test_error_pages_of_the_real_crawls_are_counted_by_status():
    """aut_example: 40 "Internet Archive: Page Not Found" 404s (the largest cluster before the
    status filter) are skipped by default, counted by status; ARC and WARC agree."""
    for name in ("aut_example.arc.gz", "aut_example.warc.gz"):
        pages, stats = read_all([DATA / name])
        assert pages and all(200 <= p.meta["http_status"] < 300 for p in pages if p.kind == "response")
        assert not any(b"<title>Internet Archive: Page Not Found" in p.body for p in pages)
        assert stats.skipped["http-status-404"] == 40, stats.skipped
        every, stats_any = read_all([DATA / name], InputSettings(statuses="any"))
        refused = sum(n for reason, n in stats.skipped.items() if reason.startswith("http-status-"))
        assert len(every) == len(pages) + refused and stats_any.records_total == stats.records_total
