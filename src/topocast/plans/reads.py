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

from ..infra.heap import grow
from .schedule import Schedule, by_step

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(cache=True, inline="always")
def _slot(keys, key, shift):
    """Where (node, block) ``key`` lives in the receipt table: ``key`` itself when the table is dense (no
    ``keys``), else its open-addressing slot (where it is, or the empty one where it goes)."""
    if len(keys) == 0:
        return key
    top = len(keys) - 1
    i = np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(shift))
    while keys[i] != -1 and keys[i] != key:
        i = (i + 1) & top
    return i


@nb.njit(cache=True)
def _sweep(order, src, dst, range_ptr, first, count, step, relay, forward, num_blocks, keys, shift, last, prev,
           who, stamp, ids, sizes):
    """The reads of every transfer, taking the transfers in ``order`` (by step): a transfer reads every
    receipt of its blocks at its sender listed so far, and a step's receipts are listed once the whole step
    has read.  Writes the number of reads of each position of ``order`` into ``sizes``; returns a buffer
    holding the ids in that order first (``ids`` or a larger copy) and how many it holds.

    ``last[slot]``: the latest receipt (an index into ``prev`` and ``who``) of the (node, block) in ``slot``,
    the receipts before it by ``prev``; ``keys`` the table's keys (unused when dense)."""
    dense = len(keys) == 0
    nt = len(order)
    walk = np.empty(16, np.int64)
    filled = 0
    listed = 0
    lo = 0
    while lo < nt:
        hi = lo
        while hi < nt and step[order[hi]] == step[order[lo]]:
            hi += 1
        for p in range(lo, hi):             # the step reads what earlier steps brought
            t = order[p]
            if forward[t] >= 0:
                if filled == len(ids):
                    ids = grow(ids, filled)
                ids[filled] = forward[t]
                filled += 1
                sizes[p] = 1
                continue
            begin = filled
            base = src[t] * num_blocks
            for r in range(range_ptr[t], range_ptr[t + 1]):
                for b in range(first[r], first[r] + count[r]):
                    i = _slot(keys, base + b, shift)
                    if not dense and keys[i] == -1:
                        continue
                    k = 0                   # the receipts of (sender, b), latest first, then taken oldest first
                    e = last[i]
                    while e >= 0:
                        if k == len(walk):
                            walk = grow(walk, k)
                        walk[k] = who[e]
                        k += 1
                        e = prev[e]
                    for j in range(k - 1, -1, -1):
                        f = walk[j]
                        if stamp[f] != t:
                            stamp[f] = t
                            if filled == len(ids):
                                ids = grow(ids, filled)
                            ids[filled] = f
                            filled += 1
            sizes[p] = filled - begin
        for p in range(lo, hi):             # then its receipts are listed
            t = order[p]
            if relay[t]:
                continue
            base = dst[t] * num_blocks
            for r in range(range_ptr[t], range_ptr[t + 1]):
                for b in range(first[r], first[r] + count[r]):
                    i = _slot(keys, base + b, shift)
                    if not dense:
                        keys[i] = base + b
                    prev[listed] = last[i]
                    who[listed] = t
                    last[i] = listed
                    listed += 1
        lo = hi
    return ids, filled



@nb.njit(cache=True)
def _identity(order):
    """Whether ``order`` is ``0, 1, 2, ...``."""
    p = 0
    while p < len(order) and order[p] == p:
        p += 1
    return p == len(order)


@nb.njit(cache=True)
def _by_id(order, sizes, ids):
    """``(ptr, ids)`` by transfer id from the reads listed in ``order``."""
    nt = len(order)
    ptr = np.zeros(nt + 1, np.int64)
    for p in range(nt):
        ptr[order[p] + 1] = sizes[p]
    for t in range(nt):
        ptr[t + 1] += ptr[t]
    out = np.empty(len(ids), ids.dtype)
    k = 0
    for p in range(nt):
        t = order[p]
        out[ptr[t]:ptr[t] + sizes[p]] = ids[k:k + sizes[p]]
        k += sizes[p]
    return ptr, out


def reduction_reads(schedule: Schedule, order: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per transfer of a reduction, the transfers it reads: ``ids[ptr[t]:ptr[t + 1]]``.

    Parameters
    ----------
    schedule : Schedule
        A reduction schedule.
    order : numpy.ndarray, optional
        ``numpy.argsort(schedule.step, kind="stable")``, when the caller has it.

    Returns
    -------
    tuple of numpy.ndarray
        ``(ptr, ids)``: ``ptr`` int64, ``ids`` int32 where every transfer id fits (half the memory), else
        int64.

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
    step = np.asarray(schedule.step, np.int64)
    order = by_step(step) if order is None else order
    m = schedule.num_messages
    receipts = int(schedule.range_count.sum())  # at most this many (node, block) receipts to list
    index = np.int32 if max(receipts, nt) < 2 ** 31 - 1 else np.int64
    if n * m <= 2 * receipts + n:  # a dense table (every reduction that delivers: N - 1 receipts per block)
        keys, last, shift = np.zeros(0, np.int64), np.full(n * m, -1, index), 0
    else:
        bits = max(1, int(2 * receipts).bit_length())
        keys, last, shift = np.full(1 << bits, -1, np.int64), np.full(1 << bits, -1, index), 64 - bits
    in_order = _identity(order)
    sizes = ptr[1:] if in_order else np.empty(nt, np.int64)
    # room for two reads a transfer, more when needed; what is never written takes no memory
    ids, filled = _sweep(order, schedule.src, schedule.dst, schedule.range_ptr, schedule.range_first,
                         schedule.range_count, step, relay, np.asarray(forward, np.int64), np.int64(m), keys,
                         np.int64(shift), last, np.empty(receipts, index), np.empty(receipts, index),
                         np.full(nt, -1, index), np.empty(2 * nt + 1, index), sizes)
    if in_order:
        np.cumsum(ptr, out=ptr)
        return ptr, ids[:filled]
    return _by_id(order, sizes, ids[:filled])
