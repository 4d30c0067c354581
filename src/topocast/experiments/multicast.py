"""``topocast reproduce multicast``: Figures 3-6 of Al-Dubai et al. (2003) and their claims.

Mean multicast latency against offered traffic for dual-path (DP),
multi-path (MP), column-path (CP) and Qualified Groups (QG) on 10 x 10 and
16 x 16 meshes with 10 and 20 destinations, 32-flit messages, 33-cycle
start-up, preparation 2/4/8/16 cycles.  Two more series: QG with 40-cycle
preparation (the paper's robustness remark) and QG with Hamiltonian
(dual-path) worms instead of e-cube worms.  The paper prints its results as
plots only, so the compared cells are its model parameters and Theorem 1;
its qualitative statements are checked as claims.  Also the engine's
e-cube unicast baseline: zero-load latency against the closed form and the
16 x 16 saturation throughput against the bisection bound.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..fileio import save_figure, write_csv
from ..progress import Progress
from ..registry import Experiment, register_experiment
from ..report import Claim, Compare, Report, Table
from ..sim.wormhole.workload import point_seed, run_points

PAPER = "Al-Dubai, Ould-Khaoua, El-Zayyat, Mackenzie: On balancing traffic load in path-based multicast communication"

FIGURES = (  # (figure, mesh, destinations)
    (3, "mesh:10x10", 10),
    (4, "mesh:10x10", 20),
    (5, "mesh:16x16", 10),
    (6, "mesh:16x16", 20),
)

SERIES = (  # (key, label, algorithm, extra params)
    ("DP", "DP", "multicast-dp", {}),
    ("MP", "MP", "multicast-mp", {}),
    ("CP", "CP", "multicast-cp", {}),
    ("QG", "QG", "multicast-qg", {}),
    ("QG40", "QG (prep 40)", "multicast-qg", {"prep": 40}),
    ("QGH", "QG (Hamiltonian worms)", "multicast-qg", {"routing": "hamiltonian"}),
)

FULL_LOADS = {
    (10, 10): (0.001, 0.002, 0.004, 0.006, 0.008, 0.01, 0.012, 0.016, 0.02, 0.025, 0.03),
    (10, 20): (0.001, 0.002, 0.003, 0.004, 0.006, 0.008, 0.01, 0.012, 0.016, 0.02),
    (16, 10): (0.001, 0.002, 0.003, 0.004, 0.006, 0.008, 0.01, 0.012, 0.016, 0.02),
    (16, 20): (0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.012),
}
QUICK_LOADS = {
    (10, 10): (0.001, 0.008, 0.016, 0.025),
    (10, 20): (0.001, 0.004, 0.008, 0.012),
    (16, 10): (0.001, 0.004, 0.008, 0.012),
    (16, 20): (0.001, 0.003, 0.005, 0.008),
}
QUICK_CYCLES, FULL_CYCLES = 15000, 60000
UNICAST_LOADS_FULL = (0.06, 0.08, 0.1, 0.11, 0.12, 0.13, 0.14, 0.16, 0.2)
UNICAST_LOADS_QUICK = (0.08, 0.11, 0.14, 0.2)


def _side(spec: str) -> int:
    return int(spec.split(":")[1].split("x")[0])


def run(quick: bool = False, out: Path | None = None, progress: Progress | None = None, seed: int = 0) -> Report:
    progress = progress or Progress(enabled=False)
    cycles = QUICK_CYCLES if quick else FULL_CYCLES
    batches = 6 if quick else 12
    jobs, keys = [], []
    index = 0
    for fig, spec, dests in FIGURES:
        loads = (QUICK_LOADS if quick else FULL_LOADS)[(_side(spec), dests)]
        for key, _, alg, extra in SERIES:
            for load in loads:
                params = dict(extra, destinations=dests, load=load, cycles=cycles, batches=batches)
                jobs.append((spec, alg, params, point_seed(seed, index)))
                keys.append((fig, key, load))
                index += 1
    uni_loads = UNICAST_LOADS_QUICK if quick else UNICAST_LOADS_FULL
    for load in uni_loads:
        jobs.append(("mesh:16x16", "unicast-ecube", dict(load=load, cycles=cycles, batches=batches),
                     point_seed(seed, index)))
        keys.append(("unicast", "XY", load))
        index += 1
    results = run_points(jobs, workers=2, progress=progress, description="multicast load points")
    points = {k: r for k, r in zip(keys, results)}

    report = Report("multicast", "Path-based multicast on wormhole meshes (Figures 3-6)")
    report.notes.append(
        f"{'quick' if quick else 'full'} run: {cycles} cycles per load point, multicasts generated in the "
        f"warm-up (first 10%) and the drain window (last max(10%, min(3000, 25%))) not measured, {batches} "
        "batches; offered traffic in flits of generated messages per node per cycle; 'sat' marks a saturated "
        "point (not a steady-state number).")
    report.tables.append(_model_table(points))
    series_rows = []
    for fig, spec, dests in FIGURES:
        loads = (QUICK_LOADS if quick else FULL_LOADS)[(_side(spec), dests)]
        table = Table(f"Figure {fig}: {spec.split(':')[1]} mesh, {dests} destinations, mean latency (cycles)",
                      ["load"] + [label for _, label, _, _ in SERIES], [])
        for load in loads:
            row = [load]
            for key, *_ in SERIES:
                m = points[(fig, key, load)]
                row.append("sat" if m["saturated"] else f"{m['mean_latency']:.0f} ±{m['ci95']:.0f}")
                series_rows.append([fig, spec, dests, key, load, m["mean_latency"], m["ci95"], m["saturated"],
                                    m["startups"], m["startups_mean"], m["steps"], m["accepted"],
                                    m["verified"]])
            table.rows.append(row)
        report.tables.append(table)
    report.tables.append(_unicast_table(points, uni_loads, cycles))
    report.claims.extend(_claims(points, quick))
    bad = [(k, r["first_violation"]) for k, r in points.items() if not r["verified"]]
    report.notes.append("delivery verified (every destination exactly once, no deadlock) at every load point"
                        if not bad else f"VERIFICATION FAILED at {bad[:3]}")
    if out is not None:
        out = Path(out)
        header = ["figure", "mesh", "destinations", "algorithm", "load", "mean_latency", "ci95", "saturated",
                  "startups_max", "startups_mean", "steps", "accepted", "verified"]
        report.figures.append(write_csv(out / "multicast_series.csv", header, series_rows))
        for fig, spec, dests in FIGURES:
            report.figures.append(_plot(fig, spec, dests, points, quick, out))
    return report


def _model_table(points) -> Table:
    table = Table("Model parameters and Theorem 1 (ours | paper)", ["quantity", "value"], [])
    first = next(iter(points.values()))
    table.rows.append(["start-up latency (cycles)", Compare(first["startup_cycles"], 33)])
    table.rows.append(["message length (flits)", Compare(first["flits"], 32)])
    for key, paper in (("DP", 2), ("MP", 4), ("CP", 8), ("QG", 16)):
        m = next(r for (f, k, _), r in points.items() if k == key)
        table.rows.append([f"{key} preparation time (cycles)", Compare(m["prep"], paper)])
    qg = [r for (f, k, _), r in points.items() if k == "QG"]
    qgh = [r for (f, k, _), r in points.items() if k == "QGH"]
    table.rows.append(["QG message-passing steps, max over all multicasts",
                       Compare(max(r["steps"] for r in qg), 2)])
    table.rows.append(["QG start-ups, Hamiltonian worms, max", Compare(max(r["startups"] for r in qgh), 2)])
    table.rows.append(["QG start-ups, e-cube worms (4 worms per start-up), max",
                       Compare(max(r["startups"] for r in qg), 2)])
    mean = float(np.mean([r["startups_mean"] for r in qg]))
    table.notes.append(f"with e-cube worms a QG multicast needs {mean:.2f} start-ups on average: a phase "
                       "with more than 4 worms pays a second start-up in our cost model; Theorem 1's "
                       "'two start-ups' holds as two message-passing steps")
    return table


def _unicast_table(points, loads, cycles) -> Table:
    from ..algorithms.mesh_unicast import zero_load_latency

    table = Table("E-cube unicast on a 16 x 16 mesh (engine baseline)",
                  ["load", "mean latency", "accepted (flits/node/cycle)", "saturated"], [])
    best = 0.0
    for load in loads:
        m = points[("unicast", "XY", load)]
        best = max(best, m["accepted"])
        table.rows.append([load, round(m["mean_latency"], 1), round(m["accepted"], 4), m["saturated"]])
    zero = zero_load_latency((16, 16))
    table.notes.append(f"zero-load latency closed form 33 + mean distance {zero - 65:.3f} + 32 = {zero:.3f} "
                       "cycles (asserted exactly per worm in tests/test_wormhole_engine.py)")
    table.notes.append(f"saturation throughput {best:.4f} flits/node/cycle = {best / 0.25:.0%} of the "
                       "bisection bound 4/k = 0.25")
    return table


def _latency(points, fig, key, load) -> float:
    m = points[(fig, key, load)]
    return math.inf if m["saturated"] else float(m["mean_latency"])


def _fmt(x: float) -> str:
    return "sat" if math.isinf(x) else f"{x:.0f}"


def _claims(points, quick: bool) -> list[Claim]:
    loads_of = {}
    for (fig, key, load) in points:
        if fig != "unicast":
            loads_of.setdefault(fig, set()).add(load)
    loads_of = {f: sorted(v) for f, v in loads_of.items()}
    claims = []

    # 1. low load: DP and MP beat CP and QG
    ok, ev = True, []
    for fig, loads in loads_of.items():
        lo = loads[0]
        dp, mp, cp, qg = (_latency(points, fig, k, lo) for k in ("DP", "MP", "CP", "QG"))
        ok &= max(dp, mp) < min(cp, qg)
        ev.append(f"Fig {fig} @ {lo}: DP {_fmt(dp)}, MP {_fmt(mp)}, CP {_fmt(cp)}, QG {_fmt(qg)}")
    claims.append(Claim("At low load DP and MP have lower latency than CP and QG (start-up dominates)", ok,
                        "; ".join(ev)))

    # 2. CP and QG less sensitive to load: they stay unsaturated to higher loads
    def last_stable(fig, key):
        stable = [l for l in loads_of[fig] if not points[(fig, key, l)]["saturated"]]
        return max(stable) if stable else 0.0

    ok, ev = True, []
    for fig in loads_of:
        s = {k: last_stable(fig, k) for k in ("DP", "MP", "CP", "QG")}
        ok &= min(s["CP"], s["QG"]) > max(s["DP"], s["MP"])
        ev.append(f"Fig {fig} highest unsaturated load: " + ", ".join(f"{k} {v}" for k, v in s.items()))
    claims.append(Claim("CP and QG are less sensitive to load than DP and MP (saturate at higher load)", ok,
                        "; ".join(ev)))

    # 3. MP slightly better than DP in Figs 3 and 5
    ok, ev = True, []
    for fig in (3, 5):
        common = [l for l in loads_of[fig] if not (points[(fig, "DP", l)]["saturated"]
                                                   or points[(fig, "MP", l)]["saturated"])]
        better = sum(_latency(points, fig, "MP", l) <= _latency(points, fig, "DP", l) for l in common)
        ok &= better * 2 > len(common) or last_stable(fig, "MP") > last_stable(fig, "DP")
        ev.append(f"Fig {fig}: MP <= DP at {better} of {len(common)} loads where both are unsaturated; "
                  f"last unsaturated load DP {last_stable(fig, 'DP')}, MP {last_stable(fig, 'MP')}")
    claims.append(Claim("MP offers a slight improvement over DP (Figs 3 and 5)", ok, "; ".join(ev)))

    # 4/5. QG lowest at high load and with 20 destinations, with prep 16 and 40
    for qg_key, suffix in (("QG", ""), ("QG40", " with QG preparation time 40 cycles")):
        ok_high, ev_high = True, []
        for fig, loads in loads_of.items():
            high = [l for l in loads if (points[(fig, "DP", l)]["saturated"] or points[(fig, "MP", l)]["saturated"])
                    and not points[(fig, qg_key, l)]["saturated"]]
            if not high:
                ok_high = False
                ev_high.append(f"Fig {fig}: no load where DP or MP saturates and {qg_key} does not")
                continue
            wins = [l for l in high if _latency(points, fig, qg_key, l)
                    < min(_latency(points, fig, k, l) for k in ("DP", "MP", "CP"))]
            ok_high &= len(wins) * 2 > len(high)
            ev_high.append(f"Fig {fig}: {qg_key} lowest at {len(wins)} of {len(high)} high loads "
                           + ", ".join(f"{l}: {qg_key} {_fmt(_latency(points, fig, qg_key, l))} vs CP "
                                       f"{_fmt(_latency(points, fig, 'CP', l))}" for l in high))
        claims.append(Claim("At high load (beyond DP/MP saturation) QG has the lowest latency" + suffix,
                            ok_high, "; ".join(ev_high)))
        ok20, ev20 = True, []
        for fig in (4, 6):
            loads = loads_of[fig]
            contested = [l for l in loads[1:] if not all(points[(fig, k, l)]["saturated"]
                                                         for k in ("DP", "MP", "CP", qg_key))]
            wins = [l for l in contested if _latency(points, fig, qg_key, l)
                    <= min(_latency(points, fig, k, l) for k in ("DP", "MP", "CP"))]
            ok20 &= len(wins) * 2 > len(contested)
            ev20.append(f"Fig {fig}: {qg_key} lowest at {len(wins)} of {len(contested)} loads above the lowest "
                        f"({', '.join(str(l) for l in wins) or 'none'})")
        claims.append(Claim("With 20 destinations QG has the lowest latency (Figs 4 and 6)" + suffix, ok20,
                            "; ".join(ev20)))
    return claims


def _plot(fig: int, spec: str, dests: int, points, quick: bool, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, ax = plt.subplots(figsize=(6.4, 4.4))
    styles = {"DP": "o-", "MP": "s-", "CP": "^-", "QG": "D-", "QG40": "D--", "QGH": "v:"}
    top = 0.0
    sat_marks = []
    for key, label, _, _ in SERIES:
        loads = sorted(l for (f, k, l) in points if f == fig and k == key)
        xs = [l for l in loads if not points[(fig, key, l)]["saturated"]]
        ys = [points[(fig, key, l)]["mean_latency"] for l in xs]
        if ys:
            top = max(top, max(ys))
        line, = ax.plot(xs, ys, styles[key], label=label, markersize=4)
        sat = [l for l in loads if points[(fig, key, l)]["saturated"]]
        if sat:
            sat_marks.append((sat[0], line.get_color()))
    top = top * 1.1 if top else 1.0
    for i, (x, color) in enumerate(sat_marks):
        # series that saturate at the same load would hide each other's mark: stack them downwards
        ax.plot([x], [top * (1 - 0.035 * i)], "x", color=color, markersize=8, clip_on=False)
    ax.set_ylim(0, top * 1.02)
    ax.set_xlabel("offered traffic (flits/node/cycle)")
    ax.set_ylabel("mean multicast latency (cycles)")
    ax.set_title(f"Fig. {fig}: {spec.split(':')[1]} mesh, {dests} destinations"
                 + (" (quick)" if quick else "") + "\nx near the top: first saturated load of that series")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(figure, out / f"multicast_fig{fig}.png")


register_experiment(Experiment("multicast", run, __doc__.split("\n\n")[0], paper=PAPER))
