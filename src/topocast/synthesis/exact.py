"""The exact optimum on small networks: a time-indexed mixed-integer program solved by HiGHS (scipy.optimize.milp).

Class: schedules that send each message whole (no chunking), on the event
engine's model: a transfer of ``k`` messages holds its channel for
``t_s + k m t_w`` and arrives ``t_h`` later; all-port, or (any port limit) one
send and one receipt at a time per node, as the engine times it; half duplex
shares a link's two directions.

Why a time grid is exact: when ``t_s``, ``m t_w`` and ``t_h`` are whole
multiples of one unit ``delta``, every transfer of a schedule shifted as early
as it can go starts at 0 or at the end or arrival of another transfer, a sum
of those durations, so on the grid.  No optimum is lost; the grid is the
largest unit that divides the three costs, and a model without a coarse one
(more than :data:`MAX_SLOTS` slots up to the horizon) is refused.

Variables, for arc ``e`` and start slot ``t`` (up to the horizon, the best
schedule already known): ``x[e, t]`` a transfer starts; ``y[e, t, i]`` it
carries message ``i``; ``A[v, i]`` when ``i`` arrives at ``v``; ``T`` the
makespan.  Each node needing ``i`` receives it exactly once (a second receipt
can be dropped without slowing anything: WLOG), relays at most once; a
sender holds what it sends (``A[u, i] <= t``); ``A[v, i] >= t + a + b c + h``
for the transfer that brings it, ``c`` its message count; two transfers on one
channel, or (port limit) from one sender or into one receiver, do not overlap;
minimise ``T >= A[v, i]``.  Big-M constants are the horizon's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import TopocastError

if TYPE_CHECKING:
    from ..plans.schedule import Targets
    from ..sim.models import CostModel, PortModel
    from ..topology.core import Topology

#: most time slots up to the horizon, and most variables, an exact synthesis takes on
MAX_SLOTS = 400
MAX_VARIABLES = 60_000


@dataclass
class ExactPlan:
    """The solver's answer: transfers (arc, start slot, message ids), the slot unit and the proof."""

    src: np.ndarray
    dst: np.ndarray
    start: np.ndarray
    carried: list[list[int]]
    unit: float
    makespan: float
    dual_bound: float
    optimal: bool
    gap: float
    variables: int
    status: str


def grid(values: list[float], horizon: float) -> tuple[float, list[int]]:
    """The largest unit dividing every value (exact to 1e-9 relative), and the values in units."""
    fracs = [Fraction(v).limit_denominator(10**9) for v in values]
    nonzero = [f for f in fracs if f > 0]
    if not nonzero:
        raise TopocastError("exact: the model's start-up, message time and hop latency are all 0")
    scale = math.lcm(*[f.denominator for f in nonzero])
    unit = Fraction(math.gcd(*[int(f * scale) for f in nonzero]), scale)
    for v, f in zip(values, fracs, strict=True):
        if not math.isclose(float(f), v, rel_tol=1e-9, abs_tol=0.0):
            raise TopocastError(f"exact: cost {v!r} is not a ratio of small integers; the time grid needs one")
    slots = horizon / float(unit)
    if slots > MAX_SLOTS:
        raise TopocastError(f"exact: the time grid (unit {float(unit):.3g} s, the largest dividing start-up, message "
                            f"time and hop latency) needs {math.ceil(slots):,} slots up to the best known time, "
                            f"more than the {MAX_SLOTS} an exact synthesis takes; use coarser costs or a smaller "
                            "network")
    return float(unit), [int(f / unit) for f in fracs]


def solve(topology: Topology, origin: np.ndarray, targets: Targets, cost: CostModel, ports: PortModel,
          message_bytes: float, horizon: float, time_limit: float = 60.0, lower: float = 0.0) -> ExactPlan:
    """The optimal whole-message schedule of the messages ``origin`` (to ``targets``: "all" or one per message)
    with makespan at most ``horizon`` (seconds), or the best found within ``time_limit`` seconds (no
    transfers when none was found: ``makespan`` is then inf).  ``lower``: a proven lower bound (seconds)."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    unit, (a, b, h) = grid([cost.startup, message_bytes * cost.per_byte, cost.per_hop], horizon)
    H = int(math.floor(horizon / unit + 1e-9))
    n = topology.num_nodes
    asrc = topology.arc_sources.astype(np.int64)
    adst = topology.indices.astype(np.int64)
    E = len(adst)
    messages = [(int(o), None if isinstance(targets, str) else int(targets[i])) for i, o in enumerate(origin)]
    keep = [i for i, (o, t) in enumerate(messages) if t is None or t != o]
    from ..topology.metrics import all_distances

    dist = all_distances(topology).astype(np.int64)
    hop = a + b + h
    # needed[v, i]: v must end with message i; relay[v, i]: v may carry it on
    cols: dict[tuple[Any, ...], int] = {}
    lo: list[float] = []
    hi: list[float] = []
    integral: list[int] = []

    def var(key: tuple[Any, ...], upper: float = 1.0, integer: int = 1) -> int:
        cols[key] = len(lo)
        lo.append(0.0)
        hi.append(upper)
        integral.append(integer)
        return cols[key]

    starts = range(0, max(0, H - hop) + 1)
    ys: dict[tuple[int, int], list[int]] = {}
    for e in range(E):
        u, v = int(asrc[e]), int(adst[e])
        for t in starts:
            carried: list[int] = []
            for i in keep:
                o, target = messages[i]
                if v == o or t < dist[o, u] * hop:
                    continue
                finish = t + hop + (0 if target is None else dist[v, target] * hop)
                if finish > H:
                    continue
                carried.append(i)
            if carried:
                var(("x", e, t))
                ys[(e, t)] = carried
                for i in carried:
                    var(("y", e, t, i))
    for i in keep:
        o, target = messages[i]
        for v in range(n):
            if v != o:
                var(("A", v, i), float(H), 0)
    T = var(("T",), float(H), 0)
    lo[T] = float(math.ceil(lower / unit - 1e-9))
    if len(lo) > MAX_VARIABLES:
        raise TopocastError(f"exact: the program has {len(lo):,} variables, more than the {MAX_VARIABLES:,} an "
                            "exact synthesis takes; use a smaller network or a tighter time grid")
    rows: list[int] = []
    cidx: list[int] = []
    vals: list[float] = []
    rlo: list[float] = []
    rhi: list[float] = []

    def row(terms: list[tuple[int, float]], low: float, high: float) -> None:
        r = len(rlo)
        for c, w in terms:
            rows.append(r)
            cidx.append(c)
            vals.append(w)
        rlo.append(low)
        rhi.append(high)

    into: dict[tuple[int, int], list[tuple[int, int]]] = {}
    out_of: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for (e, t), carried in ys.items():
        x = cols[("x", e, t)]
        count = [(cols[("y", e, t, i)], b) for i in carried]
        row([(x, 1.0)] + [(c, -1.0) for c, _ in count], -np.inf, 0.0)          # no empty transfer
        big = t + a + h + b * len(carried)
        for i in carried:
            y = cols[("y", e, t, i)]
            row([(y, 1.0), (x, -1.0)], -np.inf, 0.0)
            v, u = int(adst[e]), int(asrc[e])
            into.setdefault((v, i), []).append((e, t))
            out_of.setdefault((u, i), []).append((e, t))
            # A[v, i] >= t + a + h + b * count - big (1 - y)
            row([(cols[("A", v, i)], 1.0)] + [(c, -w) for c, w in count] + [(y, -big)], t + a + h - big, np.inf)
            if u != messages[i][0]:
                # A[u, i] <= t + (H - t)(1 - y): the sender holds it
                row([(cols[("A", u, i)], 1.0), (y, H - t)], -np.inf, float(H))
    for i in keep:
        o, target = messages[i]
        for v in range(n):
            if v == o:
                continue
            recv = [cols[("y", e, t, i)] for e, t in into.get((v, i), [])]
            needed = target is None or target == v
            if needed:
                if not recv:
                    raise TopocastError("exact: no schedule within the horizon (the bound of the horizon is wrong)")
                row([(c, 1.0) for c in recv], 1.0, 1.0)
                row([(T, 1.0), (cols[("A", v, i)], -1.0)], 0.0, np.inf)
            else:
                row([(c, 1.0) for c in recv], 0.0, 1.0)
            for e, t in out_of.get((v, i), []):  # a relay sends only what it received
                row([(cols[("y", e, t, i)], 1.0)] + [(c, -1.0) for c in recv], -np.inf, 0.0)
    _conflicts(row, cols, ys, asrc, adst, topology, ports, a, b)
    nvar = len(lo)
    c = np.zeros(nvar)
    c[T] = 1.0
    A = coo_array((vals, (rows, cidx)), shape=(len(rlo), nvar)).tocsr()
    res = milp(c, integrality=np.asarray(integral), bounds=Bounds(lo, hi),
               constraints=LinearConstraint(A, rlo, rhi),
               options={"time_limit": float(time_limit), "disp": False, "mip_rel_gap": 0.0})
    dual = float(getattr(res, "mip_dual_bound", None) or lo[T])
    if res.x is None:
        return ExactPlan(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), [], unit, math.inf,
                         max(dual, lo[T]) * unit, False, math.inf, nvar, str(res.message))
    xs = res.x
    src: list[int] = []
    dst: list[int] = []
    start: list[float] = []
    picked: list[list[int]] = []
    for (e, t), ids in ys.items():
        if xs[cols[("x", e, t)]] > 0.5:
            src.append(int(asrc[e]))
            dst.append(int(adst[e]))
            start.append(t * unit)
            picked.append(sorted(i for i in ids if xs[cols[("y", e, t, i)]] > 0.5))
    # on the grid the optimum is a whole number of units, so the dual bound rounds up
    best = float(round(res.fun)) if abs(res.fun - round(res.fun)) < 1e-6 else float(res.fun)
    dual = max(float(math.ceil(dual - 1e-6)), lo[T])
    return ExactPlan(np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(start), picked, unit,
                     best * unit, min(dual, best) * unit, res.status == 0,
                     float(getattr(res, "mip_gap", 0.0) or 0.0), nvar, str(res.message))


def _conflicts(row: Callable[[list[tuple[int, float]], float, float], None], cols: dict[tuple[Any, ...], int],
               ys: dict[tuple[int, int], list[int]], asrc: np.ndarray, adst: np.ndarray, topology: Topology,
               ports: PortModel, a: int, b: int) -> None:
    """Two transfers sharing a resource (a channel; under a port limit a sender or a receiver) do not overlap:
    if both run, the earlier one, ``a + b count`` long, ends by the later one's start."""
    groups: dict[tuple[str, int], list[tuple[int, int]]] = {}
    rev = topology.reverse_arc
    for (e, t) in ys:
        channel = min(e, int(rev[e])) if ports.duplex == "half" else e
        keys = [("ch", channel)]
        if ports.ports is not None:
            keys += [("send", int(asrc[e])), ("recv", int(adst[e]))]
        for k in keys:
            groups.setdefault(k, []).append((t, e))
    done = set()
    for members in groups.values():
        members.sort()
        for j, (t, e) in enumerate(members):
            longest = a + b * len(ys[(e, t)])
            for t2, e2 in members[j + 1:]:
                if t2 - t >= longest:
                    break
                pair = (e, t, e2, t2)
                if pair in done:
                    continue
                done.add(pair)
                x1, x2 = cols[("x", e, t)], cols[("x", e2, t2)]
                if t2 - t < a + b:   # even one message overlaps
                    row([(x1, 1.0), (x2, 1.0)], -np.inf, 1.0)
                    continue
                # a + b count - (t2 - t) <= longest (2 - x1 - x2)
                terms = [(cols[("y", e, t, i)], float(b)) for i in ys[(e, t)]]
                row(terms + [(x1, longest), (x2, longest)], -np.inf, (t2 - t) - a + 2 * longest)
