"""All-to-all broadcast on hypercube:16 (65,536 nodes) through the step engine, verification on.

Run: python benchmarks/step_engine.py [--n 16] [--figures PATH]
Target (issue 2): at least 2 million transfers per second.
"""

from __future__ import annotations

import argparse
import resource
import time

from figures import Figures, add_argument

import topocast as tc
from topocast.algorithms.classic_allgather import recursive_doubling_allgather
from topocast.measure.step import run_steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs after the first (cold) one")
    add_argument(parser)
    args = parser.parse_args()
    run_steps(tc.build("hypercube:3"), recursive_doubling_allgather(tc.build("hypercube:3")))  # compile

    t0 = time.perf_counter()
    topology = tc.build(f"hypercube:{args.n}")
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    schedule = recursive_doubling_allgather(topology)
    sched_s = time.perf_counter() - t0
    runs = []
    for _ in range(1 + args.repeats):
        t0 = time.perf_counter()
        trace = run_steps(topology, schedule, tc.PortModel.one_port())
        runs.append(time.perf_counter() - t0)
        v = trace.verification
        assert v.exactly_once, v.first_violation
        del trace
    cold_s, run_s = runs[0], sorted(runs[1:])[len(runs[1:]) // 2]
    transfers = schedule.num_transfers
    print(f"topology             hypercube:{args.n}: {topology.num_nodes:,} nodes")
    print(f"transfers            {transfers:,} in {schedule.num_steps} steps; message deliveries {v.receipts:,}")
    print(f"build / schedule     {build_s:.3f} s / {sched_s:.3f} s")
    print(f"step engine + verify {run_s:.3f} s median of {args.repeats} (exactly once: {v.exactly_once})")
    print(f"transfers per second {transfers / run_s:,.0f}")
    print(f"first run (cold)     {cold_s:.3f} s = {transfers / cold_s:,.0f} transfers/s; the difference is "
          f"loading the parallel kernels from numba's cache (the verifier keeps a bit set per thread, "
          f"{(schedule.num_messages + 63) // 64 * 8 / 2**10:.0f} KiB, not a nodes x messages matrix)")
    print(f"deliveries per second {v.receipts / run_s:,.0f}")
    print(f"peak RSS             {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")
    figures = Figures("step_engine")
    figures.add(f"step engine + verify, hypercube:{args.n} all-to-all", run_s, "s")
    figures.add(f"transfers per second, hypercube:{args.n}", transfers / run_s, "transfers/s", target=2e6,
                better="higher")
    figures.add("first (cold) run", cold_s, "s")
    figures.add("peak RSS", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "GiB")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
