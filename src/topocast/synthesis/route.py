"""Total exchange (all-to-all) synthesis: adaptive shortest-path routing with per-link aggregation.

Each chunk travels a shortest path to its one target.  At every node it joins
the queue of the next hop (one hop closer to its target) whose link direction
is expected to free first, counting what is already queued there: the
minimum-backlog choice of adaptive routing, applied at synthesis time, as in
the link-chunk matching of TACOS (Won et al., MICRO 2024).  A free link sends
its whole queue as one transfer (one start-up for many chunks), which is what
the store-and-forward cost model rewards when the start-up dominates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from ..infra.heap import pop, push
from ..sim.models import link_time
from ..topology.metrics import all_distances
from .greedy import TimedTransfers, channels

if TYPE_CHECKING:
    from ..sim.models import CostModel, PortModel
    from ..topology.core import Topology

_INF = np.inf


@nb.njit(cache=True)
def _enqueue(c: int, u: int, t: float, target: np.ndarray, dist: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
             channel: np.ndarray, link_free: np.ndarray, qlen: np.ndarray, head: np.ndarray, tail: np.ndarray,
             nxt: np.ndarray, cost_per_chunk: float) -> int:
    """Put chunk ``c`` (at node ``u``) into the queue of its best next-hop arc; returns the arc."""
    d = target[c]
    best = -1
    best_t = _INF
    for e in range(indptr[u], indptr[u + 1]):
        v = indices[e]
        if dist[v, d] != dist[u, d] - 1:
            continue
        est = max(link_free[channel[e]], t) + (qlen[e] + 1) * cost_per_chunk
        if est < best_t:
            best_t = est
            best = e
    nxt[c] = -1
    if tail[best] >= 0:
        nxt[tail[best]] = c
    else:
        head[best] = c
    tail[best] = c
    qlen[best] += 1
    return best


@nb.njit(cache=True)
def _route(indptr: np.ndarray, indices: np.ndarray, channel: np.ndarray, arc_src: np.ndarray, dist: np.ndarray,
           origin: np.ndarray, target: np.ndarray, startup: float, per_byte: float, per_hop: float, chunk_bytes: float,
           ports: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    n = len(indptr) - 1
    one_port = ports > 0
    arcs = len(indices)
    nc = len(origin)
    head = np.full(arcs, -1, np.int64)
    tail = np.full(arcs, -1, np.int64)
    qlen = np.zeros(arcs, np.int64)
    nxt = np.full(nc, -1, np.int64)
    pending = np.full(arcs, _INF)
    link_free = np.zeros(channel.max() + 1 if arcs else 1)
    node_send = np.zeros((n, max(1, ports)))   # when each send (receive) port of a node frees
    node_recv = np.zeros((n, max(1, ports)))
    tsrc = np.empty(max(arcs, 16), np.int64)
    tdst = np.empty(max(arcs, 16), np.int64)
    tstart = np.empty(max(arcs, 16), np.float64)
    tptr = np.zeros(max(arcs, 16) + 1, np.int64)
    carried = np.empty(max(nc, 16), np.int64)
    ncar = 0
    nt = 0
    # events (time, kind, id) in the one heap: a transfer's arrival (kind 0, its index) before an arc's turn
    # to send (kind 1, the arc) at the same time
    _ARRIVAL, _SEND = np.int64(0), np.int64(1)
    hkey = np.empty(arcs + 16, np.float64)
    hitem = np.empty((arcs + 16, 2), np.int64)
    hsize = np.int64(0)
    for c in range(nc):
        if origin[c] != target[c]:
            e = _enqueue(c, origin[c], 0.0, target, dist, indptr, indices, channel, link_free, qlen, head, tail,
                         nxt, link_time(startup, per_byte, chunk_bytes))
            if pending[e] > 0.0:
                pending[e] = 0.0
                hkey, hitem = push(hkey, hitem, hsize, np.float64(0.0), _SEND, np.int64(e))
                hsize += 1
    makespan = 0.0
    while hsize:
        t, kind, ident = pop(hkey, hitem, hsize)
        hsize -= 1
        if kind == _ARRIVAL:
            v = tdst[ident]
            for k in range(tptr[ident], tptr[ident + 1]):
                c = carried[k]
                if target[c] != v:
                    e = _enqueue(c, v, t, target, dist, indptr, indices, channel, link_free, qlen, head, tail,
                                 nxt, link_time(startup, per_byte, chunk_bytes))
                    if t < pending[e]:
                        pending[e] = t
                        hkey, hitem = push(hkey, hitem, hsize, t, _SEND, np.int64(e))
                        hsize += 1
            continue
        e = ident
        if t != pending[e]:
            continue
        pending[e] = _INF
        if qlen[e] == 0:
            continue
        u = arc_src[e]
        v = indices[e]
        begin = link_free[channel[e]]
        slot_u = slot_v = 0
        if one_port:
            slot_u = int(np.argmin(node_send[u]))
            slot_v = int(np.argmin(node_recv[v]))
            begin = max(begin, node_send[u, slot_u], node_recv[v, slot_v])
        if begin > t:
            pending[e] = begin
            hkey, hitem = push(hkey, hitem, hsize, begin, _SEND, np.int64(e))
            hsize += 1
            continue
        if nt + 1 >= len(tsrc):
            tsrc = np.concatenate((tsrc, np.empty(len(tsrc), np.int64)))
            tdst = np.concatenate((tdst, np.empty(len(tdst), np.int64)))
            tstart = np.concatenate((tstart, np.empty(len(tstart), np.float64)))
            tptr = np.concatenate((tptr, np.zeros(len(tptr), np.int64)))
        if ncar + qlen[e] > len(carried):
            carried = np.concatenate((carried, np.empty(max(len(carried), qlen[e]), np.int64)))
        lo = ncar
        c = head[e]
        while c >= 0:
            carried[ncar] = c
            ncar += 1
            c = nxt[c]
        carried[lo:ncar].sort()
        end = t + link_time(startup, per_byte, qlen[e] * chunk_bytes)
        head[e] = -1
        tail[e] = -1
        qlen[e] = 0
        tsrc[nt] = u
        tdst[nt] = v
        tstart[nt] = t
        nt += 1
        tptr[nt] = ncar
        link_free[channel[e]] = end
        if one_port:
            node_send[u, slot_u] = end
            node_recv[v, slot_v] = end
        hkey, hitem = push(hkey, hitem, hsize, end + per_hop, _ARRIVAL, np.int64(nt - 1))
        hsize += 1
        makespan = max(makespan, end + per_hop)
    return tsrc[:nt], tdst[:nt], tstart[:nt], tptr[:nt + 1], carried[:ncar], makespan


def _ranges(tptr: np.ndarray, carried: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted chunk ids per transfer -> ranges of consecutive ids (CSR)."""
    if len(carried) == 0:
        return np.zeros(len(tptr), np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(len(tptr) - 1), np.diff(tptr))
    starts = np.ones(len(carried), dtype=bool)
    starts[1:] = (carried[1:] != carried[:-1] + 1) | (owner[1:] != owner[:-1])
    first_idx = np.flatnonzero(starts)
    counts = np.diff(np.append(first_idx, len(carried)))
    ptr = np.zeros(len(tptr), np.int64)
    np.cumsum(np.bincount(owner[first_idx], minlength=len(tptr) - 1), out=ptr[1:])
    return ptr, carried[first_idx], counts


def route(topology: Topology, origin: np.ndarray, target: np.ndarray, cost: CostModel, ports: PortModel,
          chunk_bytes: float) -> TimedTransfers:
    """Greedy total-exchange plan: every chunk from ``origin[c]`` to ``target[c]`` on shortest paths."""
    out = _route(topology.indptr, topology.indices, channels(topology, ports.duplex),
                 topology.arc_sources.astype(np.int64), all_distances(topology), np.asarray(origin, np.int64),
                 np.asarray(target, np.int64), float(cost.startup), float(cost.per_byte), float(cost.per_hop),
                 float(chunk_bytes), int(ports.ports or 0))
    tsrc, tdst, tstart, tptr, carried, makespan = out
    ptr, first, count = _ranges(tptr, carried)
    return TimedTransfers(tsrc, tdst, tstart, ptr, first, count, makespan)
