"""Routing permutations on Clos networks (thesis 2.1; Clos 1953, Benes 1962).

* :func:`route_permutation` sets up a (partial) permutation on a 3-stage
  C(n, m, r) or 5-stage Clos with ``m >= n`` by edge-colouring the bipartite
  request multigraph (input switch -> output switch, one edge per request)
  with ``m`` colours, one per middle switch (Konig: a bipartite multigraph of
  degree ``n`` needs only ``n``).  The colouring is the alternating-path
  method: give an edge a colour free at both ends, or swap two colours along
  an alternating path to free one.  On a 5-stage Clos each middle sub-network
  routes its share the same way, recursively.
* :func:`greedy_route` adds requests one at a time on the first middle switch
  free at both ends, never moving a circuit: what a strictly non-blocking
  network guarantees (``m >= 2n - 1``).
* :func:`blocking_example` builds, for ``m < 2n - 1``, circuits in place and a
  new request that no middle switch can take without rearranging -- the
  classical argument that ``2n - 1`` middle switches are needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TopocastError
from ..plans.circuit import CircuitPlan
from ..registry import Param
from ..topology.core import Topology
from ..topology.multistage import check_clos, clos_network, clos_properties
from ..topology.stages import ROUTE_DTYPE, MultistageNetwork
from .base import register
from .fattree_alltoall import CIRCUIT_PARAMS


def edge_colouring(left: np.ndarray, right: np.ndarray, colours: int) -> np.ndarray:
    """Colour the edges of a bipartite multigraph properly with a given number of colours.

    Parameters
    ----------
    left, right : numpy.ndarray
        Ends of every edge.
    colours : int
        Colours available.

    Returns
    -------
    numpy.ndarray
        Colour of every edge.

    Raises
    ------
    TopocastError
        When a vertex has more than ``colours`` edges.
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    nl = int(left.max()) + 1 if len(left) else 0
    nr = int(right.max()) + 1 if len(right) else 0
    for side, ends in (("input", left), ("output", right)):
        if len(ends) and np.bincount(ends).max() > colours:
            raise TopocastError(f"clos: a {side} switch has {np.bincount(ends).max()} requests, "
                                f"more than the {colours} middle switches")
    at_left = np.full((nl, colours), -1, dtype=np.int64)
    at_right = np.full((nr, colours), -1, dtype=np.int64)
    colour = np.full(len(left), -1, dtype=np.int64)
    for e in range(len(left)):
        u, v = left[e], right[e]
        a = int(np.flatnonzero(at_left[u] < 0)[0])
        b = int(np.flatnonzero(at_right[v] < 0)[0])
        if at_right[v, a] >= 0:
            # swap a and b along the path from v that alternates a, b, a ...; it cannot reach u
            path, node, side, want = [], v, "right", a
            while True:
                table = at_right if side == "right" else at_left
                f = table[node, want]
                if f < 0:
                    break
                path.append(f)
                node = left[f] if side == "right" else right[f]
                side = "left" if side == "right" else "right"
                want = b if want == a else a
            for f in path:
                at_left[left[f], colour[f]] = -1
                at_right[right[f], colour[f]] = -1
            for f in path:
                colour[f] = b if colour[f] == a else a
                at_left[left[f], colour[f]] = f
                at_right[right[f], colour[f]] = f
        colour[e] = a
        at_left[u, a] = e
        at_right[v, a] = e
    return colour


def _route_3(n: int, m: int, r: int, src: np.ndarray, dst: np.ndarray, middle: np.ndarray,
             stage_tables: list[np.ndarray]) -> None:
    a, c = src // n, dst // n
    stage_tables[0][a, src % n] = middle
    stage_tables[1][middle, a] = c
    stage_tables[2][c, middle] = dst % n


def route_permutation(net: MultistageNetwork, perm) -> np.ndarray:
    """Configure a Clos network to realise a permutation, by edge colouring (rearrangeable routing).

    Needs ``m >= n`` (and ``m2 >= n2`` for the 5-stage network).

    Parameters
    ----------
    net : MultistageNetwork
        A 3- or 5-stage Clos network.
    perm : array_like of int
        ``perm[i]``: the output of input ``i`` (-1: input idle).

    Returns
    -------
    numpy.ndarray
        The configuration.

    Raises
    ------
    TopocastError
        A permutation of the wrong length or with repeated outputs, or a network that is not rearrangeable.
    """
    meta = net.meta
    n, m, r = meta["n"], meta["m"], meta["r"]
    perm = np.asarray(perm, dtype=np.int64)
    if len(perm) != n * r:
        raise TopocastError(f"clos: permutation must have n*r = {n * r} entries, got {len(perm)}")
    src = np.flatnonzero(perm >= 0)
    dst = perm[src]
    if len(np.unique(dst)) != len(dst) or (len(dst) and (dst.max() >= n * r)):
        raise TopocastError("clos: the requests must go to distinct outputs in 0..n*r-1")
    if m < n:
        raise TopocastError(f"clos: C({n},{m},{r}) is not rearrangeable: parameter 'm' must be >= n, got m={m}, n={n}")
    middle = edge_colouring(src // n, dst // n, m)
    tables = [np.full((int(s), int(k)), -1, dtype=np.int64) for s, k in zip(net.switches, net.ins, strict=True)]
    if "n2" not in meta:
        _route_3(n, m, r, src, dst, middle, tables)
    else:
        n2, m2, r2 = meta["n2"], meta["m2"], meta["r2"]
        if m2 < n2:
            raise TopocastError(f"clos: inner C({n2},{m2},{r2}) is not rearrangeable: 'm2' must be >= n2")
        a, c = src // n, dst // n
        tables[0][a, src % n] = middle
        tables[4][c, middle] = dst % n
        for b in range(m):
            sel = middle == b
            ia, ic = a[sel], c[sel]  # the sub-network's own permutation: input a -> output c
            inner = edge_colouring(ia // n2, ic // n2, m2) if len(ia) else np.zeros(0, np.int64)
            q, q2 = ia // n2, ic // n2
            tables[1][b * r2 + q, ia % n2] = inner
            tables[2][b * m2 + inner, q] = q2
            tables[3][b * r2 + q2, inner] = ic % n2
    route = net.empty_route()
    for s, table in enumerate(tables):
        net.set_stage(route, s, table.astype(ROUTE_DTYPE))
    return route


@dataclass
class GreedyOutcome:
    """What a greedy, never-rearranging router did: middle switch of each request (-1 blocked) and the blocked count."""

    middle: np.ndarray      # middle switch of each request, -1 if blocked
    blocked: int


def greedy_route(n: int, m: int, r: int, src, dst, fixed: dict[int, int] | None = None) -> GreedyOutcome:
    """Route requests in order on the first middle switch free on both links; never rearrange.

    Parameters
    ----------
    n, m, r : int
        The Clos network C(n, m, r).
    src, dst : array_like of int
        Input and output of every request.
    fixed : dict of int to int, optional
        Requests pinned to middle switches (index -> middle switch), placed before the others.

    Returns
    -------
    GreedyOutcome
        The middle switches and the blocked count.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    busy_in = np.zeros((r, m), dtype=bool)
    busy_out = np.zeros((r, m), dtype=bool)
    middle = np.full(len(src), -1, dtype=np.int64)
    order = list((fixed or {}).keys()) + [i for i in range(len(src)) if i not in (fixed or {})]
    for i in order:
        a, c = src[i] // n, dst[i] // n
        if fixed and i in fixed:
            choice = fixed[i]
        else:
            free = np.flatnonzero(~busy_in[a] & ~busy_out[c])
            if len(free) == 0:
                continue
            choice = int(free[0])
        middle[i] = choice
        busy_in[a, choice] = busy_out[c, choice] = True
    return GreedyOutcome(middle, int(np.count_nonzero(middle < 0)))


@dataclass
class BlockingExample:
    """Circuits in place, a new request they block, and a full routing after rearranging (when ``m >= n``)."""

    src: np.ndarray         # requests in place, then the new one last
    dst: np.ndarray
    middle: np.ndarray      # middle switch of each request in place
    new_blocked: bool       # no middle switch is free for the last request
    rearranged: np.ndarray | None  # a full routing of all requests after rearranging (m >= n)


def blocking_example(n: int, m: int, r: int) -> BlockingExample:
    """Build circuits on C(n, m, r), ``m <= 2n - 2``, that block a new request.

    Circuits in place on C(n, m, r) with ``m <= 2n - 2`` and a new request they block.

    Input switch 0 carries ``a = min(n-1, m)`` circuits on middle switches
    ``0 .. a-1``; output switch 1 receives ``m - a`` circuits (from input
    switch 1) on middle switches ``a .. m-1``.  Every middle switch is then
    busy towards input switch 0 or output switch 1, so a request from a free
    input of switch 0 to a free output of switch 1 is blocked.

    Parameters
    ----------
    n, m, r : int
        The Clos network.

    Returns
    -------
    BlockingExample
        The circuits, the blocked request and a rearranged routing.

    Raises
    ------
    TopocastError
        For a strictly non-blocking network (``m >= 2n - 1``), or ``r < 2`` or ``n < 2``.
    """
    n, m, r, _, _ = check_clos(n, m, r)
    if m > 2 * n - 2:
        raise TopocastError(f"clos: C({n},{m},{r}) is strictly non-blocking (m >= 2n-1); "
                            f"a blocking example needs m <= 2n-2, got m={m}")
    if r < 2 or n < 2:
        raise TopocastError(f"clos: a blocking example needs r >= 2 and n >= 2, got n={n}, r={r}")
    a = min(n - 1, m)
    src = list(range(a))                              # inputs of switch 0
    dst = [0 * n + j for j in range(a)]               # outputs of switch 0
    src += [n + j for j in range(m - a)]              # inputs of switch 1
    dst += [n + j for j in range(m - a)]              # outputs of switch 1
    middle = list(range(m))
    src.append(a)                                     # a free input of switch 0
    dst.append(n + (m - a))                           # a free output of switch 1
    src_arr, dst_arr = np.array(src), np.array(dst)
    fixed = {i: middle[i] for i in range(len(middle))}
    outcome = greedy_route(n, m, r, src_arr, dst_arr, fixed)
    rearranged = None
    if m >= n:
        rearranged = edge_colouring(src_arr // n, dst_arr // n, m)
    return BlockingExample(src_arr, dst_arr, np.array(middle), bool(outcome.middle[-1] < 0), rearranged)


#: most terminal routes (permutations x terminals) one run may ask for
MAX_ROUTES = 10**6


def _check_work(permutations: int, n_terms: int, max_memory: float | None) -> None:
    """Refuse, before any work, a run whose permutations would take hours or not fit.

    Parameters
    ----------
    permutations : int
        Permutations asked for.
    n_terms : int
        Terminals of the network.
    max_memory : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Raises
    ------
    TopocastError
        Past :data:`MAX_ROUTES` terminal routes, or when the routes would not fit
        (:func:`topocast.infra.memory.check_need`).
    """
    from ..infra.memory import check_need

    if permutations * n_terms > MAX_ROUTES:
        raise TopocastError(f"algorithm clos-permutation-routing: parameter 'permutations' = {permutations} on "
                            f"{n_terms} terminals is too large (at most {MAX_ROUTES:.0e} terminal routes per run)")
    check_need(f"algorithm clos-permutation-routing with {permutations} permutations on {n_terms} terminals",
               32.0 * permutations * n_terms, max_memory)


def clos_plan(topology: Topology, *, seed: int = 0, permutations: int = 10,
              message_bytes: float = 1024.0, max_memory: float | None = None) -> CircuitPlan:
    """Plan random permutations on a Clos network, each routed by edge colouring (thesis 2.1).

    The plan's ``info`` adds the Clos properties and the requests a greedy, never-rearranging router would
    block on the same permutations (3-stage only).

    Parameters
    ----------
    topology : Topology
        A ``clos`` network.
    seed : int, default 0
        Seed of the permutations.
    permutations : int, default 10
        How many permutations.
    message_bytes : float, default 1024.0
        Size of every message in bytes.
    max_memory : float, optional
        Memory limit in bytes; None: half of the RAM.

    Returns
    -------
    CircuitPlan
        One configuration per permutation.

    Raises
    ------
    TopocastError
        A network that is not rearrangeable, or permutations that would take hours or not fit in memory.
    """
    p = dict(topology.params)
    net = clos_network(**p)
    n_terms = net.num_inputs
    _check_work(permutations, n_terms, max_memory)
    rng = np.random.default_rng(seed)
    perms = np.stack([rng.permutation(n_terms) for _ in range(permutations)])
    blocked = 0
    if "n2" not in net.meta:
        blocked = sum(greedy_route(p["n"], p["m"], p["r"], np.arange(n_terms), perm).blocked for perm in perms)
    info = {"greedy_blocked_requests": int(blocked), **clos_properties(**p)}
    return CircuitPlan(net, permutations, 1, lambda rows, _: np.stack([route_permutation(net, perms[r]) for r in rows]),
                       message_bytes, "permutation", perms, owner="algorithm clos-permutation-routing", info=info)


register(
    "clos-permutation-routing", clos_plan, "permutation",
    "route random permutations on a rearrangeable Clos by edge colouring (and count what a "
    "greedy, never-rearranging router blocks)",
    families=("clos",), params=(Param("permutations", "int", 10, "random permutations to route", minimum=1),),
    aliases=("clos-route", "clos-edge-colouring"), engines=("circuit",), paper="Clos 1953; Benes 1962",
    run_params=CIRCUIT_PARAMS)
