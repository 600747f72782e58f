"""zstd compressors and decompressors kept one per thread.

``zstandard.compress`` / ``decompress`` make a context per call, which on the project's small
frames (a page's text, a ParsedPage) costs as much as the work itself; a context must not be
used by two threads at once, so each thread keeps its own (the bytes are the same).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

_PER_THREAD = threading.local()


def compressor(level: int) -> Callable[[bytes], bytes]:
    """This thread's zstd ``compress`` at ``level``."""
    key = f"compress_{level}"
    compress = getattr(_PER_THREAD, key, None)
    if compress is None:
        import zstandard

        compress = zstandard.ZstdCompressor(level=level).compress
        setattr(_PER_THREAD, key, compress)
    return compress


def decompressor() -> Callable[[bytes], bytes]:
    """This thread's zstd ``decompress`` (of frames that record their size, as ``compressor``'s do)."""
    decompress = getattr(_PER_THREAD, "decompress", None)
    if decompress is None:
        import zstandard

        decompress = _PER_THREAD.decompress = zstandard.ZstdDecompressor().decompress
    return decompress
