"""The native pass-1 statistics (html/_stats.pyx) against their reference,
``templates.blocks_stats_reference``: the same PageStats on generated and real pages."""

import random

import numpy as np

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.config import ExtractSettings
from pagetwin.html import templates
from pagetwin.html.blocks import Blocks
from pagetwin.html.noise import parse_page
from pagetwin.html.parse import parse_html
from tests.fixtures.sites import paragraph

pytestmark = pytest.mark.skipif(templates._native_page_stats is None, reason="html._stats is not built")

_ARRAYS = ("hashes", "slots", "slot_kept", "content", "content_size")


def _same(a, b) -> None:
    for name in _ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name
    assert list(a.snippets.items()) == list(b.snippets.items())


@st.composite
def _blocks(draw):
    n = draw(st.integers(0, 40))
    keys = draw(st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=6))  # few: blocks share them
    key = st.sampled_from(keys)
    size = st.one_of(st.integers(0, 6), st.integers(0, 1 << 30))
    text = st.sampled_from(["", "", "a", "Menu", "x" * 100, "Ünïcode text of a block"])
    parent = [draw(st.integers(-1, b - 1)) if b else -1 for b in range(n)]
    blocks = Blocks(
        tag=["p"] * n, parent=parent, sig=draw(st.lists(key, min_size=n, max_size=n)),
        hash=draw(st.lists(key, min_size=n, max_size=n)), text=draw(st.lists(text, min_size=n, max_size=n)),
        link=[0] * n, size=draw(st.lists(size, min_size=n, max_size=n)),
        content=draw(st.lists(st.booleans(), min_size=n, max_size=n)),
    )  # fmt: skip
    keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return blocks, keep


@settings(max_examples=400, deadline=None)
@given(case=_blocks(), cap=st.sampled_from([0, 1, 3, 200]))
def test_property_native_stats_are_the_references(case, cap):
    blocks, keep = case
    settings_ = ExtractSettings()
    old = templates._SNIPPETS_PER_PAGE
    templates._SNIPPETS_PER_PAGE = cap
    try:
        _same(templates.blocks_stats(blocks, settings_, (keep, keep)), templates.blocks_stats_reference(blocks, settings_, (keep, keep)))
    finally:
        templates._SNIPPETS_PER_PAGE = old


def test_native_stats_of_real_pages_are_the_references():
    pages = [
        "<html><body><nav><a href=/>Home</a><a href=/n>News</a></nav><article><h1>T</h1>"
        + "".join(f"<p>{paragraph(random.Random(i))}</p>" for i in range(k))
        + "</article><footer><div><span></span><p>Contact us</p></div></footer></body></html>"
        for k in (0, 1, 5, 30)
    ]
    settings_ = ExtractSettings()
    for html in pages:
        parsed = parse_page(parse_html(html))
        _same(templates.blocks_stats(parsed.blocks, settings_, parsed.page_level()),
              templates.blocks_stats_reference(parsed.blocks, settings_, parsed.page_level()))  # fmt: skip


def test_columns_the_kernel_does_not_take_go_to_the_reference():
    settings_ = ExtractSettings()
    blocks = Blocks(tag=["p", "p"], parent=[-1, 0], sig=[1, 2], hash=[3, 1 << 64], text=["a", "b"], link=[0, 0], size=[1, 1],
                    content=[True, True])  # fmt: skip
    with pytest.raises(OverflowError):
        templates._native_page_stats(blocks.hash, blocks.sig, blocks.size, blocks.content, [True, True], blocks.text, blocks.parent, 200)
    with pytest.raises(OverflowError):  # as the reference does, which then decides
        templates.blocks_stats(blocks, settings_, ([True, True], [True, True]))
    short = Blocks(tag=["p"], parent=[-1], sig=[1], hash=[3], text=["a"], link=[0], size=[1], content=[True])
    with pytest.raises(ValueError):
        templates._native_page_stats(short.hash, short.sig, short.size, [], [True], short.text, short.parent, 200)
    _same(templates.blocks_stats(short, settings_, ([True], [True])), templates.blocks_stats_reference(short, settings_, ([True], [True])))


# -- pass 1's folds and pass 2's look-ups (fold_runs, lookup_columns, slot_decisions, in_set) --

_key = st.one_of(st.integers(0, 12), st.integers(0, (1 << 64) - 1))  # few keys (repeats), and any uint64
_weight = st.one_of(st.floats(0, 1, width=32), st.floats(width=32, allow_nan=False), st.just(-0.0))


@st.composite
def _counts(draw):
    keys = np.array(sorted(draw(st.sets(_key, max_size=30))), dtype=np.uint64)
    pages = np.array(draw(st.lists(st.integers(0, 1 << 20), min_size=len(keys), max_size=len(keys))), dtype=np.int32)
    weights = np.array(draw(st.lists(_weight, min_size=len(keys), max_size=len(keys))), dtype=np.float32)
    runs = []
    for _ in range(draw(st.integers(0, 6))):
        run = np.array(draw(st.lists(_key, max_size=20)), dtype=np.uint64)
        w = None if draw(st.booleans()) else np.array(draw(st.lists(_weight, min_size=len(run), max_size=len(run))), dtype=np.float32)
        runs.append((run, draw(st.integers(0, 1)), w))
    return keys, pages, weights, runs


@settings(max_examples=400, deadline=None)
@given(case=_counts())
def test_property_native_fold_is_the_references(case):
    got = templates._native_fold_runs(*case)
    want = templates.fold_runs_reference(*case)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # weights summed past float32: inf both ways
@settings(max_examples=300, deadline=None)
@given(case=_counts(), more=st.integers(0, 70), data=st.data())
def test_property_native_fold_of_sorted_runs_is_the_references(case, more, data):
    """Runs that come sorted (a page's keys: the fold merges them instead of sorting), with
    repeated keys, empty runs, and up to 76 of them (odd and even counts of merges)."""
    keys, pages, weights, runs = case
    runs = runs + [(np.array(data.draw(st.lists(_key, max_size=8)), dtype=np.uint64), 1, None) for _ in range(more)]
    runs = [(np.sort(k), n, None if w is None else w[np.argsort(k, kind="stable")]) for k, n, w in runs]
    got = templates._native_fold_runs(keys, pages, weights, runs)
    want = templates.fold_runs_reference(keys, pages, weights, runs)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


@given(values=st.lists(st.one_of(st.integers(0, 5), st.integers(-3, 1 << 31 - 1)), min_size=1, max_size=60), data=st.data())
def test_property_kth_smallest_is_numpys_partition(values, data):
    array = np.array(values, dtype=np.int32)
    k = data.draw(st.integers(0, len(values) - 1))
    assert templates.kth_smallest(array, k) == int(np.partition(array, k)[k])


def test_fold_takes_what_the_kernel_does_not_to_the_reference():
    keys, pages, weights = np.array([3, 1], dtype=np.uint64), np.array([1, 1], dtype=np.int32), np.zeros(2, np.float32)
    runs = [(np.array([1, 2], dtype=np.uint64), 1, np.array([0.5, 0.25]))]  # float64 weights, unsorted keys
    with pytest.raises(ValueError):
        templates._native_fold_runs(keys, pages, weights, [])
    with pytest.raises(ValueError):
        templates._native_fold_runs(np.sort(keys), pages, weights, runs)
    got = templates.fold_runs(np.sort(keys), pages, weights, runs)
    want = templates.fold_runs_reference(np.sort(keys), pages, weights, runs)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(got, want))
    assert got[0].tolist() == [1, 2, 3] and got[1].tolist() == [2, 1, 1] and got[2].tolist() == [0.5, 0.25, 0.0]


@settings(max_examples=300, deadline=None)
@given(case=_counts(), query=st.lists(_key, max_size=30), as_list=st.booleans(), two=st.booleans())
def test_property_native_lookup_is_the_references(case, query, as_list, two):
    from pagetwin.html.templates import SiteModel

    keys, pages, weights, _ = case
    q = query if as_list else np.array(query, dtype=np.uint64)
    columns = (pages, weights) if two else (pages,)
    got = templates._native_lookup_columns(keys, q, *columns)
    want = SiteModel._lookup_columns_reference(keys, q, *columns)
    assert len(got) == len(want)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    with pytest.raises(OverflowError):  # as numpy's conversion of the list
        SiteModel._lookup_columns(keys, [1 << 64], pages)


@settings(max_examples=300, deadline=None)
@given(case=_counts(), site_pages=st.integers(2, 40), data=st.data())
def test_property_native_slot_decisions_are_the_references(case, site_pages, data):
    from pagetwin.html.templates import SiteModel, _SiteCounts

    keys, pages, kept, _ = case
    # kept shares as the counts hold them: a sum of shares in [0, 1] per page, at most the pages
    kept = (np.array(data.draw(st.lists(st.floats(0, 1), min_size=len(keys), max_size=len(keys)))) * pages).astype(np.float32)
    model = SiteModel(_SiteCounts(pages=site_pages, slot_keys=keys, slot_pages=pages, slot_kept=kept), ExtractSettings(
        min_slot_share=data.draw(st.sampled_from([0.0, 0.1, 0.5]))))  # fmt: skip
    n = data.draw(st.integers(0, 30))
    sig = st.one_of(st.sampled_from(keys.tolist()), _key) if len(keys) else _key
    blocks = Blocks(tag=["p"] * n, parent=[-1] * n, sig=data.draw(st.lists(sig, min_size=n, max_size=n)), hash=[0] * n,
                    text=data.draw(st.lists(st.sampled_from(["", "text"]), min_size=n, max_size=n)), link=[0] * n,
                    size=[1] * n, content=[True] * n)  # fmt: skip
    flags = [data.draw(st.lists(st.booleans(), min_size=n, max_size=n)) for _ in range(3)]
    got = model._with_slot_priors(blocks, *flags, model.settings)
    want = model._with_slot_priors_reference(blocks, *flags, model.settings)
    assert got == want


@given(keys=st.lists(_key, max_size=30), members=st.sets(_key, max_size=30))
def test_property_native_in_set_is_the_references(keys, members):
    array = np.array(keys, dtype=np.uint64)
    got, want = templates._native_in_set(array, members), templates._in_set_reference(array, members)
    assert got.dtype == want.dtype == bool and got.tolist() == want.tolist()


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(0, 3000), spread=st.sampled_from(["even", "clustered", "small"]))
def test_property_native_lookup_finds_every_place_in_large_counts(seed, m, spread):
    """The kernel's search starts from a guess in proportion to the key (site counts are
    hashes, spread evenly): keys spread otherwise are found all the same."""
    from pagetwin.html.templates import SiteModel

    rng = np.random.default_rng(seed)
    if spread == "even":
        raw = rng.integers(0, 2**64 - 1, size=m, dtype=np.uint64, endpoint=True)
    elif spread == "clustered":  # most keys in a narrow band, a few anywhere
        raw = np.concatenate([rng.integers(2**63, 2**63 + 5000, size=m, dtype=np.uint64),
                              rng.integers(0, 2**64 - 1, size=m // 50, dtype=np.uint64, endpoint=True)])  # fmt: skip
    else:
        raw = rng.integers(0, 3 * m + 1, size=m, dtype=np.uint64)
    keys = np.unique(raw)
    pages = rng.integers(1, 1000, size=len(keys), dtype=np.int32)
    # keys there, their neighbours (mostly not there), the ends of uint64
    query = np.concatenate([keys, keys + np.uint64(1), keys - np.uint64(1), np.array([0, 2**64 - 1], dtype=np.uint64)])
    got = templates._native_lookup_columns(keys, query, pages)[0]
    assert got.tobytes() == SiteModel._lookup_columns_reference(keys, query, pages)[0].tobytes()


@st.composite
def _over_blocks(draw):
    n = draw(st.integers(1, 40))
    hashes = draw(st.lists(st.one_of(st.sampled_from([5, 7, 1 << 63]), _key), min_size=n, max_size=n))  # few: repeats
    # parents before the block mostly, after it or out of the page sometimes (then IndexError, as the reference)
    parent = [draw(st.one_of(st.integers(-2, b - 1), st.integers(-1, n))) if b else -1 for b in range(n)]
    over = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    over[draw(st.integers(0, n - 1))] = True
    blocks = Blocks(tag=["p"] * n, parent=parent, sig=[0] * n, hash=hashes, text=[""] * n, link=[0] * n, size=[1] * n,
                    content=[True] * n)  # fmt: skip
    return blocks, over


@settings(max_examples=400, deadline=None)
@given(case=_over_blocks())
def test_property_native_template_flags_are_the_references(case):
    blocks, over = case
    first = int(np.flatnonzero(over)[0])
    try:
        want = templates._template_flags_reference(over, blocks, first)
    except IndexError:
        with pytest.raises(IndexError):
            templates._native_template_flags(over.view(np.uint8), blocks.hash, blocks.parent, first, templates.ITEM_REPEATS)
        return
    got = templates._native_template_flags(over.view(np.uint8), blocks.hash, blocks.parent, first, templates.ITEM_REPEATS)
    assert got == want and all(type(t) is bool for t in got)


def test_template_flags_take_what_the_kernel_does_not_to_the_reference():
    over = np.array([True, True])
    blocks = Blocks(tag=["p", "p"], parent=[-1, 0], sig=[0, 0], hash=[3, 1 << 64], text=["", ""], link=[0, 0], size=[1, 1],
                    content=[True, True])  # fmt: skip
    with pytest.raises(OverflowError):
        templates._native_template_flags(over.view(np.uint8), blocks.hash, blocks.parent, 0, 3)
    assert templates._template_flags(over, blocks, 0) == templates._template_flags_reference(over, blocks, 0) == [True, True]


@settings(max_examples=300, deadline=None)
@given(hash_case=_counts(), slot_case=_counts(), query=st.lists(_key, max_size=30), at_least=st.integers(0, 3), data=st.data())
def test_property_native_keys_on_pages_are_the_references(hash_case, slot_case, query, at_least, data):
    from pagetwin.html.templates import _SiteCounts

    (hk, hp, _, _), (sk, sp, _, _) = hash_case, slot_case
    small = st.integers(0, 4)  # pages near at_least
    hp = np.array(data.draw(st.lists(small, min_size=len(hk), max_size=len(hk))), dtype=np.int32) if data.draw(st.booleans()) else hp
    # keys that are there (in either column), and keys that are not
    query = query + data.draw(st.lists(st.sampled_from(hk.tolist() + sk.tolist() or [0]), max_size=10))
    counts = _SiteCounts(hash_keys=hk, hash_pages=hp, slot_keys=sk, slot_pages=sp)
    got = templates._native_keys_on_pages(hk, hp, sk, sp, query, at_least)
    assert got == templates._keys_on_pages_reference(counts, query, at_least)
    assert templates._keys_on_pages(counts, query, at_least) == got


@st.composite
def _site_counts(draw):
    from pagetwin.html.templates import _SiteCounts

    hk, hp, hc, _ = draw(_counts())
    sk, sp, kept, _ = draw(_counts())
    if draw(st.booleans()):
        hc = np.zeros(0, np.float32)  # a model stored before the content shares
    return _SiteCounts(pages=draw(st.integers(1, 50)), hash_keys=hk, hash_pages=hp, hash_content=hc, slot_keys=sk,
                       slot_pages=sp, slot_kept=np.abs(kept))  # fmt: skip


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # weights summed past float32: inf both ways
@settings(max_examples=300, deadline=None)
@given(a=_site_counts(), b=_site_counts())
def test_property_merge_folds_as_it_did_with_fold(a, b):
    """SiteTemplates.merge adds two sites' counts with fold_runs (a run of the other's keys with
    their own pages): the counts it made before with _fold, byte for byte."""
    from pagetwin.html.templates import SiteTemplates, _content_column, _fold

    left, right = SiteTemplates(ExtractSettings()), SiteTemplates(ExtractSettings())
    left.sites_["s"], right.sites_["s"] = a, b
    merged = left.merge(right).sites_["s"]
    keys, (hp, hc) = _fold(np.concatenate([a.hash_keys, b.hash_keys]), [
        np.concatenate([a.hash_pages, b.hash_pages]).astype(np.float64), np.concatenate([_content_column(a), _content_column(b)])])  # fmt: skip
    slots, (sp, sk) = _fold(np.concatenate([a.slot_keys, b.slot_keys]), [
        np.concatenate([a.slot_pages, b.slot_pages]).astype(np.float64), np.concatenate([a.slot_kept, b.slot_kept]).astype(np.float64)])  # fmt: skip
    want = (keys, hp.astype(np.int32), hc.astype(np.float32), slots, sp.astype(np.int32), sk.astype(np.float32))
    got = (merged.hash_keys, merged.hash_pages, merged.hash_content, merged.slot_keys, merged.slot_pages, merged.slot_kept)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes()


# -- pass 1's copy test and its set of pending hashes (copied, HashSet) ----------------------------

_size = st.one_of(st.integers(0, 5000).map(float), st.floats(0, 1 << 25, width=32), st.sampled_from([0.5, -1.0, -0.0, 1e30]))


@settings(max_examples=400, deadline=None)
@given(case=_counts(), content=st.sets(_key, max_size=30), pending=st.sets(_key, max_size=20), native_set=st.booleans(),
       pages=st.integers(0, 3), data=st.data())  # fmt: skip
def test_property_native_copy_test_is_the_references(case, content, pending, native_set, pages, data):
    """SiteTemplates._is_copy (html._stats.copied, or the reference for the sizes it does not
    take) says what _is_copy_reference says, with the pending hashes in a HashSet or a set."""
    from pagetwin.html.templates import PageStats, SiteTemplates, _SiteCounts

    keys, counted, _, _ = case
    content = np.array(sorted(content), dtype=np.uint64)
    sizes = np.array(data.draw(st.lists(_size, min_size=len(content), max_size=len(content))), dtype=np.float32)
    members = templates._NativeHashSet(np.array(sorted(pending), dtype=np.uint64)) if native_set else set(pending)
    counts = _SiteCounts(pages=pages, hash_keys=keys, hash_pages=counted, pending_hashes=members)
    stats = PageStats(content, content, sizes, {}, content, sizes)
    assert SiteTemplates._is_copy(counts, stats) == SiteTemplates._is_copy_reference(counts, stats)


def test_copy_test_takes_what_the_kernel_does_not_to_the_reference():
    from pagetwin.html.templates import PageStats, SiteTemplates, _SiteCounts

    content = np.array([1, 2], dtype=np.uint64)
    counts = _SiteCounts(pages=1, hash_keys=np.array([1], np.uint64), hash_pages=np.array([1], np.int32))
    for sizes in ([4.5, 1.0], [float(1 << 24), 1.0], [1 << 23, 1 << 23]):  # no whole numbers; sums past float32's
        sizes = np.array(sizes, dtype=np.float32)
        with pytest.raises(ValueError):
            templates._native_copied(content, sizes, counts.hash_keys, counts.hash_pages, set(), templates.COPY_SHARE)
        stats = PageStats(content, content, sizes, {}, content, sizes)
        assert SiteTemplates._is_copy(counts, stats) == SiteTemplates._is_copy_reference(counts, stats)


@given(batches=st.lists(st.lists(_key, max_size=40), max_size=6), query=st.lists(_key, max_size=30))
def test_property_hash_set_is_a_set_of_ints(batches, query):
    import pickle

    native, python = templates._key_set(), set()
    assert isinstance(native, templates._NativeHashSet)
    for batch in batches:
        array = np.array(batch, dtype=np.uint64)
        templates._add_keys(native, array)
        templates._add_keys(python, array)
        assert len(native) == len(python) and native == python
    array = np.array(query, dtype=np.uint64)
    assert templates._in_set(array, native).tolist() == templates._in_set_reference(array, python).tolist()
    assert [k in native for k in query] == [k in python for k in query]
    assert native.keys().tolist() == sorted(python)
    again = pickle.loads(pickle.dumps(native))
    assert again == native and sorted(again.keys().tolist()) == sorted(python)
