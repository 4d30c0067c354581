"""Distance metrics against networkx."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.topology.metrics import (
    average_distance,
    bfs_distances,
    diameter,
    distance_distribution,
    eccentricity,
    summary,
)


def random_topology(n, p, seed):
    g = nx.gnp_random_graph(n, p, seed=seed)
    g = g.subgraph(max(nx.connected_components(g), key=len)).copy()
    return tc.Topology.from_networkx(g), g


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 40), p=st.floats(0.05, 0.5), seed=st.integers(0, 10**6))
def test_bfs_diameter_and_average_equal_networkx(n, p, seed):
    t, g = random_topology(n, p, seed)
    nodes = [t.node_name(i) for i in range(t.num_nodes)]  # topocast's node order (sorted names)
    expected = nx.single_source_shortest_path_length(g, nodes[0])
    dist = bfs_distances(t, 0)
    assert all(dist[i] == expected[v] for i, v in enumerate(nodes))
    if len(nodes) > 1:
        assert diameter(t) == nx.diameter(g)
        assert average_distance(t) == pytest.approx(nx.average_shortest_path_length(g))
        ecc = nx.eccentricity(g)
        assert eccentricity(t).tolist() == [ecc[v] for v in nodes]


def test_distance_distribution_counts_ordered_pairs():
    t = tc.build("mesh:3x3")
    counts = distance_distribution(t)
    lengths = dict(nx.all_pairs_shortest_path_length(t.to_networkx()))
    expected = np.bincount([d for row in lengths.values() for d in row.values()])
    assert counts.tolist() == expected.tolist()
    assert counts.sum() == 81


def test_summary_torus_10x10x10():
    info = summary(tc.build("torus:10x10x10"))
    assert info["nodes"] == 1000 and info["edges"] == 3000
    assert info["degree"] == {"min": 6, "max": 6, "regular": True}
    assert info["diameter"] == 15
    assert info["average_distance"] == pytest.approx(3 * 2500 / 999)


def test_disconnected_graph_is_reported():
    g = nx.Graph([(0, 1), (2, 3)])
    with pytest.raises(tc.TopocastError, match="not connected"):
        diameter(tc.Topology.from_networkx(g))
