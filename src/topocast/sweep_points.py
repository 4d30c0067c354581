"""Load sweeps: many ``topocast.run`` points in a process pool of at most 2 workers, results in order.

Load point ``i`` is seeded from ``SeedSequence([seed, i])``, so results do
not depend on the number of workers or the order they finish in (used by
``topocast reproduce multicast`` for Figures 3-6 of Al-Dubai et al. 2003).
Each result is the run's metrics (verification keys included) plus its
``params``.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

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
    """Run ``(spec, algorithm, params, seed)`` tuples in a pool of at most 2 processes, results in order."""
    workers = max(1, min(int(workers), 2, len(jobs)))
    results: list[dict | None] = [None] * len(jobs)
    if workers == 1:
        iterator = enumerate(map(measure_point, jobs))
        if progress is not None:
            iterator = progress.track(iterator, description, total=len(jobs))
        for i, res in iterator:
            results[i] = res
        return results  # type: ignore[return-value]
    import multiprocessing
    from concurrent.futures import as_completed

    # spawn, not fork: forking after numba's worker threads have started can hang the child
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.submit(measure_point, job): i for i, job in enumerate(jobs)}
        done = as_completed(futures)
        if progress is not None:
            done = progress.track(done, description, total=len(jobs))
        for fut in done:
            results[futures[fut]] = fut.result()
    return results  # type: ignore[return-value]
