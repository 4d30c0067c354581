"""Frontier engine adapter: a per-step rule over bitmaps (:mod:`topocast.sim.frontier`).

Step-like metrics (every transfer carries one message, so ``receipts`` counts
the transfers) and per-step series (senders, receivers, active, free).
Under translation symmetry (an all-to-all broadcast simulated by node 0's
message) every node sends and receives in each step that moves data, the
series count all ``N`` messages (``messages_moved``) and a link's load is the
transfers under its label (``max_link_messages``).  The lower bound is the
step bound of :mod:`topocast.measure.bounds` on a built topology, else the plan's hint.
"""

from __future__ import annotations

import numpy as np

from ..execution.execute import Outcome
from ..plans.frontier import FrontierPlan
from ..sim.frontier import FrontierTrace, run_frontier
from ..sim.models import Model
from ..topology.core import Topology, UnbuiltTopology
from ..verify.delivery import frontier_verification
from . import bounds

PLAN = FrontierPlan


def measure(topology: Topology | UnbuiltTopology, plan: FrontierPlan, model: Model, max_bytes: float,
            links: bool = False) -> Outcome:
    trace = run_frontier(plan, max_bytes=max_bytes)
    per_step = symmetric_series(trace) if plan.symmetric else trace.per_step()
    metrics = {"steps": trace.steps, "port_model": model.ports.name, "messages": plan.nodes if plan.symmetric else 1,
               "total_senders": int(np.sum(per_step["senders"])),
               "total_receivers": int(np.sum(per_step["receivers"])),
               "nodes_complete": int(trace.held_total), "phases": sorted(set(trace.phase_of_step))}
    if plan.symmetric:
        metrics["max_link_messages"] = int(max(per_step["max_link_messages"], default=0))
    bound = lower_bound(topology, plan, model)
    return Outcome(frontier_verification(trace, plan), metrics, {"steps": "steps", "lower_bound": "steps"},
                   trace.steps, bound, per_step=per_step, trace=trace)


def symmetric_series(trace: FrontierTrace) -> dict[str, list[int]]:
    """Per-step series of all N messages from node 0's: every node busy in a step that moves data."""
    nodes = trace.nodes
    moving = trace.transfers > 0
    busy = np.where(moving, nodes, 0)
    return {"senders": busy.tolist(), "receivers": busy.tolist(), "active": busy.tolist(),
            "free": (nodes - busy).tolist(), "max_link_messages": trace.label_counts.max(axis=1, initial=0).tolist(),
            "messages_moved": (trace.transfers * nodes).tolist()}


def lower_bound(topology: Topology | UnbuiltTopology, plan: FrontierPlan, model: Model) -> int | None:
    """The step lower bound of the plan's collective on a built topology, else the plan's hint."""
    if isinstance(topology, Topology):
        return bounds.step_lower_bound(topology, plan, model.ports)
    return plan.lower_bound
