"""Chakra execution traces, decoded by a protobuf wire reader written here (no generated classes)."""

from __future__ import annotations

import numpy as np
import pytest

from topocast.api import plan, prepare
from topocast.errors import TopocastError
from topocast.interop import chakra


# -- an independent protobuf wire-format reader -----------------------------------------------------------
def varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def fields(data: bytes) -> list[tuple[int, int, object]]:
    """``(field number, wire type, value)`` of a message: varints as ints, length-delimited as bytes."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 2:
            size, pos = varint(data, pos)
            value, pos = data[pos:pos + size], pos + size
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((number, wire, value))
    return out


def records(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        size, pos = varint(data, pos)
        out.append(data[pos:pos + size])
        pos += size
    return out


def packed(value) -> list[int]:
    out, pos = [], 0
    while pos < len(value):
        v, pos = varint(value, pos)
        out.append(v)
    return out


def node(record: bytes) -> dict:
    """Chakra's Node: id 1, name 2, type 3, data_deps 5 (packed), attr 10 (name 1; int32 7, int64 9, bool 27)."""
    out = {"id": 0, "type": 0, "deps": [], "attr": {}}              # proto3: zero values are not written
    for number, wire, value in fields(record):
        if number == 1:
            out["id"] = value
        elif number == 2:
            out["name"] = value.decode()
        elif number == 3:
            out["type"] = value
        elif number == 5:
            out["deps"] += packed(value) if wire == 2 else [value]
        elif number == 10:
            attr = dict((n, v) for n, _, v in fields(value))
            out["attr"][attr[1].decode()] = next(v for n, v in attr.items() if n != 1)
    return out


def decode(trace: bytes) -> tuple[str, list[dict]]:
    head, *rest = records(trace)
    version = next(v for n, _, v in fields(head) if n == 1).decode()
    return version, [node(r) for r in rest]


def schedule_of(spec: str, algorithm: str):
    checked = prepare(spec, algorithm)
    return plan(checked.topology, checked.algorithm, checked.params, checked.engine, 0)


@pytest.mark.parametrize("spec, algorithm", [("ring:6", "allgather-ring"),
                                             ("hypercube:3", "allreduce-halving-doubling"),
                                             ("torus:3x3", "alltoall-shortest-paths")])
def test_p2p_traces_hold_every_transfer_with_its_size_peers_and_dependencies(spec, algorithm):
    s = schedule_of(spec, algorithm)
    traces = [decode(t) for t in chakra.rank_traces(s)]
    assert all(version == chakra.SCHEMA_VERSION for version, _ in traces)
    sends, recvs = {}, {}
    for rank, (_, nodes) in enumerate(traces):
        assert [n["id"] for n in nodes] == list(range(len(nodes)))
        for n in nodes:
            tag = n["attr"]["comm_tag"]
            assert all(d < n["id"] for d in n["deps"])              # dependencies point backwards in the file
            if n["type"] == 5:
                assert n["attr"]["comm_src"] == rank
                sends[tag] = (rank, n)
            else:
                assert n["type"] == 6 and n["attr"]["comm_dst"] == rank
                recvs[tag] = (rank, n)
    assert set(sends) == set(recvs) == set(range(s.num_transfers))
    step = s.step if s.step is not None else None
    for t in range(s.num_transfers):
        (u, send), (v, recv) = sends[t], recvs[t]
        assert (u, v) == (int(s.src[t]), int(s.dst[t]))
        assert send["attr"]["comm_size"] == recv["attr"]["comm_size"] == round(s.message_bytes * len(s.messages_of(t)))
        # every message a send carries that did not start at its rank came in by a receive it depends on
        _, nodes = traces[u]
        brought = set()
        for d in send["deps"]:
            if nodes[d]["type"] == 6:
                brought |= set(s.messages_of(nodes[d]["attr"]["comm_tag"]).tolist())
        if s.is_reduction:
            held_before = {int(m) for k in range(s.num_transfers) if int(s.dst[k]) == u and step[k] < step[t]
                           for m in s.messages_of(k)}
            assert held_before & set(s.messages_of(t).tolist()) <= brought
        else:
            foreign = {int(m) for m in s.messages_of(t) if int(s.origin[m]) != u}
            assert foreign <= brought


def test_the_collective_form_is_one_node_per_rank():
    s = schedule_of("ring:8", "allreduce-ring")
    traces = [decode(t) for t in chakra.rank_traces(s, "collective")]
    assert len(traces) == 8
    for _, nodes in traces:
        assert len(nodes) == 1
        assert nodes[0]["type"] == 7
        assert nodes[0]["attr"]["comm_type"] == 0                   # ALL_REDUCE in Chakra's enum
        assert nodes[0]["attr"]["comm_size"] == round(s.message_bytes * s.num_messages)


def test_write_names_one_file_per_rank(tmp_path):
    s = schedule_of("ring:4", "allgather-ring")
    paths = chakra.write(s, tmp_path / "ring.et")
    assert [p.name for p in paths] == [f"ring.{r}.et" for r in range(4)]
    assert np.all([p.stat().st_size > 0 for p in paths])


def test_bad_form_is_refused():
    s = schedule_of("ring:4", "allgather-ring")
    with pytest.raises(TopocastError, match="form"):
        chakra.rank_traces(s, "graph")
