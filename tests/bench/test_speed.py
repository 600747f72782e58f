import json

import pytest

from bench.corpus import SourcePage, build_corpus
from bench import speed
from bench.speed import _UnionFind, format_table, main, pages_per_second, peer_run, run_floor, run_peer, word_shingles


def test_word_shingles():
    assert word_shingles("A b c d e f") == {"a b c d e", "b c d e f"}
    assert word_shingles("short text") == {"short text"}
    assert word_shingles("  ") == set()


def test_union_find_partitions():
    uf = _UnionFind()
    uf.union(1, 2)
    uf.union(3, 4)
    uf.union(2, 4)
    assert len({uf.find(i) for i in range(1, 5)}) == 1
    assert uf.find(5) == 5


def test_resiliparse_peer_finds_planted_duplicate(tmp_path):
    pytest.importorskip("resiliparse")
    pytest.importorskip("datasketch")
    words = " ".join(f"word{i}" for i in range(300))
    other = " ".join(f"other{i}" for i in range(300))
    pages = [
        SourcePage("a", "https://a.test/1", f"<html><body><article><p>{words}</p></article></body></html>".encode(), "text/html"),
        SourcePage("b", "https://b.test/1", f"<html><body><article><p>{words}</p></article></body></html>".encode(), "text/html"),
        SourcePage("c", "https://c.test/1", f"<html><body><article><p>{other}</p></article></body></html>".encode(), "text/html"),
    ]
    corpus = tmp_path / "c.warc.gz"
    build_corpus(3, corpus, sources=lambda: pages)
    result = run_peer("resiliparse", corpus)
    assert result["pages"] == 3 and result["clusters"] == 2 and result["duplicates"] == 1


def _three_pages(tmp_path):
    pages = [
        SourcePage(k, f"https://{k}.test/1", f"<html><body><p>page {k}</p></body></html>".encode(), "text/html")
        for k in "abc"
    ]
    corpus = tmp_path / "c.warc.gz"
    build_corpus(3, corpus, sources=lambda: pages)
    return corpus


def test_the_parse_floor_reads_and_parses_every_page(tmp_path):
    result = run_floor(_three_pages(tmp_path))
    assert result["pages"] == result["parsed"] == 3 and result["seconds"] > 0


def test_the_floor_is_a_run_with_ratios(tmp_path):
    corpus = _three_pages(tmp_path)
    run = peer_run("floor", corpus, 1, "floor")
    assert run["exit"] == 0 and run["pages"] == 3
    wall, cpu, extrapolated = pages_per_second(run, 3)
    assert wall > 0 and cpu > 0 and not extrapolated


def test_before_must_be_a_checkout(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--before", str(tmp_path), "--pages", "3"])
    assert "not a pagetwin checkout" in capsys.readouterr().err


def test_scale_runs_dedup_on_each_size_and_compares_with_the_smallest(tmp_path, monkeypatch):
    corpus = _three_pages(tmp_path)
    monkeypatch.setattr(speed, "ensure_corpus", lambda n, mix="docs": corpus)  # every size: the 3-page corpus
    rows = speed.scale_runs([3, 6])
    assert [r["exit"] for r in rows] == [0, 0] and rows[0]["pages"] == 3
    assert rows[0]["cost_vs_smallest"] == rows[0]["memory_vs_smallest"] == 1.0
    assert rows[1]["cpu_ms_per_page"] > 0 and rows[1]["cost_vs_smallest"] > 0
    table = format_table({"corpus": "c", "pages": 3, "cpu_count": 1, "runs": {}, "ratios": {}, "cost_vs_pages": rows})
    assert "| pages (--workers 1) |" in table and "| 3 |" in table


@pytest.mark.parametrize("bad", ["ten", "0,1000", "-5"])
def test_scale_sizes_must_be_positive_numbers(bad, capsys):
    with pytest.raises(SystemExit):
        main(["--scale", bad, "--pages", "3", "--skip", "pagetwin,pagetwin1,resiliparse,trafilatura,floor,memory"])
    assert "--scale" in capsys.readouterr().err


def _fake_run(pages_per_second: float | None, pss: float = 100.0) -> dict:
    """A timed run's figures (pages/s None: it failed)."""
    cpu = pages_per_second / 2 if pages_per_second else None
    return {"pages_per_second": pages_per_second, "pages_per_cpu_second": cpu, "peak_tree_pss_mb": pss, "exit": 0}


def test_ratios_are_taken_within_a_round_and_reported_as_their_median():
    # The machine halves its speed in round 2: ratios within a round stay near 1.5, a ratio of
    # the two runs' medians across rounds (150 / 200 here) would not.
    rounds = [{"pagetwin_1worker": _fake_run(300), "resiliparse": _fake_run(200)},
              {"pagetwin_1worker": _fake_run(150), "resiliparse": _fake_run(100)},
              {"pagetwin_1worker": _fake_run(320), "resiliparse": _fake_run(200)}]
    ratio = speed.round_ratios(rounds)["pagetwin_1worker/resiliparse"]
    assert ratio["speed"] == 1.5 and ratio["per_round"] == [1.5, 1.5, 1.6]
    assert ratio["speed_cpu"] == 1.5 and ratio["peak_pss"] == 1.0
    assert list(speed.round_ratios(rounds)) == ["pagetwin_1worker/resiliparse"]  # (no other pair was run)
    failed = [{**rounds[0], "resiliparse": _fake_run(None)}, rounds[1]]
    assert speed.round_ratios(failed) == {}  # a ratio needs its two runs in every round


def test_a_runs_row_is_its_round_of_median_speed():
    runs = [_fake_run(300), _fake_run(100), _fake_run(200), _fake_run(250)]
    assert speed._median_run(runs)["pages_per_second"] == 200 and speed._median_run(runs)["rounds"] == 4


def test_rounds_time_every_run_again_and_report_the_ratio_of_each(tmp_path, monkeypatch):
    corpus = _three_pages(tmp_path)
    monkeypatch.setattr(speed, "ensure_corpus", lambda n, mix="docs": corpus)
    out = tmp_path / "speed.json"
    assert main(["--pages", "3", "--rounds", "2", "--skip", "pagetwin,resiliparse,trafilatura,memory", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["rounds"] == 2 and result["runs"]["floor"]["rounds"] == 2
    assert len(result["ratios"]["pagetwin_1worker/floor"]["per_round"]) == 2


def test_rounds_must_be_one_or_more(capsys):
    with pytest.raises(SystemExit):
        main(["--rounds", "0", "--pages", "3", "--skip", "pagetwin,pagetwin1,resiliparse,trafilatura,floor,memory"])
    assert "--rounds" in capsys.readouterr().err
