"""Lower bounds for each collective and port model, reported beside every result with the kind that binds.

Every bound holds on any topology; :func:`step_bound` and :func:`time_bound`
return a :class:`Bound` (value and the name of the binding bound, the
``lower_bound_kind`` metric).  Derivations: ``docs/bounds.md``.

Steps (synchronous rounds, one-hop transfers, messages may be combined):

* ``eccentricity`` (broadcast from ``r``): ``ecc(r)``; ``diameter``
  (all-gather, total exchange): ``D``; ``distance`` (multicast, unicast,
  custom): the largest origin-to-target distance.
* ``doubling`` (broadcast, all-gather, total exchange): ``ceil(log_{p+1} N)``,
  ``p`` the ports a node may use per step (one-port: ``ceil(log2 N)``;
  all-port: the largest degree).

Time (event engine, store-and-forward, ``t_s`` start-up, ``t_w`` per byte,
``t_h`` per hop, ``m`` bytes per message, ``tau = t_s + m t_w``):

* ``latency``: hops ``*`` ``(tau + t_h)`` (hops as for steps).
* ``doubling`` (broadcast, all-gather, total exchange): ``ceil(log_{p+1} N) tau + t_h``.
* ``injection`` (all-gather, total exchange): the largest over nodes ``v`` of
  ``t_s + t_h + m t_w max(R_v, S_v) / c_v`` where ``R_v`` (``S_v``) messages
  must enter (leave) ``v`` and ``c_v`` is its ports (``min(degree, ports)``);
  half duplex also ``(R_v + S_v) / degree``.
* ``cut`` (all-gather, total exchange): for a balanced cut ``(A, B)`` of ``c``
  links (:func:`topocast.topology.properties.best_cut`),
  ``t_s + t_h + m t_w max(X_AB, X_BA) / c`` where ``X_AB`` messages start in
  ``A`` and are needed in ``B`` (all-gather ``|A|``, total exchange
  ``|A||B|``); half duplex ``(X_AB + X_BA) / c``.

Reductions (allreduce, reduce-scatter, reduce; ``V`` the bytes of the whole vector, ``N`` nodes; every node
contributes to every byte):

* steps: ``diameter`` (allreduce, reduce-scatter) or ``eccentricity`` of the root (reduce), and ``doubling``:
  after ``k`` steps a partial holds at most ``(p+1)^k`` contributions (``p`` receive ports), so
  ``ceil(log_{p+1} N)``.
* ``latency`` and ``doubling`` in time as above.
* ``gossip``: every byte of an allreduce is a one-way gossip among ``N`` nodes, which needs ``2(N-1)``
  transmissions (Baker and Shostak 1972; the bandwidth term ``2 (N-1)/N V t_w`` of Patarasuk and Yuan 2009
  on one port); a reduce-scatter or reduce needs ``N-1`` (a spanning tree per byte).  The bytes received,
  ``2(N-1) V`` (``(N-1) V``), spread over every node's receive ports:
  ``t_s + t_h + 2(N-1) V t_w / sum_v c_v``.
* ``injection``: node ``v`` must send every byte others need from it and receive every byte it needs
  (allreduce: ``V`` out and ``V`` in; reduce-scatter: ``V - V_v`` out, ``V_v`` in; reduce: ``V`` out of
  every other node, ``V`` into the root), over its ``c_v`` ports.
* ``cut``: across a balanced cut ``(A, B)`` of ``c`` links, an allreduce moves every byte each way (``V`` per
  direction), a reduce-scatter the bytes owned on the far side, a reduce the whole vector toward the root.
* ``compute``: every byte needs ``N - 1`` additions somewhere, spread at best over ``N`` nodes:
  ``(N-1)/N V gamma`` (``per_byte_reduce``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np

from ..errors import TopocastError
from ..plans.frontier import FrontierPlan
from ..plans.schedule import REDUCTIONS, Schedule
from ..sim.models import CostModel, PortModel
from ..topology.core import Topology
from ..topology.metrics import bfs_distances, diameter

#: collectives with the doubling bound (every node ends knowing something from every node, or the reverse)
SPREADING = ("broadcast", "allgather", "alltoall")
#: collectives with the injection and cut bounds
HEAVY = ("allgather", "alltoall")
#: the cut bound's bisection is looked for up to this many nodes (METIS; cached per topology)
CUT_MAX_NODES = 200_000


@dataclass(frozen=True)
class Bound:
    """A lower bound, the name of the bound that gives it (``lower_bound_kind``) and its witness (what a reader
    needs to re-check it: the cut's node set, the release bound's node and distance, ...)."""

    value: float
    kind: str
    witness: dict[str, Any] = field(default_factory=dict, compare=False)


def _binding(candidates: Sequence[tuple[str, float]]) -> Bound:
    """The largest candidate; on a tie the first listed."""
    kind, value = max(candidates, key=lambda c: c[1])
    return Bound(value, kind)


def _ports(topology: Topology, ports: PortModel, smallest: bool) -> int:
    degree = topology.port_degree
    p = int(degree.min() if smallest else degree.max())
    return p if ports.ports is None else min(p, ports.ports)


def _doubling(n: int, p: int) -> int:
    if n <= 1:
        return 0
    return math.ceil(math.log(n) / math.log(p + 1) - 1e-12)


def contributors_only(schedule: Schedule | FrontierPlan) -> TypeGuard[Schedule]:
    """Whether a reduction sums over some nodes only (``schedule.part``; taken part by part first when the
    network is in parts, :func:`part_problems`)."""
    return isinstance(schedule, Schedule) and schedule.is_reduction and schedule.part is not None


def hop_bound(topology: Topology, schedule: Schedule | FrontierPlan) -> int:
    """Hops the farthest required delivery must travel."""
    if schedule.collective == "broadcast":
        return int(bfs_distances(topology, int(schedule.origin[0])).max())
    if isinstance(schedule, FrontierPlan):  # its message (each of them, under symmetry) must reach every node
        return diameter(topology)
    if contributors_only(schedule):   # the rest relay
        joined = members(topology, schedule)
        if schedule.collective == "reduce":
            return int(bfs_distances(topology, int(schedule.targets[0]))[joined].max())
        # the farthest two contributors, from as many of them as a budget of arc visits allows
        probes = joined[:max(1, min(len(joined), MEMBER_PROBES // max(1, topology.num_arcs)))]
        return max(int(bfs_distances(topology, int(v))[joined].max()) for v in probes)
    if schedule.collective == "reduce":
        return int(bfs_distances(topology, int(schedule.targets[0])).max())
    if schedule.collective in ("allreduce", "reduce-scatter"):
        return diameter(topology)
    if schedule.collective in HEAVY and isinstance(getattr(schedule, "targets", "all"), str):
        return diameter(topology)
    return farthest_pair(topology, schedule)


def spread_size(topology: Topology, schedule: Schedule | FrontierPlan) -> int:
    """The most nodes one message must end on (its origin counted): every node, or for targets given as a
    CSR pair (a multicast, a collective restricted to the healthy nodes of a degraded network) the largest
    target set; what the doubling bound counts."""
    if contributors_only(schedule):
        return int(len(members(topology, schedule)))
    if isinstance(schedule, FrontierPlan) or not isinstance(schedule.targets, tuple):  # every node
        return topology.num_nodes
    ptr, ids = schedule.targets
    if not schedule.num_messages:
        return 1
    msg = np.repeat(np.arange(schedule.num_messages), np.diff(ptr))
    others = np.bincount(msg[ids != schedule.origin[msg]], minlength=schedule.num_messages)
    return int(others.max()) + 1


def hop_kind(schedule: Schedule | FrontierPlan) -> str:
    """The name of :func:`hop_bound` for this collective."""
    if contributors_only(schedule):
        return "distance"
    if schedule.collective in HEAVY and not isinstance(getattr(schedule, "targets", "all"), str):
        return "distance"
    return {"broadcast": "eccentricity", "allgather": "diameter", "alltoall": "diameter", "allreduce": "diameter",
            "reduce-scatter": "diameter", "reduce": "eccentricity"}.get(schedule.collective, "distance")


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


# -- steps --------------------------------------------------------------------------------------
def step_bound(topology: Topology, schedule: Schedule | FrontierPlan, ports: PortModel) -> Bound:
    """Steps: the hop bound and, for broadcast, all-gather and total exchange, the doubling bound."""
    if isinstance(schedule, Schedule) and _in_parts(topology, schedule):
        return _largest([step_bound(net, sub, ports) for net, sub in part_problems(topology, schedule)])
    candidates: list[tuple[str, float]] = [(hop_kind(schedule), hop_bound(topology, schedule))]
    if schedule.collective in SPREADING or schedule.collective in REDUCTIONS:
        ports_used = _ports(topology, ports, smallest=False)
        candidates.append(("doubling", _doubling(spread_size(topology, schedule), ports_used)))
    return _binding(candidates)


def step_lower_bound(topology: Topology, schedule: Schedule | FrontierPlan, ports: PortModel) -> int:
    return int(step_bound(topology, schedule, ports).value)


# -- time (event engine) --------------------------------------------------------------------------
def time_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> Bound:
    """Time: what no schedule of this collective (messages split or not) can beat under this model; the
    largest of the bounds of ``docs/bounds.md`` binds, with its witness."""
    if _in_parts(topology, schedule):
        return _largest([time_bound(net, sub, cost, ports) for net, sub in part_problems(topology, schedule)])
    if schedule.is_reduction:
        m = schedule.message_bytes
        candidates = [("latency", hop_bound(topology, schedule) * cost.hop_time(m))]
        return _binding(candidates + reduction_bounds(topology, schedule, cost, ports))
    return _best(time_bounds(topology, schedule, cost, ports))


#: arc visits the contributors' farthest pair may take (one breadth-first search per contributor probed)
MEMBER_PROBES = 20_000_000


def _in_parts(topology: Topology, schedule: Schedule) -> bool:
    """Whether a reduction's bounds are taken part by part: its network is in parts (``schedule.part``) other
    than one part of contributors on one connected network (bounded as it is, :func:`members`)."""
    if schedule.part is None:
        return False
    from ..faults.connectivity import components

    part = np.asarray(schedule.part)
    return bool(len(np.unique(part[part >= 0])) != 1 or len(np.unique(components(topology))) != 1)


def members(topology: Topology, schedule: Schedule) -> np.ndarray:
    """The nodes that contribute to a reduction (every node, or those of ``schedule.part`` >= 0)."""
    if schedule.part is None:
        return np.arange(topology.num_nodes)
    return np.flatnonzero(np.asarray(schedule.part) >= 0)


def part_problems(topology: Topology, schedule: Schedule) -> list[tuple[Topology, Schedule]]:
    """A reduction on a network in parts (``schedule.part``) as one reduction per part that must hold a sum:
    the connected piece of the network its nodes lie in (its nodes in their order; nodes of no part on it, a
    fat tree's switches, relay and are marked so) and a schedule of no transfers naming what is required
    there (every block of an allreduce; the blocks owned in the part, for a reduce-scatter or a reduce).
    A part of one node has nothing to move and is left out."""
    from ..faults.connectivity import components, induced

    part = np.asarray(schedule.part, dtype=np.int64)
    comp = components(topology)
    owners = None if isinstance(schedule.targets, str) else np.asarray(schedule.targets, dtype=np.int64)
    out = []
    for p in np.unique(part[part >= 0]).tolist():
        inside = part == p
        for c in np.unique(comp[inside]).tolist():
            mine = inside & (comp == c)
            if np.count_nonzero(mine) < 2:
                continue
            nodes = np.flatnonzero(comp == c)
            local = np.full(schedule.num_nodes, -1, dtype=np.int64)
            local[nodes] = np.arange(len(nodes))
            targets: Any = "all"
            m = schedule.num_messages
            if owners is not None:
                kept = mine[owners]
                if not kept.any():
                    continue
                targets, m = local[owners[kept]], int(np.count_nonzero(kept))
            empty = np.zeros(0, dtype=np.int64)
            mask = None if mine[nodes].all() else np.where(mine[nodes], 0, -1).astype(np.int64)
            sub = Schedule(len(nodes), np.zeros(m, dtype=np.int64) if isinstance(targets, str) else targets,
                           empty, empty, np.zeros(1, dtype=np.int64), empty, empty, collective=schedule.collective,
                           targets=targets, step=empty, message_bytes=schedule.message_bytes,
                           combine=np.zeros(0, dtype=bool), part=mask)
            out.append((induced(topology, nodes), sub))
    return out


def _largest(bounds: list[Bound]) -> Bound:
    """The largest of the parts' bounds (0 steps or seconds when no part has anything to move)."""
    return _best(bounds) if bounds else Bound(0.0, "nothing to move")


def _best(bounds: list[Bound]) -> Bound:
    """The largest bound; on a tie the first listed."""
    best = bounds[0]
    for b in bounds[1:]:
        if b.value > best.value:
            best = b
    return best


def payload(schedule: Schedule) -> float:
    """Bytes each origin sends (broadcast, all-gather) or each ordered pair exchanges (total exchange), however
    the schedule splits them into messages."""
    n = schedule.num_nodes
    if schedule.collective == "broadcast":
        return schedule.num_messages * schedule.message_bytes
    if schedule.collective == "allgather":
        return schedule.num_messages * schedule.message_bytes / max(n, 1)
    msg, _ = _flows(schedule)
    return len(msg) * schedule.message_bytes / max(n * (n - 1), 1)


def time_bounds(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> list[Bound]:
    """Every time bound of a broadcast, all-gather, total exchange or other non-reduction schedule, first the
    latency.  Each holds for any schedule of the collective, whatever its chunking."""
    n = topology.num_nodes
    ts, th = cost.startup, cost.per_hop
    if schedule.collective not in SPREADING or n < 2:
        hops = hop_bound(topology, schedule)
        c = float(_port_counts(topology, ports).max()) if n > 1 else 1.0
        return [Bound(hops * (ts + th) + (schedule.message_bytes * cost.per_byte / c if hops else 0.0),
                      "latency", {"hops": hops})]
    b = payload(schedule)
    hops = hop_bound(topology, schedule)
    out = [Bound(hops * (ts + th), "latency", {"hops": hops})]
    out.append(doubling_bound(topology, schedule, cost, ports, b))
    if schedule.collective == "allgather" and ports.ports == 1:
        k = spread_size(topology, schedule)
        out.append(Bound(_doubling(k, 1) * ts + (k - 1) * b * cost.per_byte + th, "one-port",
                         {"rounds": _doubling(k, 1)}))
    if schedule.collective in HEAVY:
        out.append(Bound(injection_bound(topology, schedule, cost, ports), "injection"))
        cut = cut_certificate(topology, schedule, cost, ports)
        if cut is not None:
            out.append(cut)
    if schedule.collective == "alltoall":
        with contextlib.suppress(TopocastError):  # a network not connected (degraded): no distance distribution
            out.append(total_hops_bound(topology, cost, ports, b))
    try:
        release = release_bound(topology, schedule, cost, ports, b)
    except TopocastError:  # a network that is not connected: no distance profile, no release bound
        release = None
    if release is not None:
        out.append(release)
    return out


def doubling_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel, b: float) -> Bound:
    """``ceil(log_{p+1} N) t_s + t_h``; broadcast adds ``B t_w / c`` (the node reached last still receives the
    whole message over at most ``c`` ports, ``c`` the most any node has)."""
    p = _ports(topology, ports, smallest=False)
    rounds = _doubling(spread_size(topology, schedule), p)
    if rounds == 0:  # no message must leave its origin (a root cut off on a degraded network): nothing to move
        return Bound(0.0, "doubling", {"rounds": 0, "ports": p})
    extra = b * cost.per_byte / p if schedule.collective == "broadcast" else 0.0
    return Bound(rounds * cost.startup + extra + cost.per_hop, "doubling", {"rounds": rounds, "ports": p})


#: the release bound looks at every node up to this many (node x arc) visits of breadth-first search, else at
#: the nodes with the fewest ports and a spread of others
RELEASE_WORK = 5e7
RELEASE_SAMPLE = 64


def _release_nodes(topology: Topology, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes, weight)``: nodes whose distance profile the release bound reads (orbit representatives)."""
    from ..topology.metrics import orbits

    reps, _ = orbits(topology)
    if len(reps) * float(topology.num_nodes + topology.num_arcs) <= RELEASE_WORK:
        return reps, np.ones(len(reps))
    fewest = np.flatnonzero(c == c.min())[:RELEASE_SAMPLE // 2]
    spread = np.linspace(0, topology.num_nodes - 1, RELEASE_SAMPLE // 2).astype(np.int64)
    return np.unique(np.concatenate([fewest, spread])), np.ones(1)


def release_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel, b: float
                  ) -> Bound | None:
    """``max over v, k of k (t_s + t_h) + n_k(v) B t_w / c_v``: the ``n_k(v)`` origins at distance ``>= k``
    from ``v`` cannot reach a neighbour of ``v`` in fewer than ``k - 1`` hops (each at least ``t_s + t_h``),
    and then their ``n_k(v) B`` bytes share ``v``'s ``c_v`` in-ports.  Broadcast: ``v`` at distance ``d``
    from the root, ``d (t_s + t_h) + B t_w / c_v``, and the root's own out-ports with its eccentricity."""
    from ..topology.metrics import _profile, bfs_distances

    c = _port_counts(topology, ports)
    ts, tw, th = cost.startup, cost.per_byte, cost.per_hop
    if schedule.collective == "broadcast":
        root = int(schedule.origin[0])
        dist = bfs_distances(topology, root).astype(np.float64)
        values = dist * (ts + th) + b * tw / c
        values[dist <= 0] = 0.0  # the root, and nodes it cannot reach (a degraded network): nothing to receive
        v = int(np.argmax(values))
        best = Bound(float(values[v]), "release", {"node": v, "distance": int(dist[v])})
        out_root = dist.max() * (ts + th) + b * tw / c[root]
        if dist.max() > 0 and out_root > best.value:
            best = Bound(float(out_root), "release", {"node": root, "distance": int(dist.max()), "side": "send"})
        return best
    nodes, _ = _release_nodes(topology, c)
    _, hist = _profile(topology, nodes)
    beyond = np.cumsum(hist[:, ::-1], axis=1)[:, ::-1]   # beyond[i, k] = nodes at distance >= k from nodes[i]
    k = np.arange(hist.shape[1], dtype=np.float64)
    values = k[None, 1:] * (ts + th) + beyond[:, 1:] * b * tw / c[nodes][:, None]
    values[beyond[:, 1:] == 0] = 0.0
    i, j = np.unravel_index(int(np.argmax(values)), values.shape)
    return Bound(float(values[i, j]), "release", {"node": int(nodes[i]), "distance": int(j + 1),
                                                   "origins_beyond": int(beyond[i, j + 1])})


def total_hops_bound(topology: Topology, cost: CostModel, ports: PortModel, b: float) -> Bound:
    """Total exchange: every pair's ``B`` bytes cross at least their distance in links, and at most
    ``min(channels, sum_v c_v)`` transfers run at once: ``t_s + t_h + B t_w sum d(u, v) / that``."""
    from ..topology.metrics import distance_distribution

    counts = distance_distribution(topology)
    hops = float(np.dot(np.arange(len(counts)), counts))
    channels = topology.num_arcs if ports.duplex == "full" else topology.num_edges
    lanes = min(float(channels), float(_port_counts(topology, ports).sum()))
    return Bound(cost.startup + cost.per_hop + b * cost.per_byte * hops / lanes, "total-hops",
                 {"pair_hops": int(hops), "lanes": int(lanes)})


def unsplit_bounds(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> list[Bound]:
    """Bounds for schedules that send each of their messages whole (no message split into chunks): latency
    ``hops (t_s + m t_w + t_h)`` and doubling ``ceil(log_{p+1} N) (t_s + m t_w) + t_h``."""
    m = schedule.message_bytes
    out = [Bound(hop_bound(topology, schedule) * cost.hop_time(m), "unsplit-latency")]
    if schedule.collective in SPREADING and topology.num_nodes > 1:
        p = _ports(topology, ports, smallest=False)
        out.append(Bound(_doubling(spread_size(topology, schedule), p) * cost.transfer_time(m) + cost.per_hop,
                         "unsplit-doubling"))
    return out


def time_lower_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> float:
    return float(time_bound(topology, schedule, cost, ports).value)


def _flows(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(msg, target)`` pairs of every required delivery to a node other than the message's origin."""
    ptr, ids = schedule.target_csr()
    msg = np.repeat(np.arange(schedule.num_messages), np.diff(ptr))
    keep = schedule.origin[msg] != ids
    return msg[keep], ids[keep]


def _in_out(schedule: Schedule, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Messages that must enter (``R_v``) and leave (``S_v``) each node."""
    own = np.bincount(schedule.origin, minlength=n)
    if isinstance(schedule.targets, str):  # every node needs every message
        return schedule.num_messages - own, own if n > 1 else np.zeros(n, np.int64)
    msg, target = _flows(schedule)
    leaving = np.unique(msg)
    return np.bincount(target, minlength=n), np.bincount(schedule.origin[leaving], minlength=n)


def injection_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> float:
    """``t_s + t_h + m t_w`` times the most messages per port any node must take in or send out."""
    n = topology.num_nodes
    r, s = _in_out(schedule, n)
    degree = np.maximum(topology.port_degree, 1)
    c = degree if ports.ports is None else np.minimum(degree, ports.ports)
    load = np.maximum(r, s) / c
    if ports.duplex == "half":
        load = np.maximum(load, (r + s) / degree)
    return cost.hop_time(float(load.max()) * schedule.message_bytes)


def _crossing(schedule: Schedule, side: np.ndarray) -> tuple[int, int]:
    """Messages that start on side 0 and are needed on side 1, and the reverse."""
    if isinstance(schedule.targets, str):
        start = side[schedule.origin]
        return int(np.count_nonzero(start == 0)), int(np.count_nonzero(start == 1))
    msg, target = _flows(schedule)
    cross = side[schedule.origin[msg]] != side[target]
    pairs = np.unique(msg[cross])
    start = side[schedule.origin[pairs]]
    return int(np.count_nonzero(start == 0)), int(np.count_nonzero(start == 1))


def cut_bound(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> float | None:
    """``t_s + t_h + m t_w`` times the messages that must cross a balanced cut per link (``None``: no cut)."""
    cut = cut_certificate(topology, schedule, cost, ports)
    return None if cut is None else cut.value


def cut_certificate(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel) -> Bound | None:
    """:func:`cut_bound` with its witness: the nodes of one side, the links cut and how the cut was found."""
    from ..topology.properties import best_cut

    if topology.num_nodes > CUT_MAX_NODES:
        return None
    links, side, method = best_cut(topology)
    if links == 0:
        return None
    ab, ba = _crossing(schedule, side)
    load = (ab + ba if ports.duplex == "half" else max(ab, ba)) / links
    return Bound(cost.hop_time(load * schedule.message_bytes), "cut",
                 {"links": int(links), "method": method, "side": np.flatnonzero(side == 0).tolist()})


# -- reductions -----------------------------------------------------------------------------------------
def reduction_bounds(topology: Topology, schedule: Schedule, cost: CostModel, ports: PortModel
                     ) -> list[tuple[str, float]]:
    """The time bounds of a reduction beside ``latency``: doubling, gossip, injection, cut and compute.  With
    contributors only (``schedule.part``: the others relay, and may add partials on the way, as a fat tree's
    switches do) the doubling and injection bounds count the contributors, the additions are spread over
    every node, and the gossip and cut bounds are left out (a relay that adds saves transmissions)."""
    n = topology.num_nodes
    joined = members(topology, schedule)
    k = len(joined)
    vector = schedule.message_bytes * schedule.num_messages
    ports_in = _port_counts(topology, ports)
    out = [("doubling", _doubling(k, int(ports_in.max())) * cost.transfer_time(schedule.message_bytes)
            + cost.per_hop)]
    if k == n:  # with relays that may add partials on the way (a fat tree's switches) the count does not hold
        spread = 2 * (k - 1) if schedule.collective == "allreduce" else k - 1
        out.append(("gossip", cost.startup + cost.per_hop + spread * vector * cost.per_byte
                    / float(ports_in.sum())))
    send, recv = _reduction_in_out(schedule, n, vector)
    if k < n:
        outside = np.ones(n, dtype=bool)
        outside[joined] = False
        send[outside], recv[outside] = 0.0, 0.0
    load = np.maximum(send, recv) / ports_in
    if ports.duplex == "half":
        load = np.maximum(load, (send + recv) / np.maximum(topology.port_degree, 1))
    out.append(("injection", cost.startup + cost.per_hop + float(load.max()) * cost.per_byte))
    cut = _reduction_cut(topology, schedule, vector, ports) if k == n else None
    if cut is not None:
        out.append(("cut", cost.startup + cost.per_hop + cut * cost.per_byte))
    gamma = getattr(cost, "per_byte_reduce", 0.0)
    if gamma:  # k - 1 additions per byte, spread over every node that may add (relays too)
        out.append(("compute", (k - 1) / n * vector * gamma))
    return out


def _port_counts(topology: Topology, ports: PortModel) -> np.ndarray:
    degree = np.maximum(topology.port_degree, 1).astype(np.float64)
    counts: np.ndarray = degree if ports.ports is None else np.minimum(degree, ports.ports)
    return counts


def _reduction_in_out(schedule: Schedule, n: int, vector: float) -> tuple[np.ndarray, np.ndarray]:
    """Bytes each node must send and receive at least."""
    if schedule.collective == "allreduce":
        return np.full(n, vector), np.full(n, vector)
    owned = np.bincount(np.asarray(schedule.targets, dtype=np.int64), minlength=n) * schedule.message_bytes
    if schedule.collective == "reduce-scatter":
        return vector - owned, owned
    send = np.full(n, vector)
    send[owned > 0] = 0.0
    return send, owned.astype(np.float64)


def _reduction_cut(topology: Topology, schedule: Schedule, vector: float, ports: PortModel) -> float | None:
    """Bytes per link that must cross a balanced cut (in the busier direction; both, half duplex)."""
    from ..topology.properties import best_cut

    if topology.num_nodes > CUT_MAX_NODES:
        return None
    links, side, _ = best_cut(topology)
    if links == 0:
        return None
    if schedule.collective == "allreduce":
        ab = ba = vector
    else:
        owner_side = side[np.asarray(schedule.targets, dtype=np.int64)]
        ab = float(np.count_nonzero(owner_side == 1)) * schedule.message_bytes
        ba = float(np.count_nonzero(owner_side == 0)) * schedule.message_bytes
    return (ab + ba if ports.duplex == "half" else max(ab, ba)) / links


__all__ = ["Bound", "cut_bound", "cut_certificate", "payload", "release_bound", "time_bounds",
           "total_hops_bound", "unsplit_bounds", "farthest_pair", "hop_bound", "injection_bound", "step_bound",
           "step_lower_bound", "time_bound", "time_lower_bound"]
