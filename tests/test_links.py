"""Per-link records (``run --links``, ``RunResult.links``) against brute force over the plan's transfers."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from importlib import resources

import numpy as np
import pytest

import topocast as tc
from topocast.cli import main
from topocast.measure.links import write_csv


def _plan(spec, algorithm, engine):
    from topocast import api

    checked = api.prepare(spec, algorithm, engine)
    return checked, api.plan(checked.topology, checked.algorithm, checked.params, checked.engine, 0, None)


def _run(spec, algorithm, engine, **params):
    from topocast import api
    from topocast.execution.execute import execute

    checked = api.prepare(spec, algorithm, engine, **params)
    plan = api.plan(checked.topology, checked.algorithm, checked.params, checked.engine, 0, None)
    result = execute(checked.topology, plan, engine, api.model_of(checked), algorithm=algorithm, links=True)
    return checked.topology, plan, result


def _messages(plan, t):
    lo, hi = plan.range_ptr[t], plan.range_ptr[t + 1]
    return int(plan.range_count[lo:hi].sum())


def _by_pair(table):
    return {(int(s), int(d)): i for i, (s, d) in enumerate(zip(table.src, table.dst, strict=True))}


STEP_CASES = [("torus:4x3", "allgather-mesh"), ("hypercube:3", "alltoall-hypercube"),
              ("galaxyfly:n=3,q=3,a=2", "broadcast-bfs-tree"), ("mesh:4x4", "alltoall-mesh")]


@pytest.mark.parametrize(("spec", "algorithm"), STEP_CASES)
def test_step_links_match_a_loop_over_the_transfers(spec, algorithm):
    topology, plan, result = _run(spec, algorithm, "step")
    table = result.links
    # one row per distinct directed pair of the topology
    pairs = set(zip(topology.arc_sources.tolist(), topology.indices.tolist(), strict=True))
    assert len(table) == len(pairs) and set(_by_pair(table)) == pairs
    carried, steps, per_step = defaultdict(int), defaultdict(set), defaultdict(int)
    count = defaultdict(int)
    for t in range(plan.num_transfers):
        key = (int(plan.src[t]), int(plan.dst[t]))
        m = _messages(plan, t)
        carried[key] += m
        count[key] += 1
        steps[key].add(int(plan.step[t]))
        per_step[key + (int(plan.step[t]),)] += m
    rows = _by_pair(table)
    for key, i in rows.items():
        assert table.bytes[i] == carried.get(key, 0) * plan.message_bytes
        assert table.transfers[i] == count.get(key, 0)
        assert table.busy[i] == len(steps.get(key, ()))
        assert table.peak[i] == max((v for k, v in per_step.items() if k[:2] == key), default=0)
    assert result.metrics["link_bytes_max"] == max(carried.values()) * plan.message_bytes
    assert result.metrics["link_busy_max"] == max(len(s) for s in steps.values())
    # the engine's own per-step count agrees with the busiest link-step
    assert table.peak.max() == result.metrics["max_link_messages"]
    mean = sum(carried.values()) * plan.message_bytes / len(pairs)
    assert result.metrics["link_bytes_mean"] == pytest.approx(mean)
    assert result.metrics["link_imbalance"] == pytest.approx(result.metrics["link_bytes_max"] / mean)


@pytest.mark.parametrize(("spec", "algorithm"), [("torus:4x3", "allgather-mesh"),
                                                 ("galaxyfly:n=3,q=5,a=4", "router-first-allgather"),
                                                 ("ring:8", "alltoall-ring")])
def test_event_links_match_the_cost_model(spec, algorithm):
    topology, plan, result = _run(spec, algorithm, "event")
    cost = result.trace.cost
    table = result.links
    rows = _by_pair(table)
    busy = defaultdict(float)
    spans = defaultdict(list)
    trace = result.trace.trace
    for t in range(plan.num_transfers):
        key = (int(plan.src[t]), int(plan.dst[t]))
        busy[key] += cost.startup + cost.per_byte * _messages(plan, t) * plan.message_bytes
        # the queue: from when its data was ready at its sender (never after it starts) to its arrival
        assert trace.ready[t] <= trace.start[t]
        spans[key].append((trace.ready[t], trace.finish[t]))
    for key, i in rows.items():
        assert table.busy[i] == pytest.approx(busy.get(key, 0.0))
        # most intervals [ready, arrival) open at one instant, by brute force over their openings
        opened = spans.get(key, [])
        most = max((sum(1 for a, b in opened if a <= s < b) for s, _ in opened), default=0)
        assert table.peak[i] == most
    assert table.transfers.sum() == plan.num_transfers
    assert result.units["link_busy_max"] == "s"


def test_cut_summary_names_the_links_across_the_best_cut():
    from topocast.topology.properties import best_cut

    topology, plan, result = _run("torus:8x8", "alltoall-mesh", "event", startup=0.0)
    assert result.metrics["lower_bound_kind"] == "cut"
    links, side, _ = best_cut(topology)
    assert result.metrics["cut_link_count"] == 2 * links  # both directions of every cut link
    table = result.links
    crossing = side[table.src] != side[table.dst]
    assert result.metrics["cut_bytes"] == pytest.approx(table.bytes[crossing].sum())
    named = {f"{topology.node_name(int(s))}->{topology.node_name(int(d))}"
             for s, d in zip(table.src[crossing], table.dst[crossing], strict=True)}
    assert {c.split(" (")[0] for c in result.metrics["cut_links"]} <= named


def test_wormhole_links_count_every_injected_worm_hop():
    topology, plan, result = _run("mesh:6x6", "multicast-qg", "wormhole", cycles=3000, load=0.002)
    t = plan.traffic
    hops = defaultdict(int)
    inject = result.trace.trace.worm_inject
    for w in range(t.num_worms):
        if inject[w] < 0:
            continue
        for k in range(t.path_ptr[w] + 1, t.path_ptr[w + 1]):
            hops[(int(t.path_node[k - 1]), int(t.path_node[k]))] += 1
    table = result.links
    for key, i in _by_pair(table).items():
        assert table.transfers[i] == hops.get(key, 0)
        assert table.bytes[i] == hops.get(key, 0) * plan.flits
    assert np.isnan(table.peak).all()


def test_circuit_links_carry_every_circuit_through_every_stage():
    result = tc.run("butterfly-butterfly:n=3", "all-to-all-personalized-rls", links=True)
    m = result.metrics
    assert result.verified and m["conflicts"] == 0
    # a total exchange sets rows - 1 configurations per pass; each circuit leaves one switch per stage
    assert result.links.transfers.sum() == m["inputs"] * (m["permutations"] - 1) * m["passes"] * m["stages"]
    assert result.links.peak.max() == 1


def test_frontier_records_are_per_step_label_counts():
    result = tc.run("ej:a=2,b=3,n=1", "one-to-all-improved", engine="frontier", links=True)
    counts = result.links.counts
    assert counts.sum(axis=1).tolist() == result.trace.transfers.tolist()
    assert counts.sum() == result.metrics["total_receivers"]


def test_links_off_by_default_and_summaries_follow_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("topocast").joinpath("schemas/run.schema.json").read_text())
    plain = tc.run("torus:4x3", "allgather-mesh")
    assert plain.links is None and "link_bytes_max" not in plain.to_json()
    for engine in ("step", "event"):
        data = tc.run("torus:8x8", "alltoall-mesh", engine=engine, links=True, startup=0.0).to_json()
        jsonschema.validate(data, schema)
        assert data["links_total"] == 256 and data["hottest_links"][0]["bytes"] == data["link_bytes_max"]
    data = tc.run("ej:a=2,b=3,n=1", "one-to-all-improved", engine="frontier", links=True).to_json()
    jsonschema.validate(data, schema)


def test_cli_links_csv(tmp_path):
    path = tmp_path / "links.csv"
    with pytest.raises(SystemExit) as exit_:
        main(["run", "torus:4x3", "allgather-mesh", "--links", str(path), "--json"])
    assert exit_.value.code == 0
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["src", "dst", "bytes", "busy", "transfers", "peak", "src_label", "dst_label", "label"]
    topology = tc.build("torus:4x3")
    assert len(rows) == topology.num_arcs
    first = rows[0]
    assert first["src_label"] == topology.node_name(int(first["src"]))
    result = tc.run("torus:4x3", "allgather-mesh", links=True)
    assert sum(float(r["bytes"]) for r in rows) == pytest.approx(result.links.bytes.sum())


def test_cli_links_refuses_an_unwritable_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "torus:4x3", "allgather-mesh", "--links", str(tmp_path / "missing" / "l.csv")])
    assert exit_.value.code == 2
    assert "--links" in capsys.readouterr().err


def test_csv_is_written_in_chunks(tmp_path):
    result = tc.run("torus:4x3", "allgather-mesh", links=True)
    whole, chunked = tmp_path / "a.csv", tmp_path / "b.csv"
    write_csv(result.links, whole)
    write_csv(result.links, chunked, chunk=5)
    assert whole.read_text() == chunked.read_text()


def test_in_flight_peak_scan_agrees_with_the_sort():
    from topocast.measure import links

    rng = np.random.default_rng(5)
    rows = rng.integers(0, 7, 400)
    start = np.zeros(400)
    for r in range(7):  # each link's starts in order, as a link serves its transfers
        mine = rows == r
        start[mine] = np.cumsum(rng.uniform(0, 1, mine.sum()))
    end = start + rng.uniform(0, 3, 400)
    scanned, ok = links._open_scan(rows, start, end, 7, 16)
    assert ok
    brute = [max(((start[i] >= start[rows == r]) & (start[i] < end[rows == r])).sum()
                 for i in np.flatnonzero(rows == r)) for r in range(7)]
    assert scanned.tolist() == brute
    shuffled = rng.permutation(400)  # out of order: the scan declines, the sort answers
    assert not links._open_scan(rows[shuffled], start[shuffled], end[shuffled], 7, 16)[1]
    assert links._in_flight_peak(rows[shuffled], start[shuffled], end[shuffled], 7).tolist() == brute


def test_hottest_rows_match_a_full_sort():
    from topocast.measure.links import hottest

    rng = np.random.default_rng(2)
    for size in (3, 50, 400):
        load = rng.integers(0, 6, size).astype(float)
        full = np.lexsort((np.arange(size), -load))[:5]
        assert hottest(load, 5).tolist() == full.tolist()


def test_event_peak_is_the_queue_of_a_link():
    """Three messages sent over one link in one step: all three are ready at 0 and the link sends them one
    after the other, so its queue holds three at once (in flight alone it would be one); a second link used
    once holds one.  Closed form of the times: the k-th finishes at k (t_s + m t_w) + t_h."""
    from topocast.execution.execute import execute
    from topocast.plans.schedule import ScheduleBuilder
    from topocast.sim.models import CostModel, Model, PortModel

    topology = tc.build("path:3")
    builder = ScheduleBuilder(3, origin=[0, 0, 0], collective="custom", targets=np.array([1, 1, 2]),
                              message_bytes=1000.0)
    builder.add(step=0, src=[0, 0, 0], dst=[1, 1, 1], first=[0, 1, 2])
    builder.add(step=1, src=[1], dst=[2], first=[2])
    plan = builder.build()
    cost = CostModel(startup=1e-6, per_byte=1e-9, per_hop=1e-7)
    result = execute(topology, plan, "event", Model(cost=cost, ports=PortModel()), algorithm="custom", links=True)
    assert result.verified
    one = cost.startup + 1000.0 * cost.per_byte
    finish = result.trace.finish
    assert sorted(finish[:3]) == pytest.approx([k * one + cost.per_hop for k in (1, 2, 3)])
    assert result.trace.trace.ready[:3].tolist() == [0.0, 0.0, 0.0]
    rows = _by_pair(result.links)
    assert result.links.peak[rows[(0, 1)]] == 3
    assert result.links.peak[rows[(1, 2)]] == 1
    # without links asked for, nothing is recorded
    plain = execute(topology, plan, "event", Model(cost=cost, ports=PortModel()), algorithm="custom")
    assert plain.trace.trace.ready is None and plain.metrics["time"] == result.metrics["time"]
