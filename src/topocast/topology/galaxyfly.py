"""Router-level Galaxyfly and Dragonfly networks (Zhuang et al. 2023, section 2.2).

``galaxyfly(n, q, a, h, p)`` replaces every node of the Galaxy graph
``galaxy(n, q)`` by a supernode: a complete graph of ``a`` routers.  Router
``i`` of supernode ``s`` has index ``s * a + i``; its label is
``(cluster, element, router)``.

Global links (our assignment; the paper defers to a Dragonfly scheme it does
not spell out): supernode ``s`` lists its Galaxy neighbours in ascending
index; the ``k``-th of them is reached from router ``k // h`` of ``s``.  So
routers ``0, 1, ...`` take ``h`` global links each until the supernode's
``d = |X| + n - 1`` links are placed.  The default ``h`` is the least with
``a * h >= d``; a smaller ``h`` is an error.  ``p`` terminals per router are
metadata only (the algorithms move packets between routers).

``dragonfly(g, a, h, p)``: ``g`` groups of ``a`` fully connected routers and
one global link between every pair of groups, placed by the same rule.  It is
the Galaxyfly with one supernode per cluster (``galaxyfly(n=g, q=1, a)``
builds the same graph with a three-field label).

:func:`supernode_view` recovers the supernode structure (``a``, the
supernode graph, which router holds which global link) from any topology of
either family, for the algorithms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import TopocastError
from ..registry import Family, Param, register_family
from .core import MixedRadixCodec, Topology
from .galaxy import _check_int, galaxy, galaxy_arcs, galaxy_degree  # noqa: F401 (galaxy re-exported)

LOCAL, GLOBAL = 0, 1


def _router_level(owner: str, n: int, q: int, a: int, h: int | None, p: int):
    """Arcs of the router-level network over ``galaxy(n, q)``; returns (arcs..., h, sets)."""
    a = _check_int(owner, "a", a, 1)
    p = _check_int(owner, "p", p, 0)
    gsrc, gdst, _, sets = galaxy_arcs(n, q, owner)
    supernodes = n * q
    d = galaxy_degree(n, q)
    if h is None:
        h = max(1, math.ceil(d / a)) if d else 0
    h = _check_int(owner, "h", h, 0)
    if a * h < d:
        raise TopocastError(f"{owner}: parameter 'h' gives a*h = {a}*{h} = {a * h} global ports per supernode, "
                            f"below the supernode degree {d}; use h >= {math.ceil(d / a)}")
    # rank of each Galaxy arc among its source's neighbours (ascending index)
    order = np.lexsort((gdst, gsrc))
    gsrc, gdst = gsrc[order], gdst[order]
    starts = np.searchsorted(gsrc, np.arange(supernodes))
    rank = np.arange(len(gsrc)) - starts[gsrc]
    # rank of the reverse arc (t -> s) inside t's row
    key = gsrc * supernodes + gdst
    rev_pos = np.searchsorted(key, gdst * supernodes + gsrc)
    rev_rank = rank[rev_pos]
    glob_src = gsrc * a + rank // max(h, 1)
    glob_dst = gdst * a + rev_rank // max(h, 1)
    # complete graph inside every supernode
    i, j = np.nonzero(~np.eye(a, dtype=bool))
    base = (np.arange(supernodes, dtype=np.int64) * a)[:, None]
    loc_src = (base + i[None, :]).ravel()
    loc_dst = (base + j[None, :]).ravel()
    src = np.concatenate([loc_src, glob_src])
    dst = np.concatenate([loc_dst, glob_dst])
    lab = np.concatenate([np.full(len(loc_src), LOCAL), np.full(len(glob_src), GLOBAL)])
    return src, dst, lab, h, p, d, sets


def _network(family: str, params: dict, n: int, q: int, a: int, h, p: int, codec) -> Topology:
    src, dst, lab, h, p, d, sets = _router_level(family, n, q, a, h, p)
    routers = n * q * a
    params = dict(params, h=h, p=p)
    spec = f"{family}:" + ",".join(f"{k}={v}" for k, v in params.items())
    per_router = np.bincount(src[lab == GLOBAL], minlength=routers)
    meta = {
        "spec": spec,
        "routers": routers,
        "supernodes": n * q,
        "routers_per_supernode": a,
        "supernode_degree": d,
        "h": h,
        "p": p,
        "terminals": routers * p,
        "global_links": int(np.count_nonzero(lab == GLOBAL) // 2),
        "max_global_links_per_router": int(per_router.max()) if routers else 0,
        "global_link_rule": "k-th neighbour supernode (ascending index) on router k // h",
    }
    if q > 1:
        meta.update(field=f"GF({q})", xi=sets.field.xi, delta=sets.delta, X=sets.X.tolist(),
                    X_prime=sets.X_prime.tolist())
    return Topology.from_arcs(family, params, routers, src, dst, lab, ("local", "global"),
                              codec=codec, meta=meta)


def galaxyfly(n: int, q: int, a: int, h: int | None = None, p: int = 1) -> Topology:
    """Build the Galaxyfly network GF(n, q, a, p, h) at router level (Lei et al., 2020).

    Supernodes of ``a`` fully connected routers; the supernodes of a cluster are joined as a polarity-like
    graph over GF(q) and clusters by global links.

    Parameters
    ----------
    n : int
        Clusters, >= 1.
    q : int
        Supernodes per cluster: a prime power with ``q mod 4 != 2``, or 1.
    a : int
        Routers per supernode (>= 1), fully connected.
    h : int, optional
        Global links per router (default: the least with ``a*h >= |X| + n - 1``).
    p : int, default 1
        Terminals per router (metadata).

    Returns
    -------
    Topology
        ``n*q*a`` routers, arc labels ``local`` and ``global``, codec ``(cluster, element, router)``.

    Raises
    ------
    TopocastError
        When ``q`` is not a prime power, ``n < 1``, ``a < 1`` or ``a*h`` is below the supernode degree.

    Examples
    --------
    >>> t = galaxyfly(3, 5, 4)
    >>> t.num_nodes, t.meta["supernode_degree"], t.meta["h"]
    (60, 4, 1)
    """
    n, q, a = (_check_int("galaxyfly", name, value, 1) for name, value in (("n", n), ("q", q), ("a", a)))
    return _network("galaxyfly", {"n": n, "q": q, "a": a}, n, q, a, h, p,
                    MixedRadixCodec([n, q, a], ("cluster", "element", "router")))


def dragonfly(g: int, a: int, h: int | None = None, p: int = 1) -> Topology:
    """Build a Dragonfly (Kim et al., ISCA 2008): ``g`` groups of ``a`` fully connected routers.

    One global link joins every pair of groups; the same global-link rule as :func:`galaxyfly` (it is
    ``galaxyfly(g, 1, a)``).

    Parameters
    ----------
    g : int
        Groups, >= 1.
    a : int
        Routers per group, >= 1.
    h : int, optional
        Global links per router (default: the least that reaches every other group).
    p : int, default 1
        Terminals per router (metadata).

    Returns
    -------
    Topology
        ``g*a`` routers, arc labels ``local`` and ``global``.

    Raises
    ------
    TopocastError
        A parameter out of range, or ``a*h`` below ``g - 1``.

    Examples
    --------
    >>> t = dragonfly(3, 20)
    >>> t.num_nodes, t.meta["global_links"]
    (60, 3)
    """
    g, a = _check_int("dragonfly", "g", g, 1), _check_int("dragonfly", "a", a, 1)
    return _network("dragonfly", {"g": g, "a": a}, g, 1, a, h, p,
                    MixedRadixCodec([g, a], ("group", "router")))


@dataclass(frozen=True, eq=False)
class SupernodeView:
    """Supernodes of a Galaxyfly or Dragonfly, read back from its global links.

    ``neighbours[nbr_ptr[s]:nbr_ptr[s+1]]`` are the supernodes adjacent to
    ``s`` in ascending order; ``attach`` (same layout) is the local index of
    the router of ``s`` holding that link.
    """

    a: int
    num_supernodes: int
    nbr_ptr: np.ndarray
    neighbours: np.ndarray
    attach: np.ndarray

    def neighbours_of(self, s: int) -> np.ndarray:
        """List the supernodes adjacent to supernode ``s``, ascending.

        Parameters
        ----------
        s : int
            Supernode.

        Returns
        -------
        numpy.ndarray
            Adjacent supernodes.
        """
        return self.neighbours[self.nbr_ptr[s]:self.nbr_ptr[s + 1]]

    def router_to(self, s: int, t: int) -> int:
        """Give the router of ``s`` that holds the link to supernode ``t``.

        Parameters
        ----------
        s, t : int
            Two adjacent supernodes.

        Returns
        -------
        int
            Global index of the router.

        Raises
        ------
        ValueError
            If ``s`` and ``t`` are not adjacent.
        """
        lo, hi = self.nbr_ptr[s], self.nbr_ptr[s + 1]
        k = lo + int(np.searchsorted(self.neighbours[lo:hi], t))
        if k >= hi or self.neighbours[k] != t:
            raise ValueError(f"supernodes {s} and {t} are not adjacent")
        return s * self.a + int(self.attach[k])

    def routers(self, s: int) -> range:
        """Give the routers of supernode ``s``.

        Parameters
        ----------
        s : int
            Supernode.

        Returns
        -------
        range
            Their global indices.
        """
        return range(s * self.a, (s + 1) * self.a)


def supernode_view(topology: Topology) -> SupernodeView:
    """Read the supernodes of a Galaxyfly or Dragonfly back from its global links.

    Parameters
    ----------
    topology : Topology
        A ``galaxyfly`` or ``dragonfly`` network.

    Returns
    -------
    SupernodeView
        Supernode adjacency and the router holding each global link.

    Raises
    ------
    TopocastError
        If the network is not a Galaxyfly or Dragonfly.
    """
    if "routers_per_supernode" not in topology.meta:
        raise TopocastError(f"{topology.spec}: not a Galaxyfly or Dragonfly network (no supernodes)")
    a = int(topology.meta["routers_per_supernode"])
    count = topology.num_nodes // a
    glob = topology.arc_labels == topology.label_names.index("global")
    u, v = topology.arc_sources[glob], topology.indices[glob]
    s, t = u // a, v // a
    order = np.lexsort((t, s))
    s, t, u = s[order], t[order], u[order]
    ptr = np.searchsorted(s, np.arange(count + 1)).astype(np.int64)
    return SupernodeView(a, count, ptr, t.astype(np.int64), (u % a).astype(np.int64))


def _galaxyfly_estimate(n: int, q: int, a: int, h=None, p: int = 1) -> tuple[int, int]:
    routers = n * q * a
    return routers, routers * (a - 1) + n * q * galaxy_degree(n, q)


register_family(Family(
    name="galaxyfly",
    builder=galaxyfly,
    params=(Param("n", "int", doc="number of clusters", minimum=1),
            Param("q", "int", doc="supernodes per cluster (prime power, q mod 4 != 2, or 1)", minimum=1),
            Param("a", "int", doc="routers per supernode (fully connected)", minimum=1),
            Param("h", "int", None, doc="global links per router (default: least with a*h >= supernode degree)",
                  minimum=0),
            Param("p", "int", 1, doc="terminals per router (metadata)", minimum=0)),
    doc="Galaxyfly: Galaxy graph of supernodes, each a complete graph of a routers (Lei et al.; Zhuang et al.)",
    aliases=("gfly",),
    estimate=_galaxyfly_estimate,
    example="galaxyfly:n=3,q=5,a=4",
))

register_family(Family(
    name="dragonfly",
    builder=dragonfly,
    params=(Param("g", "int", doc="number of groups", minimum=1),
            Param("a", "int", doc="routers per group (fully connected)", minimum=1),
            Param("h", "int", None, doc="global links per router (default: least with a*h >= g-1)", minimum=0),
            Param("p", "int", 1, doc="terminals per router (metadata)", minimum=0)),
    doc="Dragonfly: g fully connected groups of a routers, one global link per pair of groups",
    estimate=lambda g, a, h=None, p=1: (g * a, g * a * (a - 1) + g * (g - 1)),
    example="dragonfly:g=3,a=20",
))

__all__ = ["SupernodeView", "dragonfly", "galaxy", "galaxyfly", "supernode_view"]
