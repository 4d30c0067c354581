"""How an algorithm runs on a degraded network: planned on the surviving graph, or planned for the intact one.

* A **fault-aware** algorithm (``Algorithm.fault_mode == "surviving"``: the generic
  collectives, which plan on whatever graph they are given) plans on the
  surviving graph.  When the healthy nodes do not form one connected network
  (a failed router is cut off, a cut splits the network) it plans on each
  component of healthy nodes that a message must cross (the root's for a
  broadcast, every one of two or more nodes for an all-gather or all-to-all),
  and the component plans are lifted back to the network's numbering and
  merged.  Its promise becomes *every healthy node connected to a message's
  origin receives it exactly once* (:func:`topocast.faults.loss.restrict`).
* A **native** algorithm (``fault_mode == "native"``) reads the faults of the degraded network it is
  given and plans around them (the EJ re-rooted broadcast chooses its root); any transfer it still makes
  over a failed part is dropped as below.
* Any other algorithm (a paper's or a textbook's, built for the intact
  network) plans on the intact network, and its transfers over failed links
  and routers are dropped (:func:`topocast.faults.loss.drop`): the result
  counts which healthy nodes miss which messages.

Either way the plan is an ordinary :class:`~topocast.plans.schedule.Schedule` on the
degraded topology, which the engine runs and the shared verifier checks.

>>> import topocast as tc
>>> r = tc.run("ring:8", "broadcast-bfs-tree", faults="links=2-3")
>>> r.verified, r.metrics["steps"], r.metrics["fault_mode"], r.metrics["deliveries_lost"]
(True, 5, 'surviving', 0)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import REDUCTIONS, Schedule, ScheduleBuilder
from ..topology.core import Topology
from .connectivity import components, healthy
from .loss import drop, restrict

#: how an algorithm runs on a degraded network (``Algorithm.fault_mode``)
MODES = ("intact", "surviving", "native")
#: the collectives a fault-aware plan is lifted for (their message numbering is known: see :func:`_message_map`)
LIFTED = ("broadcast", "allgather", "alltoall")


def induced(topology: Topology, nodes: np.ndarray) -> Topology:
    """The subgraph of ``topology`` on ``nodes`` (sorted), numbered ``0..len(nodes)-1`` in their order.

    >>> import topocast as tc
    >>> t = induced(tc.build("ring:6"), np.array([0, 1, 2]))
    >>> t.num_nodes, t.num_edges
    (3, 2)
    """
    local = np.full(topology.num_nodes, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    src, dst = local[topology.arc_sources], local[topology.indices]
    keep = (src >= 0) & (dst >= 0)
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(np.bincount(src[keep], minlength=len(nodes)), out=indptr[1:])
    meta = {"spec": f"{topology.spec} (a component of {len(nodes)} healthy nodes)"}
    return Topology(topology.family, dict(topology.params), indptr, dst[keep], topology.arc_labels[keep],
                    topology.label_names, vertex_transitive=False, meta=meta)


def _message_map(part: Schedule, nodes: np.ndarray, n: int, collective: str) -> np.ndarray:
    """Global message id of every message of a component's plan ``part`` (numbering of :func:`_frame`)."""
    origin = nodes[np.asarray(part.origin, dtype=np.int64)]
    if collective == "broadcast":
        return np.zeros(len(origin), dtype=np.int64)
    if collective == "allgather":
        if len(np.unique(origin)) != len(nodes) or len(origin) != len(nodes):
            raise TopocastError("faults: a fault-aware all-gather must send one message per node")
        return origin
    targets = part.targets
    if isinstance(targets, (str, tuple)):
        raise TopocastError("faults: a fault-aware all-to-all must name one target per message")
    return nodes[np.asarray(targets, dtype=np.int64)] * n + origin


def _frame(collective: str, n: int, root: int) -> tuple[np.ndarray, Any]:
    """``(origin, targets)`` of the whole network's collective: one message from ``root``; one per node;
    message ``d * n + s`` from ``s`` to ``d``."""
    if collective == "broadcast":
        return np.array([root], dtype=np.int64), "all"
    if collective == "allgather":
        return np.arange(n, dtype=np.int64), "all"
    ids = np.arange(n * n, dtype=np.int64)
    return ids % n, ids // n


def _lifted_ranges(part: Schedule, gid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per transfer of ``part`` its ranges of global ids: ``(ranges per transfer, first, count)``, runs of
    consecutive global ids merged."""
    count = np.asarray(part.range_count, dtype=np.int64)
    t_of_range = np.repeat(np.arange(part.num_transfers, dtype=np.int64), np.diff(part.range_ptr))
    total = int(count.sum())
    rng_of = np.repeat(np.arange(len(count), dtype=np.int64), count)
    start = np.zeros(len(count), dtype=np.int64)
    np.cumsum(count[:-1], out=start[1:])
    ids = gid[np.asarray(part.range_first, dtype=np.int64)[rng_of] + np.arange(total) - start[rng_of]]
    t = t_of_range[rng_of]
    order = np.lexsort((ids, t))
    ids, t = ids[order], t[order]
    new = np.ones(total, dtype=bool)
    new[1:] = (t[1:] != t[:-1]) | (ids[1:] != ids[:-1] + 1)
    heads = np.flatnonzero(new)
    first = ids[heads]
    run_count = np.diff(np.append(heads, total))
    return np.bincount(t[heads], minlength=part.num_transfers), first, run_count


def surviving_plan(topology: Topology, collective: str, plan_on: Callable[..., Schedule],
                   root: int | None = None) -> Schedule:
    """A fault-aware algorithm's plan on the surviving graph of ``topology``, lifted to its numbering.

    Parameters
    ----------
    topology : Topology
        The degraded network.
    collective : str
        ``broadcast``, ``allgather`` or ``alltoall``.
    plan_on : callable
        ``plan_on(network, root=None)`` -> the algorithm's plan on ``network`` (a root given for a broadcast).
    root : int, optional
        The broadcast's root (a healthy node).

    Returns
    -------
    Schedule
        The plan on ``topology``: every healthy component a message must cross planned on its own; the
        promise still the intact one (:func:`topocast.faults.loss.restrict` restricts it).
    """
    if collective not in LIFTED:
        raise TopocastError(f"faults: a fault-aware {collective} is not planned on the surviving graph yet")
    n = topology.num_nodes
    mask = healthy(topology)
    comp = components(topology)
    if collective == "broadcast":
        wanted = [int(comp[root])]
    else:
        sizes = np.bincount(comp[mask], minlength=int(comp.max()) + 1)
        wanted = np.flatnonzero(sizes >= 2).tolist()
    if len(wanted) == 1 and int(mask.sum()) == n and np.all(comp == wanted[0]):
        return plan_on(topology, root=root)  # one healthy, connected network: the plan as it is
    origin, targets = _frame(collective, n, 0 if root is None else root)
    parts = []
    for c in wanted:
        nodes = np.flatnonzero((comp == c) & mask)
        local_root = None if root is None else int(np.searchsorted(nodes, root))
        part = plan_on(induced(topology, nodes), root=local_root)
        parts.append((nodes, part))
    first_part = max(parts, key=lambda p: len(p[0]))[1] if parts else None
    builder = ScheduleBuilder(n, origin=origin, collective=collective, targets=targets,
                              message_bytes=first_part.message_bytes if first_part else 1.0,
                              meta=dict(first_part.meta) if first_part else {})
    offset = 0
    for nodes, part in parts:
        gid = _message_map(part, nodes, n, collective)
        nranges, first, count = _lifted_ranges(part, gid)
        after = None
        if part.after_ptr is not None:
            after = (np.asarray(part.after_ptr, dtype=np.int64), np.asarray(part.after_ids, dtype=np.int64) + offset)
        step = None if part.step is None else np.asarray(part.step, dtype=np.int64)
        builder.add_ranges(nodes[np.asarray(part.src)], nodes[np.asarray(part.dst)], nranges, first, count,
                           step=step, after=after)
        offset += part.num_transfers
    if not parts:  # no component of two or more healthy nodes: nothing moves
        builder.add_ranges(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                           np.zeros(0, np.int64), np.zeros(0, np.int64), step=0)
    plan = builder.build()
    info = dict(first_part.info) if first_part else {}
    info["components_planned"] = len(parts)
    return replace(plan, info=info, notes=tuple(first_part.notes) if first_part else ())


#: the promise of a reduction on a degraded network that still joins every router
PROMISE_REDUCTION = "every node ends with every node's contribution exactly once (the surviving links join them all)"


def check_reducible(topology: Topology, algorithm: str, mode: str) -> None:
    """Refuse a reduction where its promise cannot hold on ``topology``: one built for the intact network, or
    a network with a failed router or split in parts (the partial sums of each part are not verified yet)."""
    if mode != "surviving":
        raise TopocastError(f"faults: algorithm {algorithm} is a reduction built for the intact network; on a "
                            f"degraded network run allreduce-bfs-tree, allreduce-disjoint-trees or reduce-bfs-tree")
    failed = int(len(topology.failed_nodes))
    parts = len(np.unique(components(topology)[healthy(topology)]))
    if failed or parts > 1:
        raise TopocastError(f"faults: a reduction runs on a degraded network only while every router is healthy "
                            f"and the surviving links join them all; {topology.spec} with {topology.faults} has "
                            f"failed routers: {failed}, parts of healthy nodes: {parts} (per-part sums are not "
                            f"supported yet)")


def stamp_reduction(plan: Schedule, topology: Topology) -> Schedule:
    """A reduction planned on the surviving graph, with the faults and its (unchanged) promise in ``info``."""
    info = dict(plan.info)
    info.update({"faults": topology.faults, "fault_mode": "surviving", "fault_promise": PROMISE_REDUCTION,
                 "failed_routers": 0, "failed_links": int(topology.meta.get("failed_links", 0))})
    meta = dict(plan.meta)
    meta.update(faults=topology.faults, fault_mode="surviving")
    return replace(plan, info=info, meta=meta)


def reduction_plan(topology: Topology, algorithm: str, mode: str, plan_on: Callable[..., Any],
                   root: int | None = None) -> Schedule:
    """A reduction on a degraded network: a generic one (``surviving``) planned on the surviving graph while
    it still joins every router, its promise unchanged (:func:`check_reducible` refuses the rest)."""
    check_reducible(topology, algorithm, mode)
    plan = plan_on(topology, root=root)
    if not isinstance(plan, Schedule) or not plan.is_reduction:
        raise TopocastError(f"faults: algorithm {algorithm} makes no reduction schedule")
    return stamp_reduction(plan, topology)


def degraded_plan(topology: Topology, algorithm: str, collective: str, mode: str,
                  plan_on: Callable[..., Any], root: int | None = None) -> Schedule:
    """The plan an algorithm runs on the degraded ``topology`` (see the module docstring).

    Parameters
    ----------
    topology : Topology
        The degraded network (:func:`topocast.faults.degrade`).
    algorithm : str
        The algorithm's name, for messages.
    collective : str
        Its collective.
    mode : str
        ``surviving`` (it plans on any graph it is given: planned on the surviving graph), ``native`` (it
        plans on the degraded network itself, around its faults; any transfer it still makes over a failed
        part is dropped) or ``intact`` (built for the intact network: planned there, transfers over failed
        parts dropped).
    plan_on : callable
        ``plan_on(network, root=None)`` -> the algorithm's plan on ``network``.
    root : int, optional
        The root of a rooted collective (checked to be a healthy node).

    Returns
    -------
    Schedule
        A plan on ``topology`` whose ``targets`` are what it promises there; its ``info`` holds the loss
        (:meth:`topocast.faults.loss.Loss.as_info`) and the promise (``fault_promise``).

    Raises
    ------
    TopocastError
        A failed root, or a plan that is not a :class:`~topocast.plans.schedule.Schedule`.
    """
    if mode not in MODES:
        raise TopocastError(f"faults: algorithm {algorithm} declares fault mode '{mode}', not one of "
                            f"{', '.join(MODES)}")
    if root is not None and mode != "native" and not healthy(topology)[root]:
        raise TopocastError(f"root: node {root} is a failed router of {topology.spec} ({topology.faults}); "
                            f"choose a healthy root")
    if collective in REDUCTIONS:
        return reduction_plan(topology, algorithm, mode, plan_on, root)
    if mode == "surviving":
        plan = surviving_plan(topology, collective, plan_on, root)
    elif mode == "native":
        plan = plan_on(topology)
    else:
        plan = plan_on(topology.intact, root=root)
    if not isinstance(plan, Schedule):
        raise TopocastError(f"faults: algorithm {algorithm} makes a {type(plan).__name__}; faults run on the "
                            f"step and event engines (a Schedule) only")
    if plan.is_reduction:
        raise TopocastError(f"faults: algorithm {algorithm} is a reduction; reductions on a degraded network "
                            f"are not supported yet")
    degraded, _ = restrict(plan, topology) if mode == "surviving" else drop(plan, topology, mode)
    return degraded


__all__ = ["check_reducible", "degraded_plan", "induced", "reduction_plan", "stamp_reduction", "surviving_plan"]
