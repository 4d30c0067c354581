"""What each transfer of a reduction schedule reads: the earlier transfers whose data it carries on.

In a reduction (:mod:`topocast.plans.schedule`) a transfer of step ``k`` from node
``u`` carries ``u``'s partial aggregate of each block it names, and that
partial holds every contribution ``u`` received for those blocks in steps
before ``k``.  So the transfer can start only when every such receipt has
arrived: its *reads* are the transfers into ``u`` of an earlier step that
share a block with it (relay hops excepted: a relay node keeps none of what
passes through it).  A relay hop (``forward[t] >= 0``) reads only the hop
whose payload it carries on.

The event engine waits for the reads of every transfer
(:func:`topocast.sim.event.simulate`); the verifier checks the run
independently (:func:`topocast.verify.reduction.verify_reduction`).  A
schedule with ``after`` dependencies and no steps states its order itself:
its reads are the relay hops only.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..topology.csr import bucket
from .schedule import Schedule


@nb.njit(cache=True)
def _node_receipts(u, in_ptr, in_ids, range_ptr, first, count, step, relay, steps):
    """``(block, step, transfer)`` of every block node ``u`` receives (relay hops excepted), sorted by block
    then step."""
    total = 0
    for i in range(in_ptr[u], in_ptr[u + 1]):
        t = in_ids[i]
        if not relay[t]:
            for r in range(range_ptr[t], range_ptr[t + 1]):
                total += count[r]
    block = np.empty(total, np.int64)
    when = np.empty(total, np.int64)
    who = np.empty(total, np.int64)
    k = 0
    for i in range(in_ptr[u], in_ptr[u + 1]):
        t = in_ids[i]
        if relay[t]:
            continue
        for r in range(range_ptr[t], range_ptr[t + 1]):
            for b in range(first[r], first[r] + count[r]):
                block[k] = b
                when[k] = step[t]
                who[k] = t
                k += 1
    order = np.argsort(block * (steps + 1) + when, kind="mergesort") if total else block
    return block[order], when[order], who[order]


@nb.njit(cache=True)
def _reads_of_node(u, out_ptr, out_ids, in_ptr, in_ids, range_ptr, first, count, step, relay, forward,
                   stamp, ptr, ids, write, steps):
    """Count (``write`` False: into ``ptr[t + 1]``) or write (into ``ids`` from ``ptr[t]``) the reads of every
    transfer node ``u`` sends."""
    block, when, who = _node_receipts(u, in_ptr, in_ids, range_ptr, first, count, step, relay, steps)
    for i in range(out_ptr[u], out_ptr[u + 1]):
        t = out_ids[i]
        k = ptr[t] if write else 0
        if forward[t] >= 0:
            if write:
                ids[k] = forward[t]
            else:
                ptr[t + 1] = 1
            continue
        for r in range(range_ptr[t], range_ptr[t + 1]):
            j = np.searchsorted(block, first[r])
            end = first[r] + count[r]
            while j < len(block) and block[j] < end:
                f = who[j]
                if when[j] < step[t] and stamp[f] != t:
                    stamp[f] = t
                    if write:
                        ids[k] = f
                    k += 1
                j += 1
        if not write:
            ptr[t + 1] = k


@nb.njit(cache=True)
def _all_reads(n, out_ptr, out_ids, in_ptr, in_ids, range_ptr, first, count, step, relay, forward, ptr, ids,
               write):
    stamp = np.full(len(step), -1, np.int64)  # stamp[f] == t: f is already a read of t (each pass anew)
    steps = np.int64(step.max()) + 1 if len(step) else np.int64(1)
    for u in range(n):
        _reads_of_node(u, out_ptr, out_ids, in_ptr, in_ids, range_ptr, first, count, step, relay, forward,
                       stamp, ptr, ids, write, steps)


def reduction_reads(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Per transfer of a reduction, the transfers it reads: ``ids[ptr[t]:ptr[t + 1]]``.

    Parameters
    ----------
    schedule : Schedule
        A reduction schedule.

    Returns
    -------
    tuple of numpy.ndarray
        ``(ptr, ids)``, int64.

    >>> from topocast.plans.schedule import ScheduleBuilder
    >>> b = ScheduleBuilder(3, origin=[0], collective="reduce", targets=[2])
    >>> _ = b.add(src=[0, 1], dst=[1, 2], first=0, step=[0, 1], combine=True)
    >>> [a.tolist() for a in reduction_reads(b.build())]
    [[0, 0, 1], [0]]
    """
    n, nt = schedule.num_nodes, schedule.num_transfers
    forward = schedule.forward if schedule.forward is not None else np.full(nt, -1, np.int64)
    ptr = np.zeros(nt + 1, np.int64)
    if schedule.step is None:  # dependencies order the run: only relays to add
        hops = forward >= 0
        ptr[1:] = np.cumsum(hops)
        return ptr, forward[hops].astype(np.int64)
    relay = schedule.relay_hops
    out_ptr, out_ids = bucket(schedule.src, n)
    in_ptr, in_ids = bucket(schedule.dst, n)
    args = (n, out_ptr, out_ids, in_ptr, in_ids, schedule.range_ptr, schedule.range_first, schedule.range_count,
            np.asarray(schedule.step, np.int64), relay, np.asarray(forward, np.int64))
    ids = np.zeros(1, np.int64)
    _all_reads(*args, ptr, ids, False)
    np.cumsum(ptr, out=ptr)
    ids = np.empty(max(1, int(ptr[-1])), np.int64)
    _all_reads(*args, ptr, ids, True)
    return ptr, ids[:ptr[-1]]
