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
(:func:`topocast.verify.wormhole_deliveries`).

Offered traffic (``load``) is counted in flits of *generated* messages per
node per cycle: each node generates messages (one multicast, or one unicast,
each ``flits`` long) at exponential inter-arrival times of mean
``flits / load`` cycles.  A multicast counts once however many destinations
it has.  Multicasts generated in the first ``warmup`` cycles (default a
tenth of the run) and in the last ``drain`` cycles (default a tenth of the
run, at least 3000 cycles or a quarter of the run) are not measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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

    def add(self, source: int, generated: int, destinations: Sequence[int], jobs: Jobs) -> None:
        """Add one multicast generated at cycle ``generated`` with its job list.

        A destination the jobs never serve, or serve twice, is kept as it is
        and reported by the verification of the run; a worm visiting a node
        that is not a destination, a relay released by a non-destination, or
        a destination releasing two relays cannot be expressed and raises
        :class:`TopocastError`.
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
        """The plan: paths expanded, multicasts indexed, the window attached."""
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
    """``(warmup, drain)`` of a load point, defaults filled and checked."""
    if cycles < 100:
        raise TopocastError(f"{name}: parameter 'cycles' must be >= 100, got {cycles}")
    if batches < 2:
        raise TopocastError(f"{name}: parameter 'batches' must be >= 2, got {batches}")
    warmup = cycles // 10 if warmup is None else int(warmup)
    drain = max(cycles // 10, min(3000, cycles // 4))
    if warmup < 0 or warmup + drain >= cycles:
        raise TopocastError(f"{name}: warmup + drain must be < cycles, got {warmup} + {drain} >= {cycles}")
    return warmup, drain


def workload_plan(topology: Topology, planner: Planner, *, load: float, destinations: int, cycles: int,
                  flits: int, seed: int = 0, spread: int = 0, warmup: int | None = None, batches: int = 10,
                  collective: str = "multicast", info: dict | None = None, notes: tuple[str, ...] = ()) -> WormPlan:
    """One load point: Poisson arrivals, destination draws, every multicast planned by ``planner``."""
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
    builder = TrafficBuilder(topology)
    for i in range(len(gen)):
        dests = ids[ptr[i]:ptr[i + 1]]
        builder.add(int(src[i]), int(gen[i]), dests, planner(int(src[i]), dests))
    return builder.build(cycles=cycles, warmup=warmup, drain=drain, batches=batches, flits=flits, load=float(load),
                         collective=collective, info=info, notes=notes)


def destination_counts(n: int, destinations: int, spread: int, num_nodes: int, rng) -> np.ndarray:
    """Fixed ``destinations`` per multicast, or uniform on ``destinations +- spread``."""
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
    """Every node generates at exponential inter-arrival times of mean ``1/rate`` cycles.

    Returns ``(cycle, source)`` sorted by cycle (ties by node); a message
    generated at real time ``x`` is handed to its processor at cycle ``ceil(x)``.
    """
    if rate <= 0:
        raise TopocastError(f"traffic: parameter 'load' must be > 0, got rate {rate}")
    expect = rate * cycles
    width = int(expect + 6 * np.sqrt(expect) + 10)
    times = np.cumsum(rng.exponential(1.0 / rate, size=(num_nodes, width)), axis=1)
    while np.any(times[:, -1] < cycles):  # rare: extend the rows that ran short
        more = np.cumsum(rng.exponential(1.0 / rate, size=(num_nodes, width)), axis=1) + times[:, -1:]
        times = np.concatenate([times, more], axis=1)
    node, _ = np.nonzero(times < cycles)
    cycle = np.ceil(times[times < cycles]).astype(np.int64)
    order = np.lexsort((node, cycle))
    return cycle[order], node[order].astype(np.int64)


def draw_destinations(num_nodes: int, sources: np.ndarray, counts: np.ndarray, rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Destinations drawn uniformly without replacement among the other nodes.

    Returns CSR ``(ptr, ids)``; ``counts[i]`` destinations for source ``sources[i]``.
    """
    sources = np.asarray(sources, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if np.any(counts > num_nodes - 1) or np.any(counts < 1):
        bad = int(counts[(counts > num_nodes - 1) | (counts < 1)][0])
        raise TopocastError(f"traffic: parameter 'destinations' must be in 1..{num_nodes - 1} "
                            f"(nodes - 1), got {bad}")
    ptr = np.zeros(len(sources) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    ids = np.empty(int(ptr[-1]), dtype=np.int64)
    kmax = int(counts.max(initial=1))
    chunk = max(1, (1 << 22) // max(num_nodes, 1))
    for lo in range(0, len(sources), chunk):
        hi = min(lo + chunk, len(sources))
        keys = rng.random((hi - lo, num_nodes - 1))
        pick = np.argpartition(keys, kmax - 1, axis=1)[:, :kmax] if kmax < num_nodes - 1 \
            else np.argsort(keys, axis=1)
        # a random-key order: the first k of each row are a uniform k-subset of the others
        pick = np.take_along_axis(pick, np.argsort(np.take_along_axis(keys, pick, axis=1), axis=1), axis=1)
        src = sources[lo:hi, None]
        nodes = pick + (pick >= src)           # skip the source
        for i in range(hi - lo):
            ids[ptr[lo + i]:ptr[lo + i + 1]] = nodes[i, :counts[lo + i]]
    return ptr, ids
