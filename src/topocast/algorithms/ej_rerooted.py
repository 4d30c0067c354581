"""Re-rooted broadcast on a degraded EJ network: the improved broadcast from a root chosen away from the faults.

An EJ network is vertex-transitive by translation: ``v -> v + r`` (coordinate
by coordinate, in the Eisenstein-Jacobi integers modulo alpha) maps every
link to a link of the same direction, so the improved broadcast of Hussain
(2018, Algorithms 1-2) from node 0, translated by ``r``, is a broadcast from
``r``. On a network with failed routers or links the broadcast is *re-rooted*:
the root is the given one when its translated tree crosses no failed part
(no transfer leaves a failed router or uses a failed link into a healthy
node: a failed router may be a leaf), else the healthy root of lowest index
whose tree crosses none, else the one whose tree crosses the fewest. Every
healthy node then receives the message exactly once whenever such a root
exists; otherwise the run counts what is lost (:mod:`topocast.faults.loss`).

Whether a good root exists for every set of two faults is checked
exhaustively on small EJ networks in ``tests/test_faults.py`` (every pair of
failed routers, every pair of failed links); the papers we hold state no such
guarantee, so the tests say which networks have it.

>>> import topocast as tc
>>> r = tc.run("ej:a=2,b=3", "one-to-all-rerooted", faults="routers=0;5")
>>> r.verified, r.metrics["deliveries_lost"], r.metrics["root_chosen"] not in (0, 5)
(True, 0, True)
"""

from __future__ import annotations

import numpy as np

from ..plans.schedule import Schedule, ScheduleBuilder
from ..registry import Param
from ..topology.core import Topology
from .base import register
from .ej_broadcast import HALF_DUPLEX_ALL_PORT, PAPER, broadcast_schedule, ring_of


def translations(topology: Topology) -> np.ndarray:
    """Tabulate every translation of an ``ej`` topology: ``table[r, v] = v + r``, one row per root.

    Parameters
    ----------
    topology : Topology
        An ``ej`` network.

    Returns
    -------
    numpy.ndarray
        ``N x N`` node indices.
    """
    ring, dims = ring_of(topology)
    n = topology.num_nodes
    nodes = np.arange(n, dtype=np.int64)
    coords = np.empty((dims, n), dtype=np.int64)
    rest = nodes.copy()
    for d in range(dims - 1, -1, -1):
        rest, coords[d] = np.divmod(rest, ring.norm)
    rep = np.asarray(ring.rep, dtype=np.int64)
    table = np.zeros((n, n), dtype=np.int64)
    for d in range(dims):
        x = rep[coords[d]][:, None, 0] + rep[coords[d]][None, :, 0]
        y = rep[coords[d]][:, None, 1] + rep[coords[d]][None, :, 1]
        table = table * ring.norm + ring.reduce(x, y)
    return table


def crossings(topology: Topology, tree: Schedule) -> np.ndarray:
    """Count, per root, the transfers of the translated tree that cross a failed part of a degraded network.

    A transfer crosses a failed part when it leaves a failed router or uses a failed link into a healthy
    node.

    Parameters
    ----------
    topology : Topology
        The degraded ``ej`` network.
    tree : Schedule
        The broadcast from node 0 on the intact network.

    Returns
    -------
    numpy.ndarray
        Crossing transfers per root.
    """
    table = translations(topology.intact)
    failed = np.zeros(topology.num_nodes, dtype=bool)
    failed[topology.failed_nodes] = True
    src, dst = table[:, tree.src], table[:, tree.dst]
    key = topology.arc_sources * topology.num_nodes + topology.indices
    want = src * topology.num_nodes + dst
    pos = np.minimum(np.searchsorted(key, want), max(len(key) - 1, 0))
    link_up = key[pos] == want if len(key) else np.zeros(want.shape, dtype=bool)
    bad = failed[src] | (~link_up & ~failed[dst])
    return bad.sum(axis=1)


def choose_root(topology: Topology, tree: Schedule, root: int) -> tuple[int, int]:
    """Choose the root whose translated tree avoids the faults.

    ``root`` if its tree crosses no failed part, else the healthy root of lowest index whose tree crosses
    none, else the healthy root whose tree crosses fewest.

    Parameters
    ----------
    topology : Topology
        The degraded ``ej`` network.
    tree : Schedule
        The broadcast from node 0 on the intact network.
    root : int
        The root asked for.

    Returns
    -------
    tuple of int
        ``(root, number of good roots)``.
    """
    cross = crossings(topology, tree)
    cross[topology.failed_nodes] = np.iinfo(np.int64).max  # a failed router is no root
    good = int(np.count_nonzero(cross == 0))
    if cross[root] == 0:
        return int(root), good
    return int(np.argmin(cross)), good  # argmin: the lowest index among the fewest


def rerooted_broadcast(topology: Topology, root: int = 0, message_bytes: float = 1024.0) -> Schedule:
    """Plan the improved EJ broadcast translated to a root whose tree avoids the faults of the network.

    On an intact network: the improved broadcast from ``root``.

    Parameters
    ----------
    topology : Topology
        An ``ej`` network, possibly degraded.
    root : int, default 0
        The root asked for.
    message_bytes : float, default 1024.0
        Size of the message in bytes.

    Returns
    -------
    Schedule
        The broadcast; ``info`` records the root chosen and, on a degraded network, how many roots were good.

    Raises
    ------
    TopocastError
        If ``root`` is not a node, or the network is not an ``ej`` one.
    """
    from .generic_trees import check_root

    root = check_root(topology, root)
    intact = topology.intact
    tree = broadcast_schedule(intact, "improved", message_bytes)
    chosen, good = (root, topology.num_nodes) if topology.faults is None else choose_root(topology, tree, root)
    shift = translations(intact)[chosen] if chosen else np.arange(topology.num_nodes)
    builder = ScheduleBuilder(topology.num_nodes, origin=[chosen], collective="broadcast",
                              message_bytes=message_bytes, meta={"algorithm": "re-rooted improved", "root": chosen})
    builder.add(src=shift[tree.src], dst=shift[tree.dst], first=0, count=1, step=tree.step)
    plan = builder.build()
    plan.info["root_chosen"] = chosen
    if topology.faults is not None:  # intact, every root is good: the count would only repeat the node count
        plan.info["good_roots"] = good
    return plan


register("one-to-all-rerooted", rerooted_broadcast, "broadcast",
         "improved one-to-all broadcast on EJ^(n) translated to a root whose tree avoids the failed routers and "
         "links (re-rooting); the given root on an intact network",
         families=("ej",), params=(Param("root", "int", 0, "the root asked for (kept when its tree avoids the "
                                         "faults)", minimum=0),),
         ports=HALF_DUPLEX_ALL_PORT, engines=("step", "event"), paper=PAPER, fault_mode="native")

__all__ = ["choose_root", "crossings", "rerooted_broadcast", "translations"]
