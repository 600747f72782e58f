"""pagetwin.arrays: np.unique's results by a sort."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from pagetwin.arrays import sorted_unique, sorted_unique_inverse

# Few distinct values in most arrays, so repeats and runs of equals are common; the dtypes the
# callers pass (uint64 pair keys and block hashes, int64 pids) and a narrow one.
_arrays = st.one_of(
    hnp.arrays(dtype=st.sampled_from([np.uint64, np.int64, np.uint32, np.int8]), shape=st.integers(0, 300)),
    hnp.arrays(dtype=np.uint64, shape=st.integers(0, 300), elements=st.integers(0, 5)),
)


@given(_arrays)
def test_sorted_unique_is_np_unique(values):
    got, want = sorted_unique(values), np.unique(values)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


@given(_arrays)
def test_sorted_unique_inverse_is_np_unique(values):
    got, inverse = sorted_unique_inverse(values)
    want, want_inverse = np.unique(values, return_inverse=True)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(inverse, want_inverse.ravel())
    assert np.array_equal(got[inverse], values)  # each value's place among the distinct ones


def test_the_input_is_left_as_it_was():
    values = np.array([5, 1, 5, 3, 1], dtype=np.uint64)
    sorted_unique(values)
    sorted_unique_inverse(values)
    assert values.tolist() == [5, 1, 5, 3, 1]
