"""``topocast reproduce multicast`` on a cut-down grid: tables, claims, PNG and CSV files."""

import csv

import pytest

from topocast import registry
from topocast.experiments import multicast as experiment
from topocast.report import Claim, Compare


# regression: the counts of settings shown (6), printed matches (2), claims (9) and prep-40 claims (4) are the
# report's layout (topocast output, commit 21c1d09); 33 cycles and 2 start-ups are the paper's (section 4, Theorem 1)
@pytest.mark.regression
def test_reproduce_multicast_small(tmp_path, monkeypatch):
    small = {key: loads[:2] for key, loads in experiment.QUICK_LOADS.items()}
    monkeypatch.setattr(experiment, "QUICK_LOADS", small)
    monkeypatch.setattr(experiment, "UNICAST_LOADS_QUICK", (0.05,))
    monkeypatch.setattr(experiment, "QUICK_CYCLES", 6000)
    report = registry.experiment("multicast").run(quick=True, out=tmp_path, progress=None)
    titles = [t.title for t in report.tables]
    assert any("Figure 3" in t for t in titles) and any("Figure 6" in t for t in titles)
    model = report.tables[0]
    cells = {row[0]: row[1] for row in model.rows}
    # our settings are shown beside the paper's and never counted; Theorem 1's two start-ups are counted
    assert cells["start-up latency (cycles)"] == Compare(33, 33, kind="setting")
    assert cells["start-up latency (cycles)"].match is None
    assert model.tally().settings_shown == 6 and model.tally().printed_matched == 2
    assert cells["QG message-passing steps, max over all multicasts"] == Compare(2, 2)
    assert cells["QG start-ups per multicast, max over all multicasts (Theorem 1)"] == Compare(2, 2)
    assert cells["QG (e-cube worms, our alternative) start-ups, max"] > 2
    assert len(report.claims) == 9 and all(isinstance(c, Claim) for c in report.claims)
    assert report.claims[0].confirmed  # low load: DP and MP beat CP and QG
    assert sum("preparation time 40" in c.text for c in report.claims) == 4
    variant = next(t for t in report.tables if "e-cube variant" in t.title)
    assert [row[0] for row in variant.rows] == [c.text for c in report.claims if c.text in
                                                {row[0] for row in variant.rows}]
    assert all(row[1] in ("holds", "fails") and row[2] in ("holds", "fails") for row in variant.rows)
    # the default-QG column of the variant table repeats the claims' verdicts
    verdict = {c.text: c.confirmed for c in report.claims}
    assert all((row[1] == "holds") == verdict[row[0]] for row in variant.rows)
    assert any("highest unsaturated load" in n for n in report.notes)
    assert "verified" in report.notes[-1]
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == [f"multicast_fig{i}.png" for i in (3, 4, 5, 6)]
    with open(tmp_path / "multicast_series.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 * len(experiment.SERIES) * 2
    assert {r["algorithm"] for r in rows} == {key for key, *_ in experiment.SERIES}
    assert all(r["verified"] == "True" for r in rows)
