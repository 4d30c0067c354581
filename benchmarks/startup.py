"""Start-up time of the command line: ``topocast --help``, ``list`` and ``info ring:64``, as a user waits.

    python benchmarks/startup.py [--runs 9] [--figures PATH]

Each command runs ``--runs`` times as a fresh process (the console script
beside this Python, else ``python -m topocast.cli``), output discarded; the
median wall time is the figure (min-max printed beside it).  Targets (issue
17): ``--help`` under 0.25 s, ``list`` and ``info ring:64`` under 0.35 s.
Then each command once more under ``python -X importtime``: the heavy
packages it imported (none of numba, scipy, networkx, matplotlib, galois,
dask is the target), and ``import topocast`` alone.  The load average is
printed first: on a busy machine every figure grows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from figures import Figures, add_argument

HEAVY = ("numba", "scipy", "networkx", "matplotlib", "galois", "dask")
COMMANDS = (("--help", ["--help"], 0.25), ("list", ["list"], 0.35), ("info ring:64", ["info", "ring:64"], 0.35))


def command_prefix() -> list[str]:
    """How to start the CLI: the console script installed beside this Python, else ``-m topocast.cli``."""
    script = Path(sys.executable).with_name("topocast")
    return [str(script)] if script.exists() else [sys.executable, "-m", "topocast.cli"]


def wall_times(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return times


def imported(argv: list[str]) -> set[str]:
    """Top-level packages the program ``argv`` imports (run once under ``python -X importtime``)."""
    if argv[0] != sys.executable:  # the console script is a Python file
        argv = [sys.executable, *argv]
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    return {line.rsplit("|", 1)[1].strip().split(".")[0] for line in done.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh processes per command (the median is reported)")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("startup")
    prefix = command_prefix()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; command: "
          f"{'topocast (console script)' if len(prefix) == 1 else 'python -m topocast.cli'}; {args.runs} runs each")
    wall_times([*prefix, "--help"], 1)  # warm the file cache and the bytecode
    for name, extra, target in COMMANDS:
        times = wall_times([*prefix, *extra], args.runs)
        median = statistics.median(times)
        print(f"topocast {name:<14} median {median:.3f} s (min {min(times):.3f}, max {max(times):.3f}; "
              f"target < {target} s)")
        figures.add(f"topocast {name}", median, "s", target=target)
    for name, argv in [("import topocast", [sys.executable, "-c", "import topocast"])] + [
            (f"topocast {name}", [*prefix, *extra]) for name, extra, _ in COMMANDS]:
        heavy = sorted(imported(argv) & set(HEAVY))
        print(f"{name:<24} imports {', '.join(heavy) if heavy else 'none'} of {', '.join(HEAVY)}")
        figures.add(f"{name}: heavy packages imported", len(heavy), "packages", target=0)
    figures.write(args.figures)


if __name__ == "__main__":
    main()
