"""The compiled BFS kernels (:mod:`topocast.topology.kernels`) against scipy and networkx.

Random graphs, connected or not, with parallel links and loops; every
direction of each search forced (top-down / bottom-up, push / pull) besides
the automatic switch; serial builds and parallel builds, and the serial
build split into several parts as the parallel one runs it.  No timings.
"""

from __future__ import annotations

from collections import deque

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import shortest_path

import topocast as tc
from topocast.topology import kernels as K
from topocast.topology import metrics as M
from topocast.topology.core import Topology

DIRECTIONS = (K.AUTO, K.TOP_DOWN, K.BOTTOM_UP)


def random_graph(n: int, p: float, seed: int, doubled: float = 0.0, loops: int = 0) -> Topology:
    """A G(n, p) graph, not always connected; a share ``doubled`` of its links doubled, ``loops`` loops."""
    rng = np.random.default_rng(seed)
    g = nx.gnp_random_graph(n, p, seed=seed)
    u, v = (np.array(x, dtype=np.int64) for x in zip(*g.edges(), strict=True)) if g.number_of_edges() else \
        (np.zeros(0, np.int64), np.zeros(0, np.int64))
    twice = rng.random(len(u)) < doubled
    u, v = np.concatenate([u, u[twice]]), np.concatenate([v, v[twice]])
    ends = rng.integers(0, n, loops)
    src = np.concatenate([u, v, ends])
    dst = np.concatenate([v, u, ends])
    return Topology.from_arcs("graph", {}, n, src, dst)


def reference(t: Topology) -> np.ndarray:
    """All-pairs hop distances by scipy (int32, -1 unreachable)."""
    n = t.num_nodes
    csr = sp.csr_matrix((np.ones(t.num_arcs), t.indices, t.indptr), shape=(n, n))
    d = shortest_path(csr, unweighted=True, directed=True)
    return np.where(np.isinf(d), -1, d).astype(np.int32)


def fifo(t: Topology, seeds) -> list[int]:
    """The visit order of a plain FIFO BFS (neighbours in CSR order)."""
    seen = set()
    queue = deque()
    for s in seeds:
        if s not in seen:
            seen.add(s)
            queue.append(s)
    order = []
    while queue:
        u = queue.popleft()
        order.append(u)
        for v in t.neighbors(u).tolist():
            if v not in seen:
                seen.add(v)
                queue.append(v)
    return order


graphs = st.builds(random_graph, n=st.integers(1, 90), p=st.floats(0.0, 0.3), seed=st.integers(0, 10**6),
                   doubled=st.sampled_from([0.0, 0.3]), loops=st.integers(0, 3))


@settings(max_examples=40, deadline=None)
@given(t=graphs, data=st.data())
def test_search_equals_scipy_in_every_direction(t, data):
    expected = reference(t)
    n = t.num_nodes
    sources = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    want = expected[sources].copy()
    want[want < 0] = np.iinfo(np.int32).max
    want = want.min(axis=0)
    want[want == np.iinfo(np.int32).max] = -1
    for direction in DIRECTIONS:
        for search, chunks in ((K.search, 1), (K.search, 3), (K.search_parallel, 3)):
            dist = np.full(n, -1, np.int32)
            queue = np.empty(n, np.int64)
            count = search(t.indptr, M.csr(t)[1], np.array(sources, np.int64), dist, queue, direction, chunks)
            assert np.array_equal(dist, want), (direction, chunks)
            order = queue[:count]
            assert count == np.count_nonzero(want >= 0)
            assert np.array_equal(np.sort(order), np.flatnonzero(want >= 0))  # each reached node once
            assert np.all(np.diff(dist[order]) >= 0)                         # by distance
            if direction == K.TOP_DOWN:
                assert order.tolist() == fifo(t, sources)


def test_the_switch_goes_bottom_up_and_back():
    """A hypercube searched from node 0, with two paths of 20 nodes hanging from its far corner: the middle
    levels go bottom-up (each level's nodes in node order, not FIFO's), the first levels of the paths
    top-down again (FIFO order, which there is not node order)."""
    cube = tc.build("hypercube:10")
    one, two = [1023, 1024, *range(1100, 1119)], [1023, 1025, *range(1050, 1069)]
    u, v = np.array([*zip(one, one[1:], strict=False), *zip(two, two[1:], strict=False)]).T
    t = Topology.from_arcs("graph", {}, 1119, np.concatenate([cube.arc_sources, u, v]),
                           np.concatenate([cube.indices, v, u]))
    dist = np.full(t.num_nodes, -1, np.int32)
    queue = np.empty(t.num_nodes, np.int64)
    count = K.search(t.indptr, t.indices, np.zeros(1, np.int64), dist, queue, K.AUTO, 1)
    assert np.array_equal(dist, reference(t)[0])
    order, fifo_order = queue[:count], np.array(fifo(t, [0]))
    levels = [order[dist[order] == d] for d in range(31)]
    fifo_levels = [fifo_order[dist[fifo_order] == d] for d in range(31)]
    assert any(np.all(np.diff(levels[d]) > 0) and not np.array_equal(levels[d], fifo_levels[d])
               for d in range(3, 9))                                           # bottom-up in the middle
    assert levels[12].tolist() == fifo_levels[12].tolist() == [1100, 1050]   # top-down again on the paths


def test_fifo_search_touches_only_the_reached_nodes_and_keeps_labels_on_entry():
    t = tc.build("ring:10")
    dist = np.full(10, -1, np.int64)
    dist[[3, 7]] = 5  # labelled on entry: walls
    queue = np.empty(10, np.int64)
    count = K.bfs_from_set(t.indptr, t.indices, np.array([0], np.int64), dist, queue)
    assert count == 5 and queue[:count].tolist() == [0, 1, 9, 2, 8]
    assert dist.tolist() == [0, 1, 2, 5, -1, -1, -1, 5, 2, 1]
    for direction in DIRECTIONS:  # the other directions respect the walls too
        d = np.full(10, -1, np.int32)
        d[[3, 7]] = 5
        K.search(t.indptr, t.indices, np.array([0], np.int64), d, queue, direction, 1)
        assert d.tolist() == [0, 1, 2, 5, -1, -1, -1, 5, 2, 1]


@settings(max_examples=30, deadline=None)
@given(t=graphs, data=st.data())
def test_multi_source_equals_scipy_in_every_direction(t, data):
    expected = reference(t)
    n = t.num_nodes
    k = data.draw(st.sampled_from([1, 3, 64, 65, 140]))
    sources = np.array(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k)), np.int64)
    targets = np.array(data.draw(st.lists(st.lists(st.integers(0, n - 1), min_size=3, max_size=3),
                                          min_size=k, max_size=k)), np.int64)
    rows = expected[sources]
    connected = np.all(rows >= 0, axis=1)
    hist_len = n + 1
    want_hist = np.array([np.bincount(r, minlength=hist_len)[:hist_len] if ok else np.zeros(hist_len, np.int64)
                          for r, ok in zip(rows, connected, strict=True)])
    for direction in DIRECTIONS:
        for chunks in (1, 3):
            ecc, hist, tdist = K.multi_source(t.indptr, t.indices, sources, hist_len, targets, direction, chunks)
            assert np.array_equal(ecc, np.where(connected, rows.max(axis=1), -1))
            assert np.array_equal(hist, want_hist)
            assert np.array_equal(tdist, np.take_along_axis(rows, targets, axis=1))
        assert np.array_equal(K.multi_source(t.indptr, t.indices, sources, direction=direction)[0], ecc)


@pytest.mark.parametrize("spec", ["torus:6x7x5", "hypercube:8", "ccc:5", "path:200"])
def test_multi_source_serial_parallel_and_shared_passes_agree(spec):
    t = tc.build(spec)
    expected = reference(t)
    sources = np.arange(t.num_nodes, dtype=np.int64)
    hist_len = int(expected.max()) + 1
    want = np.array([np.bincount(r, minlength=hist_len) for r in expected])
    for chunks in (1, 4):  # 4: the parallel builds (passes shared between threads when there are enough)
        for some in (sources[:64], sources):
            ecc, hist, _ = K.multi_source(t.indptr, t.indices, some, hist_len, chunks=chunks)
            assert np.array_equal(ecc, expected[some].max(axis=1))
            assert np.array_equal(hist, want[some])


def test_distance_rows_and_matrix_equal_scipy():
    for spec in ["torus:4x5x6", "hypercube:6"]:
        t = tc.build(spec)
        expected = reference(t)
        assert np.array_equal(K.distance_rows(t.indptr, t.indices, np.arange(t.num_nodes)), expected)
        assert np.array_equal(M.all_distances(t), expected)
    t = random_graph(60, 0.03, 5, doubled=0.3)  # not connected
    assert np.array_equal(K.distance_rows(t.indptr, t.indices, np.arange(60)), reference(t))


def test_distances_of_large_graphs_run_the_parallel_build(monkeypatch):
    monkeypatch.setattr(K, "PARALLEL_NODES", 100)
    t = tc.build("hypercube:10")
    assert K.chunks_for(t.num_nodes) > 1
    for direction in DIRECTIONS:
        assert np.array_equal(K.distances(t.indptr, t.indices, 5, direction), reference(t)[5])


def test_compact_indices_and_bad_sources():
    t = tc.build("ring:5")
    assert K.compact_indices(t.indices, t.num_nodes).dtype == np.int32
    assert M.csr(t)[1] is M.csr(t)[1]  # made once per topology
    with pytest.raises(ValueError, match="sources must be nodes"):
        K.multi_source(t.indptr, t.indices, [5])
