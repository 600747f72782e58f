"""End to end through the CLI: reposts (one story republished by several sites, each in its own
template, with a dateline, an editor's note, an ad line and a trimmed or edited paragraph) are one
cluster each at the defaults, whether the pages come as one folder per story, one flat folder
or a WARC with one host per page (a story's paragraphs on a third of a folder's pages are not
its template: the pages are copies); the near-identical profile keeps only near-verbatim copies."""

from __future__ import annotations

import io
import json
import random

import pytest

from pagetwin.cli import main
from tests.fixtures.sites import paragraph, sentence

STORIES, REPOSTS = 3, 6


def repost(rng: random.Random, story: list[str], site: int) -> str:
    paras = list(story)
    if site % 3 == 1:
        paras = paras[:-1]  # trimmed
    if site % 3 == 2:
        paras[1] = paras[1].replace(".", ", officials said.", 1)  # edited
    body = "".join(f"<p>{p}</p>" for p in paras)
    menu = " ".join(f"<a href='/s{site}/{i}'>{sentence(rng)[:20]}</a>" for i in range(6))
    return (
        f"<html><head><title>{sentence(rng)[:40]}</title></head><body>"
        f"<div class='nav{site}'>{menu}</div>"
        f"<div class='main{site}'><p class='dateline'>January {site + 3}, 2007 - Site {site} News</p>{body}"
        f"<p class='note'>{paragraph(rng)}</p><p class='ad'>Advertisement: {sentence(rng)}</p></div>"
        f"<div class='foot{site}'><a href='/about'>About site {site}</a> <a href='/c'>Contact</a></div>"
        "</body></html>"
    )


def make_reposts() -> dict[str, str]:
    """{"story-i/page-j.html": html}."""
    rng = random.Random(11)
    pages = {}
    for s in range(STORIES):
        story = [paragraph(rng) + " " + paragraph(rng) for _ in range(5)]
        for j in range(REPOSTS):
            pages[f"story-{s}/page-{j}.html"] = repost(rng, story, j)
    return pages


def write_warc(path, pages: dict[str, str]) -> dict[str, str]:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    ids = {}
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for n, (rel, html) in enumerate(pages.items()):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
            record = writer.create_warc_record(
                f"http://site{n}.example/a.html", "response", payload=io.BytesIO(html.encode()), http_headers=http
            )
            writer.write_record(record)
            ids[record.rec_headers.get_header("WARC-Record-ID")] = rel
    return ids


def partition(clusters: dict[str, str]) -> set[frozenset[str]]:
    groups: dict[str, set[str]] = {}
    for page, cluster in clusters.items():
        groups.setdefault(cluster, set()).add(page)
    return {frozenset(g) for g in groups.values()}


def run(capsys, inputs, out, ids=None, *extra) -> dict[str, str]:
    assert main(["dedup", *map(str, inputs), "--out", str(out), "--workers", "1", *extra]) == 0
    capsys.readouterr()
    rows = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    return {(ids or {}).get(r["id"], r["id"]): r["cluster"] for r in rows}


@pytest.fixture()
def layouts(tmp_path):
    pages = make_reposts()
    folder = tmp_path / "stories"
    flat = tmp_path / "flat"
    flat.mkdir()
    for rel, html in pages.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(html)
        (flat / rel.replace("/", "__")).write_text(html)
    ids = write_warc(tmp_path / "reposts.warc.gz", pages)
    return pages, folder, flat, tmp_path / "reposts.warc.gz", ids


def test_reposts_are_one_cluster_per_story_in_every_layout(layouts, tmp_path, capsys):
    pages, folder, flat, warc, ids = layouts
    truth = {frozenset(r for r in pages if r.startswith(f"story-{s}/")) for s in range(STORIES)}
    by_folder = run(capsys, [folder], tmp_path / "o1")
    by_flat = {k.replace("__", "/"): v for k, v in run(capsys, [flat], tmp_path / "o2").items()}
    by_warc = run(capsys, [warc], tmp_path / "o3", ids)
    assert partition(by_folder) == truth
    assert partition(by_flat) == truth
    assert partition(by_warc) == truth


def test_near_identical_profile_keeps_reposts_apart(layouts, tmp_path, capsys):
    pages, folder, _, _, _ = layouts
    # A verbatim copy in another template (another file, the same article and note).
    html = pages["story-0/page-0.html"]
    (folder / "story-0" / "page-0-copy.html").write_text(html.replace("nav0", "navX").replace("foot0", "footX"))
    near = run(capsys, [folder], tmp_path / "near", None, "--profile", "near-identical")
    # Trimmed and edited reposts with their own datelines, notes and ads are not near-verbatim
    # copies (word multisets, J >= 0.9); the verbatim copy is.
    assert len({near[r] for r in pages if r.startswith("story-1/")}) > 1
    assert near["story-0/page-0.html"] == near["story-0/page-0-copy.html"]


def test_config_shows_what_a_profile_sets(capsys):
    assert main(["config", "--profile", "near-identical"]) == 0
    out = capsys.readouterr().out
    assert "# profile 'near-identical'" in out and "minhash.threshold = 0.9" in out
    import tomllib

    data = tomllib.loads(out)
    assert data["minhash"]["threshold"] == 0.9 and data["minhash"]["shingle"] == 1
    assert main(["config"]) == 0
    assert tomllib.loads(capsys.readouterr().out)["minhash"]["threshold"] == 0.25
