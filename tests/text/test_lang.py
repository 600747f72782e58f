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

from pagetwin.text import cache, lang  # noqa: E402

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
    assert cache.read_arrays(written, lang._STDLIB) is not None
    written.write_bytes(written.read_bytes()[:1000])  # cut short
    _same_identifier(lang._load_identifier(), reference_identifier)
    assert cache.read_arrays(written, lang._STDLIB) is not None


def test_cache_folder_that_cannot_be_written_only_costs_the_unpacking(tmp_path, monkeypatch, reference_identifier):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(blocked / "cache"))
    _same_identifier(lang._load_identifier(), reference_identifier)
    assert blocked.read_text() == "not a folder"
    assert not list(tmp_path.glob("**/*.tmp"))


def test_the_native_paths_model_is_py3langids(reference_identifier):
    # what the native path reads from the cache (labels, alias pairs, row bases, the checks
    # done when it was written) is what py3langid's own identifier holds
    lang.load_model()
    assert lang._classes == reference_identifier.nb_classes
    assert lang._alias_pairs == reference_identifier._alias_pairs == lang.alias_pairs(reference_identifier.nb_classes)
    arrays = lang._cached_model(lang._model_path())
    assert arrays["rowbase"].tolist() == reference_identifier._rowbase
    assert arrays["nextmove"].tobytes() == reference_identifier.tk_nextmove.tobytes()
    table = np.asarray(reference_identifier.nb_ptc)
    assert bool(arrays["ptc_settles"][0]) == bool(np.isfinite(table).all() and (table <= 0).all())
    assert arrays["dfa_checked"][0] and lang._counter is not None and lang._scorer is not None
    assert lang._scorer.bits.tobytes() == table.view(np.uint16).tobytes()
    assert lang._scorer.prior.tobytes() == reference_identifier.nb_pc.tobytes()


def test_a_model_whose_walk_would_leave_its_tables_is_not_walked_natively():
    model = {"nextmove": np.array([0] * 255 + [7], dtype=np.uint32), "nextmove_row": np.zeros(2, dtype=np.uint16),
             "out_feat": np.array([-1, 0], dtype=np.int32), "ptc": np.zeros((1, 3), np.float16), "pc": np.zeros(3, np.float32),
             "classes": np.array(["a", "b", "c"])}  # fmt: skip
    arrays = lang._cache_arrays(model)
    assert not arrays["dfa_checked"][0] and lang._native_counter(arrays) is None
    model["nextmove"][-1] = 1
    assert lang._cache_arrays(model)["dfa_checked"][0]


def test_a_cache_file_whose_first_line_lies_is_written_again(tmp_path, monkeypatch, reference_identifier):
    # the digest covers the arrays' bytes, not the dtypes of the first line: a dtype changed
    # there (same size) is refused by _well_formed, and the file is unpacked and written again
    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(tmp_path / "cache"))
    lang._cached_model(lang._model_path())
    (written,) = (tmp_path / "cache").iterdir()
    data = written.read_bytes()
    line = data.index(b"\n")
    lied = data[:line].replace(b'"nextmove", "<u4"', b'"nextmove", "<i4"')
    assert lied != data[:line]
    written.write_bytes(lied + data[line:])
    arrays = lang._cached_model(lang._model_path())
    assert arrays["nextmove"].dtype == np.uint32 and lang._well_formed(arrays)
    assert b'"nextmove", "<u4"' in written.read_bytes()[:line]
    _same_identifier(lang._load_identifier(), reference_identifier)
