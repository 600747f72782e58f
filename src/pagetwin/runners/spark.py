"""The Spark runner: the two passes of ``pagetwin dedup`` on Apache Spark (the only module that
imports pyspark). The driver (this process, ``pagetwin.app``) writes the index, matches and clusters, as with the
local engine; Spark reads and fingerprints the pages.

Work is distributed by input file: one partition per WARC/ARC/JSONL/HTML file given, and the
files of a folder grouped ``files_per_task`` to a partition (page ids stay relative to the folder
given, as with the local runner); a local WARC file larger than ``spark.split_bytes`` is one
partition per byte range, each read from a record boundary (sources.split: the ranges read each
record once, in the file's order; smaller ranges when the files given would leave cores idle,
``spark.tasks_per_core``); a URI's WARC file too, its ranges streamed by the executors' JVM
(runners.spark_ranges). Partitions come back in input order, so pages reach the driver
in the same order as with the local runner and get the same index rows.

Pass 1 (learn): each partition gives its pages' statistics, which are shuffled by site and
folded in input order (runners.spark_learn), so the models are the local engine's
(``learned.Learned.fit``: a byte-identical payload counted once over the whole input, a site's
pages counted in input order) however the inputs are cut into partitions; the driver merges the
tasks' models, whose sites are disjoint. With an
index that already stores pages (``--add``), the executors get a snapshot of what it stores and
skip those pages, as the local engine does (``engine.StoredPages``). Pass 2 (fingerprint): settings and the learned
models are broadcast, each partition runs ``Worker.fingerprint`` on its pages and returns the
results (no page bodies) and its SourceStats. Results are computed in parallel, kept by Spark
(memory, then disk) and streamed to the driver one partition at a time: the driver holds one
partition's results, never the whole run's.

Each page is read and parsed once (``run.reuse_parse``, the default): pass 1's partitions also
give their pages back without their HTML, carrying their parsed blocks (``Page.parsed``, as
runners.spill keeps them for the local runner), and their SourceStats. Spark keeps that RDD
(memory, then disk) between the passes; pass 2 maps ``Worker.fingerprint`` over it instead of
reading the inputs again, reports pass 1's counts, and drops it when done. Nothing of it goes to
the driver but the results, as above. With ``run.reuse_parse`` false pass 2 reads the inputs again.

With the link step on the executors (``learn_apart``, runners.spark_link) the site
templates stay on the executors too (runners.spark_learn.fold_apart: an RDD of (site, blob)),
and each of pass 2's partitions gets the blobs of the sites its pages are on, and no others:
pass 1 lists each partition's sites and counts its items (``_SITES``), the site blobs are
joined with those lists and shuffled to one partition per kept partition (``_site_side``), and
``RDD.zip`` puts that partition beside the kept one (a blob dict, then one None per further
item: zip pairs items one to one, which is why the kept RDD is pickled an item a batch). The
image hashes likewise (an RDD of (URL, phash)): pass 1 lists each partition's image URLs that
pass 2 may look up (html.images.looked_up_urls on its pages' parsed blocks, ``_SITES``), and
the partition gets those URLs' hashes beside its site blobs. The pages are not shuffled; the
driver holds the document frequencies (bounded by the vocabulary) and the settings, never a
site's counts or an image's hash. Without kept pages (``run.reuse_parse`` false) the site blobs
and image hashes are gathered on the driver and broadcast, as before.

Executors need pagetwin installed in the Python that runs them (``spark.pyspark.python``; by
default this process's interpreter, which is right for ``local[N]``).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from pagetwin.config import ConfigError, Settings
from pagetwin.engine import StoredPages, StoredSnapshot, worker_count
from pagetwin.fingerprints.hashing import name_hash
from pagetwin.learned import Learned, Learning
from pagetwin.model import Page
from pagetwin.pipeline import PageResult, Worker, is_text_only, needs_images
from pagetwin.sources import InputError, Skip, SourceStats, is_uri, iter_pages

MIN_SPLIT = 1 << 20  # no range smaller than this only to occupy the cores (spark.tasks_per_core)
INSTALL_HINT = "pip install 'pagetwin[spark]' (pyspark) and Java 17 or newer"

# A unit of work, one partition: (path, None) for an input file read as the local runner reads
# it, or (folder, [(file path, id relative to the folder), ...]) for some files of a folder.
# (path, (start, end)): one byte range of a large local WARC file (sources.split).
# (uri, (start, end, file size, first bytes)): one byte range of a URI's WARC file (runners.spark_ranges).
Unit = tuple[str, list[tuple[str, str]] | bytes | tuple[int, int] | tuple[int, int, int, bytes] | None]  # bytes: a URI's file, read by Spark

# Inputs given as URIs (sources.is_uri) are listed, globbed and read through Spark's Hadoop
# file systems.
_URI_MANIFESTS = (".paths", ".paths.gz")  # a .txt is not sniffed remotely: read as an input
_URI_FOLDER_FILES = (".warc", ".warc.gz", ".warc.zst", ".arc", ".arc.gz", ".jsonl", ".jsonl.gz", ".ndjson",
                     ".ndjson.gz", ".parquet")  # fmt: skip

log = logging.getLogger(__name__)


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


_LOG4J2 = """\
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.console.type = Console
appender.console.name = stderr
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.hadoop.name = org.apache.hadoop.util.NativeCodeLoader
logger.hadoop.level = error
"""


def _local_jvm_options(master: str | None) -> list[str]:
    """JVM options of a local-mode session, whose one JVM is the driver and the executors: the
    client compiler only and the serial collector. Its tasks' own JVM time is a few seconds (the
    pages are worked on in Python), the rest its own threads (compilers, collector): with these
    its CPU at 10,000 pages fell from 55 to 29 seconds (bench/spark_scale, local[2]), the same
    results. A cluster's executors are left to their defaults."""
    if not (master or "").startswith("local"):
        return []
    return ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def _log_config() -> str:
    """A log4j2 configuration file for the driver JVM: level WARN, on stderr."""
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"pagetwin-spark-log4j2-{os.getuid()}.properties")
    if not os.path.exists(path) or Path(path).read_text() != _LOG4J2:
        tmp = f"{path}.{os.getpid()}"
        Path(tmp).write_text(_LOG4J2)
        os.replace(tmp, path)
    return path


class SparkEngine:
    """Runs pass 1 (learn) and pass 2 (fingerprint) on Spark (``engine.Engine``; see
    pagetwin.app.dedup(engine=)).

    ``master``: a Spark master URL; default ``local[N]`` with N = settings.run.workers (all
    cores when 0), or the master given to spark-submit. ``conf``: extra Spark settings."""

    files_per_task = 256  # files of a folder per partition

    def __init__(self, master: str | None = None, app_name: str = "pagetwin", conf: dict[str, str] | None = None) -> None:
        try:
            import pyspark  # noqa: F401
        except ImportError as exc:
            raise ConfigError(f"--runner spark needs pyspark, which is not installed: {INSTALL_HINT}") from exc
        if _java() is None:
            raise ConfigError(f"--runner spark needs Java (no java on PATH or in JAVA_HOME): {INSTALL_HINT}")
        self.master = master
        self.app_name = app_name
        self.conf = dict(conf or {})
        self._session: Any = None
        self._owned = False
        self._kept: _KeptPages | None = None  # pass 1's pages, parsed, for pass 2
        self._said_whole = False  # the warning that URI files are read whole, given once
        atexit.register(self.close)

    # -- the session ----------------------------------------------------------------------

    def _context(self, settings: Settings) -> Any:
        if self._session is not None:
            return self._session.sparkContext
        from pyspark.sql import SparkSession

        had_session = SparkSession.getActiveSession() is not None
        builder = SparkSession.builder.appName(self.app_name)
        under_submit = "PYSPARK_GATEWAY_PORT" in os.environ  # spark-submit chose the master
        master = self.master or (None if under_submit else f"local[{worker_count(settings)}]")
        if master:
            builder = builder.master(master)
        defaults = {
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.driver.memory": "1g",
        }
        if master and master.startswith("local"):
            # No network needed (nor wanted) in local mode.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            defaults["spark.driver.host"] = "127.0.0.1"
            defaults["spark.driver.bindAddress"] = "127.0.0.1"
        if not under_submit:
            # Warnings and errors only, on stderr (Spark's default profile chatters at startup).
            defaults["spark.driver.extraJavaOptions"] = " ".join(
                [f"-Dlog4j2.configurationFile={_log_config()}", *_local_jvm_options(master)])
        # Executors run this interpreter (pyspark reads the variable, not spark.pyspark.python).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from pagetwin.runners.spark_ranges import jar

        conf = {**defaults, **self.conf}
        ranges_jar = None if under_submit else jar()  # URI files read by byte ranges (runners.spark_ranges)
        if ranges_jar:
            conf["spark.jars"] = ",".join(j for j in (self.conf.get("spark.jars"), ranges_jar) if j)
        for key, value in conf.items():
            builder = builder.config(key, value)
        try:
            self._session = builder.getOrCreate()
        except Exception as exc:  # noqa: BLE001 - Java missing, too old, or Spark misconfigured
            msg = " ".join(str(exc).split())[:300]
            raise ConfigError(f"could not start Spark ({type(exc).__name__}: {msg}); {INSTALL_HINT}") from exc
        self._owned = not had_session
        self._session.sparkContext.setLogLevel("WARN")
        return self._session.sparkContext

    def close(self) -> None:
        """Drop pass 1's kept pages; stop the SparkSession this engine started (one it found
        running is left alone)."""
        self._drop_kept()
        session, self._session = self._session, None
        if session is not None and self._owned:
            session.stop()

    # -- the partitions -------------------------------------------------------------------

    def units(self, inputs: list[str], stats: SourceStats, split_bytes: int = 0) -> list[Unit]:
        """One unit of work per input file, folders expanded to their files in the order the
        local runner reads them (sources.files.walk_inputs): up to ``files_per_task`` HTML files
        in a row make one unit, each WARC, ARC or JSONL file one unit, a local WARC file larger
        than ``split_bytes`` (spark.split_bytes; 0: none) one unit per byte range of it, in
        order (problems listing a folder, and the files it ignores, go to ``stats``)."""
        from pagetwin.sources.files import walk_inputs

        out: list[Unit] = []
        step = max(1, self.files_per_task)
        for path in inputs:
            if is_uri(path):
                out.extend(self._uri_units(path, split_bytes) if split_bytes > 0 else [(path, None)])
                continue
            if not os.path.isdir(path):
                out.extend(_file_units(path, split_bytes))
                continue
            run: list[tuple[str, str]] = []
            for file_path, rel, kind in walk_inputs(path, stats):
                if kind == "html":
                    run.append((file_path, rel))
                    if len(run) == step:
                        out.append((path, run))
                        run = []
                    continue
                if run:
                    out.append((path, run))
                    run = []
                out.extend(_file_units(file_path, split_bytes))
            if run:
                out.append((path, run))
        return out

    def _uri_units(self, uri: str, split_bytes: int) -> list[Unit]:
        """A URI file's units: (uri, (start, end, size, first bytes)) per byte range when it is a
        WARC file worth splitting and the session can stream ranges (runners.spark_ranges), else
        (uri, None): the file read whole."""
        from pagetwin.runners import spark_ranges

        sc = self._session.sparkContext if self._session is not None else None
        if sc is None or not spark_ranges.available(sc):
            if sc is not None and split_bytes > 0 and not self._said_whole:
                self._said_whole = True
                log.warning(
                    "pagetwin: URI files are read whole, one task a file: the byte-range reader is not in this "
                    "Spark session (it is built with the JDK's javac; under spark-submit give it with --jars, "
                    "README 'Spark')"
                )
            return [(uri, None)]
        planned = spark_ranges.plan(sc, uri, split_bytes)
        if planned is None or len(planned[0]) <= 1:
            return [(uri, None)]
        spans, size, head = planned
        return [(uri, (start, end, size, head)) for start, end in spans]

    def split_size(self, inputs: list[str], settings: Settings) -> int:
        """The byte ranges' size for the local WARC files given: spark.split_bytes, smaller
        (down to MIN_SPLIT) when they would otherwise make fewer than spark.tasks_per_core
        tasks a core (Spark's default parallelism): one 20 MB crawl is read by every core, not
        by one task while the others wait."""
        split, per_core = settings.spark.split_bytes, settings.spark.tasks_per_core
        if split <= 0 or per_core <= 0:
            return split
        total = 0
        for path in inputs:
            if not is_uri(path) and os.path.isfile(path):
                try:
                    total += os.path.getsize(path)
                except OSError:
                    pass  # the reader reports it
        wanted = per_core * max(1, self._context(settings).defaultParallelism)
        return min(split, max(MIN_SPLIT, -(-total // wanted)))

    def _run(self, settings: Settings, units: list[Unit], fn: Callable, shared: Any) -> Iterator[Any]:
        """``fn(broadcast, units)`` on every partition, results streamed in partition order."""
        sc = self._context(settings)
        shared = sc.broadcast((uuid.uuid4().hex, *shared))
        try:
            yield from _streamed(_units_rdd(sc, units, partial(fn, shared)))
        finally:
            shared.destroy()

    def _learn_keeping_pages(
        self, inputs: list[str], settings: Settings, units: list[Unit], unit_stats: SourceStats, shared: tuple,
        apart: bool = False,
    ) -> Any:
        """Pass 1's items per partition (runners.spark_learn.learn_items); the partitions' pages
        (parsed) and SourceStats stay with Spark for pass 2 (``self._kept``). ``apart``: the
        items and site lists kept apart from the pages too (for ``_site_side``), and the pages
        pickled one item a batch, as ``RDD.zip`` pairs them (the driver's link keeps Spark's
        batching)."""
        from pyspark import StorageLevel

        sc = self._context(settings)
        shared = sc.broadcast((uuid.uuid4().hex, *shared))
        lists_images = apart and shared.value[2].images  # the image URLs its pages look up, for _site_side
        rdd = _units_rdd(sc, units, partial(_learn_partition_keeping, shared, lists_images=lists_images), with_index=True, one_a_batch=apart)
        # On disk only: unrolled into the JVM's heap first (MEMORY_AND_DISK), the parsed pages of
        # two 128 MiB splits at a time ran a 2 GB heap out of memory at 100k pages (bench
        # spark_scale); pass 2 reads them once, in order, so memory would buy nothing.
        rdd.persist(StorageLevel.DISK_ONLY)
        # What pass 1's fold and the site lists read, apart from the pages: the fold reads its
        # items several times, and each read of ``rdd`` would unpickle every parsed page again.
        small = rdd.filter(_is_small) if apart else None
        if small is not None:
            small.persist(StorageLevel.DISK_ONLY)
        self._kept = _KeptPages(list(inputs), unit_stats, rdd, shared, small)
        # Folding the items computes (and keeps) the pages: one pass over the inputs.
        return (small if small is not None else rdd).filter(_is_learned).map(_value)

    @contextmanager
    def _learn_items(self, settings: Settings, units: list[Unit], shared: tuple) -> Iterator[Any]:
        """Pass 1's items per partition, without keeping the pages (``run.reuse_parse`` off),
        kept by Spark while they are folded."""
        from pyspark import StorageLevel

        sc = self._context(settings)
        shared = sc.broadcast((uuid.uuid4().hex, *shared))
        rdd = _units_rdd(sc, units, partial(_learn_partition, shared), with_index=True)
        rdd.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            yield rdd
        finally:
            rdd.unpersist()
            shared.destroy()

    def _drop_kept(self) -> None:
        kept, self._kept = self._kept, None
        if kept is not None and self._session is not None:
            if kept.small is not None:
                kept.small.unpersist()
            kept.rdd.unpersist()
            kept.shared.destroy()

    # -- the passes -----------------------------------------------------------------------

    def learn(
        self,
        inputs: list[str],
        settings: Settings,
        learning: Learning,
        previous: Learned | None = None,
        stored: StoredPages | None = None,
    ) -> Learned:
        """Pass 1 (``engine.Engine.learn``): the partitions' pages folded by site, in input order
        (runners.spark_learn: the local runner's model whatever the partitions), then
        ``previous``. The pages ``stored`` claims are skipped on the executors, which get all of
        it at once (``stored.snapshot()``, broadcast: the (id, source) of every stored page and
        every stored payload digest)."""
        return self._learn(inputs, settings, learning, previous, stored, apart=False)

    def learn_apart(self, inputs: list[str], settings: Settings, learning: Learning) -> Any:
        """Pass 1 for the link step on the executors (runners.spark_link): ``learn``'s model as a
        spark_learn.SiteModels, the site templates left on the executors for ``pass2_rdd``, so
        the driver never holds every site's counts. Not part of the engine protocol: only this
        engine links on its executors."""
        return self._learn(inputs, settings, learning, None, None, apart=True)

    def _learn(
        self,
        inputs: list[str],
        settings: Settings,
        learning: Learning,
        previous: Learned | None,
        stored: StoredPages | None,
        apart: bool,
    ) -> Any:
        from pagetwin.runners import spark_learn

        fold = spark_learn.fold_apart if apart else spark_learn.fold

        self._drop_kept()
        unit_stats = SourceStats()
        units = self.units(inputs, unit_stats, self.split_size(inputs, settings))
        if not units:
            empty = Learned.empty(settings, learning).merge(previous)
            return spark_learn.SiteModels(empty) if apart else empty
        shared = (settings, learning, _snapshot(stored))
        tasks = max(len(units), self._context(settings).defaultParallelism)  # the by-site fold's
        try:
            if settings.run.reuse_parse:
                items = self._learn_keeping_pages(inputs, settings, units, unit_stats, shared, apart)
                learned = fold(items, settings, learning, tasks)
            else:
                with self._learn_items(settings, units, shared) as items:
                    learned = fold(items, settings, learning, tasks)
        except BaseException:
            self._drop_kept()
            raise
        return learned if apart else learned.merge(previous)

    def fingerprint(
        self,
        inputs: list[str],
        settings: Settings,
        learned: Learned | None,
        stats: SourceStats,
        known: Callable[[Page], bool],
    ) -> Iterator[PageResult]:
        """Pass 2 over the pages that ``known`` does not claim, in input order (``known`` runs
        here, on the driver). ``stats`` gets every partition's counts. Stops the SparkSession
        when done. The pages pass 1 kept (same inputs, ``run.reuse_parse``) are fingerprinted
        without being read or parsed again."""
        kept = self._kept
        try:
            if kept is not None and kept.inputs == list(inputs) and settings.run.reuse_parse:
                stats.merge(kept.unit_stats)
                sc = self._context(settings)
                shared = sc.broadcast((uuid.uuid4().hex, settings, learned))
                results = _streamed(kept.rdd.mapPartitions(partial(_fingerprint_kept, shared)))
            else:
                self._drop_kept()
                units = self.units(inputs, stats, self.split_size(inputs, settings))
                if not units:
                    return
                shared = None
                results = self._run(settings, units, _fingerprint_partition, (settings, learned))
            try:
                for part_stats, result in results:
                    if part_stats is not None:
                        stats.merge(part_stats)
                    elif not known(result.page):
                        yield result
            finally:
                results.close()  # unpersist while the session is still up
                if shared is not None:
                    shared.destroy()
        finally:
            self.close()


    def context(self, settings: Settings) -> Any:
        """The SparkContext this engine runs on (started on first use)."""
        return self._context(settings)

    def readable_inputs(self, inputs: list[str], settings: Settings) -> tuple[list[str], list[str]]:
        """sources.readable_inputs for this runner: local paths as the local runner expands them,
        URIs (``file:``, ``hdfs:``, ``s3a:``) through Spark's Hadoop file systems (uri_inputs),
        in the order given. Raises InputError, naming every problem, when none can be read."""
        from pagetwin.sources import readable_inputs

        readable: list[str] = []
        problems: list[str] = []
        for path in inputs:
            if is_uri(path):
                found, trouble = uri_inputs(self._context(settings), path)
            else:
                try:
                    found, trouble = readable_inputs([path])
                except InputError as exc:
                    found, trouble = [], exc.problems or [f"{path}: cannot be read"]
            readable.extend(found)
            problems.extend(trouble)
        if not readable:
            raise InputError("; ".join(problems) or "no input given", problems)
        return readable, problems

    def pass2_rdd(
        self, inputs: list[str], settings: Settings, learned: Any, stats: SourceStats
    ) -> tuple[Any, Callable[[], None]]:
        """Pass 2 as an RDD left on the executors (runners.spark_link: the link step there),
        and what to call when done with it: items (None, PageResult) per page in input order,
        then (SourceStats, None) per partition. Pass 1's kept pages are used as ``fingerprint``
        uses them; ``stats`` gets the counts made on the driver (listing folders). ``learned``:
        a Learned, or the spark_learn.SiteModels of ``learn_apart``, whose site blobs go
        to the partitions that need them (module docstring)."""
        from pagetwin.runners.spark_learn import SiteModels

        sc = self._context(settings)
        kept = self._kept
        reuse = kept is not None and kept.inputs == list(inputs) and settings.run.reuse_parse
        apart = given = learned if isinstance(learned, SiteModels) else None
        nothing_apart = apart is not None and apart.sites is None and apart.images is None
        if apart is not None and (nothing_apart or not reuse or kept.small is None):
            learned = _gathered(apart, settings)  # no kept pages to zip with: the models broadcast
            apart = None
        shared = sc.broadcast((uuid.uuid4().hex, settings, apart.rest if apart is not None else learned))
        if reuse and apart is not None:
            stats.merge(kept.unit_stats)
            side = _site_side(kept.small, apart, kept.rdd.getNumPartitions(), max(1, sc.defaultParallelism))
            rdd = kept.rdd.zip(side).mapPartitions(partial(_fingerprint_kept_apart, shared))
        elif reuse:
            stats.merge(kept.unit_stats)
            rdd = kept.rdd.mapPartitions(partial(_fingerprint_kept, shared))
        else:
            self._drop_kept()
            units = self.units(inputs, stats, self.split_size(inputs, settings))
            rdd = _units_rdd(sc, units, partial(_fingerprint_partition, shared))

        def done() -> None:
            shared.destroy()
            self._drop_kept()
            if given is not None:
                given.unpersist()

        return rdd, done


class _KeptPages:
    """Pass 1's RDD of tagged items per partition (_learn_partition_keeping): (_LEARNED, pass-1
    item) ..., (_PAGE, page without HTML, parsed) or (_KNOWN, page) ..., (_SITES, ...),
    (_STATS, SourceStats); and what pass 2 needs with it."""

    def __init__(self, inputs: list[str], unit_stats: SourceStats, rdd: Any, shared: Any, small: Any) -> None:
        self.inputs = inputs
        self.unit_stats = unit_stats  # problems listing the folders (driver side)
        self.rdd = rdd
        self.shared = shared  # pass 1's broadcast: Spark may recompute a lost partition with it
        self.small = small  # its _LEARNED and _SITES items kept apart (no pages), for learn_apart


def _gathered(models: Any, settings: Settings) -> Learned:
    """The whole model of a spark_learn.SiteModels, its site blobs and image hashes brought to
    the driver (pass 2 without kept pages: nothing to zip them with, so they are broadcast as
    before)."""
    from pagetwin.html.templates import SiteTemplates

    rest = models.rest
    if models.sites is None and models.images is None:
        return rest
    log.info("pagetwin: pass 2 reads its inputs again (run.reuse_parse false): the site templates and image hashes are broadcast")
    templates = rest.templates
    if models.sites is not None:
        blobs = dict(models.sites.toLocalIterator())
        templates = SiteTemplates.from_site_blobs(blobs.get, lambda: sorted(blobs), settings.extract)
    images = dict(models.images.toLocalIterator()) if models.images is not None else {}
    return Learned(templates, rest.doc_freq, images, rest.learned_with)


def _site_side(small: Any, models: Any, partitions: int, n: int) -> Any:
    """The RDD zipped with the kept pages (module docstring): partition i is (the site blobs of
    kept partition i's sites, a dict, or None when templates were not learned; the hashes of
    the image URLs its pages may look up, a dict), then None for each further item of kept
    partition i. Sites and URLs are joined by xxhash (never Python's hash()) and compared."""
    wanted = small.filter(_is_sites).map(_value)  # (partition, its sites, its item count, its image URLs)
    parts = [wanted.map(lambda v: (v[0], (_COUNT, v[2])))]
    if models.sites is not None:
        need = wanted.flatMap(partial(_needs, 1, _BLOB))
        parts.append(need.join(models.sites.map(_by_hash), n).flatMap(_shipped))
    if models.images is not None:
        need = wanted.flatMap(partial(_needs, 3, _PHASH))
        parts.append(need.join(models.images.map(_by_hash), n).flatMap(_shipped))
    side = parts[0]
    for part in parts[1:]:
        side = side.union(part)
    side = side.partitionBy(partitions, _partition_of).mapPartitions(partial(_side_partition, models.sites is not None))
    return side._reserialize(_one_a_batch())


def _streamed(rdd: Any) -> Iterator[Any]:
    """All partitions of ``rdd`` computed at once and kept by Spark (memory, then disk), then
    streamed here one partition at a time, in order."""
    from pyspark import StorageLevel

    rdd.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        rdd.count()
        yield from rdd.toLocalIterator()
    finally:
        rdd.unpersist()


# -- what runs on the executors ------------------------------------------------------------

# The Worker of this Python worker process and the broadcast it was built for: one at a time
# (an earlier pass's worker is not needed again). Executor-side only; never set on the driver.
_current: tuple[str, Worker] | None = None


def _worker(
    token: str, settings: Settings, learned: Learned | None, keep_parsed: bool = False, learning: Learning | None = None
) -> Worker:
    global _current
    if _current is None or _current[0] != token:
        _current = (token, Worker(settings, learned, keep_parsed, learning))
    return _current[1]


# Tags of the items of pass 1's kept RDD; (_SITES, (partition index, its pages' sites, its
# number of items)) is the one but last item of a partition.
_PAGE, _STATS, _LEARNED, _KNOWN, _SITES = 0, 1, 2, 3, 4


def _is_learned(item: tuple[int, Any]) -> bool:
    return item[0] == _LEARNED


def _is_small(item: tuple[int, Any]) -> bool:
    return item[0] == _LEARNED or item[0] == _SITES


def _is_sites(item: tuple[int, Any]) -> bool:
    return item[0] == _SITES


def _one_a_batch() -> Any:
    """The serializer of the RDDs ``RDD.zip`` pairs item by item: each item its own batch (zip
    pairs batches; the default auto-batching sizes them by bytes, differently on each side)."""
    from pyspark.serializers import BatchedSerializer, CPickleSerializer

    return BatchedSerializer(CPickleSerializer(), 1)


# Kinds of _site_side's shuffled items: a site's blob, a URL's phash, the partition's item count.
_BLOB, _PHASH, _COUNT = 0, 1, 2


def _needs(field: int, kind: int, value: tuple) -> list[tuple[int, tuple[str, tuple[int, int]]]]:
    """(xxhash, (name, (partition, kind))) per site (``field`` 1) or image URL (``field`` 3) of
    a partition's _SITES item."""
    index = value[0]
    return [(name_hash(name), (name, (index, kind))) for name in value[field]]


def _by_hash(pair: tuple[str, Any]) -> tuple[int, tuple[str, Any]]:
    return name_hash(pair[0]), pair


def _shipped(joined: tuple[int, tuple[tuple[str, tuple[int, int]], tuple[str, Any]]]) -> list[tuple[int, tuple[int, Any]]]:
    _, ((name, (index, kind)), (have, value)) = joined
    return [(index, (kind, (name, value)))] if name == have else []  # a 64-bit collision: another name


def _partition_of(index: int) -> int:
    return index


def _side_partition(
    templates: bool, items: Iterable[tuple[int, tuple[int, Any]]]
) -> Iterator[tuple[dict[str, bytes] | None, dict[str, int]] | None]:
    blobs: dict[str, bytes] = {}
    images: dict[str, int] = {}
    count = 0
    for _, (kind, value) in items:
        if kind == _BLOB:
            blobs[value[0]] = value[1]
        elif kind == _PHASH:
            images[value[0]] = value[1]
        else:
            count = value
    yield blobs if templates else None, images
    for _ in range(count - 1):
        yield None


def _value(item: tuple[int, Any]) -> Any:
    return item[1]


def _snapshot(stored: StoredPages | None) -> StoredSnapshot | None:
    """What the executors need of ``stored`` (None when it stores nothing)."""
    if stored is None:
        return None
    snapshot = stored if isinstance(stored, StoredSnapshot) else stored.snapshot()
    return snapshot if snapshot.pages or snapshot.digests else None


def _learned_from(
    pages: Iterable[Page], worker: Worker, stored: StoredSnapshot | None, spill: Any = None
) -> Iterator[tuple[Page, Any]]:
    """(page, Worker.learn(page)) for the pages to learn from: a stored page is skipped (kept
    in ``spill`` without its body), a page whose payload is stored is parsed (and kept) but not
    learned from."""
    for page in pages:
        if stored is not None and page.kind != "image" and stored.stored(page):
            if spill is not None:
                spill.add(replace(page, body=b""), b"")
            continue
        record = worker.learn(page)
        if spill is not None:
            spill.add(page, record.parsed)
        if stored is not None and page.kind != "image" and page.payload_digest and stored.counted(page.payload_digest):
            continue
        yield page, record


def _learn_partition(shared: Any, index: int, units: Iterable[Unit]) -> Iterator[tuple[int, Any]]:
    """The partition's pass-1 items (runners.spark_learn.learn_items; ``index``: its place in
    the input)."""
    from pagetwin.runners.spark_learn import learn_items

    token, settings, learning, stored = shared.value
    worker = _worker(token, settings, None, learning=learning)
    pages = (page for unit in units for page in unit_pages(unit, settings, SourceStats(), learning.images))
    yield from learn_items(index, _learned_from(pages, worker, stored))


def _learn_partition_keeping(
    shared: Any, index: int, units: Iterable[Unit], lists_images: bool = False
) -> Iterator[tuple[int, Any]]:
    """Pass 1 of partition ``index`` keeping its pages for pass 2: (_LEARNED, item) per item of
    runners.spark_learn.learn_items, then (_PAGE, page) per page that is not an image record
    (its HTML replaced by its parsed blocks; a page that did not parse keeps its HTML;
    (_KNOWN, page) for a page the index stores, not parsed), then (_SITES, (index, its pages'
    sites, its item count, the image URLs its pages may look up when ``lists_images``, else
    [])), then (_STATS, SourceStats).

    The pages wait in a temporary file (runners.spill, bounded memory) while pass 1 reads the
    partition; if it cannot be written, the partition's pages are read again unparsed and pass
    2 parses them."""
    from pagetwin.html.templates import page_site
    from pagetwin.runners.spark_learn import learn_items
    from pagetwin.runners.spill import ParsedSpill

    token, settings, learning, stored = shared.value
    worker = _worker(token, settings, None, keep_parsed=True, learning=learning)
    units = list(units)
    stats = SourceStats()
    count, sites, urls = 0, set(), set()

    with ParsedSpill(settings.run.temp_dir) as spill:
        pages = (page for unit in units for page in unit_pages(unit, settings, stats, learning.images))
        for item in learn_items(index, _learned_from(pages, worker, stored, spill)):
            count += 1
            yield _LEARNED, item
        spill.finish()
        if spill.failed:
            stats.error(f"{spill.failed}; pass 2 parses these pages again")
            kept = (page for unit in units for page in unit_pages(unit, settings, SourceStats(), learning.images))
        else:
            kept = spill.replay()
        for page in kept:
            if page.kind != "image":
                tag = _KNOWN if stored is not None and stored.stored(page) else _PAGE
                if tag == _PAGE:
                    sites.add(page_site(page, settings.extract))
                    if lists_images:
                        urls.update(page_image_urls(worker, page))
                count += 1
                yield tag, page
    yield _SITES, (index, sorted(sites), count + 2, sorted(urls))  # counting itself and the stats
    yield _STATS, stats


def page_image_urls(worker: Worker, page: Page) -> set[str]:
    """The image URLs pass 2 may look up for this page (html.images.looked_up_urls on its
    blocks' images: every main-content image is one of them, whatever the templates keep);
    explain reads only these URLs' hashes too."""
    from pagetwin.html.images import looked_up_urls

    if page.kind != "response" or is_text_only(page):
        return set()
    try:
        parsed = worker.parse(page)  # pass 1's blocks (page.parsed); parsed now only if none were kept
    except Exception:  # noqa: BLE001 - pass 2 reports a page that cannot be parsed
        return set()
    return looked_up_urls([raw for _, raw in parsed.blocks.images], page.url, worker.image_urls)


def _fingerprint_kept(
    shared: Any, items: Iterable[tuple[int, Any]]
) -> Iterator[tuple[SourceStats | None, PageResult | None]]:
    """Pass 2 over a partition pass 1 kept: as _fingerprint_partition, pass 1's counts."""
    token, settings, learned = shared.value
    yield from _fingerprint_kept_with(_worker(token, settings, learned), items)


def _fingerprint_kept_with(worker: Worker, items: Iterable[tuple[int, Any]]) -> Iterator[tuple[SourceStats | None, PageResult | None]]:
    for tag, value in items:
        if tag == _PAGE:
            yield None, worker.fingerprint(value)
        elif tag == _KNOWN:  # the driver's ``known`` claims it: not fingerprinted
            yield None, PageResult(value, None, {}, {})
        elif tag == _STATS:
            yield value, None


def _fingerprint_kept_apart(
    shared: Any, pairs: Iterable[tuple[tuple[int, Any], tuple[dict[str, bytes] | None, dict[str, int]] | None]]
) -> Iterator[tuple[SourceStats | None, PageResult | None]]:
    """_fingerprint_kept over the kept items zipped with ``_site_side``: the first pair brings
    the site blobs of the partition's sites and the hashes of its image URLs, which make the
    worker's model until the next partition's."""
    from pagetwin.html.templates import SiteTemplates

    token, settings, rest = shared.value
    worker = _worker(token, settings, rest)

    def items() -> Iterator[tuple[int, Any]]:
        for item, side in pairs:
            if side is not None:
                blobs, images = side
                templates = rest.templates
                if blobs is not None:
                    templates = SiteTemplates.from_site_blobs(blobs.get, lambda: sorted(blobs), settings.extract)
                worker.learned = Learned(templates, rest.doc_freq, images, rest.learned_with)
            yield item

    yield from _fingerprint_kept_with(worker, items())


def _fingerprint_partition(shared: Any, units: Iterable[Unit]) -> Iterator[tuple[SourceStats | None, PageResult | None]]:
    """(None, result) per page (image records are read for pass 1 only), then (stats, None)."""
    token, settings, learned = shared.value
    worker = _worker(token, settings, learned)
    want_images = needs_images(settings)
    stats = SourceStats()
    for unit in units:
        for page in unit_pages(unit, settings, stats, want_images):
            if page.kind != "image":
                yield None, worker.fingerprint(page)
    yield stats, None


def uri_inputs(sc: Any, uri: str) -> tuple[list[str], list[str]]:
    """(the files of one input URI, problems), asked of its Hadoop file system: a glob's matches
    (sorted), a folder's WARC/ARC/JSONL/Parquet files (recursively, sorted; HTML folders are
    read from local paths only), a manifest's (``*.paths``, ``*.paths.gz``) listed paths (a
    relative one relative to the manifest's folder, each checked to exist), else the file."""
    jvm = sc._jvm
    conf = sc._jsc.hadoopConfiguration()
    try:
        path = jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(conf)
        statuses = sorted(fs.globStatus(path) or [], key=lambda st: st.getPath().toString())
    except Exception as exc:  # noqa: BLE001 - py4j's error: no file system for the scheme, bad URI
        return [], [f"{uri}: cannot be listed through Spark's Hadoop file systems ({_java_message(exc)})"]
    if not statuses:
        return [], [f"{uri}: no such file or directory"]
    files: list[str] = []
    problems: list[str] = []
    for status in statuses:
        found = status.getPath()
        name = found.toString()
        if status.isDirectory():
            listing, walked = fs.listFiles(found, True), []
            while listing.hasNext():
                walked.append(listing.next().getPath().toString())
            files.extend(sorted(f for f in walked if f.lower().endswith(_URI_FOLDER_FILES)))
        elif name.lower().endswith(_URI_MANIFESTS):
            listed, trouble = _uri_manifest(sc, fs, found)
            files.extend(listed)
            problems.extend(trouble)
        else:
            files.append(name)
    return files, problems


def _uri_manifest(sc: Any, fs: Any, manifest: Any) -> tuple[list[str], list[str]]:
    """(the paths a manifest on a Hadoop file system lists, problems); read by Spark (textFile
    decompresses ``.gz``), as sources.expand_inputs reads a local one."""
    Path = sc._jvm.org.apache.hadoop.fs.Path
    name = manifest.toString()
    try:
        lines = sc.textFile(name, 1).collect()
    except Exception as exc:  # noqa: BLE001 - py4j's error: unreadable, not gzip
        return [], [f"{name}: cannot be read as a list of paths ({_java_message(exc)})"]
    paths, problems = [], []
    for lineno, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        listed = Path(manifest.getParent(), Path(line)) if not is_uri(line) else Path(line)
        try:
            there = listed.getFileSystem(sc._jsc.hadoopConfiguration()).isFile(listed)
        except Exception as exc:  # noqa: BLE001 - py4j's error
            problems.append(f"{line}: cannot be read ({_java_message(exc)}) (listed in {name}:{lineno})")
            continue
        if there:
            paths.append(listed.toString())
        else:
            problems.append(f"{listed.toString()}: no such file (listed in {name}:{lineno})")
    if not paths and not problems:
        problems.append(f"{name}: lists no paths")
    return paths, problems


def _file_units(path: str, split_bytes: int) -> list[Unit]:
    """The units of one local input file: its byte ranges when it is a WARC file worth
    splitting (sources.split.file_ranges), else the file whole."""
    from pagetwin.sources.split import file_ranges

    try:
        spans = file_ranges(path, split_bytes) if split_bytes > 0 and os.path.getsize(path) > split_bytes else []
    except OSError:
        spans = []  # read whole: the reader reports what is wrong with it
    if len(spans) <= 1:
        return [(path, None)]
    return [(path, span) for span in spans]


def _java_message(exc: Exception) -> str:
    """The first line of a py4j error's Java message (not its stack)."""
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    return " ".join(text.split())[:200]


def _units_rdd(sc: Any, units: list[Unit], fn: Callable, with_index: bool = False, one_a_batch: bool = False) -> Any:
    """``fn(units)`` (``fn(partition index, units)`` ``with_index``) on one partition per unit,
    in order: local units as they are; a URI's byte range as (uri, spark_ranges.RangeChunks),
    its bytes streamed by the executor's JVM; another URI's file read whole by Spark's Hadoop
    file systems (``binaryFiles``) as (uri, its bytes). ``fn`` runs on each part before the
    union: a range's stream lives in its own task. ``one_a_batch``: ``fn``'s items pickled one
    a batch (``_one_a_batch``; set in each part's own task, so the union adds no step)."""
    from pagetwin.runners.spark_ranges import ranges_rdd

    parts: list[tuple[Any, int]] = []  # (rdd of units, its partitions)
    run: list[Unit] = []
    i = 0
    while i < len(units):
        path, files = units[i]
        if not is_uri(path):
            run.append(units[i])
            i += 1
            continue
        if run:
            parts.append((sc.parallelize(run, len(run)), len(run)))
            run = []
        if isinstance(files, tuple):  # the byte ranges of one URI file, in a row
            spans = []
            while i < len(units) and units[i][0] == path and isinstance(units[i][1], tuple):
                spans.append(units[i][1][:2])
                i += 1
            _, _, size, head = files
            parts.append((ranges_rdd(sc, path, spans, size, head), len(spans)))
            continue
        parts.append((sc.binaryFiles(path, 1).coalesce(1).map(lambda kv, uri=path: (uri, kv[1])), 1))
        i += 1
    if run or not parts:
        parts.append((sc.parallelize(run, max(1, len(run))), max(1, len(run))))
    mapped, base = [], 0
    for rdd, count in parts:
        if with_index:
            mapped.append(rdd.mapPartitionsWithIndex(lambda j, it, base=base: fn(base + j, it)))
        else:
            mapped.append(rdd.mapPartitions(fn))
        if one_a_batch:
            mapped[-1] = mapped[-1]._reserialize(_one_a_batch())
        base += count
    return mapped[0] if len(mapped) == 1 else sc.union(mapped)


def _uri_pages(uri: str, data: bytes, settings: Settings, stats: SourceStats, want_images: bool) -> Iterator[Page]:
    """The pages of a file read through Hadoop (its bytes): written under its own name (which
    tells the readers its kind and names records without an id) in a local temporary folder and
    read as the local runner reads a file; the pages' source and the file's messages name the URI."""
    import tempfile

    folder = tempfile.mkdtemp(prefix="pagetwin-")
    tmp = os.path.join(folder, uri.rstrip("/").rsplit("/", 1)[-1] or "input")
    before = len(stats.errors)
    try:
        with open(tmp, "wb") as out:
            out.write(data)
        del data
        for page in iter_pages([tmp], settings.input, stats, want_images):
            yield replace(page, source=uri)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        stats.errors[before:] = [e.replace(tmp, uri) for e in stats.errors[before:]]


def unit_pages(unit: Unit, settings: Settings, stats: SourceStats, want_images: bool) -> Iterator[Page]:
    """The pages of one unit of work, counted in ``stats`` as sources.iter_pages counts them."""
    from pagetwin.sources.files import folder_site, read_html_file

    from pagetwin.runners.spark_ranges import RangeChunks, range_pages as uri_range_pages

    path, files = unit
    if isinstance(files, bytes):
        yield from _uri_pages(path, files, settings, stats, want_images)
        return
    if isinstance(files, RangeChunks):  # a byte range of a URI's file, streamed by the JVM
        yield from uri_range_pages(path, files, settings, stats, want_images)
        return
    if files is None:
        yield from iter_pages([path], settings.input, stats, want_images)
        return
    if isinstance(files, tuple):  # a byte range of a WARC file
        from pagetwin.sources.split import range_pages

        yield from range_pages(path, *files, settings.input, stats, want_images)
        return
    site = folder_site(path)
    for file_path, page_id in files:
        try:
            try:
                item = read_html_file(file_path, page_id, settings.input, site)
            except OSError as exc:
                stats.error(f"{file_path}: cannot read ({exc.strerror or exc})")
                item = Skip("unreadable-file", page_id)
        except Exception as exc:  # noqa: BLE001 - bad data must not stop the run
            msg = " ".join(str(exc).split())[:200]
            stats.error(f"{file_path}: reading stopped ({type(exc).__name__}: {msg})")
            continue
        if isinstance(item, Skip):
            stats.skip(item.reason, "", item.detail)
        else:
            stats.count_page(item)
            yield item


def folder_files(folder: str, stats: SourceStats) -> list[tuple[str, str]]:
    """(path, id) of every .html/.htm file under ``folder``, in the order the local runner
    reads them (sources.files.walk_folder)."""
    from pagetwin.sources.files import walk_folder

    return list(walk_folder(folder, stats))
