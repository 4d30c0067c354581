"""Galaxy graphs over GF(q), router-level Galaxyfly and Dragonfly (Zhuang et al. 2023, section 2)."""

import json
import re

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.cli import main
from topocast.topology.galaxy import finite_field, galaxy, generator_graph, generator_sets, prime_power, supernode_name
from topocast.topology.galaxyfly import dragonfly, galaxyfly, supernode_view
from topocast.topology.metrics import diameter

# prime powers with q mod 4 != 2, the q the construction accepts
GOOD_Q = [3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25, 27, 29, 31, 32, 37, 41, 43, 47, 49]


def test_prime_power():
    assert [prime_power(q) for q in (2, 8, 9, 12, 49, 1)] == [(2, 1), (2, 3), (3, 2), None, (7, 2), None]


@pytest.mark.parametrize("q", [4, 8, 9, 16, 25, 27, 81])
def test_prime_power_field_matches_galois(q):
    import galois

    field = finite_field(q)
    gf = galois.GF(q)
    x = gf(np.arange(q))
    e = np.arange(q)
    assert np.array_equal(field.subtract(e[:, None], e[None, :]), np.asarray(x[:, None] - x[None, :], dtype=np.int64))
    assert np.array_equal(field.add(e[:, None], e[None, :]), np.asarray(x[:, None] + x[None, :], dtype=np.int64))
    assert sorted(field.power.tolist()) == list(range(1, q))  # xi is primitive
    assert np.array_equal(field.power, np.asarray(gf.primitive_element ** np.arange(q - 1), dtype=np.int64))


@pytest.mark.parametrize("q", [3, 5, 7, 11, 13, 29])
def test_prime_field_primitive_root(q):
    field = finite_field(q)
    assert sorted(field.power.tolist()) == list(range(1, q))
    e = np.arange(q)
    assert np.array_equal(field.subtract(e[:, None], e[None, :]), (e[:, None] - e[None, :]) % q)
    assert all(pow(field.xi, (q - 1) // f, q) != 1 for f in range(2, q) if (q - 1) % f == 0)


def test_paper_field_q5():
    sets = generator_sets(5)
    assert sets.field.xi == 2 and sets.delta == 1 and sets.l == 1
    assert sets.X.tolist() == [1, 4] and sets.X_prime.tolist() == [2, 3]


def test_errata_sets_for_q_4l_minus_1():
    # q = 7 = 4*2 - 1, xi = 3: X = {xi^0, xi^2} u {xi^3, xi^5} = {1, 2, 6, 5}
    sets = generator_sets(7)
    assert sets.field.xi == 3
    assert sets.X.tolist() == [1, 2, 5, 6]
    assert sets.X_prime.tolist() == sorted((3 * x) % 7 for x in [1, 2, 5, 6])


@pytest.mark.parametrize("q", GOOD_Q)
def test_theorem_1_and_2(q):
    """H(x) = xi x maps the generator graph of X onto that of X' (x - y in X iff H(x) - H(y) in X')."""
    sets = generator_sets(q)
    g, gp = generator_graph(q, "X"), generator_graph(q, "X'")
    H = sets.H
    edges = {(int(u), int(v)) for u, v in zip(g.arc_sources, g.indices, strict=False)}
    mapped = {(int(H[u]), int(H[v])) for u, v in edges}
    assert mapped == {(int(u), int(v)) for u, v in zip(gp.arc_sources, gp.indices, strict=False)}
    if q <= 13:
        assert nx.is_isomorphic(g.to_networkx(), gp.to_networkx())
    assert len(sets.X) == (q - sets.delta) // 2


def brute_force_galaxy(n, q):
    """Definition 1 and Theorem 2 written out with plain loops."""
    sets = generator_sets(q)
    X, H = set(sets.X.tolist()), sets.H
    sub = sets.field.subtract(np.arange(q)[:, None], np.arange(q)[None, :])
    graph = nx.Graph()
    graph.add_nodes_from(range(n * q))
    for c in range(n):
        for x in range(q):
            for y in range(q):
                if x != y and int(sub[x, y]) in X:
                    graph.add_edge(c * q + x, c * q + y)
    for t in range(n):
        for s in range(t):
            for x in range(q):
                graph.add_edge(t * q + x, s * q + int(H[x]))
    return graph


@settings(max_examples=40, deadline=None)
@given(q=st.sampled_from(GOOD_Q[:14]), n=st.integers(1, 6))
def test_galaxy_diameter_and_brute_force(q, n):
    g = galaxy(n, q)
    assert diameter(g) <= 2
    assert np.all(g.port_degree == len(generator_sets(q).X) + n - 1)
    if n * q <= 80:
        ours = {tuple(sorted(e)) for e in g.to_networkx().edges()}
        assert ours == {tuple(sorted(e)) for e in brute_force_galaxy(n, q).edges()}


def test_galaxy_paper_numbering():
    """Figure 1 / section 3.2: n = 3, q = 5, xi = 2, cluster-major S1..S15."""
    g = galaxy(3, 5)
    s8 = g.index((1, 2))
    assert supernode_name(s8) == "S8"
    assert [supernode_name(v) for v in g.neighbors(s8)] == ["S5", "S7", "S9", "S12"]
    assert [supernode_name(v) for v in g.neighbors(4)] == ["S1", "S4", "S8", "S13"]


def test_q1_is_complete_group_graph():
    g = galaxy(5, 1)
    assert g.num_edges == 10 == 5 * 4 // 2 and diameter(g) == 1  # K5


def test_galaxyfly_paper_network():
    t = galaxyfly(3, 5, 4)
    assert t.num_nodes == 60 == 3 * 5 * 4  # n q a routers
    # supernode degree |X| + n - 1 = (q - delta) / 2 + n - 1 = 2 + 2
    assert t.meta["supernodes"] == 15 and t.meta["supernode_degree"] == 4 and t.meta["h"] == 1
    assert diameter(t) == 5 == nx.diameter(t.to_networkx())  # the paper (section 5): diameter 5 for q > 1
    assert t.label(7 * 4 + 2) == (1, 2, 2)


def test_dragonfly_is_galaxyfly_with_one_supernode_per_cluster():
    d, g = dragonfly(4, 6), galaxyfly(4, 1, 6)
    assert np.array_equal(d.indptr, g.indptr) and np.array_equal(d.indices, g.indices)
    assert np.array_equal(d.arc_labels, g.arc_labels)
    assert diameter(dragonfly(3, 20)) == 3 == nx.diameter(dragonfly(3, 20).to_networkx())  # the paper: 3


@settings(max_examples=30, deadline=None)
@given(q=st.sampled_from([1, 3, 4, 5, 7, 8, 9]), n=st.integers(1, 4), a=st.integers(1, 6), extra=st.integers(0, 2))
def test_galaxyfly_structure(q, n, a, extra):
    d = len(generator_sets(q).X) + n - 1
    h = -(-d // a) + extra if d else extra
    t = galaxyfly(n, q, a, h)
    view = supernode_view(t)
    gal = galaxy(n, q)
    assert t.num_nodes == n * q * a
    assert len(t.reverse_arc) == t.num_arcs  # raises unless every link has both directions
    local = t.arc_labels == 0
    src, dst = t.arc_sources, t.indices
    assert np.all(src[local] // a == dst[local] // a)
    assert np.count_nonzero(local) == n * q * a * (a - 1)  # every supernode a complete graph
    glob = ~local
    pairs = {(int(u) // a, int(v) // a) for u, v in zip(src[glob], dst[glob], strict=False)}
    assert pairs == {(int(u), int(v)) for u, v in zip(gal.arc_sources, gal.indices, strict=False)}
    assert np.count_nonzero(glob) == len(pairs)  # one global link per adjacent pair
    per_router = np.bincount(src[glob], minlength=t.num_nodes)
    assert per_router.max(initial=0) <= max(h, 0)
    for s in range(n * q):  # the k-th neighbour is on router k // h
        ks = np.arange(view.nbr_ptr[s + 1] - view.nbr_ptr[s])
        assert np.array_equal(view.attach[view.nbr_ptr[s]:view.nbr_ptr[s + 1]], ks // max(h, 1))
        assert np.array_equal(view.neighbours_of(s), gal.neighbors(s))


@pytest.mark.parametrize("spec, words", [
    ("galaxyfly:n=3,q=6,a=4", "'q' must be a prime power"),
    ("galaxyfly:n=3,q=2,a=4", "'q' must be 4l-1, 4l or 4l+1"),
    ("galaxyfly:n=0,q=5,a=4", "'n' must be >= 1"),
    ("galaxyfly:n=3,q=5,a=0", "'a' must be >= 1"),
    ("galaxyfly:n=3,q=5,a=2,h=1", "below the supernode degree 4"),
    ("dragonfly:g=5,a=2,h=1", "below the supernode degree 4"),
    ("galaxy:n=2,q=10", "'q' must be a prime power"),
])
def test_bad_input(spec, words):
    with pytest.raises(tc.TopocastError, match=re.escape(words)):
        tc.build(spec)


def test_bad_input_python_api():
    with pytest.raises(tc.TopocastError, match="'n' must be >= 1"):
        galaxyfly(0, 5, 4)
    with pytest.raises(tc.TopocastError, match="'a' must be >= 1"):
        galaxyfly(3, 5, 0)


def test_cli_info_json_and_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["info", "galaxyfly:n=3,q=5,a=4", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert exit_info.value.code == 0
    # n q a, n q, (q - delta) / 2 + n - 1, and the paper's diameter 5 (checked with networkx above)
    assert (data["routers"], data["supernodes"], data["supernode_degree"], data["diameter"]) == (60, 15, 4, 5)
    assert (60, 15, 4) == (3 * 5 * 4, 3 * 5, (5 - 1) // 2 + 3 - 1)
    with pytest.raises(SystemExit) as exit_info:
        main(["info", "galaxyfly:n=3,q=6,a=4"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1 and "'q'" in err
