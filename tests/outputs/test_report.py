"""outputs.report: the HTML report of a dedup run, on a crawl the tests write (the news crawl
and, on another host, copies of its story that carry script: tests.fixtures.hostile)."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from pagetwin.cli import main
from pagetwin.outputs.report import Limits, ReportError, gather, render, write_report
from tests.fixtures.hostile import HOSTILE_HOST, PAYLOADS, write_crawl


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """(out dir, ids, summary) of a dedup run over the hostile crawl."""
    d = tmp_path_factory.mktemp("report")
    ids = write_crawl(d / "crawl.warc.gz")
    assert main(["dedup", str(d / "crawl.warc.gz"), "--out", str(d / "out"), "--workers", "1"]) == 0
    return d / "out", ids, json.loads((d / "out" / "summary.json").read_text())


@pytest.fixture(scope="module")
def data(run):
    return gather(run[0])


def test_overview_and_sizes_are_the_summarys(run, data):
    _, _, summary = run
    o = data["overview"]
    assert (o["pages_read"], o["clusters"], o["duplicates"], o["pairs"]) == (
        summary["pages"]["read"], summary["clusters"], summary["duplicates"], summary["pairs"])  # fmt: skip
    assert o["skipped"] == summary["records"]["skipped"] and o["skipped"]  # the stylesheet, the request...
    assert set(o["seconds"]) >= {"learn", "fingerprint", "match", "cluster", "write", "total"}
    assert data["sizes"] == summary["cluster_sizes"] and sum(data["sizes"].values()) == summary["clusters"]


def test_largest_cluster_has_its_kept_page_hosts_and_algorithms(run, data):
    _, ids, summary = run
    clusters = {r["id"]: r for r in map(json.loads, (run[0] / "clusters.jsonl").read_text().splitlines())}
    top = data["clusters"]["listed"][0]
    assert top["size"] == summary["largest_cluster"] == clusters[ids["a"]]["cluster_size"]
    assert top["kept"]["id"] == clusters[ids["a"]]["kept_id"]
    assert {h["host"] for h in top["hosts"]} == {"news.example", HOSTILE_HOST}
    assert top["algorithms"] and all(n > 0 for n in top["algorithms"].values())
    assert [c["size"] for c in data["clusters"]["listed"]] == sorted((c["size"] for c in data["clusters"]["listed"]), reverse=True)


def test_sites_count_pages_duplicates_and_copies_across_hosts(run, data):
    _, _, summary = run
    sites = data["sites"]
    assert sum(s["pages"] for s in sites["listed"]) == summary["pages"]["in_output"]
    assert sum(s["duplicates"] for s in sites["listed"]) == summary["duplicates"]
    link = sites["links"][0]
    assert {link["a"], link["b"]} == {"news.example", HOSTILE_HOST} and link["pairs"] > 0
    # The copies on the hostile host were crawled after the story (2024-03-14, -15 vs -12, -13).
    news_first = link["a_first"] if link["a"] == "news.example" else link["b_first"]
    assert news_first == link["pairs"]
    assert set(data["templates"]["shares"]) == {"news.example", HOSTILE_HOST}


def test_pairs_are_explains_and_the_template_view_marks_blocks(run, data):
    pairs = data["pairs"]["listed"]
    assert pairs and pairs[0]["same_cluster"] and pairs[0]["from_cluster"] == data["clusters"]["listed"][0]["cluster"]
    assert {p["op"] for p in pairs[0]["passages"]} >= {"same"}
    assert all(r["algorithm"] for r in pairs[0]["algorithms"])
    views = data["templates"]["views"]
    assert views and all(v["learned"] for v in views)
    assert any(b["class"] == "template" for v in views for b in v["blocks"])  # the footer, the menu...


def test_no_crawled_markup_reaches_the_page(data):
    page = render(data)
    own_script = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(own_script) == 1 and "data-pwned" not in own_script[0]
    for payload in PAYLOADS:
        assert payload not in page
    assert page.count("&lt;script&gt;document.documentElement") >= 1  # shown, as text
    assert "<b>bridge" not in page and "&lt;b&gt;bridge" in page
    assert re.search(r"(src|href)=\"?(https?:|//)", page) is None  # nothing fetched, no link out


def test_the_policy_allows_only_the_reports_own_script_and_style(data):
    page = render(data)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert "default-src &#x27;none&#x27;" in csp and "unsafe-inline" not in csp
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src &#x27;sha256-{digest}&#x27;" in csp
    assert " style=" not in page  # a style attribute would be refused by the policy


def test_limits_bound_the_lists_and_sum_the_rest(run):
    data = gather(run[0], Limits(clusters=1, sites=1, pairs=1, templates=1, samples=1, passages=2))
    assert len(data["clusters"]["listed"]) == 1 and data["clusters"]["more"] >= 1
    assert len(data["sites"]["listed"]) == 1 and data["sites"]["more"]["hosts"] == 1
    assert len(data["pairs"]["listed"]) == 1 and len(data["pairs"]["listed"][0]["passages"]) <= 2
    page = render(data)
    assert "smaller clusters" in page and "more hosts" in page


def test_write_report_and_the_command(run, tmp_path, capsys):
    out = run[0]
    written = write_report(out, tmp_path / "r.html")
    assert written["bytes"] == len((tmp_path / "r.html").read_bytes()) and written["seconds"] >= 0
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert "report written to" in capsys.readouterr().err


def test_what_is_not_a_run_is_one_line(tmp_path, capsys):
    with pytest.raises(ReportError, match="no summary.json"):
        gather(tmp_path)
    (tmp_path / "summary.json").write_text("[1, 2")
    with pytest.raises(ReportError, match="cannot be read as JSON"):
        gather(tmp_path)
    assert main(["report", str(tmp_path / "missing")]) == 1
    assert main(["report", str(tmp_path), "--to", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no such folder" in err and "is a folder" in err and "Traceback" not in err


def test_inputs_gone_leave_a_note_not_a_failure(run, tmp_path):
    """The run's inputs moved away: no template view, the rest of the report is there."""
    import shutil

    copy = tmp_path / "out"
    shutil.copytree(run[0], copy)
    crawl = run[0].parent / "crawl.warc.gz"
    moved = tmp_path / "moved.warc.gz"
    crawl.rename(moved)
    try:
        data = gather(copy)
    finally:
        moved.rename(crawl)
    assert data["templates"]["views"] == [] and "no longer there" in data["templates"]["note"]
    assert data["clusters"]["listed"] and data["pairs"]["listed"]


def test_a_huge_url_title_and_text_are_cut(tmp_path):
    """Whatever a crawl holds, what the report shows of it is bounded (crawled_chars_bound)."""
    from pagetwin.outputs.report import crawled_chars_bound
    from pagetwin.outputs.warc import WarcWriter
    from tests.fixtures.news import article, page

    long_url = "https://long.example/" + "a" * 20_000
    html = page("T" * 10_000, ["word " * 5_000, *article(5)]).encode()
    with WarcWriter(tmp_path / "c.warc.gz") as w:
        w.write_response(long_url, html)
        w.write_response(long_url + "?copy", html)
    assert main(["dedup", str(tmp_path / "c.warc.gz"), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    limits = Limits()
    report = render(gather(tmp_path / "out", limits))
    assert "a" * limits.chars not in report and "T" * limits.chars not in report and "word " * 100 not in report
    assert len(report) < crawled_chars_bound(limits)


def test_a_pair_asked_for_comes_first_and_a_wrong_one_is_one_line(run, tmp_path, capsys):
    out, ids, _ = run
    data = gather(out, Limits(pairs=1), asked=[(ids["other0"], "https://news.example/story1")])
    first = data["pairs"]["listed"][0]
    assert (first["a"]["id"], first["b"]["url"]) == (ids["other0"], "https://news.example/story1")
    assert not first["same_cluster"] and len(data["pairs"]["listed"]) == 2  # and the one the report picks
    assert main(["report", str(out), "--to", str(tmp_path / "r.html"), "--pair", ids["a"], "https://nowhere.example/"]) == 1
    err = capsys.readouterr().err
    assert "--pair" in err and "no page with id or URL 'https://nowhere.example/'" in err
