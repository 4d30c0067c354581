"""Shared pieces of the generic collectives (``generic_*.py``): the connectivity check and BFS kernels.

The generic collectives run on any topology, so they only assume what every
:class:`~topocast.topology.core.Topology` has: a symmetric CSR adjacency
whose rows are sorted by neighbour index.  Tie-breaking is by that order
(lowest index first), which makes every plan deterministic.

>>> import topocast as tc
>>> dist, parent, order = bfs_tree(tc.build("path:4"), 1)
>>> dist.tolist(), parent.tolist(), order.tolist()
([1, 0, 1, 2], [1, -1, 1, 2], [1, 0, 2, 3])
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..topology.core import Topology
from ..topology.metrics import bfs_into, is_connected


def require_connected(topology: Topology, algorithm: str) -> None:
    """Refuse a network in which some node cannot reach another.

    Parameters
    ----------
    topology : Topology
        The network.
    algorithm : str
        The algorithm's name, for the message.

    Raises
    ------
    TopocastError
        Unless every node reaches every other.
    """
    if topology.num_nodes > 1 and not is_connected(topology):
        raise TopocastError(f"algorithm {algorithm}: the network {topology.spec} is not connected; "
                            "a collective on every node needs a connected topology")


def check_root(topology: Topology, root: int) -> int:
    """Check a root node.

    Parameters
    ----------
    topology : Topology
        The network.
    root : int
        The root.

    Returns
    -------
    int
        The root.

    Raises
    ------
    TopocastError
        If ``root`` is not a node index.
    """
    if not 0 <= root < topology.num_nodes:
        raise TopocastError(f"root: must be a node index in 0..{topology.num_nodes - 1}, got {root}")
    return int(root)


@nb.njit(cache=True, parallel=True)
def _lowest_parents(indptr, indices, dist, parent):
    """``parent[v]``: the lowest-index neighbour one hop nearer the source (rows are sorted)."""
    for v in nb.prange(len(dist)):
        parent[v] = -1
        if dist[v] > 0:
            for e in range(indptr[v], indptr[v + 1]):
                if dist[indices[e]] == dist[v] - 1:
                    parent[v] = indices[e]
                    break


@nb.njit(cache=True)
def _tree(indptr, indices, root):
    n = len(indptr) - 1
    dist = np.empty(n, np.int32)
    order = np.empty(n, np.int64)
    reached = bfs_into(indptr, indices, root, dist, order)
    parent = np.empty(n, np.int64)
    _lowest_parents(indptr, indices, dist, parent)
    return dist, parent, order, reached


def bfs_tree(topology: Topology, root: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Build the breadth-first tree from a root.

    ``parent[v]`` is the lowest-index neighbour of ``v`` one hop nearer the root (-1 at the root); ``order``
    lists the nodes by non-decreasing distance (BFS visit order).

    Parameters
    ----------
    topology : Topology
        The network.
    root : int
        The root.

    Returns
    -------
    dist, parent, order : numpy.ndarray
        Hop distance, parent and visit order.

    Raises
    ------
    TopocastError
        If some node is unreachable.
    """
    dist, parent, order, reached = _tree(topology.indptr, topology.indices, np.int64(root))
    if reached < topology.num_nodes:
        raise TopocastError(f"the network {topology.spec} is not connected: node "
                            f"{int(np.flatnonzero(dist < 0)[0])} cannot be reached from node {root}")
    return dist, parent, order
