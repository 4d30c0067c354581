"""Circuit engine: tracing, conflicts, dropped circuits, batches, Latin squares."""

import numpy as np
import pytest

from topocast.errors import TopocastError
from topocast.sim.circuit import (MultistageNetwork, delivery_counts, is_latin_square, shift_route, trace,
                                  trace_many, window_route, xor_route)


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
