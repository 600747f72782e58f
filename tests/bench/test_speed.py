import pytest

from bench.corpus import SourcePage, build_corpus
from bench.speed import _UnionFind, run_peer, word_shingles


def test_word_shingles():
    assert word_shingles("A b c d e f") == {"a b c d e", "b c d e f"}
    assert word_shingles("short text") == {"short text"}
    assert word_shingles("  ") == set()


def test_union_find_partitions():
    uf = _UnionFind()
    uf.union(1, 2)
    uf.union(3, 4)
    uf.union(2, 4)
    assert len({uf.find(i) for i in range(1, 5)}) == 1
    assert uf.find(5) == 5


def test_resiliparse_peer_finds_planted_duplicate(tmp_path):
    pytest.importorskip("resiliparse")
    pytest.importorskip("datasketch")
    words = " ".join(f"word{i}" for i in range(300))
    other = " ".join(f"other{i}" for i in range(300))
    pages = [
        SourcePage("a", "https://a.test/1", f"<html><body><article><p>{words}</p></article></body></html>".encode(), "text/html"),
        SourcePage("b", "https://b.test/1", f"<html><body><article><p>{words}</p></article></body></html>".encode(), "text/html"),
        SourcePage("c", "https://c.test/1", f"<html><body><article><p>{other}</p></article></body></html>".encode(), "text/html"),
    ]
    corpus = tmp_path / "c.warc.gz"
    build_corpus(3, corpus, sources=lambda: pages)
    result = run_peer("resiliparse", corpus)
    assert result["pages"] == 3 and result["clusters"] == 2 and result["duplicates"] == 1
