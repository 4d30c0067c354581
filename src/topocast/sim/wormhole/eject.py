"""Eject, the flit-level kernel's stage after a worm's tail has left a position: the channel it held freed, its
copy delivered and the job that delivery releases queued, the headers waiting for the freed channel woken.

The delivery (:func:`_tail_delivers`) is the rigid kernel's too.  The
functions are inlined into the kernels (``inline="always"``).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .processors import J_NODE, PEND, _enqueue, _mark
from .state import R_AGE, R_NEXT, R_WAITS


@nb.njit(cache=True, inline="always")
def _tail_leaves(t, me, y, chans, paths, net, fifo):
    """The tail of record ``me`` left position ``y`` in cycle ``t``: the channels it frees.  ``tail-left``: the
    VC into ``y`` (allocatable from ``t + 1 + credit_delay``); ``tail-sent``: the VC it has just been sent into
    (from ``t + 1``).  At the source the injection channel, at a destination its ejection channel.  Returns
    ``(the VC freed, len(owner) + the node whose ejection channel is freed)``, -1: none."""
    freed = -1
    freed_ej = -1
    if fifo is not None and y < me.h:
        x = me.base + y + 1
        ch = paths.arc[x] * net.vcs + paths.vc[x]
        chans.owner[ch] = -1
        chans.avail[ch] = t + 1
        freed = ch
    if y == 0:
        chans.inj_free[paths.node[me.base]] += 1
    else:
        x = me.base + y
        if fifo is None:
            ch = paths.arc[x] * net.vcs + paths.vc[x]
            chans.owner[ch] = -1
            chans.avail[ch] = t + 1 + net.credit_delay
            freed = ch
        if paths.slot[x] >= 0 and net.ej_channels > 0 and (net.inter_ej or y == me.h):
            chans.ej_free[paths.node[x]] += 1
            freed_ej = len(chans.owner) + paths.node[x]
    return freed, freed_ej


@nb.njit(cache=True, inline="always")
def _tail_delivers(t, base, y, counts, paths, out, procs):
    """The tail of a worm whose route starts at path position ``base`` left position ``y`` in cycle ``t``: the
    processors' side.  At the source its node may inject again next cycle; at a destination slot the copy
    is delivered (``Out.slot_time`` the first delivery, ``Out.slot_count`` the copies) and the relay job it
    releases, if any, queued.  ``counts`` = (busy nodes, pending nodes), returned updated."""
    busy, n_pend = counts
    nodes = procs.nodes
    if y == 0:
        return busy, _mark(paths.node[base], t + 1, nodes, PEND, n_pend)
    s = paths.slot[base + y]
    if s >= 0:
        if out.slot_count[s] == 0:
            out.slot_time[s] = t
        out.slot_count[s] += 1
        jn = paths.slot_job[s]
        if jn >= 0:
            v = procs.jobs[J_NODE, jn]
            if _enqueue(jn, v, nodes, procs.jobs):
                busy += 1
            n_pend = _mark(v, t + 1, nodes, PEND, n_pend)
    return busy, n_pend


@nb.njit(cache=True, inline="always")
def _wake_waiting(t, me, freed, freed_ej, rs, waiting):
    """Trains: the headers waiting for what record ``me``'s tail freed try again, a VC from the next cycle (it
    is allocated from then), an ejection channel in this cycle if their turn in it is still to come (a
    younger worm's); the lists emptied."""
    age = rs[np.uint64(me.sl), R_AGE]
    for q in range(2):
        key = freed if q == 0 else freed_ej
        if key >= 0:
            r = waiting[key]
            while r >= 0:
                rs[r, R_NEXT] = t if q == 1 and rs[r, R_AGE] > age else t + 1
                r = rs[r, R_WAITS]
            waiting[key] = -1
