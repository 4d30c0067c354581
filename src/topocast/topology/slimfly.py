"""Slim Fly: the McKay–Miller–Širáň (MMS) graphs (Besta and Hoefler, SC 2014).

For a prime power ``q = 4w + delta`` (``delta`` in -1, 0, 1) with primitive
element ``xi`` of GF(q), routers are ``(0, x, y)`` and ``(1, m, c)`` for ``x,
y, m, c`` in GF(q), ``2 q^2`` in all, and

* ``(0, x, y) ~ (0, x, y')`` iff ``y - y'`` is in ``X``;
* ``(1, m, c) ~ (1, m, c')`` iff ``c - c'`` is in ``X'``;
* ``(0, x, y) ~ (1, m, c)`` iff ``y = m x + c``.

The generator sets are the paper's: for ``delta = 1`` the even powers of
``xi`` (``X``) and the odd ones (``X'``); for ``delta = -1``, ``X = {1, xi^2,
..., xi^(2w-2), xi^(2w-1), xi^(2w+1), ..., xi^(4w-3)}`` and ``X' = xi X``; for
``delta = 0`` (``q = 2^k``) the even powers ``xi^0 .. xi^(q-2)`` and
``X' = xi X``.  (They are the generator sets of the Galaxy graphs of
:mod:`topocast.topology.galaxy`, which checks them: ``X = -X`` and ``X`` u
``X'`` is GF(q)*.)  Every router has network radix ``k' = (3q - delta)/2``;
the graph has diameter 2.  ``q = 5`` is the Hoffman–Singleton graph.

Numbering: ``(0, x, y) -> x q + y``, ``(1, m, c) -> q^2 + m q + c``; labels
``(subgraph, x, y)``.  Cables: the paper's layout puts subgraphs ``(0, x, .)``
and ``(1, x, .)`` in one rack (``q`` racks of ``2q`` routers); a link inside
a rack is ``local``, between racks ``global`` (every two racks are joined by
``2q`` global links).

``p`` terminals per router, default ``ceil(k'/2)`` (the paper's concentration
for full global bandwidth).

Symmetry: the translations ``y -> y + t`` (and ``c -> c + t``), ``x -> x + s``
(``c -> c - m s``) and ``m -> m + r`` (``y -> y + r x``) preserve all three
rules; with ``s, t, r`` over an additive basis of GF(q) (each map checked on the
built graph) they make each half one orbit: two breadth-first searches give
exact distances.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology
from .galaxy import generator_sets
from .gf import check_prime_power, field_tables

LOCAL, GLOBAL = 0, 1


def slimfly_params(q: int, p: int | None) -> tuple[int, int, int]:
    """Check the Slim Fly parameters: ``q`` a prime power ``4w + delta``, ``delta`` in -1, 0, 1.

    Parameters
    ----------
    q : int
        The field size.
    p : int or None
        Terminals per router; None: ``ceil(k'/2)`` for network radix ``k'``.

    Returns
    -------
    tuple of int
        ``(q, delta, p)``.

    Raises
    ------
    TopocastError
        When ``q`` is not such a prime power or ``p`` is negative.
    """
    q = check_prime_power(q, "slimfly")
    if q % 4 == 2:
        raise TopocastError(f"slimfly: parameter 'q' must be a prime power 4w+delta with delta in -1, 0, 1 "
                            f"(q mod 4 != 2), got {q}")
    delta = {1: 1, 3: -1, 0: 0}[q % 4]
    radix = (3 * q - delta) // 2
    p = math.ceil(radix / 2) if p is None else integer(p, "p", owner="slimfly", minimum=0)
    return q, delta, p


def slimfly(q: int, p: int | None = None) -> Topology:
    """Build the Slim Fly MMS(q) (Besta and Hoefler, SC 2014): ``2 q^2`` routers, diameter 2.

    The McKay-Miller-Širáň graph over GF(q); network radix ``(3q - delta)/2``.

    Parameters
    ----------
    q : int
        A prime power with ``q mod 4 != 2`` (3, 4, 5, 7, 8, 9, 11, 13, 16, ...).
    p : int, optional
        Terminals per router (default ``ceil(k'/2)``).

    Returns
    -------
    Topology
        The routers with arc labels ``local`` and ``global``; ``meta`` holds ``p`` and the terminals.

    Raises
    ------
    TopocastError
        For any other ``q``.

    Examples
    --------
    >>> t = slimfly(5)
    >>> t.num_nodes, t.num_edges, int(t.port_degree.max()), t.meta["p"], t.meta["terminals"]
    (50, 175, 7, 4, 200)
    """
    from .geometry_kernels import mms_rows

    q, delta, p = slimfly_params(q, p)
    t = field_tables(q, "slimfly")
    sets = generator_sets(q, "slimfly")
    qq = q * q
    radix = (3 * q - delta) // 2
    rows = np.empty((2 * qq, radix), dtype=np.int64)
    mms_rows(q, t.add, t.mul, t.neg, sets.X.astype(np.int64), sets.X_prime.astype(np.int64), rows)
    n = 2 * qq
    indices = rows.reshape(-1)
    src = np.repeat(np.arange(n, dtype=np.int64), radix)
    labels = np.where(rack_of(q, src) == rack_of(q, indices), LOCAL, GLOBAL).astype(np.int16)
    global_links = int(np.count_nonzero(labels)) // 2
    moore = radix * radix + 1
    meta = {
        "spec": f"slimfly:q={q},p={p}",
        "routers": n, "field": f"GF({q})", "delta": delta, "w": (q - delta) // 4, "xi": sets.field.xi,
        "X": sets.X.tolist(), "X_prime": sets.X_prime.tolist(),
        "network_radix": radix, "p": p, "terminals": n * p, "radix": radix + p,
        "moore_bound": moore, "moore_efficiency": n / moore,
        "racks": q, "routers_per_rack": 2 * q, "local_links": n * radix // 2 - global_links,
        "global_links": global_links,
        "rack_rule": "subgraphs (0,x,.) and (1,x,.) share rack x",
    }
    del src
    indptr = np.arange(n + 1, dtype=np.int64) * radix
    return Topology("slimfly", {"q": q, "p": p}, indptr, indices, labels, ("local", "global"),
                    codec=MixedRadixCodec([2, q, q], ("subgraph", "x", "y")), meta=meta)


def rack_of(q: int, router: np.ndarray) -> np.ndarray:
    """Give the rack of each Slim Fly router: ``x`` for ``(0, x, y)``, ``m`` for ``(1, m, c)``.

    Parameters
    ----------
    q : int
        The field size.
    router : numpy.ndarray
        Router indices.

    Returns
    -------
    numpy.ndarray
        Rack of each.
    """
    return (np.asarray(router) % (q * q)) // q


def additive_basis(q: int) -> list[int]:
    """List an additive basis of GF(q) as element numbers ``1, p, p^2, ...``.

    They are the monomials ``1, a, a^2, ...`` of ``galois``'s representation.

    Parameters
    ----------
    q : int
        The field size.

    Returns
    -------
    list of int
        The basis.
    """
    p = field_tables(q, "slimfly").characteristic
    out, e = [], 1
    while e < q:
        out.append(e)
        e *= p
    return out


def automorphism_candidates(q: int):
    """Generate the translations of the module docstring as permutations of the ``2 q^2`` routers.

    Parameters
    ----------
    q : int
        The field size.

    Yields
    ------
    numpy.ndarray
        The image of every router under one translation.
    """
    t = field_tables(q, "slimfly")
    qq = q * q
    a = np.arange(q, dtype=np.int64)
    x, y = a.repeat(q), np.tile(a, q)          # (x, y) of half 0, (m, c) of half 1
    for e in additive_basis(q):
        yield np.concatenate([x * q + t.add[y, e], qq + x * q + t.add[y, e]])                     # y, c + e
        yield np.concatenate([t.add[x, e] * q + y, qq + x * q + t.add[y, t.neg[t.mul[x, e]]]])     # x + e
        yield np.concatenate([x * q + t.add[y, t.mul[e, x]], qq + t.add[x, e] * q + y])           # m + e


def slimfly_orbits(topology: Topology) -> np.ndarray:
    """Label the routers by orbit under the checked translations (the family's ``orbits`` hook).

    Parameters
    ----------
    topology : Topology
        A Slim Fly.

    Returns
    -------
    numpy.ndarray
        Orbit label of every router (cached on the topology).
    """
    from .symmetry import checked_orbits

    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "orbits" not in cache:
        cache["orbits"] = checked_orbits(topology, automorphism_candidates(int(topology.params["q"])))
    return cache["orbits"]


def _estimate(q: int, p: int | None = None) -> tuple[int, int]:
    radix = (3 * q + 1) // 2
    return 2 * q * q, 2 * q * q * radix


register_family(Family(
    name="slimfly",
    builder=slimfly,
    params=(Param("q", "int", doc="prime power q = 4w + delta, delta in -1, 0, 1", minimum=2),
            Param("p", "int", None, doc="terminals per router (default ceil(k'/2), k' = (3q-delta)/2)", minimum=0)),
    doc="Slim Fly: McKay-Miller-Siran graph over GF(q), 2q^2 routers of radix (3q-delta)/2, diameter 2 "
        "(Besta and Hoefler SC 2014)",
    aliases=("slim-fly",),
    estimate=_estimate,
    example="slimfly:q=5",
    orbits=slimfly_orbits,
))
