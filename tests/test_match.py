from pagetwin.match import bucket_pairs, edge_kind
from pagetwin.model import Evidence


def test_bucket_pairs_all_pairs_chain_and_window():
    assert list(bucket_pairs([1, 2, 3], 10, chain=False)) == [(1, 2), (1, 3), (2, 3)]
    assert list(bucket_pairs([1, 2, 3], 10, chain=True)) == [(1, 2), (2, 3)]
    big = list(range(1000))
    pairs = list(bucket_pairs(big, 200, chain=False))
    assert len(pairs) < 1000 * 17  # not quadratic
    assert all(0 < b - a <= 16 for a, b in pairs)


def test_edge_kind():
    dup = Evidence("minhash", 0.9, True)
    part = Evidence("chunks", 0.5, True, {"kind": "partial"})
    rev = Evidence("revisit", 1.0, True)
    assert edge_kind([dup]) == "duplicate"
    assert edge_kind([part]) == "partial"
    assert edge_kind([part, dup]) == "duplicate"
    assert edge_kind([rev, dup]) == "revisit"
