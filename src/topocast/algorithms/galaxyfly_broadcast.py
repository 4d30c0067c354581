"""All-to-all broadcast on Galaxyfly networks: SFATA and RFATA (Zhuang et al. 2023, section 4).

Every router starts with one packet and must end with all ``N`` packets.

* ``supernode-first-allgather`` (SFATA, Algorithm 3): SPC(U, A) then
  SPD(U, A).  Each supernode collects what it holds into the router linked
  towards ``A`` (RPC) and passes it up the SPC tree; at ``A`` every branch is
  spread with RPD(A, m) and ``A``'s own packets are gathered and spread with
  RPC + RPD on router 0; then SPD sends every supernode what it lacks and RPD
  spreads it inside.
* ``router-first-allgather`` (RFATA, Algorithm 4): first RPC + RPD inside
  every supernode (on its router 0), then the same tree, but packets
  arriving at a supernode are spread to all its routers (RPD) before they
  travel on; then SPD(U, A).

Both are dependency schedules for the event engine: operations on different
supernodes overlap, and a transfer waits only for the transfers that brought
the packets it carries.  A transfer carries only what its receiver lacks, so
neither algorithm sends a packet twice to a router (see ``docs/galaxyfly.md``
for why our RFATA has no redundant packets while the paper counts some).

``forwarding`` (both): ``block`` (default) spreads a block that arrives from
another supernode during SPC as whole transfers; ``packet`` spreads it one
packet per transfer, each packet leaving as soon as it is there (RFATA's "as
long as the supernode receives a packet"; for SFATA only RPD(A, m) is
concerned), see :data:`FORWARDING` and ``docs/galaxyfly.md``.

The paper's Table 5 compares with the A2A of Xiang and Ju, which it does not
give: :mod:`topocast.algorithms.group_combining` implements its published
summary.  SFATA run on a Dragonfly (one supernode per group) was our
stand-in before and is still reported beside it.

Every function here is a plan builder: it returns a dependency
:class:`~topocast.plans.schedule.Schedule` for the event engine under one cost
model (``message_bytes`` per packet, ``startup``, ``per_byte``, ``per_hop``;
defaults 160-byte packets on 16 Gbit/s links, ``packet_size`` and
``bandwidth`` accepted as aliases).  SFATA and RFATA schedules carry the
supernode of every router as ``groups``, so the event engine reports the
paper's metrics (section 5.1) under its own names: MaxTime = ``time``,
AvgTime = ``mean_completion_time``, MinTime = ``min_completion_time``,
RouterTime = ``mean_group_completion_time``, AvgChannel =
``mean_link_utilisation``; AvgPacket = ``redundant_receipts / nodes`` and
SuccessRate = ``nodes_complete / nodes``.  Times are in seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule
from ..registry import Param
from ..topology.core import Topology
from ..topology.galaxyfly import SupernodeView, supernode_view
from .base import register
from .galaxyfly_plan import (
    Plan,
    gather_inside,
    router_packet_collection,
    router_packet_distribution,
    spc_tree,
    supernode_packet_collection,
    supernode_packet_distribution,
)

PAPER = "Zhuang, Chang, Li, Song, Lin: All-to-All Broadcast Algorithm in Galaxyfly Networks, Mathematics 2023"

#: defaults of the cost model (docs/galaxyfly.md): 16 Gbps links, 160-byte packets
BANDWIDTH = 16e9
PACKET_BYTES = 160.0
STARTUP = 1e-6
PER_HOP = 1e-7


def per_byte_of(bits_per_second: float) -> float:
    """Convert a link bandwidth to seconds per byte (the ``bandwidth`` alias of ``per_byte``).

    Parameters
    ----------
    bits_per_second : float
        The bandwidth, > 0.

    Returns
    -------
    float
        Seconds per byte.

    Raises
    ------
    TopocastError
        If the bandwidth is not positive.
    """
    if not bits_per_second > 0:
        raise TopocastError(f"bandwidth: must be > 0 bits per second, got {bits_per_second}")
    return 8.0 / bits_per_second


PER_BYTE = per_byte_of(BANDWIDTH)

#: the one cost model of every Galaxyfly algorithm, with the paper's defaults
RUN_PARAMS: tuple[Param, ...] = (
    Param("message_bytes", "float", PACKET_BYTES, "bytes per packet; a transfer of k packets is k of them "
          "(alias packet_size)", minimum=1),
    Param("startup", "float", STARTUP, "start-up time of every transfer in seconds", minimum=0),
    Param("per_byte", "float", PER_BYTE, "seconds per byte, 8 / bandwidth (alias bandwidth in bit/s)", minimum=0),
    Param("per_hop", "float", PER_HOP, "latency of every hop in seconds", minimum=0),
)
PARAM_ALIASES = {"packet_size": ("message_bytes", float), "bandwidth": ("per_byte", per_byte_of)}
ROOT_PARAM = Param("root", "int", 0, "the supernode A that collects and redistributes (index, S_{root+1})",
                   minimum=0)
FAMILIES = ("galaxyfly", "dragonfly")
#: ``forwarding`` -> the (phase, operation) pairs of the plan moved one packet per transfer: ``block`` none;
#: ``packet`` the RPD spreading packets that arrive from another supernode during SPC (phase 1, operation 2)
FORWARDING: dict[str, tuple[tuple[int, int], ...]] = {"block": (), "packet": ((1, 2),)}
FORWARDING_PARAM = Param(
    "forwarding", "str", "block",
    "block: a supernode spreads a block it received from another supernode as one transfer per hop; packet: "
    "it spreads each packet on its own as it arrives (one transfer per packet and hop) during collection",
    choices=tuple(FORWARDING))
NOTES = ("deterministic: no random choices (seed unused)",)


def _view(topology: Topology, root: int, owner: str, name: str = "root") -> SupernodeView:
    view = supernode_view(topology)
    if not 0 <= root < view.num_supernodes:
        raise TopocastError(f"{owner}: parameter '{name}' must be a supernode in 0..{view.num_supernodes - 1}, "
                            f"got {name}={root}")
    return view


def _all_blocks(view: SupernodeView) -> np.ndarray:
    return np.ones(view.num_supernodes, dtype=bool)


def _allgather(plan: Plan, message_bytes: float, root: int, name: str, forwarding: str = "block",
               max_memory: float | None = None) -> Schedule:
    """Plan the all-to-all broadcast, every router labelled with its supernode (for RouterTime)."""
    schedule = plan.schedule(message_bytes, meta={"root": root, "algorithm": name, "forwarding": forwarding},
                             per_packet=FORWARDING[forwarding], max_bytes=max_memory)
    groups = np.arange(schedule.num_nodes, dtype=np.int64) // plan.view.a
    return replace(schedule, groups=groups, notes=NOTES)


def supernode_first_schedule(topology: Topology, message_bytes: float = PACKET_BYTES, root: int = 0,
                             forwarding: str = "block", max_memory: float | None = None) -> Schedule:
    """Plan the supernode-first all-to-all broadcast SFATA on a Galaxyfly (Algorithm 3, section 4).

    SFATA (Algorithm 3, section 4) as a dependency schedule: SPC(U, A) then SPD(U, A).

    ``forwarding="packet"``: RPD(A, m), which spreads each branch arriving at
    ``A`` during SPC, moves one packet per transfer (see :data:`FORWARDING`).

    Parameters
    ----------
    topology : Topology
        A Galaxyfly or Dragonfly network.
    message_bytes : float, default PACKET_BYTES
        Size of every router's packet in bytes.
    root : int, default 0
        The supernode that collects and distributes.
    forwarding : str, default "block"
        ``block`` or ``packet`` (:data:`FORWARDING`).
    max_memory : float, optional
        Memory limit in bytes for the packet-by-packet rewrite; None: half of the RAM.

    Returns
    -------
    Schedule
        A dependency schedule (all-gather).

    Raises
    ------
    TopocastError
        Not a Galaxyfly or Dragonfly, a root that is not a supernode, an unknown ``forwarding``, or a
        packet-by-packet rewrite over the memory limit.
    """
    view = _view(topology, root, "supernode-first-allgather")
    _check_forwarding(forwarding, "supernode-first-allgather")
    plan = Plan(view)
    tree = spc_tree(view, root)
    gather_inside(plan, [root])
    supernode_packet_collection(plan, root, router_first=False, tree=tree)
    supernode_packet_distribution(plan, root, _all_blocks(view), tree=tree)
    return _allgather(plan, message_bytes, root, "SFATA", forwarding, max_memory)


def router_first_schedule(topology: Topology, message_bytes: float = PACKET_BYTES, root: int = 0,
                          forwarding: str = "block", max_memory: float | None = None) -> Schedule:
    """Plan the router-first all-to-all broadcast RFATA on a Galaxyfly (Algorithm 4, section 4).

    RFATA (Algorithm 4, section 4) as a dependency schedule.

    ``forwarding="packet"``: every RPD that spreads packets arriving from
    another supernode during the collection loop (RPD(x, l) and RPD(A, m))
    moves one packet per transfer, each leaving as soon as it is at its
    sender: the paper's "as long as the supernode receives a packet, it will
    immediately send it to all routers inside it" (see :data:`FORWARDING`).

    Parameters
    ----------
    topology : Topology
        A Galaxyfly or Dragonfly network.
    message_bytes : float, default PACKET_BYTES
        Size of every router's packet in bytes.
    root : int, default 0
        The supernode that collects and distributes.
    forwarding : str, default "block"
        ``block`` or ``packet`` (:data:`FORWARDING`).
    max_memory : float, optional
        Memory limit in bytes for the packet-by-packet rewrite; None: half of the RAM.

    Returns
    -------
    Schedule
        A dependency schedule (all-gather).

    Raises
    ------
    TopocastError
        Not a Galaxyfly or Dragonfly, a root that is not a supernode, an unknown ``forwarding``, or a
        packet-by-packet rewrite over the memory limit.
    """
    view = _view(topology, root, "router-first-allgather")
    _check_forwarding(forwarding, "router-first-allgather")
    plan = Plan(view)
    tree = spc_tree(view, root)
    gather_inside(plan, np.arange(view.num_supernodes))
    supernode_packet_collection(plan, root, router_first=True, tree=tree)
    supernode_packet_distribution(plan, root, _all_blocks(view), tree=tree)
    return _allgather(plan, message_bytes, root, "RFATA", forwarding, max_memory)


def _check_forwarding(forwarding: str, owner: str) -> None:
    if forwarding not in FORWARDING:
        raise TopocastError(f"algorithm {owner}: parameter 'forwarding' must be one of "
                            f"{', '.join(FORWARDING)}, got {forwarding!r}")


def _targets(n: int, packets_of: Sequence[int] | np.ndarray,
             routers: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR targets: every packet needs its own router; the packets ``packets_of`` also need ``routers``."""
    extra = np.zeros(n, dtype=bool)
    extra[packets_of] = True
    routers = np.unique(np.asarray(routers, dtype=np.int64))
    msg = np.concatenate([np.arange(n), np.repeat(np.flatnonzero(extra), len(routers))])
    ids = np.concatenate([np.arange(n), np.tile(routers, int(extra.sum()))])
    pairs = np.unique(np.stack([msg, ids], axis=1), axis=0)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs[:, 0], minlength=n), out=ptr[1:])
    return ptr, pairs[:, 1].astype(np.int64)


def rpc_schedule(topology: Topology, message_bytes: float = PACKET_BYTES, supernode: int = 0,
                 router: int = 0) -> Schedule:
    """Plan RPC (Algorithm 1, section 3.1): the packets of a supernode collected into one of its routers.

    Parameters
    ----------
    topology : Topology
        A Galaxyfly or Dragonfly network.
    message_bytes : float, default PACKET_BYTES
        Size of every router's packet in bytes.
    supernode : int, default 0
        The supernode.
    router : int, default 0
        The local router (0..a-1) that collects.

    Returns
    -------
    Schedule
        A dependency schedule with its own delivery targets.

    Raises
    ------
    TopocastError
        A supernode or router out of range.
    """
    view, target = _local(topology, supernode, router, "router-packet-collection")
    plan = Plan(view)
    router_packet_collection(plan, [supernode], router, [(0, 0)])
    pkts = np.arange(supernode * view.a, (supernode + 1) * view.a)
    return plan.schedule(message_bytes, "custom", _targets(topology.num_nodes, pkts, [target]),
                         meta={"algorithm": "RPC"})


def rpd_schedule(topology: Topology, message_bytes: float = PACKET_BYTES, supernode: int = 0,
                 router: int = 0) -> Schedule:
    """Plan RPD: the packet of one local router distributed to every router of its supernode.

    Parameters
    ----------
    topology : Topology
        A Galaxyfly or Dragonfly network.
    message_bytes : float, default PACKET_BYTES
        Size of every router's packet in bytes.
    supernode : int, default 0
        The supernode.
    router : int, default 0
        The local router (0..a-1) whose packet is distributed.

    Returns
    -------
    Schedule
        A dependency schedule with its own delivery targets.

    Raises
    ------
    TopocastError
        A supernode or router out of range.
    """
    view, source = _local(topology, supernode, router, "router-packet-distribution")
    plan = Plan(view)
    offer_local = np.zeros((1, view.a), dtype=bool)
    offer_local[0, router] = True
    router_packet_distribution(plan, [supernode], router, np.zeros((1, view.num_supernodes), dtype=bool),
                               offer_local, [(0, 0)])
    return plan.schedule(message_bytes, "custom", _targets(topology.num_nodes, [source], view.routers(supernode)),
                         meta={"algorithm": "RPD"})


def spc_schedule(topology: Topology, message_bytes: float = PACKET_BYTES, root: int = 0) -> Schedule:
    """Plan SPC(U, A) (Algorithm 2, section 3.2): every other supernode's packets reach every router of ``root``.

    Parameters
    ----------
    topology : Topology
        A Galaxyfly or Dragonfly network.
    message_bytes : float, default PACKET_BYTES
        Size of every router's packet in bytes.
    root : int, default 0
        The collecting supernode.

    Returns
    -------
    Schedule
        A dependency schedule with its own delivery targets.

    Raises
    ------
    TopocastError
        A root out of range.
    """
    view = _view(topology, root, "supernode-packet-collection")
    plan = Plan(view)
    supernode_packet_collection(plan, root)
    others = np.setdiff1d(np.arange(topology.num_nodes), np.asarray(view.routers(root)))
    return plan.schedule(message_bytes, "custom", _targets(topology.num_nodes, others, view.routers(root)),
                         meta={"algorithm": "SPC", "root": root})


def spd_schedule(topology: Topology, message_bytes: float = PACKET_BYTES, root: int = 0) -> Schedule:
    """Plan SPD(U, A): the packets of ``root``'s routers reach every router (RPC + RPD inside ``root`` first).

    Parameters
    ----------
    topology : Topology
        A Galaxyfly or Dragonfly network.
    message_bytes : float, default PACKET_BYTES
        Size of every router's packet in bytes.
    root : int, default 0
        The distributing supernode.

    Returns
    -------
    Schedule
        A dependency schedule with its own delivery targets.

    Raises
    ------
    TopocastError
        A root out of range.
    """
    view = _view(topology, root, "supernode-packet-distribution")
    plan = Plan(view)
    gather_inside(plan, [root])
    own = np.zeros(view.num_supernodes, dtype=bool)
    own[root] = True
    supernode_packet_distribution(plan, root, own)
    return plan.schedule(message_bytes, "custom",
                         _targets(topology.num_nodes, np.asarray(view.routers(root)), np.arange(topology.num_nodes)),
                         meta={"algorithm": "SPD", "root": root})


def _local(topology: Topology, supernode: int, router: int, owner: str):
    view = _view(topology, supernode, owner, "supernode")
    if not 0 <= router < view.a:
        raise TopocastError(f"{owner}: parameter 'router' must be a local router in 0..{view.a - 1}, "
                            f"got router={router}")
    return view, supernode * view.a + router


# -- registration ----------------------------------------------------------------------------------

def _register(name: str, plan, collective: str, doc: str, params: tuple[Param, ...], aliases: tuple[str, ...]):
    register(name, plan, collective, doc, families=FAMILIES, params=params, aliases=aliases, engines=("event",),
             paper=PAPER, run_params=RUN_PARAMS, param_aliases=PARAM_ALIASES)


_LOCAL_PARAMS = (Param("supernode", "int", 0, "supernode index", minimum=0),
                 Param("router", "int", 0, "local router index inside the supernode", minimum=0))
_register("supernode-first-allgather", supernode_first_schedule, "allgather",
          "SFATA: all-to-all broadcast on Galaxyfly/Dragonfly, supernode-first (SPC then SPD)",
          (ROOT_PARAM, FORWARDING_PARAM), ("sfata", "SFATA"))
_register("router-first-allgather", router_first_schedule, "allgather",
          "RFATA: all-to-all broadcast on Galaxyfly/Dragonfly, router-first (RPC+RPD everywhere, then SPC/SPD)",
          (ROOT_PARAM, FORWARDING_PARAM), ("rfata", "RFATA"))
_register("router-packet-collection", rpc_schedule, "custom",
          "RPC (Algorithm 1): a supernode's packets collected into one of its routers", _LOCAL_PARAMS, ("rpc", "RPC"))
_register("router-packet-distribution", rpd_schedule, "custom",
          "RPD: one router's packet distributed inside its supernode (inverse of RPC)", _LOCAL_PARAMS, ("rpd", "RPD"))
_register("supernode-packet-collection", spc_schedule, "custom",
          "SPC (Algorithm 2): all other supernodes' packets collected into supernode A", (ROOT_PARAM,), ("spc", "SPC"))
_register("supernode-packet-distribution", spd_schedule, "custom",
          "SPD: supernode A's packets distributed to every router (inverse of SPC)", (ROOT_PARAM,), ("spd", "SPD"))
