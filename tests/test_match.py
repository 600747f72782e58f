import tempfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index
from pagetwin.match import WINDOW, MatchStats, bucket_pairs, edge_kind, find_edge_rows, find_edges, find_new_edges, new_pairs, retract
from pagetwin import match as match_kernels
from pagetwin.match import EvidenceRows, evidence_from_json, evidence_json, evidence_row, guard_score
from pagetwin.model import Edge, Evidence


def test_bucket_pairs_all_pairs_chain_and_window():
    assert list(bucket_pairs([1, 2, 3], 10, chain=False)) == [(1, 2), (1, 3), (2, 3)]
    assert list(bucket_pairs([1, 2, 3], 10, chain=True)) == [(1, 2), (2, 3)]
    big = list(range(1000))
    pairs = list(bucket_pairs(big, 200, chain=False))
    assert len(pairs) < 1000 * 17  # not quadratic
    assert all(0 < b - a <= 16 for a, b in pairs)


def test_edge_kind():
    dup = Evidence("minhash", 0.9, True)
    part = Evidence("chunks", 0.5, True, {"kind": "partial"})
    rev = Evidence("revisit", 1.0, True)
    assert edge_kind([dup]) == "duplicate"
    assert edge_kind([part]) == "partial"
    assert edge_kind([part, dup]) == "duplicate"
    assert edge_kind([rev, dup]) == "revisit"


# -- incremental matching (issue 17, item 4) ------------------------------------------------

class _Parity:
    """A stand-in algorithm: features are one byte; a pair verifies when both are even or both odd."""

    def __init__(self, name, proof=False, shared=1):
        self.name, self.keys_are_proof, self.min_shared_keys = name, proof, shared

    def decode(self, data):
        return data[0]

    def verify(self, a, b):
        return Evidence(self.name, 1.0 if a % 2 == b % 2 else 0.0, a % 2 == b % 2)


@given(st.integers(2, 60), st.integers(0, 60), st.integers(2, 30), st.booleans())
def test_new_pairs_are_the_bucket_pairs_with_a_new_page(size, old, max_bucket, chain):
    bucket = list(range(0, size * 3, 3))
    old = min(old, size)
    expected = [p for p in bucket_pairs(bucket, max_bucket, chain) if bucket.index(p[1]) >= old]
    assert sorted(new_pairs(bucket, old, max_bucket, chain)) == sorted(expected)


def _row(i):
    return dict(id=f"p{i}", url=f"http://x/{i}", host="x", source="s", kind="response", crawl_date=None,
                text_len=1, payload_digest=f"sha1:{i}", refers_to_digest=None, lang="en", title="", text=None, error=None)  # fmt: skip


pages_strategy = st.lists(
    st.tuples(st.integers(0, 9), st.lists(st.integers(0, 5), max_size=3), st.lists(st.integers(0, 3), max_size=2)),
    min_size=2, max_size=40,
)  # fmt: skip


def _two_steps(pages, split, max_bucket, shared=1):
    """Pages stored in two steps: the first step's edges, find_new_edges after the second, and
    find_edges over all (``shared``: the keys a "near" pair must share)."""
    algorithms = [_Parity("near", shared=shared), _Parity("exact", proof=True)]
    with tempfile.TemporaryDirectory() as d:
        idx = Index(Path(d) / "i.sqlite", Settings().to_dict())
        idx.begin()
        for i, (feature, near_keys, exact_keys) in enumerate(pages):
            pid = idx.add_page(_row(i))
            idx.add_fingerprints(pid, {"near": bytes([feature]), "exact": bytes([feature % 2])}, {"near": near_keys, "exact": exact_keys})
            if i == split - 1:
                first_new = pid
                old_edges = find_edges(idx, algorithms, max_bucket, MatchStats())
                idx.add_edges((e.a, e.b, e.kind, evidence_json(e.evidence)) for e in old_edges)
        idx.commit()
        full = find_edges(idx, algorithms, max_bucket, MatchStats())
        stats = MatchStats()
        new = find_new_edges(idx, algorithms, max_bucket, stats, first_new)
        idx.close()
    assert stats.incremental
    assert all(e.b > first_new for e in new.edges)
    stored = {(e.a, e.b): Edge(e.a, e.b, e.kind, evidence_from_json(evidence_json(e.evidence))) for e in old_edges}
    for a, b, algo in new.retracted:
        stored[(a, b)] = retract(stored[(a, b)], {algo})
    return [e for e in stored.values() if e is not None], new, full


def _rounded(edges):
    return sorted((Edge(e.a, e.b, e.kind, evidence_from_json(evidence_json(e.evidence))) for e in edges), key=lambda e: (e.a, e.b))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages_strategy, st.data(), st.integers(2, 30), st.integers(1, 2))
def test_new_edges_added_to_the_old_are_the_edges_of_one_match(pages, data, max_bucket, shared):
    """The first step's edges, less the evidence retracted, plus find_new_edges after the
    second are find_edges over all, also for pairs that must share two keys (the stand-in
    verifies them whatever they share: only the candidates' count keeps them out)."""
    split = data.draw(st.integers(1, len(pages) - 1))
    old, new, full = _two_steps(pages, split, max_bucket, shared)
    assert _rounded(old + new.edges) == _rounded(full)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(WINDOW + 2, 40), st.integers(1, 30), st.lists(st.integers(0, 3), min_size=70, max_size=70), st.integers(0, 2))
def test_a_bucket_pushed_past_max_bucket_retracts_the_pairs_it_no_longer_makes(older, added, features, spare):
    """``older`` pages share key 0 (all-pairs: max_bucket = older), ``added`` more push it past;
    every third page shares key 1 too (a far pair there stays paired by that bucket)."""
    pages = [(features[i], [0] + ([1] if i % 3 == spare else []), []) for i in range(older + added)]
    old, new, full = _two_steps(pages, older, max_bucket=older)
    far = {(i + 1, j + 1) for i in range(older) for j in range(i + WINDOW + 1, older)
           if features[i] % 2 == features[j] % 2 and spare not in (i % 3, j % 3)}  # fmt: skip
    assert far <= {(a, b) for a, b, _ in new.retracted}
    assert all(b - a > WINDOW and algo == "near" for a, b, algo in new.retracted)
    assert _rounded(old + new.edges) == _rounded(full)


class _Alg:
    name = "minhash"

    def __init__(self, chain, shared=1):
        self.keys_are_proof = chain
        self.min_shared_keys = shared


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(1, 12), min_size=2, max_size=6), min_size=1, max_size=8), st.lists(st.integers(0, 7), max_size=12),
       st.integers(3, 6), st.integers(1, 2), st.integers(1, 9))
def test_distinct_pairs_of_buckets_given_again_are_counted_as_given(buckets, again, max_bucket, shared, chunk):
    """Buckets of the same pages given again (near copies sharing many keys): each pair once,
    those of min_shared_keys 2 counted over every bucket given, however the pairs are merged."""
    import pagetwin.match as match_module

    buckets = [sorted(set(b)) for b in buckets]
    buckets = [b for b in buckets if len(b) > 1] or [[1, 2]]
    given_buckets = buckets + [buckets[i % len(buckets)] for i in again]
    made = {p for b in given_buckets for p in bucket_pairs(b, max_bucket, False)}
    expected = sorted(p for p in made if sum(set(p) <= set(b) for b in given_buckets) >= shared)
    old_chunk = match_module._PAIR_CHUNK
    match_module._PAIR_CHUNK = chunk
    try:
        got = list(match_module.distinct_pairs(iter(given_buckets), max_bucket, _Alg(False, shared), MatchStats()))
    finally:
        match_module._PAIR_CHUNK = old_chunk
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(1, 60), min_size=2, max_size=40), max_size=12),
       st.integers(2, 30), st.booleans(), st.booleans(), st.integers(1, 3), st.integers(0, 70))
def test_distinct_pairs_are_the_bucket_pairs_each_once_in_order(buckets, max_bucket, chain, wide, shared, first_new):
    """Each pair once; with ``min_shared_keys`` the pairs whose pages share that many buckets,
    oversized ones included (a chained algorithm's keys are proof: one is enough). An
    incremental run's (``new_after``, over the buckets holding a page above it) are the same
    pairs' with such a page."""
    import pagetwin.match as match_module

    shift = (1 << 32) if wide else 0  # pids past 32 bits take the set's way
    buckets = [sorted({pid + (shift if i % 2 else 0) for pid in b}) for i, b in enumerate(buckets)]
    buckets = [b for b in buckets if len(b) > 1]
    stats = MatchStats()
    made = {p for b in buckets for p in bucket_pairs(b, max_bucket, chain)}
    expected = {p for p in made if chain or sum(set(p) <= set(b) for b in buckets) >= shared}
    old_chunk = match_module._PAIR_CHUNK
    match_module._PAIR_CHUNK = 7  # merged many times
    try:
        got = list(match_module.distinct_pairs(iter(buckets), max_bucket, _Alg(chain, shared), stats))
    finally:
        match_module._PAIR_CHUNK = old_chunk
    narrow = sorted(p for p in expected if p[1] < 1 << 32)
    assert got == narrow + sorted(p for p in expected if p[1] >= 1 << 32)
    assert all(type(a) is int and type(b) is int for a, b in got)
    assert stats.oversized_buckets["minhash"] == (0 if chain else sum(len(b) > max_bucket for b in buckets))
    with_new = [b for b in buckets if b[-1] > first_new]
    arrays = match_module.distinct_pair_arrays(iter(with_new), max_bucket, _Alg(chain, shared), MatchStats(), 5, first_new)
    got_new = [p for first, second in arrays for p in zip(first.tolist(), second.tolist())]
    assert sorted(got_new) == sorted(p for p in got if p[1] > first_new)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.lists(st.integers(0, 2), min_size=8, max_size=8), st.integers(0, 30), st.lists(st.integers(0, 4), max_size=3)),
             min_size=2, max_size=30),
    st.integers(1, 7), st.integers(2, 30),
)  # fmt: skip
def test_find_edges_verifies_many_pairs_at_once_as_one_at_a_time(pages, chunk, max_bucket):
    """find_edges hands an algorithm's pairs to Algorithm.passing a chunk at a time (MinHash
    counts them in numpy): the edges, their evidence and the counts are those of _verify a
    pair, pages without features included (a size -1 marks one: no features stored)."""
    import pagetwin.match as match_module
    from pagetwin.config import MinHashSettings
    from pagetwin.fingerprints.minhash import MinHash

    algorithm = MinHash(MinHashSettings(num_perm=8, threshold=0.6, containment=0.5))
    with tempfile.TemporaryDirectory() as d:
        idx = Index(Path(d) / "i.sqlite", Settings().to_dict())
        idx.begin()
        for i, (signature, size, keys) in enumerate(pages):
            pid = idx.add_page(_row(i))
            features = {} if size == 0 else {"minhash": algorithm.encode(np.array(signature + [size], dtype=np.uint32))}
            idx.add_fingerprints(pid, features, {"minhash": keys})
        idx.commit()
        old_chunk = match_module._VERIFY_CHUNK
        match_module._VERIFY_CHUNK = chunk
        try:
            stats = MatchStats()
            got = find_edges(idx, [algorithm], max_bucket, stats)
            rows = list(find_edge_rows(idx, [algorithm], max_bucket, MatchStats()))
        finally:
            match_module._VERIFY_CHUNK = old_chunk
        expected_stats, evidence = MatchStats(), {}
        cache = match_module.FeatureCache(idx, algorithm)
        for pair in match_module.distinct_pairs(idx.buckets("minhash"), max_bucket, algorithm, expected_stats):
            match_module._verify(algorithm, cache, pair, expected_stats, evidence)
        idx.close()
    expected = [Edge(a, b, edge_kind(ev), tuple(ev)) for (a, b), ev in sorted(evidence.items())]
    assert got == expected
    assert [evidence_json(e.evidence) for e in got] == [evidence_json(e.evidence) for e in expected]
    assert stats.to_dict() == expected_stats.to_dict()
    assert rows == [(e.a, e.b, e.kind, *evidence_row(e.evidence)) for e in expected]  # what the link step stores


_SCORES = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([1.0, 0.5, 0.4999995, 0.5000004, 1, 0, -0.0])


@given(st.lists(st.builds(Evidence, st.sampled_from(["exact", "minhash", "con-w", "revisit"]), _SCORES, st.booleans(),
                          st.dictionaries(st.sampled_from(["jaccard", "kind", "key"]), st.floats(0, 1) | st.text(max_size=3), max_size=2)),
                max_size=5).map(tuple))
@settings(max_examples=300, deadline=None)
def test_an_edge_row_is_its_evidence_json_and_guard_score(evidence):
    """evidence_row rounds each score once for both: the same text and score as the two apart
    (ties, NaN and infinities, ints, no passed item)."""
    text, score = evidence_row(evidence)
    expected = guard_score(evidence)
    assert text == evidence_json(evidence)
    assert score == expected or (score != score and expected != expected)
    assert type(score) is type(expected)


# Values equal to each other with other texts (1, 1.0, True; 0.0, -0.0; a float subclass), NaN,
# an unhashable one, keys equal across classes: EvidenceRows must tell all of them apart.
_ALIKE = st.sampled_from(
    [1, 1.0, True, 0, 0.0, -0.0, False, None, float("nan"), np.float64(0.5), 0.5, "1", "a", 0.3984, [1], "partial", "revisit"]
)
_ALIKE_SCORES = st.sampled_from([1.0, 1, True, 0.398438, 0.3984375, 0.0, -0.0, float("nan"), np.float64(1.0)])
_ITEMS = st.lists(
    st.builds(
        Evidence,
        st.sampled_from(["minhash", "con-w", "revisit"]),
        _ALIKE_SCORES,
        st.sampled_from([True, 1, False]),
        st.dictionaries(st.sampled_from(["jaccard", 1, True, "kind"]), _ALIKE, max_size=2),
    )
    # items alike but for one value: the same algorithm, verdict and key
    | st.lists(st.tuples(_ALIKE_SCORES, _ALIKE, st.sampled_from(["jaccard", 1, True, "kind"])), min_size=1, max_size=6).map(
        lambda drawn: [Evidence("minhash", score, True, {key: value}) for score, value, key in drawn]
    ),
    min_size=1,
    max_size=6,
).map(lambda drawn: [e for part in drawn for e in (part if isinstance(part, list) else [part])])


@given(_ITEMS, st.lists(st.lists(st.integers(0, 11), max_size=4), max_size=40), st.integers(1, 6))
@settings(max_examples=500, deadline=None)
def test_evidence_rows_give_each_edge_its_evidence_row(pool, picks, size):
    """The items' texts kept for their equals (EvidenceRows) give every edge's row as
    evidence_row makes it: the same text and a score of the same value and class, however the
    items repeat, and when the texts kept start again (``size``)."""
    rows = EvidenceRows(size)
    for pick in picks:
        evidence = tuple(pool[i % len(pool)] for i in pick)
        try:
            expected_kind = edge_kind(evidence)
        except TypeError:  # an unhashable kind: edge_kind refuses it, and so does the row
            with pytest.raises(TypeError):
                rows.edge_row(evidence)
            continue
        kind, text, score = rows.edge_row(evidence)
        expected_text, expected = evidence_row(evidence)
        assert kind == expected_kind and text == expected_text
        assert type(score) is type(expected) and (score == expected or (score != score and expected != expected))


@pytest.mark.skipif(match_kernels._edges is None, reason="the native kernel (pagetwin._edges) is not built")
@given(_ITEMS, st.lists(st.lists(st.integers(0, 11), max_size=4), max_size=40), st.integers(1, 6), st.booleans())
@settings(max_examples=500, deadline=None)
def test_native_edge_rows_are_the_reference_rows(pool, picks, size, warm):
    """The native edge_rows gives every edge the row edge_rows_reference gives it (kind, text,
    and a score of the same value and class), whatever the items kept already (``warm``: the
    same edges made once before) and however the texts kept start again (``size``)."""
    lists = [[pool[i % len(pool)] for i in pick] for pick in picks]

    def made(rows_of):
        rows = EvidenceRows(size)
        try:
            if warm:
                rows_of(lists, rows)
            return rows_of(lists, rows)
        except TypeError:  # an unhashable kind: both refuse it
            return TypeError

    native = made(lambda lists, rows: match_kernels._edges.edge_rows(lists, rows, match_kernels._kind_of_items))
    expected = made(match_kernels.edge_rows_reference)
    if expected is TypeError:
        assert native is TypeError
        return
    assert [(k, t) for k, t, _ in native] == [(k, t) for k, t, _ in expected]
    for (_, _, got), (_, _, want) in zip(native, expected):
        assert type(got) is type(want) and (got == want or (got != got and want != want))


@given(_ITEMS, st.lists(st.lists(st.integers(0, 11), min_size=1, max_size=4), max_size=40), st.integers(1, 6), st.booleans(), st.randoms(use_true_random=False))
@settings(max_examples=500, deadline=None)
def test_edge_row_columns_are_the_rows_of_their_items_runs(pool, picks, size, warm, rng):
    """edge_row_columns (native when built) and its reference give the columns of the rows
    edge_rows_reference gives the edges whose items are runs of ``order`` over a shuffled
    list of the items: kinds and texts equal, scores of the same value and class."""
    lists = [[pool[i % len(pool)] for i in pick] for pick in picks]
    flat = [e for evidence in lists for e in evidence]
    order = list(range(len(flat)))
    rng.shuffle(order)
    items = [None] * len(flat)
    for place, e in zip(order, flat):  # item k of the runs is items[order[k]]
        items[place] = e
    starts = [sum(map(len, lists[:g])) for g in range(len(lists))]

    def made(columns_of):
        rows = EvidenceRows(size)
        try:
            if warm:
                columns_of(items, order, starts, rows)
            return columns_of(items, order, starts, rows)
        except TypeError:  # an unhashable kind: both refuse it
            return TypeError

    def expected_of(items, order, starts, rows):
        got = match_kernels.edge_rows_reference(lists, rows)
        return [k for k, _, _ in got], [t for _, t, _ in got], [s for _, _, s in got]

    expected = made(expected_of)
    for columns_of in (match_kernels.edge_row_columns, match_kernels.edge_row_columns_reference):
        got = made(columns_of)
        if expected is TypeError:
            assert got is TypeError
            continue
        assert got[:2] == expected[:2]
        for score, want in zip(got[2], expected[2]):
            assert type(score) is type(want) and (score == want or (score != score and want != want))


def test_evidence_rows_keep_the_items_with_zeros_by_their_signs():
    """An item with a zero float (con-w's distance of 0.0) is kept by its key and the signs of
    its zeros: the same row for its equals, its own for the one written -0.0."""
    rows = EvidenceRows()
    items = [Evidence("con-w", 1.0, True, {"md5": "x", "distance": d}) for d in (0.0, -0.0, 0.0, -0.0)]
    got = [rows.edge_row((e,)) for e in items]
    assert got == [(edge_kind((e,)), *evidence_row((e,))) for e in items]
    assert '"distance": -0.0' in got[1][1] and got[0] is got[2] and got[1] is got[3]


def test_evidence_rows_tell_apart_equal_values_written_differently():
    """Each pair here is equal in Python (and hashes alike) but is written otherwise in JSON:
    whichever comes first, the second edge still gets its own text."""
    alike = [
        ({"jaccard": 1}, {"jaccard": 1.0}), ({"jaccard": 1.0}, {"jaccard": True}), ({"d": 0.0}, {"d": -0.0}),
        ({1: "x"}, {True: "x"}), ({1.0: "x"}, {1: "x"}),
    ]  # fmt: skip
    for first, second in alike:
        for x, y in ((first, second), (second, first)):
            rows = EvidenceRows()
            for detail in (x, y, x, y):
                evidence = (Evidence("minhash", 0.5, True, detail),)
                assert rows.edge_row(evidence) == (edge_kind(evidence), *evidence_row(evidence))
    for a, b in ((1.0, 1), (1, True), (0.0, -0.0)):  # scores
        rows = EvidenceRows()
        for score in (a, b, a, b):
            evidence = (Evidence("minhash", score, True, {"jaccard": 0.5}),)
            assert rows.edge_row(evidence)[1] == evidence_row(evidence)[0]
    rows = EvidenceRows()
    for passed in (True, 1, True, 1):  # the verdict
        evidence = (Evidence("minhash", 0.5, passed, {}),)
        assert rows.edge_row(evidence)[1] == evidence_row(evidence)[0]


def test_evidence_rows_keep_one_text_for_the_equal_items_of_many_edges():
    """The kept texts are what the speed comes from: MinHash items of one agreement count,
    one text for all of them."""
    rows = EvidenceRows()
    for _ in range(3):
        for count in (51, 56, 64):
            est = count / 128
            rows.edge_row((Evidence("minhash", est, True, {"jaccard": round(est, 4), "bands": 28, "rows": 2}),))
    assert len(rows._items) == 3


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.integers(0, 2), min_size=12, max_size=12), min_size=2, max_size=30), st.integers(2, 30))
def test_pairs_sharing_too_few_bands_give_no_edge_whichever_way_they_are_proposed(signatures, max_bucket):
    """MinHash with min_bands 2: find_edges drops the pairs fewer than two buckets make before
    verifying them, while the incremental path, query and Spark verify every bucket pair. Both
    give the same edges (verify fails a pair sharing one band), oversized buckets included."""
    import pagetwin.match as match_module
    from pagetwin.config import MinHashSettings
    from pagetwin.fingerprints.minhash import MinHash

    algorithm = MinHash(MinHashSettings(num_perm=12, threshold=0.3, containment=0.5, min_bands=2))
    assert algorithm.min_shared_keys == 2 and algorithm.bands >= 2
    with tempfile.TemporaryDirectory() as d:
        idx = Index(Path(d) / "i.sqlite", Settings().to_dict())
        idx.begin()
        for i, signature in enumerate(signatures):
            features = np.array(signature + [5 + i % 7], dtype=np.uint32)
            pid = idx.add_page(_row(i))
            idx.add_fingerprints(pid, {"minhash": algorithm.encode(features)}, {"minhash": list(algorithm.keys(features))})
        idx.commit()
        stats = MatchStats()
        got = find_edges(idx, [algorithm], max_bucket, stats)
        every, evidence = MatchStats(), {}
        cache = match_module.FeatureCache(idx, algorithm)
        for pair in match_module.distinct_pairs(idx.buckets("minhash"), max_bucket, _Alg(False), every):
            match_module._verify(algorithm, cache, pair, every, evidence)
        idx.close()
    assert got == [Edge(a, b, edge_kind(ev), tuple(ev)) for (a, b), ev in sorted(evidence.items())]
    assert stats.candidates["minhash"] <= every.candidates["minhash"]
    assert all(e.evidence[0].detail["bands_shared"] >= 2 for e in got)


def _chance_candidates(algorithm, docs):
    """(candidate pairs, failing ones) of MinHash over generated pages, as find_edges pairs them."""
    from collections import defaultdict

    import pagetwin.match as match_module

    feats = [algorithm.features(doc) for doc in docs]
    buckets = defaultdict(list)
    for i, f in enumerate(feats):
        for key in algorithm.keys(f):
            buckets[key].append(i)
    candidates = passed = 0
    for first, second in match_module.distinct_pair_arrays((b for b in buckets.values() if len(b) > 1), 200, algorithm, MatchStats()):
        candidates += len(first)
        passed += len(algorithm.passing(feats, first, second))
    return candidates, candidates - passed


def test_two_shared_bands_keep_chance_candidates_of_long_pages_rare_as_the_crawl_grows():
    """Unrelated long pages of one vocabulary (1,500 words each, Zipf over 10,000 words: they
    share ~3% of their word pairs, like the long pages of a crawl, bench/RESULTS.md issue 18)
    are candidates in proportion to the pairs: at the defaults (28 x 2) ~0.013 a pair, so a
    page's failing candidates grow with N. With min_bands 2 (47 x 2) they are >= 20 times
    rarer, and stay under half a page at 800 pages; none of them passes."""
    from pagetwin.config import MinHashSettings
    from pagetwin.fingerprints.minhash import MinHash
    from pagetwin.model import Doc

    weights = 1.0 / np.arange(1, 10_001)
    drawn = np.random.default_rng(7).choice(10_000, size=(800, 1_500), p=weights / weights.sum())
    words = np.array([f"w{i}" for i in range(10_000)])
    docs = [Doc(page_id=str(i), url="", host="", crawl_date=None, text="", tokens=words[row].tolist()) for i, row in enumerate(drawn)]
    one, two = MinHash(MinHashSettings()), MinHash(MinHashSettings(min_bands=2))
    assert (one.bands, one.rows, two.bands, two.rows) == (28, 2, 47, 2)
    small_one, small_two = _chance_candidates(one, docs[:400]), _chance_candidates(two, docs[:400])
    big_one, big_two = _chance_candidates(one, docs), _chance_candidates(two, docs)
    assert big_one[0] == big_one[1] and big_two[0] == big_two[1]  # all of them fail
    assert big_one[1] / 800 >= 1.6 * small_one[1] / 400  # a page's share grows with N at the defaults
    assert big_two[1] * 20 <= big_one[1]
    assert big_two[1] / 800 <= 0.5


@given(st.lists(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.sampled_from(["exact", "con-w", "minhash", "revisit"]),
                                   st.sampled_from([1.0, 0.9, 0.5]), st.booleans()), max_size=12), max_size=5))
@settings(max_examples=200, deadline=None)
def test_passed_items_make_the_columns_of_their_pairs_evidence(parts):
    """The items gathered as columns, sorted once (_PassedItems.columns), give the edges the
    evidence dict gives (edge_columns of by_pair): the pairs sorted, each pair's items in the
    order they came, whatever the parts they came in (an item object given to many pairs too)."""
    from pagetwin.match import _PassedItems, edge_columns

    passed, shared = _PassedItems(), Evidence("minhash", 0.75, True, {"jaccard": 0.75})
    for part in parts:
        pairs = [(min(a, b), max(a, b)) for a, b, *_ in part]
        items = [shared if algo == "minhash" and ok else Evidence(algo, score, ok, {"kind": "partial"} if ok else {}) for _, _, algo, score, ok in part]
        passed.add(np.array([a for a, _ in pairs], dtype=np.int64), np.array([b for _, b in pairs], dtype=np.int64), items)
    assert passed.columns() == edge_columns(passed.by_pair())
    with mock.patch.object(match_kernels, "_edges", None):  # the Python reference of the kernel
        assert passed.columns() == edge_columns(passed.by_pair())
    order = [(min(a, b), max(a, b)) for part in parts for a, b, *_ in part]
    assert list(passed.by_pair()) == list(dict.fromkeys(order))


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=30), st.sampled_from([0, 1 << 31, 1 << 32, 1 << 40]))
@settings(max_examples=200, deadline=None)
def test_pair_order_is_the_stable_lexsort_of_the_pairs(pairs, offset):
    """_pair_order (one 64-bit key for 32-bit pids) is np.lexsort's order, equal pairs in the
    order they came, whatever the pids' size."""
    first = np.array([a + offset for a, _ in pairs], dtype=np.int64)
    second = np.array([b + offset for _, b in pairs], dtype=np.int64)
    assert match_kernels._pair_order(first, second).tolist() == np.lexsort((second, first)).tolist()
