"""Latency-bound reductions: recursive doubling on any network, the one-shot direct exchange on complete graphs.

* ``allreduce-recursive-doubling`` (Thakur, Rabenseifner and Gropp 2005): in step ``d`` every node swaps its
  whole partial with the node ``2^d`` ranks away and adds it to its own, so after ``log2 N`` steps every
  node holds the sum: ``log2 N (alpha + m beta + m gamma)``, the fewest start-ups of any allreduce on one
  port and the most bytes; the method for small vectors.  ``N`` not a power of two: the ``r = N - 2^k``
  extra nodes first add their vectors into a partner and get the result back at the end (two more steps).
  On networks other than hypercubes and complete graphs the partners' transfers are relayed.  Step engine
  only: the two sides of a swap send the same block, so each must read its partial before the other's lands;
  the event engine reads a partial when the transfer starts, and where one side starts later (after a
  hand-over, or a longer relay) it would send back what it just received (the verifier names the double
  count).  Synchronous steps keep the swap's meaning.
* ``reduce-scatter-direct`` and ``allreduce-direct`` (complete graphs, all ports at once): every node sends
  every other node that node's block of its vector in one step (``alpha + m/N beta``, and the receiver adds
  the ``N - 1`` partials one at a time, ``(N-1) m/N gamma``); for the allreduce every node then sends its
  reduced block to every other in a second step: ``2 alpha + 2 m/N beta + (N-1) m/N gamma``.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..topology.core import Topology
from .base import REDUCTION_RUN_PARAMS, register
from .reductions import CHUNKS, _builder, _check_chunks, _power_of_two_ranks


def recursive_doubling_allreduce(topology: Topology, message_bytes: float = 1024.0) -> Schedule:
    """Plan the allreduce by recursive doubling of the whole vector: ``log2 N`` steps (+2 off powers of two).

    ``log2 N`` steps, +2 when ``N`` is not a power of two (the extra nodes' pre- and post-step).  Native on
    hypercubes and complete graphs, relayed over shortest paths elsewhere; for the step engine only (see the
    module docstring).

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes (one block: the whole vector moves in every transfer).

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A vector under one byte, or a network that is not connected.
    """
    from .embedding import embed

    n = topology.num_nodes
    _check_chunks(1, message_bytes, 1)
    ranks, extra, partner = _power_of_two_ranks(topology)
    native = topology.family in ("hypercube", "complete")
    builder = ScheduleBuilder(n, origin=np.zeros(1, dtype=np.int64), collective="allreduce", targets="all",
                              message_bytes=message_bytes,
                              meta={"algorithm": "recursive doubling" if native else "recursive doubling (relayed)"})
    step = 0
    if len(extra):
        builder.add(src=extra, dst=partner, first=0, count=1, step=step, combine=True)
        step += 1
    i = np.arange(len(ranks), dtype=np.int64)
    for d in range(len(ranks).bit_length() - 1):
        builder.add(src=ranks, dst=ranks[i ^ (1 << d)], first=0, count=1, step=step, combine=True)
        step += 1
    if len(extra):
        builder.add(src=partner, dst=extra, first=0, count=1, step=step, combine=False)
    logical = builder.build()
    return logical if native else embed(topology, logical)


#: the most nodes the direct exchange plans for (it makes ``N (N - 1)`` transfers per step)
MAX_DIRECT_NODES = 1024


def direct(topology: Topology, collective: str, message_bytes: float, chunks: int) -> Schedule:
    """Plan the direct exchange: every node sends every other node its partial of that node's blocks at once.

    Every node sends every other its blocks' partials in one step (and, allreduce, its reduced blocks to
    every other in a second).

    Parameters
    ----------
    topology : Topology
        A complete graph of at most :data:`MAX_DIRECT_NODES` nodes.
    collective : str
        ``allreduce`` or ``reduce-scatter``.
    message_bytes : float
        Size of every node's vector in bytes.
    chunks : int
        Blocks per node's share of the vector.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) or copy, step by step.

    Raises
    ------
    TopocastError
        A network that is not a complete graph, more than :data:`MAX_DIRECT_NODES` nodes, a vector under one
        byte, or blocks smaller than a byte.
    """
    if topology.family != "complete":
        raise TopocastError(f"algorithm: the direct exchange needs every pair of nodes linked (a complete graph), "
                            f"not '{topology.family}'")
    n = topology.num_nodes
    if n > MAX_DIRECT_NODES:
        raise TopocastError(f"algorithm: the direct exchange plans for at most {MAX_DIRECT_NODES} nodes, not {n}")
    _check_chunks(chunks, message_bytes, n * chunks)
    builder = _builder(topology, collective, message_bytes, chunks, "direct")
    src = np.repeat(np.arange(n, dtype=np.int64), n)
    dst = np.tile(np.arange(n, dtype=np.int64), n)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    builder.add(src=src, dst=dst, first=dst * chunks, count=chunks, step=0, combine=True)
    if collective == "allreduce":
        builder.add(src=src, dst=dst, first=src * chunks, count=chunks, step=1, combine=False)
    return builder.build()


def direct_reduce_scatter(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the one-shot reduce-scatter on a complete graph: one step; node ``j`` ends with its blocks.

    Parameters
    ----------
    topology : Topology
        A complete graph of at most :data:`MAX_DIRECT_NODES` nodes.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce), all in one step.

    Raises
    ------
    TopocastError
        A network that is not a complete graph, more than :data:`MAX_DIRECT_NODES` nodes, a vector under one
        byte, or blocks smaller than a byte.
    """
    return direct(topology, "reduce-scatter", message_bytes, chunks)


def direct_allreduce(topology: Topology, message_bytes: float = 1024.0, chunks: int = 1) -> Schedule:
    """Plan the one-shot reduce-scatter then the one-shot all-gather on a complete graph: two steps.

    Parameters
    ----------
    topology : Topology
        A complete graph of at most :data:`MAX_DIRECT_NODES` nodes.
    message_bytes : float, default 1024.0
        Size of every node's vector in bytes.
    chunks : int, default 1
        Blocks per node's share of the vector.

    Returns
    -------
    Schedule
        The reduction: transfers that combine (reduce) in the first step and copy in the second.

    Raises
    ------
    TopocastError
        A network that is not a complete graph, more than :data:`MAX_DIRECT_NODES` nodes, a vector under one
        byte, or blocks smaller than a byte.
    """
    return direct(topology, "allreduce", message_bytes, chunks)


register("allreduce-recursive-doubling", recursive_doubling_allreduce, "allreduce",
         "recursive doubling of the whole vector: log2 N steps (+2 for N not a power of two); the small-vector "
         "method; relayed off hypercubes and complete graphs; step engine only (see the module docstring)",
         aliases=("recursive doubling allreduce",), engines=("step",),
         paper="Thakur, Rabenseifner and Gropp 2005", run_params=REDUCTION_RUN_PARAMS)
register("reduce-scatter-direct", direct_reduce_scatter, "reduce-scatter",
         "one step: every node sends every other node its block's partial (complete graphs, all ports)",
         families=("complete",), params=(CHUNKS,), run_params=REDUCTION_RUN_PARAMS)
register("allreduce-direct", direct_allreduce, "allreduce",
         "two steps: the direct reduce-scatter, then every node sends its reduced block to every other "
         "(complete graphs, all ports)", families=("complete",), params=(CHUNKS,),
         aliases=("one-shot allreduce",), run_params=REDUCTION_RUN_PARAMS)
