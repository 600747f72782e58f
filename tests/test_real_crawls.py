"""pagetwin dedup over the real crawls in ../shared/data/warc (skipped when they are absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastwarc.warc import ArchiveIterator, WarcRecordType

from pagetwin.cli import main

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "warc"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"real crawls not found at {DATA} (../shared/data)")


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _records(path: Path, kind: WarcRecordType):
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh, record_types=kind, parse_http=True):
            ct = (rec.http_headers.get("Content-Type") or "") if rec.http_headers else ""
            yield rec.record_id, rec.headers.get("WARC-Payload-Digest"), ct


def test_ukwa_revisits_join_their_original_response(tmp_path):
    crawl1 = sorted(DATA.glob("ukwa/BL-20140325121225068-*.warc.gz"))
    crawl2 = sorted(DATA.glob("ukwa/BL-20140325122341434-*.warc.gz"))
    assert crawl1 and crawl2
    out = tmp_path / "out"
    # every status: the originals below are all HTML responses, 404 and 302 ones too
    assert main(["dedup", *map(str, crawl1 + crawl2), "--out", str(out), "--input-statuses", "any"]) == 0
    cluster = {r["id"]: r["cluster"] for r in _lines(out / "clusters.jsonl")}
    # The crawl-1 HTML responses by payload digest, read independently of pagetwin's sources.
    originals = {d: rid for p in crawl1 for rid, d, ct in _records(p, WarcRecordType.response) if "html" in ct}
    checked = 0
    for path in crawl2:
        for rid, digest, _ in _records(path, WarcRecordType.revisit):
            if digest in originals:
                assert cluster[rid] == cluster[originals[digest]], rid
                checked += 1
    assert checked > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["revisits"]["matched"] >= checked


def test_every_crawl_together_accounts_for_every_record(tmp_path):
    inputs = sorted(str(p) for p in DATA.rglob("*") if p.name.endswith((".warc.gz", ".arc.gz", ".warc", ".arc")))
    out = tmp_path / "out"
    # resiliparse_clipped.warc.gz ends in a truncated gzip member: done, but not every input read
    assert main(["dedup", *inputs, "--out", str(out)]) == 3
    summary = json.loads((out / "summary.json").read_text())
    assert any("resiliparse_clipped" in e for e in summary["input_errors"])
    rec = summary["records"]
    assert rec["records_total"] == rec["pages_read"] + rec["images"] + sum(rec["skipped"].values())
    rows = _lines(out / "clusters.jsonl")
    assert len(rows) == rec["pages_read"] == summary["pages"]["in_output"]
    keeps: dict[str, int] = {}
    for r in rows:
        keeps[r["cluster"]] = keeps.get(r["cluster"], 0) + r["keep"]
    assert set(keeps.values()) == {1}
    # the tmall.com page is in both the Taobao and the Tmall files: one cluster
    tmall = {r["cluster"] for r in rows if r["url"].rstrip("/") in ("https://www.tmall.com", "http://www.tmall.com")}
    assert len(tmall) == 1
