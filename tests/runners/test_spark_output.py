"""runners/spark_output.py and ``pagetwin explain`` on a run with ``spark.link = executors``:
the run writes pass 1's models (the local index's, byte for byte) as models.parquet, and
explain on its lean output (no text, no features) says what explain on the local runner's lean
index of the same crawl says, through the CLI: verdict, scores, evidence, shared keys and
passages, for a verified pair and a pair of different clusters. A missing or damaged source,
a missing models.parquet or an output on another machine's file system is a clear message,
never a traceback."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pagetwin.cli import main
from pagetwin.learned import PART_NAMES
from pagetwin.runners import spark
from pagetwin.runners.spark_output import MODELS, SparkOutput, local_path, output_folder

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "debian-docs.warc.gz"


def _spark_ready() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pagetwin[spark]')")
    if spark._java() is None:
        pytest.skip("Java is not installed (Spark needs Java 17)")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The example crawl through the local runner (a lean index) and through Spark with the
    link step on the executors, its outputs under spark.output (another folder than --out)."""
    _spark_ready()
    root = tmp_path_factory.mktemp("spark_output")
    assert main(["dedup", str(EXAMPLE), "--out", str(root / "local"), "--workers", "2", "--set", "index.store_text=false"]) == 0
    assert main(["dedup", str(EXAMPLE), "--out", str(root / "out"), "--runner", "spark", "--spark-master", "local[2]",
                 "--workers", "2", "--set", "spark.link=executors", "--set", f"spark.output={(root / 'parts').as_uri()}"]) == 0  # fmt: skip
    return root


def _explained(capsys, where: Path | str, a: str, b: str, *extra: str) -> tuple[int, str, str]:
    code = main(["explain", str(where), a, b, *extra])
    got = capsys.readouterr()
    return code, got.out, got.err


def _pairs(root: Path) -> tuple[dict, tuple[str, str]]:
    """A verified pair of the local run, and two pages of different clusters without an edge."""
    pairs = [json.loads(line) for line in (root / "local" / "pairs.jsonl").read_text().splitlines()]
    verified = next(p for p in pairs if p["kind"] == "duplicate")
    rows = [json.loads(line) for line in (root / "local" / "clusters.jsonl").read_text().splitlines()]
    linked = {(p["a"], p["b"]) for p in pairs} | {(p["b"], p["a"]) for p in pairs}
    a = next(r for r in rows if r["cluster_size"] > 2)
    b = next(r for r in rows if r["cluster"] != a["cluster"] and r["cluster_size"] > 1 and (a["id"], r["id"]) not in linked)
    return verified, (a["id"], b["url"])


def _stores_the_local_runners_models(spark_out: Path, index: Path) -> int:
    """models.parquet holds the local index's models: each part but the site templates byte
    for byte, the templates a row per site whose blob is the local model's site's, byte for
    byte (SiteTemplates.site_blobs), and a model read back from it decides as the local one;
    the number of sites."""
    import pyarrow.parquet as pq

    from pagetwin.config import Settings
    from pagetwin.html.templates import SiteTemplates

    out = SparkOutput(str(spark_out))
    db = sqlite3.connect(index)
    local = dict(db.execute("SELECT name, data FROM models"))
    settings = json.loads(db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()[0])
    db.close()
    assert {n for n in PART_NAMES if n in local} == {n for n in PART_NAMES if n in out.parts} and "site_templates" in local
    for name in PART_NAMES:
        if name != "site_templates":
            assert out.parts.get(name) == local.get(name), name
    assert json.loads(out.parts["settings"])["match"] == settings["match"]
    model = SiteTemplates.from_bytes(local["site_templates"])
    rows = pq.read_table(spark_out / MODELS).to_pylist()
    per_site = [(r["site"], r["data"]) for r in rows if r["name"] == "site_templates" and r["site"] is not None]
    assert len(per_site) == len({site for site, _ in per_site}) == len(model.sites_)  # one row a site
    assert dict(per_site) == dict(model.site_blobs())
    assert len(rows) == len(per_site) + len(out.parts)  # and a row per other part, no more
    learned = out.learned(Settings.from_dict(settings))
    assert learned.templates.sites_.read() == []  # nothing fetched until a site is asked for
    assert learned.templates.to_bytes() == local["site_templates"]
    return len(per_site)


def test_the_run_stores_the_local_runners_models(runs, tmp_path):
    _stores_the_local_runners_models(runs / "parts", runs / "local" / "index.sqlite")
    # An output of before the row per site (rows (name, data), the templates one blob) reads as it did.
    import pyarrow
    import pyarrow.parquet as pq

    from pagetwin.config import Settings

    old = tmp_path / "old"
    shutil.copytree(runs / "parts", old, ignore=shutil.ignore_patterns(MODELS))
    db = sqlite3.connect(runs / "local" / "index.sqlite")
    rows = sorted(db.execute("SELECT name, data FROM models")) + [("settings", SparkOutput(str(runs / "parts")).parts["settings"])]
    db.close()
    (old / MODELS).mkdir()
    pq.write_table(pyarrow.table({"name": [r[0] for r in rows], "data": [r[1] for r in rows]}), old / MODELS / "part-0.parquet")
    back = SparkOutput(str(old))
    assert back.learned(back.settings()).templates.to_bytes() == dict(rows)["site_templates"]
    summary = json.loads((runs / "out" / "summary.json").read_text())
    assert summary["outputs"][MODELS] == (runs / "parts").as_uri() + "/" + MODELS


def _many_sites_crawl(path: Path, sites: int) -> None:
    """A WARC of ``sites`` small sites (2-5 pages each of tests.fixtures.sites' templates), each
    site's first article also reposted on the next site: clusters across sites."""
    import io

    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    from tests.fixtures.sites import site_pages

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for k in range(sites):
            pages = site_pages(2 + k % 4, seed=k, templates="ab"[: 1 + k % 2])
            pages += [(u, h, a) for u, h, a in site_pages(1, seed=k - 1)] if k else []  # the last site's first page
            for n, (url, html, _) in enumerate(pages):
                url = f"https://site{k}.example/{n}.html"
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(html.encode()), http_headers=http))


def test_many_small_sites_a_row_each_and_the_local_runners_clusters(tmp_path, capsys):
    """A crawl of 60 small sites: the Spark run's clusters are the local runner's line for
    line, models.parquet has one row per site (the local model's sites, byte for byte), and
    explain on it (which fetches the two pages' sites alone) says what the local lean index says."""
    _spark_ready()
    crawl = tmp_path / "sites.warc.gz"
    _many_sites_crawl(crawl, 60)
    assert main(["dedup", str(crawl), "--out", str(tmp_path / "local"), "--workers", "2", "--set", "index.store_text=false"]) == 0
    assert main(["dedup", str(crawl), "--out", str(tmp_path / "out"), "--runner", "spark", "--spark-master", "local[2]",
                 "--workers", "2", "--set", "spark.link=executors", "--set", f"spark.output={tmp_path / 'parts'}"]) == 0  # fmt: skip
    local = (tmp_path / "local" / "clusters.jsonl").read_text().splitlines()
    ours = [line for f in sorted((tmp_path / "parts" / "clusters.jsonl").glob("part-*")) for line in f.read_text().splitlines()]
    assert ours == local and len(local) == sum(2 + k % 4 + (k > 0) for k in range(60))
    assert len({json.loads(line)["cluster"] for line in local}) < len(local) - 50  # the reposts are clustered
    assert _stores_the_local_runners_models(tmp_path / "parts", tmp_path / "local" / "index.sqlite") == 60
    capsys.readouterr()
    pairs = [json.loads(line) for line in (tmp_path / "local" / "pairs.jsonl").read_text().splitlines()]
    verified = next(p for p in pairs if p["kind"] == "duplicate")
    results = [_explained(capsys, where, verified["a"], verified["b"], "--json") for where in (tmp_path / "local", tmp_path / "parts")]
    assert results[0][0] == results[1][0] == 0
    expected, got = (json.loads(out) for _, out, _ in results)
    assert got == expected, (got, expected)


def test_explain_on_the_spark_output_says_what_it_says_on_the_local_lean_index(runs, capsys):
    verified, (a, b) = _pairs(runs)
    for pair in ((verified["a"], verified["b"]), (a, b)):
        code, local, _ = _explained(capsys, runs / "local", *pair, "--json")
        assert code == 0
        local = json.loads(local)
        # the --out folder (its summary names the outputs), the outputs' folder, its file: URI
        for where in (runs / "out", runs / "parts", (runs / "parts").as_uri()):
            code, ours, err = _explained(capsys, where, *pair, "--json")
            assert code == 0 and not err
            ours = json.loads(ours)
            assert ours == local
            assert ours["a"]["text_from"] == ours["b"]["text_from"] == "source" and ours["a"]["text"]
        assert _explained(capsys, runs / "parts", *pair) == _explained(capsys, runs / "local", *pair)
    # The verified pair: its edge and evidence are pairs.jsonl's, and an algorithm recomputed passes.
    ours = json.loads(_explained(capsys, runs / "out", verified["a"], verified["b"], "--json")[1])
    assert ours["same_cluster"] and ours["edge"] == {"kind": verified["kind"], "evidence": verified["evidence"]}
    passed = {e["algorithm"]: e["score"] for e in verified["evidence"] if e["passed"]}
    assert passed and all(round(r["score"], 6) == passed[r["algorithm"]] for r in ours["algorithms"] if r["algorithm"] in passed)
    assert any(r["shared_keys"] for r in ours["algorithms"] if r["algorithm"] in passed)
    # The other pair: different clusters, no edge, no algorithm passing.
    ours = json.loads(_explained(capsys, runs / "out", a, b, "--json")[1])
    assert not ours["same_cluster"] and ours["edge"] is None and not any(r["passed"] for r in ours["algorithms"])


def test_a_url_several_pages_share_is_the_local_message(runs, capsys):
    rows = [json.loads(line) for line in (runs / "local" / "clusters.jsonl").read_text().splitlines()]
    urls = [r["url"] for r in rows]
    shared = next(u for u in urls if urls.count(u) > 1)
    local = _explained(capsys, runs / "local", shared, rows[0]["id"])
    assert local[0] == 2 and "pages have the URL" in local[2]
    assert _explained(capsys, runs / "out", shared, rows[0]["id"]) == local
    assert _explained(capsys, runs / "out", rows[0]["id"], shared) == _explained(capsys, runs / "local", rows[0]["id"], shared)


def test_explain_on_a_features_index_too(runs, tmp_path, capsys):
    """With ``spark.index = features`` pages.parquet keeps the payload digest and the features
    whole: the record read back is checked against them instead of the shortened ones."""
    assert main(["dedup", str(EXAMPLE), "--out", str(tmp_path / "out"), "--runner", "spark", "--spark-master", "local[2]",
                 "--workers", "2", "--set", "spark.link=executors", "--set", "spark.index=features"]) == 0  # fmt: skip
    capsys.readouterr()
    verified, other = _pairs(runs)
    for pair in ((verified["a"], verified["b"]), other):
        code, ours, err = _explained(capsys, tmp_path / "out", *pair, "--json")
        assert code == 0 and not err
        ours = json.loads(ours)
        assert ours == json.loads(_explained(capsys, runs / "local", *pair, "--json")[1])
        assert ours["a"]["text_problem"] is None and ours["b"]["text_problem"] is None and ours["a"]["text"]


def _moved(runs: Path, tmp_path: Path, crawl: Path) -> Path:
    """A copy of the Spark outputs whose pages.parquet names ``crawl`` as every page's source."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts = tmp_path / "parts"
    shutil.copytree(runs / "parts", parts)
    for f in sorted((parts / "pages.parquet").glob("*.parquet")):
        table = pq.read_table(f)
        column = table.schema.get_field_index("source")
        table = table.set_column(column, "source", pc.if_else(pc.is_valid(table["source"]), str(crawl), None))
        pq.write_table(table, f)
    return parts


def test_a_missing_or_damaged_source_is_said_so(runs, tmp_path, capsys):
    verified, _ = _pairs(runs)
    pair = (verified["a"], verified["b"])
    crawl = tmp_path / "crawl.warc.gz"
    parts = _moved(runs, tmp_path, crawl)
    shutil.copy(EXAMPLE, crawl)
    code, text, err = _explained(capsys, parts, *pair)  # the same crawl elsewhere: explained as before
    assert code == 0 and "text: none shown" not in text and not err

    crawl.unlink()
    code, text, err = _explained(capsys, parts, *pair)
    assert code == 0 and not err and "Traceback" not in text
    assert text.count("text: none shown, its source") == 2 and "is gone: moved or deleted" in text
    d = json.loads(_explained(capsys, parts, *pair, "--json")[1])
    assert d["edge"]["evidence"] == verified["evidence"]  # what the run decided is still shown
    assert all(r["score"] is None and r["detail"] == {"no_features": list(pair)} for r in d["algorithms"])

    data = EXAMPLE.read_bytes()
    damaged = bytearray(data)
    damaged[len(data) // 4 : len(data) // 4 * 3] = b"\0" * (len(data) // 4 * 3 - len(data) // 4)
    for broken in (bytes(damaged), data[: len(data) // 3], b"not a WARC file at all\n"):
        crawl.write_bytes(broken)
        code, text, err = _explained(capsys, parts, *pair, "--json")
        assert code == 0 and not err
        d = json.loads(text)
        for side in ("a", "b"):
            problem = d[side]["text_problem"]
            assert problem is None or ("no longer in" in problem or "cannot be read" in problem or "changed" in problem
                                       or "not the one fingerprinted" in problem), problem  # fmt: skip
        assert d["a"]["text_problem"] or d["b"]["text_problem"]


def test_an_output_that_cannot_be_explained_is_a_message(runs, tmp_path, capsys):
    verified, _ = _pairs(runs)
    pair = (verified["a"], verified["b"])
    parts = tmp_path / "parts"
    shutil.copytree(runs / "parts", parts)
    shutil.rmtree(parts / MODELS)
    code, text, err = _explained(capsys, parts, *pair)
    assert code == 1 and not text and f"holds no {MODELS}" in err and "Traceback" not in err
    shutil.rmtree(parts / "pairs.parquet")
    code, _, err = _explained(capsys, parts, *pair)
    assert code == 1 and "not a complete Spark run's output: pairs.parquet, models.parquet missing" in err
    code, _, err = _explained(capsys, "hdfs://namenode/dedup/run-1", *pair)
    assert code == 1 and "not from hdfs: copy the folder here first" in err
    code, _, err = _explained(capsys, runs / "out", "no-such-page", pair[1])
    assert code == 1 and "no page with id or URL 'no-such-page'" in err


def test_where_the_outputs_are(tmp_path):
    assert local_path("file:///a/b%20c") == "/a/b c" and local_path("rel/x") == "rel/x"
    assert local_path("s3a://bucket/x") is None and local_path("file://otherhost/x") is None
    assert output_folder(tmp_path) is None  # nothing there
    (tmp_path / "summary.json").write_text(json.dumps({"link": "driver"}))
    assert output_folder(tmp_path) is None  # a local run's
    for name in ("pages.parquet", "clusters.parquet"):
        (tmp_path / "parts" / name).mkdir(parents=True)
    (tmp_path / "summary.json").write_text(json.dumps({"link": "executors", "outputs": {
        "pages.parquet": (tmp_path / "parts").as_uri() + "/pages.parquet"}}))  # fmt: skip
    assert output_folder(tmp_path) == str(tmp_path / "parts") == output_folder((tmp_path / "parts").as_uri())
