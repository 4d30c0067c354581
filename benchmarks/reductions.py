"""Reductions at size: seconds and peak memory of plan, engine and verification, each run in its own process.

    python benchmarks/reductions.py               # the issue's sizes (torus 64x64, ring:1024, synthesis)
    python benchmarks/reductions.py --quick       # small sizes (seconds)
    python benchmarks/reductions.py --runs 3      # medians over three runs per case
    python benchmarks/reductions.py --figures F   # also write the figures for benchmarks/run_all.py
    python benchmarks/reductions.py --only torus:64x64:allreduce-ring ring:1024:allreduce-ring   # some cases

Per case: the network, the algorithm, the engine, the transfers and
(transfer, block) pairs of the plan, the seconds of the plan and of engine +
verification (``topocast.execution.execute`` through ``topocast.run``), how it was
verified (exact contributor sets or fingerprints), and the peak resident size
of the process (``VmHWM``), after loading the kernels on a small run first.

Cases (issue 29's targets):

* ring and halving-doubling allreduce on ``torus:KxK``, event engine, verified
  (target: 4,096 nodes in under 10 s);
* exact verification of a ring allreduce of ``N`` blocks on ``N`` nodes
  (target: 1,024 nodes, under 5 s and 2 GB);
* hierarchical allreduce on a Galaxyfly, step engine (the issue's 10^6-node
  target cannot be planned or checked with a block per node: see
  docs/reductions.md);
* synthesised allreduce on galaxyfly:n=3,q=5,a=4 and torus:16x16 at 1 MiB:
  its time over the run's lower bound (target 1.5).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from figures import Figures, add_argument

CHILD = r"""
import json, resource, sys, time
import topocast as tc
spec, name, engine, method, nbytes = sys.argv[1:6]
tc.run("ring:4", "allreduce-ring", engine=engine)   # load the kernels
t0 = time.perf_counter()
topology = tc.build(spec)
t1 = time.perf_counter()
from topocast import registry
from topocast.execution.execute import execute
from topocast.sim.models import Model
plan = registry.algorithm(name).plan(topology, message_bytes=float(nbytes)) if method != "synthesize" else None
t2 = time.perf_counter()
r2 = resource.getrusage(resource.RUSAGE_SELF)
if method == "synthesize":
    from topocast.synthesis import synthesize
    made = synthesize(topology, name, message_bytes=float(nbytes), budget=600)
    plan, verified, how = made.schedule, made.result.verified, "ratio %.3f" % made.ratio
elif method == "run":
    run = execute(topology, plan, engine, Model())
    verified, how = run.verified, run.metrics.get("verification_method")
else:
    from topocast.verify.reduction import verify_reduction
    found = verify_reduction(plan, method=method)
    verified, how = found.complete and found.first_violation is None, found.method
t3 = time.perf_counter()
r3 = resource.getrusage(resource.RUSAGE_SELF)
peak = 0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM"):
        peak = int(line.split()[1]) * 1024
print(json.dumps({"nodes": topology.num_nodes, "transfers": int(plan.num_transfers),
                  "pairs": int(plan.range_count.sum()),
                  "build_s": t1 - t0, "plan_s": t2 - t1, "run_s": t3 - t2, "verified": bool(verified),
                  "run_cpu_s": r3.ru_utime - r2.ru_utime + r3.ru_stime - r2.ru_stime,
                  "method": how, "peak_bytes": peak, "ratio": made.ratio if method == "synthesize" else None}))
"""

#: (spec, algorithm or collective, engine, how, bytes, target seconds or ratio)
CASES = [
    ("torus:32x32", "allreduce-ring", "event", "run", 2 ** 20, None),
    ("torus:32x32", "allreduce-halving-doubling", "event", "run", 2 ** 20, None),
    ("torus:64x64", "allreduce-halving-doubling", "event", "run", 2 ** 24, 10.0),
    ("torus:64x64", "allreduce-torus", "event", "run", 2 ** 24, None),
    ("torus:64x64", "allreduce-ring", "event", "run", 2 ** 24, 10.0),
    ("ring:1024", "allreduce-ring", "step", "exact", 2 ** 20, 5.0),
    ("galaxyfly:n=3,q=7,a=8", "allreduce-hierarchical", "step", "run", 2 ** 20, None),
    ("gft:h=2,m=1000,w=1", "allreduce-in-network", "step", "run", 2 ** 20, 60.0),   # 10^6 processors
    ("galaxyfly:n=3,q=5,a=4", "allreduce", "event", "synthesize", 2 ** 20, 1.5),
    ("torus:16x16", "allreduce", "event", "synthesize", 2 ** 20, 1.5),
]
QUICK = [
    ("torus:8x8", "allreduce-ring", "event", "run", 2 ** 16, None),
    ("torus:8x8", "allreduce-halving-doubling", "event", "run", 2 ** 16, None),
    ("ring:128", "allreduce-ring", "step", "exact", 2 ** 16, None),
    ("galaxyfly:n=3,q=3,a=2", "allreduce-hierarchical", "step", "run", 2 ** 16, None),
    ("gft:h=2,m=4,w=2", "allreduce-in-network", "step", "run", 2 ** 16, None),
    ("torus:4x4", "allreduce", "event", "synthesize", 2 ** 16, None),
]


def one(case) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, case[:5])], capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--only", nargs="+", metavar="SPEC:ALGORITHM",
                        help="run only the cases of these network:algorithm pairs, e.g. torus:64x64:allreduce-ring")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("reductions")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at the start: {load} (run s: wall time of engine + verification; cpu s: the process's "
          "user + system time of it)")
    print(f"{'network':24} {'algorithm':28} {'engine':6} {'transfers':>11} {'pairs':>12} {'plan s':>7} "
          f"{'run s':>8} {'cpu s':>7} {'peak MB':>8}  verified")
    cases = QUICK if args.quick else CASES
    if args.only:
        cases = [c for c in cases if f"{c[0]}:{c[1]}" in args.only]
    for case in cases:
        rows = [one(case) for _ in range(args.runs)]
        if "error" in rows[0]:
            print(f"{case[0]:24} {case[1]:28} {case[2]:6} {rows[0]['error']}")
            continue
        med = {k: statistics.median(r[k] for r in rows) for k in ("plan_s", "run_s", "run_cpu_s", "peak_bytes")}
        r = rows[0]
        print(f"{case[0]:24} {case[1]:28} {case[2]:6} {r['transfers']:>11,} {r['pairs']:>12,} "
              f"{med['plan_s']:>7.2f} {med['run_s']:>8.2f} {med['run_cpu_s']:>7.2f} "
              f"{med['peak_bytes'] / 2 ** 20:>8.0f}  "
              f"{r['verified']} ({r['method']})", flush=True)
        label = f"{case[1]} {case[0]} {case[2]}"
        if case[3] == "synthesize":
            figures.add(f"synthesised {label}: time / bound", r["ratio"], "x", target=case[5])
        else:
            figures.add(f"{label}: engine + verification", med["run_s"], "s", target=case[5])
            figures.add(f"{label}: peak", med["peak_bytes"] / 2 ** 30, "GiB",
                        target=2.0 if case[3] == "exact" else None)
    figures.write(args.figures)


if __name__ == "__main__":
    main()
