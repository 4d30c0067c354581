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

from ..parallel import twin
from ..schedule import Schedule
from ..topology.core import Topology
from ..topology.csr import first_arc
from ..verify import HoldState, Verification, describe_transfer, receive, sender_lacks
from .models import PortModel

OK, NO_LINK, LINK_BUSY, PORT_SEND, PORT_RECV, NOT_HELD, HALF_DUPLEX = range(7)

# read-only like a topology's reverse_arc, so that _run has one specialisation
_NO_REVERSE = np.zeros(1, np.int64)
_NO_REVERSE.setflags(write=False)


@nb.njit(cache=True)
def _claim_arc(indptr, indices, arc_step, rev, e, u, v, half, step):
    """From the first arc ``e`` of ``u -> v``, the first parallel arc free this step
    (and whose reverse is free, if half-duplex); ``arc_step[a] == step`` marks a
    busy arc."""
    if e < 0:
        return -1, NO_LINK
    code = LINK_BUSY
    hi = indptr[u + 1]
    while e < hi and indices[e] == v:
        if arc_step[e] != step:
            if not half or arc_step[rev[e]] != step:
                return e, OK
            code = HALF_DUPLEX
        e += 1
    return -1, code


@nb.njit(cache=True)
def _inspect(holds, order, lo, hi, src, dst, indptr, indices, range_ptr, first, count, missing_out, arc_out):
    """Read-only (in parallel in :data:`_run_parallel`): each transfer's first arc and the first message
    its sender lacks before the step (-1 if none)."""
    for i in nb.prange(lo, hi):
        t = order[i]
        arc_out[i] = first_arc(indptr, indices, src[t], dst[t])
        missing_out[i] = -1
        for r in range(range_ptr[t], range_ptr[t + 1]):
            m = sender_lacks(holds, src[t], first[r], count[r])
            if m >= 0:
                missing_out[i] = m
                break


@nb.njit(cache=True)
def _deliver(holds, required, all_required, order, group_ptr, g_lo, g_hi, dst, range_ptr, first, count,
             have, need, completion, step_number):
    """Apply a step's deliveries; transfers are grouped by receiver so groups can run in parallel."""
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
    arc_step = np.full(len(indices), -1, np.int64)
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
        # phase 1: arcs and data held before the step (parallel), then links, ports,
        # data and per-step counts in order, so the first offending transfer is named
        _inspect(holds, order, lo, hi, src, dst, indptr, indices, range_ptr, first, count, missing, arc_of)
        for i in range(lo, hi):
            t = order[i]
            u, v = src[t], dst[t]
            e, code = _claim_arc(indptr, indices, arc_step, rev, arc_of[i], u, v, half, s)
            if e < 0:
                return t, code, -1, senders, receivers, active, max_link, moved, completion, receipts, redundant
            arc_step[e] = s
            arc_of[i] = e
            arc_load[e] = 0
            # per-node counters restart the first time a node appears in a step
            if sent_at[u] != s:
                sent_at[u] = s
                sends[u] = 0
                senders[s] += 1
            if recv_at[v] != s:
                recv_at[v] = s
                recvs[v] = 0
                receivers[s] += 1
            sends[u] += 1
            recvs[v] += 1
            if ports > 0:
                recv_u = recvs[u] if recv_at[u] == s else 0
                send_v = sends[v] if sent_at[v] == s else 0
                if sends[u] > ports or (half and sends[u] + recv_u > ports):
                    return (t, PORT_SEND, -1, senders, receivers, active, max_link, moved, completion, receipts,
                            redundant)
                if recvs[v] > ports or (half and send_v + recvs[v] > ports):
                    return (t, PORT_RECV, -1, senders, receivers, active, max_link, moved, completion, receipts,
                            redundant)
            if missing[i] >= 0:
                return (t, NOT_HELD, missing[i], senders, receivers, active, max_link, moved, completion, receipts,
                        redundant)
            for r in range(range_ptr[t], range_ptr[t + 1]):
                arc_load[e] += count[r]
                moved[s] += count[r]
            if arc_load[e] > max_link[s]:
                max_link[s] = arc_load[e]
            if active_at[u] != s:
                active_at[u] = s
                active[s] += 1
            if active_at[v] != s:
                active_at[v] = s
                active[s] += 1
        # phase 2: deliveries
        got, dup = _deliver(holds, required, all_required, order, group_ptr, step_groups[s], step_groups[s + 1],
                            dst, range_ptr, first, count, have, need, completion, s + 1)
        receipts += got
        redundant += dup
    return -1, OK, -1, senders, receivers, active, max_link, moved, completion, receipts, redundant


#: schedules of at least this many transfers run the parallel build (:mod:`topocast.parallel`)
PARALLEL_TRANSFERS = 200_000
_inspect_parallel = twin(_inspect, "_inspect_parallel")
_deliver_parallel = twin(_deliver, "_deliver_parallel")
_run_parallel = twin(_run, "_run_parallel", parallel=False, _inspect=_inspect_parallel, _deliver=_deliver_parallel)


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


@nb.njit(cache=True)
def _receivers_repeat(order, step, dst, n):
    """True if some node receives more than one transfer in one step."""
    seen = np.full(n, -1, np.int64)
    for t in order:
        if seen[dst[t]] == step[t]:
            return True
        seen[dst[t]] = step[t]
    return False


def _delivery_groups(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Transfers ordered by step, and within a step grouped by receiver.

    Deliveries to one receiver form a group that one thread applies; groups
    run in parallel. When no node receives twice in a step (one-port
    schedules, most all-port ones) every transfer is its own group and no
    sort by receiver is needed.
    """
    step, dst, count = schedule.step, schedule.dst, schedule.num_transfers
    if count == 0 or np.all(step[1:] >= step[:-1]):
        order = np.arange(count, dtype=np.int64)
    else:
        order = np.argsort(step, kind="stable").astype(np.int64)
    if not _receivers_repeat(order, step, dst, schedule.num_nodes):
        return order, np.arange(count + 1, dtype=np.int64)
    order = np.lexsort((np.arange(count), dst, step)).astype(np.int64)
    ordered_step, ordered_dst = step[order], dst[order]
    starts = np.ones(count, dtype=bool)
    starts[1:] = (ordered_dst[1:] != ordered_dst[:-1]) | (ordered_step[1:] != ordered_step[:-1])
    return order, np.append(np.flatnonzero(starts), count).astype(np.int64)


def run_steps(topology: Topology, schedule: Schedule, ports: PortModel = PortModel(),
              max_bytes: float | None = None) -> StepTrace:
    """Run ``schedule`` in synchronous steps on ``topology`` and verify it."""
    if schedule.step is None:
        raise ValueError("the step engine needs a step per transfer")
    state = HoldState(schedule, max_bytes)
    nsteps = schedule.num_steps
    order, group_ptr = _delivery_groups(schedule)
    step_ptr = np.searchsorted(schedule.step[order], np.arange(nsteps + 1)).astype(np.int64)
    step_groups = np.searchsorted(group_ptr, step_ptr).astype(np.int64)
    rev = topology.reverse_arc if ports.duplex == "half" else _NO_REVERSE
    (bad, code, missing, senders, receivers, active, max_link, moved, completion,
     receipts, redundant) = (_run_parallel if schedule.num_transfers >= PARALLEL_TRANSFERS else _run)(
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
