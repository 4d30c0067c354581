"""Wormhole engine speed: QG multicast at half its saturation load on 16 x 16 and 64 x 64 meshes.

    python benchmarks/wormhole.py            # both sizes
    python benchmarks/wormhole.py --small    # 16 x 16 only
    python benchmarks/wormhole.py --figures PATH   # also write the figures as JSON rows

For each mesh: find the QG (20 destinations) saturation load with short
runs on a load grid, then time one long run at half of it, split into
workload generation and planning (Python), path expansion and the
cycle-driven simulation (numba).  Prints cycles per second and flit moves
per second of the simulation and of the whole run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from figures import Figures, add_argument

import topocast as tc
from topocast.algorithms.mesh_multicast_qg import qg_planner
from topocast.algorithms.worm_traffic import TrafficBuilder, draw_destinations, poisson_arrivals, window
from topocast.execution.execute import execute
from topocast.sim.models import Model
from topocast.sim.wormhole import RouterConfig


def saturation_load(spec: str, loads, cycles: int, seed: int = 1) -> float:
    """First load of ``loads`` (increasing) whose short run is saturated."""
    for load in loads:
        m = tc.run(spec, "multicast-qg", destinations=20, load=load, cycles=cycles, seed=seed).metrics
        print(f"  probe {spec} load {load:.5f}: latency {m['mean_latency']:.0f} saturated {m['saturated']}")
        if m["saturated"]:
            return load
    return loads[-1]


def timed_run(spec: str, load: float, cycles: int, seed: int = 1) -> dict:
    topology = tc.build(spec)
    config = RouterConfig()
    planner = qg_planner(topology, prep=16)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    gen, src = poisson_arrivals(topology.num_nodes, load / config.flits, cycles, rng)
    ptr, ids = draw_destinations(topology.num_nodes, src, np.full(len(gen), 20), rng)
    builder = TrafficBuilder(topology)
    for i in range(len(gen)):
        dests = ids[ptr[i]:ptr[i + 1]]
        builder.add(int(src[i]), int(gen[i]), dests, planner(int(src[i]), dests))
    t1 = time.perf_counter()
    warmup, drain = window(cycles, None, 10)
    plan = builder.build(cycles=cycles, warmup=warmup, drain=drain, batches=10, flits=config.flits, load=load)
    traffic = plan.traffic
    t2 = time.perf_counter()
    result = execute(topology, plan, "wormhole", Model(router=config))  # simulation, statistics, verification
    t3 = time.perf_counter()
    trace = result.trace.trace
    m = result.metrics
    out = {"spec": spec, "load": load, "cycles": trace.cycles, "multicasts": len(gen), "worms": traffic.num_worms,
           "plan_s": t1 - t0, "paths_s": t2 - t1, "sim_s": t3 - t2, "total_s": t3 - t0,
           "flit_moves": trace.flit_moves, "latency": m["mean_latency"], "ci95_latency": m["ci95_latency"],
           "saturated": m["saturated"], "verified": result.verified}
    print(f"{spec}: QG, 20 destinations, load {load:.5f} flits/node/cycle, {trace.cycles} cycles, "
          f"{len(gen)} multicasts, {traffic.num_worms} worms")
    print(f"  generate+plan {out['plan_s']:.2f} s, paths {out['paths_s']:.2f} s, run {out['sim_s']:.2f} s, "
          f"total {out['total_s']:.2f} s")
    print(f"  simulation: {trace.cycles / out['sim_s']:,.0f} cycles/s, {trace.flit_moves / out['sim_s']:,.0f} "
          f"flit moves/s ({trace.flit_moves:,} flit moves)")
    print(f"  whole run:  {trace.cycles / out['total_s']:,.0f} cycles/s, "
          f"{trace.flit_moves / out['total_s']:,.0f} flit moves/s")
    print(f"  mean latency {m['mean_latency']:.1f} +- {m['ci95_latency']:.1f} cycles, saturated {m['saturated']}, "
          f"verified {result.verified}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="16 x 16 only")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("wormhole")
    tc.run("mesh:4x4", "multicast-qg", destinations=3, load=0.01, cycles=500)  # compile (cached) kernels
    sat16 = saturation_load("mesh:16x16", [0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.01], 20000)
    print(f"16x16 QG-20 saturation load ~{sat16} (first saturated probe)")
    res16 = timed_run("mesh:16x16", sat16 / 2, 200_000)
    figures.add("QG-20 on mesh:16x16, 200,000 cycles at half saturation, whole run", res16["total_s"], "s",
                target=30.0)
    figures.add("mesh:16x16 simulation", res16["cycles"] / res16["sim_s"], "cycles/s", better="higher")
    figures.write(args.figures)
    assert res16["total_s"] < 30, "target: 200,000 cycles of 16x16 in under 30 s"
    if args.small:
        return
    # same relative load on 64 x 64: probe downwards from the 16 x 16 value scaled by the bisection (4/k)
    grid = [round(sat16 * f, 6) for f in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)]
    sat64 = saturation_load("mesh:64x64", grid, 10000)
    print(f"64x64 QG-20 saturation load ~{sat64} (first saturated probe)")
    res64 = timed_run("mesh:64x64", sat64 / 2, 100_000)
    figures.add("QG-20 on mesh:64x64, 100,000 cycles at half saturation, whole run", res64["total_s"], "s")
    figures.add("mesh:64x64 simulation", res64["cycles"] / res64["sim_s"], "cycles/s", better="higher")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
