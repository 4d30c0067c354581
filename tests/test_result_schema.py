"""Every registered algorithm, on a small network of every family it runs on and on every engine it
offers, prints JSON that validates against the shipped schema; and no two keys of one output carry
the same number on every run (a metric under two names)."""

from __future__ import annotations

import itertools
import json
from functools import cache
from importlib import resources

import pytest

import topocast as tc
from small_networks import SMALL
from topocast import registry

jsonschema = pytest.importorskip("jsonschema")

#: a second, different network per family, for the duplicate-key check
OTHER = {"ring": "ring:9", "mesh": "mesh:3x5", "torus": "torus:5x4", "hypercube": "hypercube:4",
         "ej": "ej:a=2,b=3,n=1", "galaxyfly": "galaxyfly:n=3,q=5,a=4", "dragonfly": "dragonfly:g=5,a=4",
         "gft": "gft:h=2,m=4,w=2", "butterfly": "butterfly:n=4,d=2", "path": "path:7", "hdn": "hdn:base=3x3,k=1,s=1",
         "dualcube": "dualcube:4", "clos": "clos:n=3,m=5,r=3"}
#: parameters that keep load-driven runs short
QUICK = {"wormhole": {"cycles": 3000, "load": 0.002}}
SKIP_ENGINES = {"frontier"}


@cache
def schema() -> dict:
    text = resources.files("topocast").joinpath("schemas/run.schema.json").read_text()
    return json.loads(text)


#: networks an algorithm needs in place of the small ones (Swing: sides that are powers of two)
OWN_NETWORKS = {name: {"ring": "ring:8", "torus": "torus:4x4"} for name in ("allreduce-swing", "reduce-scatter-swing")}


#: the generic reductions' output is checked on a few families (tests/test_reductions.py runs them on the others)
REDUCTION_FAMILIES = ("ring", "torus", "hypercube", "galaxyfly", "complete")


def cases(specs: dict[str, str]):
    for alg in registry.algorithms():
        families = alg.families or tuple(sorted(specs))
        if alg.collective in ("allreduce", "reduce-scatter", "reduce") and not alg.families:
            families = tuple(f for f in REDUCTION_FAMILIES if f in specs)
        own = OWN_NETWORKS.get(alg.name, {})
        for family, engine in itertools.product(families, alg.engines):
            if family in specs:
                spec = own.get(family, specs[family])
                yield pytest.param(alg.name, spec, engine, id=f"{alg.name}-{family}-{engine}")


def run_json(name: str, spec: str, engine: str, destinations: int = 3) -> dict:
    alg = registry.algorithm(name)
    params = {k: v for k, v in QUICK.get(engine, {}).items() if any(p.name == k for p in alg.params)}
    if any(p.name == "destinations" for p in alg.params):
        params["destinations"] = destinations
    return tc.run(spec, name, engine=engine, seed=1, **params).to_json()


@pytest.mark.parametrize(("name", "spec", "engine"), list(cases(SMALL)))
def test_output_follows_schema(name, spec, engine):
    data = run_json(name, spec, engine)
    jsonschema.validate(data, schema())
    assert data["verified"] == (data["complete"] and data["exactly_once"] and data["first_violation"] is None)
    assert data["seed"] == 1 and data["engine"] == engine
    alg = registry.algorithm(name)
    assert set(data["params"]) == {p.name for p in alg.params}
    assert data["collective"] == alg.collective
    for key in data["units"]:
        assert key in data, f"unit given for a key that is not in the output: {key}"
    if data["lower_bound"] is not None and data["lower_bound"] > 0:
        assert data["lower_bound_ratio"] is not None and data["lower_bound_ratio"] >= 1 - 1e-9


def scalar_numbers(data: dict) -> dict[str, float]:
    return {k: v for k, v in data.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and k not in ("seed", "lower_bound_ratio")}


#: equal by a theorem on every run of some algorithm, not a metric under two names: an optimal
#: algorithm meets its lower bound, and HDN's Algorithm 2 takes exactly the steps Theorem 3 counts
ALLOWED_EQUAL = {frozenset(p) for p in [("steps", "lower_bound"), ("time", "lower_bound"),
                                        ("passes", "pass_lower_bound"), ("steps", "theorem3_bound")]}


def broken_runs() -> list[dict]:
    """Runs that fail verification (a transfer dropped from a verified schedule): the counts that
    coincide on a verified run (nodes and nodes complete, receipts and required receipts) differ here."""
    from topocast.algorithms.classic_allgather import grid_allgather

    t = tc.build("torus:4x4")
    full = grid_allgather(t)
    keep = slice(0, full.num_transfers - 3)
    broken = tc.Schedule(full.num_nodes, full.origin, full.src[keep], full.dst[keep],
                         full.range_ptr[:full.num_transfers - 2], full.range_first, full.range_count,
                         collective=full.collective, step=full.step[keep], message_bytes=full.message_bytes)
    runs = [tc.execute(t, broken, engine).to_json() for engine in ("step", "event")]
    overloaded = tc.run("mesh:4x4", "multicast-dp", destinations=5, load=0.3, cycles=1500, seed=2)
    return runs + [overloaded.to_json()]


def test_broken_schedule_is_reported():
    for data in broken_runs():
        jsonschema.validate(data, schema())
        assert not data["verified"] and not data["complete"] and data["missing_deliveries"] > 0
        assert data["first_violation"]
        if data["engine"] == "wormhole":
            assert data["in_flight_at_end"] > 0 and "did not drain" in data["first_violation"]


def test_no_metric_under_two_names():
    """Pooled per engine over every algorithm, two sizes and failing runs: no pair of keys is equal on
    every run where both appear (at least two such runs)."""
    pools: dict[str, list[dict]] = {}
    for specs, destinations in ((SMALL, 3), (OTHER, 8)):
        for param in cases(specs):
            name, spec, engine = param.values
            if engine not in SKIP_ENGINES:
                pools.setdefault(engine, []).append(run_json(name, spec, engine, destinations))
    varied = tc.run("mesh:8x8", "multicast-cp", destinations=12, spread=8, load=0.002, cycles=3000, seed=3)
    for data in broken_runs() + [varied.to_json()]:
        pools[data["engine"]].append(data)
    for engine, runs in pools.items():
        numbers = [scalar_numbers(r) for r in runs]
        keys = set().union(*numbers)
        for a, b in itertools.combinations(sorted(keys), 2):
            both = [n for n in numbers if a in n and b in n]
            if frozenset((a, b)) in ALLOWED_EQUAL or len(both) < 2:
                continue
            same = all(n[a] == n[b] for n in both)
            assert not (same and any(n[a] != 0 for n in both)), f"{engine}: '{a}' and '{b}' equal on every run"
