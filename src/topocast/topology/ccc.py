"""Cube-connected cycles CCC(n) (Preparata and Vuillemin 1981), the comparator of HDN Table 2.

Each node of the n-cube becomes a cycle of n nodes; node ``(x, i)`` (cube
address ``x``, cycle position ``i``) joins ``(x, i +- 1 mod n)`` along its
cycle and ``(x XOR 2^i, i)`` across cube dimension ``i``.  ``n * 2^n`` nodes,
degree 3, diameter ``2n + floor(n/2) - 2`` for ``n >= 4`` (6 for ``n = 3``;
Fris, Havel and Liebl 1997).
"""

from __future__ import annotations

import numpy as np

from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology


def ccc_diameter_formula(n: int) -> int:
    """Give the diameter of CCC(n) as usually quoted: ``2n + floor(n/2) - 2`` (exact for n >= 4).

    Parameters
    ----------
    n : int
        Dimension of the cube-connected cycles.

    Returns
    -------
    int
        The diameter by the formula.
    """
    return 2 * n + n // 2 - 2


def _check_n(n) -> int:
    return integer(n, "n", owner="ccc", minimum=3, maximum=24)


def _estimate(n: int) -> tuple[int, int]:
    n = _check_n(n)
    return n << n, 3 * (n << n)


def cube_connected_cycles(n: int) -> Topology:
    """Build the cube-connected cycles CCC(n): a hypercube whose nodes are replaced by n-cycles.

    Node ``(x, i)`` is position ``i`` on the cycle of cube node ``x``; arc labels ``+``, ``-`` (along the
    cycle) and ``cube`` (flip bit ``i`` of ``x``).

    Parameters
    ----------
    n : int
        Cube dimension and cycle length, 3..24 (``n 2^n`` nodes).

    Returns
    -------
    Topology
        The network, degree 3.

    Raises
    ------
    TopocastError
        Unless ``3 <= n <= 24``.

    Examples
    --------
    >>> cube_connected_cycles(3).num_nodes
    24
    """
    n = _check_n(n)
    total = n << n
    nodes = np.arange(total, dtype=np.int64)
    x, i = nodes // n, nodes % n
    src = np.concatenate([nodes, nodes, nodes])
    dst = np.concatenate([x * n + (i + 1) % n, x * n + (i - 1) % n, (x ^ (np.int64(1) << i)) * n + i])
    labels = np.repeat(np.array([0, 1, 2], dtype=np.int16), total)
    return Topology.from_arcs("ccc", {"n": n}, total, src, dst, labels, ("+", "-", "cube"),
                              codec=MixedRadixCodec((1 << n, n), ("x", "i")), vertex_transitive=True,
                              meta={"spec": f"ccc:{n}", "diameter_formula": ccc_diameter_formula(n)})


register_family(Family(
    "ccc", cube_connected_cycles, (Param("n", "int", doc="cube dimension (n * 2^n nodes)", minimum=3),),
    "cube-connected cycles CCC(n)", positional="n", aliases=("cube-connected-cycles",),
    estimate=_estimate, example="ccc:5"))
