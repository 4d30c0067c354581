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

This module is the engine's entry, :func:`simulate`, and its configuration.
The kernels it runs are split by stage: the flit-level cycle loop in
:mod:`~topocast.sim.wormhole.kernel` (its stages in
:mod:`~topocast.sim.wormhole.allocate`, :mod:`~topocast.sim.wormhole.flits`,
:mod:`~topocast.sim.wormhole.trains`, :mod:`~topocast.sim.wormhole.eject`),
the rigid one in :mod:`~topocast.sim.wormhole.rigid`, the processors (jobs,
start-ups, injection) and the timing of the watchdog in
:mod:`~topocast.sim.wormhole.processors`, the knot search and the wait-for
cycle in :mod:`~topocast.sim.wormhole.knots`; the groups of state they pass
and the worm record's fields in :mod:`~topocast.sim.wormhole.state`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ...errors import TopocastError
from ...plans.wormhole import WormTraffic
from ..models import VC_RELEASES, RouterConfig, lone_tail_time  # noqa: F401  (the router model, re-exported)
from .allocate import _choose_route  # noqa: F401  (named in the plan's documentation)
from .kernel import _simulate_flits, flit_state
from .knots import _find_knot, wait_for_cycle  # noqa: F401  (_find_knot: its tests import it from here)
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
    W_DONE,
    W_END,
    W_INJECT,
    W_MOVED,
    W_POS,
    W_START,
    W_TAIL,
    WHEEL,
    WORM_ROWS,
)
from .rigid import _simulate_rigid
from .state import (
    BROKEN,
    DEADLOCK,
    NUM_STATS,
    S_ADVANCES,
    S_CYCLES,
    S_FLIT_MOVES,
    S_MAX_ACTIVE,
    S_STALL_CYCLE,
    S_STATUS,
    Fifo,
    Net,
    Out,
    Paths,
    Procs,
    Run,
    Ugal,
)


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


def _fifo(n_ch: int, path_len: int, config: RouterConfig) -> Fifo | None:
    """The flit-level kernel's state of the shared buffers of ``tail-sent`` VC release, None for ``tail-left``:
    per channel the flits sent in, the flits out (trains: whose departures are known) and a ring of the last
    ``buffer_depth`` departures and of their worms' ages, per path position the header's index in its channel's
    order of entry (:class:`~topocast.sim.wormhole.state.Fifo`)."""
    if not config.tail_sent:
        return None
    ring = 1 << (config.buffer_depth - 1).bit_length()
    return Fifo(np.zeros(n_ch, np.int64), np.zeros(n_ch, np.int64), np.zeros(n_ch * ring, np.int64),
                np.zeros(n_ch * ring, np.int64), np.zeros(path_len, np.int64), ring)


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
    assert config.vcs is not None  # set just above
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
    run = Run(int(cycles), config.startup, config.batch, config.watchdog, bool(stop_when_idle))
    net = Net(config.flits, vcs, config.buffer_depth, config.router_delay, config.link_latency, config.credit_delay,
              config.ejection_channels, bool(config.intermediate_ejection), span)
    paths = Paths(*(np.asarray(a, np.int64) for a in (traffic.path_ptr, traffic.path_node, traffic.path_arc, path_vc,
                                                      traffic.path_slot, traffic.slot_job)))
    trains = vcs == 1 and alt is None
    while True:
        procs, out = _kernel_state(traffic, config, int(num_nodes), int(num_arcs) * vcs)
        if general:
            ugal = None if alt is None else Ugal(alt, np.zeros(int(num_arcs), np.int64), int(traffic.alt_threshold))
            fifo = _fifo(int(num_arcs) * vcs, len(traffic.path_arc), config)
            _simulate_flits(run, net, procs, paths, out, *flit_state(procs, out, net, fifo, trains), fifo, ugal)
        else:
            _simulate_rigid(run, net, procs, paths, out)
        if out.stats[S_STATUS] != BROKEN:
            break
        if not (general and trains and config.tail_sent):
            raise RuntimeError("wormhole: internal error: a flit departure outside the kernel's horizon")
        # tail-sent trains: a departure known further ahead than the horizon (chains of worms queued in one
        # another's buffers); run again with every flit on its own, the same trace
        trains = False
    jobs, worms, stats, owner, dead = procs.jobs, procs.worms, out.stats, out.owner, out.dead
    slot_time, slot_count = out.slot_time, out.slot_count
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


def _kernel_state(traffic: WormTraffic, config: RouterConfig, num_nodes: int, num_channels: int) -> tuple[Procs, Out]:
    """The kernels' fresh state: the processors' (jobs and how many are timed, nodes, worms, the worms in flight,
    the timer wheel) and what a kernel fills in (delivery slots, VC owners, the deadlocked worms, the
    counters)."""
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
    procs = Procs(jobs, len(timed_order), nodes, worms, np.empty(nw + 1, np.int64), np.full(WHEEL, -1, np.int64))
    return procs, Out(np.full(ns, -1, np.int64), np.zeros(ns, np.int64), np.full(num_channels, -1, np.int64),
                      np.zeros(nw, np.bool_), np.zeros(NUM_STATS, np.int64))


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
