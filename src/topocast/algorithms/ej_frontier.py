"""The per-step rules of the EJ^(n) broadcasts (Hussain 2018, sections 3 and 4), over node coordinates.

One implementation serves every size: :class:`EJRule` is the rule the
frontier engine (:mod:`topocast.sim.frontier`) runs, and :func:`ej_plan`
wraps it in a :class:`~topocast.plans.frontier.FrontierPlan`.  A step takes
the *frontier* (the nodes that send in this step, in the engine's two
bitmaps), applies the sending rule to each of its nodes from the node's
coordinates alone and marks the receivers (:func:`~topocast.plans.frontier_rule.receive_word`:
a receipt by a node that already holds the message, or already received it
in this step, is counted as redundant), so a run that ends with no
redundant receipt and every node held has delivered exactly once.  With
``record`` the same step also writes each transfer out, which is how the
small-size Schedules for the shared step and event engines are made (tests
check the two agree step by step).

How a step runs (:class:`EJRule`): the coordinates are split into low ones
(a position inside a *block*, padded to whole 64-bit words) and high ones
(the block).  The rule's sends inside a block are tables over the position,
built once per phase argument with numpy from the rule below, and applied
word by word: ``_in_block`` walks each block's frontier words and ORs each
sender's targets in as whole-word masks; blocks are independent, so the
engine's threads share them out.  Sends on high dimensions move whole words
between blocks (``_cross_sector``, ``_cross_lines``).

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
from dataclasses import dataclass

import numba as nb
import numpy as np

from ..infra.bits import bitmap_popcount
from ..infra.bits import popcount as _pop
from ..plans.frontier import FrontierPlan, Phase
from ..plans.frontier_rule import FIRST_BAD, SENDERS, TRANSFERS, receive_word
from ..topology.eisenstein_jacobi import SECTOR_PHASE, EJRing

SECTOR, ITERATIVE = 0, 1


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_TABLE = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN_TABLE[int(((1 << _i) * 0x03F79D71B4CB0A89 % (1 << 64)) >> 58)] = _i

#: most nodes in one block of the layout (the low dimensions that fit)
MAX_BLOCK = 1 << 16
#: tables of recent (network, phase argument) pairs, shared by the rules of repeated runs
_TABLES: dict[tuple, _Tables] = {}
_TABLES_KEPT = 16


@nb.njit(cache=True, nogil=True)
def _in_block(held, mark, b_lo, b_hi, words, send_mask, ptr, ent_word, ent_mask, count, stats, record, rec):
    """Pass 1 over blocks [b_lo, b_hi): every frontier node with a send inside its block, by table.

    A node at position ``l`` of its block sends to the bits ``ent_mask[e]`` of word ``ent_word[e]`` of the
    same block for ``e`` in ``ptr[l]:ptr[l+1]``; ``count[l]`` counts such senders (the engine's transfers
    and label counts follow from the tables).  Returns how many sender positions went to ``rec``.
    """
    nrec = np.int64(0)
    for blk in range(b_lo, b_hi):
        base = blk * words
        for j in range(words):
            f = held[base + j] & mark[base + j] & send_mask[j]
            while f:
                low = f & (~f + np.uint64(1))
                f ^= low
                pos = j * 64 + _DEBRUIJN_TABLE[(low * _DEBRUIJN) >> np.uint64(58)]
                count[pos] += 1
                if record:
                    rec[nrec] = base * 64 + pos
                    nrec += 1
                for e in range(ptr[pos], ptr[pos + 1]):
                    receive_word(held, mark, base + ent_word[e], ent_mask[e], stats)
    return nrec


@nb.njit(cache=True, nogil=True)
def _cross_sector(held, mark, words, blocks, base, high, cur, cross_words, cross_mask, cross_only, child_ptr,
                  child_node, child_dir, phase_of, stats, labels, record, rs, rd, rl):
    """Pass 2 of a SECTOR step: nodes whose low coordinates are all out of phase send on the high dimensions.

    Their sends depend on the block's (high) coordinates only, and move whole words between blocks.
    """
    digits = np.zeros(high, np.int64)
    stride = np.ones(high, np.int64)
    for i in range(high - 2, -1, -1):
        stride[i] = stride[i + 1] * base
    dst = np.zeros(high * (len(child_node) + 1), np.int64)
    lab = np.zeros(high * (len(child_node) + 1), np.int64)
    nrec = np.int64(0)
    for blk in range(blocks):
        first = blk * words
        sending = False
        for q in range(len(cross_words)):
            j = cross_words[q]
            if held[first + j] & mark[first + j] & cross_mask[j]:
                sending = True
                break
        if not sending:
            continue
        rest = blk
        for i in range(high - 1, -1, -1):
            digits[i] = rest % base
            rest //= base
        d = -1
        for i in range(high - 1, -1, -1):
            if digits[i] != 0 and phase_of[digits[i]] == cur:
                d = i
                break
        nsend = 0
        for i in range(max(d, 0), high):
            if i == d:
                c = digits[i]
            elif digits[i] == 0 and i > d:
                c = 0
            else:
                continue
            for e in range(child_ptr[c], child_ptr[c + 1]):
                if i != d and phase_of[child_node[e]] != cur:
                    continue
                dst[nsend] = (blk + (child_node[e] - c) * stride[i]) * words
                lab[nsend] = i * 6 + child_dir[e]
                nsend += 1
        if nsend == 0:
            continue
        for q in range(len(cross_words)):
            j = cross_words[q]
            m = held[first + j] & mark[first + j] & cross_mask[j]
            if not m:
                continue
            p = _pop(m)
            stats[SENDERS] += _pop(m & cross_only[j])
            for s in range(nsend):
                receive_word(held, mark, dst[s] + j, m, stats)
                stats[TRANSFERS] += p
                labels[lab[s]] += p
                if record:
                    nrec = _record_word(m, (first + j) * 64, (dst[s] + j) * 64, lab[s], rs, rd, rl, nrec)
    return nrec


@nb.njit(cache=True, nogil=True)
def _cross_lines(held, mark, words, q_lo, q_hi, base, stride, dim, child_ptr, child_node, child_dir, stats,
                 labels, record, rs, rd, rl):
    """Pass 2 of an ITERATIVE step on a high dimension: every frontier node sends along ``dim``.

    Lines ``q_lo .. q_hi`` (blocks equal but for the coordinate ``dim``) are independent: threads share none.
    """
    nrec = np.int64(0)
    for q in range(q_lo, q_hi):
        top = q // stride
        bottom = q % stride
        for c in range(base):
            if child_ptr[c] == child_ptr[c + 1]:
                continue
            src = ((top * base + c) * stride + bottom) * words
            for j in range(words):
                m = held[src + j] & mark[src + j]
                if not m:
                    continue
                p = _pop(m)
                stats[SENDERS] += p
                for e in range(child_ptr[c], child_ptr[c + 1]):
                    dst = ((top * base + child_node[e]) * stride + bottom) * words
                    receive_word(held, mark, dst + j, m, stats)
                    stats[TRANSFERS] += p
                    labels[dim * 6 + child_dir[e]] += p
                    if record:
                        nrec = _record_word(m, (src + j) * 64, (dst + j) * 64, dim * 6 + child_dir[e], rs, rd, rl,
                                            nrec)
    return nrec


@nb.njit(cache=True, nogil=True)
def _record_word(m, src, dst, label, rs, rd, rl, nrec):
    while m:
        low = m & (~m + np.uint64(1))
        m ^= low
        bit = _DEBRUIJN_TABLE[(low * _DEBRUIJN) >> np.uint64(58)]
        rs[nrec] = src + bit
        rd[nrec] = dst + bit
        rl[nrec] = label
        nrec += 1
    return nrec


@dataclass
class _Tables:
    """One phase argument's sends, for every position of a block (see :meth:`EJRule.tables`)."""

    send_mask: np.ndarray   # (words,) positions with a send inside the block
    ptr: np.ndarray         # (low + 1,) per position: its word entries
    ent_word: np.ndarray
    ent_mask: np.ndarray
    t_ptr: np.ndarray       # (low + 1,) per position: its transfers
    t_off: np.ndarray
    t_lab: np.ndarray
    cross_mask: np.ndarray  # (words,) SECTOR: positions whose sends on high dimensions apply
    cross_only: np.ndarray  # cross_mask without send_mask
    cross_words: np.ndarray
    line_dim: int           # ITERATIVE on a high dimension: that dimension, else -1

    @property
    def any_in_block(self) -> bool:
        return bool(len(self.t_off))


class EJRule:
    """The EJ^(n) sending rule for :mod:`topocast.sim.frontier`: the sector tree of ``ring`` in ``n`` dimensions.

    ``phase_of[c]`` is the phase of residue ``c`` (:func:`phase_table`); a
    phase's argument is ``(mode, cur)``: ``(SECTOR, p)`` or ``(ITERATIVE, r)``.
    Labels are ``6 * dimension + direction``.

    Layout: node ``v`` (coordinates base ``N(alpha)``, the last the lowest) is
    split into its ``k`` low coordinates (a position ``l < N^k`` inside a
    block, ``N^k <= MAX_BLOCK``) and its high ones (the block).  Each block
    takes a whole number of 64-bit words, so every block has the same bit
    pattern: the rule's sends inside a block are tables over ``l`` (built
    with numpy from the rule below, per phase argument), sends on the high
    dimensions move whole words between blocks, and blocks are independent
    work for the engine's threads.  Padding: under 64 bits per block.
    """

    def __init__(self, ring: EJRing, n: int, phase_of: np.ndarray, max_block: int = MAX_BLOCK):
        self.ring, self.n, self.phase_of = ring, n, phase_of
        self.labels = 6 * n
        self.strides = np.array([ring.norm ** (n - 1 - i) for i in range(n)], dtype=np.int64)
        base = ring.norm
        k = n
        while k > 1 and base ** k > max_block:
            k -= 1
        self.k, self.low = k, base ** k
        self.words = (self.low + 63) // 64
        self.blocks = base ** (n - k)
        self.bits = self.blocks * self.words * 64

    def position(self, node):
        """Give the bit position of a node in the padded layout.

        Parameters
        ----------
        node : int or numpy.ndarray
            Node index.

        Returns
        -------
        int or numpy.ndarray
            Bit position.
        """
        return node // self.low * (self.words * 64) + node % self.low

    def node_of(self, position):
        """Give the node at a bit position (inverse of :meth:`position`).

        Parameters
        ----------
        position : int or numpy.ndarray
            Bit position.

        Returns
        -------
        int or numpy.ndarray
            Node index.
        """
        return position // (self.words * 64) * self.low + position % (self.words * 64)

    def tables(self, mode: int, cur: int) -> _Tables:
        """Tabulate the sends of every block position under one phase argument.

        The sends of every block position under ``(mode, cur)``, from the rule over its low coordinates.

        SECTOR: let ``d`` be the last coordinate that is non-zero and in phase
        ``cur``; a node sends to the tree children of ``c_d`` on dimension ``d``
        and, on every later dimension whose coordinate is 0, to the children of
        0 in phase ``cur``.  When ``d`` is a low dimension every send stays in
        the block; when no low coordinate is in phase, the low-dimension sends
        are the children of 0 and the high ones follow the block's coordinates
        (``_cross_sector``).  ITERATIVE on dimension ``r``: the children of
        ``c_r`` on ``r``: a table when ``r`` is low, whole words when high.

        Parameters
        ----------
        mode : int
            ``SECTOR`` or ``ITERATIVE``.
        cur : int
            The phase (SECTOR) or the dimension (ITERATIVE).

        Returns
        -------
        _Tables
            The sends (cached per argument).
        """
        key = (self.ring.a, self.ring.b, self.n, self.k, self.phase_of.tobytes(), int(mode), int(cur))
        if key not in _TABLES:
            while len(_TABLES) >= _TABLES_KEPT:
                _TABLES.pop(next(iter(_TABLES)))
            _TABLES[key] = self._build(int(mode), int(cur))
        return _TABLES[key]

    def _build(self, mode: int, cur: int) -> _Tables:
        ring, k, low, words, base = self.ring, self.k, self.low, self.words, self.ring.norm
        high = self.n - k
        parent = np.repeat(np.arange(base, dtype=np.int64), np.diff(ring.child_ptr))
        child, cdir = ring.child_node, ring.child_dir
        pos = np.arange(low, dtype=np.int64)
        digits = np.stack([pos // base ** (k - 1 - a) % base for a in range(k)], axis=1)
        sends = np.zeros((low, k * len(child)), dtype=bool)
        line_dim, cross = -1, np.zeros(low, dtype=bool)
        if mode == SECTOR:
            inphase = (digits != 0) & (self.phase_of[digits] == cur)
            has = inphase.any(axis=1)
            last = np.where(has, k - 1 - np.argmax(inphase[:, ::-1], axis=1), -1)
            for a in range(k):
                is_d, zero_after = last == a, (digits[:, a] == 0) & (last < a)
                for e in range(len(child)):
                    col = is_d & (digits[:, a] == parent[e])
                    if parent[e] == 0 and self.phase_of[child[e]] == cur:
                        col |= zero_after
                    sends[:, a * len(child) + e] = col
            if high:
                cross = ~has
        elif cur >= high:
            a = cur - high
            for e in range(len(child)):
                sends[:, a * len(child) + e] = digits[:, a] == parent[e]
        else:
            line_dim = int(cur)
        rows, cols = np.nonzero(sends)
        pos, arm = cols // max(1, len(child)), cols % max(1, len(child))
        offset = (child[arm] - parent[arm]) * base ** (k - 1 - pos)
        label = (high + pos) * 6 + cdir[arm]
        target = rows + offset
        assert np.all((target >= 0) & (target < low))
        t_ptr = np.zeros(low + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=low), out=t_ptr[1:])
        key = rows * words + (target >> 6)
        order = np.argsort(key, kind="stable")
        key, bit = key[order], np.left_shift(np.uint64(1), (target[order] & 63).astype(np.uint64))
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        ent_mask = np.bitwise_or.reduceat(bit, starts) if len(key) else np.zeros(0, np.uint64)
        assert np.array_equal(np.bitwise_count(ent_mask).astype(np.int64), np.diff(np.r_[starts, len(key)]))
        ptr = np.zeros(low + 1, dtype=np.int64)
        np.cumsum(np.bincount(key[starts] // words, minlength=low), out=ptr[1:])
        return _Tables(_bits(np.diff(t_ptr) > 0, words), ptr, (key[starts] % words).astype(np.int64),
                       ent_mask.astype(np.uint64), t_ptr, offset.astype(np.int64), label.astype(np.int64),
                       _bits(cross, words), _bits(cross & (np.diff(t_ptr) == 0), words),
                       np.flatnonzero(_bits(cross, words)).astype(np.int64), line_dim)

    def expand_compact(self, held, mark, arg, stats, label_counts, record, workers):
        """Run one step of the rule over the two-bitmap state (:mod:`topocast.plans.frontier_rule`).

        Parameters
        ----------
        held, mark : numpy.ndarray
            The two bitmaps (``uint64`` words), updated in place.
        arg : tuple of int
            The phase argument ``(mode, cur)``.
        stats : numpy.ndarray
            Per-step statistics (columns ``STATS``), updated in place.
        label_counts : numpy.ndarray
            Transfers per arc label, updated in place.
        record : bool
            Also return the transfers.
        workers : object
            Runs the blocks (serially or on the engine's threads).

        Returns
        -------
        tuple of numpy.ndarray or None
            With ``record``: ``(src, dst, label)`` of the step's transfers; else None.
        """
        mode, cur = int(arg[0]), int(arg[1])
        tab = self.tables(mode, cur)
        ring, words = self.ring, self.words
        if record:
            cap = max(1, bitmap_popcount(held & mark))
            sender_pos = np.empty(cap, np.int64)
            rs, rd, rl = (np.empty(cap * self.labels, np.int64) for _ in range(3))
        else:
            sender_pos = rs = rd = rl = np.zeros(1, np.int64)
        n_in = n_cross = 0
        parts = []
        if tab.any_in_block:
            pieces = [(lo, hi) for lo, hi in (workers.split(self.blocks) if not record else [(0, self.blocks)])]
            parts = [(np.zeros(self.low, np.int64), np.array([0, 0, 0, 0, -1], np.int64)) for _ in pieces]
            nrecs = workers.map(
                lambda lo, hi, cnt, st: _in_block(held, mark, lo, hi, words, tab.send_mask, tab.ptr, tab.ent_word,
                                                  tab.ent_mask, cnt, st, record, sender_pos),
                [(lo, hi, cnt, st) for (lo, hi), (cnt, st) in zip(pieces, parts, strict=True)])
            n_in = int(nrecs[0]) if record else 0
        cross_stats = []
        if tab.line_dim >= 0:
            stride = ring.norm ** (self.n - self.k - 1 - tab.line_dim)
            lines = self.blocks // ring.norm
            pieces = workers.split(lines) if not record else [(0, lines)]
            outs = [(np.array([0, 0, 0, 0, -1], np.int64), np.zeros(self.labels, np.int64)) for _ in pieces]
            nrecs = workers.map(
                lambda lo, hi, st, lab: _cross_lines(held, mark, words, lo, hi, ring.norm, stride, tab.line_dim,
                                                     ring.child_ptr, ring.child_node, ring.child_dir, st, lab,
                                                     record, rs, rd, rl),
                [(lo, hi, st, lab) for (lo, hi), (st, lab) in zip(pieces, outs, strict=True)])
            n_cross = int(nrecs[0]) if record else 0
            cross_stats = outs
        elif len(tab.cross_words):
            st, lab = np.array([0, 0, 0, 0, -1], np.int64), np.zeros(self.labels, np.int64)
            n_cross = _cross_sector(held, mark, words, self.blocks, ring.norm, self.n - self.k, cur, tab.cross_words,
                                    tab.cross_mask, tab.cross_only, ring.child_ptr, ring.child_node, ring.child_dir,
                                    self.phase_of, st, lab, record, rs, rd, rl)
            cross_stats = [(st, lab)]
        count = np.zeros(self.low, np.int64)
        bad = []
        for cnt, st in parts:
            count += cnt
            stats[:4] += st[:4]
            bad.append(st[FIRST_BAD])
        for st, lab in cross_stats:
            stats[:4] += st[:4]
            label_counts += lab
            bad.append(st[FIRST_BAD])
        stats[SENDERS] += count.sum()
        stats[TRANSFERS] += int(count @ np.diff(tab.t_ptr))
        np.add.at(label_counts, tab.t_lab, np.repeat(count, np.diff(tab.t_ptr)))
        bad = [b for b in bad if b >= 0]
        stats[FIRST_BAD] = self.node_of(min(bad)) if bad else -1
        if not record:
            return None
        return self._records(tab, sender_pos[:n_in], rs[:n_cross], rd[:n_cross], rl[:n_cross])

    def _records(self, tab: _Tables, senders, rs, rd, rl):
        """Transfers of a recorded step as node ids, ordered by sender, then dimension, then tree order."""
        block_bits = self.words * 64
        pos = senders % block_bits
        many = np.diff(tab.t_ptr)[pos]
        src = np.repeat(senders, many)
        idx = np.repeat(tab.t_ptr[pos] - np.r_[0, np.cumsum(many)[:-1]], many) + np.arange(int(many.sum()))
        src = np.r_[src, rs]
        dst = np.r_[src[:len(idx)] + tab.t_off[idx], rd]
        lab = np.r_[tab.t_lab[idx], rl]
        src, dst = self.node_of(src), self.node_of(dst)
        order = np.lexsort((lab // 6, src))
        return src[order], dst[order], lab[order]

    def label_reverse(self) -> np.ndarray:
        """Give the label of the opposite direction of every label: directions ``d`` and ``d + 3`` (mod 6).

        Returns
        -------
        numpy.ndarray
            Reverse label of every label.
        """
        labels = np.arange(self.labels)
        return labels - labels % 6 + (labels % 6 + 3) % 6


def _bits(flags: np.ndarray, words: int) -> np.ndarray:
    """Pack booleans into a bitmap of ``words`` words (bit ``i % 64`` of word ``i // 64``)."""
    padded = np.zeros(words * 64, dtype=bool)
    padded[:len(flags)] = flags
    return np.packbits(padded.reshape(words, 64), axis=1, bitorder="little").view(np.uint64).ravel().copy()


def phase_table(ring: EJRing, improved_single_phase: bool) -> np.ndarray:
    """Give the phase of every residue: 1 for every non-zero one (one-to-all), else the all-to-all phase.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    improved_single_phase : bool
        True for the one-to-all broadcast (one phase).

    Returns
    -------
    numpy.ndarray
        Phase per residue.
    """
    if improved_single_phase:
        out = np.ones(ring.norm, dtype=np.int64)
    else:
        out = np.array([SECTOR_PHASE.get(int(s), 0) for s in ring.sector], dtype=np.int64)
    out[0] = 0
    return out


def improved_phases(ring: EJRing, n: int) -> list[Phase]:
    """Give the phases of Algorithms 1-2 (section 4.1): one phase of n M steps holding all six sectors.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.

    Returns
    -------
    list of Phase
        One phase.
    """
    return [Phase("improved", n * ring.diameter, False, (SECTOR, 1))]


def iterative_phases(ring: EJRing, n: int) -> list[Phase]:
    """Give the phases of the iterative broadcast (section 3): round r runs dimension r for M steps.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.

    Returns
    -------
    list of Phase
        One phase per dimension.
    """
    return [Phase(f"round {r + 1}", ring.diameter, True, (ITERATIVE, r)) for r in range(n)]


def ej_plan(ring: EJRing, n: int, phases: list[Phase], phase_of: np.ndarray, collective: str = "broadcast",
            symmetric: bool = False, notes: tuple[str, ...] = (), info: dict | None = None) -> FrontierPlan:
    """Make a :class:`FrontierPlan` of the EJ rule from node 0, with the step lower bound as its hint.

    The hint is the eccentricity n M of node 0 (the diameter: EJ^(n) is vertex-transitive) and the doubling
    bound ``ceil(log_{6n+1} N)``.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.
    phases : list of Phase
        The phases.
    phase_of : numpy.ndarray
        Phase of every residue (:func:`phase_table`).
    collective : str, default "broadcast"
        The plan's collective.
    symmetric : bool, default False
        Every other source's message is a translate of node 0's.
    notes : tuple of str, optional
        Notes for the result.
    info : dict, optional
        Extra information for the result.

    Returns
    -------
    FrontierPlan
        The plan.
    """
    rule = EJRule(ring, n, phase_of)
    nodes = ring.norm ** n
    doubling = math.ceil(math.log(nodes) / math.log(6 * n + 1) - 1e-12) if nodes > 1 else 0
    return FrontierPlan(nodes, rule, tuple(phases), collective, 0, symmetric,
                        rule.label_reverse() if symmetric else None, max(n * ring.diameter, doubling),
                        dict(info or {}), tuple(notes))
