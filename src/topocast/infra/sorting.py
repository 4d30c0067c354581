"""The one stable argsort of the numba kernels: a bottom-up merge sort of indices.

numba's own ``np.argsort(kind="mergesort")`` (and its quicksort) compile for
seconds in every fresh process (measured: 12 s of the fresh quick
reproduction's compilation went to the merge sort's implementation); this one
is a few lines, compiled once per key type, and gives the same order: by key,
ties by index.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def argsort_stable(keys: np.ndarray) -> np.ndarray:
    """Indices that sort ``keys`` (ties kept in index order), as ``numpy.argsort(keys, kind="stable")``."""
    n = len(keys)
    order = np.arange(n)
    spare = np.empty(n, np.int64)
    width = 1
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if keys[order[j]] < keys[order[i]]:
                    spare[k] = order[j]
                    j += 1
                else:
                    spare[k] = order[i]
                    i += 1
                k += 1
            while i < mid:
                spare[k] = order[i]
                i += 1
                k += 1
            while j < hi:
                spare[k] = order[j]
                j += 1
                k += 1
        order, spare = spare, order
        width *= 2
    return order
