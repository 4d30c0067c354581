"""Where the view draws each node: a layout that suits the family, and the clusters of a network too large to draw.

* grids (mesh, torus, hypercube, HyperX and other mixed-radix coordinates named ``x0, x1 ...`` or ``b0 ...``):
  even coordinates across, odd ones down, each further pair in blocks;
* groups (Dragonfly, Dragonfly+, Galaxyfly, Galaxy, HDN, Slim Fly): groups on a large circle, their nodes on a
  small one;
* levels (fat trees, generalised fat trees, butterflies, Benes, Clos, every multistage network): one row per
  level or stage, nodes in order along it;
* ``graph:`` files: force-directed (networkx's spring layout, seeded) up to ``FORCE_NODES`` nodes, spectral
  above;
* anything else: a circle.

A network with more than ``MAX_NODES`` nodes or ``MAX_LINKS`` links is drawn aggregated: nodes merge into
clusters (groups, blocks of grid tiles, blocks of a level, cells of the plane) and links into the links
between clusters, with the same interactions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: drawn one by one up to these sizes (undirected links); above, aggregated into clusters
MAX_NODES = 10_000
MAX_LINKS = 20_000
#: clusters of an aggregated view (about)
CLUSTERS = 400
FORCE_NODES = 1_500

GROUP_FIELDS = ("group", "cluster", "subgraph")
LEVEL_FIELDS = ("level", "stage")


@dataclass
class Layout:
    """Positions in ``[0, 1]^2`` (``x``, ``y``), the kind of layout, and a group per node (or None)."""

    x: np.ndarray
    y: np.ndarray
    kind: str
    group: np.ndarray | None = None


def _coordinates(topology) -> np.ndarray | None:
    codec = topology.codec
    if hasattr(codec, "decode_array"):
        return np.asarray(codec.decode_array(np.arange(topology.num_nodes)), dtype=np.int64).reshape(
            topology.num_nodes, -1)
    try:
        return np.array([codec.decode(v) for v in range(topology.num_nodes)], dtype=np.int64)
    except (TypeError, ValueError):
        return None


def _normalise(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    span = max(float(np.ptp(x)) if len(x) else 0.0, float(np.ptp(y)) if len(y) else 0.0) or 1.0
    return (x - x.min()) / span if len(x) else x, (y - y.min()) / span if len(y) else y


def grid(coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Even coordinates across, odd ones down; each further pair of dimensions in blocks one apart."""
    x = np.zeros(len(coords))
    y = np.zeros(len(coords))
    scale_x = scale_y = 1.0
    for d in range(coords.shape[1]):
        extent = float(coords[:, d].max(initial=0)) + 1.0
        if d % 2 == 0:
            x += coords[:, d] * scale_x
            scale_x *= extent + 1.0
        else:
            y += coords[:, d] * scale_y
            scale_y *= extent + 1.0
    return x, y


def groups_on_circles(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups on a large circle, each group's nodes on a small circle around its place."""
    uniq, g = np.unique(group, return_inverse=True)
    k = len(uniq)
    size = np.bincount(g)
    rank = np.zeros(len(g), np.int64)
    order = np.argsort(g, kind="stable")
    starts = np.r_[0, np.cumsum(size)[:-1]]
    rank[order] = np.arange(len(g)) - np.repeat(starts, size)
    big = np.linspace(0, 2 * math.pi, k, endpoint=False)
    radius = 1.0 if k > 1 else 0.0
    small = 0.8 * math.sin(math.pi / k) if k > 1 else 0.8
    angle = 2 * math.pi * rank / np.maximum(size[g], 1)
    return radius * np.cos(big[g]) + small * np.cos(angle), radius * np.sin(big[g]) + small * np.sin(angle)


def levels(level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One row per level (level 0 at the bottom), nodes centred along it in index order."""
    uniq, lv = np.unique(level, return_inverse=True)
    size = np.bincount(lv)
    order = np.argsort(lv, kind="stable")
    rank = np.zeros(len(lv))
    rank[order] = np.arange(len(lv)) - np.repeat(np.r_[0, np.cumsum(size)[:-1]], size)
    widest = float(size.max(initial=1))
    x = (rank + 0.5) / size[lv] * widest
    y = (len(uniq) - 1 - lv) * max(widest / max(len(uniq), 1), 1.0)
    return x, y


def force(topology, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Spring layout (seeded) of the underlying simple graph; spectral above ``FORCE_NODES`` nodes."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(topology.num_nodes))
    graph.add_edges_from(zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=True))
    if topology.num_nodes > FORCE_NODES:
        pos = nx.spectral_layout(graph)
    else:
        pos = nx.spring_layout(graph, seed=seed, iterations=80)
    xy = np.array([pos[v] for v in range(topology.num_nodes)]).reshape(-1, 2)
    return xy[:, 0], xy[:, 1]


def circle(n: int) -> tuple[np.ndarray, np.ndarray]:
    angle = np.linspace(0, 2 * math.pi, n, endpoint=False) - math.pi / 2
    return np.cos(angle), np.sin(angle)


def layout(topology) -> Layout:
    """The family-suited layout of ``topology`` (see the module docstring)."""
    n = topology.num_nodes
    fields = tuple(getattr(topology.codec, "fields", ()))
    coords = None if topology.family == "graph" else _coordinates(topology)
    group = None
    if topology.family == "graph":
        x, y = force(topology)
        kind = "force"
    elif coords is not None and fields and fields[0] in LEVEL_FIELDS:
        x, y = levels(coords[:, 0])
        kind, group = "levels", coords[:, 0]
    elif coords is not None and (fields and fields[0] in GROUP_FIELDS or topology.family == "hdn"):
        group = _group_key(coords)
        x, y = groups_on_circles(group)
        kind = "groups"
    elif coords is not None and fields and all(f[0] in "xb" and f[1:].isdigit() for f in fields):
        x, y = grid(coords[:, ::-1] if fields[0].startswith("b") else coords)
        kind = "grid"
    else:
        x, y = circle(n)
        kind = "circle"
    x, y = _normalise(np.asarray(x, float), np.asarray(y, float))
    return Layout(x, y, kind, group)


def _group_key(coords: np.ndarray) -> np.ndarray:
    """A node's group: its coordinates but the last (the last two when that leaves every node alone)."""
    for keep in range(coords.shape[1] - 1, 0, -1):
        _, g = np.unique(coords[:, :keep], axis=0, return_inverse=True)
        if g.max(initial=0) + 1 < len(coords):
            return g.reshape(-1)
    return np.zeros(len(coords), np.int64)


def clusters(lay: Layout, count: int = CLUSTERS) -> np.ndarray:
    """A cluster per node for an aggregated view: its group when there are few enough, else a cell of the
    plane (grid tiles, blocks of a level) so that about ``count`` clusters remain."""
    if lay.group is not None and lay.kind == "groups":
        _, g = np.unique(lay.group, return_inverse=True)
        if g.max(initial=0) < 4 * count:
            return g.reshape(-1)
    side = max(1, int(math.sqrt(count)))
    if lay.kind == "levels" and lay.group is not None:
        _, lv = np.unique(lay.group, return_inverse=True)
        per_level = max(1, count // (lv.max(initial=0) + 1))
        cell = np.minimum((lay.x * per_level).astype(np.int64), per_level - 1)
        key = lv.reshape(-1) * per_level + cell
    else:
        cx = np.minimum((lay.x * side).astype(np.int64), side - 1)
        cy = np.minimum((lay.y * side).astype(np.int64), side - 1)
        key = cy * side + cx
    _, c = np.unique(key, return_inverse=True)
    return c.reshape(-1)
