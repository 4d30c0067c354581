"""Compiled (numba) breadth-first searches over CSR adjacency: the one BFS of topocast above the small-graph size.

:mod:`topocast.topology.metrics` and :mod:`topocast.topology.properties` run
graphs of up to :data:`topocast.topology.metrics.SMALL_NODES` nodes in numpy
(no compiler to load) and larger ones here; routing tables, bounds, the
generic collectives and synthesis call the same kernels.

Two searches, each built twice from one source (:func:`topocast.infra.parallel.twin`):
a serial build for graphs of up to :data:`PARALLEL_NODES` nodes and a parallel
one (both cores) above.

* :func:`search` -- from one node or a set of seeds, level by level, with hop
  distances.  Each level is expanded *top-down* (every frontier node labels its
  unreached neighbours) or *bottom-up* (every unreached node looks for a
  neighbour in the frontier, a bitmap, and stops at the first it finds), the
  direction-optimising BFS of Beamer, Asanovic and Patterson (SC 2012).  The
  switch: go bottom-up when the arcs leaving the frontier exceed the arcs of
  the unreached nodes over :data:`ALPHA`; go back top-down when the frontier
  shrinks and holds fewer than ``N /`` :data:`BETA` nodes (the rule and the
  constants of the GAP benchmark suite's reference BFS).  Forced top-down it is the plain FIFO
  BFS (:func:`bfs_from_set`), whose visit order callers may rely on.
* :func:`multi_source` -- bit-parallel BFS from up to 64 sources a pass: bit
  ``i`` of ``seen[v]`` says source ``i`` has reached ``v``.  A level with a
  small frontier *pushes* each frontier node's word to its neighbours; a large
  one *pulls*: every node not yet reached by all the pass's sources ORs its
  neighbours' frontier words.  It gives every source's eccentricity, distance
  histogram and, optionally, its distances to chosen targets.

Every kernel is cached on disk (``cache=True``).  Indices may be int64 (the
:class:`~topocast.topology.core.Topology` arrays) or int32 (its compact copy,
:func:`compact_indices`, half the bytes for the memory-bound searches); each
dtype compiles once.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ..infra.parallel import twin

UNREACHED = -1

#: go bottom-up when (arcs leaving the frontier) x ALPHA > arcs of the unreached nodes
ALPHA = 14
#: go back top-down when the frontier shrinks and (frontier nodes) x BETA < N
BETA = 24
#: :func:`search` directions: switch by the rule above, always top-down (FIFO order), always bottom-up
AUTO, TOP_DOWN, BOTTOM_UP = 0, 1, 2
#: graphs of more nodes than this run the parallel builds
PARALLEL_NODES = 1 << 17
#: :func:`multi_source` pushes while the frontier holds under N / PUSH_FRACTION nodes, else pulls
PUSH_FRACTION = 16

_ONE = np.uint64(1)
_ZERO = np.uint64(0)


# -- one source or a set of seeds: direction-optimising -------------------------------------------------------

@nb.njit(cache=True)
def _top_down(indptr, indices, dist, queue, head, tail, level):
    """Expand the frontier one level top-down.

    Expand the frontier ``queue[head:tail]`` (distance ``level``) in FIFO order: every unreached neighbour
    gets ``level + 1`` and joins the queue.  Returns the new tail and the arcs of the new frontier.
    """
    out = tail
    arcs = 0
    nxt = level + 1
    for j in range(head, tail):
        u = queue[j]
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if dist[v] < 0:
                dist[v] = nxt
                queue[out] = v
                out += 1
                arcs += indptr[v + 1] - indptr[v]
    return out, arcs


@nb.njit(cache=True)
def _fifo(indptr, indices, dist, queue, tail):
    """Run top-down levels from the seeds until none is left.

    Top-down levels from the seeds ``queue[:tail]`` (distance 0) until none is left: the FIFO BFS, which
    touches nothing but the nodes it reaches.  Returns how many it labelled.
    """
    head = 0
    level = 0
    while head < tail:
        head, tail = tail, _top_down(indptr, indices, dist, queue, head, tail, level)[0]
        level += 1
    return tail


@nb.njit(cache=True)
def _unreached_arcs(indptr, dist):
    """Arcs of the nodes not yet labelled (``dist < 0``)."""
    arcs = 0
    for v in range(len(dist)):
        if dist[v] < 0:
            arcs += indptr[v + 1] - indptr[v]
    return arcs


@nb.njit(cache=True)
def _bitmaps(dist, queue, head, tail, seen, front):
    """Fill the bitmaps of the labelled nodes and of the frontier.

    ``seen``: a bit per labelled node (and the padding past N); ``front``: a bit per frontier node
    ``queue[head:tail]``.
    """
    n = len(dist)
    for w in range(len(seen)):
        s = _ZERO
        for i in range(64):
            v = (w << 6) + i
            if v >= n or dist[v] >= 0:
                s |= _ONE << np.uint64(i)
        seen[w] = s
        front[w] = _ZERO
    for j in range(head, tail):
        v = queue[j]
        front[v >> 6] |= _ONE << np.uint64(v & 63)


@nb.njit(cache=True)
def _bottom_up(indptr, indices, dist, queue, tail, level, seen, front, nxt, chunks):
    """Run one bottom-up level.

    One bottom-up level: every unreached node (a zero bit of ``seen``) scans its neighbours for one in
    ``front`` and, at the first, takes distance ``level + 1``.  The new frontier goes into ``nxt`` and, in
    node order, into ``queue[tail:]``.  Returns the new tail and the arcs of the new frontier.
    """
    words = len(seen)
    found = np.zeros(chunks + 1, np.int64)
    arcs = np.zeros(chunks, np.int64)
    label = level + 1
    for c in nb.prange(chunks):
        count = 0
        a = 0
        for w in range(words * c // chunks, words * (c + 1) // chunks):
            todo = ~seen[w]
            got = _ZERO
            while todo:
                i = np.int64(trailing_zeros(todo))
                todo &= todo - _ONE
                v = (w << 6) + i
                for e in range(indptr[v], indptr[v + 1]):
                    x = indices[e]
                    if (front[x >> 6] >> np.uint64(x & 63)) & _ONE:
                        dist[v] = label
                        got |= _ONE << np.uint64(i)
                        count += 1
                        a += indptr[v + 1] - indptr[v]
                        break
            nxt[w] = got
            seen[w] |= got
        found[c + 1] = count
        arcs[c] = a
    found = np.cumsum(found)
    for c in nb.prange(chunks):  # the new frontier into the queue, in node order
        pos = tail + found[c]
        for w in range(words * c // chunks, words * (c + 1) // chunks):
            bits = nxt[w]
            while bits:
                queue[pos] = (w << 6) + np.int64(trailing_zeros(bits))
                bits &= bits - _ONE
                pos += 1
    return tail + found[chunks], arcs.sum()


@nb.njit(cache=True)
def search(indptr, indices, seeds, dist, queue, direction, chunks):
    """Run a breadth-first search from a set of nodes, level by level (numba kernel).

    BFS from the node set ``seeds``, level by level; returns how many nodes it labelled.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR adjacency (int64 row pointers; int64 or int32 indices).
    seeds : ndarray of int64
        Start nodes (distance 0); a seed already labelled is skipped.
    dist : ndarray
        Hop distances, written in place; must be -1 wherever not yet reached on entry (a node labelled on
        entry is treated as reached and is never relabelled).
    queue : ndarray of int64, length N
        ``queue[:count]`` receives the labelled nodes by non-decreasing distance: in FIFO order when the
        search runs top-down throughout, in node order within a bottom-up level.
    direction : int
        :data:`AUTO` (the switch of the module docstring), :data:`TOP_DOWN` (every level top-down, serial:
        the plain FIFO BFS) or :data:`BOTTOM_UP` (every level bottom-up).
    chunks : int
        Parts a bottom-up level is split into, one per task (the parallel build runs them on all threads).

    Returns
    -------
    int
        ``count``, the nodes labelled from the seeds (``queue[:count]``).
    """
    n = len(indptr) - 1
    tail = 0
    frontier_arcs = 0
    for s in seeds:
        if dist[s] < 0:
            dist[s] = 0
            queue[tail] = s
            tail += 1
            frontier_arcs += indptr[s + 1] - indptr[s]
    if direction == TOP_DOWN or tail == 0:
        return _fifo(indptr, indices, dist, queue, tail)
    unreached_arcs = _unreached_arcs(indptr, dist)
    words = (n + 63) >> 6
    seen = np.empty(0, np.uint64)
    front = np.empty(0, np.uint64)
    nxt = np.empty(0, np.uint64)
    head = 0
    level = 0
    bottom = False
    grown = 0  # the last frontier's size
    while head < tail:
        size = tail - head
        if direction == BOTTOM_UP:
            go_bottom = True
        elif bottom:
            go_bottom = size >= grown or size * BETA >= n
        else:
            go_bottom = frontier_arcs * ALPHA > unreached_arcs
        if go_bottom and not bottom:  # entering bottom-up: bitmaps of the labelled nodes and of the frontier
            if len(seen) == 0:
                seen = np.empty(words, np.uint64)
                front = np.empty(words, np.uint64)
                nxt = np.empty(words, np.uint64)
            _bitmaps(dist, queue, head, tail, seen, front)
        bottom = go_bottom
        if bottom:
            new_tail, frontier_arcs = _bottom_up(indptr, indices, dist, queue, tail, level, seen, front, nxt, chunks)
            front, nxt = nxt, front
        else:
            new_tail, frontier_arcs = _top_down(indptr, indices, dist, queue, head, tail, level)
        unreached_arcs -= frontier_arcs
        grown = size
        head, tail = tail, new_tail
        level += 1
    return tail


_bottom_up_parallel = twin(_bottom_up, "_bottom_up_parallel")
search_parallel = twin(search, "search_parallel", parallel=False, _bottom_up=_bottom_up_parallel)


@nb.njit(cache=True)
def bfs_from_set(indptr, indices, seeds, dist, queue):
    """Run the FIFO breadth-first search from a set of nodes (numba kernel, serial, top-down only).

    The top-down levels of :func:`search` (direction :data:`TOP_DOWN`) without compiling its bottom-up
    stages.  Only the reached nodes are touched, so a caller may reset them from ``queue[:count]`` and search
    again.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency.
    seeds : numpy.ndarray
        Start nodes (int64).
    dist : numpy.ndarray
        Hop distances, written in place; -1 wherever not yet reached on entry.
    queue : numpy.ndarray
        Receives the reached nodes in FIFO visit order (int64, length N).

    Returns
    -------
    int
        ``count``, the nodes reached (``queue[:count]``).
    """
    tail = 0
    for s in seeds:
        if dist[s] < 0:
            dist[s] = 0
            queue[tail] = s
            tail += 1
    return _fifo(indptr, indices, dist, queue, tail)


@nb.njit(cache=True)
def bfs_into(indptr, indices, source, dist, queue):
    """Run the FIFO breadth-first search from one node (numba kernel).

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency.
    source : int
        Start node.
    dist : numpy.ndarray
        Hop distances, written in place; -1 wherever not yet reached on entry.
    queue : numpy.ndarray
        Receives the reached nodes in visit order.

    Returns
    -------
    int
        The nodes reached.
    """
    dist[:] = UNREACHED
    seeds = np.empty(1, np.int64)
    seeds[0] = source
    return bfs_from_set(indptr, indices, seeds, dist, queue)


def chunks_for(num_nodes: int) -> int:
    """Choose the parts a parallel search level is split into for a graph.

    Parameters
    ----------
    num_nodes : int
        Nodes of the graph.

    Returns
    -------
    int
        1 (run the serial builds) below :data:`PARALLEL_NODES`, else up to four per thread (at most 255).
    """
    if num_nodes <= PARALLEL_NODES:
        return 1
    return min(255, 4 * nb.get_num_threads())


def distances(indptr, indices, sources, direction=AUTO, chunks=None):
    """Give the hop distances from a node or a set of nodes (int32, -1 unreached).

    Hop distances (int32, -1 unreached) from the node set ``sources`` (one node: a single-source BFS).

    Parameters
    ----------
    indptr, indices : ndarray
        CSR adjacency (int64 row pointers; int64 or int32 indices).
    sources : int or array_like of int
        Start node(s), distance 0.
    direction : int
        :data:`AUTO`, :data:`TOP_DOWN` or :data:`BOTTOM_UP` (see :func:`search`).
    chunks : int, optional
        Parts a parallel level is split into; default :func:`chunks_for` (1 below
        :data:`PARALLEL_NODES` nodes: the serial build).

    Returns
    -------
    ndarray of int32
        ``dist[v]``, the hop distance from the nearest source (-1: unreachable).

    Examples
    --------
    >>> import numpy as np
    >>> indptr, indices = np.array([0, 1, 3, 4, 4]), np.array([1, 0, 2, 1])   # path 0-1-2 and node 3 alone
    >>> distances(indptr, indices, 0).tolist()
    [0, 1, 2, -1]
    """
    n = len(indptr) - 1
    indptr, indices = np.asarray(indptr, dtype=np.int64), compact_indices(indices, n)
    chunks = chunks_for(n) if chunks is None else int(chunks)
    dist = np.full(n, UNREACHED, dtype=np.int32)
    queue = np.empty(n, dtype=np.int64)
    seeds = np.atleast_1d(np.asarray(sources, dtype=np.int64))
    (search_parallel if chunks > 1 else search)(indptr, indices, seeds, dist, queue, direction, chunks)
    return dist


@nb.njit(cache=True, parallel=True)
def _rows(indptr, indices, sources, out, tasks):
    """``out[i]``: hop distances from ``sources[i]``, one serial :func:`search` per row, rows shared by ``tasks``."""
    n = len(indptr) - 1
    k = len(sources)
    for t in nb.prange(tasks):
        queue = np.empty(n, np.int64)
        seed = np.empty(1, np.int64)
        for i in range(k * t // tasks, k * (t + 1) // tasks):
            row = out[i]
            row[:] = UNREACHED
            seed[0] = sources[i]
            search(indptr, indices, seed, row, queue, AUTO, 1)


def distance_rows(indptr, indices, sources):
    """Give the hop distances from each of several sources: one BFS per row, the rows on every thread.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency.
    sources : numpy.ndarray
        Source nodes (int64).

    Returns
    -------
    numpy.ndarray
        int32 ``(len(sources), N)``, -1 where unreached.

    Examples
    --------
    >>> import numpy as np
    >>> distance_rows(np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]), np.array([0, 2])).tolist()
    [[0, 1, 2], [2, 1, 0]]
    """
    n = len(indptr) - 1
    indptr, indices = np.asarray(indptr, dtype=np.int64), compact_indices(indices, n)
    sources = np.ascontiguousarray(sources, dtype=np.int64)
    out = np.empty((len(sources), n), dtype=np.int32)
    _rows(indptr, indices, sources, out, min(len(sources), 4 * nb.get_num_threads()))
    return out


def compact_indices(indices: np.ndarray, num_nodes: int) -> np.ndarray:
    """Give CSR indices as int32 when every node index fits (half the bytes a search streams), else as int64.

    The searches of :func:`distances`, :func:`distance_rows` and :func:`multi_source` take their indices
    through here, so each compiles for one signature; :func:`topocast.topology.metrics.csr` keeps the int32
    copy of a topology so that it is made once.

    Parameters
    ----------
    indices : numpy.ndarray
        CSR arc heads.
    num_nodes : int
        Nodes of the graph.

    Returns
    -------
    numpy.ndarray
        The indices, converted when needed.
    """
    dtype = np.int32 if num_nodes < 2**31 else np.int64
    return indices if indices.dtype == dtype else indices.astype(dtype)


# -- many sources: bit-parallel, 64 a pass -------------------------------------------------------------------

@nb.njit(cache=True, inline="always")
def _tally(planes, c, new):
    """Add one to the bit-sliced counter of every bit set in ``new``.

    Add one to the counter of every bit set in ``new``: ``planes[c]`` is a bit-sliced counter (plane ``p``
    holds bit ``p`` of the 64 counts); a carry ripples up, one plane in two on average.
    """
    carry = new
    p = 0
    while carry:
        t = planes[c, p] & carry
        planes[c, p] ^= carry
        carry = t
        p += 1


@nb.njit(cache=True)
def _pull(indptr, indices, seen, front, nxt, full, chunks, planes, grew):
    """Run one pulling level of the bit-parallel search.

    One pulling level: every node not yet reached by all sources (``seen[v] != full``) ORs its neighbours'
    frontier words; the bits it did not have are its new ones (``nxt[v]``, added to ``seen[v]``).  Part
    ``c`` ORs the new bits into ``grew[c]`` and, when ``planes`` has rows, counts them per source in
    ``planes[c]``.  Returns the nodes with new bits.
    """
    n = len(indptr) - 1
    counting = planes.shape[0] > 0
    found = np.zeros(chunks, np.int64)
    for c in nb.prange(chunks):
        count = 0
        got = _ZERO
        if counting:
            planes[c, :] = 0
        for v in range(n * c // chunks, n * (c + 1) // chunks):
            s = seen[v]
            if s == full:
                nxt[v] = _ZERO
                continue
            acc = _ZERO
            for e in range(indptr[v], indptr[v + 1]):
                acc |= front[indices[e]]
            new = acc & ~s
            nxt[v] = new
            if new:
                seen[v] = s | new
                got |= new
                count += 1
                if counting:
                    _tally(planes, c, new)
        found[c] = count
        grew[c] = got
    return found.sum()


@nb.njit(cache=True)
def _push(indptr, indices, seen, front, nxt, queue, size):
    """Run one pushing level of the bit-parallel search.

    One pushing level: every frontier node ``queue[:size]`` ORs its frontier word into its neighbours'
    new bits.  The new frontier replaces the old in ``queue`` and ``front``; returns its size.
    """
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
    for j in range(size):
        front[queue[j]] = _ZERO
    for j in range(tail):
        v = queue[size + j]
        front[v] = nxt[v]
        nxt[v] = _ZERO
        queue[j] = v
    return tail


@nb.njit(cache=True)
def _one_pass(indptr, indices, job, work, lo, hi, mode):
    """BFS from the sources ``lo .. hi - 1`` of ``job`` at once (at most 64; bit ``i``: source ``lo + i``).

    ``job`` is ``(sources, targets, ecc, hist, tdist)`` of :func:`multi_source`, written at rows
    ``lo .. hi - 1``; ``work`` is ``(seen, front, nxt, queue)``: uint64 words of N nodes and 2N int64;
    ``mode`` is ``(hist_len, direction, chunks)``.  Stages per level: read off the new bits (which sources
    went one level further: their eccentricities; counts per source, the histogram, only when
    ``hist_len > 0``), resolve the targets just reached, then push or pull the next level.  Last, a
    source missing from some node gets -1.
    """
    sources, targets, ecc, hist, tdist = job
    seen, front, nxt, queue = work
    hist_len, direction, chunks = mode
    n = len(indptr) - 1
    k = hi - lo
    full = ~_ZERO if k == 64 else (_ONE << np.uint64(k)) - _ONE
    counting = hist_len > 0
    seen[:] = 0
    front[:] = 0
    nxt[:] = 0
    planes = np.zeros((chunks if counting else 0, 64), np.uint64)
    grew = np.zeros(chunks, np.uint64)
    count = np.zeros(64, np.int64)     # new nodes per source at this level (when counting)
    size = 0
    for i in range(k):
        v = sources[lo + i]
        if front[v] == 0:
            queue[size] = v
            size += 1
        seen[v] |= _ONE << np.uint64(i)
        front[v] |= _ONE << np.uint64(i)
        count[i] = 1
    active = full
    level = 0
    pushing = True
    while active:
        # -- the sources that went one level further: eccentricities, histogram, targets
        for i in range(k):
            if (active >> np.uint64(i)) & _ONE:
                ecc[lo + i] = level
                if level < hist_len:
                    hist[lo + i, level] = count[i]
                bit = _ONE << np.uint64(i)
                for j in range(targets.shape[1]):
                    if tdist[lo + i, j] < 0 and seen[targets[lo + i, j]] & bit:
                        tdist[lo + i, j] = level
        # -- the next level: push from a small frontier, pull into every node for a large one
        level += 1
        active = _ZERO
        if direction == TOP_DOWN or (direction == AUTO and size * PUSH_FRACTION < n):
            if not pushing:  # list the frontier the last pull left in ``front``
                size = 0
                for v in range(n):
                    if front[v]:
                        queue[size] = v
                        size += 1
                nxt[:] = 0
                pushing = True
            size = _push(indptr, indices, seen, front, nxt, queue, size)
            if counting:
                count[:] = 0
            for j in range(size):
                bits = front[queue[j]]
                active |= bits
                if counting:
                    while bits:
                        count[np.int64(trailing_zeros(bits))] += 1
                        bits &= bits - _ONE
        else:
            pushing = False
            size = _pull(indptr, indices, seen, front, nxt, full, chunks, planes, grew)
            front, nxt = nxt, front
            for c in range(chunks):
                active |= grew[c]
            if counting:  # per source: read its count off the bit planes
                count[:] = 0
                for c in range(chunks):
                    for p in range(64):
                        plane = planes[c, p]
                        if plane:
                            for i in range(k):
                                count[i] += np.int64((plane >> np.uint64(i)) & _ONE) << p
    missing = _ZERO
    for v in range(n):
        missing |= full & ~seen[v]
    for i in range(k):
        if (missing >> np.uint64(i)) & _ONE:  # not every node reached: no eccentricity, no histogram
            ecc[lo + i] = -1
            hist[lo + i, :] = 0


_pull_parallel = twin(_pull, "_pull_parallel")
_one_pass_parallel = twin(_one_pass, "_one_pass_parallel", parallel=False, _pull=_pull_parallel)


@nb.njit(cache=True)
def _work(n):
    """Allocate the work space of one pass over N nodes: ``(seen, front, nxt, queue)``."""
    return np.empty(n, np.uint64), np.empty(n, np.uint64), np.empty(n, np.uint64), np.empty(2 * n, np.int64)


@nb.njit(cache=True, parallel=True)
def _passes_parallel(indptr, indices, job, hist_len, direction, tasks):
    """Run the passes of :func:`multi_source` on several threads.

    The passes of :func:`multi_source` shared by ``tasks`` threads, each pass serial, each task its own
    work space (no step shared between threads).
    """
    k = len(job[0])
    passes = (k + 63) // 64
    for t in nb.prange(tasks):
        work = _work(len(indptr) - 1)
        for b in range(t, passes, tasks):
            _one_pass(indptr, indices, job, work, 64 * b, min(k, 64 * b + 64), (hist_len, direction, 1))


def multi_source(indptr, indices, sources, hist_len=0, targets=None, direction=AUTO, chunks=None):
    """Give eccentricity, distance histogram and distances to targets of many sources: bit-parallel BFS.

    Eccentricity, distance histogram and distances to targets of many sources: bit-parallel BFS, 64 a pass.

    Parameters
    ----------
    indptr, indices : ndarray
        CSR adjacency (int64 row pointers; int64 or int32 indices).
    sources : array_like of int
        Sources (repeats allowed).
    hist_len : int
        Columns of the histogram: distances ``0 .. hist_len - 1`` are counted (0: no histogram, faster).
    targets : ndarray of int64, shape (len(sources), T), optional
        Nodes whose distance from each source is wanted (row ``i`` for ``sources[i]``).
    direction : int
        :data:`AUTO` (push while the frontier holds under ``N /`` :data:`PUSH_FRACTION` nodes, else pull),
        :data:`TOP_DOWN` (always push) or :data:`BOTTOM_UP` (always pull).
    chunks : int, optional
        Parts a pulling level is split into; default :func:`chunks_for`.  With
        several threads and at least as many passes as threads, the passes are
        shared out instead, one per thread at a time.

    Returns
    -------
    ecc : ndarray of int64
        Eccentricity of each source; -1 where it does not reach every node.
    hist : ndarray of int64, shape (len(sources), hist_len)
        ``hist[i, d]``, nodes at distance ``d`` from ``sources[i]`` (a row of zeros where ``ecc`` is -1).
    tdist : ndarray of int32, shape (len(sources), T)
        Distance from ``sources[i]`` to ``targets[i, j]`` (-1: unreachable).

    Raises
    ------
    ValueError
        If a source is not a node.

    Examples
    --------
    >>> import numpy as np
    >>> indptr, indices = np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2])   # path 0-1-2-3
    >>> ecc, hist, _ = multi_source(indptr, indices, [0, 1], hist_len=4)
    >>> ecc.tolist(), hist.tolist()
    ([3, 2], [[1, 1, 1, 1], [1, 2, 1, 0]])
    """
    n = len(indptr) - 1
    indptr, indices = np.asarray(indptr, dtype=np.int64), compact_indices(indices, n)
    sources = np.ascontiguousarray(np.atleast_1d(sources), dtype=np.int64)
    k = len(sources)
    if k and (sources.min() < 0 or sources.max() >= n):
        raise ValueError(f"sources must be nodes 0..{n - 1}")
    targets = np.empty((k, 0), np.int64) if targets is None else np.ascontiguousarray(targets, dtype=np.int64)
    job = (sources, targets, np.full(k, -1, dtype=np.int64), np.zeros((k, int(hist_len)), dtype=np.int64),
           np.full(targets.shape, -1, dtype=np.int32))
    if k == 0 or n == 0:
        return job[2:]
    chunks = chunks_for(n) if chunks is None else int(chunks)
    passes = (k + 63) // 64
    threads = nb.get_num_threads()
    if chunks > 1 and threads > 1 and passes >= threads:
        _passes_parallel(indptr, indices, job, int(hist_len), int(direction), threads)
        return job[2:]
    one_pass = _one_pass_parallel if chunks > 1 else _one_pass
    work = _work(n)
    for lo in range(0, k, 64):
        one_pass(indptr, indices, job, work, lo, min(k, lo + 64), (int(hist_len), int(direction), chunks))
    return job[2:]


def eccentricities(indptr, indices, sources):
    """Give the eccentricity of each source, by :func:`multi_source`.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency.
    sources : array_like of int
        Source nodes.

    Returns
    -------
    numpy.ndarray
        int64 eccentricities, -1 for a source that does not reach every node.
    """
    return multi_source(indptr, indices, sources)[0]


def distances_to(indptr, indices, sources, targets):
    """Give the hop distance from ``sources[i]`` to ``targets[i, j]``, by :func:`multi_source`.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency.
    sources : array_like of int
        Source nodes.
    targets : numpy.ndarray
        int64 ``(len(sources), T)``: the targets of each source.

    Returns
    -------
    numpy.ndarray
        int32 ``(len(sources), T)``, -1 where unreached.
    """
    return multi_source(indptr, indices, sources, targets=targets)[2]


# -- girth ----------------------------------------------------------------------------------------------------

@nb.njit(cache=True, parallel=True)
def girth(indptr, indices, sources):
    """Give the shortest cycle through each source in the underlying simple graph (numba kernel).

    An early-stopping BFS per source, sources in parallel.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency.
    sources : numpy.ndarray
        Source nodes.

    Returns
    -------
    numpy.ndarray
        Length of the shortest cycle through each source (0 when none).
    """
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
