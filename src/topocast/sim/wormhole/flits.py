"""The flit-level kernel with every flit on its own: a worm's visit, its header routed and allocated, then its
flits traversing front to back (several VCs per link, UGAL routes, or ``tail-sent`` beyond the trains' horizon).

Every flit has its position and arrival cycle (:class:`~.state.Flits`).
Only the first flit of each buffer (of each *run* of the worm's flits in
one buffer) can move in a cycle: a flit behind it either stays behind it
or, when the first leaves, finds the buffer's port used this cycle, so a
visit walks the run fronts only.  The functions are inlined into the kernel
(:func:`~.kernel._simulate_flits`) except :func:`_credit_at`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .allocate import _ahead_left, _allocate, _blocked, _room_at
from .state import NEVER, R_SLEEP


@nb.njit(cache=True)
def _credit_at(k, x, pos, hist, credit_delay, hist_len):
    """The first cycle a flit may enter position ``x``, whose slot flit ``k`` (the ``depth``-th ahead) frees
    when it leaves: 0 if it has left and the credit is back, ``NEVER`` if it has not left yet."""
    pk = pos[np.uint64(k)]
    if pk <= x:
        return NEVER
    if credit_delay > 0 and pk - 1 - x < credit_delay:
        return hist[k * hist_len + x % hist_len] + credit_delay
    return 0


@nb.njit(cache=True, inline="always")
def _occupy(occ, path_arc, base, y, h):
    """A flit moves from position ``y`` of its route (at ``base``, ``h`` hops) to ``y + 1``: the buffer it
    leaves holds one flit less, the one it enters one more (``occ``: per link, the flits in the buffers at
    its far end, all VCs)."""
    if y > 0:
        occ[path_arc[base + y]] -= 1
    if y < h:
        occ[path_arc[base + y + 1]] += 1


@nb.njit(cache=True, inline="always")
def _flits_enter(t, sl, flit, net):
    """Inject: record ``sl``'s header enters its injection channel in cycle ``t``, its other flits are still
    at the processor."""
    fb = sl * net.flits
    flit.first[np.uint64(sl)] = 0
    flit.pos[fb] = 0
    flit.arr[fb] = t
    flit.run[fb] = 1
    for k in range(1, net.flits):
        flit.pos[fb + k] = -1


@nb.njit(cache=True, inline="always")
def _header_ready(me, hp, flit, paths, net, fifo):
    """The first cycle the header of record ``me`` at position ``hp`` may leave (its router pipeline over) and
    whether it is at the front of its buffer.  ``tail-sent``: the pipeline starts when it comes to the front
    (``NEVER`` while another worm's flit is ahead of it)."""
    ready = flit.arr[np.uint64(me.fb)] + 1 + net.router_delay
    if fifo is not None and hp > 0:
        x = me.base + hp
        ahead = _ahead_left(paths.arc[x] * net.vcs + paths.vc[x], fifo.p_in[x], fifo)
        if ahead == NEVER:
            return NEVER, False
        return max(ready, ahead + 1 + net.router_delay), True
    return ready, True


@nb.njit(cache=True, inline="always")
def _flit_ready(t, me, j, y, flit, paths, net, fifo):
    """The first cycle flit ``j > 0`` of record ``me``, first of its buffer at position ``y``, may leave (at
    most ``t``: now): a cycle after it arrived, when its next link carries no flit this cycle and the next
    buffer has a slot (``tail-sent``: the channel's, :func:`~.allocate._room_at`; else the credit of the flit
    ``depth`` ahead of it, :func:`_credit_at`)."""
    f = me.fb + j
    arrived = flit.arr[np.uint64(f)]
    if arrived + 1 > t:
        return arrived + 1
    if y < me.h:
        x = me.base + y + 1
        if flit.link_used[paths.arc[x]] == t:
            return t + 1
        if fifo is not None:
            ch = paths.arc[x] * net.vcs + paths.vc[x]
            k = fifo.ch_in[ch] - net.depth
            return _room_at(k, fifo.ch_out[ch], fifo.dep[ch * fifo.ring + (k & (fifo.ring - 1))], net.credit_delay)
        if j >= net.depth:
            return _credit_at(f - net.depth, y + 1, flit.pos, flit.hist, net.credit_delay, net.credit_delay + 1)
    return 0


@nb.njit(cache=True, inline="always")
def _enter_injection(t, me, j, lead, flit, net):
    """Flit ``j`` of record ``me``, the first still at the processor, enters the injection channel (one per
    cycle) and joins the run there (``lead``: first flit and position of the run holding flit ``j - 1``).
    ``(1, NEVER)``, or ``(0, the cycle a credit lets it)`` while the channel is full."""
    f = me.fb + j
    if j >= net.depth:
        at = _credit_at(f - net.depth, np.int64(0), flit.pos, flit.hist, net.credit_delay, net.credit_delay + 1)
        if at > t:
            return 0, at
    u = np.uint64(f)
    flit.pos[u] = 0
    flit.arr[u] = t
    flit.run[u] = 0
    k = lead[0] if lead[1] == 0 else j
    flit.run[np.uint64(me.fb + k)] += 1
    return 1, NEVER


@nb.njit(cache=True, inline="always")
def _flit_leaves(t, me, j, y, n, lead, flit, paths, net, fifo, ugal):
    """Flit ``j`` of record ``me``, first of a run of ``n`` at position ``y``, moves to ``y + 1`` (past the last
    destination: ejected).  It joins the run ahead (``lead``, holding flit ``j - 1``) or starts its own there,
    and the next flit heads what is left of its run; returns the run holding it: (first flit, position)."""
    f = me.fb + j
    u = np.uint64(f)
    x = y + 1
    flit.pos[u] = x
    if ugal is not None:
        _occupy(ugal.occ, paths.arc, me.base, y, me.h)
    if x <= me.h:
        flit.arr[u] = t + net.link_latency - 1
        flit.link_used[paths.arc[me.base + x]] = t
        if lead[1] == x:
            flit.run[np.uint64(me.fb + lead[0])] += 1
        else:
            flit.run[u] = 1
            lead = (j, x)
    else:
        flit.first[np.uint64(me.sl)] = j + 1
    if net.credit_delay > 0:
        flit.hist[f * (net.credit_delay + 1) + y % (net.credit_delay + 1)] = t
    if fifo is not None:
        if y > 0:             # counted out of its buffer, the departure kept
            ch = paths.arc[me.base + y] * net.vcs + paths.vc[me.base + y]
            fifo.dep[ch * fifo.ring + (fifo.ch_out[ch] & (fifo.ring - 1))] = t
            fifo.ch_out[ch] += 1
        if x <= me.h:         # and into the next one (the header: its index in the channel's order of entry)
            ch = paths.arc[me.base + x] * net.vcs + paths.vc[me.base + x]
            if j == 0:
                fifo.p_in[me.base + x] = fifo.ch_in[ch]
            fifo.ch_in[ch] += 1
    if n > 1:                 # (its port is used this cycle)
        flit.run[u + np.uint64(1)] = n - 1
        lead = (j + 1, y)
    return lead


@nb.njit(cache=True, inline="always")
def _traverse(t, me, go, wake, flit, paths, net, fifo, ugal):
    """Traverse: record ``me``'s flits front to back, the first of each buffer (the header when ``go``, the
    others when :func:`_flit_ready`), then the first flit still at the processor into the injection channel.
    ``wake`` (the header's) becomes the first cycle the clock alone may let a flit move; returns ``(moved,
    wake, the position the tail left or -1)``."""
    moved = 0
    tail_from = -1
    lead = (np.int64(-1), me.h + 1)     # the run holding flit j - 1 after this cycle's moves (h + 1: none)
    j = flit.first[np.uint64(me.sl)]
    while j < net.flits:
        u = np.uint64(me.fb + j)
        y = np.int64(flit.pos[u])
        if y < 0:
            entered, at = _enter_injection(t, me, j, lead, flit, net)
            moved += entered
            wake = min(wake, at)
            break
        n = flit.run[u]       # flits in its buffer, itself first
        if j > 0:
            at = _flit_ready(t, me, j, y, flit, paths, net, fifo)
            go = at <= t
            if not go:
                wake = min(wake, at)
        if go:
            lead = _flit_leaves(t, me, j, y, n, lead, flit, paths, net, fifo, ugal)
            moved += 1
            if j == net.flits - 1:
                tail_from = y
        else:
            lead = (j, y)
        j += n
    return moved, wake, tail_from


@nb.njit(cache=True, inline="always")
def _visit_flits(t, me, rs, flit, chans, paths, net, fifo, ugal):
    """One visit of record ``me`` (:class:`~.state.Visit`) in cycle ``t``: route and allocate its header, then
    traverse its flits.  Returns ``(flits moved, the position its tail left or -1)``.

    A worm none of whose flits moved sleeps until ``R_SLEEP``, the first
    cycle the clock alone may let one move: until then only a channel freed
    under its blocked header can, so a visit looks at that alone.  Behind
    another worm's flits (``tail-sent``) the wait ends by their moves, not
    by the clock: no sleeping.
    """
    us = np.uint64(me.sl)
    hp = flit.pos[np.uint64(me.fb)] if flit.first[us] == 0 else me.h + 1
    if rs[us, R_SLEEP] > t and hp < me.h and _blocked(me, hp, chans, paths, net):
        return 0, -1
    go = False
    wake = NEVER
    front = True
    if hp <= me.h:
        ready, front = _header_ready(me, hp, flit, paths, net, fifo)
        if ready > t:
            wake = ready
        elif hp < me.h and flit.link_used[paths.arc[me.base + hp + 1]] == t:
            wake = t + 1
        else:
            go, wake, _ = _allocate(t, me, hp, 0, chans, paths, net, fifo, None)
    moved, wake, tail_from = _traverse(t, me, go, wake, flit, paths, net, fifo, ugal)
    rs[us, R_SLEEP] = wake if moved == 0 and front else 0
    return moved, tail_from
