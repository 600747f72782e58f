"""runners/spark_link.py: the link step on Spark's executors (``spark.link = "executors"``)
gives the local runner's clusters, kept pages and pairs, on the example crawl and on the real
crawls of the shared data; its connected components are union-find's, through a real local
Spark; bad usage is a one-line ConfigError. One SparkSession for the module (start-up is slow)."""

from __future__ import annotations

import glob
import gzip
import json
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pagetwin.app import dedup
from pagetwin.cluster import UnionFind
from pagetwin.config import ConfigError, Settings
from pagetwin.runners import spark
from pagetwin.sources import InputError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "debian-docs.warc.gz"
SHARED_WARC = ROOT.parent / "shared" / "data" / "warc"


@pytest.fixture(scope="module")
def session():
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pagetwin[spark]')")
    if spark._java() is None:
        pytest.skip("Java is not installed (Spark needs Java 17)")
    owner = spark.SparkEngine(master="local[2]")
    sc = owner.context(Settings())
    yield sc
    owner.close()  # the engine that started the session stops it


def _settings(link: str, **extra) -> Settings:
    s = Settings()
    s.set("run.workers", 2)
    s.set("spark.link", link)
    for key, value in extra.items():
        s.set(key.replace("__", "."), value)
    return s.validate()


def _parts(folder: Path) -> list[dict]:
    """The lines of a folder of part files, in part order."""
    return [json.loads(line) for f in sorted(folder.glob("part-*")) for line in f.read_text().splitlines()]


def _core(rows: list[dict]) -> list[tuple]:
    return [(r["id"], r["url"], r["cluster"], r["keep"]) for r in rows]


def _same_as_local(inputs: list[str], tmp_path: Path, spark_inputs: list[str] | None = None, **extra) -> dict:
    """Run the local runner on ``inputs`` and the executors' link step on ``spark_inputs`` (the
    same files, as URIs; default ``inputs``); assert the same clusters, kept pages and pairs,
    line for line, and summaries; return the executors' summary. ``extra``: settings for both
    (``match__max_bucket=3`` for match.max_bucket)."""
    local = dedup(inputs, tmp_path / "local", _settings("driver", **extra))
    engine = spark.SparkEngine(master="local[2]")
    ours = dedup(spark_inputs or inputs, tmp_path / "spark", _settings("executors", **extra), engine=engine)
    local_rows = [json.loads(line) for line in (tmp_path / "local" / "clusters.jsonl").read_text().splitlines()]
    assert _core(_parts(tmp_path / "spark" / "clusters.jsonl")) == _core(local_rows)  # (the message names these)
    assert _parts(tmp_path / "spark" / "clusters.jsonl") == local_rows
    local_pairs = [json.loads(line) for line in (tmp_path / "local" / "pairs.jsonl").read_text().splitlines()]
    assert _parts(tmp_path / "spark" / "pairs.jsonl") == local_pairs
    keys = ("clusters", "duplicates", "pairs", "edges_by_kind", "records", "input_status", "cluster_sizes",
            "largest_cluster", "hosts", "cluster_kinds")  # fmt: skip
    for key in keys:
        assert ours[key] == local[key], key
    assert {k: v for k, v in ours["matching"].items() if k != "incremental"} == {
        k: v for k, v in local["matching"].items() if k != "incremental"
    }
    return ours


def test_example_crawl_same_clusters_and_pairs_as_local(session, tmp_path):
    summary = _same_as_local([str(EXAMPLE)], tmp_path)
    assert summary["duplicates"] > 50 and summary["revisits"]["matched"] > 0  # not two empty results
    assert summary["link"] == "executors" and summary["components_rounds"] >= 1
    # The outputs are also Parquet, and the lean index holds no text.
    import pyarrow.parquet as pq

    clusters = pq.read_table(tmp_path / "spark" / "clusters.parquet").to_pylist()
    assert sorted((r["pid"], r["id"], r["cluster"], r["keep"]) for r in clusters) == [
        (pid, r["id"], r["cluster"], r["keep"]) for pid, r in enumerate(_parts(tmp_path / "spark" / "clusters.jsonl"), 1)
    ]
    # Each Parquet file's rows in the order explain looks them up by: clusters by id, pairs by a.
    for name, key in (("clusters.parquet", "id"), ("pairs.parquet", "a")):
        for part in sorted((tmp_path / "spark" / name).glob("part-*.parquet")):
            column = pq.read_table(part, columns=[key]).column(key).to_pylist()
            assert column == sorted(column), (name, part)
    pages = pq.read_table(tmp_path / "spark" / "pages.parquet")
    assert "text" not in pages.column_names and pages.num_rows == summary["pages"]["in_output"]
    assert summary["lean_index_bytes_per_page"] > 0
    _lean_index_finds_every_pair(tmp_path / "spark", sorted(clusters, key=lambda r: r["pid"]))


def _lean_index_finds_every_pair(out: Path, clusters: list[dict]) -> None:
    """The lean pages.parquet (no features, no id or URL: clusters.parquet has them by pid)
    finds every pair the run verified: the two pages share a short key of an algorithm that
    passed them, or (a revisit) the revisit's refers-to digest has its original's digest key;
    and every page's record is located (source and offset)."""
    import pyarrow.parquet as pq

    from pagetwin.runners.spark_link import lean_digest_key, unpack_keys

    pages = pq.read_table(out / "pages.parquet").to_pylist()
    assert not {"features", "id", "url", "text", "payload_digest"} & set(pages[0])
    assert [p["pid"] for p in pages] == [r["pid"] for r in clusters]
    pid = {r["id"]: r["pid"] for r in clusters}
    row = {p["pid"]: p for p in pages}
    assert all(p["source"] and p["warc_offset"] is not None for p in pages)
    found = Counter()
    for pair in _parts(out / "pairs.jsonl"):
        a, b = row[pid[pair["a"]]], row[pid[pair["b"]]]
        keys_a, keys_b = dict(a["keys"] or ()), dict(b["keys"] or ())
        passed = [e["algorithm"] for e in pair["evidence"] if e["passed"]]
        if "revisit" in passed:
            revisit, original = (a, b) if a["kind"] == "revisit" else (b, a)
            assert lean_digest_key(revisit["refers_to_digest"]) == original["digest_key"], pair
            found["revisit"] += 1
            continue
        shared = [n for n in passed if set(unpack_keys(keys_a.get(n, b""))) & set(unpack_keys(keys_b.get(n, b"")))]
        assert shared, pair
        found["verified"] += 1
    assert found["verified"] > 50 and found["revisit"] > 0


@pytest.mark.parametrize("min_bands", [1, 2])
def test_oversized_buckets_windowed_as_local(session, tmp_path, min_bands):
    """With match.max_bucket = 3 most of the example crawl's buckets are oversized: the buckets
    streamed in order on the executors (sorted_bucket_pairs) give the local runner's windowed
    pairs, counts (candidates: with two shared bands, the oversized buckets counted by
    membership), clusters and kept pages."""
    summary = _same_as_local(
        [str(EXAMPLE)], tmp_path, match__max_bucket=3, spark__index="features", minhash__min_bands=min_bands
    )
    assert sum(summary["matching"]["oversized_buckets"].values()) > 10
    # spark.index = features: pages.parquet holds the features whole (and the job's outputs are the same)
    import pyarrow.parquet as pq

    pages = pq.read_table(tmp_path / "spark" / "pages.parquet").to_pylist()
    assert {"id", "url", "features"} <= set(pages[0]) and "keys" not in pages[0]
    assert sum(bool(p["features"]) for p in pages) > len(pages) // 2


def test_file_uris_and_a_manifest_of_them_read_through_hadoop(session, tmp_path):
    """Inputs as a Spark user gives them: a Common Crawl style manifest (warc.paths.gz) on a
    ``file:`` URI, listing its crawl relative to itself, read through Spark's Hadoop file
    systems (the code path hdfs: and s3a: take; those cannot be tested here): the local
    runner's results on the local path."""
    crawl = tmp_path / "in" / "crawl-data"
    crawl.mkdir(parents=True)
    shutil.copyfile(EXAMPLE, crawl / EXAMPLE.name)
    with gzip.open(tmp_path / "in" / "warc.paths.gz", "wt") as out:
        out.write(f"# a comment\n\ncrawl-data/{EXAMPLE.name}\n")
    manifest = (tmp_path / "in" / "warc.paths.gz").as_uri()
    summary = _same_as_local([str(crawl / EXAMPLE.name)], tmp_path, [manifest])
    assert summary["input_errors"] == [] and summary["duplicates"] > 50
    import pyarrow.parquet as pq

    sources = set(pq.read_table(tmp_path / "spark" / "pages.parquet", columns=["source"]).column("source").to_pylist())
    assert sources == {f"file:{crawl / EXAMPLE.name}"}  # the page's record is named by its URI


def test_uri_globs_folders_and_bad_uris(session, tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/x.warc.gz", "a/b/y.arc.gz", "a/b/notes.md", "a/z.jsonl"):
        (tmp_path / name).write_bytes(b"")
    base = tmp_path.as_uri()
    assert spark.uri_inputs(session, f"{base}/a/*.gz") == ([f"file:{tmp_path}/a/x.warc.gz"], [])
    assert spark.uri_inputs(session, f"{base}/a") == ([f"file:{tmp_path}/a/b/y.arc.gz", f"file:{tmp_path}/a/x.warc.gz",
                                                       f"file:{tmp_path}/a/z.jsonl"], [])  # fmt: skip
    assert spark.uri_inputs(session, f"{base}/nothing*.warc") == ([], [f"{base}/nothing*.warc: no such file or directory"])
    (tmp_path / "m.paths").write_text(f"a/x.warc.gz\n{base}/gone.warc.gz\n")
    found, problems = spark.uri_inputs(session, f"{base}/m.paths")
    assert found == [f"file:{tmp_path}/a/x.warc.gz"]
    assert problems == [f"file:{tmp_path}/gone.warc.gz: no such file (listed in file:{tmp_path}/m.paths:2)"]
    found, problems = spark.uri_inputs(session, "nosuchscheme://host/x.warc.gz")
    assert found == [] and problems[0].startswith("nosuchscheme://host/x.warc.gz: cannot be listed through Spark's Hadoop")
    # Local paths and URIs mixed, in the order given; none readable is one InputError.
    engine = spark.SparkEngine(master="local[2]")
    readable, problems = engine.readable_inputs([str(tmp_path / "a" / "z.jsonl"), f"{base}/a/x.warc.gz"], Settings())
    assert readable == [str(tmp_path / "a" / "z.jsonl"), f"file:{tmp_path}/a/x.warc.gz"] and problems == []
    with pytest.raises(InputError, match="no such file"):
        engine.readable_inputs([f"{base}/none.warc.gz", str(tmp_path / "none.warc.gz")], Settings())


def test_shared_crawls_same_clusters_and_pairs_as_local(session, tmp_path):
    """The real crawls of the shared data (revisits across two crawls, ARC, a truncated file,
    charsets), all in one run."""
    if not SHARED_WARC.is_dir():
        pytest.skip(f"{SHARED_WARC} is missing (the shared data set)")
    inputs = sorted(glob.glob(str(SHARED_WARC / "*.*rc.gz"))) + sorted(glob.glob(str(SHARED_WARC / "ukwa" / "BL-*")))
    summary = _same_as_local(inputs, tmp_path)
    assert summary["revisits"]["matched"] >= 20 and summary["duplicates"] >= 20  # not two empty results


@st.composite
def _buckets(draw):
    """Sorted (algorithm, key, pid) items of random buckets (some listing a pid twice), a
    max_bucket and which algorithms chain."""
    chain = draw(st.lists(st.booleans(), min_size=1, max_size=3))
    buckets = draw(st.dictionaries(
        st.tuples(st.integers(0, len(chain) - 1), st.integers(-(2**63), 2**63 - 1)),
        st.one_of(st.lists(st.integers(1, 60), max_size=12), st.lists(st.integers(1, 600), min_size=40, max_size=400)),
        max_size=6,
    ))  # fmt: skip
    items = sorted(((alg, key, pid), None) for (alg, key), pids in buckets.items() for pid in pids)
    return items, buckets, draw(st.integers(1, 50)), chain


@settings(max_examples=150, deadline=None)
@given(_buckets())
def test_sorted_bucket_pairs_are_bucket_pairs(case):
    """The streamed pairing gives match.bucket_pairs' pairs of each bucket (its pids as a
    sorted set) and counts its oversized buckets, giant and windowed ones included."""
    from pagetwin.match import bucket_pairs
    from pagetwin.runners.spark_link import sorted_bucket_pairs

    items, buckets, max_bucket, chain = case
    listed = [not c for c in chain]
    got = list(sorted_bucket_pairs(iter(items), max_bucket, chain, listed))
    expected, windowed, over, members = [], [], Counter(), []
    for (alg, key), pids in buckets.items():
        pids = sorted(set(pids))
        oversized = not chain[alg] and len(pids) > max_bucket
        (windowed if oversized else expected).extend((alg, a, b) for a, b in bucket_pairs(pids, max_bucket, chain[alg]))
        over[alg] += int(oversized)
        members.extend((alg, pid, key) for pid in pids if oversized)
    assert sorted(p for tag, p in got if tag == 0) == sorted(expected)
    assert sorted(p for tag, p in got if tag == 2) == sorted(windowed)
    assert Counter(a for tag, a in got if tag == 1) == +over
    assert sorted(p for tag, p in got if tag == 3) == sorted(members)
    assert not any(tag == 3 for tag, _ in sorted_bucket_pairs(iter(items), max_bucket, chain))  # listed for none


class _Keys:
    """An algorithm as match.distinct_pair_arrays sees it."""

    def __init__(self, name: str, chain: bool, shared: int) -> None:
        self.name, self.keys_are_proof, self.min_shared_keys = name, chain, shared


def _case(buckets: dict, max_bucket: int, chain: list[bool]) -> tuple:
    items = sorted(((alg, key, pid), None) for (alg, key), pids in buckets.items() for pid in pids)
    return items, buckets, max_bucket, chain


# Two oversized buckets (1-40, windowed by 16) and a small one (1, 2, 39): 1-2 and 1-39 share
# three buckets (1-39 two by membership only), 3-4 two (windowed in both), 1-30 two but no
# bucket pairs them.
_GIANTS = {(0, 1): list(range(1, 41)), (0, 2): list(range(1, 41)), (0, 3): [1, 2, 39]}


@settings(max_examples=25, deadline=None)
@given(_buckets(), st.lists(st.integers(1, 3), min_size=3, max_size=3))
@example(_case(_GIANTS, 10, [False]), [2, 1, 1])
@example(_case(_GIANTS, 10, [False]), [3, 1, 1])
def test_candidates_on_spark_are_the_local_ones(session, case, shared):
    """The pairs the executors verify (_candidates over the streamed buckets) are the local
    runner's, match.distinct_pair_arrays', for pairs that must share 1-3 keys: counted over the
    buckets that pair them and the oversized buckets holding both, windowed and giant ones
    included."""
    from pagetwin.match import MatchStats, distinct_pairs, min_shared_keys
    from pagetwin.runners.spark_link import _candidates, sorted_bucket_pairs

    items, buckets, max_bucket, chain = case
    algorithms = [_Keys(str(i), c, k) for i, (c, k) in enumerate(zip(chain, shared))]
    need = [min_shared_keys(a) for a in algorithms]
    streamed = list(sorted_bucket_pairs(iter(items), max_bucket, chain, [k > 1 for k in need]))
    over = {a for tag, a in streamed if tag == 1}
    got = sorted(_candidates(session.parallelize(streamed, 3), need, over, 2).collect())
    expected = []
    for alg, algorithm in enumerate(algorithms):
        mine = [sorted(set(pids)) for (i, _), pids in sorted(buckets.items()) if i == alg and pids]
        expected += [(alg, a, b) for a, b in distinct_pairs(mine, max_bucket, algorithm, MatchStats())]
    assert got == sorted(expected)


def _union_find(edges):
    uf = UnionFind()
    for a, b in edges:
        uf.union(a, b)
    return {x: min(g) for g in uf.groups().values() for x in g}


def test_components_through_spark_equal_union_find(session):
    from pagetwin.runners.spark_link import connected_components

    rnd = random.Random(18)
    chain = list(range(300))
    rnd.shuffle(chain)
    graphs = {
        "chain": list(zip(chain, chain[1:])),
        "giant and small": [(i, rnd.randrange(i)) for i in range(1, 200)] + [(1000 + 2 * i, 1001 + 2 * i) for i in range(20)],
        "random": [(rnd.randrange(120), rnd.randrange(120)) for _ in range(100)],
    }
    for name, edges in graphs.items():
        labels, rounds = connected_components(session.parallelize(edges, 3), 2)
        expected = {k: v for k, v in _union_find(edges).items() if any(k in e and e[0] != e[1] for e in edges)}
        assert dict(labels.collect()) == expected, name
        assert rounds >= 1


def test_executors_link_needs_the_spark_runner_and_new_outputs(tmp_path):
    with pytest.raises(ConfigError, match="spark.link = executors needs --runner spark"):
        dedup([str(EXAMPLE)], tmp_path / "o", _settings("executors"))
    fake = type("Engine", (), {"pass2_rdd": None, "close": lambda self: None})()
    with pytest.raises(ConfigError, match="--index needs spark.link = driver"):
        dedup([str(EXAMPLE)], tmp_path / "o", _settings("executors"), index_path=tmp_path / "i.sqlite", engine=fake)
    with pytest.raises(ConfigError, match="--add with spark.link = executors is not supported: that run keeps no index"):
        dedup([str(EXAMPLE)], tmp_path / "o", _settings("executors"), engine=fake, mode="add")
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "clusters.jsonl").write_text("")
    with pytest.raises(ConfigError, match="earlier run"):
        dedup([str(EXAMPLE)], tmp_path / "o", _settings("executors"), engine=fake)


def test_add_with_the_executors_link_is_refused_in_one_line(tmp_path, capsys):
    """``pagetwin dedup --add`` with spark.link = executors: exit 2 and one line saying why and
    what to use, before Spark starts or any output is written."""
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pagetwin[spark]')")
    if spark._java() is None:
        pytest.skip("Java is not installed (Spark needs Java 17)")
    from pagetwin.cli import main

    out = tmp_path / "o"
    args = ["dedup", str(EXAMPLE), "--out", str(out), "--runner", "spark", "--set", "spark.link=executors", "--add"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--add with spark.link = executors is not supported" in err
    assert "spark.link = driver" in err and not out.exists()


def _sites_crawl(path: Path, sites: list[int], reposted: int | None = None) -> None:
    """A WARC of small sites (site k: 3-5 pages of tests.fixtures.sites' templates, under
    https://site<k>.example/), each site's first article reposted on the next site of the
    file, and ``reposted``'s first article on its first site: clusters within and across files."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from tests.fixtures.sites import site_pages

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for j, k in enumerate(sites):
            pages = site_pages(3 + k % 3, seed=k, templates="ab"[: 1 + k % 2])
            before = sites[j - 1] if j else reposted
            pages += site_pages(1, seed=before) if before is not None else []
            for n, (_, html, _) in enumerate(pages):
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
                record = writer.create_warc_record(f"https://site{k}.example/{n}.html", "response",
                                                   payload=io.BytesIO(html.encode()), http_headers=http)  # fmt: skip
                writer.write_record(record)


def test_each_partition_gets_its_own_sites_templates_and_the_local_runners_outputs(session, tmp_path):
    """Three WARC files (three partitions) of different sites but one, which spans two files:
    pass 1 leaves the site templates on the executors (the driver's model has none), each of
    pass 2's partitions is given the blobs of its own pages' sites, a strict subset of the
    crawl's, byte for byte the local model's; and the outputs are the local runner's."""
    from pagetwin.html.templates import SiteTemplates
    from pagetwin.learned import Learning
    from pagetwin.runners.spark_learn import SiteModels

    files = [tmp_path / f"part{i}.warc.gz" for i in range(3)]
    plan = [[0, 1, 2, 3], [4, 3, 5, 6], [7, 8, 9]]  # site 3 is in the first two files
    for i, (path, sites) in enumerate(zip(files, plan)):
        _sites_crawl(path, sites, reposted=plan[i - 1][0] if i else None)
    inputs = [str(f) for f in files]
    summary = _same_as_local(inputs, tmp_path)
    assert summary["duplicates"] >= 9  # the reposts, within files and across them

    s = _settings("executors")
    engine = spark.SparkEngine(master="local[2]")
    models = engine.learn_apart(inputs, s, Learning.for_dedup(s))
    try:
        assert isinstance(models, SiteModels) and models.rest.templates is None and models.count == 10
        kept = engine._kept
        side = spark._site_side(kept.small, models, kept.rdd.getNumPartitions(), 2)
        given = [blobs for blobs, _ in side.mapPartitions(lambda items: [next(items)]).collect()]
        local = SiteTemplates.from_bytes(dict(_models(tmp_path / "local" / "index.sqlite"))["site_templates"], s.extract)
        wanted = [sorted(f"site{k}.example" for k in sites) for sites in plan]
        assert [sorted(blobs) for blobs in given] == wanted
        for blobs in given:
            assert blobs == dict(local.site_blobs(sorted(blobs)))
        # zip pairs the blob dict with each partition's first kept item, one item to one, and
        # without pickling the kept pages again (the same serializer on both sides)
        assert kept.rdd._jrdd_deserializer == side._jrdd_deserializer
        assert kept.rdd.zip(side).count() == kept.rdd.count()
    finally:
        models.unpersist()
        engine._drop_kept()


def _models(index: Path) -> list[tuple[str, bytes]]:
    import sqlite3

    db = sqlite3.connect(index)
    try:
        return list(db.execute("SELECT name, data FROM models"))
    finally:
        db.close()


def _photo(seed: int, size: tuple[int, int], fmt: str) -> bytes:
    """Photograph ``seed`` (random blocks, so its renditions share a perceptual hash) at ``size``."""
    import io

    import numpy as np
    from PIL import Image

    pixels = (np.random.default_rng(seed).random((12, 16, 3)) * 255).astype("uint8")
    buf = io.BytesIO()
    Image.fromarray(pixels).resize(size, Image.Resampling.BILINEAR).save(buf, fmt, **({"quality": 80} if fmt == "JPEG" else {}))
    return buf.getvalue()


def _image_crawl(files: list[Path]) -> None:
    """Three WARC files of image galleries whose image records are mostly in other files: five
    albums of five photographs, each a gallery on a.example (file 0: JPEG URLs with a size and a
    cache buster, folded by the URL's normal form) and a slideshow on b.example (file 1: PNG
    renditions under other URLs, lazy data-src and srcset, a spacer as src), so gallery and
    slideshow are one only by their perceptual hashes. Records: a.example's albums 0-2 in file
    1, 3-4 in file 2; b.example's albums 0-2 in file 2, 3-4 in file 0; album 4's first slide
    recorded again in file 2 as another photograph (the later record wins: album 4's pair has 4
    of 6 images alike, under images.threshold). A c.example gallery in file 2 shows album 1 and
    two unrecorded images (by URL), text pages and an image-free page in every file."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from tests.fixtures.news import article, page

    def gallery(title: str, imgs: list[str]) -> bytes:
        main = "".join(f"<figure>{img}<figcaption>Plate {k + 1}</figcaption></figure>" for k, img in enumerate(imgs))
        html = page(title, [], site="Photos").replace("<p class='date'>", f"<div class='gallery'>{main}</div><p class='date'>")
        return html.encode()

    def a_img(album: int, k: int) -> str:
        return f'<img src="/p/{album}-{k}-800x600.jpg?v=2" width="800" height="600" alt="">'

    def b_img(album: int, k: int, host: str = "") -> str:
        if k % 2:
            return f'<img src="/spacer.gif" data-src="{host}/s/{album}/{k}.png" alt="">'
        small = f"{host}/s/{album}/{k}-small.png"
        return f'<img srcset="{small} 300w, {host}/s/{album}/{k}.png 1200w" src="{small}" alt="">'

    records: list[list[tuple[str, bytes, str]]] = [[], [], []]
    html_type = "text/html; charset=utf-8"
    for album in range(5):
        records[0].append((f"https://a.example/g/{album}", gallery(f"Album {album}", [a_img(album, k) for k in range(5)]), html_type))
        records[1].append((f"https://b.example/show/{album}", gallery(f"Slideshow {album}", [b_img(album, k) for k in range(5)]), html_type))
        for k in range(5):
            photo = 10 * album + k
            records[1 if album < 3 else 2].append((f"https://a.example/p/{album}-{k}.jpg", _photo(photo, (320, 240), "JPEG"), "image/jpeg"))
            records[2 if album < 3 else 0].append((f"https://b.example/s/{album}/{k}.png", _photo(photo, (160, 120), "PNG"), "image/png"))
    records[2].append(("https://b.example/s/4/0.png", _photo(99, (160, 120), "PNG"), "image/png"))
    mixed = [b_img(1, k, "https://b.example") for k in range(5)] + ['<img src="https://c.example/own/1.jpg" alt="">', '<img src="/own/2.jpg" alt="">']
    records[2].append(("https://c.example/mixed", gallery("Mixed", mixed), html_type))
    for i, part in enumerate(records):
        for n in range(3):
            text = page(f"Story {i}-{n}", article(500 + 10 * i + n), site="Photos").encode()
            part.append((f"https://{'abc'[n]}.example/story/{i}-{n}", text, html_type))
    for path, part in zip(files, records):
        with open(path, "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            for url, body, ctype in part:
                http = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))


def test_image_hashes_stay_on_the_executors_and_the_outputs_are_the_local_runners(session, tmp_path):
    """The image crawl above (records in other files than the pages that show them): the
    driver's model holds no image hash, each of pass 2's partitions is given the hashes of the
    URLs its own pages may look up (a strict subset of the crawl's, the local model's values,
    the later record's for a URL recorded twice), models.parquet has a row per image URL and
    reads back as the local model; clusters, pairs and summaries are the local runner's."""
    pytest.importorskip("PIL", reason="Pillow is not installed (extra 'images')")
    from pagetwin.explain import explain
    from pagetwin.learned import Learning
    from pagetwin.runners.spark_output import IMAGES, SparkOutput

    files = [tmp_path / f"part{i}.warc.gz" for i in range(3)]
    _image_crawl(files)
    inputs = [str(f) for f in files]
    algorithms = "exact,minhash,images"
    summary = _same_as_local(inputs, tmp_path, match__algorithms=algorithms)
    pairs = {frozenset((p["url_a"], p["url_b"])): p for p in _parts(tmp_path / "spark" / "pairs.jsonl")}
    by_images = [p for p in pairs.values() if any(e["algorithm"] == "images" for e in p["evidence"])]
    assert len(by_images) >= 4 and summary["duplicates"] >= 4  # the galleries found by phash across files
    assert frozenset(("https://a.example/g/0", "https://b.example/show/0")) in pairs
    assert frozenset(("https://a.example/g/4", "https://b.example/show/4")) not in pairs  # the later record won

    local = json.loads(dict(_models(tmp_path / "local" / "index.sqlite"))["image_hashes"])
    assert len(local) == 50
    s = _settings("executors", match__algorithms=algorithms)
    out = SparkOutput(str(tmp_path / "spark"))
    assert out.learned(s).image_hashes == local and IMAGES not in out.parts  # no one cell holds them all
    # explain reads only the rows of the URLs its pages may look up, and says what it says locally
    cut = {u for u in local if u.startswith("https://b.example/s/1/")} | {"https://c.example/own/1.jpg"}
    assert out.learned(s, cut).image_hashes == {u: local[u] for u in cut & local.keys()}
    assert out.learned(s, set()).image_hashes == {}
    pair = ("https://a.example/g/0", "https://b.example/show/0")
    ours, theirs = explain(str(tmp_path / "spark"), *pair), explain(str(tmp_path / "local"), *pair)
    assert ours["same_cluster"] and ours["edge"] == theirs["edge"] and ours["algorithms"] == theirs["algorithms"]
    assert [a["passed"] for a in ours["algorithms"] if a["algorithm"] == "images"] == [True]
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "spark" / "models.parquet").to_pylist()
    assert sorted(r["site"] for r in rows if r["name"] == IMAGES) == sorted(local)

    engine = spark.SparkEngine(master="local[2]")
    models = engine.learn_apart(inputs, s, Learning.for_dedup(s))
    try:
        assert models.rest.image_hashes == {} and models.images is not None
        kept = engine._kept
        side = spark._site_side(kept.small, models, kept.rdd.getNumPartitions(), 2)
        given = [images for _, images in side.mapPartitions(lambda items: [next(items)]).collect()]
        a, b = "https://a.example/p/", "https://b.example/s/"
        assert sorted(given[0]) == sorted(u for u in local if u.startswith(a))
        assert sorted(given[1]) == sorted(u for u in local if u.startswith(b))
        assert sorted(given[2]) == sorted(u for u in local if u.startswith(b + "1/"))  # c.example's mix
        assert all(images == {u: local[u] for u in images} for images in given)
        assert kept.rdd.zip(side).count() == kept.rdd.count()
    finally:
        models.unpersist()
        engine._drop_kept()


@settings(max_examples=50, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 4), st.integers(1, 2**40)), max_size=400))
def test_member_filter_keeps_every_member_and_drops_most_others(members):
    """The Bloom filter the membership join is cut down by (spark_link.member_filter): a member
    is never dropped (the candidates would then differ from the local runner's), and at 8 bits
    a member most other pages are."""
    from pagetwin.runners import spark_link

    bits = 1 << 13
    bloom = (bits, next(spark_link._filter_of(bits, iter(sorted(members)))).tobytes())
    assert all(spark_link.is_member(bloom, alg, pid) for alg, pid in members)
    others = [(alg, -pid) for alg, pid in members] + [(alg + 5, pid) for alg, pid in members]
    assert sum(spark_link.is_member(bloom, alg, pid) for alg, pid in others) <= max(3, len(others) // 20)
