"""Language identification of a page's main text (py3langid, loaded once per process).

Measured on 248 real pages of known origin (bench/text_corpus.py: chinese_wce, the servo and
resiliparse crawls, scrapinghub articles, Debian FAQ and GIMP help in ru/ja/zh/en): every page
py3langid's full 97-language model labelled differently from its source turned out, when read,
to be in the language py3langid said (untranslated English appendices of GIMP help, Korean,
Italian, Portuguese, Indonesian and Russian articles in scrapinghub) except the Tmall/Taobao
home pages, labelled "wuu" (Wu Chinese). So the model is not restricted to a few languages;
Chinese varieties written in Han characters are mapped to "zh" (they need the same segmenter).
Classifying the first 4,000 characters is as accurate as the whole text on those pages and
keeps long pages cheap (py3langid reads about 2.5-4 M characters/s here).
"""

from __future__ import annotations

import threading

UNDETERMINED = "und"
SAMPLE_CHARS = 4000
# Han-script varieties py3langid knows; they share the Chinese segmenter and stop words.
_ALIASES = {"wuu": "zh", "yue": "zh", "zxx": UNDETERMINED}

_identifier = None
_lock = threading.Lock()


def _get_identifier():
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    return _identifier


def _letter_count(text: str, limit: int = 20) -> int:
    n = 0
    for ch in text:
        if ch.isalpha():
            n += 1
            if n >= limit:
                break
    return n


def detect_language(text: str, min_letters: int = 3) -> str:
    """ISO 639-1 code (or py3langid's code for languages without one) of ``text``; "und" when
    the text has fewer than ``min_letters`` letters."""
    sample = text[:SAMPLE_CHARS]
    if _letter_count(sample, min_letters) < min_letters:
        return UNDETERMINED
    lang, _ = _get_identifier().classify(sample)
    return _ALIASES.get(lang, lang)
