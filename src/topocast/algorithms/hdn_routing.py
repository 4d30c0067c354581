"""Node-to-node routing in hierarchical dual-nets: Algorithm 1 (HDN_routing), section 4.

Li, Peng and Chu 2012.  The recursion on ``k`` is written once over numpy
arrays of (source, target) pairs, so the same code routes one pair for
``topocast route`` and a million pairs in the benchmark.

For a pair ``u, v`` of ``HDN(B, k)`` with level-``k`` labels
``(C, U, SN, N)``:

* same cluster (Case 1): route inside the cluster, an ``HDN(B, k-1)``;
* same class, other cluster (Case 3): one cross hop ``u -> w``, then Case 2;
* other class (Case 2): ``u -> u' = (C_u, U_u, U_v, N_u)`` inside u's
  cluster, the cross link ``u' -> u'' = (C_v, U_v, U_u, N_u)``, a route inside
  the super-node ``u'' -> v' = (C_v, U_v, U_u, N_v)``, then ``v' -> v`` inside
  v's cluster.

Two readings of ``u'`` and ``v'``: ``literal=True`` takes the listing word for
word (sub-routes to exactly those nodes); the default follows the text and
the proof of Theorem 2 ("the u' and v' that leave u3 and v3 unchanged"): the
sub-route from ``u`` ends anywhere in the target super-node and the one into
``v`` is a reversed such route, so neither moves the super-node's own
factors.  A nested call's target is then a whole super-node; inside such a
call the part in the target's cluster is one forward call of the algorithm
rather than a super-node route plus a reversed call, which is what keeps the
free coordinates free (see :func:`_waypoints` for the induction).  The
default stays within Theorem 2's bound for every ``k`` (proved by induction
in :func:`_waypoints`; checked on all pairs of small ``k = 3`` networks and
random pairs of larger ``k = 3`` and ``k = 4`` ones);
the literal reading exceeds it (17 > 15 hops on HDN(B,2,(6,15))).  For
``k <= 2`` every route has the length of the earlier version, which reversed
the nested calls too and could exceed the bound for ``k = 3`` (25 > 24 on
HDN(Q2,3,(1,4,4))).

Base routing is shortest dimension-order routing in the product base: each
factor in turn, the shorter way round a ring (``+`` on a tie), one hop in a
complete graph, the differing bits from the lowest in a hypercube.  A route
inside a super-node moves only its own factors.

A route is first a list of *waypoints* (one column per waypoint, every pair
of consecutive columns joined by a cross link or by a base segment inside one
base copy), then expanded to a padded path: equal consecutive entries are
"stay" steps and are not hops.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..registry import attach_router
from ..topology.core import Topology
from ..topology.hdn import HDNLayout, hdn_layout

BASE, CROSS = 0, 1


def theorem2_bound(layout: HDNLayout) -> int:
    """Evaluate Theorem 2's routing bound ``2^k R(B) - sum_j 2^j R(SN^{k-j}) + 2^{k+1} - 2``.

    ``R`` is the shortest dimension-order routing time (the diameter of a product of symmetric factors).

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.

    Returns
    -------
    int
        The bound in hops.
    """
    return layout.theorem_bound(layout.base_diameter, [layout.subproduct_diameter(f) for f in layout.supernodes])


def _replace_coords(layout: HDNLayout, level: int, target: np.ndarray, donor: np.ndarray,
                    free: np.ndarray) -> np.ndarray:
    """``target`` with its base coordinates in the ``free`` factors taken from ``donor`` (same base copy kept)."""
    copy, a = layout.split(level, target)
    _, b = layout.split(level, donor)
    coords = np.where(free, layout.base_coords(b), layout.base_coords(a))
    return layout.join(level, copy, layout.base_codec.encode_array(coords))


def _waypoints(layout: HDNLayout, level: int, u: np.ndarray, v: np.ndarray, free: np.ndarray | None,
               literal: bool):
    """Waypoint columns (level-``level`` serials) and the kind of each segment between them.

    ``free`` (pairs x factors, bool) marks base coordinates of the target that
    may end anywhere: the target is then the set of nodes of ``v``'s base copy
    that match ``v`` outside those factors, and the route stops at the first
    of them it reaches (the last column).  ``free=None`` is a point target.
    ``literal`` follows the listing of Algorithm 1 word for word (``u' = (u0,
    u1, v1, u3)``, ``v' = (v0, v1, u1, v3)``, sub-routes to those exact
    nodes); otherwise ``u'`` and ``v'`` are the ends of sub-routes that leave
    the super-node coordinates alone, as the proof of Theorem 2 assumes.

    Proof reading, Case 2 at this level (``SN`` the level's super-node
    factors, ``R_j`` Theorem 2's bound at level ``j``, ``R(F)`` the routing
    time of the sub-product over ``F``):

    * ``u -> u'``: a call one level down into the exit super-node, ``SN``
      free: at most ``R_{j-1} - R(SN)`` hops; then the cross link;
    * point target: base routing inside the entry super-node to ``v'``, the
      end of a reversed call ``v -> v'`` (``SN`` free), as in the listing:
      ``R(SN) + R_{j-1} - R(SN)``;
    * set target (a nested call, free factors ``F``): one forward call from
      ``u''`` to the target inside its cluster, ``R_{j-1} - R(F)``.  A
      reversed call cannot do this: it starts in the target's base copy and
      its cross links carry only their own level's super-node coordinates, so
      free coordinates chosen at its start are lost on the way (the ``k = 3``
      overruns of the earlier version); a forward call keeps them free down to
      its last base segment, which lies in the target's base copy.

    By induction every call to a target with free factors ``F`` takes at most
    ``R_j - R(F)`` hops (level 0: ``R(B) - R(F)``; Case 2 or 3:
    ``(R_{j-1} - R(SN)) + (R_{j-1} - R(F)) + 2 = R_j - R(F)``), which is
    Theorem 2 for ``F`` empty.
    """
    if level == 0:
        if free is not None:
            v = _replace_coords(layout, 0, v, u, free)
        return [u, v], [BASE]
    cu, uu, _, _ = layout.decode(level, u)
    cv, uv, _, nv = layout.decode(level, v)
    same = (cu == cv) & (uu == uv)
    w = np.where((cu == cv) & ~same, layout.cross(level, u), u)
    cw, uw, _, nw = layout.decode(level, w)
    exit_target = layout.encode(level, cw, uw, uv, nw)            # u' of the listing
    own = np.zeros((len(u), len(layout.factors)), dtype=bool)
    own[:, list(layout.supernodes[level - 1])] = True            # the level's super-node factors
    if literal:
        first = _inside_cluster(layout, level, w, np.where(same, v, exit_target), None, True)
        u1 = first[0][-1]
        u2 = np.where(same, u1, layout.cross(level, u1))
        v1 = np.where(same, u1, layout.encode(level, cv, uv, uw, nv))
        second = _inside_cluster(layout, level, v1, np.where(same, u1, v), None, True)
        return [u] + first[0] + [u2] + second[0], [CROSS] + first[1] + [CROSS, BASE] + second[1]
    free_first = np.where(same[:, None], False if free is None else free, own)
    first = _inside_cluster(layout, level, w, np.where(same, v, exit_target), free_first, False)
    u1 = first[0][-1]
    u2 = np.where(same, u1, layout.cross(level, u1))
    if free is None:
        entry = layout.encode(level, cv, uv, uw, nv)
        back = _inside_cluster(layout, level, np.where(same, u1, v), np.where(same, u1, entry),
                               np.where(same[:, None], False, own), False)
        second = back[0][::-1]
        return [u] + first[0] + [u2] + second, [CROSS] + first[1] + [CROSS, BASE] + back[1][::-1]
    second = _inside_cluster(layout, level, u2, np.where(same, u2, v), np.where(same[:, None], False, free), False)
    # second[0][0] is u2 itself, reached from u1 by the cross link
    return [u] + first[0] + second[0], [CROSS] + first[1] + [CROSS] + second[1]


def _inside_cluster(layout: HDNLayout, level: int, a: np.ndarray, b: np.ndarray, free, literal: bool):
    """Route ``a -> b`` (same level-``level`` cluster) by the level-``level-1`` algorithm, after re-indexing."""
    cluster, za = layout.to_cluster(level, a)
    _, zb = layout.to_cluster(level, b)
    cols, kinds = _waypoints(layout, level - 1, za, zb, free, literal)
    return [layout.from_cluster(level, cluster, c) for c in cols], kinds


def route_waypoints(layout: HDNLayout, sources, targets, literal: bool = False, free=None):
    """Give the waypoints of the HDN routing Algorithm 1 for arrays of node pairs.

    Waypoints of Algorithm 1 for arrays of node indices (level-``k`` serials).

    ``free`` (optional) makes each target a set: the nodes of its base copy
    that agree with it outside the given base factors (a sequence of factor
    positions for every pair, or a ``pairs x factors`` bool array).  This is
    the target of the algorithm's own nested calls (a super-node); the route
    then takes at most Theorem 2's bound minus the routing time of the free
    factors.

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.
    sources, targets : array_like of int
        Node indices (level-``k`` serials), one pair per route.
    literal : bool, default False
        Take the listing of Algorithm 1 word for word instead of the reading of its text and of the proof of
        Theorem 2 (see the module docstring).
    free : sequence or numpy.ndarray, optional
        Per pair, base factor positions (or a ``pairs x factors`` bool array) in which the target is free.

    Returns
    -------
    tuple
        Waypoint columns (level-``k`` serials) and the kind of each segment between them.

    Raises
    ------
    TopocastError
        Sources and targets of different lengths, a node out of range, or ``free`` with ``literal``.
    """
    u = np.atleast_1d(np.asarray(sources, dtype=np.int64))
    v = np.atleast_1d(np.asarray(targets, dtype=np.int64))
    n = layout.num_nodes
    if len(u) != len(v):
        raise TopocastError("route: sources and targets must have the same length")
    if len(u) and (u.min() < 0 or v.min() < 0 or u.max() >= n or v.max() >= n):
        raise TopocastError(f"route: nodes must be in 0..{n - 1}")
    if free is not None:
        if literal:
            raise TopocastError("route: parameter 'free' needs the proof reading (literal=False): "
                                "the literal listing routes to single nodes only")
        free = _free_mask(layout, free, len(u))
    return _waypoints(layout, layout.k, u, v, free, literal)


def _free_mask(layout: HDNLayout, free, pairs: int) -> np.ndarray:
    nf = len(layout.factors)
    arr = np.asarray(free)
    if arr.dtype == bool and arr.ndim == 2:
        if arr.shape != (pairs, nf):
            raise TopocastError(f"route: parameter 'free' as a mask must have shape ({pairs}, {nf}), "
                                f"got {arr.shape}")
        return arr
    positions = [int(i) for i in np.atleast_1d(arr)]
    if any(i < 0 or i >= nf for i in positions):
        raise TopocastError(f"route: parameter 'free' must list base factor positions in 0..{nf - 1}, "
                            f"got {positions}")
    mask = np.zeros((pairs, nf), dtype=bool)
    mask[:, positions] = True
    return mask


def _base_distance(layout: HDNLayout, ca: np.ndarray, cb: np.ndarray) -> np.ndarray:
    from ..infra.bits import bit_counts  # numba, which bits.py loads, only when a distance is asked for

    dist = np.zeros(len(ca), dtype=np.int64)
    for i, f in enumerate(layout.factors):
        x, y = ca[:, i], cb[:, i]
        if f.kind == "ring":
            d = (y - x) % f.param
            dist += np.minimum(d, f.param - d)
        elif f.kind == "complete":
            dist += x != y
        else:
            dist += bit_counts(x ^ y)
    return dist


def route_lengths(layout: HDNLayout, sources, targets, literal: bool = False, free=None) -> np.ndarray:
    """Give the hop count of each route of Algorithm 1, without expanding the paths.

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.
    sources, targets : array_like of int
        Node indices (level-``k`` serials), one pair per route.
    literal : bool, default False
        Take the listing of Algorithm 1 word for word instead of the reading of its text and of the proof of
        Theorem 2 (see the module docstring).
    free : sequence or numpy.ndarray, optional
        Base factors free at each target (see :func:`route_waypoints`).

    Returns
    -------
    numpy.ndarray
        Hops per route.

    Raises
    ------
    TopocastError
        As :func:`route_waypoints`.
    """
    cols, kinds = route_waypoints(layout, sources, targets, literal, free)
    total = np.zeros(len(cols[0]), dtype=np.int64)
    for p, q, kind in zip(cols[:-1], cols[1:], kinds, strict=False):
        if kind == CROSS:
            total += p != q
        else:
            _, ap = layout.split(layout.k, p)
            _, aq = layout.split(layout.k, q)
            total += _base_distance(layout, layout.base_coords(ap), layout.base_coords(aq))
    return total


def _base_segment(layout: HDNLayout, p: np.ndarray, q: np.ndarray) -> list[np.ndarray]:
    """Dimension-order hops from ``p`` to ``q`` in one base copy: one column per possible hop."""
    copy, ap = layout.split(layout.k, p)
    _, aq = layout.split(layout.k, q)
    cur = layout.base_coords(ap)
    goal = layout.base_coords(aq)
    strides = np.asarray(layout.base_codec.strides, dtype=np.int64)
    columns = []
    for i, f in enumerate(layout.factors):
        for _ in range(f.diameter):
            x, y = cur[:, i], goal[:, i]
            if f.kind == "ring":
                d = (y - x) % f.param
                step = np.where(d == 0, 0, np.where(d <= f.param // 2, 1, -1))
                cur[:, i] = (x + step) % f.param
            elif f.kind == "complete":
                cur[:, i] = y
            else:
                diff = x ^ y
                cur[:, i] = x ^ (diff & -diff)
            columns.append(layout.join(layout.k, copy, cur @ strides))
    return columns


def route_paths(layout: HDNLayout, sources, targets, literal: bool = False, free=None) -> np.ndarray:
    """Expand the routes of Algorithm 1 into padded paths: column 0 the source, the last column the target.

    Equal consecutive entries are stays, not hops.  With ``free`` the last column is the node of the target
    set reached.

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.
    sources, targets : array_like of int
        Node indices (level-``k`` serials), one pair per route.
    literal : bool, default False
        Take the listing of Algorithm 1 word for word instead of the reading of its text and of the proof of
        Theorem 2 (see the module docstring).
    free : sequence or numpy.ndarray, optional
        Base factors free at each target (see :func:`route_waypoints`).

    Returns
    -------
    numpy.ndarray
        Shape ``(pairs, width)``.

    Raises
    ------
    TopocastError
        As :func:`route_waypoints`.
    """
    cols, kinds = route_waypoints(layout, sources, targets, literal, free)
    out = [cols[0]]
    for p, q, kind in zip(cols[:-1], cols[1:], kinds, strict=False):
        if kind == CROSS:
            out.append(q)
        else:
            out.extend(_base_segment(layout, p, q))
    return np.stack(out, axis=1)


def compact_path(padded_row: np.ndarray) -> list[int]:
    """Turn one padded path row into a list of nodes without stays.

    Parameters
    ----------
    padded_row : numpy.ndarray
        One row of :func:`route_paths`.

    Returns
    -------
    list of int
        The path.
    """
    row = np.asarray(padded_row)
    keep = np.ones(len(row), dtype=bool)
    keep[1:] = row[1:] != row[:-1]
    return [int(x) for x in row[keep]]


def path_hops(paths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flatten padded paths into their hops.

    Parameters
    ----------
    paths : numpy.ndarray
        Padded paths (:func:`route_paths`).

    Returns
    -------
    lengths, hop_sources, hop_targets : numpy.ndarray
        Hops per path and the ends of every hop.
    """
    a, b = paths[:, :-1], paths[:, 1:]
    moved = a != b
    return moved.sum(axis=1), a[moved], b[moved]


def hops_are_links(topology: Topology, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Tell whether each hop ``src -> dst`` is a link (vectorised over the CSR of a regular topology).

    Parameters
    ----------
    topology : Topology
        The network.
    src, dst : numpy.ndarray
        Hop ends.

    Returns
    -------
    numpy.ndarray
        Boolean per hop.
    """
    deg = topology.port_degree
    if len(deg) and deg.min() == deg.max():
        table = topology.indices.reshape(topology.num_nodes, int(deg[0]))
        return (table[src] == dst[:, None]).any(axis=1)
    return np.array([topology.has_edge(int(a), int(b)) for a, b in zip(src, dst, strict=False)], dtype=bool)


def hdn_route(topology: Topology, source: int, target: int) -> list[int]:
    """Route from ``source`` to ``target`` by Algorithm 1 (the family's router).

    Parameters
    ----------
    topology : Topology
        A hierarchical dual-net.
    source, target : int
        Node indices.

    Returns
    -------
    list of int
        The path, both ends included.

    Raises
    ------
    TopocastError
        A node out of range or a network that is not a hierarchical dual-net.
    """
    layout = hdn_layout(topology)
    return compact_path(route_paths(layout, [source], [target])[0])


#: the family router of ``topocast route`` (the topology layer does not import this module)
for _family in ("hdn", "rdn", "dualcube"):
    attach_router(_family, hdn_route)
