"""The rigid kernel: the default network (one VC, one-flit buffers, no delays, ``tail-left``).

A blocked worm cannot compress, so it stays a rigid train and only its
header's position is kept (flit ``j`` is ``j`` positions behind it).  Each
cycle runs the stages of the flit-level kernel (:mod:`.kernel`) in their
simplest form: processors, per worm in flight (oldest first) route and
allocate its header and advance the train a position, eject what its tail
left, then the watchdog.  As there, the stages are inlined
(``inline="always"``) into a cycle loop compiled without reference counting
(:func:`_rigid_cycles`), and :func:`_simulate_rigid` makes the state and
runs the knot search.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .eject import _tail_delivers
from .knots import Flight, Routes, Rules, _knot
from .processors import (
    EJ_FREE,
    INJ_FREE,
    W_DONE,
    W_END,
    W_INJECT,
    W_MOVED,
    W_POS,
    W_START,
    W_TAIL,
    _processors,
    _processors_due,
    _stall_cycle,
    _stuck,
    _watch_due,
)
from .state import (
    DEADLOCK,
    G_ACTIVE,
    G_ADVANCES,
    G_BUSY,
    G_CHECK,
    G_DONE,
    G_DUE,
    G_FLIT_MOVES,
    G_MAX_ACTIVE,
    G_MOVE,
    G_PEND,
    G_RP,
    G_STATUS,
    G_T,
    NUM_G,
    S_ADVANCES,
    S_CYCLES,
    S_FLIT_MOVES,
    S_MAX_ACTIVE,
    S_STALL_CYCLE,
    S_STATUS,
    S_WORMS_DONE,
    Channels,
)


@nb.njit(cache=True, inline="always")
def _rigid_allocate(t, w, base, p, h, chans, paths, net):
    """Route and allocate: whether the header of worm ``w`` at position ``p < h`` of its route (at ``base``)
    takes the link of its next hop in cycle ``t``: the link free and allocatable, and at a destination an
    ejection channel free."""
    x = base + p + 1
    a = np.uint64(paths.arc[np.uint64(x)])
    if chans.owner[a] >= 0 or chans.avail[a] > t:
        return False
    s = paths.slot[x]
    if net.ej_channels > 0 and s >= 0 and (net.inter_ej or p + 1 == h):
        node = paths.node[x]
        if chans.ej_free[node] == 0:
            return False
        chans.ej_free[node] -= 1
    chans.owner[a] = w
    return True


@nb.njit(cache=True, inline="always")
def _rigid_tail_leaves(t, base, q, h, chans, paths, net):
    """Eject: the tail of a worm (route at ``base``, ``h`` hops) left position ``0 <= q <= h`` in cycle ``t``:
    its injection channel freed (``q = 0``), or the link into ``q`` (allocatable from ``t + 1``) and, at a
    destination, its ejection channel."""
    if q == 0:
        chans.inj_free[paths.node[base]] += 1
        return
    a = paths.arc[base + q]
    chans.owner[a] = -1
    chans.avail[a] = t + 1
    if paths.slot[base + q] >= 0 and net.ej_channels > 0 and (net.inter_ej or q == h):
        chans.ej_free[paths.node[base + q]] += 1


@nb.njit(cache=True)
def _rigid_watchdog(t, due, last_move, n_active, procs, paths, out, net):
    """The watchdog is ``due`` (1: nothing moved for ``watchdog`` cycles; 2: a worm has not, look for a knot):
    whether the run stops, deadlocked (the knotted worms in ``out.dead``, the cycle it began in
    ``out.stats``)."""
    active, worms = procs.active, procs.worms
    for idx in range(n_active):
        worms[W_TAIL, active[idx]] = worms[W_POS, active[idx]] - net.flits + 1
    found = _knot(t, Flight(active, n_active, worms[W_POS], worms[W_TAIL]), worms[W_INJECT],
                  Routes(worms[W_START], worms[W_END], paths.node, paths.arc, paths.vc, paths.slot),
                  Rules(net.flits, net.depth, net.vcs, net.ej_channels, net.inter_ej, np.int64(0)),
                  out.owner, procs.nodes[EJ_FREE], procs.nodes.shape[1], out.dead)
    if due == 2 and found == 0:
        return False
    out.stats[S_STALL_CYCLE] = _stall_cycle(due, t, last_move, n_active, active, worms[W_MOVED], out.dead)
    return True


@nb.njit(cache=True, _nrt=False)  # type: ignore[call-overload]  # numba's private option, not in its stubs
def _rigid_cycles(regs, chans, run, net, procs, paths, out):
    """The cycle loop of the rigid kernel from cycle ``regs[G_T]`` on (registers ``G_*``, channels ``chans``,
    the other groups of :mod:`.state`); the registers saved.  True when the watchdog is due at the end of cycle
    ``regs[G_T]``, False when the run is over."""
    active, worms = procs.active, procs.worms
    worm_pos, moved_at = worms[W_POS], worms[W_MOVED]
    t, n_active, busy_nodes, rp, n_pend = regs[G_T], regs[G_ACTIVE], regs[G_BUSY], regs[G_RP], regs[G_PEND]
    last_move, last_check, flit_moves, advances = regs[G_MOVE], regs[G_CHECK], regs[G_FLIT_MOVES], regs[G_ADVANCES]
    max_active, done_worms, due = regs[G_MAX_ACTIVE], regs[G_DONE], 0
    while t < run.cycles:
        if run.stop_idle and rp >= procs.n_timed and n_active == 0 and busy_nodes == 0:
            break
        before = n_active
        # 1. processors (2. inject: the new worms' headers are in their injection channels)
        if _processors_due(t, n_pend, rp, procs):
            busy_nodes, rp, n_active, n_pend = _processors(t, (busy_nodes, rp, n_active, n_pend), run, procs)
            flit_moves += n_active - before       # a header entered each new worm's injection channel
        max_active = max(max_active, n_active)
        # 3. worms in flight, oldest first (those injected in this cycle, at the end, wait)
        moved_any = False
        keep = np.int64(0)
        for idx in range(before):
            w = active[np.uint64(idx)]
            uw = np.uint64(w)         # (unsigned indices: no test for negative ones)
            base = paths.ptr[uw]
            h = paths.ptr[uw + np.uint64(1)] - base - 1
            p = worm_pos[uw]
            if p < h and not _rigid_allocate(t, w, base, p, h, chans, paths, net):
                active[keep] = w
                keep += 1
                continue
            p += 1
            worm_pos[uw] = p
            moved_at[uw] = t
            moved_any = True
            advances += 1
            tail = p - (net.flits - 1)
            flit_moves += min(p, h + 1) - max(tail, 0) + 1
            q = tail - 1          # 4. eject: the position the tail has just left
            if q >= 0 and q <= h:
                _rigid_tail_leaves(t, base, q, h, chans, paths, net)
                busy_nodes, n_pend = _tail_delivers(t, base, q, (busy_nodes, n_pend), paths, out, procs)
            if q == h:
                worms[W_DONE, w] = t
                done_worms += 1
            else:
                active[keep] = w
                keep += 1
        for idx in range(before, n_active):
            active[keep] = active[idx]
            keep += 1
        n_active = keep
        # 5. watchdog (its knot search: in the caller)
        due, last_move, last_check = _watch_due(t, moved_any, n_active, last_move, last_check, run.watchdog)
        if due == 2 and not _stuck(t, run.watchdog, n_active, active, moved_at):
            due = 0
        if due > 0:
            break
        t += 1
    regs[G_T], regs[G_ACTIVE], regs[G_BUSY], regs[G_RP], regs[G_PEND] = t, n_active, busy_nodes, rp, n_pend
    regs[G_MOVE], regs[G_CHECK], regs[G_FLIT_MOVES], regs[G_ADVANCES] = last_move, last_check, flit_moves, advances
    regs[G_MAX_ACTIVE], regs[G_DONE], regs[G_DUE] = max_active, done_worms, due
    return due > 0


@nb.njit(cache=True)
def _simulate_rigid(run, net, procs, paths, out):
    """The default network, rigid trains (arguments: the groups of :mod:`.state`; ``net.vcs`` and
    ``net.depth`` are 1): the cycle loop :func:`_rigid_cycles` and its watchdog."""
    regs = np.zeros(NUM_G, np.int64)
    chans = Channels(out.owner, np.zeros(len(out.owner), np.int64), procs.nodes[EJ_FREE], procs.nodes[INJ_FREE],
                     np.empty(0, np.int64))
    while _rigid_cycles(regs, chans, run, net, procs, paths, out):
        t = regs[G_T]
        if _rigid_watchdog(t, regs[G_DUE], regs[G_MOVE], regs[G_ACTIVE], procs, paths, out, net):
            regs[G_STATUS] = DEADLOCK
            regs[G_T] = t + 1
            break
        regs[G_T] = t + 1
    worms = procs.worms
    for idx in range(regs[G_ACTIVE]):
        w = procs.active[idx]
        worms[W_TAIL, w] = worms[W_POS, w] - net.flits + 1
    out.stats[S_CYCLES] = regs[G_T]
    out.stats[S_FLIT_MOVES] = regs[G_FLIT_MOVES]
    out.stats[S_ADVANCES] = regs[G_ADVANCES]
    out.stats[S_STATUS] = regs[G_STATUS]
    out.stats[S_MAX_ACTIVE] = regs[G_MAX_ACTIVE]
    out.stats[S_WORMS_DONE] = regs[G_DONE]
