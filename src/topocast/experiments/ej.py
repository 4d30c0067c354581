"""``topocast reproduce ej``: Hussain (2018), Tables 1-3, the worked example of section 5, Figures 15-22.

Where each number comes from (also printed in the report notes):

* Tables 1 and 2, the worked example, Figures 15-18 and the all-to-all
  table: the shared step engine running the Schedules the algorithms write
  (verified exactly-once, all-port, half-duplex).
* Table 3 and Figure 22: the frontier engine (the same per-step rule over
  bitmaps, a bit per node, exactly-once checked) for n <= 4 in ``--quick``
  and n <= 6 in the full run; in ``--quick`` n = 5 and 6 come from
  :func:`~topocast.algorithms.ej_broadcast.product_counts` (convolution of
  the 1-D sector tree, held equal to the frontier run by tests) and say so.
* Figures 19-21: frontier runs, except in ``--quick`` EJ_{2+3rho}^(6) and
  EJ_{1+2rho}^(12), and in the full run EJ_{1+2rho}^(12), whose frontier run
  needs 3.5 GB of bitmaps (over :data:`FULL_RUN_BITMAPS`): these use the
  product counts.  ``benchmarks/ej_broadcast.py`` runs EJ_{1+2rho}^(12) on
  the frontier engine (about 12 s per algorithm) and checks that its
  per-step counts equal the product counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..algorithms.ej_all_to_all import literal_coverage
from ..algorithms.ej_broadcast import PAPER, broadcast_plan, product_counts
from ..api import run
from ..infra.fileio import save_figure, write_csv
from ..infra.progress import SILENT, Progress
from ..outputs.report import Claim, Compare, Report, Table
from ..plans.frontier_rule import state_bytes
from ..registry import Experiment, register_experiment
from ..spec import build
from ..topology.eisenstein_jacobi import distance_distribution_formula, ej_ring
from .traces import simulate_broadcast

# Table 1 (iterative, EJ_{3+4rho}^(3)): free, sending, receiving, active per (round, step)
PAPER_TABLE1 = [
    (1, 1, 50646, 1, 6, 7), (1, 2, 50635, 6, 12, 18), (1, 3, 50623, 12, 18, 30),
    (2, 1, 50394, 37, 222, 259), (2, 2, 49987, 222, 444, 666), (2, 3, 49543, 444, 666, 1110),
    (3, 1, 41070, 1369, 8214, 9583), (3, 2, 26011, 8214, 16428, 24642), (3, 3, 9583, 16428, 24642, 41070),
]
PAPER_TABLE1_TOTAL = (26733, 50652)
#: what Table 1's total row prints in its step column (its own rows list 3 rounds of 3 steps)
PAPER_TABLE1_TOTAL_STEPS = 12
# Table 2 (improved, EJ_{3+4rho}^(3)): free, sending, receiving, active per step
PAPER_TABLE2 = [
    (1, 50634, 1, 18, 19), (2, 50491, 18, 144, 162), (3, 49807, 144, 702, 846), (4, 47593, 684, 2376, 3060),
    (5, 42661, 2160, 5832, 7992), (6, 35425, 4752, 10476, 15228), (7, 29809, 7236, 13608, 20844),
    (8, 31861, 7128, 11664, 18792), (9, 40933, 3888, 5832, 9720),
]
PAPER_TABLE2_TOTAL = (26011, 50652)
# Table 3: total senders in EJ_{3+4rho}^(n), n = 1..6
PAPER_TABLE3 = {
    1: (19, 19, 0, 1.0), 2: (722, 703, 19, 1.027027027), 3: (26733, 26011, 722, 1.027757487),
    4: (989140, 962407, 26733, 1.027777229), 5: (36598199, 35609059, 989140, 1.027777763),
    6: (1354133382, 1317535183, 36598199, 1.027777777),
}
# Section 5 worked example, improved on EJ_{2+3rho}^(2)
PAPER_EXAMPLE = {"receivers": [12, 60, 144, 144], "senders": [1, 12, 48, 72]}
# Figures 19-21: networks that all take 12 steps
TWELVE_STEP_NETWORKS = [(1, 2, 12), (2, 3, 6), (3, 4, 4), (4, 5, 3), (6, 7, 2)]
ALL_TO_ALL_CASES = ["ej:a=1,b=1,n=1", "ej:a=2,b=3,n=1", "ej:a=3,b=4,n=1", "ej:a=2,b=2,n=1", "ej:a=0,b=3,n=1",
                    "ej:a=1,b=2,n=2", "ej:a=2,b=3,n=2", "ej:a=1,b=3,n=2", "ej:a=2,b=2,n=2"]
ALGS = ("iterative", "improved")
#: most bitmap memory a frontier run of the full reproduction may take (bytes); larger networks use the
#: product counts, so that the whole ``reproduce all`` stays under 3 GB
FULL_RUN_BITMAPS = 2.5e9
# networks of the synthesised-broadcast table (several alphas and dimensions)
SYNTH_CASES = ["ej:a=2,b=3,n=2", "ej:a=3,b=4,n=2", "ej:a=1,b=2,n=3", "ej:a=2,b=2,n=2", "ej:a=0,b=3,n=2",
               "ej:a=1,b=5,n=1", "ej:a=6,b=7,n=1"]


@dataclass
class Evidence:
    """Plain data behind every table, claim and figure of the EJ reproduction."""

    tables12: dict = field(default_factory=dict)      # alg -> {"per_step", "verified", "exactly_once"}
    example: dict = field(default_factory=dict)       # same keys, improved on EJ_{2+3rho}^(2)
    table3: list[dict] = field(default_factory=list)  # per n: totals, how obtained
    figure22: dict = field(default_factory=dict)      # alg -> n -> senders per step
    checked_all: bool = True                          # no frontier run of Table 3 failed exactly-once
    averages: dict = field(default_factory=dict)      # alg -> key -> average per step (Figures 19-21)
    average_methods: list[str] = field(default_factory=list)
    all_to_all: list[dict] = field(default_factory=list)
    formulas: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    synthesis: list[dict] = field(default_factory=list)  # per network: both algorithms, synthesised, bound


# -- compute -----------------------------------------------------------------------------------
def _step_run(topology, algorithm: str) -> dict:
    result = run(topology, algorithm)
    return {"per_step": dict(result.per_step or {}), "verified": result.verified,
            "exactly_once": result.metrics["exactly_once"]}


def _counts(a: int, b: int, n: int, alg: str, simulate: bool,
            progress: Progress) -> tuple[dict[str, Any], str, bool | None]:
    """Per-step counts, how they were obtained, and whether delivery was checked exactly-once."""
    if simulate:
        res = simulate_broadcast(a, b, n, alg, progress=progress)
        counts = {"senders": res.senders, "receivers": res.receivers, "active": res.active, "free": res.free}
        return counts, "frontier run", res.exactly_once
    return product_counts(a, b, n, alg), "product counts", None


def measure_table3(ev: Evidence, quick: bool, progress: Progress) -> None:
    """Section 6, Table 3 and Figure 22: total senders of both algorithms on EJ_{3+4rho}^(n), n = 1..6."""
    for n in progress.track(range(1, 7), "Table 3"):
        simulate = n <= 4 or not quick
        totals, checks = {}, []
        for alg in ALGS:
            counts, method, once = _counts(3, 4, n, alg, simulate, progress)
            totals[alg] = int(np.sum(counts["senders"]))
            ev.figure22.setdefault(alg, {})[n] = counts["senders"].tolist()
            checks.append(once)
            ev.checked_all &= once is not False
        # both algorithms are obtained the same way for a given n
        how = method if checks[0] is None else method + (
            ", both exactly once" if all(checks) else ", NOT exactly once: " + ", ".join(
                alg for alg, once in zip(ALGS, checks, strict=False) if not once))
        ev.table3.append({"n": n, "iterative": totals["iterative"], "improved": totals["improved"], "how": how})


def measure_averages(ev: Evidence, quick: bool, progress: Progress) -> None:
    """Section 6, Figures 19-21: per-step averages over five networks that all take 12 steps."""
    ev.averages = {alg: {k: np.zeros(12) for k in ("senders", "receivers", "active")} for alg in ALGS}
    for a, b, n in progress.track(TWELVE_STEP_NETWORKS, "Figures 19-21"):
        nodes = (a ** 2 + a * b + b * b) ** n
        bitmaps = state_bytes(broadcast_plan(ej_ring(a, b), n, "improved"))
        simulate = nodes < 10 ** 7 if quick else bitmaps <= FULL_RUN_BITMAPS
        for alg in ALGS:
            counts, method, _ = _counts(a, b, n, alg, simulate, progress)
            for key in ev.averages[alg]:
                ev.averages[alg][key] += np.asarray(counts[key], dtype=float) / len(TWELVE_STEP_NETWORKS)
        if not quick and not simulate:
            method += f" (a frontier run needs {bitmaps / 1e9:.1f} GB of bitmaps; benchmarks/ej_broadcast.py runs it)"
        ev.average_methods.append(f"EJ_{{{a}+{b}rho}}^({n}): {method}")


def measure_all_to_all(ev: Evidence, quick: bool, progress: Progress) -> None:
    """Section 4, Algorithms 3-4: the three-phase all-to-all, every message simulated on the step engine."""
    cases = ALL_TO_ALL_CASES if quick else ALL_TO_ALL_CASES + ["ej:a=3,b=4,n=2"]
    for spec in progress.track(cases, "all-to-all"):
        r = run(spec, "all-to-all-three-phase")
        m = r.metrics
        ev.all_to_all.append({
            "spec": spec, "steps": r.per_step and len(r.per_step["senders"]), "messages": m["messages"],
            "delivered": "yes" if r.verified and m["exactly_once"] else f"NO: {r.first_violation}",
            "max_link_messages": m["max_link_messages"],
            "link_load": " ".join(map(str, (r.per_step or {})["max_link_messages"]))})


def measure_formulas() -> dict:
    """Sections 2 and 4: formula (3) against BFS, and what Algorithm 3 taken literally reaches."""
    ring = ej_ring(3, 4)
    bad = [(a, b) for b in range(1, 21) for a in range(b + 1) if a * a + a * b + b * b >= 2
           and not np.array_equal(distance_distribution_formula(a, b), ej_ring(a, b).depth_histogram())]
    return {"norm": ring.norm, "diameter": int(ring.diameter), "literal_coverage": literal_coverage(ring, 2),
            "others_n2": ring.norm ** 2 - 1, "formula3_bad": bad}


def measure(quick: bool, progress: Progress) -> Evidence:
    """Compute: every run of the EJ reproduction, gathered into plain data."""
    ev = Evidence()
    t0 = time.perf_counter()
    table12 = build("ej:a=3,b=4,n=3")  # built once for both algorithms (and its reverse arcs found once)
    ev.tables12 = {alg: _step_run(table12, f"one-to-all-{alg}") for alg in ALGS}
    ev.timings["tables 1-2 (step engine)"] = time.perf_counter() - t0
    ev.example = _step_run(build("ej:a=2,b=3,n=2"), "one-to-all-improved")
    for key, step in (("table 3", measure_table3), ("figures 19-21", measure_averages),
                      ("all-to-all", measure_all_to_all)):
        t0 = time.perf_counter()
        step(ev, quick, progress)
        ev.timings[key] = time.perf_counter() - t0
    ev.formulas = measure_formulas()
    t0 = time.perf_counter()
    ev.synthesis = measure_synthesis(progress)
    ev.timings["synthesised broadcast"] = time.perf_counter() - t0
    return ev


def measure_synthesis(progress: Progress) -> list[dict]:
    """Iterative, improved and the synthesised all-port half-duplex broadcast (topocast.synthesis), in steps."""
    from ..synthesis import synthesize

    rows = []
    for spec in progress.track(SYNTH_CASES, "synthesised broadcast"):
        topology = build(spec)
        steps = {alg: run(topology, f"one-to-all-{alg}").metrics["steps"] for alg in ALGS}
        s = synthesize(topology, "broadcast", engine="step")
        rows.append({"spec": spec, **steps, "synthesised": s.measured, "bound": s.lower_bound, "method": s.method,
                     "verified": bool(s.result.verified and s.result.metrics["exactly_once"])})
    return rows


# -- tables ------------------------------------------------------------------------------------
def _engine_note(r: dict) -> str:
    return f"verified={r['verified']}, exactly once={r['exactly_once']}"


def _table1(iterative: dict) -> Table:
    """Section 5, Table 1: the iterative algorithm per (round, step)."""
    rows = []
    ps = iterative["per_step"]
    for i, (rnd, step, free, snd, rcv, act) in enumerate(PAPER_TABLE1):
        rows.append([rnd, step, Compare(ps["free"][i], free), Compare(ps["senders"][i], snd),
                     Compare(ps["receivers"][i], rcv), Compare(ps["active"][i], act)])
    senders, receivers = sum(ps["senders"]), sum(ps["receivers"])
    rows.append(["total", Compare(len(ps["senders"]), PAPER_TABLE1_TOTAL_STEPS), "",
                 Compare(senders, PAPER_TABLE1_TOTAL[0]), Compare(receivers, PAPER_TABLE1_TOTAL[1]), ""])
    return Table("Table 1: iterative one-to-all on EJ_{3+4rho}^(3) (ours | paper)",
                 ["round", "step", "free", "sending", "receiving", "active"], rows,
                 notes=["step engine, all-port half-duplex, root 0: " + _engine_note(iterative),
                        f"total row, step column: the paper prints {PAPER_TABLE1_TOTAL_STEPS}; its own rows, like our "
                        "run, have 3 rounds of M = 3 steps (nM = 9)"])


def _table2(improved: dict) -> Table:
    """Section 5, Table 2: the improved algorithm per step."""
    rows = []
    ps = improved["per_step"]
    for i, (step, free, snd, rcv, act) in enumerate(PAPER_TABLE2):
        rows.append([step, Compare(ps["free"][i], free), Compare(ps["senders"][i], snd),
                     Compare(ps["receivers"][i], rcv), Compare(ps["active"][i], act)])
    rows.append(["total", "", Compare(sum(ps["senders"]), PAPER_TABLE2_TOTAL[0]),
                 Compare(sum(ps["receivers"]), PAPER_TABLE2_TOTAL[1]), ""])
    return Table("Table 2: improved one-to-all on EJ_{3+4rho}^(3) (ours | paper)",
                 ["step", "free", "sending", "receiving", "active"], rows,
                 notes=["step engine, all-port half-duplex, root 0: " + _engine_note(improved)])


def _example_table(example: dict) -> Table:
    """Section 5, the worked example on EJ_{2+3rho}^(2)."""
    ex = example["per_step"]
    return Table(
        "Section 5 example: improved one-to-all on EJ_{2+3rho}^(2) (ours | paper)",
        ["step", "receivers", "senders"],
        [[i + 1, Compare(ex["receivers"][i], PAPER_EXAMPLE["receivers"][i]),
          Compare(ex["senders"][i], PAPER_EXAMPLE["senders"][i])] for i in range(4)],
        notes=["step engine: " + _engine_note(example)])


def _table3(rows3: list[dict]) -> Table:
    """Section 6, Table 3: total senders for n = 1..6."""
    rows = []
    for r in rows3:
        prev, new = r["iterative"], r["improved"]
        p_prev, p_new, p_diff, p_ratio = PAPER_TABLE3[r["n"]]
        rows.append([r["n"], Compare(prev, p_prev), Compare(new, p_new), Compare(prev - new, p_diff),
                     Compare(round(prev / new, 9), p_ratio, rel_tol=1e-8), r["how"]])
    return Table(
        "Table 3: total senders in EJ_{3+4rho}^(n) (ours | paper)",
        ["n", "previous (iterative)", "proposed (improved)", "difference", "ratio", "how obtained"], rows,
        notes=["frontier run = the algorithm's per-step rule over bitmaps with a bit per node "
               "(exactly-once checked); product counts = convolution of the 1-D sector tree "
               "(used only in --quick for n = 5, 6; equal to frontier runs in tests)"])


def _all_to_all_table(cases: list[dict]) -> Table:
    """Section 4: the three-phase all-to-all, measured only (the paper prints no numbers for it)."""
    rows = [[c["spec"], c["steps"], c["messages"], c["delivered"], c["max_link_messages"], c["link_load"]]
            for c in cases]
    return Table(
        "Three-phase all-to-all (Algorithms 3-4), full simulation on the step engine",
        ["network", "steps", "messages", "every node gets all N-1 exactly once, half-duplex",
         "max messages on a link", "max link load per step"], rows,
        notes=["all N messages simulated on the step engine (no symmetry used); half-duplex: the engine "
               "rejects a link used both ways in a step",
               "for n >= 2 a message crosses phases dimension by dimension (see docs/ej.md)"])


def synthesis_table(rows: list[dict]) -> Table:
    """Iterative, improved and synthesised broadcast steps beside the lower bound (all ours)."""
    return Table(
        "Synthesised all-port broadcast against iterative and improved one-to-all: steps (ours)",
        ["network", "iterative", "improved", "synthesised", "lower bound", "iterative/bound", "improved/bound",
         "synth/bound", "synth verified"],
        [[r["spec"], r["iterative"], r["improved"], r["synthesised"], r["bound"],
          round(r["iterative"] / r["bound"], 3), round(r["improved"] / r["bound"], 3),
          round(r["synthesised"] / r["bound"], 3), r["verified"]] for r in rows],
        notes=["all-port, half-duplex, root 0, step engine; synthesised: breadth-first tree of topocast.synthesis "
               "(docs/synthesis.md); lower bound: the root's eccentricity"])


def tables(ev: Evidence) -> list[Table]:
    return [_table1(ev.tables12["iterative"]), _table2(ev.tables12["improved"]), _example_table(ev.example),
            _table3(ev.table3), _all_to_all_table(ev.all_to_all), synthesis_table(ev.synthesis)]


# -- claims ------------------------------------------------------------------------------------
def _table3_claims(ev: Evidence) -> list[Claim]:
    """Section 6: the 2.7% saving and the pattern of Table 3."""
    t3 = {r["n"]: (r["iterative"], r["improved"]) for r in ev.table3}
    ratios = {n: p / q for n, (p, q) in t3.items()}
    return [
        Claim("The improved one-to-all needs about 2.7% fewer senders than the previous one for all dimensions",
              all(1.026 < ratios[n] < 1.029 for n in range(2, 7)),
              "previous/improved = " + ", ".join(f"n={n}: {ratios[n]:.9f}" for n in sorted(ratios))
              + "; at n = 1 both are the same tree (ratio 1), so 'all dimensions' holds from n = 2"),
        Claim("Table 3 pattern: the difference at n equals the previous algorithm's total at n - 1",
              all(t3[n][0] - t3[n][1] == t3[n - 1][0] for n in range(2, 7)),
              ", ".join(f"n={n}: {t3[n][0] - t3[n][1]} vs {t3[n - 1][0]}" for n in range(2, 7))),
    ]


def _steps_claims(ev: Evidence) -> list[Claim]:
    """Sections 3 and 5: mean receive step and number of steps of both algorithms on EJ_{3+4rho}^(3)."""
    it, im = ev.tables12["iterative"]["per_step"], ev.tables12["improved"]["per_step"]
    steps_it = np.arange(1, len(it["receivers"]) + 1)
    mean_it = float(np.dot(steps_it, it["receivers"]) / sum(it["receivers"]))
    mean_im = float(np.dot(steps_it, im["receivers"]) / sum(im["receivers"]))
    n_m = 3 * ev.formulas["diameter"]
    return [
        Claim("The improved algorithm achieves a lower average number of steps to receive the message",
              mean_im < mean_it,
              f"EJ_{{3+4rho}}^(3): mean receive step {mean_im:.3f} (improved) vs {mean_it:.3f} (iterative)"),
        Claim("Both algorithms take nM steps (M = diameter of EJ_alpha)",
              len(steps_it) == len(im["receivers"]) == n_m,
              f"EJ_{{3+4rho}}^(3): {len(steps_it)} and {len(im['receivers'])} steps, nM = {n_m}"),
    ]


def _formula_claims(ev: Evidence) -> list[Claim]:
    """Section 3, formulas (5) and (6), against the iterative run on EJ_{3+4rho}^(3)."""
    it = ev.tables12["iterative"]["per_step"]
    norm = ev.formulas["norm"]
    formula_s = [6 * (d - 1) * norm ** r for r in range(3) for d in range(1, 4)]
    formula_r = [6 * d * norm ** r for r in range(3) for d in range(1, 4)]
    return [
        Claim("Formula (5): receivers in step d of round r are 6 d N(alpha)^(r-1) (r counted from 1)",
              formula_r == it["receivers"], f"formula {formula_r} vs simulated {it['receivers']}"),
        Claim("Formula (6): senders in step d of round r are 6 (d-1) N(alpha)^(r-1)",
              formula_s == it["senders"],
              f"formula {formula_s} vs simulated (and Table 1) {it['senders']}: at d = 1 every holder "
              "sends (N^(r-1) senders), which the formula's 6(d-1) = 0 misses"),
    ]


def _shape_claim(ev: Evidence) -> Claim:
    """Section 6, Figures 15-18: where the improved algorithm gains."""
    it, im = ev.tables12["iterative"]["per_step"], ev.tables12["improved"]["per_step"]
    mid = slice(3, 6)
    return Claim(
        "The improved algorithm reaches more nodes in the middle steps and has fewer senders in the last ones",
        sum(im["receivers"][mid]) > sum(it["receivers"][mid]) and im["senders"][-1] < it["senders"][-1],
        f"receivers steps 4-6: {im['receivers'][mid]} vs {it['receivers'][mid]}; "
        f"senders in step 9: {im['senders'][-1]} vs {it['senders'][-1]}")


def _errata_claims(ev: Evidence) -> list[Claim]:
    """Sections 2 and 4: Algorithm 3 as written, and formula (3)."""
    f = ev.formulas
    bad = f["formula3_bad"]
    return [
        Claim("All-to-all as written (Algorithm 3 recursing with the same phase) delivers every message to every "
              "node", f["literal_coverage"] == f["others_n2"],
              f"taken literally, one source reaches {f['literal_coverage']} of the {f['others_n2']} other nodes of "
              f"EJ_{{3+4rho}}^(2) (offsets whose coordinates all lie in one phase's sectors); with cross-phase "
              "forwarding every case in the all-to-all table delivers all N-1 messages exactly once"),
        Claim("Formula (3) gives the distance distribution of EJ_alpha", not bad,
              f"it matches BFS for every 0 <= a <= b <= 20 except a = b >= 2 ({len(bad)} cases: {bad[:4]}...), "
              "where s = T = M and the printed '2 if b = a (mod 3), s = M' case wins; taking the s = T case "
              "(N - R) there makes it right (e.g. a = b = 3: BFS 1 6 12 8)"),
    ]


def claims(ev: Evidence) -> list[Claim]:
    once = all(r["exactly_once"] for r in ev.tables12.values()) and ev.checked_all
    return _table3_claims(ev) + _steps_claims(ev) + _formula_claims(ev) + [_shape_claim(ev)] + _errata_claims(ev) + [
        Claim("Improved and iterative deliver exactly once in every run of this report", bool(once),
              "step engine for Tables 1-2 and the example; bitmap check for every frontier run of Table 3")] + [
        _synthesis_claim(ev.synthesis)]


def _synthesis_claim(rows: list[dict]) -> Claim:
    """Ours: the synthesised broadcast takes no more steps than improved one-to-all (both meet the bound)."""
    ok = all(r["verified"] and r["synthesised"] <= r["improved"] for r in rows)
    return Claim("The synthesised all-port broadcast takes no more steps than improved one-to-all on every network",
                 ok, "; ".join(f"{r['spec']}: {r['synthesised']} vs {r['improved']} (iterative {r['iterative']}, "
                               f"bound {r['bound']})" for r in rows))


# -- write -------------------------------------------------------------------------------------
def _fig(series: dict[str, list], title: str, ylabel: str, path: Path, log: bool = False):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4))
    for label, values in series.items():
        ax.plot(range(1, len(values) + 1), values, marker="o", label=label)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if log:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend()
    return save_figure(fig, path)


def write_figures(ev: Evidence, out: Path) -> list[Path]:
    """Figures 15-22 as PNG, with their series as CSV (section 6)."""
    series = {alg: ev.tables12[alg]["per_step"] for alg in ALGS}
    keys4, keys3 = ("senders", "receivers", "free", "active"), ("senders", "receivers", "active")
    figures = [_fig({f"{a} ({'previous' if a == 'iterative' else 'proposed'})": series[a][key] for a in ALGS},
                    f"Figure {number}: {label} per step, EJ_{{3+4rho}}^(3)", label,
                    out / f"ej_figure{number}_{key}.png")
               for number, key, label in ((15, "senders", "senders"), (16, "receivers", "receivers"),
                                          (17, "free", "free nodes"), (18, "active", "active nodes"))]
    write_csv(out / "ej_figures15_18_series.csv", ["step"] + [f"{a}_{k}" for a in ALGS for k in keys4],
              [[s + 1] + [series[a][k][s] for a in ALGS for k in keys4] for s in range(9)])
    figures += [_fig({a: ev.averages[a][key].tolist() for a in ALGS},
                     f"Figure {number}: average {key} per step (five 12-step networks)",
                     f"average {key}", out / f"ej_figure{number}_average_{key}.png", log=True)
                for number, key in ((19, "senders"), (20, "receivers"), (21, "active"))]
    write_csv(out / "ej_figures19_21_series.csv", ["step"] + [f"{a}_{k}" for a in ALGS for k in keys3],
              [[s + 1] + [ev.averages[a][k][s] for a in ALGS for k in keys3] for s in range(12)])
    fig22 = ev.figure22
    figures.append(_figure22(fig22, out / "ej_figure22_total_senders.png"))
    write_csv(out / "ej_figure22_series.csv", ["n", "step", "iterative_senders", "improved_senders"],
              [[n, s + 1, fig22["iterative"][n][s], fig22["improved"][n][s]]
               for n in (4, 5, 6) for s in range(len(fig22["improved"][n]))])
    return figures


def run_ej(quick: bool = True, out: Path | None = None, progress: Progress | None = None) -> Report:
    """Hussain (2018), sections 4-6: compute, then tables, claims and (with ``out``) figures."""
    ev = measure(quick, progress or SILENT)
    report = Report("ej", "Eisenstein-Jacobi networks: improved one-to-all and three-phase all-to-all (Hussain 2018)",
                    tables(ev), claims(ev))
    report.notes += [
        "root node 0; all-port, half-duplex (PortModel(None, 'half')); steps counted from 1",
        "Figures 19-21 sources: " + "; ".join(ev.average_methods),
        "timings (s): " + ", ".join(f"{k} {v:.1f}" for k, v in ev.timings.items()),
    ]
    if out is not None:
        report.figures += write_figures(ev, Path(out))
    return report


def _figure22(fig22: dict, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, n in zip(axes, (4, 5, 6), strict=False):
        for alg, name in (("iterative", "previous"), ("improved", "proposed")):
            values = fig22[alg][n]
            ax.plot(range(1, len(values) + 1), values, marker=".", label=f"{name} (total {sum(values):,})")
        ax.set_yscale("log")
        ax.set_title(f"EJ_{{3+4rho}}^({n})")
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[0].set_ylabel("senders")
    fig.suptitle("Figure 22: senders per step and total senders, n = 4..6")
    return save_figure(fig, path)


register_experiment(Experiment("ej", run_ej, "EJ networks: Tables 1-3, section 5 example, Figures 15-22, "
                               "three-phase all-to-all", paper=PAPER, weight=4.4))
