"""Deadlock analysis of the wormhole kernels: knots of blocked worms and one cycle of their wait-for graph.

The kernels call :func:`_knot` with a few records: :class:`Flight` (the
worms in flight and where their headers and tails are), :class:`Routes`
(the route each runs), :class:`Rules` (what of the router the search needs),
the VC owners and the free ejection channels.
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING

import numba as nb
import numpy as np

from ...plans.wormhole import WormTraffic

if TYPE_CHECKING:
    from .engine import RouterConfig

#: the worms in flight, ``active[:n_active]``, and per worm its header's and its tail's path positions (relative
#: to its route's first)
Flight = namedtuple("Flight", "active n_active head tail")
#: per worm the first and last-plus-one path positions of the route it runs, and the plan's per-position node,
#: arc, VC and destination slot
Routes = namedtuple("Routes", "starts ends node arc vc slot")
#: flits per worm, flits of buffer per VC, VCs per link, ejection channels per node (0: unlimited), whether
#: intermediate destinations hold one, and when an owner frees its VC (0: ``tail-left``, 1: ``tail-sent``)
Rules = namedtuple("Rules", "flits depth vcs ej_channels inter_ej tail_sent")


@nb.njit(cache=True)
def _span_position(w, ch, lo, hi, starts, path_arc, path_vc, vcs):
    """The position in ``lo..hi`` of worm ``w``'s path (from ``starts[w]``) where it holds channel ``ch`` (-1:
    none)."""
    base = starts[w]
    for q in range(max(lo, 1), hi + 1):
        if path_arc[base + q] * vcs + path_vc[base + q] == ch:
            return q
    return -1


def _find_knot(active, n_active, head, tail, wait_ch, wait_ej, flits, depth, ej_channels, inter_ej,
               starts, ends, path_node, path_arc, path_vc, path_slot, vcs, owner, num_nodes, dead, tail_sent):
    """:func:`_knot_search` with every field of its records given on its own, the form its unit tests call."""
    return _knot_search(Flight(active, n_active, head, tail), wait_ch, wait_ej,
                        Routes(starts, ends, path_node, path_arc, path_vc, path_slot),
                        Rules(flits, depth, vcs, ej_channels, inter_ej, tail_sent), owner, num_nodes, dead)


@nb.njit(cache=True)
def _ejection_holders(flight, routes, rules, num_nodes):
    """The worms in flight holding ejection channels, grouped by node: ``(node_ptr, hold_idx, hold_soft)``, the
    holders of node ``v``'s channels at ``node_ptr[v] .. node_ptr[v + 1] - 1``, each its index in
    ``flight.active`` and whether it frees the channel by compressing its flits into its buffers ahead."""
    active, n_active, head, tail = flight
    starts, ends, path_node, _, _, path_slot = routes
    hold_node = np.empty(0, np.int64)
    hold_idx = np.empty(0, np.int64)
    hold_soft = np.empty(0, np.bool_)
    if rules.ej_channels > 0:
        count = 0
        for pass_ in range(2):
            if pass_ == 1:
                hold_node = np.empty(count, np.int64)
                hold_idx = np.empty(count, np.int64)
                hold_soft = np.empty(count, np.bool_)
                count = 0
            for i in range(n_active):
                w = active[i]
                base = starts[w]
                h = ends[w] - base - 1
                p = head[w]
                lo = tail[w] if tail[w] > 1 else 1
                hi = p if p < h else h
                for q in range(lo, hi + 1):
                    if path_slot[base + q] >= 0 and (rules.inter_ej or q == h):
                        if pass_ == 1:
                            hold_node[count] = path_node[base + q]
                            hold_idx[count] = i
                            hold_soft[count] = (p - q) * rules.depth >= rules.flits
                        count += 1
    # grouped by node in their order (a counting sort: numba's argsort costs a second to compile)
    node_ptr = np.zeros(num_nodes + 1, np.int64)
    for k in range(len(hold_node)):
        node_ptr[hold_node[k] + 1] += 1
    for v in range(num_nodes):
        node_ptr[v + 1] += node_ptr[v]
    at = node_ptr.copy()
    by_idx = np.empty(len(hold_node), np.int64)
    by_soft = np.empty(len(hold_node), np.bool_)
    for k in range(len(hold_node)):
        r = at[hold_node[k]]
        by_idx[r] = hold_idx[k]
        by_soft[r] = hold_soft[k]
        at[hold_node[k]] = r + 1
    return node_ptr, by_idx, by_soft


@nb.njit(cache=True)
def _knot_search(flight, wait_ch, wait_ej, routes, rules, owner, num_nodes, dead):
    """Mark in ``dead`` the worms of a knot (blocked for good); return how many.

    Worm ``w`` runs the path positions ``starts[w] .. ends[w] - 1`` (its route, ``routes``).
    ``flight.head``/``flight.tail`` are every worm's header and tail positions,
    ``wait_ch``/``wait_ej`` (per active index) the channel or the node whose
    ejection channels its header waits for (-1: not blocked).  A worm is
    *live* if it is not blocked, or waits for a channel (ejection channels)
    that its owner (one of their holders) is live or can free by
    compressing its flits into its buffers ahead; the rest, by
    construction, wait only on each other.  The owner of the VC at position
    ``q`` frees it when its tail leaves ``q`` (``tail_sent`` 0: its flits
    must fit in the buffers of ``q + 1 ..`` its header) or enters it
    (``tail_sent`` 1: in those of ``q ..`` its header).
    """
    active, n_active, head, tail = flight
    live = np.zeros(n_active, np.bool_)
    slot_of = np.full(len(dead), -1, np.int64)      # worm -> index in active
    for i in range(n_active):
        slot_of[active[i]] = i
    node_ptr, hold_idx, hold_soft = _ejection_holders(flight, routes, rules, num_nodes)
    for i in range(n_active):       # live: not blocked, or the owner of what it waits for can free it alone
        if wait_ch[i] < 0 and wait_ej[i] < 0:
            live[i] = True
        elif wait_ch[i] >= 0:
            x = owner[wait_ch[i]]
            hard = False
            if x >= 0 and slot_of[x] >= 0:
                q = _span_position(x, wait_ch[i], tail[x], head[x], routes.starts, routes.arc, routes.vc, rules.vcs)
                hard = q >= 0 and (head[x] - q + rules.tail_sent) * rules.depth < rules.flits
            if not hard:
                live[i] = True
        else:
            x = wait_ej[i]
            for k in range(node_ptr[x], node_ptr[x + 1]):
                if hold_soft[k]:
                    live[i] = True
                    break
    changed = True
    while changed:                  # or waits for a live worm
        changed = False
        for i in range(n_active):
            if live[i]:
                continue
            if wait_ch[i] >= 0:
                j = slot_of[owner[wait_ch[i]]]
                if j < 0 or live[j]:
                    live[i] = True
                    changed = True
            else:
                x = wait_ej[i]
                for k in range(node_ptr[x], node_ptr[x + 1]):
                    if live[hold_idx[k]]:
                        live[i] = True
                        changed = True
                        break
    found = 0
    for i in range(n_active):
        if not live[i]:
            dead[active[i]] = True
            found += 1
    return found


@nb.njit(cache=True)
def _knot(t, flight, inject, routes, rules, owner, ej_free, num_nodes, dead):
    """The waits of the worms in flight (``flight``; ``inject`` per worm the cycle it was injected), then
    :func:`_knot_search`.  Only waits for an owned VC or for ejection channels count: with ``tail_sent``
    release a header may also wait behind another worm's flits in its buffer or for a slot of the next one,
    and such a worm counts as live (sound: a knot through such waits is missed, never made up)."""
    active, n_active, worm_pos, _ = flight
    starts, ends, path_node, path_arc, path_vc, path_slot = routes
    wait_ch = np.full(n_active, -1, np.int64)
    wait_ej = np.full(n_active, -1, np.int64)
    for i in range(n_active):
        w = active[i]
        if inject[w] == t:
            continue
        # a header still crossing a link or in the router pipeline will then wait like a ready one
        base = starts[w]
        h = ends[w] - base - 1
        p = worm_pos[w]
        if p >= h:
            continue
        ch = path_arc[base + p + 1] * rules.vcs + path_vc[base + p + 1]
        if owner[ch] >= 0:
            wait_ch[i] = ch
            continue
        x = path_node[base + p + 1]
        s = path_slot[base + p + 1]
        if rules.ej_channels > 0 and s >= 0 and (rules.inter_ej or p + 1 == h) and ej_free[x] == 0:
            wait_ej[i] = x
    return _knot_search(flight, wait_ch, wait_ej, routes, rules, owner, num_nodes, dead)


def wait_for_cycle(traffic: WormTraffic, worm_pos, worm_tail, owner, dead, config: RouterConfig,
                   path_vc=None, vcs: int = 1, starts=None, ends=None) -> list[tuple[int, int, int]]:
    """One cycle of the wait-for graph among the knotted worms ``dead``.

    Each entry is ``(u, v, vc)`` for the virtual channel ``vc`` of link
    ``u -> v`` a worm's header waits for, or ``(-1, x, -1)`` for the
    ejection channels of node ``x``.  ``worm_pos`` and ``worm_tail`` are the
    header's and the tail's path positions.  With ``tail-sent`` VC release a
    header may also wait for a VC nobody owns whose buffer holds flits of
    another knotted worm, or behind such flits in its own buffer: the entry
    is then that buffer's VC.  ``starts``/``ends``: per worm the path positions of the route it ran (default:
    the plan's ``path_ptr``).
    """
    if starts is None:
        starts, ends = traffic.path_ptr[:-1], traffic.path_ptr[1:]
    if path_vc is None:
        path_vc = np.zeros(len(traffic.path_node), np.int64)
    dead_worms = np.flatnonzero(dead).tolist()
    holders: dict[int, list[int]] = {}
    sharers: dict[int, list[int]] = {}      # tail-sent: channel -> knotted worms with flits in its buffer
    for w in dead_worms:
        base = int(starts[w])
        h = int(ends[w]) - base - 1
        for q in range(max(1, int(worm_tail[w])), min(int(worm_pos[w]), h) + 1):
            if traffic.path_slot[base + q] >= 0 and (config.intermediate_ejection or q == h):
                holders.setdefault(int(traffic.path_node[base + q]), []).append(w)
            if config.tail_sent:
                sharers.setdefault(int(traffic.path_arc[base + q]) * vcs + int(path_vc[base + q]), []).append(w)
    waits = {w: wait for w in dead_worms
             if (wait := _wait(w, int(starts[w]), int(ends[w]), traffic, worm_pos, owner, path_vc, vcs, holders,
                               sharers)) is not None}
    for start in waits:
        seen: dict[int, int] = {}
        order: list[int] = []
        w = start
        while w in waits and w not in seen:
            seen[w] = len(order)
            order.append(w)
            w = waits[w][0]
        if w in seen:
            return [waits[x][1:] for x in order[seen[w]:]]
    return []


def _wait(w, base, end, traffic, worm_pos, owner, path_vc, vcs, holders, sharers):
    """``(worm waited for, u, v, vc)`` of knotted worm ``w``'s header (:func:`wait_for_cycle`), its route at
    path positions ``base .. end - 1``, or None."""
    h = end - base - 1
    p = int(worm_pos[w])
    for q in (x for x in (p + 1, p) if 1 <= x <= h):     # the next buffer, then its own
        vc = int(path_vc[base + q])
        ch = int(traffic.path_arc[base + q]) * vcs + vc
        u, v = int(traffic.path_node[base + q - 1]), int(traffic.path_node[base + q])
        if q == p + 1 and owner[ch] >= 0:
            return int(owner[ch]), u, v, vc
        if q == p + 1 and holders.get(v):
            return holders[v][0], -1, v, -1
        others = [x for x in sharers.get(ch, ()) if x != w]
        if others:
            return others[0], u, v, vc
    return None
