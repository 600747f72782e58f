"""Chunk-overlap copy detection, in the spirit of Stanford's SCAM (Shivakumar & Garcia-Molina).

Chunks are k-word windows (``chunk_words``) over the page's content tokens (normal forms, stop
words removed), each hashed to 64 bits (xxh3-64 of each word, combined per window, see
``chunk_hashes`` and ``fingerprints.hashing``). The page's features are the chunk *multiset*
(distinct hashes and how often each occurs) plus a sample of the hashes for the index.

Index keys (bounded): winnowing (Schleimer, Wilkerson & Aiken 2003) over the sequence of chunk
hashes with a window of ``winnow`` chunks: the smallest hash of every window is kept (the
leftmost on a tie), so any passage of at least ``winnow + chunk_words - 1`` content words that
two pages share gives them a common key. The density is about 2 / (winnow + 1) of the chunks;
beyond ``max_keys`` only the smallest selected hashes are kept (a consistent choice across
pages, so a shared passage still tends to be sampled on both sides). The cap only bites on pages
of more than about 2,300 content words (512 keys); a 300-word quote inside a 20,000-word page
then shares a key with the quoted page unless all of its ~66 keys miss the long page's 512
smallest (probability about 0.05 %).

Verification of a candidate pair (A, B), with f_A(c), f_B(c) the chunk frequencies:

- relative-frequency similarity (SCAM's closeness test, made symmetric): the chunks whose
  frequencies are close, f_A/f_B + f_B/f_A < ``epsilon`` (2.5: equal counts, or 2 vs 3 ...),
  contribute f_A * f_B; similarity = sum over close chunks / sqrt(sum f_A^2 * sum f_B^2)
  (a cosine restricted to the close chunks, 1.0 for identical multisets);
- containment both ways: contain_ab = sum_c min(f_A, f_B) / sum_c f_B, the share of B's chunks
  found in A ("A contains B"); contain_ba likewise.

A pair is a *duplicate* when similarity >= ``threshold`` or both containments reach
``containment``; otherwise a *partial* copy when one containment reaches ``containment``
(detail ``{"kind": "partial", "contain_ab", "contain_ba", "container": "a"|"b"}``). Partial
edges pass verification but carry ``detail["merge"] = merge_partial``: the clusterer must not
merge them into the source's cluster unless the user asked for it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pagetwin.config import ChunkSettings
from pagetwin.fingerprints.base import Algorithm, register
from pagetwin.fingerprints.hashing import token_hashes, window_hashes
from pagetwin.model import Doc, Evidence

_HEADER = struct.Struct("<III")  # distinct chunks, sampled keys, chunk_words


@dataclass(slots=True)
class ChunkFeatures:
    hashes: np.ndarray  # uint64, sorted, distinct chunk hashes
    counts: np.ndarray  # uint32, occurrences of each
    sample: np.ndarray  # uint64, sorted: the winnowed hashes registered in the index

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ChunkFeatures)
            and np.array_equal(self.hashes, other.hashes)
            and np.array_equal(self.counts, other.counts)
            and np.array_equal(self.sample, other.sample)
        )


def chunk_hashes(tokens: list[str], k: int, hasher: Callable[[list[str]], np.ndarray] = token_hashes) -> np.ndarray:
    """A 64-bit hash of every k-word window of ``tokens``, in order (uint64).

    Each word is hashed once (xxh3-64); a window's hash is the polynomial
    h[i]*M^(k-1) + ... + h[i+k-1] mod 2^64 (order-sensitive), finalised by mix64 once
    (``hashing.window_hashes``), computed for all windows at once with numpy: about ten times
    faster than hashing every joined window.
    """
    if len(tokens) - k + 1 <= 0 or k <= 0:
        return np.zeros(0, dtype=np.uint64)
    return window_hashes(hasher(tokens), k, mix_each_step=False)


def winnow(hashes: np.ndarray, window: int) -> np.ndarray:
    """The distinct hashes selected by winnowing (minimum of every ``window`` consecutive
    hashes), sorted."""
    if len(hashes) == 0:
        return hashes
    if len(hashes) <= window or window <= 1:
        return np.unique(hashes) if window <= 1 else np.array([hashes.min()], dtype=np.uint64)
    windows = sliding_window_view(hashes, window)
    positions = windows.argmin(axis=1) + np.arange(len(windows))
    return np.unique(hashes[positions])


def chunk_features(
    tokens: list[str], k: int, window: int, max_keys: int, hasher: Callable[[list[str]], np.ndarray] = token_hashes
) -> ChunkFeatures:
    seq = chunk_hashes(tokens, k, hasher)
    hashes, counts = np.unique(seq, return_counts=True)
    sample = winnow(seq, window)
    if max_keys > 0 and len(sample) > max_keys:
        sample = sample[:max_keys]  # already sorted: the smallest hashes
    return ChunkFeatures(hashes.astype(np.uint64), counts.astype(np.uint32), sample)


def compare(a: ChunkFeatures, b: ChunkFeatures, epsilon: float) -> tuple[float, float, float]:
    """(similarity, contain_ab, contain_ba) as defined in the module docstring."""
    total_a, total_b = a.total, b.total
    if total_a == 0 or total_b == 0:
        return 0.0, 0.0, 0.0
    _, ia, ib = np.intersect1d(a.hashes, b.hashes, assume_unique=True, return_indices=True)
    fa = a.counts[ia].astype(np.float64)
    fb = b.counts[ib].astype(np.float64)
    shared = float(np.minimum(fa, fb).sum())
    close = (fa / fb + fb / fa) < epsilon
    norm = np.sqrt(float((a.counts.astype(np.float64) ** 2).sum()) * float((b.counts.astype(np.float64) ** 2).sum()))
    similarity = float((fa[close] * fb[close]).sum()) / norm
    return min(1.0, similarity), shared / total_b, shared / total_a


@register
class Chunks(Algorithm):
    name = "chunks"
    settings: ChunkSettings

    settings_class = ChunkSettings

    def features(self, doc: Doc) -> ChunkFeatures | None:
        s = self.settings
        tokens = doc.content_tokens()
        if len(tokens) < max(s.min_tokens, s.chunk_words):
            return None
        return chunk_features(tokens, s.chunk_words, s.winnow, s.max_keys, self.hasher)

    def keys(self, features: Any) -> Iterable[int]:
        # The chunk hash itself is the key (xxh3 already); folded to the signed 64-bit range.
        return features.sample.view(np.int64).tolist()

    def verify(self, a: Any, b: Any) -> Evidence:
        s = self.settings
        similarity, contain_ab, contain_ba = compare(a, b, s.epsilon)
        detail: dict[str, Any] = {
            "similarity": round(similarity, 4),
            "contain_ab": round(contain_ab, 4),
            "contain_ba": round(contain_ba, 4),
        }
        if similarity >= s.threshold or min(contain_ab, contain_ba) >= s.containment:
            detail["kind"] = "duplicate"
            return Evidence(self.name, similarity, True, detail)
        if max(contain_ab, contain_ba) >= s.containment:
            detail["kind"] = "partial"
            detail["container"] = "a" if contain_ab >= contain_ba else "b"
            detail["merge"] = bool(s.merge_partial)
            return Evidence(self.name, similarity, True, detail)
        return Evidence(self.name, similarity, False, detail)

    def encode(self, features: Any) -> bytes:
        f: ChunkFeatures = features
        return b"".join(
            (
                _HEADER.pack(len(f.hashes), len(f.sample), self.settings.chunk_words),
                f.hashes.astype("<u8").tobytes(),
                f.counts.astype("<u4").tobytes(),
                f.sample.astype("<u8").tobytes(),
            )
        )

    def decode(self, data: bytes) -> Any:
        n, m, _ = _HEADER.unpack_from(data, 0)
        off = _HEADER.size
        hashes = np.frombuffer(data, dtype="<u8", count=n, offset=off).astype(np.uint64)
        off += 8 * n
        counts = np.frombuffer(data, dtype="<u4", count=n, offset=off).astype(np.uint32)
        off += 4 * n
        sample = np.frombuffer(data, dtype="<u8", count=m, offset=off).astype(np.uint64)
        return ChunkFeatures(hashes, counts, sample)
