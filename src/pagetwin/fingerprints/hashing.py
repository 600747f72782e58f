"""The 64-bit hashing every text fingerprint shares, written once: word hashes, the splitmix64
finaliser and the rolling hash of k-word windows. Pure functions, numpy-vectorised.

``TokenHasher`` and ``window_hashes`` run natively (``pagetwin.fingerprints._sketch``, built by
``pip install``) when it is built; ``TokenHasher.reference`` and ``window_hashes_reference``
are their numpy references (same values; tests/fingerprints/test_sketch.py).

Every hash here is deterministic across processes and machines (xxh3 of UTF-8 bytes and fixed
64-bit mixing), never Python's hash(): the index stores them and compares them across runs.
"""

from __future__ import annotations

import logging
from functools import cache

import numpy as np
import xxhash

log = logging.getLogger(__name__)
_SKETCH_MISSING = ""  # why the native module could not be imported

try:
    from pagetwin.fingerprints import _sketch
except ImportError as exc:  # not compiled (a source checkout without `pip install -e .`)
    _sketch = None
    _SKETCH_MISSING = str(exc)

_U64 = np.uint64
# splitmix64 finaliser constants (Steele, Lea and Flood 2014): a bijective, well-mixing map of
# uint64, used to combine word hashes into window hashes and block values into table keys.
_M1 = _U64(0xBF58476D1CE4E5B9)
_M2 = _U64(0x94D049BB133111EB)
GOLDEN = _U64(0x9E3779B97F4A7C15)  # odd: multiplication by it is a bijection mod 2^64


def name_hash(name: str) -> int:
    """A site's or an image URL's xxh64 of its UTF-8, lone surrogates passed through: the key the
    Spark runner's modules shuffle, join and slice names by (models.parquet's slices too), so each
    of them must use this one. Not a fingerprint: here because no runner may import another."""
    return xxhash.xxh64_intdigest(name.encode("utf-8", "surrogatepass"))


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser applied elementwise to a uint64 array (wrapping arithmetic): every
    output bit depends on every input bit."""
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> _U64(30))) * _M1
        x = (x ^ (x >> _U64(27))) * _M2
        return x ^ (x >> _U64(31))


def token_hash(token: str) -> int:
    """xxh3-64 of one token's UTF-8 bytes (lone surrogates kept as they are)."""
    return xxhash.xxh3_64_intdigest(token.encode("utf-8", "surrogatepass"))


def token_hashes(tokens: list[str]) -> np.ndarray:
    """xxh3-64 of each token's UTF-8 bytes, as uint64, in order. Each distinct token is hashed once."""
    seen: dict[str, int] = {}
    out = np.empty(len(tokens), dtype=np.uint64)
    for i, tok in enumerate(tokens):
        h = seen.get(tok)
        if h is None:
            h = seen[tok] = token_hash(tok)
        out[i] = h
    return out


TOKEN_CACHE = 200_000  # token hashes kept from page to page (cleared when full: ~20 MB)


class TokenHasher:
    """``token_hashes`` with the hashes of tokens seen on earlier pages kept: the same words
    recur on every page, and xxh3 through Python costs more than a dict lookup. One instance
    per process is shared by every algorithm that hashes tokens (``build_algorithms``), so a
    token is hashed once for all of them. Same values as ``token_hashes``."""

    def __init__(self, max_tokens: int = TOKEN_CACHE) -> None:
        self.max_tokens = max_tokens
        self._cache: dict[str, int] = {}

    def __call__(self, tokens: list[str]) -> np.ndarray:
        # The word scan's hashes of a page's tokens (text.analyze.TokenList), when it gave them
        # all: token_hash's values, kept with each known word there
        carried = getattr(tokens, "hashes", None)
        if carried is not None and len(carried) == len(tokens):
            return carried
        if _sketch is None:
            _warn_reference()
            return self.reference(tokens)
        return _sketch.token_hashes(tokens if isinstance(tokens, list) else list(tokens), self._cache, self.max_tokens, token_hash)

    def reference(self, tokens: list[str]) -> np.ndarray:
        """``__call__`` in Python and numpy: the reference of the native lookup."""
        cache = self._cache
        new = [t for t in set(tokens) if t not in cache]
        if len(cache) + len(new) > self.max_tokens:
            cache.clear()
            new = list(set(tokens))
        for tok in new:
            cache[tok] = token_hash(tok)
        return np.fromiter(map(cache.__getitem__, tokens), dtype=np.uint64, count=len(tokens))


def window_hashes(words: np.ndarray, k: int, mix_each_step: bool) -> np.ndarray:
    """``window_hashes_reference``, natively when the kernels are built (one pass, no temporaries)."""
    if _sketch is None:
        _warn_reference()
        return window_hashes_reference(words, k, mix_each_step)
    return _sketch.window_hashes(np.ascontiguousarray(words, dtype=np.uint64), k, mix_each_step)


def window_hashes_reference(words: np.ndarray, k: int, mix_each_step: bool) -> np.ndarray:
    """A 64-bit hash of every k-word window of ``words`` (uint64 word hashes), in order, for all
    windows at once: the window's words folded left to right as ``acc * GOLDEN + next`` (mod
    2^64; order-sensitive, "a b" != "b a"), the fold finalised by mix64 after every step
    (``mix_each_step``: the shingles of MinHash and SimHash; a one-word window is then the word's
    hash itself) or once at the end (the chunks of copy detection). Empty when there is no
    whole window. The two variants give different values; each algorithm's index depends on its
    own, so both stay."""
    n = len(words) - k + 1
    if n <= 0 or k <= 0:
        return np.zeros(0, dtype=np.uint64)
    words = np.asarray(words, dtype=np.uint64)
    with np.errstate(over="ignore"):
        acc = words[:n].copy()
        for j in range(1, k):
            acc = acc * GOLDEN + words[j : j + n]
            if mix_each_step:
                acc = mix64(acc)
        return acc if mix_each_step else mix64(acc)


@cache
def _warn_reference() -> None:
    """Say once per process that the numpy references run."""
    log.warning(
        "pagetwin's native fingerprint kernels are not built (%s): shingles and MinHash run in "
        "numpy, slower; build them with `pip install -e .` (needs a C compiler)",
        _SKETCH_MISSING,
    )
