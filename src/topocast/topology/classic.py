"""Classic networks: ring, path, complete graph, k-ary n-D mesh and torus, hypercube.

Conventions (Dally and Towles, ch. 5; Grama et al., ch. 2):

* Dimensions are mixed-radix coordinates, the first one most significant;
  ``mesh(16, 16)`` is 16 x 16.
* A ring or torus dimension of size 2 is a *double link*: both the ``+`` and the
  ``-`` port of a node lead to the same neighbour, so every torus node keeps
  ``2 n`` ports (the convention of the hierarchical dual-net paper).  networkx
  builds a single edge there; ``to_networkx`` returns a MultiGraph.
* Hypercube dimension ``i`` flips bit ``i`` of the node index.
"""

from __future__ import annotations

import numpy as np

from ..registry import Family, Param, register_family
from ..validate import integer, integers
from .core import MixedRadixCodec, Topology
from .product import cartesian_product


def ring(n: int) -> Topology:
    """Ring (cycle) C_n with arc labels ``+`` (to i+1) and ``-`` (to i-1).

    >>> ring(5).num_edges
    5
    """
    n = integer(n, "n", owner="ring", minimum=2)
    nodes = np.arange(n, dtype=np.int64)
    src = np.concatenate([nodes, nodes])
    dst = np.concatenate([(nodes + 1) % n, (nodes - 1) % n])
    labels = np.repeat(np.array([0, 1], dtype=np.int16), n)
    return Topology.from_arcs("ring", {"n": n}, n, src, dst, labels, ("+", "-"),
                              vertex_transitive=True, meta={"spec": f"ring:{n}"})


def path(n: int) -> Topology:
    """Path (linear array) P_n, labels ``+`` and ``-``.

    >>> path(4).num_edges
    3
    """
    n = integer(n, "n", owner="path", minimum=1)
    nodes = np.arange(n - 1, dtype=np.int64)
    src = np.concatenate([nodes, nodes + 1])
    dst = np.concatenate([nodes + 1, nodes])
    labels = np.repeat(np.array([0, 1], dtype=np.int16), n - 1)
    return Topology.from_arcs("path", {"n": n}, n, src, dst, labels, ("+", "-"),
                              vertex_transitive=n <= 2, meta={"spec": f"path:{n}"})


def complete(n: int) -> Topology:
    """Complete graph K_n.

    >>> complete(4).num_edges
    6
    """
    n = integer(n, "n", owner="complete", minimum=1)
    u, v = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    mask = u != v
    return Topology.from_arcs("complete", {"n": n}, n, u[mask], v[mask], None, ("link",),
                              vertex_transitive=True, meta={"spec": f"complete:{n}"})


def _dims(name: str, dims: tuple) -> tuple[int, ...]:
    if len(dims) == 1 and not isinstance(dims[0], (int, float, str)) and hasattr(dims[0], "__len__"):
        dims = dims[0]
    return integers(dims, "dims", owner=name, minimum=2)


def mesh(*dims: int) -> Topology:
    """k-ary n-D mesh with mixed radix, e.g. ``mesh(16, 16)``; labels ``+d0``, ``-d1``...

    >>> mesh(4, 4).num_edges
    24
    """
    dims = _dims("mesh", dims)
    spec = "mesh:" + "x".join(map(str, dims))
    return cartesian_product([path(d) for d in dims], "mesh", {"dims": dims},
                             meta={"spec": spec})


def torus(*dims: int) -> Topology:
    """k-ary n-cube with mixed radix, e.g. ``torus(8, 8, 8)``; vertex-transitive.

    >>> torus(10, 10, 10).num_edges
    3000
    """
    dims = _dims("torus", dims)
    spec = "torus:" + "x".join(map(str, dims))
    return cartesian_product([ring(d) for d in dims], "torus", {"dims": dims},
                             meta={"spec": spec})


def hypercube(n: int) -> Topology:
    """Binary n-cube Q_n: node ``u`` joins ``u ^ (1 << i)`` by an arc labelled ``d{i}``.

    >>> hypercube(3).num_edges
    12
    """
    n = integer(n, "n", owner="hypercube", minimum=1, maximum=40)
    total = 1 << n
    nodes = np.arange(total, dtype=np.int64)
    src = np.repeat(nodes, n)
    bits = np.tile(np.arange(n, dtype=np.int64), total)
    dst = src ^ (np.int64(1) << bits)
    codec = MixedRadixCodec([2] * n, [f"b{i}" for i in range(n - 1, -1, -1)])
    return Topology.from_arcs("hypercube", {"n": n}, total, src, dst, bits.astype(np.int16),
                              [f"d{i}" for i in range(n)], codec=codec, vertex_transitive=True,
                              meta={"spec": f"hypercube:{n}"})


def _power(base: int, exponent: int) -> int | float:
    """``base ** exponent`` for a size estimate, bounded (see :func:`topocast.memory.power`)."""
    from ..memory import power

    return power(base, exponent)


def _prod(dims) -> int | float:
    """Product of the sizes, exact while small (a float beyond 2**200, never a huge int)."""
    from ..memory import product

    return product(dims)


register_family(Family(
    "ring", ring, (Param("n", "int", doc="number of nodes", minimum=2),),
    "ring (cycle) C_n", positional="n", aliases=("cycle",),
    estimate=lambda n: (n, 2 * n), example="ring:64"))
register_family(Family(
    "path", path, (Param("n", "int", doc="number of nodes", minimum=1),),
    "path (linear array) P_n", positional="n", aliases=("linear",),
    estimate=lambda n: (n, 2 * (n - 1)), example="path:8"))
register_family(Family(
    "complete", complete, (Param("n", "int", doc="number of nodes", minimum=1),),
    "complete graph K_n", positional="n", aliases=("clique",),
    estimate=lambda n: (n, n * (n - 1)), example="complete:8"))
register_family(Family(
    "mesh", lambda dims: mesh(dims), (Param("dims", "dims", doc="sizes per dimension, e.g. 16x16", minimum=2),),
    "k-ary n-D mesh, mixed radix", positional="dims",
    estimate=lambda dims: (_prod(dims), sum(2 * (d - 1) * (_prod(dims) / d) for d in dims)),
    example="mesh:16x16"))
register_family(Family(
    "torus", lambda dims: torus(dims), (Param("dims", "dims", doc="sizes per dimension, e.g. 8x8x8", minimum=2),),
    "k-ary n-cube (torus), mixed radix", positional="dims",
    estimate=lambda dims: (_prod(dims), 2 * len(dims) * _prod(dims)), example="torus:8x8x8"))
register_family(Family(
    "hypercube", hypercube, (Param("n", "int", doc="dimension (2^n nodes)", minimum=1),),
    "binary n-cube Q_n", positional="n", aliases=("cube",),
    estimate=lambda n: (_power(2, n), n * _power(2, n)), example="hypercube:10"))
