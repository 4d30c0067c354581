"""Unicast traffic patterns against their definitions (docs/unicast.md), with hypothesis for the draws."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms import unicast_traffic as ut


def bits(i: int, b: int) -> str:
    return format(i, f"0{b}b") if b else ""


@pytest.mark.parametrize("n", [1, 4, 9, 16, 25, 36, 64, 100, 256])
def test_transpose_of_a_square_swaps_row_and_column(n):
    m = math.isqrt(n)
    perm = ut.transpose_permutation(n)
    expect = [c * m + r for r in range(m) for c in range(m)]  # node (r, c) = r*m + c goes to (c, r)
    assert perm.tolist() == expect
    assert sorted(perm.tolist()) == list(range(n))


@pytest.mark.parametrize("b", [1, 3, 5, 7, 9])
def test_transpose_of_an_odd_power_of_two_is_the_matrix_transpose(b):
    n = 1 << b
    perm = ut.transpose_permutation(n)
    high = (b + 1) // 2  # rows are the high ceil(b/2) bits
    rows, cols = 1 << high, 1 << (b - high)
    for i in range(n):
        r, c = divmod(i, cols)
        assert perm[i] == c * rows + r
        assert bits(int(perm[i]), b) == bits(i, b)[high:] + bits(i, b)[:high]  # rotated left by ceil(b/2)
    assert sorted(perm.tolist()) == list(range(n))


@pytest.mark.parametrize("b", range(0, 11))
def test_bit_reverse_reads_the_index_backwards(b):
    n = 1 << b
    perm = ut.bit_reverse_permutation(n)
    assert perm.tolist() == [int(bits(i, b)[::-1] or "0", 2) for i in range(n)]
    assert sorted(perm.tolist()) == list(range(n))


@pytest.mark.parametrize(("pattern", "n"), [("transpose", 6), ("transpose", 12), ("transpose", 24),
                                            ("bit-reverse", 6), ("bit-reverse", 9), ("bit-reverse", 12)])
def test_patterns_refuse_node_counts_they_do_not_fit(pattern, n):
    with pytest.raises(tc.TopocastError, match="parameter 'traffic'") as err:
        ut.pattern_permutation(pattern, n, np.random.default_rng(0))
    assert "\n" not in str(err.value)


@given(st.integers(2, 200), st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_random_permutation_is_a_derangement(n, seed):
    perm = ut.random_derangement(n, np.random.default_rng(seed))
    assert sorted(perm.tolist()) == list(range(n))
    assert not np.any(perm == np.arange(n))


def test_random_derangement_is_uniform_among_derangements():
    """n = 4 has 9 derangements: each drawn with frequency 1/9 within 5 binomial sigmas."""
    draws = 4500
    counts: dict[tuple, int] = {}
    rng = np.random.default_rng(11)
    for _ in range(draws):
        key = tuple(ut.random_derangement(4, rng).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 9
    sigma = math.sqrt(draws * (1 / 9) * (8 / 9))
    assert all(abs(c - draws / 9) < 5 * sigma for c in counts.values())


def _sources(n, count, seed):
    return np.random.default_rng(seed).integers(0, n, size=count)


@given(st.integers(2, 500), st.integers(0, 300), st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_uniform_is_never_the_source_and_in_range(n, count, seed):
    src = _sources(n, count, seed)
    dst = ut.uniform_destinations(n, src, np.random.default_rng(seed + 1))
    assert len(dst) == count
    assert np.all((dst >= 0) & (dst < n)) and not np.any(dst == src)


def test_uniform_is_uniform_over_the_other_nodes():
    n, draws = 7, 21000
    src = np.full(draws, 3)
    dst = ut.uniform_destinations(n, src, np.random.default_rng(5))
    counts = np.bincount(dst, minlength=n)
    assert counts[3] == 0
    p = 1 / (n - 1)
    sigma = math.sqrt(draws * p * (1 - p))
    assert np.all(np.abs(np.delete(counts, 3) - draws * p) < 5 * sigma)


SPECS = ["ring:2", "ring:7", "mesh:3x4", "torus:2x3", "hypercube:4", "ccc:3", "dragonfly:g=4,a=3",
         "butterfly:n=3,d=2", "complete:6", "path:2"]


@given(st.sampled_from(SPECS), st.integers(0, 200), st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_nearest_neighbour_draws_a_neighbour(spec, count, seed):
    t = tc.build(spec)
    src = _sources(t.num_nodes, count, seed)
    dst = ut.draw("nearest-neighbour", t, src, np.random.default_rng(seed))
    g = t.to_networkx()
    assert all(g.has_edge(int(u), int(v)) for u, v in zip(src, dst, strict=True))


def test_nearest_neighbour_is_uniform_over_distinct_neighbours():
    t = tc.build("torus:2x5")  # node 0's distinct neighbours: 5 (a double link), 1 and 4
    g = nx.Graph(t.to_networkx())
    nbrs = sorted(g.neighbors(0))
    draws = 9000
    dst = ut.draw("nearest-neighbour", t, np.zeros(draws, dtype=np.int64), np.random.default_rng(2))
    counts = np.bincount(dst, minlength=t.num_nodes)
    assert sorted(np.flatnonzero(counts).tolist()) == nbrs
    p = 1 / len(nbrs)
    sigma = math.sqrt(draws * p * (1 - p))
    assert all(abs(counts[v] - draws * p) < 5 * sigma for v in nbrs)


@given(st.integers(3, 300), st.floats(0, 1), st.integers(1, 4), st.integers(0, 2**32))
@settings(max_examples=60, deadline=None)
def test_hot_spot_never_sends_to_the_source(n, fraction, hots, seed):
    hot = np.unique(np.random.default_rng(seed).integers(0, n, size=hots))
    src = _sources(n, 200, seed + 1)
    t = tc.build(f"complete:{n}") if n <= 60 else tc.build(f"ring:{n}")
    dst = ut.draw("hot-spot", t, src, np.random.default_rng(seed), hot_fraction=fraction, hot=hot)
    assert np.all((dst >= 0) & (dst < n)) and not np.any(dst == src)
    if fraction == 1.0:  # every source but a lone hot node sends to a hot node
        lone = len(hot) == 1
        sends_hot = ~(lone & (src == hot[0]))
        assert np.all(np.isin(dst[sends_hot], hot))


@pytest.mark.parametrize(("hot_text", "fraction"), [("0", 0.1), ("3,17,40", 0.25), ("5", 0.6)])
def test_hot_spot_fraction_within_binomial_tolerance(hot_text, fraction):
    """From a cold source, P(destination hot) = f + (1 - f) |H| / (N - 1); from a hot one, to another hot node
    f + (1 - f) (|H| - 1) / (N - 1)."""
    n, draws = 64, 40000
    t = tc.build(f"torus:{n // 8}x8")
    hot = ut.parse_hot_nodes(hot_text, n)
    for src_node in (int(np.setdiff1d(np.arange(n), hot)[0]), int(hot[0])):
        src = np.full(draws, src_node)
        dst = ut.draw("hot-spot", t, src, np.random.default_rng(9), hot_fraction=fraction, hot=hot)
        others = len(hot) - (src_node in hot)
        p = (fraction if others else 0.0) + ((1 - fraction) if others else 1.0) * others / (n - 1)
        got = np.count_nonzero(np.isin(dst, hot))
        sigma = math.sqrt(draws * p * (1 - p)) or 1.0
        assert abs(got - draws * p) < 5 * sigma, (src_node, got, draws * p)
        assert not np.any(dst == src_node)


def test_hot_nodes_and_fraction_errors_name_the_parameter():
    for text in ("x", "1,,2", "64", "-1", "3,3"):
        with pytest.raises(tc.TopocastError, match="hot_nodes"):
            ut.parse_hot_nodes(text, 64)
    for value in (-0.1, 1.5):
        with pytest.raises(tc.TopocastError, match="hot_fraction"):
            ut.check_hot_fraction(value)


@pytest.mark.parametrize("spec", ["ring:6", "mesh:4x4", "hypercube:3", "dragonfly:g=3,a=2", "ccc:3"])
def test_pattern_law_sums_to_one_per_sending_node(spec):
    t = tc.build(spec)
    n = t.num_nodes
    rng = np.random.default_rng(0)
    for pattern in ut.PATTERNS:
        try:
            perm = ut.pattern_permutation(pattern, n, rng)
            src, dst, w, dense = ut.pattern_law(pattern, t, permutation=perm, hot_fraction=0.3,
                                                hot=np.array([0, 2]))
        except tc.TopocastError:
            continue
        assert not np.any(src == dst)
        total = np.bincount(src, weights=w, minlength=n) + dense * (n - 1)
        idle = (perm == np.arange(n)) if perm is not None else np.zeros(n, bool)
        assert np.allclose(total[~idle], 1.0) and np.allclose(total[idle], 0.0)


def test_draws_are_deterministic_per_seed():
    t = tc.build("mesh:8x8")
    src = _sources(64, 500, 1)
    for pattern in (p for p in ut.PATTERNS if p not in ut.GROUP_PATTERNS):
        a, b, c = (ut.draw(pattern, t, src, np.random.default_rng(s), permutation=ut.pattern_permutation(
            pattern, 64, np.random.default_rng(s)), hot=np.array([9])) for s in (4, 4, 5))
        assert np.array_equal(a, b)
        if pattern not in ("transpose", "bit-reverse"):
            assert not np.array_equal(a, c)
