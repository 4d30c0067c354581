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
from topocast.algorithms import in_network as I
from topocast.algorithms import reductions as R
from topocast.algorithms import swing as S
from topocast.verify.reduction import verify_reduction

PLANS = [
    ("ring:6", R.ring_allreduce, {}), ("ring:5", R.ring_reduce_scatter, {"chunks": 3}),
    ("torus:4x4", R.ring_allreduce, {}), ("torus:3x5", R.ring_allreduce, {}), ("mesh:4x3", R.ring_allreduce, {}),
    ("hypercube:4", R.ring_allreduce, {"chunks": 2}), ("complete:7", R.ring_allreduce, {}),
    ("hypercube:4", R.halving_doubling_allreduce, {}), ("complete:7", R.halving_doubling_allreduce, {}),
    ("complete:12", R.halving_doubling_allreduce, {"chunks": 2}), ("hypercube:3", R.halving_reduce_scatter, {}),
    ("complete:6", R.halving_reduce_scatter, {"chunks": 2}), ("ring:7", R.halving_reduce_scatter, {}),
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
    ("hdn:base=K2,k=2,s=2/1", R.hierarchical_allreduce, {"chunks": 2}),
    ("ring:8", S.swing_allreduce, {}), ("torus:4x8", S.swing_allreduce, {"chunks": 2}),
    ("torus:2x4x4", S.swing_reduce_scatter, {}), ("ring:6", S.swing_allreduce, {}),
    ("ring:5", S.swing_reduce_scatter, {"chunks": 2}), ("torus:10x6", S.swing_allreduce, {}),
    ("torus:3x5", S.swing_reduce_scatter, {}), ("torus:2x3x5", S.swing_allreduce, {}),
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
        assert check.first_violation and f"transfer {hop} " in check.first_violation and "before the hop" in \
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
    with pytest.raises(tc.TopocastError, match="chunks"):
        R.ring_allreduce(tc.build("ring:8"), message_bytes=4, chunks=1)


def test_double_binary_trees_make_most_nodes_a_leaf_in_one_tree():
    for n in (8, 16, 15):
        one, two = R._inorder_tree(n, 0), R._inorder_tree(n, 1)
        interior = [set(p[p >= 0].tolist()) for p in (one, two)]
        assert len(interior[0] & interior[1]) <= 2


# -- on the engines ---------------------------------------------------------------------------------------
REGISTERED = [
    ("torus:4x4", "allreduce-ring", {}), ("ring:7", "allreduce-ring", {"chunks": 2}),
    ("mesh:3x3", "allreduce-ring", {}), ("hypercube:4", "allreduce-halving-doubling", {}),
    ("complete:6", "allreduce-halving-doubling", {}), ("torus:4x4", "reduce-scatter-halving", {}),
    ("torus:3x4", "allreduce-torus", {"chunks": 2}), ("ring:5", "reduce-scatter-torus", {}),
    ("hypercube:3", "allreduce-binomial", {}), ("hypercube:3", "reduce-binomial", {}),
    ("complete:7", "allreduce-double-binary-tree", {"chunks": 4}), ("mesh:3x4", "reduce-bfs-tree", {"root": 5}),
    ("galaxyfly:n=3,q=3,a=2", "allreduce-bfs-tree", {"chunks": 2}), ("dragonfly:g=5,a=4", "allreduce-hierarchical", {}),
    ("ring:6", "reduce-scatter-ring", {"chunks": 2}), ("torus:4x4", "allreduce-swing", {}),
    ("torus:10x6", "allreduce-swing", {}), ("ring:7", "reduce-scatter-swing", {"chunks": 2}),
    ("complete:8", "allreduce-disjoint-trees", {"chunks": 12}), ("torus:4x4", "allreduce-disjoint-trees", {}),
]


@pytest.mark.parametrize("engine", ["step", "event"])
@pytest.mark.parametrize(("spec", "name", "params"), REGISTERED)
def test_registered_reductions_run_verified_and_never_beat_their_bound(spec, name, params, engine):
    run = tc.run(spec, name, engine=engine, message_bytes=4096.0, per_byte_reduce=2e-11, **params)
    assert run.verification.verified, run.verification.first_violation
    measured = run.metrics["steps"] if engine == "step" else run.metrics["time"]
    assert run.metrics["lower_bound"] <= measured * (1 + 1e-12)
    if name.startswith("allreduce"):
        assert run.metrics["nodes_complete"] == tc.build(spec).num_nodes


@pytest.mark.parametrize("n", [2, 5, 8, 13])
def test_ring_allreduce_on_a_ring_takes_the_textbook_time_to_the_last_digit(n):
    alpha, beta, gamma, m = 1.5e-6, 2e-10, 7e-11, 3.0 * n * 1024
    run = tc.run(f"ring:{n}" if n > 2 else "complete:2", "allreduce-ring", engine="event", message_bytes=m,
                 startup=alpha, per_byte=beta, per_byte_reduce=gamma)
    # derived here: 2(N-1) steps, each one block of m/N on every link at once; the first N-1 are combined
    expected = 2 * (n - 1) * (alpha + beta * m / n) + (n - 1) * gamma * m / n
    assert run.metrics["time"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_halving_doubling_on_a_hypercube_takes_the_textbook_time(k):
    n, alpha, beta, gamma, m = 2 ** k, 1e-6, 1e-10, 3e-11, 2.0 ** 16
    run = tc.run(f"hypercube:{k}", "allreduce-halving-doubling", engine="event", message_bytes=m,
                 startup=alpha, per_byte=beta, per_byte_reduce=gamma)
    # step i of the halving sends m/2^(i+1) and combines it; the doubling mirrors it without combining
    halves = [m / 2 ** (i + 1) for i in range(k)]
    expected = sum(2 * alpha + 2 * beta * h + gamma * h for h in halves)
    assert run.metrics["time"] == pytest.approx(expected, rel=1e-12)
    assert run.metrics["time"] == pytest.approx(R.halving_doubling_time(n, m, alpha, beta, gamma), rel=1e-12)


def test_the_event_engine_waits_for_every_earlier_receipt_of_the_blocks_it_sends():
    """A three-node chain reduce with a slow first hop: the second hop cannot leave before the first lands."""
    from topocast.measure.event import run_events
    from topocast.plans.schedule import ScheduleBuilder
    from topocast.sim.models import CostModel

    t = tc.build("path:3")
    b = ScheduleBuilder(3, origin=[0], collective="reduce", targets=np.array([2]), message_bytes=100.0)
    b.add(src=[0, 1], dst=[1, 2], first=0, step=[0, 1], combine=True)
    run = run_events(t, b.build(), CostModel(startup=1.0, per_byte=0.01, per_byte_reduce=0.005))
    assert run.verification.verified
    assert run.start[1] == pytest.approx(run.finish[0]) == pytest.approx(1.0 + 1.0 + 0.5)
    assert run.makespan == pytest.approx(2 * 2.5)


def test_a_transfer_sent_twice_fails_the_run_on_both_engines():
    sched = R.ring_allreduce(tc.build("ring:5"), message_bytes=500.0)
    dup = replace(sched, src=np.append(sched.src, sched.src[0]), dst=np.append(sched.dst, sched.dst[0]),
                  range_ptr=np.append(sched.range_ptr, sched.range_ptr[-1] + 1),
                  range_first=np.append(sched.range_first, sched.range_first[0]),
                  range_count=np.append(sched.range_count, 1), step=np.append(sched.step, sched.step.max() + 1),
                  combine=np.append(sched.combine, True), forward=None)
    from topocast.measure.event import run_events
    from topocast.measure.step import run_steps

    t = tc.build("ring:5")
    for run in (run_steps(t, dup), run_events(t, dup)):
        assert not run.verification.verified
        assert "counted twice" in run.verification.first_violation


def test_a_port_violation_stops_the_step_run_and_is_named():
    from topocast.measure.step import run_steps
    from topocast.sim.models import PortModel

    sched = R.halving_doubling_allreduce(tc.build("complete:4"), message_bytes=400.0)
    run = run_steps(tc.build("complete:4"), sched, PortModel(ports=1))
    assert run.verification.verified  # one port is enough for halving-doubling
    ring = R.ring_allreduce(tc.build("torus:3x3"), message_bytes=900.0)
    run = tc.run("torus:3x3", "allreduce-ring", engine="step", ports="1")
    assert run.verification.verified
    both = replace(ring, step=np.zeros_like(ring.step))  # every transfer in one step: ports overflow
    bad = run_steps(tc.build("torus:3x3"), both, PortModel(ports=1))
    assert not bad.verification.verified and "rejected" in bad.verification.first_violation


@pytest.mark.parametrize(("params", "word"), [
    ({"chunks": 0}, "chunks"), ({"message_bytes": 3.0, "chunks": 4}, "message_bytes"),
    ({"per_byte_reduce": -1.0}, "per_byte_reduce"),
])
def test_bad_reduction_parameters_are_refused_in_one_line(params, word):
    with pytest.raises(tc.TopocastError, match=word):
        tc.run("ring:4", "allreduce-ring", **params)


def test_a_root_outside_the_network_and_an_engine_that_cannot_reduce_are_refused():
    with pytest.raises(tc.TopocastError, match="root"):
        tc.run("ring:4", "reduce-bfs-tree", root=4)
    with pytest.raises(tc.TopocastError, match="engine"):
        tc.run("ring:4", "allreduce-ring", engine="wormhole")


def test_every_generic_reduction_runs_verified_on_a_networkx_graph(tmp_path):
    g = nx.random_regular_graph(3, 16, seed=5)
    path = tmp_path / "g.edgelist"
    nx.write_edgelist(g, path, data=False)
    for name in ("allreduce-ring", "allreduce-halving-doubling", "reduce-scatter-ring", "reduce-scatter-halving",
                 "allreduce-bfs-tree", "reduce-bfs-tree", "allreduce-disjoint-trees"):
        for engine in ("step", "event"):
            run = tc.run(f"graph:{path}", name, engine=engine, message_bytes=1200.0)
            assert run.verification.verified, (name, engine, run.verification.first_violation)


def test_a_node_combines_one_partial_at_a_time():
    """Reduce on a star (complete:5, BFS tree from node 0): four partials of the whole vector land at once and
    the root adds them one after the other; the compute bound (N-1)/N m gamma stays below."""
    alpha, beta, gamma, m = 1e-6, 1e-9, 4e-9, 1000.0
    run = tc.run("complete:5", "reduce-bfs-tree", engine="event", message_bytes=m, startup=alpha, per_byte=beta,
                 per_byte_reduce=gamma)
    assert run.verification.verified
    assert run.metrics["time"] == pytest.approx(alpha + m * beta + 4 * m * gamma, rel=1e-12)
    assert run.metrics["lower_bound"] >= 4 / 5 * m * gamma


@pytest.mark.parametrize("method", ["exact", "fingerprint"])
def test_a_check_taken_a_few_blocks_at_a_time_finds_what_the_whole_check_finds(method):
    from topocast.verify.reduction import block_chunks

    sched = R.ring_allreduce(tc.build("torus:4x4"), message_bytes=1600.0, chunks=2)
    small = 4 * 40_000.0
    assert len(block_chunks(sched, small, 16.0 * 16 * 2)) >= 4
    whole = verify_reduction(sched, method=method)
    parts = verify_reduction(sched, method=method, max_bytes=small)
    assert whole.complete and parts.complete and parts.receipts == whole.receipts
    broken = replace(sched, combine=np.where(np.arange(sched.num_transfers) == 40, False, sched.combine))
    assert verify_reduction(broken, method=method, max_bytes=small).missing_deliveries == \
        verify_reduction(broken, method=method).missing_deliveries > 0


def test_a_check_that_cannot_fit_is_refused_before_it_starts():
    sched = R.ring_allreduce(tc.build("ring:64"), message_bytes=6400.0)
    with pytest.raises(tc.TopocastError, match="max-memory"):
        verify_reduction(sched, max_bytes=1000.0)


def test_swing_beats_halving_doubling_on_a_torus():
    """De Sensi et al.: Swing's peers are closer than recursive doubling's on a torus (1, 1, 3, 5 hops against
    1, 2, 4, 8), so with relayed hops counted it is faster at every size."""
    for size in (1024.0, 2.0 ** 20):
        times = {name: tc.run("torus:8x8", name, engine="event", message_bytes=size).metrics["time"]
                 for name in ("allreduce-swing", "allreduce-halving-doubling")}
        assert times["allreduce-swing"] < times["allreduce-halving-doubling"]


@pytest.mark.parametrize("spec", ["complete:8", "torus:4x4", "hypercube:4", "galaxyfly:n=3,q=3,a=2"])
def test_disjoint_trees_span_the_network_and_share_no_link(spec):
    t = tc.build(spec)
    trees = R.disjoint_spanning_trees(t, seed=3)
    g = nx.Graph(t.to_networkx())
    used: set[frozenset] = set()
    for parent in trees:
        edges = {frozenset((v, int(parent[v]))) for v in range(t.num_nodes) if parent[v] >= 0}
        tree = nx.Graph([tuple(e) for e in edges])
        assert tree.number_of_nodes() == t.num_nodes and nx.is_tree(tree)
        assert all(g.has_edge(*e) for e in tree.edges())
        assert not edges & used
        used |= edges
    assert 1 <= len(trees) <= g.number_of_edges() // (t.num_nodes - 1)
    if spec == "complete:8":
        assert len(trees) >= 2  # K8 holds four; the greedy finds at least two


@pytest.mark.parametrize("spec", ["hdn:base=K2,k=2,s=2/1", "hdn:base=3x3,k=1,s=1", "dragonfly:g=5,a=4",
                                  "galaxyfly:n=3,q=5,a=4"])
def test_hierarchical_groups_are_connected_clusters_of_equal_size(spec):
    t = tc.build(spec)
    group = R.groups_of(t)
    g = t.to_networkx()
    sizes = np.bincount(group)
    assert len(set(sizes.tolist())) == 1
    assert all(nx.is_connected(g.subgraph(np.flatnonzero(group == k).tolist())) for k in range(len(sizes)))


# -- synthesis --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("collective", ["allreduce", "reduce-scatter", "reduce"])
@pytest.mark.parametrize("spec", ["torus:4x4", "hypercube:3", "galaxyfly:n=3,q=3,a=2", "ring:6"])
def test_a_synthesised_reduction_is_never_slower_than_a_registered_one(spec, collective, tmp_path):
    from topocast import registry
    from topocast.synthesis import replay, synthesize

    made = synthesize(spec, collective, message_bytes=6144.0, per_byte_reduce=1e-10, budget=30)
    assert made.result.verified
    t = tc.build(spec)
    for alg in registry.algorithms():
        if alg.collective != collective or (alg.families and t.family not in alg.families):
            continue
        try:
            run = tc.run(t, alg.name, engine="event", message_bytes=6144.0, per_byte_reduce=1e-10,
                         ports=made.model["ports"] if made.model["ports"] != "all" else "all")
        except tc.TopocastError:
            continue
        assert made.measured <= run.metrics["time"] * (1 + 1e-12), alg.name
    again = replay(spec, made.write(tmp_path / "s.json"))
    assert again.verified and again.metrics["time"] == pytest.approx(made.measured, rel=1e-12)


def test_an_allgather_reversed_is_a_reduce_scatter():
    from topocast.synthesis import synthesize
    from topocast.synthesis.reduction import reversed_schedule

    gather = synthesize("torus:3x4", "allgather", message_bytes=100.0).schedule
    scatter = reversed_schedule(gather, "reduce-scatter", np.asarray(gather.origin))
    assert verify_reduction(scatter).complete and verify_reduction(scatter).first_violation is None
    assert scatter.num_transfers == gather.num_transfers
    assert np.array_equal(scatter.src, gather.dst) and np.all(scatter.combine)


@pytest.mark.parametrize(("graph", "trees"), [(nx.cycle_graph(4), 4), (nx.complete_graph(4), 16),
                                              (nx.petersen_graph(), 2000)])
def test_wilson_tree_is_a_uniform_spanning_tree(graph, trees):
    """Every draw spans the graph; on small graphs every spanning tree comes up about equally often (Kirchhoff's
    count by networkx: 4 on a 4-cycle, 16 on K4; the Petersen graph's 2,000 are checked as spanning only)."""
    from collections import Counter

    assert round(nx.number_of_spanning_trees(graph)) == trees
    rng = np.random.default_rng(5)
    draws = 4000 if trees <= 16 else 50
    seen: Counter = Counter()
    for _ in range(draws):
        edges = R.wilson_tree(graph, rng)
        tree = nx.Graph(edges)
        assert len(edges) == graph.number_of_nodes() - 1 and nx.is_tree(tree)
        assert set(tree.nodes()) == set(graph.nodes()) and all(graph.has_edge(*e) for e in edges)
        seen[frozenset(frozenset(e) for e in edges)] += 1
    if trees <= 16:
        assert len(seen) == trees
        assert max(seen.values()) < 1.3 * draws / trees and min(seen.values()) > 0.7 * draws / trees


# -- fat trees: the processors contribute, the switches relay or add ----------------------------------------------
GFTS = [(1, 4, 1), (2, 4, 2), (2, 2, 4), (3, 2, 2), (3, 3, 2), (2, 3, 3)]


@pytest.mark.parametrize("h,m,w", GFTS)
def test_in_network_allreduce_takes_its_closed_form_and_the_distance_bound(h, m, w):
    """2h + 2 steps, the farthest two processors' distance (2h + 2 hops through a top switch, by networkx), and
    the time 2(a + Vb) + 2 sum_{x=1..h} (a + Vb / w^x) + g V (w + m sum_{x=1..h} w^-x) to the last digit (a
    leaf switch adds its w processors' vectors one at a time, a switch above its m children's slices)."""
    from topocast.algorithms.in_network import in_network_allreduce_time

    spec = f"gft:h={h},m={m},w={w}"
    t = tc.build(spec)
    g = t.to_networkx()
    far = max(nx.single_source_shortest_path_length(g, 0)[v] for v in range(t.meta["processors"]))
    steps = tc.run(spec, "allreduce-in-network", engine="step")
    assert steps.verified and steps.metrics["steps"] == 2 * h + 2 == steps.metrics["lower_bound"] == far
    size = 4096.0 * w ** h
    for gamma in (0.0, 3e-10):
        timed = tc.run(spec, "allreduce-in-network", engine="event", message_bytes=size, startup=1e-6,
                       per_byte=1e-9, per_byte_reduce=gamma)
        assert timed.verified
        want = in_network_allreduce_time(h, m, w, size, 1e-6, 1e-9, gamma)
        assert timed.metrics["time"] == pytest.approx(want, rel=1e-12)
        assert timed.metrics["time"] >= timed.metrics["lower_bound"] * (1 - 1e-12)


@pytest.mark.parametrize("spec", ["gft:h=2,m=4,w=2", "gft:h=3,m=2,w=2", "gft:h=1,m=3,w=2"])
def test_fat_tree_reductions_count_the_processors_only(spec):
    """Both fat-tree allreduces verify with the switches as relays (part -1) against the oracle's multisets;
    a switch made a contributor, or one transfer removed, is caught."""
    t = tc.build(spec)
    processors = t.meta["processors"]
    for plan in (R.hierarchical_allreduce(t), I.in_network_allreduce(t)):
        assert plan.part[:processors].tolist() == [0] * processors and (plan.part[processors:] == -1).all()
        assert verify_reduction(plan).complete
        state, _ = oracle(plan)
        for v in range(processors):
            for b in range(plan.num_messages):
                held = state[v][b]
                assert {u for u in held if u < processors} == set(range(processors))
        with_switch = replace(plan, part=np.zeros(t.num_nodes, dtype=np.int64))
        assert not verify_reduction(with_switch).complete
        short = verify_reduction(plan.subset(np.arange(1, plan.num_transfers)))
        assert not short.complete


def test_synthesis_on_a_fat_tree_compares_like_with_like():
    """synthesize reduces over every node: the processors-only methods are skipped (with a note), not chosen."""
    from topocast.synthesis import synthesize

    s = synthesize("gft:h=1,m=3,w=2", "allreduce", budget=5)
    assert s.result.verified and s.schedule.part is None and s.method != "allreduce-in-network"
    assert any("allreduce-in-network skipped" in note for note in s.notes)
    # the dual (a synthesised all-gather, reversed) runs although a fat tree's all-gather model has no hop
    # latency (it failed, and a synthesised all-gather there raised a KeyError, before)
    assert any(c.get("method") == "reversed-allgather" and c["verified"] for c in s.candidates)
    assert synthesize("gft:h=1,m=3,w=2", "allgather", budget=5).result.verified


@pytest.mark.parametrize("h,m,w", [(2, 4, 4), (3, 2, 2), (1, 3, 2)])
def test_the_pipelined_in_network_allreduce(h, m, w):
    """In chunks C: 2h + 1 + C steps, still verified; at 16 MiB each doubling of C is faster, never below the
    bound nor below the leaf switch's own adding (w vectors, one at a time: w V gamma)."""
    spec, size, gamma = f"gft:h={h},m={m},w={w}", 2.0 ** 24, 5e-11
    times = []
    for c in (1, 2, 4, 8):
        steps = tc.run(spec, "allreduce-in-network", engine="step", chunks=c)
        assert steps.verified and steps.metrics["steps"] == 2 * h + 1 + c
        timed = tc.run(spec, "allreduce-in-network", engine="event", chunks=c, message_bytes=size,
                       per_byte_reduce=gamma)
        assert timed.verified and timed.metrics["time"] >= max(timed.metrics["lower_bound"], w * size * gamma)
        times.append(timed.metrics["time"])
    assert all(b < a for a, b in zip(times, times[1:], strict=False)), times
