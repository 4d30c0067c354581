"""Small numba helpers over CSR adjacency shared by the engines and the verifier."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def first_arc(indptr, indices, u, v):
    """Find the CSR index of the first arc ``u -> v`` (numba kernel; rows sorted by neighbour).

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        The CSR row pointers and arc heads.
    u, v : int
        Tail and head of the arc.

    Returns
    -------
    int
        Index into ``indices``, or -1 when there is no such arc.
    """
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
    """Group indices ``0 .. len(keys) - 1`` by key, increasing within a key (numba kernel).

    Used for transfers by sender or receiver and messages by origin.

    Parameters
    ----------
    keys : numpy.ndarray
        One key in ``0 .. n - 1`` per index.
    n : int
        Number of keys.

    Returns
    -------
    ptr, ids : numpy.ndarray
        CSR form: the indices with key ``k`` are ``ids[ptr[k]:ptr[k + 1]]``.
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
