"""Benchmark: verify every LLS and every CLS permutation of GFT(3,8,8) (4,096 processors).

Run:  python benchmarks/fattree.py [--h 3 --m 8 --w 8] [--chunk 256]

For each scheme it builds the 4,096 configurations of the opened tree (7
stages of 512 switches 8 x 8), traces every circuit with the circuit engine
(numba, parallel over configurations), checks that no link is used twice and
that the rows form a Latin square equal to the scheme (i -> i + k, i -> i XOR
x), and prints the wall time and circuits traced per second.  Target: under
30 s per scheme on 2 cores.  Numba compilation is done (and timed) first.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from topocast.algorithms import fattree_alltoall as ft
from topocast.sim.circuit import trace_many
from topocast.topology.fattree import GFTShape


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--h", type=int, default=3)
    parser.add_argument("--m", type=int, default=8)
    parser.add_argument("--w", type=int, default=8)
    parser.add_argument("--chunk", type=int, default=256)
    args = parser.parse_args()

    start = time.perf_counter()
    small = GFTShape(2, 2, 2)
    trace_many(small.network, ft.lls_routes(small, np.arange(8)))
    print(f"numba warm-up (compile or cache load): {time.perf_counter() - start:.2f} s")

    shape = GFTShape(args.h, args.m, args.w)
    start = time.perf_counter()
    net = shape.network
    print(f"GFT({args.h},{args.m},{args.w}): {shape.processors} processors, {net.num_stages} stages, "
          f"{int(net.switches.sum())} switches; opened view built in {time.perf_counter() - start:.2f} s")
    n = shape.processors
    rows = np.arange(n)
    for name, make, expected in (
            ("LLS", ft.lls_routes, lambda: (rows[:, None] + rows[None, :]) % n),
            ("CLS", ft.xor_routes, lambda: rows[:, None] ^ rows[None, :])):
        start = time.perf_counter()
        check = ft.route_square(shape, make, rows, chunk=args.chunk)
        elapsed = time.perf_counter() - start
        equal = bool(np.array_equal(check.perms, expected()))
        print(f"{name}: {len(rows)} permutations x {check.passes} pass(es), Latin square: "
              f"{'yes' if check.latin_square else 'no'}, equals the {name}: {'yes' if equal else 'no'}, "
              f"conflicts: {check.conflicts}, dropped: {check.dropped}; {elapsed:.2f} s, "
              f"{check.circuits / elapsed / 1e6:.2f} M circuits/s "
              f"end to end (configurations built, traced, checked)")
        routes = make(shape, rows[:512], ())
        start = time.perf_counter()
        trace_many(net, routes)
        elapsed = time.perf_counter() - start
        print(f"    tracing alone: 512 configurations in {elapsed:.2f} s, "
              f"{512 * n / elapsed / 1e6:.2f} M circuits/s ({512 * n * net.num_stages / elapsed / 1e6:.1f} M switch "
              f"traversals/s)")


if __name__ == "__main__":
    main()
