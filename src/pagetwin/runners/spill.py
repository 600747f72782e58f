"""Pass 1's pages, parsed, kept on disk for pass 2.

Reading the sources and parsing and walking each page's DOM are most of an extraction's cost,
and both passes need the same pages and the same blocks. Pass 1 appends every page it read
(its record without the HTML) with its parsed blocks (``html.blocks.ParsedPage`` bytes, about
16 KB a page on corpus-10000-shared: half its gzipped WARC) to a temporary file; pass 2 replays that file instead
of reading and parsing the sources again, and the workers decide on the blocks (``Page.parsed``)
without the page's HTML being sent to them.

A page pass 1 could not parse keeps its body, so that pass 2 tries again and reports why it
fails. Image records are pass 1's only (their perceptual hashes) and are not kept. When the
file cannot be written (a full disk), the spill gives up (``failed`` says why) and pass 2 reads
and parses the sources again.

A record is the page's fields as a marshalled tuple (``_PAGE_FIELDS`` order: 2-3 times cheaper
to write and read than a pickled ``Page``), after its length; a page whose ``meta`` holds what
marshal does not take (a Parquet row's timestamp) is pickled instead (a pickle's first byte,
PROTO, is no marshal type code).
"""

from __future__ import annotations

import contextlib
import marshal
import pickle
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import fields

from pagetwin.model import Page
from pagetwin.sources import SourceStats

_PAGE_FIELDS = tuple(f.name for f in fields(Page))  # Page(*record) takes them in this order
_BODY, _PARSED = _PAGE_FIELDS.index("body"), _PAGE_FIELDS.index("parsed")
_LENGTH = struct.Struct("<I")  # a record's length, before it
_PICKLED = pickle.PROTO[0]  # the first byte of a pickled record (protocol 2 and later)
_BUFFER = 1 << 20  # bytes written and read at a time (a record is ~16 KB: the default 8 KB buffer made a system call of each)


class ParsedSpill:
    """An append-only temporary file of pass 1's pages with their parsed blocks, in input order."""

    def __init__(self, directory: str | None = None) -> None:
        self._file = tempfile.TemporaryFile(prefix="pagetwin-parsed-", dir=directory or None, buffering=_BUFFER)
        self.stats = SourceStats()  # what pass 1 counted reading the sources; pass 2 reports it
        self.pages = 0
        self.parsed_bytes = 0
        self.failed = ""  # why the spill gave up, "" while it is usable

    def add(self, page: Page, parsed: bytes, keep_body: bool = True) -> None:
        """Append a page with its parsed blocks; its body only when it has none (pass 2 parses
        it then) and ``keep_body`` (a page pass 2 only marks seen needs none)."""
        if page.kind == "image" or self.failed:
            return
        values = [getattr(page, name) for name in _PAGE_FIELDS]
        values[_BODY] = page.body if keep_body and not parsed else b""
        values[_PARSED] = parsed
        try:
            record = marshal.dumps(tuple(values))
        except ValueError:  # (an object marshal does not take, in meta)
            record = pickle.dumps(Page(*values), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self._file.write(_LENGTH.pack(len(record)))
            self._file.write(record)
        except OSError as exc:
            self._give_up(exc)
            return
        self.pages += 1
        self.parsed_bytes += len(parsed)

    def finish(self) -> None:
        """End of pass 1: everything written (or ``failed`` set)."""
        if not self.failed:
            try:
                self._file.flush()
            except OSError as exc:
                self._give_up(exc)

    def _give_up(self, exc: OSError) -> None:
        self.failed = f"cannot write the temporary file of parsed pages ({exc.strerror or exc})"
        with contextlib.suppress(OSError):
            self._file.truncate(0)

    def replay(self) -> Iterator[Page]:
        """The pages added, in the order they were added (after ``finish``)."""
        if self.failed:
            raise RuntimeError(self.failed)
        self._file.seek(0)
        read, length = self._file.read, _LENGTH.size
        for _ in range(self.pages):
            (size,) = _LENGTH.unpack(read(length))
            record = read(size)
            yield pickle.loads(record) if record[0] == _PICKLED else Page(*marshal.loads(record))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> ParsedSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
