"""Segment signatures: split the main text into N segments, sign each, and call two pages
duplicates when at least M of their N signatures are equal (position by position).

The split rule (fixed, deterministic, works on any language because it only needs tokens):

1. The words are the page's content tokens (normal forms, stop words removed:
   ``doc.content_tokens()``), T of them.
2. Boundary k (k = 1..N-1) aims at token position t_k = round(k * T / N), balancing segment
   lengths. It is then moved to an *anchor* inside the window [t_k - h, t_k + h], h = T // (4N):
   the position p whose word pair (token[p-1], token[p]) has the smallest xxh3 hash (the
   leftmost on a tie). Anchors depend on the words, not on the exact count, so inserting or
   deleting a few words elsewhere moves the targets a little but usually not the anchors: the
   untouched segments keep their signatures. Windows never overlap (h < T / 2N), so segments
   are never empty and stay within [T/2N, 3T/2N] tokens.
3. Segment signature = xxh3-64 of its tokens joined by a space.

Candidate keys: key64("segments", position, signature). Only the first N - M + 1 positions are
registered: if two pages agree on at least M of N positions, they agree on at least one of any
N - M + 1 positions (pigeonhole), so no qualifying pair is lost and the index holds fewer keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import xxhash

from pagetwin.config import SegmentSettings
from pagetwin.fingerprints.base import Algorithm, key64, register
from pagetwin.model import Doc, Evidence


def _pair_hash(a: str, b: str) -> int:
    return xxhash.xxh3_64_intdigest(f"{a}\x1f{b}".encode())


def segment_bounds(tokens: list[str], n: int) -> list[int]:
    """Start offsets of the n segments (the first is 0), by the anchor rule above."""
    total = len(tokens)
    if n <= 1 or total < n:
        return [0]
    h = total // (4 * n)
    bounds = [0]
    for k in range(1, n):
        target = round(k * total / n)
        lo = max(bounds[-1] + 1, target - h)
        hi = min(total - (n - k), target + h)  # leave at least one token per later segment
        if hi < lo:
            hi = lo
        best_p, best_h = lo, None
        for p in range(lo, hi + 1):
            ph = _pair_hash(tokens[p - 1], tokens[p])
            if best_h is None or ph < best_h:
                best_p, best_h = p, ph
        bounds.append(best_p)
    return bounds


def segment_signatures(tokens: list[str], n: int) -> list[int]:
    """The n unsigned 64-bit signatures of the segments of ``tokens``."""
    bounds = segment_bounds(tokens, n) + [len(tokens)]
    return [
        xxhash.xxh3_64_intdigest(" ".join(tokens[s:e]).encode("utf-8"))
        for s, e in zip(bounds, bounds[1:])
    ]


@register
class Segments(Algorithm):
    """Features: the list of N signatures (unsigned 64-bit ints), in text order."""

    name = "segments"
    settings: SegmentSettings

    settings_class = SegmentSettings

    def __init__(self, settings: SegmentSettings | None = None) -> None:
        super().__init__(settings)
        if not 1 <= self.settings.m <= self.settings.n:
            raise ValueError(f"segments: need 1 <= m <= n, got m={self.settings.m}, n={self.settings.n}")

    def features(self, doc: Doc) -> list[int] | None:
        tokens = doc.content_tokens()
        n = self.settings.n
        if len(tokens) < max(self.settings.min_tokens, n):
            return None
        return segment_signatures(tokens, n)

    def keys(self, features: Any) -> Iterable[int]:
        registered = self.settings.n - self.settings.m + 1
        return [key64(self.name, i, sig) for i, sig in enumerate(features[:registered])]

    def verify(self, a: Any, b: Any) -> Evidence:
        n = self.settings.n
        equal = sum(1 for x, y in zip(a, b) if x == y) if len(a) == len(b) == n else 0
        return Evidence(
            self.name, equal / n, equal >= self.settings.m, {"equal": equal, "n": n, "m": self.settings.m}
        )

    def encode(self, features: Any) -> bytes:
        return np.asarray(features, dtype="<u8").tobytes()

    def decode(self, data: bytes) -> Any:
        return [int(x) for x in np.frombuffer(data, dtype="<u8")]
