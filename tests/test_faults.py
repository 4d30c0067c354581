"""Faults: the fault-spec parser, the degraded network against networkx, planted faults worked out by hand,
what an algorithm delivers and loses on a degraded network, and bad input."""

from __future__ import annotations

import json
from importlib import resources

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.cli import main
from topocast.errors import TopocastError
from topocast.faults import degrade, parse
from topocast.faults.connectivity import connectivity, distances
from topocast.faults.spec import Draw


def cli(capsys, *args):
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


# -- the parser ---------------------------------------------------------------------------------------------

node = st.one_of(st.integers(0, 999).map(str), st.from_regex(r"[a-z][a-z0-9_]{0,5}", fullmatch=True),
                 st.tuples(st.integers(0, 9), st.integers(0, 9)).map(lambda p: f"{p[0]},{p[1]}"))
# a list names each entry once (a repeat is refused)
named_links = st.lists(st.tuples(node, node), min_size=1, max_size=5, unique=True).map(tuple)
named_nodes = st.lists(node, min_size=1, max_size=5, unique=True).map(tuple)
draw = st.one_of(st.integers(0, 10**6).map(lambda k: Draw("count", k)),
                 st.floats(0.0, 0.999, allow_nan=False).map(lambda f: Draw("fraction", float(f"{f:.12g}"))))


@st.composite
def fault_specs(drawn):
    links = drawn(st.one_of(st.none(), named_links, draw))
    routers = drawn(st.one_of(st.none(), named_nodes, draw))
    groups = drawn(st.one_of(st.none(), st.lists(st.integers(0, 99).map(str), min_size=1, max_size=3,
                                                  unique=True).map(tuple), draw))
    label = drawn(st.sampled_from(["global", "local"])) if isinstance(links, Draw) and drawn(st.booleans()) else None
    seed = drawn(st.integers(0, 2**63 - 1)) if any(isinstance(p, Draw) for p in (links, routers, groups)) else 0
    return tc.faults.FaultSpec(links=links, routers=routers, groups=groups, label=label, seed=seed)


@settings(max_examples=200, deadline=None)
@given(fault_specs())
def test_the_canonical_text_parses_back_to_the_same_spec(spec):
    if spec.empty:
        return
    assert parse(spec.text) == spec


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True).filter(lambda f: not 0 <= f < 1))
def test_a_fraction_outside_zero_one_is_refused(value):
    text = repr(value)  # always with a '.', an exponent, 'inf' or 'nan': never read as a count
    with pytest.raises(TopocastError, match="links"):
        parse(f"links={text}")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_text_parses_or_raises_a_topocast_error(text):
    try:
        parse(text)
    except TopocastError as exc:
        assert "\n" not in str(exc)


def test_percent_count_and_lists():
    assert parse("links=5%").links == Draw("fraction", 0.05)
    assert parse("links=12").links == Draw("count", 12)
    assert parse("routers=5;9").routers == ("5", "9")
    assert parse("routers=5;").routers == ("5",)
    assert parse("links=3-7;12-13").links == (("3", "7"), ("12", "13"))
    assert parse("links=(0,1)-(0,2)").links == (("0,1", "0,2"),)
    for bad in ("links=1.0", "links=-1", "links=0.5,links=0.1", "wires=3", "links=3-", "seed=-1", "label=global"):
        with pytest.raises(TopocastError):
            parse(bad)


# -- the degraded network against networkx --------------------------------------------------------------------

def _graph(topology):
    g = nx.MultiGraph()
    g.add_nodes_from(range(topology.num_nodes))
    src, dst = topology.arc_sources, topology.indices
    keep = src < dst
    g.add_edges_from(zip(src[keep].tolist(), dst[keep].tolist(), strict=True))
    return g


@pytest.mark.parametrize("spec, faults", [
    ("torus:5x4", "links=0.2,seed=1"), ("torus:6x6", "links=7,routers=2,seed=5"), ("hypercube:5", "links=0.3,seed=2"),
    ("dragonfly:g=5,a=4", "groups=1,seed=3"), ("dragonfly:g=5,a=4", "links=0.25,label=global,seed=4"),
    ("ring:12", "links=0-1;5-6"), ("galaxyfly:n=3,q=5,a=4", "routers=3;4,links=0.1,seed=9"),
])
def test_the_degraded_network_is_networkx_without_the_same_edges(spec, faults):
    intact = tc.build(spec)
    t = tc.build(spec, faults=faults)
    removed = _graph(intact)
    removed.remove_edges_from([e for e in removed.edges(keys=True)
                               if not t.has_edge(e[0], e[1])])  # every link between u and v fails together
    after = _graph(t)
    assert sorted(map(sorted, after.edges())) == sorted(map(sorted, removed.edges()))
    assert after.number_of_edges() == intact.num_edges - t.meta["failed_links"]
    # labels and numbering kept; failed routers have no link
    assert [t.label(i) for i in range(t.num_nodes)] == [intact.label(i) for i in range(intact.num_nodes)]
    assert all(after.degree(v) == 0 for v in t.failed_nodes.tolist())
    # the connectivity figures of the healthy nodes, against networkx
    healthy = [v for v in range(t.num_nodes) if v not in set(t.failed_nodes.tolist())]
    sub = nx.Graph(after.subgraph(healthy))
    comps = list(nx.connected_components(sub))
    c = connectivity(t)
    assert c["components"] == len(comps)
    assert c["largest_component"] == max(map(len, comps))
    h = len(healthy)
    assert c["connected_pairs"] == pytest.approx(sum(len(x) * (len(x) - 1) for x in comps) / (h * (h - 1)))
    counts = np.zeros(t.num_nodes, dtype=np.int64)
    for _, lengths in nx.all_pairs_shortest_path_length(sub):
        for d in lengths.values():
            counts[d] += 1
    assert distances(t)["distance_distribution"] == np.trim_zeros(counts, "b").tolist()


def test_the_same_seed_gives_the_same_faults_and_another_seed_others():
    a = tc.build("torus:8x8", faults="links=0.1,seed=1")
    b = tc.build("torus:8x8", faults="links=0.1,seed=1")
    c = tc.build("torus:8x8", faults="links=0.1,seed=2")
    assert np.array_equal(a.indices, b.indices) and not np.array_equal(a.indices, c.indices)
    assert a.meta["failed_links"] == round(0.1 * 128)


# -- planted faults, by hand -----------------------------------------------------------------------------------

def test_a_cut_link_on_a_ring_makes_a_path():
    t = tc.build("ring:8", faults="links=2-3")
    info = tc.info(t.intact, faults="links=2-3")
    # a path of 8 nodes: diameter 7, 2 (8 - d) ordered pairs at distance d
    assert info["diameter"] == 7 and info["connected"]
    assert info["distance_distribution"] == [8] + [2 * (8 - d) for d in range(1, 8)]
    # broadcast from 0 reaches node 3 the long way round: 0-7-6-5-4-3
    r = tc.run("ring:8", "broadcast-bfs-tree", faults="links=2-3")
    assert r.verified and r.metrics["steps"] == 5 and r.metrics["deliveries_lost"] == 0


def test_two_cuts_on_a_ring_leave_two_arcs_and_a_broadcast_names_the_unreachable_nodes():
    r = tc.run("ring:8", "broadcast-bfs-tree", faults="links=2-3;6-7")
    # the two arcs left are {7, 0, 1, 2} and {3, 4, 5, 6}
    assert r.verified and r.metrics["steps"] == 2  # 0 -> 1 -> 2 and 0 -> 7
    assert [m["node"] for m in r.metrics["missing_by_node"]] == [3, 4, 5, 6]
    assert r.metrics["deliveries_unreachable"] == 4 and r.metrics["deliveries_lost_connected"] == 0


def test_a_ring_allgather_planned_for_the_intact_ring_loses_what_crosses_the_cut():
    # the pipelined ring all-gather passes every message one way round; with link 2-3 cut, the message of
    # node o reaches the (2 - o) mod 8 nodes before the cut: 2+1+0+7+6+5+4+3 = 28 of the 56 deliveries
    r = tc.run("ring:8", "allgather-ring", faults="links=2-3")
    assert r.verified and r.metrics["fault_mode"] == "intact"
    assert r.metrics["deliveries_promised"] == 56 and r.metrics["deliveries_made"] == 28
    assert r.metrics["deliveries_unreachable"] == 0 and r.metrics["deliveries_lost_connected"] == 28


def test_a_failed_router_in_a_dragonfly_group():
    g, a = 5, 4
    intact = tc.build(f"dragonfly:g={g},a={a}")
    t = tc.build(f"dragonfly:g={g},a={a}", faults="routers=(1,2);")
    v = intact.index((1, 2))
    # its a - 1 local links and its global links (g - 1 globals spread over a routers: one each here)
    assert t.meta["failed_links"] == (a - 1) + intact.port_degree[v] - (a - 1) == intact.port_degree[v]
    assert t.failed_nodes.tolist() == [v]
    c = connectivity(t)
    assert c["healthy_nodes"] == g * a - 1 and c["connected"]
    # an all-gather on the surviving graph: every healthy node gets every healthy node's message, exactly once,
    # and only the failed router's message is lost (unreachable), once per healthy node
    r = tc.run(f"dragonfly:g={g},a={a}", "allgather-bfs-trees", faults="routers=(1,2);")
    assert r.verified and r.metrics["fault_mode"] == "surviving"
    assert r.metrics["deliveries_unreachable"] == r.metrics["deliveries_lost"] == g * a - 1


def test_a_whole_group_losing_its_global_links_is_cut_off():
    t = tc.build("dragonfly:g=5,a=4", faults="groups=[2]")
    c = connectivity(t)
    assert c["components"] == 2 and c["largest_component"] == 16
    r = tc.run(t.intact, "alltoall-shortest-paths", faults="groups=[2]", engine="step")
    # 16 * 15 + 4 * 3 ordered pairs still joined; the 2 * 16 * 4 across the cut are unreachable
    assert r.verified and r.metrics["deliveries_made"] == 16 * 15 + 4 * 3
    assert r.metrics["deliveries_unreachable"] == 2 * 16 * 4


# -- plans made for the intact network: the dropped transfers against a brute-force replay --------------------

def _replay_losses(intact_plan, topology):
    """Missing (message, node) pairs of ``intact_plan`` run with transfers over failed parts skipped, by sets."""
    failed = set(topology.failed_nodes.tolist())
    holds = [set() for _ in range(intact_plan.num_nodes)]
    for msg, o in enumerate(intact_plan.origin.tolist()):
        holds[o].add(msg)
    order = np.argsort(intact_plan.step, kind="stable")
    steps = intact_plan.step[order]
    for s in np.unique(steps):
        arrivals = []
        for t in order[steps == s].tolist():
            u, v = int(intact_plan.src[t]), int(intact_plan.dst[t])
            if u in failed or v in failed or not topology.has_edge(u, v):
                continue
            arrivals.append((v, holds[u] & set(intact_plan.messages_of(t).tolist())))
        for v, msgs in arrivals:
            holds[v] |= msgs
    missing = 0
    for v in range(intact_plan.num_nodes):
        if v not in failed:
            missing += intact_plan.num_messages - len(holds[v])
    return missing


@pytest.mark.parametrize("spec, algorithm, faults", [
    ("hypercube:4", "broadcast-binomial", "links=2,seed=1"),
    ("hypercube:4", "allgather-recursive-doubling", "links=3,seed=4"),
    ("torus:4x4", "allgather-mesh", "links=0.15,seed=2"),
    ("torus:4x4", "allgather-mesh", "routers=2,seed=3"),
])
def test_dropped_transfers_lose_what_a_brute_force_replay_loses(spec, algorithm, faults):
    intact = tc.build(spec)
    t = tc.build(spec, faults=faults)
    checked = tc.api.prepare(intact, algorithm)
    intact_plan = tc.api.plan(intact, checked.algorithm, checked.params, checked.engine, 0)
    r = tc.run(spec, algorithm, faults=faults)
    assert r.verified and r.metrics["fault_mode"] == "intact"
    assert r.metrics["deliveries_lost"] == _replay_losses(intact_plan, t)


@pytest.mark.parametrize("faults", ["links=0.2,seed=1", "links=0.35,seed=7", "routers=3,links=4,seed=2"])
@pytest.mark.parametrize("algorithm", ["broadcast-bfs-tree", "broadcast-one-port", "allgather-bfs-trees",
                                       "alltoall-shortest-paths"])
def test_fault_aware_collectives_deliver_to_every_healthy_connected_node_exactly_once(algorithm, faults):
    t = tc.build("torus:5x5", faults=faults)
    root = int(np.setdiff1d(np.arange(25), t.failed_nodes)[0])
    params = {"root": root} if algorithm.startswith("broadcast") else {}
    for engine in ("step", "event"):
        r = tc.run(t.intact, algorithm, faults=faults, engine=engine, **params)
        assert r.verified and r.metrics["exactly_once"] and r.metrics["fault_mode"] == "surviving"
        assert r.metrics["deliveries_lost_connected"] == 0
    # unreachable deliveries from networkx's components of the healthy nodes
    g = nx.Graph(_graph(t).subgraph(np.setdiff1d(np.arange(25), t.failed_nodes).tolist()))
    comp = {v: frozenset(c) for c in nx.connected_components(g) for v in c}
    healthy = sorted(comp)
    if algorithm.startswith("broadcast"):
        expected = sum(1 for v in healthy if v not in comp[root])
    else:  # a message per origin (every node's, failed ones included) to each healthy node
        expected = sum(1 for v in healthy for o in range(25) if o != v and (o not in comp or o not in comp[v]))
    assert r.metrics["deliveries_unreachable"] == expected


def test_the_result_follows_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(resources.files("topocast").joinpath("schemas/run.schema.json").read_text())
    data = json.loads(json.dumps(tc.run("torus:4x4", "allgather-mesh", faults="links=0.2,seed=1").to_json()))
    jsonschema.validate(data, schema)


# -- bad input -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["info", "torus:4x4", "--faults", "links=0-5"], "0-5 is not a link"),
    (["info", "torus:4x4", "--faults", "links=1.0"], "fraction in [0, 1)"),
    (["info", "torus:4x4", "--faults", "routers=99;"], "outside 0..15"),
    (["info", "torus:4x4", "--faults", "links=40"], "only 32 are left"),
    (["info", "torus:4x4", "--faults", "groups=1"], "no global links"),
    (["run", "ring:8", "broadcast-bfs-tree", "--faults", "routers=0;"], "root: node 0 is a failed router"),
    (["run", "ring:8", "broadcast-bfs-tree", "--faults", "links=1", "--engine", "frontier"], "engine"),
    (["route", "ring:8", "--from", "0", "--to", "4", "--faults", "links=1-2;5-6"], "cannot be reached"),
])
def test_bad_fault_input_is_one_line_exit_2(capsys, args, needle):
    code, _, err = cli(capsys, *args)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_degraded_network_is_not_degraded_twice():
    with pytest.raises(TopocastError, match="already has faults"):
        degrade(tc.build("ring:8", faults="links=1"), "links=1")


@pytest.mark.parametrize("spec", ["torus:2x3", "ring:2", "dragonfly:g=5,a=4", "galaxyfly:n=3,q=5,a=4", "hypercube:4"])
def test_reverse_arcs_by_search_pair_as_the_topology_pairs_them(spec):
    from topocast.faults.degrade import reverse_of

    t = tc.build(spec)
    arcs = np.arange(t.num_arcs)
    assert np.array_equal(reverse_of(t, arcs), t.reverse_arc)


# -- sweep grids -------------------------------------------------------------------------------------------------

def test_a_sweep_grid_takes_fault_specs_and_keeps_the_intact_keys():
    from topocast.sweep.grid import expand, load_grid, run_key, run_task

    grid = load_grid({"sweep": {"specs": ["ring:8"], "algorithms": ["broadcast-bfs-tree"], "seeds": [0],
                                "faults": ["links=2-3", "links=2-3;6-7"]}, "params": {}})
    tasks = expand(grid)
    assert [t["faults"] for t in tasks] == ["links=2-3", "links=2-3;6-7"]
    rows = [run_task(t) for t in tasks]
    assert [r["result"]["deliveries_unreachable"] for r in rows] == [0, 4]
    assert all(r["faults"] == t["faults"] for r, t in zip(rows, tasks, strict=True))
    # one spelling of the same faults, one key; a run without faults keeps its key
    assert run_key("ring:8", "broadcast-bfs-tree", None, {}, 0, "v", "links=2-3") == \
        run_key("ring:8", "broadcast-bfs-tree", None, {}, 0, "v", "links=[2-3]")
    assert run_key("ring:8", "broadcast-bfs-tree", None, {}, 0, "v") == \
        run_key("ring:8", "broadcast-bfs-tree", None, {}, 0, "v", None)
    intact = expand(load_grid({"specs": ["ring:8"], "algorithms": ["broadcast-bfs-tree"]}))
    assert "faults" not in intact[0]
    with pytest.raises(TopocastError, match="sweep: grid: faults: parameter 'links'"):
        load_grid({"specs": ["ring:8"], "algorithms": ["broadcast-bfs-tree"], "faults": ["links=1.5"]})


# -- the resilience study ------------------------------------------------------------------------------------------

def test_the_quick_resilience_study():
    from topocast.experiments.resilience import NETWORKS, run

    report = run(quick=True)
    assert len(report.tables) == len(NETWORKS[True])
    by_key = {t.key: t for t in report.tables}
    for table in report.tables:
        intact = table.rows[0]
        assert intact[0] == "0%" and intact[1].startswith("1.000")  # no failed link: every pair connected
        if intact[7] != "-":
            assert intact[7].startswith("0.000")  # and the paper algorithm loses nothing
        lower, upper = (float(cell.split()[0]) for cell in intact[4:6])
        assert lower <= upper
    # the Galaxyfly's diameter 5 that Zhuang et al. print (section 5), intact
    assert by_key["galaxyfly"].rows[0][2].startswith("5.00")
    assert report.notes[-1] == "every run verified"


# -- the re-rooted EJ broadcast: any two faults, exhaustively --------------------------------------------------

def _translation_is_an_automorphism(spec):
    from topocast.algorithms.ej_rerooted import translations

    t = tc.build(spec)
    links = sorted(zip(t.arc_sources.tolist(), t.indices.tolist(), strict=True))
    for shift in translations(t):
        moved = sorted(zip(shift[t.arc_sources].tolist(), shift[t.indices].tolist(), strict=True))
        assert moved == links
    return t


@pytest.mark.parametrize("spec", ["ej:a=2,b=3", "ej:a=3,b=4", "ej:a=1,b=2,n=2"])
def test_every_two_failed_routers_leave_a_root_whose_tree_avoids_them(spec):
    from itertools import combinations

    from topocast.algorithms.ej_broadcast import broadcast_schedule
    from topocast.algorithms.ej_rerooted import crossings

    t = _translation_is_an_automorphism(spec)
    tree = broadcast_schedule(t, "improved")
    for a, b in combinations(range(t.num_nodes), 2):
        cross = crossings(degrade(t, f"routers={a};{b}"), tree)
        cross[[a, b]] = 1
        assert (cross == 0).any(), (a, b)


@pytest.mark.parametrize("spec", ["ej:a=2,b=3", "ej:a=3,b=4"])
def test_every_two_failed_links_leave_a_root_whose_tree_avoids_them(spec):
    """Networks without parallel links (norm 7 and up): a named link is one link."""
    from itertools import combinations

    from topocast.algorithms.ej_broadcast import broadcast_schedule
    from topocast.algorithms.ej_rerooted import crossings

    t = tc.build(spec)
    tree = broadcast_schedule(t, "improved")
    keep = t.arc_sources < t.indices
    links = list(zip(t.arc_sources[keep].tolist(), t.indices[keep].tolist(), strict=True))
    assert len(links) == len(set(links)) == 3 * t.num_nodes
    for (a, b), (c, d) in combinations(links, 2):
        assert (crossings(degrade(t, f"links={a}-{b};{c}-{d}"), tree) == 0).any(), (a, b, c, d)


def test_the_rerooted_broadcast_reaches_every_healthy_node_once_for_every_two_failed_routers():
    from itertools import combinations

    t = tc.build("ej:a=2,b=3")
    for a, b in combinations(range(t.num_nodes), 2):
        r = tc.run(t, "one-to-all-rerooted", faults=f"routers={a};{b}")
        assert r.verified and r.metrics["exactly_once"] and r.metrics["fault_mode"] == "native"
        assert r.metrics["deliveries_lost"] == 0 and r.metrics["root_chosen"] not in (a, b)
    # the improved broadcast from 0, planned for the intact network, loses whatever hangs below a failed router
    r = tc.run(t, "one-to-all-improved", faults="routers=1;")
    assert r.metrics["deliveries_lost"] > 0


def test_the_rerooted_broadcast_on_an_intact_network_is_the_translated_improved_broadcast():
    for root in (0, 7, 30):
        r = tc.run("ej:a=3,b=4", "one-to-all-rerooted", root=root)
        assert r.verified and r.metrics["steps"] == tc.run("ej:a=3,b=4", "one-to-all-improved").metrics["steps"]
        assert r.metrics["root_chosen"] == root


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["torus:4x5", "hypercube:4", "ring:9", "dragonfly:g=5,a=4", "torus:2x3"]),
       st.one_of(st.integers(0, 12), st.floats(0.0, 0.9)), st.integers(0, 3), st.integers(0, 2**32))
def test_degrading_takes_exactly_the_drawn_links_and_keeps_a_symmetric_network(spec, links, routers, seed):
    intact = tc.build(spec)
    text = f"links={links!r},routers={routers},seed={seed}"
    try:
        t = tc.build(spec, faults=text)
    except TopocastError as exc:
        assert "left to fail" in str(exc)  # more links drawn than the routers left up
        return
    assert len(t.failed_nodes) == routers and t.faults == parse(text).text
    assert t.num_edges == intact.num_edges - t.meta["failed_links"]
    assert np.array_equal(t.reverse_arc[t.reverse_arc], np.arange(t.num_arcs))  # still symmetric
    arcs = set(zip(intact.arc_sources.tolist(), intact.indices.tolist(), strict=True))
    assert set(zip(t.arc_sources.tolist(), t.indices.tolist(), strict=True)) <= arcs
    router_links = len({tuple(sorted(a)) for a in zip(intact.arc_sources.tolist(), intact.indices.tolist(),
                                                      strict=True) if {a[0], a[1]} & set(t.failed_nodes.tolist())})
    drawn = parse(text).links.size(intact.num_edges)
    if spec != "torus:2x3":  # simple graphs (a torus dimension of 2 is a double link)
        assert t.meta["failed_links"] == router_links + drawn
