"""The HDN paper's names for the nodes of its routing example, mapped to ours (Li, Peng, Chu 2012, section 4).

The paper names a node of HDN(B,2,(6,15)), ``B = C2 x C3 x C5``, two ways:

* at level 1, inside a level-2 cluster ``(C2, U2)``: ``(C1, U1, SN1, N1)`` with
  serial ``i = C1*150 + U1*30 + SN1*6 + N1``.  Our level-1 labels are the same
  numbers: ``(C1, U1)`` is the base copy, ``SN1`` the C5 coordinate and ``N1``
  the position in the 2 x 3 super-node.  The paper does not say in which order
  ``N1`` holds the C2 and C3 digits; ours is C2-major (``N1 = 3 b(C2) +
  b(C3)``), and :func:`route_in_paper_names` also tries C3-major;
* at level 2: ``(C2, U2, SN2, N2)``, re-indexed by the paper's Table 4, which
  keeps the serial: ``SN2*15 + N2 = i``.

So a paper name resolves to one of our nodes: the level-2 cluster ``(C2, U2)``
and the level-1 serial ``i`` inside it (:func:`paper_node`).  Our own level-2
labels follow the paper's text instead (``SN2 = (C1, U1, b(C2))``, ``N2`` the
3 x 5 coordinates), because Table 4's blocks of 15 consecutive serials are not
3 x 5 sub-tori (errata); the two labellings agree on ``u = (0,0,0,0)`` and
``v = (1,19,19,14)`` and differ on most other nodes.

:data:`PAPER_ROUTE` is the paper's printed route in its own names; under
Table 4 its three segments join (the route's ``u'`` and ``v'``, named at level
1 and at level 2, are the same nodes), and :func:`route_in_paper_names`
checks every hop against our links.
"""

from __future__ import annotations

from typing import Any

from ..errors import TopocastError
from ..topology.core import Topology
from ..topology.hdn import HDNCodec, HDNLayout

#: the printed route (section 4): u => u' in cluster (0, 0), level-1 names
PAPER_U_SEGMENT = ((0, 0, 0, 0), (0, 0, 4, 0), (1, 4, 0, 0), (1, 4, 1, 0), (1, 4, 2, 0), (1, 4, 2, 1),
                   (1, 4, 2, 2), (1, 4, 2, 3))
#: u' -> u'' over the level-2 cross edge, then u'' => v' inside SN2 ((0,0) -> (2,0) -> (2,4) of the 3 x 5
#: torus, N2 = 0, 10, 14), level-2 names
PAPER_MIDDLE = ((0, 0, 19, 0), (1, 19, 0, 0), (1, 19, 0, 10), (1, 19, 0, 14))
#: v => v' in cluster (1, 19), level-1 names, printed from v
PAPER_V_SEGMENT = ((1, 4, 4, 5), (1, 4, 0, 5), (0, 0, 4, 5), (0, 0, 3, 5), (0, 0, 2, 5), (0, 0, 2, 0),
                   (0, 0, 2, 1), (0, 0, 2, 2))
PAPER_CLUSTERS = ((0, 0), (1, 19))


def _cluster(layout, c2: int, u2: int) -> int:
    return c2 * layout.clusters[2] + u2


def _n1(layout, n1: int, c3_major: bool) -> int:
    """The paper's ``N1`` as our ``N1`` (C2-major); ``c3_major``: read the paper's digits C3-major."""
    if not c3_major:
        return n1
    c2_size, c3_size = (layout.factors[i].size for i in layout.supernodes[0])
    return (n1 % c2_size) * c3_size + n1 // c2_size


def level1_node(layout, cluster: tuple[int, int], name: tuple[int, int, int, int], c3_major: bool = False) -> int:
    """Our node of the paper's level-1 name ``(C1, U1, SN1, N1)`` inside level-2 cluster ``(C2, U2)``."""
    c1, u1, sn1, n1 = name
    serial = int(layout.encode(1, c1, u1, sn1, _n1(layout, n1, c3_major)))
    return int(layout.from_cluster(2, _cluster(layout, *cluster), serial))


def paper_node(layout, name: tuple[int, int, int, int], c3_major: bool = False) -> int:
    """Our node of the paper's level-2 name ``(C2, U2, SN2, N2)``, read through Table 4 (serial kept)."""
    c2, u2, sn2, n2 = name
    serial = sn2 * layout.s[1] + n2
    c1, u1, s1, n1 = (int(x) for x in layout.decode(1, serial))
    return level1_node(layout, (c2, u2), (c1, u1, s1, n1), c3_major)


def paper_name(layout: HDNLayout, node: int) -> tuple[tuple[int, int, int, int], tuple[int, ...]]:
    """The paper's names of our ``node``: (level-2 name by Table 4, level-1 name in its cluster)."""
    cluster, serial = (int(x) for x in layout.to_cluster(2, node))
    c2, u2 = divmod(cluster, layout.clusters[2])
    level1 = tuple(int(x) for x in layout.decode(1, serial))
    return (c2, u2, serial // layout.s[1], serial % layout.s[1]), level1


def paper_route(layout, c3_major: bool = False) -> tuple[list[int], bool]:
    """The printed route as our nodes, and whether its segments join under Table 4 (they must)."""
    first = [level1_node(layout, PAPER_CLUSTERS[0], x, c3_major) for x in PAPER_U_SEGMENT]
    middle = [paper_node(layout, x, c3_major) for x in PAPER_MIDDLE]
    last = [level1_node(layout, PAPER_CLUSTERS[1], x, c3_major) for x in PAPER_V_SEGMENT][::-1]
    joins = first[-1] == middle[0] and middle[-1] == last[0]
    return first + middle[1:] + last[1:], joins


def _name_text(name: tuple[int, ...]) -> str:
    return "(" + ",".join(map(str, name)) + ")"


def _layout_of(topology: Topology) -> HDNLayout:
    """The HDN layout behind ``topology``'s labels."""
    if not isinstance(topology.codec, HDNCodec):
        raise TopocastError(f"{topology.spec}: not an HDN network")
    return topology.codec.layout


def route_in_paper_names(topology: Topology, path: list[int]) -> str:
    """``path`` in the paper's level-2 names (Table 4)."""
    layout = _layout_of(topology)
    return " ".join(_name_text(paper_name(layout, int(x))[0]) for x in path)


def check_paper_route(topology: Topology) -> dict:
    """The printed route mapped to our nodes: which of its hops are links of our network, under both digit
    orders of ``N1``; whether Table 4 (and, for contrast, our own labels) join its segments."""
    layout = _layout_of(topology)
    out: dict[str, Any] = {}
    for c3_major in (False, True):
        path, joins = paper_route(layout, c3_major)
        links = [bool(topology.has_edge(a, b)) for a, b in zip(path, path[1:], strict=False)]
        out["c3_major" if c3_major else "c2_major"] = {"path": path, "links": links, "joins": joins}
    # our own labels for the level-2 names of the middle segment: the segments no longer join
    ours_u1 = topology.index(",".join(map(str, PAPER_MIDDLE[0])))
    out["own_labels_join"] = bool(ours_u1 == out["c2_major"]["path"][len(PAPER_U_SEGMENT) - 1])
    path = out["c2_major"]["path"]
    out["bfs_pair"] = (int(path[0]), int(path[-1]))
    out["failing"] = [f"{_name_text(paper_name(layout, a)[0])}->{_name_text(paper_name(layout, b)[0])}"
                      for (a, b), ok in zip(zip(path, path[1:], strict=False), out["c2_major"]["links"],
                                            strict=True) if not ok]
    return out
