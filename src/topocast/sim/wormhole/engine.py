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
  destination, an ejection channel); the VC stays the worm's until its
  tail leaves that buffer (wormhole: no other worm's flits in between).
  Data flits follow under credit flow control: a flit may be sent into a
  buffer only when one of the buffer's ``buffer_depth`` slots is free, and
  a slot freed in cycle ``t`` is visible upstream from cycle
  ``t + credit_delay`` (``credit_delay = 0``: the slot can take a flit in
  the very cycle it empties, flow-through).  A VC released in cycle ``t``
  can be allocated again from cycle ``t + 1 + credit_delay``.
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
  (oldest first), each worm's flits front to back; a VC released in cycle
  ``t`` is free from ``t + 1 + credit_delay``.
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
  credit_delay`` (the longest a moving network can stay still).
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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from ...errors import TopocastError
from ...plans.wormhole import WormTraffic
from ...validate import integer
from .. import heap

OK, DEADLOCK = 0, 1
# stats slots
S_CYCLES, S_FLIT_MOVES, S_ADVANCES, S_STATUS, S_MAX_ACTIVE, S_WORMS_DONE, S_STALL_CYCLE = range(7)
NUM_STATS = 7


@dataclass(frozen=True)
class RouterConfig:
    """The router's cycle parameters, the ``router`` of :class:`~topocast.sim.models.Model`.

    Start-up latency and message length in cycles and flits, injection and
    ejection channels per node, worms launched per start-up (default one per
    injection channel), whether intermediate destinations hold an ejection
    channel, and the deadlock watchdog in cycles (defaults: Al-Dubai et al.
    2003, section 4).  The network options: ``vcs`` virtual channels per
    link, ``buffer_depth`` flits of buffer per virtual channel,
    ``router_delay`` cycles a header spends in each router before it may
    leave, ``link_latency`` cycles per link traversal, ``credit_delay``
    cycles before freed buffer space is visible upstream; their defaults
    (1, 1, 0, 1, 0) are the rigid worm of the paper.
    """

    startup: int = 33
    flits: int = 32
    injection_channels: int = 4
    ejection_channels: int = 4
    worms_per_startup: int | None = None
    intermediate_ejection: bool = True
    watchdog: int = 2000
    vcs: int = 1
    buffer_depth: int = 1
    router_delay: int = 0
    link_latency: int = 1
    credit_delay: int = 0

    def __post_init__(self):
        for name in ("startup", "flits", "injection_channels", "ejection_channels", "watchdog", "vcs",
                     "buffer_depth", "router_delay", "link_latency", "credit_delay"):
            minimum = 0 if name in ("startup", "ejection_channels", "router_delay", "credit_delay") else 1
            object.__setattr__(self, name, integer(getattr(self, name), name, owner="wormhole", minimum=minimum))
        if self.worms_per_startup is not None:
            object.__setattr__(self, "worms_per_startup",
                               integer(self.worms_per_startup, "worms_per_startup", owner="wormhole", minimum=1))
        quiet = self.router_delay + self.link_latency + self.credit_delay
        if self.watchdog < quiet:
            raise TopocastError(f"wormhole: parameter 'watchdog' must be >= router_delay + link_latency + "
                                f"credit_delay = {quiet} cycles, got {self.watchdog}")

    @property
    def batch(self) -> int:
        return int(self.worms_per_startup or self.injection_channels)

    @property
    def rigid(self) -> bool:
        """True when the network options are the defaults: the worm moves as a rigid train."""
        return (self.buffer_depth, self.router_delay, self.link_latency, self.credit_delay) == (1, 0, 1, 0)


def lone_tail_time(hops, total_hops, config: RouterConfig):
    """Cycles from the end of a worm's start-up to its tail leaving the router ``hops`` hops down its path.

    The worm is alone in the network and its path has ``total_hops`` hops;
    the answer is the cycle its tail passes that destination minus ``S``.
    Header: leaves router ``k`` in cycle ``S + 1 + r + k*(l + r)``; flit
    ``j`` cannot leave a router before the flit ahead of it has (``+1``),
    before it has crossed the link (``+l``), nor before the flit ``B``
    ahead of it has left the next buffer (``+c``, credits).  The longest
    chain of these constraints to the tail's departure from router ``q``
    runs along the header to router ``q + m`` and back down by ``m``
    credit steps: ``r + q*(l + r) + L + max_m [m*(l + r + c - B) -
    r*max(0, q + m - h)]`` over ``0 <= m <= floor((L - 1)/B)``, a concave
    function of ``m`` whose maximum is at ``0``, ``h - q`` or the top.
    """
    q = np.asarray(hops, dtype=np.int64)
    h = np.asarray(total_hops, dtype=np.int64)
    L, B = config.flits, config.buffer_depth
    ll, r, c = config.link_latency, config.router_delay, config.credit_delay
    top = (L - 1) // B
    best = np.zeros(np.broadcast(q, h).shape, dtype=np.int64)
    for m in (np.minimum(top, np.maximum(h - q, 0)), np.full_like(best, top)):
        best = np.maximum(best, m * (ll + r + c - B) - r * np.maximum(0, q + m - h))
    # a path of no hops: the tail only waits for credits of the injection buffer
    best = np.where(h == 0, top * max(0, c + 1 - B), best)
    return r + q * (ll + r) + L + best


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


@nb.njit(cache=True, inline="always")
def _append(item, v, head, tail, nxt):
    """Append ``item`` to node ``v``'s linked FIFO (``head``/``tail`` per node, ``nxt`` per item)."""
    if tail[v] < 0:
        head[v] = item
    else:
        nxt[tail[v]] = item
    tail[v] = item


@nb.njit(cache=True, inline="always")
def _enqueue(j, v, q_head, q_tail, job_next, node_work):
    """Append job ``j`` to node ``v``'s FIFO; True if the node was idle until now."""
    _append(j, v, q_head, q_tail, job_next)
    node_work[v] += 1
    return node_work[v] == 1


@nb.njit(cache=True)
def _span_position(w, ch, lo, hi, path_ptr, path_arc, path_vc, vcs):
    """The position in ``lo..hi`` of worm ``w``'s path where it holds channel ``ch`` (-1: none)."""
    base = path_ptr[w]
    for q in range(max(lo, 1), hi + 1):
        if path_arc[base + q] * vcs + path_vc[base + q] == ch:
            return q
    return -1


@nb.njit(cache=True)
def _find_knot(active, n_active, head, tail, wait_ch, wait_ej, flits, depth, ej_channels, inter_ej,
               path_ptr, path_node, path_arc, path_vc, path_slot, vcs, owner, num_nodes, dead):
    """Mark in ``dead`` the worms of a knot (blocked for good); return how many.

    ``head``/``tail`` are every worm's header and tail positions,
    ``wait_ch``/``wait_ej`` (per active index) the channel or the node whose
    ejection channels its header waits for (-1: not blocked).  A worm is
    *live* if it is not blocked, or waits for a channel (ejection channels)
    that its owner (one of their holders) is live or can free by
    compressing its flits into its buffers ahead; the rest, by
    construction, wait only on each other.
    """
    n_worms = len(dead)
    live = np.zeros(n_active, np.bool_)
    slot_of = np.full(n_worms, -1, np.int64)      # worm -> index in active
    for i in range(n_active):
        slot_of[active[i]] = i
    # holders of ejection channels, as (node, active index, frees-by-compression) triples
    hold_node = np.empty(0, np.int64)
    hold_idx = np.empty(0, np.int64)
    hold_soft = np.empty(0, np.bool_)
    if ej_channels > 0:
        count = 0
        for pass_ in range(2):
            if pass_ == 1:
                hold_node = np.empty(count, np.int64)
                hold_idx = np.empty(count, np.int64)
                hold_soft = np.empty(count, np.bool_)
                count = 0
            for i in range(n_active):
                w = active[i]
                base = path_ptr[w]
                h = path_ptr[w + 1] - base - 1
                p = head[w]
                lo = tail[w] if tail[w] > 1 else 1
                hi = p if p < h else h
                for q in range(lo, hi + 1):
                    if path_slot[base + q] >= 0 and (inter_ej or q == h):
                        if pass_ == 1:
                            hold_node[count] = path_node[base + q]
                            hold_idx[count] = i
                            hold_soft[count] = (p - q) * depth >= flits
                        count += 1
        order = np.argsort(hold_node, kind="mergesort")
        hold_node = hold_node[order]
        hold_idx = hold_idx[order]
        hold_soft = hold_soft[order]
    node_ptr = np.zeros(num_nodes + 1, np.int64)
    for k in range(len(hold_node)):
        node_ptr[hold_node[k] + 1] += 1
    for v in range(num_nodes):
        node_ptr[v + 1] += node_ptr[v]
    hard = np.zeros(n_active, np.bool_)       # the owner of the channel waited for cannot free it alone
    for i in range(n_active):
        if wait_ch[i] < 0 and wait_ej[i] < 0:
            live[i] = True
        elif wait_ch[i] >= 0:
            x = owner[wait_ch[i]]
            if x >= 0 and slot_of[x] >= 0:
                q = _span_position(x, wait_ch[i], tail[x], head[x], path_ptr, path_arc, path_vc, vcs)
                hard[i] = q >= 0 and (head[x] - q) * depth < flits
            if not hard[i]:
                live[i] = True
        else:
            x = wait_ej[i]
            for k in range(node_ptr[x], node_ptr[x + 1]):
                if hold_soft[k]:
                    live[i] = True
                    break
    changed = True
    while changed:
        changed = False
        for i in range(n_active):
            if live[i]:
                continue
            if wait_ch[i] >= 0:
                j = slot_of[owner[wait_ch[i]]]
                if j < 0 or live[j]:
                    live[i] = True
                    changed = True
            else:
                x = wait_ej[i]
                for k in range(node_ptr[x], node_ptr[x + 1]):
                    if live[hold_idx[k]]:
                        live[i] = True
                        changed = True
                        break
    found = 0
    for i in range(n_active):
        if not live[i]:
            dead[active[i]] = True
            found += 1
    return found


@nb.njit(cache=True)
def _knot(t, general, active, n_active, worm_inject, worm_pos, worm_tail, fl, wslot, flits, depth, ej_channels,
          inter_ej, path_ptr, path_node, path_arc, path_vc, path_slot, vcs, owner, ej_free, num_nodes, dead):
    """Positions and waits of the worms in flight, then :func:`_find_knot`."""
    wait_ch = np.full(n_active, -1, np.int64)
    wait_ej = np.full(n_active, -1, np.int64)
    for i in range(n_active):
        w = active[i]
        if general:
            fb = wslot[w] * flits
            worm_pos[w] = fl[fb, 0]
            worm_tail[w] = fl[fb + flits - 1, 0]
        else:
            worm_tail[w] = worm_pos[w] - flits + 1
        if worm_inject[w] == t:
            continue
        # a header still crossing a link or in the router pipeline will then wait like a ready one
        base = path_ptr[w]
        h = path_ptr[w + 1] - base - 1
        p = worm_pos[w]
        if p >= h:
            continue
        ch = path_arc[base + p + 1] * vcs + path_vc[base + p + 1]
        if owner[ch] >= 0:
            wait_ch[i] = ch
            continue
        x = path_node[base + p + 1]
        s = path_slot[base + p + 1]
        if ej_channels > 0 and s >= 0 and (inter_ej or p + 1 == h) and ej_free[x] == 0:
            wait_ej[i] = x
    return _find_knot(active, n_active, worm_pos, worm_tail, wait_ch, wait_ej, flits, depth, ej_channels,
                      inter_ej, path_ptr, path_node, path_arc, path_vc, path_slot, vcs, owner, num_nodes, dead)


#: rows of the kernels' ``visits`` lists: nodes to visit next cycle, and this cycle (each followed by its marks)
PEND, WORK = 0, 2

#: a cycle later than any run: "not by waiting" (blocked by a flit or a channel, not by the clock)
NEVER = np.iinfo(np.int64).max


@nb.njit(cache=True, inline="always")
def _credit_at(k, x, fl, hist, credit_delay, ring):
    """The first cycle a flit may enter position ``x``, whose slot flit ``k`` (the ``depth``-th ahead) frees
    when it leaves: 0 if it has left and the credit is back, ``NEVER`` if it has not left yet."""
    pk = fl[k, 0]
    if pk <= x:
        return NEVER
    if credit_delay > 0 and pk - 1 - x < credit_delay:
        return hist[k * ring + x % ring] + credit_delay
    return 0


@nb.njit(cache=True, inline="always")
def _mark(v, when, visits, row, n):
    """Add node ``v`` to the list ``visits[row, :n]`` unless already there for cycle ``when`` (noted in
    ``visits[row + 1, v]``); the new count."""
    if visits[row + 1, v] != when:
        visits[row + 1, v] = when
        visits[row, n] = v
        n += 1
    return n


@nb.njit(cache=True, inline="always")
def _processors(t, busy, rp, n_active, n_pend, n_timers, startup, batch, job_node, job_release, job_prep,
                job_worm_ptr, timed_order, q_head, q_tail, job_next, proc, inj_queue, worm_next, inj_free,
                node_work, active, worm_pos, worm_inject, moved_at, job_start, visits, timer_at, timer_node):
    """Steps 1 and 2 of a cycle: jobs released by time, processors, injection (new worms appended to ``active``).

    Only the nodes where something can happen are visited, in increasing
    order: a job released now, a node named in ``visits[PEND]`` (a relay
    job enqueued or an injection channel freed last cycle, or jobs left
    waiting), a processor whose start-up ends now (the heap
    ``timer_at``/``timer_node`` of :mod:`topocast.sim.heap`, one entry per
    node).  Any other node's visit would change nothing (the kernels call
    this only when one of these is due).  Returns the updated ``(busy
    nodes, next timed job, worms in flight, pending nodes, timers,
    timer_at, timer_node)``.
    """
    n_timed = len(timed_order)
    n = 0
    while rp < n_timed and job_release[timed_order[rp]] <= t:
        j = timed_order[rp]
        rp += 1
        if _enqueue(j, job_node[j], q_head, q_tail, job_next, node_work):
            busy += 1
        n = _mark(job_node[j], t, visits, WORK, n)
    for i in range(n_pend):
        n = _mark(visits[PEND, i], t, visits, WORK, n)
    n_pend = 0
    while n_timers > 0 and timer_at[0] <= t:
        v = heap.pop(timer_at, timer_node, n_timers)[2]
        n_timers -= 1
        n = _mark(v, t, visits, WORK, n)
    visits[WORK, :n].sort()
    for i in range(n):
        v = visits[WORK, i]
        if node_work[v] == 0:
            continue
        was_job = proc[0, v]
        was_batch = proc[1, v]
        for _ in range(2):  # finish a batch, start the next job (which may finish at once)
            j = proc[0, v]
            if j >= 0 and proc[2, v] <= t:
                first = job_worm_ptr[j] + proc[1, v] * batch
                last = min(first + batch, job_worm_ptr[j + 1])
                for w in range(first, last):
                    if inj_queue[1, v] < 0:
                        inj_queue[0, v] = w
                    else:
                        worm_next[inj_queue[1, v]] = w
                    inj_queue[1, v] = w
                    node_work[v] += 1
                proc[1, v] += 1
                if job_worm_ptr[j] + proc[1, v] * batch < job_worm_ptr[j + 1]:
                    proc[2, v] = t + startup
                else:
                    proc[0, v] = -1
                    node_work[v] -= 1
            if proc[0, v] < 0 and q_head[v] >= 0:
                j = q_head[v]
                q_head[v] = job_next[j]
                if q_head[v] < 0:
                    q_tail[v] = -1
                job_start[j] = t
                proc[0, v] = j
                proc[1, v] = 0
                proc[2, v] = t + job_prep[j] + startup
                if job_worm_ptr[j + 1] == job_worm_ptr[j]:
                    proc[0, v] = -1
                    node_work[v] -= 1
        while inj_free[v] > 0 and inj_queue[0, v] >= 0:
            w = inj_queue[0, v]
            inj_queue[0, v] = worm_next[w]
            if inj_queue[0, v] < 0:
                inj_queue[1, v] = -1
            inj_free[v] -= 1
            worm_pos[w] = 0
            worm_inject[w] = t
            moved_at[w] = t
            active[n_active] = w
            n_active += 1
            node_work[v] -= 1
        if node_work[v] == 0:
            busy -= 1
        if proc[0, v] >= 0 and (proc[0, v] != was_job or proc[1, v] != was_batch):
            timer_at, timer_node = heap.push(timer_at, timer_node, n_timers, max(proc[2, v], t + 1), 0, v)
            n_timers += 1
        elif proc[0, v] < 0 and q_head[v] >= 0:
            n_pend = _mark(v, t + 1, visits, PEND, n_pend)
    return busy, rp, n_active, n_pend, n_timers, timer_at, timer_node


@nb.njit(cache=True, inline="always")
def _watch_due(t, moved_any, n_active, last_move, last_check, watchdog, active, moved_at):
    """The deadlock watchdog at the end of cycle ``t``: ``(due, last_move, last_check)`` with ``due`` 0 (nothing
    to do), 1 (no worm moved for ``watchdog`` cycles: a deadlock) or 2 (some worm has not moved for
    ``watchdog`` cycles: look for a knot)."""
    if moved_any or n_active == 0:
        last_move = t
    elif t - last_move >= watchdog:
        return 1, last_move, last_check
    if t - last_check >= watchdog:
        # a knot of worms can be stuck while traffic elsewhere keeps moving
        last_check = t
        for idx in range(n_active):
            if t - moved_at[active[idx]] >= watchdog:
                return 2, last_move, last_check
    return 0, last_move, last_check


@nb.njit(cache=True)
def _stall_cycle(due, t, last_move, n_active, active, moved_at, dead):
    """The cycle the deadlock began: the last move (global stall) or the longest-stuck knotted worm's."""
    if due == 1:
        return last_move
    stall = t
    for idx in range(n_active):
        w = active[idx]
        if dead[w] and moved_at[w] < stall:
            stall = moved_at[w]
    return stall


@nb.njit(cache=True)
def _grow(arr, size):
    out = np.zeros(size, arr.dtype)
    out[:len(arr)] = arr
    return out


@nb.njit(cache=True)
def _grow_rows(arr, rows):
    out = np.zeros((rows, arr.shape[1]), arr.dtype)
    out[:arr.shape[0]] = arr
    return out


@nb.njit(cache=True)
def _simulate_rigid(cycles, flits, startup, ej_channels, batch, inter_ej, watchdog, stop_idle, num_nodes,
                    job_node, job_release, job_prep, job_worm_ptr, timed_order, path_ptr, path_node, path_arc,
                    path_vc, path_slot, slot_job, slot_time, slot_count, worm_inject, worm_done, job_start, owner,
                    worm_pos, worm_tail, dead, stats, inj_free, ej_free):
    """The default network (one VC, one-flit buffers, no delays): a blocked worm stays a rigid train, so
    only its header's position is kept (flit ``j`` is ``j`` positions behind it)."""
    n_jobs = len(job_node)
    n_worms = len(path_ptr) - 1
    # processor queues (linked lists of jobs) and injection queues (of worms)
    q_head = np.full(num_nodes, -1, np.int64)
    q_tail = np.full(num_nodes, -1, np.int64)
    job_next = np.full(n_jobs, -1, np.int64)
    proc = np.zeros((3, num_nodes), np.int64)       # per processor: its job (-1: none), batch, end of start-up
    proc[0] = -1
    inj_queue = np.full((2, num_nodes), -1, np.int64)  # per node: head and tail of its injection queue
    worm_next = np.full(n_worms, -1, np.int64)
    avail = np.zeros(len(owner), np.int64)
    active = np.empty(n_worms + 1, np.int64)
    node_work = np.zeros(num_nodes, np.int64)  # queued jobs + running job + queued worms
    moved_at = np.zeros(n_worms, np.int64)     # cycle of the worm's last move (or injection)
    # nodes to visit next cycle (row PEND) and this cycle (row WORK), each with the cycle a node was last put on it
    visits = np.full((4, num_nodes), -1, np.int64)
    timer_at = np.empty(num_nodes + 1, np.float64)   # start-ups in progress, a heap of (end cycle, 0, node)
    timer_node = np.empty((num_nodes + 1, 2), np.int64)
    n_pend = 0
    n_timers = 0
    none = np.zeros(0, np.int64)
    none2 = np.zeros((0, 2), np.int32)
    n_active = 0
    busy_nodes = 0          # nodes with a job queued or running or worms queued
    rp = 0
    n_timed = len(timed_order)
    last_move = 0
    last_check = 0
    flit_moves = 0
    advances = 0
    max_active = 0
    done_worms = 0
    status = OK
    t = 0
    while t < cycles:
        if stop_idle and rp >= n_timed and n_active == 0 and busy_nodes == 0:
            break
        if n_pend > 0 or (n_timers > 0 and timer_at[0] <= t) or (rp < n_timed and job_release[timed_order[rp]] <= t):
            before = n_active
            busy_nodes, rp, n_active, n_pend, n_timers, timer_at, timer_node = _processors(
                t, busy_nodes, rp, n_active, n_pend, n_timers, startup, batch, job_node, job_release,
                job_prep, job_worm_ptr, timed_order, q_head, q_tail, job_next, proc, inj_queue, worm_next, inj_free,
                node_work, active, worm_pos, worm_inject, moved_at, job_start, visits, timer_at, timer_node)
            flit_moves += n_active - before       # a header entered each new worm's injection channel
        if n_active > max_active:
            max_active = n_active
        # 3. worms in flight, oldest first
        moved_any = False
        keep = 0
        for idx in range(n_active):
            w = active[idx]
            if worm_inject[w] == t:
                active[keep] = w
                keep += 1
                continue
            base = path_ptr[w]
            h = path_ptr[w + 1] - base - 1
            p = worm_pos[w]
            if p < h:
                a = path_arc[base + p + 1]
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
            worm_pos[w] = p
            moved_at[w] = t
            moved_any = True
            advances += 1
            tail = p - (flits - 1)
            lo = tail if tail > 0 else 0
            hi = p if p < h + 1 else h + 1
            flit_moves += hi - lo + 1
            q = tail - 1          # the position the tail has just left
            if q == 0:
                inj_free[path_node[base]] += 1
                n_pend = _mark(path_node[base], t + 1, visits, PEND, n_pend)
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
                        if _enqueue(jn, job_node[jn], q_head, q_tail, job_next, node_work):
                            busy_nodes += 1
                        n_pend = _mark(job_node[jn], t + 1, visits, PEND, n_pend)
            if q == h:
                worm_done[w] = t
                done_worms += 1
            else:
                active[keep] = w
                keep += 1
        n_active = keep
        due, last_move, last_check = _watch_due(t, moved_any, n_active, last_move, last_check, watchdog, active,
                                                moved_at)
        if due > 0:
            found = _knot(t, False, active, n_active, worm_inject, worm_pos, worm_tail, none2, none, flits, 1,
                          ej_channels, inter_ej, path_ptr, path_node, path_arc, path_vc, path_slot, 1, owner,
                          ej_free, num_nodes, dead)
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
def _simulate_flits(cycles, flits, startup, ej_channels, batch, inter_ej, watchdog, stop_idle, num_nodes,
                    job_node, job_release, job_prep, job_worm_ptr, timed_order, path_ptr, path_node, path_arc,
                    path_vc, path_slot, slot_job, slot_time, slot_count, worm_inject, worm_done, job_start, owner,
                    worm_pos, worm_tail, dead, stats, inj_free, ej_free,
                    num_arcs, vcs, depth, router_delay, link_latency, credit_delay):
    """Any network options: every flit of a worm in flight has its position, arrival and departure cycles."""
    n_jobs = len(job_node)
    n_worms = len(path_ptr) - 1
    L = flits
    q_head = np.full(num_nodes, -1, np.int64)
    q_tail = np.full(num_nodes, -1, np.int64)
    job_next = np.full(n_jobs, -1, np.int64)
    proc = np.zeros((3, num_nodes), np.int64)       # per processor: its job (-1: none), batch, end of start-up
    proc[0] = -1
    inj_queue = np.full((2, num_nodes), -1, np.int64)  # per node: head and tail of its injection queue
    worm_next = np.full(n_worms, -1, np.int64)
    avail = np.zeros(len(owner), np.int64)
    active = np.empty(n_worms + 1, np.int64)
    node_work = np.zeros(num_nodes, np.int64)
    moved_at = np.zeros(n_worms, np.int64)
    visits = np.full((4, num_nodes), -1, np.int64)
    timer_at = np.empty(num_nodes + 1, np.float64)
    timer_node = np.empty((num_nodes + 1, 2), np.int64)
    n_pend = 0
    n_timers = 0
    # the cycle each link last carried a flit: with one VC per link only the VC's holder uses the link
    shared = vcs > 1
    link_used = np.full(num_arcs if shared else 0, -1, np.int64)
    sleep = np.zeros(n_worms, np.int64)           # a worm that did not move: the first cycle the clock may wake it
    # a pool of worm records of L flits each, for the worms in flight
    ring = credit_delay + 1
    cap = min(max(n_worms, 1), 1024)
    wslot = np.full(n_worms, -1, np.int64)
    # per flit: its position (-1: still at the processor) and the cycle it arrives (arrived) in that position's
    # buffer
    fl = np.zeros((cap * L, 2), np.int32)
    hist = np.zeros(cap * L * ring if credit_delay > 0 else 0, np.int32)  # its departures, by position mod ring
    ffirst = np.zeros(cap, np.int64)        # first flit not yet ejected
    free_list = np.arange(cap - 1, -1, -1).astype(np.int64)
    n_free = cap
    n_active = 0
    busy_nodes = 0
    rp = 0
    n_timed = len(timed_order)
    last_move = 0
    last_check = 0
    flit_moves = 0
    advances = 0
    max_active = 0
    done_worms = 0
    status = OK
    t = 0
    while t < cycles:
        if stop_idle and rp >= n_timed and n_active == 0 and busy_nodes == 0:
            break
        before = n_active
        if n_pend > 0 or (n_timers > 0 and timer_at[0] <= t) or (rp < n_timed and job_release[timed_order[rp]] <= t):
            busy_nodes, rp, n_active, n_pend, n_timers, timer_at, timer_node = _processors(
                t, busy_nodes, rp, n_active, n_pend, n_timers, startup, batch, job_node, job_release,
                job_prep, job_worm_ptr, timed_order, q_head, q_tail, job_next, proc, inj_queue, worm_next, inj_free,
                node_work, active, worm_pos, worm_inject, moved_at, job_start, visits, timer_at, timer_node)
            flit_moves += n_active - before       # a header entered each new worm's injection channel
        for idx in range(before, n_active):
            if n_free == 0:
                new_cap = 2 * cap
                fl = _grow_rows(fl, new_cap * L)
                if credit_delay > 0:
                    hist = _grow(hist, new_cap * L * ring)
                ffirst = _grow(ffirst, new_cap)
                free_list = _grow(free_list, new_cap)
                for k in range(new_cap - cap):
                    free_list[k] = new_cap - 1 - k
                n_free = new_cap - cap
                cap = new_cap
            w = active[idx]
            n_free -= 1
            sl = free_list[n_free]
            wslot[w] = sl
            fb = sl * L
            ffirst[sl] = 0
            fl[fb, 0] = 0
            fl[fb, 1] = t
            for k in range(1, L):
                fl[fb + k, 0] = -1
        if n_active > max_active:
            max_active = n_active
        # 3. worms in flight, oldest first; each worm's flits front to back
        moved_any = False
        keep = 0
        for idx in range(n_active):
            w = active[idx]
            if worm_inject[w] == t:
                active[keep] = w
                keep += 1
                continue
            base = path_ptr[w]
            h = path_ptr[w + 1] - base - 1
            sl = wslot[w]
            fb = sl * L
            if sleep[w] > t and fl[fb, 0] < h:
                # nothing of this worm moved last time and the clock frees nothing before sleep[w]: only a
                # channel freed under its blocked header can let it move now
                x = fl[fb, 0] + 1
                ch = path_arc[base + x] * vcs + path_vc[base + x]
                s = path_slot[base + x]
                if owner[ch] >= 0 or (ej_channels > 0 and s >= 0 and (inter_ej or x == h)
                                      and ej_free[path_node[base + x]] == 0):
                    active[keep] = w
                    keep += 1
                    continue
            wake = NEVER              # the first cycle the clock alone may let a flit move
            j = ffirst[sl]
            prev_pos = h + 2 if j == 0 else h + 1   # where the flit ahead is (none: beyond the path)
            prev_moved = False                        # whether it moved in this cycle
            moved = 0
            finished = False
            while j < L:
                f = fb + j
                y = fl[f, 0]
                go = True
                if prev_pos == y or (prev_moved and prev_pos == y + 1):
                    go = False        # not at the front of its buffer, or its port already sent a flit
                elif y < 0:
                    if j >= depth:
                        at = _credit_at(f - depth, 0, fl, hist, credit_delay, ring)
                        if at > t:
                            go = False
                            wake = min(wake, at)
                elif fl[f, 1] + (1 + router_delay if j == 0 else 1) > t:
                    go = False
                    wake = min(wake, fl[f, 1] + (1 + router_delay if j == 0 else 1))
                elif y < h:
                    x = y + 1
                    if shared and link_used[path_arc[base + x]] == t:
                        go = False
                        wake = t + 1
                    elif j == 0:
                        ch = path_arc[base + x] * vcs + path_vc[base + x]
                        if owner[ch] >= 0:
                            go = False
                        elif avail[ch] > t:
                            go = False
                            wake = min(wake, avail[ch])
                        else:
                            s = path_slot[base + x]
                            if ej_channels > 0 and s >= 0 and (inter_ej or x == h):
                                node = path_node[base + x]
                                if ej_free[node] == 0:
                                    go = False
                                else:
                                    ej_free[node] -= 1
                            if go:
                                owner[ch] = w
                    elif j >= depth:
                        at = _credit_at(f - depth, x, fl, hist, credit_delay, ring)
                        if at > t:
                            go = False
                            wake = min(wake, at)
                if not go:
                    if y < 0:
                        break         # the flits behind it are still at the processor too
                    prev_pos = y
                    prev_moved = False
                    j += 1
                    continue
                x = y + 1
                fl[f, 0] = x
                if x == 0:
                    fl[f, 1] = t
                elif x <= h:
                    fl[f, 1] = t + link_latency - 1
                    if shared:
                        link_used[path_arc[base + x]] = t
                else:
                    ffirst[sl] = j + 1
                if credit_delay > 0 and y >= 0:
                    hist[f * ring + y % ring] = t
                moved += 1
                prev_pos = x
                prev_moved = True
                if j == L - 1 and y >= 0:
                    # the tail leaves position y: free its channel, deliver its slot
                    if y == 0:
                        inj_free[path_node[base]] += 1
                        n_pend = _mark(path_node[base], t + 1, visits, PEND, n_pend)
                    else:
                        ch = path_arc[base + y] * vcs + path_vc[base + y]
                        owner[ch] = -1
                        avail[ch] = t + 1 + credit_delay
                        s = path_slot[base + y]
                        if s >= 0:
                            if ej_channels > 0 and (inter_ej or y == h):
                                ej_free[path_node[base + y]] += 1
                            if slot_count[s] == 0:
                                slot_time[s] = t
                            slot_count[s] += 1
                            jn = slot_job[s]
                            if jn >= 0:
                                if _enqueue(jn, job_node[jn], q_head, q_tail, job_next, node_work):
                                    busy_nodes += 1
                                n_pend = _mark(job_node[jn], t + 1, visits, PEND, n_pend)
                    finished = y == h
                j += 1
            if moved == 0:
                sleep[w] = wake
                active[keep] = w
                keep += 1
                continue
            sleep[w] = 0
            worm_pos[w] = fl[fb, 0]
            flit_moves += moved
            moved_at[w] = t
            moved_any = True
            advances += 1
            if finished:
                worm_done[w] = t
                done_worms += 1
                free_list[n_free] = sl
                n_free += 1
            else:
                active[keep] = w
                keep += 1
        n_active = keep
        due, last_move, last_check = _watch_due(t, moved_any, n_active, last_move, last_check, watchdog, active,
                                                moved_at)
        if due > 0:
            found = _knot(t, True, active, n_active, worm_inject, worm_pos, worm_tail, fl, wslot, flits,
                          depth, ej_channels, inter_ej, path_ptr, path_node, path_arc, path_vc,
                          path_slot, vcs, owner, ej_free, num_nodes, dead)
            if due == 1 or found > 0:
                status = DEADLOCK
                stats[S_STALL_CYCLE] = _stall_cycle(due, t, last_move, n_active, active, moved_at, dead)
                t += 1
                break
        t += 1
    for idx in range(n_active):
        w = active[idx]
        worm_pos[w] = fl[wslot[w] * L, 0]
        worm_tail[w] = fl[wslot[w] * L + L - 1, 0]
    stats[S_CYCLES] = t
    stats[S_FLIT_MOVES] = flit_moves
    stats[S_ADVANCES] = advances
    stats[S_STATUS] = status
    stats[S_MAX_ACTIVE] = max_active
    stats[S_WORMS_DONE] = done_worms


def simulate(num_nodes: int, num_arcs: int, traffic: WormTraffic, config: RouterConfig,
             cycles: int, stop_when_idle: bool = True, flit_level: bool | None = None) -> WormTrace:
    """Run ``traffic`` for at most ``cycles`` cycles (fewer if everything is done and ``stop_when_idle``).

    ``num_arcs`` is the topology's arc count (the plan's ``path_arc`` index
    it).  ``flit_level`` forces the flit-level path (True) or the rigid one
    (False, only for the default network options and one VC in use);
    ``None`` picks the rigid path when it applies.
    """
    if cycles < 1:
        raise TopocastError(f"wormhole: parameter 'cycles' must be >= 1, got {cycles}")
    path_vc, top_vc = vc_array(traffic, config)
    top_arc = int(traffic.path_arc.max()) if len(traffic.path_arc) else -1
    if top_arc >= num_arcs:
        raise TopocastError(f"wormhole: the plan names arc {top_arc}, the topology has {num_arcs} arcs")
    rigid = config.rigid and top_vc == 0
    if flit_level is None:
        general = not rigid
    elif not flit_level and not rigid:
        raise TopocastError("wormhole: the rigid path needs the default network options and one virtual channel")
    else:
        general = bool(flit_level)
    vcs = config.vcs if general else 1
    if general and cycles + config.link_latency + config.credit_delay >= 2**31:
        raise TopocastError(f"wormhole: parameter 'cycles' must be < 2**31 - link_latency - credit_delay on the "
                            f"flit-level path (its flit times are 32-bit), got {cycles}")
    nj, nw, ns = traffic.num_jobs, traffic.num_worms, traffic.num_slots
    timed = np.flatnonzero(traffic.job_release >= 0)
    timed_order = timed[np.argsort(traffic.job_release[timed], kind="stable")].astype(np.int64)
    slot_time = np.full(ns, -1, np.int64)
    slot_count = np.zeros(ns, np.int64)
    worm_inject = np.full(nw, -1, np.int64)
    worm_done = np.full(nw, -1, np.int64)
    job_start = np.full(nj, -1, np.int64)
    owner = np.full(int(num_arcs) * vcs, -1, np.int64)
    worm_pos = np.full(nw, -1, np.int64)
    worm_tail = np.full(nw, -1, np.int64)
    dead = np.zeros(nw, np.bool_)
    stats = np.zeros(NUM_STATS, np.int64)
    inj_free = np.full(int(num_nodes), config.injection_channels, np.int64)
    ej_free = np.full(int(num_nodes), config.ejection_channels, np.int64)
    args = (int(cycles), config.flits, config.startup, config.ejection_channels, config.batch,
            config.intermediate_ejection, config.watchdog, stop_when_idle, int(num_nodes),
            traffic.job_node, traffic.job_release, traffic.job_prep, traffic.job_worm_ptr, timed_order,
            traffic.path_ptr, traffic.path_node, traffic.path_arc, path_vc, traffic.path_slot, traffic.slot_job,
            slot_time, slot_count, worm_inject, worm_done, job_start, owner, worm_pos, worm_tail, dead, stats,
            inj_free, ej_free)
    if general:
        _simulate_flits(*args, int(num_arcs), vcs, config.buffer_depth, config.router_delay, config.link_latency,
                        config.credit_delay)
    else:
        _simulate_rigid(*args)
    trace = WormTrace(slot_time, slot_count, worm_inject, worm_done, job_start, int(stats[S_CYCLES]),
                      int(stats[S_FLIT_MOVES]), int(stats[S_ADVANCES]), int(stats[S_MAX_ACTIVE]))
    if stats[S_STATUS] == DEADLOCK:
        trace.deadlock_cycle = int(stats[S_STALL_CYCLE])
        cycle = wait_for_cycle(traffic, worm_pos, worm_tail, owner, dead, config, path_vc, vcs)
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


def vc_array(traffic: WormTraffic, config: RouterConfig) -> tuple[np.ndarray, int]:
    """The plan's ``path_vc`` as int64 (zeros when absent) and the highest VC used, checked against ``config.vcs``."""
    n = len(traffic.path_node)
    if traffic.path_vc is None:
        return np.zeros(n, np.int64), 0
    vc = np.asarray(traffic.path_vc, dtype=np.int64)
    if vc.shape != (n,):
        raise TopocastError(f"wormhole: path_vc must have one entry per path position ({n}), got shape {vc.shape}")
    if n and vc.min() >= 0 and vc.max() < config.vcs:
        return vc, int(vc.max())
    on_arc = traffic.path_arc >= 0         # start positions may hold anything
    used = vc[on_arc]
    if len(used) and used.min() < 0:
        raise TopocastError(f"wormhole: path_vc must be >= 0 on every arc, got {int(used.min())}")
    need = int(used.max()) + 1 if len(used) else 1
    if need > config.vcs:
        raise TopocastError(f"wormhole: parameter 'vcs' must be >= {need} for this plan (its worms use virtual "
                            f"channels 0..{need - 1}), got {config.vcs}")
    return np.where(on_arc, vc, 0), need - 1


def wait_for_cycle(traffic: WormTraffic, worm_pos, worm_tail, owner, dead, config: RouterConfig,
                   path_vc=None, vcs: int = 1) -> list[tuple[int, int, int]]:
    """One cycle of the wait-for graph among the knotted worms ``dead``.

    Each entry is ``(u, v, vc)`` for the virtual channel ``vc`` of link
    ``u -> v`` a worm's header waits for, or ``(-1, x, -1)`` for the
    ejection channels of node ``x``.  ``worm_pos`` and ``worm_tail`` are the
    header's and the tail's path positions.
    """
    if path_vc is None:
        path_vc = np.zeros(len(traffic.path_node), np.int64)
    holders: dict[int, list[int]] = {}
    for w in np.flatnonzero(dead).tolist():
        base = int(traffic.path_ptr[w])
        h = int(traffic.path_ptr[w + 1]) - base - 1
        p = int(worm_pos[w])
        for q in range(max(1, int(worm_tail[w])), min(p, h) + 1):
            if traffic.path_slot[base + q] >= 0 and (config.intermediate_ejection or q == h):
                holders.setdefault(int(traffic.path_node[base + q]), []).append(w)
    waits: dict[int, tuple[int, int, int, int]] = {}
    for w in np.flatnonzero(dead).tolist():
        base = int(traffic.path_ptr[w])
        p = int(worm_pos[w])
        vc = int(path_vc[base + p + 1])
        ch = int(traffic.path_arc[base + p + 1]) * vcs + vc
        u, v = int(traffic.path_node[base + p]), int(traffic.path_node[base + p + 1])
        if owner[ch] >= 0:
            waits[w] = (int(owner[ch]), u, v, vc)
        elif holders.get(v):
            waits[w] = (holders[v][0], -1, v, -1)
    for start in waits:
        seen: dict[int, int] = {}
        order = []
        w = start
        while w in waits and w not in seen:
            seen[w] = len(order)
            order.append(w)
            w = waits[w][0]
        if w in seen:
            return [waits[x][1:] for x in order[seen[w]:]]
    return []
