"""The greedy planned for P ports: closed forms derived here for a star and complete graphs, and never slower
than one port."""

from __future__ import annotations

import math

import numpy as np
import pytest

import topocast as tc
from topocast.synthesis import synthesize

#: one whole message per transfer, no hop latency: every transfer lasts tau = t_s + m t_w = 2 us
WHOLE = {"chunks": 1, "per_hop": 0, "startup": 1e-6, "per_byte": 1e-9, "message_bytes": 1000, "known": False}
TAU = 2e-6


def _star(n: int) -> tc.Topology:
    leaves = np.arange(1, n)
    return tc.Topology.from_arcs("custom", {}, n, np.concatenate([np.zeros(n - 1, np.int64), leaves]),
                                 np.concatenate([leaves, np.zeros(n - 1, np.int64)]))


@pytest.mark.parametrize("n,ports", [(9, 1), (9, 2), (9, 3), (12, 2), (12, 5)])
def test_star_broadcast_takes_ceil_leaves_over_ports_rounds(n, ports):
    # the centre reaches every leaf itself, P at a time: ceil((N-1)/P) transfers in a row
    s = synthesize(_star(n), "broadcast", ports=ports, **WHOLE)
    assert s.result.verified
    assert s.measured == pytest.approx(math.ceil((n - 1) / ports) * TAU, rel=1e-9)


@pytest.mark.parametrize("n,ports", [(8, 1), (8, 2), (9, 2), (16, 2), (16, 3), (27, 2)])
def test_complete_graph_broadcast_takes_log_base_p_plus_one_rounds(n, ports):
    # informed nodes each inform P more per round: (P+1)^r >= N, and no schedule does better (doubling bound)
    s = synthesize(f"complete:{n}", "broadcast", ports=ports, **WHOLE)
    rounds = math.ceil(math.log(n) / math.log(ports + 1) - 1e-12)
    assert s.measured == pytest.approx(rounds * TAU, rel=1e-9)
    assert s.measured >= s.lower_bound * (1 - 1e-12)


@pytest.mark.parametrize("spec,collective", [("torus:4x4", "allgather"), ("hypercube:4", "allgather"),
                                             ("complete:8", "allgather"), ("ring:8", "alltoall"),
                                             ("torus:4x4", "broadcast"), ("mesh:3x3", "alltoall")])
def test_two_ports_never_slower_than_one(spec, collective):
    one = synthesize(spec, collective, ports=1, restarts=1, known=False)
    two = synthesize(spec, collective, ports=2, restarts=1, known=False)
    assert two.result.verified and two.model["ports"] == 2
    assert two.measured <= one.measured * (1 + 1e-12)
    assert any(c.get("planned_ports") == 2 for c in two.candidates)


def test_exact_program_refuses_more_than_one_port():
    with pytest.raises(tc.TopocastError, match="exact"):
        synthesize("ring:4", "allgather", ports=2, exact=True, known=False)
