"""Benchmark: verify every LLS and every CLS permutation of GFT(3,8,8) (4,096 processors).

Run:  python benchmarks/fattree.py [--h 3 --m 8 --w 8] [--chunk 256] [--rls-n 12] [--no-gft] [--figures PATH]

For each scheme it builds the 4,096 configurations of the opened tree (7
stages of 512 switches 8 x 8), traces every circuit with the circuit engine
(numba, parallel over configurations), checks that no link is used twice and
that the rows form a Latin square equal to the scheme (i -> i + k, i -> i XOR
x), and prints the wall time and circuits traced per second.  Target: under
30 s per scheme on 2 cores.  Numba compilation is done (and timed) first.

Then the right Latin square on the Butterfly-Butterfly with ``2^rls-n`` lines
(default 4,096: 23 stages of 2,048 switches 2 x 2): all ``N`` configurations
set (destination tags), traced, compared with ``i -> i - k`` and checked for
a Latin square.  ``--rls-n 0`` skips it, ``--no-gft`` skips the fat tree.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from figures import Figures, add_argument

from topocast.algorithms import butterfly_rls as rls
from topocast.algorithms import fattree_alltoall as ft
from topocast.experiments.traces import check_rls, route_square
from topocast.sim.circuit import trace_many
from topocast.topology.fattree import GFTShape


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--h", type=int, default=3)
    parser.add_argument("--m", type=int, default=8)
    parser.add_argument("--w", type=int, default=8)
    parser.add_argument("--chunk", type=int, default=256)
    parser.add_argument("--rls-n", type=int, default=12, help="log2 of the Butterfly-Butterfly's lines (0: skip)")
    parser.add_argument("--no-gft", action="store_true", help="skip the fat-tree schemes")
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("fattree")

    start = time.perf_counter()
    small = GFTShape(2, 2, 2)
    trace_many(small.network, ft.lls_routes(small, np.arange(8)))
    print(f"numba warm-up (compile or cache load): {time.perf_counter() - start:.2f} s")
    figures.add("numba warm-up (compile or cache load)", time.perf_counter() - start, "s")

    if not args.no_gft:
        gft_schemes(args, figures)
    if args.rls_n:
        butterfly_rls(args.rls_n, args.chunk, figures)
    figures.write(args.figures)


def gft_schemes(args, figures: Figures) -> None:
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
        check = route_square(shape, make, rows, chunk=args.chunk)
        elapsed = time.perf_counter() - start
        equal = bool(np.array_equal(check.perms, expected()))
        print(f"{name}: {len(rows)} permutations x {check.passes} pass(es), Latin square: "
              f"{'yes' if check.latin_square else 'no'}, equals the {name}: {'yes' if equal else 'no'}, "
              f"conflicts: {check.conflicts}, dropped: {check.dropped}; {elapsed:.2f} s, "
              f"{check.circuits / elapsed / 1e6:.2f} M circuits/s "
              f"end to end (configurations built, traced, checked)")
        figures.add(f"{name} on GFT({args.h},{args.m},{args.w}), end to end", elapsed, "s", target=30.0)
        routes = make(shape, rows[:512], ())
        start = time.perf_counter()
        trace_many(net, routes)
        elapsed = time.perf_counter() - start
        print(f"    tracing alone: 512 configurations in {elapsed:.2f} s, "
              f"{512 * n / elapsed / 1e6:.2f} M circuits/s ({512 * n * net.num_stages / elapsed / 1e6:.1f} M switch "
              f"traversals/s)")
        figures.add(f"{name} tracing alone", 512 * n / elapsed, "circuits/s", better="higher")


def butterfly_rls(n: int, chunk: int, figures: Figures) -> None:
    start = time.perf_counter()
    check_rls(rls.rls_plan(3))
    print(f"RLS numba warm-up: {time.perf_counter() - start:.2f} s")
    plan = rls.rls_plan(n)
    net, lines = plan.network, plan.lines
    print(f"Butterfly-Butterfly, N = {lines}: {net.num_stages} stages of {int(net.switches[0])} switches 2 x 2")
    start = time.perf_counter()
    check = check_rls(plan, chunk=chunk)
    elapsed = time.perf_counter() - start
    print(f"RLS: {lines} permutations i -> i - k, Latin square: {'yes' if check.latin_square else 'no'}, "
          f"rows not the rotation: {check.wrong_rows}, conflicts: {check.conflicts}, dropped: {check.dropped}, "
          f"first stage straight: {'yes' if check.first_stage_straight else 'no'}; {elapsed:.2f} s, "
          f"{lines * lines / elapsed / 1e6:.2f} M circuits/s end to end")
    figures.add(f"RLS on the Butterfly-Butterfly, N = {lines}, end to end", elapsed, "s")
    ks = np.arange(min(chunk, lines))
    start = time.perf_counter()
    routes = rls.rls_routes(plan, ks)
    built = time.perf_counter() - start
    start = time.perf_counter()
    trace_many(net, routes)
    traced = time.perf_counter() - start
    print(f"    {len(ks)} configurations: set in {built:.2f} s ({len(ks) / built:.0f} configurations/s), "
          f"traced in {traced:.2f} s ({len(ks) * lines / traced / 1e6:.2f} M circuits/s, "
          f"{len(ks) * lines * net.num_stages / traced / 1e6:.1f} M switch traversals/s)")


if __name__ == "__main__":
    main()
