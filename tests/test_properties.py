"""Bisection interval, connectivity, girth and vertex-transitivity against closed forms, networkx and brute force."""

import itertools

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.topology import properties as P
from topocast.topology.core import Topology


def _brute_bisection(topology: Topology) -> int:
    """Minimum balanced cut by trying every half (oracle; up to ~16 nodes)."""
    n = topology.num_nodes
    assert n <= 16
    adj = np.zeros((n, n))
    np.add.at(adj, (topology.arc_sources, topology.indices), 1)
    halves = np.array([np.isin(np.arange(n), c) for c in itertools.combinations(range(n), (n + 1) // 2)], float)
    return int(((halves @ adj) * (1 - halves)).sum(axis=1).min())


TINY = [tc.build(s) for s in ("hypercube:4", "ring:9", "torus:4x4", "complete:6", "path:7", "mesh:3x5", "mesh:2x7",
                              "torus:3x5", "torus:2x6")]
TINY += [Topology.from_networkx(nx.petersen_graph())]
TINY += [Topology.from_networkx(g) for g in (nx.gnp_random_graph(14, 0.3, seed=s) for s in range(4))
         if nx.is_connected(g)]


@pytest.mark.parametrize("topology", TINY, ids=lambda t: t.spec)
def test_bisection_interval_contains_the_exhaustive_minimum(topology):
    b = P.bisection(topology)
    exact = _brute_bisection(topology)
    assert b.lower <= exact <= b.upper
    assert int(b.side.sum()) == (topology.num_nodes + 1) // 2
    assert P.cut_links(topology, b.side) == b.upper


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_hypercube_bisection_is_half(n):
    b = P.bisection(tc.build(f"hypercube:{n}"))
    assert b.lower == b.upper == 2 ** n // 2


@pytest.mark.parametrize("k", [4, 6, 8, 10])
def test_ring_and_torus_bisection(k):
    assert P.bisection(tc.build(f"ring:{2 * k}")).upper == 2
    b = P.bisection(tc.build(f"torus:{k}x{k}"))
    assert b.lower <= 2 * k == b.upper


@pytest.mark.parametrize("n", [5, 6, 7, 9])
def test_complete_bisection_is_floor_times_ceil(n):
    b = P.bisection(tc.build(f"complete:{n}"))
    assert b.lower == b.upper == (n // 2) * ((n + 1) // 2)   # lambda_2(K_n) = n makes the spectral bound exact


def test_hdn_15_30_bisection_at_most_n_over_8():
    t = tc.build("hdn:base=2x3x5,k=2,s=15/30")
    b = P.bisection(t)
    assert t.num_nodes == 960 and b.lower <= b.upper <= 120
    assert P.constructive_bisection(t)[0] == 240   # the paper's Figure 9 partition, registered as the family cut


@pytest.mark.parametrize(("spec", "graph"), [("hypercube:4", nx.hypercube_graph(4)),
                                             ("torus:5x5", nx.grid_2d_graph(5, 5, periodic=True)),
                                             ("torus:4x5x6", nx.grid_graph([4, 5, 6], periodic=True)),
                                             ("mesh:4x5", nx.grid_2d_graph(4, 5)), ("ccc:3", None),
                                             ("petersen", nx.petersen_graph())])
def test_connectivity_equals_networkx(spec, graph):
    t = Topology.from_networkx(graph) if spec == "petersen" else tc.build(spec)
    oracle = t.to_networkx() if graph is None else graph
    assert P.edge_connectivity(t) == nx.edge_connectivity(oracle)
    assert P.node_connectivity(t) == nx.node_connectivity(oracle)


def test_connectivity_closed_forms():
    assert P.edge_connectivity(tc.build("hypercube:5")) == P.node_connectivity(tc.build("hypercube:5")) == 5
    assert P.node_connectivity(tc.build("torus:5x5x5")) == 6
    peter = Topology.from_networkx(nx.petersen_graph())
    assert P.edge_connectivity(peter) == P.node_connectivity(peter) == 3
    assert P.node_connectivity(tc.build("complete:6")) == 5


def test_girth():
    assert P.girth(Topology.from_networkx(nx.petersen_graph())) == 5
    assert P.girth(tc.build("hypercube:5")) == 4
    assert P.girth(tc.build("torus:5x7")) == 4
    assert P.girth(tc.build("ring:11")) == 11
    assert P.girth(tc.build("path:6")) is None
    assert P.girth(tc.build("complete:5")) == 3
    rng = nx.gnp_random_graph(30, 0.12, seed=7)
    assert P.girth(Topology.from_networkx(rng)) == nx.girth(rng)


def test_vertex_transitivity_verdicts():
    assert P.vertex_transitivity(tc.build("hypercube:4"))[0] == "yes"                       # declared
    assert P.vertex_transitivity(Topology.from_networkx(nx.petersen_graph()))[0] == "unknown"  # no declaration
    chorded = nx.cycle_graph(8)
    chorded.add_edges_from([(0, 4), (2, 6)])                                                  # degrees 3 and 2
    assert P.vertex_transitivity(Topology.from_networkx(chorded)) == ("no", "node degrees differ")
    # regular but not vertex-transitive: the distance distributions tell
    frucht = Topology.from_networkx(nx.frucht_graph())
    assert P.vertex_transitivity(frucht) == ("no", "distance distributions differ between nodes")


def test_info_prints_the_properties_and_skips_above_caps():
    info = tc.info("hypercube:4")
    assert info["bisection_width"] == {"lower": 8, "upper": 8, "method": "metis"}
    assert (info["edge_connectivity"], info["node_connectivity"], info["girth"]) == (4, 4, 4)
    assert info["vertex_transitivity"] == "yes"
    big = tc.info("hypercube:10", distances=False)
    assert big["node_connectivity"] is None and any("node_connectivity" in n for n in big["property_notes"])
    assert tc.info("hypercube:10", distances=False, properties=True)["node_connectivity"] == 10
    assert "bisection_width" not in tc.info("hypercube:4", properties=False)
