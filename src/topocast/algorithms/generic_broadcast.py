"""One-to-all broadcast on any connected topology, down a BFS tree of the root.

Both algorithms use the same tree: a BFS from ``root`` in which every node's
parent is its *lowest-index* neighbour one hop nearer the root (deterministic;
on a hypercube this is a binomial tree for every root).

* ``broadcast-bfs-tree`` (all-port): a node at depth ``d`` receives in step
  ``d - 1`` from its parent and forwards to all its children in the next step
  at once; every node is reached at its distance from the root, so the
  broadcast takes ``ecc(root)`` steps and ``ecc(root) (t_s + m t_w + t_h)``
  time, the all-port lower bound (Grama et al., *Introduction to Parallel
  Computing*, ch. 4.1: one-to-all broadcast along a spanning tree).
* ``broadcast-one-port`` (one-port): each node sends to one child per step.
  For a fixed tree the best order is known: let ``b(v)`` be the steps the
  subtree under ``v`` needs once ``v`` holds the message (0 for a leaf); if
  ``v`` serves its children in decreasing order of ``b``, the ``i``-th child
  (from 0) is informed in step ``i + 1`` and ``b(v) = max_i (i + 1 + b(c_i))``.
  Serving the child whose subtree needs longest first is optimal for a tree
  under the one-port ("telephone") model (Slater, Cockayne and Hedetniemi,
  *Information dissemination in trees*, SIAM J. Comput. 10, 1981); here it is
  applied to the BFS tree above, so the result is optimal for that tree but
  not always for the graph.  The step count is ``b(root)``; the step engine's
  lower bound is ``max(ceil(log2 N), ecc(root))``.  On a hypercube the tree is
  binomial and ``b(root) = log2 N``.  Ties between children with equal
  ``b`` go to the lower index.

>>> import topocast as tc
>>> tc.run("torus:5x4", "broadcast-bfs-tree", root=3).metrics["steps"]
4
>>> tc.run("hypercube:5", "broadcast-one-port", root=9).metrics["steps"]
5
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..infra.sorting import argsort_stable
from ..plans.schedule import Schedule, ScheduleBuilder
from ..registry import Param
from ..sim.models import PortModel
from ..topology.core import Topology
from .base import register
from .generic_trees import bfs_tree, check_root, require_connected

ROOT = (Param("root", "int", 0, "index of the broadcasting node", minimum=0),)


def _tree_schedule(topology: Topology, root: int, parent: np.ndarray, child: np.ndarray, step: np.ndarray,
                   message_bytes: float, name: str, info: dict) -> Schedule:
    """Transfers ``parent[child] -> child`` in ``step`` (``child`` sorted by step)."""
    builder = ScheduleBuilder(topology.num_nodes, origin=[root], collective="broadcast",
                              message_bytes=message_bytes, meta={"algorithm": name, "root": root})
    builder.add(src=parent[child], dst=child, first=0, count=1, step=step)
    schedule = builder.build()
    schedule.info.update(info)
    return schedule


def bfs_tree_broadcast(topology: Topology, root: int = 0, message_bytes: float = 1.0) -> Schedule:
    """Plan the all-port broadcast down the BFS tree of ``root``: ``ecc(root)`` steps.

    One BFS (numba) and one batch of transfers: tree edge ``parent[v] -> v`` in step ``depth(v) - 1``, in BFS
    order (already sorted by step).

    Parameters
    ----------
    topology : Topology
        The network, connected.
    root : int, default 0
        The node that holds the message.
    message_bytes : float, default 1.0
        Size of the message in bytes.

    Returns
    -------
    Schedule
        The broadcast.

    Raises
    ------
    TopocastError
        If the network is not connected or ``root`` is not a node.
    """
    require_connected(topology, "broadcast-bfs-tree")
    root = check_root(topology, root)
    dist, parent, order = bfs_tree(topology, root)
    child = order[1:]
    return _tree_schedule(topology, root, parent, child, dist[child] - 1, message_bytes, "BFS-tree broadcast",
                          {"eccentricity": int(dist[order[-1]])})


@nb.njit(cache=True)
def _one_port_steps(parent, order):
    """Step of the transfer into every node under "longest subtree first" (``-1`` at the root) and ``b(root)``."""
    n = len(parent)
    nchild = np.zeros(n + 1, np.int64)
    for v in range(n):
        if parent[v] >= 0:
            nchild[parent[v] + 1] += 1
    ptr = np.cumsum(nchild)
    fill = ptr[:-1].copy()
    kids = np.empty(max(n - 1, 0), np.int64)
    for v in range(n):  # children in ascending index
        p = parent[v]
        if p >= 0:
            kids[fill[p]] = v
            fill[p] += 1
    need = np.zeros(n, np.int64)
    for i in range(n - 1, -1, -1):  # leaves first: reverse BFS order
        v = order[i]
        lo, hi = ptr[v], ptr[v + 1]
        if hi - lo == 0:
            continue
        key = np.empty(hi - lo, np.int64)
        for k in range(lo, hi):  # decreasing b, then increasing index: unique keys
            key[k - lo] = -need[kids[k]] * n + kids[k]
        sort = argsort_stable(key)
        sorted_kids = kids[lo:hi][sort]
        best = 0
        for k in range(hi - lo):
            kids[lo + k] = sorted_kids[k]
            best = max(best, k + 1 + need[sorted_kids[k]])
        need[v] = best
    step = np.full(n, -1, np.int64)
    informed = np.zeros(n, np.int64)
    for i in range(n):
        v = order[i]
        for k in range(ptr[v], ptr[v + 1]):
            c = kids[k]
            step[c] = informed[v] + (k - ptr[v])
            informed[c] = step[c] + 1
    return step, need[order[0]]


@nb.njit(cache=True)
def _matching_tree(indptr, indices, root, dist):
    """Build a second candidate tree by calling the farthest uninformed neighbour in every step.

    A second candidate tree: in every step each informed node calls one uninformed neighbour (the one
    farthest from the root, ties to the lower index); returns ``(parent, order informed)``.
    """
    n = len(indptr) - 1
    parent = np.full(n, -1, np.int64)
    informed = np.zeros(n, np.bool_)
    informed[root] = True
    order = np.empty(n, np.int64)
    order[0] = root
    count = 1
    active = np.empty(n, np.int64)
    active[0] = root
    nactive = 1
    while count < n:
        keep = 0
        first_new = count
        for i in range(nactive):
            u = active[i]
            best = -1
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if not informed[v] and (best < 0 or dist[v] > dist[best]):
                    best = v
            if best >= 0:  # a node with no uninformed neighbour left never calls again
                informed[best] = True
                parent[best] = u
                order[count] = best
                count += 1
                active[keep] = u
                keep += 1
        for k in range(first_new, count):
            active[keep] = order[k]
            keep += 1
        nactive = keep
        if count == first_new:
            break
    return parent, order


def one_port_broadcast(topology: Topology, root: int = 0, message_bytes: float = 1.0) -> Schedule:
    """Plan the one-port broadcast down the BFS tree of ``root``: ``b(root)`` steps (``log2 N`` on a hypercube).

    Each node serves its children in decreasing order of the steps their subtrees need.

    Parameters
    ----------
    topology : Topology
        The network, connected.
    root : int, default 0
        The node that holds the message.
    message_bytes : float, default 1.0
        Size of the message in bytes.

    Returns
    -------
    Schedule
        The broadcast.

    Raises
    ------
    TopocastError
        If the network is not connected or ``root`` is not a node.
    """
    require_connected(topology, "broadcast-one-port")
    root = check_root(topology, root)
    dist, parent, order = bfs_tree(topology, root)
    step, total = _one_port_steps(parent, order)
    tree = "bfs"
    other_parent, other_order = _matching_tree(topology.indptr, topology.indices, root, dist)
    other_step, other_total = _one_port_steps(other_parent, other_order)
    if other_total < total:
        parent, order, step, total, tree = other_parent, other_order, other_step, other_total, "calling"
    child = order[1:]
    child = child[np.argsort(step[child], kind="stable")]
    # steps and their bound max(ceil(log2 N), ecc) are the run's `steps` and `lower_bound` (step engine)
    return _tree_schedule(topology, root, parent, child, step[child], message_bytes, "one-port BFS-tree broadcast",
                          {"eccentricity": int(dist.max()), "tree": tree})


register(
    "broadcast-bfs-tree", bfs_tree_broadcast, "broadcast",
    "one-to-all down a BFS tree of the root (lowest-index parent), all-port, ecc(root) steps",
    params=ROOT, aliases=("bfs-broadcast",), ports=PortModel.all_port(), paper="Grama et al. 4.1",
    fault_mode="surviving")
register(
    "broadcast-one-port", one_port_broadcast, "broadcast",
    "one-to-all down a BFS tree, one-port, children served longest-subtree-first (optimal per tree)",
    params=ROOT, aliases=("greedy-tree-broadcast",), ports=PortModel.one_port(), fault_mode="surviving",
    paper="Slater, Cockayne, Hedetniemi 1981 (tree broadcast order); Grama et al. 4.1")
