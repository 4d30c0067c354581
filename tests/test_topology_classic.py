"""Classic builders against networkx's generators, and the Topology invariants."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.topology import cartesian_product, complete, hypercube, mesh, path, ring, torus
from topocast.topology.metrics import diameter, distance_distribution, eccentricity

small = st.integers(min_value=3, max_value=7)


def iso(topology, graph):
    return nx.is_isomorphic(topology.to_networkx(), graph)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 40))
def test_ring_path_complete_match_networkx(n):
    assert iso(ring(n), nx.cycle_graph(n))
    assert iso(path(n), nx.path_graph(n))
    if n <= 12:
        assert iso(complete(n), nx.complete_graph(n))


@settings(max_examples=25, deadline=None)
@given(dims=st.lists(small, min_size=1, max_size=3))
def test_mesh_and_torus_match_networkx_grid(dims):
    m, t = mesh(*dims), torus(*dims)
    if int(np.prod(dims)) <= 120:
        assert iso(m, nx.grid_graph(dim=list(reversed(dims))))
        assert iso(t, nx.grid_graph(dim=list(reversed(dims)), periodic=True))
    assert m.num_edges == nx.grid_graph(dim=dims).number_of_edges()
    assert t.num_edges == len(dims) * t.num_nodes
    assert t.port_degree.min() == t.port_degree.max() == 2 * len(dims)
    assert diameter(m) == sum(d - 1 for d in dims)
    assert diameter(t) == sum(d // 2 for d in dims)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(1, 7))
def test_hypercube_matches_networkx(n):
    h = hypercube(n)
    assert iso(h, nx.hypercube_graph(n))
    assert diameter(h) == n
    # dimension i flips bit i
    assert all(h.label_of(h.arc_index(0, 1 << i)) == f"d{i}" for i in range(n))


@settings(max_examples=15, deadline=None)
@given(a=st.integers(2, 6), b=st.integers(2, 6))
def test_product_equals_networkx_cartesian_product(a, b):
    p = cartesian_product([ring(a), path(b)]) if a > 2 else cartesian_product([path(a), path(b)])
    first = nx.cycle_graph(a) if a > 2 else nx.path_graph(a)
    g = nx.cartesian_product(first, nx.path_graph(b))
    assert iso(p, g)
    # node (i, j) has index i * b + j: first factor most significant
    assert p.index((1, 0)) == b


def test_ring_of_two_is_a_double_link():
    t = torus(2, 3, 5)
    assert t.port_degree.min() == 6
    assert t.distinct_degree.min() == 5
    assert t.has_parallel_links
    assert isinstance(t.to_networkx(), nx.MultiGraph)
    assert t.to_networkx().number_of_edges() == t.num_edges


@pytest.mark.parametrize("spec", ["torus:3x4", "torus:2x3x5", "hypercube:4", "ring:7", "complete:6",
                                  "product:ring:3*complete:4"])
def test_vertex_transitive_claim_holds(spec):
    t = tc.build(spec)
    assert t.vertex_transitive
    ecc = eccentricity(t)
    assert ecc.min() == ecc.max()
    # the one-source distance distribution equals the all-sources one
    assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))


@pytest.mark.parametrize("spec", ["mesh:3x4", "path:5"])
def test_non_transitive_builders_say_so(spec):
    t = tc.build(spec)
    assert not t.vertex_transitive
    assert len(set(eccentricity(t).tolist())) > 1


def test_label_codec_round_trip_and_errors():
    t = tc.build("torus:3x4x5")
    for v in [0, 7, 59]:
        assert t.index(t.label(v)) == v
    assert t.index("1,2,3") == 1 * 20 + 2 * 5 + 3
    with pytest.raises(tc.TopocastError, match="coordinate"):
        t.index((3, 0, 0))
    with pytest.raises(tc.TopocastError, match="outside"):
        t.label(60)


def test_from_networkx_round_trip():
    g = nx.petersen_graph()
    t = tc.Topology.from_networkx(g)
    assert nx.is_isomorphic(t.to_networkx(), g)
    assert diameter(t) == nx.diameter(g)


def test_topology_is_immutable():
    t = tc.build("ring:5")
    with pytest.raises(ValueError):
        t.indices[0] = 3


def test_reverse_arc_pairs_links():
    t = tc.build("torus:2x3")
    rev = t.reverse_arc
    assert np.array_equal(t.arc_sources[rev], t.indices)
    assert np.array_equal(rev[rev], np.arange(t.num_arcs))


@pytest.mark.parametrize("spec, message", [
    ("mesh:0x4", "'dims' must be >= 2"),
    ("mesh:-3x4", "'dims' must be >= 2"),
    ("ring:1", "'n' must be >= 2"),
    ("hypercube:x", "must be an integer"),
    ("torus:4x4,k=3", "unknown parameter 'k'"),
    ("nosuch:4", "unknown family 'nosuch'"),
    ("hypercube", "parameter 'n' is required"),
    ("", "non-empty"),
    ("ring:n=4,n=5", "given twice"),
    ("product:ring:3*", "write factors"),
])
def test_bad_specs_name_the_parameter(spec, message):
    with pytest.raises(tc.TopocastError, match=message):
        tc.build(spec)


def test_memory_guard_refuses_large_builds():
    with pytest.raises(tc.TopocastError, match="max-memory"):
        tc.build("hypercube:30", max_memory=2**30)


@settings(max_examples=6, deadline=None)
@given(dims=st.lists(st.integers(2, 14), min_size=2, max_size=3).filter(lambda d: np.prod(d) <= 700))
def test_larger_meshes_and_tori_match_networkx_degree_and_diameter(dims):
    for periodic, build in ((False, mesh), (True, torus)):
        t = build(*dims)
        g = nx.grid_graph(dim=list(reversed(dims)), periodic=periodic)
        # networkx keeps a single edge for a size-2 ring; we keep two ports
        expected_ports = sorted(2 * len(dims) for _ in g.nodes()) if periodic else sorted(d for _, d in g.degree())
        assert sorted(t.port_degree.tolist()) == expected_ports
        assert sorted(t.distinct_degree.tolist()) == sorted(d for _, d in g.degree())
        assert diameter(t) == nx.diameter(g)
