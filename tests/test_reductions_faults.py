"""Reductions on a degraded network (issue 33, item 3): the generic ones on the surviving graph while it still
joins every router (verified by the shared reduction verifier, steps worked out by hand on a cut ring, the bound
recomputed), synthesised there too, and the one-line refusals of what has no promise yet."""

from __future__ import annotations

from dataclasses import replace

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms import in_network as I
from topocast.algorithms import reductions as R
from topocast.plans.schedule import ScheduleBuilder
from topocast.synthesis import replay, synthesize
from topocast.verify.reduction import verify_reduction


def test_a_cut_ring_reduces_along_the_path_that_remains():
    """ring:8 without 2-3 is the path 3-4-5-6-7-0-1-2, node 0 at distance 5 from its far end 3: a reduce up the
    BFS tree from 0 takes 5 steps (its eccentricity, the bound), the allreduce 5 up and 5 down, against a bound of
    7 (the path's diameter: node 3 needs node 2's contribution); intact: 4, 8 and 4."""
    for faults, reduce_steps, allreduce_steps, allreduce_bound in ((None, 4, 8, 4), ("links=2-3", 5, 10, 7)):
        r = tc.run("ring:8", "reduce-bfs-tree", engine="step", faults=faults)
        a = tc.run("ring:8", "allreduce-bfs-tree", engine="step", faults=faults)
        assert r.verified and a.verified and a.metrics["exactly_once"]
        assert (r.metrics["steps"], r.metrics["lower_bound"]) == (reduce_steps, reduce_steps)
        assert (a.metrics["steps"], a.metrics["lower_bound"]) == (allreduce_steps, allreduce_bound)
    assert a.metrics["fault_mode"] == "surviving" and a.metrics["faults"] == "links=[2-3]"


@pytest.mark.parametrize("algorithm", ["allreduce-bfs-tree", "allreduce-disjoint-trees", "reduce-bfs-tree"])
def test_generic_reductions_run_on_a_degraded_torus(algorithm):
    faults = "links=3,seed=1"
    r = tc.run("torus:4x4", algorithm, engine="event", faults=faults)
    intact = tc.run("torus:4x4", algorithm, engine="event")
    assert r.verified and r.metrics["exactly_once"] and r.metrics["failed_links"] == 3
    assert r.metrics["lower_bound"] >= intact.metrics["lower_bound"] * (1 - 1e-12)
    assert r.metrics["fault_promise"].startswith("every node ends with every node's contribution")


@pytest.mark.parametrize("collective", ["allreduce", "reduce-scatter", "reduce"])
def test_reductions_are_synthesised_on_a_degraded_torus_and_replayed(collective, tmp_path):
    faults = "links=3,seed=1"
    s = synthesize("torus:4x4", collective, faults=faults, budget=5)
    intact = synthesize("torus:4x4", collective, budget=5, known=False)
    assert s.result.verified and s.result.metrics["exactly_once"] and s.summary()["faults"] == "links=3,seed=1"
    assert s.lower_bound >= intact.lower_bound * (1 - 1e-12) and s.measured >= s.lower_bound * (1 - 1e-12)
    path = tmp_path / "r.json"
    s.write(path)
    again = replay("torus:4x4", path)
    assert again.verified and again.metrics["time"] == pytest.approx(s.measured)


def test_what_a_reduction_cannot_promise_on_faults_is_refused_in_one_line():
    cases = (("allreduce-bfs-tree", "routers=0;", "root: node 0 is a failed router"),
             ("reduce-halving", "routers=0;", "root: node 0 is a failed router"),
             ("allreduce-bfs-tree", "routers=" + ";".join(str(v) for v in range(1, 16, 2)), "no two healthy nodes"))
    for algorithm, faults, match in cases:
        with pytest.raises(tc.TopocastError, match=match) as err:
            tc.run("ring:16", algorithm, faults=faults)
        assert "\n" not in str(err.value)
    with pytest.raises(tc.TopocastError, match="nothing to synthesise"):
        synthesize("ring:4", "reduce", faults="links=0-1;3-0")


# -- networks in parts: each healthy node's sum is its own part's ------------------------------------------------
def _split_ring_plan(collective="allreduce", extra=()):
    """ring:6 cut into {0, 1, 2} and {3, 4, 5} by hand: in each part a reduce to its middle node and a copy back
    (``extra``: more transfers (step, src, dst, combine) planted after them)."""
    b = ScheduleBuilder(6, origin=[1], collective=collective, targets="all", message_bytes=8.0)
    for step, src, dst, combine in ((0, 0, 1, True), (0, 2, 1, True), (0, 3, 4, True), (0, 5, 4, True),
                                    (1, 1, 0, False), (1, 1, 2, False), (1, 4, 3, False), (1, 4, 5, False),
                                    *extra):
        b.add(src=[src], dst=[dst], first=0, step=step, combine=combine)
    return b.build()


@pytest.mark.parametrize("method", ["exact", "fingerprint"])
def test_parts_each_end_with_their_own_sum_and_nothing_else(method):
    plan = _split_ring_plan()
    halves = replace(plan, part=np.array([0, 0, 0, 1, 1, 1]))
    assert verify_reduction(halves, method=method).complete
    whole = verify_reduction(plan, method=method)         # one part: every node short of the other half's sum
    assert not whole.complete and whole.missing_deliveries == 6
    crossed = replace(_split_ring_plan(extra=((2, 2, 3, True),)), part=halves.part)
    found = verify_reduction(crossed, method=method)
    assert not found.complete and found.missing_deliveries == 1
    assert ("from outside its part" if method == "exact" else "holding 6 contributions for 3") in \
        found.first_violation
    assert "of its part" in found.promise or method == "fingerprint"


@pytest.mark.parametrize("method", ["exact", "fingerprint"])
def test_a_failed_router_contributes_nothing_and_needs_nothing(method):
    """Node 5 failed (part -1): the part {3, 4} ends with 2 contributions, node 5 is not checked; a transfer out
    of the failed node before anything reached it carries an empty partial and changes nothing."""
    extra = ((2, 5, 4, True),)
    part = np.array([0, 0, 0, 1, 1, -1])
    plan = replace(_split_ring_plan(extra=extra), part=part)
    b = ScheduleBuilder(6, origin=[1], collective="allreduce", targets="all", message_bytes=8.0)
    for step, src, dst, combine in ((0, 0, 1, True), (0, 2, 1, True), (0, 3, 4, True), (0, 5, 4, True),
                                    (1, 1, 0, False), (1, 1, 2, False), (1, 4, 3, False)):
        b.add(src=[src], dst=[dst], first=0, step=step, combine=combine)
    ok = verify_reduction(replace(b.build(), part=part), method=method)
    assert ok.complete, ok.first_violation
    twice = verify_reduction(plan, method=method)   # 5 holds 4's copy {3, 4} (its own is empty) and adds it back to 4
    assert twice.first_violation and "twice" in twice.first_violation


def _oracle_parts(spec, faults):
    """Per node its part by networkx: components of the graph without the failed links and routers."""
    t = tc.build(spec, faults=faults)
    g = nx.Graph()
    g.add_nodes_from(range(t.num_nodes))
    src = np.repeat(np.arange(t.num_nodes), np.diff(t.indptr))
    g.add_edges_from(zip(src.tolist(), t.indices.tolist(), strict=True))
    failed = set(t.failed_nodes.tolist())
    parts = [sorted(c) for c in nx.connected_components(g) if not (set(c) & failed)]
    return t, parts, failed


@pytest.mark.parametrize("spec,faults", [("ring:8", "routers=2;5"), ("ring:9", "links=2-3;6-7"),
                                         ("torus:4x4", "routers=3,seed=2"), ("torus:4x4", "links=0-1;0-4;0-3;0-12"),
                                         ("hypercube:4", "routers=2,seed=5")])
@pytest.mark.parametrize("algorithm", ["allreduce-bfs-tree", "allreduce-disjoint-trees", "reduce-bfs-tree"])
def test_generic_reductions_on_a_network_in_parts(spec, faults, algorithm):
    """Verified per part; what is out of reach and the step bound checked against networkx's components: the
    bound is the largest part diameter (allreduce) or the root's eccentricity in its part (reduce)."""
    t, parts, failed = _oracle_parts(spec, faults)
    root = min(set(range(t.num_nodes)) - failed)
    r = tc.run(spec, algorithm, engine="step", faults=faults, root=root) if algorithm != "allreduce-disjoint-trees" \
        else tc.run(spec, algorithm, engine="step", faults=faults)
    assert r.verified and r.metrics["exactly_once"], r.metrics["first_violation"]
    healthy = t.num_nodes - len(failed)
    if algorithm.startswith("allreduce"):
        assert r.metrics["contributions_out_of_reach"] == sum(len(p) * (healthy - len(p)) for p in parts)
    else:
        mine = next(p for p in parts if root in p)
        assert r.metrics["contributions_out_of_reach"] == healthy - len(mine)
    assert r.metrics["parts"] == len(parts)
    assert r.metrics["steps"] >= r.metrics["lower_bound"]
    assert r.metrics["fault_promise"].startswith("every healthy node that must hold a sum")


def test_the_step_bound_of_a_split_network_is_its_largest_part_diameter():
    for spec, faults in (("ring:9", "links=2-3;6-7"), ("torus:4x4", "links=0-1;0-4;0-3;0-12"),
                         ("ring:10", "routers=0;4")):
        t, parts, _ = _oracle_parts(spec, faults)
        src = np.repeat(np.arange(t.num_nodes), np.diff(t.indptr))
        g = nx.Graph(list(zip(src.tolist(), t.indices.tolist(), strict=True)))
        want = max(nx.diameter(g.subgraph(p)) for p in parts if len(p) > 1)
        r = tc.run(spec, "allreduce-bfs-tree", engine="step", faults=faults, root=parts[0][0])
        assert r.verified and r.metrics["lower_bound"] == want, (spec, r.metrics["lower_bound"], want)


@pytest.mark.parametrize("collective", ["allreduce", "reduce-scatter", "reduce"])
@pytest.mark.parametrize("faults", ["routers=2;5", "links=2-3;6-7"])
def test_reductions_are_synthesised_per_part_and_replayed(collective, faults, tmp_path):
    """ring:9 in two parts of different sizes (so their schedules cut the vector differently): synthesised per
    part, lifted, verified per part on both engines' replay, and never below the per-part bound."""
    s = synthesize("ring:9", collective, faults=faults, budget=3)
    assert s.result.verified and s.result.metrics["exactly_once"]
    assert s.measured >= s.lower_bound * (1 - 1e-12) and s.schedule.part is not None
    assert float(s.schedule.message_bytes * s.schedule.num_messages) == pytest.approx(1024.0)
    path = tmp_path / "r.json"
    s.write(path)
    again = replay("ring:9", path)
    assert again.verified and again.metrics["time"] == pytest.approx(s.measured)


def test_parts_cutting_the_vector_differently_are_lifted_to_a_common_cut():
    """Two parts of 3 nodes whose allreduces cut a 12-byte vector in 2 and 3 blocks: lifted, the vector is cut in
    lcm(2, 3) = 6 blocks of 2 bytes, every transfer moving the bytes it moved in its part, verified per part."""
    from topocast.faults.plans import lift_reduction, stamp_reduction

    t = tc.build("ring:6", faults="links=1-2;4-5")      # parts {2, 3, 4} and {5, 0, 1}
    a = R.bfs_tree_allreduce(induced_path(3), message_bytes=12.0, chunks=2)
    b = R.bfs_tree_allreduce(induced_path(3), message_bytes=12.0, chunks=3)
    lifted = lift_reduction(t, "allreduce", [(np.array([2, 3, 4]), a), (np.array([0, 1, 5]), b)])
    assert lifted.num_messages == 6 and lifted.message_bytes == pytest.approx(2.0)
    per_transfer = np.add.reduceat(lifted.range_count, lifted.range_ptr[:-1]) * lifted.message_bytes
    alone = np.concatenate([np.add.reduceat(x.range_count, x.range_ptr[:-1]) * x.message_bytes for x in (a, b)])
    assert per_transfer.tolist() == pytest.approx(alone.tolist())
    assert verify_reduction(stamp_reduction(lifted, t)).complete
    assert not verify_reduction(lifted).complete        # without its parts: every node short of half the sum


def induced_path(n):
    """A path of ``n`` nodes as a plain graph (a part of a cut ring)."""
    from topocast.faults.connectivity import induced

    return induced(tc.build(f"ring:{n + 1}"), np.arange(n))


# -- reductions built for the intact network: planned there, transfers over failed parts dropped ----------------
@pytest.mark.parametrize("spec,algorithm,faults,plan", [
    ("ring:6", "allreduce-ring", "links=0-1", lambda t: R.ring_allreduce(t)),
    ("ring:7", "reduce-scatter-ring", "links=2-3;5-6", lambda t: R.ring_reduce_scatter(t)),
    ("torus:4x4", "allreduce-torus", "routers=5;", lambda t: R.torus_allreduce(t)),
    ("hypercube:4", "reduce-binomial", "links=0-1", lambda t: R.binomial_reduce(t)),
    ("hypercube:3", "allreduce-halving-doubling", "links=0-1;2-6", lambda t: R.halving_doubling_allreduce(t)),
])
def test_a_reduction_for_the_intact_network_loses_what_an_oracle_replay_loses(spec, algorithm, faults, plan):
    """The intact plan with every transfer over a failed link or router removed, replayed by the test's own
    oracle (multisets per node and block): the contributions each required (node, block) misses of its
    part's sum (networkx components) are the run's ``contributions_lost``; nothing is counted twice."""
    from test_reductions import oracle, required

    t, parts, failed = _oracle_parts(spec, faults)
    intact = plan(tc.build(spec))
    alive = {(int(u), int(v)) for u, v in zip(np.repeat(np.arange(t.num_nodes), np.diff(t.indptr)), t.indices,
                                              strict=True)}
    keep = [i for i in range(intact.num_transfers)
            if (int(intact.src[i]), int(intact.dst[i])) in alive and not {int(intact.src[i]), int(intact.dst[i])} &
            failed]
    state, _ = oracle(intact.subset(np.array(keep, dtype=np.int64)))
    part_of = {v: frozenset(p) for p in parts for v in p}
    lost = short = 0
    for v, b in required(intact):
        if v in failed:
            continue
        held = state[v][b]
        assert max(held.values()) == 1
        missing = len(part_of[v] - set(held))
        lost, short = lost + missing, short + (missing > 0)
    for engine in ("step", "event"):
        r = tc.run(spec, algorithm, engine=engine, faults=faults)
        assert r.verified and r.metrics["fault_mode"] == "intact", r.metrics["first_violation"]
        assert (r.metrics["contributions_lost"], r.metrics["sums_short"]) == (lost, short)
        assert r.metrics["transfers_dropped"] == intact.num_transfers - len(keep)
    assert lost > 0 or algorithm == "never"


def test_a_lossy_check_still_names_a_contribution_counted_twice():
    plan = _split_ring_plan(extra=((2, 1, 0, True),))     # 0 already holds {0, 1, 2}: adds it again
    for method in ("exact", "fingerprint"):
        found = verify_reduction(replace(plan, part=np.array([0, 0, 0, 1, 1, 1])), method=method, lossy=True)
        assert not found.complete and "twice" in found.first_violation and found.lossy
        ok = verify_reduction(_split_ring_plan(), method=method, lossy=True)   # one part: short, not wrong
        assert ok.complete and ok.sums_short == 6 and ok.contributions_lost == 18


def test_a_fat_tree_reduction_on_faults_keeps_the_switches_out():
    """gft:h=2,m=4,w=2 (32 processors, nodes 32-47 leaf switches, 56-59 top): the in-network allreduce
    (built for the intact tree) with a top switch failed loses that switch's slice (block 0 of 4) above each
    processor's level-1 subtree of 8: every processor ends with 8 of 32 contributions there, 32 x 24 = 768
    lost; with a leaf switch failed its two processors are cut off (each alone, out of reach of 31 others,
    the other 30 of 2: 2 x 31 + 30 x 2 = 122) and nothing else is lost.  Switches never count as
    contributors."""
    top = tc.run("gft:h=2,m=4,w=2", "allreduce-in-network", faults="routers=56;")
    assert top.verified and (top.metrics["sums_short"], top.metrics["contributions_lost"]) == (32, 768)
    assert top.metrics["contributions_out_of_reach"] == 0
    leaf = tc.run("gft:h=2,m=4,w=2", "allreduce-in-network", faults="routers=40;")
    assert leaf.verified and (leaf.metrics["sums_short"], leaf.metrics["contributions_lost"]) == (0, 0)
    assert leaf.metrics["contributions_out_of_reach"] == 122
    from topocast.faults.plans import joint_parts

    t = tc.build("gft:h=2,m=4,w=2", faults="routers=40;")
    part = joint_parts(I.in_network_allreduce(t.intact).part, t)
    assert (part[32:] == -1).all() and len(set(part[:32].tolist()) - {-1}) == 3


@given(n=st.integers(6, 24), p=st.floats(0.15, 0.6), graph_seed=st.integers(0, 10 ** 6),
       links=st.floats(0.0, 0.5), routers=st.integers(0, 3), fault_seed=st.integers(0, 10 ** 6),
       algorithm=st.sampled_from(["allreduce-bfs-tree", "allreduce-disjoint-trees", "reduce-bfs-tree"]),
       engine=st.sampled_from(["step", "event"]))
@settings(max_examples=40, deadline=None)
def test_generic_reductions_on_random_degraded_graphs(n, p, graph_seed, links, routers, fault_seed, algorithm,
                                                      engine):
    """Any graph (networkx G(n, p)), any random fault set: the run is verified per part, or refused in one line
    (a failed root, no two healthy nodes joined, more links drawn than the failed routers leave); what is out
    of reach matches networkx's components."""
    g = nx.gnp_random_graph(n, p, seed=graph_seed)
    g.add_edges_from((v, v + 1) for v in range(n - 1) if g.degree(v) == 0)   # no node starts alone
    intact = tc.Topology.from_networkx(g)
    faults = f"links={links:.3f},routers={routers},seed={fault_seed}"
    try:
        r = tc.run(intact, algorithm, engine=engine, faults=faults)
    except tc.TopocastError as err:
        assert "\n" not in str(err)
        assert any(w in str(err) for w in ("failed router", "no two healthy nodes", "left to fail")), str(err)
        return
    assert r.verified and r.metrics["exactly_once"], r.metrics["first_violation"]
    from topocast.faults.degrade import degrade

    t = degrade(intact, faults)
    src = np.repeat(np.arange(t.num_nodes), np.diff(t.indptr))
    h = nx.Graph()
    h.add_nodes_from(range(n))
    h.add_edges_from(zip(src.tolist(), t.indices.tolist(), strict=True))
    failed = set(t.failed_nodes.tolist())
    parts = [c for c in nx.connected_components(h) if not c & failed]
    healthy = n - len(failed)
    if algorithm == "reduce-bfs-tree":
        mine = next(c for c in parts if 0 in c)
        assert r.metrics["contributions_out_of_reach"] == healthy - len(mine)
    else:
        assert r.metrics["contributions_out_of_reach"] == sum(len(c) * (healthy - len(c)) for c in parts)


@given(n=st.integers(5, 12), graph_seed=st.integers(0, 10 ** 6), routers=st.integers(1, 2),
       fault_seed=st.integers(0, 10 ** 6), collective=st.sampled_from(["allreduce", "reduce-scatter", "reduce"]))
@settings(max_examples=8, deadline=None)
def test_reductions_are_synthesised_on_random_graphs_in_parts(n, graph_seed, routers, fault_seed, collective):
    """A ring with random chords, random routers failed: the synthesised reduction verifies per part (or is
    refused in one line), never below its bound."""
    g = nx.cycle_graph(n)
    rng = np.random.default_rng(graph_seed)
    g.add_edges_from(rng.integers(0, n, size=(n // 3, 2)).tolist())
    g.remove_edges_from(nx.selfloop_edges(g))
    intact = tc.Topology.from_networkx(g)
    from topocast.faults.degrade import degrade

    t = degrade(intact, f"routers={routers},seed={fault_seed}")
    root = int(np.flatnonzero(np.isin(np.arange(n), t.failed_nodes, invert=True))[0])
    try:
        s = synthesize(t, collective, budget=1, root=root)
    except tc.TopocastError as err:
        assert "\n" not in str(err) and "nothing to synthesise" in str(err), str(err)
        return
    assert s.result.verified and s.measured >= s.lower_bound * (1 - 1e-12)
    assert s.schedule.part is not None and (s.schedule.part[t.failed_nodes] == -1).all()
