"""``topocast compare``: every column against an independent computation (networkx, brute force), the family
sizing, the references, the outputs and bad input."""

from __future__ import annotations

import itertools
import json
import math

import networkx as nx
import numpy as np
import pytest

import topocast as tc
from topocast.cli import main
from topocast.errors import TopocastError
from topocast.outputs import compare as cmp
from topocast.topology.terminals import terminal_counts

SMALL = ["slimfly:q=3", "polarfly:q=5", "hyperx:3x3,t=1x2,p=2", "dragonfly-plus:l=2,s=2,h=2,g=4",
         "fattree:k=2,n=3", "jellyfish:n=16,d=3,p=2,seed=1", "kautz:d=2,n=3", "torus:4x4"]


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    captured = capsys.readouterr()
    return done.value.code, captured.out, captured.err


@pytest.fixture(scope="module")
def rows():
    return {spec: cmp.measure(tc.build(spec), cmp.Settings(pairs=6, seed=3)) for spec in SMALL}


@pytest.mark.parametrize("spec", SMALL)
def test_columns_against_networkx(rows, spec):
    t = tc.build(spec)
    row = rows[spec]
    g = nx.MultiGraph(t.to_networkx())
    simple = nx.Graph(g)
    counts = terminal_counts(t)
    dist = dict(nx.all_pairs_shortest_path_length(simple))
    n, total = t.num_nodes, int(counts.sum())
    assert (row["routers"], row["terminals"], row["links"]) == (n, total, g.number_of_edges())
    assert row["diameter"] == nx.diameter(simple)
    assert math.isclose(row["average_distance"], nx.average_shortest_path_length(simple))
    hosts = np.flatnonzero(counts)
    weighted = sum(counts[a] * counts[b] * dist[a][b] for a in hosts for b in hosts)
    assert math.isclose(row["terminal_distance"], weighted / (total * (total - 1)))
    assert row["terminal_diameter"] == max(dist[a][b] for a in hosts for b in hosts)
    assert row["radix"] == int(max(t.port_degree + counts))
    assert row["bisection_lower"] <= row["bisection_upper"]
    # the METIS cut is a balanced cut: at least the exact bisection width (brute force on the small ones)
    if n <= 16:
        best = min(nx.cut_size(simple, set(part), weight=None) if not t.has_parallel_links else
                   sum(1 for u, v in g.edges() if (u in part) != (v in part))
                   for part in itertools.combinations(range(n), n // 2))
        assert row["bisection_lower"] <= best <= row["bisection_upper"]
    k = int(t.distinct_degree.max())
    assert math.isclose(row["moore_efficiency"], n / (1 + k * sum((k - 1) ** i for i in range(row["diameter"]))))
    capacity = t.num_edges * 2 / (total * row["terminal_distance"])
    assert row["throughput_bound"] <= min(1.0, capacity) + 1e-12
    assert row["allgather_small"] >= row["allgather_small_bound"] * (1 - 1e-9)
    assert row["allgather_large"] >= row["allgather_large_bound"] * (1 - 1e-9)


@pytest.mark.parametrize("spec", SMALL)
def test_disjoint_paths_equal_networkx_flows(spec):
    t = tc.build(spec)
    counts = terminal_counts(t)
    low, mean = cmp.disjoint_paths(t, counts, 5, seed=2)
    rng = np.random.default_rng(2)
    hosts = np.flatnonzero(counts > 0)
    g = nx.DiGraph()
    for u, v in zip(t.arc_sources.tolist(), t.indices.tolist(), strict=True):
        g.add_edge(u, v, capacity=g.get_edge_data(u, v, {"capacity": 0})["capacity"] + 1)
    flows = [nx.maximum_flow_value(g, int(a), int(b)) for a, b in (rng.choice(hosts, 2, replace=False)
                                                                   for _ in range(5))]
    assert (low, mean) == (min(flows), np.mean(flows))


@pytest.mark.parametrize("spec", SMALL[:7])
def test_references_match(rows, spec):
    row = rows[spec]
    assert row["references"], spec
    for key, ref in row["references"].items():
        assert row[key] == ref["value"], (spec, key)


def test_printed_values_for_the_slim_fly_example():
    row = cmp.measure(tc.build("slimfly:q=5"), cmp.Settings(collectives=False, pairs=0))
    printed = {k: r for k, r in row["references"].items() if r["kind"] == "paper"}
    assert {k: r["value"] for k, r in printed.items()} == {"routers": 50, "network_ports": 7, "diameter": 2,
                                                            "links": 175}
    assert all(row[k] == r["value"] for k, r in printed.items())


def test_spectral_estimate_above_the_dense_size():
    """Above 3,000 routers Lanczos: close to the dense eigenvalue on a graph where both run."""
    from topocast.topology.properties import algebraic_connectivity, spectral_lower

    t = tc.build("jellyfish:n=3200,d=6,seed=2")
    estimate, how = cmp.spectral_lower(t)
    exact = spectral_lower(t.num_nodes, algebraic_connectivity(t))
    assert how.startswith("Lanczos") and abs(estimate - exact) <= max(2, 0.01 * exact)


@pytest.mark.parametrize("family", cmp.SIZED_FAMILIES)
@pytest.mark.parametrize(("terminals", "radix"), [(1000, 32), (10000, 48)])
def test_nearest_configuration(family, terminals, radix):
    c = cmp.nearest(family, terminals, radix)
    assert c.radix <= radix
    t = tc.build(c.spec)
    assert terminal_counts(t).sum() == c.terminals and t.num_nodes == c.routers
    assert int(max(t.port_degree + terminal_counts(t))) <= radix
    # nearest among the family's balanced configurations that fit the radix
    for other in cmp.candidates(family, radix, terminals):
        assert abs(math.log(c.terminals / terminals)) <= abs(math.log(other.terminals / terminals)) + 1e-12


def test_terminal_router_allgather():
    for spec in ("fattree:k=3,n=3", "dragonfly-plus:l=3,s=2,h=2", "slimfly:q=3"):
        t = tc.build(spec)
        for engine in ("step", "event"):
            r = tc.run(t, "allgather-terminal-routers", engine=engine)
            assert r.verified and r.metrics["exactly_once"], (spec, engine)
        steps = tc.run(t, "allgather-terminal-routers").metrics["steps"]
        hosts = np.flatnonzero(terminal_counts(t))
        g = t.to_networkx()
        assert steps == max(nx.shortest_path_length(g, a, b) for a in hosts for b in hosts)
    # where every router holds terminals it delivers what the BFS-tree all-gather does, in as many steps
    t = tc.build("slimfly:q=3")
    assert tc.run(t, "allgather-terminal-routers").metrics["steps"] == tc.run(t, "allgather-bfs-trees").metrics[
        "steps"]


def test_cli_outputs(tmp_path, capsys):
    csv, png = tmp_path / "c.csv", tmp_path / "c.png"
    code, out, err = run_cli(["compare", "slimfly:q=3", "fattree:k=2,n=3", "--json", "--csv", str(csv), "--plot",
                              str(png), "--pairs", "4"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert [r["spec"] for r in data["rows"]] == ["slimfly:q=3,p=3", "fattree:k=2,n=3"]
    assert {c["key"] for c in data["columns"]} >= {"bisection_lower", "allgather_large_bound", "throughput_bound"}
    assert any("allreduce" in n for n in data["notes"])
    header = csv.read_text().splitlines()[0]
    assert "routers (reference)" in header and "throughput" in header
    assert png.stat().st_size > 10_000
    code, out, err = run_cli(["compare", "--terminals", "200", "--radix", "16", "--family", "slimfly", "--family",
                              "fattree", "--no-collectives", "--no-bisection"], capsys)
    assert code == 0 and "slimfly" in out and "fattree" in out, err


@pytest.mark.parametrize(("argv", "expect"), [
    (["compare", "--terminals", "100"], "--terminals and --radix"),
    (["compare"], "give specs"),
    (["compare", "ring:4", "--family", "slimfly"], "--family"),
    (["compare", "--terminals", "100", "--radix", "16", "--family", "graph"], "cannot be sized"),
    (["compare", "ring:4", "--messages", "8"], "messages"),
    (["compare", "ring:4", "--messages", "a,b"], "--messages"),
    (["compare", "polarfly:q=6"], "prime power"),
    (["compare", "ring:4", "--pairs", "-1"], "pairs"),
    (["compare", "--terminals", "100", "--radix", "2"], "--radix"),
])
def test_bad_input(argv, expect, capsys):
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and expect in err and "Traceback" not in err


def test_api_refuses_before_building():
    with pytest.raises(TopocastError, match="prime power"):
        cmp.compare(["ring:4", "polarfly:q=6"])
