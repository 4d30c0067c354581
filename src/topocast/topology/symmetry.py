"""Orbits of a topology under automorphisms a family proposes, each checked on the built graph.

A family with symmetry hands :func:`checked_orbits` candidate permutations
of its nodes (a field's linear maps for PolarFly, translations for Slim Fly,
digit permutations for a fat tree, letter permutations for Kautz graphs ...).
They are joined into classes by union-find one at a time; a candidate that
would join two classes is first checked to be an automorphism of the built
adjacency (every arc maps onto an arc, parallel links counted), and is used
only then.  So the classes are orbits of a group of checked automorphisms:
every node of a class has the same distance distribution, and the distance
metrics run one breadth-first search per class (the family's ``orbits``
hook, :func:`topocast.topology.metrics.orbits`).  A candidate that joins no
classes is skipped unchecked (it adds nothing); one that fails the check is
an error of the family (``strict``) or, for candidates valid only for some
parameters, dropped.

Small graphs (:data:`~topocast.topology.metrics.SMALL_NODES`) are handled in
numpy (no compiler to load for ``topocast info``); larger ones by compiled
kernels: a parallel check that looks every arc's image up in the sorted rows
(simple graphs), the union-find of :mod:`topocast.topology.hdn_kernels`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .core import Topology
from .metrics import small


def _numpy_automorphism(topology: Topology, perm: np.ndarray) -> bool:
    n = topology.num_nodes
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        return False
    degree = topology.port_degree
    if not np.array_equal(degree[perm], degree):
        return False
    rows = topology.arc_sources
    ours = perm[topology.indices]
    theirs = topology.indices[topology.indptr[perm[rows]] + np.arange(len(rows)) - topology.indptr[rows]]
    return bool(np.array_equal(ours[np.lexsort((ours, rows))], theirs[np.lexsort((theirs, rows))]))


def is_automorphism(topology: Topology, perm: np.ndarray) -> bool:
    """Tell whether a permutation maps the graph onto itself, parallel links counted.

    Parameters
    ----------
    topology : Topology
        The network.
    perm : numpy.ndarray
        ``perm[u]`` is the image of node ``u``.

    Returns
    -------
    bool
        True for an automorphism.
    """
    perm = np.ascontiguousarray(perm, dtype=np.int64)
    if small(topology):
        return _numpy_automorphism(topology, perm)
    from .hdn_kernels import _is_bijection
    from .symmetry_kernels import arcs_preserved

    if len(perm) != topology.num_nodes or not _is_bijection(perm):
        return False
    if topology.has_parallel_links:
        from .hdn_kernels import is_automorphism as multiset

        return bool(multiset(topology.indptr, topology.indices, perm))
    degree = topology.port_degree
    if not np.array_equal(degree[perm], degree):
        return False
    # simple graph, bijection, equal degrees: arcs mapping onto arcs is a bijection of the arcs
    return bool(arcs_preserved(topology.indptr, topology.indices, perm))


def _label_propagation(n: int, generators: list[np.ndarray]) -> np.ndarray:
    label = np.arange(n, dtype=np.int64)
    inverses = []
    for g in generators:
        inv = np.empty_like(g)
        inv[g] = np.arange(len(g))
        inverses.append(inv)
    while True:
        before = label.copy()
        for g, inv in zip(generators, inverses, strict=True):
            np.minimum(label, label[g], out=label)
            np.minimum(label, label[inv], out=label)
        while True:
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
        if np.array_equal(before, label):
            return label


def checked_orbits(topology: Topology, candidates: Iterable[np.ndarray], strict: bool = True,
                   invariant: np.ndarray | None = None) -> np.ndarray:
    """Label every node by its orbit under the candidates that are checked automorphisms.

    The label is the smallest node of the orbit.  ``invariant`` is a value per node that every automorphism
    preserves (a degree, a count of special neighbours); no orbit can join two values, so the search stops
    once there are as few classes as values (as it stops at one class).

    Parameters
    ----------
    topology : Topology
        The network.
    candidates : iterable of numpy.ndarray
        Candidate permutations (a family's construction).
    strict : bool, default True
        A candidate that would join classes but is not an automorphism raises; False: it is dropped.
    invariant : numpy.ndarray, optional
        An automorphism invariant per node.

    Returns
    -------
    numpy.ndarray
        Orbit label of every node.

    Raises
    ------
    RuntimeError
        With ``strict``, for a candidate that is not an automorphism (the family's construction is wrong).
    """
    n = topology.num_nodes
    floor = 1 if invariant is None else len(np.unique(invariant))
    if small(topology):
        used: list[np.ndarray] = []
        label = np.arange(n, dtype=np.int64)
        for i, g in enumerate(candidates):
            g = np.ascontiguousarray(g, dtype=np.int64)
            trial = _label_propagation(n, used + [g])
            if np.array_equal(trial, label):
                continue
            if not _numpy_automorphism(topology, g):
                if strict:
                    raise RuntimeError(f"{topology.spec}: candidate {i} is not an automorphism")
                continue
            used.append(g)
            label = trial
            if len(np.unique(label)) <= floor:
                break
        return label
    from .hdn_kernels import flatten_orbits, join_orbits

    parent = np.arange(n, dtype=np.int64)
    classes = n
    for i, g in enumerate(candidates):
        g = np.ascontiguousarray(g, dtype=np.int64)
        trial = parent.copy()
        joined = join_orbits(trial, g)
        if not joined:
            continue
        if not is_automorphism(topology, g):
            if strict:
                raise RuntimeError(f"{topology.spec}: candidate {i} is not an automorphism")
            continue
        parent = trial
        classes -= joined
        if classes <= floor:
            break
    flatten_orbits(parent)
    return parent


def orbit_summary(labels: np.ndarray) -> tuple[int, list[int]]:
    """Count the orbits and their sizes.

    Parameters
    ----------
    labels : numpy.ndarray
        Orbit label of every node.

    Returns
    -------
    tuple
        ``(number of orbits, their sizes in decreasing order)``.
    """
    _, sizes = np.unique(labels, return_counts=True)
    return len(sizes), sorted((int(s) for s in sizes), reverse=True)
