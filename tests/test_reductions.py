"""Reductions: every plan delivers every node's contribution exactly once, and every planted fault is caught.

The oracle is a plain simulator written here: each (node, block) holds a multiset (``collections.Counter``)
of contributors; a transfer's sender partial is read in step order and added to (or put in place of) the
receiver's.  The verifier's exact bit sets and its fingerprints must agree with it on every plan, and name a
violation on every planted fault.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms import reductions as R
from topocast.verify_reduction import verify_reduction

PLANS = [
    ("ring:6", R.ring_allreduce, {}), ("ring:5", R.ring_reduce_scatter, {"chunks": 3}),
    ("torus:4x4", R.ring_allreduce, {}), ("torus:3x5", R.ring_allreduce, {}), ("mesh:4x3", R.ring_allreduce, {}),
    ("hypercube:4", R.ring_allreduce, {"chunks": 2}), ("complete:7", R.ring_allreduce, {}),
    ("hypercube:4", R.halving_doubling_allreduce, {}), ("complete:7", R.halving_doubling_allreduce, {}),
    ("complete:12", R.halving_doubling_allreduce, {"chunks": 2}), ("hypercube:3", R.halving_reduce_scatter, {}),
    ("torus:4x3x2", R.torus_allreduce, {}), ("torus:3x5", R.torus_reduce_scatter, {"chunks": 2}),
    ("hypercube:4", R.binomial_allreduce, {}), ("hypercube:3", R.binomial_reduce, {}),
    ("complete:8", R.double_binary_tree_allreduce, {"chunks": 4}), ("complete:7", R.double_binary_tree_allreduce, {}),
    ("torus:4x4", R.bfs_tree_allreduce, {"chunks": 3}), ("mesh:3x5", R.bfs_tree_reduce, {"root": 7}),
    ("hdn:base=K2,k=2,s=2/1", R.bfs_tree_allreduce, {"chunks": 2}),
    ("galaxyfly:n=3,q=3,a=2", R.bfs_tree_allreduce, {}),
    # relayed: no Hamiltonian cycle known, partners not linked
    ("galaxyfly:n=3,q=5,a=4", R.ring_allreduce, {}), ("mesh:3x5", R.ring_reduce_scatter, {}),
    ("torus:6x6", R.halving_doubling_allreduce, {}), ("ej:a=1,b=2,n=2", R.halving_doubling_allreduce, {"chunks": 2}),
    ("galaxyfly:n=3,q=5,a=4", R.hierarchical_allreduce, {}), ("dragonfly:g=5,a=4", R.hierarchical_allreduce, {}),
]


def oracle(schedule) -> tuple[list[list[Counter]], int]:
    """Final multiset of every (node, block) and the receipts, by the rules of the reduction schedule: in each
    step every transfer reads (its sender's partial, or the payload its relay hop brought) before any lands."""
    n, m = schedule.num_nodes, schedule.num_messages
    state = [[Counter({v: 1}) for _ in range(m)] for v in range(n)]
    relay = schedule.relay_hops
    forward = schedule.forward if schedule.forward is not None else np.full(schedule.num_transfers, -1)
    payload: dict[int, list] = {}
    receipts = 0
    for step in range(schedule.num_steps):
        moving = []
        for t in np.flatnonzero(schedule.step == step).tolist():
            blocks = schedule.messages_of(t)
            data = payload.pop(int(forward[t])) if forward[t] >= 0 else \
                [Counter(state[schedule.src[t]][b]) for b in blocks]
            moving.append((t, list(zip(blocks.tolist(), data, strict=True))))
        for t, parts in moving:
            if relay[t]:
                payload[t] = [part for _, part in parts]
                continue
            for b, part in parts:
                receipts += 1
                v = schedule.dst[t]
                state[v][b] = state[v][b] + part if schedule.combine[t] else part
    return state, receipts


def required(schedule):
    n, m = schedule.num_nodes, schedule.num_messages
    if isinstance(schedule.targets, str):
        return [(v, b) for b in range(m) for v in range(n)]
    return [(int(schedule.targets[b]), b) for b in range(m)]


def hops_are_links(topology, schedule) -> bool:
    links = set(zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=True))
    return all((int(u), int(v)) in links for u, v in zip(schedule.src, schedule.dst, strict=True))


@pytest.mark.parametrize("spec, plan, kwargs", PLANS, ids=[f"{p.__name__}-{s}" for s, p, _ in PLANS])
def test_every_plan_is_verified_exactly_once_against_the_oracle(spec, plan, kwargs):
    topology = tc.build(spec)
    schedule = plan(topology, **kwargs)
    assert hops_are_links(topology, schedule)
    state, receipts = oracle(schedule)
    full = Counter(range(topology.num_nodes))
    assert all(state[v][b] == full for v, b in required(schedule))
    for method in ("exact", "fingerprint"):
        check = verify_reduction(schedule, method=method)
        assert check.complete and check.first_violation is None and check.missing_deliveries == 0, check
        assert check.receipts == receipts and check.redundant_receipts == 0


def _with(schedule, keep=None, extra=None):
    """The schedule with only the transfers ``keep`` (a mask) plus copies of the transfers ``extra``."""
    t = np.arange(schedule.num_transfers)
    ids = np.concatenate([t[keep] if keep is not None else t, np.asarray(extra or [], dtype=np.int64)])
    ptr = schedule.range_ptr
    starts, ends = ptr[ids], ptr[ids + 1]
    ranges = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])
    new_ptr = np.concatenate([[0], np.cumsum(ends - starts)])
    return replace(schedule, src=schedule.src[ids], dst=schedule.dst[ids], step=schedule.step[ids],
                   range_ptr=new_ptr, range_first=schedule.range_first[ranges],
                   range_count=schedule.range_count[ranges], combine=schedule.combine[ids])


def test_a_contribution_counted_twice_is_named_at_its_receipt():
    s = R.ring_allreduce(tc.build("ring:6"))
    first_combine = int(np.flatnonzero(s.combine)[0])
    twice = _with(s, extra=[first_combine])                  # the same partial added a second time
    exact = verify_reduction(twice, method="exact")
    assert not exact.complete or exact.first_violation
    assert "counted twice" in exact.first_violation and f"transfer {twice.num_transfers - 1}" in exact.first_violation
    finger = verify_reduction(twice, method="fingerprint")
    assert finger.first_violation and "counts a contribution twice" in finger.first_violation


def test_a_missing_transfer_leaves_a_node_short():
    s = R.halving_doubling_allreduce(tc.build("hypercube:3"))
    keep = np.ones(s.num_transfers, dtype=bool)
    keep[3] = False
    for method in ("exact", "fingerprint"):
        check = verify_reduction(_with(s, keep=keep), method=method)
        assert not check.complete and check.missing_deliveries > 0 and check.first_violation


def test_data_moved_twice_is_a_redundant_receipt():
    s = R.ring_allreduce(tc.build("ring:5"))
    last_copy = int(np.flatnonzero(~s.combine)[-1])
    check = verify_reduction(_with(s, extra=[last_copy]), method="exact")
    assert check.complete and check.redundant_receipts == 1


def test_reading_before_the_data_arrives_is_named():
    """An engine timing in which a reduce-scatter transfer starts before its sender's earlier-step receipt."""
    s = R.ring_allreduce(tc.build("ring:4"))
    send, recv = s.step.astype(float), s.step.astype(float) + 0.5
    late = int(np.flatnonzero(s.step == 1)[0])
    send[late] = 0.25                                      # before step 0's receipts land at 0.5
    recv[late] = max(recv[late], send[late])
    check = verify_reduction(s, send, recv, method="exact")
    assert check.first_violation and "has not arrived yet" in check.first_violation
    assert f"transfer {late}" in check.first_violation


def test_a_relay_that_forwards_before_its_payload_arrives_is_named():
    s = R.ring_allreduce(tc.build("mesh:3x5"))
    hop = int(np.flatnonzero(s.forward >= 0)[0])
    send, recv = s.step.astype(float), s.step.astype(float) + 0.5
    send[hop] = recv[hop] = send[int(s.forward[hop])]        # leaves when its payload leaves the node before
    for method in ("exact", "fingerprint"):
        check = verify_reduction(s, send, recv, method=method)
        assert check.first_violation and "forwards block" in check.first_violation and "before the hop" in \
            check.first_violation


def test_relayed_hops_are_links_and_keep_the_logical_rounds():
    from topocast.algorithms.embedding import embed

    topology = tc.build("galaxyfly:n=3,q=5,a=4")
    s = R.halving_doubling_allreduce(topology)
    assert s.meta["relayed"] > 0 and s.meta["hops"] > s.meta["logical_transfers"]
    assert hops_are_links(topology, s)
    chains = s.forward[s.forward >= 0]
    assert np.all(s.step[np.flatnonzero(s.forward >= 0)] > s.step[chains])   # a hop after the one before it
    from topocast.algorithms.classic_allgather import grid_allgather

    with pytest.raises(tc.TopocastError, match="reduction with a step"):
        embed(topology, grid_allgather(tc.build("ring:4")))


def test_fingerprints_state_their_error_bound_and_exact_states_none():
    s = R.ring_allreduce(tc.build("ring:4"))
    assert verify_reduction(s, method="exact").error_bound == 0.0
    bound = verify_reduction(s, method="fingerprint").error_bound
    assert 0 < bound <= 16 * 2.0 ** -61
    assert "2^-61" in verify_reduction(s, method="fingerprint").promise or "mod 2^61-1" in \
        verify_reduction(s, method="fingerprint").promise


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(2, 6), min_size=1, max_size=3), st.booleans())
def test_grid_cycles_are_hamiltonian(sizes, wrap):
    family = "torus" if wrap else "mesh"
    if not wrap and all(k % 2 for k in sizes):
        return
    if wrap and any(k < 3 for k in sizes):
        sizes = [max(k, 3) for k in sizes]
    spec = f"{family}:{'x'.join(map(str, sizes))}"
    if len(sizes) == 1:
        spec = ("ring:" if wrap else "path:") + str(sizes[0])
        if not wrap:
            return
    topology = tc.build(spec)
    cycle = R.hamiltonian_cycle(topology)
    assert sorted(cycle.tolist()) == list(range(topology.num_nodes))
    graph = nx.Graph(topology.to_networkx())
    assert all(graph.has_edge(int(u), int(v)) for u, v in zip(cycle, np.roll(cycle, -1), strict=True))


def test_no_cycle_is_refused_in_one_line():
    for spec in ("mesh:3x5", "path:6"):
        with pytest.raises(tc.TopocastError, match="Hamiltonian cycle"):
            R.hamiltonian_cycle(tc.build(spec))
    with pytest.raises(tc.TopocastError, match="power-of-two"):
        R.halving_reduce_scatter(tc.build("complete:6"))
    with pytest.raises(tc.TopocastError, match="chunks"):
        R.ring_allreduce(tc.build("ring:8"), message_bytes=4, chunks=1)


def test_double_binary_trees_make_most_nodes_a_leaf_in_one_tree():
    for n in (8, 16, 15):
        one, two = R._inorder_tree(n, 0), R._inorder_tree(n, 1)
        interior = [set(p[p >= 0].tolist()) for p in (one, two)]
        assert len(interior[0] & interior[1]) <= 2
