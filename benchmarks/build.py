"""Building classic topologies at 10^6 nodes: CSR straight from the mixed-radix formula.

    python benchmarks/build.py [--runs 7] [--figures PATH]

Per spec: one build to warm up (the first touch of fresh memory), then
``--runs`` builds in the same process; the median is the figure (min-max
beside it).  Target (issue 17): ``torus:100x100x100`` (1,000,000 nodes,
6,000,000 arcs) under 0.2 s.  For reference the same torus through the
generic Cartesian product of three rings (the construction the torus used
before: every arc generated, then one lexsort), with the arrays checked equal.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

import numpy as np
from figures import Figures, add_argument

import topocast as tc
from topocast.topology import cartesian_product, ring

SPECS = (("torus:100x100x100", 0.2), ("mesh:100x100x100", None), ("hypercube:20", None), ("ring:1000000", None))


def timed(make, runs: int) -> list[float]:
    make()  # warm-up
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        topology = make()
        times.append(time.perf_counter() - start)
        del topology
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("build")
    for spec, target in SPECS:
        times = timed(lambda spec=spec: tc.build(spec), args.runs)
        t = tc.build(spec)
        median = statistics.median(times)
        print(f"{spec:<20} {t.num_nodes:>9,} nodes {t.num_arcs:>10,} arcs: median {median:.3f} s "
              f"(min {min(times):.3f}, max {max(times):.3f}) over {args.runs} builds"
              + (f"; target < {target} s" if target else ""))
        figures.add(f"build {spec}", median, "s", target=target)
        del t
    fast = tc.build("torus:100x100x100")
    times = timed(lambda: cartesian_product([ring(100)] * 3), args.runs)
    slow = cartesian_product([ring(100)] * 3)
    same = all(np.array_equal(getattr(fast, k), getattr(slow, k)) for k in ("indptr", "indices", "arc_labels"))
    print(f"{'product of 3 rings':<20} (the torus's former construction): median {statistics.median(times):.3f} s "
          f"(min {min(times):.3f}, max {max(times):.3f}); same arrays as torus:100x100x100: {same}")
    figures.add("torus:100x100x100 as the product of three rings (former construction)", statistics.median(times),
                "s")
    figures.write(args.figures)
    if not same:
        raise SystemExit("the direct torus differs from the product of rings")


if __name__ == "__main__":
    main()
