"""The frontier engine with toy rules on a ring: the engine knows only the rule, verification catches broken ones."""

import numpy as np

import topocast as tc
from frontier_rules import send_bit
from topocast.execution.execute import execute
from topocast.plans.frontier import FrontierPlan, Phase
from topocast.sim.frontier import SENDERS, run_frontier
from topocast.sim.models import Model


class RingRule:
    """Every frontier node sends along the ``(label, offset)`` pairs of the phase argument (pure Python)."""

    labels = 2

    def __init__(self, nodes: int):
        self.nodes = nodes

    def expand(self, front, held, fresh, w_lo, w_hi, arg, stats, label_counts, record, rs, rd, rl, nrec):
        for w in range(w_lo, w_hi):
            word = int(front[w])
            while word:
                bit = (word & -word).bit_length() - 1
                word &= word - 1
                v = w * 64 + bit
                stats[SENDERS] += 1
                for label, offset in arg:
                    nrec = send_bit(v, (v + offset) % self.nodes, label, held, fresh, stats, label_counts,
                                      record, rs, rd, rl, nrec)
        return nrec


def _run(plan):
    return execute(tc.build(f"ring:{plan.nodes}"), plan, "frontier", Model())


def test_a_correct_rule_is_verified():
    plan = FrontierPlan(9, RingRule(9), (Phase("forward", 8, False, ((0, 1),)),))
    result = _run(plan)
    assert result.verified and result.metrics["steps"] == 8 and result.metrics["receipts"] == 8
    assert result.per_step["receivers"] == [1] * 8 and result.metrics["lower_bound"] == 4


def test_a_node_receiving_twice_is_the_first_violation():
    plan = FrontierPlan(9, RingRule(9), (Phase("skip", 4, False, ((0, 1), (0, 2))),))
    result = _run(plan)
    assert not result.verified and result.verification.redundant_receipts > 0
    assert result.first_violation == "node 2 receives the message a second time in step 2"


def test_nodes_never_reached_are_missing():
    result = _run(FrontierPlan(9, RingRule(9), (Phase("forward", 3, False, ((0, 1),)),)))
    assert not result.verified and result.metrics["missing_deliveries"] == 5
    assert result.first_violation == "5 nodes never receive the message"


def test_half_duplex_under_symmetry_rejects_a_link_used_both_ways():
    plan = FrontierPlan(3, RingRule(3), (Phase("both", 1, False, ((0, 1), (1, -1))),), "allgather",
                        symmetric=True, label_reverse=np.array([1, 0]))
    result = _run(plan)
    assert result.metrics["complete"] and result.verification.redundant_receipts == 0
    assert not result.verified and result.first_violation == "a link is used both ways in steps [1]"
    assert result.metrics["receipts"] == 3 * 2 and result.per_step["messages_moved"] == [6]


def test_record_writes_the_transfers():
    trace = run_frontier(FrontierPlan(5, RingRule(5), (Phase("forward", 4, False, ((0, 1),)),)), record=True)
    assert [(int(s[0]), int(d[0])) for s, d, _ in trace.records] == [(0, 1), (1, 2), (2, 3), (3, 4)]
