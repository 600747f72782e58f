"""des, con, sort, con-w, sort-w: planted pages each must join or keep apart; properties."""

from __future__ import annotations

import hashlib
import math
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import KeywordSettings
from pagetwin.fingerprints.keywords import (
    Con,
    ConW,
    Des,
    Sort,
    SortW,
    cut_utf8,
    LEAD_WORDS,
    des_text,
    des_words,
    lead_text,
    ranked_keywords,
    weight_distance,
)
from pagetwin.model import Doc

ALL = (Des, Con, Sort, ConW, SortW)
WORDS = ["river", "bridge", "castle", "market", "tower", "garden", "harbor", "museum", "church", "square"]


def doc(text: str = "", description: str = "", keywords=None) -> Doc:
    return Doc("p", "http://x/", "x", None, text, description=description, keywords=keywords or [])


def kw(words, weights=None):
    weights = weights or [10.0 - i for i in range(len(words))]
    return list(zip(words, weights))


def joins(alg, a: Doc, b: Doc) -> bool:
    """What the matcher does: shared key, then (unless keys are proof) verify."""
    fa, fb = alg.features(a), alg.features(b)
    if fa is None or fb is None or not set(alg.keys(fa)) & set(alg.keys(fb)):
        return False
    return alg.keys_are_proof or alg.verify(fa, fb).passed


# ---------------------------------------------------------------- des
def test_cut_utf8_never_splits_a_character():
    text = "añ€𝄞" * 10  # 1, 2, 3 and 4-byte characters
    for n in range(0, 45):
        cut = cut_utf8(text, n)
        assert text.startswith(cut)
        assert len(cut.encode()) <= n
        assert len(text[: len(cut) + 1].encode()) > n  # the longest prefix that fits


@given(st.text(max_size=200), st.integers(min_value=0, max_value=600))
def test_cut_utf8_is_longest_fitting_prefix(text, n):
    cut = cut_utf8(text, n)
    assert text.startswith(cut) and len(cut.encode()) <= n
    assert cut == text or len(text[: len(cut) + 1].encode()) > n


def test_des_text_mode_uses_first_512_bytes_after_normalisation():
    head = "Ünïcode  Words " * 40  # > 512 bytes
    a = doc(head + "tail one")
    b = doc(head.upper().replace("  ", "\n ") + "a different tail")
    alg = Des(KeywordSettings(des_mode="text"))
    assert len(des_text(a, "text").encode()) <= 512
    assert joins(alg, a, b)  # differences beyond the first 512 bytes, case and spacing ignored
    c = doc("Other " + head)
    assert not joins(alg, a, c)


def test_des_description_vs_text_vs_auto():
    text = "the same main text of a page about rivers and bridges " * 3
    a = doc(text, description="A page about the rivers of Europe and their bridges")
    b = doc(text, description="A shop selling garden furniture and outdoor lamps")
    assert not joins(Des(KeywordSettings(des_mode="auto")), a, b)
    assert not joins(Des(KeywordSettings(des_mode="description")), a, b)
    assert joins(Des(KeywordSettings(des_mode="text")), a, b)
    # auto falls back to the text when there is no (usable) description
    c, d = doc(text, description="Home"), doc(text)
    assert joins(Des(KeywordSettings(des_mode="auto")), c, d)
    assert Des(KeywordSettings(des_mode="description")).features(d) is None


def test_des_features_is_md5_of_des_text():
    a = doc("Some Text  here that is long enough to be used")
    assert Des().features(a) == hashlib.md5(b"some text here that is long enough to be used").hexdigest()


def test_des_no_usable_text_gives_none():
    assert Des().features(doc("")) is None
    assert Des().features(doc("   \n  ")) is None
    assert Des().features(doc("tiny")) is None  # below des_min_chars


def test_des_mode_is_checked():
    with pytest.raises(ValueError):
        Des(KeywordSettings(des_mode="title")).features(doc("some text long enough to be used"))


LEAD = (
    "You may not want to put coffee in your sports bottle just yet, but a new study suggests "
    "drinking the equivalent of two cups before exercise may reduce postworkout muscle pain by "
    "nearly 50%. Researchers say that's more muscle pain relief than aspirin can provide.\n"
    "Second paragraph of the story, which a site may trim or correct."
)


def test_des_text_starts_at_the_lead_paragraph():
    # Each site writes its own headline, kicker, dateline and byline above the same story.
    a = doc("HEALTH NEWS\nCaffeine may ease muscle pain\n24 Hours, 1 minutes Ago\n" + LEAD)
    b = doc("Caffeine May Ease Workout Pain\nReviewed By Louise Chang, MD, on Wednesday, Jan 17\n"
            "More From WebMD\n" + LEAD.replace("that's", "that\u2019s").replace("50%.", "50 % ."))
    alg = Des(KeywordSettings(des_mode="text"))
    assert des_text(a, "text").startswith("you may not want to put coffee")
    assert joins(alg, a, b)  # lines before the lead skipped, punctuation and spacing ignored
    assert not joins(Des(KeywordSettings(des_mode="prefix")), a, b)
    c = doc("HEALTH NEWS\n" + LEAD.replace("two cups", "three cups"))
    assert not joins(alg, a, c)  # a changed word in the lead's first 512 bytes still counts


def test_lead_text_rule():
    short = "a headline of a few words\nand a byline"
    assert lead_text(short) == "a headline of a few words and a byline"  # no long line: all of it
    long_line = " ".join(f"w{i}" for i in range(LEAD_WORDS))
    assert lead_text("Title\n" + long_line + "\nnext, line!") == long_line + " next line"
    assert lead_text("Title\n" + long_line, lead_words=LEAD_WORDS + 1) == "title " + long_line
    assert des_words("Dr. O\u2019Neil\u2014said: \u201cYes\u201d") == ["dr", "o", "neil", "said", "yes"]
    assert des_words("北京欢迎你") == list("北京欢迎你")  # a Han character counts as a word


# ---------------------------------------------------------------- con / sort
def test_same_keywords_in_another_order_sort_joins_con_keeps_apart():
    a = doc(keywords=kw(WORDS))
    b = doc(keywords=kw(WORDS[::-1]))
    assert joins(Sort(), a, b)
    assert not joins(Con(), a, b)
    assert joins(Con(), a, doc(keywords=kw(WORDS)))


def test_different_keywords_kept_apart_by_both():
    a = doc(keywords=kw(WORDS))
    b = doc(keywords=kw(WORDS[:9] + ["airport"]))
    for alg in (Con(), Sort(), ConW(), SortW()):
        assert not joins(alg, a, b)


def test_only_top_n_keywords_count():
    extra_a = [("zebra", 0.5), ("yak", 0.4)]
    extra_b = [("lion", 0.5), ("tiger", 0.4)]
    a = doc(keywords=kw(WORDS) + extra_a)
    b = doc(keywords=kw(WORDS) + extra_b)
    assert joins(Con(KeywordSettings(n=10)), a, b)
    assert not joins(Con(KeywordSettings(n=12)), a, b)


def test_rank_ties_are_broken_by_the_word():
    # "castle" and "bridge" nearly tie; the noise of a near copy swaps them.
    w = [10.0, 8.0, 7.999, 6.0, 5.0, 4.0, 3.0, 2.0, 1.5, 1.0]
    a = doc(keywords=kw(WORDS, w))
    swapped = WORDS[:1] + [WORDS[2], WORDS[1]] + WORDS[3:]
    b = doc(keywords=kw(swapped, [10.0, 8.0, 7.9995, 6.0, 5.0, 4.0, 3.0, 2.0, 1.5, 1.0]))
    assert joins(Con(), a, b)
    # without the quantum, rank follows the raw weights and the MD5s differ
    exact = KeywordSettings(tie_quantum=0.0)
    assert not joins(Con(exact), a, b)
    ranked = ranked_keywords(a.keywords, 10, 0.01)
    assert [wd for wd, _ in ranked[1:3]] == ["bridge", "castle"]


def test_weights_are_unit_normalised():
    ranked = ranked_keywords(kw(WORDS), 10, 0.01)
    assert sum(w * w for _, w in ranked) == pytest.approx(1.0)
    doubled = ranked_keywords([(wd, 2 * x) for wd, x in kw(WORDS)], 10, 0.01)
    assert [w for w, _ in ranked] == [w for w, _ in doubled]
    assert [x for _, x in ranked] == pytest.approx([x for _, x in doubled])


def test_too_few_keywords_gives_none():
    few = doc(keywords=kw(WORDS[:3]))
    for alg in (Con(), Sort(), ConW(), SortW()):
        assert alg.features(few) is None
    assert Con(KeywordSettings(min_keywords=3)).features(few) is not None


def test_bad_weights_are_ignored():
    kws = kw(WORDS) + [("nan", float("nan")), ("neg", -1.0), ("river", 0.1)]
    assert Con().features(doc(keywords=kws)) == Con().features(doc(keywords=kw(WORDS)))


# ---------------------------------------------------------------- con-w / sort-w
def test_weight_distance_values():
    assert weight_distance([1.0, 2.0], [1.0, 2.0]) == 0.0
    assert weight_distance([1.0, 0.0], [0.0, 1.0]) == 1.0
    assert weight_distance([1.0], [1.0, 2.0]) == 1.0
    assert weight_distance([3.0, 4.0], [4.0, 3.0]) == pytest.approx(2 / 50)


def test_sort_w_equal_keywords_very_different_weights_kept_apart():
    a = doc(keywords=kw(WORDS, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]))
    # the same ten words, but one of them dominates the page
    b = doc(keywords=kw(WORDS[::-1], [40, 1.2, 1.1, 1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4]))
    assert joins(Sort(), a, b)
    assert not joins(SortW(), a, b)
    ev = SortW().verify(SortW().features(a), SortW().features(b))
    assert ev.detail["distance"] > KeywordSettings().a


def test_weighted_variants_join_scaled_and_slightly_noisy_weights():
    w = [10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    a = doc(keywords=kw(WORDS, w))
    b = doc(keywords=kw(WORDS, [3 * x * (1.0 + 0.002 * (i % 3)) for i, x in enumerate(w)]))
    assert joins(ConW(), a, b)
    assert joins(SortW(), a, b)
    ev = ConW().verify(ConW().features(a), ConW().features(b))
    assert ev.passed and ev.detail["distance"] < 1e-4


def test_con_w_same_order_different_weights_kept_apart():
    # words in A-Z order, so near ties (broken A-Z) cannot change the rank order
    words = sorted(WORDS)
    a = doc(keywords=kw(words, [10, 9.9, 9.8, 9.7, 9.6, 9.5, 9.4, 9.3, 9.2, 9.1]))
    b = doc(keywords=kw(words, [100, 9.9, 9.8, 9.7, 9.6, 9.5, 9.4, 9.3, 9.2, 9.1]))
    assert joins(Con(), a, b)
    assert not joins(ConW(), a, b)


def test_threshold_a_decides():
    a = doc(keywords=kw(WORDS, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]))
    b = doc(keywords=kw(WORDS, [10, 9, 8, 7, 6, 5, 4, 3, 2, 1.9]))
    d = ConW().verify(ConW().features(a), ConW().features(b)).detail["distance"]
    assert joins(ConW(KeywordSettings(a=d * 1.01)), a, b)
    assert not joins(ConW(KeywordSettings(a=d * 0.99)), a, b)


# ---------------------------------------------------------------- properties
keyword_lists = st.lists(
    st.tuples(st.text(min_size=1, max_size=8), st.floats(min_value=0.0, max_value=100.0)),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(keyword_lists, st.text(max_size=700), st.text(max_size=60))
def test_features_deterministic_and_round_trip(kws, text, description):
    d = doc(text, description, kws)
    for cls in ALL:
        alg = cls()
        f = alg.features(d)
        assert f == cls().features(Doc("q", "u", "h", None, text, description=description, keywords=list(kws)))
        if f is None:
            continue
        back = alg.decode(alg.encode(f))
        assert back == f
        assert list(alg.keys(back)) == list(alg.keys(f))
        ev = alg.verify(f, back)
        assert ev.passed and ev.score == pytest.approx(1.0)


@given(
    st.lists(st.tuples(st.sampled_from(["a", "b", "B", "é", "猫", "ab", "", "z"]),
                       st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.25, 0.5, 0.5000001, 1.0]))),
    st.integers(1, 8), st.sampled_from([0.0, -1.0, 0.001, 0.01, 0.3]),
)  # fmt: skip
def test_ranked_keywords_are_their_definition(keywords, n, tie_quantum):
    """ranked_keywords sorts (rank key, keyword, weight) triples: the order of a sort by the
    documented key (rounded weight descending, then the keyword), the same unit weights."""
    seen, picked = set(), []
    for word, weight in keywords:
        if word and word not in seen and math.isfinite(weight) and weight > 0.0 and len(picked) < n:
            seen.add(word)
            picked.append((word, weight))
    norm = math.sqrt(sum(w * w for _, w in picked))
    expected = [(word, w / norm) for word, w in picked] if norm else []
    if tie_quantum > 0:
        expected.sort(key=lambda kw: (-round(kw[1] / tie_quantum), kw[0]))
    else:
        expected.sort(key=lambda kw: (-kw[1], kw[0]))
    assert ranked_keywords(keywords, n, tie_quantum) == expected


@given(st.lists(st.floats(min_value=0.001, max_value=100.0), min_size=1, max_size=20), st.floats(0.01, 100))
def test_weight_distance_scale_invariant_after_normalisation(weights, scale):
    words = [f"w{i}" for i in range(len(weights))]
    a = ranked_keywords(list(zip(words, weights)), 20, 0.0)
    b = ranked_keywords([(w, x * scale) for w, x in zip(words, weights)], 20, 0.0)
    assert weight_distance(sorted(x for _, x in a), sorted(x for _, x in b)) == pytest.approx(0.0, abs=1e-9)


def test_registered_names_and_proof_flags():
    from pagetwin.fingerprints.base import REGISTRY

    assert [c.name for c in ALL] == ["des", "con", "sort", "con-w", "sort-w"]
    assert all(REGISTRY[c.name] is c for c in ALL)
    # No keyword algorithm's keys are "proof": every pair of a bucket is verified, so the five
    # see the same candidate pairs (a chain of proof edges was cut up by the guard, issue 11).
    assert not any(c.keys_are_proof for c in ALL)


def test_evidence_names_the_digests():
    a, b = doc(keywords=kw(WORDS)), doc(keywords=kw(WORDS[::-1]))
    for alg in (Con(), ConW()):
        fa, fb = alg.features(a), alg.features(b)
        ev = alg.verify(fa, fb)
        assert not ev.passed and ev.detail["md5_a"] != ev.detail["md5_b"]
    ev = Con().verify(Con().features(a), Con().features(a))
    assert ev.passed and ev.detail == {"md5": Con().features(a)}


# ---------------------------------------------------------------- con-w within con, sort-w within sort
# con-w is con plus a weight test, sort-w is sort plus a weight test: whatever pages they are
# given, every pair a weighted variant joins, its plain one joins too, as keys, as verification
# and as edges of the matcher (the same candidate pairs: issue 11).
SMALL_VOCAB = ["river", "bridge", "castle", "market", "tower", "garden", "harbor"]
near_keyword_lists = st.lists(
    st.tuples(
        st.sampled_from(SMALL_VOCAB),
        st.one_of(st.sampled_from([1.0, 2.0, 3.0, 3.0005, 4.0]), st.floats(0.0, 5.0)),
    ),
    max_size=9,
)
keyword_settings = st.builds(
    KeywordSettings,
    n=st.integers(1, 8),
    min_keywords=st.integers(0, 4),
    tie_quantum=st.sampled_from([0.0, 0.001, 0.05]),
    a=st.sampled_from([0.0, 0.001, 0.05, 1.0]),
)


@settings(max_examples=300, deadline=None)
@given(near_keyword_lists, near_keyword_lists, keyword_settings)
def test_weighted_variants_join_only_what_the_plain_ones_join(kws_a, kws_b, ks):
    a, b = doc(keywords=kws_a), doc(keywords=kws_b)
    for plain, weighted in ((Con(ks), ConW(ks)), (Sort(ks), SortW(ks))):
        fa, fb = weighted.features(a), weighted.features(b)
        pa, pb = plain.features(a), plain.features(b)
        assert (fa is None) == (pa is None) and (fb is None) == (pb is None)
        if fa is None or fb is None:
            continue
        assert fa[0] == pa and fb[0] == pb  # the key material is the plain digest
        if set(weighted.keys(fa)) & set(weighted.keys(fb)):
            assert set(plain.keys(pa)) & set(plain.keys(pb))
        if weighted.verify(fa, fb).passed:
            assert plain.verify(pa, pb).passed
        if joins(weighted, a, b):
            assert joins(plain, a, b)


class _Index:
    """The methods find_edges reads, over features and keys made in memory."""

    def __init__(self, algorithms, docs):
        self.data = {alg.name: {} for alg in algorithms}
        self.keys = {alg.name: {} for alg in algorithms}
        for pid, d in enumerate(docs, start=1):
            for alg in algorithms:
                f = alg.features(d)
                if f is not None:
                    self.data[alg.name][pid] = alg.encode(f)
                    for k in alg.keys(f):
                        self.keys[alg.name].setdefault(k, []).append(pid)

    def features(self, algo, pid):
        return self.data[algo].get(pid)

    def features_of(self, algo, pids):
        return {pid: self.data[algo][pid] for pid in pids if pid in self.data[algo]}

    def buckets(self, algo):
        for _, pids in sorted(self.keys[algo].items()):
            if len(pids) > 1:
                yield sorted(pids)


def _edges(algorithms, docs, max_bucket=200):
    from pagetwin.match import MatchStats, find_edges

    index = _Index(algorithms, docs)
    return {alg.name: {(e.a, e.b) for e in find_edges(index, [alg], max_bucket, MatchStats())} for alg in algorithms}


@settings(max_examples=150, deadline=None)
@given(st.lists(near_keyword_lists, min_size=2, max_size=12), keyword_settings, st.integers(2, 200))
def test_matcher_edges_of_weighted_variants_are_within_the_plain_ones(lists, ks, max_bucket):
    docs = [doc(keywords=k) for k in lists]
    edges = _edges([Con(ks), ConW(ks), Sort(ks), SortW(ks)], docs, max_bucket)
    assert edges["con-w"] <= edges["con"]
    assert edges["sort-w"] <= edges["sort"]


def test_a_bucket_of_equal_digests_is_not_cut_up_by_the_guard():
    """Seven pages with one con digest: all 21 pairs are edges, and the anti-chaining guard keeps
    the seven together (a chain of 6 edges, as when keys were proof, was cut into pieces)."""
    from pagetwin.guard import split_component

    docs = [doc(keywords=kw(WORDS)) for _ in range(7)]
    for alg in (Des(), Con(), Sort(), ConW(), SortW()):
        if alg.name == "des":
            docs_ = [doc(LEAD) for _ in range(7)]
        else:
            docs_ = docs
        edges = _edges([alg], docs_)[alg.name]
        assert len(edges) == 21
        parts = split_component(list(range(1, 8)), [(a, b, 1.0) for a, b in edges], lambda a, b: False)
        assert parts == [list(range(1, 8))]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=80), max_size=12), st.integers(1, 600), st.integers(1, 12))
def test_lead_text_stopping_early_changes_nothing_before_the_cut(lines, max_bytes, lead_words):
    text = "\n".join(lines)
    full = lead_text(text, lead_words)
    early = lead_text(text, lead_words, max_bytes=max_bytes)
    assert full.startswith(early)
    assert cut_utf8(early, max_bytes) == cut_utf8(full, max_bytes)
