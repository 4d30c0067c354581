"""The ``unicast`` algorithm: routes against networkx and closed forms, virtual channels against the channel
dependency graph, the zero-load latency and the channel-load bound against the simulation and brute force,
deadlock with and without the VC schemes, and every family through ``topocast.run``."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from small_networks import SMALL
from topocast.algorithms import unicast_routing as ur
from topocast.algorithms.unicast_bounds import channel_loads, dor_uniform_loads, tree_loads
from topocast.execution.execute import execute
from topocast.sim.models import Model
from topocast.sim.wormhole.engine import RouterConfig

GRAPHS = ["ring:7", "ring:2", "path:5", "mesh:3x4", "torus:3x4", "torus:2x3", "hypercube:3", "ccc:3",
          "dragonfly:g=4,a=3", "galaxyfly:n=3,q=3,a=2", "butterfly:n=3,d=2", "complete:5", "gft:h=2,m=2,w=2",
          "ej:a=1,b=2,n=1"]
LATTICES = ["ring:7", "ring:2", "ring:6", "path:5", "mesh:3x4", "mesh:2x3x4", "torus:3x4", "torus:2x3",
            "torus:4x4", "hypercube:1", "hypercube:4"]


def topology(spec: str):
    if spec == "petersen":
        return tc.Topology.from_networkx(nx.petersen_graph())
    return tc.build(spec)


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    s, d = np.nonzero(~np.eye(n, dtype=bool))
    return s.astype(np.int64), d.astype(np.int64)


def distances(t) -> np.ndarray:
    g = t.to_networkx()
    out = np.full((t.num_nodes, t.num_nodes), -1)
    for s, row in nx.all_pairs_shortest_path_length(g):
        for d, h in row.items():
            out[s, d] = h
    return out


def assert_valid_paths(t, ptr, node, arc, src, dst):
    """Each path starts at its source, ends at its destination, and every arc leads from the node before
    to the node at its position (so consecutive nodes are adjacent)."""
    starts = ptr[:-1]
    assert np.array_equal(node[starts], src) and np.array_equal(node[ptr[1:] - 1], dst)
    assert np.all(arc[starts] == -1)
    inner = np.ones(len(node), dtype=bool)
    inner[starts] = False
    k = np.flatnonzero(inner)
    assert np.all(arc[k] >= 0)
    assert np.array_equal(t.arc_sources[arc[k]], node[k - 1])
    assert np.array_equal(t.indices[arc[k]], node[k])


# -- minimal ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", GRAPHS + ["petersen"])
def test_minimal_routes_are_shortest_paths_with_the_lowest_arc_first(spec):
    t = topology(spec)
    dist = distances(t)
    src, dst = all_pairs(t.num_nodes)
    ptr, node, arc = ur.minimal_routes(t, src, dst)
    assert_valid_paths(t, ptr, node, arc, src, dst)
    assert np.array_equal(np.diff(ptr) - 1, dist[src, dst])
    # the documented tie-break: no lower arc out of the node leads one hop closer to the destination
    target = np.repeat(dst, np.diff(ptr))
    for k in np.flatnonzero(arc >= 0)[:4000].tolist():
        x, e, goal = int(node[k - 1]), int(arc[k]), int(target[k])
        closer = [a for a in range(t.indptr[x], t.indptr[x + 1]) if dist[t.indices[a], goal] == dist[x, goal] - 1]
        assert e == min(closer)


def test_minimal_refuses_a_disconnected_graph():
    g = nx.Graph([(0, 1), (2, 3)])
    t = tc.Topology.from_networkx(g)
    with pytest.raises(tc.TopocastError, match="not connected"):
        ur.minimal_routes(t, np.array([0]), np.array([3]))


# -- dimension order and datelines --------------------------------------------------------------------

def coords(t, nodes):
    lat = ur.lattice(t)
    return np.stack([(nodes // s) % k for k, s in zip(lat.dims, lat.strides, strict=True)], axis=-1), lat


@pytest.mark.parametrize("spec", LATTICES)
def test_dor_routes_have_the_closed_form_length_and_dimension_order(spec):
    t = tc.build(spec)
    src, dst = all_pairs(t.num_nodes)
    ptr, node, arc, vc = ur.dor_routes(t, src, dst)
    assert_valid_paths(t, ptr, node, arc, src, dst)
    c, lat = coords(t, node)
    cs, _ = coords(t, src)
    cd, _ = coords(t, dst)
    k = lat.dims
    if t.family in ur.WRAP_FAMILIES:
        up = (cd - cs) % k
        expect = np.minimum(up, k - up).sum(axis=1)
    else:
        expect = np.abs(cd - cs).sum(axis=1)  # Manhattan distance (popcount of s xor d on a hypercube)
    assert np.array_equal(np.diff(ptr) - 1, expect)
    if t.family == "hypercube":
        assert np.array_equal(expect, [bin(int(a) ^ int(b)).count("1") for a, b in zip(src, dst, strict=True)])
    for w in range(len(src)):
        seq = c[ptr[w]:ptr[w + 1]]
        moved = np.flatnonzero(np.diff(seq, axis=0))  # rows: hops; columns: the dimension that changed
        dims = np.nonzero(np.diff(seq, axis=0))[1]
        assert len(moved) == len(seq) - 1 and np.all(np.diff(dims) <= 0)  # last dimension first, one at a time
    if t.family == "hypercube":
        for w in range(len(src)):  # e-cube: bit 0 first
            flips = [int(a) ^ int(b) for a, b in zip(node[ptr[w]:ptr[w + 1] - 1], node[ptr[w] + 1:ptr[w + 1]],
                                                      strict=True)]
            assert flips == sorted(flips)


@pytest.mark.parametrize("spec", ["ring:5", "ring:6", "ring:2", "torus:4x4", "torus:3x5", "torus:2x3"])
def test_dateline_vc_switches_at_the_wrap_around_arc(spec):
    t = tc.build(spec)
    src, dst = all_pairs(t.num_nodes)
    ptr, node, arc, vc = ur.dor_routes(t, src, dst)
    c, lat = coords(t, node)
    for w in range(len(src)):
        crossed, last_dim = 0, -1
        for q in range(ptr[w] + 1, ptr[w + 1]):
            label = int(t.arc_labels[arc[q]])
            dim, down = divmod(label, 2)
            if dim != last_dim:
                crossed, last_dim = 0, dim
            before = c[q - 1, dim]
            if (not down and before == lat.dims[dim] - 1) or (down and before == 0):  # the wrap-around arc
                crossed = 1
            assert vc[q] == crossed
            assert not down or 2 * ((int(c[ptr[w + 1] - 1, dim]) - int(c[ptr[w], dim])) % lat.dims[dim]) \
                > lat.dims[dim]  # ties go up


def channel_dependencies(ptr, arc, vc) -> nx.DiGraph:
    """Channel (arc, vc) -> the next channel of the same route, over every route."""
    g = nx.DiGraph()
    vc = np.zeros(len(arc), np.int64) if vc is None else vc
    for w in range(len(ptr) - 1):
        chans = list(zip(arc[ptr[w] + 1:ptr[w + 1]].tolist(), vc[ptr[w] + 1:ptr[w + 1]].tolist(), strict=True))
        g.add_nodes_from(chans)
        g.add_edges_from(zip(chans, chans[1:], strict=False))
    return g


def routes_of(spec, routing, scheme="auto", triples=False):
    """Every pair's route (every (source, intermediate, destination) triple for valiant) with its VCs."""
    t = topology(spec)
    n = t.num_nodes
    src, dst = all_pairs(n)
    if routing != "valiant":
        return t, ur.route(t, routing, src, dst, np.random.default_rng(0), scheme)
    s, m, d = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij"))
    keep = s != d
    s, m, d = s[keep], m[keep], d[keep]
    if t.family in ur.DOR_FAMILIES and scheme == "auto":
        ptr, node, arc, vc = ur.dor_routes(t, s, d, m)
        return t, ur.Routes(ptr, node, arc, vc, 4 if t.family in ur.WRAP_FAMILIES else 2, "phase")
    if t.family in ur.SUPERNODE_FAMILIES:
        a = ur.supernode_size(t)
        m = m // a
        keep = (m != s // a) & (m != d // a)
        s, m, d = s[keep], m[keep], d[keep]
        ptr, node, arc = ur.minimal_routes(t, s, d, m, a)
    else:
        ptr, node, arc = ur.minimal_routes(t, s, d, m)
    return t, ur.Routes(ptr, node, arc, ur.hop_class(ptr), int(np.diff(ptr).max()) - 1, "hop")


@pytest.mark.parametrize(("spec", "routing", "scheme", "acyclic"), [
    ("mesh:4x4", "dor", "auto", True), ("hypercube:4", "dor", "auto", True), ("path:6", "dor", "auto", True),
    ("torus:4x4", "dor", "auto", True), ("torus:3x5", "dor", "auto", True), ("ring:7", "dor", "auto", True),
    ("torus:4x4", "dor", "single", False), ("ring:5", "dor", "single", False),
    ("ring:5", "minimal", "auto", True), ("ring:5", "minimal", "single", False),
    ("torus:5x4", "minimal", "auto", True), ("torus:5x4", "minimal", "single", False),
    ("petersen", "minimal", "auto", True), ("petersen", "minimal", "single", False),
    ("dragonfly:g=4,a=3", "minimal", "auto", True), ("ccc:3", "minimal", "hop", True),
    ("mesh:3x3", "valiant", "auto", True), ("torus:3x4", "valiant", "auto", True),
    ("ring:5", "valiant", "auto", True), ("dragonfly:g=4,a=2", "valiant", "auto", True),
    ("petersen", "valiant", "auto", True)])
def test_vc_schemes_make_the_channel_dependency_graph_acyclic(spec, routing, scheme, acyclic):
    """The deadlock-freedom argument checked on every route: no cycle among the channels the routes chain
    (Dally and Seitz); on one VC minimal and torus routing do close a cycle."""
    t, routes = routes_of(spec, routing, scheme)
    vc = routes.vc
    if vc is not None:
        assert vc.max() < routes.need
    assert nx.is_directed_acyclic_graph(channel_dependencies(routes.ptr, routes.arc, vc)) == acyclic


@pytest.mark.parametrize("spec", ["ring:7", "petersen", "galaxyfly:n=3,q=3,a=2", "mesh:3x4"])
def test_hop_class_vc_is_the_hop_index(spec):
    t = topology(spec)
    src, dst = all_pairs(t.num_nodes)
    routes = ur.route(t, "minimal", src, dst, np.random.default_rng(0), "hop")
    for w in range(len(src)):
        lo, hi = routes.ptr[w], routes.ptr[w + 1]
        assert routes.vc[lo + 1:hi].tolist() == list(range(hi - lo - 1))
    assert routes.need == distances(t).max()  # the longest route: the diameter


# -- valiant ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["petersen", "ccc:3", "torus:3x4", "mesh:3x3"])
def test_valiant_goes_through_the_intermediate(spec):
    t = topology(spec)
    dist = distances(t)
    n = t.num_nodes
    rng = np.random.default_rng(3)
    s, d = all_pairs(n)
    m = rng.integers(0, n, size=len(s))
    if t.family in ur.DOR_FAMILIES:
        ptr, node, arc, _ = ur.dor_routes(t, s, d, m)
        first = np.asarray(ur.dor_hops(ur.lattice(t), s, m))
        assert np.array_equal(np.diff(ptr) - 1, first + ur.dor_hops(ur.lattice(t), m, d))
    else:
        ptr, node, arc = ur.minimal_routes(t, s, d, m)
        first = dist[s, m]
        assert np.array_equal(np.diff(ptr) - 1, dist[s, m] + dist[m, d])
    assert_valid_paths(t, ptr, node, arc, s, d)
    assert np.array_equal(node[ptr[:-1] + first], m)


@pytest.mark.parametrize("spec", ["dragonfly:g=5,a=3", "galaxyfly:n=3,q=3,a=2", "dragonfly:g=4,a=2,h=2"])
def test_valiant_on_supernodes_reaches_the_nearest_router_of_another_group(spec):
    t = tc.build(spec)
    dist = distances(t)
    a = ur.supernode_size(t)
    groups = t.num_nodes // a
    s, d = all_pairs(t.num_nodes)
    mid, size = ur.valiant_intermediates(t, s, d, np.random.default_rng(1))
    assert size == a and np.all(mid >= 0) and np.all((mid != s // a) & (mid != d // a)) and mid.max() < groups
    ptr, node, arc = ur.minimal_routes(t, s, d, mid, a)
    assert_valid_paths(t, ptr, node, arc, s, d)
    for w in range(len(s)):
        path = node[ptr[w]:ptr[w + 1]].tolist()
        routers = range(mid[w] * a, mid[w] * a + a)
        near = min(dist[s[w], r] for r in routers)
        turn = path[near]
        assert turn in routers and dist[s[w], turn] == near
        assert len(path) - 1 == near + dist[turn, d[w]]


def test_valiant_intermediate_group_is_uniform():
    t = tc.build("dragonfly:g=5,a=2")
    draws = 6000
    for s0, d0 in ((0, 3), (0, 1)):  # different groups (3 choices), the same group (4 choices)
        s, d = np.full(draws, s0), np.full(draws, d0)
        mid, _ = ur.valiant_intermediates(t, s, d, np.random.default_rng(4))
        counts = np.bincount(mid, minlength=5)
        allowed = sorted(set(range(5)) - {s0 // 2, d0 // 2})
        assert sorted(np.flatnonzero(counts).tolist()) == allowed
        p = 1 / len(allowed)
        assert all(abs(counts[g] - draws * p) < 5 * math.sqrt(draws * p * (1 - p)) for g in allowed)


# -- the channel-load bound ------------------------------------------------------------------------------

def brute_loads(t, law, route_fn):
    """Sum over every (source, destination) of P(destination | source) along the route."""
    loads = np.zeros(t.num_arcs)
    for s, d in itertools.permutations(range(t.num_nodes), 2):
        p = law(s, d)
        if p:
            for a in route_fn(s, d):
                loads[a] += p
    return loads


def route_arcs(t, routing):
    def arcs(s, d):
        if routing == "dor":
            ptr, _, arc, _ = ur.dor_routes(t, np.array([s]), np.array([d]))
        else:
            ptr, _, arc = ur.minimal_routes(t, np.array([s]), np.array([d]))
        return arc[1:].tolist()
    return arcs


@pytest.mark.parametrize("spec", ["mesh:3x4", "mesh:5", "path:4", "torus:4x3", "torus:2x5", "ring:6", "ring:7",
                                  "hypercube:3", "mesh:2x3x2"])
def test_dor_uniform_channel_loads_equal_brute_force(spec):
    t = tc.build(spec)
    n = t.num_nodes
    expect = brute_loads(t, lambda s, d: 1 / (n - 1), route_arcs(t, "dor"))
    assert np.allclose(dor_uniform_loads(t), expect)


@pytest.mark.parametrize("spec", ["petersen", "ccc:3", "mesh:3x3", "dragonfly:g=3,a=2"])
def test_minimal_and_hot_spot_channel_loads_equal_brute_force(spec):
    t = topology(spec)
    n = t.num_nodes
    arcs = route_arcs(t, "minimal")
    assert np.allclose(tree_loads(t, np.ones(n), np.ones(n)), brute_loads(t, lambda s, d: 1, arcs))
    hot, f = {1, 4}, 0.3

    def law(s, d):  # the definition: f to a hot node other than s, else uniform over the others
        others = hot - {s}
        return (f * (d in others) / len(others) + (1 - f) / (n - 1)) if others else 1 / (n - 1)

    got = channel_loads(t, "minimal", "hot-spot", hot_fraction=f, hot=np.array(sorted(hot)))
    assert np.allclose(got, brute_loads(t, law, arcs))


@pytest.mark.parametrize("spec", ["petersen", "ccc:3", "complete:5"])
def test_valiant_channel_loads_equal_brute_force_over_intermediates(spec):
    t = topology(spec)
    n = t.num_nodes
    arcs = route_arcs(t, "minimal")
    expect = np.zeros(t.num_arcs)
    for s, d in itertools.permutations(range(n), 2):
        for m in range(n):  # intermediate uniform over all nodes: the two minimal legs
            for a in (arcs(s, m) if m != s else []) + (arcs(m, d) if m != d else []):
                expect[a] += 1 / (n - 1) / n
    assert np.allclose(channel_loads(t, "valiant", "uniform"), expect)


def test_measured_throughput_stays_under_the_channel_load_bound():
    for spec, routing, traffic in (("mesh:6x6", "dor", "uniform"), ("torus:4x4", "dor", "transpose"),
                                   ("ring:8", "minimal", "uniform")):
        r = tc.run(spec, "unicast", routing=routing, traffic=traffic, load=1.0, cycles=4000, seed=2, vcs=None)
        bound = r.metrics["throughput_bound"]
        assert bound is not None and r.metrics["accepted_load"] <= bound + 1e-9
        assert r.metrics["saturated"]


# -- the plan, the engine and the run ----------------------------------------------------------------------

def lone_latency(h, startup, flits, link, r, b, c):
    """The engine's documented zero-load latency of a unicast over h hops (sim/wormhole/engine.py)."""
    return startup + flits + h * link + (h + 1) * r + (flits - 1) // b * max(0, link + c - b)


@pytest.mark.parametrize(("spec", "routing", "opts"), [
    ("torus:4x3", "minimal", dict()), ("mesh:4x4", "dor", dict(router_delay=2, buffer_depth=4)),
    ("ring:7", "minimal", dict(link_latency=2, credit_delay=1, buffer_depth=2)),
    ("petersen", "valiant", dict(router_delay=1, link_latency=3, buffer_depth=3, flits=8)),
    ("dragonfly:g=4,a=2", "valiant", dict(startup=5, flits=4))])
def test_zero_load_latency_matches_the_closed_form_for_every_message(spec, routing, opts):
    """Messages far apart: each one's simulated latency is the closed form of its hop count, and so is the
    plan's mean (info) over the drawn messages."""
    t = topology(spec)
    params = dict(startup=33, flits=32, link_latency=1, router_delay=0, buffer_depth=1, credit_delay=0) | opts
    closed = lambda h: lone_latency(h, params["startup"], params["flits"], params["link_latency"],  # noqa: E731
                                    params["router_delay"], params["buffer_depth"], params["credit_delay"])
    src, dst = all_pairs(t.num_nodes)
    routes = ur.route(t, routing, src, dst, np.random.default_rng(0))
    gap = int(closed(int(np.diff(routes.ptr).max()))) + 10
    gen = np.arange(len(src), dtype=np.int64) * gap
    cycles = len(src) * gap + gap
    plan = ur.unicast_worm_plan(gen, src, dst, routes.ptr, routes.node, routes.arc, routes.vc, cycles=cycles,
                                warmup=0, drain=gap, batches=2, flits=params["flits"], load=None)
    router = RouterConfig(vcs=routes.need, **params)
    run = execute(t, plan, "wormhole", Model(router=router))
    assert run.verified
    assert run.trace.latency.tolist() == [closed(h) for h in routes.hops.tolist()]
    r = tc.run(t, "unicast", routing=routing, load=0.01, cycles=2000, seed=5, **opts)
    hops = r.trace.plan.traffic
    h = np.diff(hops.path_ptr) - 1
    assert r.metrics["zero_load_latency"] == pytest.approx(np.mean([closed(x) for x in h.tolist()]))
    assert r.metrics["mean_hops"] == pytest.approx(h.mean())


def test_unicast_ecube_plan_equals_the_per_message_planner():
    """unicast-ecube now builds its routes with the vectorised dor code: the same plan as the per-message
    e-cube planner of worm_traffic.workload_plan, array for array."""
    from topocast.algorithms.mesh_routing import ECUBE
    from topocast.algorithms.mesh_unicast import unicast_plan
    from topocast.algorithms.worm_traffic import workload_plan

    kw = dict(flits=32, warmup=None, batches=10, startup=33, injection_channels=4, ejection_channels=4,
              intermediate_ejection=True, watchdog=2000)
    for spec, seed, load, prep in (("mesh:4x4", 1, 0.05, 0), ("mesh:3x5x2", 7, 0.1, 3), ("mesh:2", 3, 0.2, 0),
                                   ("mesh:9x7", 0, 0.08, 1)):
        t = tc.build(spec)
        old = workload_plan(t, lambda s, d, p=prep: [(s, -1, p, [(ECUBE, [int(d[0])])])], load=load,
                            destinations=1, cycles=3000, flits=32, seed=seed, batches=10, collective="unicast")
        new = unicast_plan(t, seed=seed, load=load, cycles=3000, prep=prep, **kw)
        for name in ("job_node", "job_release", "job_prep", "job_worm_ptr", "path_ptr", "path_node", "path_arc",
                     "path_slot", "slot_node", "slot_job"):
            assert np.array_equal(getattr(old.traffic, name), getattr(new.traffic, name)), name
        for name in ("generated", "source", "slot_ptr", "job_ptr", "cycles", "warmup", "drain", "flits", "load"):
            assert np.array_equal(getattr(old, name), getattr(new, name)), name


def test_runs_are_deterministic_per_seed():
    for routing, traffic in (("valiant", "random-permutation"), ("minimal", "hot-spot"), ("dor", "uniform")):
        a, b, c = (tc.run("torus:4x4", "unicast", routing=routing, traffic=traffic, load=0.05, cycles=2000,
                          seed=s) for s in (3, 3, 4))
        assert a.to_json() == b.to_json()
        pa, pb = (x.trace.plan.traffic for x in (a, b))
        assert np.array_equal(pa.path_node, pb.path_node) and np.array_equal(pa.path_arc, pb.path_arc)
        assert (pa.path_vc is None and pb.path_vc is None) or np.array_equal(pa.path_vc, pb.path_vc)
        assert not np.array_equal(a.trace.plan.generated, c.trace.plan.generated)


def test_deadlock_on_one_vc_and_none_with_the_schemes():
    """A ring at a saturating load: minimal routes on one VC knot, and the watchdog names the cycle; hop
    classes do not.  A torus with dor: one VC knots, the dateline pair does not."""
    common = dict(load=0.6, cycles=5000, seed=3, watchdog=200, ejection_channels=0)
    one = tc.run("ring:8", "unicast", vc_scheme="single", **common)
    assert one.metrics["deadlocked_worms"] > 0 and not one.verified
    assert one.first_violation.startswith("deadlock") and "->" in one.first_violation
    assert one.trace.trace.wait_cycle
    hop = tc.run("ring:8", "unicast", **common)
    assert hop.metrics["deadlocked_worms"] == 0 and hop.trace.trace.deadlock is None
    assert hop.metrics["vc_scheme_used"] == "hop" and hop.metrics["vcs_needed"] == 4
    for scheme, knots in (("single", True), ("auto", False)):
        r = tc.run("torus:4x4", "unicast", routing="dor", vc_scheme=scheme, **dict(common, load=0.9))
        assert (r.metrics["deadlocked_worms"] > 0) == knots and (r.trace.trace.deadlock is not None) == knots
        assert r.metrics["accepted_load"] > 0 or knots


def test_vcs_below_the_scheme_is_refused_and_extra_vcs_hold_copies():
    with pytest.raises(tc.TopocastError, match="parameter 'vcs' must be >= ") as err:
        tc.run("ring:8", "unicast", vcs=2)
    assert "\n" not in str(err.value)
    with pytest.raises(tc.TopocastError, match="parameter 'vcs' must be >= 2"):
        tc.run("torus:4x4", "unicast", routing="dor", vcs=1)
    assert tc.run("ring:8", "unicast", vc_scheme="single", vcs=1, load=0.01, cycles=2000).verified
    r = tc.run("torus:4x4", "unicast", routing="dor", vcs=6, load=0.05, cycles=2000, seed=1)
    t = r.trace.plan.traffic
    base = ur.dor_routes(tc.build("torus:4x4"), t.job_node, t.slot_node)[3]
    copy = t.path_vc // 2
    for w in range(t.num_worms):
        lo, hi = t.path_ptr[w], t.path_ptr[w + 1]
        assert len(set(copy[lo + 1:hi].tolist())) <= 1  # one copy per worm
    assert np.array_equal(t.path_vc % 2, base) and set(copy.tolist()) == {0, 1, 2}
    assert r.verified


def test_permutation_fixed_points_are_idle():
    r = tc.run("mesh:4x4", "unicast", traffic="transpose", load=0.2, cycles=3000, seed=1)
    t = r.trace.plan.traffic
    assert r.metrics["idle_nodes"] == 4 and r.verified
    rows, cols = np.divmod(t.job_node, 4)
    assert np.array_equal(t.slot_node, cols * 4 + rows) and not np.any(rows == cols)


@pytest.mark.parametrize("family", sorted(SMALL))
def test_every_family_runs_every_combination_that_applies(family):
    spec = SMALL[family]
    for traffic, routing in itertools.product(("uniform", "transpose", "bit-reverse", "random-permutation",
                                                "nearest-neighbour", "hot-spot"), ur.ROUTINGS):
        try:
            r = tc.run(spec, "unicast", traffic=traffic, routing=routing, load=0.01, cycles=2000, seed=1)
        except tc.TopocastError as err:
            text = str(err)
            n = tc.build(spec).num_nodes
            assert "\n" not in text
            if (routing == "dor" and family not in ur.DOR_FAMILIES) or (
                    routing == "ugal" and family not in ur.UGAL_FAMILIES):
                assert "parameter 'routing'" in text
            else:
                assert "parameter 'traffic'" in text and traffic in ("transpose", "bit-reverse")
                assert n & (n - 1) or traffic == "transpose"
            continue
        assert r.verified and r.metrics["messages"] > 0, (traffic, routing, r.first_violation)
        assert r.metrics["deadlocked_worms"] == 0


def test_memory_guard_refuses_before_building():
    with pytest.raises(tc.TopocastError, match="max-memory"):
        tc.run("mesh:64x64", "unicast", routing="dor", load=0.5, cycles=100000, max_memory=2**20)
