"""Eisenstein-Jacobi networks EJ_alpha and their products EJ_alpha^(n).

Hussain, "An Improved One-to-All Broadcasting in Higher Dimensional
Eisenstein-Jacobi Networks" (2018), section 2.

* Nodes of EJ_alpha are the residues of Z[rho] modulo alpha = a + b rho,
  rho = (1 + i sqrt 3)/2, rho^2 = rho - 1 (section 2.1).  A residue is kept as
  a point of the integer lattice, ``x + y rho -> (x, y)``; alpha Z[rho] is the
  lattice spanned by ``alpha = (a, b)`` and ``alpha rho = (-b, a + b)``.  Its
  Hermite normal form ``(d1, 0), (t, g)`` with ``g = gcd(a, b)`` and
  ``d1 = N / g`` gives node indices ``y' * d1 + x'`` with ``0 <= x' < d1``,
  ``0 <= y' < g``; this is right also when gcd(a, b) > 1 and the residue ring
  is not cyclic.
* Node A is joined to ``A + rho^k`` for k = 0..5 (the units +1, +rho,
  +rho^2, -1, -rho, -rho^2); every arc carries its direction label.  Small
  alpha give parallel links (in EJ_{1+rho} the units fall on two residues).
* Sector j (j = 1..6) of section 2.1 is the cone ``k rho^j + l rho^(j-1)``,
  ``k >= 1, l >= 0``: major direction rho^j, minor direction rho^(j-1), the
  pairs (+rho,+1), (+rho^2,+rho), (-1,+rho^2), (-rho,-1), (-rho^2,-rho),
  (+1,-rho^2) of the errata.  Its points have weight k + l.  ``EJRing.sector``
  holds every residue's sector, :func:`node_sectors` those of a node of EJ^(n).
* The *sector tree* (section 3, generalised): every residue gets one
  canonical representative ``k rho^j + l rho^(j-1)`` of minimal weight, chosen
  level by level: the candidates at weight w are the lattice children of the
  representatives at weight w-1 (a non-axis point (k, l) has the child
  (k, l+1) via the minor direction; an axis point (k, 0) also has (k+1, 0) via
  the major direction), taken in order of sector, then k; the first
  candidate to hit an unclaimed residue claims it.  For b = a + 1 there are no
  ties and this is the paper's tree.  For other alpha a residue may have
  several minimal representatives; the rule keeps exactly one parent per
  residue, so the tree stays a shortest-path tree (depth = eccentricity) and
  broadcasts over it deliver exactly once.  Should a residue of weight w have
  no sector candidate (never observed for 0 <= a <= b <= 40), it would be
  attached to its first neighbour of weight w-1 in direction order; the tree
  records whether that happened (``fallback_edges``).

EJ^(n) is the Cartesian product of n copies, the first coordinate being the
paper's dimension n (the highest layer).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import gcd

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import Codec, Topology
from .metrics import distances_block
from .product import cartesian_product

#: the six units rho^k, k = 0..5, as (x, y) with x + y rho
UNITS = np.array([(1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1), (1, -1)], dtype=np.int64)
DIRECTION_NAMES = ("+1", "+rho", "+rho2", "-1", "-rho", "-rho2")
#: sector j (1..6): (major unit index, minor unit index)
SECTORS = {j: (j % 6, (j - 1) % 6) for j in range(1, 7)}
_MAJOR = np.array([0] + [SECTORS[j][0] for j in range(1, 7)], dtype=np.int64)
_MINOR = np.array([0] + [SECTORS[j][1] for j in range(1, 7)], dtype=np.int64)
#: all-to-all phases of section 4.2 (Algorithm 3): the two sectors each phase serves
PHASE_SECTORS = {1: (6, 1), 2: (2, 3), 3: (4, 5)}
SECTOR_PHASE = {s: p for p, ss in PHASE_SECTORS.items() for s in ss}


def hex_norm(x, y):
    """Give the weight of the lattice point ``x + y rho``: min ``|u|+|v|+|w|`` with ``x + y rho = u + v rho + w rho^2``.

    Closed form: ``|x| + |y|`` when x and y have the same sign, else ``max(|x|, |y|)``.

    Parameters
    ----------
    x, y : array_like
        Integer coordinates.

    Returns
    -------
    numpy.ndarray
        The weights.
    """
    x = np.asarray(x)
    y = np.asarray(y)
    return np.where(x * y >= 0, np.abs(x) + np.abs(y), np.maximum(np.abs(x), np.abs(y)))


def check_alpha(a: int, b: int, n: int = 1) -> tuple[int, int, int]:
    """Check the parameters of an Eisenstein-Jacobi network.

    Parameters
    ----------
    a, b : int
        ``alpha = a + b rho`` with ``0 <= a <= b`` and norm ``a^2 + ab + b^2 >= 2``.
    n : int, default 1
        Dimensions, >= 1.

    Returns
    -------
    tuple of int
        ``(a, b, n)``.

    Raises
    ------
    TopocastError
        Unless ``0 <= a <= b``, ``a^2 + ab + b^2 >= 2`` and ``n >= 1``.
    """
    a, b, n = (integer(value, name, owner="ej") for name, value in (("a", a), ("b", b), ("n", n)))
    if a < 0 or b < 0:
        raise TopocastError(f"ej: parameters 'a' and 'b' must be >= 0, got a={a}, b={b}")
    if a > b:
        raise TopocastError(f"ej: parameter 'a' must be <= b, got a={a}, b={b}")
    if a * a + a * b + b * b < 2:
        raise TopocastError(
            f"ej: the norm a^2 + ab + b^2 must be >= 2, got a={a}, b={b} (norm {a * a + a * b + b * b})")
    if n < 1:
        raise TopocastError(f"ej: parameter 'n' must be >= 1, got n={n}")
    return a, b, n


class EJRing:
    """Residues of Z[rho] modulo alpha = a + b rho: codec, neighbours, weights, sectors, sector tree.

    Everything here is about one dimension; :func:`eisenstein_jacobi` builds
    the product.  Arrays are indexed by node (residue) index.
    """

    def __init__(self, a: int, b: int):
        a, b, _ = check_alpha(a, b)
        self.a, self.b = a, b
        self.norm = a * a + a * b + b * b
        self.g = gcd(a, b)
        self.d1 = self.norm // self.g
        # y-generator of the lattice: p*alpha + q*alpha*rho has y = g
        _, p, q = _extended_gcd(b, a + b)
        self.t = (p * a - q * b) % self.d1
        self.neighbors = self.reduce(
            np.repeat(self.rep_or_grid()[:, :1], 6, 1) + UNITS[:, 0],
            np.repeat(self.rep_or_grid()[:, 1:], 6, 1) + UNITS[:, 1])
        self._build_tree()

    # -- codec -------------------------------------------------------------
    def reduce(self, x, y) -> np.ndarray:
        """Give the node index of ``x + y rho`` (any integers, vectorised).

        Parameters
        ----------
        x, y : array_like
            Integer coordinates.

        Returns
        -------
        numpy.ndarray
            The residue index modulo alpha.
        """
        x = np.asarray(x, dtype=np.int64)
        y = np.asarray(y, dtype=np.int64)
        k = np.floor_divide(y, self.g)
        xr = np.mod(x - k * self.t, self.d1)
        yr = y - k * self.g
        return yr * self.d1 + xr

    def rep_or_grid(self) -> np.ndarray:
        """Give the HNF representative ``(x', y')`` of every index (before the tree exists).

        Returns
        -------
        numpy.ndarray
            Shape ``(N, 2)``.
        """
        idx = np.arange(self.norm, dtype=np.int64)
        return np.stack([idx % self.d1, idx // self.d1], axis=1)

    def in_lattice(self, x, y) -> np.ndarray:
        """Tell where ``x + y rho`` is a multiple of alpha.

        Parameters
        ----------
        x, y : array_like
            Integer coordinates.

        Returns
        -------
        numpy.ndarray
            Boolean.
        """
        return self.reduce(x, y) == 0

    # -- weights -------------------------------------------------------------
    def weight_formula(self, x, y) -> np.ndarray:
        """Evaluate formula (2): the least hex norm over all representatives of ``x + y rho``.

        Parameters
        ----------
        x, y : array_like
            Integer coordinates.

        Returns
        -------
        numpy.ndarray
            The weights.

        Raises
        ------
        ValueError
            No candidate representative (cannot happen for a valid ring).
        """
        a, b, norm = self.a, self.b, self.norm
        x = np.asarray(x, dtype=np.int64)
        y = np.asarray(y, dtype=np.int64)
        # coordinates in the basis (alpha, alpha rho), rounded down: the point
        # moves into the basis parallelogram, whose corners hold the nearest translates
        s = np.floor_divide((a + b) * x + b * y, norm)
        t = np.floor_divide(-b * x + a * y, norm)
        x = x - (s * a - t * b)
        y = y - (s * b + t * (a + b))
        best: np.ndarray | None = None
        for i in range(-1, 3):
            for j in range(-1, 3):
                w = hex_norm(x - (i * a - j * b), y - (i * b + j * (a + b)))
                best = w if best is None else np.minimum(best, w)
        if best is None:  # never: sixteen candidates
            raise ValueError("hex distance: no candidate")
        return best

    def distance_formula(self, u, v) -> np.ndarray:
        """Evaluate formula (1): the distance between nodes ``u`` and ``v``.

        Parameters
        ----------
        u, v : array_like
            Node indices.

        Returns
        -------
        numpy.ndarray
            The distances.
        """
        ru, rv = self.rep[np.asarray(u)], self.rep[np.asarray(v)]
        return self.weight_formula(ru[..., 0] - rv[..., 0], ru[..., 1] - rv[..., 1])

    # -- the sector tree ---------------------------------------------------
    def _build_tree(self) -> None:
        n = self.norm
        rep = np.zeros((n, 2), dtype=np.int64)
        sector = np.zeros(n, dtype=np.int64)
        kk = np.zeros(n, dtype=np.int64)
        ll = np.zeros(n, dtype=np.int64)
        depth = np.full(n, -1, dtype=np.int64)
        parent = np.full(n, -1, dtype=np.int64)
        parent_dir = np.full(n, -1, dtype=np.int64)
        depth[0] = 0
        level = [0]
        fallback = 0
        # graph distances, to detect a residue no sector candidate reaches
        dist = _bfs_1d(self.neighbors)
        w = 0
        while level:
            idx, cand = self._level_candidates(np.asarray(level, dtype=np.int64), sector, kk, ll)
            # the first candidate of each new residue, in candidate order
            first = np.zeros(len(idx), dtype=bool)
            first[np.unique(idx, return_index=True)[1]] = True
            take = np.flatnonzero(first & (depth[idx] < 0))
            idx = idx[take]
            j, k, ell, par, direction, x, y = cand[:, take]
            depth[idx], parent[idx], parent_dir[idx] = w + 1, par, direction
            rep[idx, 0], rep[idx, 1] = x, y
            sector[idx], kk[idx], ll[idx] = j, k, ell
            nxt = idx.tolist()
            for idx in np.flatnonzero((dist == w + 1) & (depth < 0)):
                # no sector candidate: attach to the first neighbour one level up
                for direction in range(6):
                    par = int(self.neighbors[idx, (direction + 3) % 6])
                    if depth[par] == w:
                        fallback += 1
                        depth[idx], parent[idx], parent_dir[idx] = w + 1, par, direction
                        rep[idx] = rep[par] + UNITS[direction]
                        sector[idx], kk[idx], ll[idx] = sector[par] or 1, kk[par], ll[par] + 1
                        nxt.append(int(idx))
                        break
            level = nxt
            w += 1
        if np.any(depth != dist):
            raise AssertionError(f"ej: sector tree of {self.a}+{self.b}rho is not a shortest-path tree")
        self.rep, self.sector, self.depth = rep, sector, depth
        self.sector_k, self.sector_l = kk, ll
        self.parent, self.parent_dir = parent, parent_dir
        self.fallback_edges = fallback
        self.diameter = int(depth.max())
        order = np.lexsort((parent_dir, parent))[1:]  # drop the root (parent -1)
        self.child_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent[order], minlength=n), out=self.child_ptr[1:])
        self.child_node = order.astype(np.int64)
        self.child_dir = parent_dir[order].astype(np.int64)
        self.phase = np.array([SECTOR_PHASE.get(int(s), 0) for s in sector], dtype=np.int64)
        for arr in (self.rep, self.sector, self.depth, self.parent, self.child_ptr, self.child_node,
                    self.child_dir, self.phase, self.neighbors):
            arr.setflags(write=False)

    def _level_candidates(self, level, sector, kk, ll):
        """List the sector-tree candidates of one level.

        The sector-tree candidates of one level, sorted by (sector, k, l) in a stable order: per node
        ``k + (l + 1)`` along its sector's minor unit and, on the sector's axis (``l = 0``), ``(k + 1) + 0``
        along the major one (the root, alone in its level: ``1 + 0`` in each sector).  Returns their
        residues and a 7-row array (sector, k, l, parent, direction, x, y).
        """
        if len(level) == 1 and level[0] == 0:
            j = np.arange(1, 7)
            cand = np.stack([j, np.ones(6, np.int64), np.zeros(6, np.int64), np.zeros(6, np.int64), _MAJOR[j]])
        else:
            j, k, ell = sector[level], kk[level], ll[level]
            axis = ell == 0
            # per node its minor candidate, then (on the axis) its major one, in the order of the level
            cand = np.concatenate([np.stack([j, k, ell + 1, level, _MINOR[j]]),
                                   np.stack([j[axis], k[axis] + 1, 0 * k[axis], level[axis], _MAJOR[j[axis]]])],
                                  axis=1)
            place = np.concatenate([np.arange(len(level)) * 2, np.flatnonzero(axis) * 2 + 1])
            cand = cand[:, np.argsort(place, kind="stable")]
        cand = cand[:, np.lexsort((cand[2], cand[1], cand[0]))]
        j, k, ell = cand[0], cand[1], cand[2]
        x = k * UNITS[_MAJOR[j], 0] + ell * UNITS[_MINOR[j], 0]
        y = k * UNITS[_MAJOR[j], 1] + ell * UNITS[_MINOR[j], 1]
        return self.reduce(x, y), np.concatenate([cand, x[None], y[None]])

    # -- figures -------------------------------------------------------------
    def depth_histogram(self) -> np.ndarray:
        """Count the nodes per depth of the sector tree (= distance distribution from node 0).

        Returns
        -------
        numpy.ndarray
            Nodes per depth.
        """
        return np.bincount(self.depth)

    def leaf_histogram(self) -> np.ndarray:
        """Count the leaves of the sector tree per depth.

        Returns
        -------
        numpy.ndarray
            Leaves per depth, 0..diameter.
        """
        leaves = np.diff(self.child_ptr) == 0
        return np.bincount(self.depth[leaves], minlength=self.diameter + 1)

    def label(self, node: int) -> str:
        """Write a node's canonical representative as ``x+yrho`` text.

        Parameters
        ----------
        node : int
            Residue index.

        Returns
        -------
        str
            The text.
        """
        x, y = (int(v) for v in self.rep[node])
        return format_eisenstein(x, y)


def format_eisenstein(x: int, y: int) -> str:
    """Write ``x + y rho`` as text: ``3``, ``rho``, ``2-3rho``.

    Parameters
    ----------
    x, y : int
        Coordinates.

    Returns
    -------
    str
        The text.
    """
    if y == 0:
        return str(x)
    ys = {1: "rho", -1: "-rho"}.get(y, f"{y}rho")
    if x == 0:
        return ys
    return f"{x}{'+' if y > 0 else ''}{ys}"


def _extended_gcd(p: int, q: int) -> tuple[int, int, int]:
    """(g, s, t) with s p + t q = g = gcd(p, q) >= 0."""
    old_r, r, old_s, s, old_t, t = p, q, 1, 0, 0, 1
    while r:
        quo = old_r // r
        old_r, r = r, old_r - quo * r
        old_s, s = s, old_s - quo * s
        old_t, t = t, old_t - quo * t
    if old_r < 0:
        old_r, old_s, old_t = -old_r, -old_s, -old_t
    return old_r, old_s, old_t


def _bfs_1d(neighbors: np.ndarray) -> np.ndarray:
    """Hop distances from residue 0 over the neighbour table (a row of 6 per residue): the numpy BFS."""
    n, degree = neighbors.shape
    indptr = np.arange(0, n * degree + 1, degree, dtype=np.int64)
    return distances_block(indptr, neighbors.ravel().astype(np.int64), np.zeros(1, np.int64))[0].astype(np.int64)


@lru_cache(maxsize=64)
def ej_ring(a: int, b: int) -> EJRing:
    """Give the (cached) one-dimensional structure of EJ_{a+b rho}.

    Parameters
    ----------
    a, b : int
        ``alpha = a + b rho``.

    Returns
    -------
    EJRing
        Residues, neighbours, weights and sector tree.

    Raises
    ------
    TopocastError
        As :func:`check_alpha`.
    """
    return EJRing(a, b)


def distance_distribution_formula(a: int, b: int) -> np.ndarray:
    """Evaluate formula (3) of section 2.1 as printed: nodes at each distance from node 0.

    ``T = (a+b)/2``, ``M = (a+2b)/3``; 6s below T, 18(M - s) between T and M, 2 at s = M when b = a (mod 3),
    and the rest of the N nodes at s = T.  Where T is not an integer no distance gets the remainder, so the
    counts need not sum to N: that is one of the ways the formula fails.

    Parameters
    ----------
    a, b : int
        ``alpha = a + b rho``.

    Returns
    -------
    numpy.ndarray
        Count per distance.
    """
    norm = a * a + a * b + b * b
    T = (a + b) / 2
    M = (a + 2 * b) / 3
    top = int(np.floor(M))
    out: list[int | None] = []
    for s in range(top + 1):
        if s == 0:
            out.append(1)
        elif s < T:
            out.append(6 * s)
        elif T < s < M:
            out.append(int(round(18 * (M - s))))
        elif s == M and (b - a) % 3 == 0:
            out.append(2)
        elif s == T:
            out.append(None)
        else:
            out.append(0)
    if None in out:
        i = out.index(None)
        out[i] = norm - sum(v for v in out if v is not None)
    return np.array(out, dtype=np.int64)


class EJCodec(Codec):
    """Node index <-> canonical representatives, (x_n, y_n, ..., x_1, y_1).

    Decoding gives the sector-tree representative of each coordinate
    (minimal weight); encoding accepts any representative and reduces it.
    """

    def __init__(self, ring: EJRing, dims: int):
        self.ring, self.dims = ring, dims
        self.fields = ("x", "y") if dims == 1 else tuple(
            f"{c}{d}" for d in range(dims, 0, -1) for c in ("x", "y"))

    def coordinates(self, index: int) -> list[int]:
        """Give the residue index of each dimension of a node, highest dimension first.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        list of int
            Residue indices.
        """
        out, index = [], int(index)
        for _ in range(self.dims):
            index, c = divmod(index, self.ring.norm)
            out.append(c)
        return out[::-1]

    def decode(self, index: int) -> tuple:
        """Give the label of a node: the minimal-weight representative of each dimension.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        tuple of int
            ``(x_n, y_n, ..., x_1, y_1)``.
        """
        return tuple(int(v) for c in self.coordinates(index) for v in self.ring.rep[c])

    def encode(self, label: Sequence) -> int:
        """Give the node index of a label; any representative is reduced.

        Parameters
        ----------
        label : sequence of int
            ``(x_n, y_n, ..., x_1, y_1)``.

        Returns
        -------
        int
            Node index.

        Raises
        ------
        TopocastError
            A wrong number of coordinates or a coordinate that is not an integer.
        """
        if len(label) != 2 * self.dims:
            raise TopocastError(f"node: expected {2 * self.dims} coordinates (x, y per dimension), got {len(label)}")
        index = 0
        for d in range(self.dims):
            x, y = (integer(label[2 * d + i], name, owner="node") for i, name in enumerate(("x", "y")))
            index = index * self.ring.norm + int(self.ring.reduce(x, y))
        return index

    def format(self, index: int) -> str:
        """Write a node as ``(x+yrho, ...)`` text.

        Parameters
        ----------
        index : int
            Node index.

        Returns
        -------
        str
            The text.
        """
        return "(" + ", ".join(self.ring.label(c) for c in self.coordinates(index)) + ")"


def node_sectors(topology: Topology, node: int) -> tuple[int, ...]:
    """Give the sector (1..6, section 2.1; 0 for the coordinate 0) of each coordinate of a node.

    Parameters
    ----------
    topology : Topology
        An ``ej`` network.
    node : int
        Node index.

    Returns
    -------
    tuple of int
        Sectors, highest dimension first.

    Raises
    ------
    TopocastError
        If the network is not an ``ej`` one.

    Examples
    --------
    >>> node_sectors(eisenstein_jacobi(3, 4, 2), eisenstein_jacobi(3, 4, 2).index((1, 1, 0, 0)))
    (1, 0)
    """
    if topology.family != "ej":
        raise TopocastError(f"node_sectors: needs an 'ej' topology, not '{topology.family}'")
    topology.label(node)  # range check with the usual message
    codec = topology.codec
    if not isinstance(codec, EJCodec):
        raise TopocastError(f"node_sectors: needs an 'ej' topology, not '{topology.family}'")
    return tuple(int(codec.ring.sector[c]) for c in codec.coordinates(node))


def ej_1d(a: int, b: int) -> Topology:
    """Build EJ_{a+b rho} itself: N(alpha) nodes, six labelled arcs per node.

    Parameters
    ----------
    a, b : int
        ``alpha = a + b rho``.

    Returns
    -------
    Topology
        The one-dimensional network.

    Raises
    ------
    TopocastError
        As :func:`check_alpha`.
    """
    ring = ej_ring(a, b)
    n = ring.norm
    src = np.repeat(np.arange(n, dtype=np.int64), 6)
    dst = ring.neighbors.ravel()
    labels = np.tile(np.arange(6, dtype=np.int16), n)
    return Topology.from_arcs("ej", {"a": ring.a, "b": ring.b, "n": 1}, n, src, dst, labels, DIRECTION_NAMES,
                              codec=EJCodec(ring, 1), vertex_transitive=True,
                              meta=_meta(ring, 1))


def _meta(ring: EJRing, n: int) -> dict:
    return {
        "spec": f"ej:a={ring.a},b={ring.b},n={n}",
        "norm": ring.norm,
        "diameter_per_dimension": ring.diameter,
        "gcd": ring.g,
        "cyclic": ring.g == 1,
        "sector_tree_fallback_edges": ring.fallback_edges,
    }


def eisenstein_jacobi(a: int, b: int, n: int = 1) -> Topology:
    """Build the Eisenstein-Jacobi network EJ_{a+b rho}^(n) (section 2.2): hexagonal, on the residues of Z[rho].

    Parameters
    ----------
    a, b : int
        ``alpha = a + b rho`` with ``0 <= a <= b`` and norm ``a^2 + ab + b^2 >= 2``.
    n : int, default 1
        Number of dimensions (Cartesian product of n copies); the first coordinate is the paper's dimension n.

    Returns
    -------
    Topology
        ``N(alpha)^n`` nodes, degree 6n, arcs labelled ``+rho`` (n = 1) or ``d0:+rho`` (dimension index 0 =
        paper dimension n).

    Raises
    ------
    TopocastError
        For a > b, negative values, norm < 2 or n < 1.

    Examples
    --------
    >>> eisenstein_jacobi(3, 4).num_nodes
    37
    """
    a, b, n = check_alpha(a, b, n)
    one = ej_1d(a, b)
    if n == 1:
        return one
    ring = ej_ring(a, b)
    prod = cartesian_product([one] * n, "ej", {"a": a, "b": b, "n": n}, meta=_meta(ring, n))
    return Topology("ej", prod.params, prod.indptr, prod.indices, prod.arc_labels, prod.label_names,
                    codec=EJCodec(ring, n), vertex_transitive=True, meta=prod.meta)


def _estimate(a: int, b: int, n: int = 1) -> tuple[int | float, int | float]:
    a, b, n = check_alpha(a, b, n)
    from ..infra.memory import power

    nodes = power(a * a + a * b + b * b, n)
    return nodes, 6 * n * nodes


register_family(Family(
    name="ej",
    builder=eisenstein_jacobi,
    params=(Param("a", "int", doc="alpha = a + b rho, 0 <= a <= b"),
            Param("b", "int", doc="alpha = a + b rho, a^2 + ab + b^2 >= 2"),
            Param("n", "int", 1, "number of dimensions (EJ^(n) = product of n copies)")),
    doc="Eisenstein-Jacobi network EJ_alpha^(n) (Hussain 2018)",
    aliases=("eisenstein-jacobi",),
    estimate=_estimate,
    example="ej:a=3,b=4,n=3",
))
