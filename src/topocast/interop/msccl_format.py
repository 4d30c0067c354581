"""MSCCL XML algorithms: the document read into plain records and checked against the executor's rules.

An algorithm is ``<algo>`` with one ``<gpu>`` per rank, each with thread blocks ``<tb>`` (one send peer,
one receive peer, one channel) whose ``<step>`` elements run in order.  Every attribute the MSCCL executor
reads is mandatory here: ``algo``: ``name`` (optional), ``ngpus``, ``nchunksperloop``, ``nchannels``,
``proto`` (Simple, LL, LL128), ``coll``, ``minBytes``, ``maxBytes``, ``inplace``, ``outofplace``;
``gpu``: ``id``, ``i_chunks``, ``o_chunks``, ``s_chunks``; ``tb``: ``id``, ``send``, ``recv``, ``chan``;
``step``: ``s``, ``type``, ``srcbuf``, ``srcoff``, ``dstbuf``, ``dstoff``, ``cnt``, ``depid``, ``deps``,
``hasdep``.  A document that breaks a rule the executor would hit at run time (or would hang on) is
refused with one line naming the element and the rule.  A lenient read (``strict=False``) accepts what older
MSCCL tools wrote: no ``minBytes``, ``maxBytes``, ``inplace`` or ``outofplace`` (values taken and noted), a
local thread block on channel -1, and a connection several thread blocks use in an order their
dependencies fix.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TopocastError

#: step type -> (receives, sends, reads src, writes dst, reduces)
STEP_TYPES = {
    "s": (False, True, True, False, False), "r": (True, False, False, True, False),
    "rcs": (True, True, False, True, False), "rrs": (True, True, True, False, True),
    "rrc": (True, False, True, True, True), "rrcs": (True, True, True, True, True),
    "cpy": (False, False, True, True, False), "re": (False, False, True, True, True),
    "nop": (False, False, False, False, False),
}
#: the long names of the step types (recv-reduce-copy-send ...)
STEP_NAMES = {"s": "send", "r": "recv", "rcs": "recv-copy-send", "rrs": "recv-reduce-send",
              "rrc": "recv-reduce-copy", "rrcs": "recv-reduce-copy-send", "cpy": "copy", "re": "reduce",
              "nop": "nop"}
BUFFERS = ("i", "o", "s")
PROTOCOLS = ("Simple", "LL", "LL128")
#: MSCCL ``coll`` -> topocast collective
COLLECTIVES = {"allgather": "allgather", "alltoall": "alltoall", "broadcast": "broadcast",
               "allreduce": "allreduce", "reducescatter": "reduce-scatter"}
#: executor limits (MSCCL's msccl struct header): steps per thread block, thread blocks per channel,
#: chunks one step may move (count must stay below it), channels
MAX_STEPS, MAX_TBS_PER_CHANNEL, MAX_COUNT, MAX_CHANNELS = 256, 32, 72, 32
#: thread blocks per rank: msccl-executor-nccl takes 32 x 32, RCCL's MSCCL 108 x 2; the reader refuses what no
#: executor takes, the writer stays within both
MAX_TBS_READ, MAX_TBS_WRITTEN = 1024, 216

ALGO_ATTRS = ("ngpus", "nchunksperloop", "nchannels", "proto", "coll", "minBytes", "maxBytes", "inplace",
              "outofplace")
GPU_ATTRS = ("id", "i_chunks", "o_chunks", "s_chunks")
TB_ATTRS = ("id", "send", "recv", "chan")
STEP_ATTRS = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")
#: ``algo`` attributes that only say when the executor picks the algorithm (older MSCCL tools left them out):
#: a lenient read takes these values and says so
SELECTION_DEFAULTS = {"minBytes": "0", "maxBytes": "0", "outofplace": "0", "inplace": "1"}
#: the most elements a document may hold (a guard against a huge file)
MAX_ELEMENTS = 5_000_000


@dataclass
class Step:
    s: int
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int
    deps: int
    hasdep: int


@dataclass
class ThreadBlock:
    id: int
    send: int
    recv: int
    chan: int
    steps: list[Step] = field(default_factory=list)


@dataclass
class Gpu:
    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    tbs: list[ThreadBlock] = field(default_factory=list)

    def chunks(self, buf: str) -> int:
        return {"i": self.i_chunks, "o": self.o_chunks, "s": self.s_chunks}[buf]


@dataclass
class Program:
    """An MSCCL algorithm as read: the ``algo`` attributes and one :class:`Gpu` per rank (index = id)."""

    name: str
    ngpus: int
    nchunksperloop: int
    nchannels: int
    proto: str
    coll: str
    min_bytes: int
    max_bytes: int
    inplace: bool
    outofplace: bool
    gpus: list[Gpu]
    redop: str = "sum"
    #: what a lenient read took the liberty of (attributes the executor needs, absent)
    notes: list[str] = field(default_factory=list)

    @property
    def collective(self) -> str:
        return COLLECTIVES[self.coll]


def _int(el: ET.Element, name: str, where: str) -> int:
    text = el.get(name)
    if text is None:
        raise TopocastError(f"{where}: missing mandatory attribute '{name}'")
    try:
        return int(text.strip())
    except ValueError:
        raise TopocastError(f"{where}: attribute '{name}' must be an integer, got {text[:40]!r}") from None


def _str(el: ET.Element, name: str, where: str) -> str:
    text = el.get(name)
    if text is None:
        raise TopocastError(f"{where}: missing mandatory attribute '{name}'")
    return text


def parse_text(text: bytes | str, where: str = "msccl", strict: bool = True) -> Program:
    """Parse and check an MSCCL XML document (see the module docstring); ``where`` prefixes every error.
    ``strict=False`` reads a document without the ``algo`` attributes that only select when the executor
    uses it (:data:`SELECTION_DEFAULTS`, as older MSCCL tools wrote them), noting each in ``Program.notes``."""
    raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        raise TopocastError(f"{where}: a DOCTYPE or ENTITY declaration is refused (MSCCL algorithms have none)")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        raise TopocastError(f"{where}: not well-formed XML ({exc})") from None
    except (ValueError, RecursionError) as exc:
        raise TopocastError(f"{where}: not readable XML ({type(exc).__name__})") from None
    if root.tag != "algo":
        raise TopocastError(f"{where}: the root element must be <algo>, got <{root.tag[:40]}>")
    return _program(root, where, strict)


def read_program(path: str | Path, max_bytes: float | None = None, strict: bool = True) -> Program:
    """Read and check the MSCCL XML file at ``path``."""
    from ..infra.fileio import check_input_file
    from ..infra.memory import default_limit

    limit = default_limit() if max_bytes is None else max_bytes
    checked = check_input_file(path, "msccl file", max_bytes=limit / 64)
    try:
        raw = Path(checked).read_bytes()
    except OSError as exc:
        raise TopocastError(f"msccl file {path}: cannot be read ({exc.strerror})") from None
    return parse_text(raw, f"msccl file {path}", strict)


def _program(root: ET.Element, where: str, strict: bool = True) -> Program:
    w = f"{where}: <algo>"
    notes = []
    for name in ALGO_ATTRS:
        if root.get(name) is None:
            if strict or name not in SELECTION_DEFAULTS:
                hint = " (--lenient checks the algorithm anyway)" if name in SELECTION_DEFAULTS else ""
                raise TopocastError(f"{w}: missing mandatory attribute '{name}'{hint}")
            root.set(name, SELECTION_DEFAULTS[name])
            notes.append(f"the MSCCL executor refuses this file: <algo> has no '{name}' (read as "
                         f"{SELECTION_DEFAULTS[name]})")
    ngpus, nchunks, nchannels = (_int(root, k, w) for k in ("ngpus", "nchunksperloop", "nchannels"))
    if ngpus < 2 or nchunks < 1:
        raise TopocastError(f"{w}: 'ngpus' must be >= 2 and 'nchunksperloop' >= 1, got {ngpus} and {nchunks}")
    if not 1 <= nchannels <= MAX_CHANNELS:
        raise TopocastError(f"{w}: 'nchannels' must be in 1..{MAX_CHANNELS} (the executor's channel limit)")
    proto, coll = root.get("proto", ""), root.get("coll", "")  # both present: checked above
    if proto not in PROTOCOLS:
        raise TopocastError(f"{w}: 'proto' must be one of {', '.join(PROTOCOLS)}, got {proto[:40]!r}")
    if coll not in COLLECTIVES:
        raise TopocastError(f"{w}: 'coll' {coll[:40]!r} is not one topocast verifies "
                            f"({', '.join(COLLECTIVES)})")
    flags = {k: _int(root, k, w) for k in ("inplace", "outofplace")}
    for k, v in flags.items():
        if v not in (0, 1):
            raise TopocastError(f"{w}: '{k}' must be 0 or 1, got {v}")
    if not (flags["inplace"] or flags["outofplace"]):
        raise TopocastError(f"{w}: one of 'inplace' and 'outofplace' must be 1 (else the executor never runs it)")
    lo, hi = _int(root, "minBytes", w), _int(root, "maxBytes", w)
    if lo < 0 or hi < 0:
        raise TopocastError(f"{w}: 'minBytes' and 'maxBytes' must be >= 0")
    gpus: dict[int, Gpu] = {}
    count = 0
    for el in root:
        if el.tag != "gpu":
            continue
        gpu = _gpu(el, where, ngpus, nchannels, strict)
        count += 1 + sum(1 + len(tb.steps) for tb in gpu.tbs)
        if count > MAX_ELEMENTS:
            raise TopocastError(f"{where}: more than {MAX_ELEMENTS:,} elements")
        if gpu.id in gpus:
            raise TopocastError(f"{where}: <gpu id={gpu.id}>: the id appears twice")
        gpus[gpu.id] = gpu
    missing = sorted(set(range(ngpus)) - set(gpus))
    if missing:
        raise TopocastError(f"{w}: ngpus is {ngpus} but <gpu id={missing[0]}> is missing")
    program = Program(root.get("name", ""), ngpus, nchunks, nchannels, proto, coll, lo, hi,
                      bool(flags["inplace"]), bool(flags["outofplace"]), [gpus[g] for g in range(ngpus)],
                      root.get("redop", "sum"), notes)
    _check_connections(program, where, strict)
    return program


def _gpu(el: ET.Element, where: str, ngpus: int, nchannels: int, strict: bool = True) -> Gpu:
    w = f"{where}: <gpu id={el.get('id')}>"
    gid, i, o, s = (_int(el, k, w) for k in GPU_ATTRS)
    if not 0 <= gid < ngpus:
        raise TopocastError(f"{w}: 'id' must be a rank in 0..{ngpus - 1}")
    if min(i, o, s) < 0:
        raise TopocastError(f"{w}: 'i_chunks', 'o_chunks' and 's_chunks' must be >= 0")
    gpu = Gpu(gid, i, o, s)
    for tb_el in el:
        if tb_el.tag == "tb":
            gpu.tbs.append(_tb(tb_el, f"{where}: <gpu id={gid}>", gpu, ngpus, nchannels, strict))
    ids = sorted(tb.id for tb in gpu.tbs)
    if ids != list(range(len(ids))):
        dup = next((a for a, b in zip(ids, ids[1:], strict=False) if a == b), None)
        rule = f"tb id {dup} appears twice" if dup is not None else \
            f"tb ids must be 0..{len(ids) - 1} without a gap (the executor refuses a missing thread block)"
        raise TopocastError(f"{w}: {rule}")
    gpu.tbs.sort(key=lambda tb: tb.id)
    if len(gpu.tbs) > MAX_TBS_READ:
        raise TopocastError(f"{w}: {len(gpu.tbs)} thread blocks, over the executors' limit of {MAX_TBS_READ}")
    per_channel: dict[int, int] = {}
    for tb in gpu.tbs:
        per_channel[tb.chan] = per_channel.get(tb.chan, 0) + 1
        if per_channel[tb.chan] > MAX_TBS_PER_CHANNEL:
            raise TopocastError(f"{w}: more than {MAX_TBS_PER_CHANNEL} thread blocks on channel {tb.chan} "
                                "(the executor's limit of thread blocks per channel)")
    return gpu


def _tb(el: ET.Element, where: str, gpu: Gpu, ngpus: int, nchannels: int, strict: bool = True) -> ThreadBlock:
    w = f"{where} <tb id={el.get('id')}>"
    tid, send, recv, chan = (_int(el, k, w) for k in TB_ATTRS)
    if tid < 0:
        raise TopocastError(f"{w}: 'id' must be >= 0")
    for name, peer in (("send", send), ("recv", recv)):
        if not -1 <= peer < ngpus or peer == gpu.id:
            raise TopocastError(f"{w}: '{name}' must be -1 or another rank in 0..{ngpus - 1}, got {peer}")
    local = not strict and chan == -1 and send == -1 and recv == -1     # older tools: a local thread block
    if not 0 <= chan < nchannels and not local:
        raise TopocastError(f"{w}: 'chan' must be in 0..{nchannels - 1} (nchannels is {nchannels}), got {chan}")
    tb = ThreadBlock(tid, send, recv, chan)
    for st in el:
        if st.tag == "step":
            tb.steps.append(_step(st, w, gpu, tb))
    if len(tb.steps) > MAX_STEPS:
        raise TopocastError(f"{w}: {len(tb.steps)} steps, over the executor's limit of {MAX_STEPS} per thread block")
    for k, step in enumerate(tb.steps):
        if step.s != k:
            raise TopocastError(f"{w} <step s={step.s}>: steps must be numbered 0, 1, 2 ... in order; "
                                f"expected s={k}")
    return tb


def _step(el: ET.Element, where: str, gpu: Gpu, tb: ThreadBlock) -> Step:
    w = f"{where} <step s={el.get('s')}>"
    for name in STEP_ATTRS:
        if el.get(name) is None:
            raise TopocastError(f"{w}: missing mandatory attribute '{name}'")
    kind = _str(el, "type", w)
    if kind not in STEP_TYPES:
        raise TopocastError(f"{w}: type {kind[:20]!r} is not an MSCCL step type ({', '.join(STEP_TYPES)})")
    srcbuf, dstbuf = _str(el, "srcbuf", w), _str(el, "dstbuf", w)
    step = Step(_int(el, "s", w), kind, srcbuf, _int(el, "srcoff", w), dstbuf, _int(el, "dstoff", w),
                _int(el, "cnt", w), _int(el, "depid", w), _int(el, "deps", w), _int(el, "hasdep", w))
    receives, sends, reads, writes, _ = STEP_TYPES[kind]
    if step.hasdep not in (0, 1):
        raise TopocastError(f"{w}: 'hasdep' must be 0 or 1, got {step.hasdep}")
    if step.depid < -1 or (step.depid >= 0 and step.deps < 0):
        raise TopocastError(f"{w}: 'depid' must be -1 or a thread block with 'deps' its step")
    if kind == "nop":
        return step
    if not 0 <= step.cnt < MAX_COUNT:
        raise TopocastError(f"{w}: 'cnt' must be in 0..{MAX_COUNT - 1} (the executor's count limit), got {step.cnt}")
    if sends and tb.send < 0:
        raise TopocastError(f"{w}: a {STEP_NAMES[kind]} in a thread block without a send peer (send=-1)")
    if receives and tb.recv < 0:
        raise TopocastError(f"{w}: a {STEP_NAMES[kind]} in a thread block without a receive peer (recv=-1)")
    for use, buf, off in (("srcbuf", srcbuf, step.srcoff), ("dstbuf", dstbuf, step.dstoff)):
        if (use == "srcbuf" and not reads) or (use == "dstbuf" and not writes):
            continue
        if buf not in BUFFERS:
            raise TopocastError(f"{w}: '{use}' must be i, o or s, got {buf[:20]!r}")
        size = gpu.chunks(buf)
        if step.cnt and (off < 0 or off + step.cnt > size):
            raise TopocastError(f"{w}: buffer overrun: {use} {buf} chunks {off}..{off + step.cnt - 1} but the "
                                f"buffer has {size} chunks ({buf}_chunks)")
    return step


def _check_connections(program: Program, where: str, strict: bool = True) -> None:
    """One thread block per (peer, channel) and direction on a rank: a connection is one FIFO (a lenient read
    lets several use it when their steps are ordered by dependencies, :mod:`topocast.interop.msccl_run`)."""
    for gpu in program.gpus:
        seen: dict[tuple[str, int, int], int] = {}
        for tb in gpu.tbs:
            for kind, peer in (("send", tb.send), ("recv", tb.recv)):
                if peer < 0 or not any(STEP_TYPES[s.type][0 if kind == "recv" else 1] for s in tb.steps):
                    continue
                key = (kind, peer, tb.chan)
                if key in seen and strict:
                    verb = "sends to" if kind == "send" else "receives from"
                    raise TopocastError(f"{where}: <gpu id={gpu.id}> <tb id={tb.id}>: tb {seen[key]} already "
                                        f"{verb} rank {peer} on channel {tb.chan}: one thread block per peer and "
                                        "channel (two thread blocks on one connection)")
                seen[key] = tb.id
        for tb in gpu.tbs:
            for step in tb.steps:
                if step.depid < 0:
                    continue
                w = f"{where}: <gpu id={gpu.id}> <tb id={tb.id}> <step s={step.s}>"
                if step.depid >= len(gpu.tbs) or step.deps >= len(gpu.tbs[step.depid].steps):
                    raise TopocastError(f"{w}: depends on tb {step.depid} step {step.deps}, which does not exist")
                if step.depid == tb.id:
                    raise TopocastError(f"{w}: depends on its own thread block (depid={tb.id})")
                if not gpu.tbs[step.depid].steps[step.deps].hasdep:
                    raise TopocastError(f"{w}: depends on tb {step.depid} step {step.deps}, which has hasdep=0 "
                                        "and never signals (the executor would hang)")
