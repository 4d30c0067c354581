"""Open-loop workloads on the wormhole engine, with batch-means statistics.

Offered traffic (``load``) is counted in flits of *generated* messages per
node per cycle: each node generates messages (one multicast, or one unicast,
each ``flits`` long) at exponential inter-arrival times of mean
``flits / load`` cycles.  A multicast counts once however many destinations
it has, so at load 0.05 with 32-flit messages a node starts a multicast
every 640 cycles on average.

Accepted traffic is counted in the same unit: messages whose last
destination received them during ``[warmup, cycles)``, times ``flits``, per
node per cycle.

Statistics: multicasts generated in the first ``warmup`` cycles (default a
tenth of the run) are discarded; so are those generated in the last
``drain`` cycles (default a tenth of the run, at least 3000 cycles or a
quarter of the run), which have not had time to finish.  The latency of a multicast is the cycle the tail of
its message passes its last destination minus the cycle it was generated.
The measured multicasts, in order of generation, are cut into ``batches``
batches; the reported mean is the mean of the batch means and ``ci95`` the
Student-t half-width over them.  A load point is *saturated* when more than
1% of its measured multicasts are still unfinished at the end of the run, or
the mean of the last third of the batches exceeds the first third's by more
than half (the latency is still growing); a saturated point's mean is
reported but must not be plotted as a steady-state number.
"""

from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ...errors import TopocastError
from ...topology.core import Topology
from .engine import WormholeConfig, WormTrace, simulate
from .traffic import TrafficBuilder, draw_destinations, poisson_arrivals

Planner = Callable[[int, np.ndarray], list]


@dataclass
class WorkloadResult:
    metrics: dict[str, Any]
    trace: WormTrace
    book: dict
    latency: np.ndarray   # per multicast (-1: unfinished)
    verified: bool
    first_violation: str | None


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


def run_workload(topology: Topology, planner: Planner, *, load: float, destinations: int, cycles: int,
                 seed: int = 0, spread: int = 0, config: WormholeConfig = WormholeConfig(),
                 warmup: int | None = None, drain: int | None = None, batches: int = 10) -> WorkloadResult:
    """Generate, plan, simulate and measure one load point."""
    if not load > 0:
        raise TopocastError(f"multicast: parameter 'load' must be > 0 flits per node per cycle, got {load}")
    if cycles < 100:
        raise TopocastError(f"multicast: parameter 'cycles' must be >= 100, got {cycles}")
    if batches < 2:
        raise TopocastError(f"multicast: parameter 'batches' must be >= 2, got {batches}")
    n = topology.num_nodes
    warmup = cycles // 10 if warmup is None else int(warmup)
    drain = max(cycles // 10, min(3000, cycles // 4)) if drain is None else int(drain)
    if warmup < 0 or drain < 0 or warmup + drain >= cycles:
        raise TopocastError(f"multicast: warmup + drain must be < cycles, got {warmup} + {drain} >= {cycles}")
    rng = np.random.default_rng(seed)
    gen, src = poisson_arrivals(n, load / config.flits, cycles, rng)
    counts = destination_counts(len(gen), destinations, spread, n, rng)
    ptr, ids = draw_destinations(n, src, counts, rng)
    builder = TrafficBuilder(topology)
    batch = config.batch
    for i in range(len(gen)):
        dests = ids[ptr[i]:ptr[i + 1]]
        builder.add(int(src[i]), int(gen[i]), dests, planner(int(src[i]), dests), batch)
    traffic, book = builder.build()
    trace = simulate(n, topology.num_arcs, traffic, config, cycles, stop_when_idle=False)
    return summarise(traffic, book, trace, topology, load, cycles, warmup, drain, batches, config)


def multicast_latency(book: dict, trace: WormTrace) -> np.ndarray:
    """Per multicast: last delivery minus generation, -1 when a destination still waits."""
    slot_ptr = book["slot_ptr"]
    m = len(book["gen"])
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    times = trace.slot_time
    sizes = np.diff(slot_ptr)
    last = np.maximum.reduceat(times, slot_ptr[:-1]) if len(times) else np.zeros(m, np.int64)
    missing = np.add.reduceat((times < 0).astype(np.int64), slot_ptr[:-1]) if len(times) else sizes
    lat = last - book["gen"]
    lat[(missing > 0) | (sizes == 0)] = -1
    return lat


def verify_deliveries(book: dict, trace: WormTrace, traffic, complete_by: int | None = None
                      ) -> tuple[bool, str | None]:
    """No destination receives twice; every multicast whose worms all ended reached every destination.

    With ``complete_by``, multicasts generated before that cycle must also be complete.
    """
    count = trace.slot_count
    twice = np.flatnonzero(count > 1)
    if len(twice):
        s = int(twice[0])
        mc = int(np.searchsorted(book["slot_ptr"], s, side="right") - 1)
        return False, (f"multicast {mc}: destination {int(traffic.slot_node[s])} received "
                       f"{int(count[s])} copies")
    slot_ptr = book["slot_ptr"]
    lat = multicast_latency(book, trace)
    if complete_by is not None:
        late = np.flatnonzero((lat < 0) & (book["gen"] < complete_by))
        if len(late):
            mc = int(late[0])
            lo, hi = slot_ptr[mc], slot_ptr[mc + 1]
            waiting = traffic.slot_node[lo:hi][trace.slot_time[lo:hi] < 0]
            return False, (f"multicast {mc} from node {int(book['source'][mc])}: destinations "
                           f"{waiting.tolist()[:5]} never received the message")
    # every worm finished yet a destination missing: a plan that forgot a destination
    if len(count) and trace.deadlock is None and not np.any(trace.worm_done < 0):
        bad = np.flatnonzero(lat < 0)
        if len(bad):
            return False, f"multicast {int(bad[0])}: all worms finished but a destination was never served"
    return True, None


def summarise(traffic, book, trace: WormTrace, topology: Topology, load: float, cycles: int, warmup: int,
              drain: int, batches: int, config: WormholeConfig) -> WorkloadResult:
    n = topology.num_nodes
    lat = multicast_latency(book, trace)
    gen = book["gen"]
    window = (gen >= warmup) & (gen < cycles - drain)
    measured = np.flatnonzero(window)
    unfinished = int(np.count_nonzero(lat[measured] < 0))
    done = measured[lat[measured] >= 0]
    values = lat[done].astype(np.float64)
    mean = ci = float("nan")
    if len(values) >= 2 * batches:
        chunks = np.array_split(values, batches)
        means = np.array([c.mean() for c in chunks])
        mean = float(means.mean())
        from scipy.stats import t as student

        ci = float(student.ppf(0.975, batches - 1) * means.std(ddof=1) / math.sqrt(batches))
        third = max(1, batches // 3)
        growing = means[-third:].mean() > 1.5 * means[:third].mean()
    elif len(values):
        mean = float(values.mean())
        growing = False
    else:
        growing = False
    saturated = bool(trace.deadlock is not None or (len(measured) and unfinished > 0.01 * len(measured))
                     or growing)
    ok, violation = verify_deliveries(book, trace, traffic)
    if trace.deadlock is not None:
        ok, violation = False, trace.deadlock
    finish = gen + lat
    completed = int(np.count_nonzero((lat >= 0) & (finish >= warmup) & (finish < cycles)))
    delivered_flits = float(completed) * config.flits
    span = cycles - warmup
    startups = book["startups"]
    metrics = {
        "mean_latency": mean,
        "ci95": ci,
        "saturated": saturated,
        "startups": int(startups.max(initial=0)),
        "startups_mean": float(startups.mean()) if len(startups) else 0.0,
        "steps": int(book["steps"].max(initial=0)),
        "worms_mean": float(book["worms"].mean()) if len(book["worms"]) else 0.0,
        "delivered": int(np.count_nonzero(trace.slot_count == 1)),
        "destinations_total": int(len(trace.slot_count)),
        "redundant": int(np.clip(trace.slot_count - 1, 0, None).sum()),
        "multicasts": int(len(gen)),
        "measured": int(len(measured)),
        "unfinished": unfinished,
        "offered": float(load),
        "accepted": delivered_flits / (n * span) if span > 0 else 0.0,
        "cycles": int(trace.cycles),
        "flit_moves": int(trace.flit_moves),
        "max_worms_in_flight": int(trace.max_active),
        "deadlock": trace.deadlock,
    }
    return WorkloadResult(metrics, trace, book, lat, ok, violation)


# -- load sweeps in a process pool -------------------------------------------------------

def point_seed(seed: int, index: int) -> int:
    """Seed of load point ``index``, from the base seed and the index only."""
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1)[0])


def _measure(args) -> dict:
    spec, algorithm, params, seed = args
    from ...api import run

    result = run(spec, algorithm, seed=seed, **params)
    out = dict(result.metrics)
    out["verified"] = result.verified
    out["first_violation"] = result.first_violation
    return out


def sweep(spec: str, algorithm: str, loads: Sequence[float], params: dict, seed: int = 0,
          workers: int = 2, progress=None, description: str = "load points") -> list[dict]:
    """Run ``algorithm`` at every load (in parallel, at most ``workers`` processes).

    Load point ``i`` uses seed :func:`point_seed` ``(seed, i)``, so results do
    not depend on the number of workers or the order they finish in.
    """
    jobs = [(spec, algorithm, dict(params, load=float(load)), point_seed(seed, i)) for i, load in enumerate(loads)]
    return run_points(jobs, workers, progress, description)


def run_points(jobs: list[tuple], workers: int = 2, progress=None, description: str = "load points") -> list[dict]:
    """Run ``(spec, algorithm, params, seed)`` tuples in a pool of at most 2 processes, results in order."""
    workers = max(1, min(int(workers), 2, len(jobs)))
    results: list[dict | None] = [None] * len(jobs)
    if workers == 1:
        iterator = enumerate(map(_measure, jobs))
        if progress is not None:
            iterator = progress.track(iterator, description, total=len(jobs))
        for i, res in iterator:
            results[i] = res
        return results  # type: ignore[return-value]
    from concurrent.futures import as_completed

    import multiprocessing

    # spawn, not fork: forking after numba's worker threads have started can hang the child
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(_measure, job): i for i, job in enumerate(jobs)}
        done = as_completed(futures)
        if progress is not None:
            done = progress.track(done, description, total=len(jobs))
        for fut in done:
            results[futures[fut]] = fut.result()
    return results  # type: ignore[return-value]
