"""End to end through the CLI: `pagetwin templates` shows what each site repeats, and
`pagetwin dedup` uses the site templates, so that two different articles of one site are not
clustered (although their large shared template makes the pages alike) while the same article
published on two sites is (although their templates differ)."""

import json
import random

from pagetwin.cli import main
from tests.fixtures.sites import paragraph, sentence


def boilerplate(rng: random.Random, words: int) -> list[str]:
    out = []
    while sum(len(p.split()) for p in out) < words:
        out.append(paragraph(rng))
    return out


def make_page(title: str, article: list[str], template: dict, year: int) -> str:
    paras = "".join(f"<p>{p}</p>" for p in article)
    box = "".join(f"<p>{p}</p>" for p in template["box"])
    return (
        f"<html><head><title>{title}</title></head><body>"
        f"<div class='{template['cls']}-top'>{template['menu']}</div>"
        f"<div class='{template['cls']}-main'><h1>{title}</h1>{paras}"
        f"<div class='{template['cls']}-box'>{box}</div>"
        f"<p>Copyright {year} {template['name']}. All rights reserved.</p></div></body></html>"
    )


def corpus(tmp_path, pages_per_site: int = 6):
    """Two sites, each with a large template of its own (more words than an article); article
    0 of site A is republished as article 0 of site B."""
    rng = random.Random(7)
    templates = {
        "a.example": {"cls": "ga", "name": "Gazette A", "menu": " ".join(f"<a href='/{i}'>Section {i}</a>" for i in range(6)),
                      "box": boilerplate(rng, 250)},
        "b.example": {"cls": "tb", "name": "Tribune B", "menu": " ".join(f"<a href='/t{i}'>Topic {i}</a>" for i in range(6)),
                      "box": boilerplate(rng, 250)},
    }  # fmt: skip
    articles = [[paragraph(rng) for _ in range(2)] for _ in range(2 * pages_per_site)]
    articles[pages_per_site] = articles[0]  # the same article on both sites
    rows = []
    for s, host in enumerate(templates):
        for i in range(pages_per_site):
            k = s * pages_per_site + i
            title = sentence(rng)[:50] if k != pages_per_site else rows[0]["title"]
            html = make_page(title, articles[k], templates[host], 2010 + i)
            rows.append({"url": f"https://{host}/story/{i}.html", "html": html, "title": title})
    path = tmp_path / "crawl.jsonl"
    path.write_text("".join(json.dumps({"url": r["url"], "html": r["html"]}) + "\n" for r in rows))
    return path, rows


def run_dedup(capsys, path, out, *extra):
    assert main(["dedup", str(path), "--out", str(out), "--workers", "1", *extra]) == 0
    capsys.readouterr()
    clusters = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    return {c["url"]: c["cluster"] for c in clusters}


def test_templates_command_shows_what_each_site_repeats(tmp_path, capsys):
    path, rows = corpus(tmp_path)
    assert main(["templates", str(path), "--workers", "1", "--json"]) == 0
    report = {r["site"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    assert set(report) == {"a.example", "b.example"}
    a = report["a.example"]
    assert a["pages"] == 6 and a["learned"]
    copyright_block = [b for b in a["blocks"] if any(t.startswith("Copyright") for t in b["text"])]
    assert copyright_block and copyright_block[0]["share"] == 1.0  # the year changes, the block is one
    assert any(b["share"] == 1.0 and any("Section 0" in t for t in b["text"]) for b in a["blocks"])

    assert main(["templates", str(path), "--workers", "1", "--site", "www.b.example"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("b.example: 6 pages (template learned)") and "Tribune B" in out and "Gazette A" not in out
    assert main(["templates", str(path), "--site", "c.example"]) == 1


def test_articles_of_one_site_apart_same_article_on_two_sites_together(tmp_path, capsys):
    path, rows = corpus(tmp_path)
    cluster = run_dedup(capsys, path, tmp_path / "out")
    a = [r["url"] for r in rows if "a.example" in r["url"]]
    b = [r["url"] for r in rows if "b.example" in r["url"]]
    assert cluster[a[0]] == cluster[b[0]]  # the same article on two sites
    assert len({cluster[u] for u in a}) == len(a)  # different articles of one site
    assert len({cluster[u] for u in b}) == len(b)

    # The planted case can fail: without the site templates the shared template makes the
    # pages of a site alike and the two copies of the article unlike.
    plain = run_dedup(capsys, path, tmp_path / "plain", "--extract-templates", "false")
    assert plain[a[0]] != plain[b[0]] or len({plain[u] for u in a}) < len(a)
