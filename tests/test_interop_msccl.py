"""MSCCL XML in and out: executor rules refused, planted faults caught, round trips exact."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.api import plan, prepare
from topocast.errors import TopocastError
from topocast.interop import msccl_write
from topocast.sim.models import Model

DATA = Path(__file__).parent / "data" / "msccl"
RING_AG = DATA / "ring_allgather_4.xml"
RING_AR = DATA / "ring_allreduce_4.xml"
TWO_TB = DATA / "ring_allgather_2tb_4.xml"
OUT_OF_PLACE = DATA / "ring_allreduce_outofplace_4.xml"
ALLPAIRS = DATA / "allpairs_allreduce_4.xml"       # received into scratch, then reduced by a local thread block
#: two sockets of two ranks: 2-chunk reduce and gather steps inside a socket, 1-chunk steps across on two
#: channels to one peer (the pattern of msccl-tools' allreduce_ndv2)
TWO_SOCKET = DATA / "two_socket_allreduce_4.xml"
#: the same with the fault of a public allreduce_ndv2 file: a recv-reduce-send whose local operand is block 1
#: while its peer adds the result to block 0, and the socket's partial of block 0 never sent across
RRS_FAULT = DATA / "two_socket_allreduce_rrs_fault_4.xml"
#: all-pairs allreduce of 3 ranks on two channels: two transfers between two ranks in one step
TWO_CHANNELS = DATA / "allpairs_allreduce_2ch_3.xml"


def text(path: Path) -> str:
    return path.read_text()


def imported(xml: str, spec: str = "ring:4"):
    return tc.msccl.read(xml.encode(), tc.build(spec))


def verdict(xml: str, spec: str = "ring:4"):
    return tc.msccl.verify_imported(imported(xml, spec))


def edit_step(xml: str, gpu: int, step: int, **attrs) -> str:
    """``xml`` with attributes of step ``step`` of gpu ``gpu``'s first thread block replaced."""
    lines = xml.splitlines()
    in_gpu = False
    for i, line in enumerate(lines):
        if line.strip().startswith("<gpu "):
            in_gpu = f'id="{gpu}"' in line
        if in_gpu and line.strip().startswith(f'<step s="{step}"'):
            for key, value in attrs.items():
                line = re.sub(rf'\b{key}="[^"]*"', f'{key}="{value}"', line)
            lines[i] = line
            return "\n".join(lines) + "\n"
    raise AssertionError("step not found")


# -- the fixtures verify, on the ring and routed on a network without the ring's links ----------------------
@pytest.mark.parametrize("path", [RING_AG, RING_AR, TWO_TB, OUT_OF_PLACE, ALLPAIRS, TWO_SOCKET])
def test_fixtures_verify_on_the_ring(path):
    result = tc.msccl.run("complete:4", path)
    assert result.verified, result.first_violation
    assert not any("routed" in note for note in result.notes)


def test_ring_allgather_steps_and_time_match_a_closed_form():
    # ring all-gather of 4 ranks: 3 steps; on the event engine each step one transfer of one chunk
    result = tc.msccl.run("ring:4", RING_AG, engine="step")
    assert result.metrics["steps"] == 3
    cost = tc.CostModel()
    event = tc.msccl.run("ring:4", RING_AG, engine="event", chunk_bytes=4096)
    assert event.metrics["time"] == pytest.approx(3 * (cost.startup + 4096 * cost.per_byte + cost.per_hop))


def test_sends_between_non_neighbours_are_routed_and_reported():
    # hypercube:2 links 0-1, 0-2, 1-3, 2-3: the ring's 1->2 and 3->0 are two hops
    result = tc.msccl.run("hypercube:2", RING_AG, engine="event")
    assert result.verified
    assert any("routed" in note for note in result.notes)
    im = imported(text(RING_AG), "hypercube:2")
    assert im.routed.num_transfers == 12 + 6          # six of the twelve transfers take two hops
    links = set(zip(im.routed.src.tolist(), im.routed.dst.tolist(), strict=True))
    assert links <= {(0, 1), (1, 0), (0, 2), (2, 0), (1, 3), (3, 1), (2, 3), (3, 2)}


def test_a_mapping_places_ranks_on_nodes():
    # ranks in ring order on the square 0-1-3-2 of hypercube:2: every send is a link
    im = tc.msccl.read(RING_AG, tc.build("hypercube:2"), mapping=[0, 1, 3, 2])
    assert im.routed is im.placed
    assert tc.msccl.verify_imported(im).verified


def test_a_network_with_more_nodes_than_ranks_relays_through_the_others():
    # the 4-rank ring on the 3x3 torus, ranks round the square 0-1-4-3: every send a link, the rest idle
    im = tc.msccl.read(RING_AG, tc.build("torus:3x3"), mapping=[0, 1, 4, 3])
    assert im.routed is im.placed and tc.msccl.verify_imported(im).verified
    result = tc.msccl.run("torus:3x3", RING_AG, mapping=[0, 1, 4, 3])
    assert result.verified and result.metrics["steps"] == 3 and result.collective == "allgather"
    assert any("4 ranks on 9 nodes" in note for note in result.notes)
    # a lower bound that assumed all nine nodes take part would be wrong: the hop bound is what is left
    assert result.metrics["lower_bound"] <= 3
    # ranks 0..3 (2 -> 3 and 3 -> 0 are routed): the other five nodes relay and take no part in the sum; the
    # bound counts the ranks (ranks 2 and 3 are 2 hops apart: the distance bound is 2)
    reduction = tc.msccl.run("torus:3x3", RING_AR)
    assert reduction.verified and reduction.metrics["lower_bound"] == 2
    assert reduction.metrics["steps"] >= 2 and reduction.metrics["lower_bound_kind"] == "distance"
    with pytest.raises(TopocastError, match="only 3 nodes"):
        tc.msccl.read(RING_AG, tc.build("ring:3"))


# -- planted faults are caught ---------------------------------------------------------------------------
def test_a_missing_dependency_is_caught():
    bad = text(TWO_TB).replace('depid="1" deps="0"', 'depid="-1" deps="-1"', 1)
    found = verdict(bad)
    assert not found.verified
    assert "<gpu id=0> <tb id=0> <step s=1>" in found.first_violation


def test_a_wrong_offset_is_caught():
    bad = edit_step(text(RING_AG), gpu=1, step=1, srcoff=2, dstoff=2)   # chunk 0 lands at o[2]
    found = verdict(bad)
    assert not found.verified
    assert "rank" in found.first_violation


def test_a_reduction_with_two_transfers_between_two_ranks_in_a_step_is_routed():
    from topocast.verify.reduction import verify_reduction

    direct = tc.msccl.run("complete:3", TWO_CHANNELS)
    assert direct.verified and direct.metrics["steps"] == 2          # reduce-scatter, then all-gather
    routed = tc.msccl.read(TWO_CHANNELS, tc.build("path:3"))          # ranks 0 and 2 are not linked
    assert tc.msccl.verify_imported(routed).verified
    assert verify_reduction(routed.routed).complete                    # the routed hops add each rank once
    assert any("12 transfers follow another of their step between the same two ranks" in n for n in routed.notes)
    assert tc.msccl.run("path:3", TWO_CHANNELS).verified


def test_a_recv_reduce_send_on_the_wrong_block_is_caught():
    bad = tc.msccl.read(RRS_FAULT, tc.build("complete:4"))
    # what the file does, independently of the verifier: rank 0 sends rank 2 one chunk on channel 0, and it is
    # its recv-reduce-send of block 1; nothing of block 0 leaves socket {0, 1} before the final gather
    across = [t for t in range(bad.logical.num_transfers) if {int(bad.logical.src[t]), int(bad.logical.dst[t])}
              in ({0, 2}, {1, 3})]
    assert [bad.logical.messages_of(t).tolist() for t in across if int(bad.logical.src[t]) == 0] == [[1], [1]]
    found = tc.msccl.verify_imported(bad)
    assert not found.verified
    assert found.first_violation.startswith("<gpu id=2> <tb id=1> <step s=1> (recv-reduce-send) on rank 2 adds "
                                            "block 1 to block 0 (a wrong offset)")


def test_a_reduce_counted_twice_is_caught():
    # rank 2 adds the fully reduced chunk 2 it receives to its own partial: its contribution counted twice
    bad = edit_step(text(RING_AR), gpu=2, step=4, type="rrcs")
    found = verdict(bad)
    assert not found.verified
    assert "counted twice" in found.first_violation


def test_a_send_that_does_not_wait_for_the_local_reduction_is_caught():
    ok = imported(text(ALLPAIRS), "complete:4")
    assert ok.logical.combine.sum() == 12                  # every scratch receipt is reduced by a local `re`
    bad = text(ALLPAIRS).replace('<step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" '
                                 'depid="6" deps="2"', '<step s="1" type="s" srcbuf="i" srcoff="0" dstbuf="i" '
                                 'dstoff="0" cnt="1" depid="-1" deps="-1"', 1)
    assert bad != text(ALLPAIRS)
    found = verdict(bad, "complete:4")
    assert not found.verified and "missing depid" in found.first_violation


def test_a_race_between_thread_blocks_is_caught():
    # tb 0 of rank 0 sends o[3] (received by tb 1) waiting for tb 1's step 1 instead of step 0: still ordered;
    # waiting for nothing at all leaves the read unordered with the write
    ok = verdict(text(TWO_TB).replace('depid="1" deps="0"', 'depid="1" deps="1"', 1))
    assert ok.verified
    bad = text(TWO_TB)
    bad = bad.replace('depid="1" deps="1"', 'depid="-1" deps="-1"', 1)
    assert not verdict(bad).verified


# -- malformed documents are refused with the element and the rule --------------------------------------
@pytest.mark.parametrize("mutate, words", [
    (lambda x: x.replace(' minBytes="0"', "", 1), ["<algo>", "missing mandatory attribute 'minBytes'"]),
    (lambda x: x.replace(' hasdep="0"/>', "/>", 1), ["<step s=0>", "missing mandatory attribute 'hasdep'"]),
    (lambda x: edit_step(x, gpu=0, step=0, srcoff=3, cnt=2), ["<step s=0>", "buffer overrun", "o_chunks"]),
    (lambda x: x.replace('proto="Simple"', 'proto="Fast"'), ["'proto'"]),
    (lambda x: x.replace('coll="allgather"', 'coll="gather"'), ["'coll'"]),
    (lambda x: x.replace('ngpus="4"', 'ngpus="5"'), ["<gpu id=4> is missing"]),
    (lambda x: x.replace('send="1"', 'send="0"', 1), ["'send' must be -1 or another rank"]),
    (lambda x: x.replace('type="s"', 'type="put"', 1), ["not an MSCCL step type"]),
    (lambda x: x.replace('<step s="1"', '<step s="7"', 1), ["numbered 0, 1, 2"]),
])
def test_malformed_ring_is_refused(mutate, words):
    with pytest.raises(TopocastError) as info:
        imported(mutate(text(RING_AG)))
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_two_thread_blocks_sending_to_one_peer_on_one_channel_are_refused():
    xml = text(TWO_TB).replace('send="-1" recv="3" chan="0"', 'send="1" recv="3" chan="0"', 1)
    xml = xml.replace('type="r" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3"',
                      'type="rcs" srcbuf="o" srcoff="3" dstbuf="o" dstoff="3"', 1)
    with pytest.raises(TopocastError, match=r"<gpu id=0> <tb id=1>: tb 0 already sends to rank 1 on channel 0"):
        imported(xml)


def test_a_count_mismatch_is_refused():
    xml = edit_step(text(RING_AR), gpu=1, step=1, cnt=2, srcoff=0, dstoff=0)
    with pytest.raises(TopocastError, match="count mismatch"):
        imported(xml)
    missing = text(RING_AG).replace('<step s="3" type="r"', '<step s="3" type="nop"', 1)
    with pytest.raises(TopocastError, match="count mismatch: rank 3 sends 3 time"):
        imported(missing)


def test_a_dependency_cycle_is_refused():
    xml = text(TWO_TB)
    lines = xml.splitlines()
    # rank 0: tb 1 step 0 (the first receive) waits for tb 0 step 2, which waits for tb 1 step 1 after it
    idx = next(i for i, line in enumerate(lines) if 'type="r"' in line)
    lines[idx] = lines[idx].replace('depid="-1" deps="-1"', 'depid="0" deps="2"')
    idx2 = next(i for i, line in enumerate(lines) if '<step s="2" type="s"' in line)
    lines[idx2] = lines[idx2].replace('hasdep="0"', 'hasdep="1"')
    with pytest.raises(TopocastError, match="dependency cycle"):
        imported("\n".join(lines))


def test_a_dependency_on_a_step_that_never_signals_is_refused():
    xml = text(TWO_TB).replace('hasdep="1"', 'hasdep="0"', 1)
    with pytest.raises(TopocastError, match="hasdep=0"):
        imported(xml)


def test_doctype_and_entities_are_refused():
    with pytest.raises(TopocastError, match="DOCTYPE"):
        imported('<!DOCTYPE a [<!ENTITY x "y">]>' + text(RING_AG))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_mutations_never_traceback(data):
    xml = text(TWO_TB if data.draw(st.booleans()) else RING_AR)
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(["delete", "insert", "number", "attr"]))
        if kind == "number":
            spots = [m.span() for m in re.finditer(r'"-?\d+"', xml)]
            a, b = data.draw(st.sampled_from(spots))
            xml = xml[:a] + f'"{data.draw(st.integers(-3, 80))}"' + xml[b:]
        elif kind == "attr":
            spots = [m.span() for m in re.finditer(r'\w+="[^"]*"', xml)]
            a, b = data.draw(st.sampled_from(spots))
            xml = xml[:a] + xml[b:]
        else:
            pos = data.draw(st.integers(0, len(xml)))
            if kind == "delete":
                xml = xml[:pos] + xml[pos + data.draw(st.integers(1, 20)):]
            else:
                xml = xml[:pos] + data.draw(st.sampled_from(["<", ">", '"', "<step/>", "&", "\x00", "é"])) + xml[pos:]
    try:
        im = imported(xml)
    except TopocastError as exc:
        assert "\n" not in str(exc)
        return
    tc.msccl.verify_imported(im)


# -- command line ----------------------------------------------------------------------------------------
def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "topocast.cli", *args], capture_output=True, text=True, timeout=300)


def test_cli_exit_statuses(tmp_path):
    assert cli("run", "ring:4", "--msccl", str(RING_AR)).returncode == 0
    bad = tmp_path / "bad.xml"
    bad.write_text(edit_step(text(RING_AR), gpu=2, step=4, type="rrcs"))
    done = cli("run", "ring:4", "--msccl", str(bad))
    assert done.returncode == 1 and "counted twice" in done.stderr
    bad.write_text(text(RING_AG).replace(' maxBytes="0"', ""))
    done = cli("run", "ring:4", "--msccl", str(bad))
    assert done.returncode == 2 and "maxBytes" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# -- export, then import: the same transfers and the same time ------------------------------------------
def schedule_of(spec: str, algorithm: str):
    checked = prepare(spec, algorithm)
    return checked.topology, plan(checked.topology, checked.algorithm, checked.params, checked.engine, 0)


def transfers(s) -> list:
    step = s.step if s.step is not None else np.zeros(s.num_transfers, np.int64)
    combine = s.combine if s.combine is not None else np.zeros(s.num_transfers, bool)
    return sorted((int(s.src[t]), int(s.dst[t]), int(step[t]), len(s.messages_of(t)), bool(combine[t]))
                  for t in range(s.num_transfers))


ROUND_TRIPS = [("ring:8", "allgather-ring"), ("hypercube:3", "allgather-recursive-doubling"),
               ("torus:4x4", "allgather-mesh"), ("hypercube:3", "broadcast-binomial"),
               ("hypercube:3", "alltoall-hypercube"), ("torus:3x3", "alltoall-shortest-paths"),
               ("ring:8", "allreduce-ring"), ("hypercube:3", "allreduce-halving-doubling"),
               ("hypercube:3", "reduce-scatter-ring"), ("complete:5", "allreduce-double-binary-tree")]


@pytest.mark.parametrize("spec, algorithm", ROUND_TRIPS)
def test_round_trip_gives_the_same_transfers_and_time(spec, algorithm, tmp_path):
    topology, original = schedule_of(spec, algorithm)
    path = msccl_write.write(original, tmp_path / "a.xml", name=algorithm)
    back = tc.msccl.read(path, topology, chunk_bytes=original.message_bytes)
    assert back.faults == []
    assert transfers(back.logical) == transfers(original)
    assert tc.msccl.verify_imported(back).verified
    if original.collective == "allgather":             # chunks keep their ids: origin-major in both
        assert sorted((int(a), int(b), tuple(back.logical.messages_of(t))) for t, (a, b) in
                      enumerate(zip(back.logical.src, back.logical.dst, strict=True))) == \
            sorted((int(a), int(b), tuple(original.messages_of(t))) for t, (a, b) in
                   enumerate(zip(original.src, original.dst, strict=True)))
    if not original.is_reduction:
        model = Model()
        first = tc.execute(topology, original, "event", model)
        again = tc.msccl.run(topology, path, engine="event", chunk_bytes=original.message_bytes)
        assert again.verified
        assert again.metrics["time"] == first.metrics["time"]


def test_the_exported_document_has_every_mandatory_attribute(tmp_path):
    import xml.etree.ElementTree as ET

    from topocast.interop.msccl_format import ALGO_ATTRS, GPU_ATTRS, STEP_ATTRS, TB_ATTRS

    _, s = schedule_of("ring:8", "allreduce-ring")
    root = ET.fromstring(msccl_write.to_xml(s))
    assert all(root.get(k) is not None for k in ALGO_ATTRS)
    assert all(g.get(k) is not None for g in root.iter("gpu") for k in GPU_ATTRS)
    assert all(t.get(k) is not None for t in root.iter("tb") for k in TB_ATTRS)
    assert all(x.get(k) is not None for x in root.iter("step") for k in STEP_ATTRS)


def chunked_broadcast(chunks: int):
    """Rank 0 sends ``chunks`` chunks to rank 1, one a step: ``chunks`` steps in one thread block each side."""
    builder = tc.ScheduleBuilder(2, origin=np.zeros(chunks, np.int64), collective="broadcast")
    builder.add(src=np.zeros(chunks, np.int64), dst=1, first=np.arange(chunks), step=np.arange(chunks))
    return builder.build()


def test_executor_limits_are_refused_with_the_limit_named():
    back = tc.msccl.read(msccl_write.to_xml(chunked_broadcast(256)).encode(), tc.build("path:2"))
    assert back.logical.num_steps == 256                  # 256 steps per thread block: the most the executor runs
    with pytest.raises(TopocastError, match="needs 257 steps, over the executor's limit of 256 steps per thread"):
        msccl_write.to_xml(chunked_broadcast(257))


def test_collectives_without_an_msccl_form_are_refused():
    from dataclasses import replace

    _, s = schedule_of("hypercube:3", "broadcast-binomial")
    with pytest.raises(TopocastError, match="export msccl-xml: a multicast has no MSCCL collective"):
        msccl_write.to_xml(replace(s, collective="multicast"))
    with pytest.raises(TopocastError, match="root at rank 0"):
        msccl_write.to_xml(replace(s, origin=np.full_like(s.origin, 3)))


def test_lenient_reads_a_file_older_tools_wrote_and_says_the_executor_refuses_it():
    old = text(RING_AR).replace(' outofplace="0" minBytes="0" maxBytes="0"', "")
    with pytest.raises(TopocastError, match="missing mandatory attribute 'minBytes'.*--lenient"):
        imported(old)
    im = tc.msccl.read(old.encode(), tc.build("ring:4"), lenient=True)
    assert tc.msccl.verify_imported(im).verified
    assert sum("executor refuses this file" in note for note in im.notes) == 3
    # lenient never waives a rule of the steps themselves
    with pytest.raises(TopocastError, match="hasdep"):
        tc.msccl.read(old.replace(' hasdep="0"/>', "/>", 1).encode(), tc.build("ring:4"), lenient=True)


def test_lenient_orders_thread_blocks_sharing_a_connection_by_their_dependencies():
    # rank 0 splits its receives from rank 3 over two thread blocks; strict refuses, lenient needs them ordered
    xml = text(TWO_TB)
    lines = xml.splitlines()
    start = next(i for i, line in enumerate(lines) if '<tb id="1" send="-1" recv="3"' in line)
    recv = lines[start + 1:start + 4]
    second = ['    <tb id="2" send="-1" recv="3" chan="0">',
              recv[2].replace('s="2"', 's="0"').replace('depid="-1" deps="-1"', 'depid="1" deps="1"'), "    </tb>"]
    lines[start + 1:start + 4] = recv[:2]
    lines[start + 4:start + 4] = second
    split = "\n".join(lines) + "\n"
    with pytest.raises(TopocastError, match="tb 1 already receives from rank 3"):
        imported(split)
    im = tc.msccl.read(split.encode(), tc.build("ring:4"), lenient=True)
    assert tc.msccl.verify_imported(im).verified
    unordered = split.replace('<step s="0" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="1" '
                              'deps="1"', '<step s="0" type="r" srcbuf="o" srcoff="1" dstbuf="o" dstoff="1" cnt="1" '
                              'depid="-1" deps="-1"')
    assert unordered != split
    with pytest.raises(TopocastError, match="no dependency ordering them"):
        tc.msccl.read(unordered.encode(), tc.build("ring:4"), lenient=True)


def test_an_imported_ring_allreduce_is_measured_like_topocasts_own():
    """The 4-rank ring allreduce of the fixture runs on the event engine, verified, and takes the ring's
    textbook time: 2 (N - 1) steps of one chunk each, the first N - 1 combined."""
    alpha, beta, gamma = 1e-6, 1e-10, 5e-11
    model = Model(cost=tc.CostModel(startup=alpha, per_byte=beta, per_byte_reduce=gamma))
    run = tc.msccl.run("ring:4", RING_AR, engine="event", model=model, chunk_bytes=4096.0)
    assert run.verified and run.collective == "allreduce"
    expected = 6 * (alpha + 4096.0 * beta) + 3 * 4096.0 * gamma
    assert run.metrics["time"] == pytest.approx(expected, rel=1e-12)
    assert run.metrics["lower_bound"] <= run.metrics["time"]


def test_a_synthesized_schedule_exports_and_comes_back_the_same(tmp_path):
    topology = tc.build("torus:3x3")
    synthesis = tc.synthesize(topology.spec, "allgather", budget=2, seed=0)
    s = synthesis.schedule
    path = msccl_write.write(s, tmp_path / "syn.xml", name="synthesized")
    back = tc.msccl.read(path, topology, chunk_bytes=s.message_bytes)
    assert transfers(back.logical) == transfers(s)
    first = tc.execute(topology, s, "event", Model())
    again = tc.msccl.run(topology, path, engine="event", chunk_bytes=s.message_bytes)
    assert again.verified and again.metrics["time"] == first.metrics["time"]


def test_cli_export_schedule_then_run(tmp_path):
    out = tmp_path / "ar.xml"
    done = cli("export-schedule", "ring:6", "allreduce-ring", "--format", "msccl-xml", "--out", str(out))
    assert done.returncode == 0, done.stderr
    done = cli("run", "ring:6", "--msccl", str(out), "--json")
    assert done.returncode == 0 and '"verified": true' in done.stdout
    done = cli("export-schedule", "ring:6", "allreduce-ring", "--format", "mscclpp-json", "--out",
               str(tmp_path / "missing" / "x.json"))
    assert done.returncode == 2 and "--out" in done.stderr
    assert not (tmp_path / "missing").exists()
    done = cli("run", "ring:6", "allreduce-ring", "--mapping", "0,1")
    assert done.returncode == 2 and "--mapping" in done.stderr


def test_too_many_thread_blocks_on_a_rank_are_refused():
    _, s = schedule_of("complete:128", "allgather-bfs-trees")   # 127 peers each way: 254 thread blocks
    with pytest.raises(TopocastError, match="over the limit of 216 thread blocks per rank"):
        msccl_write.to_xml(s)
