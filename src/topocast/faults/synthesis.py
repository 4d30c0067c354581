"""Synthesis on a degraded network: a schedule per healthy component, lifted and verified on the whole network.

:func:`synthesize` plans what ``topocast run`` plans for a fault-aware collective
(:mod:`topocast.faults.plans`): the healthy nodes are split into their
components on the surviving graph; a broadcast is synthesised on its root's
component, an all-gather or all-to-all on every component of two or more
nodes.  Each component is synthesised on its own
(:func:`topocast.synthesis.synthesize`, with its registered generic
candidates, on the component as a plain graph so that no algorithm built for
the intact family's structure is tried on it), the plans are lifted back to
the network's numbering and merged (components share no node and no link, so
they run side by side), and the promise is restricted to *every healthy node
connected to a message's origin receives it exactly once*
(:func:`topocast.faults.loss.restrict`).  The merged schedule is verified on
the degraded network, and its bound is the degraded network's
(:func:`topocast.synthesis.certificate` on the restricted promise): farther
detours and fewer surviving links make it larger, unreachable nodes make it
smaller.

Every component's messages must be cut into the same number of chunks (one
schedule has one chunk size): with several components and no ``chunks`` given,
messages are sent whole.  A reduction is synthesised on each healthy part that must hold a sum
(:func:`topocast.faults.plans.reduction_pieces`: the root's for a reduce, every one of two or more nodes
otherwise), lifted with :func:`topocast.faults.plans.lift_reduction`, each node's sum its own part's
(:func:`topocast.faults.plans.stamp_reduction`); on a network that still joins every router, as it is, the
intact promise unchanged.  ``exact`` is refused.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import REDUCTIONS, Schedule, ScheduleBuilder
from ..topology.core import Topology
from .connectivity import components, healthy
from .loss import restrict
from .plans import _lifted_ranges, induced, lift_reduction, reduction_pieces, stamp_reduction


def as_graph(topology: Topology, nodes: np.ndarray) -> Topology:
    """The component of ``topology`` on ``nodes`` as a plain graph (family ``graph``), numbered in their order."""
    return induced(topology, nodes, f"{topology.spec} with faults {topology.faults} (a component of {len(nodes)} "
                                    f"healthy nodes)")


def wanted(topology: Topology, collective: str, root: int) -> list[np.ndarray]:
    """The healthy components to plan, as sorted node arrays: the root's for a broadcast, every one of two or
    more nodes otherwise."""
    mask = healthy(topology)
    comp = components(topology)
    if collective == "broadcast":
        return [np.flatnonzero((comp == comp[root]) & mask)]
    sizes = np.bincount(comp[mask], minlength=int(comp.max()) + 1)
    return [np.flatnonzero((comp == c) & mask) for c in np.flatnonzero(sizes >= 2).tolist()]


def global_ids(part: Schedule, nodes: np.ndarray, n: int, collective: str, chunks: int) -> np.ndarray:
    """The global id (numbering of :func:`topocast.synthesis._messages`, chunked) of every message of a
    component's schedule ``part``: its message of the collective by origin (and target), its chunk by its rank
    among that message's chunks."""
    origin = nodes[np.asarray(part.origin, dtype=np.int64)]
    if collective == "broadcast":
        key = np.zeros(len(origin), dtype=np.int64)
    elif collective == "allgather":
        key = origin
    else:
        if isinstance(part.targets, (str, tuple)):
            raise TopocastError("synthesize: a component's all-to-all must name one target per message")
        key = nodes[np.asarray(part.targets, dtype=np.int64)] * n + origin
    order = np.argsort(key, kind="stable")
    rank = np.empty(len(key), dtype=np.int64)
    sorted_key = key[order]
    first = np.searchsorted(sorted_key, sorted_key, side="left")
    rank[order] = np.arange(len(key)) - first
    if np.any(rank >= chunks):
        raise TopocastError(f"synthesize: a component's schedule cuts messages into more than {chunks} chunks")
    return key * chunks + rank


def merge(topology: Topology, collective: str, root: int, chunks: int, message_bytes: float,
          parts: list[tuple[np.ndarray, Schedule]]) -> Schedule:
    """The component schedules lifted to ``topology``'s numbering in one schedule (the intact promise: the
    caller restricts it)."""
    from ..synthesis import _chunked, _messages

    n = topology.num_nodes
    origin, targets = _chunked(*_messages(topology, collective, root), chunks)
    builder = ScheduleBuilder(n, origin=origin, collective=collective, targets=targets, message_bytes=message_bytes)
    offset = 0
    for nodes, part in parts:
        nranges, first, count = _lifted_ranges(part, global_ids(part, nodes, n, collective, chunks))
        after = None
        if part.after_ptr is not None:
            after = (np.asarray(part.after_ptr, dtype=np.int64), np.asarray(part.after_ids, dtype=np.int64) + offset)
        step = None if part.step is None else np.asarray(part.step, dtype=np.int64)
        builder.add_ranges(nodes[np.asarray(part.src)], nodes[np.asarray(part.dst)], nranges, first, count,
                           step=step, after=after)
        offset += part.num_transfers
    if not parts:
        empty = np.zeros(0, np.int64)
        builder.add_ranges(empty, empty, empty, empty, empty, step=0)
    return builder.build()


def synthesize(topology: Topology, collective: str, *, seed: int, budget: float, engine: str, root: int,
               chunks: int | None, restarts: int | None, max_memory: float | None, params_from_text: bool,
               known: bool, exact: bool, **params: Any):
    """:func:`topocast.synthesis.synthesize` on the degraded ``topology`` (see the module docstring).

    Returns
    -------
    Synthesis
        ``schedule`` the merged schedule with its restricted promise, verified on ``topology``; ``bound`` the
        degraded network's; ``candidates`` and ``notes`` every component's, each named by its first node.

    Raises
    ------
    TopocastError
        ``exact``, a failed root, a reduction with no two healthy nodes joined, or a component that
        cannot be synthesised.
    """
    from .. import synthesis as syn
    from ..synthesis.model import model_record, resolve_model

    t0 = time.perf_counter()
    if exact:
        raise TopocastError("exact: the exact synthesis runs on the intact network, not with faults "
                            f"({topology.faults})")
    resolved, model, reference = resolve_model(topology.family, collective, params, params_from_text)
    n = topology.num_nodes
    given: dict[str, Any] = {k: resolved[k] for k in ("message_bytes", "startup", "per_byte", "per_hop",
                                                      "per_byte_reduce") if k in resolved}
    given["ports"] = "all" if model.ports.ports is None else str(model.ports.ports)
    given["duplex"] = model.ports.duplex
    reduction = collective in REDUCTIONS
    if collective in ("broadcast", "reduce"):
        if not 0 <= root < n:
            raise TopocastError(f"synthesize: parameter 'root' must be a node in 0..{n - 1}, got root={root}")
        if not healthy(topology)[root]:
            raise TopocastError(f"root: node {root} is a failed router of {topology.spec} ({topology.faults}); "
                                f"choose a healthy root")
    pieces = reduction_pieces(topology, collective, root) if reduction else wanted(topology, collective, root)
    if reduction and len(pieces) == 1 and len(pieces[0]) == n:     # one healthy, connected network
        part = syn.synthesize(as_graph(topology, np.arange(n, dtype=np.int64)), collective, seed=seed,
                              budget=budget, engine=engine, root=root, chunks=chunks, restarts=restarts,
                              max_memory=max_memory, known=known, **given)
        schedule = stamp_reduction(part.schedule, topology)
        result = syn.verify(topology, schedule, engine, model, part.method, seed, resolved, max_memory)
        out = syn.Synthesis(topology.spec, collective, engine, part.method, seed, schedule,
                            model_record(resolved, model), result, part.chunks, reference,
                            round(time.perf_counter() - t0, 3), part.candidates, part.notes, part.origin,
                            syn.certificate(topology, schedule, engine, model))
        return replace(out, faults=topology.faults)
    pieces = [nodes for nodes in pieces if len(nodes) >= 2]
    if reduction and not pieces:
        raise TopocastError(f"faults: no two healthy nodes of {topology.spec} ({topology.faults}) that must "
                            f"reduce are still joined; nothing to synthesise")
    c = chunks if chunks is not None else (None if len(pieces) <= 1 else 1)
    parts, tried, notes, methods, origins = [], [], [], [], []
    for i, nodes in enumerate(pieces):
        left = max(0.0, budget - (time.perf_counter() - t0)) / (len(pieces) - i)
        local_root = int(np.searchsorted(nodes, root)) if collective in ("broadcast", "reduce") else 0
        share = dict(given)
        if collective == "reduce-scatter":    # node j's block of the sum is 1/N of the vector, in any part
            share["message_bytes"] = float(given["message_bytes"]) * len(nodes) / n
        part = syn.synthesize(as_graph(topology, nodes), collective, seed=seed, budget=left, engine=engine,
                              root=local_root, chunks=chunks if reduction else c, restarts=restarts,
                              max_memory=max_memory, known=known, **share)
        c = part.chunks if c is None or reduction else c
        if part.chunks != c:
            raise TopocastError(f"synthesize: the component of node {int(nodes[0])} was cut into {part.chunks} "
                                f"chunks, another into {c}; give --set chunks=")
        parts.append((nodes, part.schedule))
        tried += [{"component": int(nodes[0]), "nodes": int(len(nodes)), **entry} for entry in part.candidates]
        notes += [f"component of node {int(nodes[0])}: {note}" for note in part.notes]
        methods.append(part.method)
        origins.append(part.origin)
    c = c or 1
    if reduction:
        lifted = stamp_reduction(lift_reduction(topology, collective, parts), topology)
        schedule, c = lifted, lifted.num_messages        # a reduction's file counts its blocks as chunks
        count = lifted.info["parts"]
        notes.append(f"{count} part{'s' if count != 1 else ''} of healthy nodes: each node's sum is its own "
                     f"part's ({lifted.info['contributions_out_of_reach']} contributions out of reach)")
    else:
        lifted = merge(topology, collective, root, c, resolved["message_bytes"] / c, [(p, s) for p, s in parts])
        schedule, loss = restrict(lifted, topology)
        notes.append(loss.sentence())
    method = methods[0] if len(set(methods)) == 1 else "+".join(methods) if methods else "none"
    result = syn.verify(topology, schedule, engine, model, method, seed, resolved, max_memory)
    origin = "registered" if origins and all(o == "registered" for o in origins) else "synthesized"
    out = syn.Synthesis(topology.spec, collective, engine, method, seed, schedule, model_record(resolved, model),
                        result, c, reference, round(time.perf_counter() - t0, 3), tried, notes, origin,
                        syn.certificate(topology, schedule, engine, model))
    return replace(out, faults=topology.faults, lifted=lifted)


__all__ = ["as_graph", "merge", "synthesize", "wanted"]
