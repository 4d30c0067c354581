"""Circuit engine: tracing, conflicts, dropped circuits, batches, Latin squares."""

import numpy as np
import pytest

from topocast.errors import TopocastError
from topocast.plans.circuit import shift_route, window_route, xor_route
from topocast.sim.circuit import trace, trace_many
from topocast.topology.stages import MultistageNetwork
from topocast.verify.delivery import delivery_counts, is_latin_square


def two_stage():
    """Two 2x2 switches feeding two 2x2 switches, output p of switch a -> input a of switch p."""
    next_in = np.array([0, 2, 1, 3]) + 4
    next_in = np.concatenate([next_in, [-1, -1, -1, -1]])
    return MultistageNetwork("2x2-2x2", np.array([2, 2]), np.array([2, 2]), np.array([2, 2]), next_in,
                             np.arange(4), np.arange(4))


def test_straight_and_cross():
    net = two_stage()
    route = np.zeros(net.route_size, dtype=np.int16)
    net.set_stage(route, 0, shift_route(2, 2, [0, 0]))
    net.set_stage(route, 1, shift_route(2, 2, [0, 0]))
    t = trace(net, route)
    # input 1 leaves switch 0 on port 1 -> switch 1 input 0 -> output 2
    assert t.perm.tolist() == [0, 2, 1, 3]
    assert t.conflicts == 0 and t.dropped == 0 and t.first_conflict() is None
    net.set_stage(route, 1, shift_route(2, 2, [1, 1]))
    assert trace(net, route).perm.tolist() == [1, 3, 0, 2]


def test_conflict_is_reported():
    net = two_stage()
    route = np.zeros(net.route_size, dtype=np.int16)
    net.set_stage(route, 0, np.array([[0, 0], [0, 1]]))  # both inputs of switch 0 on output 0
    net.set_stage(route, 1, shift_route(2, 2, [0, 0]))
    t = trace(net, route)
    assert t.conflicts >= 1
    assert "stage 0 switch 0 output 0 carries 2 circuits" in t.first_conflict()


def test_idle_and_dropped_circuits():
    net = two_stage()
    route = net.empty_route()
    net.set_stage(route, 0, np.array([[0, -1], [1, 0]]))
    net.set_stage(route, 1, np.array([[0, 1], [1, -1]]))
    t = trace(net, route)
    assert t.perm.tolist() == [0, -1, -1, 1]
    assert t.fail_stage.tolist() == [-1, 0, 1, -1]   # input 1 idle, input 2 cut at stage 1
    assert t.dropped == 1 and t.conflicts == 0
    _, _, dropped = trace_many(net, route[None, :])
    assert dropped.tolist() == [1]


def test_batch_matches_single():
    net = two_stage()
    rng = np.random.default_rng(1)
    routes = np.stack([np.concatenate([shift_route(2, 2, rng.integers(0, 2, 2)).ravel(),
                                       shift_route(2, 2, rng.integers(0, 2, 2)).ravel()]) for _ in range(16)])
    perms, conflicts, dropped = trace_many(net, routes)
    for c in range(16):
        single = trace(net, routes[c])
        assert perms[c].tolist() == single.perm.tolist()
        assert conflicts[c] == single.conflicts == 0
        assert dropped[c] == 0


def test_route_size_checked():
    with pytest.raises(TopocastError, match="route"):
        trace(two_stage(), np.zeros(3, dtype=np.int16))


def test_route_port_out_of_range_is_refused():
    """Output 2 of a 2-output switch would silently be output 0 of the next switch."""
    net = two_stage()
    route = np.zeros(net.route_size, dtype=np.int16)
    route[1] = 2
    with pytest.raises(TopocastError, match=r"stage 0 has switches with 2 outputs \(0..1\), got output 2"):
        trace(net, route)
    with pytest.raises(TopocastError, match="got output 2"):
        trace_many(net, np.stack([np.zeros(net.route_size, dtype=np.int16), route]))


def test_state_tables():
    assert shift_route(3, 3, [1]).tolist() == [[1, 2, 0]]
    assert shift_route(2, 4, [3]).tolist() == [[3, 0]]
    assert xor_route(4, 4, [2]).tolist() == [[2, 3, 0, 1]]
    assert xor_route(2, 4, [2]).tolist() == [[2, 3]]
    assert window_route(4, 2, [2]).tolist() == [[-1, -1, 0, 1]]


def test_latin_square_check():
    n = 6
    rows = (np.arange(n)[:, None] + np.arange(n)[None, :]) % n
    assert is_latin_square(rows)
    bad = rows.copy()
    bad[1] = bad[0]
    assert not is_latin_square(bad)
    assert not is_latin_square(rows[:5])
    counts = delivery_counts(n, np.tile(np.arange(n), n), rows.ravel())
    assert np.all(counts == 1)


# -- the one circuit check, fed deliberately broken plans (the oracle is the breakage) ----------


def broken_plan(break_row=None, *, passes=1, collective="alltoall", expected=None):
    """The 4 XOR steps on butterfly:n=2 (a Latin square), with ``break_row(route)`` applied to row 1."""
    import topocast as tc
    from topocast.algorithms.min_alltoall import min_latin_routes
    from topocast.plans.circuit import CircuitPlan
    from topocast.topology.multistage import network_of

    topology = tc.build("butterfly:n=2,d=2")
    net = network_of(topology)

    def routes(rows, _pass):
        out = min_latin_routes(net, rows)
        for k, r in enumerate(rows):
            if r == 1 and break_row is not None:
                break_row(net, out[k])
        return out

    return topology, CircuitPlan(net, 4, passes, routes, 100.0, collective, expected, chunk=3)


def run_plan(topology, plan, max_bytes=None):
    from topocast.execution.execute import execute
    from topocast.sim.models import CostModel, Model

    return execute(topology, plan, "circuit", Model(cost=CostModel(startup=0.0, per_byte=1.0, setup=0.0)),
                   max_bytes=max_bytes)


def test_unbroken_plan_verifies():
    r = run_plan(*broken_plan())
    # 4 rows x 4 inputs receipts; each input sends N - 1 = 3 messages of 100 bytes at 1 s/byte, no start-up
    assert r.verified and r.metrics["latin_square"] and r.metrics["receipts"] == 16 == 4 * 4
    assert r.metrics["time"] == 3 * 100.0 and r.metrics["lower_bound"] == 3 * 100.0


def test_two_circuits_on_one_link_are_named():
    def both_on_output_0(net, route):
        net.set_stage(route, 0, np.array([[0, 0], [0, 1]]))

    r = run_plan(*broken_plan(both_on_output_0))
    assert not r.verified and r.metrics["conflicts"] >= 1 and not r.metrics["latin_square"]
    assert "(first: row 1 pass 0: stage 0 (digit 1) switch 0 output 0 carries 2 circuits)" in r.first_violation
    assert "not a Latin square" in r.first_violation
    # the two circuits share a path: one output reached twice, so an (input, output) pair repeats
    assert not r.verification.exactly_once and r.verification.redundant_receipts >= 1


def test_a_row_missing_an_input_is_incomplete():
    def idle_input_3(net, route):
        route[net.stage_slice(0).start + 3] = -1

    r = run_plan(*broken_plan(idle_input_3))
    assert not r.verification.complete and not r.verification.exactly_once and not r.verified
    assert r.verification.missing_deliveries == 1 and r.metrics["receipts"] == 15
    assert "1 (row, input) pairs are delivered by no pass (first: row 1 input 3)" in r.first_violation


def test_a_cut_circuit_is_a_dropped_circuit():
    def cut_in_stage_1(net, route):
        route[net.stage_slice(1)] = -1

    r = run_plan(*broken_plan(cut_in_stage_1))
    assert r.metrics["dropped_circuits"] == 4 and not r.verification.complete
    assert "4 circuits are cut on the way (first: row 1 pass 0: the circuit of input 0 stops at stage 1" \
        in r.first_violation


def test_a_message_delivered_by_two_passes_is_redundant():
    r = run_plan(*broken_plan(passes=2))
    assert r.verification.complete and not r.verification.exactly_once
    assert r.verification.redundant_receipts == 16
    assert "16 (row, input) pairs are delivered by more than one pass" in r.first_violation


def test_wrong_rows_against_the_promised_permutations():
    identity = np.tile(np.arange(4), (4, 1))
    r = run_plan(*broken_plan(collective="permutation", expected=identity))
    assert r.collective == "permutation" and not r.verified and r.metrics["rows_match_plan"] is False
    assert "3 rows are not the permutation the plan promises (first: row 1)" in r.first_violation
    assert r.verification.exactly_once  # every input delivered once per row: only the rows are wrong


def test_memory_guard():
    with pytest.raises(TopocastError, match="max-memory: circuit plan on 4 inputs checks 4 x 4"):
        run_plan(*broken_plan(), max_bytes=100)


def test_square_helpers_share_the_check():
    """route_square (fat tree) and check_min_square (MIN) report what the shared check finds."""
    from topocast.algorithms import fattree_alltoall as ft
    from topocast.experiments.traces import check_min_square, route_square
    from topocast.topology.fattree import GFTShape
    from topocast.topology.multistage import multistage_network

    shape = GFTShape(2, 2, 2)

    def half_idle(s, ks, g):
        routes = ft.lls_routes(s, ks, g)
        routes[:, s.network.stage_slice(0).start] = -1  # processor 0 never climbs
        return routes

    check = route_square(shape, half_idle, np.arange(8))
    assert check.unrouted == 8 and not check.latin_square and not check.ok
    assert "first: row 0 input 0" in check.verification.first_violation
    found = check_min_square(multistage_network("butterfly", n=3, d=2))
    assert found["latin_square"] and found["undelivered"] == 0
