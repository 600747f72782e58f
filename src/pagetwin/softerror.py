"""Soft errors (issue 13, item 5): pages served as a success that say they are an error.

A crawler that keeps only 2xx responses still keeps "soft 404s": a 200 page whose title or
short text says "page not found" (``Seite nicht gefunden``, ``页面不存在``, ...). Being alike,
they cluster together (the largest cluster of the real crawls, with ``--input-statuses any``,
is 70 "Internet Archive: Page Not Found" pages) and are deduplicated as if they were content.

``page_kind`` tells one page's kind from its title, main text and HTTP status:

- ``"soft-404"``: a success (2xx, or no status: HTML files, JSONL) whose title says "not
  found", or whose short text does near its start;
- ``"soft-error"``: the same for other error wording ("Internal Server Error", "501 Not
  Implemented", "Service Unavailable", "Internet Archive: Error");
- ``"http-error"``: a page whose status is not 2xx (taken in with ``--input-statuses``);
- ``None``: content.

``cluster_kinds`` gives each cluster a ``kind`` (the kind of most of its pages, "content"
otherwise) and ``report`` lists the clusters that are not content. Patterns are matched on
the NFKC, case-folded, whitespace-collapsed title and text: the title decides when the text
has at most ``MAX_TITLE_WORDS`` words, the start of the text when it has at most ``MAX_WORDS``
(an error page says it first and says little); a longer page is content.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any

MAX_WORDS = 150  # an error page's main text is short; an article mentioning "not found" is not
MAX_TITLE_WORDS = 400  # a page titled "... not found" with more text than this is content
_HEAD_CHARS = 300  # in a short text, the phrase must come early: error pages say it first

# "Not found" in several languages (case-folded, NFKC). Word-bounded where the script has spaces.
NOT_FOUND = (
    r"page not found", r"file not found", r"not found", r"page (?:can ?not|could not|couldn't) be found",
    r"(?:page|file) (?:does not|doesn't) exist", r"no longer (?:available|exists)",
    r"seite nicht gefunden", r"nicht gefunden", r"seite existiert nicht",  # de
    r"page introuvable", r"page non trouv[ée]e", r"introuvable",  # fr
    r"p[áa]gina no encontrada", r"no encontrad[oa]", r"p[áa]gina no existe",  # es
    r"pagina non trovata", r"non trovat[oa]",  # it
    r"p[áa]gina n[ãa]o encontrada", r"n[ãa]o encontrad[oa]",  # pt
    r"pagina niet gevonden", r"niet gevonden",  # nl
    r"страница не найдена", r"не найден[аo]?", r"сторінку не знайдено",  # ru, uk
    r"strona nie (?:została )?znaleziona", r"nie znaleziono",  # pl
    r"sayfa bulunamad[ıi]",  # tr
    r"sidan (?:kunde inte hittas|hittades inte)", r"siden (?:blev ikke fundet|finnes ikke)", r"sivua ei l[öo]ydy",  # sv, da/no, fi
    r"η σελίδα δεν βρέθηκε", r"הדף לא נמצא", r"الصفحة غير موجودة", r"पृष्ठ नहीं मिला",  # el, he, ar, hi
    r"页面不存在", r"页面未找到", r"找不到(?:页面|網頁|网页)?", r"頁面不存在", r"网页不存在",  # zh
    r"ページが見つかりません", r"お探しのページ", r"페이지를 찾을 수 없습니다",  # ja, ko
    r"trang không tồn tại", r"halaman tidak ditemukan",  # vi, id
)
OTHER_ERROR = (
    r"internal server error", r"service (?:temporarily )?unavailable", r"bad gateway", r"gateway time-?out",
    r"not implemented", r"access denied", r"403 forbidden", r"an error (?:has )?occurred", r"^error(?: \d{3})?$", r"[:|-] error$",
    r"server error", r"interner serverfehler", r"erreur interne", r"error interno", r"внутренняя ошибка сервера",
    r"服务器错误", r"系统错误", r"サーバーエラー",
)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _compile(patterns: Iterable[str]) -> re.Pattern[str]:
    def bounded(p: str) -> str:
        # Scripts written with spaces get word bounds; CJK (no spaces between words) matches
        # inside a run of text.
        if _CJK.search(p):
            return p
        if p[0].isalnum():
            p = r"(?<!\w)" + p
        if not p.endswith("$"):
            p = p + r"(?!\w)"
        return p

    # The patterns bounded on both sides share one lookbehind and one lookahead: Python's re
    # tries every alternative at every position, and a lookbehind in each made a search ten
    # times slower. The same strings match (a search tries every alternative between the bounds).
    both = [p for p in patterns if not _CJK.search(p) and p[0].isalnum() and not p.endswith("$")]
    shared = "|".join(f"(?:{p})" for p in both)
    parts = [rf"(?<!\w)(?:{shared})(?!\w)"] if both else []
    parts += [f"(?:{bounded(p)})" for p in patterns if p not in both]
    return re.compile("|".join(parts))


_NOT_FOUND = _compile(NOT_FOUND)
_OTHER = _compile(OTHER_ERROR)
_BARE_404 = re.compile(r"(?<!\w)404(?!\w)")
_WORD = re.compile(r"\w+")


def normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def _is_404_title(title: str) -> bool:
    """"404" in a title is the error when it stands alone or beside error wording; "Route 404"
    is a number."""
    if not _BARE_404.search(title):
        return False
    return title.strip(" -:|!.") == "404" or re.search(r"error|fehler|erreur|ошибка|错误|エラー|page|seite|страница", title) is not None


_PIECE = 500  # characters normalised at a time by _short_body (past the word limit by at most this)


# For _surely_long, on UTF-8 bytes: an ASCII word character ([A-Za-z0-9_]) made "a", whitespace
# to bytes.split made " ", every other byte deleted.
_WORD_BYTES = bytes(ord("a") if bytes([b]).isalnum() or b == ord("_") else ord(" ") if bytes([b]).isspace() else b for b in range(256))
_OTHER_BYTES = bytes(b for b in range(256) if _WORD_BYTES[b] not in b"a ")
_SURE_CHARS = 4096  # the prefix _surely_long counts in (an English page passes MAX_TITLE_WORDS in ~2,500)


def _surely_long(text: str, limit: int = MAX_TITLE_WORDS) -> bool:
    """Whether ``text`` has more than ``limit`` words (``\\w+`` runs of its ``normalize``)
    by a lower bound that costs a few bytes operations, not the regex (~0.1 ms a long page,
    most of the summary's soft-error report). The bound: the tokens of a prefix, split at ASCII
    whitespace, that hold an ASCII word character (counted as the runs of "a" left). Each such
    character stays a word character in the normalised text (NFKC keeps ASCII or composes it
    into a letter; casefold keeps it a letter), whitespace stays a word boundary, so distinct
    tokens lie in distinct words."""
    return _sure_words(text[:_SURE_CHARS].encode("utf-8", "surrogatepass")) > limit


def _sure_words(utf8: bytes) -> int:
    """_surely_long's count (its lower bound of the words) over the UTF-8 bytes of a prefix of
    the text. Over any byte prefix of those bytes it is no higher: a prefix translates to a
    prefix, and its " a" tokens are the longer one's first ones."""
    head = utf8.translate(_WORD_BYTES, _OTHER_BYTES)
    return head.count(b" a") + head.startswith(b"a")


def _short_body(text: str, limit: int = MAX_TITLE_WORDS, sure_words: int | None = None) -> tuple[str, int] | None:
    """(``normalize(text)``, its words), or None as soon as it has more than ``limit``
    words: most pages are long, and normalising and counting a whole text cost most of the
    summary's soft-error report. The text is normalised a piece at a time, each cut before an
    ASCII space: no NFKC composition or reordering crosses a space (a starter that composes
    with nothing), case folding and the whitespace split are per character, and no word spans
    a space, so the pieces' words add up to the whole text's and their join is its ``normalize``.
    ``sure_words``: ``_sure_words`` of the text when the caller has it (``_surely_long``'s count)."""
    if (_sure_words(text[:_SURE_CHARS].encode("utf-8", "surrogatepass")) if sure_words is None else sure_words) > limit:
        return None
    pieces: list[str] = []
    words, start, end = 0, 0, len(text)
    while start < end:
        cut = text.find(" ", start + _PIECE)
        cut = end if cut < 0 else cut
        piece = normalize(text[start:cut])
        words += len(_WORD.findall(piece))
        if words > limit:
            return None
        if piece:
            pieces.append(piece)
        start = cut
    return " ".join(pieces), words


def page_kind(title: str, text: str, status: int | None = None) -> str | None:
    """"soft-404", "soft-error", "http-error" or None (content); see the module doc."""
    if status is not None and not 200 <= status <= 299:
        return "http-error"
    sure_words = _sure_words(text[:_SURE_CHARS].encode("utf-8", "surrogatepass"))
    if sure_words > MAX_TITLE_WORDS:
        return None  # a long page is content, whatever its title says (most pages: a bound, cheap)
    t = normalize(title)
    titled_404 = _NOT_FOUND.search(t) is not None or _is_404_title(t)
    titled = titled_404 or _OTHER.search(t) is not None
    # A page whose title says no error is one only by the head of a short text (at most
    # MAX_WORDS words): its words are counted up to that, not MAX_TITLE_WORDS (most of the
    # summary's soft-error report was counting the words of texts of 150 to 400).
    short_body = _short_body(text, MAX_TITLE_WORDS if titled else MAX_WORDS, sure_words)
    if short_body is None:
        return None  # a long page is content, whatever its title says
    body, words = short_body
    head = body[:_HEAD_CHARS] if words <= MAX_WORDS else ""
    if titled_404 or _NOT_FOUND.search(head):
        return "soft-404"
    if titled or _OTHER.search(head):
        return "soft-error"
    return None


def stored_page_kind(title: str, data: bytes | None, status: int | None = None) -> str | None:
    """``page_kind(title, decompress_text(data), status)`` of a page's text as the index
    stores it (``data``): a page with a status not 2xx without reading its text, and one
    whose UTF-8 bytes alone show it long (``_sure_words``: most pages) without decoding
    them. The bytes' count is a lower bound of the text's (their prefix is a byte prefix of
    the text's first _SURE_CHARS characters'), so what it shows long is long."""
    from pagetwin.pipeline import decompress_utf8

    if status is not None and not 200 <= status <= 299:
        return "http-error"
    utf8 = decompress_utf8(data)
    if _sure_words(utf8[:_SURE_CHARS]) > MAX_TITLE_WORDS:
        return None
    return page_kind(title, utf8.decode("utf-8"), status)


def cluster_kind(kinds: Iterable[str | None]) -> str:
    """A cluster's kind: the kind more than half of its pages have, else "content"."""
    counts = Counter(kind or "content" for kind in kinds)
    total = sum(counts.values())
    kind, n = max(counts.items(), key=lambda kv: (kv[1], kv[0] != "content")) if counts else ("content", 0)
    return kind if n * 2 > total else "content"


def cluster_kinds(index: Any) -> dict[str, str]:
    """cluster id -> kind, for every cluster of the index (its pages' titles, stored main texts
    and HTTP statuses; a page without a status counts as a success)."""
    status_col = "p.http_status" if "http_status" in index.page_columns() else "NULL"
    per_cluster: dict[str, list[str | None]] = {}
    rows = index.db.execute(
        f"SELECT c.cluster, p.title, p.text, {status_col} FROM pages p JOIN clusters c USING (pid) ORDER BY p.pid"
    )
    for cluster, title, text, status in rows:
        per_cluster.setdefault(cluster, []).append(stored_page_kind(title or "", text, status))
    return {cluster: cluster_kind(kinds) for cluster, kinds in per_cluster.items()}


def report(index: Any, limit: int = 100) -> dict[str, Any]:
    """For summary.json: how many clusters and pages of each kind, and the largest clusters
    that are not content ({"cluster", "kind", "size", "kept": {"id", "url"}}, at most
    ``limit``, largest first)."""
    kinds = cluster_kinds(index)
    sizes = index.cluster_sizes()
    clusters_by_kind = Counter(kinds.values())
    pages_by_kind: Counter = Counter()
    for cluster, kind in kinds.items():
        pages_by_kind[kind] += sizes.get(cluster, 0)
    flagged = sorted((c for c, k in kinds.items() if k != "content"), key=lambda c: (-sizes.get(c, 0), c))[:limit]
    listed = []
    for cluster in flagged:
        kept = index.db.execute(
            "SELECT p.id, p.url, p.title FROM clusters c JOIN pages p USING (pid) WHERE c.cluster=? AND c.keep=1 LIMIT 1",
            (cluster,),
        ).fetchone()
        listed.append({
            "cluster": cluster, "kind": kinds[cluster], "size": sizes.get(cluster, 0),
            "kept": {"id": kept[0], "url": kept[1], "title": kept[2]} if kept else None,
        })
    return {
        "clusters_by_kind": dict(sorted(clusters_by_kind.items())),
        "pages_by_kind": dict(sorted(pages_by_kind.items())),
        "not_content": listed,
    }
