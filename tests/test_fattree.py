"""GFT(h, m, w): construction, opened view, LLS / slimmed LLS / CLS, the thesis's examples."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topocast as tc
from topocast.algorithms import fattree_alltoall as ft
from topocast.errors import TopocastError
from topocast.experiments.traces import route_square, trace_thesis_algorithm, xor_square
from topocast.sim.circuit import trace
from topocast.topology.fattree import GFTShape, gft
from topocast.verify.delivery import is_latin_square

small_trees = st.tuples(st.integers(1, 3), st.integers(2, 5), st.integers(1, 5)).filter(
    lambda t: t[2] * t[1] ** t[0] <= 400 and t[2] ** t[0] * t[1] <= 400)


def reference_gft(h, m, w):
    """The recursive rule of 2.2.3 written out literally: levels and labelled links."""
    if h == 0:
        return [1], set()
    counts, links = reference_gft(h - 1, m, w)
    new_links = set()
    for j in range(m):
        for (x, a), (y, b) in links:
            new_links.add(((x, a + j * counts[x]), (y, b + j * counts[y])))
    counts = [c * m for c in counts] + [w ** h]
    for a in range(counts[h - 1]):
        for b in range(w ** h):
            if a % w ** (h - 1) == b // w:
                new_links.add(((h - 1, a), (h, b)))
    return counts, new_links


@settings(max_examples=40, deadline=None)
@given(small_trees)
def test_gft_matches_recursive_rule(hmw):
    h, m, w = hmw
    topo = gft(h, m, w)
    counts, links = reference_gft(h, m, w)
    labels = [topo.label(v) for v in range(topo.num_nodes)]
    assert [sum(1 for lab in labels if lab[0] == x) for x in range(h + 1)] == counts
    assert counts == [m ** (h - x) * w ** x for x in range(h + 1)] == topo.meta["level_counts"]
    ours = set()
    for u, v in topo.to_networkx().edges():
        a, b = sorted((labels[u], labels[v]))
        if a[0] >= 0:
            ours.add((a, b))
    assert ours == links
    # processors: w per level-0 switch; switch sizes (down ports, up ports)
    deg = topo.port_degree
    assert sum(1 for lab in labels if lab[0] == -1) == w * m ** h
    for v, (x, _) in enumerate(labels):
        expect = {-1: 1, 0: 2 * w, h: m}.get(x, m + w)
        if x == 0 and h == 0:
            expect = w
        assert deg[v] == expect
    assert topo.meta["kind"] == ("plain" if m == w else "slimmed" if m > w else "fattened")


@settings(max_examples=25, deadline=None)
@given(small_trees)
def test_opened_view_uses_each_link_once_per_direction(hmw):
    shape = GFTShape(*hmw)
    net = shape.network
    assert net.num_stages == 2 * shape.h + 1
    topo = gft(*hmw)
    off = topo.codec.offsets
    level_of_stage = list(range(shape.h + 1)) + list(range(shape.h - 1, -1, -1))
    pairs = []
    for s in range(net.num_stages - 1):
        outs = np.arange(net.out_off[s], net.out_off[s + 1])
        target = net.next_in[outs] - net.in_off[s + 1]
        u = off[level_of_stage[s] + 1] + (outs - net.out_off[s]) // net.outs[s]
        v = off[level_of_stage[s + 1] + 1] + target // net.ins[s + 1]
        pairs += list(zip(u.tolist(), v.tolist(), strict=False))
    up = [(u, v) for u, v in pairs if topo.label(u)[0] < topo.label(v)[0]]
    down = [(v, u) for u, v in pairs if topo.label(u)[0] > topo.label(v)[0]]
    links = sorted((int(a), int(b)) for a, b in zip(topo.arc_sources, topo.indices, strict=False)
                   if 0 <= topo.label(a)[0] < topo.label(b)[0])
    assert sorted(up) == links and sorted(down) == links


@settings(max_examples=30, deadline=None)
@given(small_trees)
def test_lls_every_rotation_no_conflict(hmw):
    shape = GFTShape(*hmw)
    n = shape.processors
    check = route_square(shape, ft.lls_routes, np.arange(n))
    assert check.ok
    assert np.array_equal(check.perms, (np.arange(n)[:, None] + np.arange(n)[None, :]) % n)
    assert check.passes == len(ft.passes(shape)) == ft.groups_per_level(shape) ** (shape.h - 1)
    assert check.passes >= ft.pass_lower_bound(shape) - 1e-9


@settings(max_examples=20, deadline=None)
@given(st.tuples(st.integers(1, 3), st.sampled_from([2, 4, 8]), st.sampled_from([1, 2, 4, 8])).filter(
    lambda t: t[2] * t[1] ** t[0] <= 512 and t[2] ** t[0] * t[1] <= 512))
def test_cls_is_xor_table(hmw):
    shape = GFTShape(*hmw)
    n = shape.processors
    check = route_square(shape, ft.xor_routes, np.arange(n))
    assert check.ok
    assert np.array_equal(check.perms, np.arange(n)[:, None] ^ np.arange(n)[None, :])


@settings(max_examples=15, deadline=None)
@given(st.tuples(st.integers(2, 3), st.integers(3, 6), st.integers(1, 2)))
def test_passes_partition_processors(hmw):
    shape = GFTShape(*hmw)
    members = np.array([ft.pass_members(shape, g) for g in ft.passes(shape)])
    assert np.all(members.sum(axis=0) == 1)


def test_slimmed_h3_needs_more_than_ceil_m_over_w():
    shape = GFTShape(3, 4, 2)
    check = route_square(shape, ft.lls_routes, np.arange(shape.processors))
    assert check.ok and check.passes == 4 == ft.pass_lower_bound(shape)
    assert check.circuits // (shape.processors * check.passes) == shape.processors // 4


def test_section_413_examples():
    shape = GFTShape(2, 2, 2)
    printed = {5: ([1], [1, 0], [0, 1, 1, 1]), 7: ([1], [0, 1], [0, 0, 0, 1])}
    for k, levels in printed.items():
        ours = ft.thesis_lls_states(shape, k)
        assert [list(map(int, s)) for s in ours] == [list(v) for v in levels]
        route = ft.routes_from_thesis_states(shape, ft.thesis_algorithm1_states(shape, k))
        assert np.array_equal(trace(shape.network, route).perm, (np.arange(8) - k) % 8)


def test_section_423_example():
    shape = GFTShape(2, 4, 2)
    pass1 = ft.thesis_lls_states(shape, 3, (0,))
    pass2 = ft.thesis_lls_states(shape, 3, (1,))
    assert [list(map(int, s)) for s in pass1] == [[1], [2, 1], [1, 1, 1, 0]]
    assert [list(map(int, s)) for s in pass2] == [[1], [0, 3], [0, 0, 0, 0]]  # Algorithm 2 gives 0, text prints 3


def test_algorithm1_as_printed_is_a_latin_square_but_not_all_rotations():
    shape = GFTShape(2, 2, 2)
    perms = np.array([trace(shape.network,
                            ft.routes_from_thesis_states(shape, ft.thesis_algorithm1_states(shape, k))).perm
                      for k in range(8)])
    rotations = [k for k in range(8) if np.array_equal(perms[k], (np.arange(8) - k) % 8)]
    assert rotations == [0, 1, 3, 4, 5, 7]
    assert is_latin_square(perms)


def test_algorithm2_as_printed():
    """4.2.3's states for k = 3 (pass 2, level 1: Algorithm 2 gives 0 3, the text prints 3 3); traced over both
    passes, Algorithm 2 delivers every message once but not always as the rotation."""
    shape = GFTShape(2, 4, 2)
    assert [s.tolist() for s in ft.thesis_algorithm2_states(shape, 3, 1)] == [[1], [2, 1], [1, 1, 1, 0]]
    assert [s.tolist() for s in ft.thesis_algorithm2_states(shape, 3, 2)] == [[1], [0, 3], [0, 0, 0, 0]]
    check = trace_thesis_algorithm(shape, lambda k, p: ft.thesis_algorithm2_states(shape, k, p))
    assert check.ok and check.passes == 2
    rotations = [k for k in range(32) if np.array_equal(check.perms[k], (np.arange(32) - k) % 32)]
    assert len(rotations) == 24 and 3 in rotations


def test_figure_5_5():
    shape = GFTShape(2, 2, 2)
    base = [np.array([0, 1, 1, 0]), np.zeros(4, int), np.zeros(4, int)]
    check = xor_square(shape, base)
    printed = ["01325467", "10234576", "23107645", "32016754", "45761023", "54670132", "67543201", "76452310"]
    assert check.ok
    assert ["".join(map(str, np.argsort(p))) for p in check.perms] == printed


def test_partition_exhaustive_gft222():
    shape = GFTShape(2, 2, 2)
    seen = set()
    squares = 0
    for base in ft.all_xor_bases(shape):
        check = xor_square(shape, base)
        assert check.ok
        squares += 1
        seen.update(p.tobytes() for p in check.perms)
    assert squares == ft.latin_square_count(shape) == 2 ** (3 * 4 - 3)
    assert len(seen) == ft.xor_configuration_count(shape) == 2 ** 12


@pytest.mark.parametrize("hmw", [(2, 4, 4), (2, 4, 2), (3, 2, 2), (2, 2, 4)])
def test_partition_sampled(hmw):
    shape = GFTShape(*hmw)
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(4):
        check = xor_square(shape, ft.random_xor_base(shape, rng))
        assert check.ok
        seen.update(p.tobytes() for p in check.perms)
    assert len(seen) == 4 * shape.processors
    if hmw[1] == hmw[2]:
        h, m, _ = hmw
        assert ft.latin_square_count(shape) == m ** ((h + 1) * m ** h - (h + 1))


def test_run_api_and_metrics():
    result = tc.run("gft:h=2,m=4,w=4", "all-to-all-personalized-lls")
    assert result.verified and result.engine == "circuit"
    for key in ("permutations", "latin_square", "conflicts", "passes", "time"):
        assert key in result.metrics
    h, m, w = 2, 4, 4
    assert result.metrics["permutations"] == 64 == w * m ** h and result.metrics["latin_square"] is True
    slim = tc.run("gft:h=2,m=4,w=2", "cls", message_bytes=100.0, setup=0.0, startup=0.0, per_byte=1.0)
    # the thesis (4.2.3): a slimmed GFT(2, m, w) needs ceil(m / w) passes; N - 1 = 31 rotations of 100 bytes each
    h, m, w = 2, 4, 2
    assert slim.verified and slim.metrics["passes"] == 2 == -(-m // w)
    assert slim.metrics["time"] == pytest.approx(31 * 2 * 100.0)
    assert slim.metrics["lower_bound"] == pytest.approx(31 * 100.0)
    assert slim.metrics["rows_match_plan"] and slim.units["time"] == "s"
    info = tc.info("gft:h=2,m=4,w=2")
    # construction of 2.2.3: m^(h-x) w^x switches at level x, w m^h processors
    assert info["level_counts"] == [16, 8, 4] == [m ** (h - x) * w ** x for x in range(h + 1)]
    assert info["processors"] == 32 == w * m ** h


@pytest.mark.parametrize("spec, algo, message", [
    ("gft:h=2,m=3,w=3", "all-to-all-personalized-cls", "parameter 'm' must be a power of two"),
    ("gft:h=2,m=4,w=3", "cls", "parameter 'w' must be a power of two"),
])
def test_cls_needs_powers_of_two(spec, algo, message):
    with pytest.raises(TopocastError, match=message):
        tc.run(spec, algo)


def test_bad_parameters():
    with pytest.raises(TopocastError, match="'h' must be >= 1"):
        tc.build("gft:h=0,m=2,w=2")
    with pytest.raises(TopocastError, match="'m' must be >= 2"):
        gft(2, 1, 2)


def test_cli_run_and_errors():
    from typer.testing import CliRunner

    from topocast.cli import app

    runner = CliRunner()
    ok = runner.invoke(app, ["run", "gft:h=2,m=2,w=2", "all-to-all-personalized-cls", "--json"])
    assert ok.exit_code == 0
    payload = json.loads(ok.stdout)
    assert payload["latin_square"] is True and payload["conflicts"] == 0 and payload["passes"] == 1
    bad = runner.invoke(app, ["run", "gft:h=2,m=6,w=2", "cls"])
    assert bad.exit_code == 2
    bad = runner.invoke(app, ["info", "gft:h=0,m=2,w=2", "--json"])
    assert bad.exit_code == 2
