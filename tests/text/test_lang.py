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
