"""What a frontier rule writes into, and a rule replayed to list its transfers.

A :class:`~topocast.plans.frontier.FrontierPlan` names a rule; the rule and
whoever steps it share this protocol:

* the per-step statistics a rule accumulates, columns :data:`STATS`
  (:data:`SENDERS`, :data:`RECEIVERS`, :data:`REDUNDANT`, :data:`TRANSFERS`,
  :data:`FIRST_BAD`);
* the two-bitmap state of a rule with ``expand_compact``: a held bit ``H``
  and a mark bit ``X`` per node, four states (not held ``(0, 0)``, held and
  idle ``(1, 0)``, in the frontier ``(1, 1)``, received in this step
  ``(0, 1)``); the rule's kernels mark receipts with :func:`receive_word`
  and :func:`settle` ends a step (``H |= X; X &= ~H_before``).

:func:`replay` steps a plan's two-bitmap rule in one thread with ``record``
on and returns every transfer it wrote, step by step: how an algorithm turns
its rule into a :class:`~topocast.plans.schedule.Schedule` for the step and event
engines at small sizes, without calling an engine.  The frontier engine
(:mod:`topocast.sim.frontier`) runs the same rule over the same state at
every size, in parallel, and measures it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.bits import popcount
from .frontier import FrontierPlan

#: columns of the per-step statistics a rule accumulates
SENDERS, RECEIVERS, REDUNDANT, TRANSFERS, FIRST_BAD = range(5)
STATS = ("senders", "receivers", "redundant", "transfers", "first_bad")


@nb.njit(cache=True, nogil=True)
def receive_word(held, mark, w, bits, stats):
    """Receipts of the nodes ``bits`` of word ``w`` in the two-bitmap state, counted into ``stats``.

    A receipt by a node that is not held and not new makes it new; by any
    other node it is redundant.  ``stats[FIRST_BAD]`` keeps the lowest bit
    position that received a second time (-1: none).

    Parameters
    ----------
    held, mark : numpy.ndarray
        The two bitmaps (``uint64`` words), updated in place.
    w : int
        The word.
    bits : numpy.uint64
        The receiving nodes of that word.
    stats : numpy.ndarray
        ``int64`` per-step statistics (columns :data:`STATS`), updated in place.
    """
    h = held[w]
    x = mark[w]
    if not (bits & (h | x)):
        mark[w] = x | bits
        stats[RECEIVERS] += popcount(bits)
        return
    new = bits & ~(h | x)
    idle = bits & h & ~x
    again = bits & (h | x)
    stats[RECEIVERS] += popcount(new | (bits & h))
    stats[REDUNDANT] += popcount(again)
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
def settle(held, mark, lo, hi):
    """End of a step over words ``[lo, hi)``: new nodes become the frontier, the frontier becomes idle.

    Parameters
    ----------
    held, mark : numpy.ndarray
        The two bitmaps (``uint64`` words), updated in place.
    lo, hi : int
        The words to settle.
    """
    for w in range(lo, hi):
        x = mark[w]
        if x:  # untouched words stay unwritten (no page is faulted in for nothing)
            h = held[w]
            held[w] = h | x
            mark[w] = x & ~h


def state_bytes(plan: FrontierPlan) -> int:
    """Bytes of the bitmaps a run of ``plan`` steps over.

    Two bitmaps of ``rule.bits`` bits for a two-bitmap rule (``expand_compact``), else three of ``nodes`` bits
    (held, frontier, next frontier).

    Parameters
    ----------
    plan : FrontierPlan
        The plan.

    Returns
    -------
    int
        Bytes, whole 64-bit words.
    """
    if hasattr(plan.rule, "expand_compact"):
        return 2 * ((int(plan.rule.bits) + 63) // 64) * 8
    return 3 * ((int(plan.nodes) + 63) // 64) * 8


class SerialWorkers:
    """The thread pool a rule's kernels expect, with one thread: ``map`` runs the pieces in order."""

    threads = 1

    def map(self, fn, pieces) -> list:
        """``[fn(*p) for p in pieces]``."""
        return [fn(*p) for p in pieces]

    def split(self, total: int, per_thread: int = 4, minimum: int = 1) -> list[tuple[int, int]]:
        """``[lo, hi)`` ranges covering ``range(total)``: one thread, so at most ``per_thread`` of them."""
        parts = max(1, min(per_thread, total // max(1, minimum)))
        edges = np.linspace(0, total, parts + 1).astype(np.int64)
        return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]


@dataclass
class Replay:
    """Every transfer a replayed rule wrote: ``records[step] = (src, dst, label)`` arrays, and each step's phase."""

    records: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    phase_of_step: list[str]


def replay(plan: FrontierPlan) -> Replay:
    """Step ``plan``'s two-bitmap rule from its source, ``record`` on, and keep what it wrote.

    Parameters
    ----------
    plan : FrontierPlan
        A plan whose rule has ``expand_compact`` (and ``bits``, ``position``).

    Returns
    -------
    Replay
        The transfers of every step and the phase each step belongs to.

    Raises
    ------
    TopocastError
        When the rule has no two-bitmap step.
    """
    rule = plan.rule
    if not hasattr(rule, "expand_compact"):
        raise TopocastError("frontier plan: only a rule with expand_compact (two bitmaps) can be replayed")
    words = (int(rule.bits) + 63) // 64
    held, mark = np.zeros(words, dtype=np.uint64), np.zeros(words, dtype=np.uint64)
    pos = int(rule.position(plan.source))
    held[pos // 64] = mark[pos // 64] = np.uint64(1) << np.uint64(pos % 64)
    workers = SerialWorkers()
    stats, label_counts = np.zeros(len(STATS), np.int64), np.zeros(rule.labels, np.int64)
    out = Replay([], [])
    for phase in plan.phases:
        if phase.restart:
            np.copyto(mark, held)
        for _ in range(phase.steps):
            stats[:] = (0, 0, 0, 0, -1)
            label_counts[:] = 0
            out.records.append(rule.expand_compact(held, mark, phase.arg, stats, label_counts, True, workers))
            out.phase_of_step.append(phase.name)
            settle(held, mark, 0, words)
    return out


__all__ = ["FIRST_BAD", "RECEIVERS", "REDUNDANT", "SENDERS", "STATS", "TRANSFERS", "Replay", "SerialWorkers",
           "receive_word", "replay", "settle", "state_bytes"]
