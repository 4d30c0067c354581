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
    """Check ``given`` against the algorithm's schema (aliases converted) and fill defaults."""
    owner = f"algorithm {alg.name}"
    out: dict[str, Any] = {}
    for key, value in given.items():
        if key in alg.param_aliases:
            target, convert = alg.param_aliases[key]
            param = alg.param(target)
            raw = registry.Param(key, param.kind, doc=param.doc, minimum=param.minimum)
            parsed = raw.parse(str(value), owner) if from_text else raw.check(value, owner)
            key, value, from_alias = target, convert(parsed), True
        else:
            param, from_alias = alg.param(key), False
        if key in out:
            raise TopocastError(f"{owner}: parameter '{key}' given twice (directly and through an alias)")
        if from_alias:
            out[key] = param.check(value, owner)
        else:
            out[key] = param.parse(str(value), owner) if from_text else param.check(value, owner)
    for p in alg.params:
        if p.name not in out:
            if p.required:
                raise TopocastError(f"{owner}: parameter '{p.name}' is required ({p.doc})")
            out[p.name] = p.default
    return out


def plan(topology: Topology, alg: registry.Algorithm, params: dict[str, Any], engine: str, seed: int,
         max_memory: float | None = None):
    """The algorithm's plan for ``topology`` from resolved ``params`` (plus ``seed``, ``engine`` and
    ``max_memory`` where the plan function names them)."""
    import inspect

    kwargs = {k: v for k, v in params.items() if k not in alg.model_params}
    accepted = inspect.signature(alg.plan).parameters
    for name, value in (("seed", seed), ("engine", engine), ("max_memory", max_memory)):
        if name in accepted:
            kwargs[name] = value
    return alg.plan(topology, **kwargs)


def run(spec: str | Topology, algorithm: str, engine: str | None = None, seed: int = 0,
        max_memory: float | None = None, params_from_text: bool = False, **params: Any):
    """Build (if needed), plan ``algorithm``, execute, verify, and return a :class:`RunResult`.

    >>> import topocast as tc
    >>> tc.run("hypercube:3", "allgather-recursive-doubling").metrics["steps"]
    3
    """
    from .execute import execute
    from .sim.models import Model
    from .spec import build, parse_spec
    from .topology.core import UnbuiltTopology
    from .validate import integer

    seed = integer(seed, "seed", minimum=0, maximum=2**63 - 1)
    alg = registry.algorithm(algorithm)
    engine = engine or alg.engines[0]
    if engine not in alg.engines:
        raise TopocastError(f"engine: algorithm {alg.name} runs on {', '.join(alg.engines)}, not '{engine}'")
    kwargs = resolve_params(alg, params, from_text=params_from_text)
    if isinstance(spec, Topology):
        topology = spec
    elif engine in alg.unbuilt_engines:
        fam, fam_kwargs = parse_spec(spec)
        nodes = fam.estimate(**fam_kwargs)[0] if fam.estimate else None
        merged = {**_defaults(fam), **fam_kwargs}
        topology = UnbuiltTopology(fam.name, {p.name: merged[p.name] for p in fam.params if p.name in merged}, nodes)
    else:
        topology = build(spec, max_memory=max_memory)
    if alg.families and topology.family not in alg.families:
        raise TopocastError(
            f"algorithm {alg.name}: runs on {', '.join(alg.families)}, not on family '{topology.family}'")
    the_plan = plan(topology, alg, kwargs, engine, seed, max_memory)
    model = alg.model(kwargs) if alg.model else Model()
    ran_on = plan_engine(the_plan, engine)
    return execute(topology, the_plan, ran_on, model, algorithm=alg.name, seed=seed, params=kwargs,
                   max_bytes=max_memory)


def plan_engine(the_plan, engine: str) -> str:
    """The engine that runs ``the_plan``: the one asked for, unless the algorithm fell back to a
    frontier plan (it says so in the plan's notes)."""
    from .execute import adapter

    if isinstance(the_plan, adapter(engine).PLAN):
        return engine
    if engine != "frontier" and isinstance(the_plan, adapter("frontier").PLAN):
        return "frontier"
    return engine
