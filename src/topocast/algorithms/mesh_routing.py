"""Mesh routing for wormhole plans: e-cube and Lin-Ni Hamiltonian routing, and the expansion of worms into paths.

Three deadlock-free routing functions on a k-ary n-D mesh (coordinates
mixed-radix, the first one most significant, as ``topocast.build("mesh:...")``
numbers them):

* ``ECUBE`` -- dimension-ordered (e-cube) routing, least significant
  coordinate first.  On a 2-D mesh ``(row, column)`` that is XY routing:
  along the row to the target column, then along the column.  A worm with
  several destinations follows the e-cube route from each destination to the
  next (a base-routing-conformed path when the destinations lie on one XY
  route, as column-path worms do).
* ``HIGH`` / ``LOW`` -- Lin and Ni's Hamiltonian-path routing.  Nodes carry
  the boustrophedon (snake) label of :func:`snake_labels`; the high-channel
  subnetwork holds every channel from a lower to a higher label (the channels
  of the Hamiltonian path plus the vertical "shortcut" channels), the low one
  every channel from higher to lower.  From ``x`` towards ``d`` the worm takes
  the neighbour with the largest label not beyond ``l(d)`` (the smallest, in
  the low subnetwork).  Labels rise strictly along every high path, so the
  channel dependency graph is acyclic: deadlock-free for any mix of worms in
  the two subnetworks (Lin and Ni, ISCA 1991).

Paths are expanded in numba for a whole workload at once; the engine
(:mod:`topocast.sim.wormhole.engine`) only follows the explicit arc paths.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..topology.core import Topology
from ..topology.csr import first_arc

ECUBE, HIGH, LOW = 0, 1, 2
ROUTING_NAMES = {ECUBE: "e-cube", HIGH: "high-channel", LOW: "low-channel"}


def mesh_dims(topology: Topology) -> tuple[int, ...]:
    """Give the side lengths of a ``mesh`` topology.

    Parameters
    ----------
    topology : Topology
        A mesh.

    Returns
    -------
    tuple of int
        The sides.

    Raises
    ------
    TopocastError
        For another family.
    """
    if topology.family != "mesh":
        raise TopocastError(f"wormhole: runs on the mesh family, not on '{topology.family}'")
    return tuple(int(d) for d in topology.params["dims"])


def snake_labels(dims: tuple[int, ...]) -> np.ndarray:
    """Label the nodes of a mesh along a boustrophedon (snake) Hamiltonian path.

    Digit ``i`` of the label is coordinate ``x_i``, reflected (``k_i - 1 - x_i``) when ``x_0 + ... + x_{i-1}``
    is odd; the label is that digit string read in mixed radix.  Consecutive labels are neighbours, so label
    order is a Hamiltonian path.  On a 2-D ``rows x cols`` mesh: row ``r`` runs left to right when ``r`` is
    even, right to left when odd.

    Parameters
    ----------
    dims : tuple of int
        The mesh's sides.

    Returns
    -------
    numpy.ndarray
        Label of every node.

    Examples
    --------
    >>> snake_labels((2, 3)).tolist()
    [0, 1, 2, 5, 4, 3]
    """
    dims = tuple(int(d) for d in dims)
    n = int(np.prod(dims))
    nodes = np.arange(n, dtype=np.int64)
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    coords = [(nodes // s) % k for s, k in zip(strides, dims, strict=False)]
    prefix = np.zeros(n, dtype=np.int64)
    label = np.zeros(n, dtype=np.int64)
    for i, k in enumerate(dims):
        digit = np.where(prefix % 2 == 1, k - 1 - coords[i], coords[i])
        label = label * k + digit
        prefix += coords[i]
    return label


def arc_keys(topology: Topology) -> np.ndarray:
    """Give the sorted keys ``src * N + dst`` of every arc, so that arc ids are a binary search away.

    Parameters
    ----------
    topology : Topology
        The network.

    Returns
    -------
    numpy.ndarray
        One key per arc, in CSR order.
    """
    return topology.arc_sources * topology.num_nodes + topology.indices


@nb.njit(cache=True)
def _next_hop(kind, x, d, strides, radices, label, indptr, indices):
    """One hop from ``x`` towards ``d`` under routing ``kind`` (``x != d``); -1 if none."""
    if kind == ECUBE:
        for i in range(len(strides) - 1, -1, -1):
            cx = (x // strides[i]) % radices[i]
            cd = (d // strides[i]) % radices[i]
            if cx < cd:
                return x + strides[i]
            if cx > cd:
                return x - strides[i]
        return -1
    best = -1
    target = label[d]
    for e in range(indptr[x], indptr[x + 1]):
        w = indices[e]
        lw = label[w]
        if kind == HIGH:
            if label[x] < lw <= target and (best < 0 or lw > label[best]):
                best = w
        else:
            if target <= lw < label[x] and (best < 0 or lw < label[best]):
                best = w
    return best


@nb.njit(cache=True)
def _expand(kinds, starts, dest_ptr, dests, dest_slot, strides, radices, label, indptr, indices,
            n, count_only, path_ptr, path_node, path_arc, path_slot):
    """Walk every worm; fill (or, with ``count_only``, measure) its path.

    Returns -1 on success, else the index of the first worm whose destination
    list its routing function cannot follow (e.g. labels not increasing on a
    high-channel worm).
    """
    pos = 0
    for w in range(len(kinds)):
        if not count_only:
            pos = path_ptr[w]
        x = starts[w]
        if not count_only:
            path_node[pos] = x
            path_arc[pos] = -1
            path_slot[pos] = -1
        pos += 1
        for k in range(dest_ptr[w], dest_ptr[w + 1]):
            d = dests[k]
            if d == x:
                return w
            steps = 0
            while x != d:
                y = _next_hop(kinds[w], x, d, strides, radices, label, indptr, indices)
                if y < 0:
                    return w
                if not count_only:
                    path_node[pos] = y
                    path_arc[pos] = first_arc(indptr, indices, x, y)
                    path_slot[pos] = -1
                pos += 1
                x = y
                steps += 1
                if steps > n:
                    return w
            if not count_only:
                path_slot[pos - 1] = dest_slot[k]
        if count_only:
            path_ptr[w + 1] = pos
    return -1


def expand_paths(topology: Topology, kinds, starts, dest_ptr, dests, dest_slot):
    """Expand the routes of many worms into paths.

    Paths of many worms: ``(path_ptr, path_node, path_arc, path_slot)``.

    Worm ``w`` starts at ``starts[w]``, routes with ``kinds[w]`` and visits
    ``dests[dest_ptr[w]:dest_ptr[w+1]]`` in order; ``path_slot`` marks the
    path positions where a destination absorbs its copy (the slot ids given in
    ``dest_slot``, -1 elsewhere); ``path_arc[k]`` is the arc entering position
    ``k`` (-1 at the source).

    Parameters
    ----------
    topology : Topology
        A mesh.
    kinds : numpy.ndarray
        Routing kind of every worm.
    starts : numpy.ndarray
        Start node of every worm.
    dest_ptr, dests : numpy.ndarray
        CSR of every worm's destinations, in visiting order.
    dest_slot : numpy.ndarray
        Slot id of every destination entry.

    Returns
    -------
    path_ptr, path_node, path_arc, path_slot : numpy.ndarray
        CSR of the paths: nodes, entering arcs and absorbing slots.

    Raises
    ------
    TopocastError
        For a worm that cannot reach its destinations with its routing kind.
    """
    dims = mesh_dims(topology)
    radices = np.asarray(dims, dtype=np.int64)
    strides = np.ones(len(dims), dtype=np.int64)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    label = labels_for(topology)
    kinds = np.asarray(kinds, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    dest_ptr = np.asarray(dest_ptr, dtype=np.int64)
    dests = np.asarray(dests, dtype=np.int64)
    dest_slot = np.asarray(dest_slot, dtype=np.int64)
    n = topology.num_nodes
    path_ptr = np.zeros(len(kinds) + 1, dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    bad = _expand(kinds, starts, dest_ptr, dests, dest_slot, strides, radices, label,
                  topology.indptr, topology.indices, n, True, path_ptr, empty, empty, empty)
    if bad >= 0:
        raise TopocastError(_bad_worm(bad, kinds, starts, dest_ptr, dests))
    total = int(path_ptr[-1])
    path_node = np.empty(total, dtype=np.int64)
    path_arc = np.empty(total, dtype=np.int64)
    path_slot = np.empty(total, dtype=np.int64)
    _expand(kinds, starts, dest_ptr, dests, dest_slot, strides, radices, label,
            topology.indptr, topology.indices, n, False, path_ptr, path_node, path_arc, path_slot)
    return path_ptr, path_node, path_arc, path_slot


def _bad_worm(w, kinds, starts, dest_ptr, dests) -> str:
    seq = dests[dest_ptr[w]:dest_ptr[w + 1]].tolist()
    return (f"wormhole: worm {w} ({ROUTING_NAMES.get(int(kinds[w]), kinds[w])} routing from node "
            f"{int(starts[w])}) cannot visit destinations {seq} in that order")


_LABEL_CACHE: dict[tuple[int, ...], np.ndarray] = {}


def labels_for(topology: Topology) -> np.ndarray:
    """Give the snake labels of a mesh topology (cached per shape).

    Parameters
    ----------
    topology : Topology
        A mesh.

    Returns
    -------
    numpy.ndarray
        Label of every node.
    """
    dims = mesh_dims(topology)
    if dims not in _LABEL_CACHE:
        _LABEL_CACHE[dims] = snake_labels(dims)
    return _LABEL_CACHE[dims]
