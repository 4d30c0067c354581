"""Logical schedules on a physical network: every transfer between non-neighbours routed hop by hop.

A collective algorithm is often written for ranks that may all talk to each other (a ring in rank order,
recursive halving between ranks ``2^k`` apart).  :func:`embed` turns such a *logical* schedule, one step per
logical round, into one whose every transfer is a link of the topology: a transfer between non-neighbours
becomes a chain of hops along a shortest path (the next hop toward the destination is the lowest-index
neighbour one hop nearer, as breadth-first search from the destination finds it), each hop after the first
*forwarding* the payload of the one before (``Schedule.forward``), so the nodes on the way relay it and keep
none of it.

Steps keep the logical round's meaning (every transfer of a round reads the partials as the round before left
them): a round starts after every hop of the round before has landed; the first hops of relayed transfers
(reads) take the first free steps of their links; the direct transfers of the round all take one step ``R``,
the first at or after every relayed read at which their links are free; every hop that delivers into a partial
(a direct transfer, the last hop of a relayed one) lands at or after ``R``, so after every read of the round;
relay hops take the first step after their predecessor at which their link is free.  One transfer per link
direction per step (the all-port rule).
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule
from ..topology.core import Topology


def next_hops(topology: Topology, targets: np.ndarray) -> dict[int, np.ndarray]:
    """Give, per target, the next hop toward it from every node.

    Parameters
    ----------
    topology : Topology
        The network, connected.
    targets : numpy.ndarray
        Target nodes.

    Returns
    -------
    dict of int to numpy.ndarray
        ``toward[u]`` per target: the lowest-index neighbour of ``u`` one hop nearer (-1 at the target).

    Raises
    ------
    TopocastError
        If the network is not connected.
    """
    from .generic_trees import bfs_tree

    out = {}
    for d in np.unique(targets).tolist():
        dist, parent, _ = bfs_tree(topology, int(d))
        if np.any(dist < 0):
            raise TopocastError(f"algorithm: {topology.spec} is not connected; every rank must reach every other")
        out[int(d)] = parent
    return out


def embed(topology: Topology, logical: Schedule) -> Schedule:
    """Map a logical reduction schedule onto the links of a network, relaying where ranks are not neighbours.

    The physical schedule of ``logical`` (a reduction with a step per transfer) on ``topology``.

    Parameters
    ----------
    topology : Topology
        The network; must be connected.
    logical : Schedule
        Transfers between any two nodes, one logical round per step.

    Returns
    -------
    Schedule
        Every transfer one link; relayed hops forward their payload; ``meta`` says how many logical transfers
        were relayed and over how many hops.

    Raises
    ------
    TopocastError
        When the schedule is not a step-based reduction or the network is not connected.
    """
    if not logical.is_reduction or logical.step is None:
        raise TopocastError("embed: needs a reduction with a step per transfer")
    links = set(zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=True))
    far = [t for t in range(logical.num_transfers) if (int(logical.src[t]), int(logical.dst[t])) not in links]
    toward = next_hops(topology, logical.dst[far]) if far else {}
    out = _Hops()
    base = 0
    for k in range(logical.num_steps):
        base = _round(out, logical, np.flatnonzero(logical.step == k).tolist(), toward, base, links) + 1
    meta = dict(logical.meta, relayed=len(far), logical_transfers=int(logical.num_transfers),
                hops=len(out.src))
    return out.schedule(logical, meta)


class _Hops:
    """The physical transfers as they are made: arrays in lists, and the steps each link is taken."""

    def __init__(self) -> None:
        self.src: list[int] = []
        self.dst: list[int] = []
        self.step: list[int] = []
        self.forward: list[int] = []
        self.combine: list[bool] = []
        self.ranges: list[tuple[int, int]] = []     # (first range entry, count) of the logical transfer
        self.busy: dict[tuple[int, int], set[int]] = {}

    def add(self, u: int, v: int, step: int, forward: int, combine: bool, ranges: tuple[int, int]) -> int:
        self.src.append(u)
        self.dst.append(v)
        self.step.append(step)
        self.forward.append(forward)
        self.combine.append(combine)
        self.ranges.append(ranges)
        self.busy.setdefault((u, v), set()).add(step)
        return len(self.src) - 1

    def free_step(self, u: int, v: int, earliest: int) -> int:
        taken = self.busy.get((u, v), ())
        while earliest in taken:
            earliest += 1
        return earliest

    def schedule(self, logical: Schedule, meta: dict) -> Schedule:
        entries = np.concatenate([np.arange(a, a + c) for a, c in self.ranges]) if self.ranges else \
            np.zeros(0, dtype=np.int64)
        counts = np.array([c for _, c in self.ranges], dtype=np.int64)
        ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        from dataclasses import replace

        return replace(logical, src=np.asarray(self.src, np.int64), dst=np.asarray(self.dst, np.int64),
                       step=np.asarray(self.step, np.int64), range_ptr=ptr,
                       range_first=logical.range_first[entries], range_count=logical.range_count[entries],
                       combine=np.asarray(self.combine, bool), forward=np.asarray(self.forward, np.int64),
                       after_ptr=None, after_ids=None, meta=meta)


def _round(out: _Hops, logical: Schedule, transfers: list[int], toward: dict, base: int, links: set) -> int:
    """Add one logical round's hops.

    Add one logical round's hops from step ``base`` on (the rule in the module docstring); returns its
    last step.
    """
    near = [t for t in transfers if (int(logical.src[t]), int(logical.dst[t])) in links]
    far = [t for t in transfers if (int(logical.src[t]), int(logical.dst[t])) not in links]
    paths = {t: _path(int(logical.src[t]), int(logical.dst[t]), toward) for t in far}
    first = {t: out.free_step(paths[t][0], paths[t][1], base) for t in far}
    arcs = [(int(logical.src[t]), int(logical.dst[t])) for t in near]
    if len(set(arcs)) != len(arcs):
        raise TopocastError("embed: two transfers of one round on one link; split the round")
    reads = max(first.values(), default=base)
    common = reads
    while any(common in out.busy.get(arc, ()) for arc in arcs):
        common += 1
    last = common
    for t, arc in zip(near, arcs, strict=True):
        out.add(*arc, common, -1, _adds(logical, t), _ranges(logical, t))
    for t in far:
        last = max(last, _relay(out, logical, t, paths[t], first[t], common))
    return last


def _adds(logical: Schedule, t: int) -> bool:
    """Whether logical transfer ``t`` adds its partials to the receiver's (a reduction's ``combine``)."""
    if logical.combine is None:  # never: embed takes reductions only
        raise TopocastError("embed: needs a reduction")
    return bool(logical.combine[t])


def _ranges(logical: Schedule, t: int) -> tuple[int, int]:
    return int(logical.range_ptr[t]), int(logical.range_ptr[t + 1] - logical.range_ptr[t])


def _path(u: int, d: int, toward: dict) -> list[int]:
    parent = toward[d]
    path = [u]
    while path[-1] != d:
        path.append(int(parent[path[-1]]))
    return path


def _relay(out: _Hops, logical: Schedule, t: int, path: list[int], first: int, writes_from: int) -> int:
    """Add the hops of one relayed transfer.

    The hops of relayed transfer ``t`` along ``path``: the first at step ``first``, relays after their
    predecessors, the last (which delivers) at or after ``writes_from``; returns the last hop's step.
    """
    prev, step = -1, first
    combine = _adds(logical, t)
    for j in range(len(path) - 1):
        u, v = path[j], path[j + 1]
        last = j == len(path) - 2
        if j:
            step = out.free_step(u, v, max(step + 1, writes_from) if last else step + 1)
        prev = out.add(u, v, step, prev, combine if last else False, _ranges(logical, t))
    return step
