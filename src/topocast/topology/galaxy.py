"""Galaxy graphs over finite fields (Zhuang et al. 2023, section 2.1; Lei et al. 2022).

A Galaxy graph has ``n`` clusters ``V_0 .. V_{n-1}`` of ``q`` nodes; the nodes of
a cluster are the elements of the field GF(q).  Inside a cluster, ``x ~ y``
when ``x - y`` lies in the generator set ``X`` (Definition 1).  Between
clusters ``V_s`` and ``V_t`` (``s < t``) every ``x`` of ``V_t`` joins ``H(x)``
of ``V_s``, where ``H`` is the isomorphism of Theorem 2:
``x - y in X  <=>  H(x) - H(y) in X'``.  In a Galaxyfly network every node of
this graph is a supernode of routers (``galaxyfly.py``).

Generator sets (following ``errata.md``, not the printed equations (1)/(2),
whose ``q = 4l - 1`` case lists ``xi^(4l-2) = 1`` twice), with ``xi`` the
primitive element and ``q = 4l + delta``:

* ``delta = 1``:  ``X`` = even powers of ``xi``, ``X' = xi X`` = odd powers;
* ``delta = -1``: ``X = {xi^e : e even, e <= 2l-2} U {xi^e : e odd, 2l-1 <= e <= 4l-3}``,
  ``X' = xi X``;
* ``delta = 0`` (``q = 2^k``, a prime power, not a prime): ``X`` = even powers
  ``xi^0 .. xi^(q-2)``, ``X' = xi X``.

``H(x) = xi x`` in all three cases.  Every build checks Theorem 2 (and that
``X = -X``, so the intra-cluster graph is undirected) over all pairs.

Field elements are numbered ``0..q-1``: residues for a prime ``q``, the
integer representation of ``galois`` (polynomial coefficients in base ``p``)
for a prime power.  ``q = 1`` is the degenerate field of one element (empty
``X``, ``H(0) = 0``): the Galaxy graph is then the complete graph ``K_n``,
the group graph of a Dragonfly.

Node index ``s = cluster * q + element`` (cluster-major).  The paper names it
``S_{s+1}``: for ``n = 3, q = 5, xi = 2`` node ``S8`` is cluster 1, element 2,
and its neighbours are ``S5, S7, S9, S12`` as in the worked examples.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology

INTRA, INTER = 0, 1


def prime_power(q: int) -> tuple[int, int] | None:
    """Factor ``q = p^k`` with ``p`` prime.

    Parameters
    ----------
    q : int
        The number.

    Returns
    -------
    tuple of int or None
        ``(p, k)``, or None when ``q`` is not a prime power.

    Examples
    --------
    >>> prime_power(9), prime_power(12)
    ((3, 2), None)
    """
    if q < 2:
        return None
    p = next((d for d in range(2, math.isqrt(q) + 1) if q % d == 0), q)
    k, rest = 0, q
    while rest % p == 0:
        rest //= p
        k += 1
    return (p, k) if rest == 1 else None


def _prime_factors(m: int) -> list[int]:
    out, d = [], 2
    while d * d <= m:
        if m % d == 0:
            out.append(d)
            while m % d == 0:
                m //= d
        d += 1
    if m > 1:
        out.append(m)
    return out


@dataclass(frozen=True, eq=False)
class FiniteField:
    """GF(q) over the element numbers ``0..q-1``, with O(q) tables only.

    ``power[e]`` is ``xi^e`` for ``e = 0..q-2`` and ``log`` its inverse
    (``log[0] = -1``); ``xi`` is the primitive element (the least primitive
    root for a prime, ``galois``'s primitive element for a prime power).
    Addition is digit-wise modulo the characteristic ``p`` on the base-``p``
    digits of the element numbers (``galois``'s integer representation; for a
    prime, plain residues), so no ``q x q`` table is ever built.
    """

    q: int
    characteristic: int
    degree: int
    xi: int
    power: np.ndarray
    log: np.ndarray

    def _combine(self, x, y, sign: int) -> np.ndarray:
        x, y = np.broadcast_arrays(np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64))
        p = self.characteristic
        if self.q == 1:
            return np.zeros(x.shape, dtype=np.int64)
        if self.degree == 1:
            return (x + sign * y) % p
        if p == 2:
            return x ^ y
        out = np.zeros(x.shape, dtype=np.int64)
        place = 1
        for _ in range(self.degree):
            out += ((x // place % p + sign * (y // place % p)) % p) * place
            place *= p
        return out

    def add(self, x, y) -> np.ndarray:
        """Add field elements elementwise (numpy broadcasting).

        Parameters
        ----------
        x, y : array_like
            Element numbers.

        Returns
        -------
        numpy.ndarray
            ``x + y``.
        """
        return self._combine(x, y, 1)

    def subtract(self, x, y) -> np.ndarray:
        """Subtract field elements elementwise (numpy broadcasting).

        Parameters
        ----------
        x, y : array_like
            Element numbers.

        Returns
        -------
        numpy.ndarray
            ``x - y``.
        """
        return self._combine(x, y, -1)

    def times_xi(self, x: np.ndarray) -> np.ndarray:
        """Multiply field elements by the primitive element ``xi``.

        Parameters
        ----------
        x : numpy.ndarray
            Element numbers.

        Returns
        -------
        numpy.ndarray
            ``xi * x``.
        """
        x = np.asarray(x, dtype=np.int64)
        if self.q == 1:
            return x
        out = np.zeros_like(x)
        nonzero = x != 0
        out[nonzero] = self.power[(self.log[x[nonzero]] + 1) % (self.q - 1)]
        return out


@lru_cache(maxsize=32)
def finite_field(q: int, owner: str = "galaxy") -> FiniteField:
    """Make GF(q) with O(q) tables, for ``q`` a prime power (or 1).

    Parameters
    ----------
    q : int
        The field size.
    owner : str, default "galaxy"
        Family name for error messages.

    Returns
    -------
    FiniteField
        The field (cached).

    Raises
    ------
    TopocastError
        When ``q`` is not a prime power or 1.
    """
    q = integer(q, "q", owner=owner)
    if q < 1:
        raise TopocastError(f"{owner}: parameter 'q' must be a prime power (or 1), got q={q}")
    if q == 1:
        return FiniteField(1, 1, 0, 0, np.zeros(0, np.int64), np.full(1, -1, np.int64))
    pk = prime_power(q)
    if pk is None:
        raise TopocastError(f"{owner}: parameter 'q' must be a prime power (or 1), got q={q}")
    p, k = pk
    if k == 1:
        factors = _prime_factors(q - 1)
        xi = next(g for g in range(1, q) if all(pow(g, (q - 1) // f, q) != 1 for f in factors)) if q > 2 else 1
        power = np.empty(q - 1, dtype=np.int64)
        value = 1
        for e in range(q - 1):
            power[e] = value
            value = value * xi % q
    else:
        import galois

        # galois would compile numba ufuncs for the field and its prime subfield (about 1.2 s per
        # characteristic, in every process); its pure-Python arithmetic takes milliseconds for these sizes
        galois.GF(p, compile="python-calculate")
        xi_elem = galois.GF(q, compile="python-calculate").primitive_element
        xi = int(xi_elem)
        power = np.asarray(xi_elem ** np.arange(q - 1), dtype=np.int64)
    log = np.full(q, -1, dtype=np.int64)
    log[power] = np.arange(q - 1)
    for arr in (power, log):
        arr.setflags(write=False)
    return FiniteField(q, p, k, xi, power, log)


@dataclass(frozen=True, eq=False)
class GeneratorSets:
    """``X``, ``X'`` (sorted element numbers), ``H`` as an array, ``q = 4l + delta``."""

    field: FiniteField
    delta: int
    l: int  # noqa: E741 -- the paper's q = 4l + delta
    X: np.ndarray
    X_prime: np.ndarray
    H: np.ndarray


def generator_sets(q: int, owner: str = "galaxy") -> GeneratorSets:
    """Find the generator sets ``X``, ``X'`` and the isomorphism ``H`` of GF(q), checked.

    Parameters
    ----------
    q : int
        The field size, ``4l + delta`` with ``delta`` in -1, 0, 1 (or 1).
    owner : str, default "galaxy"
        Family name for error messages.

    Returns
    -------
    GeneratorSets
        The sets.

    Raises
    ------
    TopocastError
        When ``q`` is not a prime power of that form.

    Examples
    --------
    >>> g = generator_sets(5)
    >>> g.X.tolist(), g.X_prime.tolist(), g.H.tolist()
    ([1, 4], [2, 3], [0, 2, 4, 1, 3])
    """
    q = integer(q, "q", owner=owner)
    field = finite_field(q, owner)
    if q == 1:
        empty = np.zeros(0, dtype=np.int64)
        return GeneratorSets(field, 1, 0, empty, empty, np.zeros(1, dtype=np.int64))
    rem = q % 4
    if rem == 2:
        raise TopocastError(f"{owner}: parameter 'q' must be 4l-1, 4l or 4l+1 for some l >= 1, got q={q}")
    delta = {1: 1, 3: -1, 0: 0}[rem]
    l = (q - delta) // 4  # noqa: E741 -- the paper's q = 4l + delta
    e = np.arange(q - 1)
    if delta == 1:
        chosen = e[(e % 2 == 0)]
    elif delta == -1:
        chosen = e[((e % 2 == 0) & (e <= 2 * l - 2)) | ((e % 2 == 1) & (e >= 2 * l - 1) & (e <= 4 * l - 3))]
    else:
        chosen = e[e % 2 == 0]
    X = np.unique(field.power[chosen])
    X_prime = np.unique(field.times_xi(X))
    H = field.times_xi(np.arange(q))
    sets = GeneratorSets(field, delta, l, X, X_prime, H)
    check_generator_sets(sets)
    return sets


def check_generator_sets(sets: GeneratorSets) -> None:
    """Check the generator sets: Theorem 2 over all pairs, ``X = -X``, ``|X| = (q - delta)/2``, ``X u X' = GF(q)*``.

    Parameters
    ----------
    sets : GeneratorSets
        The sets.

    Raises
    ------
    AssertionError
        Naming the first rule that fails.
    """
    field, q = sets.field, sets.field.q
    in_x = np.zeros(q, dtype=bool)
    in_x[sets.X] = True
    in_xp = np.zeros(q, dtype=bool)
    in_xp[sets.X_prime] = True
    if len(sets.X) != (q - sets.delta) // 2 or len(sets.X_prime) != len(sets.X):
        raise AssertionError(f"GF({q}): |X| = {len(sets.X)}, |X'| = {len(sets.X_prime)}, "
                             f"expected {(q - sets.delta) // 2}")
    if in_x[0] or in_xp[0] or not np.all((in_x | in_xp)[1:]):
        raise AssertionError(f"GF({q}): X u X' is not GF(q) minus 0")
    negate = field.subtract(0, np.arange(q))
    if not np.array_equal(in_x, in_x[negate]):
        raise AssertionError(f"GF({q}): X is not closed under negation")
    H = sets.H
    if len(np.unique(H)) != q:
        raise AssertionError(f"GF({q}): H is not one-to-one")
    elems = np.arange(q, dtype=np.int64)
    rows = max(1, (1 << 22) // q)  # all q^2 pairs, a block of rows at a time
    for lo in range(0, q, rows):
        x = elems[lo:lo + rows, None]
        lhs = in_x[field.subtract(x, elems[None, :])]
        rhs = in_xp[field.subtract(H[x], H[None, :])]
        if not np.array_equal(lhs, rhs):
            i, j = map(int, np.argwhere(lhs != rhs)[0])
            raise AssertionError(f"GF({q}): Theorem 2 fails for x_i={lo + i}, x_j={j}")


def generator_graph(q: int, which: str = "X") -> Topology:
    """Build the generator graph of ``X`` (or ``X'``) on GF(q) (Definition 1).

    Parameters
    ----------
    q : int
        The field size.
    which : str, default "X"
        ``"X"`` or ``"X'"``.

    Returns
    -------
    Topology
        ``x`` joined to ``x + g`` for every generator ``g``.
    """
    sets = generator_sets(q)
    gen = sets.X if which == "X" else sets.X_prime
    u, v = _difference_arcs(sets.field, gen)
    return Topology.from_arcs("generator-graph", {"q": q, "set": which}, q, u, v)


def _difference_arcs(field: FiniteField, gen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Arcs ``u -> v`` with ``u - v`` in ``gen`` (Definition 1), ``u = v + g`` for each ``g``."""
    v = np.tile(np.arange(field.q, dtype=np.int64), len(gen))
    g = np.repeat(np.asarray(gen, dtype=np.int64), field.q)
    return field.add(v, g), v


def galaxy_degree(n: int, q: int) -> int:
    """Give the degree of every node of the Galaxy graph: ``|X| + n - 1``.

    Parameters
    ----------
    n : int
        Clusters.
    q : int
        Supernodes per cluster.

    Returns
    -------
    int
        The degree.
    """
    if q == 1:
        return n - 1
    delta = {1: 1, 3: -1, 0: 0}.get(q % 4, 0)
    return (q - delta) // 2 + n - 1


def _check_int(owner: str, name: str, value, minimum: int) -> int:
    return integer(value, name, owner=owner, minimum=minimum)


def galaxy_arcs(n: int, q: int, owner: str = "galaxy"):
    """List the directed arcs of the Galaxy graph with its generator sets.

    Parameters
    ----------
    n : int
        Clusters.
    q : int
        Supernodes per cluster.
    owner : str, default "galaxy"
        Family name for error messages.

    Returns
    -------
    tuple
        ``(src, dst, label, sets)``.
    """
    n = _check_int(owner, "n", n, 1)
    q = _check_int(owner, "q", q, 1)
    sets = generator_sets(q, owner)
    iu, iv = _difference_arcs(sets.field, sets.X)
    clusters = np.arange(n, dtype=np.int64)
    src = [(clusters[:, None] * q + iu[None, :]).ravel()]
    dst = [(clusters[:, None] * q + iv[None, :]).ravel()]
    lab = [np.full(n * len(iu), INTRA, dtype=np.int64)]
    x = np.arange(q, dtype=np.int64)
    for t in range(1, n):
        for s in range(t):
            a, b = t * q + x, s * q + sets.H
            src += [a, b]
            dst += [b, a]
            lab.append(np.full(2 * q, INTER, dtype=np.int64))
    return np.concatenate(src), np.concatenate(dst), np.concatenate(lab), sets


def galaxy(n: int, q: int) -> Topology:
    """Build the Galaxy graph of ``n`` clusters over GF(q): the supernode graph of a Galaxyfly.

    Parameters
    ----------
    n : int
        Number of clusters, ``n >= 1``.
    q : int
        Supernodes per cluster, a prime power with ``q mod 4 != 2`` (or 1).

    Returns
    -------
    Topology
        Arc labels ``intra`` and ``inter``, codec ``(cluster, element)``; ``meta`` holds ``xi``, ``X``,
        ``X'``, ``delta``.

    Raises
    ------
    TopocastError
        For ``n < 1`` or a ``q`` that is not a prime power.

    Examples
    --------
    >>> g = galaxy(3, 5)
    >>> g.num_nodes, int(g.port_degree[0])
    (15, 4)
    >>> [int(v) + 1 for v in g.neighbors(7)]  # S8 -> S5, S7, S9, S12
    [5, 7, 9, 12]
    """
    n, q = _check_int("galaxy", "n", n, 1), _check_int("galaxy", "q", q, 1)
    src, dst, lab, sets = galaxy_arcs(n, q)
    return Topology.from_arcs(
        "galaxy", {"n": n, "q": q}, n * q, src, dst, lab, ("intra", "inter"),
        codec=MixedRadixCodec([n, q], ("cluster", "element")), meta=_meta(n, q, sets),
    )


def _meta(n: int, q: int, sets: GeneratorSets) -> dict:
    return {
        "spec": f"galaxy:n={n},q={q}",
        "supernodes": n * q,
        "supernode_degree": galaxy_degree(n, q),
        "field": f"GF({q})",
        "xi": sets.field.xi,
        "delta": sets.delta,
        "l": sets.l,
        "X": sets.X.tolist(),
        "X_prime": sets.X_prime.tolist(),
        "H": "x -> xi * x",
    }


def supernode_name(index: int) -> str:
    """Give the paper's name ``S_{index+1}`` of a Galaxy node (cluster-major numbering).

    Parameters
    ----------
    index : int
        Node index.

    Returns
    -------
    str
        ``S1``, ``S2``, ...
    """
    return f"S{int(index) + 1}"


def _estimate(n: int, q: int) -> tuple[int, int]:
    return n * q, n * q * galaxy_degree(n, q)


register_family(Family(
    name="galaxy",
    builder=galaxy,
    params=(Param("n", "int", doc="number of clusters", minimum=1),
            Param("q", "int", doc="supernodes per cluster: a prime power, q mod 4 != 2 (1 = Dragonfly groups)",
                  minimum=1)),
    doc="Galaxy graph over GF(q): n clusters of q supernodes, diameter <= 2 (Lei et al.)",
    estimate=_estimate,
    example="galaxy:n=3,q=5",
))
