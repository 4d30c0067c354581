"""`topocast reproduce galaxyfly-vs-dragonfly`: the pairing, the exact route law, the saturation rule, the report."""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest

import topocast as tc
from topocast import registry
from topocast.algorithms.unicast_bounds import channel_loads
from topocast.experiments import group_networks as gn
from topocast.infra.progress import Progress
from topocast.sweep.points import measure_point

TINY = ["dragonfly:g=4,a=3", "galaxyfly:n=2,q=3,a=2"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("gvd")
    ev = gn.measure(True, Progress(enabled=False))
    report = gn.build_report(ev, out)
    return ev, report, out


# -- the networks -------------------------------------------------------------------------------
@pytest.mark.parametrize("quick_mode", [True, False])
def test_networks_have_equal_router_counts(quick_mode):
    nets = gn.networks(quick_mode)
    built = [tc.build(net.spec) for net in nets]
    assert len({t.num_nodes for t in built}) == 1
    n, q, a = gn.GALAXYFLY[quick_mode]
    assert built[0].num_nodes == n * q * a
    assert [t.family for t in built] == ["galaxyfly", "dragonfly", "dragonfly"]
    assert built[2].params["g"] == n and built[2].params["a"] == q * a  # Table 5's pairing


@pytest.mark.parametrize("routers", [60, 112])
def test_least_radix_dragonfly_against_every_built_dragonfly(routers):
    """Build every Dragonfly with this router count: none has busier routers than the chosen one's radix."""
    radix = {}
    for g in range(2, routers + 1):
        if routers % g == 0:
            t = tc.build(f"dragonfly:g={g},a={routers // g}")
            radix[g, routers // g] = int(np.diff(t.indptr).max())
            assert radix[g, routers // g] == gn.dragonfly_radix(g, routers // g)
    chosen = gn.least_radix_dragonfly(routers)
    assert radix[chosen] == min(radix.values())
    h = math.ceil((chosen[0] - 1) / chosen[1])
    ties = [k for k, v in radix.items() if v == radix[chosen]]
    assert all(abs(chosen[1] - 2 * h) <= abs(a - 2 * math.ceil((g - 1) / a)) for g, a in ties)


@pytest.mark.parametrize("nqa", gn.PAPER_GALAXYFLIES)
def test_galaxyfly_radix_closed_form(nqa):
    t = tc.build("galaxyfly:n={},q={},a={}".format(*nqa))
    assert int(np.diff(t.indptr).max()) == gn.galaxyfly_radix(*nqa)


# -- the exact route law against a brute force ----------------------------------------------------
def _walk(t, x: int, targets: set[int]) -> tuple[list[int], int]:
    """The engine's minimal rule in plain Python: BFS to the target set, then the lowest arc one hop closer."""
    dist = {v: 0 for v in targets}
    queue = deque(targets)
    while queue:
        u = queue.popleft()
        for v in t.indices[t.indptr[u]:t.indptr[u + 1]].tolist():
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    arcs = []
    while dist[x] > 0:
        e = next(e for e in range(t.indptr[x], t.indptr[x + 1]) if dist[int(t.indices[e])] == dist[x] - 1)
        arcs.append(e)
        x = int(t.indices[e])
    return arcs, x


def _brute_loads(t, routing: str, traffic: str) -> tuple[np.ndarray, float]:
    """Channel loads and mean hops by enumerating every (source, destination, intermediate group)."""
    n = t.num_nodes
    a = int(t.meta["routers_per_supernode"])
    groups = n // a
    gamma = np.zeros(t.num_arcs)
    hops = 0.0
    for x in range(n):
        if traffic == "uniform":
            law = [(d, 1.0 / (n - 1)) for d in range(n) if d != x]
        else:
            law = [(((x // a + 1) % groups) * a + i, 1.0 / a) for i in range(a)]
        for d, w in law:
            if routing == "minimal":
                ways = [(_walk(t, x, {d})[0], w)]
            else:
                mids = [g for g in range(groups) if g not in (x // a, d // a)]
                ways = []
                for g in mids:
                    first, turn = _walk(t, x, set(range(g * a, g * a + a)))
                    ways.append((first + _walk(t, turn, {d})[0], w / len(mids)))
                if not mids:
                    ways = [(_walk(t, x, {d})[0], w)]
            for arcs, p in ways:
                gamma[arcs] += p
                hops += p * len(arcs)
    return gamma, hops / n


@pytest.mark.parametrize("spec", TINY)
@pytest.mark.parametrize("routing", gn.ROUTINGS)
@pytest.mark.parametrize("traffic", gn.TRAFFICS)
def test_route_law_equals_brute_force(spec, routing, traffic):
    t = tc.build(spec)
    law = gn.law_routes(t, routing, traffic)
    gamma, mean_hops = _brute_loads(t, routing, traffic)
    assert np.allclose(law["gamma"], gamma)
    assert law["mean_hops"] == pytest.approx(mean_hops)
    assert law["bound"] == pytest.approx(1.0 / gamma.max())
    assert np.sum(law["gamma"]) == pytest.approx(t.num_nodes * law["mean_hops"])
    # the library's channel-load bound (what ``unicast`` reports as throughput_bound) gives the same loads
    assert np.allclose(channel_loads(t, routing, traffic), gamma)


def test_zero_load_latency_of_the_router():
    """8-flit messages in 8-flit buffers, no start-up or router delay: a lone message takes 8 + hops cycles."""
    hops = np.array([1, 2, 3, 5])
    weight = np.array([0.1, 0.2, 0.3, 0.4])
    assert gn.route_law_latency(hops, weight, gn.ROUTER) == pytest.approx(8 + np.dot(hops, weight))


# -- the saturation rule on a tiny instance ------------------------------------------------------------
@pytest.mark.parametrize("spec", TINY)
def test_minimal_group_shift_saturates_at_or_below_its_bound(spec):
    """Sweep past the brute-force channel-load bound: the knee's accepted load stays under it, and the run at
    twice the bound is past the knee and delivers well under what was offered."""
    t = tc.build(spec)
    gamma, _ = _brute_loads(t, "minimal", "group-shift")
    bound = 1.0 / gamma.max()
    law = gn.law_routes(t, "minimal", "group-shift")
    zero = gn.route_law_latency(law["hops"], law["weight"], gn.ROUTER)
    points = []
    for i, f in enumerate((0.3, 0.6, 0.9, 1.2, 2.0)):
        load = min(1.0, f * bound)
        runs = [gn.one_run(measure_point((spec, "unicast", dict(gn.ROUTER, routing="minimal", traffic="group-shift",
                                                                load=load, cycles=3000, batches=6), 10 * i + s)))
                for s in range(3)]
        points.append((load, gn.summarise(runs)))
    result = gn.knee(points, zero)
    assert result["reached"] and result["knee"] is not None
    assert result["throughput"] <= bound + result["ci"]
    top = points[-1][1]
    assert gn.past_knee(top, zero)
    assert top["accepted"] < 0.85 * points[-1][0]
    low = points[0][1]
    assert not gn.past_knee(low, zero) and abs(low["accepted"] - points[0][0]) < 0.1 * points[0][0]


def test_knee_rule_edges():
    def point(sat, lat=10.0, acc=0.1):
        return {"saturated_seeds": sat, "seeds": 4, "mean_latency": lat, "accepted": acc, "accepted_ci": 0.01}

    none = gn.knee([(0.1, point(0)), (0.2, point(1, acc=0.2))], 10.0)
    assert none["knee"] == 0.2 and not none["reached"] and none["first_saturated"] is None
    half = gn.knee([(0.1, point(0)), (0.2, point(2)), (0.3, point(4))], 10.0)
    assert half["knee"] == 0.1 and half["first_saturated"] == 0.2  # a tie of seeds counts as past the knee
    slow = gn.knee([(0.1, point(0)), (0.2, point(0, lat=31.0))], 10.0)
    assert slow["knee"] == 0.1  # mean latency above 3 x zero-load
    first = gn.knee([(0.1, point(3))], 10.0)
    assert first["knee"] is None and first["throughput"] == 0.0


# -- the quick report ----------------------------------------------------------------------------------
def test_quick_report_has_its_tables_claims_and_files(quick):
    _, report, out = quick
    assert report.name == gn.NAME
    assert report.table_keys() == ["networks", "saturation", "curves", "radix", "claims_by_reading"]
    saturation = report.tables[1]
    assert len(saturation.rows) == 3 * len(gn.ROUTINGS) * len(gn.TRAFFICS)
    assert len(report.claims) == 7
    assert all(c.evidence for c in report.claims)
    latency = report.claims[1]
    assert set(latency.readings) == {f"{p}, {r}" for p in gn.PAIRINGS for r in gn.FIXED}
    assert [p.name for p in report.figures] == [f"{gn.NAME}_latency.png"]  # images only: a CSV is no figure
    assert [p.name for p in report.files] == [f"{gn.NAME}_runs.csv"]
    assert all(p.exists() and p.stat().st_size > 0 for p in report.figures + report.files)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in report.figures)
    assert "VERIFICATION FAILED" not in " ".join(report.notes)
    assert registry.experiment(gn.NAME).run is gn.run


def test_quick_low_load_latency_is_close_to_zero_load(quick):
    ev = quick[0]
    for key, c in ev["curves"].items():
        low = c["low"]
        assert not low["saturated"], key
        assert c["zero_load"] * 0.97 <= low["mean_latency"] <= c["zero_load"] * 1.25, key
        assert low["zero_load_sampled"] == pytest.approx(c["zero_load"], rel=0.05), key
        assert low["verified"], key


def test_quick_saturation_stays_under_the_bound(quick):
    ev = quick[0]
    for key, c in ev["curves"].items():
        if key[1] == "ugal":
            assert c["bound"] is None      # no route law before the run
            continue
        assert c["knee"] is None or c["throughput"] <= c["bound"] + gn._slack(c), key
    claim = quick[1].claims[-2]
    assert claim.text.startswith("(model check)") and claim.confirmed


def test_quick_ugal_recovers_group_shift_on_the_least_radix_dragonfly(quick):
    """Kim et al. 2008: on a Dragonfly, group-shift defeats minimal routing and UGAL-L recovers it; UGAL's
    zero-load latency and hops are minimal's, and its loads reach past the better fixed routing's bound."""
    ev = quick[0]
    u, m, v = (ev["curves"]["DF", r, "group-shift"] for r in ("ugal", "minimal", "valiant"))
    assert u["throughput"] > 2 * m["throughput"]
    assert (u["zero_load"], u["mean_hops"]) == (m["zero_load"], m["mean_hops"])
    assert max(u["loads"]) >= min(1.0, max(m["bound"], v["bound"]))
    assert quick[1].claims[-1].text.startswith("UGAL-L follows the better fixed routing")


def test_quick_structural_claims(quick):
    ev, report, _ = quick
    assert report.claims[0].confirmed  # lower radix: a fact of the constructions
    info = ev["info"]
    assert info["GF"]["routers"] == info["DF"]["routers"] == info["DF5"]["routers"]
    assert info["GF"]["radix"] < info["DF"]["radix"] < info["DF5"]["radix"]
    assert info["GF"]["diameter"] == 5 and info["DF"]["diameter"] == 3 and info["DF5"]["diameter"] == 3
    # zero-load latency is exact, not sampled: the Dragonflies' shorter routes give the lower one
    for pairing in gn.PAIRINGS.values():
        assert ev["curves"][pairing, "minimal", "uniform"]["zero_load"] < ev["curves"]["GF", "minimal",
                                                                                      "uniform"]["zero_load"]
