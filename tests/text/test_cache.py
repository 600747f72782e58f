import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.text import cache

_DTYPES = {"f16": np.float16, "f32": np.float32, "u3": "<U3", "u32": np.uint32, "u16": np.uint16, "i32": np.int32}


@st.composite
def _arrays(draw):
    arrays = {}
    for name, dtype in _DTYPES.items():
        n = draw(st.integers(0, 6))
        if dtype == "<U3":
            arrays[name] = np.array(draw(st.lists(st.text("abcz", min_size=1, max_size=3), min_size=n, max_size=n)), dtype="<U3")
        else:
            size = n * np.dtype(dtype).itemsize
            arrays[name] = np.frombuffer(draw(st.binary(min_size=size, max_size=size)), dtype=dtype).copy()
    arrays["f16"] = arrays["f16"][: len(arrays["f16"]) // 2 * 2].reshape(-1, 2)
    return arrays


@settings(max_examples=60, deadline=None)
@given(arrays=_arrays(), where=st.floats(0, 1), cut=st.booleans())
def test_property_cache_file_gives_back_the_arrays_and_any_damage_is_refused(tmp_path_factory, arrays, where, cut):
    target = tmp_path_factory.mktemp("c") / "arrays.bin"
    stdlib = frozenset({"u32", "u16"})
    cache.write_arrays(target, arrays)
    back = cache.read_arrays(target, stdlib)
    assert list(back) == list(arrays)
    for name, value in arrays.items():
        if name in stdlib:
            assert back[name].typecode == cache.TYPECODES[value.dtype.itemsize]
            assert back[name].tobytes() == value.tobytes()
        else:
            assert back[name].dtype == value.dtype and back[name].shape == value.shape
            assert back[name].tobytes() == value.tobytes()
    data = target.read_bytes()
    head = data.index(b"\n") + 1
    if len(data) == head:
        return  # no payload to damage
    at = head + min(int(where * (len(data) - head)), len(data) - head - 1)
    target.write_bytes(data[:at] if cut else data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    assert cache.read_arrays(target, stdlib) is None
    target.write_bytes(data + b"\0")  # longer than written
    assert cache.read_arrays(target, stdlib) is None


def test_cached_arrays_builds_once_then_reads_and_rebuilds_what_is_damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(tmp_path / "c"))
    builds = []

    def build():
        builds.append(1)
        return {"a": np.arange(5, dtype=np.uint32), "b": np.array(["x", "yz"])}

    first = cache.cached_arrays("t", b"source 1", build, frozenset({"a"}))
    again = cache.cached_arrays("t", b"source 1", build, frozenset({"a"}))
    assert len(builds) == 1 and list(first["a"]) == list(again["a"]) == [0, 1, 2, 3, 4]
    assert first["b"].tolist() == again["b"].tolist() == ["x", "yz"]
    cache.cached_arrays("t", b"source 2", build)  # another source: another file
    assert len(builds) == 2 and len(list((tmp_path / "c").iterdir())) == 2
    for written in (tmp_path / "c").iterdir():
        written.write_bytes(written.read_bytes()[:-1])
    cache.cached_arrays("t", b"source 1", build, frozenset({"a"}))
    assert len(builds) == 3
    assert cache.cached_arrays("t", b"none", lambda: None) is None


def test_unwritable_folder_only_costs_the_building(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(blocked / "c"))
    got = cache.cached_arrays("t", b"s", lambda: {"a": np.arange(3, dtype=np.uint16)}, frozenset({"a"}))
    assert list(got["a"]) == [0, 1, 2] and got["a"].typecode == "H"
    assert blocked.read_text() == "not a folder" and not list(tmp_path.glob("**/*.tmp"))


def _payload_spans(data: bytes) -> list[tuple[int, int]]:
    """Where each array's bytes lie in an aligned cache file (the padding between is not
    digested: damage there changes no array)."""
    import json

    head = json.loads(data[: data.index(b"\n")])
    offset, spans = data.index(b"\n") + 1, []
    for _, dtype, shape in head["arrays"]:
        offset += -offset % head["align"]
        end = offset + int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        spans.append((offset, end))
        offset = end
    return spans


@settings(max_examples=60, deadline=None)
@given(arrays=_arrays(), where=st.floats(0, 1), cut=st.booleans())
def test_property_mapped_file_gives_back_the_arrays_aligned_and_any_damage_is_refused(tmp_path_factory, arrays, where, cut):
    target = tmp_path_factory.mktemp("m") / "arrays.bin"
    cache.write_arrays(target, arrays, cache.ALIGN)
    mapped, read = cache.map_arrays(target), cache.read_arrays(target)
    assert list(mapped) == list(read) == list(arrays)
    for name, value in arrays.items():
        for back in (mapped[name], read[name]):
            assert back.dtype == value.dtype and back.shape == value.shape and back.tobytes() == value.tobytes()
        assert not mapped[name].flags.writeable
        assert mapped[name].size == 0 or mapped[name].ctypes.data % cache.ALIGN == 0
    del mapped
    data = target.read_bytes()
    payload = [i for start, end in _payload_spans(data) for i in range(start, end)]
    if not payload:
        return
    at = payload[min(int(where * len(payload)), len(payload) - 1)]
    target.write_bytes(data[:at] if cut else data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    assert cache.map_arrays(target) is None and cache.read_arrays(target) is None
    target.write_bytes(data + b"\0")  # longer than written
    assert cache.map_arrays(target) is None and cache.read_arrays(target) is None
    target.write_bytes(b"")
    assert cache.map_arrays(target) is None


def test_mapped_arrays_builds_once_then_maps_and_rebuilds_what_is_damaged(tmp_path, monkeypatch):
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(tmp_path / "c"))
    builds = []

    def build():
        builds.append(1)
        return {"a": np.arange(5, dtype=np.uint32), "b": np.array(["x", "yz"]), "c": np.ones((2, 3), np.float16)}

    first = cache.mapped_arrays("t", b"source 1", build)
    again = cache.mapped_arrays("t", b"source 1", build)
    assert len(builds) == 1 and not again["a"].flags.writeable
    assert all(np.array_equal(first[k], again[k]) and first[k].dtype == again[k].dtype for k in first)
    (written,) = (tmp_path / "c").iterdir()
    written.write_bytes(written.read_bytes()[:-1])
    assert cache.mapped_arrays("t", b"source 1", build)["a"].tolist() == [0, 1, 2, 3, 4]
    assert len(builds) == 2 and cache.map_arrays(written) is not None  # written again
    assert cache.mapped_arrays("t", b"none", lambda: None) is None


def test_unwritable_folder_only_costs_the_building_of_mapped_arrays(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(blocked / "c"))
    assert cache.mapped_arrays("t", b"s", lambda: {"a": np.arange(3, dtype=np.uint16)})["a"].tolist() == [0, 1, 2]
    assert blocked.read_text() == "not a folder" and not list(tmp_path.glob("**/*.tmp"))
