"""Reductions: reduce-scatter, allreduce and reduce as schedules of partial aggregates.

Every node holds a vector of ``message_bytes`` bytes, cut into blocks (the schedule's messages).  For a
reduce-scatter and an allreduce there are ``N * chunks`` blocks and node ``j`` owns blocks
``j*chunks .. (j+1)*chunks - 1``; for a reduce, ``chunks`` blocks.  A transfer carries the sender's current
partial aggregate of the blocks it names; the receiver adds it to its own (``combine``) or, in the all-gather
half of an allreduce and the broadcast half of a tree allreduce, takes the reduced block (a copy).  Every
transfer is one hop of the topology; the methods and their textbook costs (``alpha`` the start-up, ``beta``
the time per byte, ``m`` the vector):

* ``ring`` (Patarasuk and Yuan 2009): a reduce-scatter of ``N - 1`` steps round a Hamiltonian cycle, each
  moving ``m / N``, then an all-gather of ``N - 1`` steps: ``2 (N-1) (alpha + m/N beta)``.  The cycle comes
  from the family (ring, torus, mesh with an even side, hypercube Gray code, complete graph) or a search on a
  small ``graph:`` network; on any other network the ring visits the nodes in the depth-first order of a
  breadth-first spanning tree and its transfers between non-neighbours are relayed hop by hop
  (:mod:`topocast.algorithms.embedding`), every hop counted.
* ``halving-doubling`` (Rabenseifner; Thakur, Rabenseifner and Gropp 2005): recursive halving over the
  hypercube's dimensions, each step exchanging half of what is left, then recursive doubling:
  ``2 log2 N alpha + 2 (N-1)/N m beta``.  When ``N`` is not a power of two the ``r = N - 2^floor(log2 N)``
  extra nodes first hand their vectors to a partner and get the result back at the end.  On networks other
  than hypercubes and complete graphs the partners' transfers are relayed.
* ``hierarchical`` (group networks: Dragonfly, Galaxyfly): a ring reduce-scatter inside every group, a ring
  allreduce of each slice among the groups (the nodes of one index in each group), a ring all-gather inside
  every group; relayed where the rings are not links.
* ``torus`` (Chan et al. 2007): the ring reduce-scatter along each dimension in turn (most significant first,
  each on the blocks left), then the all-gathers in reverse order.
* ``binomial`` (hypercube): a binomial-tree reduce to node 0 over the dimensions, then (allreduce) the
  binomial broadcast back: ``2 log2 N (alpha + m beta)``.
* ``double-binary-tree`` (Sanders, Speck and Traff 2009; complete graphs): two binary trees in which every
  node is interior in at most one; half the blocks go up and down each, pipelined in chunks.
* ``bfs-tree`` (any connected graph, ``graph:`` files included): reduce up a breadth-first spanning tree to
  the root, pipelined in ``chunks``, then (allreduce) broadcast down it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder, Targets
from ..registry import Param
from ..sim.models import PortModel
from ..topology.core import Topology
from .base import REDUCTION_RUN_PARAMS, register
from .grid import grid_shape, strides

#: the families whose Hamiltonian cycle the ring methods know
RING_FAMILIES = ("ring", "torus", "mesh", "hypercube", "complete")
#: the largest ``graph:`` network searched for a Hamiltonian cycle
MAX_CYCLE_SEARCH = 64


# -- blocks and builders ---------------------------------------------------------------------------------
def _blocks(topology: Topology, collective: str, chunks: int, root: int = 0) -> tuple[np.ndarray, Targets]:
    """``(home of each block, targets)`` of a reduction on ``topology``."""
    n = topology.num_nodes
    if collective == "reduce":
        if not 0 <= root < n:
            raise TopocastError(f"root: must be a node index in 0..{n - 1}, got {root}")
        return np.full(chunks, root, dtype=np.int64), np.full(chunks, root, dtype=np.int64)
    home = np.repeat(np.arange(n, dtype=np.int64), chunks)
    return home, (home if collective == "reduce-scatter" else "all")


def _builder(topology: Topology, collective: str, message_bytes: float, chunks: int, method: str,
             root: int = 0) -> ScheduleBuilder:
    home, targets = _blocks(topology, collective, chunks, root)
    return ScheduleBuilder(topology.num_nodes, origin=home, collective=collective, targets=targets,
                           message_bytes=message_bytes / len(home), meta={"algorithm": method, "chunks": chunks})


#: the most blocks a reduction plan may cut its vector into (each costs memory in the plan and its check)
MAX_BLOCKS = 1 << 31


def _check_chunks(chunks: int, message_bytes: float, blocks: int) -> None:
    if blocks > MAX_BLOCKS:
        raise TopocastError(f"chunks: {chunks} chunks make {blocks:,} blocks, more than {MAX_BLOCKS:,}; lower chunks")
    if message_bytes <= 0:
        raise TopocastError(f"message_bytes: a reduction needs a vector of at least one byte, got {message_bytes}")
    if blocks > message_bytes:
        raise TopocastError(f"chunks: {blocks} blocks of a {message_bytes:g}-byte vector would be smaller than a "
                            "byte; lower chunks or raise message_bytes")


# -- Hamiltonian cycles ----------------------------------------------------------------------------------
def hamiltonian_cycle(topology: Topology) -> np.ndarray:
    """Find a cycle through every node, each consecutive pair (and the last and first) joined by a link.

    Parameters
    ----------
    topology : Topology
        A ring, torus, mesh with an even side, hypercube, complete graph, or a ``graph:`` network of at most
        :data:`MAX_CYCLE_SEARCH` nodes (searched).

    Returns
    -------
    numpy.ndarray
        The nodes in cycle order.

    Raises
    ------
    TopocastError
        When the family has no such cycle or none is known or found.
    """
    family, n = topology.family, topology.num_nodes
    if family in ("ring", "complete"):
        return np.arange(n, dtype=np.int64)
    if family == "hypercube":
        k = np.arange(n, dtype=np.int64)
        return k ^ (k >> 1)
    if family in ("torus", "mesh"):
        return _grid_cycle(topology)
    if family == "graph" and n <= MAX_CYCLE_SEARCH:
        found = _search_cycle(topology)
        if found is not None:
            return found
    raise TopocastError(f"algorithm: needs a Hamiltonian cycle; {topology.spec} is not a ring, torus, mesh with an "
                        f"even side, hypercube or complete graph (use allreduce-bfs-tree on any network)")


def _grid_cycle(topology: Topology) -> np.ndarray:
    """Give a Hamiltonian cycle of a torus, or of a mesh with an even side (:func:`grid_cycle`)."""
    sizes, wraps = grid_shape(topology)
    if len(sizes) == 1 and not wraps[0]:
        raise TopocastError("algorithm: a path has no Hamiltonian cycle (use allreduce-bfs-tree)")
    if not all(wraps) and all(k % 2 for k in sizes):
        raise TopocastError(f"algorithm: a mesh with every side odd ({topology.spec}) has no Hamiltonian cycle "
                            "(use allreduce-bfs-tree)")
    return grid_cycle(tuple(sizes))


def grid_cycle(sizes: tuple[int, ...]) -> np.ndarray:
    """Give a Hamiltonian cycle of the torus (and, with an even side, the mesh) of given sides.

    A Hamiltonian cycle of the torus of ``sizes`` (first dimension most significant), which is also one of
    the mesh of ``sizes`` when a side is even (it then uses no wraparound link).

    Rows are one dimension ``a`` (an even one for a mesh), columns the other nodes in the order of a
    Hamiltonian path of the rest (a mesh) or a Hamiltonian cycle of the rest (a torus of odd sides, built the
    same way).  The cycle walks row 0 across every column, then rows ``1 .. a-1`` back and forth over columns
    ``1 .. b-1``, then column 0 up: the last row ends next to column 0 directly (``a`` even) or over the
    columns' wraparound (``a`` odd, the columns a cycle).

    Parameters
    ----------
    sizes : tuple of int
        The sides, first dimension most significant.

    Returns
    -------
    numpy.ndarray
        The nodes in cycle order.
    """
    stride = strides(sizes)
    if len(sizes) == 1:
        return np.arange(sizes[0], dtype=np.int64)
    even = [d for d, k in enumerate(sizes) if k % 2 == 0]
    lead = even[0] if even else 0
    rest = tuple(k for d, k in enumerate(sizes) if d != lead)
    rest_stride = np.asarray([stride[d] for d in range(len(sizes)) if d != lead], dtype=np.int64)
    if even:
        columns = _snake(list(rest))
    else:                                   # every side odd (a torus): the columns follow a cycle of the rest
        sub = grid_cycle(rest)
        columns = np.stack([(sub // s) % k for s, k in zip(strides(rest), rest, strict=True)], axis=1)
    col = (columns * rest_stride).sum(axis=1)
    a = sizes[lead]
    walk = [col.copy()]
    for r in range(1, a):
        cols = col[1:][::-1] if r % 2 == 1 else col[1:]
        walk.append(r * stride[lead] + cols)
    walk.append(np.arange(a - 1, 0, -1, dtype=np.int64) * stride[lead] + col[0])
    return np.concatenate(walk).astype(np.int64)


def _snake(sizes: list[int]) -> np.ndarray:
    """Walk a boustrophedon (Hamiltonian path of the mesh) over ``sizes``, as coordinate rows, from 0."""
    if not sizes:
        return np.zeros((1, 0), dtype=np.int64)
    inner = _snake(sizes[1:])
    rows = []
    for x in range(sizes[0]):
        part = inner if x % 2 == 0 else inner[::-1]
        rows.append(np.column_stack([np.full(len(part), x, dtype=np.int64), part]))
    return np.concatenate(rows)


def _search_cycle(topology: Topology) -> np.ndarray | None:
    """Depth-first search for a Hamiltonian cycle (small graphs only), neighbours in index order."""
    n = topology.num_nodes
    nbrs = [sorted(set(topology.neighbors(v).tolist())) for v in range(n)]
    path, used = [0], np.zeros(n, dtype=bool)
    used[0] = True
    budget = [200_000]

    def extend() -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if len(path) == n:
            return 0 in nbrs[path[-1]]
        for w in nbrs[path[-1]]:
            if not used[w]:
                used[w] = True
                path.append(w)
                if extend():
                    return True
                path.pop()
                used[w] = False
        return False

    return np.asarray(path, dtype=np.int64) if extend() else None


# -- ring ------------------------------------------------------------------------------------------------
def _ring_arrays(cycle: np.ndarray, chunks: int, reduce_scatter: bool, gather: bool, first_step: int = 0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Give ``(src, dst, first, step, combine)`` of the ring reduce-scatter and all-gather round ``cycle``.

    Every round at once: position ``i`` sends in round ``s`` of the reduce-scatter the blocks of node
    ``cycle[(i - s - 1) % n]``, in round ``s`` of the all-gather those of ``cycle[(i - s) % n]``.
    """
    n = len(cycle)
    rounds = n - 1
    phases = [(1, True)] * reduce_scatter + [(0, False)] * gather  # (lag, combine)
    lag = np.concatenate([np.zeros(0, np.int64)] + [np.arange(rounds, dtype=np.int64) + s for s, _ in phases])
    combine = np.repeat(np.concatenate([np.zeros(0, bool)] + [np.full(rounds, c) for _, c in phases]), n)
    owner = cycle[(np.arange(n, dtype=np.int64)[None, :] - lag[:, None]) % n].ravel()
    src, dst = np.tile(cycle, len(lag)), np.tile(np.roll(cycle, -1), len(lag))
    step = np.repeat(np.arange(first_step, first_step + len(lag), dtype=np.int64), n)
    return src, dst, owner * chunks, step, combine


def _ring_phases(builder: ScheduleBuilder, cycle: np.ndarray, chunks: int, reduce_scatter: bool, gather: bool,
                 first_step: int = 0) -> int:
    """Add the ring reduce-scatter and all-gather round a cycle.

    The ring reduce-scatter (position ``i`` ends with the full blocks of node ``cycle[i]``) and all-gather
    round ``cycle``; returns the next free step.
    """
    src, dst, first, step, combine = _ring_arrays(cycle, chunks, reduce_scatter, gather, first_step)
    if len(src):
        builder.add(src=src, dst=dst, first=first, count=chunks, step=step, combine=combine)
    return first_step + len(src) // max(1, len(cycle))


def _ring_schedule(builder: ScheduleBuilder, cycle: np.ndarray, chunks: int, gather: bool) -> Schedule:
    """Build what :func:`_ring_phases` then ``builder.build()`` give (``builder`` holding no transfers yet).

    The arrays are made once instead of copied through the builder (a ring allreduce on 4,096 nodes has
    33.5 million transfers).
    """
    src, dst, first, step, combine = _ring_arrays(cycle, chunks, True, gather)
    nt = len(src)
    return Schedule(num_nodes=builder.num_nodes, origin=builder.origin, src=src, dst=dst,
                    range_ptr=np.arange(nt + 1, dtype=np.int64), range_first=first,
                    range_count=np.full(nt, chunks, dtype=np.int64), collective=builder.collective,
                    targets=builder.targets, step=step, message_bytes=builder.message_bytes, meta=builder.meta,
                    combine=combine)


def ring_order(topology: Topology) -> tuple[np.ndarray, bool]:
    """Order the nodes for a ring: a Hamiltonian cycle when one is known, else a depth-first order.

    ``(order, cycle)``: a Hamiltonian cycle when one is known (``cycle`` True), else the nodes in the
    depth-first order of a breadth-first spanning tree from node 0 (consecutive nodes near each other).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    tuple
        ``(order, cycle)``.

    Raises
    ------
    TopocastError
        If the network is not connected.
    """
    try:
        return hamiltonian_cycle(topology), True
    except TopocastError:
        pass
    from .generic_trees import bfs_tree

    dist, parent, _ = bfs_tree(topology, 0)
    if np.any(dist < 0):
        raise TopocastError(f"algorithm: {topology.spec} is not connected; a reduction needs every node")
    children: list[list[int]] = [[] for _ in range(topology.num_nodes)]
    for v in np.argsort(dist, kind="stable")[1:].tolist():
        children[int(parent[v])].append(v)
    order, stack = [], [0]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(reversed(children[v]))
    return np.asarray(order, dtype=np.int64), False


def _ring(topology: Topology, collective: str, message_bytes: float, chunks: int) -> Schedule:
    from .embedding import embed

    _check_chunks(chunks, message_bytes, topology.num_nodes * chunks)
    order, cycle = ring_order(topology)
    builder = _builder(topology, collective, message_bytes, chunks, "ring" if cycle else "ring (relayed)")
    logical = _ring_schedule(builder, order, chunks, collective == "allreduce")
    return logical if cycle else embed(topology, logical)


def ring_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the ring allreduce: reduce-scatter then all-gather round a Hamiltonian cycle (``2 (N-1)`` steps).

    On a network without a known cycle the ring is relayed over shortest paths.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A vector under one byte, or blocks smaller than a byte, or a network that is not connected.
    """
    return _ring(topology, "allreduce", message_bytes, chunks)


def ring_reduce_scatter(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the ring reduce-scatter: ``N - 1`` steps round a Hamiltonian cycle; node ``j`` ends with block ``j``.

    On a network without a known cycle the ring is relayed over shortest paths.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A vector under one byte, or blocks smaller than a byte, or a network that is not connected.
    """
    return _ring(topology, "reduce-scatter", message_bytes, chunks)


# -- halving and doubling ----------------------------------------------------------------------------------
def _halving_doubling(builder: ScheduleBuilder, ranks: np.ndarray, blocks: int, gather: bool,
                      first_step: int) -> int:
    """Add recursive halving (and doubling back) among power-of-two ranks.

    Recursive halving (and doubling back) among ``ranks`` (a power of two of them, ``ranks[i]`` the node
    of virtual rank ``i``) over blocks ``0..blocks-1``: virtual rank ``i`` ends the halving holding its share
    of the blocks; returns the next free step.
    """
    p = len(ranks)
    dims = p.bit_length() - 1
    lo = np.zeros(p, dtype=np.int64)
    hi = np.full(p, blocks, dtype=np.int64)
    i = np.arange(p, dtype=np.int64)
    step = first_step
    history = []
    for d in reversed(range(dims)):
        mid = (lo + hi) // 2
        upper = (i >> d) & 1
        keep_lo, keep_hi = np.where(upper == 1, mid, lo), np.where(upper == 1, hi, mid)
        send_lo, send_hi = np.where(upper == 1, lo, mid), np.where(upper == 1, mid, hi)
        builder.add(src=ranks, dst=ranks[i ^ (1 << d)], first=send_lo, count=send_hi - send_lo, step=step,
                    combine=True)
        history.append((d, keep_lo, keep_hi))
        lo, hi = keep_lo, keep_hi
        step += 1
    if gather:
        for d, keep_lo, keep_hi in reversed(history):
            builder.add(src=ranks, dst=ranks[i ^ (1 << d)], first=keep_lo, count=keep_hi - keep_lo, step=step,
                        combine=False)
            step += 1
    return step


def _power_of_two_ranks(topology: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Choose the power-of-two ranks of the halving and pair the extra nodes with them.

    ``(ranks, extra, partner)``: the ``2^k`` nodes that run the halving, and the extra nodes each paired
    with one of them (Rabenseifner's pre and post steps, when ``N`` is not a power of two).
    """
    n = topology.num_nodes
    p = 1 << (n.bit_length() - 1)
    r = n - p
    extra = np.arange(0, 2 * r, 2, dtype=np.int64)            # even nodes below 2r hand over to the odd ones
    partner = extra + 1
    ranks = np.concatenate([partner, np.arange(2 * r, n, dtype=np.int64)])
    return ranks, extra, partner


def halving_doubling(topology: Topology, collective: str, message_bytes: float, chunks: int) -> Schedule:
    """Plan recursive halving (and doubling back, for an allreduce) among the nodes (Rabenseifner).

    Native on a hypercube or complete graph, relayed over shortest paths elsewhere; ``N`` not a power of two adds
    Rabenseifner's pre and post steps.

    Parameters
    ----------
    topology : Topology
        The network.
    collective : str
        ``allreduce``, ``reduce-scatter`` or ``reduce``.
    message_bytes : float
        Size of every node's vector in bytes.
    chunks : int
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A vector under one byte, or blocks smaller than a byte, or a network that is not connected.
    """
    n = topology.num_nodes
    _check_chunks(chunks, message_bytes, n * chunks)
    ranks, extra, partner = _power_of_two_ranks(topology)
    from .embedding import embed

    native = topology.family in ("hypercube", "complete")
    builder = _builder(topology, collective, message_bytes, chunks,
                       "halving-doubling" if native else "halving-doubling (relayed)")
    blocks = n * chunks
    step = 0
    if len(extra):
        builder.add(src=extra, dst=partner, first=0, count=blocks, step=0, combine=True)
        step = 1
    step = _halving_doubling(builder, ranks, blocks, collective == "allreduce", step)
    if len(extra) and collective == "allreduce":
        builder.add(src=partner, dst=extra, first=0, count=blocks, step=step, combine=False)
    if len(extra) and collective == "reduce-scatter":
        _hand_out(builder, ranks, n, chunks, step)
    logical = builder.build()
    return logical if native else embed(topology, logical)


def _hand_out(builder: ScheduleBuilder, ranks: np.ndarray, n: int, chunks: int, step: int) -> None:
    """Copy each owner's blocks to it after the halving (reduce-scatter, ``N`` not a power of two).

    Reduce-scatter on ``N`` not a power of two: after the halving, virtual rank ``i`` holds the full sums of
    its share of the ``N * chunks`` blocks (:func:`_halving_doubling`'s split); it copies each owner's part of
    that share to the owner, one owner per step (so one port suffices).
    """
    p = len(ranks)
    lo, hi = np.zeros(p, dtype=np.int64), np.full(p, n * chunks, dtype=np.int64)
    for d in reversed(range(p.bit_length() - 1)):
        mid = (lo + hi) // 2
        upper = (np.arange(p) >> d) & 1
        lo, hi = np.where(upper == 1, mid, lo), np.where(upper == 1, hi, mid)
    sends: list[list[tuple[int, int, int, int]]] = []
    for i in range(p):
        mine = []
        for owner in range(int(lo[i]) // chunks, (int(hi[i]) - 1) // chunks + 1 if hi[i] > lo[i] else 0):
            begin, end = max(int(lo[i]), owner * chunks), min(int(hi[i]), (owner + 1) * chunks)
            if owner != ranks[i] and end > begin:
                mine.append((int(ranks[i]), owner, begin, end - begin))
        sends.append(mine)
    for k in range(max((len(m) for m in sends), default=0)):
        batch = [m[k] for m in sends if len(m) > k]
        src, dst, first, count = (np.array(c, dtype=np.int64) for c in zip(*batch, strict=True))
        builder.add(src=src, dst=dst, first=first, count=count, step=step + k, combine=False)


def halving_doubling_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan recursive halving then doubling (Rabenseifner): ``2 log2 N`` steps moving ``2 (N-1)/N`` of the vector.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A vector under one byte, or blocks smaller than a byte, or a network that is not connected.
    """
    return halving_doubling(topology, "allreduce", message_bytes, chunks)


def halving_reduce_scatter(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan recursive halving: ``log2 N`` steps; node ``j`` ends with block ``j``.

    With ``N`` not a power of two the extra nodes first hand their vectors to partners (Rabenseifner's pre-step),
    and after the halving each rank copies the blocks of its share that other nodes own to them.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A vector under one byte, or blocks smaller than a byte, or a network that is not connected.
    """
    return halving_doubling(topology, "reduce-scatter", message_bytes, chunks)


# -- multidimensional on tori ----------------------------------------------------------------------------
def torus_reduction(topology: Topology, collective: str, message_bytes: float, chunks: int) -> Schedule:
    """Plan a ring reduce-scatter along each dimension, most significant first, on the blocks left to the node.

    For an allreduce the ring all-gathers follow in reverse order.

    Parameters
    ----------
    topology : Topology
        The network.
    collective : str
        ``allreduce``, ``reduce-scatter`` or ``reduce``.
    message_bytes : float
        Size of every node's vector in bytes.
    chunks : int
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not a ring or torus, a vector under one byte, or blocks smaller than a byte.
    """
    sizes, wraps = grid_shape(topology)
    if not all(wraps):
        raise TopocastError(f"algorithm: needs rings in every dimension (a ring or torus), not {topology.spec}")
    n = topology.num_nodes
    _check_chunks(chunks, message_bytes, n * chunks)
    builder = _builder(topology, collective, message_bytes, chunks, "torus")
    stride = strides(sizes)
    nodes = np.arange(n, dtype=np.int64)
    step = 0
    spans = []   # per dimension: the first block and the blocks of one coordinate's share, per node
    base = np.zeros(n, dtype=np.int64)
    span = n * chunks
    for d, k in enumerate(sizes):
        share = span // k
        x = (nodes // stride[d]) % k
        line = nodes - x * stride[d]
        for s in range(k - 1):
            target = (x - s - 1) % k                      # whose share this node passes on in step s
            builder.add(src=nodes, dst=line + ((x + 1) % k) * stride[d], first=base + target * share, count=share,
                        step=step, combine=True)
            step += 1
        spans.append((d, k, base.copy(), share, x, line))
        base = base + x * share
        span = share
    if collective == "allreduce":
        for d, k, base_d, share, x, line in reversed(spans):
            for s in range(k - 1):
                target = (x - s) % k
                builder.add(src=nodes, dst=line + ((x + 1) % k) * stride[d], first=base_d + target * share,
                            count=share, step=step, combine=False)
                step += 1
    return builder.build()


def torus_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the multidimensional allreduce on a torus: a ring reduce-scatter per dimension, then the all-gathers.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not a ring or torus, a vector under one byte, or blocks smaller than a byte.
    """
    return torus_reduction(topology, "allreduce", message_bytes, chunks)


def torus_reduce_scatter(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the multidimensional reduce-scatter on a torus: a ring reduce-scatter per dimension.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not a ring or torus, a vector under one byte, or blocks smaller than a byte.
    """
    return torus_reduction(topology, "reduce-scatter", message_bytes, chunks)


# -- trees -----------------------------------------------------------------------------------------------
def _tree_phases(builder: ScheduleBuilder, parent: np.ndarray, depth: np.ndarray, blocks: np.ndarray,
                 broadcast: bool, first_step: int = 0) -> int:
    """Add a pipelined reduction up a tree and, optionally, the broadcast back down.

    Reduce ``blocks`` (one per pipeline stage) up the tree ``parent`` (-1 at the root) and, with
    ``broadcast``, copy them back down; a node at depth ``d`` of a tree of height ``H`` sends stage ``k`` up at
    step ``H - d + k`` (its children's stage ``k`` has arrived), and its parent sends it the reduced stage
    ``k`` at step ``H + d - 1 + k`` (after the root's stage ``k`` is complete, at step ``H - 1 + k``).
    """
    nodes = np.flatnonzero(parent >= 0)
    height = int(depth.max(initial=0))
    c = len(blocks)
    for k, b in enumerate(blocks):
        builder.add(src=nodes, dst=parent[nodes], first=b, count=1,
                    step=first_step + height - depth[nodes] + k, combine=True)
    if not broadcast:
        return first_step + height + c
    for k, b in enumerate(blocks):
        builder.add(src=parent[nodes], dst=nodes, first=b, count=1,
                    step=first_step + height + depth[nodes] - 1 + k, combine=False)
    return first_step + 2 * height + c - 1


def bfs_tree_reduction(topology: Topology, collective: str, message_bytes: float, chunks: int,
                       root: int) -> Schedule:
    """Plan a reduction up a breadth-first spanning tree to ``root`` in ``chunks`` pipelined blocks.

    For an allreduce the blocks are then broadcast down the tree.

    Parameters
    ----------
    topology : Topology
        The network.
    collective : str
        ``allreduce``, ``reduce-scatter`` or ``reduce``.
    message_bytes : float
        Size of every node's vector in bytes.
    chunks : int
        Blocks per node's share of the vector (pipelining).
    root : int
        The node the tree reduces to.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A reduce-scatter, a root that is not a node, a network that is not connected, or a vector under one byte, or
        blocks smaller than a byte.
    """
    from .generic_trees import bfs_tree

    if collective == "reduce-scatter":
        raise TopocastError("algorithm: a tree reduces to one node; use a ring or halving reduce-scatter")
    n = topology.num_nodes
    if not 0 <= root < n:
        raise TopocastError(f"root: must be a node index in 0..{n - 1}, got {root}")
    dist, parent, _ = bfs_tree(topology, root)
    if np.any(dist < 0):
        raise TopocastError(f"algorithm: {topology.spec} is not connected; a reduction needs every node")
    _check_chunks(chunks, message_bytes, chunks)
    builder = ScheduleBuilder(n, origin=np.full(chunks, root, dtype=np.int64), collective=collective,
                              targets="all" if collective == "allreduce" else np.full(chunks, root, dtype=np.int64),
                              message_bytes=message_bytes / chunks, meta={"algorithm": "bfs-tree", "chunks": chunks})
    _tree_phases(builder, parent, dist.astype(np.int64), np.arange(chunks, dtype=np.int64),
                 collective == "allreduce")
    return builder.build()


def bfs_tree_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1,
                       root: int = 0) -> Schedule:
    """Plan an allreduce on any connected graph: reduce up a BFS tree, broadcast down, pipelined in chunks.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).
    root : int, default 0
        The root of the tree.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A root that is not a node, a network that is not connected, or a vector under one byte, or blocks smaller
        than a byte.
    """
    return bfs_tree_reduction(topology, "allreduce", message_bytes, chunks, root)


def bfs_tree_reduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1, root: int = 0) -> Schedule:
    """Plan a reduce to ``root`` on any connected graph up a BFS tree, pipelined in chunks.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).
    root : int, default 0
        The node that ends with the sum.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A root that is not a node, a network that is not connected, or a vector under one byte, or blocks smaller
        than a byte.
    """
    return bfs_tree_reduction(topology, "reduce", message_bytes, chunks, root)


#: the most spanning trees the disjoint-trees method packs
MAX_TREES = 8


def disjoint_spanning_trees(topology: Topology, seed: int = 0, limit: int = MAX_TREES) -> list[np.ndarray]:
    """Find edge-disjoint spanning trees of the network, as parent arrays.

    Edge-disjoint spanning trees of the network, as parent arrays: BFS trees of the links no tree uses yet
    (shallow, so the pipeline fills fast), from roots spread over the nodes, or a random spanning tree
    (Wilson's algorithm, seeded) where a BFS tree would leave the other links disconnected; for as long as
    the links left stay connected; each tree rooted at its own node ``i N / k``.

    Greedy: a graph may hold more disjoint trees than this finds (the count is at most ``floor(links /
    (N - 1))``), never fewer than one for a connected graph.

    Parameters
    ----------
    topology : Topology
        The network.
    seed : int, default 0
        Seed of the random spanning trees.
    limit : int, default MAX_TREES
        Most trees.

    Returns
    -------
    list of numpy.ndarray
        Parent of every node (-1 at the tree's root), one array per tree.

    Raises
    ------
    TopocastError
        If the network is not connected.
    """
    import networkx as nx

    g = nx.Graph(topology.to_networkx())
    g.remove_edges_from(nx.selfloop_edges(g))
    if not nx.is_connected(g):
        raise TopocastError(f"algorithm: {topology.spec} is not connected; a reduction needs every node")
    n = topology.num_nodes
    most = min(limit, g.number_of_edges() // max(1, n - 1))
    rng = np.random.default_rng([seed, 17])
    edge_sets = []
    rest = g.copy()
    first = nx.bfs_tree(rest, 0).to_undirected()
    left = rest.copy()
    left.remove_edges_from(first.edges())
    if most > 1 and nx.is_connected(left) or most == 1:
        edge_sets.append(list(first.edges()))
        rest = left
    while len(edge_sets) < most and nx.is_connected(rest):
        tree = nx.bfs_tree(rest, (len(edge_sets) * n) // most).to_undirected()
        after = rest.copy()
        after.remove_edges_from(tree.edges())
        if len(edge_sets) + 1 < most and not nx.is_connected(after):  # a shallow tree that strands the rest
            tree = nx.Graph(wilson_tree(rest, rng))
        after = rest.copy()
        after.remove_edges_from(tree.edges())
        if len(edge_sets) + 1 < most and not nx.is_connected(after) and edge_sets:
            break
        edge_sets.append(list(tree.edges()))
        rest = after
    parents = []
    for i, edges in enumerate(edge_sets):
        root = i * n // len(edge_sets)
        parent = np.full(n, -1, dtype=np.int64)
        for child, up in nx.bfs_predecessors(nx.Graph(edges), root):
            parent[child] = up
        parents.append(parent)
    return parents


def wilson_tree(graph: Any, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Draw a uniform random spanning tree of a connected graph by Wilson's algorithm.

    Loop-erased random walks: from each node not yet in the tree (in a random order) walk at random,
    remembering only the last exit from every node, until the tree is hit; the remembered path joins the tree.
    The tree is uniform over the graph's spanning trees (Wilson 1996).

    Parameters
    ----------
    graph : networkx.Graph
        A connected graph (nodes ``0 .. N-1``).
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    list of tuple of int
        The tree's ``N - 1`` edges ``(node, next node towards the root)``.
    """
    nodes = sorted(graph.nodes())
    neighbours = {u: sorted(graph.adj[u]) for u in nodes}
    order = [nodes[i] for i in rng.permutation(len(nodes))]
    in_tree = {order[0]}
    exit_to: dict[int, int] = {}
    for start in order[1:]:
        u = start
        while u not in in_tree:
            near = neighbours[u]
            exit_to[u] = near[int(rng.integers(len(near)))]
            u = exit_to[u]
        u = start
        while u not in in_tree:
            in_tree.add(u)
            u = exit_to[u]
    return [(u, exit_to[u]) for u in nodes if u != order[0]]


def _depths_of(parent: np.ndarray) -> np.ndarray:
    depth = np.zeros(len(parent), dtype=np.int64)
    for v in range(len(parent)):
        d, u = 0, v
        while parent[u] >= 0:
            u, d = parent[u], d + 1
        depth[v] = d
    return depth


def disjoint_trees_reduction(topology: Topology, collective: str, message_bytes: float, chunks: int,
                             seed: int) -> Schedule:
    """Plan an allreduce or reduce over edge-disjoint spanning trees, side by side.

    The vector's ``chunks`` blocks are dealt round the trees; each tree reduces its blocks to its root and
    (allreduce) copies them back down, pipelined.

    Parameters
    ----------
    topology : Topology
        The network.
    collective : str
        ``allreduce``, ``reduce-scatter`` or ``reduce``.
    message_bytes : float
        Size of every node's vector in bytes.
    chunks : int
        Blocks per node's share of the vector (pipelining).
    seed : int
        Seed of the random spanning trees.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A reduce-scatter, a network that is not connected, or a vector under one byte, or blocks smaller than a byte.
    """
    if collective == "reduce-scatter":
        raise TopocastError("algorithm: trees reduce to one node each; use a ring or halving reduce-scatter")
    trees = disjoint_spanning_trees(topology, seed)
    _check_chunks(chunks, message_bytes, chunks)
    if chunks < len(trees):
        trees = trees[:chunks]
    n = topology.num_nodes
    roots = np.array([int(np.flatnonzero(p < 0)[0]) for p in trees], dtype=np.int64)
    home = roots[np.arange(chunks) % len(trees)]
    builder = ScheduleBuilder(n, origin=home, collective=collective,
                              targets="all" if collective == "allreduce" else home,
                              message_bytes=message_bytes / chunks,
                              meta={"algorithm": "disjoint-trees", "chunks": chunks, "trees": len(trees)})
    for i, parent in enumerate(trees):
        _tree_phases(builder, parent, _depths_of(parent), np.arange(i, chunks, len(trees), dtype=np.int64),
                     collective == "allreduce")
    return builder.build()


def disjoint_trees_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 8,
                             seed_trees: int = 0) -> Schedule:
    """Plan an allreduce on any connected graph over edge-disjoint spanning trees, pipelined in chunks.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 8
        Blocks per node's share of the vector (pipelining).
    seed_trees : int, default 0
        Seed of the random spanning trees.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not connected, or a vector under one byte, or blocks smaller than a byte.
    """
    return disjoint_trees_reduction(topology, "allreduce", message_bytes, chunks, seed_trees)


def binomial(topology: Topology, collective: str, message_bytes: float) -> Schedule:
    """Plan the binomial-tree reduce to node 0 over the hypercube's dimensions (allreduce: then broadcast back).

    Parameters
    ----------
    topology : Topology
        The network.
    collective : str
        ``allreduce``, ``reduce-scatter`` or ``reduce``.
    message_bytes : float
        Size of every node's vector in bytes.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not a hypercube.
    """
    if topology.family != "hypercube":
        raise TopocastError(f"algorithm: the binomial tree runs on a hypercube, not '{topology.family}'")
    dims = topology.params["n"]
    n = topology.num_nodes
    nodes = np.arange(n, dtype=np.int64)
    builder = ScheduleBuilder(n, origin=np.zeros(1, dtype=np.int64), collective=collective,
                              targets="all" if collective == "allreduce" else np.zeros(1, dtype=np.int64),
                              message_bytes=message_bytes, meta={"algorithm": "binomial"})
    for k in range(dims):
        senders = nodes[((nodes & ((1 << (k + 1)) - 1)) == (1 << k))]
        builder.add(src=senders, dst=senders ^ (1 << k), first=0, count=1, step=k, combine=True)
    if collective == "allreduce":
        for j, k in enumerate(reversed(range(dims))):
            receivers = nodes[((nodes & ((1 << (k + 1)) - 1)) == (1 << k))]
            builder.add(src=receivers ^ (1 << k), dst=receivers, first=0, count=1, step=dims + j, combine=False)
    return builder.build()


def binomial_allreduce(topology: Topology, message_bytes: float = 1024.0) -> Schedule:
    """Plan the binomial reduce to node 0 then binomial broadcast (hypercube): ``2 log2 N`` steps of the whole vector.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not a hypercube.
    """
    return binomial(topology, "allreduce", message_bytes)


def binomial_reduce(topology: Topology, message_bytes: float = 1024.0) -> Schedule:
    """Plan the binomial reduce to node 0 (hypercube): ``log2 N`` steps of the whole vector.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not a hypercube.
    """
    return binomial(topology, "reduce", message_bytes)


def _inorder_tree(n: int, shift: int) -> np.ndarray:
    """Give the parents of an in-order binary tree over positions, nodes shifted.

    Parents of an in-order binary tree over positions ``0..n-1`` (the root in the middle), with node
    ``(position + shift) mod n`` at each position; -1 at the root.
    """
    parent = np.full(n, -1, dtype=np.int64)

    def build(lo: int, hi: int, up: int) -> None:
        if lo >= hi:
            return
        mid = (lo + hi) // 2
        parent[(mid + shift) % n] = -1 if up < 0 else (up + shift) % n
        build(lo, mid, mid)
        build(mid + 1, hi, mid)

    build(0, n, -1)
    return parent


def _depths(parent: np.ndarray) -> np.ndarray:
    depth = np.full(len(parent), -1, dtype=np.int64)
    for v in range(len(parent)):
        chain, u = [], v
        while depth[u] < 0 and parent[u] >= 0:
            chain.append(u)
            u = parent[u]
        if depth[u] < 0:
            depth[u] = 0
        for w in reversed(chain):
            depth[w] = depth[parent[w]] + 1
    return depth


def double_binary_tree_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 2) -> Schedule:
    """Plan the double binary tree allreduce: even chunks on one in-order binary tree, odd chunks on its shift.

    The second tree is the first shifted by one node, so that a node interior in one is a leaf in the other for even
    ``N``.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 2
        Blocks per node's share of the vector (even: half go to each tree).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not complete (every pair linked), or an odd number of chunks.
    """
    if topology.family != "complete":
        raise TopocastError(f"algorithm: the double binary tree needs every pair of nodes linked (a complete "
                            f"graph), not '{topology.family}'")
    n = topology.num_nodes
    if chunks < 2 or chunks % 2:
        raise TopocastError(f"chunks: the double binary tree splits the vector between two trees: an even number "
                            f">= 2, got {chunks}")
    _check_chunks(chunks, message_bytes, chunks)
    builder = ScheduleBuilder(n, origin=np.zeros(chunks, dtype=np.int64), collective="allreduce", targets="all",
                              message_bytes=message_bytes / chunks,
                              meta={"algorithm": "double binary tree", "chunks": chunks})
    for shift, blocks in ((0, np.arange(0, chunks, 2)), (1, np.arange(1, chunks, 2))):
        parent = _inorder_tree(n, shift)
        _tree_phases(builder, parent, _depths(parent), blocks, True)
    return builder.build()


# -- hierarchical ---------------------------------------------------------------------------------------
#: the families whose groups the hierarchical allreduce knows
GROUP_FAMILIES = ("dragonfly", "galaxyfly", "hdn", "gft")


def groups_of(topology: Topology) -> np.ndarray:
    """Give the group of every node of a group network.

    The group of every node: a Dragonfly's or Galaxyfly's supernode (``node // routers per group``), an
    HDN's level-(k-1) cluster (``node // its nodes``; the builder numbers each cluster's nodes together), or
    a fat tree's processors below one level-0 switch (``processor // w``; -1 for a switch, which takes no
    part in a reduction of the processors' vectors).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    numpy.ndarray
        Group of every node (-1: a node in no group, a fat tree's switch).

    Raises
    ------
    TopocastError
        For a network without groups (not a Dragonfly, Galaxyfly or hierarchical dual-net).
    """
    if topology.family == "gft" and topology.meta.get("processors"):
        group = np.full(topology.num_nodes, -1, dtype=np.int64)
        processors = int(topology.meta["processors"])
        group[:processors] = np.arange(processors, dtype=np.int64) // int(topology.params["w"])
        return group
    if topology.family in ("dragonfly", "galaxyfly") and topology.meta.get("routers_per_supernode"):
        size = int(topology.meta["routers_per_supernode"])
    elif topology.family == "hdn" and len(topology.meta.get("level_nodes", ())) >= 2:
        size = int(topology.meta["level_nodes"][-2])
    else:
        raise TopocastError(f"algorithm: the hierarchical allreduce needs a group network "
                            f"({', '.join(GROUP_FAMILIES)}), not '{topology.family}'")
    return np.arange(topology.num_nodes, dtype=np.int64) // size


def hierarchical_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the hierarchical allreduce: inside every group, across the groups, inside again.

    Ring reduce-scatter in every group, ring allreduce of each slice across the groups, ring all-gather in every
    group; relayed where a ring's neighbours are not linked.  On a fat tree the reduction is over the
    processors' vectors (:func:`groups_of`): the switches relay and neither contribute nor end with a sum
    (the schedule's ``part`` says so).

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector (pipelining).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network without groups, or a vector under one byte, or blocks smaller than a byte.
    """
    from .embedding import embed

    group = groups_of(topology)
    members = np.flatnonzero(group >= 0)
    size = int(np.bincount(group[members]).max())
    g = int(group.max()) + 1
    n = len(members)
    _check_chunks(chunks, message_bytes, n * chunks)
    home = np.repeat(members, chunks)
    builder = ScheduleBuilder(topology.num_nodes, origin=home, collective="allreduce", targets="all",
                              message_bytes=message_bytes / len(home),
                              meta={"algorithm": "hierarchical", "chunks": chunks})
    nodes = members.reshape(g, size)                               # row: a group; column: an index in it
    blocks = n * chunks
    slice_blocks = blocks // size                                  # index j of a group ends holding slice j
    step = _ring_slices(builder, nodes, slice_blocks, True, 0)
    across = nodes.T                                               # row: the nodes of one index, one per group
    for j, ring in enumerate(across):
        sub = slice_blocks // g
        base = j * slice_blocks
        for s in range(g - 1):                                     # allreduce of slice j among the groups
            pos = np.arange(g)
            builder.add(src=ring, dst=np.roll(ring, -1), first=base + ((pos - s - 1) % g) * sub, count=sub,
                        step=step + s, combine=True)
        for s in range(g - 1):
            pos = np.arange(g)
            builder.add(src=ring, dst=np.roll(ring, -1), first=base + ((pos - s) % g) * sub, count=sub,
                        step=step + g - 1 + s, combine=False)
    step += 2 * (g - 1)
    _ring_slices(builder, nodes, slice_blocks, False, step)
    plan = embed(topology, builder.build())
    if n == topology.num_nodes:
        return plan
    part = np.full(topology.num_nodes, -1, dtype=np.int64)
    part[members] = 0
    return replace(plan, part=part)


def _ring_slices(builder: ScheduleBuilder, rings: np.ndarray, share: int, reduce: bool, step: int) -> int:
    """Add a ring reduce-scatter or all-gather inside every row of ``rings``.

    A ring reduce-scatter (``reduce``) or all-gather inside every row of ``rings``, position ``j`` ending
    with (or starting from) blocks ``j*share .. (j+1)*share - 1``; returns the next step.
    """
    size = rings.shape[1]
    pos = np.arange(size)
    for s in range(size - 1):
        owner = (pos - s - 1) % size if reduce else (pos - s) % size
        for ring in rings:
            builder.add(src=ring, dst=np.roll(ring, -1), first=owner * share, count=share, step=step + s,
                        combine=reduce)
    return step + size - 1


# -- registration -----------------------------------------------------------------------------------------
CHUNKS = Param("chunks", "int", 1, "blocks per node's share of the vector (pipelining)", minimum=1)
TREE_CHUNKS = Param("chunks", "int", 1, "pipeline stages: the vector is cut into this many blocks", minimum=1)
ROOT = Param("root", "int", 0, "the node the reduction ends at (the tree's root)", minimum=0)

register("allreduce-ring", ring_allreduce, "allreduce",
         "reduce-scatter then all-gather round a Hamiltonian cycle (2(N-1) steps of m/N), relayed where none is "
         "known", params=(CHUNKS,), aliases=("ring allreduce",), paper="Patarasuk and Yuan 2009",
         run_params=REDUCTION_RUN_PARAMS)
register("reduce-scatter-ring", ring_reduce_scatter, "reduce-scatter",
         "N-1 steps round a Hamiltonian cycle (relayed where none is known); node j ends with block j",
         params=(CHUNKS,), paper="Patarasuk and Yuan 2009",
         run_params=REDUCTION_RUN_PARAMS)
register("allreduce-halving-doubling", halving_doubling_allreduce, "allreduce",
         "recursive halving then doubling (Rabenseifner); any N; relayed off hypercubes and complete graphs",
         params=(CHUNKS,), aliases=("rabenseifner",), paper="Thakur, Rabenseifner and Gropp 2005",
         run_params=REDUCTION_RUN_PARAMS)
register("reduce-scatter-halving", halving_reduce_scatter, "reduce-scatter",
         "recursive halving: log2 N steps (N a power of two; else a hand-over step before and copies to the "
         "owners after); node j ends with block j", params=(CHUNKS,),
         paper="Thakur, Rabenseifner and Gropp 2005",
         run_params=REDUCTION_RUN_PARAMS)
register("allreduce-hierarchical", hierarchical_allreduce, "allreduce",
         "ring reduce-scatter in each group, ring allreduce across groups, ring all-gather in each group",
         families=GROUP_FAMILIES, params=(CHUNKS,),
         run_params=REDUCTION_RUN_PARAMS)
register("allreduce-torus", torus_allreduce, "allreduce",
         "ring reduce-scatter per dimension, then the all-gathers in reverse order", families=("ring", "torus"),
         params=(CHUNKS,), aliases=("multidimensional allreduce",), paper="Chan et al. 2007",
         run_params=REDUCTION_RUN_PARAMS)
register("reduce-scatter-torus", torus_reduce_scatter, "reduce-scatter",
         "ring reduce-scatter per dimension", families=("ring", "torus"), params=(CHUNKS,), paper="Chan et al. 2007",
         run_params=REDUCTION_RUN_PARAMS)
register("allreduce-binomial", binomial_allreduce, "allreduce",
         "binomial reduce to node 0 then binomial broadcast", families=("hypercube",),
         ports=PortModel.one_port(),
         run_params=REDUCTION_RUN_PARAMS)
register("reduce-binomial", binomial_reduce, "reduce", "binomial-tree reduce to node 0",
         families=("hypercube",), ports=PortModel.one_port(),
         run_params=REDUCTION_RUN_PARAMS)
register("allreduce-double-binary-tree", double_binary_tree_allreduce, "allreduce",
         "two binary trees, each a leaf where the other is interior, half the chunks on each", families=("complete",),
         params=(Param("chunks", "int", 2, "pipeline stages (even: half on each tree)", minimum=2),),
         paper="Sanders, Speck and Traff 2009",
         run_params=REDUCTION_RUN_PARAMS)
register("allreduce-bfs-tree", bfs_tree_allreduce, "allreduce",
         "any network: reduce up a BFS spanning tree, broadcast down, pipelined in chunks",
         params=(TREE_CHUNKS, ROOT),
         run_params=REDUCTION_RUN_PARAMS, fault_mode="surviving")
register("allreduce-disjoint-trees", disjoint_trees_allreduce, "allreduce",
         "any network: the vector's chunks dealt round edge-disjoint spanning trees (a BFS tree, then random "
         "ones of the links left), each reduced to its root and copied back down, pipelined, side by side",
         params=(Param("chunks", "int", 8, "pipeline stages, dealt round the trees", minimum=1),
                 Param("seed_trees", "int", 0, "seed of the random spanning trees", minimum=0)),
         aliases=("allreduce-bfs-trees",), run_params=REDUCTION_RUN_PARAMS, fault_mode="surviving")
register("reduce-bfs-tree", bfs_tree_reduce, "reduce", "any network: reduce up a BFS spanning tree to the root",
         params=(TREE_CHUNKS, ROOT),
         run_params=REDUCTION_RUN_PARAMS, fault_mode="surviving")


def ring_allreduce_time(n: int, m: float, alpha: float, beta: float, gamma: float = 0.0) -> float:
    """Give the closed-form time of the ring allreduce, one hop per transfer (Patarasuk and Yuan 2009).

    ``2 (N-1) (alpha + m/N beta) + (N-1) m/N gamma``.

    Parameters
    ----------
    n : int
        Nodes.
    m : float
        Vector size in bytes.
    alpha : float
        Start-up time per transfer.
    beta : float
        Time per byte.
    gamma : float, default 0.0
        Time per byte to combine.

    Returns
    -------
    float
        The time.
    """
    return 2 * (n - 1) * (alpha + m / n * beta) + (n - 1) * m / n * gamma


def halving_doubling_time(n: int, m: float, alpha: float, beta: float, gamma: float = 0.0) -> float:
    """Give the closed-form time of recursive halving and doubling on ``N = 2^k`` (Thakur, Rabenseifner and Gropp 2005).

    ``2 log2 N alpha + 2 (N-1)/N m beta + (N-1)/N m gamma``.

    Parameters
    ----------
    n : int
        Nodes.
    m : float
        Vector size in bytes.
    alpha : float
        Start-up time per transfer.
    beta : float
        Time per byte.
    gamma : float, default 0.0
        Time per byte to combine.

    Returns
    -------
    float
        The time.
    """
    return 2 * math.log2(n) * alpha + 2 * (n - 1) / n * m * beta + (n - 1) / n * m * gamma
