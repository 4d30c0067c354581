"""Event engine: store-and-forward timing under a :class:`CostModel`.

Each transfer is one store-and-forward hop.  It starts when (a) every message
it carries has arrived at its sender, (b) every transfer it depends on
(``after``) has arrived, and (c) its link direction is free (with
``duplex="half"`` the two directions share one channel; with a port limit the
sender's and receiver's ports are serialised too).  It holds the link for
``startup + bytes * per_byte`` and arrives ``per_hop`` later.

Order: a schedule with dependencies is simulated event by event (a
transfer becomes ready when its last dependency arrives; links serve ready
transfers in order of ready time).  A step schedule keeps its steps as an
order on each link but has no global barrier: every transfer goes as soon as
its data and its link allow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..schedule import Schedule
from ..topology.core import Topology
from ..topology.csr import first_arc
from ..verify import HoldState, Verification, describe_transfer, receive
from . import heap
from .models import CostModel, PortModel

NO_LINK, NOT_HELD = 1, 2


@nb.njit(cache=True)
def _process(t, indptr, indices, rev, src, dst, range_ptr, first, count, dep_ready,
             arrival, holds, required, all_required, have, link_free, node_send, node_recv,
             arc_busy, start, finish, startup, per_byte, per_hop, msg_bytes, one_port, half):
    """Time transfer ``t``; returns (code, missing message) with code 0 for success."""
    u, v = src[t], dst[t]
    e = first_arc(indptr, indices, u, v)
    if e < 0:
        return NO_LINK, -1
    best = e
    k = e + 1
    while k < indptr[u + 1] and indices[k] == v:  # parallel links: take the earliest free
        ch_k = min(k, rev[k]) if half else k
        ch_b = min(best, rev[best]) if half else best
        if link_free[ch_k] < link_free[ch_b]:
            best = k
        k += 1
    e = best
    channel = min(e, rev[e]) if half else e
    ready = dep_ready[t]
    nmsg = 0
    for r in range(range_ptr[t], range_ptr[t + 1]):
        for m in range(first[r], first[r] + count[r]):
            a = arrival[u, m]
            if a == np.inf:
                return NOT_HELD, m
            if a > ready:
                ready = a
        nmsg += count[r]
    begin = max(ready, link_free[channel])
    if one_port:
        begin = max(begin, node_send[u], node_recv[v])
    duration = startup + nmsg * msg_bytes * per_byte
    done = begin + duration
    link_free[channel] = done
    if one_port:
        node_send[u] = done
        node_recv[v] = done
    arc_busy[e] += duration
    start[t] = begin
    finish[t] = done + per_hop
    for r in range(range_ptr[t], range_ptr[t + 1]):
        for m in range(first[r], first[r] + count[r]):
            if finish[t] < arrival[v, m]:
                arrival[v, m] = finish[t]
    return 0, -1


@nb.njit(cache=True)
def _simulate(use_deps, order, succ_ptr, succ, after_ptr, indptr, indices, rev, src, dst, range_ptr, first,
              count, arrival, holds, required, all_required, have, startup, per_byte, per_hop, msg_bytes,
              one_port, half):
    """Time every transfer: in ``order`` (step schedules) or, with dependencies,
    as a discrete-event loop where ready transfers leave in order of ready time."""
    n = len(indptr) - 1
    nt = len(src)
    link_free = np.zeros(len(indices), np.float64)
    node_send = np.zeros(n, np.float64)
    node_recv = np.zeros(n, np.float64)
    arc_busy = np.zeros(len(indices), np.float64)
    start = np.full(nt, np.nan)
    finish = np.full(nt, np.nan)
    dep_ready = np.zeros(nt, np.float64)
    waiting = after_ptr[1:] - after_ptr[:-1]
    # ready transfers by (ready time, index); sizes typed (a literal 0 would compile heap.push twice)
    hkey = np.empty(max(1, nt), np.float64)
    hitem = np.empty((max(1, nt), 2), np.int64)
    hsize = np.int64(0)
    zero = np.int64(0)
    if use_deps:
        for t in range(nt):
            if waiting[t] == 0:
                hkey, hitem = heap.push(hkey, hitem, hsize, 0.0, zero, np.int64(t))
                hsize += 1
    receipts = 0
    redundant = 0
    done = 0
    while True:
        if use_deps:
            if hsize == 0:
                break
            t = heap.pop(hkey, hitem, hsize)[2]
            hsize -= 1
        else:
            if done == nt:
                break
            t = order[done]
        code, missing = _process(t, indptr, indices, rev, src, dst, range_ptr, first, count, dep_ready,
                                 arrival, holds, required, all_required, have, link_free, node_send,
                                 node_recv, arc_busy, start, finish, startup, per_byte, per_hop,
                                 msg_bytes, one_port, half)
        if code != 0:
            return t, code, missing, start, finish, arc_busy, receipts, redundant, done
        done += 1
        for r in range(range_ptr[t], range_ptr[t + 1]):
            red, new_req = receive(holds, required, all_required, dst[t], first[r], count[r])
            receipts += count[r]
            redundant += red
            have[dst[t]] += new_req
        if use_deps:
            for k in range(succ_ptr[t], succ_ptr[t + 1]):
                s = succ[k]
                if finish[t] > dep_ready[s]:
                    dep_ready[s] = finish[t]
                waiting[s] -= 1
                if waiting[s] == 0:
                    hkey, hitem = heap.push(hkey, hitem, hsize, dep_ready[s], zero, s)
                    hsize += 1
    return -1, 0, -1, start, finish, arc_busy, receipts, redundant, done


@dataclass
class EventTrace:
    """Timing of every transfer, link busy time and per-node completion time."""

    start: np.ndarray
    finish: np.ndarray
    makespan: float
    arc_busy: np.ndarray
    completion_time: np.ndarray
    arrival: np.ndarray | None
    verification: Verification
    cost: CostModel
    ports: PortModel

    def link_utilisation(self) -> np.ndarray:
        """Busy time of each arc divided by the makespan."""
        return self.arc_busy / self.makespan if self.makespan > 0 else np.zeros_like(self.arc_busy)


def run_events(topology: Topology, schedule: Schedule, cost: CostModel = CostModel(),
               ports: PortModel = PortModel(), keep_arrival: bool = False,
               max_bytes: float | None = None) -> EventTrace:
    """Time ``schedule`` on ``topology`` under ``cost`` and verify it."""
    n, m = schedule.num_nodes, schedule.num_messages
    if max_bytes is not None and n * m * 8 > max_bytes:
        raise TopocastError(f"max-memory: arrival times of {m} messages on {n} nodes need "
                            f"{n * m * 8 / 2**30:.1f} GiB")
    state = HoldState(schedule, max_bytes)
    arrival = np.full((n, m), np.inf)
    arrival[schedule.origin, np.arange(m)] = 0.0
    rev = topology.reverse_arc if ports.duplex == "half" else np.zeros(max(1, topology.num_arcs), np.int64)
    common = (topology.indptr, topology.indices, rev, schedule.src, schedule.dst, schedule.range_ptr,
              schedule.range_first, schedule.range_count)
    tail = (cost.startup, cost.per_byte, cost.per_hop, float(schedule.message_bytes),
            ports.ports is not None, ports.duplex == "half")
    nt = schedule.num_transfers
    empty = np.zeros(1, np.int64)
    use_deps = schedule.after_ptr is not None
    if use_deps:
        ids = schedule.after_ids
        if len(ids) and (ids.min() < 0 or ids.max() >= nt):
            raise TopocastError("schedule: a dependency names a transfer that does not exist")
        succ_order = np.argsort(ids, kind="stable")
        succ = np.repeat(np.arange(nt, dtype=np.int64), np.diff(schedule.after_ptr))[succ_order]
        succ_ptr = np.searchsorted(ids[succ_order], np.arange(nt + 1)).astype(np.int64)
        order, after_ptr = empty, schedule.after_ptr
    else:
        order = np.argsort(schedule.step, kind="stable").astype(np.int64)
        succ, succ_ptr, after_ptr = empty, empty, np.zeros(nt + 1, np.int64)
    bad, code, missing, start, finish, busy, receipts, redundant, done = _simulate(
        use_deps, order, succ_ptr, succ, after_ptr, *common, arrival, state.holds, state.required,
        state.all_required, state.have, *tail)
    if bad < 0 and done != nt:
        raise TopocastError("schedule: the dependencies contain a cycle")
    violation = None
    if bad >= 0:
        what = ("is rejected: there is no link between them" if code == NO_LINK else
                f"carries message {missing}, which node {int(schedule.src[bad])} never receives before it")
        violation = f"{describe_transfer(schedule, int(bad))} {what}"
    verification = state.finish(receipts, redundant, violation)
    completion = _completion_times(schedule, arrival, state)
    makespan = float(np.nanmax(finish)) if len(finish) and not np.all(np.isnan(finish)) else 0.0
    return EventTrace(start, finish, makespan, busy, completion, arrival if keep_arrival else None,
                      verification, cost, ports)


def _completion_times(schedule: Schedule, arrival: np.ndarray, state: HoldState) -> np.ndarray:
    """Time each node holds every message it needs (inf if never)."""
    if state.all_required:
        return arrival.max(axis=1)
    ptr, ids = schedule.target_csr()
    msg = np.repeat(np.arange(schedule.num_messages), np.diff(ptr))
    out = np.zeros(schedule.num_nodes)
    np.maximum.at(out, ids, arrival[ids, msg])
    return out
