"""EJ one-to-all broadcasts: the paper's tables, exactly-once on the step engine, frontier = step = product counts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms.ej_broadcast import broadcast_plan, broadcast_schedule, product_counts
from topocast.algorithms.ej_frontier import improved_phases, phase_table
from topocast.execution.execute import execute
from topocast.experiments.ej import PAPER_EXAMPLE, PAPER_TABLE1, PAPER_TABLE2, PAPER_TABLE3
from topocast.experiments.traces import simulate_broadcast
from topocast.plans.frontier import FrontierPlan, Phase
from topocast.sim.frontier import run_frontier
from topocast.sim.models import Model
from topocast.topology.eisenstein_jacobi import ej_ring


def test_table_1_iterative():
    r = tc.run("ej:a=3,b=4,n=3", "one-to-all-iterative")
    assert r.verified and r.metrics["exactly_once"]
    got = list(zip(r.per_step["free"], r.per_step["senders"], r.per_step["receivers"], r.per_step["active"],
                   strict=False))
    assert got == [row[2:] for row in PAPER_TABLE1]
    # the paper: Table 3 (previous one-to-all, 3D) prints 26,733 senders; 50,652 = 37^3 - 1 receivers
    assert r.metrics["total_senders"] == 26733 and r.metrics["total_receivers"] == 50652 == 37 ** 3 - 1


def test_table_2_improved():
    r = tc.run("ej:a=3,b=4,n=3", "one-to-all-improved")
    assert r.verified and r.metrics["exactly_once"]
    got = list(zip(r.per_step["free"], r.per_step["senders"], r.per_step["receivers"], r.per_step["active"],
                   strict=False))
    assert got == [row[1:] for row in PAPER_TABLE2]
    assert r.metrics["total_senders"] == 26011  # the paper: Table 2 total and Table 3 (proposed, 3D)


def test_section_5_worked_example():
    r = tc.run("ej:a=2,b=3,n=2", "ONE-TO-ALL")  # the paper's name is an alias
    assert r.per_step["receivers"] == PAPER_EXAMPLE["receivers"]
    assert r.per_step["senders"] == PAPER_EXAMPLE["senders"]


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_table_3_totals_by_running(n):
    prev = simulate_broadcast(3, 4, n, "iterative")
    new = simulate_broadcast(3, 4, n, "improved")
    assert prev.exactly_once and new.exactly_once
    assert (int(prev.senders.sum()), int(new.senders.sum())) == PAPER_TABLE3[n][:2]


@st.composite
def networks(draw):
    b = draw(st.integers(1, 6))
    a = draw(st.integers(0, b))
    if a * a + a * b + b * b < 2:
        a = 1
    norm = a * a + a * b + b * b
    n = draw(st.integers(1, 3 if norm <= 12 else 2))
    return a, b, n


@settings(max_examples=25, deadline=None)
@given(networks(), st.sampled_from(["improved", "iterative"]))
def test_exactly_once_for_any_alpha_and_three_engines_agree(net, alg):
    a, b, n = net
    topo = tc.build(f"ej:a={a},b={b},n={n}")
    step = tc.run(topo, f"one-to-all-{alg}")
    assert step.verified and step.metrics["exactly_once"], step.first_violation
    ring = ej_ring(a, b)
    # one dimension per round / per tree level: n times the eccentricity of EJ_alpha
    assert step.metrics["steps"] == n * ring.diameter
    if alg == "improved":  # every node receives at its distance: the eccentricity bound is met
        assert step.metrics["steps"] == step.metrics["lower_bound"]
    frontier = simulate_broadcast(a, b, n, alg)
    counts = product_counts(a, b, n, alg)
    for key in ("senders", "receivers", "active", "free"):
        assert step.per_step[key] == getattr(frontier, key).tolist() == counts[key].tolist()
    # all-port, half-duplex: the engine ran the schedule under that model
    assert step.metrics["port_model"] == "all-port, half-duplex"


def test_improved_receives_at_distance_and_iterative_later():
    topo = tc.build("ej:a=1,b=3,n=2")
    dist = tc.topology.metrics.bfs_distances(topo, 0)
    done = tc.run(topo, "one-to-all-improved").trace.completion_step
    assert np.array_equal(done, dist)
    later = tc.run(topo, "one-to-all-iterative").trace.completion_step
    assert np.all(later >= dist) and np.any(later > dist)


def _rerun_plan(plan: FrontierPlan) -> FrontierPlan:
    """The plan with its phase run twice, the second time from every holder: everyone receives twice."""
    (once,) = plan.phases
    again = Phase("again", once.steps, True, once.arg)
    return FrontierPlan(plan.nodes, plan.rule, (once, again), plan.collective, lower_bound=plan.lower_bound)


def test_frontier_verification_reports_a_broken_rule():
    """A deliberately broken rule (every node receives twice) must fail verification with the first violation."""
    t = tc.build("ej:a=2,b=3,n=2")
    plan = _rerun_plan(broadcast_plan(ej_ring(2, 3), 2, "improved"))
    result = execute(t, plan, "frontier", Model())
    v = result.verification
    assert not result.verified and v.complete and not v.exactly_once
    assert v.redundant_receipts >= t.num_nodes - 1  # everyone but the root gets it again, some several times
    assert result.first_violation.startswith("node ") and "second time in step 5" in result.first_violation
    assert result.to_json()["first_violation"] == result.first_violation


def test_frontier_verification_reports_nodes_never_reached():
    plan = broadcast_plan(ej_ring(2, 3), 2, "improved")
    (once,) = plan.phases
    short = FrontierPlan(plan.nodes, plan.rule, (Phase("cut", once.steps - 1, False, once.arg),))
    result = execute(tc.build("ej:a=2,b=3,n=2"), short, "frontier", Model())
    assert not result.verified and not result.metrics["complete"]
    assert result.metrics["missing_deliveries"] == plan.nodes - result.metrics["nodes_complete"] > 0
    assert result.first_violation.endswith("nodes never receive the message")


def test_frontier_trace_counts_the_second_delivery():
    ring = ej_ring(2, 3)
    twice = run_frontier(_rerun_plan(broadcast_plan(ring, 2, "improved")))
    # the first pass takes n * diameter(EJ_{2+3rho}) = 2 * 2 steps (0..3): the rerun's first step, index 4, repeats
    assert not twice.exactly_once and twice.redundant.sum() > 0 and twice.first_redundant[1] == 4 == 2 * ring.diameter


def test_schedule_is_the_recorded_rule():
    topo = tc.build("ej:a=2,b=3,n=2")
    sched = broadcast_schedule(topo, "improved")
    assert sched.num_transfers == topo.num_nodes - 1
    assert sched.num_steps == 4 == 2 * ej_ring(2, 3).diameter  # n * diameter, every node at its distance


def test_frontier_engine_through_run():
    r = tc.run("ej:a=3,b=4,n=2", "one-to-all-improved", engine="frontier")
    # the paper's Table 3 (proposed, 2D) prints 703 senders; 1368 = 37^2 - 1; steps n * diameter(EJ_{3+4rho}) = 2 * 3
    assert r.verified and r.metrics["exactly_once"] and r.metrics["total_senders"] == 703
    assert r.engine == "frontier" and any("bit per node" in note for note in r.notes)
    assert r.metrics["port_model"] == "all-port, half-duplex" and r.metrics["receipts"] == 1368 == 37 ** 2 - 1
    assert r.metrics["lower_bound"] == r.metrics["steps"] == 6 == 2 * ej_ring(3, 4).diameter
    assert r.metrics["lower_bound_ratio"] == 1.0


def test_frontier_plan_is_the_same_rule_as_the_schedule():
    """One algorithm code: the frontier plan's rule, recorded, is the step engine's schedule."""
    topo = tc.build("ej:a=3,b=4,n=2")
    plan = tc.registry.algorithm("one-to-all-iterative").plan(topo, engine="frontier")
    sched = tc.registry.algorithm("one-to-all-iterative").plan(topo, engine="step")
    assert isinstance(plan, FrontierPlan) and plan.collective == "broadcast"
    assert plan.lower_bound == 6 == 2 * ej_ring(3, 4).diameter  # eccentricity of EJ^(2) = 2 x that of EJ_{3+4rho}
    recorded = run_frontier(plan, record=True)
    assert sum(len(src) for src, _, _ in recorded.records) == sched.num_transfers
    assert improved_phases(ej_ring(3, 4), 2)[0].arg == (0, 1) and phase_table(ej_ring(3, 4), True)[0] == 0
