"""The algorithm interface (fingerprints/base.py): keys, hamming, and the registry."""

import pytest
from hypothesis import given, strategies as st

from pagetwin.fingerprints import MODULES
from pagetwin.fingerprints.base import REGISTRY, Algorithm, hamming, key64, register


def test_the_registry_finds_every_algorithm_of_the_table_and_nothing_else():
    assert list(REGISTRY) == list(MODULES) and len(REGISTRY) == len(MODULES)
    for name, (module, _) in MODULES.items():
        cls = REGISTRY[name]
        assert issubclass(cls, Algorithm) and cls.name == name and cls.__module__ == module
    with pytest.raises(KeyError):
        REGISTRY["no-such-algorithm"]
    assert dict(REGISTRY)["exact"] is REGISTRY["exact"]


def test_register_refuses_a_class_the_table_does_not_name():
    class Stray(Algorithm):
        name = "stray"

        def features(self, doc):
            return None

        def keys(self, features):
            return []

    with pytest.raises(TypeError):
        register(Stray)


@given(st.integers(0, (1 << 64) - 1), st.integers(0, (1 << 64) - 1))
def test_hamming_is_a_distance_of_64_bit_hashes(a, b):
    assert hamming(a, b) == hamming(b, a) == bin(a ^ b).count("1") and hamming(a, a) == 0


def test_key64_is_stable_and_signed():
    assert key64("a", 1) == key64("a", 1) != key64("a1")
    assert -(1 << 63) <= key64(b"x", "y", -5) < 1 << 63
    assert key64("exact", "x") == -1784549678550095039  # stored in indexes: must never change
