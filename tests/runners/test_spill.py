"""runners.spill: pass 1's pages and parsed blocks, replayed by pass 2."""

from __future__ import annotations

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
