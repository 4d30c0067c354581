"""``topocast reproduce classic``: simulated versus closed-form cost of the classic collectives.

Every algorithm runs on the step engine (steps, exactly-once) and on the event
engine (time); the closed forms are the textbook ones (Grama et al., ch. 4)
under our store-and-forward model, written next to each algorithm.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..algorithms import classic_allgather, classic_alltoall, classic_broadcast
from ..api import run
from ..infra.progress import Progress
from ..outputs.report import Compare, Report, Table
from ..registry import Experiment, register_experiment
from ..sim.models import CostModel
from ..spec import build

COST = CostModel(startup=1e-6, per_byte=1e-10, per_hop=5e-8)
MESSAGE_BYTES = 1024.0

CASES_QUICK = [
    ("broadcast-binomial", ["hypercube:4", "hypercube:8"]),
    ("broadcast-ring", ["ring:9", "ring:16"]),
    ("broadcast-mesh", ["mesh:4x6", "torus:5x5", "torus:4x4x4"]),
    ("allgather-recursive-doubling", ["hypercube:4", "hypercube:8"]),
    ("allgather-ring", ["ring:9", "ring:16"]),
    ("allgather-mesh", ["mesh:4x6", "torus:5x5", "torus:4x4x4"]),
    ("alltoall-hypercube", ["hypercube:4", "hypercube:6"]),
    ("alltoall-ring", ["ring:9", "ring:16"]),
    ("alltoall-mesh", ["mesh:4x6", "torus:5x5"]),
]
CASES_FULL = [
    ("broadcast-binomial", ["hypercube:4", "hypercube:8", "hypercube:12"]),
    ("broadcast-ring", ["ring:9", "ring:64", "ring:255"]),
    ("broadcast-mesh", ["mesh:4x6", "torus:5x5", "mesh:16x16", "torus:8x8x8"]),
    ("allgather-recursive-doubling", ["hypercube:4", "hypercube:8", "hypercube:12"]),
    ("allgather-ring", ["ring:9", "ring:64", "ring:255"]),
    ("allgather-mesh", ["mesh:4x6", "torus:5x5", "mesh:16x16", "torus:8x8x8"]),
    ("alltoall-hypercube", ["hypercube:4", "hypercube:6", "hypercube:8"]),
    ("alltoall-ring", ["ring:9", "ring:64"]),
    ("alltoall-mesh", ["mesh:4x6", "torus:5x5", "mesh:8x8", "torus:16x16"]),
]

CLOSED_FORMS = {**classic_broadcast.CLOSED_FORMS, **classic_allgather.CLOSED_FORMS,
                **classic_alltoall.CLOSED_FORMS}


def measure(quick: bool, progress: Progress) -> list[dict]:
    """Compute: run every case on the step and the event engine, beside its closed form (Grama et al. ch. 4)."""
    cases = [(alg, spec) for alg, specs in (CASES_QUICK if quick else CASES_FULL) for spec in specs]
    kwargs: dict[str, Any] = dict(message_bytes=MESSAGE_BYTES, startup=COST.startup, per_byte=COST.per_byte,
                                  per_hop=COST.per_hop)
    evidence = []
    for alg, spec in progress.track(cases, "classic collectives"):
        topology = build(spec)
        steps = run(topology, alg, engine="step", **kwargs)
        timed = run(topology, alg, engine="event", **kwargs)
        evidence.append({
            "algorithm": alg, "spec": spec, "nodes": topology.num_nodes,
            "steps": steps.metrics["steps"], "step_bound": steps.metrics["lower_bound"],
            "exactly_once": bool(steps.verified and steps.metrics["exactly_once"] and timed.verified),
            "time_us": round(timed.metrics["time"] * 1e6, 6),
            "closed_form_us": round(CLOSED_FORMS[alg](topology, 0, MESSAGE_BYTES, COST) * 1e6, 6),
            "bound_ratio": round(timed.metrics["lower_bound_ratio"], 3),
        })
    return evidence


def classic_table(evidence: list[dict]) -> Table:
    """Table: simulated time beside the textbook closed form (a closed form, not a printed value)."""
    rows = [[e["algorithm"], e["spec"], e["nodes"], e["steps"], e["step_bound"], "yes" if e["exactly_once"] else "NO",
             Compare(e["time_us"], e["closed_form_us"], rel_tol=1e-9, kind="closed_form"), e["bound_ratio"]]
            for e in evidence]
    return Table(
        "Classic collectives: simulated time (us) beside the closed form",
        ["algorithm", "topology", "N", "steps", "step bound", "exactly once", "time us | closed form",
         "time / lower bound"],
        rows,
        notes=[f"cost model: t_s = {COST.startup * 1e6:g} us, t_w = {COST.per_byte * 1e9:g} ns/B, "
               f"t_h = {COST.per_hop * 1e9:g} ns, m = {MESSAGE_BYTES:g} B, store-and-forward, root 0",
               "the reference column is each algorithm's textbook cost formula (Grama et al. ch. 4) evaluated by us: "
               "a closed-form check, not a value printed in the book"],
    )


def cost_figure(evidence: list[dict], out: Path) -> Path:
    """Figure: simulated time against the closed form, one point per run, on the diagonal when they agree."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..infra.fileio import save_figure

    fig, ax = plt.subplots(figsize=(6, 5))
    for family in ("broadcast", "allgather", "alltoall"):
        pts = [(e["closed_form_us"], e["time_us"]) for e in evidence if e["algorithm"].startswith(family)]
        xs, ys = zip(*pts, strict=True)
        ax.scatter(xs, ys, label=family, s=28, alpha=0.8)
    lo = min(min(e["closed_form_us"], e["time_us"]) for e in evidence) * 0.8
    hi = max(max(e["closed_form_us"], e["time_us"]) for e in evidence) * 1.25
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--", label="simulated = closed form")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("closed form (us)")
    ax.set_ylabel("simulated, event engine (us)")
    ax.set_title("Classic collectives: simulated against closed-form cost")
    ax.legend()
    return save_figure(fig, Path(out) / "classic_simulated_vs_closed_form.png")


def run_classic(quick: bool = True, out: Path | None = None, progress: Progress | None = None) -> Report:
    """Grama et al. ch. 4: every classic collective, simulated, against its closed form (with ``out``: a figure)."""
    evidence = measure(quick, progress or Progress(enabled=False))
    report = Report("classic", "Classic collectives on rings, meshes, tori and hypercubes", [classic_table(evidence)])
    if out is not None:
        report.figures.append(cost_figure(evidence, Path(out)))
    return report


register_experiment(Experiment("classic", run_classic,
                               "classic collectives: simulated cost against the textbook closed forms",
                               paper="Grama, Gupta, Karypis, Kumar: Introduction to Parallel Computing, ch. 4",
                               weight=2.6))
