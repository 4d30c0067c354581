"""Synchronous-round broadcast synthesis for the step engine (all-port, half-duplex, or ``p``-port).

All-port: every node at distance ``k`` from the root is told in step ``k`` by
one neighbour at distance ``k - 1`` (a breadth-first tree), which meets the
eccentricity bound, the best any all-port broadcast can do.

``p``-port (one-port is ``p = 1``): minimum broadcast time is NP-hard in
general (Hedetniemi, Hedetniemi and Liestman, "A survey of gossiping and
broadcasting in communication networks", Networks 1988), so each step is a
greedy ``b``-matching between the informed nodes (capacity ``p``) and their
uninformed neighbours, in the spirit of the matching-based heuristics surveyed
there.  Receivers are served by urgency: the time the optimal tree schedule
(Slater, Cockayne and Hedetniemi 1981) needs below them in a random
breadth-first tree, so the nodes with the most left to do hear first.  Seeded
restarts (other trees, other tie-breaks, two orders) run and the fewest steps
win.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..topology.metrics import bfs_distances

if TYPE_CHECKING:
    from ..topology.core import Topology


def bfs_broadcast(topology: Topology, root: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src, dst, step) of the breadth-first all-port broadcast: the first neighbour one hop closer sends."""
    dist = bfs_distances(topology, root).astype(np.int64)
    src_arc = topology.arc_sources.astype(np.int64)
    dst_arc = topology.indices.astype(np.int64)
    closer = dist[src_arc] == dist[dst_arc] - 1
    dst, first = np.unique(dst_arc[closer], return_index=True)
    src = src_arc[closer][first]
    return src, dst, dist[dst] - 1


def tree_urgency(topology: Topology, root: int, rng: np.random.Generator) -> np.ndarray:
    """Steps a one-port broadcast needs to finish each node's subtree of a random breadth-first tree.

    The optimal schedule on a tree sends to the children in decreasing order of
    their own subtree time, so ``T(v) = max_i (i + T(c_i))`` over the children
    sorted that way (Slater, Cockayne and Hedetniemi, "Information
    dissemination in trees", SIAM J. Comput. 1981).
    """
    n = topology.num_nodes
    dist = bfs_distances(topology, root).astype(np.int64)
    arc_src = topology.arc_sources.astype(np.int64)
    arc_dst = topology.indices.astype(np.int64)
    closer = dist[arc_src] == dist[arc_dst] - 1
    cs, cd = arc_src[closer], arc_dst[closer]
    order = np.lexsort((rng.random(len(cd)), cd))
    nodes, first = np.unique(cd[order], return_index=True)
    parent = np.full(n, -1, dtype=np.int64)
    parent[nodes] = cs[order][first]
    urgency = np.zeros(n, dtype=np.int64)
    kids: list[list[int]] = [[] for _ in range(n)]
    for v in np.argsort(-dist, kind="stable"):
        times = sorted((urgency[c] for c in kids[v]), reverse=True)
        urgency[v] = max((i + 1 + x for i, x in enumerate(times)), default=0)
        if parent[v] >= 0:
            kids[parent[v]].append(int(v))
    return urgency


def _greedy_step(cand_src: np.ndarray, cand_dst: np.ndarray, ports: int, urgency: np.ndarray, key: np.ndarray,
                 mode: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """One greedy b-matching: the most urgent receivers first; ``mode`` 0 then prefers receivers with few
    candidate senders, ``mode`` 1 senders with few candidate receivers."""
    per_dst = np.bincount(cand_dst, minlength=n)
    per_src = np.bincount(cand_src, minlength=n)
    if mode == 0:
        order = np.lexsort((key[cand_dst], per_src[cand_src], per_dst[cand_dst], -urgency[cand_dst]))
    else:
        order = np.lexsort((key[cand_dst], per_dst[cand_dst], -urgency[cand_dst], per_src[cand_src]))
    capacity = np.full(n, ports, dtype=np.int64)
    done = np.zeros(n, dtype=bool)
    src, dst = [], []
    for i in order:
        u, v = cand_src[i], cand_dst[i]
        if done[v] or capacity[u] == 0:
            continue
        done[v] = True
        capacity[u] -= 1
        src.append(u)
        dst.append(v)
    return np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)


def port_broadcast(topology: Topology, root: int, ports: int, rng: np.random.Generator, mode: int = 0
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(src, dst, step) of a greedy ``ports``-port broadcast from ``root``."""
    n = topology.num_nodes
    informed = np.zeros(n, dtype=bool)
    informed[root] = True
    arc_src = topology.arc_sources.astype(np.int64)
    arc_dst = topology.indices.astype(np.int64)
    urgency = tree_urgency(topology, root, rng)
    key = rng.permutation(n)
    out_src, out_dst, out_step = [], [], []
    step = 0
    while not informed.all():
        cand = informed[arc_src] & ~informed[arc_dst]
        if not cand.any():
            break
        src, dst = _greedy_step(arc_src[cand], arc_dst[cand], ports, urgency, key, mode, n)
        informed[dst] = True
        out_src.append(src)
        out_dst.append(dst)
        out_step.append(np.full(len(src), step, dtype=np.int64))
        step += 1
    cat = np.concatenate
    return cat(out_src), cat(out_dst), cat(out_step)
