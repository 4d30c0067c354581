"""Compiled (numba) kernels of :mod:`topocast.topology.hdn_symmetry` and of the HDN reproduction, for graphs
above the small-graph size.

The automorphism check and the orbit union-find take the int64 CSR arrays of
a topology and one int64 permutation at a time, so the symmetry code never
holds more than one generator of the automorphism group of a large HDN
(6,480,000 entries for HDN(B,2,(1,1))).  :func:`bit_bfs` is a bit-parallel
breadth-first search (64 sources in one pass, one bit per source and node)
giving eccentricities and the distances to chosen targets.  Every kernel is
serial, cached on disk and compiled for one signature.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def _sort_small(a, d):
    """Insertion sort of ``a[:d]`` in place (rows of a regular graph: a few entries)."""
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
    """Whether ``perm`` is a bijection of ``0..N-1`` mapping the neighbour multiset of every node ``u``
    onto the neighbour multiset of ``perm[u]`` (parallel links counted)."""
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
    """Union-find: join ``x`` and ``perm[x]`` for every ``x``; every root stays the smallest node of its
    set.  Returns how many sets were merged."""
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
    """Point every node at its root (the smallest node of its set), in place."""
    for x in range(len(parent)):
        parent[x] = parent[parent[x]]  # parent[x] <= x: already flattened


@nb.njit(cache=True)
def _pull(indptr, indices, seen, front, nxt, full):
    """One bottom-up level: ``nxt[v]`` = the sources whose frontier reaches ``v`` first now; ``seen`` updated.
    Returns (OR of the new bits, nodes with new bits)."""
    grew = np.uint64(0)
    count = 0
    for v in range(len(indptr) - 1):
        s = seen[v]
        if s == full:
            nxt[v] = np.uint64(0)
            continue
        acc = np.uint64(0)
        for e in range(indptr[v], indptr[v + 1]):
            acc |= front[indices[e]]
        new = acc & ~s
        nxt[v] = new
        if new:
            seen[v] = s | new
            grew |= new
            count += 1
    return grew, count


@nb.njit(cache=True)
def _resolve(seen, targets, dist, first, k, level):
    """Pairs ``(first + i, j)`` whose target now holds source bit ``i`` and had no distance yet: ``level``."""
    for i in range(k):
        bit = np.uint64(1) << np.uint64(i)
        for j in range(targets.shape[1]):
            if dist[first + i, j] < 0 and seen[targets[first + i, j]] & bit:
                dist[first + i, j] = level


@nb.njit(cache=True)
def bit_bfs(indptr, indices, sources, targets):
    """``(ecc, dist)``: the eccentricity of each source (-1 if it does not reach every node) and the hop
    distance ``dist[i, j]`` from ``sources[i]`` to ``targets[i, j]`` (-1 unreached), by a BFS from every
    source, 64 sources a pass (bit-parallel).

    Bit ``i`` of ``seen[v]`` says source ``i`` of the pass has reached ``v``.  A level whose frontier
    holds under 1/16 of the nodes pushes from the frontier nodes; a larger one pulls: every node not
    yet reached by all sources ORs its neighbours' frontier words.  A source's eccentricity is the last
    level that gave it a new node; a pair's distance the level its target got the source's bit.
    """
    n = len(indptr) - 1
    ecc_out = np.full(len(sources), -1, dtype=np.int64)
    dist = np.full(targets.shape, -1, dtype=np.int32)
    seen = np.zeros(n, dtype=np.uint64)
    front = np.zeros(n, dtype=np.uint64)
    nxt = np.zeros(n, dtype=np.uint64)
    queue = np.empty(2 * n, dtype=np.int64)   # the frontier's nodes while the levels push, then the new ones
    for first in range(0, len(sources), 64):
        k = min(64, len(sources) - first)
        full = ~np.uint64(0) if k == 64 else (np.uint64(1) << np.uint64(k)) - np.uint64(1)
        seen[:] = 0
        front[:] = 0
        ecc = np.zeros(k, dtype=np.int64)
        size = 0
        for i in range(k):
            v = sources[first + i]
            bit = np.uint64(1) << np.uint64(i)
            if front[v] == 0:
                queue[size] = v
                size += 1
            seen[v] |= bit
            front[v] |= bit
        level = np.int64(0)
        _resolve(seen, targets, dist, first, k, level)
        while size > 0:
            level += 1
            grew = np.uint64(0)
            if size * 16 < n:  # push
                tail = 0
                for j in range(size):
                    u = queue[j]
                    f = front[u]
                    for e in range(indptr[u], indptr[u + 1]):
                        v = indices[e]
                        new = f & ~seen[v]
                        if new:
                            if nxt[v] == 0:
                                queue[size + tail] = v  # new frontier nodes go after the current ones
                                tail += 1
                            nxt[v] |= new
                            seen[v] |= new
                            grew |= new
                for j in range(size):
                    front[queue[j]] = 0
                for j in range(tail):
                    v = queue[size + j]
                    front[v] = nxt[v]
                    nxt[v] = 0
                    queue[j] = v
                size = tail
            else:  # pull
                grew, size = _pull(indptr, indices, seen, front, nxt, full)
                front, nxt = nxt, front
                nxt[:] = 0
                if size * 16 < n:  # the next level pushes: list its frontier
                    j = 0
                    for v in range(n):
                        if front[v]:
                            queue[j] = v
                            j += 1
            for i in range(k):
                if (grew >> np.uint64(i)) & np.uint64(1):
                    ecc[i] = level
            if grew:
                _resolve(seen, targets, dist, first, k, level)
        front[:] = 0
        missing = np.uint64(0)
        for v in range(n):
            missing |= full & ~seen[v]
        for i in range(k):
            if not (missing >> np.uint64(i)) & np.uint64(1):
                ecc_out[first + i] = ecc[i]
    return ecc_out, dist


def eccentricities(indptr, indices, sources):
    """Eccentricity of each source (-1 if it does not reach every node), by :func:`bit_bfs`."""
    sources = np.asarray(sources, dtype=np.int64)
    return bit_bfs(indptr, indices, sources, np.empty((len(sources), 0), dtype=np.int64))[0]


def distances_to(indptr, indices, sources, targets):
    """``out[i, j]`` = hop distance from ``sources[i]`` to ``targets[i, j]`` (-1 unreached), by :func:`bit_bfs`."""
    return bit_bfs(indptr, indices, np.asarray(sources, dtype=np.int64),
                   np.ascontiguousarray(targets, dtype=np.int64))[1]
