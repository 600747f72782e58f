"""Folders of HTML files and single HTML files."""

from __future__ import annotations

import gzip
from pathlib import Path

from pagetwin.config import InputSettings
from pagetwin.sources.files import canonical_url
from pagetwin.sources.payload import sha1_digest
from tests.fixtures.records import html_page, read_all


def _tree(root: Path) -> None:
    (root / "b" / "deep").mkdir(parents=True)
    (root / "a.html").write_bytes(html_page("A"))
    (root / "b" / "c.HTM").write_bytes(html_page("C"))
    (root / "b" / "deep" / "d.htm").write_bytes(
        b'<html><head><link href="https://example.org/d" rel="canonical"></head><body><p>d</p></body></html>'
    )
    (root / "b" / "e.html").write_bytes(b'<html><head><meta property="og:url" content="https://example.org/e?x=1&amp;y=2"></head><body>e</body></html>')
    (root / "b" / "style.css").write_bytes(b"body{}")
    (root / "b" / "empty.html").write_bytes(b"  \n")
    (root / "b" / "image.html").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(300))
    (root / "z.txt").write_bytes(b"<html>not read: not .html</html>")


def test_folder_is_read_recursively_in_sorted_order(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    _tree(root)
    pages, stats = read_all([root])
    assert [p.id for p in pages] == ["a.html", "b/c.HTM", "b/deep/d.htm", "b/e.html"]
    a = pages[0]
    assert a.url == (root / "a.html").resolve().as_uri() and a.url.startswith("file:///")
    assert a.body == html_page("A") and a.payload_digest == sha1_digest(html_page("A"))
    assert a.source == str(root / "a.html")
    assert pages[2].url == "https://example.org/d"
    assert pages[3].url == "https://example.org/e?x=1&y=2"
    assert stats.records_total == 6  # .css and .txt are not inputs
    assert stats.skipped == {"empty-body": 1, "binary-body": 1}


def test_single_file_id_is_its_name(tmp_path):
    path = tmp_path / "page.html"
    path.write_bytes(html_page("Single"))
    pages, stats = read_all([path])
    assert [p.id for p in pages] == ["page.html"] and stats.pages_read == 1


def test_big_file_is_cut_and_digest_covers_all(tmp_path):
    body = html_page("Big", words=5000)
    path = tmp_path / "big.html"
    path.write_bytes(body)
    pages, stats = read_all([path], InputSettings(max_page_bytes=1000))
    assert len(pages[0].body) == 1000 and pages[0].truncated and stats.cut == 1
    assert pages[0].payload_digest == sha1_digest(body)


def test_empty_folder_and_deterministic_order(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    pages, stats = read_all([empty])
    assert pages == [] and stats.records_total == 0
    root = tmp_path / "many"
    root.mkdir()
    for name in ["b.html", "a.html", "c/a.html", "B.html"]:
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_bytes(html_page(name))
    pages, _ = read_all([root])
    assert [p.id for p in pages] == ["B.html", "a.html", "b.html", "c/a.html"]


def test_canonical_url_rules():
    assert canonical_url(b'<link rel="canonical" href="https://x.org/a">') == "https://x.org/a"
    assert canonical_url(b"<LINK REL=Canonical HREF=http://x.org/b>") == "http://x.org/b"
    assert canonical_url(b'<link rel="alternate canonical" href="https://x.org/c">') == "https://x.org/c"
    assert canonical_url(b'<link rel="canonical" href="/relative">') is None
    assert canonical_url(b'<link rel="stylesheet" href="https://x.org/s.css">') is None
    assert canonical_url(b'<meta name="og:url" content="https://x.org/og">') == "https://x.org/og"
    assert canonical_url(b" " * 70000 + b'<link rel="canonical" href="https://x.org/late">') is None  # past 64 KiB
    assert canonical_url(b'<link rel="canonical" href="javascript:alert(1)">') is None


def test_links_loops_and_odd_entries(tmp_path):
    root = tmp_path / "site"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "p.html").write_bytes(html_page("P"))
    (root / "sub" / "loop").symlink_to(root, target_is_directory=True)  # not followed
    (root / "dir.html").mkdir()  # a directory with an HTML name is walked, not read
    (root / "dir.html" / "q.htm").write_bytes(html_page("Q"))
    (root / "gone.html").symlink_to(tmp_path / "missing.html")  # a broken link
    pages, stats = read_all([root])
    assert [p.id for p in pages] == ["dir.html/q.htm", "sub/p.html"]
    assert stats.skipped == {"unreadable-file": 1}
    assert any("gone.html" in e for e in stats.errors)


def test_site_of_a_file_base_href_host_folder_else_the_folder_given(tmp_path):
    from pagetwin.html.templates import page_site
    from pagetwin.config import ExtractSettings

    root = tmp_path / "saved"
    (root / "www.example.org" / "news").mkdir(parents=True)
    (root / "story-a").mkdir()
    (root / "story-b").mkdir()
    (root / "www.example.org" / "news" / "1.html").write_bytes(html_page("wget layout"))
    (root / "story-a" / "x.html").write_bytes(html_page("no host evidence"))
    (root / "story-b" / "y.html").write_bytes(html_page("no host evidence either"))
    (root / "story-b" / "base.html").write_bytes(b'<html><head><base href="https://base.example/dir/"></head><body>b</body></html>')
    pages, _ = read_all([str(root)])
    by_id = {p.id: p for p in pages}
    settings = ExtractSettings()
    assert by_id["www.example.org/news/1.html"].url == "http://www.example.org/news/1.html"
    assert page_site(by_id["www.example.org/news/1.html"], settings) == "example.org"
    assert by_id["story-b/base.html"].url == "https://base.example/dir/"
    # No host evidence: one site, the folder given, whatever sub-folder the file is in.
    site = "file:" + root.resolve().as_posix()
    assert page_site(by_id["story-a/x.html"], settings) == site == page_site(by_id["story-b/y.html"], settings)
    assert by_id["story-a/x.html"].url.startswith("file://")


def test_layout_url_wants_a_host_name_folder():
    from pagetwin.sources.files import layout_url

    assert layout_url("example.org:8080/a b.html") == "http://example.org:8080/a%20b.html"
    assert layout_url("Sub.Example.CO.UK/x/y.htm") == "http://sub.example.co.uk/x/y.htm"
    for rel in ("stories/a.html", "a.html", "v1.2/a.html", "-bad.org/a.html", "example.org/"):
        assert layout_url(rel) is None, rel


def test_a_folder_reads_every_name_a_file_given_directly_is_read_by(tmp_path):
    # One list of input names (sources.*_SUFFIXES): a folder's walk and a file given directly
    # agree on .xhtml, .ndjson and .warc.zst too.
    from pagetwin.sources import input_kind
    from pagetwin.sources.base import SourceStats
    from pagetwin.sources.files import folder_kind, walk_folder, walk_inputs

    names = {"a.html": "html", "b.HTM": "html", "c.xhtml": "html", "d.jsonl": "jsonl", "e.ndjson": "jsonl",
             "f.ndjson.gz": "jsonl", "g.jsonl.gz": "jsonl", "h.warc.gz": "warc", "i.warc.zst": "warc", "j.arc.gz": "warc", "k.html.gz": "html"}  # fmt: skip
    for name, kind in names.items():
        assert folder_kind(name) == kind, name
        path = tmp_path / name
        path.write_bytes(b"{}\n" if kind == "jsonl" else b"<html><body>x</body></html>")
        if name.endswith(".html.gz"):
            path.write_bytes(gzip.compress(b"<html><body>x</body></html>"))
        given = input_kind(str(path))
        assert given == kind or (kind == "warc" and given in ("warc", "arc")), name
    (tmp_path / "notes.log").write_text("x")
    stats = SourceStats()
    assert sorted(rel for _, rel, _ in walk_inputs(str(tmp_path), stats)) == sorted(names)
    assert stats.files_ignored == 1
    assert sorted(rel for _, rel in walk_folder(str(tmp_path), SourceStats())) == ["a.html", "b.HTM", "c.xhtml", "k.html.gz"]


def test_gzipped_html_files_are_pages_and_damaged_ones_counted_skips(tmp_path):
    # Saved pages gzipped one by one (the extraction sets, `wget --compression`): the page is
    # the HTML inside, its digest that of the HTML, so a.html and b.html.gz are one page.
    body = html_page("Zipped", words=400)
    (tmp_path / "a.html").write_bytes(body)
    (tmp_path / "b.html.gz").write_bytes(gzip.compress(body))
    whole = gzip.compress(body * 4)
    (tmp_path / "c.htm.gz").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "d.xhtml.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"not deflate data" * 20)
    pages, stats = read_all([tmp_path])
    assert [p.id for p in pages] == ["a.html", "b.html.gz"]
    assert pages[1].body == body and pages[1].payload_digest == pages[0].payload_digest == sha1_digest(body)
    assert stats.skipped == {"truncated-gzip": 1, "corrupt-gzip": 1}
    assert stats.records_total == 4 and not stats.errors
    given, _ = read_all([tmp_path / "b.html.gz"])  # a file given directly is read the same way
    assert [p.body for p in given] == [body]
    (tmp_path / "e.html.gz").write_bytes(body)  # named .gz, not gzipped: read as it is
    named, stats = read_all([tmp_path / "e.html.gz"])
    assert [p.body for p in named] == [body] and not stats.skipped


def test_a_big_gzipped_page_is_cut_and_its_digest_covers_the_html(tmp_path):
    body = html_page("Big", words=5000)
    path = tmp_path / "big.html.gz"
    path.write_bytes(gzip.compress(body))
    pages, stats = read_all([path], InputSettings(max_page_bytes=1000))
    assert len(pages[0].body) == 1000 and pages[0].truncated and stats.cut == 1
    assert pages[0].payload_digest == sha1_digest(body)
