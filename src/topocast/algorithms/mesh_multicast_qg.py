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

How the messages travel (``routing``; see ``docs/multicast.md``):

* ``routing="disjoint-paths"`` (default; ``"hamiltonian"`` is the same
  value under its older name): the algorithm of Theorem 1's proof.  The
  source reaches the leaders on *two disjoint paths* (Fig. 2a): Lin and
  Ni's dual-path worms, one through the leaders above the source's snake
  label on the high-channel subnetwork, one through those below on the
  low-channel subnetwork, so the two never share a channel.  Each leader
  serves the rest of its group the same way (Fig. 2b): at most two worms.
  Every job therefore fits one start-up (four injection channels), and a
  multicast pays exactly two start-ups on its longest chain when some group
  has more than one destination (one when every group is a single node),
  never more.  Deadlock-free like dual-path: every worm stays in one
  subnetwork, where labels rise (fall) strictly.
* ``routing="ecube"`` (our alternative, on the paper's stated base
  routing): each phase sends column-path worms
  (:func:`column_path_worms`: e-cube paths, at most two per column),
  deadlock-free like column-path.  The source's phase needs one worm per
  column-and-side of the leaders, often more than four, and our cost model
  charges one start-up per batch of ``worms_per_startup`` worms (default
  4), so this variant pays more than two start-ups whenever a phase has
  more than four worms (``startups_max`` reports it; ``message_passing_steps``
  stays <= 2).

A leader pays the start-up and, by default, the same preparation time as
the source (``leader_prep``), the conservative reading of "the source node
and the selected nodes consume the preparation time".
"""

from __future__ import annotations

from ..errors import TopocastError
from ..registry import Param
from ..topology.core import Topology
from .mesh_multicast import column_path_worms, dual_path_worms, register_multicast
from .mesh_routing import labels_for, mesh_dims


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
    """Phases 1-2 on an area: divisor dimension first, then the others in order."""
    points = [coords[m] for m in members]
    div = _divisor(points, box)
    order = [div] + [i for i in range(len(box)) if i != div]
    return _halve(members, coords, box, order)


def qualified_groups(source: tuple[int, ...], coords: list[tuple[int, ...]], nodes: list[int],
                     threshold: float = 0.5) -> tuple[list[list[int]], list[dict]]:
    """Final groups (lists of indices into ``coords``) and the per-primary-group figures.

    ``nodes`` breaks distance ties (lower node index first).
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
    """The two-start-up plan of one multicast (``worms_of(node, dests)`` builds each start-up's worms)."""
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


#: values of ``routing``: the Theorem 1 worms (default, and its older name) and the e-cube alternative
ROUTINGS = ("disjoint-paths", "hamiltonian", "ecube")


def qg_planner(topology: Topology, prep: int, threshold: float = 0.5, leader_prep: int | None = None,
               routing: str = "disjoint-paths"):
    """The QG planner of ``topology``: ``planner(source, dests) -> plan`` (see :func:`qg_plan`)."""
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
    kw = dict(dims=tuple(dims), strides=tuple(strides), label=label, prep=prep, leader_prep=lp,
              threshold=threshold, worms_of=worms_of)
    return lambda source, dests: qg_plan(source, dests, **kw)


register_multicast(
    "multicast-qg", "qg", qg_planner,
    "Qualified Groups multicast (balanced destination groups, two disjoint paths per phase, two start-ups), "
    "wormhole load point",
    ("qualified-groups", "QG"),
    extra=(Param("threshold", "float", 0.5, "qualification threshold T", minimum=0),
           Param("leader_prep", "int", None, "preparation time at a group leader (default: prep)", minimum=0),
           Param("routing", "str", "disjoint-paths", "worms of both phases: 'disjoint-paths' (Theorem 1: "
                 "two disjoint dual-path worms per phase, so two start-ups; alias 'hamiltonian') or 'ecube' "
                 "(column-path worms on e-cube paths, a start-up per 4 worms)", choices=ROUTINGS)))
