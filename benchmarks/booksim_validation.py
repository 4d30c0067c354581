"""Validation of the flit-level wormhole engine against BookSim2's figures, config by config.

    python benchmarks/booksim_validation.py            # every config, 5 seeds, writes the figure (2.5 min, 2 cores)
    python benchmarks/booksim_validation.py --quick    # three readings, loads up to 70 % of saturation, 2 seeds (~20 s)
    python benchmarks/booksim_validation.py --only mesh16_3cyc_buf5 --jobs 1
    python benchmarks/booksim_validation.py --figures PATH   # also write the figures as JSON rows

BookSim2's side is read from ``benchmarks/data/booksim2_reference.json``
(figures transcribed from runs of BookSim2 built outside this repository:
its commit, each configuration's text, every run's latency, accepted rate
and stability).  This script runs topocast's ``unicast`` algorithm with
``routing=dor`` on the same networks at the same offered loads
(flits/node/cycle, BookSim's ``injection_rate`` with
``injection_rate_uses_flits=1``) with the router options of
:func:`options` (``docs/simulator.md``, "Validation against BookSim2"),
five seeds per load, and prints one table per config: offered load,
BookSim's mean packet latency over its stable seeds, ours with the 95 %
interval over our seeds, the relative difference, and whether it is
within 5 %.  The latency criterion applies up to 70 % of BookSim's
saturation throughput.  On the torus it also runs the same traffic on
BookSim's own ``dim_order_torus`` routes (``ties=random vc_scheme=ring``),
and the 5-flit torus configs once more without the credit delay.  Every
reading runs twice, with the router's ``vc_release=tail-left`` (a VC is
the worm's until its tail has left the buffer, the default) and
``tail-sent`` (free once the tail has been sent into it: BookSim's own
rule, ``wait_for_tail_credit=0``); BookSim's default figures are the
comparison for both.  Then it sets BookSim's runs with
``wait_for_tail_credit=1`` (in the reference file) beside its default and
ours.

Saturation throughput, one rule for both simulators: the mean accepted
rate (flits/node/cycle) over the offered loads of BookSim's throughput-mode
runs (all beyond its saturation), each load's accepted rate averaged over
the seeds.  BookSim's figures are its ``sim_type=throughput`` runs; ours
are runs at the same offered loads and seed counts (accepted traffic:
messages finished after the warm-up, per node per cycle).

The figure (``docs/figures/booksim_validation.svg``, full mode only, or
``--figure PATH``) has one panel per reading with BookSim's latency curve
and ours under both VC release rules, and the three saturation
throughputs.  Progress goes to stderr; files are written atomically.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from figures import Figures, add_argument

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "data" / "booksim2_reference.json"
FIGURE = HERE.parent / "docs" / "figures" / "booksim_validation.svg"

#: cycles per run; warm-up and drain are the unicast defaults (a tenth, and max(a tenth, min(3000, a quarter)))
CYCLES = 20000
SEEDS = 5
#: --quick runs these (case names), and only the first has targets in the figures for benchmarks/run_all.py
QUICK = ("mesh16_3cyc_buf5", "mesh16_3cyc_buf5 (tail-sent)", "torus8_3cyc_buf8 (BookSim routes)")
RELEASES = ("tail-left", "tail-sent")


@dataclass(frozen=True)
class Case:
    """One BookSim config (``key`` in the reference file) and the topocast run that mirrors it.

    ``routes``: ``topocast`` runs ``topocast run SPEC unicast --set routing=dor`` (on a torus: the ``+``
    way at distance ``k/2``, VC 1 from the wrap-around arc on); ``booksim`` (torus only) runs the same
    traffic on BookSim2's ``dim_order_torus`` routes (:func:`booksim_torus_routes`), built here.
    ``credit``: ``loop`` sets ``credit_delay`` from BookSim's credit loop where it stretches a lone packet
    (:func:`options`), ``none`` sets it to 0.  ``release``: the router's ``vc_release``.
    """

    key: str
    spec: str
    router: str   # "3-cycle" or "default"
    buffer: int
    routes: str = "topocast"
    credit: str = "loop"
    release: str = "tail-left"

    @property
    def name(self) -> str:
        extra = [x for x, on in (("BookSim routes", self.routes == "booksim"),
                                 ("credit_delay 0", self.credit == "none"),
                                 ("tail-sent", self.release == "tail-sent")) if on]
        return self.key + (f" ({', '.join(extra)})" if extra else "")

    @property
    def reading(self) -> str:
        """The name of the tail-left twin: the panel of the figure this case is drawn in."""
        return replace(self, release="tail-left").name


def options(case: Case) -> dict:
    """topocast run parameters (``--set`` options) mirroring BookSim's config ``case.key``.

    Found from BookSim's zero-load latencies with the closed form of
    docs/simulator.md: a BookSim hop costs ``link_latency + router_delay``
    (mesh channels 1 cycle, torus channels 2: BookSim's ``use_noc_latency``),
    the 3-cycle router (``routing_delay=0 speculative=1``) has
    ``router_delay=2``, the default iq router ``router_delay=4``, and the
    constant is ``startup=2``.  BookSim's credit loop is the flit channel,
    the credit channel (same latency) and 3 cycles of the router, so a
    buffer shallower than ``2 * link + 3`` flits stretches a lone packet:
    there ``credit_delay = link + 3`` reproduces the stretch exactly;
    elsewhere ``credit_delay = 0`` (our credit delay also holds a released
    VC for ``1 + credit_delay`` cycles, which BookSim, with
    ``wait_for_tail_credit=0``, does not).  One injection and one ejection
    channel per node (BookSim's one-flit-per-cycle injection and ejection
    ports); virtual channels from the routing's own scheme (one on the
    mesh, the dateline pair on the torus, as BookSim's ``num_vcs``).
    BookSim's torus routes (``case.routes == "booksim"``): ``ties=random``
    (a fair coin at distance ``k/2``) and ``vc_scheme=ring`` (one VC per
    ring, 1 when the destination's coordinate is below the source's), the
    class rule of its ``dim_order_torus`` routing.  ``vc_release=tail-sent``
    for the readings with BookSim's own VC reuse rule.
    """
    link = 1 if case.spec.startswith("mesh") else 2
    loop = 2 * link + 3
    credit = link + 3 if (case.credit == "loop" and case.buffer < loop) else 0
    routes = {"ties": "random", "vc_scheme": "ring"} if case.routes == "booksim" else {}
    release = {"vc_release": case.release} if case.release != "tail-left" else {}
    return {"routing": "dor", "traffic": "uniform", **routes, "flits": 32, "buffer_depth": case.buffer,
            "router_delay": 2 if case.router == "3-cycle" else 4, "link_latency": link, "credit_delay": credit,
            "startup": 2, "injection_channels": 1, "ejection_channels": 1, **release}


def cases(reference: dict) -> list[Case]:
    """Every config of the reference file; on the torus also with BookSim's routes, and the buffer-5 torus
    configs with BookSim's routes and no credit delay; each reading under both VC release rules."""
    out = []
    for key, cfg in reference["configs"].items():
        spec = "mesh:16x16" if cfg["topology"].startswith("mesh") else "torus:8x8"
        for release in RELEASES:
            base = Case(key, spec, cfg["router"], cfg["vc_buf_size"], release=release)
            out.append(base)
            if spec.startswith("torus"):
                out.append(replace(base, routes="booksim"))
                if base.buffer < 7:
                    out.append(replace(base, routes="booksim", credit="none"))
    order = {"mesh16_3cyc": 0, "torus8_3cyc": 1, "mesh16": 2, "torus8": 3}
    return sorted(out, key=lambda c: (order[c.key.rsplit("_buf", 1)[0]], c.buffer, c.routes != "topocast",
                                      c.credit != "loop", c.release != "tail-left"))


def release_reaches_the_router() -> bool:
    """Whether the ``unicast`` algorithm hands ``vc_release`` to its router (the tail-sent readings need it)."""
    from topocast import registry
    from topocast.api import resolve_params

    algorithm = registry.algorithm("unicast")
    model = algorithm.model(resolve_params(algorithm, {"vc_release": "tail-sent"}))
    return model.router.vc_release == "tail-sent"


def booksim_latency(point: dict) -> tuple[float | None, int, int]:
    """(mean packet latency over the stable seeds or None, stable runs, runs) of one latency-mode point."""
    lat = [r[2] for r in point["runs"] if r[1] == "stable" and r[2] is not None]
    return (sum(lat) / len(lat) if lat else None), len(lat), len(point["runs"])


def saturation_throughput(points: list[tuple[float, list[float]]]) -> float:
    """The common rule: mean over offered loads of the seed-mean accepted rate."""
    return sum(sum(a) / len(a) for _, a in points) / len(points)


def run_point(job: tuple) -> dict:
    """One topocast run (in a worker process)."""
    case, load, seed, cycles = job
    import topocast as tc

    start = time.perf_counter()
    m = tc.run(case.spec, "unicast", load=load, seed=seed, cycles=cycles, **options(case)).metrics
    return {"case": case.name, "load": load, "seed": seed, "latency": m["mean_latency"], "ci": m["ci95_latency"],
            "accepted": m["accepted_load"], "saturated": m["saturated"], "zero_load": m["zero_load_latency"],
            "hops": m["mean_hops"], "sound": m["redundant_receipts"] == 0 and m["deadlocked_worms"] == 0
            and (m["verified"] or m["unfinished_messages"] > 0),
            "seconds": time.perf_counter() - start}


def t95(n: int) -> float:
    """Student-t 97.5 % quantile with ``n - 1`` degrees of freedom (n >= 2)."""
    from scipy.stats import t

    return float(t.ppf(0.975, n - 1))


@dataclass
class Row:
    load: float
    bs: float | None
    bs_stable: int
    bs_runs: int
    ours: float
    ci: float
    saturated: int
    seeds: int
    in_range: bool
    bs_ci: float = float("nan")

    @property
    def diff(self) -> float | None:
        return None if self.bs is None else self.ours / self.bs - 1


def plan(reference: dict, chosen: list[Case], quick: bool, cycles: int) -> tuple[list, dict]:
    """The jobs to run and, per case, its latency loads, throughput loads and BookSim's saturation throughput."""
    jobs, layout = [], {}
    seeds = 2 if quick else SEEDS
    for case in chosen:
        cfg = reference["configs"][case.key]
        thr = [(p["offered"], [r[1] for r in p["runs"]]) for p in cfg["throughput_mode"]]
        sat = saturation_throughput(thr)
        loads = [p["offered"] for p in cfg["latency_mode"] if booksim_latency(p)[0] is not None]
        if quick:  # a smoke run: fewer loads, the first two throughput loads with one seed each
            loads = [x for x in loads if x <= 0.7 * sat + 1e-9][::2]
            thr = [(x, a[:1]) for x, a in thr[:2]]
        layout[case.name] = {"case": case, "loads": loads, "cutoff": 0.7 * sat, "bs_thr": thr}
        jobs += [(case, x, s, cycles) for x in loads for s in range(seeds)]
        jobs += [(case, x, s, cycles) for x, a in thr if x not in loads for s in range(len(a))]
    return jobs, layout


def tabulate(reference: dict, layout: dict, results: list[dict]) -> dict:
    """Per case: the table rows, our saturation throughput, the verdicts."""
    by = {}
    for r in results:
        by.setdefault((r["case"], r["load"]), []).append(r)
    out = {}
    for name, lay in layout.items():
        case = lay["case"]
        cfg = reference["configs"][case.key]
        bs_points = {p["offered"]: p for p in cfg["latency_mode"]}
        rows = []
        for load in lay["loads"]:
            runs = by[(name, load)]
            lat = [r["latency"] for r in runs]
            mean = sum(lat) / len(lat)
            ci = t95(len(lat)) * _sd(lat) / math.sqrt(len(lat)) if len(lat) > 1 else float("nan")
            bs, stable, total = booksim_latency(bs_points[load])
            bs_lat = [r[2] for r in bs_points[load]["runs"] if r[1] == "stable" and r[2] is not None]
            bs_ci = t95(len(bs_lat)) * _sd(bs_lat) / math.sqrt(len(bs_lat)) if len(bs_lat) > 1 else float("nan")
            rows.append(Row(load, bs, stable, total, mean, ci, sum(r["saturated"] for r in runs), len(runs),
                            load <= lay["cutoff"] + 1e-9, bs_ci))
        ours_thr = []
        for load, accepted in lay["bs_thr"]:
            runs = sorted(by[(name, load)], key=lambda r: r["seed"])[:len(accepted)]
            ours_thr.append((load, [r["accepted"] for r in runs]))
        ours_sat = saturation_throughput(ours_thr)
        bs_sat = saturation_throughput(lay["bs_thr"])
        checked = [r for r in rows if r.in_range and r.diff is not None]
        worst = max(checked, key=lambda r: abs(r.diff)) if checked else None
        low = by[(name, lay["loads"][0])] if lay["loads"] else []
        zero = sum(r["zero_load"] for r in low) / len(low) if low else None
        within = 0.0  # the highest load up to which every compared load is within 5 %
        for r in rows:
            if r.diff is None:
                continue
            if abs(r.diff) > 0.05:
                break
            within = r.load
        out[name] = {"case": case, "rows": rows, "bs_sat": bs_sat, "ours_sat": ours_sat, "cutoff": lay["cutoff"],
                     "bs_thr": lay["bs_thr"], "ours_thr": ours_thr, "worst": worst,
                     "latency_ok": worst is not None and abs(worst.diff) <= 0.05,
                     "sat_diff": ours_sat / bs_sat - 1, "sat_ok": abs(ours_sat / bs_sat - 1) <= 0.10,
                     "zero_load": zero, "within": within,
                     "sound": all(r["sound"] for r in results if r["case"] == name)}
    return out


def _sd(xs: list[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def set_options(case: Case) -> str:
    """The run as ``--set`` options."""
    return " ".join(f"--set {k}={v}" for k, v in options(case).items())


def report(name: str, res: dict, out=sys.stdout) -> None:
    case = res["case"]
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"\n### {name}: {case.spec}, {case.router} router, {case.buffer}-flit buffers")
    if case.routes == "booksim":
        p(f"\nBookSim's dim_order_torus routes (built by this script) with {set_options(case)} --set load=L "
          f"--set cycles={CYCLES} --seed S\n")
    else:
        p(f"\ntopocast run {case.spec} unicast {set_options(case)} --set load=L --set cycles={CYCLES} --seed S\n")
    p("| offered | BookSim latency ± 95 % (stable/runs) | topocast latency ± 95 % | difference | ≤ 70 % sat | "
      "within 5 % |")
    p("|---:|---:|---:|---:|:-:|:-:|")
    for r in res["rows"]:
        bs = (f"{r.bs:.1f}" + (f" ± {r.bs_ci:.1f}" if r.bs_stable > 1 else "") + f" ({r.bs_stable}/{r.bs_runs})"
              if r.bs is not None else "—")
        sat = f" ({r.saturated}/{r.seeds} saturated)" if r.saturated else ""
        diff = f"{100 * r.diff:+.1f} %" if r.diff is not None else ""
        ok = ("yes" if abs(r.diff) <= 0.05 else "**no**") if r.diff is not None else ""
        p(f"| {r.load:.3f} | {bs} | {r.ours:.1f} ± {r.ci:.1f}{sat} | {diff} | {'yes' if r.in_range else ''} | {ok} |")
    thr = ", ".join(f"{x:.3g}: {sum(a) / len(a):.4f}" for x, a in res["bs_thr"])
    ours = ", ".join(f"{x:.3g}: {sum(a) / len(a):.4f}" for x, a in res["ours_thr"])
    p(f"\nAccepted beyond saturation (offered: mean accepted), BookSim {thr}; topocast {ours}; highest mean "
      f"accepted BookSim {max(sum(a) / len(a) for _, a in res['bs_thr']):.4f}, topocast "
      f"{max(sum(a) / len(a) for _, a in res['ours_thr']):.4f}.")
    worst = res["worst"]
    p(f"Saturation throughput: BookSim {res['bs_sat']:.4f}, topocast {res['ours_sat']:.4f} "
      f"({100 * res['sat_diff']:+.1f} %, {'within' if res['sat_ok'] else 'NOT within'} 10 %). "
      f"Latency up to 70 % of BookSim's saturation ({res['cutoff']:.3f}): largest difference "
      + (f"{100 * worst.diff:+.1f} % at {worst.load:.3f} ({'within' if res['latency_ok'] else 'NOT within'} 5 %)."
         if worst else "none measured."))


def diagnostic(reference: dict, tables: dict, results: list[dict], out=sys.stdout) -> None:
    """BookSim with ``wait_for_tail_credit=1`` (a VC reallocated only after the previous tail's credit is back,
    close to topocast's rule) next to its default and to our runs at the same loads."""
    by = {}
    for r in results:
        by.setdefault((r["case"], r["load"]), []).append(r)
    p = lambda *a: print(*a, file=out)  # noqa: E731
    header = False
    for key, diag in reference.get("wait_for_tail_credit_runs", {}).items():
        names = [n for n, res in tables.items() if res["case"].key == key
                 and (res["case"].routes == "booksim" or not key.startswith("torus"))]
        if not names:
            continue
        if not header:
            p("\n### BookSim with wait_for_tail_credit=1 against its default and topocast\n")
            p("| config | offered | BookSim (default) | BookSim, wait_for_tail_credit=1 | topocast |")
            p("|---|---:|---:|---:|---:|")
            header = True
        base = {pt["offered"]: pt for pt in reference["configs"][key]["latency_mode"]}
        for pt in diag["latency_mode"]:
            lat, stable, runs = booksim_latency(pt)
            default = booksim_latency(base[pt["offered"]])[0] if pt["offered"] in base else None
            ours = []
            for n in names:
                rs = by.get((n, pt["offered"]))
                if rs:
                    ours.append(f"{sum(r['latency'] for r in rs) / len(rs):.1f}"
                                + (f" ({n.split('(', 1)[1].rstrip(')')})" if "(" in n else ""))
            p(f"| {key} | {pt['offered']:.3f} | {default:.1f} | "
              + (f"{lat:.1f} ({stable}/{runs})" if lat is not None else f"unstable ({runs} runs)")
              + f" | {'; '.join(ours)} |")
        for pt in diag["throughput_mode"]:
            acc = sum(r[1] for r in pt["runs"]) / len(pt["runs"])
            base_thr = next((sum(r[1] for r in b["runs"]) / len(b["runs"]) for b in
                             reference["configs"][key]["throughput_mode"] if b["offered"] == pt["offered"]), None)
            ours = []
            for n in names:
                rs = sorted(by.get((n, pt["offered"]), []), key=lambda r: r["seed"])[:len(pt["runs"])]
                if rs:
                    ours.append(f"{sum(r['accepted'] for r in rs) / len(rs):.4f}"
                                + (f" ({n.split('(', 1)[1].rstrip(')')})" if "(" in n else ""))
            p(f"| {key}, accepted | {pt['offered']:.3f} | "
              + (f"{base_thr:.4f}" if base_thr is not None else "") + f" | {acc:.4f} | {'; '.join(ours)} |")


def summary(tables: dict, out=sys.stdout) -> None:
    print("\n| config | router | zero-load (ours, closed form) | latency: largest difference up to 70 % sat | "
          "latency within 5 % up to (share of BookSim's saturation) | saturation throughput BookSim / topocast | "
          "verdict |", file=out)
    print("|---|---|---:|---:|---:|---:|---|", file=out)
    for name, res in tables.items():
        w = res["worst"]
        lat = f"{100 * w.diff:+.1f} % at {w.load:.3f}" if w else "—"
        verdict = ("latency " + ("pass" if res["latency_ok"] else "FAIL") + ", saturation "
                   + ("pass" if res["sat_ok"] else "FAIL"))
        zero = f"{res['zero_load']:.1f}" if res["zero_load"] is not None else ""
        upto = f"{res['within']:.3f} ({100 * res['within'] / res['bs_sat']:.0f} %)" if res["within"] else "—"
        print(f"| {name} | {res['case'].router} | {zero} | {lat} | {upto} | {res['bs_sat']:.4f} / "
              f"{res['ours_sat']:.4f} ({100 * res['sat_diff']:+.1f} %) | {verdict} |", file=out)


#: the colour and label of each VC release rule in the figure
STYLE = {"tail-left": ("tab:blue", "topocast, tail-left"), "tail-sent": ("tab:green", "topocast, tail-sent")}


def draw(tables: dict, path: Path) -> None:
    """One panel per reading: BookSim's latency and ours under each VC release rule against offered load,
    saturation throughputs marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "topocast-booksim"  # the same file for the same figures
    plt.rcParams["svg.fonttype"] = "none"  # text as text: a smaller file
    panels: dict[str, list[dict]] = {}
    for res in tables.values():
        panels.setdefault(res["case"].reading, []).append(res)
    cols = 4
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols, 3.2 * rows), squeeze=False)
    for ax, (name, group) in zip(axes.flat, panels.items(), strict=False):
        _panel(ax, name, group)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7, loc="upper left")
    fig.suptitle("Latency against offered load, BookSim2 (mean of its stable seeds) and topocast (5 seeds) under "
                 "either VC release rule; saturation throughput dashed (BookSim) and dotted (topocast); grey: up to "
                 "70 % of BookSim's", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = path.suffix.lstrip(".") or "svg"
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=f".{kind}", delete=False) as tmp:
        fig.savefig(tmp, format=kind, metadata={"Date": None} if kind == "svg" else None)
    plt.close(fig)
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, path)


def _panel(ax, name: str, group: list[dict]) -> None:
    """One reading: BookSim's curve (from the first of ``group``) and each VC release rule's."""
    first = group[0]
    pts = [r for r in first["rows"] if r.bs is not None]
    zero = min([r.bs for r in pts] + [r.ours for res in group for r in res["rows"]] or [50])
    top = 4 * min(r.bs for r in pts) if pts else 4 * zero
    bs_ci = [r.bs_ci if r.bs_ci == r.bs_ci else 0.0 for r in pts]  # NaN (one stable seed): no bar
    ax.errorbar([r.load for r in pts], [r.bs for r in pts], yerr=bs_ci, fmt="o", ms=3.5, lw=0.8,
                color="tab:orange", label="BookSim2 ± 95 %")
    ax.axvline(first["bs_sat"], color="tab:orange", ls="--", lw=0.9)
    for res in group:
        colour, label = STYLE[res["case"].release]
        ours = [r for r in res["rows"] if not r.saturated]
        ax.errorbar([r.load for r in ours], [r.ours for r in ours], yerr=[r.ci for r in ours], fmt="-",
                    lw=1.2, color=colour, label=f"{label} ± 95 %")
        ax.axvline(res["ours_sat"], color=colour, ls=":", lw=0.9)
    ax.axvspan(0, first["cutoff"], color="0.92", zorder=0)
    ax.set_ylim(0.9 * zero, top)
    ax.set_xlim(0, max([first["bs_sat"]] + [res["ours_sat"] for res in group]) * 1.08)
    ax.set_title(name, fontsize=9)
    ax.set_xlabel("offered load (flits/node/cycle)", fontsize=8)
    ax.set_ylabel("packet latency (cycles)", fontsize=8)
    ax.tick_params(labelsize=7)


def write_json(path: Path, tables: dict, meta: dict) -> None:
    data = {"meta": meta, "configs": {
        name: {"options": options(res["case"]), "booksim_saturation": res["bs_sat"],
               "topocast_saturation": res["ours_sat"],
               "rows": [{"offered": r.load, "booksim": r.bs, "booksim_ci95": r.bs_ci, "booksim_stable": r.bs_stable,
                         "topocast": r.ours,
                         "ci95": r.ci, "saturated_seeds": r.saturated, "difference": r.diff} for r in res["rows"]]}
        for name, res in tables.items()}}
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".json", delete=False) as tmp:
        json.dump(data, tmp, indent=1)
    os.chmod(tmp.name, 0o644)
    os.replace(tmp.name, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"only {'; '.join(QUICK)}: loads up to 70 %% of "
                        "saturation (every other), 2 seeds, 2 throughput loads; no figure")
    parser.add_argument("--only", nargs="+", metavar="CONFIG", help="run only these configs (reference keys)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    parser.add_argument("--cycles", type=int, default=CYCLES, help="cycles per run")
    parser.add_argument("--figure", metavar="PATH", help="write the figure here (full mode default: "
                        "docs/figures/booksim_validation.svg)")
    parser.add_argument("--no-figure", action="store_true", help="do not write the figure")
    parser.add_argument("--json", metavar="PATH", help="also write the tables as JSON")
    add_argument(parser)
    args = parser.parse_args(argv)
    reference = json.loads(REFERENCE.read_text())
    every = cases(reference)
    chosen = [c for c in every if (c.key in args.only if args.only else (not args.quick or c.name in QUICK))]
    if not chosen:
        parser.error(f"--only: no such config (known: {', '.join(sorted(reference['configs']))})")
    if any(c.release == "tail-sent" for c in chosen) and not release_reaches_the_router():
        parser.error("the unicast algorithm does not pass vc_release to its router: the tail-sent readings would "
                     "be tail-left runs")
    jobs, layout = plan(reference, chosen, args.quick, args.cycles)
    # the heaviest first, so the pool's tail is short
    jobs.sort(key=lambda j: -(j[1] * (4 if j[0].spec.startswith("mesh") else 1)))
    load_start, start = os.getloadavg(), time.perf_counter()
    print(f"BookSim2 {reference['booksim']['commit'][:12]}: {len(chosen)} configs, {len(jobs)} runs on "
          f"{args.jobs} processes; load average {' '.join(f'{x:.2f}' for x in load_start)}", file=sys.stderr)
    import topocast as tc

    tc.run("mesh:4x4", "unicast", load=0.05, cycles=500, buffer_depth=2, router_delay=1)  # compile or load kernels
    results = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for i, r in enumerate(pool.map(run_point, jobs, chunksize=1), 1):
            results.append(r)
            if i % 25 == 0 or i == len(jobs):
                print(f"  {i}/{len(jobs)} runs, {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - start
    load_end = os.getloadavg()
    tables = tabulate(reference, layout, results)
    for name, res in tables.items():
        report(name, res)
    summary(tables)
    diagnostic(reference, tables, results)
    print(f"\n{len(jobs)} runs in {seconds:.0f} s on {args.jobs} processes; load average at the start "
          f"{' / '.join(f'{x:.2f}' for x in load_start)}, at the end {' / '.join(f'{x:.2f}' for x in load_end)}")
    if not all(res["sound"] for res in tables.values()):
        print("some run failed its delivery check (a redundant receipt, or an unsaturated run not verified)",
              file=sys.stderr)
    figure = None if args.no_figure else (Path(args.figure) if args.figure else (None if args.quick or args.only
                                                                                  else FIGURE))
    if figure is not None:
        draw(tables, figure)
        print(f"wrote {figure}", file=sys.stderr)
    if args.json:
        write_json(Path(args.json), tables, {"cycles": args.cycles, "seconds": seconds, "load_start": load_start,
                                             "load_end": load_end, "booksim_commit": reference["booksim"]["commit"]})
    figures = Figures("booksim_validation")
    for name, res in tables.items():  # the criteria as targets for the primary config only: others are known gaps
        primary = name == QUICK[0]
        if res["worst"] is not None:
            figures.add(f"{name}: largest latency difference up to 70 % of saturation",
                        100 * abs(res["worst"].diff), "%", target=5.0 if primary else None)
        figures.add(f"{name}: saturation throughput difference", 100 * abs(res["sat_diff"]), "%",
                    target=10.0 if primary else None)
    figures.add("whole benchmark", seconds, "s")
    figures.write(args.figures)
    return 0 if all(res["sound"] for res in tables.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
