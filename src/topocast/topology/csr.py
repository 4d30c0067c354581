"""Small numba helpers over CSR adjacency shared by the engines and the verifier."""

from __future__ import annotations

import numba as nb
import numpy as np


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


@nb.njit(cache=True)
def bucket(keys, n):
    """Indices ``0 .. len(keys) - 1`` grouped by ``keys`` (in ``0 .. n - 1``), increasing within a key:
    CSR ``(ptr, ids)`` (transfers by sender or receiver, messages by origin).
    """
    ptr = np.zeros(n + 1, np.int64)
    for i in range(len(keys)):
        ptr[keys[i] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    ids = np.empty(len(keys), np.int64)
    fill = ptr[:-1].copy()
    for i in range(len(keys)):
        ids[fill[keys[i]]] = i
        fill[keys[i]] += 1
    return ptr, ids
