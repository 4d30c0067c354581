"""Symmetry and bisection of hierarchical dual-nets (Li, Peng, Chu 2012, sections 3-4).

Automorphisms of the base (factor shifts and reflections) are lifted level by
level to automorphisms of the HDN; every generator is checked before use. Their
orbits give exact diameters and distance distributions with one BFS per orbit
(the family's ``orbits`` hook), and :func:`dual_bisection` is the paper's
partition of section 3 (Figure 9), registered as the families' constructive
bisection (:func:`topocast.topology.properties.register_cut`).
"""

from __future__ import annotations

import numpy as np

from .core import Topology
from .hdn import HDNLayout, hdn_layout
from .properties import register_cut


def _base_generators(layout: HDNLayout) -> list[np.ndarray]:
    """Automorphisms of the base as permutations of ``0..N_0-1``: per factor a shift and a reflection or swap."""
    coords = layout.base_coords(np.arange(layout.N0))
    gens = []
    for i, f in enumerate(layout.factors):
        moves = []
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
    inner, n, s = layout.sizes[level - 1], layout.clusters[level], layout.s[level - 1]
    y = np.arange(inner, dtype=np.int64)
    identity = (y, np.arange(n, dtype=np.int64))
    pairs = []
    for g in gens:
        gy = layout.up(level, g[layout.down(level, y)]).reshape(n, s)
        blocks, pos = gy // s, gy % s
        if not (np.all(blocks == blocks[:, :1]) and np.all(pos == pos[:1])):
            continue  # does not respect the super-nodes of this level
        lifted = (gy.reshape(-1), blocks[:, 0])
        pairs.append((lifted, lifted))
        if np.array_equal(pos[0], np.arange(s)):
            pairs += [(lifted, identity), (identity, lifted)]
    out = []
    for (g_nodes, g_sn), (h_nodes, h_sn) in pairs:
        perm = np.empty(2 * n * inner, dtype=np.int64)
        view = perm.reshape(2, n, inner)
        view[0] = (h_sn[:, None]) * inner + g_nodes[None, :]
        view[1] = (n + g_sn[:, None]) * inner + h_nodes[None, :]
        out.append(perm)
    swap = np.arange(2 * n * inner, dtype=np.int64).reshape(2, n * inner)[::-1].reshape(-1).copy()
    out.append(swap)
    return out


def automorphism_generators(layout: HDNLayout) -> list[np.ndarray]:
    """Permutations of the node indices of HDN(B, k) that are automorphisms (lifted translations).

    Built level by level by :func:`_lift_generators`; callers may check them
    with :func:`is_automorphism`.
    """
    gens = _base_generators(layout)
    for level in range(1, layout.k + 1):
        gens = _lift_generators(layout, level, gens)
    return gens


def is_automorphism(topology: Topology, perm: np.ndarray) -> bool:
    """Whether ``perm`` maps every neighbourhood onto the neighbourhood of the image (regular graphs)."""
    d = int(topology.port_degree[0])
    table = topology.indices.reshape(topology.num_nodes, d)
    chunk = 1 << 18
    for lo in range(0, topology.num_nodes, chunk):
        rows = np.arange(lo, min(lo + chunk, topology.num_nodes))
        mapped = np.sort(perm[table[rows]], axis=1)
        if not np.array_equal(mapped, table[perm[rows]]):
            return False
    return True


def orbit_representatives(topology: Topology, generators: list[np.ndarray]) -> np.ndarray:
    """One node per orbit of the group the permutations generate (smallest index of each orbit)."""
    return np.unique(orbit_labels(topology, generators))


def hdn_orbits(topology: Topology) -> np.ndarray:
    """Orbit label of every node under the checked automorphisms (the family's ``orbits`` hook)."""
    gens = automorphism_generators(hdn_layout(topology))
    bad = [i for i, g in enumerate(gens) if not is_automorphism(topology, g)]
    if bad:
        raise RuntimeError(f"{topology.spec}: generator {bad[0]} is not an automorphism")
    return orbit_labels(topology, gens)


def orbit_labels(topology: Topology, generators: list[np.ndarray]) -> np.ndarray:
    """Smallest node index of each node's orbit under the group the permutations generate."""
    label = np.arange(topology.num_nodes, dtype=np.int64)
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
    """Exact diameter of an HDN with as few BFS runs as its symmetry allows.

    Orbits of the group generated by :func:`automorphism_generators` (each
    generator checked to be an automorphism first) partition the nodes; one
    BFS per orbit gives every eccentricity, hence the exact diameter.  A
    single orbit proves the graph vertex-transitive.  ``samples`` random
    nodes (seeded) are BFS'd too, as the plain symmetry check: their
    eccentricities must lie in the orbit range.
    """
    from .metrics import eccentricity

    layout = hdn_layout(topology)
    gens = automorphism_generators(layout)
    bad = [i for i, g in enumerate(gens) if not is_automorphism(topology, g)]
    if bad:
        raise RuntimeError(f"{topology.spec}: generator {bad[0]} is not an automorphism")
    reps = orbit_representatives(topology, gens)
    ecc = eccentricity(topology, reps)
    rng = np.random.default_rng(seed)
    sampled = eccentricity(topology, rng.choice(topology.num_nodes, min(samples, topology.num_nodes), replace=False))
    return {
        "diameter": int(ecc.max()),
        "radius": int(ecc.min()),
        "orbits": int(len(reps)),
        "vertex_transitive": bool(len(reps) == 1),
        "bfs_runs": int(len(reps) + len(sampled)),
        "sampled_eccentricity": (int(sampled.min()), int(sampled.max())),
    }


def dual_bisection(topology: Topology) -> np.ndarray:
    """Side (0/1) of every node in the paper's partition of section 3 (Figure 9).

    The clusters of each class are split into a left half (``U < n_k / 2``)
    and a right half; side 1 is both right halves.  Balanced when ``n_k`` is
    even; only level-``k`` cross links are cut.
    """
    layout = hdn_layout(topology)
    _, u, _, _ = layout.decode(layout.k, np.arange(layout.num_nodes))
    return (2 * u >= layout.clusters[-1]).astype(np.int8)


def cut_size(topology: Topology, side: np.ndarray) -> int:
    """Links whose two ends lie on different sides."""
    return int(np.count_nonzero(side[topology.arc_sources] != side[topology.indices]) // 2)


def _paper_cut(topology: Topology) -> np.ndarray | None:
    """Figure 9's partition as the family's constructive bisection (``None`` when it is not balanced)."""
    side = dual_bisection(topology)
    return side if abs(2 * int(side.sum()) - topology.num_nodes) <= 1 else None


for _family in ("hdn", "rdn", "dualcube"):
    register_cut(_family, _paper_cut)
