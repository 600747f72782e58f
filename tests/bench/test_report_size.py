"""bench.report_size: measures a report on a run the test makes."""

from __future__ import annotations

from pagetwin.cli import main as pagetwin
from bench.report_size import main, measure
from tests.fixtures.hostile import write_crawl


def test_measure_gives_the_reports_size_time_and_sections(tmp_path, capsys):
    write_crawl(tmp_path / "c.warc.gz")
    assert pagetwin(["dedup", str(tmp_path / "c.warc.gz"), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    m = measure(tmp_path / "out", rounds=1)
    assert m["bytes"] > 10_000 and m["report_s"] > 0 and m["pages"] == 23
    assert set(m["sections"]) == {"overview", "clusters", "sites", "pairs", "templates"}
    assert sum(m["sections"].values()) < m["bytes"]
    assert main([str(tmp_path / "out"), "--rounds", "1"]) == 0
    assert "| 23 |" in capsys.readouterr().out


def test_a_synthetic_run_is_a_run_the_report_reads(tmp_path):
    from bench.report_size import synthetic_run
    from pagetwin.outputs.report import Limits, gather

    out = synthetic_run(tmp_path / "syn", 3000)
    data = gather(out, Limits(clusters=10, sites=10))
    assert data["overview"]["pages_read"] == 3000 and len(data["clusters"]["listed"]) == 10
    assert sum(c["size"] for c in data["clusters"]["listed"]) + data["clusters"]["more_pages"] + data["sizes"].get("1", 0) == 3000
    assert "no longer there" in data["templates"]["note"]
