"""Qualified Groups (QG) multicast, Al-Dubai et al. 2003, section 3.

Phases, as implemented (coordinates of the mesh; distances Manhattan):

1. *Multicast area*: the bounding box of the source and the destinations;
   per dimension ``l``, ``u`` and ``mid = ceil((l + u) / 2)``, so the lower
   half is ``[l, mid - 1]`` and the upper ``[mid, u]`` (the paper's
   ``(l + u) / 2`` is not an integer for odd spans; this keeps the halves
   disjoint and covering).
2. *Divisor dimension* (equation 1): the dimension ``i`` minimising
   ``N_i = |#dests in upper half - #dests in lower half|`` (ties: the wider
   dimension, then the lower index).  The area is halved along it, then each
   half is halved along the next dimension at the middle of *that half's*
   own area (the bounding box of its destinations), and so on: at most
   ``2^n`` primary groups, empty ones dropped (equation 2).
3. *Qualification*: for group ``G``, ``p_n`` and ``p_f`` are its destinations
   nearest to and furthest from the source (ties: lower node index);
   ``Int = dist(p_f, p_n) + |G|`` (3), ``Ext = dist(p_n, source)`` (4),
   ``W = Int + Ext`` (6), ``W_av`` their mean (5), ``QP = |W - W_av| / W_av``
   (7).  A group with ``QP > T`` (default 0.5) is unqualified and is split
   once more, by phases 1-2 applied to its own area, into at most ``2^n``
   groups (a one-destination group stays whole).  The split is not repeated.
4. *Two start-ups* (Theorem 1 and its proof, Figs. 2a/2b): the source
   sends to every group's ``p_n`` with one start-up, and every ``p_n`` that
   has the whole message forwards it to the rest of its group with one more.

How the messages travel (``routing``; see ``docs/multicast.md``).  The
paper states e-cube as QG's base routing, while Theorem 1's proof sends
"two disjoint paths" from the source; we run both readings:

* ``routing="disjoint"`` (default; ``"disjoint-paths"`` and ``"hamiltonian"``
  are older names of the same value): the algorithm of Theorem 1's proof.
  The source reaches the leaders on *two disjoint paths* (Fig. 2a): Lin and
  Ni's dual-path worms, one through the leaders above the source's snake
  label on the high-channel subnetwork, one through those below on the
  low-channel subnetwork, so the two never share a channel.  Each leader
  serves the rest of its group the same way (Fig. 2b): at most two worms.
  Every job therefore fits one start-up (four injection channels), and a
  multicast pays exactly two start-ups on its longest chain when some group
  has more than one destination (one when every group is a single node),
  never more.  Deadlock-free like dual-path: every worm stays in one
  subnetwork, where labels rise (fall) strictly.
* ``routing="ecube"`` (the paper's stated base routing): each step sends
  column-path worms (:func:`column_path_worms`: e-cube paths, at most two
  per column), deadlock-free like column-path, and one start-up launches
  every worm of a step (the model's ``worms_per_startup`` defaults to the
  largest destination count, which no step's worms exceed), so a multicast
  pays two start-ups, as Theorem 1 says.  The worms still leave through the
  four injection channels, a later one when an earlier one's tail has left
  (``flits + 1`` cycles, 33 at the paper's 32 flits, which is also one
  start-up).  ``worms_per_startup=4`` charges a start-up per four worms
  instead (``startups_max`` then reports more than 2; ``message_passing_steps``
  stays <= 2).

The groups are computed per multicast in plain Python
(:func:`qualified_groups`, the reference) and, for a whole workload, by a
numba kernel of the same rules (:func:`group_arrays`); the tests check they
agree.

A leader pays the start-up and, by default, the same preparation time as
the source (``leader_prep``), the conservative reading of "the source node
and the selected nodes consume the preparation time".
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..registry import Param
from ..sim.models import Model
from ..topology.core import Topology
from .mesh_multicast import (
    column_path_worms,
    dual_path_worms,
    register_multicast,
    router_config,
    split_worms,
)
from .mesh_routing import labels_for, mesh_dims
from .worm_traffic import BatchPlanner, JobArrays


def _coords(node: int, strides: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    node = int(node)
    return tuple(node // s % k for s, k in zip(strides, dims, strict=False))


def _dist(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    if len(a) == 2:
        return abs(a[0] - b[0]) + abs(a[1] - b[1])
    return sum(abs(x - y) for x, y in zip(a, b, strict=False))


def _divisor(points: list[tuple[int, ...]], box: list[tuple[int, int]]) -> int:
    """Equation (1): the dimension splitting ``points`` most evenly at the box middle."""
    best, best_key = 0, None
    for i, (lo, hi) in enumerate(box):
        mid = (lo + hi + 1) // 2
        upper = sum(1 for p in points if p[i] >= mid)
        key = (abs(2 * upper - len(points)), -(hi - lo), i)
        if best_key is None or key < best_key:
            best, best_key = i, key
    return best


def _box(points: list[tuple[int, ...]]) -> list[tuple[int, int]]:
    return [(min(p[i] for p in points), max(p[i] for p in points)) for i in range(len(points[0]))]


def _halve(members: list[int], coords: list[tuple[int, ...]], box, dims_left: list[int]) -> list[list[int]]:
    """Halve ``members`` along ``dims_left[0]`` at the middle of ``box``, then recurse on each half."""
    if not dims_left or len(members) <= 1:
        return [members]
    i = dims_left[0]
    lo, hi = box[i]
    mid = (lo + hi + 1) // 2
    low = [m for m in members if coords[m][i] < mid]
    high = [m for m in members if coords[m][i] >= mid]
    groups = []
    for half in (low, high):
        if half:
            groups += _halve(half, coords, _box([coords[m] for m in half]), dims_left[1:])
    return groups


def partition(members: list[int], coords: list[tuple[int, ...]], box) -> list[list[int]]:
    """Split destinations into primary groups (phases 1-2 on an area): divisor dimension first, then the others.

    Parameters
    ----------
    members : list of int
        Indices into ``coords``.
    coords : list of tuple of int
        Coordinates of the destinations.
    box : list of tuple of int
        The area: ``(low, high)`` per dimension.

    Returns
    -------
    list of list of int
        The groups, empty ones dropped.
    """
    points = [coords[m] for m in members]
    div = _divisor(points, box)
    order = [div] + [i for i in range(len(box)) if i != div]
    return _halve(members, coords, box, order)


def qualified_groups(source: tuple[int, ...], coords: list[tuple[int, ...]], nodes: list[int],
                     threshold: float = 0.5) -> tuple[list[list[int]], list[dict]]:
    """Form the final qualified groups of one multicast (phases 1-3).

    Parameters
    ----------
    source : tuple of int
        Coordinates of the source.
    coords : list of tuple of int
        Coordinates of the destinations.
    nodes : list of int
        Node index of each destination (breaks distance ties, lower first).
    threshold : float, default 0.5
        Qualification threshold ``T``: a group with ``QP > T`` is split once more.

    Returns
    -------
    tuple
        ``(final groups, figures)``: lists of indices into ``coords``, and per primary group its internal,
        external and total weight and ``QP``.
    """
    everyone = list(range(len(coords)))
    area = _box(coords + [source])
    primary = partition(everyone, coords, area)

    def weight(group):
        near = min(group, key=lambda m: (_dist(coords[m], source), nodes[m]))
        far = max(group, key=lambda m: (_dist(coords[m], source), -nodes[m]))
        internal = _dist(coords[far], coords[near]) + len(group)
        external = _dist(coords[near], source)
        return near, far, internal, external

    figures = []
    for g in primary:
        near, far, internal, external = weight(g)
        figures.append({"members": g, "nearest": near, "furthest": far, "internal": internal,
                        "external": external, "weight": internal + external})
    average = sum(f["weight"] for f in figures) / len(figures)
    final: list[list[int]] = []
    for f in figures:
        f["qp"] = abs(f["weight"] - average) / average if average > 0 else 0.0
        f["qualified"] = f["qp"] <= threshold
        if f["qualified"] or len(f["members"]) == 1:
            final.append(f["members"])
        else:
            g = f["members"]
            final += partition(g, coords, _box([coords[m] for m in g]))
    return final, figures


def qg_plan(source: int, dests, *, dims, strides, label, prep: int, leader_prep: int, threshold: float,
            worms_of) -> list:
    """Plan one multicast with two start-ups: the source to every group's leader, each leader to its group.

    Parameters
    ----------
    source : int
        The source node.
    dests : iterable of int
        The destinations.
    dims : tuple of int
        The mesh's sides.
    strides : sequence of int
        Node-index stride of every dimension.
    label : numpy.ndarray
        Snake label of every node.
    prep : int
        Preparation time of the source's job, in cycles.
    leader_prep : int
        Preparation time of a leader's job, in cycles.
    threshold : float
        Qualification threshold.
    worms_of : callable
        ``worms_of(node, dests)``: the worms of one start-up.

    Returns
    -------
    list
        Jobs ``(node, after, prep, worms)``: launched at ``node`` when destination ``after`` has the message
        (-1: at generation), after ``prep`` cycles, each worm ``(routing, destinations)``.
    """
    nodes = [int(d) for d in dests]
    coords = [_coords(d, strides, dims) for d in nodes]
    src = _coords(source, strides, dims)
    groups, _ = qualified_groups(src, coords, nodes, threshold)
    leaders = []
    relays = []
    for g in groups:
        near = min(g, key=lambda m: (_dist(coords[m], src), nodes[m]))
        leader = nodes[near]
        leaders.append(leader)
        rest = [nodes[m] for m in g if m != near]
        if rest:
            relays.append((leader, leader, leader_prep, worms_of(leader, rest)))
    return [(source, -1, prep, worms_of(source, leaders))] + relays


# -- the same rules for a whole workload (numba) ------------------------------------------------
@nb.njit(cache=True)
def _dist_nb(a, b):
    total = 0
    for i in range(len(a)):
        total += abs(a[i] - b[i])
    return total


@nb.njit(cache=True)
def _box_nb(points):
    n = points.shape[1]
    lo = points[0].copy()
    hi = points[0].copy()
    for r in range(1, points.shape[0]):
        for i in range(n):
            lo[i] = min(lo[i], points[r, i])
            hi[i] = max(hi[i], points[r, i])
    return lo, hi


@nb.njit(cache=True)
def _partition_nb(points, lo, hi):
    """Split points into primary groups (phases 1-2, numba).

    Phases 1-2 on ``points`` in the area ``[lo, hi]``: a group number per point, groups numbered in the
    order :func:`partition` lists them; returns ``(group, number of groups)``.
    """
    k, n = points.shape
    # equation (1): the divisor dimension
    div, best0, best1 = 0, 1 << 62, 0
    for i in range(n):
        mid = (lo[i] + hi[i] + 1) // 2
        upper = 0
        for r in range(k):
            if points[r, i] >= mid:
                upper += 1
        key0, key1 = abs(2 * upper - k), -(hi[i] - lo[i])
        if key0 < best0 or (key0 == best0 and key1 < best1):
            div, best0, best1 = i, key0, key1
    code = np.zeros(k, dtype=np.int64)
    groups = 1
    for level in range(n):
        i = div if level == 0 else (level - 1 if level - 1 < div else level)
        glo = np.empty(groups, dtype=np.int64)
        ghi = np.empty(groups, dtype=np.int64)
        size = np.zeros(groups, dtype=np.int64)
        for g in range(groups):
            glo[g] = 1 << 62
            ghi[g] = -(1 << 62)
        for r in range(k):
            g = code[r]
            size[g] += 1
            glo[g] = min(glo[g], points[r, i])
            ghi[g] = max(ghi[g], points[r, i])
        present = np.zeros(2 * groups, dtype=np.int64)
        for r in range(k):
            g = code[r]
            # the area is halved at its middle, a half at the middle of its own bounding box
            mid = (lo[i] + hi[i] + 1) // 2 if level == 0 else (glo[g] + ghi[g] + 1) // 2
            bit = 1 if (size[g] > 1 and points[r, i] >= mid) else 0
            code[r] = 2 * g + bit
            present[code[r]] = 1
        rank = np.empty(2 * groups, dtype=np.int64)   # (a loop: numba's cumsum and full compile slowly)
        total = 0
        for g in range(2 * groups):
            total += present[g]
            rank[g] = total - 1
        for r in range(k):
            code[r] = rank[code[r]]
        groups = total
    return code, groups


@nb.njit(cache=True)
def _rows_nb(table, rows, k):
    """``table[rows[:k]]`` (a loop: numba's fancy indexing costs a second of compilation)."""
    out = np.empty((k, table.shape[1]), dtype=table.dtype)
    for r in range(k):
        for c in range(table.shape[1]):
            out[r, c] = table[rows[r], c]
    return out


@nb.njit(cache=True)
def _groups_nb(ptr, ids, src, coords, threshold, group, leader, count):
    """Form the final groups of every multicast (numba).

    Final groups of every multicast: ``group[s]`` numbers slot ``s``'s group within its multicast in the
    order of :func:`qualified_groups`, ``leader[s]`` marks each group's nearest destination; ``count[m]``
    is the number of groups of multicast ``m``.
    """
    for m in range(len(src)):
        lo = ptr[m]
        k = ptr[m + 1] - lo
        if k == 0:
            count[m] = 0
            continue
        nodes = ids[lo:lo + k]
        points = _rows_nb(coords, nodes, k)
        s = coords[src[m]]
        blo, bhi = _box_nb(points)
        for i in range(len(s)):
            blo[i] = min(blo[i], s[i])
            bhi[i] = max(bhi[i], s[i])
        prim, nprim = _partition_nb(points, blo, bhi)
        weight = np.zeros(nprim, dtype=np.int64)
        near = np.full(nprim, -1, dtype=np.int64)
        far = np.full(nprim, -1, dtype=np.int64)
        size = np.zeros(nprim, dtype=np.int64)
        dist = np.empty(k, dtype=np.int64)
        for r in range(k):
            dist[r] = _dist_nb(points[r], s)
            g = prim[r]
            size[g] += 1
            if near[g] < 0 or dist[r] < dist[near[g]] or (dist[r] == dist[near[g]] and nodes[r] < nodes[near[g]]):
                near[g] = r
            if far[g] < 0 or dist[r] > dist[far[g]] or (dist[r] == dist[far[g]] and nodes[r] < nodes[far[g]]):
                far[g] = r
        total = 0
        for g in range(nprim):
            weight[g] = _dist_nb(points[far[g]], points[near[g]]) + size[g] + dist[near[g]]
            total += weight[g]
        average = total / nprim
        final = np.empty(k, dtype=np.int64)
        made = 0
        for g in range(nprim):
            qp = abs(weight[g] - average) / average if average > 0 else 0.0
            members = np.empty(size[g], dtype=np.int64)
            j = 0
            for r in range(k):
                if prim[r] == g:
                    members[j] = r
                    j += 1
            if qp <= threshold or size[g] == 1:
                for j in range(len(members)):
                    final[members[j]] = made
                made += 1
            else:
                sub_points = _rows_nb(points, members, len(members))
                slo, shi = _box_nb(sub_points)
                sub, nsub = _partition_nb(sub_points, slo, shi)
                for j in range(len(members)):
                    final[members[j]] = made + sub[j]
                made += nsub
        best = np.full(made, -1, dtype=np.int64)
        for r in range(k):
            g = final[r]
            b = best[g]
            if b < 0 or dist[r] < dist[b] or (dist[r] == dist[b] and nodes[r] < nodes[b]):
                best[g] = r
        for r in range(k):
            group[lo + r] = final[r]
            leader[lo + r] = 1 if best[final[r]] == r else 0
        count[m] = made


def node_coords(dims: tuple[int, ...]) -> np.ndarray:
    """Give the coordinates of every node of a mesh (first coordinate most significant).

    Parameters
    ----------
    dims : tuple of int
        The mesh's sides.

    Returns
    -------
    numpy.ndarray
        ``N x n``, C-contiguous.
    """
    n = int(np.prod(dims))
    nodes = np.arange(n, dtype=np.int64)
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    return np.ascontiguousarray(np.stack([(nodes // s) % k for s, k in zip(strides, dims, strict=True)], axis=1))


def group_arrays(dims: tuple[int, ...], sources, ptr, ids, threshold: float = 0.5):
    """Form the qualified groups of many multicasts at once (vectorised :func:`qualified_groups`).

    :func:`qualified_groups` for many multicasts at once: per destination slot its final group number
    (within its multicast, in the reference's order) and whether it leads its group; per multicast the
    number of groups.  Multicast ``m`` goes from ``sources[m]`` to ``ids[ptr[m]:ptr[m+1]]``.

    Parameters
    ----------
    dims : tuple of int
        The mesh's sides.
    sources : numpy.ndarray
        Source of every multicast.
    ptr, ids : numpy.ndarray
        CSR of every multicast's destinations.
    threshold : float, default 0.5
        Qualification threshold.

    Returns
    -------
    group, leader, count : numpy.ndarray
        Group number and leadership of every destination slot, and the number of groups of every multicast.
    """
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    group = np.empty(len(ids), dtype=np.int64)
    leader = np.empty(len(ids), dtype=np.int64)
    count = np.empty(len(sources), dtype=np.int64)
    _groups_nb(np.ascontiguousarray(ptr, dtype=np.int64), ids, np.ascontiguousarray(sources, dtype=np.int64),
               node_coords(tuple(dims)), float(threshold), group, leader, count)
    return group, leader.astype(bool), count


def qg_batch(dims, label, prep: int, leader_prep: int, threshold: float, split: str):
    """Make the batch planner of QG: :func:`qg_plan` for a whole workload.

    Parameters
    ----------
    dims : tuple of int
        The mesh's sides.
    label : numpy.ndarray
        Snake label of every node.
    prep : int
        Preparation time of a source's job, in cycles.
    leader_prep : int
        Preparation time of a leader's job, in cycles.
    threshold : float
        Qualification threshold.
    split : str
        How a start-up's destinations become worms (``dual`` or ``column``; :func:`split_worms`).

    Returns
    -------
    callable
        ``batch(sources, ptr, ids) -> JobArrays``.
    """

    def batch(sources, ptr, ids) -> JobArrays:
        sources = np.asarray(sources, dtype=np.int64)
        ids = np.asarray(ids, dtype=np.int64)
        m = len(sources)
        group, leader, count = group_arrays(dims, sources, ptr, ids, threshold)
        slot_mc = np.repeat(np.arange(m, dtype=np.int64), np.diff(ptr))
        goff = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(count, out=goff[1:])
        gid = goff[slot_mc] + group                       # global group of every slot
        size = np.bincount(gid, minlength=int(goff[-1]))
        lead_node = np.zeros(int(goff[-1]), dtype=np.int64)
        lead_node[gid[leader]] = ids[leader]
        relay = np.flatnonzero(size > 1)                  # groups with a second step, in multicast order
        relay_mc = np.repeat(np.arange(m, dtype=np.int64), np.diff(goff))[relay]
        # jobs of multicast m: its source's job, then one relay per group with more than one destination
        job_mc = np.concatenate([np.arange(m, dtype=np.int64), relay_mc])
        job_rank = np.concatenate([np.zeros(m, dtype=np.int64), relay + 1])
        order = np.lexsort((job_rank, job_mc))
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order), dtype=np.int64)
        source_job, relay_job = position[:m], np.full(int(goff[-1]), -1, dtype=np.int64)
        relay_job[relay] = position[m:]
        node = np.concatenate([sources, lead_node[relay]])[order]
        after = np.concatenate([np.full(m, -1, dtype=np.int64), lead_node[relay]])[order]
        job_prep = np.concatenate([np.full(m, prep, dtype=np.int64),
                                   np.full(len(relay), leader_prep, dtype=np.int64)])[order]
        # every destination is served by its multicast's source job (a leader) or its group's relay
        entry_job = np.where(leader, source_job[slot_mc], relay_job[gid])
        by_job = np.argsort(entry_job, kind="stable")
        jptr = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(np.bincount(entry_job, minlength=len(order)), out=jptr[1:])
        worm_ptr, kind, dest_ptr, dests = split_worms(split, node, jptr, ids[by_job], label, tuple(dims))
        return JobArrays(mc=job_mc[order], node=node, after=after, prep=job_prep, worm_ptr=worm_ptr, kind=kind,
                         dest_ptr=dest_ptr, dests=dests)

    return batch


#: values of ``routing``: the two readings, then older names of ``disjoint``
ROUTINGS = ("disjoint", "ecube", "disjoint-paths", "hamiltonian")


def qg_planner(topology: Topology, prep: int, threshold: float = 0.5, leader_prep: int | None = None,
               routing: str = "disjoint") -> BatchPlanner:
    """Make the QG planner of a mesh.

    The QG planner of ``topology``: ``planner(source, dests) -> plan`` (see :func:`qg_plan`), and
    ``planner.batch`` for a whole workload.

    Parameters
    ----------
    topology : Topology
        A mesh.
    prep : int
        Preparation time of a source's job, in cycles.
    threshold : float, default 0.5
        Qualification threshold.
    leader_prep : int, optional
        Preparation time of a leader's job (default ``prep``).
    routing : str, default "disjoint"
        ``disjoint`` (Theorem 1's two disjoint paths) or ``ecube`` (older names ``disjoint-paths`` and
        ``hamiltonian`` are ``disjoint``).

    Returns
    -------
    BatchPlanner
        Per-multicast and whole-workload planners.

    Raises
    ------
    TopocastError
        For an unknown ``routing``.
    """
    if routing not in ROUTINGS:
        raise TopocastError(f"multicast-qg: parameter 'routing' must be one of {', '.join(ROUTINGS)}, "
                            f"got '{routing}'")
    dims = mesh_dims(topology)
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * dims[i + 1]
    label = labels_for(topology)
    lp = prep if leader_prep is None else leader_prep
    if routing == "ecube":
        worms_of = lambda node, seq: column_path_worms(node, seq, strides[0])  # noqa: E731
    else:  # two disjoint paths: one high-channel and one low-channel dual-path worm
        worms_of = lambda node, seq: dual_path_worms(node, seq, label)  # noqa: E731
    kw: dict[str, Any] = dict(dims=tuple(dims), strides=tuple(strides), label=label, prep=prep, leader_prep=lp,
              threshold=threshold, worms_of=worms_of)
    return BatchPlanner(lambda source, dests: qg_plan(source, dests, **kw),
                        qg_batch(tuple(dims), label, prep, lp, threshold, "column" if routing == "ecube" else "dual"))


def qg_model(params: dict) -> Model:
    """Make the model of a QG run.

    The router of a QG run: under ``routing=ecube`` one start-up launches every worm of a step unless
    ``worms_per_startup`` is given (no step has more worms than the largest destination count).

    Parameters
    ----------
    params : dict
        Resolved run parameters.

    Returns
    -------
    Model
        The wormhole router's model.
    """
    config = dict(params)
    if params.get("routing") == "ecube" and params.get("worms_per_startup") is None:
        config["worms_per_startup"] = max(1, int(params["destinations"]) + int(params.get("spread") or 0))
    return Model(router=router_config(config))


register_multicast(
    "multicast-qg", "qg", qg_planner,
    "Qualified Groups multicast (balanced destination groups, two message-passing steps, two start-ups), "
    "wormhole load point",
    ("qualified-groups", "QG"),
    extra=(Param("threshold", "float", 0.5, "qualification threshold T", minimum=0),
           Param("leader_prep", "int", None, "preparation time at a group leader (default: prep)", minimum=0),
           Param("routing", "str", "disjoint", "worms of both steps: 'disjoint' (Theorem 1's proof: two disjoint "
                 "dual-path worms per step; older names 'disjoint-paths', 'hamiltonian') or 'ecube' (the paper's "
                 "base routing: column-path worms on e-cube paths, one start-up per step unless "
                 "worms_per_startup is given)", choices=ROUTINGS)),
    model=qg_model)
