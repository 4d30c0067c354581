"""Registered algorithms as synthesis candidates: a synthesis is never worse than what topocast already knows.

Every registered algorithm for the collective that runs on the network's family
(family algorithms and the generic ones) and on the synthesis engine is run
through the one run path (:func:`topocast.api.prepare`, :func:`topocast.api.plan`,
:func:`topocast.execution.execute.execute`) under the synthesis's own model: the model
parameters are passed by name, and an algorithm whose resolved model differs
(one that cannot take the model asked for) is skipped with a note.  A plan that
is not a :class:`~topocast.plans.schedule.Schedule` whose messages are the
collective's (in whole messages or equal chunks of them) is skipped the same way.
They run before the synthesiser's own search and whatever its budget (each
algorithm's own memory check still refuses what cannot fit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import registry
from ..errors import TopocastError
from ..execution.result import RunResult
from ..plans.schedule import Schedule
from ..sim.models import Model
from ..topology.core import Topology

#: the model parameters a candidate is given, by their canonical names
MODEL_KEYS = ("message_bytes", "startup", "per_byte", "per_hop", "per_byte_reduce")


@dataclass
class Known:
    """A registered algorithm's verified run: its schedule, result and chunks per message."""

    name: str
    schedule: Schedule
    result: RunResult
    chunks: int

    def measured(self, engine: str) -> float:
        value: float = self.result.metrics["time" if engine == "event" else "steps"]
        return value


def applicable(topology: Topology, collective: str, engine: str) -> list[registry.Algorithm]:
    """Registered algorithms of ``collective`` that run on ``topology``'s family and on ``engine``, by name."""
    from .. import registry

    return sorted((a for a in registry.algorithms()
                   if a.collective == collective and engine in a.engines
                   and (not a.families or topology.family in a.families)), key=lambda a: a.name)


def _given(alg: registry.Algorithm, params: dict[str, Any], model: Model, root: int) -> dict[str, Any]:
    """The run parameters to hand ``alg``: the model by canonical name, and the broadcast root."""
    names = {p.name for p in alg.params}
    # a key the synthesis model lacks (a fat tree's all-gather model has no hop latency) is the algorithm's
    # default; :func:`_same_model` then decides whether it ran under the model asked for
    out = {k: params[k] for k in MODEL_KEYS if k in names and k in params}
    if "ports" in names:
        out["ports"] = "all" if model.ports.ports is None else str(model.ports.ports)
    if "duplex" in names:
        out["duplex"] = model.ports.duplex
    if "root" in names:
        out["root"] = root
    return out


def _same_model(a: Model, b: Model) -> bool:
    return a.ports == b.ports and a.cost == b.cost


def _chunks(schedule: Schedule, collective: str, n: int, root: int, message_bytes: float) -> int | None:
    """Chunks per message when ``schedule`` moves exactly the collective's messages, else None (a reduction:
    the blocks its vector of ``message_bytes`` travels in)."""
    if schedule.is_reduction:
        return _blocks(schedule, collective, n, root, message_bytes)
    if schedule.collective != collective or schedule.num_nodes != n or schedule.combine is not None \
            or schedule.forward is not None:
        return None
    base = {"broadcast": 1, "allgather": n, "alltoall": n * n}[collective]
    if schedule.num_messages % base:
        return None
    chunks = schedule.num_messages // base
    if not np.isclose(schedule.message_bytes * chunks, message_bytes, rtol=1e-12):
        return None
    origin = schedule.origin
    if collective == "broadcast":
        ok = isinstance(schedule.targets, str) and bool(np.all(origin == root))
    elif collective == "allgather":
        ok = isinstance(schedule.targets, str) and bool(np.all(np.bincount(origin, minlength=n) == chunks))
    else:
        targets = schedule.targets
        ok = not isinstance(targets, str) and len(np.shape(targets)) == 1 \
            and bool(np.all(np.bincount(origin * n + np.asarray(targets), minlength=n * n) == chunks))
    return chunks if ok else None


def _blocks(schedule: Schedule, collective: str, n: int, root: int, vector: float) -> int | None:
    """The blocks of a reduction schedule that reduces a vector of ``vector`` bytes as ``collective`` asks
    (every node for an allreduce, the same share at every node for a reduce-scatter, all at ``root`` for a
    reduce), else None."""
    if schedule.collective != collective or schedule.num_nodes != n or schedule.num_messages == 0 or \
            not np.isclose(schedule.message_bytes * schedule.num_messages, vector, rtol=1e-12):
        return None
    targets = schedule.targets
    if collective == "allreduce":
        ok = isinstance(targets, str)
    elif isinstance(targets, str):
        ok = False
    elif collective == "reduce":
        ok = bool(np.all(np.asarray(targets) == root))
    else:
        owned = np.bincount(np.asarray(targets), minlength=n)
        ok = bool(np.all(owned == owned[0]))
    return schedule.num_messages if ok else None


def run_known(topology: Topology, collective: str, engine: str, model: Model, params: dict[str, Any],
              root: int, seed: int, max_memory: float | None, chunks: int | None = None
              ) -> tuple[Known | None, list[dict[str, Any]], list[str]]:
    """Run every applicable registered algorithm under ``model``; ``(the fastest verified run or None, candidate
    records, notes)``.  Only the fastest run is kept (the others' plans are dropped as soon as they lose).

    With ``chunks`` given, plans that split messages otherwise are skipped with a note; so is an algorithm
    whose own checks refuse the run (its memory estimate included).
    """
    from ..api import model_of, plan, plan_engine, prepare
    from ..execution.execute import execute

    best, records, notes = None, [], []
    measure = "time" if engine == "event" else "steps"
    for alg in applicable(topology, collective, engine):
        try:
            checked = prepare(topology, alg.name, engine, seed, max_memory, **_given(alg, params, model, root))
            if not _same_model(model_of(checked), model):
                notes.append(f"registered algorithm {alg.name} skipped: it cannot take the model asked for")
                continue
            the_plan = plan(checked.topology, checked.algorithm, checked.params, engine, seed, max_memory)
            if not isinstance(the_plan, Schedule) or plan_engine(the_plan, engine) != engine:
                notes.append(f"registered algorithm {alg.name} skipped: its plan is not a schedule")
                continue
            if the_plan.part is not None:   # synthesis reduces over every node; this plan over some only
                notes.append(f"registered algorithm {alg.name} skipped: it reduces over some nodes only (a fat "
                             f"tree's processors), the synthesised schedules over every node")
                continue
            split = _chunks(the_plan, collective, topology.num_nodes, root, params["message_bytes"])
            if split is None:
                notes.append(f"registered algorithm {alg.name} skipped: its messages are not the {collective}'s")
                continue
            if chunks is not None and split != chunks:
                notes.append(f"registered algorithm {alg.name} skipped: it sends {split} chunk(s) per message, "
                             f"not the {chunks} asked for")
                continue
            result = execute(checked.topology, the_plan, engine, model, algorithm=alg.name, seed=seed,
                             params=checked.params, max_bytes=max_memory)
        except TopocastError as exc:
            notes.append(f"registered algorithm {alg.name} skipped: {str(exc).splitlines()[0]}")
            continue
        ok = bool(result.verified and result.metrics["exactly_once"])
        known = Known(alg.name, the_plan, result, split)
        records.append({"origin": "registered", "algorithm": alg.name, "verified": ok,
                        "measured": known.measured(engine)})
        if ok and (best is None or known.measured(engine) < best.result.metrics[measure]):
            best = known
    return best, records, notes
