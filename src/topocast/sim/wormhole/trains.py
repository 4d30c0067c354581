"""The flit-level kernel with one VC per link: trains.

A worm's flits use only the channels it holds, so only its header meets
other worms.  The kernel moves the header cycle by cycle and computes the
other flits' departures ``D(j, k)`` (flit ``j`` leaving position ``k``) a
column at a time as the header's departures make them known, by the
recursion of ``docs/simulator.md`` ("Zero-load latency"), the injection
channel as column -1: flit ``j`` leaves position ``k`` after the flit ahead
of it left it, after it arrived there, and after the flit ``depth`` ahead of
it left position ``k + 1`` (a credit).  Row ``j``'s column follows the
header's by ``grp[j] = j // depth``, so a *step* of column ``col`` computes,
for the rows that have it, column ``col - grp[j]``.  The moves each
departure makes are counted in the cycle they happen (``Trains.sched``).

Under ``tail-sent`` a buffer also holds earlier worms' flits, first in first
out; a header reserves the entries of all its flits in its next channel, so
only its rows ``j < depth`` wait for other worms' flits, the ones ``depth``
entries ahead in the channel ahead: the *virtual rows* ``j - depth``
(:func:`_virtual_rows`).  When a departure they wait for is not known yet,
the step computes only the rows that do not depend on it (a *partial* step,
``R_PART``) and completes later.

A train is visited in full only when its header may move or a partial step
may complete (``R_NEXT``); in between only its flits whose departures are
known move, and its tail (:func:`_due_moves`).  The functions are inlined
into the kernel (:func:`~.kernel._simulate_flits`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .allocate import _ahead_left, _allocate, _freed_at
from .state import (
    FAR,
    NEVER,
    R_AGE,
    R_AHEAD,
    R_COL,
    R_GOAL,
    R_HARR,
    R_HPOS,
    R_HPREV,
    R_LAST,
    R_NEXT,
    R_PART,
    R_TIN,
    R_TK,
    R_TLAST,
    R_TNEXT,
    R_VSET,
    R_WAITS,
)


@nb.njit(cache=True, inline="always")
def _train_enters(t, sl, age, rs, trn, net, fifo):
    """Inject: record ``sl``'s header enters its injection channel in cycle ``t`` (the worm's age ``age``);
    nothing else of the train is computed yet."""
    us = np.uint64(sl)
    fb = sl * (net.flits + net.depth) + net.depth
    rs[us, R_HPOS] = 0
    rs[us, R_HARR] = t
    trn.cur[fb] = t                        # the header entered the injection channel
    for k in range(fb - net.depth, fb):
        trn.cur[k] = FAR                   # no credit waits on rows j < depth (tail-left)
    rs[us, R_COL] = -2
    rs[us, R_GOAL] = -1                    # column -1 of the other rows: computed at the next visit
    rs[us, R_TK] = 0
    rs[us, R_TLAST] = -1
    rs[us, R_TNEXT] = NEVER
    rs[us, R_TIN] = t if net.flits == 1 else NEVER
    rs[us, R_LAST] = t
    rs[us, R_AGE] = age
    if fifo is not None:
        rs[us, R_PART] = -1
        rs[us, R_VSET] = 0
        rs[us, R_AHEAD] = 0


@nb.njit(cache=True, inline="always")
def _keep(ch, e, dep, age, fifo):
    """``tail-sent``: the departure ``dep`` of the ``e``-th flit sent into channel ``ch`` (of a worm of age
    ``age``), kept for the worms behind it; the channel's flits out counted up to it."""
    a = ch * fifo.ring + (e & (fifo.ring - 1))
    fifo.dep[a] = dep
    fifo.age[a] = age
    fifo.ch_out[ch] = e + 1


@nb.njit(cache=True, inline="always")
def _header_ready(me, hp, rs, paths, net, fifo):
    """The first cycle the header of train ``me`` at position ``hp`` may leave (its router pipeline over) and
    whether it is at the front of its buffer.  ``tail-sent``: once the departure of the flit ahead of it
    (``R_AHEAD``) is known it counts as the header's arrival (``NEVER`` until then)."""
    us = np.uint64(me.sl)
    if fifo is not None and rs[us, R_AHEAD] > 0:
        ahead = _ahead_left(paths.arc[me.base + hp], rs[us, R_AHEAD], fifo)
        if ahead == NEVER:
            return NEVER, False
        rs[us, R_HARR] = max(rs[us, R_HARR], ahead)
        rs[us, R_AHEAD] = 0
    return rs[us, R_HARR] + 1 + net.router_delay, True


@nb.njit(cache=True, inline="always")
def _header_departs(t, me, hp, rs, trn, paths, net, fifo):
    """The header of train ``me`` leaves position ``hp`` in cycle ``t``: the columns up to ``hp`` (the last
    position: every column) become computable.  ``tail-sent``: its departure kept if followers read it, its
    entry index into the next channel with all its flits' entries reserved there (nobody else enters before
    its tail), and the flit ahead of it there (its departure is usually known already, else ``R_AHEAD``)."""
    us = np.uint64(me.sl)
    L = net.flits
    rs[us, R_HPREV] = trn.cur[me.fb]
    trn.cur[me.fb] = t
    rs[us, R_HPOS] = hp + 1
    rs[us, R_HARR] = t + net.link_latency - 1
    rs[us, R_GOAL] = hp if hp < me.h else me.h + trn.grp[L - 1]
    if L == 1:
        trn.tail_at[me.sl * net.span + (hp & (net.span - 1))] = t
        rs[us, R_TLAST] = hp
        if hp == rs[us, R_TK]:
            rs[us, R_TNEXT] = t
    if fifo is not None:
        if hp > 0 and L - net.depth <= 0:
            _keep(paths.arc[me.base + hp], fifo.p_in[me.base + hp], t, rs[us, R_AGE], fifo)
        if hp < me.h:
            ch = paths.arc[me.base + hp + 1]
            e = fifo.ch_in[ch]
            fifo.p_in[me.base + hp + 1] = e
            fifo.ch_in[ch] += L
            ahead = _ahead_left(ch, e, fifo)
            if ahead == NEVER:
                rs[us, R_AHEAD] = e
            else:
                rs[us, R_HARR] = max(rs[us, R_HARR], ahead)


@nb.njit(cache=True, inline="always")
def _virtual_rows(col, m, j_hi, hd, me, rs, trn, paths, net, fifo):
    """``tail-sent``: the virtual rows of step ``col`` of train ``me`` (rows ``m + 1 ..`` of each group to
    compute, rows ``< j_hi``; ``hd`` the header's last departure), the flits ``depth`` entries ahead of its
    rows ``j < depth`` in the channel of position ``col + 1``: their departures, computed by those worms'
    trains in their order of entry.  Returns ``(i_to, waits)``: the step computes the rows ``j % depth`` in
    ``m + 1 .. i_to``; ``waits`` when some are not known yet (with them the rows of their group ``i`` in later
    groups wait, credits), and ``i_to <= m`` when nothing new is known (the step waits whole)."""
    us = np.uint64(me.sl)
    depth, ring = net.depth, fifo.ring
    nx = paths.arc[me.base + col + 1]
    e0 = fifo.p_in[me.base + col + 1] - depth
    known = fifo.ch_out[nx] - 1 - e0
    # the usual case: the flits ahead left before this worm's row 1 could (the last of them, the previous worm's
    # tail, at most a cycle after the header left position col, less the credit delay): none of their waits
    # binds, the virtual rows stay FAR
    e = e0 + depth - 1
    if e < 0 or (known >= depth - 1 and fifo.dep[nx * ring + (e & (ring - 1))] + net.credit_delay
                 <= (trn.cur[me.fb] if hd == col else rs[us, R_HPREV])):
        if rs[us, R_VSET] != 0:
            for jj in range(me.fb - depth, me.fb):
                trn.cur[jj] = FAR
            rs[us, R_VSET] = 0
        return depth - 1, False
    i_to = depth - 1
    waits = False
    if known < min(depth, j_hi) - 1:
        waits = True          # (tried every cycle: the wait ends by other worms' moves)
        if known <= m:
            return known, True
        i_to = known
    # virtual rows j - depth: those flits' departures minus the credit delay (a younger worm's departure in this
    # cycle counts from the next with no credit delay: it moves after this worm)
    for jj in range(m + 1, min(i_to + 1, j_hi)):
        x = e0 + jj
        a = nx * ring + (x & (ring - 1))
        trn.cur[me.fb + jj - depth] = FAR if x < 0 else _freed_at(fifo.dep[a], fifo.age[a], rs[us, R_AGE],
                                                                  net.credit_delay)
    rs[us, R_VSET] = 1
    return i_to, waits


@nb.njit(cache=True, inline="always")
def _keep_rows(col, j, end, me, rs, trn, paths, net, fifo):
    """``tail-sent``: the departures of rows ``j .. end - 1`` of step ``col`` that followers read (a worm's
    last ``depth`` flits are the only ones a follower's flits wait for), kept in their channels."""
    for jj in range(max(j, net.flits - net.depth), end):
        k = col - trn.grp[np.uint64(jj)]
        if k > 0:
            _keep(paths.arc[me.base + k], fifo.p_in[me.base + k] + jj, trn.cur[me.fb + jj], rs[np.uint64(me.sl), R_AGE],
                  fifo)


@nb.njit(cache=True, inline="always")
def _step_rows(t, col, m, i_to, hd, me, rs, trn, paths, net, fifo):
    """Step ``col`` of train ``me``: row ``j``'s column ``col - grp[j]`` for the rows that have it, those with
    ``j % depth`` in ``m + 1 .. i_to`` (all in a whole step), each departure's move counted in its cycle.
    Returns ``(the last row computed or -1, the latest departure or t)``."""
    us = np.uint64(me.sl)
    L, depth, h, span = net.flits, net.depth, me.h, net.span
    grp, cur, fb = trn.grp, trn.cur, me.fb
    rec = me.sl * span
    j_lo = max(1, (col - h) * depth)
    j_hi = min(L, (col + 2) * depth)
    i_from = m + 1
    j = j_lo
    i = j % depth
    if i > i_to:
        j += depth - i + i_from
    elif i < i_from:
        j += i_from - i
    # row j - 1's last two values and the column of the last (row j_lo - 1 is the header, or done; in a partial
    # step the row ahead of a group's first is at that row's column)
    up_col = hd if j == 1 else (h if j == j_lo else col - grp[np.uint64(min(j, L - 1))])
    jl = -1
    latest = t
    while j < j_hi:
        up_new = cur[fb + j - 1]
        # (the row ahead's column before: read only for the header's, whose last departure may be a column
        # further than a row needs)
        up_old = rs[us, R_HPREV] if j == 1 else up_new
        end = j_hi if i_from == 0 and i_to == depth - 1 else min(j_hi, j + i_to - j % depth + 1)
        for jj in range(j, end):
            k = col - grp[np.uint64(jj)]
            u = np.uint64(fb + jj)
            v = (up_new if k == up_col else up_old) + 1     # after the flit ahead
            old = cur[u]
            if k >= 0:            # after it arrived (k = 0: entered the injection channel)
                v = max(v, old + (1 if k == 0 else net.link_latency))
            if k < h:             # after a credit from position k + 1 (virtual rows j < 0: above)
                v = max(v, cur[np.uint64(fb + jj - depth)] + net.credit_delay)
            cur[u] = v
            up_new = v
            up_old = old
            up_col = k
            trn.sched[np.uint64(rec + (v & (span - 1)))] += 1
            latest = max(latest, v)
        if fifo is not None:
            _keep_rows(col, j, end, me, rs, trn, paths, net, fifo)
        jl = end - 1
        j = end - 1 - i_to + depth + i_from      # the next group's row i_from
        if j < j_hi:
            up_col = col - grp[np.uint64(j)]
    return jl, latest


@nb.njit(cache=True, inline="always")
def _tail_departure(col, me, rs, trn, net):
    """Step ``col`` computed train ``me``'s tail's departure: into the injection channel (column -1), or out of
    position ``k``, kept by position for :func:`_due_moves`."""
    us = np.uint64(me.sl)
    k = col - trn.grp[np.uint64(net.flits - 1)]
    v = np.int64(trn.cur[me.fb + net.flits - 1])
    if k == -1:
        rs[us, R_TIN] = v
    else:
        trn.tail_at[np.uint64(me.sl * net.span + (k & (net.span - 1)))] = v
        rs[us, R_TLAST] = k
        if k == rs[us, R_TK]:
            rs[us, R_TNEXT] = v


@nb.njit(cache=True, inline="always")
def _columns(t, me, front, rs, trn, paths, net, fifo):
    """The columns of the recursion train ``me``'s header's departures now determine (up to ``R_GOAL``), a
    step at a time; a partial step (``tail-sent``) ends the visit.  Returns ``(front, broken)``: ``front``
    False when rows wait for other worms' flits (the visit is tried again next cycle), ``broken`` when a
    departure lies beyond the horizon ``span`` (cannot happen with ``tail-left``)."""
    us = np.uint64(me.sl)
    depth = net.depth
    broken = False
    hd = rs[us, R_HPOS] - 1   # the header's last departure (-1: its entry into the injection channel)
    while True:
        col = rs[us, R_COL] + 1
        if col > rs[us, R_GOAL]:
            break
        m = rs[us, R_PART] if fifo is not None else -1    # rows i <= m of each group of step col done
        j_hi = min(net.flits, (col + 2) * depth)
        i_to = depth - 1
        if fifo is not None and col < me.h and max(1, (col - me.h) * depth) < depth:
            i_to, waits = _virtual_rows(col, m, j_hi, hd, me, rs, trn, paths, net, fifo)
            if waits:
                front = False
            if i_to <= m:
                break
        if i_to == depth - 1:
            rs[us, R_COL] = col
            if fifo is not None:
                rs[us, R_PART] = -1
        else:
            rs[us, R_PART] = i_to
        jl, latest = _step_rows(t, col, m, i_to, hd, me, rs, trn, paths, net, fifo)
        if latest - t >= net.span:
            broken = True
        rs[us, R_LAST] = max(rs[us, R_LAST], latest)
        if jl == net.flits - 1:
            _tail_departure(col, me, rs, trn, net)
        if i_to < depth - 1:
            break
    return front, broken


@nb.njit(cache=True, inline="always")
def _next_visit(t, me, go, wake, busy, front, rs, waiting, net, fifo):
    """The next cycle train ``me`` needs a full visit: the header may move or a pending step complete.  Until
    then its flits only follow departures already known.  When the clock frees the header, when the VC or
    ejection channel it waits for is freed (it joins that channel's list, ``waiting``: ``NEVER``), else the
    next cycle."""
    us = np.uint64(me.sl)
    if not front or rs[us, R_COL] < rs[us, R_GOAL] or (fifo is not None and rs[us, R_AHEAD] != 0):
        return t + 1
    if rs[us, R_HPOS] > me.h:
        return NEVER
    if go:
        return rs[us, R_HARR] + 1 + net.router_delay
    if wake < NEVER:
        return max(t + 1, wake)
    if busy >= 0:
        rs[us, R_WAITS] = waiting[busy]
        waiting[busy] = me.sl
        return NEVER
    return t + 1


@nb.njit(cache=True, inline="always")
def _due_moves(t, me, rs, trn, span):
    """Traverse: the moves of train ``me``'s flits due in cycle ``t`` (their departures computed ahead), and
    its tail's.  Returns ``(moves, the position the tail left or -1)``."""
    us = np.uint64(me.sl)
    rec = me.sl * span
    b = np.uint64(rec + (t & (span - 1)))
    moved = trn.sched[b]
    trn.sched[b] = 0
    tail_from = -1
    if rs[us, R_TNEXT] == t:
        k = rs[us, R_TK]
        tail_from = k
        rs[us, R_TK] = k + 1
        rs[us, R_TNEXT] = trn.tail_at[np.uint64(rec + ((k + 1) & (span - 1)))] if k < rs[us, R_TLAST] else NEVER
    return moved, tail_from


@nb.njit(cache=True, inline="always")
def _visit_train(t, me, rs, trn, chans, paths, net, fifo):
    """One visit of train ``me`` (:class:`~.state.Visit`) in cycle ``t``: in full (``R_NEXT`` due) route and
    allocate its header, move it, compute the columns its departures determine and when to visit in full
    next; always the moves due now.  Returns ``(flits moved, the position its tail left or -1, broken)``."""
    us = np.uint64(me.sl)
    moved = 0
    broken = False
    if rs[us, R_NEXT] <= t:
        hp = rs[us, R_HPOS]
        go = False
        wake = NEVER
        busy = -1             # what the blocked header waits for, a channel or len(owner) + a node
        front = True          # no other worm's flit ahead of the header in its buffer
        if hp <= me.h:
            ready, front = _header_ready(me, hp, rs, paths, net, fifo)
            if ready > t:
                wake = ready
            else:
                go, wake, busy = _allocate(t, me, hp, rs[us, R_AGE], chans, paths, net, fifo, trn)
        if go:
            moved = 1
            _header_departs(t, me, hp, rs, trn, paths, net, fifo)
        front, broken = _columns(t, me, front, rs, trn, paths, net, fifo)
        rs[us, R_NEXT] = _next_visit(t, me, go, wake, busy, front, rs, chans.waiting, net, fifo)
    due, tail_from = _due_moves(t, me, rs, trn, net.span)
    return moved + due, tail_from, broken
