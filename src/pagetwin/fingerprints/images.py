"""Image-dominant pages (galleries, shops) described by their main-content images.

When a page is image-dominant: on a gallery or shop page little text survives template removal,
so every page of such a site looks alike (or empty) to the text fingerprints. This algorithm
takes over there and nowhere else. The rule: a page is image-dominant when it has at least
``min_images`` main-content images (after template removal and after skipping tracking pixels,
spacers and icons, see html.images) and fewer than ``max_words_per_image`` main-text words per
image. Other pages get no images features (None), so this algorithm never links them.

Identity of an image: its perceptual hash when the crawl held its bytes, else its normalised
URL. Two images are the same when both have a phash and the hashes are within ``phash_k`` bits
(re-encoded and resized copies), otherwise when their normalised URLs are equal.

Similarity of two pages: the images are matched one to one (closest phashes first, then equal
URLs), and ``matched / (|A| + |B| - matched)`` is the set Jaccard of their identities; the pair
passes at ``threshold``.

Text still counts, and disagreeing text wins:

- when both pages have at least ``substantial_words`` main words, the token-set Jaccard of their
  main text must also reach ``min_text_jaccard`` (two product pages with the same photos and
  different descriptions are different products);
- translations: when both pages have at least ``min_lang_words`` words, both languages are known
  and they differ, the pair does not pass (the same photographs captioned in two languages are
  two documents for two audiences, not duplicates), unless ``translations_are_duplicates``.

Candidate keys: one exact key per normalised URL, and for phashes the SimHash-style block tables
for Hamming distance ``key_k`` (every two phashes within key_k bits share a key; pigeonhole), so
near phashes meet. Two pages that share many images are proposed by whichever they share.

Evidence.detail carries short lists for ``explain``: ``shared`` (images of page a matched in b;
"url_a = url_b" when the match is by phash under another URL),
``only_a`` and ``only_b`` (unmatched), at most ``_SHOW`` each, with the counts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import xxhash

from pagetwin.config import ImageSettings
from pagetwin.fingerprints.base import Algorithm, key64, register
from pagetwin.html.images import hamming
from pagetwin.model import Doc, Evidence

_SHOW = 5  # images listed per side in Evidence.detail
_MAX_TOKENS = 4096  # distinct token hashes kept for the text check


def _token_hash(token: str) -> int:
    # 32 bits are plenty for a Jaccard over a few thousand tokens and keep features small
    return xxhash.xxh32_intdigest(token.encode("utf-8", "surrogatepass"))


def is_image_dominant(n_images: int, n_words: int, settings: ImageSettings) -> bool:
    """At least min_images images and fewer than max_words_per_image words per image."""
    return n_images >= max(1, settings.min_images) and n_words < settings.max_words_per_image * n_images


def match_images(
    a: list[list[Any]], b: list[list[Any]], phash_k: int
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """One-to-one matching of two pages' images ([url, phash|None] each).

    Pairs with both phashes known may match when within phash_k bits; otherwise a pair may
    match when the URLs are equal. The matching is a maximum one (augmenting paths), so the
    count does not depend on the order of the images or of the pages. Returns (matched index
    pairs, unmatched of a, unmatched of b).
    """
    candidates: list[tuple[int, int, int]] = []  # (distance, i, j)
    b_by_url: dict[str, list[int]] = {}
    for j, (url, _ph) in enumerate(b):
        b_by_url.setdefault(url, []).append(j)
    b_hashed = [(j, ph) for j, (_url, ph) in enumerate(b) if ph is not None]
    for i, (url, ph) in enumerate(a):
        if ph is not None:
            for j, phb in b_hashed:
                d = hamming(ph, phb)
                if d <= phash_k:
                    candidates.append((d, i, j))
        for j in b_by_url.get(url, ()):
            if ph is None or b[j][1] is None:
                # no hash on one side: the URL decides (distance after every hash match)
                candidates.append((phash_k + 1, i, j))
    adjacency: list[list[int]] = [[] for _ in a]
    for _d, i, j in sorted(candidates):  # closest first: the search tries near partners first
        if j not in adjacency[i]:
            adjacency[i].append(j)
    match_of_b = _max_matching(adjacency, len(b))
    pairs = sorted((i, j) for j, i in enumerate(match_of_b) if i >= 0)
    used_a = {i for i, _ in pairs}
    only_a = [i for i in range(len(a)) if i not in used_a]
    only_b = [j for j in range(len(b)) if match_of_b[j] < 0]
    return pairs, only_a, only_b


def _max_matching(adjacency: list[list[int]], n_b: int) -> list[int]:
    """Maximum bipartite matching (Kuhn's augmenting paths, iterative: no recursion limit).
    Returns for each right node the left node matched to it, or -1."""
    match_of_b = [-1] * n_b
    match_of_a = [-1] * len(adjacency)
    for root in range(len(adjacency)):
        if not adjacency[root]:
            continue
        seen_b: set[int] = set()
        parent_b: dict[int, int] = {}  # right node -> left node that reached it
        stack = [root]
        found = -1
        while stack and found < 0:
            i = stack.pop()
            for j in adjacency[i]:
                if j in seen_b:
                    continue
                seen_b.add(j)
                parent_b[j] = i
                if match_of_b[j] < 0:
                    found = j
                    break
                stack.append(match_of_b[j])
        # flip the path: walk back from the free right node to the root
        j = found
        while j >= 0:
            i = parent_b[j]
            prev = match_of_a[i]  # i's old partner, through which the search reached i
            match_of_b[j], match_of_a[i] = i, j
            j = prev
    return match_of_b


def token_jaccard(a: list[int], b: list[int]) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


@register
class Images(Algorithm):
    name = "images"
    settings_class = ImageSettings

    def __init__(self, settings: ImageSettings | None = None) -> None:
        super().__init__(settings)
        self._masks: list[int] | None = None

    # -- features and keys ----------------------------------------------------------------

    def features(self, doc: Doc) -> dict[str, Any] | None:
        s = self.settings
        images: list[list[Any]] = []
        seen: set[str] = set()
        for ref in doc.images:
            if not ref.url or ref.url in seen:
                continue
            seen.add(ref.url)
            images.append([ref.url, ref.phash])
        n_words = len(doc.tokens)
        if not is_image_dominant(len(images), n_words, s):
            return None
        tokens = sorted({_token_hash(t) for t in doc.content_tokens()})[:_MAX_TOKENS]
        return {
            "img": images[: s.max_images],
            "n_img": len(images),
            "words": n_words,
            "lang": doc.lang or "und",
            "tok": tokens,
        }

    def _phash_masks(self) -> list[int]:
        if self._masks is None:
            from pagetwin.fingerprints.lsh import block_table_masks

            k = max(0, min(self.settings.key_k, self.settings.phash_k))
            self._masks = [int(m) for m in block_table_masks(k)] if k > 0 else [(1 << 64) - 1]
        return self._masks

    def keys(self, features: dict[str, Any]) -> Iterable[int]:
        out: set[int] = set()
        masks = self._phash_masks()
        for url, ph in features["img"]:
            out.add(key64("img-url", url))
            if ph is not None:
                for t, mask in enumerate(masks):
                    out.add(key64("img-ph", t, ph & mask))
        return sorted(out)

    # -- verification ---------------------------------------------------------------------

    def verify(self, a: dict[str, Any], b: dict[str, Any]) -> Evidence:
        s = self.settings
        ia, ib = a["img"], b["img"]
        pairs, only_a, only_b = match_images(ia, ib, s.phash_k)
        union = len(ia) + len(ib) - len(pairs)
        score = len(pairs) / union if union else 0.0
        detail: dict[str, Any] = {
            # a shared image seen under two URLs reads "url_a = url_b"
            "shared": [ia[i][0] if ia[i][0] == ib[j][0] else f"{ia[i][0]} = {ib[j][0]}" for i, j in pairs[:_SHOW]],
            "only_a": [ia[i][0] for i in only_a[:_SHOW]],
            "only_b": [ib[j][0] for j in only_b[:_SHOW]],
            "n_shared": len(pairs),
            "n_only_a": len(only_a),
            "n_only_b": len(only_b),
            "phash_matches": sum(1 for i, j in pairs if ia[i][1] is not None and ib[j][1] is not None),
        }
        passed = score >= s.threshold
        if passed:
            reason = self._text_veto(a, b, detail)
            if reason:
                passed = False
                detail["vetoed"] = reason
        return Evidence(self.name, score, passed, detail)

    def _text_veto(self, a: dict[str, Any], b: dict[str, Any], detail: dict[str, Any]) -> str:
        """Why the text forbids an edge the images allow ("" when it does not)."""
        s = self.settings
        lang_a, lang_b = a.get("lang", "und"), b.get("lang", "und")
        words_a, words_b = a.get("words", 0), b.get("words", 0)
        if (
            not s.translations_are_duplicates
            and min(words_a, words_b) >= s.min_lang_words
            and "und" not in (lang_a, lang_b)
            and lang_a != lang_b
        ):
            detail["langs"] = [lang_a, lang_b]
            return "different-language"
        if min(words_a, words_b) >= s.substantial_words:
            jac = token_jaccard(a.get("tok", []), b.get("tok", []))
            detail["text_jaccard"] = round(jac, 4)
            if jac < s.min_text_jaccard:
                return "text-disagrees"
        return ""

    def encode(self, features: Any) -> bytes:
        import json

        return json.dumps(features, separators=(",", ":"), ensure_ascii=False).encode()
