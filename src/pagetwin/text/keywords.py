"""Keyword weights: keyword density and tf-idf, and the document frequencies tf-idf needs.

``DocFreq`` is learned in pass 1 (fit one document at a time, merge shards, store as bytes in
the index); ``top_keywords`` weights one page's words in pass 2.
"""

from __future__ import annotations

import heapq
import json
import math
import zlib
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from itertools import compress
from operator import not_
from typing import TYPE_CHECKING

import regex

if TYPE_CHECKING:
    from pagetwin.text.analyze import Analysis

try:
    from pagetwin.text import _fast
except ImportError:  # not compiled: analyze.py says so once; the reference counts
    _fast = None

_MAGIC = b"PTDF1"
# Scripts whose single characters are words (a lone Latin or Cyrillic letter is not a keyword).
_IDEOGRAPHIC = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")
_NUMBER = regex.compile(r"[\p{N}.,'\u2019\-]+")


class DocFreq:
    """Document frequencies of tokens: in how many documents each token occurs.

    ``fit(tokens)`` adds one document (its set of tokens); ``merge`` adds another DocFreq's
    counts, so fitting shards separately and merging equals fitting the union.

    Memory is bounded by ``max_terms`` (default 1,000,000 terms, roughly 100 MB of dict): when the vocabulary grows past ``max_terms``, the
    terms with the smallest document frequency are dropped (all terms at the lowest df
    level(s), until at most ``max_terms`` are left; ``pruned_df_`` records the highest df
    dropped). Pruning forgets only rare terms: a dropped term that comes back starts again
    from zero, so its idf is overestimated, which only matters for terms rare enough to have
    been pruned. Without pruning (the vocabulary stays under the cap), merge is exact.
    """

    def __init__(self, max_terms: int = 1_000_000) -> None:
        self.max_terms = max_terms
        self.n_docs_ = 0
        self.df_: dict[str, int] = {}
        self.pruned_df_ = 0

    def fit(self, tokens: Iterable[str]) -> DocFreq:
        """Count one document."""
        df = self.df_
        for token in set(tokens):
            df[token] = df.get(token, 0) + 1
        self.n_docs_ += 1
        if len(df) > self.max_terms:
            self._prune()
        return self

    def merge(self, other: DocFreq) -> DocFreq:
        """Add ``other``'s counts into this one (returns self)."""
        df = self.df_
        for token, n in other.df_.items():
            df[token] = df.get(token, 0) + n
        self.n_docs_ += other.n_docs_
        self.pruned_df_ = max(self.pruned_df_, other.pruned_df_)
        if len(df) > self.max_terms:
            self._prune()
        return self

    def _prune(self) -> None:
        by_df = Counter(self.df_.values())
        excess = len(self.df_) - self.max_terms
        cut = 0
        for level in sorted(by_df):
            if excess <= 0:
                break
            excess -= by_df[level]
            cut = level
        self.df_ = {t: n for t, n in self.df_.items() if n > cut}
        self.pruned_df_ = max(self.pruned_df_, cut)

    def idf(self, token: str) -> float:
        """Smoothed inverse document frequency: ln((1 + N) / (1 + df)) + 1 (always > 0)."""
        return math.log((1 + self.n_docs_) / (1 + self.df_.get(token, 0))) + 1.0

    def to_bytes(self) -> bytes:
        payload = {"n_docs": self.n_docs_, "max_terms": self.max_terms, "pruned_df": self.pruned_df_, "df": self.df_}
        return _MAGIC + zlib.compress(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8"), 6)

    @classmethod
    def from_bytes(cls, data: bytes) -> DocFreq:
        if not data.startswith(_MAGIC):
            raise ValueError("not a pagetwin DocFreq")
        payload = json.loads(zlib.decompress(data[len(_MAGIC) :]).decode("utf-8"))
        out = cls(max_terms=int(payload["max_terms"]))
        out.n_docs_ = int(payload["n_docs"])
        out.pruned_df_ = int(payload.get("pruned_df", 0))
        out.df_ = {str(k): int(v) for k, v in payload["df"].items()}
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DocFreq) and (self.n_docs_, self.df_) == (other.n_docs_, other.df_)

    def __repr__(self) -> str:
        return f"DocFreq(n_docs={self.n_docs_}, terms={len(self.df_)})"


@lru_cache(maxsize=1 << 17)  # asked for every token of every page; the same tokens recur
def is_keyword_candidate(token: str) -> bool:
    """False for numbers and for one-character tokens of alphabetic scripts."""
    if not token or _NUMBER.fullmatch(token):
        return False
    return len(token) > 1 or bool(_IDEOGRAPHIC.match(token))


def content_terms(analysis: Analysis) -> list[str]:
    """The tokens that may be keywords: not stop words, not numbers, not lone letters."""
    return [t for t, s in zip(analysis.tokens, analysis.stop) if not s and is_keyword_candidate(t)]


# Tokens whose keyword_candidate answer a caller's memo keeps (top_keywords' ``known``), at
# most; then it starts again. ~100 B a token.
KNOWN_TOKENS = 1 << 17


def keyword_counts(tokens: list[str], stop: list[bool], known: dict[str, bool] | None = None) -> dict[str, int]:
    """{token: count} of ``content_terms`` (not stop words, keyword candidates), in order of
    first sight: natively when the kernels are built (``_fast.keyword_counts``; ``known``, the
    caller's memo of ``is_keyword_candidate`` from page to page, bounded by KNOWN_TOKENS; or
    ``_fast.flagged_counts`` when the tokens carry the word scan's keyword flags), else
    ``keyword_counts_reference``."""
    if _fast is None:
        return keyword_counts_reference(tokens, stop)
    flags = getattr(tokens, "keywords", None)  # the word scan's flags (analyze.TokenList), when it gave them
    if flags is not None and len(flags) == len(tokens):
        return _fast.flagged_counts(tokens, flags)
    if known is None:
        known = {}
    elif len(known) > KNOWN_TOKENS:
        known.clear()
    return _fast.keyword_counts(
        tokens if isinstance(tokens, list) else list(tokens), stop if type(stop) is list else list(stop), is_keyword_candidate, known
    )


def keyword_counts_reference(tokens: list[str], stop: list[bool]) -> dict[str, int]:
    """``keyword_counts`` in Python: the words that are not stop words counted in C, then the
    few distinct ones that cannot be keywords dropped."""
    counts = Counter(compress(tokens, map(not_, stop)))
    for t in [t for t in counts if not is_keyword_candidate(t)]:
        del counts[t]
    return dict(counts)


def top_keywords(
    analysis: Analysis, n: int, weighting: str = "tfidf", doc_freq: DocFreq | None = None, known: dict[str, bool] | None = None
) -> list[tuple[str, float]]:
    """The ``n`` highest-weighted keywords of a page, highest first, as (token, weight).

    Candidates are the page's normal forms (``analysis.tokens``) without stop words, numbers and
    one-character tokens of alphabetic scripts (a single Han/kana/Hangul character may be a
    word and stays).

    * ``"density"``: keyword density, count(t) / number of candidate tokens of the page.
    * ``"tfidf"``: density(t) * idf(t) with ``DocFreq.idf`` = ln((1+N)/(1+df)) + 1; plain
      density when ``doc_freq`` is None.

    Order: weight descending, then token ascending (code-point order), so equal weights always
    come out in the same order. Weights are then normalised to unit L2 norm over the returned
    top N (sum of w^2 = 1) and rounded to 8 decimals: pages of any length are comparable, and
    the keyword-fingerprint distance sum((wi-wj)^2) / sum(wi^2 + wj^2) of issue 6 becomes
    sum((wi-wj)^2) / 2 on these weights. ``known``: a memo the caller keeps from page to page
    (``keyword_counts``), which only makes it faster.
    """
    if n <= 0:
        return []
    if weighting not in ("tfidf", "density"):
        raise ValueError(f"unknown keyword weighting {weighting!r} (use 'tfidf' or 'density')")
    counts = keyword_counts(analysis.tokens, analysis.stop, known)
    total = sum(counts.values())
    if not total:
        return []
    tfidf = weighting == "tfidf" and doc_freq is not None
    if _fast is not None and type(doc_freq) in (DocFreq, type(None)):
        # natively, the same floats (the weights and their order; the norm stays Python's sum)
        df = doc_freq.df_ if tfidf else None
        top = _fast.top_weights(counts, total, df, 1 + doc_freq.n_docs_ if tfidf else 1, n)
    else:
        top = top_weights_reference(counts, total, n, doc_freq if tfidf else None)
    norm = math.sqrt(sum(w * w for w, _ in top)) or 1.0
    return [(t, round(-w / norm, 8)) for w, t in top]


def top_weights_reference(counts: dict[str, int], total: int, n: int, doc_freq: DocFreq | None) -> list[tuple[float, str]]:
    """The n (-weight, token) of ``counts`` that come first (weight descending, then token
    ascending): tf-idf by ``doc_freq``, density when it is None (``_fast.top_weights`` natively)."""
    if doc_freq is not None:
        weights = [(-(c / total) * doc_freq.idf(t), t) for t, c in counts.items()]
    else:
        items = counts.items()
        if len(counts) > n:
            # Density orders by count: a token counted less than the n-th highest count cannot
            # be among the n (those tied with it stay, and their tokens decide).
            cutoff = sorted(counts.values(), reverse=True)[n - 1]
            items = [(t, c) for t, c in items if c >= cutoff]
        weights = [(-(c / total), t) for t, c in items]
    return heapq.nsmallest(n, weights)  # weight descending, then token ascending
