"""Issue 13 through the command line: unreadable inputs named on stderr and the exit status
(0 / 3 / 1), output targets and optional dependencies checked before any work (exit 2), an
--out holding an earlier run refused unless --add or --replace, atomic output files."""

from __future__ import annotations

import gzip
import json
import os
import sys

import pytest

from pagetwin.cli import main
from pagetwin.outputs import files as outfiles
from pagetwin.outputs.files import OutputError
from pagetwin.outputs.warc import WarcWriter
from tests.fixtures.news import article, page


def _good(path):
    with WarcWriter(path) as w:
        w.write_response("https://a.example/1", page("One", article(11)).encode())
        w.write_response("https://a.example/2", page("Two", article(12)).encode())
        w.write_response("https://b.example/1-copy", page("One", article(11), site="Other").encode())
    return path


def _bad_inputs(tmp_path):
    """Inputs that cannot be read: name -> path (the missing one is not written)."""
    not_warc = tmp_path / "notwarc.warc.gz"
    not_warc.write_bytes(gzip.compress(b"hello, this is not a WARC file\n" * 20))
    good = _good(tmp_path / "whole.warc.gz").read_bytes()
    truncated = tmp_path / "truncated.warc.gz"
    truncated.write_bytes(good[: len(good) // 2])
    readme = tmp_path / "README.md"
    readme.write_text("# notes\n")
    binary = tmp_path / "random.bin"
    binary.write_bytes(bytes((i * 7919 + 13) % 256 for i in range(5000)))
    (tmp_path / "whole.warc.gz").unlink()
    return {
        "not-warc": not_warc,
        "truncated": truncated,
        "readme": readme,
        "binary": binary,
        "missing": tmp_path / "missing.warc.gz",
    }


def _run(capsys, *args):
    code = main(["dedup", *map(str, args), "--workers", "1"])
    return code, capsys.readouterr().err


# -- unreadable inputs: stderr and exit status ---------------------------------------------


def test_clean_inputs_exit_0(tmp_path, capsys):
    code, err = _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", tmp_path / "out")
    assert code == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["input_errors"] == [] and summary["input_status"] == "ok"
    assert "could not be read" not in err


@pytest.mark.parametrize("kind", ["not-warc", "truncated", "readme", "binary", "missing"])
def test_one_bad_input_is_named_on_stderr_and_exits_3(tmp_path, capsys, kind):
    good = _good(tmp_path / "good.warc.gz")
    bad = _bad_inputs(tmp_path)[kind]
    out = tmp_path / "out"
    code, err = _run(capsys, good, bad, "--out", out)
    assert code == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["input_status"] == "partial" and summary["input_errors"]
    assert summary["pages"]["read"] >= 3  # the good input was read
    lines = err.splitlines()
    for message in summary["input_errors"]:  # each reason on stderr, once
        assert lines.count(f"pagetwin: {message}") == 1
        assert bad.name in message
    assert any("summary.json input_errors" in line for line in lines)


def test_only_bad_inputs_exit_1_and_summary_written(tmp_path, capsys):
    bad = _bad_inputs(tmp_path)
    del bad["truncated"]  # its first half is read
    out = tmp_path / "out"
    code, err = _run(capsys, *bad.values(), "--out", out)
    assert code == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["input_status"] == "none" and summary["pages"]["read"] == 0
    for path in bad.values():
        assert any(m.startswith(str(path)) for m in summary["input_errors"]), path
        assert f"pagetwin: {path}" in err
    assert (out / "clusters.jsonl").read_text() == ""


def test_only_missing_inputs_exit_1_and_summary_written(tmp_path, capsys):
    out = tmp_path / "out"
    code, err = _run(capsys, tmp_path / "a.warc.gz", tmp_path / "b.warc.gz", "--out", out)
    assert code == 1
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["input_errors"]) == 2 and summary["input_status"] == "none"
    assert "a.warc.gz: no such file" in err and "b.warc.gz: no such file" in err


def test_many_errors_are_bounded_on_stderr(tmp_path, capsys):
    good = _good(tmp_path / "good.warc.gz")
    missing = [tmp_path / f"missing{i}.warc.gz" for i in range(30)]
    code, err = _run(capsys, good, *missing, "--out", tmp_path / "out")
    assert code == 3
    named = [line for line in err.splitlines() if "no such file" in line]
    assert len(named) == 20
    assert "... and 10 more (summary.json input_errors)" in err
    assert len(json.loads((tmp_path / "out" / "summary.json").read_text())["input_errors"]) == 30


# -- output targets and optional dependencies, before any work -----------------------------


def _no_work(monkeypatch):
    """Fail the test if the command gets as far as the API's dedup (the work)."""
    import pagetwin.app as app

    def boom(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(app, "dedup", boom)


def test_out_naming_a_file_exit_2(tmp_path, capsys, monkeypatch):
    _no_work(monkeypatch)
    target = tmp_path / "out.txt"
    target.write_text("x")
    code, err = _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", target)
    assert code == 2
    assert err.strip().splitlines() == [f"pagetwin: --out {target} is a file, not a folder"]
    assert target.read_text() == "x"


def test_out_under_a_file_exit_2(tmp_path, capsys, monkeypatch):
    _no_work(monkeypatch)
    (tmp_path / "f").write_text("x")
    code, err = _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", tmp_path / "f" / "out")
    assert code == 2 and "is a file, not a folder" in err and "Traceback" not in err


def test_survivors_in_a_missing_folder_exit_2(tmp_path, capsys, monkeypatch):
    _no_work(monkeypatch)
    survivors = tmp_path / "nope" / "kept.warc.gz"
    code, err = _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", tmp_path / "out", "--survivors", survivors)
    assert code == 2
    assert err.strip().splitlines() == [f"pagetwin: --survivors {survivors}: folder {survivors.parent} does not exist"]
    assert not (tmp_path / "out").exists()


def test_unwritable_folders_exit_2(tmp_path, capsys, monkeypatch):
    """Writability is tried by creating a file (os.access says yes to root): simulated here."""
    _no_work(monkeypatch)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = outfiles._writable_folder
    monkeypatch.setattr(outfiles, "_writable_folder", lambda folder: folder != locked and real(folder))
    good = _good(tmp_path / "good.warc.gz")
    code, err = _run(capsys, good, "--out", locked)
    assert code == 2 and f"--out {locked} is not writable" in err
    code, err = _run(capsys, good, "--out", locked / "sub")
    assert code == 2 and f"cannot be created: {locked} is not writable" in err
    code, err = _run(capsys, good, "--out", tmp_path / "out", "--survivors", locked / "kept.warc.gz")
    assert code == 2 and f"folder {locked} is not writable" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_out_exit_2(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code, err = _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", locked)
    finally:
        locked.chmod(0o755)
    assert code == 2 and "is not writable" in err


def test_parquet_without_pyarrow_exit_2(tmp_path, capsys, monkeypatch):
    _no_work(monkeypatch)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    code, err = _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", tmp_path / "out", "--parquet")
    assert code == 2
    assert err.strip().splitlines() == ["pagetwin: --parquet needs pyarrow, which is not installed: pip install 'pagetwin[parquet]'"]
    assert not (tmp_path / "out").exists()


def test_survivors_and_parquet_written_when_usable(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    code, _ = _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", out, "--parquet", "--survivors", tmp_path / "kept.warc.gz")
    assert code == 0
    assert (out / "clusters.parquet").exists() and (out / "pairs.parquet").exists()
    assert (tmp_path / "kept.warc.gz").stat().st_size > 0
    assert not [p for p in out.iterdir() if p.name.startswith(".pagetwin-")]


# -- --out from an earlier run: refused, --add, --replace ----------------------------------


def _second(tmp_path):
    path = tmp_path / "second.warc.gz"
    with WarcWriter(path) as w:
        w.write_response("https://c.example/3", page("Three", article(13)).encode())
        w.write_response("https://c.example/2-copy", page("Two", article(12), site="Copy").encode())
    return path


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_used_out_is_refused(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", out)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _no_work(monkeypatch)
    code, err = _run(capsys, _second(tmp_path), "--out", out)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "earlier run" in line and "--add" in line and "--replace" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_out_with_other_files_is_not_refused(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", out)[0] == 0
    assert (out / "notes.txt").read_text() == "mine"


def test_add_describes_the_whole_index(tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", out)[0] == 0
    code, _ = _run(capsys, _second(tmp_path), "--out", out, "--add")
    assert code == 0
    rows = _lines(out / "clusters.jsonl")
    assert len(rows) == 5  # both runs' pages
    by_url = {r["url"]: r["cluster"] for r in rows}
    assert by_url["https://a.example/2"] == by_url["https://c.example/2-copy"]
    ids = {r["id"] for r in rows}
    pairs = _lines(out / "pairs.jsonl")
    assert pairs and all(p["a"] in ids and p["b"] in ids for p in pairs)  # every pair's pages are in clusters.jsonl
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pages"]["in_output"] == 5 and summary["pages"]["read"] == 2


def test_replace_starts_afresh(tmp_path, capsys):
    out = tmp_path / "out"
    assert _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", out)[0] == 0
    code, err = _run(capsys, _second(tmp_path), "--out", out, "--replace")
    assert code == 0 and "--replace: deleted" in err
    rows = _lines(out / "clusters.jsonl")
    assert {r["url"] for r in rows} == {"https://c.example/3", "https://c.example/2-copy"}
    assert _lines(out / "pairs.jsonl") == []
    assert json.loads((out / "summary.json").read_text())["pages"]["already_indexed"] == 0


def test_add_and_replace_exclude_each_other(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["dedup", str(tmp_path / "x"), "--out", str(tmp_path / "out"), "--add", "--replace"])
    assert exc.value.code == 2


def test_explicit_index_outside_out_is_still_incremental(tmp_path, capsys):
    index = tmp_path / "shared.sqlite"
    good = _good(tmp_path / "good.warc.gz")
    assert _run(capsys, good, "--out", tmp_path / "r1", "--index", index)[0] == 0
    assert _run(capsys, good, _second(tmp_path), "--out", tmp_path / "r2", "--index", index)[0] == 0
    summary = json.loads((tmp_path / "r2" / "summary.json").read_text())
    assert summary["pages"]["already_indexed"] == 3
    # --out's own files still need --add or --replace; --replace leaves an outside index alone
    assert _run(capsys, good, "--out", tmp_path / "r2", "--index", index)[0] == 2
    assert _run(capsys, good, "--out", tmp_path / "r2", "--index", index, "--replace")[0] == 0
    assert index.exists()
    assert json.loads((tmp_path / "r2" / "summary.json").read_text())["pages"]["already_indexed"] == 3


def test_library_modes(tmp_path):
    from pagetwin import Settings, dedup

    settings = Settings()
    settings.set("run.workers", 1)
    good = str(_good(tmp_path / "good.warc.gz"))
    out = tmp_path / "out"
    dedup([good], out, settings)
    with pytest.raises(OutputError, match="--add"):
        dedup([good], out, settings)
    assert dedup([good], out, settings, mode="add")["pages"]["already_indexed"] == 3
    assert dedup([good], out, settings, mode="replace")["pages"]["already_indexed"] == 0
    with pytest.raises(OutputError, match="unknown output mode"):
        dedup([good], out, settings, mode="append")


# -- atomic writes -------------------------------------------------------------------------


def test_outputs_written_through_temp_files(tmp_path, capsys, monkeypatch):
    """Each output is complete when it appears: written elsewhere, then renamed into place."""
    replaced = []
    real = os.replace

    def spy(src, dst):
        replaced.append(os.path.basename(dst))
        if os.path.basename(dst) in outfiles.OUTPUT_NAMES:
            assert os.path.dirname(os.path.abspath(src)) == os.path.dirname(os.path.abspath(dst))
        real(src, dst)

    monkeypatch.setattr(outfiles.os, "replace", spy)
    out = tmp_path / "out"
    assert _run(capsys, _good(tmp_path / "good.warc.gz"), "--out", out)[0] == 0
    assert {"clusters.jsonl", "pairs.jsonl", "summary.json"} <= set(replaced)
    # index.sqlite.lock: the one-writer lock file, kept (index.lock: deleting it would let two runs hold it).
    assert sorted(p.name for p in out.iterdir()) == [
        "clusters.jsonl", "index.sqlite", "index.sqlite.lock", "pairs.jsonl", "summary.json"
    ]
