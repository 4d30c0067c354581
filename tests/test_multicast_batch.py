"""Workload construction at scale: destination draws, whole-workload planners, QG's two readings.

Oracles: exact subset frequencies of a small draw against the uniform law (chi-square), the per-multicast
reference planners (plain Python, checked elsewhere against the paper's rules) for the vectorised ones,
and the timing argument of the e-cube reading worked out in the test.
"""

import tracemalloc
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

import topocast as tc
from topocast.algorithms import worm_traffic as wt
from topocast.algorithms.mesh_multicast import column_path_planner, dual_path_planner, multi_path_planner
from topocast.algorithms.mesh_multicast_qg import group_arrays, qg_planner, qualified_groups
from topocast.errors import TopocastError
from topocast.experiments.traces import multicast_worms
from topocast.sim.wormhole import RouterConfig


# -- draw_destinations ---------------------------------------------------------------------------
def check_rows(num_nodes, sources, counts, ptr, ids):
    assert ptr.tolist() == [0] + np.cumsum(counts).tolist()
    for i, (s, k) in enumerate(zip(sources, counts, strict=True)):
        row = ids[ptr[i]:ptr[i + 1]]
        assert len(row) == k and np.all(np.diff(row) > 0)  # distinct, sorted
        assert row.min() >= 0 and row.max() < num_nodes and s not in row


@given(st.integers(2, 40), st.integers(0, 2**32 - 1), st.data())
@settings(max_examples=60, deadline=None)
def test_rows_are_distinct_sorted_and_skip_the_source(num_nodes, seed, data):
    m = data.draw(st.integers(1, 30))
    rng = np.random.default_rng(seed)
    sources = rng.integers(0, num_nodes, size=m)
    counts = rng.integers(1, num_nodes, size=m)  # sparse and dense rows, up to every other node
    ptr, ids = wt.draw_destinations(num_nodes, sources, counts, np.random.default_rng(seed))
    check_rows(num_nodes, sources, counts, ptr, ids)
    again = wt.draw_destinations(num_nodes, sources, counts, np.random.default_rng(seed))
    assert np.array_equal(again[1], ids)  # a seed fixes the draw


@pytest.mark.parametrize("k", [1, 2, 3, 4])  # 1 and 2 of 4: repeats redrawn; 3 and 4: the left-out drawn
def test_every_subset_is_equally_likely(k):
    """Node 2 of 5 multicasting to k others: each of the C(4, k) subsets appears equally often."""
    rows = 24000
    ptr, ids = wt.draw_destinations(5, np.full(rows, 2), np.full(rows, k), np.random.default_rng(k))
    subsets = {c: 0 for c in combinations([0, 1, 3, 4], k)}
    for i in range(rows):
        subsets[tuple(ids[ptr[i]:ptr[i + 1]].tolist())] += 1
    observed = list(subsets.values())
    assert sum(observed) == rows
    if len(observed) > 1:
        assert chisquare(observed).pvalue > 1e-3, subsets


def test_positions_are_uniform_on_a_larger_mesh():
    """Every other node is drawn with the same probability k / (N - 1)."""
    n, k, rows = 100, 10, 20000
    sources = np.random.default_rng(0).integers(0, n, size=rows)
    ptr, ids = wt.draw_destinations(n, sources, np.full(rows, k), np.random.default_rng(1))
    hits = np.bincount(ids, minlength=n)
    # node v is a possible destination of every row whose source is not v
    possible = rows - np.bincount(sources, minlength=n)
    expected = possible * k / (n - 1)
    assert chisquare(hits, expected * hits.sum() / expected.sum()).pvalue > 1e-3


def test_draw_memory_is_proportional_to_what_is_drawn():
    """A million-node network, 2000 multicasts of 10: far below one random key per node and message
    (2000 x 10^6 x 8 bytes = 16 GB)."""
    n, m = 1_000_000, 2000
    sources = np.random.default_rng(3).integers(0, n, size=m)
    tracemalloc.start()
    ptr, ids = wt.draw_destinations(n, sources, np.full(m, 10), np.random.default_rng(4))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4 * 2**20
    assert len(ids) == 10 * m and np.all(ids != np.repeat(sources, 10))


def test_bad_counts_are_refused():
    with pytest.raises(TopocastError, match="destinations"):
        wt.draw_destinations(5, np.array([0]), np.array([5]), np.random.default_rng(0))


def test_spread_draws_counts_uniformly_around_the_mean():
    counts = wt.destination_counts(50000, 10, 5, 100, np.random.default_rng(2))
    assert counts.min() == 5 and counts.max() == 15
    freq = np.bincount(counts, minlength=16)[5:]
    assert chisquare(freq).pvalue > 1e-3  # uniform on 5..15
    assert abs(counts.mean() - 10) < 4 * counts.std() / np.sqrt(len(counts))


# -- whole-workload planners against the per-multicast reference ---------------------------------
FACTORIES = {
    "dp": dual_path_planner, "mp": multi_path_planner, "cp": column_path_planner,
    "qg": qg_planner, "qg-ecube": lambda t, prep: qg_planner(t, prep, routing="ecube"),
    "qg-t0.1": lambda t, prep: qg_planner(t, prep, threshold=0.1, leader_prep=3),
}


@pytest.mark.parametrize("shape", ["8x8", "5x7", "3x4x3", "9", "2x3x2x3", "10x10"])
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_batch_planner_builds_the_reference_plan(shape, name):
    topology = tc.build(f"mesh:{shape}")
    planner = FACTORIES[name](topology, prep=7)
    for seed, dests in enumerate((1, 6, min(topology.num_nodes - 1, 20))):
        spread = min(dests - 1, topology.num_nodes - 1 - dests)
        kw = dict(load=0.01, destinations=dests, spread=spread, cycles=3000, flits=32, seed=seed)
        batch = wt.workload_plan(topology, planner, **kw)
        reference = wt.workload_plan(topology, planner.one, **kw)  # one multicast at a time
        assert batch.num_multicasts == reference.num_multicasts > 0
        for name_ in ("generated", "source", "slot_ptr", "job_ptr"):
            assert np.array_equal(getattr(batch, name_), getattr(reference, name_)), name_
        for name_ in batch.traffic.__dataclass_fields__:
            assert np.array_equal(getattr(batch.traffic, name_), getattr(reference.traffic, name_)), name_


@st.composite
def multicasts(draw):
    dims = tuple(draw(st.lists(st.integers(2, 7), min_size=2, max_size=3)))
    n = int(np.prod(dims))
    many = []
    for _ in range(draw(st.integers(1, 6))):
        source = draw(st.integers(0, n - 1))
        k = draw(st.integers(1, min(n - 1, 25)))
        others = [v for v in range(n) if v != source]
        many.append((source, sorted(draw(st.permutations(others))[:k])))
    return dims, many


@given(multicasts(), st.floats(0.0, 1.5))
@settings(max_examples=80, deadline=None)
def test_group_kernel_equals_qualified_groups(case, threshold):
    dims, many = case
    topology = tc.build("mesh:" + "x".join(map(str, dims)))
    sources = np.array([s for s, _ in many])
    ptr = np.array([0] + np.cumsum([len(d) for _, d in many]).tolist())
    ids = np.array([v for _, d in many for v in d])
    group, leader, count = group_arrays(dims, sources, ptr, ids, threshold)
    for m, (source, dests) in enumerate(many):
        coords = [topology.label(d) for d in dests]
        groups, _ = qualified_groups(topology.label(source), coords, dests, threshold)
        assert count[m] == len(groups)
        mine = group[ptr[m]:ptr[m + 1]]
        assert [sorted(np.flatnonzero(mine == g).tolist()) for g in range(count[m])] == [sorted(g) for g in groups]
        src = np.array(topology.label(source))
        for g in groups:  # the leader: nearest to the source, ties to the lower node
            near = min(g, key=lambda i: (int(np.abs(np.array(coords[i]) - src).sum()), dests[i]))
            assert [i for i in g if leader[ptr[m] + i]] == [near]


# -- QG's routing readings ---------------------------------------------------------------------------
def test_ecube_reading_pays_two_startups_and_a_batch_rule_more():
    kw = dict(destinations=20, load=0.003, cycles=6000, seed=3)
    ecube = tc.run("mesh:8x8", "multicast-qg", routing="ecube", **kw)
    batched = tc.run("mesh:8x8", "multicast-qg", routing="ecube", worms_per_startup=4, **kw)
    disjoint = tc.run("mesh:8x8", "multicast-qg", routing="disjoint", **kw)
    for r in (ecube, batched, disjoint):
        assert r.verified and r.metrics["message_passing_steps"] == 2
    assert ecube.metrics["startups_max"] == 2 and disjoint.metrics["startups_max"] == 2
    assert batched.metrics["startups_max"] > 2
    assert ecube.metrics["worms_mean"] == batched.metrics["worms_mean"] > disjoint.metrics["worms_mean"]
    assert any("one start-up launches every worm" in n for n in ecube.notes)


@pytest.mark.parametrize("startup, same", [(33, True), (20, True), (60, False)])
def test_one_startup_per_step_costs_no_latency_when_startup_fits_a_worm(startup, same):
    """Alone in the network, worm i of a step leaves, under the batch rule, when its batch's start-up ends,
    at S + (i // 4) * startup, and no earlier than an injection channel frees, at S + (i // 4) * (flits + 1);
    with one start-up per step only the latter holds.  So every delivery happens at the same cycle under
    both rules exactly when startup <= flits + 1 (33 at the paper's 32 flits); a longer start-up makes some
    steps of more than 4 worms later under the batch rule, never earlier."""
    topology = tc.build("mesh:16x16")
    rng = np.random.default_rng(21)
    differ, big_steps = 0, 0
    for _ in range(12):
        source = int(rng.integers(256))
        dests = sorted(rng.choice(np.delete(np.arange(256), source), size=20, replace=False).tolist())
        times = {}
        for batch in (4, 1000):
            worms = multicast_worms(topology, "qg", source, dests, routing="ecube",
                                    config=RouterConfig(startup=startup, worms_per_startup=batch))
            times[batch] = dict(kv for w in worms for kv in zip(w["destinations"], w["delivered"], strict=True))
            assert sorted(times[batch]) == dests
        big_steps += max(np.unique([w["start"] for w in worms], return_counts=True)[1]) > 4
        assert all(times[4][d] >= times[1000][d] for d in dests)
        differ += times[4] != times[1000]
    assert big_steps >= 6  # most of these multicasts have a step of more than 4 worms
    assert (differ == 0) == same


def test_older_routing_names_are_the_disjoint_reading():
    kw = dict(destinations=8, load=0.01, cycles=4000, seed=5)
    default = tc.run("mesh:6x6", "multicast-qg", **kw)
    assert default.params["routing"] == "disjoint"
    for old in ("disjoint-paths", "hamiltonian"):
        r = tc.run("mesh:6x6", "multicast-qg", routing=old, **kw)
        assert r.metrics == default.metrics and any("older name" in n for n in r.notes)
    with pytest.raises(TopocastError, match="routing") as info:
        tc.run("mesh:6x6", "multicast-qg", routing="xy", **kw)
    assert len(str(info.value).splitlines()) == 1


def test_batch_plans_refuse_what_a_plan_cannot_express():
    """The vectorised builder raises what TrafficBuilder.add raises for the same mistakes."""
    topology = tc.build("mesh:4x4")
    gen, src = np.array([0]), np.array([5])
    ptr, ids = np.array([0, 2]), np.array([6, 9])

    def jobs(after, dests):
        return wt.JobArrays(mc=np.zeros(len(after), np.int64), node=np.array([5] + [6] * (len(after) - 1)),
                            after=np.array(after), prep=np.zeros(len(after), np.int64),
                            worm_ptr=np.arange(len(after) + 1), kind=np.full(len(after), 0),
                            dest_ptr=np.array([0] + np.cumsum([len(d) for d in dests]).tolist()),
                            dests=np.array([d for ds in dests for d in ds]))

    window = dict(cycles=1000, flits=32, stop_when_idle=True)
    plan = wt.plan_from_arrays(topology, gen, src, ptr, ids, jobs([-1, 6], [[6], [9]]), **window)
    assert plan.traffic.slot_job.tolist() == [1, -1] and plan.job_ptr.tolist() == [0, 2]
    with pytest.raises(TopocastError, match="node 10 is not one of its destinations"):
        wt.plan_from_arrays(topology, gen, src, ptr, ids, jobs([-1], [[6, 10]]), **window)
    with pytest.raises(TopocastError, match="releases two jobs"):
        wt.plan_from_arrays(topology, gen, src, ptr, ids, jobs([-1, 6, 6], [[6], [9], [9]]), **window)
    with pytest.raises(TopocastError, match="listed twice"):
        wt.plan_from_arrays(topology, gen, src, ptr, np.array([6, 6]), jobs([-1], [[6]]), **window)
