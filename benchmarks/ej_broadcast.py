"""Benchmark: both EJ one-to-all broadcasts at the paper's largest sizes, exactly-once checked.

    python benchmarks/ej_broadcast.py            # EJ_{3+4rho}^(4), ^(5), ^(6) and EJ_{1+2rho}^(12)
    python benchmarks/ej_broadcast.py --skip-12  # without the 1.38e10-node run
    python benchmarks/ej_broadcast.py --figures PATH   # also write the figures as JSON rows

Each case runs in its own process (so its peak memory is its own) through
``simulate_broadcast``, the same per-step rule that writes the small-size
Schedules for the step engine, on the frontier engine's two bitmaps (two
bits per node: held, and frontier or new).  Printed per case: wall time,
peak resident memory, steps, total senders (against Table 3 where it has a
value), whether every node received exactly once, whether the per-step
counts equal the product (convolution) counts, and the memory-bandwidth
bound: the bytes of the bitmap passes every step makes (a scan reading both
bitmaps, an end-of-step pass reading and writing both: six bitmaps' worth)
divided by this machine's bandwidth, measured first as a numpy copy of
1 GiB (bytes read + written per second).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time

from figures import Figures, add_argument

PAPER_TABLE3 = {(3, 4, 4): (989140, 962407), (3, 4, 5): (36598199, 35609059),
                (3, 4, 6): (1354133382, 1317535183)}
CASES = [(3, 4, 4), (3, 4, 5), (3, 4, 6), (1, 2, 12)]


#: bitmap passes per step: the scan reads both bitmaps, the end-of-step pass reads and writes both
PASSES_PER_STEP = 6


def bandwidth() -> float:
    """Memory bandwidth in bytes per second: best of five numpy copies of 1 GiB, bytes read + written."""
    import numpy as np

    src = np.ones(1 << 27, dtype=np.uint64)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best


def run_case(a: int, b: int, n: int, algorithm: str) -> dict:
    import numpy as np

    from topocast.algorithms.ej_broadcast import broadcast_plan, product_counts
    from topocast.experiments.traces import simulate_broadcast
    from topocast.sim.frontier import bitmap_bytes
    from topocast.topology.eisenstein_jacobi import ej_ring

    start = time.perf_counter()
    result = simulate_broadcast(a, b, n, algorithm)
    seconds = time.perf_counter() - start
    expected = product_counts(a, b, n, algorithm)
    plan = broadcast_plan(ej_ring(a, b), n, algorithm)
    return {
        "network": f"EJ_{{{a}+{b}rho}}^({n})", "nodes": (a * a + a * b + b * b) ** n, "algorithm": algorithm,
        "seconds": round(seconds, 1),
        "peak_rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "steps": result.steps, "total_senders": int(result.senders.sum()),
        "exactly_once": result.exactly_once,
        "equals_product_counts": bool(np.array_equal(result.senders, expected["senders"])
                                      and np.array_equal(result.receivers, expected["receivers"])),
        "senders": result.senders.tolist(), "receivers": result.receivers.tolist(),
        "bitmap_gb": bitmap_bytes(plan.nodes, plan.rule) / 1e9,
        "pass_gb": PASSES_PER_STEP * result.steps * bitmap_bytes(plan.nodes, plan.rule) / 2 / 1e9,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-12", action="store_true", help="skip EJ_{1+2rho}^(12)")
    parser.add_argument("--case", nargs=4, metavar=("A", "B", "N", "ALG"), help=argparse.SUPPRESS)
    parser.add_argument("--bandwidth", action="store_true", help=argparse.SUPPRESS)
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("ej_broadcast")
    if args.case:
        a, b, n, alg = args.case
        print(json.dumps(run_case(int(a), int(b), int(n), alg)))
        return
    if args.bandwidth:
        print(bandwidth())
        return
    # in a process of its own: Linux keeps a process's peak memory across exec, so the 2 GiB of the copy
    # would show in every case's peak if this process made it
    rate = float(subprocess.run([sys.executable, __file__, "--bandwidth"], check=True, capture_output=True,
                                text=True).stdout)
    print(f"memory bandwidth (numpy copy of 1 GiB, read + write): {rate / 1e9:.1f} GB/s", flush=True)
    figures.add("memory bandwidth (numpy copy)", rate / 1e9, "GB/s")
    # compile the numba kernels once so that no case pays for it
    subprocess.run([sys.executable, __file__, "--case", "3", "4", "2", "improved"], check=True,
                   capture_output=True)
    for a, b, n in CASES:
        if args.skip_12 and n == 12:
            continue
        for alg in ("iterative", "improved"):
            proc = subprocess.run([sys.executable, __file__, "--case", str(a), str(b), str(n), alg],
                                  check=True, capture_output=True, text=True)
            row = json.loads(proc.stdout)
            paper = PAPER_TABLE3.get((a, b, n))
            table3 = "" if paper is None else (
                f"  Table 3: {paper[0 if alg == 'iterative' else 1]:,} "
                f"({'match' if paper[0 if alg == 'iterative' else 1] == row['total_senders'] else 'MISMATCH'})")
            bound = row["pass_gb"] * 1e9 / rate
            print(f"{row['network']:>16} {row['nodes']:>15,} nodes  {alg:>9}: {row['seconds']:7.1f} s  "
                  f"(bandwidth bound {bound:5.2f} s: {row['pass_gb']:.0f} GB of bitmap passes)  "
                  f"peak {row['peak_rss_gib']:5.2f} GiB  steps {row['steps']:2d}  "
                  f"senders {row['total_senders']:,}  exactly once {row['exactly_once']}  "
                  f"= product counts {row['equals_product_counts']}{table3}", flush=True)
            if n == 12:
                print(f"{'':>16} per-step senders   {row['senders']}\n{'':>16} per-step receivers {row['receivers']}",
                      flush=True)
            big = n == 12  # issue 17: EJ_{1+2rho}^(12) each algorithm under 2 minutes and 4 GB
            figures.add(f"{row['network']} {alg}", row["seconds"], "s", target=120.0 if big else None)
            figures.add(f"{row['network']} {alg} bandwidth bound", bound, "s")
            figures.add(f"{row['network']} {alg} peak RSS", row["peak_rss_gib"], "GiB",
                        target=4 / 1.073741824 if big else None)
    figures.write(args.figures)


if __name__ == "__main__":
    main()
