"""Normal forms of words: a dictionary first, then learned endings, then Snowball.

For a word of a page in language L (``Morphology(L).normal(word)``):

1. Russian (Cyrillic words): pymorphy3 with its Russian dictionary (OpenCorpora, descended
   from Zaliznyak's grammatical dictionary): the normal form of the most probable parse, when
   the dictionary knows the word (``parse.is_known``).
2. A word the dictionary does not know, when L has an ending table
   (``data/endings-<L>.tsv``): cut the ending that is most often an ending (see
   ``EndingTable``), leaving at least ``min_stem`` characters.
   ASCII-letter words on pages of a language not written in Latin letters get the English
   Snowball stemmer.
3. Languages without a dictionary: the Snowball stemmer of L (PyStemmer) when Snowball covers
   L, else the ending table when one is given, else the case-folded word.

Every result is NFKC-normalised and case-folded ("ё" is folded to "е" for Russian, as the
dictionary does). Lookups are cached per ``Morphology`` (the same word recurs on every page).

The ending table is learned from any text corpus by::

    python -m pagetwin.text.morph build-endings CORPUS.txt [more files, .html too] --lang ru --out FILE
    pagetwin endings CORPUS... --lang ru --out FILE      (the same, from the CLI)

Each distinct word of the corpus is labelled with its ending: for Russian, by the dictionary
(the word minus its stem, the prefix it most often shares with the other forms of its lexeme:
"кошками" -> "ами"); for other languages by the Snowball stemmer (the word minus its stem). For
every string s the table stores how many words had s as their ending (``n_end``) and how many
words ended in s at all (``n_suffix``).
"""

from __future__ import annotations

import argparse
import math
import sys
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

# ISO 639-1 -> Snowball algorithm (PyStemmer names).
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "eo": "esperanto", "et": "estonian",
    "fi": "finnish", "fr": "french", "de": "german", "el": "greek", "hi": "hindi",
    "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "no": "norwegian", "nb": "norwegian", "nn": "norwegian", "fa": "persian",
    "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho",
    "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
CACHE_WORDS = 200_000  # per language; an LRU cache, so memory stays bounded on long runs


# Languages written in the Latin alphabet (their own stemmer handles their ASCII words).
LATIN_SCRIPT = frozenset(
    "af br ca cs cy da de en eo es et eu fi fr ga gl hr hu id is it la lt lv ms mt nb nl nn no "
    "pl pt ro sk sl sq st sv sw tl tr vi".split()
)


def fold(word: str) -> str:
    """NFKC + case folding of one word, typographic apostrophe as "'" (cheap path for ASCII)."""
    if word.isascii():
        return word.lower()
    return unicodedata.normalize("NFKC", word).casefold().replace("\u2019", "'")


def _is_cyrillic(word: str) -> bool:
    return any("\u0400" <= ch <= "\u04ff" for ch in word)


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


# -- ending table -----------------------------------------------------------------------------


@dataclass
class EndingTable:
    """Ending frequencies learned from a corpus; cuts the most frequent matching ending.

    "Most frequent" is measured relative to how often the string ends a word at all:
    for each ending s that matches the end of the word (1..max_ending chars, leaving at least
    ``min_stem`` chars), share(s) = n_end(s) / n_suffix(s), the share of corpus words ending in s
    whose ending s was. The s with the highest share is cut (ties: more words with that
    ending, then the longer s), if its share is at least ``min_share``. Raw counts alone would
    always pick the one-letter endings ("и" beats "ами" in "кошками"); the share picks "ами"
    because nearly every word ending in "ами" has that ending.
    """

    lang: str = ""
    min_stem: int = 3
    max_ending: int = 5
    min_share: float = 0.1
    source: str = ""
    n_end_: dict[str, int] = field(default_factory=dict)
    n_suffix_: dict[str, int] = field(default_factory=dict)
    n_words_: int = 0

    # ---- learning
    def fit(self, words: Iterable[str], label) -> EndingTable:
        """Count endings of distinct words; ``label(word)`` gives a word's ending or None."""
        n_end: Counter[str] = Counter(self.n_end_)
        n_suffix: Counter[str] = Counter(self.n_suffix_)
        for word in words:
            self.n_words_ += 1
            top = min(self.max_ending, len(word) - self.min_stem)
            for k in range(1, top + 1):
                n_suffix[word[-k:]] += 1
            ending = label(word)
            if ending and len(ending) <= top:
                n_end[ending] += 1
        self.n_end_ = dict(n_end)
        self.n_suffix_ = dict(n_suffix)
        return self

    def prune(self, min_count: int = 3) -> EndingTable:
        """Drop endings seen fewer than ``min_count`` times (noise: typos, rare stems)."""
        self.n_end_ = {s: n for s, n in self.n_end_.items() if n >= min_count}
        self.n_suffix_ = {s: n for s, n in self.n_suffix_.items() if s in self.n_end_}
        return self

    # ---- applying
    def ending(self, word: str) -> str:
        """The ending to cut from ``word`` (case-folded), "" when none applies."""
        best = ("", 0.0, 0)
        top = min(self.max_ending, len(word) - self.min_stem)
        for k in range(1, top + 1):
            s = word[-k:]
            n_end = self.n_end_.get(s)
            if not n_end:
                continue
            share = n_end / max(self.n_suffix_.get(s, n_end), n_end)
            if (share, n_end, k) > (best[1], best[2], len(best[0])):
                best = (s, share, n_end)
        return best[0] if best[1] >= self.min_share else ""

    def stem(self, word: str) -> str:
        ending = self.ending(word)
        return word[: len(word) - len(ending)] if ending else word

    # ---- storage: a TSV, "#" header lines, then ending, n_end, n_suffix (sorted by ending)
    def to_tsv(self) -> str:
        lines = [
            f"# pagetwin ending table lang={self.lang} words={self.n_words_} min_stem={self.min_stem} "
            f"max_ending={self.max_ending} min_share={self.min_share}",
            f"# source: {self.source}",
            "# ending\tn_end\tn_suffix",
        ]
        for s in sorted(self.n_end_):
            lines.append(f"{s}\t{self.n_end_[s]}\t{self.n_suffix_.get(s, self.n_end_[s])}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_tsv(cls, text: str) -> EndingTable:
        table = cls()
        for line in text.splitlines():
            if line.startswith("# pagetwin ending table"):
                for item in line.split()[4:]:
                    key, _, value = item.partition("=")
                    if key == "lang":
                        table.lang = value
                    elif key == "words":
                        table.n_words_ = int(value)
                    elif key in ("min_stem", "max_ending"):
                        setattr(table, key, int(value))
                    elif key == "min_share":
                        table.min_share = float(value)
            elif line.startswith("# source:"):
                table.source = line[len("# source:") :].strip()
            elif line and not line.startswith("#"):
                s, n_end, n_suffix = line.split("\t")
                table.n_end_[s] = int(n_end)
                table.n_suffix_[s] = int(n_suffix)
        return table


@lru_cache(maxsize=None)
def shipped_ending_table(lang: str) -> EndingTable | None:
    """The ending table shipped in pagetwin/data for ``lang``, or None."""
    try:
        text = resources.files("pagetwin").joinpath("data", f"endings-{lang}.tsv").read_text("utf-8")
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return None
    return EndingTable.from_tsv(text)


# -- dictionaries -----------------------------------------------------------------------------

_morph_analyzer = None


def russian_analyzer():
    """pymorphy3's Russian MorphAnalyzer, loaded once per process."""
    global _morph_analyzer
    if _morph_analyzer is None:
        import pymorphy3

        _morph_analyzer = pymorphy3.MorphAnalyzer(lang="ru")
    return _morph_analyzer


def _stemmer(lang: str):
    algorithm = SNOWBALL.get(lang)
    if algorithm is None:
        return None
    import Stemmer

    # No cache of PyStemmer's own: every caller keeps the words it stems (the analyzer's word
    # cache, Morphology.normal's LRU), so its cache only ever saw new words, and keeping and
    # purging it cost ~1.0 us of a new word's ~1.4 us stemming (86,000 new words on
    # corpus-2000). The stems are the same: the cache only remembers them.
    return Stemmer.Stemmer(algorithm, maxCacheSize=0)


class Morphology:
    """Normal forms of the words of one language (see the module docstring)."""

    def __init__(self, lang: str, endings: EndingTable | None | bool = True, cache_size: int = CACHE_WORDS):
        self.lang = lang
        self._stemmer = _stemmer(lang)
        if endings is True:
            endings = shipped_ending_table(lang)
        self.endings: EndingTable | None = endings or None
        self._dictionary = russian_analyzer() if lang == "ru" else None
        # On pages in a non-Latin script, Latin-letter words are nearly always English (menus,
        # product and software names): stem them as English, so they match the same words on
        # English pages.
        self._english = _stemmer("en") if lang not in LATIN_SCRIPT else None
        self.normal = lru_cache(maxsize=cache_size)(self._normal)
        self.known = lru_cache(maxsize=cache_size)(self._known)

    def _known(self, word: str) -> bool:
        """True when the dictionary has the word (False without a dictionary)."""
        return self._lemma(fold(word)) is not None

    def _lemma(self, w: str) -> str | None:
        if self._dictionary is None or not _is_cyrillic(w):
            return None
        # The known-word check is one DAWG lookup; parse() of an unknown word would also run
        # pymorphy3's own suffix guessers, which we replace by the ending table.
        if not self._dictionary.word_is_known(w):
            return None
        parse = self._dictionary.parse(w)[0]
        return parse.normal_form.replace("ё", "е") if parse.is_known else None

    def _normal(self, word: str) -> str:
        return self.normal_folded(fold(word))

    def normal_folded(self, w: str) -> str:
        """``normal`` of a word already folded (``fold``), without folding it again."""
        if self._english is not None and w.isascii() and w.isalpha():
            return self._english.stemWord(w)  # English words on a page in another script
        if self.lang == "ru":
            w = w.replace("ё", "е")
            if not _is_cyrillic(w):
                return w
            lemma = self._lemma(w)
            if lemma is not None:
                return lemma
            if self.endings is not None:
                return self.endings.stem(w)  # the dictionary does not know it: learned endings
        if self._stemmer is not None:
            return self._stemmer.stemWord(w)
        if self.endings is not None:
            return self.endings.stem(w)
        return w


def _stem_length(word: str, forms: set[str]) -> int:
    """Length of the stem of ``word`` among the other forms of its lexeme: the most common
    common-prefix length with them (ties: the shorter stem). Neither the lemma alone
    ("кошками" / "кошка" share "кошка") nor all forms ("кошек" leaves "кош") gives the stem
    "кошк"; most forms do."""
    lengths = Counter(_common_prefix(word, f) for f in forms if f != word)
    if not lengths:
        return len(word)
    return min(lengths, key=lambda n: (-lengths[n], n))


# -- building a table -------------------------------------------------------------------------


def corpus_words(paths: Iterable[Path]) -> Iterable[str]:
    """Distinct case-folded words (letters only, 2+ chars) of text or HTML files."""
    import regex

    word = regex.compile(r"\p{L}[\p{L}\p{M}]+")
    seen: set[str] = set()
    for path in paths:
        raw = Path(path).read_bytes()
        if path.suffix.lower() in (".html", ".htm", ".xhtml"):
            from selectolax.lexbor import LexborHTMLParser

            from pagetwin.html.parse import decode_html

            tree = LexborHTMLParser(decode_html(raw)[0])
            for node in tree.css("script, style"):
                node.decompose()
            text = tree.body.text(separator=" ") if tree.body is not None else ""
        else:
            text = raw.decode("utf-8", errors="replace")
        for m in word.finditer(text):
            w = fold(m.group())
            if w not in seen:
                seen.add(w)
                yield w


def ending_labeler(lang: str):
    """word -> its ending (or None), from the dictionary (ru) or the Snowball stemmer."""
    if lang == "ru":
        analyzer = russian_analyzer()

        def label(word: str) -> str | None:
            w = word.replace("ё", "е")
            if not _is_cyrillic(w):
                return None
            parse = analyzer.parse(w)[0]
            if not parse.is_known:
                return None
            return w[_stem_length(w, {f.word.replace("ё", "е") for f in parse.lexeme}) :]

        return label
    stemmer = _stemmer(lang)
    if stemmer is None:
        raise SystemExit(f"no dictionary or Snowball stemmer for language {lang!r} to label endings")

    def label(word: str) -> str | None:
        stem = stemmer.stemWord(word)
        return word[len(stem) :] if word.startswith(stem) else None

    return label


def build_endings(paths: list[Path], lang: str, min_stem: int = 3, max_ending: int = 5, min_count: int = 3, source: str = "") -> EndingTable:
    table = EndingTable(lang=lang, min_stem=min_stem, max_ending=max_ending, source=source or ", ".join(p.name for p in paths[:5]))
    words = (w for w in corpus_words(paths) if len(w) > min_stem)
    return table.fit(words, ending_labeler(lang)).prune(min_count)


def evaluate_endings(table: EndingTable, words: Iterable[str], lang: str) -> dict[str, float]:
    """Share of labelled words whose predicted ending equals the label (held-out words)."""
    label = ending_labeler(lang)
    n = hit = 0
    for w in words:
        gold = label(w)
        if gold is None:
            continue
        n += 1
        hit += table.ending(w) == gold
    return {"words": n, "accuracy": hit / n if n else math.nan}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pagetwin.text.morph")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build-endings", help="learn an ending-frequency table from a text corpus")
    b.add_argument("corpus", nargs="+", type=Path, help="text (UTF-8) or HTML files, or folders of them")
    b.add_argument("--lang", required=True, help="ISO 639-1 code of the corpus language")
    b.add_argument("--out", type=Path, required=True)
    b.add_argument("--min-stem", type=int, default=3)
    b.add_argument("--max-ending", type=int, default=5)
    b.add_argument("--min-count", type=int, default=3)
    b.add_argument("--source", default="", help="where the corpus came from (written into the table)")
    args = parser.parse_args(argv)
    files: list[Path] = []
    for p in args.corpus:
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*") if q.is_file() and q.suffix.lower() in (".txt", ".html", ".htm", ".xhtml")))
        elif p.is_file():
            files.append(p)
        else:
            print(f"not found: {p}", file=sys.stderr)
            return 2
    table = build_endings(files, args.lang, args.min_stem, args.max_ending, args.min_count, args.source)
    args.out.write_text(table.to_tsv(), "utf-8")
    print(f"{args.out}: {len(table.n_end_)} endings from {table.n_words_} distinct words of {len(files)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
