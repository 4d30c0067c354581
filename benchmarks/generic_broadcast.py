"""``broadcast-bfs-tree`` at scale through the step engine, verification on.

    python benchmarks/generic_broadcast.py                       # torus:100x100x100 and HDN(2x3x5, 2, (1,1))
    python benchmarks/generic_broadcast.py --spec torus:64x64    # any spec(s)
    python benchmarks/generic_broadcast.py --figures PATH        # also write the figures as JSON rows

Per topology: build, plan (one numba BFS from the root with lowest-index
parents; transfers = tree edges in step depth - 1), step engine + exactly-once
verification, total, and peak resident memory of the process so far.
Target: under 10 s for 10^6 nodes.
"""

from __future__ import annotations

import argparse
import resource
import time

from figures import Figures, add_argument

import topocast as tc
from topocast.algorithms.generic_broadcast import bfs_tree_broadcast
from topocast.execution.execute import execute
from topocast.registry import algorithm
from topocast.topology.metrics import warm_kernels

SPECS = ("torus:100x100x100", "hdn:base=2x3x5,k=2,s=1/1")


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--spec", nargs="*", default=list(SPECS))
    parser.add_argument("--root", type=int, default=0)
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("generic_broadcast")
    small = tc.build("torus:4x4")
    tc.run(small, "broadcast-bfs-tree", engine="step")  # compile the numba kernels first
    warm_kernels()  # and the BFS kernels that graphs above the small-graph size run
    model = algorithm("broadcast-bfs-tree").model({})
    for spec in args.spec:
        t0 = time.perf_counter()
        topology = tc.build(spec)
        t1 = time.perf_counter()
        plan = bfs_tree_broadcast(topology, root=args.root)
        t2 = time.perf_counter()
        result = execute(topology, plan, "step", model, algorithm="broadcast-bfs-tree")
        t3 = time.perf_counter()
        assert result.verified and result.metrics["exactly_once"], result.first_violation
        print(f"{spec}: {topology.num_nodes:,} nodes, {topology.num_edges:,} links, "
              f"{plan.num_transfers:,} transfers")
        print(f"  steps {result.metrics['steps']} = lower bound {result.metrics['lower_bound']} "
              f"(ecc of root {plan.info['eccentricity']}); verified exactly once: {result.verified}")
        print(f"  build {t1 - t0:.2f} s, plan {t2 - t1:.2f} s, engine + verification {t3 - t2:.2f} s, "
              f"total {t3 - t0:.2f} s; peak RSS so far {peak_gib():.2f} GiB")
        figures.add(f"broadcast-bfs-tree total, {spec}", t3 - t0, "s",
                    target=10.0 if topology.num_nodes >= 10**6 else None)
        figures.add(f"engine + verification, {spec}", t3 - t2, "s")
        del topology, plan, result
    figures.add("peak RSS", peak_gib(), "GiB")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
