"""The cost and port model a synthesis runs under: the same parameters and defaults as ``topocast run``.

A topology's own algorithms fix the defaults (Galaxyfly: 160-byte packets on
16 Gbit/s links, all-port; a hypercube's recursive doubling: one-port), so a
synthesised schedule and the algorithms it is compared with share one model.
"""

from __future__ import annotations

from typing import Any

from .. import registry
from ..algorithms.base import REDUCTION_RUN_PARAMS, RUN_PARAMS, standard_model
from ..errors import TopocastError
from ..sim.models import Model

COLLECTIVES = ("broadcast", "allgather", "alltoall", "allreduce", "reduce-scatter", "reduce")


def reference_algorithm(family: str, collective: str) -> registry.Algorithm | None:
    """The first registered algorithm for ``family`` running ``collective`` (or any collective), or None."""
    own = [a for a in registry.algorithms() if family in a.families and a.model is not None]
    for alg in own:
        if alg.collective == collective:
            return alg
    return own[0] if own else None


def _pseudo(collective: str, ref: registry.Algorithm | None) -> registry.Algorithm:
    """An algorithm record carrying only the model parameters (with the reference's defaults and aliases)."""
    run_params = REDUCTION_RUN_PARAMS if collective in ("allreduce", "reduce-scatter", "reduce") else RUN_PARAMS
    names = {p.name for p in run_params}
    params = tuple(p for p in ref.params if p.name in names) if ref else run_params
    have = {p.name for p in params}
    params += tuple(p for p in run_params if p.name not in have and p.name in ("ports", "duplex", "per_byte_reduce"))
    return registry.Algorithm(name=f"synthesize {collective}", plan=lambda t: None, collective=collective, doc="",
                              params=params, param_aliases=dict(ref.param_aliases) if ref else {},
                              model=ref.model if ref else standard_model(Model().ports))


def model_names(family: str, collective: str) -> set[str]:
    """The model parameters a synthesis of ``collective`` on ``family`` takes (its reference's)."""
    return {p.name for p in _pseudo(collective, reference_algorithm(family, collective)).params}


def resolve_model(family: str, collective: str, given: dict[str, Any], from_text: bool = False
                  ) -> tuple[dict[str, Any], Model, str]:
    """``(resolved parameters, Model, reference algorithm name)`` for a synthesis on ``family``."""
    from ..api import resolve_params

    if collective not in COLLECTIVES:
        raise TopocastError(f"collective: must be one of {', '.join(COLLECTIVES)}, got '{collective}'")
    ref = reference_algorithm(family, collective)
    alg = _pseudo(collective, ref)
    params = resolve_params(alg, given, from_text=from_text)
    if alg.model is None:  # never: the reference is an algorithm with a model, else the standard one
        raise TopocastError(f"synthesize: no model for {collective} on {family}")
    return params, alg.model(params), ref.name if ref else ""


def model_record(params: dict[str, Any], model: Model) -> dict[str, Any]:
    """The model as JSON: the resolved parameters and the port model they give."""
    return {"message_bytes": float(params["message_bytes"]), "startup": model.cost.startup,
            "per_byte": model.cost.per_byte, "per_hop": model.cost.per_hop,
            **({"per_byte_reduce": model.cost.per_byte_reduce} if "per_byte_reduce" in params else {}),
            "ports": "all" if model.ports.ports is None else int(model.ports.ports), "duplex": model.ports.duplex}


def model_from_record(record: dict[str, Any]) -> Model:
    """Inverse of :func:`model_record`."""
    from ..sim.models import CostModel, PortModel

    ports = None if record["ports"] == "all" else int(record["ports"])
    return Model(PortModel(ports, record["duplex"]),
                 CostModel(startup=record["startup"], per_byte=record["per_byte"], per_hop=record["per_hop"],
                           per_byte_reduce=record.get("per_byte_reduce", 0.0)))
