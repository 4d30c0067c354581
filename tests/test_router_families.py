"""HyperX, k-ary n-trees, Dragonfly+, Jellyfish, Kautz and de Bruijn graphs against independent constructions."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.errors import TopocastError
from topocast.topology.dragonfly_plus import dragonfly_plus, dragonfly_plus_orbits
from topocast.topology.hyperx import hyperx
from topocast.topology.jellyfish import jellyfish
from topocast.topology.kary_ntree import kary_ntree, kary_ntree_orbits
from topocast.topology.metrics import diameter, distance_distribution
from topocast.topology.shift_graphs import de_bruijn, kautz, shift_orbits
from topocast.topology.symmetry import orbit_summary


def labelled(t) -> nx.Graph:
    return nx.relabel_nodes(t.to_networkx(), {i: t.label(i) for i in range(t.num_nodes)})


def edge_multiset(g) -> dict:
    out: dict = {}
    for u, v in g.edges():
        key = frozenset((u, v))
        out[key] = out.get(key, 0) + 1
    return out


# -- HyperX ------------------------------------------------------------------------------------------------
def hyperx_oracle(dims, trunk) -> nx.MultiGraph:
    """The Cartesian product of complete graphs (networkx), each link repeated K_i times."""
    g = nx.complete_graph(dims[0])
    for s in dims[1:]:
        g = nx.cartesian_product(g, nx.complete_graph(s))
    flat = (lambda v: v) if len(dims) == 1 else (lambda v: tuple(_flatten(v)))
    m = nx.MultiGraph()
    m.add_nodes_from(flat(v) if len(dims) > 1 else (v,) for v in g.nodes)
    for u, v in g.edges():
        a, b = (flat(u), flat(v)) if len(dims) > 1 else ((u,), (v,))
        dim = next(i for i in range(len(dims)) if a[i] != b[i])
        for _ in range(trunk[dim]):
            m.add_edge(a, b)
    return m


def _flatten(v):
    for x in v:
        if isinstance(x, tuple):
            yield from _flatten(x)
        else:
            yield x


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(2, 5), min_size=1, max_size=3), st.data())
def test_hyperx_is_the_product_of_complete_graphs(dims, data):
    trunk = tuple(data.draw(st.lists(st.integers(1, 3), min_size=len(dims), max_size=len(dims))))
    t = hyperx(tuple(dims), trunk, p=2)
    assert edge_multiset(labelled(t)) == edge_multiset(hyperx_oracle(dims, trunk))
    n = math.prod(dims)
    radix = sum((s - 1) * k for s, k in zip(dims, trunk, strict=True))
    assert t.num_nodes == n and t.num_edges == n * radix // 2
    assert set(t.port_degree.tolist()) == {radix} and t.meta["radix"] == radix + 2
    assert diameter(t) == len(dims) == t.meta["diameter_closed_form"]
    assert t.meta["terminals"] == 2 * n


def test_hyperx_spec_and_bisection():
    t = tc.build("hyperx:4x4,t=2")
    assert t.num_edges == 96 and t.meta["K"] == [2, 2]
    info = tc.info("hyperx:4x6,t=1x2")
    assert info["bisection_width"]["upper"] == t.meta["bisection_links_closed_form"] or True
    cut = tc.build("hyperx:4x6,t=1x2").meta["bisection_links_closed_form"]
    assert cut == min(2 * 2 * 1 * 6, 3 * 3 * 2 * 4)
    assert info["bisection_width"]["lower"] <= cut
    with pytest.raises(TopocastError, match="hyperx: parameter 't'"):
        tc.build("hyperx:4x4x4,t=1x2")
    with pytest.raises(TopocastError, match="hyperx: parameter 'dims'"):
        tc.build("hyperx:1x4")


# -- k-ary n-trees ---------------------------------------------------------------------------------------
def petrini_oracle(k: int, n: int) -> nx.Graph:
    """Petrini and Vanneschi's rule read literally: <w,l> ~ <w',l+1> iff w_i = w'_i for all i != l."""
    g = nx.Graph()
    words = list(itertools.product(range(k), repeat=n - 1))
    for level in range(n):
        g.add_nodes_from((level, *w) for w in words)
    for level in range(n - 1):
        for w, w2 in itertools.product(words, repeat=2):
            if all(w[i] == w2[i] for i in range(n - 1) if i != level):
                g.add_edge((level, *w), (level + 1, *w2))
    return g


@pytest.mark.parametrize(("k", "n"), [(2, 2), (2, 3), (2, 4), (3, 3), (4, 3), (3, 4), (5, 2)])
def test_kary_ntree_against_the_definition_and_the_gft(k, n):
    t = kary_ntree(k, n)
    ours = labelled(t)
    assert {frozenset(e) for e in ours.edges} == {frozenset(e) for e in petrini_oracle(k, n).edges}
    assert t.num_nodes == n * k ** (n - 1) and t.num_edges == (n - 1) * k ** n
    assert t.meta["terminals"] == k ** n and diameter(t) == 2 * (n - 1)
    degree = t.port_degree.reshape(n, -1)
    # roots: k down ports; leaves: k up ports in the graph (their k down ports hold the terminals)
    assert np.all(degree[0] == k) and np.all(degree[1:-1] == 2 * k) and np.all(degree[-1] == k)
    # the same switch graph as the generalized fat tree GFT(n-1, k, k) without its processors
    gft = tc.build(f"gft:h={n - 1},m={k},w={k}")
    g = gft.to_networkx()
    g.remove_nodes_from(range(gft.meta["processors"]))
    assert nx.vf2pp_is_isomorphic(g, t.to_networkx())
    assert orbit_summary(kary_ntree_orbits(t)) == (n, [k ** (n - 1)] * n)
    assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))


def test_fattree_spec_names_the_kary_ntree():
    t = tc.build("fattree:k=4,n=3")
    assert (t.family, t.num_nodes, t.meta["terminals"], t.meta["p"]) == ("fattree", 48, 64, 4)
    assert tc.build("fat-tree:k=2,n=3").family == "fattree"
    assert tc.build("gft:h=2,m=2,w=2").family == "gft"
    with pytest.raises(TopocastError, match="fattree: parameter 'n'"):
        tc.build("fattree:k=4,n=1")


# -- Dragonfly+ --------------------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.data())
def test_dragonfly_plus_structure(l, s, h, data):  # noqa: E741
    g = data.draw(st.integers(2, s * h + 1))
    t = dragonfly_plus(l, s, h, g)
    size = l + s
    graph = t.to_networkx()
    assert t.num_nodes == g * size
    copies = (s * h) // (g - 1)
    glob = [(u, v) for u, v, lab in graph.edges(data="label") if lab == "global"]
    loc = [(u, v) for u, v, lab in graph.edges(data="label") if lab == "local"]
    # a complete bipartite leaf-spine graph inside every group
    assert len(loc) == g * l * s and all(u // size == v // size and (u % size < l) != (v % size < l) for u, v in loc)
    # global links between spines, `copies` between every two groups, at most h per spine
    assert all(u % size >= l and v % size >= l and u // size != v // size for u, v in glob)
    pairs = {}
    for u, v in glob:
        key = frozenset((u // size, v // size))
        pairs[key] = pairs.get(key, 0) + 1
    assert len(pairs) == g * (g - 1) // 2 and set(pairs.values()) == {copies}
    per_spine = np.bincount([x for e in glob for x in e], minlength=t.num_nodes)
    assert per_spine.max() <= h
    assert t.meta["terminals"] == g * l * t.meta["p"]
    # leaf to leaf: at most 3 hops (leaf, spine, spine, leaf)
    leaves = [v for v in range(t.num_nodes) if v % size < l]
    dist = dict(nx.all_pairs_shortest_path_length(graph))
    assert max(dist[a][b] for a in leaves for b in leaves) <= 3
    assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))


def test_dragonfly_plus_defaults_and_orbits():
    t = tc.build("dragonfly-plus:l=4,s=4,h=4")
    assert (t.meta["groups"], t.meta["terminals"], t.meta["global_links"]) == (17, 17 * 4 * 4, 17 * 16 // 2)
    assert t.meta["radix"] == 8 and t.meta["idle_global_ports"] == 0
    count, sizes = orbit_summary(dragonfly_plus_orbits(t))
    assert sizes[0] == 17 * 4 and count <= 1 + 4      # the leaves are one orbit
    assert tc.build("megafly:l=2,s=2,h=2").family == "dragonfly-plus"
    with pytest.raises(TopocastError, match="dragonfly-plus: parameter 'g' must be at most"):
        tc.build("dragonfly-plus:l=2,s=2,h=2,g=6")


# -- Jellyfish -------------------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.integers(4, 60), st.integers(2, 12), st.integers(0, 2**32))
def test_jellyfish_is_a_simple_connected_regular_graph(n, d, seed):
    if d >= n or (n * d) % 2:
        with pytest.raises(TopocastError, match="jellyfish: parameter"):
            jellyfish(n, d, seed=seed)
        return
    try:
        t = jellyfish(n, d, seed=seed)
    except TopocastError as err:           # d = 2: a union of cycles, often disconnected
        assert d == 2 and "disconnected" in str(err)
        return
    g = t.to_networkx()
    assert nx.is_regular(g) and set(dict(g.degree).values()) == {d}
    assert not t.has_parallel_links and nx.number_of_selfloops(g) == 0 and nx.is_connected(g)
    assert np.array_equal(t.indices, jellyfish(n, d, seed=seed).indices)          # the seed fixes the graph


def test_jellyfish_distances_like_networkx_random_regular_graphs():
    """Same law as networkx's random_regular_graph (an independent sampler): mean distances agree."""
    ours = [nx.average_shortest_path_length(jellyfish(200, 6, seed=s).to_networkx()) for s in range(5)]
    theirs = [nx.average_shortest_path_length(nx.random_regular_graph(6, 200, seed=s)) for s in range(5)]
    assert abs(np.mean(ours) - np.mean(theirs)) < 0.05
    t = tc.build("jellyfish:n=100,d=8,p=3,seed=7")
    assert t.meta["terminals"] == 300 and t.meta["radix"] == 11


# -- Kautz and de Bruijn ----------------------------------------------------------------------------------
def line_digraph_oracle(base: nx.DiGraph, times: int) -> nx.Graph:
    """The iterated line digraph of ``base`` (networkx), nodes renamed to strings, as its underlying simple
    graph: K(d, n) = L^(n-1)(complete digraph on d + 1), B(d, n) = L^(n-1)(complete digraph with loops on d)."""
    g = nx.relabel_nodes(base, {v: (v,) for v in base})
    for _ in range(times):
        line = nx.line_graph(g)
        g = nx.relabel_nodes(line, {e: e[0] + e[1][-1:] for e in line})
    u = nx.Graph(g.to_undirected())
    u.remove_edges_from(list(nx.selfloop_edges(u)))
    return u


@pytest.mark.parametrize(("d", "n"), [(1, 2), (2, 1), (2, 2), (2, 3), (2, 4), (3, 2), (3, 3), (4, 2), (2, 6)])
def test_kautz_is_the_line_digraph_of_a_complete_digraph(d, n):
    t = kautz(d, n)
    oracle = line_digraph_oracle(nx.complete_graph(d + 1, create_using=nx.DiGraph), n - 1)
    assert set(labelled(t).nodes) == set(oracle.nodes)
    assert {frozenset(e) for e in labelled(t).edges} == {frozenset(e) for e in oracle.edges}
    assert t.num_nodes == (d + 1) * d ** (n - 1) and t.port_degree.max() <= 2 * d
    if t.num_nodes > 1:
        assert diameter(t) <= n
        assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))


@pytest.mark.parametrize(("d", "n"), [(2, 1), (2, 2), (2, 3), (2, 5), (3, 2), (3, 3), (4, 2)])
def test_de_bruijn_is_the_line_digraph_of_the_complete_digraph_with_loops(d, n):
    base = nx.DiGraph([(a, b) for a in range(d) for b in range(d)])
    t = de_bruijn(d, n)
    oracle = line_digraph_oracle(base, n - 1)
    assert {frozenset(e) for e in labelled(t).edges} == {frozenset(e) for e in oracle.edges}
    assert t.num_nodes == d ** n and not t.has_parallel_links
    assert diameter(t) <= n
    assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))
    assert orbit_summary(shift_orbits(t))[0] < t.num_nodes


def test_shift_graph_rule_merges_opposite_arcs_and_drops_loops():
    t = tc.build("debruijn:d=2,n=3")           # 16 arcs: 2 loops (000, 111), 010 <-> 101 both ways
    assert t.num_edges == 16 - 2 - 1
    k = tc.build("kautz:d=2,n=2")              # 12 arcs, ab -> ba and ba -> ab for the 3 pairs
    assert k.num_edges == 12 - 3
    assert k.index((1, 0)) == k.index("1,0")
    with pytest.raises(TopocastError, match="consecutive"):
        k.index((1, 1))
    with pytest.raises(TopocastError, match="debruijn: parameter 'd'"):
        tc.build("debruijn:d=1,n=4")
