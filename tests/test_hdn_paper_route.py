"""The HDN paper's node names (its Table 4 re-indexing) mapped to ours, and its printed route for the worked
example of section 4 checked hop by hop (Li, Peng, Chu 2012)."""

import networkx as nx
import pytest

import topocast as tc
from topocast.experiments import hdn as exp
from topocast.experiments.hdn_paper_route import (
    PAPER_MIDDLE,
    PAPER_U_SEGMENT,
    PAPER_V_SEGMENT,
    check_paper_route,
    level1_node,
    paper_name,
    paper_node,
)


@pytest.fixture(scope="module")
def network():
    return tc.build("hdn:base=2x3x5,k=2,s=6/15")


def test_table4_rows(network):
    """The paper's Table 4: level-1 (C1, U1, SN1, N1) -> level-2 (SN2, N2), serial kept."""
    layout = network.codec.layout
    printed = {(0, 0, 0, 0): (0, 0), (1, 4, 2, 3): (19, 0), (0, 0, 2, 2): (0, 14), (1, 4, 4, 5): (19, 14)}
    for level1, level2 in printed.items():
        node = level1_node(layout, (0, 0), level1)
        name2, name1 = paper_name(layout, node)
        assert name1 == level1 and name2 == (0, 0) + level2
        assert 150 * level1[0] + 30 * level1[1] + 6 * level1[2] + level1[3] == 15 * level2[0] + level2[1]


def test_names_are_a_bijection(network):
    layout = network.codec.layout
    names = [paper_name(layout, x)[0] for x in range(network.num_nodes)]
    assert len(set(names)) == network.num_nodes == 12000
    assert all(paper_node(layout, names[x]) == x for x in range(0, network.num_nodes, 97))


def test_level1_names_are_the_base_copy_coordinates(network):
    """At level 1 a name is (copy, C5 coordinate, place in the 2 x 3 super-node): two names differing only in
    SN1 by one (mod 5) are base-ring neighbours, and the level-1 cross edge swaps U1 and SN1."""
    layout = network.codec.layout
    for c1, u1, sn1, n1 in [(0, 0, 0, 0), (1, 3, 4, 5), (0, 2, 1, 3)]:
        x = level1_node(layout, (1, 7), (c1, u1, sn1, n1))
        assert network.has_edge(x, level1_node(layout, (1, 7), (c1, u1, (sn1 + 1) % 5, n1)))
        assert network.has_edge(x, level1_node(layout, (1, 7), (1 - c1, sn1, u1, n1)))


def _level1_link(a, b):
    """Adjacent in one HDN(B,1,(6)) cluster, derived from the definition: a ring step of C5 (SN1), a step of one
    digit of the 2 x 3 torus in N1 (read C2-major: N1 = 3 b(C2) + b(C3)), or the cross edge swapping U1, SN1."""
    (c, u, sn, n), (c2, u2, sn2, n2) = a, b
    if (c2, u2, sn2, n2) == (1 - c, sn, u, n):
        return True
    if (c, u) != (c2, u2):
        return False
    if n == n2:
        return (sn - sn2) % 5 in (1, 4)
    if sn != sn2:
        return False
    (x, y), (x2, y2) = divmod(n, 3), divmod(n2, 3)
    return (x == x2 and (y - y2) % 3 in (1, 2)) or (y == y2 and x != x2)


def test_printed_route_hop_by_hop(network):
    """17 hops, as printed. Its level-1 segments are links exactly where the definition says (the N1 steps 2 -> 3
    and 5 -> 0 are not: two digits change), and its middle three hops, named at level 2, are links of the
    paper's text (3 x 5 torus steps) but not of the nodes Table 4 names: checked on a networkx copy."""
    printed = check_paper_route(network)
    path, links = printed["c2_major"]["path"], printed["c2_major"]["links"]
    assert len(path) - 1 == 17 and printed["c2_major"]["joins"] and printed["c3_major"]["joins"]
    assert not printed["own_labels_join"]
    first = list(zip(PAPER_U_SEGMENT, PAPER_U_SEGMENT[1:], strict=False))
    last = list(zip(PAPER_V_SEGMENT[::-1], PAPER_V_SEGMENT[::-1][1:], strict=False))
    expected = [_level1_link(a, b) for a, b in first] + [None] * 3 + [_level1_link(a, b) for a, b in last]
    assert expected.count(False) == 2
    graph = nx.Graph()
    graph.add_edges_from(zip(network.arc_sources.tolist(), network.indices.tolist(), strict=True))
    middle = [graph.has_edge(a, b) for a, b in zip(path[7:10], path[8:11], strict=True)]
    assert middle == [False, False, False]
    assert links == [e if e is not None else m for e, m in zip(expected, [None] * 7 + middle + [None] * 7,
                                                                   strict=True)]
    assert sum(links) == 12
    # the endpoints have the same names in both labellings, 9 hops apart
    layout = network.codec.layout
    assert path[0] == network.index("0,0,0,0") and path[-1] == network.index("1,19,19,14")
    assert paper_node(layout, PAPER_MIDDLE[0]) == path[7] and nx.shortest_path_length(graph, path[0], path[-1]) == 9


def test_report_rows_and_claim():
    rows = exp.measure_routing_example()
    table = exp.routing_example_table(rows)
    assert table.columns[-2:] == ["path in the paper's names (Table 4)", "hops that are links"]
    printed = table.rows[-1]
    assert printed[1] == 17 and printed[4] == "NO" and printed[-1] == 12
    assert printed[-2].split()[7] == "(0,0,19,0)" and printed[-2].split()[-1] == "(1,19,19,14)"
    ours = table.rows[0]
    assert ours[4] == "yes" and ours[-1] == ours[1].ours == 9  # every hop of our route is a link
    claim = exp.routing_example_route_claim(rows)
    assert not claim.confirmed and set(claim.readings) == {"N^1 C2-major", "N^1 C3-major"}
    assert "12 of 17 hops are links" in claim.evidence
