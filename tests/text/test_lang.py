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
