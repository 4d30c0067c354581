"""All-to-all personalized exchange on generalized fat trees by Latin squares (thesis ch. 4 and 5).

The exchange routes ``N = w m^h`` permutations that form a Latin square, one
circuit-switched configuration of the opened tree per permutation (several
*passes* per permutation on a slimmed tree).  Up stages stay straight; only
the top and the down stages are set.

Reading used here (see ``docs/fattree.md`` and ``../shared/design/errata.md``).
Processor ``P`` has mixed-radix digits ``P = t + w (c_1 + m (c_2 + ...))``:
``t`` is its port on its level-0 switch and ``c_x`` the copy it sits in on
level ``x``.  Climbing straight, the circuit of ``P`` enters the top on down
port ``c_h`` and a level-``x`` switch whose local index spells ``t, c_1, ..,
c_(x-1)``.  Going down, the top chooses destination digit ``c'_h``, down level
``x`` chooses ``c'_x`` and down level 0 chooses ``t'``.

* **LLS** (Left Latin Square, ch. 4): rotation ``k`` sends ``i -> (i + k) mod N``.
  Digit ``x`` of ``i + k`` is ``c_x + k_x + carry_x``; the carry comes from
  the lower source digits, which the switch's local index spells.  So a
  switch applies the shift ``k_x`` or ``k_x + 1`` -- Algorithm 1's
  ``floor(k / w^x) mod m`` "plus one for some switches of each group".  The
  thesis gives the +1 to the *first* ``k mod w^x`` switches of each group;
  which switches get the carry is in fact set by the digit-reversed local
  index, and the two agree only for some ``k`` (:func:`thesis_algorithm1_states`,
  :func:`thesis_algorithm2_states` for slimmed trees, traced by
  :func:`topocast.experiments.traces.trace_thesis_algorithm`; the reproduction report counts them).
* **Slimmed trees** (m > w, section 4.2): an up switch ``m x w`` forwards one
  group of ``w`` of its ``m`` inputs per pass (window offset ``w g``), so a
  pass is a choice ``g_x`` per middle level and a rotation needs
  ``ceil(m/w)^(h-1)`` passes (``ceil(m/w)`` for the thesis's h = 2).  Down
  switches add ``w g_x`` to their shift: Algorithm 2's ``+ w (p - 1)``.
* **CLS** (Canonical Latin Square, ch. 5; m and w powers of two):
  configuration ``C^x`` sets every switch of level ``x_l`` to the XOR state
  ``x``'s digit ``l`` and realises ``i -> i XOR x``.  XOR has no carries, so
  all switches of a level share the state.  The routable permutations with
  straight up stages (any XOR state per switch) split into Latin squares
  ``{B XOR x}``: :func:`topocast.experiments.traces.xor_square`.

State numbering.  Here a shift state ``s`` sends input ``u`` to output
``(u + s) mod outs`` (Liu et al.'s k-shift); the thesis numbers the same
settings the other way (its state ``i`` sends ``u`` to ``u - i``, section
4.2.1) and its rotation ``k`` sends ``i`` to ``i - k``.  Its configuration for
``k`` is therefore our configuration for ``-k`` with every state negated;
:func:`thesis_states` converts, and the reproduction compares that way.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator

import numpy as np

from ..errors import TopocastError
from ..plans.circuit import CircuitPlan, shift_route, window_route, xor_route
from ..registry import Param
from ..topology.core import Topology
from ..topology.fattree import GFTShape, check_gft_params
from ..topology.stages import ROUTE_DTYPE
from ..verify.delivery import SquareCheck
from .base import register

# -- passes ----------------------------------------------------------------------


def groups_per_level(shape: GFTShape) -> int:
    """Count the groups of ``w`` inputs an up switch forwards one at a time: ``ceil(m/w)`` (1 unless slimmed).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).

    Returns
    -------
    int
        Groups per level.
    """
    return -(-shape.m // shape.w) if shape.m > shape.w else 1


def passes(shape: GFTShape) -> list[tuple[int, ...]]:
    """List every pass: one group index ``g_x`` per middle level ``x = 1 .. h-1``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).

    Returns
    -------
    list of tuple of int
        The passes.
    """
    return list(itertools.product(range(groups_per_level(shape)), repeat=shape.h - 1))


def pass_lower_bound(shape: GFTShape) -> float:
    """Give the passes any schedule needs: processors over the circuits the top can carry, ``(m/w)^(h-1)``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).

    Returns
    -------
    float
        The bound, at least 1.
    """
    return max(1.0, shape.processors / (shape.m * shape.w ** shape.h))


def _offsets(shape: GFTShape, g: tuple[int, ...]) -> list[int]:
    """Window offset per level 0..h (0 on level 0 and the top)."""
    return [0] + [shape.w * gx for gx in g] + [0]


def pass_members(shape: GFTShape, g: tuple[int, ...]) -> np.ndarray:
    """Select the processors whose circuits climb in pass ``g`` (digit ``c_x`` in group ``g_x``).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    g : tuple of int
        The pass.

    Returns
    -------
    numpy.ndarray
        Boolean per processor.
    """
    p = np.arange(shape.processors, dtype=np.int64)
    keep = np.ones(shape.processors, dtype=bool)
    rest = p // shape.w
    for gx in g:
        keep &= (rest % shape.m) // shape.w == gx
        rest //= shape.m
    return keep


def source_low(shape: GFTShape, x: int, g: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Give, for each local index of level ``x``, the source's low digits ``P mod (w m^(x-1))`` and validity.

    A local index ``l = t w^(x-1) + u_1 w^(x-2) + ... + u_(x-1)`` is reached by processors with port ``t`` and
    copy digits ``c_i = u_i + w g_i``; it is valid when every ``c_i < m`` (fattened trees and partial windows
    leave some switches unused).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    x : int
        The level.
    g : tuple of int
        The pass.

    Returns
    -------
    value, valid : numpy.ndarray
        Low digits and validity per local index.
    """
    w, m = shape.w, shape.m
    off = _offsets(shape, g)
    local = np.arange(w ** x, dtype=np.int64)
    value = np.zeros_like(local)
    valid = np.ones(len(local), dtype=bool)
    for i in range(x - 1, 0, -1):  # u_(x-1) is the lowest digit of l
        u = (local // w ** (x - 1 - i)) % w
        c = u + off[i]
        valid &= c < m
        value = value * m + c
    t = local // w ** (x - 1) if x >= 1 else local
    return value * w + t, valid


def _digits(shape: GFTShape, k: np.ndarray) -> list[np.ndarray]:
    """Mixed-radix digits of ``k``: ``k_0`` base ``w``, ``k_1 .. k_h`` base ``m``."""
    out = [k % shape.w]
    rest = k // shape.w
    for _ in range(shape.h):
        out.append(rest % shape.m)
        rest //= shape.m
    return out


# -- configurations ------------------------------------------------------------


def _up_routes(shape: GFTShape, routes: np.ndarray, g: tuple[int, ...]) -> None:
    net = shape.network
    active = pass_members(shape, g)
    straight = np.where(active, np.arange(shape.processors) % shape.w, -1)
    routes[:, net.stage_slice(0)] = straight
    off = _offsets(shape, g)
    for x in range(1, shape.h):
        block = window_route(shape.m, shape.w, np.full(shape.level_count(x), off[x]))
        routes[:, net.stage_slice(x)] = block.reshape(-1)


def _set_down(shape: GFTShape, routes: np.ndarray, x: int, states: np.ndarray, kind: str) -> None:
    """Write per-switch states ``(K, count_x)`` (or ``(K, 1)`` / ``(K, w^x)`` to tile) of down level ``x``."""
    net = shape.network
    stage = shape.h if x == shape.h else shape.down_stage(x)
    count = shape.level_count(x)
    if states.shape[1] != count:
        states = np.tile(states, (1, count // states.shape[1]))
    make = shift_route if kind == "shift" else xor_route
    block = make(int(net.ins[stage]), int(net.outs[stage]), states)
    routes[:, net.stage_slice(stage)] = block.reshape(len(states), -1)


def lls_states(shape: GFTShape, ks: Iterable[int], g: tuple[int, ...] = ()) -> list[np.ndarray]:
    """Give the shift states of the top and down switches for rotations ``ks`` in pass ``g``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    ks : iterable of int
        Rotations.
    g : tuple of int, optional
        The pass: one group index per middle level (empty: the only pass of a plain tree).

    Returns
    -------
    list of numpy.ndarray
        One array per level ``x = 0 .. h`` of shape ``(len(ks), w^x)``: the state of the switch with local
        index ``l`` (the same in every group).
    """
    g = tuple(g) or (0,) * (shape.h - 1)
    k = np.asarray(list(ks) if not isinstance(ks, np.ndarray) else ks, dtype=np.int64) % shape.processors
    digits = _digits(shape, k)
    off = _offsets(shape, g)
    out = [digits[0][:, None] % shape.w]
    for x in range(1, shape.h + 1):
        low, _ = source_low(shape, x, g)
        base = shape.w * shape.m ** (x - 1)
        carry = (low[None, :] + (k % base)[:, None]) >= base
        out.append((digits[x][:, None] + carry + off[x]) % shape.m)
    return out


def lls_routes(shape: GFTShape, ks: Iterable[int], g: tuple[int, ...] = ()) -> np.ndarray:
    """Give the configurations of pass ``g`` for rotations: rotation ``k`` is ``i -> (i + k) mod N``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    ks : iterable of int
        Rotations.
    g : tuple of int, optional
        The pass: one group index per middle level (empty: the only pass of a plain tree).

    Returns
    -------
    numpy.ndarray
        One configuration (row) per rotation.
    """
    g = tuple(g) or (0,) * (shape.h - 1)
    states = lls_states(shape, ks, g)
    routes = np.empty((len(states[0]), shape.network.route_size), dtype=ROUTE_DTYPE)
    _up_routes(shape, routes, g)
    for x, st in enumerate(states):
        _set_down(shape, routes, x, st, "shift")
    return routes


def require_xor(shape: GFTShape, owner: str) -> None:
    """Require the fat tree of an XOR plan: ``m`` and ``w`` powers of two.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    owner : str
        The algorithm, for the message.

    Raises
    ------
    TopocastError
        Unless ``m`` and ``w`` are powers of two.
    """
    check_gft_params(shape.h, shape.m, shape.w, powers_of_two=True, owner=owner)


def xor_states(shape: GFTShape, xs: Iterable[int], g: tuple[int, ...] = (),
               base: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Give the XOR states per level ``x = 0 .. h`` for translates ``xs`` of a base.

    ``base[x]`` holds one XOR state per switch of down level ``x`` (the top for ``x = h``); None is all
    straight, giving the CLS.  On a slimmed tree middle levels add the pass's window offset (``XOR w g_x``).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    xs : iterable of int
        Translates.
    g : tuple of int, optional
        The pass: one group index per middle level (empty: the only pass of a plain tree).
    base : list of numpy.ndarray, optional
        The base configuration's states.

    Returns
    -------
    list of numpy.ndarray
        Shape ``(K, count_x)`` per level.
    """
    require_xor(shape, "cls")
    g = tuple(g) or (0,) * (shape.h - 1)
    x = np.asarray(list(xs) if not isinstance(xs, np.ndarray) else xs, dtype=np.int64) % shape.processors
    digits = _digits(shape, x)
    off = _offsets(shape, g)
    out = []
    for lev in range(shape.h + 1):
        b = np.zeros(shape.level_count(lev), dtype=np.int64) if base is None else np.asarray(base[lev], np.int64)
        out.append(b[None, :] ^ digits[lev][:, None] ^ off[lev])
    return out


def xor_routes(shape: GFTShape, xs: Iterable[int], g: tuple[int, ...] = (),
               base: list[np.ndarray] | None = None) -> np.ndarray:
    """Give the configurations ``C^x`` of pass ``g``; with ``base=None`` row ``x`` is ``i -> i XOR x``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    xs : iterable of int
        Translates.
    g : tuple of int, optional
        The pass: one group index per middle level (empty: the only pass of a plain tree).
    base : list of numpy.ndarray, optional
        The base configuration's states.

    Returns
    -------
    numpy.ndarray
        One configuration (row) per translate.
    """
    g = tuple(g) or (0,) * (shape.h - 1)
    states = xor_states(shape, xs, g, base)
    routes = np.empty((len(states[0]), shape.network.route_size), dtype=ROUTE_DTYPE)
    _up_routes(shape, routes, g)
    for lev, st in enumerate(states):
        _set_down(shape, routes, lev, st, "xor")
    return routes


# -- the thesis's own numbering --------------------------------------------------


def thesis_states(shape: GFTShape, states: list[np.ndarray]) -> list[np.ndarray]:
    """Renumber shift states as the thesis does (state ``i`` there sends ``u`` to ``u - i``).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    states : list of numpy.ndarray
        Our states per level.

    Returns
    -------
    list of numpy.ndarray
        The thesis's states per level.
    """
    out = []
    for x, st in enumerate(states):
        mod = shape.w if x == 0 else shape.m
        out.append((-np.asarray(st)) % mod)
    return out


def thesis_lls_states(shape: GFTShape, k: int, g: tuple[int, ...] = ()) -> list[np.ndarray]:
    """Give the thesis's configuration for its rotation ``k`` (``i -> i - k``), in its numbering, per level.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    k : int
        The rotation.
    g : tuple of int, optional
        The pass: one group index per middle level (empty: the only pass of a plain tree).

    Returns
    -------
    list of numpy.ndarray
        States per level.
    """
    states = lls_states(shape, [-k % shape.processors], g)
    return [s[0] for s in thesis_states(shape, states)]


def thesis_algorithm1_states(shape: GFTShape, k: int) -> list[np.ndarray]:
    """Give the states of the thesis's Algorithm 1 as printed, for rotation ``k`` (thesis numbering).

    Per level ``x``, the first ``k mod w^x`` switches of a group get ``((k // w^x) mod m + 1) mod m``, the
    others ``(k // w^x) mod m``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    k : int
        The rotation.

    Returns
    -------
    list of numpy.ndarray
        States per level.
    """
    out = []
    for x in range(shape.h + 1):
        size = shape.w ** x
        high = (k // size) % (shape.w if x == 0 else shape.m)
        local = np.arange(size)
        out.append(np.where(local < k % size, (high + 1) % shape.m, high))
    return out


def thesis_algorithm2_states(shape: GFTShape, k: int, p: int) -> list[np.ndarray]:
    """Give the states of the thesis's Algorithm 2 as printed, for rotation ``k`` in pass ``p`` (thesis numbering).

    Algorithm 2 (4.2.3) as printed for rotation ``k`` in pass ``p = 1 .. ceil(m/w)`` (thesis numbering).

    Level 0: ``k mod w``.  Middle levels: Algorithm 1's states plus ``w (p - 1)``,
    mod ``m``.  Top: the passes before ``(k mod c w^h) // w^h + 1`` get the
    incremented state everywhere, that pass on its first ``(k mod c w^h) mod w^h``
    switches, later passes the base state, with ``c = ceil(m/w)``.  The base is
    ``floor(k / (c w^h)) mod m`` as in the worked example (the listing's
    ``floor(k / w^h)`` is the same digit only while ``k < c w^h``).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    k : int
        The rotation.
    p : int
        The pass, ``1 .. ceil(m/w)``.

    Returns
    -------
    list of numpy.ndarray
        States per level.
    """
    h, m, w = shape.h, shape.m, shape.w
    c = groups_per_level(shape)
    out = [np.full(1, k % w)]
    for x in range(1, h):
        local = np.arange(w ** x)
        high = (k // w ** x) % m
        out.append((np.where(local < k % w ** x, high + 1, high) + w * (p - 1)) % m)
    rest = k % (c * w ** h)
    high = (k // (c * w ** h)) % m
    local = np.arange(w ** h)
    full = rest // w ** h
    if p <= full:
        top = np.full(w ** h, (high + 1) % m)
    elif p == full + 1:
        top = np.where(local < rest % w ** h, (high + 1) % m, high)
    else:
        top = np.full(w ** h, high)
    out.append(top)
    return out


def routes_from_thesis_states(shape: GFTShape, states: list[np.ndarray], g: tuple[int, ...] = ()) -> np.ndarray:
    """Build one straight-up configuration of pass ``g`` from thesis-numbered per-level states.

    One straight-up configuration of pass ``g`` from thesis-numbered per-level states.

    Thesis state ``i`` sends input ``u`` to ``u - i`` (4.2.1); on a slimmed
    tree that reading of its ``w <= i < m`` states holds for ``m = 2w``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    states : list of numpy.ndarray
        Thesis-numbered states per level.
    g : tuple of int, optional
        The pass: one group index per middle level (empty: the only pass of a plain tree).

    Returns
    -------
    numpy.ndarray
        The configuration.
    """
    routes = np.empty((1, shape.network.route_size), dtype=ROUTE_DTYPE)
    g = tuple(g) or (0,) * (shape.h - 1)
    _up_routes(shape, routes, g)
    ours = [(-np.asarray(s)) % (shape.w if x == 0 else shape.m) for x, s in enumerate(states)]
    for x, st in enumerate(ours):
        _set_down(shape, routes, x, np.asarray(st)[None, :], "shift")
    return routes[0]


# -- the square as a circuit plan ---------------------------------------------------

#: the circuit engine's run parameters: message size (plan) and set-up, start-up, per-byte time (cost model)
CIRCUIT_PARAMS = (
    Param("message_bytes", "float", 1024.0, "bytes per message (m)", minimum=0),
    Param("setup", "float", 1e-6, "time to set the switches for one pass, in seconds", minimum=0),
    Param("startup", "float", 1e-6, "per-message start-up time t_s in seconds", minimum=0),
    Param("per_byte", "float", 1e-10, "time per byte t_w in seconds", minimum=0),
)

#: what a traced square plan gives (:mod:`topocast.experiments.traces`): the one circuit check's outcome
SchemeCheck = SquareCheck


def square_plan(shape: GFTShape, make_routes, rows: np.ndarray | None = None, *, expected=None,
                message_bytes: float = 1024.0, owner: str = "circuit plan", chunk: int = 256) -> CircuitPlan:
    """Make the circuit plan of a Latin square of configurations, every pass (4.2.3).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    make_routes : callable
        ``make_routes(shape, ks, g)``: configurations of rows ``ks`` in pass ``g``.
    rows : numpy.ndarray, optional
        The rows of the square to run (default all ``N``).
    expected : callable, optional
        ``expected(ks)``: the permutation each row must realise, checked by the circuit engine.
    message_bytes : float, default 1024.0
        Size of every message in bytes.
    owner : str, default "circuit plan"
        Name for messages.
    chunk : int, default 256
        Configurations made at a time.

    Returns
    -------
    CircuitPlan
        The plan.
    """
    rows = np.arange(shape.processors, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    groups = passes(shape)
    return CircuitPlan(shape.network, len(rows), len(groups), lambda idx, p: make_routes(shape, rows[idx], groups[p]),
                       message_bytes, "alltoall", expected, pass_lower_bound(shape), owner, chunk=chunk)


def thesis_plan(shape: GFTShape, states_of) -> CircuitPlan:
    """Make the circuit plan of the thesis's own states ``states_of(k, p)`` for every rotation and pass (4.1.3, 4.2.3).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    states_of : callable
        ``states_of(k, p)``: thesis-numbered states per level for rotation ``k`` in pass ``p``.

    Returns
    -------
    CircuitPlan
        The plan.

    Raises
    ------
    TopocastError
        On a slimmed tree of height other than 2 (the thesis's passes are defined for h = 2).
    """
    n, c = shape.processors, groups_per_level(shape)
    if shape.h != 2 and c > 1:
        raise TopocastError("algorithm 2: the thesis's passes are defined for h = 2")

    def routes(ks: np.ndarray, p: int) -> np.ndarray:
        g = (p,) * (shape.h - 1)
        return np.stack([routes_from_thesis_states(shape, states_of(int(k), p + 1), g) for k in ks])

    return CircuitPlan(shape.network, n, c, routes, 1024.0, "alltoall", None, pass_lower_bound(shape),
                       "the thesis's algorithm", chunk=n)


def _shape(topology: Topology) -> GFTShape:
    return GFTShape(**{k: int(topology.params[k]) for k in ("h", "m", "w")})


def lls_plan(topology: Topology, *, message_bytes: float = 1024.0) -> CircuitPlan:
    """Plan the all-to-all on a fat tree by the Left Latin Square: the ``N`` rotations ``i -> i + k`` (ch. 4).

    Every rotation is one circuit configuration, every pass (Algorithms 1 and 2).

    Parameters
    ----------
    topology : Topology
        A ``gft`` network.
    message_bytes : float, default 1024.0
        Size of every message in bytes.

    Returns
    -------
    CircuitPlan
        The plan for the circuit engine.
    """
    shape = _shape(topology)
    n = shape.processors
    i = np.arange(n, dtype=np.int64)
    return square_plan(shape, lls_routes, expected=lambda ks: (ks[:, None] + i[None, :]) % n,
                       message_bytes=message_bytes, owner="algorithm all-to-all-personalized-lls")


def cls_plan(topology: Topology, *, message_bytes: float = 1024.0) -> CircuitPlan:
    """Plan the all-to-all on a fat tree by the Canonical Latin Square: the ``N`` XOR permutations (ch. 5).

    Row ``x`` is ``i -> i XOR x``, one circuit configuration each, every pass.

    Parameters
    ----------
    topology : Topology
        A ``gft`` network with ``m`` and ``w`` powers of two.
    message_bytes : float, default 1024.0
        Size of every message in bytes.

    Returns
    -------
    CircuitPlan
        The plan for the circuit engine.

    Raises
    ------
    TopocastError
        Unless ``m`` and ``w`` are powers of two.
    """
    shape = _shape(topology)
    require_xor(shape, "algorithm all-to-all-personalized-cls")
    i = np.arange(shape.processors, dtype=np.int64)
    return square_plan(shape, xor_routes, expected=lambda xs: xs[:, None] ^ i[None, :],
                       message_bytes=message_bytes, owner="algorithm all-to-all-personalized-cls")


register(
    "all-to-all-personalized-lls", lls_plan, "alltoall",
    "total exchange on a fat tree: the N rotations i -> i+k (Left Latin Square), one circuit "
    "configuration each, ceil(m/w)^(h-1) passes on a slimmed tree",
    families=("gft",), aliases=("lls", "left-latin-square", "slimmed-lls"), engines=("circuit",),
    paper="Magliocca 2021, ch. 4 (Algorithms 1 and 2)", run_params=CIRCUIT_PARAMS)
register(
    "all-to-all-personalized-cls", cls_plan, "alltoall",
    "total exchange on a fat tree: the N XOR permutations i -> i XOR x (Canonical Latin Square); "
    "m and w powers of two",
    families=("gft",), aliases=("cls", "canonical-latin-square"), engines=("circuit",),
    paper="Magliocca 2021, ch. 5", run_params=CIRCUIT_PARAMS)


# -- Latin squares of XOR configurations (5.1.3, 5.2.3) --------------------------------


def random_xor_base(shape: GFTShape, rng: np.random.Generator) -> list[np.ndarray]:
    """Draw a base configuration: a random XOR state per switch, the first switch of each level straight.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    list of numpy.ndarray
        States per level.
    """
    out = []
    for x in range(shape.h + 1):
        states = rng.integers(0, shape.w if x == 0 else shape.m, shape.level_count(x))
        states[0] = 0
        out.append(states)
    return out


def xor_configuration_count(shape: GFTShape) -> int:
    """Count the configurations with straight up stages and one XOR state per top and down switch.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).

    Returns
    -------
    int
        The count.
    """
    bits = shape.level_count(0) * int(math.log2(shape.w)) + sum(
        shape.level_count(x) * int(math.log2(shape.m)) for x in range(1, shape.h + 1))
    return 2 ** bits


def latin_square_count(shape: GFTShape) -> int:
    """Count the Latin squares the XOR configurations split into: configurations / N.

    For a plain tree this is the thesis's ``m^((h+1) m^h - (h+1))``.

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).

    Returns
    -------
    int
        The count.
    """
    return xor_configuration_count(shape) // shape.processors


def all_xor_bases(shape: GFTShape) -> Iterator[list[np.ndarray]]:
    """Generate every base with the first switch of each level straight (small trees only).

    Parameters
    ----------
    shape : GFTShape
        The fat tree GFT(h, m, w).

    Yields
    ------
    list of numpy.ndarray
        States per level.
    """
    sizes = [shape.level_count(x) - 1 for x in range(shape.h + 1)]
    radices = [shape.w] * sizes[0] + [shape.m] * sum(sizes[1:])
    for combo in itertools.product(*[range(r) for r in radices]):
        out, pos = [], 0
        for s in sizes:
            out.append(np.array((0,) + combo[pos:pos + s], dtype=np.int64))
            pos += s
        yield out
