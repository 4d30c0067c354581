"""All-to-all personalized exchange (total exchange) on the classic networks (Grama et al., ch. 4.5).

Message ``dst * N + src`` goes from ``src`` to ``dst``; nodes forward bundles
store-and-forward and keep what is theirs.

* ``alltoall-ring`` / ``alltoall-mesh`` (ring, path, mesh, torus): one phase per
  dimension, last dimension first.  In the phase for dimension ``d`` each node
  groups what it holds by the destination's coordinate ``d`` (``N / k_d``
  messages per group) and the line runs a personalized exchange of groups: on
  a ring one way round, the bundle shrinking by a group per step; on a path
  (mesh without wraparound) both ways at once.  ``k_d - 1`` steps; time
  ``sum_d sum_{s=1}^{k_d-1} (t_s + t_h + (k_d - s) (N/k_d) m t_w)``, which for a
  square ``p``-node 2-D torus or mesh is Grama's ``(2 t_s + t_w m p)(sqrt p - 1)``.
* ``alltoall-hypercube``: step ``k`` sends across dimension ``k`` the ``N/2``
  held messages whose destination differs in bit ``k``; ``log2 N`` steps,
  ``(t_s + t_h + t_w m N/2) log2 N``.
"""

from __future__ import annotations

import numpy as np

from ..plans.schedule import Schedule, ScheduleBuilder
from ..sim.models import CostModel, PortModel
from ..topology.core import Topology
from .base import register
from .grid import grid_shape, strides


def _personalized(n: int, message_bytes: float, name: str) -> ScheduleBuilder:
    ids = np.arange(n * n, dtype=np.int64)
    return ScheduleBuilder(n, origin=ids % n, collective="alltoall", targets=ids // n,
                           message_bytes=message_bytes, meta={"algorithm": name})


def _add_group_bundles(builder, n, k, sd, senders, receivers, origin_pos, q_start, q_len, step):
    """Add the transfers that carry some groups of one bundle along a line.

    Transfers ``senders -> receivers`` carrying the groups for line positions
    ``q_start .. q_start + q_len - 1`` (mod ``k``) of the bundle that started at
    line position ``origin_pos``.  Message ids ``dst * n + src``: each destination
    contributes one range of ``sd`` sources.
    """
    keep = q_len > 0
    senders, receivers, origin_pos, q_start, q_len = (a[keep] for a in (senders, receivers, origin_pos, q_start, q_len))
    if len(senders) == 0:
        return
    prefixes = n // (k * sd)                     # values of the dimensions before d
    low = senders % sd                           # the sender's coordinates after d (dst keeps them)
    src_first = (senders // (k * sd)) * (k * sd) + origin_pos * sd
    per = q_len * prefixes
    t = np.repeat(np.arange(len(senders)), per)
    j = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    q = (q_start[t] + j // prefixes) % k
    a = j % prefixes
    dst = a * (k * sd) + q * sd + low[t]
    builder.add_ranges(senders, receivers, per, dst * n + src_first[t], sd, step=step)


def grid_alltoall(topology: Topology, message_bytes: float = 1.0) -> Schedule:
    """Plan the dimension-by-dimension personalized exchange on a ring, path, mesh or torus.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1.0
        Size of every node's message in bytes.

    Returns
    -------
    Schedule
        The transfers, step by step.

    Raises
    ------
    TopocastError
        On a network that is not a ring, path, mesh or torus.
    """
    sizes, wraps = grid_shape(topology)
    n = topology.num_nodes
    nodes = np.arange(n, dtype=np.int64)
    stride = strides(sizes)
    builder = _personalized(n, message_bytes, "grid total exchange")
    offset = 0
    for d in reversed(range(len(sizes))):
        k, wrap, sd = sizes[d], wraps[d], stride[d]
        pos = (nodes // sd) % k
        line_base = nodes - pos * sd
        for s in range(1, k):
            if wrap:
                # the bundle that started s-1 hops back holds groups for positions origin+s .. origin+k-1
                origin_pos = (pos - (s - 1)) % k
                _add_group_bundles(builder, n, k, sd, nodes, line_base + ((pos + 1) % k) * sd, origin_pos,
                                   (pos + 1) % k, np.full(n, k - s), offset + s - 1)
            else:
                right = pos - (s - 1) >= 0
                _add_group_bundles(builder, n, k, sd, nodes[right], nodes[right] + sd, pos[right] - (s - 1),
                                   pos[right] + 1, k - 1 - pos[right], offset + s - 1)
                left = pos + (s - 1) <= k - 1
                _add_group_bundles(builder, n, k, sd, nodes[left], nodes[left] - sd, pos[left] + (s - 1),
                                   np.zeros(int(left.sum()), dtype=np.int64), pos[left], offset + s - 1)
        offset += k - 1
    return builder.build()


def hypercube_alltoall(topology: Topology, message_bytes: float = 1.0) -> Schedule:
    """Plan the hypercube total exchange: dimension ``k`` in step ``k``, ``N/2`` messages per transfer.

    Parameters
    ----------
    topology : Topology
        The network.
    message_bytes : float, default 1.0
        Size of every node's message in bytes.

    Returns
    -------
    Schedule
        The transfers, step by step.
    """
    dims = topology.params["n"]
    n = topology.num_nodes
    nodes = np.arange(n, dtype=np.int64)
    builder = _personalized(n, message_bytes, "hypercube total exchange")
    for k in range(dims):
        per = 1 << (dims - k - 1)                # destinations: free bits above k
        t = np.repeat(nodes, per)
        high = np.tile(np.arange(per, dtype=np.int64), n)
        low_mask = (np.int64(1) << k) - 1
        dst = (high << (k + 1)) | ((~t >> k) & 1) << k | (t & low_mask)
        src_first = (t >> k) << k
        builder.add_ranges(nodes, nodes ^ (np.int64(1) << k), np.full(n, per), dst * n + src_first,
                           1 << k, step=k)
    return builder.build()


def grid_alltoall_time(topology: Topology, root: int, m: float, cost: CostModel) -> float:
    """Give the closed-form time of the grid personalized exchange.

    Parameters
    ----------
    topology : Topology
        The network.
    root : int
        The root (ignored by collectives without one).
    m : float
        Message size in bytes.
    cost : CostModel
        The cost model (``t_s``, ``t_w``, ``t_h``).

    Returns
    -------
    float
        The time in the cost model's units.
    """
    sizes, _ = grid_shape(topology)
    n = topology.num_nodes
    # step j of a dimension of size k forwards the (k - j) bundles of n/k messages still travelling
    return float(sum(cost.hop_time((n // k) * (k - j) * m) for k in sizes for j in range(1, k)))


def hypercube_alltoall_time(topology: Topology, root: int, m: float, cost: CostModel) -> float:
    """Give the closed-form time of the hypercube total exchange: ``log2 N (t_s + t_h + (N/2) m t_w)``.

    Parameters
    ----------
    topology : Topology
        The network.
    root : int
        The root (ignored by collectives without one).
    m : float
        Message size in bytes.
    cost : CostModel
        The cost model (``t_s``, ``t_w``, ``t_h``).

    Returns
    -------
    float
        The time in the cost model's units.
    """
    dims = topology.params["n"]
    return dims * cost.hop_time(topology.num_nodes / 2 * m)


register(
    "alltoall-ring", grid_alltoall, "alltoall",
    "total exchange on a ring: one bundle per node travels round, shrinking, N-1 steps",
    families=("ring",), aliases=("total-exchange-ring",), ports=PortModel.one_port(),
    paper="Grama et al. 4.5.1")
register(
    "alltoall-mesh", grid_alltoall, "alltoall",
    "total exchange on a mesh or torus: group by column, rows, regroup, columns",
    families=("mesh", "torus", "path"), aliases=("alltoall-torus", "total-exchange-mesh"),
    ports=PortModel.all_port(), paper="Grama et al. 4.5.2")
register(
    "alltoall-hypercube", hypercube_alltoall, "alltoall",
    "total exchange on a hypercube, one dimension per step, N/2 messages per transfer",
    families=("hypercube",), aliases=("total-exchange-hypercube",), ports=PortModel.one_port(),
    paper="Grama et al. 4.5.3")

CLOSED_FORMS = {
    "alltoall-ring": grid_alltoall_time,
    "alltoall-mesh": grid_alltoall_time,
    "alltoall-hypercube": hypercube_alltoall_time,
}
