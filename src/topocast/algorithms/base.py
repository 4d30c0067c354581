"""Registering an algorithm that produces a Schedule, and the run parameters all of them share."""

from __future__ import annotations

from typing import Any, Callable

from ..registry import Algorithm, Param, register_algorithm
from ..result import execute
from ..schedule import Schedule
from ..sim.models import CostModel, PortModel
from ..topology.core import Topology

#: parameters every schedule-based algorithm accepts (engine and cost model)
RUN_PARAMS: tuple[Param, ...] = (
    Param("message_bytes", "float", 1024.0, "bytes per message (m)", minimum=0),
    Param("startup", "float", 1e-6, "per-transfer start-up time t_s in seconds", minimum=0),
    Param("per_byte", "float", 1e-10, "time per byte t_w in seconds (1/bandwidth)", minimum=0),
    Param("per_hop", "float", 0.0, "per-hop latency t_h in seconds", minimum=0),
    Param("ports", "str", "default", "ports per node per step: 'all', a number, or 'default' (the algorithm's own model)"),
    Param("duplex", "str", "default", "'full', 'half' or 'default'"),
)


def port_model(ports: str, duplex: str, default: PortModel) -> PortModel:
    """Port model from the ``ports``/``duplex`` run parameters, falling back to ``default``."""
    from ..errors import TopocastError

    if ports in ("default", None):
        count = default.ports
    elif ports == "all":
        count = None
    else:
        try:
            count = int(ports)
        except ValueError:
            raise TopocastError(f"ports: must be 'all', 'default' or a positive integer, got '{ports}'") from None
    return PortModel(count, default.duplex if duplex in ("default", None) else duplex)


def schedule_algorithm(
    name: str,
    make_schedule: Callable[..., Schedule],
    collective: str,
    doc: str,
    families: tuple[str, ...] = (),
    params: tuple[Param, ...] = (),
    aliases: tuple[str, ...] = (),
    ports: PortModel = PortModel(),
    engines: tuple[str, ...] = ("step", "event"),
    paper: str = "",
) -> Algorithm:
    """Register ``make_schedule(topology, message_bytes=..., **params)`` as a runnable algorithm.

    The runner builds the schedule, runs it on the chosen engine with
    ``ports`` as the default port model, verifies it and attaches lower bounds.
    """

    def run(topology: Topology, *, engine: str, seed: int = 0, max_memory: float | None = None,
            message_bytes: float, startup: float, per_byte: float, per_hop: float,
            ports: str = "default", duplex: str = "default", **kwargs: Any):
        schedule = make_schedule(topology, message_bytes=message_bytes, **kwargs)
        model = port_model(ports, duplex, default_ports)
        cost = CostModel(startup, per_byte, per_hop)
        return execute(topology, schedule, name, engine, ports=model, cost=cost, max_bytes=max_memory)

    default_ports = ports
    return register_algorithm(Algorithm(
        name=name, run=run, collective=collective, doc=doc, families=families,
        params=tuple(params) + RUN_PARAMS, aliases=aliases, engines=engines, paper=paper,
    ))
