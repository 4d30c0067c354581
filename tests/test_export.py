"""Exports: GraphML, GML, JSON and edge lists read back with ``graph:``; BookSim2 anynet parsed back; the CLI."""

import json
import subprocess
import sys
from collections import Counter

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.topology.export import FORMATS, export, export_text

EXTENSION = {"graphml": "graphml", "gml": "gml", "json": "json", "edgelist": "edges"}
SPECS = ["torus:3x4", "torus:2x3", "hypercube:4", "hdn:base=K2,k=3,s=2/1/2", "galaxyfly:n=3,q=3,a=2",
         "ej:a=3,b=4,n=1", "ej:a=1,b=2,n=2"]


def multigraph(t: tc.Topology) -> nx.MultiGraph:
    """The topology as a MultiGraph (the oracle keeps link multiplicity)."""
    src, dst = t.arc_sources, t.indices
    keep = src < dst
    g = nx.MultiGraph()
    g.add_nodes_from(range(t.num_nodes))
    g.add_edges_from(zip(src[keep].tolist(), dst[keep].tolist(), strict=True))
    return g


@pytest.mark.parametrize("fmt", list(EXTENSION))
@pytest.mark.parametrize("spec", SPECS)
def test_export_then_graph_is_isomorphic(tmp_path, spec, fmt):
    t = tc.build(spec)
    back = tc.build(f"graph:{export(t, fmt, tmp_path / ('net.' + EXTENSION[fmt]))}")
    assert back.num_nodes == t.num_nodes and back.num_edges == t.num_edges
    assert nx.vf2pp_is_isomorphic(multigraph(back), multigraph(t))
    assert back.has_parallel_links == t.has_parallel_links


@pytest.mark.parametrize("fmt", ["graphml", "gml", "json"])
@pytest.mark.parametrize("spec", SPECS)
def test_export_then_graph_rebuilds_the_same_graph(tmp_path, spec, fmt):
    """Same nodes in the same order, the same links with multiplicity, labels as names."""
    t = tc.build(spec)
    back = tc.build(f"graph:{export(t, fmt, tmp_path / ('net.' + EXTENSION[fmt]))}")
    assert np.array_equal(back.indptr, t.indptr) and np.array_equal(back.indices, t.indices)
    assert [back.node_name(i) for i in range(t.num_nodes)] == [t.codec.format(i) for i in range(t.num_nodes)]


def test_torus_round_trip_keeps_coordinates_as_names(tmp_path):
    t = tc.build("torus:4x5")
    back = tc.build(f"graph:{export(t, 'graphml', tmp_path / 't.graphml')}")
    node = t.index((2, 3))
    assert back.node_name(node) == "2,3" and back.index("2,3") == node
    assert {back.node_name(int(v)) for v in back.neighbors(node)} == {"1,3", "3,3", "2,2", "2,4"}
    text = (tmp_path / "t.graphml").read_text()
    assert 'id="2,3"' in text and "torus:4x5" in text


def parse_anynet(text: str) -> tuple[dict[int, int], dict[int, Counter]]:
    """A reader of BookSim2's anynet listing: ``router R node N ... router R' ...`` per line.

    Returns the router of each terminal node and, per router, its router
    neighbours (links are bidirectional: a link listed on one side counts on
    both, as BookSim's reader does).
    """
    terminal: dict[int, int] = {}
    routers: dict[int, set] = {}
    for line in text.splitlines():
        tokens = line.split()
        if not tokens:
            continue
        assert tokens[0] == "router" and len(tokens) % 2 == 0, line
        head = int(tokens[1])
        routers.setdefault(head, set())
        for kind, ident in zip(tokens[2::2], tokens[3::2], strict=True):
            if kind == "node":
                assert terminal.setdefault(int(ident), head) == head
            else:
                assert kind == "router"
                routers[head].add(int(ident))
                routers.setdefault(int(ident), set()).add(head)
    return terminal, routers


@pytest.mark.parametrize("spec", ["torus:3x4", "torus:2x3", "hypercube:3", "galaxyfly:n=3,q=3,a=2", "ej:a=1,b=2,n=2"])
def test_anynet_parses_back_to_the_same_adjacency(spec):
    t = tc.build(spec)
    terminal, routers = parse_anynet(export_text(t, "booksim-anynet"))
    assert terminal == {i: i for i in range(t.num_nodes)}
    assert sorted(routers) == list(range(t.num_nodes))
    g = nx.Graph(t.to_networkx())  # BookSim has no parallel links: one channel each way per neighbour
    assert all(routers[v] == set(g[v]) for v in g)
    lines = export_text(t, "booksim-anynet").splitlines()
    assert all(line.split().count("router") - 1 == len(set(g[i])) for i, line in enumerate(lines))


def test_anynet_and_edgelist_refusals(tmp_path):
    disconnected = tc.Topology.from_networkx(nx.Graph([(0, 1), (2, 3)]))
    with pytest.raises(tc.TopocastError, match="booksim-anynet needs a connected network"):
        export(disconnected, "booksim-anynet", tmp_path / "x.anynet")
    g = nx.path_graph(3)
    g.add_node(9)
    isolated = tc.Topology.from_networkx(g)
    with pytest.raises(tc.TopocastError, match="isolated node '9'"):
        export(isolated, "edgelist", tmp_path / "x.edges")
    with pytest.raises(tc.TopocastError, match="format must be one of"):
        export(tc.build("ring:4"), "dot", tmp_path / "x.dot")
    with pytest.raises(tc.TopocastError, match="cannot tell the format"):
        export(tc.build("ring:4"), None, tmp_path / "x.dot")
    assert not list(tmp_path.iterdir())


def test_export_format_from_extension_is_atomic(tmp_path):
    with pytest.raises(tc.TopocastError, match="OUT: .*directory .*sub' does not exist"):
        export(tc.build("ring:5"), None, tmp_path / "sub" / "ring.json")  # the API creates no directory either
    assert not (tmp_path / "sub").exists()
    (tmp_path / "sub").mkdir()
    path = export(tc.build("ring:5"), None, tmp_path / "sub" / "ring.json")
    data = json.loads(path.read_text())
    assert len(data["nodes"]) == 5 and len(data["links"]) == 5
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["ring.json"]  # no temporary file left


def cli(*args):
    return subprocess.run([sys.executable, "-m", "topocast.cli", *args], capture_output=True, text=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_export_writes_the_file(tmp_path, fmt):
    out = tmp_path / f"net.{EXTENSION.get(fmt, 'anynet')}"
    done = cli("export", "torus:3x3", "--format", fmt, str(out))
    assert done.returncode == 0, done.stderr
    assert out.exists() and out.stat().st_size > 0 and str(out) in done.stdout
    if fmt != "booksim-anynet":
        assert nx.is_isomorphic(tc.build(f"graph:{out}").to_networkx(), tc.build("torus:3x3").to_networkx())


def test_cli_export_bad_format_is_one_line_exit_2(tmp_path):
    done = cli("export", "torus:3x3", "--format", "dot", str(tmp_path / "x.dot"))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "format must be one of" in done.stderr
    done = cli("export", "torus:3x3", str(tmp_path / "x.unknown"))
    assert done.returncode == 2 and "cannot tell the format" in done.stderr
    assert not list(tmp_path.iterdir())
