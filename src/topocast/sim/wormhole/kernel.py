"""The flit-level kernel: any network options, cycle by cycle, as a sequence of stages.

Each cycle runs, in order:

1. **processors** (:func:`~.processors._processors`): jobs released,
   start-ups, new worms' headers into their injection channels;
2. **inject**: each new worm takes a record of the pool (UGAL-L: its source
   chooses its route, :func:`~.allocate._choose_route`), initialised for its
   form (:func:`~.flits._flits_enter`, :func:`~.trains._train_enters`);
3. per worm in flight, oldest first, its **visit**: **route and allocate**
   its header (:mod:`.allocate`), then **traverse**, every flit on its own
   (:func:`~.flits._visit_flits`) or as a train
   (:func:`~.trains._visit_train`);
4. **eject**, when a visit's tail left a position: the channel it held
   freed, its copy delivered, waiting headers woken (:mod:`.eject`);
5. the **watchdog**: every ``watchdog`` cycles, if some worm has not moved
   for that long, a knot search (:func:`_watchdog`); a stop when nothing
   moved.

The stages are inlined (``inline="always"``) into the cycle loop
:func:`_cycles`, which numba compiles without reference counting
(``_nrt=False``): a stage takes groups of arrays (:mod:`.state`), and numba
would otherwise count a reference to every array of a group on each call,
atomically, in the hot loop (its pruning of those counts gives up on a
function with branches; the kernel ran three times slower).  Such a function
may allocate nothing: :func:`flit_state` makes the state beforehand (in
Python) and :func:`_simulate_flits` runs the loop, and the knot search (which
allocates) whenever the loop hands over to the watchdog.  Its callees inherit
the setting, so the loop calls none that allocates.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from .allocate import _choose_route
from .eject import _tail_delivers, _tail_leaves, _wake_waiting
from .flits import _flits_enter, _visit_flits
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
    BROKEN,
    DEADLOCK,
    G_ACTIVE,
    G_ADVANCES,
    G_AGE,
    G_BUSY,
    G_CHECK,
    G_DONE,
    G_DUE,
    G_FLIT_MOVES,
    G_FREE,
    G_MAX_ACTIVE,
    G_MOVE,
    G_PEND,
    G_RP,
    G_STATUS,
    G_T,
    NUM_G,
    NUM_R,
    R_BASE,
    R_H,
    R_HPOS,
    R_MOVED,
    R_NEXT,
    R_SLEEP,
    R_TIN,
    R_TK,
    R_WORM,
    S_ADVANCES,
    S_CYCLES,
    S_FLIT_MOVES,
    S_MAX_ACTIVE,
    S_STALL_CYCLE,
    S_STATUS,
    S_WORMS_DONE,
    Channels,
    Flits,
    Kernel,
    Pool,
    Trains,
    Visit,
)
from .trains import _train_enters, _visit_train


def flit_state(procs, out, net, fifo, trains: bool) -> tuple[Kernel, Flits | None, Trains | None]:
    """The flit-level kernel's own state: a :class:`~.state.Kernel`, and the state of its form, :class:`Flits`
    (every flit on its own) or :class:`Trains` (``trains``), the other None.

    The pool has a record per worm that can be in flight at once: a worm in
    flight holds the channel its tail is in (an injection channel, or a VC
    it owns), so there are never more of them than channels (with
    ``tail-sent`` release, than channels and buffer slots).  The pool is
    allocated for that many but left uninitialised (untouched pages cost no
    memory) and a record is initialised when a worm takes it.
    """
    owner, nodes = out.owner, procs.nodes
    n_ch = len(owner)
    L, depth, span = net.flits, net.depth, net.span
    chans = Channels(owner, np.zeros(n_ch, np.int64), nodes[EJ_FREE], nodes[INJ_FREE],
                     np.full(n_ch + nodes.shape[1] if trains else 0, -1, np.int64))
    cap = max(min(procs.worms.shape[1], int(nodes[INJ_FREE].sum()) + n_ch * (1 if fifo is None else depth)), 1)
    pool = Pool(np.empty((cap, NUM_R), np.int64), np.arange(cap - 1, -1, -1, dtype=np.int64), np.empty(cap, np.int64))
    regs = np.zeros(NUM_G, np.int64)
    regs[G_FREE] = cap
    if trains:
        # (a record's moves are all counted by the time its worm is done: zero once, here, where a record is
        # first used)
        return Kernel(regs, chans, pool), None, Trains(
            np.arange(L, dtype=np.int64) // depth, np.empty(cap * (L + depth), np.int32),
            np.zeros(cap * span, np.int32), np.empty(cap * span, np.int32))
    n = cap * L
    return Kernel(regs, chans, pool), Flits(
        np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, np.int32),
        np.empty(n * (net.credit_delay + 1) if net.credit_delay > 0 else 0, np.int32), np.empty(cap, np.int64),
        np.full(n_ch // net.vcs, -1, np.int64)), None


@nb.njit(cache=True, inline="always")
def _open_record(t, sl, w, rs, worms):
    """Inject: record ``sl`` taken by worm ``w`` in cycle ``t``, on the route its source chose."""
    us = np.uint64(sl)
    rs[us, R_WORM] = w
    rs[us, R_BASE] = worms[W_START, w]
    rs[us, R_H] = worms[W_END, w] - worms[W_START, w] - 1
    rs[us, R_MOVED] = t
    rs[us, R_SLEEP] = 0
    rs[us, R_NEXT] = 0


@nb.njit(cache=True)
def _ends(t, sl, L, flit, rs):
    """Header and tail positions at the end of cycle ``t`` of the worm of record ``sl`` of the flit-level kernel
    (the tail: -1 still at the processor; ``flit`` None for trains)."""
    if flit is not None:
        return np.int64(flit.pos[sl * L]), np.int64(flit.pos[sl * L + L - 1])
    return rs[sl, R_HPOS], (-1 if rs[sl, R_TIN] > t else rs[sl, R_TK])


@nb.njit(cache=True)
def _watchdog(t, due, last_move, n_active, pool, flit, procs, paths, out, net, fifo):
    """The watchdog is ``due`` at the end of cycle ``t`` (1: nothing moved for ``watchdog`` cycles; 2: a worm
    has not, look for a knot): whether the run stops, deadlocked (the knotted worms marked in ``out.dead``,
    the cycle the deadlock began in ``out.stats``).  The worms in flight, their ends and last moves, are
    written into ``procs.worms`` for the knot search (:func:`~.knots._knot`)."""
    rs, worms = pool.rs, procs.worms
    for idx in range(n_active):
        sl = procs.active[idx]
        w = rs[sl, R_WORM]
        pool.in_flight[idx] = w
        worms[W_MOVED, w] = rs[sl, R_MOVED]
        worms[W_POS, w], worms[W_TAIL, w] = _ends(t, sl, net.flits, flit, rs)
    tail_sent = np.int64(0 if fifo is None else 1)
    found = _knot(t, Flight(pool.in_flight, n_active, worms[W_POS], worms[W_TAIL]), worms[W_INJECT],
                  Routes(worms[W_START], worms[W_END], paths.node, paths.arc, paths.vc, paths.slot),
                  Rules(net.flits, net.depth, net.vcs, net.ej_channels, net.inter_ej, tail_sent),
                  out.owner, procs.nodes[EJ_FREE], procs.nodes.shape[1], out.dead)
    if due == 2 and found == 0:
        return False
    if due == 1 and fifo is not None:
        # waits behind other worms' flits escape the knot search, but nothing moved for longer than any clock
        # wait: every worm in flight is blocked for good
        for idx in range(n_active):
            out.dead[pool.in_flight[idx]] = True
    out.stats[S_STALL_CYCLE] = _stall_cycle(due, t, last_move, n_active, pool.in_flight, worms[W_MOVED], out.dead)
    return True


@nb.njit(cache=True, _nrt=False)  # type: ignore[call-overload]  # numba's private option, not in its stubs
def _cycles(kern, run, net, procs, paths, out, flit, trn, fifo, ugal):
    """The cycle loop, stages 1 to 5 (:mod:`.kernel`), from cycle ``kern.regs[G_T]`` on; the registers saved.
    True when the watchdog is due at the end of cycle ``regs[G_T]`` (``regs[G_DUE]``: nothing moved for
    ``watchdog`` cycles, or some worm has not), False when the run is over."""
    regs, chans, pool = kern
    rs, free, active, worms = pool.rs, pool.free, procs.active, procs.worms
    L, depth = net.flits, net.depth
    t, n_active, busy_nodes, rp, n_pend = regs[G_T], regs[G_ACTIVE], regs[G_BUSY], regs[G_RP], regs[G_PEND]
    n_free, next_age, last_move, last_check = regs[G_FREE], regs[G_AGE], regs[G_MOVE], regs[G_CHECK]
    flit_moves, advances, max_active = regs[G_FLIT_MOVES], regs[G_ADVANCES], regs[G_MAX_ACTIVE]
    done_worms, status, due = regs[G_DONE], regs[G_STATUS], 0
    while t < run.cycles:
        if run.stop_idle and rp >= procs.n_timed and n_active == 0 and busy_nodes == 0:
            break
        before = n_active
        # 1. processors
        if _processors_due(t, n_pend, rp, procs):
            busy_nodes, rp, n_active, n_pend = _processors(t, (busy_nodes, rp, n_active, n_pend), run, procs)
            flit_moves += n_active - before       # a header entered each new worm's injection channel
        # 2. inject: from here on ``active`` lists the worms' records
        for idx in range(before, n_active):
            n_free -= 1
            sl = free[n_free]
            w = active[idx]
            active[idx] = sl
            if ugal is not None:
                _choose_route(w, worms, ugal, paths.arc)
            _open_record(t, sl, w, rs, worms)
            if flit is not None:
                _flits_enter(t, sl, flit, net)
            if trn is not None:
                _train_enters(t, sl, next_age, rs, trn, net, fifo)
                next_age += 1
        max_active = max(max_active, n_active)
        # 3. visits of the worms in flight, oldest first (those injected in this cycle, at the end, wait)
        moved_any = False
        keep = np.int64(0)
        for idx in range(before):
            sl = active[np.uint64(idx)]
            us = np.uint64(sl)        # (unsigned indices: no test for negative ones)
            me = Visit(sl, rs[us, R_WORM], rs[us, R_BASE], rs[us, R_H],
                       sl * L if trn is None else sl * (L + depth) + depth)
            moved, tail_from, broken = 0, -1, False
            if flit is not None:
                moved, tail_from = _visit_flits(t, me, rs, flit, chans, paths, net, fifo, ugal)
            if trn is not None:
                moved, tail_from, broken = _visit_train(t, me, rs, trn, chans, paths, net, fifo)
            if broken:
                status = BROKEN       # (a departure beyond the horizon: cannot happen under tail-left)
            # 4. eject
            if tail_from >= 0:
                freed, freed_ej = _tail_leaves(t, me, tail_from, chans, paths, net, fifo)
                busy_nodes, n_pend = _tail_delivers(t, me.base, tail_from, (busy_nodes, n_pend), paths, out, procs)
                if trn is not None:
                    _wake_waiting(t, me, freed, freed_ej, rs, chans.waiting)
            if moved > 0:
                flit_moves += moved
                rs[us, R_MOVED] = t
                moved_any = True
                advances += 1
                if tail_from == me.h:     # done: its record is free again
                    worms[W_POS, me.w] = me.h + 1
                    worms[W_DONE, me.w] = t
                    done_worms += 1
                    free[n_free] = sl
                    n_free += 1
                    continue
            active[keep] = sl
            keep += 1
        for idx in range(before, n_active):
            active[keep] = active[idx]
            keep += 1
        n_active = keep
        if status == BROKEN:
            break
        # 5. watchdog (its knot search: in the caller)
        due, last_move, last_check = _watch_due(t, moved_any, n_active, last_move, last_check, run.watchdog)
        if due == 2 and not _stuck(t, run.watchdog, n_active, active, rs[:, R_MOVED]):
            due = 0
        if due > 0:
            break
        t += 1
    regs[G_T], regs[G_ACTIVE], regs[G_BUSY], regs[G_RP], regs[G_PEND] = t, n_active, busy_nodes, rp, n_pend
    regs[G_FREE], regs[G_AGE], regs[G_MOVE], regs[G_CHECK] = n_free, next_age, last_move, last_check
    regs[G_FLIT_MOVES], regs[G_ADVANCES], regs[G_MAX_ACTIVE] = flit_moves, advances, max_active
    regs[G_DONE], regs[G_STATUS], regs[G_DUE] = done_worms, status, due
    return due > 0


@nb.njit(cache=True)
def _simulate_flits(run, net, procs, paths, out, kern, flit, trn, fifo, ugal):
    """Any network options, flit by flit: the cycle loop of :mod:`.kernel` and its watchdog.

    ``run``, ``net``, ``procs``, ``paths``, ``out`` are the groups of
    :mod:`.state` (:class:`~.state.Run` ..), ``kern``, ``flit``, ``trn`` the
    kernel's own state (:func:`flit_state`): ``flit`` None when worms move
    as trains (one VC per link, :mod:`.trains`), ``trn`` None when every
    flit moves on its own (:mod:`.flits`).  ``fifo`` is None (``tail-left``
    VC release) or the state of the shared buffers of ``tail-sent``
    (:class:`~.state.Fifo`), ``ugal`` None or the alternate routes a worm's
    source chooses from (:class:`~.state.Ugal`; then every flit moves on its
    own).  Every test ``x is not None`` of these arguments is settled when
    numba compiles the kernel for the arguments' types (the branch is pruned
    when ``x`` is None), so each form compiles only its own code.
    """
    regs, pool, rs = kern.regs, kern.pool, kern.pool.rs
    while _cycles(kern, run, net, procs, paths, out, flit, trn, fifo, ugal):
        t = regs[G_T]
        if _watchdog(t, regs[G_DUE], regs[G_MOVE], regs[G_ACTIVE], pool, flit, procs, paths, out, net, fifo):
            regs[G_STATUS] = DEADLOCK
            regs[G_T] = t + 1
            break
        regs[G_T] = t + 1
    t = regs[G_T]
    worms = procs.worms
    for idx in range(regs[G_ACTIVE]):
        sl = procs.active[idx]
        worms[W_POS, rs[sl, R_WORM]], worms[W_TAIL, rs[sl, R_WORM]] = _ends(t - 1, sl, net.flits, flit, rs)
    out.stats[S_CYCLES] = t
    out.stats[S_FLIT_MOVES] = regs[G_FLIT_MOVES]
    out.stats[S_ADVANCES] = regs[G_ADVANCES]
    out.stats[S_STATUS] = regs[G_STATUS]
    out.stats[S_MAX_ACTIVE] = regs[G_MAX_ACTIVE]
    out.stats[S_WORMS_DONE] = regs[G_DONE]
