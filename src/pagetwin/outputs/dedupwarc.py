"""The dedup'd WARC (issue 13, item 6): every input record written once, in input order, with
each exact payload duplicate as a ``revisit`` record and each near duplicate beside a
``metadata`` record that names its cluster and kept page.

For a WARC input every record (warcinfo, request, metadata, response, ...) is copied byte for
byte as read (``iter_raw_records_at``), except:

- a ``response`` whose payload is the same as a response already written whole (same
  WARC-Payload-Digest, declared or computed as the readers do), or the same as the page the
  index keeps for that payload digest, becomes a revisit of the identical-payload-digest
  profile (WARC 1.1, 6.7.2): its own WARC headers and record id, ``WARC-Profile``,
  ``WARC-Refers-To-Target-URI``, ``WARC-Refers-To-Date`` and ``WARC-Refers-To`` (when the
  original has a record id), ``WARC-Payload-Digest`` kept, the HTTP status line and headers as
  the block, Content-Length and WARC-Block-Digest of that block. A truncated response
  (``WARC-Truncated``) is never turned into a revisit, nor taken as an original: its digest
  does not describe a whole payload.
- a page the index puts in a cluster of two or more without keeping it, and not a payload
  duplicate, is copied whole and followed by a ``metadata`` record (``WARC-Concurrent-To`` its
  id, an ``application/json`` body with the cluster, its size, the kept page and the
  relation). Pages of one cluster with the same main text but other payload bytes are such
  near duplicates ("same-text"): an identical-payload-digest revisit would say the payload is
  the original's, and a replay tool would serve the original's bytes for it.
- a record id met again (a record copied twice into a file, or into two inputs) is not written
  again when its bytes are the same (counted ``repeated_dropped``); a different record under
  an id already written gets a new id (``renamed``), so no id is written twice.

An ARC file's records are all written, converted to WARC records by warcio (the block is the
ARC record's bytes as read; ``WARC-Source-Id`` names the page as the ARC reader does), with the
same rules. HTML files and JSONL / Parquet documents have no record to copy: their pages are
written as new records (``WarcWriter.write_new_page``) with the same revisit / metadata rules;
what they hold that is no page is not written (``not_written``). A record cut short by the end
of its file is written with the bytes there are and ``WARC-Truncated: length``. The first
record of the file is a warcinfo naming pagetwin.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field as dc_field
from pathlib import Path
from typing import Any

from pagetwin.outputs.warc import (
    REVISIT_PROFILE,
    WarcWriter,
    build_record,
    field,
    header_value,
    is_clipped,
    iter_raw_records_at,
    new_record_id,
    split_record,
)

# Headers of a response that a revisit does not take over: the type, the length and block
# digest (recomputed for the new block), and what describes the omitted payload's bytes.
_NOT_IN_REVISIT = {"warc-type", "content-length", "warc-block-digest", "warc-truncated", "warc-segment-number"}
_WARC_DATE = re.compile(r"\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z\Z")


@dataclass
class DedupWarcStats:
    """What went in and what came out, by WARC-Type (warcinfo written by pagetwin included)."""

    records_in: Counter = dc_field(default_factory=Counter)
    records_out: Counter = dc_field(default_factory=Counter)
    revisits_made: int = 0
    metadata_made: int = 0
    repeated_dropped: int = 0
    renamed: int = 0
    not_written: int = 0  # ARC / non-WARC records that are not pages
    clipped_marked: int = 0  # a record cut by the end of its file, written as WARC-Truncated
    files: int = 0
    unreadable: list = dc_field(default_factory=list)  # files whose reading stopped early

    def to_dict(self) -> dict[str, Any]:
        return {
            "records_in": dict(sorted(self.records_in.items())),
            "records_out": dict(sorted(self.records_out.items())),
            "revisits_made": self.revisits_made,
            "metadata_made": self.metadata_made,
            "repeated_dropped": self.repeated_dropped,
            "renamed": self.renamed,
            "not_written": self.not_written,
            "clipped_marked": self.clipped_marked,
            "files": self.files,
            "unreadable": list(self.unreadable),
        }


@dataclass(frozen=True)
class _Original:
    """The record a revisit refers to."""

    uri: str
    date: str | None
    record_id: str | None  # None when unknown (a record without WARC-Record-ID)


def _b32_sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def _http_split(block: bytes) -> tuple[bytes, bytes] | None:
    """(HTTP status line and headers with their blank line, payload) of an HTTP block, or
    None when it has no complete HTTP head."""
    if not block.startswith(b"HTTP/"):
        return None
    for sep in (b"\r\n\r\n", b"\n\n"):
        at = block.find(sep)
        if at >= 0:
            return block[: at + len(sep)], block[at + len(sep) :]
    return None


def _ref_id(page_id: str | None) -> str | None:
    """A page id that is a WARC-Record-ID ("<urn:...>"), else None."""
    if page_id and page_id.startswith("<") and page_id.endswith(">"):
        return page_id
    return None


class _Run:
    """The state of one dedup'd WARC being written."""

    def __init__(self, index: Any, out: WarcWriter) -> None:
        self.index = index
        self.out = out
        self.stats = DedupWarcStats()
        self.first: dict[str, _Original] = {}  # payload digest -> the response written whole
        self.kept: dict[str, dict[str, Any] | None] = {}  # payload digest -> index's kept page
        self.written: dict[str, bytes] = {}  # record id -> sha1 of the bytes written under it
        self.new_ids: dict[tuple[str, str], str] = {}  # (page id, source) -> id of its new record

    # -- the index ---------------------------------------------------------------------

    def kept_for(self, digest: str) -> dict[str, Any] | None:
        if digest not in self.kept:
            self.kept[digest] = self.index.kept_with_payload(digest) if self.index is not None else None
        return self.kept[digest]

    def original(self, digest: str, page_id: str, source: str) -> _Original | None:
        """The original a response with payload ``digest`` repeats, or None when it is one."""
        kept = self.kept_for(digest)
        if kept is not None:
            if kept["id"] == page_id and kept["source"] == source:
                return None
            written = self.first.get(digest)
            if written is not None and written.record_id == (_ref_id(kept["id"]) or self.new_ids.get((kept["id"], kept["source"]))):
                return written
            date = kept.get("crawl_date")
            return _Original(
                kept["url"],
                date if isinstance(date, str) and _WARC_DATE.match(date) else None,
                _ref_id(kept["id"]) or self.new_ids.get((kept["id"], kept["source"])),
            )
        return self.first.get(digest)

    # -- writing -----------------------------------------------------------------------

    def emit(self, record_type: str, raw: bytes, record_id: str, input_hash: bytes | None = None) -> None:
        """Write a record; ``input_hash``: the SHA-1 of the input record it stands for (a
        repeat of that input record is then known whatever was written for it)."""
        self.out.write_raw_record(raw)
        self.stats.records_out[record_type] += 1
        if record_id:
            self.written[record_id] = input_hash if input_hash is not None else hashlib.sha1(raw).digest()

    def metadata(self, page_id: str, source: str, url: str, record_id: str, date: str | None) -> None:
        """A metadata record after a near duplicate's record, when the index says it is one."""
        info = self.index.cluster_of(page_id, source) if self.index is not None else None
        if info is None or info["size"] < 2 or info["keep"]:
            return
        kept = info["kept"]
        body = {
            "software": "pagetwin",
            "page": {"id": page_id, "url": url},
            "cluster": info["cluster"],
            "cluster_size": info["size"],
            "kept": {"id": kept["id"], "url": kept["url"]},
            "relation": "same-text" if info["same_text"] else "near-duplicate",
        }
        fields = [
            ("WARC-Record-ID", new_record_id()),
            ("WARC-Date", date if date and _WARC_DATE.match(date) else _now()),
            ("WARC-Target-URI", url),
            ("WARC-Concurrent-To", record_id),
            ("Content-Type", "application/json"),
        ]
        block = json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")
        self.emit("metadata", build_record("metadata", fields, block), "")
        self.stats.metadata_made += 1

    def revisit(self, fields: list[tuple[str, str]], http_head: bytes, digest: str, orig: _Original) -> bytes:
        """The revisit record that stands for a response (its WARC ``fields``, its HTTP head
        as the block). A WARC/1.1 record: the profile is WARC 1.1's."""
        kept = [(k, v) for k, v in fields if k.lower() not in _NOT_IN_REVISIT and k.lower() != "warc-payload-digest"]
        kept = [(k, v) for k, v in kept if not k.lower().startswith("warc-refers-to") and k.lower() != "warc-profile"]
        kept.append(("WARC-Payload-Digest", digest))
        kept.append(("WARC-Profile", REVISIT_PROFILE))
        kept.append(("WARC-Refers-To-Target-URI", header_value(orig.uri, url=True)))
        if orig.date:
            kept.append(("WARC-Refers-To-Date", orig.date))
        if orig.record_id:
            kept.append(("WARC-Refers-To", orig.record_id))
        return build_record("revisit", kept, http_head, "WARC/1.1")

    # -- a WARC input --------------------------------------------------------------------

    def warc_file(self, path: str) -> None:
        source = os.path.abspath(path)
        name = os.path.basename(path)
        for offset, rid, raw in iter_raw_records_at(path, clipped=True):
            self.record(raw, rid, rid or (f"{name}:{offset}" if offset is not None else ""), source)

    def arc_file(self, path: str) -> None:
        """An ARC file's records as WARC records (warcio's conversion: the ARC header line
        becomes WARC headers, the block is the record's bytes as read), each with
        ``WARC-Source-Id: <file>:<offset>``, the id the ARC reader gives the page."""
        from warcio.archiveiterator import ArchiveIterator

        from pagetwin.outputs.warc import member_offsets

        source = os.path.abspath(path)
        name = os.path.basename(path)
        offsets = member_offsets(path)
        try:
            with open(path, "rb") as fh:
                records = ArchiveIterator(fh, arc2warc=True, no_record_parse=True)
                for rec in records:
                    block = rec.raw_stream.read()  # first: asking the offset before reads past it
                    raw_offset = records.get_record_offset()
                    page_id = f"{name}:{offsets.get(raw_offset, raw_offset) if offsets else raw_offset}"
                    fields = [(k, v) for k, v in rec.rec_headers.headers if k.lower() not in ("warc-type", "content-length")]
                    fields.append(("WARC-Source-Id", page_id))
                    raw = build_record(rec.rec_type, fields, block, rec.rec_headers.protocol or "WARC/1.0")
                    self.record(raw, rec.rec_headers.get_header("WARC-Record-ID") or "", page_id, source)
        except Exception as exc:  # noqa: BLE001 - a damaged ARC: what was read stands, the rest is counted
            self.stats.unreadable.append(f"{path}: {type(exc).__name__}: {' '.join(str(exc).split())[:150]}")

    def record(self, raw: bytes, rid: str, page_id: str, source: str) -> None:
        """Write one input record (its exact bytes ``raw``; ``page_id``: the id the index
        knows its page by)."""
        version, fields, block = split_record(raw)
        wtype = (field(fields, "WARC-Type") or "").strip().lower() or "unknown"
        self.stats.records_in[wtype] += 1
        input_hash = hashlib.sha1(raw).digest()
        if is_clipped(raw):
            # The file ends inside this record: what there is, marked as WARC 1.1 says
            # (WARC-Truncated), with the length and block digest of the bytes kept; the
            # payload digest described the whole payload and goes.
            drop = {"warc-type", "content-length", "warc-block-digest", "warc-payload-digest", "warc-truncated"}
            fields = [(k, v) for k, v in fields if k.lower() not in drop] + [("WARC-Truncated", "length")]
            raw = build_record(wtype, fields, block, version.decode("ascii", "replace"))
            self.stats.clipped_marked += 1
        if rid and rid in self.written:
            if self.written[rid] == input_hash:
                self.stats.repeated_dropped += 1
                return
            fields = [(k, v) for k, v in fields if k.lower() not in ("warc-record-id", "warc-type", "content-length", "warc-block-digest")]
            rid = new_record_id()
            fields.insert(0, ("WARC-Record-ID", rid))
            raw = build_record(wtype, fields, block, version.decode("ascii", "replace"))
            self.stats.renamed += 1
        if wtype == "response" and not field(fields, "WARC-Truncated"):
            if self._response(fields, block, rid, page_id, source, input_hash):
                return
        self.emit(wtype, raw, rid, input_hash)
        if page_id and page_id != rid:
            self.new_ids[(page_id, source)] = rid  # an ARC page's record: refer to it by this id
        if wtype in ("response", "resource") and page_id and rid:
            url = (field(fields, "WARC-Target-URI") or "").strip("<>")
            self.metadata(page_id, source, url, rid, field(fields, "WARC-Date"))

    def _response(
        self, fields: list[tuple[str, str]], block: bytes, rid: str, page_id: str, source: str, input_hash: bytes
    ) -> bool:
        """Write a response as a revisit when it repeats a payload; False to copy it whole."""
        is_http = "application/http" in (field(fields, "Content-Type") or "").lower() or block.startswith(b"HTTP/")
        parts = _http_split(block) if is_http else (b"", block)
        if parts is None:
            return False
        http_head, payload = parts
        from pagetwin.sources.payload import normalize_digest

        digest = normalize_digest(field(fields, "WARC-Payload-Digest")) or _b32_sha1(payload)
        orig = self.original(digest, page_id, source)
        uri = (field(fields, "WARC-Target-URI") or "").strip("<>")
        date = field(fields, "WARC-Date")
        if orig is None:
            self.first.setdefault(digest, _Original(uri, date if date and _WARC_DATE.match(date) else None, rid or None))
            return False
        record_id = rid or new_record_id()
        if not rid:
            fields = [("WARC-Record-ID", record_id)] + fields
        self.emit("revisit", self.revisit(fields, http_head, digest, orig), record_id, input_hash if rid else None)
        self.stats.revisits_made += 1
        return True

    # -- other inputs ------------------------------------------------------------------

    def other_file(self, path: str, settings: Any) -> None:
        from pagetwin.sources import SourceStats, iter_pages

        stats = SourceStats()
        for page in iter_pages([path], settings.input, stats):
            source = os.path.abspath(page.source)
            self.stats.records_in[page.kind] += 1
            if page.kind != "response":
                self.stats.not_written += 1
                continue
            digest = page.payload_digest
            orig = None if page.truncated or not digest else self.original(digest, page.id, source)
            if orig is not None:
                rid = new_record_id()
                fields = [
                    ("WARC-Record-ID", rid),
                    ("WARC-Date", page.crawl_date if page.crawl_date and _WARC_DATE.match(page.crawl_date) else _now()),
                    ("WARC-Target-URI", header_value(page.url, url=True) or "urn:pagetwin:" + header_value(page.id, url=True)),
                    ("WARC-Source-Id", page.id),
                ]
                self.emit("revisit", self.revisit(fields, b"", digest, orig), rid)
                self.new_ids[(page.id, source)] = rid
                self.stats.revisits_made += 1
                continue
            rid = self.out.write_new_page(page)
            self.stats.records_out["resource" if "http_status" not in (page.meta or {}) else "response"] += 1
            self.written[rid] = b""
            self.new_ids[(page.id, source)] = rid
            if digest and not page.truncated:
                self.first.setdefault(digest, _Original(page.url, page.crawl_date if page.crawl_date and _WARC_DATE.match(page.crawl_date) else None, rid))
            self.metadata(page.id, source, page.url, rid, None)
        # records the sources skipped (requests of an ARC, non-HTML) are not pages
        skipped = sum(stats.skipped.values())
        self.stats.records_in["not-a-page"] += skipped
        self.stats.not_written += skipped


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def input_files(inputs: list[str]) -> list[tuple[str, str]]:
    """(path, kind) of every input file, folders walked as the sources walk them."""
    from pagetwin.sources import SourceStats, input_kind
    from pagetwin.sources.files import walk_inputs

    out = []
    for path in inputs:
        if os.path.isdir(path):
            # a folder names archives "warc" whether WARC or ARC: their content tells
            out.extend((p, (input_kind(p) or kind) if kind == "warc" else kind) for p, _rel, kind in walk_inputs(path, SourceStats()))
        elif os.path.isfile(path):
            out.append((path, input_kind(path) or ""))
    return out


def write_dedup_warc(inputs: list[str], settings: Any, index: Any, path: str | Path) -> DedupWarcStats:
    """Write the dedup'd WARC of ``inputs`` (the readable inputs of the run: files and
    folders) to ``path`` (gzipped record by record when it ends in ``.gz``; written to a
    temporary file and renamed into place), deciding with ``index`` (the run's finished
    index: clusters written). Returns the record counts."""
    from pagetwin import __version__
    from pagetwin.outputs.files import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp, WarcWriter(tmp, gzip=path.name.endswith(".gz")) as out:
        out.write_warcinfo(
            path.name,
            {
                "software": f"pagetwin {__version__}",
                "format": "WARC File Format 1.1",
                "description": "every input record, each exact payload duplicate as a revisit record "
                "(identical-payload-digest profile), each near duplicate with a metadata record naming its "
                "cluster and kept page; other records copied byte for byte (each keeps its own WARC version)",
            },
        )
        run = _Run(index, out)
        run.stats.records_out["warcinfo"] += 1
        for file_path, kind in input_files(inputs):
            run.stats.files += 1
            if kind == "warc":
                run.warc_file(file_path)
            elif kind == "arc":
                run.arc_file(file_path)
            elif kind in ("html", "jsonl", "parquet"):
                run.other_file(file_path, settings)
    return run.stats
