"""Frontier engine: a per-step rule run over bitmaps, a bit per node.

The engine knows nothing of any network.  It keeps three bitmaps of
``nodes`` bits: ``held`` (every node that has the message), ``front`` (the
nodes that send in this step) and ``fresh`` (the nodes that received in this
step: the next frontier).  Each step it hands the frontier to the plan's rule
chunk by chunk (``chunk_words`` 64-bit words at a time), collects the rule's
counts (senders, receivers, redundant receipts, transfers, the first node
that received twice) and the transfers per link label, then swaps
``front`` and ``fresh``.  A phase that restarts puts every holder in the
frontier.  With ``record`` the transfers the rule writes are kept per step.

Memory: three bitmaps, ``3 * nodes / 8`` bytes (EJ_{3+4rho}^(6), 2.57e9
nodes: 963 MB).  Verification of the counts is :func:`topocast.verify.frontier_verification`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..plans.frontier import FrontierPlan
from ..progress import SILENT, Progress

#: columns of the per-step statistics a rule accumulates
SENDERS, RECEIVERS, REDUNDANT, TRANSFERS, FIRST_BAD = range(5)
STATS = ("senders", "receivers", "redundant", "transfers", "first_bad")


@nb.njit(cache=True, parallel=True)
def _popcount_words(words):
    total = 0
    for i in nb.prange(len(words)):
        x = words[i]
        x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
        x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
        x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
        total += int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
    return total


def popcount(words: np.ndarray) -> int:
    """Set bits in a bitmap."""
    return int(_popcount_words(words))


@dataclass
class FrontierTrace:
    """Per-step figures of a frontier run (one entry per step) for the message of the plan's source."""

    nodes: int
    senders: np.ndarray
    receivers: np.ndarray
    transfers: np.ndarray
    redundant: np.ndarray
    label_counts: np.ndarray  # (steps, labels): transfers per link label
    phase_of_step: list[str]
    held_total: int
    first_redundant: tuple[int, int] | None  # (node, step counted from 0) of the first second receipt
    records: list | None = None

    @property
    def steps(self) -> int:
        return len(self.senders)

    @property
    def active(self) -> np.ndarray:
        # senders already held the message; first-time receivers did not, so the
        # sets are disjoint whenever delivery is exactly once
        return self.senders + self.receivers

    @property
    def free(self) -> np.ndarray:
        return self.nodes - self.active

    @property
    def exactly_once(self) -> bool:
        return self.held_total == self.nodes and int(self.redundant.sum()) == 0

    def per_step(self) -> dict[str, list[int]]:
        return {"senders": self.senders.tolist(), "receivers": self.receivers.tolist(),
                "active": self.active.tolist(), "free": self.free.tolist()}


def bitmap_bytes(nodes: int) -> int:
    """Memory of the three bitmaps."""
    return 3 * ((nodes + 63) // 64) * 8


def run_frontier(plan: FrontierPlan, record: bool = False, progress: Progress = SILENT,
                 chunk_words: int = 1 << 21, max_bytes: float | None = None) -> FrontierTrace:
    """Run ``plan``'s phases from its source holding the message."""
    nodes = int(plan.nodes)
    words = (nodes + 63) // 64
    need = bitmap_bytes(nodes)
    if max_bytes is not None and need > max_bytes:
        raise TopocastError(f"max-memory: the frontier run on {nodes} nodes needs {need / 2**30:.1f} GiB of bitmaps")
    held, front, fresh = (np.zeros(words, dtype=np.uint64) for _ in range(3))
    bit = np.uint64(1) << np.uint64(plan.source % 64)
    held[plan.source // 64] = front[plan.source // 64] = bit
    total = plan.steps
    counts = np.zeros((total, 5), np.int64)
    label_counts = np.zeros((total, plan.rule.labels), np.int64)
    names: list[str] = []
    records = [] if record else None
    step = 0
    ticks = iter(progress.track(range(total), "frontier steps", total=total))
    for phase in plan.phases:
        if phase.restart:
            front[:] = held
        for _ in range(phase.steps):
            next(ticks, None)
            out = _step(plan.rule, phase.arg, front, held, fresh, words, chunk_words, counts[step],
                        label_counts[step], record)
            if record:
                records.append(out)
            names.append(phase.name)
            front, fresh = fresh, front
            fresh[:] = 0
            step += 1
    for _ in ticks:
        pass
    bad = np.flatnonzero(counts[:, FIRST_BAD] >= 0)
    first = (int(counts[bad[0], FIRST_BAD]), int(bad[0])) if len(bad) else None
    return FrontierTrace(nodes, counts[:, SENDERS].copy(), counts[:, RECEIVERS].copy(),
                         counts[:, TRANSFERS].copy(), counts[:, REDUNDANT].copy(), label_counts, names,
                         popcount(held), first, records)


def _step(rule, arg, front, held, fresh, words, chunk_words, stats, label_counts, record):
    """One step of the rule over every chunk of the frontier; the recorded transfers when ``record``."""
    stats[:] = (0, 0, 0, 0, -1)
    if record:
        cap = max(1, popcount(front) * rule.labels)
        rs, rd, rl = (np.empty(cap, np.int64) for _ in range(3))
    else:
        rs = rd = rl = np.zeros(1, np.int64)
    nrec = 0
    for lo in range(0, words, chunk_words):
        nrec = rule.expand(front, held, fresh, lo, min(words, lo + chunk_words), arg, stats, label_counts,
                           record, rs, rd, rl, nrec)
    return (rs[:nrec].copy(), rd[:nrec].copy(), rl[:nrec].copy()) if record else None


__all__ = ["FrontierTrace", "STATS", "bitmap_bytes", "popcount", "run_frontier"]
