"""runners.local: pass 2 decides on pass 1's parsed pages instead of parsing again; the workers
die with their parent, whatever ends it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import pagetwin.pipeline as pipeline
from pagetwin.cli import main
from pagetwin.config import Settings
from pagetwin.app import iter_texts
from tests.fixtures.sites import site_pages


def _site(tmp_path, n=8):
    path = tmp_path / "site.jsonl"
    with path.open("w") as fh:
        for url, html, _ in site_pages(n, seed=3, templates="ab"):
            fh.write(json.dumps({"url": url, "html": html}) + "\n")
    return path


@pytest.fixture
def parse_count(monkeypatch):
    calls = []
    real = pipeline.parse_limited

    def counting(html, max_depth):
        calls.append(len(html))
        return real(html, max_depth)

    monkeypatch.setattr(pipeline, "parse_limited", counting)
    return calls


@pytest.mark.parametrize("reuse", [True, False])
def test_each_page_is_parsed_once_when_pass_2_reuses_pass_1(tmp_path, parse_count, reuse):
    settings = Settings()
    settings.run.workers = 1
    settings.run.reuse_parse = reuse
    texts = [r["text"] for r in iter_texts([str(_site(tmp_path))], settings)]
    assert len(texts) == 8 and all(texts)
    assert len(parse_count) == (8 if reuse else 16)


def test_reused_parse_gives_the_same_texts_and_dedup_output(tmp_path):
    site = _site(tmp_path, n=10)
    settings = Settings()
    settings.run.workers = 1
    texts = [r["text"] for r in iter_texts([str(site)], settings)]
    settings.run.reuse_parse = False
    assert texts == [r["text"] for r in iter_texts([str(site)], settings)]
    outs = {}
    for flag in ("true", "false"):
        out = tmp_path / flag
        assert main(["dedup", str(site), "--out", str(out), "--workers", "2", "--set", f"run.reuse_parse={flag}"]) == 0
        summary = json.loads((out / "summary.json").read_text())
        outs[flag] = ((out / "clusters.jsonl").read_text(), summary["records"], summary["pages"])
    assert outs["true"] == outs["false"]


# -- workers die with their parent (issue 14, item 2) ---------------------------------------

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG are Linux's")


def _proc_stat(pid: int) -> tuple[int, str, int] | None:
    """(parent pid, state, start time) of a process from /proc, None when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
    return int(fields[1]), fields[0], int(fields[19])


def _descendants(root: int) -> dict[int, int]:
    """pid -> start time of every live descendant of ``root``."""
    parent: dict[int, int] = {}
    started: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _proc_stat(int(entry.name))
            if stat is not None and stat[1] not in "ZX":
                parent[int(entry.name)], started[int(entry.name)] = stat[0], stat[2]
    found: dict[int, int] = {}
    frontier = [root]
    while frontier:
        nxt = [pid for pid, ppid in parent.items() if ppid in frontier and pid not in found]
        found.update({pid: started[pid] for pid in nxt})
        frontier = nxt
    return found


def _alive(processes: dict[int, int]) -> list[int]:
    """The processes (pid -> start time) still running: a reused pid is another process, a
    zombie has ended."""
    out = []
    for pid, start in processes.items():
        stat = _proc_stat(pid)
        if stat is not None and stat[2] == start and stat[1] not in "ZX":
            out.append(pid)
    return out


def _wait(condition, timeout: float):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    return condition()


@linux_only
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["kill -9", "SIGTERM"])
def test_no_worker_outlives_a_killed_dedup(tmp_path, sig):
    corpus = _site(tmp_path, n=1500)  # a few seconds of work for 2 workers: killed mid-run
    cmd = [sys.executable, "-m", "pagetwin", "dedup", str(corpus), "--out", str(tmp_path / "out"), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    try:
        workers = _wait(lambda: (d := _descendants(proc.pid)) and len(d) >= 2 and d, timeout=60)
        assert workers and len(workers) >= 2, "the run never started its 2 workers"
        assert proc.poll() is None, "the run ended before it could be killed (make the corpus bigger)"
        os.kill(proc.pid, sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _wait(lambda: not _alive(workers), timeout=10), f"workers left behind: {_alive(workers)}"
    assert not (tmp_path / "out" / "clusters.jsonl").exists()


@linux_only
def test_closing_the_pages_early_ends_the_workers(tmp_path):
    from pagetwin.learned import Learning
    from pagetwin.runners.local import Task, map_pages
    from pagetwin.sources import SourceStats, iter_pages

    settings = Settings()
    settings.run.workers = 2
    settings.run.chunk_pages = 2
    pages = iter_pages([str(_site(tmp_path, n=200))], settings.input, SourceStats())
    before = _descendants(os.getpid())  # other tests' helpers (a Spark JVM...) are not the pool's
    results = map_pages(Task("learn"), pages, settings, learning=Learning(templates=True))
    next(results)
    workers = {pid: start for pid, start in _descendants(os.getpid()).items() if pid not in before}
    assert len(workers) >= 2
    results.close()  # as a caller stopping early does (pagetwin text | head)
    assert _wait(lambda: not _alive(workers), timeout=10), f"workers left behind: {_alive(workers)}"


@linux_only
def test_a_worker_whose_parent_is_gone_exits(tmp_path):
    from pagetwin.runners import local

    # A parent pid that is not this process's parent: the worker would never be told.
    code = (
        "import os, pagetwin.runners.local as l\n"
        "l._die_with_parent(1 if os.getppid() != 1 else 2)\n"
        "print('alive')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "alive" not in out.stdout
    assert local._worker is None  # never set in the parent


def test_pass_1_progress_measures_the_bytes_of_the_inputs(tmp_path, monkeypatch):
    """The "learning" bar, as the "fingerprinting" one, runs over the inputs' total size and ends
    at it (issue 19, item 4): a WARC's records move it by their offsets."""
    import pagetwin.runners.local as local
    from tests.fixtures.terminal import Terminal
    from pagetwin.engine import Progress
    from pagetwin.learned import Learning

    example = Path(__file__).resolve().parents[2] / "examples" / "debian-docs.warc.gz"
    seen: list[tuple[int, int | None]] = []

    class Watched(Progress):
        def update(self, n=1, page=None):
            super().update(n, page)
            seen.append((self.bar.n, self.bar.total))

    monkeypatch.setattr(local, "Progress", Watched)
    monkeypatch.setattr("sys.stderr", Terminal())
    settings = Settings()
    settings.run.workers = 1
    engine = local.LocalEngine()
    try:
        engine.learn([str(example)], settings, Learning(templates=True))
    finally:
        engine.close()
    size = example.stat().st_size
    assert seen and all(total == size for _, total in seen)
    positions = [n for n, _ in seen]
    assert positions == sorted(positions) and 0 < positions[len(positions) // 2] < size


@pytest.mark.parametrize("lang, shared", [("", True), ("en", False)])
def test_forked_workers_share_the_language_model_the_parent_loaded(tmp_path, monkeypatch, lang, shared):
    """With the fork start method the parent loads py3langid's model before the pool starts
    (when the language is detected): each worker finds it loaded instead of loading its own."""
    import multiprocessing

    import pagetwin.text.lang as lang_module
    from pagetwin.runners import local
    from pagetwin.sources import SourceStats, iter_pages

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the pool does not fork here: its workers load the model themselves")
    monkeypatch.setattr(lang_module, "_loaded", False)  # as in a fresh process
    real = local._init_worker

    def init(*args):
        (tmp_path / f"worker-{os.getpid()}").write_text(str(lang_module._loaded))
        real(*args)

    monkeypatch.setattr(local, "_init_worker", init)
    settings = Settings()
    settings.run.workers = 2
    settings.text.lang = lang
    pages = iter_pages([str(_site(tmp_path, n=6))], settings.input, SourceStats())
    texts = [text for _, text in local.map_pages(local.Task("safe_extract"), pages, settings)]
    assert len(texts) == 6 and all(texts)
    seen = [p.read_text() for p in tmp_path.glob("worker-*")]
    assert seen and set(seen) == {str(shared)}
