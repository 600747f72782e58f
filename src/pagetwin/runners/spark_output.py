"""What a run with ``spark.link = executors`` leaves under ``spark.output``, read back without
Spark (pyarrow), and the one part of it that this module writes: ``models.parquet``.

``models.parquet/`` holds pass 1's merged learned models (``Learned.to_parts``: site templates,
document frequencies, image hashes, the settings they were learned with), one row (name, data)
per part, as the SQLite index's ``models`` table keeps them, plus a row ``settings`` (the run's
settings as JSON, as the index's meta table keeps them). The driver holds the models anyway
(they are bounded by their own caps, not by the pages), so writing them costs one small Spark
job; it goes through Spark's Hadoop file systems like the other outputs (``file:``, ``hdfs:``,
``s3a:``). With them a page's features can be derived again from its record, as pass 2 derived
them: what ``pagetwin explain`` needs on a lean pages.parquet (no text, no features).

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
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

MODELS = "models.parquet"
_MODELS_SCHEMA = "name string, data binary"
_NEEDED = ("clusters.parquet", "pages.parquet", "pairs.parquet")


class OutputNotReadable(Exception):
    """A Spark run's output that cannot be read here: missing, partial, or not on this machine."""


# -- written by the run (the driver) ---------------------------------------------------------


def model_rows(learned: Any, settings: Any) -> list[tuple[str, bytes]]:
    """models.parquet's rows: (part name, blob) per ``Learned.to_parts`` part (none without a
    model), then ("settings", the settings as JSON, sorted keys as the index stores them)."""
    parts = learned.to_parts() if learned is not None else {}
    rows = sorted(parts.items())
    rows.append(("settings", json.dumps(settings.to_dict(), sort_keys=True).encode()))
    return rows


def write_models(sc: Any, learned: Any, settings: Any, out_uri: str, overwrite: bool) -> str:
    """Write models.parquet under ``out_uri`` (one partition: a few rows), through Spark's
    Hadoop file systems; its URI. An earlier run's is an OutputError unless ``overwrite``."""
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.getOrCreate()
    target = f"{out_uri.rstrip('/')}/{MODELS}"
    frame = spark.createDataFrame(sc.parallelize(model_rows(learned, settings), 1), _MODELS_SCHEMA)
    try:
        frame.write.mode("overwrite" if overwrite else "errorifexists").parquet(target)
    except Exception as exc:  # noqa: BLE001 - pyspark's AnalysisException: the target is there
        if "already exists" not in str(exc):
            raise
        from pagetwin.outputs.files import OutputError

        raise OutputError(f"{target} already exists (an earlier run's output; use another --out or --replace)") from None
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
        missing = [n for n in (*_NEEDED, MODELS) if not os.path.isdir(os.path.join(folder, n))]
        if MODELS in missing and len(missing) == 1:
            raise OutputNotReadable(
                f"{folder} holds no {MODELS}: the run that wrote it kept no learned models (an older pagetwin), "
                "so its pages cannot be explained from their records; run dedup again"
            )  # fmt: skip
        if missing:
            raise OutputNotReadable(f"{folder} is not a complete Spark run's output: {', '.join(missing)} missing")
        rows = self._table(MODELS).to_pylist()
        self.parts = {r["name"]: r["data"] for r in rows}

    def _table(self, name: str, filter: Any = None, columns: list[str] | None = None) -> Any:
        import pyarrow
        import pyarrow.dataset as ds

        try:
            # One thread: a lookup reads a few rows; a thread pool's start costs more CPU than it saves.
            dataset = ds.dataset(os.path.join(self.folder, name), format="parquet")
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

    def learned(self, settings: Any) -> Any:
        """The run's learned model (learned.Learned), as the index's stored_model reads it."""
        from pagetwin.learned import PART_NAMES, Learned

        return Learned.from_parts({name: self.parts.get(name) for name in PART_NAMES}, settings)

    def find(self, column: str, values: list[str]) -> dict[str, list[dict[str, Any]]]:
        """For each value, clusters.parquet's rows (pid, id, url, cluster, keep) whose ``column``
        is that value (one scan for all of them: ids are in no order, nothing prunes it), with
        their crawl_date and source (pages.parquet) when several share it, by (crawl date, pid)."""
        import pyarrow.dataset as ds

        table = self._table("clusters.parquet", ds.field(column).isin(values), ["pid", "id", "url", "cluster", "keep"])
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
