"""Language identification of a page's main text (py3langid, loaded once per process).

Measured on 248 real pages of known origin (bench/text_corpus.py: chinese_wce, the servo and
resiliparse crawls, scrapinghub articles, Debian FAQ and GIMP help in ru/ja/zh/en): every page
py3langid's full 97-language model labelled differently from its source turned out, when read,
to be in the language py3langid said (untranslated English appendices of GIMP help, Korean,
Italian, Portuguese, Indonesian and Russian articles in scrapinghub) except the Tmall/Taobao
home pages, labelled "wuu" (Wu Chinese). So the model is not restricted to a few languages;
Chinese varieties written in Han characters are mapped to "zh" (they need the same segmenter).
Classifying the first 4,000 characters is as accurate as the whole text on those pages and
keeps long pages cheap (py3langid reads about 2.5-4 M characters/s here). The first 2,000 are
not: on the Debian documentation pages of bench/text_speed.py (ru/ja/zh/en, 324 pages) they
move 3 pages away from the whole text's label (two GIMP help pages whose first section is
untranslated English; a Japanese bibliography read as Nigerian Pidgin), which the first 4,000
give (session 9, bench/RESULTS.md), although the main texts of ../shared/data keep their labels.

The byte DFA that counts the model's n-gram features runs natively (``_fast.DfaCounter`` over
py3langid's own tables, several pieces of the sample walked at once: each byte's step waits on a
cache miss in the 39 MB table, and independent walks overlap them); the scores are then py3langid's own (``_sparse_score``, the alias
folding of ``_decide``), so the labels are the same as ``classify`` gives
(``detect_language_reference``), only faster.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from pagetwin.text import cache

UNDETERMINED = "und"
SAMPLE_CHARS = 4000
# Han-script varieties py3langid knows; they share the Chinese segmenter and stop words.
_ALIASES = {"wuu": "zh", "yue": "zh", "zxx": UNDETERMINED}

# Bytes a piece of the native DFA walk is walked before it starts (DfaCounter.visit_arrays):
# py3langid's features are n-grams of up to 4 bytes, so after 16 bytes its state is that of
# the whole text; the walk checks it and walks again in one piece if not.
_WARMUP = 16

_identifier = None
_counter = None  # the native DFA walk over _identifier's tables; None without _fast
_scorer = None  # _sparse_score with the native gather of float16 rows; None without _fast
_lock = threading.Lock()


def _get_identifier():
    global _identifier, _counter, _scorer
    if _identifier is None:
        with _lock:
            if _identifier is None:
                identifier = _load_identifier()
                _counter = _native_counter(identifier)
                if _counter is not None and identifier.nb_ptc.dtype == np.float16:
                    _scorer = _Scorer(identifier)
                _identifier = identifier
    return _identifier


def _load_identifier():
    """py3langid's identifier as ``LanguageIdentifier.from_model_file`` makes it, from the
    model's arrays kept unpacked between runs (``text.cache``, named by a digest of the model
    file): un-xz-ing the 4.6 MB model into its 68 MB of arrays costs ~1.2 CPU-s a process (5 %
    of a 2,000-page run), reading them back ~0.07 s."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    path = Path(MODEL_FILE) if Path(MODEL_FILE).is_absolute() else Path(MODEL_DIR) / MODEL_FILE
    parts = _cached_model(path)
    if parts is None:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    ptc, pc, classes, nextmove, row, output = parts
    return LanguageIdentifier(ptc, pc, classes, nextmove, output, norm_probs=False, tk_row=row)


# The arrays of py3langid's model npz, in the order its load_model returns them; those it
# returns as stdlib arrays, and those as lists.
_MODEL_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")
_STDLIB = frozenset({"nextmove", "nextmove_row"})
_LISTS = frozenset({"classes", "out_feat"})


def _cached_model(model_path: Path) -> tuple | None:
    """The model as py3langid's ``load_model`` returns it (numpy arrays, stdlib arrays and lists
    alike), through the cache; None when the model cannot be read or unpacked here (the caller
    then lets py3langid load it, and say what is wrong)."""
    try:
        packed = model_path.read_bytes()
    except OSError:
        return None
    arrays = cache.cached_arrays("langid", packed, lambda: _unpack(packed), _STDLIB)
    if arrays is None or set(arrays) != set(_MODEL_ARRAYS):
        return None
    return tuple(arrays[name].tolist() if name in _LISTS else arrays[name] for name in _MODEL_ARRAYS)


def _unpack(packed: bytes) -> dict[str, np.ndarray] | None:
    """The model's arrays, un-xz-ed through a temporary file as py3langid does (the 68 MB npz
    is never held whole)."""
    import io
    import lzma
    import shutil
    import tempfile

    try:
        with tempfile.TemporaryFile(suffix=".npz") as tmp:
            with lzma.open(io.BytesIO(packed)) as src:
                shutil.copyfileobj(src, tmp, length=1 << 20)
            tmp.seek(0)
            with np.load(tmp, allow_pickle=False) as data:
                if not set(_MODEL_ARRAYS) <= set(data.files):
                    return None
                return {name: data[name] for name in _MODEL_ARRAYS}
    except (lzma.LZMAError, ValueError, OSError, EOFError):
        return None


def load_model() -> None:
    """Load the model now rather than at the first text: before a pool of workers is forked,
    so that they share its pages instead of each loading it (runners.local)."""
    _get_identifier()


def _native_counter(identifier):
    """A DfaCounter over the identifier's DFA, or None (module not built, or a py3langid whose
    internals differ from the 0.4 ones this was written against: plain classify() then)."""
    try:
        from pagetwin.text import _fast
    except ImportError:
        return None  # analyze.py warns once that the native kernels are missing
    needed = ("tk_nextmove", "_rowbase", "tk_output", "_encode", "_sparse_score", "_alias_pairs", "nb_ptc")
    if not all(hasattr(identifier, name) for name in needed):
        return None
    output = np.asarray(identifier.tk_output, dtype=np.int32)
    rowbase = np.asarray(identifier._rowbase, dtype=np.int64)
    nextmove = np.frombuffer(identifier.tk_nextmove, dtype=np.uint32)
    n_features = int(output.max()) + 1
    if n_features > len(identifier.nb_ptc) or int(nextmove.max()) >= len(output) or int(rowbase.max()) + 256 > len(nextmove):
        return None
    return _fast.DfaCounter(nextmove, rowbase, output, n_features, _WARMUP)


# float32's and float64's unit roundoff
_U32 = 2.0**-24
_U64 = 2.0**-53


class _Scorer:
    """py3langid's ``_sparse_score`` (log1p(counts) @ nb_ptc[features] + nb_pc), with the rows
    gathered and made float32 natively (``_fast.gather_rows``): numpy's product of a float32
    vector with float16 rows casts them to float32 first, one element at a time, which costs
    more than the product; here the same float32 matrix goes into the same product.

    ``settled`` gives the label without that product when it is certain: the scores summed in
    double (``_fast.sum_rows``: no matrix made) are within a bound of the float32 scores
    numpy's product gives, whatever order or fused operations it sums in; when the first
    label's lowest possible score beats every other's highest, py3langid's argmax is that
    label. Else (a near tie, rare) the product decides as before."""

    def __init__(self, identifier) -> None:
        from pagetwin.text import _fast
        from py3langid.langid import RAW_FLOOR

        self.gather = _fast.gather_rows
        self.sum_rows = _fast.sum_rows
        self.settled_class = _fast.settled_class
        self.bits = np.ascontiguousarray(identifier.nb_ptc).view(np.uint16)
        self.half_to_float = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
        self.prior = identifier.nb_pc
        self.prior64 = np.asarray(identifier.nb_pc, dtype=np.float64)
        self.alias_pairs = list(identifier._alias_pairs)
        self.alias_array = np.array(self.alias_pairs, dtype=np.intp).reshape(-1, 2)
        self.floor = float(np.float32(RAW_FLOOR))
        # The bound below takes sum(|x * p|) as -sum(x * p): true when every log-probability
        # is at most 0 (py3langid's all are), and the counts' log1p is positive
        table = np.asarray(identifier.nb_ptc)
        self.can_settle = bool(np.isfinite(table).all() and (table <= 0).all() and np.isfinite(self.prior64).all())

    def __call__(self, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Scores of the features ``rows`` (intp) seen ``counts`` (float32) times, in the order
        of py3langid's visits (DfaCounter.visit_arrays): the order of its sum, so its rounding."""
        return np.log1p(counts) @ self.gather(self.bits, rows, self.half_to_float) + self.prior

    def settled(self, rows: np.ndarray, counts: np.ndarray) -> int | None:
        """The class py3langid's ``_decide`` + argmax gives these features (the scores of
        ``__call__``, aliases folded), when a bound proves it; None when it cannot.
        ``settled_reference`` done natively in one call (``_fast.settled_class``: the same
        double operations in the same order, without a dozen numpy calls on 142 values)."""
        if not self.can_settle:
            return None
        best = self.settled_class(self.bits, rows, np.log1p(counts), self.half_to_float, self.prior64, self.alias_array, self.floor)
        return best if best >= 0 else None

    def settled_reference(self, rows: np.ndarray, counts: np.ndarray) -> int | None:
        """``settled`` with numpy: the bound, step by step."""
        if not self.can_settle:
            return None
        x = np.log1p(counts)  # the float32 weights the product reads
        sums = self.sum_rows(self.bits, rows, x, self.half_to_float)
        n = len(rows)
        # numpy's float32 sum of n products, in any order and with or without fused
        # multiply-adds, is within gamma(n + 1) * sum|x p| of the exact sum (Higham, Accuracy
        # and Stability of Numerical Algorithms, 3.1); the double sum here within
        # gamma64(n) * sum|x p|; adding the prior rounds once more. Twice that, to spare the
        # bound's own roundings.
        gamma32 = (n + 1) * _U32 / (1 - (n + 1) * _U32)
        gamma64 = n * _U64 / (1 - n * _U64)
        values = sums + self.prior64
        err = (gamma32 + gamma64) * -sums
        err = 2.0 * (err + _U32 * (np.abs(values) + err)) + 1e-30
        low, high = values - err, values + err
        for i, j in self.alias_pairs:  # as _decide folds the scores: the bounds alike
            values[i], low[i], high[i] = max(values[i], values[j]), max(low[i], low[j]), max(high[i], high[j])
            values[j] = low[j] = high[j] = self.floor
        best = int(values.argmax())
        lowest = low[best]
        high[best] = -np.inf
        return best if lowest > high.max() else None


def _classify(sample: str) -> str:
    """py3langid's label of ``sample``: its classify(), with the DFA walk done natively."""
    identifier = _get_identifier()
    if _counter is None:
        return identifier.classify(sample)[0]
    from py3langid.langid import RAW_FLOOR

    encoded = identifier._encode(sample)
    if _scorer is not None:
        rows, counts = _counter.visit_arrays(encoded)
        best = _scorer.settled(rows, counts) if len(rows) else None
        if best is not None:
            return identifier.nb_classes[best]
        scores = _scorer(rows, counts) if len(rows) else None
    else:
        scores = _scores(identifier, encoded)
    if scores is None:
        scores = np.full(len(identifier.nb_classes), RAW_FLOOR, dtype=np.float32)
    for i, j in identifier._alias_pairs:  # as _decide does without norm_probs
        scores[i] = max(scores[i], scores[j])
        scores[j] = RAW_FLOOR
    return identifier.nb_classes[int(scores.argmax())]


def _scores(identifier, encoded: bytes) -> np.ndarray | None:
    """py3langid's raw scores of the encoded sample (``_sparse_score`` over the native walk's
    visits), None when it visits no feature: when there is no ``_scorer`` (a table not float16;
    ``_classify`` scores with it otherwise)."""
    visits = _counter.visits(encoded)
    return identifier._sparse_score(visits, identifier.nb_ptc) if visits else None


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
    lang = _classify(sample)
    return _ALIASES.get(lang, lang)


def detect_language_reference(text: str, min_letters: int = 3) -> str:
    """``detect_language`` through py3langid's classify() alone (the reference of _classify)."""
    sample = text[:SAMPLE_CHARS]
    if _letter_count(sample, min_letters) < min_letters:
        return UNDETERMINED
    lang, _ = _get_identifier().classify(sample)
    return _ALIASES.get(lang, lang)
