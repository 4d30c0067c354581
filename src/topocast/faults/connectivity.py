"""What a degraded network still is: its healthy components, the pairs still connected, its distances.

Every figure counts healthy nodes only (a failed router is no end point):
``components`` of the surviving graph among them, the ``largest_component``,
``connected_pairs`` (the fraction of ordered pairs of distinct healthy nodes
joined by a path), and over the connected pairs the ``diameter``, the
``average_distance`` and the distance distribution.  An intact connected
network gives the figures of :func:`topocast.topology.metrics.summary`.

>>> import topocast as tc
>>> from topocast.faults import degrade
>>> t = degrade(tc.build("ring:6"), "links=0-1;3-4")
>>> c = connectivity(t)
>>> c["components"], c["largest_component"], round(c["connected_pairs"], 3)
(2, 3, 0.4)
>>> distances(t)["diameter"], distances(t)["distance_distribution"]
(2, [6, 8, 4])
"""

from __future__ import annotations

import numpy as np

from ..topology.core import Topology

#: networks of at most this many nodes get their distances from one all-pairs matrix (4 N^2 bytes)
ALL_PAIRS_NODES = 4096


def healthy(topology: Topology) -> np.ndarray:
    """``True`` for every node not marked failed."""
    mask = np.ones(topology.num_nodes, dtype=bool)
    mask[topology.failed_nodes] = False
    return mask


def components(topology: Topology) -> np.ndarray:
    """Component of every node in the surviving graph, numbered in order of their lowest node (cached).

    A failed router, having no links, is a component of its own.
    """
    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "components" not in cache:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        n = topology.num_nodes
        graph = csr_matrix((np.ones(topology.num_arcs, np.int8), topology.indices, topology.indptr), shape=(n, n))
        _, labels = connected_components(graph, directed=False)
        first = np.full(int(labels.max()) + 1 if n else 0, n, dtype=np.int64)
        np.minimum.at(first, labels, np.arange(n))
        rank = np.empty_like(first)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        labels = rank[labels].astype(np.int64)
        labels.setflags(write=False)
        cache["components"] = labels
    return cache["components"]


def induced(topology: Topology, nodes: np.ndarray, spec: str | None = None) -> Topology:
    """The subgraph of ``topology`` on ``nodes`` (sorted), numbered ``0..len(nodes)-1`` in their order, as a
    plain graph (family ``graph``: what the family knows of the whole network, its symmetry, its routing, does
    not hold for a piece of it); arc labels kept; ``spec`` what it calls itself (default: a component of the
    network).

    >>> import topocast as tc
    >>> t = induced(tc.build("ring:6"), np.array([0, 1, 2]))
    >>> t.num_nodes, t.num_edges
    (3, 2)
    """
    local = np.full(topology.num_nodes, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    src, dst = local[topology.arc_sources], local[topology.indices]
    keep = (src >= 0) & (dst >= 0)
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(np.bincount(src[keep], minlength=len(nodes)), out=indptr[1:])
    meta = {"spec": spec or f"{topology.spec} (a component of {len(nodes)} healthy nodes)"}
    return Topology("graph", {}, indptr, dst[keep], topology.arc_labels[keep], topology.label_names,
                    vertex_transitive=False, meta=meta)


def reduction_parts(topology: Topology) -> np.ndarray:
    """Per node the part a reduction's sum is taken in: its component among the healthy nodes, -1 for a failed
    router (:attr:`topocast.plans.schedule.Schedule.part`).

    >>> import topocast as tc
    >>> from topocast.faults import degrade
    >>> reduction_parts(degrade(tc.build("ring:6"), "links=0-1;3-4")).tolist()
    [0, 1, 1, 1, 0, 0]
    """
    part = components(topology).copy()
    part[~healthy(topology)] = -1
    return part


def reachable(topology: Topology, source: int) -> np.ndarray:
    """Healthy nodes connected to ``source`` (``source`` included when healthy; none when it failed)."""
    comp = components(topology)
    mask = healthy(topology)
    if not mask[source]:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero((comp == comp[source]) & mask)


def partners(topology: Topology) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every healthy node's component as a slice of one array: ``(members, start, size, pos)``.

    ``members`` lists the healthy nodes by component, then by index; node ``v``'s component is
    ``members[start[v]:start[v] + size[v]]`` and ``v`` is its entry ``pos[v]``.  A failed router has
    ``size`` 0.  (Unicast traffic on a degraded network draws destinations and intermediates from it.)

    >>> import topocast as tc
    >>> from topocast.faults import degrade
    >>> members, start, size, pos = partners(degrade(tc.build("ring:6"), "links=0-1;3-4"))
    >>> members.tolist(), size.tolist(), pos.tolist()
    ([0, 4, 5, 1, 2, 3], [3, 3, 3, 3, 3, 3], [0, 0, 1, 2, 1, 2])
    """
    mask = healthy(topology)
    comp = components(topology)
    nodes = np.flatnonzero(mask)
    order = nodes[np.argsort(comp[nodes], kind="stable")]
    sizes = np.bincount(comp[order], minlength=int(comp.max()) + 1 if len(comp) else 0)
    first = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=first[1:])
    n = topology.num_nodes
    start = np.zeros(n, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    pos = np.zeros(n, dtype=np.int64)
    start[order] = first[comp[order]]
    size[order] = sizes[comp[order]]
    pos[order] = np.arange(len(order), dtype=np.int64) - start[order]
    return order.astype(np.int64), start, size, pos


def connectivity(topology: Topology) -> dict:
    """Healthy nodes, failed routers and links, components, largest component and connected pairs.

    Parameters
    ----------
    topology : Topology
        A network, degraded or not.

    Returns
    -------
    dict
        ``healthy_nodes``, ``failed_routers``, ``failed_links``, ``components`` (among healthy nodes),
        ``largest_component``, ``connected`` (one component holds every healthy node),
        ``connected_pairs`` (fraction of ordered pairs of distinct healthy nodes with a path).
    """
    mask = healthy(topology)
    comp = components(topology)[mask]
    sizes = np.bincount(comp)
    sizes = sizes[sizes > 0].astype(np.float64)
    h = float(mask.sum())
    pairs = float((sizes * (sizes - 1)).sum()) / (h * (h - 1)) if h > 1 else 1.0
    return {"healthy_nodes": int(h), "failed_routers": int(topology.meta.get("failed_routers", 0)),
            "failed_links": int(topology.meta.get("failed_links", 0)), "components": int(len(sizes)),
            "largest_component": int(sizes.max()) if len(sizes) else 0, "connected": bool(len(sizes) <= 1),
            "connected_pairs": pairs}


def distance_counts(topology: Topology, sources: np.ndarray | None = None) -> np.ndarray:
    """``counts[d]``: ordered pairs (source among ``sources``, default every healthy node; target healthy)
    at distance ``d`` over the connected pairs (``counts[0]`` the sources themselves).

    Every source at once up to :data:`ALL_PAIRS_NODES` nodes (:func:`topocast.topology.metrics.all_distances`),
    else one breadth-first search per source (:func:`topocast.topology.metrics.bfs_distances`).
    """
    from ..topology.metrics import all_distances, bfs_distances

    mask = healthy(topology)
    if sources is None and topology.num_nodes <= ALL_PAIRS_NODES:
        dist = all_distances(topology)[np.ix_(mask, mask)]
        return np.bincount(dist[dist >= 0].ravel()).astype(np.int64)
    sources = np.flatnonzero(mask) if sources is None else np.asarray(sources, dtype=np.int64)
    counts = np.zeros(1, dtype=np.int64)
    for s in sources:
        dist = bfs_distances(topology, int(s))
        dist = dist[(dist >= 0) & mask]
        found = np.bincount(dist)
        if len(found) > len(counts):
            counts = np.pad(counts, (0, len(found) - len(counts)))
        counts[:len(found)] += found
    return counts


def distances(topology: Topology) -> dict:
    """Diameter, average distance and distance distribution over the connected pairs of healthy nodes.

    Parameters
    ----------
    topology : Topology
        A network, degraded or not.

    Returns
    -------
    dict
        ``diameter`` (the largest finite distance), ``average_distance`` (mean over connected ordered pairs
        of distinct healthy nodes; 0 when there are none) and ``distance_distribution``.
    """
    counts = np.trim_zeros(distance_counts(topology), "b")
    pairs = int(counts[1:].sum())
    mean = float(np.dot(np.arange(len(counts)), counts) / pairs) if pairs else 0.0
    return {"diameter": len(counts) - 1, "average_distance": mean,
            "distance_distribution": [int(c) for c in counts]}


__all__ = ["components", "connectivity", "distance_counts", "distances", "healthy", "partners", "reachable"]
