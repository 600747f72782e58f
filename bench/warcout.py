"""A deterministic crawl writer for the example crawl and the benchmark corpus.

A thin layer over pagetwin's own `pagetwin.outputs.warc.WarcWriter` (warcio underneath, WARC/1.1,
one gzip member per record) that derives record ids from the URL and date (uuid5), so the same
inputs always give byte-identical files. No warcinfo record is written: the project writer stamps
warcinfo with the current time and a random id, which would make every rebuild differ.
"""

from __future__ import annotations

import base64
import hashlib
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
