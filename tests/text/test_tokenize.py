from hypothesis import given, settings
from hypothesis import strategies as st

import pytest

from pagetwin.text import tokenize
from pagetwin.text.tokenize import char_bigrams, segment


def surfaces(text, lang):
    return [s.surface for s in segment(text, lang)]


def test_offsets_point_at_the_words():
    text = "Он сказал: «что-то не так», and don't say e-mail costs 3.14 or 1,000 — 東京都に住む。我爱北京天安门"
    for lang in ("ru", "en", "ja", "zh", "und"):
        for seg in segment(text, lang):
            assert text[seg.start : seg.start + len(seg.surface)] == seg.surface


def test_apostrophes_hyphens_and_numbers_stay_inside_words():
    words = surfaces("don't stop: что-то e-mail 3.14 1,000 end.", "en")
    assert words == ["don't", "stop", "что-то", "e-mail", "3.14", "1,000", "end"]


def test_chinese_yields_words_not_characters_or_sentences():
    text = "中华人民共和国是工人阶级领导的、以工农联盟为基础的人民民主专政的社会主义国家。"
    words = surfaces(text, "zh")
    assert "社会主义" in words and "国家" in words
    mean = sum(map(len, words)) / len(words)
    assert 1.3 < mean < 4, words


def test_japanese_with_sudachi_gives_words_and_normal_forms():
    pytest.importorskip("sudachipy", reason="the 'ja' extra (sudachipy, sudachidict-core) is not installed")
    segs = segment("東京都に住んでいます。", "ja")
    assert [s.surface for s in segs][:2] == ["東京都", "に"]
    assert ("住ん", "住む") in [(s.surface, s.norm) for s in segs]


def test_thai_is_split_into_words():
    words = surfaces("ภาษาไทยเป็นภาษาที่มีระดับเสียง", "th")
    assert "ภาษา" in words and len(words) >= 5
    assert all(len(w) >= 2 for w in words)


def test_char_bigrams():
    assert [s.surface for s in char_bigrams("日本語", 5)] == ["日本", "本語"]
    assert [s.start for s in char_bigrams("日本語", 5)] == [5, 6]
    assert char_bigrams("字", 0)[0].surface == "字"


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["en", "ru", "zh", "ja", "th", "und"]))
def test_never_crashes_and_offsets_are_exact(text, lang):
    last = -1
    for seg in segment(text, lang):
        assert seg.surface
        assert text[seg.start : seg.start + len(seg.surface)] == seg.surface
        assert seg.start >= last or lang == "ja"  # bigrams overlap by one char
        last = seg.start


def test_japanese_without_dictionary_falls_back_to_bigrams_with_a_message(monkeypatch, caplog):
    lazy = tokenize._Lazy()

    def missing(*args, **kwargs):
        raise ModuleNotFoundError("No module named 'sudachidict_core'")

    try:
        import sudachipy
    except ImportError:  # not installed: the loader fails by itself
        pass
    else:
        monkeypatch.setattr(sudachipy, "Dictionary", missing)
    monkeypatch.setattr(tokenize, "_LAZY", lazy)
    with caplog.at_level("WARNING"):
        segs = segment("東京都に住む。Debian", "ja")
    assert [s.surface for s in segs] == ["東京", "京都", "都に", "に住", "住む", "Debian"]
    assert "pagetwin[ja]" in caplog.text
    segment("もう一度", "ja")
    assert caplog.text.count("pagetwin[ja]") == 1  # said once


def test_char_classes_kept_between_runs_are_the_table_built_now(tmp_path, monkeypatch):
    import numpy as np

    from pagetwin.text import tokenize

    monkeypatch.setenv("PAGETWIN_CACHE_DIR", str(tmp_path))
    built = tokenize.char_classes_reference()
    tokenize.char_classes.cache_clear()
    try:
        first = tokenize.char_classes()  # built and written
        tokenize.char_classes.cache_clear()
        second = tokenize.char_classes()  # read back
        assert len(list(tmp_path.iterdir())) == 1
        assert np.array_equal(first, built) and np.array_equal(second, built)
        assert not second.flags.writeable
    finally:
        tokenize.char_classes.cache_clear()
