"""Cube-connected cycles CCC(n): definition, degree 3, diameter against the formula."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.topology.ccc import ccc_diameter_formula, cube_connected_cycles
from topocast.topology.metrics import eccentricity


@pytest.mark.parametrize("n", [3, 4, 5])
def test_equals_definition(n):
    t = cube_connected_cycles(n)
    ref = nx.Graph()
    for x in range(2 ** n):
        for i in range(n):
            ref.add_edge((x, i), (x, (i + 1) % n))
            ref.add_edge((x, i), (x ^ (1 << i), i))
    ours = {frozenset((t.label(int(u)), t.label(int(v)))) for u, v in zip(t.arc_sources, t.indices, strict=False)}
    assert ours == {frozenset(e) for e in ref.edges()}
    assert set(t.port_degree.tolist()) == {3}


# diameters: 2n + floor(n/2) - 2 for n >= 4 (Fris, Havel and Liebl 1997), 6 for n = 3; networkx checks n <= 5
@pytest.mark.parametrize("n, diam", [(3, 6), (4, 8), (5, 10), (6, 13), (7, 15), (8, 18)])
def test_diameter_and_symmetry(n, diam):
    t = tc.build(f"ccc:{n}")
    ecc = eccentricity(t)
    assert ecc.min() == ecc.max() == diam
    assert diam == (2 * n + n // 2 - 2 if n >= 4 else 6)
    if n <= 5:
        assert nx.diameter(t.to_networkx()) == diam
    assert t.num_nodes == n * 2 ** n
    if n >= 4:
        assert ccc_diameter_formula(n) == diam
    else:
        assert ccc_diameter_formula(n) == diam - 1


def test_bad_n():
    for spec in ("ccc:2", "ccc:25"):
        with pytest.raises(tc.TopocastError, match="'n'"):
            tc.build(spec)
    assert np.all(tc.build("ccc:4").distinct_degree == 3)
