"""Classic collectives: exactly-once on many sizes, both engines, cost equal to the closed form."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.experiments.classic import CLOSED_FORMS
from topocast.sim.models import CostModel
from topocast.topology.metrics import bfs_distances, diameter

COST = dict(startup=1.5, per_byte=0.25, per_hop=0.125, message_bytes=3.0)
MODEL = CostModel(1.5, 0.25, 0.125)

grids = st.one_of(
    st.integers(2, 12).map(lambda n: f"ring:{n}"),
    st.integers(2, 9).map(lambda n: f"path:{n}"),
    st.lists(st.integers(2, 5), min_size=1, max_size=3).map(lambda d: "mesh:" + "x".join(map(str, d))),
    st.lists(st.integers(2, 5), min_size=1, max_size=3).map(lambda d: "torus:" + "x".join(map(str, d))),
)
ALGORITHMS = {
    "ring": ["broadcast-ring", "allgather-ring", "alltoall-ring"],
    "path": ["broadcast-mesh", "allgather-mesh", "alltoall-mesh"],
    "mesh": ["broadcast-mesh", "allgather-mesh", "alltoall-mesh"],
    "torus": ["broadcast-mesh", "allgather-mesh", "alltoall-mesh"],
    "hypercube": ["broadcast-binomial", "allgather-recursive-doubling", "alltoall-hypercube"],
}


def check(spec, algorithm, root=0):
    topology = tc.build(spec)
    extra = {"root": root} if algorithm.startswith("broadcast") else {}
    steps = tc.run(topology, algorithm, engine="step", **extra, **COST)
    assert steps.verified, steps.first_violation
    assert steps.metrics["exactly_once"]
    assert steps.metrics["nodes_complete"] == topology.num_nodes
    assert steps.metrics["steps"] >= steps.metrics["lower_bound"]
    timed = tc.run(topology, algorithm, engine="event", **extra, **COST)
    assert timed.verified and timed.metrics["exactly_once"]
    assert timed.metrics["time"] == pytest.approx(CLOSED_FORMS[algorithm](topology, root, 3.0, MODEL), rel=1e-12)
    assert timed.metrics["lower_bound_ratio"] >= 1 - 1e-12
    return steps, timed


@settings(max_examples=30, deadline=None)
@given(spec=grids, which=st.integers(0, 2), root_seed=st.integers(0, 10**6))
def test_grid_collectives(spec, which, root_seed):
    algorithm = ALGORITHMS[spec.split(":")[0]][which]
    topology = tc.build(spec)
    check(spec, algorithm, root=root_seed % topology.num_nodes)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("algorithm", ALGORITHMS["hypercube"])
def test_hypercube_collectives(n, algorithm):
    check(f"hypercube:{n}", algorithm, root=(5 % (1 << n)))


def test_broadcast_steps_equal_the_root_eccentricity():
    for spec in ["mesh:5x7", "torus:6x5", "ring:11", "torus:2x3x4"]:
        t = tc.build(spec)
        for root in (0, t.num_nodes // 2):
            result = tc.run(t, "broadcast-mesh" if "ring" not in spec else "broadcast-ring", root=root)
            assert result.metrics["steps"] == int(bfs_distances(t, root).max())


def test_step_counts_of_the_textbook_algorithms():
    # Grama et al. ch. 4: ring allgather and all-to-all p - 1 steps, a k1 x k2 grid (k1 - 1) + (k2 - 1),
    # hypercube recursive doubling and all-to-all log2 p
    assert tc.run("ring:10", "allgather-ring").metrics["steps"] == 9 == 10 - 1
    assert tc.run("torus:4x6", "allgather-mesh").metrics["steps"] == 3 + 5 == (4 - 1) + (6 - 1)
    assert tc.run("hypercube:6", "allgather-recursive-doubling").metrics["steps"] == 6 == int(np.log2(2 ** 6))
    assert tc.run("hypercube:6", "alltoall-hypercube").metrics["steps"] == 6 == int(np.log2(2 ** 6))
    assert tc.run("ring:8", "alltoall-ring").metrics["steps"] == 7 == 8 - 1
    assert tc.run("mesh:4x4", "alltoall-mesh").metrics["steps"] == 6 == (4 - 1) + (4 - 1)


def test_grama_closed_forms_for_square_tori():
    p, ts, tw, m = 64, 1.5, 0.25, 3.0
    kw = dict(startup=ts, per_byte=tw, per_hop=0.0, message_bytes=m)
    assert tc.run("torus:8x8", "allgather-mesh", engine="event", **kw).metrics["time"] == pytest.approx(
        2 * ts * (8 - 1) + tw * m * (p - 1))
    assert tc.run("torus:8x8", "alltoall-mesh", engine="event", **kw).metrics["time"] == pytest.approx(
        (2 * ts + tw * m * p) * (8 - 1))
    assert tc.run("hypercube:6", "alltoall-hypercube", engine="event", **kw).metrics["time"] == pytest.approx(
        (ts + tw * m * p / 2) * 6)
    assert tc.run("ring:64", "alltoall-ring", engine="event", **kw).metrics["time"] == pytest.approx(
        (ts + tw * m * p / 2) * (p - 1))


def test_algorithm_refuses_other_families_and_bad_parameters():
    with pytest.raises(tc.TopocastError, match="runs on hypercube"):
        tc.run("ring:8", "broadcast-binomial")
    with pytest.raises(tc.TopocastError, match="root"):
        tc.run("ring:8", "broadcast-ring", root=8)
    with pytest.raises(tc.TopocastError, match="unknown parameter 'bogus'"):
        tc.run("ring:8", "broadcast-ring", bogus=1)
    with pytest.raises(tc.TopocastError, match="engine"):
        tc.run("ring:8", "broadcast-ring", engine="wormhole")
    with pytest.raises(tc.TopocastError, match="ports"):
        tc.run("ring:8", "broadcast-ring", ports="zero")


def test_one_port_run_of_an_all_port_algorithm_is_rejected():
    result = tc.run("mesh:4x4", "broadcast-mesh", ports="1", root=5)
    assert not result.verified and "port budget" in result.first_violation


def test_diameter_bound_used_for_allgather():
    t = tc.build("torus:5x5")
    result = tc.run(t, "allgather-mesh")
    assert result.metrics["lower_bound"] == diameter(t)
