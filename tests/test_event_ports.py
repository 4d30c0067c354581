"""The event engine's port limit: with P ports a node sends (and receives) at most P transfers at once."""

from __future__ import annotations

import math

import pytest

import topocast as tc


@pytest.mark.parametrize("n", [5, 8])
@pytest.mark.parametrize("p", [1, 2, 3, 4, 7])
def test_a_star_broadcast_takes_ceil_of_leaves_over_ports_rounds(n, p):
    """From the centre of complete:N, the BFS tree sends N - 1 transfers; P at a time, each alpha + m beta."""
    alpha, beta, m = 1e-6, 1e-9, 1000.0
    run = tc.run(f"complete:{n}", "broadcast-bfs-tree", engine="event", ports=str(p), message_bytes=m,
                 startup=alpha, per_byte=beta)
    assert run.verified
    rounds = math.ceil((n - 1) / min(p, n - 1))
    assert run.metrics["time"] == pytest.approx(rounds * (alpha + m * beta), rel=1e-12)
    assert run.metrics["lower_bound"] <= run.metrics["time"] * (1 + 1e-12)


def test_receive_ports_are_limited_too():
    """A reduce to the centre of complete:6: five partials arrive, P at a time."""
    alpha, beta, m = 1e-6, 1e-9, 1000.0
    for p in (1, 2, 5):
        run = tc.run("complete:6", "reduce-bfs-tree", engine="event", ports=str(p), message_bytes=m, startup=alpha,
                     per_byte=beta)
        assert run.verified
        assert run.metrics["time"] == pytest.approx(math.ceil(5 / p) * (alpha + m * beta), rel=1e-12)
