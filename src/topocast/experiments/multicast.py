"""``topocast reproduce multicast``: Figures 3-6 of Al-Dubai et al. (2003) and their claims.

Mean multicast latency against offered traffic for dual-path (DP),
multi-path (MP), column-path (CP) and Qualified Groups (QG) on 10 x 10 and
16 x 16 meshes with 10 and 20 destinations, 32-flit messages, 33-cycle
start-up.  Where the paper is open, every reading is run and every claim
shows its verdict under each: QG's routing (``ecube``, the base routing the
paper states, with one start-up per step: our default; ``disjoint``,
Theorem 1's two disjoint dual-path worms per step), each also with 40-cycle
preparation (the paper's robustness remark); the preparation times (the
paper prints two sets: DP/MP/CP/QG 2/4/8/16 with the figures, our default,
and 2/2/4/16 earlier in section 4); and the number of destinations (the
stated average for every multicast, or drawn uniformly around it).  Each
load point runs 5 seeds; latencies are the mean of the per-seed means with a
Student-t 95% interval across the seeds.  Beside latency, every run measures
what QG is designed for: how balanced the arrival times at a multicast's
destinations are (their standard deviation and range per multicast).  The
paper prints its results as plots only, so the compared cells are Theorem
1's two start-ups and message-passing steps; its qualitative statements are
checked as claims.  Also the engine's e-cube unicast baseline: zero-load
latency against the closed form and the 16 x 16 saturation throughput
against the bisection bound.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..algorithms.mesh_multicast import PREP_TIMES, preparation
from ..infra.fileio import save_figure, write_csv
from ..infra.progress import Progress
from ..outputs.report import Claim, Compare, Report, Table, View, readings_table
from ..registry import Experiment, register_experiment

PAPER = "Al-Dubai, Ould-Khaoua, El-Zayyat, Mackenzie: On balancing traffic load in path-based multicast communication"

FIGURES = (  # (figure, mesh, destinations)
    (3, "mesh:10x10", 10),
    (4, "mesh:10x10", 20),
    (5, "mesh:16x16", 10),
    (6, "mesh:16x16", 20),
)

SERIES: tuple[tuple[str, str, str, dict[str, Any]], ...] = (  # (key, label, algorithm, extra params)
    ("DP", "DP", "multicast-dp", {}),
    ("MP", "MP", "multicast-mp", {}),
    ("CP", "CP", "multicast-cp", {}),
    ("QGE", "QG e-cube", "multicast-qg", {"routing": "ecube"}),
    ("QG", "QG disjoint", "multicast-qg", {"routing": "disjoint"}),
    ("QG40E", "QG e-cube, prep 40", "multicast-qg", {"routing": "ecube", "prep": 40}),
    ("QG40", "QG disjoint, prep 40", "multicast-qg", {"routing": "disjoint", "prep": 40}),
    ("MPt", "MP, prep 2 (2/2/4/16 set)", "multicast-mp", {"prep_set": "text"}),
    ("CPt", "CP, prep 4 (2/2/4/16 set)", "multicast-cp", {"prep_set": "text"}),
)
#: QG's routing readings: (name in the verdicts, series with preparation 16, series with preparation 40);
#: e-cube, the base routing the paper states, first: it is the default reading
ROUTINGS = (("ecube", "QGE", "QG40E"), ("disjoint", "QG", "QG40"))

#: the two preparation-time sets the paper prints: (name, what, series of DP, MP, CP under it); DP (2 cycles)
#: and QG (16) are the same in both, so they share their runs
PREP_SETS = (
    ("figures", "DP/MP/CP/QG 2/4/8/16, stated with Figures 3-6", {"DP": "DP", "MP": "MP", "CP": "CP"}),
    ("text", "DP/MP/CP/QG 2/2/4/16, stated first in section 4", {"DP": "DP", "MP": "MPt", "CP": "CPt"}),
)

#: destination-count readings: (name, how, spread as a function of the stated average)
COUNTS = (
    ("fixed", "the stated number for every multicast", lambda d: 0),
    ("drawn", "uniform on d/2 .. 3d/2, mean d", lambda d: d // 2),
)
#: the default reading (routing, destination counts, preparation set): what the paper states where it states it
DEFAULT_READING = ("ecube", "fixed", "figures")

SEEDS = 5
FULL_LOADS = {
    (10, 10): (0.001, 0.002, 0.004, 0.006, 0.008, 0.01, 0.012, 0.016, 0.02, 0.025, 0.03),
    (10, 20): (0.001, 0.002, 0.003, 0.004, 0.006, 0.008, 0.01, 0.012, 0.016, 0.02),
    (16, 10): (0.001, 0.002, 0.003, 0.004, 0.006, 0.008, 0.01, 0.012, 0.016, 0.02),
    (16, 20): (0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.012),
}
QUICK_LOADS = {  # low load, below DP/MP saturation, beyond it (a subset of the full run's loads)
    (10, 10): (0.001, 0.008, 0.016),
    (10, 20): (0.001, 0.004, 0.008),
    (16, 10): (0.001, 0.004, 0.008),
    (16, 20): (0.001, 0.003, 0.005),
}
#: cycles simulated per seed (5 seeds per load point)
QUICK_CYCLES, FULL_CYCLES = 2500, 12000
QUICK_BATCHES, FULL_BATCHES = 4, 8
UNICAST_LOADS_FULL = (0.06, 0.08, 0.1, 0.11, 0.12, 0.13, 0.14, 0.16, 0.2)
UNICAST_LOADS_QUICK = (0.06, 0.14)


def _side(spec: str) -> int:
    return int(spec.split(":")[1].split("x")[0])


def run_seed(seed: int, *key: int) -> int:
    """Seed of one run: from the base seed and the run's place (figure, count reading, load, replication).

    The algorithm is not part of it, so every series meets the same arrivals and destinations at a load
    point (common random numbers: differences between algorithms are not sampling noise of the workload).
    """
    return int(np.random.SeedSequence([int(seed), *map(int, key)]).generate_state(1)[0])


# -- compute -----------------------------------------------------------------------------------
def _multicast_run(r: dict, key: str) -> dict:
    """What this report uses of one multicast run (one seed) of series ``key``."""
    params = r["params"]
    base = key.lower().rstrip("t") if key.startswith(("DP", "MP", "CP")) else "qg"
    return {"mean_latency": r["mean_latency"], "ci95": r["ci95_latency"], "saturated": r["saturated"],
            "arrival_std": r["arrival_std"], "arrival_range": r["arrival_range"],
            "startups": r["startups_max"], "startups_mean": r["startups_mean"], "steps": r["message_passing_steps"],
            "accepted": r["accepted_load"], "verified": r["verified"], "first_violation": r["first_violation"],
            "measured": r["measured_messages"], "prep": preparation(base, params["prep"], params["prep_set"]),
            "startup_cycles": params["startup"], "flits": params["flits"]}


def _unicast_run(r: dict) -> dict:
    return {"mean_latency": r["mean_latency"], "ci95": r["ci95_latency"], "saturated": r["saturated"],
            "accepted": r["accepted_load"], "verified": r["verified"], "first_violation": r["first_violation"],
            "measured": r["measured_messages"]}


def across_seeds(runs: list[dict]) -> dict:
    """One load point from its seeds: the mean of the per-seed mean latencies and the Student-t 95%
    half-width over the seeds (those that measured a latency: ``seeds_measured``, all of them unless a
    very short run finished no measured multicast); saturated when most seeds are (the mean is then not
    a steady-state number).

    A majority rather than any one seed: a short run near saturation can look saturated by chance (its
    unfinished multicasts or its last batches), and five such chances would flag a load that three of the
    five seeds carry; ``saturated_seeds`` keeps the count."""
    from ..infra.stats import t_half_width

    means = np.array([r["mean_latency"] for r in runs], dtype=float)
    means = means[np.isfinite(means)]
    n = len(means)
    mean = float(means.mean()) if n else float("nan")
    ci = t_half_width(means)
    point = {"mean_latency": mean, "ci95": ci, "seeds": len(runs), "seeds_measured": n,
             "saturated": 2 * sum(bool(r["saturated"]) for r in runs) > len(runs),
             "saturated_seeds": sum(bool(r["saturated"]) for r in runs),
             "accepted": float(np.mean([r["accepted"] for r in runs])),
             "verified": all(r["verified"] for r in runs),
             "first_violation": next((r["first_violation"] for r in runs if r["first_violation"]), None),
             "measured": int(sum(r["measured"] for r in runs))}
    if "arrival_std" in runs[0]:
        std = np.array([r["arrival_std"] for r in runs], dtype=float)
        std = std[np.isfinite(std)]
        point.update(arrival_std=float(std.mean()) if len(std) else float("nan"),
                     arrival_std_ci95=t_half_width(std),
                     arrival_range=float(np.nanmean([r["arrival_range"] for r in runs]))
                     if any(np.isfinite(r["arrival_range"]) for r in runs) else float("nan"))
    if "startups" in runs[0]:
        point.update(startups=max(r["startups"] for r in runs),
                     startups_mean=float(np.mean([r["startups_mean"] for r in runs])),
                     steps=max(r["steps"] for r in runs), prep=runs[0]["prep"],
                     startup_cycles=runs[0]["startup_cycles"], flits=runs[0]["flits"])
    return point


def _jobs(quick: bool, cycles: int, batches: int, seed: int, seeds: int = SEEDS) -> tuple[list, list]:
    """Every run of Figures 3-6 (both count readings, every series, ``seeds`` seeds) and of the unicast
    baseline, with its key ``(figure, counts, series, load, replication)``."""
    jobs: list[Any] = []
    keys: list[tuple[Any, ...]] = []
    for fig, spec, dests in FIGURES:
        for c, (counts, _, spread_of) in enumerate(COUNTS):
            for i, load in enumerate((QUICK_LOADS if quick else FULL_LOADS)[(_side(spec), dests)]):
                for rep in range(seeds):
                    s = run_seed(seed, fig, c, i, rep)
                    for key, _, alg, extra in SERIES:
                        params = dict(extra, destinations=dests, spread=spread_of(dests), load=load, cycles=cycles,
                                      batches=batches)
                        jobs.append((spec, alg, params, s))
                        keys.append((fig, counts, key, load, rep))
    for i, load in enumerate(UNICAST_LOADS_QUICK if quick else UNICAST_LOADS_FULL):
        for rep in range(seeds):
            jobs.append(("mesh:16x16", "unicast-ecube", dict(load=load, cycles=cycles, batches=batches),
                         run_seed(seed, 0, 0, i, rep)))
            keys.append(("unicast", "fixed", "XY", load, rep))
    return jobs, keys


def arrival_spread(run) -> dict:
    """How balanced a run's arrival times are: over the measured multicasts that reached every destination,
    the mean of the standard deviation (``arrival_std``) and of the range (``arrival_range``, last minus
    first) of the cycles at which its destinations received the message (NaN without such a multicast).

    Parameters
    ----------
    run : topocast.measure.wormhole.WormRun
        The trace of a wormhole run with its plan and per-multicast latencies.

    Returns
    -------
    dict
        ``arrival_std`` and ``arrival_range`` in cycles.
    """
    plan, times = run.plan, np.asarray(run.trace.slot_time, dtype=np.int64)
    sizes = np.diff(plan.slot_ptr)
    keep = (plan.generated >= plan.warmup) & (plan.generated < plan.drain_start) & (run.latency >= 0) & (sizes > 0)
    if not keep.any():
        return {"arrival_std": float("nan"), "arrival_range": float("nan")}
    rel = (times - np.repeat(plan.generated, sizes)).astype(float)
    starts = plan.slot_ptr[:-1][sizes > 0]       # empty multicasts dropped: the segments stay contiguous
    n = sizes[sizes > 0]
    mean = np.add.reduceat(rel, starts) / n
    var = np.maximum(np.add.reduceat(rel * rel, starts) / n - mean * mean, 0.0)
    spread = np.maximum.reduceat(rel, starts) - np.minimum.reduceat(rel, starts)
    chosen = keep[sizes > 0]
    return {"arrival_std": float(np.sqrt(var[chosen]).mean()), "arrival_range": float(spread[chosen].mean())}


def measure_run(network, algorithm: str, params: dict, seed: int) -> dict:
    """One run's metrics and resolved params (what :func:`topocast.sweep.points.measure_point` gives) and its
    :func:`arrival_spread`."""
    from ..api import run

    result = run(network, algorithm, seed=seed, **params)
    return {**result.metrics, "params": dict(result.params), **arrival_spread(result.trace)}


def run_cell(jobs: list[tuple]) -> list[dict]:
    """The runs of one cell, in order: ``(spec, algorithm, params, seed)`` jobs on one network, built once.

    A cell is every series at one load point and seed: they share the network and the workload's seed
    (module-level, so that worker processes can import it)."""
    from ..spec import build

    networks: dict = {}
    out = []
    for spec, algorithm, params, seed in jobs:
        if spec not in networks:
            networks[spec] = build(spec)
        out.append(measure_run(networks[spec], algorithm, params, seed))
    return out


def _cells(jobs: list[tuple], keys: list[tuple]) -> list[list[int]]:
    """The jobs grouped into cells: every series of one (figure, counts, load, replication); each unicast
    run on its own."""
    cells: dict = {}
    for i, key in enumerate(keys):
        place = (key, i) if key[0] == "unicast" else (key[0], key[1], key[3], key[4])
        cells.setdefault(place, []).append(i)
    return list(cells.values())


def _cost(jobs: list[tuple]) -> float:
    """A rough cost of a cell, for ordering only (costliest first): worm hops offered, about
    nodes x side x load x destinations per run."""
    total = 0.0
    for spec, _, params, _ in jobs:
        side = _side(spec)
        total += side ** 3 * params["load"] * params.get("destinations", 1)
    return total


def measure(quick: bool, progress: Progress, seed: int = 0) -> dict:
    """Compute (section 4, Figures 3-6): run every load point and seed on the wormhole engine, keep plain data.

    ``points[(figure, counts, series, load)]`` is the across-seed summary, ``runs`` every seed's own figures.
    Runs go in cells (every series at one load point and seed, on one network built once).  The quick
    run's cells go one after another in this process (starting worker processes would cost more than they
    save); the full run's go to the sweep executor, costliest first.  Every run has its own seed, so the
    results do not depend on the number of workers or on the order.
    """
    from ..sweep.points import map_ordered

    cycles = QUICK_CYCLES if quick else FULL_CYCLES
    batches = QUICK_BATCHES if quick else FULL_BATCHES
    jobs, keys = _jobs(quick, cycles, batches, seed)
    cells = _cells(jobs, keys)
    work = [[jobs[i] for i in cell] for cell in cells]
    first = sorted(range(len(work)), key=lambda c: -_cost(work[c]))
    done = map_ordered(run_cell, work, workers=1 if quick else 2, progress=progress,
                       description="multicast runs", sizes=[len(c) for c in cells], first=first)
    results: list = [None] * len(jobs)
    for cell, out in zip(cells, done, strict=True):
        for i, r in zip(cell, out, strict=True):
            results[i] = r
    runs: dict = {}
    for k, job, r in zip(keys, jobs, results, strict=True):
        one = _unicast_run(r) if k[0] == "unicast" else _multicast_run(r, k[2])
        runs[k] = dict(one, seed=job[3])
    grouped: dict = {}
    for (fig, counts, key, load, _rep), one in runs.items():
        grouped.setdefault((fig, counts, key, load), []).append(one)
    points = {k: across_seeds(v) for k, v in grouped.items()}
    return {"points": points, "runs": runs, "cycles": cycles, "batches": batches, "quick": quick, "seeds": SEEDS,
            "seed": seed, "uni_loads": UNICAST_LOADS_QUICK if quick else UNICAST_LOADS_FULL}


def view(points: dict, counts: str) -> dict:
    """The multicast points of one count reading, keyed ``(figure, series, load)``."""
    return {(f, k, load): r for (f, c, k, load), r in points.items() if c == counts and f != "unicast"}


# -- tables ------------------------------------------------------------------------------------
def _model_table(points) -> Table:
    """Section 4's model and Theorem 1: our settings echoed (not counted), two start-ups and steps (counted)."""
    table = Table("Model parameters and Theorem 1 (ours | paper)", ["quantity", "value"], [], key="model")
    mc = {k: r for k, r in points.items() if k[0] != "unicast"}
    first = next(iter(mc.values()))
    table.rows.append(["start-up latency (cycles)", Compare(first["startup_cycles"], 33, kind="setting")])
    table.rows.append(["message length (flits)", Compare(first["flits"], 32, kind="setting")])
    for prep, _, keys in PREP_SETS:
        for alg, key in dict(keys, QG="QGE").items():
            m = next(r for (f, c, k, _), r in mc.items() if k == key)
            table.rows.append([f"{alg} preparation time (cycles), set {prep}",
                               Compare(m["prep"], PREP_TIMES[prep][alg.lower()], kind="setting")])
    for routing, *series in ROUTINGS:
        runs = [r for (f, c, k, _), r in mc.items() if k in series]
        # Theorem 1: two start-ups, i.e. two message-passing steps (printed by the paper)
        if routing == "disjoint":
            table.rows.append([f"QG routing={routing}: start-ups per multicast, max over all multicasts (Theorem 1)",
                               Compare(max(r["startups"] for r in runs), 2)])
        else:  # one start-up per step is the reading itself: shown, not counted as a prediction
            table.rows.append([f"QG routing={routing}: start-ups per multicast, max over all multicasts "
                               "(one per step by this reading)", max(r["startups"] for r in runs)])
        table.rows.append([f"QG routing={routing}: message-passing steps, max over all multicasts",
                           Compare(max(r["steps"] for r in runs), 2)])
    table.notes.append("preparation sets: " + "; ".join(f"{name} = {what}" for name, what, _ in PREP_SETS)
                       + " (the paper prints both; DP and QG are the same in both, so their runs are shared)")
    mean = float(np.mean([r["startups_mean"] for (f, c, k, _), r in mc.items() if k in ("QG", "QG40")]))
    table.notes.append(f"QG start-ups: the longest chain of start-ups to a destination; {mean:.3f} on average "
                       "under routing=disjoint (a multicast whose groups all have one destination needs only "
                       "the source's start-up)")
    table.notes.append("routing=ecube: a step's column-path worms (often more than 4) all follow one start-up and "
                       "leave through the 4 injection channels as they free up; charging a start-up per 4 worms "
                       "instead (worms_per_startup=4) gives up to 4 start-ups at nearly the same latency, since a "
                       "start-up (33 cycles) lasts exactly as long as a 32-flit worm holds its injection channel "
                       "(docs/multicast.md)")
    return table


def figure_table(points: dict, fig: int, spec: str, dests: int, counts: str, seeds: int = SEEDS) -> Table:
    """One of Figures 3-6 under one count reading: mean latency ± 95% CI across seeds per load and series."""
    pts = view(points, counts)
    how = next(h for name, h, _ in COUNTS if name == counts)
    loads = sorted(load for (f, k, load) in pts if f == fig and k == SERIES[0][0])
    table = Table(f"Figure {fig}: {spec.split(':')[1]} mesh, {dests} destinations ({counts}: {how}), mean latency "
                  f"(cycles) over {seeds} seeds ± 95% CI across seeds",
                  ["load (flits/node/cycle)"] + [label for _, label, _, _ in SERIES], [], key=f"figure{fig}_{counts}")
    tidy = []
    for load in loads:
        row = [load]
        for key, *_ in SERIES:
            m = pts[(fig, key, load)]
            row.append("sat" if m["saturated"] else f"{m['mean_latency']:.0f} ±{m['ci95']:.0f}")
            tidy.append([load, key, m["mean_latency"], m["ci95"], m["saturated"], m["saturated_seeds"]])
        table.rows.append(row)
    table.tidy = (["load_flits_per_node_cycle", "series", "mean_latency_cycles", "ci95_latency_across_seeds_cycles",
                   "saturated", "saturated_seeds"], tidy)
    return table


def _saturation_table(points: dict) -> Table:
    """Highest unsaturated load of every series, per figure and count reading."""
    table = Table("Highest unsaturated load per series (flits/node/cycle)",
                  ["figure", "destination counts"] + [label for _, label, _, _ in SERIES], [], key="saturation")
    for counts, *_ in COUNTS:
        pts = view(points, counts)
        loads_of = _loads_of(pts)
        for fig in loads_of:
            table.rows.append([fig, counts] + [_last_stable(pts, loads_of, fig, k) for k, *_ in SERIES])
    table.notes.append("a load point is saturated when most of its seeds are (a seed: more than 1% of its "
                       "measured multicasts unfinished at the end, or its latency still growing); 0 = saturated "
                       "at every load")
    return table


#: the series of the arrival-time table: the four algorithms under the 2/4/8/16 set, QG under both routings
ARRIVAL_SERIES = ("DP", "MP", "CP", "QGE", "QG")


def _arrival_table(points: dict) -> Table:
    """QG's stated goal measured: the standard deviation of a multicast's arrival times, per figure and load
    (fixed counts, the 2/4/8/16 set; a saturated point's spread is not a steady-state number: 'sat')."""
    pts = view(points, "fixed")
    labels = {key: label for key, label, *_ in SERIES}
    table = Table("Arrival-time spread per multicast: standard deviation of the cycles at which its destinations "
                  "receive the message (cycles, mean over seeds ± 95% CI across seeds; fixed counts, 2/4/8/16 set)",
                  ["figure", "load (flits/node/cycle)"] + [labels[k] for k in ARRIVAL_SERIES], [],
                  key="arrival_spread")
    tidy = []
    for fig, loads in _loads_of(pts).items():
        for load in loads:
            row: list[Any] = [fig, load]
            for key in ARRIVAL_SERIES:
                m = pts[(fig, key, load)]
                row.append("sat" if m["saturated"] else f"{m['arrival_std']:.1f} ±{m['arrival_std_ci95']:.1f}")
                tidy.append([fig, load, key, m["arrival_std"], m["arrival_std_ci95"], m["arrival_range"],
                             m["saturated"]])
            table.rows.append(row)
    table.tidy = (["figure", "load_flits_per_node_cycle", "series", "arrival_std_mean_cycles",
                   "arrival_std_ci95_across_seeds_cycles", "arrival_range_mean_cycles", "saturated"], tidy)
    table.notes.append("per measured multicast that reached every destination: the population standard deviation "
                       "of its destinations' receipt cycles (the paper's 'variance of the arrival times', as a "
                       "deviation in cycles); the mean over multicasts per seed, then over seeds. The range (last "
                       "minus first receipt) is in the CSV")
    return table


def _unicast_table(points, loads, cycles) -> Table:
    """Engine baseline: e-cube unicast on the 16 x 16 mesh against the closed form and the bisection bound."""
    from ..algorithms.mesh_unicast import closed_form_mean_latency

    table = Table("E-cube unicast on a 16 x 16 mesh (engine baseline)",
                  ["load (flits/node/cycle)", "mean latency (cycles)", "accepted (flits/node/cycle)",
                   "saturated seeds"], [], key="unicast")
    best = 0.0
    for load in loads:
        m = points[("unicast", "fixed", "XY", load)]
        best = max(best, m["accepted"])
        latency = f"{m['mean_latency']:.1f} ±{m['ci95']:.1f}"
        table.rows.append([load, latency, round(m["accepted"], 4), m["saturated_seeds"]])
    zero = closed_form_mean_latency((16, 16))
    table.notes.append(f"zero-load latency closed form 33 + mean distance {zero - 65:.3f} + 32 = {zero:.3f} "
                       "cycles (asserted exactly per worm in tests/test_wormhole_engine.py)")
    table.notes.append(f"saturation throughput {best:.4f} flits/node/cycle = {best / 0.25:.0%} of the "
                       "bisection bound 4/k = 0.25; latency of a saturated load is the mean of what was delivered")
    return table


def tables(ev: dict) -> list[Table]:
    points = ev["points"]
    figures = [figure_table(points, *f, counts, ev["seeds"]) for counts, *_ in COUNTS for f in FIGURES]
    return ([_model_table(points)] + figures + [_saturation_table(points), _arrival_table(points),
                                                 _readings_table(points),
                                                 _unicast_table(points, ev["uni_loads"], ev["cycles"])])


def _window(cycles: int) -> str:
    warmup = cycles // 10
    drain = max(cycles // 10, min(3000, cycles // 4))
    return f"{cycles} cycles per seed (multicasts of the first {warmup} and last {drain} not measured)"


def notes(ev: dict) -> list[str]:
    points = ev["points"]
    text = [
        f"{'quick' if ev['quick'] else 'full'} run: {ev['seeds']} seeds per load point, {_window(ev['cycles'])}, "
        f"{ev['batches']} batches per seed; a cell is the mean of the per-seed mean latencies ± the Student-t 95% "
        "half-width across seeds; every series meets the same workload at a load point and seed; offered "
        "traffic in flits of generated messages per node per cycle; 'sat' marks a saturated point.",
    ]
    if ev["quick"]:
        text.append(f"quick run: 3 load points per figure and {ev['cycles']} cycles per seed (the full run: 10 or "
                    f"11 loads, {FULL_CYCLES} cycles per seed), a smoke test of the whole pipeline; with a drain "
                    "window this short, slow but steady points (CP, 20 destinations) can count as saturated, so "
                    "saturation loads and the verdicts that rest on them are not the full run's (topocast "
                    "reproduce multicast without --quick)")
    text += [_saturation_note(points), _delivery_note(points)]
    return text


def _delivery_note(points: dict) -> str:
    """Verification per load point; a point whose measured window did not drain fails its promise but
    breaks no delivery rule, and is named apart from a real failure."""
    undrained = [k for k, r in points.items() if not r["verified"] and "did not drain" in (r["first_violation"] or "")]
    broken = [(k, r["first_violation"]) for k, r in points.items()
              if not r["verified"] and k not in undrained]
    if broken:
        return f"VERIFICATION FAILED at {broken[:3]}"
    text = "delivery verified (every destination exactly once, no deadlock) in every run"
    if undrained:
        text = ("no delivery rule broken in any run (no second copy, no lost destination, no deadlock); "
                f"{len(undrained)} of {len(points)} load points have a seed that did not drain its measured "
                f"window before the run ended, so their promise of complete delivery fails: {undrained[:4]}")
    return text


# -- claims ------------------------------------------------------------------------------------
def _latency(points, fig, key, load) -> float:
    m = points[(fig, key, load)]
    return math.inf if m["saturated"] else float(m["mean_latency"])


def _fmt(x: float) -> str:
    return "sat" if math.isinf(x) else f"{x:.0f}"


def _loads_of(points) -> dict[int, list[float]]:
    loads_of: dict = {}
    for (fig, _key, load) in points:
        if fig != "unicast":
            loads_of.setdefault(fig, set()).add(load)
    return {f: sorted(v) for f, v in sorted(loads_of.items())}


def _last_stable(points, loads_of, fig, key) -> float:
    stable = [load for load in loads_of[fig] if not points[(fig, key, load)]["saturated"]]
    return max(stable) if stable else 0.0


def _keys(prep: str, qg: str) -> dict[str, str]:
    """The series of one reading: DP, MP and CP under the preparation set ``prep``, QG as series ``qg``."""
    return {**next(keys for name, _, keys in PREP_SETS if name == prep), "QG": qg}


def _row(points, fig, load, keys: dict) -> str:
    """'DP 102, MP 104, CP 248, QG 241' at one load point."""
    return ", ".join(f"{alg} {_fmt(_latency(points, fig, key, load))}" for alg, key in keys.items())


def _low_load_check(points, loads_of, keys: dict) -> tuple[str, bool, str, str]:
    """At the lowest load, in every figure, DP's and MP's latencies are both below CP's and QG's."""
    ok, ev, bad = True, [], []
    for fig, loads in loads_of.items():
        lo = loads[0]
        dp, mp, cp, qg = (_latency(points, fig, keys[k], lo) for k in ("DP", "MP", "CP", "QG"))
        ok &= max(dp, mp) < min(cp, qg)
        ev.append(f"Fig {fig} @ {lo}: {_row(points, fig, lo, keys)}")
        if max(dp, mp) >= min(cp, qg):
            bad.append(ev[-1])
    why = "; ".join(bad) if bad else f"slowest of DP, MP below the faster of CP, QG in all {len(loads_of)} figures"
    return ("At low load DP and MP have lower latency than CP and QG (start-up dominates)", ok, "; ".join(ev), why)


def _sensitivity_check(points, loads_of, keys: dict) -> tuple[str, bool, str, str]:
    """In every figure the highest unsaturated loads of CP and of QG are both above DP's and MP's."""
    ok, ev, bad = True, [], []
    for fig in loads_of:
        s = {k: _last_stable(points, loads_of, fig, key) for k, key in keys.items()}
        ok &= min(s["CP"], s["QG"]) > max(s["DP"], s["MP"])
        ev.append(f"Fig {fig} highest unsaturated load: " + ", ".join(f"{k} {v}" for k, v in s.items()))
        if min(s["CP"], s["QG"]) <= max(s["DP"], s["MP"]):
            bad.append(f"Fig {fig} CP {s['CP']}, QG {s['QG']} against DP {s['DP']}, MP {s['MP']}")
    why = ("highest unsaturated load not above DP's and MP's: " + "; ".join(bad)) if bad else \
        "CP and QG stay unsaturated to higher loads than DP and MP in every figure"
    return ("CP and QG are less sensitive to load than DP and MP (saturate at higher load)", ok, "; ".join(ev), why)


def _high_load_check(points, loads_of, keys: dict) -> tuple[str, bool, str, str]:
    """In every figure, at more than half of the loads where DP or MP is saturated and QG is not, QG's latency
    is the lowest of the four."""
    ok, ev, counts = True, [], []
    for fig, loads in loads_of.items():
        high = [load for load in loads if (points[(fig, keys["DP"], load)]["saturated"]
                                           or points[(fig, keys["MP"], load)]["saturated"])
                and not points[(fig, keys["QG"], load)]["saturated"]]
        wins = [load for load in high if _latency(points, fig, keys["QG"], load)
                < min(_latency(points, fig, keys[k], load) for k in ("DP", "MP", "CP"))]
        ok &= len(wins) * 2 > len(high)
        counts.append(f"Fig {fig} {len(wins)} of {len(high)}")
        ev.append(f"Fig {fig}: QG lowest at {len(wins)} of {len(high)} loads where DP or MP saturates and QG does not"
                  + "".join(f"; {load}: {_row(points, fig, load, keys)}" for load in high))
    return ("At high load (beyond DP/MP saturation) QG has the lowest latency", ok, " | ".join(ev),
            "QG lowest at " + ", ".join(counts) + " loads beyond DP/MP saturation")


def _twenty_check(points, loads_of, keys: dict) -> tuple[str, bool, str, str]:
    """In Figures 4 and 6 (20 destinations), at more than half of the loads above the lowest where not all four
    are saturated, QG's latency is the lowest (ties count for QG)."""
    ok, ev = True, []
    for fig in (4, 6):
        loads = loads_of[fig]
        contested = [load for load in loads[1:] if not all(points[(fig, keys[k], load)]["saturated"] for k in keys)]
        wins = [load for load in contested if _latency(points, fig, keys["QG"], load)
                <= min(_latency(points, fig, keys[k], load) for k in ("DP", "MP", "CP"))]
        ok &= len(wins) * 2 > len(contested)
        ev.append(f"Fig {fig}: QG lowest at {len(wins)} of {len(contested)} loads above the lowest "
                  f"({', '.join(str(load) for load in wins) or 'none'})")
    return ("With 20 destinations QG has the lowest latency (Figs 4 and 6)", ok, "; ".join(ev), "; ".join(ev))


def _mp_check(points, loads_of, keys: dict) -> tuple[str, bool, str, str]:
    """The test of 'MP offers a slight improvement over DP (Figs 3 and 5)', stated plainly: in each of Figures 3
    and 5, MP's mean latency is below DP's at more than half of the loads where at least one of the two is
    unsaturated (a saturated point's latency counts as unbounded)."""
    ok, ev, why = True, [], []
    for fig in (3, 5):
        loads = [load for load in loads_of[fig] if not (points[(fig, keys["DP"], load)]["saturated"]
                                                        and points[(fig, keys["MP"], load)]["saturated"])]
        pairs = [(load, _latency(points, fig, keys["MP"], load), _latency(points, fig, keys["DP"], load))
                 for load in loads]
        below = [load for load, mp, dp in pairs if mp < dp]
        ok &= 2 * len(below) > len(loads)
        why.append(f"Fig {fig}: MP below DP at {len(below)} of {len(loads)} loads")
        ev.append(why[-1] + " (" + ", ".join(f"{load}: MP {_fmt(mp)} vs DP {_fmt(dp)}" for load, mp, dp in pairs)
                  + ")")
    return ("MP offers a slight improvement over DP (Figs 3 and 5): MP's latency is below DP's at most loads",
            ok, "; ".join(ev), "; ".join(why))


def _arrival_check(points, loads_of, keys: dict) -> tuple[str, bool, str, str]:
    """QG's stated goal: in every figure, at more than half of the loads where none of DP, MP, CP, QG is
    saturated, QG's mean standard deviation of arrival times per multicast is the smallest of the four."""
    ok, ev, why = True, [], []
    for fig, loads in loads_of.items():
        calm = [load for load in loads if not any(points[(fig, key, load)]["saturated"] for key in keys.values())]
        std = {load: {k: points[(fig, key, load)]["arrival_std"] for k, key in keys.items()} for load in calm}
        wins = [load for load in calm if std[load]["QG"] < min(v for k, v in std[load].items() if k != "QG")]
        ok &= 2 * len(wins) > len(calm)
        why.append(f"Fig {fig} {len(wins)} of {len(calm)}")
        ev.append(f"Fig {fig}: QG smallest at {len(wins)} of {len(calm)} unsaturated loads"
                  + "".join(f"; {load}: " + ", ".join(f"{k} {v:.1f}" for k, v in std[load].items()) for load in calm))
    return ("QG balances arrival times (its stated goal): the smallest spread of arrival times per multicast",
            ok, " | ".join(ev), "QG's arrival-time standard deviation smallest at " + ", ".join(why) + " loads")


QG_CHECKS = (_low_load_check, _sensitivity_check, _high_load_check, _twenty_check, _arrival_check)


def reading_name(routing: str | None, counts: str, prep: str = "figures") -> str:
    """How a reading is named in the verdicts: 'routing=ecube, prep=text (drawn counts)', or 'prep=figures
    (fixed counts)' for a claim that QG's routing does not enter."""
    return (f"routing={routing}, " if routing else "") + f"prep={prep} ({counts} counts)"


def _qg_claim(per: dict, check, prep40: bool) -> tuple[str, dict]:
    """One QG claim under every routing, preparation set and count reading: (text, {reading: (ok, evidence,
    why)}); with ``prep40`` QG's preparation is 40 cycles."""
    text, readings = "", {}
    for routing, key16, key40 in ROUTINGS:
        for prep, *_ in PREP_SETS:
            for counts, (pts, loads_of) in per.items():
                text, *verdict = check(pts, loads_of, _keys(prep, key40 if prep40 else key16))
                readings[reading_name(routing, counts, prep)] = tuple(verdict)
    return text + (" with QG preparation time 40 cycles" if prep40 else ""), readings


def verdicts(points: dict) -> list[tuple[str, dict[str, tuple[bool, str, str]]]]:
    """Every claim with its verdict, evidence and short reason under every reading, in the report's order.

    QG's statements are checked with preparation 16 and again with 40, under both routings, both preparation
    sets and both count readings; MP against DP under both preparation sets and count readings.
    """
    per = {counts: (view(points, counts), _loads_of(view(points, counts))) for counts, *_ in COUNTS}
    low, sensitive, high, twenty, arrival = QG_CHECKS
    mp: dict = {}
    for prep, *_ in PREP_SETS:
        for counts, (pts, loads_of) in per.items():
            text, *verdict = _mp_check(pts, loads_of, _keys(prep, "QGE"))
            mp[reading_name(None, counts, prep)] = tuple(verdict)
    return ([_qg_claim(per, low, False), _qg_claim(per, sensitive, False), (text, mp)]
            + [_qg_claim(per, check, False) for check in (high, twenty, arrival)]
            + [_qg_claim(per, check, True) for check in (low, sensitive, high, twenty)])


def _default_of(readings: dict) -> str:
    """The default reading's name among ``readings`` (:data:`DEFAULT_READING`, without the routing when the
    claim does not depend on it)."""
    routing, counts, prep = DEFAULT_READING
    name = reading_name(routing, counts, prep)
    return name if name in readings else reading_name(None, counts, prep)


def _claims(points) -> list[Claim]:
    """The paper's claims; ``confirmed`` is the verdict under the default reading (:data:`DEFAULT_READING`),
    the readings carry the verdict under every reading, the evidence the default's numbers and, where they
    differ, those of the other routing and of the other preparation set."""
    claims = []
    for text, readings in verdicts(points):
        default = _default_of(readings)
        ok, evidence, why = readings[default]
        routing, counts, prep = DEFAULT_READING
        others = [reading_name("disjoint", counts, prep), reading_name(routing, counts, "text"),
                  reading_name(None, counts, "text")]
        evidence = f"{default}: {evidence}" + "".join(
            f" | {name}: {readings[name][1]}" for name in others if name in readings and name != default)
        claims.append(Claim(text, ok, evidence, readings={k: v[0] for k, v in readings.items()}, why=why))
    return claims


def _readings_table(points) -> Table:
    """Every claim's verdict and evidence under every reading (long format: one row per claim and reading)."""
    return readings_table(
        "The paper's claims under every reading",
        [(text, {k: v[:2] for k, v in readings.items()}) for text, readings in verdicts(points)],
        "reading: QG's routing (ecube = the base routing the paper states, column-path worms, one start-up per "
        "step; disjoint = Theorem 1's two disjoint dual-path worms per step), the preparation set (figures = "
        "DP/MP/CP/QG 2/4/8/16, text = 2/2/4/16) and the destination counts (fixed = the stated average for every "
        "multicast; drawn = uniform on d/2 .. 3d/2); the claims' own verdict is the one under "
        f"{reading_name(*DEFAULT_READING)}")


def _saturation_note(points) -> str:
    """Where QG parts from the paper: how far each series stays unsaturated, per figure (fixed counts)."""
    pts = view(points, "fixed")
    loads_of = _loads_of(pts)
    keys = ("DP", "MP", "CP", "QGE", "QG", "MPt", "CPt")
    per_fig = "; ".join(f"Fig {fig}: " + ", ".join(f"{k} {_last_stable(pts, loads_of, fig, k)}" for k in keys)
                        for fig in loads_of)
    return ("highest unsaturated load per series, fixed counts (QGE = routing=ecube, QG = routing=disjoint, MPt and "
            "CPt = the 2/2/4/16 preparation set): " + per_fig + ". Theorem 1's disjoint paths are dual-path worms "
            "on the Hamiltonian high/low subnetworks, the channels DP and MP use, and saturate close to where they "
            "do; the e-cube reading's short column-path worms carry QG to higher loads, with the same two "
            "start-ups (docs/multicast.md)")


# -- write -------------------------------------------------------------------------------------
SERIES_HEADER = ["figure", "mesh", "destinations_mean", "destinations_min", "destinations_max", "counts", "series",
                 "algorithm", "routing", "prep_cycles", "load_flits_per_node_cycle", "seeds", "seeds_measured",
                 "mean_latency_cycles", "ci95_latency_across_seeds_cycles", "saturated", "saturated_seeds",
                 "startups_max", "startups_mean", "message_passing_steps", "accepted_flits_per_node_cycle",
                 "arrival_std_mean_cycles", "arrival_range_mean_cycles", "verified"]
RUNS_HEADER = ["figure", "mesh", "destinations_mean", "counts", "series", "load_flits_per_node_cycle",
               "replication", "seed", "mean_latency_cycles", "ci95_latency_batch_means_cycles", "saturated",
               "measured_multicasts", "accepted_flits_per_node_cycle", "arrival_std_cycles", "arrival_range_cycles",
               "verified"]


def _describe(key: str, counts: str, dests: int) -> tuple:
    _, _, alg, extra = next(s for s in SERIES if s[0] == key)
    spread = next(f for name, _, f in COUNTS if name == counts)(dests)
    return alg, extra.get("routing", ""), dests - spread, dests + spread


def write_files(ev: dict, out: Path) -> tuple[list[Path], list[Path]]:
    """The series of Figures 3-6 as CSV (one row per load point, one per seed) and one plot per figure:
    ``(figures, data files)``."""
    points, runs = ev["points"], ev["runs"]
    rows, seed_rows = [], []
    for fig, spec, dests in FIGURES:
        for counts, *_ in COUNTS:
            pts = view(points, counts)
            loads = sorted(load for (f, k, load) in pts if f == fig and k == SERIES[0][0])
            for load in loads:
                for key, *_ in SERIES:
                    m = pts[(fig, key, load)]
                    alg, routing, lo, hi = _describe(key, counts, dests)
                    rows.append([fig, spec, dests, lo, hi, counts, key, alg, routing, m["prep"], load, m["seeds"],
                                 m["seeds_measured"], m["mean_latency"], m["ci95"], m["saturated"],
                                 m["saturated_seeds"], m["startups"], m["startups_mean"], m["steps"], m["accepted"],
                                 m["arrival_std"], m["arrival_range"], m["verified"]])
    for (fig, counts, key, load, rep), r in runs.items():
        spec, dests = ("mesh:16x16", 1) if fig == "unicast" else next((s, d) for f, s, d in FIGURES if f == fig)
        seed_rows.append([fig, spec, dests, counts, key, load, rep, r["seed"], r["mean_latency"], r["ci95"],
                          r["saturated"], r["measured"], r["accepted"], r.get("arrival_std"), r.get("arrival_range"),
                          r["verified"]])
    files = [write_csv(out / "multicast_series.csv", SERIES_HEADER, rows),
             write_csv(out / "multicast_runs.csv", RUNS_HEADER, seed_rows)]
    return [_plot(fig, spec, dests, points, ev, out) for fig, spec, dests in FIGURES], files


def _plot(fig: int, spec: str, dests: int, points, ev: dict, out: Path) -> Path:
    """Figure ``fig``: one panel per count reading, mean latency with 95% error bars across seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(COUNTS), figsize=(11, 4.4), sharex=True, sharey=True)
    styles = {"DP": "o-", "MP": "s-", "CP": "^-", "QG": "D-", "QGE": "v-", "QG40": "D--", "QG40E": "v--",
              "MPt": "s:", "CPt": "^:"}
    top = 0.0
    for counts, *_ in COUNTS:
        pts = view(points, counts)
        for key, *_ in SERIES:
            for load in {load for (f, k, load) in pts if f == fig and k == key}:
                m = pts[(fig, key, load)]
                if not m["saturated"]:
                    top = max(top, m["mean_latency"] + (m["ci95"] if math.isfinite(m["ci95"]) else 0))
    top = top * 1.1 if top else 1.0
    for ax, (counts, how, _) in zip(axes, COUNTS, strict=True):
        pts = view(points, counts)
        sat_marks = []
        for key, label, _, _ in SERIES:
            loads = sorted(load for (f, k, load) in pts if f == fig and k == key)
            xs = [load for load in loads if not pts[(fig, key, load)]["saturated"]]
            ys = [pts[(fig, key, load)]["mean_latency"] for load in xs]
            err = [pts[(fig, key, load)]["ci95"] for load in xs]
            err = [e if math.isfinite(e) else 0.0 for e in err]
            line = ax.errorbar(xs, ys, yerr=err, fmt=styles[key], label=label, markersize=4, capsize=2,
                               linewidth=1)
            sat = [load for load in loads if pts[(fig, key, load)]["saturated"]]
            if sat:
                sat_marks.append((sat[0], line.lines[0].get_color()))
        for i, (x, color) in enumerate(sat_marks):
            # series that saturate at the same load would hide each other's mark: stack them downwards
            ax.plot([x], [top * (1 - 0.035 * i)], "x", color=color, markersize=8, clip_on=False)
        ax.set_ylim(0, top * 1.02)
        ax.set_xlabel("offered traffic (flits/node/cycle)")
        ax.set_title(f"destination counts {counts}: {how}", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("mean multicast latency (cycles)")
    axes[0].legend(fontsize=7)
    figure.suptitle(f"Fig. {fig}: {spec.split(':')[1]} mesh, {dests} destinations"
                    + (" (quick)" if ev["quick"] else "") + f"; {ev['seeds']} seeds, 95% CI across seeds; "
                    "x near the top: first saturated load of that series\n(ours only: the paper's figure draws "
                    "curves without printed values)", fontsize=9)
    return save_figure(figure, out / f"multicast_fig{fig}.png")


def run(quick: bool = False, out: Path | None = None, progress: Progress | None = None, seed: int = 0) -> Report:
    """Section 4: Figures 3-6 as tables, Theorem 1 and the model, the paper's claims; plots with ``out``."""
    ev = measure(quick, progress or Progress(enabled=False), seed)
    report = Report("multicast", "Path-based multicast on wormhole meshes (Figures 3-6)", tables(ev),
                    _claims(ev["points"]), notes=notes(ev))
    if ev["quick"]:
        loads = sorted({len(v) for v in QUICK_LOADS.values()})
        report.highlights.append(f"Quick run ({', '.join(map(str, loads))} loads per figure, {ev['cycles']} cycles "
                                 "per seed): saturation loads and the verdicts resting on them are not the full "
                                 "run's (topocast reproduce multicast, without --quick).")
    if out is not None:
        figures, files = write_files(ev, Path(out))
        report.figures += figures
        report.files += files
        report.views += link_views(Path(out), ev["cycles"], seed)
    return report


#: the per-link pages of the report: Figure 3's network and destinations, at a load below saturation
VIEW_FIGURE, VIEW_LOAD = 3, 0.008
VIEW_SERIES = ("DP", "CP", "QGE")


def link_views(out: Path, cycles: int, seed: int = 0) -> list[View]:
    """Per-link view pages of DP, CP and QG (e-cube) on Figure 3's mesh at one load below saturation, with
    how evenly each spreads its flits over the links (the load balance QG is designed for)."""
    from ..view import from_algorithm, write

    _, spec, dests = next(f for f in FIGURES if f[0] == VIEW_FIGURE)
    series = {key: (label, alg, extra) for key, label, alg, extra in SERIES}
    found = []
    for key in VIEW_SERIES:
        label, alg, extra = series[key]
        run = from_algorithm(spec, alg, engine="wormhole", seed=run_seed(seed, VIEW_FIGURE, 0), load=VIEW_LOAD,
                             destinations=dests, cycles=cycles, **extra)
        found.append((key, label, run, write(run, out / f"multicast_view_{key}.html")))
    balance = "; ".join(f"{label} {r.result.metrics['link_imbalance']:.2f} over {r.result.metrics['links_used']} "
                        f"links (busiest {r.result.metrics['link_bytes_max']:.0f} flits)" for _, label, r, _ in found)
    return [View(path, f"{label} on {spec}, {dests} destinations, load {VIEW_LOAD:g} flits/node/cycle, "
                       f"{cycles} cycles: mean latency {run.result.metrics['mean_latency']:.1f} cycles.  Link load "
                       f"max/mean (flits), of the three: {balance}.  Move the slider to see where each one's worms "
                       "cross the mesh")
            for key, label, run, path in found]


register_experiment(Experiment("multicast", run, __doc__.split("\n\n")[0], paper=PAPER, weight=10.6))
