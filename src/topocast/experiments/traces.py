"""Algorithm plans traced for the papers' own questions: the reproductions', benchmarks' and tests' tools.

A registered run goes algorithm -> plan -> :func:`topocast.execution.execute.execute`.
Some questions of the papers need the engine's raw trace of a plan: a whole
Latin square of the thesis's own switch states (thesis 4.1.3, 4.2.3), every
Latin square of a small MIN (Massini 2003), the right Latin square of the
Butterfly-Butterfly with its first-stage check (Izzi and Massini 2020), the
EJ broadcasts counted over bitmaps (Hussain 2018), and the worms of one
multicast alone in a mesh (Al-Dubai et al. 2003).  Each function here builds
the plan with the algorithm's own code and traces it through the public run
path: :func:`topocast.api.run` and :func:`topocast.execution.execute.execute` (their
results carry the engine's trace), or the circuit engine's public results in
:mod:`topocast.measure.circuit`; never an engine's module.  Algorithm modules
never call an engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..algorithms import fattree_alltoall as ft
from ..algorithms.butterfly_rls import RLSPlan, first_stage_straight, rls_circuit_plan
from ..algorithms.ej_broadcast import ALGORITHMS as EJ_ALGORITHMS
from ..algorithms.mesh_multicast import PREP_TIMES, column_path_planner, dual_path_planner, multi_path_planner
from ..algorithms.mesh_multicast_qg import qg_planner
from ..algorithms.min_alltoall import min_latin_routes, min_square_plan
from ..algorithms.worm_traffic import TrafficBuilder
from ..api import run
from ..errors import TopocastError
from ..execution.execute import execute
from ..infra.progress import SILENT, Progress
from ..measure.circuit import check_square, trace_many
from ..sim.models import Model, RouterConfig
from ..topology.core import Topology
from ..topology.eisenstein_jacobi import check_alpha
from ..topology.fattree import GFTShape
from ..topology.stages import MultistageNetwork
from ..verify.delivery import SquareCheck, is_latin_square

# -- circuit engine: whole Latin squares ------------------------------------------------------------


def route_square(shape: GFTShape, make_routes, rows: np.ndarray, chunk: int = 256, progress=None) -> SquareCheck:
    """Trace ``make_routes(shape, rows_chunk, g)`` for every pass and merge the passes per row (thesis 4.1, 4.2)."""
    return check_square(ft.square_plan(shape, make_routes, rows, chunk=chunk), progress)


def trace_thesis_algorithm(shape: GFTShape, states_of) -> SquareCheck:
    """Trace the thesis's own states ``states_of(k, p)`` for every rotation ``k`` and pass ``p = 1 ..``.

    Rows are merged over the passes; the check says whether they form a Latin
    square, and ``perms`` can be compared with the rotations ``i -> i - k``.
    """
    return check_square(ft.thesis_plan(shape, states_of))


def xor_square(shape: GFTShape, base: list[np.ndarray]) -> SquareCheck:
    """Route the ``N`` translates ``base XOR x`` and check they form a Latin square (thesis 5.1.3)."""
    rows = np.arange(shape.processors, dtype=np.int64)
    return route_square(shape, lambda s, xs, g: ft.xor_routes(s, xs, g, base), rows)


def check_min_square(net: MultistageNetwork, base: np.ndarray | None = None, chunk: int = 256) -> dict:
    """Route all ``N`` configurations of a MIN's XOR / d-shift square and report the check (thesis 3.2.4)."""
    check = check_square(min_square_plan(net, base, chunk=chunk))
    return {"perms": check.perms, "latin_square": check.latin_square, "conflicts": check.conflicts,
            "dropped": check.dropped, "undelivered": check.unrouted}


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


@dataclass
class RLSCheck:
    """Every row of the right Latin square traced: the permutations, and what is wrong with them if anything."""

    perms: np.ndarray
    conflicts: int
    dropped: int
    wrong_rows: int
    first_stage_straight: bool
    latin_square: bool

    @property
    def ok(self) -> bool:
        return self.latin_square and not (self.conflicts or self.dropped or self.wrong_rows)


def check_rls(plan: RLSPlan, ks=None, chunk: int = 256) -> RLSCheck:
    """Route rotations ``ks`` (default all ``N``), trace them in chunks, compare with ``i -> i - k`` (3.2.4.2)."""
    check = check_square(rls_circuit_plan(plan, ks, chunk=chunk))
    ks = np.arange(plan.lines, dtype=np.int64) if ks is None else np.asarray(ks, dtype=np.int64)
    return RLSCheck(check.perms, check.conflicts, check.dropped, check.wrong_rows,
                    first_stage_straight(plan, ks, chunk), check.latin_square)


# -- frontier engine: EJ broadcasts over bitmaps -----------------------------------------------------


def ej_spec(a: int, b: int, n: int) -> str:
    """The spec string of EJ_{a+b rho}^(n)."""
    return f"ej:a={a},b={b},n={n}"


def simulate_broadcast(a: int, b: int, n: int, algorithm: str, progress: Progress = SILENT,
                       max_bytes: float | None = None):
    """Run ``improved`` or ``iterative`` (Hussain 2018, sections 3 and 4) over bitmaps from node 0.

    The registered run (``one-to-all-improved`` or ``one-to-all-iterative``) on
    the ``frontier`` engine, verified, from the spec alone.

    Parameters
    ----------
    a, b, n : int
        The network EJ_{a+b rho}^(n).
    algorithm : str
        ``improved`` or ``iterative``.
    progress : Progress, optional
        Shows a status line while the run lasts.
    max_bytes : float, optional
        The memory limit in bytes; None: half of the machine's RAM.

    Returns
    -------
    FrontierTrace
        The engine's per-step figures (senders, receivers, active, free, exactly once).
    """
    check_alpha(a, b, n)
    if algorithm not in EJ_ALGORITHMS:
        raise TopocastError(f"algorithm: must be one of {', '.join(EJ_ALGORITHMS)}, got '{algorithm}'")
    with progress.status(f"frontier run: {algorithm} on {ej_spec(a, b, n)}"):
        return run(ej_spec(a, b, n), f"one-to-all-{algorithm}", engine="frontier", max_memory=max_bytes).trace


def simulate_single_source(a: int, b: int, n: int, progress: Progress = SILENT):
    """The message of node 0 through the three phases of the all-to-all broadcast, transfers per label.

    The registered run ``all-to-all-three-phase`` on the ``frontier`` engine (translation symmetry), verified.

    Parameters
    ----------
    a, b, n : int
        The network EJ_{a+b rho}^(n).
    progress : Progress, optional
        Shows a status line while the run lasts.

    Returns
    -------
    FrontierTrace
        The engine's per-step figures of node 0's message, with ``label_counts`` per step.
    """
    check_alpha(a, b, n)
    with progress.status(f"frontier run: all-to-all-three-phase on {ej_spec(a, b, n)}"):
        return run(ej_spec(a, b, n), "all-to-all-three-phase", engine="frontier").trace


# -- wormhole engine: one multicast alone ----------------------------------------------------------------
def multicast_worms(topology: Topology, algorithm: str, source: int, destinations,
                    config: RouterConfig | None = None, **params: Any) -> list[dict]:
    """The worms of one multicast, alone in the network: start node, start cycle, destinations, path.

    ``algorithm`` is ``dp``, ``mp``, ``cp`` or ``qg``; ``params`` go to the
    planner (``prep``, and for QG ``threshold``, ``routing``, ``leader_prep``).
    The plan runs through :func:`topocast.execution.execute.execute` (verified) from
    generation at cycle 0 until every worm is done.

    >>> import topocast as tc
    >>> worms = multicast_worms(tc.build("mesh:4x4"), "dp", 5, [0, 15])
    >>> [(w["start"], w["destinations"]) for w in worms]
    [(5, [15]), (5, [0])]
    """
    factories = {"dp": dual_path_planner, "mp": multi_path_planner, "cp": column_path_planner, "qg": qg_planner}
    if algorithm not in factories:
        raise TopocastError(f"multicast_worms: parameter 'algorithm' must be one of dp, mp, cp, qg, got '{algorithm}'")
    dests = [int(d) for d in destinations]
    if source in dests or len(set(dests)) != len(dests) or not dests:
        raise TopocastError("multicast_worms: destinations must be distinct, non-empty and exclude the source")
    params.setdefault("prep", PREP_TIMES["figures"][algorithm])
    router = config or RouterConfig()
    builder = TrafficBuilder(topology)
    builder.add(int(source), 0, dests, factories[algorithm](topology, **params)(int(source), np.asarray(dests)))
    plan = builder.build(cycles=10_000_000, flits=router.flits, stop_when_idle=True)
    run = execute(topology, plan, "wormhole", Model(router=router), algorithm=f"multicast-{algorithm}")
    if not run.verified:
        raise TopocastError(f"multicast_worms: {run.first_violation}")
    traffic, trace = plan.traffic, run.trace.trace
    worms = []
    for w in range(traffic.num_worms):
        lo, hi = traffic.path_ptr[w], traffic.path_ptr[w + 1]
        slots = traffic.path_slot[lo:hi]
        worms.append({"start": int(traffic.path_node[lo]), "start_cycle": int(trace.worm_inject[w]),
                      "destinations": traffic.path_node[lo:hi][slots >= 0].tolist(),
                      "delivered": trace.slot_time[slots[slots >= 0]].tolist(),
                      "path": traffic.path_node[lo:hi].tolist()})
    return worms
