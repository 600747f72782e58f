"""The shared hashing of the text fingerprints: the values every index stores must not move, so
each is checked against a plain re-statement of its definition."""

import numpy as np
import xxhash
from hypothesis import given, settings, strategies as st

from pagetwin.fingerprints.chunks import chunk_hashes
from pagetwin.fingerprints.hashing import GOLDEN, TokenHasher, mix64, name_hash, token_hashes, window_hashes
from pagetwin.fingerprints.lsh import shingle_hashes

MASK = (1 << 64) - 1


def splitmix_final(x: int) -> int:
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def word(t: str) -> int:
    return xxhash.xxh3_64_intdigest(t.encode("utf-8", "surrogatepass"))


_WORDS = st.lists(st.sampled_from(["a", "b", "c", "dé", "中", "x y"]), max_size=30)


@given(st.lists(st.integers(0, MASK), max_size=20))
def test_mix64_is_the_splitmix64_finaliser(values):
    got = mix64(np.array(values, dtype=np.uint64)).tolist()
    assert got == [splitmix_final(v) for v in values]


@given(_WORDS, st.integers(1, 6))
def test_chunk_hashes_fold_the_window_then_mix_once(tokens, k):
    expected = []
    for i in range(len(tokens) - k + 1):
        acc = 0
        for j, t in enumerate(tokens[i : i + k]):
            acc = (acc * int(GOLDEN) + word(t)) & MASK if j else word(t)
        expected.append(splitmix_final(acc))
    assert chunk_hashes(tokens, k).tolist() == expected


@given(_WORDS, st.integers(1, 6))
def test_shingle_hashes_mix_after_every_step_and_keep_a_short_text(tokens, size):
    width = min(size, len(tokens))
    expected = []
    for i in range(len(tokens) - width + 1 if tokens else 0):
        acc = word(tokens[i])
        for t in tokens[i + 1 : i + width]:
            acc = splitmix_final((acc * int(GOLDEN) + word(t)) & MASK)
        expected.append(acc)
    assert shingle_hashes(token_hashes(tokens), size).tolist() == expected


def test_window_hashes_are_order_sensitive_and_empty_without_a_window():
    h = token_hashes(["a", "b", "a"])
    for mixed in (True, False):
        ab, ba = window_hashes(h, 2, mixed).tolist()
        assert ab != ba
        assert len(window_hashes(h, 4, mixed)) == 0 and len(window_hashes(h, 0, mixed)) == 0


@settings(max_examples=200, deadline=None)
@given(pages=st.lists(st.lists(st.sampled_from(["a", "b", "кошка", "中文", "🎉", "\ud800", ""]) | st.text(max_size=4), max_size=30), max_size=6))
def test_token_hasher_gives_token_hashes_values_page_after_page(pages):
    hasher = TokenHasher(max_tokens=8)  # small: the cache is cleared between and within pages
    for tokens in pages:
        got = hasher(tokens)
        assert got.dtype == np.uint64
        assert got.tolist() == token_hashes(tokens).tolist()


def test_build_algorithms_share_one_hasher():
    from pagetwin.config import Settings
    from pagetwin.fingerprints import build_algorithms

    cfg = Settings()
    cfg.match.algorithms = ["minhash", "simhash", "chunks"]
    algorithms = build_algorithms(cfg)
    assert len({id(a.hasher) for a in algorithms}) == 1


def test_name_hash_keeps_the_join_keys_of_earlier_runs():
    """Sites and image URLs are shuffled, joined and sliced (models.parquet) by this key: it
    stays xxh64 of the UTF-8, lone surrogates passed through, as the runners wrote it."""
    assert name_hash("example.org") == 0xAF2E84D72D027535
    assert name_hash("http://b\u00fccher.example/\udc80.png") == 0x12837896E048A05C
