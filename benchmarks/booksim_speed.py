"""Whole runs of the 16x16 BookSim2 config at half saturation (issue 16, item 4): topocast's side.

    python benchmarks/booksim_speed.py                       # in process and as a CLI process, 5 runs each
    python benchmarks/booksim_speed.py --booksim-seconds 11.4  # and the ratios to a BookSim2 run timed beside it
    python benchmarks/booksim_speed.py --runs 1 --no-process   # quick

100,000 cycles of uniform traffic at 0.055 flits/node/cycle on a 16x16 mesh
with dimension-order routes and 32-flit packets, under three routers: the
BookSim-like flit-level router (one VC, 5-flit buffers, 3-cycle hops) with
BookSim's VC release (``tail-sent``) and with ours (``tail-left``), and the
default rigid worm.  "In process" is ``tc.run`` (plan, simulation,
statistics, verification) after one warm-up run; "process" is a whole
``topocast run`` command (Python and numba start-up included).  BookSim2 is
not run here: time it beside this script (``docs/simulator.md``, "Whole runs
against BookSim2", has its command) and pass its seconds.  The figures'
target is a hundredth of BookSim2's 11.42 s measured on this project's
machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import time

from figures import Figures, add_argument

import topocast as tc

#: BookSim2's whole run of this workload on this project's machine (docs/simulator.md); the mark is 100 times faster
BOOKSIM_SECONDS = 11.42

BASE = dict(routing="dor", traffic="uniform", flits=32, load=0.055, cycles=100_000)
FLIT = dict(buffer_depth=5, router_delay=2, link_latency=1, credit_delay=0, startup=2, injection_channels=1,
            ejection_channels=1)
ROUTERS = {
    "flit-level, tail-sent (BookSim's VC release)": {**FLIT, "vc_release": "tail-sent"},
    "flit-level, tail-left": {**FLIT, "vc_release": "tail-left"},
    "rigid default": {},
}


def in_process(options: dict, runs: int) -> tuple[float, float]:
    """Median seconds of ``tc.run`` after a warm-up run, and the run's mean latency."""
    kw = {**BASE, **options}
    tc.run("mesh:16x16", "unicast", seed=1, **kw)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = tc.run("mesh:16x16", "unicast", seed=1, **kw)
        times.append(time.perf_counter() - t0)
    assert result.verified
    return statistics.median(times), result.metrics["mean_latency"]


def as_process(options: dict, runs: int) -> float:
    """Median wall seconds of a whole ``topocast run`` command (after one untimed run)."""
    sets = [f"{k}={v}" for k, v in {**BASE, **options}.items()]
    cmd = [shutil.which("topocast") or "topocast", "run", "mesh:16x16", "unicast", "--seed", "1"]
    for item in sets:
        cmd += ["--set", item]
    subprocess.run(cmd, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--booksim-seconds", type=float, default=None,
                        help="a BookSim2 run of the same workload, timed beside this script")
    parser.add_argument("--no-process", action="store_true", help="only the runs in process")
    add_argument(parser)
    args = parser.parse_args()
    ref = args.booksim_seconds
    figures = Figures("booksim_speed")
    print("| router | in process | mean latency | whole process |" + (" BookSim2 / in process |" if ref else ""))
    print("|---|---|---|---|" + ("---|" if ref else ""))
    for name, options in ROUTERS.items():
        inproc, latency = in_process(options, args.runs)
        proc = "" if args.no_process else f"{as_process(options, args.runs):.2f} s"
        ratio = f" {ref / inproc:.0f} |" if ref else ""
        print(f"| {name} | {inproc:.3f} s | {latency:.1f} | {proc} |{ratio}", flush=True)
        figures.add(f"16x16 BookSim config, 100k cycles in process, {name}", inproc, "s",
                    target=BOOKSIM_SECONDS / 100 if options else None)
    figures.write(args.figures)


if __name__ == "__main__":
    main()
