"""Step and event engines: rejections name the first offending transfer; counts and times are right."""

import numpy as np
import pytest

import topocast as tc
from topocast.measure.event import run_events
from topocast.measure.step import run_steps
from topocast.plans.schedule import ScheduleBuilder
from topocast.sim.models import CostModel, PortModel


def broadcast_builder(n, root=0, **kw):
    return ScheduleBuilder(n, origin=[root], collective="broadcast", **kw)


def test_missing_link_is_rejected():
    t = tc.build("ring:6")
    b = broadcast_builder(6)
    b.add(src=[0], dst=[1], first=0, step=0)
    b.add(src=[1], dst=[3], first=0, step=1)
    trace = run_steps(t, b.build())
    assert not trace.verification.verified
    assert "transfer 1 (step 1) 1 -> 3" in trace.verification.first_violation
    assert "no link" in trace.verification.first_violation


def test_sending_data_not_yet_held_is_rejected():
    t = tc.build("path:3")
    b = broadcast_builder(3)
    b.add(src=[0, 1], dst=[1, 2], first=0, step=0)  # node 1 forwards in the step it receives
    trace = run_steps(t, b.build())
    assert "transfer 1" in trace.verification.first_violation
    assert "does not hold" in trace.verification.first_violation


def test_one_port_budget_is_enforced():
    t = tc.build("ring:5")
    b = broadcast_builder(5)
    b.add(src=[0, 0], dst=[1, 4], first=0, step=0)
    s = b.build()
    assert run_steps(t, s, PortModel.all_port()).verification.verified is False  # incomplete, but legal
    assert run_steps(t, s, PortModel.all_port()).verification.missing_deliveries == 2
    bad = run_steps(t, s, PortModel.one_port()).verification.first_violation
    assert "transfer 1" in bad and "port budget" in bad


def test_half_duplex_forbids_both_directions_in_one_step():
    t = tc.build("path:2")
    b = ScheduleBuilder(2, origin=[0, 1], collective="allgather")
    b.add(src=[0, 1], dst=[1, 0], first=[0, 1], step=0)
    s = b.build()
    assert run_steps(t, s, PortModel(None, "full")).verification.exactly_once
    bad = run_steps(t, s, PortModel(None, "half")).verification.first_violation
    assert "half-duplex" in bad


def test_a_link_carries_one_transfer_per_step_but_double_links_two():
    b = broadcast_builder(2)
    b.add(src=[0, 0], dst=[1, 1], first=0, step=0)
    s = b.build()
    assert "already carries" in run_steps(tc.build("path:2"), s).verification.first_violation
    trace = run_steps(tc.build("ring:2"), s)  # a ring of two is a double link
    assert trace.verification.complete and trace.verification.redundant_receipts == 1
    assert not trace.verification.verified and "redundant" in trace.verification.first_violation
    assert not trace.verification.exactly_once


def test_per_step_counts_and_completion():
    t = tc.build("path:4")
    b = broadcast_builder(4, root=1)
    b.add(src=[1, 1], dst=[0, 2], first=0, step=0)
    b.add(src=[2], dst=[3], first=0, step=1)
    trace = run_steps(t, b.build())
    assert trace.verification.exactly_once
    assert trace.senders.tolist() == [1, 1]
    assert trace.receivers.tolist() == [2, 1]
    assert trace.active.tolist() == [3, 2]
    assert trace.free.tolist() == [1, 2]
    assert trace.completion_step.tolist() == [1, 0, 1, 2]


def test_personalized_targets_and_intermediate_hops():
    t = tc.build("path:3")
    b = ScheduleBuilder(3, origin=[0], collective="unicast", targets=np.array([2]))
    b.add(src=[0], dst=[1], first=0, step=0)
    b.add(src=[1], dst=[2], first=0, step=1)
    trace = run_steps(t, b.build())
    assert trace.verification.exactly_once and trace.verification.receipts == 2
    assert trace.completion_step.tolist() == [0, 0, 2]


def test_multicast_targets_as_csr():
    t = tc.build("ring:6")
    targets = (np.array([0, 2]), np.array([2, 4]))
    b = ScheduleBuilder(6, origin=[0], collective="multicast", targets=targets)
    b.add(src=[0, 0], dst=[1, 5], first=0, step=0)
    b.add(src=[1, 5], dst=[2, 4], first=0, step=1)
    trace = run_steps(t, b.build())
    assert trace.verification.exactly_once
    b2 = ScheduleBuilder(6, origin=[0], collective="multicast", targets=targets)
    b2.add(src=[0], dst=[1], first=0, step=0)
    v = run_steps(t, b2.build()).verification
    assert not v.verified and v.missing_deliveries == 2 and "node 2" in v.first_violation


def test_event_engine_chain_time_and_link_serialisation():
    t = tc.build("path:3")
    cost = CostModel(startup=1.0, per_byte=0.5, per_hop=0.25)
    b = ScheduleBuilder(3, origin=[0, 0], collective="custom", targets=np.array([2, 2]), message_bytes=2.0)
    b.add(src=[0, 0], dst=[1, 1], first=[0, 1], step=0)   # two transfers share link 0->1
    b.add(src=[1], dst=[2], first=0, count=2, step=1)
    trace = run_events(t, b.build(), cost)
    # each 2-byte message holds the link 1 + 2*0.5 = 2; second waits for the first
    assert trace.start.tolist() == [0.0, 2.0, 4.25]
    assert trace.finish.tolist() == [2.25, 4.25, 4.25 + 1 + 4 * 0.5 + 0.25]
    assert trace.verification.exactly_once
    assert trace.arc_busy.sum() == pytest.approx(2 + 2 + 3)


def test_event_engine_dependencies_and_cycles():
    t = tc.build("path:3")
    b = broadcast_builder(3)
    b.add(src=[0], dst=[1], first=0, after=[[]])
    b.add(src=[1], dst=[2], first=0, after=[[0]])
    trace = run_events(t, b.build(), CostModel(1.0, 0.0, 0.0))
    assert trace.makespan == 2.0 and trace.verification.exactly_once
    b = broadcast_builder(3)
    b.add(src=[0, 1], dst=[1, 2], first=0, after=[[1], [0]])
    with pytest.raises(tc.TopocastError, match="cycle"):
        run_events(t, b.build())


def test_event_engine_flags_a_transfer_without_its_data():
    t = tc.build("path:3")
    b = broadcast_builder(3)
    b.add(src=[1], dst=[2], first=0, after=[[]])
    v = run_events(t, b.build()).verification
    assert not v.verified and "never receives" in v.first_violation


def test_one_port_event_engine_serialises_a_node():
    t = tc.build("ring:5")
    b = broadcast_builder(5)
    b.add(src=[0, 0], dst=[1, 4], first=0, step=0)
    cost = CostModel(1.0, 0.0, 0.0)
    assert run_events(t, b.build(), cost, PortModel.all_port()).makespan == 1.0
    assert run_events(t, b.build(), cost, PortModel.one_port()).makespan == 2.0


def test_the_first_offending_transfer_is_named_whatever_the_rule():
    t = tc.build("ring:5")
    b = broadcast_builder(5)
    b.add(src=[2, 0, 0], dst=[3, 1, 4], first=0, step=0)  # 2 lacks the message; 0 then exceeds one port
    bad = run_steps(t, b.build(), PortModel.one_port()).verification.first_violation
    assert bad.startswith("transfer 0 ") and "does not hold" in bad


def test_dependencies_as_lists_or_csr_give_the_same_schedule():
    def make(csr):
        b = broadcast_builder(4)
        b.add(src=[0], dst=[1], first=0, after=[[]])
        after = (np.array([0, 1, 3]), np.array([0, 0, 1])) if csr else [[0], [0, 1]]
        b.add(src=[1, 1], dst=[2, 0], first=0, after=after)
        return b.build()

    a, c = make(False), make(True)
    assert a.after_ptr.tolist() == c.after_ptr.tolist() == [0, 0, 1, 3]
    assert a.after_ids.tolist() == c.after_ids.tolist() == [0, 0, 1]
