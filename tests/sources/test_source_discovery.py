"""Discovery of inputs: folders holding WARC, ARC, JSONL and HTML files, globs, manifests
(lists of paths, as Common Crawl's warc.paths.gz), files recognised by their content."""

from __future__ import annotations

import gzip
import json
import os
import shutil

import pytest

from pagetwin.cli import main
from pagetwin.config import InputSettings
from pagetwin.outputs.warc import WarcWriter
from pagetwin.sources import InputError, SourceStats, iter_pages, readable_inputs
from pagetwin.sources.files import folder_site
from tests.fixtures.records import arc_file, arc_record, html_page, http, read_all

DATE = "2024-03-01T12:00:00Z"


def _warc(path, names, gz=True):
    """A WARC of one response per name; returns the WARC-Record-IDs."""
    with WarcWriter(path, gzip=gz) as w:
        return [w.write_response(f"https://example.org/{n}", html_page(n.capitalize()), date=DATE) for n in names]


def _jsonl(path, names):
    path.write_text("".join(json.dumps({"url": f"https://feed.example/{n}", "html": html_page(n).decode()}) + "\n" for n in names))


def _mixed_folder(root):
    """A crawl folder: WARC, ARC, JSONL, HTML in sub-folders, and files that are not inputs."""
    (root / "b" / "deep").mkdir(parents=True)
    (root / "a").mkdir()
    ids = _warc(root / "a" / "crawl.warc.gz", ["one", "two"])
    (root / "b" / "old.arc.gz").write_bytes(gzip.compress(arc_file([arc_record("http://old.example/x", http(html_page("Arcpage")))])))
    _jsonl(root / "b" / "deep" / "feed.jsonl", ["f1", "f2"])
    (root / "b" / "deep" / "page.html").write_bytes(html_page("Deep"))
    (root / "top.htm").write_bytes(html_page("Top"))
    (root / "crawl.log").write_text("2024-03-01 fetched https://example.org/one\n")
    (root / "a" / "crawl.cdx").write_text(" CDX N b a m s k r M S V g\n")
    return ids


def test_folder_reads_every_kind_in_walk_order(tmp_path):
    root = tmp_path / "crawl"
    root.mkdir()
    ids = _mixed_folder(root)
    pages, stats = read_all([root])
    got = [(p.id, p.url) for p in pages]
    assert got == [
        (ids[0], "https://example.org/one"),
        (ids[1], "https://example.org/two"),
        ("feed.jsonl:1", "https://feed.example/f1"),  # b/deep/ sorts before b/old.arc.gz
        ("feed.jsonl:2", "https://feed.example/f2"),
        ("b/deep/page.html", pages[4].url),
        (pages[5].id, "http://old.example/x"),
        ("top.htm", pages[6].url),
    ]
    assert pages[5].id.startswith("old.arc.gz") and pages[5].source == str(root / "b" / "old.arc.gz")
    # HTML files keep the folder's behaviour: ids relative to the folder given, its site.
    assert [pages[4].site, pages[6].site] == [folder_site(str(root))] * 2
    assert stats.pages_read == 7 and stats.files_ignored == 2
    assert stats.records_total == 7 + stats.skipped["arc-header"] and not stats.errors
    assert sorted(stats.ignored_examples) == ["a/crawl.cdx", "crawl.log"]
    summary = stats.to_dict()
    assert summary["files_ignored"] == 2 and summary["records_total"] == 8
    again, _ = read_all([root])
    assert [p.id for p in again] == [p.id for p in pages]  # deterministic


def test_html_folder_reads_as_before(tmp_path):
    """A folder of HTML only: the same pages, ids, URLs and sites as each file read alone in
    the folder (read_html_file with the folder's site)."""
    from pagetwin.sources.files import read_html_file

    root = tmp_path / "site"
    (root / "x" / "y").mkdir(parents=True)
    files = {"a.html": html_page("A"), "x/B.HTM": html_page("B"), "x/y/c.htm": html_page("C"), "x/notes.txt": b"hello"}
    for rel, body in files.items():
        (root / rel).write_bytes(body)
    (root / "www.example.org").mkdir()
    (root / "www.example.org" / "n.html").write_bytes(html_page("N"))
    os.symlink(root / "x", root / "x" / "y" / "loop")  # a link to a folder is not followed
    pages, stats = read_all([root])
    rels = ["a.html", "www.example.org/n.html", "x/B.HTM", "x/y/c.htm"]
    expected = [read_html_file(str(root / r), r, InputSettings(), folder_site(str(root))) for r in rels]
    assert [(p.id, p.url, p.site, p.body) for p in pages] == [(e.id, e.url, e.site, e.body) for e in expected]
    assert pages[1].url == "http://www.example.org/n.html" and stats.files_ignored == 2  # notes.txt, the link


def test_a_broken_file_in_a_folder_does_not_stop_the_folder(tmp_path):
    root = tmp_path / "crawl"
    root.mkdir()
    (root / "a.warc.gz").write_bytes(b"\x1f\x8b" + os.urandom(300))
    _warc(root / "b.warc.gz", ["fine"])
    pages, stats = read_all([root])
    assert [p.url for p in pages] == ["https://example.org/fine"]


def test_glob_is_expanded_sorted(tmp_path):
    for name in ("c", "a", "b"):
        (tmp_path / "day" / name).mkdir(parents=True)
        _warc(tmp_path / "day" / name / f"{name}.warc.gz", [name])
    (tmp_path / "day" / "a" / "skip.txt").write_text("not matched\n")
    readable, problems = readable_inputs([str(tmp_path / "day" / "**" / "*.warc.gz")])
    assert problems == [] and readable == [str(tmp_path / "day" / n / f"{n}.warc.gz") for n in "abc"]
    pages = list(iter_pages(readable, InputSettings(), SourceStats()))
    assert [p.url for p in pages] == [f"https://example.org/{n}" for n in "abc"]
    # A pattern that matches nothing: one line, as a missing file; none readable: InputError.
    readable, problems = readable_inputs([str(tmp_path / "day" / "*.arc"), str(tmp_path / "day")])
    assert readable == [str(tmp_path / "day")]
    assert problems == [f"{tmp_path / 'day' / '*.arc'}: no such file or directory (no path matches the pattern)"]
    with pytest.raises(InputError, match="no path matches"):
        readable_inputs([str(tmp_path / "nothing-*.warc")])


def test_an_existing_path_with_glob_characters_is_taken_as_is(tmp_path):
    odd = tmp_path / "crawl[1].warc.gz"
    _warc(odd, ["odd"])
    assert readable_inputs([str(odd)]) == ([str(odd)], [])


@pytest.mark.parametrize("gz", [False, True])
def test_manifest_lists_paths(tmp_path, gz):
    (tmp_path / "segments" / "s1").mkdir(parents=True)
    _warc(tmp_path / "segments" / "s1" / "x.warc.gz", ["x"])
    _warc(tmp_path / "abs.warc", ["abs"], gz=False)
    text = (
        "# Common Crawl style: one path a line\n"
        "segments/s1/x.warc.gz\n"
        "\n"
        f"  {tmp_path / 'abs.warc'}  \n"
        "segments/missing.warc.gz\n"
        "s3://commoncrawl/crawl-data/CC-MAIN-2024-10/x.warc.gz\n"
    )
    name = "warc.paths.gz" if gz else "warc.paths"
    manifest = tmp_path / name
    manifest.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    readable, problems = readable_inputs([str(manifest)])
    assert readable == [str(tmp_path / "segments" / "s1" / "x.warc.gz"), str(tmp_path / "abs.warc")]
    assert problems == [
        f"s3://commoncrawl/crawl-data/CC-MAIN-2024-10/x.warc.gz: remote paths are not supported by the local runner (listed in {manifest}:6)",
        f"{tmp_path / 'segments' / 'missing.warc.gz'}: no such file or directory (listed in {manifest}:5)",
    ]
    pages = list(iter_pages(readable, InputSettings(), SourceStats()))
    assert [p.url for p in pages] == ["https://example.org/x", "https://example.org/abs"]


def test_txt_manifest_and_a_warc_named_txt(tmp_path):
    _warc(tmp_path / "a.warc.gz", ["a"])
    (tmp_path / "list.txt").write_text("a.warc.gz\n")
    _warc(tmp_path / "crawl.txt", ["t"], gz=False)  # a WARC by its content, though named .txt
    readable, problems = readable_inputs([str(tmp_path / "list.txt"), str(tmp_path / "crawl.txt")])
    assert problems == [] and readable == [str(tmp_path / "a.warc.gz"), str(tmp_path / "crawl.txt")]
    with pytest.raises(InputError, match="lists no paths"):
        (tmp_path / "empty.paths").write_text("# nothing\n\n")
        readable_inputs([str(tmp_path / "empty.paths")])


@pytest.mark.parametrize("gz", [False, True])
def test_warc_without_suffix_is_recognised_by_content(tmp_path, gz):
    path = tmp_path / "CC-MAIN-segment-00001"
    ids = _warc(path, ["bare"], gz=gz)
    arc = tmp_path / "old-crawl"
    arc.write_bytes(gzip.compress(arc_file([arc_record("http://old.example/y", http(html_page("Y")))])))
    pages, stats = read_all([path, arc])
    assert [p.id for p in pages][:1] == ids and [p.url for p in pages] == ["https://example.org/bare", "http://old.example/y"]
    assert not stats.errors


def test_cli_dedup_of_a_folder_of_warcs(tmp_path, capsys):
    root = tmp_path / "crawls"
    (root / "2024" / "03").mkdir(parents=True)
    _warc(root / "2024" / "03" / "a.warc.gz", ["p1", "p2", "p3"])
    _warc(root / "2024" / "b.warc", ["p4", "p5"], gz=False)
    shutil.copy(root / "2024" / "03" / "a.warc.gz", root / "copy.warc.gz")  # 3 exact copies
    (root / "2024" / "crawl.log").write_text("log line\n")
    out = tmp_path / "out"
    assert main(["dedup", str(root), "--out", str(out), "--workers", "1"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["records"]["pages_read"] == 8 and summary["records"]["files_ignored"] == 1
    assert summary["records"]["records_total"] == 8
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and sum(r["keep"] for r in rows) == 5
    assert "8 pages read" in capsys.readouterr().err


@pytest.mark.parametrize("per_task", [1, 2, 256])
def test_spark_units_of_a_mixed_folder_read_what_the_local_runner_reads(tmp_path, per_task):
    from pagetwin.config import Settings
    from pagetwin.runners import spark

    root = tmp_path / "crawl"
    root.mkdir()
    _mixed_folder(root)
    for i in range(3):
        (root / "b" / f"p{i}.html").write_bytes(html_page(f"P{i}"))
    engine = object.__new__(spark.SparkEngine)  # no session (nor pyspark) needed for the units
    engine.files_per_task = per_task
    stats = SourceStats()
    units = engine.units([str(root)], stats)
    # One unit per archive or JSONL file, at its place in the walk.
    assert [u[0] for u in units if u[1] is None] == [
        str(root / "a" / "crawl.warc.gz"), str(root / "b" / "deep" / "feed.jsonl"), str(root / "b" / "old.arc.gz")
    ]
    got = [(p.id, p.url, p.site) for u in units for p in spark.unit_pages(u, Settings(), stats, want_images=False)]
    expected_stats = SourceStats()
    expected = [(p.id, p.url, p.site) for p in iter_pages([str(root)], InputSettings(), expected_stats)]
    assert got == expected and stats.to_dict() == expected_stats.to_dict() and stats.consistent()


def test_input_files_walks_a_folder_sorted_and_gives_a_file_as_itself(tmp_path):
    """input_files (what the progress bar weighs and a resumed run compares): a folder's files
    with sub-folders and names sorted, a file (even a missing one) as given."""
    from pagetwin.sources import input_files

    (tmp_path / "b").mkdir()
    (tmp_path / "a").mkdir()
    for rel in ["b/2.html", "b/1.html", "a/z.warc.gz", "top.jsonl"]:
        (tmp_path / rel).write_text("x")
    got = [p[len(str(tmp_path)) + 1:] for p in input_files(str(tmp_path))]
    assert got == ["top.jsonl", "a/z.warc.gz", "b/1.html", "b/2.html"]
    assert list(input_files(str(tmp_path / "missing.warc"))) == [str(tmp_path / "missing.warc")]
