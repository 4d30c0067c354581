"""The memory guard holds for whole processes: under ``--max-memory`` a run either stops with one line naming
what needs how much, or keeps its peak resident size below the cap.

Every case runs ``topocast run ... --max-memory CAP`` in a fresh interpreter that reports its own peak
resident size (``VmHWM``, else ``resource.getrusage``).  Sizes grow until the guard refuses, so each engine
both completes under the cap (peak measured below it) and is refused above it.  The step and event cases
include an all-to-all whose ``nodes x messages`` arrival matrix alone (8 bytes a pair, what the event engine
kept before) would pass the cap.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

MIB = 2**20

# The peak of this program: VmHWM of /proc/self/status (the high-water mark of the new image).  On Linux
# getrusage's ru_maxrss survives execve, so a child started from a large test process would report at least
# that process's size; VmHWM does not, and getrusage stays the fallback elsewhere.
SCRIPT = r"""
import resource, sys
from topocast.cli import main
try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
try:
    with open("/proc/self/status") as f:
        peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
except (OSError, StopIteration):
    pass
sys.stderr.write(f"\npeak-rss {peak}\n")
sys.exit(code)
"""


def run_capped(argv: list[str], cap: int) -> tuple[int, list[str], int]:
    """``topocast argv --max-memory cap`` in a new process: exit status, stderr lines, peak resident bytes."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *argv, "--max-memory", str(cap)], capture_output=True,
                          text=True, timeout=900)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("peak-rss "), proc.stderr
    return proc.returncode, lines[:-1], int(lines[-1].split()[1])


CASES = {
    # engine: (cap, the runs in growing size; the last must be refused)
    "step": (700 * MIB, [["run", "torus:8x8x8", "allgather-bfs-trees"],
                         ["run", "torus:12x12x12", "allgather-bfs-trees"],
                         ["run", "torus:8x8x8", "alltoall-shortest-paths", "--engine", "step"],
                         ["run", "torus:16x16x16", "allgather-bfs-trees"]]),
    "event": (600 * MIB, [["run", "hypercube:8", "alltoall-shortest-paths"],
                          ["run", "torus:8x8x8", "alltoall-shortest-paths"],
                          ["run", "torus:12x12x12", "allgather-bfs-trees", "--engine", "event"],
                          ["run", "torus:10x10x10", "alltoall-shortest-paths"]]),
    "frontier": (400 * MIB, [["run", "ej:a=3,b=4,n=5", "one-to-all-improved", "--engine", "frontier"],
                             ["run", "ej:a=3,b=4,n=7", "one-to-all-improved", "--engine", "frontier"]]),
    "circuit": (500 * MIB, [["run", "butterfly:n=8,d=2", "all-to-all-personalized-min-xor"],
                            ["run", "butterfly:n=10,d=2", "all-to-all-personalized-min-xor"],
                            ["run", "butterfly:n=16,d=2", "all-to-all-personalized-min-xor"]]),
    "wormhole": (500 * MIB, [["run", "mesh:32x32", "unicast", "--set", "load=0.01", "--set", "cycles=2000"],
                             ["run", "mesh:1024x1024", "unicast", "--set", "load=0.001", "--set", "cycles=20000"]]),
}


@pytest.mark.slow
@pytest.mark.parametrize("engine", list(CASES))
def test_runs_stay_under_the_cap_or_are_refused_in_one_line(engine):
    cap, runs = CASES[engine]
    outcomes = []
    for argv in runs:
        code, lines, peak = run_capped(argv, cap)
        if code == 0:
            assert peak < cap, (argv, peak / MIB, cap / MIB)
            outcomes.append("ran")
        else:
            assert code == 2 and len(lines) == 1, (argv, lines)
            assert lines[0].startswith("topocast: error: max-memory: ") and "needs about" in lines[0], lines[0]
            assert peak < cap, (argv, peak / MIB)  # refused before the work, not after it
            outcomes.append("refused")
    assert outcomes[0] == "ran" and outcomes[-1] == "refused", outcomes


@pytest.mark.slow
def test_an_all_to_all_runs_where_its_arrival_matrix_alone_would_not_fit():
    """torus:8x8x8 all-to-all: 512 nodes x 262,144 messages of arrival times are 1 GiB; the event engine and
    the verifier now keep per transfer and per thread state, so the whole run stays under 600 MiB."""
    nodes, messages = 512, 512**2
    cap = 600 * MIB
    assert 8 * nodes * messages > cap
    code, lines, peak = run_capped(["run", "torus:8x8x8", "alltoall-shortest-paths", "--json"], cap)
    assert code == 0, lines
    assert peak < cap
