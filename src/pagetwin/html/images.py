"""Main-content images: which URL an <img> really shows, its normal form, and a perceptual hash.

Pure kernels; the runner owns the loops:

- pass 1: for every image record of the crawl, ``table[normalize_image_url(url)] = image_phash(body)``
  (in workers; None results are simply not stored);
- pass 2: ``Doc.images = image_refs(extracted.images, page.url, phashes=table, urls=kept_urls)``
  (``kept_urls``: a ``KeptURLs``, the process's memo of candidate URLs from page to page).

URL normal form (``normalize_image_url``), the rule:

1. Resolve against the page URL; only http(s) survives (data:, blob:, javascript: are not images
   of the page's own). ``http`` and ``https`` are folded to ``https`` (the same page served under
   both schemes refers to the same relative images).
2. Host lower-cased, trailing dot, default port and a leading ``www.`` dropped; fragment and
   user-info dropped; dot segments of the path resolved.
3. Wayback Machine replay URLs (``web.archive.org/web/<timestamp><modifier>/<original>``) are
   reduced to the original URL, so captures made at different times share one identity.
4. Query parameters that only resize or bust caches are dropped (``RESIZE_PARAMS``: w, h, width,
   height, size, resize, fit, quality, q, v, ver, version, t, ts, cb, _, timestamp, ...); the
   rest are kept, sorted (their order never changes the image).
5. Size variants in the file name are folded onto the original, only where the pattern is
   unambiguous: WordPress-style ``-300x200`` / ``_300x200`` and retina ``@2x`` before the
   extension, ``-thumb`` / ``_thumbnail`` before the extension, and the CDN form
   ``name.jpg_430x430q90.jpg`` (an image extension, ``_``, anything, an image extension) ->
   ``name.jpg``. Anything else in the path is left alone: folding two different images into one
   identity would make unrelated galleries look alike, while failing to fold two sizes of one
   image is repaired by the perceptual hash when the crawl holds the bytes.

Skipped references (never images of the content): data:/non-http URIs, declared sizes of at most
2 pixels on a side or at most 16x16 (tracking pixels, spacers, icons), file names of known
spacers/placeholders (spacer.gif, blank.gif, pixel.png, 1x1.gif, transparent.png, loading.gif,
...) and known tracking hosts and paths (``TRACKING_HOSTS``, ``/pixel``, ``/beacon``, ...).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from itertools import islice
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit, urlunsplit

from pagetwin.model import ImageRef

# Query parameters that change only the rendition of an image (size, quality) or bust caches.
RESIZE_PARAMS = frozenset(
    """w h width height size sz resize fit crop quality q qlt v ver version t ts cb _ timestamp
    rev hash dpr auto fm format scale maxwidth maxheight mw mh imwidth imheight
    """.split()
)

# Attributes that hold the real image in lazy-loading markup, in the order they are trusted.
# ``src`` comes last: with lazy loading it is a placeholder.
_LAZY_ATTRS = (
    "data-src",
    "data-original",
    "data-lazy-src",
    "data-lazyload",
    "data-lazy",
    "data-url",
    "data-echo",
    "data-hi-res-src",
    "data-ks-lazyload",  # Taobao / Tmall
    "data-lazy-img",  # JD
    "original",
)
_SRCSET_ATTRS = ("data-srcset", "data-lazy-srcset", "srcset")

# Every attribute image_refs reads: the extractor should keep these on each <img> / <source>.
RAW_IMAGE_ATTRS = (
    "src",
    *_LAZY_ATTRS,
    *_SRCSET_ATTRS,
    "alt",
    "title",
    "width",
    "height",
    "data-width",
    "data-height",
    "style",
)

TRACKING_HOSTS = (
    "doubleclick.net",
    "google-analytics.com",
    "googletagmanager.com",
    "googlesyndication.com",
    "scorecardresearch.com",
    "quantserve.com",
    "mc.yandex.ru",
    "counter.yadro.ru",
    "top-fwz1.mail.ru",
    "pixel.wp.com",
    "stats.wp.com",
    "bat.bing.com",
    "analytics.twitter.com",
    "hm.baidu.com",
    "cnzz.com",
    "pixel.quantserve.com",
)
_TRACKING_HOSTS = frozenset(TRACKING_HOSTS)
_TRACKING_FACEBOOK = re.compile(r"^(?:www\.)?facebook\.com$")
_TRACKING_PATH = re.compile(
    r"(?:^|/)(?:pixel|beacon|tracking|tracker|counter|collect|impression|tr)(?:/|\.(?:gif|png|php|aspx?|jpg)$|$)",
    re.IGNORECASE,
)
_SPACER_NAME = re.compile(
    r"(?:^|[/_-])(?:spacer|blank|pixel|1x1|clear|clearpixel|transparent|trans|empty|dot|"
    r"placeholder|lazy|loading|loader|grey|gray|white|px|s)\.(?:gif|png|jpe?g|webp|svg)$",
    re.IGNORECASE,
)

_IMAGE_EXT = r"(?:jpe?g|png|gif|webp|avif|bmp|tiff?)"
# name.jpg_430x430q90.jpg -> name.jpg (Alibaba CDN and similar)
_CDN_SUFFIX = re.compile(rf"(\.{_IMAGE_EXT})_[^/]*\.{_IMAGE_EXT}$", re.IGNORECASE)
# name-300x200.jpg, name_300x200.jpg, name@2x.jpg, name-thumb.jpg -> name.jpg
_SIZE_SUFFIX = re.compile(
    rf"(?<=[^/])(?:[-_]\d{{2,5}}x\d{{2,5}}|@[1-4]x|[-_](?:thumb|thumbnail))(\.{_IMAGE_EXT})$",
    re.IGNORECASE,
)
_WAYBACK = re.compile(r"^/web/\d{1,14}(?:[a-z]{2}_)?/(.+)$")
_DIMENSION = re.compile(r"^\s*(\d{1,6})(?:\.\d+)?\s*(?:px)?\s*$", re.IGNORECASE)
_STYLE_DIM = re.compile(r"(?<![-\w])(width|height)\s*:\s*(\d{1,6})(?:\.\d+)?px", re.IGNORECASE)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalize_image_url(url: str, base: str | None = None) -> str:
    """The normal form of an image URL (rule in the module docstring); "" when it is not http(s).

    Idempotent: normalize_image_url(normalize_image_url(u)) == normalize_image_url(u).
    """
    url = (url or "").strip()
    if not url:
        return ""
    if base:
        try:
            url = urljoin(base, url)
        except ValueError:
            return ""
    for _ in range(3):  # a Wayback URL wraps the original; unwrap (bounded: never loop)
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return ""
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            return ""
        host = (parts.hostname or "").rstrip(".")
        if not host:
            return ""
        if host.startswith("www."):
            host = host[4:]
        if host == "web.archive.org":
            m = _WAYBACK.match(parts.path + ("?" + parts.query if parts.query else ""))
            if m:
                inner = m.group(1)
                # the replay path holds "http:/host" when a proxy collapsed the double slash
                inner = re.sub(r"^(https?):/(?!/)", r"\1://", inner, flags=re.IGNORECASE)
                if not re.match(r"^https?://", inner, re.IGNORECASE):
                    inner = "http://" + inner
                url = inner
                continue
        break
    netloc = host
    if port is not None and port != _DEFAULT_PORTS.get(scheme):
        netloc = f"{host}:{port}"
    path = _normalize_path(parts.path or "/")
    query = _normalize_query(parts.query)
    return urlunsplit(("https", netloc, path, query, ""))


def _normalize_path(path: str) -> str:
    # resolve dot segments (urljoin does it for absolute paths) and re-quote consistently
    if "/." in path:
        # (urljoin would read a path starting "//" as a host: "//0/." came out "/.")
        path = _remove_dot_segments(path) if path.startswith("//") else urlsplit(urljoin("http://x/", path)).path or "/"
    path = quote(path, safe="/:@!$&'()*+,;=-._~%")
    path = _CDN_SUFFIX.sub(r"\1", path)
    path = _SIZE_SUFFIX.sub(r"\1", path)
    return path


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 on an absolute path ("/a/./b/../c" -> "/a/c", "//0/." -> "//0/")."""
    out: list[str] = []
    segments = path.split("/")[1:] if path.startswith("/") else path.split("/")
    for i, segment in enumerate(segments):
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
            continue
        if i == len(segments) - 1:
            out.append("")  # "/a/." and "/a/b/.." keep their trailing slash
    return "/" + "/".join(out)


def _normalize_query(query: str) -> str:
    if not query:
        return ""
    pairs = [
        (k, v)
        for k, v in parse_qsl(query, keep_blank_values=True)
        if k.lower() not in RESIZE_PARAMS
    ]
    pairs.sort()
    return urlencode(pairs)


_SEPARATORS = re.compile(r"[\s,]*")  # what goes before a srcset candidate
_NON_SPACE = re.compile(r"\S*")  # a candidate's URL


def parse_srcset(srcset: str) -> list[tuple[str, float]]:
    """The candidates of a srcset: (url, size) where size is the width (``300w``) or the density
    times 1e6 (``2x``; so widths and densities never tie); 0 when no descriptor is given.

    Follows the HTML parsing rule: the URL is a run of non-space characters (commas inside it
    are part of it, a trailing comma ends the candidate), descriptors run to the next comma.
    """
    out: list[tuple[str, float]] = []
    srcset = srcset or ""
    i, n = 0, len(srcset)
    while i < n:
        # (the runs scanned by a regex, not a character at a time: \s is str.isspace)
        i = _SEPARATORS.match(srcset, i).end()
        if i >= n:
            break
        url, descriptor, i = srcset_candidate(srcset, i, _NON_SPACE.match(srcset, i).end())
        if url:
            out.append((url, descriptor_size(descriptor)))
    return out


def srcset_candidate(srcset: str, start: int, end: int) -> tuple[str, str, int]:
    """(URL, descriptors, where the next candidate may start) of the srcset candidate whose
    URL is srcset[start:end] (a run of non-space characters): a trailing comma ends the
    candidate, else its descriptors run to the next comma."""
    url = srcset[start:end]
    if url.endswith(","):
        return url.rstrip(","), "", end
    k = srcset.find(",", end)
    k = len(srcset) if k < 0 else k
    return url, srcset[end:k].strip(), k + 1


def descriptor_size(descriptor: str) -> float:
    """The size a srcset candidate's descriptors give (parse_srcset): the last width or density
    that reads as a number, 0 when none does."""
    size = 0.0
    for token in descriptor.split():
        token = token.lower()
        try:
            if token.endswith("w"):
                size = float(token[:-1])
            elif token.endswith("x"):
                size = float(token[:-1]) * 1e6
        except ValueError:
            pass
    return size


def _largest(srcset: str) -> list[str]:
    """srcset URLs, largest first (ties keep the later one first: authors list ascending)."""
    cands = parse_srcset(srcset)
    order = sorted(range(len(cands)), key=lambda i: (cands[i][1], i), reverse=True)
    return [cands[i][0] for i in order]


def _dimension(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value) if value >= 0 else None
    m = _DIMENSION.match(str(value))
    return int(m.group(1)) if m else None


def _declared_size(raw: Mapping[str, object]) -> tuple[int | None, int | None]:
    width = _dimension(raw.get("width")) if raw.get("width") is not None else None
    height = _dimension(raw.get("height")) if raw.get("height") is not None else None
    if width is None:
        width = _dimension(raw.get("data-width"))
    if height is None:
        height = _dimension(raw.get("data-height"))
    style = raw.get("style")
    if isinstance(style, str) and (width is None or height is None):
        for name, val in _STYLE_DIM.findall(style):
            if name.lower() == "width" and width is None:
                width = int(val)
            elif name.lower() == "height" and height is None:
                height = int(val)
    return width, height


def is_tiny(width: int | None, height: int | None) -> bool:
    """Declared sizes of tracking pixels, spacers and icons: a side of at most 2 pixels, or at
    most 16x16 (one declared side of at most 2 is enough)."""
    if (width is not None and width <= 2) or (height is not None and height <= 2):
        return True
    return width is not None and height is not None and width <= 16 and height <= 16


def is_tracking_or_spacer(url: str) -> bool:
    """Known tracking hosts and paths, and file names of spacers and lazy-loading placeholders."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return True
    return _tracking_or_spacer((parts.hostname or "").lower(), parts.path)


def _tracking_or_spacer(host: str, path: str) -> bool:
    """is_tracking_or_spacer of a URL's (lower-cased) host and its path."""
    if _tracking_host(host):
        return True
    if _TRACKING_FACEBOOK.match(host) and path.startswith("/tr"):
        return True
    return bool(_SPACER_NAME.search(path) or _TRACKING_PATH.search(path))


def _tracking_host(host: str) -> bool:
    """Whether ``host`` is one of TRACKING_HOSTS or a subdomain of one: the host, or what follows
    one of its dots, is in the set (a lookup a dot, not 16 endswith an image)."""
    i = -1
    while True:
        if host[i + 1 :] in _TRACKING_HOSTS:
            return True
        i = host.find(".", i + 1)
        if i < 0:
            return False


def _str(value: object) -> str:
    if value is None:
        return ""
    return " ".join(str(value).split())


def _candidates(raw: Mapping[str, object]) -> list[str]:
    """Source URLs of one element in the order they are trusted."""
    out: list[str] = []
    for attr in _LAZY_ATTRS:
        v = raw.get(attr)
        if isinstance(v, str) and v.strip():
            out.append(v.strip())
    for attr in _SRCSET_ATTRS:
        v = raw.get(attr)
        if isinstance(v, str) and v.strip():
            out.extend(_largest(v))
    v = raw.get("src")
    if isinstance(v, str) and v.strip():
        out.append(v.strip())
    return out


def image_refs(
    raw: list[dict], page_url: str, phashes: Mapping[str, int] | None = None, urls: KeptURLs | None = None
) -> list[ImageRef]:
    """The main-content images of a page from the raw attributes of its <img> / <source> elements.

    One ImageRef per distinct normalised URL, in page order; tracking pixels, spacers and
    placeholders skipped. When ``phashes`` (normalised URL -> perceptual hash, from pass 1) is
    given, every candidate URL of the element (lazy attribute, each srcset entry, src) is looked
    up, so the hash is found whichever rendition the crawler fetched. ``urls``: the caller's
    memo of candidate URLs kept from page to page (the same ImageRefs with it or without).
    """
    resolve = _resolver(page_url, urls)
    refs: list[ImageRef] = []
    seen: set[str] = set()
    # candidate URL -> _kept_url: a page names a third of its URLs more than once (srcset and
    # src, a lazy attribute and src, the same picture twice)
    kept: dict[str, str] = {}
    for item in raw or ():
        if not isinstance(item, Mapping):
            continue
        width, height = _declared_size(item)
        if is_tiny(width, height):
            continue
        chosen = ""
        normals: list[str] = []
        for cand in _candidates(item):
            norm = kept.get(cand)
            if norm is None:
                norm = kept[cand] = resolve(cand)
            if not norm:
                continue
            normals.append(norm)
            if not chosen:
                chosen = norm
        if not chosen or chosen in seen:
            continue
        seen.add(chosen)
        phash = None
        if phashes:
            for norm in normals:
                phash = phashes.get(norm)
                if phash is not None:
                    break
        refs.append(
            ImageRef(
                url=chosen,
                alt=_str(item.get("alt")),
                title=_str(item.get("title")),
                width=width,
                height=height,
                phash=phash,
            )
        )
    return refs


def looked_up_urls(raw: list[dict], page_url: str, urls: KeptURLs | None = None) -> set[str]:
    """Every normalised URL ``image_refs(raw, page_url, phashes)`` may look up in ``phashes``
    (each candidate of each element it does not skip as tiny; a superset of the lookups): so
    ``phashes`` cut down to these URLs gives the same ImageRefs (Spark's pass 2 is given only
    the hashes its pages may look up, runners.spark)."""
    resolve = _resolver(page_url, urls)
    found: set[str] = set()
    for item in raw or ():
        if isinstance(item, Mapping) and not is_tiny(*_declared_size(item)):
            found.update(filter(None, map(resolve, _candidates(item))))
    return found


def _kept_url(cand: str, page_url: str) -> str:
    """The normal form of a candidate URL of a page's image, "" when it is no image to keep
    (inline data, a script, a tracking pixel or a spacer)."""
    if cand.lower().startswith(("data:", "blob:", "javascript:", "about:")):
        return ""
    norm = normalize_image_url(cand, page_url)
    if not norm or is_tracking_or_spacer(norm):
        return ""
    return norm


# A candidate with a host of its own ("https://cdn.example/a.png", "//cdn.example/a.png"): the
# scheme (if any) is scheme characters up to the first colon, and what follows "//" starts a
# host, even once urlsplit has dropped tabs and newlines. urljoin keeps such a candidate's
# host, path and query, and takes only the scheme of the page URL (when it has none of its own,
# or to compare): its normal form depends of the page on that scheme alone.
_OWN_HOST = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//[^/?#\t\r\n]")
# An absolute http(s) URL that urljoin and urlsplit leave as it is: a plain host (no user, port
# or trailing dot), a path and a query of characters they neither drop nor split off (no tab,
# space, fragment, nor ";" parameters, which urljoin may drop when empty).
_PLAIN_HOST = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*", re.ASCII)
_PATH_CHARS = r"\w/.~!$&'()*+,=@%-"
_QUERY_TO_END = rf"(?:\?([{_PATH_CHARS};:?]*))?\Z"
_PLAIN_URL = re.compile(rf"https?://({_PLAIN_HOST.pattern})(/[{_PATH_CHARS}:]*)?{_QUERY_TO_END}", re.IGNORECASE | re.ASCII)
# A relative URL urljoin appends to the page's folder (or origin, from "/") as it is, when it
# has no dot segment, nor "//" in a path relative to the folder (urljoin drops empty segments):
# no scheme (no ":" before a "?"), no host ("//"), a path (else the page's path is used).
_PLAIN_RELATIVE = re.compile(rf"(?!//)([{_PATH_CHARS}]+){_QUERY_TO_END}", re.ASCII)
_DOT_SEGMENT = re.compile(r"(?:\A|/)\.\.?(?:/|\Z)")
KEPT_URLS_SIZE = 50_000  # candidates a KeptURLs holds (the older half dropped when full; ~18 MB)


class KeptURLs:
    """_kept_url of the candidate URLs with a host of their own, remembered from page to page
    (logos, icons and CDN images recur over a site's pages). Keyed by the candidate and the
    page URL's scheme, all of the page URL it depends on (``_OWN_HOST``); other candidates
    depend on the page's host or path and are resolved for their page alone. One per process,
    owned by the caller (pipeline.Worker), bounded by ``size``."""

    def __init__(self, size: int = KEPT_URLS_SIZE) -> None:
        self.size = size
        self.memo: dict[tuple[str, str], str] = {}

    def remembered(self, resolve: Callable[[str], str], scheme: str) -> Callable[[str], str]:
        """``resolve`` (one page's _kept_url, its page URL of this scheme), memoised."""
        memo, own_host = self.memo, _OWN_HOST.match

        def kept(cand: str) -> str:
            if not own_host(cand):
                return resolve(cand)
            norm = memo.get((scheme, cand))
            if norm is None:
                if len(memo) >= self.size:  # the older half goes: URLs recur in runs of a site's pages
                    for old in list(islice(memo, len(memo) // 2 + 1)):
                        del memo[old]
                norm = memo[(scheme, cand)] = resolve(cand)
            return norm

        return kept


def _resolver(page_url: str, urls: KeptURLs | None = None) -> Callable[[str], str]:
    """``_kept_url(cand, page_url)`` as a function of the candidate: plain absolute URLs, and
    plain relative ones on a plain page URL, without urllib (``_plain_kept_url``); the
    candidates with a host of their own remembered in ``urls`` when given."""
    try:
        base = urlsplit(page_url) if page_url else None
    except ValueError:  # urljoin refuses the page URL: every candidate gives ""
        base = None
    if base is None:
        return partial(_kept_url, page_url=page_url)
    origin = folder = ""
    path = base.path  # (urljoin's: urlparse's path is urlsplit's when it holds no ";")
    if base.scheme in ("http", "https") and _PLAIN_HOST.fullmatch(base.netloc) and not (
        ";" in path or "//" in path or _DOT_SEGMENT.search(path)
    ):
        origin = f"{base.scheme}://{base.netloc}"
        folder = origin + (path[: path.rfind("/") + 1] or "/")

    def resolve(cand: str) -> str:
        norm = _plain_kept_url(cand)
        if norm is None and origin and (m := _PLAIN_RELATIVE.match(cand)):
            rel = m.group(1)
            if not _DOT_SEGMENT.search(rel) and (rel[0] == "/" or "//" not in rel):
                norm = _plain_kept_url((origin if rel[0] == "/" else folder) + cand)
        return _kept_url(cand, page_url) if norm is None else norm

    return urls.remembered(resolve, base.scheme) if urls is not None else resolve


def _plain_kept_url(cand: str) -> str | None:
    """_kept_url of a plain absolute http(s) URL (``_PLAIN_URL``) on a page whose URL urljoin
    accepts, made without urllib: the steps of normalize_image_url that change such a URL; None
    for any other candidate."""
    m = _PLAIN_URL.match(cand)
    if m is None:
        return None
    host = m.group(1).lower()
    if host.startswith("www."):
        host = host[4:]
    if host == "web.archive.org":  # a replay URL: the reference unwraps it
        return None
    path = _normalize_path(m.group(2) or "/")
    if _tracking_or_spacer(host, path):
        return ""
    query = _normalize_query(m.group(3) or "")
    return f"https://{host}{path}?{query}" if query else f"https://{host}{path}"


# --- perceptual hash -------------------------------------------------------------------------


def hamming(a: int, b: int) -> int:
    """Number of differing bits of two 64-bit hashes (perceptual hashes; SimHash fingerprints
    use it too, through fingerprints.base)."""
    return ((a ^ b) & 0xFFFFFFFFFFFFFFFF).bit_count()

MAX_PHASH_PIXELS = 40_000_000  # larger images (declared in the header) are not decoded at all
MIN_PHASH_SIDE = 16  # smaller images carry no identity (icons, pixels)
_FLAT_STD = 2.0  # grey-level standard deviation below which an image is a flat colour
# Frames of more pixels than this (after a JPEG's draft) are box-reduced, a band of rows at a
# time, before anything else is made of them: the decoded frame is then the only full-size
# copy (a 6,300 x 6,300 RGBA PNG took 4 copies, 640 MB). Smaller images hash as they always did.
REDUCE_ABOVE_PIXELS = 4_000_000
_REDUCED_SIDE = 512  # the reduced image's shorter side is at least this (the hash reads 32 x 32)
_BAND_ROWS = 32  # rows of the reduced image made per band


def image_phash(body: bytes) -> int | None:
    """A 64-bit DCT perceptual hash (unsigned, 0 <= h < 2**64) of an image, robust to resizing
    and re-encoding; None when the bytes do not decode, the image is tiny (a side under 16 px),
    flat (one colour: every blank image would share one hash), or larger than MAX_PHASH_PIXELS.

    Decompression bombs and memory: the size is read from the header before any pixel is
    decoded, Pillow's own bomb warning is an error here, JPEGs are decoded in draft mode (scaled
    down by the decoder itself), and other large frames are reduced band by band
    (``REDUCE_ABOVE_PIXELS``), so memory stays at one decoded frame.
    """
    if not body or len(body) < 16:
        return None
    try:
        import io

        import numpy as np
        from PIL import Image
    except ImportError:  # the `images` extra is not installed
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # palette/transparency notes on odd web images
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(body)) as im:
                w, h = im.size
                if w * h > MAX_PHASH_PIXELS or min(w, h) < MIN_PHASH_SIDE:
                    return None
                if im.format == "JPEG":
                    im.draft("RGB", (128, 128))
                im.seek(0)  # first frame of an animation
                w, h = im.size
                grey = _to_grey(_reduced(im) if w * h > REDUCE_ABOVE_PIXELS else im)
        pixels = np.asarray(grey, dtype=np.float64)
    except Exception:  # undecodable, truncated, bomb, unsupported mode: all are "no hash"
        return None
    if pixels.size == 0 or float(pixels.std()) < _FLAT_STD:
        return None
    return _dct_hash(pixels)


def _transparent(im) -> bool:  # noqa: ANN001 - PIL image
    return im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info)


def _reduced(im):  # noqa: ANN001 - PIL image
    """A large frame box-reduced by an integer factor (its shorter side kept at _REDUCED_SIDE or
    more), made a band of rows at a time: each band is cropped, converted (RGBA when the image
    has transparency, else grey, what _to_grey makes of it) and reduced, so no full-size copy
    is made besides the decoded frame. (Pillow's reduce averages RGBA premultiplied by alpha, as
    compositing needs; a band's boxes are the whole image's, the band height a multiple of the
    factor.)"""
    from PIL import Image

    w, h = im.size
    factor = max(1, min(w, h) // _REDUCED_SIDE)
    mode = "RGBA" if _transparent(im) else "L"
    out = Image.new(mode, (-(-w // factor), -(-h // factor)))
    step = factor * _BAND_ROWS
    for top in range(0, h, step):
        band = im.crop((0, top, w, min(h, top + step)))
        band = band.convert(mode)
        out.paste(band.reduce(factor) if factor > 1 else band, (0, top // factor))
    return out


def _to_grey(im):  # noqa: ANN001 - PIL image
    from PIL import Image

    if _transparent(im):
        # transparent pixels hold arbitrary colours: flatten onto white as a browser page would
        rgba = im.convert("RGBA")
        canvas = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        canvas.alpha_composite(rgba)
        im = canvas
    return im.convert("L").resize((32, 32), Image.Resampling.LANCZOS)


def _dct_hash(pixels) -> int:  # noqa: ANN001 - 32x32 float array
    """pHash: 2-D DCT-II of the 32x32 grey image, the 8x8 lowest frequencies, each bit = above
    their median (the DC term excluded from the median so brightness shifts do not move it)."""
    import numpy as np

    n = pixels.shape[0]
    k = np.arange(n)
    basis = np.cos(np.pi * (2 * k[None, :] + 1) * k[:, None] / (2 * n))  # rows: frequencies
    dct = basis @ pixels @ basis.T
    low = dct[:8, :8].flatten()
    med = np.median(low[1:])
    bits = low > med
    value = 0
    for bit in bits:
        value = (value << 1) | int(bit)
    return value
