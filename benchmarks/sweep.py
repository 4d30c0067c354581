"""Sweeps on Dask: speed-up of a 200-run multicast sweep on 2 local workers over 1, and the per-run overhead
of the executor and the store on a 10,000-run sweep of tiny runs.

    python benchmarks/sweep.py            # both (about 2 minutes on 2 cores)
    python benchmarks/sweep.py --quick    # 40 multicast runs, 1,000 tiny runs
    python benchmarks/sweep.py --figures PATH   # also write the figures as JSON rows

Times are of :func:`topocast.sweep.grid.sweep` with a fresh JSON-lines store (one ``fsync`` per row), on a
cluster already started and warmed up (one run per worker: numba's cached kernels load once per
process); the time to start the cluster is printed separately.  Overhead per run =
(wall time - sum of the runs' own times / workers) / runs: scheduling, transfer, the client's
bookkeeping and the store's write, everything that is not the run itself.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from figures import Figures, add_argument

from topocast.outputs.store import read_rows
from topocast.sweep.grid import executor, sweep

MULTICAST = {"specs": ["mesh:16x16"], "algorithms": ["multicast-dp", "multicast-cp"], "engines": ["wormhole"],
             "params": {"load": [0.002, 0.004], "destinations": [10], "cycles": [40000]}}
TINY = {"specs": ["hypercube:3"], "algorithms": ["broadcast-binomial"]}


def timed_sweep(grid: dict, workers: int, directory: Path, name: str) -> tuple[float, float, float, int]:
    """(cluster start s, sweep wall s, sum of run times s, runs) on ``workers`` local workers."""
    start = time.perf_counter()
    with executor(workers=workers) as client:
        client.wait_for_workers(workers)
        client.run(_warm)
        started = time.perf_counter() - start
        store = directory / f"{name}.jsonl"
        summary = sweep(grid, store, client=client)
    assert summary["failed"] == 0 and summary["executed"] == summary["total"], summary
    rows = read_rows(store)
    return started, summary["seconds"], sum(r["seconds"] for r in rows), len(rows)


def _warm() -> None:
    import topocast as tc

    tc.run("mesh:8x8", "multicast-dp", load=0.003, destinations=6, cycles=2000)
    tc.run("hypercube:3", "broadcast-binomial")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("sweep")
    runs = 40 if args.quick else 200
    tiny = 1_000 if args.quick else 10_000
    grid = dict(MULTICAST, seeds=list(range(runs // 4)))
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        times = {}
        for workers in (1, 2):
            start, wall, busy, n = timed_sweep(grid, workers, directory, f"multicast{workers}")
            times[workers] = wall
            print(f"multicast sweep, {n} runs, {workers} worker(s): {wall:.2f} s "
                  f"(runs' own time {busy:.2f} s, workers busy {busy / workers / wall:.0%} of the wall time; "
                  f"cluster start {start:.2f} s)")
        print(f"speed-up 2 workers over 1: {times[1] / times[2]:.2f}x (target >= 1.7x)")
        figures.add(f"multicast sweep of {n} runs, speed-up 2 workers over 1", times[1] / times[2], "x",
                    target=1.7, better="higher")
        start, wall, busy, n = timed_sweep(dict(TINY, seeds=list(range(tiny))), 2, directory, "tiny")
        overhead = (wall - busy / 2) / n
        print(f"tiny sweep, {n} runs on 2 workers: {wall:.2f} s, runs' own time {busy:.2f} s, "
              f"{wall / n * 1e3:.2f} ms per run, overhead {overhead * 1e3:.2f} ms per run (target < 10 ms)")
        figures.add(f"tiny sweep of {n} runs, overhead per run", overhead * 1e3, "ms", target=10.0)
    sys.stdout.flush()
    figures.write(args.figures)


if __name__ == "__main__":
    main()
