"""``topocast reproduce galaxyfly-vs-dragonfly``: Galaxyfly against Dragonfly of equal router count, unicast traffic.

Latency-throughput curves of a Galaxyfly and of Dragonflies with the same
number of routers, under minimal, Valiant and UGAL-L routing, uniform and
adversarial (``group-shift``) traffic, on the flit-level wormhole engine.
Zhuang et al. (2023) motivate Galaxyfly as a low-diameter network built from
lower-radix routers, compare it at equal router count with a Dragonfly
(Table 5, Dragonfly(n, q*a)) and put the gap they see on the diameter (3
against 5); Kim, Dally, Scott and Abts (2008) show that group-to-group
traffic defeats minimal routing on a Dragonfly and that Valiant routing
recovers it, and that UGAL, choosing between the two per message at the
source from its queues, follows the better of them.  Which Dragonfly is "of
equal router count" is open, so both readings run:

* ``least radix`` (default): the Dragonfly with the Galaxyfly's router count
  whose routers have the fewest network ports, ties broken towards Kim et
  al.'s balance ``a = 2h``;
* ``Table 5``: the paper's own comparator, Dragonfly(g = n, a = q*a), one
  group per Galaxyfly cluster.

Each load point runs several seeds; a point is the mean of the per-seed
means with a Student-t 95% interval across seeds
(:func:`topocast.experiments.multicast.across_seeds`).  Offered loads are
fractions of each curve's channel-load bound, computed exactly from every
route the routing can take (:func:`law_routes`), so every curve is sampled
alike up to and past its saturation; an adaptive routing has no such law, so
UGAL's loads are fractions of the larger of the minimal and Valiant bounds
and its zero-load latency is minimal's (an empty network keeps it minimal).
The saturation throughput is the accepted load at the knee (:func:`knee`,
:func:`past_knee`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..infra.fileio import save_figure, write_csv
from ..infra.progress import Progress
from ..infra.stats import t_half_width
from ..outputs.report import Claim, Report, Table
from ..outputs.report import readings_table as report_readings
from ..registry import Experiment, register_experiment
from ..sweep.points import run_points
from ..topology.galaxyfly import GLOBAL
from .multicast import across_seeds, run_seed

NAME = "galaxyfly-vs-dragonfly"
PAPER = ("Zhuang, Chang, Li, Song, Lin: All-to-All Broadcast Algorithm in Galaxyfly Networks (Mathematics 2023), "
         "sections 1 and 5 (Table 5); Kim, Dally, Scott, Abts: Technology-Driven, Highly-Scalable Dragonfly "
         "Topology (ISCA 2008)")

#: the Galaxyfly of each mode, (n, q, a): Galaxyfly(3,5,4) of Table 5 (quick), Galaxyfly(4,7,4) (full)
GALAXYFLY = {True: (3, 5, 4), False: (4, 7, 4)}
#: the Galaxyflies of the paper's section 5, for the radix claim (router count and radix only, no runs)
PAPER_GALAXYFLIES = ((3, 5, 4), (4, 5, 4), (4, 5, 5), (4, 7, 4), (3, 5, 8), (4, 7, 5))
#: routings with a route law fixed before the run (bound and zero-load latency exact), then the adaptive one
FIXED = ("minimal", "valiant")
ROUTINGS = FIXED + ("ugal",)
TRAFFICS = ("uniform", "group-shift")
#: the router of every run: 8-flit messages, an 8-flit buffer per VC (a whole message fits in one VC
#: buffer, so a blocked message stops in one router, as in virtual cut-through), no processor start-up,
#: one-cycle links and routers without pipeline delay; vcs: what the routing's hop classes need
ROUTER = {"flits": 8, "buffer_depth": 8, "startup": 0, "router_delay": 0, "link_latency": 1, "credit_delay": 0}
#: offered loads as fractions of each curve's channel-load bound (capped at 1 flit per node per cycle)
FULL_FRACTIONS = (0.1, 0.35, 0.6, 0.8, 0.9, 1.0, 1.1)
QUICK_FRACTIONS = (0.1, 0.6, 1.1)
FULL_SEEDS, QUICK_SEEDS = 3, 2
FULL_CYCLES, QUICK_CYCLES = 5000, 2000
FULL_BATCHES, QUICK_BATCHES = 8, 4
#: a load point whose mean latency exceeds this many times the zero-load latency is past saturation
LATENCY_FACTOR = 3.0
#: "far below": minimal's saturation throughput at most this fraction of Valiant's
FAR_BELOW = 0.5
#: "follows the better": UGAL's saturation throughput at least this fraction of the better fixed routing's
FOLLOWS = 0.9
#: readings of "a Dragonfly of equal router count": name -> the network key
PAIRINGS = {"least radix": "DF", "Table 5": "DF5"}
DEFAULT_PAIRING = "least radix"


# -- the networks --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Network:
    """One network of the comparison: its key in the tables, a label, its spec and why it was chosen."""

    key: str
    label: str
    spec: str
    rule: str


def dragonfly_radix(g: int, a: int) -> int:
    """Network ports of the busiest router of ``dragonfly:g,a`` with the default ``h``: ``a - 1 + ceil((g-1)/a)``."""
    return a - 1 + (math.ceil((g - 1) / a) if g > 1 else 0)


def galaxyfly_radix(n: int, q: int, a: int) -> int:
    """Network ports of the busiest router of ``galaxyfly:n,q,a`` with the default ``h``.

    ``a - 1`` local ports and ``h = ceil(d / a)`` global ones, ``d = (q - delta)/2 + n - 1`` the
    supernode degree (``q = 4l + delta``).
    """
    delta = {1: 1, 3: -1, 0: 0}[q % 4]
    d = (q - delta) // 2 + n - 1
    return a - 1 + (math.ceil(d / a) if d else 0)


def least_radix_dragonfly(routers: int) -> tuple[int, int]:
    """``(g, a)`` of the Dragonfly of ``routers`` routers (``g >= 2`` groups) with the fewest network ports per
    router, ties broken by the least ``|a - 2h|`` (Kim et al.'s balanced Dragonfly has ``a = 2p = 2h``),
    then by fewer groups."""
    options = []
    for g in range(2, routers + 1):
        if routers % g == 0:
            a = routers // g
            h = math.ceil((g - 1) / a)
            options.append((dragonfly_radix(g, a), abs(a - 2 * h), g, a))
    if not options:
        raise ValueError(f"no Dragonfly has {routers} routers")
    _, _, g, a = min(options)
    return g, a


def networks(quick: bool) -> list[Network]:
    """The Galaxyfly of the mode and its two Dragonflies of equal router count."""
    n, q, a = GALAXYFLY[quick]
    routers = n * q * a
    g, da = least_radix_dragonfly(routers)
    return [
        Network("GF", f"Galaxyfly({n},{q},{a})", f"galaxyfly:n={n},q={q},a={a}",
                "the paper's network" + (" (Tables 2-5)" if (n, q, a) in PAPER_GALAXYFLIES else "")),
        Network("DF", f"Dragonfly({g},{da})", f"dragonfly:g={g},a={da}",
                "least radix: of all Dragonflies with this router count, the fewest network ports per router "
                "(ties: the least |a - 2h|)"),
        Network("DF5", f"Dragonfly({n},{q * a})", f"dragonfly:g={n},a={q * a}",
                "Table 5: the paper's comparator, one group per Galaxyfly cluster (g = n, a = q*a)"),
    ]


def structure(topology) -> dict:
    """Router count, ports and links of a built network, and its diameter and mean distance."""
    from ..topology.metrics import average_distance, diameter

    degree = np.diff(topology.indptr)
    glob = topology.arc_labels == GLOBAL
    return {"routers": int(topology.num_nodes), "radix": int(degree.max()), "mean_ports": float(degree.mean()),
            "links": int(topology.num_arcs // 2), "global_links": int(np.count_nonzero(glob) // 2),
            "groups": int(topology.num_nodes // int(topology.meta["routers_per_supernode"])),
            "diameter": int(diameter(topology)), "mean_distance": float(average_distance(topology))}


# -- what a routing does with a traffic pattern, exactly ---------------------------------------------
def law_routes(topology, routing: str, traffic: str) -> dict:
    """Every route a message can take under ``routing`` and ``traffic``, with its probability.

    The pattern's law (:func:`~topocast.algorithms.unicast_traffic.pattern_law`) gives each source's
    destinations; Valiant adds every intermediate group the routing may draw (uniform among the groups other
    than the source's and the destination's; none when there is no such group).  Routes are the engine's own
    (:func:`~topocast.algorithms.unicast_routing.minimal_routes`).  Returns ``gamma`` (expected messages
    crossing each arc per message injected per node, the channel load of
    :mod:`~topocast.algorithms.unicast_bounds`), ``bound`` (``1 / max gamma``) and the hop count and
    probability of every route (``hops``, ``weight``; the weights of one source sum to one).  Uniform
    traffic enumerates all ``N^2`` pairs, Valiant every intermediate group of each: meant for the few hundred
    routers of this comparison (112 routers: 0.3 million Valiant routes, well under a second).
    """
    from ..algorithms.unicast_bounds import explicit_pairs, law_loads, supernode_valiant_law
    from ..algorithms.unicast_routing import minimal_routes
    from ..algorithms.unicast_traffic import pattern_law

    src, dst, weight, dense = pattern_law(traffic, topology)
    src, dst, weight = explicit_pairs(topology.num_nodes, src, dst, weight, dense)
    if routing == "minimal":
        ptr, _, arc = minimal_routes(topology, src, dst)
    else:
        ptr, arc, weight = supernode_valiant_law(topology, src, dst, weight)
    hops = np.diff(ptr) - 1
    gamma = law_loads(topology, ptr, arc, weight)
    return {"gamma": gamma, "bound": float(1.0 / gamma.max()), "hops": hops, "weight": weight,
            "mean_hops": float(np.dot(hops, weight) / weight.sum())}


def route_law_latency(hops: np.ndarray, weight: np.ndarray, router: dict) -> float:
    """The mean over a route law of the engine's closed form for a message alone (cycles).

    Each route's lone-worm time (:func:`topocast.sim.models.lone_tail_time`) plus the start-up,
    weighted by the route's probability: the zero-load latency of the law, computed without a run
    (a run's own is :func:`topocast.measure.wormhole.zero_load_latency`).

    Parameters
    ----------
    hops, weight : numpy.ndarray
        Hop count and probability of every route of the law.
    router : dict
        The router's ``startup``, ``flits``, ``buffer_depth``, ``router_delay``, ``link_latency``,
        ``credit_delay``.

    Returns
    -------
    float
        Cycles.
    """
    from ..sim.models import RouterConfig, lone_tail_time

    config = RouterConfig(**{k: router[k] for k in ("startup", "flits", "buffer_depth", "router_delay",
                                                    "link_latency", "credit_delay")})
    each = config.startup + lone_tail_time(hops, hops, config)
    return float(np.dot(each, weight) / weight.sum())


def offered_loads(bound: float, fractions) -> list[float]:
    """The offered loads of a curve: ``fractions`` of its bound, at most 1 flit per node per cycle, distinct."""
    return sorted({min(1.0, float(f"{f * bound:.4g}")) for f in fractions})


# -- compute -------------------------------------------------------------------------------------
def one_run(r: dict) -> dict:
    """What this report keeps of one run (one seed)."""
    return {"mean_latency": r["mean_latency"], "ci95": r["ci95_latency"], "saturated": r["saturated"],
            "accepted": r["accepted_load"], "verified": r["verified"], "first_violation": r["first_violation"],
            "measured": r["measured_messages"], "zero_load_latency": r["zero_load_latency"],
            "mean_hops": r["mean_hops"], "vcs": r["params"]["vcs"] or r["vcs_needed"]}


def past_knee(point: dict, zero_load: float) -> bool:
    """A load point at or past saturation: at least half of its seeds saturated (the adapter's rule per seed:
    more than 1% of the measured messages unfinished, or the latency still growing), or its mean latency
    above :data:`LATENCY_FACTOR` times the zero-load latency.

    The second test is there because the first misses the usual way these networks saturate: one hot channel
    that carries a few percent of the messages.  Those messages queue without bound while the rest flow, so
    the accepted load and the mean latency of a few thousand cycles barely move (Dragonfly(16,7), Valiant,
    group-shift at 1.1 x its channel-load bound: accepted 0.59 > the bound 0.54, one seed of three flagged,
    mean latency 4 x zero-load)."""
    return 2 * point["saturated_seeds"] >= point["seeds"] or point["mean_latency"] > LATENCY_FACTOR * zero_load


def knee(points: list[tuple[float, dict]], zero_load: float) -> dict:
    """The saturation rule of a curve (points sorted by offered load).

    The knee is the last load before the first point past saturation (:func:`past_knee`).  The saturation
    throughput is the accepted load at the knee (mean over seeds, with its across-seed interval); the
    saturating offered load lies between the knee and the first point past it.  ``reached`` is False when
    no point is past it (the throughput is then a lower bound) and ``knee`` None when even the first is.
    """
    first = next((i for i, (_, p) in enumerate(points) if past_knee(p, zero_load)), None)
    last = (len(points) if first is None else first) - 1
    if last < 0:
        return {"knee": None, "throughput": 0.0, "ci": float("nan"), "first_saturated": points[0][0],
                "reached": True}
    load, p = points[last]
    return {"knee": load, "throughput": p["accepted"], "ci": p["accepted_ci"],
            "first_saturated": None if first is None else points[first][0], "reached": first is not None}


def summarise(runs: list[dict]) -> dict:
    """One load point from its seeds (:func:`one_run` dicts): :func:`~topocast.experiments.multicast.across_seeds`
    plus the accepted load's across-seed interval, the sampled zero-load latency and the VCs used."""
    point = across_seeds(runs)
    point["accepted_ci"] = t_half_width([r["accepted"] for r in runs])
    point["zero_load_sampled"] = float(np.mean([r["zero_load_latency"] for r in runs]))
    point["vcs"] = runs[0]["vcs"]
    return point


def measure(quick: bool, progress: Progress, seed: int = 0) -> dict:
    """Every network, routing and traffic: the exact route law (bound, zero-load latency), then the load sweep."""
    from ..spec import build

    nets = networks(quick)
    fractions = QUICK_FRACTIONS if quick else FULL_FRACTIONS
    seeds = QUICK_SEEDS if quick else FULL_SEEDS
    cycles = QUICK_CYCLES if quick else FULL_CYCLES
    batches = QUICK_BATCHES if quick else FULL_BATCHES
    info, laws = {}, {}
    for net in nets:
        topology = build(net.spec)
        info[net.key] = structure(topology)
        for traffic in TRAFFICS:
            for routing in FIXED:
                law = law_routes(topology, routing, traffic)
                laws[net.key, routing, traffic] = {
                    "bound": law["bound"], "mean_hops": law["mean_hops"],
                    "zero_load": route_law_latency(law["hops"], law["weight"], ROUTER),
                    "loads": offered_loads(law["bound"], fractions)}
            m, v = laws[net.key, "minimal", traffic], laws[net.key, "valiant", traffic]
            laws[net.key, "ugal", traffic] = dict(m, bound=None,
                                                  loads=offered_loads(max(m["bound"], v["bound"]), fractions))
    jobs, keys = [], []
    for i, net in enumerate(nets):
        for j, routing in enumerate(ROUTINGS):
            for k, traffic in enumerate(TRAFFICS):
                for li, load in enumerate(laws[net.key, routing, traffic]["loads"]):
                    for rep in range(seeds):
                        params = dict(ROUTER, routing=routing, traffic=traffic, load=load, cycles=cycles,
                                      batches=batches)
                        jobs.append((net.spec, "unicast", params, run_seed(seed, i, j, k, li, rep)))
                        keys.append((net.key, routing, traffic, load, rep))
    results = run_points(jobs, workers=1 if quick else 2, progress=progress, description="unicast load points")
    runs = {key: dict(one_run(r), seed=job[3]) for key, job, r in zip(keys, jobs, results, strict=True)}
    grouped: dict = {}
    for (name, routing, traffic, load, _), one in runs.items():
        grouped.setdefault((name, routing, traffic, load), []).append(one)
    points = {key: summarise(group) for key, group in grouped.items()}
    curves = {}
    for (name, routing, traffic), law in laws.items():
        pts = [(load, points[name, routing, traffic, load]) for load in law["loads"]]
        curves[name, routing, traffic] = dict(law, **knee(pts, law["zero_load"]), low=pts[0][1], low_load=pts[0][0],
                                             vcs=pts[0][1]["vcs"])
    return {"networks": nets, "info": info, "curves": curves, "points": points, "runs": runs, "quick": quick,
            "seeds": seeds, "cycles": cycles, "batches": batches, "fractions": fractions, "seed": seed,
            "radix": radix_evidence()}


def radix_evidence() -> list[dict]:
    """Per Galaxyfly of the paper: its router count, its radix and the least radix of a Dragonfly of that count."""
    rows = []
    for n, q, a in PAPER_GALAXYFLIES:
        routers = n * q * a
        g, da = least_radix_dragonfly(routers)
        rows.append({"galaxyfly": (n, q, a), "routers": routers, "radix": galaxyfly_radix(n, q, a),
                     "dragonfly": (g, da), "dragonfly_radix": dragonfly_radix(g, da),
                     "table5_radix": dragonfly_radix(n, q * a)})
    return rows


# -- tables --------------------------------------------------------------------------------------
def _f(x, digits: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _pm(x: float, ci: float, digits: int = 3) -> str:
    return f"{x:.{digits}f} ±{ci:.{digits}f}" if math.isfinite(ci) else f"{x:.{digits}f}"


def networks_table(ev: dict) -> Table:
    table = Table("Networks of equal router count",
                  ["key", "network", "spec", "routers", "groups", "radix (network ports, max)", "ports (mean)",
                   "links", "global links", "diameter", "mean distance", "chosen as"], [], key="networks")
    for net in ev["networks"]:
        s = ev["info"][net.key]
        table.rows.append([net.key, net.label, net.spec, s["routers"], s["groups"], s["radix"],
                           round(s["mean_ports"], 3), s["links"], s["global_links"], s["diameter"],
                           round(s["mean_distance"], 4), net.rule])
    table.notes.append("routers are the terminals: every router sends and receives (p = 1 terminal per router, "
                       "metadata only); radix counts network ports, not the terminal port")
    table.notes.append("no Dragonfly reaches the Galaxyfly's router count with its radix (see the radix table); "
                       "the least-radix Dragonfly is the closest in router cost")
    return table


def saturation_table(ev: dict) -> Table:
    frac = ev["fractions"]
    table = Table("Saturation throughput and zero-load latency",
                  ["network", "routing", "traffic", "VCs", "mean hops", "zero-load latency (cycles)",
                   f"latency at {frac[0]:g} x bound (cycles)", "saturation throughput (flits/router/cycle)",
                   "first load past the knee", "channel-load bound", "saturation / bound"], [], key="saturation")
    label = {net.key: net.label for net in ev["networks"]}
    spec = {net.key: net.spec for net in ev["networks"]}
    tidy = []
    for (net, routing, traffic), c in ev["curves"].items():
        low = c["low"]
        tidy.append([label[net], spec[net], routing, traffic, c["vcs"], c["mean_hops"], c["zero_load"], c["low_load"],
                     low["mean_latency"], low["ci95"], c["throughput"], c["ci"], c["knee"], c["reached"],
                     c["first_saturated"], c["bound"], _over(c)])
        thr = _pm(c["throughput"], c["ci"]) if c["knee"] is not None else "0 (first load saturated)"
        if not c["reached"] and c["knee"] is not None:
            thr = ">= " + thr
        table.rows.append([label[net], routing, traffic, c["vcs"], round(c["mean_hops"], 4), round(c["zero_load"], 3),
                           "sat" if low["saturated"] else _pm(low["mean_latency"], low["ci95"], 2),
                           thr, "none up to 1" if c["first_saturated"] is None else c["first_saturated"],
                           "—" if c["bound"] is None else round(float(c["bound"]), 4),
                           "—" if (over := _over(c)) is None else round(over, 3)])
    table.tidy = (["network", "spec", "routing", "traffic", "vcs", "mean_hops", "zero_load_latency_cycles",
                   "low_load_flits_per_router_cycle", "low_load_latency_cycles", "ci95_low_load_latency_cycles",
                   "saturation_throughput_flits_per_router_cycle", "ci95_saturation_throughput", "knee_load",
                   "saturation_reached", "first_load_past_knee", "channel_load_bound", "saturation_over_bound"], tidy)
    table.notes.append("saturation throughput: the accepted load (mean over seeds ± 95% across seeds) at the knee, "
                       "the highest offered load below the first point past saturation; a point is past it when at "
                       "least half its seeds are saturated (more than 1% of the measured messages unfinished, or the "
                       f"latency still growing) or its mean latency exceeds {LATENCY_FACTOR:g} x the zero-load "
                       "latency; the saturating offered load lies between the knee and the first point past it. "
                       "'>=': no load up to 1 flit per router per cycle (a router's injection limit) is past it")
    table.notes.append("zero-load latency: the engine's closed form for a message alone, averaged exactly over "
                       "every route the routing can give the pattern (with its probability); mean hops likewise. "
                       "channel-load bound: 1 / max over arcs of the expected messages crossing the arc per "
                       "message injected per router, from the same exact route law (Valiant: every intermediate "
                       "group with its probability). UGAL: no route law before the run, so no bound ('—'); its "
                       "zero-load latency and mean hops are minimal's, what it takes on an empty network")
    return table


def _over(c: dict) -> float | None:
    """A curve's saturation throughput over its channel-load bound (None without a bound)."""
    return None if c["bound"] is None else c["throughput"] / c["bound"]


def curves_table(ev: dict) -> Table:
    table = Table("Latency-throughput curves",
                  ["network", "routing", "traffic", "offered load", "mean latency (cycles)", "accepted load",
                   "saturated seeds", "verified"], [], key="curves")
    label = {net.key: net.label for net in ev["networks"]}
    tidy = []
    for (net, routing, traffic), c in ev["curves"].items():
        for load in c["loads"]:
            p = ev["points"][net, routing, traffic, load]
            table.rows.append([label[net], routing, traffic, load,
                               ("sat " if p["saturated"] else "") + _pm(p["mean_latency"], p["ci95"], 1),
                               _pm(p["accepted"], p["accepted_ci"], 4), f"{p['saturated_seeds']}/{p['seeds']}",
                               p["verified"]])
            tidy.append([label[net], routing, traffic, load, p["mean_latency"], p["ci95"], p["accepted"],
                         p["accepted_ci"], p["saturated"], p["saturated_seeds"], p["seeds"], p["verified"]])
    table.tidy = (["network", "routing", "traffic", "offered_flits_per_node_cycle", "mean_latency_cycles",
                   "ci95_latency_across_seeds_cycles", "accepted_flits_per_node_cycle",
                   "ci95_accepted_across_seeds", "saturated", "saturated_seeds", "seeds", "verified"], tidy)
    table.notes.append("'sat': most seeds saturated; its latency is the mean of what was delivered, not a "
                       "steady state. verified: every message released before the drain window reached its "
                       "destination exactly once in every seed (a saturated seed whose window did not drain "
                       "fails that promise without breaking a delivery rule)")
    return table


def radix_table(ev: dict) -> Table:
    table = Table("Router radix at equal router count (the paper's Galaxyflies)",
                  ["Galaxyfly (n,q,a)", "routers", "Galaxyfly radix", "least-radix Dragonfly (g,a)",
                   "its radix", "radix of Table 5's Dragonfly(n, q*a)"], [], key="radix")
    for r in ev["radix"]:
        table.rows.append(["({},{},{})".format(*r["galaxyfly"]), r["routers"], r["radix"],
                           "({},{})".format(*r["dragonfly"]), r["dragonfly_radix"], r["table5_radix"]])
    table.notes.append("every radix here is computed by us (the paper prints none); "
                       "radix: network ports of the busiest router with the default h (Galaxyfly: a - 1 + "
                       "ceil(d/a), d = (q - delta)/2 + n - 1; Dragonfly: a - 1 + ceil((g-1)/a)); the least-radix "
                       "Dragonfly is found by trying every (g, a) with g*a routers")
    return table


# -- claims --------------------------------------------------------------------------------------
def _curve(ev, net, routing, traffic) -> dict:
    return ev["curves"][net, routing, traffic]


def _thr(c: dict) -> str:
    if c["knee"] is None:
        return f"sat at {c['first_saturated']}"
    return ("> " if not c["reached"] else "") + f"{c['throughput']:.3f}"


def _lower_latency(ev, pairing: str, routing: str) -> tuple[bool, str]:
    df = PAIRINGS[pairing]
    gf, dd = _curve(ev, "GF", routing, "uniform"), _curve(ev, df, routing, "uniform")
    ok = dd["zero_load"] < gf["zero_load"] and dd["low"]["mean_latency"] < gf["low"]["mean_latency"]
    return ok, (f"{routing}, uniform: zero-load {dd['zero_load']:.2f} (Dragonfly) vs {gf['zero_load']:.2f} "
                f"(Galaxyfly) cycles; measured at {ev['fractions'][0]:g} x bound {dd['low']['mean_latency']:.2f} vs "
                f"{gf['low']['mean_latency']:.2f}")


def _throughput_at_least(ev, pairing: str, per: str) -> tuple[bool, str]:
    df = PAIRINGS[pairing]
    gf, dd = _curve(ev, "GF", "minimal", "uniform"), _curve(ev, df, "minimal", "uniform")
    scale = {k: (ev["info"][k]["routers"] / ev["info"][k]["links"] if per == "per link" else 1.0)
             for k in ("GF", df)}
    g, d = gf["throughput"] * scale["GF"], dd["throughput"] * scale[df]
    ok = gf["knee"] is not None and (g >= d or (not gf["reached"] and dd["reached"]))
    if dd["knee"] is not None and not dd["reached"] and gf["reached"]:
        ok = False  # the Dragonfly never saturated: its throughput is only bounded below, and already above
    unit = "flits/link/cycle" if per == "per link" else "flits/router/cycle"
    return ok, (f"minimal, uniform, {per}: Galaxyfly {_thr(gf)} -> {g:.4f} {unit}, Dragonfly {_thr(dd)} -> "
                f"{d:.4f} {unit}")


def _minimal_below_valiant(ev, net: str) -> tuple[bool, str]:
    m, v = _curve(ev, net, "minimal", "group-shift"), _curve(ev, net, "valiant", "group-shift")
    ratio = m["throughput"] / v["throughput"] if v["throughput"] > 0 else math.inf
    ok = ratio <= FAR_BELOW and m["reached"]
    return ok, (f"minimal {_thr(m)} (bound {m['bound']:.3f}), valiant {_thr(v)} (bound {v['bound']:.3f}); "
                f"minimal / valiant {ratio:.2f}")


#: how a claim's verdicts combine: over the readings of an open choice (the default reading decides), or over
#: the cases a claim speaks of all at once (every network: each must hold)
READINGS, CASES = "readings", "cases"


def verdicts(ev: dict) -> list[tuple[str, dict[str, tuple[bool, str]], str]]:
    """Every claim with its verdict and evidence per reading (or per case), in the report's order."""
    label = {net.key: net.label for net in ev["networks"]}
    out = []
    radix = {"Galaxyfly({},{},{})".format(*r["galaxyfly"]): (
        r["radix"] < r["dragonfly_radix"],
        "{} routers: radix {} against at least {} (Dragonfly({},{})), Table 5's {}".format(
            r["routers"], r["radix"], r["dragonfly_radix"], *r["dragonfly"], r["table5_radix"]))
        for r in ev["radix"]}
    out.append(("Galaxyfly reaches its router count with lower-radix routers than any Dragonfly (the paper's "
                "'flexible-radix', 'reducing high-radix routers')", radix, CASES))
    out.append(("At equal router count the Dragonfly has a lower latency than the Galaxyfly (the paper puts "
                "Table 5's gap on the diameters, 3 against 5)",
                {f"{p}, {r}": _lower_latency(ev, p, r) for p in PAIRINGS for r in FIXED}, READINGS))
    out.append(("Under uniform traffic and minimal routing the Galaxyfly's saturation throughput is at least the "
                "Dragonfly's of equal router count (high bandwidth from the lower-radix network)",
                {f"{p}, {per}": _throughput_at_least(ev, p, per) for p in PAIRINGS
                 for per in ("per router", "per link")}, READINGS))
    out.append((f"Under adversarial group-shift traffic minimal routing saturates far below Valiant routing (at "
                f"most {FAR_BELOW:g} x its saturation throughput; Kim et al. 2008), on the Galaxyfly and on the "
                "Dragonflies",
                {label[net.key]: _minimal_below_valiant(ev, net.key) for net in ev["networks"]}, CASES))
    out.append(("Under uniform traffic Valiant routing saturates below minimal routing (it crosses about twice the "
                "global links)",
                {label[net.key]: (lambda m, v: (v["throughput"] < m["throughput"],
                                                f"uniform: minimal {_thr(m)}, valiant {_thr(v)}"))(
                    _curve(ev, net.key, "minimal", "uniform"), _curve(ev, net.key, "valiant", "uniform"))
                 for net in ev["networks"]}, CASES))
    bound_ok = {}
    for net in ev["networks"]:
        rows = [(r, t, _curve(ev, net.key, r, t)) for r in FIXED for t in TRAFFICS]
        bound_ok[label[net.key]] = (all(c["knee"] is None or c["throughput"] <= c["bound"] + _slack(c)
                                        for _, _, c in rows),
                                    "; ".join(f"{r}/{t} {c['throughput']:.3f} <= {c['bound']:.3f}"
                                              for r, t, c in rows))
    out.append(("(model check) Every measured saturation throughput is at or below its channel-load bound (within "
                "its across-seed interval)",
                bound_ok, CASES))
    out.append((f"UGAL-L follows the better fixed routing: its saturation throughput is at least {FOLLOWS:g} x the "
                "larger of minimal's and Valiant's, under uniform and under group-shift traffic (Kim et al. 2008, "
                "section 4.2)",
                {f"{label[net.key]}, {t}": _ugal_follows(ev, net.key, t) for net in ev["networks"] for t in TRAFFICS},
                CASES))
    return out


def _ugal_follows(ev, net: str, traffic: str) -> tuple[bool, str]:
    u, m, v = (_curve(ev, net, r, traffic) for r in ("ugal", "minimal", "valiant"))
    best = max(m["throughput"], v["throughput"])
    ok = u["knee"] is not None and u["throughput"] >= FOLLOWS * best - _slack(u)
    return ok, (f"ugal {_thr(u)} against minimal {_thr(m)}, valiant {_thr(v)}"
                + (f" ({u['throughput'] / best:.2f} x the better)" if best > 0 else ""))


def _slack(c: dict) -> float:
    """The across-seed half-width of a curve's saturation throughput (0 when there is none)."""
    return c["ci"] if math.isfinite(c["ci"]) else 0.0


def _default(readings: dict) -> str:
    """The reading a claim's own verdict is taken under: the least-radix pairing where the claim has it."""
    for name in readings:
        if name.startswith(DEFAULT_PAIRING):
            return name
    return next(iter(readings))


def claims(ev: dict) -> list[Claim]:
    """The claims; a claim over readings takes the default pairing's verdict and keeps every reading's, a claim
    over cases holds when every case does."""
    out = []
    for text, cases, kind in verdicts(ev):
        if kind == CASES:
            out.append(Claim(text, all(ok for ok, _ in cases.values()),
                             " | ".join(f"{k}: {v[1]}" for k, v in cases.items())))
            continue
        main = _default(cases)
        out.append(Claim(text, cases[main][0], f"{main}: {cases[main][1]}",
                         readings={k: v[0] for k, v in cases.items()}))
    return out


def readings_table(ev: dict) -> Table:
    return report_readings("Claims under every reading", ((text, cases) for text, cases, _ in verdicts(ev)),
                           "readings: the Dragonfly of equal router count (least radix, the default; Table 5's "
                           "Dragonfly(n, q*a)), the routing, and for throughput per router or per link (equal cost "
                           "read as equal links); a claim about every network (or every Galaxyfly of the paper) "
                           "holds when it holds on each of them")


def tables(ev: dict) -> list[Table]:
    return [networks_table(ev), saturation_table(ev), curves_table(ev), radix_table(ev), readings_table(ev)]


def notes(ev: dict) -> list[str]:
    r = ROUTER
    points = ev["points"]
    broken = [(k, p["first_violation"]) for k, p in points.items()
              if not p["verified"] and "did not drain" not in (p["first_violation"] or "")]
    undrained = sum(1 for p in points.values() if not p["verified"]) - len(broken)
    delivery = (f"VERIFICATION FAILED at {broken[:3]}" if broken else
                "no delivery rule broken in any run (no second copy, no lost message, no deadlock)"
                + (f"; {undrained} saturated load points have a seed whose window did not drain" if undrained else ""))
    return [
        f"{'quick' if ev['quick'] else 'full'} run: {ev['seeds']} seeds per load point, {ev['cycles']} cycles per "
        f"seed, {ev['batches']} batches; offered loads {', '.join(f'{f:g}' for f in ev['fractions'])} x each "
        "curve's channel-load bound (at most 1 flit per router per cycle)",
        f"router: {r['flits']}-flit messages, {r['buffer_depth']}-flit buffer per virtual channel (a message fits "
        f"in one buffer: a blocked message stops in one router, as in virtual cut-through, so wormhole blocking "
        f"across routers does not penalise the longer-path network), start-up {r['startup']}, router delay "
        f"{r['router_delay']}, link latency {r['link_latency']}, credit delay {r['credit_delay']}; VCs: the "
        "hop classes the routing needs (one per hop of the longest route), so a network with longer routes also "
        "gets more VCs per link",
        "traffic is per router: the topologies' nodes are routers, each one terminal (p = 1, metadata); "
        "group-shift sends every router of group (supernode) i to a uniformly drawn router of group i + 1 (mod "
        "the groups); Valiant draws an intermediate group uniformly among those other than the source's and "
        "the destination's (Kim et al. 2008); UGAL-L (threshold 0) gives every message both of those routes and "
        "its source router takes the Valiant one when hops x flits queued on its first link are smaller than "
        "minimal's, in the cycle the header enters the router; its VCs cover the longer route's hops, and its "
        "offered loads are fractions of the larger of minimal's and Valiant's bounds",
        delivery,
    ]


# -- figure ----------------------------------------------------------------------------------------
RUNS_HEADER = ["network", "spec", "routing", "traffic", "offered_flits_per_node_cycle", "replication", "seed",
               "mean_latency_cycles", "ci95_latency_batch_means_cycles", "saturated", "measured_messages",
               "accepted_flits_per_node_cycle", "zero_load_latency_sampled_cycles", "verified"]


def write_files(ev: dict, out: Path) -> tuple[list[Path], list[Path]]:
    """Every seed's run as CSV and the latency-throughput figure: ``(figures, data files)``."""
    spec = {net.key: net for net in ev["networks"]}
    rows = [[spec[net].label, spec[net].spec, routing, traffic, load, rep, r["seed"], r["mean_latency"], r["ci95"],
             r["saturated"], r["measured"], r["accepted"], r["zero_load_latency"], r["verified"]]
            for (net, routing, traffic, load, rep), r in ev["runs"].items()]
    return [plot(ev, out)], [write_csv(out / f"{NAME}_runs.csv", RUNS_HEADER, rows)]


def plot(ev: dict, out: Path) -> Path:
    """Mean latency against accepted load, one panel per (traffic, routing), one curve per network: filled
    markers up to the knee, open ones past it (while most seeds still drain), the saturation throughput as a
    cross at the knee's latency, the channel-load bound dotted."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(TRAFFICS), len(ROUTINGS), figsize=(15, 8))
    markers = {"GF": "o", "DF": "s", "DF5": "^"}
    for row, traffic in enumerate(TRAFFICS):
        for col, routing in enumerate(ROUTINGS):
            ax = axes[row][col]
            top = 0.0
            for i, net in enumerate(ev["networks"]):
                color = f"C{i}"
                c = _curve(ev, net.key, routing, traffic)
                pts = [(load, ev["points"][net.key, routing, traffic, load]) for load in c["loads"]]
                pts = [(load, p) for load, p in pts if not p["saturated"]]
                below = [p for load, p in pts if c["knee"] is not None and load <= c["knee"]]
                past = [p for load, p in pts if c["knee"] is None or load > c["knee"]]
                for group, face, style in ((below, color, "-"), (past, "white", "--")):
                    if not group:
                        continue
                    err = [p["ci95"] if math.isfinite(p["ci95"]) else 0.0 for p in group]
                    ax.errorbar([p["accepted"] for p in group], [p["mean_latency"] for p in group], yerr=err,
                                fmt=markers[net.key] + style, color=color, markerfacecolor=face, markersize=4,
                                capsize=2, linewidth=1,
                                label=f"{net.label}, radix {ev['info'][net.key]['radix']}" if face == color else None)
                top = max([top] + [p["mean_latency"] for _, p in pts])
                if c["bound"] is not None:
                    ax.axvline(min(c["bound"], 1.0), color=color, linestyle=":", linewidth=1)
                if below:
                    ax.plot([c["throughput"]], [below[-1]["mean_latency"]], "x", color=color, markersize=9)
            ax.set_ylim(0, top * 1.1 if top else 1.0)
            ax.set_xlim(0, None)
            ax.set_title(f"{traffic} traffic, {routing} routing", fontsize=9)
            ax.set_xlabel("accepted load (flits/router/cycle)")
            ax.set_ylabel("mean latency (cycles)")
            ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"Galaxyfly vs Dragonfly of equal router count{' (quick)' if ev['quick'] else ''}: 95% CI across "
                 f"{ev['seeds']} seeds; open markers: past the knee; x: saturation throughput; dotted: channel-load "
                 "bound", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, out / f"{NAME}_latency.png")


def build_report(ev: dict, out: Path | None = None) -> Report:
    """Tables, claims and notes of measured evidence; with ``out``, the runs CSV and the figure too."""
    report = Report(NAME, "Galaxyfly against Dragonfly of equal router count under unicast traffic", tables(ev),
                    claims(ev), notes=notes(ev))
    if out is not None:
        figures, files = write_files(ev, Path(out))
        report.figures += figures
        report.files += files
    return report


def run(quick: bool = False, out: Path | None = None, progress: Progress | None = None, seed: int = 0) -> Report:
    """The comparison: networks, saturation and zero-load latency, curves, radix, claims; runs CSV and figure."""
    return build_report(measure(quick, progress or Progress(enabled=False), seed), out)


register_experiment(Experiment(NAME, run, "Galaxyfly vs Dragonfly of equal router count: unicast latency-throughput "
                               "curves, minimal and Valiant routing, uniform and group-shift traffic", paper=PAPER,
                               weight=7.6))
