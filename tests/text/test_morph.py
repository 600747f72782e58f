import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagetwin.text.morph import EndingTable, Morphology, build_endings, fold, shipped_ending_table


@pytest.fixture(scope="module")
def ru():
    return Morphology("ru")


def test_russian_dictionary_lemmas(ru):
    assert ru.normal("кошками") == "кошка"
    assert ru.normal("Кошками") == "кошка"
    assert ru.normal("играли") == "играть"
    assert ru.normal("ёлками") == "елка"


def test_invented_russian_words_get_stems_from_the_ending_table(ru):
    # Shcherba's "глокая куздра": not in the dictionary, common noun endings.
    forms = ["куздрами", "куздрой", "куздрах", "куздре", "куздру", "куздры"]
    assert not any(ru.known(f) for f in forms)
    stems = {ru.normal(f) for f in forms}
    assert stems == {"куздр"}
    assert ru.normal("вдрызгованиями") == "вдрызгован"


def test_shipped_table_names_its_source():
    table = shipped_ending_table("ru")
    assert table is not None and "gimp-help-ru" in table.source
    assert table.n_end_["ами"] > 10


def test_english_snowball_stems_share():
    en = Morphology("en")
    assert en.normal("running") == en.normal("runs") == en.normal("run")
    assert en.normal("Running") == en.normal("running")


def test_language_without_any_stemmer_is_case_folded():
    assert Morphology("zh").normal("ABC") == "abc"


def test_table_round_trips_and_prefers_the_most_typical_ending():
    table = EndingTable(lang="xx", min_stem=2)
    # "ами" is always an ending; "и" often is not (stems ending in и).
    words = ["папами", "мамами", "дядями", "папи", "мами", "тапки", "лапки", "такси", "пари", "жюри"]
    endings = {"папами": "ами", "мамами": "ами", "дядями": "ями", "тапки": "и", "лапки": "и"}
    table.fit(words, endings.get).prune(1)
    assert table.ending("кошками") == "ами"
    back = EndingTable.from_tsv(table.to_tsv())
    assert back.n_end_ == table.n_end_ and back.n_suffix_ == table.n_suffix_
    assert back.min_stem == 2 and back.ending("кошками") == "ами"


def test_min_stem_is_kept():
    table = EndingTable(lang="xx", min_stem=3, n_end_={"ами": 10}, n_suffix_={"ами": 10})
    assert table.stem("рами") == "рами"  # cutting would leave 1 char
    assert table.stem("драми") == "драми"  # would leave 2
    assert table.stem("удрами") == "удр"


def test_build_endings_from_a_text_file(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("Кошки ловили мышей. Кошками любуются. Мышами кошки не любуются. "
                      "Собаками и кошками, книгами и столами, руками и ногами.", "utf-8")
    table = build_endings([corpus], "ru", min_count=2)
    assert "ами" in table.n_end_
    assert table.stem("куздрами") == "куздр"


def test_english_words_on_pages_in_other_scripts_are_stemmed_as_english():
    en = Morphology("en")
    for lang in ("ru", "zh", "ja"):
        assert Morphology(lang).normal("Images") == en.normal("images") == "imag"
    assert Morphology("de").normal("Häuser") == "haus"  # Latin-script languages keep their own stemmer


def test_typographic_apostrophe_is_folded():
    assert Morphology("en").normal("we’re") == Morphology("en").normal("we're")


_MORPHS = {lang: Morphology(lang, cache_size=0) for lang in ("en", "ru", "zh", "de")}


@settings(max_examples=300, deadline=None)
@given(word=st.one_of(st.sampled_from(["Кошками", "ЁЛКА", "Images", "we’re", "Häuser", "ﬁle", "İstanbul", "中文"]), st.text(max_size=12)),
       lang=st.sampled_from(sorted(_MORPHS)))
def test_the_normal_form_of_a_folded_word_is_the_words(word, lang):
    morph = _MORPHS[lang]
    assert morph.normal_folded(fold(word)) == morph.normal(word)


@settings(max_examples=60, deadline=None)
@given(
    lang=st.sampled_from(["en", "de", "fr", "ru", "es", "fi", "tr"]),
    words=st.lists(
        st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzäöüéèçñışабвгдеёжзиклмнопрстуфхцчшщыьэюя'-"), min_size=1, max_size=14),
        min_size=1,
        max_size=40,
    ),
)
def test_stemmer_without_its_own_cache_gives_pystemmers_stems(lang, words):
    # morph._stemmer turns PyStemmer's cache off (its callers keep the words they stem): the
    # stems are those of a default Stemmer, whose cache is on, for words asked once or again.
    import Stemmer

    from pagetwin.text.morph import SNOWBALL, _stemmer

    ours, default = _stemmer(lang), Stemmer.Stemmer(SNOWBALL[lang])
    assert ours.maxCacheSize == 0
    asked = words + words[::-1]
    assert [ours.stemWord(w) for w in asked] == [default.stemWord(w) for w in asked]
