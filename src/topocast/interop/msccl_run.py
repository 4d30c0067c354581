"""What an MSCCL program does: its steps matched, ordered and executed on symbolic chunks.

Every send is matched with the receive of the same connection (sending rank, receiving rank, channel) in
order: the ``k``-th send of a connection is the ``k``-th receive (counts must agree).  The steps form a graph:
a thread block's steps in order, ``depid``/``deps``, and each send before its receive; a cycle is refused.
The steps then run in an order of that graph on symbolic buffers (a chunk id, or for a reduction a block and
the set of ranks whose contributions it holds), and three faults are found on the way:

* a step reads a chunk no step has filled (a read before the step that fills it);
* a step reads or overwrites a chunk another thread block of its rank writes without a dependency between
  them (a race: a missing ``depid``), found with vector clocks over thread blocks;
* a reduction adds two partials of different blocks, or two partials that share a contribution
  (counted twice), or the output ends with a chunk at the wrong offset.

The transfers (one per matched send and receive) and what each carries go to a
:class:`~topocast.plans.schedule.Schedule` (:mod:`topocast.interop.msccl`), which the shared verifiers check.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import TopocastError
from .msccl_format import STEP_NAMES, STEP_TYPES, Program


@dataclass
class Transfer:
    """One matched send and receive: ranks, what it carries, the sending and receiving steps, its level."""

    src: int
    dst: int
    payload: list
    send_step: int
    recv_step: int
    level: int = 0
    #: reductions: what the receiver does with it: "combine", "copy" or "relay"
    kind: str = "copy"
    forward: int = -1


@dataclass
class Execution:
    """The program run on symbolic chunks: transfers in order, the first fault found, facts."""

    transfers: list[Transfer]
    faults: list[str] = field(default_factory=list)
    levels: int = 0


class _Steps:
    """Every step of the program numbered globally, with its rank, thread block and position."""

    def __init__(self, program: Program):
        self.gpu: list[int] = []
        self.tb: list[int] = []
        self.pos: list[int] = []
        self.items: list[Any] = []
        self.tb_index: dict[tuple[int, int], int] = {}
        self.first: dict[tuple[int, int], int] = {}
        for gpu in program.gpus:
            for tb in gpu.tbs:
                t = len(self.tb_index)
                self.tb_index[(gpu.id, tb.id)] = t
                self.first[(gpu.id, tb.id)] = len(self.items)
                for k, step in enumerate(tb.steps):
                    self.gpu.append(gpu.id)
                    self.tb.append(t)
                    self.pos.append(k)
                    self.items.append((gpu, tb, step))

    def name(self, v: int) -> str:
        gpu, tb, step = self.items[v]
        return f"<gpu id={gpu.id}> <tb id={tb.id}> <step s={step.s}> ({STEP_NAMES[step.type]})"


def _match(program: Program, steps: _Steps, where: str) -> list[tuple[int, int]]:
    """(send step, receive step) pairs, the ``k``-th send of a connection with its ``k``-th receive."""
    sends: dict[tuple[int, int, int], list[int]] = {}
    recvs: dict[tuple[int, int, int], list[int]] = {}
    for v, (gpu, tb, step) in enumerate(steps.items):
        receives, sending = STEP_TYPES[step.type][:2]
        if sending:
            sends.setdefault((gpu.id, tb.send, tb.chan), []).append(v)
        if receives:
            recvs.setdefault((tb.recv, gpu.id, tb.chan), []).append(v)
    local = _Local(steps)
    pairs = []
    for key in sorted(set(sends) | set(recvs)):
        a = local.ordered(sends.get(key, []), where, f"send to rank {key[1]} on channel {key[2]}")
        b = local.ordered(recvs.get(key, []), where, f"receive from rank {key[0]} on channel {key[2]}")
        if len(a) != len(b):
            src, dst, chan = key
            raise TopocastError(f"{where}: count mismatch: rank {src} sends {len(a)} time(s) to rank {dst} on "
                                f"channel {chan} and rank {dst} receives {len(b)} time(s) from it (a send without "
                                "its receive never completes)")
        for s, r in zip(a, b, strict=True):
            cs, cr = steps.items[s][2].cnt, steps.items[r][2].cnt
            if cs != cr:
                raise TopocastError(f"{where}: count mismatch: {steps.name(s)} sends cnt={cs} but the matching "
                                    f"{steps.name(r)} receives cnt={cr}")
            pairs.append((s, r))
    return pairs


class _Local:
    """The order a rank's own steps impose (thread blocks in order, ``depid``/``deps``), for connections that
    several thread blocks use (older MSCCL tools wrote such files): their steps must form one chain."""

    def __init__(self, steps: _Steps):
        self.steps = steps
        self.succ: dict[int, list[int]] = {}

    def _successors(self, v: int) -> list[int]:
        if not self.succ:
            for w, (gpu, _, step) in enumerate(self.steps.items):
                if self.steps.pos[w] > 0:
                    self.succ.setdefault(w - 1, []).append(w)
                if step.depid >= 0 and 0 <= step.deps < len(gpu.tbs[step.depid].steps):
                    self.succ.setdefault(self.steps.first[(gpu.id, step.depid)] + step.deps, []).append(w)
        return self.succ.get(v, [])

    def reaches(self, a: int, b: int) -> bool:
        seen, todo = {a}, [a]
        while todo:
            for w in self._successors(todo.pop()):
                if w == b:
                    return True
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        return False

    def ordered(self, ids: list[int], where: str, what: str) -> list[int]:
        if len({self.steps.tb[v] for v in ids}) <= 1:
            return ids
        rest = list(ids)
        chain: list[int] = []
        while rest:                      # the step no other remaining one must precede
            first = next((v for v in rest if not any(self.reaches(w, v) for w in rest if w != v)), rest[0])
            if chain and not self.reaches(chain[-1], first):
                raise TopocastError(f"{where}: {self.steps.name(chain[-1])} and {self.steps.name(first)} both "
                                    f"{what} with no dependency ordering them (the connection's order is undefined)")
            chain.append(first)
            rest.remove(first)
        return chain


def _order(program: Program, steps: _Steps, pairs, where: str):
    """Predecessors of every step (with a weight: 1 after a transfer) and a topological order."""
    n = len(steps.items)
    preds: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for v, (gpu, tb, step) in enumerate(steps.items):
        if steps.pos[v] > 0:
            prev_sends = STEP_TYPES[tb.steps[steps.pos[v] - 1].type][1]
            preds[v].append((v - 1, 1 if prev_sends else 0))
        if step.depid >= 0:
            target = steps.first[(gpu.id, step.depid)] + step.deps
            preds[v].append((target, 1 if STEP_TYPES[steps.items[target][2].type][1] else 0))
    for s, r in pairs:
        preds[r].append((s, 1))
    indeg = np.array([len(p) for p in preds], dtype=np.int64)
    succ: list[list[int]] = [[] for _ in range(n)]
    for v, ps in enumerate(preds):
        for p, _ in ps:
            succ[p].append(v)
    queue = deque(int(v) for v in np.flatnonzero(indeg == 0))
    order = []
    while queue:
        v = queue.popleft()
        order.append(v)
        for w in succ[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                queue.append(w)
    if len(order) < n:
        stuck = int(np.flatnonzero(indeg > 0)[0])
        raise TopocastError(f"{where}: dependency cycle through {steps.name(stuck)}: its steps wait for each "
                            "other (the executor would hang)")
    return preds, order


class _Layout:
    """Where each collective's chunks start and must end, and the in-place aliases of its buffers."""

    def __init__(self, program: Program, where: str):
        self.p = program
        n, c = program.ngpus, program.nchunksperloop
        coll = program.collective
        self.reduction = coll in ("allreduce", "reduce-scatter")
        if coll in ("allgather", "reduce-scatter", "alltoall") and c % n:
            raise TopocastError(f"{where}: <algo>: nchunksperloop {c} must be a multiple of ngpus {n} for "
                                f"{program.coll}")
        self.per_rank = c // n if coll in ("allgather", "reduce-scatter", "alltoall") else c
        self.inplace = program.inplace
        need_in = {"allgather": self.per_rank, "alltoall": c, "broadcast": c, "allreduce": c, "reduce-scatter": c}
        need_out = {"allgather": c, "alltoall": c, "broadcast": c, "allreduce": c, "reduce-scatter": self.per_rank}
        for gpu in program.gpus:
            if self.inplace:
                big = "o" if coll in ("allgather",) else "i"
                have = gpu.o_chunks if big == "o" else gpu.i_chunks
                alt = gpu.i_chunks if big == "o" else gpu.o_chunks
                if max(have, alt) < max(need_in[coll], need_out[coll]):
                    raise TopocastError(f"{where}: <gpu id={gpu.id}>: an in-place {program.coll} of nchunksperloop "
                                        f"{c} needs {max(need_in[coll], need_out[coll])} chunks in its buffer")
            else:
                if gpu.i_chunks < need_in[coll] or gpu.o_chunks < need_out[coll]:
                    raise TopocastError(f"{where}: <gpu id={gpu.id}>: an out-of-place {program.coll} of "
                                        f"nchunksperloop {c} needs i_chunks >= {need_in[coll]} and o_chunks >= "
                                        f"{need_out[coll]}")

    def slot(self, rank: int, buf: str, off: int) -> tuple[int, str, int]:
        """The canonical name of a chunk of a buffer (an in-place input is a part of the output)."""
        if buf == "s" or not self.inplace:
            return rank, buf, off
        coll = self.p.collective
        if coll == "allgather":
            gpu = self.p.gpus[rank]
            if buf == "i" and gpu.o_chunks:
                return rank, "o", rank * self.per_rank + off
            return rank, "o" if gpu.o_chunks else "i", off
        if coll == "reduce-scatter":
            gpu = self.p.gpus[rank]
            if buf == "o" and gpu.i_chunks:
                return rank, "i", rank * self.per_rank + off
            return rank, "i" if gpu.i_chunks else "o", off
        gpu = self.p.gpus[rank]
        return rank, "i" if gpu.i_chunks else "o", off

    def initial(self) -> dict:
        """Canonical slot -> value at the start: a message id, or (block, contributor bit set)."""
        p, c, n = self.p, self.per_rank, self.p.ngpus
        coll = p.collective
        state: dict[tuple[int, str, int], Any] = {}
        for r in range(n):
            if coll == "allgather":
                for j in range(c):
                    state[self.slot(r, "i", j)] = r * c + j
            elif coll == "alltoall":
                for d in range(n):
                    for j in range(c):
                        state[self.slot(r, "i", d * c + j)] = (r * n + d) * c + j
            elif coll == "broadcast":
                if r == 0:
                    for j in range(c):
                        state[self.slot(0, "i", j)] = j
            else:
                for b in range(p.nchunksperloop):
                    state[self.slot(r, "i", b)] = (b, 1 << r)
        return state

    def final(self):
        """(canonical slot, the value it must end with) for every output chunk."""
        p, c, n = self.p, self.per_rank, self.p.ngpus
        coll = p.collective
        full = (1 << n) - 1
        for r in range(n):
            if coll == "allgather" or coll == "broadcast":
                for k in range(p.nchunksperloop):
                    yield self.slot(r, "o", k), k
            elif coll == "alltoall":
                for s in range(n):
                    for j in range(c):
                        yield self.slot(r, "o", s * c + j), (s * n + r) * c + j
            elif coll == "allreduce":
                for b in range(p.nchunksperloop):
                    yield self.slot(r, "o", b), (b, full)
            else:
                for j in range(c):
                    yield self.slot(r, "o", j), (r * c + j, full)

    def messages(self) -> tuple[np.ndarray, object]:
        """``(origin, targets)`` of the topocast schedule, by rank."""
        p, c, n = self.p, self.per_rank, self.p.ngpus
        coll = p.collective
        if coll == "allgather":
            return np.repeat(np.arange(n, dtype=np.int64), c), "all"
        if coll == "alltoall":
            ids = np.arange(n * n * c, dtype=np.int64)
            return ids // (n * c), (ids // c) % n
        if coll == "broadcast":
            return np.zeros(c, dtype=np.int64), "all"
        if coll == "allreduce":
            return np.arange(p.nchunksperloop, dtype=np.int64) * n // p.nchunksperloop, "all"
        home = np.repeat(np.arange(n, dtype=np.int64), c)
        return home, home


def describe(value, reduction: bool) -> str:
    if value is None:
        return "nothing"
    if not reduction:
        return f"chunk {value}"
    block, held = value
    return f"block {block} with {bin(held).count('1')} contribution(s)"


def execute_program(program: Program, where: str = "msccl") -> tuple[Execution, _Layout]:
    """Match, order and run ``program`` on symbolic chunks (the module docstring); refuses count mismatches
    and cycles with a :class:`TopocastError`, records the other faults in :attr:`Execution.faults`."""
    layout = _Layout(program, where)
    steps = _Steps(program)
    pairs = _match(program, steps, where)
    preds, order = _order(program, steps, pairs, where)
    return _Interpreter(program, steps, pairs, preds, layout).run(order), layout


class _Interpreter:
    def __init__(self, program, steps, pairs, preds, layout):
        self.p, self.steps, self.preds, self.layout = program, steps, preds, layout
        self.red = layout.reduction
        self.recv_of = {s: r for s, r in pairs}
        self.send_of = {r: s for s, r in pairs}
        ntb = len(steps.tb_index)
        n = len(steps.items)
        self.clock = np.zeros((n, max(ntb, 1)), dtype=np.uint16)
        self.level = np.zeros(n, dtype=np.int64)
        self.state = layout.initial()
        self.writer: dict = {}            # slot -> step that last wrote it
        self.readers: dict = {}           # slot -> steps that read it since
        self.landed: dict = {}            # slot -> transfer whose receipt filled it (reductions)
        self.faults: list[str] = []
        self.in_flight: dict[int, list] = {}
        self.transfer_of_send: dict[int, int] = {}
        self.transfers: list[Transfer] = []

    def fault(self, text: str) -> None:
        self.faults.append(text)

    def before(self, w: int, v: int) -> bool:
        """Whether step ``w`` happens before step ``v`` (vector clocks over thread blocks)."""
        return int(self.clock[v, self.steps.tb[w]]) >= self.steps.pos[w] + 1

    def run(self, order) -> Execution:
        for v in order:
            for p, weight in self.preds[v]:
                np.maximum(self.clock[v], self.clock[p], out=self.clock[v])
                self.level[v] = max(self.level[v], self.level[p] + weight)
            self.clock[v, self.steps.tb[v]] = self.steps.pos[v] + 1
            self._step(v)
        self._check_final()
        for t in self.transfers:
            t.level = int(self.level[t.send_step])
        return Execution(self.transfers, self.faults, int(self.level.max(initial=-1)) + 1)

    # -- buffers
    def _read(self, v: int, rank: int, buf: str, off: int):
        key = self.layout.slot(rank, buf, off)
        w = self.writer.get(key)
        if w is not None and not self.before(w, v):
            self.fault(f"{self.steps.name(v)} reads {buf}[{off}] on rank {rank} while {self.steps.name(w)} "
                       "writes it with no dependency between them (a missing depid)")
        if key not in self.state:
            self.fault(f"{self.steps.name(v)} reads {buf}[{off}] on rank {rank} before any step fills it")
            return key, None
        self.readers.setdefault(key, []).append(v)
        return key, self.state[key]

    def _write(self, v: int, rank: int, buf: str, off: int, value) -> tuple:
        key = self.layout.slot(rank, buf, off)
        w = self.writer.get(key)
        if w is not None and not self.before(w, v):
            self.fault(f"{self.steps.name(v)} writes {buf}[{off}] on rank {rank} while {self.steps.name(w)} "
                       "writes it with no dependency between them (a missing depid)")
        for r in self.readers.get(key, ()):
            if r != v and not self.before(r, v):
                self.fault(f"{self.steps.name(v)} overwrites {buf}[{off}] on rank {rank} while "
                           f"{self.steps.name(r)} reads it with no dependency between them (a missing depid)")
                break
        self.state[key] = value
        self.writer[key] = v
        self.readers[key] = []
        self.landed.pop(key, None)
        return key

    def _add(self, v: int, a, b, rank: int):
        if a is None or b is None:
            return None
        if not self.red:
            self.fault(f"{self.steps.name(v)} reduces in a {self.p.coll}, which has nothing to reduce")
            return a
        (ba, sa), (bb, sb) = a, b
        if ba != bb:
            self.fault(f"{self.steps.name(v)} on rank {rank} adds block {ba} to block {bb} (a wrong offset)")
        elif sa & sb:
            twice = (sa & sb).bit_length() - 1
            self.fault(f"{self.steps.name(v)} on rank {rank} adds two partials of block {ba} that both hold "
                       f"rank {twice}'s contribution: counted twice")
        return (bb, sa | sb)

    # -- one step
    def _step(self, v: int) -> None:
        gpu, tb, step = self.steps.items[v]
        receives, sends, reads, writes, reduces = STEP_TYPES[step.type]
        rank, cnt = gpu.id, step.cnt
        if step.type == "nop":
            return
        incoming: list[Any] = []
        source = -1
        if receives:
            s = self.send_of[v]
            source = self.transfer_of_send[s]
            incoming = self.in_flight.pop(s)
        if reads:
            local = [self._read(v, rank, step.srcbuf, step.srcoff + k)[1] for k in range(cnt)]
            if step.type == "re":
                into = [self._read(v, rank, step.dstbuf, step.dstoff + k) for k in range(cnt)]
                for k, (key, value) in enumerate(into):
                    if key in self.landed:
                        self.transfers[self.landed[key]].kind = "combine"
                    src_key = self.layout.slot(rank, step.srcbuf, step.srcoff + k)
                    if src_key in self.landed:
                        self.transfers[self.landed[src_key]].kind = "combine"
                    self._write(v, rank, step.dstbuf, step.dstoff + k, self._add(v, local[k], value, rank))
                return
        if receives and reduces:
            value = [self._add(v, incoming[k], local[k], rank) for k in range(cnt)]
            self.transfers[source].kind = "combine"
        elif receives:
            value = incoming
        else:
            value = local
        if writes:
            for k in range(cnt):
                key = self._write(v, rank, step.dstbuf, step.dstoff + k, value[k])
                if receives and not reduces:
                    self.landed[key] = source
        if sends:
            forward = -1
            if receives and not reduces and self.red and not _complete(value, self.p.ngpus):
                self.transfers[source].kind = "relay"       # a partial passed on as it came (rcs)
                forward = source
            elif step.type == "s" and self.red:
                forward = self._relayed(rank, step)
            r = self.recv_of[v]
            self.transfer_of_send[v] = len(self.transfers)
            self.transfers.append(Transfer(rank, self.steps.items[r][0].id, list(value), v, r, forward=forward))
            self.in_flight[v] = list(value)

    def _relayed(self, rank: int, step) -> int:
        """The receipt a send from scratch passes on unchanged (a relay hop), or -1."""
        keys = [self.layout.slot(rank, step.srcbuf, step.srcoff + k) for k in range(step.cnt)]
        if step.srcbuf != "s" or any(k not in self.landed for k in keys):
            return -1
        sources = {self.landed[k] for k in keys}
        if len(sources) != 1:
            return -1
        p = sources.pop()
        t = self.transfers[p]
        if t.kind != "copy" or len(t.payload) != step.cnt or [self.state[k] for k in keys] != t.payload \
                or _complete(t.payload, self.p.ngpus):
            return -1
        t.kind = "relay"
        return p

    def _check_final(self) -> None:
        for key, want in self.layout.final():
            have = self.state.get(key)
            if have != want:
                rank, buf, off = key
                self.fault(f"rank {rank} ends with {describe(have, self.red)} at {buf}[{off}], where the "
                           f"{self.p.coll} needs {describe(want, self.red)}")
                return


def _complete(value, n: int) -> bool:
    if isinstance(value, list):
        return all(_complete(x, n) for x in value)
    return value is not None and value[1] == (1 << n) - 1
