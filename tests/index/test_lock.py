"""One writer per index (issue 14, item 3): an exclusive flock on <index>.lock, waited for a
bounded time across processes, released however its holder ends."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pagetwin.index.lock import IndexBusy, IndexLock, lock_path
from pagetwin.index.sqlite import IndexError_

ROOT = Path(__file__).resolve().parents[2]

# a second process that takes the lock, says so on stdout, holds it HOLD seconds and exits
HOLDER = """
import sys, time
from pagetwin.index.lock import IndexLock
lock = IndexLock(sys.argv[1], timeout=float(sys.argv[3])).acquire()
print("held", flush=True)
time.sleep(float(sys.argv[2]))
lock.release()
"""


def _holder(index: Path, hold: float, timeout: float = 0.0) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(index), str(hold), str(timeout)],
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_lock_file_is_beside_the_index(tmp_path):
    index = tmp_path / "out" / "index.sqlite"
    assert lock_path(index) == tmp_path / "out" / "index.sqlite.lock"
    with IndexLock(index) as lock:
        assert lock.held and lock_path(index).exists()
        assert lock_path(index).read_text().split()[0] == str(os.getpid())
    assert not lock.held
    with IndexLock(index, timeout=0):  # released: taken again at once
        pass


def test_a_second_process_is_refused_after_the_timeout_with_one_line(tmp_path):
    index = tmp_path / "index.sqlite"
    proc = _holder(index, hold=30)
    try:
        started = time.monotonic()
        with pytest.raises(IndexBusy) as err:
            IndexLock(index, timeout=0.5, setting="run.index_lock_timeout").acquire()
        waited = time.monotonic() - started
    finally:
        proc.kill()
        proc.wait()
    assert 0.5 <= waited < 10
    message = str(err.value)
    assert "\n" not in message and str(index) in message and f"pid {proc.pid}" in message
    assert "run.index_lock_timeout" in message
    assert isinstance(err.value, IndexError_)  # the CLI prints it on one line, exit 1


def test_a_second_process_waits_for_the_first_to_finish(tmp_path):
    index = tmp_path / "index.sqlite"
    proc = _holder(index, hold=1.0)
    started = time.monotonic()
    with IndexLock(index, timeout=20):
        waited = time.monotonic() - started
    proc.wait()
    assert 0.5 < waited < 20


def test_the_lock_dies_with_its_holder_even_on_kill_9(tmp_path):
    index = tmp_path / "index.sqlite"
    proc = _holder(index, hold=60)
    with pytest.raises(IndexBusy):
        IndexLock(index, timeout=0).acquire()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with IndexLock(index, timeout=5) as lock:  # the stale lock file is no obstacle
        assert lock.held


def test_two_locks_in_one_process_exclude_each_other(tmp_path):
    index = tmp_path / "index.sqlite"
    with IndexLock(index):
        with pytest.raises(IndexBusy):
            IndexLock(index, timeout=0.1).acquire()


def _count(index: str, counter: str, rounds: int) -> None:
    for _ in range(rounds):
        with IndexLock(index, timeout=60, poll=0.001):
            n = int(Path(counter).read_text())
            time.sleep(0.002)  # a lost update shows if two hold it at once
            Path(counter).write_text(str(n + 1))


def test_writers_in_many_processes_never_overlap(tmp_path):
    index, counter = tmp_path / "index.sqlite", tmp_path / "counter"
    counter.write_text("0")
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_count, args=(str(index), str(counter), 25)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 4
    assert counter.read_text() == "100"


def test_readers_need_no_lock(tmp_path):
    from pagetwin.config import Settings
    from pagetwin.index.sqlite import Index

    index = tmp_path / "index.sqlite"
    Index(index, Settings().to_dict()).close()
    proc = _holder(index, hold=30)
    try:
        reader = Index.open_readonly(index)  # while another process holds the writer's lock
        assert reader.db.execute("SELECT count(*) FROM pages").fetchone() == (0,)
        reader.close()
    finally:
        proc.kill()
        proc.wait()


def test_a_negative_timeout_is_refused(tmp_path):
    with pytest.raises(ValueError):
        IndexLock(tmp_path / "i.sqlite", timeout=-1)
