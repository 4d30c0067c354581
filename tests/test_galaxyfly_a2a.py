"""group-combining-allgather (alias a2a): the A2A of Xiang and Ju (COCOON 2021), Table 5 of Zhuang et al. 2023."""

import pytest

import topocast as tc
from topocast.algorithms.group_combining import group_combining_schedule
from topocast.errors import TopocastError
from topocast.topology.galaxyfly import supernode_view

S, PER_BYTE, H, PACKET = 1e-6, 8 / 16e9, 1e-7, 160.0
W = PACKET * PER_BYTE  # one packet on one link


@pytest.mark.parametrize("spec", ["dragonfly:g=3,a=20", "dragonfly:g=4,a=1", "dragonfly:g=5,a=2", "dragonfly:g=1,a=4",
                                  "dragonfly:g=6,a=3,h=3", "galaxyfly:n=3,q=5,a=4", "galaxyfly:n=3,q=3,a=2",
                                  "galaxyfly:n=4,q=7,a=5", "galaxyfly:n=3,q=5,a=4,h=2", "galaxyfly:n=2,q=4,a=3"])
def test_every_packet_reaches_every_router_once(spec):
    """The shared verifier on the event engine: N (N - 1) receipts, none redundant, for every combiner."""
    topology = tc.build(spec)
    n, a = topology.num_nodes, topology.meta["routers_per_supernode"]
    for combiner in sorted({0, a - 1}):
        result = tc.run(topology, "a2a", combiner=combiner)
        assert result.verified and result.metrics["exactly_once"] and result.metrics["redundant_receipts"] == 0
        assert result.metrics["receipts"] == n * (n - 1)
        assert result.algorithm == "group-combining-allgather" and result.engine == "event"


@pytest.mark.parametrize(("g", "a"), [(3, 20), (4, 5), (5, 2), (2, 7)])
def test_dragonfly_structure_is_combine_exchange_forward(g, a):
    """Counted from the description: g (a-1) sends to the combiner, g (a-1) shares of the combined message,
    one global hop per ordered pair of groups carrying a whole group, and (a - 1) forwards of each."""
    topology = tc.build(f"dragonfly:g={g},a={a}")
    s = group_combining_schedule(topology)
    group = s.src // a, s.dst // a
    local = group[0] == group[1]
    assert int((~local).sum()) == g * (g - 1)
    assert int(local.sum()) == 2 * g * (a - 1) + g * (g - 1) * (a - 1)
    for t in map(int, (~local).nonzero()[0]):
        packets = s.messages_of(t)
        assert len(packets) == a and set(packets // a) == {s.src[t] // a}  # one whole group: its own
    # phase 1: every non-combiner router sends its own packet to router 0 of its group
    own = [t for t in range(s.num_transfers) if list(s.messages_of(t)) == [s.src[t]] and s.dst[t] % a == 0]
    assert len(own) == g * (a - 1)
    assert all(topology.has_edge(int(u), int(v)) for u, v in zip(s.src, s.dst, strict=True))


def test_dragonfly_makespan_closed_form():
    """Hand-timed on Dragonfly(3, a), h = 1: router 1 holds a global link and gets the group from the combiner
    first, so the last packet arrives after combine (s + w + h), share (s + (a-1) w + h), exchange
    (s + a w + h) and forward (s + a w + h): 4 s + 3 a w + 4 h.  With g = 2 only the combiner holds a global
    link: 3 s + (2 a + 1) w + 3 h."""
    for a in (5, 20):
        time = tc.run(f"dragonfly:g=3,a={a}", "a2a").metrics["time"]
        assert time == pytest.approx(4 * S + 3 * a * W + 4 * H)
        time = tc.run(f"dragonfly:g=2,a={a}", "a2a").metrics["time"]
        assert time == pytest.approx(3 * S + (2 * a + 1) * W + 3 * H)
    assert tc.run("dragonfly:g=3,a=20", "a2a").metrics["time"] == pytest.approx(9.2e-6)


def test_galaxyfly_relays_along_supernode_trees():
    """Supernodes at distance 2 get a group's message through one intermediate group: every global hop joins
    adjacent supernodes, and each ordered pair of supernodes is crossed by each group's message at most once."""
    topology = tc.build("galaxyfly:n=3,q=5,a=4")
    view = supernode_view(topology)
    s = group_combining_schedule(topology)
    a, count = view.a, view.num_supernodes
    crossings = []
    for t in range(s.num_transfers):
        u, v = int(s.src[t]) // a, int(s.dst[t]) // a
        if u != v:
            assert v in view.neighbours_of(u)
            crossings.append((int(s.messages_of(t)[0]) // a, u, v))
    assert len(crossings) == len(set(crossings)) == count * (count - 1)  # one tree edge per (group, other group)


def test_same_cost_model_and_aliases_as_sfata():
    result = tc.run("dragonfly:g=3,a=20", "A2A", packet_size=320, bandwidth=8e9)
    assert result.params["message_bytes"] == 320.0 and result.params["per_byte"] == pytest.approx(1e-9)
    assert result.params["startup"] == 1e-6 and result.params["per_hop"] == 1e-7
    assert "mean_group_completion_time" in result.metrics  # RouterTime: routers labelled with their group


def test_bad_input_names_the_parameter():
    with pytest.raises(TopocastError, match="parameter 'combiner' must be a local router in 0..19"):
        tc.run("dragonfly:g=3,a=20", "a2a", combiner=20)
    with pytest.raises(TopocastError, match="runs on dragonfly, galaxyfly"):
        tc.run("ring:6", "a2a")
