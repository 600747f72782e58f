"""The settings tree: TOML in and out, profiles, Settings.validate, the fields' descriptions."""

from dataclasses import fields as _fields

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from pagetwin.config import ConfigError, Settings, setting_fields


def test_toml_round_trip(tmp_path):
    s = Settings()
    s.set("minhash.threshold", "0.65")
    s.set("match.algorithms", "exact,minhash")
    path = tmp_path / "c.toml"
    path.write_text(s.to_toml())
    loaded = Settings.load(path)
    assert loaded == s
    assert loaded.minhash.threshold == 0.65
    assert loaded.match.algorithms == ["exact", "minhash"]


def test_unknown_and_mistyped_settings_are_named(tmp_path):
    with pytest.raises(ConfigError, match="minhash.nope"):
        Settings.from_dict({"minhash": {"nope": 1}})
    with pytest.raises(ConfigError, match="simhash.k"):
        Settings.from_dict({"simhash": {"k": "three"}})
    with pytest.raises(ConfigError, match="simhash.k"):
        Settings.from_dict({"simhash": {"k": "\u00b2"}})  # a digit to str.isdigit, not to int()
    bad = tmp_path / "bad.toml"
    bad.write_text("[minhash\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        Settings.load(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        Settings.load(tmp_path / "missing.toml")


def test_hyphenated_sections_and_booleans():
    s = Settings.from_dict({"extract": {"templates": False}, "chunks": {"merge-partial": True}})
    assert s.extract.templates is False and s.chunks.merge_partial is True


def test_profiles_apply_over_the_defaults_and_toml_over_the_profile(tmp_path):
    from pagetwin.config import PROFILES

    assert set(PROFILES) >= {"reposts", "near-identical"} and PROFILES["reposts"] == {}
    near = Settings.with_profile("near-identical")
    assert (near.minhash.shingle, near.minhash.multiset, near.minhash.threshold) == (1, True, 0.9)
    assert Settings.with_profile("reposts") == Settings()
    path = tmp_path / "c.toml"
    path.write_text("[minhash]\nthreshold = 0.85\n")
    loaded = Settings.load(path, "near-identical")
    assert loaded.minhash.threshold == 0.85 and loaded.minhash.shingle == 1
    with pytest.raises(ConfigError, match="unknown profile 'nope'"):
        Settings.with_profile("nope")


# --- Settings.validate -------------------------------------------------------------------------


def test_the_defaults_and_every_profile_validate():
    from pagetwin.config import PROFILES

    Settings().validate()
    for name in PROFILES:
        Settings.with_profile(name).validate()


@pytest.mark.parametrize(
    "dotted, value, allowed",
    [
        ("minhash.threshold", 1.5, "in (0, 1)"),
        ("minhash.threshold", 1.0, "in (0, 1)"),  # the LSH bands need a threshold below 1
        ("minhash.threshold", 0.0, "in (0, 1)"),
        ("minhash.threshold", float("nan"), "in (0, 1)"),
        ("images.max_words_per_image", float("inf"), "> 0"),
        ("minhash.num_perm", -3, ">= 1"),
        ("minhash.num_perm", 0, ">= 1"),
        ("simhash.k", 64, "in [0, 63]"),
        ("simhash.bits", 32, "must be 64"),
        ("simhash.weighting", "idf", "one of tf, logtf, binary"),
        ("match.guard_share", -0.1, "in [0, 1]"),
        ("match.algorithms", ["exact", "nope"], "one of exact"),
        ("cluster.keep", "shortest", "one of longest, earliest, first"),
        ("extract.site_key", "path", "one of host, domain"),
        ("keywords.weighting", "bm25", "one of tfidf, density"),
        ("keywords.des_mode", "title", "one of auto"),
        ("chunks.epsilon", 2.0, "> 2"),
        ("run.workers", -1, ">= 0"),
        ("input.statuses", "7xx", "status codes"),
        ("run.temp_dir", "/nonexistent/pagetwin-test", "an existing folder"),
    ],
)
def test_a_bad_value_is_one_line_naming_setting_value_and_what_is_allowed(dotted, value, allowed):
    s = Settings()
    section, _, name = dotted.partition(".")
    setattr(getattr(s, section), name, value)  # as Python code may: validate sees it, not set()
    with pytest.raises(ConfigError) as info:
        s.validate()
    message = str(info.value)
    assert "\n" not in message and dotted in message and allowed in message
    shown = ",".join(value) if isinstance(value, list) else repr(value)
    assert shown in message


def test_wrong_types_and_joined_rules_are_refused():
    s = Settings()
    s.minhash.num_perm = "many"
    with pytest.raises(ConfigError, match=r"minhash.num_perm = 'many': must be an int"):
        s.validate()
    s = Settings()
    s.segments.m, s.segments.n = 9, 8
    with pytest.raises(ConfigError, match="segments.m = 9: must be at most segments.n = 8"):
        s.validate()
    s = Settings()
    s.minhash.min_bands, s.minhash.num_perm = 9, 8
    with pytest.raises(ConfigError, match="minhash.min_bands = 9: must be at most minhash.num_perm = 8"):
        s.validate()
    s = Settings()
    s.simhash.blocks = 5  # k = 5: a table needs n - k >= 1 blocks
    with pytest.raises(ConfigError, match="simhash.blocks = 5: must be 0 or more than simhash.k = 5"):
        s.validate()
    s.simhash.blocks, s.simhash.k = 40, 10  # C(40, 10) tables: hundreds of millions
    with pytest.raises(ConfigError, match="block tables"):
        s.validate()
    s = Settings()
    s.match.algorithms = []
    with pytest.raises(ConfigError, match="match.algorithms is empty"):
        s.validate()
    s.match.algorithms = ["minhash", "exact", "minhash"]
    with pytest.raises(ConfigError, match="match.algorithms names minhash more than once"):
        s.validate()


# Values drawn around and beyond each numeric setting's bounds, for the property below.
# num_perm is bounded above only to keep lsh_params (quadratic in num_perm) fast here.
_NUMBERS = {
    "simhash.k": st.integers(-3, 70),
    "simhash.blocks": st.integers(-2, 70),
    "simhash.min_key_bits": st.integers(-2, 70),
    "simhash.bits": st.sampled_from([0, 32, 64, 128]),
    "simhash.shingle": st.integers(-2, 6),
    "minhash.threshold": st.one_of(st.floats(-0.5, 1.5), st.sampled_from([0.0, 1.0, float("nan"), float("inf")])),
    "minhash.num_perm": st.integers(-5, 160),
    "minhash.seed": st.integers(-5, 2**70),
    "minhash.fp_weight": st.floats(-1, 2),
    "minhash.fn_weight": st.floats(-1, 2),
    "segments.n": st.integers(-2, 12),
    "segments.m": st.integers(-2, 12),
    "images.key_k": st.integers(-2, 70),
    "images.phash_k": st.integers(-2, 70),
}


@hyp_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({}, optional=_NUMBERS))
def test_what_validate_accepts_builds_and_what_it_refuses_is_a_config_error(values):
    """Every algorithm built from settings validate() accepts builds (images' lazy key masks
    included); settings it refuses raise ConfigError and nothing else."""
    from pagetwin.fingerprints import MODULES, build_algorithms

    s = Settings()
    s.match.algorithms = list(MODULES)
    for dotted, value in values.items():
        section, _, name = dotted.partition(".")
        setattr(getattr(s, section), name, value)
    try:
        s.validate()
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    for algorithm in build_algorithms(s):
        if algorithm.name == "images":
            from pagetwin.fingerprints.lsh import block_table_masks

            k = max(0, min(s.images.key_k, s.images.phash_k))
            if k > 0:
                block_table_masks(k)  # what ImageAlgorithm.keys builds on first use


def test_every_setting_is_checked_for_its_type():
    """A string in every non-string setting is refused (no setting escapes validate)."""
    for dotted, _f, value in setting_fields():
        if isinstance(value, str):
            continue
        s = Settings()
        section, _, name = dotted.partition(".")
        setattr(getattr(s, section), name, "x")
        with pytest.raises(ConfigError, match=dotted.replace(".", r"\.")):
            s.validate()
    assert {f.name for f in _fields(Settings)} == {d.split(".")[0] for d, _, _ in setting_fields()}


def test_every_setting_has_a_one_line_description_a_tier_and_its_commands():
    """Walks the dataclasses themselves, so a new field without metadata fails here."""
    from pagetwin.config import COMMANDS, REMOVED

    seen = 0
    for section in _fields(Settings):
        for f in _fields(type(getattr(Settings(), section.name))):
            dotted = f"{section.name}.{f.name}"
            assert dotted not in REMOVED
            seen += 1
            described = f.metadata.get("help", "")
            assert described and "\n" not in described and len(described) <= 160, dotted
            assert not described.startswith("default"), dotted
            assert f.metadata["tier"] in ("user", "expert"), dotted
            assert f.metadata["commands"] and set(f.metadata["commands"]) <= set(COMMANDS), dotted
    assert seen == len(list(setting_fields())) >= 60


def test_removed_settings_are_refused_from_toml_and_set_but_ignored_in_stored_settings(tmp_path):
    path = tmp_path / "old.toml"
    path.write_text("[text]\nkeywords = 4\n")
    with pytest.raises(ConfigError, match=r"'text.keywords' was removed: use `pagetwin keywords --top N`"):
        Settings.load(path)
    with pytest.raises(ConfigError, match=r"'text.weighting' was removed: use `pagetwin keywords --weighting"):
        Settings().set("text.weighting", "density")
    # An index built before the removal stores them: its settings still load.
    stored = Settings().to_dict()
    assert "keywords" not in stored["text"] and "weighting" not in stored["text"]
    stored["text"].update(keywords=4, weighting="density")
    stored["minhash"]["threshold"] = 0.5
    assert Settings.from_dict(stored).minhash.threshold == 0.5


def _inside(f, value):
    """A strategy for values inside what setting ``f`` allows (its declared range or choices)."""
    from pagetwin.config import Choice, Parsed, Range

    allowed = f.metadata["allowed"]
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(allowed, Range):
        lo = allowed.lo if allowed.lo is not None else -100
        if isinstance(value, int):
            lo = int(lo) + (1 if allowed.lo_open else 0)
            hi = int(allowed.hi) - (1 if allowed.hi_open else 0) if allowed.hi is not None else lo + 200
            if f.name == "num_perm":
                hi = 160  # lsh_params is quadratic in num_perm: bounded to keep the test fast
            return st.integers(lo, hi)
        hi = allowed.hi if allowed.hi is not None else lo + 10
        return st.floats(lo, hi, exclude_min=allowed.lo_open, exclude_max=allowed.hi_open)
    if isinstance(allowed, Choice):
        if isinstance(value, list):
            return st.lists(st.sampled_from(allowed.choices()), min_size=1, max_size=6, unique=True)
        return st.sampled_from(allowed.choices())
    if isinstance(allowed, Parsed):
        return st.sampled_from(["2xx", "any", "2xx,404", "200,3xx"])
    return st.just(value)


_INSIDE = {dotted: _inside(f, value) for dotted, f, value in setting_fields()}


@hyp_settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries(_INSIDE))
def test_values_inside_every_declared_range_build_unless_a_joined_rule_refuses(values):
    """Every setting at once, each inside its declared range: validate() refuses only by a rule
    joining two settings, and what it accepts builds every algorithm."""
    from pagetwin.fingerprints import MODULES, build_algorithms
    from pagetwin.fingerprints.lsh import block_table_masks

    s = Settings()
    for dotted, value in values.items():
        section, _, name = dotted.partition(".")
        setattr(getattr(s, section), name, value)
    s.match.algorithms = list(MODULES)
    try:
        s.validate()
    except ConfigError as exc:
        assert any(rule in str(exc) for rule in ("segments.m", "simhash.blocks", "minhash.min_bands")), exc
        return
    built = build_algorithms(s)
    assert [a.name for a in built] == list(MODULES)
    k = max(0, min(s.images.key_k, s.images.phash_k))
    if k > 0:
        block_table_masks(k)  # what the images algorithm builds on first use


_SCALARS = st.one_of(
    st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8), st.sampled_from(["2xx", "any", "true", "0", "1e3", "exact,minhash", "density", "-3", "\u00b2", "nan"]),
)  # fmt: skip
_SECTION = st.dictionaries(
    st.sampled_from([d.split(".")[1] for d, _, _ in setting_fields()] + ["keywords", "weighting", "nope"]),
    st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3), st.dictionaries(st.text(max_size=3), _SCALARS, max_size=2)),
    max_size=4,
)


@hyp_settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from([f.name for f in _fields(Settings)] + ["nope"]),
                       st.one_of(_SECTION, _SCALARS), max_size=4))  # fmt: skip
def test_any_toml_shaped_data_is_settings_or_one_config_error(data):
    """What a TOML file can hold (tables, scalars, lists, in any section under any name) gives
    valid settings or a one-line ConfigError: nothing else reaches the user."""
    try:
        Settings.from_dict(data).validate()
        loaded = Settings()
        for section, table in data.items():
            for name, value in table.items():
                loaded.set(f"{section}.{name}", value)  # --set takes the same values
        loaded.validate()
    except ConfigError as exc:
        assert "\n" not in str(exc)
