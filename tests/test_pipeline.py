"""pipeline.Worker, the per-page kernels: text-only documents and charset labels."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pagetwin.config import Settings
from pagetwin.model import Page
from pagetwin.pipeline import Worker

TEXT = "Use <b> tags & x < y in maths.\n\n  Rivers and their bridges, a second paragraph.  \n"


def _text_doc(text=TEXT, metadata=None):
    return Page("doc-1", "https://x.example/1", text.encode(), meta={"text_only": True, "metadata": metadata or {}})


def test_a_text_only_document_is_its_own_main_text():
    """No HTML parsing: markup-like characters stay text, lines are paragraphs."""
    worker = Worker(Settings())
    extraction = worker.extract(_text_doc(metadata={"title": "Maths"}))
    assert extraction.extracted.text == "Use <b> tags & x < y in maths.\nRivers and their bridges, a second paragraph."
    assert extraction.extracted.title == "Maths"
    result = worker.fingerprint(_text_doc())
    assert not result.error and result.features and "minhash" in result.features


def test_a_text_only_document_teaches_no_template():
    record = Worker(Settings()).learn(_text_doc())
    assert record.stats is None


def test_the_same_text_as_html_and_as_text_gives_the_same_minhash():
    """A document is the same document whether its text came as HTML or as text."""
    words = " ".join(f"word{i}" for i in range(200))
    html = f"<html><body><article><p>{words}</p></article></body></html>".encode()
    worker = Worker(Settings())
    as_html = worker.fingerprint(Page("h", "https://x.example/h", html))
    as_text = worker.fingerprint(_text_doc(words))
    assert as_html.features["minhash"] == as_text.features["minhash"]


def test_a_refused_charset_label_is_counted_and_the_page_kept():
    body = "<html><body><p>Grüße aus Köln, eine Seite mit Umlauten und mehr Text.</p></body></html>".encode()
    worker = Worker(Settings())
    result = worker.fingerprint(Page("p", "https://x.example/p", body, http_charset="idna"))
    assert not result.error
    assert result.refused_charsets == 1
    assert "Grüße" in result.doc.text


@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_stored_text_round_trips(text):
    from pagetwin.pipeline import compress_text, decompress_text

    data = compress_text(text)
    assert data[:4] == b"\x28\xb5\x2f\xfd"  # zstd
    assert decompress_text(data) == text


def test_stored_text_is_zstd_at_its_level_from_any_thread():
    """The kept compressor writes the bytes a compressor made per call writes, in each thread."""
    from concurrent.futures import ThreadPoolExecutor

    import zstandard

    from pagetwin.pipeline import TEXT_ZSTD_LEVEL, compress_text

    texts = [f"Текст {i} " * (i * 40) for i in range(60)]
    with ThreadPoolExecutor(4) as pool:
        stored = list(pool.map(compress_text, texts))
    assert stored == [zstandard.compress(t.encode("utf-8"), TEXT_ZSTD_LEVEL) for t in texts]


def test_text_stored_by_earlier_versions_is_read_too():
    import zlib

    from pagetwin.pipeline import decompress_text

    text = "Ранее сохранённый текст, zlib. " * 20
    assert decompress_text(zlib.compress(text.encode("utf-8"), 6)) == text
    assert decompress_text(None) == decompress_text(b"") == ""


def test_stored_text_is_read_back_from_any_thread():
    """The kept decompressor reads what zstandard.compress (earlier versions) and compress_text
    wrote, in each thread, as a decompressor made per call does."""
    from concurrent.futures import ThreadPoolExecutor

    import zstandard

    from pagetwin.pipeline import compress_text, decompress_text

    texts = [f"Gespeicherter Text {i} " * (i * 30) for i in range(60)]
    # level 3: what indexes written before TEXT_ZSTD_LEVEL was 1 hold
    stored = [zstandard.compress(t.encode("utf-8"), 3) if i % 2 else compress_text(t) for i, t in enumerate(texts)]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(decompress_text, stored)) == texts
    assert [zstandard.decompress(d).decode("utf-8") for d in stored] == texts


def test_images_are_resolved_only_when_an_algorithm_reads_them():
    """Doc.images is read by the images algorithm alone: without it no image URL is resolved."""
    figures = "".join(
        f"<figure><img src='/photos/{i}.jpg' width='800'><figcaption>The harbour in spring, photograph {i}.</figcaption></figure>"
        for i in range(4)
    )
    words = " ".join(f"word{i}" for i in range(200))
    html = f"<html><body><div class='story'><h1>Harbour</h1><p>{words}</p>{figures}</div></body></html>".encode()
    page = Page("g", "https://x.example/g", html)
    assert Worker(Settings()).analyse(page)[0].images == []
    settings = Settings()
    settings.match.algorithms = ["exact", "images"]
    urls = [ref.url for ref in Worker(settings).analyse(page)[0].images]
    assert urls == [f"https://x.example/photos/{i}.jpg" for i in range(4)]


def test_images_attributes_are_collected_only_when_an_algorithm_reads_them():
    """Without the images algorithm the walk keeps no image's attributes (in ParsedPage's bytes
    neither): the same blocks, hashes and decision, each image's attributes None."""
    import dataclasses

    from pagetwin.html.blocks import ParsedPage

    figures = "".join(f"<figure><img src='/p/{i}.jpg' alt='photo {i}'><figcaption>Photograph {i} of the harbour.</figcaption></figure>" for i in range(3))
    html = f"<html><body><article><h1>Harbour</h1><p>{'words of the story ' * 30}</p>{figures}</article></body></html>".encode()
    page = Page("g", "https://x.example/g", html)
    with_images = Settings()
    with_images.match.algorithms = ["exact", "images"]
    lean, full = Worker(Settings()).parse(page), Worker(with_images).parse(page)
    assert [raw for _, raw in full.blocks.images] == [{"src": f"/p/{i}.jpg", "alt": f"photo {i}"} for i in range(3)]
    assert lean.blocks.images == [(b, None) for b, _ in full.blocks.images]
    assert dataclasses.replace(lean.blocks, images=[]) == dataclasses.replace(full.blocks, images=[])
    assert lean.page_level() == full.page_level()
    again = ParsedPage.from_bytes(lean.to_bytes())
    assert again == lean and len(lean.to_bytes()) < len(full.to_bytes())
    assert again.extracted(*again.page_level()).images == [] and again.extracted(*again.page_level()).text == full.extracted(*full.page_level()).text
