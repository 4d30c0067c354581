"""Small numba helpers over CSR adjacency shared by the engines."""

from __future__ import annotations

import numba as nb


@nb.njit(cache=True)
def first_arc(indptr, indices, u, v):
    """CSR index of the first arc ``u -> v`` (rows are sorted), or -1."""
    lo, hi = indptr[u], indptr[u + 1]
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if indices[mid] < v:
            a = mid + 1
        else:
            b = mid
    if a >= hi or indices[a] != v:
        return -1
    return a
