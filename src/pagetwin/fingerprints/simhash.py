"""SimHash (Charikar 2002) over weighted word features, with block tables for Hamming
distance <= k (Manku, Jain and Das Sarma 2007).

Features are the page's normal forms (Doc.tokens from the text analyser, or only its content
words), as word n-grams of ``settings.shingle`` words, each weighted by its count in the page
(``settings.weighting``: "tf", "logtf" = 1 + ln tf, or "binary"). Each feature's 64-bit xxh3
hash votes +weight for its set bits and -weight for its clear bits; the fingerprint keeps the
sign of each bit's sum. Because the vote is a weighted sum over the multiset of features,
reordering the features leaves the fingerprint unchanged.

Candidates: one key per block table (see lsh.block_table_masks): every pair at Hamming
distance <= k shares at least one key. Verification: Hamming distance <= k.
"""

from __future__ import annotations

from collections.abc import Iterable
import numpy as np

from pagetwin.config import SimHashSettings
from pagetwin.fingerprints.base import Algorithm, hamming, register
from pagetwin.fingerprints.hashing import mix64
from pagetwin.fingerprints.lsh import block_table_masks, shingle_hashes
from pagetwin.model import Doc, Evidence


_BLOCK = 8192  # features per block of the vote


def simhash64(hashes: np.ndarray, weights: np.ndarray) -> int:
    """The 64-bit SimHash of features given by their uint64 hashes and float weights."""
    if len(hashes) == 0:
        return 0
    h = np.ascontiguousarray(hashes, dtype=np.uint64)
    w = np.asarray(weights, dtype=float)
    votes = np.zeros(64)
    # in blocks, so a huge page never builds a huge (n, 64) matrix
    for start in range(0, len(h), _BLOCK):
        # (n, 64) matrix of bits, bit i of each hash in column i (little-endian bit order)
        bits = np.unpackbits(h[start : start + _BLOCK].view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
        votes += w[start : start + _BLOCK] @ (bits.astype(np.float64) * 2.0 - 1.0)
    packed = np.packbits(votes > 0, bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def weighted_features(hashes: np.ndarray, weighting: str) -> tuple[np.ndarray, np.ndarray]:
    """Distinct feature hashes (sorted) and their weights from the counts."""
    uniq, counts = np.unique(hashes, return_counts=True)
    if weighting == "tf":
        w = counts.astype(float)
    elif weighting == "logtf":
        w = 1.0 + np.log(counts)
    elif weighting == "binary":
        w = np.ones(len(uniq))
    else:
        raise ValueError(f"unknown simhash weighting {weighting!r} (tf, logtf, binary)")
    return uniq, w


@register
class SimHash(Algorithm):
    name = "simhash"

    settings_class = SimHashSettings

    def __init__(self, settings: SimHashSettings | None = None) -> None:
        super().__init__(settings)
        s = self.settings
        if s.bits != 64:
            raise ValueError("simhash.bits: only 64 is supported")
        self._masks = block_table_masks(s.k, 64, s.blocks, s.min_key_bits)
        self._salts = mix64(np.arange(1, len(self._masks) + 1, dtype=np.uint64) * np.uint64(0x9E37))

    def tokens(self, doc: Doc) -> list[str]:
        return doc.content_tokens() if self.settings.content_only else list(doc.tokens)

    def features(self, doc: Doc) -> int | None:
        toks = self.tokens(doc)
        if len(toks) < self.settings.min_tokens:
            return None
        feats = shingle_hashes(self.hasher(toks), self.settings.shingle)
        uniq, w = weighted_features(feats, self.settings.weighting)
        return simhash64(uniq, w)

    def keys(self, features: int) -> Iterable[int]:
        fp = np.uint64(features)
        # Table t's key: the masked fingerprint mixed with the table's salt, so equal block
        # values in different tables do not collide.
        keys = mix64((fp & self._masks) ^ self._salts)
        return keys.view(np.int64).tolist()

    def verify(self, a: int, b: int) -> Evidence:
        d = hamming(a, b)
        return Evidence(self.name, 1.0 - d / 64.0, d <= self.settings.k, {"hamming": d})

    def encode(self, features: int) -> bytes:
        return np.uint64(features).tobytes()

    def decode(self, data: bytes) -> int:
        return int(np.frombuffer(data, dtype=np.uint64)[0])

    def table_count(self) -> int:
        return len(self._masks)
