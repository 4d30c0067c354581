"""``topocast reproduce resilience``: what failed links take from the seeds' networks and the classics.

For each network (the seeds' Galaxyfly, Dragonfly, HDN and EJ, the
generalised fat tree, and the torus and hypercube at a comparable size) and
each failed-link fraction from 0 to 30 %, several seeds of random link
failures (``links=f,seed=s``, :mod:`topocast.faults`), each measured through
the one run path:

* the fraction of ordered pairs of nodes still connected, the diameter
  and average distance over the connected pairs, and the bisection interval
  (the spectral lower bound and the best balanced cut found,
  :func:`topocast.topology.properties.bisection`);
* the all-gather time of ``allgather-bfs-trees`` planned on the surviving
  graph (event engine) and its ratio to the lower bound recomputed for the
  degraded network and its restricted promise;
* what the network's paper (or textbook) algorithm, planned for the intact
  network, loses when its transfers over failed links are dropped: the
  fraction of its promised deliveries to healthy nodes that are lost, and how
  many of those were still connected.

Every cell is the mean over the seeds with its 95 % Student-t interval
(:mod:`topocast.infra.stats`). The points run on the sweep executor
(:func:`topocast.sweep.points.map_ordered`: a Dask cluster for a full run).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..infra.progress import Progress
from ..infra.stats import t_half_width
from ..outputs.report import Report, Table
from ..registry import Experiment, register_experiment

NAME = "resilience"


@dataclass(frozen=True)
class Net:
    """A network of the study and the algorithm built for its intact form (None: none on the step and event
    engines)."""

    key: str
    spec: str
    paper_algorithm: str | None


#: quick: 32 to 72 nodes each; full: 60 to 1,024 (a point of the largest takes seconds: all-gathers on the
#: event engine, and the intact plan followed message by message on the degraded network)
NETWORKS = {
    True: (Net("galaxyfly", "galaxyfly:n=3,q=5,a=4", "group-combining-allgather"),
           Net("dragonfly", "dragonfly:g=9,a=4", "group-combining-allgather"),
           Net("hdn", "hdn:base=2x3,k=1,s=1", "hdn-broadcast"),
           Net("ej", "ej:a=3,b=4", "one-to-all-improved"),
           Net("gft", "gft:h=2,m=4,w=2", None),
           Net("torus", "torus:6x6", "allgather-mesh"),
           Net("hypercube", "hypercube:5", "allgather-recursive-doubling")),
    False: (Net("galaxyfly", "galaxyfly:n=3,q=5,a=4", "group-combining-allgather"),
            Net("dragonfly", "dragonfly:g=17,a=16", "group-combining-allgather"),
            Net("hdn", "hdn:base=2x3x5,k=1,s=2", "hdn-broadcast"),
            Net("ej", "ej:a=2,b=3,n=2", "one-to-all-improved"),
            Net("gft", "gft:h=3,m=4,w=4", None),
            Net("torus", "torus:10x10x10", "allgather-mesh"),
            Net("hypercube", "hypercube:10", "allgather-recursive-doubling")),
}
FRACTIONS = {True: (0.0, 0.1, 0.3), False: (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)}
SEEDS = {True: 2, False: 5}
GENERIC = "allgather-bfs-trees"


def measure_point(args: tuple) -> dict:
    """One (network, fraction, seed): connectivity, distances, the generic all-gather and the paper
    algorithm's loss; importable by the sweep executor's workers."""
    from ..api import run
    from ..faults.connectivity import connectivity, distances
    from ..spec import build
    from ..topology.properties import bisection

    spec, paper_algorithm, fraction, seed = args
    faults = f"links={fraction!r},seed={seed}"
    degraded = build(spec, faults=faults)
    out = dict(connectivity(degraded))
    out.update(distances(degraded))
    cut = bisection(degraded)
    out.update(bisection_lower=None if cut is None else cut.lower, bisection_upper=None if cut is None else cut.upper)
    generic = run(degraded.intact, GENERIC, engine="event", faults=faults)
    out.update(allgather_time=generic.metrics["time"], allgather_ratio=generic.metrics["lower_bound_ratio"],
               allgather_verified=generic.verified)
    if paper_algorithm is not None:
        paper = run(degraded.intact, paper_algorithm, faults=faults)
        promised = max(paper.metrics["deliveries_promised"], 1)
        out.update(paper_lost=paper.metrics["deliveries_lost"] / promised,
                   paper_lost_connected=paper.metrics["deliveries_lost_connected"] / promised,
                   paper_verified=paper.verified)
    return out


def measure(quick: bool, progress: Progress) -> dict:
    """Every point of the study, grouped by network and fraction."""
    from ..sweep.points import map_ordered

    nets, fractions, seeds = NETWORKS[quick], FRACTIONS[quick], SEEDS[quick]
    jobs = [(net.spec, net.paper_algorithm, f, s) for net in nets for f in fractions for s in range(1, seeds + 1)]
    done = map_ordered(measure_point, jobs, workers=1 if quick else 2, progress=progress,
                       description="resilience points")
    points: dict = {}
    for (spec, _, f, _), value in zip(jobs, done, strict=True):
        points.setdefault(spec, {}).setdefault(f, []).append(value)
    return {"quick": quick, "networks": nets, "fractions": fractions, "seeds": seeds, "points": points}


def _mean(values: list[float], digits: int = 3) -> str:
    """``mean ± half-width`` of the finite values (the interval left out with one value)."""
    finite = [v for v in values if v is not None and np.isfinite(v)]
    if not finite:
        return "-"
    mean = float(np.mean(finite))
    half = t_half_width(finite)
    return f"{mean:.{digits}f}" + (f" ± {half:.{digits}f}" if np.isfinite(half) else "")


COLUMNS = (("connected_pairs", "connected pairs", 3), ("diameter", "diameter", 2),
           ("average_distance", "mean distance", 3), ("bisection_lower", "bisection: lower", 1),
           ("bisection_upper", "bisection: upper", 1), ("allgather_ratio", f"{GENERIC} time / bound", 3),
           ("paper_lost", "paper algorithm: deliveries lost", 3),
           ("paper_lost_connected", "of which still connected", 3))


def network_table(ev: dict, net: Net) -> Table:
    rows, tidy = [], []
    for f in ev["fractions"]:
        cells = ev["points"][net.spec][f]
        row = [f"{f:.0%}"]
        for key, _, digits in COLUMNS:
            row.append(_mean([c.get(key) for c in cells], digits) if net.paper_algorithm or "paper" not in key
                       else "-")
        rows.append(row)
        for c, seed in zip(cells, range(1, len(cells) + 1), strict=True):
            tidy.append([net.key, net.spec, f, seed] + [c.get(key) for key, _, _ in COLUMNS])
    paper = net.paper_algorithm or "none on the step and event engines"
    return Table(f"{net.key}: {net.spec} (paper algorithm: {paper})",
                 ["failed links"] + [title for _, title, _ in COLUMNS], rows, key=net.key,
                 notes=[f"mean ± 95 % Student-t half-width over {ev['seeds']} seeds of random link failures"],
                 tidy=(["network", "spec", "fraction", "seed"] + [key for key, _, _ in COLUMNS], tidy))


def notes(ev: dict) -> list[str]:
    unverified = [spec for spec, by_f in ev["points"].items() for cells in by_f.values() for c in cells
                  if not c["allgather_verified"] or c.get("paper_verified") is False]
    return [f"{'quick' if ev['quick'] else 'full'} run: failed-link fractions "
            f"{', '.join(f'{f:.0%}' for f in ev['fractions'])}, {ev['seeds']} seeds each",
            f"{GENERIC} is planned on the surviving graph and verified to deliver every message exactly once to "
            "every healthy node its origin still reaches; its bound is recomputed for that promise",
            "the paper algorithm is planned for the intact network; its transfers over failed links are dropped "
            "and every later transfer carries only what its sender still holds (docs/faults.md)",
            "not measured yet: synthesised schedules on the degraded networks",
            "every run verified" if not unverified else f"runs that failed verification on: {sorted(set(unverified))}"]


def build_report(ev: dict) -> Report:
    tables = [network_table(ev, net) for net in ev["networks"]]
    return Report(NAME, "Resilience: failed links on the seeds' networks and the classics", tables, [],
                  notes=notes(ev))


def run(quick: bool = False, out: Path | None = None, progress: Progress | None = None) -> Report:
    """The study: every network, fraction and seed; one table per network."""
    return build_report(measure(quick, progress or Progress(enabled=False)))


register_experiment(Experiment(NAME, run, "Failed links (0-30 %) on Galaxyfly, Dragonfly, HDN, EJ, GFT, torus and "
                               "hypercube: connected pairs, distances, generic all-gather against its recomputed "
                               "bound, what each paper algorithm loses", paper="issue 33 (no paper: a study of "
                               "ours)", weight=10.0))
