"""Write a topocast schedule as an MSCCL++ execution plan (the JSON its executor loads).

The plan follows the format MSCCL++'s executor reads at release v0.10.0 (``ExecutionPlan`` in
``src/core/executor/execution_plan.cc``; docs/interop.md lists the fields).  Layout: rank ``r`` is node
``r``; every plan is out of place (``inplace`` false): a rank first copies its input where the collective
keeps it (all-gather: input ``j`` to output ``r c + j``; all-to-all: its own chunks input ``r c + j`` to output
``r c + j``; broadcast: the root's input to its output; allreduce: the whole input to the output, where the
blocks are then reduced; reduce-scatter: the whole input to scratch, where the blocks are reduced, and at the
end its own blocks ``r c .. r c + c - 1`` from scratch to the output).

Every transfer is a ``put`` over a memory channel into the receiver's buffer: for an all-gather, all-to-all
or broadcast straight into the output slot of a message the receiver keeps and has not received before,
else (reductions, relay hops, chunks a rank only passes on) into fresh scratch, never written twice.  A
rank's operations run in the schedule's step order in one thread block.  It first signals every peer it has a
channel to and waits for each of them (a peer then knows the rank has left the previous run of the plan and
its buffers are free); then step ``k`` is the puts of its sends, a ``nop`` (the block's threads meet), one
``signal`` per receiver, one ``wait`` per sender, a ``nop``, then the local work its receipts need (``re``: a
combine added into the block's partial; ``copy``: a partial taken in place of its own), and a ``nop``.  A
rank whose operations pass the executor's 64 per thread block (or 16 channels or remote buffers per thread
block) continues in the next thread block, which waits for the one before through a device semaphore
(``sem_release`` / ``sem_acquire``).  Memory channels reach ranks of one NVLink/IPC domain; plans across
nodes (port channels) are not written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule
from .msccl_write import _Layout, _runs
from .rankplan import rank_plan

#: the executor's limits (``execution_common.hpp``): operations per thread block, memory channels (and
#: remote buffers) per thread block, channels one operation names, buffers one operation reads or writes
MAX_OPERATIONS, MAX_TB_CHANNELS, MAX_OP_CHANNELS, MAX_OP_BUFFERS = 64, 16, 8, 8
#: thread blocks per rank: a chain whose blocks wait for each other must all be resident at once
MAX_THREAD_BLOCKS = 64
#: the ``collective`` names the executor's plans use
COLLECTIVE = {"allgather": "allgather", "alltoall": "alltoall", "broadcast": "broadcast",
              "allreduce": "allreduce", "reduce-scatter": "reducescatter"}
FORMAT = "mscclpp-json"


@dataclass
class _Rank:
    """What one rank's plan needs: its operations (peers still as ranks) and its scratch size."""

    ops: list[dict] = field(default_factory=list)
    scratch: int = 0

    def scratch_run(self, count: int) -> list[tuple[str, int]]:
        first = self.scratch
        self.scratch += count
        return [("s", first + k) for k in range(count)]


def _buffers(layout: _Layout) -> tuple[int, int]:
    """``(input_chunks, output_chunks)`` of every rank."""
    coll, n, c, m = layout.coll, layout.n, layout.c, layout.nchunks
    if coll == "allgather":
        return c, n * c
    if coll == "reduce-scatter":
        return m, c
    return m, m


def _home(layout: _Layout, rank: int, m: int) -> tuple[str, int] | None:
    """Where ``rank`` keeps message ``m`` for good (None: it only passes it on)."""
    coll = layout.coll
    if coll == "allreduce":
        return "o", m
    if coll == "reduce-scatter":
        return "s", m
    if coll in ("allgather", "broadcast"):
        return "o", int(layout.out_slot[m])
    if rank == int(layout.s.origin[m]):
        return "i", int(layout.in_slot[m])
    if rank == int(layout.target[m]):
        return "o", int(layout.out_slot[m])
    return None


def _local(name: str, src: tuple[str, int], dst: tuple[str, int], size: int,
           extra: tuple[str, int] | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"name": name, "src_buff": [{"type": src[0], "index": src[1], "size": size}],
          "dst_buff": [{"type": dst[0], "index": dst[1], "size": size}]}
    if extra is not None:                    # a reduction's second operand
        op["src_buff"].append({"type": extra[0], "index": extra[1], "size": size})
        op["reduce_op"] = "sum"
    return op


def _initial(layout: _Layout, rank: int, ranks: list[_Rank]) -> list[dict]:
    """The copies that put a rank's input where the plan keeps it."""
    coll, c, m = layout.coll, layout.c, layout.nchunks
    if coll == "allgather":
        return [_local("copy", ("i", 0), ("o", rank * c), c)]
    if coll == "alltoall":
        return [_local("copy", ("i", rank * c), ("o", rank * c), c)]
    if coll == "broadcast":
        return [_local("copy", ("i", 0), ("o", 0), m)] if rank == 0 else []
    if coll == "allreduce":
        return [_local("copy", ("i", 0), ("o", 0), m)]
    ranks[rank].scratch_run(m)              # reduce-scatter: the blocks are reduced in scratch 0 .. m - 1
    return [_local("copy", ("i", 0), ("s", 0), m)]


def _puts(send: list, recv: list, peer: int) -> list[dict]:
    """The ``put`` operations of one transfer: runs consecutive on both sides, one source buffer per put."""
    entries: dict[str, list[tuple[dict, dict]]] = {}
    for first, count in _runs(send, recv):
        s, d = send[first], recv[first]
        entries.setdefault(s[0], []).append(({"type": s[0], "index": s[1], "size": count},
                                             {"_rb": (peer, d[0]), "index": d[1], "size": count}))
    ops = []
    for pairs in entries.values():
        for k in range(0, len(pairs), MAX_OP_BUFFERS):
            part = pairs[k:k + MAX_OP_BUFFERS]
            ops.append({"name": "put", "src_buff": [a for a, _ in part], "dst_buff": [b for _, b in part],
                        "channel_type": "memory"})
    return ops


def _sync(name: str, peers: list[int]) -> list[dict]:
    return [{"name": name, "_peers": peers[k:k + MAX_OP_CHANNELS], "channel_type": "memory"}
            for k in range(0, len(peers), MAX_OP_CHANNELS)]


def rank_operations(schedule: Schedule) -> tuple[_Layout, list[_Rank]]:
    """Per rank its operations in order, peers still named by rank (the module docstring)."""
    layout = _Layout(schedule, FORMAT)
    plan = rank_plan(schedule)
    n, count = schedule.num_nodes, schedule.num_transfers
    reduction = schedule.is_reduction
    relay = schedule.relay_hops
    forward = schedule.forward if schedule.forward is not None else np.full(count, -1, np.int64)
    combine = schedule.combine if schedule.combine is not None else np.zeros(count, bool)
    ranks = [_Rank() for _ in range(n)]
    for r in range(n):
        ranks[r].ops += _initial(layout, r, ranks)
    where: dict[tuple[int, int], tuple[str, int] | None] = {}  # (rank, message) -> where it holds it
    for m in range(schedule.num_messages):
        if layout.coll in ("allreduce", "reduce-scatter"):
            for r in range(n):
                where[(r, m)] = _home(layout, r, m)
        else:
            origin = int(schedule.origin[m])
            where[(origin, m)] = _home(layout, origin, m)
    steps = np.zeros(count, dtype=np.int64)
    for ops in plan.ops:
        for op in ops:
            steps[op.t] = op.step
    send_slots: list = [None] * count
    recv_slots: list = [None] * count
    order = np.lexsort((np.arange(count), steps))
    src, dst = schedule.src.tolist(), schedule.dst.tolist()
    for group in np.split(order, np.flatnonzero(np.diff(steps[order])) + 1):
        group = group.tolist()
        for t in group:                     # where each transfer reads and writes, in step order
            u, v = src[t], dst[t]
            msgs = plan.messages[t].tolist()
            send_slots[t] = recv_slots[forward[t]] if forward[t] >= 0 else [where[(u, m)] for m in msgs]
            direct = not reduction and not relay[t]
            slots: list[tuple[str, int] | None] = [None] * len(msgs)
            for j, m in enumerate(msgs):
                home = _home(layout, v, m) if direct else None
                if home is not None and home[0] == "o" and (v, m) not in where:
                    slots[j] = home
            fresh = iter(ranks[v].scratch_run(sum(s is None for s in slots)))
            recv_slots[t] = [s if s is not None else next(fresh) for s in slots]
        for t in group:
            if not reduction and not relay[t]:
                for m, slot in zip(plan.messages[t].tolist(), recv_slots[t], strict=True):
                    where.setdefault((dst[t], m), slot)
        sends: dict[int, list[int]] = {}
        recvs: dict[int, list[int]] = {}
        for t in group:
            sends.setdefault(src[t], []).append(t)
            recvs.setdefault(dst[t], []).append(t)
        for r in sorted(set(sends) | set(recvs)):
            _step_ops(r, sends.get(r, []), recvs.get(r, []), schedule, plan, layout, ranks[r], send_slots,
                      recv_slots, combine, relay)
    if layout.coll == "reduce-scatter":
        for r in range(n):
            ranks[r].ops += [{"name": "nop"}, _local("copy", ("s", r * layout.c), ("o", 0), layout.c)]
    for state in ranks:                       # first every peer says it is in this run (it is done with the last)
        peers = sorted({p for op in state.ops for p in op.get("_peers", ())})
        if peers:
            state.ops[:0] = _sync("signal", peers) + _sync("wait", peers) + [{"name": "nop"}]
    return layout, ranks


def _step_ops(r: int, sends: list[int], recvs: list[int], schedule: Schedule, plan, layout: _Layout, rank: _Rank,
              send_slots: list, recv_slots: list, combine: np.ndarray, relay: np.ndarray) -> None:
    """One step of rank ``r``: puts, signals, waits, then the local work of its receipts."""
    if not sends and not recvs:
        return
    ops = rank.ops
    if ops and ops[-1]["name"] != "nop":
        ops.append({"name": "nop"})          # what the block wrote before is complete for every thread
    for t in sends:
        ops += _puts(send_slots[t], recv_slots[t], int(schedule.dst[t]))
    if sends:
        ops.append({"name": "nop"})
        ops += _sync("signal", sorted({int(schedule.dst[t]) for t in sends}))
    if recvs:
        ops += _sync("wait", sorted({int(schedule.src[t]) for t in recvs}))
        ops.append({"name": "nop"})
    if not schedule.is_reduction:
        return
    for t in recvs:
        if relay[t]:
            continue                          # a relay hop: the partial stays in scratch for the next hop
        homes: list[Any] = [_home(layout, r, m) for m in plan.messages[t].tolist()]
        got = recv_slots[t]
        for first, n in _runs(homes, got):
            if combine[t]:
                ops.append(_local("re", homes[first], homes[first], n, extra=got[first]))
            else:
                ops.append(_local("copy", got[first], homes[first], n))


def _peers_of(op: dict) -> tuple[set, set]:
    """The peers whose channels (signal, wait) and the (peer, buffer)s that (put) ``op`` names."""
    if "_peers" in op:
        return set(op["_peers"]), set()
    if op["name"] == "put":
        return set(), {b["_rb"] for b in op["dst_buff"]}
    return set(), set()


def _pack(rank: int, ops: list[dict]) -> list[tuple[list[dict], set, set]]:
    """Split a rank's operations into a chain of thread blocks within the executor's limits: per thread block
    its operations, the peers of its channels and its remote buffers."""
    blocks: list[tuple[list[dict], set, set]] = [([], set(), set())]
    for op in ops:
        c, b = _peers_of(op)
        block, chans, rbs = blocks[-1]
        head = 2 if len(blocks) > 1 else 0
        if block and (len(block) + 1 + 2 > MAX_OPERATIONS - head or len(chans | c) > MAX_TB_CHANNELS
                      or len(rbs | b) > MAX_TB_CHANNELS):
            blocks.append(([], set(), set()))
            block, chans, rbs = blocks[-1]
        block.append(op)
        chans |= c
        rbs |= b
    if len(blocks) > MAX_THREAD_BLOCKS:
        raise TopocastError(f"export {FORMAT}: rank {rank} needs {len(blocks)} thread blocks of at most "
                            f"{MAX_OPERATIONS} operations, over the limit of {MAX_THREAD_BLOCKS} (a chain of thread "
                            "blocks that wait for each other must all be resident at once)")
    for j, (block, _, _) in enumerate(blocks):   # thread block j waits for j - 1 through semaphore j - 1
        if j > 0:
            block[:0] = [{"name": "sem_acquire", "semaphore_ids": [j - 1]}, {"name": "nop"}]
        if j < len(blocks) - 1:
            if block[-1]["name"] != "nop":
                block.append({"name": "nop"})
            block.append({"name": "sem_release", "semaphore_ids": [j]})
    return blocks


def _gpu(rank: int, layout: _Layout, state: _Rank) -> dict:
    blocks = _pack(rank, state.ops)
    peers = sorted(set().union(*(chans for _, chans, _ in blocks)))
    channel_of = {p: i for i, p in enumerate(peers)}
    remote = sorted(set().union(*(rbs for _, _, rbs in blocks)))
    buffer_of = {rb: i for i, rb in enumerate(remote)}
    threadblocks = []
    for j, (block, chans, rbs) in enumerate(blocks):
        tb_peers, tb_rbs = sorted(chans), sorted(rbs)
        local_channel = {p: i for i, p in enumerate(tb_peers)}
        local_buffer = {rb: i for i, rb in enumerate(tb_rbs)}
        ops = []
        for op in block:
            if "_peers" in op:
                op = {"name": op["name"], "channel_ids": [local_channel[p] for p in op["_peers"]],
                      "channel_type": "memory"}
            elif op["name"] == "put":
                op = dict(op, dst_buff=[{"buffer_id": local_buffer[b["_rb"]], "index": b["index"],
                                         "size": b["size"]} for b in op["dst_buff"]])
            ops.append(op)
        threadblocks.append({
            "id": j, "ops": ops,
            "channels": [{"channel_type": "memory", "channel_ids": [channel_of[p] for p in tb_peers]}]
            if tb_peers else [],
            "remote_buffer_refs": [{"access_channel_type": "memory",
                                    "remote_buffer_ids": [buffer_of[rb] for rb in tb_rbs]}] if tb_rbs else []})
    inputs, outputs = _buffers(layout)
    return {"id": rank, "input_chunks": inputs, "output_chunks": outputs, "scratch_chunks": state.scratch,
            "threadblocks": threadblocks,
            "channels": [{"channel_type": "memory", "connected_to": peers}] if peers else [],
            "remote_buffers": [{"rank": p, "type": b, "access_channel_types": ["memory"]} for p, b in remote],
            "semaphores": [{"init_value": 0} for _ in range(len(blocks) - 1)]}


def to_plan(schedule: Schedule, name: str = "topocast", min_bytes: int = 0, max_bytes: int = (1 << 64) - 1) -> dict:
    """The MSCCL++ execution plan of ``schedule`` as a dict (the module docstring).

    Raises
    ------
    TopocastError
        A collective with no MSCCL form, a layout it cannot hold, or an executor limit passed (named).
    """
    if not 0 <= int(min_bytes) <= int(max_bytes) < 1 << 64:
        raise TopocastError("export mscclpp-json: need 0 <= min_bytes <= max_bytes < 2**64")
    layout, ranks = rank_operations(schedule)
    return {"name": name, "collective": COLLECTIVE[layout.coll], "protocol": "Simple", "inplace": False,
            "reuse_resources": False, "gpus": [_gpu(r, layout, state) for r, state in enumerate(ranks)],
            "num_threads_per_block": 1024, "use_double_scratch_buffer": False, "buffer_alignment": 16,
            "min_message_size": int(min_bytes), "max_message_size": int(max_bytes)}


def write(schedule: Schedule, path: str | Path, name: str = "topocast") -> Path:
    """Write :func:`to_plan` of ``schedule`` to ``path`` (JSON) atomically."""
    from ..infra.fileio import atomic_write

    return atomic_write(path, json.dumps(to_plan(schedule, name=name), indent=1) + "\n")
