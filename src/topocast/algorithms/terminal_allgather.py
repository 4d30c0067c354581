"""All-gather among the routers that hold terminals, on networks where only some do (fat trees, Dragonfly+).

``allgather-terminal-routers`` (all-port): one message per terminal router
``s`` (a router with terminals, :func:`topocast.topology.terminals.terminal_counts`),
needed by every other terminal router; the other routers only relay.  Each
message travels down a BFS tree of its origin pruned to the routers that
need it: the farthest receivers choose first, each taking the message from a
neighbour one hop closer to ``s`` (the one whose link into it carries the
fewest messages in that step so far, ties to the lower index), and that
neighbour then needs the message too.  Every receiver gets it in step
``dist(s, v)``; the messages crossing a link in one step are combined into
one transfer (runs of consecutive message ids as ranges).  On a network where
every router holds terminals this is the BFS-tree all-gather
(``allgather-bfs-trees``).  Collective ``custom``: message ``i`` starts at
the ``i``-th terminal router and targets every other one.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..sim.models import PortModel
from ..topology.core import Topology
from ..topology.metrics import all_distances
from .base import register
from .generic_trees import require_connected


@nb.njit(cache=True)
def _trees(indptr, indices, dist, hosts, steps, out_key, out_msg):
    """Record every delivery of the pruned BFS trees.

    Records ``(key, message)`` of every delivery: ``key = (step * n + receiver) * width + slot`` of the
    receiver's in-link; returns how many.
    """
    n = len(indptr) - 1
    width = 0
    for v in range(n):
        width = max(width, indptr[v + 1] - indptr[v])
    load = np.zeros((n, width, steps), np.int64)
    need = np.zeros(n, np.bool_)
    count = np.zeros(steps + 1, np.int64)
    order = np.empty(n, np.int64)
    start = np.empty(steps + 2, np.int64)
    total = 0
    for i in range(len(hosts)):
        s = hosts[i]
        row = dist[s]
        count[:] = 0
        for v in range(n):
            count[row[v]] += 1
        start[0] = 0
        for d in range(steps + 1):
            start[d + 1] = start[d] + count[d]
        fill = start[:steps + 1].copy()
        for v in range(n):
            order[fill[row[v]]] = v
            fill[row[v]] += 1
        need[:] = False
        for j in range(len(hosts)):
            need[hosts[j]] = True
        need[s] = False
        for d in range(steps, 0, -1):
            for q in range(start[d], start[d + 1]):
                v = order[q]
                if not need[v]:
                    continue
                lo = indptr[v]
                best = -1
                for j in range(indptr[v + 1] - lo):
                    if row[indices[lo + j]] == d - 1 and (best < 0 or load[v, j, d - 1] < load[v, best, d - 1]):
                        best = j
                load[v, best, d - 1] += 1
                u = indices[lo + best]
                if u != s:
                    need[u] = True
                out_key[total] = ((d - 1) * n + v) * width + best
                out_msg[total] = i
                total += 1
    return total, width


def terminal_router_allgather(topology: Topology, message_bytes: float = 1.0) -> Schedule:
    """Plan the all-port all-gather among the routers with terminals, along pruned BFS trees.

    See the module docstring.

    Parameters
    ----------
    topology : Topology
        The network, connected, with terminals on at least two routers.
    message_bytes : float, default 1.0
        Size of every message in bytes.

    Returns
    -------
    Schedule
        The all-gather; its messages are the terminal routers'.

    Raises
    ------
    TopocastError
        If the network is not connected or fewer than two routers have terminals.
    """
    from ..topology.terminals import terminal_counts

    require_connected(topology, "allgather-terminal-routers")
    hosts = np.flatnonzero(terminal_counts(topology) > 0).astype(np.int64)
    h, n = len(hosts), topology.num_nodes
    if h < 2:
        raise TopocastError(f"allgather-terminal-routers: {topology.spec} has {h} router with terminals; "
                            "an all-gather needs two")
    mask = ~np.eye(h, dtype=bool)
    ids = np.broadcast_to(hosts, (h, h))[mask]
    ptr = np.arange(h + 1, dtype=np.int64) * (h - 1)
    builder = ScheduleBuilder(n, origin=hosts, collective="custom", targets=(ptr, ids.astype(np.int64)),
                              message_bytes=message_bytes,
                              meta={"algorithm": "all-gather among terminal routers, pruned BFS trees"})
    dist = all_distances(topology)
    steps = int(dist[hosts].max())
    capacity = h * n
    key, msg = np.empty(capacity, np.int64), np.empty(capacity, np.int64)
    total, width = _trees(topology.indptr, topology.indices, dist, hosts, steps, key, msg)
    del dist
    key, msg = key[:total], msg[:total]
    order = np.lexsort((msg, key))
    key, msg = key[order], msg[order]
    new_transfer = np.ones(total, dtype=bool)
    new_transfer[1:] = key[1:] != key[:-1]
    new_range = new_transfer.copy()
    new_range[1:] |= msg[1:] != msg[:-1] + 1
    range_start = np.flatnonzero(new_range)
    first = msg[range_start]
    count = np.diff(np.append(range_start, total))
    transfer_of_range = np.cumsum(new_transfer)[range_start] - 1
    nranges = np.bincount(transfer_of_range, minlength=int(new_transfer.sum()))
    tkey = key[new_transfer]
    slot, rest = tkey % width, tkey // width
    receiver, step = rest % n, rest // n
    src = topology.indices[topology.indptr[receiver] + slot]
    builder.add_ranges(src, receiver, nranges, first, count, step=step)
    return builder.build()  # (its messages are the terminal routers: the run's 'messages' metric)


register(
    "allgather-terminal-routers", terminal_router_allgather, "custom",
    "all-gather among the routers that hold terminals (others relay), pruned BFS trees, all-port",
    ports=PortModel.all_port(), engines=("step", "event"),
    paper="Grama et al. 4.2 (one spanning tree per source), restricted to the terminal routers")
