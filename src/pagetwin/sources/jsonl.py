"""JSON Lines: one page per line, ``{"url": ..., "html": ..., ...}``; other fields go to
Page.meta. ``.jsonl.gz`` is read through gzip. The id is the ``id`` field when present, else
"<file name>:<line number>" (1-based).

A line without HTML but with a ``text`` field is a text-only document, as datatrove and NeMo
Curator write them (``{"id", "text", "metadata"}``): a Page whose body is the UTF-8 text and
whose ``meta["text_only"]`` is True (the per-page kernel takes the text as the main text, with
no HTML parsing). Every line's metadata (its ``metadata`` object, and its other fields) is
``meta["metadata"]``, carried to the outputs. The field names are settings
(``input.jsonl_text_field``, ``_html_field``, ``_id_field``, ``_url_field``,
``_metadata_field``; see ``field_names``)."""

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
# Page.meta keys the readers set and the rest of pagetwin acts on (a "warc_offset" would send
# --survivors to copy a WARC record from the JSONL file): a line's own field of that name goes
# to meta["metadata"] only.
RESERVED_META = frozenset(
    {"text_only", "metadata", "warc_offset", "warc_type", "cut_at", "content_type", "http_status", "sniffed",
     "content_decoding", "warc_truncated", "profile", "refers_to", "refers_to_date", "warc_member_offset",
     "warc_offset_in_member"}
)
FIELD_DEFAULTS = {"text": "text", "html": "html", "id": "id", "url": "url", "metadata": "metadata"}


def field_names(settings: InputSettings) -> dict[str, str]:
    """The field (JSONL) or column (Parquet) names of a document's parts: the settings
    ``input.jsonl_<part>_field`` when the settings have them, else FIELD_DEFAULTS."""
    names = {}
    for part, default in FIELD_DEFAULTS.items():
        value = getattr(settings, f"jsonl_{part}_field", None)
        names[part] = value if isinstance(value, str) and value else default
    return names


def _open(path: str):
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def iter_jsonl(path: str, settings: InputSettings, stats: SourceStats) -> Iterator[Page | Skip]:
    name = os.path.basename(path)
    lineno = 0
    names = field_names(settings)
    try:
        with _open(path) as fh:
            for line in fh:
                lineno += 1
                if not line.strip():
                    continue  # blank lines are not records
                yield _line_page(line, lineno, name, path, settings, names)
    except (OSError, EOFError, zlib.error) as exc:
        # Truncated or corrupt gzip: what was read stands; the rest is lost, and said so.
        stats.error(f"{path}: unreadable after line {lineno} ({exc})")
        yield Skip("truncated-gzip" if isinstance(exc, EOFError) else "corrupt-gzip", f"{name} after line {lineno}")


def _line_page(line: bytes, lineno: int, name: str, path: str, settings: InputSettings, names: dict[str, str]) -> Page | Skip:
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
    return document_page(obj, where, path, settings, names)


def document_page(obj: dict, where: str, path: str, settings: InputSettings, names: dict[str, str]) -> Page | Skip:
    """The Page of one document (a JSONL line's object, a Parquet row): HTML when it has the
    HTML field, else text-only when it has the text field, else a Skip."""
    html = obj.get(names["html"])
    text = obj.get(names["text"])
    has_html = isinstance(html, str) and bool(html.strip())
    if not has_html and not (isinstance(text, str) and text.strip()):
        return Skip("missing-html-or-text-field", where)
    given = obj.get(names["metadata"])
    own_fields = {names["url"], names["html"], names["id"], names["metadata"]} | ({names["text"]} if not has_html else set())
    others = {k: v for k, v in obj.items() if k not in own_fields}
    metadata = {**(given if isinstance(given, dict) else {}), **others}
    limit = settings.max_page_bytes
    if has_html:
        body = html.encode("utf-8", "replace")  # lone surrogates from "\ud800" escapes become "?"
        meta = {k: v for k, v in others.items() if k not in RESERVED_META}
    else:
        body = text.encode("utf-8", "replace")
        meta = {"text_only": True, "content_type": "text/plain"}
    cut = len(body) > limit
    if cut:
        body = body[:limit]
        if not has_html:  # whole characters only: the text is read as UTF-8, not sniffed
            body = body.decode("utf-8", "ignore").encode("utf-8")
        meta["cut_at"] = limit
    digest = b32_digest(hashlib.sha1(body).digest())
    if metadata:
        meta["metadata"] = metadata
    page_id = obj.get(names["id"])
    page_id = str(page_id) if page_id not in (None, "") else where
    url = obj.get(names["url"])
    if not isinstance(url, str) and isinstance(given, dict):
        url = given.get("url")  # datatrove keeps the URL in the metadata
    date = None
    for source in (obj, given if isinstance(given, dict) else {}):
        for key in _DATE_FIELDS:
            if isinstance(source.get(key), str):
                date = iso_date(source[key])
                if date:
                    break
        if date:
            break
    return Page(
        id=page_id, url=url if isinstance(url, str) else "", body=body,
        http_charset="utf-8",  # the body was encoded as UTF-8 here, whatever its meta tag says
        crawl_date=date, payload_digest=digest, source=path, truncated=cut, meta=meta,
    )
