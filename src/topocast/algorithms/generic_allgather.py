"""All-to-all broadcast (all-gather) on any connected topology, one BFS tree per source.

``allgather-bfs-trees`` (all-port): message ``s`` starts at node ``s`` and
travels down a BFS tree of ``s``, reaching every node ``v`` in step
``dist(s, v)`` (no pipelining), so the all-gather takes ``diameter`` steps,
the step engine's lower bound whenever the doubling bound is smaller.
Grama et al. (*Introduction to Parallel Computing*, ch. 4.2) build all-to-all
broadcast from one spanning tree per source on the classic networks; this is
the same idea with BFS trees on any graph.

Which neighbour forwards: node ``v`` may take message ``s`` from any
neighbour ``u`` with ``dist(s, u) = dist(s, v) - 1`` (that neighbour holds it
one step earlier whatever the others do), so each receiver chooses
independently; the union of the choices for one source is a BFS tree of it.

* ``parents="balanced"`` (default): sources in increasing order, each to the
  eligible in-link that carries the fewest messages into ``v`` in that step so
  far (ties to the lower neighbour index); this evens out the bytes per link
  and step, which is what the all-port time depends on.
* ``parents="lowest"``: always the lowest-index eligible neighbour.

A link direction carries at most one transfer per step: the messages that
cross ``u -> v`` in the same step are combined into one transfer carrying
several ranges of message ids (runs of consecutive sources are merged).

The plan is built in numba: one BFS per node (all pairs, ``N x N`` int32), then
per receiver two passes over the sources (count, then fill), in parallel over
receivers.  Memory: ``4 N^2`` bytes of distances plus ``2 N^2`` of choices.

>>> import topocast as tc
>>> r = tc.run("torus:6x5", "allgather-bfs-trees")
>>> r.verified, r.metrics["steps"], r.metrics["lower_bound"]
(True, 5, 5)
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..registry import Param
from ..sim.models import PortModel
from ..topology.core import Topology
from ..topology.metrics import all_distances
from .base import register
from .generic_trees import require_connected

RULES = ("balanced", "lowest")


@nb.njit(cache=True, parallel=True)
def _choose(indptr, indices, dist, balanced, steps, slot, tcount, rcount):
    """Choose, for every receiver and source, the neighbour it takes that source's message from.

    For every receiver ``v`` and source ``s``: ``slot[v, s]``, the position in ``v``'s adjacency of the
    neighbour it takes ``s`` from (-1 for ``s = v``); ``tcount[k, v]`` / ``rcount[k, v]``: transfers and
    id ranges arriving at ``v`` in step ``k``.
    """
    n = len(indptr) - 1
    for v in nb.prange(n):
        lo = indptr[v]
        deg = indptr[v + 1] - lo
        load = np.zeros((deg, steps), np.int64)
        last = np.full((deg, steps), -2, np.int64)
        for s in range(n):
            if s == v:
                slot[v, s] = -1
                continue
            d = dist[v, s]
            best = -1
            for j in range(deg):
                if dist[indices[lo + j], s] == d - 1 and (
                        best < 0 or (balanced and load[j, d - 1] < load[best, d - 1])):
                    best = j
                    if not balanced:
                        break
            slot[v, s] = best
            k = d - 1
            if load[best, k] == 0:
                tcount[k, v] += 1
            if last[best, k] != s - 1:
                rcount[k, v] += 1
            load[best, k] += 1
            last[best, k] = s


@nb.njit(cache=True, parallel=True)
def _fill(indptr, indices, dist, slot, steps, toff, roff, src, dst, step, nranges, first, count):
    """Write the transfers (step-major, then receiver, then neighbour position) and their ranges."""
    n = len(indptr) - 1
    for v in nb.prange(n):
        lo = indptr[v]
        deg = indptr[v + 1] - lo
        used = np.zeros((deg, steps), np.int64)
        for s in range(n):
            if s != v:
                used[slot[v, s], dist[v, s] - 1] += 1
        tid = np.full((deg, steps), -1, np.int64)
        for k in range(steps):
            t = toff[k, v]
            for j in range(deg):
                if used[j, k] > 0:
                    tid[j, k] = t
                    src[t] = indices[lo + j]
                    dst[t] = v
                    step[t] = k
                    nranges[t] = 0
                    t += 1
        # ranges: each transfer's ranges are contiguous; a step's transfers at v follow each other, so a
        # transfer's ranges start after those of the transfers before it at (k, v) -- count them first
        for s in range(n):
            if s != v:
                j = slot[v, s]
                k = dist[v, s] - 1
                if s == 0 or slot[v, s - 1] != j or s - 1 == v or dist[v, s - 1] != dist[v, s]:
                    nranges[tid[j, k]] += 1
        start = np.full((deg, steps), -1, np.int64)
        for k in range(steps):
            r = roff[k, v]
            for j in range(deg):
                if tid[j, k] >= 0:
                    start[j, k] = r
                    r += nranges[tid[j, k]]
        pos = np.full((deg, steps), -1, np.int64)
        for s in range(n):
            if s != v:
                j = slot[v, s]
                k = dist[v, s] - 1
                if pos[j, k] >= 0 and first[pos[j, k]] + count[pos[j, k]] == s:
                    count[pos[j, k]] += 1
                else:
                    pos[j, k] = start[j, k] if pos[j, k] < 0 else pos[j, k] + 1
                    first[pos[j, k]] = s
                    count[pos[j, k]] = 1


def bfs_trees_allgather(topology: Topology, parents: str = "balanced", message_bytes: float = 1.0) -> Schedule:
    """Plan the all-port all-gather along one BFS tree per source, combined per link and step: ``diameter`` steps.

    Works on any connected network.

    Parameters
    ----------
    topology : Topology
        The network.
    parents : str, default "balanced"
        How a node picks its parent among the neighbours one hop nearer a source: ``balanced`` spreads the
        load over the links, ``lowest`` takes the lowest index.
    message_bytes : float, default 1.0
        Size of every node's message in bytes.

    Returns
    -------
    Schedule
        The all-gather.

    Raises
    ------
    TopocastError
        An unknown ``parents`` rule, a network that is not connected, or a node with over 32,767 links.
    """
    require_connected(topology, "allgather-bfs-trees")
    if parents not in RULES:
        raise TopocastError(f"parents: must be one of {', '.join(RULES)}, got '{parents}'")
    n = topology.num_nodes
    nodes = np.arange(n, dtype=np.int64)
    builder = ScheduleBuilder(n, origin=nodes, collective="allgather", message_bytes=message_bytes,
                              meta={"algorithm": "BFS-tree all-gather", "parents": parents})
    if n < 2:
        builder.add(src=nodes[:0], dst=nodes[:0], first=nodes[:0], step=0)
        return builder.build()
    if topology.port_degree.max() >= 2**15:
        raise TopocastError(f"allgather-bfs-trees: a node of {topology.spec} has over 32,767 links")
    dist = all_distances(topology)
    steps = int(dist.max())
    slot = np.empty((n, n), np.int16)
    tcount = np.zeros((steps, n), np.int64)
    rcount = np.zeros((steps, n), np.int64)
    _choose(topology.indptr, topology.indices, dist, parents == "balanced", steps, slot, tcount, rcount)

    def offsets(counts):
        flat = counts.ravel()
        out = np.zeros(len(flat), np.int64)
        np.cumsum(flat[:-1], out=out[1:])
        return out.reshape(counts.shape), int(flat.sum())

    toff, ntransfers = offsets(tcount)
    roff, nranges_total = offsets(rcount)
    src, dst, step, nranges = (np.empty(ntransfers, np.int64) for _ in range(4))
    first, count = np.empty(nranges_total, np.int64), np.empty(nranges_total, np.int64)
    _fill(topology.indptr, topology.indices, dist, slot, steps, toff, roff, src, dst, step, nranges, first, count)
    del dist, slot
    builder.add_ranges(src, dst, nranges, first, count, step=step)
    schedule = builder.build()
    schedule.info.update({"parents": parents})
    return schedule


register(
    "allgather-bfs-trees", bfs_trees_allgather, "allgather",
    "all-to-all broadcast along one BFS tree per source, combined per link and step, all-port, diameter steps",
    params=(Param("parents", "str", "balanced", "which eligible neighbour forwards a message: 'balanced' "
                  "(least-loaded link into the receiver in that step) or 'lowest' (lowest index)",
                  choices=RULES),),
    aliases=("bfs-allgather",), ports=PortModel.all_port(), fault_mode="surviving",
    paper="Grama et al. 4.2 (one spanning tree per source)")
