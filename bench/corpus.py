"""Build the speed-benchmark corpus: N real HTML pages in one WARC, with known near duplicates.

Sources, read in this order and streamed (no list of pages is held):

1. ../shared/data/warc/**/*.warc.gz: every HTML response (status 200; transfer and content
   encodings undone), when the shared data folder is present;
2. ../shared/data/extraction/: scrapinghub, cleanportaleval and chinese_wce pages;
3. Debian documentation packages (fetched with `apt-get download`, unpacked into
   bench/data/debs/): LLVM 13/14/15/16/19, clang 15, Python 3.11, PostgreSQL 15, GIMP help,
   Django and Sphinx docs: about 8,400 pages of real multi-page sites.

Pass 0 writes every source page once, unchanged, under its own URL. While fewer than N pages
have been written, pass k = 1, 2, ... writes each source page again under a new URL
(https://mirror<k>.docs-archive.example/<host><path>) with one to three small, seeded,
deterministic edits: a changed date, two paragraphs swapped, a sentence replaced, an ad block
inserted, a paragraph dropped. A sidecar `<out>.truth.jsonl` says, for every written page, which
source page it came from and which edits it got (the known near duplicates). In this layout every
real cluster grows with N (about 1.1 copies of each source page at 10,000 pages, 2.25 at 20,000):
the link step's work grows faster than N, so it cannot show a flat cost per page.

``--copies K`` (fixed duplicate sets): every distinct page is written K times, itself and K - 1
seeded mirror copies, whatever N is, and the distinct pages are all *fresh pages*, so that no two
sets are near copies of each other (the real sources hold near copies of their own: soft 404s,
one template's pages). A fresh page of generation g = 1, 2, ... is a source page's own markup with
every run of 3+ ASCII letters in its text (words, and the words inside identifiers) replaced
through a word-for-word code of its own and its digits through a digit code, both seeded by
(seed, g, page): each word of the source becomes one word of all the sources' text
(a common word one of their ``COMMON_WORDS`` most used, another word a rare one, uniformly), so
that the page keeps its text's shape and shares only chance word pairs with any other fresh
page (``fresh_page``); except inside scripts, styles, ``<nav>``, ``<header>`` and ``<footer>``
(so that most of the site's template stays; templates not marked up as such are rewritten and
lost). Only sources with ``FRESH_MIN_WORDS`` ASCII words in runs of paragraph length
(``PARAGRAPH_RUN``) that are ``FRESH_MIN_SHARE`` of their text or more are used (mostly English
pages), each key once, in a seeded order, so that every N holds the same mix of sources; they
are held in memory while the crawl is written. The truth's ``source`` is ``<key>#g<g>``: the
known clusters have exactly K pages (the last one may be cut at N).

Usage: python -m bench.corpus --pages 20000 [--out bench/data/corpus-20000.warc.gz] [--seed 0]
       [--copies K]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import json
import random
import re
import sys
import time
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlsplit

import xxhash

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.debian import REPO_ROOT, DataMissing, ensure_debian_docs, html_files  # noqa: E402
from bench.warcout import CrawlWriter  # noqa: E402

DATA_DIR = REPO_ROOT / "bench" / "data"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

# Debian documentation packages and the site each one stands for.
DEBIAN_SITES = {
    "llvm-13-doc": "https://releases.llvm.org/13.0.1/docs/",
    "llvm-14-doc": "https://releases.llvm.org/14.0.6/docs/",
    "llvm-15-doc": "https://releases.llvm.org/15.0.6/docs/",
    "llvm-16-doc": "https://releases.llvm.org/16.0.6/docs/",
    "llvm-19-doc": "https://releases.llvm.org/19.1.7/docs/",
    "clang-15-doc": "https://releases.llvm.org/15.0.6/tools/clang/docs/",
    "python3.11-doc": "https://docs.python.org/3.11/",
    "postgresql-doc-15": "https://www.postgresql.org/docs/15/",
    "gimp-help-en": "https://docs.gimp.org/2.10/en/",
    "python-django-doc": "https://docs.djangoproject.com/en/3.2/",
    "sphinx-doc": "https://www.sphinx-doc.org/en/5.3.0/",
}
START = datetime(2024, 1, 8, 0, 0, 0, tzinfo=timezone.utc)
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)", re.I | re.S)


@dataclass(frozen=True)
class SourcePage:
    key: str  # stable name of the source page (its URL, or package:path)
    url: str
    body: bytes
    content_type: str  # as served (charset kept when the source said one)


# ---------------------------------------------------------------- sources


def _dechunk(body: bytes) -> bytes:
    out, pos = bytearray(), 0
    while pos < len(body):
        eol = body.find(b"\r\n", pos)
        if eol < 0:
            break
        size = int(body[pos:eol].split(b";")[0].strip() or b"0", 16)
        if size == 0:
            break
        out += body[eol + 2 : eol + 2 + size]
        pos = eol + 2 + size + 2
    return bytes(out)


def _undo_encodings(body: bytes, transfer: str, content: str) -> bytes:
    if "chunked" in transfer.lower():
        body = _dechunk(body)
    content = content.lower().strip()
    if content in ("gzip", "x-gzip"):
        body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
    elif content == "deflate":
        try:
            body = zlib.decompress(body)
        except zlib.error:
            body = zlib.decompress(body, -zlib.MAX_WBITS)
    elif content == "br":
        import brotli

        body = brotli.decompress(body)
    elif content not in ("", "identity"):
        raise ValueError(f"unknown content encoding {content}")
    return body


def looks_like_html(body: bytes, content_type: str) -> bool:
    if "html" in content_type.lower():
        return True
    return not content_type.strip() and bool(_HTML_START.match(body[:2048]))


def warc_pages(shared: Path) -> Iterator[SourcePage]:
    """HTML responses of the shared crawls (ARC copies of WARC crawls are skipped)."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    for file in sorted((shared / "warc").rglob("*.warc.gz")):
        try:
            with open(file, "rb") as stream:
                for record in ArchiveIterator(stream, record_types=WarcRecordType.response, parse_http=True):
                    http = record.http_headers
                    if http is None or http.status_code != 200:
                        continue
                    content_type = http.get("Content-Type", "") or ""
                    try:
                        body = _undo_encodings(
                            record.reader.read(),
                            http.get("Transfer-Encoding", "") or "",
                            http.get("Content-Encoding", "") or "",
                        )
                    except Exception:  # a broken encoding: not a usable benchmark page
                        continue
                    if body and looks_like_html(body, content_type):
                        url = (record.headers.get("WARC-Target-URI", "") or "").strip("<> ")
                        url = url or f"urn:{file.name}:{record.stream_pos}"
                        yield SourcePage(url, url, body, content_type or "text/html")
        except Exception as exc:  # truncated files end the file, not the build
            print(f"corpus: stopped reading {file.name}: {exc}", file=sys.stderr)


def extraction_pages(shared: Path) -> Iterator[SourcePage]:
    base = shared / "extraction"
    truth_file = base / "scrapinghub" / "ground-truth.json"
    urls = json.loads(truth_file.read_text()) if truth_file.is_file() else {}
    for file in sorted((base / "scrapinghub" / "html").glob("*.html.gz")):
        page_id = file.name.removesuffix(".html.gz")
        url = urls.get(page_id, {}).get("url") or f"https://scrapinghub.example/{page_id}"
        yield SourcePage(url, url, gzip.decompress(file.read_bytes()), "text/html")
    for file in sorted((base / "cleanportaleval" / "input").glob("*.html")):
        gold = base / "cleanportaleval" / "GoldStandard" / (file.stem + ".txt")
        url = f"https://cleanportaleval.example/{file.name}"
        if gold.is_file():
            first = gold.read_text(errors="replace").strip().splitlines()[:1]
            if first and first[0].startswith("URL:"):
                url = first[0][4:].strip()
        yield SourcePage(f"cleanportaleval:{file.name}", url, file.read_bytes(), "text/html")
    for file in sorted((base / "chinese_wce" / "original").glob("*.htm*")):
        url = f"https://chinese-wce.example/{file.name}"
        yield SourcePage(url, url, file.read_bytes(), "text/html")


def wcxb_pages(shared: Path) -> Iterator[SourcePage]:
    """The WCXB development split's modern pages (1,497, of seven page types), under their own URLs."""
    base = shared / "extraction" / "wcxb-dev"
    for file in sorted((base / "html").glob("*.html.gz")):
        page_id = file.name.removesuffix(".html.gz")
        url = f"https://wcxb.example/{page_id}"
        truth = base / "ground-truth" / f"{page_id}.json"
        if truth.is_file():
            try:
                url = json.loads(truth.read_text()).get("url") or url
            except ValueError:
                pass
        yield SourcePage(f"wcxb:{page_id}", url, gzip.decompress(file.read_bytes()), "text/html")


def spotsigs_pages(shared: Path) -> Iterator[SourcePage]:
    """The SpotSigs gold set's news reposts, each page on a host of its own (as bench/reposts.py lays them)."""
    root = shared / "neardup" / "spotsigs-dev" / "GoldSetOfDuplicates"
    for file in sorted(root.glob("*/*.htm*")):
        rel = file.relative_to(root).as_posix()
        host = "h" + hashlib.sha1(rel.encode()).hexdigest()[:12] + ".example.com"
        url = f"http://{host}/article.htm"
        yield SourcePage(f"spotsigs:{rel}", url, file.read_bytes(), "text/html")


def debian_pages(packages: dict[str, str] = DEBIAN_SITES) -> Iterator[SourcePage]:
    roots = ensure_debian_docs(list(packages))
    for pkg, site in packages.items():
        for rel, path in html_files(roots[pkg]).items():
            yield SourcePage(f"{pkg}:{rel}", site + rel, path.read_bytes(), "text/html; charset=utf-8")


def source_pages(shared: Path | None = SHARED_DATA, debian: bool = True, all_shared: bool = False) -> Iterator[SourcePage]:
    """Every source page, in a fixed order. `all_shared`: every page of the shared data (the
    WCXB pages and the SpotSigs reposts too), as issue 16's kept-back corpus is made."""
    if shared is not None and shared.is_dir():
        yield from warc_pages(shared)
        yield from extraction_pages(shared)
        if all_shared:
            yield from wcxb_pages(shared)
            yield from spotsigs_pages(shared)
    else:
        print(f"corpus: {shared} not found, using Debian documentation only", file=sys.stderr)
    if debian:
        yield from debian_pages()


# ---------------------------------------------------------------- edits (bytes in, bytes out)

_DATE = re.compile(rb"\b(19|20)\d\d-[01]\d-[0-3]\d\b")
_PARAGRAPH = re.compile(rb"<p\b[^>]*>(?:(?!</?p\b).){40,2000}?</p>", re.I | re.S)
_SENTENCE = re.compile(rb"[A-Z][^<>.!?]{20,300}[.!?]")
_BODY_END = re.compile(rb"</body\s*>", re.I)
FILLER_SENTENCES = [
    b"This section was reviewed by the documentation team.",
    b"Readers reported that the previous wording was unclear.",
    b"The example below has been updated for the current release.",
    b"See the release notes for the full list of changes.",
    b"Thanks to everyone who sent corrections to this page.",
]
ADS = [
    b'<div class="ad-slot sponsored"><a href="https://ads.example/click?c=ID">Sponsored: '
    b"Faster builds with cloud CI - try it free for 30 days</a></div>",
    b'<aside class="promo"><p>Advertisement</p><a href="https://ads.example/offer/ID">'
    b"Hosting from $1.99/month. Deploy in minutes.</a></aside>",
    b'<div id="banner-ID" class="banner"><img src="https://ads.example/b.png" alt="ad">'
    b"<span>Limited offer: 40% off developer tools</span></div>",
]


def _insert_before_body_end(body: bytes, snippet: bytes) -> bytes:
    match = None
    for match in _BODY_END.finditer(body):
        pass
    return body[: match.start()] + snippet + body[match.start() :] if match else body + snippet


def change_date(body: bytes, rng: random.Random) -> bytes:
    """Replace one ISO date (or add an 'updated' line) with another date."""
    new = b"20%02d-%02d-%02d" % (rng.randint(10, 25), rng.randint(1, 12), rng.randint(1, 28))
    dates = list(_DATE.finditer(body))
    if dates:
        match = rng.choice(dates)
        return body[: match.start()] + new + body[match.end() :]
    return _insert_before_body_end(body, b'<p class="updated">Last updated on ' + new + b".</p>")


def swap_paragraphs(body: bytes, rng: random.Random) -> bytes:
    """Swap two neighbouring paragraphs (falls back to changing a date)."""
    paragraphs = list(_PARAGRAPH.finditer(body))
    if len(paragraphs) < 2:
        return change_date(body, rng)
    i = rng.randrange(len(paragraphs) - 1)
    a, b = paragraphs[i], paragraphs[i + 1]
    return body[: a.start()] + b.group(0) + body[a.end() : b.start()] + a.group(0) + body[b.end() :]


def replace_sentence(body: bytes, rng: random.Random) -> bytes:
    """Replace one English sentence with a stock one (falls back to inserting an ad)."""
    sentences = list(_SENTENCE.finditer(body[:400_000]))
    if not sentences:
        return insert_ad(body, rng)
    match = rng.choice(sentences)
    return body[: match.start()] + rng.choice(FILLER_SENTENCES) + body[match.end() :]


def insert_ad(body: bytes, rng: random.Random) -> bytes:
    """Insert an ad block after a random paragraph (or before </body>)."""
    ad = rng.choice(ADS).replace(b"ID", b"%d" % rng.randrange(1000, 9999))
    paragraphs = list(_PARAGRAPH.finditer(body))
    if paragraphs:
        end = rng.choice(paragraphs).end()
        return body[:end] + ad + body[end:]
    return _insert_before_body_end(body, ad)


def drop_paragraph(body: bytes, rng: random.Random) -> bytes:
    paragraphs = list(_PARAGRAPH.finditer(body))
    if len(paragraphs) < 3:
        return insert_ad(body, rng)
    match = rng.choice(paragraphs)
    return body[: match.start()] + body[match.end() :]


EDITS = {
    "date": change_date,
    "swap": swap_paragraphs,
    "sentence": replace_sentence,
    "ad": insert_ad,
    "drop": drop_paragraph,
}


def edit_page(body: bytes, key: str, variant: int, seed: int) -> tuple[bytes, list[str]]:
    """One to three seeded edits; the same (key, variant, seed) always gives the same bytes."""
    rng = random.Random(f"{seed}:{variant}:{key}")
    names = rng.sample(sorted(EDITS), rng.choice((1, 1, 2, 2, 3)))
    for name in names:
        body = EDITS[name](body, rng)
    return body, names


def mirror_url(url: str, variant: int) -> str:
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"https://mirror{variant}.docs-archive.example/{parts.netloc or 'local'}{path}"


# ---------------------------------------------------------------- build


# ---------------------------------------------------------------- fresh pages (fixed duplicate sets)

# A source is made into fresh pages when its text runs of PARAGRAPH_RUN bytes or more (spaces
# aside) hold FRESH_MIN_WORDS ASCII words, and those words are FRESH_MIN_SHARE of its text.
FRESH_MIN_WORDS = 100
FRESH_MIN_SHARE = 0.6
PARAGRAPH_RUN = 80
COMMON_WORDS = 200  # the pool's most used words: a fresh page's common words are drawn from them
_TOKEN = re.compile(rb"<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9]*)\b[^>]*>|[^<]+|<", re.S)
_WORD = re.compile(rb"(?<![&#\w])[A-Za-z]{3,}(?![\w;])")
# What a fresh page rewrites: every run of 3+ ASCII letters, also inside identifiers
# (DW_OP_LLVM_form_aspace_address, utf8) and numbers (the digits, through a code of the page's
# own), never inside a character reference (&amp; &#8217;).
_FRESH_TOKEN = re.compile(rb"&#?\w+;|(?<![A-Za-z])[A-Za-z]{3,}(?![A-Za-z])|\d+")
_LEFT_ALONE = {b"script", b"style", b"noscript", b"template", b"svg", b"nav", b"header", b"footer"}


def text_segments(body: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of every text run of ``body`` outside tags, comments, scripts, styles and
    ``<nav>``/``<header>``/``<footer>`` (most of a site's template, kept): the text a fresh page
    rewrites."""
    depth = dict.fromkeys(_LEFT_ALONE, 0)
    for match in _TOKEN.finditer(body):
        name = match.group(2)
        if name is not None:
            name = name.lower()
            if name in depth:
                closing = bool(match.group(1))
                if not match.group(0).endswith(b"/>") or closing:
                    depth[name] = max(0, depth[name] + (-1 if closing else 1))
        elif not match.group(0).startswith(b"<") and not any(depth.values()):
            yield match.start(), match.end()


class WordPool:
    """The sources' words (lower-cased ASCII words of their text) and how often they are used:
    the vocabulary fresh pages are written in. Its ``COMMON_WORDS`` most used words are the
    common ones (the, and, for, ...), the others the rare ones."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.counts: Counter[bytes] = Counter()
        self._split: tuple[list[bytes], list[bytes], frozenset[bytes]] | None = None

    def learn(self, body: bytes) -> bool:
        """Adds the page's words; True when a fresh page made from it would be new: its text runs
        of PARAGRAPH_RUN bytes or more hold FRESH_MIN_WORDS ASCII words, FRESH_MIN_SHARE of its
        text. (A page whose text is short runs, as a list of operand names, keeps most of its main
        text when its words are swapped: its fresh pages would be near copies of each other.)"""
        found = covered = text = 0
        lower = body.lower()  # ASCII only: the same offsets
        for start, end in text_segments(body):
            run = len(body[start:end].translate(None, b" \t\r\n"))
            text += run
            words = _WORD.findall(lower, start, end)
            if run >= PARAGRAPH_RUN:  # menu items, labels and table cells do not count
                found += len(words)
                covered += sum(map(len, words))
            self.counts.update(words)
        self._split = None
        return found >= FRESH_MIN_WORDS and covered >= FRESH_MIN_SHARE * text

    def split(self) -> tuple[list[bytes], list[bytes], frozenset[bytes]]:
        """(common words, rare words, the common ones as a set), most used first (ties by the
        word: the same sources give the same lists). A rare word is used twice or more (typos
        and one-off tokens are not drawn), unless the pool has no others."""
        if self._split is None:
            ranked = sorted(self.counts, key=lambda w: (-self.counts[w], w))
            if not ranked:
                raise DataMissing("the word pool is empty: no source page has ASCII words")
            cut = max(1, min(COMMON_WORDS, len(ranked) // 2))
            common, rest = ranked[:cut], ranked[cut:]
            rare = [w for w in rest if self.counts[w] > 1] or rest or common
            self._split = (common, rare, frozenset(common))
        return self._split


def _cased_like(word: bytes, model: bytes) -> bytes:
    if model.isupper() and len(model) > 1:
        return word.upper()
    return word.capitalize() if model[:1].isupper() else word


def fresh_page(body: bytes, pool: WordPool, key: str, generation: int, seed: int,
               segments: Iterable[int] | None = None) -> bytes:
    """``body`` with the ASCII words of its text replaced by the pool's and its digits permuted,
    seeded by (seed, generation, key): a new page of the same site that is no near copy of its
    source, nor of any other fresh page. (Words inside identifiers and the digits are rewritten
    too: kept, they made the long LLVM pages of one source, and of its other LLVM versions,
    candidates of each other in every generation.)

    The replacement is a word-for-word code of the page's own (each word of the source always
    becomes the same word in one fresh page, a common word a common word, a rare word a rare
    word, drawn uniformly): the page keeps its text's shape (how often its words repeat, where
    its common words stand), and two fresh pages share only chance words. (Drawing each word
    anew by how often the sources use it made every long page a sample of one distribution: two
    unrelated long pages shared ~5-10% of their word pairs, MinHash candidates of each other.)
    ``segments``: ``text_segments(body)`` flattened (start, end, start, end, ...), when the
    caller keeps them (every generation rewrites the same source)."""
    common, rare, is_common = pool.split()
    page_seed = xxhash.xxh64_intdigest(f"fresh:{seed}:{generation}:{key}".encode())
    code: dict[bytes, bytes] = {}
    digits = bytearray(b"0123456789")
    random.Random(page_seed).shuffle(digits)
    digit_code = bytes.maketrans(b"0123456789", bytes(digits))

    def swap(match: re.Match) -> bytes:
        word = match.group(0)
        new = code.get(word)
        if new is None:
            if word[:1] == b"&":
                return word
            if word[:1].isdigit():
                return word.translate(digit_code)
            lower = word.lower()
            mapped = code.get(lower)
            if mapped is None:
                draw = xxhash.xxh64_intdigest(lower, page_seed)
                mapped = common[draw % len(common)] if lower in is_common else rare[draw % len(rare)]
                code[lower] = mapped
            new = code[word] = _cased_like(mapped, word)
        return new

    out, last = [], 0
    spans = text_segments(body) if segments is None else zip(*[iter(segments)] * 2)
    for start, end in spans:
        out.append(body[last:start])
        out.append(_FRESH_TOKEN.sub(swap, body[start:end]))
        last = end
    out.append(body[last:])
    return b"".join(out)


def _fixed_sets(read_sources: Callable[[], Iterable[SourcePage]], seed: int,
                first: int = 0) -> Iterator[tuple[SourcePage, str, int]]:
    """(page, truth key, generation) of every distinct page without end (the caller stops): fresh
    pages of the usable sources, taken in a seeded order (so that any N holds the same mix of
    sources), generation 1, then 2, ... The usable sources are held in memory, with their text
    runs (``text_segments``: found once, not once a generation). ``first``: the first ``first``
    pages are passed over without being made (a shard of a larger crawl)."""
    pool = WordPool(seed)
    seen: set[str] = set()
    usable = []
    for source in read_sources():
        # A key read twice (one URL in two of the shared crawls) is learned once: its fresh pages
        # would be the same pages (seeded by the key), one known cluster of 2K pages.
        if source.key not in seen:
            seen.add(source.key)
            if pool.learn(source.body):
                usable.append((source, array("I", itertools.chain.from_iterable(text_segments(source.body)))))
    if not usable:
        raise DataMissing("no source page has enough ASCII words to make fresh pages from")
    random.Random(f"order:{seed}").shuffle(usable)
    generation, skip = 1 + first // len(usable), first % len(usable)
    while True:
        for source, segments in itertools.islice(usable, skip, None):
            body = fresh_page(source.body, pool, source.key, generation, seed, segments)
            yield SourcePage(source.key, fresh_url(source.url, generation), body, source.content_type), \
                f"{source.key}#g{generation}", generation
        generation, skip = generation + 1, 0


def fresh_url(url: str, generation: int) -> str:
    parts = urlsplit(url)
    query = f"{parts.query}&" if parts.query else ""
    return parts._replace(query=f"{query}pagetwin-fresh={generation}").geturl()


def corpus_path(pages: int, seed: int = 0, copies: int | None = None, first_set: int = 0, mix: str = "docs") -> Path:
    name = f"corpus-{pages}" + (f"-s{seed}" if seed else "") + (f"-k{copies}" if copies else "") \
        + (f"-from{first_set}" if first_set else "") + ("" if mix == "docs" else f"-{mix}")
    return DATA_DIR / f"{name}.warc.gz"


class _CorpusFiles:
    """A crawl WARC and its truth, written under temporary names and given their names only when
    complete (an interrupted build leaves no corpus that looks whole)."""

    def __init__(self, out: Path, dated_from: int = 0) -> None:
        self.out = out
        self.dated_from = dated_from  # a shard's first page: its dates follow the pages before it
        self.tmp = out.with_name(out.name + ".tmp")
        self.truth_tmp = out.with_name(out.name + ".truth.jsonl.tmp")
        self.written = self.html_bytes = 0
        self.started = time.monotonic()

    def __enter__(self) -> "_CorpusFiles":
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.stream = open(self.tmp, "wb")
        self.truth = open(self.truth_tmp, "w", encoding="utf-8")
        self.writer = CrawlWriter(self.stream)
        return self

    def write(self, url: str, body: bytes, content_type: str, truth: dict) -> None:
        date = (START + timedelta(seconds=self.dated_from + self.written)).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.writer.response(url, date, body, content_type=content_type)
        self.truth.write(json.dumps({"url": url, **truth}) + "\n")
        self.written += 1
        self.html_bytes += len(body)

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.stream.close()
        self.truth.close()
        if exc_type is None:
            self.tmp.replace(self.out)
            self.truth_tmp.replace(self.out.with_name(self.out.name + ".truth.jsonl"))

    def counts(self, **more: int) -> dict:
        return {"pages": self.written, **more, "html_bytes": self.html_bytes,
                "warc_bytes": self.out.stat().st_size, "seconds": round(time.monotonic() - self.started, 1)}


# Which sources a corpus reads: "docs" (the shared crawls and extraction pages, then the Debian
# documentation sites) or "shared" (every page of ../shared/data: its crawls, all extraction sets
# incl. WCXB, the SpotSigs reposts; no Debian pages), the mix of issue 16's kept-back corpus.
MIXES = {"docs": {"debian": True, "all_shared": False}, "shared": {"debian": False, "all_shared": True}}


def build_corpus(
    pages: int,
    out: Path,
    seed: int = 0,
    shared: Path | None = SHARED_DATA,
    sources: Callable[[], Iterable[SourcePage]] | None = None,
    copies: int | None = None,
    first_set: int = 0,
    mix: str = "docs",
) -> dict:
    """Write `pages` HTML responses to `out` (+ `out`.truth.jsonl); returns counts.

    `sources` (a function returning a fresh iterable of source pages, called once per pass)
    replaces the real sources; tests use it with generated pages. `copies`: fixed duplicate
    sets of that many pages (see the module's docstring). `first_set` (with `copies`): this crawl
    is the shard of a larger one that starts at its `first_set`-th duplicate set: the same records,
    byte for byte, as that part of the whole (shards built side by side, then read as one folder).
    """
    if mix not in MIXES:
        raise ValueError(f"mix must be one of {sorted(MIXES)}, not {mix!r}")
    read_sources = sources or (lambda: source_pages(shared, **MIXES[mix]))
    if copies is not None:
        if copies < 1:
            raise ValueError(f"copies must be 1 or more, not {copies}")
        return _build_fixed_sets(pages, out, seed, read_sources, copies, first_set)
    if first_set:
        raise ValueError("first_set shards a crawl of fixed duplicate sets: give copies too")
    source_count = variant = 0
    with _CorpusFiles(out) as files:
        while files.written < pages:
            produced = 0
            for source in read_sources():
                if files.written >= pages:
                    break
                if variant == 0:
                    body, edits, url = source.body, [], source.url
                    source_count += 1
                else:
                    body, edits = edit_page(source.body, source.key, variant, seed)
                    url = mirror_url(source.url, variant)
                files.write(url, body, source.content_type, {"source": source.key, "variant": variant, "edits": edits})
                produced += 1
            if produced == 0:
                raise DataMissing("no source pages found (no shared data and no Debian packages)")
            variant += 1
    return files.counts(source_pages=source_count, passes=variant)


def _build_fixed_sets(pages: int, out: Path, seed: int, read_sources: Callable[[], Iterable[SourcePage]],
                      copies: int, first_set: int = 0) -> dict:
    sets = generation = 0
    with _CorpusFiles(out, dated_from=first_set * copies) as files:
        distinct = _fixed_sets(read_sources, seed, first_set)
        while files.written < pages:
            page, key, generation = next(distinct)
            sets += 1
            for variant in range(min(copies, pages - files.written)):
                body, edits = (page.body, []) if variant == 0 else edit_page(page.body, key, variant, seed)
                url = page.url if variant == 0 else mirror_url(page.url, variant)
                files.write(url, body, page.content_type,
                            {"source": key, "variant": variant, "generation": generation, "edits": edits})
    return files.counts(duplicate_sets=sets, copies=copies, generations=generation)


def ensure_corpus(pages: int, seed: int = 0, copies: int | None = None, mix: str = "docs") -> Path:
    """The corpus WARC for `pages`, built on first use."""
    out = corpus_path(pages, seed, copies, mix=mix)
    if not out.is_file():
        counts = build_corpus(pages, out, seed, copies=copies, mix=mix)
        print(f"corpus: wrote {out} ({counts})", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the speed-benchmark corpus WARC.")
    parser.add_argument("--pages", type=int, default=20000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-shared", action="store_true", help="Debian documentation only")
    parser.add_argument("--mix", choices=sorted(MIXES), default="docs",
                        help="docs: the shared crawls and extraction pages, then Debian documentation (default); "
                             "shared: every page of ../shared/data (crawls, extraction sets incl. WCXB, SpotSigs), "
                             "as issue 16's kept-back corpus")
    parser.add_argument("--copies", type=int, default=None, metavar="K",
                        help="fixed duplicate sets: every distinct page K times (fresh pages past the sources)")
    parser.add_argument("--first-set", type=int, default=0, metavar="S",
                        help="with --copies: the shard of a larger crawl that starts at its S-th duplicate set "
                             "(the same records as that part of the whole; shards built side by side)")
    args = parser.parse_args(argv)
    if args.copies is not None and args.copies < 1:
        parser.error("--copies must be 1 or more")
    if args.first_set and not args.copies:
        parser.error("--first-set shards a crawl of fixed duplicate sets: give --copies too")
    if args.first_set < 0:
        parser.error("--first-set must be 0 or more")
    if args.no_shared and args.mix == "shared":
        parser.error("--mix shared reads only the shared data: drop --no-shared")
    out = args.out or corpus_path(args.pages, args.seed, args.copies, args.first_set, args.mix)
    try:
        counts = build_corpus(args.pages, out, args.seed, None if args.no_shared else SHARED_DATA,
                              copies=args.copies, first_set=args.first_set, mix=args.mix)
    except DataMissing as exc:
        print(f"corpus: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
