"""Verification shared by every engine: who holds which message, exactly once or not.

The state is a bit matrix ``holds[node, word]`` (message ``m`` is bit
``m % 64`` of word ``m // 64``).  Engines feed it transfers in the order they
happen; :class:`HoldState` rejects a transfer of data its sender does not hold,
counts every receipt and every redundant one (a node receiving a message it
already has), and tells when each node has everything it needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from .errors import TopocastError
from .schedule import Schedule

WORD = 64
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@nb.njit(cache=True, inline="always")
def popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@nb.njit(cache=True, inline="always")
def _mask(word, lo, hi):
    """Bits of ``word`` covering message ids [lo, hi)."""
    start = word * 64
    a = max(lo - start, 0)
    b = min(hi - start, 64)
    if b - a == 64:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return ((np.uint64(1) << np.uint64(b - a)) - np.uint64(1)) << np.uint64(a)


@nb.njit(cache=True)
def sender_lacks(holds, node, first, count):
    """First message in [first, first+count) that ``node`` does not hold, or -1."""
    hi = first + count
    for w in range(first // 64, (hi + 63) // 64):
        missing = _mask(w, first, hi) & ~holds[node, w]
        if missing:
            bit = 0
            while not (missing >> np.uint64(bit)) & np.uint64(1):
                bit += 1
            return w * 64 + bit
    return -1


@nb.njit(cache=True)
def receive(holds, required, all_required, node, first, count):
    """Mark [first, first+count) held at ``node``; return (redundant, newly required)."""
    hi = first + count
    redundant = 0
    new_required = 0
    for w in range(first // 64, (hi + 63) // 64):
        mask = _mask(w, first, hi)
        old = holds[node, w]
        redundant += popcount(mask & old)
        if not all_required:
            new_required += popcount(mask & ~old & required[node, w])
        holds[node, w] = old | mask
    if all_required:
        new_required = count - redundant
    return redundant, new_required


@nb.njit(cache=True)
def _set_bits(matrix, rows, messages):
    for i in range(len(rows)):
        m = messages[i]
        matrix[rows[i], m // 64] |= np.uint64(1) << np.uint64(m % 64)


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

    def as_dict(self) -> dict:
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


class HoldState:
    """Bit matrix of held messages plus the required set of each node."""

    def __init__(self, schedule: Schedule, max_bytes: float | None = None):
        n, m = schedule.num_nodes, schedule.num_messages
        words = max(1, (m + WORD - 1) // WORD)
        need = n * words * 8 * (1 if isinstance(schedule.targets, str) else 2)
        if max_bytes is not None and need > max_bytes:
            from .memory import human_bytes

            raise TopocastError(
                f"max-memory: verifying {m} messages on {n} nodes needs {human_bytes(need)} of state, "
                f"over the limit of {human_bytes(max_bytes)}"
            )
        self.schedule = schedule
        self.holds = np.zeros((n, words), dtype=np.uint64)
        origin = schedule.origin
        _set_bits(self.holds, origin, np.arange(m, dtype=np.int64))
        self.all_required = isinstance(schedule.targets, str)
        if self.all_required:
            self.required = np.zeros((1, 1), dtype=np.uint64)
            self.need = np.full(n, m, dtype=np.int64)
            self.have = np.bincount(origin, minlength=n).astype(np.int64)
        else:
            ptr, ids = schedule.target_csr()
            msg = np.repeat(np.arange(m, dtype=np.int64), np.diff(ptr))
            self.required = np.zeros((n, words), dtype=np.uint64)
            _set_bits(self.required, ids, msg)
            self.need = np.bincount(ids, minlength=n).astype(np.int64)
            self.have = np.zeros(n, dtype=np.int64)
            self.have += np.bincount(ids[origin[msg] == ids], minlength=n)

    def finish(self, receipts: int, redundant: int, violation: str | None) -> Verification:
        missing = int((self.need - self.have).sum())
        complete = missing == 0
        if violation is None and not complete:
            node = int(np.flatnonzero(self.have < self.need)[0])
            violation = f"node {node} ends holding {self.have[node]} of the {self.need[node]} messages it needs"
        promise = ("every node holds every message" if self.all_required
                   else "every target holds each message addressed to it")
        return verdict(complete, redundant, missing, violation, receipts=receipts, promise=promise, what="message")


def describe_transfer(schedule: Schedule, t: int) -> str:
    where = f"step {int(schedule.step[t])}" if schedule.step is not None else "dependency order"
    return f"transfer {t} ({where}) {int(schedule.src[t])} -> {int(schedule.dst[t])}"


# -- wormhole engine

def wormhole_deliveries(plan, trace) -> Verification:
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


def _worm_violation(plan, trace, planned, count, lost, stuck) -> str | None:
    """The first broken rule of a wormhole run, named after its multicast and destination."""
    if trace.deadlock is not None:
        return trace.deadlock
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


def frontier_verification(trace, plan) -> Verification:
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
    wrong_rows: int = 0
    pairs_twice: int = 0
    verification: Verification | None = None

    @property
    def ok(self) -> bool:
        return self.verification is not None and self.verification.verified


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

    def finish(self, expected=None, chunk: int = 256) -> SquareCheck:
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
                           self.circuits, bool(square), wrong, pairs_twice, verification)

    def _wrong_rows(self, expected, chunk: int) -> int:
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
