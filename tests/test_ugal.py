"""UGAL-L routing on Dragonfly and Galaxyfly: the source router's choice between a message's minimal and Valiant
routes (unicast_routing ``ugal``, engine ``_choose_route``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import topocast as tc
from topocast.algorithms.unicast_routing import Routes, unicast_worm_plan
from topocast.sim.wormhole.engine import RouterConfig, simulate

NETWORKS = ("dragonfly:g=9,a=4", "galaxyfly:n=3,q=5,a=4")
FLIT_ROUTER = dict(flits=8, buffer_depth=8, startup=0, router_delay=1, link_latency=1, credit_delay=0)


@pytest.mark.parametrize("spec", NETWORKS)
@pytest.mark.parametrize("traffic", ["uniform", "group-shift"])
@pytest.mark.parametrize("router", [{}, FLIT_ROUTER], ids=["default", "flit-level"])
def test_thresholds_at_the_extremes_give_minimal_and_valiant_flit_for_flit(spec, traffic, router):
    """A threshold no queue can pass keeps every message minimal; a threshold below any queue difference sends
    every message on its Valiant route (the same intermediate draws): the runs equal routing=minimal and
    routing=valiant delivery for delivery."""
    kw = dict(traffic=traffic, load=0.3, cycles=1500, seed=2, **router)
    for extreme, routing, share in ((10**9, "minimal", 0.0), (-10**9, "valiant", 1.0)):
        ugal = tc.run(spec, "unicast", routing="ugal", ugal_threshold=extreme, **kw)
        ref = tc.run(spec, "unicast", routing=routing, **kw)
        assert np.array_equal(ugal.trace.trace.slot_time, ref.trace.trace.slot_time)
        assert ugal.metrics["alternate_routes"] == share
        assert ugal.metrics["mean_latency"] == ref.metrics["mean_latency"]


def _ring_routes(topology, paths) -> Routes:
    ptr = np.cumsum([0] + [len(p) for p in paths])
    arc = np.concatenate([[-1] + [topology.arc_index(u, v) for u, v in zip(p, p[1:], strict=False)] for p in paths])
    return Routes(ptr, np.concatenate(paths), arc, None, 1, "single")


@pytest.mark.parametrize("depth", [2, 3, 4, 6])
def test_the_choice_follows_the_queue_rule_at_its_boundary(depth):
    """ring:8, one VC.  Worm E (1 -> 2 -> 3) holds link 1->2 for its 16 flits; worm A (0 -> 1 -> 2) waits behind
    it with ``depth`` flits in node 1's buffer; worm B leaves node 0 at cycle 8 for node 2, minimal 0 -> 1 -> 2
    (2 hops, ``q = depth`` flits queued on its first link) or the other way round (6 hops, an empty first link).
    UGAL-L takes the long way exactly when ``2 * depth > 6 * 0 + threshold``."""
    t = tc.build("ring:8")
    minimal = _ring_routes(t, [[1, 2, 3], [0, 1, 2], [0, 1, 2]])
    alt = _ring_routes(t, [[1, 2, 3], [0, 1, 2], [0, 7, 6, 5, 4, 3, 2]])
    config = RouterConfig(flits=16, buffer_depth=depth, startup=0, injection_channels=2, ejection_channels=1)
    for threshold in range(2 * depth - 3, 2 * depth + 3):
        plan = unicast_worm_plan(np.array([0, 0, 8]), np.array([1, 0, 0]), np.array([3, 2, 2]), minimal.ptr,
                                 minimal.node, minimal.arc, None, cycles=300, warmup=0, drain=0, batches=1, flits=16,
                                 load=None, alt=alt, alt_threshold=threshold)
        trace = simulate(t.num_nodes, t.num_arcs, plan.traffic, config, 300)
        assert trace.kernel == "flits" and trace.worm_inject[2] == 8
        assert trace.worm_route.tolist() == [0, 0, int(2 * depth > threshold)], threshold
        assert np.all(trace.slot_count == 1)
        # the long way round arrives later than the short one would alone, but it does not wait for E and A
        hops = 6 if trace.worm_route[2] else 2
        assert trace.slot_time[2] >= 8 + hops + 16


@pytest.mark.parametrize("spec", NETWORKS)
def test_every_message_arrives_once_under_load_without_deadlock(spec):
    r = tc.run(spec, "unicast", routing="ugal", traffic="group-shift", load=0.6, cycles=2000, seed=4, **FLIT_ROUTER)
    m = r.metrics
    assert m["deadlocked_worms"] == 0 and m["redundant_receipts"] == 0
    assert 0 < m["alternate_routes"] < 1
    assert r.trace.plan.info["throughput_bound"] is None     # no cheap bound for an adaptive routing
    low = tc.run(spec, "unicast", routing="ugal", load=0.02, cycles=3000, seed=4, **FLIT_ROUTER)
    assert low.verified and low.metrics["alternate_routes"] < 0.05


def test_ugal_recovers_adversarial_traffic_on_a_dragonfly():
    """Group-shift traffic (group i to group i + 1) overloads the one global link between two groups under
    minimal routing (Kim et al. 2008, section 4); UGAL-L spreads it and beats both fixed routings."""
    kw = dict(traffic="group-shift", load=0.3, cycles=4000, seed=3)
    lat = {routing: tc.run("dragonfly:g=9,a=4", "unicast", routing=routing, **kw).metrics["mean_latency"]
           for routing in ("minimal", "valiant", "ugal")}
    assert lat["ugal"] < lat["valiant"] < lat["minimal"]


def test_ugal_is_refused_off_the_supernode_families_and_bad_alternates_are_refused():
    with pytest.raises(tc.TopocastError, match="parameter 'routing' ugal runs on dragonfly, galaxyfly"):
        tc.run("mesh:4x4", "unicast", routing="ugal")
    r = tc.run("dragonfly:g=5,a=2", "unicast", routing="ugal", load=0.05, cycles=500, seed=1)
    t = r.trace.plan.traffic
    config = RouterConfig(vcs=8)
    topo = tc.build("dragonfly:g=5,a=2")
    with pytest.raises(tc.TopocastError, match="path_alt must have shape"):
        simulate(topo.num_nodes, topo.num_arcs, replace(t, path_alt=t.path_alt[:, :-1]), config, 100)
    shifted = t.path_alt.copy()
    shifted[0, 0] += 1           # an alternate that starts one position late: another source
    with pytest.raises(tc.TopocastError, match="same source and destination"):
        simulate(topo.num_nodes, topo.num_arcs, replace(t, path_alt=shifted), config, 100)


def test_a_deadlock_on_alternate_routes_is_found_and_named_on_the_routes_taken():
    """One VC and every message on its Valiant route: the knot search and the wait-for cycle follow the routes
    the worms took (their alternates), not the planned minimal ones."""
    r = tc.run("dragonfly:g=5,a=2", "unicast", routing="ugal", vc_scheme="single", load=0.9, cycles=6000, seed=1,
               ugal_threshold=-10**9)
    trace, traffic = r.trace.trace, r.trace.plan.traffic
    assert r.metrics["deadlocked_worms"] > 0 and trace.wait_cycle
    taken = np.flatnonzero(trace.worm_inject >= 0)
    assert np.all(trace.worm_route[taken] == 1)
    links = set()
    for w in taken[trace.worm_done[taken] < 0]:
        nodes = traffic.path_node[traffic.path_alt[0, w]:traffic.path_alt[1, w]].tolist()
        links.update(zip(nodes, nodes[1:], strict=False))
    assert set(trace.wait_cycle) <= links
