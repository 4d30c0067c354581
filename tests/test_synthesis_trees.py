"""Tree packing (broadcast, all-gather, and reversed for the reductions) against independent oracles:
Edmonds' number by networkx max-flow, the trees checked as arc-disjoint spanning arborescences by networkx,
the all-gather rate against the cut bound by brute force over node sets, and verified pipelined runs within
1.05x of the lower bound when bandwidth dominates."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.synthesis import forest, synthesize


def _digraph(t) -> nx.DiGraph:
    g = nx.DiGraph()
    for u, v in zip(t.arc_sources.tolist(), t.indices.tolist(), strict=True):
        if u != v:
            g.add_edge(u, v, capacity=g.get_edge_data(u, v, {"capacity": 0})["capacity"] + 1)
    return g


def _check_arborescences(t, parents, root):
    g = _digraph(t)
    used: dict[tuple[int, int], int] = {}
    for parent in parents:
        nodes = np.flatnonzero(parent >= 0)
        edges = list(zip(parent[nodes].tolist(), nodes.tolist(), strict=True))
        tree = nx.DiGraph(edges)
        assert tree.number_of_nodes() == t.num_nodes and nx.is_arborescence(tree)
        assert [n for n, d in tree.in_degree() if d == 0] == [root]
        for e in edges:
            used[e] = used.get(e, 0) + 1
    assert all(g.has_edge(*e) and c <= g.edges[e]["capacity"] for e, c in used.items())   # arc-disjoint


@pytest.mark.parametrize("spec,root", [("ring:10", 0), ("torus:4x5", 3), ("hypercube:4", 0), ("polarfly:q=3", 5),
                                       ("mesh:3x4", 0), ("galaxyfly:n=3,q=5,a=4", 0), ("jellyfish:n=14,d=3", 2)])
def test_as_many_arc_disjoint_spanning_arborescences_as_edmonds(spec, root):
    t = tc.build(spec)
    g = _digraph(t)
    k = min(nx.maximum_flow_value(g, root, v) for v in range(t.num_nodes) if v != root)
    assert forest.root_connectivity(t, root) == k
    parents = forest.pack_root(t, root)
    assert len(parents) == k
    _check_arborescences(t, parents, root)


def _cut_rate(t) -> float:
    """max over node sets X of |V \\ X| / (links entering X): the all-gather cut bound, brute force."""
    g = _digraph(t)
    n = t.num_nodes
    best = 0.0
    for size in range(1, n):
        for side in itertools.combinations(range(n), size):
            inside = set(side)
            entering = sum(d["capacity"] for u, v, d in g.edges(data=True) if v in inside and u not in inside)
            best = max(best, (n - size) / entering)
    return best


@pytest.mark.parametrize("spec", ["ring:8", "torus:3x4", "hypercube:3", "polarfly:q=2", "jellyfish:n=10,d=3"])
def test_allgather_packing_rate_is_the_cut_bound(spec):
    t = tc.build(spec)
    packing = forest.pack(t, np.arange(t.num_nodes))
    for r in range(t.num_nodes):
        _check_arborescences(t, packing.parent[packing.roots == r], r)
    cap = forest.link_matrix(t)
    load = forest.arc_loads(packing, t.num_nodes)
    rate = float((load[cap > 0] / cap[cap > 0]).max())
    assert rate == pytest.approx(_cut_rate(t), rel=1e-12)


def test_packing_rate_never_beats_the_cut_bound_where_connectivity_is_below_degree():
    # two 4-cliques joined by one link: edge connectivity 1, minimum degree 3
    g = nx.disjoint_union(nx.complete_graph(4), nx.complete_graph(4))
    g.add_edge(0, 4)
    t = tc.Topology.from_arcs("custom", {}, 8, np.array([u for u, v in g.edges] + [v for u, v in g.edges]),
                              np.array([v for u, v in g.edges] + [u for u, v in g.edges]))
    packing = forest.pack(t, np.arange(8))
    assert packing.per_root == 1
    assert forest.arc_loads(packing, 8).max() >= _cut_rate(t) - 1e-12   # 7 >= 4: within deg_min / k


LARGE = {"message_bytes": 1e9, "ports": "all", "duplex": "full"}


@pytest.mark.parametrize("spec,collective", [("ring:8", "allgather"), ("torus:4x4", "allgather"),
                                             ("polarfly:q=3", "allgather"), ("galaxyfly:n=3,q=5,a=4", "broadcast"),
                                             ("torus:6x6", "broadcast"), ("hypercube:5", "broadcast"),
                                             ("jellyfish:n=16,d=4", "broadcast")])
def test_large_message_within_five_percent_of_the_bound(spec, collective):
    s = synthesize(spec, collective, restarts=0, known=False, **LARGE)
    trees = [c for c in s.candidates if c["method"] == "trees"]
    assert trees and s.result.verified and s.result.metrics["exactly_once"]
    assert s.lower_bound <= s.measured <= trees[0]["measured"] <= 1.05 * s.lower_bound   # the best one wins


@pytest.mark.parametrize("spec,collective", [("torus:4x4", "reduce-scatter"), ("torus:4x4", "allreduce"),
                                             ("polarfly:q=3", "reduce-scatter"), ("jellyfish:n=12,d=3", "allreduce"),
                                             ("ring:8", "reduce")])
def test_reductions_over_reversed_trees_within_five_percent(spec, collective):
    s = synthesize(spec, collective, restarts=0, known=False, **LARGE)
    assert s.method.startswith("reversed-") and s.result.verified
    assert s.lower_bound <= s.measured <= 1.05 * s.lower_bound
    assert s.schedule.combine.any()                                 # combining transfers (the reduction verifier)


def test_tree_allgather_is_a_candidate_and_named():
    s = synthesize("torus:4x4", "allgather", restarts=0, **LARGE)
    assert any(c["method"] == "trees" and c["origin"] == "synthesized" for c in s.candidates)
    assert s.method == "trees" and s.origin == "synthesized"
    assert np.all(s.schedule.origin[:s.chunks] == 0)                 # chunks of node 0's block come first


def test_tree_schedule_replays_from_its_file(tmp_path):
    from topocast.synthesis import replay

    s = synthesize("ring:6", "allgather", restarts=0, known=False, **LARGE)
    s.write(tmp_path / "t.json")
    again = replay("ring:6", tmp_path / "t.json")
    assert again.verified and again.metrics["time"] == s.measured


def test_no_trees_on_a_network_that_is_not_connected():
    t = tc.Topology.from_arcs("custom", {}, 4, np.array([0, 1, 2, 3]), np.array([1, 0, 3, 2]))
    assert forest.root_connectivity(t, 0) == 0
    assert forest.pack(t, np.arange(4)).parent.shape[0] == 0
