"""All-to-all broadcast (all-gather) on the classic networks (Grama et al., ch. 4.2).

Message ``i`` starts at node ``i``; every node must end with all ``N``.

* ``allgather-ring`` / ``allgather-mesh`` (ring, path, mesh, torus): one phase
  per dimension, last dimension first (rows, then columns).  In the phase for
  dimension ``d`` every line runs a pipelined all-gather of the blocks gathered
  so far (``B_d`` = product of the sizes of the dimensions already done): a ring
  passes blocks one way round; a path (mesh without wraparound) passes them both
  ways at once.  Each line takes ``k_d - 1`` steps, so the time is
  ``sum_d (k_d - 1) (t_s + t_h + B_d m t_w)``; for a square ``p``-node 2-D
  torus that is Grama's ``2 t_s (sqrt p - 1) + t_w m (p - 1)``.
* ``allgather-recursive-doubling`` (hypercube): step ``k`` exchanges everything
  held across dimension ``k``; ``log2 N`` steps, ``t_s log2 N + t_w m (N - 1)``
  (plus ``t_h log2 N``).
"""

from __future__ import annotations

import numpy as np

from ..plans.schedule import Schedule, ScheduleBuilder
from ..sim.models import CostModel, PortModel
from ..topology.core import Topology
from .base import register
from .grid import grid_shape, strides


def grid_allgather(topology: Topology, message_bytes: float = 1.0) -> Schedule:
    """Plan the dimension-by-dimension pipelined all-gather on a ring, path, mesh or torus.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1.0
        Size of every node's message in bytes.

    Returns
    -------
    Schedule
        The transfers, step by step.

    Raises
    ------
    TopocastError
        On a network that is not a ring, path, mesh or torus.
    """
    sizes, wraps = grid_shape(topology)
    n = topology.num_nodes
    nodes = np.arange(n, dtype=np.int64)
    stride = strides(sizes)
    builder = ScheduleBuilder(n, origin=nodes, collective="allgather", message_bytes=message_bytes,
                              meta={"algorithm": "grid all-gather"})
    offset = 0
    for d in reversed(range(len(sizes))):
        k, wrap, sd = sizes[d], wraps[d], stride[d]
        pos = (nodes // sd) % k
        line_base = nodes - pos * sd           # node at position 0 of the same line
        block_base = (nodes // (sd * k)) * (sd * k)  # first id of the block prefix
        for s in range(k - 1):
            if wrap:
                src = nodes
                dst = line_base + ((pos + 1) % k) * sd
                origin_pos = (pos - s) % k
                builder.add(src=src, dst=dst, first=block_base + origin_pos * sd, count=sd, step=offset + s)
            else:
                right = (pos - s >= 0) & (pos + 1 <= k - 1)
                left = (pos + s <= k - 1) & (pos - 1 >= 0)
                builder.add(src=nodes[right], dst=nodes[right] + sd,
                            first=block_base[right] + (pos[right] - s) * sd, count=sd, step=offset + s)
                builder.add(src=nodes[left], dst=nodes[left] - sd,
                            first=block_base[left] + (pos[left] + s) * sd, count=sd, step=offset + s)
        offset += k - 1
    return builder.build()


def recursive_doubling_allgather(topology: Topology, message_bytes: float = 1.0) -> Schedule:
    """Plan the hypercube all-gather: in step ``k`` swap the ``2^k`` messages held across dimension ``k``.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1.0
        Size of every node's message in bytes.

    Returns
    -------
    Schedule
        The transfers, step by step.
    """
    n = topology.params["n"]
    nodes = np.arange(topology.num_nodes, dtype=np.int64)
    builder = ScheduleBuilder(topology.num_nodes, origin=nodes, collective="allgather",
                              message_bytes=message_bytes, meta={"algorithm": "recursive doubling"})
    for k in range(n):
        builder.add(src=nodes, dst=nodes ^ (np.int64(1) << k), first=(nodes >> k) << k, count=1 << k, step=k)
    return builder.build()


def grid_allgather_time(topology: Topology, root: int, m: float, cost: CostModel) -> float:
    """Give the closed-form time of the grid all-gather: ``sum_d (k_d - 1) (t_s + t_h + B_d m t_w)``.

    Parameters
    ----------
    topology : Topology
        The network.
    root : int
        The root (ignored by collectives without one).
    m : float
        Message size in bytes.
    cost : CostModel
        The cost model (``t_s``, ``t_w``, ``t_h``).

    Returns
    -------
    float
        The time in the cost model's units.
    """
    sizes, _ = grid_shape(topology)
    stride = strides(sizes)
    return float(sum((k - 1) * cost.hop_time(stride[d] * m) for d, k in enumerate(sizes)))


def recursive_doubling_time(topology: Topology, root: int, m: float, cost: CostModel) -> float:
    """Give the closed-form time of recursive doubling: ``n (t_s + t_h) + (N - 1) m t_w``.

    Parameters
    ----------
    topology : Topology
        The network.
    root : int
        The root (ignored by collectives without one).
    m : float
        Message size in bytes.
    cost : CostModel
        The cost model (``t_s``, ``t_w``, ``t_h``).

    Returns
    -------
    float
        The time in the cost model's units.
    """
    return float(sum(cost.hop_time(2**k * m) for k in range(topology.params["n"])))


register(
    "allgather-ring", grid_allgather, "allgather",
    "all-to-all broadcast on a ring: pass blocks one way round, N-1 steps",
    families=("ring",), ports=PortModel.one_port(), paper="Grama et al. 4.2.1")
register(
    "allgather-mesh", grid_allgather, "allgather",
    "all-to-all broadcast on a mesh or torus: rows, then columns (one phase per dimension)",
    families=("mesh", "torus", "path"), aliases=("allgather-torus",), ports=PortModel.all_port(),
    paper="Grama et al. 4.2.2")
register(
    "allgather-recursive-doubling", recursive_doubling_allgather, "allgather",
    "all-to-all broadcast on a hypercube by recursive doubling, log2 N steps",
    families=("hypercube",), aliases=("allgather-hypercube",), ports=PortModel.one_port(),
    paper="Grama et al. 4.2.3")

CLOSED_FORMS = {
    "allgather-ring": grid_allgather_time,
    "allgather-mesh": grid_allgather_time,
    "allgather-recursive-doubling": recursive_doubling_time,
}
