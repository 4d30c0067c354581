"""The two calls most users need: :func:`info` and :func:`run`."""

from __future__ import annotations

from typing import Any

from . import registry
from .errors import TopocastError
from .topology.core import Topology


def info(spec: str | Topology, distances: bool = True, max_memory: float | None = None) -> dict:
    """Nodes, links, degree, diameter, average distance and distance distribution."""
    from .spec import build
    from .topology.metrics import summary

    topology = spec if isinstance(spec, Topology) else build(spec, max_memory=max_memory)
    return summary(topology, distances=distances)


def _defaults(family: registry.Family) -> dict[str, Any]:
    return {p.name: p.default for p in family.params if not p.required}


def resolve_params(alg: registry.Algorithm, given: dict[str, Any], from_text: bool = False) -> dict[str, Any]:
    """Check ``given`` against the algorithm's schema and fill defaults."""
    out: dict[str, Any] = {}
    for key, value in given.items():
        param = alg.param(key)
        out[key] = param.parse(str(value), f"algorithm {alg.name}") if from_text else param.check(value, f"algorithm {alg.name}")
    for p in alg.params:
        if p.name not in out:
            if p.required:
                raise TopocastError(f"algorithm {alg.name}: parameter '{p.name}' is required ({p.doc})")
            out[p.name] = p.default
    return out


def run(spec: str | Topology, algorithm: str, engine: str | None = None, seed: int = 0,
        max_memory: float | None = None, params_from_text: bool = False, **params: Any):
    """Build (if needed), run ``algorithm``, verify, and return a :class:`RunResult`.

    >>> import topocast as tc
    >>> tc.run("hypercube:3", "allgather-recursive-doubling").metrics["steps"]
    3
    """
    from .spec import build, parse_spec
    from .topology.core import UnbuiltTopology

    alg = registry.algorithm(algorithm)
    engine = engine or alg.engines[0]
    if engine not in alg.engines:
        raise TopocastError(f"engine: algorithm {alg.name} runs on {', '.join(alg.engines)}, not '{engine}'")
    if isinstance(spec, Topology):
        topology = spec
    elif engine in alg.unbuilt_engines:
        fam, kwargs = parse_spec(spec)
        nodes = fam.estimate(**kwargs)[0] if fam.estimate else None
        merged = {**_defaults(fam), **kwargs}
        topology = UnbuiltTopology(fam.name, {p.name: merged[p.name] for p in fam.params if p.name in merged}, nodes)
    else:
        topology = build(spec, max_memory=max_memory)
    if alg.families and topology.family not in alg.families:
        raise TopocastError(
            f"algorithm {alg.name}: runs on {', '.join(alg.families)}, not on family '{topology.family}'")
    kwargs = resolve_params(alg, params, from_text=params_from_text)
    return alg.run(topology, engine=engine, seed=seed, max_memory=max_memory, **kwargs)
