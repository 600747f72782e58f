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

_lock = threading.Lock()
# Set once by _load: the labels by class and their alias pairs, py3langid's encoding of a
# text, the native walk and scorer (None without _fast, without the model's cached arrays, or
# for a py3langid or model this was not written for: py3langid's classify() then).
_loaded = False
_encode = None
_classes: list[str] | None = None
_alias_pairs: list[tuple[int, int]] | None = None
_counter = None
_scorer = None
_identifier = None  # py3langid's identifier: made when classify() itself is needed


def _load() -> None:
    global _loaded, _encode, _classes, _alias_pairs, _counter, _scorer
    if _loaded:
        return
    from py3langid.langid import LanguageIdentifier

    with _lock:
        if _loaded:
            return
        # the internals of py3langid 0.4 this was written against
        known = all(hasattr(LanguageIdentifier, name) for name in ("_encode", "_sparse_score"))
        arrays = _cached_model(_model_path()) if known else None
        if arrays is not None:
            _encode = LanguageIdentifier._encode
            _classes = arrays["classes"].tolist()
            _alias_pairs = alias_pairs(_classes)
            _counter = _native_counter(arrays)
            if _counter is not None and arrays["ptc"].dtype == np.float16:
                _scorer = _Scorer(arrays["ptc"], arrays["pc"], _alias_pairs, bool(arrays["ptc_settles"][0]))
        _loaded = True


def _get_identifier():
    """py3langid's identifier over the same model (its classify() is the reference, and the
    path without _fast)."""
    global _identifier
    _load()
    if _identifier is None:
        with _lock:
            if _identifier is None:
                _identifier = _load_identifier()
    return _identifier


def _model_path() -> Path:
    from py3langid.langid import MODEL_DIR, MODEL_FILE

    return Path(MODEL_FILE) if Path(MODEL_FILE).is_absolute() else Path(MODEL_DIR) / MODEL_FILE


def alias_pairs(classes: list[str]) -> list[tuple[int, int]]:
    """(first, dupe) columns of the labels given more than once, as py3langid's
    ``_set_alias_pairs`` makes them."""
    first: dict[str, int] = {}
    pairs = []
    for i, c in enumerate(classes):
        if c in first:
            pairs.append((first[c], i))
        else:
            first[c] = i
    return pairs


def _load_identifier():
    """py3langid's identifier as ``LanguageIdentifier.from_model_file`` makes it, from the
    model's arrays kept unpacked between runs (``text.cache``, named by a digest of the model
    file): un-xz-ing the 4.6 MB model into its 68 MB of arrays costs ~1.2 CPU-s a process (5 %
    of a 2,000-page run), mapping them back ~0.02 s."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    parts = _identifier_parts(_cached_model(_model_path()))
    if parts is None:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    ptc, pc, classes, nextmove, row, output = parts
    return LanguageIdentifier(ptc, pc, classes, nextmove, output, norm_probs=False, tk_row=row)


# The arrays of py3langid's model npz, in the order its load_model returns them; those it
# returns as stdlib arrays, and those as lists.
_MODEL_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")
_STDLIB = frozenset({"nextmove", "nextmove_row"})
_LISTS = frozenset({"classes", "out_feat"})
# The cache's: the model's, the row bases of the native walk (``_rowbase`` as int64), and
# whether its walk stays inside the tables and every log-probability is finite and at most 0
# (_native_counter, _Scorer.can_settle): nothing left to compute when a process loads it.
_CACHED_ARRAYS = _MODEL_ARRAYS + ("rowbase", "dfa_checked", "ptc_settles")
# Named for the arrays it holds: another file than the one of py3langid's arrays alone.
_CACHE_NAME = "langid-native"


def _cached_model(model_path: Path) -> dict[str, np.ndarray] | None:
    """The cache's arrays (``_CACHED_ARRAYS``, read-only, over the mapped file), unpacked and
    written when the cache does not hold them; None when the model cannot be read or
    unpacked here (py3langid then loads it, and says what is wrong)."""
    try:
        packed = model_path.read_bytes()
    except OSError:
        return None
    arrays = cache.mapped_arrays(_CACHE_NAME, packed, lambda: _cache_arrays(_unpack(packed)), _well_formed)
    return arrays if arrays is not None and _well_formed(arrays) else None


# The cache's arrays by dtype (the classes: any unicode width); their lengths agree as below.
_DTYPES = {"ptc": "<f2", "pc": "<f4", "nextmove": "<u4", "nextmove_row": "<u2", "out_feat": "<i4", "rowbase": "<i8",
           "dfa_checked": "|u1", "ptc_settles": "|u1"}  # fmt: skip


def _well_formed(arrays: dict[str, np.ndarray]) -> bool:
    """The cache's arrays have the names, dtypes and agreeing shapes ``_cache_arrays`` gives
    them (what the file's digest does not cover)."""
    if set(arrays) != set(_CACHED_ARRAYS) or arrays["classes"].dtype.kind != "U":
        return False
    if any(arrays[name].dtype.str != dtype for name, dtype in _DTYPES.items()):
        return False
    ptc, n_states = arrays["ptc"], len(arrays["out_feat"])
    return (
        ptc.ndim == 2 and arrays["pc"].shape == arrays["classes"].shape == (ptc.shape[1],)
        and all(arrays[name].shape == (n_states,) for name in ("nextmove_row", "rowbase"))
        and arrays["nextmove"].ndim == 1 and arrays["dfa_checked"].shape == arrays["ptc_settles"].shape == (1,)
    )  # fmt: skip


def _cache_arrays(model: dict[str, np.ndarray] | None) -> dict[str, np.ndarray] | None:
    """What the cache keeps of the model's arrays (``_CACHED_ARRAYS``)."""
    if model is None:
        return None
    nextmove, output, ptc = model["nextmove"], model["out_feat"], model["ptc"]
    rowbase = model["nextmove_row"].astype(np.int64) << 8  # py3langid's _rowbase
    checked = (
        output.dtype == np.int32 and nextmove.dtype == np.uint32 and len(output) == len(rowbase) > 0
        and len(nextmove) > 0 and int(nextmove.max()) < len(output) and int(rowbase.max()) + 256 <= len(nextmove)
        and int(output.max()) < len(ptc)
    )  # fmt: skip
    settles = bool(np.isfinite(ptc).all() and (ptc <= 0).all())
    facts = {"dfa_checked": np.array([checked], dtype=np.uint8), "ptc_settles": np.array([settles], dtype=np.uint8)}
    return model | {"rowbase": rowbase} | facts


def _identifier_parts(arrays: dict[str, np.ndarray] | None) -> tuple | None:
    """The model as py3langid's ``load_model`` returns it (numpy arrays, stdlib arrays and
    lists alike) from the cache's arrays."""
    if arrays is None:
        return None
    return tuple(
        arrays[name].tolist() if name in _LISTS else cache.stdlib_array(arrays[name]) if name in _STDLIB else arrays[name]
        for name in _MODEL_ARRAYS
    )


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
    _load()
    if _counter is None:
        _get_identifier()


def _native_counter(arrays: dict[str, np.ndarray]):
    """A DfaCounter over the cache's DFA, or None (module not built, or a DFA whose walk was
    not found to stay inside its tables: plain classify() then)."""
    try:
        from pagetwin.text import _fast
    except ImportError:
        return None  # analyze.py warns once that the native kernels are missing
    if not arrays["dfa_checked"][0]:
        return None
    output = arrays["out_feat"]
    return _fast.DfaCounter(arrays["nextmove"], arrays["rowbase"], output, int(output.max()) + 1, _WARMUP)


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

    def __init__(self, ptc: np.ndarray, prior: np.ndarray, alias_pairs: list[tuple[int, int]], settles: bool) -> None:
        """``settles``: every log-probability of ``ptc`` is finite and at most 0 (the cache
        keeps it: _cache_arrays)."""
        from pagetwin.text import _fast
        from py3langid.langid import RAW_FLOOR

        self.gather = _fast.gather_rows
        self.sum_rows = _fast.sum_rows
        self.settled_class = _fast.settled_class
        self.bits = np.ascontiguousarray(ptc).view(np.uint16)
        self.half_to_float = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
        self.prior = prior
        self.prior64 = np.asarray(prior, dtype=np.float64)
        self.alias_pairs = list(alias_pairs)
        self.alias_array = np.array(self.alias_pairs, dtype=np.intp).reshape(-1, 2)
        self.floor = float(np.float32(RAW_FLOOR))
        # The bound below takes sum(|x * p|) as -sum(x * p): true when every log-probability
        # is at most 0 (py3langid's all are), and the counts' log1p is positive
        self.can_settle = settles and bool(np.isfinite(self.prior64).all())

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
    _load()
    if _counter is None:
        return _get_identifier().classify(sample)[0]
    encoded = _encode(sample)
    if _scorer is None:
        return _decided(_scores(encoded))
    rows, counts = _counter.visit_arrays(encoded)
    if not len(rows):
        return _decided(None)
    best = _scorer.settled(rows, counts)
    return _classes[best] if best is not None else _decided(_scorer(rows, counts))


def _decided(scores: np.ndarray | None) -> str:
    """The label of py3langid's raw scores (None: no feature visited), aliases folded as its
    ``_decide`` folds them without norm_probs."""
    from py3langid.langid import RAW_FLOOR

    if scores is None:
        scores = np.full(len(_classes), RAW_FLOOR, dtype=np.float32)
    for i, j in _alias_pairs:
        scores[i] = max(scores[i], scores[j])
        scores[j] = RAW_FLOOR
    return _classes[int(scores.argmax())]


def _scores(encoded: bytes) -> np.ndarray | None:
    """py3langid's raw scores of the encoded sample (``_sparse_score`` over the native walk's
    visits), None when it visits no feature: when there is no ``_scorer`` (a table not float16;
    ``_classify`` scores with it otherwise)."""
    visits = _counter.visits(encoded)
    identifier = _get_identifier()
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
