"""Verification of reductions: every required (node, block) ends holding every node's contribution exactly once.

A reduction schedule (``allreduce``, ``reduce-scatter``, ``reduce``; :mod:`topocast.plans.schedule`) moves partial
aggregates: every node starts with its own contribution to every block; a transfer reads its sender's partial
of each block it names when it starts (``send`` time) and, when it arrives (``recv`` time), the receiver adds
it to its own partial (``combine``) or takes it in place of its own (a copy).  The run is verified when

* no receipt adds a contribution the receiver already holds (a contribution counted twice: the first such
  transfer is named with the node whose contribution it repeats);
* every transfer reads what the schedule's own order says it reads: replayed in step order, a transfer of
  step ``k`` carries every contribution its sender received in steps before ``k``; a transfer that starts
  before those arrive (combining data that has not arrived yet) is named with the contributions it misses;
* every required (node, block) ends holding all ``N`` contributions: every node and block for an allreduce,
  block ``b`` at ``targets[b]`` for a reduce-scatter, every block at the root for a reduce.  On a network in
  parts (``schedule.part``: failed routers, cut links) a node's contribution counts in its own part only and a
  required node must end with exactly its part's contributions; a node of part -1 contributes nothing and
  must hold nothing.

``redundant_receipts`` keeps its meaning of data moved twice: a copy that brings a node exactly the partial it
already holds.  Blocks do not interact: each is replayed alone, its events in time order (receipts before reads
at one time, then by transfer), with no sort when the block moves one transfer after another; a chunk of blocks
where a contribution is counted twice (or a transfer lands as it leaves) is replayed again with all its events in
one time order, so the first violation named is the first in time.  Two methods:

* **exact**: the contributor set of each partial as a bit set of ``N`` bits, blocks taken a chunk at a time so
  the state fits the memory limit;
* **fingerprint**, when the exact work or state would not fit: each contributor ``x`` gets a random weight
  ``w_x`` in ``[1, p)``, ``p = 2^61 - 1``; a partial is ``(sum of its weights mod p, number of
  contributions)``.  A double count or an omission leaves the count or the sum wrong unless a nonzero
  combination of the weights vanishes mod ``p``: probability at most ``2^-61`` per (node, block) checked
  (Schwartz-Zippel), which the result states.  Overlaps are then seen at the end, not at the receipt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.bits import WORD, lowest_bit, popcount
from ..infra.heap import grow
from ..infra.sorting import argsort_stable
from ..plans.schedule import Schedule

if TYPE_CHECKING:
    from .delivery import Delivery, Verification

#: per transfer when it read its sender's partials and when it landed (``send``, ``recv``)
Timing: TypeAlias = tuple[np.ndarray, np.ndarray]

PRIME = (1 << 61) - 1
#: word operations (64 contributors each) beyond which the exact method gives way to fingerprints
MAX_EXACT_WORK = 4e9


@dataclass(frozen=True)
class ReductionCheck:
    """What :func:`verify_reduction` found: the :class:`~.delivery.Verification` fields and the method."""

    complete: bool
    redundant_receipts: int
    missing_deliveries: int
    first_violation: str | None
    receipts: int
    method: str
    error_bound: float
    #: whether the network is in parts (each required node's sum is its own part's)
    split: bool = False
    #: a lossy check (:func:`verify_reduction`'s ``lossy``): the contributions the required (node, block)
    #: pairs miss of their part's sum, and how many pairs miss some
    contributions_lost: int = 0
    sums_short: int = 0
    lossy: bool = False

    @property
    def promise(self) -> str:
        how = ("exact contributor sets" if self.method == "exact" else
               f"fingerprints mod 2^61-1: a double count or omission is missed with probability <= "
               f"{self.error_bound:.1e}")
        whose = "the contribution of every node of its part" if self.split else "every node's contribution"
        if self.lossy:
            return f"no required (node, block) holds a contribution twice or reads one early ({how})"
        return f"every required (node, block) holds {whose} exactly once ({how})"


def step_timing(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(send, recv)`` of a step schedule: a transfer of step ``k`` reads at ``k`` and lands at ``k + 1/2``,
    so it carries what arrived in earlier steps and none of its own step's receipts."""
    step = np.asarray(schedule.step, dtype=np.float64)
    return step, step + 0.5


def parts_of(schedule: Schedule) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(part per node, nodes per part, split)``: one part of every node when the schedule names none;
    ``split`` when there are several parts or a node of none."""
    n = schedule.num_nodes
    if schedule.part is None:
        return np.zeros(n, np.int64), np.array([n], np.int64), False
    part = np.asarray(schedule.part, np.int64)
    size = np.bincount(part[part >= 0], minlength=max(1, int(part.max(initial=-1)) + 1)).astype(np.int64)
    return part, size, bool(len(size) > 1 or np.any(part < 0))


def required_nodes(schedule: Schedule) -> np.ndarray | None:
    """Per block the one node that must end with its full sum (None: every node must, an allreduce)."""
    if isinstance(schedule.targets, str):
        return None
    return np.asarray(schedule.targets, dtype=np.int64)


def verify_reduction(schedule: Schedule, send: np.ndarray | None = None, recv: np.ndarray | None = None,
                     max_bytes: float | None = None, method: str | None = None, seed: int = 0,
                     lossy: bool | None = None) -> ReductionCheck:
    """Check a reduction run whose transfers read at ``send`` and landed at ``recv`` (default: step order).

    Parameters
    ----------
    schedule : Schedule
        A reduction schedule (``schedule.is_reduction``).
    send, recv : numpy.ndarray, optional
        Per transfer, when it read its sender's partials and when the receiver combined them (an engine's
        trace); default :func:`step_timing`.
    max_bytes : float, optional
        Memory the check may use (default: half of RAM).
    method : {"exact", "fingerprint"}, optional
        Force a method; default exact when it fits (:data:`MAX_EXACT_WORK`, ``max_bytes``).
    seed : int
        Seed of the fingerprint weights.
    lossy : bool, optional
        A plan for the intact network run on a degraded one (transfers over failed parts dropped): a required
        (node, block) short of its part's sum is its loss (counted in ``contributions_lost`` and
        ``sums_short``), not a violation; counting a contribution twice or reading one early still is.
        Default: whether the schedule says so (``meta["fault_mode"] == "intact"``).

    Returns
    -------
    ReductionCheck

    Raises
    ------
    TopocastError
        Not a reduction, timings of the wrong length, a receipt before its send, or a state that does not fit
        even as fingerprints.
    """
    from ..infra.memory import default_limit

    if not schedule.is_reduction:
        raise TopocastError(f"verify: a {schedule.collective} is not a reduction")
    steps = schedule.step is not None
    if send is None:
        if not steps:
            raise TopocastError("verify: a reduction without steps needs the engine's send and receive times")
        send, recv = step_timing(schedule)
    send, recv = np.asarray(send, dtype=np.float64), np.asarray(recv, dtype=np.float64)
    if len(send) != schedule.num_transfers or len(recv) != schedule.num_transfers:
        raise TopocastError("verify: one send and one receive time per transfer")
    if np.any(recv < send):
        raise TopocastError("verify: a transfer lands before it is sent")
    limit = default_limit() if max_bytes is None else max_bytes
    lossy = schedule.meta.get("fault_mode") == "intact" if lossy is None else lossy
    relayed = schedule.forward is not None and np.any(schedule.forward >= 0)
    if not relayed:
        method = method or choose_method(schedule, limit)
    # the step order's timing, which the exact method compares the run with (the fingerprints need none)
    reference = step_timing(schedule) if steps and (relayed or method == "exact") else None
    if relayed:
        return _relayed(schedule, send, recv, reference, limit, method, seed, lossy)
    timed = None if reference is not None and np.array_equal(send, reference[0]) and \
        np.array_equal(recv, reference[1]) else (send, recv)
    if method == "exact":
        return _exact(schedule, reference or (send, recv), timed if reference is not None else None, limit, lossy)
    return _fingerprint(schedule, send, recv, seed, limit, lossy)


def _forward(schedule: Schedule) -> np.ndarray:
    """``schedule.forward`` of a schedule with relay chains."""
    if schedule.forward is None:
        raise ValueError("reduction check: the schedule has no relay chains")
    return schedule.forward


def _combine(schedule: Schedule) -> np.ndarray:
    """``schedule.combine`` (every reduction schedule has it)."""
    if schedule.combine is None:
        raise ValueError("reduction check: the schedule says for no transfer whether it adds or copies")
    return schedule.combine


def _steps(schedule: Schedule) -> np.ndarray:
    """``schedule.step`` of a schedule in steps."""
    if schedule.step is None:
        raise ValueError("reduction check: the schedule has no steps")
    return schedule.step


def _chains(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(first, last)``: the first and last hop of every relay chain (a transfer no other forwards, and the
    hops that carry its payload on), by first hop."""
    forward = _forward(schedule)
    following = np.full(schedule.num_transfers, -1, np.int64)
    hops = np.flatnonzero(forward >= 0)
    following[forward[hops]] = hops
    first = np.flatnonzero(forward < 0)
    last = first.copy()
    while True:
        step = following[last]
        more = step >= 0
        if not more.any():
            return first, last
        last[more] = step[more]


def _early_hop(schedule: Schedule, send: np.ndarray, recv: np.ndarray) -> int:
    """The first hop (by its read time) that forwards a payload before the hop bringing it has landed, or -1."""
    hops = np.flatnonzero(_forward(schedule) >= 0)
    early = hops[send[hops] < recv[_forward(schedule)[hops]]]
    return int(early[np.argmin(send[early])]) if len(early) else -1


def _relayed(schedule: Schedule, send: np.ndarray, recv: np.ndarray, reference: Timing | None, limit: float,
             method: str | None, seed: int, lossy: bool = False) -> ReductionCheck:
    """Check a schedule with relay chains as the schedule of its chains: each reads at its first hop and lands
    at its last (relays keep nothing, so that is what the receivers see), every hop checked to leave only once
    the payload it forwards has landed (in the run and in step order)."""
    from dataclasses import replace

    first, last = _chains(schedule)
    logical = replace(schedule.subset(first), dst=schedule.dst[last], combine=_combine(schedule)[last], forward=None,
                      meta={**schedule.meta, "hop_ids": last})
    timed = (send[first], recv[last])
    ref = None if reference is None else (reference[0][first], reference[1][last])
    method = method or choose_method(logical, limit)
    if method == "exact":
        same = ref is not None and all(np.array_equal(a, b) for a, b in zip(ref, timed, strict=True))
        found = _exact(logical, ref or timed, None if (ref is None or same) else timed, limit, lossy)
    else:
        found = _fingerprint(logical, *timed, seed, limit, lossy)
    early = _early_hop(schedule, send, recv)
    if early < 0 and reference is not None:
        early = _early_hop(schedule, *reference)
    if early >= 0:
        text = (f"{_describe(schedule, early)} forwards its payload before the hop that brings it (transfer "
                f"{int(_forward(schedule)[early])}) has arrived")
        found = replace(found, complete=False, first_violation=text)
    return found


def choose_method(schedule: Schedule, limit: float) -> str:
    """``exact`` when one block's contributor sets fit in ``limit`` and the work is under
    :data:`MAX_EXACT_WORK` word operations, else ``fingerprint``."""
    n = schedule.num_nodes
    words = (n + 63) // 64
    receipts = float(schedule.range_count.sum())
    block_state = 8.0 * n * words * 3
    work = receipts * words * 2 + float(schedule.num_messages) * n * words
    return "exact" if block_state <= limit / 2 and work <= MAX_EXACT_WORK else "fingerprint"


# -- events ------------------------------------------------------------------------------------------------
def _pairs(schedule: Schedule, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """The (transfer, block) pairs with a block in ``[lo, hi)``, as two arrays."""
    first, count = schedule.range_first, schedule.range_count
    start, end = np.maximum(first, lo), np.minimum(first + count, hi)
    keep = np.flatnonzero(end > start)
    if len(keep) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(schedule.num_transfers, dtype=np.int64), np.diff(schedule.range_ptr))[keep]
    sizes = (end - start)[keep]
    transfer = np.repeat(owner, sizes)
    offsets = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    return transfer, np.repeat(start[keep], sizes) + offsets


def _events(transfer: np.ndarray, send: np.ndarray, recv: np.ndarray) -> np.ndarray:
    """Event order of the pairs: ``2*i`` is pair ``i``'s read, ``2*i+1`` its receipt; by time, receipts before
    reads at one time (what lands at ``t`` can leave at ``t``), then transfer order."""
    count = len(transfer)
    times = np.empty(2 * count)
    times[0::2], times[1::2] = send[transfer], recv[transfer]
    kind = np.tile(np.array([1, 0], dtype=np.int64), count)
    order = np.repeat(transfer, 2)
    return np.lexsort((order, kind, times))


# -- exact -------------------------------------------------------------------------------------------------
@nb.njit(cache=True)
def _first_bit(words: np.ndarray) -> int:
    for w in range(len(words)):
        if words[w]:
            return w * WORD + lowest_bit(words[w])
    return -1


@nb.njit(cache=True)
def _replay_sets(events: np.ndarray, transfer: np.ndarray, block: np.ndarray, lo: int, src: np.ndarray,
                 dst: np.ndarray, combine: np.ndarray, relay: np.ndarray, source: np.ndarray, rows: np.ndarray, n: int,
                 snaps: np.ndarray, slot_of: np.ndarray) -> tuple[int, int, int, int, int, np.ndarray]:
    """Replay the events on contributor bit sets ``rows[(block - lo) * n + node]``.

    A read snapshots the sender's partial (or, for a forwarding hop, the payload ``source[i]`` brought) into a
    free slot of ``snaps``; a receipt adds it to the receiver's partial, puts it in place of it, or (a relay
    hop) keeps it for the next hop.  Returns ``(first bad pair, kind, node, receipts, redundant receipts,
    hashes of each read)``: kind 1 a contribution counted twice (``node`` its contributor), 2 a payload
    forwarded before it arrived."""
    words = rows.shape[1]
    free = list(range(snaps.shape[0]))
    hashes = np.zeros(len(transfer), np.uint64)
    received = np.zeros(len(transfer), np.bool_)
    receipts = redundant = 0
    for e in events:
        i = e // 2
        t = transfer[i]
        if e % 2 == 0:                      # the read: a snapshot of the sender's partial or of the relayed payload
            s = free.pop()
            slot_of[i] = s
            h = np.uint64(1469598103934665603)
            if source[i] >= 0:
                if not received[source[i]]:
                    return i, 2, -1, receipts, redundant, hashes
                held = slot_of[source[i]]
                for w in range(words):
                    snaps[s, w] = snaps[held, w]
                free.append(held)
            else:
                row_src = (block[i] - lo) * n + src[t]
                for w in range(words):
                    snaps[s, w] = rows[row_src, w]
            for w in range(words):
                h = (h ^ snaps[s, w]) * np.uint64(1099511628211)
            hashes[i] = h
            continue
        s = slot_of[i]
        received[i] = True
        if relay[t]:                        # a relay hop: the payload waits for its next hop
            continue
        row = (block[i] - lo) * n + dst[t]
        receipts += 1
        if combine[t]:
            for w in range(words):
                clash = rows[row, w] & snaps[s, w]
                if clash:
                    return i, 1, _first_bit(snaps[s] & rows[row]), receipts, redundant, hashes
                rows[row, w] |= snaps[s, w]
        else:
            same = True
            for w in range(words):
                same = same and rows[row, w] == snaps[s, w]
                rows[row, w] = snaps[s, w]
            redundant += same
        free.append(s)
    return -1, 0, -1, receipts, redundant, hashes


def _sources(schedule: Schedule, transfer: np.ndarray) -> np.ndarray:
    """Per pair, the pair whose payload it forwards (-1: it reads its sender's partial): a forwarding hop
    carries exactly the blocks of the hop before it, so the ``k``-th pair of one is the ``k``-th of the other."""
    source = np.full(len(transfer), -1, dtype=np.int64)
    if schedule.forward is None or len(transfer) == 0:
        return source
    prev = schedule.forward[transfer]
    hop = np.flatnonzero(prev >= 0)
    start = np.searchsorted(transfer, transfer, side="left")
    source[hop] = np.searchsorted(transfer, prev[hop], side="left") + (hop - start[hop])
    return source


def _in_flight(events: np.ndarray, relay: np.ndarray) -> int:
    """Most snapshots the replay keeps at once: one per read until its receipt, and until its next hop's read
    for a relay hop (counted until its receipt here, plus one per relay hop to be safe)."""
    delta = np.where(events % 2 == 0, 1, -1)
    return int(np.max(np.cumsum(delta), initial=0)) + int(np.count_nonzero(relay)) + 1


#: bytes per (transfer, block) pair of a chunk's replay: the pair (16), its two events and their sort (48),
#: its snapshot slot and flags (24), the sources of relays (8), margin (16)
PAIR_BYTES = 112


def pairs_per_block(schedule: Schedule) -> np.ndarray:
    """How many (transfer, block) pairs name each block: one per transfer that carries it."""
    return _per_block(schedule.range_first, schedule.range_count, schedule.num_messages)


@nb.njit(cache=True)
def _per_block(first, count, m):
    diff = np.zeros(m + 1, np.int64)
    for r in range(len(first)):
        diff[first[r]] += 1
        diff[first[r] + count[r]] -= 1
    out = np.empty(m, np.int64)
    total = 0
    for b in range(m):
        total += diff[b]
        out[b] = total
    return out


@nb.njit(cache=True)
def _block_pairs(range_ptr, first, count, lo, hi, ptr, ids):
    """The transfers naming each block of ``[lo, hi)``, block by block, in transfer order (and range order
    within a transfer): ``ids[ptr[b - lo]:ptr[b - lo + 1]]``; ``ptr`` holds the counts and is made offsets."""
    fill = np.empty(hi - lo, np.int64)
    total = 0
    for b in range(hi - lo):
        fill[b] = total
        total += ptr[b]
        ptr[b] = fill[b]
    ptr[hi - lo] = total
    for t in range(len(range_ptr) - 1):
        for r in range(range_ptr[t], range_ptr[t + 1]):
            for b in range(max(first[r], lo), min(first[r] + count[r], hi)):
                ids[fill[b - lo]] = t
                fill[b - lo] += 1


@nb.njit(cache=True)
def _block_order(read_at, land_at, order):
    """The order of one block's events into ``order``: ``2 j`` the read of its ``j``-th pair, ``2 j + 1`` its
    receipt; by time, receipts before reads at one time, then by pair (the order of :func:`_events`).
    Returns whether every pair is read before it lands (not so for a transfer that takes no time)."""
    k = len(read_at)
    ordered = True
    for j in range(k):                      # usually the block moves pair after pair: already in order
        if not read_at[j] < land_at[j] or (j + 1 < k and land_at[j] > read_at[j + 1]):
            ordered = False
            break
    if ordered:
        for j in range(k):
            order[2 * j], order[2 * j + 1] = 2 * j, 2 * j + 1
        return True
    times = np.empty(2 * k)                  # receipts then reads, each by pair: a stable sort by time
    times[:k], times[k:] = land_at, read_at
    by_time = argsort_stable(times)
    for i in range(2 * k):
        e = by_time[i]
        order[i] = 2 * e + 1 if e < k else 2 * (e - k)
    return bool(np.all(read_at < land_at))


def block_chunks(schedule: Schedule, limit: float, state_per_block: float, pairs: np.ndarray | None = None
                 ) -> list[tuple[int, int]]:
    """Consecutive block ranges ``[lo, hi)`` whose replay (``state_per_block`` per block, :data:`PAIR_BYTES`
    per pair) fits in a quarter of ``limit``; refuses (the one memory guard) when one block does not.
    ``pairs``: :func:`pairs_per_block`, when known."""
    from ..infra.footprint import guard

    pairs = pairs_per_block(schedule) if pairs is None else pairs
    per_block = state_per_block + PAIR_BYTES * pairs.astype(np.float64)
    budget = limit / 4
    worst = int(np.argmax(per_block)) if len(per_block) else 0
    if len(per_block) and per_block[worst] > budget:
        guard(f"verifying block {worst} of a {schedule.collective} on {schedule.num_nodes:,} nodes",
              4 * float(per_block[worst]), limit)
    chunks, lo, used = [], 0, 0.0
    for b, size in enumerate(per_block.tolist()):
        if used + size > budget and b > lo:
            chunks.append((lo, b))
            lo, used = b, 0.0
        used += size
    if lo < len(per_block):
        chunks.append((lo, len(per_block)))
    return chunks


def _exact(schedule: Schedule, reference: Timing, timed: Timing | None, limit: float,
           lossy: bool = False) -> ReductionCheck:
    n = schedule.num_nodes
    words = (n + 63) // 64
    need = required_nodes(schedule)
    receipts = redundant = missing = lost = 0
    violation = None
    per_block = pairs_per_block(schedule)
    index = _index_type(schedule)
    part, size, split = parts_of(schedule)
    ref_send, ref_recv = (np.asarray(a, np.float64) for a in reference)
    run_send, run_recv = (ref_send, ref_recv) if timed is None else timed
    for lo, hi in block_chunks(schedule, limit, 8.0 * n * words * 3, per_block):
        ptr, ids = _chunk_pairs(schedule, per_block, lo, hi, index)
        found = _sets_of_blocks(ptr, ids, lo, n, words, schedule.src, schedule.dst, schedule.combine, ref_send,
                                ref_recv, run_send, run_recv, timed is not None, _need_array(need), part, size,
                                split)
        stopped, got, again, short, example, late_t, late_blocks, gone = found
        if stopped:  # the replays stop at the first count twice, in time order: take the chunk in that order
            got, again, short, example, text, gone = _exact_in_time_order(schedule, lo, hi, reference, timed)
            violation = violation or text
        elif late_t >= 0 and violation is None:
            violation = _late_text(schedule, late_t, late_blocks, lo, hi, timed)
        receipts += got
        redundant += again
        missing += short
        lost += gone
        if violation is None and example[0] >= 0 and not lossy:
            b, node, have, foreign = (int(x) for x in example)
            violation = _short_text(b, node, have, foreign, n, part, size, split)
    if lossy:
        return ReductionCheck(violation is None, redundant, 0, violation, receipts, "exact", 0.0, split, int(lost),
                              int(missing), True)
    return ReductionCheck(missing == 0, redundant, missing, violation, receipts, "exact", 0.0, split)


def _short_text(b: int, node: int, have: int, foreign: int, n: int, part: np.ndarray, size: np.ndarray,
                split: bool) -> str:
    """The words of a required (node, block) that ends short of, or beyond, what it must hold."""
    if foreign:
        return f"node {node} ends with block {b} holding a contribution from outside its part"
    if not split:
        return f"node {node} ends holding {have} of the {n} contributions to block {b}"
    return f"node {node} ends holding {have} of the {int(size[part[node]])} contributions of its part to block {b}"


def _index_type(schedule: Schedule):
    """int32 for transfer ids where they fit (half the memory), else int64."""
    return np.int32 if schedule.num_transfers < 2 ** 31 - 1 else np.int64


def _need_array(need) -> np.ndarray:
    return np.zeros(0, np.int64) if need is None else need


def _chunk_pairs(schedule: Schedule, per_block: np.ndarray, lo: int, hi: int, index) -> tuple[np.ndarray, np.ndarray]:
    """The (transfer, block) pairs of blocks ``[lo, hi)`` by block (:func:`_block_pairs`)."""
    ptr = np.empty(hi - lo + 1, np.int64)
    ptr[:-1] = per_block[lo:hi]
    ids = np.empty(int(per_block[lo:hi].sum()), index)
    _block_pairs(schedule.range_ptr, schedule.range_first, schedule.range_count, lo, hi, ptr, ids)
    return ptr, ids


def _exact_in_time_order(schedule: Schedule, lo: int, hi: int, reference, timed):
    """A chunk replayed in the time order of all its events (where a contribution is counted twice: what is
    found first, and the counts up to there, depend on that order)."""
    n = schedule.num_nodes
    need = required_nodes(schedule)
    transfer, block = _pairs(schedule, lo, hi)
    ref = _replay_chunk(schedule, transfer, block, lo, hi, reference)
    text = None
    if ref["violation"] is not None:
        text = _double_count(schedule, transfer, block, ref)
    run = ref if timed is None else _replay_chunk(schedule, transfer, block, lo, hi, timed)
    if timed is not None:
        if run["violation"] is not None:
            text = text or _double_count(schedule, transfer, block, run)
        text = text or _late(schedule, transfer, block, ref, run, timed)
    short, example, lost = _short_of_full(run["rows"], lo, hi, n, need, parts_of(schedule))
    example = (-1, -1, -1, 0) if example is None else (example[1], example[0], example[2], example[3])
    return run["receipts"], run["redundant"], short, example, text, lost


def _late_text(schedule: Schedule, t: int, blocks: np.ndarray, lo: int, hi: int, timed) -> str:
    """:func:`_late`'s words for transfer ``t`` reading early; of its blocks in ``blocks``, the first it names."""
    wanted = set(blocks.tolist())
    for r in range(int(schedule.range_ptr[t]), int(schedule.range_ptr[t + 1])):
        first, count = int(schedule.range_first[r]), int(schedule.range_count[r])
        for b in range(max(first, lo), min(first + count, hi)):
            if b in wanted:
                return (f"{_describe(schedule, t)} reads block {b} at time {timed[0][t]:.6g}, before every "
                        f"contribution its sender receives in earlier steps has arrived (combining data that has "
                        f"not arrived yet)")
    raise AssertionError("a late read names a block its transfer carries")


@nb.njit(cache=True)
def _sets_of_blocks(ptr, ids, lo, n, words, src, dst, combine, ref_send, ref_recv, run_send, run_recv, timed,
                    need, part, size, split):
    """The exact replay of every block of a chunk, one block at a time (blocks do not interact): in step
    order (``ref``) and, when ``timed``, in the run's order, comparing what each read took.

    Returns ``(stopped, receipts, redundant receipts, required (node, block) short of full, the first of
    them as (block, node, contributions, whether one is from outside its part) or -1s, the transfer of the
    first read that took other contributions than in step order (by its read time, then id; -1: none), the
    blocks where it did)``.
    Last, the contributions the required (node, block) pairs miss of their part's sum.
    Receipts and the rest are the run's.  ``stopped``: a contribution counted twice, or a transfer that
    lands when it leaves (its receipt comes first in time order); the counts are then not meaningful."""
    kmax = 0
    for i in range(len(ptr) - 1):
        kmax = max(kmax, ptr[i + 1] - ptr[i])
    rows = np.zeros((n, words), np.uint64)
    snaps = np.zeros((16, words), np.uint64)
    slot_of = np.empty(kmax, np.int64)
    hashes = np.empty(kmax, np.uint64)
    ref_hashes = np.empty(kmax, np.uint64)
    read_at = np.empty(kmax)
    land_at = np.empty(kmax)
    order = np.empty(2 * kmax, np.int64)
    receipts = redundant = short = lost = 0
    example = np.full(4, -1, np.int64)
    late_t = -1
    late_at = np.inf
    late_blocks = np.empty(4, np.int64)
    late_count = 0
    for i in range(len(ptr) - 1):
        base, k = ptr[i], ptr[i + 1] - ptr[i]
        for run in range(2 if timed else 1):
            send, recv = (run_send, run_recv) if run else (ref_send, ref_recv)
            for j in range(k):
                t = ids[base + j]
                read_at[j], land_at[j] = send[t], recv[t]
            if not _block_order(read_at[:k], land_at[:k], order[:2 * k]):
                return True, receipts, redundant, short, example, late_t, late_blocks[:late_count], lost
            rows[:] = 0
            for v in range(n):
                if part[v] >= 0:
                    rows[v, v // 64] = np.uint64(1) << np.uint64(v % 64)
            free = list(range(len(snaps)))
            got = again = 0
            for e in order[:2 * k]:
                j = e // 2
                t = ids[base + j]
                if e % 2 == 0:              # the read: a snapshot of the sender's partial
                    if len(free) == 0:
                        before = len(snaps)
                        snaps = grow(snaps, before)
                        for x in range(before, len(snaps)):
                            free.append(x)
                    s = free.pop()
                    slot_of[j] = s
                    h = np.uint64(1469598103934665603)
                    for w in range(words):
                        snaps[s, w] = rows[src[t], w]
                        h = (h ^ snaps[s, w]) * np.uint64(1099511628211)
                    hashes[j] = h
                    continue
                s = slot_of[j]
                v = dst[t]
                got += 1
                if combine[t]:
                    for w in range(words):
                        if rows[v, w] & snaps[s, w]:
                            return True, receipts, redundant, short, example, late_t, late_blocks[:late_count], lost
                        rows[v, w] |= snaps[s, w]
                else:
                    same = True
                    for w in range(words):
                        same = same and rows[v, w] == snaps[s, w]
                        rows[v, w] = snaps[s, w]
                    again += same
                free.append(s)
            if timed and run == 0:
                ref_hashes[:k] = hashes[:k]
        receipts += got
        redundant += again
        if timed:                           # the first read (by time, then transfer) that took other data
            for j in range(k):
                if hashes[j] != ref_hashes[j]:
                    t = ids[base + j]
                    at = run_send[t]
                    if at < late_at or (at == late_at and t < late_t):
                        late_at, late_t, late_count = at, t, 0
                    if t == late_t:
                        late_blocks = grow(late_blocks, late_count)
                        late_blocks[late_count] = lo + i
                        late_count += 1
        for v in range(n):
            if (len(need) and v != need[lo + i]) or part[v] < 0:
                continue
            have, foreign = _held(rows[v], part, part[v], split)
            if have != size[part[v]] or foreign:
                short += 1
                lost += max(0, size[part[v]] - have)
                if example[0] < 0:
                    example[0], example[1], example[2], example[3] = lo + i, v, have, foreign
    return False, receipts, redundant, short, example, late_t, late_blocks[:late_count], lost


@nb.njit(cache=True)
def _held(row: np.ndarray, part: np.ndarray, p: int, split: bool) -> tuple[int, bool]:
    """``(contributions in row, whether one is from a node outside part p)`` (the second only when ``split``)."""
    have = 0
    foreign = False
    for w in range(len(row)):
        x = row[w]
        have += popcount(x)
        while split and x:
            if part[w * WORD + lowest_bit(x)] != p:
                foreign = True
            x &= x - np.uint64(1)
    return have, foreign


@nb.njit(cache=True)
def _own_bits(rows: np.ndarray, n: int, part: np.ndarray) -> None:
    """Row ``b * n + v`` (node ``v``'s partial of block ``b``) starts as ``{v}`` (empty for a node of no part)."""
    for r in range(len(rows)):
        v = r % n
        if part[v] >= 0:
            rows[r, v // 64] = np.uint64(1) << np.uint64(v % 64)


def _replay_chunk(schedule: Schedule, transfer: np.ndarray, block: np.ndarray, lo: int, hi: int,
                  timing: Timing) -> dict[str, Any]:
    n = schedule.num_nodes
    words = (n + 63) // 64
    rows = np.zeros(((hi - lo) * n, words), dtype=np.uint64)
    _own_bits(rows, n, parts_of(schedule)[0])
    events = _events(transfer, *timing)
    snaps = np.zeros((max(1, _in_flight(events, schedule.relay_hops[transfer])), words), dtype=np.uint64)
    slot_of = np.zeros(len(transfer), dtype=np.int64)
    bad, kind, node, receipts, redundant, hashes = _replay_sets(
        events, transfer, block, lo, schedule.src, schedule.dst, _combine(schedule), schedule.relay_hops,
        _sources(schedule, transfer), rows, n, snaps, slot_of)
    return {"rows": rows, "violation": None if bad < 0 else (int(bad), int(kind), int(node)),
            "receipts": int(receipts), "redundant": int(redundant), "hashes": hashes, "events": events}


def _describe(schedule: Schedule, t: int) -> str:
    """The transfer named in a violation; a relay chain by its last hop's id, from its first sender."""
    from .delivery import describe_transfer

    hop_ids = schedule.meta.get("hop_ids")
    if hop_ids is None:
        return describe_transfer(schedule, t)
    where = f"step {int(schedule.step[t])}" if schedule.step is not None else "dependency order"
    return (f"transfer {int(hop_ids[t])} ({where}) {int(schedule.src[t])} -> {int(schedule.dst[t])} "
            f"(relayed)")


def _double_count(schedule: Schedule, transfer: np.ndarray, block: np.ndarray, run: dict[str, Any]) -> str:
    pair, kind, node = run["violation"]
    t = int(transfer[pair])
    if kind == 2:
        return (f"{_describe(schedule, t)} forwards block {int(block[pair])} before the hop that brings it "
                f"(transfer {int(_forward(schedule)[t])}) has arrived")
    return (f"{_describe(schedule, t)} adds block {int(block[pair])}'s partial to a node that already holds "
            f"node {node}'s contribution: counted twice")


def _late(schedule: Schedule, transfer: np.ndarray, block: np.ndarray, ref: dict[str, Any], run: dict[str, Any],
          timed: Timing) -> str | None:
    """The first read (in the run's order) whose set differs from the step-order replay's."""
    differ = ref["hashes"] != run["hashes"]
    if not differ.any():
        return None
    reads = run["events"][run["events"] % 2 == 0] // 2
    pair = int(reads[np.flatnonzero(differ[reads])[0]])
    t = int(transfer[pair])
    return (f"{_describe(schedule, t)} reads block {int(block[pair])} at time {timed[0][t]:.6g}, before every "
            f"contribution its sender receives in earlier steps has arrived (combining data that has not "
            f"arrived yet)")


def _short_of_full(rows: np.ndarray, lo: int, hi: int, n: int, need: np.ndarray | None,
                   parts: tuple[np.ndarray, np.ndarray, bool]) -> tuple[int, tuple[int, int, int, int] | None, int]:
    """Required (node, block) pairs of blocks ``lo..hi-1`` not holding exactly their part's contributions, one
    as ``(node, block, contributions, whether one is from outside its part)``, and the contributions they miss."""
    part, size, split = parts
    counts, foreign = _popcounts(rows, n, part, split)
    counts, foreign = counts.reshape(hi - lo, n), foreign.reshape(hi - lo, n)
    bad = ((counts != size[np.maximum(part, 0)]) | foreign) & (part >= 0)
    if need is None:
        short = bad
    else:
        short = np.zeros_like(counts, dtype=bool)
        blocks = np.arange(hi - lo)
        short[blocks, need[lo:hi]] = bad[blocks, need[lo:hi]]
    where = np.argwhere(short)
    if len(where) == 0:
        return 0, None, 0
    b, node = int(where[0][0]), int(where[0][1])
    lost = int(np.maximum(size[np.maximum(part, 0)][where[:, 1]] - counts[where[:, 0], where[:, 1]], 0).sum())
    return int(len(where)), (node, lo + b, int(counts[b, node]), int(foreign[b, node])), lost


@nb.njit(cache=True)
def _popcounts(rows: np.ndarray, n: int, part: np.ndarray, split: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per row (``b * n + v``) its contributions and whether one is from outside ``v``'s part."""
    out = np.zeros(rows.shape[0], np.int64)
    foreign = np.zeros(rows.shape[0], np.bool_)
    for r in range(rows.shape[0]):
        out[r], foreign[r] = _held(rows[r], part, part[r % n], split)
    return out, foreign


# -- fingerprints --------------------------------------------------------------------------------------------
@nb.njit(cache=True)
def _sums_of_blocks(ptr, ids, lo, n, src, dst, combine, send, recv, weight, total, need, part, size):
    """The fingerprint replay (weight sum mod 2^61-1, count) of every block of a chunk, one block at a time
    (blocks do not interact), in the run's order of each block's events.

    Returns ``(receipts, redundant receipts, required (node, block) not full, required (node, block)
    checked, the first not full as (block, node, contributions) or -1s)``."""
    kmax = 0
    for i in range(len(ptr) - 1):
        kmax = max(kmax, ptr[i + 1] - ptr[i])
    fp = np.empty(n, np.uint64)
    cnt = np.empty(n, np.int64)
    snap_fp = np.empty(kmax, np.uint64)
    snap_cnt = np.empty(kmax, np.int64)
    read_at = np.empty(kmax)
    land_at = np.empty(kmax)
    order = np.empty(2 * kmax, np.int64)
    receipts = redundant = missing = checked = lost = 0
    example = np.full(3, -1, np.int64)
    for i in range(len(ptr) - 1):
        base, k = ptr[i], ptr[i + 1] - ptr[i]
        for j in range(k):
            t = ids[base + j]
            read_at[j], land_at[j] = send[t], recv[t]
        _block_order(read_at[:k], land_at[:k], order[:2 * k])
        snap_fp[:k] = 0  # what a receipt ordered before its read (a transfer taking no time) carries
        snap_cnt[:k] = 0
        for v in range(n):
            fp[v] = weight[v]
        for v in range(n):
            cnt[v] = 1 if part[v] >= 0 else 0
        for e in order[:2 * k]:
            j = e // 2
            t = ids[base + j]
            if e % 2 == 0:
                snap_fp[j], snap_cnt[j] = fp[src[t]], cnt[src[t]]
                continue
            v = dst[t]
            receipts += 1
            if combine[t]:
                both = fp[v] + snap_fp[j]
                fp[v] = both - np.uint64(2305843009213693951) if both >= np.uint64(2305843009213693951) else both
                cnt[v] += snap_cnt[j]
            else:
                redundant += fp[v] == snap_fp[j] and cnt[v] == snap_cnt[j]
                fp[v], cnt[v] = snap_fp[j], snap_cnt[j]
        for v in range(n):
            if (len(need) and v != need[lo + i]) or part[v] < 0:
                continue
            checked += 1
            if fp[v] != total[part[v]] or cnt[v] != size[part[v]]:
                missing += 1
                lost += max(0, size[part[v]] - cnt[v])
                if example[0] < 0:
                    example[0], example[1], example[2] = lo + i, v, cnt[v]
    return receipts, redundant, missing, checked, example, lost


@nb.njit(cache=True)
def _part_sums(weight: np.ndarray, part: np.ndarray, parts: int) -> np.ndarray:
    """Per part the sum of its nodes' weights mod 2^61-1 (each weight below it: no overflow)."""
    total = np.zeros(parts, np.uint64)
    for v in range(len(weight)):
        if part[v] >= 0:
            both = total[part[v]] + weight[v]
            total[part[v]] = both - np.uint64(2305843009213693951) if both >= np.uint64(2305843009213693951) \
                else both
    return total


def _fingerprint(schedule: Schedule, send: np.ndarray, recv: np.ndarray, seed: int, limit: float,
                 lossy: bool = False) -> ReductionCheck:
    n = schedule.num_nodes
    rng = np.random.default_rng([seed, n, 61])
    weight = rng.integers(1, PRIME, size=n, dtype=np.uint64)
    part, size, split = parts_of(schedule)
    weight[part < 0] = 0
    total = _part_sums(weight, part, len(size))
    need = _need_array(required_nodes(schedule))
    receipts = redundant = missing = checked = lost = 0
    violation = None
    per_block = pairs_per_block(schedule)
    index = _index_type(schedule)
    for lo, hi in block_chunks(schedule, limit, 16.0 * n * 2, per_block):
        ptr, ids = _chunk_pairs(schedule, per_block, lo, hi, index)
        got, again, short, seen, example, gone = _sums_of_blocks(ptr, ids, lo, n, schedule.src, schedule.dst,
                                                           schedule.combine, send, recv, weight, total, need,
                                                           part, size)
        receipts, redundant, missing, checked = receipts + got, redundant + again, missing + short, checked + seen
        lost += gone
        if violation is None and example[0] >= 0:
            b, node, have = (int(x) for x in example)
            want = int(size[part[node]])
            what = "counts a contribution twice" if have > want else ("misses contributions" if have < want
                                                                     else "holds the wrong contributions")
            violation = f"node {node} ends with block {b} holding {have} contributions for {want}: it {what}"
    bound = float(checked) * 2.0 ** -61
    if lossy:   # a count above the part's is a contribution counted twice, still a violation; below, the loss
        twice = violation is not None and "counts a contribution twice" in violation
        return ReductionCheck(not twice, int(redundant), 0, violation if twice else None, int(receipts),
                              "fingerprint", bound, split, int(lost), int(missing), True)
    return ReductionCheck(missing == 0, int(redundant), missing, violation, int(receipts), "fingerprint", bound,
                          split)


# -- engine runs ------------------------------------------------------------------------------------------

def _completion(schedule: Schedule, found: ReductionCheck, when: np.ndarray, never: float) -> np.ndarray:
    """Per node when it held every block it must end with: its last receipt of such a block (``never`` for
    every node when the check failed; 0 for a node that needs nothing or receives none)."""
    n = schedule.num_nodes
    if not found.complete:
        return np.full(n, never)
    need = required_nodes(schedule)
    keep = ~schedule.relay_hops
    if need is not None:  # a receipt counts when it brings some block its receiver must hold
        per_range = np.repeat(np.arange(schedule.num_transfers), np.diff(schedule.range_ptr))
        m = schedule.num_messages
        wanted = np.sort(need * m + np.arange(m))  # (node, block) pairs, by node then block
        dst = schedule.dst[per_range]
        lo = dst * m + schedule.range_first
        mine = np.searchsorted(wanted, lo + schedule.range_count) > np.searchsorted(wanted, lo)
        useful = np.zeros(schedule.num_transfers, bool)
        useful[per_range[mine]] = True
        keep &= useful
    return _latest(schedule.dst, np.asarray(when, np.float64), keep, n)


@nb.njit(cache=True)
def _latest(dst, when, keep, n):
    """Per node the latest ``when`` of the transfers ``keep`` into it (0 for none; NaN spreads, as
    ``numpy.maximum`` does)."""
    out = np.zeros(n)
    for t in range(len(dst)):
        if keep[t]:
            v, w = dst[t], when[t]
            if w != w or (out[v] == out[v] and w > out[v]):
                out[v] = w
    return out


def check_reduction_steps(schedule: Schedule, trace: Any, max_bytes: float | None = None) -> Delivery:
    """Verify a step engine run (:class:`topocast.sim.step.StepTrace`) of a reduction schedule.

    The transfers of the step the engine stopped in (a link or port rule broken) and after do not count;
    the rest are checked in step order (:func:`verify_reduction`).

    Returns
    -------
    topocast.verify.delivery.Delivery
        The verdict and per node the step after which it held what it must (-1: never).
    """
    from .delivery import Delivery, describe_transfer

    stop = int(trace.stop_position)
    violation = None
    ran = schedule
    if stop >= 0:
        t = int(trace.order[stop])
        violation = f"{describe_transfer(schedule, t)} is rejected: {trace.stop_reason}"
        ran = schedule.subset(np.flatnonzero(_steps(schedule) < _steps(schedule)[t]))
    found = verify_reduction(ran, max_bytes=max_bytes)
    completion = _completion(ran, found, np.asarray(ran.step, np.float64) + 1, -1.0).astype(np.int64)
    return Delivery(_verification(found, violation), completion, None, -1, found.method, found.error_bound,
                    _loss(found))


def check_reduction_events(schedule: Schedule, trace: Any, max_bytes: float | None = None) -> Delivery:
    """Verify an event engine run (:class:`topocast.sim.event.EventTrace`) of a reduction schedule: every
    transfer read its sender's partials when it started and was combined when it finished.

    Returns
    -------
    topocast.verify.delivery.Delivery
        The verdict and per node the time it held what it must (inf: never).
    """
    from .delivery import Delivery, describe_transfer

    done, stop = int(trace.done), int(trace.stop_transfer)
    violation = None
    ran, send, recv = schedule, trace.start, trace.finish
    if stop >= 0:
        reason = trace.stop_reason or "its data never arrives"
        violation = f"{describe_transfer(schedule, stop)} is rejected: {reason}"
        keep = np.sort(trace.order[:done])
        ran, send, recv = schedule.subset(keep), send[keep], recv[keep]
    if ran.step is None and not len(send):
        found = ReductionCheck(False, 0, 0, None, 0, "exact", 0.0)
    else:
        found = verify_reduction(ran, send, recv, max_bytes=max_bytes)
    completion = _completion(ran, found, np.asarray(recv, np.float64), np.inf)
    return Delivery(_verification(found, violation), completion, None, -1, found.method, found.error_bound,
                    _loss(found))


def _loss(found: ReductionCheck) -> dict[str, int]:
    """What a lossy check found short (empty when it was not lossy or nothing is short)."""
    if not found.lossy:
        return {}
    return {"sums_short": found.sums_short, "contributions_lost": found.contributions_lost}


def _verification(found: ReductionCheck, violation: str | None) -> Verification:
    """The :class:`~topocast.verify.delivery.Verification` of a check, with the engine's stop as its first violation."""
    from .delivery import verdict

    complete = found.complete and violation is None
    return verdict(complete, found.redundant_receipts, found.missing_deliveries,
                   violation or found.first_violation, receipts=found.receipts, promise=found.promise,
                   what="contribution")


def reduction_metrics(delivery: Delivery) -> dict[str, Any]:
    """The metrics a reduction run adds: how it was verified and the chance a fault went unseen."""
    return {"verification_method": delivery.method, "verification_error_bound": float(delivery.error_bound),
            **delivery.loss}
