"""The per-step rules of the EJ^(n) broadcasts, run over node coordinates with a bit per node.

One implementation serves every size.  A step takes the *frontier* (a bitmap
of the nodes that send in this step), applies the sending rule to each of
its nodes from the node's coordinates alone, and sets the receivers' bits in
``held`` (everything received so far) and ``fresh`` (received in this step,
the next frontier).  A receipt by a node whose ``held`` bit is already set is
counted as redundant, so a run that ends with no redundant receipt and every
bit set has delivered exactly once.  With ``record`` the same loop also
writes each transfer out, which is how the small-size Schedules for the
shared step engine are made (tests check the two agree step by step).

Rules (node v = (c_0, ..., c_{n-1}), c_0 the paper's dimension n; T is the
one-dimensional sector tree of :class:`~topocast.topology.eisenstein_jacobi.EJRing`):

* ``SECTOR`` with phase p (improved one-to-all, Algorithms 1-2; the
  all-to-all phases, Algorithms 3-4): let d be the last dimension whose
  coordinate lies in a sector of phase p.  v sends to the T-children of c_d
  in dimension d (its sector on the receiving dimension) and, in every
  later (lower) dimension i with c_i = 0, to the T-children of 0 that lie in
  phase p (ONE-TO-ALL on the lower dimensions).  The improved one-to-all is
  the single phase holding all six sectors.
* ``ITERATIVE`` in dimension r (the algorithm of [22]): v sends to the
  T-children of c_r in dimension r.  A round starts with every holder in the
  frontier.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..progress import SILENT, Progress
from ..topology.eisenstein_jacobi import EJRing, SECTOR_PHASE

SECTOR, ITERATIVE = 0, 1
#: columns of the per-step statistics the kernel accumulates
SENDERS, RECEIVERS, REDUNDANT, TRANSFERS, FIRST_BAD = range(5)


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_TABLE = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN_TABLE[int(((1 << _i) * 0x03F79D71B4CB0A89 % (1 << 64)) >> 58)] = _i


@nb.njit(cache=True)
def _expand(front, held, fresh, w_lo, w_hi, mode, cur, n, base, strides, child_ptr, child_node,
            child_dir, phase_of, stats, label_count, record, rec_src, rec_dst, rec_lab, nrec):
    """Apply the sending rule to the frontier nodes in words [w_lo, w_hi)."""
    coords = np.zeros(n, np.int64)
    word_coords = np.zeros(n, np.int64)
    for w in range(w_lo, w_hi):
        word = front[w]
        if not word:
            continue
        # decode the word's first node once; each node of the word adds its bit with carries
        rest = w * 64
        for i in range(n - 1, -1, -1):
            word_coords[i] = rest % base
            rest //= base
        while word:
            low = word & (~word + np.uint64(1))
            bit = _DEBRUIJN_TABLE[(low * _DEBRUIJN) >> np.uint64(58)]
            word ^= low
            v = w * 64 + bit
            for i in range(n):
                coords[i] = word_coords[i]
            carry = bit
            i = n - 1
            while carry and i >= 0:
                c = coords[i] + carry
                coords[i] = c % base
                carry = c // base
                i -= 1
            if mode == SECTOR:
                d = -1
                for i in range(n - 1, -1, -1):
                    if coords[i] != 0 and phase_of[coords[i]] == cur:
                        d = i
                        break
                first_dim = d if d >= 0 else 0
            else:
                d = cur
                first_dim = cur
            sent = False
            for i in range(first_dim, n):
                if mode == ITERATIVE and i != cur:
                    break
                if i == d:
                    c = coords[i]
                elif coords[i] == 0 and (mode == SECTOR and i > d):
                    c = 0
                else:
                    continue
                for e in range(child_ptr[c], child_ptr[c + 1]):
                    child = child_node[e]
                    if i != d and phase_of[child] != cur:
                        continue
                    target = v + (child - c) * strides[i]
                    tw = target >> 6
                    tb = np.uint64(1) << np.uint64(target & 63)
                    sent = True
                    stats[TRANSFERS] += 1
                    label_count[i * 6 + child_dir[e]] += 1
                    if record:
                        rec_src[nrec] = v
                        rec_dst[nrec] = target
                        rec_lab[nrec] = i * 6 + child_dir[e]
                        nrec += 1
                    if not (fresh[tw] & tb):
                        fresh[tw] |= tb
                        stats[RECEIVERS] += 1
                    if held[tw] & tb:
                        stats[REDUNDANT] += 1
                        if stats[FIRST_BAD] < 0:
                            stats[FIRST_BAD] = target
                    else:
                        held[tw] |= tb
            if sent:
                stats[SENDERS] += 1
    return nrec


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
    return int(_popcount_words(words))


@dataclass
class Phase:
    """A run of consecutive steps under one rule; ``restart`` puts every holder in the frontier."""

    mode: int
    cur: int
    steps: int
    restart: bool
    name: str


@dataclass
class FrontierResult:
    """Per-step figures of a frontier run (one entry per step)."""

    nodes: int
    senders: np.ndarray
    receivers: np.ndarray
    transfers: np.ndarray
    redundant: np.ndarray
    label_counts: np.ndarray  # (steps, 6 n): transfers per (dimension, direction)
    phase_of_step: list[str]
    held_total: int
    first_violation: str | None
    records: list | None = None
    notes: list[str] = field(default_factory=list)

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


def phase_table(ring: EJRing, improved_single_phase: bool) -> np.ndarray:
    """Phase of every residue: 1 for all non-zero ones (one-to-all), else the all-to-all phase."""
    if improved_single_phase:
        out = np.ones(ring.norm, dtype=np.int64)
    else:
        out = np.array([SECTOR_PHASE.get(int(s), 0) for s in ring.sector], dtype=np.int64)
    out[0] = 0
    return out


def run_frontier(ring: EJRing, n: int, phases: list[Phase], phase_of: np.ndarray, record: bool = False,
                 progress: Progress = SILENT, chunk_words: int = 1 << 21,
                 max_bytes: float | None = None) -> FrontierResult:
    """Run ``phases`` from node 0 holding the message; bitmaps of N(alpha)^n bits."""
    nodes = ring.norm ** n
    words = (nodes + 63) // 64
    need = 3 * words * 8
    if max_bytes is not None and need > max_bytes:
        raise TopocastError(f"max-memory: the frontier run on {nodes} nodes needs {need / 2**30:.1f} GiB of bitmaps")
    held = np.zeros(words, dtype=np.uint64)
    front = np.zeros(words, dtype=np.uint64)
    fresh = np.zeros(words, dtype=np.uint64)
    held[0] = front[0] = np.uint64(1)
    strides = np.array([ring.norm ** (n - 1 - i) for i in range(n)], dtype=np.int64)
    total_steps = sum(p.steps for p in phases)
    senders, receivers, transfers, redundant = (np.zeros(total_steps, np.int64) for _ in range(4))
    label_counts = np.zeros((total_steps, 6 * n), np.int64)
    names: list[str] = []
    records = [] if record else None
    first_bad = -1
    dummy = np.zeros(1, np.int64)
    step = 0
    bar = progress.track(range(total_steps), "frontier steps", total=total_steps)
    iterator = iter(bar)
    for phase in phases:
        if phase.restart:
            front[:] = held
        for _ in range(phase.steps):
            next(iterator, None)
            stats = np.array([0, 0, 0, 0, -1], np.int64)
            if record:
                cap = max(1, popcount(front) * 6 * n)
                rs, rd, rl = (np.empty(cap, np.int64) for _ in range(3))
            else:
                rs = rd = rl = dummy
            nrec = 0
            for lo in range(0, words, chunk_words):
                nrec = _expand(front, held, fresh, lo, min(words, lo + chunk_words), phase.mode, phase.cur,
                               n, ring.norm, strides, ring.child_ptr, ring.child_node, ring.child_dir,
                               phase_of, stats, label_counts[step], record, rs, rd, rl, nrec)
            senders[step], receivers[step] = stats[SENDERS], stats[RECEIVERS]
            transfers[step], redundant[step] = stats[TRANSFERS], stats[REDUNDANT]
            if first_bad < 0 <= stats[FIRST_BAD]:
                first_bad = int(stats[FIRST_BAD])
                names_bad = step
            if record:
                records.append((rs[:nrec].copy(), rd[:nrec].copy(), rl[:nrec].copy()))
            names.append(phase.name)
            front, fresh = fresh, front
            fresh[:] = 0
            step += 1
    for _ in iterator:
        pass
    held_total = popcount(held)
    violation = None
    if first_bad >= 0:
        violation = f"node {first_bad} receives the message a second time in step {names_bad + 1}"
    elif held_total != nodes:
        violation = f"{nodes - held_total} nodes never receive the message"
    return FrontierResult(nodes, senders, receivers, transfers, redundant, label_counts, names, held_total,
                          violation, records)


def improved_phases(ring: EJRing, n: int) -> list[Phase]:
    return [Phase(SECTOR, 1, n * ring.diameter, False, "improved")]


def iterative_phases(ring: EJRing, n: int) -> list[Phase]:
    return [Phase(ITERATIVE, r, ring.diameter, True, f"round {r + 1}") for r in range(n)]
