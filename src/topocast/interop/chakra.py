"""Chakra execution traces of a schedule: one file per rank, in the protobuf encoding of Chakra's schema.

A trace file is a sequence of length-delimited protobuf messages (each preceded by its size as a varint):
one ``GlobalMetadata``, then one ``Node`` per operation.  The message classes are built at run time from
descriptors whose names and field numbers follow Chakra's published ``et_def.proto`` (package
``ChakraProtoMsg``; only the fields written here are declared, which protobuf readers accept).

Two forms:

* ``p2p``: every transfer a ``COMM_SEND_NODE`` at its sender and a ``COMM_RECV_NODE`` at its receiver, with
  attributes ``comm_src``, ``comm_dst``, ``comm_tag`` (the transfer's index, the same at both ends),
  ``comm_size`` (bytes) and ``is_cpu_op`` (false); ``data_deps`` name the nodes of the same rank it waits
  for (:mod:`topocast.interop.rankplan`).
* ``collective``: one ``COMM_COLL_NODE`` per rank with ``comm_type`` (the collective's
  ``CollectiveCommType``) and ``comm_size`` (bytes: the whole vector of an allreduce, broadcast or reduce, a
  rank's share of an all-gather, all-to-all or reduce-scatter).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..errors import TopocastError
from ..plans.schedule import Schedule

SCHEMA_VERSION = "0.0.4"
NODE_TYPES = {"METADATA_NODE": 1, "COMP_NODE": 4, "COMM_SEND_NODE": 5, "COMM_RECV_NODE": 6, "COMM_COLL_NODE": 7}
COMM_TYPES = {"allreduce": 0, "reduce": 1, "allgather": 2, "broadcast": 5, "alltoall": 6, "reduce-scatter": 7}
FORMS = ("p2p", "collective")

#: (field name, number, type, label) of the messages written, after Chakra's et_def.proto
_ATTRIBUTE = (("name", 1, "string"), ("doc_string", 2, "string"), ("double_val", 3, "double"),
              ("int32_val", 7, "int32"), ("int64_val", 9, "int64"), ("uint64_val", 13, "uint64"),
              ("bool_val", 27, "bool"), ("string_val", 29, "string"))


@lru_cache(maxsize=1)
def message_classes():
    """``(GlobalMetadata, Node, AttributeProto)`` classes built from descriptors at run time."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    types = {"string": F.TYPE_STRING, "double": F.TYPE_DOUBLE, "int32": F.TYPE_INT32, "int64": F.TYPE_INT64,
             "uint64": F.TYPE_UINT64, "bool": F.TYPE_BOOL}
    fd = descriptor_pb2.FileDescriptorProto(name="topocast_chakra_et_def.proto", package="ChakraProtoMsg",
                                            syntax="proto3")
    attr = fd.message_type.add(name="AttributeProto")
    attr.oneof_decl.add(name="value")
    for name, number, kind in _ATTRIBUTE:
        field = attr.field.add(name=name, number=number, type=types[kind], label=F.LABEL_OPTIONAL)
        if number > 2:
            field.oneof_index = 0
    meta = fd.message_type.add(name="GlobalMetadata")
    meta.field.add(name="version", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    meta.field.add(name="attr", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                   type_name=".ChakraProtoMsg.AttributeProto")
    io = fd.message_type.add(name="IOInfo")
    for k, name in enumerate(("values", "shapes", "types"), 1):
        io.field.add(name=name, number=k, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    enum = fd.enum_type.add(name="NodeType")
    enum.value.add(name="INVALID_NODE", number=0)
    for name, number in NODE_TYPES.items():
        enum.value.add(name=name, number=number)
    node = fd.message_type.add(name="Node")
    node.field.add(name="id", number=1, type=F.TYPE_UINT64, label=F.LABEL_OPTIONAL)
    node.field.add(name="name", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    node.field.add(name="type", number=3, type=F.TYPE_ENUM, label=F.LABEL_OPTIONAL,
                   type_name=".ChakraProtoMsg.NodeType")
    node.field.add(name="ctrl_deps", number=4, type=F.TYPE_UINT64, label=F.LABEL_REPEATED)
    node.field.add(name="data_deps", number=5, type=F.TYPE_UINT64, label=F.LABEL_REPEATED)
    node.field.add(name="start_time_micros", number=6, type=F.TYPE_UINT64, label=F.LABEL_OPTIONAL)
    node.field.add(name="duration_micros", number=7, type=F.TYPE_UINT64, label=F.LABEL_OPTIONAL)
    for name, number in (("inputs", 8), ("outputs", 9)):
        node.field.add(name=name, number=number, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                       type_name=".ChakraProtoMsg.IOInfo")
    node.field.add(name="attr", number=10, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                   type_name=".ChakraProtoMsg.AttributeProto")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    get = message_factory.GetMessageClass
    return (get(pool.FindMessageTypeByName("ChakraProtoMsg.GlobalMetadata")),
            get(pool.FindMessageTypeByName("ChakraProtoMsg.Node")),
            get(pool.FindMessageTypeByName("ChakraProtoMsg.AttributeProto")))


def _delimited(message) -> bytes:
    from google.protobuf.internal.encoder import _VarintBytes

    body = message.SerializeToString(deterministic=True)
    return _VarintBytes(len(body)) + body


def rank_traces(schedule: Schedule, form: str = "p2p") -> list[bytes]:
    """The trace file of every rank (node) of ``schedule`` as bytes."""
    if form not in FORMS:
        raise TopocastError(f"form: must be one of {', '.join(FORMS)}, got '{form}'")
    Meta, Node, Attr = message_classes()
    n = schedule.num_nodes
    head = _delimited(Meta(version=SCHEMA_VERSION, attr=[Attr(name="schema", string_val="topocast")]))
    if form == "collective":
        if schedule.collective not in COMM_TYPES:
            raise TopocastError(f"export chakra-et: a {schedule.collective} has no Chakra collective type "
                                f"({', '.join(COMM_TYPES)})")
        whole = schedule.collective in ("allreduce", "broadcast", "reduce")
        size = int(round(schedule.message_bytes * schedule.num_messages / (1 if whole else n)))
        node = Node(id=0, name=schedule.collective, type=NODE_TYPES["COMM_COLL_NODE"], attr=[
            Attr(name="is_cpu_op", bool_val=False),
            Attr(name="comm_type", int64_val=COMM_TYPES[schedule.collective]),
            Attr(name="comm_size", int64_val=size)])
        return [head + _delimited(node)] * n
    from .rankplan import rank_plan

    plan = rank_plan(schedule)
    out = []
    for rank in range(n):
        parts = [head]
        for k, op in enumerate(plan.ops[rank]):
            t = op.t
            src, dst = int(schedule.src[t]), int(schedule.dst[t])
            size = int(round(schedule.message_bytes * len(plan.messages[t])))
            kind = "COMM_SEND_NODE" if op.kind == "send" else "COMM_RECV_NODE"
            node = Node(id=k, name=f"{op.kind} {t} step {op.step}", type=NODE_TYPES[kind], data_deps=op.deps, attr=[
                Attr(name="is_cpu_op", bool_val=False), Attr(name="comm_src", int32_val=src),
                Attr(name="comm_dst", int32_val=dst), Attr(name="comm_tag", int32_val=int(t)),
                Attr(name="comm_size", int64_val=size)])
            parts.append(_delimited(node))
        out.append(b"".join(parts))
    return out


def write(schedule: Schedule, path: str | Path, form: str = "p2p") -> list[Path]:
    """Write one trace per rank: ``PATH.R.et`` for rank ``R`` (Chakra's naming), atomically; returns the paths."""
    from ..infra.fileio import atomic_write

    base = Path(path)
    stem = base.name[:-3] if base.name.endswith(".et") else base.name
    paths = []
    for rank, data in enumerate(rank_traces(schedule, form)):
        paths.append(atomic_write(base.with_name(f"{stem}.{rank}.et"), data))
    return paths
