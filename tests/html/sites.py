"""Multi-page test sites the tests generate: articles of seeded random prose inside site
templates that page-level rules alone cannot fully remove (boilerplate paragraphs without links,
a footer whose year changes, a "latest news" box that differs on every page, two templates)."""

from __future__ import annotations

import random

WORDS = (
    "harbour council budget school railway museum festival election storm bridge library hospital "
    "market factory garden village mountain island forest station theatre college farmers workers "
    "students teachers doctors engineers residents visitors officials volunteers announced reported "
    "approved rejected opened closed repaired expanded delayed discussed measured planned funded "
    "organised celebrated questioned reviewed completed launched morning evening weekend spring "
    "summer autumn winter annual local regional national public private historic modern rural "
    "urban coastal northern water energy traffic housing transport weather tourism heritage "
    "research safety health report plan project proposal decision meeting survey study agreement"
).split()
GLUE = "the of and to in is was for on that with as by at from their this which have are be".split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) if rng.random() < 0.6 else rng.choice(GLUE) for _ in range(rng.randint(9, 16))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(3, 5)))


ABOUT_A = (
    "About the Gazette: we are an independent regional newspaper founded by local readers, "
    "reporting on the towns of the valley every day without a paywall or advertising partners."
)
ABOUT_B = (
    "Gazette Magazine is the weekend edition of the Gazette, with long reads, interviews and "
    "photography from across the region, delivered to subscribers every Saturday morning."
)
FOOTER = "Copyright {year} Valley Gazette Media Limited. All rights reserved. Registered in the valley as company number {num}."


def site_page(i: int, *, seed: int = 0, template: str = "a", paragraphs: int = 5) -> tuple[str, list[str]]:
    """HTML of page ``i`` of the site and its article paragraphs. Template "a" and "b" differ in
    markup and boilerplate; both have a menu, a boilerplate paragraph, a latest-news box whose
    headlines differ on every page and a copyright line whose year changes. In template "a" the
    boilerplate paragraph and the copyright line end the article container (as CMSs append
    them), where page-level rules cannot tell them from the article."""
    rng = random.Random(seed * 100_003 + i)
    article = [paragraph(rng) for _ in range(paragraphs)]
    title = sentence(rng)[:60]
    latest = "".join(f'<li><a href="/news/{rng.randint(1, 10**6)}">{sentence(rng)[:50]}</a></li>' for _ in range(4))
    body = "".join(f"<p>{p}</p>" for p in article)
    footer = FOOTER.format(year=2000 + i % 25, num=1000 + i)
    if template == "a":
        html = (
            "<html><head><title>{t} - Valley Gazette</title></head><body>"
            '<div class="top"><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a> '
            '<a href="/about">About</a> <a href="/contact">Contact</a></div>'
            '<div class="wrap"><div class="story"><h1>{t}</h1>{body}<p class="about">{about}</p>'
            '<p class="rights">{footer}</p></div>'
            '<div class="col"><div class="latest"><h4>Latest news</h4><ul>{latest}</ul></div></div></div>'
            '<div class="bottom"><p>Valley Gazette, 1 Harbour Street</p></div></body></html>'
        )
        about = ABOUT_A
    else:
        html = (
            "<html><head><title>{t} | Gazette Magazine</title></head><body>"
            '<table class="layout"><tr><td class="menu-cell"><a href="/">Magazine</a> <a href="/long-reads">Long reads</a> '
            '<a href="/photo">Photography</a> <a href="/subscribe">Subscribe</a></td></tr>'
            '<tr><td><section class="feature"><h2>{t}</h2>{body}</section>'
            '<p class="promo">{about}</p><div class="more"><ul>{latest}</ul></div></td></tr></table>'
            '<div class="legal"><p>{footer}</p></div></body></html>'
        )
        about = ABOUT_B
    return html.format(t=title, body=body, about=about, latest=latest, footer=footer), article


def site_pages(n: int, *, seed: int = 0, templates: str = "a") -> list[tuple[str, str, list[str]]]:
    """``n`` pages (url, html, article paragraphs); with ``templates="ab"`` they alternate."""
    out = []
    for i in range(n):
        template = templates[i % len(templates)]
        html, article = site_page(i, seed=seed, template=template)
        out.append((f"https://gazette.example/{template}/{seed}/{i}.html", html, article))
    return out
