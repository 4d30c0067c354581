"""One-to-all broadcast on EJ_alpha^(n): the iterative algorithm of [22] and the improved one.

Hussain (2018): section 3 (iterative, n rounds of M steps, one dimension per
round, highest dimension first) and section 4.1, Algorithms 1 and 2
(improved: a node that receives on dimension d keeps forwarding in its sector
on d and starts ONE-TO-ALL on every lower dimension at once).  Both are the
per-step rules of :mod:`topocast.algorithms.ej_frontier` over the sector tree
of :class:`~topocast.topology.eisenstein_jacobi.EJRing`, all-port and
half-duplex, root node 0 (EJ networks are vertex-transitive).

Engines:

* ``step`` / ``event``: the rule writes a Schedule that the shared engines
  run and verify (small sizes: the topology must fit in memory).
* ``frontier``: the rule itself over two bitmaps, two bits per node for
  exactly-once (EJ_{3+4rho}^(6): 2.57e9 nodes, 2 x 321 MB of bitmaps).

:func:`product_counts` gives the same per-step counts from the 1-D tree by
convolution; tests hold it to the frontier run and the step engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TopocastError
from ..plans.frontier import FrontierPlan
from ..plans.frontier_rule import Replay, replay
from ..plans.schedule import Schedule, ScheduleBuilder
from ..sim.models import PortModel
from ..topology.eisenstein_jacobi import EJRing, ej_ring
from .base import register
from .ej_frontier import ej_plan, improved_phases, iterative_phases, phase_table

HALF_DUPLEX_ALL_PORT = PortModel(None, "half")
PAPER = "Hussain 2018, An Improved One-to-All Broadcasting in Higher Dimensional Eisenstein-Jacobi Networks"
ALGORITHMS = ("improved", "iterative")
FRONTIER_NOTE = ("frontier engine: the per-step rule over node coordinates on two bitmaps (a bit per node in each: "
                 "held, and in the frontier or new); "
                 "active = senders + receivers (disjoint when delivery is exactly once)")


def ring_of(topology) -> tuple[EJRing, int]:
    """Give the one-dimensional structure and the dimension count of an ``ej`` topology (built or not).

    Parameters
    ----------
    topology : Topology or UnbuiltTopology
        The network.

    Returns
    -------
    tuple
        ``(EJRing, n)``.

    Raises
    ------
    TopocastError
        If the family is not ``ej``.
    """
    if topology.family != "ej":
        raise TopocastError(f"algorithm: runs on family 'ej', not '{topology.family}'")
    p = topology.params
    return ej_ring(int(p["a"]), int(p["b"])), int(p["n"])


def broadcast_plan(ring: EJRing, n: int, algorithm: str) -> FrontierPlan:
    """Make the frontier plan of the ``improved`` (section 4.1) or ``iterative`` (section 3) broadcast from node 0.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.
    algorithm : str
        ``improved`` or ``iterative``.

    Returns
    -------
    FrontierPlan
        The rule and its phases.

    Raises
    ------
    TopocastError
        For another ``algorithm``.
    """
    if algorithm not in ALGORITHMS:
        raise TopocastError(f"algorithm: must be one of {', '.join(ALGORITHMS)}, got '{algorithm}'")
    phases = improved_phases(ring, n) if algorithm == "improved" else iterative_phases(ring, n)
    return ej_plan(ring, n, phases, phase_table(ring, True), notes=(FRONTIER_NOTE,))


def records_to_schedule(nodes: int, trace: Replay, collective: str, message_bytes: float,
                        meta: dict) -> Schedule:
    """Turn the transfers a replayed rule wrote into a one-message Schedule.

    A one-message Schedule from the transfers a replayed rule wrote (:func:`~topocast.plans.frontier_rule.replay`).

    Parameters
    ----------
    nodes : int
        Nodes of the network.
    trace : Replay
        The replayed rule's transfers, step by step.
    collective : str
        The Schedule's collective.
    message_bytes : float
        Bytes of the message.
    meta : dict
        The Schedule's metadata.

    Returns
    -------
    Schedule
        One transfer per recorded transfer, at its step.
    """
    builder = ScheduleBuilder(nodes, origin=[0], collective=collective, message_bytes=message_bytes,
                              meta=meta)
    for step, (src, dst, _lab) in enumerate(trace.records):
        if len(src):
            builder.add(src=src, dst=dst, first=0, count=1, step=step)
    return builder.build()


def broadcast_schedule(topology, algorithm: str, message_bytes: float = 1024.0) -> Schedule:
    """Plan the ``improved`` or ``iterative`` broadcast on an ``ej`` topology from node 0, as a Schedule.

    The frontier rule replayed with ``record`` on (:func:`~topocast.plans.frontier_rule.replay`) writes
    every transfer: one rule serves the billion-node bitmap run and this verified Schedule, which the step
    and event engines then check on their own.

    Parameters
    ----------
    topology : Topology
        An ``ej`` network.
    algorithm : str
        ``improved`` or ``iterative``.
    message_bytes : float, default 1024.0
        Size of the message in bytes.

    Returns
    -------
    Schedule
        The broadcast.

    Raises
    ------
    TopocastError
        For another family or algorithm.
    """
    ring, n = ring_of(topology)
    trace = replay(broadcast_plan(ring, n, algorithm))
    return records_to_schedule(topology.num_nodes, trace, "broadcast", message_bytes,
                               {"algorithm": algorithm, "phase_of_step": trace.phase_of_step})


def product_counts(a: int, b: int, n: int, algorithm: str) -> dict[str, np.ndarray]:
    """Count the senders and receivers of every step from the one-dimensional sector tree, by convolution.

    Improved: the node at tree depth s of the product is reached at step s, so receivers are the n-fold
    convolution of the 1-D depth histogram; a node fails to send only when its last non-zero coordinate is
    the last dimension and is a leaf of the 1-D tree.  Iterative: round r repeats the 1-D broadcast in
    N^(r-1) copies.

    Parameters
    ----------
    a, b : int
        ``alpha = a + b rho``.
    n : int
        Dimensions.
    algorithm : str
        ``improved`` or ``iterative``.

    Returns
    -------
    dict of str to numpy.ndarray
        ``senders``, ``receivers`` and ``active`` per step.

    Raises
    ------
    TopocastError
        For another ``algorithm``.
    """
    ring = ej_ring(a, b)
    h = ring.depth_histogram().astype(object)
    leaves = ring.leaf_histogram().astype(object)
    inner = h - leaves  # nodes per depth with at least one child
    if algorithm == "improved":
        upper = np.array([1], dtype=object)
        for _ in range(n - 1):
            upper = np.convolve(upper, h)
        total = np.convolve(upper, h)
        leaf = np.convolve(upper, leaves)
        leaf = np.pad(leaf, (0, len(total) - len(leaf)))
        receivers = total[1:]
        senders = (total - leaf)[:-1]
    elif algorithm == "iterative":
        sent: list[Any] = []
        got: list[Any] = []
        for r in range(n):
            copies = ring.norm ** r
            sent += [copies * inner[t - 1] for t in range(1, ring.diameter + 1)]
            got += [copies * h[t] for t in range(1, ring.diameter + 1)]
        senders, receivers = np.array(sent, dtype=object), np.array(got, dtype=object)
    else:
        raise TopocastError(f"algorithm: must be one of {', '.join(ALGORITHMS)}, got '{algorithm}'")
    nodes = ring.norm ** n
    senders, receivers = senders.astype(np.int64), receivers.astype(np.int64)
    return {"senders": senders, "receivers": receivers, "active": senders + receivers,
            "free": nodes - senders - receivers}


def _plan_builder(algorithm: str):
    def plan(topology, engine: str = "step", message_bytes: float = 1024.0) -> Schedule | FrontierPlan:
        """Give the frontier plan for the ``frontier`` engine, else the recorded rule as a Schedule."""
        if engine == "frontier":
            return broadcast_plan(*ring_of(topology), algorithm)
        return broadcast_schedule(topology, algorithm, message_bytes)

    plan.__name__ = f"one_to_all_{algorithm}_plan"
    return plan


def _register(name: str, algorithm: str, aliases: tuple[str, ...], doc: str) -> None:
    register(name, _plan_builder(algorithm), "broadcast", doc, families=("ej",), aliases=aliases,
             ports=HALF_DUPLEX_ALL_PORT, engines=("step", "event", "frontier"), unbuilt_engines=("frontier",),
             paper=PAPER)


_register("one-to-all-improved", "improved", ("ej-improved-one-to-all", "ONE-TO-ALL"),
          "improved one-to-all broadcast on EJ^(n) (Algorithms 1-2): sector tree on the receiving "
          "dimension, full ONE-TO-ALL on every lower dimension at once")
_register("one-to-all-iterative", "iterative", ("ej-iterative-one-to-all", "ej-previous-one-to-all"),
          "iterative one-to-all broadcast on EJ^(n) of [22]: n rounds, one dimension per round, "
          "highest dimension first")

__all__ = ["broadcast_plan", "broadcast_schedule", "product_counts", "ring_of"]
