"""What a run with ``spark.link = executors`` leaves under ``spark.output``, read back without
Spark (pyarrow), and the one part of it that this module writes: ``models.parquet``.

``models.parquet/`` holds pass 1's merged learned models and the settings, as rows (name,
site, data): a row per site of the site templates (``site_templates``, the site,
``SiteTemplates.site_blobs``' blob of its counts) and a header row (``site_templates``, null,
JSON), so that no Parquet cell or Spark task carries a crawl's every site (tens of millions of
hosts would pass the 128 MB of a task's message) and a reader loads the sites it asks for; a
row (name, null, blob) per other ``Learned.to_parts`` part (document frequencies, image hashes,
the settings they were learned with), byte for byte the SQLite index's ``models`` rows, but
for the image hashes of pass 1's RDD (the link step on the executors): a row (``image_hashes``,
normalised URL, its phash as JSON) per image URL, so that no cell holds a crawl's every image;
a row ("settings", null, the run's settings as JSON, as the index's meta table keeps them). Written
by the executors, each task a slice of the sites, through Spark's Hadoop file systems like the
other outputs (``file:``, ``hdfs:``, ``s3a:``): the site rows from pass 1's RDD of site blobs
and of image hashes (runners.spark_learn.SiteModels, the link step on the executors: the
driver never holds them), or from a broadcast of a whole model (``Learned``). With them a page's features
can be derived again from its record, as pass 2 derived them: what ``pagetwin explain`` needs
on a lean pages.parquet (no text, no features). An output written before the row per site
(rows (name, data), the templates one blob) is read as it was.

``SparkOutput`` opens such an output on this machine's file system (a folder, a ``file:`` URI,
or the ``--out`` folder whose summary.json names where the outputs went) and answers what
explain asks: a page by id or URL (clusters.parquet), its row of pages.parquet (its record's
locator), the pair between two pages (pairs.parquet), the models and the settings. An output
on ``hdfs:`` or ``s3a:`` is refused with a message saying to copy it here first: reading it in
place would need a Hadoop client (libhdfs) or the bucket's own credentials, which this machine
does not have and the project does not test.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

MODELS = "models.parquet"
TEMPLATES = "site_templates"
IMAGES = "image_hashes"
_MODELS_SCHEMA = "name string, site string, data binary"
# Row groups of the run's Parquet files (bytes). Each file's rows are in the order a reader
# looks them up by (clusters by id, pairs by a, pages by pid, models by site), so a lookup
# reads the row groups whose statistics hold the value, not the whole file (SparkOutput).
ROW_GROUP_BYTES = 1 << 20
_NEEDED = ("clusters.parquet", "pages.parquet", "pairs.parquet")


class OutputNotReadable(Exception):
    """A Spark run's output that cannot be read here: missing, partial, or not on this machine."""


# -- written by the run (the executors) ------------------------------------------------------


def _slice_of(site: str, slices: int) -> int:
    from pagetwin.fingerprints.hashing import name_hash

    return name_hash(site) % slices


def model_rows(learned: Any, settings: Any, part: int = 0, parts: int = 1) -> Iterator[tuple[str, str | None, bytes]]:
    """Slice ``part`` of ``parts`` of models.parquet's rows (name, site, data). Slice 0: a row
    (part name, None, blob) per ``Learned.to_parts`` part other than the site templates, a row
    (``site_templates``, None, header) when templates were learned, ("settings", None, the
    settings as JSON, sorted keys as the index stores them). Every slice: a row
    (``site_templates``, site, ``SiteTemplates.site_blobs``' blob) per site of the slice (by
    xxhash of the site), in site order."""
    from pagetwin.learned import Learned

    templates = learned.templates if learned is not None else None
    if part == 0:
        rest = Learned(None, learned.doc_freq, learned.image_hashes, learned.learned_with) if learned is not None else None
        sites = (templates.settings.template_share, len(templates.sites_)) if templates is not None else None
        yield from head_rows(rest, settings, sites)
    if templates is not None:
        mine = sorted(site for site in templates.sites_ if _slice_of(site, parts) == part)
        yield from ((TEMPLATES, site, blob) for site, blob in templates.site_blobs(mine))


def head_rows(rest: Any, settings: Any, sites: tuple[float, int] | None) -> Iterator[tuple[str, None, bytes]]:
    """Slice 0's rows but the sites': a row per part of ``rest`` (a Learned without templates),
    the templates' header when ``sites`` = (template_share, number of sites), the settings."""
    yield from ((name, None, data) for name, data in sorted((rest.to_parts() if rest else {}).items()))
    if sites is not None:
        head = {"settings": {"template_share": sites[0]}, "sites": sites[1]}
        yield TEMPLATES, None, json.dumps(head).encode()
    yield "settings", None, json.dumps(settings.to_dict(), sort_keys=True).encode()


def _site_rows(shared: Any, index: int, rows: Iterator[tuple[tuple[str, str], bytes]]) -> Iterator[tuple[str, str | None, bytes]]:
    """A task's rows from the RDDs of site blobs and image hashes: slice 0 begins with the head rows."""
    if index == 0:
        yield from shared.value
    yield from ((name, key, data) for (name, key), data in rows)


def _keyed(name: str, pair: tuple[str, Any]) -> tuple[tuple[str, str], bytes]:
    """A row's sort key (name, site or URL) and data: a site's blob, or an image URL's phash
    as JSON (the value ``Learned.to_parts`` writes for it)."""
    key, value = pair
    return (name, key), value if name == TEMPLATES else json.dumps(value).encode()


def _slice_of_key(key: tuple[str, str], slices: int) -> int:
    return _slice_of(key[1], slices)


def _slice_rows(shared: Any, parts: int, part: int) -> Iterator[tuple[str, str | None, bytes]]:
    learned, settings = shared.value
    return model_rows(learned, settings, part, parts)


def write_models(sc: Any, learned: Any, settings: Any, out_uri: str, overwrite: bool) -> str:
    """Write models.parquet under ``out_uri`` through Spark's Hadoop file systems; its URI.
    ``learned``: a runners.spark_learn.SiteModels, whose RDD of site blobs is cut into the slices
    (a shuffle of the blobs; the head rows broadcast), or a Learned, broadcast whole (in blocks,
    as pass 2's is). Each task writes the rows of its slice of the sites: no task carries the
    model in its message (``spark.rpc.message.maxSize``), no Parquet cell holds more than one
    site. An earlier run's is an OutputError unless ``overwrite``."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    target = f"{out_uri.rstrip('/')}/{MODELS}"
    parts = max(1, sc.defaultParallelism)
    apart = hasattr(learned, "rest")  # a SiteModels (this module imports no other runner's helper)
    if apart and (learned.sites is not None or learned.images is not None):
        # model_rows' rows and files: slice p's sites sorted in task p, the head rows first in
        # task 0; an image URL's hash a row of its own, before the sites in its slice.
        share = settings.extract.template_share
        sites = (share, learned.count) if learned.sites is not None else None
        shared = sc.broadcast(list(head_rows(learned.rest, settings, sites)))
        keyed = [rdd.map(partial(_keyed, name)) for name, rdd in ((TEMPLATES, learned.sites), (IMAGES, learned.images)) if rdd is not None]
        keyed_rows = keyed[0].union(keyed[1]) if len(keyed) == 2 else keyed[0]
        by_slice = keyed_rows.repartitionAndSortWithinPartitions(parts, partial(_slice_of_key, slices=parts))
        rows = by_slice.mapPartitionsWithIndex(partial(_site_rows, shared))
    else:
        if apart:
            learned = learned.rest
        shared = sc.broadcast((learned, settings))
        rows = sc.parallelize(range(parts), parts).flatMap(partial(_slice_rows, shared, parts))
    try:
        frame = spark.createDataFrame(rows, _MODELS_SCHEMA)
        # A site's row can be megabytes: the row group's size is checked from the first row on
        # (parquet-mr checks it every 100 rows at first), so a row group is ~1 MB or one site.
        writer = frame.write.options(**{"parquet.block.size": ROW_GROUP_BYTES, "parquet.page.size.row.check.min": 1})
        writer = writer.mode("overwrite" if overwrite else "errorifexists")
        writer.parquet(target)
    except Exception as exc:  # noqa: BLE001 - pyspark's AnalysisException: the target is there
        if "already exists" not in str(exc):
            raise
        from pagetwin.outputs.files import OutputError

        raise OutputError(f"{target} already exists (an earlier run's output; use another --out or --replace)") from None
    finally:
        shared.destroy()
    return target


# -- read back (explain) ---------------------------------------------------------------------


def local_path(location: str) -> str | None:
    """The local path of a path or ``file:`` URI; None for another scheme (hdfs:, s3a:...)."""
    from pagetwin.sources import is_uri

    if not is_uri(location):
        return location
    parsed = urlparse(location)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return unquote(parsed.path)
    return None


def output_folder(given: str | Path) -> str | None:
    """Where a Spark executors' run wrote its outputs, when ``given`` is one: the folder (or
    ``file:`` URI) holding clusters.parquet and pages.parquet, or an ``--out`` folder whose
    summary.json says ``link: executors`` (its ``outputs`` name the folder). None when ``given``
    is none of these (a local runner's output, an index file). OutputNotReadable when it is
    one but cannot be read here."""
    text = str(given)
    path = local_path(text)
    if path is None:
        scheme = urlparse(text).scheme
        raise OutputNotReadable(
            f"{text}: explain reads a Spark run's outputs from this machine's file system (a folder or a file: URI), "
            f"not from {scheme}: copy the folder here first (hdfs dfs -get, or aws s3 cp --recursive) and give that"
        )  # fmt: skip
    if os.path.isdir(os.path.join(path, "pages.parquet")) and os.path.isdir(os.path.join(path, "clusters.parquet")):
        return path
    summary = os.path.join(path, "summary.json")
    if not os.path.isfile(summary) or os.path.exists(os.path.join(path, "index.sqlite")):
        return None
    try:
        data = json.loads(Path(summary).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("link") != "executors":
        return None
    written = (data.get("outputs") or {}).get("pages.parquet")
    if not isinstance(written, str):
        raise OutputNotReadable(f"{summary} names no pages.parquet: not a complete run's output")
    return output_folder(written.rstrip("/").rsplit("/", 1)[0])


class SparkOutput:
    """A Spark executors' run's outputs, read with pyarrow (see the module docstring)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._datasets: dict[str, Any] = {}
        missing = [n for n in (*_NEEDED, MODELS) if not os.path.isdir(os.path.join(folder, n))]
        if MODELS in missing and len(missing) == 1:
            raise OutputNotReadable(
                f"{folder} holds no {MODELS}: the run that wrote it kept no learned models (an older pagetwin), "
                "so its pages cannot be explained from their records; run dedup again"
            )  # fmt: skip
        if missing:
            raise OutputNotReadable(f"{folder} is not a complete Spark run's output: {', '.join(missing)} missing")
        import pyarrow.dataset as ds

        # A row per site (name, site, data), or a row per part (name, data) before session 10.
        self._per_site = "site" in self._dataset(MODELS).schema.names
        rows = self._table(MODELS, ds.field("site").is_null() if self._per_site else None, ["name", "data"]).to_pylist()
        self.parts = {r["name"]: r["data"] for r in rows}

    def _dataset(self, name: str) -> Any:
        """The Parquet folder ``name`` as a dataset, its files listed once per SparkOutput."""
        import pyarrow
        import pyarrow.dataset as ds

        if name in self._datasets:
            return self._datasets[name]
        try:
            dataset = self._datasets[name] = ds.dataset(os.path.join(self.folder, name), format="parquet")
            return dataset
        except (OSError, pyarrow.ArrowException) as exc:
            raise OutputNotReadable(f"{os.path.join(self.folder, name)} cannot be read ({' '.join(str(exc).split())[:200]})") from None

    def _table(self, name: str, filter: Any = None, columns: list[str] | None = None, files: set[str] | None = None) -> Any:
        """Rows of the Parquet folder ``name``, or of its ``files`` only (paths as listed)."""
        import pyarrow
        import pyarrow.dataset as ds

        dataset = self._dataset(name)
        if files is not None:
            fragments = [f for f in dataset.get_fragments() if f.path in files]
            dataset = ds.FileSystemDataset(fragments, dataset.schema, dataset.format, dataset.filesystem)
        try:
            # One thread: a lookup reads a few rows; a thread pool's start costs more CPU than it saves.
            return dataset.to_table(filter=filter, columns=columns, use_threads=False)
        except (OSError, pyarrow.ArrowException) as exc:
            raise OutputNotReadable(f"{os.path.join(self.folder, name)} cannot be read ({' '.join(str(exc).split())[:200]})") from None

    def settings(self) -> Any:
        from pagetwin.config import ConfigError, Settings

        raw = self.parts.get("settings")
        try:
            return Settings.from_dict(json.loads(raw)) if raw else Settings()
        except (ConfigError, ValueError):
            return Settings()

    def learned(self, settings: Any, image_urls: Collection[str] | None = None) -> Any:
        """The run's learned model (learned.Learned), as the index's stored_model reads it.
        With ``image_urls`` (normalised URLs: html.images.looked_up_urls), only their rows of
        the image hashes are read, as a pass-2 task is given them: a crawl has a row per image."""
        from pagetwin.html.templates import SiteTemplates
        from pagetwin.learned import PART_NAMES, Learned

        parts = {name: self.parts.get(name) for name in PART_NAMES}
        if self._per_site and IMAGES not in self.parts and (image_urls is None or image_urls):  # a row per image URL, or none
            import pyarrow.dataset as ds

            # The rows of a slice are sorted by URL: the row groups' statistics skip the others.
            urls = ds.field("site").is_valid() if image_urls is None else ds.field("site").isin(sorted(image_urls))
            rows = self._table(MODELS, (ds.field("name") == IMAGES) & urls, ["site", "data"]).to_pylist()
            if rows:
                parts[IMAGES] = json.dumps({r["site"]: json.loads(r["data"]) for r in rows}).encode()
        if not self._per_site or TEMPLATES not in self.parts:
            return Learned.from_parts(parts, settings)
        templates = SiteTemplates.from_site_blobs(self.site_blob, self.sites, settings.extract)
        return Learned.from_parts({n: parts[n] for n in PART_NAMES if n != TEMPLATES}, settings, templates)

    def site_blob(self, site: str) -> bytes | None:
        """One site's row of the templates (``SiteTemplates.site_blobs``), None when it has none."""
        import pyarrow.dataset as ds

        found = (ds.field("name") == TEMPLATES) & (ds.field("site") == site)
        rows = self._table(MODELS, found, ["data"]).column("data").to_pylist()
        return rows[0] if rows else None

    def sites(self) -> list[str]:
        """Every site the templates have a row for."""
        import pyarrow.dataset as ds

        found = (ds.field("name") == TEMPLATES) & ds.field("site").is_valid()
        return self._table(MODELS, found, ["site"]).column("site").to_pylist()

    def find(self, column: str, values: list[str]) -> dict[str, list[dict[str, Any]]]:
        """For each value, clusters.parquet's rows (pid, id, url, cluster, keep) whose ``column``
        is that value (one scan for all of them: each file's rows are in id order, so by id its
        row groups' statistics skip all but the ones that can hold it; by URL no statistics can,
        so the URL column alone is scanned for the files that hold them, and only these files'
        other columns are read), with their crawl_date and source (pages.parquet) when several
        share it, by (crawl date, pid)."""
        import pyarrow.dataset as ds

        wanted = ds.field(column).isin(values)
        files = None
        if column == "url":
            files = set(self._table("clusters.parquet", wanted, ["__filename"]).column("__filename").to_pylist())
        table = self._table("clusters.parquet", wanted, ["pid", "id", "url", "cluster", "keep"], files)
        found: dict[str, list[dict[str, Any]]] = {v: [] for v in values}
        for row in table.to_pylist():
            found[row[column]].append(row)
        shared = [r for rows in found.values() if len(rows) > 1 for r in rows]
        if shared:
            pages = self.pages([r["pid"] for r in shared])
            for r in shared:
                r.update(crawl_date=pages.get(r["pid"], {}).get("crawl_date"), source=pages.get(r["pid"], {}).get("source"))
            for rows in found.values():
                rows.sort(key=lambda r: (r.get("crawl_date") or "", r["pid"]))
        return found

    def pages(self, pids: list[int]) -> dict[int, dict[str, Any]]:
        """pages.parquet's rows of these pids, by pid."""
        import pyarrow.dataset as ds

        return {r["pid"]: r for r in self._table("pages.parquet", ds.field("pid").isin(pids)).to_pylist()}

    def cluster_rows(self, pids: list[int]) -> dict[int, dict[str, Any]]:
        import pyarrow.dataset as ds

        table = self._table("clusters.parquet", ds.field("pid").isin(pids), ["pid", "id", "url", "cluster", "keep"])
        return {r["pid"]: r for r in table.to_pylist()}

    def pair(self, id_a: str, id_b: str) -> dict[str, Any] | None:
        """pairs.parquet's row between two pages (either order), None when they have no edge."""
        import pyarrow.dataset as ds

        a, b = ds.field("a"), ds.field("b")
        rows = self._table("pairs.parquet", ((a == id_a) & (b == id_b)) | ((a == id_b) & (b == id_a))).to_pylist()
        return rows[0] if rows else None
