"""EJ_alpha^(n): residues, labels, distances (formulas (1)-(3) against BFS), sectors, the sector tree."""

import subprocess
import sys
from itertools import product

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.errors import TopocastError
from topocast.topology.eisenstein_jacobi import (
    SECTORS,
    UNITS,
    distance_distribution_formula,
    eisenstein_jacobi,
    ej_ring,
    hex_norm,
)
from topocast.topology.metrics import bfs_distances


@st.composite
def alphas(draw, max_b=12):
    b = draw(st.integers(1, max_b))
    a = draw(st.integers(0, b))
    if a * a + a * b + b * b < 2:
        a, b = 1, 1
    return a, b


def divisible(a, b, x, y):
    """x + y rho is a multiple of alpha: (x + y rho) * conj(alpha) has both parts divisible by N."""
    norm = a * a + a * b + b * b
    c, d = a + b, -b  # conj(a + b rho) = (a + b) - b rho
    return (x * c - y * d) % norm == 0 and (x * d + y * c + y * d) % norm == 0


def test_hex_norm_is_formula_2_minimum():
    for x, y in product(range(-5, 6), repeat=2):
        best = min(abs(u) + abs(v) + abs(w) for u, v, w in product(range(-11, 12), repeat=3)
                   if u - w == x and v + w == y)
        assert hex_norm(x, y) == best


@settings(max_examples=40, deadline=None)
@given(alphas())
def test_residues_links_and_weights(alpha):
    a, b = alpha
    ring = ej_ring(a, b)
    norm = a * a + a * b + b * b
    assert ring.norm == norm
    # canonical representatives are distinct residues and reduce to their own index
    assert np.array_equal(ring.reduce(ring.rep[:, 0], ring.rep[:, 1]), np.arange(norm))
    reps = [tuple(r) for r in ring.rep]
    for i, j in product(range(min(norm, 12)), repeat=2):
        same = divisible(a, b, reps[i][0] - reps[j][0], reps[i][1] - reps[j][1])
        assert same == (i == j)
    # every arc differs by its unit modulo alpha
    for node in range(min(norm, 15)):
        for k in range(6):
            nb = ring.neighbors[node, k]
            dx, dy = ring.rep[nb] - ring.rep[node] - UNITS[k]
            assert divisible(a, b, dx, dy)
    # formula (2) and the tree depth equal BFS distances
    topo = eisenstein_jacobi(a, b)
    dist = bfs_distances(topo, 0)
    assert np.array_equal(ring.weight_formula(ring.rep[:, 0], ring.rep[:, 1]), dist)
    assert np.array_equal(ring.depth, dist)
    assert ring.diameter == dist.max()
    # formula (1) from another source
    u = norm // 2
    assert np.array_equal(ring.distance_formula(np.full(norm, u), np.arange(norm)), bfs_distances(topo, u))


@settings(max_examples=40, deadline=None)
@given(alphas(max_b=15))
def test_sector_tree_is_a_shortest_path_tree_of_sector_edges(alpha):
    ring = ej_ring(*alpha)
    assert ring.fallback_edges == 0
    for node in range(1, ring.norm):
        j, k, ell = ring.sector[node], ring.sector_k[node], ring.sector_l[node]
        major, minor = SECTORS[int(j)]
        assert 1 <= j <= 6 and k >= 1 and ell >= 0
        assert tuple(ring.rep[node]) == tuple(k * UNITS[major] + ell * UNITS[minor])
        assert hex_norm(*ring.rep[node]) == ring.depth[node] == k + ell
        parent = ring.parent[node]
        assert ring.depth[parent] == ring.depth[node] - 1
        assert ring.neighbors[parent, ring.parent_dir[node]] == node
        # the edge is the sector's minor direction, or its major one along the axis
        assert ring.parent_dir[node] == (minor if ell > 0 else major)


@pytest.mark.parametrize("a", [1, 2, 3, 4, 6])
def test_b_equals_a_plus_1_is_the_papers_hexagon(a):
    ring = ej_ring(a, a + 1)
    assert list(ring.depth_histogram()) == [1] + [6 * s for s in range(1, a + 1)]
    for node in range(1, ring.norm):
        children = ring.child_ptr[node + 1] - ring.child_ptr[node]
        axis = ring.sector_l[node] == 0
        assert children == (0 if ring.depth[node] == a else (2 if axis else 1))


@settings(max_examples=60, deadline=None)
@given(alphas(max_b=25))
def test_formula_3_holds_except_a_equals_b(alpha):
    a, b = alpha
    bfs = ej_ring(a, b).depth_histogram()
    formula = distance_distribution_formula(a, b)
    if a == b and a >= 2:
        # s = T = M: the printed case '2 if b = a (mod 3) and s = M' wins over 's = T'
        assert formula[-1] == 2 and bfs[-1] == 3 * a - 1
        assert np.array_equal(formula[:-1], bfs[:-1])
    else:
        assert np.array_equal(formula, bfs)


def test_non_cyclic_residue_ring_when_gcd_exceeds_1():
    ring = ej_ring(2, 4)  # gcd 2, N = 28: Z[rho]/alpha is not cyclic as a group
    assert ring.g == 2 and ring.norm == 28
    topo = eisenstein_jacobi(2, 4)
    orders = []
    for node in range(1, ring.norm):
        x, y = ring.rep[node]
        orders.append(next(k for k in range(1, 29) if divisible(2, 4, k * x, k * y)))
    assert max(orders) < 28
    # the graph equals the definition built independently with networkx
    g = nx.MultiGraph()
    reps = [tuple(int(v) for v in r) for r in ring.rep]
    for i, (x, y) in enumerate(reps):
        for ux, uy in UNITS:
            j = next(j for j, (p, q) in enumerate(reps) if divisible(2, 4, x + ux - p, y + uy - q))
            if i < j or (i == j):
                g.add_edge(i, j)
    assert nx.is_isomorphic(nx.Graph(g), nx.Graph(topo.to_networkx()))


def test_product_network_and_codec():
    topo = tc.build("ej:a=2,b=3,n=2")
    assert topo.num_nodes == 361 == (2 * 2 + 2 * 3 + 3 * 3) ** 2 and set(topo.port_degree) == {12} == {6 * 2}
    assert "d0:+rho" in topo.label_names and "d1:-rho2" in topo.label_names
    assert topo.codec.fields == ("x2", "y2", "x1", "y1")
    for node in (0, 5, 200, 360):
        assert topo.index(topo.label(node)) == node
    # moving along d0:+rho changes the first coordinate by rho
    node = 7
    arc = next(e for e in range(topo.indptr[node], topo.indptr[node + 1]) if topo.label_of(e) == "d0:+rho")
    x2, y2, x1, y1 = topo.label(node)
    assert topo.indices[arc] == topo.index((x2, y2 + 1, x1, y1))


def test_info_of_papers_network():
    data = tc.info("ej:a=3,b=4,n=3")
    # N(3 + 4 rho)^3 = 37^3 nodes, 6 links per dimension, diameter 3 x diameter(EJ_{3+4rho}) = 3 x a (b = a + 1)
    assert data["nodes"] == 50653 == 37 ** 3 and data["degree"]["max"] == 18 == 6 * 3
    assert data["diameter"] == 9 == 3 * 3


@pytest.mark.parametrize("spec, words", [
    ("ej:a=5,b=4", "'a' must be <= b"), ("ej:a=-1,b=4", ">= 0"), ("ej:a=0,b=1", "norm"),
    ("ej:a=1,b=2,n=0", "'n' must be >= 1"),
])
def test_bad_input(spec, words):
    with pytest.raises(TopocastError, match=words):
        tc.build(spec)


def test_bad_input_on_the_cli_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, "-m", "topocast.cli", "info", "ej:a=5,b=4"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == ["topocast: error: ej: parameter 'a' must be <= b, got a=5, b=4"]


def brute_force_residues(a, b):
    """Residues of Z[rho] mod alpha found by divisibility alone (no lattice basis): one point per class."""
    norm = a * a + a * b + b * b
    reps = []
    span = 2 * (a + b) + 2
    for x in range(-span, span + 1):
        for y in range(-span, span + 1):
            if not any(divisible(a, b, x - p, y - q) for p, q in reps):
                reps.append((x, y))
                if len(reps) == norm:
                    return reps
    raise AssertionError("window too small")


@settings(max_examples=25, deadline=None)
@given(alphas(max_b=6))
def test_whole_graph_equals_the_definition_built_by_brute_force(alpha):
    a, b = alpha
    reps = brute_force_residues(a, b)
    norm = len(reps)
    topo = eisenstein_jacobi(a, b)
    assert topo.num_nodes == norm
    # our node of each brute-force class
    ours = [topo.index((x, y)) for x, y in reps]
    assert sorted(ours) == list(range(norm))
    # arcs (source class, target class, direction) from the definition A ~ A +- 1, +- rho, +- rho^2
    def target(x, y):
        return ours[next(j for j, (p, q) in enumerate(reps) if divisible(a, b, x - p, y - q))]

    expected = sorted((ours[i], target(x + ux, y + uy), k)
                      for i, (x, y) in enumerate(reps) for k, (ux, uy) in enumerate(UNITS))
    got = sorted(zip(topo.arc_sources.tolist(), topo.indices.tolist(), topo.arc_labels.tolist(), strict=False))
    assert got == expected


@pytest.mark.parametrize("a, b", [(1, 2), (2, 2), (0, 3), (1, 3)])
def test_product_equals_networkx_cartesian_product_and_distances_add(a, b):
    one = eisenstein_jacobi(a, b).to_networkx()
    two = eisenstein_jacobi(a, b, 2)
    norm = one.number_of_nodes()
    prod = nx.cartesian_product(nx.Graph(one), nx.Graph(one))
    mapped = nx.relabel_nodes(prod, {(u, v): u * norm + v for u, v in prod.nodes})
    ours = nx.Graph(two.to_networkx())
    assert set(map(frozenset, ours.edges)) == set(map(frozenset, mapped.edges))
    # distance in EJ^(2) = formula (1) summed over the two dimensions
    ring = ej_ring(a, b)
    for source in (0, norm + 2, two.num_nodes - 1):
        s_hi, s_lo = divmod(source, norm)
        nodes = np.arange(two.num_nodes)
        formula = (ring.distance_formula(np.full(len(nodes), s_hi), nodes // norm)
                   + ring.distance_formula(np.full(len(nodes), s_lo), nodes % norm))
        assert np.array_equal(formula, bfs_distances(two, source))


def test_sector_of_every_node_follows_section_2_1():
    from topocast.topology.eisenstein_jacobi import node_sectors

    # b = a + 1: A = x rho^(j-1) + y rho^j with x >= 0, y >= 1 (the unique minimal representative)
    ring = ej_ring(3, 4)
    rho_pow = [complex(*UNITS[k] @ np.array([[1, 0], [0.5, 3 ** 0.5 / 2]])) for k in range(6)]
    for node in range(1, ring.norm):
        x, y = ring.rep[node]
        point = complex(x + 0.5 * y, 3 ** 0.5 / 2 * y)
        hits = [j for j in range(1, 7) for xx in range(0, 4) for yy in range(1, 4)
                if abs(xx * rho_pow[(j - 1) % 6] + yy * rho_pow[j % 6] - point) < 1e-9]
        assert hits == [ring.sector[node]]
    topo = eisenstein_jacobi(3, 4, 2)
    assert node_sectors(topo, 0) == (0, 0)
    assert node_sectors(topo, topo.index((0, 1, 1, 0))) == (1, 6)  # (rho, 1)
    assert node_sectors(topo, topo.index((-1, 0, 0, -1))) == (3, 4)  # (-1, -rho)
    with pytest.raises(TopocastError):
        node_sectors(tc.build("ring:5"), 0)


def _cli(capsys, *args):
    from topocast.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


@pytest.mark.parametrize("spec, message", [
    ("ej:a=5,b=4,n=2", "ej: parameter 'a' must be <= b, got a=5, b=4"),
    ("ej:a=2,b=-3", "ej: parameters 'a' and 'b' must be >= 0, got a=2, b=-3"),
    ("ej:a=0,b=1,n=3", "ej: the norm a^2 + ab + b^2 must be >= 2, got a=0, b=1 (norm 1)"),
    ("ej:a=3,b=4,n=0", "ej: parameter 'n' must be >= 1, got n=0"),
    ("ej:a=3,b=4.5", "ej: parameter 'b' must be an integer, got '4.5'"),
])
@pytest.mark.parametrize("command", [("info",), ("run", "one-to-all-improved"), ("run", "all-to-all-three-phase")])
def test_every_command_gives_one_line_and_exit_2(capsys, spec, message, command):
    code, out, err = _cli(capsys, command[0], spec, *command[1:], "--json")
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [f"topocast: error: {message}"]


def test_cli_run_json_has_the_tables_columns_and_totals(capsys):
    import json

    code, out, _ = _cli(capsys, "run", "ej:a=1,b=3,n=2", "one-to-all-iterative", "--json")
    data = json.loads(out)
    assert code == 0 and data["verified"] and data["exactly_once"]
    series = data["per_step"]  # per-step series only there, once
    for key in ("senders", "receivers", "free", "active"):
        assert len(series[key]) == data["steps"] == 2 * ej_ring(1, 3).diameter and key not in data
    assert data["total_senders"] == sum(series["senders"]) and data["total_receivers"] == 13 ** 2 - 1
    assert [f + x for f, x in zip(series["free"], series["active"], strict=False)] == [169] * data["steps"]
