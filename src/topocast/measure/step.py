"""Step engine adapter: synchronous rounds under the port model (:mod:`topocast.sim.step`), verified on the trace
(:func:`topocast.verify.delivery.check_steps`; a reduction by
:func:`topocast.verify.reduction.check_reduction_steps`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..execution.execute import Outcome
from ..plans.schedule import Schedule
from ..sim import step
from ..sim.models import Model, PortModel
from ..verify.delivery import Delivery, Verification, check_steps
from ..verify.reduction import check_reduction_steps, reduction_metrics
from . import bounds

if TYPE_CHECKING:
    from ..topology.core import Topology

PLAN = Schedule


@dataclass
class StepRun:
    """A step engine run and its verification: the engine's :class:`~topocast.sim.step.StepTrace` (its
    attributes read through), the :class:`~topocast.verify.delivery.Verification`, and per node the step after
    which it held all it needs (``completion_step``: 0 from the start, -1 never)."""

    trace: step.StepTrace
    delivery: Delivery

    @property
    def verification(self) -> Verification:
        return self.delivery.verification

    @property
    def completion_step(self) -> np.ndarray:
        return self.delivery.completion

    def __getattr__(self, name: str) -> Any:
        if name in ("trace", "delivery"):  # not set yet (copy, pickle)
            raise AttributeError(name)
        return getattr(self.trace, name)


def run_steps(topology: Topology, schedule: Schedule, ports: PortModel = PortModel(),
              max_bytes: float | None = None) -> StepRun:
    """Run ``schedule`` on the step engine and verify the trace.

    Parameters
    ----------
    topology : Topology
        The network.
    schedule : Schedule
        Transfers with a step each.
    ports : PortModel
        Port budget and duplex.
    max_bytes : float, optional
        Refuse when the engine's or the verifier's state would pass this limit.

    Returns
    -------
    StepRun
        Per-step counts, verification and per-node completion step.
    """
    trace = step.simulate(topology, schedule, ports, max_bytes=max_bytes)
    if schedule.is_reduction:
        return StepRun(trace, check_reduction_steps(schedule, trace, max_bytes))
    delivery = check_steps(schedule, trace, max_bytes)
    if delivery.data_stop >= 0:  # a sender lacked its data: the run stops there, and so do its counts
        trace = step.simulate(topology, schedule, ports, stop_at=delivery.data_stop, max_bytes=max_bytes)
    return StepRun(trace, delivery)


def measure(topology: Topology, plan: Schedule, model: Model, max_bytes: float,
            links: bool = False) -> Outcome:
    run = run_steps(topology, plan, model.ports, max_bytes=max_bytes)
    metrics = {"steps": run.steps, "port_model": model.ports.name, "messages": plan.num_messages,
               "transfers": plan.num_transfers, "total_senders": int(run.senders.sum()),
               "total_receivers": int(run.receivers.sum()),
               "max_link_messages": int(run.max_link_messages.max(initial=0)),
               "nodes_complete": int(np.count_nonzero(run.completion_step >= 0))}
    if plan.is_reduction:
        metrics.update(reduction_metrics(run.delivery))
    bound = bounds.step_bound(topology, plan, model.ports)
    metrics["lower_bound_kind"] = bound.kind
    return Outcome(run.verification, metrics, {"steps": "steps", "lower_bound": "steps"}, run.steps,
                   int(bound.value), per_step=run.per_step(), trace=run)
