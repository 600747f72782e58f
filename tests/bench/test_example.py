"""The bundled example crawl holds what examples/README.md promises."""

from collections import Counter
from pathlib import Path

from fastwarc.warc import ArchiveIterator, WarcRecordType

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "debian-docs.warc.gz"


def records():
    with open(EXAMPLE, "rb") as stream:
        for record in ArchiveIterator(stream, parse_http=True):
            body = record.reader.read() if record.record_type == WarcRecordType.response else b""
            yield record.record_type, dict(record.headers), dict(record.http_headers or {}), body


def test_example_is_small_and_has_html_pages_revisits_and_exact_copies():
    assert EXAMPLE.stat().st_size < 2_000_000
    responses, revisits = {}, []
    for kind, warc, http, body in records():
        if kind == WarcRecordType.response:
            responses[warc["WARC-Target-URI"]] = (warc, http, body)
        elif kind == WarcRecordType.revisit:
            revisits.append(warc)
    html = [u for u, (_, http, _) in responses.items() if "html" in http.get("Content-Type", "")]
    assert 120 <= len(html) <= 250
    assert any("text/css" in http.get("Content-Type", "") for _, http, _ in responses.values())
    # Exact copies: the same payload under two URLs (llvm.org/docs alias of 16.0.6 pages).
    digests = Counter(w["WARC-Payload-Digest"] for w, _, _ in responses.values())
    aliases = [u for u in responses if u.startswith("https://llvm.org/docs/")]
    assert len(aliases) >= 2
    assert all(digests[responses[u][0]["WARC-Payload-Digest"]] == 2 for u in aliases)
    # Revisits point at an earlier response of the same URL with the same payload digest.
    assert len(revisits) >= 2
    for revisit in revisits:
        original = responses[revisit["WARC-Refers-To-Target-URI"]][0]
        assert original["WARC-Payload-Digest"] == revisit["WARC-Payload-Digest"]
        assert original["WARC-Date"] == revisit["WARC-Refers-To-Date"] < revisit["WARC-Date"]
        assert "identical-payload-digest" in revisit["WARC-Profile"]
    # Two versions of the same page path: the near-duplicate pairs.
    old = {u.split("/docs/", 1)[1] for u in html if "/15.0.6/" in u}
    new = {u.split("/docs/", 1)[1] for u in html if "/16.0.6/" in u}
    assert len(old & new) >= 50
