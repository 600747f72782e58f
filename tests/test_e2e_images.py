"""End to end: gallery sites built from real photographs (scikit-image's sample images), resized
and re-encoded so the bytes differ, written into a WARC with the image responses, deduplicated
through `pagetwin dedup --algorithms exact,images`.

The site (gallery.test) has 16 pages sharing a template (logo, navigation, footer with a tracking
pixel): seven galleries of four photographs each, the first gallery again as a "slideshow"
under another URL (other image URLs, PNG renditions at half size: only the perceptual hashes can
tell they are the same photographs; its text differs: slide numbers instead of captions), the
same slideshow without any caption, the first gallery with German captions, and text pages.
Galleries B and C share one photograph.

Expected (policy in fingerprints/images.py): harbour == slideshow (one cluster); every other
gallery its own cluster (B and C too); the German gallery is not a duplicate of the English one
(translations are distinct documents). Without `images`, harbour and slideshow are apart.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest

PIL = pytest.importorskip("PIL")
skdata = pytest.importorskip("skimage.data")
from PIL import Image, ImageOps  # noqa: E402

SITE = "http://gallery.test"
SLIDESHOW = "/slideshow?album=harbour&start=1"
BARE_SLIDESHOW = "/slideshow?album=harbour&start=1&captions=off"
PHOTOS = [
    "astronaut", "coffee", "chelsea", "camera", "rocket", "coins", "clock", "hubble_deep_field",
    "immunohistochemistry", "retina", "moon", "brick", "grass", "gravel", "page", "colorwheel",
]  # fmt: skip

CAPTIONS_EN = [
    "Fishing boats resting in the old harbour at dawn",
    "Morning coffee on the terrace above the quay",
    "The harbour cat asleep on a coil of rope",
    "A fisherman mending nets beside the lighthouse",
]
CAPTIONS_DE = [
    "Fischerboote liegen im alten Hafen bei Sonnenaufgang",
    "Morgenkaffee auf der Terrasse über dem Kai",
    "Die Hafenkatze schläft auf einer Rolle Tau",
    "Ein Fischer flickt Netze neben dem Leuchtturm",
]

TEMPLATE = """<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<title>{title} | Harbour Photos</title></head><body>
<header><a href="/"><img src="/static/logo.png" alt="Harbour Photos" width="160" height="48"></a>
<nav><a href="/">Home</a> <a href="/galleries">Galleries</a> <a href="/about">About us</a>
<a href="/contact">Contact</a> <a href="/shop">Prints shop</a></nav></header>
<main>{main}</main>
<footer><p>Copyright 2024 Harbour Photos. All rights reserved. Photographs may not be reused
without permission.</p><img src="https://stats.gallery.test/pixel.gif" width="1" height="1" alt=""></footer>
</body></html>"""


def _photo(i: int) -> Image.Image:
    """Distinct photograph number i: the sample images, then their mirror images."""
    name = PHOTOS[i % len(PHOTOS)]
    im = Image.fromarray(getattr(skdata, name)()).convert("RGB")
    return ImageOps.mirror(im) if i >= len(PHOTOS) else im


def _encode(im: Image.Image, fmt: str, scale: float, **kw) -> bytes:
    im = im.resize((max(16, int(im.width * scale)), max(16, int(im.height * scale))), Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def _gallery(title: str, items: list[tuple[str, str]], lang: str = "en") -> str:
    figures = "\n".join(
        f'<figure><img src="{src}" alt="" width="800" height="600" loading="lazy">'
        f"<figcaption>{caption}</figcaption></figure>"
        for src, caption in items
    )
    return TEMPLATE.format(lang=lang, title=title, main=f"<h1>{title}</h1>\n<div class=\"gallery\">{figures}</div>")


def _text_page(title: str, paragraphs: list[str]) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return TEMPLATE.format(lang="en", title=title, main=f"<article><h1>{title}</h1>{body}</article>")


def build_site() -> tuple[dict[str, str], dict[str, tuple[bytes, str]]]:
    """(url -> html, url -> (image bytes, content type))."""
    pages: dict[str, str] = {}
    images: dict[str, tuple[bytes, str]] = {}

    def jpeg(url: str, photo: int, scale: float, quality: int) -> str:
        images[SITE + url] = (_encode(_photo(photo), "JPEG", scale, quality=quality), "image/jpeg")
        return url

    # Gallery A: the harbour, English captions; image URLs with size suffixes and cache busters
    a_items = [(jpeg(f"/photos/harbour/{i}-800x600.jpg?v=3", i, 0.8, 85), CAPTIONS_EN[i]) for i in range(4)]
    pages[SITE + "/galleries/harbour"] = _gallery("The harbour at dawn", a_items)
    # the same photographs as a slideshow: other URLs, PNG at half size, slide numbers only
    slides = []
    for i in range(4):
        url = f"/cdn/slides/{1000 + 7 * i}.png"
        images[SITE + url] = (_encode(_photo(i), "PNG", 0.5), "image/png")
        slides.append((url, f"Slide {i + 1} of 4 from the harbour series, full size"))
    pages[SITE + SLIDESHOW] = _gallery("Slideshow", slides)
    # and with no text at all
    pages[SITE + BARE_SLIDESHOW] = _gallery("Slideshow", [(url, "") for url, _ in slides])
    # the same photographs with German captions (a translation)
    de_items = [(src, CAPTIONS_DE[i]) for i, (src, _) in enumerate(a_items)]
    pages[SITE + "/de/galerien/hafen"] = _gallery("Der Hafen im Morgengrauen", de_items, lang="de")

    # Galleries B..G: different photographs; B and C share photograph 4
    photo_sets = [[4, 5, 6, 7], [4, 8, 9, 10], [11, 12, 13, 14], [15, 16, 17, 18], [19, 20, 21, 22], [23, 24, 25, 26]]
    topics = ["rockets", "laboratory", "textures", "mirror one", "mirror two", "mirror three"]
    for g, (topic, photos) in enumerate(zip(topics, photo_sets)):
        items = []
        for k, p in enumerate(photos):
            url = jpeg(f"/photos/{topic.replace(' ', '-')}/{p}.jpg", p, 0.6 + 0.05 * g, 70 + 3 * k)
            items.append((url, f"Picture {k + 1} of the {topic} gallery, number {p}"))
        pages[SITE + f"/galleries/{topic.replace(' ', '-')}"] = _gallery(f"Gallery of {topic}", items)

    # Text pages of the same site
    words = ("harbour sea boats light morning nets quay lighthouse gulls tide paper prints workshop "
             "spring autumn composition patience licence exhibition story rope fisherman coffee").split()
    for n, title in enumerate(["About us", "Contact", "Prints shop", "Workshops", "Licensing", "Exhibitions"]):
        r = random.Random(n)
        paragraphs = [" ".join(r.choice(words) for _ in range(40)).capitalize() + "." for _ in range(3)]
        pages[SITE + f"/{title.lower().replace(' ', '-')}"] = _text_page(title, paragraphs)

    images[SITE + "/static/logo.png"] = (_encode(_photo(0).crop((0, 0, 400, 120)), "PNG", 0.4), "image/png")
    return pages, images


def write_warc(path: Path, pages: dict[str, str], images: dict[str, tuple[bytes, str]]) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        records = [(url, html.encode("utf-8"), "text/html; charset=utf-8") for url, html in pages.items()]
        records += [(url, body, ctype) for url, (body, ctype) in images.items()]
        for url, body, ctype in records:
            headers = StatusAndHeaders("200 OK", [("Content-Type", ctype), ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=headers))


def _pipeline_ready() -> str:
    try:
        from pagetwin.html import noise  # noqa: F401
        from pagetwin.sources import iter_pages  # noqa: F401
    except ImportError as exc:
        return f"pipeline pieces not available yet: {exc}"
    return ""


def _run_cli(args: list[str]) -> None:
    """`pagetwin dedup ...` through the command-line entry point, in this process (one worker)."""
    from pagetwin.cli import main

    assert main(["dedup", *args, "--workers", "1"]) == 0


def _dedup(warc: Path, out: Path, algorithms: str, *extra: str) -> dict[str, str]:
    _run_cli([str(warc), "--out", str(out), "--algorithms", algorithms, *extra])
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    return {r["url"]: r["cluster"] for r in rows}


def _pairs(out: Path) -> set[frozenset[str]]:
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    return {frozenset((p["url_a"].removeprefix(SITE), p["url_b"].removeprefix(SITE))) for p in pairs}


@pytest.fixture(scope="module")
def gallery_warc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reason = _pipeline_ready()
    if reason:
        pytest.skip(reason)
    path = tmp_path_factory.mktemp("gallery") / "gallery.warc.gz"
    pages, images = build_site()
    write_warc(path, pages, images)
    return path


def test_fixture_bytes_differ_but_photographs_match() -> None:
    """The planted renditions really differ in bytes and really agree in perceptual hash."""
    from pagetwin.html.images import hamming, image_phash

    _, images = build_site()
    a = [images[f"{SITE}/photos/harbour/{i}-800x600.jpg?v=3"][0] for i in range(4)]
    b = [images[f"{SITE}/cdn/slides/{1000 + 7 * i}.png"][0] for i in range(4)]
    for x, y in zip(a, b):
        assert x != y
        assert hamming(image_phash(x), image_phash(y)) <= 6
    others = [body for url, (body, _) in images.items() if "/photos/" in url and "harbour" not in url]
    for x in a:
        assert min(hamming(image_phash(x), image_phash(o)) for o in others) > 6


def test_gallery_clusters_with_images(gallery_warc: Path, tmp_path: Path) -> None:
    out = tmp_path / "with"
    clusters = _dedup(gallery_warc, out, "exact,images")
    page = {u.removeprefix(SITE): c for u, c in clusters.items()}
    assert page["/galleries/harbour"] == page[SLIDESHOW]
    # translations are distinct documents: no edge between them
    edges = _pairs(out)
    assert frozenset(("/galleries/harbour", "/de/galerien/hafen")) not in edges
    assert page["/de/galerien/hafen"] != page["/galleries/harbour"]
    # galleries of different photographs, even sharing one photograph, are apart
    galleries = ["/galleries/harbour", "/galleries/rockets", "/galleries/laboratory", "/galleries/textures",
                 "/galleries/mirror-one", "/galleries/mirror-two", "/galleries/mirror-three"]  # fmt: skip
    assert len({page[g] for g in galleries}) == len(galleries)
    # text pages are not pulled into galleries, and template images (logo, pixel) made no edge
    assert page["/about-us"] not in {page[g] for g in galleries}
    assert all(not any(u.startswith("/galleries/") for u in e) or {SLIDESHOW, BARE_SLIDESHOW} & e for e in edges)
    # explain material: shared and differing images in the evidence
    evidence = [json.loads(line)["evidence"] for line in (out / "pairs.jsonl").read_text().splitlines()]
    image_ev = [e for ev in evidence for e in ev if e["algorithm"] == "images"]
    assert image_ev and all({"shared", "only_a", "only_b"} <= set(e) for e in image_ev)
    assert max(e["phash_matches"] for e in image_ev) == 4


def test_without_images_the_slideshow_is_apart(gallery_warc: Path, tmp_path: Path) -> None:
    clusters = _dedup(gallery_warc, tmp_path / "without", "exact")
    assert clusters[SITE + "/galleries/harbour"] != clusters[SITE + SLIDESHOW]


def test_translations_policy_setting(gallery_warc: Path, tmp_path: Path) -> None:
    out = tmp_path / "translations"
    clusters = _dedup(gallery_warc, out, "exact,images", "--images-translations-are-duplicates", "true")
    assert frozenset(("/galleries/harbour", "/de/galerien/hafen")) in _pairs(out)
    assert clusters[SITE + "/de/galerien/hafen"] == clusters[SITE + "/galleries/harbour"]


def test_caption_less_gallery_joins_its_twin(gallery_warc: Path, tmp_path: Path) -> None:
    clusters = _dedup(gallery_warc, tmp_path / "bare", "exact,images")
    assert clusters[SITE + BARE_SLIDESHOW] == clusters[SITE + "/galleries/harbour"]


def test_byte_identical_images_under_other_urls(tmp_path: Path) -> None:
    if _pipeline_ready():
        pytest.skip(_pipeline_ready())
    pages: dict[str, str] = {}
    images: dict[str, tuple[bytes, str]] = {}
    items_a, items_b = [], []
    for i in range(4):
        body = _encode(_photo(i), "JPEG", 0.5, quality=80)
        images[f"{SITE}/photos/{i}.jpg"] = (body, "image/jpeg")
        images[f"{SITE}/mirror/{i}.jpg"] = (body, "image/jpeg")  # a CDN mirror: the same bytes
        items_a.append((f"/photos/{i}.jpg", CAPTIONS_EN[i]))
        items_b.append((f"/mirror/{i}.jpg", f"Mirror copy {i + 1} of the harbour series photographs"))
    pages[SITE + "/galleries/harbour"] = _gallery("The harbour at dawn", items_a)
    pages[SITE + "/mirror/harbour"] = _gallery("Harbour mirror", items_b)
    warc = tmp_path / "mirror.warc.gz"
    write_warc(warc, pages, images)
    clusters = _dedup(warc, tmp_path / "out", "exact,images")
    assert clusters[SITE + "/galleries/harbour"] == clusters[SITE + "/mirror/harbour"]
