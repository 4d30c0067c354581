"""Path-based multicast on wormhole meshes: dual-path, multi-path and column-path.

Each algorithm turns one multicast ``(source, destinations)`` into a *plan*
(see :mod:`topocast.algorithms.worm_traffic`): the jobs a processor runs, each
one start-up launching worms whose header carries an ordered destination
list.  The same planners serve a single verified multicast and a
100,000-multicast load sweep.

* Dual-path (Lin and Ni 1991; Al-Dubai et al. 2003, section 2): with the
  snake labelling ``l``, destinations above the source's label go in one worm
  on the high-channel subnetwork in increasing label order, the rest in one
  worm on the low-channel subnetwork in decreasing order.
* Multi-path (same sources): each of those two sets is split again by the
  destination's column (last coordinate) against the source's -- ``< x0`` and
  ``>= x0`` -- giving at most four worms, each routed as in dual-path.  On an
  n-D mesh the same four-way split is used (Lin and Ni use 2n worms there).
* Column-path (Boppana, Chalasani and Raghavendra 1998; Panda et al. 1999):
  destinations grouped by column (every coordinate but the first); per
  column one worm for those in the source's row or above (larger first
  coordinate), ordered away from the source's row, and one for those below;
  each worm follows e-cube routing (along the row to the column, then along
  the column), so at most two worms per column.

Qualified Groups lives in :mod:`topocast.algorithms.mesh_multicast_qg`.

Start-ups: a job's worms leave in batches of ``worms_per_startup`` (default
the number of injection channels, 4); each batch costs one start-up, so
dual-path and multi-path need one start-up, column-path ``ceil(worms / 4)``.

Each split exists twice: per multicast in plain Python (:func:`dual_path_worms`,
...: the reference, used for one multicast) and for every job of a workload
at once in numpy (:func:`split_worms`), which load points use; the tests
check that both give the same worms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..registry import Param
from ..sim.models import Model, RouterConfig
from ..topology.core import Topology
from .base import register
from .mesh_routing import ECUBE, HIGH, LOW, labels_for, mesh_dims
from .worm_traffic import BatchPlanner, JobArrays, workload_plan
from .wormhole_router import NETWORK_PARAMS

PAPER = ("Al-Dubai, Ould-Khaoua, El-Zayyat, Mackenzie: On balancing traffic load in path-based multicast "
         "communication (2003)")

#: preparation times in cycles, section 4 of the paper prints two sets
PREP_TIMES = {
    "figures": {"dp": 2, "mp": 4, "cp": 8, "qg": 16},   # the set stated for Figures 3-6 (default)
    "text": {"dp": 2, "mp": 2, "cp": 4, "qg": 16},      # the set stated first in section 4
}


def dual_path_worms(source: int, dests, label: np.ndarray) -> list[tuple[int, list[int]]]:
    """Split a multicast by Lin and Ni's dual-path rule: at most one high-channel and one low-channel worm.

    Parameters
    ----------
    source : int
        The source node.
    dests : iterable of int
        The destinations.
    label : numpy.ndarray
        Snake (Hamiltonian) label of every node.

    Returns
    -------
    list of tuple
        ``(kind, destinations)`` per worm: the routing kind (``HIGH``, ``LOW`` or ``ECUBE``) and the
        destinations it visits, in order.
    """
    ls = label[source]
    high = sorted((int(d) for d in dests if label[d] > ls), key=label.__getitem__)
    low = sorted((int(d) for d in dests if label[d] < ls), key=label.__getitem__, reverse=True)
    worms = []
    if high:
        worms.append((HIGH, high))
    if low:
        worms.append((LOW, low))
    return worms


def multi_path_worms(source: int, dests, label: np.ndarray, last_dim: int) -> list[tuple[int, list[int]]]:
    """Split a multicast by Lin and Ni's multi-path rule: dual-path's two sets, each cut by column against the source.

    Parameters
    ----------
    source : int
        The source node.
    dests : iterable of int
        The destinations.
    label : numpy.ndarray
        Snake (Hamiltonian) label of every node.
    last_dim : int
        Size of the last (column) dimension.

    Returns
    -------
    list of tuple
        ``(kind, destinations)`` per worm: the routing kind (``HIGH``, ``LOW`` or ``ECUBE``) and the
        destinations it visits, in order.
    """
    ls = label[source]
    xs = source % last_dim
    parts: dict[tuple[int, bool], list[int]] = {}
    for d in dests:
        d = int(d)
        parts.setdefault((HIGH if label[d] > ls else LOW, d % last_dim >= xs), []).append(d)
    worms = []
    for key in ((HIGH, False), (HIGH, True), (LOW, False), (LOW, True)):
        if key in parts:
            seq = sorted(parts[key], key=label.__getitem__, reverse=key[0] == LOW)
            worms.append((key[0], seq))
    return worms


def column_path_worms(source: int, dests, row_stride: int) -> list[tuple[int, list[int]]]:
    """Split a multicast by the column-path rule: per column one e-cube worm up (same row or above) and one down.

    Parameters
    ----------
    source : int
        The source node.
    dests : iterable of int
        The destinations.
    row_stride : int
        Node-index step between rows.

    Returns
    -------
    list of tuple
        ``(kind, destinations)`` per worm: the routing kind (``HIGH``, ``LOW`` or ``ECUBE``) and the
        destinations it visits, in order.
    """
    rs, cs = divmod(source, row_stride)
    columns: dict[tuple[int, bool], list[int]] = {}
    for d in dests:
        r, c = divmod(int(d), row_stride)
        columns.setdefault((c, r >= rs), []).append(int(d))
    order = sorted(columns, key=lambda key: (abs(key[0] - cs), key[0], not key[1]))
    worms = []
    for key in order:
        seq = sorted(columns[key], key=lambda d: abs(d // row_stride - rs))
        worms.append((ECUBE, seq))
    return worms


# -- the same splits for every job of a workload at once (numpy) ------------------------------

#: the splits :func:`split_worms` knows
SPLITS = ("dual", "multi", "column")


def split_worms(split: str, node: np.ndarray, ptr: np.ndarray, dests: np.ndarray, label: np.ndarray,
                dims: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Split many multicast jobs into worms at once (vectorised).

    The worms of many jobs: job ``j`` at ``node[j]`` serves ``dests[ptr[j]:ptr[j+1]]``.

    ``split`` is ``"dual"`` (:func:`dual_path_worms`), ``"multi"`` (:func:`multi_path_worms`) or
    ``"column"`` (:func:`column_path_worms`); every job's worms come out in the order, and with the
    destination order, of that function.  Returns ``(worm_ptr, kind, dest_ptr, worm_dests)``: job ``j``'s
    worms are ``worm_ptr[j] .. worm_ptr[j+1]-1``.

    Parameters
    ----------
    split : str
        ``dual``, ``multi`` or ``column``.
    node : numpy.ndarray
        The node of every job.
    ptr, dests : numpy.ndarray
        CSR of every job's destinations.
    label : numpy.ndarray
        Snake label of every node.
    dims : tuple of int
        The mesh's sides.

    Returns
    -------
    worm_ptr, kind, dest_ptr, worm_dests : numpy.ndarray
        Job ``j``'s worms are ``worm_ptr[j] .. worm_ptr[j+1]-1``, each with its kind and destinations.

    Raises
    ------
    ValueError
        For an unknown ``split``.
    """
    node = np.asarray(node, dtype=np.int64)
    ptr = np.asarray(ptr, dtype=np.int64)
    dests = np.asarray(dests, dtype=np.int64)
    job = np.repeat(np.arange(len(node), dtype=np.int64), np.diff(ptr))
    start = node[job]
    if split in ("dual", "multi"):
        lab, ls = label[dests], label[start]
        low = lab < ls
        part = low.astype(np.int64)
        if split == "multi":  # (HIGH, left), (HIGH, right), (LOW, left), (LOW, right) of the source's column
            last = dims[-1]
            part = 2 * part + (dests % last >= start % last)
        within = np.where(low, -lab, lab)
        kind_of_part = np.where(low, LOW, HIGH)
    elif split == "column":
        stride = int(np.prod(dims[1:])) if len(dims) > 1 else 1
        r, c = np.divmod(dests, stride)
        rs, cs = np.divmod(start, stride)
        part = (np.abs(c - cs) * stride + c) * 2 + (r < rs)
        within = np.abs(r - rs)
        kind_of_part = np.full(len(dests), ECUBE, dtype=np.int64)
    else:
        raise ValueError(f"split_worms: split must be one of {', '.join(SPLITS)}, got {split!r}")
    order = np.lexsort((within, part, job))
    job_o, part_o = job[order], part[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (job_o[1:] != job_o[:-1]) | (part_o[1:] != part_o[:-1])
    heads = np.flatnonzero(first)
    dest_ptr = np.append(heads, len(order)).astype(np.int64)
    worm_job = job_o[heads]
    worm_ptr = np.zeros(len(node) + 1, dtype=np.int64)
    np.cumsum(np.bincount(worm_job, minlength=len(node)), out=worm_ptr[1:])
    return worm_ptr, kind_of_part[order][heads].astype(np.int64), dest_ptr, dests[order]


def single_job_batch(prep: int, split: str, label: np.ndarray, dims: tuple[int, ...]):
    """Make the batch planner of a single-job algorithm: one job per multicast at its source.

    Parameters
    ----------
    prep : int
        Preparation time in cycles.
    split : str
        ``dual``, ``multi`` or ``column`` (:func:`split_worms`).
    label : numpy.ndarray
        Snake label of every node.
    dims : tuple of int
        The mesh's sides.

    Returns
    -------
    callable
        ``batch(sources, ptr, ids) -> JobArrays``.
    """

    def batch(sources, ptr, ids) -> JobArrays:
        m = len(sources)
        worm_ptr, kind, dest_ptr, dests = split_worms(split, sources, ptr, ids, label, dims)
        return JobArrays(mc=np.arange(m, dtype=np.int64), node=np.asarray(sources, dtype=np.int64),
                         after=np.full(m, -1, dtype=np.int64), prep=np.full(m, prep, dtype=np.int64),
                         worm_ptr=worm_ptr, kind=kind, dest_ptr=dest_ptr, dests=dests)

    return batch


# -- parameters, model and plan -------------------------------------------------------------

#: the load point: offered traffic and the measurement window
WORKLOAD_PARAMS: tuple[Param, ...] = (
    Param("destinations", "int", 10, "destinations per multicast (the mean when spread > 0)", minimum=1),
    Param("spread", "int", 0, "0: every multicast has 'destinations' destinations; s > 0: each count is drawn "
          "uniformly from the integers destinations - s .. destinations + s", minimum=0),
    Param("load", "float", 0.01, "offered traffic: flits of generated messages per node per cycle"),
    Param("cycles", "int", 20000, "cycles simulated", minimum=100),
    Param("warmup", "int", None, "cycles whose multicasts are discarded (default cycles/10)", minimum=0),
    Param("batches", "int", 10, "batches for the batch-means confidence interval", minimum=2),
)

#: the router (:class:`RouterConfig`): processors and channels of section 4 of the paper, then the network
#: options of :mod:`topocast.algorithms.wormhole_router` (their defaults are the paper's rigid worm)
ROUTER_PARAMS: tuple[Param, ...] = (
    Param("startup", "int", 33, "start-up latency in cycles", minimum=0),
    Param("flits", "int", 32, "message length in flits", minimum=1),
    Param("injection_channels", "int", 4, "injection channels per node", minimum=1),
    Param("ejection_channels", "int", 4, "ejection channels per node (0: unlimited)", minimum=0),
    Param("intermediate_ejection", "bool", True, "a worm holds an ejection channel at every destination on "
          "its path until its tail passes (false: only at its last destination; copies on the way go to a "
          "message buffer, which rules out consumption-channel deadlock)"),
    Param("worms_per_startup", "int", None, "worms launched by one start-up (default: injection channels)", minimum=1),
    Param("watchdog", "int", 2000, "cycles without any worm moving before a run is declared deadlocked", minimum=1),
) + NETWORK_PARAMS

#: the preparation time of a multicast's jobs
PREP_PARAMS: tuple[Param, ...] = (
    Param("prep", "int", None, "preparation time in cycles (default: the paper's figure set 2/4/8/16)", minimum=0),
    Param("prep_set", "str", "figures", "paper preparation-time set when prep is not given: "
          "'figures' (DP/MP/CP/QG 2/4/8/16) or 'text' (2/2/4/16)", choices=("figures", "text")),
)

ROUTER_KEYS = tuple(p.name for p in ROUTER_PARAMS)


def router_config(params: dict) -> RouterConfig:
    """Make the :class:`RouterConfig` of resolved run parameters.

    Parameters
    ----------
    params : dict
        Resolved run parameters (the router keys).

    Returns
    -------
    RouterConfig
        The wormhole router's configuration.
    """
    return RouterConfig(**{k: params[k] for k in ROUTER_KEYS})


def router_model(params: dict) -> Model:
    """Make the model of a wormhole run: the router; ports and costs stay at their defaults (unused).

    Parameters
    ----------
    params : dict
        Resolved run parameters.

    Returns
    -------
    Model
        The model.
    """
    return Model(router=router_config(params))


def preparation(key: str, prep: int | None, prep_set: str = "figures") -> int:
    """Give the preparation time in cycles: ``prep``, or the paper's set for the algorithm.

    Parameters
    ----------
    key : str
        The algorithm's key: ``dp``, ``mp``, ``cp`` or ``qg``.
    prep : int or None
        The time given; None: from the set.
    prep_set : str, default "figures"
        The paper's set of preparation times.

    Returns
    -------
    int
        Cycles.
    """
    return int(prep) if prep is not None else PREP_TIMES[prep_set][key]


def check_load(name: str, topology: Topology, load: float, destinations: int, spread: int) -> None:
    """Check the load point of a multicast workload.

    Parameters
    ----------
    name : str
        The algorithm, for the message.
    topology : Topology
        The mesh.
    load : float
        Flits per node per cycle, in (0, 1].
    destinations : int
        Destinations per multicast, at most nodes - 1.
    spread : int
        Spread of the destination count.

    Raises
    ------
    TopocastError
        A load outside (0, 1] or more destinations than other nodes.
    """
    mesh_dims(topology)
    if not (0 < load <= 1):
        raise TopocastError(f"{name}: parameter 'load' must be in (0, 1] flits per node per cycle "
                            f"(a node injects at most one flit per cycle), "
                            f"got {load}")
    if destinations > topology.num_nodes - 1:
        raise TopocastError(f"{name}: parameter 'destinations' must be <= nodes - 1 = {topology.num_nodes - 1}, "
                            f"got {destinations}")


def guard_memory(name: str, topology: Topology, params: dict, max_memory: float | None = None) -> None:
    """Refuse a workload whose worm and path arrays would not fit (:func:`topocast.infra.memory.check_need`).

    Parameters
    ----------
    name : str
        The algorithm, for the message.
    topology : Topology
        The mesh.
    params : dict
        The load point: ``cycles``, ``load``, ``flits``, ``destinations``, ``spread``.
    max_memory : float, optional
        The limit in bytes; None: half of the machine's RAM.

    Raises
    ------
    TopocastError
        ``max-memory: NAME with M multicasts needs about X, over the limit of Y``.
    """
    from ..infra.memory import check_need

    multicasts = topology.num_nodes * params["cycles"] * params["load"] / params["flits"]
    side = max(mesh_dims(topology))
    need = multicasts * (params["destinations"] + params["spread"]) * (8 * 6 + 24 * side)
    check_need(f"{name} with {multicasts:.3g} multicasts", need, max_memory)


def multicast_plan(name: str, key: str, planner_factory: Callable[..., Callable[[int, Any], list]]):
    """Make the registry's plan function of a multicast algorithm: one load point as a WormPlan.

    Router parameters other than ``flits`` (which sets the message rate) arrive too and are left to the
    model.

    Parameters
    ----------
    name : str
        The algorithm's name.
    key : str
        Its key for the preparation times (``dp``, ``mp``, ``cp``, ``qg``).
    planner_factory : callable
        ``planner_factory(topology, prep=..., **extra) -> BatchPlanner``.

    Returns
    -------
    callable
        ``plan(topology, seed=0, max_memory=None, **params) -> WormPlan``, which raises
        :class:`TopocastError` for a bad load point or a workload over the memory limit.
    """

    def plan(topology: Topology, seed: int = 0, max_memory: float | None = None, **params: Any):
        check_load(name, topology, params["load"], params["destinations"], params["spread"])
        guard_memory(name, topology, params, max_memory)
        prep = preparation(key, params["prep"], params["prep_set"])
        planner = planner_factory(topology, prep=prep, **{k: params[k] for k in extra_keys(params)})
        notes = [] if params["prep"] is not None else \
            [f"preparation time {prep} cycles: the paper's '{params['prep_set']}' set for {key.upper()}"]
        if params.get("routing") in ("hamiltonian", "disjoint-paths"):
            notes.append(f"routing '{params['routing']}' is an older name of 'disjoint'")
        if params.get("routing") == "ecube":
            notes.append("routing 'ecube': column-path worms on e-cube paths in both steps; " + (
                "one start-up launches every worm of a step" if params.get("worms_per_startup") is None else
                f"one start-up per {params['worms_per_startup']} worms (worms_per_startup)"))
        return workload_plan(topology, planner, load=params["load"], destinations=params["destinations"],
                             spread=params["spread"], cycles=params["cycles"], flits=params["flits"], seed=seed,
                             warmup=params["warmup"], batches=params["batches"], notes=tuple(notes))

    return plan


def extra_keys(params: dict) -> list[str]:
    """Pick the algorithm-specific parameters present (``threshold``, ``leader_prep``, ``routing``).

    Parameters
    ----------
    params : dict
        Resolved parameters.

    Returns
    -------
    list of str
        The keys present.
    """
    return [k for k in ("threshold", "leader_prep", "routing") if k in params]


def single_job(prep: int, worms_of: Callable[[int, Any], list]) -> Callable[[int, Any], list]:
    """Make a per-multicast planner that launches every worm from the source in one job.

    Parameters
    ----------
    prep : int
        Preparation time in cycles.
    worms_of : callable
        ``worms_of(source, dests)``: the worms.

    Returns
    -------
    callable
        ``planner(source, dests) -> jobs``.
    """
    return lambda source, dests: [(source, -1, prep, worms_of(source, dests))]


def dual_path_planner(topology: Topology, prep: int) -> BatchPlanner:
    """Make the dual-path planner (Lin and Ni).

    Parameters
    ----------
    topology : Topology
        A mesh.
    prep : int
        Preparation time in cycles before the job launches its worms.

    Returns
    -------
    BatchPlanner
        Per-multicast and whole-workload planners.
    """
    label = labels_for(topology)
    return BatchPlanner(single_job(prep, lambda s, d: dual_path_worms(s, d, label)),
                        single_job_batch(prep, "dual", label, mesh_dims(topology)))


def multi_path_planner(topology: Topology, prep: int) -> BatchPlanner:
    """Make the multi-path planner (Lin and Ni).

    Parameters
    ----------
    topology : Topology
        A mesh.
    prep : int
        Preparation time in cycles before the job launches its worms.

    Returns
    -------
    BatchPlanner
        Per-multicast and whole-workload planners.
    """
    label = labels_for(topology)
    last = mesh_dims(topology)[-1]
    return BatchPlanner(single_job(prep, lambda s, d: multi_path_worms(s, d, label, last)),
                        single_job_batch(prep, "multi", label, mesh_dims(topology)))


def column_path_planner(topology: Topology, prep: int) -> BatchPlanner:
    """Make the column-path planner.

    Parameters
    ----------
    topology : Topology
        A mesh.
    prep : int
        Preparation time in cycles before the job launches its worms.

    Returns
    -------
    BatchPlanner
        Per-multicast and whole-workload planners.
    """
    dims = mesh_dims(topology)
    stride = int(np.prod(dims[1:])) if len(dims) > 1 else 1
    return BatchPlanner(single_job(prep, lambda s, d: column_path_worms(s, d, stride)),
                        single_job_batch(prep, "column", labels_for(topology), dims))


def register_multicast(name: str, key: str, planner_factory, doc: str, aliases: tuple[str, ...],
                       extra: tuple[Param, ...] = (), model: Callable[[dict], Model] = router_model):
    """Register a mesh multicast algorithm for the wormhole engine.

    Parameters
    ----------
    name : str
        The algorithm's name.
    key : str
        Its key for the preparation times.
    planner_factory : callable
        ``planner_factory(topology, prep=..., **extra) -> BatchPlanner``.
    doc : str
        One line for ``topocast list``.
    aliases : tuple of str
        Other names.
    extra : tuple of Param, optional
        Algorithm-specific parameters.
    model : callable, optional
        ``params -> Model`` (default :func:`router_model`).

    Returns
    -------
    Algorithm
        The registered entry.
    """
    return register(name, multicast_plan(name, key, planner_factory), "multicast", doc, families=("mesh",),
                    params=PREP_PARAMS + extra, aliases=aliases, engines=("wormhole",), paper=PAPER,
                    run_params=WORKLOAD_PARAMS + ROUTER_PARAMS, model=model)


register_multicast("multicast-dp", "dp", dual_path_planner,
                   "dual-path multicast (Lin-Ni Hamiltonian high/low channel worms), wormhole load point",
                   ("dual-path", "DP"))
register_multicast("multicast-mp", "mp", multi_path_planner,
                   "multi-path multicast (dual-path sets split by column: up to 4 worms), wormhole load point",
                   ("multi-path", "MP"))
register_multicast("multicast-cp", "cp", column_path_planner,
                   "column-path multicast (up to 2 e-cube worms per column), wormhole load point",
                   ("column-path", "CP"))


