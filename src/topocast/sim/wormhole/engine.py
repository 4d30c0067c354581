"""Cycle-driven, flit-level wormhole engine (numba, struct-of-arrays), on any topology.

Model (Al-Dubai et al. 2003, section 4; Lin and Ni 1991; the terms of the
network options are those of Dally and Towles, *Principles and Practices
of Interconnection Networks*).  ``docs/simulator.md`` has the whole model
with every option's units and default.

* Every directed arc of the topology is one physical link.  It carries
  ``vcs`` virtual channels (VCs), each with an input buffer of
  ``buffer_depth`` flits at the link's head.  A node has
  ``injection_channels`` channels from its processor into its router and
  ``ejection_channels`` channels out of it.
* A worm is ``flits`` flits following one explicit path ``v_0 .. v_h`` of
  nodes and arcs (any topology: the plan names the arcs), using on hop
  ``k`` the VC ``path_vc[k]`` of the plan (VC 0 when the plan has none).
  The header *allocates* the next VC when nobody holds it (and, at a
  destination, an ejection channel); the VC stays the worm's until it is
  released (``vc_release``, below).  Data flits follow under credit flow
  control: a flit may be sent into a buffer only when one of the buffer's
  ``buffer_depth`` slots is free, and a slot freed in cycle ``t`` is
  visible upstream from cycle ``t + credit_delay`` (``credit_delay = 0``:
  the slot can take a flit in the very cycle it empties, flow-through).
* VC release.  ``tail-left`` (default): the VC is released in the cycle
  ``t`` the owner's tail leaves its buffer (no other worm's flits ever
  share a buffer) and can be allocated again from ``t + 1 +
  credit_delay``.  ``tail-sent`` (BookSim2's default,
  ``wait_for_tail_credit = 0``): it is released in the cycle ``t`` the
  tail is sent into it and can be allocated from ``t + 1`` (the credit
  delay applies to the slots, not to the VC), so a buffer holds the flits
  of several worms one after the other, first in first out.  Its slots
  are the VC's: any flit, the header too, may be sent in only while fewer
  than ``buffer_depth`` flits occupy it (sent in and not yet credited
  back).  A header behind another worm's flits leaves only after all of
  them, and its ``router_delay`` starts when it comes to the front: it
  may leave from cycle ``max(arrival, departure of the flit ahead) + 1 +
  router_delay``.  It still takes an ejection channel when it is sent
  into its destination's buffer; the injection channels are unchanged.
  A worm alone moves the same way under both rules.
* A physical link carries at most one flit per cycle, whatever VC it
  belongs to; flits take ``link_latency`` cycles to cross it (sent in cycle
  ``t``, in the buffer at the end of cycle ``t + link_latency - 1``, able to
  leave it from the next cycle).  Competing VCs are served oldest worm
  first (age-based arbitration; a worm's age is its injection order).
* A header spends ``router_delay`` extra cycles in each router it enters,
  the source's and the destination's included (the routing and
  allocation pipeline); data flits only need one cycle per buffer.
* Worms compress into deeper buffers when their header blocks; with the
  defaults (one VC, one-flit buffers, no router or credit delay, one-cycle
  links) a blocked worm cannot compress and moves as a rigid train: that
  case runs on a dedicated path that keeps only the header's position
  (flit ``j`` is ``j`` positions behind it), every other case on the
  flit-level path; both give the same trace on the defaults (tested).
  With one VC per link the flit-level path moves only the header cycle by
  cycle and computes the other flits' departures from the header's (they
  meet no other worm), with several it moves every flit; both give the same
  trace too (tested).  With ``tail-sent`` flits behind a header can meet
  another worm's in a buffer: the trains then also follow the departures
  of the flits ahead of them in each buffer (same trace again, tested).
* Path-based multidestination worms: at each destination on its path the
  router copies every flit into an ejection channel as it passes; that
  destination has the whole message when the tail passes.
* A node's processor serves *jobs* in FIFO order.  A job is one start-up:
  ``prep`` cycles of preparation, then ``startup`` cycles per batch of at
  most ``worms_per_startup`` worms (default: one per injection channel);
  at the end of a batch its worms join the node's injection queue.  A job
  may wait for a delivery (a QG group leader forwards what it received).
  The processor feeds a worm's flits into its injection channel (a buffer
  of ``buffer_depth`` flits) at most one per cycle.
* Timing of a worm alone in the network, whose start-up ends at cycle
  ``S`` (it then holds an injection channel and its header is in it): the
  header leaves the source router in cycle ``S + 1 + r`` and each later
  router ``l + r`` cycles after it left the previous one (``l`` =
  link_latency, ``r`` = router_delay); the flits behind it follow one per
  cycle unless the buffers are too shallow to cover the credit loop.  The
  tail leaves the destination ``h`` hops away in cycle
  ``S + L + h*l + (h + 1)*r + G`` where ``L`` is ``flits`` and
  ``G = floor((L - 1) / B) * max(0, l + c - B)`` (``B`` = buffer_depth,
  ``c`` = credit_delay), so the unicast zero-load latency is exactly::

      prep + startup + L + h*l + (h + 1)*r + floor((L - 1)/B) * max(0, l + c - B)

  (``h >= 1``; ``G = 0`` whenever ``B >= l + c``).  On the defaults it is
  ``prep + startup + h + L``.  :func:`lone_tail_time` also gives the time
  the tail passes an intermediate destination of a multidestination worm.
* Arbitration: each cycle the worms in flight move in order of injection
  (oldest first), each worm's flits front to back, every move seen at once
  by those that follow (a slot a flit frees with ``credit_delay = 0`` can
  take a flit of a younger worm in the same cycle, of an older one from
  the next).
* Deadlock watchdog, global and partial: every ``watchdog`` cycles, if some
  worm in flight has not moved for ``watchdog`` cycles, the engine looks for
  a *knot*: a set of blocked worms whose headers each wait for a VC owned
  by a worm of the set, or for an ejection channel of a node whose holders
  are all in the set, where the owner cannot free the VC (or the ejection
  channel) by compressing its flits into its buffers ahead.  Such worms can
  never move again (a sound test: busy traffic elsewhere does not hide it),
  on any topology and with any VCs.  A knot, or no worm moving at all for
  ``watchdog`` cycles, stops the run and the trace names the channels of
  one wait-for cycle (``u->v`` for a link, with ``/vc k`` when the router
  has more than one VC, ``eject@x`` for the ejection channels of node
  ``x``).  ``watchdog`` must be at least ``router_delay + link_latency +
  credit_delay`` (the longest a moving network can stay still).  With
  ``tail-sent`` an owner frees its VC once its flits fit in the buffers
  from that VC on, and a header may also wait behind another worm's flits
  or for a slot in a buffer nobody owns: such waits are not in the knot
  search, which stays sound (it never names a worm that could still move)
  but may miss a knot through them; the global watchdog still stops a run
  where nothing moves, and then counts every worm in flight as blocked.
* Consumption channels: with ``intermediate_ejection`` (default) a worm
  holds an ejection channel at every destination its header has reached
  until its tail passes, and a node's ``ejection_channels`` can run out
  while their holders wait downstream: consumption-channel deadlock
  (Boppana, Chalasani and Raghavendra 1998) is possible whatever the
  routing, and the watchdog reports it.  With ``intermediate_ejection=False``
  a destination that is not the worm's last absorbs its copy into a
  message buffer without taking an ejection channel (ejection channels are
  then only waited for at a worm's last destination, which cannot close a
  cycle) and deadlock-free routing keeps the whole run deadlock-free.

The kernels' processors (jobs, start-ups, injection) and the timing of the
watchdog are in :mod:`topocast.sim.wormhole.processors`, the knot search
and the wait-for cycle in :mod:`topocast.sim.wormhole.knots`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numba as nb
import numpy as np

from ...errors import TopocastError
from ...plans.wormhole import WormTraffic
from ..models import VC_RELEASES, RouterConfig, lone_tail_time  # noqa: F401  (the router model, re-exported)
from .knots import _find_knot, _knot, wait_for_cycle  # noqa: F401  (_find_knot: its tests import it from here)
from .processors import (
    EJ_FREE,
    INJ_FREE,
    J_NODE,
    J_ORDER,
    J_PREP,
    J_RELEASE,
    J_START,
    J_WORMS,
    JOB_ROWS,
    N_WORK,
    NODE_ROWS,
    P_BATCH,
    P_END,
    PEND,
    W_DONE,
    W_END,
    W_INJECT,
    W_MOVED,
    W_POS,
    W_START,
    W_TAIL,
    WHEEL,
    WORM_ROWS,
    _enqueue,
    _mark,
    _processors,
    _stall_cycle,
    _stuck,
    _watch_due,
)

OK, DEADLOCK, BROKEN = 0, 1, 2
# the fields of a worm record of the flit-level kernel (a row of ``rs``): trains: the first cycle its header needs
# a visit (NEVER: when the VC or ejection channel it waits for is freed, or never again); all: its worm, path start
# and hops, the cycle it last moved; flit by flit: if nothing of it moved in the cycle before, the first cycle the
# clock alone may let it move; trains: the header's departure before its last, its position and arrival, the last column
# computed and the last the header's departures allow, the next position the tail leaves, the last one computed,
# the cycle the tail entered the injection channel, the cycle it leaves position R_TK (NEVER: not known yet), the
# latest departure computed, the worm's age (visiting order); tail-sent trains: the rows done of a partial step
# (-1: none), the header's entry into its channel until the departure of the flit ahead is known (0: known),
# whether its virtual rows hold departures (1) or FAR (0); trains: the next record waiting for the same channel
(R_NEXT, R_WORM, R_BASE, R_H, R_MOVED, R_SLEEP, R_HPREV, R_HPOS, R_HARR, R_COL, R_GOAL, R_TK, R_TLAST, R_TIN,
 R_TNEXT, R_LAST, R_AGE, R_PART, R_AHEAD, R_VSET, R_WAITS) = range(21)
NUM_R = 21
# stats slots
S_CYCLES, S_FLIT_MOVES, S_ADVANCES, S_STATUS, S_MAX_ACTIVE, S_WORMS_DONE, S_STALL_CYCLE = range(7)
NUM_STATS = 7


@dataclass
class WormTrace:
    """What the engine measured: per-slot delivery, per-worm times, counters."""

    slot_time: np.ndarray      # cycle the tail passed the destination (-1: not delivered)
    slot_count: np.ndarray     # copies received (1 = exactly once)
    worm_inject: np.ndarray    # cycle the header took an injection channel (-1: never)
    worm_done: np.ndarray      # cycle the tail left the last destination (-1: unfinished)
    job_start: np.ndarray      # cycle the processor began the job (-1: never)
    cycles: int
    flit_moves: int
    advances: int
    max_active: int
    deadlock: str | None = None
    deadlock_cycle: int = -1
    wait_cycle: list = field(default_factory=list)
    deadlocked_worms: int = 0
    wait_vcs: list = field(default_factory=list)   # the VC of each link of wait_cycle (-1: ejection channels)
    kernel: str = ""           # the way it ran: "rigid", "trains" or "flits" (every flit on its own)
    worm_route: np.ndarray | None = None   # plans with alternate routes: 1 where the worm took its alternate


#: a cycle later than any run: "not by waiting" (blocked by a flit or a channel, not by the clock)
NEVER = np.iinfo(np.int64).max
#: long before any run (a train's departure no wait reaches back to)
FAR = -(1 << 30)


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
def _choose_route(w, worms, alt, occ, threshold, path_arc):
    """UGAL-L at worm ``w``'s source, in the cycle its header enters the source router (Singh 2005, ch. 3; Kim,
    Dally, Scott and Abts 2008, section 4.2): its planned (minimal) route of ``h_m`` hops, or its alternate
    (Valiant) route ``alt[0, w] .. alt[1, w] - 1`` of ``h_a`` hops when ``h_m * q_m > h_a * q_a + threshold``,
    ``q`` the flits in the buffers at the far end of the route's first link (``occ``: sent into them and not
    left yet), what the source router knows from its credits.  The choice is kept in ``worms[W_START:W_END+1]``."""
    a0 = alt[0, w]
    if a0 < 0:
        return
    b = worms[W_START, w]
    h_m = worms[W_END, w] - b - 1
    h_a = alt[1, w] - a0 - 1
    if h_m > 0 and h_a > 0 and h_m * occ[path_arc[b + 1]] > h_a * occ[path_arc[a0 + 1]] + threshold:
        worms[W_START, w] = a0
        worms[W_END, w] = alt[1, w]


@nb.njit(cache=True, inline="always")
def _occupy(occ, path_arc, base, y, h):
    """A flit moves from position ``y`` of its route (at ``base``, ``h`` hops) to ``y + 1``: the buffer it
    leaves holds one flit less, the one it enters one more (``occ``: per link, the flits in the buffers at
    its far end, all VCs)."""
    if y > 0:
        occ[path_arc[base + y]] -= 1
    if y < h:
        occ[path_arc[base + y + 1]] += 1


@nb.njit(cache=True)
def _ends(t, sl, L, shared, pos, rs):
    """Header and tail positions at the end of cycle ``t`` of the worm of record ``sl`` of the flit-level kernel
    (the tail: -1 still at the processor)."""
    if shared:
        return np.int64(pos[sl * L]), np.int64(pos[sl * L + L - 1])
    return rs[sl, R_HPOS], (-1 if rs[sl, R_TIN] > t else rs[sl, R_TK])


@nb.njit(cache=True)
def _simulate_rigid(params, jobs, n_timed, nodes, worms, paths, out):
    """The default network (one VC, one-flit buffers, no delays): a blocked worm stays a rigid train, so
    only its header's position is kept (flit ``j`` is ``j`` positions behind it).

    ``params`` = (cycles, flits, startup, ejection channels, worms per start-up,
    intermediate ejection, watchdog, stop when idle); ``jobs``, ``nodes``,
    ``worms`` the state by rows (``J_*``, ``Q_HEAD`` .., ``W_*``), ``n_timed``
    the jobs released by time; ``paths`` = the plan's (path_ptr, path_node,
    path_arc, path_vc, path_slot, slot_job); ``out`` = (slot_time,
    slot_count, owner, dead, stats), filled in.
    """
    cycles, flits, startup, ej_channels, batch, inter_ej, watchdog, stop_idle = params
    path_ptr, path_node, path_arc, path_vc, path_slot, slot_job = paths
    slot_time, slot_count, owner, dead, stats = out
    num_nodes = nodes.shape[1]
    n_worms = len(path_ptr) - 1
    job_node = jobs[J_NODE]
    job_release = jobs[J_RELEASE]
    job_order = jobs[J_ORDER]
    inj_free = nodes[INJ_FREE]
    ej_free = nodes[EJ_FREE]
    worm_pos = worms[W_POS]
    worm_tail = worms[W_TAIL]
    worm_inject = worms[W_INJECT]
    worm_done = worms[W_DONE]
    moved_at = worms[W_MOVED]
    avail = np.zeros(len(owner), np.int64)
    active = np.empty(n_worms + 1, np.int64)
    wheel = np.full(WHEEL, -1, np.int64)   # start-ups in progress
    n_pend = 0
    n_active = np.int64(0)
    busy_nodes = 0          # nodes with a job queued or running or worms queued
    rp = 0
    last_move = np.int64(0)
    last_check = np.int64(0)
    flit_moves = 0
    advances = 0
    max_active = 0
    done_worms = 0
    status = OK
    t = np.int64(0)
    while t < cycles:
        if stop_idle and rp >= n_timed and n_active == 0 and busy_nodes == 0:
            break
        before = n_active
        if n_pend > 0 or wheel[t & (WHEEL - 1)] >= 0 or (rp < n_timed and job_release[job_order[rp]] <= t):
            busy_nodes, rp, n_active, n_pend = _processors(t, busy_nodes, rp, n_timed, n_active, n_pend, startup,
                                                           batch, jobs, nodes, worms, active, wheel)
            flit_moves += n_active - before       # a header entered each new worm's injection channel
        if n_active > max_active:
            max_active = n_active
        # 3. worms in flight, oldest first (those injected in this cycle, at the end, wait)
        moved_any = False
        keep = np.int64(0)
        for idx in range(before):
            w = active[np.uint64(idx)]
            uw = np.uint64(w)         # (unsigned indices: no test for negative ones)
            base = path_ptr[uw]
            h = path_ptr[uw + np.uint64(1)] - base - 1
            p = worm_pos[uw]
            if p < h:
                a = np.uint64(path_arc[np.uint64(base + p + 1)])
                if owner[a] >= 0 or avail[a] > t:
                    active[keep] = w
                    keep += 1
                    continue
                x = path_node[base + p + 1]
                s = path_slot[base + p + 1]
                if ej_channels > 0 and s >= 0 and (inter_ej or p + 1 == h):
                    if ej_free[x] == 0:
                        active[keep] = w
                        keep += 1
                        continue
                    ej_free[x] -= 1
                owner[a] = w
            p += 1
            worm_pos[uw] = p
            moved_at[uw] = t
            moved_any = True
            advances += 1
            tail = p - (flits - 1)
            lo = tail if tail > 0 else 0
            hi = p if p < h + 1 else h + 1
            flit_moves += hi - lo + 1
            q = tail - 1          # the position the tail has just left
            if q == 0:
                inj_free[path_node[base]] += 1
                n_pend = _mark(path_node[base], t + 1, nodes, PEND, n_pend)
            elif q > 0 and q <= h:
                a = path_arc[base + q]
                owner[a] = -1
                avail[a] = t + 1
                s = path_slot[base + q]
                if s >= 0:
                    if ej_channels > 0 and (inter_ej or q == h):
                        ej_free[path_node[base + q]] += 1
                    if slot_count[s] == 0:
                        slot_time[s] = t
                    slot_count[s] += 1
                    jn = slot_job[s]
                    if jn >= 0:
                        if _enqueue(jn, job_node[jn], nodes, jobs):
                            busy_nodes += 1
                        n_pend = _mark(job_node[jn], t + 1, nodes, PEND, n_pend)
            if q == h:
                worm_done[w] = t
                done_worms += 1
            else:
                active[keep] = w
                keep += 1
        for idx in range(before, n_active):
            active[keep] = active[idx]
            keep += 1
        n_active = keep
        due, last_move, last_check = _watch_due(t, moved_any, n_active, last_move, last_check, watchdog)
        if due == 2 and not _stuck(t, watchdog, n_active, active, moved_at):
            due = 0
        if due > 0:
            for idx in range(n_active):
                worm_tail[active[idx]] = worm_pos[active[idx]] - flits + 1
            one = np.int64(1)  # variables, not literals: one compiled _knot for both kernels
            zero = np.int64(0)
            found = _knot(t, active, n_active, worm_inject, worm_pos, worm_tail, flits, one, ej_channels, inter_ej,
                          worms[W_START], worms[W_END], path_node, path_arc, path_vc, path_slot, one, owner, ej_free,
                          num_nodes, dead, zero)
            if due == 1 or found > 0:
                status = DEADLOCK
                stats[S_STALL_CYCLE] = _stall_cycle(due, t, last_move, n_active, active, moved_at, dead)
                t += 1
                break
        t += 1
    for idx in range(n_active):
        w = active[idx]
        worm_tail[w] = worm_pos[w] - flits + 1
    stats[S_CYCLES] = t
    stats[S_FLIT_MOVES] = flit_moves
    stats[S_ADVANCES] = advances
    stats[S_STATUS] = status
    stats[S_MAX_ACTIVE] = max_active
    stats[S_WORMS_DONE] = done_worms



@nb.njit(cache=True)
def _simulate_flits(params, jobs, n_timed, nodes, worms, paths, out, net, fifo, train, ugal):
    """Any network options, flit by flit (arguments as for :func:`_simulate_rigid`, ``net`` = (arcs, VCs per
    link, buffer depth, router delay, link latency, credit delay, span) and ``fifo`` None (``tail-left`` VC
    release) or the state of the shared buffers of ``tail-sent``, see :func:`_room_at`; ``train`` 1 when worms
    move as trains, below, else None; ``ugal`` None, or ``(alt, occ, threshold)`` when a worm's source
    chooses its route, see :func:`_choose_route`: then every flit moves on its own).

    With several VCs per link the flits of different worms compete for
    links: every flit has its position and arrival cycle, and each cycle the
    first flit of each buffer a worm holds tries to move.  With one VC per
    link (``vcs = 1``) a worm's flits use only the channels it holds, so
    only its header meets other worms (it takes the channels): the flits
    behind it follow, whatever the load, the recursion of the flit
    departures ``D(j, k)`` from the header's actual departures (the
    recursion of ``docs/simulator.md``, "Zero-load latency", with the
    injection channel as column -1).  The kernel then moves only the header
    cycle by cycle and computes the other flits' departures a column at a
    time as the header's make them known: a *train*.  Both ways give the
    same trace; a train's departures are known at most ``span`` cycles
    ahead of the clock (:func:`_train_span`).

    With ``tail-sent`` VC release a buffer may hold flits of several worms
    (a worm's header follows the previous owner's tail into the VC), first
    in first out.  Per channel the kernel counts the flits sent in and keeps
    the departures of the last ``depth`` out (in a ring of a power of two
    slots): the credit test of a flit sent in (:func:`_room_at`) and, for
    the header, the flit ahead of it in its buffer (:func:`_front_at`).
    With several VCs every flit moves cycle by cycle.  With one, trains
    still work: a worm's flits enter a channel one after the other (a
    header reserves the entries of all its flits), so only its rows
    ``j < depth`` wait for other worms' flits, the ones ``depth`` entries
    ahead of them in the channel ahead.  The kernel keeps the departures of
    each worm's last ``depth`` flits as its train computes them (ahead of
    the clock, so the count per channel is of departures *known*), and
    feeds them to the recursion as virtual rows ``j - depth``.  When a
    departure a row waits for is not known yet, the step computes only the
    rows that do not depend on it (per group of ``depth`` rows, those with
    ``j % depth`` at most the known prefix) and completes later (a
    *partial* step; the header cannot leave the next position before).
    With no credit delay a slot freed in cycle ``t`` by a younger worm
    (which moves after this one) counts from ``t + 1``: each kept
    departure carries its worm's age.  A step whose previous worm's tail
    left the next buffer before this worm's row 1 could leave (the usual
    case) skips the virtual rows: none of their waits can bind.

    A train is visited in full only when its header may move (the
    clock's wait for it is over, ``R_NEXT``) or a partial step may
    complete; in between only the flits behind it move, at departures
    already known, and its tail.  A header waiting for a VC or an ejection
    channel another worm holds joins that channel's list of waiting
    records, and the holder's tail, when it frees the channel, sets them to
    try again (a VC from the next cycle, when it can be allocated; an
    ejection channel from this one for a record whose turn in the cycle is
    still to come): the same trace as trying every cycle.

    Every test of ``fifo is not None`` and of ``train is None`` is settled
    when numba compiles the kernel for the argument's type, so each of its
    four forms (trains or every flit on its own, with or without shared
    buffers) compiles only its own code (a first run compiles less).
    """
    cycles, flits, startup, ej_channels, batch, inter_ej, watchdog, stop_idle = params
    path_ptr, path_node, path_arc, path_vc, path_slot, slot_job = paths
    slot_time, slot_count, owner, dead, stats = out
    num_arcs, vcs, depth, router_delay, link_latency, credit_delay, span = net
    num_nodes = nodes.shape[1]
    n_worms = len(path_ptr) - 1
    L = flits
    job_node = jobs[J_NODE]
    job_release = jobs[J_RELEASE]
    job_order = jobs[J_ORDER]
    inj_free = nodes[INJ_FREE]
    ej_free = nodes[EJ_FREE]
    worm_pos = worms[W_POS]
    worm_tail = worms[W_TAIL]
    worm_inject = worms[W_INJECT]
    worm_done = worms[W_DONE]
    moved_at = worms[W_MOVED]
    avail = np.zeros(len(owner), np.int64)
    active = np.empty(n_worms + 1, np.int64)
    wheel = np.full(WHEEL, -1, np.int64)
    n_pend = 0
    # the cycle each link last carried a flit: with one VC per link (and tail-left release) only the VC's holder
    # uses the link
    shared = train is None
    link_used = np.full(num_arcs if shared else 0, -1, np.int64)
    # a pool of worm records, for the worms in flight.  A worm in flight holds the channel its
    # tail is in (an injection channel, or a VC it owns), so there are never more of them than channels (with
    # tail-sent release, than channels and buffer slots); the pool is allocated for that many but left
    # uninitialised (untouched pages cost no memory) and a record is initialised when a worm takes it: a fixed
    # pool keeps the hot loop free of reference counting
    cap = max(min(n_worms, inj_free.sum() + len(owner) * (1 if fifo is None else depth)), 1)
    in_flight = np.empty(cap, np.int64)
    rs = np.empty((cap, NUM_R), np.int64)  # per record its fields R_* (one row: a record's fields share cache lines)
    # flit by flit (several VCs per link): per flit its position (-1: still at the processor), the cycle it arrives
    # (arrived) in that position's buffer and, for the first flit of a position (a *run* of the worm's flits in
    # one buffer), how many of the worm's flits that buffer holds: only the first flit of a buffer can leave it
    # in a cycle; its departures by position mod (credit_delay + 1); per record the first flit not yet ejected
    per_flit = cap * L if shared else 0
    hist_len = credit_delay + 1
    pos = np.empty(per_flit, np.int32)
    arr = np.empty(per_flit, np.int32)
    run = np.empty(per_flit, np.int32)
    hist = np.empty(per_flit * hist_len if credit_delay > 0 else 0, np.int32)
    ffirst = np.empty(cap if shared else 0, np.int64)
    # trains (one VC per link): per flit (row j of the recursion) its last departure computed, D(j, k) (column -1:
    # the cycle it entered the injection channel), after depth virtual rows (tail-sent: the flits ahead of rows
    # j < depth); flit j leaves position k only after flit j - depth left position k + 1, so a column of row j
    # follows the column grp[j] = j // depth further of the header's row.  Per record: the moves due in each of the
    # next span cycles and the tail's departures by position (both mod span); its other fields are in rs
    n_train = 0 if shared else cap
    grp = np.empty(L, np.int64)
    for j in range(L):
        grp[j] = j // depth
    cur = np.empty(n_train * (L + depth), np.int32)
    # (a record's moves are all counted by the time its worm is done: zero once, here, where a record is first used)
    sched = np.zeros(n_train * span, np.int32)
    tail_at = np.empty(n_train * span, np.int32)
    free_list = np.empty(cap, np.int64)
    for k in range(cap):
        free_list[k] = cap - 1 - k
    n_free = cap
    # trains: per channel, then per node's ejection channels, the records whose header waits for it to be freed
    # (a list linked through R_WAITS)
    n_ch = len(owner)
    waiting = np.full(n_ch + num_nodes if train is not None else 0, -1, np.int64)
    release = np.int64(0 if fifo is None else 1)     # for the knot search: when an owner frees its VC
    ring = 1                  # tail-sent: per channel a ring of departures, a power of two >= depth
    while ring < depth:
        ring *= 2
    if fifo is not None:
        ch_in, ch_out, ch_dep, p_in, ch_age = fifo
    else:
        ch_in = ch_out = ch_dep = p_in = ch_age = np.empty(0, np.int64)
    # tail-sent trains: the first row whose departures later worms read (a worm's last ``depth`` flits are the only
    # ones a follower's flits wait for)
    next_age = np.int64(0)
    kept_from = L - depth
    n_active = np.int64(0)
    busy_nodes = 0
    rp = 0
    last_move = np.int64(0)
    last_check = np.int64(0)
    flit_moves = 0
    advances = 0
    max_active = 0
    done_worms = 0
    status = OK
    t = np.int64(0)
    while t < cycles:
        if stop_idle and rp >= n_timed and n_active == 0 and busy_nodes == 0:
            break
        before = n_active
        if n_pend > 0 or wheel[t & (WHEEL - 1)] >= 0 or (rp < n_timed and job_release[job_order[rp]] <= t):
            busy_nodes, rp, n_active, n_pend = _processors(t, busy_nodes, rp, n_timed, n_active, n_pend, startup,
                                                           batch, jobs, nodes, worms, active, wheel)
            flit_moves += n_active - before       # a header entered each new worm's injection channel
        for idx in range(before, n_active):
            # from here on ``active`` lists the worms' records
            w = active[idx]
            n_free -= 1
            sl = free_list[n_free]
            active[idx] = sl
            fb = sl * L if train is None else sl * (L + depth) + depth
            rs[sl, R_WORM] = w
            if ugal is not None:
                _choose_route(w, worms, ugal[0], ugal[1], ugal[2], path_arc)
            rs[sl, R_BASE] = worms[W_START, w]
            rs[sl, R_H] = worms[W_END, w] - worms[W_START, w] - 1
            rs[sl, R_MOVED] = t
            rs[sl, R_SLEEP] = 0
            rs[sl, R_NEXT] = 0
            if train is None:
                ffirst[sl] = 0
                pos[fb] = 0
                arr[fb] = t
                run[fb] = 1
                for k in range(1, L):
                    pos[fb + k] = -1
            else:
                rs[sl, R_HPOS] = 0
                rs[sl, R_HARR] = t
                cur[fb] = t                      # the header entered the injection channel
                for k in range(fb - depth, fb):
                    cur[k] = FAR                 # no credit waits on rows j < depth (tail-left)
                rs[sl, R_COL] = -2
                rs[sl, R_GOAL] = -1                  # column -1 of the other rows: computed at the next visit
                rs[sl, R_TK] = 0
                rs[sl, R_TLAST] = -1
                rs[sl, R_TNEXT] = NEVER
                rs[sl, R_TIN] = t if L == 1 else NEVER
                rs[sl, R_LAST] = t
                rs[sl, R_AGE] = next_age
                next_age += 1
                if fifo is not None:
                    rs[sl, R_PART] = -1
                    rs[sl, R_VSET] = 0
                    rs[sl, R_AHEAD] = 0
        if n_active > max_active:
            max_active = n_active
        # 3. worms in flight, oldest first (those injected in this cycle, at the end, wait); each worm's flits
        # front to back
        moved_any = False
        keep = np.int64(0)
        for idx in range(before):
            sl = active[np.uint64(idx)]
            us = np.uint64(sl)        # (unsigned indices: no test for negative ones)
            w = rs[us, R_WORM]
            base = rs[us, R_BASE]
            h = rs[us, R_H]
            fb = sl * L if train is None else sl * (L + depth) + depth
            wake = NEVER              # the first cycle the clock alone may let a flit move
            moved = 0
            tail_from = -1            # the position the tail left in this cycle
            busy = -1                 # trains: what the blocked header waits for, a channel or n_ch + a node
            hp = (pos[fb] if ffirst[us] == 0 else h + 1) if train is None else rs[us, R_HPOS]
            full = train is None or rs[us, R_NEXT] <= t   # (a train before R_NEXT: only known departures, its tail)
            if train is None and rs[us, R_SLEEP] > t and hp < h:
                # nothing of this worm moved last time and the clock frees nothing before s_sleep: only a channel
                # freed under its blocked header can let it move now (trains wait in the channel's list instead)
                x = hp + 1
                ch = path_arc[base + x] * vcs + path_vc[base + x]
                s = path_slot[base + x]
                if owner[ch] >= 0 or (ej_channels > 0 and s >= 0 and (inter_ej or x == h)
                                      and ej_free[path_node[base + x]] == 0):
                    active[keep] = sl
                    keep += 1
                    continue
            # the header (alone it meets other worms: it takes the channels)
            go = False
            front = True              # no other worm's flit ahead of the header in its buffer
            if hp <= h and full:
                ready = (arr[fb] if train is None else rs[us, R_HARR]) + 1 + router_delay
                if fifo is not None and hp > 0 and train is None:
                    # its router pipeline starts when it comes to the front of its buffer
                    ch = path_arc[base + hp] * vcs + path_vc[base + hp]
                    e = p_in[base + hp]
                    ahead = _front_at(e, ch_out[ch], ch_dep[ch * ring + ((e - 1) & (ring - 1))])
                    if ahead == NEVER:
                        front = False
                        ready = NEVER
                    else:
                        ready = max(ready, ahead + 1 + router_delay)
                elif fifo is not None and train is not None and rs[us, R_AHEAD] > 0:
                    # (a train: once the departure of the flit ahead is known, it counts as the header's arrival)
                    ch = path_arc[base + hp]
                    e = rs[us, R_AHEAD]
                    ahead = _front_at(e, ch_out[ch], ch_dep[ch * ring + ((e - 1) & (ring - 1))])
                    if ahead == NEVER:
                        front = False
                        ready = NEVER
                    else:
                        rs[us, R_HARR] = max(rs[us, R_HARR], ahead)
                        rs[us, R_AHEAD] = 0
                        ready = rs[us, R_HARR] + 1 + router_delay
                if ready > t:
                    wake = ready
                elif hp == h:
                    go = True
                elif train is None and link_used[path_arc[base + hp + 1]] == t:
                    wake = t + 1
                else:
                    x = hp + 1
                    ch = path_arc[base + x] * vcs + path_vc[base + x]
                    if owner[ch] >= 0:
                        busy = ch
                    elif avail[ch] > t:
                        wake = avail[ch]
                    else:
                        go = True
                        if fifo is not None:      # the buffer may still hold earlier worms' flits
                            k = ch_in[ch] - depth
                            a = ch * ring + (k & (ring - 1))
                            dep = ch_dep[a] if train is None else _freed_at(ch_dep[a], ch_age[a], rs[us, R_AGE],
                                                                            credit_delay)
                            at = _room_at(k, ch_out[ch], dep, credit_delay)
                            if at > t:
                                go = False
                                wake = at
                        sx = path_slot[base + x]
                        if go and ej_channels > 0 and sx >= 0 and (inter_ej or x == h):
                            node = path_node[base + x]
                            if ej_free[node] == 0:
                                go = False
                                busy = n_ch + node
                            else:
                                ej_free[node] -= 1
                        if go:
                            owner[ch] = w
                if go:
                    moved += 1
            if train is None:
                # then the other flits front to back; only the first flit of each buffer (of each run) can move: a
                # flit behind it either stays behind it or, when it leaves, finds its buffer's port used this cycle;
                # so visit run fronts only
                j = ffirst[us]
                lead = -1             # the first flit of the run holding flit j - 1, after this cycle's moves
                lead_pos = h + 1      # its position (h + 1: none in the network)
                if j == 0:
                    n = run[fb]
                    if go:
                        x = hp + 1
                        pos[fb] = x
                        if ugal is not None:
                            _occupy(ugal[1], path_arc, base, hp, h)
                        if x <= h:
                            arr[fb] = t + link_latency - 1
                            link_used[path_arc[base + x]] = t
                            run[fb] = 1
                            lead = 0
                            lead_pos = x
                        else:
                            ffirst[us] = 1
                        if credit_delay > 0:
                            hist[fb * hist_len + hp % hist_len] = t
                        if fifo is not None:
                            # counted out of its buffer (the departure kept) and into the next one
                            if hp > 0:
                                ch = path_arc[base + hp] * vcs + path_vc[base + hp]
                                ch_dep[ch * ring + (ch_out[ch] & (ring - 1))] = t
                                ch_out[ch] += 1
                            if x <= h:
                                ch = path_arc[base + x] * vcs + path_vc[base + x]
                                p_in[base + x] = ch_in[ch]
                                ch_in[ch] += 1
                        if n > 1:
                            run[fb + 1] = n - 1
                            lead = 1
                            lead_pos = hp
                        if L == 1:
                            tail_from = hp
                    else:
                        lead = 0
                        lead_pos = hp
                    j = n
                while j < L:
                    f = fb + j
                    u = np.uint64(f)  # (an unsigned index: no test for a negative one)
                    y = pos[u]
                    if y < 0:
                        # the first flit still at the processor enters the injection channel (one per cycle)
                        if j >= depth:
                            at = _credit_at(f - depth, np.int64(0), pos, hist, credit_delay, hist_len)
                            if at > t:
                                wake = min(wake, at)
                                break
                        pos[u] = 0
                        arr[u] = t
                        run[u] = 0
                        if lead_pos != 0:
                            lead = j
                        run[np.uint64(fb + lead)] += 1
                        moved += 1
                        break
                    n = run[u]        # flits in its buffer, itself first
                    go = True
                    if arr[u] + 1 > t:
                        go = False
                        wake = min(wake, arr[u] + 1)
                    elif y < h:
                        x = y + 1
                        if link_used[path_arc[base + x]] == t:
                            go = False
                            wake = t + 1
                        elif fifo is not None:
                            ch = path_arc[base + x] * vcs + path_vc[base + x]
                            k = ch_in[ch] - depth
                            at = _room_at(k, ch_out[ch], ch_dep[ch * ring + (k & (ring - 1))], credit_delay)
                            if at > t:
                                go = False
                                wake = min(wake, at)
                        elif j >= depth:
                            at = _credit_at(f - depth, x, pos, hist, credit_delay, hist_len)
                            if at > t:
                                go = False
                                wake = min(wake, at)
                    if not go:
                        lead = j
                        lead_pos = y
                        j += n
                        continue
                    x = y + 1
                    pos[u] = x
                    if ugal is not None:
                        _occupy(ugal[1], path_arc, base, y, h)
                    if x <= h:
                        arr[u] = t + link_latency - 1
                        link_used[path_arc[base + x]] = t
                        # flit j joins the run ahead (it holds flit j - 1) or starts its own
                        if lead_pos == x:
                            run[np.uint64(fb + lead)] += 1
                        else:
                            run[u] = 1
                            lead = j
                            lead_pos = x
                    else:
                        ffirst[us] = j + 1
                    if credit_delay > 0:
                        hist[f * hist_len + y % hist_len] = t
                    if fifo is not None:
                        if y > 0:
                            ch = path_arc[base + y] * vcs + path_vc[base + y]
                            ch_dep[ch * ring + (ch_out[ch] & (ring - 1))] = t
                            ch_out[ch] += 1
                        if x <= h:
                            ch_in[path_arc[base + x] * vcs + path_vc[base + x]] += 1
                    moved += 1
                    if n > 1:
                        run[np.uint64(f + 1)] = n - 1   # the next flit heads what is left of the run; its port is used
                        lead = j + 1
                        lead_pos = y
                    if j == L - 1:
                        tail_from = y
                    j += n
            else:
                rec = sl * span
                if full:
                    # (before R_NEXT, below, a train's header waits and no step is pending: only its flits whose
                    # departures are known move, and its tail)
                    if go:
                        rs[us, R_HPREV] = cur[fb]
                        cur[fb] = t
                        rs[us, R_HPOS] = hp + 1
                        rs[us, R_HARR] = t + link_latency - 1
                        rs[us, R_GOAL] = hp if hp < h else h + grp[L - 1]
                        if L == 1:
                            tail_at[sl * span + (hp & (span - 1))] = t
                            rs[us, R_TLAST] = hp
                            if hp == rs[us, R_TK]:
                                rs[us, R_TNEXT] = t
                        if fifo is not None:
                            # the header's departure is kept if followers read it; its entry index into the next
                            # channel, and all its flits' entries reserved there (nobody else enters before its tail)
                            if hp > 0 and kept_from <= 0:
                                ch = path_arc[base + hp]
                                e = p_in[base + hp]
                                ch_dep[ch * ring + (e & (ring - 1))] = t
                                ch_age[ch * ring + (e & (ring - 1))] = rs[us, R_AGE]
                                ch_out[ch] = e + 1
                            if hp < h:
                                ch = path_arc[base + hp + 1]
                                p_in[base + hp + 1] = ch_in[ch]
                                e = ch_in[ch]
                                ch_in[ch] += L
                                # the flit ahead of it there: its departure is usually known already (else the visits
                                # from the next cycle look it up)
                                ahead = _front_at(e, ch_out[ch], ch_dep[ch * ring + ((e - 1) & (ring - 1))])
                                if ahead == NEVER:
                                    rs[us, R_AHEAD] = e
                                else:
                                    rs[us, R_HARR] = max(rs[us, R_HARR], ahead)
                    # the other flits: the columns of the recursion the header's departures now determine; a step
                    # computes row j's column col - grp[j], for the rows j_lo .. j_hi - 1 that have that column
                    hd = rs[us, R_HPOS] - 1   # the header's last departure (-1: its entry into the injection channel)
                    while True:
                        col = rs[us, R_COL] + 1
                        if col > rs[us, R_GOAL]:
                            break
                        m = rs[us, R_PART] if fifo is not None else -1    # rows i <= m of each group of step col done
                        j_lo = max(1, (col - h) * depth)
                        j_hi = min(L, (col + 2) * depth)
                        i_to = depth - 1          # this time rows j with i = j % depth in m + 1 .. i_to
                        if fifo is not None and col < h and j_lo < depth:
                            # they wait for slots the flits ahead of them (earlier worms') free in it: departures
                            # computed by those worms' trains, in their order of entry.  Rows whose wait is not known
                            # yet wait, and with them the rows of their group i of later groups (credits); the rest of
                            # the step is computed now (a *partial* step; the header cannot leave position col + 1
                            # before the rest is known)
                            nx = path_arc[base + col + 1]
                            e0 = p_in[base + col + 1] - depth
                            known = ch_out[nx] - 1 - e0
                            # the usual case: the flits ahead left before this worm's row 1 could (the last of them,
                            # the previous worm's tail, at most a cycle after the header left position col, less the
                            # credit delay): none of their waits binds, the virtual rows stay FAR
                            e = e0 + depth - 1
                            if e < 0 or (known >= depth - 1 and ch_dep[nx * ring + (e & (ring - 1))] + credit_delay
                                         <= (cur[fb] if hd == col else rs[us, R_HPREV])):
                                if rs[us, R_VSET] != 0:
                                    for jj in range(fb - depth, fb):
                                        cur[jj] = FAR
                                    rs[us, R_VSET] = 0
                            else:
                                if known < min(depth, j_hi) - 1:
                                    front = False     # (tried every cycle: the wait ends by other worms' moves)
                                    if known <= m:
                                        break
                                    i_to = known
                                # virtual rows j - depth: the flits depth entries ahead of rows j < depth, as their
                                # departures minus the credit delay (a younger worm's departure in this cycle counts
                                # from the next with no credit delay: it moves after this worm)
                                for jj in range(m + 1, min(i_to + 1, j_hi)):
                                    x = e0 + jj
                                    a = nx * ring + (x & (ring - 1))
                                    cur[fb + jj - depth] = FAR if x < 0 else _freed_at(ch_dep[a], ch_age[a],
                                                                                       rs[us, R_AGE], credit_delay)
                                rs[us, R_VSET] = 1
                        if i_to == depth - 1:
                            rs[us, R_COL] = col
                            if fifo is not None:
                                rs[us, R_PART] = -1
                        else:
                            rs[us, R_PART] = i_to
                        i_from = m + 1
                        j = j_lo
                        i = j % depth
                        if i > i_to:
                            j += depth - i + i_from
                        elif i < i_from:
                            j += i_from - i
                        # row j - 1's last two values and the column of the last (row j_lo - 1 is the header, or done;
                        # in a partial step the row ahead of a group's first is at that row's column)
                        up_col = hd if j == 1 else (h if j == j_lo else col - grp[np.uint64(min(j, L - 1))])
                        v = 0
                        k = 0
                        jl = -1
                        latest = t
                        while j < j_hi:
                            up_new = cur[fb + j - 1]
                            # (the row ahead's column before: read only for the header's, whose last departure may
                            # be a column further than a row needs)
                            up_old = rs[us, R_HPREV] if j == 1 else up_new
                            end = j_hi if i_from == 0 and i_to == depth - 1 else min(j_hi, j + i_to - j % depth + 1)
                            for jj in range(j, end):
                                k = col - grp[np.uint64(jj)]
                                u = np.uint64(fb + jj)
                                v = (up_new if k == up_col else up_old) + 1     # after the flit ahead
                                old = cur[u]
                                if k >= 0:            # after it arrived (k = 0: entered the injection channel)
                                    v = max(v, old + (1 if k == 0 else link_latency))
                                if k < h:             # after a credit from position k + 1 (virtual rows j < 0: above)
                                    v = max(v, cur[np.uint64(fb + jj - depth)] + credit_delay)
                                cur[u] = v
                                up_new = v
                                up_old = old
                                up_col = k
                                sched[np.uint64(rec + (v & (span - 1)))] += 1
                                latest = max(latest, v)
                            if fifo is not None:
                                for jj in range(max(j, kept_from), end):     # kept for followers
                                    k = col - grp[np.uint64(jj)]
                                    if k > 0:
                                        ch = path_arc[base + k]
                                        e = p_in[base + k] + jj
                                        ch_dep[ch * ring + (e & (ring - 1))] = cur[fb + jj]
                                        ch_age[ch * ring + (e & (ring - 1))] = rs[us, R_AGE]
                                        ch_out[ch] = e + 1
                                k = col - grp[np.uint64(end - 1)]
                            jl = end - 1
                            j = end - 1 - i_to + depth + i_from      # the next group's row i_from
                            if j < j_hi:
                                up_col = col - grp[np.uint64(j)]
                        if latest - t >= span:
                            status = BROKEN       # (a departure beyond the horizon: cannot happen)
                        rs[us, R_LAST] = max(rs[us, R_LAST], latest)
                        if jl == L - 1:           # the tail's: into the injection channel, or out of position k
                            if k == -1:
                                rs[us, R_TIN] = v
                            else:
                                tail_at[np.uint64(rec + (k & (span - 1)))] = v
                                rs[us, R_TLAST] = k
                                if k == rs[us, R_TK]:
                                    rs[us, R_TNEXT] = v
                        if i_to < depth - 1:
                            break
                    # the next cycle the header may move or a pending step complete; until then its flits only
                    # follow departures already known (no visit but theirs and the tail's): when the clock frees
                    # the header, when the VC or ejection channel it waits for is freed, else the next cycle
                    nxt = t + 1
                    if front and rs[us, R_COL] >= rs[us, R_GOAL] and (fifo is None or rs[us, R_AHEAD] == 0):
                        if rs[us, R_HPOS] > h:
                            nxt = NEVER
                        elif go:
                            nxt = rs[us, R_HARR] + 1 + router_delay
                        elif wake < NEVER:
                            nxt = max(t + 1, wake)
                        elif busy >= 0:
                            rs[us, R_WAITS] = waiting[busy]
                            waiting[busy] = sl
                            nxt = NEVER
                    rs[us, R_NEXT] = nxt
                b = np.uint64(rec + (t & (span - 1)))
                moved += sched[b]
                sched[b] = 0
                if rs[us, R_TNEXT] == t:
                    k = rs[us, R_TK]
                    tail_from = k
                    rs[us, R_TK] = k + 1
                    rs[us, R_TNEXT] = tail_at[np.uint64(rec + ((k + 1) & (span - 1)))] if k < rs[us, R_TLAST] else NEVER
            if tail_from >= 0:
                # the tail leaves position y: free its channel (tail-sent: the channel it entered), deliver its slot
                y = tail_from
                freed = -1            # the VC freed, and n_ch + the node whose ejection channel is freed
                freed_ej = -1
                if fifo is not None and y < h:
                    ch = path_arc[base + y + 1] * vcs + path_vc[base + y + 1]
                    owner[ch] = -1
                    avail[ch] = t + 1
                    freed = ch
                if y == 0:
                    inj_free[path_node[base]] += 1
                    n_pend = _mark(path_node[base], t + 1, nodes, PEND, n_pend)
                else:
                    if fifo is None:
                        ch = path_arc[base + y] * vcs + path_vc[base + y]
                        owner[ch] = -1
                        avail[ch] = t + 1 + credit_delay
                        freed = ch
                    sy = path_slot[base + y]
                    if sy >= 0:
                        if ej_channels > 0 and (inter_ej or y == h):
                            ej_free[path_node[base + y]] += 1
                            freed_ej = n_ch + path_node[base + y]
                        if slot_count[sy] == 0:
                            slot_time[sy] = t
                        slot_count[sy] += 1
                        jn = slot_job[sy]
                        if jn >= 0:
                            if _enqueue(jn, job_node[jn], nodes, jobs):
                                busy_nodes += 1
                            n_pend = _mark(job_node[jn], t + 1, nodes, PEND, n_pend)
                if train is not None:
                    # the headers waiting for what was freed try again: a VC from the next cycle (it is allocated
                    # from then), an ejection channel in this cycle if their turn in it is still to come
                    for q in range(2):
                        key = freed if q == 0 else freed_ej
                        if key >= 0:
                            r = waiting[key]
                            while r >= 0:
                                rs[r, R_NEXT] = t if q == 1 and rs[r, R_AGE] > rs[us, R_AGE] else t + 1
                                r = rs[r, R_WAITS]
                            waiting[key] = -1
            if moved == 0:
                if train is None:
                    # behind another worm's flits the wait ends by their moves, not by the clock: no sleeping
                    rs[us, R_SLEEP] = wake if front else 0
                active[keep] = sl
                keep += 1
                continue
            if train is None:
                rs[us, R_SLEEP] = 0
            flit_moves += moved
            rs[us, R_MOVED] = t
            moved_any = True
            advances += 1
            if tail_from == h:
                worm_pos[w] = h + 1
                worm_done[w] = t
                done_worms += 1
                free_list[n_free] = sl
                n_free += 1
            else:
                active[keep] = sl
                keep += 1
        for idx in range(before, n_active):
            active[keep] = active[idx]
            keep += 1
        n_active = keep
        if status == BROKEN:
            break
        due, last_move, last_check = _watch_due(t, moved_any, n_active, last_move, last_check, watchdog)
        if due == 2 and not _stuck(t, watchdog, n_active, active, rs[:, R_MOVED]):
            due = 0
        if due > 0:
            for idx in range(n_active):                 # the worms of the records: positions, last moves
                sl = active[idx]
                w = rs[sl, R_WORM]
                in_flight[idx] = w
                moved_at[w] = rs[sl, R_MOVED]
                worm_pos[w], worm_tail[w] = _ends(t, sl, L, shared, pos, rs)
            found = _knot(t, in_flight, n_active, worm_inject, worm_pos, worm_tail, flits, depth, ej_channels,
                          inter_ej, worms[W_START], worms[W_END], path_node, path_arc, path_vc, path_slot, vcs, owner,
                          ej_free, num_nodes, dead, release)
            if due == 1 or found > 0:
                status = DEADLOCK
                if due == 1 and fifo is not None:
                    # waits behind other worms' flits escape the knot search, but nothing moved for longer than
                    # any clock wait: every worm in flight is blocked for good
                    for idx in range(n_active):
                        dead[in_flight[idx]] = True
                stats[S_STALL_CYCLE] = _stall_cycle(due, t, last_move, n_active, in_flight, moved_at, dead)
                t += 1
                break
        t += 1
    for idx in range(n_active):
        sl = active[idx]
        worm_pos[rs[sl, R_WORM]], worm_tail[rs[sl, R_WORM]] = _ends(t - 1, sl, L, shared, pos, rs)
    stats[S_CYCLES] = t
    stats[S_FLIT_MOVES] = flit_moves
    stats[S_ADVANCES] = advances
    stats[S_STATUS] = status
    stats[S_MAX_ACTIVE] = max_active
    stats[S_WORMS_DONE] = done_worms


def _fifo(n_ch: int, path_len: int, config: RouterConfig):
    """The flit-level kernel's state of the shared buffers of ``tail-sent`` VC release, None for ``tail-left``:
    per channel the flits sent in, the flits out (trains: whose departures are known) and a ring of the last
    ``buffer_depth`` departures and of their worms' ages, per path position the header's index in its channel's
    order of entry."""
    if not config.tail_sent:
        return None
    ring = n_ch * (1 << (config.buffer_depth - 1).bit_length())
    return (np.zeros(n_ch, np.int64), np.zeros(n_ch, np.int64), np.zeros(ring, np.int64), np.zeros(path_len, np.int64),
            np.zeros(ring, np.int64))


def _train_span(config: RouterConfig) -> int:
    """A power of two beyond the cycles a train's flit departure is computed ahead of the clock.

    A column of the recursion is computed in the cycle of the header's
    departure ``T`` it waits for.  Its departures follow ``T`` at most by a
    longest path of the recursion from the header's row, whose departures
    up to ``T`` are at least ``link_latency + router_delay`` apart: at most
    ``(flits - 1) (1 + link_latency + credit_delay) + link_latency`` cycles
    (flits - 1 steps down the rows of one cycle each, and per credit step
    of ``buffer_depth`` rows at most ``link_latency + credit_delay``
    cycles more than the header gains on it).  Under ``tail-sent`` the rows
    behind a header also wait for earlier worms' flits, whose departures
    were computed ahead in turn: the horizon is twice as long, and a
    departure beyond it (a chain of worms queued in one another's buffers)
    makes :func:`simulate` run again with every flit on its own.
    """
    reach = (config.flits - 1) * (1 + config.link_latency + config.credit_delay) + config.link_latency
    if config.tail_sent:
        reach *= 2
    return 1 << int(reach + config.router_delay + 3).bit_length()


def simulate(num_nodes: int, num_arcs: int, traffic: WormTraffic, config: RouterConfig,
             cycles: int, stop_when_idle: bool = True, flit_level: bool | None = None) -> WormTrace:
    """Run ``traffic`` for at most ``cycles`` cycles (fewer if everything is done and ``stop_when_idle``).

    ``num_arcs`` is the topology's arc count (the plan's ``path_arc`` index
    it).  ``flit_level`` forces the flit-level path (True) or the rigid one
    (False, only for the default network options and one VC in use);
    ``None`` picks the rigid path when it applies.  A plan with alternate
    routes (``traffic.path_alt``) runs flit by flit, each worm's source
    choosing its route (:func:`_choose_route`).
    """
    if cycles < 1:
        raise TopocastError(f"wormhole: parameter 'cycles' must be >= 1, got {cycles}")
    path_vc, top_vc = vc_array(traffic, config)
    if config.vcs is None:
        config = replace(config, vcs=top_vc + 1)
    top_arc = int(traffic.path_arc.max()) if len(traffic.path_arc) else -1
    if top_arc >= num_arcs:
        raise TopocastError(f"wormhole: the plan names arc {top_arc}, the topology has {num_arcs} arcs")
    alt = _alternates(traffic)
    rigid = config.rigid and top_vc == 0 and alt is None
    if flit_level is None:
        general = not rigid
    elif not flit_level and not rigid:
        raise TopocastError("wormhole: the rigid path needs the default network options (vc_release tail-left), "
                            "one virtual channel and no alternate routes")
    else:
        general = bool(flit_level)
    vcs = config.vcs if general else 1
    span = _train_span(config)
    if general and cycles + config.link_latency + config.credit_delay + span >= 2**31:
        raise TopocastError(f"wormhole: parameter 'cycles' must be < "
                            f"{2**31 - config.link_latency - config.credit_delay - span} on the flit-level path "
                            f"with these options (its flit times are 32-bit), got {cycles}")
    params = (int(cycles), config.flits, config.startup, config.ejection_channels, config.batch,
              bool(config.intermediate_ejection), config.watchdog, bool(stop_when_idle))
    paths = tuple(np.asarray(a, np.int64) for a in (traffic.path_ptr, traffic.path_node, traffic.path_arc, path_vc,
                                                    traffic.path_slot, traffic.slot_job))
    net = (int(num_arcs), vcs, config.buffer_depth, config.router_delay, config.link_latency, config.credit_delay, span)
    trains = vcs == 1 and alt is None
    while True:
        state = _kernel_state(traffic, config, int(num_nodes), int(num_arcs) * vcs)
        slot_time, slot_count, jobs, n_timed, nodes, worms, owner, dead, stats = state
        args = (params, jobs, n_timed, nodes, worms, paths, (slot_time, slot_count, owner, dead, stats))
        if general:
            ugal = None if alt is None else (alt, np.zeros(int(num_arcs), np.int64), int(traffic.alt_threshold))
            _simulate_flits(*args, net, _fifo(int(num_arcs) * vcs, len(traffic.path_arc), config),
                            1 if trains else None, ugal)
        else:
            _simulate_rigid(*args)
        if stats[S_STATUS] != BROKEN:
            break
        if not (general and trains and config.tail_sent):
            raise RuntimeError("wormhole: internal error: a flit departure outside the kernel's horizon")
        # tail-sent trains: a departure known further ahead than the horizon (chains of worms queued in one
        # another's buffers); run again with every flit on its own, the same trace
        trains = False
    nj = traffic.num_jobs
    trace = WormTrace(slot_time, slot_count, worms[W_INJECT].copy(), worms[W_DONE].copy(), jobs[J_START, :nj].copy(),
                      int(stats[S_CYCLES]), int(stats[S_FLIT_MOVES]), int(stats[S_ADVANCES]),
                      int(stats[S_MAX_ACTIVE]), kernel="flits" if not trains else "trains" if general else "rigid",
                      worm_route=None if alt is None else (worms[W_START] != traffic.path_ptr[:-1]).astype(np.int8))
    if stats[S_STATUS] == DEADLOCK:
        trace.deadlock_cycle = int(stats[S_STALL_CYCLE])
        cycle = wait_for_cycle(traffic, worms[W_POS], worms[W_TAIL], owner, dead, config, path_vc, vcs,
                               worms[W_START], worms[W_END])
        trace.wait_cycle = [(u, v) for u, v, _ in cycle]
        trace.wait_vcs = [vc for _, _, vc in cycle]
        trace.deadlocked_worms = int(dead.sum())
        names = [f"eject@{v}" if u < 0 else f"{u}->{v}" + (f"/vc {vc}" if config.vcs > 1 else "")
                 for u, v, vc in cycle]
        arcs_text = " ; ".join(names) or "none found"
        trace.deadlock = (f"deadlock: {trace.deadlocked_worms} worms blocked for good at cycle {trace.cycles - 1} "
                          f"(the longest-stuck since cycle {trace.deadlock_cycle}; watchdog {config.watchdog} "
                          f"cycles); channels in the wait-for cycle: {arcs_text}")
    return trace


def _kernel_state(traffic: WormTraffic, config: RouterConfig, num_nodes: int, num_channels: int):
    """The kernels' fresh state: delivery slots, jobs (and how many are timed), nodes, worms, VC owners, the
    deadlocked worms and the counters."""
    nj, nw, ns = traffic.num_jobs, traffic.num_worms, traffic.num_slots
    timed = np.flatnonzero(traffic.job_release >= 0).astype(np.int64)
    release = traffic.job_release[timed]
    if np.any(release[1:] < release[:-1]):   # (plans usually list their jobs in order of release)
        timed = timed[np.argsort(release, kind="stable")]
    timed_order = timed
    jobs = np.full((JOB_ROWS, nj + 1), -1, np.int64)
    jobs[J_NODE, :nj] = traffic.job_node
    jobs[J_RELEASE, :nj] = traffic.job_release
    jobs[J_PREP, :nj] = traffic.job_prep
    jobs[J_WORMS] = traffic.job_worm_ptr
    jobs[J_ORDER, :len(timed_order)] = timed_order
    nodes = np.full((NODE_ROWS, num_nodes), -1, np.int64)
    nodes[[P_BATCH, P_END, N_WORK]] = 0
    nodes[INJ_FREE] = config.injection_channels
    nodes[EJ_FREE] = config.ejection_channels
    worms = np.full((WORM_ROWS, nw), -1, np.int64)
    worms[W_MOVED] = 0
    worms[W_START] = traffic.path_ptr[:-1]
    worms[W_END] = traffic.path_ptr[1:]
    return (np.full(ns, -1, np.int64), np.zeros(ns, np.int64), jobs, len(timed_order), nodes, worms,
            np.full(num_channels, -1, np.int64), np.zeros(nw, np.bool_), np.zeros(NUM_STATS, np.int64))


def _alternates(traffic: WormTraffic) -> np.ndarray | None:
    """The plan's alternate routes as a ``(2, worms)`` int64 array (first and last-plus-one path position, -1:
    none), checked; None when it has none."""
    if traffic.path_alt is None:
        return None
    alt = np.ascontiguousarray(traffic.path_alt, dtype=np.int64)
    nw, n = traffic.num_worms, len(traffic.path_node)
    if alt.shape != (2, nw):
        raise TopocastError(f"wormhole: path_alt must have shape (2, {nw}) (first and end position per worm), "
                            f"got {alt.shape}")
    some = np.flatnonzero(alt[0] >= 0)
    a, b = alt[0, some], alt[1, some]
    if np.any((b <= a + 1) | (b > n)):
        raise TopocastError(f"wormhole: every alternate route in path_alt must be 2 to {n} path positions long "
                            "within the plan's paths")
    node, slot, ptr = traffic.path_node, traffic.path_slot, traffic.path_ptr
    if np.any((node[a] != node[ptr[some]]) | (node[b - 1] != node[ptr[some + 1] - 1])
              | (slot[b - 1] != slot[ptr[some + 1] - 1])):
        raise TopocastError("wormhole: an alternate route in path_alt must join the same source and destination "
                            "(and slot) as its worm's planned route")
    return alt


def vc_array(traffic: WormTraffic, config: RouterConfig) -> tuple[np.ndarray, int]:
    """The plan's ``path_vc`` as int64 (zeros when absent) and the highest VC used, checked against ``config.vcs``."""
    n = len(traffic.path_node)
    if traffic.path_vc is None:
        return np.zeros(n, np.int64), 0
    vc = np.asarray(traffic.path_vc, dtype=np.int64)
    if vc.shape != (n,):
        raise TopocastError(f"wormhole: path_vc must have one entry per path position ({n}), got shape {vc.shape}")
    limit = config.vcs if config.vcs is not None else np.iinfo(np.int64).max
    if n and vc.min() >= 0 and vc.max() < limit:
        return vc, int(vc.max())
    on_arc = traffic.path_arc >= 0         # start positions may hold anything
    used = vc[on_arc]
    if len(used) and used.min() < 0:
        raise TopocastError(f"wormhole: path_vc must be >= 0 on every arc, got {int(used.min())}")
    need = int(used.max()) + 1 if len(used) else 1
    if need > limit:
        raise TopocastError(f"wormhole: parameter 'vcs' must be >= {need} for this plan (its worms use virtual "
                            f"channels 0..{need - 1}), got {config.vcs}")
    return np.where(on_arc, vc, 0), need - 1
