"""Text and URL normalization kernels (pure functions)."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

import xxhash

_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """NFKC, case folding, whitespace collapsed: the form exact digests are taken of.

    Idempotent: normalize_text(normalize_text(t)) == normalize_text(t).
    """
    # casefold can produce characters that NFKC changes again (and the other way round), so
    # repeat until stable; it settles in one or two rounds on real text.
    prev = None
    out = text
    while out != prev:
        prev = out
        out = unicodedata.normalize("NFKC", out).casefold()
    return _SPACE.sub(" ", out).strip()


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
