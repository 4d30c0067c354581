"""Hierarchical dual-nets: construction, labels, node counts (Table 1), degree, diameter, symmetry, bisection."""

from __future__ import annotations

import itertools
import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.cli import main
from topocast.experiments.hdn import PAPER_TABLE1_K1, PAPER_TABLE1_K2, SIZES
from topocast.topology.hdn import (
    BaseFactor,
    HDNLayout,
    dual_cube,
    hierarchical_dual_net,
    parse_base,
    parse_supernodes,
    recursive_dual_net,
)
from topocast.topology.hdn_symmetry import (
    automorphism_generators,
    cut_size,
    dual_bisection,
    is_automorphism,
    orbit_representatives,
    symmetry_and_diameter,
)
from topocast.topology.metrics import bfs_distances, eccentricity


def layout_of(base: str, s: str) -> HDNLayout:
    factors = parse_base(base)
    return HDNLayout(factors, parse_supernodes(s, factors, len(s.split("/"))))


# -- Table 1 ----------------------------------------------------------------------
def test_table1_all_72_entries_from_the_recurrence():
    for s1 in SIZES:
        assert layout_of("2x3x5", str(s1)).num_nodes == PAPER_TABLE1_K1[s1]
        for s2, paper in zip(SIZES, PAPER_TABLE1_K2[s1], strict=False):
            assert layout_of("2x3x5", f"{s1}/{s2}").num_nodes == paper


def test_closed_form_of_the_paper_is_wrong_for_k2_but_right_for_k1():
    for s1 in SIZES:
        layout = layout_of("2x3x5", str(s1))
        assert layout.closed_form_nodes == layout.num_nodes
    layout = layout_of("2x3x5", "2/2")
    assert (layout.closed_form_nodes, layout.num_nodes) == (1_620_000, 810_000)
    # the closed form of the recurrence
    for s1, s2 in itertools.product(SIZES, SIZES):
        layout = layout_of("2x3x5", f"{s1}/{s2}")
        assert layout.num_nodes == (2 * 30) ** 4 // (2 * s1 ** 2 * s2)


# N_i = 2 N_{i-1}^2 / s_i from N_0 = 30 (the paper's recurrence, Table 1): 300 -> 12000; 60 -> 240
@pytest.mark.parametrize("spec, nodes", [("hdn:base=2x3x5,k=2,s=6/15", 12000), ("hdn:base=2x3x5,k=1,s=6", 300),
                                         ("hdn:base=2x3x5,k=2,s=30/30", 240)])
def test_built_graphs_have_table1_size_and_degree_d0_plus_k(spec, nodes):
    t = tc.build(spec)
    k = t.codec.layout.k
    assert t.num_nodes == nodes
    assert {12000: 2 * 300 ** 2 // 15, 300: 2 * 30 ** 2 // 6, 240: 2 * 60 ** 2 // 30}[nodes] == nodes
    assert set(t.port_degree.tolist()) == {6 + k}            # ring of 2 = double link: 2 ports
    assert set(t.distinct_degree.tolist()) == {5 + k}
    assert t.num_edges == nodes * (6 + k) // 2
    assert len(t.reverse_arc) == t.num_arcs  # raises unless the adjacency is symmetric


# -- construction against a definition-level reference ------------------------------
def reference_hdn(factors: tuple[BaseFactor, ...], subsets) -> nx.Graph:
    """HDN built straight from section 2 with nested-tuple nodes (simple graph)."""
    sizes = [f.size for f in factors]
    base = nx.Graph()
    coords = list(itertools.product(*[range(n) for n in sizes]))
    for a in coords:
        base.add_node(((), a))
        for i, f in enumerate(factors):
            for b in range(sizes[i]):
                if b == a[i]:
                    continue
                if f.kind == "ring":
                    adj = (b - a[i]) % f.param in (1, f.param - 1)
                elif f.kind == "complete":
                    adj = True
                else:
                    adj = bin(a[i] ^ b).count("1") == 1
                if adj:
                    base.add_edge(((), a), ((), a[:i] + (b,) + a[i + 1:]))
    graph = base
    for subset in subsets:
        nodes = sorted(graph.nodes())

        def key(x, subset=subset):
            path, a = x
            return path, tuple(a[i] for i in range(len(a)) if i not in subset)

        def pos(x, subset=subset):
            return tuple(x[1][i] for i in subset)

        keys = sorted({key(x) for x in nodes})
        sn_id = {kk: j for j, kk in enumerate(keys)}
        n = len(keys)
        by_sn_pos = {(sn_id[key(x)], pos(x)): x for x in nodes}

        def lift(c, u, x):
            return ((c, u) + x[0], x[1])

        new = nx.Graph()
        for c in (0, 1):
            for u in range(n):
                for x, y in graph.edges():
                    new.add_edge(lift(c, u, x), lift(c, u, y))
                for x in nodes:
                    new.add_node(lift(c, u, x))
        for u in range(n):
            for x in nodes:
                y = by_sn_pos[(u, pos(x))]
                new.add_edge(lift(0, u, x), lift(1, sn_id[key(x)], y))
        graph = new
    return graph


def reference_index(layout: HDNLayout, node) -> int:
    """Our node index of a reference node ``((C_k, U_k, ..., C_1, U_1), a)``.

    The reference numbers super-nodes in sorted order of (cluster path,
    coordinates outside the super-node), which is our numbering too.
    """
    path, a = node
    copy = 0
    pairs = list(zip(path[0::2], path[1::2], strict=False))
    for level, (c, u) in enumerate(reversed(pairs), 1):
        copy = (c * layout.clusters[level] + u) * (layout.sizes[level - 1] // layout.N0) + copy
    return int(layout.join(layout.k, copy, layout.base_codec.encode(a)))


@pytest.mark.parametrize("base, s", [("2x3", "1"), ("2x3", "2"), ("2x3", "3"), ("2x3", "6"), ("K2xK2", "2/2"),
                                     ("K2xK2", "2/4"), ("Q2", "1/1"), ("K3xC4", "3/4"), ("2x3", "3/2"),
                                     ("K2", "2/1/2"), ("Q1xC3", "6/3/6")])
def test_equal_to_the_definition(base, s):
    factors = parse_base(base)
    subsets = parse_supernodes(s, factors, len(s.split("/")))
    t = hierarchical_dual_net(base, len(subsets), s)
    layout = t.codec.layout
    ref = reference_hdn(factors, subsets)
    index = {x: reference_index(layout, x) for x in ref.nodes()}
    assert sorted(index.values()) == list(range(t.num_nodes))
    ours = {(int(u), int(v)) for u, v in zip(t.arc_sources, t.indices, strict=False) if u < v}
    theirs = {tuple(sorted((index[x], index[y]))) for x, y in ref.edges()}
    assert ours == theirs


def test_figures_4_to_6_sizes_on_the_2_cube():
    # N_1 = 2 * 4^2 / 2 = 16, N_2 = 2 * 16^2 / s_2 with s_2 = 2 or 4
    assert hierarchical_dual_net("K2xK2", 1, "2").num_nodes == 16 == 2 * 4 ** 2 // 2        # Figure 4
    assert hierarchical_dual_net("K2xK2", 2, "2/2").num_nodes == 256 == 2 * 16 ** 2 // 2    # Figure 5
    assert hierarchical_dual_net("K2xK2", 2, "2/4").num_nodes == 128 == 2 * 16 ** 2 // 4    # Figure 6


def test_dual_cube_and_rdn_are_hdn_special_cases():
    dc = dual_cube(3)
    assert (dc.num_nodes, int(dc.port_degree.max())) == (32, 3)
    ref = nx.Graph()  # Li and Peng's dual-cube: (class, cluster, node) with (n-1)-cube clusters
    for c, u, x in itertools.product((0, 1), range(4), range(4)):
        for b in range(2):
            ref.add_edge((c, u, x), (c, u, x ^ (1 << b)))
        if c == 0:
            ref.add_edge((0, u, x), (1, x, u))
    assert nx.vf2pp_is_isomorphic(nx.Graph(dc.to_networkx()), ref)
    rdn = recursive_dual_net("Q3", 1)
    hdn = hierarchical_dual_net("Q3", 1, "1")
    assert np.array_equal(rdn.indices, hdn.indices) and rdn.spec == "rdn:base=Q3,k=1"
    assert rdn.num_nodes == (2 * 8) ** 2 // 2
    assert recursive_dual_net("Q2", 2).num_nodes == 8 ** 4 // 2


# -- labels, super-nodes, cross links --------------------------------------------------
@pytest.mark.parametrize("spec", ["hdn:base=2x3x5,k=2,s=6/15", "hdn:base=K2,k=3,s=2/1/2", "hdn:base=K3xC4,k=2,s=4/3"])
def test_supernodes_are_subproducts_and_cross_links_swap_u_and_sn(spec):
    t = tc.build(spec)
    layout = t.codec.layout
    nodes = np.arange(t.num_nodes)
    copy, a = layout.split(layout.k, nodes)
    coords = layout.base_coords(a)
    table = t.indices.reshape(t.num_nodes, layout.degree)
    labels = t.arc_labels.reshape(t.num_nodes, layout.degree)
    for level in range(1, layout.k + 1):
        inst, serial = layout.level_serial(level, nodes)
        assert np.array_equal(layout.from_level_serial(level, inst, serial), nodes)
        c, u, sn, pos = layout.decode(level, serial)
        group = ((inst * 2 + c) * layout.clusters[level] + u) * layout.clusters[level] + sn
        own = list(layout.supernodes[level - 1])
        other = [i for i in range(len(layout.factors)) if i not in own]
        order = np.lexsort((pos, group))
        g, p = group[order], pos[order]
        # every super-node has s nodes, one per position, in one base copy, fixed outside its factors
        assert np.array_equal(np.bincount(g), np.full(g.max() + 1, layout.s[level - 1]))
        assert np.array_equal(p, np.tile(np.arange(layout.s[level - 1]), g.max() + 1))
        first = np.searchsorted(g, g)
        assert np.array_equal(copy[order], copy[order][first])
        assert np.array_equal(coords[order][:, other], coords[order][first][:, other])
        # the level's cross link: (C, U, SN, N) <-> (1-C, SN, U, N)
        col = labels == t.label_names.index(f"cross{level}")
        assert np.all(col.sum(axis=1) == 1)
        partner = table[col]
        expect = layout.from_level_serial(level, inst, layout.encode(level, 1 - c, sn, u, pos))
        assert np.array_equal(partner, expect)


def test_labels_parse_and_format():
    t = tc.build("hdn:base=2x3x5,k=2,s=6/15")
    assert t.codec.fields == ("C", "U", "SN", "N")
    v = t.index("1,19,19,14")
    assert t.label(v) == (1, 19, 19, 14) and v == t.num_nodes - 1
    with pytest.raises(tc.TopocastError, match="SN=20"):
        t.index("1,19,20,14")


@pytest.mark.parametrize("spec, subsets", [
    ("hdn:base=2x3x6,k=1,s=C6", ((2,),)),             # size 6 alone would mean C2 x C3
    ("hdn:base=2x3x6,k=1,s=6", ((0, 1),)),
    ("hdn:base=4x4,k=2,s=d0/d1", ((0,), (1,))),        # repeated factors told apart by position
    ("hdn:base=4x4,k=2,s=C4/C4", ((0,), (0,))),
    ("hdn:base=K2xK2xK2,k=2,s=d0xd1/d0xd2", ((0, 1), (0, 2))),
    ("hdn:base=Q2xQ2,k=2,s=d1/16", ((1,), (0, 1))),
])
def test_canonical_spec_rebuilds_the_same_network(spec, subsets):
    a = tc.build(spec)
    assert a.codec.layout.supernodes == subsets
    b = tc.build(a.spec)
    assert b.codec.layout.supernodes == subsets and b.spec == a.spec
    assert np.array_equal(a.indices, b.indices)


def test_dual_cube_n_is_the_rdn_of_the_n_minus_1_cube():
    for n in (2, 3, 4):
        assert np.array_equal(dual_cube(n).indices, recursive_dual_net(f"Q{n - 1}", 1).indices)


def test_supernodes_by_factor_names_equal_supernodes_by_size():
    a = tc.build("hdn:base=2x3x5,k=2,s=6/15")
    b = tc.build("hdn:base=2x3x5,k=2,s=2x3/3x5")
    c = tc.build("hdn:base=C2xC3xC5,k=2,s=C2xC3/C3xC5")
    assert np.array_equal(a.indices, b.indices) and np.array_equal(a.indices, c.indices)
    assert a.spec == b.spec == "hdn:base=2x3x5,k=2,s=6/15"


# -- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize("spec, words", [
    ("hdn:base=2x3x5,k=2,s=7/15", ["'s'", "s_1=7", "product of a subset"]),
    ("hdn:base=2x3x5,k=2,s=6/4", ["'s'", "s_2=4"]),
    ("hdn:base=2x3xP3,k=1", ["'base'", "not symmetric"]),
    ("hdn:base=2x3xM3,k=1", ["'base'", "symmetric component"]),
    ("hdn:base=2x3x5,k=0", ["'k'", ">= 1"]),
    ("hdn:base=2x3x5,k=2,s=6", ["'s'", "k=2"]),
    ("hdn:base=2x3x5,k=1,s=2x2", ["'s'", "factor '2'"]),
    ("hdn:base=2x3x5,k=3", ["max-memory"]),
    ("dualcube:1", ["'n'"]),
    # found in review: these hung, raised a traceback, or named the wrong parameter
    ("hdn:base=2x3x5,k=1000", ["'k'", "<= 16"]),
    ("hdn:base=2x3x5,k=99999999999999999999", ["'k'", "<= 16"]),
    ("hdn:base=2x3x5,k=16", ["max-memory", "10^"]),
    ("rdn:base=Q3,k=9", ["max-memory", "10^"]),
    ("dualcube:600", ["max-memory", "10^"]),
    ("hdn:base=2x3x5,k=1,s=abc", ["parameter 's'", "'abc'"]),
    ("hdn:base=2x3x5,k=1,s=-2", ["parameter 's'"]),
    ("hdn:base=2x3x5,k=1,s=d3", ["parameter 's'", "d0..d2"]),
])
def test_bad_input_one_line_exit_2(spec, words, capsys):
    with pytest.raises(tc.TopocastError) as info:
        tc.build(spec)
    for w in words:
        assert w in str(info.value)
    with pytest.raises(SystemExit) as exit_info:
        main(["info", spec])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1


def test_cli_info_json(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["info", "hdn:base=2x3x5,k=1,s=6", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert exit_info.value.code == 0
    assert (data["nodes"], data["diameter"], data["degree"]["max"], data["theorem1_diameter"]) == (300, 8, 7, 8)
    # 2 N0^2 / s1 nodes, d0 + k = 6 + 1, Theorem 1 with D(SN) = D(C2 x C3) = 2; the diameter by networkx
    assert (2 * 30 ** 2 // 6, 6 + 1, theorem1(4, [2])) == (300, 7, 8)
    assert nx.diameter(nx.Graph(tc.build("hdn:base=2x3x5,k=1,s=6").to_networkx())) == 8
    assert data["supernodes"] == ["C2xC3"]


# -- diameter and symmetry ---------------------------------------------------------------
def theorem1(d_base, d_sn):
    """Theorem 1 as printed: D_k = 2^k D(B) - sum_{i=0}^{k-1} 2^i D(SN^{k-i}) + 2^{k+1} - 2; d_sn = D(SN^1..SN^k)."""
    k = len(d_sn)
    return 2 ** k * d_base - sum(2 ** i * d_sn[k - 1 - i] for i in range(k)) + 2 ** (k + 1) - 2


def scipy_diameter(t):
    """All-sources BFS by scipy's csgraph on the adjacency: independent of topocast's BFS and orbits."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    adj = csr_matrix((np.ones(len(t.indices)), t.indices, t.indptr), shape=(t.num_nodes, t.num_nodes))
    return int(shortest_path(adj, unweighted=True).max())


# D(B) = D(C2 x C3 x C5) = 1 + 1 + 2 = 4; D(SN) of 1, 10 = C2xC5, 15 = C3xC5, 30 = B: 0, 3, 3, 4
@pytest.mark.parametrize("spec, formula, measured, vt", [
    ("hdn:base=2x3x5,k=1,s=1", theorem1(4, [0]), 10, True),
    ("hdn:base=2x3x5,k=1,s=30", theorem1(4, [4]), 5, True),
    ("hdn:base=2x3x5,k=2,s=15/30", theorem1(4, [3, 4]), 12, False),
    ("hdn:base=2x3x5,k=2,s=10/30", theorem1(4, [3, 4]), 12, False),
    ("hdn:base=2x3x5,k=2,s=30/30", theorem1(4, [4, 4]), 8, True),
])
def test_orbit_diameter_equals_all_sources_bfs(spec, formula, measured, vt):
    t = tc.build(spec)
    sym = symmetry_and_diameter(t)
    ecc = eccentricity(t)
    assert t.codec.layout.theorem1_diameter == formula
    assert sym["diameter"] == ecc.max() == measured == scipy_diameter(t)
    assert sym["radius"] == ecc.min()
    assert sym["vertex_transitive"] == vt == t.vertex_transitive


# regression: radius 14 and 13 orbits are topocast's output (commit 21c1d09), no independent oracle (12,000 nodes);
# the diameter 15 is Theorem 2's bound for this network (design/errata.md, HDN worked routing example)
@pytest.mark.regression
def test_hdn_6_15_is_not_vertex_transitive():
    t = tc.build("hdn:base=2x3x5,k=2,s=6/15")
    sym = symmetry_and_diameter(t)
    assert (sym["diameter"], sym["radius"], sym["orbits"]) == (15, 14, 13)
    assert not t.vertex_transitive


def test_vertex_transitive_flag_is_backed_by_one_orbit():
    for spec in ["hdn:base=2x3x5,k=2,s=30/5", "hdn:base=2x3x5,k=2,s=15/3", "hdn:base=K2,k=3,s=1/1/1",
                 "hdn:base=2x3x5,k=2,s=6/1", "dualcube:4", "hdn:base=K3xC4,k=1,s=3"]:
        t = tc.build(spec)
        assert t.vertex_transitive
        reps = orbit_representatives(t, automorphism_generators(t.codec.layout))
        assert len(reps) == 1, spec


# -- bisection ----------------------------------------------------------------------------
def test_paper_partition_cuts_a_quarter_of_the_nodes():
    for spec in ["hdn:base=2x3x5,k=1,s=1", "hdn:base=2x3x5,k=2,s=6/15", "hdn:base=K2xK2,k=2,s=2/2"]:
        t = tc.build(spec)
        side = dual_bisection(t)
        assert 2 * side.sum() == t.num_nodes
        assert cut_size(t, side) * 4 == t.num_nodes
        # only top-level cross links are cut
        cut = side[t.arc_sources] != side[t.indices]
        assert set(np.unique(t.arc_labels[cut]).tolist()) == {t.label_names.index(f"cross{t.codec.layout.k}")}


# -- many parameters --------------------------------------------------------------------
factor_st = st.one_of(st.builds(BaseFactor, st.just("ring"), st.integers(2, 5)),
                      st.builds(BaseFactor, st.just("complete"), st.integers(2, 4)),
                      st.builds(BaseFactor, st.just("hypercube"), st.integers(1, 2)))


@st.composite
def small_hdn(draw):
    factors = tuple(draw(st.lists(factor_st, min_size=1, max_size=3)))
    n0 = math.prod(f.size for f in factors)
    k = draw(st.integers(1, 2))
    subsets = []
    for _ in range(k):
        subsets.append(tuple(i for i in range(len(factors)) if draw(st.booleans())))
    layout = HDNLayout(factors, subsets)
    if layout.num_nodes > 6000 or n0 > 40:
        subsets = [tuple(range(len(factors)))] * k  # the smallest HDN over this base
    return factors, tuple(subsets)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_hdn())
def test_builder_properties_over_many_parameters(case):
    factors, subsets = case
    layout = HDNLayout(factors, subsets)
    if layout.num_nodes > 20000:
        return
    base = "x".join(f.name for f in factors)
    s = "/".join("x".join(f"d{i}" for i in sub) or "1" for sub in subsets)
    t = hierarchical_dual_net(base, len(subsets), s)
    layout = t.codec.layout
    assert layout.supernodes == subsets
    assert tc.build(t.spec).codec.layout.supernodes == subsets
    if t.num_nodes <= 1200:  # against the definition
        ref = reference_hdn(factors, subsets)
        index = {x: reference_index(layout, x) for x in ref.nodes()}
        ours = {(int(u), int(v)) for u, v in zip(t.arc_sources, t.indices, strict=False) if u < v}
        assert ours == {tuple(sorted((index[x], index[y]))) for x, y in ref.edges()}
    n = layout.N0
    for s_i in layout.s:
        n = 2 * n * n // s_i
    assert n == t.num_nodes
    assert set(t.port_degree.tolist()) == {layout.base_degree + layout.k}
    assert len(t.reverse_arc) == t.num_arcs  # raises unless the adjacency is symmetric
    assert np.all(bfs_distances(t, 0) >= 0)
    for g in automorphism_generators(layout):
        assert is_automorphism(t, g)
    if t.num_nodes <= 3000:
        sym = symmetry_and_diameter(t)
        assert sym["diameter"] <= layout.theorem1_diameter
        assert sym["diameter"] == eccentricity(t).max()


def test_the_hdn_page_examples_print_what_the_page_shows():
    """docs/hdn.md's examples (dimensions, symmetry and diameter, Theorem 2's route lengths) run as doctests."""
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "hdn.md"
    result = doctest.testfile(str(page), module_relative=False)
    assert result.failed == 0 and result.attempted >= 8
