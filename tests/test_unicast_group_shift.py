"""The adversarial group-shift traffic pattern on Dragonfly and Galaxyfly (docs/unicast.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import topocast as tc
from topocast.algorithms import unicast_traffic as ut
from topocast.api import run

GROUP_SPECS = ["dragonfly:g=5,a=3", "dragonfly:g=2,a=4", "galaxyfly:n=3,q=5,a=4", "galaxyfly:n=2,q=3,a=2",
               "galaxyfly:n=4,q=1,a=3"]


def _group_size(t) -> int:
    return int(t.meta["routers_per_supernode"])


@pytest.mark.parametrize("spec", GROUP_SPECS)
def test_every_destination_is_in_the_next_group(spec):
    t = tc.build(spec)
    a = _group_size(t)
    groups = t.num_nodes // a
    src = np.repeat(np.arange(t.num_nodes), 50)
    dst = ut.draw("group-shift", t, src, np.random.default_rng(3))
    assert np.array_equal(dst // a, (src // a + 1) % groups)
    assert not np.any(dst == src)
    assert dst.min() >= 0 and dst.max() < t.num_nodes


def test_destinations_are_uniform_in_the_next_group():
    """Each router of the next group is drawn with frequency 1/a, within 5 binomial sigmas, for every source."""
    t = tc.build("galaxyfly:n=3,q=5,a=4")
    a, draws = 4, 4000
    for source in (0, 17, 59):  # first router, a middle one, the last group (wraps to group 0)
        dst = ut.draw("group-shift", t, np.full(draws, source), np.random.default_rng(source + 1))
        first = ((source // a + 1) % 15) * a
        counts = np.bincount(dst - first, minlength=a)
        assert len(counts) == a
        sigma = math.sqrt(draws * (1 / a) * (1 - 1 / a))
        assert np.all(np.abs(counts - draws / a) < 5 * sigma), counts


def test_law_matches_the_draws_and_sums_to_one():
    t = tc.build("dragonfly:g=4,a=3")
    src, dst, w, dense = ut.pattern_law("group-shift", t)
    assert dense == 0.0
    assert np.allclose(np.bincount(src, weights=w, minlength=t.num_nodes), 1.0)
    assert np.array_equal(dst // 3, (src // 3 + 1) % 4)
    law = {(int(s), int(d)): float(x) for s, d, x in zip(src, dst, w, strict=True)}
    draws = 3000
    sent = np.repeat(np.arange(t.num_nodes), draws)
    got = ut.draw("group-shift", t, sent, np.random.default_rng(5))
    pairs, counts = np.unique(np.stack([sent, got]), axis=1, return_counts=True)
    assert {(int(s), int(d)) for s, d in pairs.T} == set(law)
    for (s, d), c in zip(pairs.T, counts, strict=True):
        assert abs(c / draws - law[int(s), int(d)]) < 5 * math.sqrt(law[int(s), int(d)] / draws)


def test_draws_are_deterministic_per_seed():
    t = tc.build("galaxyfly:n=3,q=5,a=4")
    src = np.arange(t.num_nodes).repeat(20)
    a, b, c = (ut.draw("group-shift", t, src, np.random.default_rng(s)) for s in (4, 4, 5))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    r1, r2 = (run("dragonfly:g=4,a=3", "unicast", seed=7, traffic="group-shift", load=0.05, cycles=600)
              for _ in range(2))
    assert r1.metrics["mean_latency"] == r2.metrics["mean_latency"]


@pytest.mark.parametrize("spec", ["mesh:4x4", "ring:8", "hypercube:3", "galaxy:n=3,q=5", "complete:6",
                                  "dragonfly:g=1,a=4"])
def test_refused_without_groups(spec):
    with pytest.raises(tc.TopocastError, match="parameter 'traffic' group-shift") as err:
        run(spec, "unicast", traffic="group-shift", load=0.05, cycles=500)
    assert "\n" not in str(err.value)
    rule = "at least 2 groups" if spec.startswith("dragonfly") else "needs a network of groups"
    assert rule in str(err.value)
    t = tc.build(spec)
    with pytest.raises(tc.TopocastError, match="traffic"):
        ut.pattern_law("group-shift", t)


@pytest.mark.parametrize(("g", "a"), [(2, 3), (4, 3), (6, 2), (5, 5)])
def test_minimal_bound_on_a_dragonfly_is_one_over_a(g, a):
    """One global link joins two groups: all a routers of a group cross it, so the channel-load bound is 1/a."""
    r = run(f"dragonfly:g={g},a={a}", "unicast", traffic="group-shift", load=0.02, cycles=800)
    assert r.verified
    assert r.metrics["throughput_bound"] == pytest.approx(1.0 / a)
