"""pagetwin add: pages of input files added to an index through the API (issue 17)."""

from __future__ import annotations

import json

import pytest

from pagetwin.api import Index
from pagetwin.app import dedup
from pagetwin.cli import EXIT_INPUT_ERRORS, main
from pagetwin.config import Settings
from tests.fixtures.news import article, page


def _jsonl(path, rows, junk: str = ""):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + junk)
    return str(path)


def _crawls():
    story = article(1)
    near = list(story)
    near[2] = near[2].replace(".", ", officials said.", 1)
    first = [
        {"id": "art", "url": "https://news.example/bridge", "html": page("Harbour bridge reopens", story)},
        {"id": "near", "url": "https://news.example/bridge-2", "html": page("Harbour bridge reopens", near, date="13 March 2024")},
    ] + [{"id": f"o{i}", "url": f"https://news.example/s{i}", "html": page(f"Story {i}", article(100 + i))} for i in range(5)]
    repost = list(story)
    repost[4] += " Traffic resumed on Monday."
    second = [
        {"id": "copy", "url": "https://mirror.example/bridge", "html": first[0]["html"]},
        {"id": "repost", "url": "https://repost.example/bridge", "html": page("Harbour bridge reopens", repost, site="Repost Daily")},
        {"id": "o1-copy", "url": "https://mirror.example/s1", "html": first[3]["html"]},
        {"id": "new", "url": "https://news.example/new", "html": page("Market opens", article(999))},
    ]
    return first, second


def _clusters(lines):
    groups: dict[str, set[str]] = {}
    for row in lines:
        groups.setdefault(row["cluster"], set()).add(row["id"])
    return {frozenset(ids) for ids in groups.values()}


def test_cli_add_end_to_end_gives_the_clusters_of_one_run(tmp_path, capsys):
    first, second = _crawls()
    settings = Settings()
    settings.run.workers = 1
    a, b = _jsonl(tmp_path / "a.jsonl", first), _jsonl(tmp_path / "b.jsonl", second, junk="{not json\n")
    dedup([a], str(tmp_path / "out"), settings)
    index = str(tmp_path / "out" / "index.sqlite")

    code = main(["add", "--index", index, b, str(tmp_path / "missing.jsonl"), "--batch", "2"])
    out, err = capsys.readouterr()
    assert code == EXIT_INPUT_ERRORS  # one input could not be read; the others were added
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in rows] == ["copy", "repost", "o1-copy", "new"]
    assert all(r["status"] == "added" for r in rows)
    by_id = {r["id"]: r for r in rows}
    assert {m["id"] for m in by_id["copy"]["matches"]} >= {"art"} and by_id["copy"]["cluster_size"] >= 2
    assert {m["id"] for m in by_id["o1-copy"]["matches"]} == {"o1"}
    assert by_id["new"]["matches"] == [] and by_id["new"]["cluster_size"] == 1
    lines = err.strip().splitlines()
    assert "missing.jsonl" in err and "Traceback" not in err
    assert lines[-1] == "pagetwin: 4 pages added (3 joined a cluster), 0 known already, 1 records skipped: {'bad-json': 1}; the index holds 11 pages"

    # The same clusters as one dedup run over both inputs.
    dedup([a, b], str(tmp_path / "one"), settings)
    one = [json.loads(line) for line in (tmp_path / "one" / "clusters.jsonl").read_text().splitlines()]
    with Index.open(index, readonly=True) as added:
        assert {frozenset(m.id for m in c.members) for c in added.clusters()} == _clusters(one)
        assert {c.kept.id for c in added.clusters()} == {r["id"] for r in one if r["keep"]}

    # Adding again: every page is known, nothing changes.
    assert main(["add", "--index", index, b]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["status"] for line in out.splitlines()] == ["known"] * 4
    assert "0 pages added" in err and "4 known already" in err


def test_cli_add_creates_a_missing_index_and_refuses_bad_usage(tmp_path, capsys):
    first, _ = _crawls()
    a = _jsonl(tmp_path / "a.jsonl", first[:3])
    assert main(["add", "--index", str(tmp_path / "new.sqlite"), a]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["id"] for line in out.splitlines()] == ["art", "near", "o0"]
    assert "the index holds 3 pages" in err
    (tmp_path / "junk.sqlite").write_bytes(b"junk" * 1000)
    assert main(["add", "--index", str(tmp_path / "junk.sqlite"), a]) == 1  # not an index: one line, no traceback
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("pagetwin: ")
    assert main(["add", "--index", str(tmp_path / "new.sqlite"), str(tmp_path / "none.jsonl")]) == 1  # no input readable
    assert "none.jsonl" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # settings are the index's: no settings options
        main(["add", "--index", str(tmp_path / "new.sqlite"), a, "--minhash-threshold", "0.5"])
    assert exc.value.code == 2 and "--minhash-threshold" in capsys.readouterr().err
