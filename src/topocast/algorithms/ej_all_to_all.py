"""Three-phase all-to-all broadcast (allgather) on EJ_alpha^(n) with half-duplex links.

Hussain (2018), section 4.2, Algorithms 3 and 4.  "All-to-all broadcast" in
the paper: every node sends its one message to every other node, which is
the ``allgather`` collective here (not total exchange, where every node has a
distinct message for each other node).  Phase p serves two sectors:
phase 1 sectors 6 and 1 (sending directions +1, +rho, -rho^2), phase 2
sectors 2 and 3 (+rho^2, +rho, -1), phase 3 sectors 4 and 5 (-rho, -1,
-rho^2).  In each phase every node sends only on its three sending
directions and receives on the three opposite ones, so no link is used both
ways in a step.

Cross-phase forwarding (our reading, n >= 2).  Taken literally, Algorithm 3
recurses into the lower dimensions with the *same* phase, so the message of
node s would reach only the offsets whose non-zero coordinates all lie in
the sectors of one phase: in EJ_{3+4rho}^(2) that is 504 of the 1368 other
nodes.  To deliver everything we let a node, in phase p, also forward every
message it received in an earlier phase, into the dimensions where that
message's offset is still zero.  The rule is the SECTOR rule of
:mod:`~topocast.algorithms.ej_frontier` with phase p: the offset
v = target - source is covered phase by phase (first its phase-1
coordinates, then phase 2, then phase 3), so each node receives each message
exactly once.  For n = 1 this is exactly the paper's algorithm.

Phase p lasts n times the largest tree depth in its sectors (n M for
b = a + 1, as in the paper).  Every node runs the same pattern shifted by its
own label (EJ^(n) is a Cayley graph of Z[rho]/alpha to the n), so the
``frontier`` engine simulates the message of node 0 and obtains every link's
load from the transfers per (dimension, direction) label; the ``step`` engine
runs the full schedule of all N messages.  The full schedule holds N(N-1)
message receipts (about :data:`FULL_BYTES_PER_RECEIPT` bytes each while it is
built and verified): when that is over the memory limit (EJ_{3+4rho}^(3):
2.6e9 receipts, about 95 GiB), the plan for the default ``step`` engine is the
frontier plan instead, whose notes say why (the frontier engine then runs);
the ``event`` engine, which needs every message, refuses with a one-line error.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..infra.memory import over_limit
from ..plans.frontier import FrontierPlan, Phase
from ..plans.frontier_rule import replay
from ..plans.schedule import Schedule, ScheduleBuilder
from ..topology.eisenstein_jacobi import PHASE_SECTORS, EJRing
from .base import register
from .ej_broadcast import HALF_DUPLEX_ALL_PORT, PAPER, ring_of
from .ej_frontier import SECTOR, ej_plan, phase_table

#: bytes per message receipt of the full all-to-all run: the schedule's ranges while they are
#: built and concatenated, plus the step engine's hold matrix (measured 33 B on EJ_{2+3rho}^(3))
FULL_BYTES_PER_RECEIPT = 40

SYMMETRY_NOTE = ("frontier engine: simulates the message of node 0 and uses the translation symmetry of "
                 "EJ^(n) (every node runs the same pattern shifted by its label); link loads are transfers "
                 "per (dimension, direction) label")


def all_to_all_phases(ring: EJRing, n: int) -> list[Phase]:
    """Give the three phases of the EJ all-to-all (Algorithm 4).

    Phase p lasts n x (deepest tree node in its two sectors) steps.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.

    Returns
    -------
    list of Phase
        The phases.
    """
    phases = []
    for p, sectors in PHASE_SECTORS.items():
        depth = ring.depth[np.isin(ring.sector, sectors)]
        if len(depth):
            phases.append(Phase(f"phase {p}", n * int(depth.max()), True, (SECTOR, p)))
    return phases


def single_source_plan(ring: EJRing, n: int, notes: tuple[str, ...] = (SYMMETRY_NOTE,)) -> FrontierPlan:
    """Make the frontier plan of node 0's message through the three phases; every other node's is its translate.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.
    notes : tuple of str, optional
        Notes for the result.

    Returns
    -------
    FrontierPlan
        The plan, collective ``allgather``, symmetric.
    """
    return ej_plan(ring, n, all_to_all_phases(ring, n), phase_table(ring, False), collective="allgather",
                   symmetric=True, notes=notes)


def literal_coverage(ring: EJRing, n: int) -> int:
    """Count the other nodes one source reaches if Algorithm 3 recursed with the same phase only.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.

    Returns
    -------
    int
        Nodes reached.
    """
    sizes = [1 + int(np.isin(ring.sector, sectors).sum()) for sectors in PHASE_SECTORS.values()]
    return sum(s ** n for s in sizes) - 3


def addition_table(ring: EJRing) -> np.ndarray:
    """Tabulate the addition of residues: ``add[i, j]`` is the node index of residue i + residue j.

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.

    Returns
    -------
    numpy.ndarray
        ``N x N`` node indices.
    """
    rep = ring.rep
    return ring.reduce(rep[:, None, 0] + rep[None, :, 0], rep[:, None, 1] + rep[None, :, 1])


def translate(ring: EJRing, n: int, add: np.ndarray, nodes: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Translate node indices in the product group: ``nodes + shift`` (broadcasting).

    Parameters
    ----------
    ring : EJRing
        The one-dimensional structure.
    n : int
        Dimensions.
    add : numpy.ndarray
        The addition table (:func:`addition_table`).
    nodes, shift : numpy.ndarray
        Node indices.

    Returns
    -------
    numpy.ndarray
        The translated nodes.
    """
    out = np.zeros(np.broadcast(nodes, shift).shape, dtype=np.int64)
    for i in range(n):
        stride = ring.norm ** (n - 1 - i)
        out += add[(nodes // stride) % ring.norm, (shift // stride) % ring.norm] * stride
    return out


def all_to_all_schedule(topology, message_bytes: float = 1024.0) -> Schedule:
    """Plan every node's message (id = node index) through the three phases, links combined per step.

    Parameters
    ----------
    topology : Topology
        An ``ej`` network.
    message_bytes : float, default 1024.0
        Size of every message in bytes.

    Returns
    -------
    Schedule
        The all-gather.
    """
    ring, n = ring_of(topology)
    single = replay(single_source_plan(ring, n))  # the rule writes node 0's transfers
    nodes = topology.num_nodes
    add = addition_table(ring)
    sources = np.arange(nodes, dtype=np.int64)
    builder = ScheduleBuilder(nodes, origin=sources, collective="allgather", message_bytes=message_bytes,
                              meta={"algorithm": "all-to-all-three-phase", "phase_of_step": single.phase_of_step})
    for step, (src, dst, lab) in enumerate(single.records):
        if not len(src):
            continue
        s = translate(ring, n, add, src[None, :], sources[:, None]).ravel()
        d = translate(ring, n, add, dst[None, :], sources[:, None]).ravel()
        msg = np.repeat(sources, len(src))
        key = s * (6 * n) + np.tile(lab, nodes)
        order = np.lexsort((msg, key))
        key, s, d, msg = key[order], s[order], d[order], msg[order]
        start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        sizes = np.diff(np.r_[start, len(key)])
        builder.add_ranges(src=s[start], dst=d[start], ranges_per_transfer=sizes, first=msg,
                           count=np.ones(len(msg), dtype=np.int64), step=step)
    return builder.build()


def full_run_bytes(nodes: int) -> int:
    """Estimate the peak memory of the full (all N messages) step or event run.

    Parameters
    ----------
    nodes : int
        Nodes of the network.

    Returns
    -------
    int
        Bytes.
    """
    return FULL_BYTES_PER_RECEIPT * nodes * (nodes - 1)


def all_to_all_plan(topology, engine: str = "step", message_bytes: float = 1024.0,
                    max_memory: float | None = None) -> Schedule | FrontierPlan:
    """Plan the EJ all-to-all: the full schedule of all N messages, or the single-source frontier plan.

    The frontier plan is returned for the ``frontier`` engine, and for the ``step`` engine when the full
    schedule would not fit in ``max_memory``, with a note saying why.

    Parameters
    ----------
    topology : Topology or UnbuiltTopology
        An ``ej`` network.
    engine : str, default "step"
        The engine that will run the plan.
    message_bytes : float, default 1024.0
        Size of every message in bytes.
    max_memory : float, optional
        Memory limit in bytes; None: half of the RAM.

    Returns
    -------
    Schedule or FrontierPlan
        The plan.

    Raises
    ------
    TopocastError
        When the full run would not fit on an engine other than ``step`` (use the frontier engine).
    """
    ring, n = ring_of(topology)
    if engine == "frontier":
        return single_source_plan(ring, n)
    why = over_limit(f"the full simulation of all {ring.norm ** n} messages", full_run_bytes(ring.norm ** n),
                     max_memory)
    if why is not None:  # a fallback with the guard's words, not an error (but on an engine that needs them all)
        if engine != "step":
            raise TopocastError(f"all-to-all-three-phase: {why}; use --engine frontier "
                                "(node 0's message and the translation symmetry)")
        return single_source_plan(ring, n, (f"step engine not run: {why}; the frontier engine ran instead",
                                            SYMMETRY_NOTE))
    return all_to_all_schedule(topology, message_bytes)


register(
    "all-to-all-three-phase", all_to_all_plan, "allgather",
    "three-phase all-to-all broadcast (allgather: every node's message to every node) on EJ^(n) "
    "(Algorithms 3-4), half-duplex: phase p sends on three directions and receives on the opposite three; "
    "messages cross phases dimension by dimension",
    families=("ej",), aliases=("ALL-TO-ALL", "ej-all-to-all-broadcast"), ports=HALF_DUPLEX_ALL_PORT,
    engines=("step", "event", "frontier"), unbuilt_engines=("frontier",), paper=PAPER)

__all__ = ["all_to_all_plan", "all_to_all_schedule", "full_run_bytes", "literal_coverage", "single_source_plan"]
