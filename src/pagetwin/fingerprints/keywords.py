"""The five keyword fingerprints of the Tianwang (Skynet) search engine: des, con, sort, con-w, sort-w.

For a page P take its top-N keywords T = (t1..tN) with weights W = (w1..wN) (``doc.keywords``,
highest weight first, computed by ``pagetwin.text.keywords.top_keywords``). Two pages are
duplicates when

- ``des``:    MD5(Des(Pi)) = MD5(Des(Pj)), Des = the meta description or the first 512 bytes of
  the page's main text;
- ``con``:    MD5(Con(Ti)) = MD5(Con(Tj)), Con = the keywords joined in rank order;
- ``sort``:   MD5(Sort(Ti)) = MD5(Sort(Tj)), Sort = the keywords in code-point order;
- ``con-w``:  MD5(Con) equal and the weight distance D(Wi, Wj) < a (weights aligned by rank);
- ``sort-w``: MD5(Sort) equal and D(Wi, Wj) < a (weights aligned by keyword).

D(Wi, Wj) = sum((wi - wj)^2) / sum(wi^2 + wj^2).

Two choices decide whether two nearly equal pages get the same MD5, so they are fixed here:

*Weights are normalised* to unit Euclidean length over the N keywords a page uses, before ranks
are (re)computed and before D is taken. Raw weights scale with page length (a page and the same
page repeated twice have proportional tf weights); after normalisation D = 1 - cos(Wi, Wj), in
[0, 1], and a longer copy with the same word proportions has D = 0.

*Rank ties are broken by the keyword itself*: keywords are ranked by their normalised weight
rounded to ``tie_quantum`` (descending), then by code-point order of the keyword. Two keywords
whose weights differ by less than about one quantum therefore keep the same relative order on
two near-copies even when the noise in the weights would swap them (a rounding boundary
between them can still split them; larger quanta make that rarer but put genuinely different
weights in one rank).

Des(P) is normalised before MD5 (NFKC, case folding, whitespace collapsed: ``normalize_text``),
and the 512-byte cut is taken after normalisation, on a UTF-8 character boundary. In "text" mode
the page's *valid text* starts at its lead, the first line of at least ``LEAD_WORDS`` (40) words,
and is taken as words only (punctuation dropped): the headline, dateline and byline above the
lead are what sites reposting one story change (``des_text``).

MD5 is the algorithm's own choice (the seed specifies it); keys for the index are xxhash of it.

*Equal keys are not treated as proof* (``keys_are_proof`` is False for all five), although for
des, con and sort an equal MD5 is the whole test: the matcher then verifies every pair of a
bucket (its neighbours only in a bucket over ``match.max_bucket``) instead of linking the members
in a chain, so the five algorithms propose the same candidate pairs and differ only in their
test. With a chain, the anti-chaining guard (``pagetwin.guard``), which grows a cluster only
through edges, cut a bucket of k equal digests into pieces of at most four pages, while con-w's
bucket, verified all-pairs, stayed whole: con-w found more pairs than con (issue 11; recall
0.065 against 0.011 on spotsigs-dev). Now con-w's edges are a subset of con's and sort-w's of
sort's, for any pages (tests/fingerprints/test_keywords.py).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from typing import Any

import regex

from pagetwin.config import KeywordSettings
from pagetwin.fingerprints.base import Algorithm, key64, register
from pagetwin.model import Doc, Evidence
from pagetwin.text.normalize import normalize_text

_SEP = "\x1f"  # unit separator: cannot occur inside a keyword, so joins are unambiguous


def md5_hex(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` whose UTF-8 encoding fits in ``max_bytes`` bytes
    (cut on a character boundary, never inside a multi-byte character)."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore")


# Des(P) in "text" mode starts at the lead: the first line of at least this many words. The lines
# before it on a news page are headline, kicker, dateline, byline, "more from" links and
# captions, which every site that reposts a story writes its own way (bench/RESULTS.md, "On
# reposts"); a body paragraph is longer than any of them. No such line: the text's first line.
LEAD_WORDS = 40
# A word of Des(P): a run of letters, marks and digits, or one Han/kana character (those scripts
# are written without spaces; one character is about a word, as in text.keywords).
_DES_WORD = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}]|[\p{L}\p{M}\p{N}]+")


def des_words(text: str) -> list[str]:
    """The words of ``text`` after normalisation (NFKC, case folding): punctuation, symbols and
    spacing dropped, so typography (quotes, dashes, "MD, Wednesday" / "MD on Wednesday" aside)
    and layout changes do not move the window."""
    return _DES_WORD.findall(normalize_text(text))


def _has_words(line: str, n: int) -> bool:
    """Whether ``line`` has at least ``n`` words (``des_words``), counting no further."""
    if n <= 0:
        return True
    if len(line) < n:  # fewer characters than words asked (NFKC does not add separators)
        return False
    for count, _ in enumerate(_DES_WORD.finditer(normalize_text(line)), start=1):
        if count >= n:
            return True
    return False


def lead_text(text: str, lead_words: int = LEAD_WORDS, max_bytes: int | None = None) -> str:
    """The page's valid text from its lead on, as normalised words joined by one space: the
    lines before the first line of at least ``lead_words`` words are skipped (all kept when
    no line is that long). ``max_bytes``: stop once that many UTF-8 bytes are collected (the
    result then starts with what the full call returns, up to at least ``max_bytes`` bytes)."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _has_words(line, lead_words)), 0)
    out: list[str] = []
    size = -1
    for line in lines[start:]:
        for match in _DES_WORD.finditer(normalize_text(line)):
            word = match.group()
            out.append(word)
            size += len(word.encode("utf-8")) + 1
            if max_bytes is not None and size >= max_bytes:
                return " ".join(out)
    return " ".join(out)


def des_text(doc: Doc, mode: str = "auto", max_bytes: int = 512, min_chars: int = 1) -> str:
    """Des(P): the normalised meta description, or the first ``max_bytes`` bytes of the
    page's valid text; "" when the chosen source is empty.

    ``mode``:

    * "text": the first ``max_bytes`` bytes of ``lead_text`` (the words of the main text from
      its first line of at least ``LEAD_WORDS`` words on);
    * "prefix": the first ``max_bytes`` bytes of the whole normalised main text (NFKC, case
      folding, whitespace collapsed to one space, see ``normalize_text``), headline, dateline
      and byline included;
    * "description": the meta description;
    * "auto": the description when the page has one of at least ``min_chars`` characters, else
      "text" (a description such as "home" says nothing about the page).

    Normalisation happens *before* the cut, so whitespace or case differences do not shift the
    window; the cut is on a character boundary.
    """
    if mode not in ("auto", "description", "text", "prefix"):
        raise ValueError(f"des_mode must be 'auto', 'description', 'text' or 'prefix', not {mode!r}")
    if mode in ("auto", "description"):
        desc = normalize_text(doc.description or "")
        if len(desc) >= max(1, min_chars) or mode == "description":
            return desc
    if mode == "prefix":
        return cut_utf8(normalize_text(doc.text or ""), max_bytes).rstrip()
    return cut_utf8(lead_text(doc.text or "", max_bytes=max_bytes), max_bytes).rstrip()


def ranked_keywords(
    keywords: list[tuple[str, float]], n: int, tie_quantum: float
) -> list[tuple[str, float]]:
    """The top ``n`` keywords with unit-length weights, in the documented rank order.

    Duplicate keywords keep their first (highest) entry; non-positive or non-finite weights are
    dropped (they carry no rank information).
    """
    seen: set[str] = set()
    picked: list[tuple[str, float]] = []
    for word, weight in keywords:
        w = float(weight)
        if not word or word in seen or not math.isfinite(w) or w <= 0.0:
            continue
        seen.add(word)
        picked.append((word, w))
        if len(picked) == n:
            break
    norm = math.sqrt(sum([w * w for _, w in picked]))  # added left to right, as a generator would
    if norm == 0.0:
        return []
    # Sorted as (rank key, keyword, weight) triples, no key function called a keyword: the
    # keywords are distinct, so the weight after them never decides.
    unit = [(word, w / norm) for word, w in picked]
    if tie_quantum > 0:
        ordered = sorted([(-round(u / tie_quantum), word, u) for word, u in unit])
    else:
        ordered = sorted([(-u, word, u) for word, u in unit])
    return [(word, u) for _, word, u in ordered]


def weight_distance(wa: list[float], wb: list[float]) -> float:
    """sum((wi - wj)^2) / sum(wi^2 + wj^2) over aligned weights; 0 = equal, 1 = orthogonal,
    2 = opposite (cannot happen with positive weights). Unequal lengths count as distance 1."""
    if len(wa) != len(wb):
        return 1.0
    num = sum((x - y) ** 2 for x, y in zip(wa, wb))
    den = sum(x * x + y * y for x, y in zip(wa, wb))
    return num / den if den > 0 else 1.0


def _digest_evidence(name: str, a: str, b: str) -> Evidence:
    """Equal MD5s pass; the detail names the digest(s) so `pagetwin explain` can show them."""
    if a == b:
        return Evidence(name, 1.0, True, {"md5": a})
    return Evidence(name, 0.0, False, {"md5_a": a, "md5_b": b})


class _KeywordAlgorithm(Algorithm):
    settings: KeywordSettings

    settings_class = KeywordSettings

    def _ranked(self, doc: Doc) -> list[tuple[str, float]] | None:
        s = self.settings
        ranked = ranked_keywords(doc.keywords, s.n, s.tie_quantum)
        if len(ranked) < max(1, s.min_keywords):
            return None
        return ranked

    def keys(self, features: Any) -> Iterable[int]:
        digest = features if isinstance(features, str) else features[0]
        return [key64(self.name, digest)]


@register
class Des(_KeywordAlgorithm):
    """MD5 of the meta description or of the first ``des_bytes`` bytes of the main text."""

    name = "des"

    def features(self, doc: Doc) -> str | None:
        s = self.settings
        text = des_text(doc, s.des_mode, s.des_bytes, s.des_min_chars)
        if len(text) < max(1, s.des_min_chars):
            return None
        return md5_hex(text)

    def verify(self, a: Any, b: Any) -> Evidence:
        return _digest_evidence(self.name, a, b)


@register
class Con(_KeywordAlgorithm):
    """MD5 of the top-N keywords joined in rank order."""

    name = "con"

    def _words(self, ranked: list[tuple[str, float]]) -> list[str]:
        return [w for w, _ in ranked]

    def features(self, doc: Doc) -> str | None:
        ranked = self._ranked(doc)
        if ranked is None:
            return None
        return md5_hex(_SEP.join(self._words(ranked)))

    def verify(self, a: Any, b: Any) -> Evidence:
        return _digest_evidence(self.name, a, b)


@register
class Sort(Con):
    """MD5 of the top-N keywords in code-point order."""

    name = "sort"

    def _words(self, ranked: list[tuple[str, float]]) -> list[str]:
        return sorted(w for w, _ in ranked)


@register
class ConW(_KeywordAlgorithm):
    """con's MD5 as the key; verified by the weight distance (weights aligned by rank) < a.

    Features: ``[md5, [w1..wN]]`` with unit-length weights in rank order.
    """

    name = "con-w"

    def _aligned(self, ranked: list[tuple[str, float]]) -> tuple[list[str], list[float]]:
        return [w for w, _ in ranked], [x for _, x in ranked]

    def features(self, doc: Doc) -> list[Any] | None:
        ranked = self._ranked(doc)
        if ranked is None:
            return None
        words, weights = self._aligned(ranked)
        return [md5_hex(_SEP.join(words)), weights]

    def verify(self, a: Any, b: Any) -> Evidence:
        if a[0] != b[0]:
            return Evidence(self.name, 0.0, False, {"md5_a": a[0], "md5_b": b[0]})
        d = weight_distance(a[1], b[1])
        passed = d < self.settings.a
        return Evidence(
            self.name, 1.0 - d, passed, {"md5": a[0], "distance": round(d, 6), "a": self.settings.a}
        )


@register
class SortW(ConW):
    """sort's MD5 as the key; verified by the weight distance (weights aligned by keyword) < a."""

    name = "sort-w"

    def _aligned(self, ranked: list[tuple[str, float]]) -> tuple[list[str], list[float]]:
        pairs = sorted(ranked)
        return [w for w, _ in pairs], [x for _, x in pairs]
