import json
from pathlib import Path

from bench.ab_speed import main
from bench.corpus import SourcePage, build_corpus

ROOT = Path(__file__).resolve().parents[2]


def test_ab_runs_both_checkouts_and_gives_wall_and_cpu_ratios(tmp_path, capsys):
    pages = [SourcePage(k, f"https://{k}.test/1", f"<html><body><p>page {k} of the test</p></body></html>".encode(), "text/html")
             for k in "abc"]  # fmt: skip
    corpus = tmp_path / "c.warc.gz"
    build_corpus(3, corpus, sources=lambda: pages)
    assert main([str(ROOT), str(ROOT), "--corpus", str(corpus), "--rounds", "1"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert len(result["pages_per_second"]["a"]) == len(result["pages_per_cpu_second"]["b"]) == 1
    assert result["median_cpu_a"] > 0 and result["ratio_cpu_b_a"] > 0 and result["ratio_b_a"] > 0
