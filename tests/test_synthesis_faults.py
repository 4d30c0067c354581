"""Synthesis on a degraded network (issue 33, item 3): verified on the surviving graph, never slower than the
generic surviving-graph algorithm under the same model, its bound recomputed (at least the intact network's
when the degraded one still joins every node), components worked out by hand, the file replayed with its
faults, and the refusals."""

from __future__ import annotations

import json

import pytest

import topocast as tc
from topocast.cli import main
from topocast.synthesis import replay, synthesize

GENERIC = {"allgather": "allgather-bfs-trees", "broadcast": "broadcast-bfs-tree",
           "alltoall": "alltoall-shortest-paths"}


@pytest.mark.parametrize("collective", ["allgather", "broadcast", "alltoall"])
def test_a_degraded_torus_is_verified_no_slower_than_the_generic_algorithm_and_bounded_above_intact(collective):
    """torus:4x4 with 3 random failed links stays connected: the synthesised schedule reaches every node
    exactly once, takes no longer than the generic algorithm planned on the surviving graph, and its bound
    (recomputed on the degraded network) is at least the intact network's: a schedule of the degraded
    network is one of the intact network, so its optimum cannot be lower."""
    faults = "links=3,seed=1"
    t = tc.build("torus:4x4", faults=faults)
    assert tc.info(t)["connected"]
    s = synthesize("torus:4x4", collective, faults=faults, budget=5)
    generic = tc.run("torus:4x4", GENERIC[collective], engine="event", faults=faults)
    intact = synthesize("torus:4x4", collective, budget=5, known=False)
    m = s.result.metrics
    assert s.result.verified and m["exactly_once"] and m["deliveries_lost"] == 0 and m["faults"] == t.faults
    assert s.measured <= generic.metrics["time"] * (1 + 1e-12)
    assert s.lower_bound >= intact.lower_bound * (1 - 1e-12)
    assert s.measured >= s.lower_bound * (1 - 1e-12)
    assert s.summary()["faults"] == t.faults


def test_a_ring_cut_in_two_synthesises_each_half():
    """ring:8 without 0-1 and 4-5: halves {1, 2, 3, 4} and {5, 6, 7, 0}, each a path of 4 nodes.  A
    broadcast from 2 (all-port steps) takes 2 steps, its eccentricity on 1-2-3-4, and loses the 4 nodes of
    the other half; an all-gather delivers 8 x 3 = 24 of the intact 56 and loses the 32 across the cut."""
    faults = "links=0-1;4-5"
    b = synthesize("ring:8", "broadcast", faults=faults, engine="step", root=2, ports="all")
    assert b.result.verified and b.measured == 2 and b.lower_bound == 2
    assert b.result.metrics["deliveries_unreachable"] == 4 and b.result.metrics["nodes_unreachable"] == 4
    g = synthesize("ring:8", "allgather", faults=faults, budget=5)
    m = g.result.metrics
    assert g.result.verified and m["deliveries_promised"] == 56 and m["deliveries_made"] == 24
    assert m["deliveries_unreachable"] == 32 and m["deliveries_lost_connected"] == 0
    assert {c["component"] for c in g.candidates} == {0, 1}


def test_the_schedule_file_replays_on_the_degraded_network(tmp_path):
    path = tmp_path / "s.json"
    s = synthesize("ring:8", "allgather", faults="links=2-3", budget=5)
    s.write(path)
    doc = json.loads(path.read_text())
    assert doc["faults"] == "links=[2-3]" and doc["spec"] == "ring:8"
    r = replay("ring:8", path)
    assert r.verified and r.metrics["faults"] == "links=[2-3]" and r.metrics["time"] == pytest.approx(s.measured)


def test_what_cannot_be_synthesised_on_faults_is_refused_in_one_line(capsys, tmp_path):
    for collective, kwargs, match in (("reduce", {"root": 3}, "failed router"),
                                      ("allgather", {"exact": True}, "exact"),
                                      ("broadcast", {"root": 3}, "failed router")):
        with pytest.raises(tc.TopocastError, match=match) as err:
            synthesize("ring:8", collective, faults="routers=3;", **kwargs)
        assert "\n" not in str(err.value)
    with pytest.raises(SystemExit) as exit_info:
        main(["synthesize", "ring:8", "allgather", "--out", str(tmp_path / "x.json"), "--faults", "links=0-5"])
    assert exit_info.value.code == 2 and "not a link" in capsys.readouterr().err


def test_a_root_cut_off_from_everything_moves_nothing_and_is_bounded_by_zero():
    """torus:4x4 without node 0's four links: a broadcast from 0 has nobody to reach; the synthesis moves
    nothing, its bound is 0 (not the time to send the message once), and all 15 other nodes are unreachable."""
    s = synthesize("torus:4x4", "broadcast", faults="links=0-1;0-4;0-3;0-12", budget=5)
    m = s.result.metrics
    assert s.result.verified and s.measured == 0 and s.lower_bound == 0
    assert m["nodes_unreachable"] == 15 and m["deliveries_unreachable"] == 15
