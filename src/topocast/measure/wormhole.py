"""Wormhole engine adapter: flit-level worms on any topology (:mod:`topocast.sim.wormhole.engine`), batch means.

The latency of a multicast is the cycle the tail of its message passes its
last destination minus the cycle it was generated (Al-Dubai et al. 2003,
section 4).  The multicasts generated in the measurement window (after
``warmup``, before the drain window), in order of generation, are cut into
``batches`` batches: ``mean_latency`` is the mean of the batch means and
``ci95_latency`` the Student-t half-width over them.  A load point is
*saturated* when more than 1% of its measured multicasts are still
unfinished at the end of the run, or the mean of the last third of the
batches exceeds the first third's by more than half (the latency is still
growing); a saturated point's mean must not be plotted as a steady-state
number.  Accepted traffic: messages whose last destination received them
during ``[warmup, cycles)``, times ``flits``, per node per cycle.

``lower_bound`` is the same batch mean of every measured multicast's
latency with its worms alone in the network (no blocking by any other worm,
including its own): ``prep + startup * batch`` plus the worm's lone tail
time (:func:`topocast.sim.models.lone_tail_time`; ``hops +
flits`` on the default router) along each relay chain.  It is the
zero-load latency when a multicast's own worms do not meet (unicast,
dual-path, Theorem 1's QG); column-path and multi-path worms leaving one
source can.  Nothing here depends on the topology's shape: paths are the
plan's, hop counts are path lengths.  Bounds that do (a mesh's bisection
bound, its mean distance) are the algorithm's, reported in the plan's
``info``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ..errors import TopocastError
from ..execution.execute import Outcome
from ..plans.wormhole import WormPlan
from ..sim.models import Model, RouterConfig, lone_tail_time
from ..sim.wormhole.engine import WormTrace, simulate
from ..verify.delivery import wormhole_deliveries

if TYPE_CHECKING:
    from ..topology.core import Topology

PLAN = WormPlan

UNITS = {"mean_latency": "cycles", "ci95_latency": "cycles", "lower_bound": "cycles", "cycles": "cycles",
         "offered_load": "flits/node/cycle", "accepted_load": "flits/node/cycle",
         "zero_load_latency": "cycles", "bisection_bound": "flits/node/cycle",
         "alternate_routes": "fraction of measured messages"}


@dataclass
class WormRun:
    """The engine's trace with its plan and every multicast's latency (-1: unfinished)."""

    plan: WormPlan
    trace: WormTrace
    latency: np.ndarray


def measure(topology: Topology, plan: WormPlan, model: Model, max_bytes: float,
            links: bool = False) -> Outcome:
    router = model.router if model.router is not None else RouterConfig()
    if not isinstance(router, RouterConfig):
        raise TopocastError(f"engine: the wormhole engine needs a RouterConfig as the model's router, "
                            f"not a {type(router).__name__}")
    if router.flits != plan.flits:
        raise TopocastError(f"wormhole: the plan's load was drawn for {plan.flits}-flit messages, the router "
                            f"sends {router.flits}")
    trace = simulate(topology.num_nodes, topology.num_arcs, plan.traffic, router, plan.cycles,
                     stop_when_idle=plan.stop_when_idle)
    lat = multicast_latency(plan, trace)
    chain = _chain_arrays(plan)
    stats = latency_statistics(plan, lat, trace, zero_load_latency(plan, router, chain))
    verification = wormhole_deliveries(plan, trace)
    startups, steps = startup_chains(plan, router.batch, chain)
    worms = np.diff(plan.traffic.job_worm_ptr)
    worms_per = np.bincount(plan.job_multicast(), weights=worms, minlength=plan.num_multicasts)
    metrics = {
        "mean_latency": stats["mean"],
        "ci95_latency": stats["ci"],
        "saturated": stats["saturated"],
        "startups_max": int(startups.max(initial=0)),
        "startups_mean": float(startups.mean()) if len(startups) else 0.0,
        "message_passing_steps": int(steps.max(initial=0)),
        "worms_mean": float(worms_per.mean()) if len(worms_per) else 0.0,
        "required_deliveries": int(plan.traffic.num_slots),
        "in_flight_at_end": verification.in_flight_at_end,
        "messages": int(plan.num_multicasts),
        "measured_messages": stats["measured"],
        "unfinished_messages": stats["unfinished"],
        "offered_load": None if plan.load is None else float(plan.load),
        "accepted_load": accepted_load(plan, lat, topology.num_nodes),
        "cycles": int(trace.cycles),
        "flit_moves": int(trace.flit_moves),
        "max_worms_in_flight": int(trace.max_active),
        "deadlocked_worms": int(trace.deadlocked_worms),
    }
    if trace.worm_route is not None:
        metrics["alternate_routes"] = alternate_routes(plan, trace)
    units = {k: v for k, v in UNITS.items() if k in metrics or k in plan.info or k == "lower_bound"}
    notes = [f"promise: {verification.promise}"]
    completed = stats["measured"] - stats["unfinished"]
    if completed < 2 * plan.batches:
        notes.append(f"ci95_latency: not computed: {completed} measured messages completed, fewer than 2 per batch "
                     f"for {plan.batches} batches (lower 'batches' or run more cycles)")
    return Outcome(verification, metrics, units, stats["measured_mean"], stats["bound"],
                   notes=notes, trace=WormRun(plan, trace, lat))


def multicast_latency(plan: WormPlan, trace: WormTrace) -> np.ndarray:
    """Per multicast: last delivery minus generation, -1 when a destination still waits."""
    slot_ptr = plan.slot_ptr
    m = plan.num_multicasts
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    times = trace.slot_time
    sizes = np.diff(slot_ptr)
    last = np.maximum.reduceat(times, slot_ptr[:-1]) if len(times) else np.zeros(m, np.int64)
    missing = np.add.reduceat((times < 0).astype(np.int64), slot_ptr[:-1]) if len(times) else sizes
    lat: np.ndarray = last - plan.generated
    lat[(missing > 0) | (sizes == 0)] = -1
    return lat


def batch_mean(values: np.ndarray, batches: int) -> tuple[float, np.ndarray | None]:
    """Mean of the batch means (plain mean below ``2 * batches`` values) and the batch means."""
    if len(values) >= 2 * batches:
        means = np.array([c.mean() for c in np.array_split(values, batches)])
        return float(means.mean()), means
    return (float(values.mean()) if len(values) else float("nan")), None


def latency_statistics(plan: WormPlan, lat: np.ndarray, trace: WormTrace, bound: np.ndarray) -> dict[str, Any]:
    """Batch means over the measured window, its 95% interval, saturation, and the bound's batch mean."""
    gen = plan.generated
    measured = np.flatnonzero((gen >= plan.warmup) & (gen < plan.drain_start))
    unfinished = int(np.count_nonzero(lat[measured] < 0))
    done = measured[lat[measured] >= 0]
    mean, means = batch_mean(lat[done].astype(np.float64), plan.batches)
    ci = float("nan")
    growing = False
    if means is not None:
        from ..infra.stats import t_half_width

        b = plan.batches
        ci = t_half_width(means)
        third = max(1, b // 3)
        growing = bool(means[-third:].mean() > 1.5 * means[:third].mean())
    saturated = bool(trace.deadlock is not None or (len(measured) and unfinished > 0.01 * len(measured))
                     or growing)
    low = batch_mean(bound[done].astype(np.float64), plan.batches)[0] if len(done) else None
    return {"mean": mean, "ci": ci, "saturated": saturated, "measured": int(len(measured)),
            "unfinished": unfinished, "measured_mean": mean if len(done) else None, "bound": low}


def alternate_routes(plan: WormPlan, trace: WormTrace) -> float:
    """The fraction of the worms of measured messages, among those injected, whose source took their alternate
    route (``routing=ugal``: the Valiant one)."""
    worm_mc = np.repeat(plan.job_multicast(), np.diff(plan.traffic.job_worm_ptr))
    gen = plan.generated[worm_mc]
    measured = (gen >= plan.warmup) & (gen < plan.drain_start) & (trace.worm_inject >= 0)
    if trace.worm_route is None or not measured.any():
        return 0.0
    return float(trace.worm_route[measured].mean())


def accepted_load(plan: WormPlan, lat: np.ndarray, num_nodes: int) -> float:
    """Flits of messages completed in ``[warmup, cycles)`` per node per cycle."""
    finish = plan.generated + lat
    completed = int(np.count_nonzero((lat >= 0) & (finish >= plan.warmup) & (finish < plan.cycles)))
    span = plan.cycles - plan.warmup
    return float(completed) * plan.flits / (num_nodes * span) if span > 0 else 0.0


#: per worm its job and rank in the job; per slot the worm serving it and its path position; per job its trigger slot
Chain: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _chain_arrays(plan: WormPlan) -> Chain:
    """Per worm its job and rank in the job; per slot the worm serving it and its path position."""
    t = plan.traffic
    worm_job = np.repeat(np.arange(t.num_jobs, dtype=np.int64), np.diff(t.job_worm_ptr))
    rank = np.arange(t.num_worms, dtype=np.int64) - t.job_worm_ptr[worm_job]
    slot_worm, slot_hops, _ = t.slot_paths
    trigger = np.full(t.num_jobs, -1, dtype=np.int64)
    relay_slots = np.flatnonzero(t.slot_job >= 0)
    trigger[t.slot_job[relay_slots]] = relay_slots
    return worm_job, rank, slot_worm, slot_hops, trigger


def _slot_tail_time(plan: WormPlan, router: RouterConfig | None, slot_worm: np.ndarray,
                    slot_hops: np.ndarray) -> np.ndarray:
    """Per slot given by ``slot_worm`` and ``slot_hops``: cycles from the end of its worm's start-up to its tail
    passing the slot, the worm alone."""
    if router is None:
        return np.zeros(len(slot_hops), dtype=np.int64)
    total = np.diff(plan.traffic.path_ptr) - 1
    return lone_tail_time(slot_hops, total[np.maximum(slot_worm, 0)] if len(total) else slot_hops, router)


def job_levels(plan: WormPlan, batch: int, router: RouterConfig | None = None,
               chain: Chain | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job: start-ups before it on its chain, its message-passing step, and the earliest cycle it starts.

    A job released by time is step 1 with no start-up before it and starts
    at its release; a relay job released by the delivery of slot ``s``
    follows the job of the worm serving ``s``: the start-ups of that worm's
    batch plus one, its step plus one, and (worms alone in the network,
    timed by ``router``) the cycle after the tail passes ``s``.  Jobs never
    released stay -1.  Without ``router`` only the first two are meaningful.  ``chain``: the plan's
    :func:`_chain_arrays`, when the caller has them.
    """
    t = plan.traffic
    worm_job, rank, slot_worm, slot_hops, trigger = _chain_arrays(plan) if chain is None else chain
    startup = router.startup if router is not None else 0
    relay = trigger[trigger >= 0]          # only relay slots' tail times are needed here
    tail = np.zeros(t.num_slots, dtype=np.int64)
    tail[relay] = _slot_tail_time(plan, router, slot_worm[relay], slot_hops[relay])
    depth = np.full(t.num_jobs, -1, dtype=np.int64)
    step = np.full(t.num_jobs, -1, dtype=np.int64)
    ready = np.full(t.num_jobs, -1, dtype=np.int64)
    timed = trigger < 0
    depth[timed], step[timed], ready[timed] = 0, 1, t.job_release[timed]
    pending = np.flatnonzero(~timed)
    while len(pending):
        w = slot_worm[trigger[pending]]
        src = worm_job[np.maximum(w, 0)]
        ok = (w >= 0) & (depth[src] >= 0)
        if not ok.any():
            break
        j, w, src = pending[ok], w[ok], src[ok]
        batches_before = rank[w] // batch + 1
        depth[j] = depth[src] + batches_before
        step[j] = step[src] + 1
        ready[j] = ready[src] + t.job_prep[src] + startup * batches_before + tail[trigger[j]] + 1
        pending = pending[~ok]
    return depth, step, ready


def startup_chains(plan: WormPlan, batch: int, chain: Chain | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per multicast: the longest chain of start-ups to a destination, and of jobs (message-passing steps).

    A job with ``w`` worms takes ``ceil(w / batch)`` sequential start-ups, and
    a relay's chain adds to the chain of the worm batch that served it
    (Theorem 1 of Al-Dubai et al. counts two for QG).
    """
    depth, step, _ = job_levels(plan, batch, chain=chain)
    longest = depth + -(-np.diff(plan.traffic.job_worm_ptr) // batch)
    longest[depth < 0] = 0
    mc = plan.job_multicast()
    startups = np.zeros(plan.num_multicasts, dtype=np.int64)
    steps = np.zeros(plan.num_multicasts, dtype=np.int64)
    np.maximum.at(startups, mc, longest)
    np.maximum.at(steps, mc, np.maximum(step, 0))
    return startups, steps


def zero_load_latency(plan: WormPlan, router: RouterConfig, chain: Chain | None = None) -> np.ndarray:
    """Per multicast: its latency with every worm alone in the network (-1 if some destination is unserved).

    Exact for any topology and router options (the lone worm's timing of
    :func:`~topocast.sim.models.lone_tail_time`); a job released
    by a delivery starts the cycle after it.
    """
    t = plan.traffic
    batch = router.batch
    chain = _chain_arrays(plan) if chain is None else chain
    _, _, ready = job_levels(plan, batch, router, chain)
    worm_job, rank, slot_worm, slot_hops, _ = chain
    j = worm_job[np.maximum(slot_worm, 0)]
    arrive = ready[j] + t.job_prep[j] + router.startup * (rank[np.maximum(slot_worm, 0)] // batch + 1) \
        + _slot_tail_time(plan, router, slot_worm, slot_hops)
    arrive[(slot_worm < 0) | (ready[j] < 0)] = -1
    out = np.full(plan.num_multicasts, -1, dtype=np.int64)
    if len(arrive):
        np.maximum.at(out, plan.slot_multicast(), arrive)
        unserved = np.zeros(plan.num_multicasts, dtype=np.int64)
        np.add.at(unserved, plan.slot_multicast(), (arrive < 0).astype(np.int64))
        out = np.where((out >= 0) & (unserved == 0), out - plan.generated, -1)
    return out
