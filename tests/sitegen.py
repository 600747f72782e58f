"""Generated test sites: articles of seeded random English-like prose inside site templates.

Used by the end-to-end tests; everything is deterministic for a given seed.
"""

from __future__ import annotations

import random

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
