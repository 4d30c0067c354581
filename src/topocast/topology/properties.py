"""Graph properties users ask for on any topology: bisection width, connectivity, girth, vertex-transitivity.

* Bisection width as an interval ``[lower, upper]``: ``upper`` is the best
  balanced cut (halves of ``floor(N/2)`` and ``ceil(N/2)`` nodes) of METIS
  (``pymetis``, several seeds and imbalance settings, rebalanced exactly)
  and of any constructive cut the family registers (:func:`register_cut`);
  ``lower`` is the spectral bound ``ceil(lambda_2 |A||B| / N)`` of the
  Laplacian (parallel links counted with their multiplicity).
* Edge and node connectivity: minimum cuts by max-flow from a minimum-degree
  node (Even's scheme): augmenting paths in Python on small flow problems
  (:data:`SMALL_FLOW`), scipy's ``maximum_flow`` on larger ones; a connected
  vertex-transitive simple graph has edge connectivity equal to its degree
  (Mader 1971).
* Girth of the underlying simple graph: from one BFS per orbit representative
  (one in all when vertex-transitive): on small graphs from the numpy BFS
  distances (:func:`girth_from_distances`), on larger ones an early-stopping
  compiled BFS.
* Vertex-transitivity: ``"yes"`` when the builder declares it, ``"no"`` when
  two nodes differ in degree or distance distribution, else ``"unknown"``.

Each expensive property has a size cap (:data:`CAPS`, by default; ``force``
raises it to :data:`FORCED_CAPS`); above it the property is ``None`` and a
note says why.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .core import Topology
from .metrics import is_connected, small

#: default size caps (nodes; girth and vertex-transitivity: BFS sources x arcs)
CAPS = {"bisection": 50_000, "spectral": 2_000, "edge_connectivity": 2_000, "node_connectivity": 500,
        "bfs_work": 200_000_000}
#: caps with ``force=True`` (``topocast info --properties``)
FORCED_CAPS = {"bisection": 5_000_000, "spectral": 100_000, "edge_connectivity": 10_000,
               "node_connectivity": 10_000, "bfs_work": 20_000_000_000}

_CUTS: dict[str, Callable[[Topology], np.ndarray | None]] = {}


def register_cut(family: str, cut: Callable[[Topology], np.ndarray | None]) -> None:
    """Register a family's constructive bisection.

    The calling module is recorded as an extension of the family (the manifest lists it, so looking the
    family up imports it).

    Parameters
    ----------
    family : str
        The family.
    cut : callable
        ``cut(topology) -> side``: 0/1 per node, or None when it has no cut for these parameters.
    """
    from ..registry import note_extension

    _CUTS[family] = cut
    note_extension(family)


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
    """Merge parallel links into one weighted edge and drop loops.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    indptr, indices, weights : numpy.ndarray
        CSR of the simple graph and the multiplicity of every edge.
    """
    src, dst = topology.arc_sources, topology.indices
    keep = src != dst
    key = np.unique(src[keep] * topology.num_nodes + dst[keep], return_counts=True)
    u, v = np.divmod(key[0], topology.num_nodes)
    indptr = np.zeros(topology.num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(u, minlength=topology.num_nodes), out=indptr[1:])
    return indptr, v.astype(np.int64), key[1].astype(np.int64)


def cut_links(topology: Topology, side: np.ndarray) -> int:
    """Count the links (parallel links each) whose ends lie on different sides.

    Parameters
    ----------
    topology : Topology
        The network.
    side : numpy.ndarray
        0/1 per node.

    Returns
    -------
    int
        Links cut.
    """
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
    """Balance a partition by moving the cheapest nodes off the larger side.

    Move nodes off the larger side, those whose move costs least first (half the excess per pass, gains
    recomputed between passes), until side 1 holds ``ceil(N/2)`` nodes and side 0 ``floor(N/2)``.

    Parameters
    ----------
    side : numpy.ndarray
        0/1 per node.
    indptr, indices, weights : numpy.ndarray
        The weighted simple graph (:func:`weighted_csr`).

    Returns
    -------
    numpy.ndarray
        The balanced sides.
    """
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
    """Find the best exactly balanced cut METIS finds over ``seeds`` x ``ufactors``.

    Parameters
    ----------
    topology : Topology
        The network.
    seeds : sequence of int, default (0, 1, 2, 3)
        METIS seeds tried.
    ufactors : sequence of int, default (1, 30)
        METIS imbalance factors tried (the cut is then rebalanced).

    Returns
    -------
    tuple
        ``(links cut, side)``.

    Raises
    ------
    ValueError
        No seed or imbalance factor to try.
    """
    csr = weighted_csr(topology)
    best = None
    for seed in seeds:
        for ufactor in ufactors:
            side = rebalance(_metis(*csr, seed, ufactor), *csr)
            cut = cut_links(topology, side)
            if best is None or cut < best[0]:
                best = (cut, side)
    if best is None:
        raise ValueError("best_cut: no seed or imbalance factor to try")
    return best


def constructive_bisection(topology: Topology) -> tuple[int, np.ndarray] | None:
    """Give the family's registered balanced cut, if it has one and it is balanced.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    tuple or None
        ``(links cut, side)``, or None.
    """
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
    """Give the algebraic connectivity ``lambda_2`` of the Laplacian.

    ``lambda_2`` of the Laplacian (links weighted by multiplicity): dense up to 3000 nodes, else ARPACK in
    shift-invert mode (a sparse LU; its fill-in can make this slow on expander-like graphs, hence the caps).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    float
        The second-smallest Laplacian eigenvalue (0 for a single node).
    """
    n = topology.num_nodes
    if n < 2:
        return 0.0
    indptr, indices, weights = weighted_csr(topology)
    if n <= 3000:
        lap = np.zeros((n, n))
        rows = np.repeat(np.arange(n), np.diff(indptr))
        lap[rows, indices] = -weights
        lap[np.arange(n), np.arange(n)] = np.bincount(rows, weights=weights, minlength=n)
        if n < 1000:
            return float(np.linalg.eigvalsh(lap)[1])
        from scipy.linalg import eigh

        # the two smallest only (LAPACK's relatively robust driver): half the time of all n from n = 1000
        return float(eigh(lap, subset_by_index=[0, 1], eigvals_only=True, driver="evr")[1])
    import scipy.sparse as sp
    from scipy.sparse.linalg import eigsh

    adj = sp.csr_matrix((weights.astype(float), indices, indptr), shape=(n, n))
    lap = sp.diags(np.asarray(adj.sum(axis=1)).ravel()) - adj

    vals = eigsh(lap.tocsc(), k=2, sigma=-1e-3, which="LM", return_eigenvectors=False)
    return float(np.sort(vals)[1])


def spectral_lower(n: int, lambda2: float) -> int:
    """Give the spectral lower bound of the bisection width.

    ``ceil(lambda_2 floor(N/2) ceil(N/2) / N)`` with a margin for rounding error in ``lambda_2``.

    Parameters
    ----------
    n : int
        Nodes.
    lambda2 : float
        Algebraic connectivity.

    Returns
    -------
    int
        The bound.
    """
    if n < 2:
        return 0
    value = max(0.0, lambda2) * (n // 2) * ((n + 1) // 2) / n
    return max(0, math.ceil(value - 1e-7 * max(1.0, value)))


def best_cut(topology: Topology) -> tuple[int, np.ndarray, str]:
    """Give the best balanced cut of METIS and the family's construction (cached).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    tuple
        ``(links cut, side, method)``.
    """
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "best_cut" not in cache:
        options = [(*c, name) for c, name in ((metis_bisection(topology), "metis"),
                                              (constructive_bisection(topology), f"{topology.family} construction"))
                   if c is not None]
        cache["best_cut"] = min(options, key=lambda c: c[0])
    return cache["best_cut"]


def bisection(topology: Topology, force: bool = False) -> Bisection | None:
    """Give the best known balanced cut and the spectral lower bound of the bisection width.

    Parameters
    ----------
    topology : Topology
        The network.
    force : bool, default False
        Use the higher forced size cap.

    Returns
    -------
    Bisection or None
        The cut and the interval, or None above the size cap.
    """
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
#: flow problems of at most this many (arcs x flows to compute) run augmenting paths in Python, larger
#: ones scipy's ``maximum_flow`` (no scipy to import for the small graphs ``topocast info`` shows at once)
SMALL_FLOW = 200_000


class FlowGraph:
    """A capacitated digraph ``(n, rows, cols, caps)`` and the max-flow between two of its nodes.

    Small problems (:data:`SMALL_FLOW`) run shortest augmenting paths (Edmonds-Karp) in Python on
    residual capacities; larger ones scipy's ``maximum_flow``.  ``limit`` stops a flow once it reaches
    that value (the callers only want the minimum over many pairs).
    """

    def __init__(self, n: int, rows: np.ndarray, cols: np.ndarray, caps: np.ndarray, flows: int):
        self.n, self.rows, self.cols, self.caps = n, rows, cols, caps
        self.python = len(rows) * max(1, flows) <= SMALL_FLOW
        self._matrix = None
        if self.python:
            # residual arcs: arc 2i is rows[i] -> cols[i] (capacity caps[i]), arc 2i+1 its reverse (capacity 0)
            self.head = np.column_stack([cols, rows]).ravel().tolist()
            self.capacity = np.column_stack([caps, np.zeros_like(caps)]).ravel().tolist()
            self.out: list[list[int]] = [[] for _ in range(n)]
            for arc, tail in enumerate(np.column_stack([rows, cols]).ravel().tolist()):
                self.out[tail].append(arc)

    def max_flow(self, s: int, t: int, limit: int | None = None) -> int:
        """Give the maximum ``s``-``t`` flow value.

        Parameters
        ----------
        s, t : int
            Source and sink.
        limit : int, optional
            Stop once the flow reaches this value.

        Returns
        -------
        int
            The flow value (at most ``limit`` when given).
        """
        if not self.python:
            flow = self._scipy_flow(s, t)
            return flow if limit is None else min(flow, limit)
        residual = list(self.capacity)
        head, out, flow = self.head, self.out, 0
        while limit is None or flow < limit:
            parent_arc = [-1] * self.n
            parent_arc[s] = -2
            queue = deque([s])
            while queue and parent_arc[t] == -1:
                u = queue.popleft()
                for arc in out[u]:
                    v = head[arc]
                    if residual[arc] > 0 and parent_arc[v] == -1:
                        parent_arc[v] = arc
                        queue.append(v)
            if parent_arc[t] == -1:
                break
            path, v = [], t
            while v != s:
                arc = parent_arc[v]
                path.append(arc)
                v = head[arc ^ 1]
            push = min(residual[arc] for arc in path)
            if limit is not None:
                push = min(push, limit - flow)
            for arc in path:
                residual[arc] -= push
                residual[arc ^ 1] += push
            flow += push
        return flow

    def _scipy_flow(self, s: int, t: int) -> int:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import maximum_flow

        if self._matrix is None:
            self._matrix = sp.csr_matrix((self.caps.astype(np.int32), (self.rows, self.cols)), shape=(self.n, self.n))
        return int(maximum_flow(self._matrix, s, t).flow_value)


def _flow_graph(topology: Topology, split: bool, flows: int) -> FlowGraph:
    """Capacitated digraph: links (multiplicity) or, with ``split``, node-split graph with unit node capacity."""
    n = topology.num_nodes
    indptr, indices, weights = weighted_csr(topology)
    src = np.repeat(np.arange(n), np.diff(indptr))
    if not split:
        return FlowGraph(n, src, indices, weights.astype(np.int64), flows)
    rows = np.concatenate([np.arange(n), src + n])          # v_in -> v_out, u_out -> v_in
    cols = np.concatenate([np.arange(n) + n, indices])
    caps = np.concatenate([np.ones(n, np.int64), np.full(len(src), n, np.int64)])
    return FlowGraph(2 * n, rows, cols, caps, flows)


def edge_connectivity(topology: Topology) -> int:
    """Give the fewest links whose removal disconnects the graph (parallel links counted each).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    int
        The edge connectivity (0 when not connected).
    """
    n = topology.num_nodes
    if n < 2:
        return 0
    if topology.vertex_transitive and not topology.has_parallel_links and is_connected(topology):
        return int(topology.port_degree[0])   # Mader 1971
    graph = _flow_graph(topology, split=False, flows=n - 1)
    best: int | None = None
    for w in range(1, n):
        best = graph.max_flow(0, w, best)
    return int(best) if best is not None else 0  # n >= 2: at least one flow


def node_connectivity(topology: Topology) -> int:
    """Give the fewest nodes whose removal disconnects the graph, by Even's scheme.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    int
        The node connectivity (``N - 1`` for a complete graph, 0 when not connected).
    """
    n = topology.num_nodes
    if n < 2 or not is_connected(topology):
        return 0
    indptr, indices, _ = weighted_csr(topology)
    deg = np.diff(indptr)
    if int(deg.min()) == n - 1:
        return n - 1
    v = int(np.argmin(deg))
    nbrs = indices[indptr[v]:indptr[v + 1]]
    far = np.setdiff1d(np.arange(n), np.append(nbrs, v))
    graph = _flow_graph(topology, split=True, flows=len(far) + len(nbrs) * (len(nbrs) - 1) // 2)
    best = int(deg[v])
    for w in far:
        best = graph.max_flow(v + n, int(w), best)
    for i, x in enumerate(nbrs):
        adjacent = indices[indptr[x]:indptr[x + 1]]
        for y in nbrs[i + 1:]:
            if not np.any(adjacent == y):
                best = graph.max_flow(int(x) + n, int(y), best)
    return best


# -- girth ----------------------------------------------------------------------------------------
def girth_from_distances(dist: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Give the shortest cycle found from each source of a simple graph, from BFS distances.

    Shortest cycle found from each source (0 when none) of a simple graph, from BFS distances.

    ``dist`` is ``(sources, N)``; ``rows -> cols`` are the arcs of the simple graph (each link both
    ways, no loops, no parallel copies).  From source ``s``: a link ``u - w`` with ``d(u) == d(w)``
    closes a cycle of length at most ``2 d(u) + 1``; a node ``w`` with two neighbours at ``d(w) - 1``
    one of length at most ``2 d(w)``.  Both are upper bounds on the girth, and from a node on a
    shortest cycle one of them equals it, so the minimum over one node per orbit is the girth.

    Parameters
    ----------
    dist : numpy.ndarray
        ``(sources, N)`` hop distances.
    rows, cols : numpy.ndarray
        Arcs of the simple graph.

    Returns
    -------
    numpy.ndarray
        Shortest cycle length per source (0 when none).
    """
    k, n = dist.shape
    du, dw = dist[:, rows], dist[:, cols]
    big = np.iinfo(np.int64).max
    odd = np.where((du == dw) & (du >= 0), 2 * du.astype(np.int64) + 1, big).min(axis=1, initial=big)
    below = (du >= 0) & (du == dw - 1)
    counts = np.bincount((np.arange(k)[:, None] * n + cols)[below], minlength=k * n).reshape(k, n)
    even = np.where(counts >= 2, 2 * dist.astype(np.int64), big).min(axis=1, initial=big)
    best = np.minimum(odd, even)
    return np.where(best == big, 0, best)


def girth(topology: Topology, sources: np.ndarray | None = None) -> int | None:
    """Give the length of the shortest cycle of the underlying simple graph.

    Parameters
    ----------
    topology : Topology
        The network.
    sources : numpy.ndarray, optional
        One node per orbit (default: :func:`topocast.topology.metrics.orbits`).

    Returns
    -------
    int or None
        The girth; None for a forest.
    """
    from .metrics import _blocks, orbits

    sources = orbits(topology)[0] if sources is None else np.asarray(sources)
    sources = np.asarray(sources, dtype=np.int64)
    if small(topology):
        indptr, cols, _ = weighted_csr(topology)
        rows = np.repeat(np.arange(topology.num_nodes), np.diff(indptr))
        found = np.concatenate([girth_from_distances(dist, rows, cols) for _, dist in _blocks(topology, sources)]
                               or [np.zeros(0, dtype=np.int64)])
    else:
        from .kernels import girth as girth_kernel

        found = girth_kernel(topology.indptr, topology.indices, sources)
    found = found[found > 0]
    return int(found.min()) if len(found) else None


# -- vertex-transitivity --------------------------------------------------------------------------
def vertex_transitivity(topology: Topology) -> tuple[str, str]:
    """Tell whether the network is vertex-transitive, as far as cheap tests can.

    Declared by the builder, disproved by degrees or distance distributions, or left open.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    tuple of str
        ``("yes" | "no" | "unknown", reason)``.
    """
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
    """Gather the properties ``topocast info`` prints, each skipped (None, with a note) above its size cap.

    Parameters
    ----------
    topology : Topology
        The network.
    force : bool, default False
        Use the higher forced size caps.

    Returns
    -------
    dict
        Property name -> value.
    """
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
