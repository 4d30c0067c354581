"""``topocast compare``: several networks side by side, one table and one figure.

Given specs, or a target number of terminals and a router radix (each
family's nearest configuration: :func:`nearest`), every network is built and
measured for the same columns (:data:`COLUMNS`):

* size and cost: routers, terminals, links (``local`` / ``global`` cables
  where the family labels them), links per terminal, ports per router
  (network ports, and with the terminals: the router radix);
* distances between routers (diameter, mean) and between terminals (the
  routers that hold terminals, weighted by their terminals: a terminal pair
  on one router is 0 hops), one breadth-first search per orbit of the
  family's checked automorphisms; Moore-bound efficiency ``N / M(k, D)``
  (``k`` the largest number of distinct neighbours, ``D`` the diameter);
* the bisection interval: the best balanced cut METIS finds (upper) and the
  spectral bound ``ceil(lambda_2 |A||B| / N)`` (lower: exact eigenvalues up to
  3,000 routers, Lanczos with its residual subtracted above, an estimate);
* edge-disjoint paths (max-flow, parallel links counted) between ``pairs``
  sampled pairs of terminal routers: the least and the mean;
* the uniform-traffic throughput bound, in flits per terminal per cycle
  (links carry one flit per cycle each way; a terminal injects at most one):
  the smaller of the *capacity* bound ``2 L / (T H)`` (every message uses at
  least ``H``, the mean terminal distance, of the ``2 L`` channels) and the
  *cut* bound ``c (T - 1) / (T_A T_B)`` of the METIS cut (``c`` links,
  ``T_A``, ``T_B`` terminals on its sides), capped at 1;
* all-gather: the time of the best registered all-gather algorithm that runs
  on the family (event engine, store-and-forward; verified) and its lower
  bound, at a small and a large message per terminal, routers exchanging
  ``p m`` bytes (``p`` the most terminals on a router).  Where only some
  routers hold terminals (fat tree, Dragonfly+) the all-gather is among them
  (``allgather-terminal-routers``, the others relay), its bound the largest
  of the latency, injection and cut bounds of :mod:`topocast.measure.bounds`.
  Allreduce is not in topocast yet (no reductions), nor are faults: neither
  column exists.

Columns above a size cap are left empty and a note says why
(:data:`CAPS`).  Where a value can be checked, the cell holds it beside the
reference (:class:`~topocast.outputs.report.Compare`): the family's closed forms
(``closed_form``) and the few values a topology paper prints for its own
examples (``paper``, cited in :data:`PRINTED`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TopocastError
from .report import Compare, Table

#: the families ``compare --terminals N --radix K`` picks when none is named
DEFAULT_FAMILIES = ("polarfly", "slimfly", "hyperx", "dragonfly-plus", "fattree", "jellyfish")
#: families :func:`nearest` knows how to size
SIZED_FAMILIES = DEFAULT_FAMILIES + ("dragonfly", "galaxyfly", "kautz", "debruijn")
#: the size caps of the heavier columns (routers)
CAPS = {"bisection": 200_000, "spectral": 30_000, "collectives": 5_000, "distances_work": 1e10}
#: default message sizes per terminal (bytes): small and large
MESSAGES = (8.0, 1048576.0)


@dataclass(frozen=True)
class Settings:
    """What ``compare`` measures and how: message sizes per terminal, sampled pairs, seed, which columns."""

    messages: tuple[float, ...] = MESSAGES
    pairs: int = 16
    seed: int = 0
    collectives: bool = True
    bisection: bool = True
    max_memory: float | None = None


# -- the columns ---------------------------------------------------------------------------------------
#: (key, title, unit) of every column of the table, in order
COLUMNS = (
    ("spec", "network", ""),
    ("routers", "routers", ""),
    ("terminals", "terminals", ""),
    ("links", "links", ""),
    ("local_links", "local cables", ""),
    ("global_links", "global cables", ""),
    ("links_per_terminal", "links per terminal", ""),
    ("network_ports", "network ports per router (max)", ""),
    ("radix", "router radix with terminals (max)", ""),
    ("diameter", "diameter (routers)", "hops"),
    ("average_distance", "mean distance (routers)", "hops"),
    ("terminal_diameter", "diameter (terminal routers)", "hops"),
    ("terminal_distance", "mean distance (terminals)", "hops"),
    ("moore_efficiency", "Moore-bound efficiency", ""),
    ("bisection_lower", "bisection lower (spectral)", "links"),
    ("bisection_upper", "bisection upper (METIS)", "links"),
    ("disjoint_paths_min", "edge-disjoint paths (min)", ""),
    ("disjoint_paths_mean", "edge-disjoint paths (mean)", ""),
    ("throughput_bound", "uniform throughput bound", "flits/terminal/cycle"),
    ("throughput_binding", "bound from", ""),
    ("allgather_small", "all-gather small: best", "s"),
    ("allgather_small_bound", "all-gather small: lower bound", "s"),
    ("allgather_large", "all-gather large: best", "s"),
    ("allgather_large_bound", "all-gather large: lower bound", "s"),
    ("allgather_algorithm", "all-gather algorithm", ""),
)

#: values the topology papers print for their own examples: (family, params) -> {column: (value, citation)}
PRINTED: dict[tuple[str, tuple], dict[str, tuple[Any, str]]] = {
    ("slimfly", (("q", 5),)): {
        "routers": (50, "Hoffman and Singleton 1960: the Moore graph of degree 7 has 50 vertices"),
        "network_ports": (7, "Hoffman and Singleton 1960 (degree 7)"),
        "diameter": (2, "Hoffman and Singleton 1960 (diameter 2)"),
        "links": (175, "Hoffman and Singleton 1960 (50 x 7 / 2 edges)"),
    },
}


def moore_bound(k: int, diameter: int) -> int:
    """The Moore bound ``1 + k sum_{i < D} (k - 1)^i``: the most nodes of degree ``k`` within ``D`` hops."""
    return 1 + k * sum((k - 1) ** i for i in range(diameter))


def closed_forms(topology) -> dict[str, tuple[Any, str]]:
    """The family's closed forms for the columns: ``{column: (value, formula)}``."""
    p, m = topology.params, topology.meta
    fam = topology.family
    if fam == "polarfly":
        q = p["q"]
        return {"routers": (q * q + q + 1, "q^2+q+1"), "links": (q * (q + 1) ** 2 // 2, "q(q+1)^2/2"),
                "network_ports": (q + 1, "q+1"), "diameter": (2, "2")}
    if fam == "slimfly":
        q, delta = p["q"], m["delta"]
        return {"routers": (2 * q * q, "2q^2"), "network_ports": ((3 * q - delta) // 2, "(3q-delta)/2"),
                "diameter": (2, "2"), "global_links": (q * q * (q - 1), "q^2 (q-1): 2q per rack pair")}
    if fam == "hyperx":
        s, k = m["S"], m["K"]
        return {"routers": (math.prod(s), "prod S"), "network_ports": (sum((a - 1) * b for a, b in zip(s, k,
                                                                                                       strict=True)),
                                                                       "sum (S-1) K"),
                "diameter": (len(s), "L")}
    if fam == "fattree":
        k, n = p["k"], p["n"]
        return {"routers": (n * k ** (n - 1), "n k^(n-1)"), "terminals": (k ** n, "k^n"),
                "links": ((n - 1) * k ** n, "(n-1) k^n"), "diameter": (2 * (n - 1), "2(n-1)")}
    if fam == "dragonfly-plus":
        return {"routers": (p["g"] * (p["l"] + p["s"]), "g(l+s)"), "terminals": (p["g"] * p["l"] * p["p"], "g l p"),
                "terminal_diameter": (3 if p["g"] > 1 else 2, "leaf-spine-spine-leaf")}
    if fam == "jellyfish":
        return {"routers": (p["n"], "n"), "links": (p["n"] * p["d"] // 2, "n d / 2"), "network_ports": (p["d"], "d")}
    if fam == "kautz":
        return {"routers": ((p["d"] + 1) * p["d"] ** (p["n"] - 1), "(d+1) d^(n-1)")}
    if fam == "debruijn":
        return {"routers": (p["d"] ** p["n"], "d^n")}
    return {}


def references(topology) -> dict[str, tuple[Any, str, str]]:
    """``{column: (value, kind, source)}``: printed values (kind ``paper``) over closed forms (``closed_form``)."""
    out = {k: (v, "closed_form", f) for k, (v, f) in closed_forms(topology).items()}
    printed = PRINTED.get((topology.family, tuple((k, topology.params[k]) for k in ("q",)
                                                   if k in topology.params)), {})
    out.update({k: (v, "paper", c) for k, (v, c) in printed.items()})
    return out


# -- measuring one network ----------------------------------------------------------------------------------
def _orbit_labels(topology) -> np.ndarray | None:
    from .. import registry

    if topology.vertex_transitive:
        return np.zeros(topology.num_nodes, dtype=np.int64)
    family = registry._REG.families.get(topology.family)
    if family is not None and family.orbits is not None:
        return np.asarray(family.orbits(topology), dtype=np.int64)
    return None


def terminal_distances(topology, counts: np.ndarray) -> tuple[int, float]:
    """``(diameter among terminal routers, mean hops over ordered pairs of distinct terminals)``.

    One BFS per class of routers sharing an orbit and a terminal count (every terminal router alone when the
    family has no orbits)."""
    from ..topology.metrics import bfs_distances

    hosts = np.flatnonzero(counts > 0)
    labels = _orbit_labels(topology)
    keys = (labels[hosts] if labels is not None else hosts) * (int(counts.max()) + 1) + counts[hosts]
    _, first, size = np.unique(keys, return_index=True, return_counts=True)
    total = int(counts.sum())
    weighted, far = 0.0, 0
    for rep, many in zip(hosts[first], size, strict=True):
        dist = bfs_distances(topology, int(rep))
        weighted += float(many) * counts[rep] * float(np.dot(counts, dist))
        far = max(far, int(dist[hosts].max()))
    pairs = float(total) * (total - 1)
    return far, float(weighted / pairs) if pairs else 0.0


def spectral_lower(topology) -> tuple[int, str]:
    """``(lower bound on the bisection width, how)``: dense eigenvalues up to 3,000 routers; above, Lanczos on
    ``c I - L`` restricted to the vectors orthogonal to the constant one, its residual norm subtracted."""
    from ..topology.properties import algebraic_connectivity, spectral_lower, weighted_csr

    n = topology.num_nodes
    if n <= 3000:
        return spectral_lower(n, algebraic_connectivity(topology)), "exact lambda_2"
    import scipy.sparse as sp
    from scipy.sparse.linalg import LinearOperator, eigsh

    indptr, indices, weights = weighted_csr(topology)
    adj = sp.csr_matrix((weights.astype(float), indices, indptr), shape=(n, n))
    degree = np.asarray(adj.sum(axis=1)).ravel()
    shift = 2.0 * degree.max()

    def apply(x):
        x = np.asarray(x).ravel()
        x = x - x.mean()
        y = shift * x - (degree * x - adj @ x)
        return y - y.mean()

    operator = LinearOperator((n, n), matvec=apply, dtype=float)
    v0 = np.random.default_rng(0).standard_normal(n)
    vals, vecs = eigsh(operator, k=1, which="LA", tol=1e-9, v0=v0 - v0.mean(), maxiter=20 * n)
    theta, vec = float(vals[0]), vecs[:, 0]
    residual = float(np.linalg.norm(apply(vec) - theta * vec))
    lam2 = max(0.0, shift - theta - residual)
    return spectral_lower(n, lam2), "Lanczos estimate of lambda_2"


def disjoint_paths(topology, counts: np.ndarray, pairs: int, seed: int) -> tuple[int | None, float | None]:
    """The least and the mean number of edge-disjoint paths between ``pairs`` sampled terminal-router pairs."""
    from ..topology.properties import FlowGraph, weighted_csr

    hosts = np.flatnonzero(counts > 0)
    if len(hosts) < 2 or pairs <= 0:
        return None, None
    rng = np.random.default_rng(seed)
    picked = [rng.choice(hosts, 2, replace=False) for _ in range(pairs)]
    indptr, indices, weights = weighted_csr(topology)
    rows = np.repeat(np.arange(topology.num_nodes), np.diff(indptr))
    graph = FlowGraph(topology.num_nodes, rows, indices, weights.astype(np.int64), pairs)
    flows = [graph.max_flow(int(a), int(b)) for a, b in picked]
    return int(min(flows)), float(np.mean(flows))


def allgather_algorithms(topology) -> list[str]:
    """Registered all-gather algorithms that run on the topology's family on the event engine."""
    from .. import registry

    return [a.name for a in registry.algorithms() if a.collective == "allgather" and "event" in a.engines
            and (not a.families or topology.family in a.families)]


def terminal_router_bound(topology, message_bytes: float) -> float:
    """Lower bound of an all-gather among the terminal routers: the largest of the latency, injection and cut
    bounds of :mod:`topocast.measure.bounds` for its messages (they hold for any schedule of them)."""
    from ..algorithms.terminal_allgather import terminal_router_allgather
    from ..measure.bounds import cut_bound, farthest_pair, injection_bound
    from ..sim.models import CostModel, PortModel

    schedule = terminal_router_allgather(topology, message_bytes)
    cost, ports = CostModel(), PortModel.all_port()
    values = [farthest_pair(topology, schedule) * cost.hop_time(message_bytes),
              injection_bound(topology, schedule, cost, ports)]
    cut = cut_bound(topology, schedule, cost, ports)
    return max(values + ([cut] if cut is not None else []))


def best_allgather(topology, message_bytes: float, counts: np.ndarray | None = None
                   ) -> tuple[float | None, float | None, str, list[str]]:
    """``(time, lower bound, algorithm, notes)`` of the fastest verified all-gather on the event engine.

    Where every router holds terminals, over the registered all-gather algorithms of the family; where only
    some do (fat tree, Dragonfly+), ``allgather-terminal-routers`` (the others relay), bounded by
    :func:`terminal_router_bound`."""
    from ..api import run

    names = allgather_algorithms(topology)
    if counts is not None and np.any(counts == 0):
        names = ["allgather-terminal-routers"]
    best: tuple[float, float, str] | None = None
    notes = []
    for name in names:
        try:
            result = run(topology, name, engine="event", message_bytes=message_bytes)
        except TopocastError as err:
            notes.append(f"{name}: {err}")
            continue
        if not result.verified:
            notes.append(f"{name}: not verified ({result.first_violation})")
            continue
        time = float(result.metrics["time"])
        if best is None or time < best[0]:
            best = (time, float(result.metrics["lower_bound"]), name)
    if best is None:
        return None, None, "", notes
    bound = best[1]
    if best[2] == "allgather-terminal-routers":
        bound = max(bound, terminal_router_bound(topology, message_bytes))
    return best[0], bound, best[2], notes


def measure(topology, settings: Settings = Settings()) -> dict:
    """Every column of :data:`COLUMNS` for one built network (None where skipped), plus ``notes``."""
    from ..api import check_distance_work
    from ..topology.metrics import average_distance, distance_distribution
    from ..topology.properties import best_cut, cut_links
    from ..topology.terminals import terminal_counts

    n = topology.num_nodes
    counts = terminal_counts(topology)
    total = int(counts.sum())
    notes: list[str] = []
    kinds = {name: int(np.count_nonzero(topology.arc_labels == i)) // 2 for i, name in enumerate(topology.label_names)}
    row: dict[str, Any] = {
        "spec": topology.spec, "family": topology.family, "routers": n, "terminals": total,
        "links": topology.num_edges, "local_links": kinds.get("local"), "global_links": kinds.get("global"),
        "links_per_terminal": topology.num_edges / total if total else None,
        "network_ports": int(topology.port_degree.max()),
        "radix": int((topology.port_degree + counts).max()),
    }
    try:
        check_distance_work(topology)
        counts_d = distance_distribution(topology)
        row["diameter"] = len(counts_d) - 1
        row["average_distance"] = average_distance(topology, counts_d)
        row["terminal_diameter"], row["terminal_distance"] = terminal_distances(topology, counts)
        k = int(topology.distinct_degree.max())
        row["moore_efficiency"] = n / moore_bound(k, row["diameter"])
    except TopocastError as err:
        notes.append(f"distances skipped: {err}")
    cut = None
    if settings.bisection and n <= CAPS["bisection"]:
        upper, side, method = best_cut(topology)
        cut = (upper, side)
        row["bisection_upper"] = int(upper)
        if n <= CAPS["spectral"]:
            row["bisection_lower"], how = spectral_lower(topology)
            if how != "exact lambda_2":
                notes.append(f"bisection lower bound: {how} (not a proof above 3,000 routers)")
        else:
            notes.append(f"bisection lower bound skipped above {CAPS['spectral']:,} routers")
    elif settings.bisection:
        notes.append(f"bisection skipped above {CAPS['bisection']:,} routers")
    row["disjoint_paths_min"], row["disjoint_paths_mean"] = disjoint_paths(topology, counts, settings.pairs,
                                                                           settings.seed)
    bounds = {}
    if row.get("terminal_distance"):
        bounds["capacity"] = 2.0 * topology.num_arcs / 2 / (total * row["terminal_distance"])
    if cut is not None:
        side = cut[1]
        ta, tb = int(counts[side == 0].sum()), int(counts[side == 1].sum())
        if ta and tb:
            bounds["cut"] = cut_links(topology, side) * (total - 1) / (ta * tb)
    if bounds:
        name = min(bounds, key=lambda k: bounds[k])
        row["throughput_bound"] = float(min(1.0, bounds[name]))
        row["throughput_binding"] = name if bounds[name] < 1.0 else "injection"
    if settings.collectives and n <= CAPS["collectives"]:
        per_router = float(counts.max())
        for label, m in zip(("small", "large"), settings.messages, strict=True):
            time, bound, name, why = best_allgather(topology, m * per_router, counts)
            row[f"allgather_{label}"], row[f"allgather_{label}_bound"] = time, bound
            row["allgather_algorithm"] = name or row.get("allgather_algorithm")
            notes += why
    elif settings.collectives:
        notes.append(f"all-gather skipped above {CAPS['collectives']:,} routers")
    row["notes"] = notes
    row["references"] = {k: {"value": v, "kind": kind, "source": src} for k, (v, kind, src) in
                         references(topology).items()}
    return row


# -- choosing each family's nearest configuration -------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    spec: str
    routers: int
    terminals: int
    radix: int
    rule: str = ""


def _prime_powers(limit: int) -> list[int]:
    from ..topology.galaxy import prime_power

    return [q for q in range(2, limit + 1) if prime_power(q) is not None]


def candidates(family: str, radix: int, limit: int) -> list[Candidate]:
    """Configurations of ``family`` whose routers have at most ``radix`` ports (terminals included) and at most
    ``limit`` terminals, each with the family's balanced concentration (see docs/topologies.md)."""
    out: list[Candidate] = []
    if family == "polarfly":
        for q in _prime_powers(radix):
            p = math.ceil((q + 1) / 2)
            if q + 1 + p <= radix:
                out.append(Candidate(f"polarfly:q={q},p={p}", q * q + q + 1, (q * q + q + 1) * p, q + 1 + p,
                                     "p = ceil(k'/2)"))
    elif family == "slimfly":
        for q in _prime_powers(radix):
            if q % 4 == 2 or q < 3:
                continue
            k = (3 * q - {1: 1, 3: -1, 0: 0}[q % 4]) // 2
            p = math.ceil(k / 2)
            if k + p <= radix:
                out.append(Candidate(f"slimfly:q={q},p={p}", 2 * q * q, 2 * q * q * p, k + p, "p = ceil(k'/2)"))
    elif family == "hyperx":
        for dims in range(1, 5):
            for s in range(2, radix + 1):
                p = math.ceil(s / 2)
                if dims * (s - 1) + p <= radix and s ** dims * p <= 4 * limit:
                    out.append(Candidate(f"hyperx:{'x'.join([str(s)] * dims)},t=1,p={p}", s ** dims, s ** dims * p,
                                         dims * (s - 1) + p, "regular, K = 1, T = ceil(S/2)"))
    elif family == "dragonfly-plus":
        for a in range(1, radix // 2 + 1):
            for g in range(2, a * a + 2):
                if g * a * a > 4 * limit:
                    break
                out.append(Candidate(f"dragonfly-plus:l={a},s={a},h={a},g={g},p={a}", g * 2 * a, g * a * a, 2 * a,
                                     "l = s = h = p = radix/2"))
    elif family == "fattree":
        for k in range(2, radix // 2 + 1):
            for n in range(2, 9):
                if k ** n > 4 * limit:
                    break
                out.append(Candidate(f"fattree:k={k},n={n}", n * k ** (n - 1), k ** n, 2 * k, "k-ary n-tree"))
    elif family == "jellyfish":
        for d in range(3, radix):
            p = math.ceil(d / 2)
            if d + p > radix:
                break
            n = max(d + 1, round(limit / p))
            n += (n * d) % 2
            out.append(Candidate(f"jellyfish:n={n},d={d},p={p},seed=0", n, n * p, d + p, "p = ceil(d/2)"))
    elif family == "dragonfly":
        for h in range(1, radix):
            a, p = 2 * h, h
            if a - 1 + h + p > radix:
                break
            for g in range(2, a * h + 2):
                if g * a * p > 4 * limit:
                    break
                out.append(Candidate(f"dragonfly:g={g},a={a},h={h},p={p}", g * a, g * a * p, a - 1 + h + p,
                                     "a = 2p = 2h (Kim et al. 2008)"))
    elif family == "galaxyfly":
        for q in [1] + [q for q in _prime_powers(128) if q % 4 != 2]:
            for n in range(1, 65):
                delta = {1: 1, 3: -1, 0: 0}[q % 4] if q > 1 else 0
                d = (q - delta) // 2 + n - 1 if q > 1 else n - 1
                for a in range(1, radix + 1):
                    h = max(1, math.ceil(d / a)) if d else 0
                    p = max(h, 1)
                    if a - 1 + h + p <= radix and n * q * a * p <= 4 * limit and n * q >= 2:
                        out.append(Candidate(f"galaxyfly:n={n},q={q},a={a},p={p}", n * q * a, n * q * a * p,
                                             a - 1 + h + p, "p = h"))
    elif family in ("kautz", "debruijn"):
        for d in range(1 if family == "kautz" else 2, radix // 3 + 1):
            for n in range(1, 12):
                routers = (d + 1) * d ** (n - 1) if family == "kautz" else d ** n
                if routers * d > 4 * limit:
                    break
                if routers >= 2:
                    out.append(Candidate(f"{family}:d={d},n={n},p={d}", routers, routers * d, 3 * d, "p = d"))
    else:
        raise TopocastError(f"compare: family '{family}' cannot be sized from --terminals and --radix (sized: "
                            f"{', '.join(SIZED_FAMILIES)}); give its spec instead")
    return out


def nearest(family: str, terminals: int, radix: int) -> Candidate:
    """The configuration of ``family`` with routers of at most ``radix`` ports whose terminal count is nearest
    ``terminals`` (by ratio), ties to fewer routers."""
    options = candidates(family, radix, terminals)
    if not options:
        raise TopocastError(f"compare: no {family} network has routers of at most {radix} ports; raise --radix")
    return min(options, key=lambda c: (abs(math.log(c.terminals / terminals)), c.routers))


# -- the comparison ------------------------------------------------------------------------------------------
@dataclass
class Comparison:
    """Measured rows, one per network, and the notes of the run."""

    rows: list[dict]
    settings: Settings
    target: dict | None = None
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"columns": [{"key": k, "title": t, "unit": u} for k, t, u in COLUMNS], "rows": self.rows,
                "settings": {"message_bytes_per_terminal": list(self.settings.messages), "pairs": self.settings.pairs,
                             "seed": self.settings.seed}, "target": self.target, "notes": self.notes}


def check_settings(settings: Settings) -> Settings:
    from ..infra.validate import integer, numbers

    messages = numbers(settings.messages, "messages", owner="compare", minimum=0)
    if len(messages) != 2:
        raise TopocastError(f"compare: parameter 'messages' must give two sizes (small,large), got {len(messages)}")
    integer(settings.pairs, "pairs", owner="compare", minimum=0, maximum=10_000)
    integer(settings.seed, "seed", owner="compare", minimum=0, maximum=2**63 - 1)
    return settings


def specs_for(specs: list[str], terminals: int | None, radix: int | None, families: list[str]) -> tuple[list[str],
                                                                                                        dict | None]:
    """The specs to compare: those given, plus each family's nearest configuration when a target is given."""
    from ..infra.validate import integer

    if (terminals is None) != (radix is None):
        raise TopocastError("compare: --terminals and --radix go together (a target size and a router radix)")
    target: dict[str, Any] | None = None
    specs = list(specs)
    if terminals is not None:
        terminals = integer(terminals, "terminals", owner="--terminals", minimum=2)
        radix = integer(radix, "radix", owner="--radix", minimum=3)
        target = {"terminals": terminals, "radix": radix, "chosen": []}
        for family in families or DEFAULT_FAMILIES:
            c = nearest(family, terminals, radix)
            specs.append(c.spec)
            target["chosen"].append({"family": family, "spec": c.spec, "routers": c.routers,
                                     "terminals": c.terminals, "radix": c.radix, "rule": c.rule})
    elif families:
        raise TopocastError("compare: --family picks configurations for --terminals and --radix; give specs alone "
                            "otherwise")
    if not specs:
        raise TopocastError("compare: give specs, or --terminals N --radix K")
    return specs, target


def compare(specs: list[str], settings: Settings = Settings(), target: dict | None = None,
            progress=None) -> Comparison:
    """Build every spec (refused up front when one is bad or too large) and measure it."""
    from ..infra.progress import SILENT
    from ..spec import build, parse_spec

    settings = check_settings(settings)
    for spec in specs:
        parse_spec(spec)
    progress = progress or SILENT
    rows = []
    for spec in progress.track(specs, "comparing networks"):
        rows.append(measure(build(spec, max_memory=settings.max_memory), settings))
    notes = ["allreduce: not in topocast yet (reductions are a later issue), so no allreduce column; faults "
             "likewise (no fault model yet)",
             "all-gather: the terminal routers exchange p m bytes each (p the most terminals on a router, m the "
             f"message per terminal: {settings.messages[0]:g} and {settings.messages[1]:g} bytes; routers without "
             "terminals relay), event engine, start-up 1 us, 10 GB/s per link direction, all-port; every run "
             "verified exactly once",
             "throughput bound: flits per terminal per cycle with one flit per link direction per cycle; the "
             "smaller of the capacity bound 2L/(T H) and the METIS cut's bound c(T-1)/(T_A T_B), at most 1"]
    return Comparison(rows, settings, target, notes)


# -- outputs -------------------------------------------------------------------------------------------------
def _cell(row: dict, key: str):
    value = row.get(key)
    ref = row.get("references", {}).get(key)
    if ref is not None and value is not None:
        return Compare(value, ref["value"], rel_tol=0.0, kind=ref["kind"])
    return value


def table(comparison: Comparison, title: str = "Networks compared") -> Table:
    """The comparison as a report :class:`~topocast.outputs.report.Table` (one row per network, references beside
    the values they check)."""
    columns = [f"{t} ({u})" if u else t for _, t, u in COLUMNS]
    rows = [[_rounded(_cell(row, key)) for key, _, _ in COLUMNS] for row in comparison.rows]
    out = Table(title, columns, rows, key="compare")
    sources = sorted({f"{ref['value']} = {ref['source']}" for row in comparison.rows
                      for ref in row["references"].values() if ref["kind"] == "paper"})
    if sources:
        out.notes.append("printed references: " + "; ".join(sources))
    out.notes.append("closed forms: each family's own formulas for its size, radix and diameter "
                     "(docs/topologies.md), evaluated by us")
    out.notes += comparison.notes
    for row in comparison.rows:
        out.notes += [f"{row['spec']}: {n}" for n in row["notes"]]
    return out


def _rounded(cell):
    if isinstance(cell, float):
        return float(f"{cell:.6g}")
    return cell


def write_csv(comparison: Comparison, path) -> Path:
    from ..infra.fileio import write_csv as write

    header, rows = table(comparison).csv_rows()
    return write(path, header, rows)


def write_json(comparison: Comparison, path) -> Path:
    from ..infra.fileio import write_json as write

    return write(path, comparison.as_json())


def short_label(spec: str) -> str:
    family, _, body = spec.partition(":")
    keep = [kv for kv in body.split(",") if not kv.startswith(("seed=",))]
    return f"{family}\n{','.join(keep)}"


def plot(comparison: Comparison, path) -> Path:
    """One figure: size and cost, distances, bisection per terminal, throughput bound, all-gather small and
    large (best algorithm beside its lower bound)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..infra.fileio import save_figure

    rows = comparison.rows
    labels = [short_label(r["spec"]) for r in rows]
    x = np.arange(len(rows))
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5))

    def val(r, key):
        v = r.get(key)
        return np.nan if v is None else float(v)

    def bars(ax, keys, names, title, log=False):
        width = 0.8 / len(keys)
        for i, (key, name) in enumerate(zip(keys, names, strict=True)):
            ax.bar(x + (i - (len(keys) - 1) / 2) * width, [val(r, key) for r in rows], width, label=name)
        ax.set_title(title, fontsize=9)
        ax.set_xticks(x, labels, fontsize=6)
        values = np.array([val(r, key) for r in rows for key in keys], dtype=float)
        if not np.any(np.isfinite(values) & (values > 0)):
            ax.text(0.5, 0.5, "not measured", ha="center", va="center", transform=ax.transAxes, fontsize=9)
        elif log:
            ax.set_yscale("log")
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, axis="y")

    bars(axes[0][0], ["links_per_terminal", "network_ports"], ["links per terminal", "network ports per router"],
         "cost")
    bars(axes[0][1], ["diameter", "terminal_diameter", "terminal_distance"],
         ["diameter (routers)", "diameter (terminal routers)", "mean distance (terminals)"], "distances (hops)")
    per = [(val(r, "bisection_lower") / (r["terminals"] / 2), val(r, "bisection_upper") / (r["terminals"] / 2))
           for r in rows]
    ax = axes[0][2]
    lo, hi = np.array([a for a, _ in per]), np.array([b for _, b in per])
    ax.bar(x, hi, 0.6, color="C0", alpha=0.35, label="METIS cut (upper)")
    ax.bar(x, lo, 0.6, color="C0", label="spectral (lower)")
    ax.set_title("bisection links per terminal of a half", fontsize=9)
    ax.set_xticks(x, labels, fontsize=6)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, axis="y")
    bars(axes[1][0], ["throughput_bound"], ["uniform throughput bound"], "flits per terminal per cycle")
    for ax, size in ((axes[1][1], "small"), (axes[1][2], "large")):
        m = comparison.settings.messages[0 if size == "small" else 1]
        bars(ax, [f"allgather_{size}", f"allgather_{size}_bound"], ["best algorithm", "lower bound"],
             f"all-gather, {m:g} B per terminal (s)", log=True)
    title = "topocast compare"
    if comparison.target:
        title += f": about {comparison.target['terminals']:,} terminals, router radix {comparison.target['radix']}"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def text_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """Header and rows for a terminal table (one column per network)."""
    header = ["column"] + [r["spec"] for r in comparison.rows]
    rows = []
    for key, title, unit in COLUMNS[1:]:
        cells = []
        for r in comparison.rows:
            v = r.get(key)
            text = "—" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
            ref = r["references"].get(key)
            if ref is not None and v is not None:
                text += " ✓" if ref["value"] == v else f" ✗ ({ref['value']})"
            cells.append(text)
        rows.append([f"{title} ({unit})" if unit else title] + cells)
    return header, rows
