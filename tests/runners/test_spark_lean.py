"""pages.parquet, the executors' lean index, stores no candidate keys: each algorithm's keys
are a function of its stored features (spark_link.stored_keys), so nothing is lost."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest

from pagetwin.config import Settings
from pagetwin.fingerprints import MODULES, build_algorithms
from pagetwin.pipeline import Worker
from pagetwin.runners.spark_link import stored_keys
from pagetwin.sources import SourceStats, iter_pages

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "debian-docs.warc.gz"
SHARED_WARC = ROOT.parent / "shared" / "data" / "warc"


@pytest.mark.parametrize("algorithms", ["", ",".join(a for a in MODULES if a != "images")], ids=["default", "all"])
def test_the_keys_given_back_from_the_features_are_pass_2s(algorithms):
    settings = Settings()
    if algorithms:
        settings.set("match.algorithms", algorithms.split(","))
    settings.validate()
    inputs = [str(EXAMPLE), *sorted(glob.glob(str(SHARED_WARC / "*.warc.gz")))[:3]]
    worker, algos = Worker(settings), build_algorithms(settings)
    checked = 0
    for page in iter_pages(inputs, settings.input, SourceStats()):
        result = worker.fingerprint(page)
        assert stored_keys(algos, result.features) == result.keys, page.id
        checked += bool(result.keys)
        if checked >= 300:
            break
    assert checked >= 100
