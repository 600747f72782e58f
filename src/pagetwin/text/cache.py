"""Arrays that cost a process long to build, kept on disk between runs (py3langid's model
unpacked, ``lang``; the code point classes of the word scan, ``tokenize.char_classes``).

``cached_arrays`` reads a file's arrays into memory of their own; ``mapped_arrays`` maps the
file and gives read-only arrays over its pages (each array starts 64-byte aligned): no
allocation, zeroing or copy, and the processes of a machine share the pages.

A cache file is named by a digest of what its arrays are made from (so a changed input gets a
new file) and holds a digest of its own bytes (so a damaged one is refused, built again and
written again). Written beside and renamed: a reader finds all of a file or none. A folder
that cannot be written, or no home folder, costs only the building.

Where: $PAGETWIN_CACHE_DIR, else $XDG_CACHE_HOME/pagetwin, else ~/.cache/pagetwin.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
from array import array
from collections.abc import Callable
from pathlib import Path

import numpy as np
import xxhash

FORMAT = 1  # bumped when the file layout below changes
TYPECODES = {2: "H", 4: "I", 8: "L"}  # stdlib array typecode by item size (unsigned)
ALIGN = 64  # where mapped_arrays' files start each array (a cache line; any dtype's alignment)


def cache_dir() -> Path | None:
    """The cache folder; None without a home folder (and no variable naming one)."""
    if os.environ.get("PAGETWIN_CACHE_DIR"):
        return Path(os.environ["PAGETWIN_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "pagetwin"
    try:
        return Path.home() / ".cache" / "pagetwin"
    except RuntimeError:
        return None


def cached_arrays(
    name: str, source: bytes, build: Callable[[], dict[str, np.ndarray] | None], stdlib: frozenset[str] = frozenset()
) -> dict[str, np.ndarray | array] | None:
    """The arrays ``build`` makes from ``source`` (the bytes they depend on: a model file, the
    versions and patterns of a table), from the cache when it holds them whole, else built and
    stored; those named in ``stdlib`` as stdlib arrays (unsigned). None when ``build`` gives
    None."""
    folder = cache_dir()
    target = folder / f"{name}-{FORMAT}-{xxhash.xxh3_64_hexdigest(source)}.bin" if folder is not None else None
    found = read_arrays(target, stdlib) if target is not None else None
    if found is not None:
        return found
    arrays = build()
    if arrays is None:
        return None
    if target is not None:
        write_arrays(target, arrays)
    return {key: stdlib_array(a) if key in stdlib else a for key, a in arrays.items()}


def stdlib_array(a: np.ndarray) -> array:
    """A copy of an unsigned numpy array as a stdlib array."""
    out = array(TYPECODES[a.dtype.itemsize])
    out.frombytes(np.ascontiguousarray(a).tobytes())
    return out


def _raw(data: np.ndarray | array) -> memoryview:
    """The bytes of a contiguous array, writable where it is (memoryview.cast refuses empty
    arrays, and numpy's unicode arrays)."""
    if isinstance(data, np.ndarray):
        return memoryview(data.reshape(-1).view(np.uint8))
    return memoryview(data).cast("B")


def _padding(offset: int, align: int) -> int:
    return -offset % align


def write_arrays(target: Path, arrays: dict[str, np.ndarray], align: int = 1) -> None:
    """One file: a JSON line (each array's name, dtype and shape, the payload's size and
    digest, and with ``align`` > 1 that each array starts at a multiple of it: the line is
    padded with spaces, the arrays with zeros, not digested), then the arrays' bytes in order.
    A folder that cannot be written is left as it is."""
    parts = {key: np.ascontiguousarray(a) for key, a in arrays.items()}
    digest = xxhash.xxh3_64()
    for part in parts.values():
        digest.update(_raw(part))
    layout = [[key, part.dtype.str, list(part.shape)] for key, part in parts.items()]
    head = {"arrays": layout, "size": sum(part.nbytes for part in parts.values()), "xxh3": digest.hexdigest()}
    line = json.dumps(head | ({"align": align} if align > 1 else {})).encode()
    line += b" " * _padding(len(line) + 1, align) + b"\n"
    temp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(temp, "wb") as out:
            out.write(line)
            offset = len(line)
            for part in parts.values():
                out.write(bytes(_padding(offset, align)))
                offset += _padding(offset, align) + part.nbytes
                out.write(_raw(part))
        os.replace(temp, target)
    except OSError:
        try:
            temp.unlink(missing_ok=True)
        except OSError:
            pass


def read_arrays(target: Path, stdlib: frozenset[str] = frozenset()) -> dict[str, np.ndarray | array] | None:
    """The arrays of a cache file, each read straight into the object it is given as (no copy
    of the whole file is held: a process's peak memory stays that of the arrays); None when
    the file is absent, cut short, longer, or its digest differs."""
    try:
        with open(target, "rb") as f:
            head = json.loads(f.readline())
            align = int(head.get("align", 1))
            if align < 1:
                return None
            digest = xxhash.xxh3_64()
            arrays: dict[str, np.ndarray | array] = {}
            for key, dtype, shape in head["arrays"]:
                skip = _padding(f.tell(), align)
                if len(f.read(skip)) != skip:
                    return None
                dt = np.dtype(dtype)
                count = int(np.prod(shape, dtype=np.int64))
                if key in stdlib:
                    if dt.kind != "u" or dt.itemsize not in TYPECODES:
                        return None
                    into: np.ndarray | array = array(TYPECODES[dt.itemsize], [0]) * count
                else:
                    into = np.empty(shape, dtype=dt)
                view = _raw(into)
                if f.readinto(view) != len(view):
                    return None
                digest.update(view)
                arrays[key] = into
            if f.read(1) or digest.hexdigest() != head["xxh3"]:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return arrays


def mapped_arrays(
    name: str,
    source: bytes,
    build: Callable[[], dict[str, np.ndarray] | None],
    accept: Callable[[dict[str, np.ndarray]], bool] = lambda arrays: True,
) -> dict[str, np.ndarray] | None:
    """``cached_arrays`` as read-only arrays over the cache file mapped into memory (those
    ``build`` makes when the cache cannot give them, or gives arrays ``accept`` refuses: the
    digest covers the arrays' bytes, not the names, dtypes and shapes of the file's first
    line; the file is then written again for the next process)."""
    folder = cache_dir()
    target = folder / f"{name}-{FORMAT}-{xxhash.xxh3_64_hexdigest(source)}.bin" if folder is not None else None
    found = map_arrays(target) if target is not None else None
    if found is not None and accept(found):
        return found
    arrays = build()
    if arrays is None:
        return None
    if target is not None:
        write_arrays(target, arrays, ALIGN)
    return arrays


def map_arrays(target: Path) -> dict[str, np.ndarray] | None:
    """The arrays of a cache file, read-only views of its pages mapped into memory (faulted in
    at once, then digested: all of them are read); None when the file is absent, cut short,
    longer, or its digest differs. The cache's files are replaced by renaming, never written in
    place, so the pages stay those digested."""
    try:
        with open(target, "rb") as f:
            head = json.loads(f.readline())
            offset = f.tell()
            size = os.fstat(f.fileno()).st_size
            if hasattr(mmap, "MAP_POPULATE"):
                mapped = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE, prot=mmap.PROT_READ)
            else:
                mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        align = int(head.get("align", 1))
        if align < 1:
            return None
        digest = xxhash.xxh3_64()
        arrays: dict[str, np.ndarray] = {}
        with memoryview(mapped) as whole:
            for key, dtype, shape in head["arrays"]:
                dt = np.dtype(dtype)
                count = int(np.prod(shape, dtype=np.int64))
                if dt.hasobject or count < 0 or min(shape, default=0) < 0:
                    return None
                offset += _padding(offset, align)
                end = offset + count * dt.itemsize
                if end > size:
                    return None
                with whole[offset:end] as part:
                    digest.update(part)
                if count:
                    arrays[key] = np.frombuffer(mapped, dtype=dt, count=count, offset=offset).reshape(shape)
                else:
                    arrays[key] = np.empty(shape, dtype=dt)
                    arrays[key].flags.writeable = False
                offset = end
        if offset != size or digest.hexdigest() != head["xxh3"]:
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return arrays
