"""``topocast reproduce galaxyfly --quick``: tables with the paper beside ours, Table 6 claims, figures."""

import json

import pytest

from topocast import registry
from topocast.cli import main


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("galaxyfly")
    return registry.experiment("galaxyfly").run(quick=True, out=out, progress=None), out


def test_tables_and_paper_cells(report):
    rep, _ = report
    titles = [t.title for t in rep.tables]
    assert [t.split(":")[0] for t in titles[:4]] == ["Table 2", "Table 3", "Table 4", "Table 5"]
    table2 = rep.tables[0]
    assert table2.compared() == (16, 16)  # 100% success, 0% failure for all four packet sizes
    table3 = rep.tables[1]
    avg_packet = next(row for row in table3.rows if row[0] == "AvgPacket")
    assert all(cell.ours == 0 and cell.match for cell in avg_packet[1:])
    assert table3.rows[0][1].paper == 34100  # the paper's printed AvgTime for (3,5,4): Table 3, first cell


def test_claims_have_verdicts_with_numbers(report):
    rep, _ = report
    by_text = {c.text: c for c in rep.claims}
    assert by_text["SFATA has no redundant packets (AvgPacket = 0)"].confirmed
    assert by_text["RFATA has the lower RouterTime"].confirmed
    sfata_first = next(c for c in rep.claims if c.text.startswith("SFATA finishes first"))
    # the paper's MaxTime for (3,5,4): Table 4 (RFATA) 67,400 / Table 3 (SFATA) 56,500 = 1.193
    assert "RFATA/SFATA MaxTime =" in sfata_first.evidence and "paper: 1.193" in sfata_first.evidence
    assert f"{67400 / 56500:.3f}" == "1.193"
    assert sum("grow with" in c.text for c in rep.claims) == 6 == 2 * 3  # SFATA and RFATA x (n, q, a)
    assert any("Dragonfly comparator" in c.text for c in rep.claims)


def test_figures_written(report):
    rep, out = report
    names = sorted(p.name for p in rep.figures)
    assert names == ["galaxyfly_galaxy_graph.png", "galaxyfly_router_completion.png"]
    assert all((out / n).stat().st_size > 10_000 for n in names)


def test_cli_reproduce_json(capsys, tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "galaxyfly", "--quick", "--json", "--out", str(tmp_path)])
    data = json.loads(capsys.readouterr().out)
    assert exit_info.value.code == 0 and data["name"] == "galaxyfly"
    assert (tmp_path / "galaxyfly_report.json").exists()
