"""Step engine: synchronous rounds under a port model.

Within a step every transfer reads what its sender held *before* the step
and delivers at its end.  The engine takes the transfers step by step (within
a step in schedule order, or grouped by receiver when a node receives twice
in one step) and stops, naming the first offending transfer, at a transfer
over a missing link, one that exceeds the port budget (or a link's
multiplicity, or uses a half-duplex link both ways).  It reports per step the
senders, receivers, active nodes (sending or receiving), free nodes, and the
busiest link's message count.

It keeps no message state: whether each sender held its data before the
step, and what every node ends up holding, is checked on the trace by the
verifier (:func:`topocast.verify.delivery.check_steps`).  When that check finds a
sender without its data before the engine's stop, the run is taken again with
``stop_at`` there, so the per-step counts end where the run does.

State: per transfer its order and first arc (16 bytes), per arc two int64,
per node five, per step six.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.parallel import twin
from ..plans.schedule import Schedule, by_step
from ..topology.core import Topology
from ..topology.csr import first_arc
from .models import PortModel

OK, NO_LINK, LINK_BUSY, PORT_SEND, PORT_RECV, STOPPED, HALF_DUPLEX = range(7)

# read-only like a topology's reverse_arc, so that _run has one specialisation
_NO_REVERSE = np.zeros(1, np.int64)
_NO_REVERSE.setflags(write=False)


class Links(NamedTuple):
    """The topology's arcs (CSR) and each arc's reverse (read only for half duplex)."""

    indptr: np.ndarray
    indices: np.ndarray
    reverse: np.ndarray


class Transfers(NamedTuple):
    """Sender, receiver and message id ranges of every transfer (the schedule's arrays)."""

    src: np.ndarray
    dst: np.ndarray
    range_ptr: np.ndarray
    first: np.ndarray
    count: np.ndarray  # type: ignore[assignment]  # a field the compiled kernels read, shadowing tuple.count


class Rules(NamedTuple):
    """Port budget per node and step (0: all-port), half duplex, and where to stop (-1: nowhere)."""

    ports: int
    half: bool
    stop_at: int


class StepCounts(NamedTuple):
    """Per-step counts (one entry per step)."""

    senders: np.ndarray
    receivers: np.ndarray
    active: np.ndarray
    max_link: np.ndarray
    moved: np.ndarray


@nb.njit(cache=True)
def _first_arcs(links, transfers, order, arc_of):
    """The first arc ``src -> dst`` of every transfer, in order (-1: no link); in parallel in the twin."""
    for i in nb.prange(len(order)):
        t = order[i]
        arc_of[i] = first_arc(links.indptr, links.indices, transfers.src[t], transfers.dst[t])


@nb.njit(cache=True)
def _claim_arc(links, arc_step, e, u, v, half, step):
    """From the first arc ``e`` of ``u -> v``, the first parallel arc free this step
    (and whose reverse is free, if half-duplex); ``arc_step[a] == step`` marks a
    busy arc."""
    if e < 0:
        return -1, NO_LINK
    code = LINK_BUSY
    hi = links.indptr[u + 1]
    while e < hi and links.indices[e] == v:
        if arc_step[e] != step:
            if not half or arc_step[links.reverse[e]] != step:
                return e, OK
            code = HALF_DUPLEX
        e += 1
    return -1, code


@nb.njit(cache=True)
def _run(links, transfers, order, step_ptr, rules, counts):
    """Take the transfers step by step; returns (position of the offending transfer or -1, its code).

    Per transfer, in order: claim a free parallel arc, count the sender and receiver, check both port
    budgets, then (unless the run stops here at ``rules.stop_at``) the messages moved, the link's load and
    the active nodes.
    """
    n = len(links.indptr) - 1
    arc_step = np.full(len(links.indices), -1, np.int64)
    arc_load = np.zeros(len(links.indices), np.int64)
    sends = np.zeros(n, np.int64)
    recvs = np.zeros(n, np.int64)
    sent_at = np.full(n, -1, np.int64)
    recv_at = np.full(n, -1, np.int64)
    active_at = np.full(n, -1, np.int64)
    ports, half = rules.ports, rules.half
    arc_of = np.empty(len(order), np.int64)
    _first_arcs(links, transfers, order, arc_of)
    for s in range(len(step_ptr) - 1):
        for i in range(step_ptr[s], step_ptr[s + 1]):
            t = order[i]
            u, v = transfers.src[t], transfers.dst[t]
            # stage 1: a free link
            e, code = _claim_arc(links, arc_step, arc_of[i], u, v, half, s)
            if e < 0:
                return i, code
            arc_step[e] = s
            arc_load[e] = 0
            # stage 2: ports (per-node counters restart the first time a node appears in a step)
            if sent_at[u] != s:
                sent_at[u] = s
                sends[u] = 0
                counts.senders[s] += 1
            if recv_at[v] != s:
                recv_at[v] = s
                recvs[v] = 0
                counts.receivers[s] += 1
            sends[u] += 1
            recvs[v] += 1
            if ports > 0:
                recv_u = recvs[u] if recv_at[u] == s else 0
                send_v = sends[v] if sent_at[v] == s else 0
                if sends[u] > ports or (half and sends[u] + recv_u > ports):
                    return i, PORT_SEND
                if recvs[v] > ports or (half and send_v + recvs[v] > ports):
                    return i, PORT_RECV
            if i == rules.stop_at:
                return i, STOPPED
            # stage 3: what moved
            for r in range(transfers.range_ptr[t], transfers.range_ptr[t + 1]):
                arc_load[e] += transfers.count[r]
                counts.moved[s] += transfers.count[r]
            if arc_load[e] > counts.max_link[s]:
                counts.max_link[s] = arc_load[e]
            if active_at[u] != s:
                active_at[u] = s
                counts.active[s] += 1
            if active_at[v] != s:
                active_at[v] = s
                counts.active[s] += 1
    return -1, OK


#: schedules of at least this many transfers find their arcs in parallel (:mod:`topocast.infra.parallel`)
PARALLEL_TRANSFERS = 200_000
_first_arcs_parallel = twin(_first_arcs, "_first_arcs_parallel")
_run_parallel = twin(_run, "_run_parallel", parallel=False, _first_arcs=_first_arcs_parallel)


@dataclass
class StepTrace:
    """What the step engine did; per-step arrays have one entry per step.

    ``order``: the transfers in the order the engine took them (by step),
    ``step_ptr``: step ``s`` is ``order[step_ptr[s]:step_ptr[s + 1]]``;
    ``stop_position``: the position in ``order`` where the engine stopped
    (-1: it ran to the end), ``stop_reason``: the rule broken there, in words
    (None when the run was stopped there on purpose, ``stop_at``).
    """

    steps: int
    senders: np.ndarray
    receivers: np.ndarray
    active: np.ndarray
    free: np.ndarray
    max_link_messages: np.ndarray
    messages_moved: np.ndarray
    ports: PortModel
    order: np.ndarray
    step_ptr: np.ndarray
    stop_position: int = -1
    stop_reason: str | None = None
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


def step_order(schedule: Schedule) -> np.ndarray:
    """Transfers ordered by step, and within a step by receiver when some node receives twice in a step
    (then the transfers into one node are taken one after the other).

    Parameters
    ----------
    schedule : Schedule
        A schedule with a step per transfer.

    Returns
    -------
    numpy.ndarray
        int64 transfer ids.
    """
    step, dst, count = schedule.step, schedule.dst, schedule.num_transfers
    if step is None:
        raise TopocastError("step engine: the schedule needs a step per transfer")
    order = by_step(step)
    if not _receivers_repeat(order, step, dst, schedule.num_nodes):
        return order
    return np.lexsort((np.arange(count), dst, step)).astype(np.int64)


def state_bytes(topology: Topology, schedule: Schedule) -> int:
    """Peak bytes of the engine's state: per transfer 16 (its order and first arc) plus 32 while a
    schedule whose nodes receive twice in a step is sorted by receiver; per arc 16, per node 40, per
    step 48."""
    nt = schedule.num_transfers
    return 48 * nt + 16 * topology.num_arcs + 40 * schedule.num_nodes + 48 * (schedule.num_steps + 1)


def simulate(topology: Topology, schedule: Schedule, ports: PortModel = PortModel(), *, stop_at: int = -1,
             max_bytes: float | None = None) -> StepTrace:
    """Run ``schedule`` in synchronous steps on ``topology`` under ``ports``; the trace for the verifier.

    Parameters
    ----------
    topology : Topology
        The network.
    schedule : Schedule
        Transfers with a step each.
    ports : PortModel
        Port budget per node and step, and duplex.
    stop_at : int, optional
        Stop at this position of the engine's order (after the transfer's link and port checks), as the
        run stops at a transfer whose sender lacks its data; -1: run to the end.
    max_bytes : float, optional
        Refuse (:class:`~topocast.errors.TopocastError`) when the state would pass this limit.

    Returns
    -------
    StepTrace
        Per-step counts, the order taken and where the run stopped.
    """
    from ..infra.footprint import guard

    if schedule.step is None:
        raise ValueError("the step engine needs a step per transfer")
    guard(f"the step engine on {schedule.num_transfers:,} transfers", state_bytes(topology, schedule), max_bytes)
    nsteps = schedule.num_steps
    order = step_order(schedule)
    step_ptr = np.searchsorted(schedule.step[order], np.arange(nsteps + 1)).astype(np.int64)
    rev = topology.reverse_arc if ports.duplex == "half" else _NO_REVERSE
    links = Links(topology.indptr, topology.indices, rev)
    transfers = Transfers(schedule.src, schedule.dst, schedule.range_ptr, schedule.range_first,
                          schedule.range_count)
    rules = Rules(0 if ports.ports is None else ports.ports, ports.duplex == "half", stop_at)
    counts = StepCounts(*(np.zeros(nsteps, np.int64) for _ in range(5)))
    kernel = _run_parallel if schedule.num_transfers >= PARALLEL_TRANSFERS else _run
    stop, code = kernel(links, transfers, order, step_ptr, rules, counts)
    free = topology.num_nodes - counts.active
    return StepTrace(nsteps, counts.senders, counts.receivers, counts.active, free, counts.max_link, counts.moved,
                     ports, order, step_ptr, int(stop), _MESSAGES.get(int(code)) if stop >= 0 else None)
