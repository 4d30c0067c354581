"""Throughput-optimal spanning-tree packing for broadcast and all-gather (and, reversed, the reductions).

A root's data is split evenly over ``k`` arc-disjoint spanning arborescences
rooted at it, ``k = min over v of maxflow(root, v)`` (unit capacities, one per
parallel link): by Edmonds' branching theorem (1973) that many exist, and no
broadcast beats ``B t_w / k`` (the minimum cut).  The trees are built by
Lovasz's constructive proof of the theorem: trees grow in turn, an arc at a
time, shallowest sender first; an arc ``u -> v`` joins tree ``i`` only when the
rest can still be completed, i.e. when every node set ``X`` keeps at least as
many unused arcs entering it as trees that do not yet reach into ``X``.  Only
sets containing ``v`` can lose, so one max-flow decides: in the unused arcs
plus a source ``s`` with an arc of capacity 1 to a node ``t_j`` per tree, and
``t_j`` joined to every node of tree ``j``, ``maxflow(s, v) >= k``
(:func:`scipy.sparse.csgraph.maximum_flow`).  The theorem guarantees some
arc always passes, so the packing always has ``k`` trees.

All-gather packs every node's ``k`` trees this way, each root on the whole
graph.  A link ``u -> v`` then carries at most ``N - 1`` trees' data (every
root's trees use it at most once, and ``v``'s never), ``(N - 1) B / k`` bytes:
when ``k`` is the smallest degree (the edge connectivity equals the minimum
degree, as on tori, hypercubes, PolarFly, Slim Fly, Galaxyfly, random regular
graphs) this meets the injection bound ``(N - 1) B t_w / deg_min``, so the
rate is optimal (the cut bound of ForestColl, Zhao et al. 2024, taken at the
node with fewest links).  Otherwise it is within ``deg_min / k`` of that bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba as nb
import numpy as np

from ..topology.core import Topology


@dataclass
class Packing:
    """Trees rooted at each root, each carrying an equal share of its root's data."""

    #: root of each tree
    roots: np.ndarray
    #: ``(trees, n)``: each node's parent in each tree, ``-1`` at the root
    parent: np.ndarray
    #: trees per root
    per_root: int


def link_matrix(topology: Topology) -> np.ndarray:
    """``(n, n)`` parallel links ``u -> v`` (self-loops dropped)."""
    n = topology.num_nodes
    cap = np.zeros((n, n), dtype=np.int64)
    src, dst = topology.arc_sources, topology.indices
    keep = src != dst
    np.add.at(cap, (src[keep], dst[keep]), 1)
    return cap


def root_connectivity(topology: Topology, root: int) -> int:
    """``min over v != root of maxflow(root, v)`` with a unit capacity per link: Edmonds' number of
    arc-disjoint spanning arborescences rooted at ``root``."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    cap = csr_array(link_matrix(topology).astype(np.int32))
    best = int(np.asarray(cap[[root], :].sum()))
    for v in range(topology.num_nodes):
        if v != root:
            best = min(best, int(maximum_flow(cap, root, v).flow_value))
    return best


class _Aux:
    """The max-flow network of the completion test: unused arcs, ``s -> t_j`` (capacity 1) and ``t_j`` to
    every node of tree ``j`` (unbounded), each edge with its residual twin."""

    def __init__(self, cap: np.ndarray, k: int, root: int):
        n = len(cap)
        self.n, self.k, self.big = n, k, k
        us, vs = np.nonzero(cap)
        tails = np.concatenate([us, np.repeat(n + np.arange(k), n), np.full(k, n + k)])
        heads = np.concatenate([vs, np.tile(np.arange(n), k), n + np.arange(k)])
        caps = np.concatenate([cap[us, vs], np.zeros(k * n, np.int64), np.ones(k, np.int64)])
        m = len(tails)
        both_t = np.concatenate([tails, heads])
        both_h = np.concatenate([heads, tails])
        order = np.argsort(both_t, kind="stable")
        where = np.empty(2 * m, dtype=np.int64)
        where[order] = np.arange(2 * m)
        size = n + k + 1
        self.indptr = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(both_t, minlength=size), out=self.indptr[1:])
        self.head = both_h[order]
        self.twin = np.concatenate([where[m:], where[:m]])[order]
        self.cap = np.concatenate([caps, np.zeros(m, np.int64)])[order]
        self.arc_pos = np.full((n, n), -1, dtype=np.int64)
        self.arc_pos[us, vs] = where[: len(us)]
        self.tree_pos = where[len(us): len(us) + k * n].reshape(k, n)
        self.cap[self.tree_pos[:, root]] = self.big

    def feasible(self, v: int) -> bool:
        return bool(_flow_reaches(self.indptr, self.head, self.twin, self.cap, self.n + self.k, v, self.k))


@nb.njit(cache=True)
def _flow_reaches(indptr: np.ndarray, head: np.ndarray, twin: np.ndarray, cap: np.ndarray, s: int, t: int,
                  need: int) -> bool:  # pragma: no cover (compiled)
    """Whether ``need`` units of flow go from ``s`` to ``t`` (unit augmenting paths, breadth first)."""
    r = cap.copy()
    n = len(indptr) - 1
    pred = np.empty(n, np.int64)
    queue = np.empty(n, np.int64)
    for _ in range(need):
        pred[:] = -1
        pred[s] = -2
        queue[0] = s
        lo, hi = 0, 1
        while lo < hi and pred[t] == -1:
            u = queue[lo]
            lo += 1
            for e in range(indptr[u], indptr[u + 1]):
                w = head[e]
                if r[e] > 0 and pred[w] == -1:
                    pred[w] = e
                    queue[hi] = w
                    hi += 1
        if pred[t] == -1:
            return False
        w = t
        while w != s:
            e = pred[w]
            r[e] -= 1
            r[twin[e]] += 1
            w = head[twin[e]]
    return True


def pack_root(topology: Topology, root: int, k: int | None = None, cap: np.ndarray | None = None,
              seed: int = 0) -> np.ndarray:
    """``(k, n)`` parent arrays of ``k`` arc-disjoint spanning arborescences rooted at ``root`` (default ``k``:
    :func:`root_connectivity`), grown shallowest sender first with Lovasz's completion test."""
    cap = link_matrix(topology) if cap is None else cap
    k = root_connectivity(topology, root) if k is None else k
    n = len(cap)
    aux = _Aux(cap, k, root)
    data = aux.cap
    rem = cap.copy()
    inside = np.zeros((k, n), dtype=bool)
    inside[:, root] = True
    depth = np.zeros((k, n), dtype=np.int64)
    parent = np.full((k, n), -1, dtype=np.int64)
    key = np.random.default_rng(seed).random((n, n))
    done = np.zeros(k, dtype=bool) if n > 1 else np.ones(k, dtype=bool)
    while not done.all():
        for i in range(k):
            if done[i]:
                continue
            members = np.flatnonzero(inside[i])
            sub = rem[members] > 0
            sub &= ~inside[i][None, :]
            iu, v = np.nonzero(sub)
            if len(v) == 0:
                raise RuntimeError(f"tree packing: tree {i} of root {root} cannot grow (k={k} too large)")
            u = members[iu]
            order = np.lexsort((key[u, v], -rem[u, v], depth[i, u]))
            for c in order.tolist():
                a, b = int(u[c]), int(v[c])
                rem[a, b] -= 1
                data[aux.arc_pos[a, b]] -= 1
                data[aux.tree_pos[i, b]] = aux.big
                if aux.feasible(b):
                    inside[i, b] = True
                    depth[i, b] = depth[i, a] + 1
                    parent[i, b] = a
                    break
                rem[a, b] += 1
                data[aux.arc_pos[a, b]] += 1
                data[aux.tree_pos[i, b]] = 0
            else:
                raise RuntimeError(f"tree packing: no arc keeps the packing completable (root {root}, tree {i})")
            done[i] = inside[i].all()
    return parent


def pack(topology: Topology, roots: Sequence[int] | np.ndarray, seed: int = 0, tries: int = 1) -> Packing:
    """Every root's ``k`` arc-disjoint spanning arborescences, ``k`` the smallest root connectivity of the
    roots (so every tree carries ``1/k`` of its root's data); per root the lowest of ``tries`` seeded packings
    (ties among equally shallow senders broken at random): a lower tree fills the pipeline sooner."""
    roots = np.asarray(roots, dtype=np.int64)
    cap = link_matrix(topology)
    k = min(root_connectivity(topology, int(r)) for r in np.unique(roots))
    parents = []
    for r in roots.tolist():
        found = [pack_root(topology, r, k, cap, seed + i) for i in range(tries)]
        parents.append(min(found, key=lambda p: max((int(depths(t).max()) for t in p), default=0)))
    return Packing(np.repeat(roots, k), np.concatenate(parents), k)


def arc_loads(packing: Packing, n: int) -> np.ndarray:
    """``(n, n)`` root-data units each ordered pair of nodes carries (each tree ``1 / per_root``)."""
    load = np.zeros((n, n))
    for parent in packing.parent:
        nodes = np.flatnonzero(parent >= 0)
        load[parent[nodes], nodes] += 1.0 / packing.per_root
    return load


def depths(parent: np.ndarray) -> np.ndarray:
    """Depth of every node in a parent-array tree (root 0)."""
    n = len(parent)
    depth = np.full(n, -1, dtype=np.int64)
    depth[parent < 0] = 0
    for _ in range(n):
        todo = np.flatnonzero(depth < 0)
        if len(todo) == 0:
            break
        up = depth[parent[todo]]
        ready = up >= 0
        depth[todo[ready]] = up[ready] + 1
    return depth


def pipeline(packing: Packing, per_tree: int, block: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Transfers of the pipelined trees: each tree carries ``per_tree`` chunks of its root's block
    (``block[T]``: tree ``T``'s block, whose chunks are ``block * k * per_tree + ...``), chunk ``g`` crossing
    an arc that leaves depth ``d`` in step ``g + d``; what one arc carries in one step goes as one transfer.
    Returns ``(src, dst, step, ranges per transfer, range first, range count)``."""
    k = packing.per_root
    src_l, dst_l, step_l, first_l = [], [], [], []
    g = np.arange(per_tree)
    for t, parent in enumerate(packing.parent):
        depth = depths(parent)
        nodes = np.flatnonzero(parent >= 0)
        base = (int(block[t]) * k + t % k) * per_tree
        src_l.append(np.repeat(parent[nodes], per_tree))
        dst_l.append(np.repeat(nodes, per_tree))
        step_l.append((depth[parent[nodes]][:, None] + g[None, :]).ravel())
        first_l.append(np.tile(base + g, len(nodes)))
    cat = np.concatenate
    src, dst, step, first = cat(src_l), cat(dst_l), cat(step_l), cat(first_l)
    order = np.lexsort((first, dst, src, step))
    src, dst, step, first = src[order], dst[order], step[order], first[order]
    new = np.ones(len(src), dtype=bool)
    new[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1]) | (step[1:] != step[:-1])
    heads = np.flatnonzero(new)
    ranges = np.diff(np.append(heads, len(src)))
    return src[heads], dst[heads], step[heads], ranges, first, np.ones(len(first), dtype=np.int64)
