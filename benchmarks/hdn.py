"""Hierarchical dual-net speed figures (issue 4).

    python benchmarks/hdn.py            # everything (about 2 minutes, < 3 GB for the big build)
    python benchmarks/hdn.py --no-nx    # skip the networkx comparison
    python benchmarks/hdn.py --figures PATH   # also write the figures as JSON rows

1. Build HDN(B,2,(1,1)), B = 2x3x5 torus (6,480,000 nodes, degree 8), and run
   one exact BFS: wall time and peak resident memory of this process so far.
2. networkx doing the same BFS: measured on HDN(B,2,(5,2)) and HDN(B,2,(2,2))
   (129,600 and 810,000 nodes) and projected linearly in links to 6,480,000
   nodes (a networkx graph of that size needs far more memory than the machine
   has to spare); the ratio to ours.
3. Algorithm 1 on 1,000,000 random pairs of HDN(B,2,(2,2)) (810,000 nodes):
   explicit paths (every hop then checked to be a link) and lengths only.
4. Extras: the exact diameter of the non-vertex-transitive HDN(B,2,(1,2))
   (3,240,000 nodes) through orbits, and the one-port broadcast of
   HDN(B,2,(1,1)) on the step engine.
"""

from __future__ import annotations

import argparse
import gc
import resource
import time

import numpy as np
from figures import Figures, add_argument

import topocast as tc
from topocast.algorithms.hdn_routing import hops_are_links, path_hops, route_lengths, route_paths
from topocast.topology.hdn_symmetry import symmetry_and_diameter
from topocast.topology.metrics import bfs_distances, warm_kernels


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def networkx_bfs_seconds(spec: str) -> tuple[int, int, float]:
    import networkx as nx

    t = tc.build(spec)
    src, dst = t.arc_sources, t.indices
    keep = src < dst
    graph = nx.Graph()
    graph.add_nodes_from(range(t.num_nodes))
    graph.add_edges_from(zip(src[keep].tolist(), dst[keep].tolist(), strict=False))
    links = t.num_edges
    del t, src, dst, keep
    start = time.perf_counter()
    dist = nx.single_source_shortest_path_length(graph, 0)
    elapsed = time.perf_counter() - start
    assert len(dist) == graph.number_of_nodes()
    return graph.number_of_nodes(), links, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-nx", action="store_true", help="skip the networkx comparison")
    parser.add_argument("--pairs", type=int, default=1_000_000)
    add_argument(parser)
    args = parser.parse_args()
    figures = Figures("hdn")

    # warm the numba cache on a tiny graph so the timings below are steady-state
    warm_kernels()

    print("== 1. HDN(B,2,(1,1)): build and one exact BFS")
    start = time.perf_counter()
    big = tc.build("hdn:base=2x3x5,k=2,s=1/1")
    built = time.perf_counter()
    dist = bfs_distances(big, 0)
    done = time.perf_counter()
    ours_bfs = done - built
    print(f"nodes {big.num_nodes:,}  links {big.num_edges:,}  degree {int(big.port_degree.max())}  "
          f"eccentricity of node 0: {int(dist.max())} (Theorem 1: {big.meta['theorem1_diameter']})")
    print(f"build {built - start:.2f} s  BFS {ours_bfs:.2f} s  total {done - start:.2f} s  "
          f"peak RSS {peak_gib():.2f} GiB")
    figures.add("HDN(B,2,(1,1)) build", built - start, "s")
    figures.add("HDN(B,2,(1,1)) one exact BFS", ours_bfs, "s")

    if not args.no_nx:
        print("== 2. networkx single_source_shortest_path_length on the same kind of graph")
        rows = []
        for spec in ("hdn:base=2x3x5,k=2,s=5/2", "hdn:base=2x3x5,k=2,s=2/2"):
            nodes, links, seconds = networkx_bfs_seconds(spec)
            gc.collect()
            rows.append((links, seconds))
            print(f"{spec}: {nodes:,} nodes, {links:,} links, networkx BFS {seconds:.2f} s")
        per_link = rows[-1][1] / rows[-1][0]
        projected = per_link * big.num_edges
        print(f"networkx projected for {big.num_nodes:,} nodes: {projected:.1f} s "
              f"(linear in links from the 810,000-node run); ratio networkx / ours = {projected / ours_bfs:.0f}x")
        figures.add("BFS speed-up vs networkx (projected)", projected / ours_bfs, "x", better="higher")
    del big, dist
    gc.collect()

    print(f"== 3. Algorithm 1 on {args.pairs:,} random pairs of HDN(B,2,(2,2))")
    t = tc.build("hdn:base=2x3x5,k=2,s=2/2")
    layout = t.codec.layout
    rng = np.random.default_rng(0)
    u = rng.integers(0, t.num_nodes, args.pairs)
    v = rng.integers(0, t.num_nodes, args.pairs)
    chunk = 200_000
    start = time.perf_counter()
    longest, total = 0, 0
    checks = 0.0
    for lo in range(0, args.pairs, chunk):
        paths = route_paths(layout, u[lo:lo + chunk], v[lo:lo + chunk])
        lengths, hs, hd = path_hops(paths)
        c0 = time.perf_counter()
        assert hops_are_links(t, hs, hd).all() and np.array_equal(paths[:, -1], v[lo:lo + chunk])
        checks += time.perf_counter() - c0
        longest, total = max(longest, int(lengths.max())), total + int(lengths.sum())
    elapsed = time.perf_counter() - start - checks
    print(f"explicit paths: {elapsed:.2f} s, {args.pairs / elapsed:,.0f} pairs/s "
          f"(hop check {checks:.2f} s extra); max {longest} hops (Theorem 2: 19), mean {total / args.pairs:.3f}")
    figures.add("Algorithm 1, explicit paths", args.pairs / elapsed, "pairs/s", better="higher")
    start = time.perf_counter()
    lengths = route_lengths(layout, u, v)
    elapsed = time.perf_counter() - start
    print(f"lengths only: {elapsed:.2f} s, {args.pairs / elapsed:,.0f} pairs/s")
    figures.add("Algorithm 1, lengths only", args.pairs / elapsed, "pairs/s", better="higher")
    del t, paths, lengths
    gc.collect()

    print("== 4. extras")
    start = time.perf_counter()
    t = tc.build("hdn:base=2x3x5,k=2,s=1/2")
    sym = symmetry_and_diameter(t)
    print(f"HDN(B,2,(1,2)), {t.num_nodes:,} nodes: exact diameter {sym['diameter']} (radius {sym['radius']}, "
          f"{sym['orbits']} orbits, {sym['bfs_runs']} BFS) in {time.perf_counter() - start:.1f} s")
    del t
    gc.collect()
    start = time.perf_counter()
    result = tc.run("hdn:base=2x3x5,k=2,s=1/1", "hdn-broadcast", root=0)
    m = result.metrics
    print(f"HDN_broadcast on HDN(B,2,(1,1)): {m['steps']} steps (Theorem 3: {m['theorem3_bound']}, lower bound "
          f"{m['lower_bound']}), exactly once: {m['exactly_once']}, "
          f"{time.perf_counter() - start:.1f} s including build; peak RSS {peak_gib():.2f} GiB")
    figures.add("HDN_broadcast on HDN(B,2,(1,1)) including build", time.perf_counter() - start, "s")
    figures.add("peak RSS", peak_gib(), "GiB")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
