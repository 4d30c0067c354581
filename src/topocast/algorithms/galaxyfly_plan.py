"""Building blocks of the Galaxyfly all-to-all broadcasts (Zhuang et al. 2023, section 3).

Every router starts with one packet; packet ``r`` is router ``r``'s.  A
:class:`Plan` records transfers one hop at a time and, for each router, which
transfer delivered which packets to it, so that every transfer waits exactly
for the transfers that brought the packets it carries ("each transfer waits
only for the data it carries") and carries only what its receiver lacks
(no packet is ever planned twice into a router).  Packet sets are sorted
tuples of half-open ranges ``(lo, hi)``.

* :func:`halving_tree` is the recursion of Algorithm 1 (RPC): ``B = A \\ {m}``
  is split into ``B1`` (the first ``ceil(|B|/2)`` routers in index order) and
  ``B2`` (the rest); the "arbitrary" router ``b_i`` is the first of ``B_i``.
* :func:`router_packet_collection` (RPC) sends each subtree's content up that
  tree; :func:`router_packet_distribution` (RPD, the inverse) sends a packet
  set down it, each child getting what it lacks.
* :func:`spc_tree`: Algorithm 2's breadth-first order.  The neighbours of the
  target supernode ``A`` are taken in ascending index; every supernode at
  distance 2 is served once, by the first of them adjacent to it (the worked
  example of section 3.2: from S8, S5 serves S1, S4, S13; S7 serves S3, S6,
  S14; S9 serves S2, S10, S15; S12 serves S11).
* :func:`supernode_packet_collection` (SPC) and
  :func:`supernode_packet_distribution` (SPD) move packets up and down that
  tree; at every supernode the packets pass through the routers holding the
  global links of the tree.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np

from ..schedule import Schedule, ScheduleBuilder
from ..topology.galaxyfly import SupernodeView

Packets = tuple  # tuple[tuple[int, int], ...]: sorted, disjoint, non-adjacent ranges
EMPTY: Packets = ()


def packets(*ranges: tuple[int, int]) -> Packets:
    """Normalise ranges ``(lo, hi)`` into a packet set."""
    out: list[list[int]] = []
    for lo, hi in sorted(r for r in ranges if r[1] > r[0]):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((lo, hi) for lo, hi in out)


def union(*sets: Packets) -> Packets:
    return packets(*(r for s in sets for r in s))


def minus(a: Packets, b: Packets) -> Packets:
    """Packets of ``a`` not in ``b``."""
    out = []
    j = 0
    for lo, hi in a:
        while j < len(b) and b[j][1] <= lo:
            j += 1
        k = j
        cur = lo
        while k < len(b) and b[k][0] < hi:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < hi:
            out.append((cur, hi))
    return tuple(out)


def overlaps(a: Packets, b: Packets) -> bool:
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] <= b[j][0]:
            i += 1
        elif b[j][1] <= a[i][0]:
            j += 1
        else:
            return True
    return False


def size(a: Packets) -> int:
    return sum(hi - lo for lo, hi in a)


class Plan:
    """Transfers of a dependency schedule, with who holds what and who brought it."""

    def __init__(self, num_routers: int):
        self.num_routers = num_routers
        self.src: list[int] = []
        self.dst: list[int] = []
        self.carried: list[Packets] = []
        self.after: list[list[int]] = []
        # per router: list of (packet set, delivering transfer id or -1 for its own packet)
        self.deliveries: list[list[tuple[Packets, int]]] = [[(((r, r + 1),), -1)] for r in range(num_routers)]
        self._held: list[Packets] = [((r, r + 1),) for r in range(num_routers)]

    def held(self, router: int) -> Packets:
        """Packets ``router`` holds once every transfer planned so far has arrived."""
        return self._held[router]

    def send(self, u: int, v: int, carried: Packets) -> int | None:
        """Plan ``u -> v`` carrying ``carried`` (skipped when empty); returns its id."""
        if not carried:
            return None
        tid = len(self.src)
        deps = [t for got, t in self.deliveries[u] if t >= 0 and overlaps(got, carried)]
        self.src.append(u)
        self.dst.append(v)
        self.carried.append(carried)
        self.after.append(deps)
        self.deliveries[v].append((carried, tid))
        self._held[v] = union(self._held[v], carried)
        return tid

    def send_lacking(self, u: int, v: int, offered: Packets) -> int | None:
        """Send ``v`` the packets of ``offered`` it does not already hold."""
        return self.send(u, v, minus(offered, self.held(v)))

    def schedule(self, packet_bytes: float, collective: str = "allgather", targets="all",
                 meta: dict | None = None) -> Schedule:
        n = self.num_routers
        builder = ScheduleBuilder(n, origin=np.arange(n), collective=collective, targets=targets,
                                  message_bytes=packet_bytes, meta=meta)
        nranges = np.fromiter((len(c) for c in self.carried), dtype=np.int64, count=len(self.carried))
        flat = [r for c in self.carried for r in c]
        first = np.fromiter((lo for lo, _ in flat), dtype=np.int64, count=len(flat))
        count = np.fromiter((hi - lo for lo, hi in flat), dtype=np.int64, count=len(flat))
        builder.add_ranges(np.asarray(self.src, dtype=np.int64), np.asarray(self.dst, dtype=np.int64),
                           nranges, first, count, after=self.after)
        return builder.build()


@lru_cache(maxsize=256)
def _halving_edges(size: int, root: int) -> tuple[tuple[int, int], ...]:
    return tuple(_halving(list(range(size)), root))


def _halving(members: list[int], root: int) -> list[tuple[int, int]]:
    rest = [r for r in members if r != root]
    half = (len(rest) + 1) // 2
    edges: list[tuple[int, int]] = []
    for part in (rest[:half], rest[half:]):
        if part:
            head = part[0]
            edges += _halving(part, head)
            edges.append((head, root))
    return edges


def halving_tree(members: Sequence[int], root: int) -> list[tuple[int, int]]:
    """Edges ``(child, parent)`` of Algorithm 1 on ``members`` (in that order), children first.

    >>> halving_tree([0, 1, 2, 3], 0)
    [(2, 1), (1, 0), (3, 0)]
    """
    members = list(members)
    local = _halving_edges(len(members), members.index(root))
    return [(members[c], members[p]) for c, p in local]


def router_packet_collection(plan: Plan, routers: Sequence[int], root: int) -> None:
    """RPC(A, m) (Algorithm 1): everything the routers hold ends at ``root``."""
    for child, parent in halving_tree(routers, root):
        plan.send(child, parent, minus(plan.held(child), plan.held(parent)))


def router_packet_distribution(plan: Plan, routers: Sequence[int], root: int, offered: Packets) -> None:
    """RPD(A, m): the packets ``offered`` (held by ``root``) reach every router, each once."""
    for child, parent in reversed(halving_tree(routers, root)):
        plan.send_lacking(parent, child, offered)


def spc_tree(view: SupernodeView, root: int) -> tuple[np.ndarray, list[int]]:
    """Parent of every supernode in Algorithm 2's breadth-first tree, and the BFS order.

    The parent of the root is -1.  Neighbours are scanned in ascending index,
    so a supernode is served by the first tree node (in order) adjacent to it.
    """
    parent = np.full(view.num_supernodes, -2, dtype=np.int64)
    parent[root] = -1
    order = [root]
    head = 0
    while head < len(order):
        s = order[head]
        head += 1
        for t in view.neighbours_of(s):
            if parent[t] == -2:
                parent[t] = s
                order.append(int(t))
    return parent, order


def subtree_packets(view: SupernodeView, parent: np.ndarray, order: list[int]) -> list[Packets]:
    """Packets of each supernode's subtree in the SPC tree."""
    a = view.a
    sub: list[Packets] = [((s * a, (s + 1) * a),) for s in range(view.num_supernodes)]
    for s in reversed(order[1:]):
        p = int(parent[s])
        sub[p] = union(sub[p], sub[s])
    return sub


def supernode_packet_collection(plan: Plan, view: SupernodeView, root: int, router_first: bool = False,
                                tree: tuple[np.ndarray, list[int]] | None = None) -> None:
    """SPC(U, A): every other supernode's packets reach every router of ``root``.

    Supernode-first (Algorithm 2, used by SFATA): a supernode collects what it
    holds into the router linked to its parent with RPC and passes it on.
    Router-first (the collection loop of Algorithm 4, RFATA): packets arriving
    at a supernode are first spread to all its routers with RPD, and the
    router linked to the parent forwards them (it then holds them already).
    At the root the packets of each branch are spread with RPD(A, m).
    """
    parent, order = tree or spc_tree(view, root)
    sub = subtree_packets(view, parent, order)
    for s in reversed(order[1:]):
        p = int(parent[s])
        exit_router = view.router_to(s, p)
        entry = view.router_to(p, s)
        if not router_first:
            router_packet_collection(plan, view.routers(s), exit_router)
        plan.send_lacking(exit_router, entry, sub[s])
        if router_first or p == root:
            router_packet_distribution(plan, view.routers(p), entry, sub[s])


def supernode_packet_distribution(plan: Plan, view: SupernodeView, root: int, offered: Packets,
                                  tree: tuple[np.ndarray, list[int]] | None = None) -> None:
    """SPD(U, A): the packets ``offered`` (held by every router of ``root``) reach every router.

    The inverse of SPC: down the same tree, the router of the parent linked
    to a child supernode sends it what it lacks, and RPD spreads it inside.
    """
    parent, order = tree or spc_tree(view, root)
    for s in order[1:]:
        p = int(parent[s])
        entry = view.router_to(s, p)
        plan.send_lacking(view.router_to(p, s), entry, offered)
        router_packet_distribution(plan, view.routers(s), entry, offered)


def own_packets(view: SupernodeView, s: int) -> Packets:
    return ((s * view.a, (s + 1) * view.a),)


def all_packets(view: SupernodeView) -> Packets:
    return ((0, view.num_supernodes * view.a),)


def gather_inside(plan: Plan, view: SupernodeView, supernodes: Iterable[int], local_root: int = 0) -> None:
    """RPC then RPD inside each supernode: every router gets its supernode's packets."""
    for s in supernodes:
        root = s * view.a + local_root
        router_packet_collection(plan, view.routers(s), root)
        router_packet_distribution(plan, view.routers(s), root, own_packets(view, s))
