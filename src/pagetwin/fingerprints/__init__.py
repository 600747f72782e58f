"""Fingerprinting algorithms, one module each; ``build_algorithms`` makes the selected ones."""

from __future__ import annotations

import importlib

from pagetwin.config import ConfigError, Settings
from pagetwin.fingerprints.base import REGISTRY, Algorithm
from pagetwin.fingerprints.hashing import TokenHasher

# algorithm name -> (module that registers it, settings section)
MODULES = {
    "exact": ("pagetwin.fingerprints.exact", "exact"),
    "simhash": ("pagetwin.fingerprints.simhash", "simhash"),
    "minhash": ("pagetwin.fingerprints.minhash", "minhash"),
    "des": ("pagetwin.fingerprints.keywords", "keywords"),
    "con": ("pagetwin.fingerprints.keywords", "keywords"),
    "sort": ("pagetwin.fingerprints.keywords", "keywords"),
    "con-w": ("pagetwin.fingerprints.keywords", "keywords"),
    "sort-w": ("pagetwin.fingerprints.keywords", "keywords"),
    "segments": ("pagetwin.fingerprints.segments", "segments"),
    "chunks": ("pagetwin.fingerprints.chunks", "chunks"),
    "images": ("pagetwin.fingerprints.images", "images"),
}


def build_algorithms(settings: Settings) -> list[Algorithm]:
    """The algorithms named in settings.match.algorithms, in that order, sharing one
    TokenHasher (a token is hashed once for all of them)."""
    algorithms = []
    for name in settings.match.algorithms:
        if name not in MODULES:
            raise ConfigError(
                f"unknown algorithm {name!r} (choose from {', '.join(MODULES)})"
            )
        module, section = MODULES[name]
        importlib.import_module(module)
        algorithms.append(REGISTRY[name](getattr(settings, section)))
    hasher = TokenHasher()
    for algorithm in algorithms:
        algorithm.hasher = hasher
    return algorithms
