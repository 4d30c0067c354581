"""The one heap: a binary min-heap of ``(time, kind, id)`` entries over numpy arrays, for numba kernels.

The event engine (:mod:`topocast.sim.event`, through :mod:`topocast.sim.heap`)
and the synthesiser's planners (:mod:`topocast.synthesis`) order their events
with it; :func:`grow` is the growth rule of every array a kernel appends to.

Entries are ordered by time, then kind, then id, like Python tuples in
:mod:`heapq`, so the order in which entries leave never depends on how the
heap stores them.  ``key`` (float64) holds the times and ``item`` (int64,
two columns) the kinds and ids; :func:`push` grows both when full and returns
them.  Compiled once for these types, it costs a fraction of numba's
:mod:`heapq` on a list of tuples.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True)
def grow(a, size):
    """``a``, or a copy twice as long, so that row ``size`` exists."""
    if size < len(a):
        return a
    b = np.empty((max(2 * len(a), size + 1),) + a.shape[1:], a.dtype)
    # element by element: a slice assignment from an array compiles numba's shape-error message (seconds)
    flat, old = b.reshape(-1), a.reshape(-1)
    for i in range(len(old)):
        flat[i] = old[i]
    return b


@nb.njit(cache=True, inline="always")
def _before(key, item, i, j):
    if key[i] != key[j]:
        return key[i] < key[j]
    if item[i, 0] != item[j, 0]:
        return item[i, 0] < item[j, 0]
    return item[i, 1] < item[j, 1]


@nb.njit(cache=True, inline="always")
def _swap(key, item, i, j):
    key[i], key[j] = key[j], key[i]
    item[i, 0], item[j, 0] = item[j, 0], item[i, 0]
    item[i, 1], item[j, 1] = item[j, 1], item[i, 1]


@nb.njit(cache=True)
def push(key, item, size, t, kind, ident):
    """Add ``(t, kind, ident)`` to the heap of ``size`` entries; returns the (possibly grown) arrays."""
    key, item = grow(key, size), grow(item, size)
    key[size], item[size, 0], item[size, 1] = t, kind, ident
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if not _before(key, item, i, parent):
            break
        _swap(key, item, i, parent)
        i = parent
    return key, item


@nb.njit(cache=True)
def pop(key, item, size):
    """Remove and return the first entry ``(t, kind, ident)`` of a heap of ``size > 0`` entries."""
    t, kind, ident = key[0], item[0, 0], item[0, 1]
    last = size - 1
    key[0], item[0, 0], item[0, 1] = key[last], item[last, 0], item[last, 1]
    i = np.int64(0)
    while True:
        child = 2 * i + 1
        if child >= last:
            break
        if child + 1 < last and _before(key, item, child + 1, child):
            child += 1
        if not _before(key, item, child, i):
            break
        _swap(key, item, i, child)
        i = child
    return t, kind, ident


def empty(capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """Arrays for a heap of ``capacity`` entries (it grows past that)."""
    return np.empty(max(1, capacity), np.float64), np.empty((max(1, capacity), 2), np.int64)


__all__ = ["empty", "grow", "pop", "push"]
