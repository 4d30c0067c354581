"""Lower bounds hold on every verified run, name the bound that binds, and match their closed forms."""

import math

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast import bounds, registry
from topocast.errors import TopocastError
from topocast.schedule import ScheduleBuilder
from topocast.sim.models import CostModel, PortModel
from topocast.topology.core import Topology

# one small network per family an algorithm of the step / event engines runs on
SMALL = {"hypercube": "hypercube:4", "ring": "ring:8", "mesh": "mesh:3x4", "torus": "torus:4x4", "path": "path:6",
         "ej": "ej:a=2,b=3,n=1", "galaxyfly": "galaxyfly:n=3,q=5,a=4", "dragonfly": "dragonfly:g=3,a=4",
         "hdn": "hdn:base=2x3x5,k=1,s=2", "rdn": "rdn:base=Q3,k=1", "dualcube": "dualcube:3"}
ANY = ["torus:3x4", "mesh:3x3", "hypercube:3"]   # for algorithms that run on any topology
KINDS = {"eccentricity", "diameter", "distance", "doubling", "latency", "injection", "cut"}
MODELS = [{}, {"ports": 1}, {"ports": "all"}, {"duplex": "half"}, {"message_bytes": 65536}]


def _runs():
    for alg in registry.algorithms():
        for engine in ("step", "event"):
            if engine not in alg.engines:
                continue
            specs = [SMALL[f] for f in alg.families if f in SMALL] if alg.families else ANY
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
    """8x8 torus, bisection 16 links: latency D (t_s + m t_w + t_h); cut |A||B| m t_w / 16 (total exchange)."""
    t, c, m = tc.build("torus:8x8"), _cost(), 4096.0
    ts, tw, th = c.startup, c.per_byte, c.per_hop
    ag = bounds.time_bound(t, _allgather(64, 256.0), c, PortModel.all_port())
    assert ag.kind == "latency" and math.isclose(ag.value, 8 * (ts + 256 * tw + th))
    a2a = bounds.time_bound(t, _alltoall(64, m), c, PortModel.all_port())
    assert a2a.kind == "cut" and math.isclose(a2a.value, ts + th + 32 * 32 * m * tw / 16)
    one = bounds.injection_bound(t, _alltoall(64, m), c, PortModel.one_port())
    assert math.isclose(one, ts + th + 63 * m * tw)   # every node sends and receives 63 through one port
    half = bounds.cut_bound(t, _alltoall(64, m), c, PortModel.all_port("half"))
    assert math.isclose(half, ts + th + 2 * 32 * 32 * m * tw / 16)


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
    assert tb.kind == "doubling" and math.isclose(tb.value, 4 * (c.startup + c.per_byte) + c.per_hop)
