"""pagetwin.compression: one zstd context per thread, the bytes those of a fresh context."""

from __future__ import annotations

import threading

import zstandard
from hypothesis import given
from hypothesis import strategies as st

from pagetwin.compression import compressor, decompressor


@given(st.binary(max_size=5000), st.sampled_from([1, 3]))
def test_the_bytes_are_a_fresh_contexts_and_read_back(data, level):
    packed = compressor(level)(data)
    assert packed == zstandard.ZstdCompressor(level=level).compress(data)
    assert decompressor()(packed) == data


def test_each_level_and_each_thread_has_its_own():
    assert compressor(1) is not compressor(3) and compressor(3).__self__ is compressor(3).__self__
    here, there = compressor(3).__self__, []
    worker = threading.Thread(target=lambda: there.append((compressor(3).__self__, decompressor().__self__)))
    worker.start()
    worker.join()
    assert there[0][0] is not here and there[0][1] is not decompressor().__self__
