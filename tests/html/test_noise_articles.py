"""Articles: what of an article's region is not its text (captions of photos and galleries)."""

from pagetwin.config import ExtractSettings
from pagetwin.html.noise import extract
from pagetwin.html.parse import parse_html

S = ExtractSettings()

STORY = [
    "The river council approved the new harbour budget on Tuesday after a long meeting with residents and engineers from the northern villages, who had waited for it since the winter.",
    "Officials said the railway bridge would be repaired before the summer festival, when visitors from the coastal towns usually arrive by train from the capital.",
    "Teachers and students of the local college questioned the plan, which delays the library project by two years and moves the money to the traffic office.",
    "The mayor promised a second hearing in the spring, where the budget for the harbour and the library would be weighed against each other once again by the council.",
]
CAPTION = "The mayor speaks to residents at the harbour on Tuesday, May 21, 2019. (Photo by: A. Photographer / Agency)"


def article(inset: str, paragraphs=STORY) -> str:
    paras = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        "<html><head><title>Harbour budget approved</title></head><body><article><h1>Harbour budget approved</h1>"
        f"<div class='article-body'><p>{paragraphs[0]}</p>{inset}{paras[len(paragraphs[0]) + 7:]}</div></article></body></html>"
    )


def lines(html: str) -> list[str]:
    return extract(parse_html(html), None, S).text.split("\n")


def test_a_caption_named_box_in_an_article_is_not_its_text():
    for inset in (
        f"<div class='wp-caption'><img src='/a.jpg'><p class='wp-caption-text'>{CAPTION}</p></div>",
        f"<div class='photo'><img src='/a.jpg'><div class='newsCaption'>{CAPTION}</div></div>",
        # a gallery: each photo's caption, and the gallery's own title, go
        "<div class='asset_gallery'><ul class='hst-resgallery'>"
        + "".join(f"<li><img src='/{i}.jpg'><div class='caption'>{CAPTION} {i}</div></li>" for i in range(3))
        + "</ul><div class='gallery-overlay-title'>Harbour budget approved</div></div>",
    ):
        out = lines(article(inset))
        assert out[1:] == STORY, inset  # (the title, then the story, all of it and nothing else)


def test_a_caption_named_box_stays_when_it_is_the_page_or_too_long_for_a_caption():
    # Without an article around it (a gallery page: two short paragraphs), the caption is the text.
    short = STORY[:2]
    assert CAPTION in lines(article(f"<div class='wp-caption'><p class='wp-caption-text'>{CAPTION}</p></div>", short))
    # A box named as a caption that holds a long text is a layout's box ("feat-image-with-caption").
    long = " ".join(STORY[1:])
    out = lines(article(f"<div class='feat-image-with-caption'><p class='wp-caption-text'>{long}</p></div>"))
    assert long in out
    # Code on the page: figures are diagrams the text walks through.
    assert CAPTION in lines(article(f"<pre>x = 1</pre><div class='caption'>{CAPTION}</div>"))


LINKED = (
    "The plan follows a <a href='/a'>report by the national harbour office</a> and a "
    "<a href='/b'>study of the northern villages' traffic</a>, both published in March, which the "
    "engineers of the council read before they wrote their own review of the budget."
)


def test_a_paragraph_of_the_article_that_links_its_sources_is_kept():
    # 40-50 % of its text in links: a link box by density alone, but a paragraph of the
    # article's own slot (a <p> among the story's <p>s) all the same.
    text = lines(article(f"<p>{LINKED}</p>"))
    linked = " ".join(parse_html(f"<p>{LINKED}</p>").body.text().split())
    assert linked in text
    assert text[1:] == [STORY[0], linked, *STORY[1:]]
    # The same text as a list item beside the story: a headline and its summary, not prose.
    assert linked not in lines(article(f"<ul><li>{LINKED}</li><li>{LINKED} Again.</li></ul>"))
    # More than half of it linked: a link box, not a paragraph.
    dense = f"<a href='/d'>The harbour office's report on the northern villages and their traffic</a>: {LINKED}"
    assert not any("harbour office's report" in x for x in lines(article(f"<p>{dense}</p>")))


def split_body(between: str) -> str:
    """An article whose body the page marks in two boxes, a figure between them."""
    first = "".join(f"<p>{p}</p>" for p in STORY[:2])
    second = "".join(f"<p>{p}</p>" for p in STORY[2:])
    return (
        "<html><body><article><h1>Harbour budget approved</h1>"
        f"<div class='wrap'><div itemprop='articleBody'>{first}</div></div>{between}"
        f"<div class='wrap2'><div class='inner'><div itemprop='articleBody'>{second}</div></div></div>"
        "</article></body></html>"
    )


def test_a_marked_body_split_around_a_figure_is_read_whole():
    figure = "<figure><img src='/a.jpg'><figcaption>The harbour</figcaption></figure>"
    assert lines(split_body(figure))[1:] == STORY
    # A linked title between two marked boxes: the second is another story's excerpt.
    other = "<h3><a href='/other'>Library project delayed again by the council</a></h3>"
    out = lines(split_body(other))
    assert not (set(STORY[:2]) & set(out) and set(STORY[2:]) & set(out))
    # So is a heading of its own (another post's, a reply's).
    out = lines(split_body("<h3>Re: Harbour budget approved</h3>"))
    assert not (set(STORY[:2]) & set(out) and set(STORY[2:]) & set(out))


TICKER = [
    f"Ferry timetable changes for the winter season announced by the port authority {i} NORTH: The port authority said on Monday that the ferries would sail less often from December until March."
    for i in range(3)
]


def ticker_page(inner_parts: int) -> str:
    """A marked column (``entry-content``) holding a ticker of other stories, then the article in
    ``inner_parts`` marked boxes (``itemprop=articleBody``). The ticker's items link only their
    titles: text, by their share of links, so that the column scores above the article."""
    ticker = "".join(f"<li><a href='/s{i}'>{t[:40]}</a>{t[40:]}</li>" for i, t in enumerate(TICKER))
    per = len(STORY) // inner_parts
    bodies = "<figure><img src='/a.jpg'></figure>".join(
        "<div itemprop='articleBody'>" + "".join(f"<p>{p}</p>" for p in STORY[k * per : (k + 1) * per]) + "</div>" for k in range(inner_parts)
    )
    return f"<html><body><div class='entry-content'><div class='ticker'><ul>{ticker}</ul></div><h2>Harbour budget approved</h2>{bodies}</div></body></html>"


def test_the_marked_body_inside_a_marked_column_is_the_article():
    out = lines(ticker_page(1))
    assert out == ["Harbour budget approved", *STORY]  # the ticker above it is not the article


def test_a_list_of_linked_summaries_is_the_article_when_one_of_them_wins():
    # A newsletter's "10 things": each item a sentence or two linking what it names (a third of
    # it in links: link-dense by itself); the one item with fewer links would be the region alone.
    items = [
        f"<li><a href='/s{i}'>The river council approved the harbour budget {i}</a> after a long meeting "
        f"with residents, and <a href='/t{i}'>the engineers</a> said they would start in spring. The work will take two years.</li>"
        for i in range(5)
    ]
    items[2] = items[2].replace("after a long meeting", "after a long and loud meeting in the old town hall that lasted well into the night")
    html = (
        "<html><body><div class='story'><h1>Five things to know today</h1><p>Good morning!</p>"
        f"<ul>{''.join(items)}</ul></div></body></html>"
    )
    out = lines(html)
    assert sum("river council approved the harbour budget" in x for x in out) == 5


def test_other_posts_as_sibling_articles_under_the_story_are_not_its_text():
    others = [
        "Hope asks us for courage and patience, and for the strength to wait for the best while we make the best happen every single day of the year.",
        "What unites a family is love, care and the wish that each of them does well, and a united family is a strength that carries everyone through.",
    ]
    related = "".join(f"<article><div class='share'><a href='/w{i}'>Whatsapp Facebook Pin</a></div><p>{p} {p}</p></article>" for i, p in enumerate(others))
    story = "".join(f"<p>{p}</p>" for p in STORY)
    html = (
        f"<html><body><div class='posts'><article><h1>Harbour budget approved</h1>{story}</article>"
        f"<article><h3>You may also like...</h3>{related}</article></div></body></html>"
    )
    out = lines(html)
    assert out == ["Harbour budget approved", *STORY]
    # Without a title of its own the page is a thread of posts (or a list): all of them stay.
    untitled = html.replace("<h1>Harbour budget approved</h1>", "")
    assert all(f"{p} {p}" in lines(untitled) for p in others)
