"""pagetwin explain: passages marked, each algorithm's verdict, the keys that made a pair."""

from __future__ import annotations

import pytest

from pagetwin.cli import main
from pagetwin.explain import ExplainError, explain, format_explain, mark_passages, split_passages
from tests.test_e2e_neardup import make_corpus


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain")
    make_corpus(root / "in")
    algorithms = "exact,con-w,simhash,minhash"  # the default set and SimHash
    assert main(["dedup", str(root / "in"), "--out", str(root / "out"), "--workers", "1", "--algorithms", algorithms]) == 0
    return root / "out"


def test_split_and_mark_passages():
    assert split_passages("One. Two!\n\nThree?") == ["One.", "Two!", "Three?"]
    marked = mark_passages("Same here. Only A.\nShared end.", "Same  HERE. Only B.\nShared end.")
    assert [(p["op"], p["text"]) for p in marked] == [
        ("same", "Same here."),
        ("a", "Only A."),
        ("b", "Only B."),
        ("same", "Shared end."),
    ]


def test_explain_near_duplicates(out_dir):
    d = explain(out_dir, "courier/story.html", "post/story.html")
    assert d["same_cluster"] and d["edge"] is not None
    by_name = {r["algorithm"]: r for r in d["algorithms"]}
    assert {"exact", "con-w", "simhash", "minhash"} == set(by_name)
    passing = [r for r in d["algorithms"] if r["passed"]]
    assert passing and all(r["shared_keys"] > 0 for r in passing)
    assert all(0.0 <= r["score"] <= 1.0 for r in d["algorithms"] if r["score"] is not None)
    ops = {p["op"] for p in d["passages"]}
    assert ops == {"same", "a", "b"}  # the corrected sentence differs, the rest is shared
    changed = [p["text"] for p in d["passages"] if p["op"] == "b"]
    assert any("the council said" in t for t in changed)
    assert 0.5 < d["shared_share_of_a"] < 1.0
    text = format_explain(d)
    assert "minhash" in text and "+ " in text and "= " in text


def test_explain_different_articles_by_url(out_dir):
    import json

    rows = [json.loads(x) for x in (out_dir / "clusters.jsonl").read_text().splitlines()]
    url = {r["id"]: r["url"] for r in rows}
    d = explain(out_dir / "index.sqlite", url["courier/story.html"], url["courier/other0.html"])
    assert not d["same_cluster"] and d["edge"] is None
    assert not any(r["passed"] for r in d["algorithms"] if r["algorithm"] != "exact")


def test_explain_cli(out_dir, capsys):
    assert main(["explain", str(out_dir), "courier/story.html", "post/story.html"]) == 0
    out = capsys.readouterr().out
    assert "same cluster" in out and "simhash" in out
    assert main(["explain", str(out_dir), "courier/story.html", "post/story.html", "--json"]) == 0
    assert '"same_cluster": true' in capsys.readouterr().out
    assert main(["explain", str(out_dir), "courier/story.html", "nope.html"]) == 1


def test_explain_missing_index(tmp_path):
    with pytest.raises(ExplainError):
        explain(tmp_path, "a", "b")
