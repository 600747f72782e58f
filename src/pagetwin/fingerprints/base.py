"""One small interface for every fingerprinting algorithm.

An algorithm turns a Doc into *features* (whatever it needs to verify a pair later: a digest,
a signature, a set of hashes), proposes *candidate keys* from those features (pages sharing a
key become candidate pairs), and *verifies* a candidate pair from the two pages' features.
Candidate keys only propose: a pair becomes an edge only when ``verify`` passes.

Features are encoded to bytes for the index with ``encode`` / ``decode``; keys are signed
64-bit integers (xxhash of the key material, see ``key64``), so the index stores them compactly
and the same page gets the same keys in any process.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import xxhash

from pagetwin.fingerprints.hashing import TokenHasher

# (Defined with the perceptual hash it was first written for: html comes before fingerprints.)
from pagetwin.html.images import hamming
from pagetwin.model import Doc, Evidence

__all__ = ["REGISTRY", "Algorithm", "hamming", "key64", "register"]

# ``json.dumps(features, separators=(",", ":"))``'s encoder, made once: dumps makes a new one
# each call when given separators, half of its time on a page's small features. A constant (it
# keeps nothing between calls).
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"))


def key64(*parts: bytes | str | int) -> int:
    """A stable signed 64-bit key from its parts (never Python's hash(): it varies per process)."""
    h = xxhash.xxh3_64()
    for p in parts:
        if isinstance(p, int):
            p = p.to_bytes(8, "little", signed=p < 0)
        elif isinstance(p, str):
            p = p.encode("utf-8")
        h.update(len(p).to_bytes(4, "little"))
        h.update(p)
    v = h.intdigest()
    return v - (1 << 64) if v >= (1 << 63) else v


class Algorithm(ABC):
    """Base class of the fingerprinting algorithms.

    Subclasses set ``name`` and a ``Settings`` dataclass (its fields become the algorithm's
    section in the TOML config and its CLI options); ``__init__`` takes an instance of it.
    """

    name: ClassVar[str]
    # True when equal keys already prove the pair (a digest): the matcher then links the members
    # of a bucket in a chain instead of comparing all pairs, and skips verify().
    keys_are_proof: ClassVar[bool] = False
    # A pair is a candidate when it shares this many of a page's keys (MinHash's min_bands);
    # verify() fails a pair that shares fewer, so every way of proposing pairs agrees.
    min_shared_keys: int = 1
    # The edge kind a passing verification makes; verify() may override via detail["kind"].
    edge_kind: ClassVar[str] = "duplicate"

    # The settings dataclass; an algorithm made without settings gets its defaults.
    settings_class: ClassVar[type | None] = None

    def __init__(self, settings: Any = None) -> None:
        if settings is None and self.settings_class is not None:
            settings = self.settings_class()
        self.settings = settings
        # xxh3 of tokens, remembered across pages; build_algorithms gives all one hasher.
        self.hasher = TokenHasher()

    @abstractmethod
    def features(self, doc: Doc) -> Any | None:
        """The page's features, or None when this algorithm cannot describe the page
        (for example, too little text). Pages with None get no keys from this algorithm."""

    @abstractmethod
    def keys(self, features: Any) -> Iterable[int]:
        """Candidate keys (signed 64-bit ints, see key64)."""

    def verify(self, a: Any, b: Any) -> Evidence:
        """Decide a candidate pair. The default suits digests: equal features pass."""
        same = a == b
        return Evidence(self.name, 1.0 if same else 0.0, same)

    def passing(self, features: list, first: Sequence[int], second: Sequence[int]) -> list[tuple[int, Evidence]]:
        """(i, evidence) of the candidate pairs (features[first[i]], features[second[i]]) that
        ``verify`` passes, in order of i: many pairs asked at once (match.find_edges). Here one
        ``verify`` a pair, the reference of an algorithm that decides them together (MinHash)."""
        out = []
        for i, (x, y) in enumerate(zip(first, second)):
            result = self.verify(features[x], features[y])
            if result.passed:
                out.append((i, result))
        return out

    def related(self, a: Any, b: Any, share: float) -> bool:
        """Whether two pages have enough in common to stay in one cluster (the anti-chaining
        guard's test): a similarity of at least ``share`` times the threshold. The default, for
        algorithms without a graded similarity, is ``verify``."""
        return self.verify(a, b).passed

    def encode(self, features: Any) -> bytes:
        return _COMPACT_JSON.encode(features).encode()

    def decode(self, data: bytes) -> Any:
        return json.loads(data)


class _Registry(Mapping[str, type[Algorithm]]):
    """Algorithm name -> class, read from the one table of algorithms (``fingerprints.MODULES``):
    the module is imported when its algorithm is first asked for, and the class is the
    Algorithm of that name it defines. Nothing is filled in at import time (no module state)."""

    def __getitem__(self, name: str) -> type[Algorithm]:
        import importlib

        from pagetwin.fingerprints import MODULES

        if name not in MODULES:
            raise KeyError(name)
        module = importlib.import_module(MODULES[name][0])
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Algorithm) and getattr(value, "name", None) == name:
                return value
        raise KeyError(f"{name} (not defined by {module.__name__})")

    def __iter__(self) -> Iterator[str]:
        from pagetwin.fingerprints import MODULES

        return iter(MODULES)

    def __len__(self) -> int:
        from pagetwin.fingerprints import MODULES

        return len(MODULES)


REGISTRY = _Registry()


def register(cls: type[Algorithm]) -> type[Algorithm]:
    """Marks an algorithm class; refuses one the table of algorithms (``fingerprints.MODULES``)
    does not name, so that ``REGISTRY`` finds every class that says it is registered."""
    from pagetwin.fingerprints import MODULES

    if cls.name not in MODULES or MODULES[cls.name][0] != cls.__module__:
        raise TypeError(f"algorithm {cls.name!r} of {cls.__module__} is not in pagetwin.fingerprints.MODULES")
    return cls
