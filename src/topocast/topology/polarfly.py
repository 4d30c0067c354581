"""PolarFly: the Erdős–Rényi polarity graph ER_q over GF(q) (Lakhotia et al., SC 2022).

Routers are the ``N = q^2 + q + 1`` points of the projective plane PG(2, q),
each a nonzero vector of GF(q)^3 up to a scalar; ``u`` and ``v`` are joined
when ``u . v = u0 v0 + u1 v1 + u2 v2 = 0`` (``v`` lies on the polar line of
``u``).  Every line has ``q + 1`` points, so a router has ``q + 1`` network
ports, except the ``q + 1`` *quadrics* (absolute points, ``u . u = 0``), which
lie on their own polar line: the self-loop is dropped and they have ``q``.
The graph has ``q (q + 1)^2 / 2`` links and diameter 2 (two points span a
line, whose pole is orthogonal to both), close to the Moore bound ``k^2 + 1``
of radix ``k = q + 1``.

Numbering: ``(1, a, b) -> a q + b``, ``(0, 1, b) -> q^2 + b``, ``(0, 0, 1) ->
q^2 + q``, field elements numbered as in :mod:`topocast.topology.gf`; the
label of a router is its normalised vector (first nonzero coordinate 1).

Symmetry: orthogonal matrices (``A^T A = I``: coordinate permutations, a sign
change, rotations in a coordinate plane) and the field's Frobenius map
preserve ``u . v = 0``; their orbits (each map checked on the built graph,
:mod:`topocast.topology.symmetry`) are the family's ``orbits`` hook.  For
odd ``q`` they are the three classes the paper names (the ``q + 1``
quadrics, the ``q (q + 1) / 2`` points on two tangent lines and the
``q (q - 1) / 2`` points on none), so exact distances on 10^5 routers take
three breadth-first searches.

``p`` terminals per router (concentration), default ``ceil((q + 1) / 2)``
(half the network radix, our default: pass the paper's own choice).
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import Codec, Topology
from .gf import FieldTables, check_prime_power, field_tables, squares_summing_to_one


def point_coords(q: int, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Give the normalised coordinates of points of PG(2, q).

    Parameters
    ----------
    q : int
        The field size.
    u : numpy.ndarray
        Point indices.

    Returns
    -------
    x0, x1, x2 : numpy.ndarray
        Element numbers of the coordinates.
    """
    u = np.asarray(u, dtype=np.int64)
    qq = q * q
    affine = u < qq
    x0 = affine.astype(np.int64)
    x1 = np.where(affine, u // q, (u < qq + q).astype(np.int64))
    x2 = np.where(affine, u % q, np.where(u < qq + q, u - qq, 1))
    return x0, x1, x2


def point_index(t: FieldTables, y0, y1, y2) -> np.ndarray:
    """Give the index of the projective point of each nonzero vector ``(y0, y1, y2)``.

    Parameters
    ----------
    t : FieldTables
        The field.
    y0, y1, y2 : numpy.ndarray
        Coordinates (element numbers, arrays of any one shape).

    Returns
    -------
    numpy.ndarray
        Point indices, the shape of the coordinates.
    """
    q = t.q
    y0, y1, y2 = np.broadcast_arrays(np.asarray(y0), np.asarray(y1), np.asarray(y2))
    out = np.full(y0.shape, q * q + q, dtype=np.int64)
    m0 = y0 != 0
    i = t.inv[y0[m0]]
    out[m0] = t.mul[y1[m0], i] * q + t.mul[y2[m0], i]
    m1 = ~m0 & (y1 != 0)
    out[m1] = q * q + t.mul[y2[m1], t.inv[y1[m1]]]
    return out


def dot(t: FieldTables, x, y) -> np.ndarray:
    """Compute ``x . y`` over GF(q) for coordinate triples of arrays.

    Parameters
    ----------
    t : FieldTables
        The field.
    x, y : sequence of numpy.ndarray
        Three coordinate arrays each.

    Returns
    -------
    numpy.ndarray
        The dot products.
    """
    return t.add[t.add[t.mul[x[0], y[0]], t.mul[x[1], y[1]]], t.mul[x[2], y[2]]]


class PointCodec(Codec):
    """A router's label is its normalised vector ``(x0, x1, x2)`` over GF(q) (element numbers)."""

    fields = ("x0", "x1", "x2")

    def __init__(self, q: int):
        self.q = q

    @cached_property
    def tables(self) -> FieldTables:
        """The tables of GF(q)."""
        return field_tables(self.q, "polarfly")

    def decode(self, index: int) -> tuple:
        """Give the label (normalised vector) of a router.

        Parameters
        ----------
        index : int
            Router index.

        Returns
        -------
        tuple of int
            ``(x0, x1, x2)``.
        """
        return tuple(int(c[0]) for c in point_coords(self.q, np.array([index])))

    def encode(self, label) -> int:
        """Give the router of a vector (any nonzero multiple of the normalised one).

        Parameters
        ----------
        label : sequence of int
            Three element numbers in 0..q-1, not all zero.

        Returns
        -------
        int
            Router index.

        Raises
        ------
        TopocastError
            A wrong number of coordinates, one out of range, or the zero vector.
        """
        if len(label) != 3:
            raise TopocastError(f"node: expected 3 coordinates, got {len(label)}")
        coords = [integer(v, name, owner="node", minimum=0, maximum=self.q - 1)
                  for v, name in zip(label, self.fields, strict=True)]
        if not any(coords):
            raise TopocastError("node: the zero vector is not a point of the projective plane")
        return int(point_index(self.tables, *(np.array([c]) for c in coords))[0])


def polarfly_params(q: int, p: int | None) -> tuple[int, int]:
    """Check the PolarFly parameters.

    Parameters
    ----------
    q : int
        A prime power.
    p : int or None
        Terminals per router; None: ``ceil((q + 1) / 2)``.

    Returns
    -------
    tuple of int
        ``(q, p)``.

    Raises
    ------
    TopocastError
        When ``q`` is not a prime power or ``p`` is negative.
    """
    q = check_prime_power(q, "polarfly")
    p = math.ceil((q + 1) / 2) if p is None else integer(p, "p", owner="polarfly", minimum=0)
    return q, p


def polarfly(q: int, p: int | None = None) -> Topology:
    """Build PolarFly ER_q (Lakhotia et al., SC 2022): the polarity graph of PG(2, q), quadric self-loops removed.

    Parameters
    ----------
    q : int
        A prime power (2, 3, 4, 5, 7, 8, 9, ...).
    p : int, optional
        Terminals per router (default ``ceil((q + 1) / 2)``).

    Returns
    -------
    Topology
        ``q^2 + q + 1`` routers, ``q (q + 1)^2 / 2`` links, codec ``(x0, x1, x2)``; ``meta`` holds the
        quadrics, radix, Moore bound and terminals.

    Raises
    ------
    TopocastError
        When ``q`` is not a prime power.

    Examples
    --------
    >>> t = polarfly(7)
    >>> t.num_nodes, t.num_edges, int(t.port_degree.max()), t.meta["quadrics"]
    (57, 224, 8, 8)
    """
    q, p = polarfly_params(q, p)
    from .geometry_kernels import polar_lines

    t = field_tables(q, "polarfly")
    n = q * q + q + 1
    lines = np.empty((n, q + 1), dtype=np.int64)
    polar_lines(q, t.add, t.mul, t.neg, t.inv, lines)
    keep = lines != np.arange(n, dtype=np.int64)[:, None]
    degree = keep.sum(axis=1)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(degree, out=indptr[1:])
    indices = lines[keep]
    del lines, keep
    quadrics = int(np.count_nonzero(degree == q))
    k = q + 1
    moore = k * k + 1
    meta = {
        "spec": f"polarfly:q={q},p={p}",
        "routers": n, "field": f"GF({q})", "quadrics": quadrics,
        "network_radix": k, "p": p, "terminals": n * p, "radix": k + p,
        "moore_bound": moore, "moore_efficiency": n / moore,
        "construction": "points of PG(2,q), u ~ v iff u.v = 0, quadric self-loops dropped",
    }
    return Topology("polarfly", {"q": q, "p": p}, indptr, indices, np.zeros(len(indices), np.int16), ("link",),
                    codec=PointCodec(q), meta=meta)


def quadric_mask(topology: Topology) -> np.ndarray:
    """Tell which routers of a PolarFly are quadrics (``u . u = 0``).

    Parameters
    ----------
    topology : Topology
        A PolarFly.

    Returns
    -------
    numpy.ndarray
        Boolean per router.
    """
    q = int(topology.params["q"])
    x = point_coords(q, np.arange(topology.num_nodes))
    return dot(field_tables(q, "polarfly"), x, x) == 0


def point_map(q: int, matrix, frobenius: bool = False) -> np.ndarray:
    """Permute the points of PG(2, q) by ``u -> matrix . u``.

    Parameters
    ----------
    q : int
        The field size.
    matrix : array_like
        3 x 3 invertible matrix of element numbers.
    frobenius : bool, default False
        Apply ``x -> x^p`` to the coordinates first.

    Returns
    -------
    numpy.ndarray
        Image of every point.
    """
    t = field_tables(q, "polarfly")
    x = point_coords(q, np.arange(q * q + q + 1))
    if frobenius:
        f = t.frobenius()
        x = tuple(f[c] for c in x)
    m = np.asarray(matrix, dtype=np.int64)
    y = [t.add[t.add[t.mul[m[r, 0], x[0]], t.mul[m[r, 1], x[1]]], t.mul[m[r, 2], x[2]]] for r in range(3)]
    return point_index(t, *y)


def reflection_vectors(t: FieldTables) -> list[tuple[int, int, int]]:
    """Pick the vectors of the reflections used as candidate automorphisms.

    They are those among ``(1, 1, 0)``, ``(1, 1, 1)``, ``(1, xi, 0)``, ``(1, xi, 1)`` with ``v . v != 0``.

    Parameters
    ----------
    t : FieldTables
        The field.

    Returns
    -------
    list of tuple of int
        The vectors.
    """
    xi = t.field.xi
    out = []
    for v in ((1, 1, 0), (1, 1, 1), (1, xi, 0), (1, xi, 1)):
        if dot(t, v, v) != 0 and v not in out:
            out.append(v)
    return out


def reflection(t: FieldTables, v) -> np.ndarray:
    """Write the orthogonal reflection ``x -> x - 2 (x . v) / (v . v) v`` as a matrix (odd ``q``, ``v . v != 0``).

    Parameters
    ----------
    t : FieldTables
        The field.
    v : sequence of int
        The vector.

    Returns
    -------
    numpy.ndarray
        3 x 3 matrix of element numbers.
    """
    scale = t.mul[t.add[1, 1], t.inv[dot(t, v, v)]]          # 2 / (v . v)
    m = np.eye(3, dtype=np.int64)
    for r in range(3):
        for c in range(3):
            m[r, c] = t.add[m[r, c], t.neg[t.mul[scale, t.mul[v[r], v[c]]]]]
    return m


def automorphism_candidates(q: int):
    """Generate candidate automorphisms of the polarity graph.

    Maps preserving ``u . v = 0``: two coordinate permutations, a sign change, up to four plane
    rotations ``[[a, b, 0], [-b, a, 0], [0, 0, 1]]`` with ``a^2 + b^2 = 1``, for odd ``q`` up to four
    reflections (which generate the orthogonal group, Cartan–Dieudonné), and the Frobenius map.

    Parameters
    ----------
    q : int
        The field size.

    Yields
    ------
    numpy.ndarray
        The image of every point under one map.
    """
    t = field_tables(q, "polarfly")
    minus = int(t.neg[1])
    if t.characteristic != 2:
        for v in reflection_vectors(t):
            yield point_map(q, reflection(t, v))
    yield point_map(q, [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    yield point_map(q, [[0, 0, 1], [1, 0, 0], [0, 1, 0]])
    if minus != 1:
        yield point_map(q, [[minus, 0, 0], [0, 1, 0], [0, 0, 1]])
    for a, b in squares_summing_to_one(t):
        yield point_map(q, [[a, b, 0], [int(t.neg[b]), a, 0], [0, 0, 1]])
    if t.field.degree > 1:
        yield point_map(q, np.eye(3, dtype=np.int64), frobenius=True)


def polarfly_orbits(topology: Topology) -> np.ndarray:
    """Label the routers by orbit under the checked maps of :func:`automorphism_candidates`.

    The family's ``orbits`` hook.

    Parameters
    ----------
    topology : Topology
        A PolarFly.

    Returns
    -------
    numpy.ndarray
        Orbit label of every router (cached on the topology).
    """
    from .symmetry import checked_orbits

    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "orbits" not in cache:
        cache["orbits"] = checked_orbits(topology, automorphism_candidates(int(topology.params["q"])),
                                         invariant=polarity_invariant(topology))
    return cache["orbits"]


def polarity_invariant(topology: Topology) -> np.ndarray:
    """Give a per-router invariant of the automorphisms of a PolarFly.

    Per router, ``(q + 2) * degree + quadric neighbours``: automorphisms keep both (quadrics are the
    routers of degree ``q``), so no orbit joins two values.

    Parameters
    ----------
    topology : Topology
        A PolarFly.

    Returns
    -------
    numpy.ndarray
        ``(q + 2) * degree + quadric neighbours`` of every router.
    """
    q = int(topology.params["q"])
    degree = topology.port_degree
    quadric = degree == q
    near = np.bincount(topology.arc_sources[quadric[topology.indices]], minlength=topology.num_nodes)
    return degree * (q + 2) + near


def _estimate(q: int, p: int | None = None) -> tuple[int, int]:
    n = q * q + q + 1
    return n, n * (q + 1)


register_family(Family(
    name="polarfly",
    builder=polarfly,
    params=(Param("q", "int", doc="order of the field GF(q): a prime power", minimum=2),
            Param("p", "int", None, doc="terminals per router (default ceil((q+1)/2))", minimum=0)),
    doc="PolarFly: Erdos-Renyi polarity graph ER_q of PG(2,q), q^2+q+1 routers of radix q+1, diameter 2 "
        "(Lakhotia et al. SC 2022)",
    estimate=_estimate,
    example="polarfly:q=7",
    orbits=polarfly_orbits,
))
