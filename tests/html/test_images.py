"""Image references and perceptual hashes (html/images.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.html.images import (
    KeptURLs,
    _candidates,
    _kept_url,
    _plain_kept_url,
    _resolver,
    hamming,
    image_phash,
    image_refs,
    is_tiny,
    looked_up_urls,
    normalize_image_url,
    parse_srcset,
)

PIL = pytest.importorskip("PIL")
skdata = pytest.importorskip("skimage.data")
from PIL import Image  # noqa: E402

PAGE = "http://Gallery.example.org/albums/2020/index.html"

# Distinct photographs shipped with scikit-image (chelsea and cat are the same picture: use one).
PHOTOS = ["astronaut", "coffee", "chelsea", "camera", "rocket", "coins", "clock", "hubble_deep_field"]


def _photo(name: str) -> Image.Image:
    arr = getattr(skdata, name)()
    return Image.fromarray(arr).convert("RGB")


def _encode(im: Image.Image, fmt: str, scale: float = 1.0, **kw) -> bytes:
    if scale != 1.0:
        im = im.resize((max(1, int(im.width * scale)), max(1, int(im.height * scale))), Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


# --- URL normal form -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, expected",
    [
        # host case, www., default port, fragment, dot segments, scheme folded
        ("HTTP://WWW.Example.COM:80/a/b/../pic.jpg#top", "https://example.com/a/pic.jpg"),
        ("https://example.com:8443/pic.jpg", "https://example.com:8443/pic.jpg"),
        # resizing and cache-busting parameters dropped, the rest kept and sorted
        ("https://cdn.x.com/p.jpg?w=300&id=7&h=200&v=12&a=1", "https://cdn.x.com/p.jpg?a=1&id=7"),
        ("https://cdn.x.com/p.jpg?quality=80&fit=crop&_=123&cb=9", "https://cdn.x.com/p.jpg"),
        # size variants in file names
        ("https://blog.x.com/wp-content/uploads/sea-300x200.jpg", "https://blog.x.com/wp-content/uploads/sea.jpg"),
        ("https://x.com/img/sea_1024x768.png", "https://x.com/img/sea.png"),
        ("https://x.com/img/sea@2x.png", "https://x.com/img/sea.png"),
        ("https://x.com/img/sea_thumb.jpg", "https://x.com/img/sea.jpg"),
        ("https://img.alicdn.com/i1/O1CN01abc.jpg_430x430q90.jpg", "https://img.alicdn.com/i1/O1CN01abc.jpg"),
        # a Wayback replay URL is the original URL
        (
            "http://web.archive.org/web/20090101000000im_/http://hotel.com/pics/room.jpg",
            "https://hotel.com/pics/room.jpg",
        ),
        # not images of the web
        ("data:image/gif;base64,R0lGODlhAQABAAAAACw=", ""),
        ("javascript:void(0)", ""),
        ("", ""),
    ],
)
def test_normalize_image_url(raw: str, expected: str) -> None:
    assert normalize_image_url(raw) == expected


def test_normalize_does_not_fold_ordinary_names() -> None:
    # a number in a name is not a size; two different pictures stay two
    a = normalize_image_url("https://x.com/photos/2019x.jpg")
    b = normalize_image_url("https://x.com/photos/img-2019.jpg")
    c = normalize_image_url("https://x.com/photos/img-2020.jpg")
    assert a.endswith("/2019x.jpg") and b != c


def test_relative_urls_resolve_against_page_and_schemes_fold() -> None:
    assert normalize_image_url("../p/a.jpg", PAGE) == "https://gallery.example.org/albums/p/a.jpg"
    assert normalize_image_url("//cdn.example.org/a.jpg", PAGE) == "https://cdn.example.org/a.jpg"
    https_page = PAGE.replace("http://", "https://")
    assert normalize_image_url("a.jpg", PAGE) == normalize_image_url("a.jpg", https_page)


_url_part = st.text(alphabet="abcdefgh0123456789-_.~%/", min_size=0, max_size=20)


@settings(max_examples=200, deadline=None)
@given(
    host=st.sampled_from(["Example.com", "www.x.org", "web.archive.org", "a.b.c"]),
    path=_url_part,
    query=st.lists(st.tuples(st.sampled_from(["w", "id", "q", "page", "v", "x"]), _url_part), max_size=4),
)
def test_normalize_is_idempotent(host: str, path: str, query: list[tuple[str, str]]) -> None:
    url = f"http://{host}/{path}" + ("?" + "&".join(f"{k}={v}" for k, v in query) if query else "")
    once = normalize_image_url(url)
    assert normalize_image_url(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_normalize_never_crashes(junk: str) -> None:
    out = normalize_image_url(junk, PAGE)
    assert out == "" or out.startswith("https://")


# --- srcset and the real source --------------------------------------------------------------


def test_parse_srcset() -> None:
    assert parse_srcset("a.jpg 300w, b.jpg 600w") == [("a.jpg", 300.0), ("b.jpg", 600.0)]
    assert parse_srcset("a.jpg, b.jpg 2x") == [("a.jpg", 0.0), ("b.jpg", 2e6)]
    # commas inside a URL belong to it (Cloudinary transformations)
    assert parse_srcset("https://c.io/w_300,h_200/a.jpg 300w") == [("https://c.io/w_300,h_200/a.jpg", 300.0)]
    assert parse_srcset("") == []


def test_lazy_attributes_and_largest_srcset_win() -> None:
    raw = [
        {"src": "/img/placeholder.gif", "data-src": "/img/one.jpg", "alt": "  One\n photo "},
        {"src": "small.jpg", "srcset": "small.jpg 300w, big.jpg 1200w, mid.jpg 600w"},
        {"src": "data:image/gif;base64,AAAA", "data-original": "three.jpg", "title": "Three"},
    ]
    refs = image_refs(raw, PAGE)
    assert [r.url for r in refs] == [
        "https://gallery.example.org/img/one.jpg",
        "https://gallery.example.org/albums/2020/big.jpg",
        "https://gallery.example.org/albums/2020/three.jpg",
    ]
    assert refs[0].alt == "One photo"
    assert refs[2].title == "Three"


def test_pixels_spacers_and_trackers_are_skipped() -> None:
    raw = [
        {"src": "/a.jpg", "width": "1", "height": "1"},  # tracking pixel
        {"src": "/b.jpg", "width": "600", "height": "1px"},  # a rule line
        {"src": "/icon.png", "width": "16", "height": "16"},  # icon
        {"src": "/c.jpg", "style": "width:1px;height:1px"},
        {"src": "/images/spacer.gif"},
        {"src": "/images/blank.gif", "width": "100"},
        {"src": "https://mc.yandex.ru/watch/123"},
        {"src": "https://www.facebook.com/tr?id=1&ev=PageView"},
        {"src": "https://sb.scorecardresearch.com/p?c1=2"},
        {"src": "/track/pixel.gif"},
        {"src": "data:image/png;base64,iVBOR"},
        {"alt": "no source at all"},
        {"src": "/photo.jpg", "width": "640", "height": "480"},  # the only real image
    ]
    refs = image_refs(raw, PAGE)
    assert [r.url for r in refs] == ["https://gallery.example.org/photo.jpg"]
    assert (refs[0].width, refs[0].height) == (640, 480)


def test_is_tiny() -> None:
    assert is_tiny(1, 1) and is_tiny(2, None) and is_tiny(None, 1) and is_tiny(16, 16)
    assert not is_tiny(None, None) and not is_tiny(17, 16) and not is_tiny(300, 200)


def test_same_image_once_per_page_and_phash_lookup_by_any_rendition() -> None:
    raw = [
        {"src": "/p/sea-300x200.jpg", "srcset": "/p/sea-300x200.jpg 300w, /p/sea-1024x768.jpg 1024w"},
        {"src": "/p/sea.jpg?w=800"},  # the same picture again
        {"src": "/p/hill.jpg?v=3", "data-src": "/p/hill-big.webp"},
    ]
    table = {normalize_image_url("https://gallery.example.org/p/hill.jpg"): 42}
    refs = image_refs(raw, PAGE, phashes=table)
    assert [r.url for r in refs] == [
        "https://gallery.example.org/p/sea.jpg",
        "https://gallery.example.org/p/hill-big.webp",
    ]
    # hill-big.webp was not in the crawl, hill.jpg (its src) was: the hash is found anyway
    assert refs[1].phash == 42 and refs[0].phash is None


# Elements of a page's images: a few paths (sizes, cache busters, lazy and srcset variants of
# them), declared sizes (tiny ones skipped), spacers and data: URIs (never looked up).
_PATHS = st.sampled_from(["/p/sea.jpg", "/p/sea-300x200.jpg", "/p/sea.jpg?v=2", "/p/hill.png", "/p/hill@2x.png",
                          "/p/sun.webp?w=80", "/spacer.gif", "data:image/png;base64,AA", "https://cdn.example/x.jpg"])  # fmt: skip
_ELEMENT = st.fixed_dictionaries(
    {},
    optional={
        "src": _PATHS,
        "data-src": _PATHS,
        "srcset": st.lists(st.tuples(_PATHS, st.integers(1, 2000)), max_size=3).map(
            lambda xs: ", ".join(f"{p} {w}w" for p, w in xs)
        ),
        "width": st.sampled_from(["1", "16", "300"]),
        "height": st.sampled_from(["1", "16", "200"]),
    },
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ELEMENT, max_size=6), st.sets(_PATHS, max_size=5), st.integers(0, 2**64 - 1))
def test_hashes_cut_down_to_the_looked_up_urls_give_the_same_refs(raw, recorded, seed) -> None:
    """Spark's pass 2 gets only the hashes of the URLs ``looked_up_urls`` lists for its pages
    (runners.spark): image_refs must find every hash it would find in the whole table."""
    table = {normalize_image_url(p, PAGE): (seed + i) % 2**64 for i, p in enumerate(sorted(recorded))}
    table = {k: v for k, v in table.items() if k}
    wanted = looked_up_urls(raw, PAGE)
    assert image_refs(raw, PAGE, phashes={k: v for k, v in table.items() if k in wanted}) == image_refs(raw, PAGE, phashes=table)
    assert all(ref.url in wanted for ref in image_refs(raw, PAGE))  # the chosen URL of every kept element


# Candidate URLs and page URLs made of the pieces urljoin and urlsplit treat specially: schemes
# (case, none, "//"), hosts, dot segments, queries, and the characters urlsplit drops or strips.
_URL_PIECES = st.sampled_from(
    ["http:", "HTTPS:", "ftp:", "data:", "//", "/", "///", "\t", "\n", "\x01", " ", "a.example", "WWW.B.example",
     "[::1]", "[", ":8080", "..", ".", "img", "p.jpg", "x-300x200.png", "?", "#f", "&", "w=3", "id=7", ";p", ":", "@", "%20"]
)  # fmt: skip
_URLS = st.lists(_URL_PIECES, max_size=8).map("".join)
_PAGE_URLS = st.one_of(
    _URLS,
    _URLS.map(lambda path: "https://a.example/" + path),
    st.sampled_from(
        [PAGE, "https://a.example/x/y.html", "HTTPS://a.example/", "http://A.example", "http://www.a.example/x/?q#f",
         "http://a.example/a//b/c", "http://a.example/a/./b", "http://a.example/a/..", "http://a.example/a;p/b",
         "http://a.example:8080/x/", "http://u@a.example/x/", "http://a.example./x", "ftp://a.example/", "",
         "http://[x/", "http://web.archive.org/web/2020/http://b.example/x/"]
    ),
)  # fmt: skip


# Absolute URLs near the plain form _plain_kept_url takes: hosts, paths and queries of the
# characters it allows, and of those it must leave to the reference.
_PLAIN_PIECES = st.sampled_from(
    ["http://", "HTTPS://", "https://", "www.", "WWW.", "web.archive.org", "cdn", ".example", ".", "-", ":443", "@",
     "/", "/web/2020/", "..", "./", "img", "a-300x200.jpg", "b@2x.PNG", "c.jpg_400x400.jpg", "spacer.gif", "pixel",
     "/tr", "facebook.com", "doubleclick.net", "%20", "%", "~_!$&'()*+,=:", ";p", "?", "w=1", "&", "id=b", "#f",
     "\t", " ", "é", "\x01", "%2e", "a//b", "./x", "x/.."]
)  # fmt: skip
_PLAIN_URLS = st.lists(_PLAIN_PIECES, max_size=10).map("".join)


@settings(max_examples=1000, deadline=None)
@given(st.one_of(_PLAIN_URLS, _URLS), _PAGE_URLS)
def test_plain_urls_without_urllib_are_the_reference(cand, page_url) -> None:
    """The fast path gives what normalize_image_url and the tracking check give, on any page
    whose URL urljoin accepts; the resolver falls back to the reference everywhere else."""
    plain = _plain_kept_url(cand)
    assert plain is None or plain == _kept_url(cand, PAGE) == _kept_url(cand, "http://a.example/b/")
    assert _resolver(page_url)(cand) == _kept_url(cand, page_url)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_PAGE_URLS, st.lists(st.one_of(_PLAIN_URLS, _URLS), max_size=6)), max_size=6))
def test_kept_urls_remembered_from_page_to_page_are_the_reference(pages) -> None:
    """A KeptURLs shared by pages gives every candidate the normal form it has on its own page."""
    urls = KeptURLs(size=8)  # small: emptied along the way too
    for page_url, cands in pages:
        resolve = _resolver(page_url, urls)
        for cand in cands + cands:
            assert resolve(cand) == _kept_url(cand, page_url), (cand, page_url)
        raw = [{"src": cand} for cand in cands]
        assert image_refs(raw, page_url, urls=urls) == image_refs(raw, page_url)


def test_kept_urls_on_real_pages_are_the_reference() -> None:
    """The image URLs of the extraction sets' pages (read where they are), resolved with one
    KeptURLs for all of them, by the fast path where it applies: the reference's."""
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    shared = root.parent / "shared" / "data"
    if not (shared / "extraction").exists():
        pytest.skip(f"no extraction sets at {shared / 'extraction'}")
    sys.path.insert(0, str(root / "bench"))
    from extraction import load_set

    from pagetwin.html.noise import parse_page
    from pagetwin.html.parse import decode_html, parse_html

    urls, checked, plain = KeptURLs(), 0, 0
    for name in ("cleanportaleval", "scrapinghub", "chinese_wce"):
        for page in load_set(name, shared, 60):
            raw = [attrs for _, attrs in parse_page(parse_html(decode_html(page["body"], None))).blocks.images]
            page_url = page.get("url") or PAGE
            resolve = _resolver(page_url, urls)
            for cand in (cand for item in raw for cand in _candidates(item)):
                assert resolve(cand) == _kept_url(cand, page_url), (cand, page_url)
                plain += _plain_kept_url(cand) is not None
                checked += 1
            assert looked_up_urls(raw, page_url, urls) == looked_up_urls(raw, page_url)
    assert checked > 1000 and plain > 100


def test_weird_raw_input_does_not_crash() -> None:
    raw = [None, "x", {"src": 5}, {"src": "http://[::1"}, {"width": "abc", "src": "a.jpg"}, {}]
    refs = image_refs(raw, PAGE)  # type: ignore[arg-type]
    assert [r.url for r in refs] == ["https://gallery.example.org/albums/2020/a.jpg"]
    assert refs[0].width is None


# --- perceptual hash -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def photos() -> dict[str, Image.Image]:
    return {name: _photo(name) for name in PHOTOS}


def test_phash_survives_resize_and_reencode(photos: dict[str, Image.Image]) -> None:
    for name, im in photos.items():
        base = image_phash(_encode(im, "PNG"))
        assert base is not None and 0 <= base < 1 << 64
        variants = [
            _encode(im, "JPEG", 0.5, quality=40),
            _encode(im, "JPEG", 0.75, quality=85),
            _encode(im, "WEBP", 0.4),
            _encode(im.convert("L"), "PNG", 0.6),
        ]
        for body in variants:
            assert body != _encode(im, "PNG")
            h = image_phash(body)
            assert h is not None
            assert hamming(base, h) <= 6, name


def test_phash_tells_photographs_apart(photos: dict[str, Image.Image]) -> None:
    hashes = {name: image_phash(_encode(im, "JPEG", quality=90)) for name, im in photos.items()}
    names = list(hashes)
    closest = min(hamming(hashes[a], hashes[b]) for i, a in enumerate(names) for b in names[i + 1 :])
    assert closest > 12


def test_phash_none_for_bad_tiny_and_flat_images() -> None:
    assert image_phash(b"") is None
    assert image_phash(b"not an image at all, just text " * 10) is None
    assert image_phash(b"<svg xmlns='http://www.w3.org/2000/svg'></svg>" * 3) is None
    assert image_phash(_encode(Image.new("RGB", (1, 1), "white"), "GIF")) is None  # pixel
    assert image_phash(_encode(Image.new("RGB", (10, 40), "red"), "PNG")) is None  # tiny
    assert image_phash(_encode(Image.new("RGB", (300, 200), (40, 90, 200)), "PNG")) is None  # flat
    truncated = _encode(_photo("coffee"), "JPEG", quality=90)[:300]
    assert image_phash(truncated) is None


def test_phash_refuses_decompression_bombs() -> None:
    # a PNG header declaring 20000 x 20000 pixels (400 M): refused before decoding
    im = Image.new("1", (20000, 20000))
    body = _encode(im, "PNG")
    assert len(body) < 200_000
    assert image_phash(body) is None


def test_phash_transparent_image_flattened_on_white() -> None:
    rgb = _photo("astronaut")
    rgba = rgb.copy()
    rgba.putalpha(255)
    assert hamming(image_phash(_encode(rgb, "PNG")), image_phash(_encode(rgba, "PNG"))) <= 2


def test_phash_first_frame_of_animation() -> None:
    frames = [_photo("coins"), _photo("rocket")]
    buf = io.BytesIO()
    frames[0].save(buf, "GIF", save_all=True, append_images=frames[1:])
    gif = image_phash(buf.getvalue())
    assert hamming(gif, image_phash(_encode(frames[0], "PNG"))) <= 8
    assert hamming(gif, image_phash(_encode(frames[1], "PNG"))) > 12


def test_phash_deterministic() -> None:
    body = _encode(_photo("clock"), "JPEG", quality=70)
    assert image_phash(body) == image_phash(body)
    assert np.uint64(image_phash(body)) == image_phash(body)


_attr_value = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.sampled_from(["a.jpg", "/p/b-300x200.png?w=3", "data:image/gif;base64,AA", "//cdn.x/c.webp", "1", "0", "16px", "x.gif 2x, y.gif 1x"]),
)
_raw_img = st.dictionaries(
    st.sampled_from(["src", "data-src", "srcset", "data-original", "alt", "title", "width", "height", "style"]),
    _attr_value,
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_raw_img, max_size=8))
def test_image_refs_invariants(raw: list[dict]) -> None:
    refs = image_refs(raw, PAGE)
    urls = [r.url for r in refs]
    assert len(urls) == len(set(urls)) <= len(raw)  # one ref per distinct image, never more than elements
    for r in refs:
        assert r.url.startswith("https://") and normalize_image_url(r.url) == r.url
        assert not is_tiny(r.width, r.height)


def test_raw_image_attrs_cover_every_attribute_read() -> None:
    from pagetwin.html.images import RAW_IMAGE_ATTRS

    assert {"src", "srcset", "data-src", "data-original", "data-ks-lazyload", "alt", "title", "width", "height", "style"} <= set(RAW_IMAGE_ATTRS)
    # an attribute outside the list is ignored: the list is the whole contract
    assert image_refs([{"data-unknown": "/x.jpg"}], PAGE) == []


def _unbounded_phash(body: bytes) -> int | None:
    """The hash as image_phash made it before frames were reduced (every frame at full size)."""
    from pagetwin.html.images import _dct_hash, _to_grey

    with Image.open(io.BytesIO(body)) as im:
        if im.format == "JPEG":
            im.draft("RGB", (128, 128))
        im.seek(0)
        return _dct_hash(np.asarray(_to_grey(im), dtype=np.float64))


def _large(mode: str, side: int) -> Image.Image:
    """A large image with structure at every scale (gradients, a checkerboard, a disc cut out)."""
    from PIL import ImageDraw

    im = Image.linear_gradient("L").resize((side, side)).convert(mode)
    draw = ImageDraw.Draw(im)
    step = side // 9
    for i in range(0, side, step):
        for j in range(0, side, step):
            if (i // step + j // step) % 2:
                draw.rectangle((i, j, i + step // 2, j + step // 2), fill=(200, 40, 90, 255)[: len(mode)] if mode != "L" else 200)
    if "A" in mode:
        draw.ellipse((side // 4, side // 4, 3 * side // 4, 3 * side // 2), fill=(0, 0, 0, 0))
    return im


def test_phash_of_images_below_the_reduction_is_what_it_always_was(photos: dict[str, Image.Image]) -> None:
    from pagetwin.html.images import REDUCE_ABOVE_PIXELS

    bodies = [_encode(im, "PNG") for im in photos.values()] + [_encode(photos["coffee"], "JPEG", quality=80)]
    big = _large("RGBA", 1900)  # 3.6 M pixels: just under the reduction
    assert 1900 * 1900 <= REDUCE_ABOVE_PIXELS
    bodies.append(_encode(big, "PNG"))
    for body in bodies:
        assert image_phash(body) == _unbounded_phash(body)


@pytest.mark.parametrize("mode", ["RGBA", "RGB", "L"])
def test_phash_of_a_large_image_reduced_band_by_band_stays_close(mode: str) -> None:
    body = _encode(_large(mode, 2600), "PNG")  # 6.8 M pixels: reduced by 5
    h = image_phash(body)
    assert h is not None and hamming(h, _unbounded_phash(body)) <= 4


def test_phash_of_a_large_png_takes_one_decoded_frame_of_memory(tmp_path) -> None:
    # Before: converting, compositing on white and greying made 4 full-size copies (a
    # 6,300 x 6,300 RGBA PNG peaked at 640 MB). Measured in a fresh process.
    import subprocess
    import sys

    side = 3000
    path = tmp_path / "large.png"
    _large("RGBA", side).save(path)
    frame_mb = side * side * 4 / 2**20
    code = (
        "import resource, sys; from pagetwin.html.images import image_phash; body = open(sys.argv[1], 'rb').read(); "
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; assert image_phash(body) is not None; "
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)"
    )
    grown_mb = float(subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout)
    assert grown_mb < 1.6 * frame_mb, (grown_mb, frame_mb)


def _parse_srcset_reference(srcset: str) -> list[tuple[str, float]]:
    """parse_srcset's scan as the HTML rule reads, a character at a time (how images.py scanned
    before its runs were matched by regular expressions); a candidate read as parse_srcset reads it."""
    from pagetwin.html.images import descriptor_size, srcset_candidate

    out: list[tuple[str, float]] = []
    i, n = 0, len(srcset or "")
    while i < n:
        while i < n and (srcset[i].isspace() or srcset[i] == ","):
            i += 1
        if i >= n:
            break
        j = i
        while j < n and not srcset[j].isspace():
            j += 1
        url, descriptor, i = srcset_candidate(srcset, i, j)
        if url:
            out.append((url, descriptor_size(descriptor)))
    return out


# srcset text: URLs, descriptors, commas and every kind of blank str.isspace knows (no-break
# space, em space, the information separators \x1c-\x1f, line and paragraph separators)
_SRCSET_TEXT = st.text(alphabet=st.sampled_from(list("ab/.:,,,  wx0123") + ["\t", "\n", "\xa0", "\u2003", "\x1c", "\u2028", "\x85", "\u200b"]), max_size=60)


@settings(max_examples=500, deadline=None)
@given(_SRCSET_TEXT)
def test_parse_srcset_reads_as_the_character_rule(srcset: str) -> None:
    assert parse_srcset(srcset) == _parse_srcset_reference(srcset)


@given(st.lists(st.sampled_from(["", "x", "www", "doubleclick", "net", "wp", "pixel", "stats", "com", "quantserve", "cnzz.com", "bing"]), max_size=5))
def test_tracking_hosts_are_the_hosts_and_their_subdomains(labels: list[str]) -> None:
    from pagetwin.html.images import TRACKING_HOSTS, _tracking_host

    host = ".".join(labels)
    assert _tracking_host(host) == any(host == h or host.endswith("." + h) for h in TRACKING_HOSTS)


def test_image_refs_of_a_page_naming_an_image_again_are_those_of_each_element_alone() -> None:
    logo = {"src": "/img/logo.png", "width": "200", "height": "50"}
    photo = {"srcset": "/p/a-300x200.jpg 300w, /p/a.jpg 900w", "src": "/p/a.jpg"}
    pixel = {"src": "https://www.google-analytics.com/collect.gif"}
    raw = [photo, pixel, logo, dict(photo, alt="again"), pixel, {"src": "/p/a.jpg", "data-src": "/img/logo.png"}]
    alone = [r for item in raw for r in image_refs([item], PAGE)]
    got = image_refs(raw, PAGE)
    assert [r.url for r in got] == list(dict.fromkeys(r.url for r in alone))
    assert [r.url for r in got] == ["https://gallery.example.org/p/a.jpg", "https://gallery.example.org/img/logo.png"]
