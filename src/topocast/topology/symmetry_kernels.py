"""Compiled (numba) kernels of :mod:`topocast.topology.symmetry`."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, parallel=True)
def arcs_preserved(indptr, indices, perm):
    """Tell whether every arc ``u -> v`` has an arc ``perm[u] -> perm[v]`` (numba kernel, simple graphs).

    Per row, the neighbours of ``perm[u]`` are marked in a byte array of the thread's block, the mapped
    neighbours of ``u`` looked up and the marks cleared: three passes over the row, no search.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        The CSR arrays (no parallel links).
    perm : numpy.ndarray
        Image of every node.

    Returns
    -------
    bool
        True when every arc is preserved.
    """
    n = len(indptr) - 1
    blocks = 64
    size = (n + blocks - 1) // blocks
    bad = 0
    for b in nb.prange(blocks):
        mark = np.zeros(n, dtype=np.uint8)
        for u in range(b * size, min(n, (b + 1) * size)):
            pu = perm[u]
            for e in range(indptr[pu], indptr[pu + 1]):
                mark[indices[e]] = 1
            for e in range(indptr[u], indptr[u + 1]):
                if mark[perm[indices[e]]] == 0:
                    bad += 1
                    break
            for e in range(indptr[pu], indptr[pu + 1]):
                mark[indices[e]] = 0
    return bad == 0
