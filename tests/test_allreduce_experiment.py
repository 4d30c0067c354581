"""The allreduce study: its verdicts come from the runs and can go either way; its winners are the minima."""

from __future__ import annotations

from topocast.experiments import allreduce as A
from topocast.infra.progress import Progress


def _row(spec, size, name, time, verified=True):
    return {"spec": spec, "family": spec.split(":")[0], "nodes": 8, "bytes": size, "algorithm": name,
            "verified": verified, "time_us": time, "bound_us": 1.0, "bound_kind": "latency"}


def test_the_claims_follow_the_numbers_both_ways():
    good = [_row("ring:8", A.SMALL, "allreduce-ring", 10), _row("ring:8", A.SMALL, "allreduce-halving-doubling", 5),
            _row("ring:8", A.LARGE, "allreduce-ring", 100), _row("ring:8", A.LARGE, "allreduce-halving-doubling", 95)]
    assert [c.confirmed for c in A.claims(good)] == [True, True, True]
    bad = [_row("ring:8", A.SMALL, "allreduce-ring", 4), _row("ring:8", A.SMALL, "allreduce-halving-doubling", 5),
           _row("ring:8", A.LARGE, "allreduce-ring", 120), _row("ring:8", A.LARGE, "allreduce-halving-doubling", 100,
                                                                 verified=False)]
    assert [c.confirmed for c in A.claims(bad)] == [False, False, False]


def test_a_small_study_runs_verified_and_names_the_fastest(monkeypatch):
    monkeypatch.setattr(A, "NETWORKS_QUICK", ["hypercube:3", "torus:3x3"])
    rows = A.measure(True, Progress(enabled=False))
    assert rows and all(r["verified"] and r["time_us"] >= r["bound_us"] * (1 - 1e-12) for r in rows)
    for (spec, size), best in A.winners(rows).items():
        assert best["time_us"] == min(r["time_us"] for r in rows if r["spec"] == spec and r["bytes"] == size)
    names = {r["algorithm"] for r in rows if r["spec"] == "hypercube:3"}
    assert {"allreduce-ring", "allreduce-halving-doubling", "allreduce-binomial", "allreduce-bfs-tree"} <= names
    assert "allreduce-torus" in {r["algorithm"] for r in rows if r["spec"] == "torus:3x3"}
