"""Group-combining all-to-all broadcast (the A2A of Xiang and Ju, COCOON 2021) on Dragonfly and Galaxyfly.

Zhuang et al. 2023 compare SFATA and RFATA with this algorithm in their
Table 5 without giving it; what we know of it is its published summary, which
we implement in three moves (``docs/galaxyfly.md``):

1. **Combine.**  In every group (a Dragonfly group, a Galaxyfly supernode)
   every router sends its packet to one router of the group, the combiner
   (local index ``combiner``, default 0).  The combiner then holds the
   group's combined message and passes it to every other router of its group
   (each receives the group's packets except its own), so that the routers
   holding global links have it and the group's own routers are served.
2. **Exchange.**  The combined message of each group crosses to every other
   group: the router holding the global link towards a group sends it over.
   In a Dragonfly every pair of groups is linked, so this is one global hop.
   A Galaxyfly's supernodes are not all adjacent (the Galaxy graph has
   diameter 2); there the combined message of group ``g`` follows the
   breadth-first tree of the supernode graph rooted at ``g`` (neighbours in
   ascending index, the rule of Algorithm 2's tree), relayed by the
   intermediate groups: our extension, since the summary only covers
   directly linked groups.
3. **Forward.**  The router that received a group's combined message over a
   global link forwards it to every other router of its own group, one
   transfer per received message, as soon as it has arrived.

Every (router, packet) pair is delivered exactly once.  The plan is a
dependency :class:`~topocast.plans.schedule.Schedule` for the event engine under
the cost model of SFATA and RFATA (160-byte packets, 16 Gbit/s, 1 us
start-up, 100 ns per hop; ``packet_size`` and ``bandwidth`` accepted), every
router labelled with its group, so the engine reports the paper's metrics
under the same names (``docs/galaxyfly.md``, Metrics).
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule
from ..registry import Param
from ..topology.core import Topology
from ..topology.galaxyfly import supernode_view
from .base import register
from .galaxyfly_broadcast import PACKET_BYTES, PARAM_ALIASES, RUN_PARAMS
from .galaxyfly_plan import _link_routers, spc_tree

NAME = "group-combining-allgather"
PAPER = ("Xiang and Ju: All-to-All Broadcast in Dragonfly Networks, COCOON 2021 "
         "(the A2A of Zhuang et al. 2023, Table 5; implemented from its published summary)")
NOTES = ("deterministic: no random choices (seed unused)",)


def group_combining_schedule(topology: Topology, message_bytes: float = PACKET_BYTES, combiner: int = 0) -> Schedule:
    """Plan the group-combining all-to-all broadcast on a Galaxyfly or Dragonfly (see the module docstring).

    Parameters
    ----------
    topology : Topology
        A Galaxyfly or Dragonfly network.
    message_bytes : float, default PACKET_BYTES
        Size of every router's packet in bytes.
    combiner : int, default 0
        The local router (0..a-1) of every group that combines its group's packets.

    Returns
    -------
    Schedule
        A dependency schedule (all-gather).

    Raises
    ------
    TopocastError
        A ``combiner`` out of range, or a network without supernodes.
    """
    view = supernode_view(topology)
    a, count = view.a, view.num_supernodes
    if not 0 <= combiner < a:
        raise TopocastError(f"algorithm {NAME}: parameter 'combiner' must be a local router in 0..{a - 1}, "
                            f"got combiner={combiner}")
    n, k, c = a * count, a - 1, combiner
    groups = np.arange(count, dtype=np.int64)
    others = np.delete(np.arange(a, dtype=np.int64), c)          # local routers other than the combiner

    # 1a. every router -> the combiner of its group: ids g*k + pos(r), pos(r) = r - (r > c)
    g1 = np.repeat(groups, k)
    r1 = np.tile(others, count)
    src1, dst1 = g1 * a + r1, g1 * a + c
    # 1b. the combiner -> every other router of its group, all the group's packets but the receiver's own;
    #     waits for the packets of every router but the receiver (ids base2 + g*k + pos(r))
    base2 = len(src1)
    src2, dst2 = g1 * a + c, g1 * a + r1
    template = np.array([np.delete(np.arange(k), i) for i in range(k)], dtype=np.int64).reshape(k, max(k - 1, 0))
    deps2 = (g1 * k)[:, None] + template[np.tile(np.arange(k), count)]

    # 2. the combined message of group g along the tree rooted at g: one global hop per tree edge (g, ch)
    parent = np.stack([spc_tree(view, g)[0] for g in range(count)]) if count > 1 else np.zeros((count, count),
                                                                                                 np.int64)
    gg, ch = np.nonzero(~np.eye(count, dtype=bool))                # every (source group, other group)
    p = parent[gg, ch]
    sender, entry = _link_routers(view, p, ch), _link_routers(view, ch, p)
    base3 = base2 + len(src2)                                      # edge (g, ch): base3 + g*(count-1) + ch - (ch > g)
    # 3. the entry router of group ch forwards the message of g to every other router of ch
    base4 = base3 + len(gg)
    entry_local = entry % a
    r4 = np.delete(np.tile(np.arange(a, dtype=np.int64), (len(gg), 1)),
                   np.arange(len(gg)) * a + entry_local).reshape(len(gg), k)
    src4 = np.repeat(entry, k)
    dst4 = (np.repeat(ch, k) * a + r4.ravel())

    def forward_id(e, local):
        """Id of the forward of tree edge ``e`` (into its group) towards local router ``local``."""
        return base4 + e * k + local - (local > entry_local[e])

    # dependencies of the global hops
    dep_ptr3 = np.zeros(len(gg) + 1, dtype=np.int64)
    lengths = np.zeros(len(gg), dtype=np.int64)
    sender_local = sender % a
    at_source = p == gg
    combiner_sends = at_source & (sender_local == c)
    # from the source group: the combiner waits for every packet of its group; another router for 1b
    lengths[combiner_sends] = k
    lengths[~combiner_sends] = 1
    np.cumsum(lengths, out=dep_ptr3[1:])
    ids3 = np.empty(int(lengths.sum()), dtype=np.int64)
    rows = np.flatnonzero(combiner_sends)
    if len(rows) and k:
        ids3[(dep_ptr3[rows][:, None] + np.arange(k)).ravel()] = ((gg[rows] * k)[:, None] + np.arange(k)).ravel()
    rows = np.flatnonzero(at_source & ~combiner_sends)
    ids3[dep_ptr3[rows]] = base2 + gg[rows] * k + sender_local[rows] - (sender_local[rows] > c)
    # relayed: the sender got the message of g either over the global link (it is the entry router of its
    # group for g) or from that entry router
    rows = np.flatnonzero(~at_source)
    into_parent = gg[rows] * (count - 1) + p[rows] - (p[rows] > gg[rows])
    direct = entry[into_parent] == sender[rows]
    ids3[dep_ptr3[rows]] = np.where(direct, base3 + into_parent, forward_id(into_parent, sender_local[rows]))

    src = np.concatenate([src1, src2, sender, src4])
    dst = np.concatenate([dst1, dst2, entry, dst4])
    # packet ranges: own packet; the group minus the receiver (two ranges, empty ones dropped); whole blocks
    lo = g1 * a
    first2 = np.stack([lo, dst2 + 1], axis=1).ravel()
    count2 = np.stack([dst2 - lo, lo + a - dst2 - 1], axis=1).ravel()
    keep2 = count2 > 0
    nr2 = keep2.reshape(-1, 2).sum(axis=1) if len(src2) else np.zeros(0, np.int64)
    nranges = np.concatenate([np.ones(len(src1), np.int64), nr2, np.ones(len(gg) + len(src4), np.int64)])
    range_first = np.concatenate([src1, first2[keep2], gg * a, np.repeat(gg, k) * a])
    range_count = np.concatenate([np.ones(len(src1), np.int64), count2[keep2], np.full(len(gg), a, np.int64),
                                  np.full(len(src4), a, np.int64)])
    range_ptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(nranges, out=range_ptr[1:])
    # dependencies: none for 1a; 1b as above; the global hops; a forward waits for its global hop
    dep_len = np.concatenate([np.zeros(len(src1), np.int64), np.full(len(src2), max(k - 1, 0), np.int64),
                              lengths, np.ones(len(src4), np.int64)])
    after_ptr = np.zeros(len(src) + 1, dtype=np.int64)
    np.cumsum(dep_len, out=after_ptr[1:])
    after_ids = np.concatenate([deps2.ravel(), ids3, base3 + np.repeat(np.arange(len(gg)), k)])
    return Schedule(num_nodes=n, origin=np.arange(n, dtype=np.int64), src=src, dst=dst, range_ptr=range_ptr,
                    range_first=range_first, range_count=range_count, collective="allgather", targets="all",
                    after_ptr=after_ptr, after_ids=after_ids, message_bytes=float(message_bytes),
                    meta={"algorithm": "A2A", "combiner": combiner},
                    groups=np.arange(n, dtype=np.int64) // a, notes=NOTES)


register(NAME, group_combining_schedule, "allgather",
         "A2A (Xiang and Ju 2021): combine each group's packets in one router, exchange the combined messages "
         "between groups, forward them inside each group",
         families=("dragonfly", "galaxyfly"),
         params=(Param("combiner", "int", 0, "local index of the router that combines each group's packets",
                       minimum=0),),
         aliases=("a2a", "A2A"), engines=("event",), paper=PAPER, run_params=RUN_PARAMS,
         param_aliases=PARAM_ALIASES)
