"""outputs.files: the checks made before a run, the earlier run's files, atomic writes."""

from __future__ import annotations

import os

import pytest

from pagetwin.outputs.files import (
    OUTPUT_NAMES,
    OutputError,
    atomic_open,
    atomic_path,
    check_outputs,
    clear_outputs,
    earlier_outputs,
)


def test_atomic_open_replaces_whole_or_not_at_all(tmp_path):
    target = tmp_path / "clusters.jsonl"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write("half")
            assert target.read_text() == "old\n"  # not yet in place
            raise RuntimeError("killed")
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["clusters.jsonl"]  # no temporary file left
    with atomic_open(target) as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["clusters.jsonl"]
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def test_atomic_path_leaves_no_temp_file(tmp_path):
    target = tmp_path / "pairs.parquet"
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp != target
        tmp.write_bytes(b"PAR1")
    assert target.read_bytes() == b"PAR1" and os.listdir(tmp_path) == ["pairs.parquet"]
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(target) as tmp:
            tmp.write_bytes(b"partial")
            raise KeyboardInterrupt
    assert target.read_bytes() == b"PAR1" and os.listdir(tmp_path) == ["pairs.parquet"]


def test_check_outputs_creates_nothing(tmp_path):
    check_outputs(tmp_path / "a" / "b", survivors=None)
    assert os.listdir(tmp_path) == []


def test_atomic_open_binary_and_an_exception_mid_write_keep_the_old_bytes(tmp_path):
    target = tmp_path / "summary.json"
    target.write_bytes(b"old")
    with pytest.raises(ValueError):
        with atomic_open(target, "wb") as fh:
            fh.write(b"x" * 100_000)  # larger than any buffer: some of it reached the disk
            raise ValueError("disk full")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["summary.json"]
    with atomic_open(target, "wb") as fh:
        fh.write(b"\x00new")
    assert target.read_bytes() == b"\x00new"


def test_check_outputs_refuses_an_earlier_run_unless_added_to_or_replaced(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    check_outputs(out)  # an empty folder is fine
    (out / "clusters.jsonl").write_text("{}\n")
    with pytest.raises(OutputError, match="--add") as err:
        check_outputs(out)
    assert "\n" not in str(err.value)  # one line for the user
    check_outputs(out, mode="add")
    check_outputs(out, mode="replace")
    with pytest.raises(OutputError, match="unknown output mode"):
        check_outputs(out, mode="append")


def test_check_outputs_refuses_a_file_as_out_and_a_folder_as_survivors(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputError, match="is a file"):
        check_outputs(tmp_path / "f")
    with pytest.raises(OutputError, match="is a file"):
        check_outputs(tmp_path / "f" / "out")  # its parent cannot be a folder
    with pytest.raises(OutputError, match="is a folder"):
        check_outputs(tmp_path / "out", survivors=tmp_path)


def test_clear_outputs_deletes_the_earlier_run_and_only_it(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    for name in OUTPUT_NAMES:
        (out / name).write_text("x")
    (out / "index.sqlite-wal").write_text("x")
    (out / "notes.txt").write_text("mine")
    assert sorted(clear_outputs(out)) == sorted(OUTPUT_NAMES)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert earlier_outputs(out) == []


def test_clear_outputs_leaves_an_index_kept_elsewhere(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.sqlite").write_text("someone else's")
    (out / "pairs.jsonl").write_text("x")
    removed = clear_outputs(out, index_path=tmp_path / "elsewhere.sqlite")
    assert removed == ["pairs.jsonl"]
    assert (out / "index.sqlite").read_text() == "someone else's"
    # the default index, named explicitly, is --out's own
    assert clear_outputs(out, index_path=out / "index.sqlite") == ["index.sqlite"]
