"""Compiled (numba) kernels of :mod:`topocast.topology.hdn_symmetry`, for graphs above the small-graph size.

The automorphism check and the orbit union-find take the int64 CSR arrays of
a topology and one int64 permutation at a time, so the symmetry code never
holds more than one generator of the automorphism group of a large HDN
(6,480,000 entries for HDN(B,2,(1,1))).  The eccentricities come from the one
bit-parallel BFS of every topology (:func:`topocast.topology.kernels.multi_source`).
Every kernel is serial, cached on disk and compiled for one signature.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def _sort_small(a, d):
    """Sort ``a[:d]`` in place by insertion (rows of a regular graph: a few entries)."""
    for i in range(1, d):
        x = a[i]
        j = i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


@nb.njit(cache=True)
def _rows_map(indptr, indices, perm, lo, hi, width):
    """Whether ``perm`` maps the neighbour multiset of each node of ``lo..hi-1`` onto that of its image."""
    n = len(indptr) - 1
    mapped = np.empty(width, dtype=np.int64)
    target = np.empty(width, dtype=np.int64)
    for u in range(lo, hi):
        pu = perm[u]
        if pu < 0 or pu >= n:
            return False
        start = indptr[u]
        d = indptr[u + 1] - start
        plo = indptr[pu]
        if indptr[pu + 1] - plo != d:
            return False
        for j in range(d):
            mapped[j] = perm[indices[start + j]]
            target[j] = indices[plo + j]
        _sort_small(mapped, d)
        _sort_small(target, d)
        for j in range(d):
            if mapped[j] != target[j]:
                return False
    return True


@nb.njit(cache=True)
def _is_bijection(perm):
    n = len(perm)
    seen = np.zeros(n, dtype=np.bool_)
    for u in range(n):
        p = perm[u]
        if p < 0 or p >= n or seen[p]:
            return False
        seen[p] = True
    return True


@nb.njit(cache=True)
def is_automorphism(indptr, indices, perm):
    """Tell whether a permutation maps the neighbour multiset of every node onto that of its image (numba kernel).

    Parallel links are counted.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        The CSR arrays.
    perm : numpy.ndarray
        Image of every node.

    Returns
    -------
    bool
        True when ``perm`` is a bijection of ``0..N-1`` and an automorphism.
    """
    n = len(indptr) - 1
    if len(perm) != n or not _is_bijection(perm):
        return False
    width = np.int64(0)
    for u in range(n):
        width = max(width, indptr[u + 1] - indptr[u])
    return _rows_map(indptr, indices, perm, 0, n, width)


@nb.njit(cache=True)
def _root(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]  # path halving; parent[x] <= x stays true
        x = parent[x]
    return x


@nb.njit(cache=True)
def join_orbits(parent, perm):
    """Join ``x`` and ``perm[x]`` for every ``x`` in a union-find (numba kernel).

    Every root stays the smallest node of its set.

    Parameters
    ----------
    parent : numpy.ndarray
        The union-find parents, changed in place.
    perm : numpy.ndarray
        A permutation of the nodes.

    Returns
    -------
    int
        How many sets were merged.
    """
    merged = 0
    for x in range(len(perm)):
        a = _root(parent, x)
        b = _root(parent, perm[x])
        if a != b:
            if a < b:
                parent[b] = a
            else:
                parent[a] = b
            merged += 1
    return merged


@nb.njit(cache=True)
def flatten_orbits(parent):
    """Point every node at its root (the smallest node of its set), in place (numba kernel).

    Parameters
    ----------
    parent : numpy.ndarray
        The union-find parents.
    """
    for x in range(len(parent)):
        parent[x] = parent[parent[x]]  # parent[x] <= x: already flattened
