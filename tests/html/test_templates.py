import io
import pickle

import numpy as np
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from pagetwin.config import ExtractSettings
from pagetwin.html.blocks import walk
from pagetwin.html.noise import extract, parse_page
from pagetwin.html.parse import parse_html
from pagetwin.html.templates import SiteTemplates, page_stats, registered_domain, site_key

from tests.fixtures.sites import ABOUT_A, ABOUT_B, FOOTER, site_pages

SITE = "gazette.example"


def fitted(pages, settings=None):
    settings = settings or ExtractSettings()
    model = SiteTemplates(settings)
    for url, html, _ in pages:
        model.fit(site_key(url, settings), page_stats(parse_page(parse_html(html)), settings))
    return model


def text_of(html, site_model, settings=None):
    return extract(parse_html(html), site_model, settings or ExtractSettings()).text


def test_site_key():
    s = ExtractSettings()
    assert site_key("https://www.News.BBC.co.uk:443/a", s) == "news.bbc.co.uk"
    assert site_key("https://news.bbc.co.uk/a", ExtractSettings(site_key="domain")) == "bbc.co.uk"
    assert registered_domain("a.b.example.com") == "example.com"
    assert site_key("file:///data/site/sub/page.html", s) == "file:/data/site/sub"
    assert site_key("", s) == ""


def test_article_survives_and_template_goes():
    pages = site_pages(12, seed=1)
    model = fitted(pages).for_site(SITE)
    assert model is not None
    for url, html, article in pages:
        page_level = text_of(html, None)
        with_site = text_of(html, model)
        for para in article:
            assert para in with_site
        # The boilerplate paragraph and the copyright line have no links and end the article:
        # the page-level rules keep them, the site statistics remove them.
        assert ABOUT_A in page_level
        assert ABOUT_A not in with_site
        assert "Valley Gazette Media Limited" not in with_site
        assert "Latest news" not in with_site
        assert "Home News Sport" not in with_site


def test_footer_whose_year_changes_is_one_template_block():
    pages = site_pages(8, seed=2)
    htmls = [h for _, h, _ in pages]
    assert FOOTER.format(year=2000, num=1000) in htmls[0] and FOOTER.format(year=2001, num=1001) in htmls[1]
    model = fitted(pages).for_site(SITE)
    assert all("Copyright" in text_of(h, None) for h in htmls)
    assert all("Copyright" not in text_of(h, model) for h in htmls)


def test_two_templates_on_one_site():
    pages = site_pages(12, seed=3, templates="ab")
    model = fitted(pages).for_site(SITE)
    for url, html, article in pages:
        out = text_of(html, model)
        assert all(p in out for p in article)
        assert ABOUT_A not in out and ABOUT_B not in out and "Copyright" not in out


def test_copies_of_one_page_are_not_template():
    # Soft 404s: the same "not found" page under many URLs of a site. Everything on them is
    # repeated, but they are copies, not template: they keep their page-level text.
    pages = site_pages(8, seed=11)
    missing = (
        "<html><body><div class='top'><a href='/'>Home</a></div><div class='story'><h1>Page not found</h1>"
        "<p>We are sorry, the page you have requested is not available on this site any more.</p></div></body></html>"
    )
    pages += [(f"https://gazette.example/missing/{i}", missing, []) for i in range(4)]
    model = fitted(pages).for_site(SITE)
    out = text_of(missing, model)
    assert "the page you have requested is not available" in out
    assert text_of(pages[0][1], model).count("\n") >= 4 and ABOUT_A not in text_of(pages[0][1], model)


def test_small_site_falls_back_to_page_level():
    s = ExtractSettings(min_site_pages=5)
    model = fitted(site_pages(4, seed=4), s)
    assert model.for_site(SITE) is None
    model.fit(SITE, page_stats(parse_page(parse_html(site_pages(5, seed=4)[4][1])), s))
    assert model.for_site(SITE) is not None
    assert model.for_site("other.example") is None


def test_threshold_decides_what_is_template():
    # A block on 3 of 12 pages (25 %) is template under a 0.2 share, not under 0.3.
    pages = site_pages(12, seed=5)
    rare = "<p class='note'>This story was corrected after publication to fix the name of the harbour.</p>"
    pages = [(u, h.replace("</h1>", "</h1>" + rare) if i < 3 else h, a) for i, (u, h, a) in enumerate(pages)]
    for share, removed in ((0.2, True), (0.3, False)):
        s = ExtractSettings(template_share=share)
        model = fitted(pages, s).for_site(SITE)
        out = text_of(pages[0][1], model, s)
        assert ("corrected after publication" not in out) == removed


def test_merge_equals_fitting_everything():
    s = ExtractSettings()
    pages = site_pages(10, seed=6, templates="ab") + [
        (u.replace("gazette.example", "other.example"), h, a) for u, h, a in site_pages(6, seed=7)
    ]
    whole = fitted(pages, s).compact()
    left, right = fitted(pages[:7], s), fitted(pages[7:], s)
    merged = left.merge(right)
    assert set(merged.sites_) == set(whole.sites_)
    for site, c in whole.sites_.items():
        m = merged.sites_[site]
        assert m.pages == c.pages
        assert np.array_equal(m.hash_keys, c.hash_keys) and np.array_equal(m.hash_pages, c.hash_pages)
        assert np.array_equal(m.slot_keys, c.slot_keys) and np.allclose(m.slot_kept, c.slot_kept)
        assert np.allclose(m.hash_content, c.hash_content)
    for url, html, _ in pages:
        site = site_key(url, s)
        assert text_of(html, merged.for_site(site)) == text_of(html, whole.for_site(site))


def test_serialisation_round_trips():
    pages = site_pages(9, seed=8, templates="ab")
    model = fitted(pages)
    for restored in (SiteTemplates.from_bytes(model.to_bytes()), pickle.loads(pickle.dumps(model))):
        assert restored.report() == model.report()
        for _, html, _ in pages:
            assert text_of(html, restored.for_site(SITE)) == text_of(html, model.for_site(SITE))
    assert SiteTemplates.from_bytes(SiteTemplates(ExtractSettings()).to_bytes()).sites_ == {}


def test_a_stored_model_reads_a_site_only_when_it_is_asked_for():
    """Read back, a model holds every site but has read none of their arrays; asking for one
    site reads that one alone, and it decides as the model it was written from; written
    again, it gives the same bytes."""
    s = ExtractSettings()
    pages = site_pages(9, seed=8, templates="ab") + [
        (u.replace("gazette.example", "other.example"), h, a) for u, h, a in site_pages(6, seed=7)
    ]
    model = fitted(pages, s)
    data = model.to_bytes()
    restored = SiteTemplates.from_bytes(data, s)
    assert len(restored.sites_) == 2 and SITE in restored.sites_ and restored.sites_.read() == []
    for url, html, _ in pages[:9]:
        assert text_of(html, restored.for_site(SITE)) == text_of(html, model.for_site(SITE))
    assert [c.pages for c in restored.sites_.read()] == [model.sites_[SITE].pages]
    assert restored.report() == model.report() and len(restored.sites_.read()) == 2
    assert restored.to_bytes() == data
    assert pickle.loads(pickle.dumps(SiteTemplates.from_bytes(data, s))).to_bytes() == data


def test_a_model_stored_a_blob_per_site_fetches_only_the_sites_asked_for():
    """site_blobs cuts a model into a blob per site (a Spark output's models.parquet rows);
    from_site_blobs reads it back fetching a site when it is first asked for: it decides as the
    model it was written from, knows a site it has no blob for is not there, and written whole
    again gives the whole model's bytes."""
    s = ExtractSettings()
    pages = site_pages(9, seed=8, templates="ab") + [
        (u.replace("gazette.example", f"other{k}.example"), h, a) for k in range(3) for u, h, a in site_pages(4, seed=7 + k)
    ]
    model = fitted(pages, s)
    blobs = dict(model.site_blobs())
    assert sorted(blobs) == sorted(model.sites_) and len(blobs) == 4
    fetched = []

    def fetch(site):
        fetched.append(site)
        return blobs.get(site)

    restored = SiteTemplates.from_site_blobs(fetch, lambda: sorted(blobs), s)
    for url, html, _ in pages[:9]:
        assert text_of(html, restored.for_site(SITE)) == text_of(html, model.for_site(SITE))
    assert fetched == [SITE] and "nowhere.example" not in restored.sites_ and restored.for_site("nowhere.example") is None
    assert fetched == [SITE, "nowhere.example"]  # asked once, remembered as absent
    assert dict(restored.site_blobs([SITE])) == {SITE: blobs[SITE]}
    assert restored.to_bytes() == model.to_bytes() and len(restored.sites_) == 4
    assert pickle.loads(pickle.dumps(SiteTemplates.from_site_blobs(fetch, lambda: sorted(blobs), s))).to_bytes() == model.to_bytes()
    # A small site's blob is smaller than its share of the whole model's npz (the format before session 15).
    assert len(blobs["other0.example"]) < len(_npz_bytes(SiteTemplates.from_bytes(model.to_bytes(), s))) / 4


def test_report_shows_removed_blocks_with_share_and_text():
    model = fitted(site_pages(10, seed=9))
    (entry,) = model.report(SITE)
    assert entry["pages"] == 10 and entry["learned"]
    texts = {t for b in entry["blocks"] for t in b["text"]}
    assert any(t.startswith("About the Gazette") for t in texts)
    footer = [b for b in entry["blocks"] if any(t.startswith("Copyright") for t in b["text"])]
    assert footer and footer[0]["share"] == 1.0 and len(footer[0]["text"]) == 3  # three sample years
    assert model.report("unknown.example") == []


def test_memory_is_bounded_per_site():
    s = ExtractSettings(max_hashes_per_site=1000)
    model = SiteTemplates(s)
    pages = site_pages(120, seed=10)
    for url, html, _ in pages:
        model.fit(SITE, page_stats(parse_page(parse_html(html)), s))
    counts = model.compact().sites_[SITE]
    assert len(counts.hash_keys) <= 1000 and len(counts.slot_keys) <= 1000
    assert counts.pruned_below >= 1
    # What is on every page survives the pruning.
    out = text_of(pages[0][1], model.for_site(SITE), s)
    assert ABOUT_A not in out and pages[0][2][0] in out


# -- properties ------------------------------------------------------------------------------


def is_subsequence(small: list[str], big: list[str]) -> bool:
    it = iter(big)
    return all(any(x == y for y in it) for x in small)


@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(5, 9),
    seed=st.integers(0, 10_000),
    templates=st.sampled_from(["a", "ab", "b"]),
    shares=st.tuples(st.floats(0.05, 0.9), st.floats(0.05, 0.9)).map(sorted),
)
def test_removing_templates_never_adds_text(n, seed, templates, shares):
    pages = site_pages(n, seed=seed, templates=templates)
    low, high = (ExtractSettings(template_share=x) for x in shares)
    lines = {}
    for s in (low, high):
        model = fitted(pages, s).for_site(SITE)
        lines[s.template_share] = [text_of(h, model, s).splitlines() for _, h, _ in pages]
    for i, (_, html, _) in enumerate(pages):
        blocks = [t for t in walk(parse_html(html)).text if t]
        strict, loose = lines[low.template_share][i], lines[high.template_share][i]
        assert is_subsequence(loose, blocks)  # every line is a block of the page, in order
        assert is_subsequence(strict, loose)  # a lower share threshold only removes more


@hsettings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 8), seed=st.integers(0, 10_000), templates=st.sampled_from(["a", "ab"]))
def test_applying_twice_changes_nothing(n, seed, templates):
    s = ExtractSettings()
    pages = site_pages(n, seed=seed, templates=templates)
    model = fitted(pages, s).for_site(SITE)
    first = []
    for _, html, _ in pages:
        tree = parse_html(html)
        a = extract(tree, model, s)
        assert extract(tree, model, s) == a  # the same tree twice: the same result
        first.append(a.text)
    # Pages rebuilt from what the first round kept: a second round of learning finds no
    # template left, and keeps the same text.
    rebuilt = [
        (f"https://gazette.example/r/{i}", "<html><body><div>" + "".join(f"<p>{line}</p>" for line in t.split("\n")) + "</div></body></html>", [])
        for i, t in enumerate(first)
    ]
    second = fitted(rebuilt, s).for_site(SITE)
    for (_, html, _), t in zip(rebuilt, first):
        blocks = walk(parse_html(html))
        shares = second.hash_share([h for h, txt in zip(blocks.hash, blocks.text) if txt])
        assert max(shares) <= s.template_share
        assert text_of(html, second, s) == t


_MARKUP = st.lists(
    st.sampled_from(["<div class=a>", "<div id=b1>", "</div>", "<p>", "</p>", "<a href=x>", "</a>", "<li>", "<ul>",
                     "</ul>", "<table><tr><td>", "<h2>", "</h2>", "words of text here ", "2024 ", "menu ", "<img src=l.png>",
                     "<br>", "<nav>", "</nav>", "<span hidden>", "</span>", "<article>", "</article>"]),
    max_size=50,
)  # fmt: skip


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_MARKUP, min_size=5, max_size=8))
def test_any_site_of_any_markup_is_handled(site):
    s = ExtractSettings()
    htmls = ["".join(parts) for parts in site]
    model = SiteTemplates(s)
    for html in htmls:
        model.fit(SITE, page_stats(parse_page(parse_html(html)), s))
    site_model = model.for_site(SITE)
    restored = SiteTemplates.from_bytes(model.to_bytes()).for_site(SITE)
    for html in htmls:
        lines = text_of(html, site_model).splitlines()
        assert is_subsequence(lines, [t for t in walk(parse_html(html)).text if t])
        assert text_of(html, restored) == "\n".join(lines)
    model.report()


# -- copies are not template (issue 11) ----------------------------------------------------


def test_copies_of_one_article_count_once_and_the_article_stays():
    # 10 distinct pages, then 6 more URLs of page 0 (print view, tag page, ...): without the copy
    # rule page 0's paragraphs would be on 7 of 16 pages (44 % > 25 %) and removed as template.
    pages = site_pages(10, seed=3)
    url0, html0, article0 = pages[0]
    copies = [(f"{url0}?print={i}", html0, article0) for i in range(6)]
    model = fitted(pages + copies)
    counts = model.sites_[SITE]
    assert counts.pages == 10 and counts.copies == 6
    site = model.for_site(SITE)
    out = text_of(html0, site)
    for p in article0:
        assert p in out
    assert ABOUT_A not in out  # the site's template is still learned and removed
    assert model.report(SITE)[0]["copies"] == 6


def test_a_site_made_of_copies_learns_no_template():
    url, html, article = site_pages(1, seed=4)[0]
    model = fitted([(f"{url}?v={i}", html, article) for i in range(20)])
    assert model.sites_[SITE].pages == 1 and model.sites_[SITE].copies == 19
    assert model.for_site(SITE) is None  # fewer than min_site_pages distinct pages


def test_copies_survive_serialisation_and_merge():
    pages = site_pages(8, seed=5)
    model = fitted(pages + [(pages[1][0] + "?a", pages[1][1], pages[1][2])])
    back = SiteTemplates.from_bytes(model.to_bytes())
    assert back.sites_[SITE].copies == 1 and back.sites_[SITE].pages == 8
    merged = model.merge(back)
    assert merged.sites_[SITE].copies == 2 and merged.sites_[SITE].pages == 16


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 7), min_size=1, max_size=12), st.integers(0, 3))
def test_property_an_exact_copy_never_changes_the_counts(repeats, seed):
    # Invariant: once a page is counted, fitting it again (a copy) leaves every count as it was.
    settings = ExtractSettings()
    pages = site_pages(8, seed=seed)
    stats = [page_stats(parse_page(parse_html(html)), settings) for _, html, _ in pages]
    model = SiteTemplates(settings)
    for s in stats:
        model.fit(SITE, s)
    before = SiteTemplates.from_bytes(model.to_bytes()).sites_[SITE]
    for i in repeats:
        model.fit(SITE, stats[i])
    after = model.compact().sites_[SITE]
    assert after.pages == before.pages and after.copies == len(repeats)
    assert np.array_equal(after.hash_keys, before.hash_keys) and np.array_equal(after.hash_pages, before.hash_pages)
    assert np.array_equal(after.slot_pages, before.slot_pages)



def _random_stats(rng, alphabet):
    """PageStats of a page made of a few of ``alphabet`` subtree hashes (many pages share some)."""
    from pagetwin.html.templates import PageStats

    hashes = np.unique(rng.choice(alphabet, size=int(rng.integers(1, 12))).astype(np.uint64))
    content = hashes[rng.random(len(hashes)) < 0.7]
    sizes = rng.integers(1, 300, size=len(content)).astype(np.float32)
    return PageStats(hashes, hashes[:2].copy(), np.ones(min(2, len(hashes)), np.float32), {}, content, sizes)


@hsettings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 80), st.integers(1, 90))
def test_property_copies_are_told_from_every_page_counted_before(seed, alphabet, n):
    # fit tells a copy from the hashes of the pages counted (folded in or still pending, across
    # _PENDING_PAGES): the same decisions as a plain set of every counted page's hashes.
    rng = np.random.default_rng(seed)
    model = SiteTemplates(ExtractSettings())
    counted: set[int] = set()
    for _ in range(n):
        stats = _random_stats(rng, np.arange(1, alphabet + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
        seen = np.array([h in counted for h in stats.content.tolist()], dtype=bool)
        total = float(stats.content_size.sum())
        expect_copy = bool(counted) and len(stats.content) > 0 and total > 0 and float(stats.content_size[seen].sum()) >= 0.8 * total
        copies = model.sites_[SITE].copies if SITE in model.sites_ else 0
        model.fit(SITE, stats)
        assert (model.sites_[SITE].copies == copies + 1) == expect_copy
        if not expect_copy:
            counted.update(stats.hashes.tolist())
    assert model.compact().sites_[SITE].pages == n - model.sites_[SITE].copies


@hsettings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(2, 40))
def test_property_template_blocks_are_those_over_the_share_or_under_one(seed, n, pages):
    # SiteModel._template against its rule said plainly: a block is template when its hash is on
    # more than the share of the site's pages (and on two), said fewer than ITEM_REPEATS times on
    # the page, or when its parent is template.
    from collections import Counter

    from pagetwin.html.blocks import Blocks
    from pagetwin.html.templates import ITEM_REPEATS, SiteModel, _SiteCounts

    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(1, 2**63, size=12, dtype=np.uint64))
    counts = _SiteCounts(pages, keys, rng.integers(1, pages + 1, size=len(keys)).astype(np.int32))
    model = SiteModel(counts, ExtractSettings())
    pool = [*keys.tolist(), 5, 6, 7]
    hashes = [pool[i] for i in rng.integers(0, len(pool), size=n)]
    parent = [-1] + [int(rng.integers(-1, b)) for b in range(1, n)]
    blocks = Blocks(tag=["div"] * n, parent=parent, hash=hashes)
    share = dict(zip(keys.tolist(), (counts.hash_pages / pages).tolist()))
    threshold = max(ExtractSettings().template_share, 1.5 / pages)
    on_page, expect = Counter(hashes), []
    for b, h in enumerate(hashes):
        over = share.get(h, 0.0) > threshold and on_page[h] < ITEM_REPEATS
        expect.append(over or (parent[b] >= 0 and expect[parent[b]]))
    assert model._template(blocks, ExtractSettings()) == expect

def test_apply_is_template_removal_for_a_page_of_a_named_site():
    from pagetwin.html.noise import extract_parsed

    s = ExtractSettings()
    pages = site_pages(10, seed=5)
    model = fitted(pages, s)
    for _, html, _ in pages[:4]:
        parsed = parse_page(parse_html(html))
        applied = model.apply(SITE, parsed)
        assert applied == extract(parse_html(html), model.for_site(SITE), s)
        assert len(applied.text) < len(extract_parsed(parsed).text)  # the template went
        # A site without a model: the page-level rules.
        assert model.apply("other.example", parsed) == extract_parsed(parsed)


def test_template_removal_and_the_page_level_rules_do_not_lean_on_each_other():
    # templates.py takes the page-level decision as data (ParsedPage.page_level()); noise.py,
    # the page-level kernel, knows no site model's internals.
    import ast
    import inspect

    from pagetwin.html import noise, templates

    def imported(module) -> set[str]:
        names = set()
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
        return names

    assert "pagetwin.html.noise" not in imported(templates)
    assert "pages_" not in inspect.getsource(noise) and not hasattr(templates.SiteTemplates, "pages")


def _shop_page(i: int) -> str:
    words = ["pack", "shell", "stove", "socks", "lamp", "bag", "pegs", "case", "hat", "fleece", "filter", "poles"]
    cards = "".join(
        f"<li class='card'><div class='name'><a href='/p/{i}/{k}'>{w.title()} model {chr(65 + i)}{k}</a></div>"
        f"<div class='price'>${10 + i + k}.99</div><div class='rating'>{k + 2} reviews, {4 + k % 2}.5 out of 5</div></li>"
        for k, w in enumerate(words)
    )
    return (
        "<html><body><div class='top'><a href='/'>Home</a> <a href='/shop'>Shop</a></div>"
        f"<h1>Category {i}</h1><p>Gear of kind {i} for a weekend in the hills, picked by staff.</p>"
        f"<ul class='grid'>{cards}</ul><p class='legal'>Prices include sales tax where it applies, delivery extra.</p></body></html>"
    )


def test_the_fields_of_a_grid_s_cards_are_not_the_site_s_template():
    # The price and rating lines of every card have one subtree hash (digits folded) on every
    # page of the shop; said many times on the page itself they are its items' fields.
    pages = [(f"https://{SITE}/c/{i}", _shop_page(i), []) for i in range(8)]
    model = fitted(pages).for_site(SITE)
    assert model is not None
    out = text_of(pages[3][1], model)
    assert "Pack model D0" in out and "$13.99" in out and "2 reviews, 4.5 out of 5" in out
    assert "Prices include sales tax" not in out  # said once per page on every page: template


def _near_copy(page, edited=(1, 3)):
    """Page ``page`` of a site again, under another URL, with a sentence added to the paragraphs
    ``edited``: a near copy that shares too little to be dropped as a copy (COPY_SHARE)."""
    url, html, article = page
    new = list(article)
    for i in edited:
        new[i] = article[i] + " The editors added this sentence after the meeting."
        html = html.replace(article[i], new[i])
    return url + "?updated", html, new


def test_text_near_copies_share_is_not_template():
    """A site of five pages of which two are an article and its near copy: the article's
    paragraphs are on more than the template share of the pages, but what those two pages are
    about is not the site's template; the site's boilerplate still is."""
    pages = site_pages(4, seed=11)
    pages.append(_near_copy(pages[0]))
    model = fitted(pages)
    assert model.sites_[SITE].pages == 5  # the near copy is counted: it is not a copy
    site = model.for_site(SITE)
    for _, html, article in (pages[0], pages[-1]):
        out = text_of(html, site)
        assert all(p in out for p in article)
        assert ABOUT_A not in out and "Valley Gazette Media Limited" not in out


def _npz_bytes(model: SiteTemplates, content_shares: bool = True) -> bytes:
    """``model`` as SiteTemplates.to_bytes wrote it before session 15 (a numpy .npz of a JSON
    header and each site's arrays), with or without the content shares (``hc<i>``, from
    session 8)."""
    import json

    arrays, meta = {}, {"settings": {"template_share": model.settings.template_share}, "sites": []}
    for i, (site, c) in enumerate(sorted(model.compact().sites_.items())):
        meta["sites"].append({"site": site, "pages": c.pages, "pruned_below": c.pruned_below, "copies": c.copies,
                              "samples": [[str(k), v] for k, v in c.samples.items()]})  # fmt: skip
        arrays.update({f"h{i}": c.hash_keys, f"hp{i}": c.hash_pages})
        if content_shares:
            arrays[f"hc{i}"] = c.hash_content
        arrays.update({f"s{i}": c.slot_keys, f"sp{i}": c.slot_pages, f"sk{i}": c.slot_kept})
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _same_counts(a, b) -> None:
    """Two models hold the same sites with the same counts: scalars, samples, and every array's
    dtype and bytes."""
    from pagetwin.html.templates import _SITE_ARRAYS

    assert sorted(a.sites_) == sorted(b.sites_) and a.settings == b.settings
    for site in a.sites_:
        x, y = a.sites_[site], b.sites_[site]
        assert (x.pages, x.pruned_below, x.copies, x.samples, x.pending) == (y.pages, y.pruned_below, y.copies, y.samples, y.pending)
        for name, _ in _SITE_ARRAYS:
            u, v = getattr(x, name), getattr(y, name)
            assert u.dtype == v.dtype and u.shape == v.shape and u.tobytes() == v.tobytes(), (site, name)


def _fixture_pages():
    return site_pages(9, seed=8, templates="ab") + [
        (u.replace("gazette.example", f"other{k}.example"), h, a) for k in range(3) for u, h, a in site_pages(4, seed=7 + k)
    ]


def test_a_model_stored_as_an_npz_before_session_15_reads_as_it_was_written():
    """tests/fixtures/site_templates_npz_format.npz is what SiteTemplates.to_bytes wrote at
    ba7a9dd (before session 15's format) for _fixture_pages: read back, site by site as asked
    for, it holds the very counts fitting those pages gives now, decides as that model, and
    written again (the format of now) reads back the same."""
    from pathlib import Path

    old = (Path(__file__).parents[1] / "fixtures" / "site_templates_npz_format.npz").read_bytes()
    assert old.startswith(b"PK")
    pages = _fixture_pages()
    model = fitted(pages).compact()
    # The test's writer is the writer of then (the same entries; a zip entry also holds the
    # time it was written, so the bytes differ).
    mine, then = np.load(io.BytesIO(_npz_bytes(model))), np.load(io.BytesIO(old))
    assert mine.files == then.files and all(mine[k].dtype == then[k].dtype and mine[k].tobytes() == then[k].tobytes() for k in then.files)
    back = SiteTemplates.from_bytes(old)
    assert len(back.sites_) == 4 and back.sites_.read() == []
    for _, html, _ in pages[:9]:
        assert text_of(html, back.for_site(SITE)) == text_of(html, model.for_site(SITE))
    assert len(back.sites_.read()) == 1
    _same_counts(back, model)
    again = back.to_bytes()
    assert again == model.to_bytes() and not again.startswith(b"PK")
    _same_counts(SiteTemplates.from_bytes(again), model)


def test_the_stored_model_is_one_frame_of_columns_that_reads_back_every_count():
    """to_bytes: the magic, one zstd frame; read back, every site's counts are the model's
    (sites with no arrays, no samples, no content shares included), each array its own (not a
    view of the frame), and the bytes are the same written again."""
    from pagetwin.html.templates import _SiteCounts

    model = fitted(_fixture_pages()).compact()
    model.sites_["empty.example"] = _SiteCounts(copies=2)
    old = model.sites_["other0.example"]
    model.sites_["old.example"] = _SiteCounts(old.pages, old.hash_keys, old.hash_pages, old.slot_keys, old.slot_pages,
                                              old.slot_kept, [], {}, 3, 0, hash_content=np.zeros(0, np.float32))  # fmt: skip
    data = model.to_bytes()
    assert data.startswith(b"PTSITES2")
    back = SiteTemplates.from_bytes(data)
    assert back.sites_.read() == [] and len(back.sites_) == 6
    _same_counts(back, model)
    assert all(c.hash_keys.flags.owndata and c.hash_keys.flags.writeable for c in back.sites_.values())
    assert back.for_site("old.example").hash_content_ is None
    assert back.to_bytes() == data
    assert SiteTemplates.from_bytes(SiteTemplates(ExtractSettings(template_share=0.3)).to_bytes()).settings.template_share == 0.3


def test_a_model_stored_without_content_shares_still_decides():
    """A model written before the content shares were stored (no ``hc<i>`` arrays) is read and
    decides by the subtree shares alone, as it did."""
    pages = site_pages(4, seed=11)
    pages.append(_near_copy(pages[0]))
    old = SiteTemplates.from_bytes(_npz_bytes(fitted(pages), content_shares=False))
    site = old.for_site(SITE)
    assert site.hash_content_ is None
    out = text_of(pages[-1][1], site)
    assert ABOUT_A not in out and pages[-1][2][1] in out  # the edited paragraph is the copy's own
    assert pages[-1][2][0] not in out  # a shared paragraph: template for a model without shares
    # Pages added to it (`pagetwin add` on an old index) fold in with the old pages' shares
    # taken as 0, and the model is whole again: serialised, merged, read back.
    more = site_pages(7, seed=12)[5:]
    for url, html, _ in more:
        old.fit(SITE, page_stats(parse_page(parse_html(html)), ExtractSettings()))
    counts = old.compact().sites_[SITE]
    assert counts.pages == 7 and len(counts.hash_content) == len(counts.hash_keys)
    again = SiteTemplates.from_bytes(old.merge(fitted(more)).to_bytes())
    assert len(again.sites_[SITE].hash_content) == len(again.sites_[SITE].hash_keys)
    assert ABOUT_A not in text_of(more[0][1], again.for_site(SITE))


@given(
    st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=40),
    st.lists(st.integers(0, 2**64 - 1), max_size=40),
    st.data(),
)
def test_lookup_columns_gives_each_keys_values_and_0_for_keys_not_there(keys, extra, data):
    from pagetwin.html.templates import SiteModel

    keys = sorted(keys)
    pages = data.draw(st.lists(st.integers(1, 2**31 - 1), min_size=len(keys), max_size=len(keys)))
    shares = data.draw(st.lists(st.floats(0, 1, width=32), min_size=len(keys), max_size=len(keys)))
    # the query: keys that are there (some twice), keys that are not, the largest and smallest uint64
    query = data.draw(st.lists(st.sampled_from(keys), max_size=20)) if keys else []
    query = np.array(query + extra + [0, 2**64 - 1], dtype=np.uint64)
    key_array = np.array(keys, dtype=np.uint64)
    page_col, share_col = np.array(pages, dtype=np.int32), np.array(shares, dtype=np.float32)
    got_pages, got_shares = SiteModel._lookup_columns(key_array, query, page_col, share_col)
    want = dict(zip(keys, zip(pages, shares)))
    assert got_pages.dtype == np.int32 and got_shares.dtype == np.float32
    assert got_pages.tolist() == [want[int(k)][0] if int(k) in want else 0 for k in query]
    assert got_shares.tolist() == [float(np.float32(want[int(k)][1])) if int(k) in want else 0.0 for k in query]
    assert query.tolist()[-2:] == [0, 2**64 - 1]  # the query is left as it was
