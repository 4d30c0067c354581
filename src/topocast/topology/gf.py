"""Arithmetic tables of GF(q) for the finite-geometry families (PolarFly, Slim Fly).

Elements are numbered ``0..q-1`` as in :func:`topocast.topology.galaxy.finite_field`:
residues for a prime ``q``, ``galois``'s integer representation (polynomial
coefficients in base ``p``) for a prime power.  The ``q x q`` addition and
multiplication tables are what the compiled builders index; they cost
``8 q^2`` bytes, small beside the ``q^3`` arcs of the networks they build.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from .galaxy import FiniteField, finite_field, prime_power


@dataclass(frozen=True, eq=False)
class FieldTables:
    """``add[x, y]``, ``mul[x, y]``, ``neg[x]``, ``inv[x]`` (``inv[0] = 0``) of GF(q), int64, read-only."""

    field: FiniteField
    add: np.ndarray
    mul: np.ndarray
    neg: np.ndarray
    inv: np.ndarray

    @property
    def q(self) -> int:
        """Field size."""
        return self.field.q

    @property
    def characteristic(self) -> int:
        """Characteristic ``p`` (``q = p^k``)."""
        return self.field.characteristic

    def frobenius(self) -> np.ndarray:
        """Tabulate the Frobenius map ``x -> x^p`` (the identity for a prime field).

        Returns
        -------
        numpy.ndarray
            Image of every element number.
        """
        x = np.arange(self.q, dtype=np.int64)
        out = np.ones(self.q, dtype=np.int64) if self.q > 1 else x.copy()
        for _ in range(self.characteristic):
            out = self.mul[out, x]
        return out


def check_prime_power(q, owner: str) -> int:
    """Check that ``q`` is a prime power.

    Parameters
    ----------
    q : int
        The field size.
    owner : str
        Family name for the error message.

    Returns
    -------
    int
        ``q``.

    Raises
    ------
    TopocastError
        ``owner: parameter 'q' must be a prime power ...``.
    """
    q = integer(q, "q", owner=owner)
    if prime_power(q) is None:
        raise TopocastError(f"{owner}: parameter 'q' must be a prime power (2, 3, 4, 5, 7, 8, 9, ...), got {q}")
    return q


@lru_cache(maxsize=16)
def field_tables(q: int, owner: str = "gf") -> FieldTables:
    """Tabulate the finite field GF(q): addition, multiplication, negation and inverse.

    Parameters
    ----------
    q : int
        A prime power (checked).
    owner : str, default "gf"
        Family name for the error message.

    Returns
    -------
    FieldTables
        Read-only int64 tables over element numbers (cached, 16 fields).

    Raises
    ------
    TopocastError
        When ``q`` is not a prime power.

    Examples
    --------
    >>> t = field_tables(4)
    >>> int(t.add[2, 3]), int(t.mul[2, 2]), int(t.inv[3])
    (1, 3, 2)
    """
    q = check_prime_power(q, owner)
    field = finite_field(q, owner)
    x = np.arange(q, dtype=np.int64)
    add = field.add(x[:, None], x[None, :])
    log = field.log
    mul = np.zeros((q, q), dtype=np.int64)
    nz = x[1:]
    mul[1:, 1:] = field.power[(log[nz][:, None] + log[nz][None, :]) % (q - 1)]
    neg = field.subtract(0, x)
    inv = np.zeros(q, dtype=np.int64)
    inv[1:] = field.power[(-log[nz]) % (q - 1)]
    for arr in (add, mul, neg, inv):
        arr.setflags(write=False)
    return FieldTables(field, add, mul, neg, inv)


def squares_summing_to_one(tables: FieldTables, limit: int = 4) -> list[tuple[int, int]]:
    """Find pairs ``(a, b)`` with ``a^2 + b^2 = 1`` and ``b != 0`` (rotations of the plane).

    Parameters
    ----------
    tables : FieldTables
        The field.
    limit : int, default 4
        Most pairs to return.

    Returns
    -------
    list of tuple of int
        Up to ``limit`` pairs of element numbers.
    """
    q = tables.q
    sq = np.diag(tables.mul)
    out = []
    for b in range(1, q):
        target = tables.add[1, tables.neg[sq[b]]]
        hits = np.flatnonzero(sq == target)
        if len(hits):
            out.append((int(hits[0]), b))
            if len(out) >= limit:
                break
    return out
