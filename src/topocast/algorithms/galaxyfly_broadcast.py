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

Run on a Dragonfly (one supernode per cluster), SFATA is the comparator for
the paper's Table 5: the A2A algorithm of Xiang and Ju that the paper compares
with is not given in it.

Metrics (section 5.1 and 5.2), from the arrival time of every packet at
every router: ``avg_time``, ``max_time``, ``min_time`` (mean, largest and
smallest time at which a router holds all packets), ``avg_packet``
(redundant receipts / routers), ``router_time`` (mean time at which a router
holds every packet of its own supernode), ``avg_channel`` (mean busy time of
all channels, i.e. link directions, over ``max_time``), ``success_rate`` and
``failure_rate``.  Times are in seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TopocastError
from ..registry import Algorithm, Param, register_algorithm
from ..result import RunResult, execute
from ..schedule import Schedule
from ..sim.models import CostModel, PortModel
from ..topology.core import Topology
from ..topology.galaxyfly import SupernodeView, supernode_view
from .galaxyfly_plan import (Plan, gather_inside, router_packet_collection, router_packet_distribution,
                             spc_tree, supernode_packet_collection, supernode_packet_distribution)

PAPER = "Zhuang, Chang, Li, Song, Lin: All-to-All Broadcast Algorithm in Galaxyfly Networks, Mathematics 2023"

#: defaults of the cost model (docs/galaxyfly.md): 16 Gbps links, 160-byte packets
BANDWIDTH = 16e9
PACKET_BYTES = 160.0
STARTUP = 1e-6
PER_HOP = 1e-7

COST_PARAMS: tuple[Param, ...] = (
    Param("packet_size", "float", PACKET_BYTES, "bytes per packet; a transfer of k packets is k * packet_size bytes",
          minimum=1),
    Param("bandwidth", "float", BANDWIDTH, "link bandwidth in bits per second (each direction)", minimum=1),
    Param("startup", "float", STARTUP, "start-up time of every transfer (message) in seconds", minimum=0),
    Param("per_hop", "float", PER_HOP, "latency of every hop in seconds", minimum=0),
)
ROOT_PARAM = Param("root", "int", 0, "the supernode A that collects and redistributes (index, S_{root+1})",
                   minimum=0)
FAMILIES = ("galaxyfly", "dragonfly")


def _view(topology: Topology, root: int, owner: str, name: str = "root") -> SupernodeView:
    view = supernode_view(topology)
    if not 0 <= root < view.num_supernodes:
        raise TopocastError(f"{owner}: parameter '{name}' must be a supernode in 0..{view.num_supernodes - 1}, "
                            f"got {name}={root}")
    return view


def _all_blocks(view: SupernodeView) -> np.ndarray:
    return np.ones(view.num_supernodes, dtype=bool)


def supernode_first_schedule(topology: Topology, packet_size: float = PACKET_BYTES, root: int = 0) -> Schedule:
    """SFATA (Algorithm 3) as a dependency schedule: SPC(U, A) then SPD(U, A)."""
    view = _view(topology, root, "supernode-first-allgather")
    plan = Plan(view)
    tree = spc_tree(view, root)
    gather_inside(plan, [root])
    supernode_packet_collection(plan, root, router_first=False, tree=tree)
    supernode_packet_distribution(plan, root, _all_blocks(view), tree=tree)
    return plan.schedule(packet_size, meta={"root": root, "algorithm": "SFATA"})


def router_first_schedule(topology: Topology, packet_size: float = PACKET_BYTES, root: int = 0) -> Schedule:
    """RFATA (Algorithm 4) as a dependency schedule."""
    view = _view(topology, root, "router-first-allgather")
    plan = Plan(view)
    tree = spc_tree(view, root)
    gather_inside(plan, np.arange(view.num_supernodes))
    supernode_packet_collection(plan, root, router_first=True, tree=tree)
    supernode_packet_distribution(plan, root, _all_blocks(view), tree=tree)
    return plan.schedule(packet_size, meta={"root": root, "algorithm": "RFATA"})


def _targets(n: int, packets_of: np.ndarray, routers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def rpc_schedule(topology: Topology, packet_size: float = PACKET_BYTES, supernode: int = 0,
                 router: int = 0) -> Schedule:
    """RPC (Algorithm 1): the packets of ``supernode`` collected into its local router ``router``."""
    view, target = _local(topology, supernode, router, "router-packet-collection")
    plan = Plan(view)
    router_packet_collection(plan, [supernode], router, [(0, 0)])
    pkts = np.arange(supernode * view.a, (supernode + 1) * view.a)
    return plan.schedule(packet_size, "custom", _targets(topology.num_nodes, pkts, [target]),
                         meta={"algorithm": "RPC"})


def rpd_schedule(topology: Topology, packet_size: float = PACKET_BYTES, supernode: int = 0,
                 router: int = 0) -> Schedule:
    """RPD: the packet of local router ``router`` distributed to every router of ``supernode``."""
    view, source = _local(topology, supernode, router, "router-packet-distribution")
    plan = Plan(view)
    offer_local = np.zeros((1, view.a), dtype=bool)
    offer_local[0, router] = True
    router_packet_distribution(plan, [supernode], router, np.zeros((1, view.num_supernodes), dtype=bool),
                               offer_local, [(0, 0)])
    return plan.schedule(packet_size, "custom", _targets(topology.num_nodes, [source], view.routers(supernode)),
                         meta={"algorithm": "RPD"})


def spc_schedule(topology: Topology, packet_size: float = PACKET_BYTES, root: int = 0) -> Schedule:
    """SPC(U, A) (Algorithm 2): every other supernode's packets reach every router of ``root``."""
    view = _view(topology, root, "supernode-packet-collection")
    plan = Plan(view)
    supernode_packet_collection(plan, root)
    others = np.setdiff1d(np.arange(topology.num_nodes), np.asarray(view.routers(root)))
    return plan.schedule(packet_size, "custom", _targets(topology.num_nodes, others, view.routers(root)),
                         meta={"algorithm": "SPC", "root": root})


def spd_schedule(topology: Topology, packet_size: float = PACKET_BYTES, root: int = 0) -> Schedule:
    """SPD(U, A): the packets of ``root``'s routers reach every router (RPC + RPD inside ``root`` first)."""
    view = _view(topology, root, "supernode-packet-distribution")
    plan = Plan(view)
    gather_inside(plan, [root])
    own = np.zeros(view.num_supernodes, dtype=bool)
    own[root] = True
    supernode_packet_distribution(plan, root, own)
    return plan.schedule(packet_size, "custom",
                         _targets(topology.num_nodes, np.asarray(view.routers(root)), np.arange(topology.num_nodes)),
                         meta={"algorithm": "SPD", "root": root})


def _local(topology: Topology, supernode: int, router: int, owner: str):
    view = _view(topology, supernode, owner, "supernode")
    if not 0 <= router < view.a:
        raise TopocastError(f"{owner}: parameter 'router' must be a local router in 0..{view.a - 1}, "
                            f"got router={router}")
    return view, supernode * view.a + router


# -- metrics -----------------------------------------------------------------------------------------

def all_to_all_metrics(topology: Topology, trace, view: SupernodeView | None = None) -> dict[str, Any]:
    """Section 5's metrics from an event trace run with ``keep_arrival=True``."""
    view = view or supernode_view(topology)
    arrival = trace.arrival
    n = topology.num_nodes
    done = arrival.max(axis=1)
    complete = np.isfinite(done)
    a, count = view.a, view.num_supernodes
    blocks = arrival.reshape(count, a, count, a)
    own = blocks[np.arange(count), :, np.arange(count), :]  # (supernode, router, packet of that supernode)
    router_time = own.max(axis=2)
    max_time = float(done.max()) if n else 0.0
    busy = trace.arc_busy
    success = float(np.count_nonzero(complete)) / n
    return {
        "avg_time": float(done.mean()),
        "max_time": max_time,
        "min_time": float(done.min()),
        "avg_packet": trace.verification.redundant / n,
        "router_time": float(router_time.mean()),
        "avg_channel": float(busy.mean() / max_time) if max_time > 0 and len(busy) else 0.0,
        "success_rate": success,
        "failure_rate": 1.0 - success,
        "routers_complete": int(np.count_nonzero(complete)),
        "routers": n,
        "time_unit": "s",
    }


def completion_times(trace) -> np.ndarray:
    """Time at which each router holds every packet (inf if never)."""
    return trace.arrival.max(axis=1)


def _cost(packet_size: float, bandwidth: float, startup: float, per_hop: float) -> CostModel:
    return CostModel.from_bandwidth(bandwidth, startup=startup, per_hop=per_hop)


def _allgather_runner(name: str, make):
    def run(topology: Topology, *, engine: str = "event", seed: int = 0, max_memory: float | None = None,
            packet_size: float = PACKET_BYTES, bandwidth: float = BANDWIDTH, startup: float = STARTUP,
            per_hop: float = PER_HOP, root: int = 0) -> RunResult:
        schedule = make(topology, packet_size=packet_size, root=root)
        cost = _cost(packet_size, bandwidth, startup, per_hop)
        result = execute(topology, schedule, name, "event", ports=PortModel(), cost=cost,
                         max_bytes=max_memory, keep_arrival=True)
        result.metrics.update(all_to_all_metrics(topology, result.trace))
        result.metrics.update(root=root, packet_size=packet_size, bandwidth=bandwidth)
        result.notes.append("deterministic: no random choices (seed unused)")
        return result

    return run


def _custom_runner(name: str, make, keys: tuple[str, ...]):
    def run(topology: Topology, *, engine: str = "event", seed: int = 0, max_memory: float | None = None,
            packet_size: float = PACKET_BYTES, bandwidth: float = BANDWIDTH, startup: float = STARTUP,
            per_hop: float = PER_HOP, **kwargs) -> RunResult:
        schedule = make(topology, packet_size=packet_size, **{k: kwargs[k] for k in keys})
        cost = _cost(packet_size, bandwidth, startup, per_hop)
        result = execute(topology, schedule, name, "event", ports=PortModel(), cost=cost, max_bytes=max_memory)
        bound = _targets_bound(topology, schedule, cost)
        result.metrics.update(time_lower_bound=bound,
                              lower_bound_ratio=result.metrics["time"] / bound if bound > 0 else None)
        return result

    return run


def _targets_bound(topology: Topology, schedule: Schedule, cost: CostModel) -> float:
    """Farthest (origin, target) pair the schedule must serve, times one packet hop."""
    from ..topology.metrics import bfs_distances

    ptr, ids = schedule.target_csr()
    msg = np.repeat(np.arange(schedule.num_messages), np.diff(ptr))
    keep = schedule.origin[msg] != ids
    origins, targets = schedule.origin[msg[keep]], ids[keep]
    if len(origins) == 0:
        return 0.0
    hops = 0
    probe_targets = len(np.unique(targets)) <= len(np.unique(origins))
    for node in np.unique(targets if probe_targets else origins):
        dist = bfs_distances(topology, int(node))
        other = origins[targets == node] if probe_targets else targets[origins == node]
        hops = max(hops, int(dist[other].max()))
    return hops * (cost.startup + schedule.message_bytes * cost.per_byte + cost.per_hop)


register_algorithm(Algorithm(
    name="supernode-first-allgather", run=_allgather_runner("supernode-first-allgather", supernode_first_schedule),
    collective="allgather",
    doc="SFATA: all-to-all broadcast on Galaxyfly/Dragonfly, supernode-first (SPC then SPD)",
    families=FAMILIES, params=(ROOT_PARAM,) + COST_PARAMS, aliases=("sfata", "SFATA"), engines=("event",),
    paper=PAPER))
register_algorithm(Algorithm(
    name="router-first-allgather", run=_allgather_runner("router-first-allgather", router_first_schedule),
    collective="allgather",
    doc="RFATA: all-to-all broadcast on Galaxyfly/Dragonfly, router-first (RPC+RPD everywhere, then SPC/SPD)",
    families=FAMILIES, params=(ROOT_PARAM,) + COST_PARAMS, aliases=("rfata", "RFATA"), engines=("event",),
    paper=PAPER))

_LOCAL_PARAMS = (Param("supernode", "int", 0, "supernode index", minimum=0),
                 Param("router", "int", 0, "local router index inside the supernode", minimum=0))
register_algorithm(Algorithm(
    name="router-packet-collection", run=_custom_runner("router-packet-collection", rpc_schedule,
                                                        ("supernode", "router")),
    collective="custom", doc="RPC (Algorithm 1): a supernode's packets collected into one of its routers",
    families=FAMILIES, params=_LOCAL_PARAMS + COST_PARAMS, aliases=("rpc", "RPC"), engines=("event",), paper=PAPER))
register_algorithm(Algorithm(
    name="router-packet-distribution", run=_custom_runner("router-packet-distribution", rpd_schedule,
                                                          ("supernode", "router")),
    collective="custom", doc="RPD: one router's packet distributed inside its supernode (inverse of RPC)",
    families=FAMILIES, params=_LOCAL_PARAMS + COST_PARAMS, aliases=("rpd", "RPD"), engines=("event",), paper=PAPER))
register_algorithm(Algorithm(
    name="supernode-packet-collection", run=_custom_runner("supernode-packet-collection", spc_schedule, ("root",)),
    collective="custom", doc="SPC (Algorithm 2): all other supernodes' packets collected into supernode A",
    families=FAMILIES, params=(ROOT_PARAM,) + COST_PARAMS, aliases=("spc", "SPC"), engines=("event",), paper=PAPER))
register_algorithm(Algorithm(
    name="supernode-packet-distribution", run=_custom_runner("supernode-packet-distribution", spd_schedule,
                                                             ("root",)),
    collective="custom", doc="SPD: supernode A's packets distributed to every router (inverse of SPC)",
    families=FAMILIES, params=(ROOT_PARAM,) + COST_PARAMS, aliases=("spd", "SPD"), engines=("event",), paper=PAPER))
