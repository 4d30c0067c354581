"""Frontier engine: a per-step rule run over bitmaps, a bit or two per node.

The engine knows nothing of any network.  Each step it hands the frontier
(the nodes that send in this step) to the plan's rule, collects the rule's
counts (senders, receivers, redundant receipts, transfers, the first node
that received twice) and the transfers per link label, and moves the
nodes that received in the step into the next frontier.  A phase that
restarts puts every holder in the frontier.  With ``record`` the transfers
the rule writes are kept per step.

Two states, two kinds of rule:

* **Two bitmaps** (a rule with ``expand_compact``, the EJ rule): a held bit
  ``H`` and a mark bit ``X`` per node encode four states, not held
  ``(0, 0)``, held and idle ``(1, 0)``, in the frontier ``(1, 1)`` and
  received in this step ``(0, 1)``.  A receipt by a node that is not idle
  and not new makes it new; by any other node it is redundant.  After the
  step the new nodes become the frontier and the frontier idle
  (``H |= X; X &= ~H_before``, one pass over both bitmaps).  Memory:
  ``2 * bits / 8`` bytes (EJ_{1+2rho}^(12), 1.38e10 nodes: 3.46 GB).  The
  rule may lay nodes out with padding (``bits >= nodes``, ``position(node)``)
  and runs its own kernels, over the engine's threads (``Workers``).  While
  delivery is exactly once the counts equal the three-bitmap ones; once a
  node has received twice (the run has already failed) a node that receives
  while it is in the frontier is not put in the next one.
* **Three bitmaps** (any rule with ``expand``; tests' toy rules): ``held``,
  ``front`` and ``fresh`` (the next frontier), handed to the rule chunk by
  chunk (``chunk_words`` 64-bit words at a time).  Memory: ``3 * nodes / 8``.

``first_bad`` is the lowest-numbered node that received a second time in the
first step where one did (two-bitmap rules), or the first one the rule met
(three-bitmap rules).  Verification of the counts is
:func:`topocast.verify.delivery.frontier_verification`.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.bits import bitmap_popcount as popcount
from ..infra.bits import popcount as _pop
from ..infra.progress import SILENT, Progress
from ..plans.frontier import FrontierPlan

#: columns of the per-step statistics a rule accumulates
SENDERS, RECEIVERS, REDUNDANT, TRANSFERS, FIRST_BAD = range(5)
STATS = ("senders", "receivers", "redundant", "transfers", "first_bad")

#: words per piece of the bitmap passes (2 MiB of each bitmap)
PASS_WORDS = 1 << 18


@nb.njit(cache=True, nogil=True)
def receive_word(held, mark, w, bits, stats):
    """Receipts of the nodes ``bits`` of word ``w`` (two-bitmap state); counts into ``stats``.

    ``stats[FIRST_BAD]`` keeps the lowest bit position that received a second time (-1: none).
    """
    h = held[w]
    x = mark[w]
    if not (bits & (h | x)):
        mark[w] = x | bits
        stats[RECEIVERS] += _pop(bits)
        return
    new = bits & ~(h | x)
    idle = bits & h & ~x
    again = bits & (h | x)
    stats[RECEIVERS] += _pop(new | (bits & h))
    stats[REDUNDANT] += _pop(again)
    mark[w] = x | new | idle
    held[w] = h & ~idle
    low = again & (~again + np.uint64(1))
    bit = 0
    while low > np.uint64(1):
        low >>= np.uint64(1)
        bit += 1
    pos = w * 64 + bit
    if stats[FIRST_BAD] < 0 or pos < stats[FIRST_BAD]:
        stats[FIRST_BAD] = pos


@nb.njit(cache=True, nogil=True)
def _settle(held, mark, lo, hi):
    """End of a step: new nodes become the frontier, the frontier becomes idle."""
    for w in range(lo, hi):
        x = mark[w]
        if x:  # untouched words stay unwritten (no page is faulted in for nothing)
            h = held[w]
            held[w] = h | x
            mark[w] = x & ~h


class Workers:
    """The engine's threads for a rule's kernels (numba ``nogil``): ``map(fn, pieces)`` in order."""

    def __init__(self, threads: int | None = None):
        if threads is None:
            threads = min(os.cpu_count() or 1, int(nb.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
        self.threads = max(1, int(threads))
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None

    def map(self, fn, pieces) -> list:
        pieces = list(pieces)
        if self._pool is None or len(pieces) < 2:
            return [fn(*p) for p in pieces]
        return list(self._pool.map(lambda p: fn(*p), pieces))

    def split(self, total: int, per_thread: int = 4, minimum: int = 1) -> list[tuple[int, int]]:
        """``[lo, hi)`` ranges covering ``range(total)``: a few per thread, none shorter than ``minimum``."""
        parts = max(1, min(self.threads * per_thread, total // max(1, minimum)))
        edges = np.linspace(0, total, parts + 1).astype(np.int64)
        return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


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


def bitmap_bytes(nodes: int, rule=None) -> int:
    """Memory of the bitmaps: two of ``rule.bits`` bits for a two-bitmap rule, else three of ``nodes`` bits."""
    if rule is not None and hasattr(rule, "expand_compact"):
        return 2 * ((int(rule.bits) + 63) // 64) * 8
    return 3 * ((nodes + 63) // 64) * 8


def run_frontier(plan: FrontierPlan, record: bool = False, progress: Progress = SILENT,
                 chunk_words: int = 1 << 21, max_bytes: float | None = None,
                 threads: int | None = None) -> FrontierTrace:
    """Run ``plan``'s phases from its source holding the message.

    ``threads`` (two-bitmap rules): how many threads run the rule's kernels and the
    end-of-step pass; default all cores for bitmaps of a million words or more, else one.
    """
    nodes = int(plan.nodes)
    need = bitmap_bytes(nodes, plan.rule)
    if max_bytes is not None and need > max_bytes:
        raise TopocastError(f"max-memory: the frontier run on {nodes} nodes needs {need / 2**30:.1f} GiB of bitmaps")
    total = plan.steps
    counts = np.zeros((total, 5), np.int64)
    label_counts = np.zeros((total, plan.rule.labels), np.int64)
    names: list[str] = []
    records: list[Any] | None = [] if record else None
    ticks = iter(progress.track(range(total), "frontier steps", total=total))
    if hasattr(plan.rule, "expand_compact"):
        held_total = _run_compact(plan, record, ticks, counts, label_counts, names, records, threads)
    else:
        held_total = _run_three(plan, record, ticks, counts, label_counts, names, records, chunk_words)
    for _ in ticks:
        pass
    bad = np.flatnonzero(counts[:, FIRST_BAD] >= 0)
    first = (int(counts[bad[0], FIRST_BAD]), int(bad[0])) if len(bad) else None
    return FrontierTrace(nodes, counts[:, SENDERS].copy(), counts[:, RECEIVERS].copy(),
                         counts[:, TRANSFERS].copy(), counts[:, REDUNDANT].copy(), label_counts, names,
                         held_total, first, records)


def _run_compact(plan, record, ticks, counts, label_counts, names, records, threads) -> int:
    """Two bitmaps (held, mark); the rule's kernels write receipts with :func:`receive_word`."""
    rule = plan.rule
    words = (int(rule.bits) + 63) // 64
    held, mark = np.zeros(words, dtype=np.uint64), np.zeros(words, dtype=np.uint64)
    pos = int(rule.position(plan.source))
    held[pos // 64] = mark[pos // 64] = np.uint64(1) << np.uint64(pos % 64)
    workers = Workers(threads if threads is not None or words >= 4 * PASS_WORDS else 1)
    pieces = [(held, mark, lo, hi) for lo, hi in workers.split(words, per_thread=1, minimum=PASS_WORDS)]
    step = 0
    try:
        for phase in plan.phases:
            if phase.restart:
                np.copyto(mark, held)
            for _ in range(phase.steps):
                next(ticks, None)
                counts[step] = (0, 0, 0, 0, -1)
                out = rule.expand_compact(held, mark, phase.arg, counts[step], label_counts[step], record, workers)
                if record:
                    records.append(out)
                names.append(phase.name)
                workers.map(_settle, pieces)
                step += 1
    finally:
        workers.close()
    return popcount(held)


def _run_three(plan, record, ticks, counts, label_counts, names, records, chunk_words) -> int:
    """Three bitmaps (held, front, fresh) handed to ``rule.expand`` chunk by chunk."""
    words = (int(plan.nodes) + 63) // 64
    held, front, fresh = (np.zeros(words, dtype=np.uint64) for _ in range(3))
    bit = np.uint64(1) << np.uint64(plan.source % 64)
    held[plan.source // 64] = front[plan.source // 64] = bit
    step = 0
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
    return popcount(held)


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


__all__ = ["FrontierTrace", "STATS", "Workers", "bitmap_bytes", "popcount", "receive_word", "run_frontier"]
