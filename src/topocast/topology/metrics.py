"""Distance metrics: BFS, eccentricity, exact diameter, distance distribution.

BFS runs in numba over the CSR arrays.  All-sources work runs sources in
parallel; when a builder declares the graph vertex-transitive one source
stands for all (``vertex_transitive`` is checked by tests on small sizes).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import TopocastError
from .core import Topology

UNREACHED = -1


@nb.njit(cache=True)
def bfs_into(indptr, indices, source, dist, queue):
    """BFS from ``source`` into ``dist`` (-1 unreached) and ``queue`` (visit order); returns the nodes reached."""
    dist[:] = UNREACHED
    dist[source] = 0
    queue[0] = source
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        du = dist[u] + 1
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            if dist[v] == UNREACHED:
                dist[v] = du
                queue[tail] = v
                tail += 1
    return tail


@nb.njit(cache=True)
def _bfs(indptr, indices, source):
    n = len(indptr) - 1
    dist = np.empty(n, dtype=np.int32)
    queue = np.empty(n, dtype=np.int64)
    bfs_into(indptr, indices, source, dist, queue)
    return dist


@nb.njit(cache=True, parallel=True)
def _many_sources(indptr, indices, sources, hist_len):
    """Eccentricity and distance histogram (capped at hist_len) per source."""
    n = len(indptr) - 1
    k = len(sources)
    ecc = np.empty(k, dtype=np.int64)
    hist = np.zeros((k, hist_len), dtype=np.int64)
    for i in nb.prange(k):
        dist = np.empty(n, dtype=np.int32)
        queue = np.empty(n, dtype=np.int64)
        reached = bfs_into(indptr, indices, sources[i], dist, queue)
        if reached < n:
            ecc[i] = -1
            continue
        ecc[i] = dist[queue[n - 1]]
        for j in range(n):
            d = dist[j]
            if d < hist_len:
                hist[i, d] += 1
    return ecc, hist


def bfs_distances(topology: Topology, source: int) -> np.ndarray:
    """Hop distances from ``source`` to every node (-1 where unreachable)."""
    if not 0 <= source < topology.num_nodes:
        raise TopocastError(f"source: must be in 0..{topology.num_nodes - 1}, got {source}")
    return _bfs(topology.indptr, topology.indices, np.int64(source))


def is_connected(topology: Topology) -> bool:
    """Whether every node reaches every other: one BFS from node 0; cached per topology.

    >>> import networkx as nx
    >>> is_connected(Topology.from_networkx(nx.Graph([(0, 1), (2, 3)])))
    False
    """
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "connected" not in cache:
        cache["connected"] = bool(np.all(bfs_distances(topology, 0) >= 0))
    return cache["connected"]


def _profile(topology: Topology, sources: np.ndarray):
    probe = bfs_distances(topology, int(sources[0]))
    if np.any(probe < 0):
        raise TopocastError(f"{topology.spec}: the network is not connected")
    # any eccentricity is at most twice any other, so 2*ecc(s0)+1 bins suffice
    hist_len = 2 * int(probe.max()) + 2
    return _many_sources(topology.indptr, topology.indices, np.asarray(sources, dtype=np.int64), hist_len)


def eccentricity(topology: Topology, sources=None) -> np.ndarray:
    """Eccentricity of each node in ``sources`` (default: all nodes)."""
    sources = np.arange(topology.num_nodes) if sources is None else np.atleast_1d(sources)
    ecc, _ = _profile(topology, sources)
    return ecc


def orbits(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """``(representatives, sizes)`` of node orbits the builder knows of.

    One orbit when the builder declares the graph vertex-transitive; the
    family's ``orbits`` hook when it has one; otherwise every node alone.
    """
    n = topology.num_nodes
    if topology.vertex_transitive:
        return np.array([0]), np.array([n])
    from .. import registry

    family = registry._REG.families.get(topology.family)
    if family is not None and family.orbits is not None:
        reps, sizes = np.unique(np.asarray(family.orbits(topology)), return_counts=True)
        return reps, sizes
    return np.arange(n), np.ones(n, dtype=np.int64)


def distance_distribution(topology: Topology, exact_all_sources: bool = False) -> np.ndarray:
    """``counts[d]`` = ordered node pairs at distance ``d`` (``counts[0] = N``).

    One BFS per known orbit (:func:`orbits`: one in all for a vertex-transitive
    graph), unless ``exact_all_sources``.
    """
    n = topology.num_nodes
    reps, sizes = (np.arange(n), np.ones(n, dtype=np.int64)) if exact_all_sources else orbits(topology)
    _, hist = _profile(topology, reps)
    counts = (hist * sizes[:, None]).sum(axis=0)
    return np.trim_zeros(counts, "b")


def diameter(topology: Topology, exact_all_sources: bool = False) -> int:
    """Exact diameter (one BFS when vertex-transitive, else all sources); cached per topology."""
    key = ("diameter", exact_all_sources)
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if key not in cache:
        cache[key] = len(distance_distribution(topology, exact_all_sources)) - 1
    return cache[key]


def average_distance(topology: Topology, counts: np.ndarray | None = None) -> float:
    """Mean distance over ordered pairs of distinct nodes."""
    counts = distance_distribution(topology) if counts is None else counts
    n = topology.num_nodes
    if n < 2:
        return 0.0
    return float(np.dot(np.arange(len(counts)), counts) / (n * (n - 1)))


def summary(topology: Topology, distances: bool = True, properties: bool | None = None) -> dict:
    """The figures ``topocast info`` prints.

    ``properties``: bisection width, connectivity, girth, vertex-transitivity
    (:mod:`topocast.topology.properties`): ``None`` each below its default size
    cap, ``True`` below the higher forced caps, ``False`` none.
    """
    port = topology.port_degree
    distinct = topology.distinct_degree
    out = {
        "spec": topology.spec,
        "family": topology.family,
        "params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in topology.params.items()},
        "nodes": topology.num_nodes,
        "edges": topology.num_edges,
        "degree": {
            "min": int(port.min()) if len(port) else 0,
            "max": int(port.max()) if len(port) else 0,
            "regular": bool(len(port) == 0 or port.min() == port.max()),
        },
        "distinct_neighbours": {"min": int(distinct.min()), "max": int(distinct.max())},
        "vertex_transitive": topology.vertex_transitive,
    }
    if distances:
        counts = distance_distribution(topology)
        out["diameter"] = len(counts) - 1
        out["average_distance"] = average_distance(topology, counts)
        out["distance_distribution"] = [int(c) for c in counts]
    if properties is not False:
        from .properties import properties as graph_properties

        out.update(graph_properties(topology, force=bool(properties)))
    out.update({k: v for k, v in topology.meta.items() if k != "spec" and _jsonable(v)})
    return out


def _jsonable(value) -> bool:
    return isinstance(value, (int, float, str, bool, list, dict, type(None)))
