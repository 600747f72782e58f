"""The native text kernels (pagetwin/text/_fast.pyx) give exactly what their pure-Python
references give: the word scan with its lookups (analyze vs analyze_reference) and the language
identifier (detect_language vs detect_language_reference), on generated and real text."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.text import analyze as analyze_module
from pagetwin.text import lang as lang_module
from pagetwin.text import tokenize
from pagetwin.text.analyze import TextAnalyzer

_fast = pytest.importorskip("pagetwin.text._fast", reason="native kernels not built (pip install -e .)")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "debian-docs.warc.gz"
SHARED = ROOT.parent / "shared" / "data" / "extraction"

# Pieces of text where the scan's rules are decided: scripts, numbers, separators, marks.
PIECES = [
    "word", "Don't", "e-mail", "что-то", "кошками", "Ёлка", "3.14", "1,000", "1.2.3a", "12.3a",
    "x1,2,3", "2,3๑๒๓w", "2,", ".5", "１２３", "²", "中文的文本", "これはテスト", "カタカナー", "々〆〇",
    "ภาษาไทย", "๑๒๓", "ພາສາລາວ", "ភាសាខ្មែរ", "မြန်မာ", "한국어", "e\u0301cole", "\u0301", "🎉",
    "👩\u200d💻", "ﬁ", "İstanbul", "ß", "Ǆ", "\u2019", "'", "-", "--", "’s", "a'", "'a", " ", "\n",
    "\t", ".", ",", "\u00a0", "\ud800", "\U000e0100", "\U00020000", "\U00031350", "\ufeff", "",
]
texts = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(max_size=6), st.characters()), max_size=40
).map("".join)
LANGS = ["en", "ru", "zh", "ja", "th", "de", "und", "ko"]


@pytest.fixture(scope="module")
def analyzer():
    return TextAnalyzer()


def _both(analyzer, text, lang):
    native, reference = analyzer.analyze(text, lang), analyzer.analyze_reference(text, lang)
    # without the words as written (the pipeline's analyses): the same tokens and stop flags
    assert analyzer.analyze(text, lang, surfaces=False) == replace(native, surface=[], starts=[])
    assert analyzer.analyze_reference(text, lang, surfaces=False) == replace(reference, surface=[], starts=[])
    return native, reference


@settings(max_examples=400, deadline=None)
@given(text=texts, lang=st.sampled_from(LANGS))
def test_native_word_scan_equals_the_reference_on_generated_text(analyzer, text, lang):
    native, reference = _both(analyzer, text, lang)
    assert native == reference


@settings(max_examples=150, deadline=None)
@given(text=texts)
def test_japanese_without_its_dictionary_gives_the_same_bigrams(analyzer, text):
    with pytest.MonkeyPatch.context() as patch:  # no Sudachi: both scans cut kana and Han in bigrams
        patch.setattr(tokenize._LAZY, "sudachi", lambda: None)
        native, reference = _both(analyzer, text, "ja")
    assert native == reference


def _scan(text: str, lang: str, tools, words):
    out = ([], [], [], [])
    _fast.analyze_words(
        text, tokenize.char_classes(), lang != "zh", lang == "ja", tools.cache, tools.compute,
        tokenize.han_cut, tokenize.sea_words, tokenize.char_bigrams, *out, words,
    )  # fmt: skip
    return out


@settings(max_examples=200, deadline=None)
@given(pages=st.lists(texts, min_size=1, max_size=6), lang=st.sampled_from(LANGS), limit=st.integers(1, 40),
       cache_limit=st.integers(1, 40))
def test_the_word_table_gives_what_the_cache_gives(pages, lang, limit, cache_limit):
    # pages in turn through one table (hits from earlier pages), a word met in texts of other
    # string kinds (the same word in Latin-1, UCS-2 and UCS-4 text), a table and a dict that
    # start again at small bounds: the same four lists as the scan through the dict alone
    tools = analyze_module._Language(lang)
    plain = analyze_module._Language(lang)
    words = _fast.WordTable(limit)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(analyze_module, "WORD_CACHE", cache_limit)
        for text in [t for page in pages for t in (page, page + " é", page + " 中", page + " 🎉")]:
            assert _scan(text, lang, tools, words) == _scan(text, lang, plain, None)
            assert len(words) <= limit


def test_the_word_table_holds_the_words_and_lets_them_go():
    import sys

    tools = analyze_module._Language("en")
    words = _fast.WordTable(3)
    first = _scan("Running running", "en", tools, words)
    word = first[1][0]
    assert len(words) == 2 and tools.cache[word] == ("run", False)
    assert _scan("Running", "en", tools, words)[1][0] is word  # found in the table: no new string
    held = sys.getrefcount(word)
    words.clear()
    assert len(words) == 0 and sys.getrefcount(word) == held - 1
    tools.cache.clear()
    assert sys.getrefcount(word) == held - 2
    _scan("one two three four five", "en", tools, words)  # three, then it starts again
    assert len(words) == 2


HAN_PIECES = ["中文的文本", "我们", "的", "中华人民共和国", "测试", "。", " ", "a", "カタ", "々〆"]
han_texts = st.lists(st.one_of(st.sampled_from(HAN_PIECES), st.sampled_from(PIECES)), max_size=30).map("".join)


@settings(max_examples=200, deadline=None)
@given(pages=st.lists(han_texts, min_size=1, max_size=6), lang=st.sampled_from(["zh", "en", "ja"]),
       limit=st.integers(1, 8), surfaces=st.booleans())
def test_han_words_through_the_memo_and_the_table_are_the_reference(pages, lang, limit, surfaces):
    # each page twice (the second time its runs' cuts come from the memo), a memo that starts
    # again at a small bound: the reference's analysis, whose han_words cuts every run afresh
    analyzer = TextAnalyzer()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(analyze_module, "HAN_CUTS", limit)
        for text in pages + pages:
            assert analyzer.analyze(text, lang, surfaces=surfaces) == analyzer.analyze_reference(text, lang, surfaces)
            assert len(analyzer.language(lang).han_cuts) <= limit


def test_han_words_that_are_not_the_run_are_emitted_as_given():
    # a cut whose words are not the run's characters end to end (never rjieba's): its words as
    # strings, each at the offset the lengths before it give, and no hashes carried
    tools = analyze_module._Language("zh")
    memo: dict = {}

    def cut(run):
        return [run[:1], "文本"] if len(run) > 1 else [run]

    for _ in range(2):
        out = ([], [], [], [])
        carried = _fast.analyze_words(
            "我们 中文", tokenize.char_classes(), False, False, tools.cache, tools.compute, cut,
            tokenize.sea_words, tokenize.char_bigrams, *out, tools.words, lambda t: 1, None, memo, 10,
        )  # fmt: skip
        assert out[1] == ["我", "文本", "中", "文本"] and out[2] == [0, 1, 3, 4]
        assert carried == (None, None)
    assert memo == {"我们": ["我", "文本"], "中文": ["中", "文本"]}


def test_edge_cases_are_the_same(analyzer):
    for text in ["", " ", "\ud800", "🎉🎉", "\u0301\u0301", "1.", "1.2.", "1.2,3.4x", "a-b-c-", "ab'’cd"]:
        for lang in LANGS:
            native, reference = _both(analyzer, text, lang)
            assert native == reference, (text, lang)


def test_the_number_rule_backtracks_as_the_regex_does(analyzer):
    out = analyzer.analyze("1.2.3a 12.3a 3.14 x1,2,3 2,3๑๒๓word", "en")
    assert out.surface == ["1.2", "3a", "12", "3a", "3.14", "x1", "2,3", "2,3๑๒", "๓", "word"]
    assert out.starts == [0, 4, 7, 10, 13, 18, 21, 25, 30, 31]
    assert out == analyzer.analyze_reference("1.2.3a 12.3a 3.14 x1,2,3 2,3๑๒๓word", "en")


def test_char_classes_follow_the_regex_classes():
    table = tokenize.char_classes()
    assert len(table) == 0x110000
    assert table[ord("a")] == tokenize.CLASS_WORD
    assert table[ord("7")] == tokenize.CLASS_WORD | tokenize.CLASS_DIGIT
    assert table[ord("中")] == tokenize.CLASS_CJK
    assert table[ord("カ")] == tokenize.CLASS_CJK | tokenize.CLASS_KANA
    assert table[ord("๑")] == tokenize.CLASS_SEA | tokenize.CLASS_DIGIT  # a Thai digit
    assert table[ord("\u0301")] == tokenize.CLASS_WORD  # a combining mark
    assert table[ord(" ")] == table[ord("-")] == table[0xD800] == 0


def _real_texts(limit: int = 400) -> list[str]:
    from pagetwin.config import Settings
    from pagetwin.pipeline import Worker
    from pagetwin.sources import SourceStats, iter_pages

    settings_ = Settings()
    worker = Worker(settings_)
    inputs = [str(EXAMPLE)]
    for sub in ("chinese_wce", "scrapinghub", "cleanportaleval"):
        if (SHARED / sub).is_dir():
            inputs.append(str(SHARED / sub))
    out = []
    for page in iter_pages(inputs, settings_.input, SourceStats()):
        text = worker.safe_extract(page)
        if text:
            out.append(text)
        if len(out) >= limit:
            break
    return out


@pytest.fixture(scope="module")
def real_texts():
    found = _real_texts()
    assert found, "no text extracted from the example crawl"
    return found


def test_native_kernels_equal_the_references_on_real_pages(analyzer, real_texts):
    for text in real_texts:
        lang = lang_module.detect_language(text)
        assert lang == lang_module.detect_language_reference(text)
        native, reference = _both(analyzer, text, lang)
        assert native == reference
        # the same text in another script's rules, and cut at odd places
        for other in ("ja", "zh", "ru"):
            assert _both(analyzer, text[3:2000], other)[0] == _both(analyzer, text[3:2000], other)[1]


def test_native_keyword_counts_equal_the_reference_on_real_pages(analyzer, real_texts):
    """The counts of the native scan's tokens (one object for each sight of a known word, so
    counted by object and merged) are the reference's, in its order."""
    from pagetwin.text.keywords import is_keyword_candidate, keyword_counts_reference

    known = {}
    for text in real_texts:
        a = analyzer.analyze(text)
        expected = list(keyword_counts_reference(a.tokens, a.stop).items())
        assert list(_fast.keyword_counts(a.tokens, a.stop, is_keyword_candidate, known).items()) == expected


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_native_language_identifier_equals_py3langid(text):
    assert lang_module.detect_language(text) == lang_module.detect_language_reference(text)


def _scores_both(text: str):
    identifier = lang_module._get_identifier()
    encoded = identifier._encode(text[: lang_module.SAMPLE_CHARS])
    visits = lang_module._counter.visits(encoded)
    if not visits:
        return None, None
    return lang_module._scorer(*lang_module._counter.visit_arrays(encoded)), identifier._sparse_score(visits, identifier.nb_ptc)


@settings(max_examples=200, deadline=None)
@given(text=texts)
def test_native_gather_gives_py3langids_scores_bit_for_bit(text):
    native, reference = _scores_both(text)
    assert (native is None and reference is None) or (native.dtype == reference.dtype and native.tobytes() == reference.tobytes())


_HALF_TO_FLOAT = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32)


# zeros, the smallest and largest subnormal, infinities, a NaN, the smallest and largest normal
_EDGE_HALVES = [0, 0x8000, 0x0001, 0x83FF, 0x7C00, 0xFC00, 0x7E00, 0x0400, 0x7BFF, 0xFBFF]


def _gathered_as_numpy_would(table: np.ndarray, rows: np.ndarray) -> bool:
    out = _fast.gather_rows(table, rows, _HALF_TO_FLOAT)
    expected = table[rows].view(np.float16).astype(np.float32)
    return out.dtype == np.float32 and out.shape == expected.shape and out.tobytes() == expected.tobytes()


def test_gather_converts_every_half_as_numpy_does():
    # all 65,536 bit patterns, rows of normal halves (bit arithmetic) and rows with zeros,
    # subnormals, infinities and NaNs (the table), and every row width the vector loop ends on
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    for width in (1, 3, 7, 8, 9, 16, 31, 142):
        table = np.resize(every, (-(-every.size // width), width)).copy()
        assert _gathered_as_numpy_would(table, np.arange(len(table), dtype=np.intp))
    normal = every[((every & 0x7C00) != 0) & ((every & 0x7C00) != 0x7C00)]
    table = normal[: 142 * (normal.size // 142)].reshape(-1, 142)
    assert _gathered_as_numpy_would(table, np.arange(len(table) - 1, -1, -1, dtype=np.intp))


@settings(max_examples=200, deadline=None)
@given(width=st.integers(0, 40),
       cells=st.lists(st.one_of(st.integers(0, 0xFFFF), st.sampled_from(_EDGE_HALVES)), min_size=1, max_size=400),
       picks=st.lists(st.integers(0, 1 << 20), max_size=30))
def test_gather_of_any_rows_equals_numpys_conversion(width, cells, picks):
    table = np.array(cells, dtype=np.uint16)
    table = table[: width * (table.size // width)].reshape(-1, width) if width else np.zeros((len(cells), 0), np.uint16)
    if not len(table):
        return
    assert _gathered_as_numpy_would(table, np.array([p % len(table) for p in picks], dtype=np.intp))


def _counter_with_warmup(warmup: int):
    identifier = lang_module._get_identifier()
    output = np.asarray(identifier.tk_output, dtype=np.int32)
    return _fast.DfaCounter(
        np.frombuffer(identifier.tk_nextmove, dtype=np.uint32), np.asarray(identifier._rowbase, dtype=np.int64),
        output, int(output.max()) + 1, warmup,
    )  # fmt: skip


def _same_visits(counter, data: bytes, lanes: int) -> bool:
    expected = counter.visits(data)
    features, counts = counter.visit_arrays(data, lanes)
    return features.dtype == np.intp and counts.dtype == np.float32 and (
        list(expected) == features.tolist() and list(expected.values()) == counts.astype(int).tolist()
    )


@settings(max_examples=200, deadline=None)
@given(data=st.one_of(st.binary(max_size=3000), texts.map(lambda t: t.encode("utf-8", "surrogatepass") * 40)),
       lanes=st.integers(1, 12), warmup=st.sampled_from([0, 1, 3, 16]))
def test_the_walk_in_pieces_counts_as_one_walk(data, lanes, warmup):
    # a warm-up too short to reach the true state (0, 1) must still give one walk's counts
    assert _same_visits(_counter_with_warmup(warmup), data, lanes)


def test_the_walk_in_pieces_counts_as_one_walk_on_real_pages(real_texts):
    identifier = lang_module._get_identifier()
    short = _counter_with_warmup(0)
    for text in real_texts:
        data = identifier._encode(text)
        assert _same_visits(lang_module._counter, data, 8) and _same_visits(short, data, 8)


def test_native_scores_equal_py3langids_on_real_pages(real_texts):
    assert lang_module._scorer is not None
    for text in real_texts:
        native, reference = _scores_both(text)
        assert native is not None and native.tobytes() == reference.tobytes()


def test_without_the_native_module_one_warning_and_the_same_output(monkeypatch, caplog, analyzer):
    text = "Привет, что-то кошками 中文 3.14"
    expected = analyzer.analyze(text, "ru")
    monkeypatch.setattr(analyze_module, "_fast", None)
    monkeypatch.setattr(analyze_module, "_FAST_MISSING", "No module named 'pagetwin.text._fast'", raising=False)
    analyze_module._warn_reference.cache_clear()
    with caplog.at_level(logging.WARNING, logger="pagetwin.text.analyze"):
        first = TextAnalyzer().analyze(text, "ru")
        second = TextAnalyzer().analyze(text, "ru")
    assert first == second == expected
    warnings = [r for r in caplog.records if "native text kernels are not built" in r.getMessage()]
    assert len(warnings) == 1


def test_pymorphy3_reads_its_dictionary_natively():
    """pymorphy3[fast] (DAWG2): the C DAWG reader, 5x faster per new Russian word than the
    pure-Python one, with the same lemmas (bench: 21 vs 116 us a word, 3,397 words)."""
    import pymorphy3.dawg

    assert pymorphy3.dawg.EXTENSION_AVAILABLE, "install pymorphy3[fast] (pip install -e .)"


# Whitespace as str.split() knows it (ASCII, the C0/C1 separators, Unicode spaces), and what is not.
SPACES = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u1680", "\u2000", "\u200a",
          "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u200b", "\ufeff", "\x00"]
spaced = st.lists(st.one_of(st.sampled_from(SPACES), st.sampled_from(PIECES), st.text(max_size=4)), max_size=40).map("".join)


def _collapse_reference(text: str, lower_ascii: bool = False) -> bytes:
    return " ".join((text.lower() if lower_ascii else text).split()).encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(text=spaced)
def test_collapse_utf8_equals_split_join_encode(text):
    try:
        expected = _collapse_reference(text)
    except UnicodeEncodeError:  # a lone surrogate: the kernel leaves it to the caller's encode
        expected = None
    assert _fast.collapse_utf8(text) == expected
    ascii_text = text.encode("ascii", "ignore").decode()
    assert _fast.collapse_utf8(ascii_text, True) == _collapse_reference(ascii_text, True)


def test_collapse_utf8_of_every_code_point():
    import sys

    for start in range(0, sys.maxunicode + 1, 4096):
        chars = [chr(c) for c in range(start, min(start + 4096, sys.maxunicode + 1)) if not 0xD800 <= c <= 0xDFFF]
        for text in ("".join(chars), " ".join(chars), "\u3000".join(chars) + "\n"):
            assert _fast.collapse_utf8(text) == _collapse_reference(text), start
    assert _fast.collapse_utf8("a\ud800") is None


def test_collapse_utf8_on_real_pages(real_texts):
    for text in real_texts:
        assert _fast.collapse_utf8(text) == _collapse_reference(text)
        assert _fast.collapse_utf8(text.casefold()) == _collapse_reference(text.casefold())


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_compat_substitute_replaces_each_flagged_character(text):
    from pagetwin.text import normalize

    flags, replacement = normalize._compat_table()
    got = _fast.compat_substitute(text, flags, replacement)
    assert got == "".join(replacement.get(ord(c), c) for c in text)
    if not any(ord(c) in replacement for c in text):
        assert got is text  # nothing copied


def test_compat_table_is_what_nfkc_changes_alone():
    import unicodedata

    from pagetwin.text import normalize

    flags, replacement = normalize._compat_table()
    assert flags.shape == (0x10000,) and set(np.flatnonzero(flags)) == set(replacement)
    assert replacement[0xFF0C] == "," and replacement[0x2026] == "..." and replacement[0xA0] == " "
    for code, normal in replacement.items():
        assert unicodedata.normalize("NFKD", normal) == unicodedata.normalize("NFKD", chr(code))


@pytest.fixture(scope="module")
def hashing_analyzer():
    from pagetwin.fingerprints.hashing import token_hash

    return TextAnalyzer(token_hash=token_hash)


def _check_carried_hashes(analysis):
    """The hashes and keyword flags the tokens carry (when they do) are what the fingerprints
    and keyword counts would compute; the hashes carried, or None."""
    from pagetwin.fingerprints.hashing import TokenHasher, token_hashes
    from pagetwin.text.keywords import is_keyword_candidate, keyword_counts, keyword_counts_reference

    hashes = getattr(analysis.tokens, "hashes", None)  # a plain list: none carried (no text, Sudachi's words)
    flags = getattr(analysis.tokens, "keywords", None)
    assert (hashes is None) == (flags is None)  # both, or neither
    if hashes is not None:
        assert hashes.dtype == np.uint64 and not hashes.flags.writeable
        assert hashes.tolist() == token_hashes(list(analysis.tokens)).tolist()
        assert TokenHasher()(analysis.tokens) is hashes  # read, not hashed again
        expected = [not s and is_keyword_candidate(t) for t, s in zip(analysis.tokens, analysis.stop)]
        assert list(map(bool, flags)) == expected
    counts = keyword_counts(analysis.tokens, analysis.stop, {})
    assert list(counts.items()) == list(keyword_counts_reference(list(analysis.tokens), analysis.stop).items())
    return hashes


@settings(max_examples=300, deadline=None)
@given(pages=st.lists(texts, min_size=1, max_size=5), lang=st.sampled_from(LANGS), surfaces=st.booleans())
def test_the_hashes_the_scan_carries_are_token_hashes(hashing_analyzer, pages, lang, surfaces):
    # pages in turn through the language's one table: words hashed on an earlier page, or
    # before the analyser hashed at all, carry the same values
    for text in pages:
        analysis = hashing_analyzer.analyze(text, lang, surfaces=surfaces)
        assert analysis == hashing_analyzer.analyze_reference(text, lang, surfaces=surfaces)
        _check_carried_hashes(analysis)


def test_the_hashes_are_carried_on_real_pages(hashing_analyzer, analyzer, real_texts):
    carried = 0
    for text in real_texts:
        lang = lang_module.detect_language(text)
        analysis = hashing_analyzer.analyze(text, lang)
        assert analysis == analyzer.analyze(text, lang)
        carried += _check_carried_hashes(analysis) is not None
    assert carried >= len(real_texts) // 2  # the pages in scripts without a segmenter


def _settled_and_exact(text: str):
    """(settled label or None, py3langid's label from its own scores, the bound's check)."""
    from py3langid.langid import RAW_FLOOR

    identifier = lang_module._get_identifier()
    scorer = lang_module._scorer
    encoded = identifier._encode(text[: lang_module.SAMPLE_CHARS])
    rows, counts = lang_module._counter.visit_arrays(encoded)
    if not len(rows):
        return None, None, True
    reference = identifier._sparse_score(lang_module._counter.visits(encoded), identifier.nb_ptc)
    # the double sums are within the bound of the float32 scores (before folding): half the
    # bound settled() allows, which doubles it for the bound's own roundings
    x = np.log1p(counts)
    sums = scorer.sum_rows(scorer.bits, rows, x, scorer.half_to_float)
    n = len(rows)
    gamma = (n + 1) * 2.0**-24 / (1 - (n + 1) * 2.0**-24) + n * 2.0**-53
    values = sums + scorer.prior64
    within = bool(np.all(np.abs(reference.astype(np.float64) - values) <= gamma * -sums + 2.0**-24 * np.abs(values) + 1e-30))
    for i, j in identifier._alias_pairs:
        reference[i] = max(reference[i], reference[j])
        reference[j] = RAW_FLOOR
    return scorer.settled(rows, counts), int(reference.argmax()), within


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_a_settled_label_is_py3langids(text):
    settled, exact, within = _settled_and_exact(text)
    assert within and settled in (None, exact)


def test_labels_are_settled_and_py3langids_on_real_pages(real_texts):
    settled_count = 0
    for text in real_texts:
        settled, exact, within = _settled_and_exact(text)
        assert within and settled in (None, exact)
        settled_count += settled is not None
    assert settled_count >= len(real_texts) - 1  # a near tie is rare


def test_a_near_tie_is_left_to_the_product():
    # two classes whose scores differ by less than the bound: no label is settled, and the
    # label is still py3langid's
    scorer = lang_module._scorer
    identifier = lang_module._get_identifier()
    row = np.zeros((1, scorer.bits.shape[1]), dtype=np.float16)
    row[0, :] = -8.0
    tie = lang_module._Scorer.__new__(lang_module._Scorer)
    tie.__dict__.update(scorer.__dict__)
    tie.bits = row.view(np.uint16)
    tie.prior64 = np.zeros(row.shape[1])
    tie.prior64[[3, 5]] = [1.0, 1.0 + 1e-7]
    assert tie.settled(np.array([0], dtype=np.intp), np.array([2.0], dtype=np.float32)) is None
    tie.prior64[5] = 2.0
    assert tie.settled(np.array([0], dtype=np.intp), np.array([2.0], dtype=np.float32)) == 5
    assert lang_module.detect_language("a near tie") == lang_module.detect_language_reference("a near tie")
    assert identifier is lang_module._get_identifier()


@settings(max_examples=300, deadline=None)
@given(width=st.integers(1, 12), cells=st.lists(st.integers(0, 0x7BFF), min_size=1, max_size=120),
       picks=st.lists(st.integers(0, 1000), min_size=1, max_size=30),
       counts=st.lists(st.integers(1, 50), min_size=30, max_size=30),
       prior=st.lists(st.sampled_from([0.0, -1.0, -1.0 + 1e-7, -2.5, -30.0]), min_size=12, max_size=12),
       aliases=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=3))
def test_the_native_settle_is_the_numpy_bound(width, cells, picks, counts, prior, aliases):
    # small tables of non-positive halves, priors that tie or nearly tie, alias pairs folded in
    # turn: settled (one native call) gives what settled_reference's numpy steps give
    bits = np.array([0x8000 | c for c in cells[: len(cells) // width * width]], dtype=np.uint16).reshape(-1, width)
    if not len(bits):
        return
    scorer = lang_module._Scorer.__new__(lang_module._Scorer)
    scorer.__dict__.update(lang_module._scorer.__dict__)
    scorer.bits = bits
    scorer.prior64 = np.array(prior[:width])
    scorer.alias_pairs = [(i % width, j % width) for i, j in aliases if i % width != j % width]
    scorer.alias_array = np.array(scorer.alias_pairs, dtype=np.intp).reshape(-1, 2)
    rows = np.array([p % len(bits) for p in picks], dtype=np.intp)
    weights = np.array(counts[: len(rows)], dtype=np.float32)
    assert scorer.settled(rows, weights) == scorer.settled_reference(rows, weights)


def test_the_native_settle_is_the_numpy_bound_on_real_pages(real_texts):
    identifier = lang_module._get_identifier()
    for text in real_texts:
        rows, counts = lang_module._counter.visit_arrays(identifier._encode(text[: lang_module.SAMPLE_CHARS]))
        if len(rows):
            assert lang_module._scorer.settled(rows, counts) == lang_module._scorer.settled_reference(rows, counts)


@settings(max_examples=100, deadline=None)
@given(width=st.integers(0, 40), cells=st.lists(st.sampled_from(_EDGE_HALVES[:4] + _EDGE_HALVES[7:]) | st.integers(0, 0x7BFF),
       min_size=1, max_size=200), picks=st.lists(st.integers(0, 1000), max_size=30))
def test_sum_rows_is_the_double_sum_of_the_rows(width, cells, picks):
    # every finite half, every width the vector loop ends on: sum_rows == the sum in double of
    # numpy's float32 rows times the weights, up to the order of the double additions
    n_rows = max(1, len(cells) // max(width, 1))
    table = np.resize(np.asarray(cells, dtype=np.uint16), (n_rows, width))
    rows = np.asarray([p % n_rows for p in picks], dtype=np.intp)
    x = np.log1p(np.arange(1, len(rows) + 1, dtype=np.float32))
    got = _fast.sum_rows(np.ascontiguousarray(table), rows, x, _HALF_TO_FLOAT)
    terms = x.astype(np.float64)[:, None] * table[rows].view(np.float16).astype(np.float64)
    assert got.shape == (width,) and np.allclose(got, terms.sum(axis=0), rtol=1e-12, atol=0)
