"""``topocast reproduce ej --quick``: every table cell compared with the paper matches; figures and CSV written."""

from topocast.registry import experiment
from topocast.report import Compare


def test_reproduce_ej_quick(tmp_path):
    report = experiment("ej").run(True, tmp_path, None)
    compared = [t.compared() for t in report.tables]
    assert sum(c[1] for c in compared) >= 100
    assert all(hits == total for hits, total in compared)
    names = {p.name for p in report.figures}
    for number in range(15, 23):
        assert any(f"figure{number}" in name for name in names)
    assert (tmp_path / "ej_figures19_21_series.csv").exists()
    formula6 = next(c for c in report.claims if c.text.startswith("Formula (6)"))
    assert formula6.confirmed is False and "1369" in formula6.evidence
    table3 = next(t for t in report.tables if t.title.startswith("Table 3"))
    assert [row[5] for row in table3.rows][:4] == ["frontier run, both exactly once"] * 4
    assert all(isinstance(cell, Compare) for cell in table3.rows[0][1:5])
