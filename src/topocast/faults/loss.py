"""What a plan delivers on a degraded network, and what it loses against the intact plan.

Two transforms of a :class:`~topocast.plans.schedule.Schedule`, each returning a
schedule the shared verifier checks unchanged, and a :class:`Loss`:

* :func:`drop` (a plan made for the intact network): every transfer over a
  failed link or router is dropped, and every transfer loses the messages its
  sender no longer holds because an earlier transfer was dropped (the loss
  cascades down the plan).  Holdings are followed level by level: a step of a
  step-timed plan, else a depth of the dependency graph (a transfer sees what
  the levels before it delivered, which for an exactly-once plan is exactly
  what its dependencies brought).  A kept transfer that waited for a dropped
  one waits for what that one waited for.  The promise (``targets``) becomes
  what the surviving transfers still deliver to healthy nodes, so the
  verifier checks that the degraded plan is consistent and exactly once; what
  it no longer delivers is the :class:`Loss`.
* :func:`restrict` (a plan made on the surviving graph, a fault-aware
  algorithm): nothing is dropped; the promise becomes *every healthy node
  connected to a message's origin receives it exactly once*, as a
  ``targets`` restriction, so the unchanged verifier checks that promise.

The :class:`Loss` counts, against the intact plan's promise restricted to
healthy nodes, the ``(message, node)`` deliveries lost: ``unreachable`` (no
path from the message's origin on the surviving graph, or a failed origin)
and ``lost_connected`` (a path exists, the plan's surviving transfers do not
bring it); and it names which healthy nodes miss which messages.

>>> import topocast as tc
>>> from topocast.algorithms.classic_broadcast import grid_broadcast
>>> t = tc.build("ring:6", faults="links=1-2")
>>> plan, loss = drop(grid_broadcast(t.intact), t)
>>> loss.lost, loss.unreachable, loss.lost_connected, loss.missing_nodes().tolist()
(2, 0, 2, [2, 3])
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields, replace
from typing import Any

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule
from ..topology.core import Topology
from .connectivity import components, healthy

#: the fields of a Schedule whose meaning these transforms know; a plan using another (a relayed transfer
#: of a reduction, say) is refused rather than misread
KNOWN_FIELDS = frozenset({"num_nodes", "origin", "src", "dst", "range_ptr", "range_first", "range_count", "collective",
                          "targets", "step", "after_ptr", "after_ids", "message_bytes", "meta", "groups", "info",
                          "notes"})
#: how many nodes :meth:`Loss.as_info` lists by name
LISTED = 20

WORD = 64


def check_known(plan: Schedule) -> None:
    """Refuse a schedule that uses a field these transforms do not know the meaning of."""
    for f in fields(plan):
        if f.name in KNOWN_FIELDS:
            continue
        value = getattr(plan, f.name)
        if value is None or value is False or (isinstance(value, (tuple, dict, list)) and not value):
            continue
        if f.default is not MISSING and isinstance(value, (int, float, str)) and value == f.default:
            continue
        raise TopocastError(f"faults: the plan uses '{f.name}', which the fault transform does not know how "
                                f"to degrade yet; run it on the intact network")


@dataclass
class Loss:
    """The deliveries a plan loses on a degraded network, against the intact plan's promise.

    Attributes
    ----------
    promised : int
        ``(message, node)`` deliveries the intact plan promises to healthy nodes other than the origin.
    delivered : int
        Of those, the ones the plan still makes.
    unreachable : int
        Lost because no path joins the origin and the node on the surviving graph (or the origin failed).
    lost_connected : int
        Lost although a path exists: the plan's surviving transfers do not bring them.
    node_missing : numpy.ndarray
        Per node, the promised messages it misses (0 for failed nodes).
    node_unreachable : numpy.ndarray
        Per node, how many of those cannot reach it at all.
    missing_of : callable
        ``missing_of(node)`` -> the message ids ``node`` misses.
    dropped_transfers, trimmed_transfers : int
        Transfers dropped, and kept with fewer messages than planned.
    """

    promised: int
    delivered: int
    unreachable: int
    lost_connected: int
    node_missing: np.ndarray
    node_unreachable: np.ndarray
    missing_of: Any
    dropped_transfers: int = 0
    trimmed_transfers: int = 0

    @property
    def lost(self) -> int:
        return self.unreachable + self.lost_connected

    def missing_nodes(self) -> np.ndarray:
        """Healthy nodes that miss at least one promised message."""
        return np.flatnonzero(self.node_missing > 0)

    def unreachable_nodes(self) -> np.ndarray:
        """Healthy nodes that at least one promised message cannot reach."""
        return np.flatnonzero(self.node_unreachable > 0)

    def as_info(self, limit: int = LISTED) -> dict[str, Any]:
        """The run's metrics: counts, and the first ``limit`` nodes that miss messages with what they miss."""
        nodes = self.missing_nodes()
        listed = []
        for v in nodes[:limit]:
            missing = np.asarray(self.missing_of(int(v)))
            listed.append({"node": int(v), "missing": int(len(missing)),
                           "unreachable": int(self.node_unreachable[v]), "messages": missing[:limit].tolist()})
        return {"deliveries_promised": int(self.promised), "deliveries_made": int(self.delivered),
                "deliveries_lost": int(self.lost), "deliveries_unreachable": int(self.unreachable),
                "deliveries_lost_connected": int(self.lost_connected),
                "nodes_missing": int(len(nodes)), "nodes_unreachable": int(len(self.unreachable_nodes())),
                "transfers_dropped": int(self.dropped_transfers), "transfers_trimmed": int(self.trimmed_transfers),
                "missing_by_node": listed}

    def sentence(self) -> str:
        """The loss in one line."""
        if not self.lost:
            return f"faults: every one of the {self.promised:,} promised deliveries to healthy nodes is made"
        return (f"faults: {self.lost:,} of {self.promised:,} promised deliveries to healthy nodes lost "
                f"({self.unreachable:,} unreachable on the surviving graph, {self.lost_connected:,} lost by the plan "
                f"on connected nodes); {len(self.missing_nodes()):,} healthy nodes miss messages")


# -- holdings -----------------------------------------------------------------------------------------------

@nb.njit(cache=True, inline="always")
def _mask(word, lo, hi):
    start = word * WORD
    a = max(lo - start, 0)
    b = min(hi - start, WORD)
    if b - a == WORD:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return ((np.uint64(1) << np.uint64(b - a)) - np.uint64(1)) << np.uint64(a)


@nb.njit(cache=True)
def _grow(arr, size):
    out = np.empty(max(2 * len(arr), size), arr.dtype)
    out[:len(arr)] = arr
    return out


@nb.njit(cache=True)
def _simulate(order, level_ptr, src, dst, ok, range_ptr, first, count, holds):
    """Follow the plan level by level on the holdings ``holds`` (node x word bits), keeping of every transfer
    that may run (``ok``) the messages its sender holds; returns the kept runs ``(transfer, first, count)``."""
    cap = len(first) + 16
    out_t = np.empty(cap, np.int64)
    out_f = np.empty(cap, np.int64)
    out_c = np.empty(cap, np.int64)
    size = 0
    for lev in range(len(level_ptr) - 1):
        level_start = size
        for i in range(level_ptr[lev], level_ptr[lev + 1]):
            t = order[i]
            if not ok[t]:
                continue
            s = src[t]
            for r in range(range_ptr[t], range_ptr[t + 1]):
                lo = first[r]
                hi = lo + count[r]
                run = -1
                for w in range(lo // WORD, (hi + WORD - 1) // WORD):
                    m = _mask(w, lo, hi)
                    h = m & holds[s, w]
                    base = w * WORD
                    if h == m:
                        if run < 0:
                            run = max(lo, base)
                        continue
                    a = max(lo - base, 0)
                    b = min(hi - base, WORD)
                    for bit in range(a, b):
                        if (h >> np.uint64(bit)) & np.uint64(1):
                            if run < 0:
                                run = base + bit
                        elif run >= 0:
                            if size == len(out_t):
                                out_t, out_f, out_c = _grow(out_t, size + 1), _grow(out_f, size + 1), \
                                    _grow(out_c, size + 1)
                            out_t[size] = t
                            out_f[size] = run
                            out_c[size] = base + bit - run
                            size += 1
                            run = -1
                if run >= 0:
                    if size == len(out_t):
                        out_t, out_f, out_c = _grow(out_t, size + 1), _grow(out_f, size + 1), _grow(out_c, size + 1)
                    out_t[size] = t
                    out_f[size] = run
                    out_c[size] = hi - run
                    size += 1
        for k in range(level_start, size):  # what the level delivered, held from the next level on
            d = dst[out_t[k]]
            lo = out_f[k]
            hi = lo + out_c[k]
            for w in range(lo // WORD, (hi + WORD - 1) // WORD):
                holds[d, w] |= _mask(w, lo, hi)
    return out_t[:size], out_f[:size], out_c[:size]


@nb.njit(cache=True)
def _depths(n_transfers, after_ptr, after_ids):
    """Depth of every transfer in its dependency graph (0: waits for none); -1 on a cycle."""
    indeg = np.zeros(n_transfers, np.int64)
    succ_count = np.zeros(n_transfers + 1, np.int64)
    for t in range(n_transfers):
        indeg[t] = after_ptr[t + 1] - after_ptr[t]
        for k in range(after_ptr[t], after_ptr[t + 1]):
            succ_count[after_ids[k] + 1] += 1
    succ_ptr = np.cumsum(succ_count)
    fill = succ_ptr[:-1].copy()
    succ = np.empty(len(after_ids), np.int64)
    for t in range(n_transfers):
        for k in range(after_ptr[t], after_ptr[t + 1]):
            d = after_ids[k]
            succ[fill[d]] = t
            fill[d] += 1
    depth = np.zeros(n_transfers, np.int64)
    queue = np.empty(n_transfers, np.int64)
    tail = 0
    for t in range(n_transfers):
        if indeg[t] == 0:
            queue[tail] = t
            tail += 1
    head = 0
    while head < tail:
        u = queue[head]
        head += 1
        for k in range(succ_ptr[u], succ_ptr[u + 1]):
            v = succ[k]
            depth[v] = max(depth[v], depth[u] + 1)
            indeg[v] -= 1
            if indeg[v] == 0:
                queue[tail] = v
                tail += 1
    if tail < n_transfers:
        depth[:] = -1
    return depth


@nb.njit(cache=True)
def _remap_after(order, kept, after_ptr, after_ids):
    """Per transfer (in topological ``order``) the kept transfers it waits for: its kept dependencies, and for
    a dropped one what that one waited for.  Returns the CSR ``(ptr, ids)`` indexed by transfer."""
    n = len(kept)
    eff_ptr = np.zeros(n + 1, np.int64)
    lists_start = np.zeros(n, np.int64)
    lists_len = np.zeros(n, np.int64)
    cap = len(after_ids) + 16
    store = np.empty(cap, np.int64)
    size = 0
    stamp = np.full(n, -1, np.int64)
    for i in range(len(order)):
        t = order[i]
        start = size
        for k in range(after_ptr[t], after_ptr[t + 1]):
            d = after_ids[k]
            if kept[d]:
                cands_lo, cands_hi, single = 0, 0, d
            else:
                cands_lo, cands_hi, single = lists_start[d], lists_start[d] + lists_len[d], -1
            if single >= 0:
                if stamp[single] != t:
                    stamp[single] = t
                    if size == len(store):
                        store = _grow(store, size + 1)
                    store[size] = single
                    size += 1
            else:
                for j in range(cands_lo, cands_hi):
                    e = store[j]
                    if stamp[e] != t:
                        stamp[e] = t
                        if size == len(store):
                            store = _grow(store, size + 1)
                        store[size] = e
                        size += 1
        lists_start[t] = start
        lists_len[t] = size - start
    for t in range(n):
        eff_ptr[t + 1] = eff_ptr[t] + (lists_len[t] if kept[t] else 0)
    ids = np.empty(eff_ptr[n], np.int64)
    for t in range(n):
        if kept[t]:
            for j in range(lists_len[t]):
                ids[eff_ptr[t] + j] = store[lists_start[t] + j]
    return eff_ptr, ids


def levels(plan: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(order, level_ptr)``: the transfers grouped by level (step, else dependency depth), in order."""
    if plan.step is not None:
        key = np.asarray(plan.step, dtype=np.int64)
    else:
        key = _depths(plan.num_transfers, plan.after_ptr, plan.after_ids)
        if plan.num_transfers and key[0] < 0:
            raise TopocastError("faults: the plan's dependencies form a cycle")
    order = np.argsort(key, kind="stable").astype(np.int64)
    sorted_key = key[order]
    cuts = np.flatnonzero(np.diff(sorted_key)) + 1
    level_ptr = np.concatenate([[0], cuts, [len(order)]]).astype(np.int64)
    return order, level_ptr


def link_ok(plan: Schedule, topology: Topology) -> np.ndarray:
    """Per transfer, whether its link survives on ``topology`` (a link of it, between healthy nodes)."""
    src = np.asarray(plan.src, dtype=np.int64)
    dst = np.asarray(plan.dst, dtype=np.int64)
    if not len(src):
        return np.zeros(0, dtype=bool)
    mask = healthy(topology)
    key = topology.arc_sources * topology.num_nodes + topology.indices
    want = src * topology.num_nodes + dst
    pos = np.minimum(np.searchsorted(key, want), len(key) - 1) if len(key) else np.zeros(len(want), np.int64)
    found = (key[pos] == want) if len(key) else np.zeros(len(want), dtype=bool)
    return found & mask[src] & mask[dst]


def _origin_holds(plan: Schedule, n: int) -> np.ndarray:
    from ..infra.memory import check_need

    m = plan.num_messages
    words = max(1, (m + WORD - 1) // WORD)
    check_need(f"following {m:,} messages on {n:,} nodes through the degraded plan", 8.0 * n * words, None)
    holds = np.zeros((n, words), dtype=np.uint64)
    ids = np.arange(m, dtype=np.int64)
    np.bitwise_or.at(holds, (plan.origin, ids // WORD), np.left_shift(np.uint64(1), (ids % WORD).astype(np.uint64)))
    return holds


def _bit(holds: np.ndarray, node: np.ndarray, msg: np.ndarray) -> np.ndarray:
    return ((holds[node, msg // WORD] >> (msg % WORD).astype(np.uint64)) & np.uint64(1)).astype(bool)


def _popcount(rows: np.ndarray) -> np.ndarray:
    """Set bits per row of a uint64 matrix."""
    return np.unpackbits(rows.view(np.uint8), axis=1).sum(axis=1, dtype=np.int64) if rows.size else \
        np.zeros(len(rows), np.int64)


def _row_ids(holds_row: np.ndarray, m: int, present: bool) -> np.ndarray:
    bits = np.unpackbits(holds_row.view(np.uint8), bitorder="little")[:m].astype(bool)
    return np.flatnonzero(bits if present else ~bits)


# -- the two transforms ----------------------------------------------------------------------------------------

def _pairs(plan: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """``(message, node)`` of every promised delivery of a plan whose targets are not ``"all"``."""
    ptr, ids = plan.target_csr()
    msg = np.repeat(np.arange(plan.num_messages, dtype=np.int64), np.diff(ptr))
    return msg, np.asarray(ids, dtype=np.int64)


def account(plan: Schedule, topology: Topology, holds: np.ndarray | None) -> tuple[Loss, Any]:
    """The :class:`Loss` of ``plan`` on ``topology`` and the targets a degraded plan promises.

    Parameters
    ----------
    plan : Schedule
        The plan as planned (its ``targets`` are the intact promise).
    topology : Topology
        The degraded network.
    holds : numpy.ndarray or None
        What every node holds after the degraded plan (node x word bits), from :func:`drop`; None for a
        fault-aware plan, which promises every healthy node connected to a message's origin.

    Returns
    -------
    (Loss, targets)
        The loss, and the degraded plan's ``targets``: ``"all"`` when nothing is lost and no router failed,
        else a CSR pair.
    """
    n, m = topology.num_nodes, plan.num_messages
    mask = healthy(topology)
    comp = components(topology)
    origin = np.asarray(plan.origin, dtype=np.int64)
    live_origin = mask[origin]
    if isinstance(plan.targets, str):
        # every node needs every message: per node counts from the component sizes and the holdings
        per_comp = np.bincount(comp[origin[live_origin]], minlength=int(comp.max()) + 1)
        own = np.bincount(origin, minlength=n)
        reach = np.where(mask, per_comp[comp], 0)  # messages whose origin is healthy and connected (own included)
        promised_v = np.where(mask, m - own, 0)
        unreachable_v = np.where(mask, m - reach, 0)
        held = reach if holds is None else _popcount(holds)
        made_v = np.where(mask, held - own, 0)
        missing_v = promised_v - made_v
        lost_connected = int((missing_v - unreachable_v).sum())

        def missing_of(v: int) -> np.ndarray:
            if holds is not None:
                return _row_ids(holds[v], m, present=False)
            return np.flatnonzero(~(live_origin & (comp[origin] == comp[v])))

        loss = Loss(int(promised_v.sum()), int(made_v.sum()), int(unreachable_v.sum()), lost_connected,
                    missing_v, unreachable_v, missing_of)
        if loss.lost == 0 and mask.all():
            return loss, "all"
        msg, node = _all_pairs(n, m, mask, comp, origin, live_origin, holds)
        return loss, _csr(m, msg, node)
    msg, node = _pairs(plan)
    own = origin[msg] == node
    target_ok = mask[node]
    connected = target_ok & live_origin[msg] & (comp[origin[msg]] == comp[node])
    made = connected.copy() if holds is None else (target_ok & _bit(holds, node, msg))
    counted = target_ok & ~own
    unreachable = counted & ~connected
    missing = counted & ~made
    node_missing = np.bincount(node[missing], minlength=n)
    node_unreachable = np.bincount(node[unreachable], minlength=n)
    order = np.argsort(node[missing], kind="stable")
    miss_node, miss_msg = node[missing][order], msg[missing][order]

    def missing_listed(v: int) -> np.ndarray:
        lo, hi = np.searchsorted(miss_node, [v, v + 1])
        return miss_msg[lo:hi]

    loss = Loss(int(counted.sum()), int((counted & made).sum()), int(unreachable.sum()),
                int((missing & connected).sum()), node_missing, node_unreachable, missing_listed)
    keep = made | (own & target_ok & live_origin[msg])
    return loss, _csr(m, msg[keep], node[keep])


def _all_pairs(n, m, mask, comp, origin, live_origin, holds):
    """``(message, node)`` pairs of an every-node plan still promised: healthy nodes connected to a healthy
    origin (``holds`` None), else those that hold the message at the end."""
    from ..infra.memory import check_need

    check_need(f"the promise of {m:,} messages to {n:,} nodes on the degraded network", 9.0 * n * m, None)
    healthy_nodes = np.flatnonzero(mask)
    if holds is None:
        msgs, nodes = [], []
        for c in np.unique(comp[origin[live_origin]]):
            ms = np.flatnonzero(live_origin & (comp[origin] == c))
            vs = healthy_nodes[comp[healthy_nodes] == c]
            msgs.append(np.repeat(ms, len(vs)))
            nodes.append(np.tile(vs, len(ms)))
        if not msgs:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(msgs), np.concatenate(nodes)
    bits = np.unpackbits(holds[healthy_nodes].view(np.uint8), axis=1, bitorder="little")[:, :m].astype(bool)
    msg, node_index = np.nonzero(bits.T)  # message-major
    return msg.astype(np.int64), healthy_nodes[node_index.astype(np.int64)]


def _csr(m: int, msg: np.ndarray, node: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((node, msg))
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(msg, minlength=m), out=ptr[1:])
    return ptr, np.ascontiguousarray(node[order], dtype=np.int64)


def _stamp(plan: Schedule, topology: Topology, targets, loss: Loss, mode: str, promise: str, **changes) -> Schedule:
    meta = dict(plan.meta)
    meta.update(faults=topology.faults, fault_mode=mode)
    info = dict(plan.info)
    info.update({"faults": topology.faults, "fault_mode": mode, "fault_promise": promise,
                 "failed_routers": int(len(topology.failed_nodes)),
                 "failed_links": int(topology.meta.get("failed_links", 0))})
    info.update(loss.as_info())
    notes = tuple(plan.notes) + (loss.sentence(),)
    return replace(plan, targets=targets, meta=meta, info=info, notes=notes, **changes)


#: the promises, in words (the ``fault_promise`` metric)
PROMISE_AWARE = "every healthy node connected to a message's origin receives it exactly once"
PROMISE_DROPPED = ("every healthy node the surviving transfers still reach receives exactly once; "
                   "what the intact plan promised beyond that is counted as lost")


def restrict(plan: Schedule, topology: Topology, mode: str = "surviving") -> tuple[Schedule, Loss]:
    """``plan`` (made on the surviving graph) promising every healthy node connected to each message's origin.

    Parameters
    ----------
    plan : Schedule
        A plan made on ``topology`` itself (or on its components and lifted to it); its ``targets`` are the
        collective's promise on the intact network.
    topology : Topology
        The degraded network.
    mode : str
        The name of the fault mode, for the result (``surviving`` or ``native``).

    Returns
    -------
    (Schedule, Loss)
        The plan with ``targets`` restricted, ``info`` and ``notes`` naming the faults and the loss; the loss
        (deliveries that cannot reach their node on the surviving graph).
    """
    check_known(plan)
    loss, targets = account(plan, topology, None)
    return _stamp(plan, topology, targets, loss, mode, PROMISE_AWARE), loss


def drop(plan: Schedule, topology: Topology, mode: str = "intact") -> tuple[Schedule, Loss]:
    """``plan`` (made for the intact network) run on the degraded ``topology``: see the module docstring.

    Parameters
    ----------
    plan : Schedule
        The intact plan.
    topology : Topology
        The degraded network (same nodes).
    mode : str
        The name of the fault mode, for the result (``intact`` or ``native``).

    Returns
    -------
    (Schedule, Loss)
        The degraded plan (transfers over failed parts dropped, messages its senders no longer hold trimmed,
        dependencies carried over dropped transfers, ``targets`` what it still delivers) and the loss.
    """
    check_known(plan)
    if plan.num_nodes != topology.num_nodes:
        raise TopocastError(f"faults: the plan is for {plan.num_nodes} nodes, the network has {topology.num_nodes}")
    ok = link_ok(plan, topology)
    order, level_ptr = levels(plan)
    holds = _origin_holds(plan, topology.num_nodes)
    run_t, run_f, run_c = _simulate(order, level_ptr, np.asarray(plan.src, np.int64), np.asarray(plan.dst, np.int64),
                                    ok, plan.range_ptr, plan.range_first, plan.range_count, holds)
    by_transfer = np.argsort(run_t, kind="stable")
    run_t, run_f, run_c = run_t[by_transfer], run_f[by_transfer], run_c[by_transfer]
    nranges = np.bincount(run_t, minlength=plan.num_transfers)
    kept = nranges > 0
    planned = np.bincount(np.repeat(np.arange(plan.num_transfers), np.diff(plan.range_ptr)),
                          weights=np.asarray(plan.range_count, dtype=np.float64), minlength=plan.num_transfers)
    carried = np.bincount(run_t, weights=run_c.astype(np.float64), minlength=plan.num_transfers)
    ids = np.flatnonzero(kept)
    new_id = np.full(plan.num_transfers, -1, dtype=np.int64)
    new_id[ids] = np.arange(len(ids))
    range_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(nranges[ids], out=range_ptr[1:])
    changes: dict[str, Any] = {"src": np.asarray(plan.src)[ids], "dst": np.asarray(plan.dst)[ids],
                               "range_ptr": range_ptr, "range_first": run_f, "range_count": run_c}
    if plan.step is not None:
        changes["step"] = np.asarray(plan.step)[ids]
    if plan.after_ptr is not None:
        eff_ptr, eff_ids = _remap_after(order, kept, plan.after_ptr, plan.after_ids)
        changes["after_ptr"] = np.concatenate([[0], np.cumsum(np.diff(eff_ptr)[ids])]).astype(np.int64)
        changes["after_ids"] = new_id[eff_ids]
    loss, targets = account(plan, topology, holds)
    loss.dropped_transfers = int(plan.num_transfers - len(ids))
    loss.trimmed_transfers = int(np.count_nonzero(kept & (carried < planned)))
    return _stamp(plan, topology, targets, loss, mode, PROMISE_DROPPED, **changes), loss


__all__ = ["KNOWN_FIELDS", "Loss", "PROMISE_AWARE", "PROMISE_DROPPED", "account", "drop", "levels", "link_ok",
           "restrict"]
