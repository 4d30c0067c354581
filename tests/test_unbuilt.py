"""Engines that run from the spec alone never build the topology."""

import pytest

import topocast as tc
from topocast.topology.core import UnbuiltTopology


def test_frontier_engine_runs_where_a_build_would_be_refused():
    with pytest.raises(tc.TopocastError, match="max-memory"):
        tc.build("ej:a=3,b=4,n=4", max_memory=100 * 2**20)
    result = tc.run("ej:a=3,b=4,n=4", "one-to-all-improved", engine="frontier", max_memory=100 * 2**20)
    assert result.verified and result.metrics["exactly_once"] and result.metrics["complete"]
    assert result.metrics["steps"] == 4 * 3
    built = tc.run("ej:a=3,b=4,n=2", "one-to-all-improved", engine="step")
    unbuilt = tc.run("ej:a=3,b=4,n=2", "one-to-all-improved", engine="frontier")
    assert unbuilt.per_step["senders"] == built.per_step["senders"]
    # unbuilt: the plan's hint is the bound, equal to the one computed on the built topology
    assert result.metrics["lower_bound"] == 4 * 3 and unbuilt.metrics["lower_bound"] == built.metrics["lower_bound"]


def test_unbuilt_topology_carries_the_parsed_parameters():
    t = UnbuiltTopology("ej", {"a": 3, "b": 4, "n": 2}, 37 ** 2)
    assert t.spec == "ej:a=3,b=4,n=2" and t.num_nodes == 1369
