"""Greedy link-chunk matching in continuous time, aware of the event engine's cost model.

This follows the idea of TACOS (Won et al., "TACOS: Topology-Aware Collective
Algorithm Synthesizer", MICRO 2024): walk a time-expanded network and, each
time a link direction becomes free, match it with chunks its sender holds and
its receiver still lacks.  We keep time continuous instead of in slots and use
our own store-and-forward costs: a transfer of ``k`` chunks holds its link
direction for ``startup + k * chunk_bytes * per_byte`` and arrives ``per_hop``
later, exactly what :mod:`topocast.sim.event` charges.  Because the start-up
dominates small packets, a free link carries *everything* its sender holds
that its receiver neither holds nor has on the way (aggregation), up to
``cap`` chunks; the lowest chunk ids go first, so a capped broadcast pipelines
its chunks in order (the pipelined-tree idea of Blink, Wang et al. MLSys 2020).

Under a port limit (the event engine serialises a node's sends and receipts
when any port limit is set) a free node sends one transfer at a time, to the
neighbour that lacks the most of what it holds (ties: lowest port label, then
lowest neighbour), which on a hypercube rediscovers recursive doubling.

Total exchange (``alltoall``) uses per-link queues instead: a chunk at node
``u`` bound for ``d`` joins the queue of the shortest-path next hop whose link
frees first, and a free link sends its whole queue.

Every function here returns a plan (transfers with their start times and chunk
ranges); :func:`topocast.synthesis.synthesize` turns it into a
:class:`~topocast.schedule.Schedule` and verifies it on the event engine.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numba as nb
import numpy as np

from ..verify import popcount

_INF = np.inf


@dataclass
class Plan:
    """Transfers in order of start time: endpoints, start, and chunk ranges (CSR)."""

    src: np.ndarray
    dst: np.ndarray
    start: np.ndarray
    range_ptr: np.ndarray
    range_first: np.ndarray
    range_count: np.ndarray
    makespan: float


@nb.njit(cache=True)
def _grow(a, size):
    if size < len(a):
        return a
    b = np.empty(max(2 * len(a), size + 1), a.dtype)
    b[:len(a)] = a
    return b


@nb.njit(cache=True)
def _lacks(held, known, u, v):
    total = 0
    for w in range(held.shape[1]):
        total += popcount(held[u, w] & ~known[v, w])
    return total


@nb.njit(cache=True)
def _flood(indptr, indices, channel, held, startup, per_byte, per_hop, chunk_bytes, one_port, cap, wait):
    """The flooding greedy for broadcast and all-gather (every node needs every chunk)."""
    n, words = held.shape
    known = held.copy()
    link_free = np.zeros(channel.max() + 1 if len(channel) else 1)
    node_send = np.zeros(n)
    node_recv = np.zeros(n)
    pending = np.full(n, _INF)
    in_head = np.full(n, -1, np.int64)
    tr = (np.empty(1024, np.int64), np.empty(1024, np.int64), np.empty(1024, np.float64),
          np.empty(1024, np.float64), np.empty(1024, np.int64), np.zeros(1025, np.int64))
    rr = (np.empty(4096, np.int64), np.empty(4096, np.int64))
    arrived = np.zeros(1024, np.bool_)
    nt = 0
    heap = [(0.0, np.int64(0), np.int64(0))]
    heap.pop()
    for u in range(n):
        pending[u] = 0.0
        heap.append((0.0, np.int64(1), np.int64(u)))
    heapq.heapify(heap)
    diff = np.empty(words, np.uint64)
    while len(heap):
        t, kind, ident = heapq.heappop(heap)
        if kind == 0:  # arrival of transfer ident: its chunks are held at its receiver
            v = tr[1][ident]
            arrived[ident] = True
            for r in range(tr[5][ident], tr[5][ident + 1]):
                for c in range(rr[0][r], rr[0][r] + rr[1][r]):
                    held[v, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
            if t < pending[v]:
                pending[v] = t
                heapq.heappush(heap, (t, np.int64(1), np.int64(v)))
            continue
        u = ident
        if t != pending[u]:
            continue  # stale wake
        pending[u] = _INF
        retry = _INF
        if one_port and node_send[u] > t:
            retry = node_send[u]
        else:
            best_e = -1
            best_cnt = 0
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                cnt = _lacks(held, known, u, v)
                if cnt == 0:
                    continue
                free = link_free[channel[e]]
                if one_port and node_recv[v] > free:
                    free = node_recv[v]
                if free > t:
                    retry = min(retry, free)
                    continue
                if one_port:
                    if cnt > best_cnt:
                        best_e = e
                        best_cnt = cnt
                    continue
                nt, tr, rr, arrived = _send(u, v, e, t, wait, held, known, diff, cap, channel, link_free, node_send,
                                            node_recv, one_port, startup, per_byte, per_hop, chunk_bytes, in_head,
                                            nt, tr, rr, arrived)
                heapq.heappush(heap, (tr[3][nt - 1], np.int64(0), np.int64(nt - 1)))
                if _lacks(held, known, u, v) > 0:  # capped: more to send when the link frees
                    retry = min(retry, link_free[channel[e]])
            if one_port and best_e >= 0:
                v = indices[best_e]
                nt, tr, rr, arrived = _send(u, v, best_e, t, wait, held, known, diff, cap, channel, link_free,
                                            node_send, node_recv, one_port, startup, per_byte, per_hop, chunk_bytes,
                                            in_head, nt, tr, rr, arrived)
                heapq.heappush(heap, (tr[3][nt - 1], np.int64(0), np.int64(nt - 1)))
                for e in range(indptr[u], indptr[u + 1]):
                    if _lacks(held, known, u, indices[e]) > 0:
                        retry = min(retry, node_send[u])
                        break
        if retry < _INF and retry < pending[u]:
            pending[u] = retry
            heapq.heappush(heap, (retry, np.int64(1), np.int64(u)))
    makespan = tr[3][:nt].max() if nt else 0.0
    return tr[0][:nt], tr[1][:nt], tr[2][:nt], tr[5][:nt + 1], rr[0][:tr[5][nt]], rr[1][:tr[5][nt]], makespan


@nb.njit(cache=True)
def _add_soon(u, v, t, wait, known, diff, in_head, tr, rr, arrived):
    """Add to ``diff`` the chunks ``v`` lacks that reach ``u`` within ``wait``; returns the start time."""
    start = t
    prev = -1
    k = in_head[u]
    while k >= 0:
        nxt = tr[4][k]
        if arrived[k]:  # unlink transfers that have landed
            if prev >= 0:
                tr[4][prev] = nxt
            else:
                in_head[u] = nxt
            k = nxt
            continue
        if tr[3][k] <= t + wait:
            useful = False
            for r in range(tr[5][k], tr[5][k + 1]):
                for c in range(rr[0][r], rr[0][r] + rr[1][r]):
                    bit = np.uint64(1) << np.uint64(c & 63)
                    if not (known[v, c >> 6] & bit):
                        diff[c >> 6] |= bit
                        useful = True
            if useful and tr[3][k] > start:
                start = tr[3][k]
        prev = k
        k = nxt
    return start


@nb.njit(cache=True)
def _cap(diff, cap):
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


@nb.njit(cache=True)
def _send(u, v, e, t, wait, held, known, diff, cap, channel, link_free, node_send, node_recv, one_port,
          startup, per_byte, per_hop, chunk_bytes, in_head, nt, tr, rr, arrived):
    """Record one transfer ``u -> v`` carrying what ``v`` lacks (lowest ids first, at most ``cap``), starting at
    ``t`` or, when chunks that ``v`` lacks reach ``u`` within ``wait``, when the last of them lands."""
    for w in range(held.shape[1]):
        diff[w] = held[u, w] & ~known[v, w]
    start = _add_soon(u, v, t, wait, known, diff, in_head, tr, rr, arrived) if wait > 0 else t
    taken = _cap(diff, cap)
    tr = (_grow(tr[0], nt), _grow(tr[1], nt), _grow(tr[2], nt), _grow(tr[3], nt), _grow(tr[4], nt),
          _grow(tr[5], nt + 1))
    arrived = _grow(arrived, nt)
    nr = tr[5][nt]
    first, count = rr
    run_first = -1
    run_len = 0
    for w in range(held.shape[1]):
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
                    first, count = _grow(first, nr), _grow(count, nr)
                    first[nr], count[nr] = run_first, run_len
                    nr += 1
                run_first, run_len = c, 1
    if run_len > 0:
        first, count = _grow(first, nr), _grow(count, nr)
        first[nr], count[nr] = run_first, run_len
        nr += 1
    end = start + startup + taken * chunk_bytes * per_byte
    tr[0][nt], tr[1][nt], tr[2][nt], tr[3][nt] = u, v, start, end + per_hop
    tr[4][nt] = in_head[v]
    in_head[v] = nt
    arrived[nt] = False
    tr[5][nt + 1] = nr
    link_free[channel[e]] = end
    if one_port:
        node_send[u] = end
        node_recv[v] = end
    return nt + 1, tr, (first, count), arrived


def channels(topology, duplex: str) -> np.ndarray:
    """The channel of every arc: the arc itself, or (half duplex) the pair ``min(e, reverse(e))``."""
    arcs = np.arange(topology.num_arcs, dtype=np.int64)
    if duplex == "half":
        return np.minimum(arcs, topology.reverse_arc.astype(np.int64))
    return arcs


def port_order(topology) -> np.ndarray:
    """Each node's arcs by port label, then neighbour: ties go to the lowest port (a hypercube's lowest
    dimension), so one-port nodes pair up consistently, as in dimension-ordered exchanges."""
    return np.lexsort((np.arange(topology.num_arcs), topology.arc_labels, topology.arc_sources))


def flood(topology, origin_bits: np.ndarray, cost, ports, chunk_bytes: float, cap: int = 0, wait: float = 0.0
          ) -> Plan:
    """Greedy schedule in which every node ends holding every chunk (broadcast, all-gather).

    ``origin_bits`` is the ``(N, ceil(C/64))`` bit matrix of the chunks each node starts with.
    """
    order = port_order(topology)
    out = _flood(topology.indptr.astype(np.int64), topology.indices.astype(np.int64)[order],
                 channels(topology, ports.duplex)[order], origin_bits.copy(), float(cost.startup), float(cost.per_byte),
                 float(cost.per_hop), float(chunk_bytes), ports.ports is not None, int(cap), float(wait))
    return Plan(*out)


def origin_bits(num_nodes: int, origin: np.ndarray) -> np.ndarray:
    """Bit matrix with chunk ``c`` set at node ``origin[c]``."""
    chunks = len(origin)
    bits = np.zeros((num_nodes, (chunks + 63) // 64), dtype=np.uint64)
    ids = np.arange(chunks)
    np.bitwise_or.at(bits, (origin, ids >> 6), np.left_shift(np.uint64(1), (ids & 63).astype(np.uint64)))
    return bits
