from pagetwin.text.lang import UNDETERMINED, detect_language


def test_detects_languages_of_real_sentences():
    assert detect_language("Москва — столица России, крупнейший по численности населения город страны.") == "ru"
    assert detect_language("The quick brown fox jumps over the lazy dog while the farmer watches.") == "en"
    assert detect_language("北京是中华人民共和国的首都，也是全国的政治、文化中心。") == "zh"
    assert detect_language("東京は日本の首都であり、世界有数の大都市です。") == "ja"
    assert detect_language("Der schnelle braune Fuchs springt über den faulen Hund.") == "de"


def test_no_letters_is_undetermined():
    assert detect_language("") == UNDETERMINED
    assert detect_language("12 345 — 67.8 %") == UNDETERMINED


# The unpacked model kept between runs (lang._cached_model): what a cache hit gives must be what
# py3langid's own loader gives, and a damaged or unwritable cache must cost only the unpacking.

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pagetwin.text import lang  # noqa: E402

_FIELDS = ("nb_ptc", "nb_pc", "nb_classes", "tk_nextmove", "tk_row", "_rowbase", "tk_output", "_alias_pairs")


def _same_identifier(a, b) -> None:
    for name in _FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert type(x) is type(y), name
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), name
        else:
            assert x == y, name
            assert getattr(x, "typecode", None) == getattr(y, "typecode", None), name


@pytest.fixture(scope="module")
def reference_identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)


def test_cached_model_gives_py3langids_identifier_written_read_and_rewritten(tmp_path, monkeypatch, reference_identifier):
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(tmp_path / "cache"))
    first = lang._load_identifier()  # unpacked and written
    (written,) = (tmp_path / "cache").iterdir()
    _same_identifier(first, reference_identifier)
    _same_identifier(lang._load_identifier(), reference_identifier)  # read back
    data = bytearray(written.read_bytes())
    data[len(data) // 2] ^= 0x40  # a damaged file is noticed, unpacked and written again
    written.write_bytes(bytes(data))
    _same_identifier(lang._load_identifier(), reference_identifier)
    assert lang._read_cache(written) is not None
    written.write_bytes(written.read_bytes()[:1000])  # cut short
    _same_identifier(lang._load_identifier(), reference_identifier)
    assert lang._read_cache(written) is not None


def test_cache_folder_that_cannot_be_written_only_costs_the_unpacking(tmp_path, monkeypatch, reference_identifier):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(blocked / "cache"))
    _same_identifier(lang._load_identifier(), reference_identifier)
    assert blocked.read_text() == "not a folder"
    assert not list(tmp_path.glob("**/*.tmp"))


_ARRAY_DTYPES = {"ptc": np.float16, "pc": np.float32, "classes": "<U3", "nextmove": np.uint32, "nextmove_row": np.uint16, "out_feat": np.int32}


@st.composite
def _models(draw):
    arrays = {}
    for name, dtype in _ARRAY_DTYPES.items():
        n = draw(st.integers(0, 6))
        if dtype == "<U3":
            arrays[name] = np.array(draw(st.lists(st.text("abcz", min_size=1, max_size=3), min_size=n, max_size=n)), dtype="<U3")
        else:
            raw = draw(st.binary(min_size=n * np.dtype(dtype).itemsize, max_size=n * np.dtype(dtype).itemsize))
            arrays[name] = np.frombuffer(raw, dtype=dtype).copy()
    arrays["ptc"] = arrays["ptc"][: len(arrays["ptc"]) // 2 * 2].reshape(-1, 2)
    return arrays


@settings(max_examples=60, deadline=None)
@given(model=_models(), where=st.floats(0, 1), cut=st.booleans())
def test_property_cache_file_gives_back_the_arrays_and_any_damage_is_refused(tmp_path_factory, model, where, cut):
    target = tmp_path_factory.mktemp("c") / "model.bin"
    lang._write_cache(target, model)
    back = lang._read_cache(target)
    loaded = lang._as_loaded(model)
    assert list(back) == list(loaded)
    for name, value in loaded.items():
        if isinstance(value, np.ndarray):
            assert back[name].dtype == value.dtype and back[name].shape == value.shape
            assert back[name].tobytes() == value.tobytes()
        else:
            assert back[name] == value and type(back[name]) is type(value)
    data = target.read_bytes()
    head = data.index(b"\n") + 1
    if len(data) == head:
        return  # no payload to damage
    at = head + min(int(where * (len(data) - head)), len(data) - head - 1)
    target.write_bytes(data[:at] if cut else data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :])
    assert lang._read_cache(target) is None
