"""Butterfly-Butterfly and its right Latin square (Izzi and Massini 2020; thesis 3.2.4.2)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms.butterfly_rls import (
    destination_tag_states,
    intermediate,
    involution,
    rls_plan,
    rls_routes,
    rls_states,
    rotation,
)
from topocast.errors import TopocastError
from topocast.experiments.traces import check_rls
from topocast.plans.circuit import shift_route
from topocast.sim.circuit import trace, trace_many
from topocast.topology.butterfly_butterfly import butterfly_butterfly_network, butterfly_digit
from topocast.topology.stages import path_counts
from topocast.verify.delivery import is_latin_square

dary = st.tuples(st.integers(1, 4), st.integers(2, 4)).filter(lambda t: t[1] ** t[0] <= 256)


@settings(max_examples=25, deadline=None)
@given(dary)
def test_structure_and_paths(nd):
    n, d = nd
    net = butterfly_butterfly_network(n, d)
    assert net.num_stages == 2 * n - 1 and list(net.switches) == [d ** (n - 1)] * (2 * n - 1)
    assert np.all(path_counts(net) == d ** (n - 1))
    straight = np.concatenate([shift_route(d, d, np.zeros(int(s))).ravel() for s in net.switches])
    t = trace(net, straight)
    assert sorted(t.perm.tolist()) == list(range(d ** n)) and t.conflicts == 0
    topo = tc.build(f"butterfly-butterfly:n={n},d={d}")
    assert topo.num_nodes == 2 * d ** n + (2 * n - 1) * d ** (n - 1)
    assert topo.num_edges == d ** n * 2 * n and topo.meta["middle_stage"] == n - 1


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_each_butterfly_is_destination_tag_routed(n):
    """Within a butterfly, stage t's output port is bit n-1-t of the position leaving it (XOR states)."""
    net = butterfly_butterfly_network(n, 2)
    rng = np.random.default_rng(n)
    for _ in range(20):
        states = rng.integers(0, 2, (2 * n - 1, 2 ** (n - 1)))
        route = np.concatenate([shift_route(2, 2, s).ravel() for s in states])
        perm = trace(net, route).perm
        # re-derive every output bit from the ports taken: an input's port at each stage
        for i in range(2 ** n):
            g, bits = int(net.net_in[i]), {}
            for s in range(net.num_stages):
                sw, port = divmod(g - int(net.in_off[s]), 2)
                out = port ^ int(states[s, sw])
                bits[s] = out
                if s < net.num_stages - 1:
                    g = int(net.next_in[net.out_off[s] + 2 * sw + out])
            for s in range(n, 2 * n - 1):  # the second butterfly sets the final digits
                assert (perm[i] >> butterfly_digit(s, n)) & 1 == bits[s]
            assert (perm[i] >> (n - 1)) & 1 == bits[n - 1]  # the shared stage, first of the second butterfly


@pytest.mark.parametrize("n", range(2, 13))
def test_pi_is_an_involution(n):
    lines = 2 ** n
    pi = involution(lines)
    x = np.arange(lines)
    assert np.array_equal(pi[pi], x) and sorted(pi.tolist()) == x.tolist()
    assert np.all(pi[x % 2 == 0] < lines // 2) and np.all(pi[x % 2 == 1] >= lines // 2)


def test_pi_matches_the_thesis_quarters():
    assert involution(8).tolist() == [0, 6, 2, 4, 3, 5, 1, 7]
    pi, lines = involution(16), 16
    assert pi[[0, 2, 4, 6]].tolist() == [0, 2, 4, 6]                     # even, first half: in place
    # N-2, N-4, .., N/2
    assert [int(np.flatnonzero(pi == o)[0]) for o in (1, 3, 5, 7)] == [14, 12, 10, 8] == list(range(lines - 2, 7, -2))
    # N/2-1, .., 1
    positions = [int(np.flatnonzero(pi == o)[0]) for o in (8, 10, 12, 14)]
    assert positions == [7, 5, 3, 1] == list(range(lines // 2 - 1, 0, -2))
    assert pi[[9, 11, 13, 15]].tolist() == [9, 11, 13, 15]


@pytest.mark.parametrize("n", range(2, 9))
def test_every_rotation_routed_without_conflict(n):
    plan = rls_plan(n)
    lines = 2 ** n
    check = check_rls(plan)
    assert check.ok and check.conflicts == 0 and check.dropped == 0 and check.wrong_rows == 0
    assert np.array_equal(check.perms, rotation(lines, np.arange(lines)))
    assert is_latin_square(check.perms) and check.first_stage_straight
    perms, conflicts, dropped = trace_many(plan.network, rls_routes(plan, np.arange(lines)))
    assert not conflicts.any() and not dropped.any()
    for k in range(lines) if n <= 4 else (0, 1, lines // 2, lines - 1):
        t = trace(plan.network, rls_routes(plan, [k])[0])
        assert t.link_use.max() == 1 and np.array_equal(t.perm, (np.arange(lines) - k) % lines)


@pytest.mark.parametrize("n", [2, 3, 4, 6, 8])
def test_thesis_rules(n):
    """Identity = pi twice; first rotation = pi(N/2 - i) then stage log N complemented; direction i -> i - 1."""
    plan = rls_plan(n)
    lines, i = 2 ** n, np.arange(2 ** n)
    assert np.array_equal(intermediate(lines, [0])[0], plan.pi)
    assert np.array_equal(intermediate(lines, [1])[0], plan.pi[(lines // 2 - i) % lines])
    states = rls_states(plan, np.arange(lines))
    assert np.all(states[0::2, n:] == plan.second_even) and np.all(states[1::2, n:] == plan.second_odd)
    assert np.all(states[1::2, n] == 1 - states[0::2, n]) and np.all(states[1::2, n + 1:] == states[0::2, n + 1:])
    # the first butterfly alone realises the intermediate permutation (no two circuits disagree on a switch)
    start = np.broadcast_to(i, (lines, lines))
    targets = intermediate(lines, np.arange(lines))
    _, reached = destination_tag_states(plan.network, 0, n, start, targets)
    assert np.array_equal(reached, targets)
    # the thesis's first rotation moves every message one place down, not up
    perm = trace(plan.network, rls_routes(plan, [1])[0]).perm
    assert np.array_equal(perm, (i - 1) % lines) and not np.array_equal(perm, (i + 1) % lines)
    # without the complemented stage the same first half is not a rotation
    wrong = rls_states(plan, [1])
    wrong[0, n:] = plan.second_even
    route = np.stack([wrong[0], wrong[0] ^ 1], axis=-1).reshape(-1)
    perm = trace(plan.network, route).perm
    assert not any(np.array_equal(perm, (i - k) % lines) for k in range(lines))


def test_registered_run_and_cli_params():
    r = tc.run("butterfly-butterfly:n=5", "rls", message_bytes=2048.0)
    assert r.verified and r.engine == "circuit" and r.collective == "alltoall"
    m = r.metrics
    # 2^5 rotations, one pass each; time: 2^5 - 1 non-identity rotations x (setup + startup + 2048 bytes)
    assert (m["permutations"], m["latin_square"], m["conflicts"], m["passes"]) == (32, True, 0, 1)
    assert m["permutations"] == 2 ** 5
    assert m["time"] == pytest.approx(31 * (1e-6 + 1e-6 + 2048 * 1e-10))
    assert tc.run("double-butterfly:3", "right-latin-square").verified


@pytest.mark.parametrize("spec, algo, match", [
    ("butterfly-butterfly:n=0", None, "'n' must be >= 1"),
    ("butterfly-butterfly:n=3,d=1", None, "'d' must be >= 2"),
    ("butterfly-butterfly:n=3,x=1", None, "unknown parameter 'x'"),
    ("butterfly-butterfly:n=2,d=3", "rls", "'d' must be 2"),
    ("butterfly-butterfly:n=1", "rls", "power of two >= 4"),
    ("butterfly:n=3", "rls", "runs on butterfly-butterfly"),
])
def test_bad_input(spec, algo, match):
    with pytest.raises(TopocastError, match=match):
        tc.run(spec, algo) if algo else tc.build(spec)


def test_bad_involution_size():
    with pytest.raises(TopocastError, match=r"power of two >= 4 .*got N=12"):
        involution(12)


def test_not_the_benes_network():
    """Same stage count and path count as Benes, but the second half is not mirrored: another graph."""
    import networkx as nx

    assert nx.is_isomorphic(tc.build("butterfly-butterfly:2").to_networkx(), tc.build("benes:2").to_networkx())
    assert not nx.is_isomorphic(tc.build("butterfly-butterfly:3").to_networkx(), tc.build("benes:3").to_networkx())
