"""Hierarchical dual-nets HDN(B, k, S), recursive dual-nets RDN(m, k) and dual-cubes.

Li, Peng and Chu, "Hierarchical Dual-Net: A Flexible Interconnection Network
and its Routing Algorithm", IJNC 2(2), 2012 (``../shared/papers/hierarchical-dual-net.md``).

Construction (section 2).  The base ``B = B_1 x ... x B_r`` is a Cartesian
product of symmetric factors (rings ``C_n``, complete graphs ``K_n``,
hypercubes ``Q_d``).  ``HDN(B, 0) = B``.  The level-``i`` super-node ``SN^i``
is a sub-product of ``B`` over a subset ``F_i`` of the factors, ``s_i =
|SN^i|``.  ``HDN(B, i)`` takes ``2 n_i`` copies (clusters) of ``HDN(B, i-1)``,
``n_i = N_{i-1} / s_i`` per class, and joins node ``(C, U, SN, N)`` to
``(1-C, SN, U, N)`` by a level-``i`` cross link.  ``N_i = 2 N_{i-1}^2 / s_i``
(the recurrence; the closed form printed in the abstract and Theorem 1 is
wrong for ``k >= 2``, see ``../shared/design/errata.md``).

Labelling (our choice; the paper's Table 4 cannot hold together with its
text, see the errata).  Every node of ``HDN(B, i)`` lies in one copy of ``B``:
write it ``(copy, a)`` with ``a`` its base node.  Its index (serial) at level
``i`` is ``copy * N_0 + perm_i(a)``, where ``perm_i`` lists the base
coordinates outside ``F_i`` first (most significant) and those of ``F_i``
last.  Then the serial splits as mixed radix ``(C, U, SN, N)`` with radices
``(2, n_i, n_i, s_i)``: ``N`` is the position of ``a`` inside its super-node
(the ``F_i`` coordinates), and ``SN = copy_{i-1} * (N_0 / s_i) + (a's other
coordinates)``.  A level-``i`` super-node is therefore exactly the ``F_i``
sub-product of one base copy: connected, of diameter ``D(SN^i)``.  The
re-indexing between levels keeps ``(copy, a)`` and permutes the base digits.
The node indices of the built :class:`Topology` are the level-``k`` serials.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .classic import complete, hypercube, ring
from .core import MixedRadixCodec, Topology
from .product import cartesian_product

MAX_FACTORS = 16
#: HDN(B, k) has at least 2^(2^k) nodes (N_i >= N_{i-1}^2 with N_0 >= 2), so k = 6 is
#: already past 10^19 nodes; the cap keeps the size arithmetic of the memory guard finite
MAX_LEVELS = 16


@dataclass(frozen=True)
class BaseFactor:
    """One symmetric factor of a base network: ``C_n`` ring, ``K_n`` complete graph or ``Q_d`` cube."""

    kind: str  # "ring", "complete" or "hypercube"
    param: int

    @property
    def name(self) -> str:
        """Short name: ``C5``, ``K4`` or ``Q3``."""
        return {"ring": "C", "complete": "K", "hypercube": "Q"}[self.kind] + str(self.param)

    @property
    def size(self) -> int:
        """Nodes of the factor."""
        return 1 << self.param if self.kind == "hypercube" else self.param

    @property
    def diameter(self) -> int:
        """Diameter of the factor."""
        return {"ring": self.param // 2, "complete": 1, "hypercube": self.param}[self.kind]

    @property
    def ports(self) -> int:
        """Ports per node (a ring of two is a double link: two ports)."""
        return {"ring": 2, "complete": self.param - 1, "hypercube": self.param}[self.kind]

    @property
    def broadcast_steps(self) -> int:
        """One-port broadcast time ``T(B_i)`` of the schedule we use in this factor.

        Ring: both directions, ``ceil(n/2)``; complete graph: doubling,
        ``ceil(log2 n)``; hypercube: one dimension per step, ``d``.
        """
        if self.kind == "ring":
            return (self.param + 1) // 2
        if self.kind == "complete":
            return math.ceil(math.log2(self.param))
        return self.param

    def topology(self) -> Topology:
        """Build the factor as a network.

        Returns
        -------
        Topology
            The ring, complete graph or hypercube.
        """
        return {"ring": ring, "complete": complete, "hypercube": hypercube}[self.kind](self.param)


def parse_factor(token: str, owner: str = "hdn", param: str = "base") -> BaseFactor:
    """Read one factor of a base network: ``5`` or ``C5`` (ring), ``K4`` (complete), ``Q3`` (hypercube).

    ``P2`` is ``K2``; other paths are refused (not symmetric).

    Parameters
    ----------
    token : str
        The factor's text.
    owner : str, default "hdn"
        Family name for error messages.
    param : str, default "base"
        The spec parameter the token came from, for error messages.

    Returns
    -------
    BaseFactor
        The factor.

    Raises
    ------
    TopocastError
        An unreadable or non-symmetric factor, a size too small, or a hypercube of dimension over 30.
    """
    text = token.strip().upper()
    kind_letter, digits = (text[0], text[1:]) if text[:1].isalpha() else ("C", text)
    if not digits.isdigit():
        raise TopocastError(f"{owner}: parameter '{param}' has an unreadable factor '{token}' "
                            "(use 5 or C5 for a ring, K4 complete, Q3 hypercube"
                            + (", d0 for the first base factor)" if param == "s" else ")"))
    value = int(digits)
    if kind_letter == "P":
        if value == 2:
            return BaseFactor("complete", 2)
        raise TopocastError(f"{owner}: parameter '{param}' factor '{token}' is not symmetric: a path of "
                            f"{value} nodes is not vertex-transitive (use rings C_n, complete graphs K_n "
                            "or hypercubes Q_d)")
    kinds = {"C": "ring", "K": "complete", "Q": "hypercube"}
    if kind_letter not in kinds:
        raise TopocastError(f"{owner}: parameter '{param}' factor '{token}' is not a symmetric component "
                            "(use rings C_n, complete graphs K_n or hypercubes Q_d)")
    kind = kinds[kind_letter]
    minimum = {"ring": 2, "complete": 2, "hypercube": 1}[kind]
    if value < minimum:
        raise TopocastError(f"{owner}: parameter '{param}' factor '{token}' must have size >= {minimum}")
    if kind == "hypercube" and value > 30:
        raise TopocastError(f"{owner}: parameter '{param}' factor '{token}' must have dimension <= 30")
    return BaseFactor(kind, value)


def parse_base(base: str | Sequence, owner: str = "hdn") -> tuple[BaseFactor, ...]:
    """Read the factors of a base spec such as ``2x3x5`` (a 2 x 3 x 5 torus), ``K4xC5`` or ``Q3``.

    Parameters
    ----------
    base : str or sequence
        The base spec, or its factor tokens.
    owner : str, default "hdn"
        Family name for error messages.

    Returns
    -------
    tuple of BaseFactor
        The factors, in order.

    Raises
    ------
    TopocastError
        No factor, more than ``MAX_FACTORS``, or a factor :func:`parse_factor` refuses.
    """
    # no factor name contains an 'x'
    tokens = [str(t) for t in base] if isinstance(base, (tuple, list)) else re.split(r"[xX*]", str(base))
    tokens = [t for t in tokens if t.strip()]
    if not tokens:
        raise TopocastError(f"{owner}: parameter 'base' needs at least one factor, e.g. base=2x3x5")
    if len(tokens) > MAX_FACTORS:
        raise TopocastError(f"{owner}: parameter 'base' must have <= {MAX_FACTORS} factors, got {len(tokens)}")
    return tuple(parse_factor(t, owner) for t in tokens)


def _subset_by_size(factors: tuple[BaseFactor, ...], size: int, level: int, owner: str) -> tuple[int, ...]:
    """Find the factor subset of product ``size``: the first in lexicographic order of positions."""
    best = None
    for r in range(len(factors) + 1):
        for combo in itertools.combinations(range(len(factors)), r):
            if math.prod(factors[i].size for i in combo) == size and (best is None or combo < best):
                best = combo
    if best is None:
        sizes = "x".join(str(f.size) for f in factors)
        raise TopocastError(f"{owner}: parameter 's' entry s_{level}={size} must be a product of a subset of "
                            f"the base factor sizes {sizes} (or 1)")
    return best


def _subset_by_names(factors: tuple[BaseFactor, ...], text: str, level: int, owner: str) -> tuple[int, ...]:
    """Factors named in ``text``: ``C5``/``5`` (the first such factor not yet taken) or ``d2`` (position 2)."""
    chosen: list[int] = []
    for token in re.split(r"[xX*]", text):
        token = token.strip()
        position = re.fullmatch(r"[dD](\d+)", token)
        if position:
            i = int(position.group(1))
            if i >= len(factors):
                raise TopocastError(f"{owner}: parameter 's' entry s_{level}='{text}' names position '{token}', "
                                    f"but the base has factors d0..d{len(factors) - 1}")
            match = [i] if i not in chosen else []
        elif token.isdigit():
            match = [i for i, f in enumerate(factors) if f.size == int(token) and i not in chosen]
        else:
            name = parse_factor(token, owner, "s").name
            match = [i for i, f in enumerate(factors) if f.name == name and i not in chosen]
        if not match:
            raise TopocastError(f"{owner}: parameter 's' entry s_{level}='{text}' names factor '{token}', "
                                f"which the base {'x'.join(f.name for f in factors)} has no (more) of")
        chosen.append(match[0])
    return tuple(sorted(chosen))


def parse_supernodes(s, factors: tuple[BaseFactor, ...], k: int | None, owner: str = "hdn"
                     ) -> tuple[tuple[int, ...], ...]:
    """Read the factor subsets ``F_1 .. F_k`` of the super-nodes from ``6/15``, ``2x3/3x5`` or sizes.

    An entry that is a bare integer is a size (the first matching subset of factors, in lexicographic order
    of positions); an entry with ``x`` or a letter names factors (``C5``, ``K4``, or ``d2`` for the factor at
    position 2, which tells repeated factors apart).  Empty ``s`` means ``s_i = 1`` at every level.

    Parameters
    ----------
    s : str or sequence or None
        The super-nodes, one entry per level separated by ``/``.
    factors : tuple of BaseFactor
        The base factors.
    k : int or None
        Number of levels; None: the number of entries of ``s``.
    owner : str, default "hdn"
        Family name for error messages.

    Returns
    -------
    tuple of tuple of int
        Factor positions of every level's super-node.

    Raises
    ------
    TopocastError
        Neither ``k`` nor ``s`` given, a count of entries other than ``k``, an empty entry, or an entry that
        matches no subset of the factors.
    """
    if s is None or (isinstance(s, str) and not s.strip()):
        if k is None:
            raise TopocastError(f"{owner}: parameter 'k' is required when 's' is not given")
        entries: list = ["1"] * k
    elif isinstance(s, str):
        entries = [e.strip() for e in s.split("/")]
    else:
        entries = [str(e) if not isinstance(e, (tuple, list)) else "x".join(map(str, e)) for e in s]
    if k is not None and len(entries) != k:
        raise TopocastError(f"{owner}: parameter 's' must list k={k} super-nodes (s_1/.../s_k), got {len(entries)}")
    subsets = []
    for level, entry in enumerate(entries, 1):
        if not entry:
            raise TopocastError(f"{owner}: parameter 's' has an empty entry at level {level}")
        if entry.isdigit():
            subsets.append(_subset_by_size(factors, int(entry), level, owner))
        else:
            subsets.append(_subset_by_names(factors, entry, level, owner))
    return tuple(subsets)


class HDNLayout:
    """Sizes, labels and re-indexing of HDN(B, k, S); no adjacency (cheap to make).

    Level-``j`` serials, for ``0 <= j <= k``, are ``copy * N_0 + perm_j(a)``
    (``perm_0`` is the identity).  All methods take and return numpy arrays.
    """

    def __init__(self, factors: Sequence[BaseFactor], supernodes: Sequence[Sequence[int]]):
        self.factors = tuple(factors)
        self.supernodes = tuple(tuple(sorted(f)) for f in supernodes)
        self.k = len(self.supernodes)
        self.base_sizes = tuple(f.size for f in self.factors)
        self.base_codec = MixedRadixCodec(self.base_sizes, [f"b{i}" for i in range(len(self.factors))])
        self.N0 = math.prod(self.base_sizes)
        self.s = tuple(math.prod(self.base_sizes[i] for i in f) for f in self.supernodes)
        sizes = [self.N0]
        clusters = [1]
        for s_i in self.s:
            clusters.append(sizes[-1] // s_i)
            sizes.append(2 * sizes[-1] * clusters[-1])
        self.sizes = tuple(sizes)          # N_0 .. N_k
        self.clusters = tuple(clusters)    # n_0 (unused) .. n_k: clusters per class at level i

    # -- figures ----------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        """Nodes of HDN(B, k, S): ``N_k``."""
        return self.sizes[-1]

    @property
    def base_degree(self) -> int:
        """Ports per node in the base network."""
        return sum(f.ports for f in self.factors)

    @property
    def degree(self) -> int:
        """Ports per node: the base ports plus one cross link per level."""
        return self.base_degree + self.k

    def subproduct_diameter(self, subset: Sequence[int]) -> int:
        """Give the diameter of the sub-product of the base over some factors.

        Parameters
        ----------
        subset : sequence of int
            Factor positions.

        Returns
        -------
        int
            Sum of the factors' diameters.
        """
        return sum(self.factors[i].diameter for i in subset)

    def subproduct_broadcast(self, subset: Sequence[int]) -> int:
        """Give the one-port broadcast steps of the sub-product of the base over some factors.

        Parameters
        ----------
        subset : sequence of int
            Factor positions.

        Returns
        -------
        int
            Sum of the factors' broadcast steps.
        """
        return sum(self.factors[i].broadcast_steps for i in subset)

    @property
    def base_diameter(self) -> int:
        """Diameter of the base network."""
        return self.subproduct_diameter(range(len(self.factors)))

    def theorem_bound(self, base_value: int, supernode_values: Sequence[int]) -> int:
        """Evaluate the paper's bound ``2^k X(B) - sum_j 2^j X(SN^{k-j}) + 2^{k+1} - 2`` (Theorems 1, 2, 3).

        Parameters
        ----------
        base_value : int
            The figure ``X`` (diameter, broadcast steps, ...) of the base.
        supernode_values : sequence of int
            The same figure for the super-node of every level, 1..k.

        Returns
        -------
        int
            The bound.
        """
        k = self.k
        return (2 ** k * base_value - sum(2 ** j * supernode_values[k - 1 - j] for j in range(k))
                + 2 ** (k + 1) - 2)

    @property
    def theorem1_diameter(self) -> int:
        """Theorem 1's diameter bound of HDN(B, k, S)."""
        return self.theorem_bound(self.base_diameter, [self.subproduct_diameter(f) for f in self.supernodes])

    @property
    def closed_form_nodes(self) -> float:
        """The paper's printed closed form ``(2 N_0)^(2^k) / (2 prod s_i)`` (wrong for k >= 2)."""
        return (2 * self.N0) ** (2 ** self.k) / (2 * math.prod(self.s))

    # -- base digits and per-level permutations ---------------------------
    def base_coords(self, a) -> np.ndarray:
        """Give the base coordinates of base nodes.

        Parameters
        ----------
        a : array_like
            Base node indices.

        Returns
        -------
        numpy.ndarray
            One row of factor coordinates per node.
        """
        return self.base_codec.decode_array(a)

    @cached_property
    def _perms(self) -> list[np.ndarray]:
        """``perm[j][a]`` = position of base node ``a`` in level-``j`` order."""
        coords = self.base_coords(np.arange(self.N0))
        perms = [np.arange(self.N0, dtype=np.int64)]
        for subset in self.supernodes:
            order = [i for i in range(len(self.factors)) if i not in subset] + list(subset)
            radices = [self.base_sizes[i] for i in order]
            perms.append(MixedRadixCodec(radices).encode_array(coords[:, order]))
        return perms

    @cached_property
    def _inverse_perms(self) -> list[np.ndarray]:
        out = []
        for p in self._perms:
            inv = np.empty_like(p)
            inv[p] = np.arange(len(p))
            out.append(inv)
        return out

    def perm(self, level: int) -> np.ndarray:
        """Give the base-node permutation ``perm_level`` (factors outside ``F_level`` first).

        Parameters
        ----------
        level : int
            The level, 0..k.

        Returns
        -------
        numpy.ndarray
            ``perm[a]`` for every base node ``a``.
        """
        return self._perms[level]

    def inverse_perm(self, level: int) -> np.ndarray:
        """Give the inverse of :meth:`perm`.

        Parameters
        ----------
        level : int
            The level, 0..k.

        Returns
        -------
        numpy.ndarray
            The inverse permutation.
        """
        return self._inverse_perms[level]

    def split(self, level: int, serial) -> tuple[np.ndarray, np.ndarray]:
        """Split level-``level`` serials into ``(copy, a)``: base copy and base node.

        Parameters
        ----------
        level : int
            The level.
        serial : array_like
            Serials at that level.

        Returns
        -------
        tuple of numpy.ndarray
            ``(copy, a)``.
        """
        serial = np.asarray(serial, dtype=np.int64)
        return serial // self.N0, self._inverse_perms[level][serial % self.N0]

    def join(self, level: int, copy, a) -> np.ndarray:
        """Join ``(copy, a)`` into level-``level`` serials (inverse of :meth:`split`).

        Parameters
        ----------
        level : int
            The level.
        copy, a : array_like
            Base copy and base node.

        Returns
        -------
        numpy.ndarray
            The serials.
        """
        return np.asarray(copy, dtype=np.int64) * self.N0 + self._perms[level][np.asarray(a, dtype=np.int64)]

    def to_cluster(self, level: int, serial) -> tuple[np.ndarray, np.ndarray]:
        """Map a level-``level`` serial to its cluster ``C*n + U`` and its level-``level-1`` serial inside it.

        Parameters
        ----------
        level : int
            The level, >= 1.
        serial : array_like
            Serials at that level.

        Returns
        -------
        tuple of numpy.ndarray
            ``(cluster, serial below)``.
        """
        serial = np.asarray(serial, dtype=np.int64)
        inner = self.sizes[level - 1]
        return serial // inner, self.down(level, serial % inner)

    def down(self, level: int, y: np.ndarray) -> np.ndarray:
        """Map an in-cluster position ``y = SN*s + N`` at ``level`` to the level-``level-1`` serial.

        Parameters
        ----------
        level : int
            The level, >= 1.
        y : numpy.ndarray
            In-cluster positions.

        Returns
        -------
        numpy.ndarray
            Serials one level down.
        """
        return y // self.N0 * self.N0 + self._perms[level - 1][self._inverse_perms[level][y % self.N0]]

    def up(self, level: int, z: np.ndarray) -> np.ndarray:
        """Map a level-``level-1`` serial to the in-cluster position at ``level`` (inverse of :meth:`down`).

        Parameters
        ----------
        level : int
            The level, >= 1.
        z : numpy.ndarray
            Serials one level down.

        Returns
        -------
        numpy.ndarray
            In-cluster positions.
        """
        return z // self.N0 * self.N0 + self._perms[level][self._inverse_perms[level - 1][z % self.N0]]

    def from_cluster(self, level: int, cluster, serial_below) -> np.ndarray:
        """Map a cluster and a level-``level-1`` serial inside it to the level-``level`` serial.

        Parameters
        ----------
        level : int
            The level, >= 1.
        cluster : array_like
            Clusters ``C*n + U``.
        serial_below : array_like
            Serials inside the cluster, one level down.

        Returns
        -------
        numpy.ndarray
            Serials at ``level``.
        """
        below = np.asarray(serial_below, dtype=np.int64)
        return np.asarray(cluster, dtype=np.int64) * self.sizes[level - 1] + self.up(level, below)

    # -- level labels and cross links --------------------------------------
    def decode(self, level: int, serial) -> tuple[np.ndarray, ...]:
        """Give the label ``(C, U, SN, N)`` of level-``level`` serials (``level >= 1``).

        Parameters
        ----------
        level : int
            The level.
        serial : array_like
            Serials.

        Returns
        -------
        tuple of numpy.ndarray
            Class, cluster, super-node and position in the super-node.
        """
        serial = np.asarray(serial, dtype=np.int64)
        n, s = self.clusters[level], self.s[level - 1]
        return serial // (n * n * s), serial // (n * s) % n, serial // s % n, serial % s

    def encode(self, level: int, c, u, sn, node) -> np.ndarray:
        """Give the level-``level`` serials of labels ``(C, U, SN, N)`` (inverse of :meth:`decode`).

        Parameters
        ----------
        level : int
            The level, >= 1.
        c, u, sn, node : array_like
            Class, cluster, super-node and position in the super-node.

        Returns
        -------
        numpy.ndarray
            Serials.
        """
        n, s = self.clusters[level], self.s[level - 1]
        return ((np.asarray(c, dtype=np.int64) * n + u) * n + sn) * s + node

    def cross(self, level: int, serial) -> np.ndarray:
        """Give the level-``level`` cross neighbour: ``(C, U, SN, N) -> (1-C, SN, U, N)``.

        Parameters
        ----------
        level : int
            The level, >= 1.
        serial : array_like
            Serials at that level.

        Returns
        -------
        numpy.ndarray
            Serials of the cross neighbours.
        """
        c, u, sn, node = self.decode(level, serial)
        return self.encode(level, 1 - c, sn, u, node)

    def level_serial(self, level: int, serial_k) -> tuple[np.ndarray, np.ndarray]:
        """Map level-``k`` serials to their level-``level`` sub-HDN instance and the serial inside it.

        Parameters
        ----------
        level : int
            The level, 0..k.
        serial_k : array_like
            Serials of the whole network.

        Returns
        -------
        tuple of numpy.ndarray
            ``(instance, serial inside it)``.
        """
        copy, a = self.split(self.k, serial_k)
        copies_per = self.sizes[level] // self.N0
        return copy // copies_per, self.join(level, copy % copies_per, a)

    def from_level_serial(self, level: int, instance, serial) -> np.ndarray:
        """Map a sub-HDN instance and a serial inside it to the level-``k`` serial (inverse of :meth:`level_serial`).

        Parameters
        ----------
        level : int
            The level, 0..k.
        instance : array_like
            Sub-HDN instances.
        serial : array_like
            Serials inside them.

        Returns
        -------
        numpy.ndarray
            Serials of the whole network.
        """
        copy, a = self.split(level, serial)
        return self.join(self.k, np.asarray(instance, dtype=np.int64) * (self.sizes[level] // self.N0) + copy, a)

    def codec(self) -> HDNCodec:
        """Make the label codec of the built network.

        Returns
        -------
        HDNCodec
            Node index <-> level-``k`` label ``(C, U, SN, N)``.
        """
        return HDNCodec(self)

    def spec_s(self) -> str:
        """Write the canonical ``s`` text, which parses back to the same factor subsets.

        A size where the size alone picks this subset, else factor names where they do, else positions
        (``d0xd2``).

        Returns
        -------
        str
            Entries separated by ``/``.
        """
        entries = []
        for level, (subset, size) in enumerate(zip(self.supernodes, self.s, strict=False), 1):
            if _subset_by_size(self.factors, size, level, "hdn") == subset:
                entries.append(str(size))
                continue
            names = "x".join(self.factors[i].name for i in subset)
            if _subset_by_names(self.factors, names, level, "hdn") == subset:
                entries.append(names)
            else:
                entries.append("x".join(f"d{i}" for i in subset))
        return "/".join(entries)


class HDNCodec(MixedRadixCodec):
    """Node index <-> level-``k`` label ``(C, U, SN, N)``; radices ``(2, n_k, n_k, s_k)``."""

    def __init__(self, layout: HDNLayout):
        self.layout = layout
        super().__init__((2, layout.clusters[-1], layout.clusters[-1], layout.s[-1]), ("C", "U", "SN", "N"))


def _neighbour_table(layout: HDNLayout, base: Topology) -> tuple[np.ndarray, np.ndarray]:
    """Dense ``(N_k, d0 + k)`` neighbour and label tables, built level by level without Python loops per node."""
    d0 = layout.base_degree
    table = base.indices.reshape(layout.N0, d0).astype(np.int64)
    labels = base.arc_labels.reshape(layout.N0, d0).astype(np.int16)
    nlab = len(base.label_names)
    for level in range(1, layout.k + 1):
        inner = layout.sizes[level - 1]
        y = np.arange(inner, dtype=np.int64)
        z = layout.down(level, y)                 # level-(i-1) serial of in-cluster position y
        relabelled = layout.up(level, table[z])   # neighbours, as in-cluster positions
        lab = labels[z]
        del table, labels
        nclusters = 2 * layout.clusters[level]
        offsets = np.arange(nclusters, dtype=np.int64)[:, None, None] * inner
        width = relabelled.shape[1] + 1
        new = np.empty((nclusters, inner, width), dtype=np.int64)
        np.add(relabelled[None, :, :], offsets, out=new[:, :, :-1])
        new[:, :, -1] = layout.cross(level, np.arange(nclusters * inner, dtype=np.int64)).reshape(nclusters, inner)
        table = new.reshape(nclusters * inner, width)
        labels = np.empty((nclusters, inner, width), dtype=np.int16)
        labels[:, :, :-1] = lab[None]
        labels[:, :, -1] = nlab + level - 1
        labels = labels.reshape(nclusters * inner, width)
    return table, labels


def _sorted_csr(table: np.ndarray, labels: np.ndarray, nlabels: int) -> tuple[np.ndarray, np.ndarray]:
    """Sort each row by (neighbour, label) in place; returns (indices, arc_labels) flat."""
    shift = max(1, int(nlabels - 1).bit_length())
    key = table
    key <<= shift
    key |= labels
    key.sort(axis=1)
    out_labels = np.empty(key.shape, dtype=np.int16)
    chunk = 1 << 20
    mask = (1 << shift) - 1
    for lo in range(0, key.shape[0], chunk):
        out_labels[lo:lo + chunk] = key[lo:lo + chunk] & mask
    key >>= shift
    return key.reshape(-1), out_labels.reshape(-1)


def _vertex_transitive(layout: HDNLayout) -> bool:
    """Proven cases only: k = 1, or every s_i = 1 (RDN), or nested super-nodes F_k within ... within F_1.

    The translations of a product of Cayley graphs, applied independently to
    the cluster number and to the node of each class, plus the class swap, act
    transitively on the dual-construction; with nested super-nodes they also
    respect the super-node partition of the next level.  Other cases are
    checked by sampled eccentricities in the reproduction, not assumed.
    """
    if layout.k == 1 or all(s == 1 for s in layout.s):
        return True
    return all(set(layout.supernodes[i]) <= set(layout.supernodes[i - 1]) for i in range(1, layout.k))


def _layout(base, k, s, owner: str) -> HDNLayout:
    if k is None and isinstance(s, str) and s.strip():
        k = len(s.split("/"))  # k defaults to the number of super-nodes listed
    if k is None:
        raise TopocastError(f"{owner}: parameter 'k' is required when 's' is not given (e.g. k=2)")
    k = integer(k, "k", owner=owner, minimum=1)
    if k > MAX_LEVELS:
        raise TopocastError(f"{owner}: parameter 'k' must be <= {MAX_LEVELS} (HDN(B,k) has at least "
                            f"2^(2^k) nodes), got {k}")
    factors = parse_base(base, owner)
    return HDNLayout(factors, parse_supernodes(s, factors, k, owner))


def _base_text(factors: Sequence[BaseFactor]) -> str:
    return "x".join(str(f.param) if f.kind == "ring" else f.name for f in factors)


def build_from_layout(layout: HDNLayout, family: str = "hdn", params: dict | None = None,
                      spec: str | None = None) -> Topology:
    """Build the :class:`Topology` of a layout (vectorised; 6.48 million nodes in a few seconds).

    Parameters
    ----------
    layout : HDNLayout
        The sizes and labels.
    family : str, default "hdn"
        Family name (``hdn``, ``rdn``, ``dualcube``).
    params : dict, optional
        Parameters recorded on the result.
    spec : str, optional
        Canonical spec (default from the layout).

    Returns
    -------
    Topology
        The network; arc labels are the base's and ``cross1 .. crossk``.

    Raises
    ------
    TopocastError
        If the base network is not regular.
    """
    base = cartesian_product([f.topology() for f in layout.factors])
    if not np.all(base.port_degree == layout.base_degree):
        raise TopocastError(f"{family}: the base network is not regular")
    table, labels = _neighbour_table(layout, base)
    label_names = list(base.label_names) + [f"cross{i}" for i in range(1, layout.k + 1)]
    indices, arc_labels = _sorted_csr(table, labels, len(label_names))
    n = layout.num_nodes
    indptr = np.arange(n + 1, dtype=np.int64) * layout.degree
    base_txt = _base_text(layout.factors)
    spec = spec or f"hdn:base={base_txt},k={layout.k},s={layout.spec_s()}"
    params = params or {"base": base_txt, "k": layout.k, "s": layout.spec_s()}
    meta = {
        "spec": spec,
        "base": "x".join(f.name for f in layout.factors),
        "base_nodes": layout.N0,
        "base_degree": layout.base_degree,
        "supernodes": ["x".join(layout.factors[i].name for i in f) or "1" for f in layout.supernodes],
        "supernode_sizes": list(layout.s),
        "level_nodes": list(layout.sizes),
        "clusters_per_class": list(layout.clusters[1:]),
        "theorem1_diameter": layout.theorem1_diameter,
        "paper_closed_form_nodes": layout.closed_form_nodes,
    }
    return Topology(family, params, indptr, indices, arc_labels, label_names, codec=layout.codec(),
                    vertex_transitive=_vertex_transitive(layout), meta=meta)


def hierarchical_dual_net(base: str | Sequence = "2x3x5", k: int | None = None,
                          s: str | Sequence | None = None) -> Topology:
    """Build the hierarchical dual-net HDN(B, k, S) (Li, Peng and Chu 2012, section 2).

    Every level takes ``2 n_i`` copies of the level below and joins them by cross links between super-nodes;
    the sizes grow as ``N_i = 2 N_{i-1}^2 / s_i``.

    Parameters
    ----------
    base : str or sequence, default "2x3x5"
        Factors of the base network ``B``, e.g. ``"2x3x5"`` (the 2 x 3 x 5 torus of the paper), ``"K4xC5"``,
        ``"Q3"``.
    k : int, optional
        Number of dual-constructions, ``>= 1`` (default: the number of ``s`` entries).
    s : str or sequence, optional
        Super-nodes ``s_1/.../s_k`` by size (``"6/15"``), by factors (``"2x3/3x5"``) or by factor positions
        (``"d0xd1/d1xd2"``, which tells repeated factors apart); default all 1 (the recursive dual-net).

    Returns
    -------
    Topology
        Node labels ``(C, U, SN, N)`` at level k.

    Raises
    ------
    TopocastError
        For an asymmetric factor, ``k < 1`` or ``k > 16``, or an ``s_i`` that is not the product of a subset
        of the factor sizes.

    Examples
    --------
    >>> hierarchical_dual_net("2x3x5", 2, "6/15").num_nodes
    12000
    """
    layout = _layout(base, k, s, "hdn")
    return build_from_layout(layout)


def recursive_dual_net(base: str | Sequence = "Q3", k: int = 1) -> Topology:
    """Build the recursive dual-net RDN(B, k): the HDN with every ``s_i = 1`` (Li, Peng and Chu 2009).

    Parameters
    ----------
    base : str or sequence, default "Q3"
        Factors of the base network.
    k : int, default 1
        Number of dual-constructions, >= 1.

    Returns
    -------
    Topology
        The network, family ``rdn``.

    Raises
    ------
    TopocastError
        As :func:`hierarchical_dual_net`.

    Examples
    --------
    >>> recursive_dual_net("Q3", 1).num_nodes
    128
    """
    layout = _layout(base, k, None, "rdn")
    base_txt = _base_text(layout.factors)
    return build_from_layout(layout, "rdn", {"base": base_txt, "k": layout.k},
                             spec=f"rdn:base={base_txt},k={layout.k}")


def dual_cube(n: int) -> Topology:
    """Build the dual-cube DC(n): one dual-construction on the (n-1)-cube (Li and Peng 2000).

    ``2^(2n-1)`` nodes, degree n, diameter 2n: Table 2's Dual-Cube(n); clusters are (n-1)-cubes.

    Parameters
    ----------
    n : int
        Node degree, >= 2.

    Returns
    -------
    Topology
        The network, family ``dualcube``.

    Raises
    ------
    TopocastError
        If ``n`` is not an integer >= 2 (the size is checked by :func:`topocast.build`, not here).

    Examples
    --------
    >>> dual_cube(3).num_nodes
    32
    """
    n = integer(n, "n", owner="dualcube", minimum=2)
    layout = HDNLayout((BaseFactor("hypercube", n - 1),), ((),))
    return build_from_layout(layout, "dualcube", {"n": n}, spec=f"dualcube:{n}")


#: beyond this the memory guard's figures would overflow a float; no such network is buildable
ASTRONOMICAL = 10 ** 30


def _estimate_layout(layout: HDNLayout) -> tuple[int, int]:
    if layout.num_nodes > ASTRONOMICAL:
        raise TopocastError(f"max-memory: HDN(B,{layout.k},S) on base {'x'.join(f.name for f in layout.factors)} "
                            f"has about 10^{int(math.log10(layout.num_nodes))} nodes; nothing that size can be built")
    return layout.num_nodes, layout.num_nodes * layout.degree


def _dualcube_estimate(n: int) -> tuple[int | float, int | float]:
    """DC(n): 2^(2n-1) nodes of degree n, without building a layout for absurd n."""
    from ..infra.memory import power

    n = integer(n, "n", owner="dualcube", minimum=2)
    if n > 10000:  # beyond, the layout's exact 2^(2n-1) would be a huge integer
        nodes = power(2, 2 * n - 1)
        return nodes, n * nodes
    return _estimate_layout(HDNLayout((BaseFactor("hypercube", n - 1),), ((),)))


def _orbits(topology: Topology) -> np.ndarray:
    from .hdn_symmetry import hdn_orbits

    return hdn_orbits(topology)


def hdn_layout(topology: Topology) -> HDNLayout:
    """Give the layout behind a built hdn, rdn or dualcube topology.

    Parameters
    ----------
    topology : Topology
        A hierarchical dual-net.

    Returns
    -------
    HDNLayout
        Its sizes, labels and re-indexing.

    Raises
    ------
    TopocastError
        If the network is not a hierarchical dual-net.
    """
    codec = topology.codec
    if not isinstance(codec, HDNCodec):
        raise TopocastError(f"{topology.family}: not a hierarchical dual-net")
    return codec.layout


# the family router (Algorithm 1) is attached by topocast.algorithms.hdn_routing (registry.attach_router)
register_family(Family(
    name="hdn",
    builder=hierarchical_dual_net,
    params=(Param("base", "str", doc="base factors, e.g. 2x3x5 (torus), K4xC5, Q3"),
            Param("k", "int", None, doc="levels (dual-constructions), >= 1; default: the length of s", minimum=1),
            Param("s", "str", None, doc="super-nodes s_1/.../s_k by size (6/15) or factors (2x3/3x5, or positions "
                                        "d0xd1); default all 1")),
    doc="hierarchical dual-net HDN(B,k,S) (Li, Peng, Chu 2012)",
    aliases=("hierarchical-dual-net",),
    estimate=lambda base, k=None, s=None: _estimate_layout(_layout(base, k, s, "hdn")),
    example="hdn:base=2x3x5,k=2,s=6/15",
    orbits=_orbits,
))
register_family(Family(
    name="rdn",
    builder=recursive_dual_net,
    params=(Param("base", "str", doc="base factors, e.g. Q3 or 2x3x5"),
            Param("k", "int", doc="dual-constructions, >= 1", minimum=1)),
    doc="recursive dual-net RDN(m,k): HDN with every s_i = 1",
    aliases=("recursive-dual-net",),
    estimate=lambda base, k: _estimate_layout(_layout(base, k, None, "rdn")),
    example="rdn:base=Q3,k=2",
    orbits=_orbits,
))
register_family(Family(
    name="dualcube",
    builder=dual_cube,
    params=(Param("n", "int", doc="dual-cube order: 2^(2n-1) nodes, degree n", minimum=2),),
    doc="dual-cube DC(n): dual-construction on the (n-1)-cube",
    aliases=("dual-cube",),
    positional="n",
    estimate=lambda n: _dualcube_estimate(n),
    example="dualcube:4",
    orbits=_orbits,
))
