"""Reductions on a degraded network (issue 33, item 3): the generic ones on the surviving graph while it still
joins every router (verified by the shared reduction verifier, steps worked out by hand on a cut ring, the bound
recomputed), synthesised there too, and the one-line refusals of what has no promise yet."""

from __future__ import annotations

import pytest

import topocast as tc
from topocast.synthesis import replay, synthesize


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
    cases = (("allreduce-ring", "links=0-1", "built for the intact network"),
             ("allreduce-bfs-tree", "routers=2;", "failed routers: 1"),
             ("allreduce-bfs-tree", "links=0-1;0-4;0-3;0-12", "parts of healthy nodes: 2"))
    for algorithm, faults, match in cases:
        with pytest.raises(tc.TopocastError, match=match) as err:
            tc.run("torus:4x4", algorithm, faults=faults)
        assert "\n" not in str(err.value)
    with pytest.raises(tc.TopocastError, match="failed routers: 1"):
        synthesize("torus:4x4", "allreduce", faults="routers=2;")
