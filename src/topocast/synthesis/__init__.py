"""Collective synthesis: a verified schedule for any topology and cost model, with its gap to the lower bound.

``synthesize(topology_or_spec, collective, seed=..., budget=..., **model)``
returns a :class:`Synthesis`: an ordinary :class:`~topocast.plans.schedule.Schedule`
already run through :func:`topocast.execution.execute.execute` (verified exactly once),
the model it was made for, the lower bound of :mod:`topocast.measure.bounds` and the
ratio.  Methods (see ``docs/synthesis.md``):

* ``greedy`` (event engine): continuous-time greedy link-chunk matching
  (:mod:`.greedy`, after TACOS), with chunking and seeded relabelling
  restarts; the best planned makespan wins.
* ``bfs`` / ``matching`` (step engine, broadcast): a breadth-first all-port
  tree, or a greedy ``p``-port matching per step (:mod:`.steps`).
* every registered algorithm that runs the collective on the network
  (:mod:`.known`), run under the same model through the one run path; the
  best verified candidate wins (``origin``: ``synthesized`` or ``registered``),
  so a synthesis is never slower than an algorithm topocast already has.

* ``trees`` (event engine, all-port, full duplex; broadcast and all-gather when
  the message takes at least a start-up to send): Edmonds' arc-disjoint
  spanning arborescences per root, pipelined in chunks (:mod:`.forest`).
* under ``ports = P`` the greedy plans ``P`` sends and receipts per node, and
  its one-port plans run too (never slower with more ports).
* ``milp`` (event engine, ``exact=True``): the optimal schedule of whole
  messages from a time-indexed program solved by HiGHS (:mod:`.exact`).
* reductions (:mod:`.reduction`): a synthesised all-gather or broadcast run
  backwards, beside every registered algorithm of the collective; the
  fastest verified one.

``replay(spec, path)`` runs a written schedule again (:mod:`.fileformat`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import TopocastError, VerificationError
from ..execution.result import RunResult
from ..plans.schedule import REDUCTIONS, Schedule, ScheduleBuilder
from ..sim.models import CostModel, Model
from ..topology.core import Topology
from . import greedy, steps
from .model import COLLECTIVES, model_record, resolve_model

if TYPE_CHECKING:
    from .known import Known

ENGINES = ("event", "step")
#: most chunks per message, and most relabelling restarts, a synthesis takes
MAX_CHUNKS = 4096
MAX_RESTARTS = 1000
CHUNK_CHOICES = (1, 2, 4, 8, 16, 32)
#: how long (in start-ups) a free link may wait for chunks already on their way to its sender
WAITS = (0.0, 0.5, 1.0)


@dataclass
class Synthesis:
    """A verified synthesised schedule, the model it was made for, and how far it is from the bound."""

    spec: str
    collective: str
    engine: str
    method: str
    seed: int
    schedule: Schedule
    model: dict[str, Any]
    result: RunResult
    chunks: int = 1
    reference: str = ""
    seconds: float = 0.0
    candidates: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: ``synthesized`` (a method of this package) or ``registered`` (``method`` is the algorithm's name)
    origin: str = "synthesized"
    #: the bound's kind, value and witness, every bound computed, and what they hold for (:func:`certificate`)
    bound: dict[str, Any] = field(default_factory=dict)
    #: on a degraded network (:mod:`topocast.faults.synthesis`): the canonical fault spec, and the schedule
    #: before its promise was restricted to the connected healthy nodes (what the file stores)
    faults: str | None = None
    lifted: Schedule | None = None

    @property
    def measured(self) -> float:
        """The engine's time (s, event) or steps (step) of the verified run."""
        value: float = self.result.metrics["time" if self.engine == "event" else "steps"]
        return value

    @property
    def lower_bound(self) -> float:
        value: float = self.result.metrics["lower_bound"]
        return value

    @property
    def ratio(self) -> float | None:
        value: float | None = self.result.metrics["lower_bound_ratio"]
        return value

    def summary(self) -> dict[str, Any]:
        """Plain JSON-able facts: spec, model, bound, ratio, verification, method and timing."""
        m = self.result.metrics
        return {"spec": self.spec, "collective": self.collective, "engine": self.engine, "method": self.method,
                "origin": self.origin, "seed": self.seed, "chunks": self.chunks, "model": self.model,
                "measured": self.measured,
                "unit": "s" if self.engine == "event" else "steps", "lower_bound": self.lower_bound,
                "ratio": self.ratio, "reference_algorithm": self.reference, "synthesis_seconds": self.seconds,
                "verification": {"verified": bool(self.result.verified), "exactly_once": bool(m["exactly_once"]),
                                 "redundant_receipts": int(m["redundant_receipts"]), "receipts": int(m["receipts"])},
                "candidates": self.candidates, "notes": self.notes, "bound": self.bound,
                **({"faults": self.faults} if self.faults is not None else {})}

    def write(self, path: str | Path) -> Path:
        from .fileformat import write

        return write(path, self)


#: the most (node, message) pairs a synthesis takes on: the flooding planner keeps two bits per pair (what each
#: node holds and knows is coming) and its work grows with them; verification and timing no longer keep any
#: state per pair (2**28 while the event engine kept an arrival time per pair)
MAX_PAIRS = 2**29


def estimate_bytes(topology: Topology, collective: str, engine: str, chunks: int | None) -> float:
    """Peak bytes of a synthesis: for broadcast and all-gather the flooding planner's two bits per (node,
    message) pair, per delivery (message and hop) a transfer and id range of the plan with the engines' and the
    verifier's share (48 bytes), and the kernels a first run loads (72 MiB).  All-to-all is routed, not
    flooded (no state per (node, message) pair): the router's all-pairs distances (8 bytes a pair) and per
    message its queue links and endpoints (24 bytes), and the 48 bytes per delivery.

    Measured (peak over what the process held before): all-to-all of torus:24x24 262 MiB (estimate 504 MiB),
    torus:16x16 148 MiB (estimate 185 MiB); all-gather of torus:10x10x10 115 MiB (estimate 120 MiB).  The
    engine is not counted apart: neither keeps state per pair."""
    from ..topology.metrics import bfs_distances

    n = topology.num_nodes
    c = chunks or (max(CHUNK_CHOICES) if collective == "broadcast" else 1)
    messages = {"broadcast": 1, "allgather": n, "alltoall": n * n, "reduce": 1}.get(collective, n) * c
    need = 72.0 * 2**20
    if collective == "alltoall":
        hops = float(np.max(bfs_distances(topology, 0), initial=1))
        need += 48.0 * messages * hops + 24.0 * messages + 8.0 * n * n
    else:
        need += float(n) * messages / 4 + 48.0 * messages * (n - 1)
    return need


def check_size(topology: Topology, collective: str, engine: str, chunks: int | None,
               max_memory: float | None) -> None:
    """Refuse, before any planning, a flooding synthesis (broadcast, all-gather) past :data:`MAX_PAIRS`, and any
    whose estimated peak (:func:`estimate_bytes`) is over ``max_memory`` (default: half of RAM)."""
    from ..infra.memory import check_need, words

    n = topology.num_nodes
    c = chunks or (max(CHUNK_CHOICES) if collective == "broadcast" else 1)
    pairs = n * {"broadcast": 1, "allgather": n, "alltoall": 1, "reduce": 1}.get(collective, n) * c
    if collective != "alltoall" and pairs > MAX_PAIRS:
        raise TopocastError(f"synthesize: {collective} on {words(n)} ({c} chunk{'s' if c > 1 else ''} per message) "
                            f"tracks {words(pairs, '(node, message) pairs')}, more than the {MAX_PAIRS:,} "
                            "a synthesis handles; synthesise a smaller network or fewer chunks")
    check_need(f"synthesising {collective} on {topology.spec} ({words(n)})",
               estimate_bytes(topology, collective, engine, chunks), max_memory)


def _topology(topology: str | Topology, max_memory: float | None, faults: Any = None) -> Topology:
    from ..faults.degrade import degrade
    from ..spec import build

    built: Topology = degrade(topology, faults) if isinstance(topology, Topology) else build(
        topology, max_memory=max_memory, faults=faults)
    return built


def _messages(topology: Topology, collective: str, root: int) -> tuple[np.ndarray, Any]:
    """(origin, targets) of the collective's whole messages."""
    n = topology.num_nodes
    if collective == "broadcast":
        if not 0 <= root < n:
            raise TopocastError(f"synthesize: parameter 'root' must be a node in 0..{n - 1}, got root={root}")
        return np.array([root], dtype=np.int64), "all"
    if collective == "allgather":
        return np.arange(n, dtype=np.int64), "all"
    ids = np.arange(n * n, dtype=np.int64)
    return ids % n, ids // n


def _chunked(origin: np.ndarray, targets: Any, chunks: int) -> tuple[np.ndarray, Any]:
    """Message ``i`` becomes chunks ``i*c .. i*c + c - 1`` (contiguous, so ranges stay short)."""
    if chunks == 1:
        return origin, targets
    return np.repeat(origin, chunks), targets if isinstance(targets, str) else np.repeat(targets, chunks)


def to_schedule(plan: greedy.TimedTransfers, num_nodes: int, origin: np.ndarray, targets: Any, collective: str,
                chunk_bytes: float, step: np.ndarray | None = None, meta: dict[str, Any] | None = None) -> Schedule:
    """A step-ordered :class:`Schedule` from a plan: ``step`` is the dense rank of the start time, so the
    event engine keeps each link's order and every transfer after the ones that brought its data."""
    if step is None:
        _, step = np.unique(plan.start, return_inverse=True)
    builder = ScheduleBuilder(num_nodes, origin=origin, collective=collective, targets=targets,
                              message_bytes=chunk_bytes, meta=meta)
    builder.add_ranges(plan.src, plan.dst, np.diff(plan.range_ptr), plan.range_first, plan.range_count,
                       step=np.asarray(step, dtype=np.int64))
    return builder.build()


def _relabelled(topology: Topology, perm: np.ndarray) -> Topology:
    """The same graph with node ``v`` renamed ``perm[v]`` (a restart sees other tie-breaks)."""
    src = perm[topology.arc_sources]
    dst = perm[topology.indices]
    return Topology.from_arcs(topology.family, dict(topology.params), topology.num_nodes, src, dst)


def _event_candidates(topology: Topology, collective: str, chunks: int | None,
                      restarts: int) -> list[tuple[int, int, float, int]]:
    """(chunks, cap, wait, relabel index) tried by the event synthesis, in a fixed order; ``wait`` is in
    start-ups (how long a free link may wait for chunks already on their way to its sender)."""
    if collective == "broadcast":
        choices = CHUNK_CHOICES if chunks is None else (chunks,)
        return [(c, 1 if c > 1 else 0, 0.0, 0) for c in choices]
    c = 1 if chunks is None else chunks
    if collective == "alltoall":
        return [(c, 0, 0.0, k) for k in range(restarts + 1)]
    return [(c, 0, w, k) for k in range(restarts + 1) for w in WAITS]


def _plan_event(topology: Topology, collective: str, model: Model, message_bytes: float, origin: np.ndarray,
                targets: Any, chunks: int, cap: int, wait: float, relabel: int, seed: int
                ) -> tuple[greedy.TimedTransfers, np.ndarray, Any]:
    """One greedy plan (on a relabelled copy when ``relabel`` > 0, mapped back), planned for ``model``'s
    ports."""
    from .route import route

    origin_c, targets_c = _chunked(origin, targets, chunks)
    n = topology.num_nodes
    perm = np.arange(n)
    graph = topology
    if relabel:
        perm = np.random.default_rng([seed, relabel]).permutation(n)
        graph = _relabelled(topology, perm)
    if collective == "alltoall":
        plan = route(graph, perm[origin_c], perm[targets_c], model.cost, model.ports, message_bytes / chunks)
    else:
        bits = greedy.origin_bits(n, perm[origin_c])
        plan = greedy.flood(graph, bits, model.cost, model.ports, message_bytes / chunks, cap,
                            wait * model.cost.startup)
    if relabel:
        inverse = np.argsort(perm)
        plan = replace(plan, src=inverse[plan.src], dst=inverse[plan.dst])
    return plan, origin_c, targets_c


def _default_restarts(topology: Topology, collective: str) -> int:
    work = topology.num_nodes * (topology.num_nodes if collective != "broadcast" else 1)
    return 3 if work <= 2_000_000 else 0


def _synthesize_event(topology: Topology, collective: str, model: Model, params: dict[str, Any], origin: np.ndarray,
                      targets: Any, seed: int, budget: float, chunks: int | None, restarts: int | None,
                      t0: float) -> tuple[Schedule, str, int, list[dict[str, Any]], list[str]]:
    cands = _event_candidates(topology, collective, chunks, _default_restarts(topology, collective)
                              if restarts is None else restarts)
    best: tuple[greedy.TimedTransfers, np.ndarray, Any, int] | None = None
    tried: list[dict[str, Any]] = []
    notes: list[str] = []
    # under P > 1 ports the one-port plans run too: a schedule is never slower with more ports (the engine
    # gives every transfer the earliest free port), so the P-port synthesis is never slower than one-port
    models = [model]
    if model.ports.ports is not None and model.ports.ports > 1:
        models.append(replace(model, ports=replace(model.ports, ports=1)))
    runs = [(m, *cand) for cand in cands for m in models]
    for m, c, cap, wait, relabel in runs:
        if tried and time.perf_counter() - t0 > budget:
            notes.append(f"budget of {budget:g} s reached after {len(tried)} of {len(runs)} candidates")
            break
        plan, origin_c, targets_c = _plan_event(topology, collective, m, params["message_bytes"], origin,
                                                targets, c, cap, wait, relabel, seed)
        tried.append({"chunks": c, "cap": cap, "wait": wait, "restart": relabel, "planned": plan.makespan,
                      **({"planned_ports": m.ports.ports} if len(models) > 1 else {})})
        if best is None or plan.makespan < best[0].makespan:
            best = (plan, origin_c, targets_c, c)
    if best is None:
        raise TopocastError("synthesize: no candidate to try")
    plan, origin_c, targets_c, c = best
    schedule = to_schedule(plan, topology.num_nodes, origin_c, targets_c, collective, params["message_bytes"] / c)
    return schedule, "greedy", c, tried, notes


def _synthesize_steps(topology: Topology, collective: str, model: Model, params: dict[str, Any], origin: np.ndarray,
                      seed: int, restarts: int | None) -> tuple[Schedule, str, int, list[dict[str, Any]], list[str]]:
    if collective != "broadcast":
        raise TopocastError(f"synthesize: the step engine synthesises broadcast only, not '{collective}'; "
                            "use engine='event'")
    root = int(origin[0])
    ports = model.ports.ports
    if ports is None:
        src, dst, step = steps.bfs_broadcast(topology, root)
        method, tried = "bfs", [{"steps": int(step.max(initial=-1)) + 1}]
    else:
        best: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        tried = []
        for k in range(1 + (3 if restarts is None else restarts)):
            out = steps.port_broadcast(topology, root, ports, np.random.default_rng([seed, k // 2]), mode=k % 2)
            tried.append({"restart": k, "steps": int(out[2].max(initial=-1)) + 1})
            if best is None or tried[-1]["steps"] < int(best[2].max(initial=-1)) + 1:
                best = out
        if best is None:
            raise TopocastError("synthesize: no candidate to try")
        (src, dst, step), method = best, "matching"
    builder = ScheduleBuilder(topology.num_nodes, origin=origin, collective="broadcast",
                              message_bytes=params["message_bytes"])
    builder.add(src=src, dst=dst, first=0, step=step)
    return builder.build(), method, 1, tried, []


def synthesize(topology: str | Topology, collective: str, *, seed: int = 0, budget: float = 300.0,
               engine: str = "event", root: int = 0, chunks: int | None = None, restarts: int | None = None,
               max_memory: float | None = None, params_from_text: bool = False, known: bool = True,
               exact: bool = False, faults: Any = None, **params: Any) -> Synthesis:
    """Synthesise, verify (exactly once, on ``engine``) and measure a ``collective`` schedule.

    ``params``: the run's model parameters (``message_bytes``, ``startup``,
    ``per_byte``, ``per_hop``, ``ports``, ``duplex`` and the family's aliases
    such as Galaxyfly's ``packet_size``), defaulting to those of the
    topology's own algorithms.  ``chunks``: split every message into this
    many chunks (default: tried for broadcast, 1 otherwise).  ``budget`` (s)
    stops trying further candidates of the synthesiser's own search (at least
    one runs); the same seed gives the same schedule whenever the budget is not
    reached.  ``known``: first run every registered algorithm of the
    collective that fits the network (:mod:`.known`), whatever the budget, and
    return the best verified candidate (ties go to the synthesised one).
    ``exact``: also solve the time-indexed program of :mod:`.exact` (event
    engine, small networks, costs on a coarse common time grid) for the
    optimal schedule of whole messages, and record its proof in ``bound``.
    ``faults`` (a fault spec, or a degraded ``topology``): synthesise on the surviving graph, component by
    component, with the bound of the degraded network (:mod:`topocast.faults.synthesis`).
    """
    from ..infra.validate import integer, number

    t0 = time.perf_counter()
    seed = integer(seed, "seed", minimum=0, maximum=2**63 - 1)
    budget = number(budget, "budget", minimum=0)
    if engine not in ENGINES:
        raise TopocastError(f"engine: synthesis runs on {', '.join(ENGINES)}, not '{engine}'")
    if chunks is not None:
        chunks = integer(chunks, "chunks", minimum=1, maximum=MAX_CHUNKS)
    if restarts is not None:
        restarts = integer(restarts, "restarts", minimum=0, maximum=MAX_RESTARTS)
    if collective not in COLLECTIVES:
        raise TopocastError(f"collective: must be one of {', '.join(COLLECTIVES)}, got {collective!r}")
    if exact and (engine != "event" or collective in REDUCTIONS):
        raise TopocastError("exact: the exact synthesis solves broadcast, all-gather and all-to-all on the event "
                            f"engine, not {collective} on the {engine} engine")
    topology = _topology(topology, max_memory, faults)
    if topology.faults is not None:
        from ..faults.synthesis import synthesize as on_survivors

        on_faults: Synthesis = on_survivors(topology, collective, seed=seed, budget=budget, engine=engine,
                                            root=integer(root, "root", minimum=0), chunks=chunks,
                                            restarts=restarts,
                                        max_memory=max_memory, params_from_text=params_from_text, known=known,
                                        exact=exact, **params)
        return on_faults
    resolved, model, reference = resolve_model(topology.family, collective, params, params_from_text)
    if exact and (model.ports.ports or 1) > 1:
        raise TopocastError(f"exact: the exact program models all-port or one-port nodes, not ports="
                            f"{model.ports.ports}; leave out --exact or use ports=1 or all")
    check_size(topology, collective, engine, chunks, max_memory)
    if collective in REDUCTIONS:
        from .reduction import synthesize_reduction

        schedule, result, method, c, tried, notes, origin = synthesize_reduction(
            topology, collective, engine, model, resolved, seed, budget, integer(root, "root", minimum=0), chunks,
            max_memory, known)
        return Synthesis(topology.spec, collective, engine, method, seed, schedule, model_record(resolved, model),
                         result, c, reference, round(time.perf_counter() - t0, 3), tried, notes, origin,
                         certificate(topology, schedule, engine, model))
    sources, targets = _messages(topology, collective, integer(root, "root", minimum=0))
    best_known: Known | None = None
    records: list[dict[str, Any]] = []
    skipped: list[str] = []
    if known:  # first, and whatever the budget: the result is never slower than a registered algorithm
        from .known import run_known

        best_known, records, skipped = run_known(topology, collective, engine, model, resolved, int(sources[0]),
                                                 seed, max_memory, chunks)
    if engine == "event":
        schedule, method, c, tried, notes = _synthesize_event(topology, collective, model, resolved, sources, targets,
                                                              seed, budget, chunks, restarts, t0)
    else:
        schedule, method, c, tried, notes = _synthesize_steps(topology, collective, model, resolved, sources, seed,
                                                              restarts)
    tried = [{"origin": "synthesized", "method": method, **entry} for entry in tried]
    result = verify(topology, schedule, engine, model, method, seed, resolved, max_memory)
    origin = "synthesized"
    if collective in ("broadcast", "allgather") and engine == "event" and model.ports.ports is None \
            and model.ports.duplex == "full" and time.perf_counter() - t0 <= budget \
            and resolved["message_bytes"] * model.cost.per_byte >= model.cost.startup:  # bandwidth matters
        packed = _tree_candidate(topology, collective, origin_of(schedule), model, resolved, seed, chunks,
                                 max_memory, notes)
        if packed is not None:
            tried.append({"origin": "synthesized", "method": "trees", "chunks": packed[2],
                          "trees": packed[3], "measured": packed[1].metrics["time"]})
            if packed[1].metrics["time"] < result.metrics["time"]:
                schedule, result, c, method = packed[0], packed[1], packed[2], "trees"
    tried += records
    notes += skipped
    measure = "time" if engine == "event" else "steps"
    if best_known is not None and best_known.result.metrics[measure] < result.metrics[measure]:
        schedule, result, c, origin = best_known.schedule, best_known.result, best_known.chunks, "registered"
        method = best_known.name
    proof = None
    if exact:
        whole = [t.get("measured", t.get("planned")) for t in tried
                 if t.get("chunks", 1) == 1 and t.get("verified", True)]
        if c == 1:
            whole.append(result.metrics["time"] if engine == "event" else None)
        found, proof = _exact(topology, collective, engine, model, resolved, origin_of(schedule), seed, max_memory,
                              [w for w in whole if w is not None],
                              max(1.0, min(EXACT_SECONDS, t0 + budget - time.perf_counter())))
        tried.append({"origin": "synthesized", "method": "milp", "planned": proof["optimum"]})
        if found is not None and found[1].metrics["time"] < result.metrics["time"]:
            (schedule, result), method, c, origin = found, "milp", 1, "synthesized"
    bound = certificate(topology, schedule, engine, model)
    if proof is not None:
        bound["exact"] = proof
    return Synthesis(topology.spec, collective, engine, method, seed, schedule, model_record(resolved, model), result,
                     c, reference, round(time.perf_counter() - t0, 3), tried, notes, origin, bound)


#: seconds the exact program may take by default
EXACT_SECONDS = 60.0


def _exact(topology: Topology, collective: str, engine: str, model: Model, params: dict[str, Any], root: int, seed: int,
           max_memory: float | None, horizons: list[float], time_limit: float
           ) -> tuple[tuple[Schedule, RunResult] | None, dict[str, Any]]:
    """``((schedule, verified run) of the program or None, the proof record)``; see :mod:`.exact`."""
    from .exact import solve
    from .greedy import TimedTransfers
    from .route import _ranges

    if engine != "event":
        raise TopocastError("exact: the exact synthesis runs on the event engine; use engine='event'")
    if not horizons:
        raise TopocastError("exact: no candidate sends messages whole to bound the program's horizon")
    origin, targets = _messages(topology, collective, root)
    from ..measure import bounds

    probe = to_schedule(TimedTransfers(*(np.zeros(0, np.int64),) * 2, np.zeros(0), np.zeros(1, np.int64),
                                       np.zeros(0, np.int64), np.zeros(0, np.int64), 0.0),
                        topology.num_nodes, origin, targets, collective, params["message_bytes"])
    lower = bounds.time_bound(topology, probe, model.cost, model.ports).value
    if min(horizons) <= lower * (1 + 1e-12):
        return None, {"optimum": min(horizons), "dual_bound": lower, "optimal": True, "gap": 0.0,
                      "status": "the best candidate meets the lower bound: optimal without the program",
                      "holds_for": "any schedule of the collective under this model"}
    plan = solve(topology, origin, targets, model.cost, model.ports, params["message_bytes"], min(horizons),
                 time_limit, lower)
    proof = {"optimum": plan.makespan, "dual_bound": plan.dual_bound, "optimal": plan.optimal, "gap": plan.gap,
             "status": plan.status, "time_unit": plan.unit, "variables": plan.variables,
             "holds_for": "schedules that send each message whole (not split into chunks)",
             "solver": "HiGHS through scipy.optimize.milp, time-indexed program (docs/synthesis.md)"}
    if len(plan.src) == 0:
        proof["optimum"] = None
        return None, proof
    order = np.argsort(plan.start, kind="stable")
    carried = [plan.carried[k] for k in order]
    tptr = np.zeros(len(carried) + 1, np.int64)
    np.cumsum([len(ids) for ids in carried], out=tptr[1:])
    ptr, first, count = _ranges(tptr, np.concatenate([np.asarray(ids, np.int64) for ids in carried]))
    timed = TimedTransfers(plan.src[order], plan.dst[order], plan.start[order], ptr, first, count, plan.makespan)
    schedule = to_schedule(timed, topology.num_nodes, origin, targets, collective, params["message_bytes"])
    return (schedule, verify(topology, schedule, engine, model, "milp", seed, params, max_memory)), proof


def certificate(topology: Topology, schedule: Schedule, engine: str, model: Model) -> dict[str, Any]:
    """The lower bound with what re-checks it: ``kind``, ``value``, ``witness`` (the cut's node set and links,
    the release bound's node and distance, the doubling rounds), ``holds_for``, every bound computed
    (``all``) and, on the event engine, the bounds of schedules that send messages whole (``unsplit``)."""
    from ..measure import bounds

    if engine == "step":
        b = bounds.step_bound(topology, schedule, model.ports)
        return {"kind": b.kind, "value": b.value, "witness": b.witness, "unit": "steps",
                "holds_for": "any step schedule of the collective under this port model"}
    if schedule.is_reduction:
        b = bounds.time_bound(topology, schedule, model.cost, model.ports)
        return {"kind": b.kind, "value": b.value, "witness": b.witness, "unit": "s",
                "holds_for": "any schedule of the reduction under this model, however the vector is cut"}
    every = bounds.time_bounds(topology, schedule, model.cost, model.ports)
    b = bounds.time_bound(topology, schedule, model.cost, model.ports)
    unsplit = bounds.unsplit_bounds(topology, schedule, model.cost, model.ports)
    return {"kind": b.kind, "value": b.value, "witness": b.witness, "unit": "s",
            "holds_for": "any schedule of the collective under this model, its messages split into chunks or not",
            "all": [{"kind": x.kind, "value": x.value, "witness": x.witness} for x in every],
            "unsplit": [{"kind": x.kind, "value": x.value,
                         "holds_for": "schedules that send each message whole"} for x in unsplit]}


#: most (chunk, receiver) deliveries a tree-packed schedule plans, and most nodes it packs trees on (broadcast:
#: ``k (N - 1)`` completion tests; all-gather: that for every root, 0.3 s a root on 120 nodes)
TREE_DELIVERIES = 8_000_000
TREE_NODES = {"broadcast": 2048, "allgather": 128}
#: seeded packings a broadcast tries (the lowest wins); an all-gather packs once per root
TREE_TRIES = 4


def _tree_candidate(topology: Topology, collective: str, root: int, model: Model, params: dict[str, Any],
                    seed: int, chunks: int | None, max_memory: float | None, notes: list[str]
                    ) -> tuple[Schedule, RunResult, int, int] | None:
    """``(schedule, verified run, chunks per message, trees per root)`` of the tree-packed broadcast or
    all-gather (:mod:`.forest`), or None."""
    from .forest import arc_loads, depths, pack, pipeline

    n = topology.num_nodes
    if n > TREE_NODES[collective]:
        notes.append(f"trees: not tried above {TREE_NODES[collective]} nodes for {collective} (the packing's time)")
        return None
    roots = np.array([root]) if collective == "broadcast" else np.arange(n)
    packing = pack(topology, roots, seed, tries=TREE_TRIES if collective == "broadcast" else 1) if n > 1 else None
    if packing is None or packing.per_root == 0:
        notes.append("trees: no spanning tree (a single node, or a network that is not connected)")
        return None
    k = packing.per_root
    height = max(int(depths(p).max()) for p in packing.parent)
    load = float(arc_loads(packing, n).max())
    most = max(1, min(MAX_CHUNKS // k, TREE_DELIVERIES // max(1, len(roots) * k * (n - 1))))
    if chunks is not None:
        if chunks % k:
            notes.append(f"trees: chunks={chunks} is not a multiple of the {k} trees per root")
            return None
        per_tree = chunks // k
    else:
        per_tree = _per_tree(height, load, model.cost, params["message_bytes"], most)
    src, dst, step, ranges, first, count = pipeline(packing, per_tree, packing.roots if collective == "allgather"
                                                    else np.zeros(len(packing.roots), np.int64))
    c = k * per_tree
    builder = ScheduleBuilder(n, origin=np.repeat(roots, c), collective=collective,
                              message_bytes=params["message_bytes"] / c)
    builder.add_ranges(src, dst, ranges, first, count, step=step)
    schedule = builder.build()
    return schedule, verify(topology, schedule, "event", model, "trees", seed, params, max_memory), c, k


def _per_tree(height: int, load: float, cost: CostModel, message_bytes: float, most: int) -> int:
    """Chunks per tree minimising the pipeline's estimate ``(q + height - 1) (t_s + load B t_w / q)``
    (``load``: root-data units on the busiest link) over ``q <= most``."""
    q = np.arange(1, most + 1)
    t = (q + height - 1) * (cost.startup + load * message_bytes * cost.per_byte / q)
    return int(q[np.argmin(t)])


def origin_of(schedule: Schedule) -> int:
    """The root of a broadcast (node 0 for the other collectives)."""
    return int(schedule.origin[0]) if schedule.collective == "broadcast" else 0


def verify(topology: Topology, schedule: Schedule, engine: str, model: Model, method: str, seed: int = 0,
           params: dict[str, Any] | None = None, max_memory: float | None = None) -> RunResult:
    """Run ``schedule`` through :func:`topocast.execution.execute.execute`; raise unless delivered exactly once."""
    from ..execution.execute import execute

    result = execute(topology, schedule, engine, model, algorithm=f"synthesized:{method}", seed=seed,
                     params=dict(params or {}), max_bytes=max_memory)
    if not (result.verified and result.metrics["exactly_once"]):
        raise VerificationError(f"synthesized:{method} on {topology.spec}: not delivered exactly once: "
                                f"{result.metrics.get('first_violation')}")
    return result


def replay(spec: str | Topology, path: str | Path, engine: str = "event", max_memory: float | None = None
           ) -> RunResult:
    """Load a schedule file, check it was made for ``spec`` and is well formed, and run it under its recorded
    model.  The result says whether it delivered exactly once (``result.verified``, ``first_violation``):
    a schedule that breaks a rule is a run that failed verification, not bad input."""
    from ..execution.execute import execute
    from ..infra.memory import resolve_limit
    from .fileformat import read
    from .model import model_from_record

    max_memory = resolve_limit(max_memory)
    if engine not in ENGINES:
        raise TopocastError(f"engine: a schedule file replays on {', '.join(ENGINES)}, not {engine!r}")
    topology = _topology(spec, max_memory)
    header, schedule = read(path, topology, max_memory)
    model = model_from_record(header["model"])
    if header.get("faults") is not None:  # made on a degraded network: replayed there, with its promise
        from ..faults.loss import restrict

        if not isinstance(header["faults"], str):
            raise TopocastError(f"schedule file {path}: 'faults' must be a fault spec (text), got "
                                f"{type(header['faults']).__name__}")
        topology = _topology(topology, max_memory, header["faults"])
        if schedule.is_reduction:
            from ..faults.plans import check_reducible, stamp_reduction

            check_reducible(topology, f"schedule file {path}", "surviving")
            schedule = stamp_reduction(schedule, topology)
        else:
            schedule = restrict(schedule, topology)[0]
    return execute(topology, schedule, engine, model, algorithm=f"synthesized:{header['method']}",
                   seed=header["seed"], params={**header["model"], "schedule": str(path)}, max_bytes=max_memory)


#: ``--set`` keys of ``topocast synthesize`` that are options of the search, not model parameters
SEARCH_SETTINGS = ("chunks", "restarts", "root")
#: options of the command that ``--set`` refuses (with the option to write instead)
COMMAND_OPTIONS = ("seed", "budget", "engine", "out", "max_memory", "max-memory")


def cli_synthesize(spec: str, collective: str, out: str, sets: list[str] | None = None, budget: float = 300.0,
                   seed: int = 0, engine: str = "event", root: int | None = None, chunks: int | None = None,
                   max_memory: float | None = None, exact: bool = False, faults: str | None = None) -> dict[str, Any]:
    """What ``topocast synthesize SPEC COLLECTIVE --set k=v ... --out FILE`` does; returns the summary.

    ``--set`` takes the model parameters of ``run`` and the search settings ``chunks``, ``restarts`` and
    ``root`` (``--root`` and ``--set root=`` together are refused); a command option (``seed``,
    ``budget``, ``engine``) given through ``--set`` is refused with the option to write instead.
    """
    from ..infra.fileio import check_output_file
    from ..infra.validate import integer

    path = check_output_file(out, "--out")
    params: dict[str, Any] = {}
    search: dict[str, Any] = {"root": root, "chunks": chunks, "restarts": None}
    for item in sets or []:
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not key:
            raise TopocastError(f"--set: expected key=value, got '{item}'")
        if key in params or (key in SEARCH_SETTINGS and key != "root" and search[key] is not None):
            raise TopocastError(f"--set: parameter '{key}' given twice")
        if key in COMMAND_OPTIONS:
            raise TopocastError(f"--set: '{key}' is an option of the command, not a parameter: "
                                f"write --{key.replace('_', '-')} {value or 'VALUE'}")
        if key == "root" and search["root"] is not None:
            raise TopocastError("--set: root is given twice (--root and --set root=); give one")
        if key in SEARCH_SETTINGS:
            try:
                search[key] = int(value)
            except ValueError:
                raise TopocastError(f"--set: parameter '{key}' must be an integer, got '{value}'") from None
        else:
            params[key] = value
    synthesis = synthesize(spec, collective, seed=seed, budget=budget, engine=engine,
                           root=0 if search["root"] is None else integer(search["root"], "root", minimum=0),
                           chunks=search["chunks"], restarts=search["restarts"], max_memory=max_memory,
                           params_from_text=True, exact=exact, faults=faults, **params)
    synthesis.write(path)
    return synthesis.summary()


__all__ = ["COLLECTIVES", "Synthesis", "cli_synthesize", "replay", "synthesize", "to_schedule", "verify"]
