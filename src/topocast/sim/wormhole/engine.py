"""Cycle-driven, flit-level wormhole engine (numba, struct-of-arrays).

Model (Al-Dubai et al. 2003, section 4; Lin and Ni 1991):

* Every directed mesh arc is one unidirectional channel with a one-flit
  buffer at its head; a node has ``injection_channels`` channels from its
  processor into its router and ``ejection_channels`` channels out of it.
* A worm is ``flits`` flits following one path ``v_0 .. v_h``.  The header
  reserves the next channel (and, at a destination, an ejection channel)
  when it is free; the data flits follow one channel per cycle in a pipeline;
  when the header blocks, every flit stays where it is (a one-flit buffer
  per channel leaves no room to compress), so the worm moves as a train and
  the engine keeps the header's position: flit ``j`` is ``j`` positions
  behind it.  A channel is released the cycle the tail leaves it.
* Path-based multidestination worms: at each destination on its path the
  router copies every flit into an ejection channel as it passes; that
  destination has the whole message when the tail passes.
* A node's processor serves *jobs* in FIFO order.  A job is one start-up:
  ``prep`` cycles of preparation, then ``startup`` cycles per batch of at
  most ``worms_per_startup`` worms (default: one per injection channel);
  at the end of a batch its worms join the node's injection queue.  A job
  may wait for a delivery (a QG group leader forwards what it received).
* Timing: a worm whose start-up ends at cycle ``S`` holds an injection
  channel in cycle ``S``, enters link ``k`` in cycle ``S + k`` when nothing
  blocks it, and its tail leaves the last router in cycle ``S + h + L``.
  Unicast zero-load latency is therefore exactly
  ``prep + startup + h + L`` cycles (``h`` hops, ``L`` flits).
* Arbitration: each cycle the worms in flight move in order of injection
  (oldest first); a channel released in cycle ``t`` is free from ``t + 1``.
* Deadlock watchdog, global and partial: every ``watchdog`` cycles, if some
  worm in flight has not moved for ``watchdog`` cycles, the engine looks for
  a *knot*: a set of blocked worms each waiting for a channel owned by a
  worm of the set, or for an ejection channel of a node whose holders are
  all in the set.  Such worms can never move again (a sound test: busy
  traffic elsewhere does not hide it).  A knot, or no worm moving at all for
  ``watchdog`` cycles, stops the run and the trace names the channels of
  one wait-for cycle (``u->v`` for a link, ``eject@x`` for the ejection
  channels of node ``x``).
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
    channel, and the deadlock watchdog in cycles.  Defaults: Al-Dubai et al.
    2003, section 4.
    """

    startup: int = 33
    flits: int = 32
    injection_channels: int = 4
    ejection_channels: int = 4
    worms_per_startup: int | None = None
    intermediate_ejection: bool = True
    watchdog: int = 2000

    def __post_init__(self):
        for name in ("startup", "flits", "injection_channels", "ejection_channels", "watchdog"):
            minimum = 0 if name in ("startup", "ejection_channels") else 1
            object.__setattr__(self, name, integer(getattr(self, name), name, owner="wormhole", minimum=minimum))
        if self.worms_per_startup is not None:
            object.__setattr__(self, "worms_per_startup",
                               integer(self.worms_per_startup, "worms_per_startup", owner="wormhole", minimum=1))

    @property
    def batch(self) -> int:
        return int(self.worms_per_startup or self.injection_channels)


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
def _find_knot(t, active, n_active, worm_inject, worm_pos, flits, ej_channels, inter_ej,
               path_ptr, path_node, path_arc, path_slot, owner, ej_free, num_nodes, dead):
    """Mark in ``dead`` the worms of a knot (blocked for good); return how many.

    A worm is *live* if it is not blocked, waits for a channel owned by a
    live worm, or waits for ejection channels of a node one of whose holders
    is live; the rest, by construction, wait only on each other.
    """
    live = np.zeros(n_active, np.bool_)
    wait_arc = np.full(n_active, -1, np.int64)      # arc waited for, or -1
    wait_ej = np.full(n_active, -1, np.int64)       # node whose ejection channels are waited for
    slot_of = np.full(len(dead), -1, np.int64)      # worm -> index in active
    for i in range(n_active):
        slot_of[active[i]] = i
    # holders of ejection channels, as (node, active index) pairs
    hold_node = np.empty(0, np.int64)
    hold_idx = np.empty(0, np.int64)
    if ej_channels > 0:
        count = 0
        for pass_ in range(2):
            if pass_ == 1:
                hold_node = np.empty(count, np.int64)
                hold_idx = np.empty(count, np.int64)
                count = 0
            for i in range(n_active):
                w = active[i]
                base = path_ptr[w]
                h = path_ptr[w + 1] - base - 1
                p = worm_pos[w]
                lo = p - flits + 1
                if lo < 1:
                    lo = 1
                hi = p if p < h else h
                for q in range(lo, hi + 1):
                    if path_slot[base + q] >= 0 and (inter_ej or q == h):
                        if pass_ == 1:
                            hold_node[count] = path_node[base + q]
                            hold_idx[count] = i
                        count += 1
        order = np.argsort(hold_node, kind="mergesort")
        hold_node = hold_node[order]
        hold_idx = hold_idx[order]
    node_ptr = np.zeros(num_nodes + 1, np.int64)
    for k in range(len(hold_node)):
        node_ptr[hold_node[k] + 1] += 1
    for v in range(num_nodes):
        node_ptr[v + 1] += node_ptr[v]
    for i in range(n_active):
        w = active[i]
        if worm_inject[w] == t:
            live[i] = True
            continue
        base = path_ptr[w]
        h = path_ptr[w + 1] - base - 1
        p = worm_pos[w]
        if p >= h:
            live[i] = True
            continue
        a = path_arc[base + p + 1]
        if owner[a] >= 0:
            wait_arc[i] = a
            continue
        x = path_node[base + p + 1]
        s = path_slot[base + p + 1]
        if ej_channels > 0 and s >= 0 and (inter_ej or p + 1 == h) and ej_free[x] == 0:
            wait_ej[i] = x
            continue
        live[i] = True
    changed = True
    while changed:
        changed = False
        for i in range(n_active):
            if live[i]:
                continue
            if wait_arc[i] >= 0:
                j = slot_of[owner[wait_arc[i]]]
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
def _simulate(cycles, flits, startup, inj_channels, ej_channels, batch, inter_ej, watchdog, stop_idle,
              num_nodes, num_arcs,
              job_node, job_release, job_prep, job_worm_ptr, timed_order,
              path_ptr, path_node, path_arc, path_slot, slot_job,
              slot_time, slot_count, worm_inject, worm_done, job_start, owner, worm_pos, dead, stats):
    n_jobs = len(job_node)
    n_worms = len(path_ptr) - 1
    # processor queues (linked lists of jobs) and injection queues (of worms)
    q_head = np.full(num_nodes, -1, np.int64)
    q_tail = np.full(num_nodes, -1, np.int64)
    job_next = np.full(n_jobs, -1, np.int64)
    proc_job = np.full(num_nodes, -1, np.int64)
    proc_batch = np.zeros(num_nodes, np.int64)
    proc_at = np.zeros(num_nodes, np.int64)
    i_head = np.full(num_nodes, -1, np.int64)
    i_tail = np.full(num_nodes, -1, np.int64)
    worm_next = np.full(n_worms, -1, np.int64)
    inj_free = np.full(num_nodes, inj_channels, np.int64)
    ej_free = np.full(num_nodes, ej_channels, np.int64)
    avail = np.zeros(num_arcs, np.int64)
    active = np.empty(n_worms + 1, np.int64)
    n_active = 0
    busy_nodes = 0          # nodes with a job queued or running or worms queued
    pending_jobs = n_jobs
    rp = 0
    n_timed = len(timed_order)
    last_move = 0
    flit_moves = 0
    advances = 0
    max_active = 0
    done_worms = 0
    status = 0
    t = 0
    node_work = np.zeros(num_nodes, np.int64)  # queued jobs + running job + queued worms
    moved_at = np.zeros(n_worms, np.int64)     # cycle of the worm's last move (or injection)
    last_check = 0
    while t < cycles:
        if stop_idle and rp >= n_timed and n_active == 0 and busy_nodes == 0:
            break
        # 1. jobs released by time
        while rp < n_timed and job_release[timed_order[rp]] <= t:
            j = timed_order[rp]
            rp += 1
            if _enqueue(j, job_node[j], q_head, q_tail, job_next, node_work):
                busy_nodes += 1
        # 2. processors and injection
        if busy_nodes > 0:
            for v in range(num_nodes):
                if node_work[v] == 0:
                    continue
                for _ in range(2):  # finish a batch, start the next job (which may finish at once)
                    j = proc_job[v]
                    if j >= 0 and proc_at[v] <= t:
                        first = job_worm_ptr[j] + proc_batch[v] * batch
                        last = min(first + batch, job_worm_ptr[j + 1])
                        for w in range(first, last):
                            _append(w, v, i_head, i_tail, worm_next)
                            node_work[v] += 1
                        proc_batch[v] += 1
                        if job_worm_ptr[j] + proc_batch[v] * batch < job_worm_ptr[j + 1]:
                            proc_at[v] = t + startup
                        else:
                            proc_job[v] = -1
                            node_work[v] -= 1
                            pending_jobs -= 1
                    if proc_job[v] < 0 and q_head[v] >= 0:
                        j = q_head[v]
                        q_head[v] = job_next[j]
                        if q_head[v] < 0:
                            q_tail[v] = -1
                        job_start[j] = t
                        proc_job[v] = j
                        proc_batch[v] = 0
                        proc_at[v] = t + job_prep[j] + startup
                        if job_worm_ptr[j + 1] == job_worm_ptr[j]:
                            proc_job[v] = -1
                            node_work[v] -= 1
                            pending_jobs -= 1
                while inj_free[v] > 0 and i_head[v] >= 0:
                    w = i_head[v]
                    i_head[v] = worm_next[w]
                    if i_head[v] < 0:
                        i_tail[v] = -1
                    inj_free[v] -= 1
                    worm_pos[w] = 0
                    worm_inject[w] = t
                    moved_at[w] = t
                    active[n_active] = w
                    n_active += 1
                    node_work[v] -= 1
                    flit_moves += 1
                if node_work[v] == 0:
                    busy_nodes -= 1
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
                need_ej = ej_channels > 0 and s >= 0 and (inter_ej or p + 1 == h)
                if need_ej:
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
            finished = False
            if q >= 0 and q <= h:
                if q == 0:
                    inj_free[path_node[base]] += 1
                else:
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
                        if jn >= 0 and _enqueue(jn, job_node[jn], q_head, q_tail, job_next, node_work):
                            busy_nodes += 1
                if q == h:
                    finished = True
            if finished:
                worm_done[w] = t
                done_worms += 1
            else:
                active[keep] = w
                keep += 1
        n_active = keep
        if moved_any or n_active == 0:
            last_move = t
        elif t - last_move >= watchdog:
            status = 1
            stats[S_STALL_CYCLE] = last_move
            _find_knot(t, active, n_active, worm_inject, worm_pos, flits, ej_channels, inter_ej,
                       path_ptr, path_node, path_arc, path_slot, owner, ej_free, num_nodes, dead)
            t += 1
            break
        if t - last_check >= watchdog:
            # a knot of worms can be stuck while traffic elsewhere keeps moving
            last_check = t
            stalled = False
            for idx in range(n_active):
                if t - moved_at[active[idx]] >= watchdog:
                    stalled = True
                    break
            if stalled and _find_knot(t, active, n_active, worm_inject, worm_pos, flits, ej_channels,
                                      inter_ej, path_ptr, path_node, path_arc, path_slot, owner, ej_free,
                                      num_nodes, dead) > 0:
                status = 1
                stall = t
                for idx in range(n_active):
                    w = active[idx]
                    if dead[w] and moved_at[w] < stall:
                        stall = moved_at[w]
                stats[S_STALL_CYCLE] = stall
                t += 1
                break
        t += 1
    stats[S_CYCLES] = t
    stats[S_FLIT_MOVES] = flit_moves
    stats[S_ADVANCES] = advances
    stats[S_STATUS] = status
    stats[S_MAX_ACTIVE] = max_active
    stats[S_WORMS_DONE] = done_worms
    return n_active


def simulate(num_nodes: int, num_arcs: int, traffic: WormTraffic, config: RouterConfig,
             cycles: int, stop_when_idle: bool = True) -> WormTrace:
    """Run ``traffic`` for at most ``cycles`` cycles (fewer if everything is done and ``stop_when_idle``)."""
    if cycles < 1:
        raise TopocastError(f"wormhole: parameter 'cycles' must be >= 1, got {cycles}")
    nj, nw, ns = traffic.num_jobs, traffic.num_worms, traffic.num_slots
    timed = np.flatnonzero(traffic.job_release >= 0)
    timed_order = timed[np.argsort(traffic.job_release[timed], kind="stable")].astype(np.int64)
    slot_time = np.full(ns, -1, np.int64)
    slot_count = np.zeros(ns, np.int64)
    worm_inject = np.full(nw, -1, np.int64)
    worm_done = np.full(nw, -1, np.int64)
    job_start = np.full(nj, -1, np.int64)
    owner = np.full(num_arcs, -1, np.int64)
    worm_pos = np.full(nw, -1, np.int64)
    dead = np.zeros(nw, np.bool_)
    stats = np.zeros(NUM_STATS, np.int64)
    _simulate(int(cycles), config.flits, config.startup, config.injection_channels, config.ejection_channels,
              config.batch, config.intermediate_ejection, config.watchdog, stop_when_idle,
              int(num_nodes), int(num_arcs),
              traffic.job_node, traffic.job_release, traffic.job_prep, traffic.job_worm_ptr, timed_order,
              traffic.path_ptr, traffic.path_node, traffic.path_arc, traffic.path_slot, traffic.slot_job,
              slot_time, slot_count, worm_inject, worm_done, job_start, owner, worm_pos, dead, stats)
    trace = WormTrace(slot_time, slot_count, worm_inject, worm_done, job_start, int(stats[S_CYCLES]),
                      int(stats[S_FLIT_MOVES]), int(stats[S_ADVANCES]), int(stats[S_MAX_ACTIVE]))
    if stats[S_STATUS] == DEADLOCK:
        trace.deadlock_cycle = int(stats[S_STALL_CYCLE])
        trace.wait_cycle = wait_for_cycle(traffic, worm_pos, owner, dead, config)
        trace.deadlocked_worms = int(dead.sum())
        arcs = " ; ".join(f"{u}->{v}" if u >= 0 else f"eject@{v}" for u, v in trace.wait_cycle) \
            or "none found"
        trace.deadlock = (f"deadlock: {trace.deadlocked_worms} worms blocked for good at cycle {trace.cycles - 1} "
                          f"(the longest-stuck since cycle {trace.deadlock_cycle}; watchdog {config.watchdog} "
                          f"cycles); channels in the wait-for cycle: {arcs}")
    return trace


def wait_for_cycle(traffic: WormTraffic, worm_pos, owner, dead, config: RouterConfig) -> list[tuple[int, int]]:
    """One cycle of the wait-for graph among the knotted worms ``dead``.

    Each entry is ``(u, v)`` for the link ``u -> v`` a worm waits for, or
    ``(-1, x)`` for the ejection channels of node ``x``.
    """
    L = config.flits
    holders: dict[int, list[int]] = {}
    for w in np.flatnonzero(dead).tolist():
        base = int(traffic.path_ptr[w])
        h = int(traffic.path_ptr[w + 1]) - base - 1
        p = int(worm_pos[w])
        for q in range(max(1, p - L + 1), min(p, h) + 1):
            if traffic.path_slot[base + q] >= 0 and (config.intermediate_ejection or q == h):
                holders.setdefault(int(traffic.path_node[base + q]), []).append(w)
    waits: dict[int, tuple[int, int, int]] = {}
    for w in np.flatnonzero(dead).tolist():
        base = int(traffic.path_ptr[w])
        p = int(worm_pos[w])
        a = int(traffic.path_arc[base + p + 1])
        u, v = int(traffic.path_node[base + p]), int(traffic.path_node[base + p + 1])
        if owner[a] >= 0:
            waits[w] = (int(owner[a]), u, v)
        elif holders.get(v):
            waits[w] = (holders[v][0], -1, v)
    for start in waits:
        seen: dict[int, int] = {}
        order = []
        w = start
        while w in waits and w not in seen:
            seen[w] = len(order)
            order.append(w)
            w = waits[w][0]
        if w in seen:
            return [(waits[x][1], waits[x][2]) for x in order[seen[w]:]]
    return []
