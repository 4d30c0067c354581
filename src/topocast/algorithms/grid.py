"""Rings, paths, meshes and tori seen as grids: sizes per dimension and whether each wraps."""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..topology.core import Topology

GRID_FAMILIES = ("ring", "path", "mesh", "torus")


def grid_shape(topology: Topology) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """``(sizes, wraps)``: the first dimension most significant, as in the builders."""
    family, params = topology.family, topology.params
    if family == "ring":
        return (params["n"],), (True,)
    if family == "path":
        return (params["n"],), (False,)
    if family in ("mesh", "torus"):
        dims = tuple(params["dims"])
        return dims, (family == "torus",) * len(dims)
    raise TopocastError(f"algorithm: needs a ring, path, mesh or torus, not '{family}'")


def strides(sizes: tuple[int, ...]) -> np.ndarray:
    out = np.ones(len(sizes), dtype=np.int64)
    for i in range(len(sizes) - 2, -1, -1):
        out[i] = out[i + 1] * sizes[i + 1]
    return out


def coords(sizes: tuple[int, ...]) -> np.ndarray:
    """Coordinates of every node, shape ``(N, dims)``."""
    nodes = np.arange(int(np.prod(sizes)), dtype=np.int64)
    return np.stack([(nodes // s) % k for s, k in zip(strides(sizes), sizes, strict=False)], axis=1)
