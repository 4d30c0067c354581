"""The flit-level wormhole engine: exact zero-load timing, blocking, start-ups, watchdog, routing."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.sim.wormhole import ECUBE, HIGH, LOW, TrafficBuilder, WormholeConfig, simulate, snake_labels
from topocast.sim.wormhole.engine import WormTraffic
from topocast.sim.wormhole.routing import arc_keys, expand_paths
from topocast.algorithms.mesh_unicast import bisection_bound, mean_distance, zero_load_latency


def manhattan(topology, u, v):
    return sum(abs(a - b) for a, b in zip(topology.label(u), topology.label(v)))


def run_plans(topology, plans, config=WormholeConfig(), cycles=100_000):
    """plans: list of (source, generated, dests, plan); returns (trace, traffic, book)."""
    builder = TrafficBuilder(topology)
    for source, gen, dests, plan in plans:
        builder.add(source, gen, dests, plan, config.batch)
    traffic, book = builder.build()
    trace = simulate(topology.num_nodes, topology.num_arcs, traffic, config, cycles)
    return trace, traffic, book


# -- labelling and routing -------------------------------------------------------------------

@given(st.lists(st.integers(2, 6), min_size=1, max_size=3))
@settings(max_examples=30, deadline=None)
def test_snake_labels_are_a_hamiltonian_path(dims):
    topology = tc.build("mesh:" + "x".join(map(str, dims)))
    label = snake_labels(tuple(dims))
    assert sorted(label.tolist()) == list(range(topology.num_nodes))
    order = np.argsort(label)
    for u, v in zip(order[:-1], order[1:]):
        assert topology.has_edge(int(u), int(v))


@given(st.integers(2, 7), st.integers(2, 7), st.data())
@settings(max_examples=25, deadline=None)
def test_ecube_paths_are_shortest_and_dimension_ordered(rows, cols, data):
    topology = tc.build(f"mesh:{rows}x{cols}")
    u = data.draw(st.integers(0, topology.num_nodes - 1))
    v = data.draw(st.integers(0, topology.num_nodes - 1).filter(lambda x: x != u))
    ptr, node, arc, slot = expand_paths(topology, [ECUBE], [u], [0, 1], [v], [0])
    path = node.tolist()
    assert len(path) - 1 == manhattan(topology, u, v)
    rows_seen = [p // cols for p in path]
    # XY: the column changes first, then the row, never back
    turned = False
    for a, b in zip(path[:-1], path[1:]):
        if a // cols != b // cols:
            turned = True
        else:
            assert not turned
    assert rows_seen[-1] == v // cols
    keys = arc_keys(topology)
    assert all(keys[arc[k]] == path[k - 1] * topology.num_nodes + path[k] for k in range(1, len(path)))
    assert slot.tolist() == [-1] * (len(path) - 1) + [0]


@given(st.integers(2, 6), st.integers(2, 6), st.data())
@settings(max_examples=25, deadline=None)
def test_hamiltonian_routes_are_label_monotone_and_shortest_in_subnetwork(rows, cols, data):
    topology = tc.build(f"mesh:{rows}x{cols}")
    label = snake_labels((rows, cols))
    u = data.draw(st.integers(0, topology.num_nodes - 1))
    v = data.draw(st.integers(0, topology.num_nodes - 1).filter(lambda x: x != u))
    kind = HIGH if label[v] > label[u] else LOW
    _, node, _, _ = expand_paths(topology, [kind], [u], [0, 1], [v], [0])
    labels = label[node]
    steps = np.diff(labels)
    assert np.all(steps > 0) if kind == HIGH else np.all(steps < 0)
    # the greedy route is a shortest path in the directed high (or low) subnetwork
    g = nx.DiGraph()
    for a, b in zip(topology.arc_sources.tolist(), topology.indices.tolist()):
        if (label[b] > label[a]) == (kind == HIGH):
            g.add_edge(a, b)
    assert len(node) - 1 == nx.shortest_path_length(g, u, v)


def test_worm_that_cannot_follow_its_order_is_rejected():
    topology = tc.build("mesh:4x4")
    label = snake_labels((4, 4))
    order = np.argsort(label)
    with pytest.raises(tc.TopocastError, match="cannot visit"):
        expand_paths(topology, [HIGH], [int(order[5])], [0, 2], [int(order[9]), int(order[7])], [0, 1])


# -- timing ---------------------------------------------------------------------------------

@given(st.integers(0, 40), st.integers(1, 40), st.integers(0, 20), st.sampled_from(["4x4", "3x5", "2x3x3"]))
@settings(max_examples=12, deadline=None)
def test_unicast_zero_load_latency_is_exact_for_every_pair(startup, flits, prep, dims):
    """Every ordered pair alone in the network: latency == prep + startup + hops + flits."""
    topology = tc.build(f"mesh:{dims}")
    config = WormholeConfig(startup=startup, flits=flits)
    gap = prep + startup + 2 * flits + 40
    plans = []
    expected = []
    for i, (u, v) in enumerate(itertools.permutations(range(topology.num_nodes), 2)):
        plans.append((u, i * gap, [v], [(u, -1, prep, [(ECUBE, [v])])]))
        expected.append(prep + startup + manhattan(topology, u, v) + flits)
    trace, traffic, book = run_plans(topology, plans, config, cycles=len(plans) * gap + 10)
    latency = trace.slot_time - book["gen"]
    assert latency.tolist() == expected
    assert trace.slot_count.tolist() == [1] * len(plans)
    hops = np.diff(traffic.path_ptr) - 1
    assert trace.flit_moves == int((flits * (hops + 2)).sum())


def test_closed_form_mean_distance_and_bisection_bound():
    topology = tc.build("mesh:16x16")
    d = np.array([[manhattan(topology, u, v) for v in range(0, 256, 1)] for u in range(0, 256, 17)])
    g = nx.grid_2d_graph(16, 16)
    exact = sum(sum(nx.single_source_shortest_path_length(g, s).values()) for s in g) / (256 * 255)
    assert mean_distance((16, 16)) == pytest.approx(exact, rel=1e-12)
    assert zero_load_latency((16, 16)) == pytest.approx(33 + exact + 32)
    assert bisection_bound((16, 16)) == 0.25
    assert d.max() == 30


def test_multidestination_worm_drops_copies_on_the_way():
    """A path-based worm: destination at path position p has the message at cycle S + p + L."""
    topology = tc.build("mesh:4x4")
    label = snake_labels((4, 4))
    order = np.argsort(label).tolist()
    source, dests = order[0], [order[3], order[6], order[15]]
    config = WormholeConfig(startup=33, flits=32)
    trace, traffic, _ = run_plans(topology, [(source, 0, dests, [(source, -1, 2, [(HIGH, dests)])])], config)
    positions = np.flatnonzero(traffic.path_slot >= 0)
    start = 2 + 33
    assert trace.slot_time.tolist() == [start + int(p) + 32 for p in positions]
    assert trace.slot_count.tolist() == [1, 1, 1]


def test_blocked_header_waits_for_the_tail():
    """Two worms want channel 1->2 of a mesh row: the loser waits exactly one message length."""
    topology = tc.build("mesh:2x4")
    config = WormholeConfig(startup=10, flits=8)
    plans = [(0, 0, [3], [(0, -1, 0, [(ECUBE, [3])])]),
             (1, 0, [3], [(1, -1, 0, [(ECUBE, [3])])])]
    trace, _, _ = run_plans(topology, plans, config)
    s, L = 10, 8
    # worm from node 1 wins 1->2 at cycle s+1; worm from 0 reaches node 1 then waits for its tail
    assert trace.slot_time.tolist() == [s + 2 * L + 3, s + 2 + L]


def test_ejection_channels_limit_concurrent_deliveries():
    topology = tc.build("mesh:3x3")
    config = WormholeConfig(startup=0, flits=16, ejection_channels=1)
    centre = 4
    plans = [(u, 0, [centre], [(u, -1, 0, [(ECUBE, [centre])])]) for u in (1, 3)]
    trace, _, _ = run_plans(topology, plans, config)
    assert sorted(trace.slot_time.tolist()) == [1 + 16, 1 + 16 + 16]
    unlimited = WormholeConfig(startup=0, flits=16, ejection_channels=0)
    trace, _, _ = run_plans(topology, plans, unlimited)
    assert trace.slot_time.tolist() == [17, 17]


def test_startups_come_in_batches_of_injection_channels():
    topology = tc.build("mesh:5x5")
    config = WormholeConfig(startup=33, flits=4)
    source = 12
    dests = [0, 1, 2, 3, 4, 20]
    plan = [(source, -1, 8, [(ECUBE, [d]) for d in dests])]
    trace, _, book = run_plans(topology, [(source, 0, dests, plan)], config)
    assert trace.worm_inject.tolist() == [41] * 4 + [74] * 2
    assert book["startups"].tolist() == [2]
    one = WormholeConfig(startup=33, flits=4, worms_per_startup=6)
    trace, _, book = run_plans(topology, [(source, 0, dests, plan)], one)
    # 4 injection channels: the 5th and 6th worms take a channel the cycle after a 4-flit tail leaves it
    assert trace.worm_inject.tolist() == [41] * 4 + [41 + 4 + 1] * 2
    assert book["startups"].tolist() == [1]


def test_relay_job_starts_when_the_leader_has_the_message():
    topology = tc.build("mesh:4x4")
    config = WormholeConfig(startup=33, flits=32)
    plan = [(0, -1, 16, [(ECUBE, [5])]), (5, 5, 16, [(ECUBE, [15])])]
    trace, _, book = run_plans(topology, [(0, 0, [5, 15], plan)], config)
    first = 16 + 33 + 2 + 32
    assert trace.slot_time.tolist() == [first, first + 1 + 16 + 33 + 4 + 32]
    assert trace.job_start.tolist() == [0, first + 1]
    assert book["startups"].tolist() == [2] and book["steps"].tolist() == [2]


def test_watchdog_reports_the_cycle_of_channels():
    """Four worms chasing each other round a 2x2 mesh deadlock; the watchdog names the cycle."""
    topology = tc.build("mesh:2x2")
    keys = arc_keys(topology)
    ring = [0, 1, 3, 2]
    paths = [[ring[i], ring[(i + 1) % 4], ring[(i + 2) % 4]] for i in range(4)]
    node = np.array([v for p in paths for v in p], dtype=np.int64)
    arc = np.array([-1 if k == 0 else int(np.searchsorted(keys, p[k - 1] * 4 + p[k]))
                    for p in paths for k in range(3)], dtype=np.int64)
    slot = np.array([s for i in range(4) for s in (-1, -1, i)], dtype=np.int64)
    traffic = WormTraffic(
        job_node=np.array(ring, dtype=np.int64), job_release=np.zeros(4, dtype=np.int64),
        job_prep=np.zeros(4, dtype=np.int64), job_worm_ptr=np.arange(5, dtype=np.int64),
        path_ptr=np.arange(0, 13, 3, dtype=np.int64), path_node=node, path_arc=arc, path_slot=slot,
        slot_node=np.array([p[-1] for p in paths], dtype=np.int64), slot_job=np.full(4, -1, dtype=np.int64))
    config = WormholeConfig(startup=0, flits=8, watchdog=50)
    trace = simulate(4, topology.num_arcs, traffic, config, 10_000)
    assert trace.deadlock is not None and "deadlock" in trace.deadlock
    assert trace.cycles < 100
    assert sorted(trace.wait_cycle) == sorted([(1, 3), (3, 2), (2, 0), (0, 1)])
    assert trace.slot_count.tolist() == [0, 0, 0, 0]


def explicit_traffic(topology, paths, release):
    """One job per path, released at ``release[i]``; the last node of each path is its destination."""
    keys = arc_keys(topology)
    n = topology.num_nodes
    node = np.array([v for path in paths for v in path], dtype=np.int64)
    arc = np.array([-1 if k == 0 else int(np.searchsorted(keys, path[k - 1] * n + path[k]))
                    for path in paths for k in range(len(path))], dtype=np.int64)
    slot = np.array([i if k == len(path) - 1 else -1 for i, path in enumerate(paths) for k in range(len(path))],
                    dtype=np.int64)
    ptr = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum([len(path) for path in paths], out=ptr[1:])
    m = len(paths)
    return WormTraffic(
        job_node=np.array([path[0] for path in paths], dtype=np.int64), job_release=np.asarray(release, np.int64),
        job_prep=np.zeros(m, dtype=np.int64), job_worm_ptr=np.arange(m + 1, dtype=np.int64), path_ptr=ptr,
        path_node=node, path_arc=arc, path_slot=slot, slot_node=np.array([path[-1] for path in paths], np.int64),
        slot_job=np.full(m, -1, dtype=np.int64))


def test_watchdog_finds_a_knot_while_other_traffic_keeps_moving():
    """A 4-worm knot in one corner of a 4 x 4 mesh, a stream of worms elsewhere: the knot is reported
    long before the stream ends (a global no-progress watchdog would wait for the stream)."""
    topology = tc.build("mesh:4x4")
    ring = [0, 1, 5, 4]
    knot = [[ring[i], ring[(i + 1) % 4], ring[(i + 2) % 4]] for i in range(4)]
    stream = [[12, 13, 14, 15]] * 100
    traffic = explicit_traffic(topology, knot + stream, [0] * 4 + [10 * i for i in range(100)])
    config = WormholeConfig(startup=0, flits=8, watchdog=50)
    trace = simulate(16, topology.num_arcs, traffic, config, 100_000)
    assert trace.deadlock is not None and trace.deadlocked_worms == 4
    assert sorted(trace.wait_cycle) == sorted([(0, 1), (1, 5), (5, 4), (4, 0)])
    assert trace.cycles <= 2 * 50 + 1
    stream_done = trace.slot_count[4:]
    assert 0 < stream_done.sum() < 100           # the stream was still flowing when the knot was reported


def test_consumption_channel_deadlock_is_reported_and_avoidable():
    """One ejection channel per node and multidestination worms holding it at intermediate destinations:
    consumption-channel deadlock; absorbing intermediate copies into a buffer removes it."""
    kw = dict(destinations=5, load=0.2, cycles=3000, seed=3, watchdog=300, ejection_channels=1)
    held = tc.run("mesh:5x5", "multicast-dp", **kw)
    assert not held.verified and "deadlock" in held.first_violation and "eject@" in held.first_violation
    buffered = tc.run("mesh:5x5", "multicast-dp", intermediate_ejection=False, **kw)
    assert buffered.verified and buffered.metrics["deadlock"] is None and buffered.metrics["redundant"] == 0


def test_config_rejects_bad_values():
    with pytest.raises(tc.TopocastError, match="flits"):
        WormholeConfig(flits=0)
    with pytest.raises(tc.TopocastError, match="injection_channels"):
        WormholeConfig(injection_channels=0)


def test_a_plan_must_serve_every_destination_once():
    from topocast.errors import VerificationError

    topology = tc.build("mesh:4x4")
    builder = TrafficBuilder(topology)
    with pytest.raises(VerificationError, match=r"\[15\] not served"):
        builder.add(0, 0, [5, 15], [(0, -1, 0, [(ECUBE, [5])])], 4)
    with pytest.raises(VerificationError, match="served twice"):
        builder.add(0, 0, [5, 15], [(0, -1, 0, [(ECUBE, [5, 15])]), (5, 5, 0, [(ECUBE, [15])])], 4)
