"""Write a topocast schedule as an MSCCL XML algorithm the MSCCL executor loads.

Layout (what :mod:`topocast.interop.msccl_format` reads back): rank ``r`` is node ``r``; ``nchunksperloop``
is the schedule's chunks per loop (all-gather and reduce-scatter: ``N c``, all-to-all ``N c``, broadcast
``c``, allreduce the blocks); all-gather in place (chunk ``j`` of rank ``r`` at output ``r c + j``),
broadcast, allreduce and reduce-scatter in place on the input buffer, all-to-all out of place (input
``d c + j`` of rank ``r`` to output ``r c + j`` of rank ``d``, a rank's own chunks by a local copy); chunks a
rank only passes on go to scratch.
Every transfer is a send in the sender's thread block for that peer and a receive (``r``, or ``rrc`` for a
reduction's combine) in the receiver's thread block for the sender; the connection ``u -> v`` uses channel
``((v - u) mod N) // 16``, so no channel holds more than 32 thread blocks on a rank.  Each step waits, through
``depid``/``deps`` (and ``nop`` steps where it waits for several thread blocks), for the operations
:mod:`topocast.interop.rankplan` names.  Executor limits are refused with the limit named: 256 steps per
thread block, 32 thread blocks per channel, 216 thread blocks per rank, 32 channels; a run of more than 71
chunks is split.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import TopocastError
from ..plans.schedule import Schedule
from .msccl_format import MAX_CHANNELS, MAX_COUNT, MAX_STEPS, MAX_TBS_PER_CHANNEL, MAX_TBS_WRITTEN
from .rankplan import RankPlan, rank_plan

#: MSCCL ``coll`` of each collective topocast writes
COLL = {"allgather": "allgather", "alltoall": "alltoall", "broadcast": "broadcast", "allreduce": "allreduce",
        "reduce-scatter": "reducescatter"}
#: peers per channel and direction (two directions: at most 32 thread blocks on a channel)
PEERS_PER_CHANNEL = MAX_TBS_PER_CHANNEL // 2


def _index_within(keys: np.ndarray) -> np.ndarray:
    """Per item, its rank among the items with the same key, in id order."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    run = np.arange(len(keys)) - np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = run
    return out


class _Layout:
    """Buffers and slots of every message at every rank (the module docstring)."""

    def __init__(self, s: Schedule, fmt: str = "msccl-xml"):
        n, m = s.num_nodes, s.num_messages
        self.s, self.n = s, n
        coll = s.collective
        if coll not in COLL:
            raise TopocastError(f"export {fmt}: a {coll} has no MSCCL collective (it writes "
                                f"{', '.join(COLL)})")
        origin = np.asarray(s.origin, dtype=np.int64)
        self.scratch: dict[tuple[int, int], int] = {}
        self.s_chunks = np.zeros(n, dtype=np.int64)
        if coll == "allgather":
            per = np.bincount(origin, minlength=n)
            if not np.all(per == per[0]) or per[0] == 0:
                raise TopocastError(f"export {fmt}: an all-gather needs the same number of chunks from every "
                                    "rank")
            self.c = int(per[0])
            self.nchunks = n * self.c
            self.out_slot = origin * self.c + _index_within(origin)
        elif coll == "broadcast":
            if len(np.unique(origin)) != 1 or int(origin[0]) != 0:
                raise TopocastError(f"export {fmt}: an MSCCL broadcast has its root at rank 0; this schedule's "
                                    f"root is node {int(origin[0]) if m else 0}")
            self.c = self.nchunks = m
            self.out_slot = np.arange(m, dtype=np.int64)
        elif coll == "alltoall":
            target = np.asarray(s.targets, dtype=np.int64)
            pair = origin * n + target
            per = np.bincount(pair, minlength=n * n)
            offdiag = per.reshape(n, n)[~np.eye(n, dtype=bool)]
            diag = np.diag(per.reshape(n, n))
            if not np.all(offdiag == offdiag[0]) or not (np.all(diag == 0) or np.all(diag == offdiag[0])):
                raise TopocastError(f"export {fmt}: an all-to-all needs the same number of chunks between every "
                                    "two distinct ranks (and from a rank to itself that many or none)")
            self.c = int(offdiag[0])
            self.nchunks = n * self.c
            j = _index_within(pair)
            self.target = target
            self.in_slot = target * self.c + j
            self.out_slot = origin * self.c + j
        else:
            self.nchunks = m
            self.c = m // n if coll == "reduce-scatter" else m
            if coll == "reduce-scatter" and (m % n or np.any(np.asarray(s.targets) != np.repeat(np.arange(n), m // n))):
                raise TopocastError(f"export {fmt}: a reduce-scatter needs block b on rank b // (blocks / N)")
        self.coll = coll

    def home(self, rank: int, m: int) -> tuple[str, int] | None:
        """Where ``rank`` keeps message ``m`` for good (None: only in passing, in scratch)."""
        coll = self.coll
        if coll in ("allreduce", "reduce-scatter"):
            return "i", m
        if coll == "allgather":
            return "o", int(self.out_slot[m])
        if coll == "broadcast":
            return "i", m
        if rank == int(self.s.origin[m]):
            return "i", int(self.in_slot[m])
        if rank == int(self.target[m]):
            return "o", int(self.out_slot[m])
        return None

    def scratch_slot(self, rank: int, key: int) -> tuple[str, int]:
        if (rank, key) not in self.scratch:
            self.scratch[(rank, key)] = int(self.s_chunks[rank])
            self.s_chunks[rank] += 1
        return "s", self.scratch[(rank, key)]

    def scratch_run(self, rank: int, count: int) -> list[tuple[str, int]]:
        """``count`` fresh consecutive scratch chunks of ``rank``."""
        first = int(self.s_chunks[rank])
        self.s_chunks[rank] += count
        return [("s", first + k) for k in range(count)]


def _slots(plan: RankPlan, layout: _Layout):
    """Per transfer, the sender's and the receiver's (buffer, offset) of every chunk it carries."""
    s = plan.schedule
    count = s.num_transfers
    relay = s.relay_hops
    forward = s.forward if s.forward is not None else np.full(count, -1, np.int64)
    send_slots: list = [None] * count
    recv_slots: list = [None] * count
    order = np.lexsort((np.arange(count), _step(plan)))
    for t in order.tolist():
        u, v = int(s.src[t]), int(s.dst[t])
        msgs = plan.messages[t].tolist()
        if forward[t] >= 0:
            send_slots[t] = recv_slots[forward[t]]
        else:
            send_slots[t] = [layout.home(u, m) or layout.scratch_slot(u, m) for m in msgs]
        if relay[t]:
            recv_slots[t] = layout.scratch_run(v, len(msgs))
        else:
            recv_slots[t] = [layout.home(v, m) or layout.scratch_slot(v, m) for m in msgs]
    return send_slots, recv_slots


def _step(plan: RankPlan) -> np.ndarray:
    steps = np.zeros(plan.schedule.num_transfers, dtype=np.int64)
    for ops in plan.ops:
        for op in ops:
            steps[op.t] = op.step
    return steps


def _runs(src: list, dst: list) -> list[tuple[int, int]]:
    """(first index, count) of the runs where both sides' slots are consecutive in one buffer, each at most
    ``MAX_COUNT - 1`` chunks."""
    runs: list[list[int]] = []
    for k in range(len(src)):
        if runs and runs[-1][1] < MAX_COUNT - 1:
            a, b = src[k - 1], dst[k - 1]
            if src[k] == (a[0], a[1] + 1) and dst[k] == (b[0], b[1] + 1):
                runs[-1][1] += 1
                continue
        runs.append([k, 1])
    return [(a, c) for a, c in runs]


def _pieces(total: int) -> list[tuple[int, int]]:
    return [(k, min(MAX_COUNT - 1, total - k)) for k in range(0, total, MAX_COUNT - 1)]


def _shift(slot, k: int):
    return slot[0], slot[1] + k


def _wire(t: int, src: list, dst: list, combine: bool, reduction: bool, layout: _Layout, u: int, v: int):
    """(sender's steps, receiver's steps) of transfer ``t``, each ``(type, src, dst, cnt)``.

    A reduction sends each run of chunks consecutive on both sides as it is (``rrc`` for a combine).  Other
    collectives send one message of the whole transfer: chunks not consecutive at the sender are first copied
    into consecutive scratch, and at the receiver received into scratch and copied where they belong."""
    if reduction:
        kind = "rrc" if combine else "r"
        sends, recvs = [], []
        for first, cnt in _runs(src, dst):
            sends.append(("s", src[first], dst[first], cnt))
            recvs.append((kind, dst[first] if combine else src[first], dst[first], cnt))
        return sends, recvs
    total = len(src)
    sends, recvs = [], []
    src_runs, dst_runs = _runs(src, src), _runs(dst, dst)
    out_from = src[0]
    if len(src_runs) > 1:
        out_from = layout.scratch_run(u, total)[0]
        for first, cnt in src_runs:
            sends.append(("cpy", src[first], _shift(out_from, first), cnt))
    into = dst[0]
    if len(dst_runs) > 1:
        into = layout.scratch_run(v, total)[0]
    for first, cnt in _pieces(total):
        sends.append(("s", _shift(out_from, first), _shift(into, first), cnt))
        recvs.append(("r", _shift(out_from, first), _shift(into, first), cnt))
    if len(dst_runs) > 1:
        for first, cnt in dst_runs:
            recvs.append(("cpy", _shift(into, first), dst[first], cnt))
    return sends, recvs


def to_xml(schedule: Schedule, name: str = "topocast", proto: str = "Simple", min_bytes: int = 0,
           max_bytes: int = 1 << 40) -> str:
    """The MSCCL XML document of ``schedule`` (the module docstring).

    Raises
    ------
    TopocastError
        A collective MSCCL has no form for, a layout it cannot hold, or an executor limit passed (named).
    """
    if proto not in ("Simple", "LL", "LL128"):
        raise TopocastError(f"proto: must be Simple, LL or LL128, got '{proto}'")
    layout = _Layout(schedule)
    plan = rank_plan(schedule)
    send_slots, recv_slots = _slots(plan, layout)
    n = schedule.num_nodes
    combine = schedule.combine if schedule.combine is not None else np.zeros(schedule.num_transfers, bool)
    relay = schedule.relay_hops
    algo = ET.Element("algo", {
        "name": name, "proto": proto, "nchannels": "0", "nchunksperloop": str(layout.nchunks), "ngpus": str(n),
        "coll": COLL[schedule.collective], "inplace": "0" if layout.coll == "alltoall" else "1",
        "outofplace": "1" if layout.coll == "alltoall" else "0", "minBytes": str(int(min_bytes)),
        "maxBytes": str(int(max_bytes))})
    if schedule.is_reduction:
        algo.set("redop", "sum")
    wire = [_wire(t, send_slots[t], recv_slots[t], combine[t] and not relay[t], schedule.is_reduction, layout,
                  int(schedule.src[t]), int(schedule.dst[t])) for t in range(schedule.num_transfers)]
    channels = 1
    for rank in range(n):
        gpu_el, used = _gpu(rank, plan, layout, wire)
        channels = max(channels, used)
        algo.append(gpu_el)
    if channels > MAX_CHANNELS:
        raise TopocastError(f"export msccl-xml: {channels} channels, over the executor's limit of {MAX_CHANNELS}")
    algo.set("nchannels", str(channels))
    ET.indent(algo, "  ")
    return ET.tostring(algo, encoding="unicode") + "\n"


def _gpu(rank: int, plan: RankPlan, layout: _Layout, wire):
    n = layout.n
    ops = plan.ops[rank]
    keys = sorted({(op.kind, op.peer) for op in ops}, key=lambda k: (k[1], k[0] != "send"))
    tb_of = {k: i for i, k in enumerate(keys)}
    # pass 1: the steps of every operation, positions (nops first for every dependency but the last)
    pieces, place, length = [], [], [0] * len(keys)
    for op in ops:
        tb = tb_of[(op.kind, op.peer)]
        cross = [d for d in op.deps if tb_of[(ops[d].kind, ops[d].peer)] != tb]
        length[tb] += max(0, len(cross) - 1)
        start = length[tb]
        body = wire[op.t][0 if op.kind == "send" else 1]
        length[tb] += len(body)
        pieces.append((body, cross))
        place.append((tb, start, length[tb] - 1))
    for (kind, peer), tb in tb_of.items():
        if length[tb] > MAX_STEPS:
            verb = "sending to" if kind == "send" else "receiving from"
            raise TopocastError(f"export msccl-xml: rank {rank}'s thread block {verb} rank {peer} needs {length[tb]} "
                                f"steps, over the executor's limit of {MAX_STEPS} steps per thread block")
    signals = {(place[d][0], place[d][2]) for body, cross in pieces for d in cross}
    steps: list[list[dict]] = [[] for _ in keys]
    for (body, cross), (tb, _, _) in zip(pieces, place, strict=True):
        waits = [(place[d][0], place[d][2]) for d in cross]
        for dep in waits[:-1]:
            steps[tb].append(_attrs("nop", ("i", 0), ("i", 0), 0, dep))
        for k, (kind, src, dst, cnt) in enumerate(body):
            steps[tb].append(_attrs(kind, src, dst, cnt, waits[-1] if (k == 0 and waits) else None))
    gpu_chunks = {"i_chunks": 0, "o_chunks": 0}
    if layout.coll == "allgather":
        gpu_chunks = {"i_chunks": layout.c, "o_chunks": layout.nchunks}
    elif layout.coll == "alltoall" or layout.coll == "broadcast":
        gpu_chunks = {"i_chunks": layout.nchunks, "o_chunks": layout.nchunks}
    else:
        gpu_chunks = {"i_chunks": layout.nchunks, "o_chunks": 0}
    gpu = ET.Element("gpu", {"id": str(rank), **{k: str(v) for k, v in gpu_chunks.items()},
                             "s_chunks": str(int(layout.s_chunks[rank]))})
    used = 0
    per_channel: dict[int, int] = {}
    for (kind, peer), tb in tb_of.items():
        chan = ((peer - rank) % n if kind == "send" else (rank - peer) % n) // PEERS_PER_CHANNEL
        per_channel[chan] = per_channel.get(chan, 0) + 1
        used = max(used, chan + 1)
        tb_el = ET.SubElement(gpu, "tb", {"id": str(tb), "send": str(peer if kind == "send" else -1),
                                          "recv": str(peer if kind == "recv" else -1), "chan": str(chan)})
        for s, attrs in enumerate(steps[tb]):
            attrs["s"] = str(s)
            attrs["hasdep"] = "1" if (tb, s) in signals else "0"
            ET.SubElement(tb_el, "step", {k: attrs[k] for k in
                                          ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid",
                                           "deps", "hasdep")})
    if layout.coll == "alltoall":               # the rank's own chunks: input r c + j to output r c + j
        tb_el = ET.SubElement(gpu, "tb", {"id": str(len(keys)), "send": "-1", "recv": "-1", "chan": "0"})
        first = rank * layout.c
        for s, k in enumerate(range(0, layout.c, MAX_COUNT - 1)):
            cnt = min(MAX_COUNT - 1, layout.c - k)
            attrs = _attrs("cpy", ("i", first + k), ("o", first + k), cnt, None)
            ET.SubElement(tb_el, "step", {"s": str(s), **attrs, "hasdep": "0"})
        per_channel[0] = per_channel.get(0, 0) + 1
    total = sum(per_channel.values())
    if total > MAX_TBS_WRITTEN:
        raise TopocastError(f"export msccl-xml: rank {rank} needs {total} thread blocks, over the limit of "
                            f"{MAX_TBS_WRITTEN} thread blocks per rank (RCCL's MSCCL executor)")
    if max(per_channel.values(), default=0) > MAX_TBS_PER_CHANNEL:
        raise TopocastError(f"export msccl-xml: rank {rank} needs more than {MAX_TBS_PER_CHANNEL} thread blocks on "
                            "one channel, over the executor's limit")
    return gpu, used


def _attrs(kind: str, src, dst, cnt: int, dep) -> dict:
    return {"type": kind, "srcbuf": src[0], "srcoff": str(src[1]), "dstbuf": dst[0], "dstoff": str(dst[1]),
            "cnt": str(cnt), "depid": str(dep[0]) if dep else "-1", "deps": str(dep[1]) if dep else "-1"}


def write(schedule: Schedule, path: str | Path, **options) -> Path:
    """Write :func:`to_xml` of ``schedule`` to ``path`` atomically."""
    from ..infra.fileio import atomic_write

    return atomic_write(path, to_xml(schedule, **options))
