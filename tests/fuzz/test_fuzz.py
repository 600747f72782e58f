"""The fuzzing harness, briefly (issue 14): Hypothesis targets for the WARC, ARC, JSONL and
HTML readers and for the whole dedup path, on mutated files of bench/fuzz.py's seed corpus.
Derandomised, so CI runs the same inputs each time; ``python bench/fuzz.py`` runs it at length.

Each input: every record accounted for, the pages yielded are the pages counted, no exception
escapes (none reaches the readers' last guard), bounded messages, pages that parse."""

from __future__ import annotations

import os
import random
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.fuzz import SUFFIX, check_dedup, check_read, mutate, render, seed_corpus

SEEDS = seed_corpus()
FAST = dict(derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _names(*kinds: str) -> list[str]:
    return sorted(n for n, (kind, _) in SEEDS.items() if kind in kinds)


def _check(name: str, seed: int, parse: bool = False, dedup: bool = False) -> None:
    kind, content = SEEDS[name]
    data = mutate(kind, content, random.Random(seed))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input" + SUFFIX[kind])
        with open(path, "wb") as fh:
            fh.write(data)
        result = check_read(path, parse)
        if dedup:
            result["problems"] += check_dedup(path)["problems"]
    assert result["problems"] == [], (name, seed, result["problems"])
    assert result["parse_errors"] == [], (name, seed, result["parse_errors"][0])
    assert result["records"] == result["pages"] + result["skips"]


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_seed_reads_without_a_problem(name, tmp_path):
    kind, content = SEEDS[name]
    path = tmp_path / ("seed" + SUFFIX[kind])
    path.write_bytes(render(kind, content))
    result = check_read(str(path), parse=True)
    assert result["problems"] == [] and result["parse_errors"] == []
    if name.startswith(("clean-", "length-")) and kind.startswith("warc"):
        # the clean records and those whose every Content-Length is off: 4 pages, a revisit and an image
        assert result["pages"] == 6 and result["records"] == 8, result


@settings(max_examples=150, **FAST)
@given(name=st.sampled_from(_names("warc", "warc.gz", "warc.gz1")), seed=st.integers(0, 2**32 - 1))
def test_mutated_warc(name, seed):
    _check(name, seed)


@settings(max_examples=80, **FAST)
@given(name=st.sampled_from(_names("arc", "arc.gz", "arc.gz1")), seed=st.integers(0, 2**32 - 1))
def test_mutated_arc(name, seed):
    _check(name, seed)


@settings(max_examples=60, **FAST)
@given(seed=st.integers(0, 2**32 - 1))
def test_mutated_jsonl(seed):
    _check("clean-jsonl", seed, parse=True)


@settings(max_examples=60, **FAST)
@given(name=st.sampled_from(_names("html")), seed=st.integers(0, 2**32 - 1))
def test_mutated_html(name, seed):
    _check(name, seed, parse=True)


@settings(max_examples=8, **FAST)
@given(name=st.sampled_from(sorted(SEEDS)), seed=st.integers(0, 2**32 - 1))
def test_mutated_input_through_the_whole_dedup_path(name, seed):
    _check(name, seed, dedup=True)
