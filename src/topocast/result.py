"""RunResult: what ``topocast run`` prints, and the one path from a Schedule to it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import bounds
from .schedule import Schedule
from .sim.models import CostModel, PortModel
from .topology.core import Topology


@dataclass
class RunResult:
    """Outcome of one algorithm run: verification, metrics, per-step series, bounds.

    ``metrics`` holds scalars; ``per_step`` holds equal-length lists (one
    entry per step); ``trace`` keeps the engine's trace for Python users.
    """

    spec: str
    algorithm: str
    engine: str
    collective: str
    verified: bool
    first_violation: str | None
    metrics: dict[str, Any] = field(default_factory=dict)
    per_step: dict[str, list] | None = None
    notes: list[str] = field(default_factory=list)
    trace: Any = None

    def to_json(self) -> dict[str, Any]:
        out = {
            "spec": self.spec,
            "algorithm": self.algorithm,
            "engine": self.engine,
            "collective": self.collective,
            "verified": self.verified,
            "first_violation": self.first_violation,
        }
        out.update(_clean(self.metrics))
        if self.per_step is not None:
            out["per_step"] = _clean(self.per_step)
            for key, series in self.per_step.items():
                out.setdefault(key, _clean(series))
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _clean(value):
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return None if math.isnan(v) else (v if math.isfinite(v) else str(v))
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def execute(topology: Topology, schedule: Schedule, algorithm: str, engine: str = "step",
            ports: PortModel | None = None, cost: CostModel | None = None,
            max_bytes: float | None = None, keep_arrival: bool = False) -> RunResult:
    """Run ``schedule`` on the chosen engine, verify it, and attach the lower bounds."""
    from .sim.event import run_events
    from .sim.step import run_steps

    from .memory import default_limit

    ports = ports or PortModel()
    max_bytes = default_limit() if max_bytes is None else max_bytes
    metrics: dict[str, Any] = {"ports": ports.name, "messages": schedule.num_messages,
                               "transfers": schedule.num_transfers}
    per_step = None
    if engine == "step":
        trace = run_steps(topology, schedule, ports, max_bytes=max_bytes)
        bound = bounds.step_lower_bound(topology, schedule, ports)
        metrics.update(steps=trace.steps, step_lower_bound=bound,
                       lower_bound_ratio=bounds.ratio(trace.steps, bound),
                       total_senders=int(trace.senders.sum()), total_receivers=int(trace.receivers.sum()),
                       max_link_messages=int(trace.max_link_messages.max(initial=0)))
        done = trace.completion_step
        metrics["nodes_complete"] = int(np.count_nonzero(done >= 0))
        per_step = trace.per_step()
    elif engine == "event":
        cost = cost or CostModel()
        trace = run_events(topology, schedule, cost, ports, keep_arrival=keep_arrival, max_bytes=max_bytes)
        bound = bounds.time_lower_bound(topology, schedule, cost, ports)
        metrics.update(time=trace.makespan, time_lower_bound=bound,
                       lower_bound_ratio=bounds.ratio(trace.makespan, bound),
                       startup=cost.startup, per_byte=cost.per_byte, per_hop=cost.per_hop,
                       message_bytes=schedule.message_bytes,
                       mean_link_utilisation=float(trace.link_utilisation().mean()) if topology.num_arcs else 0.0)
    else:
        from .errors import TopocastError

        raise TopocastError(f"engine: must be 'step' or 'event', got '{engine}'")
    metrics.update(trace.verification.as_dict())
    metrics.pop("verified")
    metrics.pop("first_violation")
    return RunResult(topology.spec, algorithm, engine, schedule.collective, trace.verification.ok,
                     trace.verification.first_violation, metrics, per_step, trace=trace)
