"""Event engine: store-and-forward timing under a :class:`CostModel`.

Each transfer is one store-and-forward hop.  It starts when (a) every message
it carries has arrived at its sender, (b) every transfer it depends on
(``after``) has arrived, and (c) its link direction is free (with
``duplex="half"`` the two directions share one channel; with a limit of ``P``
ports a node sends at most ``P`` transfers at once and receives at most ``P``:
a transfer takes the sender's send port and the receiver's receive port that
free first).  It holds the link for
:func:`~topocast.sim.models.link_time` ``(startup, per_byte, bytes)`` and
arrives ``per_hop`` later.

Order: a schedule with dependencies is simulated event by event (a
transfer becomes ready when its last dependency arrives; links serve ready
transfers in order of ready time).  A step schedule keeps its steps as an
order on each link but has no global barrier: every transfer goes as soon as
its data and its link allow.

When (a) holds: a message reaches a node at the earliest finish of the
transfers processed so far that brought it there (time 0 where it starts).
The engine keeps no time per (node, message) pair: before timing, one pass
per node finds each transfer's *feeders*, the transfers that bring its
messages to its sender (a message two transfers bring is fed by the earlier
of the two to finish, a *group*; one that nothing brings and does not start
there can never be sent).  A transfer then waits for its feeders' finish
times.  The engine stops at the first transfer that cannot start, its data
never having arrived (or that has no link); the verifier
(:func:`topocast.verify.delivery.check_events`) checks the trace and names the
missing message.

Reductions (:mod:`topocast.plans.schedule`): every node holds its partial of
every block from the start; a transfer's feeders are the transfers it reads
(:func:`topocast.plans.reads.reduction_reads`: the earlier-step receipts of
its blocks at its sender, or the hop a relay carries on), and the receiver's
combine time (``per_byte_reduce`` per byte) is added to its finish; a node
combines one received partial at a time, in the order the engine takes the
transfers.

State: per transfer about 128 bytes (times, order, heap entry, feeder
pointer, lists by sender and receiver) plus 8 per feeder (at most one per
transfer that brought some of its messages); per arc 16, per node 16; while
the feeders are found, per node a hash table of the messages it receives.
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
from ..topology.csr import bucket, first_arc
from . import heap
from .models import CostModel, PortModel, link_time
from .step import _NO_REVERSE, Links, Transfers

OK, NO_LINK, NOT_HELD = 0, 1, 2
#: feeder entries: a transfer id (>= 0), NEVER (the message never reaches the sender), or -(group + 2)
NEVER = -1
#: hash table values: the message starts at the node (held at time 0), several receipts bring it
_FREE, _MANY = -1, -2
_EMPTY = -1
#: transfers, or message deliveries, at or above which the feeders are found in parallel
PARALLEL_TRANSFERS, PARALLEL_DELIVERIES = 200_000, 2_000_000
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


class Feeders(NamedTuple):
    """Per transfer its feeder entries ``ids[ptr[t]:ptr[t + 1]]``; group ``g``'s transfers
    ``group_ids[group_ptr[g]:group_ptr[g + 1]]``."""

    ptr: np.ndarray
    ids: np.ndarray
    group_ptr: np.ndarray
    group_ids: np.ndarray


class NodeLists(NamedTuple):
    """Transfers by receiver and by sender, and messages by origin (CSR, ids increasing); per node the
    first global group id and group entry of its feeders."""

    in_ptr: np.ndarray
    in_ids: np.ndarray
    out_ptr: np.ndarray
    out_ids: np.ndarray
    origin_ptr: np.ndarray
    origin_msgs: np.ndarray
    group_base: np.ndarray
    entry_base: np.ndarray


class Costs(NamedTuple):
    """The cost model and port rules as plain numbers."""

    startup: float
    per_byte: float
    per_hop: float
    msg_bytes: float
    #: transfers a node may send (and receive) at once; 0: as many as it has links (all-port)
    ports: int
    half: bool
    #: reductions: the time a receiver takes to add one message of partials (gamma times its bytes)
    reduce: float


class Sequence(NamedTuple):
    """The order transfers are taken in: ``order`` (step schedules) or, with ``use_deps``, each transfer's
    successors ``succ[succ_ptr[t]:succ_ptr[t + 1]]`` and its number of dependencies from ``after_ptr``."""

    use_deps: bool
    order: np.ndarray
    succ_ptr: np.ndarray
    succ: np.ndarray
    after_ptr: np.ndarray


class Clock(NamedTuple):
    """Times the engine keeps: per channel when it frees, per node when its ports free, per arc its busy
    time, per transfer its start, finish, the latest arrival of its dependencies (empty without
    dependencies), its message count and whether its receiver combines it (reductions; empty otherwise),
    per node when it is done combining (a node adds one received partial at a time), and, when asked for,
    per transfer when its data was ready at its sender (empty otherwise)."""

    link_free: np.ndarray
    node_send: np.ndarray
    node_recv: np.ndarray
    arc_busy: np.ndarray
    start: np.ndarray
    finish: np.ndarray
    dep_ready: np.ndarray
    messages: np.ndarray
    combine: np.ndarray
    node_combine: np.ndarray
    ready: np.ndarray


# -- stage 1: the feeders of every transfer, one node at a time ----------------------------------------------


@nb.njit(cache=True, inline="always")
def _slot(keys, m, shift):
    """The hash table slot of message ``m``: where it is, or the empty slot where it goes."""
    top = len(keys) - 1
    i = np.int64((np.uint64(m) * _GOLDEN) >> np.uint64(shift))
    while keys[i] != _EMPTY and keys[i] != m:
        i = (i + 1) & top
    return i


@nb.njit(cache=True)
def _node_feeders(u, tr, lists, feeders, counting):
    """Feeders of the transfers out of node ``u``.

    ``counting``: count entries into ``feeders.ptr[t + 1]`` and return (groups, group entries) of ``u``;
    else write them at ``feeders.ptr[t]`` and the groups at ``lists.group_base[u]``.
    """
    in_lo, in_hi = lists.in_ptr[u], lists.in_ptr[u + 1]
    # stage 1: a hash table of the messages u starts with or receives, and who brings each: the local index
    # of the receipt, _FREE (it starts at u) or _MANY (several receipts bring it)
    size = lists.origin_ptr[u + 1] - lists.origin_ptr[u]
    for i in range(in_lo, in_hi):
        t = lists.in_ids[i]
        for r in range(tr.range_ptr[t], tr.range_ptr[t + 1]):
            size += tr.count[r]
    bits = 1
    while (1 << bits) < 2 * size:
        bits += 1
    shift = 64 - bits
    keys = np.full(1 << bits, _EMPTY, np.int64)
    who = np.empty(1 << bits, np.int64)
    for i in range(lists.origin_ptr[u], lists.origin_ptr[u + 1]):
        k = _slot(keys, lists.origin_msgs[i], shift)
        keys[k] = lists.origin_msgs[i]
        who[k] = _FREE
    repeated = 0
    for i in range(in_lo, in_hi):
        t = lists.in_ids[i]
        for r in range(tr.range_ptr[t], tr.range_ptr[t + 1]):
            for m in range(tr.first[r], tr.first[r] + tr.count[r]):
                k = _slot(keys, m, shift)
                if keys[k] == _EMPTY:
                    keys[k] = m
                    who[k] = i - in_lo
                elif who[k] >= 0:
                    who[k] = _MANY
                    repeated += 1
    # stage 2 (only when some message arrives twice): those messages form groups with their receipts
    group_of = np.full(1 if repeated == 0 else 1 << bits, -1, np.int64)
    group_ptr = np.zeros(repeated + 1, np.int64)
    if repeated:
        g = 0
        for k in range(1 << bits):
            if keys[k] != _EMPTY and who[k] == _MANY:
                group_of[k] = g
                g += 1
        for i in range(in_lo, in_hi):
            t = lists.in_ids[i]
            for r in range(tr.range_ptr[t], tr.range_ptr[t + 1]):
                for m in range(tr.first[r], tr.first[r] + tr.count[r]):
                    k = _slot(keys, m, shift)
                    if who[k] == _MANY:
                        group_ptr[group_of[k] + 1] += 1
        for g in range(repeated):
            group_ptr[g + 1] += group_ptr[g]
        if not counting:
            fill = group_ptr[:-1].copy()
            base, entry = lists.group_base[u], lists.entry_base[u]
            for g in range(repeated):
                feeders.group_ptr[base + g] = entry + group_ptr[g]
            for i in range(in_lo, in_hi):
                t = lists.in_ids[i]
                for r in range(tr.range_ptr[t], tr.range_ptr[t + 1]):
                    for m in range(tr.first[r], tr.first[r] + tr.count[r]):
                        k = _slot(keys, m, shift)
                        if who[k] == _MANY:
                            g = group_of[k]
                            feeders.group_ids[entry + fill[g]] = t
                            fill[g] += 1
    # stage 3: each transfer out of u, its feeders once each
    seen = np.full(in_hi - in_lo, -1, np.int64)
    seen_group = np.full(max(repeated, 1), -1, np.int64)
    for j in range(lists.out_ptr[u], lists.out_ptr[u + 1]):
        t = lists.out_ids[j]
        n_fed = 0 if counting else feeders.ptr[t]
        never = False
        for r in range(tr.range_ptr[t], tr.range_ptr[t + 1]):
            for m in range(tr.first[r], tr.first[r] + tr.count[r]):
                k = _slot(keys, m, shift)
                if keys[k] == _EMPTY:
                    never = True
                elif who[k] == _FREE:
                    continue
                elif who[k] == _MANY:
                    g = group_of[k]
                    if seen_group[g] != j:
                        seen_group[g] = j
                        if not counting:
                            feeders.ids[n_fed] = -(lists.group_base[u] + g + 2)
                        n_fed += 1
                elif seen[who[k]] != j:
                    seen[who[k]] = j
                    if not counting:
                        feeders.ids[n_fed] = lists.in_ids[in_lo + who[k]]
                    n_fed += 1
        if never:
            if not counting:
                feeders.ids[n_fed] = NEVER
            n_fed += 1
        if counting:
            feeders.ptr[t + 1] = n_fed
    return repeated, group_ptr[repeated]


@nb.njit(cache=True)
def _all_feeders(tr, lists, feeders, counting, node_groups, node_entries):
    """:func:`_node_feeders` for every node (in parallel in the twin); per node its groups and entries."""
    for u in nb.prange(len(lists.in_ptr) - 1):
        node_groups[u], node_entries[u] = _node_feeders(u, tr, lists, feeders, counting)


_all_feeders_parallel = twin(_all_feeders, "_all_feeders_parallel")



@nb.njit(cache=True)
def _message_counts(range_ptr, count):
    """Messages each transfer carries."""
    out = np.zeros(len(range_ptr) - 1, np.int64)
    for t in range(len(out)):
        for r in range(range_ptr[t], range_ptr[t + 1]):
            out[t] += count[r]
    return out


@nb.njit(cache=True)
def _busiest(dst, messages, n):
    """The most messages one node receives."""
    got = np.zeros(n, np.int64)
    for t in range(len(dst)):
        got[dst[t]] += messages[t]
    return got.max() if n else 0


def _feeders(schedule: Schedule, tr: Transfers, what: str, max_bytes: float | None) -> Feeders:
    """Stage 1: count every transfer's feeders (one hash table per node), check the memory, write them."""
    from ..infra.footprint import guard

    n, nt = schedule.num_nodes, schedule.num_transfers
    in_ptr, in_ids = bucket(schedule.dst, n)
    out_ptr, out_ids = bucket(schedule.src, n)
    origin_ptr, origin_msgs = bucket(schedule.origin, n)
    empty = np.zeros(1, np.int64)
    lists = NodeLists(in_ptr, in_ids, out_ptr, out_ids, origin_ptr, origin_msgs, empty, empty)
    counts = Feeders(np.zeros(nt + 1, np.int64), empty, empty, empty)
    node_groups, node_entries = np.zeros(n, np.int64), np.zeros(n, np.int64)
    parallel = nt >= PARALLEL_TRANSFERS or int(schedule.range_count.sum()) >= PARALLEL_DELIVERIES
    kernel = _all_feeders_parallel if parallel else _all_feeders
    kernel(tr, lists, counts, True, node_groups, node_entries)
    ptr = np.cumsum(counts.ptr, out=counts.ptr)
    groups, entries = int(node_groups.sum()), int(node_entries.sum())
    guard(f"{what}: {int(ptr[-1]):,} feeders", 8 * (int(ptr[-1]) + groups + entries + 2 * n), max_bytes)
    group_base = np.zeros(n, np.int64)
    np.cumsum(node_groups[:-1], out=group_base[1:])
    entry_base = np.zeros(n, np.int64)
    np.cumsum(node_entries[:-1], out=entry_base[1:])
    lists = lists._replace(group_base=group_base, entry_base=entry_base)
    feeders = Feeders(ptr, np.empty(max(1, int(ptr[-1])), np.int64), np.zeros(groups + 1, np.int64),
                      np.empty(max(1, entries), np.int64))
    feeders.group_ptr[groups] = entries
    kernel(tr, lists, feeders, False, node_groups, node_entries)
    return feeders


def _reads(schedule: Schedule, what: str, max_bytes: float | None, order: np.ndarray | None = None) -> Feeders:
    """Stage 1 of a reduction: every transfer waits for the transfers it reads
    (:func:`topocast.plans.reads.reduction_reads`; ``order``: the transfers by step, when known), each a
    feeder of its own."""
    from ..infra.footprint import guard
    from ..plans.reads import reduction_reads

    ptr, ids = reduction_reads(schedule, order)
    guard(f"{what}: {len(ids):,} reads", 8 * len(ids), max_bytes)
    return Feeders(ptr, ids if len(ids) else np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))


# -- stage 2: timing, transfer by transfer ---------------------------------------------------------------


@nb.njit(cache=True)
def _data_ready(t, feeders, finish, ready):
    """The latest arrival of transfer ``t``'s data at its sender (at least ``ready``), or -1.0 when some of it
    has not arrived (never, or only by transfers not processed yet)."""
    for k in range(feeders.ptr[t], feeders.ptr[t + 1]):
        f = feeders.ids[k]
        if f >= 0:
            a = finish[f]
        elif f == NEVER:
            return -1.0
        else:
            g = -f - 2
            a = np.inf
            for c in range(feeders.group_ptr[g], feeders.group_ptr[g + 1]):
                if finish[feeders.group_ids[c]] < a:  # a transfer not processed yet has a NaN finish
                    a = finish[feeders.group_ids[c]]
        if not a < np.inf:
            return -1.0
        if a > ready:
            ready = a
    return ready


@nb.njit(cache=True)
def _earliest(free):
    """The port that frees first (the lowest on a tie)."""
    best = 0
    for k in range(1, len(free)):
        if free[k] < free[best]:
            best = k
    return best


@nb.njit(cache=True)
def _process(t, links, tr, feeders, costs, clock):
    """Time transfer ``t``: OK, NO_LINK or NOT_HELD."""
    u, v = tr.src[t], tr.dst[t]
    e = first_arc(links.indptr, links.indices, u, v)
    if e < 0:
        return NO_LINK
    half, rev = costs.half, links.reverse
    best = e
    k = e + 1
    while k < links.indptr[u + 1] and links.indices[k] == v:  # parallel links: take the earliest free
        ch_k = min(k, rev[k]) if half else k
        ch_b = min(best, rev[best]) if half else best
        if clock.link_free[ch_k] < clock.link_free[ch_b]:
            best = k
        k += 1
    e = best
    channel = min(e, rev[e]) if half else e
    ready = _data_ready(t, feeders, clock.finish, clock.dep_ready[t] if len(clock.dep_ready) else 0.0)
    if ready < 0:
        return NOT_HELD
    if len(clock.ready):
        clock.ready[t] = ready
    begin = max(ready, clock.link_free[channel])
    out_slot = in_slot = 0
    if costs.ports:  # the earliest free of the sender's send ports and of the receiver's receive ports
        out_slot = _earliest(clock.node_send[u])
        in_slot = _earliest(clock.node_recv[v])
        begin = max(begin, clock.node_send[u, out_slot], clock.node_recv[v, in_slot])
    duration = link_time(costs.startup, costs.per_byte, clock.messages[t] * costs.msg_bytes)
    done = begin + duration
    clock.link_free[channel] = done
    if costs.ports:
        clock.node_send[u, out_slot] = done
        clock.node_recv[v, in_slot] = done
    clock.arc_busy[e] += duration
    clock.start[t] = begin
    arrive = done + costs.per_hop
    adding = costs.reduce * clock.messages[t] if len(clock.combine) and clock.combine[t] else 0.0
    if adding > 0:  # the receiver adds one partial at a time
        arrive = max(arrive, clock.node_combine[v]) + adding
        clock.node_combine[v] = arrive
    clock.finish[t] = arrive
    return OK


@nb.njit(cache=True)
def _simulate(seq, links, tr, feeders, costs, clock, taken):
    """Time every transfer: in ``order`` (step schedules) or, with dependencies, as a discrete-event loop
    where ready transfers leave in order of ready time.  ``taken`` receives the transfers in the order
    processed, then the one the run stopped at; returns (that transfer or -1, its code, transfers
    processed)."""
    nt = len(tr.src)
    use_deps = seq.use_deps
    waiting = seq.after_ptr[1:] - seq.after_ptr[:-1]
    # ready transfers by (ready time, index); sizes typed (a literal 0 would compile heap.push twice)
    size = max(1, nt) if use_deps else 1
    hkey = np.empty(size, np.float64)
    hitem = np.empty((size, 2), np.int64)
    hsize = np.int64(0)
    zero = np.int64(0)
    if use_deps:
        for t in range(nt):
            if waiting[t] == 0:
                hkey, hitem = heap.push(hkey, hitem, hsize, 0.0, zero, np.int64(t))
                hsize += 1
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
            t = seq.order[done]
        code = _process(t, links, tr, feeders, costs, clock)
        taken[done] = t
        if code != OK:
            return t, code, done
        done += 1
        if use_deps:
            for k in range(seq.succ_ptr[t], seq.succ_ptr[t + 1]):
                s = seq.succ[k]
                if clock.finish[t] > clock.dep_ready[s]:
                    clock.dep_ready[s] = clock.finish[t]
                waiting[s] -= 1
                if waiting[s] == 0:
                    hkey, hitem = heap.push(hkey, hitem, hsize, clock.dep_ready[s], zero, s)
                    hsize += 1
    return -1, OK, done


@nb.njit(cache=True)
def _arrival(n, origin, order, done, tr, finish):
    """Dense arrival times ``[node, message]`` of a run: 0 where a message starts, else the earliest finish
    of the processed transfers that brought it (inf: never)."""
    arrival = np.full((n, len(origin)), np.inf)
    for m in range(len(origin)):
        arrival[origin[m], m] = 0.0
    for i in range(done):
        t = order[i]
        v = tr.dst[t]
        for r in range(tr.range_ptr[t], tr.range_ptr[t + 1]):
            for m in range(tr.first[r], tr.first[r] + tr.count[r]):
                if finish[t] < arrival[v, m]:
                    arrival[v, m] = finish[t]
    return arrival


@dataclass
class EventTrace:
    """Timing of every transfer and link busy time, and where the run stopped.

    ``order``: the transfers in the order the engine processed them
    (``order[:done]``), then the one it stopped at; ``stop_transfer``: that
    transfer (-1: none); ``stop_reason``: the rule it broke in words, None
    when its data never reached its sender.  ``arrival`` (on first use, or at
    once with ``keep_arrival``): the dense ``[node, message]`` arrival
    times, ``8 * nodes * messages`` bytes.
    """

    start: np.ndarray
    finish: np.ndarray
    makespan: float
    arc_busy: np.ndarray
    cost: CostModel
    ports: PortModel
    order: np.ndarray
    done: int
    stop_transfer: int = -1
    stop_reason: str | None = None
    schedule: Schedule | None = field(default=None, repr=False)
    max_bytes: float | None = field(default=None, repr=False)
    _arrival: np.ndarray | None = field(default=None, repr=False)
    #: per transfer when its data was ready at its sender (``simulate(record_ready=True)``), else None
    ready: np.ndarray | None = field(default=None, repr=False)

    def link_utilisation(self) -> np.ndarray:
        """Busy time of each arc divided by the makespan."""
        return self.arc_busy / self.makespan if self.makespan > 0 else np.zeros_like(self.arc_busy)

    @property
    def arrival(self) -> np.ndarray:
        """Arrival time of every message at every node (inf: never), computed from the trace on first use."""
        if self._arrival is None:
            from ..infra.footprint import guard

            s = self.schedule
            if s is None:
                raise ValueError("arrival: the trace keeps no schedule to compute it from")
            guard(f"arrival times of {s.num_messages:,} messages on {s.num_nodes:,} nodes",
                  8 * s.num_nodes * s.num_messages, self.max_bytes)
            tr = Transfers(s.src, s.dst, s.range_ptr, s.range_first, s.range_count)
            self._arrival = _arrival(s.num_nodes, s.origin, self.order, self.done, tr, self.finish)
        return self._arrival


def state_bytes(topology: Topology, schedule: Schedule, ports: int = 1, messages: np.ndarray | None = None,
                record_ready: bool = False) -> int:
    """Peak bytes of the engine before its feeders are counted: per transfer 136 (start, finish, dependency
    time, waiting count, heap entry of 24, processed order, message count, combine time, feeder pointer,
    its place in the lists by sender and receiver, successor pointer), per dependency 16, per message 8 (the
    origin list), per arc 16, per node 48 plus 16 per port, and per thread the hash table of the node with the
    most receipts (32 bytes per slot, up to four slots per receipt); 8 more per transfer with
    ``record_ready``.  ``messages``: each transfer's message count, when known."""
    n, nt = schedule.num_nodes, schedule.num_transfers
    deps = 0 if schedule.after_ids is None else len(schedule.after_ids)
    per_transfer = _message_counts(schedule.range_ptr, schedule.range_count) if messages is None else messages
    busiest = _busiest(schedule.dst, per_transfer, n) if nt else 0
    return ((144 if record_ready else 136) * nt + 16 * deps + 8 * schedule.num_messages + 16 * topology.num_arcs
            + (48 + 16 * max(1, ports)) * n + nb.get_num_threads() * 32 * 4 * max(1, busiest))


def simulate(topology: Topology, schedule: Schedule, cost: CostModel = CostModel(), ports: PortModel = PortModel(),
             *, keep_arrival: bool = False, max_bytes: float | None = None, record_ready: bool = False
             ) -> EventTrace:
    """Time ``schedule`` on ``topology`` under ``cost`` and ``ports``; the trace for the verifier.

    Parameters
    ----------
    topology : Topology
        The network.
    schedule : Schedule
        Transfers with a step each, or with dependencies.
    cost : CostModel
        Start-up, time per byte, hop latency.
    ports : PortModel
        A port limit serialises a node's sends and receipts; half duplex shares a link's directions.
    keep_arrival : bool
        Compute the dense arrival matrix at once (it is otherwise computed on first use of
        :attr:`EventTrace.arrival`).
    max_bytes : float, optional
        Refuse (:class:`TopocastError`) when the state would pass this limit.
    record_ready : bool, default False
        Also record when each transfer's data was ready at its sender (:attr:`EventTrace.ready`: the time it
        starts waiting for its link and ports; per-link queue occupancy is derived from it).

    Returns
    -------
    EventTrace
        Start and finish of every transfer, link busy times, the order processed and where the run stopped.

    Raises
    ------
    TopocastError
        A dependency names a missing transfer, the dependencies contain a cycle, or the memory limit.
    """
    from ..infra.footprint import guard

    nt = schedule.num_transfers
    what = f"the event engine on {nt:,} transfers"
    messages = _message_counts(schedule.range_ptr, schedule.range_count)
    guard(what, state_bytes(topology, schedule, ports.ports or 1, messages, record_ready), max_bytes)
    tr = Transfers(schedule.src, schedule.dst, schedule.range_ptr, schedule.range_first, schedule.range_count)
    rev = topology.reverse_arc if ports.duplex == "half" else _NO_REVERSE
    links = Links(topology.indptr, topology.indices, rev)
    empty = np.zeros(1, np.int64)
    use_deps = schedule.after_ptr is not None
    if schedule.after_ptr is not None:
        ids = schedule.after_ids if schedule.after_ids is not None else np.zeros(0, np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= nt):
            raise TopocastError("schedule: a dependency names a transfer that does not exist")
        succ_order = np.argsort(ids, kind="stable")
        succ = np.repeat(np.arange(nt, dtype=np.int64), np.diff(schedule.after_ptr))[succ_order]
        succ_ptr = np.searchsorted(ids[succ_order], np.arange(nt + 1)).astype(np.int64)
        order, after_ptr = empty, schedule.after_ptr
    else:
        order = by_step(np.asarray(schedule.step))
        succ, succ_ptr, after_ptr = empty, empty, empty
    if schedule.is_reduction:
        feeders = _reads(schedule, what, max_bytes, None if use_deps else order)
    else:
        feeders = _feeders(schedule, tr, what, max_bytes)
    costs = Costs(cost.startup, cost.per_byte, cost.per_hop, float(schedule.message_bytes),
                  0 if ports.ports is None else int(ports.ports), ports.duplex == "half",
                  cost.combine_time(1.0) * schedule.message_bytes if schedule.is_reduction else 0.0)
    slots = max(1, costs.ports)
    n = topology.num_nodes
    combine = schedule.combine if schedule.combine is not None else np.zeros(0, bool)
    clock = Clock(np.zeros(len(topology.indices), np.float64), np.zeros((n, slots)), np.zeros((n, slots)),
                  np.zeros(len(topology.indices), np.float64), np.full(nt, np.nan), np.full(nt, np.nan),
                  np.zeros(nt if use_deps else 0), messages, combine, np.zeros(n),
                  np.full(nt if record_ready else 0, np.nan))
    # without dependencies the transfers are taken in ``order``: it doubles as the record of that order
    taken = order if not use_deps and nt else np.full(max(1, nt), -1, np.int64)
    seq = Sequence(use_deps, order, succ_ptr, succ, after_ptr)
    bad, code, done = _simulate(seq, links, tr, feeders, costs, clock, taken)
    if taken is order and bad >= 0:
        taken[done + 1:] = -1  # not processed
    if bad < 0 and done != nt:
        raise TopocastError("schedule: the dependencies contain a cycle")
    finish = clock.finish
    makespan = float(np.nanmax(finish)) if len(finish) and not np.all(np.isnan(finish)) else 0.0
    reason = "there is no link between them" if code == NO_LINK else None
    trace = EventTrace(clock.start, finish, makespan, clock.arc_busy, cost, ports, taken, int(done), int(bad),
                       reason, schedule, max_bytes, ready=clock.ready if record_ready else None)
    if keep_arrival:
        trace.arrival  # noqa: B018 - computed now, as asked
    return trace
