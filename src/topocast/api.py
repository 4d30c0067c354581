"""The two calls most users need: :func:`info` and :func:`run`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import registry
from .errors import TopocastError
from .topology.core import Topology

if TYPE_CHECKING:
    from .execution.result import RunResult
    from .sim.models import Model
    from .topology.core import UnbuiltTopology


def info(spec: str | Topology, distances: bool = True, max_memory: float | str | None = None,
         properties: bool | None = None, faults: str | None = None) -> dict[str, Any]:
    """Describe a network: size, degree, distances and graph properties.

    Gives the node and link counts, the degree, the diameter, the average distance and the distance
    distribution, and the graph properties of :mod:`topocast.topology.properties`.  With ``faults`` (or a
    degraded topology) it also says what the degraded network still is
    (:func:`topocast.faults.connectivity.connectivity`), with distances taken over the connected pairs of
    healthy nodes.

    Parameters
    ----------
    spec : str or Topology
        The network: a spec such as ``"torus:8x8"`` or a built :class:`Topology`.
    distances : bool, default True
        Compute the exact distance figures (one breadth-first search per orbit, else per node).
    max_memory : float or str, optional
        Memory limit for the build, in bytes or as a size string such as ``"2G"``; None: half of the RAM.
    properties : bool, optional
        None: the graph properties below their default size caps; True: below the forced caps; False: none.
    faults : str, optional
        A fault spec (:mod:`topocast.faults`) applied to the network before it is described.

    Returns
    -------
    dict
        Figure name -> value (counts, degree, diameter, distance distribution, properties).

    Raises
    ------
    TopocastError
        A parameter of the wrong kind, a spec or fault spec that does not parse or names a network that
        does not fit ``max_memory``, or exact distances that would take more than
        :data:`MAX_DISTANCE_WORK` arc visits.

    Examples
    --------
    >>> info("ring:6")["diameter"]
    3
    """
    from .faults.degrade import degrade
    from .infra.memory import resolve_limit
    from .spec import build
    from .topology.metrics import summary

    if not isinstance(distances, bool):
        raise TopocastError(f"distances: must be True or False, got {distances!r}")
    if properties is not None and not isinstance(properties, bool):
        raise TopocastError(f"properties: must be None, True or False, got {properties!r}")
    max_memory = resolve_limit(max_memory)
    topology = degrade(spec, faults) if isinstance(spec, Topology) else build(spec, max_memory=max_memory,
                                                                             faults=faults)
    if distances:
        check_distance_work(topology)
    if topology.faults is None:
        return summary(topology, distances=distances, properties=properties)
    from .faults import connectivity as conn

    data = summary(topology, distances=False, properties=properties)
    data.update(conn.connectivity(topology))
    if distances:
        data.update(conn.distances(topology))
    return data


#: the most arc visits the exact distance figures of ``info`` may take (about a minute and a half at the
#: 1.2e8 visits per second measured for one BFS after another on a 2e5-node random graph)
MAX_DISTANCE_WORK = 1e10


def check_distance_work(topology: Topology) -> None:
    """Refuse exact distances that would take too long, before any breadth-first search.

    The work is one BFS per orbit of known symmetry (else per node) times the arcs; ``--no-distances``
    skips the figures.

    Parameters
    ----------
    topology : Topology
        The network whose distances ``info`` would compute.

    Raises
    ------
    TopocastError
        When the searches would visit more than :data:`MAX_DISTANCE_WORK` arcs.
    """
    from .infra.memory import scientific
    from .topology.metrics import orbits

    sources = len(orbits(topology)[0])
    work = float(sources) * (topology.num_nodes + topology.num_arcs)
    if work > MAX_DISTANCE_WORK:
        raise TopocastError(f"distances: exact distances of {topology.spec} need {sources:,} breadth-first searches "
                            f"over {topology.num_arcs:,} arcs ({scientific(work)} arc visits), more than the "
                            f"{scientific(MAX_DISTANCE_WORK)} info computes; pass --no-distances (distances=False)")


#: the engines that run a plan on a degraded network (a Schedule, its transfers checked link by link)
FAULT_ENGINES = ("step", "event")


def _defaults(family: registry.Family) -> dict[str, Any]:
    return {p.name: p.default for p in family.params if not p.required}


def resolve_params(alg: registry.Algorithm, given: dict[str, Any], from_text: bool = False) -> dict[str, Any]:
    """Check parameters against an algorithm's schema, convert aliases and fill defaults.

    Parameters
    ----------
    alg : registry.Algorithm
        The algorithm whose parameter schema applies.
    given : dict of str to Any
        The parameters as the caller gave them (by name or alias).
    from_text : bool, default False
        The values are strings from the command line, parsed by each parameter's type.

    Returns
    -------
    dict of str to Any
        Every parameter of the schema by its own name, with the defaults filled in.

    Raises
    ------
    TopocastError
        An unknown parameter, one given twice (by name and alias), a required one missing, or a value
        its parameter refuses.
    """
    owner = f"algorithm {alg.name}"
    out: dict[str, Any] = {}
    for key, value in given.items():
        if key in alg.param_aliases:
            target, convert = alg.param_aliases[key]
            param = alg.param(target)
            raw = registry.Param(key, param.kind, doc=param.doc, minimum=param.minimum)
            parsed = raw.parse(str(value), owner) if from_text else raw.check(value, owner)
            key, value, from_alias = target, convert(parsed), True
        else:
            param, from_alias = alg.param(key), False
        if key in out:
            raise TopocastError(f"{owner}: parameter '{key}' given twice (directly and through an alias)")
        if from_alias:
            out[key] = param.check(value, owner)
        else:
            out[key] = param.parse(str(value), owner) if from_text else param.check(value, owner)
    for p in alg.params:
        if p.name not in out:
            if p.required:
                raise TopocastError(f"{owner}: parameter '{p.name}' is required ({p.doc})")
            out[p.name] = p.default
    return out


def plan(topology: Topology, alg: registry.Algorithm, params: dict[str, Any], engine: str, seed: int,
         max_memory: float | None = None) -> Any:
    """Make the algorithm's plan for a network.

    On a degraded network (``topology.faults``) the plan comes from
    :func:`topocast.faults.plans.degraded_plan`: made on the surviving graph for a fault-aware algorithm,
    else made for the intact network with the transfers over failed parts dropped.

    Parameters
    ----------
    topology : Topology
        The network (possibly degraded).
    alg : registry.Algorithm
        The algorithm.
    params : dict of str to Any
        Its resolved parameters (:func:`resolve_params`).
    engine : str
        The engine the plan will run on, passed to plan functions that name it.
    seed : int
        Seed of the plan's random choices, passed to plan functions that name it.
    max_memory : float, optional
        Memory limit in bytes, passed to plan functions that name it; None: half of the RAM.

    Returns
    -------
    object
        The plan (a :class:`~topocast.plans.schedule.Schedule` or an engine's own plan type).

    Raises
    ------
    TopocastError
        A root outside the surviving network, or what the algorithm's plan function refuses.
    """
    import inspect

    kwargs = {k: v for k, v in params.items() if k not in alg.model_params}
    accepted = inspect.signature(alg.plan).parameters
    for name, value in (("seed", seed), ("engine", engine), ("max_memory", max_memory)):
        if name in accepted:
            kwargs[name] = value
    if getattr(topology, "faults", None) is None or (alg.fault_mode == "native" and engine not in FAULT_ENGINES):
        return alg.plan(topology, **kwargs)  # (a native plan for another engine routes around the faults itself)
    from .faults.plans import degraded_plan

    def plan_on(network: Topology, root: int | None = None) -> Any:
        return alg.plan(network, **(kwargs if root is None else {**kwargs, "root": root}))

    root = kwargs.get("root") if "root" in kwargs and isinstance(kwargs.get("root"), int) else None
    if root is not None and not 0 <= root < topology.num_nodes:
        raise TopocastError(f"root: must be a node index in 0..{topology.num_nodes - 1}, got {root}")
    return degraded_plan(topology, alg.name, alg.collective, alg.fault_mode, plan_on, root)


@dataclass(frozen=True)
class Checked:
    """A run request that passed every check of :func:`run`, before its plan: what :func:`prepare` returns.

    Attributes
    ----------
    topology : Topology or UnbuiltTopology
        The network (built, given, or from the spec alone for an unbuilt engine).
    algorithm : registry.Algorithm
        The algorithm.
    engine : str
        The engine asked for (one of the algorithm's).
    seed : int
        The seed.
    max_memory : float or None
        The memory limit in bytes (None: half of the machine's RAM).
    params : dict
        The algorithm's parameters, resolved against its schema.
    """

    topology: Any
    algorithm: registry.Algorithm
    engine: str
    seed: int
    max_memory: float | None
    params: dict[str, Any]


def prepare(spec: str | Topology, algorithm: str, engine: str | None = None, seed: int = 0,
            max_memory: float | None = None, params_from_text: bool = False, faults: Any = None,
            **params: Any) -> Checked:
    """Check a run request before planning, as :func:`run` does.

    Every check :func:`run` makes before planning: seed, memory limit, algorithm, engine, parameters, costs,
    the network (built, or sized for an unbuilt engine), its family and the run's size.

    :func:`run` is ``prepare``, then :func:`plan`, the model and :func:`topocast.execution.execute.execute`; a caller
    that runs one plan under several models (a reproduction) checks each run here and reuses its plan.

    Parameters
    ----------
    spec, algorithm, engine, seed, max_memory, params_from_text, faults, **params
        As :func:`run` takes them.

    Returns
    -------
    Checked
        The checked request.

    Raises
    ------
    TopocastError
        The first check that fails, as :func:`run` raises it.
    """
    from .infra.memory import resolve_limit
    from .spec import build, parse_spec
    from .topology.core import UnbuiltTopology

    seed = check_seed(seed)
    max_memory = resolve_limit(max_memory)
    if not isinstance(params_from_text, bool):
        raise TopocastError(f"params_from_text: must be True or False, got {params_from_text!r}")
    if not isinstance(algorithm, str):
        raise TopocastError(f"algorithm: must be a name such as 'broadcast-binomial', got {algorithm!r}")
    alg = registry.algorithm(algorithm)
    if engine is not None and not isinstance(engine, str):
        raise TopocastError(f"engine: must be one of {', '.join(alg.engines)}, got {engine!r}")
    engine = alg.engines[0] if engine is None else engine
    if engine not in alg.engines:
        raise TopocastError(f"engine: algorithm {alg.name} runs on {', '.join(alg.engines)}, not '{engine}'")
    kwargs = resolve_params(alg, params, from_text=params_from_text)
    check_costs(alg.name, kwargs)
    if faults is not None and engine not in FAULT_ENGINES and alg.fault_mode != "native":
        from .faults.spec import parse

        if parse(faults) is not None:
            raise TopocastError(f"faults: a degraded network runs on the {' and '.join(FAULT_ENGINES)} engines "
                                f"(and unicast on the wormhole engine), not '{engine}'")
    topology: Topology | UnbuiltTopology
    if isinstance(spec, Topology):
        from .faults.degrade import degrade

        topology = degrade(spec, faults)
    elif engine in alg.unbuilt_engines:
        fam, fam_kwargs = parse_spec(spec)
        nodes = fam.estimate(**fam_kwargs)[0] if fam.estimate else None
        check_unbuilt(spec, engine, nodes, max_memory)
        merged = {**_defaults(fam), **fam_kwargs}
        size = None if nodes is None else int(nodes)  # below 2**62: checked
        topology = UnbuiltTopology(fam.name, {p.name: merged[p.name] for p in fam.params if p.name in merged}, size)
    else:
        topology = build(spec, max_memory=max_memory, faults=faults)
    if alg.families and topology.family not in alg.families:
        raise TopocastError(
            f"algorithm {alg.name}: runs on {', '.join(alg.families)}, not on family '{topology.family}'")
    if isinstance(topology, Topology):  # an unbuilt network runs on an engine that needs no such check
        # a degraded network's plan is at most the intact one's (sized there: its distances are all finite)
        check_run_size(alg, topology.intact, engine, max_memory)
    return Checked(topology, alg, engine, seed, max_memory, kwargs)


def run(spec: str | Topology, algorithm: str, engine: str | None = None, seed: int = 0,
        max_memory: float | None = None, params_from_text: bool = False, links: bool = False, faults: Any = None,
        **params: Any) -> RunResult:
    """Run a collective algorithm on a network: build, plan, execute, verify and measure.

    Every check is :func:`prepare`'s; then the algorithm's :func:`plan`, its model, and
    :func:`topocast.execution.execute.execute` on the engine that runs the plan.  Verification never raises: the
    result says whether every delivery happened exactly once (``RunResult.verified``).

    Parameters
    ----------
    spec : str or Topology
        The network: a spec such as ``"hypercube:3"`` or a built :class:`Topology`.
    algorithm : str
        A registered algorithm name or alias, e.g. ``"broadcast-binomial"`` (``topocast list``).
    engine : str, optional
        One of the algorithm's engines (``step``, ``event``, ``circuit``, ``wormhole``, ``frontier``);
        None: the algorithm's first.
    seed : int, default 0
        Seed of every random choice, in 0..2**63-1.
    max_memory : float, optional
        Memory limit in bytes; None: half of the machine's RAM.
    params_from_text : bool, default False
        The algorithm parameters are strings (from the command line) to parse by their types.
    links : bool, default False
        Also record what every directed link carried (``RunResult.links``, summaries in the metrics).
    faults : str, optional
        A fault spec (:mod:`topocast.faults`): run on the degraded network; the metrics then say what the
        plan promises there (``fault_promise``) and what it loses against the intact promise
        (``deliveries_lost``, ``missing_by_node``).
    **params
        The algorithm's parameters (message size, costs, root, ...) by name or alias.

    Returns
    -------
    RunResult
        Metrics (steps, time, lower bound, ...), the verification and what the run was.

    Raises
    ------
    TopocastError
        A parameter, spec or engine that the checks of :func:`prepare` refuse, or a plan the algorithm
        cannot make on this network.

    Examples
    --------
    >>> import topocast as tc
    >>> tc.run("hypercube:3", "allgather-recursive-doubling").metrics["steps"]
    3
    """
    from .execution.execute import execute

    checked = prepare(spec, algorithm, engine, seed, max_memory, params_from_text, faults, **params)
    the_plan = plan(checked.topology, checked.algorithm, checked.params, checked.engine, checked.seed,
                    checked.max_memory)
    model = model_of(checked)
    return execute(checked.topology, the_plan, plan_engine(the_plan, checked.engine), model,
                   algorithm=checked.algorithm.name, seed=checked.seed, params=checked.params,
                   max_bytes=checked.max_memory, links=links)


def model_of(checked: Checked) -> Model:
    """Give the :class:`~topocast.sim.models.Model` a checked run is measured under.

    The algorithm's own model when it has one, else the default model.

    Parameters
    ----------
    checked : Checked
        The checked run.

    Returns
    -------
    Model
        Ports, costs and router from the algorithm's model parameters.
    """
    from .sim.models import Model

    alg = checked.algorithm
    return alg.model(checked.params) if alg.model else Model()


#: bytes a step/event plan holds at the peak of its construction, per transfer (sender, receiver, step, range
#: pointer, as built, copied by the builder and concatenated), per id range (first id and count, three times)
#: and per message (origin, target, the id array they came from); measured on ring and torus all-gathers
#: (112 bytes per transfer and range together) and bfs-trees plans (48 per range)
PLAN_PER_TRANSFER, PLAN_PER_RANGE, PLAN_PER_MESSAGE = 64, 48, 24
#: bytes a finished plan keeps: per transfer and range as built (measured: 96 per ring transfer with its range,
#: 21 per bfs-trees range), per message origin and target
KEPT_PER_TRANSFER, KEPT_PER_RANGE, KEPT_PER_MESSAGE = 72, 24, 16
#: bytes of the first run's compiled kernels, loaded once per process (measured 40-67 MiB)
KERNELS = 72 * 2**20


def plan_shape(name: str, collective: str, topology: Topology) -> tuple[float, float, float]:
    """Estimate the size of the plan an algorithm makes on a network, before planning.

    Counted for the generic and classic all-gathers and all-to-alls; for others the most any plan of the
    collective needs (one transfer and one id range per delivery).

    Parameters
    ----------
    name : str
        The algorithm's name.
    collective : str
        Its collective (``allgather``, ``alltoall``, ...).
    topology : Topology
        The network.

    Returns
    -------
    tuple of float
        ``(transfers, id ranges, extra bytes)``; the extra bytes are the planner's own arrays.
    """
    import math

    from .topology.metrics import distance_distribution

    n = float(topology.num_nodes)
    arcs = float(topology.num_arcs)
    dims = topology.params.get("dims") or (topology.params.get("n", topology.num_nodes),)
    side = float(sum(dims))
    log = math.log2(max(n, 2.0))
    pairs = n * (n - 1)
    if name == "allgather-recursive-doubling":
        return n * log, n * log, 0.0
    if name == "allgather-ring":
        return pairs, pairs, 0.0
    if name == "allgather-mesh":
        return n * side, n * side, 0.0
    if name == "alltoall-hypercube":
        return n * log, pairs, 0.0
    if name == "alltoall-mesh":
        return n * side, n * n * side / 3, 0.0
    if name == "alltoall-ring":
        return pairs, n * n * n / 2, 0.0
    if name in ("allgather-bfs-trees", "alltoall-shortest-paths") or collective == "alltoall":
        counts = distance_distribution(topology)
        diameter = float(len(counts) - 1)
        if name == "allgather-bfs-trees":
            # all-pairs distances (int32) and each receiver's choice per source (int16)
            return min(pairs, arcs * diameter), pairs, 6 * n * n
        hops = float(sum(d * int(c) for d, c in enumerate(counts)))
        # next hop (int64) and distance (int32) per pair; per hop its arc, step and message, then the
        # grouping's order, first, count and dependency: 56 bytes, 96 measured with the builder's copies
        extra = 12 * n * n + 96 * hops if name == "alltoall-shortest-paths" else 0.0
        return min(hops, arcs * diameter), hops, extra
    return pairs, pairs, 0.0


def run_bytes(name: str, collective: str, topology: Topology, engine: str) -> float:
    """Estimate the peak bytes an all-gather or all-to-all adds on the step or event engine.

    The larger of the planner's peak and the kept plan with the engine's and the verifier's state, plus the
    kernels a first run loads (:data:`KERNELS`).

    Parameters
    ----------
    name : str
        The algorithm's name.
    collective : str
        Its collective.
    topology : Topology
        The network.
    engine : str
        ``step`` or ``event``.

    Returns
    -------
    float
        Bytes.
    """
    from .verify.delivery import PER_NODE as VERIFY_PER_NODE
    from .verify.delivery import PER_TRANSFER as VERIFY_PER_TRANSFER

    n = float(topology.num_nodes)
    messages = n if collective == "allgather" else n * n
    transfers, ranges, extra = plan_shape(name, collective, topology)
    planning = PLAN_PER_TRANSFER * transfers + PLAN_PER_RANGE * ranges + PLAN_PER_MESSAGE * messages + extra
    kept = KEPT_PER_TRANSFER * transfers + KEPT_PER_RANGE * ranges + KEPT_PER_MESSAGE * messages
    engine_state = (48 if engine == "step" else 160) * transfers
    verifier = VERIFY_PER_TRANSFER * transfers + 16 * messages + VERIFY_PER_NODE * n
    return KERNELS + max(planning, kept + engine_state + verifier)


def check_run_size(alg: registry.Algorithm, topology: Topology, engine: str, max_memory: float | None) -> None:
    """Refuse an all-gather or all-to-all whose plan, engine and verifier would not fit in memory.

    Refuse, before planning, an all-gather or all-to-all on the step or event engine whose plan, engine and
    verifier cannot fit next to what this process holds (:func:`run_bytes`; the engines and the verifier check
    again from the plan's real size).  Algorithms with a frontier form choose their own plan by size.

    Parameters
    ----------
    alg : registry.Algorithm
        The algorithm.
    topology : Topology
        The network (the intact one of a degraded network).
    engine : str
        The engine the run asks for.
    max_memory : float, optional
        Memory limit in bytes; None: half of the machine's RAM.

    Raises
    ------
    TopocastError
        ``max-memory: ...`` when the estimate (:func:`run_bytes`) does not fit.
    """
    from .infra.footprint import resident_bytes
    from .infra.memory import default_limit, human_bytes, words

    if engine not in ("step", "event") or "frontier" in alg.engines or alg.collective not in ("allgather", "alltoall"):
        return
    nodes = topology.num_nodes
    messages = nodes if alg.collective == "allgather" else nodes * nodes
    need = resident_bytes() + run_bytes(alg.name, alg.collective, topology, engine)
    limit = default_limit() if max_memory is None else max_memory
    if need > limit:
        what = f"{alg.collective}, {words(messages, 'messages')}, {engine} engine"
        raise TopocastError(f"max-memory: {alg.name} on {words(nodes)} ({what}) needs about {human_bytes(need)}, "
                            f"over the limit of {human_bytes(limit)}")


def plan_engine(the_plan: Any, engine: str) -> str:
    """Name the engine that runs a plan: the one asked for, unless the algorithm fell back to a frontier plan.

    The fallback is said in the plan's notes.

    Parameters
    ----------
    the_plan : object
        The plan the algorithm made.
    engine : str
        The engine asked for.

    Returns
    -------
    str
        ``engine``, or ``"frontier"`` after a fallback.
    """
    from .execution.execute import adapter

    if isinstance(the_plan, adapter(engine).PLAN):
        return engine
    if engine != "frontier" and isinstance(the_plan, adapter("frontier").PLAN):
        return "frontier"
    return engine


def check_seed(seed: Any) -> int:
    """Check a seed: an integer in 0..2**63-1.

    Parameters
    ----------
    seed : Any
        The seed as given.

    Returns
    -------
    int
        The seed.

    Raises
    ------
    TopocastError
        ``seed: must be an integer in 0..2**63-1 ...`` for a negative, too large or non-integer seed.
    """
    from .infra.validate import integer

    if isinstance(seed, int) and not isinstance(seed, bool) and seed < 0:
        raise TopocastError(f"seed: must be an integer in 0..2**63-1 (negative seeds are refused), got {seed}")
    try:
        return integer(seed, "seed", minimum=0, maximum=2**63 - 1)
    except TopocastError:
        raise TopocastError(f"seed: must be an integer in 0..2**63-1, got {seed!r}") from None


def check_unbuilt(spec: str, engine: str, nodes: Any, max_memory: float | None) -> None:
    """Refuse a spec-only engine on a network whose bitmaps would not fit.

    Refuse an engine that runs from the spec alone on a network whose bitmaps would not fit, before any
    array is made.

    The engine keeps at most three bitmaps of one bit per node and numbers nodes with 64-bit integers.

    Parameters
    ----------
    spec : str
        The network.
    engine : str
        The engine (one of the algorithm's ``unbuilt_engines``).
    nodes : int or float or None
        The family's estimate of the node count (None: unknown, nothing checked).
    max_memory : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Raises
    ------
    TopocastError
        ``max-memory: the ENGINE engine on SPEC (N nodes) ... needs about X, over the limit of Y``
        (:func:`topocast.infra.memory.check_need`), or past 2**62 nodes whatever the limit.
    """
    from .infra.memory import check_need, float_of, words

    if nodes is None:
        return
    what = f"the {engine} engine on {spec} ({words(nodes)}) with its bitmaps"
    if float_of(nodes) >= 2**62:
        raise TopocastError(f"max-memory: {what} numbers nodes with 64-bit integers: at most 2**62 nodes")
    check_need(what, 3 * float_of(nodes) / 8, max_memory)


#: longest time one transfer may take (seconds); beyond it the makespans overflow
MAX_TRANSFER_TIME = 1e100


def check_costs(name: str, params: dict[str, Any]) -> None:
    """Refuse cost parameters whose product (one transfer's time) overflows: every time would be inf.

    One transfer of ``message_bytes`` costs the one cost formula (:func:`topocast.sim.models.link_time`),
    plus ``per_hop``, a circuit's ``setup`` and a reduction's combine time where the algorithm has them.

    Parameters
    ----------
    name : str
        The algorithm, for the message.
    params : dict
        Its resolved parameters (nothing is checked without ``per_byte`` and ``message_bytes``).

    Raises
    ------
    TopocastError
        When that time is not finite or over :data:`MAX_TRANSFER_TIME`.
    """
    import math

    from .sim.models import link_time

    if "per_byte" not in params or "message_bytes" not in params:
        return
    startup, per_hop, setup, gamma = (float(params.get(k) or 0.0)
                                      for k in ("startup", "per_hop", "setup", "per_byte_reduce"))
    nbytes = float(params["message_bytes"])
    total = link_time.py_func(startup, float(params["per_byte"]), nbytes) + per_hop + setup + gamma * nbytes
    if not math.isfinite(total) or total > MAX_TRANSFER_TIME:
        raise TopocastError(f"algorithm {name}: parameters 'message_bytes', 'per_byte', 'startup' give one transfer "
                            f"a time of {total:g} s, over {MAX_TRANSFER_TIME:g} s: the times would overflow")
