"""Greedy link-chunk matching in continuous time, aware of the event engine's cost model.

This follows the idea of TACOS (Won et al., "TACOS: Topology-Aware Collective
Algorithm Synthesizer", MICRO 2024): walk a time-expanded network and, each
time a link direction becomes free, match it with chunks its sender holds and
its receiver still lacks.  We keep time continuous instead of in slots and use
our own store-and-forward costs: a transfer of ``k`` chunks holds its link
direction for ``startup + k * chunk_bytes * per_byte`` (the one cost formula,
:func:`topocast.sim.models.link_time`) and arrives ``per_hop`` later, exactly
what :mod:`topocast.sim.event` charges.  Because the start-up
dominates small packets, a free link carries *everything* its sender holds
that its receiver neither holds nor has on the way (aggregation), up to
``cap`` chunks; the lowest chunk ids go first, so a capped broadcast pipelines
its chunks in order (the pipelined-tree idea of Blink, Wang et al. MLSys 2020).

Under a limit of ``P`` ports (the event engine lets a node have ``P`` sends
and ``P`` receipts in flight) a node with a free send port sends to the
neighbour with a free link and receive port that lacks the most of what it
holds (ties: lowest port label, then lowest neighbour), again while a send port
is free; with ``P = 1`` this rediscovers recursive doubling on a hypercube.

Total exchange (``alltoall``) uses per-link queues instead: a chunk at node
``u`` bound for ``d`` joins the queue of the shortest-path next hop whose link
frees first, and a free link sends its whole queue.

Every function here returns a plan (transfers with their start times and chunk
ranges); :func:`topocast.synthesis.synthesize` turns it into a
:class:`~topocast.plans.schedule.Schedule` and verifies it on the event engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from ..infra.bits import popcount
from ..infra.heap import grow, pop, push
from ..sim.models import link_time

if TYPE_CHECKING:
    from ..sim.models import CostModel, PortModel
    from ..topology.core import Topology

_INF = np.inf


@dataclass
class TimedTransfers:
    """What a synthesis planner returns: transfers in order of start time, before they become a Schedule.

    (Not a plan of the run path: :func:`topocast.synthesis.to_schedule` turns it into a
    :class:`~topocast.plans.schedule.Schedule`.)

    Attributes
    ----------
    src, dst : numpy.ndarray
        Endpoints of each transfer.
    start : numpy.ndarray
        Its start time in seconds.
    range_ptr, range_first, range_count : numpy.ndarray
        The chunk ranges it carries (CSR).
    makespan : float
        The planner's own estimate of the last arrival.
    """

    src: np.ndarray
    dst: np.ndarray
    start: np.ndarray
    range_ptr: np.ndarray
    range_first: np.ndarray
    range_count: np.ndarray
    makespan: float


@nb.njit(cache=True)
def _lacks(held: np.ndarray, known: np.ndarray, u: int, v: int) -> int:
    total = 0
    for w in range(held.shape[1]):
        total += popcount(held[u, w] & ~known[v, w])
    return total


# transfer columns of ``ti``: sender, receiver, next transfer into the same receiver, arrived (0/1)
_SRC, _DST, _NEXT, _ARRIVED = 0, 1, 2, 3
# columns of ``tf``: start, arrival
_START, _END = 0, 1


@nb.njit(cache=True)
def _flood(indptr: np.ndarray, indices: np.ndarray, channel: np.ndarray, held: np.ndarray, startup: float,
           per_byte: float, per_hop: float, chunk_bytes: float, ports: int, cap: int, wait: float
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """The flooding greedy for broadcast and all-gather (every node needs every chunk); ``ports``: 0 for
    all-port, else the sends (and receipts) a node has in flight at once."""
    n, words = held.shape
    one_port = ports > 0
    known = held.copy()
    top = 0
    for a in range(len(channel)):       # (loops, here and for the makespan: numba's array max compiles slowly)
        top = max(top, channel[a])
    link_free = np.zeros(top + 1)
    node_send = np.zeros((n, max(1, ports)))   # when each send (receive) port of a node frees
    node_recv = np.zeros((n, max(1, ports)))
    pending = np.full(n, _INF)
    in_head = np.full(n, -1, np.int64)
    ti = np.empty((1024, 4), np.int64)
    tf = np.empty((1024, 2), np.float64)
    tp = np.zeros(1025, np.int64)  # chunk ranges of transfer k: rr[tp[k]:tp[k + 1]]
    rr = np.empty((4096, 2), np.int64)  # first chunk, count
    # counters and event kinds as typed values: a literal (``nt = 0``) passed to a compiled helper compiles
    # that helper once more for the literal
    nt = np.int64(0)
    hkey = np.empty(n + 1024, np.float64)
    hitem = np.empty((n + 1024, 2), np.int64)
    hsize = np.int64(0)
    _ARRIVAL, _WAKE = np.int64(0), np.int64(1)
    for u in range(n):
        pending[u] = 0.0
        hkey, hitem = push(hkey, hitem, hsize, np.float64(0.0), _WAKE, np.int64(u))
        hsize += 1
    diff = np.empty(words, np.uint64)
    while hsize:
        t, kind, ident = pop(hkey, hitem, hsize)
        hsize -= 1
        if kind == 0:  # arrival of transfer ident: its chunks are held at its receiver
            v = ti[ident, _DST]
            ti[ident, _ARRIVED] = 1
            for r in range(tp[ident], tp[ident + 1]):
                for c in range(rr[r, 0], rr[r, 0] + rr[r, 1]):
                    held[v, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            if t < pending[v]:
                pending[v] = t
                hkey, hitem = push(hkey, hitem, hsize, t, _WAKE, v)
                hsize += 1
            continue
        u = ident
        if t != pending[u]:
            continue  # stale wake
        pending[u] = _INF
        retry = _INF
        scan = indptr[u]
        while True:
            # the next transfer of u: every free neighbour lacking chunks (all-port), or, while u has a free
            # send port, the neighbour with a free link and receive port lacking the most
            e = -1
            if one_port:
                slot_u = np.argmin(node_send[u])
                if node_send[u, slot_u] > t:
                    retry = min(retry, node_send[u, slot_u])
                    break
                best_cnt = 0
                for a in range(indptr[u], indptr[u + 1]):
                    v = indices[a]
                    cnt = _lacks(held, known, u, v)
                    if cnt == 0:
                        continue
                    free = max(link_free[channel[a]], node_recv[v].min())
                    if free > t:
                        retry = min(retry, free)
                    elif cnt > best_cnt:
                        e = a
                        best_cnt = cnt
            else:
                while scan < indptr[u + 1] and e < 0:
                    a = scan
                    scan += 1
                    cnt = _lacks(held, known, u, indices[a])
                    if cnt == 0:
                        continue
                    free = link_free[channel[a]]
                    if free > t:
                        retry = min(retry, free)
                        continue
                    e = a
            if e < 0:
                break
            v = indices[e]
            # the transfer u -> v: what v lacks (lowest ids first, at most cap), starting at t or, when chunks
            # that v lacks reach u within wait, when the last of them lands
            for w in range(words):
                diff[w] = held[u, w] & ~known[v, w]
            start = _add_soon(u, v, t, wait, known, diff, in_head, ti, tf, tp, rr) if wait > 0 else t
            taken = _cap(diff, cap)
            ti, tf, tp = grow(ti, nt), grow(tf, nt), grow(tp, nt + 1)
            nr = tp[nt]
            run_first: int | np.int64 = np.int64(-1)
            run_len: int | np.int64 = np.int64(0)
            for w in range(words):
                d = diff[w]
                if d == 0:
                    continue
                known[v, w] |= d
                for b in range(64):
                    if d & (np.uint64(1) << np.uint64(b)):
                        c = w * 64 + b
                        if run_len > 0 and c == run_first + run_len:
                            run_len += 1
                            continue
                        if run_len > 0:
                            rr = grow(rr, nr)
                            rr[nr, 0], rr[nr, 1] = run_first, run_len
                            nr += 1
                        run_first, run_len = c, 1
            if run_len > 0:
                rr = grow(rr, nr)
                rr[nr, 0], rr[nr, 1] = run_first, run_len
                nr += 1
            end = start + link_time(startup, per_byte, taken * chunk_bytes)
            ti[nt, _SRC], ti[nt, _DST], ti[nt, _NEXT], ti[nt, _ARRIVED] = u, v, in_head[v], 0
            tf[nt, _START], tf[nt, _END] = start, end + per_hop
            in_head[v] = nt
            tp[nt + 1] = nr
            link_free[channel[e]] = end
            if one_port:
                node_send[u, slot_u] = end
                node_recv[v, np.argmin(node_recv[v])] = end
            nt += 1
            hkey, hitem = push(hkey, hitem, hsize, tf[nt - 1, _END], _ARRIVAL, nt - 1)
            hsize += 1
            if not one_port and _lacks(held, known, u, v) > 0:  # capped: more to send when the link frees
                retry = min(retry, link_free[channel[e]])
        if retry < _INF and retry < pending[u]:
            pending[u] = retry
            hkey, hitem = push(hkey, hitem, hsize, retry, _WAKE, u)
            hsize += 1
    makespan = 0.0
    for k in range(nt):
        makespan = max(makespan, tf[k, _END])
    return (ti[:nt, _SRC].copy(), ti[:nt, _DST].copy(), tf[:nt, _START].copy(), tp[:nt + 1].copy(),
            rr[:tp[nt], 0].copy(), rr[:tp[nt], 1].copy(), makespan)


@nb.njit(cache=True)
def _add_soon(u: int, v: int, t: float, wait: float, known: np.ndarray, diff: np.ndarray, in_head: np.ndarray,
              ti: np.ndarray, tf: np.ndarray, tp: np.ndarray, rr: np.ndarray) -> float:
    """Add to ``diff`` the chunks ``v`` lacks that reach ``u`` within ``wait``; returns the start time."""
    start = t
    prev = -1
    k = in_head[u]
    while k >= 0:
        nxt = ti[k, _NEXT]
        if ti[k, _ARRIVED]:  # unlink transfers that have landed
            if prev >= 0:
                ti[prev, _NEXT] = nxt
            else:
                in_head[u] = nxt
            k = nxt
            continue
        if tf[k, _END] <= t + wait:
            useful = False
            for r in range(tp[k], tp[k + 1]):
                for c in range(rr[r, 0], rr[r, 0] + rr[r, 1]):
                    bit = np.uint64(1) << np.uint64(c & 63)
                    if not (known[v, c >> 6] & bit):
                        diff[c >> 6] |= bit
                        useful = True
            if useful and tf[k, _END] > start:
                start = tf[k, _END]
        prev = k
        k = nxt
    return start


@nb.njit(cache=True)
def _cap(diff: np.ndarray, cap: int) -> int:
    """Keep the ``cap`` lowest set bits of ``diff`` (all when ``cap`` is 0); returns how many are kept."""
    taken = 0
    for w in range(len(diff)):
        d = diff[w]
        if cap > 0 and d != 0 and taken + popcount(d) > cap:
            keep = np.uint64(0)
            for b in range(64):
                bit = np.uint64(1) << np.uint64(b)
                if d & bit and taken < cap:
                    keep |= bit
                    taken += 1
            diff[w] = keep
        else:
            taken += popcount(d)
    return taken


def channels(topology: Topology, duplex: str) -> np.ndarray:
    """The channel of every arc: the arc itself, or (half duplex) the pair ``min(e, reverse(e))``."""
    arcs = np.arange(topology.num_arcs, dtype=np.int64)
    if duplex == "half":
        return np.minimum(arcs, topology.reverse_arc.astype(np.int64))
    return arcs


def port_order(topology: Topology) -> np.ndarray:
    """Each node's arcs by port label, then neighbour: ties go to the lowest port (a hypercube's lowest
    dimension), so one-port nodes pair up consistently, as in dimension-ordered exchanges."""
    return np.lexsort((np.arange(topology.num_arcs), topology.arc_labels, topology.arc_sources))


def flood(topology: Topology, origin_bits: np.ndarray, cost: CostModel, ports: PortModel, chunk_bytes: float,
          cap: int = 0, wait: float = 0.0) -> TimedTransfers:
    """Greedy schedule in which every node ends holding every chunk (broadcast, all-gather).

    ``origin_bits`` is the ``(N, ceil(C/64))`` bit matrix of the chunks each node starts with.
    """
    order = port_order(topology)
    out = _flood(topology.indptr.astype(np.int64), topology.indices.astype(np.int64)[order],
                 channels(topology, ports.duplex)[order], origin_bits.copy(), float(cost.startup), float(cost.per_byte),
                 float(cost.per_hop), float(chunk_bytes), int(ports.ports or 0), int(cap), float(wait))
    return TimedTransfers(*out)


def origin_bits(num_nodes: int, origin: np.ndarray) -> np.ndarray:
    """Bit matrix with chunk ``c`` set at node ``origin[c]``."""
    chunks = len(origin)
    bits = np.zeros((num_nodes, (chunks + 63) // 64), dtype=np.uint64)
    ids = np.arange(chunks)
    np.bitwise_or.at(bits, (origin, ids >> 6), np.left_shift(np.uint64(1), (ids & 63).astype(np.uint64)))
    return bits
