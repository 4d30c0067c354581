"""Exact diameter of torus:100x100x100 (1,000,000 nodes) and one BFS, against networkx.

Run: python benchmarks/bfs.py [--dims 100x100x100] [--figures PATH]
Target (issue 2): diameter under 2 s, BFS at least 10x faster than networkx's single-source BFS.
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
from figures import Figures, add_argument

import topocast as tc
from topocast.topology.metrics import bfs_distances, diameter, warm_kernels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dims", default="100x100x100")
    add_argument(parser)
    args = parser.parse_args()
    spec = f"torus:{args.dims}"

    t0 = time.perf_counter()
    topology = tc.build(spec)
    build_s = time.perf_counter() - t0
    warm_kernels()  # compile (or load) the BFS kernels outside the timings

    t0 = time.perf_counter()
    dist = bfs_distances(topology, 0)
    bfs_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    diam = diameter(topology)
    diam_s = time.perf_counter() - t0

    graph = topology.to_networkx()
    t0 = time.perf_counter()
    lengths = nx.single_source_shortest_path_length(graph, 0)
    nx_s = time.perf_counter() - t0
    assert max(lengths.values()) == int(dist.max())

    print(f"topology            {spec}: {topology.num_nodes:,} nodes, {topology.num_edges:,} links")
    print(f"build               {build_s:.3f} s")
    print(f"BFS from node 0     {bfs_s:.3f} s  (eccentricity {int(dist.max())})")
    print(f"exact diameter      {diam_s:.3f} s  (= {diam}; vertex-transitive, one BFS + distribution)")
    print(f"networkx BFS        {nx_s:.3f} s")
    print(f"speed-up vs networkx {nx_s / bfs_s:.1f}x")
    figures = Figures("bfs")
    figures.add(f"build {spec}", build_s, "s")
    figures.add(f"BFS from one node, {spec}", bfs_s, "s")
    figures.add(f"exact diameter, {spec}", diam_s, "s", target=2.0)
    figures.add(f"networkx BFS, {spec}", nx_s, "s")
    figures.add("BFS speed-up vs networkx", nx_s / bfs_s, "x", target=10, better="higher")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
