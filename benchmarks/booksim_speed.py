"""Whole runs of the 16x16 BookSim2 config at half saturation (issue 16, item 4), beside BookSim2.

    python benchmarks/booksim_speed.py                            # in process and as a process, 5 runs each
    python benchmarks/booksim_speed.py --booksim PATH --rounds 3  # alternated with a BookSim2 binary, one sitting
    python benchmarks/booksim_speed.py --booksim-seconds 11.4     # ratios to a BookSim2 time measured elsewhere
    python benchmarks/booksim_speed.py --runs 3 --no-process      # quick

100,000 cycles of uniform traffic at 0.055 flits/node/cycle on a 16x16 mesh
with dimension-order routes and 32-flit packets, under three routers: the
BookSim-like flit-level router (one VC, 5-flit buffers, 3-cycle hops) with
BookSim's VC release (``tail-sent``) and with ours (``tail-left``), and the
default rigid worm.  "In process" is ``tc.run`` (plan, simulation,
statistics, verification) after one warm-up run; "process" is a whole
``topocast run`` command (Python and numba start-up included).

BookSim2 is never built or fetched here: ``--booksim PATH`` runs a binary
you built yourself (``docs/simulator.md``, "Validation against BookSim2")
on the config recorded in ``benchmarks/data/booksim2_reference.json``, 100,205
cycles (50,000 warm-up, 50,000 measured, drain), alternated with topocast's
runs for ``--rounds`` rounds; the ratios use the median of its wall times.
Without it, ``--booksim-seconds`` gives BookSim2's time, else the 11.42 s
measured on this project's machine.  The figures' target is a hundredth of
that time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from figures import Figures, add_argument

import topocast as tc

#: BookSim2's whole run of this workload on this project's machine (docs/simulator.md); the mark is 100 times faster
BOOKSIM_SECONDS = 11.42
REFERENCE = Path(__file__).resolve().parent / "data" / "booksim2_reference.json"
BOOKSIM_ARGS = ("injection_rate=0.055", "seed=0", "sim_type=latency", "warmup_periods=1", "sample_period=50000",
                "max_samples=2")

BASE = dict(routing="dor", traffic="uniform", flits=32, load=0.055, cycles=100_000)
FLIT = dict(buffer_depth=5, router_delay=2, link_latency=1, credit_delay=0, startup=2, injection_channels=1,
            ejection_channels=1)
ROUTERS = {
    "flit-level, tail-sent (BookSim's VC release)": {**FLIT, "vc_release": "tail-sent"},
    "flit-level, tail-left": {**FLIT, "vc_release": "tail-left"},
    "rigid default": {},
}


def in_process(options: dict, runs: int) -> tuple[list[float], float]:
    """Seconds of ``tc.run`` after a warm-up run, and the run's mean latency."""
    kw = {**BASE, **options}
    tc.run("mesh:16x16", "unicast", seed=1, **kw)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        result = tc.run("mesh:16x16", "unicast", seed=1, **kw)
        times.append(time.perf_counter() - t0)
    assert result.verified
    return times, result.metrics["mean_latency"]


def as_process(options: dict, runs: int) -> list[float]:
    """Wall seconds of whole ``topocast run`` commands (after one untimed run)."""
    cmd = [shutil.which("topocast") or "topocast", "run", "mesh:16x16", "unicast", "--seed", "1"]
    for key, value in {**BASE, **options}.items():
        cmd += ["--set", f"{key}={value}"]
    subprocess.run(cmd, check=True, capture_output=True)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return times


def booksim_run(binary: str, folder: Path) -> tuple[float, str]:
    """Wall seconds of one BookSim2 run of the 16x16 config, and its last average packet latency line."""
    t0 = time.perf_counter()
    done = subprocess.run([binary, "mesh16_3cyc.cfg", *BOOKSIM_ARGS], cwd=folder, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if "Total run time" not in done.stdout:     # (it exits with status 255 on success)
        raise SystemExit(f"booksim: no 'Total run time' in its output (exit status {done.returncode})")
    latency = [line for line in done.stdout.splitlines() if "Packet latency average" in line]
    return seconds, latency[-1].strip() if latency else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="topocast runs per router and round")
    parser.add_argument("--rounds", type=int, default=1, help="rounds, alternating BookSim2 (if given) and topocast")
    parser.add_argument("--booksim", metavar="PATH", help="a BookSim2 binary built outside this repository")
    parser.add_argument("--booksim-seconds", type=float, default=None,
                        help="BookSim2's time for this workload, measured elsewhere")
    parser.add_argument("--no-process", action="store_true", help="only the runs in process")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("booksim_speed")
    booksim, inproc, proc, latency = [], {n: [] for n in ROUTERS}, {n: [] for n in ROUTERS}, {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.booksim:
            (Path(tmp) / "mesh16_3cyc.cfg").write_text(
                json.loads(REFERENCE.read_text())["config_files"]["mesh16_3cyc.cfg"])
        for r in range(args.rounds):
            if args.booksim:
                seconds, line = booksim_run(args.booksim, Path(tmp))
                booksim.append(seconds)
                print(f"round {r + 1}: BookSim2 {seconds:.2f} s ({line})", flush=True)
            for name, options in ROUTERS.items():
                times, latency[name] = in_process(options, args.runs)
                inproc[name].append(statistics.median(times))
                if not args.no_process:
                    proc[name].append(statistics.median(as_process(options, args.runs)))
    ref = statistics.median(booksim) if booksim else args.booksim_seconds or BOOKSIM_SECONDS
    source = "this sitting" if booksim else "given" if args.booksim_seconds else "recorded"
    print(f"\nBookSim2: {ref:.2f} s ({source}); medians over {args.rounds} round(s) of {args.runs} runs")
    print("| router | in process | BookSim2 / in process | whole process | BookSim2 / process | mean latency |")
    print("|---|---|---|---|---|---|")
    for name, options in ROUTERS.items():
        a = statistics.median(inproc[name])
        b = statistics.median(proc[name]) if proc[name] else None
        whole = f"{b:.2f} s | {ref / b:.1f}" if b else " | "
        print(f"| {name} | {a:.3f} s | {ref / a:.0f} | {whole} | {latency[name]:.1f} |", flush=True)
        figures.add(f"16x16 BookSim config, 100k cycles in process, {name}", a, "s",
                    target=ref / 100 if options else None)
    if booksim:
        figures.add("BookSim2, the same workload (this sitting)", ref, "s")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
