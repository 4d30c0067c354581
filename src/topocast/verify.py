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


@nb.njit(cache=True, parallel=True)
def _zeros(rows, words):
    """A zeroed bit matrix, filled by all threads (first touch of a large block is the slow part)."""
    out = np.empty((rows, words), dtype=np.uint64)
    for r in nb.prange(rows):
        out[r, :] = 0
    return out


@nb.njit(cache=True)
def _set_bits(matrix, rows, messages):
    for i in range(len(rows)):
        m = messages[i]
        matrix[rows[i], m // 64] |= np.uint64(1) << np.uint64(m % 64)


@dataclass
class Verification:
    """Outcome of a run: delivery complete, exactly once, and the first violation."""

    ok: bool
    complete: bool
    receipts: int
    redundant: int
    missing: int
    first_violation: str | None

    @property
    def exactly_once(self) -> bool:
        return self.complete and self.redundant == 0

    def as_dict(self) -> dict:
        return {
            "verified": self.ok,
            "complete": self.complete,
            "exactly_once": self.exactly_once,
            "receipts": self.receipts,
            "redundant_receipts": self.redundant,
            "missing_deliveries": self.missing,
            "first_violation": self.first_violation,
        }


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
        self.holds = _zeros(n, words)
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
            self.required = _zeros(n, words)
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
        return Verification(ok=violation is None, complete=complete, receipts=int(receipts),
                            redundant=int(redundant), missing=missing, first_violation=violation)


def describe_transfer(schedule: Schedule, t: int) -> str:
    where = f"step {int(schedule.step[t])}" if schedule.step is not None else "dependency order"
    return f"transfer {t} ({where}) {int(schedule.src[t])} -> {int(schedule.dst[t])}"
