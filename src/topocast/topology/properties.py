"""Graph properties users ask for on any topology: bisection width, connectivity, girth, vertex-transitivity.

* Bisection width as an interval ``[lower, upper]``: ``upper`` is the best
  balanced cut (halves of ``floor(N/2)`` and ``ceil(N/2)`` nodes) of METIS
  (``pymetis``, several seeds and imbalance settings, rebalanced exactly)
  and of any constructive cut the family registers (:func:`register_cut`);
  ``lower`` is the spectral bound ``ceil(lambda_2 |A||B| / N)`` of the
  Laplacian (parallel links counted with their multiplicity).
* Edge and node connectivity: minimum cuts by max-flow (scipy) from a
  minimum-degree node (Even's scheme); a connected vertex-transitive simple
  graph has edge connectivity equal to its degree (Mader 1971).
* Girth of the underlying simple graph: one early-stopping BFS per orbit
  representative (one in all when vertex-transitive).
* Vertex-transitivity: ``"yes"`` when the builder declares it, ``"no"`` when
  two nodes differ in degree or distance distribution, else ``"unknown"``.

Each expensive property has a size cap (:data:`CAPS`, by default; ``force``
raises it to :data:`FORCED_CAPS`); above it the property is ``None`` and a
note says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numba as nb
import numpy as np

from .core import Topology
from .metrics import is_connected

#: default size caps (nodes; girth and vertex-transitivity: BFS sources x arcs)
CAPS = {"bisection": 50_000, "spectral": 2_000, "edge_connectivity": 2_000, "node_connectivity": 500,
        "bfs_work": 200_000_000}
#: caps with ``force=True`` (``topocast info --properties``)
FORCED_CAPS = {"bisection": 5_000_000, "spectral": 100_000, "edge_connectivity": 10_000,
               "node_connectivity": 10_000, "bfs_work": 20_000_000_000}

_CUTS: dict[str, Callable[[Topology], np.ndarray | None]] = {}


def register_cut(family: str, cut: Callable[[Topology], np.ndarray | None]) -> None:
    """Register a family's constructive bisection: ``cut(topology) -> side`` (0/1 per node) or ``None``."""
    _CUTS[family] = cut


@dataclass(frozen=True)
class Bisection:
    """A balanced partition and the bisection-width interval it belongs to."""

    side: np.ndarray   # 0/1 per node; side 1 holds ceil(N/2) nodes
    upper: int         # links cut by ``side``
    lower: int | None  # proven lower bound on the bisection width (None: not computed)
    method: str        # where ``side`` came from
    lambda2: float | None = None


# -- simple weighted graph ---------------------------------------------------------------------
def weighted_csr(topology: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, weights)``: parallel links merged into one weighted edge, loops dropped."""
    src, dst = topology.arc_sources, topology.indices
    keep = src != dst
    key = np.unique(src[keep] * topology.num_nodes + dst[keep], return_counts=True)
    u, v = np.divmod(key[0], topology.num_nodes)
    indptr = np.zeros(topology.num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(u, minlength=topology.num_nodes), out=indptr[1:])
    return indptr, v.astype(np.int64), key[1].astype(np.int64)


def cut_links(topology: Topology, side: np.ndarray) -> int:
    """Links (parallel links counted each) whose ends lie on different sides."""
    return int(np.count_nonzero(side[topology.arc_sources] != side[topology.indices]) // 2)


# -- bisection: upper bound ---------------------------------------------------------------------
def _metis(indptr, indices, weights, seed: int, ufactor: int) -> np.ndarray:
    import pymetis

    options = pymetis.Options(seed=seed, ufactor=ufactor, ncuts=2)
    eweights = None if np.all(weights == 1) else weights
    if hasattr(pymetis, "CSRAdjacency"):
        _, parts = pymetis.part_graph(2, pymetis.CSRAdjacency(indptr, indices), eweights=eweights, options=options)
    else:  # pymetis < 2025.2
        _, parts = pymetis.part_graph(2, xadj=indptr, adjncy=indices, eweights=eweights, options=options)
    return np.asarray(parts, dtype=np.int8)


def rebalance(side: np.ndarray, indptr, indices, weights) -> np.ndarray:
    """Move nodes off the larger side, those whose move costs least first (half the excess per pass, gains
    recomputed between passes), until side 1 holds ``ceil(N/2)`` nodes and side 0 ``floor(N/2)``."""
    side = side.astype(np.int8).copy()
    src = np.repeat(np.arange(len(side)), np.diff(indptr))
    want = (len(side) + 1) // 2
    while int(side.sum()) != want:
        big = 1 if side.sum() > want else 0
        excess = abs(int(side.sum()) - want)
        across = side[src] != side[indices]
        gain = np.bincount(src, weights=np.where(across, weights, -weights), minlength=len(side))
        nodes = np.flatnonzero(side == big)
        side[nodes[np.argsort(-gain[nodes], kind="stable")[:max(1, excess // 2)]]] = 1 - big
    return side


def metis_bisection(topology: Topology, seeds=(0, 1, 2, 3), ufactors=(1, 30)) -> tuple[int, np.ndarray]:
    """Best exactly balanced cut METIS finds over ``seeds`` x ``ufactors``: ``(links cut, side)``."""
    csr = weighted_csr(topology)
    best = None
    for seed in seeds:
        for ufactor in ufactors:
            side = rebalance(_metis(*csr, seed, ufactor), *csr)
            cut = cut_links(topology, side)
            if best is None or cut < best[0]:
                best = (cut, side)
    return best


def constructive_bisection(topology: Topology) -> tuple[int, np.ndarray] | None:
    """The family's registered balanced cut, if it has one and it is balanced."""
    cut = _CUTS.get(topology.family)
    side = None if cut is None else cut(topology)
    if side is None:
        return None
    side = np.asarray(side, dtype=np.int8)
    if int(side.sum()) != topology.num_nodes // 2 and int(side.sum()) != (topology.num_nodes + 1) // 2:
        return None
    if int(side.sum()) != (topology.num_nodes + 1) // 2:
        side = 1 - side
    return cut_links(topology, side), side


# -- bisection: lower bound ---------------------------------------------------------------------
def algebraic_connectivity(topology: Topology) -> float:
    """``lambda_2`` of the Laplacian (links weighted by multiplicity): dense up to 3000 nodes, else ARPACK in
    shift-invert mode (a sparse LU; its fill-in can make this slow on expander-like graphs, hence the caps)."""
    import scipy.sparse as sp

    n = topology.num_nodes
    if n < 2:
        return 0.0
    indptr, indices, weights = weighted_csr(topology)
    adj = sp.csr_matrix((weights.astype(float), indices, indptr), shape=(n, n))
    lap = sp.diags(np.asarray(adj.sum(axis=1)).ravel()) - adj
    if n <= 3000:
        return float(np.linalg.eigvalsh(lap.toarray())[1])
    from scipy.sparse.linalg import eigsh

    vals = eigsh(lap.tocsc(), k=2, sigma=-1e-3, which="LM", return_eigenvectors=False)
    return float(np.sort(vals)[1])


def spectral_lower(n: int, lambda2: float) -> int:
    """``ceil(lambda_2 floor(N/2) ceil(N/2) / N)`` with a margin for rounding error in ``lambda_2``."""
    if n < 2:
        return 0
    value = max(0.0, lambda2) * (n // 2) * ((n + 1) // 2) / n
    return max(0, math.ceil(value - 1e-7 * max(1.0, value)))


def best_cut(topology: Topology) -> tuple[int, np.ndarray, str]:
    """``(links cut, side, method)`` of the best balanced cut of METIS and the family's construction (cached)."""
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "best_cut" not in cache:
        options = [(*c, name) for c, name in ((metis_bisection(topology), "metis"),
                                              (constructive_bisection(topology), f"{topology.family} construction"))
                   if c is not None]
        cache["best_cut"] = min(options, key=lambda c: c[0])
    return cache["best_cut"]


def bisection(topology: Topology, force: bool = False) -> Bisection | None:
    """Best known balanced cut and the spectral lower bound; ``None`` above the size cap."""
    caps = FORCED_CAPS if force else CAPS
    n = topology.num_nodes
    if n < 2 or n > caps["bisection"]:
        return None
    upper, side, method = best_cut(topology)
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "lambda2" not in cache and n <= caps["spectral"]:
        cache["lambda2"] = algebraic_connectivity(topology)
    lam = cache.get("lambda2")
    lower = None if lam is None else spectral_lower(n, lam)
    return Bisection(side, int(upper), lower, method, lam)


# -- connectivity ---------------------------------------------------------------------------------
def _max_flow(graph, s: int, t: int) -> int:
    from scipy.sparse.csgraph import maximum_flow

    return int(maximum_flow(graph, s, t).flow_value)


def _flow_graph(topology: Topology, split: bool):
    """Capacitated digraph: links (multiplicity) or, with ``split``, node-split graph with unit node capacity."""
    import scipy.sparse as sp

    n = topology.num_nodes
    indptr, indices, weights = weighted_csr(topology)
    src = np.repeat(np.arange(n), np.diff(indptr))
    if not split:
        return sp.csr_matrix((weights.astype(np.int32), (src, indices)), shape=(n, n))
    rows = np.concatenate([np.arange(n), src + n])          # v_in -> v_out, u_out -> v_in
    cols = np.concatenate([np.arange(n) + n, indices])
    caps = np.concatenate([np.ones(n, np.int32), np.full(len(src), n, np.int32)])
    return sp.csr_matrix((caps, (rows, cols)), shape=(2 * n, 2 * n))


def edge_connectivity(topology: Topology) -> int:
    """Fewest links whose removal disconnects the graph (parallel links counted each)."""
    n = topology.num_nodes
    if n < 2:
        return 0
    if topology.vertex_transitive and not topology.has_parallel_links and is_connected(topology):
        return int(topology.port_degree[0])   # Mader 1971
    graph = _flow_graph(topology, split=False)
    return min(_max_flow(graph, 0, w) for w in range(1, n))


def node_connectivity(topology: Topology) -> int:
    """Fewest nodes whose removal disconnects the graph (``N - 1`` for a complete graph), by Even's scheme."""
    n = topology.num_nodes
    if n < 2 or not is_connected(topology):
        return 0
    indptr, indices, _ = weighted_csr(topology)
    deg = np.diff(indptr)
    if int(deg.min()) == n - 1:
        return n - 1
    v = int(np.argmin(deg))
    graph = _flow_graph(topology, split=True)
    nbrs = indices[indptr[v]:indptr[v + 1]]
    best = int(deg[v])
    for w in np.setdiff1d(np.arange(n), np.append(nbrs, v)):
        best = min(best, _max_flow(graph, v + n, int(w)))
    for i, x in enumerate(nbrs):
        adjacent = indices[indptr[x]:indptr[x + 1]]
        for y in nbrs[i + 1:]:
            if not np.any(adjacent == y):
                best = min(best, _max_flow(graph, int(x) + n, int(y)))
    return best


# -- girth ----------------------------------------------------------------------------------------
@nb.njit(cache=True, parallel=True)
def _girth(indptr, indices, sources):
    """Shortest cycle through each source in the underlying simple graph (0 when none), early-stopping BFS."""
    n = len(indptr) - 1
    out = np.zeros(len(sources), dtype=np.int64)
    for i in nb.prange(len(sources)):
        dist = np.full(n, -1, dtype=np.int64)
        parent = np.full(n, -1, dtype=np.int64)
        queue = np.empty(n, dtype=np.int64)
        s = sources[i]
        dist[s] = 0
        queue[0] = s
        head, tail, best = 0, 1, n + 1
        while head < tail:
            u = queue[head]
            head += 1
            if 2 * dist[u] >= best:
                break
            for e in range(indptr[u], indptr[u + 1]):
                w = indices[e]
                if w == u or w == parent[u] or (e > indptr[u] and indices[e - 1] == w):
                    continue  # loops, the tree link back and parallel copies of a link are no cycles
                if dist[w] < 0:
                    dist[w] = dist[u] + 1
                    parent[w] = u
                    queue[tail] = w
                    tail += 1
                elif dist[u] + dist[w] + 1 < best:
                    best = dist[u] + dist[w] + 1
        out[i] = best if best <= n else 0
    return out


def girth(topology: Topology, sources: np.ndarray | None = None) -> int | None:
    """Length of the shortest cycle of the underlying simple graph (``None``: a forest).

    ``sources``: one node per orbit (default: :func:`topocast.topology.metrics.orbits`).
    """
    from .metrics import orbits

    sources = orbits(topology)[0] if sources is None else np.asarray(sources)
    found = _girth(topology.indptr, topology.indices, np.asarray(sources, dtype=np.int64))
    found = found[found > 0]
    return int(found.min()) if len(found) else None


# -- vertex-transitivity --------------------------------------------------------------------------
def vertex_transitivity(topology: Topology) -> tuple[str, str]:
    """``("yes" | "no" | "unknown", reason)``: declared, disproved by degrees or distance distributions, or open."""
    from .metrics import _profile, orbits

    if topology.vertex_transitive:
        return "yes", "declared by the builder"
    if topology.num_nodes and topology.port_degree.min() != topology.port_degree.max():
        return "no", "node degrees differ"
    if not is_connected(topology):
        return "unknown", "not connected"
    reps = orbits(topology)[0]
    _, hist = _profile(topology, reps)
    if np.any(hist != hist[0]):
        return "no", "distance distributions differ between nodes"
    return "unknown", f"all {len(reps)} probed nodes have the same distance distribution"


# -- all of them, for ``topocast info`` ----------------------------------------------------------
def properties(topology: Topology, force: bool = False) -> dict:
    """The properties ``topocast info`` prints, each skipped (``None``, with a note) above its size cap."""
    caps = FORCED_CAPS if force else CAPS
    n, notes = topology.num_nodes, []
    out: dict = {}
    cut = bisection(topology, force)
    out["bisection_width"] = None if cut is None else {"lower": cut.lower, "upper": cut.upper, "method": cut.method}
    if cut is None and n >= 2:
        notes.append(f"bisection_width: skipped above {caps['bisection']} nodes")
    elif cut is not None and cut.lower is None:
        notes.append(f"bisection_width: spectral lower bound skipped above {caps['spectral']} nodes")
    for key, fn in (("edge_connectivity", edge_connectivity), ("node_connectivity", node_connectivity)):
        out[key] = fn(topology) if n <= caps[key] or (key == "edge_connectivity" and _mader(topology)) else None
        if out[key] is None:
            notes.append(f"{key}: skipped above {caps[key]} nodes")
    out.update(_bfs_properties(topology, caps["bfs_work"], notes))
    out["property_notes"] = notes
    return out


def _mader(topology: Topology) -> bool:
    return topology.vertex_transitive and not topology.has_parallel_links


def _bfs_properties(topology: Topology, cap: int, notes: list[str]) -> dict:
    from .metrics import orbits

    reps = orbits(topology)[0]
    if len(reps) * max(1, topology.num_arcs) > cap:
        notes.append(f"girth, vertex_transitivity: skipped above {cap} BFS work (sources x arcs)")
        declared = "yes" if topology.vertex_transitive else "unknown"
        return {"girth": None, "vertex_transitivity": declared}
    g = girth(topology, reps)
    if g is None:
        notes.append("girth: no cycle (a forest)")
    verdict, reason = vertex_transitivity(topology)
    return {"girth": g, "vertex_transitivity": verdict, "vertex_transitivity_reason": reason}
