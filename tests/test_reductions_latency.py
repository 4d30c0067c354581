"""Latency-bound reductions: recursive doubling on any network, the one-shot direct exchange on complete graphs.

Closed forms derived here: recursive doubling swaps the whole vector ``log2 p`` times (``p`` the largest power
of two <= ``N``), plus a hand-over step before and a copy step after when ``N != p``; the direct allreduce is one
step of ``m/N`` per link, the receiver adding ``N - 1`` partials one at a time, then one step of copies:
``2 alpha + 2 m/N beta + (N-1) m/N gamma`` (the reduce-scatter stops after the first step).
"""

from __future__ import annotations

import numpy as np
import pytest

import topocast as tc
from topocast.algorithms import reductions_latency as L
from topocast.verify.reduction import verify_reduction


@pytest.mark.parametrize("spec", ["hypercube:4", "complete:12", "complete:2", "ring:7", "torus:6x6",
                                  "galaxyfly:n=3,q=3,a=2", "mesh:3x5"])
def test_recursive_doubling_is_verified_and_takes_log2_steps(spec):
    topology = tc.build(spec)
    n = topology.num_nodes
    s = L.recursive_doubling_allreduce(topology, message_bytes=4096.0)
    p = 1 << (n.bit_length() - 1)
    logical = (p.bit_length() - 1) + (2 if n != p else 0)
    if topology.family in ("hypercube", "complete"):
        assert s.num_steps == logical
    for method in ("exact", "fingerprint"):
        check = verify_reduction(s, method=method)
        assert check.complete and check.first_violation is None and check.redundant_receipts == 0, check
    run = tc.run(spec, "allreduce-recursive-doubling", engine="step", message_bytes=4096.0)
    assert run.verification.verified and run.metrics["lower_bound"] <= run.metrics["steps"]


def test_recursive_doubling_sends_the_whole_vector_every_step():
    s = L.recursive_doubling_allreduce(tc.build("hypercube:5"), message_bytes=1024.0)
    assert s.num_messages == 1 and np.all(s.range_count == 1) and np.all(s.combine)
    assert np.all(np.bincount(s.src) == 5) and np.all(np.bincount(s.dst) == 5)


def test_recursive_doubling_is_refused_on_the_event_engine():
    with pytest.raises(tc.TopocastError, match="engine"):
        tc.run("hypercube:3", "allreduce-recursive-doubling", engine="event")


@pytest.mark.parametrize("n", [2, 5, 8, 13])
def test_the_direct_exchange_takes_its_closed_form_to_the_last_digit(n):
    alpha, beta, gamma, m = 1.5e-6, 2e-10, 7e-11, 1000.0 * n
    common = dict(engine="event", message_bytes=m, startup=alpha, per_byte=beta, per_byte_reduce=gamma)
    run = tc.run(f"complete:{n}", "allreduce-direct", **common)
    assert run.verification.verified
    assert run.metrics["time"] == pytest.approx(2 * alpha + 2 * m / n * beta + (n - 1) * m / n * gamma, rel=1e-12)
    assert run.metrics["lower_bound"] <= run.metrics["time"] * (1 + 1e-12)
    run = tc.run(f"complete:{n}", "reduce-scatter-direct", **common)
    assert run.verification.verified
    assert run.metrics["time"] == pytest.approx(alpha + m / n * beta + (n - 1) * m / n * gamma, rel=1e-12)


@pytest.mark.parametrize("collective", ["allreduce", "reduce-scatter"])
def test_the_direct_exchange_is_one_step_per_half_and_verified(collective):
    s = L.direct(tc.build("complete:9"), collective, message_bytes=900.0, chunks=2)
    assert s.num_steps == (2 if collective == "allreduce" else 1)
    assert s.num_transfers == 9 * 8 * s.num_steps
    for method in ("exact", "fingerprint"):
        check = verify_reduction(s, method=method)
        assert check.complete and check.first_violation is None, check
    assert tc.run("complete:9", f"{collective}-direct", engine="step").verification.verified


def test_the_direct_exchange_is_refused_off_complete_graphs_in_one_line():
    with pytest.raises(tc.TopocastError, match="complete"):
        L.direct(tc.build("ring:6"), "allreduce", 1024.0, 1)
    with pytest.raises(tc.TopocastError, match="chunks"):
        L.direct(tc.build("complete:6"), "allreduce", 4.0, 1)
