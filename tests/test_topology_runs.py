"""What topocast already offers runs on the families of issue 32: generic collectives, synthesis, unicast with
minimal, Valiant and UGAL routing on the flit-level engine, export to BookSim and GraphML, route, info."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.algorithms import unicast_routing as ur
from topocast.synthesis import synthesize
from topocast.topology.export import export

SPECS = {"polarfly": "polarfly:q=4", "slimfly": "slimfly:q=3", "hyperx": "hyperx:3x3,t=1x2",
         "dragonfly-plus": "dragonfly-plus:l=2,s=2,h=2,g=4", "fattree": "fattree:k=2,n=3",
         "jellyfish": "jellyfish:n=16,d=3,seed=5", "kautz": "kautz:d=2,n=3", "debruijn": "debruijn:d=2,n=4"}


@pytest.mark.parametrize("family", sorted(SPECS))
def test_generic_collectives_are_verified(family):
    t = tc.build(SPECS[family])
    for algorithm in ("broadcast-bfs-tree", "allgather-bfs-trees", "alltoall-shortest-paths"):
        for engine in ("step", "event"):
            r = tc.run(t, algorithm, engine=engine)
            assert r.verified and r.metrics["exactly_once"], (algorithm, engine)
            assert r.metrics["lower_bound_ratio"] >= 1 - 1e-12


@pytest.mark.parametrize("family", sorted(SPECS))
def test_synthesis_is_verified(family):
    s = synthesize(SPECS[family], "allgather", restarts=0)
    assert s.result.verified and s.result.metrics["exactly_once"]
    assert s.measured >= s.lower_bound * (1 - 1e-9)


@pytest.mark.parametrize("family", sorted(SPECS))
def test_unicast_minimal_valiant_and_ugal(family):
    spec = SPECS[family]
    routings = ["minimal", "valiant"] + (["ugal"] if family in ur.UGAL_FAMILIES else [])
    for routing in routings:
        r = tc.run(spec, "unicast", routing=routing, traffic="uniform", load=0.05, cycles=1500, seed=3)
        assert r.verified and r.metrics["deadlocked_worms"] == 0, (routing, r.first_violation)
        assert r.metrics["messages"] > 0
    if family not in ur.UGAL_FAMILIES:
        with pytest.raises(tc.TopocastError, match="parameter 'routing' ugal"):
            tc.run(spec, "unicast", routing="ugal", load=0.05, cycles=500)


def test_dragonfly_plus_valiant_goes_through_a_group():
    """Group Valiant on Dragonfly+ (Kim et al.'s rule, as on a Dragonfly): a route to another group visits a third
    group when there is one; group-shift traffic runs."""
    spec = "dragonfly-plus:l=2,s=2,h=2,g=5"
    t = tc.build(spec)
    size = t.meta["routers_per_supernode"]
    rng = np.random.default_rng(0)
    src = np.array([0, 1, 0]) * size
    dst = np.array([1, 3, 2]) * size
    routes = ur.route(t, "valiant", src, dst, rng)
    for w in range(len(src)):
        groups = set((routes.node[routes.ptr[w]:routes.ptr[w + 1]] // size).tolist())
        assert len(groups) >= 3 and {int(src[w] // size), int(dst[w] // size)} <= groups
    r = tc.run(spec, "unicast", routing="ugal", traffic="group-shift", load=0.05, cycles=1500, seed=1)
    assert r.verified


@pytest.mark.parametrize("family", sorted(SPECS))
def test_export_graphml_and_booksim(tmp_path, family):
    t = tc.build(SPECS[family])
    back = tc.build(f"graph:{export(t, 'graphml', tmp_path / 'net.graphml')}")
    a, b = nx.MultiGraph(t.to_networkx()), nx.MultiGraph(back.to_networkx())
    assert back.num_edges == t.num_edges and nx.vf2pp_is_isomorphic(a, b)
    lines = export(t, "booksim-anynet", tmp_path / "net.anynet").read_text().splitlines()
    assert len(lines) == t.num_nodes
    for line in lines:
        words = line.split()
        router = int(words[1])
        neighbours = {int(x) for k, x in zip(words[4::2], words[5::2], strict=True) if k == "router"}
        assert neighbours == set(t.neighbors(router).tolist())


@pytest.mark.parametrize("family", sorted(SPECS))
def test_route_and_info(family):
    from topocast.execution.routing import route

    t = tc.build(SPECS[family])
    data = route(SPECS[family], 0, t.num_nodes - 1)
    assert data["path_indices"][0] == 0 and data["path_indices"][-1] == t.num_nodes - 1
    info = tc.info(SPECS[family])
    assert info["nodes"] == t.num_nodes and info["diameter"] == nx.diameter(t.to_networkx())
    assert info["terminals"] >= 1
