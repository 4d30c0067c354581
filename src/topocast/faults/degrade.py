"""The one transform from a fault spec to a degraded :class:`~topocast.topology.core.Topology`.

:func:`degrade` resolves a :class:`~topocast.faults.spec.FaultSpec` against a
network (names to node indices, links checked to exist), draws its random
parts from its seed, and returns the same network with the failed links
removed: the same CSR layout (rows still sorted by neighbour), the same node
numbering, family, parameters, labels and arc labels, every link of a failed
router removed and the router marked failed (:attr:`Topology.failed_nodes`).
The degraded network is an ordinary topology: algorithms, engines and bounds
read it like any other.  It knows the fault spec that made it
(:attr:`Topology.faults`, canonical, seed included) and the intact network
(:attr:`Topology.intact`), and claims no symmetry.

Draws, in this order from one ``numpy.random.default_rng(seed)``: routers
(uniformly among all routers), groups (among all groups), links (among the
links still up after the routers and groups, of ``label`` when given).  A
fraction ``f`` of ``X`` takes ``round(f * X)`` of them, ``X`` counted on the
intact network (every router, every group, every link or every link of the
label).  An explicit link ``u-v`` fails every link between ``u`` and ``v``
(both of a double link).

>>> import topocast as tc
>>> t = degrade(tc.build("ring:6"), "links=0-1")
>>> t.num_edges, t.has_edge(0, 1), t.faults, t.intact.num_edges
(5, False, 'links=[0-1]', 6)
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..topology.core import Topology
from .spec import Draw, FaultSpec, parse

#: the arc label that marks a group's global links (Dragonfly, Galaxyfly, Dragonfly+)
GLOBAL = "global"


def resolve_node(topology: Topology, text: str, key: str) -> int:
    """Node index named by ``text`` (an index, the family's label, a node name) or a :class:`TopocastError`
    naming the fault spec's ``key``."""
    n = topology.num_nodes
    if text.isdigit():
        index = int(text)
        if index >= n:
            raise TopocastError(f"faults: parameter '{key}' names node {index}, outside 0..{n - 1} of {topology.spec}")
        return index
    try:
        index = int(topology.index(text))
    except TopocastError as exc:
        raise TopocastError(f"faults: parameter '{key}': {str(exc).removeprefix('node: ')} "
                            f"(not a node of {topology.spec})") from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError):
        raise TopocastError(f"faults: parameter '{key}': '{text}' is not a node of {topology.spec}") from None
    if not 0 <= index < n:
        raise TopocastError(f"faults: parameter '{key}': '{text}' is not a node of {topology.spec}")
    return index


def link_ids(topology: Topology) -> np.ndarray:
    """The arcs that stand for the links, one per link: ``u -> v`` with ``u < v`` (CSR order)."""
    return np.flatnonzero(topology.arc_sources < topology.indices)


def reverse_of(topology: Topology, arcs: np.ndarray) -> np.ndarray:
    """The arcs going back along the links of ``arcs``, paired as :attr:`Topology.reverse_arc` pairs them
    (the k-th ``u -> v`` arc with the k-th ``v -> u`` arc), found by binary search in the sorted rows
    instead of pairing every arc of the network."""
    n = topology.num_nodes
    key = topology.arc_sources * n + topology.indices  # sorted: rows by node, each by neighbour
    u, v = topology.arc_sources[arcs], topology.indices[arcs]
    k = arcs - np.searchsorted(key, u * n + v, side="left")
    return np.searchsorted(key, v * n + u, side="left") + k


def groups_of(topology: Topology) -> np.ndarray:
    """Group of every node: the components of the network without its ``global`` links, numbered in order
    of their lowest node (Dragonfly: ``node // a``).

    Raises
    ------
    TopocastError
        When the network has no ``global`` arc label.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    if GLOBAL not in topology.label_names:
        raise TopocastError(f"faults: parameter 'groups' fails the global links of groups; {topology.spec} has no "
                            f"global links (Dragonfly, Galaxyfly and Dragonfly+ have them)")
    n = topology.num_nodes
    local = topology.arc_labels != topology.label_names.index(GLOBAL)
    graph = csr_matrix((np.ones(int(local.sum()), np.int8), (topology.arc_sources[local], topology.indices[local])),
                       shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    first = np.full(labels.max() + 1, n, dtype=np.int64)
    np.minimum.at(first, labels, np.arange(n))
    rank = np.empty_like(first)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[labels]


def _draw(rng: np.random.Generator, pool: np.ndarray, draw: Draw, total: int, key: str, what: str) -> np.ndarray:
    k = draw.size(total)
    if k > len(pool):
        raise TopocastError(f"faults: parameter '{key}' draws {k} {what}, but only {len(pool)} are left to fail")
    if k == 0:
        return pool[:0]
    return np.sort(pool[rng.choice(len(pool), size=k, replace=False)])


def _resolve_links(topology: Topology, pairs: tuple, arc_fail: np.ndarray) -> None:
    for a, b in pairs:
        u, v = resolve_node(topology, a, "links"), resolve_node(topology, b, "links")
        if u == v or not topology.has_edge(u, v):
            raise TopocastError(f"faults: parameter 'links': {a}-{b} is not a link of {topology.spec}")
        for x, y in ((u, v), (v, u)):
            lo, hi = topology.indptr[x], topology.indptr[x + 1]
            row = topology.indices[lo:hi]
            arc_fail[lo + np.flatnonzero(row == y)] = True


def degrade(topology: Topology, faults: str | FaultSpec | None) -> Topology:
    """``topology`` with the faults of ``faults`` (see the module docstring); unchanged when there are none.

    Parameters
    ----------
    topology : Topology
        The intact network (a degraded one is refused: give all faults in one spec).
    faults : str, FaultSpec or None
        The fault spec (:mod:`topocast.faults.spec`).

    Returns
    -------
    Topology
        The degraded network: same nodes, labels and family; failed links removed; failed routers marked
        (:attr:`~topocast.topology.core.Topology.failed_nodes`) and cut off; ``meta`` holds ``faults`` (the
        canonical spec), ``failed_links`` and ``failed_routers``.

    Raises
    ------
    TopocastError
        A name that is no node or link of ``topology``, a draw of more than are left, groups on a network
        without global links, an unknown ``label``.
    """
    spec = parse(faults)
    if spec is None:
        return topology
    if topology.faults is not None:
        raise TopocastError(f"faults: {topology.spec} already has faults ({topology.faults}); give every fault "
                            f"in one spec")
    n = topology.num_nodes
    rng = np.random.default_rng(spec.seed)
    node_fail = np.zeros(n, dtype=bool)
    arc_fail = np.zeros(topology.num_arcs, dtype=bool)
    src, dst = topology.arc_sources, topology.indices
    if isinstance(spec.routers, Draw):
        node_fail[_draw(rng, np.arange(n, dtype=np.int64), spec.routers, n, "routers", "routers")] = True
    elif spec.routers is not None:
        node_fail[[resolve_node(topology, text, "routers") for text in spec.routers]] = True
    arc_fail |= node_fail[src] | node_fail[dst]
    if spec.groups is not None:
        group = groups_of(topology)
        count = int(group.max()) + 1
        chosen: np.ndarray | list[int]
        if isinstance(spec.groups, Draw):
            chosen = _draw(rng, np.arange(count, dtype=np.int64), spec.groups, count, "groups", "groups")
        else:
            chosen = []
            for text in spec.groups:
                if not text.isdigit() or int(text) >= count:
                    raise TopocastError(f"faults: parameter 'groups' names group '{text}'; {topology.spec} has "
                                        f"groups 0..{count - 1}")
                chosen.append(int(text))
        hit = np.zeros(count, dtype=bool)
        hit[np.asarray(chosen, dtype=np.int64)] = True
        glob = topology.arc_labels == topology.label_names.index(GLOBAL)
        arc_fail |= glob & (hit[group[src]] | hit[group[dst]])
    if isinstance(spec.links, Draw):
        links = link_ids(topology)
        if spec.label is not None:
            if spec.label not in topology.label_names:
                raise TopocastError(f"faults: parameter 'label' must be an arc label of {topology.spec} "
                                    f"({', '.join(topology.label_names)}), got '{spec.label}'")
            links = links[topology.arc_labels[links] == topology.label_names.index(spec.label)]
        total = len(links)
        chosen = _draw(rng, links[~arc_fail[links]], spec.links, total, "links", "links")
        arc_fail[chosen] = True
        arc_fail[reverse_of(topology, chosen)] = True
    elif spec.links is not None:
        _resolve_links(topology, spec.links, arc_fail)
    return _remove(topology, arc_fail, node_fail, spec)


def _remove(topology: Topology, arc_fail: np.ndarray, node_fail: np.ndarray, spec: FaultSpec) -> Topology:
    keep = ~arc_fail
    n = topology.num_nodes
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(topology.arc_sources[keep], minlength=n), out=indptr[1:])
    meta = dict(topology.meta)
    meta.update({"spec": topology.spec, "faults": spec.text, "failed_links": int(arc_fail.sum()) // 2,
                 "failed_routers": int(node_fail.sum()), "failed_nodes": np.flatnonzero(node_fail),
                 "intact": topology})
    return Topology(topology.family, dict(topology.params), indptr, topology.indices[keep],
                    topology.arc_labels[keep], topology.label_names, codec=topology.codec, vertex_transitive=False,
                    meta=meta)


__all__ = ["GLOBAL", "degrade", "groups_of", "link_ids", "resolve_node", "reverse_of"]
