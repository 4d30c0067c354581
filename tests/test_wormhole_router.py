"""The wormhole router's network options on any topology: virtual channels, buffer depth, router delay,
link latency, credit delay.

Oracles: the closed form of a lone worm's latency derived here, a direct evaluation of the flit recursion
(each flit's departure from each router as the max of its constraints), networkx shortest paths, and the
rigid default path of the engine itself (the flit-level path must reproduce it cycle for cycle), and the
flit-level path's two ways, header-driven trains (one VC per link) and every flit cycle by cycle (several).
"""

import dataclasses
import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.execution.execute import execute
from topocast.measure.wormhole import zero_load_latency as plan_zero_load
from topocast.plans.wormhole import WormPlan
from topocast.sim.models import Model
from topocast.sim.wormhole import RouterConfig, simulate
from topocast.sim.wormhole.engine import _find_knot
from topocast.topology.core import Topology
from worm_builders import worm_traffic

TRACE_FIELDS = ("slot_time", "slot_count", "worm_inject", "worm_done", "job_start", "cycles", "flit_moves",
                "advances", "max_active", "deadlock", "deadlock_cycle", "wait_cycle", "deadlocked_worms")


def worm_plan(traffic, release, cycles, flits):
    """Every worm its own message (generated at its release)."""
    slots = np.bincount(np.searchsorted(traffic.path_ptr, np.flatnonzero(traffic.path_slot >= 0), side="right") - 1,
                        minlength=traffic.num_worms)
    return WormPlan(traffic=traffic, generated=np.asarray(release, np.int64), source=traffic.job_node.copy(),
                    slot_ptr=np.concatenate([[0], np.cumsum(slots)]).astype(np.int64),
                    job_ptr=np.arange(traffic.num_jobs + 1, dtype=np.int64), cycles=cycles, warmup=0, drain=0,
                    batches=2, flits=flits, collective="unicast", stop_when_idle=True)


def random_regular(n=16, d=3, seed=7):
    return Topology.from_networkx(nx.random_regular_graph(d, n, seed=seed))


def random_worms(seed, count, span):
    """``count`` multidestination worms on shortest paths of a random 3-regular graph of 12 nodes (copies at
    random positions of the path, always at its end), released in ``[0, span)``: the generator (for more
    draws), the topology and the traffic."""
    rng = np.random.default_rng(seed)
    graph_seed = seed % 1000
    topology = random_regular(12, 3, seed=graph_seed)
    while not topology.is_connected:  # a few seeds draw two components; every worm needs a path
        graph_seed += 1000
        topology = random_regular(12, 3, seed=graph_seed)
    graph = topology.to_networkx()
    worms, release = [], []
    for _ in range(count):
        u, v = rng.choice(topology.num_nodes, 2, replace=False)
        path = nx.shortest_path(graph, int(u), int(v))
        hops = len(path) - 1
        slots = sorted(set(rng.integers(1, hops + 1, rng.integers(0, hops + 1)).tolist()) | {hops})
        worms.append((path, slots))
        release.append(int(rng.integers(0, span)))
    return rng, topology, worm_traffic(topology, worms, release)


def closed_form(prep, startup, flits, hops, depth=1, router_delay=0, link_latency=1, credit_delay=0):
    """Unicast zero-load latency: the header leaves the source router 1 + r cycles after its start-up ends
    and each later router l + r cycles after the previous one, (h + 1) routers in all; the L - 1 flits behind
    it leave the destination one per cycle, unless a buffer of B flits cannot cover the credit loop of l + c
    cycles, which stretches every group of B flits to l + c cycles: floor((L - 1) / B) * (l + c - B) more."""
    stretch = (flits - 1) // depth * max(0, link_latency + credit_delay - depth)
    return prep + startup + flits + hops * link_latency + (hops + 1) * router_delay + stretch


OPTIONS = [dict(),
           dict(buffer_depth=4, router_delay=2),
           dict(buffer_depth=3, link_latency=2, router_delay=1),
           dict(buffer_depth=8, link_latency=3, credit_delay=2, router_delay=1, vcs=3),
           dict(buffer_depth=2, link_latency=3, credit_delay=1),       # shallow: the credit loop stretches
           dict(buffer_depth=1, router_delay=2, flits=9)]


@pytest.mark.parametrize("spec", ["mesh:4x4", "torus:4x4", "hypercube:4", "random-regular"])
def test_unicast_zero_load_latency_is_the_closed_form_for_every_pair(spec):
    topology = random_regular() if spec == "random-regular" else tc.build(spec)
    graph = topology.to_networkx()
    pairs = list(itertools.permutations(range(topology.num_nodes), 2))
    paths = [nx.shortest_path(graph, u, v) for u, v in pairs]
    rng = np.random.default_rng(3)
    for options in OPTIONS:
        config = RouterConfig(startup=5, **{"flits": 12, **options})
        prep, gap = 3, 400
        release = [i * gap for i in range(len(paths))]
        vcs = [rng.integers(0, config.vcs, len(p)).tolist() for p in paths] if config.vcs > 1 else None
        traffic = worm_traffic(topology, [(p, [len(p) - 1]) for p in paths], release, prep=prep, vcs=vcs)
        trace = simulate(topology.num_nodes, topology.num_arcs, traffic, config, len(paths) * gap)
        expected = [closed_form(prep, config.startup, config.flits, nx.shortest_path_length(graph, u, v),
                                config.buffer_depth, config.router_delay, config.link_latency, config.credit_delay)
                    for u, v in pairs]
        assert (trace.slot_time - np.array(release)).tolist() == expected, options
        plan = worm_plan(traffic, release, len(paths) * gap, config.flits)
        assert plan_zero_load(plan, config).tolist() == expected


def recursion_departures(flits, hops, depth, router_delay, link_latency, credit_delay):
    """D[j][k]: the cycle flit j leaves router k of a lone worm whose start-up ends at cycle 0, evaluated
    straight from the rules: a flit leaves a buffer one cycle after it arrived (the header 1 + router_delay),
    not in the cycle the flit ahead left it nor before, and only into a buffer slot freed (by the flit
    ``depth`` ahead) at least credit_delay cycles earlier; crossing a link takes link_latency cycles."""
    D = [[0] * (hops + 1) for _ in range(flits)]
    enter = [0] * flits                      # the cycle each flit enters the injection buffer
    for j in range(flits):
        if j > 0:
            enter[j] = enter[j - 1] + 1
            if j >= depth:
                enter[j] = max(enter[j], D[j - depth][0] + credit_delay)
        for k in range(hops + 1):
            arrive = enter[j] if k == 0 else D[j][k - 1] + link_latency - 1
            d = arrive + 1 + (router_delay if j == 0 else 0)
            if j > 0:
                d = max(d, D[j - 1][k] + 1)
            if j >= depth and k < hops:
                d = max(d, D[j - depth][k + 1] + credit_delay)
            D[j][k] = d
    return D


@given(st.integers(1, 24), st.integers(1, 6), st.integers(0, 3), st.integers(1, 4), st.integers(0, 3),
       st.sampled_from(["torus:5x5", "hypercube:4", "mesh:3x5"]), st.data())
@settings(max_examples=60, deadline=None)
def test_lone_multidestination_worm_follows_the_flit_recursion(flits, depth, router_delay, link_latency,
                                                               credit_delay, spec, data):
    """Every destination on a path-based worm's path gets the message when the recursion says its tail
    leaves that router; the adapter's worms-alone latency agrees."""
    topology = tc.build(spec)
    graph = topology.to_networkx()
    u, v = data.draw(st.lists(st.integers(0, topology.num_nodes - 1), min_size=2, max_size=2, unique=True))
    path = nx.shortest_path(graph, u, v)
    hops = len(path) - 1
    slots = sorted(set(data.draw(st.lists(st.integers(1, hops), max_size=hops))) | {hops})
    config = RouterConfig(startup=4, flits=flits, buffer_depth=depth, router_delay=router_delay,
                          link_latency=link_latency, credit_delay=credit_delay, watchdog=50)
    traffic = worm_traffic(topology, [(path, slots)], [7], prep=2)
    trace = simulate(topology.num_nodes, topology.num_arcs, traffic, config, 10_000)
    D = recursion_departures(flits, hops, depth, router_delay, link_latency, credit_delay)
    start = 7 + 2 + 4
    assert trace.slot_time.tolist() == [start + D[flits - 1][q] for q in slots]
    assert trace.slot_count.tolist() == [1] * len(slots)
    assert trace.flit_moves == flits * (hops + 2)
    plan = worm_plan(traffic, [7], 10_000, flits)
    assert plan_zero_load(plan, config).tolist() == [start + D[flits - 1][hops] - 7]


def compare_paths(topology, traffic, config, cycles, stop_when_idle=True):
    rigid = simulate(topology.num_nodes, topology.num_arcs, traffic, config, cycles, stop_when_idle, flit_level=False)
    flit = simulate(topology.num_nodes, topology.num_arcs, traffic, config, cycles, stop_when_idle, flit_level=True)
    for name in TRACE_FIELDS:
        a, b = getattr(rigid, name), getattr(flit, name)
        assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, name
    return rigid


@pytest.mark.parametrize("algorithm,kw", [
    ("multicast-dp", dict(destinations=10, load=0.05)),
    ("multicast-mp", dict(destinations=6, load=0.1)),
    ("multicast-cp", dict(destinations=10, load=0.3)),                 # saturated
    ("multicast-qg", dict(destinations=10, load=0.02)),
    ("multicast-dp", dict(destinations=5, load=0.2, ejection_channels=1, watchdog=300)),   # deadlocks
    ("unicast-ecube", dict(load=0.2)),
    ("unicast-ecube", dict(load=0.6)),                                 # saturated
])
def test_flit_level_path_reproduces_the_rigid_worm_on_the_defaults(algorithm, kw):
    """Same slot times, injection and completion cycles, job starts, counters and deadlock report."""
    run = tc.run("mesh:6x6", algorithm, cycles=2500, seed=11, **kw).trace
    router = RouterConfig(**{k: kw[k] for k in ("ejection_channels", "watchdog") if k in kw})
    trace = compare_paths(tc.build("mesh:6x6"), run.plan.traffic, router, run.plan.cycles, run.plan.stop_when_idle)
    assert np.array_equal(trace.slot_time, run.trace.slot_time)


@given(st.integers(0, 2**31), st.integers(1, 12), st.integers(0, 3), st.booleans())
@settings(max_examples=25, deadline=None)
def test_flit_level_path_reproduces_the_rigid_worm_on_random_worms_of_any_graph(seed, flits, ejection, inter):
    """Random multidestination worms on shortest paths of a random regular graph, released close together
    (blocking, knots): both paths agree cycle for cycle."""
    rng, topology, traffic = random_worms(seed, 40, 60)
    config = RouterConfig(startup=int(rng.integers(0, 5)), flits=flits, ejection_channels=ejection,
                          injection_channels=int(rng.integers(1, 4)), intermediate_ejection=inter, watchdog=40)
    compare_paths(topology, traffic, config, 5000)


def ring_traffic(n=8, hops=4, dateline=False):
    """Every node of a unidirectional ring sends a worm ``hops`` hops on; with ``dateline`` a worm moves from
    VC 0 to VC 1 on the hop that enters node 0."""
    topology = tc.build(f"ring:{n}")
    paths = [[(i + k) % n for k in range(hops + 1)] for i in range(n)]
    vcs = [[0] + [int(0 in p[1:k + 1]) for k in range(1, hops + 1)] for p in paths] if dateline else None
    return topology, worm_traffic(topology, [(p, [hops]) for p in paths], [0] * n, vcs=vcs)


@pytest.mark.parametrize("options", [dict(), dict(buffer_depth=2), dict(router_delay=2, buffer_depth=3)])
def test_ring_deadlocks_on_one_vc_and_not_with_a_dateline(options):
    topology, traffic = ring_traffic()
    config = RouterConfig(startup=0, flits=16, watchdog=60, **options)
    trace = simulate(8, topology.num_arcs, traffic, config, 20_000)
    assert trace.deadlock is not None and trace.deadlocked_worms == 8
    assert sorted(trace.wait_cycle) == sorted((i, (i + 1) % 8) for i in range(8))
    assert trace.slot_count.sum() == 0 and trace.cycles < 200
    # two VCs but every hop on VC 0: the same knot, named with its VCs
    two = RouterConfig(startup=0, flits=16, watchdog=60, vcs=2, **options)
    trace = simulate(8, topology.num_arcs, traffic, two, 20_000)
    assert trace.deadlocked_worms == 8 and "/vc 0" in trace.deadlock
    topology, traffic = ring_traffic(dateline=True)
    trace = simulate(8, topology.num_arcs, traffic, two, 20_000)
    assert trace.deadlock is None and trace.slot_count.tolist() == [1] * 8


def test_vcs_share_the_link_one_flit_per_cycle():
    """Two worms from node 0 to node 2 of a path, started together: on one VC the second waits for the first's
    tail and one cycle of re-allocation; on two VCs it gets the link whenever the older worm's flits do not use
    it, here right after them. Either way the link carries the 2L flits in no less than 2L cycles."""
    topology = tc.build("path:3")
    L, S = 10, 4
    for vcs, lag in ((1, L + 1), (2, L)):
        config = RouterConfig(startup=S, flits=L, vcs=vcs, buffer_depth=2)
        traffic = worm_traffic(topology, [([0, 1, 2], [2]), ([0, 1, 2], [2])], [0, 0],
                               vcs=[[0, 0, 0], [0, vcs - 1, vcs - 1]])
        traffic.job_worm_ptr = np.array([0, 2, 2])       # one job launches both worms
        trace = simulate(3, topology.num_arcs, traffic, config, 1000)
        first = closed_form(0, S, L, 2, depth=2)
        assert trace.slot_time.tolist() == [first, first + lag]


def test_knot_needs_owners_that_cannot_compress():
    """Two worms on a 4-ring each hold two links and wait for a link the other holds. With L flits and
    one-flit buffers neither can free it: a knot. With buffers of L flits each can pack its flits ahead of
    the contested link and release it: not a knot (the watchdog must not stop the run)."""
    topology = tc.build("ring:4")
    arc = {(u, v): topology.arc_index(u, v) for u in range(4) for v in range(4) if topology.has_edge(u, v)}
    paths = [[0, 1, 2, 3], [2, 3, 0, 1]]
    path_ptr = np.array([0, 4, 8])
    path_node = np.array(paths[0] + paths[1])
    path_arc = np.array([-1 if k == 0 else arc[(p[k - 1], p[k])] for p in paths for k in range(4)])
    path_slot = np.array([-1, -1, -1, 0, -1, -1, -1, 1])
    owner = np.full(topology.num_arcs, -1)
    for w, p in enumerate(paths):
        owner[arc[(p[0], p[1])]] = owner[arc[(p[1], p[2])]] = w
    head, tail = np.array([2, 2]), np.array([1, 1])
    wait_ch = np.array([arc[(2, 3)], arc[(0, 1)]])
    for depth, knotted in ((1, 2), (3, 2), (4, 0)):
        dead = np.zeros(2, np.bool_)
        found = _find_knot(np.arange(2), 2, head, tail, wait_ch, np.full(2, -1), 4, depth, 4, True, path_ptr[:-1],
                           path_ptr[1:], path_node, path_arc, np.zeros(8, np.int64), path_slot, 1, owner, 4, dead, 0)
        assert found == knotted == dead.sum()


def test_deeper_buffers_accept_more_traffic_at_saturation():
    """One VC, dimension-order routing on an 8x8 mesh, offered load far beyond saturation: buffers that hold a
    good part of a 32-flit worm (8, 16, 32 flits) carry strictly more traffic the deeper they are than one-flit
    buffers; shallow ones (2, 4 flits) change it by no more than the run-to-run noise of a few percent."""
    run = tc.run("mesh:8x8", "unicast-ecube", load=0.6, cycles=6000, seed=1).trace
    topology = tc.build("mesh:8x8")
    accepted = {}
    for depth in (1, 2, 4, 8, 16, 32):
        result = execute(topology, run.plan, "wormhole", Model(router=RouterConfig(buffer_depth=depth)))
        assert result.metrics["saturated"] and result.metrics["deadlocked_worms"] == 0
        accepted[depth] = result.metrics["accepted_load"]
    deep = [accepted[d] for d in (1, 8, 16, 32)]
    assert all(b > a for a, b in zip(deep, deep[1:], strict=False)), accepted
    assert accepted[32] > 1.08 * accepted[1], accepted
    assert min(accepted[2], accepted[4]) > 0.97 * accepted[1], accepted


def test_adapter_runs_any_topology_with_options():
    """A hypercube and a random regular graph, worms far apart: verified, every latency equals the
    worms-alone bound, and the plan's VCs are checked against the router's."""
    for topology in (tc.build("hypercube:5"), random_regular(20, 4)):
        graph = topology.to_networkx()
        pairs = [(0, v) for v in range(1, topology.num_nodes)]
        paths = [nx.shortest_path(graph, u, v) for u, v in pairs]
        release = [300 * i for i in range(len(paths))]
        traffic = worm_traffic(topology, [(p, [len(p) - 1]) for p in paths], release,
                               vcs=[[0] + list(range(len(p) - 1)) for p in paths])   # hop-class VCs
        hops = max(len(p) for p in paths) - 1
        plan = worm_plan(traffic, release, 300 * len(paths), 16)
        router = RouterConfig(startup=3, flits=16, vcs=hops, buffer_depth=3, router_delay=1, link_latency=2)
        result = execute(topology, plan, "wormhole", Model(router=router))
        assert result.verified and result.metrics["receipts"] == len(paths)
        assert result.metrics["mean_latency"] == pytest.approx(result.metrics["lower_bound"])
        with pytest.raises(tc.TopocastError, match="'vcs' must be >= "):
            execute(topology, plan, "wormhole", Model(router=RouterConfig(startup=3, flits=16, vcs=hops - 1)))


def test_options_are_validated():
    for name, bad in (("vcs", 0), ("buffer_depth", 0), ("link_latency", 0), ("router_delay", -1),
                      ("credit_delay", -1), ("vcs", 1.5), ("buffer_depth", "4")):
        with pytest.raises(tc.TopocastError, match=f"parameter '{name}'"):
            RouterConfig(**{name: bad})
    with pytest.raises(tc.TopocastError, match="parameter 'watchdog'"):
        RouterConfig(router_delay=5, link_latency=3, watchdog=7)
    assert RouterConfig(router_delay=5, link_latency=3, watchdog=8).watchdog == 8
    topology, traffic = ring_traffic(dateline=True)
    with pytest.raises(tc.TopocastError, match="parameter 'vcs' must be >= 2"):
        simulate(8, topology.num_arcs, traffic, RouterConfig(), 100)
    with pytest.raises(tc.TopocastError, match="rigid path"):
        simulate(8, topology.num_arcs, traffic, RouterConfig(vcs=2, buffer_depth=2), 100, flit_level=False)


def compare_trains(topology, traffic, config, cycles, stop_when_idle=True):
    """With one VC per link the flit-level path computes a worm's flits from its header's departures (trains);
    with two VCs per link, every hop on VC 0, it moves every flit cycle by cycle: the same network, so the same
    trace (the deadlock report names the VCs only with two)."""
    trains = simulate(topology.num_nodes, topology.num_arcs, traffic, config, cycles, stop_when_idle, flit_level=True)
    flits = simulate(topology.num_nodes, topology.num_arcs, traffic, dataclasses.replace(config, vcs=2), cycles,
                     stop_when_idle, flit_level=True)
    for name in TRACE_FIELDS + ("wait_vcs",):
        a, b = getattr(trains, name), getattr(flits, name)
        if name == "deadlock":
            assert (a is None) == (b is None)
        else:
            assert np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b, name
    return trains


ROUTER_OPTIONS = st.fixed_dictionaries({
    "flits": st.integers(1, 40), "buffer_depth": st.integers(1, 8), "router_delay": st.integers(0, 3),
    "link_latency": st.integers(1, 3), "credit_delay": st.integers(0, 2), "startup": st.integers(0, 4),
    "injection_channels": st.integers(1, 3), "ejection_channels": st.integers(0, 3),
    "intermediate_ejection": st.booleans(), "vc_release": st.sampled_from(["tail-left", "tail-sent"])})


@given(st.integers(0, 2**31), ROUTER_OPTIONS)
@settings(max_examples=60, deadline=None)
def test_trains_move_like_flits_on_random_worms_of_any_graph(seed, options):
    """Random multidestination worms of a random regular graph released close together (blocking, compression,
    stretched trains on shallow buffers with long links and credit delays, knots): every flit's way and the
    header-driven trains agree cycle for cycle."""
    _, topology, traffic = random_worms(seed, 30, 80)
    compare_trains(topology, traffic, RouterConfig(watchdog=60, **options), 6000)


@pytest.mark.parametrize("spec,algorithm,kw,options", [
    ("mesh:8x8", "unicast", dict(routing="dor", load=0.05), dict(buffer_depth=5, router_delay=2, startup=2)),
    ("mesh:8x8", "unicast", dict(routing="dor", load=0.3), dict(buffer_depth=5, router_delay=2, startup=2)),
    ("torus:6x6", "unicast", dict(routing="minimal", vc_scheme="single", load=0.4),
     dict(buffer_depth=2, link_latency=2, credit_delay=1, watchdog=300)),             # deadlocks
    ("mesh:6x6", "multicast-dp", dict(destinations=10, load=0.1), dict(buffer_depth=4)),
    ("mesh:6x6", "multicast-cp", dict(destinations=10, load=0.3), dict(buffer_depth=3, link_latency=3)),
    # tail-sent: worms queue behind other worms' flits in a buffer
    ("mesh:8x8", "unicast", dict(routing="dor", load=0.3),
     dict(buffer_depth=5, router_delay=2, startup=2, vc_release="tail-sent")),
    ("mesh:8x8", "unicast", dict(routing="dor", load=0.08),
     dict(flits=4, buffer_depth=8, credit_delay=2, link_latency=2, vc_release="tail-sent")),
    ("torus:6x6", "unicast", dict(routing="minimal", vc_scheme="single", load=0.4),
     dict(buffer_depth=3, credit_delay=1, watchdog=300, vc_release="tail-sent")),
    ("mesh:6x6", "multicast-cp", dict(destinations=10, load=0.3), dict(buffer_depth=3, vc_release="tail-sent")),
])
def test_trains_move_like_flits_under_load(spec, algorithm, kw, options):
    run = tc.run(spec, algorithm, cycles=2500, seed=5, **kw).trace
    compare_trains(tc.build(spec), run.plan.traffic, RouterConfig(**options), run.plan.cycles,
                   run.plan.stop_when_idle)


def test_flit_times_stay_32_bit():
    topology, traffic = ring_traffic(dateline=True)
    config = RouterConfig(vcs=2, flits=100, buffer_depth=2, link_latency=3, credit_delay=2)
    with pytest.raises(tc.TopocastError, match="parameter 'cycles' must be < 21474"):
        simulate(8, topology.num_arcs, traffic, config, 2**31 - 100)
