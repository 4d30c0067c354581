"""BFS and eccentricity at memory speed: topocast against NetworKit, igraph and scipy, side by side in one sitting.

    python benchmarks/bfs.py                       # torus:100x100x100, random-regular:n=1000000,d=8, hypercube:20
    python benchmarks/bfs.py --graphs torus:80x80x80 random-regular:n=500000,d=8,seed=7 hypercube:19
    python benchmarks/bfs.py --rounds 5 --sources 64 [--networkx] [--quick] [--figures PATH]

Per graph, in rounds: each round runs every contender once, in an order
rotated from round to round, and prints the load average; the figures are
medians over the rounds (min-max beside them).

* Single-source BFS with distances, from node 0: topocast
  (``metrics.bfs_distances``: direction-optimising, on the topology's int32
  CSR copy, made once beforehand and timed apart), NetworKit
  (``distance.BFS(storePaths=False)``, ``run`` and ``getDistances``),
  igraph (``Graph.distances``, the faster of its two calls that give the
  distances), scipy (``csgraph.breadth_first_order``: the visit order, no
  distances) and, with ``--networkx``, networkx (one round).
* Eccentricity of ``--sources`` sources (node ids spaced evenly): topocast
  (``metrics.eccentricity``: bit-parallel, 64 sources a pass), NetworKit
  (``distance.Eccentricity.getValue`` per source), igraph
  (``Graph.eccentricity``).

Targets (issue 35, item 3): topocast at least 3x as fast as NetworKit and 2x
as fast as igraph in both.  Effective bandwidth: the bytes of the CSR arrays
the search takes (8 (N + 1) + 4 x arcs) over its time, against the machine's
memory bandwidth measured in the same sitting (a 256 MiB numpy copy, read and
write counted, and a read of it on one thread and on every thread, before
and after the rounds); a direction-optimising search skips arcs, so it may
go above it.  Every contender's distances and eccentricities are checked
against topocast's once per graph.  NetworKit and igraph are optional
(``pip install 'topocast[bench]'``): a missing one's columns are skipped.

``random-regular:n=N,d=D,seed=S`` is a graph of this benchmark (not a
topocast family): the union of D random perfect matchings of N nodes, one
redrawn in part wherever it repeats a link, so simple and D-regular.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time

import numba as nb
import numpy as np
from figures import Figures, add_argument

import topocast as tc
from topocast.topology.core import Topology
from topocast.topology.metrics import bfs_distances, csr, diameter, eccentricity, warm_kernels

GRAPHS = ("torus:100x100x100", "random-regular:n=1000000,d=8,seed=1", "hypercube:20")
QUICK = ("torus:20x20x20", "random-regular:n=10000,d=8,seed=1", "hypercube:12")
#: issue 35's targets: topocast's speed-up over each peer
TARGETS = {"NetworKit": 3.0, "igraph": 2.0}


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# -- graphs ---------------------------------------------------------------------------------------
def random_regular(n: int, d: int, seed: int) -> Topology:
    """A simple D-regular graph: D random perfect matchings of the N nodes (N even), redrawn in part while
    one repeats a link of another."""
    if n % 2 or not 0 < d < n:
        raise SystemExit(f"random-regular: n must be even and 0 < d < n, got n={n}, d={d}")
    rng = np.random.default_rng(seed)
    pairs = np.stack([rng.permutation(n).reshape(-1, 2) for _ in range(d)])  # (d, n/2, 2)
    while True:
        key = np.minimum(pairs[..., 0], pairs[..., 1]).ravel() * n + np.maximum(pairs[..., 0], pairs[..., 1]).ravel()
        order = np.argsort(key, kind="stable")
        repeated = order[1:][key[order[1:]] == key[order[:-1]]]
        if len(repeated) == 0:
            break
        for flat in repeated.tolist():  # swap partners with a random link of the same matching
            m, j = divmod(flat, n // 2)
            other = int(rng.integers(n // 2))
            pairs[m, j, 1], pairs[m, other, 1] = pairs[m, other, 1], pairs[m, j, 1]
    u, v = pairs[..., 0].ravel(), pairs[..., 1].ravel()
    src, dst = np.concatenate([u, v]), np.concatenate([v, u])
    order = np.argsort(src * n + dst)
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return Topology("graph", {"n": n, "d": d, "seed": seed}, indptr, dst[order], np.zeros(2 * len(u), np.int16),
                    ("link",), meta={"spec": f"random-regular:n={n},d={d},seed={seed}"})


def build(spec: str) -> Topology:
    if spec.startswith("random-regular:"):
        params = dict(item.split("=") for item in spec.split(":", 1)[1].split(","))
        return random_regular(int(params["n"]), int(params.get("d", 8)), int(params.get("seed", 1)))
    return tc.build(spec)


# -- the machine's memory bandwidth ---------------------------------------------------------------
@nb.njit(parallel=True)
def _read(a, tasks):
    """Sum of ``a`` (int64), ``tasks`` parts on the threads: a streaming read."""
    part = np.zeros(tasks, np.int64)
    n = len(a)
    for t in nb.prange(tasks):
        s0 = s1 = s2 = s3 = 0
        lo, hi = n * t // tasks, n * (t + 1) // tasks
        for i in range(lo, hi - 3, 4):
            s0 += a[i]
            s1 += a[i + 1]
            s2 += a[i + 2]
            s3 += a[i + 3]
        part[t] = s0 + s1 + s2 + s3
    return part.sum()


def bandwidth(rounds: int = 5) -> dict[str, float]:
    """GB/s of a 256 MiB copy (read + write counted) and of a read on one thread and on every thread."""
    a = np.ones(1 << 25, dtype=np.int64)
    b = np.empty_like(a)
    threads = nb.get_num_threads()
    _read(a[:64], 1)
    runs = {"copy": [], "read, 1 thread": [], f"read, {threads} threads": []}
    for _ in range(rounds):
        t0 = time.perf_counter()
        np.copyto(b, a)
        t1 = time.perf_counter()
        _read(a, 1)
        t2 = time.perf_counter()
        _read(a, 4 * threads)
        t3 = time.perf_counter()
        runs["copy"].append(2 * a.nbytes / (t1 - t0) / 1e9)
        runs["read, 1 thread"].append(a.nbytes / (t2 - t1) / 1e9)
        runs[f"read, {threads} threads"].append(a.nbytes / (t3 - t2) / 1e9)
    return {k: statistics.median(v) for k, v in runs.items()}


# -- the contenders ---------------------------------------------------------------------------------
def optional(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


class Peers:
    """The graph as each installed peer library holds it, and its calls."""

    def __init__(self, topology: Topology):
        n = topology.num_nodes
        src, dst = topology.arc_sources, topology.indices
        keep = src < dst
        self.nk, self.ig = optional("networkit"), optional("igraph")
        if self.nk is not None:
            self.nk.setNumberOfThreads(nb.get_num_threads())
            self.nk_graph = self.nk.graph.GraphFromCoo(
                (np.ones(int(keep.sum())), (src[keep].astype(np.uint64), dst[keep].astype(np.uint64))),
                n=n, weighted=False, directed=False)
        if self.ig is not None:
            self.ig_graph = self.ig.Graph(n=n, edges=np.column_stack([src[keep], dst[keep]]))
        import scipy.sparse as sp

        indptr, indices = csr(topology)
        self.scipy = sp.csr_matrix((np.ones(topology.num_arcs), indices, indptr.astype(np.int32)), shape=(n, n))

    def nk_bfs(self):
        search = self.nk.distance.BFS(self.nk_graph, 0, storePaths=False)
        search.run()
        return search.getDistances(asarray=True)

    def ig_bfs(self):
        return self.ig_graph.distances(source=[0])[0]

    def scipy_order(self):
        from scipy.sparse.csgraph import breadth_first_order

        return breadth_first_order(self.scipy, 0, directed=True, return_predecessors=False)

    def nk_ecc(self, sources):
        return [self.nk.distance.Eccentricity.getValue(self.nk_graph, int(s))[1] for s in sources]

    def ig_ecc(self, sources):
        return self.ig_graph.eccentricity(vertices=sources.tolist())


def check(topology, peers, dist, ecc, sources) -> None:
    """Every contender's answer equals topocast's (once per graph, before the rounds)."""
    assert len(peers.scipy_order()) == int(np.count_nonzero(dist >= 0))
    if peers.nk is not None:
        assert np.array_equal(np.asarray(peers.nk_bfs()).astype(np.int64), dist)
        assert np.array_equal(np.asarray(peers.nk_ecc(sources[:4]), dtype=np.int64), ecc[:4])
    if peers.ig is not None:
        assert np.array_equal(np.asarray(peers.ig_bfs(), dtype=np.int64), dist)
        assert np.array_equal(np.asarray(peers.ig_ecc(sources[:4]), dtype=np.int64), ecc[:4])


def rounds(contenders: dict, count: int) -> dict[str, list[float]]:
    """Every contender once per round, in an order rotated by one each round; seconds per run."""
    names = list(contenders)
    times = {name: [] for name in names}
    for r in range(count):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            t0 = time.perf_counter()
            contenders[name]()
            times[name].append(time.perf_counter() - t0)
        print(f"    round {r + 1}/{count}: load average {load()}", flush=True)
    return times


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s ({min(values):.3f}-{max(values):.3f})"


# -- one graph --------------------------------------------------------------------------------------
def measure(spec: str, args, bw: dict[str, float], figures: Figures) -> None:
    t0 = time.perf_counter()
    topology = build(spec)
    build_s = time.perf_counter() - t0
    n, arcs = topology.num_nodes, topology.num_arcs
    t0 = time.perf_counter()
    indptr, indices = csr(topology)
    copy_s = time.perf_counter() - t0
    csr_bytes = indptr.nbytes + indices.nbytes
    peers = Peers(topology)
    sources = (np.arange(args.sources, dtype=np.int64) * (n // args.sources)) % n
    print(f"\n{spec}: {n:,} nodes, {arcs:,} arcs; built in {build_s:.2f} s, int32 CSR copy {copy_s * 1e3:.0f} ms "
          f"({csr_bytes / 2**20:.0f} MiB); load average {load()}", flush=True)
    dist = bfs_distances(topology, 0).astype(np.int64)
    ecc = eccentricity(topology, sources)
    check(topology, peers, dist, ecc, sources)

    bfs = {"topocast": lambda: bfs_distances(topology, 0), "scipy (order only)": peers.scipy_order}
    ecc_runs = {"topocast": lambda: eccentricity(topology, sources)}
    if peers.nk is not None:
        bfs["NetworKit"] = peers.nk_bfs
        ecc_runs["NetworKit"] = lambda: peers.nk_ecc(sources)
    if peers.ig is not None:
        bfs["igraph"] = peers.ig_bfs
        ecc_runs["igraph"] = lambda: peers.ig_ecc(sources)
    print(f"  single-source BFS with distances, {args.rounds} rounds:", flush=True)
    bfs_times = rounds(bfs, args.rounds)
    print(f"  eccentricity of {len(sources)} sources, {args.rounds} rounds:", flush=True)
    ecc_times = rounds(ecc_runs, args.rounds)
    if args.networkx:
        graph = topology.to_networkx()
        import networkx as nx

        t0 = time.perf_counter()
        nx.single_source_shortest_path_length(graph, 0)
        bfs_times["networkx (1 run)"] = [time.perf_counter() - t0]
        del graph

    for what, times, unit_bytes in (("BFS", bfs_times, csr_bytes), (f"eccentricity x{len(sources)}", ecc_times, 0)):
        ours = statistics.median(times["topocast"])
        print(f"  {what}:")
        for name, values in times.items():
            ratio = statistics.median(values) / ours
            print(f"    {name:22s} {spread(values):34s} {'' if name == 'topocast' else f'{ratio:6.1f}x topocast'}")
            figures.add(f"{what}, {name}, {spec}", statistics.median(values), "s")
            if name in TARGETS:
                figures.add(f"{what}: speed-up over {name}, {spec}", ratio, "x", target=TARGETS[name],
                            better="higher")
        if unit_bytes:
            rate = unit_bytes / ours / 1e9
            print(f"    effective bandwidth    {rate:.1f} GB/s of CSR ({unit_bytes / 2**20:.0f} MiB in "
                  f"{ours * 1e3:.0f} ms) against {bw['read, 1 thread']:.1f} GB/s read on one thread, "
                  f"{max(bw.values()):.1f} GB/s at best")
            figures.add(f"BFS effective bandwidth (CSR bytes / time), {spec}", rate, "GB/s")
    if spec == args.graphs[0]:
        t0 = time.perf_counter()
        diam = diameter(topology)
        diam_s = time.perf_counter() - t0
        print(f"  exact diameter {diam} in {diam_s:.3f} s (vertex-transitive: one BFS and its distribution)")
        figures.add(f"exact diameter, {spec}", diam_s, "s", target=2.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graphs", nargs="+", default=None, help=f"specs (default: {' '.join(GRAPHS)})")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per graph; medians over them (default 5)")
    parser.add_argument("--sources", type=int, default=64, help="sources of the eccentricity (default 64)")
    parser.add_argument("--networkx", action="store_true", help="also time networkx's BFS once per graph")
    parser.add_argument("--quick", action="store_true", help=f"small graphs ({' '.join(QUICK)}), 2 rounds")
    add_argument(parser)
    args = parser.parse_args()
    if args.quick:
        args.graphs, args.rounds = args.graphs or list(QUICK), min(args.rounds, 2)
    args.graphs = args.graphs or list(GRAPHS)
    missing = [name for name in ("networkit", "igraph") if optional(name) is None]
    print(f"topocast BFS benchmark: {nb.get_num_threads()} threads, load average {load()}"
          + (f"; not installed, columns skipped: {', '.join(missing)}" if missing else ""), flush=True)
    warm_kernels()  # compile (or load) the BFS kernels outside the timings
    before = bandwidth()
    figures = Figures("bfs")
    start = time.perf_counter()
    for spec in args.graphs:
        measure(spec, args, before, figures)
    after = bandwidth()
    print("\nmemory bandwidth, GB/s (before / after the rounds): "
          + "; ".join(f"{k} {before[k]:.1f} / {after[k]:.1f}" for k in before))
    print(f"whole benchmark {time.perf_counter() - start:.0f} s; load average at the end {load()}")
    for key in before:
        figures.add(f"memory bandwidth, {key}", statistics.median([before[key], after[key]]), "GB/s")
    figures.write(args.figures)


if __name__ == "__main__":
    main()
