"""Faults at scale: degrade a 10^6-node torus by 1 % random links and broadcast on what survives.

    python benchmarks/faults.py                                   # torus:100x100x100, links=0.01,seed=1
    python benchmarks/faults.py --spec torus:32x32x32 --faults links=0.05,seed=2
    python benchmarks/faults.py --figures PATH                    # also write the figures as JSON rows

Per network: build, degrade (the fault spec resolved and drawn, the CSR rebuilt
without the failed links), then ``broadcast-bfs-tree`` through the one run
path (``topocast.run`` with ``faults=``: planned on the surviving graph, step
engine, verification of "every healthy connected node receives exactly once"),
and the total.  Target: under 15 s for the 10^6-node torus.
"""

from __future__ import annotations

import argparse
import time

from figures import Figures, add_argument

import topocast as tc
from topocast.faults import degrade
from topocast.topology.metrics import warm_kernels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spec", default="torus:100x100x100")
    parser.add_argument("--faults", default="links=0.01,seed=1")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("faults")
    tc.run("torus:4x4", "broadcast-bfs-tree", faults="links=2,seed=1")  # compile the kernels first
    warm_kernels()
    t0 = time.perf_counter()
    intact = tc.build(args.spec)
    t1 = time.perf_counter()
    degraded = degrade(intact, args.faults)
    t2 = time.perf_counter()
    result = tc.run(degraded, "broadcast-bfs-tree")
    t3 = time.perf_counter()
    m = result.metrics
    assert result.verified and m["exactly_once"], result.first_violation
    print(f"{args.spec} with {degraded.faults}: {degraded.num_nodes:,} nodes, {m['failed_links']:,} of "
          f"{intact.num_edges:,} links failed")
    print(f"  broadcast-bfs-tree: {m['steps']} steps (lower bound {m['lower_bound']}), {m['transfers']:,} transfers, "
          f"{m['deliveries_unreachable']:,} healthy nodes unreachable; verified exactly once: {result.verified}")
    print(f"  build {t1 - t0:.2f} s, degrade {t2 - t1:.2f} s, plan + engine + verification {t3 - t2:.2f} s, "
          f"total {t3 - t0:.2f} s")
    big = degraded.num_nodes >= 10**6
    figures.add(f"degrade + broadcast-bfs-tree total, {args.spec} {args.faults}", t3 - t0, "s",
                target=15.0 if big else None)
    figures.add(f"degrade, {args.spec} {args.faults}", t2 - t1, "s")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
