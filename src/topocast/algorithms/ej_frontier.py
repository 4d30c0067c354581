"""The per-step rules of the EJ^(n) broadcasts (Hussain 2018, sections 3 and 4), over node coordinates.

One implementation serves every size: :class:`EJRule` is the rule the
frontier engine (:mod:`topocast.sim.frontier`) runs, and :func:`ej_plan`
wraps it in a :class:`~topocast.plans.frontier.FrontierPlan`.  A step takes the *frontier* (a bitmap
of the nodes that send in this step), applies the sending rule to each of
its nodes from the node's coordinates alone, and sets the receivers' bits in
``held`` (everything received so far) and ``fresh`` (received in this step,
the next frontier).  A receipt by a node whose ``held`` bit is already set is
counted as redundant, so a run that ends with no redundant receipt and every
bit set has delivered exactly once.  With ``record`` the same loop also
writes each transfer out, which is how the small-size Schedules for the
shared step and event engines are made (tests check the two agree step by step).

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

import math

import numba as nb
import numpy as np

from ..plans.frontier import FrontierPlan, Phase
from ..sim.frontier import FIRST_BAD, RECEIVERS, REDUNDANT, SENDERS, TRANSFERS
from ..topology.eisenstein_jacobi import SECTOR_PHASE, EJRing

SECTOR, ITERATIVE = 0, 1


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


class EJRule:
    """The EJ^(n) sending rule for :mod:`topocast.sim.frontier`: the sector tree of ``ring`` in ``n`` dimensions.

    ``phase_of[c]`` is the phase of residue ``c`` (:func:`phase_table`); a
    phase's argument is ``(mode, cur)``: ``(SECTOR, p)`` or ``(ITERATIVE, r)``.
    Labels are ``6 * dimension + direction``.
    """

    def __init__(self, ring: EJRing, n: int, phase_of: np.ndarray):
        self.ring, self.n, self.phase_of = ring, n, phase_of
        self.labels = 6 * n
        self.strides = np.array([ring.norm ** (n - 1 - i) for i in range(n)], dtype=np.int64)

    def expand(self, front, held, fresh, w_lo, w_hi, arg, stats, label_counts, record, rec_src, rec_dst,
               rec_lab, nrec) -> int:
        ring = self.ring
        return _expand(front, held, fresh, w_lo, w_hi, arg[0], arg[1], self.n, ring.norm, self.strides,
                       ring.child_ptr, ring.child_node, ring.child_dir, self.phase_of, stats, label_counts,
                       record, rec_src, rec_dst, rec_lab, nrec)

    def label_reverse(self) -> np.ndarray:
        """Label of the opposite direction: direction ``d`` and ``d + 3`` (mod 6) of one dimension."""
        labels = np.arange(self.labels)
        return labels - labels % 6 + (labels % 6 + 3) % 6


def phase_table(ring: EJRing, improved_single_phase: bool) -> np.ndarray:
    """Phase of every residue: 1 for all non-zero ones (one-to-all), else the all-to-all phase."""
    if improved_single_phase:
        out = np.ones(ring.norm, dtype=np.int64)
    else:
        out = np.array([SECTOR_PHASE.get(int(s), 0) for s in ring.sector], dtype=np.int64)
    out[0] = 0
    return out


def improved_phases(ring: EJRing, n: int) -> list[Phase]:
    """Algorithms 1-2 (section 4.1): one phase of n M steps holding all six sectors."""
    return [Phase("improved", n * ring.diameter, False, (SECTOR, 1))]


def iterative_phases(ring: EJRing, n: int) -> list[Phase]:
    """The algorithm of [22] (section 3): round r runs dimension r for M steps from every holder."""
    return [Phase(f"round {r + 1}", ring.diameter, True, (ITERATIVE, r)) for r in range(n)]


def ej_plan(ring: EJRing, n: int, phases: list[Phase], phase_of: np.ndarray, collective: str = "broadcast",
            symmetric: bool = False, notes: tuple[str, ...] = (), info: dict | None = None) -> FrontierPlan:
    """A :class:`FrontierPlan` of the EJ rule from node 0, with the step lower bound as its hint.

    The hint is the eccentricity n M of node 0 (the diameter: EJ^(n) is
    vertex-transitive) and the doubling bound ``ceil(log_{6n+1} N)``.
    """
    rule = EJRule(ring, n, phase_of)
    nodes = ring.norm ** n
    doubling = math.ceil(math.log(nodes) / math.log(6 * n + 1) - 1e-12) if nodes > 1 else 0
    return FrontierPlan(nodes, rule, tuple(phases), collective, 0, symmetric,
                        rule.label_reverse() if symmetric else None, max(n * ring.diameter, doubling),
                        dict(info or {}), tuple(notes))
