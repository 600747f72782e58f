from hypothesis import given, strategies as st

from pagetwin.cluster import ClusterPage, ClusterRow, UnionFind, clusters, keep_key

pages_strategy = st.integers(1, 40).flatmap(
    lambda n: st.tuples(
        st.just([(i, f"id{i:03d}", (i * 37) % 11, None if i % 3 else f"2020-01-{i % 28 + 1:02d}") for i in range(n)]),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=60),
    )
)


@given(pages_strategy, st.sampled_from(["longest", "earliest", "first"]))
def test_clusters_are_a_partition_with_one_keep_each(data, policy):
    pages, edges = data
    rows = clusters(pages, edges, policy)
    assert sorted(r[0] for r in rows) == [p[0] for p in pages]  # every page exactly once
    keeps: dict[str, int] = {}
    for _, name, keep in rows:
        keeps[name] = keeps.get(name, 0) + keep
    assert all(v == 1 for v in keeps.values())
    # pages joined by an edge share a cluster
    of = {pid: name for pid, name, _ in rows}
    assert all(of[a] == of[b] for a, b in edges)


@given(pages_strategy)
def test_split_keeps_partition(data):
    pages, edges = data
    rows = clusters(pages, edges, "longest", split=lambda members: [[m] for m in members])
    assert sorted(r[0] for r in rows) == [p[0] for p in pages]
    assert sum(r[2] for r in rows) == len({name for _, name, _ in rows})


def test_keep_policy_longest_then_earliest_then_id():
    pages = [
        ClusterPage(0, "b", 10, "2020-02-01"),
        ClusterPage(1, "a", 10, "2020-01-01"),
        ClusterPage(2, "c", 5, "2019-01-01"),
        ClusterPage(3, "d", 10, None),  # undated: never the earliest, last among equals
    ]
    assert min(pages, key=keep_key("longest")).id == "a"
    assert min(pages, key=keep_key("earliest")).id == "c"
    assert min(pages, key=keep_key("first")).id == "b"
    assert sorted(pages, key=keep_key("longest"))[-2].id == "d"


def test_clusters_take_index_rows_and_give_named_rows():
    # Index.pages_for_clustering gives plain tuples in ClusterPage's field order.
    rows = clusters([(0, "b", 10, None), (1, "a", 12, None)], [(0, 1)], "longest")
    assert rows == [ClusterRow(0, rows[0].cluster, 0), ClusterRow(1, rows[0].cluster, 1)]
    assert rows[1].keep == 1 and rows[0].cluster == rows[1].cluster


def test_union_find():
    uf = UnionFind()
    uf.union(1, 2)
    uf.union(3, 4)
    uf.union(2, 4)
    assert uf.find(1) == uf.find(3)
    assert len(uf.groups()) == 1


def test_attached_followers_join_their_page_and_are_never_kept():
    pages = [(0, "a", 10, None), (1, "b", 10, None), (2, "c", 0, None), (3, "d", 0, None)]
    # the split puts every page on its own; followers 2 (of 0) and 3 (of 2) still join page 0
    rows = clusters(pages, [(0, 1)], "first", split=lambda m: [[x] for x in m], attach=[(0, 2), (2, 3)])
    of = {pid: (name, keep) for pid, name, keep in rows}
    assert of[2][0] == of[0][0] == of[3][0]
    assert of[2][1] == 0 and of[3][1] == 0 and of[0][1] == 1
    assert sorted(of) == [0, 1, 2, 3]


@given(
    st.lists(st.integers(0, 30), unique=True, max_size=25),
    st.lists(st.tuples(st.integers(0, 35), st.integers(0, 35)), max_size=60),
)
def test_the_written_out_unions_give_union_finds_groups(held, edges):
    """cluster._union_all (find written out in the loop) == UnionFind.union of each edge whose
    pages are held: the same groups, in the same order, members in the same order, and the
    same parent and size of every page."""
    from pagetwin.cluster import _union_all

    one, other = UnionFind(), UnionFind()
    for x in held:
        one.add(x)
        other.add(x)
    for a, b in edges:
        if a in one.parent and b in one.parent:
            one.union(a, b)
    _union_all(other, edges)
    assert list(one.groups().items()) == list(other.groups().items())
    assert one.parent == other.parent and one.size == other.size
