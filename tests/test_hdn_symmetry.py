"""HDN automorphisms and orbits: the numpy path (small graphs) against the compiled one (large graphs)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.topology import hdn_kernels, hdn_symmetry, kernels
from topocast.topology.core import Topology
from topocast.topology.hdn_symmetry import (
    automorphism_generators,
    is_automorphism,
    iter_automorphism_generators,
    orbit_labels,
    symmetry_and_diameter,
)
from topocast.topology.metrics import SMALL_NODES, bfs_distances, eccentricity

SPECS = ["hdn:base=2x3x5,k=1,s=6", "hdn:base=K2,k=2,s=2/1", "hdn:base=K3xC4,k=2,s=3/4", "dualcube:4",
         "hdn:base=Q2,k=2,s=4/1", "hdn:base=2x3x5,k=2,s=15/30"]


def propagated_labels(n: int, generators: list[np.ndarray]) -> np.ndarray:
    """Orbit labels (smallest member) by plain fixed-point label propagation, with inverses."""
    label = np.arange(n)
    both_ways = [p for g in generators for p in (g, np.argsort(g))]
    while True:
        before = label.copy()
        for p in both_ways:
            label = np.minimum(label, label[p])
        if np.array_equal(before, label):
            return label


@pytest.mark.parametrize("spec", SPECS)
def test_compiled_check_and_union_find_agree_with_numpy(spec):
    t = tc.build(spec)
    gens = automorphism_generators(t.codec.layout)
    n = t.num_nodes
    rng = np.random.default_rng(1)
    bad = [rng.permutation(n), np.where(np.arange(n) == 0, 1, np.where(np.arange(n) == 1, 0, np.arange(n))),
           np.zeros(n, dtype=np.int64), np.arange(n)[::-1].copy()]
    for perm in gens + bad:
        assert hdn_kernels.is_automorphism(t.indptr, t.indices, np.asarray(perm, dtype=np.int64)) == \
            is_automorphism(t, perm)
    assert all(is_automorphism(t, g) for g in gens)
    assert not is_automorphism(t, np.zeros(n, dtype=np.int64))   # not a bijection
    assert not hdn_kernels.is_automorphism(t.indptr, t.indices, np.arange(n - 1))
    parent = np.arange(n, dtype=np.int64)
    joined = sum(hdn_kernels.join_orbits(parent, g) for g in gens)
    hdn_kernels.flatten_orbits(parent)
    expected = propagated_labels(n, gens)
    assert np.array_equal(parent, expected)
    assert np.array_equal(orbit_labels(t, gens), expected)
    assert n - joined == len(np.unique(expected))


def test_generators_have_no_repeats_and_no_identity():
    for spec in SPECS + ["hdn:base=2x3x5,k=2,s=6/15"]:
        t = tc.build(spec)
        gens = automorphism_generators(t.codec.layout)
        keys = {g.tobytes() for g in gens}
        assert len(keys) == len(gens)
        assert not any(np.array_equal(g, np.arange(t.num_nodes)) for g in gens)
        assert all(np.array_equal(a, b) for a, b in zip(gens, iter_automorphism_generators(t.codec.layout),
                                                        strict=True))


@pytest.mark.parametrize("spec", ["hdn:base=2x3x5,k=2,s=6/15", "hdn:base=2x3x5,k=2,s=10/6",
                                  "hdn:base=2x3x5,k=2,s=30/5", "hdn:base=K2,k=3,s=2/1/2"])
def test_large_path_matches_every_generator_used(spec):
    """The compiled path (skips generators that join nothing, stops at one orbit) gives the orbits of all of them."""
    t = tc.build(spec)
    gens = automorphism_generators(t.codec.layout)
    expected = propagated_labels(t.num_nodes, gens)
    assert np.array_equal(hdn_symmetry._checked_orbits(t), expected)
    labels = np.unique(expected)
    rng = np.random.default_rng(2)
    members = [rng.choice(np.flatnonzero(expected == label), 3) for label in labels]
    ecc = eccentricity(t, np.concatenate(members)).reshape(len(labels), 3)
    assert np.all(ecc == ecc[:, :1])   # eccentricity is constant on each orbit (a few members BFS'd)
    sym = symmetry_and_diameter(t)
    assert (sym["diameter"], sym["radius"], sym["orbits"]) == (ecc.max(), ecc.min(), len(labels))


def test_a_bad_generator_that_joins_orbits_is_refused(monkeypatch):
    t = tc.build("hdn:base=2x3x5,k=2,s=6/15")
    assert t.num_nodes > SMALL_NODES
    good = automorphism_generators(t.codec.layout)
    rng = np.random.default_rng(0)
    monkeypatch.setattr(hdn_symmetry, "iter_automorphism_generators",
                        lambda layout: iter([good[0], rng.permutation(t.num_nodes)]))
    with pytest.raises(RuntimeError, match="generator 1 is not an automorphism"):
        symmetry_and_diameter(t)
    small = tc.build("hdn:base=K2,k=2,s=2/1")
    monkeypatch.setattr(hdn_symmetry, "iter_automorphism_generators",
                        lambda layout: iter([rng.permutation(small.num_nodes)]))
    with pytest.raises(RuntimeError, match="generator 0 is not an automorphism"):
        symmetry_and_diameter(small)


@pytest.mark.parametrize("spec", ["hdn:base=2x3x5,k=2,s=6/15", "torus:5x7", "hypercube:7", "dualcube:4",
                                  "hdn:base=K3xC4,k=2,s=3/4"])
def test_bit_parallel_eccentricities_equal_one_bfs_per_source(spec):
    t = tc.build(spec)
    rng = np.random.default_rng(3)
    for k in (1, 5, 64, 70, 150):
        sources = rng.integers(0, t.num_nodes, k)
        sources[k // 2] = sources[0]  # a repeated source
        expected = np.array([bfs_distances(t, int(s)).max() for s in sources])
        assert np.array_equal(kernels.eccentricities(t.indptr, t.indices, sources), expected)


def test_bit_parallel_eccentricities_of_a_disconnected_graph():
    t = Topology.from_networkx(nx.disjoint_union(nx.path_graph(40), nx.cycle_graph(30)))
    ecc = kernels.eccentricities(t.indptr, t.indices, np.array([0, 39, 50, 20], dtype=np.int64))
    assert ecc.tolist() == [-1, -1, -1, -1]
    t = Topology.from_networkx(nx.star_graph(300))   # pushes from a hub of high degree
    ecc = kernels.eccentricities(t.indptr, t.indices, np.arange(0, 301, 3, dtype=np.int64))
    assert ecc.tolist() == [1] + [2] * 100


def test_distances_to_gathers_the_bfs_distances():
    t = tc.build("hdn:base=2x3x5,k=2,s=6/15")
    rng = np.random.default_rng(4)
    sources = rng.choice(t.num_nodes, 6, replace=False)
    targets = rng.integers(0, t.num_nodes, (6, 50))
    expected = np.stack([bfs_distances(t, int(s))[row] for s, row in zip(sources, targets, strict=True)])
    assert np.array_equal(kernels.distances_to(t.indptr, t.indices, sources, targets), expected)
    sources[3] = sources[1]   # a repeated source, a target that is its source
    targets[3, 7] = sources[3]
    expected[3] = bfs_distances(t, int(sources[3]))[targets[3]]
    assert expected[3, 7] == 0
    assert np.array_equal(kernels.distances_to(t.indptr, t.indices, sources, targets), expected)
    many = rng.integers(0, t.num_nodes, 150)   # three passes
    grid = rng.integers(0, t.num_nodes, (150, 4))
    assert np.array_equal(kernels.distances_to(t.indptr, t.indices, many, grid),
                          np.stack([bfs_distances(t, int(s))[row] for s, row in zip(many, grid, strict=True)]))
