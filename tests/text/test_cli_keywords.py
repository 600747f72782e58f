"""End-to-end: `pagetwin keywords INPUT...` prints one JSON line per page with its language and
top keywords (the pages are written by the test)."""

from __future__ import annotations

import json

from pagetwin.cli import main
from tests.fixtures.news import page

RU = ("Кошки живут рядом с человеком тысячи лет. Мы долго играли с кошками во дворе, "
      "а потом кошки ушли домой. Кошка любит тепло и молоко.")
ZH = "北京是中华人民共和国的首都，也是全国的政治、文化中心。北京有很多名胜古迹，每年都有很多游客来北京旅游。"
WORDS = ["zebra", "walrus", "falcon", "beaver", "otter", "heron"]


def _site(folder):
    folder.mkdir()
    for i, word in enumerate(WORDS):
        # Every page repeats "harbour" most; each has its own animal, less often.
        text = f"The harbour harbour harbour harbour of the town. A {word} and another {word} were seen near the quay {i}."
        (folder / f"en{i}.html").write_text(page(f"Notes {i}", [text]), "utf-8")
    (folder / "ru.html").write_text(page("Кошки", [RU]), "utf-8")
    (folder / "zh.html").write_text(page("北京", [ZH]), "utf-8")


def _run(capsys, *args):
    assert main(["keywords", *args, "--workers", "1"]) == 0
    return {row["id"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}


def test_keywords_per_page(tmp_path, capsys):
    _site(tmp_path / "site")
    rows = _run(capsys, str(tmp_path / "site"), "--extract-templates", "false")
    assert set(rows) == {f"en{i}.html" for i in range(len(WORDS))} | {"ru.html", "zh.html"}
    assert rows["ru.html"]["lang"] == "ru" and rows["ru.html"]["keywords"][0][0] == "кошка"
    assert rows["zh.html"]["lang"] == "zh" and rows["zh.html"]["keywords"][0][0] == "北京"
    for i, word in enumerate(WORDS):
        row = rows[f"en{i}.html"]
        assert row["lang"] == "en" and set(row) == {"id", "url", "lang", "keywords"}
        # tf-idf (the default): the page's own word outranks the word every page has.
        assert row["keywords"][0][0] == word
        weights = [w for _, w in row["keywords"]]
        assert weights == sorted(weights, reverse=True)
        assert abs(sum(w * w for w in weights) - 1) < 1e-6


def test_density_and_n(tmp_path, capsys):
    _site(tmp_path / "site")
    rows = _run(capsys, str(tmp_path / "site"), "--extract-templates", "false", "--text-weighting", "density", "--text-keywords", "2")
    for i, word in enumerate(WORDS):
        assert [t for t, _ in rows[f"en{i}.html"]["keywords"]] == ["harbour", word]


def test_endings_command_builds_a_table(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Кошки ловили мышей. Кошками любуются. Мышами кошки не любуются. "
                      "Собаками и кошками, книгами и столами, руками и ногами.", "utf-8")
    out = tmp_path / "endings.tsv"
    assert main(["endings", str(corpus), "--lang", "ru", "--out", str(out), "--min-count", "2"]) == 0
    from pagetwin.text.morph import EndingTable

    table = EndingTable.from_tsv(out.read_text("utf-8"))
    assert table.lang == "ru" and table.stem("куздрами") == "куздр"
    assert main(["endings", str(tmp_path / "missing.txt"), "--lang", "ru", "--out", str(out)]) == 2
