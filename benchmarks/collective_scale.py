"""All-gather and all-to-all as a user grows the network: seconds and peak memory, size by size, and their fits.

    python benchmarks/collective_scale.py                     # the full series (about 15 minutes)
    python benchmarks/collective_scale.py --quick             # small sizes (about 2 minutes)
    python benchmarks/collective_scale.py --series alltoall-event
    python benchmarks/collective_scale.py --source OTHER/src  # the same runs against another source tree
    python benchmarks/collective_scale.py --largest 10        # sizes up to torus:10x10x10 (or 10 nodes)
    python benchmarks/collective_scale.py --figures PATH      # also write the figures as JSON rows

Every size runs in its own process (its ``VmHWM`` is that process's peak
resident size): it loads the kernels on a small run first,
then builds, plans, and runs engine and verification through
``topocast.execution.execute``.  Per size it prints the nodes, the plan's deliveries,
the seconds of the plan and of engine + verification, the peak resident size
and what the run added to the process (``added``), what the plan holds when
it is done, and the state the engine and the verifier estimate for
themselves (``state_bytes`` and ``verify.replay_bytes``).  Per series it fits
``seconds ~ N^a`` and ``added ~ N^b`` (least squares in log-log over every
size) and projects both to the issue's sizes (10^5 nodes all-gather, 10^4
nodes all-to-all).

Series (the default model of each algorithm, all-port):

* ``allgather-step``, ``allgather-event``: ``allgather-bfs-trees`` on torus:KxKxK;
* ``allgather-random``: ``allgather-bfs-trees`` on random 6-regular graphs (networkx), step engine;
* ``alltoall-event``: ``alltoall-shortest-paths`` on torus:KxKxK, event engine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np
from figures import Figures, add_argument

CHILD = r"""
import json, resource, sys, time
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
def peak():
    # VmHWM: this image's high-water mark (getrusage's ru_maxrss survives execve, so it would count the parent)
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
import numpy as np
import topocast as tc
from topocast import registry
from topocast.execution.execute import execute
kind, size, alg_name, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
alg = registry.algorithm(alg_name)
# load the kernels (serial and, through 249,500 transfers, parallel) before measuring
tc.run("torus:3x3x3", alg_name, engine=engine)
tc.run("ring:500", "allgather-ring", engine=engine)
base = resident()
if kind == "torus":
    topology = tc.build(f"torus:{size}x{size}x{size}")
else:
    import networkx as nx
    from topocast.topology.core import Topology
    topology = Topology.from_networkx(nx.random_regular_graph(6, size, seed=size))
built = time.perf_counter()
from topocast.api import plan as make_plan, resolve_params
params = resolve_params(alg, {})
model = alg.model(params)
plan = make_plan(topology, alg, params, engine, 0)
planned = time.perf_counter()
kept = resident()
plan_peak = peak()
result = execute(topology, plan, engine, model, max_bytes=1e13)
ran = time.perf_counter()
state = None
try:
    from topocast.verify.delivery import replay_bytes
    from topocast.sim import step, event
    engine_state = (step if engine == "step" else event).state_bytes(topology, plan)
    state = engine_state + replay_bytes(plan, timed=engine == "event")
except (ImportError, AttributeError):
    pass
print(json.dumps({"nodes": topology.num_nodes, "transfers": plan.num_transfers, "ranges": len(plan.range_first),
                  "deliveries": int(plan.range_count.sum()), "plan_s": planned - built, "run_s": ran - planned,
                  "base": base, "kept": kept, "plan_peak": plan_peak,
                  "peak": peak(), "state": state,
                  "verified": bool(result.verified)}))
"""

WARM = r"""
import topocast as tc
for e in ("step", "event"):
    tc.run("torus:3x3x3", "allgather-bfs-trees", engine=e)
    tc.run("ring:500", "allgather-ring", engine=e)
tc.run("torus:3x3x3", "alltoall-shortest-paths")
"""

SERIES = {
    # name: (graph kind, sizes, algorithm, engine, full sizes)
    "allgather-step": ("torus", (6, 8, 10, 12, 14), "allgather-bfs-trees", "step", (8, 10, 12, 14, 16, 18, 20)),
    "allgather-event": ("torus", (6, 8, 10, 12, 14), "allgather-bfs-trees", "event", (8, 10, 12, 14, 16, 18, 20)),
    "allgather-random": ("random", (500, 1000, 1500, 2000, 3000), "allgather-bfs-trees", "step",
                         (1000, 2000, 3000, 4000, 6000, 8000)),
    "alltoall-event": ("torus", (4, 5, 6, 7, 8), "alltoall-shortest-paths", "event", (5, 6, 7, 8, 9, 10, 11, 12)),
}
#: the issue's sizes: all-gather on 10^5 nodes, all-to-all on 10^4
TARGET_NODES = {"allgather": 1e5, "alltoall": 1e4}
GIB = 2**30


def run_child(args: list[str], source: str | None) -> dict:
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = source + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, timeout=3600)
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def fit(xs, ys) -> tuple[float, float]:
    """Least squares ``y = c x^a`` in log-log: ``(a, c)``."""
    a, logc = np.polyfit(np.log(xs), np.log(ys), 1)
    return float(a), float(np.exp(logc))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--series", nargs="*", default=list(SERIES), choices=list(SERIES))
    parser.add_argument("--source", default=None, help="run the sizes against this source tree (its src/ dir)")
    parser.add_argument("--largest", type=int, default=None, help="skip sizes above this one")
    add_argument(parser)
    args = parser.parse_args()
    env = dict(os.environ)
    if args.source:
        env["PYTHONPATH"] = args.source + os.pathsep + env.get("PYTHONPATH", "")
    subprocess.run([sys.executable, "-c", WARM], check=True, env=env)  # numba caches, outside the measurements
    figures = Figures("collective_scale")
    for name in args.series:
        kind, quick_sizes, alg, engine, full_sizes = SERIES[name]
        sizes = [k for k in (quick_sizes if args.quick else full_sizes) if args.largest is None or k <= args.largest]
        print(f"\n{name}: {alg} on {'torus:KxKxK' if kind == 'torus' else 'random 6-regular graphs'}, "
              f"{engine} engine")
        print(f"{'size':>6} {'nodes':>7} {'deliveries':>13} {'plan s':>7} {'engine+verify s':>15} {'peak':>9} "
              f"{'added':>9} {'plan kept':>9} {'engine+verifier state':>21}")
        rows = []
        for size in sizes:
            row = run_child([kind, str(size), alg, engine], args.source)
            if "error" in row:
                print(f"{size:>6} {row['error']}")
                break
            state = "" if row["state"] is None else f"{row['state'] / GIB:.3f} GiB"
            print(f"{size:>6} {row['nodes']:>7,} {row['deliveries']:>13,} {row['plan_s']:>7.2f} {row['run_s']:>15.2f} "
                  f"{row['peak'] / GIB:>7.2f} G {(row['peak'] - row['base']) / GIB:>7.2f} G "
                  f"{(row['kept'] - row['base']) / GIB:>7.2f} G {state:>21}"
                  f"{'' if row['verified'] else '  NOT VERIFIED'}")
            rows.append(row)
        if len(rows) < 2:
            continue
        nodes = [r["nodes"] for r in rows]
        a_run, c_run = fit(nodes, [max(r["run_s"], 1e-3) for r in rows])
        a_total, c_total = fit(nodes, [max(r["run_s"] + r["plan_s"], 1e-3) for r in rows])
        a_peak, c_peak = fit(nodes, [r["peak"] - r["base"] for r in rows])
        target = TARGET_NODES[alg.split("-")[0]]
        print(f"fit over {len(rows)} sizes: engine+verify s ~ N^{a_run:.2f}, plan+engine s ~ N^{a_total:.2f}, "
              f"added peak ~ N^{a_peak:.2f}; at N = {target:.0e}: engine+verify {c_run * target ** a_run:,.0f} s, "
              f"added peak {c_peak * target ** a_peak / GIB:,.0f} GiB")
        if all(r["state"] for r in rows):
            a_state, c_state = fit(nodes, [r["state"] for r in rows])
            print(f"engine + verifier state ~ N^{a_state:.2f}: {c_state * target ** a_state / GIB:,.1f} GiB at "
                  f"N = {target:.0e}")
            figures.add(f"{name}: engine+verifier state exponent", a_state, "")
        largest = rows[-1]
        figures.add(f"{name}: engine+verify, {largest['nodes']:,} nodes", largest["run_s"], "s")
        figures.add(f"{name}: peak RSS, {largest['nodes']:,} nodes", largest["peak"] / GIB, "GiB")
        figures.add(f"{name}: engine+verify time exponent", a_run, "")
        figures.add(f"{name}: added peak RSS exponent", a_peak, "")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
