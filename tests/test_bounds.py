"""Lower bounds hold on every verified run, name the bound that binds, and match their closed forms."""

import math

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast import registry
from topocast.errors import TopocastError
from topocast.measure import bounds
from topocast.plans.schedule import ScheduleBuilder
from topocast.sim.models import CostModel, PortModel
from topocast.topology.core import Topology

# one small network per family an algorithm of the step / event engines runs on
SMALL = {"hypercube": "hypercube:4", "ring": "ring:8", "mesh": "mesh:3x4", "torus": "torus:4x4", "path": "path:6",
         "ej": "ej:a=2,b=3,n=1", "galaxyfly": "galaxyfly:n=3,q=5,a=4", "dragonfly": "dragonfly:g=3,a=4",
         "hdn": "hdn:base=2x3x5,k=1,s=2", "rdn": "rdn:base=Q3,k=1", "dualcube": "dualcube:3"}
ANY = ["torus:3x4", "mesh:3x3", "hypercube:3"]   # for algorithms that run on any topology
# where the family's small network is slow to plan for one algorithm (900 nodes, 78,000 relays: 4 s a run)
SMALLER = {("allreduce-hierarchical", "hdn"): "hdn:base=2x3,k=1,s=2"}
KINDS = {"eccentricity", "diameter", "distance", "doubling", "latency", "injection", "cut", "one-port", "release",
         "total-hops", "gossip", "compute"}
MODELS = [{}, {"ports": 1}, {"ports": "all"}, {"duplex": "half"}, {"message_bytes": 65536}]


def _runs():
    for alg in registry.algorithms():
        for engine in ("step", "event"):
            if engine not in alg.engines:
                continue
            specs = [SMALLER.get((alg.name, f), SMALL[f]) for f in alg.families if f in SMALL] if alg.families \
                else ANY
            for spec in specs:
                yield alg.name, engine, spec


@pytest.mark.parametrize(("algorithm", "engine", "spec"), list(_runs()))
def test_every_verified_run_is_at_least_its_bound(algorithm, engine, spec):
    names = {p.name for p in registry.algorithm(algorithm).params}
    for model in MODELS:
        if not set(model) <= names:
            continue
        try:
            r = tc.run(spec, algorithm, engine=engine, **model)
        except TopocastError:  # a model the algorithm refuses
            continue
        if not r.verified:
            continue
        measured = r.metrics["steps"] if engine == "step" else r.metrics["time"]
        assert measured >= r.metrics["lower_bound"] * (1 - 1e-9), (algorithm, spec, model, r.metrics)
        assert r.metrics["lower_bound_kind"] in KINDS


def _cost():
    return CostModel(startup=1e-6, per_byte=1e-9, per_hop=2e-7)


def _allgather(n, m):
    b = ScheduleBuilder(n, origin=np.arange(n), collective="allgather", message_bytes=m)
    return b.build()


def _alltoall(n, m):
    origin = np.repeat(np.arange(n), n - 1)
    target = np.array([t for s in range(n) for t in range(n) if t != s])
    return ScheduleBuilder(n, origin=origin, collective="alltoall", targets=target, message_bytes=m).build()


def test_time_bounds_closed_forms_on_a_torus():
    """8x8 torus, bisection 16 links.  All-gather: the release bound at the one node 8 hops away, 8 (t_s + t_h)
    + m t_w / 4 (its four in-links); total exchange: the cut |A||B| m t_w / 16 (distances from networkx)."""
    t, c, m = tc.build("torus:8x8"), _cost(), 4096.0
    ts, tw, th = c.startup, c.per_byte, c.per_hop
    dist = nx.single_source_shortest_path_length(nx.grid_2d_graph(8, 8, periodic=True), (0, 0))
    beyond = {k: sum(1 for d in dist.values() if d >= k) for k in range(1, 9)}
    ag = bounds.time_bound(t, _allgather(64, 256.0), c, PortModel.all_port())
    want = max(k * (ts + th) + beyond[k] * 256 * tw / 4 for k in beyond)
    assert ag.kind == "release" and math.isclose(ag.value, want) and ag.witness["distance"] == 8
    a2a = bounds.time_bound(t, _alltoall(64, m), c, PortModel.all_port())
    assert a2a.kind == "cut" and math.isclose(a2a.value, ts + th + 32 * 32 * m * tw / 16)
    assert len(a2a.witness["side"]) == 32 and a2a.witness["links"] == 16
    one = bounds.injection_bound(t, _alltoall(64, m), c, PortModel.one_port())
    assert math.isclose(one, ts + th + 63 * m * tw)   # every node sends and receives 63 through one port
    half = bounds.cut_bound(t, _alltoall(64, m), c, PortModel.all_port("half"))
    assert math.isclose(half, ts + th + 2 * 32 * 32 * m * tw / 16)
    hops = sum(dist.values()) * 64
    total = bounds.total_hops_bound(t, c, PortModel.all_port(), m)
    assert math.isclose(total.value, ts + th + hops * m * tw / 256)


def test_injection_taken_at_the_node_with_fewest_ports():
    """A leaf of the star K_{1,4} has one port: all-gather needs N - 1 = 4 messages in through it."""
    t, c, m = Topology.from_networkx(nx.star_graph(4)), _cost(), 1e6
    b = bounds.time_bound(t, _allgather(5, m), c, PortModel.all_port())
    assert b.kind == "injection" and math.isclose(b.value, c.startup + c.per_hop + 4 * m * c.per_byte)


def test_step_and_doubling_bounds():
    t = tc.build("torus:4x4")
    b = ScheduleBuilder(16, origin=[0], collective="broadcast").build()
    assert bounds.step_bound(t, b, PortModel.all_port()) == bounds.Bound(4, "eccentricity")
    assert bounds.step_bound(t, b, PortModel.one_port()) == bounds.Bound(4, "eccentricity")
    k = tc.build("complete:16")
    b = ScheduleBuilder(16, origin=[0], collective="broadcast").build()
    assert bounds.step_bound(k, b, PortModel.one_port()) == bounds.Bound(4, "doubling")  # ceil(log2 16)
    c = _cost()
    tb = bounds.time_bound(k, b, c, PortModel.one_port())
    # one byte: four start-ups to reach 16 nodes, then the byte through the last node's one port
    assert tb.kind == "doubling" and math.isclose(tb.value, 4 * c.startup + c.per_byte + c.per_hop)


@pytest.mark.parametrize("dim", [3, 4, 6])
def test_one_port_allgather_bound_is_met_by_recursive_doubling(dim):
    """ceil(log2 N) t_s + (N-1) m t_w + t_h: recursive doubling takes exactly d start-ups and N-1 message times
    (closed form: step k carries 2^k messages), so the bound is tight on every hypercube."""
    c = CostModel(startup=1e-6, per_byte=1e-9, per_hop=0.0)
    r = tc.run(f"hypercube:{dim}", "allgather-recursive-doubling", engine="event", ports="1", message_bytes=512,
               startup=c.startup, per_byte=c.per_byte)
    n = 2 ** dim
    closed = dim * c.startup + (n - 1) * 512 * c.per_byte
    assert math.isclose(r.metrics["time"], closed)
    assert r.metrics["lower_bound_kind"] == "one-port" and math.isclose(r.metrics["lower_bound"], closed)


def test_complete_graph_all_port_allgather_meets_the_injection_bound():
    """K_n all-port: every node sends its message to everyone at once, t_s + m t_w + t_h."""
    r = tc.run("complete:n=6", "allgather-bfs-trees", engine="event", ports="all", message_bytes=1000,
               per_hop=1e-7)
    assert math.isclose(r.metrics["time"], r.metrics["lower_bound"])


@pytest.mark.parametrize("chunks", [1, 2, 4, 8, 32])
def test_broadcast_bound_holds_whatever_the_chunking(chunks):
    """The bound is of the collective, not of its split: the same value for every chunk count, and a
    pipelined 1 MB ring broadcast (5x below the unsplit bound) still does not beat it."""
    from topocast.synthesis import synthesize

    s = synthesize("ring:16", "broadcast", message_bytes=1e6, ports="all", chunks=chunks, known=False)
    whole = bounds.unsplit_bounds(tc.build("ring:16"), ScheduleBuilder(16, origin=[0], collective="broadcast",
                                                                       message_bytes=1e6).build(),
                                  CostModel(), PortModel.all_port())[0].value
    assert s.measured >= s.lower_bound * (1 - 1e-12)
    assert math.isclose(s.lower_bound, 8 * 1e-6 + 1e6 * 1e-10 / 2)   # the node 8 hops away, two in-links
    if chunks >= 8:
        assert s.measured < whole                                    # the unsplit bound does not hold here


@pytest.mark.parametrize("seed", range(6))
def test_bounds_hold_on_random_graphs_models_and_chunkings(seed):
    """Random connected graphs, port models, costs and chunkings: every verified synthesised schedule is at
    least its bound (the greedy and the registered algorithms are independent of the bound's derivation)."""
    from topocast.synthesis import synthesize

    rng = np.random.default_rng(seed)
    g = nx.connected_watts_strogatz_graph(int(rng.integers(6, 14)), 4, 0.4, seed=seed)
    t = Topology.from_networkx(g)
    model = dict(startup=float(rng.choice([0.0, 1e-6])), per_byte=float(rng.choice([1e-10, 1e-8])),
                 per_hop=float(rng.choice([0.0, 3e-7])), ports=str(rng.choice(["1", "2", "all"])),
                 duplex=str(rng.choice(["full", "half"])), message_bytes=float(rng.choice([64, 65536])))
    for collective in ("broadcast", "allgather", "alltoall"):
        chunks = int(rng.choice([1, 3])) if collective != "alltoall" else 1
        s = synthesize(t, collective, chunks=chunks, restarts=0, seed=seed, **model)
        assert s.result.verified
        assert s.measured >= s.lower_bound * (1 - 1e-12), (collective, model, s.result.metrics["lower_bound_kind"])
