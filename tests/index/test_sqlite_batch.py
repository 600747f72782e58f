"""index.sqlite's page-writing path for a run's pass 2: PageBatch (pages held and written one
executemany per table) and the secondary indexes a new index builds after its pages."""

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.config import Settings
from pagetwin.index.sqlite import DEFERRED_INDEXES, EDGE_INDEXES, Index


def _row(i, source="s", **kw):
    return {
        "id": f"p{i}", "url": f"http://h/{i}", "host": "h", "source": source, "kind": "response", "crawl_date": None,
        "text_len": i, "payload_digest": f"d{i % 3}", "refers_to_digest": None, "lang": "en", "title": f"t{i}",
        "text": b"x" * i, "error": None, "warc_offset": i * 10 if i % 2 else None, "http_status": 200 if i % 3 else None,
        "metadata": {"n": i, "é": [1, 2]} if i % 4 == 0 else None, **kw,
    }  # fmt: skip


def _fingerprints(i):
    return {"minhash": b"m%d" % i, "exact": b"e"}, {"minhash": [i, i + 1, 7], "exact": [i % 2]}


def _tables(idx):
    return [idx.db.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall() for t in ("pages", "features", "keys")]


@given(st.lists(st.sampled_from(["one", "flush"]), max_size=30), st.integers(0, 3))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_batch_writes_what_adding_one_page_at_a_time_writes(tmp_path, steps, before):
    """The same rows and pids as Index.add_page + add_fingerprints page by page, whatever the
    flushes in between, on an index holding pages of an earlier run."""
    paths = [tmp_path / f"{name}-{len(steps)}-{before}.sqlite" for name in ("one", "batch")]
    one, batched = (Index(p, Settings().to_dict()) for p in paths)
    for idx in (one, batched):
        for i in range(before):
            idx.add_fingerprints(idx.add_page(_row(100 + i)), *_fingerprints(100 + i))
    batch = batched.page_batch()
    for i, step in enumerate(steps):
        pid = batch.add_page(_row(i))
        assert pid == one.add_page(_row(i))
        batch.add_fingerprints(pid, *_fingerprints(i))
        one.add_fingerprints(pid, *_fingerprints(i))
        assert batch.known_pid(f"p{i}", "s") == one.known_pid(f"p{i}", "s")
        if step == "flush":
            batch.flush()
        # Every page so far, flushed or held, and pages it does not hold (a new index's batch
        # answers those from the digests of the pages it wrote)
        for j in (*range(i + 1), i + 1, 100):
            for source in ("s", "t"):
                assert batch.known_pid(f"p{j}", source) == one.known_pid(f"p{j}", source)
    batch.flush()
    assert _tables(batched) == _tables(one)
    for path in paths:
        path.unlink()


def test_a_page_held_twice_is_refused_as_the_index_refuses_it(tmp_path):
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    batch = idx.page_batch()
    batch.add_page(_row(1))
    batch.add_page(_row(1, source="other"))  # the same id from another file is another page
    with pytest.raises(sqlite3.IntegrityError):
        batch.add_page(_row(1))
    batch.flush()
    with pytest.raises(sqlite3.IntegrityError):
        idx.add_page(_row(1))
    assert batch.known_pid("p1", "other") == 2 and batch.known_pid("p9", "s") is None


def _index_names(idx):
    return {n for (n,) in idx.db.execute("SELECT name FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")}


def test_deferred_indexes_are_built_again_and_an_opened_index_has_them_all(tmp_path):
    """Dropped for a new index's pass 2 and created after it with the schema's own statements;
    an index left without them (a run killed in between) has them again when opened."""
    path = tmp_path / "i.sqlite"
    idx = Index(path, Settings().to_dict())
    every = _index_names(idx)
    assert set(DEFERRED_INDEXES) <= every
    idx.begin()
    statements = idx.drop_deferred_indexes()
    assert _index_names(idx) == every - set(DEFERRED_INDEXES) and len(statements) == len(DEFERRED_INDEXES)
    idx.commit()
    idx.db.close()  # killed here: the file lacks them
    again = Index(path, Settings().to_dict())
    assert _index_names(again) == every
    again.begin()
    statements = again.drop_deferred_indexes()
    again.create_indexes(statements)
    again.commit()
    assert _index_names(again) == every
    plan = again.db.execute("EXPLAIN QUERY PLAN SELECT pid FROM keys WHERE algo='minhash' AND key=1").fetchall()
    assert "keys_by_key" in str(plan)


def _index_sql(idx):
    return {n: sql for n, sql in idx.db.execute("SELECT name, sql FROM sqlite_master WHERE type='index' AND sql IS NOT NULL")}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.integers(1, 40), st.integers(1, 40), st.sampled_from(["duplicate", "partial", "revisit"]), st.floats(0, 1)),
        max_size=60,
    )
)
def test_replaced_edges_are_the_rows_given_with_the_edge_indexes_built_again(tmp_path, drawn):
    """replace_edges writes into the empty table without its secondary indexes
    (EDGE_INDEXES) and builds them after: the same rows, the schema's own index statements,
    and the queries that read a page's edges by b still use them."""
    idx = Index(tmp_path / f"e{len(drawn)}.sqlite", Settings().to_dict())
    before = _index_sql(idx)
    assert set(EDGE_INDEXES) <= set(before)
    rows = {}
    for a, b, kind, score in drawn:
        if a < b:
            rows[(a, b)] = (a, b, kind, f'[{{"algorithm": "minhash", "score": {score}, "passed": true}}]', score)
    idx.begin()
    idx.add_edges([(1, 2, "duplicate", "[]", 1.0)])  # replaced, not kept
    idx.replace_edges(iter(sorted(rows.values())))
    idx.commit()
    assert idx.db.execute("SELECT a, b, kind, evidence, score FROM edges ORDER BY a, b").fetchall() == sorted(rows.values())
    assert _index_sql(idx) == before
    plan = idx.db.execute("EXPLAIN QUERY PLAN SELECT a, kind, score FROM edges WHERE b=3 AND kind='duplicate'").fetchall()
    assert "edges_scored_b" in str(plan)
    for pid in range(1, 41):
        assert sorted(idx.edges_touching(pid)) == sorted(r[:4] for r in rows.values() if pid in r[:2])
    idx.db.close()


def test_a_new_index_batch_tells_pages_of_one_bit_apart_by_the_index(tmp_path, monkeypatch):
    """Pages whose (id, source) share a bit of the batch's bitmap (8 bits here: most do) are
    asked of the index: a page it did not write is still not found, one it wrote is."""
    import pagetwin.index.sqlite as sqlite_index

    monkeypatch.setattr(sqlite_index, "_WRITTEN_BITS", 8)
    idx = Index(tmp_path / "i.sqlite", Settings().to_dict())
    batch = idx.page_batch()
    pids = {}
    for i in range(30):
        pids[f"p{i}"] = batch.add_page(_row(i))
        if i % 7 == 6:
            batch.flush()
    batch.flush()
    for i in range(40):
        assert batch.known_pid(f"p{i}", "s") == pids.get(f"p{i}")
        assert batch.known_pid(f"p{i}", "other") is None
