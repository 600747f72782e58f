"""The records that flow through pagetwin, one way:

source -> Page -> Doc (analysed page) -> fingerprints -> index -> Edge (clusters are made of
edges by ``cluster.py``).

Records are small and picklable (they cross process boundaries in the local runner and
Spark). Nothing here knows about an engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Page:
    """One input page as a source yields it: the HTML payload, undecoded, plus its provenance.

    ``body`` is the HTTP payload after transfer- and content-decoding (chunked, gzip, deflate,
    brotli), still bytes: charset decoding is the parser's job (html.parse.decode_html).
    A ``revisit`` record has an empty body and names the payload digest it repeats.
    """

    id: str  # WARC-Record-ID, or a path relative to the folder given, or jsonl "file:line"
    url: str
    body: bytes = b""
    http_charset: str | None = None  # charset from the Content-Type header, if any
    crawl_date: str | None = None  # ISO 8601 when known
    payload_digest: str | None = None  # "sha1:BASE32" as in WARC-Payload-Digest
    source: str = ""  # the input file this came from
    kind: str = "response"  # "response" or "revisit"
    refers_to_digest: str | None = None  # revisit: the payload digest it repeats
    refers_to_uri: str | None = None
    truncated: bool = False  # body was cut (record clipped, or over max_page_bytes)
    meta: dict[str, Any] = field(default_factory=dict)  # other jsonl fields, WARC extras
    # The site whose template the page is learned with, when its URL cannot tell (an HTML file
    # with no host evidence: the folder it was given in); "" = the URL's host.
    site: str = ""
    # Pass 1's parse of the body (html.blocks.ParsedPage bytes), attached by the runner so that
    # pass 2 need not parse again; b"" otherwise.
    parsed: bytes = b""

    @property
    def host(self) -> str:
        from pagetwin.text.normalize import url_host

        return url_host(self.url)


@dataclass(slots=True)
class ImageRef:
    """An image of the page's main content."""

    url: str  # resolved and normalised (resize / cache-busting parameters stripped)
    alt: str = ""
    width: int | None = None
    height: int | None = None
    phash: int | None = None  # 64-bit perceptual hash, when the crawl holds the image bytes
    title: str = ""  # the title attribute


@dataclass(slots=True)
class Doc:
    """A page after extraction and text analysis: everything the fingerprints need."""

    page_id: str
    url: str
    host: str
    crawl_date: str | None
    text: str  # main text after noise and template removal; paragraphs separated by "\n"
    title: str = ""
    description: str = ""  # meta description ("" when the page has none)
    lang: str = "und"
    # Normal forms (lemma / stem, case-folded) of the words of `text`, in order, stop words
    # included; `stop` marks which of them are stop words.
    tokens: list[str] = field(default_factory=list)
    stop: list[bool] = field(default_factory=list)
    keywords: list[tuple[str, float]] = field(default_factory=list)  # top N, highest first
    images: list[ImageRef] = field(default_factory=list)
    payload_digest: str | None = None
    text_digest: str = ""  # hex xxh3-128 of the normalized text

    def content_tokens(self) -> list[str]:
        """The tokens that are not stop words."""
        if not self.stop:
            return list(self.tokens)
        return [t for t, s in zip(self.tokens, self.stop) if not s]


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one algorithm said about one candidate pair."""

    algorithm: str
    score: float  # the algorithm's similarity (1.0 = identical)
    passed: bool
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Edge:
    """A verified duplicate relation between two pages (a < b by page number)."""

    a: int
    b: int
    kind: str  # "duplicate", "revisit", "partial" (a contains much of b, or b of a)
    evidence: tuple[Evidence, ...] = ()
