"""Time of ``topocast reproduce``: the README's quick job warm and on a fresh install, and the full run.

    python benchmarks/reproduce.py                   # quick: 5 warm runs, 3 fresh ones (about 2 min)
    python benchmarks/reproduce.py --full            # also `reproduce all` at full size once (2-3 min more)
    python benchmarks/reproduce.py --runs 1 --fresh-runs 0   # one warm run (smoke)

Every run is a new ``topocast`` process (the console script beside this
Python, else ``python -m topocast.cli``) writing into a new temporary
directory, output discarded.  *Warm*: numba's compiled kernels are in its
cache (a first run, not counted, fills it).  *Fresh*: ``NUMBA_CACHE_DIR``
names a new empty directory, so every kernel compiles on first use as on a
fresh install (Python's own byte-code cache is kept).  The figure is the
median wall time (min-max printed beside it); the full run also reports the
peak resident memory of its largest process.  Targets (issue 17): quick
under 10 s warm and 20 s fresh; ``reproduce all`` under 6 minutes and 3 GB.
The load average is printed first: on a busy machine every figure grows.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from figures import Figures, add_argument
from startup import command_prefix


def timed_run(argv: list[str], env: dict | None = None) -> float:
    """Wall seconds of ``topocast argv --out TMP`` in a new process (an error stops the benchmark)."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        done = subprocess.run([*command_prefix(), *argv, "--out", out], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env)
        seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"topocast {' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return seconds


def fresh_run(argv: list[str]) -> float:
    """:func:`timed_run` with an empty numba cache of its own."""
    with tempfile.TemporaryDirectory() as cache:
        return timed_run(argv, env={**os.environ, "NUMBA_CACHE_DIR": cache})


def report(figures: Figures, name: str, times: list[float], target: float) -> None:
    median = statistics.median(times)
    print(f"{name:<40} {median:8.2f} s  (min {min(times):.2f}, max {max(times):.2f}, {len(times)} runs; "
          f"target {target:g} s)", flush=True)
    figures.add(name, median, "s", target=target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="warm runs of the quick job (median reported)")
    parser.add_argument("--fresh-runs", type=int, default=3, help="fresh-install runs of the quick job")
    parser.add_argument("--full", action="store_true", help="also time `reproduce all` at full size, once")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("reproduce")
    print("load average (1/5/15 min): " + " / ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    quick = ["reproduce", "--quick"]
    if args.runs > 0:
        timed_run(quick)              # fills the kernel cache: the warm runs load, not compile
        report(figures, "reproduce --quick, warm", [timed_run(quick) for _ in range(args.runs)], 10)
    if args.fresh_runs > 0:
        report(figures, "reproduce --quick, fresh install", [fresh_run(quick) for _ in range(args.fresh_runs)], 20)
    if args.full:
        seconds = timed_run(["reproduce", "all"])
        report(figures, "reproduce all (full size)", [seconds], 360)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 1e9   # KiB -> GB
        print(f"{'reproduce all: peak memory (largest process)':<40} {peak:8.2f} GB (target 3)", flush=True)
        figures.add("reproduce all: peak memory of its largest process", peak, "GB", target=3)
    print("load average (1/5/15 min): " + " / ".join(f"{x:.2f}" for x in os.getloadavg()), flush=True)
    figures.write(args.figures)


if __name__ == "__main__":
    sys.exit(main())
