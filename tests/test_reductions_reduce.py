"""Rabenseifner's reduce (``reduce-halving``): verified on any N and root, steps and time against closed forms.

Derived here: the halving takes ``log2 p`` steps (``p`` the largest power of two <= ``N``), step ``j`` moving
``m / 2^(j+1)`` and adding it; the gather mirrors it toward the root, step ``d`` moving ``m / 2^(log2 p - d)``;
one hand-over step first when ``N != p``, and one copy to the root last when the root is one of the handed-over
nodes.  On a hypercube every transfer is one hop and the steps run back to back:
``2 log2 N alpha + 2 (N-1)/N m beta + (N-1)/N m gamma``.
"""

from __future__ import annotations

import math

import pytest

import topocast as tc
from topocast.algorithms.reduce_halving import reduce_halving
from topocast.verify.reduction import verify_reduction


@pytest.mark.parametrize(("spec", "root"), [("hypercube:3", 0), ("hypercube:4", 5), ("complete:12", 0),
                                            ("complete:12", 3), ("complete:7", 6), ("ring:6", 3),
                                            ("torus:3x5", 7), ("galaxyfly:n=3,q=3,a=2", 4), ("complete:2", 1)])
def test_reduce_halving_is_verified_on_any_n_and_root(spec, root):
    topology = tc.build(spec)
    n = topology.num_nodes
    s = reduce_halving(topology, message_bytes=512.0 * n, chunks=2, root=root)
    p = 1 << (n.bit_length() - 1)
    extra = {v for v in range(0, 2 * (n - p), 2)}
    if topology.family in ("hypercube", "complete"):
        assert s.num_steps == (n != p) + 2 * int(math.log2(p)) + (root in extra)
    for method in ("exact", "fingerprint"):
        check = verify_reduction(s, method=method)
        assert check.complete and check.first_violation is None and check.redundant_receipts == 0, check
    for engine in ("step", "event"):
        run = tc.run(spec, "reduce-halving", engine=engine, message_bytes=512.0 * n, root=root)
        assert run.verification.verified, run.verification.first_violation
        assert run.metrics["lower_bound"] <= run.metrics["steps" if engine == "step" else "time"] * (1 + 1e-12)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_reduce_halving_on_a_hypercube_takes_the_textbook_time_and_beats_the_binomial_tree(k):
    n, alpha, beta, gamma, m = 2 ** k, 1e-6, 1e-10, 3e-11, 2.0 ** 20
    common = dict(engine="event", message_bytes=m, startup=alpha, per_byte=beta, per_byte_reduce=gamma)
    run = tc.run(f"hypercube:{k}", "reduce-halving", root=n - 1, **common)
    expected = 2 * k * alpha + 2 * (n - 1) / n * m * beta + (n - 1) / n * m * gamma
    assert run.verification.verified and run.metrics["time"] == pytest.approx(expected, rel=1e-12)
    binomial = tc.run(f"hypercube:{k}", "reduce-binomial", **common)
    assert run.metrics["time"] < binomial.metrics["time"]


def test_reduce_halving_refuses_a_root_outside_and_blocks_below_a_byte():
    with pytest.raises(tc.TopocastError, match="root"):
        reduce_halving(tc.build("ring:6"), root=6)
    with pytest.raises(tc.TopocastError, match="chunks"):
        reduce_halving(tc.build("hypercube:4"), message_bytes=8.0)
