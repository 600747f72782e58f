"""The report in a real browser: headless Chromium (Debian's ``chromium`` package) opens the
report of a run over a crawl whose pages carry script (tests.fixtures.hostile), and the tests
check that its sections render with the run's numbers, that its own script runs and no script
of a crawled page does (nor one slipped past escaping: the Content-Security-Policy), and save
screenshots of the overview and of a pair. Skipped, saying how to install it, without chromium.

Set PAGETWIN_REPORT_SHOTS=DIR to keep the screenshots in DIR."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pagetwin.cli import main
from tests.fixtures.hostile import write_crawl

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed: apt-get install chromium (README, 'The report')"
)


def _chromium(*args: str, profile: Path) -> str:
    """Run headless Chromium once (a profile of its own; --no-sandbox: the tests may run as root)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={profile}", *args]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser")
    write_crawl(d / "crawl.warc.gz")
    assert main(["dedup", str(d / "crawl.warc.gz"), "--out", str(d / "out"), "--workers", "1"]) == 0
    assert main(["report", str(d / "out")]) == 0
    return d / "out" / "report.html", json.loads((d / "out" / "summary.json").read_text()), d


def _dom(path: Path, anchor: str, profile: Path) -> str:
    return _chromium("--dump-dom", f"{path.resolve().as_uri()}#{anchor}", profile=profile)


def _root(dom: str) -> str:
    return re.search(r"<html[^>]*>", dom).group(0)


def test_sections_render_with_the_runs_numbers(report, tmp_path):
    path, summary, _ = report
    dom = _dom(path, "overview", tmp_path / "p")
    assert 'data-report-ready="1"' in _root(dom)  # the report's own script ran under its policy
    for value, label in ((summary["pages"]["read"], "pages read"), (summary["clusters"], "clusters"),
                         (summary["duplicates"], "duplicates"), (summary["pairs"], "verified pairs")):  # fmt: skip
        assert re.search(rf"<b>{value:,}</b><span>{label}", dom), label
    assert re.search(r'<section id="overview">', dom) and re.search(r'<section id="pairs" class="hidden">', dom)
    assert "<svg" in dom and f">{summary['cluster_sizes']['1']:,}<" in dom  # the histogram's count of single pages


def test_no_script_of_a_crawled_page_runs(report, tmp_path):
    path, _, _ = report
    dom = _dom(path, "pairs", tmp_path / "p")
    assert "data-pwned" not in _root(dom)
    assert "&lt;script&gt;document.documentElement.setAttribute" in dom  # shown as text instead
    assert "<img src=\"x\"" not in dom


def test_the_policy_stops_a_script_that_escaping_missed(report, tmp_path):
    """Defence in depth: a script element put into the report by hand is refused by its CSP."""
    path, _, _ = report
    tampered = tmp_path / "tampered.html"
    evil = "<script>document.documentElement.setAttribute('data-pwned','csp')</script>"
    tampered.write_text(path.read_text().replace("<main>", "<main>" + evil, 1))
    dom = _dom(tampered, "overview", tmp_path / "p")
    assert "data-pwned" not in _root(dom) and 'data-report-ready="1"' in _root(dom)


def test_a_pair_is_shown_alone_and_screenshots(report, tmp_path):
    path, _, _ = report
    dom = _dom(path, "pair-0", tmp_path / "p")
    assert re.search(r'<div class="pair" id="pair-0">', dom) and re.search(r'class="pair hidden" id="pair-1"', dom)
    keep = Path(os.environ["PAGETWIN_REPORT_SHOTS"]) if os.environ.get("PAGETWIN_REPORT_SHOTS") else tmp_path
    keep.mkdir(parents=True, exist_ok=True)
    for anchor in ("overview", "pair-0"):
        shot = keep / f"report-{anchor}.png"
        _chromium("--window-size=1000,1300", f"--screenshot={shot}", f"{path.resolve().as_uri()}#{anchor}", profile=tmp_path / "p")
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
