"""Verification shared by every engine: who holds which message, exactly once or not.

No engine imports this module: an engine records what happened (its trace)
and the measure adapter hands the trace here.  One :class:`Verification`
comes out, whatever the engine.

Schedules (step and event engines): :func:`check_deliveries` replays the
transfers an engine ran, in the engine's order, one node at a time.  A node's
state is a bit set over the message ids (message ``m`` is bit ``m % 64`` of
word ``m // 64``), set from the messages that start there; the transfers
*into* the node set bits (counting every receipt, and as redundant every bit
already set), and before each transfer *out of* the node the bits show
whether the node held what it sends.  Whether a receipt is visible to a send
is the engine's rule, given as a key per transfer: a receipt counts for a
send when its key is smaller (the step engine: the step, so a node forwards
only what it held before the step; the event engine: the position in the
order the engine processed its transfers).  So the state is one bit set per
thread (``messages / 8`` bytes) plus about 24 bytes per transfer, never a
``nodes x messages`` matrix: an all-to-all of ``N^2`` messages needs no
``N^3`` bits.  Per node it also keeps what the metrics need, computed on the
fly: the step (or time) at which the node held everything it needs and,
with groups, everything that started in its group.

Every node's replay is independent, so they run in parallel (chunks of nodes,
each thread with its own bit sets).  Times are exact: a message a node
receives once arrives when that transfer finishes; a node that receives a
message twice (the run already fails exactly-once) gets its completion time
from every receipt, the earliest per message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.bits import lowest_bit, popcount, range_mask
from ..infra.parallel import twin
from ..infra.sorting import argsort_stable
from ..plans.schedule import Schedule
from ..topology.csr import bucket

if TYPE_CHECKING:
    from ..plans.frontier import FrontierPlan
    from ..plans.wormhole import WormPlan

#: greater than every key (positions and steps are int64)
_NEVER = np.int64(2**63 - 1)
#: transfers, or message deliveries, at or above which the parallel build of the replay runs
PARALLEL_TRANSFERS, PARALLEL_DELIVERIES = 200_000, 2_000_000
#: node chunks per thread (each chunk allocates its bit sets once)
CHUNKS_PER_THREAD = 16
#: bytes the replay keeps per transfer (its position, its place in the receiver's and the sender's list) and
#: per node (ten findings and list pointers)
PER_TRANSFER, PER_NODE = 24, 104


@dataclass(frozen=True)
class Verification:
    """What every engine's run is checked for, whatever the engine.

    ``complete``: every delivery the run promises happened; ``exactly_once``:
    complete and no node received a message it already held;
    ``first_violation`` names the first broken rule (a transfer of data the
    sender lacks, a link used twice, a message that never arrives ...).
    ``promise`` says in words what was checked, ``in_flight_at_end`` counts
    deliveries outside the promise that had not happened when the run stopped
    (wormhole drain window).
    """

    complete: bool
    redundant_receipts: int
    missing_deliveries: int
    first_violation: str | None
    receipts: int = 0
    promise: str = ""
    in_flight_at_end: int = 0

    @property
    def exactly_once(self) -> bool:
        return self.complete and self.redundant_receipts == 0

    @property
    def verified(self) -> bool:
        return self.exactly_once and self.first_violation is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "verified": self.verified,
            "complete": self.complete,
            "exactly_once": self.exactly_once,
            "redundant_receipts": int(self.redundant_receipts),
            "missing_deliveries": int(self.missing_deliveries),
            "first_violation": self.first_violation,
        }


def verdict(complete: bool, redundant: int, missing: int, violation: str | None = None, *, receipts: int = 0,
            promise: str = "", in_flight: int = 0, what: str = "delivery") -> Verification:
    """A :class:`Verification`, naming a first violation when the counts show one and none was given."""
    if violation is None and redundant:
        violation = f"{redundant} redundant {what} receipts (a node received a {what} it already held)"
    if violation is None and not complete:
        violation = f"{missing} required {what}s never happen"
    return Verification(bool(complete), int(redundant), int(missing), violation, int(receipts), promise,
                        int(in_flight))




class DeliveryPlan(NamedTuple):
    """What a schedule promises, as arrays for the replay kernel."""

    src: np.ndarray
    dst: np.ndarray
    range_ptr: np.ndarray
    first: np.ndarray
    counts: np.ndarray
    #: origin node of every message
    origin: np.ndarray
    #: the messages that start at node ``v``: ``origin_msgs[origin_ptr[v]:origin_ptr[v + 1]]``
    origin_ptr: np.ndarray
    origin_msgs: np.ndarray
    #: the messages node ``v`` must end holding (unused when ``all_required``)
    target_ptr: np.ndarray
    target_msgs: np.ndarray
    all_required: bool
    #: a group per node (used when ``grouped``) and, per group, how many messages start in it
    groups: np.ndarray
    group_need: np.ndarray
    grouped: bool


class EngineRun(NamedTuple):
    """What an engine did, as arrays for the replay kernel.

    ``key``: a receipt is visible to a send when ``key[receipt] < key[send]``.
    ``pos``: each transfer's position in the engine's order (-1: not run).
    ``when``: finish times (``timed``), else unused.  ``in_ptr``/``in_ids``:
    the delivered transfers by receiver, ``out_ptr``/``out_ids``: the
    transfers whose data was needed, by sender, both in the engine's order.
    """

    key: np.ndarray
    pos: np.ndarray
    when: np.ndarray
    timed: bool
    in_ptr: np.ndarray
    in_ids: np.ndarray
    out_ptr: np.ndarray
    out_ids: np.ndarray


class NodeFindings(NamedTuple):
    """Per node: what it needs and holds at the end, its receipts, its first send without the data, its
    completion (step or time; -1 / inf: never) and group completion."""

    need: np.ndarray
    have: np.ndarray
    receipts: np.ndarray
    redundant: np.ndarray
    fail_pos: np.ndarray
    fail_msg: np.ndarray
    completion: np.ndarray
    group_completion: np.ndarray


@nb.njit(cache=True, inline="always")
def _first_lacking(held: np.ndarray, plan: DeliveryPlan, t: int) -> int:
    """The first message transfer ``t`` carries (range by range) that is not set in ``held``, or -1."""
    for r in range(plan.range_ptr[t], plan.range_ptr[t + 1]):
        lo = plan.first[r]
        hi = lo + plan.counts[r]
        for w in range(lo // 64, (hi + 63) // 64):
            missing = range_mask(w, lo, hi) & ~held[w]
            if missing:
                return w * 64 + lowest_bit(missing)
    return -1


@nb.njit(cache=True, inline="always")
def _take(held: np.ndarray, req: np.ndarray, plan: DeliveryPlan, v: int, t: int) -> tuple[int, int, int, int, int]:
    """Set the bits of transfer ``t``'s messages at node ``v``; returns (receipts, redundant, newly
    required, newly held of ``v``'s group, words touched)."""
    receipts = 0
    redundant = 0
    fresh_required = 0
    fresh_group = 0
    touched = 0
    for r in range(plan.range_ptr[t], plan.range_ptr[t + 1]):
        lo = plan.first[r]
        hi = lo + plan.counts[r]
        receipts += plan.counts[r]
        again = 0
        for w in range(lo // 64, (hi + 63) // 64):
            mask = range_mask(w, lo, hi)
            old = held[w]
            if mask & old:
                again += popcount(mask & old)
            if not plan.all_required:
                fresh_required += popcount(mask & ~old & req[w])
            if plan.grouped:
                fresh = mask & ~old
                while fresh:
                    m = w * 64 + lowest_bit(fresh)
                    if plan.groups[plan.origin[m]] == plan.groups[v]:
                        fresh_group += 1
                    fresh &= fresh - np.uint64(1)
            held[w] = old | mask
            touched += 1
        redundant += again
        if plan.all_required:
            fresh_required += plan.counts[r] - again
    return receipts, redundant, fresh_required, fresh_group, touched


@nb.njit(cache=True)
def _exact_times(held: np.ndarray, req: np.ndarray, plan: DeliveryPlan, run: EngineRun,
                 v: int) -> tuple[float, float]:
    """(completion, group completion) of node ``v`` from every receipt, the earliest per message: for a
    node that received some message twice.  ``req`` still holds ``v``'s required bits."""
    total = 0
    for i in range(run.in_ptr[v], run.in_ptr[v + 1]):
        t = run.in_ids[i]
        for r in range(plan.range_ptr[t], plan.range_ptr[t + 1]):
            total += plan.counts[r]
    msgs = np.empty(total, np.int64)
    times = np.empty(total, np.float64)
    k = 0
    for i in range(run.in_ptr[v], run.in_ptr[v + 1]):
        t = run.in_ids[i]
        for r in range(plan.range_ptr[t], plan.range_ptr[t + 1]):
            for m in range(plan.first[r], plan.first[r] + plan.counts[r]):
                msgs[k] = m
                times[k] = run.when[t]
                k += 1
    order = argsort_stable(msgs)
    latest = 0.0
    group_latest = 0.0
    a = 0
    while a < total:
        m = msgs[order[a]]
        earliest = times[order[a]]
        b = a + 1
        while b < total and msgs[order[b]] == m:
            earliest = min(earliest, times[order[b]])
            b += 1
        if plan.origin[m] != v:  # a message that starts at v arrived at time 0
            if plan.all_required or (req[m >> 6] >> np.uint64(m & 63)) & np.uint64(1):
                latest = max(latest, earliest)
            if plan.grouped and plan.groups[plan.origin[m]] == plan.groups[v]:
                group_latest = max(group_latest, earliest)
        a = b
    return latest, group_latest


@nb.njit(cache=True)
def _replay_node(plan: DeliveryPlan, run: EngineRun, found: NodeFindings, v: int, held: np.ndarray,
                 req: np.ndarray) -> None:
    """Replay node ``v``: its start, its receipts and sends merged in the engine's order, its findings."""
    # stage 1: what v holds at the start and what it must end holding
    for i in range(plan.origin_ptr[v], plan.origin_ptr[v + 1]):
        m = plan.origin_msgs[i]
        held[m >> 6] |= np.uint64(1) << np.uint64(m & 63)
    if plan.all_required:
        need = len(plan.origin)
        have = plan.origin_ptr[v + 1] - plan.origin_ptr[v]
    else:
        need = plan.target_ptr[v + 1] - plan.target_ptr[v]
        have = 0
        for i in range(plan.target_ptr[v], plan.target_ptr[v + 1]):
            m = plan.target_msgs[i]
            req[m >> 6] |= np.uint64(1) << np.uint64(m & 63)
            if plan.origin[m] == v:
                have += 1
    group_have = plan.origin_ptr[v + 1] - plan.origin_ptr[v]
    done_step = 0 if have >= need else -1
    latest = 0.0
    group_latest = 0.0
    receipts = 0
    redundant = 0
    fail_pos = -1
    fail_msg = -1
    touched = 0
    # stage 2: receipts and sends in the engine's order; a receipt counts for a send when its key is smaller
    i, i_end = run.in_ptr[v], run.in_ptr[v + 1]
    j, j_end = run.out_ptr[v], run.out_ptr[v + 1]
    while True:
        limit = run.key[run.out_ids[j]] if j < j_end else _NEVER
        while i < i_end and run.key[run.in_ids[i]] < limit:
            t = run.in_ids[i]
            got, dup, fresh, fresh_group, words = _take(held, req, plan, v, t)
            touched += words
            receipts += got
            redundant += dup
            have += fresh
            group_have += fresh_group
            if fresh and run.timed:
                latest = max(latest, run.when[t])
            if fresh_group and run.timed:
                group_latest = max(group_latest, run.when[t])
            if done_step < 0 and have >= need:
                done_step = run.key[t] + 1
            i += 1
        if j == j_end:
            break
        if fail_pos < 0:
            m = _first_lacking(held, plan, run.out_ids[j])
            if m >= 0:
                fail_pos = run.pos[run.out_ids[j]]
                fail_msg = m
        j += 1
    # stage 3: findings (times from every receipt if v received something twice)
    if run.timed and redundant:
        latest, group_latest = _exact_times(held, req, plan, run, v)
    found.need[v] = need
    found.have[v] = have
    found.receipts[v] = receipts
    found.redundant[v] = redundant
    found.fail_pos[v] = fail_pos
    found.fail_msg[v] = fail_msg
    if run.timed:
        found.completion[v] = latest if have >= need else np.inf
        if plan.grouped:
            found.group_completion[v] = group_latest if group_have >= plan.group_need[plan.groups[v]] else np.inf
    else:
        found.completion[v] = done_step
    # stage 4: clear the words v used, for the next node of this chunk
    for i in range(plan.origin_ptr[v], plan.origin_ptr[v + 1]):
        held[plan.origin_msgs[i] >> 6] = 0
    if 2 * touched >= len(held):
        for w in range(len(held)):
            held[w] = 0
    else:
        for i in range(run.in_ptr[v], run.in_ptr[v + 1]):
            t = run.in_ids[i]
            for r in range(plan.range_ptr[t], plan.range_ptr[t + 1]):
                for w in range(plan.first[r] // 64, (plan.first[r] + plan.counts[r] + 63) // 64):
                    held[w] = 0
    if not plan.all_required:
        for i in range(plan.target_ptr[v], plan.target_ptr[v + 1]):
            req[plan.target_msgs[i] >> 6] = 0


@nb.njit(cache=True)
def _replay(plan: DeliveryPlan, run: EngineRun, found: NodeFindings, bounds: np.ndarray, words: int) -> None:
    """Replay every node, chunk by chunk (chunk ``c``: nodes ``bounds[c] .. bounds[c + 1] - 1``), each chunk
    with its own bit sets of ``words`` words (in parallel in :data:`_replay_parallel`)."""
    for c in nb.prange(len(bounds) - 1):
        held = np.zeros(words, np.uint64)
        req = np.zeros(1 if plan.all_required else words, np.uint64)
        for v in range(bounds[c], bounds[c + 1]):
            _replay_node(plan, run, found, v, held, req)


_replay_parallel = twin(_replay, "_replay_parallel")



@nb.njit(cache=True)
def _bucket_transfers(node_of: np.ndarray, order: np.ndarray, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The transfers ``order[:k]`` grouped by ``node_of`` (their receiver or sender), in that order."""
    ptr = np.zeros(n + 1, np.int64)
    for i in range(k):
        ptr[node_of[order[i]] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    ids = np.empty(k, np.int64)
    fill = ptr[:-1].copy()
    for i in range(k):
        u = node_of[order[i]]
        ids[fill[u]] = order[i]
        fill[u] += 1
    return ptr, ids


@nb.njit(cache=True)
def _targets_by_node(ptr: np.ndarray, ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Required messages per node from the targets per message (CSR ``ptr, ids``)."""
    out_ptr = np.zeros(n + 1, np.int64)
    for i in range(len(ids)):
        out_ptr[ids[i] + 1] += 1
    for v in range(n):
        out_ptr[v + 1] += out_ptr[v]
    msgs = np.empty(len(ids), np.int64)
    fill = out_ptr[:-1].copy()
    for m in range(len(ptr) - 1):
        for i in range(ptr[m], ptr[m + 1]):
            msgs[fill[ids[i]]] = m
            fill[ids[i]] += 1
    return out_ptr, msgs


@nb.njit(cache=True)
def _positions(order: np.ndarray, k: int, size: int) -> np.ndarray:
    """Position of each transfer in ``order[:k]`` (-1 for the others)."""
    pos = np.full(size, -1, np.int64)
    for i in range(k):
        pos[order[i]] = i
    return pos


@dataclass(frozen=True)
class Delivery:
    """What :func:`check_deliveries` found: the verdict and the per-node completion it computed on the way.

    ``completion``: per node, the step after which it held all it needs (0: from the start, -1: never) for a
    run in steps, or the time it did (``inf``: never) for a timed run.  ``group_completion`` (timed runs
    with groups): the time each node held every message that started in its group.  ``data_stop``: the
    position, in the engine's order, of the first transfer whose sender lacked its data (-1: none).
    ``method`` and ``error_bound``: a reduction's check (:mod:`topocast.verify.reduction`), exact or by
    fingerprints with the probability that a fault went unseen; empty for the other collectives; ``loss``
    what a lossy reduction check found short.
    """

    verification: Verification
    completion: np.ndarray
    group_completion: np.ndarray | None = None
    data_stop: int = -1
    method: str = ""
    error_bound: float = 0.0
    #: a reduction planned for the intact network run on a degraded one: what the required sums miss
    #: (``sums_short``, ``contributions_lost``; :mod:`topocast.verify.reduction`)
    loss: dict[str, int] = field(default_factory=dict)


@nb.njit(cache=True)
def _most_receipts(dst: np.ndarray, range_ptr: np.ndarray, count: np.ndarray, n: int) -> int:
    """The most messages any one node receives."""
    got = np.zeros(n, np.int64)
    for t in range(len(dst)):
        for r in range(range_ptr[t], range_ptr[t + 1]):
            got[dst[t]] += count[r]
    return got.max() if n else 0


def replay_bytes(schedule: Schedule, checked: int | None = None, timed: bool = False) -> int:
    """Peak bytes :func:`check_deliveries` adds for ``schedule``: :data:`PER_TRANSFER` per transfer, per message
    its origin list entry (8) and, for targets given per message, one entry per (message, target) pair and
    the pointers of the targets (16); :data:`PER_NODE` per node; per thread two bit sets of ``messages / 8``
    bytes (three counted per thread) and, for a timed run, the receipts of the busiest node (24 bytes each:
    message, time and sort order, for a node that received some message twice)."""
    n, m, nt = schedule.num_nodes, schedule.num_messages, schedule.num_transfers
    nt = nt if checked is None else checked
    pairs = 0 if isinstance(schedule.targets, str) else 8 * len(schedule.target_csr()[1]) + 8 * m
    words = max(1, (m + 63) // 64)
    threads = nb.get_num_threads()
    busiest = 0
    if timed and schedule.num_transfers:
        busiest = int(_most_receipts(schedule.dst, schedule.range_ptr, schedule.range_count, n))
    return (PER_TRANSFER * nt + 8 * m + pairs + PER_NODE * (n + 1)
            + threads * (3 * 2 * 8 * words + 24 * busiest))


def check_deliveries(schedule: Schedule, order: np.ndarray, applied: int, checked: int, *,
                     key: np.ndarray | None = None, finish: np.ndarray | None = None, groups: np.ndarray | None = None,
                     max_bytes: float | None = None) -> tuple[NodeFindings, int, int]:
    """Replay what an engine ran and return the per-node findings, the first send without its data and the
    message it lacked.

    Parameters
    ----------
    schedule : Schedule
        The plan the engine ran.
    order : numpy.ndarray
        Transfer ids in the order the engine took them.
    applied : int
        ``order[:applied]`` delivered their messages.
    checked : int
        ``order[:checked]`` needed their senders to hold their data (``checked >= applied`` or the
        transfers of a step the engine stopped in).
    key : numpy.ndarray, optional
        A receipt counts for a send when its key is smaller; default: the position in ``order``.
    finish : numpy.ndarray, optional
        Finish time of each transfer: completion is then a time, else a step (``key + 1``).
    groups : numpy.ndarray, optional
        A group per node: also the time each node held every message that started in its group.
    max_bytes : float, optional
        Refuse (:class:`TopocastError`) when the replay would need more.

    Returns
    -------
    tuple
        ``(findings, position, message)``: :class:`NodeFindings`, and the position in ``order`` of the
        first transfer whose sender lacked a message with that message (-1, -1: none).
    """
    from ..infra.footprint import guard

    n, nt = schedule.num_nodes, schedule.num_transfers
    words = max(1, (schedule.num_messages + 63) // 64)
    guard(f"verifying {schedule.num_messages:,} messages over {checked:,} transfers on {n:,} nodes",
          replay_bytes(schedule, checked, finish is not None), max_bytes)
    order = np.asarray(order, dtype=np.int64)
    pos = _positions(order, checked, nt)
    in_ptr, in_ids = _bucket_transfers(schedule.dst, order, applied, n)
    out_ptr, out_ids = _bucket_transfers(schedule.src, order, checked, n)
    origin_ptr, origin_msgs = bucket(schedule.origin, n)
    all_required = isinstance(schedule.targets, str)
    empty = np.zeros(1, np.int64)
    if all_required:
        target_ptr, target_msgs = empty, empty
    else:
        target_ptr, target_msgs = _targets_by_node(*schedule.target_csr(), n)
    grouped = groups is not None
    group_of, group_need = empty, empty
    if groups is not None:
        group_of = np.asarray(groups, dtype=np.int64)
        group_need = np.bincount(group_of[schedule.origin], minlength=int(group_of.max(initial=0)) + 1)
        group_need = group_need.astype(np.int64)
    plan = DeliveryPlan(schedule.src, schedule.dst, schedule.range_ptr, schedule.range_first, schedule.range_count,
                        schedule.origin, origin_ptr, origin_msgs, target_ptr, target_msgs, all_required,
                        group_of, group_need, grouped)
    timed = finish is not None
    run = EngineRun(pos if key is None else key, pos, finish if finish is not None else np.zeros(1), timed,
                    in_ptr, in_ids, out_ptr, out_ids)
    need, have, receipts, redundant, fail_pos, fail_msg = (np.zeros(n, np.int64) for _ in range(6))
    found = NodeFindings(need, have, receipts, redundant, fail_pos, fail_msg, np.zeros(n, np.float64),
                         np.zeros(n if grouped else 1, np.float64))
    threads = nb.get_num_threads()
    chunks = max(1, min(n, threads * CHUNKS_PER_THREAD))
    bounds = np.linspace(0, n, chunks + 1).astype(np.int64)
    parallel = nt >= PARALLEL_TRANSFERS or int(schedule.range_count.sum()) >= PARALLEL_DELIVERIES
    (_replay_parallel if parallel else _replay)(plan, run, found, bounds, words)
    failed = found.fail_pos >= 0
    if not failed.any():
        return found, -1, -1
    first = int(np.flatnonzero(failed)[np.argmin(found.fail_pos[failed])])
    return found, int(found.fail_pos[first]), int(found.fail_msg[first])


def delivery_verdict(schedule: Schedule, found: NodeFindings, violation: str | None) -> Verification:
    """The :class:`Verification` of a replay: complete when every node holds all it needs, exactly once when
    nothing arrived twice; ``violation`` (the engine's or a send without its data) comes first."""
    missing = int((found.need - found.have).sum())
    complete = missing == 0
    if violation is None and not complete:
        node = int(np.flatnonzero(found.have < found.need)[0])
        violation = (f"node {node} ends holding {int(found.have[node])} of the {int(found.need[node])} "
                     "messages it needs")
    promise = ("every node holds every message" if isinstance(schedule.targets, str)
               else "every target holds each message addressed to it")
    return verdict(complete, int(found.redundant.sum()), missing, violation, receipts=int(found.receipts.sum()),
                   promise=promise, what="message")


def describe_transfer(schedule: Schedule, t: int) -> str:
    """``transfer 7 (step 2) 3 -> 4``: a transfer named for a violation."""
    where = f"step {int(schedule.step[t])}" if schedule.step is not None else "dependency order"
    return f"transfer {t} ({where}) {int(schedule.src[t])} -> {int(schedule.dst[t])}"


def check_steps(schedule: Schedule, trace: Any, max_bytes: float | None = None) -> Delivery:
    """Verify a run of the step engine (:class:`topocast.sim.step.StepTrace`) on its trace.

    A transfer may carry only what its sender held before its step; deliveries of the step the engine
    stopped in (a link or port rule broken) do not count.  When a sender lacks its data before the
    engine's stop, the run stops there instead (``data_stop``: the engine's per-step counts then need a
    second run stopped at that position, which :mod:`topocast.measure.step` makes).

    Parameters
    ----------
    schedule : Schedule
        The plan the engine ran.
    trace : StepTrace
        Its trace: ``order`` (transfers by step), ``step_ptr``, ``stop_position`` (-1: none) and
        ``stop_reason``.
    max_bytes : float, optional
        Refuse when the replay would pass this limit.

    Returns
    -------
    Delivery
        The verdict, per node the step after which it held all it needs (-1: never), ``data_stop``.
    """
    nt = schedule.num_transfers
    order, stop = trace.order, int(trace.stop_position)
    step = schedule.step
    if step is None:
        raise TopocastError("step engine: the schedule needs a step per transfer")

    def limits(position: int) -> tuple[int, int]:
        if position < 0:
            return nt, nt
        return int(trace.step_ptr[step[order[position]]]), position

    applied, checked = limits(stop)
    found, lacking, message = check_deliveries(schedule, order, applied, checked, key=schedule.step,
                                               max_bytes=max_bytes)
    violation = None
    if lacking >= 0:
        applied, _ = limits(lacking)
        found, _, message = check_deliveries(schedule, order, applied, lacking + 1, key=schedule.step,
                                             max_bytes=max_bytes)
        t = int(order[lacking])
        violation = (f"{describe_transfer(schedule, t)} carries message {message}, which node "
                     f"{int(schedule.src[t])} does not hold yet")
    elif stop >= 0:
        violation = f"{describe_transfer(schedule, int(order[stop]))} is rejected: {trace.stop_reason}"
    completion = found.completion.astype(np.int64)
    return Delivery(delivery_verdict(schedule, found, violation), completion, None, lacking)


def check_events(schedule: Schedule, trace: Any, groups: np.ndarray | None = None,
                 max_bytes: float | None = None) -> Delivery:
    """Verify a run of the event engine (:class:`topocast.sim.event.EventTrace`) on its trace.

    A transfer may carry only what reached its sender by a transfer processed before it; the engine stops
    at the first that cannot start (its data never arrives, or it has no link).

    Parameters
    ----------
    schedule : Schedule
        The plan the engine ran.
    trace : EventTrace
        Its trace: ``order`` (processed transfers, then the one it stopped at), ``done`` (how many were
        processed), ``finish``, ``stop_transfer`` (-1: none), ``stop_reason`` (None: its data never
        arrived).
    groups : numpy.ndarray, optional
        A group per node: also the time each node held every message that started in its group.
    max_bytes : float, optional
        Refuse when the replay would pass this limit.

    Returns
    -------
    Delivery
        The verdict, per node the time it held all it needs (inf: never), per node its group completion.
    """
    done, stop = int(trace.done), int(trace.stop_transfer)
    lacks = stop >= 0 and trace.stop_reason is None
    found, lacking, message = check_deliveries(schedule, trace.order, done, done + lacks, finish=trace.finish,
                                               groups=groups, max_bytes=max_bytes)
    violation = None
    if lacking >= 0:
        t = int(trace.order[lacking])
        violation = (f"{describe_transfer(schedule, t)} carries message {message}, which node "
                     f"{int(schedule.src[t])} never receives before it")
    elif lacks:
        violation = (f"{describe_transfer(schedule, stop)} carries data that node {int(schedule.src[stop])} "
                     "receives only at an infinite time")
    elif stop >= 0:
        violation = f"{describe_transfer(schedule, stop)} is rejected: {trace.stop_reason}"
    group_completion = found.group_completion if groups is not None else None
    return Delivery(delivery_verdict(schedule, found, violation), found.completion, group_completion, lacking)


# -- wormhole engine

def wormhole_deliveries(plan: WormPlan, trace: Any) -> Verification:
    """Check a wormhole run (Al-Dubai et al. 2003, section 4): each destination absorbs exactly one copy.

    The promise: every multicast released before the drain window starts
    (warm-up and measured window) reaches every destination exactly once
    before the run stops.  Destinations of multicasts released in the drain
    window that have not received it when the run stops are
    ``in_flight_at_end``, not missing.  A load point whose measured window
    does not drain (saturation) therefore fails the promise, and says so.
    Other violations: a destination on no worm's path or on two (checked on
    the plan), a second copy, a worm that ended without delivering, a
    deadlock.  ``receipts - redundant_receipts + missing_deliveries +
    in_flight_at_end`` is the number of destinations summed over the
    multicasts.
    """
    t = plan.traffic
    count = np.asarray(trace.slot_count, dtype=np.int64)
    slot_worm, _, planned = t.slot_paths
    waiting = (count == 0) & (planned > 0)
    lost = waiting & (trace.worm_done[np.maximum(slot_worm, 0)] >= 0)
    late = waiting & ~lost
    released = plan.generated[plan.slot_multicast()]
    promised = released < plan.drain_start
    stuck = late & (promised | (trace.deadlock is not None))
    missing = (planned == 0) | lost | stuck
    redundant = int(np.clip(count - 1, 0, None).sum())
    violation = _worm_violation(plan, trace, planned, count, lost, stuck)
    what = "multicast" if plan.collective == "multicast" else "message"
    promise = (f"every destination of every {what} released before cycle {plan.drain_start} (the drain window) "
               "receives exactly one copy before the run stops; drain-window deliveries still under way are in "
               "flight, not missing; no deadlock")
    return verdict(not missing.any(), redundant, int(missing.sum()), violation, receipts=int(count.sum()),
                   promise=promise, in_flight=int((late & ~stuck).sum()), what="delivery")


def _worm_violation(plan: WormPlan, trace: Any, planned: np.ndarray, count: np.ndarray, lost: np.ndarray,
                    stuck: np.ndarray) -> str | None:
    """The first broken rule of a wormhole run, named after its multicast and destination."""
    if trace.deadlock is not None:
        return str(trace.deadlock)
    checks = ((planned > 1, "the plan sends destination {node} {planned} copies"),
              (count > 1, "destination {node} received {count} copies"),
              (planned == 0, "destination {node} is on no worm's path"),
              (lost, "the worm serving destination {node} ended without delivering it"),
              (stuck, "destination {node} had not received it when the run stopped at cycle "
                      f"{int(trace.cycles)}: the measured window did not drain (saturated load point)"))
    for mask, text in checks:
        bad = np.flatnonzero(mask)
        if len(bad):
            s = int(bad[0])
            m = int(np.searchsorted(plan.slot_ptr, s, side="right") - 1)
            where = f"multicast {m} from node {int(plan.source[m])} (generated at cycle {int(plan.generated[m])})"
            return f"{where}: " + text.format(node=int(plan.traffic.slot_node[s]), planned=int(planned[s]),
                                              count=int(count[s]))
    return None


# -- frontier engine


def frontier_verification(trace: Any, plan: FrontierPlan) -> Verification:
    """Check a frontier run (:mod:`topocast.sim.frontier`): every node reached, none twice, half-duplex kept.

    ``trace`` follows the message of the plan's source.  Under translation
    symmetry (``plan.symmetric``: every node's message runs the same pattern
    shifted) each count stands for all ``nodes`` messages, and a step that uses
    a link label and its reverse (``plan.label_reverse``) uses some link both
    ways.
    """
    nodes = int(trace.nodes)
    copies = nodes if plan.symmetric else 1
    redundant = int(trace.redundant.sum()) * copies
    missing = (nodes - int(trace.held_total)) * copies
    receipts = int(trace.transfers.sum()) * copies
    violation = None
    if trace.first_redundant is not None:
        node, step = trace.first_redundant
        violation = f"node {node} receives the message a second time in step {step + 1}"
    elif missing:
        violation = f"{nodes - int(trace.held_total)} nodes never receive the message"
    else:
        violation = _both_ways(trace.label_counts, plan.label_reverse)
    promise = ("every node holds every node's message (node 0's message, translated)" if plan.symmetric
               else "every node holds the source's message")
    return verdict(missing == 0, redundant, missing, violation, receipts=receipts, promise=promise, what="message")


def _both_ways(label_counts: np.ndarray, reverse: np.ndarray | None) -> str | None:
    """A violation naming the steps that use a link label and its reverse, or None."""
    if reverse is None or not len(label_counts):
        return None
    used = label_counts > 0
    bad = np.flatnonzero((used & used[:, reverse]).any(axis=1))
    return f"a link is used both ways in steps {(bad + 1).tolist()}" if len(bad) else None


# -- circuit engine ---------------------------------------------------------------
#
# One check for every circuit plan (thesis 3.2.4, 4 and 5): the rows traced
# pass by pass are merged row by row, counted (conflicts, dropped circuits,
# inputs no pass delivered or two passes delivered), compared with the rows
# the plan promises and, for a total exchange, tested for a Latin square.

CIRCUIT_PROMISES = {
    "alltoall": "every input reaches every output exactly once over the rows (a Latin square)",
    "permutation": "every row realises its requested permutation, each input delivered once",
}


def is_latin_square(perms: np.ndarray) -> bool:
    """True when the rows are permutations of ``0..N-1`` and no column repeats a value.

    ``perms`` has shape ``(N, N)``: row ``k`` is a permutation.
    """
    perms = np.asarray(perms)
    if perms.ndim != 2 or perms.shape[0] != perms.shape[1]:
        return False
    n = perms.shape[0]
    if perms.min(initial=0) < 0 or perms.max(initial=0) >= n:
        return False
    flat = perms.astype(np.int64)
    idx = np.arange(n, dtype=np.int64)
    # one count per (row, value) and per (column, value): a Latin square fills both exactly once
    rows_ok = np.all(np.bincount((flat + n * idx[:, None]).ravel(), minlength=n * n) == 1)
    cols_ok = np.all(np.bincount((flat * n + idx[None, :]).ravel(), minlength=n * n) == 1)
    return bool(rows_ok and cols_ok)


def delivery_counts(n: int, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``counts[src, dst]``: how often a circuit joined ``src`` to ``dst`` (``dst < 0``: none)."""
    targets = np.asarray(targets)
    ok = targets >= 0
    flat = np.asarray(sources, dtype=np.int64)[ok] * n + targets[ok].astype(np.int64)
    return np.bincount(flat, minlength=n * n).reshape(n, n)


@dataclass
class SquareCheck:
    """A circuit plan traced and checked: the rows merged over their passes and every count.

    ``perms[r, i]`` is the output input ``i`` reaches in row ``r`` (-1: no
    pass delivered it); ``unrouted`` counts such (row, input) pairs,
    ``repeated`` those two or more passes delivered; ``wrong_rows`` rows that
    are not the permutation the plan promises; ``pairs_twice`` (input, output)
    pairs a total exchange covers more than once.
    """

    perms: np.ndarray
    conflicts: int
    dropped: int
    unrouted: int
    repeated: int
    passes: int
    circuits: int
    latin_square: bool
    verification: Verification
    wrong_rows: int = 0
    pairs_twice: int = 0

    @property
    def ok(self) -> bool:
        return self.verification.verified


#: the rows a circuit plan promises: ``expected(rows) -> int[len(rows), N]`` (:meth:`CircuitPlan.expected_rows`)
Expected = Callable[[np.ndarray], np.ndarray | None]


class CircuitSquare:
    """Merges the traced passes of a circuit plan row by row, then judges them (:meth:`finish`).

    The engine calls :meth:`add` once per traced chunk (rows ``lo ..`` of one
    pass) and :meth:`note` with a description of the first conflict and the
    first dropped circuit it meets (the link named, which only the engine knows).
    """

    def __init__(self, rows: int, inputs: int, passes: int, collective: str = "alltoall"):
        if collective not in CIRCUIT_PROMISES:
            raise TopocastError(f"circuit check: collective must be one of {', '.join(CIRCUIT_PROMISES)}, "
                                f"got '{collective}'")
        self.rows, self.inputs, self.passes, self.collective = int(rows), int(inputs), int(passes), collective
        self.merged = np.full((self.rows, self.inputs), -1, dtype=np.int32)
        self.times = np.zeros((self.rows, self.inputs), dtype=np.uint8 if passes < 255 else np.int32)
        self.conflicts = self.dropped = self.circuits = 0
        self.first: dict[str, str] = {}

    def add(self, lo: int, perms: np.ndarray, conflicts: np.ndarray, dropped: np.ndarray) -> None:
        """Merge the traced rows ``lo .. lo + len(perms) - 1`` of one pass."""
        hit = perms >= 0
        np.copyto(self.merged[lo:lo + len(perms)], perms, where=hit)
        self.times[lo:lo + len(perms)] += hit
        self.conflicts += int(conflicts.sum())
        self.dropped += int(dropped.sum())
        self.circuits += int(np.count_nonzero(hit))

    def note(self, kind: str, text: str) -> None:
        """Keep the first description of a ``kind`` of fault ("conflict", "dropped")."""
        self.first.setdefault(kind, text)

    def finish(self, expected: Expected | None = None, chunk: int = 256) -> SquareCheck:
        """Count, compare with ``expected(rows) -> int[k, N]`` (or None) and give the verdict."""
        unrouted = int(np.count_nonzero(self.times == 0))
        repeated = int(np.count_nonzero(self.times > 1))
        wrong = self._wrong_rows(expected, chunk)
        square = self.rows == self.inputs and is_latin_square(self.merged)
        pairs_twice = 0
        if self.collective == "alltoall" and not square:
            sources = np.broadcast_to(np.arange(self.inputs, dtype=np.int64), self.merged.shape)
            pairs_twice = int(np.count_nonzero(delivery_counts(self.inputs, sources, self.merged) > 1))
        violation = self._violation(unrouted, repeated, wrong, square, pairs_twice)
        redundant = repeated + pairs_twice
        verification = verdict(unrouted == 0, redundant, unrouted, violation, receipts=self.circuits,
                               promise=CIRCUIT_PROMISES[self.collective], what="circuit")
        return SquareCheck(self.merged, self.conflicts, self.dropped, unrouted, repeated, self.passes,
                           self.circuits, bool(square), verification, wrong_rows=wrong, pairs_twice=pairs_twice)

    def _wrong_rows(self, expected: Expected | None, chunk: int) -> int:
        if expected is None:
            return 0
        wrong = 0
        for lo in range(0, self.rows, chunk):
            rows = np.arange(lo, min(self.rows, lo + chunk), dtype=np.int64)
            bad = np.any(self.merged[rows] != expected(rows), axis=1)
            if bad.any():
                self.note("wrong", f"row {int(rows[np.argmax(bad)])}")
            wrong += int(np.count_nonzero(bad))
        return wrong

    def _first_cell(self, mask: np.ndarray) -> str:
        row, col = np.unravel_index(int(np.argmax(mask)), mask.shape)
        return f"row {int(row)} input {int(col)}"

    def _violation(self, unrouted: int, repeated: int, wrong: int, square: bool, pairs_twice: int) -> str | None:
        """The faults found, worst first, each with its first instance."""
        out = []
        if self.conflicts:
            out.append(f"{self.conflicts} links carry two or more circuits (first: {self.first.get('conflict')})")
        if self.dropped:
            out.append(f"{self.dropped} circuits are cut on the way (first: {self.first.get('dropped')})")
        if unrouted:
            out.append(f"{unrouted} (row, input) pairs are delivered by no pass "
                       f"(first: {self._first_cell(self.times == 0)})")
        if repeated:
            out.append(f"{repeated} (row, input) pairs are delivered by more than one pass "
                       f"(first: {self._first_cell(self.times > 1)})")
        if wrong:
            out.append(f"{wrong} rows are not the permutation the plan promises (first: {self.first['wrong']})")
        if self.collective == "alltoall" and not square:
            extra = f", {pairs_twice} (input, output) pairs covered more than once" if pairs_twice else ""
            out.append(f"the {self.rows} rows on {self.inputs} inputs are not a Latin square{extra}")
        return "; ".join(out) or None
