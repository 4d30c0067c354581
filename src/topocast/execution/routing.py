"""Unicast routing front end: the family's own router, or a BFS shortest path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import registry
from ..errors import TopocastError
from ..infra.validate import integer
from ..topology.core import Topology
from ..topology.metrics import bfs_distances


def shortest_path(topology: Topology, source: int, target: int) -> list[int]:
    """One shortest path (BFS from the target, then greedy descent)."""
    dist = bfs_distances(topology, target)
    if dist[source] < 0:
        raise TopocastError(f"route: node {target} cannot be reached from node {source} (the network is not connected)")
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


def resolve_node(topology: Topology, value: Any, option: str) -> int:
    """The node index named by ``value``: an index (int or bare integer text) or the family's label
    (a tuple, or text such as ``"1,2"``); errors name ``option`` (``--from``, ``source`` ...)."""
    n = topology.num_nodes
    example = ",".join(map(str, topology.label(min(1, n - 1))))
    rule = f"a node index in 0..{n - 1} or a label such as '{example}'"
    if isinstance(value, str):
        text = value.strip()
        if not text:
            raise TopocastError(f"{option}: must be {rule}, got an empty string")
        if text.lstrip("+-").isdigit():
            return _index(int(text), option, n, rule)
        target: str | tuple[Any, ...] = text
    elif isinstance(value, (tuple, list)):
        target = tuple(value)
    else:
        return _index(value, option, n, rule)
    try:
        index = topology.index(target)
    except TopocastError as exc:
        raise TopocastError(f"{option}: {str(exc).removeprefix('node: ')} (expected {rule})") from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError):
        raise TopocastError(f"{option}: '{value}' is not a node of {topology.spec} (expected {rule})") from None
    return integer(index, option, minimum=0, maximum=n - 1)


def _index(value: Any, option: str, n: int, rule: str) -> int:
    """``value`` as a node index in 0..n-1, or an error naming ``option``."""
    try:
        return integer(value, option, minimum=0, maximum=n - 1)
    except TopocastError:
        raise TopocastError(f"{option}: must be {rule}, got {value!r}") from None


def route(spec: str | Topology, source: str | int, target: str | int, max_memory: float | str | None = None,
          options: tuple[str, str] = ("source", "target"), faults: Any = None) -> dict[str, Any]:
    """Route from ``source`` to ``target`` (indices, label tuples or label text); returns a JSON-able dict.

    ``options`` names the two end points in error messages (the CLI passes ``("--from", "--to")``).
    A family without a routing function of its own is routed along a BFS shortest path, and ``note``
    says so.  On a degraded network (``faults``, or a degraded ``spec``) the family's route is kept when
    every hop of it survives, else the packet takes a shortest path on the surviving graph (``note`` says
    so); a failed end point or one cut off from the other is refused.
    """
    from ..faults.degrade import degrade
    from ..infra.memory import resolve_limit
    from ..spec import build

    max_memory = resolve_limit(max_memory)
    topology = degrade(spec, faults) if isinstance(spec, Topology) else build(spec, max_memory=max_memory,
                                                                             faults=faults)
    if not (isinstance(options, tuple) and len(options) == 2 and all(isinstance(o, str) for o in options)):
        raise TopocastError(f"options: must be a pair of names such as ('source', 'target'), got {options!r}")
    s = resolve_node(topology, source, options[0])
    t = resolve_node(topology, target, options[1])
    family = _family(topology.family)
    router = family.router if family is not None else None
    note = None if router else f"family {topology.family} has no routing function of its own: BFS shortest path"
    if topology.faults is not None:
        for name, node in zip(options, (s, t), strict=True):
            if node in topology.failed_nodes:
                raise TopocastError(f"{name}: node {node} is a failed router of {topology.spec} ({topology.faults})")
    # the family's router knows the intact network's structure: its route there, kept when it survives
    path = router(topology.intact, s, t) if router else None
    if family is not None and path is not None and not _survives(topology, path):
        router, path = None, None
        note = f"the {family.name} route crosses a failed link: shortest path on the surviving graph"
    path = [int(v) for v in (path if path is not None else shortest_path(topology, s, t))]
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
        "note": note,
    }


def _survives(topology: Topology, path: Sequence[int]) -> bool:
    """Whether every hop of ``path`` is a link of the degraded ``topology``."""
    return all(topology.has_edge(int(u), int(v)) for u, v in zip(path, path[1:], strict=False))


def _family(name: str) -> registry.Family | None:
    """The registered family ``name``, or None (a topology made from a networkx graph)."""
    try:
        return registry.family(name)
    except TopocastError:
        return None
