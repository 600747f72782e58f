"""Large WARC files given as URIs (file:, hdfs:, s3a:, https: through Hadoop's FileSystem) read
by several Spark tasks, split at record boundaries by the rules local files are split by
(sources.split), no Python worker holding a file whole.

Python workers have no JVM of their own, so the bytes are read by the executors' JVM: a small
Hadoop InputFormat (``ByteRanges``, its Java source below, compiled once with the JDK's javac
into a jar in pagetwin's cache folder and given to Spark as ``spark.jars``) makes one split per
byte range the driver planned (sources.split.ranges of the file's length) and streams each
range's bytes raw (no codec: a .warc.gz is read as stored, so offsets are the file's) from the
range's start on, in chunks of 1 MiB. The Python task keeps the chunks it asks for in a local
temporary file (``_Spool``) and reads them as a local range is read (split.iter_range: the first
record boundary at or after the start, up to the record straddling the end), so a range costs
its own bytes on local disk and one chunk of memory; it stops asking once its last record is
read (the JVM's read-ahead is a socket buffer). The driver reads only each file's length and
its first 64 KiB (is it a WARC that can be split: split.head_format), through the JVM's
FileSystem.

Without javac (a JRE only), or in a Spark session that was started without the jar, URI files
are read whole by one task each, as before (``binaryFiles``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

CLASS = "pagetwin.ByteRanges"
CHUNK = 1 << 20  # bytes a chunk streamed from the JVM to the Python task

_JAVA = """\
package pagetwin;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.mapreduce.InputFormat;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.RecordReader;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;

/** Byte ranges of files on Hadoop file systems, one split each, as listed in the job's
 *  configuration ("pagetwin.ranges": lines "start TAB end TAB uri"); each read raw (no codec)
 *  from its start to the end of its file as (offset, chunk) pairs: the reader's consumer stops
 *  where its last record ends, past the range's end. */
public class ByteRanges extends InputFormat<LongWritable, BytesWritable> {
  @Override
  public List<InputSplit> getSplits(JobContext job) {
    List<InputSplit> out = new ArrayList<>();
    for (String line : job.getConfiguration().get("pagetwin.ranges", "").split("\\n")) {
      if (line.isEmpty()) continue;
      String[] f = line.split("\\t", 3);
      long start = Long.parseLong(f[0]);
      out.add(new FileSplit(new Path(f[2]), start, Long.parseLong(f[1]) - start, new String[0]));
    }
    return out;
  }

  @Override
  public RecordReader<LongWritable, BytesWritable> createRecordReader(InputSplit split, TaskAttemptContext ctx) {
    return new Reader();
  }

  static final class Reader extends RecordReader<LongWritable, BytesWritable> {
    private FSDataInputStream in;
    private long pos;
    private int chunk;
    private final LongWritable key = new LongWritable();
    private final BytesWritable value = new BytesWritable();

    @Override
    public void initialize(InputSplit s, TaskAttemptContext ctx) throws IOException {
      FileSplit split = (FileSplit) s;
      Configuration conf = ctx.getConfiguration();
      chunk = conf.getInt("pagetwin.chunk", 1 << 20);
      in = split.getPath().getFileSystem(conf).open(split.getPath());
      pos = split.getStart();
      in.seek(pos);
    }

    @Override
    public boolean nextKeyValue() throws IOException {
      byte[] buf = in.readNBytes(chunk);
      if (buf.length == 0) return false;
      key.set(pos);
      value.set(buf, 0, buf.length);
      pos += buf.length;
      return true;
    }

    @Override public LongWritable getCurrentKey() { return key; }
    @Override public BytesWritable getCurrentValue() { return value; }
    @Override public float getProgress() { return 0f; }
    @Override public void close() throws IOException { if (in != null) in.close(); }
  }
}
"""


def _spark_jars() -> str | None:
    """The folder of Spark's jars (Hadoop's client API among them): $SPARK_HOME's, else pyspark's."""
    home = os.environ.get("SPARK_HOME")
    if home and os.path.isdir(os.path.join(home, "jars")):
        return os.path.join(home, "jars")
    try:
        import pyspark
    except ImportError:
        return None
    folder = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    return folder if os.path.isdir(folder) else None


def _javac() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "javac"), os.X_OK):
        return os.path.join(home, "bin", "javac")
    return shutil.which("javac")


def jar() -> str | None:
    """The jar of ``ByteRanges``, compiled once (per version of its source) into pagetwin's cache
    folder; None when it cannot be built (no javac, no Spark jars, no cache folder, javac failed)."""
    import xxhash

    from pagetwin.text.cache import cache_dir

    folder, javac, jars = cache_dir(), _javac(), _spark_jars()
    if folder is None or javac is None or jars is None:
        return None
    path = folder / f"byte-ranges-{xxhash.xxh3_64_hexdigest(_JAVA.encode())[:16]}.jar"
    if path.is_file():
        return str(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="pagetwin-jar-") as work:
            source = Path(work, "pagetwin", "ByteRanges.java")
            source.parent.mkdir()
            source.write_text(_JAVA)
            classes = Path(work, "classes")
            subprocess.run([javac, "--release", "17", "-nowarn", "-cp", os.path.join(jars, "*"), "-d", str(classes),
                            str(source)], check=True, capture_output=True, timeout=300)  # fmt: skip
            tmp = Path(f"{path}.{os.getpid()}")
            with zipfile.ZipFile(tmp, "w") as out:  # a jar is a zip; no manifest needed on a class path
                for f in sorted(classes.rglob("*.class")):
                    out.write(f, f.relative_to(classes).as_posix())
            os.replace(tmp, path)
    except (OSError, subprocess.SubprocessError):
        return None
    return str(path)


def available(sc: Any) -> bool:
    """Whether the session's JVM has ``ByteRanges`` (the jar was given when it started)."""
    try:
        return bool(sc._jvm.org.apache.spark.util.Utils.classIsLoadable(CLASS))
    except Exception:  # noqa: BLE001 - py4j's error: an old Spark, a stopped session
        return False


def plan(sc: Any, uri: str, split_bytes: int) -> tuple[list[tuple[int, int]], int, bytes] | None:
    """(the byte ranges of a URI file, its length, its first bytes), asked of its Hadoop file
    system: ranges of ``split_bytes`` when it is a gzip or plain WARC larger than that (by its
    first HEAD_BYTES: sources.split's rules), else one, [0, size). None when it cannot be
    asked (the reader then reports the file)."""
    from pagetwin.sources.split import HEAD_BYTES, head_format, ranges

    try:
        path = sc._jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(sc._jsc.hadoopConfiguration())
        size = int(fs.getFileStatus(path).getLen())
        if split_bytes <= 0 or size <= split_bytes:
            return [(0, size)], size, b""
        stream = fs.open(path)
        try:
            head = bytes(stream.readNBytes(HEAD_BYTES))
        finally:
            stream.close()
    except Exception:  # noqa: BLE001 - py4j's error: gone, unreadable
        return None
    return (ranges(size, split_bytes) if head_format(head) is not None else [(0, size)]), size, head


def ranges_rdd(sc: Any, uri: str, spans: list[tuple[int, int]], size: int, head: bytes) -> Any:
    """An RDD of one partition per range of ``uri``, in order, each holding one unit of work:
    (uri, RangeChunks) — the range and the JVM's stream of its bytes."""
    conf = {"pagetwin.ranges": "\n".join(f"{a}\t{b}\t{uri}" for a, b in spans), "pagetwin.chunk": str(CHUNK)}
    raw = sc.newAPIHadoopRDD(CLASS, "org.apache.hadoop.io.LongWritable", "org.apache.hadoop.io.BytesWritable", conf=conf)
    return raw.mapPartitionsWithIndex(lambda i, chunks: [(uri, RangeChunks(*spans[i], size, head, chunks))])


class RangeChunks:
    """One range [start, end) of a file of ``size`` bytes, the file's first bytes (``head``: the
    readers look at its magic), and the (offset, bytes) chunks of the file from ``start`` on
    (lives in one Python task: never pickled)."""

    def __init__(self, start: int, end: int, size: int, head: bytes, chunks: Iterable[tuple[int, bytes]]) -> None:
        self.start, self.end, self.size, self.head, self.chunks = start, end, size, head, chunks

    def __reduce__(self) -> Any:
        raise TypeError("a RangeChunks streams one task's bytes: it cannot be sent to another")


class _Spool:
    """The bytes of a file from ``start`` on, pulled from ``chunks`` as far as they are asked for
    and kept in a local temporary file (a range's bytes on disk, one chunk in memory)."""

    def __init__(self, chunks: Iterable[tuple[int, bytes]], start: int, size: int, head: bytes = b"") -> None:
        self.chunks: Iterator[tuple[int, bytes]] | None = iter(chunks)
        self.start, self.size, self.head = start, size, head
        self.file = tempfile.TemporaryFile(prefix="pagetwin-range-")
        self.have = start  # bytes [start, have) are in the file

    def pread(self, at: int, n: int) -> bytes:
        if at < self.start:  # the file's first bytes (its magic), from the head the driver read
            if 0 <= n and at + n <= len(self.head):
                return self.head[at : at + n]
            if len(self.head) < self.start:
                raise ValueError(f"bytes {at}+{n}: before this range's first byte, {self.start}")
            return self.head[at : self.start] + self.pread(self.start, n - (self.start - at) if n >= 0 else -1)
        want = self.size if n < 0 else min(self.size, at + n)
        while self.have < want and self.chunks is not None:
            offset, data = next(self.chunks, (None, b""))
            if offset is None or not data:
                self.chunks, self.size = None, self.have  # the file is shorter than it was said to be
                break
            if offset != self.have:
                raise OSError(f"chunk at {offset}, expected at {self.have}")
            self.file.seek(self.have - self.start)
            self.file.write(data)
            self.have += len(data)
        want = min(want, self.have)
        if at >= want:
            return b""
        self.file.seek(at - self.start)
        return self.file.read(want - at)

    def close(self) -> None:
        self.file.close()
        self.chunks = None


class _Cursor:
    """A read-only, seekable file over a _Spool (what the WARC readers ask of a file)."""

    def __init__(self, spool: _Spool) -> None:
        self.spool, self.pos = spool, 0  # where a file opens

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = pos if whence == 0 else self.pos + pos if whence == 1 else self.spool.size + pos
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, n: int = -1) -> bytes:
        data = self.spool.pread(self.pos, -1 if n is None else n)
        self.pos += len(data)
        return data

    def __enter__(self) -> _Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def range_pages(uri: str, rc: RangeChunks, settings: Any, stats: Any, want_images: bool) -> Iterator[Any]:
    """The pages of one range of a URI file, read and counted as a local file's range is
    (sources.split.range_pages), the pages and messages naming the URI."""
    from pagetwin.sources.split import range_pages as local_range_pages

    spool = _Spool(rc.chunks, rc.start, rc.size, rc.head)
    try:
        yield from local_range_pages(uri, rc.start, rc.end, settings.input, stats, want_images,
                                     opener=lambda: _Cursor(spool), size=rc.size)  # fmt: skip
    finally:
        spool.close()
