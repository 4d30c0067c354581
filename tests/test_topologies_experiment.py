"""``topocast reproduce topologies --quick``: the networks chosen, the printed values, the claims, the files."""

from __future__ import annotations

import math

import pytest

from topocast import registry
from topocast.experiments import topologies as study
from topocast.outputs.report import Compare
from topocast.spec import _estimate, parse_spec
from topocast.topology.terminals import terminal_counts


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("topologies")
    rep = registry.experiment("topologies").run(True, out, None).attach_coverage()
    rep.write(out)
    return rep, out


@pytest.mark.parametrize(("terminals", "radix"), study.SIZES[False])
def test_networks_are_near_the_size(terminals, radix):
    nets = study.networks(terminals, radix)
    assert {n.key for n in nets} >= {"polarfly", "slimfly", "hyperx", "dragonfly-plus", "fattree", "jellyfish",
                                     "galaxyfly", "dragonfly", "hdn", "torus", "hypercube", "ej1", "ej2", "ej3"}
    for net in nets:
        fam, kw = parse_spec(net.spec)
        nodes, _ = _estimate(fam, kw)
        assert nodes >= 2
        if net.key in ("hdn", "torus", "ej1"):
            assert abs(math.log(nodes / terminals)) < 0.2, net
    gf = next(n for n in nets if n.key == "galaxyfly")
    assert ",q=1," not in gf.spec
    ej1 = next(n for n in nets if n.key == "ej1")
    ones = parse_spec(ej1.spec)[1]
    for key in ("ej2", "ej3"):                   # 'with more nodes': at least EJ^(1)'s
        spec = next(n for n in nets if n.key == key).spec
        assert _estimate(*parse_spec(spec))[0] >= ones["a"] ** 2 + ones["a"] * ones["b"] + ones["b"] ** 2


def test_quick_report(report):
    rep, out = report
    titles = [t.title for t in rep.tables]
    assert any("about 1,000 terminals" in t for t in titles)
    printed = next(t for t in rep.tables if t.key == "printed")
    cells = [c for row in printed.rows for c in row if isinstance(c, Compare) and c.kind == "paper"]
    assert len(cells) >= 20 and all(c.match for c in cells)
    tally = rep.tally()
    assert tally.printed_mismatched == 0 and tally.closed_form_failed == 0 and tally.closed_form_passed > 10
    verdicts = {c.text.split(" (")[0]: c.verdict for c in rep.claims}
    assert verdicts["Galaxy graphs have a diameter of at most 2"] == "confirmed"
    assert verdicts["The Dragonfly and the Galaxyfly with q > 1 have diameters 3 and 5"] == "confirmed"
    assert verdicts["HDN's node degree is d0 + k whatever its size"] == "confirmed"
    assert verdicts["PolarFly reaches more than 96% of the Moore bound at moderate radixes"] == "confirmed"
    assert len(rep.claims) >= 10 and all(c.evidence for c in rep.claims)
    assert [p.name for p in rep.figures] == ["topologies_1000.png"] and rep.figures[0].stat().st_size > 10_000
    assert (out / "topologies_networks_1000.csv").exists() and (out / "topologies_report.json").exists()
    assert {i.ref for i in rep.coverage} >= {"HDN Table 3", "Galaxyfly Section 5", "PolarFly Abstract"}


def test_every_network_of_the_quick_size_is_measured(report):
    rep, _ = report
    table = rep.tables[0]
    assert len(table.rows) == 14
    header = table.columns
    for row in table.rows:
        values = dict(zip(header, row, strict=True))
        diameter = values["diameter (routers) (hops)"]
        diameter = diameter.ours if isinstance(diameter, Compare) else diameter
        assert diameter is not None and diameter >= 1
        light = values["network"].startswith(("torus", "hypercube", "ej"))
        assert (values["all-gather large: best (s)"] is None) == light


def test_cost_ratio_and_hdn_degrees():
    assert math.isclose(study.cost_ratio(10, 10, 1024), 1.0)
    assert round(study.cost_ratio(7, 9, 900), 2) == 0.82       # HDN Table 3, HDN(B,1,(2))
    assert study._hdn_base_degree("hdn:base=2x3x5,k=1,s=2") == (6, 1)


def test_terminal_counts_of_the_seed_networks():
    from topocast.spec import build

    assert terminal_counts(build("hdn:base=2x3x5,k=1,s=2")).sum() == 900
    assert terminal_counts(build("galaxyfly:n=3,q=5,a=4,p=3")).sum() == 60 * 3
