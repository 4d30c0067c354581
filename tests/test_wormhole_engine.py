"""The flit-level wormhole engine: exact zero-load timing, blocking, start-ups, watchdog, routing."""

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms.mesh_routing import ECUBE, HIGH, LOW, arc_keys, expand_paths, snake_labels
from topocast.algorithms.mesh_unicast import bisection_bound, mean_distance
from topocast.algorithms.mesh_unicast import closed_form_mean_latency as zero_load_latency
from topocast.algorithms.worm_traffic import TrafficBuilder
from topocast.measure.wormhole import startup_chains
from topocast.measure.wormhole import zero_load_latency as plan_zero_load
from topocast.plans.wormhole import WormTraffic
from topocast.sim.wormhole import RouterConfig, simulate


def manhattan(topology, u, v):
    return sum(abs(a - b) for a, b in zip(topology.label(u), topology.label(v), strict=False))


#: the default router settings (a frozen dataclass, shared as a default argument)
DEFAULT_CONFIG = RouterConfig()


def run_plans(topology, plans, config=DEFAULT_CONFIG, cycles=100_000):
    """plans: list of (source, generated, dests, jobs); returns (trace, traffic, plan)."""
    builder = TrafficBuilder(topology)
    for source, gen, dests, jobs in plans:
        builder.add(source, gen, dests, jobs)
    plan = builder.build(cycles=cycles, flits=config.flits, stop_when_idle=True)
    trace = simulate(topology.num_nodes, topology.num_arcs, plan.traffic, config, cycles)
    return trace, plan.traffic, plan


# -- labelling and routing -------------------------------------------------------------------

@given(st.lists(st.integers(2, 6), min_size=1, max_size=3))
@settings(max_examples=30, deadline=None)
def test_snake_labels_are_a_hamiltonian_path(dims):
    topology = tc.build("mesh:" + "x".join(map(str, dims)))
    label = snake_labels(tuple(dims))
    assert sorted(label.tolist()) == list(range(topology.num_nodes))
    order = np.argsort(label)
    for u, v in zip(order[:-1], order[1:], strict=False):
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
    for a, b in zip(path[:-1], path[1:], strict=False):
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
    for a, b in zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=False):
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
    config = RouterConfig(startup=startup, flits=flits)
    gap = prep + startup + 2 * flits + 40
    plans = []
    expected = []
    for i, (u, v) in enumerate(itertools.permutations(range(topology.num_nodes), 2)):
        plans.append((u, i * gap, [v], [(u, -1, prep, [(ECUBE, [v])])]))
        expected.append(prep + startup + manhattan(topology, u, v) + flits)
    trace, traffic, plan = run_plans(topology, plans, config, cycles=len(plans) * gap + 10)
    latency = trace.slot_time - plan.generated
    assert latency.tolist() == expected
    assert plan_zero_load(plan, config).tolist() == expected
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
    config = RouterConfig(startup=33, flits=32)
    trace, traffic, _ = run_plans(topology, [(source, 0, dests, [(source, -1, 2, [(HIGH, dests)])])], config)
    positions = np.flatnonzero(traffic.path_slot >= 0)
    start = 2 + 33
    assert trace.slot_time.tolist() == [start + int(p) + 32 for p in positions]
    assert trace.slot_count.tolist() == [1, 1, 1]


def test_blocked_header_waits_for_the_tail():
    """Two worms want channel 1->2 of a mesh row: the loser waits exactly one message length."""
    topology = tc.build("mesh:2x4")
    config = RouterConfig(startup=10, flits=8)
    plans = [(0, 0, [3], [(0, -1, 0, [(ECUBE, [3])])]),
             (1, 0, [3], [(1, -1, 0, [(ECUBE, [3])])])]
    trace, _, _ = run_plans(topology, plans, config)
    s, L = 10, 8
    # worm from node 1 wins 1->2 at cycle s+1; worm from 0 reaches node 1 then waits for its tail
    assert trace.slot_time.tolist() == [s + 2 * L + 3, s + 2 + L]


def test_ejection_channels_limit_concurrent_deliveries():
    topology = tc.build("mesh:3x3")
    config = RouterConfig(startup=0, flits=16, ejection_channels=1)
    centre = 4
    plans = [(u, 0, [centre], [(u, -1, 0, [(ECUBE, [centre])])]) for u in (1, 3)]
    trace, _, _ = run_plans(topology, plans, config)
    assert sorted(trace.slot_time.tolist()) == [1 + 16, 1 + 16 + 16]
    unlimited = RouterConfig(startup=0, flits=16, ejection_channels=0)
    trace, _, _ = run_plans(topology, plans, unlimited)
    assert trace.slot_time.tolist() == [17, 17]


def test_startups_come_in_batches_of_injection_channels():
    topology = tc.build("mesh:5x5")
    config = RouterConfig(startup=33, flits=4)
    source = 12
    dests = [0, 1, 2, 3, 4, 20]
    plan = [(source, -1, 8, [(ECUBE, [d]) for d in dests])]
    trace, _, built = run_plans(topology, [(source, 0, dests, plan)], config)
    # by hand: 4 injection channels; the first 4 worms start after prep 8 + start-up 33, the last 2 pay a second
    # start-up of 33
    assert trace.worm_inject.tolist() == [41] * 4 + [74] * 2 == [8 + 33] * 4 + [8 + 33 + 33] * 2
    assert startup_chains(built, config.batch)[0].tolist() == [2]
    one = RouterConfig(startup=33, flits=4, worms_per_startup=6)
    trace, _, built = run_plans(topology, [(source, 0, dests, plan)], one)
    # 4 injection channels: the 5th and 6th worms take a channel the cycle after a 4-flit tail leaves it
    assert trace.worm_inject.tolist() == [41] * 4 + [41 + 4 + 1] * 2
    assert startup_chains(built, one.batch)[0].tolist() == [1]


def test_relay_job_starts_when_the_leader_has_the_message():
    topology = tc.build("mesh:4x4")
    config = RouterConfig(startup=33, flits=32)
    plan = [(0, -1, 16, [(ECUBE, [5])]), (5, 5, 16, [(ECUBE, [15])])]
    trace, _, built = run_plans(topology, [(0, 0, [5, 15], plan)], config)
    first = 16 + 33 + 2 + 32
    assert trace.slot_time.tolist() == [first, first + 1 + 16 + 33 + 4 + 32]
    assert trace.job_start.tolist() == [0, first + 1]
    startups, steps = startup_chains(built, config.batch)
    assert startups.tolist() == [2] and steps.tolist() == [2]
    assert plan_zero_load(built, config).tolist() == [first + 1 + 16 + 33 + 4 + 32]


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
    config = RouterConfig(startup=0, flits=8, watchdog=50)
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
    config = RouterConfig(startup=0, flits=8, watchdog=50)
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
    assert held.metrics["deadlocked_worms"] > 0 and held.metrics["missing_deliveries"] > 0
    assert buffered.metrics["deadlocked_worms"] == 0 and buffered.metrics["redundant_receipts"] == 0
    # at this load the measured window does not drain: the promise fails for that reason alone
    assert buffered.verified or "did not drain" in buffered.first_violation
    assert buffered.metrics["redundant_receipts"] == 0


def test_config_rejects_bad_values():
    with pytest.raises(tc.TopocastError, match="flits"):
        RouterConfig(flits=0)
    with pytest.raises(tc.TopocastError, match="injection_channels"):
        RouterConfig(injection_channels=0)


def test_a_plan_that_omits_or_repeats_a_destination_is_reported_by_the_verification():
    """The builder keeps a faulty plan; the shared verification names the destination it misses or repeats."""
    from topocast.execution.execute import execute
    from topocast.sim.models import Model

    topology = tc.build("mesh:4x4")
    cases = {"omitted": [(0, -1, 0, [(ECUBE, [5])])],
             "twice": [(0, -1, 0, [(ECUBE, [5, 15])]), (5, 5, 0, [(ECUBE, [15])])]}
    for name, jobs in cases.items():
        builder = TrafficBuilder(topology)
        builder.add(0, 0, [5, 15], jobs)
        plan = builder.build(cycles=10_000, flits=32, stop_when_idle=True)
        result = execute(topology, plan, "wormhole", Model(router=RouterConfig()))
        assert not result.verified and "destination 15" in result.first_violation
        if name == "omitted":
            assert result.metrics["missing_deliveries"] == 1 and "no worm's path" in result.first_violation
        else:
            assert result.metrics["redundant_receipts"] == 1 and "2 copies" in result.first_violation
    with pytest.raises(tc.TopocastError, match="not one of its destinations"):
        TrafficBuilder(topology).add(0, 0, [5], [(0, -1, 0, [(ECUBE, [5, 15])])])


def test_deliveries_add_up_on_a_loaded_run():
    """delivered + missing + in flight = required deliveries; the drain window's stragglers are in flight,
    the measured window's are missing (a saturated point fails its promise)."""
    for load in (0.01, 0.03):
        r = tc.run("mesh:8x8", "multicast-cp", destinations=10, load=load, cycles=4000, seed=2)
        m = r.metrics
        delivered = m["receipts"] - m["redundant_receipts"]
        assert delivered + m["missing_deliveries"] + m["in_flight_at_end"] == m["required_deliveries"]
        assert m["in_flight_at_end"] > 0
        assert r.verification.in_flight_at_end == m["in_flight_at_end"]
        assert any(n.startswith("promise:") for n in r.notes)
        if load == 0.01:
            assert r.verified and m["missing_deliveries"] == 0
    # load 0.03: multicasts of the measured window are still under way: missing, and the run says why
    assert m["saturated"] and m["unfinished_messages"] > 0 and m["missing_deliveries"] > 0
    assert not r.verified and "did not drain" in r.first_violation


def test_latency_is_never_below_the_contention_free_bound():
    """Every finished multicast takes at least its worms-alone latency; the run's lower bound holds."""
    for name in ("multicast-dp", "multicast-cp", "multicast-qg", "unicast-ecube"):
        r = tc.run("mesh:6x6", name, load=0.01, cycles=3000, seed=4)
        run = r.trace
        bound = plan_zero_load(run.plan, RouterConfig())
        done = run.latency >= 0
        assert done.sum() > 10 and np.all(run.latency[done] >= bound[done])
        assert r.metrics["lower_bound_ratio"] >= 1
