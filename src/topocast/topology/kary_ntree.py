"""k-ary n-trees: the folded-Clos fat tree as a switch graph with terminals (Petrini and Vanneschi, 1997).

A k-ary n-tree has ``k^n`` processing nodes and ``n k^(n-1)`` switches of
``2k`` ports.  Switch ``<w, l>`` has a level ``l`` in ``0..n-1`` (0 the roots)
and a word ``w = (w_0, ..., w_{n-2})`` of ``n - 1`` base-``k`` digits;
``<w, l>`` and ``<w', l + 1>`` are joined iff ``w_i = w'_i`` for every ``i !=
l``.  Processing node ``(p_0, ..., p_{n-1})`` hangs on the leaf ``<(p_0, ...,
p_{n-2}), n - 1>``, so every leaf has ``k`` terminals (the structure fixes the
concentration).  The switch graph has ``(n - 1) k^n`` links and diameter
``2 (n - 1)``; it is the switch part of the generalized fat tree GFT(n-1, k,
k) of :mod:`topocast.topology.fattree` (``gft``), which also holds the
processors as nodes.

Numbering: switch ``<w, l>`` is ``l k^(n-1) + w`` (``w`` read as a base-``k``
number, ``w_0`` most significant); labels ``(level, w)``.  Arc labels ``up``
(towards the roots) and ``down``.

Symmetry: a permutation of the values of one digit, applied to every switch,
keeps the rule; a transposition and a cycle per digit (checked on the built
graph) make every level one orbit: ``n`` breadth-first searches give exact
distances.
"""

from __future__ import annotations

import numpy as np

from ..infra.memory import power
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology

UP, DOWN = 0, 1


def kary_ntree(k: int, n: int) -> Topology:
    """Build the switch graph of the k-ary n-tree (Petrini and Vanneschi), ``k`` terminals on every leaf switch.

    Parameters
    ----------
    k : int
        Arity (>= 2): down ports and up ports per switch.
    n : int
        Levels (>= 2).

    Returns
    -------
    Topology
        ``n k^(n-1)`` switches, family ``fattree``; ``meta`` holds the terminal count ``k^n``.

    Raises
    ------
    TopocastError
        If ``k`` or ``n`` is not an integer >= 2.

    Examples
    --------
    >>> t = kary_ntree(4, 3)
    >>> t.num_nodes, t.num_edges, t.meta["terminals"]
    (48, 128, 64)
    """
    k = integer(k, "k", owner="fattree", minimum=2)
    n = integer(n, "n", owner="fattree", minimum=2)
    width = k ** (n - 1)
    w = np.arange(width, dtype=np.int64)
    src, dst = [], []
    for level in range(n - 1):
        stride = k ** (n - 2 - level)
        digit = (w // stride) % k
        base = w - digit * stride
        upper = level * width + w
        lower = (level + 1) * width + base[:, None] + np.arange(k, dtype=np.int64)[None, :] * stride
        src.append(lower.reshape(-1))
        dst.append(np.repeat(upper, k))
    up_src, up_dst = np.concatenate(src), np.concatenate(dst)
    switches = n * width
    labels = np.concatenate([np.full(len(up_src), UP, np.int16), np.full(len(up_src), DOWN, np.int16)])
    meta = {
        "spec": f"fattree:k={k},n={n}", "routers": switches, "levels": n, "switches_per_level": width,
        "p": k, "terminals": k ** n, "terminal_hosts": {"field": "level", "range": [n - 1, n]},
        "radix": 2 * k, "network_radix": 2 * k, "links_per_level_pair": width * k,
        "diameter_closed_form": 2 * (n - 1),
        "rule": "<w,l> ~ <w',l+1> iff w_i = w'_i for i != l; level 0 the roots, leaves at level n-1",
    }
    return Topology.from_arcs("fattree", {"k": k, "n": n}, switches, np.concatenate([up_src, up_dst]),
                              np.concatenate([up_dst, up_src]), labels, ("up", "down"),
                              codec=MixedRadixCodec([n] + [k] * (n - 1),
                                                    ("level",) + tuple(f"w{i}" for i in range(n - 1))),
                              meta=meta)


def automorphism_candidates(k: int, n: int):
    """Generate candidate automorphisms of the k-ary n-tree, one pair per address digit.

    Per digit ``j``: the transposition of values 0 and 1 and the cycle ``v -> v + 1 mod k``, on every switch.

    Parameters
    ----------
    k : int
        Arity.
    n : int
        Levels.

    Yields
    ------
    numpy.ndarray
        The image of every switch under one candidate permutation.
    """
    width = k ** (n - 1)
    node = np.arange(n * width, dtype=np.int64)
    level, w = node // width, node % width
    for j in range(n - 1):
        stride = k ** (n - 2 - j)
        digit = (w // stride) % k
        for new in (np.where(digit == 0, 1, np.where(digit == 1, 0, digit)), (digit + 1) % k):
            yield level * width + w + (new - digit) * stride


def kary_ntree_orbits(topology: Topology) -> np.ndarray:
    """Label the switches by orbit under the checked digit permutations: one orbit per level.

    The family's ``orbits`` hook; the result is cached on the topology.

    Parameters
    ----------
    topology : Topology
        A k-ary n-tree.

    Returns
    -------
    numpy.ndarray
        Orbit label of every switch.
    """
    from .symmetry import checked_orbits

    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "orbits" not in cache:
        k, n = int(topology.params["k"]), int(topology.params["n"])
        cache["orbits"] = checked_orbits(topology, automorphism_candidates(k, n),
                                         invariant=np.arange(topology.num_nodes) // k ** (n - 1))
    return cache["orbits"]


def _estimate(k: int, n: int) -> tuple[int | float, int | float]:
    width = power(k, n - 1)
    return n * width, 2 * (n - 1) * width * k


register_family(Family(
    name="fattree",
    builder=kary_ntree,
    params=(Param("k", "int", doc="arity: down (and up) ports per switch", minimum=2),
            Param("n", "int", doc="levels of switches", minimum=2)),
    doc="k-ary n-tree fat tree (folded Clos) as a switch graph: n k^(n-1) switches of 2k ports, k^n terminals "
        "(Petrini and Vanneschi 1997)",
    aliases=("kary-ntree", "fat-tree"),
    estimate=_estimate,
    example="fattree:k=4,n=3",
    orbits=kary_ntree_orbits,
))
