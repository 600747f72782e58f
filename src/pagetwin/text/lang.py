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

The byte DFA that counts the model's n-gram features runs natively (``_fast.DfaCounter`` over
py3langid's own tables, several pieces of the sample walked at once: each byte's step waits on a
cache miss in the 39 MB table, and independent walks overlap them); the scores are then py3langid's own (``_sparse_score``, the alias
folding of ``_decide``), so the labels are the same as ``classify`` gives
(``detect_language_reference``), only faster.
"""

from __future__ import annotations

import json
import os
import threading
from array import array
from pathlib import Path

import numpy as np
import xxhash

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


def cache_dir() -> Path | None:
    """Where the unpacked model is kept between runs: $PAGETWIN_CACHE_DIR, else
    $XDG_CACHE_HOME/pagetwin, else ~/.cache/pagetwin; None without a home folder."""
    if os.environ.get("PAGETWIN_CACHE_DIR"):
        return Path(os.environ["PAGETWIN_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "pagetwin"
    try:
        return Path.home() / ".cache" / "pagetwin"
    except RuntimeError:
        return None


def _load_identifier():
    """py3langid's identifier as ``LanguageIdentifier.from_model_file`` makes it, from the
    model's arrays kept unpacked in ``cache_dir()``: un-xz-ing the 4.6 MB model into its 68 MB
    of arrays costs ~1 CPU-s a process (5 % of a 2,000-page run), reading them back ~0.05 s.
    The cache file is named by a digest of the model file and holds a digest of its own
    bytes: a changed model gets a new file, a damaged one is unpacked and written again. A
    folder that cannot be written costs only the unpacking."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    path = Path(MODEL_FILE) if Path(MODEL_FILE).is_absolute() else Path(MODEL_DIR) / MODEL_FILE
    parts = _cached_model(path)
    if parts is None:
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)
    ptc, pc, classes, nextmove, row, output = parts
    return LanguageIdentifier(ptc, pc, classes, nextmove, output, norm_probs=False, tk_row=row)


_CACHE_FORMAT = 1
# The arrays of py3langid's model npz, in the order its load_model returns them.
_MODEL_ARRAYS = ("ptc", "pc", "classes", "nextmove", "nextmove_row", "out_feat")
# Those it returns as stdlib arrays (typecode by item size), and those as lists.
_STDLIB = {"nextmove", "nextmove_row"}
_LISTS = {"classes", "out_feat"}
_TYPECODES = {2: "H", 4: "I", 8: "L"}


def _cached_model(model_path: Path) -> tuple | None:
    """The model as py3langid's ``load_model`` returns it (numpy arrays, stdlib arrays and lists
    alike), from the cache, unpacking and storing it first if it is not there or not whole;
    None when the model cannot be read or unpacked here (the caller then lets py3langid load
    it, and say what is wrong)."""
    folder = cache_dir()
    try:
        packed = model_path.read_bytes() if folder is not None else None
    except OSError:
        packed = None
    if packed is None:
        return None
    target = folder / f"langid-{_CACHE_FORMAT}-{xxhash.xxh3_64_hexdigest(packed)}.bin"
    parts = _read_cache(target)
    if parts is None:
        arrays = _unpack(packed)
        if arrays is None:
            return None
        _write_cache(target, arrays)
        parts = _read_cache(target) or _as_loaded(arrays)
    return tuple(parts[name] for name in _MODEL_ARRAYS)


def _as_loaded(arrays: dict[str, np.ndarray]) -> dict:
    def stdlib(a: np.ndarray) -> array:
        out = array(_TYPECODES[a.dtype.itemsize])
        out.frombytes(np.ascontiguousarray(a).tobytes())
        return out

    return {name: stdlib(a) if name in _STDLIB else a.tolist() if name in _LISTS else a for name, a in arrays.items()}


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


def _write_cache(target: Path, arrays: dict[str, np.ndarray]) -> None:
    """One file: a JSON line (each array's dtype and shape, the payload's size and digest),
    then the arrays' bytes in order. Written beside the target and renamed, so that a reader
    finds all of it or none; a folder that cannot be written is left as it is."""
    parts = [np.ascontiguousarray(arrays[name]) for name in _MODEL_ARRAYS]
    digest = xxhash.xxh3_64()
    for part in parts:
        digest.update(_raw(part))
    layout = [[name, part.dtype.str, list(part.shape)] for name, part in zip(_MODEL_ARRAYS, parts)]
    head = {"arrays": layout, "size": sum(part.nbytes for part in parts), "xxh3": digest.hexdigest()}
    temp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(temp, "wb") as out:
            out.write(json.dumps(head).encode() + b"\n")
            for part in parts:
                out.write(_raw(part))
        os.replace(temp, target)
    except OSError:
        try:
            temp.unlink(missing_ok=True)
        except OSError:
            pass


def _raw(data: np.ndarray | array) -> memoryview:
    """The bytes of a contiguous array, writable where it is (memoryview.cast refuses empty
    arrays, and numpy's unicode arrays)."""
    if isinstance(data, np.ndarray):
        return memoryview(data.reshape(-1).view(np.uint8))
    return memoryview(data).cast("B")


def _read_cache(target: Path) -> dict | None:
    """The model from a cache file, each array read straight into the object py3langid's
    loader gives (no copy of the whole file is held: the process's peak stays that of the
    model); None when the file is absent, cut short, longer, or its digest differs."""
    try:
        with open(target, "rb") as f:
            head = json.loads(f.readline())
            digest = xxhash.xxh3_64()
            parts = {}
            for name, dtype, shape in head["arrays"]:
                dt = np.dtype(dtype)
                count = int(np.prod(shape, dtype=np.int64))
                if name in _STDLIB:
                    into = array(_TYPECODES[dt.itemsize], [0]) * count
                    if into.itemsize != dt.itemsize or dt.kind != "u":
                        return None
                else:
                    into = np.empty(shape, dtype=dt)
                view = _raw(into)
                if f.readinto(view) != len(view):
                    return None
                digest.update(view)
                parts[name] = into.tolist() if name in _LISTS else into
            if f.read(1) or digest.hexdigest() != head["xxh3"] or list(parts) != list(_MODEL_ARRAYS):
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return parts


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


class _Scorer:
    """py3langid's ``_sparse_score`` (log1p(counts) @ nb_ptc[features] + nb_pc), with the rows
    gathered and made float32 natively (``_fast.gather_rows``): numpy's product of a float32
    vector with float16 rows casts them to float32 first, one element at a time, which costs
    more than the product; here the same float32 matrix goes into the same product."""

    def __init__(self, identifier) -> None:
        from pagetwin.text import _fast

        self.gather = _fast.gather_rows
        self.bits = np.ascontiguousarray(identifier.nb_ptc).view(np.uint16)
        self.half_to_float = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)
        self.prior = identifier.nb_pc

    def __call__(self, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Scores of the features ``rows`` (intp) seen ``counts`` (float32) times, in the order
        of py3langid's visits (DfaCounter.visit_arrays): the order of its sum, so its rounding."""
        return np.log1p(counts) @ self.gather(self.bits, rows, self.half_to_float) + self.prior


def _classify(sample: str) -> str:
    """py3langid's label of ``sample``: its classify(), with the DFA walk done natively."""
    identifier = _get_identifier()
    if _counter is None:
        return identifier.classify(sample)[0]
    from py3langid.langid import RAW_FLOOR

    scores = _scores(identifier, identifier._encode(sample))
    if scores is None:
        scores = np.full(len(identifier.nb_classes), RAW_FLOOR, dtype=np.float32)
    for i, j in identifier._alias_pairs:  # as _decide does without norm_probs
        scores[i] = max(scores[i], scores[j])
        scores[j] = RAW_FLOOR
    return identifier.nb_classes[int(scores.argmax())]


def _scores(identifier, encoded: bytes) -> np.ndarray | None:
    """py3langid's raw scores of the encoded sample (``_sparse_score``), None when it visits
    no feature."""
    if _scorer is not None:
        rows, counts = _counter.visit_arrays(encoded)
        return _scorer(rows, counts) if len(rows) else None
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
