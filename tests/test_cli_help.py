"""The command line's settings surface: bad values are one line and exit 2, each command's --help
lists only the user-tier settings it uses, `pagetwin config --describe` lists every setting."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

import pytest

from pagetwin.cli import build_parser, main
from pagetwin.config import COMMANDS, USER, Settings, setting_fields
from pagetwin.outputs.warc import WarcWriter
from tests.fixtures.news import news_crawl

SETTING_FLAG = re.compile(r"--(?:input|extract|text|exact|simhash|minhash|keywords|segments|chunks|images|match|cluster|run)-[a-z-]+")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pagetwin", *args], capture_output=True, text=True, timeout=300)


def _one_line_usage_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0]


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    path = tmp_path_factory.mktemp("crawl") / "c.warc.gz"
    with WarcWriter(path) as w:
        news_crawl(w)
    return path


# --- bad values: one line on stderr, exit 2, before any work ---------------------------------------


def test_minhash_threshold_above_one_is_a_usage_error(crawl, tmp_path):
    result = _run("dedup", str(crawl), "--out", str(tmp_path / "o"), "--minhash-threshold", "1.5")
    _one_line_usage_error(result, "minhash.threshold", "1.5", "(0, 1)")
    assert not (tmp_path / "o").exists()  # checked before any work


def test_negative_num_perm_is_a_usage_error(crawl, tmp_path):
    result = _run("dedup", str(crawl), "--out", str(tmp_path / "o"), "--minhash-num-perm", "-3")
    _one_line_usage_error(result, "minhash.num_perm", "-3", ">= 1")


def test_removed_settings_name_what_replaced_them(crawl, tmp_path):
    toml = tmp_path / "old.toml"
    toml.write_text('[text]\nkeywords = 5\n')
    _one_line_usage_error(_run("keywords", str(crawl), "--config", str(toml)), "text.keywords", "removed", "--top")
    toml.write_text('[text]\nweighting = "density"\n')
    _one_line_usage_error(_run("keywords", str(crawl), "--config", str(toml)), "text.weighting", "--weighting")
    _one_line_usage_error(_run("config", "--set", "text.keywords=3"), "text.keywords", "--top")


@pytest.mark.parametrize(
    "args, words",
    [
        (["config", "--set", "chunks.epsilon=1.5"], ["chunks.epsilon", "1.5", "> 2"]),
        (["config", "--set", "minhash.threshold"], ["SECTION.NAME=VALUE"]),
        (["config", "--set", "nope.nope=1"], ["nope.nope"]),
        (["config", "--simhash-k", "many"], ["simhash.k", "many"]),
        (["config", "--keep", "shortest"], ["cluster.keep", "shortest", "longest"]),
        (["config", "--algorithms", "exact,bogus"], ["match.algorithms", "bogus"]),
        (["config", "--profile", "nope"], ["--profile", "nope"]),
        (["config", "--workers", "x"], ["--workers"]),
        (["config", "--input-statuses", "9zz"], ["input.statuses"]),
        (["config", "--set", "segments.m=9"], ["segments.m = 9", "segments.n = 8"]),
    ],
)
def test_bad_values_from_any_source_are_one_line(args, words):
    _one_line_usage_error(_run(*args), *words)


def test_bad_values_in_toml_are_one_line(tmp_path):
    toml = tmp_path / "bad.toml"
    toml.write_text("[minhash]\nthreshold = 0.0\n")
    _one_line_usage_error(_run("config", "--config", str(toml)), "minhash.threshold", "0.0")


def test_keywords_top_must_be_positive(crawl):
    _one_line_usage_error(_run("keywords", str(crawl), "--top", "0"), "--top", "0")
    _one_line_usage_error(_run("keywords", str(crawl), "--weighting", "bm25"), "--weighting", "bm25")


# --- help: per command, user tier only ------------------------------------------------------------


def _help(command: str, capsys) -> str:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def _expected_flags(command: str) -> set[str]:
    shown = set()
    for dotted, f, _value in setting_fields():
        if f.metadata["tier"] == USER and (command == "config" or command in f.metadata["commands"]):
            shown.add("--" + dotted.replace(".", "-").replace("_", "-"))
    return shown - {"--match-algorithms", "--cluster-keep", "--run-workers"}  # --algorithms, --keep, --workers


@pytest.mark.parametrize("command", [*COMMANDS, "config"])
def test_help_lists_the_user_settings_the_command_uses_and_no_other(command, capsys):
    text = _help(command, capsys)
    assert set(SETTING_FLAG.findall(text)) == _expected_flags(command)
    assert len(text.splitlines()) <= 100  # was 168-184 lines with every setting


def test_text_help_has_no_algorithm_settings(capsys):
    text = _help("text", capsys)
    assert "--chunks-" not in text and "--minhash-" not in text and "--simhash-" not in text
    assert "--extract-templates" in text and "--input-statuses" in text


def test_the_user_tier_is_about_fifteen_settings():
    user = [dotted for dotted, f, _ in setting_fields() if f.metadata["tier"] == USER]
    assert 12 <= len(user) <= 18, user
    assert {"minhash.threshold", "match.algorithms", "cluster.keep", "run.workers", "input.statuses"} <= set(user)


def test_each_setting_flag_is_a_flag_only_of_the_commands_that_use_it(crawl, tmp_path):
    """Expert settings stay usable as flags on their commands (unlisted), never on others."""
    parser = build_parser()
    args = parser.parse_args(["dedup", str(crawl), "--out", "o", "--minhash-shingle", "3", "--chunks-epsilon", "3"])
    assert getattr(args, "set:minhash.shingle") == "3"
    with pytest.raises(SystemExit):
        parser.parse_args(["text", str(crawl), "--chunks-epsilon", "3"])
    _one_line_usage_error(_run("text", str(crawl), "--chunks-epsilon", "3"), "--chunks-epsilon is a setting of dedup only")
    _one_line_usage_error(_run("text", str(crawl), "--frobnicate"), "pagetwin text: unrecognized arguments: --frobnicate")


# --- config --describe ----------------------------------------------------------------------------


def test_config_describe_lists_every_setting_with_its_description(capsys):
    assert main(["config", "--describe"]) == 0
    text = capsys.readouterr().out
    for dotted, f, value in setting_fields():
        at = text.index(f"\n{dotted} = " if not text.startswith(f"{dotted} = ") else f"{dotted} = ")
        entry = text[at : at + 600]
        assert f.metadata["help"] in entry
        assert f"{f.metadata['tier']} tier" in entry
        if f.metadata["allowed"] is not None:
            assert str(f.metadata["allowed"]) in entry
    assert "text.keywords" not in text and "text.weighting" not in text  # removed


def test_config_describe_shows_the_resolved_values(capsys):
    assert main(["config", "--describe", "--set", "chunks.epsilon=3.5", "--profile", "near-identical"]) == 0
    text = capsys.readouterr().out
    assert "\nchunks.epsilon = 3.5\n" in text and "\nminhash.threshold = 0.9\n" in text


# --- keywords and templates through the API -----------------------------------------------------


def _rows(capsys, *args):
    assert main(["keywords", *args, "--workers", "1"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_keywords_top_and_weighting(crawl, capsys):
    default = _rows(capsys, str(crawl))
    assert default and all(len(r["keywords"]) <= 10 for r in default)
    assert _rows(capsys, str(crawl), "--top", "10", "--weighting", "tfidf") == default
    top3 = _rows(capsys, str(crawl), "--top", "3", "--weighting", "density")
    assert all(len(r["keywords"]) <= 3 for r in top3) and any(len(r["keywords"]) == 3 for r in top3)
    # the flags of the settings they replaced are still understood
    assert _rows(capsys, str(crawl), "--text-keywords", "3", "--text-weighting", "density") == top3
    assert _rows(capsys, str(crawl), "--top", "3") != top3  # the weighting reaches the API


def test_templates_does_not_change_the_settings(crawl, monkeypatch, capsys):
    """cmd_templates asks the API for the templates: the settings it was given stay as they were."""
    import pagetwin.cli as cli

    settings = Settings()
    settings.extract.templates = False
    before = settings.to_dict()
    args = argparse.Namespace(inputs=[str(crawl)], site=None, samples=1, json=True)
    assert cli.cmd_templates(args, settings) == 0
    assert settings.to_dict() == before
    assert capsys.readouterr().out.strip()  # a report was written
