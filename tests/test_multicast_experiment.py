"""``topocast reproduce multicast`` on a cut-down grid: readings, seeds, intervals across seeds, files."""

import csv
import json
import math

import numpy as np
import pytest

from topocast import registry
from topocast.experiments import multicast as experiment
from topocast.progress import Progress
from topocast.report import Claim, Compare
from topocast.sweep_points import map_ordered

#: the 97.5% quantile of Student's t with 4 degrees of freedom (tabulated: 2.776)
T4 = 2.7764451051977987


def test_across_seeds_is_the_mean_of_seed_means_with_a_t_interval():
    runs = [{"mean_latency": x, "saturated": s, "accepted": 0.01, "verified": True, "first_violation": None,
             "measured": 10} for x, s in zip((100.0, 110.0, 120.0, 130.0, 140.0), (0, 0, 1, 1, 0), strict=True)]
    point = experiment.across_seeds(runs)
    sd = math.sqrt(sum((x - 120) ** 2 for x in (100, 110, 120, 130, 140)) / 4)  # 15.81
    assert point["mean_latency"] == pytest.approx(120.0)
    assert point["ci95"] == pytest.approx(T4 * sd / math.sqrt(5))  # 19.63
    assert point["saturated_seeds"] == 2 and not point["saturated"]  # 2 of 5: not most seeds
    assert experiment.across_seeds([dict(r, saturated=True) for r in runs[:3]] + runs[3:])["saturated"]


def test_run_seeds_are_shared_by_the_series_and_differ_elsewhere():
    jobs, keys = experiment._jobs(True, 2500, 4, seed=7)
    seeds: dict = {}
    for job, (fig, counts, _series, load, rep) in zip(jobs, keys, strict=True):
        seeds.setdefault((fig, counts, load, rep), set()).add(job[3])
    assert all(len(s) == 1 for s in seeds.values())  # every series meets the same workload
    values = [next(iter(s)) for s in seeds.values()]
    assert len(set(values)) == len(values)  # and every place its own
    assert experiment._jobs(True, 2500, 4, seed=7)[0] == jobs and experiment._jobs(True, 2500, 4, seed=8)[0] != jobs
    per_point = {}
    for fig, counts, series, load, rep in keys:
        per_point.setdefault((fig, counts, series, load), set()).add(rep)
    assert {len(r) for r in per_point.values()} == {experiment.SEEDS} and experiment.SEEDS >= 5


# regression: 6 settings shown, 3 printed cells (Theorem 1's two start-ups and two steps, printed by the paper,
# section 3) and 9 claims are the report's layout
@pytest.mark.regression
def test_reproduce_multicast_small(tmp_path, monkeypatch):
    small = {key: loads[:2] for key, loads in experiment.QUICK_LOADS.items()}
    monkeypatch.setattr(experiment, "QUICK_LOADS", small)
    monkeypatch.setattr(experiment, "UNICAST_LOADS_QUICK", (0.05,))
    monkeypatch.setattr(experiment, "QUICK_CYCLES", 1500)
    report = registry.experiment("multicast").run(quick=True, out=tmp_path, progress=None)
    titles = [t.title for t in report.tables]
    for fig in (3, 4, 5, 6):
        for counts in ("fixed", "drawn"):
            assert sum(t.startswith(f"Figure {fig}:") and f"({counts}:" in t for t in titles) == 1
    model = report.tables[0]
    cells = {row[0]: row[1] for row in model.rows}
    assert cells["start-up latency (cycles)"] == Compare(33, 33, kind="setting")
    assert model.tally().settings_shown == 6 and model.tally().printed_matched == 3
    assert model.tally().printed_mismatched == 0
    ecube = next(v for k, v in cells.items() if k.startswith("QG routing=ecube: start-ups"))
    assert ecube == 2  # one start-up per step: two per multicast, shown, not counted

    # claims: the default reading's verdict, and every reading's
    assert len(report.claims) == 9 and all(isinstance(c, Claim) for c in report.claims)
    routings = {f"routing={r} ({c} counts)" for r in ("disjoint", "ecube") for c in ("fixed", "drawn")}
    for claim in report.claims:
        if claim.text.startswith("MP"):
            assert set(claim.readings) == {"fixed counts", "drawn counts"}
            assert claim.confirmed == claim.readings["fixed counts"]
        else:
            assert set(claim.readings) == routings
            assert claim.confirmed == claim.readings["routing=disjoint (fixed counts)"]
    assert report.claims[0].confirmed  # low load: DP and MP beat CP and QG, under every reading
    assert all(report.claims[0].readings.values())
    assert sum("preparation time 40" in c.text for c in report.claims) == 4
    by_reading = next(t for t in report.tables if t.key == "claims_by_reading")
    verdict = {(c.text, k): v for c in report.claims for k, v in c.readings.items()}
    assert len(by_reading.rows) == len(verdict)
    assert all((row[2] == "holds") == verdict[(row[0], row[1])] for row in by_reading.rows)

    # the series CSV: one row per load point, mean and interval across the seeds of the runs CSV
    with open(tmp_path / "multicast_series.csv") as handle:
        series = list(csv.DictReader(handle))
    with open(tmp_path / "multicast_runs.csv") as handle:
        runs = list(csv.DictReader(handle))
    assert len(series) == 4 * 2 * 2 * len(experiment.SERIES)
    assert {r["series"] for r in series} == {key for key, *_ in experiment.SERIES}
    # no delivery rule broken anywhere; a run is unverified only when its short window did not drain
    assert not any("VERIFICATION FAILED" in n for n in report.notes)
    assert any(r["verified"] == "True" for r in series)
    assert {(r["destinations_mean"], r["counts"], r["destinations_min"], r["destinations_max"]) for r in series} == {
        ("10", "fixed", "10", "10"), ("20", "fixed", "20", "20"), ("10", "drawn", "5", "15"),
        ("20", "drawn", "10", "30")}
    seeds_of: dict = {}
    for r in runs:
        seeds_of.setdefault((r["figure"], r["counts"], r["series"], r["load_flits_per_node_cycle"]), []).append(r)
    checked = 0
    for r in series:
        mine = seeds_of[(r["figure"], r["counts"], r["series"], r["load_flits_per_node_cycle"])]
        means = np.array([float(x["mean_latency_cycles"]) for x in mine])
        means = means[np.isfinite(means)]  # a seed of a very short run may finish no measured multicast
        assert len(mine) == int(r["seeds"]) == 5 and len(means) == int(r["seeds_measured"])
        if len(means) == 5:
            assert float(r["mean_latency_cycles"]) == pytest.approx(means.mean())
            assert float(r["ci95_latency_across_seeds_cycles"]) == pytest.approx(
                T4 * means.std(ddof=1) / math.sqrt(5))
            checked += 1
        saturated = sum(x["saturated"] == "True" for x in mine)
        assert int(r["saturated_seeds"]) == saturated and (r["saturated"] == "True") == (2 * saturated > 5)
    assert checked > len(series) / 2
    assert any("±" in str(cell) for t in report.tables if t.key.startswith("figure") for row in t.rows
               for cell in row)
    assert any("delivery" in n for n in report.notes) and any("quick run" in n for n in report.notes)
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == [f"multicast_fig{i}.png" for i in (3, 4, 5, 6)]


def test_cells_hold_every_series_of_one_seed_on_one_network():
    jobs, keys = experiment._jobs(True, 2500, 4, seed=3)
    cells = experiment._cells(jobs, keys)
    assert sorted(i for cell in cells for i in cell) == list(range(len(jobs)))  # a partition of the runs
    for cell in cells:
        assert len({jobs[i][0] for i in cell}) == 1 and len({jobs[i][3] for i in cell}) == 1
        if keys[cell[0]][0] == "unicast":
            assert len(cell) == 1
        else:
            assert [keys[i][2] for i in cell] == [key for key, *_ in experiment.SERIES]
            assert len({(keys[i][0], keys[i][1], keys[i][3], keys[i][4]) for i in cell}) == 1


def test_a_cell_runs_as_its_runs_do_one_by_one():
    from topocast.sweep_points import measure_point

    jobs, keys = experiment._jobs(True, 600, 2, seed=5)
    cell = next(c for c in experiment._cells(jobs, keys) if keys[c[0]][0] == 4)
    alone = [measure_point(jobs[i]) for i in cell]
    together = experiment.run_cell([jobs[i] for i in cell])
    assert json.dumps(together, sort_keys=True) == json.dumps(alone, sort_keys=True)  # NaN == NaN here


class _Ticks:
    def __init__(self):
        self.ticks, self.total = 0, None

    def track(self, items, description, total=None):
        self.total = total
        for item in items:
            self.ticks += 1
            yield item


def test_map_ordered_keeps_the_items_order_and_counts_sizes():
    ticks = _Ticks()
    out = map_ordered(abs, [-3, 1, -2], workers=1, progress=ticks, sizes=[2, 1, 4], first=[2, 0, 1])
    assert out == [3, 1, 2] and ticks.ticks == ticks.total == 7
    with pytest.raises(ValueError):
        map_ordered(abs, [1, 2], workers=1, first=[0, 0])


@pytest.mark.slow
def test_results_do_not_depend_on_the_number_of_workers(monkeypatch):
    from topocast.sweep import set_defaults

    monkeypatch.setattr(experiment, "QUICK_LOADS", {key: loads[:1] for key, loads in experiment.QUICK_LOADS.items()})
    monkeypatch.setattr(experiment, "UNICAST_LOADS_QUICK", (0.05,))
    monkeypatch.setattr(experiment, "QUICK_CYCLES", 600)
    monkeypatch.setattr(experiment, "FIGURES", experiment.FIGURES[:1])
    here = experiment.measure(True, Progress(enabled=False), seed=2)
    set_defaults(workers=2)  # what ``reproduce --workers 2`` sets: the cells go to a local Dask cluster
    try:
        pooled = experiment.measure(True, Progress(enabled=False), seed=2)
    finally:
        set_defaults()
    for part in ("runs", "points"):  # same keys in the same order, same values (repr: NaN equals NaN)
        assert repr(list(pooled[part].items())) == repr(list(here[part].items()))
