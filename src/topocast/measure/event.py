"""Event engine adapter: store-and-forward timing under the cost model (:mod:`topocast.sim.event`), verified on
the trace (:func:`topocast.verify.delivery.check_events`; a reduction by
:func:`topocast.verify.reduction.check_reduction_events`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..execution.execute import Outcome
from ..plans.schedule import Schedule
from ..sim import event
from ..sim.models import CostModel, Model, PortModel
from ..verify.delivery import Delivery, Verification, check_events
from ..verify.reduction import check_reduction_events, reduction_metrics
from . import bounds

if TYPE_CHECKING:
    from ..topology.core import Topology

PLAN = Schedule

UNITS = {"time": "s", "lower_bound": "s", "mean_completion_time": "s", "min_completion_time": "s",
         "mean_group_completion_time": "s"}


@dataclass
class EventRun:
    """An event engine run and its verification: the engine's :class:`~topocast.sim.event.EventTrace` (its
    attributes read through: ``start``, ``finish``, ``makespan``, ``arc_busy``, ``arrival`` ...), the
    :class:`~topocast.verify.delivery.Verification`, per node the time it held all it needs (``completion_time``,
    inf: never) and, with groups, every message that started in its group (``group_completion_time``)."""

    trace: event.EventTrace
    delivery: Delivery

    @property
    def verification(self) -> Verification:
        return self.delivery.verification

    @property
    def completion_time(self) -> np.ndarray:
        return self.delivery.completion

    @property
    def group_completion_time(self) -> np.ndarray | None:
        return self.delivery.group_completion

    def __getattr__(self, name: str) -> Any:
        if name in ("trace", "delivery"):  # not set yet (copy, pickle)
            raise AttributeError(name)
        return getattr(self.trace, name)


def run_events(topology: Topology, schedule: Schedule, cost: CostModel = CostModel(), ports: PortModel = PortModel(),
               keep_arrival: bool = False, max_bytes: float | None = None, record_ready: bool = False) -> EventRun:
    """Time ``schedule`` on the event engine and verify the trace.

    Parameters
    ----------
    topology : Topology
        The network.
    schedule : Schedule
        Transfers with a step each, or with dependencies.
    cost : CostModel
        Start-up, time per byte, hop latency.
    ports : PortModel
        Port limit and duplex.
    keep_arrival : bool
        Also compute the dense ``[node, message]`` arrival times at once (``run.arrival``; otherwise on
        first use).
    max_bytes : float, optional
        Refuse when the engine's or the verifier's state would pass this limit.
    record_ready : bool, default False
        Record when each transfer's data was ready at its sender (the per-link queue occupancy needs it).

    Returns
    -------
    EventRun
        Times, verification, per-node completion (and group completion when the schedule has groups).
    """
    trace = event.simulate(topology, schedule, cost, ports, keep_arrival=keep_arrival, max_bytes=max_bytes,
                           record_ready=record_ready)
    if schedule.is_reduction:
        return EventRun(trace, check_reduction_events(schedule, trace, max_bytes))
    return EventRun(trace, check_events(schedule, trace, schedule.groups, max_bytes))


def measure(topology: Topology, plan: Schedule, model: Model, max_bytes: float, links: bool = False) -> Outcome:
    run = run_events(topology, plan, model.cost, model.ports, max_bytes=max_bytes, record_ready=links)
    done = run.completion_time
    finite = np.isfinite(done)
    metrics = {"time": run.makespan, "port_model": model.ports.name, "messages": plan.num_messages,
               "transfers": plan.num_transfers,
               "mean_completion_time": float(done.mean()) if len(done) else 0.0,
               "min_completion_time": float(done.min()) if len(done) else 0.0,
               "nodes_complete": int(np.count_nonzero(finite)),
               "mean_link_utilisation": float(run.link_utilisation().mean()) if topology.num_arcs else 0.0}
    if plan.is_reduction:
        metrics.update(reduction_metrics(run.delivery))
    own = run.group_completion_time
    if plan.groups is not None and own is not None:
        metrics["mean_group_completion_time"] = float(own.mean()) if len(own) else 0.0
    bound = bounds.time_bound(topology, plan, model.cost, model.ports)
    metrics["lower_bound_kind"] = bound.kind
    units = {k: v for k, v in UNITS.items() if k in metrics or k == "lower_bound"}
    return Outcome(run.verification, metrics, units, run.makespan, float(bound.value), trace=run)


def group_completion(arrival: np.ndarray, plan: Schedule) -> float:
    """Mean over nodes of the time a node holds every message that started in its own group, from a dense
    arrival matrix (:attr:`topocast.sim.event.EventTrace.arrival`).

    Galaxyfly's RouterTime (Zhuang et al. 2023, section 5.1) with the
    supernodes as groups; :func:`measure` computes the same figure on the fly
    (:func:`topocast.verify.delivery.check_events`).
    """
    groups = np.asarray(plan.groups)
    origin_group = groups[plan.origin]
    times = np.zeros(len(groups))
    for g in np.unique(groups):
        nodes = np.flatnonzero(groups == g)
        msgs = np.flatnonzero(origin_group == g)
        if len(msgs):
            times[nodes] = arrival[np.ix_(nodes, msgs)].max(axis=1)
    return float(times.mean()) if len(times) else 0.0
