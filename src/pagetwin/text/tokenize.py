"""Words with their positions, in any script.

``segment(text, lang)`` returns the words of ``text`` in order as ``Segment`` records (surface,
char offset, and the dictionary's normal form when the segmenter has one):

* Han runs: rjieba (jieba's dictionary and HMM in Rust; same words as jieba, about 20 times
  faster here: 15.5 vs 0.66 M chars/s on 825,000 chars of real Chinese pages).
* Japanese pages (lang "ja"): SudachiPy with sudachidict-core, split mode C, normal form =
  Sudachi's normalized form. Chosen over fugashi + unidic-lite: same speed on 162,000 chars of
  Debian FAQ and GIMP help in Japanese (0.41 vs 0.39 M chars/s), smaller dictionary (193 vs 249
  MB installed), and its normalized form folds spelling variants, where unidic-lite's lemma
  carries glosses ("プロジェクト-project"). When the dictionary is not installed (extra
  ``pagetwin[ja]``) a warning says so once and Japanese runs fall back to character bigrams.
* Thai, Lao, Khmer, Myanmar runs: ICU's dictionary word break (PyICU wheels), else bigrams.
* Everything else: Unicode letters, marks and digits; an apostrophe or hyphen between two word
  characters stays inside the word ("don't", "что-то", "e-mail"); "3.14" and "1,000" are one
  number.

Kernels only: no I/O except loading the dictionaries, lazily, once per process.

``segment`` is the pure-Python reference of the word scan; ``analyze`` runs the native one
(``pagetwin.text._fast.analyze_words``) over ``char_classes()``, the table of each code point's
classes in this module's own regex terms, so both split every text the same way.
"""

from __future__ import annotations

import logging
import threading
from functools import cache
from typing import NamedTuple

import numpy as np
import regex

log = logging.getLogger(__name__)

# Han, kana and the marks used inside Japanese words.
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\u30fc\u3005\u3006\u3007"
_SEA = r"\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
_WORD_CHAR = rf"[[\p{{L}}\p{{M}}\p{{N}}]--[{_CJK}{_SEA}]]"
_TOKEN = regex.compile(
    rf"(?P<cjk>[{_CJK}]+)"
    rf"|(?P<sea>[{_SEA}]+)"
    rf"|(?P<num>\p{{Nd}}+(?:[.,]\p{{Nd}}+)+(?!{_WORD_CHAR}))"
    rf"|(?P<word>{_WORD_CHAR}+(?:['\u2019\-]{_WORD_CHAR}+)*)",
    regex.V1,
)
_HAS_WORD_CHAR = regex.compile(r"[\p{L}\p{N}]")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
# Sudachi refuses inputs over 49,149 bytes; 12,000 chars stay below it even at 4 bytes a char.
_SUDACHI_CHUNK = 12000


# Bits of char_classes() (the same values as in _fast.pyx).
CLASS_WORD, CLASS_DIGIT, CLASS_CJK, CLASS_SEA, CLASS_KANA = 1, 2, 4, 8, 16
_CLASSES = (
    (CLASS_WORD, _WORD_CHAR),
    (CLASS_DIGIT, r"\p{Nd}"),
    (CLASS_CJK, rf"[{_CJK}]"),
    (CLASS_SEA, rf"[{_SEA}]"),
    (CLASS_KANA, r"[\p{Hiragana}\p{Katakana}]"),
)


@cache
def char_classes() -> np.ndarray:
    """uint8 class bits of every code point (0..0x10FFFF), from the character classes of
    ``_TOKEN`` matched by the regex module itself (its Unicode version, not a copy of it).
    Built once (0.15 CPU-s) and kept between runs (``text.cache``, named by the regex module's
    version and the classes' patterns; read back in ~2 ms) for the native word scan."""
    from pagetwin.text.cache import cached_arrays

    source = repr((regex.__version__, _CLASSES)).encode()
    table = cached_arrays("char-classes", source, lambda: {"table": char_classes_reference()})["table"]
    if table.shape != (0x110000,) or table.dtype != np.uint8:
        table = char_classes_reference()
    table.flags.writeable = False
    return table


def char_classes_reference() -> np.ndarray:
    """char_classes() built here and now."""
    codes = np.arange(0x110000, dtype="<u4")
    every = codes.tobytes().decode("utf-32-le", "surrogatepass")
    table = np.zeros(0x110000, dtype=np.uint8)
    for bit, chars in _CLASSES:
        for m in regex.finditer(chars + "+", every, regex.V1):
            table[m.start() : m.end()] |= bit
    return table


class Segment(NamedTuple):
    surface: str
    start: int
    norm: str | None = None  # normal form given by the segmenter's dictionary (Sudachi)


def char_bigrams(run: str, offset: int) -> list[Segment]:
    """Overlapping character bigrams of a run (a single character stays itself)."""
    if len(run) <= 1:
        return [Segment(run, offset)] if run else []
    return [Segment(run[i : i + 2], offset + i) for i in range(len(run) - 1)]


class _Lazy:
    """Optional segmenters, loaded on first use; None (and a message) when missing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jieba = None
        self._sudachi = None
        self._sudachi_failed = False
        self._icu = None
        self._icu_failed = False

    def jieba(self):
        if self._jieba is None:
            import rjieba

            self._jieba = rjieba
        return self._jieba

    def sudachi(self):
        if self._sudachi is None and not self._sudachi_failed:
            with self._lock:
                if self._sudachi is None and not self._sudachi_failed:
                    try:
                        from sudachipy import Dictionary, SplitMode

                        self._sudachi = Dictionary(dict="core").tokenizer(mode=SplitMode.C)
                    except Exception as exc:  # noqa: BLE001 - missing package or dictionary
                        self._sudachi_failed = True
                        log.warning(
                            "Japanese dictionary not available (%s): install it with "
                            "`pip install 'pagetwin[ja]'` (sudachipy, sudachidict-core); "
                            "Japanese text falls back to character bigrams",
                            exc,
                        )
        return self._sudachi

    def icu(self):
        if self._icu is None and not self._icu_failed:
            try:
                import icu

                self._icu = icu.BreakIterator.createWordInstance(icu.Locale.getRoot())
            except Exception:  # noqa: BLE001 - PyICU not installed: bigrams
                self._icu_failed = True
                log.info("PyICU not available: Thai/Lao/Khmer/Myanmar text falls back to character bigrams")
        return self._icu


_LAZY = _Lazy()


def japanese_dictionary() -> bool:
    """True when Sudachi's dictionary is installed (Japanese pages are then split by it)."""
    return _LAZY.sudachi() is not None


def han_cut(run: str) -> list[str]:
    """The words of a Han run, end to end (rjieba, HMM on): the native scan counts their offsets."""
    return _LAZY.jieba().cut(run, True)


def han_words(run: str, offset: int) -> list[Segment]:
    out = []
    pos = offset
    for word in han_cut(run):
        out.append(Segment(word, pos))
        pos += len(word)
    return out


def sea_words(run: str, offset: int) -> list[Segment]:
    breaker = _LAZY.icu()
    if breaker is None:
        return char_bigrams(run, offset)
    # ICU offsets are UTF-16 units; these scripts are all in the BMP, so they equal str indices.
    breaker.setText(run)
    out = []
    prev = 0
    for boundary in breaker:
        piece = run[prev:boundary]
        if _HAS_WORD_CHAR.search(piece):
            out.append(Segment(piece, offset + prev))
        prev = boundary
    return out


def _chunks(text: str, size: int):
    """(offset, piece) of text cut into pieces of at most ``size`` chars, at whitespace if possible."""
    start = 0
    n = len(text)
    while start < n:
        end = min(n, start + size)
        if end < n:
            cut = max(text.rfind("\n", start, end), text.rfind(" ", start, end), text.rfind("。", start, end))
            if cut > start:
                end = cut + 1
        yield start, text[start:end]
        start = end


def _japanese(text: str) -> list[Segment] | None:
    loaded = _LAZY.sudachi()
    if loaded is None:
        return None
    tokenizer = loaded
    out = []
    for offset, piece in _chunks(text, _SUDACHI_CHUNK):
        if not piece.isascii() and _SURROGATE.search(piece):
            piece = _SURROGATE.sub("\ufffd", piece)  # Sudachi takes UTF-8 only; same length
        for m in tokenizer.tokenize(piece):
            surface = m.surface()
            if _HAS_WORD_CHAR.search(surface):
                out.append(Segment(surface, offset + m.begin(), m.normalized_form()))
    return out


def segment(text: str, lang: str = "und") -> list[Segment]:
    """The words of ``text`` in order, with their char offsets (see the module docstring)."""
    if lang == "ja":
        words = _japanese(text)
        if words is not None:
            return words
    out: list[Segment] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "cjk":
            run = m.group()
            if lang == "ja" or (lang != "zh" and _KANA.search(run)):
                out.extend(char_bigrams(run, m.start()))  # Japanese without its dictionary
            else:
                out.extend(han_words(run, m.start()))
        elif kind == "sea":
            out.extend(sea_words(m.group(), m.start()))
        else:
            out.append(Segment(m.group(), m.start()))
    return out
