"""Compiled (numba) breadth-first searches over CSR adjacency, for graphs above the small-graph size.

:mod:`topocast.topology.metrics` and :mod:`topocast.topology.properties` run
graphs of up to :data:`topocast.topology.metrics.SMALL_NODES` nodes in numpy
(no compiler to load) and larger ones here.  Every kernel is cached on disk
(``cache=True``) and takes int64 CSR arrays and int64 sources, so each is
compiled for one signature.
"""

from __future__ import annotations

import numba as nb
import numpy as np

UNREACHED = -1


@nb.njit(cache=True)
def bfs_from_set(indptr, indices, seeds, dist, queue):
    """BFS from the node set ``seeds`` into ``dist`` (must be -1 wherever not yet reached on entry) and
    ``queue``; returns how many nodes were reached from the seeds (``queue[:count]``, by distance)."""
    head = 0
    tail = 0
    for s in seeds:
        if dist[s] == UNREACHED:
            dist[s] = 0
            queue[tail] = s
            tail += 1
    while head < tail:
        u = queue[head]
        head += 1
        du = dist[u] + 1
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if dist[v] == UNREACHED:
                dist[v] = du
                queue[tail] = v
                tail += 1
    return tail


@nb.njit(cache=True)
def bfs_into(indptr, indices, source, dist, queue):
    """BFS from ``source`` into ``dist`` (-1 unreached) and ``queue`` (visit order); returns the nodes reached."""
    dist[:] = UNREACHED
    seeds = np.empty(1, np.int64)
    seeds[0] = source
    return bfs_from_set(indptr, indices, seeds, dist, queue)


@nb.njit(cache=True)
def bfs(indptr, indices, source):
    """Hop distances (int32, -1 unreached) from ``source``."""
    n = len(indptr) - 1
    dist = np.empty(n, dtype=np.int32)
    queue = np.empty(n, dtype=np.int64)
    bfs_into(indptr, indices, source, dist, queue)
    return dist


@nb.njit(cache=True, parallel=True)
def many_sources(indptr, indices, sources, hist_len):
    """Eccentricity (-1: not all reached) and distance histogram (capped at hist_len) per source."""
    n = len(indptr) - 1
    k = len(sources)
    ecc = np.empty(k, dtype=np.int64)
    hist = np.zeros((k, hist_len), dtype=np.int64)
    for i in nb.prange(k):
        dist = np.empty(n, dtype=np.int32)
        queue = np.empty(n, dtype=np.int64)
        reached = bfs_into(indptr, indices, sources[i], dist, queue)
        if reached < n:
            ecc[i] = -1
            continue
        ecc[i] = dist[queue[n - 1]]
        for j in range(n):
            d = dist[j]
            if d < hist_len:
                hist[i, d] += 1
    return ecc, hist


@nb.njit(cache=True, parallel=True)
def all_pairs(indptr, indices, out):
    """Hop distances from every source into ``out[s, v]`` (int32, -1 unreached), sources in parallel."""
    n = len(indptr) - 1
    for s in nb.prange(n):
        dist = np.empty(n, np.int32)
        queue = np.empty(n, np.int64)
        bfs_into(indptr, indices, s, dist, queue)
        for i in range(n):  # element by element: no slice assignment (numba compiles its error message slowly)
            out[s, i] = dist[i]


@nb.njit(cache=True, parallel=True)
def girth(indptr, indices, sources):
    """Shortest cycle through each source in the underlying simple graph (0 when none), early-stopping BFS."""
    n = len(indptr) - 1
    out = np.zeros(len(sources), dtype=np.int64)
    for i in nb.prange(len(sources)):
        dist = np.full(n, -1, dtype=np.int64)
        parent = np.full(n, -1, dtype=np.int64)
        queue = np.empty(n, dtype=np.int64)
        s = sources[i]
        dist[s] = 0
        queue[0] = s
        head, tail, best = 0, 1, n + 1
        while head < tail:
            u = queue[head]
            head += 1
            if 2 * dist[u] >= best:
                break
            for e in range(indptr[u], indptr[u + 1]):
                w = indices[e]
                if w == u or w == parent[u] or (e > indptr[u] and indices[e - 1] == w):
                    continue  # loops, the tree link back and parallel copies of a link are no cycles
                if dist[w] < 0:
                    dist[w] = dist[u] + 1
                    parent[w] = u
                    queue[tail] = w
                    tail += 1
                elif dist[u] + dist[w] + 1 < best:
                    best = dist[u] + dist[w] + 1
        out[i] = best if best <= n else 0
    return out
