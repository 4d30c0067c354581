"""Torus dimension order with random ties and one VC per ring (``ties=random``, ``vc_scheme=ring``).

Oracles: networkx's acyclicity test on the channel dependency graph of every route under every tie outcome,
ring distances computed here, a plain average over every coin combination for the channel loads, and a
run's measured throughput against its bound.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.algorithms import unicast_routing as ur
from topocast.algorithms.unicast_bounds import channel_loads


def all_pairs(n):
    s, d = (a.ravel() for a in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    keep = s != d
    return s[keep].astype(np.int64), d[keep].astype(np.int64)


def dependencies(graph: nx.DiGraph, ptr, arc, vc) -> nx.DiGraph:
    for w in range(len(ptr) - 1):
        chans = list(zip(arc[ptr[w] + 1:ptr[w + 1]].tolist(), vc[ptr[w] + 1:ptr[w + 1]].tolist(), strict=True))
        graph.add_edges_from(zip(chans, chans[1:], strict=False))
    return graph


@pytest.mark.parametrize("spec", ["ring:6", "ring:7", "torus:4x4", "torus:6x3", "torus:4x2x4"])
def test_ring_classes_are_deadlock_free_under_every_tie_outcome(spec):
    t = tc.build(spec)
    src, dst = all_pairs(t.num_nodes)
    ring, single = nx.DiGraph(), nx.DiGraph()
    for bit in (-1, 0):       # every tie +, every tie -: the union holds every coin outcome's dependencies
        coins = np.full(len(src), bit, dtype=np.int64)
        ptr, _, arc, vc = ur.dor_routes(t, src, dst, coins=coins, ring_class=True)
        assert vc.max() <= 1
        dependencies(ring, ptr, arc, vc)
        dependencies(single, ptr, arc, np.zeros_like(vc))
    assert nx.is_directed_acyclic_graph(ring)
    assert not nx.is_directed_acyclic_graph(single)          # one VC closes the ring


def test_ring_class_is_fixed_per_ring_by_the_coordinates():
    t = tc.build("torus:5x6")
    lat = ur.lattice(t)
    src, dst = all_pairs(t.num_nodes)
    routes = ur.route(t, "dor", src, dst, np.random.default_rng(2), "ring", "random")
    assert routes.scheme == "ring" and routes.need == 2
    for w in range(len(src)):
        for q in range(routes.ptr[w] + 1, routes.ptr[w + 1]):
            dim = int(t.arc_labels[routes.arc[q]]) // 2
            k, s = int(lat.dims[dim]), int(lat.strides[dim])
            assert routes.vc[q] == int((dst[w] // s) % k < (src[w] // s) % k)


def test_random_ties_split_both_ways_and_keep_routes_shortest():
    t = tc.build("torus:4x4")
    src, dst = all_pairs(t.num_nodes)
    src, dst = np.repeat(src, 40), np.repeat(dst, 40)
    routes = ur.route(t, "dor", src, dst, np.random.default_rng(5), "auto", "random")
    ring = lambda a, b: min((b - a) % 4, (a - b) % 4)  # noqa: E731
    hops = np.array([ring(a // 4, b // 4) + ring(a % 4, b % 4) for a, b in zip(src, dst, strict=True)])
    assert np.array_equal(np.diff(routes.ptr) - 1, hops)
    first = routes.arc[routes.ptr[:-1] + 1]
    tie = (dst % 4 - src % 4) % 4 == 2                       # the last coordinate is corrected first
    plus = (t.arc_labels[first[tie]] % 2) == 0
    assert 0.45 < plus.mean() < 0.55
    again = ur.route(t, "dor", src, dst, np.random.default_rng(5), "auto", "random")
    assert np.array_equal(again.arc, routes.arc)


@pytest.mark.parametrize(("spec", "traffic"), [("torus:4x6", "uniform"), ("torus:4x4", "transpose"),
                                                 ("ring:8", "uniform")])
def test_channel_loads_with_random_ties_average_every_coin_combination(spec, traffic):
    t = tc.build(spec)
    d = len(ur.lattice(t).dims)
    n = t.num_nodes
    if traffic == "uniform":
        src, dst = all_pairs(n)
        weight = np.full(len(src), 1.0 / (n - 1))
    else:
        side = 4
        src = np.arange(n, dtype=np.int64)
        dst = (src % side) * side + src // side
        keep = src != dst
        src, dst, weight = src[keep], dst[keep], np.ones(int(keep.sum()))
    expect = np.zeros(t.num_arcs)
    combos = list(itertools.product((0, 1), repeat=d))
    for bits in combos:
        coins = np.full(len(src), sum(b << j for j, b in enumerate(bits)), dtype=np.int64)
        ptr, _, arc, _ = ur.dor_routes(t, src, dst, coins=coins)
        on = arc >= 0
        expect += np.bincount(arc[on], weights=np.repeat(weight, np.diff(ptr))[on], minlength=t.num_arcs)
    expect /= len(combos)
    perm = None if traffic == "uniform" else (np.arange(n) % 4) * 4 + np.arange(n) // 4
    got = channel_loads(t, "dor", traffic, permutation=perm, ties="random")
    assert np.allclose(got, expect)


def test_booksim_like_torus_run_is_verified_and_under_its_bound():
    r = tc.run("torus:6x6", "unicast", routing="dor", ties="random", vc_scheme="ring", load=1.0, cycles=3000,
               buffer_depth=4, seed=1)
    assert r.verified or r.metrics["unfinished_messages"] > 0
    assert r.metrics["deadlocked_worms"] == 0
    assert r.metrics["accepted_load"] <= r.metrics["throughput_bound"] + 1e-9


@pytest.mark.parametrize(("spec", "routing"), [("mesh:4x4", "dor"), ("complete:5", "minimal"),
                                               ("torus:4x4", "minimal")])
def test_ring_classes_need_dimension_order_on_a_torus(spec, routing):
    with pytest.raises(tc.TopocastError, match="'vc_scheme' ring"):
        tc.run(spec, "unicast", routing=routing, vc_scheme="ring", load=0.01, cycles=500)
