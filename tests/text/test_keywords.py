"""text.keywords: document frequencies (fit, merge, bytes) and a page's top keywords."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.text.analyze import Analysis
from pagetwin.text.keywords import DocFreq, is_keyword_candidate, top_keywords


def analysis(tokens, stop=()):
    return Analysis("en", list(tokens), list(tokens), list(range(len(tokens))), [t in stop for t in tokens])


docs = st.lists(st.lists(st.sampled_from("a b c d e f g h кот 猫 x1".split()), max_size=8), max_size=12)


@settings(max_examples=100, deadline=None)
@given(docs, docs)
def test_merge_equals_fit_on_the_union(left, right):
    a, b, union = DocFreq(), DocFreq(), DocFreq()
    for d in left:
        a.fit(d)
        union.fit(d)
    for d in right:
        b.fit(d)
        union.fit(d)
    assert a.merge(b) == union
    assert DocFreq.from_bytes(union.to_bytes()) == union


def test_fit_counts_documents_not_occurrences():
    df = DocFreq().fit(["a", "a", "b"]).fit(["a"])
    assert df.n_docs_ == 2 and df.df_ == {"a": 2, "b": 1}
    assert df.idf("zzz") > df.idf("b") > df.idf("a") > 0


def test_pruning_bounds_memory_and_keeps_frequent_terms():
    df = DocFreq(max_terms=50)
    for i in range(200):
        df.fit(["common", f"rare{i}"])
    assert len(df.df_) <= 50
    assert df.df_["common"] == 200 and df.pruned_df_ == 1


def test_density_weights_and_exclusions():
    a = analysis(["cat", "cat", "dog", "the", "7", "3.5", "x", "猫"], stop={"the"})
    kw = top_keywords(a, 10, "density")
    assert [t for t, _ in kw] == ["cat", "dog", "猫"]
    assert math.isclose(sum(w * w for _, w in kw), 1.0, rel_tol=1e-6)
    assert kw[0][1] == round(2 / math.sqrt(6), 8)


def test_tfidf_demotes_terms_found_everywhere():
    df = DocFreq()
    for _ in range(50):
        df.fit(["page", "home"])
    df.fit(["zebra"])
    a = analysis(["page", "page", "home", "zebra"])
    assert top_keywords(a, 1, "density")[0][0] == "page"
    assert top_keywords(a, 1, "tfidf", df)[0][0] == "zebra"
    assert top_keywords(a, 3, "tfidf", None) == top_keywords(a, 3, "density")


def test_order_is_deterministic_on_ties():
    tokens = ["delta", "alpha", "charlie", "bravo"] * 3
    expected = [("alpha", 0.5), ("bravo", 0.5), ("charlie", 0.5), ("delta", 0.5)]
    rng = random.Random(7)
    for _ in range(10):
        rng.shuffle(tokens)
        assert top_keywords(analysis(tokens), 4, "density") == expected
    assert top_keywords(analysis(tokens), 2, "density") == [("alpha", 0.70710678), ("bravo", 0.70710678)]


def test_candidates():
    assert is_keyword_candidate("猫") and not is_keyword_candidate("a") and not is_keyword_candidate("1,000")
    assert top_keywords(analysis([]), 5) == [] and top_keywords(analysis(["a"]), 0) == []


@settings(max_examples=100, deadline=None)
@given(docs, st.integers(1, 6))
def test_bytes_round_trip_keeps_the_cap_and_the_pruning(documents, max_terms):
    df = DocFreq(max_terms=max_terms)
    for d in documents:
        df.fit(d)
    back = DocFreq.from_bytes(df.to_bytes())
    assert back == df
    assert (back.max_terms, back.pruned_df_) == (df.max_terms, df.pruned_df_)
    assert len(back.df_) <= max_terms
    assert back.to_bytes() == df.to_bytes()  # sorted keys: the same counts give the same bytes


def test_from_bytes_refuses_other_data():
    with pytest.raises(ValueError, match="not a pagetwin DocFreq"):
        DocFreq.from_bytes(b"{}")


page_tokens = st.lists(st.sampled_from("cat dog the a 7 猫 bird fish 3.5 tree".split()), max_size=30)


@settings(max_examples=200, deadline=None)
@given(page_tokens, st.integers(1, 8), st.sampled_from(["density", "tfidf"]), st.randoms(use_true_random=False))
def test_top_keywords_invariants(tokens, n, weighting, rnd):
    df = DocFreq().fit(["cat", "the"]).fit(["cat"]).fit(["bird"])
    a = analysis(tokens, stop={"the"})
    kw = top_keywords(a, n, weighting, df)
    names = [t for t, _ in kw]
    candidates = {t for t in tokens if t != "the" and is_keyword_candidate(t)}
    assert len(kw) == min(n, len(candidates)) and set(names) <= candidates
    assert len(set(names)) == len(names)
    # weight descending, ties by token: the documented, deterministic order
    assert [(-w, t) for t, w in kw] == sorted((-w, t) for t, w in kw)
    if kw:
        assert math.isclose(sum(w * w for _, w in kw), 1.0, abs_tol=1e-6)
    # the order of the words on the page does not matter, only their counts
    shuffled = list(tokens)
    rnd.shuffle(shuffled)
    assert top_keywords(analysis(shuffled, stop={"the"}), n, weighting, df) == kw
    # a shorter list is the same ranking cut earlier
    assert [t for t, _ in top_keywords(a, max(1, n - 1), weighting, df)] == names[: max(1, n - 1)]


def test_unknown_weighting_is_refused():
    with pytest.raises(ValueError, match="unknown keyword weighting"):
        top_keywords(analysis(["cat", "dog"]), 2, "bm25")


def _top_keywords_by_definition(a, n, weighting, doc_freq):
    """The documented weights and order, written out plainly (the reference of top_keywords)."""
    from collections import Counter

    from pagetwin.text.keywords import content_terms

    terms = content_terms(a)
    if not terms:
        return []
    counts = Counter(terms)
    idf = doc_freq.idf if weighting == "tfidf" else (lambda t: 1.0)
    weights = {t: (c / len(terms)) * idf(t) for t, c in counts.items()}
    top = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    norm = math.sqrt(sum(w * w for _, w in top)) or 1.0
    return [(t, round(w / norm, 8)) for t, w in top]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("cat dog the a 7 猫 bird fish 3.5 tree Tree x 1-2 кот".split()), max_size=60),
       st.integers(1, 12), st.sampled_from(["density", "tfidf"]), st.sets(st.sampled_from(["the", "cat", "a", "7"])))
def test_top_keywords_equal_their_definition(tokens, n, weighting, stop):
    df = DocFreq().fit(["cat", "the", "tree"]).fit(["cat"]).fit(["bird", "кот"])
    a = analysis(tokens, stop=stop)
    expected = _top_keywords_by_definition(a, n, weighting, df)
    assert top_keywords(a, n, weighting, df) == expected
    known = {}  # the memo a Worker keeps, asked twice
    assert top_keywords(a, n, weighting, df, known) == expected == top_keywords(a, n, weighting, df, known)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("cat dog the a 7 猫 bird 3.5 x 1-2 кот é".split() + [""]), st.booleans()), max_size=80))
def test_native_keyword_counts_are_the_references_in_order(words):
    """_fast.keyword_counts (top_keywords' counts) == keyword_counts_reference: the same
    counts in the same first-seen order; lists of unequal lengths refused."""
    from pagetwin.text import _fast
    from pagetwin.text.keywords import keyword_counts, keyword_counts_reference

    tokens, stop = [t for t, _ in words], [s for _, s in words]
    expected = keyword_counts_reference(tokens, stop)
    known = {"cat": True}  # a memo from an earlier page
    got = _fast.keyword_counts(tokens, stop, is_keyword_candidate, known)
    assert all(known[t] == is_keyword_candidate(t) for t in known)
    assert list(got.items()) == list(expected.items())
    assert list(keyword_counts(tokens, stop).items()) == list(expected.items())
    assert list(keyword_counts(tokens, stop, known).items()) == list(expected.items())
    with pytest.raises(ValueError):
        _fast.keyword_counts(tokens + ["cat"], stop, is_keyword_candidate, {})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("cat dog the 7 猫 bird кот".split()), st.sampled_from([True, False, 0, 1, None]), st.booleans()),
                max_size=120), st.integers(0, 400))
def test_native_keyword_counts_merge_equal_tokens_that_are_other_objects(words, repeat):
    """_fast.keyword_counts counts by token object, then merges equal objects: tokens that are
    equal but not the same object (a copy), counts past the small ints, and stop flags that are
    only truthy or falsy give the reference's counts in its order."""
    from pagetwin.text import _fast
    from pagetwin.text.keywords import keyword_counts_reference

    tokens = [("".join(list(t)) if copy else t) for t, _, copy in words] + ["bird"] * repeat
    stop = [s for _, s, _ in words] + [False] * repeat
    expected = keyword_counts_reference(tokens, stop)
    got = _fast.keyword_counts(tokens, stop, is_keyword_candidate, {})
    assert list(got.items()) == list(expected.items())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1500), st.booleans(), st.booleans()), max_size=3000))
def test_native_keyword_counts_of_many_distinct_tokens(words):
    """Hundreds of distinct token objects (the counts' table grows as they come: more than a
    page's usual ~200), copies of equal tokens among them: the reference's counts in its order,
    with stop flags and with the word scan's keyword flags alike."""
    from pagetwin.text import _fast
    from pagetwin.text.keywords import keyword_counts_reference

    one = {n: f"w{n}" for n, _, _ in words}  # one object a token, but for the copies
    tokens = [("".join(list(one[n])) if copy else one[n]) for n, _, copy in words]
    stop = [s for _, s, _ in words]
    expected = list(keyword_counts_reference(tokens, stop).items())
    assert list(_fast.keyword_counts(tokens, stop, is_keyword_candidate, {}).items()) == expected
    flags = bytes(not s and is_keyword_candidate(t) for t, s in zip(tokens, stop))
    assert list(_fast.flagged_counts(tokens, flags).items()) == expected


_WORDS = "cat dog the a 猫 bird fish tree Tree x кот é ß ﬁ b2 zz".split()


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(_WORDS), st.integers(1, 6) | st.integers(7, 2**40), max_size=len(_WORDS)),
       st.dictionaries(st.sampled_from(_WORDS), st.integers(0, 3000)), st.integers(0, 5000),
       st.integers(0, 20), st.booleans())
def test_native_top_weights_are_the_references_floats_in_its_order(counts, df_counts, n_docs, n, tfidf):
    """_fast.top_weights == top_weights_reference: the same (weight, token) pairs, bit for bit,
    in the same order (weights tied often here: the tokens decide), tf-idf and density; counts
    small and past the small ints (each read as an int, not through a float object)."""
    from pagetwin.text import _fast
    from pagetwin.text.keywords import top_weights_reference

    df = DocFreq()
    df.n_docs_, df.df_ = n_docs + max(df_counts.values(), default=0), dict(df_counts)
    total = sum(counts.values())
    if not total:
        return
    expected = top_weights_reference(counts, total, n, df if tfidf else None)
    got = _fast.top_weights(counts, total, df.df_ if tfidf else None, 1 + df.n_docs_, n)
    assert [(w.hex(), t) for w, t in got] == [(w.hex(), t) for w, t in expected]


def test_top_keywords_without_the_native_kernels_are_the_same(monkeypatch):
    import pagetwin.text.keywords as keywords

    rnd = random.Random(7)
    words = [f"w{i}" for i in range(300)] + _WORDS
    df = DocFreq()
    for _ in range(50):
        df.fit(rnd.choices(words, k=40))
    pages = [analysis(rnd.choices(words, k=rnd.randint(0, 400))) for _ in range(40)]
    native = [(top_keywords(a, 10, w, df), top_keywords(a, 25, w, None)) for a in pages for w in ("tfidf", "density")]
    monkeypatch.setattr(keywords, "_fast", None)
    assert [(top_keywords(a, 10, w, df), top_keywords(a, 25, w, None)) for a in pages for w in ("tfidf", "density")] == native
