"""End to end through the CLI: near duplicates under different templates are found, different
articles under one template are not, and a chain A~B~C does not merge unrelated A and C."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fixtures.neardup import article_paragraphs, template_a, template_b, write

from pagetwin.cli import main

AD_1 = "Buy the new Phone X today with free delivery and a gift card for every order."
AD_2 = "Holiday deals: two nights in Rome for the price of one, book before Friday."


def clusters(out: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    return {r["id"]: r for r in rows}


def dedup(inputs: Path, out: Path, *extra: str) -> dict[str, dict]:
    assert main(["dedup", str(inputs), "--out", str(out), "--workers", "1", *extra]) == 0
    return clusters(out)


def make_corpus(root: Path) -> None:
    story = article_paragraphs(1)
    write(root / "courier/story.html", template_a("River plan approved", "3 March 2024", story, AD_1))
    # the same story on another site: other template, date and ad, one corrected sentence
    edited = list(story)
    edited[2] = edited[2].replace(".", ", the council said.", 1)
    write(root / "post/story.html", template_b("River plan approved", "5 March 2024", edited, AD_2))
    # other articles under the first template
    for i, seed in enumerate((2, 3, 4)):
        write(root / f"courier/other{i}.html", template_a(f"Other news {i}", "3 March 2024", article_paragraphs(seed), AD_1))


def test_same_article_under_two_templates_is_found(tmp_path):
    make_corpus(tmp_path / "in")
    got = dedup(tmp_path / "in", tmp_path / "out")
    assert got["courier/story.html"]["cluster"] == got["post/story.html"]["cluster"]
    assert sum(got[i]["keep"] for i in ("courier/story.html", "post/story.html")) == 1
    pairs = [json.loads(line) for line in (tmp_path / "out/pairs.jsonl").read_text().splitlines()]
    assert pairs, "the edge and its evidence are in pairs.jsonl"


def test_different_articles_under_one_template_are_not_merged(tmp_path):
    make_corpus(tmp_path / "in")
    got = dedup(tmp_path / "in", tmp_path / "out")
    names = ["courier/story.html", "courier/other0.html", "courier/other1.html", "courier/other2.html"]
    assert len({got[n]["cluster"] for n in names}) == len(names)


def chain_corpus(root: Path) -> None:
    a, c = article_paragraphs(10), article_paragraphs(11)
    write(root / "a.html", template_a("Story A", "1 May 2024", a, AD_1))
    write(root / "b.html", template_a("Stories A and C", "1 May 2024", a + c, AD_1))
    write(root / "c.html", template_a("Story C", "1 May 2024", c, AD_1))


CHAIN = ["--algorithms", "minhash", "--minhash-threshold", "0.4", "--minhash-shingle", "3"]


def test_chain_does_not_merge_unrelated_pages(tmp_path):
    chain_corpus(tmp_path / "in")
    got = dedup(tmp_path / "in", tmp_path / "out", *CHAIN, "--match-guard", "true")
    pairs = [json.loads(line) for line in (tmp_path / "out/pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == 2, "A~B and B~C are verified edges, A~C is not"
    assert got["a.html"]["cluster"] != got["c.html"]["cluster"]
    assert got["b.html"]["cluster"] in (got["a.html"]["cluster"], got["c.html"]["cluster"])


def test_without_the_guard_the_chain_merges(tmp_path):
    chain_corpus(tmp_path / "in")
    got = dedup(tmp_path / "in", tmp_path / "out", *CHAIN, "--match-guard", "false")
    assert got["a.html"]["cluster"] == got["b.html"]["cluster"] == got["c.html"]["cluster"]


BOILERPLATE = ("The Daily Courier is an independent newspaper owned by its readers since 1901; "
               "support our journalism with a subscription and read every story without limits.")  # fmt: skip


def small_site_corpus(root: Path) -> tuple[list[str], list[str]]:
    """A site of three pages (the smallest sites of a crawl): an article, its near copy (three
    of its eight paragraphs edited: too little copied for the site pass to drop it as a copy),
    and another article; each page carries the site's boilerplate paragraph inside the article,
    where the page-level rules keep it."""
    story, other = article_paragraphs(20), article_paragraphs(21)
    edited = list(story)
    for i in (1, 4, 6):
        edited[i] = edited[i].replace(".", ", the editors added after the meeting.", 1)
    write(root / "site/story.html", template_a("Bridge reopens", "2 June 2024", story + [BOILERPLATE], AD_1))
    write(root / "site/story-2.html", template_a("Bridge reopens (updated)", "3 June 2024", edited + [BOILERPLATE], AD_1))
    write(root / "site/other.html", template_a("Market day", "2 June 2024", other + [BOILERPLATE], AD_1))
    return story, edited


def test_a_near_copy_on_a_small_site_is_found_and_its_template_still_removed(tmp_path, capsys):
    story, edited = small_site_corpus(tmp_path / "in")
    # A site of three pages has a site model (extract.min_site_pages 2): the boilerplate, on
    # every page, is its template; the article's paragraphs, on two pages that are near copies
    # of each other, are not.
    assert main(["text", str(tmp_path / "in"), "--workers", "1"]) == 0
    texts = {Path(r["url"]).name: r["text"] for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(texts) == {"story.html", "story-2.html", "other.html"}
    assert all(BOILERPLATE not in t for t in texts.values())
    assert all(p in texts["story.html"] for p in story) and all(p in texts["story-2.html"] for p in edited)
    got = dedup(tmp_path / "in", tmp_path / "out")
    assert got["site/story.html"]["cluster"] == got["site/story-2.html"]["cluster"]
    assert got["site/other.html"]["cluster"] != got["site/story.html"]["cluster"]


def test_two_shared_bands_find_the_same_article_with_its_bands_in_the_evidence(tmp_path):
    """``--set minhash.min_bands=2``: the same clusters as the defaults here, and each MinHash
    edge says how many bands its pages share (at least two)."""
    make_corpus(tmp_path / "in")
    base = dedup(tmp_path / "in", tmp_path / "one")
    got = dedup(tmp_path / "in", tmp_path / "two", "--set", "minhash.min_bands=2")
    assert {k: r["cluster"] for k, r in got.items()} == {k: r["cluster"] for k, r in base.items()}
    pairs = [json.loads(line) for line in (tmp_path / "two/pairs.jsonl").read_text().splitlines()]
    minhash = [e for p in pairs for e in p["evidence"] if e["algorithm"] == "minhash"]
    assert minhash and all(e["bands_shared"] >= 2 and e["bands"] == 47 for e in minhash)
