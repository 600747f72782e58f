"""Helpers for the source tests: every fixture file is written by the test itself."""

from __future__ import annotations

from pagetwin.config import InputSettings
from pagetwin.sources import SourceStats, iter_pages


def read_all(paths, settings=None, want_images=False):
    """(pages, stats) of reading ``paths``; asserts the accounting invariant."""
    stats = SourceStats()
    pages = list(iter_pages([str(p) for p in paths], settings or InputSettings(), stats, want_images=want_images))
    assert stats.records_total == stats.pages_read + stats.images + sum(stats.skipped.values()), stats.to_dict()
    return pages, stats


def arc_record(url: str, payload: bytes, mime: str = "text/html", date: str = "20080430204826", ip: str = "1.2.3.4") -> bytes:
    """One ARC v1 record: header line, then ``payload`` (HTTP head + body), then a newline."""
    return f"{url} {ip} {date} {mime} {len(payload)}\n".encode() + payload + b"\n"


def arc_file(records: list[bytes], name: str = "test.arc") -> bytes:
    """ARC bytes: the filedesc record, then ``records``."""
    info = b"1 0 pagetwin\nURL IP-address Archive-date Content-type Archive-length\n"
    head = f"filedesc://{name} 0.0.0.0 20080430204825 text/plain {len(info)}\n".encode()
    return head + info + b"\n" + b"".join(records)


def http(body: bytes, content_type: str | None = "text/html", extra: list[tuple[str, str]] | None = None) -> bytes:
    lines = ["HTTP/1.1 200 OK"]
    if content_type is not None:
        lines.append(f"Content-Type: {content_type}")
    for k, v in extra or []:
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def html_page(title: str, words: int = 50) -> bytes:
    text = " ".join(f"{title.lower()}word{i}" for i in range(words))
    return f"<!DOCTYPE html><html><head><title>{title}</title></head><body><p>{text}</p></body></html>".encode()
