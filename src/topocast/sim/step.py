"""Step engine: synchronous rounds under a port model.

Within a step every transfer reads what its sender held *before* the step
and delivers at its end.  The engine rejects, naming the first offending
transfer, a transfer over a missing link, one that exceeds the port budget
(or a link's multiplicity, or uses a half-duplex link both ways), and one
carrying a message its sender does not hold.  It reports per step the
senders, receivers, active nodes (sending or receiving), free nodes, and the
busiest link's message count; per node the step after which it held all it
needs (0 = from the start).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from ..schedule import Schedule
from ..topology.core import Topology
from ..topology.csr import first_arc
from ..verify import HoldState, Verification, describe_transfer, receive, sender_lacks
from .models import PortModel

OK, NO_LINK, LINK_BUSY, PORT_SEND, PORT_RECV, NOT_HELD, HALF_DUPLEX = range(7)


@nb.njit(cache=True)
def _find_arc(indptr, indices, arc_use, rev, u, v, half):
    """First parallel arc u -> v free this step (and its reverse, if half-duplex)."""
    e = first_arc(indptr, indices, u, v)
    if e < 0:
        return -1, NO_LINK
    code = LINK_BUSY
    hi = indptr[u + 1]
    while e < hi and indices[e] == v:
        if arc_use[e] == 0:
            if not half or arc_use[rev[e]] == 0:
                return e, OK
            code = HALF_DUPLEX
        e += 1
    return -1, code


@nb.njit(cache=True, parallel=True)
def _check_held(holds, order, lo, hi, src, range_ptr, first, count, missing_out):
    """Read-only: first message each transfer's sender lacks (-1 if none), in parallel."""
    for i in nb.prange(lo, hi):
        t = order[i]
        missing_out[i] = -1
        for r in range(range_ptr[t], range_ptr[t + 1]):
            m = sender_lacks(holds, src[t], first[r], count[r])
            if m >= 0:
                missing_out[i] = m
                break


@nb.njit(cache=True, parallel=True)
def _deliver(holds, required, all_required, order, group_ptr, g_lo, g_hi, dst, range_ptr, first, count,
             have, need, completion, step_number):
    """Apply a step's deliveries; transfers are grouped by receiver so groups run in parallel."""
    receipts = 0
    redundant = 0
    for g in nb.prange(g_lo, g_hi):
        got = 0
        dup = 0
        v = dst[order[group_ptr[g]]]
        for i in range(group_ptr[g], group_ptr[g + 1]):
            t = order[i]
            for r in range(range_ptr[t], range_ptr[t + 1]):
                red, new_req = receive(holds, required, all_required, v, first[r], count[r])
                got += count[r]
                dup += red
                have[v] += new_req
        if have[v] >= need[v] and completion[v] < 0:
            completion[v] = step_number
        receipts += got
        redundant += dup
    return receipts, redundant


@nb.njit(cache=True)
def _run(indptr, indices, rev, order, step_ptr, group_ptr, step_groups, src, dst, range_ptr, first, count,
         holds, required, all_required, need, have, ports, half):
    n = len(indptr) - 1
    nsteps = len(step_ptr) - 1
    senders = np.zeros(nsteps, np.int64)
    receivers = np.zeros(nsteps, np.int64)
    active = np.zeros(nsteps, np.int64)
    max_link = np.zeros(nsteps, np.int64)
    moved = np.zeros(nsteps, np.int64)
    completion = np.full(n, -1, np.int64)
    for v in range(n):
        if have[v] >= need[v]:
            completion[v] = 0
    arc_use = np.zeros(len(indices), np.int64)
    arc_load = np.zeros(len(indices), np.int64)
    arc_of = np.empty(len(order), np.int64)
    missing = np.empty(len(order), np.int64)
    sends = np.zeros(n, np.int64)
    recvs = np.zeros(n, np.int64)
    sent_at = np.full(n, -1, np.int64)
    recv_at = np.full(n, -1, np.int64)
    active_at = np.full(n, -1, np.int64)
    receipts = 0
    redundant = 0
    for s in range(nsteps):
        lo, hi = step_ptr[s], step_ptr[s + 1]
        # phase 1: links and ports (in order), then data held before the step (in parallel)
        for i in range(lo, hi):
            t = order[i]
            u, v = src[t], dst[t]
            e, code = _find_arc(indptr, indices, arc_use, rev, u, v, half)
            if e < 0:
                return t, code, -1, senders, receivers, active, max_link, moved, completion, receipts, redundant
            arc_use[e] += 1
            arc_of[i] = e
            sends[u] += 1
            recvs[v] += 1
            if ports > 0:
                if sends[u] > ports or (half and sends[u] + recvs[u] > ports):
                    return t, PORT_SEND, -1, senders, receivers, active, max_link, moved, completion, receipts, redundant
                if recvs[v] > ports or (half and sends[v] + recvs[v] > ports):
                    return t, PORT_RECV, -1, senders, receivers, active, max_link, moved, completion, receipts, redundant
            for r in range(range_ptr[t], range_ptr[t + 1]):
                arc_load[e] += count[r]
                moved[s] += count[r]
        _check_held(holds, order, lo, hi, src, range_ptr, first, count, missing)
        for i in range(lo, hi):
            if missing[i] >= 0:
                return order[i], NOT_HELD, missing[i], senders, receivers, active, max_link, moved, completion, receipts, redundant
        # phase 2: deliveries, then per-step statistics
        got, dup = _deliver(holds, required, all_required, order, group_ptr, step_groups[s], step_groups[s + 1],
                            dst, range_ptr, first, count, have, need, completion, s + 1)
        receipts += got
        redundant += dup
        for i in range(lo, hi):
            t = order[i]
            u, v = src[t], dst[t]
            e = arc_of[i]
            if arc_load[e] > max_link[s]:
                max_link[s] = arc_load[e]
            if sent_at[u] != s:
                sent_at[u] = s
                senders[s] += 1
            if recv_at[v] != s:
                recv_at[v] = s
                receivers[s] += 1
            for w in (u, v):
                if active_at[w] != s:
                    active_at[w] = s
                    active[s] += 1
        for i in range(lo, hi):
            t = order[i]
            arc_use[arc_of[i]] = 0
            arc_load[arc_of[i]] = 0
            sends[src[t]] = 0
            recvs[dst[t]] = 0
    return -1, OK, -1, senders, receivers, active, max_link, moved, completion, receipts, redundant


@dataclass
class StepTrace:
    """What the step engine saw; per-step arrays have one entry per step."""

    steps: int
    senders: np.ndarray
    receivers: np.ndarray
    active: np.ndarray
    free: np.ndarray
    max_link_messages: np.ndarray
    messages_moved: np.ndarray
    completion_step: np.ndarray
    verification: Verification
    ports: PortModel
    extra: dict = field(default_factory=dict)

    def per_step(self) -> dict[str, list[int]]:
        return {
            "senders": self.senders.tolist(),
            "receivers": self.receivers.tolist(),
            "active": self.active.tolist(),
            "free": self.free.tolist(),
            "max_link_messages": self.max_link_messages.tolist(),
            "messages_moved": self.messages_moved.tolist(),
        }


_MESSAGES = {
    NO_LINK: "there is no link between them",
    LINK_BUSY: "the link already carries a transfer this step",
    HALF_DUPLEX: "the half-duplex link is already used in the other direction this step",
    PORT_SEND: "the sender is over its port budget",
    PORT_RECV: "the receiver is over its port budget",
}


def run_steps(topology: Topology, schedule: Schedule, ports: PortModel = PortModel(),
              max_bytes: float | None = None) -> StepTrace:
    """Run ``schedule`` in synchronous steps on ``topology`` and verify it."""
    if schedule.step is None:
        raise ValueError("the step engine needs a step per transfer")
    state = HoldState(schedule, max_bytes)
    nsteps = schedule.num_steps
    # by step, and within a step by receiver (deliveries to one receiver form a group)
    order = np.lexsort((np.arange(schedule.num_transfers), schedule.dst, schedule.step)).astype(np.int64)
    ordered_step = schedule.step[order]
    step_ptr = np.searchsorted(ordered_step, np.arange(nsteps + 1)).astype(np.int64)
    ordered_dst = schedule.dst[order]
    starts = np.ones(len(order), dtype=bool)
    starts[1:] = (ordered_dst[1:] != ordered_dst[:-1]) | (ordered_step[1:] != ordered_step[:-1])
    group_ptr = np.append(np.flatnonzero(starts), len(order)).astype(np.int64)
    step_groups = np.searchsorted(group_ptr, step_ptr).astype(np.int64)
    rev = topology.reverse_arc if ports.duplex == "half" else np.zeros(1, np.int64)
    (bad, code, missing, senders, receivers, active, max_link, moved, completion,
     receipts, redundant) = _run(
        topology.indptr, topology.indices, rev, order, step_ptr, group_ptr, step_groups, schedule.src, schedule.dst,
        schedule.range_ptr, schedule.range_first, schedule.range_count, state.holds, state.required,
        state.all_required, state.need, state.have, 0 if ports.ports is None else ports.ports,
        ports.duplex == "half")
    violation = None
    if bad >= 0:
        what = (f"carries message {missing}, which node {int(schedule.src[bad])} does not hold yet"
                if code == NOT_HELD else f"is rejected: {_MESSAGES[code]}")
        violation = f"{describe_transfer(schedule, int(bad))} {what}"
    verification = state.finish(receipts, redundant, violation)
    free = topology.num_nodes - active
    return StepTrace(nsteps, senders, receivers, active, free, max_link, moved, completion,
                     verification, ports)
