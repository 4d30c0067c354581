"""SST Merlin anytopo and BookSim2 anynet files with the configurations that run them."""

from __future__ import annotations

import ast
import re
from collections import Counter

import networkx as nx
import pytest

import topocast as tc
from topocast.errors import TopocastError
from topocast.interop.simulators import export_booksim, export_sst


@pytest.mark.parametrize("spec", ["torus:3x4", "hypercube:3", "torus:2x3"])
def test_sst_graphml_is_what_anytopo_reads(spec, tmp_path):
    topology = tc.build(spec)
    graph, script = export_sst(topology, tmp_path / "net.graphml", endpoints=2)
    g = nx.read_graphml(graph)
    # anytopo numbers the nodes in file order and needs an integer 'endpoints' on every node
    assert list(g.nodes) == [str(v) for v in range(topology.num_nodes)]
    assert all(isinstance(d["endpoints"], int) and d["endpoints"] == 2 for _, d in g.nodes(data=True))
    assert not g.is_directed()
    want = Counter(tuple(sorted(e)) for e in zip(topology.arc_sources.tolist(), topology.indices.tolist(),
                                                    strict=True))
    got = Counter(tuple(sorted((int(u), int(v)))) for u, v in g.edges())
    assert got == Counter({k: c // 2 for k, c in want.items()})
    tree = ast.parse(script.read_text())
    assert "net.graphml" in script.read_text() and "topoAny" in script.read_text() and tree.body


def test_booksim_config_names_its_network_file(tmp_path):
    topology = tc.build("ring:6")
    network, cfg = export_booksim(topology, tmp_path / "ring.anynet")
    text = cfg.read_text()
    settings = dict(re.findall(r"^(\w+)\s*=\s*([^;]+);", text, re.M))
    assert settings["topology"] == "anynet" and settings["network_file"] == "ring.anynet"
    assert settings["routing_function"] == "min"
    lines = network.read_text().splitlines()
    assert lines[0] == "router 0 node 0 router 1 router 5"


def test_sst_refuses_a_disconnected_network(tmp_path):
    path = tmp_path / "two.edges"
    path.write_text("a b\nc d\n")
    with pytest.raises(TopocastError, match="connected"):
        export_sst(tc.build(f"graph:{path}"), tmp_path / "x.graphml")
