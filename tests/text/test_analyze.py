from pagetwin.config import TextSettings
from pagetwin.text.analyze import TextAnalyzer
from pagetwin.text.keywords import top_keywords

analyzer = TextAnalyzer(TextSettings())


def test_russian_sentence():
    text = "Мы долго играли с кошками во дворе, а потом кошки ушли домой."
    a = analyzer.analyze(text)
    assert a.lang == "ru"
    pairs = dict(zip(a.surface, a.tokens))
    assert pairs["кошками"] == "кошка" and pairs["кошки"] == "кошка" and pairs["играли"] == "играть"
    stops = dict(zip(a.surface, a.stop))
    assert stops["с"] and stops["во"] and not stops["кошками"]
    assert top_keywords(a, 1, "density")[0][0] == "кошка"
    for word, start in zip(a.surface, a.starts):
        assert text[start : start + len(word)] == word


def test_english_sentence():
    a = analyzer.analyze("The runner was running fast; she runs every morning before the race.")
    assert a.lang == "en"
    tok = dict(zip(a.surface, a.tokens))
    assert tok["running"] == tok["runs"]
    assert dict(zip(a.surface, a.stop))["the"] if "the" in a.surface else dict(zip(a.surface, a.stop))["The"]


def test_chinese_sentence():
    a = analyzer.analyze("北京是中华人民共和国的首都，也是全国的政治、文化中心。北京有很多名胜古迹。")
    assert a.lang == "zh"
    assert "北京" in a.tokens and "首都" in a.tokens
    assert dict(zip(a.tokens, a.stop))["的"]
    assert top_keywords(a, 1, "density")[0][0] == "北京"


def test_japanese_sentence():
    a = analyzer.analyze("東京都に住んでいます。東京都の人口は多いです。")
    assert a.lang == "ja"
    assert "東京都" in a.tokens and "住む" in a.tokens
    assert top_keywords(a, 1, "density")[0][0] == "東京都"


def test_forced_language_and_empty_text():
    assert TextAnalyzer(TextSettings(lang="ru")).analyze("The cat sat on the mat.").lang == "ru"
    assert analyzer.analyze("cats and dogs", lang="en").tokens == ["cat", "and", "dog"]
    empty = analyzer.analyze("")
    assert empty.lang == "und" and empty.tokens == []
    weird = analyzer.analyze("\x00\ufffd<<>>" * 50 + "🙂" * 10)
    assert len(weird.tokens) == len(weird.surface) == len(weird.starts) == len(weird.stop)
