"""Source routes for unicast worms on any topology, and the virtual channels that keep them deadlock-free.

Every route is an explicit path of nodes and arcs (the wormhole engine
follows it as given), built for a whole workload at once in numba.

``minimal``
    A shortest path, deterministic: from node ``x`` towards ``t`` the worm
    takes the *lowest arc id* among the arcs to a neighbour one hop closer
    to ``t`` (rows of the CSR are sorted by neighbour, so: the smallest
    neighbour index, then the lowest arc label among parallel links).  One
    breadth-first search per distinct destination gives the distances
    (no ``N x N`` table is stored); refused when the searches would visit
    more than :data:`MAX_SEARCH_WORK` arcs.
``dor``
    Dimension-order routing on ``mesh``, ``torus``, ``ring``, ``path`` and
    ``hypercube``: the coordinates are corrected one at a time, the least
    significant (last) first, as the mesh's e-cube (XY) routing does; on a
    ring dimension of size ``k`` the shorter way round; when both ways are
    ``k/2`` hops, ``+`` (``ties=plus``, the default) or a fair coin per
    message and dimension (``ties=random``, as BookSim2's torus
    dimension-order routing); on a hypercube, bit 0 first (e-cube).
``valiant``
    Two phases through a random intermediate (Valiant and Brebner): on
    ``dragonfly`` and ``galaxyfly`` a supernode (group) drawn uniformly among
    those other than the source's and the destination's, reached by the
    minimal route to its nearest router, then the minimal route to the
    destination (Kim, Dally, Scott and Abts 2008; with fewer than three
    supernodes the route is minimal); on the ``dor`` families an intermediate
    node drawn uniformly among all nodes, both phases dimension-ordered; on
    any other topology an intermediate node drawn uniformly among all nodes,
    both phases ``minimal``.

``ugal``
    Universal globally-adaptive load-balanced routing, local variant
    (UGAL-L; Singh 2005, ch. 3; Kim, Dally, Scott and Abts 2008, section
    4.2), on ``dragonfly`` and ``galaxyfly``: every message gets its
    ``minimal`` route and the ``valiant`` route through a random supernode
    (the same draw as ``routing=valiant``); its source router picks one in
    the cycle the header enters it, from the queues it sees then: the
    Valiant route when ``H_min * q_min > H_val * q_val + ugal_threshold``,
    ``H`` the route's hops and ``q`` the flits in the buffers at the far end
    of its first link (the source's used credits on that port).  The
    choice is the engine's (``WormTraffic.path_alt``); the plan holds both
    routes.  ``ugal_threshold`` 0 (default) favours the minimal route only
    on ties; a large value gives ``minimal``, a very negative one
    ``valiant``, flit for flit.

On a degraded network (``topology.faults``, :mod:`topocast.faults`) every
route runs on the surviving graph: ``minimal`` and both legs of ``valiant``
are shortest paths there; ``valiant``'s intermediate is drawn among what the
source still reaches (:func:`surviving_intermediates`), a node or, on the
group families, a group with a healthy router in the source's component;
``ugal`` chooses between those two.  ``dor`` and the ``ring`` classes are
refused (:func:`check_surviving`), and ``auto`` takes hop classes for every
routing, the one scheme here whose deadlock freedom needs nothing of the
routes' shape.

Virtual channels (``path_vc``: the VC of the arc entering each path position):

``single``
    VC 0 everywhere.  ``dor`` on a mesh, path or hypercube is deadlock-free
    on it (dimension order makes the channel dependency graph acyclic).
``dateline``
    ``dor`` on a torus or ring: a worm starts every dimension on VC 0 and
    uses VC 1 from the wrap-around arc of that dimension on (the dateline);
    2 VCs, deadlock-free (Dally and Seitz 1987): within one ring dimension
    the VC-0 channels end at the dateline and a worm crosses it at most once.
``ring``
    ``dor`` on a torus or ring, the class rule of BookSim2's torus routing:
    a worm keeps one VC for the whole ring of a dimension, VC 1 when the
    destination's coordinate is below the source's and VC 0 otherwise.  2
    VCs, deadlock-free: a route takes the shorter way (at most ``k/2``
    hops), so going ``+`` the VC-1 worms are exactly those that cross the
    wrap-around arc and none of them reaches the arc into coordinate
    ``k/2``, and the VC-0 worms never cross it (mirrored going ``-``); no
    class of channels closes a cycle.
``phase``
    ``valiant`` on the ``dor`` families: phase ``p`` (0 to the intermediate,
    1 after it) uses VCs ``p`` (mesh, path, hypercube; 2 VCs) or ``2p`` and
    ``2p + 1`` with the dateline rule (torus, ring; 4 VCs): each phase is
    deadlock-free by itself and worms only move from phase 0 to phase 1.
``hop``
    Hop-class: the ``i``-th hop of a worm (``i = 0, 1, ...``) uses VC ``i``;
    VC numbers rise along every route, so no cycle of channel dependencies
    exists on any topology, with as many VCs as the longest route has hops.
    The default for ``minimal``, ``ugal``, and ``valiant`` outside the
    ``dor`` families (with ``ugal`` as many VCs as the longer of a message's
    two routes has hops).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.heap import grow
from ..topology.core import Topology
from ..topology.kernels import bfs_from_set

ROUTINGS = ("minimal", "dor", "valiant", "ugal")
DOR_FAMILIES = ("mesh", "torus", "ring", "path", "hypercube")
WRAP_FAMILIES = ("torus", "ring")
SUPERNODE_FAMILIES = ("dragonfly", "galaxyfly", "dragonfly-plus")
#: families with ugal: the supernode families (Valiant through a random group) and, with Valiant through a random
#: router, Slim Fly, PolarFly and HyperX (UGAL as their papers run it; docs/topologies.md)
UGAL_FAMILIES = SUPERNODE_FAMILIES + ("slimfly", "polarfly", "hyperx")
VC_SCHEMES = ("auto", "hop", "single", "ring")
#: dor on a ring dimension when both ways are k/2 hops
TIES = ("plus", "random")
#: arcs the breadth-first searches of a table-free minimal routing may visit (about a minute of numba)
MAX_SEARCH_WORK = 4e9


@dataclass
class Routes:
    """Explicit paths of many worms with their virtual channels.

    Explicit paths of many worms: worm ``w`` is ``node[ptr[w]:ptr[w+1]]``, entered by ``arc`` (-1 at the
    start) on VC ``vc`` (``None``: VC 0 everywhere).  ``need`` VCs the scheme uses; ``scheme`` its name;
    ``alt`` (``ugal``) every worm's alternate route, the source's choice.
    """

    ptr: np.ndarray
    node: np.ndarray
    arc: np.ndarray
    vc: np.ndarray | None
    need: int
    scheme: str
    alt: Routes | None = None

    @property
    def hops(self) -> np.ndarray:
        """Hops of every worm."""
        return np.diff(self.ptr) - 1


# -- dimension-order routing -------------------------------------------------------------------

@dataclass(frozen=True)
class Lattice:
    """A ``dor`` family as mixed-radix coordinates.

    A ``dor`` family as mixed-radix coordinates: sizes, strides, whether dimensions wrap, and
    ``table[x, 2i + s]`` the arc leaving ``x`` in dimension ``i``, ``s = 0`` up, ``1`` down.
    """

    dims: np.ndarray
    strides: np.ndarray
    wrap: bool
    table: np.ndarray


def lattice(topology: Topology) -> Lattice:
    """Describe a ``dor`` family as a :class:`Lattice`: sizes, strides, wraparound and the arc table.

    Parameters
    ----------
    topology : Topology
        A ring, path, mesh, torus or hypercube.

    Returns
    -------
    Lattice
        The lattice.

    Raises
    ------
    TopocastError
        Naming ``routing``, for another family.
    """
    family = topology.family
    if family not in DOR_FAMILIES:
        raise TopocastError(f"unicast: parameter 'routing' dor runs on {', '.join(DOR_FAMILIES)}, not on "
                            f"family '{family}'; use routing=minimal")
    if family in ("mesh", "torus"):
        dims = tuple(int(k) for k in topology.params["dims"])
    elif family in ("ring", "path"):
        dims = (topology.num_nodes,)
    else:
        dims = (2,) * int(topology.params["n"])
    d = len(dims)
    strides = np.ones(d, dtype=np.int64)
    for i in range(d - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    table = np.full((topology.num_nodes, 2 * d), -1, dtype=np.int64)
    arcs = np.arange(topology.num_arcs, dtype=np.int64)
    labels = topology.arc_labels.astype(np.int64)
    if family == "hypercube":  # label j flips bit j, the coordinate d - 1 - j
        table[topology.arc_sources, 2 * (d - 1 - labels)] = arcs
        table[topology.arc_sources, 2 * (d - 1 - labels) + 1] = arcs
    else:  # lattice labels: 2i for +d_i, 2i + 1 for -d_i
        table[topology.arc_sources, labels] = arcs
    return Lattice(np.asarray(dims, dtype=np.int64), strides, family in WRAP_FAMILIES, table)


def dor_hops(lat: Lattice, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Give the hops of the dimension-ordered route from every ``src`` to its ``dst`` (Manhattan or ring distance).

    Parameters
    ----------
    lat : Lattice
        The lattice.
    src, dst : numpy.ndarray
        The pairs.

    Returns
    -------
    numpy.ndarray
        Hops per pair.
    """
    hops = np.zeros(len(src), dtype=np.int64)
    for k, s in zip(lat.dims.tolist(), lat.strides.tolist(), strict=True):
        a, b = (src // s) % k, (dst // s) % k
        if lat.wrap:
            up = (b - a) % k
            hops += np.minimum(up, k - up)
        else:
            hops += np.abs(b - a)
    return hops


@nb.njit(cache=True)
def _dor_fill(src, mid, dst, dims, strides, wrap, table, dateline, phase_vcs, ptr, node, arc, vc, coins,
              ring_class):
    """Fill every worm's dimension-ordered route (numba).

    Fill every worm's route: ``src -> mid -> dst`` (``mid < 0``: straight), phase ``p`` on VCs from
    ``p * phase_vcs``, each leg dimension by dimension from the highest.

    ``coins``: bit ``d - 1 - i`` says whether a tie in dimension ``i`` goes ``+`` (-1: always);
    ``ring_class``: the VC of a ring is fixed on entry (``ring``), else the dateline or VC 0.  (One loop over
    the legs, no function call per worm: a call passing the arrays costs more than the hops it writes.)
    """
    d = len(dims)
    for w in range(len(src)):
        pos = ptr[w]
        x = src[w]
        node[pos] = x
        arc[pos] = -1
        vc[pos] = 0
        pos += 1
        cw = coins[w]
        for leg in range(2):
            if leg == 0:
                t = mid[w] if mid[w] >= 0 else dst[w]
                base_vc = 0
            elif mid[w] >= 0:
                t = dst[w]
                base_vc = phase_vcs
            else:
                break
            for i in range(d - 1, -1, -1):
                k = dims[i]
                s = strides[i]
                cx = (x // s) % k
                ct = (t // s) % k
                if cx == ct:
                    continue
                if wrap:
                    delta = (ct - cx) % k
                    up = 2 * delta < k or (2 * delta == k and (cw < 0 or (cw >> (d - 1 - i)) & 1 == 1))
                    steps = delta if up else k - delta
                else:
                    up = ct > cx
                    steps = ct - cx if up else cx - ct
                crossed = 0
                c = cx                # the coordinate, kept as it moves
                for _ in range(steps):
                    if up:
                        a = table[x, 2 * i]
                        if c == k - 1:
                            x -= (k - 1) * s
                            c = 0
                            crossed = 1
                        else:
                            x += s
                            c += 1
                    else:
                        a = table[x, 2 * i + 1]
                        if c == 0:
                            x += (k - 1) * s
                            c = k - 1
                            crossed = 1
                        else:
                            x -= s
                            c -= 1
                    node[pos] = x
                    arc[pos] = a
                    if ring_class:
                        vc[pos] = base_vc + (1 if ct < cx else 0)
                    else:
                        vc[pos] = base_vc + (crossed if dateline else 0)
                    pos += 1


def dor_routes(topology: Topology, src: np.ndarray, dst: np.ndarray, mid: np.ndarray | None = None,
               lat: Lattice | None = None, coins: np.ndarray | None = None, ring_class: bool = False
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Route messages in dimension order, optionally through an intermediate node.

    ``(ptr, node, arc, vc)`` of the dimension-ordered routes ``src -> dst`` (through ``mid`` where
    ``mid >= 0``); ``vc`` is the dateline VC on a torus or ring, or with ``ring_class`` the ring's class
    (plus 2 in phase 1), the phase on a mesh.  ``coins``: per message, the tie bits of :func:`tie_coins`
    (None: ties go ``+``).

    Parameters
    ----------
    topology : Topology
        A ``dor`` family.
    src, dst : numpy.ndarray
        The pairs.
    mid : numpy.ndarray, optional
        Intermediate node per message (-1: straight).
    lat : Lattice, optional
        The lattice (default: made here).
    coins : numpy.ndarray, optional
        Tie bits per message (:func:`tie_coins`); None: ties go ``+``.
    ring_class : bool, default False
        Give the ring class (plus 2 in phase 1) as the VC instead of the dateline VC.

    Returns
    -------
    ptr, node, arc, vc : numpy.ndarray
        CSR of the paths, their entering arcs and virtual channels.
    """
    lat = lat or lattice(topology)
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    if mid is None:
        mid = np.full(len(src), -1, dtype=np.int64)
        hops = dor_hops(lat, src, dst)
    else:
        mid = np.ascontiguousarray(mid, dtype=np.int64)
        via = mid >= 0
        hops = dor_hops(lat, src, np.where(via, mid, dst))
        hops[via] += dor_hops(lat, mid[via], dst[via])
    ptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(hops + 1, out=ptr[1:])
    total = int(ptr[-1])
    node = np.empty(total, dtype=np.int64)
    arc = np.empty(total, dtype=np.int64)
    vc = np.empty(total, dtype=np.int64)
    if coins is None:
        coins = np.full(len(src), -1, dtype=np.int64)
    _dor_fill(src, mid, dst, lat.dims, lat.strides, lat.wrap, lat.table, lat.wrap, 2 if lat.wrap else 1,
              ptr, node, arc, vc, np.ascontiguousarray(coins, dtype=np.int64), bool(ring_class and lat.wrap))
    return ptr, node, arc, vc


def tie_coins(messages: int, dims: int, rng: np.random.Generator) -> np.ndarray:
    """Flip a fair coin per message and dimension for ``ties=random``.

    A fair coin per message and dimension for ``ties=random``, as a bitmask per message: bit ``j`` is the
    coin of dimension ``dims - 1 - j`` (the order ``dor`` corrects them in); set = go ``+``.

    Parameters
    ----------
    messages : int
        Messages.
    dims : int
        Dimensions.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    numpy.ndarray
        A bitmask per message.
    """
    bits = rng.integers(0, 2, size=(messages, dims)).astype(np.int64)
    return (bits << np.arange(dims, dtype=np.int64)).sum(axis=1) if dims else np.zeros(messages, np.int64)


# -- minimal routing without a table -----------------------------------------------------------

@nb.njit(cache=True, inline="always")
def _step(x, indptr, indices, dist):
    """Find the lowest arc from ``x`` to a neighbour one hop closer (``dist[x] > 0``)."""
    want = dist[x] - 1
    for e in range(indptr[x], indptr[x + 1]):
        if dist[indices[e]] == want:
            return e
    return -1


@nb.njit(cache=True)
def _walks(indptr, indices, n, tptr, tnodes, gptr, gmsg, start):
    """Minimal walks of many messages grouped by target set.

    Group ``g`` has targets ``tnodes[tptr[g]:tptr[g+1]]`` and messages ``gmsg[gptr[g]:gptr[g+1]]``;
    message ``i`` walks from ``start[i]`` to the nearest target.  Returns per message the offset and node
    count of its walk in ``(nodes, arcs)`` and the first message whose start cannot reach its target
    (-1: none).
    """
    m = len(start)
    off = np.zeros(m, np.int64)
    length = np.zeros(m, np.int64)
    nodes = np.empty(max(16, 4 * m), np.int64)
    arcs = np.empty(max(16, 4 * m), np.int64)
    pos = 0
    dist = np.full(n, -1, np.int64)
    queue = np.empty(n, np.int64)
    for g in range(len(gptr) - 1):
        reached = bfs_from_set(indptr, indices, tnodes[tptr[g]:tptr[g + 1]], dist, queue)
        for k in range(gptr[g], gptr[g + 1]):
            i = gmsg[k]
            x = start[i]
            if dist[x] < 0:
                return off, length, nodes, arcs, i
            need = dist[x] + 1
            nodes = grow(nodes, pos + need - 1)
            arcs = grow(arcs, pos + need - 1)
            off[i] = pos
            length[i] = need
            nodes[pos] = x
            arcs[pos] = -1
            pos += 1
            while dist[x] > 0:
                e = _step(x, indptr, indices, dist)
                x = indices[e]
                nodes[pos] = x
                arcs[pos] = e
                pos += 1
        for q in range(reached):
            dist[queue[q]] = -1
    return off, length, nodes, arcs, -1


@nb.njit(cache=True)
def _join(ptr, off1, len1, nodes1, arcs1, off2, len2, nodes2, arcs2, node, arc):
    """Write walk 1, then walk 2 without its first node (the end of walk 1), of every message."""
    for w in range(len(ptr) - 1):
        pos = ptr[w]
        for q in range(len1[w]):
            node[pos] = nodes1[off1[w] + q]
            arc[pos] = arcs1[off1[w] + q]
            pos += 1
        for q in range(1, len2[w]):
            node[pos] = nodes2[off2[w] + q]
            arc[pos] = arcs2[off2[w] + q]
            pos += 1


def _groups(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Messages sorted by ``keys``: ``(order, group_ptr, group_key)``."""
    order = np.argsort(keys, kind="stable").astype(np.int64)
    sorted_keys = keys[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    heads = np.flatnonzero(first)
    return order, np.append(heads, len(order)).astype(np.int64), sorted_keys[heads]


def check_search_work(topology: Topology, searches: int, routing: str = "minimal") -> None:
    """Refuse table-free minimal routing whose searches would visit more than :data:`MAX_SEARCH_WORK` arcs.

    Parameters
    ----------
    topology : Topology
        The network.
    searches : int
        Breadth-first searches needed (one per target).
    routing : str, default "minimal"
        The routing, for the message.

    Raises
    ------
    TopocastError
        Naming ``routing``, when the work is too large.
    """
    work = float(searches) * (topology.num_nodes + topology.num_arcs)
    if work > MAX_SEARCH_WORK:
        raise TopocastError(f"unicast: parameter 'routing' {routing} needs one breadth-first search per "
                            f"destination: {searches} searches over {topology.num_arcs} arcs exceed the limit of "
                            f"{MAX_SEARCH_WORK:.0e} arc visits; use routing=dor on a mesh, torus or hypercube, or "
                            f"a smaller network")


def walks(topology: Topology, start: np.ndarray, target: np.ndarray, group_size: int = 1, routing: str = "minimal"):
    """Find minimal walks from every start to a target node or to the nearest node of a block of nodes.

    With ``group_size`` 1 the target is node ``target``; else the block ``target * group_size ..
    target * group_size + group_size - 1`` (a supernode).

    Parameters
    ----------
    topology : Topology
        The network.
    start : numpy.ndarray
        Start node per message.
    target : numpy.ndarray
        Target node (or block) per message.
    group_size : int, default 1
        Nodes per block.
    routing : str, default "minimal"
        The routing, for messages.

    Returns
    -------
    off, length, nodes, arcs : numpy.ndarray
        Per message the offset and node count of its walk in ``(nodes, arcs)``.

    Raises
    ------
    TopocastError
        When the searches are too much work or a start cannot reach its target.
    """
    start = np.ascontiguousarray(start, dtype=np.int64)
    target = np.ascontiguousarray(target, dtype=np.int64)
    order, gptr, keys = _groups(target)
    check_search_work(topology, len(keys), routing)
    tnodes = (keys[:, None] * group_size + np.arange(group_size, dtype=np.int64)).reshape(-1)
    tptr = np.arange(len(keys) + 1, dtype=np.int64) * group_size
    off, length, nodes, arcs, bad = _walks(topology.indptr, topology.indices, topology.num_nodes, tptr, tnodes,
                                           gptr, order, start)
    if bad >= 0:
        raise TopocastError(f"unicast: node {int(start[bad])} cannot reach node {int(target[bad] * group_size)}: "
                            f"the network is not connected")
    return off, length, nodes, arcs


def minimal_routes(topology: Topology, src: np.ndarray, dst: np.ndarray, mid: np.ndarray | None = None,
                   mid_group: int = 1, routing: str = "minimal") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Route messages on minimal paths, optionally in two phases through intermediates.

    ``(ptr, node, arc)`` of the minimal routes ``src -> dst``, or, with ``mid``, of the two-phase
    routes ``src -> mid -> dst`` (``mid`` a node, or with ``mid_group > 1`` a block of nodes reached at its
    nearest node; ``mid < 0``: straight).

    Parameters
    ----------
    topology : Topology
        The network.
    src, dst : numpy.ndarray
        The pairs.
    mid : numpy.ndarray, optional
        Intermediate per message (-1: straight).
    mid_group : int, default 1
        Nodes per intermediate block.
    routing : str, default "minimal"
        The routing, for messages.

    Returns
    -------
    ptr, node, arc : numpy.ndarray
        CSR of the paths and their entering arcs.

    Raises
    ------
    TopocastError
        As :func:`walks`.
    """
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    if mid is None:
        off, length, nodes, arcs = walks(topology, src, dst, routing=routing)
        ptr = np.zeros(len(src) + 1, dtype=np.int64)
        np.cumsum(length, out=ptr[1:])
        node = np.empty(int(ptr[-1]), dtype=np.int64)
        arc = np.empty(int(ptr[-1]), dtype=np.int64)
        none = np.zeros(len(src), dtype=np.int64)
        _join(ptr, off, length, nodes, arcs, none, none, nodes[:0], arcs[:0], node, arc)
        return ptr, node, arc
    mid = np.ascontiguousarray(mid, dtype=np.int64)
    via = np.flatnonzero(mid >= 0)
    direct = np.flatnonzero(mid < 0)
    nv, av = np.zeros(0, np.int64), np.zeros(0, np.int64)
    off1 = np.zeros(len(src), dtype=np.int64)
    len1 = np.ones(len(src), dtype=np.int64)
    if len(via):
        off1[via], len1[via], nv, av = walks(topology, src[via], mid[via], mid_group, routing)
    # a message without an intermediate has a phase 1 of its start node alone
    n1 = np.concatenate([nv, src[direct]])
    a1 = np.concatenate([av, np.full(len(direct), -1, np.int64)])
    off1[direct] = len(nv) + np.arange(len(direct), dtype=np.int64)
    turn = n1[off1 + len1 - 1]
    off2, len2, n2, a2 = walks(topology, turn, dst, routing=routing)
    ptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(len1 + len2 - 1, out=ptr[1:])
    node = np.empty(int(ptr[-1]), dtype=np.int64)
    arc = np.empty(int(ptr[-1]), dtype=np.int64)
    _join(ptr, off1, len1, n1, a1, off2, len2, n2, a2, node, arc)
    return ptr, node, arc


# -- intermediates ---------------------------------------------------------------------------------

def supernode_size(topology: Topology) -> int:
    """Give the routers per supernode (group) of a Dragonfly or Galaxyfly.

    Parameters
    ----------
    topology : Topology
        A Dragonfly or Galaxyfly.

    Returns
    -------
    int
        Routers per supernode.
    """
    return int(topology.meta["routers_per_supernode"])


def valiant_intermediates(topology: Topology, src: np.ndarray, dst: np.ndarray, rng: np.random.Generator
                          ) -> tuple[np.ndarray, int]:
    """Draw Valiant's intermediate of every message.

    ``(mid, group)``: per message the intermediate (-1: route minimally) and the size of the block it
    names (1: a node; ``a``: a supernode of ``a`` routers).

    Parameters
    ----------
    topology : Topology
        The network.
    src, dst : numpy.ndarray
        The pairs.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    tuple
        ``(mid, group)``.
    """
    n = topology.num_nodes
    if topology.family in SUPERNODE_FAMILIES:
        a = supernode_size(topology)
        count = n // a
        sg, dg = src // a, dst // a
        lo, hi = np.minimum(sg, dg), np.maximum(sg, dg)
        choices = count - 1 - (sg != dg)
        r = rng.integers(0, np.maximum(choices, 1), dtype=np.int64) if len(src) else np.zeros(0, np.int64)
        g = r + (r >= lo)
        g += (sg != dg) & (g >= hi)
        return np.where(choices > 0, g, -1), a
    return rng.integers(0, n, size=len(src), dtype=np.int64), 1


def surviving_intermediates(topology: Topology, src: np.ndarray, dst: np.ndarray, rng: np.random.Generator
                            ) -> tuple[np.ndarray, int]:
    """Draw Valiant intermediates on a degraded network: only what the source can still reach.

    On Dragonfly, Galaxyfly and Dragonfly+ a group drawn uniformly among those other than the source's and the
    destination's that hold a healthy router in the source's component (-1, minimal, when there is none); it
    is entered at its nearest router the source reaches.  Elsewhere a node drawn uniformly among the healthy
    nodes of the source's component.

    Parameters
    ----------
    topology : Topology
        The degraded network.
    src : numpy.ndarray
        Source of every message (healthy).
    dst : numpy.ndarray
        Destination of every message (healthy, connected to its source).
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    tuple of (numpy.ndarray, int)
        The intermediate per message (a group, or a node), and the routers per group (1: nodes).
    """
    from ..faults.connectivity import components, partners

    members, start, size, _ = partners(topology)
    if topology.family not in SUPERNODE_FAMILIES:
        r = rng.integers(0, size[src], dtype=np.int64) if len(src) else np.zeros(0, np.int64)
        return members[start[src] + r], 1
    a = supernode_size(topology)
    groups = topology.num_nodes // a
    comp = components(topology)
    keys = np.unique(comp[members] * groups + members // a)  # (component, group) with a healthy router there
    c = comp[src]
    first = np.searchsorted(keys, c * groups)
    count = np.searchsorted(keys, c * groups + groups) - first
    sg, dg = src // a, dst // a
    ps = np.searchsorted(keys, c * groups + sg) - first
    pd = np.searchsorted(keys, c * groups + dg) - first
    lo, hi = np.minimum(ps, pd), np.maximum(ps, pd)
    choices = count - 1 - (sg != dg)
    r = rng.integers(0, np.maximum(choices, 1), dtype=np.int64) if len(src) else np.zeros(0, np.int64)
    idx = r + (r >= lo)
    idx += (sg != dg) & (idx >= hi)
    g = keys[np.minimum(first + idx, len(keys) - 1)] % groups
    return np.where(choices > 0, g, -1), a


def check_surviving(topology: Topology, routing: str, vc_scheme: str) -> None:
    """Refuse what cannot route around failed links.

    Parameters
    ----------
    topology : Topology
        The network (nothing is refused when it is intact).
    routing : str
        The routing asked for.
    vc_scheme : str
        The virtual-channel scheme asked for.

    Raises
    ------
    TopocastError
        ``dor`` (its route is fixed by the intact lattice) or the ``ring`` VC classes (they rest on
        dimension-ordered routes) on a degraded network.
    """
    if topology.faults is None:
        return
    if routing == "dor":
        raise TopocastError(f"unicast: parameter 'routing' dor follows the intact lattice and cannot avoid the "
                            f"failed links of {topology.spec} ({topology.faults}); use routing=minimal, valiant "
                            f"or ugal")
    if vc_scheme == "ring":
        raise TopocastError(f"unicast: parameter 'vc_scheme' ring rests on dimension-ordered routes, which a "
                            f"degraded network ({topology.faults}) does not have; use vc_scheme=auto (hop classes)")


# -- virtual channels ------------------------------------------------------------------------------

def hop_class(ptr: np.ndarray) -> np.ndarray:
    """Give hop-class VCs: position ``k`` of a worm (``k >= 1``) is entered on VC ``k - 1``; 0 at the start.

    Parameters
    ----------
    ptr : numpy.ndarray
        CSR pointers of the paths.

    Returns
    -------
    numpy.ndarray
        VC per path position.
    """
    total = int(ptr[-1])
    start = np.repeat(ptr[:-1], np.diff(ptr))
    return np.maximum(np.arange(total, dtype=np.int64) - start - 1, 0)


def route(topology: Topology, routing: str, src: np.ndarray, dst: np.ndarray, rng: np.random.Generator,
          vc_scheme: str = "auto", ties: str = "plus") -> Routes:
    """Route messages under a routing, with their virtual channels (see the module docstring).

    Parameters
    ----------
    topology : Topology
        The network.
    routing : str
        ``minimal``, ``dor``, ``valiant`` or ``ugal``.
    src, dst : numpy.ndarray
        The pairs.
    rng : numpy.random.Generator
        The random source (Valiant's intermediates, UGAL, tie coins).
    vc_scheme : str, default "auto"
        ``auto``, ``hop``, ``single`` or ``ring``.
    ties : str, default "plus"
        ``plus`` or ``random``: how half-way ring offsets are routed.

    Returns
    -------
    Routes
        Paths, VCs and the scheme.

    Raises
    ------
    TopocastError
        An unknown routing, VC scheme or tie rule, a combination that does not apply to the network, or a
        route that cannot be found.
    """
    if routing not in ROUTINGS:
        raise TopocastError(f"unicast: parameter 'routing' must be one of {', '.join(ROUTINGS)}, got '{routing}'")
    if vc_scheme not in VC_SCHEMES:
        raise TopocastError(f"unicast: parameter 'vc_scheme' must be one of {', '.join(VC_SCHEMES)}, "
                            f"got '{vc_scheme}'")
    if ties not in TIES:
        raise TopocastError(f"unicast: parameter 'ties' must be one of {', '.join(TIES)}, got '{ties}'")
    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    check_surviving(topology, routing, vc_scheme)
    degraded = topology.faults is not None
    on_lattice = topology.family in DOR_FAMILIES and not degraded
    wrap = topology.family in WRAP_FAMILIES
    if vc_scheme == "ring" and not (wrap and routing in ("dor", "valiant")):
        raise TopocastError(f"unicast: parameter 'vc_scheme' ring needs dor or valiant routing on a torus or "
                            f"ring, got routing {routing} on {topology.family}")
    if routing == "ugal":
        return _ugal_routes(topology, src, dst, rng, vc_scheme)
    if routing == "dor" or (routing == "valiant" and on_lattice):
        mid = valiant_intermediates(topology, src, dst, rng)[0] if routing == "valiant" else None
        coins = tie_coins(len(src), len(lattice(topology).dims), rng) if ties == "random" and wrap else None
        ptr, node, arc, vc = dor_routes(topology, src, dst, mid, coins=coins, ring_class=vc_scheme == "ring")
        native = ("phase" if routing == "valiant" else "dateline" if wrap else "single",
                  (2 if wrap else 1) * (2 if routing == "valiant" else 1))
        if vc_scheme == "ring":
            return Routes(ptr, node, arc, vc, native[1], "ring")
    else:
        if routing == "minimal":
            ptr, node, arc = minimal_routes(topology, src, dst)
        else:
            pick = surviving_intermediates if degraded else valiant_intermediates
            mid, group = pick(topology, src, dst, rng)
            ptr, node, arc = minimal_routes(topology, src, dst, mid, group, routing="valiant")
        vc = None
        native = None
    if vc_scheme == "single":
        return Routes(ptr, node, arc, None, 1, "single")
    if vc_scheme == "auto" and native is not None:
        scheme, need = native
        return Routes(ptr, node, arc, vc if need > 1 else None, need, scheme)
    hops = int(np.diff(ptr).max(initial=1)) - 1
    return Routes(ptr, node, arc, hop_class(ptr), max(hops, 1), "hop")


def check_ugal(topology: Topology) -> None:
    """Refuse ``ugal`` on a family other than :data:`UGAL_FAMILIES`.

    Parameters
    ----------
    topology : Topology
        The network.

    Raises
    ------
    TopocastError
        Naming ``routing``.
    """
    if topology.family not in UGAL_FAMILIES:
        raise TopocastError(f"unicast: parameter 'routing' ugal runs on {', '.join(UGAL_FAMILIES)}, not on "
                            f"family '{topology.family}'; use routing=minimal or valiant")


def _ugal_routes(topology: Topology, src: np.ndarray, dst: np.ndarray, rng: np.random.Generator,
                 vc_scheme: str) -> Routes:
    """Route by UGAL: minimal routes with Valiant routes as their alternates.

    ``ugal``: the ``minimal`` routes with the ``valiant`` routes (the same draw) as their alternates, both on
    the VC scheme's VCs for the longer of the two.
    """
    check_ugal(topology)
    minimal = route(topology, "minimal", src, dst, rng, vc_scheme)
    valiant = route(topology, "valiant", src, dst, rng, vc_scheme)
    need = max(minimal.need, valiant.need)
    return replace(minimal, need=need, alt=replace(valiant, need=need))


# -- the wormhole plan ---------------------------------------------------------------------------------

def unicast_worm_plan(generated: np.ndarray, sources: np.ndarray, destinations: np.ndarray, ptr: np.ndarray,
                      node: np.ndarray, arc: np.ndarray, vc: np.ndarray | None, *, prep: int = 0, cycles: int,
                      warmup: int, drain: int, batches: int, flits: int, load: float | None,
                      info: dict | None = None, notes: tuple[str, ...] = (), alt: Routes | None = None,
                      alt_threshold: int = 0):
    """Build the wormhole plan of routed unicasts.

    One worm per message, one job per worm at its source, one destination slot at the route's end (and with
    ``alt`` every worm's alternate route after the planned ones, chosen by its source with ``alt_threshold``).

    Parameters
    ----------
    generated : numpy.ndarray
        Generation cycle of every message.
    sources, destinations : numpy.ndarray
        The pairs.
    ptr, node, arc : numpy.ndarray
        CSR of the routes and their entering arcs.
    vc : numpy.ndarray or None
        VC per path position (None: VC 0).
    prep : int, default 0
        Preparation time in cycles.
    cycles : int
        Cycles simulated.
    warmup : int
        Cycles before the measurement window.
    drain : int
        Cycles after it.
    batches : int
        Batches of the window.
    flits : int
        Flits per message.
    load : float or None
        The offered load, recorded.
    info : dict, optional
        Extra information for the result.
    notes : tuple of str, optional
        Notes for the result.
    alt : Routes, optional
        UGAL's alternate route of every worm.
    alt_threshold : int, default 0
        UGAL's threshold for taking the alternate route.

    Returns
    -------
    WormPlan
        The plan for the wormhole engine.
    """
    from ..plans.wormhole import WormPlan, WormTraffic

    m = len(generated)
    seq = np.arange(m + 1, dtype=np.int64)
    slot = np.full(int(ptr[-1]), -1, dtype=np.int64)
    slot[ptr[1:] - 1] = seq[:-1]
    path_alt = None
    if alt is not None:
        total = int(ptr[-1])
        path_alt = np.stack([alt.ptr[:-1] + total, alt.ptr[1:] + total])
        alt_slot = np.full(int(alt.ptr[-1]), -1, dtype=np.int64)
        alt_slot[alt.ptr[1:] - 1] = seq[:-1]
        node, arc, slot = (np.concatenate(pair) for pair in ((node, alt.node), (arc, alt.arc), (slot, alt_slot)))
        if vc is not None:
            vc = np.concatenate([vc, alt.vc])
    traffic = WormTraffic(
        job_node=np.asarray(sources, dtype=np.int64), job_release=np.asarray(generated, dtype=np.int64),
        job_prep=np.full(m, int(prep), dtype=np.int64), job_worm_ptr=seq, path_ptr=ptr, path_node=node,
        path_arc=arc, path_slot=slot, slot_node=np.asarray(destinations, dtype=np.int64),
        slot_job=np.full(m, -1, dtype=np.int64), path_vc=vc, path_alt=path_alt, alt_threshold=int(alt_threshold))
    return WormPlan(traffic, traffic.job_release.copy(), traffic.job_node.copy(), seq.copy(), seq.copy(),
                    cycles=int(cycles),
                    warmup=int(warmup), drain=int(drain), batches=int(batches), flits=int(flits), load=load,
                    collective="unicast", info=dict(info or {}), notes=tuple(notes))
