"""Fixture pages for the near-duplicate end-to-end tests: articles made of seeded English-like
sentences, wrapped in two different site templates (navigation, sidebar, footer, an ad)."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "the city council voted on a new plan to build houses near the river after months of debate "
    "residents said traffic and noise would grow while the mayor argued that families need homes "
    "schools parks and shops would follow the project which costs millions over ten years "
    "engineers warned about floods in spring and asked for stronger walls along the banks "
    "farmers in the valley reported a dry summer with low prices for grain and milk "
    "scientists measured the water quality every week and found fewer fish than before "
    "the museum opened an exhibition of old maps showing how the harbour changed over centuries "
    "visitors can see ships tools letters and paintings from merchants who traded spices and cloth "
    "the football club signed a young striker who scored twice in his first match at home "
    "coaches praised his speed while fans sang songs until late in the evening "
    "a storm closed the mountain road and rescue teams carried food to villages cut off by snow "
    "doctors at the hospital tested a treatment that shortens recovery after knee surgery "
    "the library will extend opening hours and lend laptops to students during exams"
).split()


def sentences(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(12, 22))]
        out.append(" ".join(words).capitalize() + ".")
    return out


def article_paragraphs(seed: int, paragraphs: int = 8) -> list[str]:
    s = sentences(seed, paragraphs * 4)
    return [" ".join(s[i : i + 4]) for i in range(0, len(s), 4)]


def template_a(title: str, date: str, paragraphs: list[str], ad: str) -> str:
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>{title} | Daily Courier</title></head>
<body><header><nav><a href="/">Home</a> <a href="/world">World</a> <a href="/sport">Sport</a>
<a href="/culture">Culture</a> <a href="/weather">Weather</a></nav></header>
<main><article><h1>{title}</h1><p class="date">Published {date}</p>
{body}
</article><div class="ad">{ad}</div></main>
<aside><h3>Most read</h3><ul><li><a href="/a1">Prices rise again</a></li><li><a href="/a2">Election results</a></li></ul></aside>
<footer><p>Copyright 2024 Daily Courier. All rights reserved.</p><a href="/privacy">Privacy</a></footer></body></html>"""


def template_b(title: str, date: str, paragraphs: list[str], ad: str) -> str:
    body = "\n".join(f"<div class='para'><p>{p}</p></div>" for p in paragraphs)
    return f"""<html><head><title>{title} - Evening Post</title></head>
<body><div id="top"><ul class="menu"><li><a href="/">Front page</a></li><li><a href="/local">Local</a></li>
<li><a href="/opinion">Opinion</a></li></ul></div>
<div id="content"><h2 class="headline">{title}</h2><span class="meta">Updated {date}</span>
<div class="story">{body}</div>
<div class="sponsor">{ad}</div></div>
<div id="bottom"><p>Evening Post Ltd, 1 Main Street. Subscribe to our newsletter.</p></div></body></html>"""


def write(path: Path, html: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path
