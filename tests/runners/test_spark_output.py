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


def test_the_run_stores_the_local_runners_models(runs):
    out = SparkOutput(str(runs / "parts"))
    db = sqlite3.connect(runs / "local" / "index.sqlite")
    local = dict(db.execute("SELECT name, data FROM models"))
    settings = json.loads(db.execute("SELECT value FROM meta WHERE key='settings'").fetchone()[0])
    db.close()
    assert {n for n in PART_NAMES if n in local} == {n for n in PART_NAMES if n in out.parts} and "site_templates" in local
    for name in PART_NAMES:
        assert out.parts.get(name) == local.get(name), name
    assert json.loads(out.parts["settings"])["match"] == settings["match"]
    summary = json.loads((runs / "out" / "summary.json").read_text())
    assert summary["outputs"][MODELS] == (runs / "parts").as_uri() + "/" + MODELS


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
