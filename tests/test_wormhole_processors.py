"""The processors' own sort of a node list (heapsort) sorts like Python's sorted."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from topocast.sim.wormhole.processors import _heap_sort


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=200), st.integers(min_value=0, max_value=5))
def test_heap_sort_sorts_the_prefix_only(values, extra):
    a = np.array(values + [7] * extra, dtype=np.int64)
    n = len(values)
    _heap_sort(a, n)
    assert a[:n].tolist() == sorted(values)
    assert a[n:].tolist() == [7] * extra
