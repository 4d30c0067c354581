"""SFATA and RFATA with verification on a Galaxyfly of 11,136 routers (n = 12, q = 29, a = 32).

Target: each under 60 s and 4 GB on 2 cores.  Every algorithm runs in its own
process so that its peak memory is its own.  The phases are the ones
``topocast run SPEC sfata`` goes through: build, schedule, event engine with
exactly-once verification (arrival matrix kept for the metrics), lower bound
(exact router diameter), section-5 RouterTime (the rest come with the engine).

    python benchmarks/galaxyfly.py [--spec galaxyfly:n=12,q=29,a=32] [--json] [--figures PATH]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import time

from figures import Figures, add_argument

SPEC = "galaxyfly:n=12,q=29,a=32"


def one(spec: str, algorithm: str, queue) -> None:
    import topocast as tc
    from topocast.algorithms.galaxyfly_broadcast import (
        PER_BYTE,
        PER_HOP,
        STARTUP,
        router_first_schedule,
        supernode_first_schedule,
    )
    from topocast.measure import bounds
    from topocast.measure.event import group_completion, run_events
    from topocast.sim.models import CostModel, PortModel

    make = {"sfata": supernode_first_schedule, "rfata": router_first_schedule}[algorithm]
    cost = CostModel(startup=STARTUP, per_byte=PER_BYTE, per_hop=PER_HOP)
    times = {}
    t0 = time.perf_counter()
    topology = tc.build(spec)
    times["build"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    schedule = make(topology, message_bytes=160, root=0)
    times["schedule"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    trace = run_events(topology, schedule, cost, PortModel(), keep_arrival=True)
    times["engine+verify"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    bound = bounds.time_lower_bound(topology, schedule, cost, PortModel())
    times["lower bound"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    router_time = group_completion(trace.arrival, schedule)
    times["metrics"] = time.perf_counter() - t0
    v = trace.verification
    queue.put({
        "algorithm": algorithm, "routers": topology.num_nodes, "transfers": schedule.num_transfers,
        "receipts": v.receipts, "verified": v.verified, "exactly_once": v.exactly_once,
        "times": times, "total": sum(times.values()),
        "transfers_per_s": schedule.num_transfers / times["engine+verify"],
        "receipts_per_s": v.receipts / times["engine+verify"],
        "max_time_us": trace.makespan * 1e6, "router_time_us": router_time * 1e6,
        "bound_us": bound * 1e6,
        "peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    })


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default=SPEC)
    parser.add_argument("--json", action="store_true")
    add_argument(parser)
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    rows = []
    for algorithm in ("sfata", "rfata"):
        queue = ctx.Queue()
        proc = ctx.Process(target=one, args=(args.spec, algorithm, queue))
        proc.start()
        rows.append(queue.get())
        proc.join()
    figures = Figures("galaxyfly")
    for r in rows:
        figures.add(f"{r['algorithm'].upper()} on {args.spec}, total", r["total"], "s", target=60.0)
        figures.add(f"{r['algorithm'].upper()} peak RSS", r["peak_rss_gib"], "GiB", target=4 / 1.073741824)
    figures.write(args.figures)
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{args.spec}: {rows[0]['routers']} routers, 160 B packets, 16 Gbps")
    for r in rows:
        phases = ", ".join(f"{k} {v:.2f} s" for k, v in r["times"].items())
        print(f"{r['algorithm'].upper()}: total {r['total']:.1f} s ({phases}); peak RSS {r['peak_rss_gib']:.2f} GiB")
        print(f"  {r['transfers']} transfers, {r['receipts']:,} packet receipts; "
              f"{r['transfers_per_s']:,.0f} transfer events/s, {r['receipts_per_s']:,.0f} packet receipts/s; "
              f"verified {r['verified']}, exactly once {r['exactly_once']}")
        print(f"  MaxTime {r['max_time_us']:.1f} us, RouterTime {r['router_time_us']:.1f} us, "
              f"lower bound {r['bound_us']:.2f} us")


if __name__ == "__main__":
    main()
