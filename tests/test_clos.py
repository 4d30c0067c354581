"""Clos networks: non-blocking conditions, routing by edge colouring, the blocking example."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms.clos_routing import blocking_example, edge_colouring, greedy_route, route_permutation
from topocast.errors import TopocastError
from topocast.sim.circuit import trace
from topocast.topology.multistage import clos_network, clos_properties


@settings(deadline=None)
@given(st.integers(1, 8), st.integers(1, 16), st.integers(1, 8))
def test_nonblocking_conditions(n, m, r):
    props = clos_properties(n, m, r)
    assert props["strictly_nonblocking"] == (m >= 2 * n - 1 or (r == 1 and m >= n))
    assert props["rearrangeable"] == (m >= n)
    t = tc.build(f"clos:n={n},m={m},r={r}")
    assert t.meta["switches_per_stage"] == [r, m, r]
    assert t.meta["switch_sizes"] == [f"{n}x{m}", f"{r}x{r}", f"{m}x{n}"]


def brute_force_nonblocking(n, m, r):
    """(strict, rearrangeable) of C(n, m, r) by enumerating every state of circuits.

    A state gives each input nothing or (output, middle switch) with no link
    between an outer switch and a middle switch used twice.  Strict: in every
    state every idle input reaches every idle output on some middle switch
    free at both ends.  Rearrangeable: every full permutation has a state.
    """
    terminals = n * r
    busy_in = [[False] * m for _ in range(r)]
    busy_out = [[False] * m for _ in range(r)]
    used_out = [False] * terminals
    strict, full = True, set()
    chosen = []

    def visit(i):
        nonlocal strict
        if i == terminals:
            idle_in = [a for a in range(terminals) if chosen[a] is None]
            idle_out = [o for o in range(terminals) if not used_out[o]]
            for a in idle_in:
                for o in idle_out:
                    if not any(not busy_in[a // n][b] and not busy_out[o // n][b] for b in range(m)):
                        strict = False
            if not idle_in:
                full.add(tuple(c[0] for c in chosen))
            return
        chosen.append(None)
        visit(i + 1)
        chosen.pop()
        for o in range(terminals):
            if used_out[o]:
                continue
            for b in range(m):
                if busy_in[i // n][b] or busy_out[o // n][b]:
                    continue
                busy_in[i // n][b] = busy_out[o // n][b] = used_out[o] = True
                chosen.append((o, b))
                visit(i + 1)
                chosen.pop()
                busy_in[i // n][b] = busy_out[o // n][b] = used_out[o] = False

    visit(0)
    return strict, len(full) == math.factorial(terminals)


@pytest.mark.parametrize("n, m, r", [(1, 1, 3), (2, 1, 2), (2, 2, 2), (2, 3, 2), (2, 1, 1), (2, 2, 1),
                                     (3, 2, 1), (3, 3, 1), (3, 4, 1), (1, 2, 2), (3, 3, 2)])
def test_nonblocking_conditions_brute_force(n, m, r):
    strict, rearrangeable = brute_force_nonblocking(n, m, r)
    props = clos_properties(n, m, r)
    assert (props["strictly_nonblocking"], props["rearrangeable"]) == (strict, rearrangeable)
    assert tc.build(f"clos:n={n},m={m},r={r}").meta["strictly_nonblocking"] == strict


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(0, 3), st.integers(1, 6), st.integers(0, 2 ** 20), st.booleans())
def test_route_any_permutation(n, extra, r, seed, partial):
    m = n + extra
    net = clos_network(n, m, r)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n * r)
    if partial:
        perm[rng.random(n * r) < 0.4] = -1
    t = trace(net, route_permutation(net, perm))
    assert np.array_equal(t.perm, perm) and t.conflicts == 0 and t.dropped == 0


@settings(max_examples=20, deadline=None)
@given(st.sampled_from([(2, 2, 4, 2, 2), (2, 3, 6, 3, 3), (3, 3, 4, 2, 2), (2, 2, 8, 4, 4), (3, 4, 6, 3, 4)]),
       st.integers(0, 2 ** 20))
def test_route_five_stage(params, seed):
    net = clos_network(*params)
    assert net.num_stages == 5
    perm = np.random.default_rng(seed).permutation(net.num_inputs)
    t = trace(net, route_permutation(net, perm))
    assert np.array_equal(t.perm, perm) and t.conflicts == 0


def test_benes8_is_five_stage_clos():
    net = clos_network(2, 2, 4, 2)
    assert list(net.switches) == [4, 4, 4, 4, 4] and list(net.ins) == [2] * 5


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=60), st.integers(1, 4))
def test_edge_colouring_is_proper(edges, slack):
    left = np.array([e[0] for e in edges])
    right = np.array([e[1] for e in edges])
    delta = max(np.bincount(left).max(), np.bincount(right).max())
    colour = edge_colouring(left, right, int(delta) + slack - 1)
    assert colour.min() >= 0 and colour.max() < delta + slack - 1
    for ends in (left, right):
        pairs = set()
        for v, c in zip(ends, colour, strict=False):
            assert (v, c) not in pairs
            pairs.add((v, c))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2 ** 20))
def test_strict_network_never_blocks_greedy(n, r, seed):
    m = 2 * n - 1
    rng = np.random.default_rng(seed)
    perm = rng.permutation(n * r)
    order = rng.permutation(n * r)
    outcome = greedy_route(n, m, r, order, perm[order])
    assert outcome.blocked == 0


@pytest.mark.parametrize("n, m, r", [(2, 2, 2), (2, 1, 3), (3, 4, 3), (3, 3, 4), (4, 6, 4), (5, 8, 2)])
def test_blocking_example(n, m, r):
    ex = blocking_example(n, m, r)
    assert ex.new_blocked
    if m >= n:
        net = clos_network(n, m, r)
        perm = np.full(n * r, -1)
        perm[ex.src] = ex.dst
        t = trace(net, route_permutation(net, perm))
        assert np.array_equal(t.perm, perm) and t.conflicts == 0


def test_errors():
    with pytest.raises(TopocastError, match="strictly non-blocking"):
        blocking_example(2, 3, 4)
    with pytest.raises(TopocastError, match="'m' must be >= n"):
        route_permutation(clos_network(3, 2, 4), np.arange(12))
    with pytest.raises(TopocastError, match="'n2' must divide r"):
        tc.build("clos:n=2,m=2,r=5,n2=2")


def test_algorithm_registered():
    r = tc.run("clos:n=3,m=3,r=4", "clos-route", permutations=5, seed=1)
    assert r.verified and r.collective == "permutation" and r.metrics["rearrangeable"]
    assert r.metrics["permutations"] == 5 and r.metrics["rows_match_plan"] and r.metrics["receipts"] == 5 * 12
    r = tc.run("clos:n=2,m=2,r=4,n2=2", "clos-route", permutations=3)
    assert r.verified
