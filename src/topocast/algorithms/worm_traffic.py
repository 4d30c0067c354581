"""Building wormhole plans: open-loop workloads, and per-multicast job lists into a :class:`WormPlan`.

A multicast algorithm describes one multicast as a list of *jobs*
``(node, after, prep, worms)`` (Al-Dubai et al. 2003, section 4).  ``after``
is -1 for a job the source starts when the multicast is generated, or the
destination whose receipt of the whole message releases the job (a relay,
e.g. a Qualified Groups leader).  ``worms`` is a list of ``(routing,
destinations)`` with ``routing`` one of :data:`~topocast.algorithms.mesh_routing.ECUBE`,
``HIGH``, ``LOW`` and the destinations in path order.  :class:`TrafficBuilder`
expands many such job lists into the explicit paths of one
:class:`~topocast.plans.wormhole.WormPlan`; it does not check that every
destination is served once: the run's verification does
(:func:`topocast.verify.delivery.wormhole_deliveries`).

Offered traffic (``load``) is counted in flits of *generated* messages per
node per cycle: each node generates messages (one multicast, or one unicast,
each ``flits`` long) at exponential inter-arrival times of mean
``flits / load`` cycles.  A multicast counts once however many destinations
it has.  Multicasts generated in the first ``warmup`` cycles (default a
tenth of the run) and in the last ``drain`` cycles (default a tenth of the
run, at least 3000 cycles or a quarter of the run) are not measured.

A planner is called once per multicast (``planner(source, destinations) ->
jobs``), or, when it is a :class:`BatchPlanner`, once for the whole workload
(``planner.batch(sources, ptr, ids) -> JobArrays``, numpy arrays throughout);
both give the same :class:`WormPlan`.  Destinations are drawn in time
proportional to the number drawn (:func:`draw_destinations`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..plans.wormhole import WormPlan, WormTraffic
from ..topology.core import Topology
from .mesh_routing import expand_paths

Jobs = list  # list of (node, after, prep, [(routing, [dest, ...]), ...])
Planner = Callable[[int, np.ndarray], Jobs]


class TrafficBuilder:
    """Collect the job lists of many multicasts (or unicasts), then :meth:`build` one plan."""

    def __init__(self, topology: Topology):
        self.topology = topology
        self.mc_gen: list[int] = []
        self.mc_source: list[int] = []
        self.mc_slot_ptr: list[int] = [0]
        self.mc_job_ptr: list[int] = [0]
        self.slot_node: list[int] = []
        self.slot_job: list[int] = []
        self.job_node: list[int] = []
        self.job_release: list[int] = []
        self.job_prep: list[int] = []
        self.job_worm_ptr: list[int] = [0]
        self.worm_kind: list[int] = []
        self.worm_start: list[int] = []
        self.dest_ptr: list[int] = [0]
        self.dests: list[int] = []
        self.dest_slot: list[int] = []

    def add(self, source: int, generated: int, destinations: Sequence[int] | np.ndarray, jobs: Jobs) -> None:
        """Add one multicast with its job list.

        A destination the jobs never serve, or serve twice, is kept as it is and reported by the verification
        of the run.

        Parameters
        ----------
        source : int
            The source node.
        generated : int
            Cycle at which it is generated.
        destinations : sequence of int
            The destinations.
        jobs : list
            Jobs ``(node, after, prep, worms)`` (see :data:`Jobs`).

        Raises
        ------
        TopocastError
            A destination listed twice, a worm visiting a node that is not a destination, a relay released by a
            non-destination, or a destination releasing two relays.
        """
        slot0 = len(self.slot_node)
        slot_of: dict[int, int] = {}
        for i, d in enumerate(destinations):
            if int(d) in slot_of:
                raise TopocastError(f"plan of the multicast from node {source}: destination {int(d)} listed twice")
            slot_of[int(d)] = slot0 + i
            self.slot_node.append(int(d))
            self.slot_job.append(-1)
        for node, after, prep, job_worms in jobs:
            self._add_job(source, int(generated), slot_of, int(node), int(after), int(prep), job_worms)
        self.mc_gen.append(int(generated))
        self.mc_source.append(int(source))
        self.mc_slot_ptr.append(len(self.slot_node))
        self.mc_job_ptr.append(len(self.job_node))

    def _add_job(self, source, generated, slot_of, node, after, prep, job_worms) -> None:
        job = len(self.job_node)
        self.job_node.append(node)
        self.job_prep.append(prep)
        if after < 0:
            self.job_release.append(generated)
        else:
            self.job_release.append(-1)
            slot = _slot(slot_of, after, source)
            if self.slot_job[slot] >= 0:
                raise TopocastError(f"plan: destination {after} releases two jobs")
            self.slot_job[slot] = job
        for kind, seq in job_worms:
            self.worm_kind.append(int(kind))
            self.worm_start.append(node)
            for d in seq:
                self.dests.append(int(d))
                self.dest_slot.append(_slot(slot_of, int(d), source))
            self.dest_ptr.append(len(self.dests))
        self.job_worm_ptr.append(len(self.worm_kind))

    def build(self, *, cycles: int, warmup: int = 0, drain: int = 0, batches: int = 2, flits: int,
              load: float | None = None, collective: str = "multicast", stop_when_idle: bool = False,
              info: dict | None = None, notes: tuple[str, ...] = ()) -> WormPlan:
        """Build the plan: paths expanded, multicasts indexed, the measurement window attached.

        Parameters
        ----------
        cycles : int
            Cycles simulated.
        warmup : int, default 0
            Cycles before the measurement window.
        drain : int, default 0
            Cycles after it.
        batches : int, default 2
            Batches the window is split into (for the confidence interval).
        flits : int
            Flits per message.
        load : float, optional
            The offered load, recorded.
        collective : str, default "multicast"
            The plan's collective.
        stop_when_idle : bool, default False
            End the run once every message is delivered.
        info : dict, optional
            Extra information for the result.
        notes : tuple of str, optional
            Notes for the result.

        Returns
        -------
        WormPlan
            The plan for the wormhole engine.
        """
        i64 = lambda xs: np.asarray(xs, dtype=np.int64)  # noqa: E731
        path_ptr, path_node, path_arc, path_slot = expand_paths(
            self.topology, i64(self.worm_kind), i64(self.worm_start), i64(self.dest_ptr),
            i64(self.dests), i64(self.dest_slot))
        traffic = WormTraffic(
            job_node=i64(self.job_node), job_release=i64(self.job_release), job_prep=i64(self.job_prep),
            job_worm_ptr=i64(self.job_worm_ptr), path_ptr=path_ptr, path_node=path_node,
            path_arc=path_arc, path_slot=path_slot, slot_node=i64(self.slot_node), slot_job=i64(self.slot_job))
        return WormPlan(traffic, i64(self.mc_gen), i64(self.mc_source), i64(self.mc_slot_ptr), i64(self.mc_job_ptr),
                        cycles=int(cycles), warmup=int(warmup), drain=int(drain), batches=int(batches),
                        flits=int(flits), load=load, collective=collective, stop_when_idle=stop_when_idle,
                        info=dict(info or {}), notes=tuple(notes))


def _slot(slot_of: dict[int, int], node: int, source: int) -> int:
    if node not in slot_of:
        raise TopocastError(f"plan of the multicast from node {source}: node {node} is not one of its destinations")
    return slot_of[node]


def window(cycles: int, warmup: int | None, batches: int, name: str = "multicast") -> tuple[int, int]:
    """Fill and check the measurement window of a load point.

    Parameters
    ----------
    cycles : int
        Cycles simulated, >= 100.
    warmup : int or None
        Cycles before the window (None: the default share of ``cycles``).
    batches : int
        Batches, >= 2.
    name : str, default "multicast"
        The algorithm, for messages.

    Returns
    -------
    tuple of int
        ``(warmup, drain)``.

    Raises
    ------
    TopocastError
        Too few cycles or batches, or a warm-up and drain that leave no window.
    """
    if cycles < 100:
        raise TopocastError(f"{name}: parameter 'cycles' must be >= 100, got {cycles}")
    if batches < 2:
        raise TopocastError(f"{name}: parameter 'batches' must be >= 2, got {batches}")
    warmup = cycles // 10 if warmup is None else int(warmup)
    drain = max(cycles // 10, min(3000, cycles // 4))
    if warmup < 0 or warmup + drain >= cycles:
        raise TopocastError(f"{name}: warmup + drain must be < cycles, got {warmup} + {drain} >= {cycles}")
    return warmup, drain


@dataclass
class JobArrays:
    """Every job of a workload and the worms it launches, as flat arrays (what a batch planner returns).

    Job ``j`` belongs to multicast ``mc[j]`` (non-decreasing: a multicast's
    jobs are contiguous, in the order a per-multicast planner lists them), runs
    on ``node[j]`` after ``prep[j]`` cycles of preparation, and is released at
    the multicast's generation (``after[j] == -1``) or when destination
    ``after[j]`` has the whole message.  Its worms are ``worm_ptr[j] ..
    worm_ptr[j+1]-1``; worm ``w`` routes with ``kind[w]`` through
    ``dests[dest_ptr[w]:dest_ptr[w+1]]`` in that order.
    """

    mc: np.ndarray
    node: np.ndarray
    after: np.ndarray
    prep: np.ndarray
    worm_ptr: np.ndarray
    kind: np.ndarray
    dest_ptr: np.ndarray
    dests: np.ndarray


class BatchPlanner:
    """A multicast algorithm's planner, per multicast and for a whole workload.

    A multicast algorithm's planner: per multicast (``planner(source, dests) -> jobs``, the reference) and
    for a whole workload at once (``planner.batch(sources, ptr, ids) -> JobArrays``, vectorised).

    :func:`workload_plan` uses :meth:`batch`; ``tests/test_multicast_batch.py`` checks that both build the
    same plan.
    """

    def __init__(self, one: Planner, batch: Callable[[np.ndarray, np.ndarray, np.ndarray], JobArrays]):
        self.one = one
        self.batch = batch

    def __call__(self, source: int, dests) -> Jobs:
        """Plan one multicast with the per-multicast planner (the reference)."""
        return self.one(source, dests)


def workload_plan(topology: Topology, planner: Planner, *, load: float, destinations: int, cycles: int,
                  flits: int, seed: int = 0, spread: int = 0, warmup: int | None = None, batches: int = 10,
                  collective: str = "multicast", info: dict | None = None, notes: tuple[str, ...] = ()) -> WormPlan:
    """Plan one load point: Poisson arrivals, destination draws, every multicast planned by ``planner``.

    The random numbers come from ``numpy.random.default_rng(seed)`` in a fixed order (arrivals, counts,
    destinations), so a seed fixes the workload whatever the planner: every algorithm run with the same seed
    and workload parameters sees the same multicasts.

    Parameters
    ----------
    topology : Topology
        The network.
    planner : BatchPlanner or callable
        The algorithm's planner (a :class:`BatchPlanner` is planned in one batch).
    load : float
        Offered load in flits per node per cycle, in (0, 1].
    destinations : int
        Mean destinations per multicast.
    cycles : int
        Cycles simulated.
    flits : int
        Flits per message.
    seed : int, default 0
        Seed of the workload.
    spread : int, default 0
        Destinations per multicast vary uniformly by up to this much.
    warmup : int, optional
        Cycles before the measurement window.
    batches : int, default 10
        Batches of the window.
    collective : str, default "multicast"
        The plan's collective.
    info : dict, optional
        Extra information for the result.
    notes : tuple of str, optional
        Notes for the result.

    Returns
    -------
    WormPlan
        The plan for the wormhole engine.

    Raises
    ------
    TopocastError
        A load, destination count, spread or window out of range, or a plan :meth:`TrafficBuilder.add` refuses.
    """
    if not (0 < load <= 1):
        raise TopocastError(f"{collective}: parameter 'load' must be in (0, 1] flits per node per cycle "
                            f"(a node injects at most one flit per cycle), "
                            f"got {load}")
    warmup, drain = window(cycles, warmup, batches, collective)
    n = topology.num_nodes
    rng = np.random.default_rng(seed)
    gen, src = poisson_arrivals(n, load / flits, cycles, rng)
    counts = destination_counts(len(gen), destinations, spread, n, rng)
    ptr, ids = draw_destinations(n, src, counts, rng)
    window_kw: dict[str, Any] = dict(cycles=cycles, warmup=warmup, drain=drain, batches=batches, flits=flits,
                                     load=float(load), collective=collective, info=info, notes=notes)
    if isinstance(planner, BatchPlanner):
        return plan_from_arrays(topology, gen, src, ptr, ids, planner.batch(src, ptr, ids), **window_kw)
    builder = TrafficBuilder(topology)
    for i in range(len(gen)):
        dests = ids[ptr[i]:ptr[i + 1]]
        builder.add(int(src[i]), int(gen[i]), dests, planner(int(src[i]), dests))
    return builder.build(**window_kw)


def plan_from_arrays(topology: Topology, generated: np.ndarray, sources: np.ndarray, ptr: np.ndarray,
                     ids: np.ndarray, jobs: JobArrays, *, cycles: int, warmup: int = 0, drain: int = 0,
                     batches: int = 2, flits: int, load: float | None = None, collective: str = "multicast",
                     stop_when_idle: bool = False, info: dict | None = None,
                     notes: tuple[str, ...] = ()) -> WormPlan:
    """Build the plan of a whole workload from a batch planner's :class:`JobArrays`.

    The plan of a whole workload from a batch planner's :class:`JobArrays` (what :class:`TrafficBuilder`
    builds one multicast at a time, vectorised).

    Multicast ``m`` was generated at ``generated[m]`` at ``sources[m]`` with destinations
    ``ids[ptr[m]:ptr[m+1]]``, each row sorted increasing (as :func:`draw_destinations` returns them); its
    destination slots are those positions.  Same errors as :meth:`TrafficBuilder.add`.

    Parameters
    ----------
    topology : Topology
        The network.
    generated : numpy.ndarray
        Generation cycle of every multicast.
    sources : numpy.ndarray
        Source of every multicast.
    ptr, ids : numpy.ndarray
        CSR of every multicast's destinations, rows sorted increasing.
    jobs : JobArrays
        The jobs and their worms.
    cycles : int
        Cycles simulated.
    warmup : int, default 0
        Cycles before the measurement window.
    drain : int, default 0
        Cycles after it.
    batches : int, default 2
        Batches of the window.
    flits : int
        Flits per message.
    load : float, optional
        The offered load, recorded.
    collective : str, default "multicast"
        The plan's collective.
    stop_when_idle : bool, default False
        End the run once every message is delivered.
    info : dict, optional
        Extra information for the result.
    notes : tuple of str, optional
        Notes for the result.

    Returns
    -------
    WormPlan
        The plan for the wormhole engine.

    Raises
    ------
    TopocastError
        As :meth:`TrafficBuilder.add`.
    ValueError
        Destinations not sorted, or jobs not grouped by multicast.
    """
    i64 = lambda xs: np.ascontiguousarray(xs, dtype=np.int64)  # noqa: E731
    generated, sources, ptr, ids = i64(generated), i64(sources), i64(ptr), i64(ids)
    n = topology.num_nodes
    m = len(generated)
    row = np.repeat(np.arange(m, dtype=np.int64), np.diff(ptr))
    slot_key = row * n + ids
    if len(slot_key) > 1 and np.any(np.diff(slot_key) <= 0):
        bad = int(np.flatnonzero(np.diff(slot_key) <= 0)[0])
        if slot_key[bad + 1] == slot_key[bad]:
            raise TopocastError(f"plan of the multicast from node {int(sources[row[bad]])}: destination "
                                f"{int(ids[bad])} listed twice")
        raise ValueError("plan_from_arrays: the destinations of each multicast must be sorted increasing")
    job_mc, job_node, job_after = i64(jobs.mc), i64(jobs.node), i64(jobs.after)
    worm_ptr, dest_ptr, dests = i64(jobs.worm_ptr), i64(jobs.dest_ptr), i64(jobs.dests)
    if len(job_mc) > 1 and np.any(np.diff(job_mc) < 0):
        raise ValueError("plan_from_arrays: jobs must be grouped by multicast (JobArrays.mc non-decreasing)")
    num_jobs, num_worms = len(job_mc), len(jobs.kind)
    worm_job = np.repeat(np.arange(num_jobs, dtype=np.int64), np.diff(worm_ptr))
    dest_mc = np.repeat(job_mc[worm_job], np.diff(dest_ptr))
    dest_slot = _slots(slot_key, dest_mc, dests, n, sources)
    slot_job = np.full(len(ids), -1, dtype=np.int64)
    relay = np.flatnonzero(job_after >= 0)
    if len(relay):
        rslot = _slots(slot_key, job_mc[relay], job_after[relay], n, sources)
        uniq, count = np.unique(rslot, return_counts=True)
        if np.any(count > 1):
            raise TopocastError(f"plan: destination {int(ids[uniq[count > 1][0]])} releases two jobs")
        slot_job[rslot] = relay
    job_release = np.where(job_after < 0, generated[job_mc], -1) if num_jobs else np.zeros(0, np.int64)
    path_ptr, path_node, path_arc, path_slot = expand_paths(
        topology, i64(jobs.kind), job_node[worm_job] if num_worms else np.zeros(0, np.int64), dest_ptr, dests,
        dest_slot)
    traffic = WormTraffic(
        job_node=job_node, job_release=i64(job_release), job_prep=i64(jobs.prep), job_worm_ptr=worm_ptr,
        path_ptr=path_ptr, path_node=path_node, path_arc=path_arc, path_slot=path_slot, slot_node=ids,
        slot_job=slot_job)
    job_ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(job_mc, minlength=m), out=job_ptr[1:])
    return WormPlan(traffic, generated, sources, ptr, job_ptr, cycles=int(cycles), warmup=int(warmup),
                    drain=int(drain), batches=int(batches), flits=int(flits), load=load, collective=collective,
                    stop_when_idle=stop_when_idle, info=dict(info or {}), notes=tuple(notes))


def _slots(slot_key: np.ndarray, mc: np.ndarray, nodes: np.ndarray, n: int, sources: np.ndarray) -> np.ndarray:
    """Find the destination slot of node ``nodes[i]`` in multicast ``mc[i]`` (a TopocastError if none)."""
    key = mc * n + nodes
    slot = np.searchsorted(slot_key, key)
    inside = slot < len(slot_key)
    ok = inside.copy()
    ok[inside] = slot_key[slot[inside]] == key[inside]
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise TopocastError(f"plan of the multicast from node {int(sources[mc[i]])}: node {int(nodes[i])} is not "
                            "one of its destinations")
    return slot


def destination_counts(n: int, destinations: int, spread: int, num_nodes: int, rng) -> np.ndarray:
    """Draw the number of destinations of every multicast.

    Fixed ``destinations`` per multicast, or uniform on the integers ``destinations - spread ..
    destinations + spread`` (mean exactly ``destinations``).

    Parameters
    ----------
    n : int
        Multicasts.
    destinations : int
        Mean destinations, 1..nodes-1.
    spread : int
        Half-width of the uniform spread.
    num_nodes : int
        Nodes of the network.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    numpy.ndarray
        Destinations per multicast.

    Raises
    ------
    TopocastError
        A mean or spread that leaves 1..nodes-1.
    """
    if destinations < 1 or destinations > num_nodes - 1:
        raise TopocastError(f"multicast: parameter 'destinations' must be in 1..{num_nodes - 1} "
                            f"(nodes - 1), got {destinations}")
    if spread < 0 or destinations - spread < 1 or destinations + spread > num_nodes - 1:
        raise TopocastError(f"multicast: parameter 'spread' must keep destinations +- spread in "
                            f"1..{num_nodes - 1}, got destinations={destinations}, spread={spread}")
    if spread == 0:
        return np.full(n, destinations, dtype=np.int64)
    return rng.integers(destinations - spread, destinations + spread + 1, size=n).astype(np.int64)


def poisson_arrivals(num_nodes: int, rate: float, cycles: int, rng: np.random.Generator
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Draw the generation times of messages: a Poisson process at every node.

    Every node generates at exponential inter-arrival times of mean ``1/rate`` cycles.

    Returns ``(cycle, source)`` sorted by cycle (ties by node); a message
    generated at real time ``x`` is handed to its processor at cycle ``ceil(x)``.

    Parameters
    ----------
    num_nodes : int
        Nodes.
    rate : float
        Messages per node per cycle, > 0.
    cycles : int
        Cycles simulated.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    cycle, source : numpy.ndarray
        Sorted by cycle (ties by node).

    Raises
    ------
    TopocastError
        If ``rate`` is not positive.
    """
    if rate <= 0:
        raise TopocastError(f"traffic: parameter 'load' must be > 0, got rate {rate}")
    expect = rate * cycles
    width = int(expect + 6 * np.sqrt(expect) + 10)
    times = np.cumsum(rng.exponential(1.0 / rate, size=(num_nodes, width)), axis=1)
    while np.any(times[:, -1] < cycles):  # rare: extend the rows that ran short
        more = np.cumsum(rng.exponential(1.0 / rate, size=(num_nodes, width)), axis=1) + times[:, -1:]
        times = np.concatenate([times, more], axis=1)
    inside = times < cycles
    node = np.repeat(np.arange(num_nodes, dtype=np.int64), inside.sum(axis=1))
    cycle = np.ceil(times[inside]).astype(np.int64)
    order = np.argsort(cycle * num_nodes + node, kind="stable")  # by cycle, then node, then time
    return cycle[order], node[order]


def draw_destinations(num_nodes: int, sources: np.ndarray, counts: np.ndarray, rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Draw destinations uniformly without replacement among the other nodes.

    Destinations drawn uniformly without replacement among the other nodes, each row sorted increasing.

    Returns CSR ``(ptr, ids)``: ``counts[i]`` distinct destinations for source ``sources[i]``, never the
    source.  Time and memory are proportional to the destinations drawn, not to messages times nodes:
    a row asking for at most half of the other nodes draws its values with repetition and redraws the
    repeated ones (:func:`distinct_values`); a denser row draws the nodes it leaves out the same way and
    keeps the rest.  Every k-subset is equally likely (the procedure treats all values alike), and the
    result depends only on ``rng``'s state.

    Parameters
    ----------
    num_nodes : int
        Nodes.
    sources : numpy.ndarray
        Source of every message.
    counts : numpy.ndarray
        Destinations of every message.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    ptr, ids : numpy.ndarray
        CSR of the destinations, each row sorted increasing.

    Raises
    ------
    TopocastError
        A count outside 1..nodes-1.
    """
    sources = np.asarray(sources, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if np.any(counts > num_nodes - 1) or np.any(counts < 1):
        bad = int(counts[(counts > num_nodes - 1) | (counts < 1)][0])
        raise TopocastError(f"traffic: parameter 'destinations' must be in 1..{num_nodes - 1} "
                            f"(nodes - 1), got {bad}")
    others = num_nodes - 1
    ptr = np.zeros(len(sources) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    ids = np.empty(int(ptr[-1]), dtype=np.int64)
    dense = 2 * counts > others
    sparse_rows = np.flatnonzero(~dense)
    if len(sparse_rows):
        values = distinct_values(counts[sparse_rows], others, rng)
        ids[_ranges(ptr, sparse_rows)] = values
    dense_rows = np.flatnonzero(dense)
    if len(dense_rows):
        left_out = others - counts[dense_rows]
        out_ptr = np.zeros(len(dense_rows) + 1, dtype=np.int64)
        np.cumsum(left_out, out=out_ptr[1:])
        excluded = distinct_values(left_out, others, rng)
        chunk = max(1, (1 << 22) // max(others, 1))
        for lo in range(0, len(dense_rows), chunk):
            rows = dense_rows[lo:lo + chunk]
            keep = np.ones((len(rows), others), dtype=bool)
            cut = excluded[out_ptr[lo]:out_ptr[lo + len(rows)]]
            keep[np.repeat(np.arange(len(rows)), left_out[lo:lo + len(rows)]), cut] = False
            ids[_ranges(ptr, rows)] = np.nonzero(keep)[1]
    row_source = np.repeat(sources, counts)
    ids += ids >= row_source  # values 0..N-2 skip the source
    return ptr, ids


def distinct_values(counts: np.ndarray, span: int, rng: np.random.Generator) -> np.ndarray:
    """Draw distinct integers per row, uniformly.

    ``counts[r]`` distinct integers in ``[0, span)`` per row ``r``, rows concatenated, each sorted.

    Every value is drawn uniformly; where a row repeats a value, the copy at the later position is redrawn,
    round after round, only in the rows that still repeat one.  The rule never looks at the values beyond
    equality, so every ``counts[r]``-subset is equally likely.  Expected work is proportional to
    ``counts.sum()`` when every row asks for at most half of ``span`` (each redraw then repeats with
    probability at most 1/2).

    Parameters
    ----------
    counts : numpy.ndarray
        Values wanted per row.
    span : int
        Values lie in ``[0, span)``.
    rng : numpy.random.Generator
        The random source.

    Returns
    -------
    numpy.ndarray
        The rows concatenated, each sorted.

    Raises
    ------
    ValueError
        If a row asks for more than ``span`` values.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if np.any(counts > span):
        raise ValueError(f"distinct_values: a row asks for more than {span} distinct values")
    ptr = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    row = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    values = rng.integers(0, span, size=int(ptr[-1]), dtype=np.int64)
    check = np.arange(len(values), dtype=np.int64)
    while len(check):
        key = row[check] * span + values[check]
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        repeat = np.zeros(len(check), dtype=bool)
        repeat[1:] = ordered[1:] == ordered[:-1]
        if not repeat.any():
            break
        again = np.sort(check[order[repeat]])
        values[again] = rng.integers(0, span, size=len(again), dtype=np.int64)
        check = _ranges(ptr, np.unique(row[again]))
    return np.sort(row * span + values) - row * span


def _ranges(ptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Gather the positions ``ptr[r] .. ptr[r+1]-1`` of every row in ``rows``, concatenated."""
    lengths = ptr[rows + 1] - ptr[rows]
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.repeat(ptr[rows] - (np.cumsum(lengths) - lengths), lengths)
    return starts + np.arange(total, dtype=np.int64)
