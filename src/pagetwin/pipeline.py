"""Per-page kernels: what happens to one page in each pass. No loops over the corpus here;
the engines (runners/local.py, runners/spark.py) own iteration and grouping, the application
core (app.py) storage.

Pass 1 (learning): parse the page, return its subtree statistics for the site templates,
its word set for document frequencies, or an image's perceptual hash (what the Worker's
``learned.Learning`` asks for, as a ``learned.LearnRecord``); and, when the engine keeps
them for pass 2, the page's parsed blocks as bytes (``html.blocks.ParsedPage``).
Pass 2 (fingerprinting): remove noise and template (from pass 1's blocks when the page carries
them, else parsing again), analyse the text, fingerprint.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

from pagetwin.compression import compressor, decompressor
from pagetwin.config import Settings
from pagetwin.html.blocks import Extracted, ParsedPage
from pagetwin.html.images import KeptURLs
from pagetwin.html.noise import extract_parsed, parse_page
from pagetwin.html.parse import decode_html, parse_limited
from pagetwin.learned import ImageHash, Learned, Learning, LearnRecord
from pagetwin.model import Doc, Page
from pagetwin.text.normalize import text_digest


@dataclass(slots=True)
class PageResult:
    """What pass 2 sends back to the parent for one page: small, picklable."""

    page: Page  # body dropped
    doc: Doc | None  # None when the page could not be processed (see error)
    features: dict[str, bytes]  # algorithm -> encoded features
    keys: dict[str, list[int]]  # algorithm -> candidate keys
    error: str = ""  # reason the page has no analysis, e.g. "decode-error"
    replaced_chars: int = 0  # characters that could not be decoded
    flattened: bool = False  # DOM nested deeper than input.max_dom_depth, flattened
    refused_charsets: int = 0  # charset labels ignored (unknown, or no text encoding: idna, base64...)


class Extraction(NamedTuple):
    """A page's main content and how its bytes decoded (Worker.extract)."""

    extracted: Extracted
    replaced: int = 0  # characters that could not be decoded
    flattened: bool = False  # DOM nested deeper than input.max_dom_depth, flattened
    refused_charsets: int = 0  # charset labels ignored


def is_text_only(page: Page) -> bool:
    """A document given as plain text (JSONL or Parquet ``text``): its body is its main text."""
    return bool(page.meta.get("text_only"))


# Algorithms that read Doc.keywords: only they make keyword weighting (and, for tf-idf, the
# document-frequency pass) worth its cost.
KEYWORD_ALGORITHMS = frozenset({"con", "sort", "con-w", "sort-w"})


def needs_keywords(settings: Settings) -> bool:
    return bool(KEYWORD_ALGORITHMS & set(settings.match.algorithms))


def needs_doc_freq(settings: Settings) -> bool:
    return settings.keywords.weighting == "tfidf" and needs_keywords(settings)


def needs_images(settings: Settings) -> bool:
    """Whether an algorithm reads Doc.images (only then are a page's images resolved, and pass 1
    hashes the image records)."""
    return "images" in settings.match.algorithms


class Worker:
    """Per-process state: settings, learned models, analyzer and algorithms, built once."""

    def __init__(
        self,
        settings: Settings,
        learned: Learned | None = None,
        keep_parsed: bool = False,
        learning: Learning | None = None,
    ) -> None:
        from pagetwin.fingerprints import build_algorithms
        from pagetwin.fingerprints.hashing import token_hash
        from pagetwin.html.blocks import BlockWalker
        from pagetwin.text.analyze import TextAnalyzer

        self.settings = settings
        self.learned = learned or Learned()
        self.analyzer = TextAnalyzer(settings.text, token_hash=token_hash)  # the tokens' hashes the fingerprints read
        self.algorithms = build_algorithms(settings)
        self.wants_keywords = needs_keywords(settings)
        self.wants_images = needs_images(settings)
        self.image_urls = KeptURLs()  # image_refs' memo of candidate URLs, kept from page to page
        self.keep_parsed = keep_parsed  # learn() returns each page's ParsedPage bytes for pass 2
        # the block walk and its memos, kept from page to page; images' attributes only when read
        self.walker = BlockWalker(images=self.wants_images)
        self.keyword_tokens: dict[str, bool] = {}  # top_keywords' memo of which tokens may be keywords
        self.learning = learning if learning is not None else Learning.for_dedup(settings)  # what learn() computes

    # -- pass 1 ---------------------------------------------------------------------------

    def learn(self, page: Page) -> LearnRecord:
        """Pass-1 statistics of one page, what ``self.learning`` asks for (learned.LearnRecord):
        its site, subtree statistics, word set, an image record's hash, and its parsed blocks
        when kept. A page that cannot be parsed gives nothing here; pass 2 reports it."""
        from pagetwin.html import templates

        if page.kind == "image":
            from pagetwin.html.images import image_phash, normalize_image_url

            phash = image_phash(page.body) if self.learning.images else None
            return LearnRecord(image=ImageHash(normalize_image_url(page.url), phash) if phash is not None else None)
        if page.kind != "response":
            return LearnRecord()
        site = templates.page_site(page, self.settings.extract)
        if is_text_only(page):  # no markup: nothing of a template; only its words are learned
            words = sorted(set(self.analyzer.analyze(_plain_text(page), surfaces=False).tokens)) if self.learning.doc_freq else None
            return LearnRecord(site, None, words)
        try:
            parsed = self.parse(page)
        except Exception:  # noqa: BLE001 - bad data must not stop the run
            return LearnRecord(site)
        stats = None
        if self.learning.templates:
            stats = templates.blocks_stats(parsed.blocks, self.settings.extract, parsed.page_level())
        words = None
        if self.learning.doc_freq:
            text = extract_parsed(parsed, None, self.settings.extract).text
            words = sorted(set(self.analyzer.analyze(text, surfaces=False).tokens))
        return LearnRecord(site, stats, words, None, parsed.to_bytes() if self.keep_parsed else b"")

    # -- pass 2 ---------------------------------------------------------------------------

    def parse(self, page: Page) -> ParsedPage:
        """The page's blocks, title and description: pass 1's when the page carries them
        (``page.parsed``), else decoded, depth-limited, parsed and walked now."""
        if page.parsed:
            return ParsedPage.from_bytes(page.parsed)
        decoded = decode_html(page.body, page.http_charset)
        # The record, not only its text: parse_limited then parses a UTF-8 body as is.
        tree, flattened = parse_limited(decoded, self.settings.input.max_dom_depth)
        return parse_page(
            tree, replaced=decoded.replaced, flattened=flattened, walker=self.walker, refused_charsets=decoded.refused_charsets
        )

    def extract(self, page: Page) -> Extraction:
        """Main content of one page and how its bytes decoded; a text-only document's text
        is its main content as given."""
        from pagetwin.html.templates import page_site

        if is_text_only(page):
            metadata = page.meta.get("metadata") or {}
            title = metadata.get("title") if isinstance(metadata.get("title"), str) else ""
            return Extraction(Extracted(_plain_text(page), title=title))
        parsed = self.parse(page)
        if self.learned.templates is None:
            extracted = extract_parsed(parsed)  # page-level rules only
        else:
            extracted = self.learned.templates.apply(page_site(page, self.settings.extract), parsed)
        return Extraction(extracted, parsed.replaced, parsed.flattened, parsed.refused_charsets)

    def safe_extract(self, page: Page) -> str:
        """Main text of one response ("" for other records or when the page cannot be read)."""
        if page.kind != "response":
            return ""
        try:
            return self.extract(page)[0].text
        except Exception:  # noqa: BLE001 - bad data must not stop the run
            return ""

    def keywords(self, page: Page, top: int = 10, weighting: str = "tfidf") -> dict[str, Any]:
        """{"lang", "keywords": [[token, weight], ...]} of one response's main text, its ``top``
        keywords weighted by ``weighting`` (``pagetwin keywords``); "und" and [] when unreadable."""
        from pagetwin.text.keywords import top_keywords

        try:
            text = self.extract(page)[0].text if page.kind == "response" else ""
            analysis = self.analyzer.analyze(text, surfaces=False)
            top_words = top_keywords(analysis, top, weighting, self.learned.doc_freq, self.keyword_tokens)
        except Exception:  # noqa: BLE001 - bad data must not stop the run
            return {"lang": "und", "keywords": []}
        return {"lang": analysis.lang, "keywords": [[t, w] for t, w in top_words]}

    def analyse(self, page: Page) -> tuple[Doc, Extraction]:
        """The analysed page, and its extraction (how its bytes decoded)."""
        from pagetwin.text.keywords import top_keywords

        extraction = self.extract(page)
        extracted = extraction.extracted
        analysis = self.analyzer.analyze(extracted.text, surfaces=False)
        doc = Doc(
            page_id=page.id,
            url=page.url,
            host=page.host,
            crawl_date=page.crawl_date,
            text=extracted.text,
            title=extracted.title,
            description=extracted.description,
            lang=analysis.lang,
            tokens=analysis.tokens,
            stop=analysis.stop,
            payload_digest=page.payload_digest,
            text_digest=text_digest(extracted.text),
        )
        if self.wants_keywords:
            # The keyword algorithms' N (keywords.n), weights normalised over those N.
            doc.keywords = top_keywords(
                analysis, self.settings.keywords.n, self.settings.keywords.weighting, self.learned.doc_freq, self.keyword_tokens
            )
        if self.wants_images and extracted.images:
            doc.images = self._images(extracted.images, page.url)
        return doc, extraction

    def _images(self, raw: list[dict], page_url: str) -> list:
        from pagetwin.html.images import image_refs

        return image_refs(raw, page_url, phashes=self.learned.image_hashes, urls=self.image_urls)

    def fingerprint(self, page: Page) -> PageResult:
        """Pass 2 for one page. Never raises: a failure is reported in PageResult.error."""
        bare = replace(page, body=b"", parsed=b"")
        if page.kind != "response":
            return PageResult(bare, None, {}, {})
        try:
            doc, extraction = self.analyse(page)
        except RecursionError:
            return PageResult(bare, None, {}, {}, error="dom-too-deep")
        except Exception as exc:  # noqa: BLE001 - bad data must not stop the run
            return PageResult(bare, None, {}, {}, error=f"extract-error: {type(exc).__name__}")
        features: dict[str, bytes] = {}
        keys: dict[str, list[int]] = {}
        error = ""
        for algorithm in self.algorithms:
            try:
                feats = algorithm.features(doc)
            except Exception as exc:  # noqa: BLE001
                error = f"{algorithm.name}-error: {type(exc).__name__}"
                break
            if feats is None:
                continue
            features[algorithm.name] = algorithm.encode(feats)
            keys[algorithm.name] = list(dict.fromkeys(algorithm.keys(feats)))
        # The parent stores text, language and title: the word lists need not cross processes.
        # (doc is this call's own: emptied in place, not copied)
        doc.tokens, doc.stop, doc.keywords, doc.images = [], [], [], []
        return PageResult(
            bare, doc, features, keys, error=error, replaced_chars=extraction.replaced,
            flattened=extraction.flattened, refused_charsets=extraction.refused_charsets,
        )  # fmt: skip


def load_shared_models(settings: Settings) -> None:
    """Load the read-only models every Worker would load alike: py3langid's, when the text
    settings detect the language (0.8 s and about 76 MB a process). A pool forked after this
    shares them (copy-on-write) instead of loading them in each worker."""
    if not (settings.text.lang or "").strip():
        from pagetwin.text.lang import load_model

        load_model()


def _plain_text(page: Page) -> str:
    """A text-only document's text: its lines are its paragraphs, as blocks are a page's."""
    text = page.body.decode("utf-8", errors="replace")
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame's first bytes; a zlib stream starts with 0x78


# The index's texts are written at this zstd level. Level 1 rather than 3 (before 2026-12, and
# what older indexes hold: any level reads back the same): in a whole run, with the compressor's
# tables out of cache between pages, 1 costs ~0.07 ms a page of corpus-10000-shared against ~0.1
# for 3, for 2.4 % more bytes (0.428 vs 0.418 of the UTF-8).
TEXT_ZSTD_LEVEL = 1


def compress_text(text: str) -> bytes:
    """A page's text as the index stores it: UTF-8, zstd (``TEXT_ZSTD_LEVEL``). On the
    2,000-page corpus's texts zstd was 4x faster than zlib level 6 (0.04 vs 0.16 ms a page)
    for 4 % more bytes, and faster to read back."""
    # one compressor per thread (pagetwin.compression): zstandard.compress makes one per call,
    # which on corpus-2000's texts cost as much as the compression (0.064-0.089 vs 0.042-0.045 CPU-s)
    return compressor(TEXT_ZSTD_LEVEL)(text.encode("utf-8"))


def decompress_text(data: bytes | None) -> str:
    """The text ``compress_text`` stored; zlib data (indexes written before zstd) read too."""
    return decompress_utf8(data).decode("utf-8")


def decompress_utf8(data: bytes | None) -> bytes:
    """``decompress_text``'s text as its UTF-8 bytes, not decoded (softerror.stored_page_kind
    tells most pages from their bytes)."""
    if not data:
        return b""
    if data[:4] == _ZSTD_MAGIC:
        # without a context made per call: the summary's soft-error report reads every page's
        # text (0.12-0.14 -> 0.04 CPU-s at 5,000)
        return decompressor()(data)
    return zlib.decompress(data)
