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
    from .api import run

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


def run_points(jobs: list[tuple], workers: int = 2, progress=None, description: str = "load points") -> list[dict]:
    """Run ``(spec, algorithm, params, seed)`` tuples on the sweep executor, results in order.

    The executor is :func:`topocast.sweep.executor`: the Dask cluster of ``reproduce --scheduler`` (or of
    ``$DASK_SCHEDULER_ADDRESS``), else a local cluster of ``reproduce --workers`` processes, else of
    ``workers`` capped at the number of cores; one local worker runs the points here, one after another.
    An error or an interrupt closes the cluster (local workers end at once; under the command line's
    supervisor they are in its process group and die with it, and they exit when their parent dies).
    """
    from .sweep import DEFAULTS, as_done, executor

    scheduler = DEFAULTS["scheduler"]
    if scheduler is None and DEFAULTS["workers"] is None:
        scheduler = os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    results: list[dict | None] = [None] * len(jobs)
    if scheduler is None:
        workers = DEFAULTS["workers"] or min(int(workers), os.cpu_count() or 1)
        workers = max(1, min(workers, len(jobs)))
    if scheduler is None and workers == 1:
        iterator = enumerate(map(measure_point, jobs))
        if progress is not None:
            iterator = progress.track(iterator, description, total=len(jobs))
        for i, res in iterator:
            results[i] = res
        return results  # type: ignore[return-value]
    with executor(scheduler, None if scheduler is not None else workers) as client:
        done = as_done(client, measure_point, jobs)
        if progress is not None:
            done = progress.track(done, description, total=len(jobs))
        for i, res, error in done:
            if error is not None:
                raise error
            results[i] = res
    return results  # type: ignore[return-value]
