"""Butterfly, Omega, baseline, Benes: structure, unique paths, XOR / d-shift Latin squares, folding."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms.min_alltoall import min_latin_routes, random_base
from topocast.errors import TopocastError
from topocast.experiments.traces import check_min_square, partition_check
from topocast.plans.circuit import shift_route
from topocast.sim.circuit import trace
from topocast.topology.core import Topology
from topocast.topology.fattree import gft
from topocast.topology.multistage import (
    _is_isomorphism,
    benes_network,
    clos_network,
    folded_clos_is_fat_tree,
    folded_graph,
    multistage_network,
)
from topocast.topology.stages import path_counts

dary = st.tuples(st.integers(1, 4), st.integers(2, 4)).filter(lambda t: t[1] ** t[0] <= 256)


@settings(max_examples=30, deadline=None)
@given(dary, st.sampled_from(["butterfly", "omega", "baseline"]))
def test_banyan_unique_paths(nd, family):
    n, d = nd
    net = multistage_network(family, n=n, d=d)
    assert net.num_stages == n and list(net.switches) == [d ** (n - 1)] * n
    assert np.all(path_counts(net) == 1)


@settings(max_examples=15, deadline=None)
@given(dary)
def test_benes_paths_and_stages(nd):
    n, d = nd
    net = benes_network(n, d)
    assert net.num_stages == 2 * n - 1
    assert np.all(path_counts(net) == d ** (n - 1))


@settings(max_examples=20, deadline=None)
@given(dary, st.sampled_from(["butterfly", "omega", "baseline", "benes"]))
def test_straight_setting_is_a_permutation(nd, family):
    n, d = nd
    net = multistage_network(family, n=n, d=d)
    route = np.concatenate([shift_route(d, d, np.zeros(int(s))).ravel() for s in net.switches])
    t = trace(net, route)
    assert sorted(t.perm.tolist()) == list(range(d ** n)) and t.conflicts == 0
    if family in ("butterfly", "omega", "benes"):
        assert t.perm.tolist() == list(range(d ** n))


@pytest.mark.parametrize("n, d", [(3, 2), (2, 3), (3, 3)])
def test_delta_networks_are_isomorphic(n, d):
    graphs = [tc.build(f"{f}:n={n},d={d}").to_networkx() for f in ("butterfly", "omega", "baseline")]
    assert nx.is_isomorphic(graphs[0], graphs[1]) and nx.is_isomorphic(graphs[0], graphs[2])


@settings(max_examples=25, deadline=None)
@given(dary, st.sampled_from(["butterfly", "omega", "baseline"]), st.integers(0, 2 ** 16))
def test_xor_and_dshift_latin_squares(nd, family, seed):
    n, d = nd
    net = multistage_network(family, n=n, d=d)
    for base in (None, random_base(net, np.random.default_rng(seed))):
        check = check_min_square(net, base)
        assert check["latin_square"] and check["conflicts"] == 0 and check["undelivered"] == 0


def test_massini_rows_are_xor_of_base():
    net = multistage_network("butterfly", n=3, d=2)
    base = random_base(net, np.random.default_rng(3))
    routes = min_latin_routes(net, np.arange(8), base)
    for x in range(8):
        for j in range(3):
            bit = x >> (2 - j) & 1
            states = routes[x, net.stage_slice(j)].reshape(-1, 2)[:, 0]  # output of input 0 = state
            assert np.array_equal(states, base[:, j] ^ bit)


def test_min_algorithms_registered():
    r = tc.run("omega:n=4,d=2", "min-xor", base="random", seed=5)
    assert r.verified and r.metrics["permutations"] == 16 == 2 ** 4 and r.metrics["latin_square"]  # d^n rows
    r = tc.run("baseline:n=2,d=5", "d-shift")
    assert r.verified and r.metrics["permutations"] == 25 == 5 ** 2
    with pytest.raises(TopocastError, match="'d' must be 2"):
        tc.run("butterfly:n=2,d=3", "min-xor")


def test_min_refuses_what_does_not_fit():
    with pytest.raises(TopocastError, match="max-memory: algorithm all-to-all-personalized-min-xor on 65536"):
        tc.run("butterfly:n=16", "min-xor")
    with pytest.raises(TopocastError, match="max-memory"):
        tc.run("omega:n=6,d=3", "d-shift", max_memory=1e5)


def test_chunked_check_equals_one_batch():
    net = multistage_network("omega", n=5, d=2)
    base = random_base(net, np.random.default_rng(11))
    small, whole = check_min_square(net, base, chunk=3), check_min_square(net, base, chunk=64)
    assert np.array_equal(small["perms"], whole["perms"]) and small["latin_square"] and small["conflicts"] == 0


@pytest.mark.parametrize("family, n, d", [("butterfly", 3, 2), ("omega", 3, 2), ("baseline", 3, 2),
                                          ("omega", 2, 3)])
def test_massini_partition_exhaustive(family, n, d):
    """3.2.4.1: the configurations of a small MIN (each base with its first row straight) split into
    Latin squares holding every admissible permutation exactly once: N^(N/2 - 1) = 512 squares on 8 lines."""
    net = multistage_network(family, n=n, d=d)
    found = partition_check(net)
    lines, rows = d ** n, d ** (n - 1)
    assert found["configurations"] == d ** (rows * n) == found["distinct_permutations"]
    assert found["squares"] == found["latin_squares"] == d ** ((rows - 1) * n)
    if d == 2:
        assert found["squares"] == lines ** (lines // 2 - 1)


def test_graph_view_counts():
    t = tc.build("benes:3")
    assert t.meta["stages"] == 5 and t.num_nodes == 8 + 5 * 4 + 8
    with pytest.raises(TopocastError, match="'d' must be >= 2"):
        tc.build("omega:n=3,d=1")


@pytest.mark.parametrize("net, tree", [
    (clos_network(2, 2, 3), gft(1, 3, 2)), (clos_network(3, 3, 2), gft(1, 2, 3)),
    (benes_network(3, 2), gft(2, 2, 2)), (benes_network(4, 2), gft(3, 2, 2)), (benes_network(3, 3), gft(2, 3, 3)),
    (clos_network(2, 2, 4, 2), gft(2, 2, 2)),
])
def test_folded_clos_is_fat_tree(net, tree):
    assert folded_clos_is_fat_tree(net, tree)


def test_folded_mismatch_is_not_isomorphic():
    assert not folded_clos_is_fat_tree(clos_network(2, 3, 3), gft(1, 3, 2))


def test_folded_check_agrees_with_vf2_on_a_same_size_rewiring():
    """A degree-preserving swap in gft(1,3,2) (processor 0 onto a top switch, a link between two bottom
    switches): same node and link counts, not isomorphic; VF2++ and the plain VF2 test agree."""
    net, tree = clos_network(2, 2, 3), gft(1, 3, 2)
    g = tree.to_networkx()
    switch = next(iter(g[0]))
    top = next(v for v in g.nodes if g.degree(v) == 3)
    other = next(u for u in g[top] if u != switch)
    g.remove_edges_from([(0, switch), (other, top)])
    g.add_edges_from([(0, top), (other, switch)])
    rewired = Topology.from_networkx(g)
    folded = nx.Graph(folded_graph(net))
    assert nx.is_isomorphic(folded, tree.to_networkx()) and folded_clos_is_fat_tree(net, tree)
    assert not nx.is_isomorphic(folded, rewired.to_networkx())
    assert not folded_clos_is_fat_tree(net, rewired)


def test_mapping_is_checked_link_by_link():
    folded, target = nx.Graph(folded_graph(benes_network(3, 2))), gft(2, 2, 2).to_networkx()
    mapping = nx.vf2pp_isomorphism(folded, target)
    assert _is_isomorphism(folded, target, mapping)
    swapped = {**mapping, ("p", 0): mapping[(0, 0)], (0, 0): mapping[("p", 0)]}  # a processor onto a switch
    assert not _is_isomorphism(folded, target, swapped)
    assert not _is_isomorphism(folded, target, {**mapping, ("p", 0): mapping[("p", 1)]})  # not a bijection
