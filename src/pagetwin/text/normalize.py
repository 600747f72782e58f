"""Text and URL normalization kernels (pure functions)."""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

import xxhash


def normalize_text(text: str) -> str:
    """NFKC, case folding, whitespace collapsed: the form exact digests are taken of.

    Idempotent: normalize_text(normalize_text(t)) == normalize_text(t).
    """
    if text.isascii():  # NFKC leaves ASCII as it is, and casefold is lower there
        return " ".join(text.lower().split())
    # casefold can produce characters that NFKC changes again (and the other way round), so
    # repeat until stable; it settles in one round on nearly all real text, which the cheap
    # check (already NFKC) tells without a second round. A casefolded text needs no check that
    # casefold changes nothing: str.casefold maps each character alone and is idempotent on
    # every code point (tests/text/test_normalize.py checks all 1,114,112).
    prev = None
    out = unicodedata.normalize("NFKC", text).casefold()
    while out != prev and not unicodedata.is_normalized("NFKC", out):
        prev = out
        out = unicodedata.normalize("NFKC", out).casefold()
    # str.split() splits at the characters re's \s matches (str.isspace), and drops the ends
    return " ".join(out.split())


def text_digest(text: str) -> str:
    """Hex xxh3-128 of the normalized text."""
    return xxhash.xxh3_128_hexdigest(normalize_text(text).encode("utf-8"))


def url_host(url: str) -> str:
    """Lower-case host of a URL without port and leading "www."; "" when there is none."""
    try:
        host = urlsplit(url.strip()).hostname or ""
    except ValueError:
        return ""
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host
