"""All-to-all personalized exchange on log_d N-stage MINs by XOR / d-shift steps (thesis 3.2.4).

A configuration of a MIN with ``n = log_d N`` stages of ``N/d`` switches
``d x d`` is a matrix ``M`` (``N/d`` rows, ``n`` columns): ``M[i, j]`` is the
state of switch ``i`` of stage ``j``, a shift (input ``u`` -> output
``(u + M[i, j]) mod d``; for ``d = 2`` straight/cross).

* Massini (2003), ``d = 2``: from a base ``M^(l,0)`` whose first row is
  straight, XOR step ``x`` gives ``M^(l,x)`` with every row XORed with the
  bits ``x_(n-1) .. x_0`` (stage ``j`` gets bit ``x_(n-1-j)``).  The ``N``
  configurations route a Latin square on any log2 N-stage banyan MIN.
* Liu, Chen and Chen (2007), d-ary: ``M_x[i, j] = M_0[i, j] (+)_d x_(n-1-j)``
  (digit-wise addition mod ``d``) with only the ``d`` shift states; ``M_0`` all
  zero.  Same conclusion for d-ary MINs.

Both are one function here (:func:`min_latin_routes`); d = 2 shifts are XOR.
The base may be straight or random (``base=random``, drawn from ``seed``).

The right Latin square on the Butterfly-Butterfly (Izzi and Massini 2020,
thesis 3.2.4.2) lives in :mod:`topocast.algorithms.butterfly_rls`.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..plans.circuit import CircuitPlan, shift_route
from ..registry import Param
from ..topology.core import Topology
from ..topology.multistage import network_of
from ..topology.stages import ROUTE_DTYPE, MultistageNetwork
from .base import register
from .fattree_alltoall import CIRCUIT_PARAMS

MIN_LATIN_FAMILIES = ("butterfly", "omega", "baseline")


def random_base(net: MultistageNetwork, rng: np.random.Generator) -> np.ndarray:
    """Draw a base matrix of random shift states, the first row straight.

    Parameters
    ----------
    net : MultistageNetwork
        A log_d N-stage MIN.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    numpy.ndarray
        Shape ``(N/d, n)``.
    """
    d = int(net.ins[0])
    base = rng.integers(0, d, (int(net.switches[0]), net.num_stages))
    base[0] = 0
    return base


def min_latin_routes(net: MultistageNetwork, xs, base: np.ndarray | None = None) -> np.ndarray:
    """Give the configurations ``M_x`` (one row per ``x``) of a log_d N-stage MIN.

    Parameters
    ----------
    net : MultistageNetwork
        The MIN.
    xs : array_like of int
        Rows of the square.
    base : numpy.ndarray, optional
        Base matrix of shift states (default all straight).

    Returns
    -------
    numpy.ndarray
        One configuration per row.
    """
    d, stages = int(net.ins[0]), net.num_stages
    xs = np.asarray(xs, dtype=np.int64)
    rows = int(net.switches[0])
    base = np.zeros((rows, stages), dtype=np.int64) if base is None else np.asarray(base, dtype=np.int64)
    routes = np.empty((len(xs), net.route_size), dtype=ROUTE_DTYPE)
    for j in range(stages):
        digit = xs // d ** (stages - 1 - j) % d
        states = (base[None, :, j] + digit[:, None]) % d
        routes[:, net.stage_slice(j)] = shift_route(d, d, states).reshape(len(xs), -1)
    return routes


def min_square_plan(net: MultistageNetwork, base: np.ndarray | None = None, *, message_bytes: float = 1024.0,
                    owner: str = "circuit plan", chunk: int = 256) -> CircuitPlan:
    """Make the circuit plan of the ``N`` configurations ``M_x`` of a base, one pass each (thesis 3.2.4.1, 3.2.4.3).

    Parameters
    ----------
    net : MultistageNetwork
        The MIN.
    base : numpy.ndarray, optional
        Base matrix of shift states (default all straight).
    message_bytes : float, default 1024.0
        Size of every message in bytes.
    owner : str, default "circuit plan"
        Name for messages.
    chunk : int, default 256
        Configurations made at a time.

    Returns
    -------
    CircuitPlan
        The plan.
    """
    return CircuitPlan(net, net.num_inputs, 1, lambda xs, p: min_latin_routes(net, xs, base), message_bytes,
                       "alltoall", owner=owner, chunk=chunk)


def _plan(name: str, need_binary: bool):
    def plan(topology: Topology, *, seed: int = 0, base: str = "straight",
             message_bytes: float = 1024.0) -> CircuitPlan:
        d = int(topology.params["d"])
        if need_binary and d != 2:
            raise TopocastError(f"algorithm {name}: parameter 'd' must be 2 (2 x 2 switches), got d={d}")
        net = network_of(topology)
        matrix = random_base(net, np.random.default_rng(seed)) if base == "random" else None
        return min_square_plan(net, matrix, message_bytes=message_bytes, owner=f"algorithm {name}")

    plan.__doc__ = f"{name}: the N steps M_x of a straight or random base (thesis 3.2.4)."
    return plan


_BASE = Param("base", "str", "straight", "base configuration: straight or random (from --seed)",
              choices=("straight", "random"))

register(
    "all-to-all-personalized-min-xor", _plan("all-to-all-personalized-min-xor", True), "alltoall",
    "total exchange on a log2 N-stage MIN: N XOR steps of a base configuration (Massini 2003)",
    families=MIN_LATIN_FAMILIES, params=(_BASE,), aliases=("min-xor", "massini-xor"), engines=("circuit",),
    paper="Massini 2003; thesis 3.2.4.1", run_params=CIRCUIT_PARAMS)
register(
    "all-to-all-personalized-min-dshift", _plan("all-to-all-personalized-min-dshift", False), "alltoall",
    "total exchange on a d-ary MIN with d-shift states: M_x = M_0 (+)_d digits of x (Liu et al. 2007)",
    families=MIN_LATIN_FAMILIES, params=(_BASE,), aliases=("min-dshift", "d-shift"), engines=("circuit",),
    paper="Liu, Chen, Chen 2007; thesis 3.2.4.3", run_params=CIRCUIT_PARAMS)
