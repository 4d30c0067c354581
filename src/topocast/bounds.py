"""Lower bounds for each collective and port model, reported beside every result.

Steps (synchronous rounds, one-hop transfers, messages may be combined):

* one-to-all from ``r``: ``ecc(r)`` (the farthest node is that many hops
  away) and ``ceil(log_{p+1} N)`` where ``p`` is the ports a node may use
  per step (one-port: ``ceil(log2 N)``; all-port: ``p`` = max degree), since
  the informed set grows at most ``(p+1)``-fold per step.
* all-gather, total exchange: the diameter, and the same doubling bound.
* multicast: the largest distance from the root to a target.

Time (event engine, store-and-forward, a message never split):

* one-to-all: ``ecc(r) * (t_s + m t_w + t_h)``.
* all-gather: ``max(D (t_s + m t_w + t_h), t_s + t_h + (N-1) m t_w / p)``
  where ``p`` is the smallest number of ports of a node (all ``N-1``
  messages must come in through them).
* total exchange: the same with each node receiving ``N-1`` messages.
"""

from __future__ import annotations

import math

from .schedule import Schedule
from .sim.models import CostModel, PortModel
from .topology.core import Topology
from .topology.metrics import bfs_distances, diameter


def _ports(topology: Topology, ports: PortModel, smallest: bool) -> int:
    degree = topology.port_degree
    p = int(degree.min() if smallest else degree.max())
    return p if ports.ports is None else min(p, ports.ports)


def _doubling(n: int, p: int) -> int:
    if n <= 1:
        return 0
    return math.ceil(math.log(n) / math.log(p + 1) - 1e-12)


def hop_bound(topology: Topology, schedule: Schedule) -> int:
    """Hops the farthest required delivery must travel."""
    if schedule.collective in ("broadcast", "multicast"):
        dist = bfs_distances(topology, int(schedule.origin[0]))
        if schedule.collective == "multicast":
            _, ids = schedule.target_csr()
            return int(dist[ids].max()) if len(ids) else 0
        return int(dist.max())
    return diameter(topology)


def step_lower_bound(topology: Topology, schedule: Schedule, ports: PortModel) -> int:
    hops = hop_bound(topology, schedule)
    if schedule.collective in ("broadcast", "allgather", "alltoall"):
        return max(hops, _doubling(topology.num_nodes, _ports(topology, ports, smallest=False)))
    return hops


def time_lower_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> float:
    m = schedule.message_bytes
    hop = cost.transfer_time(m) + cost.per_hop
    bound = hop_bound(topology, schedule) * hop
    if schedule.collective in ("allgather", "alltoall"):
        p = max(1, _ports(topology, ports, smallest=True))
        n = topology.num_nodes
        bound = max(bound, cost.startup + cost.per_hop + (n - 1) * m * cost.per_byte / p)
    return float(bound)


def ratio(measured: float, bound: float) -> float | None:
    return None if bound <= 0 else float(measured) / float(bound)


__all__ = ["hop_bound", "ratio", "step_lower_bound", "time_lower_bound"]
