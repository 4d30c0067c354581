"""Rings, paths, meshes and tori seen as grids: sizes per dimension and whether each wraps."""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..topology.core import Topology

GRID_FAMILIES = ("ring", "path", "mesh", "torus")


def grid_shape(topology: Topology) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Give the sizes and wraparound of every dimension of a ring, path, mesh or torus.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    tuple
        ``(sizes, wraps)``, the first dimension most significant, as in the builders.

    Raises
    ------
    TopocastError
        On a network that is not a ring, path, mesh or torus.
    """
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
    """Give the mixed-radix stride of every dimension.

    Parameters
    ----------
    sizes : tuple of int
        Dimension sizes, the first most significant.

    Returns
    -------
    numpy.ndarray
        Strides (the last is 1).
    """
    out = np.ones(len(sizes), dtype=np.int64)
    for i in range(len(sizes) - 2, -1, -1):
        out[i] = out[i + 1] * sizes[i + 1]
    return out


def coords(sizes: tuple[int, ...]) -> np.ndarray:
    """Give the coordinates of every node of a grid.

    Parameters
    ----------
    sizes : tuple of int
        Dimension sizes.

    Returns
    -------
    numpy.ndarray
        Shape ``(N, dims)``.
    """
    nodes = np.arange(int(np.prod(sizes)), dtype=np.int64)
    return np.stack([(nodes // s) % k for s, k in zip(strides(sizes), sizes, strict=False)], axis=1)
