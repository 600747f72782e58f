"""Text and URL normalization kernels (pure functions)."""

from __future__ import annotations

import re
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


def text_digest(text: str) -> str:
    """Hex xxh3-128 of the normalized text (its UTF-8)."""
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
