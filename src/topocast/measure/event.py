"""Event engine adapter: store-and-forward timing under the cost model (:mod:`topocast.sim.event`)."""

from __future__ import annotations

import numpy as np

from .. import bounds
from ..execute import Outcome
from ..schedule import Schedule
from ..sim.event import run_events
from ..sim.models import Model

PLAN = Schedule

UNITS = {"time": "s", "lower_bound": "s", "mean_completion_time": "s", "min_completion_time": "s",
         "mean_group_completion_time": "s"}


def measure(topology, plan: Schedule, model: Model, max_bytes: float) -> Outcome:
    groups = plan.groups
    trace = run_events(topology, plan, model.cost, model.ports, keep_arrival=groups is not None,
                       max_bytes=max_bytes)
    done = trace.completion_time
    finite = np.isfinite(done)
    metrics = {"time": trace.makespan, "port_model": model.ports.name, "messages": plan.num_messages,
               "transfers": plan.num_transfers,
               "mean_completion_time": float(done.mean()) if len(done) else 0.0,
               "min_completion_time": float(done.min()) if len(done) else 0.0,
               "nodes_complete": int(np.count_nonzero(finite)),
               "mean_link_utilisation": float(trace.link_utilisation().mean()) if topology.num_arcs else 0.0}
    if groups is not None:
        metrics["mean_group_completion_time"] = group_completion(trace.arrival, plan)
    bound = bounds.time_bound(topology, plan, model.cost, model.ports)
    metrics["lower_bound_kind"] = bound.kind
    units = {k: v for k, v in UNITS.items() if k in metrics or k == "lower_bound"}
    return Outcome(trace.verification, metrics, units, trace.makespan, float(bound.value), trace=trace)


def group_completion(arrival: np.ndarray, plan: Schedule) -> float:
    """Mean over nodes of the time a node holds every message that started in its own group.

    Galaxyfly's RouterTime (Zhuang et al. 2023, section 5.1) with the
    supernodes as groups.
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
