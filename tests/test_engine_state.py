"""The step and event engines and the verifier against a brute-force reference on random schedules.

The reference keeps what the engines no longer keep: a Python set of held
messages per node, and for the event engine a dense arrival time per
(node, message) pair, updated transfer by transfer exactly as the rules in
``topocast.sim.step`` and ``topocast.sim.event`` state them.  Random
schedules (valid floods, redundant ones, and broken ones: a missing link, a
sender without the data, two transfers on one link) on small networks with
every kind of target (all, one per message, several) are run through both,
and every count, violation, time and completion must be equal.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.measure.event import run_events
from topocast.measure.step import run_steps
from topocast.plans.schedule import Schedule
from topocast.sim.models import CostModel, PortModel

SPECS = ("ring:6", "path:5", "torus:3x4", "hypercube:3", "ring:2", "complete:5", "mesh:3x3")


def random_schedule(rng: np.random.Generator, topology, with_steps: bool = True) -> Schedule:
    """A flood over the links (mostly only what the receiver lacks), with some faults and some redundancy."""
    n = topology.num_nodes
    kind = rng.integers(5)
    if kind == 0:
        origin, targets = np.array([rng.integers(n)]), "all"
    elif kind == 1:
        origin, targets = np.arange(n), "all"
    elif kind == 2:
        ids = np.arange(n * n)
        origin, targets = ids % n, ids // n
    elif kind == 3:
        m = int(rng.integers(1, 2 * n))
        origin, targets = rng.integers(0, n, m), rng.integers(0, n, m)
    else:
        m = int(rng.integers(1, n + 1))
        origin = rng.integers(0, n, m)
        sizes = rng.integers(0, n, m)
        ids = [rng.choice(n, k, replace=False) for k in sizes]
        targets = (np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                   np.concatenate(ids).astype(np.int64) if sizes.sum() else np.zeros(0, np.int64))
    fault = rng.random() < 0.3
    redundancy = 0.05 if rng.random() < 0.3 else 0.0
    held = [set(np.flatnonzero(origin == v).tolist()) for v in range(n)]
    src, dst, step, ptr, first, count = [], [], [], [0], [], []
    for s in range(int(rng.integers(1, 3 * n))):
        fresh = [set() for _ in range(n)]
        for _ in range(int(rng.integers(1, 3 * n))):
            u = int(rng.integers(n))
            near = topology.indices[topology.indptr[u]:topology.indptr[u + 1]]
            v = int(rng.integers(n)) if fault and rng.random() < 0.05 or not len(near) else int(rng.choice(near))
            offer = sorted(held[u] if rng.random() < redundancy else held[u] - held[v] - fresh[v])
            if fault and rng.random() < 0.05:
                offer = [int(rng.integers(len(origin)))]
            if not offer:
                continue
            msgs = sorted(rng.choice(offer, int(rng.integers(1, len(offer) + 1)), replace=False).tolist())
            runs: list[list[int]] = []
            for m in msgs:
                if runs and runs[-1][0] + runs[-1][1] == m:
                    runs[-1][1] += 1
                else:
                    runs.append([m, 1])
            src.append(u)
            dst.append(v)
            step.append(s)
            for f, c in runs:
                first.append(f)
                count.append(c)
            ptr.append(len(first))
            fresh[v] |= set(msgs)
        for v in range(n):
            held[v] |= fresh[v]
    after_ptr = after_ids = None
    if not with_steps:
        deps = [[j for j in range(len(src)) if step[j] < step[i] and dst[j] == src[i] and rng.random() < 0.5]
                for i in range(len(src))]
        after_ptr = np.concatenate([[0], np.cumsum([len(d) for d in deps])]).astype(np.int64)
        after_ids = np.array([j for d in deps for j in d], np.int64)
    groups = rng.integers(0, 3, n).astype(np.int64) if rng.random() < 0.5 else None
    return Schedule(num_nodes=n, origin=np.asarray(origin, np.int64), src=np.array(src, np.int64),
                    dst=np.array(dst, np.int64), range_ptr=np.array(ptr, np.int64),
                    range_first=np.array(first, np.int64), range_count=np.array(count, np.int64),
                    targets=targets, step=np.array(step, np.int64) if with_steps else None, after_ptr=after_ptr,
                    after_ids=after_ids, message_bytes=float(rng.choice([1.0, 3.0])), groups=groups)


def required(schedule: Schedule) -> list[list[int]]:
    """The messages each node must end holding (with repeats, as the targets list them)."""
    need: list[list[int]] = [[] for _ in range(schedule.num_nodes)]
    ptr, ids = schedule.target_csr()
    for m in range(schedule.num_messages):
        for i in range(ptr[m], ptr[m + 1]):
            need[ids[i]].append(m)
    return need


class Tally:
    """Receipts, redundant receipts and held sets, one message at a time."""

    def __init__(self, schedule: Schedule):
        self.s = schedule
        self.held = [set() for _ in range(schedule.num_nodes)]
        for m, v in enumerate(schedule.origin.tolist()):
            self.held[v].add(m)
        self.receipts = self.redundant = 0

    def lacks(self, t: int) -> int | None:
        u = int(self.s.src[t])
        return next((m for m in self.s.messages_of(t).tolist() if m not in self.held[u]), None)

    def deliver(self, t: int) -> None:
        v = int(self.s.dst[t])
        for m in self.s.messages_of(t).tolist():
            self.receipts += 1
            self.redundant += m in self.held[v]
            self.held[v].add(m)

    def missing(self) -> tuple[int, list[int]]:
        need = required(self.s)
        short = [sum(m not in self.held[v] for m in need[v]) for v in range(self.s.num_nodes)]
        return sum(short), short


def reference_steps(topology, s: Schedule, ports: PortModel) -> dict:
    """The step engine's rules one transfer at a time: link, ports, data held before the step."""
    order = sorted(range(s.num_transfers), key=lambda t: int(s.step[t]))
    by_step: dict[int, list[int]] = {}
    for t in order:
        by_step.setdefault(int(s.step[t]), []).append(t)
    if any(len({int(s.dst[t]) for t in ts}) < len(ts) for ts in by_step.values()):  # receivers repeat
        order = sorted(order, key=lambda t: (int(s.step[t]), int(s.dst[t]), t))
    tally = Tally(s)
    need = required(s)
    complete_at = [0 if all(m in tally.held[v] for m in need[v]) else -1 for v in range(s.num_nodes)]
    half, budget = ports.duplex == "half", ports.ports
    violation = None
    for step in range(s.num_steps):
        ts = [t for t in order if s.step[t] == step]
        used: dict[tuple[int, int], int] = {}
        sends: dict[int, int] = {}
        recvs: dict[int, int] = {}
        for t in ts:
            u, v = int(s.src[t]), int(s.dst[t])
            links = int(np.count_nonzero(topology.indices[topology.indptr[u]:topology.indptr[u + 1]] == v))
            if links == 0:
                violation = (t, "no link")
            elif used.get((u, v), 0) >= links:
                violation = (t, "already carries")
            elif half and used.get((u, v), 0) + used.get((v, u), 0) >= links:
                violation = (t, "half-duplex")
            if violation:
                break
            used[(u, v)] = used.get((u, v), 0) + 1
            sends[u] = sends.get(u, 0) + 1
            recvs[v] = recvs.get(v, 0) + 1
            over_send = budget is not None and (sends[u] > budget or half and sends[u] + recvs.get(u, 0) > budget)
            over_recv = budget is not None and (recvs[v] > budget or half and recvs[v] + sends.get(v, 0) > budget)
            if over_send or over_recv:
                violation = (t, "port budget")
            elif tally.lacks(t) is not None:
                violation = (t, f"carries message {tally.lacks(t)}, which node {u} does not hold yet")
            if violation:
                break
        if violation:
            break
        for t in ts:
            tally.deliver(t)
        for v in range(s.num_nodes):
            if complete_at[v] < 0 and all(m in tally.held[v] for m in need[v]):
                complete_at[v] = step + 1
    missing, _ = tally.missing()
    return {"receipts": tally.receipts, "redundant": tally.redundant, "missing": missing, "violation": violation,
            "completion": complete_at}


def reference_events(topology, s: Schedule, cost: CostModel, ports: PortModel) -> dict:
    """The event engine's rules with a dense arrival time per (node, message)."""
    n, nt = s.num_nodes, s.num_transfers
    arrival = np.full((n, s.num_messages), math.inf)
    arrival[s.origin, np.arange(s.num_messages)] = 0.0
    half, one_port = ports.duplex == "half", ports.ports is not None
    link_free = np.zeros(topology.num_arcs)
    node_send, node_recv = np.zeros(n), np.zeros(n)
    start, finish = np.full(nt, np.nan), np.full(nt, np.nan)
    tally = Tally(s)
    dep_ready = np.zeros(nt)
    if s.after_ptr is None:
        queue = sorted(range(nt), key=lambda t: int(s.step[t]))
    else:
        waiting = np.diff(s.after_ptr).tolist()
        succ: list[list[int]] = [[] for _ in range(nt)]
        for t in range(nt):
            for d in s.after_ids[s.after_ptr[t]:s.after_ptr[t + 1]]:
                succ[int(d)].append(t)
        ready = [(0.0, t) for t in range(nt) if waiting[t] == 0]
    violation = None
    while True:
        if s.after_ptr is None:
            if not queue:
                break
            t = queue.pop(0)
        else:
            if not ready:
                break
            ready.sort()
            t = ready.pop(0)[1]
        u, v = int(s.src[t]), int(s.dst[t])
        arcs = [a for a in range(topology.indptr[u], topology.indptr[u + 1]) if topology.indices[a] == v]
        if not arcs:
            violation = (t, "no link")
            break
        def channel(a):
            return min(a, int(topology.reverse_arc[a])) if half else a
        e = min(arcs, key=lambda a: (link_free[channel(a)], a))
        msgs = s.messages_of(t).tolist()
        data = [arrival[u, m] for m in msgs]
        if any(a == math.inf for a in data):
            violation = (t, f"carries message {tally.lacks(t)}, which node {u} never receives before it")
            break
        begin = max([dep_ready[t], link_free[channel(e)], *data])
        if one_port:
            begin = max(begin, node_send[u], node_recv[v])
        duration = cost.startup + len(msgs) * s.message_bytes * cost.per_byte
        link_free[channel(e)] = begin + duration
        if one_port:
            node_send[u] = node_recv[v] = begin + duration
        start[t], finish[t] = begin, begin + duration + cost.per_hop
        for m in msgs:
            arrival[v, m] = min(arrival[v, m], finish[t])
        tally.deliver(t)
        if s.after_ptr is not None:
            for w in succ[t]:
                dep_ready[w] = max(dep_ready[w], finish[t])
                waiting[w] -= 1
                if waiting[w] == 0:
                    ready.append((dep_ready[w], w))
    need = required(s)
    completion = [max([0.0, *(arrival[v, m] for m in need[v])]) for v in range(n)]
    own = None
    if s.groups is not None:
        home = s.groups[s.origin]
        own = [max([0.0, *(arrival[v, m] for m in np.flatnonzero(home == s.groups[v]))]) for v in range(n)]
    missing, _ = tally.missing()
    return {"receipts": tally.receipts, "redundant": tally.redundant, "missing": missing, "violation": violation,
            "start": start, "finish": finish, "completion": completion, "own": own, "arrival": arrival}


def _same_violation(found: str | None, expected) -> None:
    if expected is None:
        assert found is None or "ends holding" in found or "redundant" in found, found
    else:
        t, text = expected
        assert found is not None and found.startswith(f"transfer {t} ") and text in found, (found, expected)


PORTS = (PortModel(), PortModel.one_port(), PortModel(None, "half"), PortModel(1, "half"))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(SPECS), st.sampled_from(PORTS))
def test_step_engine_and_verifier_equal_the_reference(seed, spec, ports):
    topology = tc.build(spec)
    schedule = random_schedule(np.random.default_rng(seed), topology)
    run = run_steps(topology, schedule, ports)
    ref = reference_steps(topology, schedule, ports)
    v = run.verification
    assert (v.receipts, v.redundant_receipts, v.missing_deliveries) == (ref["receipts"], ref["redundant"],
                                                                        ref["missing"])
    _same_violation(v.first_violation, ref["violation"])
    assert run.completion_step.tolist() == ref["completion"]
    assert v.exactly_once == (ref["missing"] == 0 and ref["redundant"] == 0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(SPECS), st.sampled_from(PORTS), st.booleans())
def test_event_engine_and_verifier_equal_the_reference(seed, spec, ports, with_steps):
    topology = tc.build(spec)
    schedule = random_schedule(np.random.default_rng(seed), topology, with_steps)
    cost = CostModel(startup=1.0, per_byte=0.5, per_hop=0.25)
    run = run_events(topology, schedule, cost, ports)
    ref = reference_events(topology, schedule, cost, ports)
    v = run.verification
    assert (v.receipts, v.redundant_receipts, v.missing_deliveries) == (ref["receipts"], ref["redundant"],
                                                                        ref["missing"])
    _same_violation(v.first_violation, ref["violation"])
    np.testing.assert_array_equal(run.start, ref["start"])
    np.testing.assert_array_equal(run.finish, ref["finish"])
    np.testing.assert_array_equal(run.completion_time, ref["completion"])
    np.testing.assert_array_equal(run.arrival, ref["arrival"])
    if schedule.groups is not None:
        np.testing.assert_array_equal(run.group_completion_time, ref["own"])


def test_a_node_receiving_twice_takes_the_earlier_arrival():
    """Node 2 gets the message over 0 -> 1 -> 2 (processed first, arrives at 2) and then directly from 0 in
    a later step (processed later, arrives at 1): it holds the message from time 1."""
    topology = tc.build("complete:3")
    s = Schedule(num_nodes=3, origin=np.array([0]), src=np.array([0, 1, 0]), dst=np.array([1, 2, 2]),
                 range_ptr=np.arange(4), range_first=np.zeros(3, np.int64), range_count=np.ones(3, np.int64),
                 targets="all", step=np.array([0, 1, 5]), message_bytes=1.0)
    run = run_events(topology, s, CostModel(startup=1.0, per_byte=0.0, per_hop=0.0), PortModel())
    assert run.finish.tolist() == [1.0, 2.0, 1.0]
    assert run.verification.redundant_receipts == 1 and not run.verification.exactly_once
    assert run.completion_time.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("spec", ["torus:4x5", "hypercube:4"])
def test_group_completion_equals_the_dense_arrival_matrix(spec):
    """The on-the-fly group completion against the dense arrival matrix computed from the trace."""
    from topocast.algorithms.generic_allgather import bfs_trees_allgather
    from topocast.measure.event import group_completion

    topology = tc.build(spec)
    groups = np.arange(topology.num_nodes) % 3
    s = Schedule(**{**bfs_trees_allgather(topology).__dict__, "groups": groups})
    run = run_events(topology, s, CostModel(), PortModel())
    assert float(run.group_completion_time.mean()) == group_completion(run.arrival, s)
    assert np.array_equal(run.completion_time, run.arrival.max(axis=1))
