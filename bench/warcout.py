"""A small, deterministic WARC writer for the example crawl and the benchmark corpus.

Built on warcio (gzip per record). Record ids are derived from the URL and date (uuid5), so the
same inputs always give byte-identical files.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from io import BytesIO
from typing import BinaryIO

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

REVISIT_PROFILE = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"


def payload_digest(body: bytes) -> str:
    """The WARC payload digest form: 'sha1:' + base32 of the SHA-1 of the body."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def record_id(*parts: str) -> str:
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, ' '.join(parts))}>"


class CrawlWriter:
    """Writes warcinfo, response and revisit records to a binary stream (gzip per record)."""

    def __init__(self, stream: BinaryIO, gzip: bool = True):
        self._writer = WARCWriter(stream, gzip=gzip)

    def warcinfo(self, filename: str, date: str, info: dict[str, str]) -> None:
        record = self._writer.create_warcinfo_record(filename, info)
        record.rec_headers.replace_header("WARC-Record-ID", record_id("warcinfo", filename, date))
        record.rec_headers.replace_header("WARC-Date", date)
        self._writer.write_record(record)

    def response(
        self,
        url: str,
        date: str,
        body: bytes,
        content_type: str | None = "text/html; charset=utf-8",
        extra_http_headers: list[tuple[str, str]] | None = None,
    ) -> str:
        """Write an HTTP 200 response; returns its payload digest (for later revisits)."""
        headers = []
        if content_type is not None:
            headers.append(("Content-Type", content_type))
        headers.append(("Content-Length", str(len(body))))
        headers.extend(extra_http_headers or [])
        http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
        digest = payload_digest(body)
        record = self._writer.create_warc_record(
            url,
            "response",
            payload=BytesIO(body),
            length=len(body),
            http_headers=http,
            warc_headers_dict={
                "WARC-Record-ID": record_id(url, date),
                "WARC-Date": date,
                "WARC-Payload-Digest": digest,
            },
        )
        self._writer.write_record(record)
        return digest

    def revisit(self, url: str, date: str, digest: str, refers_to_url: str, refers_to_date: str,
                content_type: str = "text/html; charset=utf-8") -> None:
        """An identical-payload-digest revisit: the server sent the same body as before."""
        http = StatusAndHeaders("200 OK", [("Content-Type", content_type)], protocol="HTTP/1.1")
        record = self._writer.create_revisit_record(
            url, digest, refers_to_url, refers_to_date, http_headers=http
        )
        record.rec_headers.replace_header("WARC-Record-ID", record_id("revisit", url, date))
        record.rec_headers.replace_header("WARC-Date", date)
        record.rec_headers.replace_header("WARC-Profile", REVISIT_PROFILE)
        record.rec_headers.add_header("WARC-Refers-To", record_id(refers_to_url, refers_to_date))
        self._writer.write_record(record)
