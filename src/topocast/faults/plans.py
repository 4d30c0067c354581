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

Reductions follow the same modes: a fault-aware one is planned on each healthy part that must hold a sum
and lifted (:func:`reduction_plan`; each node's sum is then its own part's, ``Schedule.part``); one built
for the intact network has its transfers over failed parts dropped and its loss counted by a lossy check
(:func:`dropped_reduction`).

Either way the plan is an ordinary :class:`~topocast.plans.schedule.Schedule` on the
degraded topology, which the engine runs and the shared verifier checks.

>>> import topocast as tc
>>> r = tc.run("ring:8", "broadcast-bfs-tree", faults="links=2-3")
>>> r.verified, r.metrics["steps"], r.metrics["fault_mode"], r.metrics["deliveries_lost"]
(True, 5, 'surviving', 0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import REDUCTIONS, Schedule, ScheduleBuilder
from ..topology.core import Topology
from .connectivity import components, healthy, induced, reduction_parts
from .loss import drop, link_ok, restrict

#: how an algorithm runs on a degraded network (``Algorithm.fault_mode``)
MODES = ("intact", "surviving", "native")
#: the collectives a fault-aware plan is lifted for (their message numbering is known: see :func:`_message_map`)
LIFTED = ("broadcast", "allgather", "alltoall")


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


def _lifted_ranges(part: Schedule, gid: np.ndarray, width: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per transfer of ``part`` its ranges of global ids: ``(ranges per transfer, first, count)``, runs of
    consecutive global ids merged; with ``width``, message ``i`` of ``part`` is the global ids
    ``gid[i] .. gid[i] + width - 1``."""
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
    new[1:] = (t[1:] != t[:-1]) | (ids[1:] != ids[:-1] + width)
    heads = np.flatnonzero(new)
    first = ids[heads]
    run_count = np.diff(np.append(heads, total)) * width
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
#: ... and on one in parts (failed routers, or cut links that split the healthy nodes)
PROMISE_PARTS = ("every healthy node that must hold a sum ends with the contribution of every healthy node of its "
                 "part (those the surviving links join it to) exactly once")


#: ... and of a reduction built for the intact network, its transfers over failed parts dropped
PROMISE_DROPPED = ("no contribution is counted twice or read before it arrives; each required (node, block) holds "
                   "what the surviving transfers bring it, and what it misses of its part's sum is counted as lost")


def check_reducible(topology: Topology, algorithm: str, mode: str) -> None:
    """Refuse a reduction on a degraded ``topology`` that is neither planned on the surviving graph nor built
    for the intact network (a ``native`` reduction: none is registered)."""
    if mode not in ("surviving", "intact"):
        raise TopocastError(f"faults: algorithm {algorithm} is a {mode} reduction; on a degraded network run "
                            f"allreduce-bfs-tree, allreduce-disjoint-trees or reduce-bfs-tree")


def dropped_reduction(plan: Schedule, topology: Topology) -> Schedule:
    """A reduction planned for the intact network, run on the degraded ``topology``: every transfer over a
    failed link or router is dropped (with every hop of a relay chain one of whose hops is), the others run
    as planned, carrying whatever partial their sender then holds.  Failed routers contribute nothing; each
    required (node, block) is checked against its part's sum by a lossy check (a shortfall is the loss,
    ``contributions_lost``; a contribution counted twice or read early is still a violation)."""
    if plan.step is None:
        raise TopocastError("faults: a reduction for the intact network runs on a degraded one in step order "
                            "only; this plan orders its transfers by dependencies")
    ok = link_ok(plan, topology)
    if plan.forward is not None:                 # a relay chain goes whole or not at all
        chain = np.arange(plan.num_transfers)
        hops = np.flatnonzero(plan.forward >= 0)
        for _ in range(plan.num_transfers):
            moved = chain[plan.forward[hops]] != chain[hops]
            if not moved.any():
                break
            chain[hops] = chain[plan.forward[hops]]
        broken = np.unique(chain[~ok])
        ok &= ~np.isin(chain, broken)
    kept = plan.subset(np.flatnonzero(ok))
    stamped = stamp_reduction(kept, topology)
    info = dict(stamped.info)
    info.update(fault_mode="intact", fault_promise=PROMISE_DROPPED,
                transfers_dropped=int(plan.num_transfers - kept.num_transfers))
    meta = dict(stamped.meta)
    meta.update(fault_mode="intact")
    return replace(stamped, info=info, meta=meta)


def reduction_pieces(topology: Topology, collective: str, root: int) -> list[np.ndarray]:
    """The healthy parts a reduction is planned on, as sorted node arrays: the root's for a reduce, every one of
    two or more nodes otherwise (a healthy node alone holds its part's sum from the start)."""
    part = reduction_parts(topology)
    if collective == "reduce":
        return [np.flatnonzero(part == part[root])]
    sizes = np.bincount(part[part >= 0], minlength=int(part.max(initial=-1)) + 1)
    return [np.flatnonzero(part == p) for p in np.flatnonzero(sizes >= 2).tolist()]


def joint_parts(plan_part: np.ndarray | None, topology: Topology) -> np.ndarray:
    """The parts of a reduction on a degraded network: a node's part is its healthy component and, when the
    plan has parts of its own (contributors only, say a fat tree's processors), its part there; -1 for a
    failed router or a node the plan takes no part from."""
    part = reduction_parts(topology)
    if plan_part is None:
        return part
    plan_part = np.asarray(plan_part, dtype=np.int64)
    both = (part >= 0) & (plan_part >= 0)
    out = np.full(len(part), -1, dtype=np.int64)
    key = plan_part[both] * (int(part.max(initial=0)) + 1) + part[both]
    out[both] = np.unique(key, return_inverse=True)[1]
    return out


def stamp_reduction(plan: Schedule, topology: Topology) -> Schedule:
    """A reduction planned on the surviving graph of ``topology``: its parts (:attr:`Schedule.part`, when the
    healthy nodes are not one connected network), the faults, the promise and what is out of reach in ``info``."""
    part = joint_parts(plan.part, topology)
    healthy_nodes = int(np.count_nonzero(part >= 0))
    sizes = np.bincount(part[part >= 0], minlength=int(part.max(initial=-1)) + 1)
    split = bool(len(sizes) > 1 or healthy_nodes < len(part))
    need = np.flatnonzero(part >= 0) if isinstance(plan.targets, str) else \
        np.unique(np.asarray(plan.targets, dtype=np.int64))
    need = need[part[need] >= 0]
    info = dict(plan.info)
    info.update({"faults": topology.faults, "fault_mode": "surviving",
                 "fault_promise": PROMISE_PARTS if split else PROMISE_REDUCTION,
                 "failed_routers": int(len(topology.failed_nodes)),
                 "failed_links": int(topology.meta.get("failed_links", 0)), "parts": int(np.count_nonzero(sizes)),
                 # per node that must hold a sum, the healthy contributors whose contributions it cannot get
                 "contributions_out_of_reach": int((healthy_nodes - sizes[part[need]]).sum())})
    meta = dict(plan.meta)
    meta.update(faults=topology.faults, fault_mode="surviving")
    return replace(plan, info=info, meta=meta, part=part if split else None)


#: the most blocks a reduction lifted from parts that cut the vector differently may be refined into
MAX_REFINED_BLOCKS = 1 << 16


def lift_reduction(topology: Topology, collective: str, pieces: list[tuple[np.ndarray, Schedule]]) -> Schedule:
    """One reduction schedule on ``topology`` from the schedules of its parts (each on the part's nodes,
    numbered in their order), run side by side.

    Nodes are renumbered.  Each part reduces the whole vector (a reduce-scatter: the blocks of its own nodes,
    ``len(nodes) / N`` of the vector, so that node ``j`` ends with block ``j`` of its part's sum).  Parts may
    cut the vector differently (a part of 4 nodes in 4 blocks, one of 2 in
    2): the lifted vector is cut into the least common multiple of their block counts (per node, for a
    reduce-scatter, whose blocks go to their owner's global blocks), and a part's block is the run of global
    blocks it covers, so every transfer moves the bytes it moved in its part.
    """
    n = topology.num_nodes
    scatter = collective == "reduce-scatter"
    counts = [part.num_messages // max(1, part.num_nodes) if scatter else part.num_messages for _, part in pieces]
    if min(counts) < 1:
        raise TopocastError("faults: a part of this reduction moves no block")
    blocks = math.lcm(*counts)
    if blocks * (n if scatter else 1) > MAX_REFINED_BLOCKS:
        raise TopocastError(f"faults: the parts of this reduction cut the vector into {sorted(set(counts))} blocks"
                            f"{' per node' if scatter else ''}; a common cut needs {blocks}; give --set chunks=")
    block_bytes = {part.message_bytes / (blocks // count) for (_, part), count in zip(pieces, counts, strict=True)}
    if max(block_bytes) > min(block_bytes) * (1 + 1e-9):
        raise TopocastError("faults: the parts of this reduction move blocks of different sizes (each part's "
                            "vector must be the whole vector, or for a reduce-scatter its nodes' share of it)")
    big = max(pieces, key=lambda p: len(p[0]))[1]
    if scatter:
        targets: Any = np.repeat(np.arange(n, dtype=np.int64), blocks)
        origin = targets.copy()
    elif collective == "reduce":
        nodes, part = pieces[0]
        targets = np.full(blocks, nodes[int(np.asarray(part.targets)[0])], dtype=np.int64)
        origin = targets.copy()
    else:
        targets, origin = "all", np.full(blocks, pieces[0][0][int(pieces[0][1].origin[0])], dtype=np.int64)
    cat: dict[str, list[np.ndarray]] = {k: [] for k in ("src", "dst", "nranges", "first", "count", "step",
                                                         "combine", "forward", "after_len", "after_ids")}
    offset = 0
    for (nodes, part), count in zip(pieces, counts, strict=True):
        width = blocks // count
        nranges, first_ids, run = _lifted_ranges(part, _reduction_blocks(part, nodes, scatter, count, blocks),
                                                 width)
        for key, value in (("src", nodes[np.asarray(part.src)]), ("dst", nodes[np.asarray(part.dst)]),
                           ("nranges", nranges), ("first", first_ids), ("count", run),
                           ("combine", np.asarray(part.combine, dtype=bool))):
            cat[key].append(value)
        cat["forward"].append(np.full(part.num_transfers, -1, np.int64) if part.forward is None else
                              np.where(part.forward >= 0, part.forward + offset, -1))
        if part.step is not None:
            cat["step"].append(np.asarray(part.step, dtype=np.int64))
        if part.after_ptr is not None and part.after_ids is not None:
            cat["after_len"].append(np.diff(part.after_ptr))
            cat["after_ids"].append(np.asarray(part.after_ids, dtype=np.int64) + offset)
        else:
            cat["after_len"].append(np.zeros(part.num_transfers, np.int64))
        offset += part.num_transfers
    joined = {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in cat.items()}
    range_ptr = np.zeros(len(joined["nranges"]) + 1, np.int64)
    np.cumsum(joined["nranges"], out=range_ptr[1:])
    has_after = any(part.after_ptr is not None for _, part in pieces)
    after_ptr = None
    if has_after:
        after_ptr = np.zeros(offset + 1, np.int64)
        np.cumsum(joined["after_len"], out=after_ptr[1:])
    forward = joined["forward"] if np.any(joined["forward"] >= 0) else None
    return Schedule(n, origin, joined["src"], joined["dst"], range_ptr, joined["first"], joined["count"],
                    collective=collective, targets=targets,
                    step=joined["step"] if len(cat["step"]) == len(pieces) else None,
                    after_ptr=after_ptr, after_ids=joined["after_ids"] if has_after else None,
                    message_bytes=max(block_bytes),
                    meta=dict(big.meta), info=dict(big.info), notes=tuple(big.notes),
                    combine=joined["combine"].astype(bool), forward=forward)


def _reduction_blocks(part: Schedule, nodes: np.ndarray, scatter: bool, count: int, blocks: int) -> np.ndarray:
    """The first global block of every block of a part's reduction schedule (:func:`lift_reduction`): the
    part cuts the vector in ``count`` blocks (per node, a reduce-scatter), the lifted schedule in ``blocks``."""
    width = blocks // count
    if not scatter:
        return np.arange(part.num_messages, dtype=np.int64) * width
    owner = np.asarray(part.targets, dtype=np.int64)
    if np.any(owner != np.arange(part.num_messages) // count):
        raise TopocastError("faults: a reduce-scatter on a network in parts needs node j's blocks numbered "
                            "j * chunks .. (j + 1) * chunks - 1 in every part")
    return nodes[owner] * blocks + (np.arange(part.num_messages) % count) * width


def reduction_plan(topology: Topology, algorithm: str, collective: str, mode: str, plan_on: Callable[..., Any],
                   root: int | None = None) -> Schedule:
    """A reduction on a degraded network.  Fault-aware (``surviving``): planned on the surviving graph, as it
    is while it joins every router, else on each healthy part (:func:`reduction_pieces`) and lifted
    (:func:`lift_reduction`), each part's sum its own (:func:`stamp_reduction`).  Built for the intact network
    (``intact``): planned there, its transfers over failed parts dropped (:func:`dropped_reduction`).
    :func:`check_reducible` refuses the rest."""
    check_reducible(topology, algorithm, mode)
    if mode == "intact":
        return dropped_reduction(_reduction_of(plan_on(topology.intact, root=root), algorithm), topology)
    pieces = reduction_pieces(topology, collective, 0 if root is None else root)
    if len(pieces) == 1 and len(pieces[0]) == topology.num_nodes and not len(topology.failed_nodes):
        plan = _reduction_of(plan_on(topology, root=root), algorithm)
    elif not pieces:
        raise TopocastError(f"faults: no two healthy nodes of {topology.spec} ({topology.faults}) are still "
                            f"joined; nothing to reduce")
    else:
        planned = []
        for nodes in pieces:
            local_root = None if root is None else (int(np.searchsorted(nodes, root)) if root in nodes else 0)
            planned.append((nodes, _reduction_of(plan_on(induced(topology, nodes), root=local_root), algorithm)))
        plan = lift_reduction(topology, collective, planned)
    return stamp_reduction(plan, topology)


def _reduction_of(plan: Any, algorithm: str) -> Schedule:
    """``plan`` when it is a reduction schedule; else the one-line refusal."""
    if not isinstance(plan, Schedule) or not plan.is_reduction:
        raise TopocastError(f"faults: algorithm {algorithm} makes no reduction schedule")
    return plan


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
    # a reduce without a root given ends at node 0 (every registered reduce's default)
    ends = 0 if collective == "reduce" and root is None else root
    if ends is not None and mode != "native" and not healthy(topology)[ends]:
        raise TopocastError(f"root: node {ends} is a failed router of {topology.spec} ({topology.faults}); "
                            f"choose a healthy root")
    if collective in REDUCTIONS:
        return reduction_plan(topology, algorithm, collective, mode, plan_on, root)
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


__all__ = ["check_reducible", "degraded_plan", "dropped_reduction", "induced", "lift_reduction", "reduction_pieces",
           "reduction_plan", "stamp_reduction", "surviving_plan"]
