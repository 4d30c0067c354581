"""Symmetry and bisection of hierarchical dual-nets (Li, Peng, Chu 2012, sections 3-4).

Automorphisms of the base (factor shifts and reflections) are lifted level by
level to automorphisms of the HDN; every generator is checked on the built
graph before it is used.  Their orbits give exact diameters and distance
distributions with one BFS per orbit (the family's ``orbits`` hook).  On a
large HDN the top level's generators (permutations of all the nodes) are made,
joined into the orbits by union-find and checked one at a time, by the
compiled kernels of :mod:`topocast.topology.hdn_kernels`; the eccentricities
come from the bit-parallel BFS of :mod:`topocast.topology.kernels`, 64 sources
a pass.  :func:`dual_bisection` is
the paper's partition of section 3 (Figure 9), registered as the families'
constructive bisection (:func:`topocast.topology.properties.register_cut`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np

from .core import Topology
from .hdn import HDNLayout, hdn_layout
from .metrics import eccentricity, small
from .properties import register_cut


def _base_generators(layout: HDNLayout) -> list[np.ndarray]:
    """Automorphisms of the base as permutations of ``0..N_0-1``: per factor a shift and a reflection or swap."""
    coords = layout.base_coords(np.arange(layout.N0))
    gens = []
    for i, f in enumerate(layout.factors):
        moves: list[Callable[..., np.ndarray]] = []
        if f.kind == "hypercube":
            moves = [lambda c, b=b: c ^ (1 << b) for b in range(f.param)]
        else:
            moves.append(lambda c, n=f.param: (c + 1) % n)
            if f.kind == "ring":
                moves.append(lambda c, n=f.param: (-c) % n)
            elif f.param > 2:
                moves.append(lambda c: np.where(c == 0, 1, np.where(c == 1, 0, c)))
        for move in moves:
            new = coords.copy()
            new[:, i] = move(coords[:, i])
            gens.append(layout.base_codec.encode_array(new))
    return gens


def _lifted_pairs(layout: HDNLayout, level: int, gens: list[np.ndarray]) -> list[tuple]:
    """List the partners of :func:`_lift_generators`.

    The partners of :func:`_lift_generators` as ``(g_nodes, g_sn, h_nodes, h_sn)``, repeats and the identity
    left out (they generate the same group).
    """
    inner, n, s = layout.sizes[level - 1], layout.clusters[level], layout.s[level - 1]
    y = np.arange(inner, dtype=np.int64)
    identity = (y, np.arange(n, dtype=np.int64))
    lifts = []
    for g in gens:
        gy = layout.up(level, g[layout.down(level, y)]).reshape(n, s)
        blocks, pos = gy // s, gy % s
        if not (np.all(blocks == blocks[:, :1]) and np.all(pos == pos[:1])):
            continue  # does not respect the super-nodes of this level
        lifted = (gy.reshape(-1), blocks[:, 0])
        lifts.append((lifted, lifted))
        if np.array_equal(pos[0], np.arange(s)):
            lifts += [(lifted, identity), (identity, lifted)]
    pairs, seen = [], set()
    for (g_nodes, g_sn), (h_nodes, h_sn) in lifts:
        key = b"".join(a.tobytes() for a in (g_nodes, g_sn, h_nodes, h_sn))
        if key in seen or all(np.array_equal(a, b) for a, b in zip((g_nodes, g_sn, h_nodes, h_sn), identity * 2,
                                                                  strict=True)):
            continue
        seen.add(key)
        pairs.append((g_nodes, g_sn, h_nodes, h_sn))
    return pairs


def _lifted_permutation(layout: HDNLayout, level: int, pair: tuple | None) -> np.ndarray:
    """One level-``level`` generator as a permutation of the serials (``pair`` None: the class swap)."""
    inner, n = layout.sizes[level - 1], layout.clusters[level]
    if pair is None:
        return np.arange(2 * n * inner, dtype=np.int64).reshape(2, n * inner)[::-1].reshape(-1).copy()
    g_nodes, g_sn, h_nodes, h_sn = pair
    perm = np.empty(2 * n * inner, dtype=np.int64)
    view = perm.reshape(2, n, inner)
    np.add((h_sn * inner)[:, None], g_nodes[None, :], out=view[0])
    np.add(((n + g_sn) * inner)[:, None], h_nodes[None, :], out=view[1])
    return perm


def _lift_generators(layout: HDNLayout, level: int, gens: list[np.ndarray]) -> list[np.ndarray]:
    """Automorphisms of HDN(B, level) from automorphisms of its clusters.

    A cluster automorphism ``g`` that maps level-``level`` super-nodes onto
    super-nodes, ``(SN, N) -> (beta(SN), tau(N))``, lifts with a partner ``h``
    of the same ``tau``: class-0 cluster ``U`` goes to ``beta_h(U)`` with its
    nodes mapped by ``g``, class-1 cluster ``U'`` to ``beta_g(U')`` with its
    nodes mapped by ``h``; cross links ``(0,U,SN,N) ~ (1,SN,U,N)`` are kept.
    Partners used: ``(g, g)``, and ``(g, id)``, ``(id, g)`` when ``tau`` is
    the identity.  Plus the class swap.
    """
    return [_lifted_permutation(layout, level, pair) for pair in [*_lifted_pairs(layout, level, gens), None]]


def iter_automorphism_generators(layout: HDNLayout) -> Iterator[np.ndarray]:
    """Generate the automorphism generators of an HDN, the top level's one at a time.

    The generators of :func:`automorphism_generators`, the top level's made one at a time.

    The levels below the top are small (``N_{k-1}`` is about ``sqrt(N_k)``);
    a top-level generator is a permutation of all ``N_k`` nodes, so callers
    that check and use one at a time hold one at a time.

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.

    Yields
    ------
    numpy.ndarray
        One permutation of the node indices.
    """
    gens = _base_generators(layout)
    for level in range(1, layout.k):
        gens = _lift_generators(layout, level, gens)
    for pair in [*_lifted_pairs(layout, layout.k, gens), None]:
        yield _lifted_permutation(layout, layout.k, pair)


def automorphism_generators(layout: HDNLayout) -> list[np.ndarray]:
    """List automorphisms of HDN(B, k): lifted translations.

    Permutations of the node indices of HDN(B, k) that are automorphisms (lifted translations).

    Built level by level by :func:`_lift_generators`; callers may check them
    with :func:`is_automorphism`.  For a large HDN prefer
    :func:`iter_automorphism_generators` (one permutation of ``N_k`` entries at a time).

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.

    Returns
    -------
    list of numpy.ndarray
        Permutations of the node indices.
    """
    return list(iter_automorphism_generators(layout))


def is_automorphism(topology: Topology, perm: np.ndarray) -> bool:
    """Tell whether a permutation is an automorphism of the network.

    Whether ``perm`` is a bijection mapping every neighbourhood onto the neighbourhood of the image.

    Neighbourhoods are compared as multisets (a double link counts twice).
    Graphs of up to :data:`~topocast.topology.metrics.SMALL_NODES` nodes are
    checked in numpy, larger ones by a compiled kernel.

    Parameters
    ----------
    topology : Topology
        The network.
    perm : numpy.ndarray
        Image of every node.

    Returns
    -------
    bool
        True for an automorphism.
    """
    perm = np.asarray(perm, dtype=np.int64)
    n = topology.num_nodes
    if not small(topology):
        from .hdn_kernels import is_automorphism as compiled

        return bool(compiled(topology.indptr, topology.indices, perm))
    if perm.shape != (n,) or not np.array_equal(np.sort(perm), np.arange(n)):
        return False
    degree = np.diff(topology.indptr)
    if not np.array_equal(degree[perm], degree):
        return False
    rows = topology.arc_sources
    ours = perm[topology.indices]                                    # the neighbours of u, mapped
    theirs = topology.indices[topology.indptr[perm[rows]] + np.arange(len(rows)) - topology.indptr[rows]]
    return bool(np.array_equal(ours[np.lexsort((ours, rows))], theirs[np.lexsort((theirs, rows))]))


def orbit_representatives(topology: Topology, generators: Iterable[np.ndarray]) -> np.ndarray:
    """Give one node per orbit of the group the permutations generate (smallest index of each orbit).

    Parameters
    ----------
    topology : Topology
        The network.
    generators : iterable of numpy.ndarray
        The permutations.

    Returns
    -------
    numpy.ndarray
        The representatives, ascending.
    """
    return np.unique(orbit_labels(topology, generators))


def _checked_orbits(topology: Topology) -> np.ndarray:
    """Orbit labels under the lifted automorphisms, each generator that is used checked on the built adjacency.

    Generators are made and joined (union-find) one at a time.  One that
    joins no two classes is not needed: every ``x`` and ``g(x)`` already lie
    in one class, made of checked automorphisms, so the classes are the
    orbits of the group the checked generators generate, which are the
    orbits of the group all of them generate.  Every generator that joins
    classes is checked to be an automorphism of the built graph (else
    :class:`RuntimeError`).  Once the nodes form one class the rest are not
    made.
    """
    layout = hdn_layout(topology)
    n = topology.num_nodes
    if small(topology):
        gens = list(iter_automorphism_generators(layout))
        bad = [i for i, g in enumerate(gens) if not is_automorphism(topology, g)]
        if bad:
            raise RuntimeError(f"{topology.spec}: generator {bad[0]} is not an automorphism")
        return orbit_labels(topology, gens)
    from .hdn_kernels import flatten_orbits, join_orbits
    from .hdn_kernels import is_automorphism as compiled

    parent = np.arange(n, dtype=np.int64)
    count = n
    for i, g in enumerate(iter_automorphism_generators(layout)):
        joined = join_orbits(parent, g)
        if joined and not compiled(topology.indptr, topology.indices, g):
            raise RuntimeError(f"{topology.spec}: generator {i} is not an automorphism")
        count -= joined
        if count == 1:
            break
    flatten_orbits(parent)
    return parent


def hdn_orbits(topology: Topology) -> np.ndarray:
    """Label every node by orbit under the checked automorphisms (the family's ``orbits`` hook).

    Parameters
    ----------
    topology : Topology
        A hierarchical dual-net.

    Returns
    -------
    numpy.ndarray
        Orbit label of every node.
    """
    return _checked_orbits(topology)


def orbit_labels(topology: Topology, generators: Iterable[np.ndarray]) -> np.ndarray:
    """Label every node by the smallest node index of its orbit under a permutation group.

    Smallest node index of each node's orbit under the group the permutations generate.

    The orbits are the connected components of the graph joining ``x`` to
    ``g(x)`` for every generator ``g``: label propagation in numpy on small
    graphs, a compiled union-find (one generator at a time) above
    :data:`~topocast.topology.metrics.SMALL_NODES` nodes.

    Parameters
    ----------
    topology : Topology
        The network.
    generators : iterable of numpy.ndarray
        Generators of the group.

    Returns
    -------
    numpy.ndarray
        Orbit label of every node.
    """
    n = topology.num_nodes
    if not small(topology):
        from .hdn_kernels import flatten_orbits, join_orbits

        parent = np.arange(n, dtype=np.int64)
        for g in generators:
            join_orbits(parent, np.asarray(g, dtype=np.int64))
        flatten_orbits(parent)
        return parent
    generators = [np.asarray(g, dtype=np.int64) for g in generators]
    label = np.arange(n, dtype=np.int64)
    inverses = []
    for g in generators:
        inv = np.empty_like(g)
        inv[g] = np.arange(len(g))
        inverses.append(inv)
    while True:
        before = label.copy()
        for g, inv in zip(generators, inverses, strict=False):
            np.minimum(label, label[g], out=label)
            np.minimum(label, label[inv], out=label)
        while True:
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
        if np.array_equal(before, label):
            return label


def symmetry_and_diameter(topology: Topology, samples: int = 8, seed: int = 0) -> dict:
    """Compute the exact diameter of an HDN with as few BFS runs as its symmetry allows.

    Exact diameter of an HDN with as few BFS runs as its symmetry allows.

    Orbits of the group generated by :func:`automorphism_generators` (each
    generator checked to be an automorphism of the built graph before it is
    used; once one orbit is reached the rest are not needed) partition the
    nodes; one BFS per orbit gives every eccentricity, hence the exact
    diameter.  A single orbit proves the graph vertex-transitive.
    ``samples`` random nodes (seeded) are BFS'd too, as the plain symmetry
    check: their eccentricities must lie in the orbit range.

    Parameters
    ----------
    topology : Topology
        A hierarchical dual-net.
    samples : int, default 8
        Random nodes searched as well, as a plain symmetry check.
    seed : int, default 0
        Seed of the sample.

    Returns
    -------
    dict
        ``diameter``, ``radius``, ``orbits``, ``vertex_transitive``, ``bfs_runs`` and the sampled nodes'
        eccentricity range (``sampled_eccentricity``).
    """
    reps = np.unique(_checked_orbits(topology))
    rng = np.random.default_rng(seed)
    picked = rng.choice(topology.num_nodes, min(samples, topology.num_nodes), replace=False)
    both = eccentricity(topology, np.concatenate([reps, picked]))  # 64 sources a pass when large
    ecc, sampled = both[:len(reps)], both[len(reps):]
    return {
        "diameter": int(ecc.max()),
        "radius": int(ecc.min()),
        "orbits": int(len(reps)),
        "vertex_transitive": bool(len(reps) == 1),
        "bfs_runs": int(len(reps) + len(sampled)),
        "sampled_eccentricity": (int(sampled.min()), int(sampled.max())),
    }


def dual_bisection(topology: Topology) -> np.ndarray:
    """Give the side of every node in the paper's bisection of section 3 (Figure 9).

    Side (0/1) of every node in the paper's partition of section 3 (Figure 9).

    The clusters of each class are split into a left half (``U < n_k / 2``)
    and a right half; side 1 is both right halves.  Balanced when ``n_k`` is
    even; only level-``k`` cross links are cut.

    Parameters
    ----------
    topology : Topology
        A hierarchical dual-net.

    Returns
    -------
    numpy.ndarray
        0/1 per node (int8).
    """
    layout = hdn_layout(topology)
    _, u, _, _ = layout.decode(layout.k, np.arange(layout.num_nodes))
    return (2 * u >= layout.clusters[-1]).astype(np.int8)


def cut_size(topology: Topology, side: np.ndarray) -> int:
    """Count the links whose two ends lie on different sides.

    Parameters
    ----------
    topology : Topology
        The network.
    side : numpy.ndarray
        0/1 per node.

    Returns
    -------
    int
        Links cut.
    """
    return int(np.count_nonzero(side[topology.arc_sources] != side[topology.indices]) // 2)


def _paper_cut(topology: Topology) -> np.ndarray | None:
    """Figure 9's partition as the family's constructive bisection (``None`` when it is not balanced)."""
    side = dual_bisection(topology)
    return side if abs(2 * int(side.sum()) - topology.num_nodes) <= 1 else None


for _family in ("hdn", "rdn", "dualcube"):
    register_cut(_family, _paper_cut)
