"""Broadcast of a large message over arc-disjoint spanning trees, pipelined in chunks.

The rate no broadcast can beat is set by the root's cuts: by Edmonds' branching
theorem (1973) the most arc-disjoint spanning arborescences rooted at ``r`` is
``k = min over v of maxflow(r, v)`` (unit capacities), and a message split
evenly over ``k`` such trees crosses each arc once, ``B / k`` bytes per tree.
Here ``k`` comes from max-flow (:func:`scipy.sparse.csgraph.maximum_flow`)
and the trees from a greedy packing that grows them in turn, one arc at a time,
each taking the unused arc out of its tree whose sender has the most unused
arcs left (so no tree starves another of the root's or a cut's arcs), ties to
the shallowest sender; seeded restarts break other ties.  When it packs fewer
than ``k`` trees it says so (the schedule is then slower than the rate bound,
never wrong).  As ForestColl (Zhao et al. 2024) does for all-gather, the trees
carry disjoint parts of the data, so they share no link.

Chunks of tree ``i`` go down it in order, chunk ``q`` over an arc leaving depth
``d`` in step ``q + d``: on the event engine each arc pipelines its tree's
chunks as soon as they arrive.  Only for all-port, full-duplex models (a port
limit or a shared link would make the trees contend).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..sim.models import CostModel
    from ..topology.core import Topology


def root_connectivity(topology: Topology, root: int) -> int:
    """``min over v != root of maxflow(root, v)`` with unit arc capacities: Edmonds' number of arc-disjoint
    spanning arborescences rooted at ``root``."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    n = topology.num_nodes
    src = topology.arc_sources.astype(np.int32)
    dst = topology.indices.astype(np.int32)
    cap = csr_array((np.ones(len(dst), np.int32), (src, dst)), shape=(n, n))
    cap.sum_duplicates()
    best = int(topology.port_degree[root])
    for v in range(n):
        if v != root:
            best = min(best, int(maximum_flow(cap, root, v).flow_value))
    return best


def pack(topology: Topology, root: int, k: int, rng: np.random.Generator, shallow: bool = False) -> list[np.ndarray]:
    """Up to ``k`` arc-disjoint spanning arborescences rooted at ``root``, each as a parent-arc array
    (``-1`` at the root); fewer when the greedy packing gets stuck.  ``shallow``: the shallowest sender
    first, then the one with most unused arcs (else the reverse)."""
    n = topology.num_nodes
    indptr = topology.indptr
    dst = topology.indices
    used = np.zeros(topology.num_arcs, dtype=bool)
    left = np.diff(indptr).astype(np.int64)            # unused out-arcs per node
    key = rng.random(topology.num_arcs)
    inside = np.zeros((k, n), dtype=bool)
    inside[:, root] = True
    depth = np.zeros((k, n), dtype=np.int64)
    parent = np.full((k, n), -1, dtype=np.int64)
    stuck = np.zeros(k, dtype=bool)
    while not stuck.all():
        for i in range(k):
            if stuck[i]:
                continue
            members = np.flatnonzero(inside[i])
            arcs = np.concatenate([np.arange(indptr[u], indptr[u + 1]) for u in members])
            arcs = arcs[~used[arcs] & ~inside[i, dst[arcs]]]
            if len(arcs) == 0:
                stuck[i] = True
                continue
            senders = topology.arc_sources[arcs]
            keys = (key[arcs], -left[senders], depth[i, senders]) if shallow else \
                (key[arcs], depth[i, senders], -left[senders])
            pick = arcs[np.lexsort(keys)[0]]
            u, v = int(topology.arc_sources[pick]), int(dst[pick])
            used[pick] = True
            left[u] -= 1
            inside[i, v] = True
            depth[i, v] = depth[i, u] + 1
            parent[i, v] = pick
    return [parent[i] for i in range(k) if inside[i].all()]


def best_packing(topology: Topology, root: int, seed: int, restarts: int = 6) -> tuple[list[np.ndarray], int]:
    """The packing with the most trees, then the lowest height, over seeded restarts (both orders), and
    Edmonds' ``k``."""
    k = root_connectivity(topology, root)
    best: list[np.ndarray] = []
    best_key = (0, 0)
    for r in range(restarts):
        trees = pack(topology, root, k, np.random.default_rng([seed, r // 2]), shallow=r % 2 == 1)
        if not trees:
            continue
        height = max(int(_depths(topology, p, root).max()) for p in trees)
        if (len(trees), -height) > best_key:
            best, best_key = trees, (len(trees), -height)
    return best, k


def _depths(topology: Topology, parent_arc: np.ndarray, root: int) -> np.ndarray:
    n = topology.num_nodes
    depth = np.full(n, -1, dtype=np.int64)
    depth[root] = 0
    src = topology.arc_sources
    for _ in range(n):
        todo = np.flatnonzero(depth < 0)
        if len(todo) == 0:
            break
        up = depth[src[parent_arc[todo]]]
        ready = up >= 0
        depth[todo[ready]] = up[ready] + 1
    return depth


def chunk_count(trees: int, height: int, cost: CostModel, message_bytes: float, most: int) -> int:
    """Chunks minimising the pipeline's estimate ``(q + height - 1) (t_s + B t_w / (q trees))`` over ``q``
    chunks per tree (a geometric grid, ratio 1.1), at most ``most`` in all."""
    best, best_t = trees, np.inf
    q = 1.0
    while round(q) * trees <= most:
        c = int(round(q)) * trees
        t = (c / trees + height - 1) * (cost.startup + message_bytes * cost.per_byte / c)
        if t < best_t:
            best, best_t = c, t
        q = max(q * 1.1, q + 1)
    return best


def tree_broadcast(topology: Topology, root: int, trees: list[np.ndarray], chunks: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(src, dst, first chunk, step)``: chunk ``j`` down tree ``j mod len(trees)``, one chunk per transfer."""
    src_all, dst_all, first_all, step_all = [], [], [], []
    t = len(trees)
    for i, parent_arc in enumerate(trees):
        depth = _depths(topology, parent_arc, root)
        nodes = np.flatnonzero(parent_arc >= 0)
        arcs = parent_arc[nodes]
        mine = np.arange(i, chunks, t)
        q = np.arange(len(mine))
        src_all.append(np.repeat(topology.arc_sources[arcs], len(mine)))
        dst_all.append(np.repeat(nodes, len(mine)))
        first_all.append(np.tile(mine, len(nodes)))
        step_all.append((depth[topology.arc_sources[arcs]][:, None] + q[None, :]).ravel())
    cat = np.concatenate
    return cat(src_all), cat(dst_all), cat(first_all), cat(step_all)
