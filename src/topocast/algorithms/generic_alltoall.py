"""All-to-all personalized exchange (total exchange) on any connected topology, along shortest paths.

``alltoall-shortest-paths``: message ``t * N + s`` goes from ``s`` to ``t``
(the convention of :mod:`topocast.algorithms.classic_alltoall`) along a
shortest path, store-and-forward (Grama et al., *Introduction to Parallel
Computing*, ch. 4.5, total exchange by routing every message on its own path).

Routing balances link load greedily, one destination at a time: for
destination ``t`` the messages form an in-tree towards ``t`` (a BFS tree of
``t``).  Nodes are taken farthest first; each node ``u`` sends everything it
forwards to ``t`` (its own message and those of the nodes that chose it) to
the neighbour one hop nearer ``t`` whose link ``u -> w`` carries the fewest
messages so far over all destinations routed before (ties to the lower arc
index).  Every message therefore makes exactly ``dist(s, t)`` hops.

Timing: message ``(s, t)`` makes its ``i``-th hop in step ``i`` (from 0), so
the exchange takes ``diameter`` steps; the messages that cross one link
direction in one step travel as one transfer (several id ranges).  The same
transfers carry ``after`` dependencies: each waits for the transfers that
brought its messages to its sender, which is how the event engine times it
(store-and-forward, no global step barrier).  Both engines run the one plan.

Size: the routing is ``O(N (N + arcs))`` in numba, the plan
``O(N^2 * average distance)`` hops in numpy; the event engine keeps an
``N x N^2`` arrival matrix (8 bytes each), so it is limited to a few hundred
nodes, the step engine's bit matrix to a few thousand.

>>> import topocast as tc
>>> r = tc.run("torus:4x5", "alltoall-shortest-paths", engine="step")
>>> r.verified, r.metrics["steps"], r.metrics["lower_bound"]
(True, 4, 4)
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..plans.schedule import Schedule, ScheduleBuilder
from ..sim.models import PortModel
from ..topology.core import Topology
from ..topology.metrics import bfs_into
from .base import register
from .generic_trees import require_connected


@nb.njit(cache=True)
def _route(indptr, indices):
    """``nxt[t, u]``: the arc ``u`` forwards messages for ``t`` on (-1 at ``t``); ``dist[t, u]``; arc loads."""
    n = len(indptr) - 1
    load = np.zeros(len(indices), np.int64)
    nxt = np.empty((n, n), np.int64)
    dist = np.empty((n, n), np.int32)
    weight = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    d = np.empty(n, np.int32)
    for t in range(n):
        bfs_into(indptr, indices, t, d, queue)
        for i in range(n):  # element by element: no slice assignment (numba compiles its error message slowly)
            dist[t, i] = d[i]
            weight[i] = 1
        nxt[t, t] = -1
        for i in range(n - 1, 0, -1):  # farthest first: a node's forwarded weight is final when it chooses
            u = queue[i]
            best = -1
            for e in range(indptr[u], indptr[u + 1]):
                if d[indices[e]] == d[u] - 1 and (best < 0 or load[e] < load[best]):
                    best = e
            nxt[t, u] = best
            load[best] += weight[u]
            weight[indices[best]] += weight[u]
    return nxt, dist, load


@nb.njit(cache=True)
def _hops(indices, nxt, total):
    """Every hop of every message, messages in increasing id (``t * N + s``), hops in path order."""
    n = nxt.shape[0]
    arc = np.empty(total, np.int64)
    step = np.empty(total, np.int64)
    msg = np.empty(total, np.int64)
    h = 0
    for t in range(n):
        for s in range(n):
            u = s
            i = 0
            while u != t:
                e = nxt[t, u]
                arc[h] = e
                step[h] = i
                msg[h] = t * n + s
                h += 1
                i += 1
                u = indices[e]
    return arc, step, msg


@nb.njit(cache=True)
def _group(arc, hop, msg, num_arcs, steps):
    """Combine the hops that cross one arc in one step into one transfer.

    Combine the hops that cross one arc in one step into one transfer (counting sort by step, then arc;
    message ids stay increasing), its ranges (runs of consecutive ids) and its dependencies (the distinct
    transfers that brought its messages: hop ``h - 1`` of the same message).
    """
    total = len(arc)
    nbuckets = steps * num_arcs
    start = np.zeros(nbuckets + 1, np.int64)
    for h in range(total):
        start[hop[h] * num_arcs + arc[h] + 1] += 1
    tid_of = np.full(nbuckets, -1, np.int64)
    ntransfers = 0
    for b in range(nbuckets):
        if start[b + 1] > 0:
            tid_of[b] = ntransfers
            ntransfers += 1
        start[b + 1] += start[b]
    order = np.empty(total, np.int64)
    fill = start[:-1].copy()
    for h in range(total):
        b = hop[h] * num_arcs + arc[h]
        order[fill[b]] = h
        fill[b] += 1
    t_arc = np.empty(ntransfers, np.int64)
    t_step = np.empty(ntransfers, np.int64)
    nranges = np.zeros(ntransfers, np.int64)
    first = np.empty(total, np.int64)
    count = np.empty(total, np.int64)
    after_ptr = np.zeros(ntransfers + 1, np.int64)
    waited = np.empty(total, np.int64)
    seen = np.full(ntransfers, -1, np.int64)
    nr = 0
    nd = 0
    t = -1
    for i in range(total):
        h = order[i]
        b = hop[h] * num_arcs + arc[h]
        if tid_of[b] != t:
            t = tid_of[b]
            t_arc[t] = arc[h]
            t_step[t] = hop[h]
            after_ptr[t] = nd
            first[nr] = msg[h]
            count[nr] = 1
            nr += 1
            nranges[t] += 1
        elif msg[h] == first[nr - 1] + count[nr - 1]:
            count[nr - 1] += 1
        else:
            first[nr] = msg[h]
            count[nr] = 1
            nr += 1
            nranges[t] += 1
        if hop[h] > 0:
            p = tid_of[hop[h - 1] * num_arcs + arc[h - 1]]
            if seen[p] != t:
                seen[p] = t
                waited[nd] = p
                nd += 1
    after_ptr[ntransfers] = nd
    return t_arc, t_step, nranges, first[:nr].copy(), count[:nr].copy(), after_ptr, waited[:nd].copy()


def shortest_path_alltoall(topology: Topology, message_bytes: float = 1.0) -> Schedule:
    """Plan the total exchange on shortest paths with greedy link balancing: ``diameter`` steps.

    One transfer per link direction and step, each waiting (``after``) for the transfers that brought its
    messages.  Works on any connected network.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1.0
        Size of every message in bytes.

    Returns
    -------
    Schedule
        The all-to-all, a dependency schedule.

    Raises
    ------
    TopocastError
        If the network is not connected.
    """
    require_connected(topology, "alltoall-shortest-paths")
    n = topology.num_nodes
    ids = np.arange(n * n, dtype=np.int64)
    builder = ScheduleBuilder(n, origin=ids % n, collective="alltoall", targets=ids // n,
                              message_bytes=message_bytes, meta={"algorithm": "shortest-path total exchange"})
    nxt, dist, load = _route(topology.indptr, topology.indices)
    arc, hop, msg = _hops(topology.indices, nxt, int(dist.sum(dtype=np.int64)))
    del nxt
    if len(arc) == 0:
        builder.add(src=ids[:0], dst=ids[:0], first=ids[:0], step=0)
        return builder.build()
    t_arc, t_step, nranges, first, count, after_ptr, waited = _group(arc, hop, msg, topology.num_arcs,
                                                                     int(hop.max()) + 1)
    del arc, hop, msg
    builder.add_ranges(topology.arc_sources[t_arc], topology.indices[t_arc], nranges, first, count, step=t_step,
                       after=(after_ptr, waited))
    schedule = builder.build()
    schedule.info.update({"max_link_load": int(load.max()),
                          "mean_link_load": float(load.mean()) if len(load) else 0.0})
    return schedule


register(
    "alltoall-shortest-paths", shortest_path_alltoall, "alltoall",
    "total exchange, every message on a shortest path chosen to balance link load, combined per link and step",
    aliases=("shortest-path-alltoall",), ports=PortModel.all_port(), engines=("event", "step"), fault_mode="surviving",
    paper="Grama et al. 4.5 (store-and-forward routing on shortest paths)")
