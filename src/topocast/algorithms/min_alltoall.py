"""All-to-all personalized exchange on log_d N-stage MINs by XOR / d-shift steps (thesis 3.2.4).

A configuration of a MIN with ``n = log_d N`` stages of ``N/d`` switches
``d x d`` is a matrix ``M`` (``N/d`` rows, ``n`` columns): ``M[i, j]`` is the
state of switch ``i`` of stage ``j``, a shift (input ``u`` -> output
``(u + M[i, j]) mod d``; for ``d = 2`` straight/cross).

* Massini (2003), ``d = 2``: from a base ``M^(l,0)`` whose first row is
  straight, XOR step ``x`` gives ``M^(l,x)`` with every row XORed with the
  bits ``x_(n-1) .. x_0`` (stage ``j`` gets bit ``x_(n-1-j)``).  The ``N``
  configurations route a Latin square on any log2 N-stage banyan MIN.
* Liu, Chen and Chen (2007), d-ary: ``M_x[i, j] = M_0[i, j] (+)_d x_(n-1-j)``
  (digit-wise addition mod ``d``) with only the ``d`` shift states; ``M_0`` all
  zero.  Same conclusion for d-ary MINs.

Both are one function here (:func:`min_latin_routes`); d = 2 shifts are XOR.
The base may be straight or random (``base=random``, drawn from ``seed``).

The right Latin square on the Butterfly-Butterfly (Izzi and Massini 2020,
thesis 3.2.4.2) lives in :mod:`topocast.algorithms.butterfly_rls`.
"""

from __future__ import annotations

import numpy as np

from ..errors import TopocastError
from ..registry import Algorithm, Param, register_algorithm
from ..result import RunResult
from ..sim.circuit import MultistageNetwork, ROUTE_DTYPE, is_latin_square, shift_route, trace_many
from ..topology.core import Topology
from ..topology.multistage import network_of
from .fattree_alltoall import COST_PARAMS, check_square_memory, exchange_lower_bound

MIN_LATIN_FAMILIES = ("butterfly", "omega", "baseline")


def random_base(net: MultistageNetwork, rng: np.random.Generator) -> np.ndarray:
    """A base matrix ``(N/d, n)`` of random shift states, first row straight."""
    d = int(net.ins[0])
    base = rng.integers(0, d, (int(net.switches[0]), net.num_stages))
    base[0] = 0
    return base


def min_latin_routes(net: MultistageNetwork, xs, base: np.ndarray | None = None) -> np.ndarray:
    """Configurations ``M_x`` (one row per ``x``) of a log_d N-stage MIN."""
    d, stages = int(net.ins[0]), net.num_stages
    xs = np.asarray(xs, dtype=np.int64)
    rows = int(net.switches[0])
    base = np.zeros((rows, stages), dtype=np.int64) if base is None else np.asarray(base, dtype=np.int64)
    routes = np.empty((len(xs), net.route_size), dtype=ROUTE_DTYPE)
    for j in range(stages):
        digit = xs // d ** (stages - 1 - j) % d
        states = (base[None, :, j] + digit[:, None]) % d
        routes[:, net.stage_slice(j)] = shift_route(d, d, states).reshape(len(xs), -1)
    return routes


def check_min_square(net: MultistageNetwork, base: np.ndarray | None = None, chunk: int = 256) -> dict:
    """Route all ``N`` configurations (``chunk`` at a time) and report the Latin-square check."""
    n = net.num_inputs
    perms = np.empty((n, n), dtype=np.int64)
    conflicts = dropped = 0
    for lo in range(0, n, chunk):
        xs = np.arange(lo, min(n, lo + chunk))
        got, conf, drop = trace_many(net, min_latin_routes(net, xs, base))
        perms[lo:lo + len(xs)] = got
        conflicts += int(conf.sum())
        dropped += int(drop.sum())
    return {"perms": perms, "latin_square": is_latin_square(perms), "conflicts": conflicts,
            "dropped": dropped, "undelivered": int(np.count_nonzero(perms < 0))}


def partition_check(net: MultistageNetwork, max_configurations: int = 1 << 16) -> dict:
    """Every configuration of a small MIN, grouped into the Latin squares of its bases (Massini 2003).

    The bases are the matrices with the first row straight (``d^((N/d - 1) n)``
    of them); each base and its ``N`` translates ``M_x`` is one square, so the
    ``d^((N/d) n)`` configurations fall into ``N^(N/d - 1)`` squares for ``d = 2``
    (thesis 3.2.4.1).  Returns the counts: squares, how many are Latin squares
    without a conflict, and how many distinct permutations they hold.
    """
    d, stages, rows = int(net.ins[0]), net.num_stages, int(net.switches[0])
    n = net.num_inputs
    free = (rows - 1) * stages
    if d ** (free + stages) > max_configurations:
        raise TopocastError(f"partition: {d}^{free + stages} configurations, more than {max_configurations}")
    routes = []
    for code in range(d ** free):
        base = np.zeros((rows, stages), dtype=np.int64)
        base[1:] = (code // d ** np.arange(free) % d).reshape(rows - 1, stages)
        routes.append(min_latin_routes(net, np.arange(n), base))
    perms, conflicts, dropped = trace_many(net, np.concatenate(routes))
    squares = perms.reshape(d ** free, n, n)
    good = sum(is_latin_square(sq) and not conflicts[i * n:(i + 1) * n].any() and not dropped[i * n:(i + 1) * n].any()
               for i, sq in enumerate(squares))
    return {"squares": len(squares), "latin_squares": int(good), "configurations": len(perms),
            "distinct_permutations": len({p.tobytes() for p in perms})}


def _run(name: str, need_binary: bool):
    def run(topology: Topology, *, engine: str, seed: int = 0, max_memory=None, base: str = "straight",
            message_bytes: float, setup: float, startup: float, per_byte: float) -> RunResult:
        d = int(topology.params["d"])
        if need_binary and d != 2:
            raise TopocastError(f"algorithm {name}: parameter 'd' must be 2 (2 x 2 switches), got d={d}")
        net = network_of(topology)
        check_square_memory(net.num_inputs, max_memory, f"algorithm {name}")
        matrix = random_base(net, np.random.default_rng(seed)) if base == "random" else None
        check = check_min_square(net, matrix)
        n = net.num_inputs
        ok = check["latin_square"] and not (check["conflicts"] or check["dropped"] or check["undelivered"])
        time = (n - 1) * (setup + startup + message_bytes * per_byte)
        bound = exchange_lower_bound(n, message_bytes, startup, per_byte)
        metrics = {"permutations": n, "latin_square": check["latin_square"], "conflicts": check["conflicts"],
                   "passes": 1, "dropped": check["dropped"], "complete": check["undelivered"] == 0,
                   "exactly_once": ok, "base": base, "time": time, "time_lower_bound": bound,
                   "lower_bound_ratio": time / bound if bound else None, "message_bytes": message_bytes,
                   "setup": setup, "startup": startup, "per_byte": per_byte}
        violation = None if ok else (f"Latin square: {'yes' if check['latin_square'] else 'no'}, "
                                     f"{check['conflicts']} conflicting links")
        return RunResult(topology.spec, name, "circuit", "alltoall", ok, violation, metrics)

    return run


_BASE = Param("base", "str", "straight", "base configuration: straight or random (from --seed)",
              choices=("straight", "random"))

register_algorithm(Algorithm(
    "all-to-all-personalized-min-xor", _run("all-to-all-personalized-min-xor", True), "alltoall",
    "total exchange on a log2 N-stage MIN: N XOR steps of a base configuration (Massini 2003)",
    families=MIN_LATIN_FAMILIES, params=(_BASE,) + COST_PARAMS, aliases=("min-xor", "massini-xor"),
    engines=("circuit",), paper="Massini 2003; thesis 3.2.4.1"))
register_algorithm(Algorithm(
    "all-to-all-personalized-min-dshift", _run("all-to-all-personalized-min-dshift", False), "alltoall",
    "total exchange on a d-ary MIN with d-shift states: M_x = M_0 (+)_d digits of x (Liu et al. 2007)",
    families=MIN_LATIN_FAMILIES, params=(_BASE,) + COST_PARAMS, aliases=("min-dshift", "d-shift"),
    engines=("circuit",), paper="Liu, Chen, Chen 2007; thesis 3.2.4.3"))
