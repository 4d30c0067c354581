"""Swing on rings and tori of any sides: the peers are the paper's, every run delivers every contribution once,
the steps match the closed form derived here, and each node moves the bandwidth-optimal volume.

Closed form (derived from the method, not read off the code): a side ``k`` takes ``ceil(log2 k')`` peer steps,
``k' = k`` rounded down to even (an odd side's last node is idle in them); each odd side adds one hand-over step
before the halving and one copy step after the doubling (after the halving, for a reduce-scatter).  So
``allreduce = 2 sum ceil(log2 k'_d) + 2 o`` and ``reduce-scatter = sum ceil(log2 k'_d) + 2 o``, ``o`` the odd sides.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms import swing as S
from topocast.algorithms.grid import grid_shape
from topocast.verify.reduction import verify_reduction


def spec_of(sizes) -> str:
    return f"ring:{sizes[0]}" if len(sizes) == 1 else "torus:" + "x".join(map(str, sizes))


def closed_form_steps(sizes, collective: str) -> int:
    halving = sum(math.ceil(math.log2(k - k % 2)) for k in sizes)
    odd = sum(k % 2 for k in sizes)
    return (2 * halving if collective == "allreduce" else halving) + 2 * odd


def links_of(topology) -> set:
    return set(zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=True))


sides = st.lists(st.integers(2, 12), min_size=1, max_size=3).filter(lambda s: math.prod(s) <= 400)


@settings(max_examples=40, deadline=None)
@given(sides, st.sampled_from(["allreduce", "reduce-scatter"]), st.integers(1, 2), st.sampled_from(S.CONCURRENT))
def test_swing_on_any_sides_is_verified_and_takes_the_closed_form_steps(sizes, collective, chunks, concurrent):
    topology = tc.build(spec_of(sizes))
    n = topology.num_nodes
    m = 64.0 * n * chunks * 6
    logical = S.swing_schedule(topology, collective, m, chunks, concurrent)
    assert logical.num_steps == closed_form_steps(sizes, collective)
    assert logical.num_messages == n * chunks * (2 * len(sizes) if concurrent == "ports" else 1)
    check = verify_reduction(logical, method="exact")
    assert check.complete and check.first_violation is None and check.redundant_receipts == 0, check
    physical = S.swing(topology, collective, m, chunks, concurrent)
    assert set(zip(physical.src.tolist(), physical.dst.tolist(), strict=True)) <= links_of(topology)
    check = verify_reduction(physical, method="exact")
    assert check.complete and check.first_violation is None, check


@pytest.mark.parametrize("sizes", [(6,), (12,), (10, 6), (16,), (5,), (3, 7), (6, 6, 6)])
@pytest.mark.parametrize("first_dim, mirrored", [(0, False), (1, True)])
def test_swing_peers_are_the_papers_on_the_even_part_of_each_side(sizes, first_dim, mirrored):
    first_dim %= len(sizes)
    peers = S.swing_peers(sizes, first_dim, mirrored)
    n = math.prod(sizes)
    stride = [math.prod(sizes[d + 1:]) for d in range(len(sizes))]
    coord = np.array([[(v // stride[d]) % k for d, k in enumerate(sizes)] for v in range(n)])
    even = [k - k % 2 for k in sizes]
    active = np.all(coord < np.array(even), axis=1)
    steps_in = [0] * len(sizes)
    for peer in peers:
        assert np.all((peer >= 0) == active)
        v = np.flatnonzero(active)
        moved = coord[peer[v]] != coord[v]
        assert np.all(moved.sum(axis=1) == 1)                     # one dimension per step
        d = int(np.flatnonzero(moved[0])[0])
        if not any(steps_in):
            assert d == first_dim                                  # the collective's first dimension
        s = steps_in[d]
        steps_in[d] += 1
        x, y = coord[v, d], coord[peer[v], d]
        rho = -S.swing_distance(s) if mirrored else S.swing_distance(s)
        assert np.all(y == np.where(x % 2 == 0, x + rho, x - rho) % even[d])
        assert np.array_equal(peer[peer[v]], v)                    # a pairing
    assert steps_in == [math.ceil(math.log2(e)) for e in even]
    assert [S.swing_distance(s) for s in range(6)] == [1, -1, 3, -5, 11, -21]


@pytest.mark.parametrize("spec", ["ring:6", "ring:10", "ring:12", "torus:10x6", "torus:6x12", "torus:4x6x2"])
def test_on_even_sides_every_node_moves_the_bandwidth_optimal_volume(spec):
    """The reduce-scatter is the time reverse of an all-gather in which every node receives each other node's
    block exactly once, so every node sends exactly ``N - 1`` blocks (``(N-1)/N m``) in it, and the doubling
    mirrors that: a block sent twice or a route taken twice would show here."""
    topology = tc.build(spec)
    n = topology.num_nodes
    m = 6.0 * n
    for concurrent in S.CONCURRENT:
        for collective, phases in (("reduce-scatter", 1), ("allreduce", 2)):
            s = S.swing_schedule(topology, collective, m, 1, concurrent)
            per_transfer = np.add.reduceat(s.range_count, s.range_ptr[:-1]) * s.message_bytes
            sent = np.bincount(s.src, weights=per_transfer, minlength=n)
            received = np.bincount(s.dst, weights=per_transfer, minlength=n)
            assert np.allclose(sent, phases * (n - 1) / n * m) and np.allclose(received, phases * (n - 1) / n * m)


@pytest.mark.parametrize("k", [2, 4, 8, 32])
def test_on_a_power_of_two_ring_it_is_the_textbook_halving(k):
    """Step ``j`` of the halving moves ``k / 2^(j+1)`` blocks between every pair (disjoint halves)."""
    s = S.swing_schedule(tc.build(f"ring:{k}"), "reduce-scatter", float(k), 1, "one")
    per_transfer = np.add.reduceat(s.range_count, s.range_ptr[:-1])
    for j in range(s.num_steps):
        mine = per_transfer[s.step == j]
        assert len(mine) == k and np.all(mine == k >> (j + 1))


@pytest.mark.parametrize("spec", ["ring:5", "torus:3x5", "torus:3x3x3"])
def test_odd_sides_hand_over_to_a_neighbour_and_get_the_result_back(spec):
    topology = tc.build(spec)
    sizes, _ = grid_shape(topology)
    s = S.swing_schedule(topology, "allreduce", message_bytes=1e4, chunks=1)
    n = topology.num_nodes * 2 * len(sizes)
    odd = sum(k % 2 for k in sizes)
    links = links_of(topology)
    for j in list(range(odd)) + list(range(s.num_steps - odd, s.num_steps)):
        t = np.flatnonzero(s.step == j)
        assert all((int(u), int(v)) in links for u, v in zip(s.src[t], s.dst[t], strict=True))
        assert np.all(s.range_count[s.range_ptr[t]] == n)          # the whole vector
        assert np.all(s.combine[t] == (j < odd))


@pytest.mark.parametrize("spec", ["ring:8", "ring:16", "torus:8x8", "torus:4x4x4"])
def test_side_by_side_collectives_keep_every_port_busy(spec):
    """The multiport variant: on equal power-of-two sides of at least 4, every node sends to ``2D`` distinct
    peers in every step of the halving, one per port direction (there ``rho(s) != -rho(s)`` mod the side, so
    the mirrored collective's peer lies the other way; on a side of 6 the last step's peers, 3 away, meet)."""
    topology = tc.build(spec)
    sizes, _ = grid_shape(topology)
    s = S.swing_schedule(topology, "reduce-scatter", 1e6, 1, "ports")
    for j in range(s.num_steps):
        t = s.step == j
        assert np.all(np.bincount(s.src[t], minlength=topology.num_nodes) == 2 * len(sizes))
        assert len(set(zip(s.src[t].tolist(), s.dst[t].tolist(), strict=True))) == int(t.sum())


def test_swing_is_refused_off_tori_and_above_its_size_in_one_line():
    with pytest.raises(tc.TopocastError, match="ring or torus"):
        S.swing_schedule(tc.build("mesh:4x4"), "allreduce", 1024.0, 1)
    with pytest.raises(tc.TopocastError, match="at most"):
        S.swing_schedule(tc.build("torus:65x64"), "allreduce", 1e9, 1)
    with pytest.raises(tc.TopocastError, match="chunks"):
        S.swing_schedule(tc.build("ring:6"), "allreduce", 4.0, 1, "one")
    with pytest.raises(tc.TopocastError, match="concurrent=one"):
        S.swing_schedule(tc.build("torus:6x6x6"), "allreduce", 1024.0, 1)
    with pytest.raises(tc.TopocastError, match="concurrent"):
        S.swing_schedule(tc.build("ring:6"), "allreduce", 1024.0, 1, "two")


@pytest.mark.parametrize("spec", ["ring:6", "torus:10x6", "torus:12x12", "torus:5x5"])
def test_swing_beats_halving_doubling_on_tori_that_are_not_powers_of_two(spec):
    """Measured claim of the paper carried to any sides: Swing's peers are nearer than recursive doubling's."""
    for size in (1024.0, 2.0 ** 20):
        for concurrent in S.CONCURRENT:
            swing = tc.run(spec, "allreduce-swing", engine="event", message_bytes=size, concurrent=concurrent)
            other = tc.run(spec, "allreduce-halving-doubling", engine="event", message_bytes=size)
            assert swing.verification.verified
            assert swing.metrics["time"] < other.metrics["time"]


@pytest.mark.parametrize("spec", ["torus:8x8", "torus:12x12", "torus:10x6"])
def test_side_by_side_swing_beats_the_ring_based_torus_allreduce_at_large_vectors(spec):
    """The paper's headline (multiport Swing against the bucket algorithm on tori), measured at 16 MiB."""
    swing = tc.run(spec, "allreduce-swing", engine="event", message_bytes=2.0 ** 24)
    torus = tc.run(spec, "allreduce-torus", engine="event", message_bytes=2.0 ** 24)
    assert swing.verification.verified and swing.metrics["time"] < torus.metrics["time"]


@pytest.mark.parametrize("sizes", [(4,), (4, 4), (4, 4, 4)])
def test_on_sides_of_4_swing_takes_the_textbook_time_to_the_last_digit(sizes):
    """On sides of 4 every Swing peer (``rho`` = 1, -1) is a neighbour, so no hop is relayed.  One collective
    is recursive halving and doubling: ``2 log2 N alpha + 2 (N-1)/N m beta + (N-1)/N m gamma``.  Side by side,
    the ``2D`` collectives each move ``m / 2D`` over links of their own in every step:
    ``2 log2 N alpha + 2 (N-1)/N m/(2D) beta`` (gamma 0: the ``2D`` partials a node adds per step queue
    behind each other, which this form leaves out)."""
    spec = spec_of(sizes)
    n, dims = math.prod(sizes), len(sizes)
    alpha, beta, gamma, m = 1e-6, 1e-10, 3e-11, 2.0 ** 20
    one = tc.run(spec, "allreduce-swing", engine="event", message_bytes=m, startup=alpha, per_byte=beta,
                 per_byte_reduce=gamma, concurrent="one")
    expected = 2 * math.log2(n) * alpha + 2 * (n - 1) / n * m * beta + (n - 1) / n * m * gamma
    assert one.verification.verified and one.metrics["time"] == pytest.approx(expected, rel=1e-12)
    ports = tc.run(spec, "allreduce-swing", engine="event", message_bytes=m, startup=alpha, per_byte=beta,
                   concurrent="ports")
    expected = 2 * math.log2(n) * alpha + 2 * (n - 1) / n * m / (2 * dims) * beta
    assert ports.verification.verified and ports.metrics["time"] == pytest.approx(expected, rel=1e-12)
