import json

import pytest

from bench.labelled import DataMissing, copycat_pairs, is_hard_negative


def write_rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def row(pair, label):
    return {"pair": pair, "label": label, "s3": 0.5, "canonical_link": "http://x/",
            "first": "u1", "second": "u2", "src_doc": f"a {pair}", "target_doc": f"b {pair}"}


def test_copycat_labels_are_parsed_and_classified(tmp_path):
    file = tmp_path / "j.jsonl"
    write_rows(file, [row("p3", "3"), row("p2", "2"), row("p1", "1"), row("p05", "0.5"),
                      row("typo", "0.5s"), row("u", "unknown"), row("u2", "unkown")])
    pairs = {p["pair"]: p for p in copycat_pairs(file)}
    assert set(pairs) == {"p3", "p2", "p1", "p05", "typo"}
    assert pairs["p3"]["positive"] and not pairs["p3"]["negative"]
    assert not pairs["p2"]["positive"] and not pairs["p2"]["negative"]
    assert pairs["p1"]["negative"] and pairs["p05"]["negative"] and pairs["typo"]["negative"]
    assert pairs["p3"]["first_text"] == "a p3" and pairs["p3"]["second_text"] == "b p3"
    assert isinstance(pairs["p05"]["label"], float)


def test_missing_file_raises_data_missing(tmp_path):
    with pytest.raises(DataMissing):
        copycat_pairs(tmp_path / "nope.jsonl")


def test_hard_negative_means_same_folder_different_page():
    assert is_hard_negative("AMDGPU/a.html", "AMDGPU/b.html")
    assert is_hard_negative("a.html", "b.html")
    assert not is_hard_negative("AMDGPU/a.html", "AMDGPU/a.html")
    assert not is_hard_negative("AMDGPU/a.html", "CommandGuide/a.html")


def test_real_copycat_file_has_both_classes():
    try:
        pairs = copycat_pairs()
    except DataMissing as exc:
        pytest.skip(str(exc))
    assert sum(p["positive"] for p in pairs) >= 50
    assert sum(p["negative"] for p in pairs) >= 200
