"""The two-bitmap frontier engine and the EJ rule's block tables against the rule run node by node.

The reference below is the EJ sending rule written out per node from its coordinates (sections 3 and
4 of Hussain 2018), run on the engine's three-bitmap path; the EJ rule proper runs on the two-bitmap
path with its tables and word masks.  Small blocks force many blocks, so the sends between blocks
(whole words, ``_cross_sector`` and ``_cross_lines``) are exercised too.
"""

import numpy as np
import pytest

from frontier_rules import send_bit
from topocast.algorithms.ej_all_to_all import all_to_all_phases
from topocast.algorithms.ej_frontier import SECTOR, EJRule, ej_plan, improved_phases, iterative_phases, phase_table
from topocast.plans.frontier import FrontierPlan, Phase
from topocast.sim.frontier import FIRST_BAD, RECEIVERS, REDUNDANT, SENDERS, receive_word, run_frontier
from topocast.topology.eisenstein_jacobi import ej_ring


class ReferenceRule:
    """The EJ rule node by node in Python (three bitmaps): the specification the tables must meet."""

    def __init__(self, ring, n, phase_of):
        self.ring, self.n, self.phase_of, self.labels = ring, n, phase_of, 6 * n

    def expand(self, front, held, fresh, w_lo, w_hi, arg, stats, label_counts, record, rs, rd, rl, nrec):
        ring, n, base = self.ring, self.n, self.ring.norm
        mode, cur = arg
        for w in range(w_lo, w_hi):
            word = int(front[w])
            while word:
                bit = (word & -word).bit_length() - 1
                word &= word - 1
                v = w * 64 + bit
                coords = [v // base ** (n - 1 - i) % base for i in range(n)]
                if mode == SECTOR:
                    d = max((i for i in range(n) if coords[i] and self.phase_of[coords[i]] == cur), default=-1)
                    dims = range(max(d, 0), n)
                else:
                    d, dims = cur, [cur]
                sent = False
                for i in dims:
                    if i == d:
                        c = coords[i]
                    elif coords[i] == 0 and i > d:
                        c = 0
                    else:
                        continue
                    for e in range(ring.child_ptr[c], ring.child_ptr[c + 1]):
                        child = int(ring.child_node[e])
                        if i != d and self.phase_of[child] != cur:
                            continue
                        t = v + (child - c) * base ** (n - 1 - i)
                        label = 6 * i + int(ring.child_dir[e])
                        sent = True
                        nrec = send_bit(v, t, label, held, fresh, stats, label_counts, record, rs, rd, rl, nrec)
                stats[SENDERS] += sent
        return nrec


def _plans(a, b, n, phases, phase_of, max_block, **kw):
    ring = ej_ring(a, b)
    fast = ej_plan(ring, n, phases, phase_of, **kw)
    fast = FrontierPlan(fast.nodes, EJRule(ring, n, phase_of, max_block=max_block), fast.phases, fast.collective,
                        symmetric=fast.symmetric, label_reverse=fast.label_reverse)
    slow = FrontierPlan(fast.nodes, ReferenceRule(ring, n, phase_of), fast.phases, fast.collective,
                        symmetric=fast.symmetric, label_reverse=fast.label_reverse)
    return fast, slow


def _same(fast, slow, threads=None):
    got, want = run_frontier(fast, record=True, threads=threads), run_frontier(slow, record=True)
    for key in ("senders", "receivers", "transfers", "redundant", "label_counts"):
        assert np.array_equal(getattr(got, key), getattr(want, key)), key
    assert got.held_total == want.held_total and got.first_redundant == want.first_redundant
    for mine, ref in zip(got.records, want.records, strict=True):
        for x, y in zip(mine, ref, strict=True):
            assert np.array_equal(x, y)
    return got


@pytest.mark.parametrize("a,b,n", [(1, 2, 4), (2, 3, 3), (0, 3, 3), (2, 2, 3), (1, 1, 4), (3, 4, 2)])
@pytest.mark.parametrize("max_block", [8, 64, 1 << 16])
def test_one_to_all_equals_the_rule_node_by_node(a, b, n, max_block):
    ring = ej_ring(a, b)
    for phases in (improved_phases(ring, n), iterative_phases(ring, n)):
        fast, slow = _plans(a, b, n, phases, phase_table(ring, True), max_block)
        got = _same(fast, slow)
        assert got.exactly_once and got.steps == n * ring.diameter


@pytest.mark.parametrize("a,b,n", [(2, 3, 3), (1, 2, 3), (2, 2, 2)])
def test_all_to_all_phases_equal_the_rule_node_by_node(a, b, n):
    ring = ej_ring(a, b)
    fast, slow = _plans(a, b, n, all_to_all_phases(ring, n), phase_table(ring, False), 16, collective="allgather",
                        symmetric=True)
    assert _same(fast, slow).exactly_once


def test_threads_change_nothing():
    ring = ej_ring(1, 2)
    for phases in (improved_phases(ring, 5), iterative_phases(ring, 5)):
        fast, slow = _plans(1, 2, 5, phases, phase_table(ring, True), 49)
        assert fast.rule.blocks == 7 ** 3
        _same(fast, slow, threads=2)


def test_a_second_delivery_is_reported_like_the_rule_node_by_node():
    """Rerun from every holder: every receipt of the restart step is redundant; the first is the lowest node."""
    ring = ej_ring(2, 3)
    once = improved_phases(ring, 3)[0]
    phases = [once, Phase("again", once.steps, True, once.arg)]
    fast, slow = _plans(2, 3, 3, phases, phase_table(ring, True), 64)
    got, want = run_frontier(fast), run_frontier(slow)
    step = once.steps
    assert got.first_redundant == (1, step)  # every node but the root receives again; node 1 is the lowest
    assert want.first_redundant[1] == step
    # the step where the second deliveries start is counted alike
    for key in ("senders", "receivers", "transfers", "redundant"):
        assert getattr(got, key)[step] == getattr(want, key)[step], key
    assert got.redundant[step] == got.transfers[step] > 0 and not got.exactly_once


def test_layout_pads_blocks_to_words_and_round_trips():
    rule = EJRule(ej_ring(1, 2), 6, phase_table(ej_ring(1, 2), True), max_block=400)
    assert (rule.k, rule.low, rule.words, rule.blocks) == (3, 343, 6, 343)
    nodes = np.arange(7 ** 6)
    pos = rule.position(nodes)
    assert rule.bits == 343 * 384 and pos.max() < rule.bits and np.all(np.diff(pos) > 0)
    assert np.array_equal(rule.node_of(pos), nodes)


def test_receive_word_states():
    """Not held -> new; idle or in the frontier or new -> redundant; idle -> new again (the next frontier)."""
    held = np.array([0, 0b0110], dtype=np.uint64)  # word 1: nodes 65, 66 held
    mark = np.array([0, 0b1100], dtype=np.uint64)  # node 66 in the frontier (held and marked), node 67 new
    stats = np.array([0, 0, 0, 0, -1], dtype=np.int64)
    receive_word(held, mark, 1, np.uint64(0b10001), stats)  # nodes 64 and 68: first receipts
    assert stats.tolist() == [0, 2, 0, 0, -1] and int(mark[1]) == 0b11101 and int(held[1]) == 0b0110
    # idle 65 and frontier 66 count as receivers (as with three bitmaps), new 67 does not; all three are redundant
    receive_word(held, mark, 1, np.uint64(0b1110), stats)
    assert stats[RECEIVERS] == 4 and stats[REDUNDANT] == 3 and stats[FIRST_BAD] == 65
    assert int(held[1]) == 0b0100 and int(mark[1]) == 0b11111  # 65 is new again, 66 still in the frontier
