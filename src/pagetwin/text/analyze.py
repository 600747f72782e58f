"""Text analysis of one page: language, words with positions, normal forms, stop words.

``TextAnalyzer`` is built once per worker process; every resource (language model,
segmenters, pymorphy3, stemmers, stop lists) is loaded on the first page that needs it and
then kept, and each language caches its words' analyses (bounded).

The words of a text are found and looked up by the native kernel
(``pagetwin.text._fast.analyze_words``, built by ``pip install``; a known word is found in
the language's ``_fast.WordTable`` by its characters, no string made); ``analyze_reference`` is
its pure-Python reference (``tokenize.segment`` and one lookup per word), used when the native
module is not built (with one warning) and by the tests that hold both to the same output.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from pagetwin.config import TextSettings
from pagetwin.text import tokenize
from pagetwin.text.keywords import is_keyword_candidate
from pagetwin.text.lang import UNDETERMINED, detect_language
from pagetwin.text.morph import Morphology, fold
from pagetwin.text.tokenize import segment

log = logging.getLogger(__name__)

try:
    from pagetwin.text import _fast
except ImportError as exc:  # not compiled (a source checkout without `pip install -e .`)
    _fast = None
    _FAST_MISSING = str(exc)

WORD_CACHE = 300_000  # analysed surface forms kept per language (cleared when full)
# Han runs whose rjieba cut is kept per language (cleared when full; ~205 B a run, so at most
# ~10 MB): on corpus-10000-shared's 332 Chinese pages 4 of 5 runs recur (menus, headings; 29,092
# distinct of 147,796), and cutting them was most of a Chinese page's time.
HAN_CUTS = 50_000


class TokenList(list):
    """A page's normal forms (a list of str), with what the word scan keeps with each known
    word, so that it is not computed again a page: ``hashes``, the uint64 array (read-only) of
    the analyser's ``token_hash`` of each token, which the fingerprints read
    (``hashing.TokenHasher``), and ``keywords``, a byte a token, 1 for a keyword candidate that
    is no stop word (``keywords.keyword_counts``); each None when the scan could not give it
    for every token. Read, never changed."""

    __slots__ = ("hashes", "keywords")

    def __init__(self, tokens=(), hashes=None, keywords=None) -> None:
        super().__init__(tokens)
        self.hashes = hashes
        self.keywords = keywords


@dataclass(slots=True)
class Analysis:
    lang: str  # ISO 639-1 ("zh", "ja", "ru", "en", ...) or "und"
    tokens: list[str] = field(default_factory=list)  # normal forms (lemma / stem, case-folded), text order
    surface: list[str] = field(default_factory=list)  # the words as written
    starts: list[int] = field(default_factory=list)  # char offset of each token in the text
    stop: list[bool] = field(default_factory=list)  # stop-word flags


def stop_words(lang: str) -> frozenset[str]:
    """Stop words of ``lang`` from stopwords-iso (the stopwordsiso package), case-folded."""
    import stopwordsiso

    try:
        words = stopwordsiso.stopwords(lang) if stopwordsiso.has_lang(lang) else set()
    except Exception:  # noqa: BLE001 - an unknown code is just a language without a list
        words = set()
    return frozenset(fold(w) for w in words)


class _Language:
    """What one language needs, built on its first page."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        # No cache of its own: it is asked once per new word, whose result the word cache keeps
        # (a second cache of the same words held a third of a worker's word memory).
        self.morph = Morphology(lang, cache_size=0)
        self.stops = stop_words(lang)
        # On pages in a non-Latin script, English words are frequent (menus, brands): their
        # stop words are flagged with the English list.
        non_ascii = sum(1 for w in self.stops if not w.isascii())
        self.english_stops = stop_words("en") if lang != "en" and non_ascii > len(self.stops) // 2 else frozenset()
        self.lemmatizes = lang == "ru"  # a dictionary gives lemmas (pymorphy3)
        # surface -> (token, is_stop); (surface, norm) when the segmenter gave a normal form
        self.cache: dict[str | tuple[str, str], tuple[str, bool]] = {}
        # The native scan's table in front of the cache, for the words it finds itself: it
        # looks them up by their characters in the text (no string made for a known word).
        self.words = _fast.WordTable(WORD_CACHE) if _fast is not None else None
        # run -> its words' lengths (or its words), the native scan's memo of tokenize.han_cut
        self.han_cuts: dict[str, tuple[int, ...] | list[str]] = {}

    def word(self, surface: str, norm: str | None) -> tuple[str, bool]:
        hit = self.cache.get(surface if norm is None else (surface, norm))
        if hit is not None:
            return hit
        return self.compute(surface, norm)

    def compute(self, surface: str, norm: str | None) -> tuple[str, bool]:
        """The (normal form, is stop word) of one word, stored in the cache."""
        folded = fold(surface)
        token = fold(norm) if norm else self.morph.normal_folded(folded)
        stops = self.stops
        # Lemmas from a dictionary are words and are looked up too ("во" -> "в"); Snowball stems
        # are not words ("running" -> "run" is not the stop word "run").
        is_stop = (
            folded in stops
            or ((norm is not None or self.lemmatizes) and token in stops)
            or (folded.isascii() and folded in self.english_stops)
        )
        if len(self.cache) >= WORD_CACHE:
            self.cache.clear()
        self.cache[surface if norm is None else (surface, norm)] = (token, is_stop)
        return token, is_stop


class TextAnalyzer:
    """Language, words, normal forms and stop-word flags of texts (one instance per process)."""

    def __init__(self, settings: TextSettings | None = None, token_hash: Callable[[str], int] | None = None) -> None:
        """``token_hash``: a function of a token (a 64-bit int) whose value for each token the
        analyses carry (``TokenList.hashes``), computed once a word by the word scan; the
        pipeline gives the fingerprints' ``hashing.token_hash``."""
        self.settings = settings or TextSettings()
        self.token_hash = token_hash
        self._languages: dict[str, _Language] = {}

    def language(self, lang: str) -> _Language:
        tools = self._languages.get(lang)
        if tools is None:
            tools = self._languages[lang] = _Language(lang)
        return tools

    def detect(self, text: str) -> str:
        return detect_language(text)

    def analyze(self, text: str, lang: str | None = None, surfaces: bool = True) -> Analysis:
        """Analyse ``text``; ``lang`` (or settings.lang) forces the language instead of detecting it.
        ``surfaces``: also the words as written and where they start (``Analysis.surface`` and
        ``.starts``, left empty without); the pipeline reads only tokens and stop flags, and
        goes without (a list entry a word, and an int made for most offsets)."""
        lang = (lang or self.settings.lang or "").strip().lower() or self.detect(text)
        if _fast is None:
            _warn_reference()
            return self.analyze_reference(text, lang, surfaces)
        out = Analysis(lang=lang)
        if not text or (lang == "ja" and tokenize.japanese_dictionary()):
            return self.analyze_reference(text, lang, surfaces)  # Sudachi finds Japanese words itself
        tools = self.language(lang if lang != UNDETERMINED else "und")
        out.tokens = tokens = TokenList()
        tokens.hashes, tokens.keywords = _fast.analyze_words(
            text, tokenize.char_classes(), lang != "zh", lang == "ja", tools.cache, tools.compute,
            tokenize.han_cut, tokenize.sea_words, tokenize.char_bigrams,
            tokens, out.surface if surfaces else None, out.starts if surfaces else None, out.stop, tools.words,
            self.token_hash, is_keyword_candidate, tools.han_cuts, HAN_CUTS,
        )  # fmt: skip
        if tokens.hashes is not None:
            tokens.hashes.flags.writeable = False  # shared by every fingerprint that reads them
        return out

    def analyze_reference(self, text: str, lang: str, surfaces: bool = True) -> Analysis:
        """``analyze`` in pure Python, language given: the reference of the native kernel."""
        out = Analysis(lang=lang)
        if not text:
            return out
        tools = self.language(lang if lang != UNDETERMINED else "und")
        word = tools.word
        tokens, stop = out.tokens, out.stop
        for seg in segment(text, lang):
            token, is_stop = word(seg.surface, seg.norm)
            if not token:
                continue
            tokens.append(token)
            if surfaces:
                out.surface.append(seg.surface)
                out.starts.append(seg.start)
            stop.append(is_stop)
        return out


@cache
def _warn_reference() -> None:
    """Say once per process that the pure-Python references run."""
    log.warning(
        "pagetwin's native text kernels are not built (%s): text analysis runs in pure Python, "
        "about twice as slow; build them with `pip install -e .` (needs a C compiler)",
        _FAST_MISSING,
    )
