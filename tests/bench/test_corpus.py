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


def _long_sources(n=3):
    words = b" ".join(b"word%c%c" % (97 + i % 26, 97 + i // 26 % 26) for i in range(160))
    return lambda: [SourcePage(f"s{i}", f"https://site.test/a{i}.html?x=1", b"<html><head><title>Page %d</title>"
                               b"<script>var keepme = 1;</script></head><body><nav><a href='/'>Home menu</a></nav>"
                               b"<p>%s number %d &amp; more</p></body></html>" % (i, words, i), "text/html")
                    for i in range(n)]


def test_fixed_sets_have_exactly_k_pages_whatever_n(tmp_path):
    from collections import Counter

    out = tmp_path / "k.warc.gz"
    counts = build_corpus(20, out, seed=1, sources=_long_sources(), copies=3)
    assert counts["pages"] == 20 and counts["duplicate_sets"] == 7 and counts["generations"] == 3
    truth = [json.loads(line) for line in open(str(out) + ".truth.jsonl")]
    sizes = Counter(t["source"] for t in truth)
    assert sorted(sizes.values()) == [2] + [3] * 6  # the last set is cut at N
    assert {t["source"] for t in truth if t["generation"] == 1} == {"s0#g1", "s1#g1", "s2#g1"}
    assert all(t["generation"] >= 1 for t in truth) and {t["generation"] for t in truth} == {1, 2, 3}
    urls = [r.headers["WARC-Target-URI"] for r in
            ArchiveIterator(open(out, "rb"), record_types=WarcRecordType.response)]
    assert len(set(urls)) == 20
    again = tmp_path / "again.warc.gz"
    build_corpus(20, again, seed=1, sources=_long_sources(), copies=3)
    assert out.read_bytes() == again.read_bytes()


def test_shards_of_fixed_sets_are_the_whole_crawl_cut_in_parts(tmp_path):
    whole = tmp_path / "whole.warc.gz"
    build_corpus(20, whole, seed=1, sources=_long_sources(), copies=2)
    parts = [(0, 6), (3, 8), (7, 6)]  # (first set, pages): sets 0-2, 3-6, 7-9; one across a generation
    for first, pages in parts:
        build_corpus(pages, tmp_path / f"part{first}.warc.gz", seed=1, sources=_long_sources(), copies=2,
                     first_set=first)
    assert b"".join((tmp_path / f"part{f}.warc.gz").read_bytes() for f, _ in parts) == whole.read_bytes()
    truths = "".join((tmp_path / f"part{f}.warc.gz.truth.jsonl").read_text() for f, _ in parts)
    assert truths == (tmp_path / "whole.warc.gz.truth.jsonl").read_text()


def test_a_shard_needs_fixed_sets(tmp_path):
    import pytest

    with pytest.raises(ValueError, match="copies"):
        build_corpus(4, tmp_path / "x.warc.gz", sources=_long_sources(), first_set=2)


def test_a_fresh_page_rewrites_the_text_and_keeps_scripts_navigation_and_entities():
    from bench.corpus import WordPool, fresh_page

    source = _long_sources(1)()[0].body
    pool = WordPool(0)
    assert pool.learn(source.replace(b"word", b"other"))  # the pool: another page's words
    fresh = fresh_page(source, pool, "s0", 1, 0)
    assert fresh != source and fresh_page(source, pool, "s0", 1, 0) == fresh
    assert b"<script>var keepme = 1;</script>" in fresh and b"<a href='/'>Home menu</a>" in fresh
    assert b"&amp;" in fresh and fresh.count(b"<p>") == 1
    old = set(source.split(b"<p>")[1].split())
    new = fresh.split(b"<p>")[1].split()
    assert sum(w in old for w in new) <= 4  # digits, the entity: every word is the pool's
    assert fresh_page(source, pool, "s0", 2, 0) != fresh


def test_pages_with_little_ascii_text_make_no_fresh_pages(tmp_path):
    import pytest

    from bench.corpus import DataMissing

    tiny = lambda: [SourcePage("t", "https://t.test/", "<p>中文页面内容很多很多</p>".encode(), "text/html")]  # noqa: E731
    with pytest.raises(DataMissing):
        build_corpus(5, tmp_path / "t.warc.gz", sources=tiny, copies=2)


def _zipf_page(seed, words=3000):
    """A long page of Zipf-distributed words (a vocabulary of 3,000), as real long pages are."""
    import random

    rng = random.Random(seed)
    vocab = [b"w" + bytes([97 + i % 26, 97 + i // 26 % 26, 97 + i // 676 % 26]) for i in range(3000)]
    weights = [1 / (rank + 1) for rank in range(len(vocab))]
    text = b" ".join(rng.choices(vocab, weights, k=words))
    return b"<html><body><p>" + text + b"</p></body></html>"


def _bigrams(body):
    words = body.split(b"<p>")[1].split(b"</p>")[0].lower().split()
    return set(zip(words, words[1:]))


def test_long_fresh_pages_share_few_word_pairs_and_keep_their_shape():
    # Drawing each word anew by its frequency made two unrelated long pages share 5-10% of their
    # word pairs (MinHash candidates of each other, their number growing with the square of the
    # crawl); a page's own word-for-word code leaves them chance pairs only.
    from bench.corpus import WordPool, fresh_page

    pool = WordPool(0)
    for s in range(4):
        pool.learn(_zipf_page(100 + s))
    source = _zipf_page(1)
    pages = [fresh_page(source, pool, "s0", g, 0) for g in (1, 2)] + [fresh_page(_zipf_page(2), pool, "s1", 1, 0)]
    pairs = [_bigrams(p) for p in pages]
    for a in range(3):
        for b in range(a + 1, 3):
            assert len(pairs[a] & pairs[b]) / len(pairs[a] | pairs[b]) < 0.02
    before = source.split(b"<p>")[1].split()
    after = pages[0].split(b"<p>")[1].split()
    # repeats kept: one word stays one word (two may meet in one: this pool has ~2,000 rare words)
    assert len(after) == len(before) and len(set(after)) > 0.6 * len(set(before))


def test_a_source_read_twice_makes_one_set(tmp_path):
    from collections import Counter

    twice = lambda: [*_long_sources(2)(), *_long_sources(2)()]  # noqa: E731 - one URL in two crawls
    out = tmp_path / "t.warc.gz"
    build_corpus(8, out, seed=0, sources=twice, copies=2)
    truth = [json.loads(line) for line in open(str(out) + ".truth.jsonl")]
    assert set(Counter(t["source"] for t in truth).values()) == {2}


def test_the_shared_mix_reads_every_shared_set_and_no_debian_page(tmp_path):
    """--mix shared (issue 16's kept-back corpus): the crawls, the extraction sets with WCXB, the
    SpotSigs reposts each on a host of its own; no Debian package is fetched."""
    import gzip

    from bench.corpus import source_pages

    shared = tmp_path / "data"
    wcxb = shared / "extraction" / "wcxb-dev"
    (wcxb / "html").mkdir(parents=True)
    (wcxb / "ground-truth").mkdir()
    (wcxb / "html" / "0001.html.gz").write_bytes(gzip.compress(PAGE))
    (wcxb / "ground-truth" / "0001.json").write_text(json.dumps({"url": "https://modern.test/a"}))
    (wcxb / "html" / "0002.html.gz").write_bytes(gzip.compress(PAGE))  # no ground truth: a URL of its own
    story = shared / "neardup" / "spotsigs-dev" / "GoldSetOfDuplicates" / "Story"
    story.mkdir(parents=True)
    for name in ("a1.htm", "a2.htm"):
        (story / name).write_bytes(PAGE)
    pages = list(source_pages(shared, debian=False, all_shared=True))
    assert [p.key for p in pages] == ["wcxb:0001", "wcxb:0002", "spotsigs:Story/a1.htm", "spotsigs:Story/a2.htm"]
    assert pages[0].url == "https://modern.test/a" and pages[1].url == "https://wcxb.example/0002"
    hosts = {p.url.split("/")[2] for p in pages[2:]}
    assert len(hosts) == 2 and all(p.body == PAGE for p in pages)
    assert [p.key for p in source_pages(shared, debian=False)] == []  # the docs mix leaves them out
    out = tmp_path / "c.warc.gz"
    counts = build_corpus(6, out, shared=shared, mix="shared")
    assert counts["source_pages"] == 4 and counts["pages"] == 6
