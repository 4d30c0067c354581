"""Load sweeps: many ``topocast.run`` points on the sweep executor (Dask), results in order.

Load point ``i`` is seeded from ``SeedSequence([seed, i])``, so results do
not depend on the number of workers or the order they finish in (used by
``topocast reproduce multicast`` for Figures 3-6 of Al-Dubai et al. 2003).
Each result is the run's metrics (verification keys included) plus its
``params``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np


def point_seed(seed: int, index: int) -> int:
    """Seed of load point ``index``, from the base seed and the index only."""
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1)[0])


def measure_point(args) -> dict:
    """One ``(spec, algorithm, params, seed)`` point: the run's metrics and its resolved params."""
    spec, algorithm, params, seed = args
    from ..api import run

    result = run(spec, algorithm, seed=seed, **params)
    out = dict(result.metrics)
    out["params"] = dict(result.params)
    return out


def sweep(spec: str, algorithm: str, loads: Sequence[float], params: dict, seed: int = 0,
          workers: int = 2, progress=None, description: str = "load points") -> list[dict]:
    """Run ``algorithm`` at every load (in parallel, at most ``workers`` processes).

    Load point ``i`` uses seed :func:`point_seed` ``(seed, i)``.
    """
    jobs = [(spec, algorithm, dict(params, load=float(load)), point_seed(seed, i)) for i, load in enumerate(loads)]
    return run_points(jobs, workers, progress, description)


def map_ordered(function, items: list, workers: int = 2, progress=None,
                description: str = "points", sizes: list[int] | None = None, first: list[int] | None = None) -> list:
    """``[function(item) for item in items]``, on the sweep executor when it has more than one worker.

    The executor is the one of :func:`topocast.sweep.points.run_points` (the Dask cluster of ``reproduce
    --scheduler`` or of ``$DASK_SCHEDULER_ADDRESS``, else a local cluster of ``reproduce --workers``
    processes, else of ``workers`` capped at the number of cores and of items; with one local worker the
    items run here, one after another).  ``function`` must be importable by the workers.  Items are
    submitted in the order ``first`` (a permutation of their indices: costliest first, so that no long item
    starts last), else in order; results come back in the items' order.  The progress bar counts
    ``sizes[i]`` for item ``i`` (one each by default).  An error or an interrupt closes the cluster."""
    from .grid import DEFAULTS, as_done, executor

    sizes = [1] * len(items) if sizes is None else [int(s) for s in sizes]
    order = list(range(len(items))) if first is None else [int(i) for i in first]
    if sorted(order) != list(range(len(items))) or len(sizes) != len(items):
        raise ValueError("map_ordered: 'first' must be a permutation of the item indices, 'sizes' one per item")
    scheduler = DEFAULTS["scheduler"]
    if scheduler is None and DEFAULTS["workers"] is None:
        scheduler = os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    if scheduler is None:
        workers = DEFAULTS["workers"] or min(int(workers), os.cpu_count() or 1)
        workers = max(1, min(workers, len(items)))
    results: list = [None] * len(items)

    def track(done) -> None:
        """Store each ``(index, result)`` of ``done``; advance the bar by the item's size."""
        def counted():
            for i, value in done:
                results[i] = value
                yield from range(sizes[i])

        ticks = counted() if progress is None else progress.track(counted(), description, total=sum(sizes))
        for _ in ticks:
            pass

    if scheduler is None and workers == 1:
        track((i, function(items[i])) for i in range(len(items)))
        return results

    def finished(client):
        for k, value, error in as_done(client, function, [items[i] for i in order]):
            if error is not None:
                raise error
            yield order[k], value

    with executor(scheduler, None if scheduler is not None else workers) as client:
        track(finished(client))
    return results


def run_points(jobs: list[tuple], workers: int = 2, progress=None, description: str = "load points") -> list[dict]:
    """Run ``(spec, algorithm, params, seed)`` tuples on the sweep executor, results in order
    (:func:`map_ordered` of :func:`measure_point`)."""
    return map_ordered(measure_point, jobs, workers, progress, description)
