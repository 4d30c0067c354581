"""Reductions at size: seconds and peak memory of plan, engine and verification, each run in its own process.

    python benchmarks/reductions.py               # the issue's sizes that fit (torus 32x32 and 64x64, ...)
    python benchmarks/reductions.py --quick       # small sizes (seconds)
    python benchmarks/reductions.py --runs 3      # medians over three runs per case

Per case: the network, the algorithm, the engine, the transfers and
(transfer, block) pairs of the plan, the seconds of the plan and of engine +
verification (``topocast.execute`` through ``topocast.run``), how it was
verified (exact contributor sets or fingerprints), and the peak resident size
of the process (``VmHWM``), after loading the kernels on a small run first.

Cases (issue 29's targets):

* ring and halving-doubling allreduce on ``torus:KxK``, event engine, verified
  (target: 4,096 nodes in under 10 s);
* exact verification of a ring allreduce of ``N`` blocks on ``N`` nodes
  (target: 1,024 nodes, under 5 s and 2 GB);
* hierarchical allreduce on a large Galaxyfly, step engine, fingerprints.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import topocast as tc
spec, name, engine, method, nbytes = sys.argv[1:6]
tc.run("ring:4", name if "hierarchical" not in name else "allreduce-ring", engine=engine)   # load the kernels
t0 = time.perf_counter()
topology = tc.build(spec)
t1 = time.perf_counter()
from topocast import registry
from topocast.execute import execute
from topocast.sim.models import Model
plan = registry.algorithm(name).plan(topology, message_bytes=float(nbytes))
t2 = time.perf_counter()
if method == "run":
    run = execute(topology, plan, engine, Model())
    verified, how = run.verified, run.metrics.get("verification_method")
else:
    from topocast.verify_reduction import verify_reduction
    found = verify_reduction(plan, method=method)
    verified, how = found.complete and found.first_violation is None, found.method
t3 = time.perf_counter()
peak = 0
for line in open("/proc/self/status"):
    if line.startswith("VmHWM"):
        peak = int(line.split()[1]) * 1024
print(json.dumps({"nodes": topology.num_nodes, "transfers": int(plan.num_transfers),
                  "pairs": int(plan.range_count.sum()),
                  "build_s": t1 - t0, "plan_s": t2 - t1, "run_s": t3 - t2, "verified": bool(verified),
                  "method": how, "peak_bytes": peak}))
"""

CASES = [
    ("torus:32x32", "allreduce-ring", "event", "run", 2 ** 20),
    ("torus:32x32", "allreduce-halving-doubling", "event", "run", 2 ** 20),
    ("torus:32x32", "allreduce-torus", "event", "run", 2 ** 20),
    ("ring:1024", "allreduce-ring", "step", "exact", 2 ** 20),
    ("torus:64x64", "allreduce-torus", "event", "run", 2 ** 24),
    ("torus:64x64", "allreduce-ring", "event", "run", 2 ** 24),
    ("galaxyfly:n=3,q=5,a=4", "allreduce-hierarchical", "step", "run", 2 ** 20),
]
QUICK = [
    ("torus:8x8", "allreduce-ring", "event", "run", 2 ** 16),
    ("torus:8x8", "allreduce-halving-doubling", "event", "run", 2 ** 16),
    ("ring:128", "allreduce-ring", "step", "exact", 2 ** 16),
    ("galaxyfly:n=3,q=3,a=2", "allreduce-hierarchical", "step", "run", 2 ** 16),
]


def one(case) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, case)], capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print(f"{'network':24} {'algorithm':28} {'engine':6} {'transfers':>11} {'pairs':>12} {'plan s':>7} "
          f"{'run s':>8} {'peak MB':>8}  verified")
    for case in QUICK if args.quick else CASES:
        rows = [one(case) for _ in range(args.runs)]
        if "error" in rows[0]:
            print(f"{case[0]:24} {case[1]:28} {case[2]:6} {rows[0]['error']}")
            continue
        med = {k: statistics.median(r[k] for r in rows) for k in ("plan_s", "run_s", "peak_bytes")}
        r = rows[0]
        print(f"{case[0]:24} {case[1]:28} {case[2]:6} {r['transfers']:>11,} {r['pairs']:>12,} "
              f"{med['plan_s']:>7.2f} {med['run_s']:>8.2f} {med['peak_bytes'] / 2 ** 20:>8.0f}  "
              f"{r['verified']} ({r['method']})", flush=True)


if __name__ == "__main__":
    main()
