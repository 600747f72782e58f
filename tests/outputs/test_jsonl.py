"""outputs.jsonl: clusters.jsonl, pairs.jsonl and summary.json, complete and atomic."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.outputs.jsonl import (
    cluster_line,
    cluster_line_reference,
    cluster_stats,
    pair_line,
    pair_line_reference,
    size_bucket,
    write_clusters,
    write_pairs,
    write_summary,
)


class TinyIndex:
    """The part of index.sqlite.Index the writers read: the pages, clusters and edges tables."""

    def __init__(self, pages, edges):
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE TABLE pages (pid INTEGER PRIMARY KEY, id TEXT, url TEXT, host TEXT)")
        self.db.execute("CREATE TABLE clusters (pid INTEGER, cluster TEXT, keep INTEGER)")
        self.db.execute("CREATE TABLE edges (a INTEGER, b INTEGER, kind TEXT, evidence TEXT NOT NULL, PRIMARY KEY (a, b))")
        for pid, (page_id, url, cluster, keep) in enumerate(pages):
            self.db.execute("INSERT INTO pages VALUES (?, ?, ?, ?)", (pid, page_id, url, url.split("/")[2] if "//" in url else ""))
            self.db.execute("INSERT INTO clusters VALUES (?, ?, ?)", (pid, cluster, keep))
        self.db.executemany("INSERT INTO edges VALUES (?, ?, ?, ?)", edges)


pages_strategy = st.lists(
    st.tuples(st.text(min_size=1, max_size=8), st.sampled_from(["c1", "c2", "c3", "ö"])),
    min_size=1,
    max_size=20,
)


@given(pages_strategy)
@settings(max_examples=50, deadline=None)
def test_write_clusters_writes_every_page_and_counts_clusters(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("out") / "clusters.jsonl"
    # one kept page per cluster: its first page
    seen, pages = set(), []
    for i, (name, cluster) in enumerate(rows):
        pages.append((f"{name}#{i}", f"http://x/{i}", cluster, cluster not in seen))
        seen.add(cluster)
    lines, clusters, duplicates = write_clusters(TinyIndex(pages, []), path)
    # split on "\n" only: ensure_ascii=False leaves U+2028 or U+0085 raw, which splitlines cuts at
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n")[:-1]]
    size = {c: sum(1 for p in pages if p[2] == c) for c in seen}
    kept = {c: p for p, _, c, k in pages if k}
    expected = [{"id": p, "url": u, "cluster": c, "keep": k, "cluster_size": size[c], "kept_id": kept[c]} for p, u, c, k in pages]
    assert records == expected
    assert (lines, clusters, duplicates) == (len(pages), len(seen), len(pages) - len(seen))


def test_write_pairs_names_both_pages_and_keeps_the_evidence(tmp_path):
    pages = [("a", "http://x/a", "c", 1), ("b", "http://x/b", "c", 0), ("c", "http://x/c", "c", 0)]
    evidence = {"exact": {"score": 1.0, "passed": True}}
    edges = [(0, 1, "exact", json.dumps(evidence)), (1, 2, "near", "{}")]
    path = tmp_path / "pairs.jsonl"
    assert write_pairs(TinyIndex(pages, edges), path) == 2
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0] == {"a": "a", "b": "b", "url_a": "http://x/a", "url_b": "http://x/b", "kind": "exact", "evidence": evidence}
    assert (records[1]["a"], records[1]["b"], records[1]["kind"]) == ("b", "c", "near")


def test_a_failing_writer_leaves_the_old_file(tmp_path, monkeypatch):
    """The index fails to give the edges mid-way (a damaged file): the earlier pairs.jsonl stays."""
    import pagetwin.outputs.jsonl as jsonl

    path = tmp_path / "pairs.jsonl"
    path.write_text("old\n")

    def damaged(index, edges=None):
        yield '{"a": "a"}\n', 1
        raise sqlite3.DatabaseError("database disk image is malformed")

    monkeypatch.setattr(jsonl, "pair_texts", damaged)
    with pytest.raises(sqlite3.DatabaseError):
        write_pairs(TinyIndex([("a", "u", "c", 1), ("b", "v", "c", 0)], []), path)
    assert path.read_text() == "old\n" and os.listdir(tmp_path) == ["pairs.jsonl"]


_DETAIL_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@given(st.lists(st.tuples(st.sampled_from(["minhash", "exact", "sörted", "键"]), st.floats(0, 1),
                          st.booleans(), st.dictionaries(st.text(max_size=5), _DETAIL_VALUES, max_size=3)),
                max_size=4),
       st.text(max_size=6), st.sampled_from(["duplicate", "partial", "revisit"]))
@settings(max_examples=80, deadline=None)
def test_pairs_lines_are_the_evidence_parsed_and_written_again(tmp_path_factory, items, page_id, kind):
    """write_pairs puts the stored evidence in its line as it is: the same bytes as the record
    with the evidence read (json.loads) and written again, for evidence match.evidence_json
    wrote (any detail: non-ASCII text, floats, NaN, nested lists and objects)."""
    from pagetwin.match import Evidence, evidence_json

    evidence = evidence_json(tuple(Evidence(name, score, passed, dict(detail)) for name, score, passed, detail in items))
    pages = [(page_id, "http://x/ä", "c", 1), ("b\u2028", "http://x/b", "c", 0)]
    path = tmp_path_factory.mktemp("out") / "pairs.jsonl"
    assert write_pairs(TinyIndex(pages, [(0, 1, kind, evidence)]), path) == 1
    record = {"a": page_id, "b": "b\u2028", "url_a": "http://x/ä", "url_b": "http://x/b", "kind": kind,
              "evidence": json.loads(evidence)}
    assert path.read_text(encoding="utf-8") == json.dumps(record, ensure_ascii=False) + "\n"


def test_write_summary_is_whole_json_and_keeps_non_ascii(tmp_path):
    path = tmp_path / "summary.json"
    summary = {"pages": {"total": 3, "refused_charsets": ["x-mac-cyrillic"]}, "note": "тест", "path": tmp_path}
    write_summary(summary, path)
    text = path.read_text(encoding="utf-8")
    assert "тест" in text and text.endswith("\n")
    assert json.loads(text) == {**summary, "path": str(tmp_path)}  # default=str for paths


def test_size_buckets_are_powers_of_two():
    assert [size_bucket(n) for n in (1, 2, 3, 4, 5, 8, 9, 70, 1000)] == ["1", "2", "3-4", "3-4", "5-8", "5-8", "9-16", "65-128", "513-1024"]


@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=15))
@settings(max_examples=30, deadline=None)
def test_cluster_stats_count_every_cluster_and_page(sizes):
    """Buckets sum to the clusters, hosts to the pages; the largest cluster is the largest."""
    pages = []
    for c, size in enumerate(sizes):
        for i in range(size):
            pages.append((f"p{c}.{i}", f"http://h{i % 3}.example/{c}/{i}", f"c{c}", i == 0))
    stats = cluster_stats(TinyIndex(pages, []), max_hosts=2)
    assert sum(stats["cluster_sizes"].values()) == len(sizes) and stats["largest_cluster"] == max(sizes)
    hosts = stats["hosts"]
    listed = hosts["listed"]
    assert [h["pages"] for h in listed] == sorted((h["pages"] for h in listed), reverse=True)
    assert sum(h["pages"] for h in listed) + hosts["others"]["pages"] == len(pages)
    assert sum(h["duplicates"] for h in listed) + hosts["others"]["duplicates"] == len(pages) - len(sizes)
    assert hosts["count"] == len(listed) + hosts["others"]["hosts"] == len({p[1].split("/")[2] for p in pages})


# Any text (lone surrogates, quotes, controls, U+2028 included), or a value of another type
# (NULL columns, a str subclass), which the lines then write through json.dumps.
_FIELD = st.text(max_size=8) | st.none() | st.integers() | st.builds(type("Sub", (str,), {}), st.text(max_size=3))


@given(_FIELD, _FIELD, _FIELD, _FIELD, _FIELD, st.sampled_from(["[]", '[{"algorithm": "exact"}]']))
@settings(max_examples=200, deadline=None)
def test_pair_line_is_its_json_dumps_reference(id_a, id_b, url_a, url_b, kind, evidence):
    assert pair_line(id_a, id_b, url_a, url_b, kind, evidence) == pair_line_reference(id_a, id_b, url_a, url_b, kind, evidence)


@given(_FIELD, _FIELD, _FIELD, st.sampled_from([0, 1, True, False, None]), st.integers() | st.booleans() | st.none(), _FIELD)
@settings(max_examples=200, deadline=None)
def test_cluster_line_is_its_json_dumps_reference(page_id, url, cluster, keep, size, kept_id):
    line = cluster_line(page_id, url, cluster, keep, size, kept_id)
    assert line == cluster_line_reference(page_id, url, cluster, keep, size, kept_id)
    assert json.loads(line)["id"] == page_id


@given(
    st.lists(st.tuples(st.text(max_size=4), st.text(max_size=4)), min_size=1, max_size=12),
    st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14), st.sampled_from(["duplicate", "partial", "ö\n"])), max_size=40),
    st.integers(1, 5),
    st.integers(2, 9),
)
@settings(max_examples=60, deadline=None)
def test_pairs_lines_are_those_of_each_edge_joined_with_its_pages(tmp_path_factory, pages, drawn, chunk, kept):
    """pair_texts reads the edges without their pages, a chunk at a time, and quotes each
    page once while it keeps it: the same lines as pair_line over the edges joined with both
    pages (an edge whose page is not stored has none), however small the chunks and the pages
    kept; the same from the edges' columns (the link step's match.EdgeColumns) as from the index."""
    import pagetwin.outputs.jsonl as jsonl
    from pagetwin.match import EdgeColumns

    edges = sorted({(a, b): (a, b, kind, f'[{{"n": {a * b}}}]') for a, b, kind in drawn if a < b}.values())
    index = TinyIndex([(page_id, url, "c", 1) for page_id, url in pages], edges)
    expected = [
        pair_line(id_a, id_b, url_a, url_b, kind, evidence) + "\n"
        for id_a, url_a, id_b, url_b, kind, evidence in index.db.execute(
            "SELECT pa.id, pa.url, pb.id, pb.url, e.kind, e.evidence FROM edges e"
            " JOIN pages pa ON pa.pid = e.a JOIN pages pb ON pb.pid = e.b ORDER BY e.a, e.b"
        )
    ]
    old = jsonl._PAIRS_CHUNK, jsonl._QUOTED_PAGES
    jsonl._PAIRS_CHUNK, jsonl._QUOTED_PAGES = chunk, kept
    try:
        path = tmp_path_factory.mktemp("out") / "pairs.jsonl"
        n = write_pairs(index, path)
        from_columns = path.with_name("from-columns.jsonl")
        columns = EdgeColumns(*zip(*[(a, b, kind, evidence, 1.0) for a, b, kind, evidence in edges])) if edges else EdgeColumns((), (), (), (), ())
        n_from_columns = write_pairs(index, from_columns, columns)
    finally:
        jsonl._PAIRS_CHUNK, jsonl._QUOTED_PAGES = old
    assert path.read_text(encoding="utf-8") == "".join(expected) and n == len(expected)
    assert from_columns.read_text(encoding="utf-8") == "".join(expected) and n_from_columns == len(expected)


@pytest.mark.skipif(__import__("pagetwin.outputs.jsonl", fromlist=["_edges"])._edges is None, reason="the native kernel (pagetwin._edges) is not built")
@given(
    st.dictionaries(st.integers(0, 9), st.tuples(_FIELD, _FIELD), max_size=8),
    st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11), _FIELD, st.text(max_size=6) | st.binary(max_size=3) | st.none() | _FIELD), max_size=30),
    st.dictionaries(st.sampled_from(["duplicate", "partial"]), st.text(max_size=4) | st.integers(), max_size=1),
    st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_native_pair_text_is_the_reference_text(pages, chunk, kinds, raw):
    """_edges.pair_text writes the text pair_text_reference writes (pages missing, kinds kept
    already or not, values of other types: as an f-string formats them), and keeps the kinds
    it quotes as it does."""
    import pagetwin.outputs.jsonl as jsonl

    quote = jsonl._quoted if not raw else (lambda value: value)  # pieces not str: formatted
    quoted = {pid: (quote(page_id), quote(url)) for pid, (page_id, url) in pages.items()}
    native_kinds, reference_kinds = dict(kinds), dict(kinds)
    native = jsonl._edges.pair_text(list(chunk), quoted, native_kinds, jsonl._quoted)
    assert native == jsonl.pair_text_reference(list(chunk), quoted, reference_kinds)
    assert native_kinds == reference_kinds
