"""Two dedup runs on one index (issue 14, item 3): the second waits for the first, then sees
its outputs (refused without --add), or gives up after run.lock_timeout; never exit 0 with
a wrong result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from pagetwin.cli import main
from pagetwin.index.lock import IndexLock

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "debian-docs.warc.gz"


def test_a_run_gives_up_while_another_holds_the_index(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    with IndexLock(out / "index.sqlite"):  # as another run would hold it
        started = time.monotonic()
        code = main(["dedup", str(EXAMPLE), "--out", str(out), "--set", "run.lock_timeout=0.5"])
        waited = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1
    assert "run.lock_timeout" in err and err.count("\n") == 1
    assert waited >= 0.5
    assert not (out / "clusters.jsonl").exists()


def test_two_runs_at_once_one_result_one_refusal(tmp_path):
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "pagetwin", "dedup", str(EXAMPLE), "--out", str(out), "--workers", "1",
           "--set", "run.lock_timeout=300"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    results = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    # The first writes its outputs; the second waited for it, then found them (no --add): usage, exit 2.
    assert codes == [0, 2], results
    refused = next(err for code, err in results if code == 2)
    assert "earlier run" in refused
    clusters = (out / "clusters.jsonl").read_text().splitlines()
    summary = json.loads((out / "summary.json").read_text())
    assert len(clusters) == summary["pages"]["in_output"] > 0
