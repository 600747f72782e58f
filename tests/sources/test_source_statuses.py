"""input.statuses (issue 13, item 5): only the HTTP statuses asked for become pages; the others
are skipped and counted by status ("http-status-404"). Every file is written by the test."""

from __future__ import annotations

import gzip
import json

import pytest

from pagetwin.cli import main
from pagetwin.config import ConfigError, InputSettings, Settings
from pagetwin.sources.payload import StatusFilter, sha1_digest
from pagetwin.sources.warc import iter_arc, iter_warc
from tests.fixtures.records import arc_file, arc_record, html_page, read_all

DATE = "2024-03-01T12:00:00Z"
REASONS = {"http-status-301": 1, "http-status-404": 1, "http-status-500": 1}


def _record(wtype: str, url: str, block: bytes, n: int, extra: dict[str, str] | None = None,
            content_type: str = "application/http; msgtype=response") -> bytes:
    headers = {
        "WARC-Type": wtype,
        "WARC-Record-ID": f"<urn:uuid:00000000-0000-0000-0000-{n:012d}>",
        "WARC-Date": DATE,
        "WARC-Target-URI": url,
        "Content-Type": content_type,
        **(extra or {}),
        "Content-Length": str(len(block)),
    }
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    return gzip.compress(head.encode() + block + b"\r\n\r\n")


def _http(status: str, body: bytes, content_type: str = "text/html") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n\r\n".encode() + body


def _crawl(path):
    """A WARC with 200, 301, 404 and 500 responses and a revisit of the 200."""
    ok = html_page("Found")
    records = [
        _record("warcinfo", "", b"software: tests\r\n", 0, content_type="application/warc-fields"),
        _record("response", "https://example.org/", _http("200 OK", ok), 1,
                {"WARC-Payload-Digest": sha1_digest(ok)}),
        _record("response", "https://example.org/old", _http("301 Moved Permanently", html_page("Moved")), 2),
        _record("response", "https://example.org/gone", _http("404 Not Found", html_page("Missing")), 3),
        _record("response", "https://example.org/boom", _http("500 Internal Server Error", html_page("Broken")), 4),
        _record("revisit", "https://example.org/", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n", 5,
                {"WARC-Payload-Digest": sha1_digest(ok), "WARC-Refers-To-Target-URI": "https://example.org/",
                 "WARC-Refers-To-Date": DATE,
                 "WARC-Profile": "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"}),
    ]
    path.write_bytes(b"".join(records))
    return path


def test_default_keeps_2xx_and_revisits_and_counts_the_others_by_status(tmp_path):
    pages, stats = read_all([_crawl(tmp_path / "crawl.warc.gz")])
    assert [(p.kind, p.url) for p in pages] == [("response", "https://example.org/"), ("revisit", "https://example.org/")]
    assert stats.skipped == {"warcinfo": 1, **REASONS}
    assert stats.records_total == 6 == stats.pages_read + stats.images + sum(stats.skipped.values())
    assert stats.consistent()


def test_any_keeps_every_response(tmp_path):
    pages, stats = read_all([_crawl(tmp_path / "crawl.warc.gz")], InputSettings(statuses="any"))
    assert [p.meta.get("http_status") for p in pages] == [200, 301, 404, 500, 200]
    assert stats.skipped == {"warcinfo": 1} and stats.consistent()


def test_a_list_of_classes_and_codes(tmp_path):
    pages, stats = read_all([_crawl(tmp_path / "crawl.warc.gz")], InputSettings(statuses="2xx, 404"))
    assert [p.meta.get("http_status") for p in pages] == [200, 404, 200]
    assert stats.skipped == {"warcinfo": 1, "http-status-301": 1, "http-status-500": 1}
    pages, stats = read_all([_crawl(tmp_path / "crawl.warc.gz")], InputSettings(statuses="3xx,5xx"))
    assert [p.meta.get("http_status") for p in pages] == [301, 500]
    assert stats.skipped == {"warcinfo": 1, "http-status-200": 2, "http-status-404": 1}


def test_a_revisit_recording_a_refused_status_is_skipped_and_304_stands_for_its_original(tmp_path):
    path = tmp_path / "revisits.warc.gz"
    path.write_bytes(
        _record("revisit", "https://example.org/gone", _http("404 Not Found", b""), 1, {"WARC-Payload-Digest": "sha1:AAAA"})
        + _record("revisit", "https://example.org/same", _http("304 Not Modified", b""), 2, {"WARC-Payload-Digest": "sha1:BBBB"})
        + _record("revisit", "https://example.org/bare", b"", 3, {"WARC-Payload-Digest": "sha1:CCCC"})
    )
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["https://example.org/same", "https://example.org/bare"]
    assert stats.skipped == {"http-status-404": 1} and stats.consistent()


def test_records_without_a_status_line(tmp_path):
    path = tmp_path / "nostatus.warc.gz"
    body = html_page("Bare")
    path.write_bytes(
        # an HTTP message whose status line has no code: refused unless "any"
        _record("response", "https://example.org/a", b"HTTP/1.1 OK\r\nContent-Type: text/html\r\n\r\n" + body, 1)
        # labelled application/http but no HTTP head at all: no status either
        + _record("response", "https://example.org/b", body, 2)
        # a response stored as a bare payload (its own media type, as some archives write it),
        # and a resource: no HTTP message, so nothing to judge
        + _record("response", "https://example.org/c", body, 3, content_type="text/html; charset=utf-8")
        + _record("resource", "file:///d.html", body, 4, content_type="text/html")
    )
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["https://example.org/c", "file:///d.html"]
    assert stats.skipped == {"http-status-none": 2} and stats.consistent()
    pages, stats = read_all([path], InputSettings(statuses="any"))
    assert len(pages) == 4 and stats.skipped == {}


def test_non_html_keeps_its_reason(tmp_path):
    """The status is judged for would-be pages: a 404 style sheet is still "not-html"."""
    path = tmp_path / "css.warc.gz"
    path.write_bytes(_record("response", "https://example.org/x.css", _http("404 Not Found", b"a{}", "text/css"), 1))
    pages, stats = read_all([path])
    assert pages == [] and stats.skipped == {"not-html": 1}


def test_arc_statuses(tmp_path):
    def payload(status: str, title: str) -> bytes:
        return _http(status, html_page(title))

    path = tmp_path / "crawl.arc"
    path.write_bytes(arc_file([
        arc_record("http://example.org/", payload("200 OK", "Home")),
        arc_record("http://example.org/gone", payload("404 Not Found", "Gone")),
        arc_record("http://example.org/moved", payload("302 Found", "Moved")),
        arc_record("http://example.org/odd", b"HTTP/1.1 OK\r\nContent-Type: text/html\r\n\r\n" + html_page("Odd")),
    ]))
    pages, stats = read_all([path])
    assert [p.url for p in pages] == ["http://example.org/"]
    assert stats.skipped == {"arc-header": 1, "http-status-404": 1, "http-status-302": 1, "http-status-none": 1}
    assert stats.consistent()
    pages, stats = read_all([path], InputSettings(statuses="200,404"))
    assert [p.url for p in pages] == ["http://example.org/", "http://example.org/gone"]
    pages, stats = read_all([path], InputSettings(statuses="any"))
    assert len(pages) == 4 and stats.skipped == {"arc-header": 1}


def test_html_files_and_jsonl_lines_have_no_status(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "a.html").write_bytes(html_page("File"))
    (tmp_path / "feed.jsonl").write_text(json.dumps({"url": "https://example.org/j", "html": html_page("Line").decode()}) + "\n")
    for statuses in ("2xx", "404", "5xx"):
        pages, stats = read_all([tmp_path / "site", tmp_path / "feed.jsonl"], InputSettings(statuses=statuses))
        assert len(pages) == 2 and not any(k.startswith("http-status") for k in stats.skipped)


@pytest.mark.parametrize("bad", ["", " , ", "200x", "2x", "6xx", "099", "600", "ok", "2xx;404", "any,foo"])
def test_bad_values_are_config_errors(bad):
    with pytest.raises(ConfigError, match="input.statuses"):
        InputSettings(statuses=bad)
    with pytest.raises(ConfigError, match="input.statuses"):
        Settings().set("input.statuses", bad)
    with pytest.raises(ConfigError, match="input.statuses"):
        StatusFilter.parse(bad)


def test_good_values():
    for spec in ("2xx", "any", "ANY", "2xx,404", " 200 , 3xx ", "1xx,2xx,3xx,4xx,5xx", "2xx,any"):
        Settings().set("input.statuses", spec)
    f = StatusFilter.parse("2xx,404")
    assert [f.accepts(s) for s in (200, 204, 299, 404, 301, 403, 500, None)] == [True] * 4 + [False] * 4
    assert StatusFilter.parse("any").accepts(None)


def test_a_reader_refuses_a_bad_value_when_constructed(tmp_path):
    """Set around the dataclass check (assigned after construction): the reader says so at once."""
    path = _crawl(tmp_path / "crawl.warc.gz")
    settings = InputSettings()
    settings.statuses = "nope"
    with pytest.raises(ConfigError):
        iter_warc(str(path), settings, None)
    with pytest.raises(ConfigError):
        iter_arc(str(path), settings, None)


def test_cli_counts_statuses_in_the_summary_and_refuses_a_bad_value(tmp_path, capsys):
    crawl = _crawl(tmp_path / "crawl.warc.gz")
    out = tmp_path / "out"
    assert main(["dedup", str(crawl), "--out", str(out), "--workers", "1"]) == 0
    rec = json.loads((out / "summary.json").read_text())["records"]
    assert {k: v for k, v in rec["skipped"].items() if k.startswith("http-status")} == REASONS
    assert rec["pages_read"] == 2 and rec["revisits"] == 1
    assert rec["records_total"] == rec["pages_read"] + rec["images"] + sum(rec["skipped"].values())
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and len({r["cluster"] for r in rows}) == 1  # the revisit joins its original

    out2 = tmp_path / "out2"
    assert main(["dedup", str(crawl), "--out", str(out2), "--workers", "1", "--input-statuses", "any"]) == 0
    assert json.loads((out2 / "summary.json").read_text())["records"]["pages_read"] == 5

    capsys.readouterr()
    assert main(["dedup", str(crawl), "--out", str(tmp_path / "out3"), "--set", "input.statuses=2xx,oops"]) == 2
    assert "input.statuses" in capsys.readouterr().err
