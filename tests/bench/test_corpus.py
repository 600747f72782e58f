import json

from fastwarc.warc import ArchiveIterator, WarcRecordType

from bench.corpus import EDITS, SourcePage, build_corpus, edit_page, mirror_url

PAGE = (
    b"<html><head><title>T</title></head><body><p>Alpha paragraph one with enough words to "
    b"count as text. Second sentence here for the swap.</p><p>Beta paragraph two, updated "
    b"2021-05-06, with some more words in it.</p><p>Gamma paragraph three closes the page "
    b"with a few words.</p></body></html>"
)


def sources():
    return [SourcePage(f"k{i}", f"https://site.test/p{i}.html", PAGE.replace(b"Alpha", b"A%d" % i),
                       "text/html") for i in range(3)]


def test_every_edit_changes_the_page_and_keeps_html():
    import random

    for name, edit in EDITS.items():
        out = edit(PAGE, random.Random(name))
        assert out != PAGE, name
        assert out.startswith(b"<html>") and out.rstrip().endswith(b"</html>"), name


def test_edits_are_deterministic_per_key_and_variant():
    assert edit_page(PAGE, "k", 1, 0) == edit_page(PAGE, "k", 1, 0)
    variants = {edit_page(PAGE, "k", v, 0)[0] for v in range(1, 8)}
    assert len(variants) > 1


def test_edits_survive_pages_without_paragraphs():
    for body in (b"", b"no html at all", b"<p>tiny</p>", b"\xff\xfe\x00junk"):
        for variant in range(1, 6):
            edit_page(body, "x", variant, 0)  # must not raise


def test_build_corpus_repeats_sources_with_edits_under_new_urls(tmp_path):
    out = tmp_path / "c.warc.gz"
    counts = build_corpus(8, out, seed=3, sources=sources)
    assert counts["pages"] == 8 and counts["source_pages"] == 3 and counts["passes"] == 3
    urls = [r.headers["WARC-Target-URI"] for r in
            ArchiveIterator(open(out, "rb"), record_types=WarcRecordType.response)]
    assert len(urls) == len(set(urls)) == 8
    truth = [json.loads(line) for line in open(str(out) + ".truth.jsonl")]
    assert [t["url"] for t in truth] == urls
    assert all(t["edits"] == [] for t in truth[:3]) and all(t["edits"] for t in truth[3:])
    assert truth[3]["url"] == mirror_url("https://site.test/p0.html", 1)
    (tmp_path / "again").mkdir()
    again = tmp_path / "again" / "c.warc.gz"
    build_corpus(8, again, seed=3, sources=sources)
    assert out.read_bytes() == again.read_bytes()
