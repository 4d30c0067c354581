"""Registering an algorithm, and the run parameters every schedule-based algorithm shares.

An algorithm is one module: a function that turns ``(topology, parameters)``
into a plan, and one :func:`register` call.  The run path (build, plan,
:func:`topocast.execution.execute.execute`) is the same for every algorithm.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import TopocastError
from ..registry import Algorithm, Param, register_algorithm
from ..sim.models import CostModel, Model, PortModel

#: parameters every schedule-based algorithm accepts (cost and port model)
RUN_PARAMS: tuple[Param, ...] = (
    Param("message_bytes", "float", 1024.0, "bytes per message (m)", minimum=0),
    Param("startup", "float", 1e-6, "per-transfer start-up time t_s in seconds", minimum=0),
    Param("per_byte", "float", 1e-10, "time per byte t_w in seconds (1/bandwidth)", minimum=0),
    Param("per_hop", "float", 0.0, "per-hop latency t_h in seconds", minimum=0),
    Param("ports", "str", "default",
          "ports per node per step: 'all', a number, or 'default' (the algorithm's own model)"),
    Param("duplex", "str", "default", "'full', 'half' or 'default'", choices=("full", "half", "default")),
)

#: the run parameters of a reduction: :data:`RUN_PARAMS` and the time per byte to combine partials (gamma)
REDUCTION_RUN_PARAMS: tuple[Param, ...] = RUN_PARAMS + (
    Param("per_byte_reduce", "float", 0.0, "time per byte to add a received partial to one's own (gamma), seconds",
          minimum=0),
)

#: parameters that make the :class:`Model` rather than the plan
MODEL_PARAMS = ("ports", "duplex", "startup", "per_byte", "per_hop", "setup", "per_byte_reduce")
COST_PARAMS = ("startup", "per_byte", "per_hop", "setup", "per_byte_reduce")


def port_model(ports: str, duplex: str, default: PortModel) -> PortModel:
    """Make the port model from the ``ports`` and ``duplex`` run parameters.

    Parameters
    ----------
    ports : str or int
        ``"all"``, ``"default"`` or a positive number of ports per node.
    duplex : str
        ``"full"``, ``"half"`` or ``"default"``.
    default : PortModel
        The algorithm's own port model, used for ``"default"``.

    Returns
    -------
    PortModel
        The port model.

    Raises
    ------
    TopocastError
        For a ``ports`` value that is none of those.
    """
    if ports in ("default", None):
        count = default.ports
    elif ports == "all":
        count = None
    else:
        from ..infra.validate import integer

        try:
            count = integer(int(ports) if isinstance(ports, str) else ports, "ports", minimum=1)
        except (ValueError, TopocastError):
            raise TopocastError(f"ports: must be 'all', 'default' or a positive integer, got {ports!r}") from None
    return PortModel(count, default.duplex if duplex in ("default", None) else duplex)


def standard_model(default_ports: PortModel) -> Callable[[dict[str, Any]], Model]:
    """Make the function that turns run parameters into a model: port model and cost model.

    Parameters
    ----------
    default_ports : PortModel
        The algorithm's own port model.

    Returns
    -------
    callable
        ``params -> Model`` from ``ports``, ``duplex``, ``startup``, ``per_byte``, ``per_hop``, ...
    """

    def model(params: dict[str, Any]) -> Model:
        cost = CostModel(**{k: params[k] for k in COST_PARAMS if k in params})
        return Model(port_model(params.get("ports", "default"), params.get("duplex", "default"), default_ports),
                     cost)

    return model


def register(name: str, plan: Callable[..., Any], collective: str, doc: str, *,
             families: tuple[str, ...] = (), params: tuple[Param, ...] = (), aliases: tuple[str, ...] = (),
             ports: PortModel = PortModel(), engines: tuple[str, ...] = ("step", "event"), paper: str = "",
             run_params: tuple[Param, ...] = RUN_PARAMS, model: Callable[[dict], Model] | None = None,
             **extra: Any) -> Algorithm:
    """Register ``plan(topology, **params)`` as a runnable algorithm.

    Parameters
    ----------
    name : str
        The algorithm's name, e.g. ``"broadcast-binomial"``.
    plan : callable
        ``plan(topology, **params)`` returns the plan the engines run.
    collective : str
        ``broadcast``, ``allgather``, ``alltoall``, ...
    doc : str
        One line for ``topocast list``.
    families : tuple of str, optional
        The topology families it runs on (empty: any).
    params : tuple of Param, optional
        The algorithm's own parameters.
    aliases : tuple of str, optional
        Other names.
    ports : PortModel, optional
        Default port model.
    engines : tuple of str, default ("step", "event")
        Engines that run its plan, the first the default.
    paper : str, optional
        The source of the algorithm.
    run_params : tuple of Param, optional
        The model's parameters (default :data:`RUN_PARAMS`).
    model : callable, optional
        ``params -> Model`` (default :func:`standard_model` with ``ports``).
    **extra
        Further :class:`~topocast.registry.Algorithm` fields.

    Returns
    -------
    Algorithm
        The registered entry.
    """
    all_params = tuple(params) + tuple(run_params)
    names = {p.name for p in all_params}
    return register_algorithm(Algorithm(
        name=name, plan=plan, collective=collective, doc=doc, families=families, params=all_params,
        aliases=aliases, engines=engines, paper=paper, model=model or standard_model(ports),
        model_params=tuple(k for k in MODEL_PARAMS if k in names), **extra))
