"""The fast reads and the block-by-block verifier against plain oracles written here.

* reads: for each transfer, the transfers into its sender of an earlier step (relay hops excepted) that
  share a block with it, found by brute force over all pairs of transfers, in the documented order;
* verification of an engine's timing: every (node, block) as a multiset of contributors
  (``collections.Counter``), the events replayed in time order (receipts before reads at one time, then by
  transfer), on random timings: the exact and fingerprint methods must find the same missing count and
  verdict as this replay when it counts nothing twice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms import reductions as R
from topocast.plans.reads import reduction_reads
from topocast.plans.schedule import ScheduleBuilder
from topocast.verify.reduction import verify_reduction


def brute_reads(schedule) -> list[list[int]]:
    forward = schedule.forward if schedule.forward is not None else np.full(schedule.num_transfers, -1)
    relay = schedule.relay_hops
    blocks = [schedule.messages_of(t).tolist() for t in range(schedule.num_transfers)]
    out = []
    for t in range(schedule.num_transfers):
        if forward[t] >= 0:
            out.append([int(forward[t])])
            continue
        found: list[int] = []
        for b in blocks[t]:  # the transfer's blocks in the order it names them
            earlier = [f for f in range(schedule.num_transfers) if not relay[f] and schedule.dst[f] == schedule.src[t]
                       and schedule.step[f] < schedule.step[t] and b in blocks[f]]
            for f in sorted(earlier, key=lambda f: (schedule.step[f], f)):
                if f not in found:
                    found.append(f)
        out.append(found)
    return out


@st.composite
def schedules(draw):
    n = draw(st.integers(2, 7))
    m = draw(st.integers(1, 30))  # many blocks and few transfers: the sparse receipt table
    nt = draw(st.integers(1, 25))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    per = rng.integers(1, 4, nt)
    first = rng.integers(0, m, int(per.sum()))
    count = np.minimum(rng.integers(1, 4, len(first)), m - first)
    b = ScheduleBuilder(n, origin=rng.integers(0, n, m), collective="allreduce")
    b.add_ranges(src=rng.integers(0, n, nt), dst=rng.integers(0, n, nt), ranges_per_transfer=per, first=first,
                 count=count, step=rng.integers(0, 5, nt), combine=rng.random(nt) < 0.5)
    s = b.build()
    if draw(st.booleans()):  # some transfers carry on the payload of the one before (relay hops)
        forward = np.full(nt, -1)
        for t in range(1, nt):
            if s.dst[t - 1] == s.src[t] and rng.random() < 0.5:
                forward[t] = t - 1
        s = replace(s, forward=forward)
    return s


@settings(max_examples=150, deadline=None)
@given(schedules())
def test_reads_are_the_earlier_receipts_of_the_blocks_at_the_sender(schedule):
    ptr, ids = reduction_reads(schedule)
    found = [ids[ptr[t]:ptr[t + 1]].tolist() for t in range(schedule.num_transfers)]
    assert found == brute_reads(schedule)


@pytest.mark.parametrize(("spec", "plan", "kwargs"), [
    ("ring:6", R.ring_allreduce, {}), ("torus:4x4", R.ring_allreduce, {"chunks": 2}),
    ("hypercube:3", R.halving_doubling_allreduce, {}), ("torus:3x5", R.torus_reduce_scatter, {}),
    ("complete:8", R.double_binary_tree_allreduce, {"chunks": 4}), ("mesh:3x5", R.bfs_tree_reduce, {"root": 7}),
])
def test_registered_plans_read_what_the_brute_force_finds(spec, plan, kwargs):
    schedule = plan(tc.build(spec), **kwargs)
    ptr, ids = reduction_reads(schedule)
    assert [ids[ptr[t]:ptr[t + 1]].tolist() for t in range(schedule.num_transfers)] == brute_reads(schedule)


def time_ordered(schedule, send, recv):
    """Final multisets of a replay in time order (receipts before reads at one time, then by transfer), and
    whether some receipt added a contributor its receiver held."""
    n, m = schedule.num_nodes, schedule.num_messages
    state = [[Counter({v: 1}) for _ in range(m)] for v in range(n)]
    events = sorted([(send[t], 1, t) for t in range(schedule.num_transfers)] +
                    [(recv[t], 0, t) for t in range(schedule.num_transfers)])
    taken: dict[int, list] = {}
    twice = False
    for _, kind, t in events:
        blocks = schedule.messages_of(t).tolist()
        if kind == 1:
            taken[t] = [Counter(state[schedule.src[t]][b]) for b in blocks]
            continue
        v = schedule.dst[t]
        for b, part in zip(blocks, taken.pop(t), strict=True):
            if schedule.combine[t]:
                twice |= bool(set(state[v][b]) & set(part))
                state[v][b] = state[v][b] + part
            else:
                state[v][b] = part
    return state, twice


TIMED = [
    ("ring:6", R.ring_allreduce, {}), ("torus:4x4", R.ring_allreduce, {"chunks": 2}),
    ("hypercube:3", R.halving_doubling_allreduce, {}), ("complete:7", R.halving_doubling_allreduce, {}),
    ("torus:3x5", R.torus_reduce_scatter, {"chunks": 2}), ("mesh:3x5", R.bfs_tree_reduce, {"root": 7}),
]


def timing(schedule, seed: int):
    """Send and receive times: in step order (seed 0 mod 3), with some reads before their data lands (1), or
    with some reads after the whole run's all-gather reached their sender (2: a partial counted twice)."""
    rng = np.random.default_rng(seed)
    send = schedule.step * 2.0 + rng.uniform(0, 0.4, schedule.num_transfers)
    moved = rng.random(schedule.num_transfers) < 0.15
    if seed % 3 == 1:
        send -= 1.5 * moved
    if seed % 3 == 2:
        send += 2.0 * schedule.num_steps * moved
    return send, send + 0.5 + rng.integers(0, 2, schedule.num_transfers) * (seed % 3 != 0)


def outcome(schedule, send, recv) -> tuple[int, bool]:
    """Required (node, block) pairs not holding every contribution exactly once after the replay in time
    order, and whether it counted a contribution twice on the way."""
    state, twice = time_ordered(schedule, send, recv)
    full = Counter(range(schedule.num_nodes))
    need = ([(v, b) for b in range(schedule.num_messages) for v in range(schedule.num_nodes)]
            if isinstance(schedule.targets, str) else
            [(int(schedule.targets[b]), b) for b in range(schedule.num_messages)])
    return sum(state[v][b] != full for v, b in need), twice


@pytest.mark.parametrize(("spec", "plan", "kwargs"), TIMED)
@pytest.mark.parametrize("seed", range(6))
def test_a_checked_run_agrees_with_a_replay_in_time_order(spec, plan, kwargs, seed):
    schedule = plan(tc.build(spec), **kwargs)
    send, recv = timing(schedule, seed)
    short, twice = outcome(schedule, send, recv)
    finger = verify_reduction(schedule, send, recv, method="fingerprint")
    assert finger.missing_deliveries == short and finger.complete == (short == 0)
    exact = verify_reduction(schedule, send, recv, method="exact")
    if not twice:
        assert exact.missing_deliveries == short and exact.complete == (short == 0)
        assert (exact.first_violation is None) == (short == 0)
    else:  # the step order counts nothing twice (the plans are verified), so the run's replay is named
        assert "counted twice" in exact.first_violation


def test_the_timings_above_give_clean_runs_missing_contributions_and_double_counts():
    seen = set()
    for spec, plan, kwargs in TIMED:
        schedule = plan(tc.build(spec), **kwargs)
        for seed in range(6):
            short, twice = outcome(schedule, *timing(schedule, seed))
            seen.add("twice" if twice else "short" if short else "clean")
    assert seen == {"clean", "short", "twice"}
