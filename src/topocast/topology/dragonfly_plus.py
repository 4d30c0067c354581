"""Dragonfly+ (Shpiner, Haramaty, Eliad, Zdornov, Gafni, Zahavi, 2017), also called Megafly (Flajslik et al. 2018).

``g`` groups; a group is a two-level leaf-spine fat tree: ``l`` leaf switches,
each with ``p`` terminals and a link to each of the group's ``s`` spine
switches (a complete bipartite graph K_{l,s}), and every spine has ``h``
global links to other groups.  The largest network with one global link
between every two groups has ``g = s h + 1`` groups (the default); with
radix-``r`` switches split half up, half down (``l = s = p = h = r/2``) that
is ``r^2/4 + 1`` groups.

Global links (our arrangement; the paper leaves the wiring open): group ``i``
numbers its ``s h`` global ports ``k = 0 ..``, port ``k`` on spine ``k // h``.
With ``g - 1 <= s h`` every group pair gets ``c = floor(s h / (g - 1))``
links: port ``k < c (g - 1)`` of group ``i`` leads to group ``i + (k mod (g -
1)) + 1`` (mod ``g``), arriving on its port ``(k div (g - 1)) (g - 1) + (g - 2
- k mod (g - 1))``; the remaining ports stay idle (``meta``).  So leaf to
leaf in two groups is at most 3 hops (leaf, spine, spine, leaf).

Numbering: router ``j`` of group ``i`` is ``i (l + s) + j``: ``j < l`` the
leaves, then the spines; labels ``(group, router)``.  Arc labels ``local``
(leaf-spine) and ``global``.

Symmetry: rotating the groups (``i -> i + 1``) keeps the arrangement, and
permuting the leaves of every group keeps the bipartite wiring; with ``h``
dividing ``g - 1`` and every port used, the reflection ``i -> -i`` (spines
reversed within each block of ``(g - 1)/h``) too.  Each map is checked on the
built graph (:mod:`topocast.topology.symmetry`) before its orbits are used.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..infra.validate import integer
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology

LOCAL, GLOBAL = 0, 1


def dragonfly_plus_params(l: int, s: int, h: int, g: int | None, p: int | None) -> tuple[int, ...]:  # noqa: E741
    """Check the Dragonfly+ parameters and fill the defaults.

    Parameters
    ----------
    l : int
        Leaf switches per group, >= 1.
    s : int
        Spine switches per group, >= 1.
    h : int
        Global links per spine, >= 1.
    g : int or None
        Groups, 1..``s h + 1``; None: ``s h + 1``.
    p : int or None
        Terminals per leaf, >= 0; None: ``s`` (a leaf's up ports).

    Returns
    -------
    tuple of int
        ``(l, s, h, g, p)``.

    Raises
    ------
    TopocastError
        A value out of range, or more groups than the global ports can reach.
    """
    owner = "dragonfly-plus"
    l = integer(l, "l", owner=owner, minimum=1)  # noqa: E741 -- the leaves of a group
    s = integer(s, "s", owner=owner, minimum=1)
    h = integer(h, "h", owner=owner, minimum=1)
    g = s * h + 1 if g is None else integer(g, "g", owner=owner, minimum=1)
    p = s if p is None else integer(p, "p", owner=owner, minimum=0)
    if g - 1 > s * h:
        raise TopocastError(f"{owner}: parameter 'g' must be at most s*h + 1 = {s * h + 1} (every group needs a "
                            f"global link to every other group), got {g}")
    return l, s, h, g, p


def global_ports(g: int, s: int, h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """List the used global ports of one Dragonfly+ group and where each leads.

    Parameters
    ----------
    g : int
        Groups.
    s : int
        Spines per group.
    h : int
        Global links per spine.

    Returns
    -------
    port, offset, peer : numpy.ndarray
        The port (numbered over the group's spines), the offset of the group it reaches and the port at the far end.
    """
    if g < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    copies = (s * h) // (g - 1)
    port = np.arange(copies * (g - 1), dtype=np.int64)
    r = port % (g - 1)
    return port, r + 1, (port // (g - 1)) * (g - 1) + (g - 2 - r)


def dragonfly_plus(l: int, s: int, h: int, g: int | None = None, p: int | None = None) -> Topology:  # noqa: E741
    """Build a Dragonfly+: groups of leaf and spine switches, the spines joined by global links (Shpiner et al., 2017).

    Every group is a complete bipartite graph of ``l`` leaves and ``s`` spines; each spine has ``h`` global
    links to other groups.

    Parameters
    ----------
    l : int
        Leaf switches per group.
    s : int
        Spine switches per group.
    h : int
        Global links per spine.
    g : int, optional
        Groups (default ``s h + 1``, every pair of groups linked once).
    p : int, optional
        Terminals per leaf (default ``s``).

    Returns
    -------
    Topology
        ``g (l + s)`` switches; ``meta`` holds the groups, terminals and global links.

    Raises
    ------
    TopocastError
        As :func:`dragonfly_plus_params`.

    Examples
    --------
    >>> t = dragonfly_plus(4, 4, 4)
    >>> t.num_nodes, t.meta["groups"], t.meta["terminals"], t.meta["global_links"]
    (136, 17, 272, 136)
    """
    l, s, h, g, p = dragonfly_plus_params(l, s, h, g, p)  # noqa: E741
    size = l + s
    n = g * size
    group = np.arange(g, dtype=np.int64)
    leaf, spine = np.meshgrid(np.arange(l), np.arange(l, size), indexing="ij")
    lsrc = (group[:, None] * size + leaf.reshape(-1)[None, :]).reshape(-1)
    ldst = (group[:, None] * size + spine.reshape(-1)[None, :]).reshape(-1)
    port, offset, _ = global_ports(g, s, h)
    gsrc = (group[:, None] * size + l + port[None, :] // h).reshape(-1)
    target = (group[:, None] + offset[None, :]) % g
    _, _, peer = global_ports(g, s, h)
    gdst = (target * size + l + peer[None, :] // h).reshape(-1)
    src = np.concatenate([lsrc, ldst, gsrc])
    dst = np.concatenate([ldst, lsrc, gdst])
    labels = np.concatenate([np.full(2 * len(lsrc), LOCAL, np.int16), np.full(len(gsrc), GLOBAL, np.int16)])
    used = len(port)
    meta = {
        "spec": f"dragonfly-plus:l={l},s={s},h={h},g={g},p={p}",
        "routers": n, "groups": g, "leaves_per_group": l, "spines_per_group": s, "routers_per_group": size,
        "routers_per_supernode": size,
        "p": p, "terminals": g * l * p, "terminal_hosts": {"field": "router", "range": [0, l]},
        "leaf_radix": p + s, "spine_radix": l + h, "radix": max(p + s, l + h),
        "local_links": g * l * s, "global_links": g * used // 2, "links_per_group_pair": used // max(g - 1, 1),
        "idle_global_ports": g * (s * h - used),
        "global_link_rule": "port k of group i (on spine k//h) to group i + (k mod (g-1)) + 1",
    }
    return Topology.from_arcs("dragonfly-plus", {"l": l, "s": s, "h": h, "g": g, "p": p}, n, src, dst, labels,
                              ("local", "global"), codec=MixedRadixCodec([g, size], ("group", "router")), meta=meta)


def automorphism_candidates(l: int, s: int, h: int, g: int):  # noqa: E741
    """Generate candidate automorphisms of a Dragonfly+: group rotation, swaps and cycles inside a group, reflection.

    Parameters
    ----------
    l : int
        Leaves per group.
    s : int
        Spines per group.
    h : int
        Global links per spine.
    g : int
        Groups.

    Yields
    ------
    numpy.ndarray
        The image of every switch under one candidate permutation.
    """
    size = l + s
    node = np.arange(g * size, dtype=np.int64)
    group, j = node // size, node % size
    yield ((group + 1) % g) * size + j
    if l >= 2:
        yield group * size + np.where(j == 0, 1, np.where(j == 1, 0, j))
        yield group * size + np.where(j < l, (j + 1) % l, j)
    if g > 2 and (g - 1) % h == 0 and (s * h) % (g - 1) == 0:
        b = (g - 1) // h
        sigma = j - l
        mirrored = np.where(j < l, j, l + (2 * (sigma // b) + 1) * b - 1 - sigma)
        yield ((-group) % g) * size + mirrored


def dragonfly_plus_orbits(topology: Topology) -> np.ndarray:
    """Label the switches by orbit under the checked maps (the family's ``orbits`` hook).

    Parameters
    ----------
    topology : Topology
        A Dragonfly+ network.

    Returns
    -------
    numpy.ndarray
        Orbit label of every switch (cached on the topology).
    """
    from .symmetry import checked_orbits

    cache = topology.__dict__.setdefault("_metric_cache", {})
    if "orbits" not in cache:
        pr = topology.params
        cache["orbits"] = checked_orbits(topology, automorphism_candidates(pr["l"], pr["s"], pr["h"], pr["g"]),
                                         strict=False)
    return cache["orbits"]


def _estimate(l: int, s: int, h: int, g: int | None = None, p: int | None = None) -> tuple[int, int]:  # noqa: E741
    g = s * h + 1 if g is None else g
    return g * (l + s), 2 * g * l * s + g * s * h


register_family(Family(
    name="dragonfly-plus",
    builder=dragonfly_plus,
    params=(Param("l", "int", doc="leaf switches per group (they hold the terminals)", minimum=1),
            Param("s", "int", doc="spine switches per group (each linked to every leaf of its group)", minimum=1),
            Param("h", "int", doc="global links per spine", minimum=1),
            Param("g", "int", None, doc="groups (default s*h + 1, at most that)", minimum=1),
            Param("p", "int", None, doc="terminals per leaf (default s)", minimum=0)),
    doc="Dragonfly+ / Megafly: groups of l leaves and s spines (complete bipartite), h global links per spine "
        "(Shpiner et al. 2017)",
    aliases=("dragonflyplus", "megafly"),
    estimate=_estimate,
    example="dragonfly-plus:l=2,s=2,h=2",
    orbits=dragonfly_plus_orbits,
))
