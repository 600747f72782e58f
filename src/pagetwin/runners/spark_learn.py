"""Pass 1's fold on Spark, by site: the models the local runner's ``Learned.fit`` makes over the
whole input, however the input is cut into partitions.

Why not fit each partition and merge the models: ``Learned.fit`` counts a byte-identical
payload once over the whole input (its first copy in input order), and ``SiteTemplates.fit``
skips a page whose content is on pages of its site already counted. Fitted per partition, a
payload is counted once per partition and a site's near-copies once per partition: a crawl in
several WARC files (or one file read in byte ranges) whose sites span them learned other
templates than the local runner, so the main texts, and then the clusters, differed.

So each input partition gives, for the pages ``Learned.fit`` would see (``learn_items``):
a record (input position, site, payload key, LearnRecord without its parsed blocks) for a page
with something to count, a digest item for a page with a payload digest and nothing to count
(its payload still counts as seen, as in ``Learned.fit``), and at the end the hashes of its
image records. Then (``fold``):

1. the first position of every payload key (a reduce over small tuples), and a marker for each
   later copy of a page that has a record;
2. records and markers shuffled by site (xxhash of the site) and sorted by (site, position,
   marker first): every task folds whole sites, each in input order, a marker just before the
   record it drops (``_fold_sites``); a task streams its records (Spark's sort spills to
   disk) and holds only the counts of its sites (``SiteTemplates``, bounded per site);
3. the tasks' models (their sites are disjoint) merged on the driver, the image hashes merged
   in partition order (a later URL's hash wins, as in input order).

``fold_apart`` is the same fold, the site templates and image hashes left on the executors:
step 3 keeps an RDD of (site, ``SiteTemplates.site_blobs``' blob), the image hashes an RDD of
(normalised URL, phash), a URL's hash the one of its last partition (``_image_hashes``: the
same as merging in partition order), and only what is bounded by the vocabulary (document
frequencies, merged as ``fold`` merges them) comes to the driver (``SiteModels``). A crawl's
site templates grow with its sites (each capped by ``extract.max_hashes_per_site``), its image
hashes with its image records: millions of hosts or images would not fit a driver (issue 18).

Positions are (partition index, index in the partition): the partitions are the inputs in order.
What can still differ from the local runner: ``SiteTemplates`` folds its buffered pages every
1,000 pages over all the sites of a task, so a site over ``extract.max_hashes_per_site`` block
hashes may be pruned at other moments, and the templates report may sample other texts.
``fold_in_process`` is the same fold in this process (tests: the executors' code without Spark).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from pagetwin.config import Settings
from pagetwin.fingerprints.base import key64
from pagetwin.fingerprints.hashing import name_hash
from pagetwin.learned import Learned, Learning, LearnRecord
from pagetwin.model import Page

# Items of learn_items: (_RECORD, (pos, site, payload key or 0, record)), (_DIGEST, (pos, payload key)),
# (_IMAGES, {url: phash}).
_RECORD, _DIGEST, _IMAGES = 0, 1, 2
_DROP, _KEEP = 0, 1  # the last part of a shuffled key: a later copy's marker sorts before its record


class _Uncopied:
    """What ``Learned.fit`` reads of a page whose copies are already dropped: no payload digest."""

    payload_digest = ""


def learn_items(index: int, records: Iterable[tuple[Page, LearnRecord]]) -> Iterator[tuple[int, Any]]:
    """The items of input partition ``index`` from its (page, LearnRecord) in input order (the
    pages ``Learned.fit`` would be given)."""
    images: dict[str, int] = {}
    for i, (page, record) in enumerate(records):
        pos = (index, i)
        if record.image is not None:
            images[record.image.url] = record.image.phash
        digest = key64(page.payload_digest) if page.payload_digest else 0
        if record.stats is not None or record.words is not None:
            yield _RECORD, (pos, record.site, digest, record._replace(parsed=b"", image=None))
        elif digest:
            yield _DIGEST, (pos, digest)
    if images:
        yield _IMAGES, images


def fold(items: Any, settings: Settings, learning: Learning, partitions: int) -> Learned:
    """The model of an RDD of ``learn_items`` (steps in the module docstring), shuffled into
    ``partitions`` tasks by site."""
    from pyspark import StorageLevel

    learned = _fold_models(items, settings, learning, partitions)
    for images in items.filter(_is(_IMAGES)).map(_value).toLocalIterator():  # in partition order
        learned.image_hashes.update(images)
    return learned


def _fold_models(items: Any, settings: Settings, learning: Learning, partitions: int) -> Learned:
    """``fold``'s model without the image hashes."""
    from pyspark import StorageLevel

    learned = Learned.empty(settings, learning)
    if learning.templates or learning.doc_freq:
        by_site = _by_site(items, partitions)
        models = by_site.mapPartitions(partial(_fold_sites, settings, learning))
        models.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            models.count()  # every task folds at once (toLocalIterator runs one job a partition)
            for blob in models.toLocalIterator():
                learned = Learned.from_bytes(blob, settings).merge(learned)
        finally:
            models.unpersist()
    else:
        items.count()  # the partitions computed at once (Spark keeps them), then read in order
    return learned


@dataclass
class SiteModels:
    """Pass 1's models with the site templates and image hashes on the executors
    (``fold_apart``): ``rest`` (document frequencies, the settings learned with; no templates,
    no image hashes), ``sites`` an RDD of (site, site blob) kept by Spark (None when templates
    were not learned), how many sites it holds, and ``images`` an RDD of (normalised image URL,
    phash) kept by Spark (None when the crawl gave no image hashes)."""

    rest: Learned
    sites: Any = None
    count: int = 0
    images: Any = None

    def unpersist(self) -> None:
        for rdd in (self.sites, self.images):
            if rdd is not None:
                rdd.unpersist()


def fold_apart(items: Any, settings: Settings, learning: Learning, partitions: int) -> SiteModels:
    """``fold``'s model, its site templates and image hashes left on the executors (the module
    docstring)."""
    from pyspark import StorageLevel

    images = _image_hashes(items, partitions) if learning.images else None
    try:
        if not learning.templates:
            models = SiteModels(_fold_models(items, settings, learning, partitions))
        else:
            models = _fold_sites_kept(items, settings, learning, partitions)
        if images is not None:
            images.persist(StorageLevel.MEMORY_AND_DISK)
            if not images.count():  # no image record gave a hash: pass 2 needs no side for them
                images.unpersist()
                images = None
    except BaseException:
        if images is not None:
            images.unpersist()
        raise
    models.images = images
    return models


def _fold_sites_kept(items: Any, settings: Settings, learning: Learning, partitions: int) -> SiteModels:
    from pyspark import StorageLevel

    rest = Learned.empty(settings, replace(learning, templates=False))
    by_site = _by_site(items, partitions)
    models = by_site.mapPartitions(partial(_fold_sites_apart, settings, learning))
    models.persist(StorageLevel.MEMORY_AND_DISK)
    sites = models.filter(_is(_SITE)).map(_value)
    sites.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        count = sites.count()  # every task folds at once; the sites are kept from here
        for blob in models.filter(_is(_REST)).map(_value).toLocalIterator():  # in task order, as fold merges
            rest = Learned.from_bytes(blob, settings).merge(rest)
    except BaseException:
        sites.unpersist()
        raise
    finally:
        models.unpersist()
    return SiteModels(rest, sites, count)


def _image_hashes(items: Any, partitions: int) -> Any:
    """The RDD of (normalised image URL, phash) of the items' image records: a URL's hash from
    the last partition that has one (a partition's own dict holds its last), as ``fold``'s
    updates in partition order leave it. Shuffled by xxhash of the URL (never Python's hash())."""
    by_url = items.mapPartitionsWithIndex(_indexed_images)
    return by_url.reduceByKey(max, max(1, partitions), name_hash).mapValues(_value)


def _indexed_images(index: int, items: Iterable[tuple[int, Any]]) -> Iterator[tuple[str, tuple[int, int]]]:
    for tag, value in items:
        if tag == _IMAGES:
            yield from ((url, (index, phash)) for url, phash in value.items())


def fold_in_process(parts: Iterable[Iterable[tuple[int, Any]]], settings: Settings, learning: Learning) -> Learned:
    """``fold`` without Spark: ``parts`` are the partitions' ``learn_items``, in order; one task."""
    items = [item for part in parts for item in part]
    learned = Learned.empty(settings, learning)
    for tag, value in items:
        if tag == _IMAGES:
            learned.image_hashes.update(value)
    firsts: dict[int, tuple[int, int]] = {}
    for digest, pos in (pair for item in items for pair in _digest_of(item)):
        firsts[digest] = min(pos, firsts.get(digest, pos))
    records = [value for tag, value in items if tag == _RECORD]
    later = [m for r in records for d, copy in _copy_of(r) for m in _marker_if_later((d, (copy, firsts[d])))]
    keyed = sorted([_keyed(r) for r in records] + later, key=lambda kv: kv[0])
    for blob in _fold_sites(settings, learning, keyed):
        learned = Learned.from_bytes(blob, settings).merge(learned)
    return learned


def _by_site(items: Any, partitions: int) -> Any:
    """Steps 1 and 2: the records and later copies' markers by site, sorted (site, position)."""
    records = items.filter(_is(_RECORD)).map(_value)
    firsts = items.flatMap(_digest_of).reduceByKey(min)
    later = records.flatMap(_copy_of).join(firsts).flatMap(_marker_if_later)
    keyed = records.map(_keyed).union(later)
    return keyed.repartitionAndSortWithinPartitions(max(1, partitions), _site_partition)


# -- the steps (they run on the executors) ---------------------------------------------------


def _is(tag: int) -> Any:
    return lambda item: item[0] == tag


def _value(item: tuple[int, Any]) -> Any:
    return item[1]


def _digest_of(item: tuple[int, Any]) -> list[tuple[int, tuple[int, int]]]:
    """(payload key, position) of a record or digest item that has a payload."""
    tag, value = item
    if tag == _RECORD and value[2]:
        return [(value[2], value[0])]
    if tag == _DIGEST:
        return [(value[1], value[0])]
    return []


def _copy_of(record: tuple) -> list[tuple[int, tuple[str, tuple[int, int]]]]:
    pos, site, digest, _ = record
    return [(digest, (site, pos))] if digest else []


def _marker_if_later(joined: tuple[int, tuple[tuple[str, tuple[int, int]], tuple[int, int]]]) -> list[tuple]:
    _, ((site, pos), first) = joined
    return [((site, pos, _DROP), None)] if pos != first else []


def _keyed(record: tuple) -> tuple[tuple, LearnRecord]:
    pos, site, _, learn_record = record
    return (site, pos, _KEEP), learn_record


def _site_partition(key: tuple) -> int:
    """A shuffled key's task: its site's."""
    return name_hash(key[0])


def _fold_sites(settings: Settings, learning: Learning, keyed: Iterable[tuple[tuple, Any]]) -> Iterator[bytes]:
    """One task's model: ``Learned.fit`` over its records in (site, position) order, without the
    later copies the markers name."""
    yield Learned.fit(_firsts(keyed), settings, learning).to_bytes()


_SITE, _REST = 0, 1  # items of _fold_sites_apart: (site, blob) of one site; the rest of a task's model


def _fold_sites_apart(settings: Settings, learning: Learning, keyed: Iterable[tuple[tuple, Any]]) -> Iterator[tuple]:
    """``_fold_sites``' model cut apart: (_SITE, (site, site blob)) per site, then (_REST, the
    model without its templates)."""
    learned = Learned.fit(_firsts(keyed), settings, learning)
    if learned.templates is not None:
        yield from ((_SITE, pair) for pair in learned.templates.site_blobs())
    yield _REST, Learned(None, learned.doc_freq, {}, learned.learned_with).to_bytes()


def _firsts(keyed: Iterable[tuple[tuple, Any]]) -> Iterator[tuple[_Uncopied, LearnRecord]]:
    dropped = None
    for (site, pos, kind), record in keyed:
        if kind == _DROP:
            dropped = (site, pos)
        elif (site, pos) != dropped:
            yield _UNCOPIED, record


_UNCOPIED = _Uncopied()
