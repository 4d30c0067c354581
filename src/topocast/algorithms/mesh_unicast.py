"""E-cube (XY) unicast traffic on the wormhole engine: the engine's baseline.

Every node generates 32-flit messages at exponential inter-arrival times to
a destination drawn uniformly among the other nodes; each message is one
worm on the dimension-ordered route (least significant coordinate first).

Zero-load latency of a message over ``h`` hops is exactly
``prep + startup + h + flits`` cycles (see :mod:`topocast.sim.wormhole.engine`),
so the mean at vanishing load is ``prep + startup + mean_distance + flits``
with ``mean_distance`` the average Manhattan distance between distinct nodes.
The uniform-traffic throughput of a k x k mesh is at most the bisection bound
``4 / k`` flits per node per cycle (Dally and Towles, section 3.3.1): half
the traffic crosses the bisection, whose ``2k`` channels carry ``2k`` flits
per cycle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TopocastError
from ..registry import Algorithm, Param, register_algorithm
from ..result import RunResult
from ..sim.wormhole.routing import ECUBE, mesh_dims
from ..sim.wormhole.workload import run_workload
from ..topology.core import Topology
from .mesh_multicast import WORKLOAD_PARAMS, check_load, guard_memory, wormhole_config

UNICAST_PARAMS = tuple(p for p in WORKLOAD_PARAMS
                       if p.name not in ("destinations", "spread", "prep", "prep_set", "load"))
UNICAST_PARAMS += (Param("load", "float", 0.05, "offered traffic: flits per node per cycle"),
                   Param("prep", "int", 0, "preparation time in cycles", minimum=0))


def mean_distance(dims: tuple[int, ...]) -> float:
    """Mean Manhattan distance between two distinct nodes of a mesh."""
    n = int(np.prod(dims))
    # per dimension, E|a - b| over independent uniform a, b is (k^2 - 1) / (3k); distinct pairs rescale
    total = sum((k * k - 1) / (3 * k) for k in dims)
    return total * n / (n - 1)


def zero_load_latency(dims: tuple[int, ...], startup: int = 33, flits: int = 32, prep: int = 0) -> float:
    """Closed form of the mean unicast latency at vanishing load (uniform destinations)."""
    return prep + startup + mean_distance(dims) + flits


def bisection_bound(dims: tuple[int, ...]) -> float:
    """Uniform-traffic throughput bound 4/k flits per node per cycle (k = the largest side)."""
    return 4.0 / max(dims)


def run_unicast(topology: Topology, *, engine: str = "wormhole", seed: int = 0, max_memory: float | None = None,
                **params: Any) -> RunResult:
    if engine != "wormhole":
        raise TopocastError(f"engine: unicast-ecube runs on 'wormhole', not '{engine}'")
    check_load("unicast-ecube", topology, params["load"], 1, 0)
    guard_memory("unicast-ecube", topology, dict(params, destinations=1, spread=0), max_memory)
    prep = params["prep"]
    config = wormhole_config(dict(params, worms_per_startup=None))
    planner = lambda s, d: [(s, -1, prep, [(ECUBE, [int(d[0])])])]  # noqa: E731
    result = run_workload(topology, planner, load=params["load"], destinations=1, cycles=params["cycles"],
                          seed=seed, config=config, warmup=params["warmup"], batches=params["batches"])
    dims = mesh_dims(topology)
    metrics = dict(result.metrics)
    metrics.update(zero_load_latency=zero_load_latency(dims, config.startup, config.flits, prep),
                   bisection_bound=bisection_bound(dims), prep=prep)
    return RunResult(topology.spec, "unicast-ecube", "wormhole", "unicast", result.verified,
                     result.first_violation, metrics, trace=result)


register_algorithm(Algorithm(
    name="unicast-ecube", run=run_unicast, collective="unicast",
    doc="uniform random e-cube (XY) unicast worms on the wormhole engine, one load point",
    families=("mesh",), params=UNICAST_PARAMS, aliases=("xy-unicast",), engines=("wormhole",)))
