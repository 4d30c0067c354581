"""Circuit engine: switch configurations of a multistage network, traced input to output.

A :class:`MultistageNetwork` is a sequence of switch stages.  Stage ``s`` has
``switches[s]`` switches with ``ins[s]`` inputs and ``outs[s]`` outputs each;
a port is named by its *flat* index ``switch * ins + port`` (or ``* outs``)
inside its stage, and by its *global* index (flat index plus the stage's
offset) inside the whole network.  ``next_in[g]`` takes the global output
``g`` of a stage to the global input of the next stage it is wired to (``-1``
where the wire leads nowhere; entries of the last stage are unused): the
outputs of the last stage lead to the network's outputs through ``net_out``; network input ``i`` enters at global
input ``net_in[i]``.

A *configuration* (a "route") is one int array over all global inputs: the
output port (``0 .. outs-1``) each switch input is connected to, or ``-1``
(not connected).  Switch states of a family (shift, XOR, window) become a
route through :func:`shift_route`, :func:`xor_route` and :func:`window_route`.

:func:`trace` follows every network input through its switches and returns
the permutation realised (``perm[i]`` = output reached by input ``i``, ``-1``
where the circuit is not set up or is cut), the use count of every link
(switch output) and the links used by two or more circuits (conflicts).
:func:`trace_many` does the same for a batch of configurations in parallel
(numba), which is what the fat-tree benchmark uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from ..errors import TopocastError

ROUTE_DTYPE = np.int16


@dataclass(frozen=True, eq=False)
class MultistageNetwork:
    """Switch stages and the wires between them (see the module docstring)."""

    name: str
    switches: np.ndarray
    ins: np.ndarray
    outs: np.ndarray
    next_in: np.ndarray
    net_in: np.ndarray
    net_out: np.ndarray
    stage_names: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        for name in ("switches", "ins", "outs", "next_in", "net_in", "net_out"):
            arr = np.ascontiguousarray(getattr(self, name), dtype=np.int64)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        in_off = np.zeros(self.num_stages + 1, dtype=np.int64)
        np.cumsum(self.switches * self.ins, out=in_off[1:])
        out_off = np.zeros(self.num_stages + 1, dtype=np.int64)
        np.cumsum(self.switches * self.outs, out=out_off[1:])
        object.__setattr__(self, "in_off", in_off)
        object.__setattr__(self, "out_off", out_off)
        if len(self.next_in) != out_off[-1]:
            raise ValueError("next_in must have one entry per switch output")

    @property
    def num_stages(self) -> int:
        return len(self.switches)

    @property
    def num_inputs(self) -> int:
        return len(self.net_in)

    @property
    def num_outputs(self) -> int:
        return int(self.net_out.max()) + 1 if len(self.net_out) else 0

    @property
    def route_size(self) -> int:
        return int(self.in_off[-1])

    def empty_route(self) -> np.ndarray:
        """A configuration with nothing connected."""
        return np.full(self.route_size, -1, dtype=ROUTE_DTYPE)

    def stage_slice(self, stage: int) -> slice:
        return slice(int(self.in_off[stage]), int(self.in_off[stage + 1]))

    def set_stage(self, route: np.ndarray, stage: int, table: np.ndarray) -> None:
        """Write a ``(switches, ins)`` table of output ports into ``route``."""
        table = np.asarray(table)
        shape = (int(self.switches[stage]), int(self.ins[stage]))
        if table.shape != shape:
            raise ValueError(f"stage {stage}: table of shape {table.shape}, expected {shape}")
        route[..., self.stage_slice(stage)] = table.reshape(-1)

    def describe_link(self, global_out: int) -> str:
        stage = int(np.searchsorted(self.out_off, global_out, side="right") - 1)
        flat = global_out - int(self.out_off[stage])
        sw, port = divmod(flat, int(self.outs[stage]))
        name = self.stage_names[stage] if self.stage_names else f"stage {stage}"
        return f"{name} switch {sw} output {port}"


def stage_wiring(out_switches: int, outs: int, ins_next: int, target_switch: np.ndarray,
                 target_port: np.ndarray) -> np.ndarray:
    """Flat ``next_in`` block of one stage from the target switch and port of each output."""
    target_switch = np.asarray(target_switch, dtype=np.int64).reshape(out_switches * outs)
    target_port = np.asarray(target_port, dtype=np.int64).reshape(out_switches * outs)
    return target_switch * ins_next + target_port


# -- switch states ---------------------------------------------------------------

def shift_route(ins: int, outs: int, states) -> np.ndarray:
    """Shift states: input ``u`` -> output ``(u + state) mod outs`` (``ins <= outs``).

    ``states`` has one entry per switch (any leading batch shape); returns
    ``states.shape + (ins,)``.  This is the ``k``-shift of Liu et al. (2007);
    the thesis's LLS states (sections 4.1.1 and 4.2.1) are the same switch
    settings numbered the other way round (state ``i`` there is ``-i`` here).
    """
    states = np.asarray(states, dtype=np.int64)
    u = np.arange(ins, dtype=np.int64)
    return ((u + states[..., None]) % outs).astype(ROUTE_DTYPE)


def xor_route(ins: int, outs: int, states) -> np.ndarray:
    """XOR states: input ``u`` -> output ``u XOR state`` (``-1`` if that is not a port)."""
    states = np.asarray(states, dtype=np.int64)
    u = np.arange(ins, dtype=np.int64)
    out = u ^ states[..., None]
    return np.where(out < outs, out, -1).astype(ROUTE_DTYPE)


def window_route(ins: int, outs: int, offsets) -> np.ndarray:
    """Window states of a concentrating switch: inputs ``offset .. offset+outs-1`` -> outputs ``0..outs-1``.

    The other inputs are not connected.  Offset 0 is "straight".
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    u = np.arange(ins, dtype=np.int64)
    out = u - offsets[..., None]
    return np.where((out >= 0) & (out < outs), out, -1).astype(ROUTE_DTYPE)


def table_route(tables) -> np.ndarray:
    """Explicit tables (any shape ending in ``ins``) as a route block."""
    return np.asarray(tables, dtype=ROUTE_DTYPE)


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


@nb.njit(cache=True, parallel=True)
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
    """Trace a batch ``routes[c]``; returns ``(perms[c, i], conflicts[c], dropped[c])`` (parallel)."""
    routes = np.ascontiguousarray(routes, dtype=ROUTE_DTYPE)
    if routes.ndim != 2:
        raise TopocastError("routes: must be a 2-D array, one configuration per row")
    _check_route(network, routes)
    nconf = routes.shape[0]
    perms = np.empty((nconf, network.num_inputs), dtype=np.int64)
    conflicts = np.zeros(nconf, dtype=np.int64)
    dropped = np.zeros(nconf, dtype=np.int64)
    _trace_batch(network.in_off, network.out_off, network.ins, network.outs, network.next_in,
                 network.net_in, network.net_out, routes, perms, conflicts, dropped)
    return perms, conflicts, dropped


# -- checks on a set of permutations -------------------------------------------

def is_latin_square(perms: np.ndarray) -> bool:
    """True when the rows are permutations of ``0..N-1`` and no column repeats a value.

    ``perms`` has shape ``(N, N)``: row ``k`` is a permutation.
    """
    perms = np.asarray(perms)
    if perms.ndim != 2 or perms.shape[0] != perms.shape[1]:
        return False
    n = perms.shape[0]
    if perms.min(initial=0) < 0 or perms.max(initial=0) >= n:
        return False
    flat = perms.astype(np.int64)
    idx = np.arange(n, dtype=np.int64)
    # one count per (row, value) and per (column, value): a Latin square fills both exactly once
    rows_ok = np.all(np.bincount((flat + n * idx[:, None]).ravel(), minlength=n * n) == 1)
    cols_ok = np.all(np.bincount((flat * n + idx[None, :]).ravel(), minlength=n * n) == 1)
    return bool(rows_ok and cols_ok)


def delivery_counts(n: int, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """``counts[src, dst]``: how often a circuit joined ``src`` to ``dst``."""
    ok = targets >= 0
    flat = np.asarray(sources)[ok] * n + np.asarray(targets)[ok]
    return np.bincount(flat, minlength=n * n).reshape(n, n)


def path_counts(net):
    """``paths[i, j]``: input-to-output paths through the layered switch graph, whatever the switch
    settings (a banyan network has exactly one between every pair)."""
    n = net.num_inputs
    counts = np.zeros((n, int(net.in_off[1])), dtype=np.int64)
    counts[np.arange(n), net.net_in] = 1
    for s in range(net.num_stages):
        ins, outs = int(net.ins[s]), int(net.outs[s])
        per_switch = counts.reshape(n, -1, ins).sum(axis=2)
        out_counts = np.repeat(per_switch, outs, axis=1)
        if s == net.num_stages - 1:
            result = np.zeros((n, net.num_outputs), dtype=np.int64)
            result[:, net.net_out] = out_counts
            return result
        nxt = np.zeros((n, int(net.in_off[s + 2] - net.in_off[s + 1])), dtype=np.int64)
        targets = net.next_in[net.out_off[s]:net.out_off[s + 1]] - net.in_off[s + 1]
        nxt[:, targets] = out_counts
        counts = nxt
