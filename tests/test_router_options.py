"""Every wormhole algorithm takes the router's network options (issue 16 item 1).

Oracles: the unicast zero-load closed form derived here from the router's rules (``docs/simulator.md``),
with Manhattan distances for the hop counts, and the registry's own parameter lists.
"""

from __future__ import annotations

import numpy as np
import pytest

import topocast as tc
from topocast import registry
from topocast.cli import app

NETWORK = ("vcs", "buffer_depth", "router_delay", "link_latency", "credit_delay")
WORMHOLE = sorted(a.name for a in registry.algorithms() if "wormhole" in a.engines)


def run_param_names(name: str) -> set[str]:
    algorithm = registry.algorithm(name)
    return {p.name for p in algorithm.params}


def test_there_are_mesh_multicast_and_unicast_algorithms_on_the_wormhole_engine():
    assert {"multicast-dp", "multicast-mp", "multicast-cp", "multicast-qg", "unicast-ecube", "unicast"} <= set(
        WORMHOLE)


@pytest.mark.parametrize("name", WORMHOLE)
def test_every_wormhole_algorithm_takes_the_network_options(name):
    assert set(NETWORK) <= run_param_names(name)


def closed_form(startup, flits, hops, depth, router_delay, link_latency, credit_delay=0):
    """A lone worm: the header leaves each of the h + 1 routers r cycles after it arrives and crosses each link
    in l cycles; the flits behind it follow one per cycle unless B-flit buffers cannot cover the l + c credit
    loop, which costs l + c - B cycles per group of B flits."""
    stretch = (flits - 1) // depth * max(0, link_latency + credit_delay - depth)
    return startup + flits + hops * link_latency + (hops + 1) * router_delay + stretch


@pytest.mark.parametrize("options", [dict(buffer_depth=2, router_delay=1, link_latency=2),
                                     dict(buffer_depth=1, router_delay=2, link_latency=3, credit_delay=1),
                                     dict(buffer_depth=6, router_delay=3, vcs=2)])
def test_unicast_ecube_latency_at_low_load_is_the_closed_form(options):
    result = tc.run("mesh:5x4", "unicast-ecube", load=0.01, cycles=30000, startup=3, flits=12, seed=4, **options)
    plan, latency = result.trace.plan, result.trace.latency
    ptr, node = plan.traffic.path_ptr, plan.traffic.path_node
    src, dst = node[ptr[:-1]], node[ptr[1:] - 1]
    hops = np.abs(src // 4 - dst // 4) + np.abs(src % 4 - dst % 4)      # row-major 5x4: node = 4 * row + column
    assert np.array_equal(hops, np.diff(ptr) - 1)                       # e-cube routes are minimal
    done = latency >= 0
    expected = np.array([closed_form(3, 12, int(h), options.get("buffer_depth", 1), options.get("router_delay", 0),
                                     options.get("link_latency", 1), options.get("credit_delay", 0))
                         for h in hops[done]])
    got = latency[done]
    assert done.sum() > 100 and result.verified
    assert (got >= expected).all()                                       # contention only adds
    assert (got == expected).mean() > 0.8                                # most messages travel alone


@pytest.mark.parametrize("name", ["multicast-dp", "multicast-mp", "multicast-cp", "multicast-qg"])
def test_multicast_runs_verified_with_deeper_buffers_and_router_delay(name):
    slow = tc.run("mesh:6x6", name, load=0.004, cycles=6000, destinations=5, buffer_depth=4, router_delay=2, seed=3)
    rigid = tc.run("mesh:6x6", name, load=0.004, cycles=6000, destinations=5, seed=3)
    assert slow.verified and rigid.verified
    assert slow.params["router_delay"] == 2 and rigid.params["router_delay"] == 0
    # the same plan; each header pays 2 more cycles in every router, so the worms-alone bound grows
    assert slow.metrics["lower_bound"] > rigid.metrics["lower_bound"]
    assert slow.metrics["mean_latency"] >= slow.metrics["lower_bound"] - 1e-9


@pytest.mark.parametrize("name", ["multicast-cp", "unicast-ecube"])
def test_cli_refuses_bad_network_options_in_one_line(name):
    from typer.testing import CliRunner

    out = CliRunner().invoke(app, ["run", "mesh:4x4", name, "--set", "buffer_depth=0"])
    assert out.exit_code == 2
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "buffer_depth" in lines[0] and ">= 1" in lines[0] and "Traceback" not in out.output


@pytest.mark.parametrize(("spec", "routing"), [("torus:5x4", "dor"), ("ccc:3", "minimal"), ("ring:8", "valiant")])
def test_default_vcs_is_what_the_plan_uses(spec, routing):
    """``vcs`` left out: the router gets as many VCs as the plan's routes use, the same run as naming them."""
    default = tc.run(spec, "unicast", routing=routing, load=0.2, cycles=3000, buffer_depth=2, seed=5)
    need = default.metrics["vcs_needed"]
    named = tc.run(spec, "unicast", routing=routing, load=0.2, cycles=3000, buffer_depth=2, seed=5, vcs=need)
    assert need > 1 and default.metrics == {**named.metrics}
    with pytest.raises(tc.TopocastError, match="'vcs' must be >= "):
        tc.run(spec, "unicast", routing=routing, load=0.2, cycles=3000, seed=5, vcs=need - 1)
