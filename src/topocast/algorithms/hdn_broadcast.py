"""One-port broadcasting in hierarchical dual-nets: Algorithm 2 (HDN_broadcast), section 5.

Li, Peng and Chu 2012.  From a source ``s`` of ``HDN(B, k)``:

1. ``broadcast(SN^k)``: inside the base copy of ``s``, along the factors of
   ``SN^k`` one after the other (the paper's super-node broadcast; its time
   is the *sum* of the factor times, not the product the text prints);
2. ``HDN_broadcast(k)``: broadcast along ``SN^{k-1} - SN^k``, recurse into
   the level-``k`` cluster (for ``k = 1``: broadcast along the factors outside
   ``SN^1``), then every node of the cluster sends over its level-``k`` cross
   link (one step), every cluster of the other class (now holding one full
   super-node ``SN^k``) runs the same procedure from that super-node, and
   finally their nodes, except the super-node that faces the first cluster,
   send back over level-``k`` cross links to the remaining clusters of the
   first class (one step).

Inside a factor a node sends to one neighbour per step: a ring from both
ends of the growing arc (``ceil(n/2)`` steps), a complete graph by doubling
(``ceil(log2 n)``), a hypercube one dimension per step.  Parallel instances
(every cluster of the other class) run in the same steps, so the schedule
takes exactly the Theorem 3 count ``2^k T(B) - sum_i 2^i T(SN^{k-i}) +
2^{k+1} - 2`` with ``T(X)`` the sum of the factor times of ``X``, and every
node receives exactly once.  The schedule is built in vectorised batches (one
batch per phase) and checked by the step engine under the one-port model;
it reports the Theorem 3 count as ``theorem3_bound`` (the schedule's ``info``)
beside the engine's own ``lower_bound`` (under one-port, ``max(ecc, ceil(log2 N))``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from ..registry import Param
from ..sim.models import PortModel
from ..topology.core import Topology
from ..topology.hdn import BaseFactor, HDNLayout, hdn_layout
from .base import register


def factor_broadcast(factor: BaseFactor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Plan the one-port broadcast from coordinate 0 of one base factor.

    Parameters
    ----------
    factor : BaseFactor
        A ring, complete graph or hypercube.

    Returns
    -------
    step, sender, receiver : numpy.ndarray
        The transfers as factor coordinates.
    """
    steps, src, dst = [], [], []
    n = factor.size
    if factor.kind == "ring":
        right, left = n // 2, (n - 1) // 2
        for r in range(1, right + 1):
            steps.append(r - 1)
            src.append(r - 1)
            dst.append(r)
        for j in range(1, left + 1):
            steps.append(j)
            src.append((1 - j) % n)
            dst.append((-j) % n)
    else:
        t = 0
        while (1 << t) < n:
            for i in range(min(1 << t, n - (1 << t)) if factor.kind == "complete" else 1 << t):
                steps.append(t)
                src.append(i)
                dst.append(i + (1 << t) if factor.kind == "complete" else i ^ (1 << t))
            t += 1
    return np.array(steps, dtype=np.int64), np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)


def _shifted(hc: np.ndarray, i: int, factor, rel: np.ndarray) -> np.ndarray:
    """Move the base coordinates of every holder by each relative offset ``rel`` along factor ``i``.

    The holders share their coordinate in factor ``i``; a hypercube factor moves by XOR, a ring by addition.
    """
    c = np.repeat(hc, len(rel), axis=0)
    r = np.tile(rel, len(hc))
    o = np.repeat(hc[:, i], len(rel))
    c[:, i] = (o ^ r) if factor.kind == "hypercube" else (o + r) % factor.size
    return c


def supernode_broadcast(layout: HDNLayout, holder: int, held: tuple[int, ...], order: list[int]):
    """Plan the broadcast inside one base copy along the factors of ``order`` not in ``held``.

    Broadcast inside one base copy along the factors of ``order`` not in ``held``.

    ``holder`` is a base node; the holders at the start are the nodes that
    differ from it only in ``held`` factors.  Returns ``(step, sender,
    receiver)`` as base nodes and the number of steps.

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.
    holder : int
        A base node holding the message.
    held : tuple of int
        Factors along which every node already holds it.
    order : list of int
        Factors in the order they are broadcast.

    Returns
    -------
    tuple
        ``(step, sender, receiver, steps)``: the transfers as base nodes and the number of steps.
    """
    codec = layout.base_codec
    coords = layout.base_coords(np.arange(layout.N0))
    start = layout.base_coords(np.array([holder]))[0]
    mask = np.ones(layout.N0, dtype=bool)
    for i in range(len(layout.factors)):
        if i not in held:
            mask &= coords[:, i] == start[i]
    holders = np.flatnonzero(mask)
    done = set(held)
    out_step, out_src, out_dst = [], [], []
    t0 = 0
    for i in order:
        if i in done:
            continue
        done.add(i)
        f = layout.factors[i]
        fstep, fsrc, fdst = factor_broadcast(f)
        hc = layout.base_coords(holders)
        out_step.append(np.tile(fstep, len(holders)) + t0)
        out_src.append(codec.encode_array(_shifted(hc, i, f, fsrc)))
        out_dst.append(codec.encode_array(_shifted(hc, i, f, fdst)))
        holders = np.concatenate([holders, out_dst[-1]])
        t0 += f.broadcast_steps
    if not out_step:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, 0
    return np.concatenate(out_step), np.concatenate(out_src), np.concatenate(out_dst), t0


def _level_order(layout: HDNLayout, level: int) -> list[int]:
    """Factor order of the base broadcasts below ``level``: SN^level, SN^{level-1}, ..., SN^1, the rest."""
    order: list[int] = []
    for subset in reversed(layout.supernodes[:level]):
        order += [i for i in subset if i not in order]
    return order + [i for i in range(len(layout.factors)) if i not in order]


def _broadcast(layout: HDNLayout, builder: ScheduleBuilder, level: int, instances: np.ndarray,
               holder: int, held: tuple[int, ...], order: list[int], t0: int) -> int:
    """Schedule HDN_broadcast in every level-``level`` instance from the holders.

    Schedule HDN_broadcast in every level-``level`` instance in ``instances`` from the holders of
    ``holder`` (a level-``level`` serial) and ``held``; returns the step after the last.
    """
    if level == 0:
        step, src, dst, total = supernode_broadcast(layout, holder, held, order)
        if len(step):
            g_src = layout.join(layout.k, instances[:, None], src[None, :]).ravel()
            g_dst = layout.join(layout.k, instances[:, None], dst[None, :]).ravel()
            builder.add(src=g_src, dst=g_dst, first=0, step=np.tile(step, len(instances)) + t0)
        return t0 + total
    inner, n, s = layout.sizes[level - 1], layout.clusters[level], layout.s[level - 1]
    cluster = holder // inner
    below = int(layout.down(level, np.array([holder % inner]))[0])
    t = _broadcast(layout, builder, level - 1, instances * (2 * n) + cluster, below, held, order, t0)
    # the whole cluster sends across level-`level` links
    members = cluster * inner + np.arange(inner, dtype=np.int64)
    _add_cross(layout, builder, level, instances, members, t)
    # every cluster of the other class now holds the super-node that faces `cluster`
    c, u = divmod(cluster, n)
    others = (1 - c) * n + np.arange(n, dtype=np.int64)
    facing = int(layout.down(level, np.array([u * s]))[0])
    t = _broadcast(layout, builder, level - 1, (instances[:, None] * (2 * n) + others[None, :]).ravel(),
                   facing, layout.supernodes[level - 1], _level_order(layout, level), t + 1)
    # they send back to the remaining clusters of the first class
    sn = np.delete(np.arange(n, dtype=np.int64), u)
    back = layout.encode(level, 1 - c, np.arange(n)[:, None, None], sn[None, :, None],
                         np.arange(s)[None, None, :]).ravel()
    _add_cross(layout, builder, level, instances, back, t)
    return t + 1


def _add_cross(layout: HDNLayout, builder: ScheduleBuilder, level: int, instances: np.ndarray,
               senders: np.ndarray, step: int) -> None:
    if len(senders) == 0:
        return
    receivers = layout.cross(level, senders)
    g_src = layout.from_level_serial(level, instances[:, None], senders[None, :]).ravel()
    g_dst = layout.from_level_serial(level, instances[:, None], receivers[None, :]).ravel()
    builder.add(src=g_src, dst=g_dst, first=0, step=step)


def theorem3_bound(layout: HDNLayout) -> int:
    """Evaluate Theorem 3's broadcast bound ``2^k T(B) - sum_i 2^i T(SN^{k-i}) + 2^{k+1} - 2`` with our factor times.

    Parameters
    ----------
    layout : HDNLayout
        The network's layout.

    Returns
    -------
    int
        The bound in steps.
    """
    return layout.theorem_bound(layout.subproduct_broadcast(range(len(layout.factors))),
                                [layout.subproduct_broadcast(f) for f in layout.supernodes])


def hdn_broadcast_schedule(topology: Topology, root: int = 0, message_bytes: float = 1.0) -> Schedule:
    """Plan the one-port HDN_broadcast (Algorithm 2, section 5) from ``root``.

    Parameters
    ----------
    topology : Topology
        A hierarchical dual-net.
    root : int, default 0
        The node index that holds the message.
    message_bytes : float, default 1.0
        Size of the message in bytes.

    Returns
    -------
    Schedule
        The broadcast; ``info`` holds Theorem 3's bound.

    Raises
    ------
    TopocastError
        If ``root`` is not a node or the network is not a hierarchical dual-net.
    """
    layout = hdn_layout(topology)
    if not 0 <= root < layout.num_nodes:
        raise TopocastError(f"hdn-broadcast: parameter 'root' must be in 0..{layout.num_nodes - 1}, got {root}")
    builder = ScheduleBuilder(layout.num_nodes, origin=[root], collective="broadcast",
                              message_bytes=message_bytes, meta={"algorithm": "HDN_broadcast", "root": root})
    instance, serial = layout.level_serial(layout.k, np.array([root]))
    _broadcast(layout, builder, layout.k, instance, int(serial[0]), (), _level_order(layout, layout.k), 0)
    return replace(builder.build(), info={"theorem3_bound": theorem3_bound(layout)})


register(
    "hdn-broadcast", hdn_broadcast_schedule, "broadcast",
    "one-port broadcast in a hierarchical dual-net (Li, Peng, Chu 2012, Algorithm 2)",
    families=("hdn", "rdn", "dualcube"), params=(Param("root", "int", 0, "source node index", minimum=0),),
    aliases=("HDN_broadcast",), ports=PortModel.one_port(), engines=("step", "event"),
    paper="hierarchical-dual-net")
