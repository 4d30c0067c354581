"""Distance metrics over a family's orbits equal the all-sources computation."""

import numpy as np
import pytest

import topocast as tc
from topocast.topology.metrics import distance_distribution, orbits


@pytest.mark.parametrize("spec", ["hdn:base=2x3x5,k=1,s=6", "hdn:base=2x3x5,k=1,s=2x3", "rdn:base=Q3,k=1",
                                  "dualcube:3", "hdn:base=K3xC4,k=1,s=3"])
def test_orbit_distribution_equals_all_sources(spec):
    t = tc.build(spec)
    reps, sizes = orbits(t)
    assert sizes.sum() == t.num_nodes and len(reps) < t.num_nodes
    assert np.array_equal(distance_distribution(t), distance_distribution(t, exact_all_sources=True))


def test_families_without_a_hook_use_every_node():
    reps, sizes = orbits(tc.build("mesh:3x4"))
    assert len(reps) == 12 and sizes.max() == 1
