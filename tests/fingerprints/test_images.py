"""The `images` algorithm (fingerprints/images.py): image-dominance, matching, the text veto."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import ImageSettings
from pagetwin.fingerprints import REGISTRY
from pagetwin.fingerprints.images import Images, is_image_dominant, match_images
from pagetwin.model import Doc, ImageRef

RNG = random.Random(7)
PHASHES = [RNG.getrandbits(64) for _ in range(40)]  # 40 "photographs", far apart (about 32 bits)


def _flip(h: int, bits: int, seed: int) -> int:
    r = random.Random(seed)
    for pos in r.sample(range(64), bits):
        h ^= 1 << pos
    return h


def _doc(urls: list[str], phashes: list[int | None] | None = None, words: str = "", lang: str = "en", pid: str = "p") -> Doc:
    phashes = phashes if phashes is not None else [None] * len(urls)
    tokens = words.split()
    return Doc(
        page_id=pid,
        url=f"https://site.test/{pid}",
        host="site.test",
        crawl_date=None,
        text=words,
        lang=lang,
        tokens=tokens,
        stop=[False] * len(tokens),
        images=[ImageRef(url=u, phash=h) for u, h in zip(urls, phashes)],
    )


def _urls(prefix: str, n: int) -> list[str]:
    return [f"https://site.test/{prefix}/{i}.jpg" for i in range(n)]


def _pass(algo: Images, a: Doc, b: Doc):
    fa, fb = algo.features(a), algo.features(b)
    assert fa is not None and fb is not None
    # round trip through the index encoding, as the matcher sees them
    fa, fb = algo.decode(algo.encode(fa)), algo.decode(algo.encode(fb))
    return fa, fb, algo.verify(fa, fb)


def test_registered() -> None:
    assert REGISTRY["images"] is Images


def test_image_dominance_rule() -> None:
    s = ImageSettings(min_images=3, max_words_per_image=30)
    assert is_image_dominant(3, 0, s) and is_image_dominant(3, 89, s)
    assert not is_image_dominant(3, 90, s)  # 30 words per image: an article with pictures
    assert not is_image_dominant(2, 0, s)  # two pictures are not a gallery
    algo = Images(s)
    assert algo.features(_doc(_urls("a", 2))) is None
    assert algo.features(_doc(_urls("a", 4), words="w " * 200)) is None
    assert algo.features(_doc(_urls("a", 4), words="w " * 50)) is not None
    # duplicates of one image in the page count once
    assert algo.features(_doc(_urls("a", 2) + _urls("a", 2))) is None


def test_same_gallery_different_renditions_pass_by_phash() -> None:
    algo = Images(ImageSettings())
    a = _doc(_urls("big", 8), PHASHES[:8], pid="a")
    # other URLs (another CDN, resized), phashes a few bits off (re-encoded)
    b = _doc(_urls("small", 8), [_flip(h, 3, i) for i, h in enumerate(PHASHES[:8])], pid="b")
    fa, fb, ev = _pass(algo, a, b)
    assert ev.passed and ev.score == 1.0
    assert ev.detail["phash_matches"] == 8 and ev.detail["only_a"] == []
    assert ev.detail["shared"][0] == "https://site.test/big/0.jpg = https://site.test/small/0.jpg"
    assert set(algo.keys(fa)) & set(algo.keys(fb))  # the pair is proposed


def test_phash_beyond_tolerance_is_another_image() -> None:
    algo = Images(ImageSettings(phash_k=6))
    a = _doc(_urls("x", 4), PHASHES[:4], pid="a")
    b = _doc(_urls("y", 4), [_flip(h, 12, i) for i, h in enumerate(PHASHES[:4])], pid="b")
    _, _, ev = _pass(algo, a, b)
    assert not ev.passed and ev.score == 0.0


def test_urls_decide_without_bytes_and_hashes_overrule_urls() -> None:
    algo = Images(ImageSettings())
    a = _doc(_urls("g", 5), pid="a")
    b = _doc(_urls("g", 5), pid="b")
    assert _pass(algo, a, b)[2].passed
    # same URLs but the bytes say the pictures differ (a URL reused for other pictures)
    a2 = _doc(_urls("g", 5), PHASHES[:5], pid="a")
    b2 = _doc(_urls("g", 5), PHASHES[5:10], pid="b")
    assert not _pass(algo, a2, b2)[2].passed
    # a hash on one side only: the URL decides
    b3 = _doc(_urls("g", 5), pid="b")
    assert _pass(algo, a2, b3)[2].passed


def test_threshold_is_set_jaccard() -> None:
    algo = Images(ImageSettings(threshold=0.7))
    base = _urls("g", 10)
    a = _doc(base, pid="a")
    b_near = _doc(base[:8] + _urls("h", 1), pid="b")  # 8 / 11 = 0.727
    b_far = _doc(base[:7] + _urls("h", 3), pid="c")  # 7 / 13 = 0.538
    ev = _pass(algo, a, b_near)[2]
    assert ev.passed and abs(ev.score - 8 / 11) < 1e-9
    assert ev.detail["n_shared"] == 8 and ev.detail["n_only_a"] == 2 and ev.detail["n_only_b"] == 1
    assert len(ev.detail["shared"]) == 5 and ev.detail["only_b"] == ["https://site.test/h/0.jpg"]
    ev = _pass(algo, a, b_far)[2]
    assert not ev.passed and abs(ev.score - 7 / 13) < 1e-9


def test_two_galleries_of_one_site_sharing_a_few_images_differ() -> None:
    algo = Images(ImageSettings())
    shared = PHASHES[:2]  # e.g. a "sale" banner inside the content on a small site
    a = _doc(_urls("g1", 8), shared + PHASHES[2:8], pid="a")
    b = _doc(_urls("g2", 8), shared + PHASHES[8:14], pid="b")
    fa, fb, ev = _pass(algo, a, b)
    assert not ev.passed and ev.detail["n_shared"] == 2


def test_substantial_text_that_disagrees_wins() -> None:
    algo = Images(ImageSettings(substantial_words=50, min_text_jaccard=0.5, max_words_per_image=40))
    text_a = " ".join(f"alpha{i}" for i in range(60))
    text_b = " ".join(f"beta{i}" for i in range(60))
    a = _doc(_urls("g", 4), PHASHES[:4], words=text_a, pid="a")
    b = _doc(_urls("g", 4), PHASHES[:4], words=text_b, pid="b")
    ev = _pass(algo, a, b)[2]
    assert ev.score == 1.0 and not ev.passed and ev.detail["vetoed"] == "text-disagrees"
    # the same substantial text agrees: the images decide
    c = _doc(_urls("g", 4), PHASHES[:4], words=text_a + " extra", pid="c")
    ev = _pass(algo, a, c)[2]
    assert ev.passed and ev.detail["text_jaccard"] > 0.9
    # little text (captions) never vetoes by content
    d = _doc(_urls("g", 4), PHASHES[:4], words="blue sky", pid="d")
    e = _doc(_urls("g", 4), PHASHES[:4], words="red sea", pid="e")
    assert _pass(algo, d, e)[2].passed


def test_translation_policy() -> None:
    captions_en = "the old harbour at dawn with fishing boats and gulls over the water"
    captions_de = "der alte hafen im morgengrauen mit fischerbooten und moewen ueber dem wasser"
    en = _doc(_urls("g", 4), PHASHES[:4], words=captions_en, lang="en", pid="en")
    de = _doc(_urls("g", 4), PHASHES[:4], words=captions_de, lang="de", pid="de")
    ev = _pass(Images(ImageSettings()), en, de)[2]
    assert not ev.passed and ev.detail["vetoed"] == "different-language" and ev.detail["langs"] == ["en", "de"]
    assert _pass(Images(ImageSettings(translations_are_duplicates=True)), en, de)[2].passed
    # too few words for a language to mean anything: the images decide
    en_short = _doc(_urls("g", 4), PHASHES[:4], words="harbour", lang="en", pid="a")
    de_short = _doc(_urls("g", 4), PHASHES[:4], words="hafen", lang="de", pid="b")
    assert _pass(Images(ImageSettings()), en_short, de_short)[2].passed
    # unknown language on one side: no veto by language
    und = _doc(_urls("g", 4), PHASHES[:4], words=captions_de, lang="und", pid="u")
    assert _pass(Images(ImageSettings()), en, und)[2].passed


def test_keys_meet_for_near_phashes_only() -> None:
    algo = Images(ImageSettings(key_k=4))
    a = algo.features(_doc(["https://s/a.jpg", "https://s/b.jpg", "https://s/c.jpg"], PHASHES[:3], pid="a"))
    near = algo.features(_doc(["https://t/1.jpg", "https://t/2.jpg", "https://t/3.jpg"], [_flip(PHASHES[0], 4, 1), PHASHES[20], PHASHES[21]], pid="b"))
    far = algo.features(_doc(["https://t/1.jpg", "https://t/2.jpg", "https://t/3.jpg"], PHASHES[22:25], pid="c"))
    assert set(algo.keys(a)) & set(algo.keys(near))
    assert not set(algo.keys(a)) & set(algo.keys(far))
    assert all(-(1 << 63) <= k < (1 << 63) for k in algo.keys(a))


@settings(max_examples=100, deadline=None)
@given(
    n=st.integers(0, 12),
    m=st.integers(0, 12),
    overlap=st.integers(0, 12),
    flips=st.integers(0, 10),
    seed=st.integers(0, 1000),
)
def test_matching_is_one_to_one_and_symmetric(n: int, m: int, overlap: int, flips: int, seed: int) -> None:
    overlap = min(overlap, n, m)
    r = random.Random(seed)
    a = [[f"u{i}", PHASHES[i] if r.random() < 0.7 else None] for i in range(n)]
    b = [[f"u{i}" if r.random() < 0.5 else f"v{i}", _flip(PHASHES[i], flips, i) if r.random() < 0.7 else None] for i in range(overlap)]
    b += [[f"w{i}", PHASHES[20 + i]] for i in range(m - overlap)]
    pairs, only_a, only_b = match_images(a, b, 6)
    assert len({i for i, _ in pairs}) == len(pairs) == len({j for _, j in pairs})
    assert len(pairs) + len(only_a) == n and len(pairs) + len(only_b) == m
    pairs_ba, _, _ = match_images(b, a, 6)
    assert len(pairs_ba) == len(pairs)
    # the similarity is symmetric and in [0, 1]
    if n >= 3 and m >= 3:
        algo = Images(ImageSettings())
        fa = {"img": a, "words": 0, "lang": "und", "tok": []}
        fb = {"img": b, "words": 0, "lang": "und", "tok": []}
        s1, s2 = algo.verify(fa, fb).score, algo.verify(fb, fa).score
        assert abs(s1 - s2) < 1e-12 and 0.0 <= s1 <= 1.0
