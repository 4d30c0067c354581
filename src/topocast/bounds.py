"""Lower bounds for each collective and port model, reported beside every result.

Steps (synchronous rounds, one-hop transfers, messages may be combined):

* one-to-all from ``r``: ``ecc(r)`` (the farthest node is that many hops
  away) and ``ceil(log_{p+1} N)`` where ``p`` is the ports a node may use
  per step (one-port: ``ceil(log2 N)``; all-port: ``p`` = max degree), since
  the informed set grows at most ``(p+1)``-fold per step.
* all-gather, total exchange: the diameter, and the same doubling bound.
* multicast, unicast, custom: the largest distance from a message's origin to
  one of its targets.

Time (event engine, store-and-forward, a message never split):

* one-to-all: ``ecc(r) * (t_s + m t_w + t_h)``.
* all-gather: ``max(D (t_s + m t_w + t_h), t_s + t_h + (N-1) m t_w / p)``
  where ``p`` is the smallest number of ports of a node (all ``N-1``
  messages must come in through them).
* total exchange: the same with each node receiving ``N-1`` messages.
"""

from __future__ import annotations

import math

import numpy as np

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
    if schedule.collective == "broadcast":
        return int(bfs_distances(topology, int(schedule.origin[0])).max())
    if schedule.collective in ("allgather", "alltoall"):
        return diameter(topology)
    return farthest_pair(topology, schedule)


def farthest_pair(topology: Topology, schedule: Schedule) -> int:
    """Largest distance from a message's origin to one of its targets (one BFS per distinct
    origin or per distinct target, whichever is fewer)."""
    ptr, ids = schedule.target_csr()
    msg = np.repeat(np.arange(schedule.num_messages), np.diff(ptr))
    keep = schedule.origin[msg] != ids
    origins, targets = schedule.origin[msg[keep]], ids[keep]
    if len(origins) == 0:
        return 0
    by_target = len(np.unique(targets)) <= len(np.unique(origins))
    probes, others = (targets, origins) if by_target else (origins, targets)
    hops = 0
    for node in np.unique(probes):
        dist = bfs_distances(topology, int(node))
        hops = max(hops, int(dist[others[probes == node]].max()))
    return hops


def step_lower_bound(topology: Topology, schedule: Schedule, ports: PortModel) -> int:
    hops = hop_bound(topology, schedule)
    if schedule.collective in ("broadcast", "allgather", "alltoall"):
        return max(hops, _doubling(topology.num_nodes, _ports(topology, ports, smallest=False)))
    return hops


def time_lower_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> float:
    m = schedule.message_bytes
    bound = hop_bound(topology, schedule) * cost.hop_time(m)
    if schedule.collective in ("allgather", "alltoall"):
        p = max(1, _ports(topology, ports, smallest=True))
        n = topology.num_nodes
        bound = max(bound, cost.hop_time((n - 1) * m / p))
    return float(bound)


__all__ = ["farthest_pair", "hop_bound", "step_lower_bound", "time_lower_bound"]
