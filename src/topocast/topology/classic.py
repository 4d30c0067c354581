"""Classic networks: ring, path, complete graph, k-ary n-D mesh and torus, hypercube.

Conventions (Dally and Towles, ch. 5; Grama et al., ch. 2):

* Dimensions are mixed-radix coordinates, the first one most significant;
  ``mesh(16, 16)`` is 16 x 16.
* A ring or torus dimension of size 2 is a *double link*: both the ``+`` and the
  ``-`` port of a node lead to the same neighbour, so every torus node keeps
  ``2 n`` ports (the convention of the hierarchical dual-net paper).  networkx
  builds a single edge there; ``to_networkx`` returns a MultiGraph.
* Hypercube dimension ``i`` flips bit ``i`` of the node index.

Ring, path, mesh, torus and hypercube write their CSR arrays straight from the
mixed-radix formula (:func:`lattice_csr`, :func:`hypercube_csr`): vectorised,
no sort, rows in the order :meth:`Topology.from_arcs` gives (by neighbour, then
label), the same arrays as the Cartesian product of rings and paths
(``tests/test_topology_classic.py`` checks both).
"""

from __future__ import annotations

import numpy as np

from ..infra.validate import integer, integers
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology
from .product import product_label


def lattice_csr(dims: tuple[int, ...], wrap: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Write the CSR arrays of a mesh or torus straight from the mixed-radix formula.

    Node ``x`` has mixed-radix coordinates ``c`` (first most significant, stride
    ``s_i``); dimension ``i`` gives the arc ``+`` (label ``2i``) to ``x + s_i`` and
    ``-`` (label ``2i + 1``) to ``x - s_i``, which on a torus wrap around at the
    ends.  Inside the lattice a row sorted by neighbour is one pattern: the arcs
    going down, dimension 0 first (``s_0`` is the largest step), then the arcs
    going up, dimension ``d - 1`` first; every row is written from it at once
    (``x + offsets``).  On the boundary a mesh row loses the arcs that leave the
    lattice; a torus row (some ``c_i`` is 0 or ``k_i - 1``) gets its wrapped
    arcs and is sorted by (neighbour, label) again, as :meth:`Topology.from_arcs`
    sorts (a size-2 dimension of a torus has both arcs to one neighbour, ``+`` first).

    Parameters
    ----------
    dims : tuple of int
        Size of every dimension (each >= 2), the first most significant.
    wrap : bool
        True for a torus (rings), False for a mesh (paths).

    Returns
    -------
    indptr, indices, labels : numpy.ndarray
        Row pointers (int64, one per node plus one), arc heads (int64) and arc label indices (int16).
    """
    d = len(dims)
    strides = [1] * d
    for i in range(d - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    n = int(np.prod(dims, dtype=np.int64))
    width = 2 * d
    offsets = np.array([-s for s in strides] + [s for s in reversed(strides)], dtype=np.int64)
    pattern = np.array([2 * i + 1 for i in range(d)] + [2 * i for i in reversed(range(d))], dtype=np.int16)
    heads = np.arange(n, dtype=np.int64)[:, None] + offsets
    labels = np.empty((n, width), dtype=np.int16)
    labels[:] = pattern
    if not wrap:
        valid = np.empty((*dims, width), dtype=bool)
        degree = np.zeros(dims, dtype=np.int64)
        for i, k in enumerate(dims):
            shape = [1] * d
            shape[i] = k
            c = np.arange(k).reshape(shape)
            valid[..., i] = c > 0
            valid[..., width - 1 - i] = c < k - 1
            degree += (c > 0).astype(np.int64) + (c < k - 1)
        valid = valid.reshape(n, width)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degree.reshape(n), out=indptr[1:])
        return indptr, heads[valid], labels[valid]
    boundary = np.zeros(dims, dtype=bool)
    for i, k in enumerate(dims):
        shape = [1] * d
        shape[i] = k
        c = np.arange(k).reshape(shape)
        boundary |= (c == 0) | (c == k - 1)
    rows = np.flatnonzero(boundary)
    size = np.array(dims, dtype=np.int64)
    step = np.array(strides, dtype=np.int64)
    coord = (rows[:, None] // step) % size
    plus = rows[:, None] + np.where(coord == size - 1, -(size - 1) * step, step)
    minus = rows[:, None] + np.where(coord == 0, (size - 1) * step, -step)
    dim = np.arange(d, dtype=np.int64)
    keys = np.concatenate([plus * width + 2 * dim, minus * width + 2 * dim + 1], axis=1)
    keys.sort(axis=1)  # by neighbour, then label
    heads[rows] = keys // width
    labels[rows] = keys % width
    indptr = np.arange(n + 1, dtype=np.int64) * width
    return indptr, heads.reshape(-1), labels.reshape(-1)


def hypercube_csr(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Write the CSR arrays of the binary n-cube Q_n by doubling.

    The rows of Q_{k+1} with bit k clear are those of Q_k and then ``u + 2^k`` (the largest neighbour);
    with bit k set, ``u - 2^k`` (the smallest) and then the row of ``u - 2^k`` shifted by ``2^k``.  Rows are
    sorted by neighbour; arc label ``i`` flips bit ``i``.

    Parameters
    ----------
    n : int
        Dimension (``2^n`` nodes).

    Returns
    -------
    indptr, indices, labels : numpy.ndarray
        Row pointers (int64), arc heads (int64) and arc label indices (int16).
    """
    total = 1 << n
    indices = np.empty((total, n), dtype=np.int64)
    labels = np.empty((total, n), dtype=np.int16)
    for k in range(n):
        m = 1 << k
        low = np.arange(m, dtype=np.int64)
        indices[m:2 * m, 1:k + 1] = indices[:m, :k] + m
        labels[m:2 * m, 1:k + 1] = labels[:m, :k]
        indices[m:2 * m, 0] = low
        labels[m:2 * m, 0] = k
        indices[:m, k] = low + m
        labels[:m, k] = k
    indptr = np.arange(total + 1, dtype=np.int64) * n
    return indptr, indices.reshape(-1), labels.reshape(-1)


def ring(n: int) -> Topology:
    """Build the ring (cycle) C_n, arc labels ``+`` (to i+1) and ``-`` (to i-1).

    Parameters
    ----------
    n : int
        Number of nodes, >= 2 (``n = 2`` is a double link).

    Returns
    -------
    Topology
        The ring, vertex-transitive.

    Raises
    ------
    TopocastError
        If ``n`` is not an integer >= 2.

    Examples
    --------
    >>> ring(5).num_edges
    5
    """
    n = integer(n, "n", owner="ring", minimum=2)
    return Topology("ring", {"n": n}, *lattice_csr((n,), wrap=True), ("+", "-"),
                    vertex_transitive=True, meta={"spec": f"ring:{n}"})


def path(n: int) -> Topology:
    """Build the path (linear array) P_n, arc labels ``+`` and ``-``.

    Parameters
    ----------
    n : int
        Number of nodes, >= 1.

    Returns
    -------
    Topology
        The path.

    Raises
    ------
    TopocastError
        If ``n`` is not an integer >= 1.

    Examples
    --------
    >>> path(4).num_edges
    3
    """
    n = integer(n, "n", owner="path", minimum=1)
    return Topology("path", {"n": n}, *lattice_csr((n,), wrap=False), ("+", "-"),
                    vertex_transitive=n <= 2, meta={"spec": f"path:{n}"})


def complete(n: int) -> Topology:
    """Build the complete graph K_n: every node linked to every other one.

    Parameters
    ----------
    n : int
        Number of nodes, >= 1.

    Returns
    -------
    Topology
        The complete graph, one arc label ``link``.

    Raises
    ------
    TopocastError
        If ``n`` is not an integer >= 1.

    Examples
    --------
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
    """Build the k-ary n-D mesh with mixed radix, e.g. ``mesh(16, 16)``.

    Arc labels are ``+d0``, ``-d0``, ``+d1``, ...: the sign of the step and its dimension.

    Parameters
    ----------
    *dims : int
        Size of every dimension (each >= 2), the first most significant; one sequence is also accepted.

    Returns
    -------
    Topology
        The mesh, with a mixed-radix codec for coordinates.

    Raises
    ------
    TopocastError
        If a size is not an integer >= 2.

    Examples
    --------
    >>> mesh(4, 4).num_edges
    24
    """
    dims = _dims("mesh", dims)
    return _lattice("mesh", dims, wrap=False)


def torus(*dims: int) -> Topology:
    """Build the k-ary n-cube (torus) with mixed radix, e.g. ``torus(8, 8, 8)``.

    A dimension of size 2 is a double link (two ports to one neighbour), so every node has ``2 n`` ports.

    Parameters
    ----------
    *dims : int
        Size of every dimension (each >= 2), the first most significant; one sequence is also accepted.

    Returns
    -------
    Topology
        The torus, vertex-transitive, arc labels ``+d0``, ``-d0``, ...

    Raises
    ------
    TopocastError
        If a size is not an integer >= 2.

    Examples
    --------
    >>> t = torus(3, 3)
    >>> t.num_nodes
    9
    >>> torus(10, 10, 10).num_edges
    3000
    """
    dims = _dims("torus", dims)
    return _lattice("torus", dims, wrap=True)


def _lattice(family: str, dims: tuple[int, ...], wrap: bool) -> Topology:
    """Build the mesh or torus: labels ``+d0, -d0, +d1, ...``, codec as the product of paths or rings."""
    names = [product_label(sign, i) for i in range(len(dims)) for sign in ("+", "-")]
    return Topology(family, {"dims": dims}, *lattice_csr(dims, wrap), names, codec=MixedRadixCodec(dims),
                    vertex_transitive=wrap or all(k <= 2 for k in dims),
                    meta={"spec": f"{family}:" + "x".join(map(str, dims))})


def hypercube(n: int) -> Topology:
    """Build the binary n-cube Q_n: node ``u`` joins ``u ^ (1 << i)`` by an arc labelled ``d{i}``.

    Parameters
    ----------
    n : int
        Dimension, 1..40 (``2^n`` nodes).

    Returns
    -------
    Topology
        The hypercube, vertex-transitive.

    Raises
    ------
    TopocastError
        If ``n`` is not an integer in 1..40.

    Examples
    --------
    >>> hypercube(3).num_edges
    12
    """
    n = integer(n, "n", owner="hypercube", minimum=1, maximum=40)
    codec = MixedRadixCodec([2] * n, [f"b{i}" for i in range(n - 1, -1, -1)])
    return Topology("hypercube", {"n": n}, *hypercube_csr(n), [f"d{i}" for i in range(n)], codec=codec,
                    vertex_transitive=True, meta={"spec": f"hypercube:{n}"})


def _power(base: int, exponent: int) -> int | float:
    """Compute ``base ** exponent`` for a size estimate, bounded (see :func:`topocast.infra.memory.power`)."""
    from ..infra.memory import power

    return power(base, exponent)


def _prod(dims) -> int | float:
    """Product of the sizes, exact while small (a float beyond 2**200, never a huge int)."""
    from ..infra.memory import product

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
