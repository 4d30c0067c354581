"""Synthesis of reductions (allreduce, reduce-scatter, reduce): a synthesised dual beside the known algorithms.

A reduce-scatter is an all-gather run backwards: an all-gather that delivers
each node's block to every node exactly once moves it down a tree rooted at
the block's node; reversed in time, with every copy turned into a combine, the
same tree sums every contribution into that node exactly once.  So:

* ``reversed-allgather``: a synthesised all-gather of blocks of ``m / N``
  (:func:`topocast.synthesis.synthesize`), reversed; for an allreduce, then the
  all-gather itself (Patarasuk and Yuan's reduce-scatter + all-gather);
* ``reversed-broadcast`` (reduce): a synthesised, chunked broadcast from the
  root, reversed;
* every registered algorithm of the collective that runs on the network
  (:mod:`.known`, as for the other collectives).

Each candidate runs on the engine under the model and is verified; the
fastest verified one is the result, its origin named (ties go to the
synthesised one).  It is never slower than any registered algorithm under
the same model, since those are among the candidates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import TopocastError, VerificationError
from ..execution.result import RunResult
from ..plans.schedule import Schedule, ScheduleBuilder
from ..sim.models import Model
from ..topology.core import Topology
from .model import model_names


def reversed_schedule(schedule: Schedule, collective: str, targets: Any) -> Schedule:
    """``schedule`` (a step schedule delivering each message exactly once) backwards in time: every transfer
    ``u -> v`` of step ``k`` becomes ``v -> u`` of step ``K - 1 - k`` and adds its partial to the receiver's."""
    if schedule.step is None:
        raise TopocastError("synthesize: only a step-ordered schedule can be reversed")
    last = int(schedule.step.max(initial=0))
    builder = ScheduleBuilder(schedule.num_nodes, origin=schedule.origin, collective=collective, targets=targets,
                              message_bytes=schedule.message_bytes, meta=dict(schedule.meta))
    builder.add_ranges(schedule.dst, schedule.src, np.diff(schedule.range_ptr), schedule.range_first,
                       schedule.range_count, step=last - schedule.step, combine=True)
    return builder.build()


def followed_by(first: Schedule, then: Schedule, collective: str) -> Schedule:
    """``first`` and then ``then`` (its steps after ``first``'s last), as one ``collective`` schedule whose
    second part copies (an allreduce's all-gather half)."""
    if first.step is None or then.step is None or first.combine is None:
        raise TopocastError("synthesize: only step-ordered schedules, the first a reduction, can be joined")
    offset = int(first.step.max(initial=-1)) + 1
    builder = ScheduleBuilder(first.num_nodes, origin=first.origin, collective=collective, targets="all",
                              message_bytes=first.message_bytes, meta=dict(first.meta))
    builder.add_ranges(first.src, first.dst, np.diff(first.range_ptr), first.range_first, first.range_count,
                       step=first.step, combine=first.combine)
    builder.add_ranges(then.src, then.dst, np.diff(then.range_ptr), then.range_first, then.range_count,
                       step=then.step + offset, combine=False)
    return builder.build()


def dual_candidate(topology: Topology, collective: str, params: dict[str, Any], seed: int, budget: float,
                   root: int, chunks: int | None, max_memory: float | None) -> Schedule:
    """The reversed synthesised all-gather (reduce-scatter, allreduce) or broadcast (reduce)."""
    from . import synthesize

    n = topology.num_nodes
    # the inner synthesis takes its own reference's model parameters (a fat tree's all-gather has no hop
    # latency); whatever it does not take, the dual's verified run below is measured under all the same
    inner = model_names(topology.family, "broadcast" if collective == "reduce" else "allgather")
    model_params = {k: v for k, v in params.items() if k != "per_byte_reduce" and k in inner}
    vector = float(params["message_bytes"])
    if collective == "reduce":
        made = synthesize(topology, "broadcast", seed=seed, budget=budget, root=root, chunks=chunks,
                          max_memory=max_memory, **model_params)
        blocks = len(made.schedule.origin)
        return reversed_schedule(made.schedule, "reduce", np.full(blocks, root, dtype=np.int64))
    made = synthesize(topology, "allgather", seed=seed, budget=budget, chunks=chunks, max_memory=max_memory,
                      **{**model_params, "message_bytes": vector / n})
    gather = made.schedule
    scatter = reversed_schedule(gather, "reduce-scatter", np.asarray(gather.origin, dtype=np.int64))
    return scatter if collective == "reduce-scatter" else followed_by(scatter, gather, "allreduce")


def synthesize_reduction(topology: Topology, collective: str, engine: str, model: Model, params: dict[str, Any],
                         seed: int, budget: float, root: int, chunks: int | None, max_memory: float | None,
                         known: bool = True
                         ) -> tuple[Schedule, RunResult, str, int, list[dict[str, Any]], list[str], str]:
    """``(schedule, verified run, method, blocks, candidates, notes, origin)``: the fastest verified of the
    dual (event engine) and, with ``known``, every registered algorithm of the collective
    (:func:`.known.run_known`); ``blocks``, the pieces the vector travels in, is the file's ``chunks`` (so
    ``message_bytes = chunks x chunk_bytes`` holds for reductions too)."""
    from . import verify
    from .known import run_known

    if not 0 <= root < topology.num_nodes:
        raise TopocastError(f"synthesize: parameter 'root' must be a node in 0..{topology.num_nodes - 1}, "
                            f"got root={root}")
    best, tried, notes = (run_known(topology, collective, engine, model, params, root, seed, max_memory)
                          if known else (None, [], []))
    measure = "time" if engine == "event" else "steps"
    chosen = None if best is None else (best.schedule, best.result, best.name, "registered")
    if engine == "event":
        method = "reversed-" + ("broadcast" if collective == "reduce" else "allgather")
        try:
            dual = dual_candidate(topology, collective, params, seed, budget, root, chunks, max_memory)
            result = verify(topology, dual, engine, model, method, seed, params, max_memory)
            tried.insert(0, {"origin": "synthesized", "method": method, "verified": True,
                             "measured": result.metrics[measure]})
            if chosen is None or result.metrics[measure] <= chosen[1].metrics[measure]:
                chosen = (dual, result, method, "synthesized")
        except (TopocastError, VerificationError) as exc:
            notes.append(f"{method}: {str(exc).splitlines()[0]}")
    if chosen is None:
        raise TopocastError(f"synthesize: no {collective} schedule verified on {topology.spec} with engine {engine}")
    schedule, result, method, origin = chosen
    return schedule, result, method, int(schedule.num_messages), tried, notes, origin
