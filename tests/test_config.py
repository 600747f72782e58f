import pytest

from pagetwin.config import ConfigError, Settings


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
