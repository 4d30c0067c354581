r"""Building blocks of the Galaxyfly all-to-all broadcasts (Zhuang et al. 2023, section 3).

Every router starts with one packet; packet ``r`` is router ``r``'s.  A
:class:`Plan` records transfers one hop at a time and, for each router, which
transfer delivered each packet to it, so that every transfer waits exactly
for the transfers that brought the packets it carries ("each transfer waits
only for the data it carries") and carries only what its receiver lacks
(no packet is ever planned twice into a router).

* :func:`halving_tree` is the recursion of Algorithm 1 (RPC): ``B = A \ {m}``
  is split into ``B1`` (the first ``ceil(|B|/2)`` routers in index order) and
  ``B2`` (the rest); the "arbitrary" router ``b_i`` is the first of ``B_i``.
* :func:`router_packet_collection` (RPC) sends each subtree's content up that
  tree; :func:`router_packet_distribution` (RPD, the inverse) sends a packet
  set down it, each child getting what it lacks.
* :func:`spc_tree`: Algorithm 2's breadth-first order.  The neighbours of the
  target supernode ``A`` are taken in ascending index; every supernode at
  distance 2 is served once, by the first of them adjacent to it (the worked
  example of section 3.2: from S8, S5 serves S1, S4, S13; S7 serves S3, S6,
  S14; S9 serves S2, S10, S15; S12 serves S11).
* :func:`supernode_packet_collection` (SPC) and
  :func:`supernode_packet_distribution` (SPD) move packets up and down that
  tree; at every supernode the packets pass through the routers holding the
  global links of the tree.
* :func:`one_packet_per_transfer` cuts chosen transfers of a finished
  schedule into one transfer per packet and rebuilds every dependency from
  where each packet came from (``forwarding=packet``: a packet is passed on
  as soon as it arrives).

Vectorised planning.  Each operation runs on many supernodes at once (one
numpy batch per level of the halving tree, or per depth of the SPC tree), and
the state is two bit matrices: the whole blocks of other supernodes a router
holds (packets cross a global link only as whole supernode blocks) and which
packets of its own supernode it holds.  A batch is only accepted when its
transfers commute (no packet written twice, no packet read by one transfer
and written by another), so it plans exactly what one transfer at a time
would.  Every transfer carries a key (phase, position of its supernode in
the algorithm's loop, operation, edge); the schedule numbers transfers in key
order, which is the order of the paper's loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from ..errors import TopocastError
from ..infra.memory import over_limit
from ..plans.schedule import Schedule
from ..topology.galaxyfly import SupernodeView

#: key columns: phase, position of the supernode in the phase's loop, operation, edge
KEY_WIDTH = 4


# -- Algorithm 1: the halving tree -------------------------------------------------------------

def _halving(members: list[int], root: int) -> list[tuple[int, int]]:
    rest = [r for r in members if r != root]
    half = (len(rest) + 1) // 2
    edges: list[tuple[int, int]] = []
    for part in (rest[:half], rest[half:]):
        if part:
            head = part[0]
            edges += _halving(part, head)
            edges.append((head, root))
    return edges


@lru_cache(maxsize=256)
def _halving_edges(size: int, root: int) -> tuple[tuple[int, int], ...]:
    return tuple(_halving(list(range(size)), root))


def halving_tree(members: Sequence[int], root: int) -> list[tuple[int, int]]:
    """List the edges of Algorithm 1's halving tree on some routers, children first.

    Parameters
    ----------
    members : sequence of int
        The routers, in order.
    root : int
        The collecting router (one of ``members``).

    Returns
    -------
    list of tuple of int
        ``(child, parent)`` edges.

    Examples
    --------
    >>> halving_tree([0, 1, 2, 3], 0)
    [(2, 1), (1, 0), (3, 0)]
    """
    members = list(members)
    local = _halving_edges(len(members), members.index(root))
    return [(members[c], members[p]) for c, p in local]


@lru_cache(maxsize=64)
def _template(a: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Build the halving tree of ``a`` routers on positions: ``(child, parent, height, depth)`` per edge.

    Positions ``0..a-2`` are the routers other than the root in index order
    (the tree's shape does not depend on which router is the root) and
    ``a-1`` stands for the root; edges are in Algorithm 1's order (children
    first).  ``height`` orders RPC's batches, ``depth`` RPD's.
    """
    rest = a - 1
    edges = _halving_edges(a, rest)  # root = the last router: positions are the router indices
    child = np.array([c for c, _ in edges], dtype=np.int64)
    parent = np.array([p for _, p in edges], dtype=np.int64)
    height = np.zeros(a, dtype=np.int64)
    for c, p in edges:  # children come before their parents
        height[p] = max(height[p], height[c] + 1)
    depth = np.zeros(a, dtype=np.int64)
    for c, p in reversed(edges):
        depth[c] = depth[p] + 1
    return child, parent, height[child], depth[child]


def _positions_to_routers(positions: np.ndarray, local_root: np.ndarray, a: int) -> np.ndarray:
    """Local router index of template ``positions`` (rows: one tree per local root)."""
    local_root = local_root[:, None]
    return np.where(positions == a - 1, local_root, positions + (positions >= local_root))


# -- the planner --------------------------------------------------------------------------------

class Plan:
    """Transfers of a dependency schedule, with who holds what and who brought it.

    ``blocks[r, j]``: router ``r`` holds every packet of supernode ``j`` (for
    ``j`` other than its own); ``local[r, k]``: it holds the packet of router
    ``k`` of its own supernode.  ``by_block`` and ``by_local`` (same shapes)
    name the transfer that delivered it (-1: its own packet, or not held).
    """

    def __init__(self, view: SupernodeView):
        self.view = view
        a, count = view.a, view.num_supernodes
        n = a * count
        self.num_routers = n
        self.blocks = np.zeros((n, count), dtype=bool)
        self.local = np.zeros((n, a), dtype=bool)
        self.local[np.arange(n), np.arange(n) % a] = True
        self.by_block = np.full((n, count), -1, dtype=np.int64)
        self.by_local = np.full((n, a), -1, dtype=np.int64)
        self.size = 0
        self._src: list[np.ndarray] = []
        self._dst: list[np.ndarray] = []
        self._key: list[np.ndarray] = []
        self._units: list[np.ndarray] = []   # rows (transfer, lo, hi): packets carried
        self._deps: list[np.ndarray] = []    # rows (transfer, transfer it waits for)

    def send(self, u, v, offer_blocks, offer_local, key) -> np.ndarray:
        """Plan transfers ``u[i] -> v[i]`` carrying what ``v[i]`` lacks of the offered packets.

        Transfers with nothing to carry are skipped.

        Parameters
        ----------
        u, v : numpy.ndarray
            Senders and receivers.
        offer_blocks : numpy.ndarray
            Rows of supernode flags: whole blocks offered.
        offer_local : numpy.ndarray
            Rows of ``a`` flags: packets of the receiver's own supernode offered (used inside a supernode).
        key : numpy.ndarray
            ``(phase, position, operation)`` of every transfer, for the numbering.

        Returns
        -------
        numpy.ndarray
            The kept rows.
        """
        a = self.view.a
        u, v = np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)
        su, sv = u // a, v // a
        rows = np.arange(len(u))
        offer_blocks = np.array(offer_blocks, dtype=bool, copy=True)
        offer_local = np.array(offer_local, dtype=bool, copy=True)
        offer_local[offer_blocks[rows, sv]] = True  # the receiver's own block counts packet by packet
        offer_blocks[rows, sv] = False
        carry_blocks = offer_blocks & ~self.blocks[v]
        carry_local = offer_local & ~self.local[v]
        keep = np.flatnonzero(carry_blocks.any(axis=1) | carry_local.any(axis=1))
        u, v, su, sv = u[keep], v[keep], su[keep], sv[keep]
        carry_blocks, carry_local = carry_blocks[keep], carry_local[keep]
        tid = self.size + np.arange(len(keep), dtype=np.int64)
        bi, bj = np.nonzero(carry_blocks)
        li, lk = np.nonzero(carry_local)
        # what each transfer reads at its sender, as (row, column of by_block) and (row, column of by_local);
        # the sender keeps its own supernode's block packet by packet
        own = bj == su[bi]
        inside = su[li] == sv[li]
        own_rows = np.repeat(bi[own], a)
        own_cols = np.tile(np.arange(a), int(own.sum()))
        read_block = (np.concatenate([bi[~own], li[~inside]]), np.concatenate([bj[~own], sv[li[~inside]]]))
        read_local = (np.concatenate([own_rows, li[inside]]), np.concatenate([own_cols, lk[inside]]))
        if len(np.unique(v)) < len(v) or np.intersect1d(u, v).size:
            self._check_commute(u, v, (bi, bj), (li, lk), read_block, read_local)
        deps = np.concatenate([_distinct_pairs(tid[read_block[0]], self.by_block[u[read_block[0]], read_block[1]]),
                               _distinct_pairs(tid[read_local[0]], self.by_local[u[read_local[0]], read_local[1]])])
        # record, then update what the receivers hold
        self.blocks[v[bi], bj] = True
        self.by_block[v[bi], bj] = tid[bi]
        self.local[v[li], lk] = True
        self.by_local[v[li], lk] = tid[li]
        block_runs, local_runs = _runs(carry_blocks), _runs(carry_local)
        units = np.concatenate([
            np.stack([tid[block_runs[0]], block_runs[1] * a, block_runs[2] * a], axis=1),
            np.stack([tid[local_runs[0]], sv[local_runs[0]] * a + local_runs[1],
                      sv[local_runs[0]] * a + local_runs[2]], axis=1)])
        self._src.append(u)
        self._dst.append(v)
        self._key.append(np.asarray(key, dtype=np.int64).reshape(-1, KEY_WIDTH)[keep])
        self._units.append(units)
        self._deps.append(deps[deps[:, 1] >= 0])
        self.size += len(keep)
        return keep

    def _check_commute(self, u, v, write_block, write_local, read_block, read_local) -> None:
        """Refuse a batch unless its transfers commute.

        Refuse a batch unless its transfers commute: no packet written twice into one router,
        none read at a router where another transfer of the batch writes it.
        """
        width = self.view.num_supernodes + self.view.a
        offset = self.view.num_supernodes

        def cells(routers, block, local):
            return np.concatenate([routers[block[0]] * width + block[1],
                                   routers[local[0]] * width + offset + local[1]])

        written = cells(v, write_block, write_local)
        read = cells(u, read_block, read_local)
        if len(np.unique(written)) != len(written) or np.intersect1d(read, written).size:
            raise AssertionError("galaxyfly plan: a batch whose transfers do not commute")

    def held_rows(self, routers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Give what some routers hold.

        Parameters
        ----------
        routers : numpy.ndarray
            Router indices.

        Returns
        -------
        tuple of numpy.ndarray
            ``(block flags, own-supernode packet flags)``.
        """
        return self.blocks[routers], self.local[routers]

    def schedule(self, packet_bytes: float, collective: str = "allgather", targets="all",
                 meta: dict | None = None, per_packet: Sequence[tuple[int, int]] = (),
                 max_bytes: float | None = None) -> Schedule:
        """Turn the planned transfers into a dependency :class:`Schedule`, numbered in key order.

        Parameters
        ----------
        packet_bytes : float
            Size of one packet in bytes.
        collective : str, default "allgather"
            The schedule's collective.
        targets : str or object, default "all"
            Who must receive what (``"all"``: every router every packet).
        meta : dict, optional
            The schedule's metadata.
        per_packet : sequence of tuple of int, optional
            ``(phase, operation)`` pairs whose transfers move one packet at a time
            (:func:`one_packet_per_transfer`); the others carry their whole packet set as planned.
        max_bytes : float, optional
            Memory limit for that rewrite.

        Returns
        -------
        Schedule
            The schedule.

        Raises
        ------
        TopocastError
            As :func:`one_packet_per_transfer`.
        """
        schedule = self._schedule(packet_bytes, collective, targets, meta)
        if not per_packet:
            return schedule
        keys = self.sorted_keys()
        split = np.zeros(len(keys), dtype=bool)
        for phase, op in per_packet:
            split |= (keys[:, 0] == phase) & (keys[:, 2] == op)
        return one_packet_per_transfer(schedule, split, max_bytes)

    def sorted_keys(self) -> np.ndarray:
        """Give the key ``(phase, position, operation, edge)`` of every transfer, in schedule order.

        Returns
        -------
        numpy.ndarray
            One key row per transfer.
        """
        keys = np.concatenate(self._key) if self._key else np.zeros((0, KEY_WIDTH), np.int64)
        return keys[np.lexsort(keys.T[::-1])]

    def _schedule(self, packet_bytes: float, collective: str, targets, meta: dict | None) -> Schedule:
        n, total = self.num_routers, self.size
        def cat(parts, width):
            return np.concatenate(parts) if parts else np.zeros((0, width) if width else 0, np.int64)

        keys = cat(self._key, KEY_WIDTH)
        order = np.lexsort(keys.T[::-1])            # old id of the transfer at each new position
        renumber = np.empty(total, dtype=np.int64)
        renumber[order] = np.arange(total)
        units = cat(self._units, 3)
        units[:, 0] = renumber[units[:, 0]]
        units = units[np.lexsort((units[:, 1], units[:, 0]))] if len(units) else units
        # merge touching packet ranges of one transfer
        starts = np.ones(len(units), dtype=bool)
        starts[1:] = (units[1:, 0] != units[:-1, 0]) | (units[1:, 1] != units[:-1, 2])
        first = units[starts, 1]
        ends = np.flatnonzero(np.append(starts[1:], True)) if len(units) else np.zeros(0, np.int64)
        count = units[ends, 2] - first
        range_ptr = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(np.bincount(units[starts, 0], minlength=total), out=range_ptr[1:])
        deps = renumber[cat(self._deps, 2)]
        pairs = np.sort(deps[:, 0] << 32 | deps[:, 1])  # ids < 2^31: one sort orders and dedupes
        pairs = pairs[np.append(True, pairs[1:] != pairs[:-1])] if len(pairs) else pairs
        deps = np.stack([pairs >> 32, pairs & 0xFFFFFFFF], axis=1)
        after_ptr = np.zeros(total + 1, dtype=np.int64)
        np.cumsum(np.bincount(deps[:, 0], minlength=total), out=after_ptr[1:])
        return Schedule(
            num_nodes=n, origin=np.arange(n, dtype=np.int64),
            src=cat(self._src, 0)[order], dst=cat(self._dst, 0)[order],
            range_ptr=range_ptr, range_first=first, range_count=count, collective=collective,
            targets=targets, after_ptr=after_ptr, after_ids=deps[:, 1].copy(),
            message_bytes=float(packet_bytes), meta=dict(meta or {}))


#: bytes per (transfer, packet) row while :func:`one_packet_per_transfer` rewires a schedule
SPLIT_BYTES_PER_ROW = 96


def one_packet_per_transfer(schedule: Schedule, split: np.ndarray, max_bytes: float | None = None) -> Schedule:
    """Split chosen transfers of a schedule into one transfer per packet.

    ``schedule`` with every transfer ``t`` where ``split[t]`` replaced by one transfer per packet it carries.

    The pieces of a transfer keep its place in the numbering, in packet
    order.  Dependencies are rebuilt from where each packet came from: a
    transfer (or piece) waits for the transfer or piece that delivered each
    packet it carries to its sender, and for nothing else, so a piece leaves
    as soon as its own packet is there ("each packet is passed on as it
    arrives").  Needs the schedule to deliver every (router, packet) pair at
    most once, which every Galaxyfly plan does.

    Parameters
    ----------
    schedule : Schedule
        A dependency schedule that delivers every (router, packet) pair at most once.
    split : numpy.ndarray
        Boolean per transfer: split it.
    max_bytes : float, optional
        Memory limit in bytes for the rewrite; None: half of the RAM.

    Returns
    -------
    Schedule
        The rewritten schedule.

    Raises
    ------
    TopocastError
        When the rewrite would not fit in memory.
    ValueError
        If a packet is delivered twice to one router or carried by a sender that never received it.
    """
    T, M = schedule.num_transfers, schedule.num_messages
    split = np.asarray(split, dtype=bool)
    rows_total = int(schedule.range_count.sum())
    refused = over_limit("rewiring them", rows_total * SPLIT_BYTES_PER_ROW, max_bytes)
    if refused is not None:  # the guard's words under the parameter's name
        raise TopocastError(f"forwarding: 'packet' rewires {rows_total} packet deliveries; {refused}; "
                            "use forwarding=block on a network this large")
    # one row per (transfer, packet), transfers in order, packets in range order
    range_owner = np.repeat(np.arange(T, dtype=np.int64), np.diff(schedule.range_ptr))
    count = schedule.range_count
    row_t = np.repeat(range_owner, count)
    offsets = np.zeros(len(count), dtype=np.int64)
    np.cumsum(count[:-1], out=offsets[1:])
    row_p = np.repeat(schedule.range_first - offsets, count) + np.arange(rows_total, dtype=np.int64)
    per = np.bincount(row_t, minlength=T)
    size = np.where(split, per, 1)
    size[per == 0] = 1
    base = np.zeros(T + 1, dtype=np.int64)
    np.cumsum(size, out=base[1:])
    first_row = np.zeros(T + 1, dtype=np.int64)
    np.cumsum(per, out=first_row[1:])
    new = base[row_t] + np.where(split[row_t], np.arange(rows_total) - first_row[row_t], 0)
    # who delivered packet p to router r: the row with dst = r carrying p (unique)
    delivered = schedule.dst[row_t] * M + row_p
    order = np.argsort(delivered, kind="stable")
    ordered = delivered[order]
    if len(ordered) > 1 and np.any(ordered[1:] == ordered[:-1]):
        raise ValueError("one_packet_per_transfer: a packet is delivered twice to one router")
    sender = schedule.src[row_t]
    needs = schedule.origin[row_p] != sender
    wanted = sender[needs] * M + row_p[needs]
    pos = np.minimum(np.searchsorted(ordered, wanted), max(len(ordered) - 1, 0))
    if len(wanted) and np.any(ordered[pos] != wanted):
        raise ValueError("one_packet_per_transfer: a transfer carries a packet its sender never receives")
    total = int(base[-1])
    pairs = np.unique(new[needs] << 32 | new[order[pos]]) if len(wanted) else np.zeros(0, np.int64)
    after_ptr = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs >> 32, minlength=total), out=after_ptr[1:])
    # ranges: touching packets of one new transfer merged
    starts = np.ones(rows_total, dtype=bool)
    if rows_total:
        starts[1:] = (new[1:] != new[:-1]) | (row_p[1:] != row_p[:-1] + 1)
    heads = np.flatnonzero(starts)
    range_ptr = np.zeros(total + 1, dtype=np.int64)
    np.cumsum(np.bincount(new[heads], minlength=total), out=range_ptr[1:])
    return replace(schedule, src=np.repeat(schedule.src, size), dst=np.repeat(schedule.dst, size),
                   range_ptr=range_ptr, range_first=row_p[heads], range_count=np.diff(np.append(heads, rows_total)),
                   after_ptr=after_ptr, after_ids=pairs & 0xFFFFFFFF, step=None)


def _distinct_pairs(transfer: np.ndarray, dep: np.ndarray) -> np.ndarray:
    """Rows ``(transfer, dep)`` without repeats of the previous row (reads come row by row)."""
    new = np.ones(len(transfer), dtype=bool)
    new[1:] = (transfer[1:] != transfer[:-1]) | (dep[1:] != dep[:-1])
    return np.stack([transfer[new], dep[new]], axis=1)


def _runs(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Maximal runs of True in each row of ``flags``: (row, first column, column after the last)."""
    padded = np.zeros((flags.shape[0], flags.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = flags
    step = np.diff(padded, axis=1)
    rows, begin = np.nonzero(step == 1)
    _, end = np.nonzero(step == -1)
    return rows, begin, end


# -- operations, each on many supernodes at once ------------------------------------------------

def _keys(prefix: np.ndarray, op: int, edge: np.ndarray) -> np.ndarray:
    """Key rows ``(phase, position, op, edge)`` for every (operation, edge) pair."""
    prefix = np.asarray(prefix, dtype=np.int64).reshape(-1, 2)
    k = np.empty((len(prefix), len(edge), KEY_WIDTH), dtype=np.int64)
    k[:, :, 0:2] = prefix[:, None, :]
    k[:, :, 2] = op
    k[:, :, 3] = edge[None, :]
    return k.reshape(-1, KEY_WIDTH)


def router_packet_collection(plan: Plan, supernodes, local_roots, key_prefix, op: int = 0) -> None:
    """Plan RPC(A, m) (Algorithm 1) in several supernodes at once.

    Everything the routers of supernode ``supernodes[i]`` hold ends at its router ``local_roots[i]``.

    Parameters
    ----------
    plan : Plan
        The plan, extended in place.
    supernodes : array_like of int
        The supernodes.
    local_roots : array_like of int
        The collecting local router of each.
    key_prefix : array_like
        ``(phase, position)`` of each.
    op : int, default 0
        Operation number in the keys.
    """
    a = plan.view.a
    supernodes = np.atleast_1d(np.asarray(supernodes, dtype=np.int64))
    local_roots = np.broadcast_to(np.asarray(local_roots, dtype=np.int64), supernodes.shape)
    child, parent, height, _ = _template(a)
    base = (supernodes * a)[:, None]
    for level in np.unique(height):
        edges = np.flatnonzero(height == level)
        u = (base + _positions_to_routers(child[edges][None, :], local_roots, a)).ravel()
        v = (base + _positions_to_routers(parent[edges][None, :], local_roots, a)).ravel()
        offer_blocks, offer_local = plan.held_rows(u)
        plan.send(u, v, offer_blocks, offer_local, _keys(key_prefix, op, edges))


def router_packet_distribution(plan: Plan, supernodes, local_roots, offer_blocks, offer_local,
                               key_prefix, op: int = 1) -> None:
    """Plan RPD(A, m) in several supernodes at once: each router gets what it lacks of the offer.

    The offer of operation ``i`` is the rows ``offer_blocks[i]`` (whole supernode blocks) and
    ``offer_local[i]`` (packets of that supernode), held by its router ``local_roots[i]``.

    Parameters
    ----------
    plan : Plan
        The plan, extended in place.
    supernodes : array_like of int
        The supernodes.
    local_roots : array_like of int
        The distributing local router of each.
    offer_blocks, offer_local : numpy.ndarray
        The offers.
    key_prefix : array_like
        ``(phase, position)`` of each.
    op : int, default 1
        Operation number in the keys.
    """
    a = plan.view.a
    supernodes = np.atleast_1d(np.asarray(supernodes, dtype=np.int64))
    local_roots = np.broadcast_to(np.asarray(local_roots, dtype=np.int64), supernodes.shape)
    child, parent, _, depth = _template(a)
    base = (supernodes * a)[:, None]
    order = np.arange(len(child))[::-1]  # RPD walks Algorithm 1's edges backwards
    for level in np.unique(depth):
        edges = order[depth[order] == level]
        u = (base + _positions_to_routers(parent[edges][None, :], local_roots, a)).ravel()
        v = (base + _positions_to_routers(child[edges][None, :], local_roots, a)).ravel()
        rows = np.repeat(np.arange(len(supernodes)), len(edges))
        plan.send(u, v, np.asarray(offer_blocks)[rows], np.asarray(offer_local)[rows],
                  _keys(key_prefix, op, len(child) - 1 - edges))


def spc_tree(view: SupernodeView, root: int) -> tuple[np.ndarray, list[int]]:
    """Build Algorithm 2's breadth-first tree of supernodes.

    Neighbours are scanned in ascending index, so a supernode is served by the first tree node (in order)
    adjacent to it.

    Parameters
    ----------
    view : SupernodeView
        The supernodes.
    root : int
        The root supernode.

    Returns
    -------
    tuple
        ``(parent, order)``: parent of every supernode (-1 at the root) and the BFS order.
    """
    parent = np.full(view.num_supernodes, -2, dtype=np.int64)
    parent[root] = -1
    order = [root]
    head = 0
    while head < len(order):
        s = order[head]
        head += 1
        for t in view.neighbours_of(s):
            if parent[t] == -2:
                parent[t] = s
                order.append(int(t))
    return parent, order


def subtree_blocks(view: SupernodeView, parent: np.ndarray, order: list[int]) -> np.ndarray:
    """Tabulate the subtrees of the SPC tree: ``sub[s, j]`` says supernode ``j`` lies in the subtree of ``s``.

    Parameters
    ----------
    view : SupernodeView
        The supernodes.
    parent : numpy.ndarray
        Parent of every supernode.
    order : list of int
        BFS order.

    Returns
    -------
    numpy.ndarray
        Boolean ``(S, S)``.
    """
    count = view.num_supernodes
    sub = np.eye(count, dtype=bool)
    depth = _depths(parent, order)
    for level in range(int(depth.max(initial=0)), 0, -1):  # deepest first, one batch per depth
        kids = np.flatnonzero(depth == level)
        np.logical_or.at(sub, parent[kids], sub[kids])
    return sub


def _depths(parent: np.ndarray, order: list[int]) -> np.ndarray:
    depth = np.zeros(len(parent), dtype=np.int64)
    for s in order[1:]:
        depth[s] = depth[parent[s]] + 1
    return depth


def _link_routers(view: SupernodeView, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Global index of the router of ``s[i]`` linked to supernode ``t[i]`` (vectorised ``router_to``)."""
    count = view.num_supernodes
    owner = np.repeat(np.arange(count, dtype=np.int64), np.diff(view.nbr_ptr))
    keys = owner * count + view.neighbours
    pos = np.searchsorted(keys, s * count + t)
    if np.any(pos >= len(keys)) or np.any(keys[np.minimum(pos, len(keys) - 1)] != s * count + t):
        raise ValueError("supernodes are not adjacent")
    return s * view.a + view.attach[pos]


def _own_block(view: SupernodeView, supernodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offer rows of the whole block of each supernode."""
    blocks = np.zeros((len(supernodes), view.num_supernodes), dtype=bool)
    blocks[np.arange(len(supernodes)), supernodes] = True
    return blocks, np.zeros((len(supernodes), view.a), dtype=bool)


def gather_inside(plan: Plan, supernodes, phase: int = 0, local_root: int = 0) -> None:
    """Plan RPC then RPD inside each supernode: every router gets its supernode's packets.

    Parameters
    ----------
    plan : Plan
        The plan, extended in place.
    supernodes : array_like of int
        The supernodes.
    phase : int, default 0
        Phase number in the keys.
    local_root : int, default 0
        The local router that collects and distributes.
    """
    view = plan.view
    supernodes = np.atleast_1d(np.asarray(supernodes, dtype=np.int64))
    prefix = np.stack([np.full(len(supernodes), phase), np.arange(len(supernodes))], axis=1)
    router_packet_collection(plan, supernodes, local_root, prefix, op=0)
    router_packet_distribution(plan, supernodes, local_root, *_own_block(view, supernodes), prefix, op=1)


def supernode_packet_collection(plan: Plan, root: int, router_first: bool = False,
                                tree: tuple[np.ndarray, list[int]] | None = None, phase: int = 1) -> None:
    """Plan SPC(U, A): every other supernode's packets reach every router of ``root``.

    SPC(U, A): every other supernode's packets reach every router of ``root``.

    Supernode-first (Algorithm 2, used by SFATA): a supernode collects what it
    holds into the router linked to its parent with RPC and passes it on.
    Router-first (the collection loop of Algorithm 4, RFATA): packets arriving
    at a supernode are first spread to all its routers with RPD, and the
    router linked to the parent forwards them (it then holds them already).
    At the root the packets of each branch are spread with RPD(A, m).
    Supernodes are taken deepest first (reversed breadth-first order), all
    supernodes of one depth in one batch.

    Parameters
    ----------
    plan : Plan
        The plan, extended in place.
    root : int
        The collecting supernode.
    router_first : bool, default False
        Spread packets inside every supernode on arrival (RFATA) instead of collecting them (SFATA).
    tree : tuple, optional
        ``(parent, order)`` of :func:`spc_tree` (default: made here).
    phase : int, default 1
        Phase number in the keys.
    """
    view, a = plan.view, plan.view.a
    parent, order = tree or spc_tree(view, root)
    sub = subtree_blocks(view, parent, order)
    depth = _depths(parent, order)
    position = np.empty(view.num_supernodes, dtype=np.int64)
    position[np.asarray(order[1:][::-1], dtype=np.int64)] = np.arange(len(order) - 1)
    for level in range(int(depth.max(initial=0)), 0, -1):
        s = np.flatnonzero(depth == level)
        s = s[np.argsort(position[s])]
        p = parent[s]
        exit_router, entry = _link_routers(view, s, p), _link_routers(view, p, s)
        prefix = np.stack([np.full(len(s), phase), position[s]], axis=1)
        if not router_first:
            router_packet_collection(plan, s, exit_router % a, prefix, op=0)
        none = np.zeros((len(s), a), dtype=bool)
        plan.send(exit_router, entry, sub[s], none, _keys(prefix, 1, np.zeros(1, np.int64)))
        spread = np.ones(len(s), dtype=bool) if router_first else p == root
        router_packet_distribution(plan, p[spread], entry[spread] % a, sub[s][spread], none[spread],
                                   prefix[spread], op=2)


def supernode_packet_distribution(plan: Plan, root: int, offer_blocks: np.ndarray,
                                  tree: tuple[np.ndarray, list[int]] | None = None, phase: int = 2) -> None:
    """Plan SPD(U, A): blocks held by every router of ``root`` reach every router.

    SPD(U, A): the blocks ``offer_blocks`` (held by every router of ``root``) reach every router.

    The inverse of SPC: down the same tree (breadth-first order, one batch
    per depth), the router of the parent linked to a child supernode sends it
    what it lacks, and RPD spreads that inside.

    Parameters
    ----------
    plan : Plan
        The plan, extended in place.
    root : int
        The distributing supernode.
    offer_blocks : numpy.ndarray
        Supernode flags: the blocks to distribute.
    tree : tuple, optional
        ``(parent, order)`` of :func:`spc_tree` (default: made here).
    phase : int, default 2
        Phase number in the keys.
    """
    view, a = plan.view, plan.view.a
    parent, order = tree or spc_tree(view, root)
    depth = _depths(parent, order)
    position = np.empty(view.num_supernodes, dtype=np.int64)
    position[np.asarray(order[1:], dtype=np.int64)] = np.arange(len(order) - 1)
    offer = np.broadcast_to(np.asarray(offer_blocks, dtype=bool), (view.num_supernodes,))
    for level in range(1, int(depth.max(initial=0)) + 1):
        s = np.flatnonzero(depth == level)
        s = s[np.argsort(position[s])]
        p = parent[s]
        entry = _link_routers(view, s, p)
        prefix = np.stack([np.full(len(s), phase), position[s]], axis=1)
        rows = np.broadcast_to(offer, (len(s), view.num_supernodes))
        none = np.zeros((len(s), a), dtype=bool)
        plan.send(_link_routers(view, p, s), entry, rows, none, _keys(prefix, 0, np.zeros(1, np.int64)))
        router_packet_distribution(plan, s, entry % a, rows, none, prefix, op=1)
