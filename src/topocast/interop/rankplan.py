"""A schedule as per-rank programs: every transfer a send at its sender and a receive at its receiver, each
with the operations of the same rank it must wait for.  The MSCCL and Chakra writers share it.

A send of step ``k`` waits for the receipts that brought what it carries: the first receipt of each message
(all-gather, all-to-all, broadcast), or for a reduction every receipt of its blocks in steps before ``k``
(the latest from each peer: a peer's receipts run in order); a relay hop waits for the hop it forwards.  A
reduction's receipt of step ``k`` also waits for the sends of its blocks in steps up to ``k`` (they read the
partial it changes) and the receipts of its blocks from other peers before it (earlier steps, or earlier in
its own step: two receipts into one partial never run at once).  A send also waits
for an operation of its rank in the step before, when there is one, so that a reader
that runs every step as early as its dependencies allow finds the schedule's steps again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule

#: the most transfers a per-rank export handles
MAX_TRANSFERS = 2_000_000


@dataclass
class Op:
    """One operation of a rank: ``kind`` "send" or "recv" of transfer ``t`` with ``peer``, at ``step``."""

    kind: str
    t: int
    peer: int
    step: int
    deps: list[int] = field(default_factory=list)


@dataclass
class RankPlan:
    """Per rank its operations (in step order, sends of a step before its receipts) and, per transfer, the
    index of its send and receive among its ranks' operations and the messages it carries."""

    schedule: Schedule
    ops: list[list[Op]]
    send_op: np.ndarray
    recv_op: np.ndarray
    messages: list[np.ndarray]


def steps_of(schedule: Schedule) -> np.ndarray:
    """The step of every transfer; a schedule of dependencies gets the earliest steps they allow."""
    if schedule.step is not None:
        return np.asarray(schedule.step, dtype=np.int64)
    out = np.zeros(schedule.num_transfers, dtype=np.int64)
    ptr, ids = schedule.after_ptr, schedule.after_ids
    if ptr is None or ids is None:  # never: a Schedule has steps or dependencies
        raise TopocastError("export: the schedule has neither steps nor dependencies")
    for t in range(schedule.num_transfers):       # dependencies name earlier transfers (the builder's order)
        deps = ids[ptr[t]:ptr[t + 1]]
        if len(deps) and deps.max() >= t:
            raise TopocastError("export: dependencies must name earlier transfers")
        out[t] = int(out[deps].max()) + 1 if len(deps) else 0
    return out


def rank_plan(schedule: Schedule) -> RankPlan:
    """The per-rank programs of ``schedule`` (the module docstring)."""
    if schedule.num_transfers > MAX_TRANSFERS:
        raise TopocastError(f"export: {schedule.num_transfers:,} transfers, more than the {MAX_TRANSFERS:,} a "
                            "per-rank export writes")
    n, count = schedule.num_nodes, schedule.num_transfers
    step = steps_of(schedule)
    messages = [schedule.messages_of(t) for t in range(count)]
    forward = schedule.forward if schedule.forward is not None else np.full(count, -1, np.int64)
    relay = schedule.relay_hops
    reduction = schedule.is_reduction
    ops: list[list[Op]] = [[] for _ in range(n)]
    send_op = np.full(count, -1, dtype=np.int64)
    recv_op = np.full(count, -1, dtype=np.int64)
    first_recv: dict[tuple[int, int], int] = {}          # (rank, message) -> its first receipt's op
    last_recv: dict[tuple[int, int], dict[int, int]] = {}  # (rank, block) -> peer -> latest receipt's op
    last_send: dict[tuple[int, int], dict[int, int]] = {}  # (rank, block) -> peer -> latest send's op
    last_op: dict[int, tuple[int, int]] = {}               # rank -> (step, op) of its latest operation
    order = np.lexsort((np.arange(count), step))
    bounds = np.flatnonzero(np.diff(step[order])) + 1
    for group in np.split(order, bounds):
        for t in group.tolist():
            u, v = int(schedule.src[t]), int(schedule.dst[t])
            deps: set[int] = set()
            if forward[t] >= 0:
                deps.add(int(recv_op[forward[t]]))
            else:
                for m in messages[t].tolist():
                    if reduction:
                        deps.update(last_recv.get((u, m), {}).values())
                    elif (u, m) in first_recv:
                        deps.add(first_recv[(u, m)])
            if step[t] > 0 and last_op.get(u, (-1, -1))[0] == step[t] - 1:
                deps.add(last_op[u][1])             # keep the step: after the rank's work of the step before
            send_op[t] = len(ops[u])
            ops[u].append(Op("send", t, v, int(step[t]), sorted(deps)))
            if reduction and forward[t] < 0:
                for m in messages[t].tolist():
                    last_send.setdefault((u, m), {})[v] = int(send_op[t])
        for t in group.tolist():
            u, v = int(schedule.src[t]), int(schedule.dst[t])
            deps = set()
            if reduction and not relay[t]:
                for m in messages[t].tolist():
                    deps.update(last_send.get((v, m), {}).values())
                    deps.update(op for peer, op in last_recv.get((v, m), {}).items() if peer != u)
            recv_op[t] = len(ops[v])
            ops[v].append(Op("recv", t, u, int(step[t]), sorted(deps)))
            if reduction and not relay[t]:       # a later receipt of the step into the same partial waits for it
                for m in messages[t].tolist():
                    last_recv.setdefault((v, m), {})[u] = int(recv_op[t])
        for t in group.tolist():
            for rank, op in ((int(schedule.src[t]), send_op[t]), (int(schedule.dst[t]), recv_op[t])):
                last_op[rank] = (int(step[t]), int(op))
        for t in group.tolist():
            u, v = int(schedule.src[t]), int(schedule.dst[t])
            if relay[t]:
                continue
            if not reduction:
                for m in messages[t].tolist():
                    first_recv.setdefault((v, m), int(recv_op[t]))
    return RankPlan(schedule, ops, send_op, recv_op, messages)
