"""The ``graph:`` family and ``Topology.from_networkx``: files in four formats read back against networkx."""

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.topology.metrics import is_connected

FORMATS = ("graphml", "gml", "json", "edges")


def write(g, path: Path) -> Path:
    """``g`` written with networkx's own writer for ``path``'s extension."""
    kind = path.suffix[1:]
    if kind == "graphml":
        nx.write_graphml(g, path)
    elif kind == "gml":
        nx.write_gml(g, path)
    elif kind == "json":
        path.write_text(json.dumps(nx.node_link_data(g, edges="links")))
    else:
        nx.write_edgelist(g, path, data=False)
    return path


def links(t: tc.Topology) -> Counter:
    """Multiset of links as pairs of node names (each link once)."""
    src, dst = t.arc_sources, t.indices
    keep = src < dst
    return Counter(frozenset((t.node_name(int(u)), t.node_name(int(v)))) for u, v in zip(src[keep], dst[keep],
                                                                                            strict=True))


def nx_links(g) -> Counter:
    return Counter(frozenset((u, v)) for u, v in g.edges())


@st.composite
def graphs(draw):
    """Random simple graphs (G(n, m) or random regular), optionally with parallel edges (MultiGraph)."""
    seed = draw(st.integers(0, 10**6))
    if draw(st.booleans()):
        n = draw(st.integers(1, 30))
        g = nx.gnm_random_graph(n, draw(st.integers(0, n * (n - 1) // 2)), seed=seed)
    else:
        n = draw(st.integers(4, 30))
        d = draw(st.integers(1, 3))
        n += (n * d) % 2
        g = nx.random_regular_graph(d, n, seed=seed)
    if draw(st.booleans()) and g.number_of_edges():
        g = nx.MultiGraph(g)
        edges = list(g.edges())
        for i in draw(st.lists(st.integers(0, len(edges) - 1), max_size=5)):
            g.add_edge(*edges[i])
    return g


@settings(max_examples=25, deadline=None)
@given(g=graphs(), kind=st.sampled_from(FORMATS))
def test_random_graphs_read_back_in_every_format(g, kind):
    with tempfile.TemporaryDirectory() as folder:
        path = write(g, Path(folder) / f"g.{kind}")
        expected = g
        if kind == "edges":  # an edge list holds no isolated node
            expected = g.subgraph([v for v in g if g.degree(v) > 0]).copy()
        if expected.number_of_nodes() < 2:  # one rule for every family: at least two nodes
            with pytest.raises(tc.TopocastError, match="the graph is empty|holds no edge|at least 2 nodes"):
                tc.build(f"graph:{path}")
            return
        t = tc.build(f"graph:{path}")
    assert t.num_nodes == expected.number_of_nodes()
    assert links(t) == nx_links(expected)
    assert [t.node_name(i) for i in range(t.num_nodes)] == sorted(expected.nodes())
    assert t.has_parallel_links == any(c > 1 for c in nx_links(expected).values())
    assert t.is_connected == nx.is_connected(expected)


def tuple_names_as_text(g):
    return nx.relabel_nodes(g, {v: ",".join(map(str, v)) for v in g} if isinstance(next(iter(g)), tuple) else {})


@pytest.mark.parametrize("kind", FORMATS)
@pytest.mark.parametrize("name, g", [
    ("petersen", nx.petersen_graph()),
    ("hypercube", nx.hypercube_graph(4)),
    ("torus", nx.grid_2d_graph(4, 5, periodic=True)),
])
def test_named_graphs_have_networkx_diameter(tmp_path, kind, name, g):
    path = write(tuple_names_as_text(g), tmp_path / f"{name}.{kind}")
    data = tc.info(f"graph:{path}")
    assert data["diameter"] == nx.diameter(g)
    assert data["nodes"] == g.number_of_nodes() and data["edges"] == g.number_of_edges()


def test_tuple_names_come_back_and_are_found_from_text():
    g = nx.grid_2d_graph(3, 4, periodic=True)
    t = tc.Topology.from_networkx(g)
    assert [t.label(i) for i in range(t.num_nodes)] == sorted(g.nodes())
    node = t.index((1, 2))
    assert t.label(node) == (1, 2) == t.node_name(node)
    assert t.index("1,2") == t.index("(1, 2)") == node
    assert set(t.neighbors(node).tolist()) == {t.index(v) for v in g[(1, 2)]}


def test_string_and_int_names(tmp_path):
    t = tc.Topology.from_networkx(nx.path_graph(["n10", "n2", "n1"]))
    assert [t.label(i) for i in range(3)] == [("n1",), ("n2",), ("n10",)]  # natural order
    assert t.index("n10") == 2 and t.index(("n2",)) == 1
    t = tc.Topology.from_networkx(nx.path_graph([12, 3, 7]))
    assert [t.node_name(i) for i in range(3)] == [3, 7, 12]
    assert t.index(12) == t.index("12") == 2
    with pytest.raises(tc.TopocastError, match="unknown node"):
        t.index("13")
    mixed = nx.Graph([("b", 1), (1, "a")])  # names that do not compare keep insertion order
    assert [tc.Topology.from_networkx(mixed).node_name(i) for i in range(3)] == ["b", 1, "a"]
    path = tmp_path / "names.edges"
    path.write_text("# a comment\nalpha beta\nbeta gamma 7\n")  # extra columns are ignored
    t = tc.build(f"graph:{path}")
    assert t.index("gamma") == 2 and t.label(0) == ("alpha",)


def test_multigraph_parallel_edges_become_parallel_links():
    g = nx.MultiGraph([(0, 1), (0, 1), (1, 2)])
    t = tc.Topology.from_networkx(g)
    assert t.num_edges == 3 and t.port_degree.tolist() == [2, 3, 1] and t.has_parallel_links
    assert nx.is_isomorphic(t.to_networkx(), g)


def test_directed_self_loop_and_empty_graphs_are_refused(tmp_path):
    with pytest.raises(tc.TopocastError) as info:
        tc.Topology.from_networkx(nx.DiGraph([(0, 1)]))
    assert str(info.value) == "graph: directed graphs are not supported; convert with g.to_undirected()"
    with pytest.raises(tc.TopocastError, match="self-loop"):
        tc.Topology.from_networkx(nx.Graph([(0, 1), (1, 1)]))
    with pytest.raises(tc.TopocastError, match="empty"):
        tc.Topology.from_networkx(nx.Graph())
    directed = write(nx.DiGraph([(0, 1), (1, 2)]), tmp_path / "d.graphml")
    with pytest.raises(tc.TopocastError, match="graph: directed graphs are not supported.*d.graphml"):
        tc.build(f"graph:{directed}")
    loop = tmp_path / "loop.edges"
    loop.write_text("a b\nb b\n")
    with pytest.raises(tc.TopocastError, match="node 'b' has a self-loop.*loop.edges"):
        tc.build(f"graph:{loop}")


def test_disconnected_graph_builds_and_says_so(tmp_path):
    path = write(nx.Graph([(0, 1), (2, 3), (3, 4)]), tmp_path / "two.gml")
    t = tc.build(f"graph:{path}")
    assert t.num_nodes == 5 and not t.is_connected and not is_connected(t)
    assert tc.build("torus:3x3").is_connected
    assert tc.Topology.from_networkx(nx.Graph([(0, 1)])).is_connected


def test_path_with_grammar_characters_and_canonical_spec(tmp_path, monkeypatch):
    folder = tmp_path / "a,b=c:d"
    folder.mkdir()
    path = write(nx.cycle_graph(5), folder / "ring,5=x:y.graphml")
    t = tc.build(f"graph:{path}")
    assert t.spec == f"graph:{path.resolve()}" and t.params["path"] == str(path.resolve())
    monkeypatch.chdir(folder)
    t = tc.build("graph:ring,5=x:y.graphml")  # relative path: the spec becomes absolute
    assert t.spec == f"graph:{path.resolve()}" and t.num_edges == 5
    assert tc.build(t.spec).num_nodes == 5


def test_memory_guard_sees_the_file_size(tmp_path):
    path = write(nx.complete_graph(40), tmp_path / "k40.json")
    with pytest.raises(tc.TopocastError, match="max-memory"):
        tc.build(f"graph:{path}", max_memory=1000)
    assert tc.build(f"graph:{path}").num_edges == 780


@pytest.mark.parametrize("name, content, message", [
    ("missing.graphml", None, "cannot read '.*missing.graphml': no such file"),
    ("net.csv", "a,b\n", "cannot parse '.*net.csv' as edge list: line 1 has one column"),  # read by its content
    ("bad.graphml", "<graphml><node", "cannot parse '.*bad.graphml' as GraphML"),
    ("bad.gml", "graph [ node [ id 0 ", "cannot parse '.*bad.gml' as GML"),
    ("bad.json", "{not json", "cannot parse '.*bad.json' as node-link JSON"),
    ("list.json", "[1, 2]", "cannot parse '.*list.json' as node-link JSON"),
    ("bad.edgelist", "\xff\xfe\x00", "cannot parse '.*bad.edgelist' as edge list"),
])
def test_bad_files_give_one_line_errors(tmp_path, name, content, message):
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content.encode("latin-1"))
    with pytest.raises(tc.TopocastError, match="graph: " + message) as info:
        tc.build(f"graph:{path}")
    assert "\n" not in str(info.value)


def test_directory_and_empty_path_are_refused(tmp_path):
    folder = tmp_path / "dir.graphml"
    folder.mkdir()
    with pytest.raises(tc.TopocastError, match="not a file"):
        tc.build(f"graph:{folder}")
    with pytest.raises(tc.TopocastError, match="give a file path"):
        tc.build("graph:")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "topocast.cli", *args], capture_output=True, text=True)


def test_cli_info_route_and_bad_file(tmp_path):
    path = write(nx.path_graph(["a", "b", "c", "d"]), tmp_path / "p.json")
    done = cli("route", f"graph:{path}", "--from", "a", "--to", "d", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["path"] == [["a"], ["b"], ["c"], ["d"]] and data["length"] == 3
    done = cli("info", f"graph:{tmp_path / 'nope.gml'}")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "graph: cannot read" in done.stderr and "Traceback" not in done.stderr
