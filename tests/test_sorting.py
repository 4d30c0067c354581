"""The kernels' stable argsort gives numpy's stable order, ties by index, for float and integer keys."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from topocast.infra.sorting import argsort_stable


@given(st.lists(st.integers(-5, 5), max_size=200))
@settings(max_examples=200, deadline=None)
def test_integer_keys_in_numpys_stable_order(keys):
    a = np.array(keys, dtype=np.int64)
    assert argsort_stable(a).tolist() == np.argsort(a, kind="stable").tolist()


@given(st.lists(st.sampled_from([0.0, 0.5, 1.5, -2.0, 1e300, -np.inf, np.inf]), max_size=200))
@settings(max_examples=200, deadline=None)
def test_float_keys_in_numpys_stable_order(keys):
    a = np.array(keys, dtype=np.float64)
    assert argsort_stable(a).tolist() == np.argsort(a, kind="stable").tolist()
