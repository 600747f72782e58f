"""runners.spill: pass 1's pages and parsed blocks, replayed by pass 2."""

from __future__ import annotations

import json
import tempfile

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from pagetwin.model import Page
from pagetwin.runners.spill import ParsedSpill


def test_replay_gives_the_pages_in_order_without_their_html(tmp_path):
    pages = [
        Page("a", "https://x.example/a", body=b"<p>a</p>", source="s.warc.gz", meta={"lang": "en"}),
        Page("img", "https://x.example/i.png", body=b"\x89PNG", kind="image"),
        Page("r", "https://x.example/a", kind="revisit", refers_to_digest="sha1:AAA"),
        Page("bad", "https://x.example/bad", body=b"<p>unparsed</p>"),
    ]
    with ParsedSpill(str(tmp_path)) as spill:
        spill.add(pages[0], b"blocks-of-a")
        spill.add(pages[1], b"")
        spill.add(pages[2], b"")
        spill.add(pages[3], b"")  # pass 1 could not parse it: pass 2 gets its body to try again
        replayed = list(spill.replay())
        assert [p.id for p in replayed] == ["a", "r", "bad"]  # image records are pass 1's only
        a, r, bad = replayed
        assert a.body == b"" and a.parsed == b"blocks-of-a" and a.meta == {"lang": "en"} and a.source == "s.warc.gz"
        assert r.kind == "revisit" and r.refers_to_digest == "sha1:AAA"
        assert bad.body == b"<p>unparsed</p>" and bad.parsed == b""
        assert list(spill.replay()) == replayed  # replayable
        assert spill.pages == 3 and spill.parsed_bytes == len(b"blocks-of-a")


class _FullDisk:
    """A file whose writes fail as on a full disk."""

    def __init__(self, after: int) -> None:
        self.after = after

    def write(self, data: bytes) -> int:
        self.after -= 1
        if self.after < 0:
            raise OSError(28, "No space left on device")
        return len(data)

    def flush(self) -> None:
        pass

    def truncate(self, size: int) -> None:
        pass

    def close(self) -> None:
        pass


def test_a_full_disk_makes_the_spill_give_up_not_the_run(tmp_path):
    spill = ParsedSpill(str(tmp_path))
    spill._file = _FullDisk(after=2)
    for i in range(5):
        spill.add(Page(str(i), f"https://x.example/{i}", body=b"<p>x</p>"), b"blocks")
    spill.finish()
    assert "No space left on device" in spill.failed
    with pytest.raises(RuntimeError):
        list(spill.replay())


def test_dedup_reads_the_sources_again_when_the_spill_failed(tmp_path, monkeypatch):
    from pagetwin.cli import main
    from pagetwin.runners import spill as spill_module
    from tests.fixtures.sites import site_pages

    site = tmp_path / "site.jsonl"
    site.write_text("".join(json.dumps({"url": u, "html": h}) + "\n" for u, h, _ in site_pages(6, seed=1)))
    real_init = spill_module.ParsedSpill.__init__

    def full_disk_init(self, directory=None):
        real_init(self, directory)
        self._file.close()
        self._file = _FullDisk(after=3)

    monkeypatch.setattr(spill_module.ParsedSpill, "__init__", full_disk_init)
    out = tmp_path / "out"
    assert main(["dedup", str(site), "--out", str(out), "--workers", "1"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pages"]["read"] == 6 and summary["records"]["records_total"] == 6
    assert any("No space left on device" in e and "again" in e for e in summary["input_errors"])
    assert len((out / "clusters.jsonl").read_text().splitlines()) == 6

_text = st.text(max_size=30)
_page = st.builds(
    Page,
    id=_text,
    url=_text,
    body=st.binary(max_size=40),
    crawl_date=st.none() | _text,
    source=_text,
    kind=st.sampled_from(["response", "revisit", "image"]),
    truncated=st.booleans(),
    meta=st.dictionaries(st.text(max_size=5), st.integers() | _text, max_size=3),
)


@hsettings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_page, st.binary(max_size=40)), max_size=12))
def test_replay_is_the_added_pages_minus_images_in_order(items):
    with tempfile.TemporaryDirectory() as tmp, ParsedSpill(tmp) as spill:
        for page, parsed in items:
            spill.add(page, parsed)
        spill.finish()
        replayed = list(spill.replay())
    expected = [(p, b) for p, b in items if p.kind != "image"]
    assert len(replayed) == len(expected)
    for got, (page, parsed) in zip(replayed, expected):
        assert got.parsed == parsed
        assert got.body == (b"" if parsed else page.body)  # the HTML goes only with its blocks
        assert (got.id, got.url, got.source, got.kind, got.truncated, got.meta) == (
            page.id, page.url, page.source, page.kind, page.truncated, page.meta
        )


def test_a_page_marshal_does_not_take_is_pickled_and_a_seen_page_keeps_no_body(tmp_path):
    import datetime

    when = datetime.datetime(2024, 1, 8, 12, 0)
    pages = [
        Page("a", "https://x.example/a", body=b"<p>a</p>", meta={"metadata": {"date": when}}),  # (a Parquet row's timestamp)
        Page("b", "https://x.example/b", body=b"<p>b</p>", meta={"lang": "en"}),
        Page("c", "https://x.example/c", body=b"<p>c</p>"),
    ]
    with ParsedSpill(str(tmp_path)) as spill:
        spill.add(pages[0], b"")
        spill.add(pages[1], b"blocks-of-b")
        spill.add(pages[2], b"", keep_body=False)  # stored already: pass 2 only marks it seen
        spill.finish()
        a, b, c = spill.replay()
    assert a == pages[0] and a.meta["metadata"]["date"] == when
    assert b.body == b"" and b.parsed == b"blocks-of-b" and b.meta == {"lang": "en"}
    assert c.id == "c" and c.body == b"" and c.parsed == b""
