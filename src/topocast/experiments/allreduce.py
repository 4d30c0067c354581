"""``topocast reproduce allreduce``: which allreduce wins on which network, at small and large vectors.

Every registered allreduce that runs on a network (ring, halving-doubling and
BFS tree everywhere; the torus method on tori, binomial on hypercubes,
hierarchical on Dragonfly, Galaxyfly, HDN and fat trees) runs on the event
engine under one cost model, verified exactly once per contribution, beside
the run's lower bound.  The networks are the seeds' (Galaxyfly, HDN, EJ) and
the classics (Dragonfly, torus, hypercube, a generalized fat tree) at about
the same node count; on the fat tree the processors are the nodes that count
(the switches relay or add), so only the methods that reduce over the
processors run there (the hierarchical rings and the in-network reduction).
Three closed forms (Patarasuk and Yuan 2009 for the ring; Thakur,
Rabenseifner and Gropp 2005 for halving-doubling; the in-network reduction's)
are checked where the network carries them one hop per transfer, and two
textbook claims get a verdict from the runs.
"""

from __future__ import annotations

from ..algorithms.in_network import in_network_allreduce_time
from ..algorithms.reductions import halving_doubling_time, ring_allreduce_time
from ..api import run
from ..errors import TopocastError
from ..infra.progress import Progress
from ..outputs.report import Claim, Compare, Report, Table
from ..registry import Experiment, algorithm, algorithms, register_experiment
from ..sim.models import CostModel
from ..spec import build

NAME = "allreduce"
COST = CostModel(startup=1e-6, per_byte=1e-10, per_byte_reduce=5e-11)
#: the vectors: a latency-bound and a bandwidth-bound size
SMALL, LARGE = 1024.0, 16.0 * 2 ** 20
NETWORKS_QUICK = ["torus:8x8", "hypercube:6", "galaxyfly:n=3,q=5,a=4", "dragonfly:g=8,a=8", "ej:a=4,b=5,n=1",
                  "hdn:base=K2,k=2,s=2/1", "gft:h=2,m=4,w=4"]
NETWORKS_FULL = ["torus:16x16", "hypercube:8", "galaxyfly:n=3,q=7,a=8", "dragonfly:g=17,a=16",
                 "ej:a=9,b=10,n=1", "hdn:base=K4,k=2,s=4/1", "gft:h=4,m=4,w=1"]
#: pipeline stages of the tree methods (and of :data:`PIPELINED`) at each size
TREE_CHUNKS = {SMALL: 1, LARGE: 16}
#: methods other than the trees that pipeline in chunks
PIPELINED = ("allreduce-in-network",)


def size_text(nbytes: float) -> str:
    """``1 KiB``, ``16 MiB``: a vector size as people say it."""
    for unit, scale in (("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes:g} B"


def candidates(topology) -> list[str]:
    """The allreduce algorithms registered for ``topology``'s family (or for any network); on a network with
    processors (a fat tree) only those registered for its family, which reduce over the processors."""
    with_processors = "processors" in topology.meta
    return sorted(a.name for a in algorithms() if a.collective == "allreduce" and "event" in a.engines
                  and (topology.family in a.families if (a.families or with_processors) else True))


def contributors(topology) -> int:
    """The nodes whose vectors are summed: a fat tree's processors, else every node."""
    return int(topology.meta.get("processors", topology.num_nodes))


def _params(name: str, nbytes: float) -> dict:
    kwargs = {"message_bytes": nbytes, "startup": COST.startup, "per_byte": COST.per_byte,
              "per_byte_reduce": COST.per_byte_reduce}
    if any(p.name == "chunks" for p in algorithm(name).params) and ("tree" in name or name in PIPELINED):
        kwargs["chunks"] = TREE_CHUNKS[nbytes] * (2 if "double" in name else 1)
    return kwargs


def measure(quick: bool, progress: Progress) -> list[dict]:
    """Run every candidate on every network at both sizes (event engine)."""
    cases = [(spec, size) for spec in (NETWORKS_QUICK if quick else NETWORKS_FULL) for size in (SMALL, LARGE)]
    rows = []
    for spec, size in progress.track(cases, "allreduce"):
        topology = build(spec)
        for name in candidates(topology):
            try:
                result = run(topology, name, engine="event", **_params(name, size))
            except TopocastError:  # the method does not fit this network (Swing: a side not a power of two)
                continue
            rows.append({"spec": spec, "family": topology.family, "nodes": contributors(topology), "bytes": size,
                         "algorithm": name, "chunks": int(_params(name, size).get("chunks", 1)),
                         "verified": bool(result.verified),
                         "time_us": result.metrics["time"] * 1e6,
                         "bound_us": result.metrics["lower_bound"] * 1e6,
                         "bound_kind": result.metrics["lower_bound_kind"]})
    return rows


def closed_form(row: dict) -> float | None:
    """The textbook time where the run carries each logical transfer over one link, else None."""
    n, m = row["nodes"], row["bytes"]
    gamma = COST.per_byte_reduce
    if row["algorithm"] == "allreduce-ring" and row["family"] in ("torus", "hypercube"):
        return ring_allreduce_time(n, m, COST.startup, COST.per_byte, gamma) * 1e6
    if row["algorithm"] == "allreduce-halving-doubling" and row["family"] == "hypercube":
        return halving_doubling_time(n, m, COST.startup, COST.per_byte, gamma) * 1e6
    if row["algorithm"] == "allreduce-in-network" and row.get("chunks", 1) == 1:
        h, fan, w = (int(build(row["spec"]).params[k]) for k in ("h", "m", "w"))
        return in_network_allreduce_time(h, fan, w, m, COST.startup, COST.per_byte, gamma) * 1e6
    return None


def winners(rows: list[dict]) -> dict[tuple[str, float], dict]:
    """The fastest verified algorithm per (network, size)."""
    best: dict[tuple[str, float], dict] = {}
    for r in rows:
        key = (r["spec"], r["bytes"])
        if r["verified"] and (key not in best or r["time_us"] < best[key]["time_us"]):
            best[key] = r
    return best


def runs_table(rows: list[dict]) -> Table:
    out = []
    for r in rows:
        form = closed_form(r)
        time = Compare(round(r["time_us"], 6), round(form, 6), rel_tol=1e-9, kind="closed_form") \
            if form is not None else round(r["time_us"], 3)
        out.append([r["spec"], r["nodes"], size_text(r["bytes"]), r["algorithm"], "yes" if r["verified"] else "NO",
                    time, round(r["bound_us"], 3), r["bound_kind"], round(r["time_us"] / r["bound_us"], 2)])
    return Table("Allreduce: every algorithm on every network (event engine, us)",
                 ["network", "N", "vector", "algorithm", "verified", "time us | closed form", "lower bound us",
                  "binding bound", "time / bound"], out, key="runs",
                 notes=[f"cost model: alpha = {COST.startup * 1e6:g} us, beta = {COST.per_byte * 1e9:g} ns/B, "
                        f"gamma = {COST.per_byte_reduce * 1e9:g} ns/B, all-port, full duplex, store-and-forward",
                        "closed forms (ring: Patarasuk and Yuan 2009; halving-doubling: Thakur, Rabenseifner and "
                        "Gropp 2005) evaluated by us where every logical transfer is one hop: a closed-form "
                        "check, not a printed value"])


def winners_table(rows: list[dict]) -> Table:
    best = winners(rows)
    out = []
    for (spec, size), r in best.items():
        ring = next((x for x in rows if x["spec"] == spec and x["bytes"] == size
                     and x["algorithm"] == "allreduce-ring"), None)
        out.append([spec, r["nodes"], size_text(size), r["algorithm"], round(r["time_us"], 3),
                    round(r["time_us"] / r["bound_us"], 2),
                    round(ring["time_us"] / r["time_us"], 2) if ring else None])
    return Table("Allreduce: the winner per network and vector size", ["network", "N", "vector", "fastest",
                 "time us", "time / bound", "ring / fastest"], out, key="winners")


def _ratio(rows, spec, size, a, b) -> float | None:
    times = {r["algorithm"]: r["time_us"] for r in rows if r["spec"] == spec and r["bytes"] == size}
    return times[a] / times[b] if a in times and b in times else None


def claims(rows: list[dict]) -> list[Claim]:
    specs = sorted({r["spec"] for r in rows})
    small_all = {s: _ratio(rows, s, SMALL, "allreduce-halving-doubling", "allreduce-ring") for s in specs}
    large_all = {s: _ratio(rows, s, LARGE, "allreduce-ring", "allreduce-halving-doubling") for s in specs}
    small: dict[str, float] = {s: v for s, v in small_all.items() if v is not None}
    large: dict[str, float] = {s: v for s, v in large_all.items() if v is not None}
    worst_small = max(small, key=lambda s: small[s])
    worst_large = max(large, key=lambda s: large[s])
    return [
        Claim("At small vectors halving-doubling (log2 N rounds) beats the ring (N-1 rounds) on every network "
              "(Thakur, Rabenseifner and Gropp 2005)", all(v < 1 for v in small.values()),
              f"halving-doubling / ring at {size_text(SMALL)}: worst {small[worst_small]:.2f} on {worst_small}",
              why=f"HD/ring {small[worst_small]:.2f} at worst"),
        Claim("At large vectors the ring is within 10 % of halving-doubling on every network (both move "
              "2 (N-1)/N of the vector; Patarasuk and Yuan 2009)", all(v <= 1.1 for v in large.values()),
              f"ring / halving-doubling at {size_text(LARGE)}: worst {large[worst_large]:.2f} on {worst_large}",
              why=f"ring/HD {large[worst_large]:.2f} at worst"),
        Claim("Every allreduce run delivers every contribution exactly once",
              all(r["verified"] for r in rows), f"{sum(r['verified'] for r in rows)} of {len(rows)} runs verified"),
    ]


def highlights(rows: list[dict]) -> list[str]:
    out = []
    for size in (SMALL, LARGE):
        names: dict[str, list[str]] = {}
        for (spec, s), r in winners(rows).items():
            if s == size:
                names.setdefault(r["algorithm"], []).append(spec.split(":")[0])
        said = "; ".join(f"{a} on {', '.join(sorted(f))}" for a, f in sorted(names.items()))
        out.append(f"fastest allreduce at {size_text(size)}: {said}")
    return out


def run_allreduce(quick: bool = True, out=None, progress: Progress | None = None) -> Report:
    """Every allreduce on the seeds' networks and the classics, small and large vectors, beside the bounds."""
    rows = measure(quick, progress or Progress(enabled=False))
    report = Report(NAME, "Allreduce on the seeds' networks and the classics", [winners_table(rows), runs_table(rows)],
                    claims(rows))
    report.highlights.extend(highlights(rows))
    return report


register_experiment(Experiment(NAME, run_allreduce, "allreduce: which algorithm wins on which network, against "
                               "the bound", paper="Thakur, Rabenseifner and Gropp 2005; Patarasuk and Yuan 2009",
                               weight=3.0))
