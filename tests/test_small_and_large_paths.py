"""Each size regime has one implementation, and both agree with networkx (and scipy for flows).

* distances: the numpy BFS of graphs up to ``metrics.SMALL_NODES`` nodes and
  the compiled kernels above (forced here with ``SMALL_NODES = 0``);
* girth: from the numpy BFS distances, and the compiled early-stopping BFS;
* max-flow (edge and node connectivity): Python augmenting paths below
  ``properties.SMALL_FLOW``, scipy's ``maximum_flow`` above (forced with 0);
* the classic builders' CSR arrays straight from the mixed-radix formula equal
  the generic construction (Cartesian product of rings and paths, and
  ``Topology.from_arcs`` of the plain arc lists) and networkx's grids.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.topology import cartesian_product, hypercube, mesh, path, ring, torus
from topocast.topology import metrics as M
from topocast.topology import properties as P
from topocast.topology.core import Topology


def random_connected(n: int, p: float, seed: int) -> tuple[Topology, nx.Graph]:
    g = nx.gnp_random_graph(n, p, seed=seed)
    g = nx.convert_node_labels_to_integers(g.subgraph(max(nx.connected_components(g), key=len)).copy())
    return Topology.from_networkx(g, order=list(range(g.number_of_nodes()))), g


def all_pairs(g: nx.Graph, n: int) -> np.ndarray:
    out = np.full((n, n), -1)
    for s, row in nx.all_pairs_shortest_path_length(g):
        for t, d in row.items():
            out[s, t] = d
    return out


@pytest.fixture(params=["numpy", "compiled"])
def regime(request, monkeypatch):
    """Run a test once with the small-graph numpy path and once with the compiled kernels."""
    monkeypatch.setattr(M, "SMALL_NODES", 10**9 if request.param == "numpy" else 0)
    return request.param


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 45), p=st.floats(0.05, 0.4), seed=st.integers(0, 10**6))
def test_distances_equal_networkx_in_both_regimes(n, p, seed):
    t, g = random_connected(n, p, seed)
    expected = all_pairs(g, t.num_nodes)
    counts = np.bincount(expected.ravel())
    for small in (10**9, 0):
        M.SMALL_NODES = small
        try:
            assert all(np.array_equal(M.bfs_distances(t, s), expected[s]) for s in range(t.num_nodes))
            assert np.array_equal(M.eccentricity(t), expected.max(axis=1))
            assert np.array_equal(M.distance_distribution(t, exact_all_sources=True), counts)
        finally:
            M.SMALL_NODES = 1024
    assert M.SMALL_NODES == 1024


def test_distances_of_a_disconnected_graph_and_of_parallel_links(regime):
    t = Topology.from_networkx(nx.Graph([(0, 1), (2, 3), (3, 4)]))
    assert M.bfs_distances(t, 2).tolist() == [-1, -1, 0, 1, 2]
    assert not M.is_connected(t)
    double = tc.build("torus:2x3")  # size-2 dimension: double links
    assert M.distance_distribution(double).tolist() == [6, 18, 12]
    assert M.diameter(double) == 2


def test_numpy_batches_agree_with_one_batch(monkeypatch):
    t = tc.build("mesh:7x9")
    whole = M._profile(t, np.arange(t.num_nodes))
    monkeypatch.setattr(M, "_BLOCK", 200)  # one or two sources per batch
    parts = M._profile(t, np.arange(t.num_nodes))
    assert all(np.array_equal(a, b) for a, b in zip(whole, parts, strict=True))


def test_a_graph_above_the_threshold_runs_the_compiled_kernels_and_agrees():
    t = tc.build("torus:12x12x8")  # 1,152 nodes > SMALL_NODES
    assert not M.small(t)
    expected = nx.single_source_shortest_path_length(t.to_networkx(), 5)
    dist = M.bfs_distances(t, 5)
    assert all(dist[v] == d for v, d in expected.items())
    assert M.diameter(t) == 6 + 6 + 4
    ref = M.distances_block(t.indptr, t.indices, np.array([5]))[0]  # the numpy BFS on the same graph
    assert np.array_equal(ref, dist)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 40), p=st.floats(0.05, 0.4), seed=st.integers(0, 10**6))
def test_girth_equals_networkx_in_both_regimes(n, p, seed):
    t, g = random_connected(n, p, seed)
    expected = nx.girth(g)
    expected = None if expected == float("inf") else expected
    for small in (10**9, 0):
        M.SMALL_NODES = small
        try:
            assert P.girth(t, np.arange(t.num_nodes)) == expected
        finally:
            M.SMALL_NODES = 1024


@pytest.mark.parametrize("spec,girth", [("ring:11", 11), ("ring:2", None), ("path:6", None), ("torus:5x7", 4),
                                        ("torus:2x5", 4), ("hypercube:5", 4), ("complete:5", 3), ("mesh:3x4", 4)])
def test_girth_of_classic_networks(regime, spec, girth):
    assert P.girth(tc.build(spec)) == girth


@settings(max_examples=20, deadline=None)
@given(n=st.integers(3, 22), p=st.floats(0.1, 0.6), seed=st.integers(0, 10**6))
def test_connectivity_by_python_flows_equals_scipy_and_networkx(n, p, seed):
    t, g = random_connected(n, p, seed)
    small = (P.edge_connectivity(t), P.node_connectivity(t))
    P.SMALL_FLOW = 0
    try:
        large = (P.edge_connectivity(t), P.node_connectivity(t))
    finally:
        P.SMALL_FLOW = 200_000
    expected = (nx.edge_connectivity(g), nx.node_connectivity(g)) if t.num_nodes > 1 else (0, 0)
    assert small == large == expected


def test_flows_count_parallel_links():
    t = tc.build("torus:2x2")  # 4 nodes, every link doubled: 4 ports each
    assert P.edge_connectivity(t) == 4
    assert P.FlowGraph(2, np.array([0, 0]), np.array([1, 1]), np.array([3, 2]), 1).max_flow(0, 1) == 5
    assert P.FlowGraph(2, np.array([0, 0]), np.array([1, 1]), np.array([3, 2]), 1).max_flow(0, 1, limit=4) == 4


def test_algebraic_connectivity_equals_networkx():
    for spec in ("ring:12", "mesh:4x5", "torus:2x3"):
        t = tc.build(spec)
        g = nx.Graph()
        g.add_nodes_from(range(t.num_nodes))
        for u, v in zip(t.arc_sources, t.indices, strict=True):
            if u < v:
                w = g.get_edge_data(int(u), int(v), {"weight": 0})["weight"]
                g.add_edge(int(u), int(v), weight=w + 1)
        expected = sorted(np.linalg.eigvalsh(nx.laplacian_matrix(g, weight="weight").toarray()))[1]
        assert P.algebraic_connectivity(t) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("k", [31, 32, 40])
def test_algebraic_connectivity_of_large_tori_is_the_closed_form(k):
    """From 1,000 nodes only the two smallest eigenvalues are computed: a k x k torus has 2 - 2 cos(2 pi / k)."""
    assert P.algebraic_connectivity(tc.build(f"torus:{k}x{k}")) == pytest.approx(2 - 2 * np.cos(2 * np.pi / k),
                                                                                 abs=1e-9)


# -- the classic builders -------------------------------------------------------------------------
def arrays(t: Topology) -> tuple:
    return t.indptr.tolist(), t.indices.tolist(), t.arc_labels.tolist()


def same_as_product(t: Topology, factors: list[Topology]) -> bool:
    p = cartesian_product(factors, t.family, dict(t.params), meta=dict(t.meta))
    return (arrays(t) == arrays(p) and t.label_names == p.label_names and t.codec.radices == p.codec.radices
            and t.codec.fields == p.codec.fields and t.vertex_transitive == p.vertex_transitive)


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(2, 7), min_size=1, max_size=4))
def test_torus_and_mesh_arrays_equal_the_product_construction(dims):
    assert same_as_product(torus(*dims), [ring(k) for k in dims])
    assert same_as_product(mesh(*dims), [path(k) for k in dims])


@pytest.mark.parametrize("dims", [d for r in (1, 2, 3) for d in itertools.product((2, 3, 4), repeat=r)])
def test_torus_and_mesh_neighbours_equal_networkx_grids(dims):
    for periodic, t in ((True, torus(*dims)), (False, mesh(*dims))):
        g = nx.grid_graph(dim=list(reversed(dims)), periodic=periodic)  # nodes (c_0, ..., c_{d-1})
        for node in g.nodes():
            label = node if isinstance(node, tuple) else (node,)
            u = t.index(label)
            assert {int(v) for v in t.neighbors(u)} == {t.index(w if isinstance(w, tuple) else (w,))
                                                        for w in g.neighbors(node)}
        rows = [t.neighbors(u) for u in range(t.num_nodes)]
        assert all(np.all(np.diff(r) >= 0) for r in rows)  # rows sorted by neighbour
        # every link in both directions; a size-2 torus dimension is a double link (networkx: one edge)
        doubled = sum(t.num_nodes // 2 for k in dims if periodic and k == 2)
        assert t.num_arcs == 2 * (g.number_of_edges() + doubled)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 60))
def test_ring_and_path_arrays_equal_the_arc_lists(n):
    nodes = np.arange(n)
    if n >= 2:
        ref = Topology.from_arcs("ring", {"n": n}, n, np.concatenate([nodes, nodes]),
                                 np.concatenate([(nodes + 1) % n, (nodes - 1) % n]),
                                 np.repeat(np.array([0, 1]), n), ("+", "-"))
        assert arrays(ring(n)) == arrays(ref)
    inner = np.arange(n - 1)
    ref = Topology.from_arcs("path", {"n": n}, n, np.concatenate([inner, inner + 1]),
                             np.concatenate([inner + 1, inner]), np.repeat(np.array([0, 1]), n - 1), ("+", "-"))
    assert arrays(path(n)) == arrays(ref)


@pytest.mark.parametrize("n", range(1, 13))
def test_hypercube_arrays_equal_the_arc_lists(n):
    total = 1 << n
    src = np.repeat(np.arange(total), n)
    bits = np.tile(np.arange(n), total)
    ref = Topology.from_arcs("hypercube", {"n": n}, total, src, src ^ (1 << bits), bits, [f"d{i}" for i in range(n)])
    h = hypercube(n)
    assert arrays(h) == arrays(ref)
    assert all(h.label_of(h.arc_index(5 % total, (5 % total) ^ (1 << i))) == f"d{i}" for i in range(n))
