"""bench/lsh_candidates.py: a run's own banding rule gives its summary's MinHash counts, and
other rules are counted from the same stored signatures."""

from __future__ import annotations

import json

import pytest

from bench.lsh_candidates import main, parse_rule
from pagetwin.cli import main as cli
from tests.fixtures.neardup import article_paragraphs, template_a, template_b, write


def _corpus(root):
    story = article_paragraphs(1)
    write(root / "a/story.html", template_a("River plan approved", "3 March 2024", story, "Ad one."))
    write(root / "b/story.html", template_b("River plan approved", "5 March 2024", story[:-1], "Ad two."))
    for i, seed in enumerate((2, 3, 4, 5)):
        write(root / f"a/other{i}.html", template_a(f"Other news {i}", "3 March 2024", article_paragraphs(seed), "Ad one."))


@pytest.mark.parametrize("min_bands", [1, 2])
def test_the_runs_own_rule_gives_its_summarys_counts(tmp_path, capsys, min_bands):
    _corpus(tmp_path / "in")
    out = tmp_path / "out"
    assert cli(["dedup", str(tmp_path / "in"), "--out", str(out), "--workers", "1", "--set", f"minhash.min_bands={min_bands}"]) == 0
    matching = json.loads((out / "summary.json").read_text())["matching"]
    capsys.readouterr()
    assert main([str(out / "index.sqlite"), "--rules", "", "--sizes", ""]) == 0
    (own,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert own["rule"] == ("28x2/1" if min_bands == 1 else "47x2/2")
    assert own["candidates"] == matching["candidates"].get("minhash", 0)
    assert own["passed"] == matching["passed"].get("minhash", 0)
    assert own["bucket_pairs"] >= own["candidates"] >= own["passed"] >= 1
    truth = tmp_path / "truth.jsonl"
    truth.write_text("".join(json.dumps({"url": (tmp_path / "in" / f"{s}/story.html").resolve().as_uri(), "source": "story"}) + "\n" for s in "ab"))
    assert main([str(out / "index.sqlite"), "--truth", str(truth), "--rules", "28x2,64x2/2", "--sizes", "3,6"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["pages"], r["rule"]) for r in rows] == [(3, "28x2/1"), (3, "64x2/2"), (6, "28x2/1"), (6, "64x2/2")]
    assert all(r["seeded_found"] + r["false_passed"] == r["passed"] for r in rows)
    assert rows[-1]["seeded_pairs"] == 1 and rows[-1]["seeded_found"] == 1


def test_a_rule_that_does_not_fit_and_a_missing_index_are_told(tmp_path, capsys):
    assert parse_rule("47x2/2") == (47, 2, 2) and parse_rule("28x2") == (28, 2, 1)
    assert main([str(tmp_path / "none.sqlite")]) == 1
    assert "no index" in capsys.readouterr().err
    _corpus(tmp_path / "in")
    assert cli(["dedup", str(tmp_path / "in"), "--out", str(tmp_path / "out"), "--workers", "1"]) == 0
    capsys.readouterr()
    assert main([str(tmp_path / "out" / "index.sqlite"), "--rules", "100x2/1"]) == 1
    assert "does not fit num_perm 128" in capsys.readouterr().err
