"""Distance metrics: BFS, eccentricity, exact diameter, distance distribution.

Two implementations of breadth-first search, split by size, one for each:
graphs of at most :data:`SMALL_NODES` nodes run a level-synchronous BFS in
numpy, every source of a batch at once (no compiler to load, so ``topocast
info`` on them starts in a fraction of a second); larger graphs run the
compiled kernels of :mod:`topocast.topology.kernels`: a direction-optimising
BFS from one source, a bit-parallel BFS from many (64 a pass), both on every
core for large graphs.  ``tests/test_metrics.py`` and
``tests/test_bfs_kernels.py`` check them against networkx and scipy.  When a
builder declares the graph vertex-transitive one source stands for all
(``vertex_transitive`` is checked by tests on small sizes).
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from .core import Topology

UNREACHED = -1

#: graphs of at most this many nodes run their BFS in numpy, larger ones in the compiled kernels
SMALL_NODES = 1024
#: sources x max(nodes, arcs) per numpy batch (bounds the memory of a batch's arrays)
_BLOCK = 1 << 22


def small(topology: Topology) -> bool:
    """Tell whether a network runs its distance work in numpy (at most :data:`SMALL_NODES` nodes).

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    bool
        True for a small network.
    """
    return topology.num_nodes <= SMALL_NODES


def __getattr__(name: str):
    """``bfs_into`` (the compiled BFS other kernels call) from :mod:`topocast.topology.kernels`, on first use."""
    if name == "bfs_into":
        from .kernels import bfs_into

        return bfs_into
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def warm_kernels() -> None:
    """Load (or compile) the compiled BFS kernels now.

    Load (or compile) the compiled BFS kernels, serial and parallel builds, now: e.g. before timing a
    large graph.
    """
    from . import kernels

    indptr = np.array([0, 1, 2], dtype=np.int64)
    for indices in (np.array([1, 0], dtype=np.int64), np.array([1, 0], dtype=np.int32)):
        for chunks in (1, 2):
            kernels.distances(indptr, indices, 0, chunks=chunks)
            kernels.multi_source(indptr, indices, [0], hist_len=2, chunks=chunks)
            kernels.multi_source(indptr, indices, [0], chunks=chunks)


def csr(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Give the CSR arrays for the compiled searches, the indices as int32 where they fit.

    See :func:`topocast.topology.kernels.compact_indices`; made once per topology.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    indptr, indices : numpy.ndarray
        The row pointers and the (compacted) arc heads.
    """
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "indices32" not in cache:
        from .kernels import compact_indices

        cache["indices32"] = compact_indices(topology.indices, topology.num_nodes)
    return topology.indptr, cache["indices32"]


def distances_block(indptr: np.ndarray, indices: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Give hop distances from several sources with the numpy BFS of small graphs.

    Level-synchronous over every source at once: each level gathers the arcs of the whole frontier from the
    CSR arrays, keeps the unreached heads (each once) and labels them.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        CSR adjacency.
    sources : numpy.ndarray
        Source nodes.

    Returns
    -------
    numpy.ndarray
        int32 ``(len(sources), N)``, -1 where unreached.
    """
    n = len(indptr) - 1
    sources = np.asarray(sources, dtype=np.int64)
    dist = np.full(len(sources) * n, UNREACHED, dtype=np.int32)
    if n == 0 or len(sources) == 0:
        return dist.reshape(len(sources), n)
    front = np.arange(len(sources), dtype=np.int64) * n + sources
    dist[front] = 0
    degree = np.diff(indptr)
    slot = np.empty(len(dist), dtype=np.int64)
    level = 0
    while len(front):
        level += 1
        node = front % n
        count = degree[node]
        total = int(count.sum())
        if total == 0:
            break
        ends = np.cumsum(count)
        arcs = np.repeat(indptr[node] - (ends - count), count) + np.arange(total, dtype=np.int64)
        heads = indices[arcs] + np.repeat(front - node, count)
        heads = heads[dist[heads] == UNREACHED]
        position = np.arange(len(heads), dtype=np.int64)
        slot[heads] = position
        heads = heads[slot[heads] == position]  # each new node once
        dist[heads] = level
        front = heads
    return dist.reshape(len(sources), n)


def _blocks(topology: Topology, sources: np.ndarray):
    """``(first, distances)`` for batches of ``sources`` of at most :data:`_BLOCK` sources x max(nodes, arcs)."""
    step = max(1, _BLOCK // max(1, topology.num_nodes, topology.num_arcs))
    for first in range(0, len(sources), step):
        yield first, distances_block(topology.indptr, topology.indices, sources[first:first + step])


def bfs_distances(topology: Topology, source: int) -> np.ndarray:
    """Give the hop distances from one node to every node.

    Parameters
    ----------
    topology : Topology
        The network.
    source : int
        Start node.

    Returns
    -------
    numpy.ndarray
        int32 distances, -1 where unreachable.

    Raises
    ------
    TopocastError
        If ``source`` is not a node.
    """
    if not 0 <= source < topology.num_nodes:
        raise TopocastError(f"source: must be in 0..{topology.num_nodes - 1}, got {source}")
    if small(topology):
        return distances_block(topology.indptr, topology.indices, np.array([source], dtype=np.int64))[0]
    from .kernels import distances

    return distances(*csr(topology), source)


def all_distances(topology: Topology) -> np.ndarray:
    """Give the hop distance between every pair of nodes: the one all-pairs distance matrix.

    Hop distance between every pair of nodes: the one all-pairs distance matrix.

    One BFS per node, sources in parallel, in the compiled kernel
    (:func:`topocast.topology.kernels.distance_rows`) at every size: unlike
    one BFS, the ``N`` searches of all pairs run several times faster
    compiled than in numpy blocks even on small graphs.  ``N x N`` int32 entries: for
    the small networks of the generic all-gathers and synthesis.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    numpy.ndarray
        ``D[s, v]`` (int32, ``N x N``), -1 where ``v`` cannot be reached from ``s``.

    Examples
    --------
    >>> from .classic import ring
    >>> all_distances(ring(4)).tolist()
    [[0, 1, 2, 1], [1, 0, 1, 2], [2, 1, 0, 1], [1, 2, 1, 0]]
    """
    from .kernels import distance_rows

    return distance_rows(*csr(topology), np.arange(topology.num_nodes, dtype=np.int64))


def is_connected(topology: Topology) -> bool:
    """Tell whether every node reaches every other: one BFS from node 0, cached per topology.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    bool
        True when connected.

    Examples
    --------
    >>> import networkx as nx
    >>> is_connected(Topology.from_networkx(nx.Graph([(0, 1), (2, 3)])))
    False
    """
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "connected" not in cache:
        cache["connected"] = bool(np.all(bfs_distances(topology, 0) >= 0))
    return cache["connected"]


def _profile(topology: Topology, sources: np.ndarray):
    """Give the eccentricity and distance histogram of each source.

    ``(ecc, hist)`` of each source: eccentricity and distance histogram (``hist[i, d]``, nodes at distance
    ``d``); raises if the network is not connected.
    """
    sources = np.asarray(sources, dtype=np.int64)
    probe = bfs_distances(topology, int(sources[0]))
    if np.any(probe < 0):
        raise TopocastError(f"{topology.spec}: the network is not connected")
    # any eccentricity is at most twice any other, so 2*ecc(s0)+1 bins suffice
    hist_len = 2 * int(probe.max()) + 2
    if len(sources) == 1:  # the probe is the whole answer
        return np.array([probe.max()], dtype=np.int64), np.bincount(probe, minlength=hist_len)[None, :hist_len]
    if not small(topology):
        from .kernels import multi_source

        return multi_source(*csr(topology), sources, hist_len)[:2]
    ecc = np.empty(len(sources), dtype=np.int64)
    hist = np.zeros((len(sources), hist_len), dtype=np.int64)
    for first, dist in _blocks(topology, sources):
        rows = np.arange(len(dist))
        ecc[first:first + len(dist)] = np.where((dist == UNREACHED).any(axis=1), -1, dist.max(axis=1))
        keep = (dist >= 0) & (dist < hist_len)
        cells = (rows[:, None] * hist_len + dist)[keep]
        hist[first:first + len(dist)] = np.bincount(cells, minlength=len(dist) * hist_len).reshape(-1, hist_len)
    return ecc, hist


def eccentricity(topology: Topology, sources=None) -> np.ndarray:
    """Give the eccentricity of some nodes (default: all).

    Above :data:`SMALL_NODES` nodes: the bit-parallel BFS, 64 sources a pass, no histogram.

    Parameters
    ----------
    topology : Topology
        The network, connected.
    sources : array_like of int, optional
        The nodes; None: every node.

    Returns
    -------
    numpy.ndarray
        Eccentricity of each.

    Raises
    ------
    TopocastError
        If the network is not connected.
    """
    sources = np.arange(topology.num_nodes) if sources is None else np.atleast_1d(sources)
    if small(topology) or len(sources) == 1:
        ecc, _ = _profile(topology, sources)
        return ecc
    from .kernels import multi_source

    ecc = multi_source(*csr(topology), np.asarray(sources, dtype=np.int64))[0]
    if np.any(ecc < 0):
        raise TopocastError(f"{topology.spec}: the network is not connected")
    return ecc


def orbits(topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Give the node orbits the builder knows of.

    One orbit when the builder declares the graph vertex-transitive; the family's ``orbits`` hook when it
    has one (not on a network with faults, whose symmetry they break); otherwise every node alone.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    representatives, sizes : numpy.ndarray
        One node of every orbit and the orbit's size.
    """
    n = topology.num_nodes
    if topology.vertex_transitive:
        return np.array([0]), np.array([n])
    from .. import registry

    family = registry._REG.families.get(topology.family)
    if family is not None and family.orbits is not None and topology.faults is None:
        reps, sizes = np.unique(np.asarray(family.orbits(topology)), return_counts=True)
        return reps, sizes
    return np.arange(n), np.ones(n, dtype=np.int64)


def distance_distribution(topology: Topology, exact_all_sources: bool = False) -> np.ndarray:
    """Count the ordered node pairs at every distance (``counts[0] = N``).

    One BFS per known orbit (:func:`orbits`: one in all for a vertex-transitive graph), unless
    ``exact_all_sources``.

    Parameters
    ----------
    topology : Topology
        The network.
    exact_all_sources : bool, default False
        Search from every node, ignoring the orbits.

    Returns
    -------
    numpy.ndarray
        ``counts[d]``, trailing zeros trimmed.
    """
    n = topology.num_nodes
    reps, sizes = (np.arange(n), np.ones(n, dtype=np.int64)) if exact_all_sources else orbits(topology)
    _, hist = _profile(topology, reps)
    counts = (hist * sizes[:, None]).sum(axis=0)
    return np.trim_zeros(counts, "b")


def diameter(topology: Topology, exact_all_sources: bool = False) -> int:
    """Give the exact diameter (one BFS when vertex-transitive, else one per orbit); cached per topology.

    Parameters
    ----------
    topology : Topology
        The network.
    exact_all_sources : bool, default False
        Search from every node, ignoring the orbits.

    Returns
    -------
    int
        The diameter (on a network that is not connected: the largest finite distance).
    """
    key = ("diameter", exact_all_sources)
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if key not in cache:
        cache[key] = len(distance_distribution(topology, exact_all_sources)) - 1
    return cache[key]


def average_distance(topology: Topology, counts: np.ndarray | None = None) -> float:
    """Give the mean distance over ordered pairs of distinct nodes.

    Parameters
    ----------
    topology : Topology
        The network.
    counts : numpy.ndarray, optional
        Its distance distribution, if already known.

    Returns
    -------
    float
        The mean (0 for a single node).
    """
    counts = distance_distribution(topology) if counts is None else counts
    n = topology.num_nodes
    if n < 2:
        return 0.0
    return float(np.dot(np.arange(len(counts)), counts) / (n * (n - 1)))


def summary(topology: Topology, distances: bool = True, properties: bool | None = None) -> dict:
    """Gather the figures ``topocast info`` prints.

    Parameters
    ----------
    topology : Topology
        The network.
    distances : bool, default True
        Include the exact distance figures.
    properties : bool, optional
        Bisection width, connectivity, girth, vertex-transitivity (:mod:`topocast.topology.properties`):
        None each below its default size cap, True below the higher forced caps, False none.

    Returns
    -------
    dict
        Figure name -> value.
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
