"""MSCCL XML algorithms on a topocast topology: read, verify, measure (``tc.msccl.read``, ``tc.msccl.run``).

>>> import topocast as tc                                             # doctest: +SKIP
>>> imported = tc.msccl.read("ring_allgather.xml", tc.build("ring:8"))  # doctest: +SKIP
>>> tc.msccl.run("ring:8", "ring_allgather.xml", engine="event").verified  # doctest: +SKIP
True

Ranks are placed on nodes by ``mapping`` (``mapping[rank]`` is the node; default: rank ``r`` on node ``r``);
the network needs at least one node per rank (the others only relay).  Each matched send and receive of the program
(:mod:`topocast.interop.msccl_run`) is a transfer of the rank-level (*logical*) schedule at the earliest step
its dependencies allow; a transfer between ranks whose nodes are not linked is routed hop by hop along a
shortest path (relay hops, :attr:`~topocast.plans.schedule.Schedule.forward`) in the *routed* schedule, and the
result's notes say how many.  Verification is the shared one: the delivery replay
(:func:`topocast.verify.delivery.check_steps`) for all-gather, all-to-all and broadcast, and
:func:`topocast.verify.reduction.verify_reduction` for allreduce and reduce-scatter, plus the program's own
faults (a chunk read before it is filled, a race between thread blocks, a wrong offset, a reduction counted
twice).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule, ScheduleBuilder
from .msccl_format import Program, parse_text, read_program
from .msccl_run import Execution, execute_program

#: bytes of one chunk when none is given
CHUNK_BYTES = 1024.0


@dataclass
class Imported:
    """An MSCCL program on a topology: the program, its symbolic run, the rank-level schedule (``logical``:
    node ``r`` is rank ``r``, what verification checks), the same on the ranks' nodes (``placed``), the
    ``routed`` schedule (every transfer one link; ``placed`` itself when no transfer needed routing), and
    notes."""

    program: Program
    execution: Execution
    logical: Schedule
    routed: Schedule
    mapping: np.ndarray
    notes: list[str] = field(default_factory=list)
    #: the logical schedule on the ranks' nodes, before routing
    placed: Schedule | None = None

    @property
    def faults(self) -> list[str]:
        return self.execution.faults

    @property
    def relayed(self) -> int:
        return int(self.routed.meta.get("relayed", 0))


def read(source, topology=None, mapping=None, chunk_bytes: float = CHUNK_BYTES,
         max_bytes: float | None = None, lenient: bool = False) -> Imported:
    """Read an MSCCL XML algorithm (a path, or the document as bytes) and turn it into schedules.

    Parameters
    ----------
    source : str, Path or bytes
        The file, or the XML text itself (bytes).
    topology : Topology, optional
        The network (default: a complete graph on the program's ranks).
    mapping : sequence of int, optional
        ``mapping[rank]``: the node of each rank (distinct); default the identity.
    chunk_bytes : float
        Bytes of one chunk (one block of the schedule).
    max_bytes : float, optional
        Memory limit for reading the file.
    lenient : bool
        Read a file without ``minBytes``, ``maxBytes``, ``inplace`` or ``outofplace`` (older MSCCL tools
        left them out; the executor refuses such a file), saying so in the notes.

    Returns
    -------
    Imported

    Raises
    ------
    TopocastError
        Malformed XML, broken executor rules (one line naming the element and the rule), a mapping that
        does not fit the network.
    """
    from ..infra.validate import number

    number(chunk_bytes, "chunk_bytes", minimum=0)
    if not chunk_bytes > 0:
        raise TopocastError(f"chunk_bytes: must be > 0, got {chunk_bytes}")
    if isinstance(source, bytes):
        where = "msccl"
        program = parse_text(source, where, not lenient)
    else:
        where = f"msccl file {source}"
        program = read_program(source, max_bytes, not lenient)
    if topology is None:
        from ..spec import build

        topology = build(f"complete:{program.ngpus}")
    nodes = _mapping(mapping, program.ngpus, topology)
    execution, layout = execute_program(program, where)
    ranks = np.arange(program.ngpus, dtype=np.int64)
    logical = _schedule(program, execution, layout, ranks, program.ngpus, float(chunk_bytes))
    placed = _schedule(program, execution, layout, nodes, topology.num_nodes, float(chunk_bytes))
    routed, notes = _route(topology, placed)
    if topology.num_nodes > program.ngpus:
        notes.insert(0, f"{program.ngpus} ranks on {topology.num_nodes} nodes (ranks on nodes "
                        f"{_short_list(nodes)}): the other nodes only relay")
    return Imported(program, execution, logical, routed, nodes, list(program.notes) + notes, placed)


def _short_list(nodes: np.ndarray) -> str:
    text = ",".join(str(int(v)) for v in nodes[:12])
    return text + (",..." if len(nodes) > 12 else "")


def _mapping(mapping, ngpus: int, topology) -> np.ndarray:
    n = topology.num_nodes
    if n < ngpus:
        raise TopocastError(f"mapping: the algorithm has {ngpus} ranks and {topology.spec} only {n} nodes; "
                            "give a network with a node per rank")
    if mapping is None:
        return np.arange(ngpus, dtype=np.int64)
    try:
        nodes = np.asarray([int(x) for x in mapping], dtype=np.int64)
    except (TypeError, ValueError):
        raise TopocastError("mapping: must be one node index per rank") from None
    if len(nodes) != ngpus or nodes.min(initial=0) < 0 or nodes.max(initial=0) >= n or \
            len(np.unique(nodes)) != ngpus:
        raise TopocastError(f"mapping: must give {ngpus} distinct nodes in 0..{n - 1}, one per rank")
    return nodes


def parse_mapping(text: str) -> list[int]:
    """``"3,0,1,2"`` (node of rank 0, 1, ...) as a list, for the command line."""
    try:
        return [int(x) for x in text.replace(" ", "").split(",") if x != ""]
    except ValueError:
        raise TopocastError(f"--mapping: expected node indices separated by commas, got '{text[:60]}'") from None


def _ranges(ids: list[int]) -> tuple[list[int], list[int]]:
    firsts: list[int] = []
    counts: list[int] = []
    for x in ids:
        if counts and x == firsts[-1] + counts[-1]:
            counts[-1] += 1
        else:
            firsts.append(x)
            counts.append(1)
    return firsts, counts


def _schedule(program: Program, execution: Execution, layout, nodes: np.ndarray, num_nodes: int,
              chunk_bytes: float) -> Schedule:
    origin, targets = layout.messages()
    origin = nodes[origin]
    collective = program.collective
    if not isinstance(targets, str):
        targets = nodes[targets]
    elif num_nodes > len(nodes):                   # every rank's node, not every node
        ptr = np.arange(len(origin) + 1, dtype=np.int64) * len(nodes)
        targets = (ptr, np.tile(nodes, len(origin)))
    if num_nodes > len(nodes) and collective in ("allgather", "broadcast", "alltoall"):
        collective = "custom"                      # the collective's bounds assume every node takes part
    reduction = layout.reduction
    builder = ScheduleBuilder(num_nodes, origin=origin, collective=collective, targets=targets,
                              message_bytes=chunk_bytes,
                              meta={"msccl": program.name, "proto": program.proto, "nchannels": program.nchannels})
    keep = []
    src, dst, nranges, firsts, counts, steps, combine = [], [], [], [], [], [], []
    for t in execution.transfers:
        ids = [(x[0] if reduction else x) for x in t.payload if x is not None]
        if not ids:
            continue
        f, c = _ranges(ids)
        keep.append(t)
        src.append(nodes[t.src])
        dst.append(nodes[t.dst])
        nranges.append(len(f))
        firsts += f
        counts += c
        steps.append(t.level)
        combine.append(t.kind == "combine")
    if keep:
        builder.add_ranges(src=src, dst=dst, ranges_per_transfer=nranges, first=firsts, count=counts,
                           step=np.asarray(steps, dtype=np.int64), combine=np.asarray(combine, dtype=bool))
    schedule = builder.build()
    if schedule.step is None:
        schedule = replace(schedule, step=np.zeros(0, dtype=np.int64))
    if reduction and any(t.forward >= 0 for t in keep):
        index = {id(t): k for k, t in enumerate(keep)}
        all_t = execution.transfers
        forward = np.array([index.get(id(all_t[t.forward]), -1) if t.forward >= 0 else -1 for t in keep],
                           dtype=np.int64)
        schedule = replace(schedule, forward=forward)
    return schedule


def _route(topology, logical: Schedule) -> tuple[Schedule, list[str]]:
    """The schedule with every transfer between non-neighbours routed hop by hop, and a note saying so."""
    links = set(zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=True))
    far = sum((int(u), int(v)) not in links for u, v in zip(logical.src, logical.dst, strict=True))
    if not far:
        return logical, []
    if logical.is_reduction:
        from ..algorithms.embedding import embed

        if logical.forward is not None and np.any(logical.forward >= 0):
            raise TopocastError("mapping: this reduction relays partials itself (recv-copy-send) and sends "
                                f"between ranks whose nodes {topology.spec} does not link; give a mapping onto "
                                "linked nodes")
        split, shared = _one_per_link(logical)
        routed = embed(topology, split)
    else:
        routed, shared = _relay(topology, logical), 0
    hops = int(routed.num_transfers)
    note = (f"{far} of {logical.num_transfers} transfers join ranks whose nodes are not linked in "
            f"{topology.spec}: routed along shortest paths ({hops} hops in all); verification is of the "
            "rank-level schedule, timing of the routed one")
    notes = [note]
    if shared:
        notes.append(f"{shared} transfers follow another of their step between the same two ranks (several "
                     "channels or instances): routed one after the other")
    return routed, notes


def _one_per_link(logical: Schedule) -> tuple[Schedule, int]:
    """The reduction with each step split so that no two of its transfers join the same two ranks (the
    ``j``-th transfer of a step on a link goes to the step's ``j``-th part), and how many moved."""
    step = np.asarray(logical.step, dtype=np.int64)
    seen: dict[tuple[int, int, int], int] = {}
    part = np.zeros(logical.num_transfers, dtype=np.int64)
    for t, key in enumerate(zip(step.tolist(), logical.src.tolist(), logical.dst.tolist(), strict=True)):
        part[t] = seen.get(key, 0)
        seen[key] = part[t] + 1
    if not part.any():
        return logical, 0
    parts = np.zeros(int(step.max()) + 1, dtype=np.int64)
    np.maximum.at(parts, step, part + 1)
    first = np.concatenate([[0], np.cumsum(parts)[:-1]])
    return replace(logical, step=first[step] + part), int(np.count_nonzero(part))


def _relay(topology, logical: Schedule) -> Schedule:
    """Route an all-gather, all-to-all or broadcast: logical step ``k`` becomes as many steps as its longest
    path, hop ``j`` of every path in the ``j``-th of them; relay hops forward the payload of the hop before."""
    from ..algorithms.embedding import next_hops

    links = set(zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=True))
    toward = next_hops(topology, np.unique(logical.dst))
    src, dst, step, forward, entries = [], [], [], [], []
    base = 0
    for k in range(logical.num_steps):
        longest = 1
        for t in np.flatnonzero(logical.step == k).tolist():
            u, v = int(logical.src[t]), int(logical.dst[t])
            path = [u]
            if (u, v) not in links:
                while path[-1] != v:
                    path.append(int(toward[v][path[-1]]))
            else:
                path.append(v)
            prev = -1
            for j in range(len(path) - 1):
                src.append(path[j])
                dst.append(path[j + 1])
                step.append(base + j)
                forward.append(prev)
                entries.append(t)
                prev = len(src) - 1
            longest = max(longest, len(path) - 1)
        base += longest
    t_of = np.asarray(entries, dtype=np.int64)
    lengths = np.diff(logical.range_ptr)[t_of] if len(t_of) else np.zeros(0, np.int64)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    idx = np.concatenate([np.arange(logical.range_ptr[t], logical.range_ptr[t + 1]) for t in t_of]) \
        if len(t_of) else np.zeros(0, np.int64)
    meta = dict(logical.meta, relayed=int(sum(1 for f in forward if f >= 0)), hops=len(src))
    return replace(logical, src=np.asarray(src, np.int64), dst=np.asarray(dst, np.int64),
                   step=np.asarray(step, np.int64), range_ptr=ptr, range_first=logical.range_first[idx],
                   range_count=logical.range_count[idx], forward=np.asarray(forward, np.int64), meta=meta)


def verify_imported(imported: Imported, max_bytes: float | None = None):
    """The :class:`~topocast.verify.delivery.Verification` of the rank-level schedule and the program's faults."""
    from ..verify.delivery import Verification

    logical = imported.logical
    if logical.is_reduction:
        from ..verify.reduction import verify_reduction

        check = verify_reduction(logical, max_bytes=max_bytes)
        found = Verification(check.complete, check.redundant_receipts, check.missing_deliveries,
                             check.first_violation, check.receipts, check.promise)
    else:
        from ..execution.execute import execute
        from ..sim.models import Model
        from ..spec import build

        complete = build(f"complete:{logical.num_nodes}")
        found = execute(complete, logical, "step", Model(), max_bytes=max_bytes).verification
    if imported.faults:
        first = imported.faults[0]
        more = f" (and {len(imported.faults) - 1} more faults)" if len(imported.faults) > 1 else ""
        found = replace(found, first_violation=first + more)
    return found


def run(spec, source, engine: str = "step", mapping=None, chunk_bytes: float = CHUNK_BYTES, model=None,
        max_memory: float | None = None, lenient: bool = False):
    """Import an MSCCL algorithm onto ``spec`` and run it: verified, and measured where the engine runs it.

    Parameters
    ----------
    spec : str or Topology
        The network.
    source : str, Path or bytes
        The MSCCL XML file (or its text).
    engine : {"step", "event"}
        The engine that measures the routed schedule.
    mapping, chunk_bytes, lenient
        As :func:`read` takes them.
    model : Model, optional
        Ports and costs (default :class:`~topocast.sim.models.Model`).
    max_memory : float, optional
        Memory limit in bytes.

    Returns
    -------
    RunResult
        Verification of the program (the shared verifiers and the program's faults), with steps or time and
        the lower bound of the routed schedule where the engine measures it.
    """
    from ..infra.memory import resolve_limit
    from ..sim.models import Model
    from ..spec import build
    from ..topology.core import Topology

    if engine not in ("step", "event"):
        raise TopocastError(f"engine: an MSCCL algorithm runs on step or event, not '{engine}'")
    max_memory = resolve_limit(max_memory)
    topology = spec if isinstance(spec, Topology) else build(spec, max_memory=max_memory)
    imported = read(source, topology, mapping, chunk_bytes, max_memory, lenient)
    verification = verify_imported(imported, max_memory)
    model = model or Model()
    stem = "msccl" if isinstance(source, bytes) else Path(str(source)).stem
    name = f"msccl:{imported.program.name or stem}"
    params = {"msccl": str(source) if not isinstance(source, bytes) else "<bytes>", "chunk_bytes": chunk_bytes,
              "mapping": imported.mapping.tolist()}
    result = measure(topology, imported, engine, model, max_memory, name, params)
    notes = list(imported.notes)
    if result is None:
        from ..execution.result import RunResult

        routed = imported.routed
        metrics = {"lower_bound": None, "lower_bound_ratio": None, "nodes": topology.num_nodes,
                   **verification.as_dict(), "receipts": verification.receipts,
                   "transfers": routed.num_transfers, "messages": routed.num_messages,
                   "schedule_steps": routed.num_steps}
        notes.append("a reduction over some of the network's nodes cannot be run or bounded (every node would "
                     "contribute): verified on the ranks, not measured or bounded")
        units = {"schedule_steps": "steps"}
        if metrics["lower_bound"] is not None:
            units["lower_bound"] = "steps" if engine == "step" else "s"
        return RunResult(topology.spec, name, engine, imported.logical.collective, verification, 0, params, metrics,
                         units, None, notes)
    metrics = {**result.metrics, **verification.as_dict(), "receipts": verification.receipts}
    return replace(result, verification=verification, metrics=metrics, notes=list(result.notes) + notes,
                   collective=imported.program.collective)


def measure(topology, imported: Imported, engine: str, model, max_memory, name: str, params: dict):
    """The engine's run of the routed schedule.  A reduction on a network with more nodes than ranks sums
    over the ranks' nodes only: the others relay and take no part (``Schedule.part`` -1), so its check and
    its bounds count the ranks."""
    from dataclasses import replace

    from ..execution.execute import execute

    routed = imported.routed
    if routed.is_reduction and topology.num_nodes != imported.program.ngpus:
        ranks = np.asarray(imported.mapping, dtype=np.int64)
        targets = _rank_targets(routed.targets, ranks)
        if targets is None:
            return None
        part = np.full(topology.num_nodes, -1, dtype=np.int64)
        part[ranks] = 0
        routed = replace(routed, targets=targets, part=part)
    return execute(topology, routed, engine, model, algorithm=name, params=params, max_bytes=max_memory)


def _rank_targets(targets, ranks: np.ndarray):
    """A reduction's targets as the verifier takes them once the ranks are its only part: ``"all"`` where
    every block goes to every rank, one node per block where each goes to one, else None."""
    if isinstance(targets, str):
        return targets
    if not isinstance(targets, tuple):
        return np.asarray(targets, dtype=np.int64)
    ptr, ids = (np.asarray(a, dtype=np.int64) for a in targets)
    sizes = np.diff(ptr)
    if np.all(sizes == 1):
        return ids
    everyone = np.sort(ranks)
    if all(np.array_equal(np.sort(ids[ptr[b]:ptr[b + 1]]), everyone) for b in range(len(sizes))):
        return "all"
    return None
