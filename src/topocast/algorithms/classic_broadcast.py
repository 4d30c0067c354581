"""One-to-all broadcast on the classic networks (Grama et al., ch. 4.1).

* ``broadcast-binomial`` (hypercube, one-port): in step ``k`` every informed
  node (relative address below ``2^k``) sends across dimension ``k``;
  ``log2 N`` steps, time ``log2 N * (t_s + m t_w + t_h)``.
* ``broadcast-ring`` and ``broadcast-mesh`` (ring, path, mesh, torus, all-port):
  the dimension-ordered tree. The root sends both ways along dimension 0 of
  its line; every node that receives along dimension ``d`` forwards it on in
  the same direction and starts dimensions ``d+1, ...`` in both directions.
  A node is reached once, at its distance from the root, so the broadcast
  takes ``ecc(root)`` steps and ``ecc(root) * (t_s + m t_w + t_h)`` time.
  Rings split at the far side: ``ceil((k-1)/2)`` forward, ``floor((k-1)/2)`` back.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..registry import Param
from ..sim.models import CostModel, PortModel
from ..topology.core import Topology
from .base import register
from .grid import coords, grid_shape, strides

ROOT = (Param("root", "int", 0, "index of the broadcasting node", minimum=0),)


def _check_root(topology: Topology, root: int) -> int:
    if not 0 <= root < topology.num_nodes:
        raise TopocastError(f"root: must be a node index in 0..{topology.num_nodes - 1}, got {root}")
    return int(root)


def _signed_offsets(sizes, wraps, c: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Per-dimension offset from the root; rings take the short way, ties forward."""
    off = c - r
    for d, (k, wrap) in enumerate(zip(sizes, wraps, strict=False)):
        if wrap:
            o = np.mod(off[:, d], k)
            off[:, d] = np.where(o > k // 2, o - k, o)
    return off


def dimension_ordered_tree(topology: Topology, root: int) -> tuple[np.ndarray, np.ndarray]:
    """Build the dimension-ordered broadcast tree of a grid.

    Parameters
    ----------
    topology : Topology
        A ring, path, mesh or torus.
    root : int
        The root.

    Returns
    -------
    parent, depth : numpy.ndarray
        Parent (-1 at the root) and depth of every node.

    Raises
    ------
    TopocastError
        On a network that is not a ring, path, mesh or torus.
    """
    sizes, wraps = grid_shape(topology)
    root = _check_root(topology, root)
    c = coords(sizes)
    off = _signed_offsets(sizes, wraps, c, c[root][None, :].copy())
    depth = np.abs(off).sum(axis=1)
    moved = off != 0
    # the last dimension with a non-zero offset is the one the message arrives along
    last = np.where(moved.any(axis=1), len(sizes) - 1 - np.argmax(moved[:, ::-1], axis=1), -1)
    parent = np.full(topology.num_nodes, -1, dtype=np.int64)
    has = last >= 0
    d = last[has]
    step_back = -np.sign(off[has, d])
    pc = c[has].copy()
    rows = np.arange(len(d))
    k = np.asarray(sizes)[d]
    pc[rows, d] = np.mod(pc[rows, d] + step_back, k)
    parent[has] = pc @ strides(sizes)
    return parent, depth


def _tree_schedule(topology: Topology, root: int, parent: np.ndarray, step: np.ndarray,
                   message_bytes: float, name: str) -> Schedule:
    builder = ScheduleBuilder(topology.num_nodes, origin=[root], collective="broadcast",
                              message_bytes=message_bytes, meta={"algorithm": name, "root": root})
    child = np.flatnonzero(parent >= 0)
    order = np.argsort(step[child], kind="stable")
    child = child[order]
    builder.add(src=parent[child], dst=child, first=0, count=1, step=step[child])
    return builder.build()


def grid_broadcast(topology: Topology, root: int = 0, message_bytes: float = 1.0) -> Schedule:
    """Plan the dimension-ordered all-port broadcast on a ring, path, mesh or torus.

    Parameters
    ----------
    topology : Topology
        The network.
    root : int, default 0
        The node that holds the message.
    message_bytes : float, default 1.0
        Size of the message in bytes.

    Returns
    -------
    Schedule
        The transfers, step by step.

    Raises
    ------
    TopocastError
        On a network that is not a ring, path, mesh or torus.
    """
    parent, depth = dimension_ordered_tree(topology, root)
    return _tree_schedule(topology, root, parent, depth - 1, message_bytes, "grid broadcast")


def binomial_broadcast(topology: Topology, root: int = 0, message_bytes: float = 1.0) -> Schedule:
    """Plan the binomial-tree one-port broadcast on a hypercube (step ``k`` crosses dimension ``k``).

    Parameters
    ----------
    topology : Topology
        The network.
    root : int, default 0
        The node that holds the message.
    message_bytes : float, default 1.0
        Size of the message in bytes.

    Returns
    -------
    Schedule
        The transfers, step by step.
    """
    root = _check_root(topology, root)
    n = topology.params["n"]
    rel = np.arange(topology.num_nodes, dtype=np.int64)
    high = np.zeros_like(rel)
    for k in range(n):
        high[(rel >> k) & 1 == 1] = k
    parent = np.where(rel > 0, (rel ^ (np.int64(1) << high)) ^ root, -1)
    node = rel ^ root
    par = np.full(topology.num_nodes, -1, dtype=np.int64)
    par[node] = parent
    step = np.zeros(topology.num_nodes, dtype=np.int64)
    step[node] = high
    return _tree_schedule(topology, root, par, step, message_bytes, "binomial broadcast")


def grid_broadcast_time(topology: Topology, root: int, m: float, cost: CostModel) -> float:
    """Give the closed-form time of the grid broadcast: ``ecc(root) * (t_s + m t_w + t_h)``.

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
    _, depth = dimension_ordered_tree(topology, root)
    return float(depth.max()) * cost.hop_time(m)


def binomial_broadcast_time(topology: Topology, root: int, m: float, cost: CostModel) -> float:
    """Give the closed-form time of the binomial broadcast: ``log2 N * (t_s + m t_w + t_h)``.

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
    return topology.params["n"] * cost.hop_time(m)


register(
    "broadcast-binomial", binomial_broadcast, "broadcast",
    "one-to-all on a hypercube by the binomial tree, one-port, log2 N steps",
    families=("hypercube",), params=ROOT, aliases=("binomial-tree", "broadcast-hypercube"),
    ports=PortModel.one_port(), paper="Grama et al. 4.1.3")
register(
    "broadcast-ring", grid_broadcast, "broadcast",
    "one-to-all on a ring, both directions at once, floor(N/2) steps",
    families=("ring",), params=ROOT, ports=PortModel.all_port(), paper="Grama et al. 4.1.1")
register(
    "broadcast-mesh", grid_broadcast, "broadcast",
    "one-to-all on a mesh or torus along the dimension-ordered tree, ecc(root) steps",
    families=("mesh", "torus", "path"), params=ROOT, aliases=("broadcast-torus",),
    ports=PortModel.all_port(), paper="Grama et al. 4.1.2")

CLOSED_FORMS = {
    "broadcast-binomial": binomial_broadcast_time,
    "broadcast-ring": grid_broadcast_time,
    "broadcast-mesh": grid_broadcast_time,
}
