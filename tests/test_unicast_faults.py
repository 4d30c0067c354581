"""Unicast on a degraded network (issue 33, item 4): routes on the surviving graph against networkx and hand
counts, Valiant's intermediates among what the source reaches, the channel dependency graph of every scheme
on degraded meshes, tori, Dragonflies and Galaxyflies (networkx's cycle search), the engine's runs (every
message delivered, no worm on a failed link, no deadlock at a saturating load) and the refusals."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.algorithms import unicast_routing as ur
from topocast.faults.connectivity import partners


def surviving_pairs(t) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair of distinct healthy nodes joined by a path, from networkx's components."""
    g = t.to_networkx()
    failed = set(t.failed_nodes.tolist())
    src, dst = [], []
    for comp in nx.connected_components(g):
        nodes = sorted(v for v in comp if v not in failed)
        for s in nodes:
            for d in nodes:
                if s != d:
                    src.append(s)
                    dst.append(d)
    return np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)


def failed_links(t) -> set[tuple[int, int]]:
    """The links of the intact network that the degraded one lacks, both directions."""
    intact = {(int(u), int(v)) for u, v in zip(t.intact.arc_sources, t.intact.indices, strict=True)}
    kept = {(int(u), int(v)) for u, v in zip(t.arc_sources, t.indices, strict=True)}
    return intact - kept


def assert_on_surviving_links(t, ptr, node, arc):
    """Every hop is an arc of the degraded network from the node before to the node after, and none is a
    failed link or touches a failed router."""
    starts = np.zeros(len(node), dtype=bool)
    starts[ptr[:-1]] = True
    k = np.flatnonzero(~starts)
    assert np.all((arc[k] >= 0) & (arc[k] < t.num_arcs))
    assert np.array_equal(t.arc_sources[arc[k]], node[k - 1]) and np.array_equal(t.indices[arc[k]], node[k])
    cut = failed_links(t)
    assert not {(int(node[q - 1]), int(node[q])) for q in k} & cut
    assert not set(node.tolist()) & set(t.failed_nodes.tolist())


def channel_graph(routes: ur.Routes) -> nx.DiGraph:
    """Channel (arc, VC) -> the next channel of the same route, over every route and every alternate."""
    g = nx.DiGraph()
    for r in (routes, routes.alt):
        if r is None:
            continue
        vc = np.zeros(len(r.arc), np.int64) if r.vc is None else r.vc
        for w in range(len(r.ptr) - 1):
            lo, hi = r.ptr[w] + 1, r.ptr[w + 1]
            chans = list(zip(r.arc[lo:hi].tolist(), vc[lo:hi].tolist(), strict=True))
            g.add_nodes_from(chans)
            g.add_edges_from(zip(chans, chans[1:], strict=False))
    return g


# -- planted faults worked out by hand ------------------------------------------------------------------------

def test_a_cut_link_on_a_ring_forces_the_detour():
    """ring:8 without 2-3 is the path 3-4-5-6-7-0-1-2: a route is |p(s) - p(d)| hops, p(v) = (v - 3) mod 8,
    and 2 -> 3 goes the long way round, 7 hops."""
    t = tc.build("ring:8", faults="links=2-3")
    src, dst = surviving_pairs(t)
    assert len(src) == 56
    routes = ur.route(t, "minimal", src, dst, np.random.default_rng(0))
    p = (np.arange(8) - 3) % 8
    assert np.array_equal(routes.hops, np.abs(p[src] - p[dst]))
    w = int(np.flatnonzero((src == 2) & (dst == 3))[0])
    assert routes.node[routes.ptr[w]:routes.ptr[w + 1]].tolist() == [2, 1, 0, 7, 6, 5, 4, 3]
    assert_on_surviving_links(t, routes.ptr, routes.node, routes.arc)
    assert routes.scheme == "hop" and routes.need == 7


def test_a_cut_link_on_a_mesh_routes_around_it():
    """mesh:3x3 without 0-1: 0 -> 1 takes 3 hops (0-3-4-1); every route as long as networkx's shortest path
    on the degraded graph."""
    t = tc.build("mesh:3x3", faults="links=0-1")
    src, dst = surviving_pairs(t)
    routes = ur.route(t, "minimal", src, dst, np.random.default_rng(0))
    g = nx.Graph(tc.build("mesh:3x3").to_networkx())
    g.remove_edge(0, 1)
    length = dict(nx.all_pairs_shortest_path_length(g))
    assert routes.hops.tolist() == [length[s][d] for s, d in zip(src.tolist(), dst.tolist(), strict=True)]
    w = int(np.flatnonzero((src == 0) & (dst == 1))[0])
    assert routes.node[routes.ptr[w]:routes.ptr[w + 1]].tolist() == [0, 3, 4, 1]
    assert_on_surviving_links(t, routes.ptr, routes.node, routes.arc)


def test_a_failed_router_in_a_dragonfly_group():
    """dragonfly:g=5,a=4 with router 5 failed: no route, no message and no intermediate touches it; Valiant
    still uses its group (three healthy routers), entered at its nearest healthy router."""
    t = tc.build("dragonfly:g=5,a=4", faults="routers=5;")
    src, dst = surviving_pairs(t)
    assert len(src) == 19 * 18
    for routing in ("minimal", "valiant", "ugal"):
        routes = ur.route(t, routing, np.repeat(src, 4), np.repeat(dst, 4), np.random.default_rng(1))
        for r in (routes, routes.alt):
            if r is not None:
                assert_on_surviving_links(t, r.ptr, r.node, r.arc)
    mid, size = ur.surviving_intermediates(t, np.repeat(src, 20), np.repeat(dst, 20), np.random.default_rng(2))
    assert size == 4 and 1 in set(mid.tolist())
    r = tc.run("dragonfly:g=5,a=4", "unicast", faults="routers=5;", routing="valiant", load=0.1, cycles=3000,
               seed=2)
    traffic = r.trace.plan.traffic
    assert r.verified and r.metrics["deadlocked_worms"] == 0
    assert 5 not in set(traffic.job_node.tolist()) | set(traffic.slot_node.tolist())
    assert r.metrics["silent_nodes"] == 1 and r.metrics["faults"] == "routers=[5]"


def test_a_group_of_failed_routers_is_never_an_intermediate():
    """dragonfly:g=5,a=4 with group 1 all failed: from group 0 to group 2 Valiant has groups 3 and 4 left,
    each drawn about half the time."""
    t = tc.build("dragonfly:g=5,a=4", faults="routers=[4;5;6;7]")
    s, d = np.zeros(4000, np.int64), np.full(4000, 9, np.int64)
    mid, _ = ur.surviving_intermediates(t, s, d, np.random.default_rng(3))
    assert set(mid.tolist()) == {3, 4}
    assert abs(np.mean(mid == 3) - 0.5) < 0.05


def test_valiant_and_traffic_stay_in_the_source_component():
    """ring:8 cut at 0-1 and 4-5: components {1, 2, 3, 4} and {5, 6, 7, 0}.  Uniform destinations and
    Valiant intermediates stay in the source's; a permutation's pairs across the cut are not sent."""
    t = tc.build("ring:8", faults="links=0-1;4-5")
    members, start, size, _ = partners(t)
    assert size.tolist() == [4] * 8
    comp = {v: frozenset(members[start[v]:start[v] + 4].tolist()) for v in range(8)}
    assert comp[0] == {5, 6, 7, 0} and comp[2] == {1, 2, 3, 4}
    r = tc.run("ring:8", "unicast", faults="links=0-1;4-5", routing="valiant", load=0.2, cycles=3000, seed=4)
    traffic = r.trace.plan.traffic
    assert r.verified and r.metrics["messages_unroutable"] == 0
    for w in range(traffic.num_worms):
        path = traffic.path_node[traffic.path_ptr[w]:traffic.path_ptr[w + 1]].tolist()
        assert set(path) <= comp[path[0]]
    assert_on_surviving_links(t, traffic.path_ptr, traffic.path_node, traffic.path_arc)
    p = tc.run("ring:8", "unicast", faults="links=0-1;4-5", traffic="random-permutation", load=0.2, cycles=3000,
               seed=4)
    plan = p.trace.plan.traffic
    assert p.verified and p.metrics["messages_unroutable"] > 0
    assert all(comp[int(s)] == comp[int(d)] for s, d in zip(plan.job_node, plan.slot_node, strict=True))


def test_the_channel_load_bound_of_a_cut_ring():
    """ring:8 without 2-3, uniform over the 7 others: the middle link of the path carries 4 * 4 = 16 pairs
    one way, each 1/7 of its source's traffic, so the bound is 7/16."""
    r = tc.run("ring:8", "unicast", faults="links=2-3", load=0.05, cycles=2000, seed=1)
    assert r.metrics["throughput_bound"] == pytest.approx(7 / 16)
    assert r.verified


@pytest.mark.parametrize("faults", ["links=4,seed=2", "routers=2,seed=5", "links=0-1;0-4;0-3;0-12"])
def test_the_channel_load_bound_against_every_surviving_route(faults):
    """The degraded bound against brute force: every surviving pair's minimal route, each of weight one over
    the other nodes of its source's component, summed per arc."""
    t = tc.build("torus:4x4", faults=faults)
    src, dst = surviving_pairs(t)
    routes = ur.route(t, "minimal", src, dst, np.random.default_rng(0))
    size = partners(t)[2]
    weight = np.repeat(1.0 / (size[src] - 1), routes.hops)
    loads = np.bincount(routes.arc[routes.arc >= 0], weights=weight, minlength=t.num_arcs)
    r = tc.run("torus:4x4", "unicast", faults=faults, load=0.05, cycles=1000, seed=1)
    assert r.metrics["throughput_bound"] == pytest.approx(1.0 / loads.max())


# -- deadlock freedom ------------------------------------------------------------------------------------------

DEGRADED = [("mesh:4x4", "links=0.15,seed=1", ("minimal", "valiant")),
            ("torus:4x4", "links=4,seed=2", ("minimal", "valiant")),
            ("torus:5x4", "routers=2,seed=3", ("minimal", "valiant")),
            ("dragonfly:g=4,a=3", "links=0.15,seed=3", ("minimal", "valiant", "ugal")),
            ("dragonfly:g=5,a=4", "routers=[5],groups=[2]", ("minimal", "valiant", "ugal")),
            ("galaxyfly:n=3,q=3,a=2", "links=0.1,seed=1", ("minimal", "valiant", "ugal"))]


@pytest.mark.parametrize(("spec", "faults", "routings"), DEGRADED)
def test_the_channel_dependency_graph_stays_acyclic_on_degraded_networks(spec, faults, routings):
    """Every surviving pair routed (three Valiant draws each): with the VC scheme the chained channels have no
    cycle (networkx), every hop is a surviving link and every VC is below the count the plan asks for; on one
    VC the minimal routes of the degraded torus do close a cycle."""
    t = tc.build(spec, faults=faults)
    src, dst = surviving_pairs(t)
    for routing in routings:
        routes = ur.route(t, routing, np.repeat(src, 3), np.repeat(dst, 3), np.random.default_rng(5))
        assert routes.scheme == "hop"
        for r in (routes, routes.alt):
            if r is not None:
                assert_on_surviving_links(t, r.ptr, r.node, r.arc)
                assert r.vc.max() < routes.need
        graph = channel_graph(routes)
        with pytest.raises(nx.NetworkXNoCycle):
            nx.find_cycle(graph)
        assert nx.is_directed_acyclic_graph(graph)
    if spec.startswith("torus"):
        single = ur.route(t, "minimal", src, dst, np.random.default_rng(5), "single")
        assert nx.find_cycle(channel_graph(single))


def test_no_deadlock_at_a_saturating_load_on_a_degraded_torus():
    """torus:4x4 with 4 failed links at load 0.9 (beyond saturation): hop classes never knot; on one VC the
    same traffic knots and the watchdog names the cycle."""
    common = dict(faults="links=4,seed=2", load=0.9, cycles=4000, seed=3, watchdog=200, ejection_channels=0)
    for routing in ("minimal", "valiant"):
        r = tc.run("torus:4x4", "unicast", routing=routing, **common)
        assert r.metrics["deadlocked_worms"] == 0 and r.trace.trace.deadlock is None
        assert r.metrics["accepted_load"] > 0
        traffic = r.trace.plan.traffic
        assert_on_surviving_links(tc.build("torus:4x4", faults="links=4,seed=2"), traffic.path_ptr,
                                  traffic.path_node, traffic.path_arc)
    one = tc.run("torus:4x4", "unicast", vc_scheme="single", **common)
    assert one.metrics["deadlocked_worms"] > 0 and one.first_violation.startswith("deadlock")


def test_ugal_on_a_degraded_dragonfly_takes_only_surviving_routes():
    """Whichever route the source picks (the trace's ``worm_route``), it avoids the failed links."""
    spec, faults = "dragonfly:g=5,a=4", "links=0.1,seed=4,label=global"
    r = tc.run(spec, "unicast", faults=faults, routing="ugal", traffic="group-shift", load=0.3, cycles=3000,
               seed=1)
    assert r.verified and r.metrics["deadlocked_worms"] == 0
    traffic, trace = r.trace.plan.traffic, r.trace.trace
    t = tc.build(spec, faults=faults)
    assert trace.worm_route is not None and trace.worm_route.any()
    for w in range(traffic.num_worms):
        lo, hi = (traffic.path_alt[0, w], traffic.path_alt[1, w]) if trace.worm_route[w] else \
            (traffic.path_ptr[w], traffic.path_ptr[w + 1])
        assert_on_surviving_links(t, np.array([0, hi - lo]), traffic.path_node[lo:hi], traffic.path_arc[lo:hi])


# -- refusals -------------------------------------------------------------------------------------------------

def test_what_cannot_route_around_faults_is_refused_in_one_line():
    for params, name in ((dict(routing="dor"), "parameter 'routing'"),
                         (dict(routing="valiant", vc_scheme="ring"), "parameter 'vc_scheme'")):
        with pytest.raises(tc.TopocastError, match=name) as err:
            tc.run("torus:4x4", "unicast", faults="links=0-1", **params)
        assert "\n" not in str(err.value)
    with pytest.raises(tc.TopocastError, match="faults: a degraded network runs on"):
        tc.run("mesh:4x4", "unicast-ecube", faults="links=0-1")
