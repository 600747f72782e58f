"""MinHash (Broder 1997) on word shingles, with LSH banding; numpy-vectorised.

Features: the page's tokens (Doc.tokens, or only its content words) cut into word shingles of
``settings.shingle`` words (with ``settings.multiset`` the i-th repeat of a shingle is an
element of its own, so the estimate is the weighted Jaccard of the shingle counts); each
shingle hashed once to 64 bits (xxh3 of each distinct token,
combined per window with a splitmix64 mix, see lsh.shingle_hashes); the distinct shingle hashes,
reduced to 32 bits x, go through ``num_perm`` hash functions of the multiply-add-shift family
h_i(x) = ((a_i x + b_i) mod 2^64) div 2^32 (Dietzfelbinger 1996; a_i, b_i uniform 64-bit from
a seeded PCG64). It is 2-independent like the textbook (a x + b) mod (2^61 - 1), and with plain
wrapping uint64 arithmetic it is several times faster in numpy (measured: bench/RESULTS.md). The
signature keeps, per function, the minimum hash value (32 bits). P(signatures agree at i) is the
Jaccard similarity of the shingle sets, up to 32-bit collisions (probability ~ 2^-32 per row).

Candidates: the signature is cut into ``bands`` bands of ``rows`` rows; each band is a key.
bands and rows come from the threshold (lsh.lsh_params: bands * rows <= num_perm minimising
fp_weight * FP area + fn_weight * FN area under the S-curve). Verification: the estimated
Jaccard (share of agreeing rows) >= threshold: a duplicate.

``min_bands`` m > 1: a pair is a candidate only when it shares m bands, P = P(Bin(bands,
J^rows) >= m), with bands x rows chosen for that curve (47 x 2 for m = 2 at the defaults). Two
unrelated long pages share a few per cent of their word pairs ("of the", digits): at J 0.02
one band of 28 x 2 makes them a candidate 1.1% of the time, two of 47 x 2 0.017%; at J 0.25
the two rules find 84% and 80%. verify() counts the shared bands from the signatures and fails
a pair below m, so every path that proposes pairs (match, query, Spark) gives the same edges;
match.distinct_pair_arrays drops such pairs before they are verified.

Containment: the features also hold the number of distinct shingles n (one more uint32 after
the signature), so a candidate pair below the threshold gets the estimated share of the smaller
page's shingles found in the larger, J / (1 + J) * (n_a + n_b) / min(n_a, n_b). At
``containment`` or more it is a ``partial`` edge (a teaser of an article, an article inside a
longer page), which clustering merges only with ``match.merge_partial``. Only pairs the LSH
bands propose are asked, so a small page inside a much larger one (Jaccard far below the
threshold) is found by the ``chunks`` algorithm, not here.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import xxhash

from pagetwin.config import MinHashSettings
from pagetwin.fingerprints import hashing
from pagetwin.fingerprints.base import Algorithm, register
from pagetwin.fingerprints.lsh import lsh_params, multiset_hashes, shingle_hashes
from pagetwin.model import Doc, Evidence

_CHUNK = 4096  # shingles per block of the (num_perm x shingles) matrix: bounds memory
_SHIFT = np.uint64(32)
_TWO_63, _TWO_64 = 1 << 63, 1 << 64  # an unsigned 64-bit key above 2**63 - 1 is read as signed


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) of the num_perm hash functions: uniform 64-bit integers from a seeded PCG64 (the
    same in every process), as uint64 column vectors."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 64, size=num_perm, dtype=np.uint64, endpoint=False)
    b = rng.integers(0, 1 << 64, size=num_perm, dtype=np.uint64, endpoint=False)
    return a.reshape(-1, 1), b.reshape(-1, 1)


def universal_hash(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """h(x) = ((a * x + b) mod 2^64) div 2^32 for 32-bit x: Dietzfelbinger's multiply-add-shift
    family, 2-independent like (a x + b) mod p, in two wrapping uint64 operations."""
    with np.errstate(over="ignore"):
        return (a * x + b) >> _SHIFT


def minhash_signature_reference(shingles: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """uint32 signature (len(a)) of a set given by 64-bit element hashes (repeats allowed), in
    numpy: the distinct high halves x of the hashes, through all the permutations at once in
    blocks of ``_CHUNK`` shingles."""
    x = np.unique(np.asarray(shingles, dtype=np.uint64) >> _SHIFT)
    sig = np.full(a.shape[0], np.iinfo(np.uint64).max, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for start in range(0, len(x), _CHUNK):
            # min of the full 64-bit a x + b, then its high half = min of h (ties are equal in h)
            np.minimum(sig, (a * x[start : start + _CHUNK] + b).min(axis=1), out=sig)
    return (sig >> _SHIFT).astype(np.uint32)


def minhash_features(shingles: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The signature (``minhash_signature_reference``) with the number of distinct shingles (at
    most 2^32 - 1) after it, as one uint32 array: natively when the kernels are built
    (``_sketch.minhash_features``: the distinct shingles found once for both, then through the
    permutations with no (num_perm x shingles) matrix), else in numpy."""
    sketch = hashing._sketch
    if sketch is None:
        return minhash_features_reference(shingles, a, b)
    return sketch.minhash_features(np.ascontiguousarray(shingles, dtype=np.uint64), a.ravel(), b.ravel())


def minhash_features_reference(shingles: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``minhash_features`` in numpy."""
    size = min(len(np.unique(np.asarray(shingles, dtype=np.uint64))), 0xFFFFFFFF)
    return np.append(minhash_signature_reference(shingles, a, b), np.uint32(size))


def estimate_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) != len(b):
        raise ValueError(f"signatures of different lengths ({len(a)} != {len(b)})")
    return float(np.count_nonzero(a == b)) / len(a) if len(a) else 0.0


@register
class MinHash(Algorithm):
    name = "minhash"

    settings_class = MinHashSettings

    def __init__(self, settings: MinHashSettings | None = None) -> None:
        super().__init__(settings)
        s = self.settings
        self._a, self._b = permutations(s.num_perm, s.seed)
        self.min_shared_keys = int(s.min_bands)
        self.bands, self.rows = lsh_params(
            float(s.threshold), int(s.num_perm), float(s.fp_weight), float(s.fn_weight), self.min_shared_keys
        )

    def tokens(self, doc: Doc) -> list[str]:
        """The words the shingles are cut from (the page's own list: read, never changed)."""
        return doc.content_tokens() if self.settings.content_only else doc.tokens

    def shingles(self, doc: Doc, tokens: list[str] | None = None) -> np.ndarray:
        """64-bit hashes of the elements whose set MinHash sketches: the page's shingles, with
        repeats made distinct when ``settings.multiset`` (weighted Jaccard). ``tokens``: the
        page's ``self.tokens(doc)`` when the caller has them already."""
        tokens = self.tokens(doc) if tokens is None else tokens
        h = shingle_hashes(self.hasher(tokens), self.settings.shingle)
        return multiset_hashes(h) if self.settings.multiset else h

    def features(self, doc: Doc) -> np.ndarray | None:
        """The signature, then the number of distinct shingles (module docstring)."""
        tokens = self.tokens(doc)
        if len(tokens) < self.settings.min_tokens:
            return None
        return minhash_features(self.shingles(doc, tokens), self._a, self._b)

    def keys(self, features: np.ndarray) -> Iterable[int]:
        """A key a band: xxh3 of the band's rows (their uint32 bytes), seeded with its number.
        The bands are cut from the signature's bytes, not as arrays (a third cheaper a page)."""
        data = np.ascontiguousarray(features, dtype=np.uint32).tobytes()
        width = 4 * self.rows
        digest = xxhash.xxh3_64_intdigest
        # one comprehension, the seed passed by position: a third less a page than a loop
        # with a keyword argument and an append a band
        unsigned = [digest(data[at : at + width], band) for band, at in enumerate(range(0, self.bands * width, width))]
        return [v - _TWO_64 if v >= _TWO_63 else v for v in unsigned]

    def shared_bands(self, a: np.ndarray, b: np.ndarray) -> int:
        """How many LSH bands two signatures share (all the band's rows equal: equal keys)."""
        width = self.bands * self.rows
        return int(np.count_nonzero((a[:width] == b[:width]).reshape(self.bands, self.rows).all(axis=1)))

    def verify(self, a: np.ndarray, b: np.ndarray) -> Evidence:
        s = self.settings
        return self._verdict(estimate_jaccard(a[: s.num_perm], b[: s.num_perm]), a, b)

    def passing(self, features: list, first: np.ndarray, second: np.ndarray) -> list[tuple[int, Evidence]]:
        """``Algorithm.passing`` with the agreeing rows of every pair counted in numpy at once;
        the pairs that cannot pass (below the threshold, and below the containment share with
        a margin of 1e-9) are dropped there, each other pair gets ``verify``'s own verdict from
        its count (``_verdict``). Features of mixed or short lengths: one ``verify`` a pair."""
        s = self.settings
        n = int(s.num_perm)
        if not features or n <= 0 or len({len(f) for f in features}) != 1 or len(features[0]) <= n:
            return super().passing(features, first, second)
        rows = np.stack(features)
        first, second = np.asarray(first, dtype=np.intp), np.asarray(second, dtype=np.intp)
        equal = rows[first, :n] == rows[second, :n]
        agree = np.count_nonzero(equal, axis=1)
        est = agree / n
        maybe = est >= s.threshold
        if s.containment > 0:
            n_a, n_b = rows[first, n].astype(np.float64), rows[second, n].astype(np.float64)
            small = np.minimum(n_a, n_b)
            with np.errstate(divide="ignore", invalid="ignore"):
                contained = np.minimum(1.0, est / (1 + est) * (n_a + n_b) / small)
            maybe |= (small > 0) & (contained >= s.containment - 1e-9)
        shared = None
        if self.min_shared_keys > 1:  # shared_bands of every pair at once
            width = self.bands * self.rows
            shared = equal[:, :width].reshape(len(first), self.bands, self.rows).all(axis=2).sum(axis=1)
            maybe &= shared >= self.min_shared_keys
        out = []
        at = np.flatnonzero(maybe)
        counts = agree[at].tolist()
        bands = [None] * len(at) if shared is None else shared[at].tolist()
        threshold, name = s.threshold, self.name
        # A verdict above the threshold follows from the pair's count and shared bands alone:
        # one Evidence for all the pairs of equal ones (a few hundred distinct among
        # corpus-10000-shared's 233,000), read only, like every Evidence.
        above: dict[tuple[int, int | None], Evidence] = {}
        for i, count, band in zip(at.tolist(), counts, bands):
            # estimate_jaccard's value: the count of agreeing rows over num_perm, in Python floats
            est = float(count) / n
            if est >= threshold:  # _verdict's first case, without the pair's rows (most pairs)
                result = above.get((count, band))
                if result is None:
                    result = above[(count, band)] = Evidence(name, est, True, self._detail(est, band))
                out.append((i, result))
                continue
            result = self._verdict(est, rows[first[i]], rows[second[i]])
            if result.passed:
                out.append((i, result))
        return out

    def _detail(self, est: float, shared: int | None) -> dict:
        """A verdict's detail: the estimate and the banding (and the bands shared, with min_bands > 1)."""
        detail: dict = {"jaccard": round(est, 4), "bands": self.bands, "rows": self.rows}
        if shared is not None:
            detail["bands_shared"] = shared
        return detail

    def _verdict(self, est: float, a: np.ndarray, b: np.ndarray) -> Evidence:
        """``verify``'s evidence of a pair whose estimated Jaccard is ``est``."""
        s = self.settings
        shared = self.shared_bands(a, b) if self.min_shared_keys > 1 else None
        detail = self._detail(est, shared)
        if shared is not None and shared < self.min_shared_keys:
            return Evidence(self.name, est, False, detail)
        if est >= s.threshold:
            return Evidence(self.name, est, True, detail)
        n_a, n_b = int(a[s.num_perm]), int(b[s.num_perm])
        if s.containment > 0 and min(n_a, n_b) > 0:
            contained = min(1.0, est / (1 + est) * (n_a + n_b) / min(n_a, n_b))
            detail["containment"] = round(contained, 4)
            if contained >= s.containment:
                detail["kind"] = "partial"
                detail["container"] = "a" if n_a >= n_b else "b"
                return Evidence(self.name, est, True, detail)
        return Evidence(self.name, est, False, detail)

    def related(self, a: np.ndarray, b: np.ndarray, share: float) -> bool:
        n = self.settings.num_perm
        return estimate_jaccard(a[:n], b[:n]) >= share * self.settings.threshold

    def encode(self, features: np.ndarray) -> bytes:
        return np.ascontiguousarray(features, dtype=np.uint32).tobytes()

    def decode(self, data: bytes) -> np.ndarray:
        return np.frombuffer(data, dtype=np.uint32).copy()
