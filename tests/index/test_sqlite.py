import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.config import Settings
from pagetwin.index.sqlite import Index, IndexError_


def _row(i, **kw):
    base = dict(id=f"p{i}", url=f"http://x/{i}", host="x", source="s", kind="response", crawl_date=None,
                text_len=1, payload_digest=f"sha1:{i}", refers_to_digest=None, lang="en", title="", text=None, error=None)
    base.update(kw)
    return base


def test_buckets_and_revisits(tmp_path):
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    idx.begin()
    pids = [idx.add_page(_row(i)) for i in range(4)]
    rv = idx.add_page(_row(9, kind="revisit", payload_digest="sha1:1", refers_to_digest="sha1:1"))
    orphan = idx.add_page(_row(10, kind="revisit", payload_digest="sha1:zz", refers_to_digest="sha1:zz"))
    idx.add_fingerprints(pids[0], {"minhash": b"a"}, {"minhash": [5, 6]})
    idx.add_fingerprints(pids[1], {"minhash": b"b"}, {"minhash": [5]})
    idx.add_fingerprints(pids[2], {"minhash": b"c"}, {"minhash": [6, 7]})
    idx.add_fingerprints(pids[3], {"minhash": b"d"}, {"minhash": [8]})
    idx.commit()
    assert sorted(idx.buckets("minhash")) == [[pids[0], pids[1]], [pids[0], pids[2]]]
    assert list(idx.revisit_pairs()) == [(pids[1], rv)]
    assert [i for i, _ in idx.orphan_revisits()] == ["p10"]
    assert idx.shared_keys("minhash", pids[0], pids[2]) == [6]
    assert idx.find_page("http://x/2") == pids[2] and idx.find_page("p3") == pids[3]
    assert orphan


def test_bucket_counts_and_edge_rows(tmp_path):
    """What match reads of a bucket that outgrew max_bucket, and the edge rows it changes."""
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    idx.begin()
    pids = [idx.add_page(_row(i)) for i in range(6)]
    for pid in pids:
        idx.add_fingerprints(pid, {"minhash": b"a"}, {"minhash": [5, 5] if pid != pids[2] else [6]})
    idx.add_edges([(pids[0], pids[4], "duplicate", "[]"), (pids[1], pids[3], "partial", "[]")])
    idx.commit()
    assert idx.bucket("minhash", 5) == [p for p in pids if p != pids[2]] and idx.bucket("minhash", 6) == [pids[2]]
    assert idx.page_keys("minhash", pids[0]) == [5] and idx.page_keys("minhash", pids[2]) == [6]
    assert idx.edge(pids[0], pids[4]) == (pids[0], pids[4], "duplicate", "[]") and idx.edge(pids[4], pids[0]) is None
    plan = " ".join(r[-1] for r in idx.db.execute("EXPLAIN QUERY PLAN SELECT DISTINCT key FROM keys WHERE +algo=? AND pid=?", ("minhash", 1)))
    assert "keys_by_pid" in plan  # a page's keys without a walk of the algorithm's
    idx.delete_edges([(pids[0], pids[4])])
    assert [e[:2] for e in idx.edges()] == [(pids[1], pids[3])]


def test_later_edges_with_an_algorithms_evidence(tmp_path):
    """The edges from these pages that hold an item of one algorithm, found by the head
    evidence_json writes for it: not by a name in another item's detail, nor by a prefix."""
    from pagetwin.match import evidence_json
    from pagetwin.model import Evidence

    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    idx.begin()
    pids = [idx.add_page(_row(i)) for i in range(5)]
    ev = {
        (pids[0], pids[1]): (Evidence("minhash", 0.9, True), Evidence("con-w", 1.0, True)),
        (pids[0], pids[2]): (Evidence("con-w", 1.0, True, {"note": '{"algorithm": "minhash", '}),),
        (pids[0], pids[3]): (Evidence("minhash-x", 0.9, True),),
        (pids[1], pids[4]): (Evidence("minhash", 0.5, False),),
        (pids[2], pids[4]): (Evidence("minhash", 0.9, True),),
    }
    idx.add_edges([(a, b, "duplicate", evidence_json(e)) for (a, b), e in ev.items()])
    assert sorted(idx.later_edges_with("minhash", [pids[0], pids[1], pids[3]])) == [(pids[0], pids[1]), (pids[1], pids[4])]
    assert idx.later_edges_with("con-w", [pids[0]]) == [(pids[0], pids[1]), (pids[0], pids[2])]
    assert idx.later_edges_with("minhash", []) == []


def test_incompatible_settings_refused_with_the_setting_named(tmp_path):
    path = tmp_path / "i.sqlite"
    Index(path, Settings().to_dict()).close()
    s = Settings()
    s.set("minhash.shingle", 3)
    with pytest.raises(IndexError_, match="minhash.shingle"):
        Index(path, s.to_dict())
    s = Settings()
    s.set("extract.templates", False)
    with pytest.raises(IndexError_, match="extract.templates"):
        Index(path, s.to_dict())
    # a compatible run is accepted and numbered
    again = Index(path, Settings().to_dict())
    assert again.run == 2


def test_not_an_index(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(IndexError_):
        Index(path, Settings().to_dict())


_OLD_PAGES = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE pages (
    pid INTEGER PRIMARY KEY, id TEXT NOT NULL, url TEXT NOT NULL, host TEXT NOT NULL,
    source TEXT NOT NULL, kind TEXT NOT NULL, crawl_date TEXT, text_len INTEGER NOT NULL DEFAULT 0,
    payload_digest TEXT, refers_to_digest TEXT, lang TEXT, title TEXT, text BLOB, error TEXT,
    seen_run INTEGER NOT NULL, UNIQUE (id, source)
);
CREATE TABLE clusters (pid INTEGER PRIMARY KEY, cluster TEXT NOT NULL, keep INTEGER NOT NULL);
INSERT INTO meta VALUES ('schema', '2'), ('runs', '1');
INSERT INTO pages (id, url, host, source, kind, text_len, text, seen_run) VALUES ('old', 'http://x/old', 'x', 's', 'response', 1, NULL, 1);
INSERT INTO clusters VALUES (1, 'c-old', 1);
"""


def _old_index(path):
    import sqlite3

    db = sqlite3.connect(str(path))
    db.executescript(_OLD_PAGES)
    db.close()


def test_an_older_index_gets_the_offset_and_metadata_columns(tmp_path):
    path = tmp_path / "old.sqlite"
    _old_index(path)
    ro = Index.open_readonly(path)  # read only: not migrated, still readable
    assert "metadata" not in ro.page_columns()
    assert [(d["id"], d["warc_offset"], d["metadata"]) for d in ro.kept_documents()] == [("old", None, None)]
    ro.close()
    idx = Index(path, Settings().to_dict())
    assert {"warc_offset", "metadata", "http_status"} <= idx.page_columns()
    pid = idx.add_page(_row(1, warc_offset=1234, metadata={"dump": "CC-2024", "n": [1, 2]}))
    idx.add_page(_row(2))  # both keys may be left out
    idx.replace_clusters([(1, "c-old", 1), (pid, "c1", 1), (pid + 1, "c1", 0)])
    docs = {d["id"]: d for d in idx.kept_documents()}
    assert docs["old"]["metadata"] is None and docs["old"]["cluster_size"] == 1
    assert docs["p1"]["warc_offset"] == 1234 and docs["p1"]["metadata"] == {"dump": "CC-2024", "n": [1, 2]}
    assert docs["p1"]["cluster_size"] == 2 and "p2" not in docs
    idx.close()
    again = Index(path, Settings().to_dict())  # migrating twice is harmless
    assert again.page(pid)["warc_offset"] == 1234
    again.close()


def test_a_version_2_index_gets_its_edges_guard_scores_once(tmp_path, capsys):
    """Schema 2 -> 3: opened to write, an older index's edges get their guard scores (from
    their evidence, as match.stored_guard_score reads it) and the score indexes, once, with
    a message; read only, it is left as it is and still read."""
    import sqlite3

    from pagetwin.match import stored_guard_score

    path = tmp_path / "old.sqlite"
    _old_index(path)
    db = sqlite3.connect(str(path))
    db.execute("CREATE TABLE edges (a INTEGER NOT NULL, b INTEGER NOT NULL, kind TEXT NOT NULL, evidence TEXT NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID")
    ev = '[{"algorithm": "minhash", "score": 0.61, "passed": true}, {"algorithm": "simhash", "score": 0.9, "passed": false}]'
    db.executemany("INSERT INTO edges VALUES (?, ?, ?, ?)", [(1, 2, "duplicate", ev), (2, 3, "partial", "[]")])
    db.commit()
    db.close()
    ro = Index.open_readonly(path)
    assert [e[:3] for e in ro.edges()] == [(1, 2, "duplicate"), (2, 3, "partial")]
    ro.close()
    idx = Index(path, Settings().to_dict())
    assert "storing the guard scores of its 2 edges (schema 2 -> 3, once)" in capsys.readouterr().err
    assert idx.scored_edges([2], ["duplicate", "partial"]) == ([(2, 3, "partial", 1.0)], [(1, 2, "duplicate", 0.61)])
    assert stored_guard_score(ev) == 0.61 and idx._meta("schema") == "3"
    idx.close()
    Index(path, Settings().to_dict()).close()
    assert capsys.readouterr().err == ""  # once


def test_an_index_of_an_unknown_schema_is_refused_its_edges_untouched(tmp_path):
    import sqlite3

    path = tmp_path / "future.sqlite"
    _old_index(path)
    db = sqlite3.connect(str(path))
    db.execute("UPDATE meta SET value='9' WHERE key='schema'")
    db.execute("CREATE TABLE edges (a INTEGER NOT NULL, b INTEGER NOT NULL, kind TEXT NOT NULL, evidence TEXT NOT NULL, PRIMARY KEY (a, b)) WITHOUT ROWID")
    db.commit()
    db.close()
    with pytest.raises(IndexError_, match="schema version 9"):
        Index(path, Settings().to_dict())
    db = sqlite3.connect(str(path))
    assert "score" not in {row[1] for row in db.execute("PRAGMA table_info(edges)")}
    db.close()


def test_cluster_of_and_kept_with_payload(tmp_path):
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    a = idx.add_page(_row(1, payload_digest="sha1:A", text=b"t"))
    b = idx.add_page(_row(2, payload_digest="sha1:A", text=b"t"))
    c = idx.add_page(_row(3, payload_digest="sha1:C", text=b"u"))
    idx.replace_clusters([(a, "k", 0), (b, "k", 1), (c, "k", 0)])
    assert idx.kept_with_payload("sha1:A")["id"] == "p2"
    assert idx.kept_with_payload("sha1:C") is None  # not kept
    info = idx.cluster_of("p1", "s")
    assert info["size"] == 3 and not info["keep"] and info["same_text"] and info["kept"]["id"] == "p2"
    assert not idx.cluster_of("p3", "s")["same_text"]
    assert idx.cluster_of("p3", "elsewhere") is None


# -- checkpoints (an unfinished dedup run) ---------------------------------------------------


def _dump(path):
    """Every row of the tables a run writes, and the meta, as they are on disk."""
    import sqlite3

    db = sqlite3.connect(path)
    try:
        tables = ("meta", "pages", "features", "keys", "edges", "clusters", "models")
        return {t: sorted(db.execute(f"SELECT * FROM {t}"), key=repr) for t in tables}
    finally:
        db.close()


def _finished_run(path, cfg, pages, seen=()):
    """A run that stores ``pages`` (row numbers), marks ``seen`` (pids) seen and finishes."""
    idx = Index(path, cfg.to_dict(), inputs_key="earlier")
    idx.begin()
    idx.start_checkpoint("earlier", None)
    for pid in seen:
        idx.mark_seen(pid)
    for i in pages:
        pid = idx.add_page(_row(i))
        idx.add_fingerprints(pid, {"minhash": bytes([i % 256])}, {"minhash": [i, i + 1]})
    idx.save_model("site_templates", f"model after {list(pages)}".encode())
    idx.replace_clusters((p, f"c{p}", 1) for p in range(1, idx.page_count() + 1))
    idx.clear_checkpoint()
    idx.commit()
    idx.close()


def test_the_same_key_resumes_the_run_another_undoes_it(tmp_path):
    path = tmp_path / "i.sqlite"
    _finished_run(path, Settings(), range(3))
    idx = Index(path, Settings().to_dict(), inputs_key="k")
    assert idx.run == 2 and idx.resumed is None and idx.undone is None
    idx.begin()
    idx.start_checkpoint("k", b"learned")
    idx.mark_seen(1)
    idx.add_page(_row(7))
    idx.commit()
    idx.close()  # killed: the checkpoint stays
    # Opened without a key (not a dedup run), the checkpoint is left alone.
    plain = Index(path, Settings().to_dict())
    assert plain.checkpoint() is not None and plain.resumed is None and plain.undone is None
    plain.db.execute("UPDATE meta SET value='2' WHERE key='runs'")  # as if it had not started a run
    plain.close()
    again = Index(path, Settings().to_dict(), inputs_key="k")
    assert again.run == 2 and again.resumed is not None
    assert (again.resumed.pages, again.resumed.learned, again.resumed.first_pid) == (1, b"learned", 3)
    again.close()
    other = Index(path, Settings().to_dict(), inputs_key="other")
    assert other.undone is not None and other.undone.run == 2 and other.run == 2
    assert other.page_count() == 3 and other.checkpoint() is None
    assert other.db.execute("SELECT seen_run FROM pages WHERE pid=1").fetchone() == (1,)
    other.close()


def test_undoing_a_checkpoint_on_a_new_index_forgets_its_settings(tmp_path):
    path = tmp_path / "i.sqlite"
    idx = Index(path, Settings().to_dict(), inputs_key="k")
    idx.begin()
    idx.start_checkpoint("k", None)
    idx.add_page(_row(1))
    idx.commit()
    idx.close()
    s = Settings()
    s.text.lang = "de"  # refused by an index built with "en"; this one holds no finished run
    again = Index(path, s.to_dict(), inputs_key="other")
    assert again.undone is not None and again.page_count() == 0 and again.run == 1
    again.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    earlier=st.integers(0, 6),
    seen=st.sets(st.integers(1, 6), max_size=6),
    new=st.integers(0, 8),
    commit_after=st.integers(0, 8),
)
def test_undoing_a_checkpoint_gives_back_the_index_as_it_was(tmp_path_factory, earlier, seen, new, commit_after):
    """Whatever the unfinished run stored, marked seen and committed, undoing it gives back
    every row of the index as the finished runs left it."""
    path = tmp_path_factory.mktemp("undo") / "i.sqlite"
    _finished_run(path, Settings(), range(earlier))
    _finished_run(path, Settings(), range(100, 100 + earlier), seen=sorted(p for p in seen if p <= earlier))
    before = _dump(path)
    idx = Index(path, Settings().to_dict(), inputs_key="k")
    idx.begin()
    idx.start_checkpoint("k", b"m")
    idx.commit()
    idx.begin()
    for pid in sorted(p for p in seen if p <= idx.page_count()):
        idx.mark_seen(pid)
    for i in range(new):
        pid = idx.add_page(_row(200 + i))
        idx.add_fingerprints(pid, {"minhash": b"n"}, {"minhash": [i]})
        if i + 1 == commit_after:
            idx.commit()
            idx.begin()
    idx.commit()
    idx.close()
    undone = Index(path, Settings().to_dict(), inputs_key="other")
    assert undone.undone is not None and undone.undone.pages == new
    undone.close()
    after = _dump(path)
    before_meta, after_meta = dict(before.pop("meta")), dict(after.pop("meta"))
    assert after == before
    # The undo gives back the run counter; opening started the next run again.
    assert int(after_meta.pop("runs")) == int(before_meta.pop("runs")) + 1 and after_meta == before_meta


def test_many_pages_read_at_once_and_a_payload_found_by_its_index(tmp_path):
    """What a query reads of its candidates in a few queries (features_of, idents), the edges
    a walk of a component reads (scored_edges: each edge once, with its guard score, from the
    score indexes, the score of an edge written without one computed from its evidence), and
    pids_with_payload on pages_payload, not a walk of every response (pages_kind)."""
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    idx.begin()
    pids = [idx.add_page(_row(i, payload_digest="sha1:same" if i in (1, 3) else f"sha1:{i}")) for i in range(1200)]
    for pid in pids[::2]:
        idx.add_fingerprints(pid, {"minhash": bytes([pid % 256])}, {"minhash": [pid]})
    idx.replace_clusters([(pids[0], "c0", 1), (pids[5], "c0", 0)])
    ev = '[{"algorithm": "minhash", "score": 0.75, "passed": true}]'
    idx.add_edges([(pids[0], pids[5], "duplicate", ev, 0.5), (pids[5], pids[9], "partial", "[]")])
    idx.db.execute("INSERT INTO edges (a, b, kind, evidence) VALUES (?, ?, 'duplicate', ?)", (pids[9], pids[700], ev))
    idx.commit()
    found = idx.features_of("minhash", pids)  # more than one IN list
    assert found == {pid: bytes([pid % 256]) for pid in pids[::2]}
    assert idx.idents([pids[0], pids[7], 99999]) == {pids[0]: ("p0", "http://x/0", "c0"), pids[7]: ("p7", "http://x/7", None)}
    kinds = ("duplicate", "partial")
    assert idx.scored_edges([pids[5]], kinds) == ([(pids[5], pids[9], "partial", 1.0)], [(pids[0], pids[5], "duplicate", 0.5)])
    assert idx.scored_edges([pids[5]], ["duplicate"]) == ([], [(pids[0], pids[5], "duplicate", 0.5)])
    from_a, from_b = idx.scored_edges([pids[5], pids[9], *pids[600:1100]], kinds)  # two IN lists
    assert from_a == [(pids[5], pids[9], "partial", 1.0), (pids[9], pids[700], "duplicate", 0.75)]
    assert sorted(from_b) == [(pids[0], pids[5], "duplicate", 0.5), (pids[5], pids[9], "partial", 1.0), (pids[9], pids[700], "duplicate", 0.75)]
    for side in ("a", "b"):
        plan = " ".join(r[-1] for r in idx.db.execute(f"EXPLAIN QUERY PLAN SELECT a, b, kind, score FROM edges WHERE {side}=?", (1,)))
        assert f"COVERING INDEX edges_scored_{side}" in plan
    assert idx.pids_with_payload("sha1:same", 5) == [pids[3], pids[1]]
    sql = "EXPLAIN QUERY PLAN SELECT pid FROM pages WHERE payload_digest=? AND +kind='response' ORDER BY pid DESC LIMIT 5"
    assert "pages_payload" in " ".join(r[-1] for r in idx.db.execute(sql, ("sha1:same",)))


def test_the_new_pages_buckets_are_found_without_a_walk_of_the_older_keys(tmp_path):
    """buckets_with_new reads back from the end of the keys table: none of its statements
    ranges over keys_by_pid (pid <= first_new: every older page's keys, then sorted)."""
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    idx.begin()
    pids = [idx.add_page(_row(i)) for i in range(30)]
    for pid in pids:
        idx.add_fingerprints(pid, {"minhash": b"a"}, {"minhash": [pid % 3, 100 + pid]})
    idx.commit()
    statements = []
    idx.db.set_trace_callback(statements.append)
    new_keys = {p % 3 for p in pids[28:]}  # the last two pages' shared keys (the others are theirs alone)
    assert sorted(idx.buckets_with_new("minhash", pids[27])) == sorted([p for p in pids if p % 3 == k] for k in new_keys)
    idx.db.set_trace_callback(None)
    for sql in statements:
        plan = " ".join(r[-1] for r in idx.db.execute("EXPLAIN QUERY PLAN " + sql))
        assert "keys_by_pid" not in plan, (sql, plan)


def test_a_held_component_is_fresh_until_a_later_page_joins_it_or_the_edges_are_replaced(tmp_path):
    """held_stamp / held_fresh: rounds stored now stay fresh for the pages up to those of an
    add (``below``) unless an edge of the merged kinds joins a member to a page stored after
    them, or every edge was replaced; an older stamp (schema 3's edge sums) is never fresh;
    store_held puts a component in place of the stored ones sharing a member (the rows of its
    new members only), drop_held and replace_held forget them."""
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    pids = [idx.add_page(_row(i)) for i in range(4)]
    idx.add_edges([(pids[0], pids[1], "duplicate", "[]", 0.9), (pids[1], pids[2], "duplicate", "[]", 0.8)])
    stamp, members, kinds = idx.held_stamp(), pids[:3], ["duplicate"]
    assert stamp == f"v2:0:{pids[3]}"
    later = [idx.add_page(_row(i)) for i in range(4, 8)]
    assert idx.held_fresh(stamp, members, kinds, below=later[0])
    idx.add_edges([(pids[3], later[0], "duplicate", "[]", 1.0), (pids[2], later[1], "partial", "[]", 1.0)])
    assert idx.held_fresh(stamp, members, kinds, below=later[2])  # not a member's, not a merged kind
    idx.add_edges([(pids[2], later[2], "duplicate", "[]", 0.7)])
    assert idx.held_fresh(stamp, members, kinds, below=later[2])  # the add's own page
    assert not idx.held_fresh(stamp, members, kinds, below=later[3])  # a page stored after the rounds joined
    assert not idx.held_fresh("2:3:4:5:6:0", members, kinds, below=later[0])
    fresh = idx.held_stamp()
    idx.replace_edges([(a, b, k, ev, s) for a, b, k, ev, s in idx.db.execute("SELECT a, b, kind, evidence, score FROM edges").fetchall()])
    assert not idx.held_fresh(fresh, members, kinds, below=later[3] + 1)  # a dedup run matched everything again
    idx.store_held([(pids[0], "s1", b"one", pids[:3])])
    idx.store_held([(pids[3], "s2", b"two", [pids[3]])])
    assert idx.held_components([pids[1], pids[3]]) == {pids[0]: ("s1", b"one"), pids[3]: ("s2", b"two")}
    idx.store_held([(pids[0], "s1b", b"one+", [*pids[:3], later[0]])])  # grown by an add
    assert idx.held_components([later[0]]) == {pids[0]: ("s1b", b"one+")}
    idx.store_held([(pids[2], "s3", b"three", [pids[2], pids[3], later[1]])])  # joins both: they are dropped
    assert idx.held_components([*pids, *later]) == {pids[2]: ("s3", b"three")}
    assert idx.db.execute("SELECT COUNT(*) FROM held_pages").fetchone()[0] == 3
    idx.drop_held([later[1]])
    assert idx.held_components([*pids, *later]) == {}
    idx.store_held([(pids[0], "a", b"a", pids[:2]), (pids[2], "b", b"b", pids[2:4])])
    idx.replace_held([(later[0], "c", b"c", later[:2])])
    assert idx.held_components([*pids, *later]) == {later[0]: ("c", b"c")}


def test_same_text_is_the_same_on_a_lean_index_as_on_a_full_one():
    """cluster_of's same_text (the relation --dedup-warc writes) from the exact algorithm's
    digests: a lean index (index.store_text = false: no text stored) answers as a full one,
    for a copy of the kept page's text under another payload, a copy differing in case and
    spacing only (the same normalized text, as the exact algorithm says), and a near copy."""
    from pagetwin.api import Index as Api

    story = [f"Paragraph {i} of the harbour story, with enough words to be a paragraph of its own." for i in range(8)]
    text = " ".join(story)
    pages = [
        {"id": "a", "url": "https://one.example/s", "text": text},
        {"id": "b", "url": "https://two.example/s", "text": text},
        {"id": "c", "url": "https://three.example/s", "text": text.upper().replace(" ", "  ")},
        {"id": "d", "url": "https://four.example/s", "text": " ".join(story[:7] + ["A last paragraph written again, in other words."])},
    ]
    answers = []
    for store_text in (True, False):
        settings = Settings()
        settings.index.store_text = store_text
        with Api.memory(settings) as index:
            index.add(pages)
            store = index._store
            assert (store.db.execute("SELECT COUNT(*) FROM pages WHERE text IS NOT NULL").fetchone()[0] > 0) == store_text
            answers.append({p["id"]: (store.cluster_of(p["id"], "")["cluster"], store.cluster_of(p["id"], "")["same_text"]) for p in pages})
    assert answers[0] == answers[1]
    same = {page: s for page, (_, s) in answers[0].items()}
    assert same["a"] and same["b"] and same["c"] and not same["d"]
    assert len({cluster for cluster, _ in answers[0].values()}) == 1
