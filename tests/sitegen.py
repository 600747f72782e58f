"""Generated test sites: articles of seeded random English-like prose inside site templates.

Used by the end-to-end tests; everything is deterministic for a given seed.
"""

from __future__ import annotations

import random
from base64 import b32encode
from hashlib import sha1

_WORDS = (
    "the of and to in is was for on that with as by at from his her their this which have are be "
    "river council budget school harbour railway museum festival election storm bridge library "
    "hospital market factory garden village mountain island forest station theatre college "
    "farmers workers students teachers doctors engineers residents visitors officials volunteers "
    "announced reported approved rejected opened closed repaired expanded delayed discussed "
    "measured planned funded organised celebrated questioned reviewed completed launched "
    "yesterday morning evening weekend spring summer autumn winter annual local regional national "
    "new old large small early late public private historic modern rural urban coastal northern "
    "water energy traffic housing transport weather tourism heritage research safety health "
    "report plan project proposal decision meeting survey study agreement programme committee "
    "after before during because although while since until unless whereas"
).split()


def sentence(rng: random.Random, n: int | None = None) -> str:
    words = [rng.choice(_WORDS) for _ in range(n or rng.randint(9, 18))]
    return " ".join(words).capitalize() + "."


def article(seed: int, paragraphs: int = 5) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(sentence(rng) for _ in range(rng.randint(3, 5))) for _ in range(paragraphs)]


def page(title: str, paragraphs: list[str], *, site: str = "Example News", menu: list[str] | None = None,
         footer: str = "© 2024 Example News. All rights reserved.", sidebar: list[str] | None = None,
         date: str = "12 March 2024", ad: str = "") -> str:
    menu = menu or ["Home", "World", "Politics", "Business", "Sport", "Weather", "Contact"]
    nav = "".join(f'<li><a href="/{m.lower()}">{m}</a></li>' for m in menu)
    side = "".join(f'<li><a href="/story/{i}">{s}</a></li>' for i, s in enumerate(sidebar or []))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title} | {site}</title>"
        f"<meta name='description' content='{title}'></head><body>"
        f"<header><div class='logo'>{site}</div><nav><ul>{nav}</ul></nav></header>"
        f"<main><article><h1>{title}</h1><p class='date'>{date}</p>{body}</article></main>"
        f"<aside class='related'><h3>Latest news</h3><ul>{side}</ul></aside>"
        f"{ad}<footer><p>{footer}</p><a href='/privacy'>Privacy</a> <a href='/terms'>Terms</a></footer>"
        "</body></html>"
    )


def news_crawl(writer, *, others: int = 12, images: list[bytes] = ()) -> tuple[dict[str, str], list[str]]:
    """Write a small news crawl with ``writer`` (pagetwin.outputs.warc.WarcWriter): an article
    under two URLs (exact), an edited copy (near duplicate), ``others`` unrelated stories,
    ``images`` as PNG responses, a stylesheet, a request and a warcinfo record, and a revisit of
    the article. Returns (names -> WARC-Record-IDs, the article's paragraphs)."""
    story = article(1)
    edited = list(story)
    edited[2] = edited[2].replace(".", ", officials said.", 1)
    html = page("Harbour bridge reopens", story).encode()
    ids: dict[str, str] = {}
    w = writer
    w.write_warcinfo("crawl.warc.gz", {"software": "tests"})
    ids["a"] = w.write_response("https://news.example/bridge", html, date="2024-03-12T10:00:00Z")
    w.write_request("https://news.example/bridge")
    ids["a2"] = w.write_response("https://news.example/bridge?ref=home", html, date="2024-03-12T10:05:00Z")
    ids["near"] = w.write_response(
        "https://news.example/bridge-updated",
        page("Harbour bridge reopens", edited, date="13 March 2024").encode(),
        date="2024-03-13T10:00:00Z",
    )
    for i in range(others):
        ids[f"other{i}"] = w.write_response(
            f"https://news.example/story{i}", page(f"Story {i}", article(100 + i)).encode(), date="2024-03-12T11:00:00Z"
        )
    for i, png in enumerate(images):
        w.write_response(f"https://news.example/img/{i}.png", png, content_type="image/png")
    w.write_response("https://news.example/site.css", b"body{color:red}", content_type="text/css")
    digest = "sha1:" + b32encode(sha1(html).digest()).decode()
    ids["revisit"] = w.write_revisit(
        "https://news.example/bridge", digest, "https://news.example/bridge", "2024-03-12T10:00:00Z",
        date="2024-03-20T10:00:00Z",
    )
    return ids, story
