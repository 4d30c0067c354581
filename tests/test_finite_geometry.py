"""PolarFly and Slim Fly against independent constructions over galois's GF(q), networkx, and the papers' counts."""

from __future__ import annotations

import itertools
import math

import galois
import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.errors import TopocastError
from topocast.topology.metrics import diameter, distance_distribution, orbits
from topocast.topology.polarfly import polarfly, polarfly_orbits, quadric_mask
from topocast.topology.slimfly import slimfly, slimfly_orbits
from topocast.topology.symmetry import checked_orbits, is_automorphism, orbit_summary

PRIME_POWERS = [2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25, 27, 29, 31, 32]
#: prime powers q = 4w + delta of every residue the MMS construction allows: primes and powers of 2, 3, 5, 7
MMS_Q = [3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25, 27, 32, 49]


# -- independent constructions --------------------------------------------------------------------------
def er_oracle(q: int) -> nx.Graph:
    """ER_q from galois: every normalised nonzero vector of GF(q)^3, joined when the dot product is 0."""
    field = galois.GF(q)
    points = []
    for v in itertools.product(range(q), repeat=3):
        nz = [c for c in v if c]
        if nz and nz[0] == 1:
            points.append(v)
    m = field(np.array(points))
    gram = m @ m.T
    g = nx.Graph()
    g.add_nodes_from(points)
    for i, j in zip(*np.nonzero(np.asarray(gram) == 0), strict=True):
        if i < j:
            g.add_edge(points[i], points[j])
    return g


def mms_oracle(q: int, xi: int) -> nx.Graph:
    """MMS(q) by loops over galois elements, with the paper's generator sets for the primitive element ``xi``."""
    field = galois.GF(q)
    assert field(xi).multiplicative_order() == q - 1            # xi is primitive
    delta = {1: 1, 3: -1, 0: 0}[q % 4]
    w = (q - delta) // 4
    if delta == 1:
        ex, exp = range(0, q - 2, 2), range(1, q - 1, 2)
    elif delta == 0:
        ex, exp = range(0, q - 1, 2), range(1, q, 2)
    else:
        ex = list(range(0, 2 * w - 1, 2)) + list(range(2 * w - 1, 4 * w - 2, 2))
        exp = list(range(1, 2 * w, 2)) + list(range(2 * w, 4 * w - 1, 2))
    x_set = {int(field(xi) ** e) for e in ex}
    xp_set = {int(field(xi) ** e) for e in exp}
    g = nx.Graph()
    elems = [field(i) for i in range(q)]
    for a, b in itertools.product(range(q), repeat=2):
        g.add_node((0, a, b))
        g.add_node((1, a, b))
    for a, y, y2 in itertools.product(range(q), repeat=3):
        if int(elems[y] - elems[y2]) in x_set:
            g.add_edge((0, a, y), (0, a, y2))
        if int(elems[y] - elems[y2]) in xp_set:
            g.add_edge((1, a, y), (1, a, y2))
    for x, y, m in itertools.product(range(q), repeat=3):
        c = elems[y] - elems[m] * elems[x]
        g.add_edge((0, x, y), (1, m, int(c)))
    return g


def labelled(t) -> nx.Graph:
    return nx.relabel_nodes(t.to_networkx(), {i: t.label(i) for i in range(t.num_nodes)})


def same_edges(a: nx.Graph, b: nx.Graph) -> bool:
    return set(a.nodes) == set(b.nodes) and {frozenset(e) for e in a.edges} == {frozenset(e) for e in b.edges}


# -- PolarFly ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("q", [2, 3, 4, 5, 7, 8, 9, 11, 13, 16])
def test_polarfly_equals_the_polarity_graph(q):
    t = polarfly(q)
    assert same_edges(labelled(t), er_oracle(q))


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(PRIME_POWERS))
def test_polarfly_structure(q):
    t = polarfly(q)
    n = q * q + q + 1
    assert t.num_nodes == n and t.num_edges == q * (q + 1) ** 2 // 2 and not t.has_parallel_links
    quad = quadric_mask(t)
    assert quad.sum() == q + 1 == t.meta["quadrics"]
    assert np.all(t.port_degree[quad] == q) and np.all(t.port_degree[~quad] == q + 1)
    assert diameter(t) == 2
    assert t.meta["moore_bound"] == (q + 1) ** 2 + 1
    assert math.isclose(t.meta["moore_efficiency"], n / ((q + 1) ** 2 + 1))
    assert t.meta["terminals"] == n * t.meta["p"] == n * math.ceil((q + 1) / 2)
    if q % 2:                    # every non-quadric point lies on 0 or 2 tangent lines (meets the conic 0 or 2 times)
        near = np.bincount(t.arc_sources[quad[t.indices]], minlength=n)[~quad]
        assert set(near.tolist()) == {0, 2}


@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9, 16, 25, 27])
def test_polarfly_orbits(q):
    t = polarfly(q)
    count, sizes = orbit_summary(polarfly_orbits(t))
    if q % 2:
        assert sizes == sorted([q + 1, q * (q + 1) // 2, q * (q - 1) // 2], reverse=True)
    else:                        # the absolute points form a line; its pole; the rest
        assert sizes == sorted([q + 1, 1, q * q - 1], reverse=True)
    assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))
    assert len(orbits(t)[0]) == 3


def test_polarfly_bad_q():
    for q in (6, 10, 12, 1, 0):
        with pytest.raises(TopocastError, match="polarfly: parameter 'q' must be"):
            tc.build(f"polarfly:q={q}")
    with pytest.raises(TopocastError, match="prime power.*got 6"):
        polarfly(6)


def test_polarfly_labels_and_terminals():
    t = tc.build("polarfly:q=7,p=3")
    assert t.meta["terminals"] == 57 * 3 and t.meta["radix"] == 11
    for node in (0, 17, 55, 56):
        assert t.index(t.label(node)) == node
    assert t.index((2, 4, 6)) == t.index((1, 2, 3))          # a vector and its multiple: one point (2 * 4 = 1 mod 7)
    assert tc.info("polarfly:q=7")["terminals"] == 57 * 4


def test_polarfly_moore_efficiency_printed_in_the_abstract():
    """Lakhotia et al.: PolarFly reaches more than 96% of the Moore bound at moderate radixes."""
    for q in (25, 27, 29, 31, 32, 37, 41, 43, 47, 49, 53, 59, 61, 64):
        assert (q * q + q + 1) / ((q + 1) ** 2 + 1) > 0.96


# -- Slim Fly ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("q", [3, 4, 5, 7, 8, 9, 11, 13])
def test_slimfly_equals_the_mms_construction(q):
    t = slimfly(q)
    assert same_edges(labelled(t), mms_oracle(q, t.meta["xi"]))


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(MMS_Q))
def test_slimfly_structure(q):
    t = slimfly(q)
    delta = {1: 1, 3: -1, 0: 0}[q % 4]
    k = (3 * q - delta) // 2
    assert t.num_nodes == 2 * q * q and t.num_edges == q * q * k
    assert set(t.port_degree.tolist()) == {k} and not t.has_parallel_links
    assert diameter(t) == 2
    assert t.meta["p"] == math.ceil(k / 2) and t.meta["terminals"] == 2 * q * q * math.ceil(k / 2)
    assert t.meta["global_links"] == 2 * q * q * (q - 1) // 2       # 2q links between every two racks
    assert t.meta["local_links"] == q * (q * (q - delta) // 2 + q)  # per rack: two subgraphs and q cross links


def test_slimfly_q5_is_the_hoffman_singleton_graph():
    """q = 5: the MMS graph is the Hoffman-Singleton graph (50 vertices, 175 edges, degree 7, diameter 2,
    girth 5; Hoffman and Singleton 1960), the unique strongly regular graph (50, 7, 0, 1)."""
    t = tc.build("slimfly:q=5")
    g = t.to_networkx()
    assert (t.num_nodes, t.num_edges, int(t.port_degree.max()), diameter(t)) == (50, 175, 7, 2)
    assert nx.girth(g) == 5
    assert nx.is_strongly_regular(g) and nx.intersection_array(g) == ([7, 6], [1, 1])
    assert nx.vf2pp_is_isomorphic(g, nx.hoffman_singleton_graph())


@pytest.mark.parametrize("q", [3, 4, 5, 8, 9, 13])
def test_slimfly_orbits(q):
    t = slimfly(q)
    labels = slimfly_orbits(t)
    assert orbit_summary(labels) == (2, [q * q, q * q])
    assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))


def test_slimfly_bad_q():
    for q in (2, 6, 10, 12, 14, 18):
        with pytest.raises(TopocastError, match="slimfly: parameter 'q' must be"):
            tc.build(f"slimfly:q={q}")


def test_slimfly_racks():
    t = tc.build("slimfly:q=7,p=2")
    glob = t.arc_labels == t.label_names.index("global")
    rack = (np.arange(t.num_nodes) % 49) // 7
    assert np.all((rack[t.arc_sources] != rack[t.indices]) == glob)
    assert t.meta["terminals"] == 98 * 2


# -- the orbit machinery ---------------------------------------------------------------------------------
def test_a_candidate_that_is_not_an_automorphism_is_refused():
    t = tc.build("slimfly:q=5")
    bad = np.arange(t.num_nodes)
    bad[[0, 30]] = bad[[30, 0]]              # swaps a router of each half: no automorphism fixes the rest
    assert not is_automorphism(t, bad)
    with pytest.raises(RuntimeError, match="not an automorphism"):
        checked_orbits(t, [bad])
    assert orbit_summary(checked_orbits(t, [bad], strict=False))[0] == t.num_nodes


def test_large_graph_path_of_the_orbits():
    """Above SMALL_NODES nodes the compiled check and union-find run: same orbits."""
    t = polarfly(37)                         # 1407 points
    assert t.num_nodes > 1024
    assert orbit_summary(polarfly_orbits(t))[1] == sorted([38, 37 * 38 // 2, 37 * 36 // 2], reverse=True)
    s = slimfly(25)                          # 1250 routers
    assert orbit_summary(slimfly_orbits(s)) == (2, [625, 625])
