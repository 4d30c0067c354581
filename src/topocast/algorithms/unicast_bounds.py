"""Throughput upper bound of a unicast load point: the most loaded channel of the routing under the traffic.

Every node injects ``lambda`` flits per cycle; a destination is drawn from
the pattern's law (:func:`~topocast.algorithms.unicast_traffic.pattern_law`)
and the message follows its route.  The expected flits per cycle on arc
``e`` are ``lambda * gamma_e`` with ``gamma_e`` the expected number of
messages crossing ``e`` per message injected per node, and no link carries
more than one flit per cycle, so ``lambda <= 1 / max_e gamma_e``
(Dally and Towles, section 3.3: the channel-load bound).  It ignores the
injection and ejection channels and the processors' start-ups, and it is
reached by no real router; it is the ceiling the measured saturation
throughput sits under.

``gamma`` is exact:

* ``dor``, uniform destinations: closed forms per arc.  In a dimension of
  size ``k``, a mesh arc from coordinate ``c`` up to ``c + 1`` carries the
  pairs whose coordinate ``i`` starts at most ``c`` and ends above it,
  ``(c + 1)(k - c - 1)`` of every ``k^2`` coordinate pairs, times the
  ``N / k`` settings of the other coordinates the arc sees (those already
  corrected belong to the destination, the others to the source); down from
  ``c``: ``c (k - c)``.  A ring arc up carries ``1 + 2 + ... + floor(k/2)``
  (offsets up to ``k/2`` go up, ties too), down ``1 + ... + (ceil(k/2) - 1)``.
  A hypercube arc: ``N / 2``.  Each divided by ``N - 1``.
* ``minimal``, uniform destinations: one breadth-first search per node,
  every node's weight pushed along the routing's tree towards it.
* explicit pairs (permutations, neighbours, hot nodes): their routes.
* ``valiant`` through a uniform intermediate node: phase one spreads each
  sending node's traffic uniformly over the ``N`` intermediates, phase two
  collects every destination's incoming traffic from them; with minimal
  phases both are the tree sums above, with ``dor`` phases the closed form
  applies when every node sends and receives one unit (uniform,
  random-permutation, nearest-neighbour on a regular network).
* ``valiant`` on Dragonfly and Galaxyfly (a uniform intermediate
  supernode other than the source's and the destination's): every pair's
  routes through every intermediate supernode, each with its probability
  (:func:`supernode_valiant_law`).

A bound that would need more than :data:`BOUND_WORK` arc visits of breadth-first
search (about two seconds), or more than :data:`BOUND_PAIRS` explicit pairs, is
None.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..topology.core import Topology
from ..topology.kernels import bfs_from_set
from .unicast_routing import (
    DOR_FAMILIES,
    SUPERNODE_FAMILIES,
    WRAP_FAMILIES,
    Lattice,
    _step,
    dor_routes,
    lattice,
    minimal_routes,
    supernode_size,
)
from .unicast_traffic import pattern_law

#: arc visits the searches of a bound may take (one search per node for minimal routes)
BOUND_WORK = 5e8
#: explicit pairs a bound may route (hot-spot: nodes times hot nodes)
BOUND_PAIRS = 2e7


def dor_uniform_loads(topology: Topology, lat: Lattice | None = None, ties: str = "plus") -> np.ndarray:
    """Give the channel loads of dimension-order routing under uniform destinations (closed form).

    See the module docstring; ``ties=random`` on an even ring: the offset ``k/2`` goes each way half the time.

    Parameters
    ----------
    topology : Topology
        A ring, path, mesh, torus or hypercube.
    lat : Lattice, optional
        Its lattice (default: made here).
    ties : str, default "plus"
        ``plus`` or ``random``: how a half-way offset on an even ring is routed.

    Returns
    -------
    numpy.ndarray
        ``gamma_e`` of every arc: expected messages crossing it per message injected per node.
    """
    lat = lat or lattice(topology)
    n = topology.num_nodes
    loads = np.zeros(topology.num_arcs)
    d = len(lat.dims)
    for i in range(d):
        k, s = int(lat.dims[i]), int(lat.strides[i])
        for sign in (0, 1):
            nodes = np.flatnonzero(lat.table[:, 2 * i + sign] >= 0)
            arcs = lat.table[nodes, 2 * i + sign]
            c = (nodes // s) % k
            pairs: np.ndarray | int
            if topology.family == "hypercube":
                pairs = np.ones(len(nodes))  # times the N/2 (= N/k) below
                if sign == 1:
                    continue  # the same arc as sign 0
            elif lat.wrap and ties == "random" and k % 2 == 0:
                pairs = np.full(len(nodes), (k // 2 - 1) * (k // 2) / 2 + k / 4)
            elif lat.wrap:
                top = k // 2 if sign == 0 else (k + 1) // 2 - 1
                pairs = np.full(len(nodes), top * (top + 1) / 2)
            else:
                pairs = (c + 1) * (k - c - 1) if sign == 0 else c * (k - c)
            np.add.at(loads, arcs, pairs * (n / k) / (n - 1))
    return loads


@nb.njit(cache=True)
def _tree_loads(indptr, indices, n, alpha, beta, loads):
    """Add ``alpha[t] * beta[x]`` along the minimal route from every ``x`` to every ``t`` (``alpha[t] > 0``)."""
    dist = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    acc = np.zeros(n)
    seed = np.empty(1, np.int64)
    for t in range(n):
        if alpha[t] == 0.0:
            continue
        seed[0] = t
        reached = bfs_from_set(indptr, indices, seed, dist, queue)
        for q in range(reached - 1, 0, -1):
            x = queue[q]
            acc[x] += alpha[t] * beta[x]
            e = _step(x, indptr, indices, dist)
            loads[e] += acc[x]
            acc[indices[e]] += acc[x]
        for q in range(reached):
            dist[queue[q]] = -1
            acc[queue[q]] = 0.0


def tree_loads(topology: Topology, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Give the channel loads of minimal routes when ``x`` sends ``alpha[t] * beta[x]`` to every ``t != x``.

    Parameters
    ----------
    topology : Topology
        The network.
    alpha : numpy.ndarray
        Weight of every destination.
    beta : numpy.ndarray
        Weight of every source.

    Returns
    -------
    numpy.ndarray
        ``gamma_e`` of every arc: expected messages crossing it per message injected per node.
    """
    loads = np.zeros(topology.num_arcs)
    _tree_loads(topology.indptr, topology.indices, topology.num_nodes, np.asarray(alpha, dtype=np.float64),
                np.asarray(beta, dtype=np.float64), loads)
    return loads


def pair_loads(topology: Topology, routing: str, src, dst, weight, lat: Lattice | None = None,
               ties: str = "plus") -> np.ndarray:
    """Give the channel loads of explicit pairs routed by ``minimal`` or ``dor``.

    ``gamma`` of explicit pairs routed by ``routing`` (``minimal`` or ``dor``).

    ``dor`` with ``ties=random`` on a torus: the mean of the routes whose ties all go ``+`` and those whose
    ties all go ``-``, which is the expectation, since a route's hops in one dimension depend on that
    dimension's coin alone (the other coordinates are the source's or the destination's).

    Parameters
    ----------
    topology : Topology
        The network.
    routing : str
        ``minimal`` or ``dor``.
    src, dst : array_like of int
        The pairs.
    weight : array_like of float
        Probability of every pair.
    lat : Lattice, optional
        The lattice of a ``dor`` family.
    ties : str, default "plus"
        ``plus`` or ``random``.

    Returns
    -------
    numpy.ndarray
        ``gamma_e`` of every arc: expected messages crossing it per message injected per node.
    """
    if len(src) == 0:
        return np.zeros(topology.num_arcs)
    weight = np.asarray(weight, dtype=np.float64)
    if routing == "minimal":
        ptr, _, arc = minimal_routes(topology, src, dst)
        return law_loads(topology, ptr, arc, weight)
    split = ties == "random" and topology.family in WRAP_FAMILIES
    loads = np.zeros(topology.num_arcs)
    for bit in ((-1, 0) if split else (-1,)):       # -1: every tie goes +; 0: every tie goes -
        coins = np.full(len(src), bit, dtype=np.int64)
        ptr, _, arc, _ = dor_routes(topology, src, dst, lat=lat, coins=coins)
        loads += law_loads(topology, ptr, arc, weight) / (2 if split else 1)
    return loads


def channel_loads(topology: Topology, routing: str, pattern: str, *, permutation=None, hot_fraction: float = 0.1,
                  hot=None, ties: str = "plus") -> np.ndarray | None:
    """Give the channel loads of a routing under a traffic pattern, or None when they are not cheap to get.

    Parameters
    ----------
    topology : Topology
        The network.
    routing : str
        The routing.
    pattern : str
        The traffic pattern.
    permutation : numpy.ndarray, optional
        The destination of every node, for permutation patterns.
    hot_fraction : float, default 0.1
        Share of messages sent to the hot nodes.
    hot : numpy.ndarray, optional
        The hot nodes.
    ties : str, default "plus"
        ``plus`` or ``random``.

    Returns
    -------
    numpy.ndarray or None
        ``gamma_e`` of every arc, or None.
    """
    n, arcs = topology.num_nodes, topology.num_arcs
    if pattern == "hot-spot" and float(n) * len(hot) > BOUND_PAIRS:
        return None
    src, dst, weight, dense = pattern_law(pattern, topology, permutation=permutation, hot_fraction=hot_fraction,
                                          hot=hot)
    lattice_family = topology.family in DOR_FAMILIES
    searches_ok = float(n) * (n + arcs) <= BOUND_WORK
    lat = lattice(topology) if (routing == "dor" or (routing == "valiant" and lattice_family)) else None
    if routing in ("dor", "minimal"):
        if routing == "minimal" and not searches_ok:
            return None
        loads = pair_loads(topology, routing, src, dst, weight, lat, ties)
        if dense > 0:
            uniform = dor_uniform_loads(topology, lat, ties) * (n - 1) if routing == "dor" else \
                tree_loads(topology, np.ones(n), np.ones(n))
            loads += dense * uniform
        return loads
    if topology.family in SUPERNODE_FAMILIES:
        groups = n // supernode_size(topology)
        if (len(src) + dense * n * (n - 1)) * max(1, groups - 2) > BOUND_PAIRS:
            return None
        ptr, arc, w = supernode_valiant_law(topology, *explicit_pairs(n, src, dst, weight, dense))
        return law_loads(topology, ptr, arc, w)
    sends = np.bincount(src, weights=weight, minlength=n) + dense * (n - 1)
    receives = np.bincount(dst, weights=weight, minlength=n) + dense * (n - 1)
    if lattice_family:
        if not (np.allclose(sends, 1.0) and np.allclose(receives, 1.0)):
            return None
        return 2.0 * (n - 1) / n * dor_uniform_loads(topology, lat, ties)
    if 2.0 * n * (n + arcs) > BOUND_WORK:
        return None
    return tree_loads(topology, np.full(n, 1.0 / n), sends) + tree_loads(topology, receives / n, np.ones(n))


def explicit_pairs(n: int, src, dst, weight, dense: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Write out a pattern law's pairs with its dense part (``dense`` to every other node) pair by pair.

    Parameters
    ----------
    n : int
        Nodes.
    src, dst, weight : numpy.ndarray
        The law's explicit pairs and their probabilities.
    dense : float
        Probability of every pair of distinct nodes in the dense part.

    Returns
    -------
    src, dst, weight : numpy.ndarray
        Every pair.
    """
    if dense <= 0:
        return src, dst, weight
    x, t = np.nonzero(~np.eye(n, dtype=bool))
    return (np.concatenate([src, x.astype(np.int64)]), np.concatenate([dst, t.astype(np.int64)]),
            np.concatenate([weight, np.full(len(x), dense)]))


def supernode_valiant_law(topology: Topology, src, dst, weight) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """List every route supernode Valiant may give each pair, with its probability.

    ``(ptr, arc, weight)``: every route supernode Valiant may give each pair, with its probability.

    The intermediate supernode is uniform over those other than the source's and the destination's
    (:func:`~topocast.algorithms.unicast_routing.valiant_intermediates`); with no such supernode the route
    is minimal.  Routes are the engine's own (:func:`~topocast.algorithms.unicast_routing.minimal_routes`).

    Parameters
    ----------
    topology : Topology
        A Dragonfly or Galaxyfly.
    src, dst : numpy.ndarray
        The pairs.
    weight : numpy.ndarray
        Probability of every pair.

    Returns
    -------
    ptr, arc, weight : numpy.ndarray
        CSR of the routes' arcs and every route's probability.
    """
    a = supernode_size(topology)
    groups = topology.num_nodes // a
    sg, dg = src // a, dst // a
    choices = groups - 1 - (sg != dg)
    g = np.arange(groups, dtype=np.int64)
    pair, mid = np.nonzero((g[None, :] != sg[:, None]) & (g[None, :] != dg[:, None]))
    straight = np.flatnonzero(choices == 0)
    w = np.concatenate([weight[pair] / choices[pair], weight[straight]])
    pair = np.concatenate([pair, straight])
    mid = np.concatenate([mid, np.full(len(straight), -1, np.int64)]).astype(np.int64)
    ptr, _, arc = minimal_routes(topology, src[pair], dst[pair], mid, a, routing="valiant")
    return ptr, arc, w


def law_loads(topology: Topology, ptr: np.ndarray, arc: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Sum each route's probability over the arcs it crosses.

    Parameters
    ----------
    topology : Topology
        The network.
    ptr, arc : numpy.ndarray
        CSR of the routes' arcs (-1: not an arc).
    weight : numpy.ndarray
        Probability of every route.

    Returns
    -------
    numpy.ndarray
        ``gamma_e`` of every arc: expected messages crossing it per message injected per node.
    """
    on = arc >= 0
    return np.bincount(arc[on], weights=np.repeat(weight, np.diff(ptr))[on], minlength=topology.num_arcs)


def throughput_bound(loads: np.ndarray | None) -> float | None:
    """Give the channel-load bound ``1 / max gamma`` in flits per node per cycle.

    Parameters
    ----------
    loads : numpy.ndarray or None
        ``gamma_e`` of every arc.

    Returns
    -------
    float or None
        The bound; None without loads or traffic.
    """
    if loads is None or len(loads) == 0 or loads.max() <= 0:
        return None
    return float(1.0 / loads.max())
