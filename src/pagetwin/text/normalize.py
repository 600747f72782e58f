"""Text and URL normalization kernels (pure functions)."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache
from urllib.parse import urlsplit

import numpy as np
import xxhash


try:
    from pagetwin.text import _fast
except ImportError:  # not compiled: analyze.py says so once; text_digest joins in Python
    _fast = None


def normalize_text(text: str) -> str:
    """NFKC, case folding, whitespace collapsed: the form exact digests are taken of.

    Idempotent: normalize_text(normalize_text(t)) == normalize_text(t).
    """
    if text.isascii():  # NFKC leaves ASCII as it is, and casefold is lower there
        return " ".join(text.lower().split())
    # str.split() splits at the characters re's \s matches (str.isspace), and drops the ends
    return " ".join(_folded(text).split())


def _folded(text: str) -> str:
    """NFKC and case folding of a non-ASCII text, repeated until stable (spaces as they are)."""
    # casefold can produce characters that NFKC changes again (and the other way round), so
    # repeat until stable; it settles in one round on nearly all real text, which the cheap
    # check (already NFKC) tells without a second round. A casefolded text needs no check that
    # casefold changes nothing: str.casefold maps each character alone and is idempotent on
    # every code point (tests/text/test_normalize.py checks all 1,114,112).
    prev = None
    if _fast is not None:
        # the characters NFKC changes alone (fullwidth punctuation, "…", no-break spaces: 1 in
        # 9 pages of corpus-2000, whose NFKC then costs ~0.6 ms) replaced by their NFKC first:
        # the text's NFKD, so its NFKC, is the same, and the quick check inside normalize()
        # now passes most such texts instead of normalizing them whole
        changed, replacement = _compat_table()
        text = _fast.compat_substitute(text, changed, replacement)
    out = unicodedata.normalize("NFKC", text).casefold()
    while out != prev and not unicodedata.is_normalized("NFKC", out):
        prev = out
        out = unicodedata.normalize("NFKC", out).casefold()
    return out


@cache
def _compat_table() -> tuple[np.ndarray, dict[int, str]]:
    """(flags, replacement): the Basic Multilingual Plane's characters that NFKC changes when
    alone, flagged by code point, and their NFKC; from unicodedata itself (~6 ms, once)."""
    replacement = {}
    for code in range(0x10000):
        if not 0xD800 <= code <= 0xDFFF:
            char = chr(code)
            normal = unicodedata.normalize("NFKC", char)
            if normal != char:
                replacement[code] = normal
    flags = np.zeros(0x10000, dtype=np.uint8)
    flags[list(replacement)] = 1
    flags.flags.writeable = False
    return flags, replacement


# Hangul's conjoining jamo: they compose with what precedes them by an algorithm, not by the
# decompositions unicodedata lists (fold_table's "may compose" marks them by range).
_JAMO_RANGES = ((0x1100, 0x1200), (0xA960, 0xA980), (0xD7B0, 0xD800))
FOLD_IDENTITY = 1  # fold_table's index: the character folds to itself
FOLD_LENGTH_BITS = 5  # fold_table's index: (offset << 5) | length of the folded code points


@cache
def fold_table() -> tuple[np.ndarray, np.ndarray]:
    """(index, pool): what ``_folded`` makes of each code point, where it can be done a
    character at a time (``_fast.fold_collapse_utf8``). Built from unicodedata and str.casefold
    (~1.7 CPU-s, once) and kept between runs (``text.cache``, named by the Unicode and Python
    versions)."""
    from pagetwin.text.cache import cached_arrays

    source = repr(("fold-table", 1, unicodedata.unidata_version, tuple(sys.version_info[:3]))).encode()
    arrays = cached_arrays("fold-table", source, fold_table_reference)
    index, pool = arrays["index"], arrays["pool"]
    if index.shape != (0x110000,) or index.dtype != np.uint32 or pool.dtype != np.uint32:
        built = fold_table_reference()
        index, pool = built["index"], built["pool"]
    index.flags.writeable = False
    pool.flags.writeable = False
    return index, pool


def fold_table_reference() -> dict[str, np.ndarray]:
    """``fold_table`` built here and now.

    A character c is *plain* when NFKC leaves it alone, its combining class is 0 and nothing
    composes with what precedes it (it is no second character of a canonical decomposition
    pair, nor a conjoining jamo): in a text of plain characters NFKC changes nothing (its
    quick check says so from each character alone). c gets an entry when its NFKC d (c, or
    what NFKC makes of c alone: replacing c by d leaves the text's NFKC as it was, as
    ``_fast.compat_substitute`` does) and the case folding of d are plain characters: then
    a text of such characters folds (``_folded``) to the concatenation of its characters'
    entries, in one round (the result is plain, so NFKC's check passes it). index[c] is 0
    (no entry: the caller folds the whole text), FOLD_IDENTITY, or (offset << 5) | length of
    the folded code points in pool."""
    codes = np.arange(0x110000, dtype="<u4")
    surrogate = (codes >= 0xD800) & (codes < 0xE000)
    every = [chr(c) for c in codes[~surrogate & (codes > 0)].tolist()]  # U+0000 is the separator below; it is plain
    # NFKC and case folding of each character alone, all at once: U+0000 between them is a
    # starter that composes with nothing, so no character's result reaches into another's
    normal = unicodedata.normalize("NFKC", "\x00".join(every)).split("\x00")
    folded = "\x00".join(normal).casefold().split("\x00")
    if len(normal) != len(every) or len(folded) != len(every):
        raise ValueError("a character's NFKC or folding held U+0000")
    composes = set()  # characters that compose with what precedes them
    for ch in every:
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                composes.add(int(parts[1], 16))
    for low, high in _JAMO_RANGES:
        composes.update(range(low, high))
    plain = np.zeros(0x110000, dtype=bool)
    plain[0] = True
    for ch, n in zip(every, normal):
        code = ord(ch)
        plain[code] = n == ch and unicodedata.combining(ch) == 0 and code not in composes
    index = np.zeros(0x110000, dtype=np.uint32)
    index[0] = FOLD_IDENTITY
    pool = [0]
    limit = (1 << FOLD_LENGTH_BITS) - 1
    for ch, n, f in zip(every, normal, folded):
        if not (all(plain[ord(x)] for x in n) and all(plain[ord(x)] for x in f)) or len(f) > limit:
            continue
        if f == ch:
            index[ord(ch)] = FOLD_IDENTITY
        else:
            index[ord(ch)] = (len(pool) << FOLD_LENGTH_BITS) | len(f)
            pool.extend(map(ord, f))
    return {"index": index, "pool": np.asarray(pool, dtype=np.uint32)}


def text_digest(text: str) -> str:
    """Hex xxh3-128 of the normalized text (its UTF-8)."""
    if _fast is not None:
        # natively, a character at a time, when every character has an entry in fold_table
        # (NFKC, folding, spaces collapsed and UTF-8 in one pass); else as below
        data = _fast.fold_collapse_utf8(text, *fold_table())
        if data is not None:
            return xxhash.xxh3_128_hexdigest(data)
    ascii_only = text.isascii()
    folded = text if ascii_only else _folded(text)
    # natively: the words' spaces collapsed straight into UTF-8 (no list of words, no joined
    # string); None for a surrogate, which the encode below refuses as it always did
    data = _fast.collapse_utf8(folded, ascii_only) if _fast is not None else None
    if data is None:
        data = " ".join((folded.lower() if ascii_only else folded).split()).encode("utf-8")
    return xxhash.xxh3_128_hexdigest(data)


# "scheme://host[:port]" then the path, query, fragment or the end, the host of plain ASCII
# letters, digits, "-", "_" and ".": what urlsplit(url).hostname gives is then the host as
# written (no user info, brackets, controls or characters it would check or remove)
_PLAIN_HOST = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([A-Za-z0-9._-]*)(?::[0-9]*)?(?=[/?#]|\Z)")


def url_host(url: str) -> str:
    """Lower-case host of a URL without port and leading "www."; "" when there is none.
    (Asked up to four times a page: a plain URL's host is read by one regex match, not
    ``urlsplit``, 4x faster; ``url_host_reference`` always splits, the same answer.)"""
    url = url.strip()
    plain = _PLAIN_HOST.match(url)
    return _bare_host(plain.group(1)) if plain else url_host_reference(url)


def url_host_reference(url: str) -> str:
    """``url_host`` by ``urlsplit``."""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""
    return _bare_host(host)


def _bare_host(host: str) -> str:
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host
