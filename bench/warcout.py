"""A deterministic crawl writer for the example crawl and the benchmark corpus.

A thin layer over pagetwin's own `pagetwin.outputs.warc.WarcWriter` (warcio underneath, WARC/1.1,
one gzip member per record) that derives record ids from the URL and date (uuid5), so the same
inputs always give byte-identical files. No warcinfo record is written: the project writer stamps
warcinfo with the current time and a random id, which would make every rebuild differ.
"""

from __future__ import annotations

import base64
import hashlib
import os
import uuid
from typing import BinaryIO

from pagetwin.outputs.warc import WarcWriter


def payload_digest(body: bytes) -> str:
    """The WARC payload digest form: 'sha1:' + base32 of the SHA-1 of the body."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def record_id(*parts: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, ' '.join(parts))}>"


class CrawlWriter:
    """Writes response and revisit records to a binary stream with deterministic ids."""

    def __init__(self, stream: BinaryIO, gzip: bool = True):
        self._writer = WarcWriter(stream, gzip=gzip)

    def response(self, url: str, date: str, body: bytes,
                 content_type: str | None = "text/html; charset=utf-8") -> str:
        """Write an HTTP 200 response; returns its payload digest (for later revisits)."""
        self._writer.write_response(url, body, date=date, record_id=record_id(url, date),
                                    content_type=content_type)
        return payload_digest(body)

    def revisit(self, url: str, date: str, digest: str, refers_to_url: str, refers_to_date: str,
                content_type: str = "text/html; charset=utf-8") -> None:
        """An identical-payload-digest revisit: the server sent the same body as before."""
        self._writer.write_revisit(
            url, digest, refers_to_url, refers_to_date, date,
            record_id=record_id("revisit", url, date),
            refers_to=record_id(refers_to_url, refers_to_date),
            http_headers=[("Content-Type", content_type)],
        )


# -- the dedup'd WARC (issue 13, item 6): written, re-read and compared with the inputs ------


def _digest_checks(path: str) -> dict:
    """Re-read ``path`` with fastwarc and warcio: record counts by type, and every digest a
    record declares checked (a revisit's payload digest names its original's payload, so it
    is checked against that record, in ``compare_with_inputs``)."""
    from collections import Counter

    from fastwarc.warc import ArchiveIterator
    from warcio.archiveiterator import ArchiveIterator as WarcioIterator

    by_type: Counter = Counter()
    block = Counter()
    payload = Counter()
    fastwarc_errors = []
    with open(path, "rb") as fh:
        try:
            for rec in ArchiveIterator(fh, parse_http=False):
                kind = (rec.headers.get("WARC-Type") or "").lower()
                by_type[kind] += 1
                if rec.headers.get("WARC-Block-Digest"):
                    block["declared"] += 1
                    block["valid"] += bool(rec.verify_block_digest())
                if kind in ("response", "resource") and rec.headers.get("WARC-Payload-Digest"):
                    payload["declared"] += 1
        except Exception as exc:  # noqa: BLE001 - a damaged input: reported
            fastwarc_errors.append(f"{type(exc).__name__}: {exc}"[:200])
    warcio_records = 0
    warcio_errors = []
    with open(path, "rb") as fh:
        try:
            for rec in WarcioIterator(fh, check_digests="raise"):
                if rec.rec_type in ("response", "resource") and rec.rec_headers.get_header("WARC-Payload-Digest"):
                    # warcio checks the payload digest on the decoded HTTP payload of a response
                    rec.content_stream().read()
                else:
                    rec.raw_stream.read()
                warcio_records += 1
        except Exception as exc:  # noqa: BLE001 - reported, it is what the check is for
            warcio_errors.append(f"{type(exc).__name__}: {exc}"[:200])
    with open(path, "rb") as fh:  # payload digests: fastwarc on the HTTP payload
        try:
            for rec in ArchiveIterator(fh, parse_http=True):
                if (rec.headers.get("WARC-Type") or "").lower() in ("response", "resource") and rec.headers.get("WARC-Payload-Digest"):
                    payload["valid"] += bool(rec.verify_payload_digest())
        except Exception:  # noqa: BLE001 - reported above
            pass
    return {
        "records": dict(sorted(by_type.items())),
        "block_digests": dict(block),
        "payload_digests": dict(payload),
        "warcio_records": warcio_records,
        "warcio_errors": warcio_errors,
        "fastwarc_errors": fastwarc_errors,
    }


def compare_with_inputs(input_files: list[str], out_path: str) -> dict:
    """Record by record: every input WARC record is in the output, in order, byte for byte,
    or as a revisit of the same id (same WARC headers but the type, block = the input's HTTP
    head, WARC-Payload-Digest = the input's payload's), or dropped as an exact repeat of a
    record written before; each metadata record pagetwin added names the record before it;
    each revisit made refers to a whole record of the output with that payload, or to a page
    not in these inputs; no id twice. Returns counts and up to 20 problems."""
    import base64
    import hashlib
    from collections import Counter

    from pagetwin.outputs.dedupwarc import _http_split
    from pagetwin.outputs.warc import field, is_clipped, iter_raw_records, iter_raw_records_at, split_record
    from pagetwin.sources.payload import normalize_digest

    def payload_digest(fields, block):
        is_http = "application/http" in (field(fields, "Content-Type") or "").lower() or block.startswith(b"HTTP/")
        parts = _http_split(block) if is_http else (b"", block)
        declared = normalize_digest(field(fields, "WARC-Payload-Digest"))
        if parts is None:
            return declared
        return declared or "sha1:" + base64.b32encode(hashlib.sha1(parts[1]).digest()).decode()

    out = list(iter_raw_records(out_path))
    input_ids = {rid for path in input_files for _o, rid, _r in iter_raw_records_at(path, clipped=True) if rid}
    problems: list[str] = []
    counts: Counter = Counter()
    ids = Counter(rid for rid, _ in out if rid)
    counts["ids_written_twice"] = sum(1 for n in ids.values() if n > 1)
    whole: dict[str, str] = {}  # record id -> payload digest of responses written whole
    written_hashes: set[bytes] = set()
    made_revisits: list[tuple[str, list]] = []
    j = 1  # the output's own warcinfo first
    last_whole = ""  # the id of the last record written whole (a metadata record names it)
    for path in input_files:
        for _offset, rid, raw in iter_raw_records_at(path, clipped=True):
            counts["input_records"] += 1
            if is_clipped(raw):  # written as what there is, marked WARC-Truncated: length
                while j < len(out) and out[j][0] != rid:
                    j += 1
                _v, cf, cb = split_record(out[j][1]) if j < len(out) else (b"", [], b"")
                if field(cf, "WARC-Truncated") != "length" or not split_record(raw)[2].startswith(cb) or not cb:
                    problems.append(f"{path}: clipped record {rid} not written as WARC-Truncated")
                counts["clipped_marked"] += 1
                j += 1
                continue
            while j < len(out) and out[j][0] not in input_ids and out[j][1] != raw:
                _v, mf, mb = split_record(out[j][1])
                if (field(mf, "WARC-Type") or "").lower() == "metadata" and field(mf, "WARC-Concurrent-To"):
                    if field(mf, "WARC-Concurrent-To") != last_whole:
                        problems.append(f"metadata {out[j][0]} does not name the record before it")
                    counts["metadata_added"] += 1
                elif field(mf, "WARC-Source-Id"):  # a record of an ARC, HTML or JSONL input
                    counts["from_other_inputs"] += 1
                    if (field(mf, "WARC-Type") or "").lower() in ("response", "resource"):
                        whole[out[j][0]] = payload_digest(mf, mb)
                    elif (field(mf, "WARC-Type") or "").lower() == "revisit":
                        made_revisits.append((out[j][0], mf))
                    last_whole = out[j][0]
                else:
                    break  # a renamed record, checked below
                j += 1
            digest = hashlib.sha1(raw).digest()
            if j < len(out) and out[j][1] == raw:
                counts["identical"] += 1
                last_whole = rid
                version, fields, block = split_record(raw)
                if (field(fields, "WARC-Type") or "").lower() == "response" and rid:
                    whole[rid] = payload_digest(fields, block)
                written_hashes.add(digest)
                j += 1
                continue
            if digest in written_hashes:
                counts["repeat_dropped"] += 1
                continue
            if j >= len(out):
                problems.append(f"{path}: record {rid} missing from the output")
                continue
            o_rid, o_raw = out[j]
            _v, ofields, oblock = split_record(o_raw)
            _v, ifields, iblock = split_record(raw)
            otype = (field(ofields, "WARC-Type") or "").lower()
            if otype == "revisit" and o_rid == rid:
                is_http = "application/http" in (field(ifields, "Content-Type") or "").lower() or iblock.startswith(b"HTTP/")
                head = _http_split(iblock) if is_http else (b"", iblock)
                if head is None or head[0] != oblock:
                    problems.append(f"revisit {rid}: block is not the input's HTTP head")
                if normalize_digest(field(ofields, "WARC-Payload-Digest")) != payload_digest(ifields, iblock):
                    problems.append(f"revisit {rid}: payload digest is not the input's")
                skip = {"warc-type", "content-length", "warc-block-digest", "warc-payload-digest", "warc-profile",
                        "warc-refers-to", "warc-refers-to-target-uri", "warc-refers-to-date", "warc-truncated"}
                if [(k, v) for k, v in ifields if k.lower() not in skip] != [(k, v) for k, v in ofields if k.lower() not in skip]:
                    problems.append(f"revisit {rid}: WARC headers differ from the input's")
                counts["revisit_made"] += 1
                made_revisits.append((rid, ofields))
                written_hashes.add(digest)
            elif o_rid != rid and otype and oblock == iblock:
                counts["renamed"] += 1
                last_whole = o_rid
            else:
                problems.append(f"{path}: record {rid} differs in the output")
            j += 1
    while j < len(out):  # records after the last WARC input's: metadata, other inputs'
        _v, mf, _b = split_record(out[j][1])
        if (field(mf, "WARC-Type") or "").lower() == "metadata" and field(mf, "WARC-Concurrent-To"):
            counts["metadata_added"] += 1
        elif field(mf, "WARC-Source-Id"):
            counts["from_other_inputs"] += 1
            if (field(mf, "WARC-Type") or "").lower() in ("response", "resource"):
                whole[out[j][0]] = payload_digest(mf, _b)
            elif (field(mf, "WARC-Type") or "").lower() == "revisit":
                made_revisits.append((out[j][0], mf))
        else:
            problems.append(f"output record {out[j][0]} matches no input record")
        j += 1
    for rid, fields in made_revisits:
        target = field(fields, "WARC-Refers-To")
        if target in whole:
            if whole[target] != normalize_digest(field(fields, "WARC-Payload-Digest")):
                problems.append(f"revisit {rid} refers to {target}, whose payload differs")
            counts["revisit_refers_to_output_record"] += 1
        elif target:
            counts["revisit_refers_elsewhere"] += 1  # a page of the index not in these inputs
        else:
            counts["revisit_without_refers_to"] += 1  # its original has no record id
    counts["output_records"] = len(out)
    return {"counts": dict(sorted(counts.items())), "problems": problems[:20], "problem_count": len(problems)}


def dedup_warc_report(inputs: list[str], out_dir: str) -> dict:
    """Run dedup on ``inputs`` into ``out_dir``, write ``out_dir/dedup.warc.gz`` and check it."""
    from pagetwin import Settings
    from pagetwin.index.sqlite import Index

    try:  # the application core (pagetwin.app), else where dedup lived before it
        from pagetwin.app import dedup
    except ImportError:
        from pagetwin.runners.local import dedup
    from pagetwin.outputs.dedupwarc import input_files, write_dedup_warc

    settings = Settings()
    summary = dedup(inputs, out_dir, settings)
    index = Index.open_readonly(os.path.join(out_dir, "index.sqlite"))
    out_path = os.path.join(out_dir, "dedup.warc.gz")
    stats = write_dedup_warc(inputs, settings, index, out_path)
    index.close()
    warc_inputs = [p for p, kind in input_files(inputs) if kind == "warc"]
    inputs_read = {p: _digest_checks(p) for p in warc_inputs}
    from collections import Counter

    in_types: Counter = Counter()
    in_block: Counter = Counter()
    in_payload: Counter = Counter()
    in_errors = {}
    for p, r in inputs_read.items():
        in_types.update(r["records"])
        in_block.update(r["block_digests"])
        in_payload.update(r["payload_digests"])
        if r["warcio_errors"] or r["fastwarc_errors"]:
            in_errors[p] = r["warcio_errors"] + r["fastwarc_errors"]
    return {
        "pages": summary["pages"]["read"],
        "clusters": summary["clusters"],
        "writer": stats.to_dict(),
        "input": {
            "records": dict(sorted(in_types.items())),
            "block_digests": dict(in_block),
            "payload_digests": dict(in_payload),
            "unreadable": in_errors,
        },
        "output": _digest_checks(out_path),
        "comparison": compare_with_inputs(warc_inputs, out_path),
    }


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import tempfile
    from pathlib import Path

    default = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "warc"
    ap = argparse.ArgumentParser(description="the dedup'd WARC of the crawls, re-read and compared with them")
    ap.add_argument("inputs", nargs="*", default=[str(default)])
    ap.add_argument("--out", help="folder for the run (default: a temporary one)")
    args = ap.parse_args(argv)
    out_dir = args.out or tempfile.mkdtemp(prefix="warcout-")
    report = dedup_warc_report(args.inputs, out_dir)
    print(json.dumps(report, indent=2))
    out = report["output"]
    return 0 if not report["comparison"]["problem_count"] and not out["warcio_errors"] and not out["fastwarc_errors"] else 1


if __name__ == "__main__":
    import os
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    raise SystemExit(main())
