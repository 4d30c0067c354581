"""Route and allocate, the flit-level kernel's header stage: the route a worm's source chooses (UGAL-L), the
next VC and ejection channel its header takes, and the buffer tests of ``tail-sent`` VC release.

Both forms of the kernel (:mod:`.flits`, :mod:`.trains`) call these; every
function is inlined into the kernel (``inline="always"``), so its groups
(:mod:`.state`) cost nothing to pass.
"""

from __future__ import annotations

import numba as nb

from .processors import W_END, W_START
from .state import NEVER


@nb.njit(cache=True, inline="always")
def _room_at(k, out, dep, credit_delay):
    """``tail-sent``: the first cycle a flit may be sent into a channel's buffer, shared by the worms that use
    it in turn, whose slot the ``k``-th flit sent into that channel frees (``k`` = flits sent in - depth):
    0 if ``k < 0``, ``NEVER`` while it is there (``out`` flits have left), else its departure ``dep`` plus
    the credit delay.  (Scalars only: an array passed to a function costs reference counting in the hot loop.)"""
    if k < 0:
        return 0
    if out <= k:
        return NEVER
    return dep + credit_delay


@nb.njit(cache=True, inline="always")
def _front_at(e, out, dep):
    """``tail-sent``: the cycle the ``e``-th flit sent into a channel came to the front of its buffer, as the
    departure ``dep`` of the flit ahead of it: -1 if none entered before it, ``NEVER`` while it is still there
    (``out`` flits have left)."""
    if out < e:
        return NEVER
    if e == 0:
        return -1
    return dep


@nb.njit(cache=True, inline="always")
def _freed_at(dep, age, me, credit_delay):
    """``tail-sent`` trains: the departure ``dep`` of a flit of a worm of age ``age``, as the worm of age ``me``
    sees it (before the credit delay).  Worms move oldest first, so with no credit delay a slot a younger worm
    frees in cycle ``t`` (a train's departure, known ahead) is free for this one from ``t + 1``."""
    return dep + 1 if credit_delay == 0 and age > me else dep


@nb.njit(cache=True, inline="always")
def _ahead_left(ch, e, fifo):
    """``tail-sent``: :func:`_front_at` for the ``e``-th flit sent into channel ``ch`` (``fifo``: the shared
    buffers, :class:`~.state.Fifo`)."""
    return _front_at(e, fifo.ch_out[ch], fifo.dep[ch * fifo.ring + ((e - 1) & (fifo.ring - 1))])


@nb.njit(cache=True, inline="always")
def _choose_route(w, worms, ugal, path_arc):
    """UGAL-L at worm ``w``'s source, in the cycle its header enters the source router (Singh 2005, ch. 3; Kim,
    Dally, Scott and Abts 2008, section 4.2): its planned (minimal) route of ``h_m`` hops, or its alternate
    (Valiant) route ``alt[0, w] .. alt[1, w] - 1`` of ``h_a`` hops when ``h_m * q_m > h_a * q_a + threshold``,
    ``q`` the flits in the buffers at the far end of the route's first link (``occ``: sent into them and not
    left yet), what the source router knows from its credits (``ugal``: :class:`~.state.Ugal`).  The choice is
    kept in ``worms[W_START:W_END+1]``."""
    alt, occ = ugal.alt, ugal.occ
    a0 = alt[0, w]
    if a0 < 0:
        return
    b = worms[W_START, w]
    h_m = worms[W_END, w] - b - 1
    h_a = alt[1, w] - a0 - 1
    if h_m > 0 and h_a > 0 and h_m * occ[path_arc[b + 1]] > h_a * occ[path_arc[a0 + 1]] + ugal.threshold:
        worms[W_START, w] = a0
        worms[W_END, w] = alt[1, w]


@nb.njit(cache=True, inline="always")
def _allocate(t, me, hp, age, chans, paths, net, fifo, trn):
    """Route and allocate: whether the header of record ``me`` at position ``hp``, whose router pipeline is
    over, leaves it in cycle ``t``; ``(go, wake, busy)``.

    At its last destination it leaves (into an ejection channel it already
    holds).  Else it takes the VC of its next hop when nobody holds it, it
    can be allocated again (``avail``), the buffer has a slot free
    (``tail-sent``: it may still hold earlier worms' flits; for a train,
    ``trn`` not None, ``age`` is its worm's, :func:`_freed_at`) and, at a destination, an
    ejection channel is free.  Otherwise ``wake`` is the first cycle the
    clock alone may let it go (``NEVER``: not the clock) and ``busy`` the
    channel it waits for that another worm holds: a VC, or ``len(owner)`` +
    the node whose ejection channels are all held (-1: none).
    """
    if hp == me.h:
        return True, NEVER, -1
    x = me.base + hp + 1
    ch = paths.arc[x] * net.vcs + paths.vc[x]
    if chans.owner[ch] >= 0:
        return False, NEVER, ch
    if chans.avail[ch] > t:
        return False, chans.avail[ch], -1
    if fifo is not None:      # the buffer may still hold earlier worms' flits
        k = fifo.ch_in[ch] - net.depth
        a = ch * fifo.ring + (k & (fifo.ring - 1))
        dep = fifo.dep[a] if trn is None else _freed_at(fifo.dep[a], fifo.age[a], age, net.credit_delay)
        at = _room_at(k, fifo.ch_out[ch], dep, net.credit_delay)
        if at > t:
            return False, at, -1
    if net.ej_channels > 0 and paths.slot[x] >= 0 and (net.inter_ej or hp + 1 == me.h):
        node = paths.node[x]
        if chans.ej_free[node] == 0:
            return False, NEVER, len(chans.owner) + node
        chans.ej_free[node] -= 1
    chans.owner[ch] = me.w
    return True, NEVER, -1


@nb.njit(cache=True, inline="always")
def _blocked(me, hp, chans, paths, net):
    """Whether the header of record ``me`` at position ``hp < h`` waits for a VC or the ejection channels of
    its next hop that other worms hold (nothing else can free it)."""
    x = me.base + hp + 1
    ch = paths.arc[x] * net.vcs + paths.vc[x]
    return chans.owner[ch] >= 0 or (net.ej_channels > 0 and paths.slot[x] >= 0 and (net.inter_ej or hp + 1 == me.h)
                                    and chans.ej_free[paths.node[x]] == 0)
