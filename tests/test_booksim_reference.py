"""topocast's wormhole engine against BookSim2's recorded figures (benchmarks/data/booksim2_reference.json).

The router options mirror BookSim's configs as docs/simulator.md ("Validation against BookSim2") derives
them: a BookSim hop is ``link_latency + router_delay`` cycles (mesh links 1, torus links 2; the 3-cycle
router ``router_delay=2``, the default one 4), ``startup=2``, ``credit_delay = link_latency + 3`` where
BookSim's credit loop is longer than the buffer, one injection and one ejection channel.  The tolerances
are the issue's (latency 5 %, saturation throughput 10 %) and 2 % for the zero-load latency; a drift of
the engine, the closed form or the traffic by a few per cent fails them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import topocast as tc

REFERENCE = json.loads((Path(__file__).resolve().parents[1] / "benchmarks" / "data"
                        / "booksim2_reference.json").read_text())


def options(spec: str, router: str, buffer: int) -> dict:
    link = 1 if spec.startswith("mesh") else 2
    credit = link + 3 if buffer < 2 * link + 3 else 0
    return {"routing": "dor", "buffer_depth": buffer, "router_delay": 2 if router == "3-cycle" else 4,
            "link_latency": link, "credit_delay": credit, "startup": 2, "injection_channels": 1,
            "ejection_channels": 1}


def booksim_mean(key: str, offered: float) -> float:
    """BookSim's mean packet latency over its stable seeds at one offered load."""
    point = next(p for p in REFERENCE["configs"][key]["latency_mode"] if abs(p["offered"] - offered) < 1e-9)
    lat = [r[2] for r in point["runs"] if r[1] == "stable"]
    assert len(lat) == 5
    return sum(lat) / len(lat)


def zero_load_run(config_file: str, buffer: int) -> float:
    """BookSim's packet latency of the zero-load run of ``config_file`` with ``buffer``-flit buffers (lowest rate)."""
    runs = [r for r in REFERENCE["zero_load_runs"] if r["config_file"] == config_file
            and (f"vc_buf_size={buffer}" in r["overrides"] or (buffer == 5 and not any(
                o.startswith("vc_buf_size") for o in r["overrides"])))]
    low = min(runs, key=lambda r: float(next(o for o in r["overrides"] if o.startswith("injection_rate")
                                             ).split("=")[1]))
    return low["packet_latency"]


def test_reference_file_is_the_recorded_commit_and_configs():
    assert REFERENCE["booksim"]["commit"] == "28f43299f1706a3160ffac721ca461d74eb6e618"
    assert set(REFERENCE["config_files"]) == {"mesh16.cfg", "mesh16_3cyc.cfg", "torus8.cfg", "torus8_3cyc.cfg"}
    assert "routing_delay = 0;" in REFERENCE["config_files"]["mesh16_3cyc.cfg"]
    assert "injection_rate_uses_flits = 1;" in REFERENCE["config_files"]["mesh16.cfg"]
    for key, cfg in REFERENCE["configs"].items():
        assert cfg["throughput_mode"], key
        assert all(len(p["runs"]) >= 1 for p in cfg["latency_mode"]), key
    assert booksim_mean("mesh16_3cyc_buf5", 0.02) == pytest.approx(71.6, abs=0.05)


@pytest.mark.parametrize("spec, config_file, router, buffer", [
    ("mesh:16x16", "mesh16_3cyc.cfg", "3-cycle", 5),
    ("mesh:16x16", "mesh16_3cyc.cfg", "3-cycle", 4),    # credit loop 5 > 4 flits: each 4 flits wait 1 cycle
    ("mesh:16x16", "mesh16.cfg", "default", 5),
    ("torus:8x8", "torus8_3cyc.cfg", "3-cycle", 5),     # credit loop 7 > 5: 12 cycles of stretch
    ("torus:8x8", "torus8_3cyc.cfg", "3-cycle", 8),
    ("torus:8x8", "torus8.cfg", "default", 5),
])
def test_zero_load_latency_matches_booksim(spec, config_file, router, buffer):
    m = tc.run(spec, "unicast", load=0.05, cycles=6000, seed=3, **options(spec, router, buffer)).metrics
    assert m["zero_load_latency"] == pytest.approx(zero_load_run(config_file, buffer), rel=0.02)


def test_latency_at_low_load_on_the_mesh():
    """16x16 mesh, 3-cycle router, 5-flit buffers, offered 0.02 and 0.05 flits/node/cycle."""
    for load in (0.02, 0.05):
        lat = [tc.run("mesh:16x16", "unicast", load=load, cycles=10000, seed=seed,
                      **options("mesh:16x16", "3-cycle", 5)).metrics["mean_latency"] for seed in (0, 1)]
        assert sum(lat) / 2 == pytest.approx(booksim_mean("mesh16_3cyc_buf5", load), rel=0.05), load


def test_latency_under_load_on_the_torus():
    """8x8 torus, 3-cycle router, 8-flit buffers, offered 0.1 flits/node/cycle."""
    lat = [tc.run("torus:8x8", "unicast", load=0.1, cycles=10000, seed=seed,
                  **options("torus:8x8", "3-cycle", 8)).metrics["mean_latency"] for seed in (0, 1)]
    assert sum(lat) / 2 == pytest.approx(booksim_mean("torus8_3cyc_buf8", 0.1), rel=0.05)


def test_saturation_throughput_on_the_mesh():
    """Accepted traffic at offered 0.2 (beyond saturation) against BookSim's throughput-mode runs there."""
    point = next(p for p in REFERENCE["configs"]["mesh16_3cyc_buf5"]["throughput_mode"] if p["offered"] == 0.2)
    booksim = sum(r[1] for r in point["runs"]) / len(point["runs"])
    m = tc.run("mesh:16x16", "unicast", load=0.2, cycles=8000, seed=0, **options("mesh:16x16", "3-cycle", 5)).metrics
    assert m["saturated"]
    assert m["accepted_load"] == pytest.approx(booksim, rel=0.10)
