"""Hostile files made from valid ones by mutation: every reader refuses them cleanly or reads them correctly.

A valid graph (GraphML, GML, node-link JSON, edge list), schedule, sweep grid or result store is written,
then bytes are flipped, cut, repeated or inserted (control characters, quotes and brackets among them).
Whatever the mutation, the reader raises a one-line :class:`TopocastError` or returns a result that an
independent reader agrees with: networkx's own reader for graph files, a plain split of the lines for edge
lists, the shared verifier for schedules.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.errors import TopocastError
from topocast.topology.export import export

NASTY = [b"\x00", b"\x1b[2J", b"\n", b"\r", b'"', b"'", b"<", b">", b"&", b"{", b"}", b"[", b"]", b"#", b" ",
         b"\xff", b"\xc3\xa9", b"-1", b"99999999999999999999", b"NaN", b"1e400", b"\t", b",", b"="]


@st.composite
def mutated(draw, data: bytes) -> bytes:
    """``data`` after one to three random mutations."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "cut", "insert", "repeat", "truncate", "swap"]))
        n = len(data)
        if n == 0:
            data = draw(st.sampled_from(NASTY))
            continue
        at = draw(st.integers(0, n - 1))
        if kind == "flip":
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1:]
        elif kind == "cut":
            data = data[:at] + data[at + draw(st.integers(1, 40)):]
        elif kind == "insert":
            data = data[:at] + draw(st.sampled_from(NASTY)) + data[at:]
        elif kind == "repeat":
            lines = data.splitlines(keepends=True)
            i = draw(st.integers(0, len(lines) - 1))
            data = b"".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])
        elif kind == "truncate":
            data = data[:at]
        else:
            lines = data.splitlines(keepends=True)
            i, j = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
            data = b"".join(lines)
    return data


def _one_line(exc: TopocastError) -> None:
    assert "\n" not in str(exc) and str(exc).strip(), repr(str(exc))


def _valid(kind: str, folder: Path) -> bytes:
    path = folder / f"valid.{kind}"
    export(tc.build("torus:3x4"), {"edges": "edgelist"}.get(kind, kind), path)
    return path.read_bytes()


VALID = {}
with tempfile.TemporaryDirectory() as _folder:
    for _kind in ("graphml", "gml", "json", "edges"):
        VALID[_kind] = _valid(_kind, Path(_folder))


def _edge_list_oracle(data: bytes) -> tuple[int, int]:
    """Nodes and links of an edge list, read by splitting lines (first two columns, ``#`` comments; a line ends
    at ``\\n``, ``\\r\\n`` or ``\\r``, as Python's universal newlines and networkx's reader have it)."""
    names, links = set(), 0
    for line in data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        words = line.split("#", 1)[0].split()
        if len(words) >= 2:
            names.update(words[:2])
            links += 1
    return len(names), links


def _networkx_oracle(kind: str, path: Path):
    if kind == "graphml":
        return nx.read_graphml(path)
    if kind == "gml":
        try:
            return nx.read_gml(path, label="label")
        except nx.NetworkXError:
            return nx.read_gml(path, label="id")
    data = json.loads(path.read_text(encoding="utf-8"))
    return nx.node_link_graph(data, edges="links" if "links" in data else "edges")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(VALID)), data=st.data())
def test_mutated_graph_files_are_refused_or_read_correctly(kind, data):
    content = data.draw(mutated(VALID[kind]))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"g.{kind}"
        path.write_bytes(content)
        try:
            t = tc.build(f"graph:{path}")
        except TopocastError as exc:
            _one_line(exc)
            return
        if kind == "edges":
            assert (t.num_nodes, t.num_edges) == _edge_list_oracle(content)
            return
        g = _networkx_oracle(kind, path)
    assert t.num_nodes == g.number_of_nodes() and t.num_edges == g.number_of_edges()
    assert nx.is_isomorphic(nx.Graph(t.to_networkx()), nx.Graph(g))


@pytest.fixture(scope="module")
def schedule_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("s") / "s.json"
    tc.synthesize("ring:6", "allgather", restarts=0).write(path)
    return path.read_bytes()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_schedules_are_refused_or_replayed_and_verified(schedule_bytes, data):
    content = data.draw(mutated(schedule_bytes))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        path.write_bytes(content)
        try:
            result = tc.synthesis.replay("ring:6", path)
        except TopocastError as exc:
            _one_line(exc)
            return
    # accepted: the shared verifier ran it; a broken schedule is a failed verification with its violation
    assert result.verified or result.first_violation or not result.metrics["exactly_once"]


GRID = (b'[sweep]\nspecs = ["ring:6", "hypercube:3"]\nalgorithms = ["broadcast-bfs-tree"]\nseeds = [1, 2]\n'
        b'engine = "step"\n[params]\nmessage_bytes = [512, 2048]\nroot = [0, 1]\n')


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_grids_are_refused_or_expand_to_valid_runs(data):
    from topocast.sweep.grid import check_grid, expand, load_grid

    content = data.draw(mutated(GRID))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "grid.toml"
        path.write_bytes(content)
        try:
            grid = load_grid(path)
            check_grid(grid)
            tasks = expand(grid)
        except TopocastError as exc:
            _one_line(exc)
            return
    assert tasks and all(isinstance(t["spec"], str) and isinstance(t["seed"], int) for t in tasks)
    assert len({t["key"] for t in tasks}) == len(tasks)


@pytest.fixture(scope="module")
def store_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("st") / "s.jsonl"
    tc.sweep({"specs": ["hypercube:3", "hypercube:4"], "algorithms": ["broadcast-binomial"], "seeds": [1, 2]},
             path, workers=1)
    return path.read_bytes()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_stores_are_refused_or_read_row_by_row(store_bytes, data):
    import warnings

    from topocast.outputs.plot import plot
    from topocast.outputs.store import Store, row_problem, scan

    content = data.draw(mutated(store_bytes))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(content)
        found = scan(path)
        assert all(row_problem(row) is None for row in found.rows)
        assert len({row["key"] for row in found.rows}) == len(found.rows)
        try:
            with Store(path) as store:
                assert store.keys == {row["key"] for row in found.rows}
            assert found.foreign is None
        except TopocastError as exc:
            _one_line(exc)
            assert found.foreign is not None
            assert path.read_bytes() == content   # refused: not one byte written
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                plot(path, "N", "steps", out=Path(folder) / "p.png")
            except TopocastError as exc:
                _one_line(exc)
