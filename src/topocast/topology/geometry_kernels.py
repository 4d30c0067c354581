"""Compiled (numba) builders of the finite-geometry families: PolarFly's polar lines, Slim Fly's rows.

Every kernel writes one row per router, sorted, into a ``(routers, width)``
array; the field is given by its ``q x q`` tables (:mod:`topocast.topology.gf`).
"""

from __future__ import annotations

import numba as nb


@nb.njit(cache=True, inline="always")
def _point_index(y0, y1, y2, q, mul, inv):
    """Give the index of the projective point of a nonzero vector.

    Index of the projective point of the nonzero vector ``(y0, y1, y2)``: ``(1, a, b) -> a q + b``,
    ``(0, 1, b) -> q^2 + b``, ``(0, 0, 1) -> q^2 + q``.
    """
    if y0 != 0:
        i = inv[y0]
        return mul[y1, i] * q + mul[y2, i]
    if y1 != 0:
        return q * q + mul[y2, inv[y1]]
    return q * q + q


@nb.njit(cache=True, parallel=True)
def polar_lines(q, add, mul, neg, inv, out):
    """Write the polar line of every point of PG(2, q) (numba kernel).

    ``out[u, :]`` = the ``q + 1`` points ``v`` with ``u . v = 0``, sorted.  The line is spanned by ``b1``,
    ``b2`` orthogonal to ``u`` (``(-u1, 1, 0)`` and ``(-u2, 0, 1)`` when ``u0 = 1``; ``(1, 0, 0)`` and
    ``(0, -u2, 1)`` for ``u = (0, 1, u2)``; ``(1, 0, 0)`` and ``(0, 1, 0)`` for ``(0, 0, 1)``): its points
    are ``b1 + s b2`` for ``s`` in GF(q), and ``b2``.

    Parameters
    ----------
    q : int
        The field size.
    add, mul, neg, inv : numpy.ndarray
        The tables of GF(q) (:class:`FieldTables`).
    out : numpy.ndarray
        ``(q^2 + q + 1, q + 1)`` int64, written.
    """
    n = q * q + q + 1
    for u in nb.prange(n):
        if u < q * q:
            a0, a1, a2 = neg[u // q], 1, 0
            c0, c1, c2 = neg[u % q], 0, 1
        elif u < q * q + q:
            a0, a1, a2 = 1, 0, 0
            c0, c1, c2 = 0, neg[u - q * q], 1
        else:
            a0, a1, a2 = 1, 0, 0
            c0, c1, c2 = 0, 1, 0
        row = out[u]
        for s in range(q):
            row[s] = _point_index(add[a0, mul[s, c0]], add[a1, mul[s, c1]], add[a2, mul[s, c2]], q, mul, inv)
        row[q] = _point_index(c0, c1, c2, q, mul, inv)
        row.sort()


@nb.njit(cache=True, parallel=True)
def mms_rows(q, add, mul, neg, gen0, gen1, out):
    """Write the sorted neighbours of every router of the MMS graph (Slim Fly; numba kernel).

    Router ``(0, x, y)`` is ``x q + y``, router ``(1, m, c)`` is ``q^2 + m q + c``.  ``(0, x, y)`` joins
    ``(0, x, y + g)`` for ``g`` in ``gen0`` (X) and ``(1, m, y - m x)`` for every ``m``; ``(1, m, c)``
    joins ``(1, m, c + g)`` for ``g`` in ``gen1`` (X') and ``(0, x, m x + c)`` for every ``x``.

    Parameters
    ----------
    q : int
        The field size.
    add, mul, neg : numpy.ndarray
        The tables of GF(q).
    gen0, gen1 : numpy.ndarray
        The generator sets X and X'.
    out : numpy.ndarray
        ``(2 q^2, degree)`` int64, written.
    """
    qq = q * q
    k0 = len(gen0)
    k1 = len(gen1)
    for r in nb.prange(2 * qq):
        row = out[r]
        if r < qq:
            x = r // q
            y = r % q
            for j in range(k0):
                row[j] = x * q + add[y, gen0[j]]
            for m in range(q):
                row[k0 + m] = qq + m * q + add[y, neg[mul[m, x]]]
            row[:k0].sort()
        else:
            m = (r - qq) // q
            c = (r - qq) % q
            for x in range(q):
                row[x] = x * q + add[mul[m, x], c]
            for j in range(k1):
                row[q + j] = qq + m * q + add[c, gen1[j]]
            row[q:q + k1].sort()
