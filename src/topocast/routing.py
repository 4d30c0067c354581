"""Unicast routing front end: the family's own router, or a BFS shortest path."""

from __future__ import annotations

import numpy as np

from . import registry
from .errors import TopocastError
from .topology.core import Topology
from .topology.metrics import bfs_distances


def shortest_path(topology: Topology, source: int, target: int) -> list[int]:
    """One shortest path (BFS from the target, then greedy descent)."""
    dist = bfs_distances(topology, target)
    if dist[source] < 0:
        raise TopocastError(f"route: node {target} is unreachable from node {source}")
    path = [source]
    node = source
    while node != target:
        nbrs = topology.neighbors(node)
        node = int(nbrs[np.argmin(np.where(dist[nbrs] >= 0, dist[nbrs], np.iinfo(np.int32).max))])
        path.append(node)
    return path


def check_path(topology: Topology, path: list[int]) -> None:
    """Raise unless every hop of ``path`` is a link."""
    for u, v in zip(path, path[1:], strict=False):
        if not topology.has_edge(u, v):
            raise TopocastError(f"route: hop {topology.label(u)} -> {topology.label(v)} is not a link")


def route(spec: str | Topology, source: str | int, target: str | int, max_memory: float | None = None) -> dict:
    """Route from ``source`` to ``target`` (labels as text or indices); returns a JSON-able dict."""
    from .spec import build

    topology = spec if isinstance(spec, Topology) else build(spec, max_memory=max_memory)
    s = source if isinstance(source, int) else topology.index(source)
    t = target if isinstance(target, int) else topology.index(target)
    family = registry.family(topology.family)
    router = family.router
    path = [int(v) for v in (router(topology, s, t) if router else shortest_path(topology, s, t))]
    if path[0] != s or path[-1] != t:
        raise TopocastError("route: the router returned a path with the wrong end points")
    check_path(topology, path)
    shortest = int(bfs_distances(topology, t)[s])
    return {
        "spec": topology.spec,
        "router": getattr(router, "__name__", "shortest_path") if router else "shortest_path",
        "from": list(topology.label(s)),
        "to": list(topology.label(t)),
        "path": [list(topology.label(v)) for v in path],
        "path_indices": path,
        "length": len(path) - 1,
        "shortest": shortest,
        "stretch": (len(path) - 1) / shortest if shortest else 1.0,
    }
