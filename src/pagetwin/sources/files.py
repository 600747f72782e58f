"""HTML files: a folder read recursively (sorted, so runs are deterministic), or single files;
and the walk of a folder given, which finds its WARC, ARC, JSONL and HTML files.

A page's id is its path relative to the folder given (POSIX separators), or its file name when
the file was given directly.

Its URL, and so its site (whose template is learned over the site's pages), is the first of

1. the page's own canonical link (``<link rel=canonical>``), then ``og:url``, when it names an
   absolute http(s) URL;
2. its ``<base href>``, when absolute http(s);
3. a ``host/path`` layout as ``wget -r`` and ``httrack`` write it: when the first folder of the
   path relative to the folder given is a host name (``www.example.org``, ``example.org:8080``),
   the URL is ``http://`` + that path;
4. else a ``file://`` URI. Such a page's site is the folder that was given (a file given
   directly: its folder), never a sub-folder's name: a folder's name is not a host, and one
   folder per topic or story must not become one site per story.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import zlib
from urllib.parse import quote
from collections.abc import Iterator
from pathlib import Path

from pagetwin.config import InputSettings
from pagetwin.model import Page
from pagetwin.sources import ARCHIVE_SUFFIXES, HTML_SUFFIXES, JSONL_SUFFIXES, PARQUET_SUFFIXES
from pagetwin.sources.base import Skip, SourceStats
from pagetwin.sources.payload import Body, b32_digest, is_binary, prepare_body
CANONICAL_SCAN = 65536  # bytes searched for a canonical URL
READ_STEP = 1 << 20
GZIP_READ_CAP = 1 << 28  # HTML bytes read from one .html.gz file, at most

_LINK_TAG = re.compile(rb"<link\b[^>]{0,2000}>", re.IGNORECASE)
_META_TAG = re.compile(rb"<meta\b[^>]{0,2000}>", re.IGNORECASE)
_BASE_TAG = re.compile(rb"<base\b[^>]{0,2000}>", re.IGNORECASE)
# A folder named like a host: dot-separated labels, the last alphabetic, an optional port.
_HOST_DIR = re.compile(r"^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}(:\d{1,5})?$", re.IGNORECASE)
_ATTR = re.compile(rb"""([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def _attrs(tag: bytes) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for m in _ATTR.finditer(tag):
        value = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
        out.setdefault(m.group(1).lower(), value or b"")
    return out


def canonical_url(body: bytes) -> str | None:
    """The absolute http(s) URL a page declares for itself (canonical link, then og:url, then
    ``<base href>``)."""
    head = body[:CANONICAL_SCAN]
    found = None
    for m in _LINK_TAG.finditer(head):
        attrs = _attrs(m.group(0))
        if b"canonical" in attrs.get(b"rel", b"").lower().split():
            found = attrs.get(b"href")
            break
    if not found:
        for m in _META_TAG.finditer(head):
            attrs = _attrs(m.group(0))
            if attrs.get(b"property", attrs.get(b"name", b"")).lower() == b"og:url":
                found = attrs.get(b"content")
                break
    if not found:
        for m in _BASE_TAG.finditer(head):
            found = _attrs(m.group(0)).get(b"href")
            if found:
                break
    if not found:
        return None
    url = found.decode("utf-8", "replace").strip().replace("&amp;", "&")
    if not re.match(r"(?i)^https?://[^\s/]+", url) or any(c in url for c in " \t\r\n<>\"'"):
        return None
    return url


def folder_site(folder: str) -> str:
    """The site of the pages of a folder given that have no host evidence."""
    return "file:" + Path(folder).resolve().as_posix()


def layout_url(rel: str) -> str | None:
    """``http://host/path`` when the first folder of ``rel`` (POSIX, relative to the folder
    given) is a host name, as ``wget -r`` lays pages out; else None."""
    first, sep, rest = rel.partition("/")
    if not sep or not rest or not _HOST_DIR.match(first):
        return None
    return "http://" + first.lower() + "/" + quote(rest, safe="/%:@!$&'()*+,;=~-._")


def read_html_file(path: str, page_id: str, settings: InputSettings, site: str = "") -> Page | Skip:
    """One HTML file as a Page (body cut at max_page_bytes; digest over the whole file, or over
    the whole HTML of a gzipped one).
    ``site``: the site of the page when neither its HTML nor ``page_id`` names its URL (the
    module docstring)."""
    limit = settings.max_page_bytes
    hasher = hashlib.sha1()
    kept = bytearray()
    read = 0
    try:
        with open(path, "rb") as raw_fh:
            # Named .gz and gzipped (a misnamed plain file is read as it is): the digest is of
            # the HTML inside (so page.html and page.html.gz are one page), read up to
            # GZIP_READ_CAP, since a small file can inflate without end.
            gzipped = path.lower().endswith(".gz") and raw_fh.read(2) == b"\x1f\x8b"
            raw_fh.seek(0)
            fh = gzip.GzipFile(fileobj=raw_fh) if gzipped else raw_fh
            while not gzipped or read < GZIP_READ_CAP:
                chunk = fh.read(READ_STEP)
                if not chunk:
                    break
                read += len(chunk)
                hasher.update(chunk)
                if len(kept) <= limit:
                    kept += chunk[: limit + 1 - len(kept)]
    except EOFError:
        return Skip("truncated-gzip", f"{page_id}: the gzip stream ends early")
    except (gzip.BadGzipFile, zlib.error) as exc:
        return Skip("corrupt-gzip", f"{page_id}: {' '.join(str(exc).split())[:120]}")
    raw = bytes(kept)
    if not raw.strip():
        return Skip("empty-body", page_id)
    if is_binary(raw):
        return Skip("binary-body", page_id)
    # The extension says HTML: the same label rules as an HTTP text/html response.
    result: Body = prepare_body(raw[:limit], media="text/html", limit=limit, raw_cut=len(raw) > limit)
    if result.kind != "page":
        return Skip(result.reason or "not-html", f"{page_id} {result.detail}".strip())
    meta: dict = {}
    if result.cut:
        meta["cut_at"] = limit
    url = canonical_url(result.body) or layout_url(page_id)
    if url is None:
        url = Path(path).resolve().as_uri()
        site = site or "file:" + Path(path).parent.resolve().as_posix()
    else:
        site = ""
    return Page(
        id=page_id, url=url, body=result.body, payload_digest=b32_digest(hasher.digest()),
        source=path, truncated=result.cut, meta=meta, site=site,
    )


def iter_html_file(path: str, settings: InputSettings, stats: SourceStats) -> Iterator[Page | Skip]:
    try:
        yield read_html_file(path, os.path.basename(path), settings)
    except OSError as exc:
        stats.error(f"{path}: cannot read ({exc.strerror or exc})")
        yield Skip("unreadable-file", os.path.basename(path))


def _walk(folder: str, stats: SourceStats) -> Iterator[tuple[str, str]]:
    """(path, id) of every file under ``folder``, in the order of their sorted relative paths
    (directories walked depth first, entries sorted by name; links to directories are not
    followed, so a link loop cannot trap the walk). The id is the path relative to the folder,
    with POSIX separators."""
    root = Path(folder)

    def listing(directory: str) -> Iterator[os.DirEntry]:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            stats.error(f"{directory}: cannot read directory ({exc.strerror or exc})")
            entries = []
        return iter(entries)

    stack: list[Iterator[os.DirEntry]] = [listing(str(root))]
    while stack:
        entry = next(stack[-1], None)
        if entry is None:
            stack.pop()
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir:
            stack.append(listing(entry.path))
        else:
            yield entry.path, Path(entry.path).relative_to(root).as_posix()


def walk_folder(folder: str, stats: SourceStats) -> Iterator[tuple[str, str]]:
    """(path, id) of every HTML file (``HTML_SUFFIXES``) under ``folder``, in _walk's order."""
    for path, rel in _walk(folder, stats):
        if path.lower().endswith(HTML_SUFFIXES):
            yield path, rel


def folder_kind(name: str) -> str | None:
    """The kind of a file found in a folder, by its name: "html", "warc" (WARC or ARC: the
    content tells them apart), "jsonl", or None (not an input: logs, CDX files, ...)."""
    low = name.lower()
    if low.endswith(HTML_SUFFIXES):
        return "html"
    if low.endswith(ARCHIVE_SUFFIXES):
        return "warc"
    if low.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if low.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return None


def walk_inputs(folder: str, stats: SourceStats) -> Iterator[tuple[str, str, str]]:
    """(path, id, kind) of every input file under ``folder`` (folder_kind), in _walk's order.
    The other files are not read; they are counted in ``stats.files_ignored``."""
    for path, rel in _walk(folder, stats):
        kind = folder_kind(os.path.basename(path))
        if kind is None:
            stats.ignore_file(rel)
        else:
            yield path, rel, kind


def iter_folder_html(path: str, rel: str, settings: InputSettings, stats: SourceStats, site: str) -> Iterator[Page | Skip]:
    """One HTML file of a folder given as a page (id ``rel``); without host evidence its site
    is ``site``, the folder's (folder_site)."""
    try:
        yield read_html_file(path, rel, settings, site)
    except OSError as exc:
        # Seen but unreadable: counted, and named in the errors.
        stats.error(f"{path}: cannot read ({exc.strerror or exc})")
        yield Skip("unreadable-file", rel)
