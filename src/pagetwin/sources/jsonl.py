"""JSON Lines: one page per line, ``{"url": ..., "html": ..., ...}``; other fields go to
Page.meta. ``.jsonl.gz`` is read through gzip. The id is the ``id`` field when present, else
"<file name>:<line number>" (1-based)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import zlib
from collections.abc import Iterator

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources.base import Skip, SourceStats
from pagetwin.sources.payload import b32_digest, iso_date

_DATE_FIELDS = ("crawl_date", "date", "timestamp", "fetch_time")


def _open(path: str):
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def iter_jsonl(path: str, settings: InputSettings, stats: SourceStats) -> Iterator[Page | Skip]:
    name = os.path.basename(path)
    lineno = 0
    try:
        with _open(path) as fh:
            for line in fh:
                lineno += 1
                if not line.strip():
                    continue  # blank lines are not records
                yield _line_page(line, lineno, name, path, settings)
    except (OSError, EOFError, zlib.error) as exc:
        # Truncated or corrupt gzip: what was read stands; the rest is lost, and said so.
        stats.error(f"{path}: unreadable after line {lineno} ({exc})")
        yield Skip("truncated-gzip" if isinstance(exc, EOFError) else "corrupt-gzip", f"{name} after line {lineno}")


def _line_page(line: bytes, lineno: int, name: str, path: str, settings: InputSettings) -> Page | Skip:
    where = f"{name}:{lineno}"
    try:
        obj = json.loads(line)
    except UnicodeDecodeError:
        try:
            obj = json.loads(line.decode("utf-8", "replace"))
        except ValueError as exc:
            return Skip("bad-json", f"{where}: {exc}")
    except (ValueError, RecursionError) as exc:
        return Skip("bad-json", f"{where}: {str(exc)[:100]}")
    if not isinstance(obj, dict):
        return Skip("bad-json", f"{where}: not an object")
    html = obj.get("html")
    if not isinstance(html, str) or not html.strip():
        return Skip("missing-html-field", where)
    limit = settings.max_page_bytes
    body = html.encode("utf-8", "replace")  # lone surrogates from "\ud800" escapes become "?"
    digest = b32_digest(hashlib.sha1(body).digest())
    meta = {k: v for k, v in obj.items() if k not in ("url", "html", "id")}
    cut = len(body) > limit
    if cut:
        body = body[:limit]
        meta["cut_at"] = limit
    page_id = obj.get("id")
    page_id = str(page_id) if page_id not in (None, "") else where
    url = obj.get("url")
    date = None
    for key in _DATE_FIELDS:
        if isinstance(obj.get(key), str):
            date = iso_date(obj[key])
            if date:
                break
    return Page(
        id=page_id, url=url if isinstance(url, str) else "", body=body,
        http_charset="utf-8",  # the body was encoded as UTF-8 here, whatever its meta tag says
        crawl_date=date, payload_digest=digest, source=path, truncated=cut, meta=meta,
    )
