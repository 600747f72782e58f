"""dedup (issue 13, item 4): a killed or failed run leaves the index at its last checkpoint; the
next run with the same inputs resumes it (pass 1 skipped) and gives a clean run's outputs; a run
with other inputs undoes it first."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pagetwin.app import dedup, stored_model
from pagetwin.config import Settings
from pagetwin.index.sqlite import Index
from pagetwin.runners.local import LocalEngine
from tests.fixtures.sites import site_pages

EVERY = 50  # run.checkpoint_pages in these tests


def _write(path: Path, pages: list[tuple[str, str]]) -> str:
    with path.open("w") as fh:
        for url, html in pages:
            fh.write(json.dumps({"url": url, "html": html}) + "\n")
    return str(path)


def _crawl(path: Path, n: int, seed: int) -> str:
    """``n`` pages of one site, every fifth copied under another URL (clusters and pairs)."""
    pages = [(url, html) for url, html, _ in site_pages(n, seed=seed, templates="ab")]
    copies = [(url.replace(".html", "-copy.html"), html) for url, html in pages[::5]]
    return _write(path, pages + copies)


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    """Three inputs: A (earlier runs), B (a few hundred pages, the long run), C (other inputs)."""
    d = tmp_path_factory.mktemp("crawls")
    return _crawl(d / "a.jsonl", 40, seed=1), _crawl(d / "b.jsonl", 250, seed=2), _crawl(d / "c.jsonl", 60, seed=3)


def _settings(workers: int = 1, every: int = EVERY) -> Settings:
    s = Settings()
    s.run.workers = workers
    s.run.progress = False
    s.run.checkpoint_pages = every
    return s


def _fail_storing(monkeypatch, after: int, message: str):
    """Pass 2 stores ``after`` pages, then raises RuntimeError(message); the real store_page
    is returned (to put back)."""
    import pagetwin.app as app

    real, stored = app._store, []

    def failing(index, result):
        if len(stored) == after:
            raise RuntimeError(message)
        stored.append(1)
        real(index, result)

    monkeypatch.setattr(app, "_store", failing)
    return real


def _outputs(out: Path) -> tuple[bytes, bytes]:
    return (out / "clusters.jsonl").read_bytes(), (out / "pairs.jsonl").read_bytes()


def _index_state(out: Path, settings: Settings) -> tuple:
    """What the index holds: its pages (without text), the model's counts, the run counter."""
    index = Index.open_readonly(out / "index.sqlite")
    try:
        pages = list(index.db.execute("SELECT pid, id, source, seen_run FROM pages ORDER BY pid"))
        keys = index.db.execute("SELECT COUNT(*) FROM keys").fetchone()[0]
        learned = stored_model(index, settings)
        sites = {s: c.pages for s, c in learned.templates.sites_.items()} if learned is not None else None
        runs = index.db.execute("SELECT value FROM meta WHERE key='runs'").fetchone()
        return pages, keys, sites, runs
    finally:
        index.db.close()


def _checkpoint(out: Path):
    index = Index.open_readonly(out / "index.sqlite")
    try:
        return index.checkpoint()
    finally:
        index.db.close()


# A dedup run in another process that kills itself (SIGKILL: nothing is cleaned up) when it has
# stored KILL_AT pages; or stores a page every DELAY seconds, for a kill from outside.
_CHILD = """
import json, os, signal, sys, time
import pagetwin.app as app
from pagetwin.config import Settings

args = json.loads(sys.argv[1])
real, stored = app._store, [0]

def store(index, result):
    real(index, result)
    stored[0] += 1
    if stored[0] == args["kill_at"]:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(args["delay"])

app._store = store
if args["cli"]:
    from pagetwin.cli import main
    sys.exit(main(args["cli"]))
s = Settings()
s.run.workers, s.run.progress, s.run.checkpoint_pages = args["workers"], False, args["every"]
app.dedup(args["inputs"], args["out"], s, mode=args["mode"])
"""


def _child(inputs=(), out="", *, kill_at=0, delay=0.0, workers=1, every=EVERY, mode="new", cli=None) -> subprocess.Popen:
    spec = {"inputs": list(inputs), "out": str(out), "kill_at": kill_at, "delay": delay, "workers": workers,
            "every": every, "mode": mode, "cli": cli}  # fmt: skip
    return subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(spec)], stderr=subprocess.PIPE)


def _killed_run(inputs, out, kill_at, **kwargs) -> None:
    proc = _child(inputs, out, kill_at=kill_at, **kwargs)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err.decode()


@pytest.fixture
def no_pass_1(monkeypatch):
    """Called, makes pass 1 fail if it runs (until monkeypatch.undo())."""

    def learn(self, *args, **kwargs):
        raise AssertionError("pass 1 ran")

    return lambda: monkeypatch.setattr(LocalEngine, "learn", learn)


@pytest.mark.parametrize("every", [EVERY, 0])
def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path, crawls, no_pass_1, monkeypatch, every):
    _, b, _ = crawls
    out = tmp_path / "out"
    _killed_run([b], out, kill_at=120, every=every)
    checkpoint = _checkpoint(out)
    stored = 100 if every else 0  # two checkpoints of 50; with 0, pass 1's record alone
    assert checkpoint is not None and checkpoint.pages == stored and checkpoint.learned
    no_pass_1()
    summary = dedup([b], out, _settings(every=every), mode="add")
    monkeypatch.undo()
    assert summary["resumed_from_checkpoint"] == stored and summary["undone_checkpoint"] is None
    assert summary["pages"]["already_indexed"] == 0  # the resumed pages are this run's
    assert _checkpoint(out) is None
    clean = tmp_path / "clean"
    clean_summary = dedup([b], clean, _settings(every=every))
    assert _outputs(out) == _outputs(clean)
    assert _index_state(out, Settings()) == _index_state(clean, Settings())
    for key in ("records", "pages", "clusters", "duplicates", "pairs", "edges_by_kind", "cluster_kinds"):
        assert summary[key] == clean_summary[key], key


def test_a_run_after_earlier_runs_resumes_with_their_pages_kept(tmp_path, crawls, no_pass_1):
    a, b, _ = crawls
    clean = tmp_path / "clean"
    out = tmp_path / "out"
    for where in (clean, out):
        dedup([a], where, _settings())
    dedup([a, b], clean, _settings(), mode="add")
    _killed_run([a, b], out, kill_at=70, mode="add")
    no_pass_1()
    summary = dedup([a, b], out, _settings(), mode="add")
    assert summary["resumed_from_checkpoint"] == 50
    assert summary["pages"]["already_indexed"] == 48  # A's pages: an earlier run's
    assert _outputs(out) == _outputs(clean)
    assert _index_state(out, Settings()) == _index_state(clean, Settings())


def test_other_inputs_undo_the_killed_run_first(tmp_path, crawls):
    a, b, c = crawls
    out, clean = tmp_path / "out", tmp_path / "clean"
    for where in (out, clean):
        dedup([a], where, _settings())
    before = _index_state(out, Settings())
    # The killed run stores B's pages and marks A's, an earlier run's, seen in it.
    _killed_run([a, b], out, kill_at=120, mode="add")
    assert _checkpoint(out).pages == 100
    logged = []
    summary = dedup([c], out, _settings(), mode="add", log=logged.append)
    assert summary["undone_checkpoint"] == {"run": 2, "pages": 100}
    assert summary["resumed_from_checkpoint"] is None
    assert any("undid the unfinished run 2 (100 pages stored" in line for line in logged)
    dedup([c], clean, _settings(), mode="add")
    assert _outputs(out) == _outputs(clean)  # A's pages are not listed as seen in this run
    assert _index_state(out, Settings()) == _index_state(clean, Settings())
    assert before[0] == _index_state(out, Settings())[0][: len(before[0])]


def test_other_settings_undo_the_killed_run_too(tmp_path, crawls):
    _, b, _ = crawls
    out, clean = tmp_path / "out", tmp_path / "clean"
    _killed_run([b], out, kill_at=60)
    other = _settings()
    other.extract.template_share = 0.7  # read in pass 2: pages stored with both would mix
    summary = dedup([b], out, other, mode="add")
    assert summary["undone_checkpoint"] == {"run": 1, "pages": 50}
    dedup([b], clean, other)
    assert _outputs(out) == _outputs(clean)


def test_an_exception_in_pass_2_leaves_the_index_at_its_last_checkpoint(tmp_path, crawls, monkeypatch):
    import pagetwin.app as app

    _, b, _ = crawls
    out = tmp_path / "out"
    real = _fail_storing(monkeypatch, after=130, message="disk on fire")
    with pytest.raises(RuntimeError, match="disk on fire"):
        dedup([b], out, _settings())
    checkpoint = _checkpoint(out)
    assert checkpoint is not None and checkpoint.pages == 100
    assert _index_state(out, Settings())[2] is None  # the model waits for the end of pass 2
    monkeypatch.setattr(app, "_store", real)
    summary = dedup([b], out, _settings(), mode="add")
    assert summary["resumed_from_checkpoint"] == 100
    dedup([b], tmp_path / "clean", _settings())
    assert _outputs(out) == _outputs(tmp_path / "clean")


def _stored(index_file: Path) -> int:
    try:
        db = sqlite3.connect(f"{index_file.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return db.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:  # not created yet, or its schema not yet written
        return 0


def test_cli_kill_9_then_the_same_command_resumes(tmp_path, crawls):
    from pagetwin.cli import main

    _, b, _ = crawls
    out, clean = tmp_path / "out", tmp_path / "clean"
    args = ["dedup", b, "--out", str(out), "--workers", "2", "--set", f"run.checkpoint_pages={EVERY}"]
    proc = _child(cli=args, delay=0.01)  # about 4 s of pass 2: time to see a checkpoint and kill
    deadline = time.monotonic() + 120
    while _stored(out / "index.sqlite") < EVERY and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    stored = _checkpoint(out).pages
    assert EVERY <= stored < 300 and stored % EVERY == 0
    assert main(args) == 2  # without --add: refused, saying it can be resumed
    assert main([*args, "--add"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["resumed_from_checkpoint"] == stored
    assert summary["seconds"]["learn"] < 0.5  # pass 1 was not run
    assert main(["dedup", b, "--out", str(clean), "--workers", "2"]) == 0
    assert _outputs(out) == _outputs(clean)


def test_a_normal_run_leaves_no_checkpoint_and_says_it_resumed_nothing(tmp_path, crawls):
    a, _, _ = crawls
    summary = dedup([a], tmp_path / "out", _settings())
    assert summary["resumed_from_checkpoint"] is None and summary["undone_checkpoint"] is None
    assert _checkpoint(tmp_path / "out") is None


def test_spark_resumes_a_failed_run_too(tmp_path, crawls, monkeypatch):
    """With the Spark engine: pass 2 fails after two checkpoints, the next Spark run resumes
    (its pass 1 not run) and gives the local engine's clean outputs."""
    pytest.importorskip("pyspark", reason="pyspark is not installed (pip install 'pagetwin[spark]')")
    import pagetwin.app as app
    from pagetwin.runners import spark

    if spark._java() is None:
        pytest.skip("Java is not installed (Spark needs Java 17)")
    a, _, _ = crawls
    out = tmp_path / "out"
    every = _settings(every=8)
    real = _fail_storing(monkeypatch, after=20, message="executor lost")
    with pytest.raises(RuntimeError, match="executor lost"):
        dedup([a], out, every, engine=spark.SparkEngine(master="local[2]"))
    monkeypatch.setattr(app, "_store", real)
    assert _checkpoint(out).pages == 16

    def learn(self, *args, **kwargs):
        raise AssertionError("pass 1 ran")

    monkeypatch.setattr(spark.SparkEngine, "learn", learn)
    summary = dedup([a], out, every, mode="add", engine=spark.SparkEngine(master="local[2]"))
    assert summary["resumed_from_checkpoint"] == 16
    dedup([a], tmp_path / "clean", _settings())
    assert _outputs(out) == _outputs(tmp_path / "clean")
