"""RPC/RPD/SPC/SPD, SFATA and RFATA on Galaxyfly and Dragonfly (Zhuang et al. 2023, sections 3-5)."""

import json

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import topocast as tc
from galaxyfly_reference import ReferencePlan, schedule_transfers
from topocast.algorithms import galaxyfly_broadcast as gb
from topocast.algorithms.galaxyfly_broadcast import router_first_schedule, supernode_first_schedule
from topocast.algorithms.galaxyfly_plan import Plan, halving_tree, spc_tree
from topocast.cli import main
from topocast.execution.execute import execute
from topocast.measure.event import run_events
from topocast.sim.models import CostModel, Model
from topocast.topology.galaxy import supernode_name
from topocast.topology.galaxyfly import supernode_view

#: the paper's section-5 metrics under the event engine's names (AvgPacket and SuccessRate are derived)
METRICS = ("time", "mean_completion_time", "min_completion_time", "redundant_receipts", "mean_group_completion_time",
           "mean_link_utilisation", "nodes_complete", "nodes")
COST = CostModel.from_bandwidth(16e9, startup=1e-6, per_hop=1e-7)


def _depth(edges, root):
    parent = dict(edges)
    return max((_chain(parent, c) for c in parent), default=0)


def _chain(parent, node):
    hops = 0
    while node in parent:
        node, hops = parent[node], hops + 1
    return hops


@pytest.mark.parametrize("a", range(1, 34))
def test_halving_tree(a):
    """Algorithm 1: a-1 edges, every router reaches the root, depth T(k) = 1 + T(ceil((k-1)/2))."""
    members = list(range(10, 10 + a))
    root = members[a // 3]
    edges = halving_tree(members, root)
    assert len(edges) == a - 1 and {c for c, _ in edges} == set(members) - {root}
    seen = {root}
    for child, parent in reversed(edges):  # parents come before children, top-down
        assert parent in seen
        seen.add(child)
    expect, k = 0, a
    while k > 1:
        k, expect = (k - 1 + 1) // 2, expect + 1
    assert _depth(edges, root) == expect


def test_halving_tree_b1_is_ceil_half():
    # RPC({R1..R8}, R4): B = R1 R2 R3 R5 R6 R7 R8, B1 = R1 R2 R3 R5 (first ceil(7/2)), B2 = R6 R7 R8
    edges = halving_tree([1, 2, 3, 4, 5, 6, 7, 8], 4)
    assert sorted(c for c, p in edges if p == 4) == [1, 6]


def test_spc_tree_worked_example():
    """Section 3.2: from S8, S5 serves S1 S4 S13, S7 serves S3 S6 S14, S9 serves S2 S10 S15, S12 serves S11."""
    view = supernode_view(tc.build("galaxyfly:n=3,q=5,a=4"))
    parent, order = spc_tree(view, 7)
    served = {supernode_name(x): sorted((supernode_name(y) for y in range(15) if parent[y] == x),
                                        key=lambda s: int(s[1:])) for x in range(15) if parent[x] == 7}
    assert served == {"S5": ["S1", "S4", "S13"], "S7": ["S3", "S6", "S14"], "S9": ["S2", "S10", "S15"],
                      "S12": ["S11"]}
    assert [supernode_name(s) for s in order[1:5]] == ["S5", "S7", "S9", "S12"]


def _check_dependencies(schedule):
    """Every carried packet is the sender's own or brought by one of the transfers it waits for."""
    for t in range(schedule.num_transfers):
        deps = schedule.after_ids[schedule.after_ptr[t]:schedule.after_ptr[t + 1]]
        brought = {int(schedule.src[t])}
        for d in deps:
            assert schedule.dst[d] == schedule.src[t]
            brought |= set(schedule.messages_of(int(d)).tolist())
        assert set(schedule.messages_of(t).tolist()) <= brought


@pytest.mark.parametrize("make", [supernode_first_schedule, router_first_schedule])
def test_dependencies_are_the_data(make):
    _check_dependencies(make(tc.build("galaxyfly:n=3,q=5,a=4"), root=7))


@settings(max_examples=25, deadline=None)
@given(q=st.sampled_from([1, 3, 4, 5, 7, 8, 9]), n=st.integers(1, 4), a=st.integers(1, 6),
       extra_h=st.integers(0, 2), data=st.data())
def test_sfata_rfata_deliver_exactly_once(q, n, a, extra_h, data):
    """Any h (routers with several global links, or none) and any root A."""
    assume(n * q >= 2)  # one rule for every family: a network has at least two nodes
    h = tc.build(f"galaxyfly:n={n},q={q},a={a}").meta["h"] + extra_h
    topology = tc.build(f"galaxyfly:n={n},q={q},a={a},h={h}")
    root = data.draw(st.integers(0, n * q - 1))
    for make in (supernode_first_schedule, router_first_schedule):
        trace = run_events(topology, make(topology, root=root), COST, keep_arrival=True)
        v = trace.verification
        assert v.verified and v.complete and v.redundant_receipts == 0, v.first_violation
        assert v.receipts == topology.num_nodes * (topology.num_nodes - 1)


def _reference(topology, which, root):
    ref = ReferencePlan(topology, root)
    if which in ("sfata", "rfata"):
        return ref.run(router_first=which == "rfata")
    if which == "spc":
        ref.spc(router_first=False)
    elif which == "spd":
        ref.gather(root)
        ref.spd(set(ref.routers(root)))
    return ref.transfers


MAKERS = {"sfata": supernode_first_schedule, "rfata": router_first_schedule, "spc": gb.spc_schedule,
          "spd": gb.spd_schedule}


@settings(max_examples=40, deadline=None)
@given(q=st.sampled_from([1, 3, 4, 5, 7, 8, 9]), n=st.integers(1, 4), a=st.integers(1, 7),
       extra_h=st.integers(0, 2), data=st.data())
def test_vectorised_plan_equals_one_transfer_at_a_time(q, n, a, extra_h, data):
    """The batched planner numbers, routes, fills and orders every transfer as the paper's loops do."""
    assume(n * q >= 2)  # one rule for every family: a network has at least two nodes
    d = len(supernode_view(tc.build(f"galaxyfly:n={n},q={q},a={a}")).neighbours_of(0))
    h = (-(-d // a) if d else 0) + extra_h
    topology = tc.build(f"galaxyfly:n={n},q={q},a={a},h={h}")
    root = data.draw(st.integers(0, n * q - 1))
    for which, make in MAKERS.items():
        assert schedule_transfers(make(topology, root=root)) == _reference(topology, which, root), which
    ref = ReferencePlan(topology, root)
    local = data.draw(st.integers(0, a - 1))
    ref.rpc(root, root * a + local)
    assert schedule_transfers(gb.rpc_schedule(topology, supernode=root, router=local)) == ref.transfers


def test_plan_refuses_a_batch_that_does_not_commute():
    """Two transfers of one batch bringing the same packets to one router would both carry them."""
    topology = tc.build("galaxyfly:n=3,q=5,a=4")
    view = supernode_view(topology)
    plan = Plan(view)
    blocks = np.zeros((2, view.num_supernodes), dtype=bool)
    blocks[:, 3] = True  # supernode 3's packets, offered by two routers to router 0 at once
    with pytest.raises(AssertionError, match="do not commute"):
        plan.send([12, 13], [0, 0], blocks, np.zeros((2, 4), dtype=bool), np.zeros((2, 4)))


@pytest.mark.parametrize("spec", ["galaxyfly:n=3,q=5,a=4", "dragonfly:g=3,a=20", "galaxyfly:n=2,q=4,a=3,h=2"])
@pytest.mark.parametrize("alg", ["sfata", "rfata"])
def test_metrics_against_brute_force(spec, alg):
    result = tc.run(spec, alg, packet_size=320)
    m, trace = result.metrics, result.trace
    arr = trace.arrival
    n = arr.shape[0]
    a = supernode_view(tc.build(spec)).a
    done = [max(arr[r]) for r in range(n)]
    own = [max(arr[r, (r // a) * a:(r // a + 1) * a]) for r in range(n)]
    assert result.verified and m["exactly_once"]
    assert m["time"] == pytest.approx(max(done))
    assert m["min_completion_time"] == pytest.approx(min(done))
    assert m["mean_completion_time"] == pytest.approx(np.mean(done))
    assert m["mean_group_completion_time"] == pytest.approx(np.mean(own))
    assert m["mean_link_utilisation"] == pytest.approx(trace.arc_busy.sum() / len(trace.arc_busy) / max(done))
    assert m["redundant_receipts"] == 0 and m["nodes_complete"] == m["nodes"] == n
    assert m["lower_bound"] > 0 and m["lower_bound_ratio"] >= 1
    assert result.params["message_bytes"] == 320 and "packet_size" not in result.params


def test_transfer_size_is_packets_times_packet_size():
    """With no start-up and no hop latency every time doubles with the packet size."""
    t = tc.build("galaxyfly:n=3,q=5,a=4")
    small = tc.run(t, "sfata", packet_size=160, startup=0, per_hop=0).metrics
    big = tc.run(t, "sfata", packet_size=320, startup=0, per_hop=0).metrics
    for key in ("mean_completion_time", "time", "min_completion_time", "mean_group_completion_time"):
        assert big[key] == pytest.approx(2 * small[key])


def test_router_first_has_lower_router_time():
    t = tc.build("galaxyfly:n=3,q=5,a=4")
    sf, rf = tc.run(t, "sfata").metrics, tc.run(t, "rfata").metrics
    assert rf["mean_group_completion_time"] < sf["mean_group_completion_time"] / 4


@pytest.mark.parametrize("alg, params", [
    ("rpc", {"supernode": 3, "router": 2}), ("rpd", {"supernode": 3, "router": 1}),
    ("spc", {"root": 7}), ("spd", {"root": 7}),
])
def test_building_blocks_verified(alg, params):
    result = tc.run("galaxyfly:n=3,q=5,a=8", alg, **params)
    assert result.verified and result.metrics["exactly_once"], result.first_violation
    assert result.metrics["time"] >= result.metrics["lower_bound"] > 0
    assert "mean_group_completion_time" not in result.metrics  # no supernode groups for a building block


def test_rpc_time_is_tree_depth():
    """RPC on a=8: three levels, carrying 1, 2 and 4 packets along the longest chain."""
    t = tc.build("galaxyfly:n=3,q=5,a=8")
    m = tc.run(t, "rpc", supernode=0, router=0, startup=0, per_hop=1e-6, packet_size=1).metrics
    assert m["time"] == pytest.approx(3e-6 + (1 + 2 + 4) * 8 / 16e9)


def test_bad_parameters():
    with pytest.raises(tc.TopocastError, match="'root' must be a supernode in 0..14, got root=15"):
        tc.run("galaxyfly:n=3,q=5,a=4", "sfata", root=15)
    with pytest.raises(tc.TopocastError, match="'router' must be a local router"):
        tc.run("galaxyfly:n=3,q=5,a=4", "rpc", router=4)
    with pytest.raises(tc.TopocastError, match="runs on galaxyfly, dragonfly"):
        tc.run("torus:4x4", "sfata")


def test_cli_run_json(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "galaxyfly:n=3,q=5,a=4", "sfata", "--set", "packet_size=160", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert exit_info.value.code == 0 and data["verified"]
    for key in METRICS + ("lower_bound", "lower_bound_ratio"):
        assert key in data
    assert data["nodes_complete"] == data["nodes"] == 60 and data["redundant_receipts"] == 0
    assert data["params"]["message_bytes"] == 160 and data["params"]["per_byte"] == 5e-10
    for old in ("avg_time", "max_time", "router_time", "avg_channel", "avg_packet", "success_rate", "routers",
                "packet_size", "bandwidth", "time_lower_bound"):
        assert old not in data


def test_nodes_complete_counts_incomplete_routers():
    """SuccessRate = nodes_complete / nodes: a schedule whose last transfer carries one packet fewer."""
    from dataclasses import replace

    t = tc.build("galaxyfly:n=3,q=5,a=4")
    schedule = supernode_first_schedule(t)
    count = schedule.range_count.copy()
    last = int(np.flatnonzero(count > 0)[-1])
    count[last] -= 1
    broken = replace(schedule, range_count=count)
    result = execute(t, broken, "event", Model(cost=COST))
    m = result.metrics
    assert not result.verified and not m["complete"] and m["missing_deliveries"] >= 1
    assert 0 < m["nodes_complete"] < m["nodes"] == 60


def test_bandwidth_and_packet_size_are_aliases():
    t = tc.build("galaxyfly:n=3,q=5,a=4")
    via_alias = tc.run(t, "sfata", packet_size=320, bandwidth=8e9)
    direct = tc.run(t, "sfata", message_bytes=320, per_byte=1e-9)
    assert via_alias.params == direct.params and via_alias.metrics["time"] == direct.metrics["time"]
    with pytest.raises(tc.TopocastError, match="bandwidth: must be > 0"):
        tc.run(t, "sfata", bandwidth=0)
    with pytest.raises(tc.TopocastError, match="given twice"):
        tc.run(t, "sfata", packet_size=320, message_bytes=160)
