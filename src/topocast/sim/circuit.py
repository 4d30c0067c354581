"""Circuit engine: switch configurations of a multistage network, traced input to output (thesis 3.2.4, 4, 5).

The network is a :class:`~topocast.topology.stages.MultistageNetwork` (switch
stages and the wires between them); a *configuration* (a "route") gives the
output port each switch input is connected to, or ``-1``.  Switch states of
a family (shift, XOR, window) become a route through the plan layer's
:func:`~topocast.plans.circuit.shift_route`,
:func:`~topocast.plans.circuit.xor_route` and
:func:`~topocast.plans.circuit.window_route`.

:func:`trace` follows every network input through its switches and returns
the permutation realised (``perm[i]`` = output reached by input ``i``, ``-1``
where the circuit is not set up or is cut), the use count of every link
(switch output) and the links used by two or more circuits (conflicts).
:func:`trace_many` does the same for a batch of configurations in parallel
(numba).  :func:`trace_plan` runs a whole
:class:`~topocast.plans.circuit.CircuitPlan` -- every row, every pass, a
chunk of rows at a time -- and hands the merged rows to the one circuit
check, :class:`topocast.verify.delivery.CircuitSquare`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import TopocastError
from ..infra.parallel import twin
from ..plans.circuit import CircuitPlan
from ..topology.stages import ROUTE_DTYPE, MultistageNetwork
from ..verify.delivery import CircuitSquare, SquareCheck

# -- tracing ---------------------------------------------------------------------

@nb.njit(cache=True)
def _trace_one(in_off, out_off, ins, outs, next_in, net_in, net_out, route, perm, use, fail_stage):
    nstages = len(ins)
    last = out_off[nstages - 1]
    for i in range(len(net_in)):
        g = net_in[i]
        perm[i] = -1
        fail_stage[i] = -1
        for s in range(nstages):
            port = route[g]
            if port < 0:
                fail_stage[i] = s
                break
            sw = (g - in_off[s]) // ins[s]
            go = out_off[s] + sw * outs[s] + port
            use[go] += 1
            if s == nstages - 1:
                perm[i] = net_out[go - last]
            else:
                g = next_in[go]
                if g < 0:
                    fail_stage[i] = s + 1
                    break


@nb.njit(cache=True)
def _trace_batch(in_off, out_off, ins, outs, next_in, net_in, net_out, routes, perms, conflicts, dropped):
    nconf = routes.shape[0]
    nlinks = out_off[len(ins)]
    n = len(net_in)
    for c in nb.prange(nconf):
        use = np.zeros(nlinks, dtype=np.int32)
        fail = np.empty(n, dtype=np.int64)
        _trace_one(in_off, out_off, ins, outs, next_in, net_in, net_out, routes[c], perms[c], use, fail)
        bad = 0
        for e in range(nlinks):
            if use[e] > 1:
                bad += 1
        conflicts[c] = bad
        lost = 0
        for i in range(n):
            if fail[i] > 0:
                lost += 1
        dropped[c] = lost


#: batches of at least this many route entries run the parallel build (:mod:`topocast.infra.parallel`)
PARALLEL_ROUTE_ENTRIES = 1 << 20
_trace_batch_parallel = twin(_trace_batch, "_trace_batch_parallel")


@dataclass
class CircuitTrace:
    """What one configuration does: the permutation, link use and conflicts.

    ``perm[i]`` is the output input ``i`` reaches, ``-1`` when its circuit is
    not set up (``fail_stage[i] == 0``: the input is idle) or is cut at stage
    ``fail_stage[i] > 0`` (a dropped circuit).  ``conflicts`` counts links used
    by two or more circuits.
    """

    network: MultistageNetwork
    perm: np.ndarray
    link_use: np.ndarray
    fail_stage: np.ndarray

    @property
    def active(self) -> np.ndarray:
        return self.fail_stage != 0

    @property
    def delivered(self) -> np.ndarray:
        return self.perm >= 0

    @property
    def conflict_links(self) -> np.ndarray:
        return np.flatnonzero(self.link_use > 1)

    @property
    def conflicts(self) -> int:
        return int(np.count_nonzero(self.link_use > 1))

    @property
    def dropped(self) -> int:
        return int(np.count_nonzero(self.fail_stage > 0))

    def first_conflict(self) -> str | None:
        links = self.conflict_links
        if len(links) == 0:
            return None
        return f"{self.network.describe_link(int(links[0]))} carries {int(self.link_use[links[0]])} circuits"


def _check_route(network: MultistageNetwork, route: np.ndarray) -> None:
    """Refuse a configuration of the wrong length or naming a switch output that does not exist
    (the tracer would otherwise follow the wire of a neighbouring switch)."""
    if route.shape[-1] != network.route_size:
        raise TopocastError(f"route: must have {network.route_size} entries, got {route.shape[-1]}")
    for s in range(network.num_stages):
        block = route[..., network.stage_slice(s)]
        if block.size and int(block.max()) >= int(network.outs[s]):
            name = network.stage_names[s] if network.stage_names else f"stage {s}"
            raise TopocastError(f"route: {name} has switches with {int(network.outs[s])} outputs "
                                f"(0..{int(network.outs[s]) - 1}), got output {int(block.max())}")


def trace(network: MultistageNetwork, route: np.ndarray) -> CircuitTrace:
    """Follow every input of ``network`` through the configuration ``route``."""
    route = np.ascontiguousarray(route, dtype=ROUTE_DTYPE)
    _check_route(network, route)
    n = network.num_inputs
    perm = np.empty(n, dtype=np.int64)
    use = np.zeros(int(network.out_off[-1]), dtype=np.int32)
    fail = np.empty(n, dtype=np.int64)
    _trace_one(network.in_off, network.out_off, network.ins, network.outs, network.next_in,
               network.net_in, network.net_out, route, perm, use, fail)
    return CircuitTrace(network, perm, use, fail)


def trace_many(network: MultistageNetwork, routes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Trace a batch ``routes[c]``; returns ``(perms[c, i], conflicts[c], dropped[c])`` (parallel when large)."""
    routes = np.ascontiguousarray(routes, dtype=ROUTE_DTYPE)
    if routes.ndim != 2:
        raise TopocastError("routes: must be a 2-D array, one configuration per row")
    _check_route(network, routes)
    nconf = routes.shape[0]
    perms = np.empty((nconf, network.num_inputs), dtype=np.int64)
    conflicts = np.zeros(nconf, dtype=np.int64)
    dropped = np.zeros(nconf, dtype=np.int64)
    kernel = _trace_batch_parallel if routes.size >= PARALLEL_ROUTE_ENTRIES else _trace_batch
    kernel(network.in_off, network.out_off, network.ins, network.outs, network.next_in,
           network.net_in, network.net_out, routes, perms, conflicts, dropped)
    return perms, conflicts, dropped


# -- a whole plan ------------------------------------------------------------------


def trace_plan(plan: CircuitPlan, progress=None) -> SquareCheck:
    """Trace every row of ``plan`` in every pass, ``plan.chunk`` rows at a time, and check the merged rows.

    ``progress`` (optional) has ``track(items, label)``.  Memory: the check
    keeps an ``int32`` and a ``uint8`` matrix of ``rows x inputs``.
    """
    net = plan.network
    square = CircuitSquare(plan.rows, net.num_inputs, plan.passes, plan.collective)
    steps = [(p, lo) for p in range(plan.passes) for lo in range(0, plan.rows, plan.chunk)]
    if progress is not None:
        steps = progress.track(steps, f"tracing {net.name}")
    for p, lo in steps:
        rows = np.arange(lo, min(plan.rows, lo + plan.chunk), dtype=np.int64)
        routes = np.ascontiguousarray(plan.routes(rows, p), dtype=ROUTE_DTYPE)
        perms, conflicts, dropped = trace_many(net, routes)
        square.add(lo, perms, conflicts, dropped)
        if conflicts.any() or dropped.any():
            _describe_faults(square, net, routes, rows, p, conflicts, dropped)
    return square.finish(plan.expected_rows if plan.expected is not None else None, plan.chunk)


def _describe_faults(square: CircuitSquare, net: MultistageNetwork, routes: np.ndarray, rows: np.ndarray,
                     pass_index: int, conflicts: np.ndarray, dropped: np.ndarray) -> None:
    """Name the first conflicting link and the first cut circuit of a chunk (traced once more, alone)."""
    if conflicts.any() and "conflict" not in square.first:
        c = int(np.argmax(conflicts > 0))
        square.note("conflict", f"row {int(rows[c])} pass {pass_index}: {trace(net, routes[c]).first_conflict()}")
    if dropped.any() and "dropped" not in square.first:
        c = int(np.argmax(dropped > 0))
        fail = trace(net, routes[c]).fail_stage
        i = int(np.argmax(fail > 0))
        stage = int(fail[i])
        name = net.stage_names[stage] if net.stage_names else f"stage {stage}"
        square.note("dropped", f"row {int(rows[c])} pass {pass_index}: the circuit of input {i} "
                               f"stops at {name}")
