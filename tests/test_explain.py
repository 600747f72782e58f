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


# -- terminal escapes (issue 14, item 6) ----------------------------------------------------

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[H\r\x9b31m\x7f\u202eevil\x00"


def _visible(text: str) -> bool:
    """No character a terminal acts on: only newlines end lines, no ESC/C0/C1/DEL/bidi."""
    return not any((ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2028" for c in text)


def test_terminal_safe_escapes_what_a_terminal_acts_on():
    from pagetwin.explain import terminal_safe

    assert terminal_safe("plain text, ünïcode, 中文\t ok") == "plain text, ünïcode, 中文\t ok"
    out = terminal_safe(HOSTILE)
    assert _visible(out) and "\n" not in out
    assert out == "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\r\\x9b31m\\x7f\\u202eevil\\x00"
    assert terminal_safe("a\nb") == "a\\nb"  # a field shown on one line stays one line


def test_format_explain_escapes_crawled_fields():
    page = {"id": "id" + HOSTILE, "url": "https://e.org/" + HOSTILE, "title": "T" + HOSTILE, "text": "x y",
            "cluster": 1, "keep": True}
    d = {"a": page, "b": dict(page, keep=False), "same_cluster": True, "edge": None, "shared_share_of_a": 1.0,
         "algorithms": [{"algorithm": "exact", "score": 1.0, "passed": True, "shared_keys": 1, "detail": {"why": HOSTILE}}],
         "passages": [{"op": "same", "text": "said " + HOSTILE}]}
    text = format_explain(d)
    assert _visible(text) and "\\x1b]0;pwned" in text and "\\x1b[2J" in text
    assert len(text.splitlines()) == len(format_explain({**d, "a": dict(page, id="i", url="u", title="t")}).splitlines())


def test_explain_cli_on_a_hostile_crawl_prints_no_escape(tmp_path, capsys):
    crawl = tmp_path / "crawl"
    crawl.mkdir()
    words = " ".join(f"shared{i}" for i in range(300))
    title = "Title \x1b]0;pwned\x07\x1b[2J"
    for name in ("one\x1b[2J.html", "two.html"):
        (crawl / name).write_text(f"<html><head><title>{title}</title></head><body><p>{words}. Said \x1b[31mred\x1b[0m.</p></body></html>")
    out = tmp_path / "out"
    assert main(["dedup", str(crawl), "--out", str(out), "--workers", "1"]) in (0, 3)
    capsys.readouterr()
    assert main(["explain", str(out), "one\x1b[2J.html", "two.html"]) == 0
    shown = capsys.readouterr().out
    assert _visible(shown) and "\\x1b[2J" in shown
