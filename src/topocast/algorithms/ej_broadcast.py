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
* ``frontier``: the rule itself over bitmaps, a bit per node for
  exactly-once (EJ_{3+4rho}^(6): 2.57e9 nodes, 3 x 321 MB of bitmaps).

:func:`product_counts` gives the same per-step counts from the 1-D tree by
convolution; tests hold it to the frontier run and the step engine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TopocastError
from ..progress import SILENT, Progress
from ..registry import Algorithm, register_algorithm
from ..result import RunResult, execute
from ..schedule import Schedule, ScheduleBuilder
from ..sim.models import CostModel, PortModel
from ..topology.core import Topology
from ..topology.eisenstein_jacobi import EJRing, check_alpha, ej_ring
from .base import RUN_PARAMS, port_model
from .ej_frontier import (FrontierResult, improved_phases, iterative_phases, phase_table,
                          run_frontier)

HALF_DUPLEX_ALL_PORT = PortModel(None, "half")
PAPER = "Hussain 2018, An Improved One-to-All Broadcasting in Higher Dimensional Eisenstein-Jacobi Networks"
ALGORITHMS = ("improved", "iterative")


def ring_of(topology: Topology) -> tuple[EJRing, int]:
    """The 1-D structure and the dimension count of an ``ej`` topology."""
    if topology.family != "ej":
        raise TopocastError(f"algorithm: runs on family 'ej', not '{topology.family}'")
    p = topology.params
    return ej_ring(int(p["a"]), int(p["b"])), int(p["n"])


def simulate_broadcast(a: int, b: int, n: int, algorithm: str, record: bool = False,
                       progress: Progress = SILENT, max_bytes: float | None = None) -> FrontierResult:
    """Run ``improved`` or ``iterative`` over bitmaps from node 0, no topology needed."""
    check_alpha(a, b, n)
    if algorithm not in ALGORITHMS:
        raise TopocastError(f"algorithm: must be one of {', '.join(ALGORITHMS)}, got '{algorithm}'")
    ring = ej_ring(a, b)
    phases = improved_phases(ring, n) if algorithm == "improved" else iterative_phases(ring, n)
    return run_frontier(ring, n, phases, phase_table(ring, True), record=record, progress=progress,
                        max_bytes=max_bytes)


def records_to_schedule(nodes: int, result: FrontierResult, collective: str, message_bytes: float,
                        meta: dict) -> Schedule:
    """A one-message Schedule from the transfers a recorded frontier run wrote."""
    builder = ScheduleBuilder(nodes, origin=[0], collective=collective, message_bytes=message_bytes,
                              meta=meta)
    for step, (src, dst, _lab) in enumerate(result.records):
        if len(src):
            builder.add(src=src, dst=dst, first=0, count=1, step=step)
    return builder.build()


def broadcast_schedule(topology: Topology, algorithm: str, message_bytes: float = 1024.0) -> Schedule:
    """The Schedule of ``improved`` or ``iterative`` on an ``ej`` topology, root 0."""
    ring, n = ring_of(topology)
    result = simulate_broadcast(ring.a, ring.b, n, algorithm, record=True)
    return records_to_schedule(topology.num_nodes, result, "broadcast", message_bytes,
                               {"algorithm": algorithm, "phase_of_step": result.phase_of_step})


def product_counts(a: int, b: int, n: int, algorithm: str) -> dict[str, np.ndarray]:
    """Per-step senders and receivers from the 1-D sector tree by convolution.

    Improved: the node at tree depth s of the product is reached at step s, so
    receivers are the n-fold convolution of the 1-D depth histogram; a node
    fails to send only when its last non-zero coordinate is the last
    dimension and is a leaf of the 1-D tree.  Iterative: round r repeats the
    1-D broadcast in N^(r-1) copies.
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
        senders, receivers = [], []
        for r in range(n):
            copies = ring.norm ** r
            senders += [copies * inner[t - 1] for t in range(1, ring.diameter + 1)]
            receivers += [copies * h[t] for t in range(1, ring.diameter + 1)]
        senders, receivers = np.array(senders, dtype=object), np.array(receivers, dtype=object)
    else:
        raise TopocastError(f"algorithm: must be one of {', '.join(ALGORITHMS)}, got '{algorithm}'")
    nodes = ring.norm ** n
    senders, receivers = senders.astype(np.int64), receivers.astype(np.int64)
    return {"senders": senders, "receivers": receivers, "active": senders + receivers,
            "free": nodes - senders - receivers}


def frontier_run_result(topology: Topology, name: str, collective: str, result: FrontierResult,
                        notes: list[str]) -> RunResult:
    metrics: dict[str, Any] = {
        "ports": HALF_DUPLEX_ALL_PORT.name, "steps": result.steps,
        "total_senders": int(result.senders.sum()), "total_receivers": int(result.receivers.sum()),
        "transfers": int(result.transfers.sum()), "exactly_once": result.exactly_once,
        "complete": result.held_total == result.nodes, "redundant_receipts": int(result.redundant.sum()),
        "nodes_complete": result.held_total,
    }
    return RunResult(topology.spec, name, "frontier", collective, result.first_violation is None,
                     result.first_violation, metrics, result.per_step(), notes=notes, trace=result)


def _register(name: str, algorithm: str, aliases: tuple[str, ...], doc: str) -> None:
    def run(topology: Topology, *, engine: str, seed: int = 0, max_memory: float | None = None,
            message_bytes: float, startup: float, per_byte: float, per_hop: float,
            ports: str = "default", duplex: str = "default") -> RunResult:
        ring, n = ring_of(topology)
        if engine == "frontier":
            result = simulate_broadcast(ring.a, ring.b, n, algorithm, max_bytes=max_memory)
            return frontier_run_result(topology, name, "broadcast", result, [
                "frontier engine: the per-step rule over node coordinates with a bit per node; "
                "active = senders + receivers (disjoint when delivery is exactly once)"])
        schedule = broadcast_schedule(topology, algorithm, message_bytes)
        model = port_model(ports, duplex, HALF_DUPLEX_ALL_PORT)
        return execute(topology, schedule, name, engine, ports=model,
                       cost=CostModel(startup, per_byte, per_hop), max_bytes=max_memory)

    register_algorithm(Algorithm(name=name, run=run, collective="broadcast", doc=doc, families=("ej",),
                                 params=RUN_PARAMS, aliases=aliases, engines=("step", "event", "frontier"),
                                 unbuilt_engines=("frontier",), paper=PAPER))


_register("one-to-all-improved", "improved", ("ej-improved-one-to-all", "ONE-TO-ALL"),
          "improved one-to-all broadcast on EJ^(n) (Algorithms 1-2): sector tree on the receiving "
          "dimension, full ONE-TO-ALL on every lower dimension at once")
_register("one-to-all-iterative", "iterative", ("ej-iterative-one-to-all", "ej-previous-one-to-all"),
          "iterative one-to-all broadcast on EJ^(n) of [22]: n rounds, one dimension per round, "
          "highest dimension first")

__all__ = ["broadcast_schedule", "product_counts", "ring_of", "simulate_broadcast"]
