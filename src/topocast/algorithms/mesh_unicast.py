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

from ..registry import Param
from ..topology.core import Topology
from .base import register
from .mesh_multicast import ROUTER_PARAMS, WORKLOAD_PARAMS, check_load, guard_memory, router_model
from .mesh_routing import mesh_dims
from .unicast_routing import dor_routes, unicast_worm_plan
from .unicast_traffic import uniform_destinations
from .worm_traffic import poisson_arrivals, window

UNICAST_PARAMS = (Param("prep", "int", 0, "preparation time in cycles", minimum=0),)
UNICAST_RUN_PARAMS = tuple(p for p in WORKLOAD_PARAMS if p.name not in ("destinations", "spread", "load"))
UNICAST_RUN_PARAMS += (Param("load", "float", 0.05, "offered traffic: flits per node per cycle"),)
UNICAST_RUN_PARAMS += tuple(p for p in ROUTER_PARAMS if p.name != "worms_per_startup")


def mean_distance(dims: tuple[int, ...]) -> float:
    """Give the mean Manhattan distance between two distinct nodes of a mesh.

    Parameters
    ----------
    dims : tuple of int
        The mesh's sides.

    Returns
    -------
    float
        Hops.
    """
    n = int(np.prod(dims))
    # per dimension, E|a - b| over independent uniform a, b is (k^2 - 1) / (3k); distinct pairs rescale
    total = sum((k * k - 1) / (3 * k) for k in dims)
    return total * n / (n - 1)


def closed_form_mean_latency(dims: tuple[int, ...], startup: int = 33, flits: int = 32, prep: int = 0) -> float:
    """Give the closed-form mean unicast latency on a mesh at vanishing load.

    Closed form of the mean unicast latency on a mesh at vanishing load (uniform destinations, defaults).

    ``prep + startup + mean_distance + flits``: the rigid worm of the default
    router, alone.  The measured zero-load latency of a run (any router, any
    topology) is :func:`topocast.measure.wormhole.zero_load_latency`.

    Parameters
    ----------
    dims : tuple of int
        The mesh's sides.
    startup, flits, prep : int
        Start-up and preparation in cycles, message length in flits.

    Returns
    -------
    float
        Cycles.

    Examples
    --------
    >>> closed_form_mean_latency((2, 2))
    66.33333333333334
    """
    return prep + startup + mean_distance(dims) + flits


def bisection_bound(dims: tuple[int, ...]) -> float:
    """Give the uniform-traffic throughput bound 4/k flits per node per cycle (k = the largest side).

    Parameters
    ----------
    dims : tuple of int
        The mesh's sides.

    Returns
    -------
    float
        Flits per node per cycle.
    """
    return 4.0 / max(dims)


def unicast_plan(topology: Topology, seed: int = 0, max_memory: float | None = None, **params: Any):
    """Plan one load point of uniform random e-cube unicasts: one worm per message, one job per worm.

    One load point of uniform random e-cube unicasts: one worm per message, one job per worm.

    The same workload and routes as the ``unicast`` algorithm with ``traffic=uniform`` and
    ``routing=dor`` (built by the same vectorised code), with the preparation time ``prep`` and without
    virtual channels: the random numbers are drawn in the order of
    :func:`~topocast.algorithms.worm_traffic.workload_plan` (arrivals, then one destination per
    message), so a seed gives the plan the per-message planner built before (``tests/test_unicast.py``).

    ``info``: the closed-form mean distance (the zero-load latency is ``prep +
    startup + mean_distance + flits``; the run's ``lower_bound`` is that
    latency averaged over the measured messages) and the bisection bound.

    Parameters
    ----------
    topology : Topology
        A mesh.
    seed : int, default 0
        Seed of the workload.
    max_memory : float, optional
        Memory limit in bytes; None: half of the RAM.
    **params
        The load point and router parameters (``load``, ``cycles``, ``flits``, ``prep``, ...).

    Returns
    -------
    WormPlan
        The workload for the wormhole engine.

    Raises
    ------
    TopocastError
        A load outside (0, 1], or a workload over the memory limit.
    """
    check_load("unicast-ecube", topology, params["load"], 1, 0)
    guard_memory("unicast-ecube", topology, dict(params, destinations=1, spread=0), max_memory)
    warmup, drain = window(params["cycles"], params["warmup"], params["batches"], "unicast")
    rng = np.random.default_rng(seed)
    n = topology.num_nodes
    gen, src = poisson_arrivals(n, params["load"] / params["flits"], params["cycles"], rng)
    dst = uniform_destinations(n, src, rng)
    ptr, node, arc, _ = dor_routes(topology, src, dst)
    dims = mesh_dims(topology)
    info = {"mean_distance": mean_distance(dims), "bisection_bound": bisection_bound(dims)}
    return unicast_worm_plan(gen, src, dst, ptr, node, arc, None, prep=params["prep"], cycles=params["cycles"],
                             warmup=warmup, drain=drain, batches=params["batches"], flits=params["flits"],
                             load=float(params["load"]), info=info)


def unicast_model(params: dict):
    """Make the model of a unicast run: one worm per start-up batch of injection channels.

    Parameters
    ----------
    params : dict
        Resolved run parameters.

    Returns
    -------
    Model
        The wormhole router's model.
    """
    return router_model(dict(params, worms_per_startup=None))


register("unicast-ecube", unicast_plan, "unicast",
         "uniform random e-cube (XY) unicast worms on the wormhole engine, one load point",
         families=("mesh",), params=UNICAST_PARAMS, aliases=("xy-unicast",), engines=("wormhole",),
         paper="Dally and Towles, section 3.3.1 (bisection bound)", run_params=UNICAST_RUN_PARAMS,
         model=unicast_model)
