"""The one path of every run: ``execute(topology, plan, engine, model)`` -> :class:`RunResult`.

::

    algorithm(topology, params) -> plan --> execute --> engine (sim/) -> trace
                                                    --> verification (verify.py)
                                                    --> metrics + bound (measure/)  -> RunResult

Each engine has one adapter in :mod:`topocast.measure` (``measure.step``,
``measure.event``, ``measure.circuit``, ``measure.wormhole``,
``measure.frontier``) that names the plan type it runs and turns the plan into
an :class:`Outcome`: the shared :class:`~topocast.verify.delivery.Verification`, the
engine's metrics with their units, the measured quantity and its lower bound.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

from ..errors import TopocastError
from ..sim.models import Model
from ..verify.delivery import Verification
from .result import RunResult, ratio

if TYPE_CHECKING:
    from ..plans.circuit import CircuitPlan
    from ..plans.frontier import FrontierPlan
    from ..plans.schedule import Schedule
    from ..plans.wormhole import WormPlan
    from ..topology.core import Topology, UnbuiltTopology

    #: what an algorithm hands :func:`execute`: one plan type per engine family
    AnyPlan: TypeAlias = Schedule | CircuitPlan | WormPlan | FrontierPlan

ENGINES = ("step", "event", "circuit", "wormhole", "frontier")


@dataclass
class Outcome:
    """What an engine adapter hands back to :func:`execute`."""

    verification: Verification
    metrics: dict[str, Any]
    units: dict[str, str]
    measured: float | None
    lower_bound: float | None
    per_step: dict[str, list[Any]] | None = None
    notes: list[str] = field(default_factory=list)
    trace: Any = None


def adapter(engine: str) -> ModuleType:
    """The :mod:`topocast.measure` module of ``engine`` (imported on first use)."""
    if engine not in ENGINES:
        raise TopocastError(f"engine: must be one of {', '.join(ENGINES)}, got '{engine}'")
    return importlib.import_module(f"topocast.measure.{engine}")


def execute(topology: Topology | UnbuiltTopology, plan: AnyPlan, engine: str, model: Model | None = None, *,
            algorithm: str = "", seed: int = 0, params: dict[str, Any] | None = None, max_bytes: float | None = None,
            links: bool = False) -> RunResult:
    """Run ``plan`` on ``engine`` under ``model``, verify it, measure it, and return the result.

    >>> import topocast as tc
    >>> from topocast.algorithms.classic_broadcast import binomial_broadcast
    >>> t = tc.build("hypercube:3")
    >>> r = execute(t, binomial_broadcast(t), "step", Model(tc.PortModel.one_port()))
    >>> r.verified, r.metrics["steps"], r.metrics["lower_bound"]
    (True, 3, 3)

    ``links=True`` also derives the per-link records from the trace and the plan (``RunResult.links``,
    :mod:`topocast.measure.links`) and adds their summaries to the metrics.
    """
    from ..infra.memory import default_limit

    module = adapter(engine)
    if not isinstance(plan, module.PLAN):
        raise TopocastError(f"engine: the {engine} engine runs a {module.PLAN.__name__}, "
                            f"not a {type(plan).__name__}")
    model = model or Model()
    max_bytes = default_limit() if max_bytes is None else max_bytes
    outcome = module.measure(topology, plan, model, max_bytes, links=links)
    if topology.num_nodes is None:
        raise TopocastError(f"{topology.spec}: the node count of the network is unknown")
    metrics: dict[str, Any] = {"lower_bound": outcome.lower_bound,
                               "lower_bound_ratio": ratio(outcome.measured, outcome.lower_bound),
                               "nodes": int(topology.num_nodes)}
    metrics.update(outcome.verification.as_dict())
    metrics["receipts"] = outcome.verification.receipts
    for source in (outcome.metrics, getattr(plan, "info", None) or {}):
        clash = set(source) & set(metrics)
        if clash:
            raise RuntimeError(f"metric names reported twice: {sorted(clash)}")
        metrics.update(source)
    notes = list(getattr(plan, "notes", ()) or ()) + outcome.notes
    result = RunResult(topology.spec, algorithm, engine, plan.collective, outcome.verification, int(seed),
                       dict(params or {}), metrics, outcome.units, outcome.per_step, notes, outcome.trace)
    if links:
        from ..measure.links import attach

        attach(result, topology, plan)
    return result
