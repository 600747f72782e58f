"""runners/spark_learn.py: pass 1 folded by site gives the local runner's model however the
input is cut into partitions (in this process, the executors' code without Spark), and a crawl
whose sites span two WARC files gives the local runner's clusters and pairs through Spark."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagetwin.config import Settings
from pagetwin.learned import Learned, Learning
from pagetwin.pipeline import Worker
from pagetwin.runners.spark_learn import fold_in_process, learn_items
from pagetwin.sources import SourceStats, iter_pages

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "debian-docs.warc.gz"


def _canonical(learned: Learned) -> tuple:
    """What pass 2 reads of a model, site by site (not the templates report's sample texts)."""
    templates = learned.templates.compact()
    sites = []
    for site in sorted(templates.sites_):
        c = templates.sites_[site]
        sites.append((site, c.pages, c.copies, c.pruned_below, c.hash_keys.tolist(), c.hash_pages.tolist(),
                      c.slot_keys.tolist(), c.slot_pages.tolist(), c.slot_kept.tolist()))  # fmt: skip
    df = learned.doc_freq
    return sites, (df.n_docs_, sorted(df.df_.items())) if df is not None else None, learned.image_hashes


@pytest.fixture(scope="module")
def example_records():
    """(settings, learning, (page, LearnRecord) of every page of the example crawl, in order),
    with document frequencies learned too (the keyword algorithms want them)."""
    s = Settings()
    s.set("match.algorithms", ["exact", "con-w", "minhash"])
    learning = Learning(templates=True, doc_freq=True, images=False)
    worker = Worker(s, None, learning=learning)
    pages = list(iter_pages([str(EXAMPLE)], s.input, SourceStats()))
    return s, learning, [(page, worker.learn(page)) for page in pages]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(min_value=0, max_value=170), max_size=6), shuffle_sites=st.booleans())
def test_any_partitioning_folds_to_the_whole_inputs_model(example_records, cuts, shuffle_sites):
    s, learning, records = example_records
    if shuffle_sites:  # the same pages, another input order: the model is that order's
        records = records[1::2] + records[0::2]
    bounds = sorted({0, len(records), *(min(c, len(records)) for c in cuts)})
    parts = [list(learn_items(i, records[a:b])) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    assert _canonical(fold_in_process(parts, s, learning)) == _canonical(Learned.fit(records, s, learning))


def test_a_later_copy_on_another_site_is_not_counted(example_records):
    """A byte-identical payload counts once, at its first copy in input order, even when the
    copy is in another partition and on another site (so it sorts before the first)."""
    s, learning, records = example_records
    page, record = next((p, r) for p, r in records if r.stats is not None and p.payload_digest)
    copy = (page, record._replace(site="0-first-in-site-order.example"))
    parts = [list(learn_items(0, records)), list(learn_items(1, [copy]))]
    ours = fold_in_process(parts, s, learning)
    assert "0-first-in-site-order.example" not in ours.templates.sites_
    assert _canonical(ours) == _canonical(Learned.fit([*records, copy], s, learning))


def _split_alternately(warc: Path, a: Path, b: Path) -> None:
    """Two WARC files of ``warc``'s gzip members, records alternating (the first, warcinfo, in both)."""
    data, members, at = warc.read_bytes(), [], 0
    while at < len(data):
        d = zlib.decompressobj(31)
        d.decompress(data[at:])
        end = len(data) - len(d.unused_data)
        members.append(data[at:end])
        at = end
    a.write_bytes(members[0] + b"".join(members[1::2]))
    b.write_bytes(members[0] + b"".join(members[2::2]))


def test_sites_spanning_two_files_give_the_local_runners_outputs(tmp_path):
    from tests.runners.test_spark import _need_spark

    from pagetwin.cli import main

    _need_spark()
    a, b = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    _split_alternately(EXAMPLE, a, b)
    args = [str(a), str(b)]
    assert main(["dedup", *args, "--out", str(tmp_path / "local"), "--workers", "1"]) == 0
    assert main(["dedup", *args, "--out", str(tmp_path / "spark"), "--runner", "spark", "--spark-master", "local[2]"]) == 0
    for name in ("clusters.jsonl", "pairs.jsonl"):
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
