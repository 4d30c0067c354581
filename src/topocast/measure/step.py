"""Step engine adapter: synchronous rounds under the port model (:mod:`topocast.sim.step`)."""

from __future__ import annotations

import numpy as np

from .. import bounds
from ..execute import Outcome
from ..schedule import Schedule
from ..sim.models import Model
from ..sim.step import run_steps

PLAN = Schedule


def measure(topology, plan: Schedule, model: Model, max_bytes: float) -> Outcome:
    trace = run_steps(topology, plan, model.ports, max_bytes=max_bytes)
    metrics = {"steps": trace.steps, "port_model": model.ports.name, "messages": plan.num_messages,
               "transfers": plan.num_transfers, "total_senders": int(trace.senders.sum()),
               "total_receivers": int(trace.receivers.sum()),
               "max_link_messages": int(trace.max_link_messages.max(initial=0)),
               "nodes_complete": int(np.count_nonzero(trace.completion_step >= 0))}
    bound = bounds.step_bound(topology, plan, model.ports)
    metrics["lower_bound_kind"] = bound.kind
    return Outcome(trace.verification, metrics, {"steps": "steps", "lower_bound": "steps"}, trace.steps,
                   int(bound.value), per_step=trace.per_step(), trace=trace)
