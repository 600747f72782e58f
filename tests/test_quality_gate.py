"""Quality gate: fails when extraction or near-duplicate quality on the labelled real data drops
below pinned floors (the issues' targets; the measured figures are in bench/RESULTS.md).
Skipped when ../shared/data is absent."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"labelled data not found at {DATA} (../shared/data)")

# Floors: the targets of issue 3 (extraction); the copycat floor of the near-identical profile
# (issue 11: F1 >= 0.85 for label 3 against labels 0.5 and 1); the reposts target of issue 11 at
# the defaults (spotsigs-dev: pairwise F1 >= 0.95 with precision >= 0.97; measured 0.953 / 0.997,
# bench/RESULTS.md "Reposts").
# wcxb-dev (issue 15): a little under the measured 0.8721 overall, and every page type above
# WCXB_TYPE_FLOOR (lowest measured: collection and listing 0.715); scrapinghub a little under the
# measured 0.965, cleanportaleval 0.955, chinese_wce 0.943; bench/RESULTS.md "Main content on the
# modern web" and its session-5 to session-8 parts.
EXTRACTION_FLOORS = {"cleanportaleval": 0.95, "scrapinghub": 0.96, "chinese_wce": 0.935, "wcxb-dev": 0.865}
WCXB_TYPE_FLOOR = 0.70
COPYCAT_MINHASH_F1 = 0.85
COPYCAT_MINHASH_AUC = 0.95
SPOTSIGS_F1 = 0.95
SPOTSIGS_PRECISION = 0.97


@pytest.mark.parametrize("name", sorted(EXTRACTION_FLOORS))
def test_extraction_f_above_floor(name):
    from bench.extraction import default_settings, load_set, run_pagetwin, score

    pages = load_set(name, DATA, None)
    texts, _, _ = run_pagetwin(pages, default_settings())
    scores = score(name, texts, pages)
    f = scores["F"]
    assert f >= EXTRACTION_FLOORS[name], f"{name}: F {f:.3f} below the floor {EXTRACTION_FLOORS[name]}"
    low = {kind: round(s["F"], 3) for kind, s in scores.get("by_type", {}).items() if s["F"] < WCXB_TYPE_FLOOR}
    assert not low, f"{name}: page types below {WCXB_TYPE_FLOOR}: {low}"


def test_copycat_near_identical_profile_above_floor():
    from bench.calibrate import DocMaker, build, copycat_set, featurize, pair_scores, roc_auc
    from pagetwin.config import PROFILES

    pairs = copycat_set(DocMaker())
    profile = {k.split(".", 1)[1]: v for k, v in PROFILES["near-identical"].items() if k.startswith("minhash.")}
    algo = build("minhash", profile)
    scores, passed, candidate = pair_scores(algo, featurize(algo, pairs.docs), pairs.pairs, duplicates_only=True)
    labels = pairs.labels
    # What dedup would make a duplicate edge: proposed by LSH, then verified (partial copies,
    # reported apart and not clustered, are not label 3's near duplicates).
    found = passed & candidate
    tp = int((found & labels).sum())
    precision = tp / max(int(found.sum()), 1)
    recall = tp / max(int(labels.sum()), 1)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    auc = roc_auc(np.asarray(scores), labels)
    assert f1 >= COPYCAT_MINHASH_F1, f"copycat MinHash F1 {f1:.3f} (P {precision:.3f}, R {recall:.3f})"
    assert auc >= COPYCAT_MINHASH_AUC, f"copycat MinHash AUC {auc:.3f}"


def test_spotsigs_reposts_at_defaults_above_floor(tmp_path):
    from bench.reposts import gold_pages, make_settings, pair_scores, run_layout

    pages = gold_pages(DATA / "neardup" / "spotsigs-dev" / "GoldSetOfDuplicates")
    predicted, _ = run_layout("folder", pages, make_settings(), tmp_path)
    scores = pair_scores(predicted, pages)
    assert scores["F1"] >= SPOTSIGS_F1 and scores["P"] >= SPOTSIGS_PRECISION, f"spotsigs-dev at the defaults: {scores}"


def test_spotsigs_reposts_with_two_shared_bands_above_floor(tmp_path):
    """``minhash.min_bands = 2`` (the opt-in against chance candidates of long pages, issue 18)
    keeps the reposts at the defaults' floors (measured the same as the defaults: P 0.9953,
    R 0.9277, F1 0.9603)."""
    from bench.reposts import gold_pages, make_settings, pair_scores, run_layout

    pages = gold_pages(DATA / "neardup" / "spotsigs-dev" / "GoldSetOfDuplicates")
    predicted, _ = run_layout("folder", pages, make_settings(sets=["minhash.min_bands=2"]), tmp_path)
    scores = pair_scores(predicted, pages)
    assert scores["F1"] >= SPOTSIGS_F1 and scores["P"] >= SPOTSIGS_PRECISION, f"spotsigs-dev, min_bands 2: {scores}"
