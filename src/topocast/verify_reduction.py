"""Verification of reductions: every required (node, block) ends holding every node's contribution exactly once.

A reduction schedule (``allreduce``, ``reduce-scatter``, ``reduce``; :mod:`topocast.schedule`) moves partial
aggregates: every node starts with its own contribution to every block; a transfer reads its sender's partial
of each block it names when it starts (``send`` time) and, when it arrives (``recv`` time), the receiver adds
it to its own partial (``combine``) or takes it in place of its own (a copy).  The run is verified when

* no receipt adds a contribution the receiver already holds (a contribution counted twice: the first such
  transfer is named with the node whose contribution it repeats);
* every transfer reads what the schedule's own order says it reads: replayed in step order, a transfer of
  step ``k`` carries every contribution its sender received in steps before ``k``; a transfer that starts
  before those arrive (combining data that has not arrived yet) is named with the contributions it misses;
* every required (node, block) ends holding all ``N`` contributions: every node and block for an allreduce,
  block ``b`` at ``targets[b]`` for a reduce-scatter, every block at the root for a reduce.

``redundant_receipts`` keeps its meaning of data moved twice: a copy that brings a node exactly the partial it
already holds.  Two methods:

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

import numba as nb
import numpy as np

from .errors import TopocastError
from .schedule import Schedule

PRIME = (1 << 61) - 1
#: word operations (64 contributors each) beyond which the exact method gives way to fingerprints
MAX_EXACT_WORK = 4e9


@dataclass(frozen=True)
class ReductionCheck:
    """What :func:`verify_reduction` found: the :class:`~topocast.verify.Verification` fields and the method."""

    complete: bool
    redundant_receipts: int
    missing_deliveries: int
    first_violation: str | None
    receipts: int
    method: str
    error_bound: float

    @property
    def promise(self) -> str:
        how = ("exact contributor sets" if self.method == "exact" else
               f"fingerprints mod 2^61-1: a double count or omission is missed with probability <= "
               f"{self.error_bound:.1e}")
        return f"every required (node, block) holds every node's contribution exactly once ({how})"


def step_timing(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(send, recv)`` of a step schedule: a transfer of step ``k`` reads at ``k`` and lands at ``k + 1/2``,
    so it carries what arrived in earlier steps and none of its own step's receipts."""
    step = np.asarray(schedule.step, dtype=np.float64)
    return step, step + 0.5


def required_nodes(schedule: Schedule) -> np.ndarray | None:
    """Per block the one node that must end with its full sum (None: every node must, an allreduce)."""
    if isinstance(schedule.targets, str):
        return None
    return np.asarray(schedule.targets, dtype=np.int64)


def verify_reduction(schedule: Schedule, send: np.ndarray | None = None, recv: np.ndarray | None = None,
                     max_bytes: float | None = None, method: str | None = None, seed: int = 0) -> ReductionCheck:
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

    Returns
    -------
    ReductionCheck

    Raises
    ------
    TopocastError
        Not a reduction, timings of the wrong length, a receipt before its send, or a state that does not fit
        even as fingerprints.
    """
    from .memory import default_limit

    if not schedule.is_reduction:
        raise TopocastError(f"verify: a {schedule.collective} is not a reduction")
    steps = schedule.step is not None
    reference = step_timing(schedule) if steps else None
    if send is None:
        if reference is None:
            raise TopocastError("verify: a reduction without steps needs the engine's send and receive times")
        send, recv = reference
    send, recv = np.asarray(send, dtype=np.float64), np.asarray(recv, dtype=np.float64)
    if len(send) != schedule.num_transfers or len(recv) != schedule.num_transfers:
        raise TopocastError("verify: one send and one receive time per transfer")
    if np.any(recv < send):
        raise TopocastError("verify: a transfer lands before it is sent")
    limit = default_limit() if max_bytes is None else max_bytes
    method = method or choose_method(schedule, limit)
    timed = None if reference is not None and np.array_equal(send, reference[0]) and \
        np.array_equal(recv, reference[1]) else (send, recv)
    if method == "exact":
        return _exact(schedule, reference or (send, recv), timed if reference is not None else None, limit)
    return _fingerprint(schedule, send, recv, seed)


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
def _first_bit(words):
    for w in range(len(words)):
        if words[w]:
            x = words[w]
            bit = 0
            while not (x >> np.uint64(bit)) & np.uint64(1):
                bit += 1
            return w * 64 + bit
    return -1


@nb.njit(cache=True)
def _replay_sets(events, transfer, block, lo, src, dst, combine, relay, source, rows, n, snaps, slot_of):
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


def _chunk_blocks(schedule: Schedule, limit: float) -> int:
    n = schedule.num_nodes
    words = (n + 63) // 64
    per_block = 8.0 * n * words
    return int(max(1, min(schedule.num_messages, (limit / 4) // per_block)))


def _exact(schedule: Schedule, reference, timed, limit: float) -> ReductionCheck:
    n, m = schedule.num_nodes, schedule.num_messages
    chunk = _chunk_blocks(schedule, limit)
    need = required_nodes(schedule)
    receipts = redundant = missing = 0
    violation = None
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        transfer, block = _pairs(schedule, lo, hi)
        ref = _replay_chunk(schedule, transfer, block, lo, hi, reference)
        if ref["violation"] is not None:
            violation = violation or _double_count(schedule, transfer, block, ref)
        run = ref if timed is None else _replay_chunk(schedule, transfer, block, lo, hi, timed)
        if timed is not None:
            if run["violation"] is not None:
                violation = violation or _double_count(schedule, transfer, block, run)
            violation = violation or _late(schedule, transfer, block, ref, run, timed)
        receipts += run["receipts"]
        redundant += run["redundant"]
        short, example = _short_of_full(run["rows"], lo, hi, n, need)
        missing += short
        if violation is None and example is not None:
            node, b, have = example
            violation = f"node {node} ends holding {have} of the {n} contributions to block {b}"
    return ReductionCheck(missing == 0, redundant, missing, violation, receipts, "exact", 0.0)


def _replay_chunk(schedule: Schedule, transfer, block, lo: int, hi: int, timing) -> dict:
    n = schedule.num_nodes
    words = (n + 63) // 64
    rows = np.zeros(((hi - lo) * n, words), dtype=np.uint64)
    nodes = np.tile(np.arange(n, dtype=np.int64), hi - lo)
    rows[np.arange(len(nodes)), nodes // 64] = np.left_shift(np.uint64(1), (nodes % 64).astype(np.uint64))
    events = _events(transfer, *timing)
    snaps = np.zeros((max(1, _in_flight(events, schedule.relay_hops[transfer])), words), dtype=np.uint64)
    slot_of = np.zeros(len(transfer), dtype=np.int64)
    bad, kind, node, receipts, redundant, hashes = _replay_sets(
        events, transfer, block, lo, schedule.src, schedule.dst, schedule.combine, schedule.relay_hops,
        _sources(schedule, transfer), rows, n, snaps, slot_of)
    return {"rows": rows, "violation": None if bad < 0 else (int(bad), int(kind), int(node)),
            "receipts": int(receipts), "redundant": int(redundant), "hashes": hashes, "events": events}


def _describe(schedule: Schedule, t: int) -> str:
    from .verify import describe_transfer

    return describe_transfer(schedule, t)


def _double_count(schedule: Schedule, transfer, block, run: dict) -> str:
    pair, kind, node = run["violation"]
    t = int(transfer[pair])
    if kind == 2:
        return (f"{_describe(schedule, t)} forwards block {int(block[pair])} before the hop that brings it "
                f"(transfer {int(schedule.forward[t])}) has arrived")
    return (f"{_describe(schedule, t)} adds block {int(block[pair])}'s partial to a node that already holds "
            f"node {node}'s contribution: counted twice")


def _late(schedule: Schedule, transfer, block, ref: dict, run: dict, timed) -> str | None:
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


def _short_of_full(rows: np.ndarray, lo: int, hi: int, n: int, need) -> tuple[int, tuple | None]:
    """Required (node, block) pairs of blocks ``lo..hi-1`` not holding all ``n`` contributions, and one."""
    counts = _popcounts(rows).reshape(hi - lo, n)
    if need is None:
        short = counts != n
    else:
        short = np.zeros_like(counts, dtype=bool)
        b = np.arange(hi - lo)
        short[b, need[lo:hi]] = counts[b, need[lo:hi]] != n
    where = np.argwhere(short)
    if len(where) == 0:
        return 0, None
    b, node = int(where[0][0]), int(where[0][1])
    return int(len(where)), (node, lo + b, int(counts[b, node]))


@nb.njit(cache=True)
def _popcounts(rows):
    out = np.zeros(rows.shape[0], np.int64)
    for r in range(rows.shape[0]):
        c = 0
        for w in range(rows.shape[1]):
            x = rows[r, w]
            while x:
                x &= x - np.uint64(1)
                c += 1
        out[r] = c
    return out


# -- fingerprints --------------------------------------------------------------------------------------------
@nb.njit(cache=True)
def _replay_sums(events, transfer, block, src, dst, combine, relay, source, n, fp, cnt, snap_fp, snap_cnt):
    """:func:`_replay_sets` on fingerprints (weight sum mod 2^61-1, count); returns ``(receipts, redundant,
    first pair forwarded before it arrived or -1)``."""
    receipts = redundant = 0
    received = np.zeros(len(transfer), np.bool_)
    for e in events:
        i = e // 2
        t = transfer[i]
        if e % 2 == 0:
            if source[i] >= 0:
                if not received[source[i]]:
                    return receipts, redundant, i
                snap_fp[i], snap_cnt[i] = snap_fp[source[i]], snap_cnt[source[i]]
            else:
                r = block[i] * n + src[t]
                snap_fp[i], snap_cnt[i] = fp[r], cnt[r]
            continue
        received[i] = True
        if relay[t]:
            continue
        r = block[i] * n + dst[t]
        receipts += 1
        if combine[t]:
            total = fp[r] + snap_fp[i]
            fp[r] = total - np.uint64(2305843009213693951) if total >= np.uint64(2305843009213693951) else total
            cnt[r] += snap_cnt[i]
        else:
            redundant += fp[r] == snap_fp[i] and cnt[r] == snap_cnt[i]
            fp[r], cnt[r] = snap_fp[i], snap_cnt[i]
    return receipts, redundant, -1


def _fingerprint(schedule: Schedule, send, recv, seed: int) -> ReductionCheck:
    n, m = schedule.num_nodes, schedule.num_messages
    need = 16.0 * n * m
    from .memory import check_need

    check_need(f"fingerprint verification of {m} blocks on {n} nodes", need * 2)
    rng = np.random.default_rng([seed, n, 61])
    weight = rng.integers(1, PRIME, size=n, dtype=np.uint64)
    fp = np.tile(weight, m)
    cnt = np.ones(n * m, dtype=np.int64)
    transfer, block = _pairs(schedule, 0, m)
    events = _events(transfer, send, recv)
    receipts, redundant, early = _replay_sums(
        events, transfer, block, schedule.src, schedule.dst, schedule.combine, schedule.relay_hops,
        _sources(schedule, transfer), n, fp, cnt, np.zeros(len(transfer), np.uint64), np.zeros(len(transfer), np.int64))
    total = np.uint64(int(weight.astype(object).sum()) % PRIME)
    rows = np.arange(n * m).reshape(m, n)
    required = rows if required_nodes(schedule) is None else rows[np.arange(m), required_nodes(schedule)][:, None]
    wrong = (fp[required] != total) | (cnt[required] != n)
    missing = int(np.count_nonzero(wrong))
    violation = None
    if early >= 0:
        t = int(transfer[early])
        violation = (f"{_describe(schedule, t)} forwards block {int(block[early])} before the hop that brings it "
                     f"(transfer {int(schedule.forward[t])}) has arrived")
    if missing and violation is None:
        r = int(required.ravel()[np.flatnonzero(wrong.ravel())[0]])
        b, node = divmod(r, n)
        what = "counts a contribution twice" if cnt[r] > n else ("misses contributions" if cnt[r] < n
                                                                   else "holds the wrong contributions")
        violation = f"node {node} ends with block {b} holding {int(cnt[r])} contributions for {n}: it {what}"
    bound = float(required.size) * 2.0 ** -61
    return ReductionCheck(missing == 0, int(redundant), missing, violation, int(receipts), "fingerprint", bound)
