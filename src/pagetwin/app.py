"""The application core: one run of ``pagetwin dedup``, ``text``, ``keywords`` or ``templates``.

First version: the public API with its final signatures, delegating to runners.local while the
code moves here (issue 12).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pagetwin.config import Settings


def _validate(settings: Settings) -> None:
    validate = getattr(settings, "validate", None)  # Settings.validate lands with config.py's change
    if validate is not None:
        validate()


def dedup(
    inputs: list[str],
    out_dir: str | Path,
    settings: Settings,
    index_path: str | Path | None = None,
    log: Callable[[str], None] = lambda m: None,
    survivors: str | Path | None = None,
    parquet: bool = False,
    engine: Any = None,
    mode: str = "new",
) -> dict[str, Any]:
    """Read, fingerprint, index, match, cluster and write; returns the summary."""
    from pagetwin.runners import local

    _validate(settings)
    return local.dedup(inputs, out_dir, settings, index_path, log, survivors, parquet, engine, mode)


def iter_texts(inputs: list[str], settings: Settings, stats: Any = None) -> Iterator[dict[str, str]]:
    """{"id", "url", "text"} of every page."""
    from pagetwin.runners import local

    _validate(settings)
    return local.iter_texts(inputs, settings, stats)


def iter_keywords(
    inputs: list[str], settings: Settings, stats: Any = None, top: int = 10, weighting: str = "tfidf"
) -> Iterator[dict[str, Any]]:
    """{"id", "url", "lang", "keywords"} of every page: its ``top`` keywords by ``weighting``."""
    from dataclasses import replace

    from pagetwin.runners import local

    _validate(settings)
    settings = replace(settings, text=replace(settings.text, keywords=top, weighting=weighting))
    return local.iter_keywords(inputs, settings, stats)


def learn_templates(inputs: list[str], settings: Settings) -> Any:
    """The site templates learned from ``inputs`` (``pagetwin templates``)."""
    from dataclasses import replace

    from pagetwin.runners import local

    _validate(settings)
    settings = replace(
        settings,
        extract=replace(settings.extract, templates=True),
        keywords=replace(settings.keywords, weighting="density"),
    )
    return local.learn(inputs, settings).templates
